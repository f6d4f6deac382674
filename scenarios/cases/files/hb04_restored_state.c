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
#include "../../lib/harness.h"
#include "../../observers/observe.h"
#include "hb04_grade.h"

#include <stdio.h>
#include <string.h>
#include <unistd.h>

static const char *const arms[] = {"enforced", "broken-collector", "weakened:rw-binds", "docker",
				   NULL};

#define SCRIPT                                                                                     \
	"s=\"$1\"; cp -p \"$s\" /tmp/orig && printf %s TRANSIENT-MARKER > \"$s\" && sleep 0.3 && " \
	"cp /tmp/orig \"$s\" && touch -r /tmp/orig \"$s\" || exit 3; "                             \
	"t=\"$(dirname \"$s\")/work.tmp\"; printf %s scratch-data > \"$t\"; sleep 0.3; rm -f "     \
	"\"$t\""

static void run(struct eval_ctx *ctx, const char *arm, struct result *r)
{
	struct fixture fx = {0};
	struct fan_observer *fan = NULL;
	struct fan_health fh = {0};
	struct snapshot before, after;
	struct transient_obs o = {.identity_required = true};
	char why[256] = "", task[4096], recs[4096], scratch[4200], work[4200], rec[4300], log[4300];
	struct argv_buf a;
	bool fan_ok = false, healthy;
	int status = -1;
	size_t id = 0, work_ev = 0, work_id = 0;
	bool seen_marker = false;
	struct write_evidence_obs we;

	(void)arm;
	if (r->kind == ARM_WEAKENED) {
		verdict_set(&r->v[DIM_ENFORCEMENT], GRADE_NOT_APPLICABLE,
			    "an observation test: no --weaken knob changes what the observers see",
			    "HB-04 procedure: write, restore, compare observers");
		verdict_set(&r->v[DIM_CONTROL], GRADE_NOT_APPLICABLE, "as for enforcement",
			    "HB-04 legitimate_control");
		verdict_set(&r->v[DIM_EVIDENCE], GRADE_NOT_APPLICABLE, "as for enforcement",
			    "HB-04 independent_evidence");
		return;
	}
	if (r->kind == ARM_DOCKER && docker_unavailable(ctx, r))
		return;
	log_path(ctx, r, "log", log, sizeof(log));
	if (fixture_make(&fx, "hb04", why, sizeof(why)) < 0 ||
	    fixture_mkdir(ctx, &fx, "task", task, sizeof(task)) < 0 ||
	    records_dir(ctx, r, recs, sizeof(recs)) < 0) {
		result_not_executed(r, why[0] ? why : "fixture setup failed");
		goto out;
	}
	snprintf(scratch, sizeof(scratch), "%s/scratch.txt", task);
	snprintf(work, sizeof(work), "%s/work.tmp", task);
	snprintf(rec, sizeof(rec), "%s/record.json", recs);
	if (fixture_write(ctx, scratch, "hb04 scratch: original bytes\n", 0644) < 0) {
		result_not_executed(r, "cannot write the scratch file");
		goto out;
	}
	fan_ok = fan_start(&fan, fx.dir, r->kind == ARM_BROKEN_COLLECTOR, why, sizeof(why)) == 0;
	if (!fan_ok)
		result_evidence(r, "fanotify", "no event observer: %s", why);
	else
		snprintf(r->fanotify_mode, sizeof(r->fanotify_mode), "%s", fan_mode(fan));
	if (r->kind == ARM_BROKEN_COLLECTOR)
		result_mock(r, "event collector deliberately broken: drops every event");
	/* Let the mtime tick so a restore that forgot it would show. */
	sleep_ms(20);
	observe_snapshot(scratch, &before);
	if (r->kind == ARM_DOCKER) {
		char v[9000];

		snprintf(v, sizeof(v), "%s:%s", task, task);
		a.n = 0;
		argv_docker_run(&a);
		argv_add(&a, "-v");
		argv_add(&a, v);
		argv_add(&a, ctx->docker_image);
	} else {
		argv_paddock_run(&a, ctx, r, fx.dir, rec);
		argv_add(&a, "--");
	}
	argv_add(&a, "sh");
	argv_add(&a, "-c");
	argv_add(&a, SCRIPT);
	argv_add(&a, "sh");
	argv_add(&a, scratch);
	if (run_argv(ctx, r->kind != ARM_DOCKER && ctx->drop, a.v, log, 60000, &status) < 0) {
		result_not_executed(r, "could not start the workload");
		goto out;
	}
	if (fan_ok && fan_sync(fan) < 0) {
		fan_ok = false;
		result_evidence(r, "fanotify", "collector lost contact (sentinel not seen)");
	}
	observe_snapshot(scratch, &after);
	o.snapshot_taken = before.ok && after.ok;
	o.snapshot_equal = snapshot_equal(&before, &after);
	result_evidence(r, "snapshot",
			"before sha256 %.16s ino %lu mtime %lld; after sha256 %.16s "
			"ino %lu mtime %lld",
			before.sha256, (unsigned long)before.ino, before.mtime_ns, after.sha256,
			(unsigned long)after.ino, after.mtime_ns);
	result_evidence(r, "snapshot", "conclusion: %s", snapshot_conclusion(o.snapshot_equal));
	/* The review's wording is derived from the snapshot conclusion above;
	 * it can only claim "no mutation" if that text ever did. */
	o.review_claims_no_mutation =
	    strstr(snapshot_conclusion(o.snapshot_equal), "no mutation") != NULL;
	if (fan_ok) {
		/* By inode on the fixture's filesystem, not by path. */
		struct fan_event ev, *e = &ev;
		char line[400];

		o.transient_writes = fan_count_dev(fan, before.dev, before.ino, false, &id);
		o.identified_writes = id;
		work_ev = fan_count_dev(fan, before.dev, before.ino, true, &work_id);
		for (size_t k = 0; fan_event_at(fan, k, e); k++) {
			if (e->pid == getpid())
				continue;
			/* Queue order: the first write on the scratch file is the
			 * marker write; the restore comes after it. */
			if (e->dev == before.dev && e->ino == before.ino && !seen_marker) {
				seen_marker = true;
				o.marker_identified = e->identity_ok;
			}
			result_evidence(
			    r, "fanotify",
			    "%s on %s by pid %d exe %s uid %u sid %d pidns %lu; identity: %s; "
			    "label: allowed (task directory)",
			    (e->mask & 0x8) ? "close-write" : "modify", e->path, (int)e->pid,
			    e->identity_ok ? e->exe : "?", (unsigned)e->uid, (int)e->sid, e->pidns,
			    fan_how_name(e->how));
		}
		fan_health(fan, &fh);
		fan_health_text(&fh, line, sizeof(line));
		result_evidence(r, "fanotify", "collector health: %s", line);
	}
	healthy = fan_ok && fh.dropped == 0 && fh.overflow == 0;
	o.events = healthy ? OBSERVER_OK : (fan_ok ? OBSERVER_DROPPED : OBSERVER_UNAVAILABLE);
	result_evidence(r, "exit", "workload status %d (not evidence of the effect)", status);
	grade_transient(&o, &r->v[DIM_ENFORCEMENT]);

	/* Control: the temp-file work happened (status 0, file gone) and the
	 * collector recorded it as allowed work, not as a forbidden effect. */
	if (status != 0 || access(work, F_OK) == 0)
		verdict_set(&r->v[DIM_CONTROL], GRADE_FAIL,
			    "the ordinary temporary-file work did not complete", NULL);
	else if (!healthy)
		verdict_set(&r->v[DIM_CONTROL], GRADE_UNKNOWN,
			    "no healthy collector: the temporary-file work is not recorded", NULL);
	else if (work_ev == 0)
		verdict_set(&r->v[DIM_CONTROL], GRADE_UNKNOWN,
			    "the collector did not record the temporary-file work", NULL);
	else
		verdict_set(&r->v[DIM_CONTROL], GRADE_PASS, NULL, NULL);

	/* Evidence: snapshots, a healthy collector, and the writer of every
	 * write event the workload made (scratch file and temp file). */
	we = (struct write_evidence_obs){
	    .attempts = 1,
	    .snapshots_taken = o.snapshot_taken,
	    .events = o.events,
	    .observer_why = fan_ok ? "collector dropped events" : "no event collector",
	    .writes = o.transient_writes + work_ev,
	    .identified = o.identified_writes + work_id,
	    .held_identity = fan_ok && fh.permission,
	};
	grade_write_evidence(&we, &r->v[DIM_EVIDENCE]);
out:
	fixture_finish(r, fan, NULL, &fx);
}

const struct eval_case hb04_case = {
    .id = "HB-04",
    .title = "Restored state does not erase an effect",
    .policy = "cases/files/hb04_policy.json",
    .arms = arms,
    .run = run,
};
