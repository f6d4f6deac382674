/* Unit tests for paddock-eval's pure parts: every rule of the spec's
 * "grading" text, the alarms, the JSON, Markdown and JUnit writers, and
 * the bounds that used to be silent (results, selections, argv). */
#include <criterion/criterion.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../../scenarios/lib/args.h"
#include "../../scenarios/lib/eval.h"
#include "../../scenarios/lib/harness.h"
#include "../../scenarios/observers/fan_ident.h"
#include "../../scenarios/cases/files/hb03_grade.h"
#include "../../scenarios/cases/change/hb22_grade.h"
#include "../../scenarios/cases/files/hb02_grade.h"
#include "../../scenarios/cases/files/hb04_grade.h"
#include "../../scenarios/cases/lifecycle/hb05_grade.h"
#include "../../scenarios/cases/lifecycle/hb06_grade.h"
#include "../../scenarios/cases/lifecycle/hb07_grade.h"
#include "../../scenarios/cases/lifecycle/hb08_grade.h"
#include "../../scenarios/cases/network/hb09_grade.h"
#include "../../scenarios/cases/network/hb10_grade.h"
#include "../../scenarios/cases/network/hb11_grade.h"
#include "../../scenarios/cases/network/hb12_grade.h"
#include "../../scenarios/cases/network/hb23_grade.h"
#include "../../scenarios/cases/budget/budget_grade.h"
#include "../../scenarios/cases/evidence/hb17_grade.h"
#include "../../scenarios/cases/evidence/hb18_grade.h"
#include "../../scenarios/cases/evidence/hb19_grade.h"
#include "../../scenarios/cases/evidence/hb20_grade.h"
#include "../../scenarios/cases/evidence/hb24_grade.h"
#include "unit.h"

TestSuite(eval, .fini = unit_leak_check);

static struct prevention_obs clean(void)
{
	return (struct prevention_obs){
	    .attempts = 7, .snapshots_taken = 7, .events = OBSERVER_OK, .transient_in_scope = true};
}

/* "An observed forbidden effect fails a required prevention boundary even
 * when detection/reporting passes." */
Test(eval, forbidden_effect_fails_even_when_detected)
{
	struct prevention_obs o = clean();
	struct verdict v = {0};

	o.event_writes = 1; /* the observer saw it: detection worked */
	grade_prevention(&o, &v);
	cr_assert_eq(v.grade, GRADE_FAIL);
	o.event_writes = 0;
	o.snapshot_changes = 1;
	o.events = OBSERVER_UNAVAILABLE;
	grade_prevention(&o, &v);
	cr_assert_eq(v.grade, GRADE_FAIL);
	cr_assert(strstr(v.reason, "forbidden effect"));
}

/* "Missing evidence is UNKNOWN, never PASS." */
Test(eval, missing_evidence_is_unknown)
{
	struct prevention_obs o = clean();
	struct verdict v = {0};

	o.snapshots_taken = 6;
	grade_prevention(&o, &v);
	cr_assert_eq(v.grade, GRADE_UNKNOWN);
	o = clean();
	o.attempts = o.snapshots_taken = 0;
	grade_prevention(&o, &v);
	cr_assert_eq(v.grade, GRADE_UNKNOWN);
	/* A dimension no driver graded. */
	struct result r;

	result_init(&r, "HB-01", "t", "enforced");
	verdict_set(&r.v[DIM_ENFORCEMENT], GRADE_PASS, NULL, NULL);
	result_finish(&r);
	cr_assert_eq(r.v[DIM_CONTROL].grade, GRADE_UNKNOWN);
	cr_assert(strstr(r.v[DIM_CONTROL].reason, "missing evidence"));
}

/* The spec's "unknown" of HB-01: only before/after equality where transient
 * mutation is in scope. */
Test(eval, snapshot_only_is_unknown_when_transient_in_scope)
{
	struct prevention_obs o = clean();
	struct verdict v = {0};

	o.events = OBSERVER_UNAVAILABLE;
	grade_prevention(&o, &v);
	cr_assert_eq(v.grade, GRADE_UNKNOWN);
	o.events = OBSERVER_DROPPED;
	grade_prevention(&o, &v);
	cr_assert_eq(v.grade, GRADE_UNKNOWN);
	o.transient_in_scope = false;
	grade_prevention(&o, &v);
	cr_assert_eq(v.grade, GRADE_PASS);
	o = clean();
	grade_prevention(&o, &v);
	cr_assert_eq(v.grade, GRADE_PASS);
}

/* "NOT APPLICABLE requires a reason and scope reference"; every non-PASS
 * grade needs a reason. */
Test(eval, not_applicable_needs_reason_and_scope)
{
	struct verdict v = {0};

	cr_assert_eq(verdict_set(&v, GRADE_NOT_APPLICABLE, "no such knob", NULL), -EINVAL);
	cr_assert_eq(v.grade, GRADE_UNKNOWN);
	cr_assert_eq(verdict_set(&v, GRADE_NOT_APPLICABLE, NULL, "HB-04 procedure"), -EINVAL);
	cr_assert_eq(v.grade, GRADE_UNKNOWN);
	cr_assert_eq(verdict_set(&v, GRADE_NOT_APPLICABLE, "r", "s"), 0);
	cr_assert_eq(v.grade, GRADE_NOT_APPLICABLE);
	cr_assert_str_eq(v.scope, "s");
	cr_assert_eq(verdict_set(&v, GRADE_FAIL, "", NULL), -EINVAL);
	cr_assert_eq(v.grade, GRADE_UNKNOWN);
	cr_assert_eq(verdict_set(&v, GRADE_NOT_EXECUTED, NULL, NULL), -EINVAL);
	cr_assert_eq(verdict_set(&v, GRADE_PASS, NULL, NULL), 0);
}

/* "A safe refusal can preserve the boundary while failing task utility":
 * enforcement PASS and control FAIL are kept apart, and the enforced arm
 * fails the run on control alone. */
Test(eval, safe_refusal_keeps_dimensions_apart)
{
	struct result r;

	result_init(&r, "HB-01", "t", "enforced");
	verdict_set(&r.v[DIM_ENFORCEMENT], GRADE_PASS, NULL, NULL);
	verdict_set(&r.v[DIM_CONTROL], GRADE_FAIL, "task-dir write refused", NULL);
	verdict_set(&r.v[DIM_EVIDENCE], GRADE_PASS, NULL, NULL);
	result_finish(&r);
	cr_assert_eq(r.v[DIM_ENFORCEMENT].grade, GRADE_PASS);
	cr_assert_eq(r.v[DIM_CONTROL].grade, GRADE_FAIL);
	cr_assert(result_fails_run(&r));
	cr_assert_eq(r.alarm[0], '\0');
}

/* A weakened arm that passes enforcement cannot detect what it claims to. */
Test(eval, weakened_arm_passing_is_an_alarm)
{
	struct result r;

	result_init(&r, "HB-01", "t", "weakened:rw-binds");
	cr_assert_eq(r.kind, ARM_WEAKENED);
	cr_assert_str_eq(r.knob, "rw-binds");
	verdict_set(&r.v[DIM_ENFORCEMENT], GRADE_PASS, NULL, NULL);
	verdict_set(&r.v[DIM_CONTROL], GRADE_PASS, NULL, NULL);
	verdict_set(&r.v[DIM_EVIDENCE], GRADE_PASS, NULL, NULL);
	result_finish(&r);
	cr_assert(strstr(r.alarm, "cannot detect"));
	cr_assert(result_fails_run(&r));

	result_init(&r, "HB-01", "t", "weakened:rw-binds");
	verdict_set(&r.v[DIM_ENFORCEMENT], GRADE_FAIL, "canary changed", NULL);
	result_finish(&r);
	cr_assert_eq(r.alarm[0], '\0');
	cr_assert_not(result_fails_run(&r));
	/* NOT APPLICABLE on a weakened arm is no alarm. */
	result_init(&r, "HB-04", "t", "weakened:rw-binds");
	verdict_set(&r.v[DIM_ENFORCEMENT], GRADE_NOT_APPLICABLE, "observation test", "HB-04");
	result_finish(&r);
	cr_assert_not(result_fails_run(&r));
}

/* An arm whose weakening shows in control (HB-09's proxy-env-only keeps
 * everything denied out and loses the permitted request): control must
 * FAIL, enforcement is reported but not required. */
Test(eval, weakened_arm_in_control)
{
	struct result r;
	bool needed;

	result_init(&r, "HB-09", "t", "weakened:proxy-env-only");
	r.weakens = DIM_CONTROL;
	verdict_set(&r.v[DIM_ENFORCEMENT], GRADE_PASS, NULL, NULL);
	verdict_set(&r.v[DIM_CONTROL], GRADE_FAIL, "the permitted request did not arrive", NULL);
	verdict_set(&r.v[DIM_EVIDENCE], GRADE_PASS, NULL, NULL);
	result_finish(&r);
	cr_assert_eq(r.alarm[0], '\0', "%s", r.alarm);
	cr_assert_not(result_fails_run(&r));
	cr_assert_eq(result_dim_outcome(&r, DIM_CONTROL, &needed), OUTCOME_OK);
	cr_assert(needed);
	cr_assert_eq(result_dim_outcome(&r, DIM_ENFORCEMENT, &needed), OUTCOME_OK);
	cr_assert_not(needed);
	/* Control PASSing there: the case did not see the weakening. */
	result_init(&r, "HB-09", "t", "weakened:proxy-env-only");
	r.weakens = DIM_CONTROL;
	verdict_set(&r.v[DIM_ENFORCEMENT], GRADE_PASS, NULL, NULL);
	verdict_set(&r.v[DIM_CONTROL], GRADE_PASS, NULL, NULL);
	result_finish(&r);
	cr_assert(strstr(r.alarm, "PASSED control"), "%s", r.alarm);
	cr_assert(result_fails_run(&r));
	/* UNKNOWN there is no detection either. */
	result_init(&r, "HB-09", "t", "weakened:proxy-env-only");
	r.weakens = DIM_CONTROL;
	verdict_set(&r.v[DIM_CONTROL], GRADE_UNKNOWN, "blind", NULL);
	result_finish(&r);
	cr_assert(result_fails_run(&r));
}

Test(eval, enforced_fail_fails_run_docker_does_not)
{
	struct result r;

	result_init(&r, "HB-06", "t", "enforced");
	verdict_set(&r.v[DIM_ENFORCEMENT], GRADE_FAIL, "descendant survived", NULL);
	result_finish(&r);
	cr_assert(result_fails_run(&r));
	result_init(&r, "HB-06", "t", "docker");
	cr_assert_eq(r.kind, ARM_DOCKER);
	verdict_set(&r.v[DIM_ENFORCEMENT], GRADE_FAIL, "descendant survived", NULL);
	result_finish(&r);
	cr_assert_not(result_fails_run(&r));
	/* UNKNOWN of an enforced arm fails the run: the harness could not
	 * tell (exit 4), never exit 0. */
	result_init(&r, "HB-06", "t", "enforced");
	verdict_set(&r.v[DIM_ENFORCEMENT], GRADE_UNKNOWN, "inventory empty", NULL);
	result_finish(&r);
	cr_assert(result_fails_run(&r));
	cr_assert_eq(result_outcome(&r), OUTCOME_UNKNOWN);
}

/* The three grades of result r, each asserted (the failing line names
 * the dimension). */
#define cr_assert_grades(r, e, c, ev)                          \
	do {                                                   \
		cr_assert_eq((r).v[DIM_ENFORCEMENT].grade, e); \
		cr_assert_eq((r).v[DIM_CONTROL].grade, c);     \
		cr_assert_eq((r).v[DIM_EVIDENCE].grade, ev);   \
	} while (0)

static void grade3(struct result *r, const char *arm, enum grade e, enum grade c, enum grade v)
{
	result_init(r, "HB-01", "t", arm);
	verdict_set(&r->v[DIM_ENFORCEMENT], e, "e why", e == GRADE_NOT_APPLICABLE ? "e sc" : NULL);
	verdict_set(&r->v[DIM_CONTROL], c, "c why", c == GRADE_NOT_APPLICABLE ? "c sc" : NULL);
	verdict_set(&r->v[DIM_EVIDENCE], v, "v why", v == GRADE_NOT_APPLICABLE ? "v sc" : NULL);
	result_finish(r);
}

/* The exit status: one mapping (docs/scenarios.md "Exit status"). */
Test(eval, exit_status_mapping)
{
	struct result r[3];
	char line[640];

	grade3(&r[0], "enforced", GRADE_PASS, GRADE_PASS, GRADE_PASS);
	grade3(&r[1], "weakened:rw-binds", GRADE_FAIL, GRADE_PASS, GRADE_UNKNOWN);
	grade3(&r[2], "docker", GRADE_FAIL, GRADE_UNKNOWN, GRADE_NOT_EXECUTED);
	cr_assert_eq(run_verdict(r, 3, line, sizeof(line)), EVAL_EXIT_OK, "%s", line);
	cr_assert(strstr(line, "Verdict: OK (exit 0)"), "%s", line);
	/* Enforced UNKNOWN in any dimension: 4. */
	for (int d = 0; d < DIM_COUNT; d++) {
		grade3(&r[0], "enforced", d == 0 ? GRADE_UNKNOWN : GRADE_PASS,
		       d == 1 ? GRADE_UNKNOWN : GRADE_PASS, d == 2 ? GRADE_UNKNOWN : GRADE_PASS);
		cr_assert_eq(run_verdict(r, 3, line, sizeof(line)), EVAL_EXIT_UNKNOWN, "%s", line);
		cr_assert(strstr(line, "HARNESS COULD NOT TELL"), "%s", line);
	}
	/* Enforced NOT EXECUTED: 5. */
	grade3(&r[0], "enforced", GRADE_NOT_EXECUTED, GRADE_NOT_EXECUTED, GRADE_NOT_EXECUTED);
	cr_assert_eq(run_verdict(r, 3, line, sizeof(line)), EVAL_EXIT_NOT_EXECUTED, "%s", line);
	/* A weakened arm UNKNOWN or PASS: an alarm, 4. */
	grade3(&r[0], "enforced", GRADE_PASS, GRADE_PASS, GRADE_PASS);
	grade3(&r[1], "weakened:rw-binds", GRADE_UNKNOWN, GRADE_PASS, GRADE_PASS);
	cr_assert(strstr(r[1].alarm, "could not tell"), "%s", r[1].alarm);
	cr_assert_eq(run_verdict(r, 3, line, sizeof(line)), EVAL_EXIT_UNKNOWN, "%s", line);
	grade3(&r[1], "weakened:rw-binds", GRADE_PASS, GRADE_PASS, GRADE_PASS);
	cr_assert_eq(run_verdict(r, 3, line, sizeof(line)), EVAL_EXIT_UNKNOWN, "%s", line);
	/* A weakened arm NOT EXECUTED: 5, no alarm. */
	grade3(&r[1], "weakened:rw-binds", GRADE_NOT_EXECUTED, GRADE_NOT_EXECUTED,
	       GRADE_NOT_EXECUTED);
	cr_assert_eq(r[1].alarm[0], '\0');
	cr_assert_eq(run_verdict(r, 3, line, sizeof(line)), EVAL_EXIT_NOT_EXECUTED, "%s", line);
	/* A boundary FAIL wins over UNKNOWN and NOT EXECUTED: 1. */
	grade3(&r[0], "enforced", GRADE_PASS, GRADE_FAIL, GRADE_UNKNOWN);
	cr_assert_eq(run_verdict(r, 3, line, sizeof(line)), EVAL_EXIT_FAIL, "%s", line);
	cr_assert(strstr(line, "BOUNDARY FAILED (exit 1): 1 arm(s); first HB-01 enforced control: "
			       "FAIL (c why)"),
		  "%s", line);
	/* A broken collector must be UNKNOWN. */
	grade3(&r[0], "broken-collector", GRADE_UNKNOWN, GRADE_UNKNOWN, GRADE_UNKNOWN);
	grade3(&r[1], "weakened:rw-binds", GRADE_FAIL, GRADE_FAIL, GRADE_FAIL);
	cr_assert_eq(run_verdict(r, 3, line, sizeof(line)), EVAL_EXIT_OK, "%s", line);
	grade3(&r[0], "broken-collector", GRADE_PASS, GRADE_UNKNOWN, GRADE_UNKNOWN);
	cr_assert_eq(run_verdict(r, 3, line, sizeof(line)), EVAL_EXIT_UNKNOWN, "%s", line);
	/* NOT APPLICABLE is never needed; an alarm alone (teardown) is 4. */
	grade3(&r[0], "enforced", GRADE_NOT_APPLICABLE, GRADE_NOT_APPLICABLE, GRADE_NOT_APPLICABLE);
	cr_assert_eq(run_verdict(r, 3, line, sizeof(line)), EVAL_EXIT_OK, "%s", line);
	snprintf(r[0].alarm, sizeof(r[0].alarm), "teardown left the fixture behind");
	cr_assert_eq(run_verdict(r, 3, line, sizeof(line)), EVAL_EXIT_UNKNOWN, "%s", line);
	cr_assert(strstr(line, "alarm: teardown left"), "%s", line);
	cr_assert_eq(run_verdict(r, 0, line, sizeof(line)), EVAL_EXIT_OK);
}

/* JUnit: one testcase per case x arm x dimension, real messages, times;
 * a weakened arm's FAIL is the pass of "weakening detected". */
Test(eval, junit_one_test_per_dimension)
{
	struct result r[3];
	struct subject s = {.run_id = "run"};
	char *buf = NULL;
	size_t len = 0;
	FILE *f;

	grade3(&r[0], "enforced", GRADE_PASS, GRADE_FAIL, GRADE_UNKNOWN);
	r[0].seconds = 1.5;
	grade3(&r[1], "weakened:rw-binds", GRADE_FAIL, GRADE_PASS, GRADE_NOT_EXECUTED);
	r[1].seconds = 2.25;
	grade3(&r[2], "docker", GRADE_PASS, GRADE_UNKNOWN, GRADE_PASS);
	f = open_memstream(&buf, &len);
	report_write_junit(f, r, 3, &s);
	fclose(f);
	cr_assert(strstr(buf, "tests=\"9\" failures=\"1\" errors=\"1\" skipped=\"2\" "
			      "time=\"3.750\""),
		  "%s", buf);
	cr_assert(strstr(buf, "classname=\"HB-01.enforced\" name=\"enforcement\" "
			      "time=\"1.500\"></testcase>"),
		  "%s", buf);
	cr_assert(strstr(buf, "name=\"control\" time=\"1.500\"><failure type=\"boundary "
			      "failed\" message=\"FAIL: c why\"/>"),
		  "%s", buf);
	cr_assert(strstr(buf, "name=\"evidence\" time=\"1.500\"><error type=\"harness could "
			      "not tell\" message=\"UNKNOWN: v why\"/>"),
		  "%s", buf);
	cr_assert(strstr(buf, "classname=\"HB-01.weakened:rw-binds\" name=\"enforcement: "
			      "weakening detected\" time=\"2.250\"><system-out>FAIL: e "
			      "why</system-out></testcase>"),
		  "%s", buf);
	cr_assert(strstr(buf, "<skipped message=\"not required: NOT EXECUTED: v why\"/>"), "%s",
		  buf);
	cr_assert(strstr(buf, "<skipped message=\"reference arm, not required: UNKNOWN: c why\"/>"),
		  "%s", buf);
	free(buf);
}

/* HB-04: a collector that dropped the event gives UNKNOWN; a review that
 * claims "no mutation" from final-state equality FAILs; the snapshot's
 * conclusion is limited to final-state equality. */
Test(eval, transient_write_rules)
{
	struct transient_obs o = {.events = OBSERVER_OK,
				  .transient_writes = 2,
				  .identified_writes = 2,
				  .marker_identified = true,
				  .snapshot_equal = true,
				  .snapshot_taken = true,
				  .snapshot_limited = true,
				  .review_reports_transient = true,
				  .timing = TIMING_OK,
				  .identity_required = true};
	struct verdict v = {0};

	grade_transient(&o, &v);
	cr_assert_eq(v.grade, GRADE_PASS);
	o.events = OBSERVER_DROPPED;
	o.transient_writes = o.identified_writes = 0;
	grade_transient(&o, &v);
	cr_assert_eq(v.grade, GRADE_UNKNOWN);
	o.events = OBSERVER_UNAVAILABLE;
	grade_transient(&o, &v);
	cr_assert_eq(v.grade, GRADE_UNKNOWN);
	o.events = OBSERVER_OK;
	o.transient_writes = 1;
	o.marker_identified = false;
	grade_transient(&o, &v);
	cr_assert_eq(v.grade, GRADE_UNKNOWN); /* no identity */
	/* The restore's writer missing does not void the marker write's
	 * claim (the evidence dimension reports it). */
	o.transient_writes = 3;
	o.identified_writes = 2;
	o.marker_identified = true;
	grade_transient(&o, &v);
	cr_assert_eq(v.grade, GRADE_PASS);
	o.marker_identified = false;
	grade_transient(&o, &v);
	cr_assert_eq(v.grade, GRADE_UNKNOWN);
	cr_assert(strstr(v.reason, "no writer identity"));
	o.review_claims_no_mutation = true;
	grade_transient(&o, &v);
	cr_assert_eq(v.grade, GRADE_FAIL);
	cr_assert(strstr(snapshot_conclusion(true), "says nothing about writes in between"));
	cr_assert_null(strstr(snapshot_conclusion(true), "no mutation"));
}

