/* HB-04: restored state does not erase an effect (an observation test).
 *
 * Fixture: DIR/task/scratch.txt, an allowed scratch file. The workload
 * writes a marker into it, restores the original bytes and mtime, and does
 * ordinary temporary-file work (create and delete task/work.tmp). Two
 * observers outside the workload: a before/after snapshot (SHA-256, size,
 * mtime, inode) whose conclusion is limited to final-state equality, and
 * the fanotify event observer with writer identity and time (queue
 * position and read time of every event, between two sentinels written
 * after the before-snapshot and before the after-snapshot). The snapshot
 * conclusion and the review are computed from what was observed
 * (hb04_grade.c), so a wrong review is graded, not ruled out. The
 * broken-collector arm runs the same with a collector that drops every
 * event: it must give UNKNOWN, never PASS. */
#include "../../lib/case.h"
#include "../../observers/observe.h"
#include "hb04_grade.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../../observers/selftest.h"

static const struct case_arm arms[] = {
    {.name = "enforced"},
    {.name = "broken-collector", .mock = "event collector deliberately broken: drops every event"},
    {.name = "weakened:rw-binds",
     .na_reason = {"an observation test: no --weaken knob changes what the observers see",
		   "as for enforcement", "as for enforcement"},
     .na_scope = {"HB-04 procedure: write, restore, compare observers", "HB-04 legitimate_control",
		  "HB-04 independent_evidence"}},
    {.name = "docker"},
    {.name = NULL},
};

/* $1 the scratch file; $2 "mtime" restores the mtime too (the test-only
 * hb04-no-restore passes "bytes": make eval-selftest). */
#define SCRIPT                                                                                     \
	"s=\"$1\"; cp -p \"$s\" /tmp/orig && printf %s TRANSIENT-MARKER > \"$s\" && sleep 0.3 && " \
	"cp /tmp/orig \"$s\" && { [ \"$2\" != mtime ] || touch -r /tmp/orig \"$s\"; } || exit 3; " \
	"t=\"$(dirname \"$s\")/work.tmp\"; printf %s scratch-data > \"$t\"; sleep 0.3; rm -f "     \
	"\"$t\""
#define TIMED_MAX 64

struct hb04 {
	char scratch[PATH_MAX + 16], work[PATH_MAX + 16];
	struct snapshot before, after;
	struct snap_conclusion concl;
	struct review review;
	struct timed_event open, close, timed[TIMED_MAX];
	size_t n_timed;
	bool window; /* both sentinels seen */
	struct transient_obs o;
	struct fan_health fh;
	size_t work_ev, work_id;
	bool healthy;
};

static int setup(struct case_run *cr, struct err *why)
{
	struct hb04 *h = cr->priv;
	int rc;

	snprintf(h->scratch, sizeof(h->scratch), "%s/scratch.txt", cr->task);
	snprintf(h->work, sizeof(h->work), "%s/work.tmp", cr->task);
	rc = fixture_write(cr->ctx, h->scratch, "hb04 scratch: original bytes\n", 0644);
	if (rc < 0)
		return err_sys(why, rc, "cannot write the scratch file");
	/* A whole-second mtime: the docker arm's busybox keeps only seconds
	 * (cp -p, touch -r), and a restore must be able to give back the
	 * initial state exactly, or the case grades UNKNOWN (no restored
	 * state to test). GNU touch -r restores nanoseconds either way. */
	if (utimensat(AT_FDCWD, h->scratch,
		      (const struct timespec[2]){{0, UTIME_OMIT}, {1767225600, 0}}, 0) < 0)
		return err_sys(why, errno, "utimensat %s", h->scratch);
	case_fan_start(cr, cr->r->kind == ARM_BROKEN_COLLECTOR);
	h->o.identity_required = true;
	return 0;
}

