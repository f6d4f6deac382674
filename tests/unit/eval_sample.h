/* A run of every kind of result for the report writers: shared by
 * tests/unit/test_eval_html.c and tests/unit/html_fixture.c (which writes
 * it out for tests/check_report_html.py to render in Chromium). */
#pragma once

#include <stdio.h>
#include <string.h>

#include "../../scenarios/lib/eval.h"

#define EVAL_SAMPLE_N 7

/* Hostile text where a workload could shape it: every one must come back
 * as text, never as markup. */
#define EVAL_SAMPLE_HOSTILE "</td></tr><script>alert(1)</script> & \"q\" 'a' <b>x</b>"

static inline void eval_sample(struct result *r, struct subject *s, const char *base)
{
	memset(s, 0, sizeof(*s));
	snprintf(s->paddock_version, sizeof(s->paddock_version), "0.1.0");
	snprintf(s->paddock_commit, sizeof(s->paddock_commit), "abc<def>");
	snprintf(s->paddock_path, sizeof(s->paddock_path), "/usr/bin/paddock");
	snprintf(s->kernel, sizeof(s->kernel), "6.1.0-test");
	snprintf(s->libseccomp, sizeof(s->libseccomp), "2.5.4");
	snprintf(s->docker_client, sizeof(s->docker_client), "none");
	snprintf(s->docker_reason, sizeof(s->docker_reason), "no docker client installed");
	snprintf(s->run_id, sizeof(s->run_id), "20260101T000000Z-1");
	s->workload_uid = 999;

	result_init(&r[0], "HB-01", "Equivalent writes", "enforced");
	for (int d = 0; d < DIM_COUNT; d++)
		verdict_set(&r[0].v[d], GRADE_PASS, NULL, NULL);
	snprintf(r[0].recs[0].path, sizeof(r[0].recs[0].path), "%s/records/HB-01.enforced/r.json",
		 base);
	/* Beside the results directory, not under it (a prefix of its name). */
	snprintf(r[0].recs[1].path, sizeof(r[0].recs[1].path), "%s-other/elsewhere #1.json", base);
	r[0].n_recs = 2;
	r[0].seconds = 1.23;

	result_init(&r[1], "HB-01", "Equivalent writes", "weakened:rw-binds");
	verdict_set(&r[1].v[DIM_ENFORCEMENT], GRADE_FAIL, "canary changed: " EVAL_SAMPLE_HOSTILE,
		    NULL);
	verdict_set(&r[1].v[DIM_CONTROL], GRADE_PASS, NULL, NULL);
	verdict_set(&r[1].v[DIM_EVIDENCE], GRADE_PASS, NULL, NULL);

	result_init(&r[2], "HB-04", "Restored state", "broken-collector");
	verdict_set(&r[2].v[DIM_ENFORCEMENT], GRADE_UNKNOWN, "the collector dropped 3 events",
		    NULL);
	verdict_set(&r[2].v[DIM_CONTROL], GRADE_PASS, NULL, NULL);
	verdict_set(&r[2].v[DIM_EVIDENCE], GRADE_UNKNOWN, "no events", NULL);
	r[2].fixture_only = true;
	snprintf(r[2].fixture_why, sizeof(r[2].fixture_why), "the collector is the harness's");

	result_init(&r[3], "HB-04", "Restored state", "docker");
	for (int d = 0; d < DIM_COUNT; d++)
		verdict_set(&r[3].v[d], GRADE_NOT_EXECUTED, "no docker client installed", NULL);

	result_init(&r[4], "HB-06", "Expiry", "enforced");
	verdict_set(&r[4].v[DIM_ENFORCEMENT], GRADE_FAIL, "2 descendants survived", NULL);
	verdict_set(&r[4].v[DIM_CONTROL], GRADE_PASS, NULL, NULL);
	verdict_set(&r[4].v[DIM_EVIDENCE], GRADE_NOT_APPLICABLE, "no write claim",
		    "HB-06 & expiry");
	result_mock(&r[4], "a mocked \"clock\"");

	/* A weakened arm that did not fail: an alarm. */
	result_init(&r[5], "HB-06", "Expiry", "weakened:no-pidns");
	for (int d = 0; d < DIM_COUNT; d++)
		verdict_set(&r[5].v[d], GRADE_PASS, NULL, NULL);

	/* Nobody graded it: UNKNOWN, missing evidence. */
	result_init(&r[6], "HB-08", "Completion", "enforced");
	for (int i = 0; i < EVAL_SAMPLE_N; i++)
		result_finish(&r[i]);
}