/* HB-04's computed conclusions: the snapshot observer's from its two
 * snapshots, the review's from that and the event record; a review that
 * claims "no mutation" while the collector saw the write (the naive
 * snapshot-only review) is the lie the grade catches. */
static struct transient_obs transient_clean(void)
{
	return (struct transient_obs){.events = OBSERVER_OK,
				      .transient_writes = 2,
				      .identified_writes = 2,
				      .marker_identified = true,
				      .snapshot_equal = true,
				      .snapshot_taken = true,
				      .snapshot_limited = true,
				      .review_reports_transient = true,
				      .timing = TIMING_OK,
				      .identity_required = true};
}

Test(eval, hb04_snapshot_conclusion_is_computed)
{
	struct snapshot a = {.ok = true, .size = 29, .ino = 3, .mode = 0100644, .mtime_ns = 10};
	struct snapshot b;
	struct snap_conclusion c;

	snprintf(a.sha256, sizeof(a.sha256), "%064d", 1);
	b = a;
	snapshot_conclude(&a, &b, &c);
	cr_assert(c.taken && c.limited);
	cr_assert_eq(c.differ, 0u);
	cr_assert(strstr(c.text, "says nothing about writes in between"), "%s", c.text);
	cr_assert_null(strstr(c.text, "no mutation"));
	/* Each field, alone, makes the states differ and is named. */
	b.mtime_ns = 11;
	snapshot_conclude(&a, &b, &c);
	cr_assert_eq(c.differ, (unsigned)SNAP_DIFF_MTIME);
	cr_assert(!c.limited);
	cr_assert(strstr(c.text, "differs") && strstr(c.text, "mtime"), "%s", c.text);
	b = a;
	b.uid = 7;
	snapshot_conclude(&a, &b, &c);
	cr_assert_eq(c.differ, (unsigned)SNAP_DIFF_OWNER);
	b = a;
	b.sha256[63] = '2';
	b.ino = 4;
	snapshot_conclude(&a, &b, &c);
	cr_assert_eq(c.differ, (unsigned)(SNAP_DIFF_SHA256 | SNAP_DIFF_INODE));
	cr_assert(strstr(c.text, "sha256, inode"), "%s", c.text);
	b.ok = false;
	snapshot_conclude(&a, &b, &c);
	cr_assert(!c.taken && !c.limited);
	cr_assert(strstr(c.text, "after snapshot is missing"));
}

Test(eval, hb04_review_is_computed)
{
	struct snap_conclusion eq = {.taken = true, .limited = true, .text = "equal"};
	struct review rv;

	review_conclude(&eq, OBSERVER_OK, 3, false, &rv);
	cr_assert(rv.reports_transient && !rv.claims_no_mutation);
	cr_assert(strstr(rv.text, "mutation occurred: 3 write events") &&
		      strstr(rv.text, "then restored"),
		  "%s", rv.text);
	/* No healthy collector: the snapshot's limited conclusion only. */
	review_conclude(&eq, OBSERVER_DROPPED, 0, false, &rv);
	cr_assert(!rv.reports_transient && !rv.claims_no_mutation);
	/* A healthy collector that saw nothing is what may say "no mutation". */
	review_conclude(&eq, OBSERVER_OK, 0, false, &rv);
	cr_assert(rv.claims_no_mutation);
	cr_assert(strstr(rv.text, "collector recorded no write"));
	/* The naive reviewer: snapshot equality becomes "no mutation". */
	review_conclude(&eq, OBSERVER_OK, 3, true, &rv);
	cr_assert(rv.claims_no_mutation && !rv.reports_transient);
	eq.differ = SNAP_DIFF_MTIME;
	review_conclude(&eq, OBSERVER_OK, 3, true, &rv);
	cr_assert(!rv.claims_no_mutation);
}

Test(eval, hb04_review_and_snapshot_lies_fail)
{
	struct transient_obs o = transient_clean();
	struct verdict v = {0};
	struct snap_conclusion eq = {.taken = true, .limited = true, .text = "equal"};
	struct review rv;

	grade_transient(&o, &v);
	cr_assert_eq(v.grade, GRADE_PASS);
	/* The lie: the snapshot-only review over a run whose collector saw
	 * the marker write. */
	review_conclude(&eq, OBSERVER_OK, o.transient_writes, true, &rv);
	o.review_claims_no_mutation = rv.claims_no_mutation;
	o.review_reports_transient = rv.reports_transient;
	grade_transient(&o, &v);
	cr_assert_eq(v.grade, GRADE_FAIL);
	cr_assert(strstr(v.reason, "although the event collector recorded"), "%s", v.reason);
	/* ... and with no collector at all: from final-state equality alone. */
	o.events = OBSERVER_UNAVAILABLE;
	o.transient_writes = o.identified_writes = 0;
	grade_transient(&o, &v);
	cr_assert_eq(v.grade, GRADE_FAIL);
	cr_assert(strstr(v.reason, "final-state equality alone"));
	/* "No mutation" from a healthy collector that saw no write is not
	 * the fail clause: the workload made one, so UNKNOWN. */
	o = transient_clean();
	o.transient_writes = o.identified_writes = 0;
	o.review_claims_no_mutation = true;
	o.review_reports_transient = false;
	grade_transient(&o, &v);
	cr_assert_eq(v.grade, GRADE_UNKNOWN);
	/* A review silent about the recorded write. */
	o = transient_clean();
	o.review_reports_transient = false;
	grade_transient(&o, &v);
	cr_assert_eq(v.grade, GRADE_FAIL);
	cr_assert(strstr(v.reason, "does not report the transient write"));
	/* A snapshot conclusion that does not state its limit. */
	o = transient_clean();
	o.snapshot_limited = false;
	grade_transient(&o, &v);
	cr_assert_eq(v.grade, GRADE_FAIL);
	cr_assert(strstr(v.reason, "does not limit itself"));
}

/* The restore must give back the initial state (digest and metadata), or
 * there is no restored state to test: UNKNOWN, naming what differs. */
Test(eval, hb04_restore_not_equal_is_unknown)
{
	struct transient_obs o = transient_clean();
	struct verdict v = {0};

	o.snapshot_equal = false;
	o.snapshot_limited = false;
	o.snapshot_differ = SNAP_DIFF_MTIME;
	grade_transient(&o, &v);
	cr_assert_eq(v.grade, GRADE_UNKNOWN);
	cr_assert(strstr(v.reason, "did not reproduce the initial state (mtime differ)"), "%s",
		  v.reason);
	o.snapshot_differ = 0;
	grade_transient(&o, &v);
	cr_assert_eq(v.grade, GRADE_UNKNOWN);
}

/* The spec's "lacks sufficient timing": every clause of transient_timing()
 * and its UNKNOWN in the grade. */
Test(eval, hb04_timing_rules)
{
	struct timed_event open = {.qseq = 5, .t_ns = 1000}, close = {.qseq = 16, .t_ns = 9000};
	struct timed_event w[3] = {{8, 2000}, {10, 2000}, {12, 3000}};
	struct transient_obs o = transient_clean();
	struct verdict v = {0};

	/* Same read batch (equal times), ordered by the queue. */
	cr_assert_eq(transient_timing(&open, &close, w, 3), TIMING_OK);
	cr_assert_eq(transient_timing(&open, &close, w, 1), TIMING_MERGED);
	cr_assert_eq(transient_timing(&open, &close, w, 0), TIMING_MERGED);
	w[0].qseq = 4; /* queued before the window opened */
	cr_assert_eq(transient_timing(&open, &close, w, 3), TIMING_OUTSIDE);
	w[0].qseq = 8;
	w[2].qseq = 17; /* after it closed */
	cr_assert_eq(transient_timing(&open, &close, w, 3), TIMING_OUTSIDE);
	w[2].qseq = 12;
	w[2].t_ns = 1500; /* read earlier than an event queued before it */
	cr_assert_eq(transient_timing(&open, &close, w, 3), TIMING_BACKWARD);
	w[2].t_ns = 3000;
	w[1].t_ns = 0;
	cr_assert_eq(transient_timing(&open, &close, w, 3), TIMING_NONE);
	w[1].t_ns = 2000;
	open.t_ns = 0;
	cr_assert_eq(transient_timing(&open, &close, w, 3), TIMING_NONE);
	open.t_ns = 1000;
	/* Without queue positions, times alone must strictly increase. */
	w[0].qseq = w[1].qseq = w[2].qseq = 0;
	cr_assert_eq(transient_timing(&open, &close, w, 3), TIMING_COARSE);
	w[1].t_ns = 2500;
	cr_assert_eq(transient_timing(&open, &close, w, 3), TIMING_OK);
	/* The whole-second collector of make eval-selftest's fan-coarse-time. */
	open = (struct timed_event){0, 1000000000LL};
	close = (struct timed_event){0, 1000000000LL};
	for (int i = 0; i < 3; i++)
		w[i] = (struct timed_event){0, 1000000000LL};
	cr_assert_eq(transient_timing(&open, &close, w, 3), TIMING_COARSE);
	for (enum timing t = TIMING_NONE; t <= TIMING_BACKWARD; t++) {
		o.timing = t;
		grade_transient(&o, &v);
		cr_assert_eq(v.grade, t == TIMING_OK ? GRADE_PASS : GRADE_UNKNOWN);
		if (t != TIMING_OK)
			cr_assert(strstr(v.reason, "insufficient timing"), "%s", v.reason);
	}
}

Test(eval, broken_collector_must_be_unknown)
{
	struct result r;

	result_init(&r, "HB-04", "t", "broken-collector");
	cr_assert_eq(r.kind, ARM_BROKEN_COLLECTOR);
	verdict_set(&r.v[DIM_ENFORCEMENT], GRADE_PASS, NULL, NULL);
	result_finish(&r);
	cr_assert(result_fails_run(&r));
	result_init(&r, "HB-04", "t", "broken-collector");
	verdict_set(&r.v[DIM_ENFORCEMENT], GRADE_UNKNOWN, "dropped", NULL);
	result_finish(&r);
	cr_assert_not(result_fails_run(&r));
}

Test(eval, not_executed_fills_only_unset)
{
	struct result r;

	result_init(&r, "HB-06", "t", "enforced");
	verdict_set(&r.v[DIM_ENFORCEMENT], GRADE_PASS, NULL, NULL);
	result_not_executed(&r, "no services");
	cr_assert_eq(r.v[DIM_ENFORCEMENT].grade, GRADE_PASS);
	cr_assert_eq(r.v[DIM_CONTROL].grade, GRADE_NOT_EXECUTED);
	cr_assert_str_eq(r.v[DIM_CONTROL].reason, "no services");
}

static char *render(void (*fn)(FILE *, const char *), const char *s)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	fn(f, s);
	fclose(f);
	return buf;
}

Test(eval, escaping)
{
	char *j = render(json_write_string, "a\"b\\c\nd\x01<");
	char *x = render(xml_write_escaped, "<a & 'b' \"c\">\x02");
	char *m = render(md_write_cell, "a|b\nc`d");

	cr_assert_str_eq(j, "\"a\\\"b\\\\c\\nd\\u0001<\"");
	cr_assert_str_eq(x, "&lt;a &amp; &apos;b&apos; &quot;c&quot;&gt;?");
	cr_assert_str_eq(m, "a\\|b c\\`d");
	free(j);
	free(x);
	free(m);
}

static void sample(struct result *r, struct subject *s)
{
	memset(s, 0, sizeof(*s));
	snprintf(s->paddock_version, sizeof(s->paddock_version), "0.1.0");
	snprintf(s->paddock_commit, sizeof(s->paddock_commit), "abc\"def");
	snprintf(s->kernel, sizeof(s->kernel), "6.x");
	snprintf(s->run_id, sizeof(s->run_id), "run<1>");
	result_init(r, "HB-01", "Equivalent writes", "weakened:rw-binds");
	verdict_set(&r->v[DIM_ENFORCEMENT], GRADE_FAIL, "canary \"changed\" | <7 of 7>", NULL);
	verdict_set(&r->v[DIM_CONTROL], GRADE_PASS, NULL, NULL);
	verdict_set(&r->v[DIM_EVIDENCE], GRADE_NOT_APPLICABLE, "why", "HB-01 & scope");
	result_evidence(r, "canary-sha256", "path /tmp/a\tb");
	result_mock(r, "mock \"tool\"");
	r->fixture_only = true;
	snprintf(r->fixture_why, sizeof(r->fixture_why), "the collector is the harness's");
	result_finish(r);
}

Test(eval, json_record)
{
	struct result r;
	struct subject s;
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	sample(&r, &s);
	report_write_json(f, &r, &s);
	fclose(f);
	cr_assert(strstr(buf, "\"case\": \"HB-01\""));
	cr_assert(strstr(buf, "\"arm\": \"weakened:rw-binds\""));
	cr_assert(strstr(buf, "\"commit\": \"abc\\\"def\""));
	cr_assert(strstr(buf, "\"reason\": \"canary \\\"changed\\\" | <7 of 7>\""));
	cr_assert(strstr(buf, "\"scope\": \"HB-01 & scope\""));
	cr_assert(strstr(buf, "\"fixture_only\": true"));
	cr_assert(strstr(buf, "\"fixture_only_reason\": \"the collector is the harness's\""));
	cr_assert(strstr(buf, "\"mocked\": [\"mock \\\"tool\\\"\"]"));
	cr_assert(strstr(buf, "path /tmp/a\\tb"));
	cr_assert(strstr(buf, "\"grade\": \"NOT APPLICABLE\""));
	cr_assert(strstr(buf, "\"fanotify_mode\": null"));
	free(buf);
	buf = NULL;
	f = open_memstream(&buf, &len);
	snprintf(r.fanotify_mode, sizeof(r.fanotify_mode), "permission: FAN_CLASS_CONTENT");
	report_write_json(f, &r, &s);
	fclose(f);
	cr_assert(strstr(buf, "\"fanotify_mode\": \"permission: FAN_CLASS_CONTENT\""));
	free(buf);
}

Test(eval, markdown_and_junit)
{
	struct result r[2];
	struct subject s;
	char *buf = NULL;
	size_t len = 0;
	FILE *f;

	sample(&r[0], &s);
	result_init(&r[1], "HB-06", "t", "enforced");
	verdict_set(&r[1].v[DIM_ENFORCEMENT], GRADE_FAIL, "a <leak> & more", NULL);
	result_finish(&r[1]);
	f = open_memstream(&buf, &len);
	report_write_md(f, r, 2, &s);
	fclose(f);
	/* The first line is the verdict. */
	cr_assert_eq(strncmp(buf, "Verdict: BOUNDARY FAILED (exit 1)", 33), 0, "%s", buf);
	cr_assert(
	    strstr(buf, "| HB-01 | weakened:rw-binds | FAIL (fixture only): canary \"changed\" \\| "
			"&lt;7 of 7> | PASS | NOT APPLICABLE: why (scope: HB-01 & scope) |"),
	    "%s", buf);
	/* fixture_only is said next to the grade, with why. */
	cr_assert(strstr(buf, "fixture only: the collector is the harness's;"), "%s", buf);
	cr_assert(strstr(buf, "UNKNOWN: missing evidence"));
	free(buf);
	buf = NULL;
	f = open_memstream(&buf, &len);
	report_write_junit(f, r, 2, &s);
	fclose(f);
	cr_assert(strstr(buf, "<testsuite name=\"run&lt;1&gt;\" tests=\"6\" failures=\"1\""));
	cr_assert(strstr(buf, "message=\"FAIL: a &lt;leak&gt; &amp; more\"/>"), "%s", buf);
	cr_assert(strstr(buf, "classname=\"HB-01.weakened:rw-binds\" name=\"enforcement: "
			      "weakening detected\""));
	free(buf);
}

/* ---- HB-05: a busy port ---- */

static struct busy_port_obs busy_ok(void)
{
	return (struct busy_port_obs){.checks = 30,
				      .b_read = true,
				      .b_unchanged = true,
				      .fixed_ran = true,
				      .fixed_status = 125,
				      .fixed_in_use = true,
				      .fixed_nothing = true,
				      .fixed_listed = true,
				      .stops = 3,
				      .stops_refused = 3,
				      .listener_read = true,
				      .listeners = 1,
				      .listener_is_b = true,
				      .b_port = 4000,
				      .auto_port = 4001,
				      .auto_marker = true,
				      .auto_owned = true,
				      .idents_read = true,
				      .idents = 4,
				      .holder_same = true,
				      .kills = 8,
				      .kills_refused = 8,
				      .fuser_ran = true,
				      .fuser_status = 1,
				      .same_ran = true,
				      .same_status = 125,
				      .same_in_use = true,
				      .same_listed = true,
				      .same_nothing = true,
				      .a1_checks = 15,
				      .a1_read = true,
				      .a1_unchanged = true};
}

Test(eval, busy_port_pass_and_control)
{
	struct busy_port_obs o = busy_ok();
	struct verdict v = {0}, c = {0};

	grade_busy_port(&o, &v);
	grade_busy_port_control(&o, &c);
	cr_assert_eq(v.grade, GRADE_PASS);
	cr_assert_eq(c.grade, GRADE_PASS);
}

Test(eval, busy_port_failures)
{
	struct busy_port_obs o;
	struct verdict v;

	o = busy_ok(), o.check_fails = 1, v = (struct verdict){0};
	grade_busy_port(&o, &v);
	cr_assert_eq(v.grade, GRADE_FAIL);
	cr_assert(strstr(v.reason, "1 of 30 health checks"));
	o = busy_ok(), o.b_unchanged = false, v = (struct verdict){0};
	grade_busy_port(&o, &v);
	cr_assert_eq(v.grade, GRADE_FAIL);
	o = busy_ok(), o.stops_refused = 2, v = (struct verdict){0};
	grade_busy_port(&o, &v);
	cr_assert_eq(v.grade, GRADE_FAIL);
	o = busy_ok(), o.auto_port = 4000, v = (struct verdict){0};
	grade_busy_port(&o, &v);
	cr_assert_eq(v.grade, GRADE_FAIL);
	o = busy_ok(), o.fixed_status = 0, o.fixed_nothing = false, v = (struct verdict){0};
	grade_busy_port(&o, &v);
	cr_assert_eq(v.grade, GRADE_FAIL);
	o = busy_ok(), o.listeners = 2, v = (struct verdict){0};
	grade_busy_port(&o, &v);
	cr_assert_eq(v.grade, GRADE_FAIL);
	/* A bounded failure that does not say why is not truthful. */
	o = busy_ok(), o.fixed_in_use = false, v = (struct verdict){0};
	grade_busy_port(&o, &v);
	cr_assert_eq(v.grade, GRADE_FAIL);
	cr_assert(strstr(v.reason, "truthful"));
}

Test(eval, busy_port_missing_evidence_is_unknown)
{
	struct busy_port_obs o;
	struct verdict v, c;

	o = busy_ok(), o.checks = 0, v = (struct verdict){0};
	grade_busy_port(&o, &v);
	cr_assert_eq(v.grade, GRADE_UNKNOWN);
	o = busy_ok(), o.b_read = false, v = (struct verdict){0};
	grade_busy_port(&o, &v);
	cr_assert_eq(v.grade, GRADE_UNKNOWN);
	o = busy_ok(), o.listener_read = false, v = (struct verdict){0};
	grade_busy_port(&o, &v);
	cr_assert_eq(v.grade, GRADE_UNKNOWN);
	o = busy_ok(), o.stops = o.stops_refused = 0, v = (struct verdict){0};
	grade_busy_port(&o, &v);
	cr_assert_eq(v.grade, GRADE_UNKNOWN);
	/* A refused run whose sessions could not be listed proves nothing either way. */
	o = busy_ok(), o.fixed_listed = false, o.fixed_nothing = false, v = (struct verdict){0};
	grade_busy_port(&o, &v);
	cr_assert_eq(v.grade, GRADE_UNKNOWN);
	cr_assert(strstr(v.reason, "could not be listed"));
	/* ... but a run that exited 0 on B's port is a failure without the list. */
	o = busy_ok(), o.fixed_listed = false, o.fixed_status = 0, v = (struct verdict){0};
	grade_busy_port(&o, &v);
	cr_assert_eq(v.grade, GRADE_FAIL);
	o = busy_ok(), o.auto_owned = false, c = (struct verdict){0};
	grade_busy_port_control(&o, &c);
	cr_assert_eq(c.grade, GRADE_FAIL);
}

/* HB-05: B's processes by pid and start time, A's kills, and the
 * same-owner conflict. */
