/* HB-20: detection is not prevention.
 *
 * Fixture: DIR/canary/canary.txt (read-only bind in the policy; its file
 * mode would let the workload user write it, so only the mount stops the
 * write) and DIR/task (writable). The workload makes its permitted write
 * to the task directory first (the control), then writes a marker to the
 * canary in one write(2), then waits. Outside evidence: the canary's
 * SHA-256 before and after (the digest proven to see a change), the
 * completion record's "controls" (docs/record.md: the mount tree labelled
 * prevention, in effect or not as the arm has it), and in the detection
 * arm the fanotify observer's write events on the canary: the response is
 * the harness's (a thread that SIGKILLs the writer of the first write
 * event on the canary), with the time from the event's read to the kill.
 *
 * Arms: enforced (prevention: the read-only mount refuses the write:
 * PASS); weakened:detection-only (paddock's --weaken rw-binds, no
 * read-only mount, and the harness's observer as the only control: the
 * alert is correct and the writer is killed, but after the write: the
 * marker is committed, FAIL, graded apart from the alert's correctness);
 * docker (the reference: a :ro volume, prevention). */
#include "../../lib/case.h"
#include "../../observers/fan.h"
#include "../../observers/observe.h"
#include "hb20_grade.h"

#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static const struct case_arm arms[] = {
    {.name = "enforced"},
    {.name = "weakened:detection-only",
     .knob = "rw-binds",
     .mock = "the response is the harness's: a thread that kills the writer of the first "
	     "fanotify write event on the canary (paddock has no such response)"},
    {.name = "docker"},
    {.name = NULL},
};

#define ORIGINAL "hb20 canary: original bytes\n"
#define MARK	 "HB20-MARKER"

/* $1 the task directory, $2 the canary, $3 the marker. */
#define WRITER                                                                    \
	"echo ok > \"$1/ok\"; sleep 0.2; printf %s \"$3\" > \"$2\" 2>/dev/null; " \
	"sleep 2; exit 0"

struct hb20 {
	dev_t dev;
	ino_t ino;
	pthread_t killer;
	bool killer_on;
	volatile bool stop;
	struct control_obs o;
	struct fan_event alert;
};

static long long mono_ns(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (long long)t.tv_sec * 1000000000LL + t.tv_nsec;
}

/* The detection-only arm's response: the first write event on the
 * canary from another pid namespace than ours; its writer killed. */
static void *killer(void *arg)
{
	struct case_run *cr = arg;
	struct hb20 *h = cr->priv;
	struct stat self;
	size_t k = 0;

	if (stat("/proc/self/ns/pid", &self) != 0)
		return NULL;
	while (!h->stop) {
		struct fan_event e;

		if (!fan_event_at(cr->fan, k, &e)) {
			sleep_ms(1);
			continue;
		}
		k++;
		if (e.dev != h->dev || e.ino != h->ino || e.pid == getpid())
			continue;
		h->alert = e;
		h->o.alerted = true;
		h->o.alert_correct = e.identity_ok && e.pidns != (unsigned long)self.st_ino;
		h->o.killed = e.pid > 0 && kill(e.pid, SIGKILL) == 0;
		h->o.kill_us = (mono_ns() - e.t_mono_ns) / 1000;
		return NULL;
	}
	return NULL;
}

static int setup(struct case_run *cr, struct err *why)
{
	struct hb20 *h = cr->priv;
	struct stat st;
	int rc = fixture_write(cr->ctx, cr->canary, ORIGINAL, 0666);

	if (rc < 0)
		return err_sys(why, rc, "write %s", cr->canary);
	if (stat(cr->canary, &st) < 0)
		return err_sys(why, errno, "stat %s", cr->canary);
	h->dev = st.st_dev;
	h->ino = st.st_ino;
	if (cr->r->kind == ARM_WEAKENED) {
		case_fan_start(cr, false);
		if (cr->fan_ok)
			h->killer_on = pthread_create(&h->killer, NULL, killer, cr) == 0;
	}
	return 0;
}

/* The record's "mounts" control: prevention, in effect unless the arm
 * turned the read-only binds off. */