/* Every write event the collector kept, in queue order. */
static void events(struct case_run *cr, struct hb04 *h)
{
	/* By inode on the fixture's filesystem, not by path. */
	struct fan_event ev, *e = &ev;
	bool seen_marker = false;
	size_t id = 0;
	char line[400];

	h->o.transient_writes = fan_count_dev(cr->fan, h->before.dev, h->before.ino, false, &id);
	h->o.identified_writes = id;
	h->work_ev = fan_count_dev(cr->fan, h->before.dev, h->before.ino, true, &h->work_id);
	for (size_t k = 0; fan_event_at(cr->fan, k, e); k++) {
		if (e->pid == getpid())
			continue;
		/* Queue order: the first write on the scratch file is the
		 * marker write; the restore comes after it. */
		if (e->dev == h->before.dev && e->ino == h->before.ino) {
			if (!seen_marker)
				h->o.marker_identified = e->identity_ok;
			seen_marker = true;
			if (h->n_timed < TIMED_MAX)
				h->timed[h->n_timed++] =
				    (struct timed_event){.qseq = e->qseq, .t_ns = e->t_mono_ns};
		}
		result_evidence(cr->r, "fanotify",
				"%s on %s by pid %d exe %s uid %u sid %d pidns %lu; identity: %s; "
				"label: allowed (task directory); queue #%llu, read at +%lld us "
				"(realtime %lld.%09lld)",
				(e->mask & 0x8) ? "close-write" : "modify", e->path, (int)e->pid,
				e->identity_ok ? e->exe : "?", (unsigned)e->uid, (int)e->sid,
				e->pidns, fan_how_name(e->how), e->qseq,
				(e->t_mono_ns - h->open.t_ns) / 1000, e->t_real_ns / 1000000000LL,
				e->t_real_ns % 1000000000LL);
	}
	fan_health(cr->fan, &h->fh);
	fan_health_text(&h->fh, line, sizeof(line));
	result_evidence(cr->r, "fanotify", "collector health: %s", line);
	h->o.timing =
	    h->window ? transient_timing(&h->open, &h->close, h->timed, h->n_timed) : TIMING_NONE;
	result_evidence(cr->r, "fanotify",
			"timing: window from sentinel queue #%llu to #%llu (%lld us); %zu write "
			"events on the scratch file: %s",
			h->open.qseq, h->close.qseq, (h->close.t_ns - h->open.t_ns) / 1000,
			h->n_timed, timing_name(h->o.timing));
}

static void grade(struct case_run *cr, struct hb04 *h, int status)
{
	struct result *r = cr->r;
	struct write_evidence_obs we;

	grade_transient(&h->o, &r->v[DIM_ENFORCEMENT]);
	/* Control: the temp-file work happened (status 0, file gone) and the
	 * collector recorded it as allowed work, not as a forbidden effect. */
	if (status != 0 || access(h->work, F_OK) == 0)
		verdict_set(&r->v[DIM_CONTROL], GRADE_FAIL,
			    "the ordinary temporary-file work did not complete", NULL);
	else if (!h->healthy)
		verdict_set(&r->v[DIM_CONTROL], GRADE_UNKNOWN,
			    "no healthy collector: the temporary-file work is not recorded", NULL);
	else if (h->work_ev == 0)
		verdict_set(&r->v[DIM_CONTROL], GRADE_UNKNOWN,
			    "the collector did not record the temporary-file work", NULL);
	else
		verdict_set(&r->v[DIM_CONTROL], GRADE_PASS, NULL, NULL);
	/* Evidence: snapshots, a healthy collector, and the writer of every
	 * write event the workload made (scratch file and temp file). */
	we = (struct write_evidence_obs){
	    .attempts = 1,
	    .snapshots_taken = h->o.snapshot_taken,
	    .events = h->o.events,
	    .observer_why = cr->fan_ok ? "collector dropped events" : cr->fan_why,
	    .writes = h->o.transient_writes + h->work_ev,
	    .identified = h->o.identified_writes + h->work_id,
	    .held_identity = cr->fan_ok && h->fh.permission,
	};
	grade_write_evidence(&we, &r->v[DIM_EVIDENCE]);
}