Test(eval, busy_port_identities_and_kills)
{
	struct busy_port_obs o;
	struct verdict v;

	/* The consistent lie a pid-only check believes: B's entry unchanged,
	 * every health check answered (by a newcomer on the same pids), but
	 * the pid now has another start time. */
	o = busy_ok(), o.idents_replaced = 1, v = (struct verdict){0};
	grade_busy_port(&o, &v);
	cr_assert_eq(v.grade, GRADE_FAIL);
	cr_assert(strstr(v.reason, "start time"), "%s", v.reason);
	o = busy_ok(), o.idents_ended = 2, v = (struct verdict){0};
	grade_busy_port(&o, &v);
	cr_assert_eq(v.grade, GRADE_FAIL);
	cr_assert(strstr(v.reason, "2 of B's 4 processes ended"), "%s", v.reason);
	o = busy_ok(), o.holder_same = false, v = (struct verdict){0};
	grade_busy_port(&o, &v);
	cr_assert_eq(v.grade, GRADE_FAIL);
	/* A kill the kernel carried out fails even if B seems fine after. */
	o = busy_ok(), o.kills_accepted = 1, o.kills_refused = 7, v = (struct verdict){0};
	grade_busy_port(&o, &v);
	cr_assert_eq(v.grade, GRADE_FAIL);
	cr_assert(strstr(v.reason, "carried out"), "%s", v.reason);
	o = busy_ok(), o.fuser_status = 0, v = (struct verdict){0};
	grade_busy_port(&o, &v);
	cr_assert_eq(v.grade, GRADE_FAIL);
	cr_assert(strstr(v.reason, "fuser"), "%s", v.reason);
	/* Same owner: the second request must be refused cleanly, the first
	 * session untouched. */
	o = busy_ok(), o.a1_fails = 3, v = (struct verdict){0};
	grade_busy_port(&o, &v);
	cr_assert_eq(v.grade, GRADE_FAIL);
	o = busy_ok(), o.a1_unchanged = false, v = (struct verdict){0};
	grade_busy_port(&o, &v);
	cr_assert_eq(v.grade, GRADE_FAIL);
	o = busy_ok(), o.same_status = 0, o.same_nothing = false, v = (struct verdict){0};
	grade_busy_port(&o, &v);
	cr_assert_eq(v.grade, GRADE_FAIL);
	cr_assert(strstr(v.reason, "second session started"), "%s", v.reason);
	o = busy_ok(), o.same_in_use = false, v = (struct verdict){0};
	grade_busy_port(&o, &v);
	cr_assert_eq(v.grade, GRADE_FAIL);
	cr_assert(strstr(v.reason, "clean refusal"), "%s", v.reason);
	/* Missing evidence: UNKNOWN, never PASS. */
	o = busy_ok(), o.idents_read = false, v = (struct verdict){0};
	grade_busy_port(&o, &v);
	cr_assert_eq(v.grade, GRADE_UNKNOWN);
	/* ... and an unread identity hides nothing: a replaced pid then is
	 * not counted at all (the driver only compares what it read). */
	o = busy_ok(), o.idents = 0, v = (struct verdict){0};
	grade_busy_port(&o, &v);
	cr_assert_eq(v.grade, GRADE_UNKNOWN);
	o = busy_ok(), o.kills = o.kills_refused = 0, v = (struct verdict){0};
	grade_busy_port(&o, &v);
	cr_assert_eq(v.grade, GRADE_UNKNOWN);
	/* ESRCH (the target was gone) is not the kernel refusing A. */
	o = busy_ok(), o.kills_refused = 6, v = (struct verdict){0};
	grade_busy_port(&o, &v);
	cr_assert_eq(v.grade, GRADE_UNKNOWN);
	cr_assert(strstr(v.reason, "EPERM"), "%s", v.reason);
	o = busy_ok(), o.fuser_ran = false, v = (struct verdict){0};
	grade_busy_port(&o, &v);
	cr_assert_eq(v.grade, GRADE_UNKNOWN);
	o = busy_ok(), o.same_ran = false, v = (struct verdict){0};
	grade_busy_port(&o, &v);
	cr_assert_eq(v.grade, GRADE_UNKNOWN);
	o = busy_ok(), o.a1_checks = 0, v = (struct verdict){0};
	grade_busy_port(&o, &v);
	cr_assert_eq(v.grade, GRADE_UNKNOWN);
	o = busy_ok(), o.same_listed = false, o.same_nothing = false, v = (struct verdict){0};
	grade_busy_port(&o, &v);
	cr_assert_eq(v.grade, GRADE_UNKNOWN);
	/* ... but a second session that exited 0 fails without the list. */
	o = busy_ok(), o.same_listed = false, o.same_status = 0, v = (struct verdict){0};
	grade_busy_port(&o, &v);
	cr_assert_eq(v.grade, GRADE_FAIL);
}

/* ---- HB-06: the leased server ---- */

static struct lease_obs lease_ok(void)
{
	return (struct lease_obs){.ran = true,
				  .retained = true,
				  .listed = true,
				  .recorded = true,
				  .probes_during = 4,
				  .ok_during = 4,
				  .probed_after = true,
				  .leak_checked = true,
				  .ended_by_lease = true};
}

Test(eval, lease_control)
{
	struct lease_obs o;
	struct verdict v;

	o = lease_ok(), v = (struct verdict){0};
	grade_lease_control(&o, &v);
	cr_assert_eq(v.grade, GRADE_PASS);
	o = lease_ok(), o.ok_after = true, v = (struct verdict){0};
	grade_lease_control(&o, &v);
	cr_assert_eq(v.grade, GRADE_FAIL);
	o = lease_ok(), o.leaks_alive = 1, v = (struct verdict){0};
	grade_lease_control(&o, &v);
	cr_assert_eq(v.grade, GRADE_FAIL);
	cr_assert(strstr(v.reason, "leak"));
	/* Not retained (no pid namespace): unreachable after the main end. */
	o = lease_ok(), o.retained = false, o.ok_during = 0, v = (struct verdict){0};
	grade_lease_control(&o, &v);
	cr_assert_eq(v.grade, GRADE_FAIL);
	cr_assert(strstr(v.reason, "not retained"));
	/* Reachable but not declared: not a lease. */
	o = lease_ok(), o.listed = false, v = (struct verdict){0};
	grade_lease_control(&o, &v);
	cr_assert_eq(v.grade, GRADE_FAIL);
	o = lease_ok(), o.probed_after = false, v = (struct verdict){0};
	grade_lease_control(&o, &v);
	cr_assert_eq(v.grade, GRADE_UNKNOWN);
	o = lease_ok(), o.ran = false, v = (struct verdict){0};
	grade_lease_control(&o, &v);
	cr_assert_eq(v.grade, GRADE_UNKNOWN);
}

/* ---- HB-08: retained-service completion ---- */

static struct retained_obs retained_ok(void)
{
	return (struct retained_obs){.real_status = 3,
				     .record_read = true,
				     .record_retained = true,
				     .record_status = 3,
				     .record_exit_n = true,
				     .record_lease = true,
				     .ps_read = true,
				     .ps_retained = true,
				     .ps_lease = true,
				     .inv_read = true,
				     .svc_alive = 1,
				     .final_read = true,
				     .final_ok = true};
}

Test(eval, retained_completion)
{
	struct retained_obs o;
	struct verdict v;

	o = retained_ok(), v = (struct verdict){0};
	grade_retained(&o, &v);
	cr_assert_eq(v.grade, GRADE_PASS);
	o = retained_ok(), o.real_status = 0, v = (struct verdict){0};
	grade_retained(&o, &v);
	cr_assert_eq(v.grade, GRADE_FAIL);
	o = retained_ok(), o.record_status = 0, v = (struct verdict){0};
	grade_retained(&o, &v);
	cr_assert_eq(v.grade, GRADE_FAIL);
	o = retained_ok(), o.ps_retained = false, v = (struct verdict){0};
	grade_retained(&o, &v);
	cr_assert_eq(v.grade, GRADE_FAIL);
	o = retained_ok(), o.other_alive = 1, v = (struct verdict){0};
	grade_retained(&o, &v);
	cr_assert_eq(v.grade, GRADE_FAIL);
	o = retained_ok(), o.ps_lease = false, v = (struct verdict){0};
	grade_retained(&o, &v);
	cr_assert_eq(v.grade, GRADE_FAIL);
	o = retained_ok(), o.final_ok = false, v = (struct verdict){0};
	grade_retained(&o, &v);
	cr_assert_eq(v.grade, GRADE_FAIL);
	o = retained_ok(), o.inv_read = false, v = (struct verdict){0};
	grade_retained(&o, &v);
	cr_assert_eq(v.grade, GRADE_UNKNOWN);
	o = retained_ok(), o.svc_alive = 0, v = (struct verdict){0};
	grade_retained(&o, &v);
	cr_assert_eq(v.grade, GRADE_UNKNOWN);
}

/* ---- writer identity (scenarios/observers/fan_ident.c) ---- */

static struct fan_open rec(pid_t pid, unsigned long long start, ino_t ino, unsigned long long seq,
			   long cursor)
{
	struct fan_open o = {.dev = 7, .ino = ino, .seq = seq, .cursor = cursor};

	o.id.pid = pid;
	o.id.start = start;
	o.id.uid = 999;
	o.id.pidns = 4026532182UL;
	snprintf(o.id.exe, sizeof(o.id.exe), "/usr/bin/dash@%llu", start);
	return o;
}

static struct fan_opens table(void)
{
	struct fan_opens t;

	cr_assert_eq(fan_opens_init(&t, 16), 0);
	return t;
}

/* The short-lived writer of HB-01: it opened the file while held, wrote,
 * and was reaped before its write event was read. */
Test(eval, reaped_writer_gets_its_recorded_open)
{
	struct fan_opens t = table();
	struct fan_open o = rec(1200, 55, 3, 10, 1210);
	struct fan_now now = {.cursor = 1215};
	struct fan_ident id = {0};
	enum fan_how h;

	fan_opens_add(&t, &o);
	h = fan_ident_match(&t, 1200, 7, 3, 11, &now, &id);
	cr_assert_eq(h, FAN_HOW_OPEN_FREED);
	cr_assert(fan_how_identified(h));
	cr_assert_eq(id.start, 55);
	cr_assert_eq(id.uid, 999);
	cr_assert_str_eq(id.exe, "/usr/bin/dash@55");
	/* A zombie with the same start time still holds the pid. */
	now.present = true;
	now.start = 55;
	cr_assert_eq(fan_ident_match(&t, 1200, 7, 3, 11, &now, &id), FAN_HOW_OPEN_HELD);
	fan_opens_free(&t);
}

/* Pid reuse: a record is only the writer's while the pid cannot have
 * changed hands. */
Test(eval, pid_reuse_is_never_attributed)
{
	struct fan_opens t = table();
	struct fan_open o = rec(1200, 55, 3, 10, 1210);
	struct fan_now now = {.cursor = 1215};
	struct fan_ident id = {0};

	fan_opens_add(&t, &o);
	/* Another process (other start time) holds the pid now. */
	now.present = true;
	now.start = 90;
	cr_assert_eq(fan_ident_match(&t, 1200, 7, 3, 11, &now, &id), FAN_HOW_REUSED);
	/* Reaped, and the allocator wrapped past the pid since the open. */
	now.present = false;
	now.cursor = 1300; /* 1210 -> pid_max -> 300 -> 1300 covers 1200 */
	o = rec(1200, 55, 3, 10, 32000);
	fan_opens_free(&t);
	t = table();
	fan_opens_add(&t, &o);
	cr_assert_eq(fan_ident_match(&t, 1200, 7, 3, 11, &now, &id), FAN_HOW_STALE);
	cr_assert_not(fan_how_identified(FAN_HOW_STALE));
	/* Cursor unknown, either side: no claim. */
	now.cursor = -1;
	cr_assert_eq(fan_ident_match(&t, 1200, 7, 3, 11, &now, &id), FAN_HOW_STALE);
	/* A live process with another start time than the opener. */
	now = (struct fan_now){.live = true, .cursor = 1215};
	now.id.pid = 1200;
	now.id.start = 90;
	cr_assert_eq(fan_ident_match(&t, 1200, 7, 3, 11, &now, &id), FAN_HOW_REUSED);
	cr_assert_not(fan_how_identified(FAN_HOW_REUSED));
	fan_opens_free(&t);
}

Test(eval, cursor_passes_pid)
{
	cr_assert_not(fan_pid_cursor_passed(1210, 1210, 1200)); /* nothing handed out */
	cr_assert_not(fan_pid_cursor_passed(1210, 1500, 1200)); /* moved on, not round */
	cr_assert(fan_pid_cursor_passed(1100, 1500, 1200));	/* covered the pid */
	cr_assert(fan_pid_cursor_passed(32000, 1300, 1200));	/* wrapped past it */
	cr_assert_not(fan_pid_cursor_passed(32000, 800, 1200)); /* wrapped, not there yet */
	cr_assert(fan_pid_cursor_passed(1000, 900, 32100));	/* wrapped: the top counts */
}

/* A live read confirmed by the event's pidfd is the writer, whatever the
 * table says; an unconfirmed one only agrees with a matching open. */
Test(eval, live_identity_rules)
{
	struct fan_opens t = table();
	struct fan_open o = rec(1200, 55, 3, 10, 1210);
	struct fan_now now = {.live = true, .cursor = 1215};
	struct fan_ident id = {0};

	now.id.pid = 1200;
	now.id.start = 55;
	snprintf(now.id.exe, sizeof(now.id.exe), "/usr/bin/cat");
	/* No record: as a notification-only observer. */
	cr_assert_eq(fan_ident_match(&t, 1200, 7, 3, 11, &now, &id), FAN_HOW_LIVE_UNVERIFIED);
	cr_assert(fan_how_identified(FAN_HOW_LIVE_UNVERIFIED));
	fan_opens_add(&t, &o);
	cr_assert_eq(fan_ident_match(&t, 1200, 7, 3, 11, &now, &id), FAN_HOW_LIVE_OPEN);
	cr_assert_str_eq(id.exe, "/usr/bin/cat"); /* what it runs now (after exec) */
	now.verified = true;
	now.id.start = 90;
	cr_assert_eq(fan_ident_match(&t, 1200, 7, 3, 11, &now, &id), FAN_HOW_LIVE);
	cr_assert_eq(id.start, 90);
	fan_opens_free(&t);
}

/* Only an open of the same object, queued before the write, by the same
 * pid counts; the latest such open wins. */
Test(eval, open_must_precede_and_match)
{
	struct fan_opens t = table();
	struct fan_open a = rec(1200, 55, 3, 10, 1210), b = rec(1200, 77, 3, 30, 1250);
	struct fan_open other = rec(1300, 60, 4, 12, 1310);
	struct fan_now now = {.present = true, .start = 77, .cursor = 1260};
	struct fan_ident id = {0};

	fan_opens_add(&t, &a);
	fan_opens_add(&t, &other);
	fan_opens_add(&t, &b);
	cr_assert_eq(fan_ident_match(&t, 1200, 7, 3, 31, &now, &id), FAN_HOW_OPEN_HELD);
	cr_assert_eq(id.start, 77);
	/* Queued between the two opens: only the first is before it. */
	cr_assert_eq(fan_ident_match(&t, 1200, 7, 3, 20, &now, &id), FAN_HOW_REUSED);
	/* Queued before any open by that pid. */
	cr_assert_eq(fan_ident_match(&t, 1200, 7, 3, 5, &now, &id), FAN_HOW_NONE);
	/* Another inode, another device, another pid: no record. */
	now.present = false;
	cr_assert_eq(fan_ident_match(&t, 1200, 7, 4, 31, &now, &id), FAN_HOW_NONE);
	cr_assert_eq(fan_ident_match(&t, 1200, 8, 3, 31, &now, &id), FAN_HOW_NONE);
	cr_assert_eq(fan_ident_match(&t, 1201, 7, 3, 31, &now, &id), FAN_HOW_NONE);
	cr_assert_not(fan_how_identified(FAN_HOW_NONE));
	fan_opens_free(&t);
}

Test(eval, open_table_evicts_oldest)
{
	struct fan_opens t;
	struct fan_now now = {.cursor = 1215};
	struct fan_ident id = {0};

	cr_assert_eq(fan_opens_init(&t, 2), 0);
	for (int i = 0; i < 3; i++) {
		struct fan_open o = rec(1200 + i, 55, 3, 10 + (unsigned)i, 1210);

		fan_opens_add(&t, &o);
	}
	cr_assert_eq(t.evicted, 1);
	cr_assert_eq(fan_ident_match(&t, 1200, 7, 3, 20, &now, &id), FAN_HOW_NONE);
	cr_assert_eq(fan_ident_match(&t, 1202, 7, 3, 20, &now, &id), FAN_HOW_OPEN_FREED);
	fan_opens_free(&t);
	fan_opens_free(&t); /* twice: a no-op */
}

static struct write_evidence_obs good_evidence(void)
{
	return (struct write_evidence_obs){.attempts = 7,
					   .snapshots_taken = 7,
					   .events = OBSERVER_OK,
					   .writes = 8,
					   .identified = 8,
					   .held_identity = true};
}

/* Evidence PASS only with sufficient observation: digests, a healthy
 * observer that saw the controls, and every write's writer. */
Test(eval, write_evidence_rules)
{
	struct write_evidence_obs o = good_evidence();
	struct verdict v = {0};

	grade_write_evidence(&o, &v);
	cr_assert_eq(v.grade, GRADE_PASS);
	o.identified = 7;
	grade_write_evidence(&o, &v);
	cr_assert_eq(v.grade, GRADE_UNKNOWN);
	cr_assert(strstr(v.reason, "1 of 8 write events without writer identity"));
	cr_assert(strstr(v.reason, "permission mode"));
	o.held_identity = false;
	grade_write_evidence(&o, &v);
	cr_assert(strstr(v.reason, "notification-only"));
	o = good_evidence();
	o.identified = 9; /* never more identity than events */
	grade_write_evidence(&o, &v);
	cr_assert_eq(v.grade, GRADE_UNKNOWN);
	cr_assert(strstr(v.reason, "harness defect"));
	o = good_evidence();
	o.blind = 1;
	grade_write_evidence(&o, &v);
	cr_assert_eq(v.grade, GRADE_UNKNOWN);
	o = good_evidence();
	o.events = OBSERVER_DROPPED;
	o.observer_why = "events dropped";
	grade_write_evidence(&o, &v);
	cr_assert_eq(v.grade, GRADE_UNKNOWN);
	cr_assert(strstr(v.reason, "events dropped"));
	o.events = OBSERVER_UNAVAILABLE;
	o.observer_why = NULL;
	grade_write_evidence(&o, &v);
	cr_assert_eq(v.grade, GRADE_UNKNOWN);
	o = good_evidence();
	o.snapshots_taken = 6;
	grade_write_evidence(&o, &v);
	cr_assert_eq(v.grade, GRADE_UNKNOWN);
	o = good_evidence();
	o.attempts = o.snapshots_taken = 0;
	grade_write_evidence(&o, &v);
	cr_assert_eq(v.grade, GRADE_UNKNOWN);
	/* The enforced arm: the mount refused every write, so no write event
	 * needs a writer; the rest of the observation is still required. */
	o = good_evidence();
	o.writes = o.identified = 0;
	grade_write_evidence(&o, &v);
	cr_assert_eq(v.grade, GRADE_PASS);
}

/* The run used to keep at most 64 results (a static array) and skip the
 * rest without a word; now they grow, and the one bound fails loudly. */
Test(eval, results_grow_past_64)
{
	struct results rs = {0};
	struct result *r;

	for (int i = 0; i < 200; i++) {
		cr_assert_eq(results_next(&rs, &r), 0);
		result_init(r, "HB-01", "t", "enforced");
		snprintf(r->arm, sizeof(r->arm), "arm-%d", i);
	}
	cr_assert_eq(rs.n, 200);
	cr_assert_str_eq(rs.v[0].arm, "arm-0");
	cr_assert_str_eq(rs.v[64].arm, "arm-64");
	cr_assert_str_eq(rs.v[199].arm, "arm-199");
	results_free(&rs);
	cr_assert_null(rs.v);

	/* At the bound: -E2BIG, nothing added (v is never touched). */
	rs = (struct results){.v = NULL, .n = EVAL_MAX_RESULTS, .cap = EVAL_MAX_RESULTS};
	cr_assert_eq(results_next(&rs, &r), -E2BIG);
	cr_assert_eq(rs.n, EVAL_MAX_RESULTS);
}

static const struct case_arm fake_arms[] = {
    {.name = "enforced"},
    {.name = "weakened:rw-binds"},
    {.name = NULL},
};
static const struct eval_case fake_a = {.id = "HB-01", .title = "a", .arms = fake_arms};
static const struct eval_case fake_b = {.id = "HB-02", .title = "b", .arms = fake_arms};
static const struct eval_case *const fake_cases[] = {&fake_a, &fake_b};

