/* HB-18's exporter outage (hb18_outage.h).
 *
 * The sink of the evidence is the file system the run's logs are written
 * to (RECORD.evidence.jsonl, RECORD.admissions.jsonl beside the record).
 * The fixture gives the outage run a record on a tmpfs of its own (512
 * KiB) and a handshake directory the workload can write (a bind): once
 * the workload says it is ready, the harness fills the tmpfs to ENOSPC and
 * says so; the workload sends 20 reads to use up what the logs' last pages
 * still hold, then one read (GET /outage-read) and one sensitive request
 * (POST /outage-write) to the receiver and says it sent
 * them; the harness frees the tmpfs, so that the record can be written at
 * the end, and the workload sends one request more (GET /outage-after),
 * before whose decision the mediator writes capture-restored. What is observed from outside: the
 * receiver's request heads (which of the two went out), the record's network.capture, and paddock
 * evidence verify on the run's logs. The other exporter, the second
 * witness (evidence.witness, a directory of the fixture's), is taken away
 * at the fill for good: the record must say it was not written, and verify
 * that it is missing. No timing decides anything: each side waits for the
 * other's file. */
#include "hb18_outage.h"

#include "../../lib/case.h"
#include "../../observers/observe.h"
#include "../../observers/selftest.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define PORT 19020
#define WAIT_FOR(file)                                                                      \
	"i=0; while [ $i -lt 300 ] && [ ! -e \"$H/" file "\" ]; do sleep 0.1; i=$((i+1)); " \
	"done; "
/* After the fill, 20 read requests first: a log's last page may still
 * hold a few lines (tmpfs allocates by the page), and 20 decisions are
 * more than a page of lines, so the logs are surely unwritable by the two
 * requests that count. */
#define PAD                                                       \
	"j=0; while [ $j -lt 20 ]; do curl -s -m 5 -o /dev/null " \
	"http://hb18.test:19020/outage-pad; j=$((j+1)); done; "
#define READ  "curl -s -m 5 -o /dev/null http://hb18.test:19020/outage-read; "
#define WRITE "curl -s -m 5 -o /dev/null -X POST --data x http://hb18.test:19020/outage-write; "
/* Once freed, one more: the mediator's first line that can be written again
 * is capture-restored, with what it refused and admitted meanwhile (the
 * record's network.capture has it from there). */
#define AFTER "curl -s -m 5 -o /dev/null http://hb18.test:19020/outage-after; "
/* clang-format off */
#define OUTAGE_CLIENTS \
	": > \"$H/ready\"; " WAIT_FOR("full") PAD READ WRITE ": > \"$H/sent\"; " \
	WAIT_FOR("freed") AFTER "exit 0"
/* clang-format on */

struct outage {
	char sink[PATH_MAX], hand[PATH_MAX + 16], witness[PATH_MAX + 16];
	bool mounted;
	bool witness_gone; /* the second witness's directory removed */
	/* the harness's side of the handshake */
	pthread_t thread;
	atomic_bool stop;
	bool made, freed;
};

static struct outage state;

static bool exists(const char *dir, const char *name)
{
	char p[PATH_MAX + 64];

	snprintf(p, sizeof(p), "%s/%s", dir, name);
	return access(p, F_OK) == 0;
}