static void labels(struct case_run *cr, struct hb20 *h, const char *rec)
{
	char kind[32] = "", eff[16] = "";

	for (int i = 0; i < 16; i++) {
		char key[48], name[32];

		snprintf(key, sizeof(key), "controls.%d.control", i);
		if (record_get(rec, key, name, sizeof(name)) != 0)
			break;
		if (strcmp(name, "\"mounts\"") != 0 && strcmp(name, "mounts") != 0)
			continue;
		snprintf(key, sizeof(key), "controls.%d.kind", i);
		record_get(rec, key, kind, sizeof(kind));
		snprintf(key, sizeof(key), "controls.%d.in_effect", i);
		record_get(rec, key, eff, sizeof(eff));
		h->o.record_read = true;
	}
	h->o.labels_ok =
	    strstr(kind, "prevention") && strcmp(eff, h->o.detection_arm ? "false" : "true") == 0;
	result_evidence(cr->r, "controls", "the record's mounts control: kind %s, in_effect %s",
			kind[0] ? kind : "?", eff[0] ? eff : "?");
}

static void run(struct case_run *cr)
{
	struct hb20 *h = cr->priv;
	struct result *r = cr->r;
	char rec[PATH_MAX + 64], ok[PATH_MAX + 16], before[65] = "", after[65] = "";
	const struct docker_bind binds[] = {{cr->canary_dir, true}, {cr->task, false}, {NULL}};
	struct argv_buf a;
	int status = -1;

	h->o.detection_arm = r->kind == ARM_WEAKENED;
	h->o.digest_ok = cr->digest_ok;
	snprintf(rec, sizeof(rec), "%s/record.json", cr->records);
	snprintf(ok, sizeof(ok), "%s/ok", cr->task);
	observe_sha256(cr->canary, before);
	case_argv_arm(cr, &a,
		      &(struct arm_start){
			  .binds = binds, .workdir = cr->task, .ws = cr->fx.dir, .record = rec});
	argv_words(&a, "sh", "-c", WRITER, "sh", cr->task, cr->canary, MARK, NULL);
	if (case_run_vec(cr, &a, cr->log, 60000, &status) < 0) {
		result_not_executed(r, "could not start the workload");
		return;
	}
	h->stop = true;
	if (h->killer_on)
		pthread_join(h->killer, NULL);
	h->killer_on = false;
	observe_sha256(cr->canary, after);
	h->o.committed = before[0] && strcmp(before, after) != 0;
	h->o.control_ok = access(ok, F_OK) == 0;
	result_evidence(r, "canary", "sha256 %.16s before, %.16s after: %s", before, after,
			h->o.committed ? "the marker is committed" : "unchanged");
	if (r->kind != ARM_DOCKER) {
		case_record(cr, rec, NULL);
		labels(cr, h, rec);
	} else {
		/* The reference labels nothing; its :ro volume is the control. */
		h->o.record_read = h->o.labels_ok = true;
	}
	if (h->o.detection_arm) {
		h->o.fan_ok = case_fan_prove(cr);
		result_evidence(r, "alert",
				"%s; writer pid %d exe %s pidns %lu; %s %lld us after the event "
				"was read",
				h->o.alerted ? "a write event on the canary" : "no write event",
				(int)h->alert.pid, h->alert.identity_ok ? h->alert.exe : "?",
				h->alert.pidns, h->o.killed ? "killed" : "not killed",
				h->o.kill_us);
	}
	result_evidence(r, "exit", "workload status %d (not evidence)", status);
	grade_controls(&h->o, r->v);
}

static void teardown(struct case_run *cr)
{
	struct hb20 *h = cr->priv;

	h->stop = true;
	if (h->killer_on)
		pthread_join(h->killer, NULL);
}

const struct eval_case hb20_case = {
    .id = "HB-20",
    .title = "Detection is not prevention",
    .policy = "cases/evidence/hb20_policy.json",
    .arms = arms,
    .fixture = CASE_DIR | CASE_CANARY | CASE_TASK | CASE_RECORDS,
    .priv_size = sizeof(struct hb20),
    .setup = setup,
    .run = run,
    .teardown = teardown,
};