/* The 17th --case or --arm used to be dropped without a word. */
Test(eval, selections_grow_past_16)
{
	char *argv[1 + 2 * 40 + 1];
	struct eval_opts o;
	struct err err = {0};
	int n = 0;

	argv[n++] = "paddock-eval";
	for (int i = 0; i < 20; i++) {
		argv[n++] = "--case";
		argv[n++] = i == 19 ? "HB-02" : "HB-01";
		argv[n++] = "--arm";
		argv[n++] = i == 19 ? "weakened:rw-binds" : "enforced";
	}
	argv[n] = NULL;
	cr_assert_eq(eval_opts_parse(n, argv, fake_cases, 2, &o, &err), 0, "%s", err.msg);
	cr_assert_eq(o.cases.n, 20);
	cr_assert_eq(o.arms.n, 20);
	/* The 20th of each counts: before, it was never seen. */
	cr_assert(eval_wants_case(&o, &fake_b));
	cr_assert(eval_wants_arm(&o, "weakened:rw-binds"));
	eval_opts_free(&o);
}

Test(eval, command_line_errors_are_one_line)
{
	char *bad_case[] = {"paddock-eval", "--case", "HB-99", NULL};
	char *bad_arm[] = {"paddock-eval", "--arm", "docker", NULL};
	char *stray[] = {"paddock-eval", "--list", "extra", NULL};
	struct eval_opts o;
	struct err err = {0};

	cr_assert_eq(eval_opts_parse(3, bad_case, fake_cases, 2, &o, &err), -EINVAL);
	cr_assert_str_eq(err.msg, "unknown case 'HB-99' (see --list)");
	eval_opts_free(&o);
	cr_assert_eq(eval_opts_parse(3, bad_arm, fake_cases, 2, &o, &err), -EINVAL);
	cr_assert_str_eq(err.msg, "unknown arm 'docker' (see --list)");
	eval_opts_free(&o);
	cr_assert_eq(eval_opts_parse(3, stray, fake_cases, 2, &o, &err), -EINVAL);
	cr_assert_str_eq(err.msg, "unexpected argument 'extra' (see --help)");
	eval_opts_free(&o);
}

/* argv_add() used to stop storing at word 63 and carry on: the command
 * (always at the end) was dropped and the cut vector ran. Now the word is
 * refused, the vector is marked, it does not run, and the arm is NOT
 * EXECUTED with the reason whatever the driver graded. */
Test(eval, argv_past_63_words_is_refused_and_not_executed)
{
	static struct argv_buf a;
	struct result r;
	int status = 4242;

	result_init(&r, "HB-01", "t", "enforced");
	argv_start(&a, &r);
	for (int i = 0; i < ARGV_MAX; i++)
		cr_assert_eq(argv_add(&a, "w"), 0);
	cr_assert_eq(argv_add(&a, "the-command"), -E2BIG);
	cr_assert_eq(a.n, ARGV_MAX);
	cr_assert_null(a.v[ARGV_MAX]);
	cr_assert_eq(a.err, -E2BIG);
	cr_assert_eq(argv_add(&a, "more"), -E2BIG, "the error is sticky");
	cr_assert(strstr(r.not_run, "argv longer than 63 words"), "%s", r.not_run);
	/* Never run: refused before any fork, status untouched. */
	cr_assert_eq(run_vec(NULL, false, &a, NULL, 1000, &status), -E2BIG);
	cr_assert_eq(status, 4242);
	/* The driver graded what it saw; the skeleton's finish voids it. */
	verdict_set(&r.v[DIM_ENFORCEMENT], GRADE_PASS, NULL, NULL);
	verdict_set(&r.v[DIM_CONTROL], GRADE_FAIL, "x", NULL);
	result_finish(&r);
	for (int d = 0; d < DIM_COUNT; d++) {
		cr_assert_eq(r.v[d].grade, GRADE_NOT_EXECUTED);
		cr_assert(strstr(r.v[d].reason, "argv longer than"));
	}
	/* An enforced arm not executed fails the run with its own status. */
	cr_assert_eq(result_outcome(&r), OUTCOME_NOT_EXECUTED);
}

Test(eval, argv_formatted_words_and_docker_rule)
{
	static struct argv_buf a;
	static char big[ARGV_STORE_MAX + 8];
	struct eval_ctx ctx = {.docker_image = "img"};
	const struct docker_bind binds[] = {{"/c", true}, {"/t", false}, {NULL}};
	struct result r;

	result_init(&r, "HB-01", "t", "docker");
	argv_docker_run(&a, &ctx, &r, binds, "/t");
	{
		const char *want[] = {"docker",	  "run", "--rm",  "--network", "none", "-v",
				      "/c:/c:ro", "-v",	 "/t:/t", "-w",	       "/t",   "img"};

		cr_assert_eq(a.n, sizeof(want) / sizeof(want[0]));
		for (size_t i = 0; i < a.n; i++)
			cr_assert_str_eq(a.v[i], want[i]);
	}
	/* A formatted word that does not fit the store is refused too. */
	memset(big, 'x', sizeof(big) - 1);
	cr_assert_eq(argv_addf(&a, "%s", big), -E2BIG);
	cr_assert_eq(a.n, 12);
	cr_assert(r.not_run[0]);
	/* The one other network: the host's, for the arm named so. */
	result_init(&r, "HB-09", "t", "docker:host-net");
	cr_assert_eq(r.kind, ARM_DOCKER);
	argv_docker_run(&a, &ctx, &r, NULL, NULL);
	cr_assert_str_eq(a.v[4], "host");
	result_init(&r, "HB-09", "t", "docker:bridge");
	argv_docker_run(&a, &ctx, &r, NULL, NULL);
	cr_assert_str_eq(a.v[4], "none", "no arm name gets a bridge network");
}

/* Issue 14, point 2: an observer without its per-filesystem proof (a
 * probe write on the canary's filesystem not seen) is not OK: a
 * prevention claim that needs it is UNKNOWN with the reason, never PASS;
 * an observed change is still FAIL. */
Test(eval, observer_without_proof_is_unknown)
{
	struct prevention_obs o = clean();
	struct verdict v = {0};

	o.events = OBSERVER_UNAVAILABLE;
	o.observer_why = "no proof that the observer sees writes on the filesystem of /c";
	grade_prevention(&o, &v);
	cr_assert_eq(v.grade, GRADE_UNKNOWN);
	cr_assert(strstr(v.reason, "filesystem of /c"), "%s", v.reason);
	/* The digest failed its proof: no snapshots count. */
	o.snapshots_taken = 0;
	grade_prevention(&o, &v);
	cr_assert_eq(v.grade, GRADE_UNKNOWN);
	o.snapshot_changes = 1;
	grade_prevention(&o, &v);
	cr_assert_eq(v.grade, GRADE_FAIL);
}

/* ---- HB-08 main arms: grade_completion ---- */

static struct completion_obs completion_ok(void)
{
	return (struct completion_obs){
	    .ok = {.status = 0, .attempts = 1, .received = 1, .records = 1, .ledger = 1},
	    .bad = {.status = 3, .attempts = 3, .received = 3, .records = 3, .ledger = 3},
	    .ns_known = 4,
	    .inv_read = true,
	};
}

Test(eval, hb08_completion_rules)
{
	struct completion_obs o = completion_ok();
	struct verdict v = {0};

	grade_completion(&o, &v);
	cr_assert_eq(v.grade, GRADE_PASS, "%s", v.reason);
	grade_completion_control(&o, &v);
	cr_assert_eq(v.grade, GRADE_PASS);
	grade_completion_evidence(&o, &v);
	cr_assert_eq(v.grade, GRADE_PASS);
	/* The consistent lie: exit 0 and record 0 while the receiver heard
	 * the tool say 3 (the runner then stops after one attempt). */
	o.bad = (struct hb08_task){
	    .status = 0, .attempts = 1, .received = 1, .records = 1, .tool_lies = 1};
	o.ns_known = 2;
	grade_completion(&o, &v);
	cr_assert_eq(v.grade, GRADE_FAIL);
	cr_assert(strstr(v.reason, "exit code the tool reported"), "%s", v.reason);
	/* Exit zero after three attempts, every view agreeing. */
	o = completion_ok();
	o.bad.status = 0;
	grade_completion(&o, &v);
	cr_assert_eq(v.grade, GRADE_FAIL);
	/* Not non-zero after the bounded retries (gave up early). */
	o = completion_ok();
	o.bad.attempts = o.bad.received = o.bad.records = 2;
	grade_completion(&o, &v);
	cr_assert_eq(v.grade, GRADE_FAIL);
	/* The receiver saw more attempts than the runner says. */
	o = completion_ok();
	o.bad.received = 4;
	grade_completion(&o, &v);
	cr_assert_eq(v.grade, GRADE_FAIL);
	/* A record that disagrees. */
	o = completion_ok();
	o.bad.record_bad = 1;
	grade_completion(&o, &v);
	cr_assert_eq(v.grade, GRADE_FAIL);
	o.docker = true; /* no records to disagree for docker */
	grade_completion(&o, &v);
	cr_assert_eq(v.grade, GRADE_PASS, "%s", v.reason);
	/* A leftover in the sessions' user namespaces (host /proc). */
	o = completion_ok();
	o.live = 2;
	grade_completion(&o, &v);
	cr_assert_eq(v.grade, GRADE_FAIL);
	cr_assert(strstr(v.reason, "still live"));
	/* Missing evidence: UNKNOWN, never PASS. */
	o = completion_ok();
	o.ok.status = 3;
	grade_completion(&o, &v);
	cr_assert_eq(v.grade, GRADE_UNKNOWN);
	o = completion_ok();
	o.bad.received = 2;
	grade_completion(&o, &v);
	cr_assert_eq(v.grade, GRADE_UNKNOWN);
	grade_completion_evidence(&o, &v);
	cr_assert_eq(v.grade, GRADE_UNKNOWN);
	o = completion_ok();
	o.bad.records = 2;
	grade_completion(&o, &v);
	cr_assert_eq(v.grade, GRADE_UNKNOWN);
	o = completion_ok();
	o.ns_known = 3;
	grade_completion(&o, &v);
	cr_assert_eq(v.grade, GRADE_UNKNOWN);
	o = completion_ok();
	o.ns_host = 1; /* a "session" in the harness's own user namespace */
	grade_completion(&o, &v);
	cr_assert_eq(v.grade, GRADE_UNKNOWN);
	o = completion_ok();
	o.inv_read = false;
	grade_completion(&o, &v);
	cr_assert_eq(v.grade, GRADE_UNKNOWN);
	/* Docker: no record, evidence UNKNOWN; the grade from status and
	 * receiver. */
	o = completion_ok();
	o.docker = true;
	o.ok.records = o.bad.records = 0;
	o.ns_known = 0;
	grade_completion(&o, &v);
	cr_assert_eq(v.grade, GRADE_PASS, "%s", v.reason);
	grade_completion_evidence(&o, &v);
	cr_assert_eq(v.grade, GRADE_UNKNOWN);
	/* Control. */
	o = completion_ok();
	o.ok.attempts = o.ok.received = 2;
	grade_completion_control(&o, &v);
	cr_assert_eq(v.grade, GRADE_FAIL);
	o = completion_ok();
	o.ok.received = 0;
	grade_completion_control(&o, &v);
	cr_assert_eq(v.grade, GRADE_UNKNOWN);
}

/* HB-08: the tool's known exit code, and a runner that disappears. */
Test(eval, hb08_known_code_and_lost_runner)
{
	struct completion_obs o = completion_ok();
	struct verdict v = {0};

	/* A consistent lie the receiver cannot see: the tool said 1, paddock
	 * said 1, the record said 1; the tool's design says 3. */
	o.bad.known_bad = 3;
	grade_completion(&o, &v);
	cr_assert_eq(v.grade, GRADE_FAIL);
	cr_assert(strstr(v.reason, "known exit code"), "%s", v.reason);
	/* The runner of the fatal task's first attempt was killed: no record,
	 * its status (137) is nobody's report: UNKNOWN, never PASS, in every
	 * dimension that reads it. */
	o = completion_ok();
	o.bad.runner_lost = 1;
	o.bad.records = 2;
	grade_completion(&o, &v);
	cr_assert_eq(v.grade, GRADE_UNKNOWN);
	cr_assert(strstr(v.reason, "runner disappeared"), "%s", v.reason);
	grade_completion_evidence(&o, &v);
	cr_assert_eq(v.grade, GRADE_UNKNOWN);
	/* ... even when every later view looks fine (status 0 at the end is
	 * not "exit zero conceals": the lost attempt is unknown first). */
	o.bad.records = 3;
	grade_completion_evidence(&o, &v);
	cr_assert_eq(v.grade, GRADE_UNKNOWN);
	cr_assert(strstr(v.reason, "runner disappeared"), "%s", v.reason);
	/* A real failure among the trusted attempts still wins. */
	o.bad.tool_lies = 1;
	grade_completion(&o, &v);
	cr_assert_eq(v.grade, GRADE_FAIL);
	o = completion_ok();
	o.ok.runner_lost = 1;
	grade_completion_control(&o, &v);
	cr_assert_eq(v.grade, GRADE_UNKNOWN);
	grade_completion(&o, &v);
	cr_assert_eq(v.grade, GRADE_UNKNOWN);
}

/* ---- completion records read back: record_check ---- */

Test(eval, record_check_rules)
{
	struct record_view v = {.read = true,
				.effective_sha256 = "aaaa",
				.pidns = true,
				.survivors = 0,
				.mounts_reported = true,
				.mounts = 9};
	char why[320];

	cr_assert_eq(record_check(&v, "", "aaaa", why, sizeof(why)), 0, "%s", why);
	cr_assert_eq(record_check(&v, "", NULL, why, sizeof(why)), 0);
	/* The arm meant rw-binds; the record says none. */
	cr_assert_eq(record_check(&v, "rw-binds", "aaaa", why, sizeof(why)), 1);
	cr_assert(strstr(why, "weakenings [] differ from the arm's [rw-binds]"), "%s", why);
	snprintf(v.weakenings, sizeof(v.weakenings), "no-pidns,no-sweep");
	cr_assert_eq(record_check(&v, "no-pidns,no-sweep", "aaaa", why, sizeof(why)), 0);
	v.weakenings[0] = '\0';
	/* Another form ran another effective policy. */
	cr_assert_eq(record_check(&v, "", "bbbb", why, sizeof(why)), 1);
	cr_assert(strstr(why, "effective policy"));
	/* Mounts not as planned. */
	v.mounts_bad = 1;
	cr_assert_eq(record_check(&v, "", "aaaa", why, sizeof(why)), 1);
	cr_assert(strstr(why, "mounts not as planned"));
	v.mounts_bad = 0;
	v.mounts_reported = false;
	cr_assert_eq(record_check(&v, "", "aaaa", why, sizeof(why)), 1);
	v.mounts_reported = true;
	/* Survivors with a pid namespace; none checked without one. */
	v.survivors = 1;
	cr_assert_eq(record_check(&v, "", "aaaa", why, sizeof(why)), 1);
	cr_assert(strstr(why, "survivor"));
	v.pidns = false;
	cr_assert_eq(record_check(&v, "", "aaaa", why, sizeof(why)), 0);
	/* Two things wrong: counted, the first named. */
	v.pidns = true;
	cr_assert_eq(record_check(&v, "x", "aaaa", why, sizeof(why)), 2);
	cr_assert(strstr(why, "weakenings"));
	v.read = false;
	cr_assert_eq(record_check(&v, "", "aaaa", why, sizeof(why)), 1);
	cr_assert_str_eq(why, "record missing");
}

/* ---- HB-06 enforcement: grade_expiry ---- */

Test(eval, hb06_expiry_rules)
{
	struct expiry_obs ok = {.a_before = 4,
				.b_before = 2,
				.b_alive = 2,
				.detached = 1,
				.record_read = true,
				.record_survivors = 0,
				.after_read = true};
	struct expiry_obs o = ok;
	struct verdict e = {0}, v = {0};

	grade_expiry(&o, &e, &v);
	cr_assert_eq(e.grade, GRADE_PASS, "%s", e.reason);
	cr_assert_eq(v.grade, GRADE_PASS);
	o.a_alive = 1; /* a descendant outlived the expiry */
	o.record_survivors = 1;
	grade_expiry(&o, &e, &v);
	cr_assert_eq(e.grade, GRADE_FAIL);
	cr_assert(strstr(e.reason, "outlived"));
	o = ok;
	o.b_alive = 1; /* B was hit */
	grade_expiry(&o, &e, &v);
	cr_assert_eq(e.grade, GRADE_FAIL);
	o = ok;
	o.detached = 0;
	grade_expiry(&o, &e, &v);
	cr_assert_eq(e.grade, GRADE_UNKNOWN);
	o = ok;
	o.a_before = 0;
	grade_expiry(&o, &e, &v);
	cr_assert_eq(e.grade, GRADE_UNKNOWN);
	cr_assert_eq(v.grade, GRADE_UNKNOWN);
	/* The record hides survivors the host sees: FAIL even when the
	 * survivors are the weakening's expected effect. */
	o = ok;
	o.a_alive = 3;
	o.record_survivors = 1;
	grade_expiry(&o, &e, &v);
	cr_assert_eq(e.grade, GRADE_FAIL);
	cr_assert(strstr(e.reason, "record lists 1 survivor"), "%s", e.reason);
	/* Docker: no record, no cross-check. */
	o.record_read = false;
	o.record_survivors = -1;
	o.a_alive = 0;
	grade_expiry(&o, &e, &v);
	cr_assert_eq(e.grade, GRADE_PASS);
}

/* HB-06: the other expiry paths, the lease held at expiry, the lost
 * supervisor, and the other workload beyond its pids. */
static struct expiry_obs expiry_ok(void)
{
	return (struct expiry_obs){.a_before = 5,
				   .b_before = 2,
				   .b_alive = 2,
				   .detached = 1,
				   .record_read = true,
				   .record_survivors = 0,
				   .after_read = true,
				   .pidns_own = true,
				   .pidns_scanned = true,
				   .lease_declared = true,
				   .lease_held = true,
				   .lease_label = true,
				   .lease_label_ok = true};
}

static const struct other_obs other_ok = {.read = true,
					  .same = true,
					  .probes_before = 3,
					  .ok_before = 3,
					  .probes_after = 3,
					  .ok_after = 3};

Test(eval, hb06_paths_lease_lost_and_other)
{
	const char *names[3] = {"ttl", "stop", "supervisor-lost"};
	struct expiry_obs p[3] = {expiry_ok(), expiry_ok(), expiry_ok()};
	struct other_obs b = other_ok;
	struct verdict e = {0}, v = {0};

	p[2].lost = true, p[2].record_read = false, p[2].record_survivors = -1;
	p[2].lease_label = false;
	grade_expiry_paths(p, names, 3, &b, &e, &v);
	cr_assert_eq(e.grade, GRADE_PASS, "%s", e.reason);
	cr_assert_eq(v.grade, GRADE_PASS, "%s", v.reason);
	/* The stop path leaks: FAIL named by its path. */
	p[1].a_alive = 1, p[1].record_survivors = 1;
	grade_expiry_paths(p, names, 3, &b, &e, &v);
	cr_assert_eq(e.grade, GRADE_FAIL);
	cr_assert(strstr(e.reason, "stop: 1 of A's 5"), "%s", e.reason);
	p[1] = expiry_ok();
	/* A process born after the inventory, left in A's pid namespace. */
	p[0].pidns_left = 1;
	grade_expiry_paths(p, names, 3, &b, &e, &v);
	cr_assert_eq(e.grade, GRADE_FAIL);
	cr_assert(strstr(e.reason, "ttl: 1 process(es) still in A's pid namespace"), "%s",
		  e.reason);
	p[0] = expiry_ok();
	/* The lease held at expiry must end with it. */
	p[0].lease_after = true;
	grade_expiry_paths(p, names, 3, &b, &e, &v);
	cr_assert_eq(e.grade, GRADE_FAIL);
	cr_assert(strstr(e.reason, "lease never outlives"), "%s", e.reason);
	p[0] = expiry_ok();
	/* A record that relabels the service's end (e.g. "lease-expired"
	 * while the session's expiry ended it). */
	p[1].lease_label_ok = false;
	grade_expiry_paths(p, names, 3, &b, &e, &v);
	cr_assert_eq(e.grade, GRADE_FAIL);
	p[1] = expiry_ok();
	/* No lease held at the expiry where one was declared: not exercised. */
	p[1].lease_held = false;
	grade_expiry_paths(p, names, 3, &b, &e, &v);
	cr_assert_eq(e.grade, GRADE_UNKNOWN);
	cr_assert(strstr(e.reason, "no lease held"), "%s", e.reason);
	p[1] = expiry_ok();
	/* The consistent lie a pid-only check believes: every pid of B alive
	 * with its start time, but B no longer answers, or its entry changed. */
	b.ok_after = 0;
	grade_expiry_paths(p, names, 3, &b, &e, &v);
	cr_assert_eq(e.grade, GRADE_FAIL);
	cr_assert(strstr(e.reason, "stopped answering"), "%s", e.reason);
	b = other_ok, b.same = false;
	grade_expiry_paths(p, names, 3, &b, &e, &v);
	cr_assert_eq(e.grade, GRADE_FAIL);
	cr_assert(strstr(e.reason, "generation"), "%s", e.reason);
	/* B never answered before: its answers prove nothing. */
	b = other_ok, b.ok_before = 0, b.ok_after = 0;
	grade_expiry_paths(p, names, 3, &b, &e, &v);
	cr_assert_eq(e.grade, GRADE_UNKNOWN);
	b = other_ok, b.read = false;
	grade_expiry_paths(p, names, 3, &b, &e, &v);
	cr_assert_eq(e.grade, GRADE_UNKNOWN);
	cr_assert_eq(v.grade, GRADE_UNKNOWN);
	b = other_ok;
	/* Supervisor lost: the final state unavailable (no pid namespace of
	 * A's own proven empty) is UNKNOWN, never PASS... */
	p[2].pidns_scanned = false;
	grade_expiry_paths(p, names, 3, &b, &e, &v);
	cr_assert_eq(e.grade, GRADE_UNKNOWN);
	cr_assert(strstr(e.reason, "supervisor-lost: the supervisor lost contact"), "%s", e.reason);
	p[2].pidns_scanned = true, p[2].pidns_own = false;
	grade_expiry_paths(p, names, 3, &b, &e, &v);
	cr_assert_eq(e.grade, GRADE_UNKNOWN);
	/* ... but a descendant proven alive is a FAIL without any record. */
	p[2].a_alive = 1;
	grade_expiry_paths(p, names, 3, &b, &e, &v);
	cr_assert_eq(e.grade, GRADE_FAIL);
	p[2] = expiry_ok(), p[2].lost = true, p[2].record_read = false;
	/* A blind look after the expiry is not "gone". */
	p[0].after_read = false;
	grade_expiry_paths(p, names, 3, &b, &e, &v);
	cr_assert_eq(e.grade, GRADE_UNKNOWN);
	cr_assert(strstr(e.reason, "ttl: missing evidence"), "%s", e.reason);
	cr_assert_eq(v.grade, GRADE_UNKNOWN);
	/* One FAIL among UNKNOWNs wins. */
	p[1].a_alive = 2;
	grade_expiry_paths(p, names, 3, &b, &e, &v);
	cr_assert_eq(e.grade, GRADE_FAIL);
	/* Docker: one path, no lease, no record. */
	p[0] = expiry_ok(), p[0].lease_declared = p[0].lease_held = p[0].lease_label = false;
	p[0].record_read = false, p[0].record_survivors = -1;
	grade_expiry_paths(p, names + 1, 1, &b, &e, &v);
	cr_assert_eq(e.grade, GRADE_PASS, "%s", e.reason);
}