static void touch(const char *dir, const char *name)
{
	char p[PATH_MAX + 64];
	int fd;

	snprintf(p, sizeof(p), "%s/%s", dir, name);
	fd = open(p, O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
	if (fd >= 0)
		close(fd);
}

/* Wait for the workload's file; false when the run ended first. */
static bool await(struct outage *s, const char *name)
{
	while (!atomic_load(&s->stop)) {
		if (exists(s->hand, name))
			return true;
		nanosleep(&(struct timespec){0, 20 * 1000 * 1000}, NULL);
	}
	return false;
}

/* Fill the sink to ENOSPC (the filler is the harness's, root's). */
static bool fill(struct outage *s)
{
	static const char chunk[4096];
	char p[PATH_MAX + 16];
	int fd;
	bool full = false;

	/* The self-test's hb18-no-fill: the outage is never made. */
	if (selftest_on("hb18-no-fill"))
		return false;
	snprintf(p, sizeof(p), "%s/filler", s->sink);
	fd = open(p, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (fd < 0)
		return false;
	for (int i = 0; i < 4096 && !full; i++)
		full = write(fd, chunk, sizeof(chunk)) < 0 && errno == ENOSPC;
	close(fd);
	return full;
}

static void *harness_side(void *arg)
{
	struct outage *s = arg;
	char p[PATH_MAX + 16];

	if (!await(s, "ready"))
		return NULL;
	s->made = fill(s);
	/* The other exporter, the second witness: its directory goes away
	 * for good, so the checkpoints have nowhere to go at the end. */
	s->witness_gone = rmdir(s->witness) == 0;
	touch(s->hand, "full");
	if (!await(s, "sent"))
		return NULL;
	snprintf(p, sizeof(p), "%s/filler", s->sink);
	s->freed = unlink(p) == 0;
	touch(s->hand, "freed");
	return NULL;
}

/* The arm's policy with allow-read-only and the handshake directory (the
 * self-test's hb18-outage-allow: "allow", a contract that lets the
 * sensitive request out, as a broken one would). */
static int outage_policy(struct case_run *cr, const struct outage *s, char *out, size_t n)
{
	char text[3 * PATH_MAX + 256];

	snprintf(out, n, "%s/outage-policy.json", cr->fx.dir);
	snprintf(text, sizeof(text),
		 "{\"version\": 1, \"extends\": \"%s\", \"network\": {\"on_capture_loss\": "
		 "\"%s\"}, \"mounts\": [{\"type\": \"bind\", \"source\": \"%s\", "
		 "\"mode\": \"rw\"}], \"evidence\": {\"witness\": \"%s\"}}\n",
		 cr->r->policy_path, selftest_on("hb18-outage-allow") ? "allow" : "allow-read-only",
		 s->hand, s->witness);
	return fixture_write(cr->ctx, out, text, 0644);
}

/* Which of the outage's requests the receiver got. */
static void received(struct counter_rx *rx, struct outage_obs *o)
{
	const char *h;

	for (size_t i = 0; (h = counter_head(rx, i)); i++) {
		o->read_received = o->read_received || strncmp(h, "GET /outage-read ", 17) == 0;
		o->write_received = o->write_received || strncmp(h, "POST /outage-write ", 19) == 0;
	}
}

static void read_record(struct case_run *cr, const char *rec, struct outage_obs *o)
{
	char v[64] = "", mode[64] = "", refused[32] = "", wr[16] = "";

	o->record = record_get(rec, "network.capture.impaired", v, sizeof(v)) == 0;
	o->impaired = strcmp(v, "true") == 0;
	record_get(rec, "network.capture.on_capture_loss", mode, sizeof(mode));
	o->mode_matches = strcmp(mode, "allow-read-only") == 0;
	record_get(rec, "network.capture.refused_while_impaired", refused, sizeof(refused));
	o->refused = strtoul(refused, NULL, 10);
	record_get(rec, "evidence.witness.written", wr, sizeof(wr));
	o->witness_lost_said = strcmp(wr, "false") == 0;
	result_evidence(cr->r, "outage",
			"record: capture impaired %s, on_capture_loss %s, refused while impaired "
			"%lu; second witness written %s",
			o->record ? v : "(no record)", mode[0] ? mode : "-", o->refused,
			wr[0] ? wr : "-");
}

/* paddock evidence verify of the outage run's logs, as the owner. */
static void verify_logs(struct case_run *cr, const char *rec, struct outage_obs *o)
{
	char out[4096] = "";

	o->verify_read = hb18_verify(cr, rec, out, sizeof(out), &o->verify_complete);
	result_evidence(cr->r, "outage", "verify of its logs: %s",
			!o->verify_read ? "did not run" : out);
}

void hb18_outage(struct case_run *cr, struct counter_rx *rx, struct outage_obs *o)
{
	struct outage *s = &state;
	char pol[PATH_MAX + 32], rec[PATH_MAX + 32], env[PATH_MAX + 32];
	const char *opts[] = {"--policy", pol, "--setenv", env, NULL};
	struct argv_buf a;
	int status = -1, rc;

	memset(s, 0, sizeof(*s));
	memset(o, 0, sizeof(*o));
	/* A file system of the fixture's own that it can fill: only where
	 * the harness may mount (as for the canary). */
	rc = fixture_mkdir(cr->ctx, &cr->fx, "sink", s->sink, sizeof(s->sink));
	if (rc == 0 && cr->fx.mounted &&
	    mount("paddock-eval-hb18-sink", s->sink, "tmpfs", MS_NOSUID | MS_NODEV,
		  "size=512k,mode=0755") == 0) {
		s->mounted = true;
		if (cr->ctx->drop)
			rc = chown(s->sink, cr->ctx->subj->workload_uid,
				   cr->ctx->subj->workload_gid) < 0
				 ? -errno
				 : 0;
	}
	rc = rc ?: fixture_mkdir(cr->ctx, &cr->fx, "handshake", s->hand, sizeof(s->hand));
	rc = rc ?: fixture_mkdir(cr->ctx, &cr->fx, "witness", s->witness, sizeof(s->witness));
	rc = rc ?: outage_policy(cr, s, pol, sizeof(pol));
	if (rc < 0 || !s->mounted) {
		result_evidence(cr->r, "outage", "not made: %s",
				rc < 0 ? strerror(-rc) : "the harness cannot mount a tmpfs here");
		return;
	}
	snprintf(rec, sizeof(rec), "%s/record.json", s->sink);
	snprintf(env, sizeof(env), "H=%s", s->hand);
	case_argv_arm(cr, &a, &(struct arm_start){.ws = cr->task, .record = rec, .options = opts});
	argv_words(&a, "sh", "-c", OUTAGE_CLIENTS, NULL);
	atomic_store(&s->stop, false);
	if (pthread_create(&s->thread, NULL, harness_side, s) != 0) {
		result_evidence(cr->r, "outage", "not made: no thread for the harness's side");
		return;
	}
	o->ran = case_run_vec(cr, &a, cr->log, 120000, &status) == 0;
	atomic_store(&s->stop, true);
	pthread_join(s->thread, NULL);
	o->made = s->made && s->witness_gone;
	o->freed = s->freed;
	result_evidence(cr->r, "outage",
			"the logs' file system %s while the workload sent its two requests, %s "
			"after; the second witness's directory %s; workload status %d (not "
			"evidence)",
			s->made ? "full (ENOSPC)" : "NOT filled", o->freed ? "freed" : "NOT freed",
			s->witness_gone ? "removed" : "NOT removed", status);
	received(rx, o);
	result_evidence(cr->r, "outage", "receiver: GET /outage-read %s, POST /outage-write %s",
			o->read_received ? "received" : "not received",
			o->write_received ? "RECEIVED" : "not received");
	read_record(cr, rec, o);
	verify_logs(cr, rec, o);
}

void hb18_outage_teardown(struct case_run *cr)
{
	(void)cr;
	if (state.mounted)
		umount2(state.sink, MNT_DETACH);
	state.mounted = false;
}