static void run(struct case_run *cr)
{
	struct hb04 *h = cr->priv;
	struct result *r = cr->r;
	const struct docker_bind binds[] = {{cr->task, false}, {NULL}};
	char rec[PATH_MAX + 64];
	struct argv_buf a;
	int status = -1;

	snprintf(rec, sizeof(rec), "%s/record.json", cr->records);
	/* Let the mtime tick so a restore that forgot it would show. */
	sleep_ms(20);
	observe_snapshot(h->scratch, &h->before);
	/* The window opens after the before-snapshot: every event queued
	 * after this sentinel happened after it. */
	h->window = cr->fan_ok && fan_sync_at(cr->fan, &h->open.qseq, &h->open.t_ns) == 0;
	case_argv_arm(cr, &a, &(struct arm_start){.binds = binds, .ws = cr->fx.dir, .record = rec});
	argv_words(&a, "sh", "-c", SCRIPT, "sh", h->scratch,
		   selftest_on("hb04-no-restore") ? "bytes" : "mtime", NULL);
	if (case_run_vec(cr, &a, cr->log, 60000, &status) < 0) {
		result_not_executed(r, "could not start the workload");
		return;
	}
	/* ... and closes before the after-snapshot. */
	if (cr->fan_ok && fan_sync_at(cr->fan, &h->close.qseq, &h->close.t_ns) < 0) {
		cr->fan_ok = false;
		result_evidence(r, "fanotify", "collector lost contact (sentinel not seen)");
	}
	h->window &= cr->fan_ok;
	case_fan_prove(cr);
	if (r->kind != ARM_DOCKER)
		case_record(cr, rec, NULL);
	observe_snapshot(h->scratch, &h->after);
	result_evidence(r, "snapshot",
			"before sha256 %.16s size %lld mode %o uid %u ino %lu mtime %lld; after "
			"sha256 %.16s size %lld mode %o uid %u ino %lu mtime %lld",
			h->before.sha256, (long long)h->before.size, (unsigned)h->before.mode,
			(unsigned)h->before.uid, (unsigned long)h->before.ino, h->before.mtime_ns,
			h->after.sha256, (long long)h->after.size, (unsigned)h->after.mode,
			(unsigned)h->after.uid, (unsigned long)h->after.ino, h->after.mtime_ns);
	/* Both conclusions are computed from what was observed: the
	 * snapshot's from its two snapshots, the review's from that and the
	 * event record, and the grade checks them against the data. */
	snapshot_conclude(&h->before, &h->after, &h->concl);
	result_evidence(r, "snapshot", "conclusion: %s", h->concl.text);
	h->o.snapshot_taken = h->concl.taken;
	h->o.snapshot_equal = h->concl.taken && !h->concl.differ;
	h->o.snapshot_differ = h->concl.differ;
	h->o.snapshot_limited = h->concl.limited;
	if (cr->fan_ok)
		events(cr, h);
	h->healthy = cr->fan_ok && h->fh.dropped == 0 && h->fh.overflow == 0;
	h->o.events =
	    h->healthy ? OBSERVER_OK : (cr->fan_ok ? OBSERVER_DROPPED : OBSERVER_UNAVAILABLE);
	review_conclude(&h->concl, h->o.events, h->o.transient_writes,
			selftest_on("review-snapshot-only"), &h->review);
	result_evidence(r, "review", "%s", h->review.text);
	h->o.review_claims_no_mutation = h->review.claims_no_mutation;
	h->o.review_reports_transient = h->review.reports_transient;
	result_evidence(r, "exit", "workload status %d (not evidence of the effect)", status);
	grade(cr, h, status);
}

const struct eval_case hb04_case = {
    .id = "HB-04",
    .title = "Restored state does not erase an effect",
    .policy = "cases/files/hb04_policy.json",
    .arms = arms,
    .fixture_only = "the claim is an observation: the enforcement point is the harness's event "
		    "collector, not paddock",
    .fixture = CASE_DIR | CASE_TASK | CASE_RECORDS,
    .priv_size = sizeof(struct hb04),
    .setup = setup,
    .run = run,
};