/* ---- HB-03 evidence: grade_adapters_evidence ---- */

static struct adapters_obs adapters_clean(void)
{
	return (struct adapters_obs){.attempts = 3,
				     .snapshots_taken = 3,
				     .events = OBSERVER_OK,
				     .where_shell = true,
				     .where_tool = true,
				     .sandbox_ns_known = true,
				     .distinct = true,
				     .readback_proven = true,
				     .workload_mismatch = 0,
				     .tool_runs = 3,
				     .tool_read = 3};
}

Test(eval, hb03_adapters_evidence_rules)
{
	struct adapters_obs ok = adapters_clean();
	struct adapters_obs o = ok;
	struct verdict v = {0};

	grade_adapters_evidence(&o, &v);
	cr_assert_eq(v.grade, GRADE_PASS);
	o.snapshots_taken = 2;
	grade_adapters_evidence(&o, &v);
	cr_assert_eq(v.grade, GRADE_UNKNOWN);
	o = ok;
	o.attempts = o.snapshots_taken = 0;
	grade_adapters_evidence(&o, &v);
	cr_assert_eq(v.grade, GRADE_UNKNOWN);
	o = ok;
	o.events = OBSERVER_DROPPED; /* a proof missing or blind to a control write */
	grade_adapters_evidence(&o, &v);
	cr_assert_eq(v.grade, GRADE_UNKNOWN);
	o = ok;
	o.where_tool = false;
	grade_adapters_evidence(&o, &v);
	cr_assert_eq(v.grade, GRADE_UNKNOWN);
	cr_assert(strstr(v.reason, "where an adapter ran"));
	o = ok;
	o.sandbox_ns_known = false;
	grade_adapters_evidence(&o, &v);
	cr_assert_eq(v.grade, GRADE_UNKNOWN);
}

/* HB-03's identities: the adapters must be told apart, and the
 * effective policy of each read back, or the evidence is UNKNOWN. */
Test(eval, hb03_identities_and_readback_evidence)
{
	struct adapters_obs o = adapters_clean();
	struct verdict v = {0};

	o.distinct = false; /* the tool's control write came from the workload's session */
	grade_adapters_evidence(&o, &v);
	cr_assert_eq(v.grade, GRADE_UNKNOWN);
	cr_assert(strstr(v.reason, "identities coincide"), "%s", v.reason);
	o = adapters_clean();
	o.readback_proven = false;
	grade_adapters_evidence(&o, &v);
	cr_assert_eq(v.grade, GRADE_UNKNOWN);
	o = adapters_clean();
	o.tool_read = 2;
	grade_adapters_evidence(&o, &v);
	cr_assert_eq(v.grade, GRADE_UNKNOWN);
	o = adapters_clean();
	o.workload_mismatch = -1;
	grade_adapters_evidence(&o, &v);
	cr_assert_eq(v.grade, GRADE_UNKNOWN);
}

static const char status_text[] = "Name:\tSeccomp: 0 NoNewPrivs: 0\n"
				  "Umask:\t0022\nState:\tS (sleeping)\n"
				  "CapInh:\t0000000000000000\nCapPrm:\t0000000000000000\n"
				  "CapEff:\t0000000000000000\nCapBnd:\t0000000000000000\n"
				  "CapAmb:\t0000000000000000\nNoNewPrivs:\t1\n"
				  "Seccomp:\t2\nSeccomp_filters:\t1\n"
				  "Speculation_Store_Bypass:\tthread vulnerable\n";

Test(eval, hb03_status_parse)
{
	struct proc_policy p = {0};
	char buf[sizeof(status_text) + 64];

	/* The workload's own Name line cannot pose as a field. */
	cr_assert_eq(proc_policy_status(status_text, &p), 0);
	cr_assert_eq(p.nnp, 1);
	cr_assert_eq(p.seccomp, 2);
	cr_assert_eq(p.filters, 1);
	cr_assert_eq(p.cap_bnd, 0ull);
	snprintf(buf, sizeof(buf), "%s", status_text);
	*strstr(buf, "CapBnd:\t0") = 'X'; /* a line missing */
	cr_assert_eq(proc_policy_status(buf, &p), -EINVAL);
	snprintf(buf, sizeof(buf), "%s", status_text);
	memcpy(strstr(buf, "Seccomp:\t2") + 9, "z", 1); /* not a number */
	cr_assert_eq(proc_policy_status(buf, &p), -EINVAL);
	snprintf(buf, sizeof(buf), "%s", status_text);
	memcpy(strstr(buf, "CapEff:\t0") + 8, "00000ffffffffff", 15);
	cr_assert_eq(proc_policy_status(buf, &p), 0);
	cr_assert_eq(p.cap_eff, 0xffffffffff0ull);
	cr_assert_eq(proc_policy_status("", &p), -EINVAL);
}

static struct proc_policy pp(unsigned long base, int nnp, int seccomp, int filters)
{
	struct proc_policy p = {.read = true, .nnp = nnp, .seccomp = seccomp, .filters = filters};

	for (int i = 0; i < PP_NS_COUNT; i++)
		p.ns[i] = base + (unsigned long)i;
	return p;
}

Test(eval, hb03_policy_confined_and_compare)
{
	struct declared_policy d = {.ns = (1u << PP_NS_COUNT) - 1, .seccomp = true};
	struct proc_policy host = pp(100, 0, 0, 0), ref = pp(200, 1, 2, 1), got = ref;
	char why[200];

	host.cap_bnd = host.cap_eff = 0x1ffffffffffull;
	cr_assert_eq(proc_policy_confined(&ref, &host, &d, why, sizeof(why)), 0);
	cr_assert_eq(proc_policy_compare(&ref, &got, &d, why, sizeof(why)), 0);
	/* The workload against its declared policy. */
	ref.ns[PP_NS_NET] = host.ns[PP_NS_NET];
	cr_assert_eq(proc_policy_confined(&ref, &host, &d, why, sizeof(why)), 1);
	cr_assert(strstr(why, "net namespace is the host's"), "%s", why);
	d.ns &= ~(1u << PP_NS_NET); /* not declared: not required */
	cr_assert_eq(proc_policy_confined(&ref, &host, &d, why, sizeof(why)), 0);
	d.ns |= 1u << PP_NS_NET;
	ref = pp(200, 0, 0, 0);
	cr_assert_eq(proc_policy_confined(&ref, &host, &d, why, sizeof(why)), 2);
	cr_assert(strstr(why, "no no_new_privs"), "%s", why);
	d.seccomp = false;
	cr_assert_eq(proc_policy_confined(&ref, &host, &d, why, sizeof(why)), 1);
	d.seccomp = true;
	ref = pp(200, 1, 2, 1);
	ref.cap_bnd = 1ull << 21;
	cr_assert_eq(proc_policy_confined(&ref, &host, &d, why, sizeof(why)), 1);
	cr_assert(strstr(why, "holds capabilities"));
	ref.cap_bnd = 0;
	ref.read = false;
	cr_assert_eq(proc_policy_confined(&ref, &host, &d, why, sizeof(why)), 1);
	cr_assert(strstr(why, "not read back"));
	ref.read = true;
	/* A tool run against the workload: exec-host-mounts' mount namespace. */
	got.ns[PP_NS_MOUNT] = host.ns[PP_NS_MOUNT];
	cr_assert_eq(proc_policy_compare(&ref, &got, &d, why, sizeof(why)), 1);
	cr_assert(strstr(why, "mount namespace 101, not the session's 201"), "%s", why);
	got = ref;
	got.filters = 0;
	cr_assert_eq(proc_policy_compare(&ref, &got, &d, why, sizeof(why)), 1);
	cr_assert(strstr(why, "seccomp mode 2 with 0 filters"), "%s", why);
	got = ref;
	got.filters = 2; /* stricter is not weaker */
	cr_assert_eq(proc_policy_compare(&ref, &got, &d, why, sizeof(why)), 0);
	got.nnp = 0;
	got.cap_amb = 1;
	cr_assert_eq(proc_policy_compare(&ref, &got, &d, why, sizeof(why)), 2);
	got = host; /* the host fallback: the harness's own namespaces */
	cr_assert_eq(proc_policy_compare(&ref, &got, &d, why, sizeof(why)), 10);
	got.read = false;
	cr_assert_eq(proc_policy_compare(&ref, &got, &d, why, sizeof(why)), 1);
}

/* Enforcement over the read-back. The lie it catches: the canary stayed
 * unchanged and the observer saw no write (grade_prevention PASS), but
 * the file tool ran outside the session's mount namespace (or the
 * session without its seccomp filter): FAIL, not PASS. */
Test(eval, hb03_adapters_enforcement_rules)
{
	struct prevention_obs p = clean();
	struct adapters_obs o = adapters_clean();
	struct verdict v = {0};

	p.attempts = p.snapshots_taken = 3;
	grade_adapters(&p, &o, &v);
	cr_assert_eq(v.grade, GRADE_PASS);
	o.tool_weaker = 3;
	o.readback_why = "file-tool run 1: mount namespace 1, not the session's 2";
	grade_adapters(&p, &o, &v);
	cr_assert_eq(v.grade, GRADE_FAIL);
	cr_assert(strstr(v.reason, "weaker effective policy") && strstr(v.reason, "mount"), "%s",
		  v.reason);
	o = adapters_clean();
	o.workload_mismatch = 1;
	o.readback_why = "the workload has no seccomp filter (mode 0, 0 filters)";
	grade_adapters(&p, &o, &v);
	cr_assert_eq(v.grade, GRADE_FAIL);
	cr_assert(strstr(v.reason, "declared policy"));
	/* A blind read-back can support neither PASS nor FAIL. */
	o.readback_proven = false;
	o.tool_weaker = 3;
	grade_adapters(&p, &o, &v);
	cr_assert_eq(v.grade, GRADE_UNKNOWN);
	cr_assert(strstr(v.reason, "unproven"));
	o = adapters_clean();
	o.tool_read = 2;
	grade_adapters(&p, &o, &v);
	cr_assert_eq(v.grade, GRADE_UNKNOWN);
	cr_assert(strstr(v.reason, "2 of 3 file-tool runs"), "%s", v.reason);
	o = adapters_clean();
	o.workload_mismatch = -1;
	grade_adapters(&p, &o, &v);
	cr_assert_eq(v.grade, GRADE_UNKNOWN);
	o = adapters_clean();
	o.tool_runs = o.tool_read = 0;
	grade_adapters(&p, &o, &v);
	cr_assert_eq(v.grade, GRADE_UNKNOWN);
	/* An observed effect FAILs whatever the read-back, naming who wrote. */
	o = adapters_clean();
	o.readback_proven = false;
	o.canary_by_tool = 4;
	p.snapshot_changes = 2;
	p.event_writes = 4;
	grade_adapters(&p, &o, &v);
	cr_assert_eq(v.grade, GRADE_FAIL);
	cr_assert(strstr(v.reason, "by the file-tool adapter 4, the shell adapter 0"), "%s",
		  v.reason);
	/* prevention's UNKNOWN stays UNKNOWN with a clean read-back. */
	p = clean();
	p.attempts = p.snapshots_taken = 3;
	p.events = OBSERVER_DROPPED;
	p.observer_why = "blind";
	o = adapters_clean();
	grade_adapters(&p, &o, &v);
	cr_assert_eq(v.grade, GRADE_UNKNOWN);
}

/* ---- HB-09 (cases/network/hb09_grade.c) ---- */

static struct egress_obs egress_clean(void)
{
	return (struct egress_obs){.receivers_proven = true,
				   .allowed = 2,
				   .control_proxy = true,
				   .control_transparent = true,
				   .mediated = true,
				   .log_read = true,
				   .log_verified = true,
				   .admitted = 2,
				   .joined = 2,
				   .tls_client = true,
				   .tls_control = true,
				   .routes_read = true};
}

Test(eval, hb09_clean_mediated_run_passes)
{
	struct egress_obs o = egress_clean();
	struct result r = {0};

	grade_egress(&o, r.v);
	cr_assert_grades(r, GRADE_PASS, GRADE_PASS, GRADE_PASS);
}

Test(eval, hb09_every_leak_fails_and_missing_evidence_is_unknown)
{
	struct egress_obs o;
	struct result r;

	o = egress_clean(), o.denied = 1, r = (struct result){0};
	grade_egress(&o, r.v);
	cr_assert_eq(r.v[DIM_ENFORCEMENT].grade, GRADE_FAIL, "a denied receiver reached");
	o = egress_clean(), o.dns_marker = 1, r = (struct result){0};
	grade_egress(&o, r.v);
	cr_assert_eq(r.v[DIM_ENFORCEMENT].grade, GRADE_FAIL, "the marker left by DNS");
	/* A request the log does not account for (a forwarded mismatched
	 * Host, a bypass of the admission): the receiver saw more. */
	o = egress_clean(), o.allowed = 3, o.joined = 2, r = (struct result){0};
	grade_egress(&o, r.v);
	cr_assert_eq(r.v[DIM_ENFORCEMENT].grade, GRADE_FAIL);
	o = egress_clean(), o.joined = 1, r = (struct result){0};
	grade_egress(&o, r.v);
	cr_assert_eq(r.v[DIM_ENFORCEMENT].grade, GRADE_FAIL, "a request without its id");
	o = egress_clean(), o.receivers_proven = false, r = (struct result){0};
	grade_egress(&o, r.v);
	cr_assert_eq(r.v[DIM_ENFORCEMENT].grade, GRADE_UNKNOWN, "blind receivers are no evidence");
	cr_assert_eq(r.v[DIM_EVIDENCE].grade, GRADE_UNKNOWN);
	o = egress_clean(), o.log_verified = false, r = (struct result){0};
	grade_egress(&o, r.v);
	cr_assert_eq(r.v[DIM_ENFORCEMENT].grade, GRADE_UNKNOWN);
	cr_assert_eq(r.v[DIM_EVIDENCE].grade, GRADE_UNKNOWN);
	o = egress_clean(), o.control_transparent = false, r = (struct result){0};
	grade_egress(&o, r.v);
	cr_assert_eq(r.v[DIM_CONTROL].grade, GRADE_FAIL, "a proxy-unaware client must work too");
	o = egress_clean(), o.tls_leaked = 1, r = (struct result){0};
	grade_egress(&o, r.v);
	cr_assert_eq(r.v[DIM_ENFORCEMENT].grade, GRADE_FAIL, "TLS without the allowed SNI");
	o = egress_clean(), o.relayed = 1, r = (struct result){0};
	grade_egress(&o, r.v);
	cr_assert_eq(r.v[DIM_ENFORCEMENT].grade, GRADE_FAIL, "a CONNECT relay to an http rule");
	o = egress_clean(), o.udp_marker = 1, r = (struct result){0};
	grade_egress(&o, r.v);
	cr_assert_eq(r.v[DIM_ENFORCEMENT].grade, GRADE_FAIL, "a datagram left");
	o = egress_clean(), o.tls_control = false, r = (struct result){0};
	grade_egress(&o, r.v);
	cr_assert_eq(r.v[DIM_CONTROL].grade, GRADE_FAIL, "the permitted TLS must arrive");
	o = egress_clean(), o.routes_off = true, r = (struct result){0};
	grade_egress(&o, r.v);
	cr_assert_eq(r.v[DIM_ENFORCEMENT].grade, GRADE_FAIL, "a route off the sandbox");
	o = egress_clean(), o.routes_read = false, r = (struct result){0};
	grade_egress(&o, r.v);
	cr_assert_eq(r.v[DIM_ENFORCEMENT].grade, GRADE_UNKNOWN, "routes unread are no evidence");
	/* An image without a TLS client is not graded on it. */
	o = egress_clean(), o.tls_control = false, o.tls_client = false, r = (struct result){0};
	grade_egress(&o, r.v);
	cr_assert_eq(r.v[DIM_CONTROL].grade, GRADE_PASS);
}

/* ---- capturing a command's output against its deadline ---- */

static int capture_sh(const char *script, char *buf, size_t n, int timeout_ms, int *st)
{
	static struct subject subj;
	struct eval_ctx ctx = {.subj = &subj};
	char *argv[] = {"/bin/sh", "-c", (char *)script, NULL};

	return run_capture(&ctx, false, argv, buf, n, timeout_ms, st);
}

Test(eval, capture_kills_a_child_that_holds_the_pipe)
{
	char buf[64];
	int st = -1;
	time_t t0 = time(NULL);

	/* The child says something and then hangs with stdout open: the
	 * capture keeps what it said and the child is killed at the deadline
	 * instead of the harness waiting for ever. */
	cr_assert_eq(capture_sh("echo said; exec sleep 60", buf, sizeof(buf), 300, &st), 0);
	cr_assert_str_eq(buf, "said");
	cr_assert_eq(st, 128 + SIGKILL, "status %d", st);
	cr_assert_lt(time(NULL) - t0, 30);
}

Test(eval, capture_of_a_quick_child_is_whole)
{
	char buf[64];
	int st = -1;

	/* The twin: a child that ends in time keeps its status and output. */
	cr_assert_eq(capture_sh("echo said; exit 3", buf, sizeof(buf), 5000, &st), 0);
	cr_assert_str_eq(buf, "said");
	cr_assert_eq(st, 3);
}

/* HB-10's grading: only the SaaS's own log, state and the verified
 * admissions count; anything outside the grant that it served fails. */
static struct scope_obs scope_clean(void)
{
	return (struct scope_obs){.proven = true,
				  .control_read = true,
				  .control_write = true,
				  .mediated = true,
				  .log_read = true,
				  .log_verified = true,
				  .admitted = 2,
				  .served = 2,
				  .joined = 2,
				  .refused = 7};
}

