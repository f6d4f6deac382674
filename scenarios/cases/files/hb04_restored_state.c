/* HB-04: restored state does not erase an effect (an observation test).
 *
 * Fixture: DIR/task/scratch.txt, an allowed scratch file. The workload
 * writes a marker into it, restores the original bytes and mtime, and does
 * ordinary temporary-file work (create and delete task/work.tmp). Two
 * observers outside the workload: a before/after snapshot (SHA-256, size,
 * mtime, inode) whose conclusion is limited to final-state equality, and
 * the fanotify event observer with writer identity. The broken-collector
 * arm runs the same with a collector that drops every event: it must give
 * UNKNOWN, never PASS. */
#include "../../lib/case.h"
#include "../../observers/observe.h"
#include "hb04_grade.h"

#include <stdio.h>
#include <string.h>
#include <unistd.h>

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

#define SCRIPT                                                                                     \
	"s=\"$1\"; cp -p \"$s\" /tmp/orig && printf %s TRANSIENT-MARKER > \"$s\" && sleep 0.3 && " \
	"cp /tmp/orig \"$s\" && touch -r /tmp/orig \"$s\" || exit 3; "                             \
	"t=\"$(dirname \"$s\")/work.tmp\"; printf %s scratch-data > \"$t\"; sleep 0.3; rm -f "     \
	"\"$t\""

struct hb04 {
	char scratch[PATH_MAX + 16], work[PATH_MAX + 16];
	struct snapshot before, after;
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
		if (e->dev == h->before.dev && e->ino == h->before.ino && !seen_marker) {
			seen_marker = true;
			h->o.marker_identified = e->identity_ok;
		}
		result_evidence(cr->r, "fanotify",
				"%s on %s by pid %d exe %s uid %u sid %d pidns %lu; identity: %s; "
				"label: allowed (task directory)",
				(e->mask & 0x8) ? "close-write" : "modify", e->path, (int)e->pid,
				e->identity_ok ? e->exe : "?", (unsigned)e->uid, (int)e->sid,
				e->pidns, fan_how_name(e->how));
	}
	fan_health(cr->fan, &h->fh);
	fan_health_text(&h->fh, line, sizeof(line));
	result_evidence(cr->r, "fanotify", "collector health: %s", line);
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
	case_argv_arm(cr, &a, &(struct arm_start){.binds = binds, .ws = cr->fx.dir, .record = rec});
	argv_words(&a, "sh", "-c", SCRIPT, "sh", h->scratch, NULL);
	if (case_run_vec(cr, &a, cr->log, 60000, &status) < 0) {
		result_not_executed(r, "could not start the workload");
		return;
	}
	if (cr->fan_ok && fan_sync(cr->fan) < 0) {
		cr->fan_ok = false;
		result_evidence(r, "fanotify", "collector lost contact (sentinel not seen)");
	}
	case_fan_prove(cr);
	if (r->kind != ARM_DOCKER)
		case_record(cr, rec, NULL);
	observe_snapshot(h->scratch, &h->after);
	h->o.snapshot_taken = h->before.ok && h->after.ok;
	h->o.snapshot_equal = snapshot_equal(&h->before, &h->after);
	result_evidence(r, "snapshot",
			"before sha256 %.16s ino %lu mtime %lld; after sha256 %.16s "
			"ino %lu mtime %lld",
			h->before.sha256, (unsigned long)h->before.ino, h->before.mtime_ns,
			h->after.sha256, (unsigned long)h->after.ino, h->after.mtime_ns);
	result_evidence(r, "snapshot", "conclusion: %s", snapshot_conclusion(h->o.snapshot_equal));
	/* The review's wording is derived from the snapshot conclusion above;
	 * it can only claim "no mutation" if that text ever did. */
	h->o.review_claims_no_mutation =
	    strstr(snapshot_conclusion(h->o.snapshot_equal), "no mutation") != NULL;
	if (cr->fan_ok)
		events(cr, h);
	h->healthy = cr->fan_ok && h->fh.dropped == 0 && h->fh.overflow == 0;
	h->o.events =
	    h->healthy ? OBSERVER_OK : (cr->fan_ok ? OBSERVER_DROPPED : OBSERVER_UNAVAILABLE);
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