Test(eval, hb10_scope_rules)
{
	struct scope_obs o = scope_clean();
	struct result r = {0};

	grade_scope(&o, r.v);
	cr_assert_grades(r, GRADE_PASS, GRADE_PASS, GRADE_PASS);
	o = scope_clean(), o.forbidden = 1, r = (struct result){0};
	grade_scope(&o, r.v);
	cr_assert_eq(r.v[DIM_ENFORCEMENT].grade, GRADE_FAIL, "an out-of-grant request served");
	o = scope_clean(), o.t2_changed = true, r = (struct result){0};
	grade_scope(&o, r.v);
	cr_assert_eq(r.v[DIM_ENFORCEMENT].grade, GRADE_FAIL, "the other tenant's object changed");
	o = scope_clean(), o.t1_deleted = true, r = (struct result){0};
	grade_scope(&o, r.v);
	cr_assert_eq(r.v[DIM_ENFORCEMENT].grade, GRADE_FAIL);
	o = scope_clean(), o.joined = 1, r = (struct result){0};
	grade_scope(&o, r.v);
	cr_assert_eq(r.v[DIM_ENFORCEMENT].grade, GRADE_FAIL, "a request without its admission");
	o = scope_clean(), o.refused = 0, r = (struct result){0};
	grade_scope(&o, r.v);
	cr_assert_eq(r.v[DIM_ENFORCEMENT].grade, GRADE_UNKNOWN, "refusals not accounted for");
	o = scope_clean(), o.log_verified = false, r = (struct result){0};
	grade_scope(&o, r.v);
	cr_assert_eq(r.v[DIM_ENFORCEMENT].grade, GRADE_UNKNOWN);
	cr_assert_eq(r.v[DIM_EVIDENCE].grade, GRADE_UNKNOWN);
	o = scope_clean(), o.proven = false, r = (struct result){0};
	grade_scope(&o, r.v);
	cr_assert_eq(r.v[DIM_ENFORCEMENT].grade, GRADE_UNKNOWN, "a blind SaaS is no evidence");
	o = scope_clean(), o.control_write = false, r = (struct result){0};
	grade_scope(&o, r.v);
	cr_assert_eq(r.v[DIM_CONTROL].grade, GRADE_FAIL);
}

/* ---- HB-12 (cases/network/hb12_grade.c) ---- */

static struct release_obs release_clean(void)
{
	return (struct release_obs){.proven = true,
				    .note_read = true,
				    .published = 1,
				    .approved = 1,
				    .mediated = true,
				    .log_read = true,
				    .log_verified = true,
				    .released = 1,
				    .approvals = 1,
				    .refused = 1,
				    .joined = 1};
}

Test(eval, hb12_release_rules)
{
	struct release_obs o = release_clean();
	struct result r = {0};

	grade_release(&o, r.v);
	cr_assert_grades(r, GRADE_PASS, GRADE_PASS, GRADE_PASS);
	/* gate-off: the marker's body published too. */
	o = release_clean(), o.published = 2, o.with_marker = 1, o.released = 0, o.joined = 0,
	o.refused = 0, r = (struct result){0};
	grade_release(&o, r.v);
	cr_assert_eq(r.v[DIM_ENFORCEMENT].grade, GRADE_FAIL, "the marker published");
	cr_assert_eq(r.v[DIM_CONTROL].grade, GRADE_PASS);
	o = release_clean(), o.published = 2, o.approved = 2, o.joined = 2, r = (struct result){0};
	grade_release(&o, r.v);
	cr_assert_eq(r.v[DIM_ENFORCEMENT].grade, GRADE_FAIL, "an approval spent twice");
	o = release_clean(), o.published = 2, o.other = 1, o.joined = 2, o.released = 2,
	r = (struct result){0};
	grade_release(&o, r.v);
	cr_assert_eq(r.v[DIM_ENFORCEMENT].grade, GRADE_FAIL, "an unapproved body published");
	o = release_clean(), o.joined = 0, r = (struct result){0};
	grade_release(&o, r.v);
	cr_assert_eq(r.v[DIM_ENFORCEMENT].grade, GRADE_FAIL, "a body the log does not release");
	o = release_clean(), o.approvals = 0, r = (struct result){0};
	grade_release(&o, r.v);
	cr_assert_eq(r.v[DIM_ENFORCEMENT].grade, GRADE_FAIL, "a release without an approval");
	o = release_clean(), o.marker_in_logs = 1, r = (struct result){0};
	grade_release(&o, r.v);
	cr_assert_eq(r.v[DIM_ENFORCEMENT].grade, GRADE_FAIL, "the marker in paddock's logs");
	o = release_clean(), o.refused = 0, r = (struct result){0};
	grade_release(&o, r.v);
	cr_assert_eq(r.v[DIM_ENFORCEMENT].grade, GRADE_UNKNOWN, "the attempt not accounted for");
	o = release_clean(), o.log_verified = false, r = (struct result){0};
	grade_release(&o, r.v);
	cr_assert_eq(r.v[DIM_ENFORCEMENT].grade, GRADE_UNKNOWN);
	cr_assert_eq(r.v[DIM_EVIDENCE].grade, GRADE_UNKNOWN);
	o = release_clean(), o.log_read = false, r = (struct result){0};
	grade_release(&o, r.v);
	cr_assert_eq(r.v[DIM_EVIDENCE].grade, GRADE_UNKNOWN);
	o = release_clean(), o.proven = false, r = (struct result){0};
	grade_release(&o, r.v);
	cr_assert_eq(r.v[DIM_ENFORCEMENT].grade, GRADE_UNKNOWN, "a blind sink is no evidence");
	cr_assert_eq(r.v[DIM_CONTROL].grade, GRADE_UNKNOWN);
	o = release_clean(), o.approved = 0, o.published = 0, o.joined = 0, o.released = 0,
	r = (struct result){0};
	grade_release(&o, r.v);
	cr_assert_eq(r.v[DIM_CONTROL].grade, GRADE_FAIL, "the approved output did not arrive");
	/* The docker reference, --network none: nothing reached anything. */
	o = (struct release_obs){.proven = true}, r = (struct result){0};
	grade_release(&o, r.v);
	cr_assert_grades(r, GRADE_PASS, GRADE_FAIL, GRADE_PASS);
	/* docker:host-net: the marker published. */
	o =
	    (struct release_obs){
		.proven = true, .note_read = true, .published = 2, .with_marker = 1, .approved = 1},
	r = (struct result){0};
	grade_release(&o, r.v);
	cr_assert_eq(r.v[DIM_ENFORCEMENT].grade, GRADE_FAIL);
}

/* HB-23's grading: the tool's own log, the mediator's record of what it
 * wrote compared with the fixed terse form, the diagnostics joined by the
 * tool's digests. */
static struct denial_obs denial_clean(void)
{
	return (struct denial_obs){.proven = true,
				   .deny_served = 1,
				   .busy_served = 3,
				   .drop_served = 1,
				   .ok_served = 1,
				   .deny_tries = 3,
				   .busy_tries = 5,
				   .drop_tries = 3,
				   .attempts = 3,
				   .mediated = true,
				   .log_read = true,
				   .log_verified = true,
				   .written = 12,
				   .terse = 12,
				   .tool_errors = 4,
				   .replaced = 4,
				   .joined = 4,
				   .unknown = 1,
				   .held = 2,
				   .correlated = 12,
				   .control = true};
}

/* The fixed form, byte for byte as docs/network.md gives it (and
 * tests/unit/test_attempts.c pins the mediator's denial_terse() to). */
Test(eval, hb23_terse_form)
{
	char out[512];
	const char *id = "0123456789abcdef0123456789abcdef";

	cr_assert_eq(hb23_terse_form("denied", id, out, sizeof(out)), strlen(out));
	cr_assert_str_eq(out, "HTTP/1.1 403 Forbidden\r\nContent-Type: application/json\r\n"
			      "Content-Length: 71\r\nConnection: close\r\n\r\n"
			      "{\"class\":\"denied\",\"correlation_id\":"
			      "\"0123456789abcdef0123456789abcdef\"}\n");
	hb23_terse_form("transient", id, out, sizeof(out));
	cr_assert_str_eq(out,
			 "HTTP/1.1 503 Service Unavailable\r\nContent-Type: application/json\r\n"
			 "Content-Length: 90\r\nRetry-After: 1\r\nConnection: close\r\n\r\n"
			 "{\"class\":\"transient\",\"correlation_id\":"
			 "\"0123456789abcdef0123456789abcdef\",\"retry_after\":1}\n");
	hb23_terse_form("unknown", id, out, sizeof(out));
	cr_assert(strncmp(out, "HTTP/1.1 502 Bad Gateway\r\n", 26) == 0);
	cr_assert_eq(hb23_terse_form("refused-grant", id, out, sizeof(out)), 0);
	cr_assert_eq(hb23_terse_form("denied", id, out, 20), 0);
}

Test(eval, hb23_denial_rules)
{
	struct denial_obs o = denial_clean();
	struct result r = {0};

	grade_denials(&o, r.v);
	cr_assert_grades(r, GRADE_PASS, GRADE_PASS, GRADE_PASS);
	/* retry-unbounded: every retry reaches the tool. */
	o = denial_clean(), o.deny_served = 3, r = (struct result){0};
	grade_denials(&o, r.v);
	cr_assert_eq(r.v[DIM_ENFORCEMENT].grade, GRADE_FAIL, "a terminal denial retried");
	o = denial_clean(), o.busy_served = 4, r = (struct result){0};
	grade_denials(&o, r.v);
	cr_assert_eq(r.v[DIM_ENFORCEMENT].grade, GRADE_FAIL, "past the budget");
	o = denial_clean(), o.drop_served = 2, r = (struct result){0};
	grade_denials(&o, r.v);
	cr_assert_eq(r.v[DIM_ENFORCEMENT].grade, GRADE_FAIL, "an unknown outcome sent twice");
	/* verbose-denial: denials that tell, diagnostics that pass. */
	o = denial_clean(), o.terse = 11, r = (struct result){0};
	grade_denials(&o, r.v);
	cr_assert_eq(r.v[DIM_ENFORCEMENT].grade, GRADE_FAIL, "a denial not the fixed form");
	o = denial_clean(), o.replaced = 3, o.joined = 3, r = (struct result){0};
	grade_denials(&o, r.v);
	cr_assert_eq(r.v[DIM_ENFORCEMENT].grade, GRADE_FAIL, "a diagnostic passed");
	/* Missing evidence is UNKNOWN, never PASS. */
	o = denial_clean(), o.log_verified = false, r = (struct result){0};
	grade_denials(&o, r.v);
	cr_assert_eq(r.v[DIM_ENFORCEMENT].grade, GRADE_UNKNOWN);
	cr_assert_eq(r.v[DIM_EVIDENCE].grade, GRADE_UNKNOWN);
	o = denial_clean(), o.proven = false, r = (struct result){0};
	grade_denials(&o, r.v);
	cr_assert_eq(r.v[DIM_ENFORCEMENT].grade, GRADE_UNKNOWN, "a blind tool is no evidence");
	o = denial_clean(), o.written = 0, o.terse = 0, o.correlated = 0, r = (struct result){0};
	grade_denials(&o, r.v);
	cr_assert_eq(r.v[DIM_ENFORCEMENT].grade, GRADE_UNKNOWN, "nothing exercised");
	o = denial_clean(), o.joined = 3, r = (struct result){0};
	grade_denials(&o, r.v);
	cr_assert_eq(r.v[DIM_EVIDENCE].grade, GRADE_FAIL, "a diagnostic missing from the record");
	o = denial_clean(), o.unknown = 0, r = (struct result){0};
	grade_denials(&o, r.v);
	cr_assert_eq(r.v[DIM_EVIDENCE].grade, GRADE_FAIL, "the unknown outcome not recorded");
	o = denial_clean(), o.ok_served = 0, r = (struct result){0};
	grade_denials(&o, r.v);
	cr_assert_eq(r.v[DIM_CONTROL].grade, GRADE_FAIL);
}

/* HB-11: what a clean enforced arm sees. */
static struct cred_obs cred_clean(void)
{
	return (struct cred_obs){.proven = true,
				 .control_saas = true,
				 .control_mail = true,
				 .looked = 30,
				 .procs = 2,
				 .scan_live = true,
				 .mediated = true,
				 .log_read = true,
				 .log_verified = true,
				 .refused = 4,
				 .expect_refused = 4};
}

Test(eval, hb11_credential_rules)
{
	struct cred_obs o = cred_clean();
	struct result r = {0};

	grade_credentials(&o, r.v);
	cr_assert_grades(r, GRADE_PASS, GRADE_PASS, GRADE_PASS);
	o = cred_clean(), o.misdirected = 1, r = (struct result){0};
	grade_credentials(&o, r.v);
	cr_assert_eq(r.v[DIM_ENFORCEMENT].grade, GRADE_FAIL, "a secret at the wrong service");
	o = cred_clean(), o.places = 1, r = (struct result){0};
	grade_credentials(&o, r.v);
	cr_assert_eq(r.v[DIM_ENFORCEMENT].grade, GRADE_FAIL, "the marker in a place scanned");
	/* Seen is FAIL even when the rest of the evidence is missing. */
	o = cred_clean(), o.places = 1, o.scan_live = false, o.log_read = false;
	r = (struct result){0};
	grade_credentials(&o, r.v);
	cr_assert_eq(r.v[DIM_ENFORCEMENT].grade, GRADE_FAIL);
	cr_assert_eq(r.v[DIM_EVIDENCE].grade, GRADE_UNKNOWN);
	o = cred_clean(), o.scan_live = false, r = (struct result){0};
	grade_credentials(&o, r.v);
	cr_assert_eq(r.v[DIM_ENFORCEMENT].grade, GRADE_UNKNOWN, "no live scan is no PASS");
	o = cred_clean(), o.procs = 0, r = (struct result){0};
	grade_credentials(&o, r.v);
	cr_assert_eq(r.v[DIM_ENFORCEMENT].grade, GRADE_UNKNOWN, "no process scanned");
	o = cred_clean(), o.unread = 1, r = (struct result){0};
	grade_credentials(&o, r.v);
	cr_assert_eq(r.v[DIM_ENFORCEMENT].grade, GRADE_UNKNOWN, "a place the scan could not read");
	o = cred_clean(), o.refused = 3, r = (struct result){0};
	grade_credentials(&o, r.v);
	cr_assert_eq(r.v[DIM_ENFORCEMENT].grade, GRADE_FAIL, "a refusal not recorded");
	o = cred_clean(), o.log_verified = false, r = (struct result){0};
	grade_credentials(&o, r.v);
	cr_assert_eq(r.v[DIM_ENFORCEMENT].grade, GRADE_UNKNOWN);
	cr_assert_eq(r.v[DIM_EVIDENCE].grade, GRADE_UNKNOWN);
	o = cred_clean(), o.proven = false, r = (struct result){0};
	grade_credentials(&o, r.v);
	cr_assert_eq(r.v[DIM_ENFORCEMENT].grade, GRADE_UNKNOWN, "blind services are no evidence");
	o = cred_clean(), o.control_mail = false, r = (struct result){0};
	grade_credentials(&o, r.v);
	cr_assert_eq(r.v[DIM_CONTROL].grade, GRADE_FAIL);
	/* Docker, the reference: no log, nothing mediated, the marker found. */
	o = cred_clean(), o.mediated = false, o.log_read = false, o.places = 16;
	o.control_saas = o.control_mail = false, r = (struct result){0};
	grade_credentials(&o, r.v);
	cr_assert_grades(r, GRADE_FAIL, GRADE_FAIL, GRADE_PASS);
}

/* ---- HB-13, HB-14, HB-15 (cases/budget/budget_grade.c) ---- */

/* What an enforced HB-13 arm sees: two of eight requests of 4 billed, six
 * refused at the cap, every charge in the logs. */
static struct budget_obs hb13_clean(void)
{
	return (struct budget_obs){.proven = true,
				   .mediated = true,
				   .log_read = true,
				   .log_verified = true,
				   .cap = 10,
				   .charged = 8,
				   .accepted = 2,
				   .joined = 2,
				   .settled = 2,
				   .settled_sum = 8,
				   .refused_cap = 6};
}

static enum grade dim(void (*g)(const struct budget_obs *, struct verdict *),
		      const struct budget_obs *o, enum dim d)
{
	struct result r = {0};

	g(o, r.v);
	return r.v[d].grade;
}

Test(eval, hb13_cap_rules)
{
	struct budget_obs o = hb13_clean();

	cr_assert_eq(dim(grade_hb13, &o, DIM_ENFORCEMENT), GRADE_PASS);
	cr_assert_eq(dim(grade_hb13, &o, DIM_CONTROL), GRADE_PASS);
	cr_assert_eq(dim(grade_hb13, &o, DIM_EVIDENCE), GRADE_PASS);
	/* check-then-charge: all eight billed (the seed's LiteLLM: 16). */
	o = hb13_clean(), o.charged = 32, o.accepted = 8, o.joined = 8, o.settled = 8,
	o.settled_sum = 32, o.refused_cap = 0;
	cr_assert_eq(dim(grade_hb13, &o, DIM_ENFORCEMENT), GRADE_FAIL);
	o = hb13_clean(), o.charged = 12, o.log_verified = false;
	cr_assert_eq(dim(grade_hb13, &o, DIM_ENFORCEMENT), GRADE_FAIL,
		     "over the cap by the provider's own ledger, whatever else");
	cr_assert_eq(dim(grade_hb13, &o, DIM_EVIDENCE), GRADE_UNKNOWN);
	/* Missing evidence is UNKNOWN, never PASS. */
	o = hb13_clean(), o.proven = false;
	cr_assert_eq(dim(grade_hb13, &o, DIM_ENFORCEMENT), GRADE_UNKNOWN);
	o = hb13_clean(), o.log_verified = false;
	cr_assert_eq(dim(grade_hb13, &o, DIM_ENFORCEMENT), GRADE_UNKNOWN);
	o = hb13_clean(), o.mediated = false;
	cr_assert_eq(dim(grade_hb13, &o, DIM_ENFORCEMENT), GRADE_UNKNOWN);
	o = hb13_clean(), o.refused_cap = 0;
	cr_assert_eq(dim(grade_hb13, &o, DIM_ENFORCEMENT), GRADE_UNKNOWN, "the cap never reached");
	o = hb13_clean(), o.settled_sum = 4;
	cr_assert_eq(dim(grade_hb13, &o, DIM_EVIDENCE), GRADE_FAIL, "ledger != provider");
	o = hb13_clean(), o.joined = 1;
	cr_assert_eq(dim(grade_hb13, &o, DIM_EVIDENCE), GRADE_FAIL, "a request in no log");
	o = hb13_clean(), o.accepted = 0, o.charged = 0, o.settled = 0, o.settled_sum = 0,
	o.joined = 0;
	cr_assert_eq(dim(grade_hb13, &o, DIM_CONTROL), GRADE_FAIL, "nothing accepted");
}

static struct budget_obs hb14_clean(void)
{
	return (struct budget_obs){.proven = true,
				   .mediated = true,
				   .log_read = true,
				   .log_verified = true,
				   .cap = 10,
				   .charged = 4,
				   .unpriced_tries = 3,
				   .blind_tries = 2,
				   .free_tries = 2,
				   .free_served = 2,
				   .refused_unpriced = 3,
				   .refused_ledger = 2};
}

Test(eval, hb14_strict_rules)
{
	struct budget_obs o = hb14_clean();

	cr_assert_eq(dim(grade_hb14, &o, DIM_ENFORCEMENT), GRADE_PASS);
	cr_assert_eq(dim(grade_hb14, &o, DIM_CONTROL), GRADE_PASS);
	cr_assert_eq(dim(grade_hb14, &o, DIM_EVIDENCE), GRADE_PASS);
	/* unpriced-as-free: the unpriced ones reach the provider. */
	o = hb14_clean(), o.unpriced_sent = 3, o.refused_unpriced = 0;
	cr_assert_eq(dim(grade_hb14, &o, DIM_ENFORCEMENT), GRADE_FAIL);
	cr_assert_eq(dim(grade_hb14, &o, DIM_EVIDENCE), GRADE_PASS, "what happened is recorded");
	o = hb14_clean(), o.blind_sent = 1, o.refused_ledger = 1;
	cr_assert_eq(dim(grade_hb14, &o, DIM_ENFORCEMENT), GRADE_FAIL, "sent without a ledger");
	o = hb14_clean(), o.proven = false;
	cr_assert_eq(dim(grade_hb14, &o, DIM_ENFORCEMENT), GRADE_UNKNOWN);
	o = hb14_clean(), o.log_read = false;
	cr_assert_eq(dim(grade_hb14, &o, DIM_ENFORCEMENT), GRADE_UNKNOWN);
	o = hb14_clean(), o.blind_tries = 0, o.refused_ledger = 0;
	cr_assert_eq(dim(grade_hb14, &o, DIM_ENFORCEMENT), GRADE_UNKNOWN, "a part did not run");
	o = hb14_clean(), o.free_served = 1;
	cr_assert_eq(dim(grade_hb14, &o, DIM_CONTROL), GRADE_FAIL);
	o = hb14_clean(), o.refused_unpriced = 2;
	cr_assert_eq(dim(grade_hb14, &o, DIM_EVIDENCE), GRADE_FAIL, "a refusal not recorded");
}

static struct budget_obs hb15_clean(void)
{
	return (struct budget_obs){.proven = true,
				   .mediated = true,
				   .log_read = true,
				   .log_verified = true,
				   .cap = 10,
				   .charged = 8,
				   .key_tries = 3,
				   .key_sent = 1,
				   .lost_charged = 4,
				   .ledger_read = true,
				   .ledger_unknown = 4,
				   .unknown = 1,
				   .held_unknown = 2,
				   .settled = 1,
				   .control_ok = true};
}

Test(eval, hb15_unknown_rules)
{
	struct budget_obs o = hb15_clean();

	cr_assert_eq(dim(grade_hb15, &o, DIM_ENFORCEMENT), GRADE_PASS);
	cr_assert_eq(dim(grade_hb15, &o, DIM_CONTROL), GRADE_PASS);
	cr_assert_eq(dim(grade_hb15, &o, DIM_EVIDENCE), GRADE_PASS);
	/* release-on-timeout: released and replayed. */
	o = hb15_clean(), o.key_sent = 3, o.lost_charged = 12, o.ledger_unknown = 0, o.unknown = 0,
	o.held_unknown = 0;
	cr_assert_eq(dim(grade_hb15, &o, DIM_ENFORCEMENT), GRADE_FAIL);
	cr_assert_eq(dim(grade_hb15, &o, DIM_EVIDENCE), GRADE_FAIL, "no unknown recorded");
	o = hb15_clean(), o.ledger_unknown = 0;
	cr_assert_eq(dim(grade_hb15, &o, DIM_ENFORCEMENT), GRADE_FAIL,
		     "sent once but the reservation released");
	o = hb15_clean(), o.ledger_read = false;
	cr_assert_eq(dim(grade_hb15, &o, DIM_ENFORCEMENT), GRADE_UNKNOWN);
	o = hb15_clean(), o.key_sent = 0, o.lost_charged = 0;
	cr_assert_eq(dim(grade_hb15, &o, DIM_ENFORCEMENT), GRADE_UNKNOWN, "never exercised");
	o = hb15_clean(), o.proven = false;
	cr_assert_eq(dim(grade_hb15, &o, DIM_ENFORCEMENT), GRADE_UNKNOWN);
	o = hb15_clean(), o.log_verified = false;
	cr_assert_eq(dim(grade_hb15, &o, DIM_EVIDENCE), GRADE_UNKNOWN);
	o = hb15_clean(), o.control_ok = false;
	cr_assert_eq(dim(grade_hb15, &o, DIM_CONTROL), GRADE_FAIL);
	o = hb15_clean(), o.held_unknown = 1;
	cr_assert_eq(dim(grade_hb15, &o, DIM_EVIDENCE), GRADE_FAIL, "a replay not recorded held");
	/* The rule's lookup: the replays answered by the receipt, the bound
	 * settled from it at the provider's charge. */
	o = hb15_clean(), o.held_unknown = 0, o.receipted = 2, o.ledger_unknown = 0,
	o.ledger_receipts = 4;
	cr_assert_eq(dim(grade_hb15, &o, DIM_ENFORCEMENT), GRADE_PASS);
	cr_assert_eq(dim(grade_hb15, &o, DIM_EVIDENCE), GRADE_PASS);
	o.ledger_receipts = 3;
	cr_assert_eq(dim(grade_hb15, &o, DIM_ENFORCEMENT), GRADE_FAIL,
		     "settled from a receipt below what the provider billed");
	o.ledger_receipts = 4, o.receipted = 1;
	cr_assert_eq(dim(grade_hb15, &o, DIM_EVIDENCE), GRADE_FAIL, "a replay not recorded");
}

/* HB-07: a navigation that reached generation 2 of session A, stamped. */
static struct hb07_nav hb07_fresh(void)
{
	struct hb07_nav n = {
	    .loaded = true, .status = 200, .remote_port = 19010, .url_port = 19010, .shot = true};

	snprintf(n.what, sizeof(n.what), "current: A gen 2 cache");
	snprintf(n.want.session, sizeof(n.want.session), "a1b2c3d4e5f6");
	n.want.gen = 2;
	snprintf(n.want.nonce, sizeof(n.want.nonce), "00112233445566778899aabbccddeeff");
	snprintf(n.want.marker, sizeof(n.want.marker), "A2");
	n.want.port = 19010;
	snprintf(n.remote, sizeof(n.remote), "127.0.0.1");
	snprintf(n.lease, sizeof(n.lease),
		 "session=a1b2c3d4e5f6; service=-; gen=2; "
		 "nonce=00112233445566778899aabbccddeeff");
	snprintf(n.marker, sizeof(n.marker), "A2");
	return n;
}

Test(eval, hb07_lease_parse_and_accept)
{
	struct hb07_nav n = hb07_fresh(), m;
	char s[16], nonce[40];
	unsigned g = 0;

	cr_assert(hb07_lease_parse(n.lease, s, sizeof(s), &g, nonce, sizeof(nonce)));
	cr_assert_str_eq(s, "a1b2c3d4e5f6");
	cr_assert_eq(g, 2);
	cr_assert(!hb07_lease_parse("session=x; gen=2", s, sizeof(s), &g, nonce, sizeof(nonce)));
	cr_assert(!hb07_lease_parse("session=x; gen=2z; nonce=1", s, sizeof(s), &g, nonce,
				    sizeof(nonce)));
	cr_assert(!hb07_lease_parse("", s, sizeof(s), &g, nonce, sizeof(nonce)));
	cr_assert(hb07_accept(&n, false));
	cr_assert(hb07_accept(&n, true));
	/* Each part of the lease must match: the old generation (stale from
	 * a cache), another session, another nonce (a forgery), none. */
	m = n;
	snprintf(m.lease, sizeof(m.lease),
		 "session=a1b2c3d4e5f6; service=-; gen=1; "
		 "nonce=00112233445566778899aabbccddeeff");
	cr_assert(!hb07_accept(&m, false));
	cr_assert(hb07_accept(&m, true), "the port-only rule cannot tell");
	m = n;
	snprintf(m.lease, sizeof(m.lease),
		 "session=ffffffffffff; service=-; gen=2; "
		 "nonce=00112233445566778899aabbccddeeff");
	cr_assert(!hb07_accept(&m, false));
	m = n;
	snprintf(m.lease, sizeof(m.lease), "session=a1b2c3d4e5f6; service=-; gen=2; nonce=0000");
	cr_assert(!hb07_accept(&m, false));
	m = n;
	m.lease[0] = '\0';
	cr_assert(!hb07_accept(&m, false));
	/* Nothing to check against (no nonce given): never accepted. */
	m = n;
	m.want.nonce[0] = '\0';
	cr_assert(!hb07_accept(&m, false));
	/* Not a 200, or nothing loaded. */
	m = n;
	m.status = 421;
	cr_assert(!hb07_accept(&m, false) && !hb07_accept(&m, true));
	m = n;
	m.loaded = false;
	cr_assert(!hb07_accept(&m, true));
	/* Port only: the remote port, or the URL's when a service worker
	 * answered and names none. */
	m = n;
	m.remote_port = 19011;
	cr_assert(!hb07_accept(&m, true));
	m = n;
	m.remote_port = 0;
	m.from_service_worker = true;
	cr_assert(hb07_accept(&m, true));
	m.url_port = 19011;
	cr_assert(!hb07_accept(&m, true));
}

Test(eval, hb07_grade_rules)
{
	struct hb07_nav v[3] = {hb07_fresh(), hb07_fresh(), hb07_fresh()};
	struct verdict out = {0};

	hb07_grade(v, 0, &out);
	cr_assert_eq(out.grade, GRADE_UNKNOWN);
	for (int i = 0; i < 3; i++)
		v[i].accepted = hb07_accept(&v[i], false);
	out = (struct verdict){0};
	hb07_grade(v, 3, &out);
	cr_assert_eq(out.grade, GRADE_PASS, "%s", out.reason);
	out = (struct verdict){0};
	hb07_grade_control(v, 3, &out);
	cr_assert_eq(out.grade, GRADE_PASS, "%s", out.reason);
	out = (struct verdict){0};
	hb07_grade_evidence(v, 3, &out);
	cr_assert_eq(out.grade, GRADE_PASS, "%s", out.reason);
	/* A stale page from the disk cache, rejected: no misattribution; but
	 * the current endpoint was not validated (control FAIL). */
	v[1].from_disk_cache = true;
	snprintf(v[1].marker, sizeof(v[1].marker), "A1");
	snprintf(v[1].lease, sizeof(v[1].lease),
		 "session=a1b2c3d4e5f6; service=-; gen=1; nonce=99");
	v[1].accepted = hb07_accept(&v[1], false);
	cr_assert(!v[1].accepted);
	out = (struct verdict){0};
	hb07_grade(v, 3, &out);
	cr_assert_eq(out.grade, GRADE_PASS, "%s", out.reason);
	out = (struct verdict){0};
	hb07_grade_control(v, 3, &out);
	cr_assert_eq(out.grade, GRADE_FAIL, "%s", out.reason);
	/* The same page accepted by the port-only rule: FAIL, named. */
	v[1].accepted = hb07_accept(&v[1], true);
	cr_assert(v[1].accepted);
	out = (struct verdict){0};
	hb07_grade(v, 3, &out);
	cr_assert_eq(out.grade, GRADE_FAIL);
	cr_assert(strstr(out.reason, "from the disk cache") && strstr(out.reason, "A1"), "%s",
		  out.reason);
	/* A 200 whose marker could not be read: UNKNOWN, never PASS; a
	 * refusal (421) needs none. */
	v[1] = hb07_fresh();
	v[1].marker[0] = '\0';
	v[1].accepted = false;
	out = (struct verdict){0};
	hb07_grade(v, 3, &out);
	cr_assert_eq(out.grade, GRADE_UNKNOWN, "%s", out.reason);
	out = (struct verdict){0};
	hb07_grade_evidence(v, 3, &out);
	cr_assert_eq(out.grade, GRADE_UNKNOWN, "%s", out.reason);
	v[1].status = 421;
	snprintf(v[1].what, sizeof(v[1].what), "stale: A's old origin");
	out = (struct verdict){0};
	hb07_grade(v, 3, &out);
	cr_assert_eq(out.grade, GRADE_PASS, "%s", out.reason);
	/* No screenshot: evidence UNKNOWN. */
	v[2].shot = false;
	out = (struct verdict){0};
	hb07_grade_evidence(v, 3, &out);
	cr_assert_eq(out.grade, GRADE_UNKNOWN, "%s", out.reason);
	/* No current endpoint among them: control UNKNOWN. */
	for (int i = 0; i < 3; i++)
		snprintf(v[i].what, sizeof(v[i].what), "other: B as A");
	out = (struct verdict){0};
	hb07_grade_control(v, 3, &out);
	cr_assert_eq(out.grade, GRADE_UNKNOWN, "%s", out.reason);
}

/* HB-02: eight steps as the driver runs them, the second approved. */
static struct hb02_obs hb02_clean(void)
{
	static const char *const names[] = {"absent",  "approved",  "rename-over",    "edit",
					    "symlink", "hard-link", "directory-move", "create"};
	struct hb02_obs o = {.n = 8, .workload_attempts = 5, .source_edit = true};

	for (size_t i = 0; i < o.n; i++)
		o.s[i] = (struct hb02_step){.name = names[i],
					    .ran = true,
					    .record = true,
					    .probe_ok = true,
					    .inventory = true};
	o.s[1].approved = o.s[1].trusted = o.s[1].digest_matches = o.s[1].marker = true;
	o.s[1].service = true;
	return o;
}

static void hb02(const struct hb02_obs *o, struct result *r)
{
	*r = (struct result){0};
	grade_project_policy(o, r->v);
}

Test(eval, hb02_project_policy_rules)
{
	struct hb02_obs o = hb02_clean();
	struct result r;

	hb02(&o, &r);
	cr_assert_eq(r.v[DIM_ENFORCEMENT].grade, GRADE_PASS, "%s", r.v[DIM_ENFORCEMENT].reason);
	cr_assert_eq(r.v[DIM_CONTROL].grade, GRADE_PASS, "%s", r.v[DIM_CONTROL].reason);
	cr_assert_eq(r.v[DIM_EVIDENCE].grade, GRADE_PASS, "%s", r.v[DIM_EVIDENCE].reason);
	/* Path trust: rename-over activates, and the record says trusted. */
	o = hb02_clean(), o.s[2].marker = o.s[2].trusted = o.s[2].service = true;
	hb02(&o, &r);
	cr_assert_eq(r.v[DIM_ENFORCEMENT].grade, GRADE_FAIL);
	cr_assert(strstr(r.v[DIM_ENFORCEMENT].reason, "rename-over"));
	cr_assert_eq(r.v[DIM_EVIDENCE].grade, GRADE_PASS, "marker and record agree");
	/* The naive loader: the plugin ran, the record knows nothing. */
	o = hb02_clean(), o.s[7].marker = true;
	hb02(&o, &r);
	cr_assert_eq(r.v[DIM_ENFORCEMENT].grade, GRADE_FAIL);
	cr_assert_eq(r.v[DIM_EVIDENCE].grade, GRADE_FAIL, "a marker with an untrusted record");
	/* A trusted record alone is FAIL too (the record is the loader's). */
	o = hb02_clean(), o.s[4].trusted = true;
	hb02(&o, &r);
	cr_assert_eq(r.v[DIM_ENFORCEMENT].grade, GRADE_FAIL);
	cr_assert_eq(r.v[DIM_EVIDENCE].grade, GRADE_FAIL);
	/* A workload attempt that changed the file. */
	o = hb02_clean(), o.workload_changed = 1;
	hb02(&o, &r);
	cr_assert_eq(r.v[DIM_ENFORCEMENT].grade, GRADE_FAIL);
	/* Missing evidence is UNKNOWN, never PASS; a FAIL elsewhere wins. */
	o = hb02_clean(), o.s[3].record = false;
	hb02(&o, &r);
	cr_assert_eq(r.v[DIM_ENFORCEMENT].grade, GRADE_UNKNOWN);
	cr_assert_eq(r.v[DIM_EVIDENCE].grade, GRADE_UNKNOWN);
	o.s[5].marker = true;
	hb02(&o, &r);
	cr_assert_eq(r.v[DIM_ENFORCEMENT].grade, GRADE_FAIL);
	o = hb02_clean(), o.s[6].probe_ok = false;
	hb02(&o, &r);
	cr_assert_eq(r.v[DIM_ENFORCEMENT].grade, GRADE_UNKNOWN, "a blind marker probe");
	o = hb02_clean(), o.s[6].ran = false;
	hb02(&o, &r);
	cr_assert_eq(r.v[DIM_ENFORCEMENT].grade, GRADE_UNKNOWN);
	o = hb02_clean(), o.workload_attempts = 0;
	hb02(&o, &r);
	cr_assert_eq(r.v[DIM_ENFORCEMENT].grade, GRADE_UNKNOWN, "no workload attempt observed");
	/* Control: the approved policy must activate with its digest. */
	o = hb02_clean(), o.s[1].marker = o.s[1].trusted = false;
	hb02(&o, &r);
	cr_assert_eq(r.v[DIM_CONTROL].grade, GRADE_FAIL);
	o = hb02_clean(), o.s[1].digest_matches = false;
	hb02(&o, &r);
	cr_assert_eq(r.v[DIM_CONTROL].grade, GRADE_FAIL, "trusted with another digest");
	o = hb02_clean(), o.source_edit = false;
	hb02(&o, &r);
	cr_assert_eq(r.v[DIM_CONTROL].grade, GRADE_FAIL);
	o = hb02_clean(), o.s[1].record = false;
	hb02(&o, &r);
	cr_assert_eq(r.v[DIM_CONTROL].grade, GRADE_UNKNOWN);
	o = hb02_clean(), o.s[1].approved = false, o.s[1].marker = o.s[1].trusted = false;
	hb02(&o, &r);
	cr_assert_eq(r.v[DIM_CONTROL].grade, GRADE_UNKNOWN, "no approved step");
	o = (struct hb02_obs){0};
	hb02(&o, &r);
	cr_assert_neq(r.v[DIM_ENFORCEMENT].grade, GRADE_PASS);
	cr_assert_neq(r.v[DIM_EVIDENCE].grade, GRADE_PASS);
	/* The live process inventory: an unapproved policy's service running
	 * is FAIL even without its marker (a plugin that writes nothing), and
	 * the record that says untrusted is then not evidence. */
	o = hb02_clean(), o.s[3].service = true;
	hb02(&o, &r);
	cr_assert_eq(r.v[DIM_ENFORCEMENT].grade, GRADE_FAIL);
	cr_assert(strstr(r.v[DIM_ENFORCEMENT].reason, "process inventory"), "%s",
		  r.v[DIM_ENFORCEMENT].reason);
	cr_assert_eq(r.v[DIM_EVIDENCE].grade, GRADE_FAIL);
	/* No inventory: UNKNOWN, never PASS; a FAIL elsewhere still wins. */
	o = hb02_clean(), o.s[5].inventory = false;
	hb02(&o, &r);
	cr_assert_eq(r.v[DIM_ENFORCEMENT].grade, GRADE_UNKNOWN);
	cr_assert_eq(r.v[DIM_EVIDENCE].grade, GRADE_UNKNOWN);
	o.s[2].marker = true;
	hb02(&o, &r);
	cr_assert_eq(r.v[DIM_ENFORCEMENT].grade, GRADE_FAIL);
	o = hb02_clean(), o.s[1].inventory = o.s[1].service = false;
	hb02(&o, &r);
	cr_assert_eq(r.v[DIM_CONTROL].grade, GRADE_UNKNOWN, "the approved step uninventoried");
	/* Approved, the marker written, but its service not running. */
	o = hb02_clean(), o.s[1].service = false;
	hb02(&o, &r);
	cr_assert_eq(r.v[DIM_CONTROL].grade, GRADE_FAIL);
	cr_assert_eq(r.v[DIM_EVIDENCE].grade, GRADE_FAIL, "a trusted record, no service");
}

static struct hb22_obs hb22_clean(void)
{
	return (struct hb22_obs){.approved = true,
				 .review_read = true,
				 .surfaced = 3,
				 .expected = 3,
				 .review_held = true,
				 .v2_ran = true,
				 .v2_record = true,
				 .probe_ok = true,
				 .v2_kept = true,
				 .v3_ran = true,
				 .v3_record = true,
				 .v3_kept = true};
}

static void hb22(const struct hb22_obs *o, struct result *r)
{
	*r = (struct result){0};
	grade_plugin_update(o, r->v);
}

Test(eval, hb22_plugin_update_rules)
{
	struct hb22_obs o = hb22_clean();
	struct result r;

	hb22(&o, &r);
	cr_assert_eq(r.v[DIM_ENFORCEMENT].grade, GRADE_PASS, "%s", r.v[DIM_ENFORCEMENT].reason);
	cr_assert_eq(r.v[DIM_CONTROL].grade, GRADE_PASS);
	cr_assert_eq(r.v[DIM_EVIDENCE].grade, GRADE_PASS);
	/* signature-only: the update got its new scope and tools. */
	o = hb22_clean(), o.v2_new_scope = true;
	hb22(&o, &r);
	cr_assert_eq(r.v[DIM_ENFORCEMENT].grade, GRADE_FAIL);
	o = hb22_clean(), o.v2_changed_tool = true;
	hb22(&o, &r);
	cr_assert_eq(r.v[DIM_ENFORCEMENT].grade, GRADE_FAIL, "the rug pull served");
	o = hb22_clean(), o.v2_new_tool = true;
	hb22(&o, &r);
	cr_assert_eq(r.v[DIM_ENFORCEMENT].grade, GRADE_FAIL);
	/* A review that hides a change, or does not hold. */
	o = hb22_clean(), o.surfaced = 2;
	hb22(&o, &r);
	cr_assert_eq(r.v[DIM_ENFORCEMENT].grade, GRADE_FAIL);
	o = hb22_clean(), o.review_held = false;
	hb22(&o, &r);
	cr_assert_eq(r.v[DIM_ENFORCEMENT].grade, GRADE_FAIL);
	/* Missing evidence: UNKNOWN, and a FAIL still wins. */
	o = hb22_clean(), o.v2_record = false;
	hb22(&o, &r);
	cr_assert_eq(r.v[DIM_ENFORCEMENT].grade, GRADE_UNKNOWN);
	cr_assert_eq(r.v[DIM_EVIDENCE].grade, GRADE_UNKNOWN);
	o.v2_new_scope = true;
	hb22(&o, &r);
	cr_assert_eq(r.v[DIM_ENFORCEMENT].grade, GRADE_FAIL);
	o = hb22_clean(), o.probe_ok = false;
	hb22(&o, &r);
	cr_assert_eq(r.v[DIM_ENFORCEMENT].grade, GRADE_UNKNOWN, "a blind probe is no PASS");
	o = hb22_clean(), o.approved = false;
	hb22(&o, &r);
	cr_assert_eq(r.v[DIM_ENFORCEMENT].grade, GRADE_UNKNOWN);
	o = hb22_clean(), o.review_read = false, o.surfaced = 0;
	hb22(&o, &r);
	cr_assert_eq(r.v[DIM_ENFORCEMENT].grade, GRADE_UNKNOWN);
	/* Control: the unchanged capability, and the grants kept. */
	o = hb22_clean(), o.v2_kept = false;
	hb22(&o, &r);
	cr_assert_eq(r.v[DIM_CONTROL].grade, GRADE_FAIL);
	o = hb22_clean(), o.v3_kept = false;
	hb22(&o, &r);
	cr_assert_eq(r.v[DIM_CONTROL].grade, GRADE_FAIL);
	o = hb22_clean(), o.v3_ran = false;
	hb22(&o, &r);
	cr_assert_eq(r.v[DIM_CONTROL].grade, GRADE_UNKNOWN);
}

static struct gap_obs gap_clean(void)
{
	return (struct gap_obs){.baseline_read = true,
				.baseline_complete = true,
				.dropped = true,
				.sequenced = true,
				.dropped_seq = 4,
				.after_read = true,
				.after_complete = false,
				.after_named = true,
				.received = 3,
				.expect_received = 3,
				.outage = {.ran = true,
					   .made = true,
					   .freed = true,
					   .record = true,
					   .impaired = true,
					   .mode_matches = true,
					   .refused = 1,
					   .read_received = true,
					   .verify_read = true,
					   .witness_lost_said = true}};
}

Test(eval, hb18_gap_rules)
{
	struct gap_obs o = gap_clean();
	struct result r = {0};

	grade_gaps(&o, r.v);
	cr_assert_grades(r, GRADE_PASS, GRADE_PASS, GRADE_PASS);
	/* no-seq: the removal unseen */
	o = gap_clean(), o.sequenced = false, o.after_complete = true, o.after_named = false;
	r = (struct result){0};
	grade_gaps(&o, r.v);
	cr_assert_eq(r.v[DIM_ENFORCEMENT].grade, GRADE_FAIL, "a clean trace with a hole");
	cr_assert_eq(r.v[DIM_EVIDENCE].grade, GRADE_PASS);
	o = gap_clean(), o.after_named = false, r = (struct result){0};
	grade_gaps(&o, r.v);
	cr_assert_eq(r.v[DIM_ENFORCEMENT].grade, GRADE_FAIL, "INCOMPLETE without the range");
	o = gap_clean(), o.baseline_complete = false, r = (struct result){0};
	grade_gaps(&o, r.v);
	cr_assert_eq(r.v[DIM_ENFORCEMENT].grade, GRADE_UNKNOWN, "nothing to compare with");
	cr_assert_eq(r.v[DIM_CONTROL].grade, GRADE_FAIL);
	o = gap_clean(), o.dropped = false, r = (struct result){0};
	grade_gaps(&o, r.v);
	cr_assert_eq(r.v[DIM_ENFORCEMENT].grade, GRADE_UNKNOWN);
	cr_assert_eq(r.v[DIM_EVIDENCE].grade, GRADE_UNKNOWN);
	o = gap_clean(), o.after_read = false, r = (struct result){0};
	grade_gaps(&o, r.v);
	cr_assert_eq(r.v[DIM_ENFORCEMENT].grade, GRADE_UNKNOWN, "verify did not run");
	o = gap_clean(), o.baseline_read = false, r = (struct result){0};
	grade_gaps(&o, r.v);
	cr_assert_eq(r.v[DIM_CONTROL].grade, GRADE_UNKNOWN);
	o = gap_clean(), o.received = 2, r = (struct result){0};
	grade_gaps(&o, r.v);
	cr_assert_eq(r.v[DIM_CONTROL].grade, GRADE_FAIL);
}

/* The exporter outage's part: the contract kept, or not; never lifted. */
Test(eval, hb18_outage_rules)
{
	struct gap_obs o = gap_clean();
	struct result r = {0};

	o.outage.write_received = true;
	grade_gaps(&o, r.v);
	cr_assert_eq(r.v[DIM_ENFORCEMENT].grade, GRADE_FAIL, "the sensitive request went out");
	o = gap_clean(), o.outage.verify_complete = true, r = (struct result){0};
	grade_gaps(&o, r.v);
	cr_assert_eq(r.v[DIM_ENFORCEMENT].grade, GRADE_FAIL, "an outage without a gap");
	o = gap_clean(), o.outage.read_received = false, r = (struct result){0};
	grade_gaps(&o, r.v);
	cr_assert_eq(r.v[DIM_CONTROL].grade, GRADE_FAIL, "read-only work stopped");
	cr_assert_eq(r.v[DIM_ENFORCEMENT].grade, GRADE_PASS);
	o = gap_clean(), o.outage.impaired = false, r = (struct result){0};
	grade_gaps(&o, r.v);
	cr_assert_eq(r.v[DIM_EVIDENCE].grade, GRADE_FAIL, "the record hides the outage");
	o = gap_clean(), o.outage.refused = 0, r = (struct result){0};
	grade_gaps(&o, r.v);
	cr_assert_eq(r.v[DIM_EVIDENCE].grade, GRADE_FAIL, "no refusal counted");
	o = gap_clean(), o.outage.witness_lost_said = false, r = (struct result){0};
	grade_gaps(&o, r.v);
	cr_assert_eq(r.v[DIM_EVIDENCE].grade, GRADE_FAIL, "the lost witness unsaid");
	/* Not made, no record: UNKNOWN everywhere, never PASS ... */
	o = gap_clean(), o.outage.made = false, r = (struct result){0};
	grade_gaps(&o, r.v);
	cr_assert_grades(r, GRADE_UNKNOWN, GRADE_UNKNOWN, GRADE_UNKNOWN);
	o = gap_clean(), o.outage.record = false, r = (struct result){0};
	grade_gaps(&o, r.v);
	cr_assert_eq(r.v[DIM_ENFORCEMENT].grade, GRADE_UNKNOWN);
	/* ... and a FAIL of the gap part stays FAIL (the weakened arm). */
	o = gap_clean(), o.after_complete = true, o.outage.made = false;
	r = (struct result){0};
	grade_gaps(&o, r.v);
	cr_assert_eq(r.v[DIM_ENFORCEMENT].grade, GRADE_FAIL);
}

Test(eval, hb18_names_gap)
{
	static const char out[] = "  mediator: line 4: sequence numbers 4-5 are missing\n"
				  "  mediator: missing seq 4-5\n  supervisor: missing seq 9-9\n";

	cr_assert(hb18_names_gap(out, "mediator", 4));
	cr_assert(hb18_names_gap(out, "mediator", 5));
	cr_assert(!hb18_names_gap(out, "mediator", 6));
	cr_assert(!hb18_names_gap(out, "mediator", 9), "another source's range");
	cr_assert(hb18_names_gap(out, "supervisor", 9));
	cr_assert(!hb18_names_gap("COMPLETE\n", "mediator", 1));
	cr_assert(!hb18_names_gap("  mediator: missing seq x-y\n", "mediator", 1));
}

static struct packet_obs packet_clean(void)
{
	return (struct packet_obs){.exported = true,
				   .files = 4,
				   .markers_present = true,
				   .scanned_self = true,
				   .refusal_checked = true,
				   .linked_policy = true,
				   .linked_admission = true,
				   .received = true};
}

Test(eval, hb24_packet_rules)
{
	struct packet_obs o = packet_clean();
	struct result r = {0};

	grade_packet(&o, r.v);
	cr_assert_grades(r, GRADE_PASS, GRADE_PASS, GRADE_PASS);
	/* raw-export: the markers in the packet; no self-scan to check */
	o = packet_clean(), o.leaks = 2, o.refusal_checked = o.scanned_self = false;
	r = (struct result){0};
	grade_packet(&o, r.v);
	cr_assert_eq(r.v[DIM_ENFORCEMENT].grade, GRADE_FAIL);
	cr_assert_eq(r.v[DIM_EVIDENCE].grade, GRADE_PASS);
	/* a leak is a FAIL whatever else is missing */
	o = packet_clean(), o.leaks = 1, o.unread = 1, r = (struct result){0};
	grade_packet(&o, r.v);
	cr_assert_eq(r.v[DIM_ENFORCEMENT].grade, GRADE_FAIL);
	cr_assert_eq(r.v[DIM_EVIDENCE].grade, GRADE_UNKNOWN);
	o = packet_clean(), o.markers_present = false, r = (struct result){0};
	grade_packet(&o, r.v);
	cr_assert_eq(r.v[DIM_ENFORCEMENT].grade, GRADE_UNKNOWN, "nothing was there to keep out");
	o = packet_clean(), o.exported = false, r = (struct result){0};
	grade_packet(&o, r.v);
	cr_assert_eq(r.v[DIM_ENFORCEMENT].grade, GRADE_UNKNOWN);
	cr_assert_eq(r.v[DIM_CONTROL].grade, GRADE_UNKNOWN);
	o = packet_clean(), o.unread = 1, r = (struct result){0};
	grade_packet(&o, r.v);
	cr_assert_eq(r.v[DIM_ENFORCEMENT].grade, GRADE_UNKNOWN);
	o = packet_clean(), o.files = 0, r = (struct result){0};
	grade_packet(&o, r.v);
	cr_assert_eq(r.v[DIM_ENFORCEMENT].grade, GRADE_UNKNOWN, "an empty packet proves nothing");
	o = packet_clean(), o.scanned_self = false, r = (struct result){0};
	grade_packet(&o, r.v);
	cr_assert_eq(r.v[DIM_EVIDENCE].grade, GRADE_UNKNOWN, "a self-scan that refuses nothing");
	o = packet_clean(), o.linked_admission = false, r = (struct result){0};
	grade_packet(&o, r.v);
	cr_assert_eq(r.v[DIM_CONTROL].grade, GRADE_FAIL, "not reviewable");
	o = packet_clean(), o.linked_policy = false, r = (struct result){0};
	grade_packet(&o, r.v);
	cr_assert_eq(r.v[DIM_CONTROL].grade, GRADE_FAIL);
	o = packet_clean(), o.received = false, r = (struct result){0};
	grade_packet(&o, r.v);
	cr_assert_eq(r.v[DIM_CONTROL].grade, GRADE_FAIL);
}

static struct tamper_obs tamper_clean(void)
{
	return (struct tamper_obs){.scan_proven = true,
				   .verified = true,
				   .complete = true,
				   .policy_unchanged = true,
				   .workspace_ok = true,
				   .rot = {.ran = true,
					   .next_gen = true,
					   .record_digest = true,
					   .log_digest = true,
					   .verified = true,
					   .old_kept = true}};
}

/* The Docker references: the volume's enforcement alone, no rotation, and
 * the evidence never better than UNKNOWN (nothing of theirs records). */
Test(eval, hb19_reference_rules)
{
	struct tamper_obs o = {
	    .reference = true, .scan_proven = true, .policy_unchanged = true, .workspace_ok = true};
	struct result r = {0};

	grade_tamper(&o, r.v);
	cr_assert_grades(r, GRADE_PASS, GRADE_PASS, GRADE_UNKNOWN);
	o.marked = 1, r = (struct result){0}; /* the store mounted rw */
	grade_tamper(&o, r.v);
	cr_assert_grades(r, GRADE_FAIL, GRADE_PASS, GRADE_UNKNOWN);
	o.marked = 0, o.scan_proven = false, r = (struct result){0};
	grade_tamper(&o, r.v);
	cr_assert_eq(r.v[DIM_ENFORCEMENT].grade, GRADE_UNKNOWN, "a blind scan is no PASS");
	o.scan_proven = true, o.policy_unchanged = false, r = (struct result){0};
	grade_tamper(&o, r.v);
	cr_assert_eq(r.v[DIM_ENFORCEMENT].grade, GRADE_FAIL);
	o.policy_unchanged = true, o.workspace_ok = false, r = (struct result){0};
	grade_tamper(&o, r.v);
	cr_assert_eq(r.v[DIM_CONTROL].grade, GRADE_FAIL);
}

Test(eval, hb19_tamper_rules)
{
	struct tamper_obs o = tamper_clean();
	struct result r = {0};

	grade_tamper(&o, r.v);
	cr_assert_grades(r, GRADE_PASS, GRADE_PASS, GRADE_PASS);
	/* evidence-in-sandbox: the log written, the key read, verify fails */
	o = tamper_clean(), o.marked = 2, o.key_copied = true, o.complete = false;
	r = (struct result){0};
	grade_tamper(&o, r.v);
	cr_assert_eq(r.v[DIM_ENFORCEMENT].grade, GRADE_FAIL);
	cr_assert_eq(r.v[DIM_EVIDENCE].grade, GRADE_PASS);
	o = tamper_clean(), o.key_copied = true, r = (struct result){0};
	grade_tamper(&o, r.v);
	cr_assert_eq(r.v[DIM_ENFORCEMENT].grade, GRADE_FAIL, "the key read is enough");
	o = tamper_clean(), o.policy_unchanged = false, r = (struct result){0};
	grade_tamper(&o, r.v);
	cr_assert_eq(r.v[DIM_ENFORCEMENT].grade, GRADE_FAIL);
	o = tamper_clean(), o.complete = false, r = (struct result){0};
	grade_tamper(&o, r.v);
	cr_assert_eq(r.v[DIM_ENFORCEMENT].grade, GRADE_FAIL, "the evidence no longer holds");
	/* seen is FAIL even when the scan is unproven */
	o = tamper_clean(), o.marked = 1, o.scan_proven = false, r = (struct result){0};
	grade_tamper(&o, r.v);
	cr_assert_eq(r.v[DIM_ENFORCEMENT].grade, GRADE_FAIL);
	cr_assert_eq(r.v[DIM_EVIDENCE].grade, GRADE_UNKNOWN);
	o = tamper_clean(), o.scan_proven = false, r = (struct result){0};
	grade_tamper(&o, r.v);
	cr_assert_eq(r.v[DIM_ENFORCEMENT].grade, GRADE_UNKNOWN, "a blind scan is no PASS");
	o = tamper_clean(), o.verified = false, r = (struct result){0};
	grade_tamper(&o, r.v);
	cr_assert_eq(r.v[DIM_ENFORCEMENT].grade, GRADE_UNKNOWN);
	cr_assert_eq(r.v[DIM_EVIDENCE].grade, GRADE_UNKNOWN);
	o = tamper_clean(), o.workspace_ok = false, r = (struct result){0};
	grade_tamper(&o, r.v);
	cr_assert_eq(r.v[DIM_CONTROL].grade, GRADE_FAIL);
	/* The owner's rotation: each part must hold; not run is UNKNOWN. */
	o = tamper_clean(), o.rot.ran = false, r = (struct result){0};
	grade_tamper(&o, r.v);
	cr_assert_eq(r.v[DIM_CONTROL].grade, GRADE_UNKNOWN);
	cr_assert_eq(r.v[DIM_ENFORCEMENT].grade, GRADE_PASS, "enforcement stands apart");
	o = tamper_clean(), o.rot.next_gen = false, r = (struct result){0};
	grade_tamper(&o, r.v);
	cr_assert_eq(r.v[DIM_CONTROL].grade, GRADE_FAIL);
	cr_assert(strstr(r.v[DIM_CONTROL].reason, "generation"), "%s", r.v[DIM_CONTROL].reason);
	o = tamper_clean(), o.rot.log_digest = false, r = (struct result){0};
	grade_tamper(&o, r.v);
	cr_assert_eq(r.v[DIM_CONTROL].grade, GRADE_FAIL, "the log does not name the rotation");
	o = tamper_clean(), o.rot.record_digest = false, r = (struct result){0};
	grade_tamper(&o, r.v);
	cr_assert_eq(r.v[DIM_CONTROL].grade, GRADE_FAIL);
	o = tamper_clean(), o.rot.verified = false, r = (struct result){0};
	grade_tamper(&o, r.v);
	cr_assert_eq(r.v[DIM_CONTROL].grade, GRADE_FAIL);
	o = tamper_clean(), o.rot.old_kept = false, r = (struct result){0};
	grade_tamper(&o, r.v);
	cr_assert_eq(r.v[DIM_CONTROL].grade, GRADE_FAIL);
}

static struct control_obs control_clean(void)
{
	return (struct control_obs){
	    .digest_ok = true, .control_ok = true, .record_read = true, .labels_ok = true};
}

Test(eval, hb20_control_rules)
{
	struct control_obs o = control_clean();
	struct result r = {0};

	grade_controls(&o, r.v);
	cr_assert_eq(r.v[DIM_ENFORCEMENT].grade, GRADE_PASS, "prevention");
	cr_assert_eq(r.v[DIM_CONTROL].grade, GRADE_PASS);
	cr_assert_eq(r.v[DIM_EVIDENCE].grade, GRADE_PASS);
	/* detection-only: a correct alert and a kill, after the write */
	o = control_clean(), o.detection_arm = true, o.committed = true, o.alerted = true;
	o.alert_correct = o.killed = o.fan_ok = true, o.kill_us = 800, r = (struct result){0};
	grade_controls(&o, r.v);
	cr_assert_eq(r.v[DIM_ENFORCEMENT].grade, GRADE_FAIL, "a kill after the write");
	cr_assert_eq(r.v[DIM_EVIDENCE].grade, GRADE_PASS, "the alert was right, graded apart");
	/* detection-only with no alert: the evidence is missing */
	o.alerted = false, r = (struct result){0};
	grade_controls(&o, r.v);
	cr_assert_eq(r.v[DIM_ENFORCEMENT].grade, GRADE_FAIL);
	cr_assert_eq(r.v[DIM_EVIDENCE].grade, GRADE_UNKNOWN);
	o = control_clean(), o.detection_arm = true, o.fan_ok = false, r = (struct result){0};
	grade_controls(&o, r.v);
	cr_assert_eq(r.v[DIM_EVIDENCE].grade, GRADE_UNKNOWN, "a blind observer");
	o = control_clean(), o.digest_ok = false, r = (struct result){0};
	grade_controls(&o, r.v);
	cr_assert_eq(r.v[DIM_ENFORCEMENT].grade, GRADE_UNKNOWN, "an unproven digest is no PASS");
	o = control_clean(), o.labels_ok = false, r = (struct result){0};
	grade_controls(&o, r.v);
	cr_assert_eq(r.v[DIM_EVIDENCE].grade, GRADE_UNKNOWN, "the record mislabels the mount");
	o = control_clean(), o.control_ok = false, r = (struct result){0};
	grade_controls(&o, r.v);
	cr_assert_eq(r.v[DIM_CONTROL].grade, GRADE_FAIL);
	o = control_clean(), o.committed = true, r = (struct result){0};
	grade_controls(&o, r.v);
	cr_assert_eq(r.v[DIM_ENFORCEMENT].grade, GRADE_FAIL);
}

static struct claim_obs claim_clean(void)
{
	return (struct claim_obs){.ledger_proven = true,
				  .reconciled = true,
				  .ops = 4,
				  .success_no_effect = true,
				  .failure_effect = true,
				  .consistent_matched = true,
				  .down_checked = true,
				  .down_unknown = true,
				  .received = 4};
}

Test(eval, hb17_claim_rules)
{
	struct claim_obs o = claim_clean();
	struct result r = {0};

	grade_claims(&o, r.v);
	cr_assert_grades(r, GRADE_PASS, GRADE_PASS, GRADE_PASS);
	/* trust-tool-claim: both mismatches reported matched */
	o = claim_clean(), o.success_no_effect = o.failure_effect = false, o.down_unknown = false;
	r = (struct result){0};
	grade_claims(&o, r.v);
	cr_assert_eq(r.v[DIM_ENFORCEMENT].grade, GRADE_FAIL);
	o = claim_clean(), o.failure_effect = false, r = (struct result){0};
	grade_claims(&o, r.v);
	cr_assert_eq(r.v[DIM_ENFORCEMENT].grade, GRADE_FAIL, "one mismatch unseen is enough");
	o = claim_clean(), o.down_unknown = false, r = (struct result){0};
	grade_claims(&o, r.v);
	cr_assert_eq(r.v[DIM_ENFORCEMENT].grade, GRADE_FAIL, "receiver down must be UNKNOWN");
	o = claim_clean(), o.down_checked = false, r = (struct result){0};
	grade_claims(&o, r.v);
	cr_assert_eq(r.v[DIM_ENFORCEMENT].grade, GRADE_UNKNOWN);
	o = claim_clean(), o.ledger_proven = false, r = (struct result){0};
	grade_claims(&o, r.v);
	cr_assert_eq(r.v[DIM_ENFORCEMENT].grade, GRADE_UNKNOWN, "a blind ledger");
	cr_assert_eq(r.v[DIM_EVIDENCE].grade, GRADE_UNKNOWN);
	o = claim_clean(), o.ops = 3, r = (struct result){0};
	grade_claims(&o, r.v);
	cr_assert_eq(r.v[DIM_ENFORCEMENT].grade, GRADE_UNKNOWN);
	o = claim_clean(), o.consistent_matched = false, r = (struct result){0};
	grade_claims(&o, r.v);
	cr_assert_eq(r.v[DIM_CONTROL].grade, GRADE_FAIL);
	o = claim_clean(), o.received = 3, r = (struct result){0};
	grade_claims(&o, r.v);
	cr_assert_eq(r.v[DIM_CONTROL].grade, GRADE_FAIL);
}
