/* paddock-eval report's reader (scenarios/lib/merge.c): a record written
 * by report_write_json() reads back into the same result (writing it again
 * gives the same bytes), and what the writer never writes is refused by
 * its key. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../include/err.h"
#include "eval_sample.h"
#include "unit.h"

static char *json_of(const struct result *r, const struct subject *s, size_t *len)
{
	char *buf = NULL;
	FILE *f = open_memstream(&buf, len);

	cr_assert_not_null(f);
	report_write_json(f, r, s);
	fclose(f);
	return buf;
}

Test(eval_merge, every_kind_of_record_reads_back_as_written)
{
	static struct result r[EVAL_SAMPLE_N], back;
	struct subject s, s2;

	eval_sample(r, &s, "/res/run");
	for (size_t i = 0; i < EVAL_SAMPLE_N; i++) {
		struct err err = {0};
		size_t len, len2;
		char *a = json_of(&r[i], &s, &len), *b;

		cr_assert_eq(result_read_json(a, len, &back, &s2, &err), 0, "%s: %s", r[i].arm,
			     err.msg);
		cr_assert_str_eq(back.case_id, r[i].case_id);
		cr_assert_str_eq(back.arm, r[i].arm);
		cr_assert_eq(back.kind, r[i].kind);
		cr_assert(result_agrees(&back, &r[i]));
		back.weakens = r[i].weakens;
		b = json_of(&back, &s2, &len2);
		cr_assert_str_eq(a, b, "%s %s", r[i].case_id, r[i].arm);
		free(a);
		free(b);
	}
}

/* The sample's first record with one substitution (from -> to). */
static void refused(const char *from, const char *to, const char *want)
{
	static struct result r[EVAL_SAMPLE_N], back;
	struct subject s, s2;
	struct err err = {0};
	size_t len;
	char *a, *p, *text;

	eval_sample(r, &s, "/res/run");
	a = json_of(&r[0], &s, &len);
	p = strstr(a, from);
	cr_assert_not_null(p, "%s not in the sample", from);
	cr_assert(asprintf(&text, "%.*s%s%s", (int)(p - a), a, to, p + strlen(from)) > 0);
	cr_assert_lt(result_read_json(text, strlen(text), &back, &s2, &err), 0, "accepted: %s",
		     want);
	cr_assert(strstr(err.msg, want), "message \"%s\", wanted \"%s\"", err.msg, want);
	free(a);
	free(text);
}

Test(eval_merge, what_the_writer_never_writes_is_refused_by_its_key)
{
	refused("\"paddock-eval/1\"", "\"paddock-eval/2\"", "\"record\": \"paddock-eval/2\"");
	refused("\"grade\": \"PASS\"", "\"grade\": \"MAYBE\"",
		"\"grades.enforcement.grade\": unknown grade \"MAYBE\"");
	refused("\"enforcement\"", "\"enforcementx\"", "\"grades.enforcement\": missing");
	refused("\"case\": \"HB-01\"", "\"case\": 1", "\"case\": not a string");
	refused("\"case\": \"HB-01\"", "\"case\": \"HB-0123456789abcdef\"",
		"\"case\": longer than 15 bytes");
	refused("\"seconds\": 1.230", "\"seconds\": -1", "\"seconds\": not a number");
	refused("\"fixture_only\": false", "\"fixture_only\": 0",
		"\"fixture_only\": not a boolean");
	refused("\"mocked\": []", "\"mocked\": [1]", "\"mocked[0]\": not a short string");
	refused("\"evidence\": [", "\"evidence\": 3, \"x\": [", "\"evidence\": not an array");
	refused("\"kernel\": \"6.1.0-test\"", "\"kernel\": \"6.1\\u0000x\"", "a NUL in the record");
	refused("{", "[", "not a JSON object");
}

Test(eval_merge, agreement_is_the_same_grade_in_every_dimension)
{
	static struct result r[EVAL_SAMPLE_N];
	struct result a, b;
	struct subject s;
	char text[64];

	eval_sample(r, &s, "/res/run");
	a = r[0];
	b = r[0];
	snprintf(b.v[DIM_EVIDENCE].reason, sizeof(b.v[DIM_EVIDENCE].reason), "worded otherwise");
	cr_assert(result_agrees(&a, &b));
	b.v[DIM_CONTROL].grade = GRADE_UNKNOWN;
	cr_assert_not(result_agrees(&a, &b));
	result_grades_text(&b, text, sizeof(text));
	cr_assert_str_eq(text, "PASS/UNKNOWN/PASS");
}

/* The oci arm's weakened twin (oci-weakened:KNOB): Docker's steps with
 * paddock oci weakened, graded as a weakened arm (its FAIL is expected, a
 * PASS an alarm); the plain oci arm stays paddock's own (its PASS needed). */
Test(eval_merge, the_oci_arms_weakened_twin_must_fail)
{
	struct result r;
	bool needed = false;

	result_init(&r, "HB-01", "t", "oci-weakened:rw-binds");
	cr_assert_eq(r.kind, ARM_WEAKENED);
	cr_assert(r.oci && result_docker_steps(&r));
	cr_assert_str_eq(r.knob, "rw-binds");
	verdict_set(&r.v[DIM_ENFORCEMENT], GRADE_FAIL, "canary written", NULL);
	verdict_set(&r.v[DIM_CONTROL], GRADE_PASS, NULL, NULL);
	verdict_set(&r.v[DIM_EVIDENCE], GRADE_PASS, NULL, NULL);
	cr_assert_eq(result_dim_outcome(&r, DIM_ENFORCEMENT, &needed), OUTCOME_OK);
	cr_assert(needed);
	cr_assert_not(result_check_alarm(&r));
	verdict_set(&r.v[DIM_ENFORCEMENT], GRADE_PASS, NULL, NULL);
	cr_assert_eq(result_dim_outcome(&r, DIM_ENFORCEMENT, NULL), OUTCOME_UNKNOWN);
	cr_assert(result_check_alarm(&r), "a weakened twin that passes is an alarm");

	result_init(&r, "HB-01", "t", "oci:docker-runtime-paddock");
	cr_assert_eq(r.kind, ARM_DOCKER);
	cr_assert(r.oci && result_docker_steps(&r));
	verdict_set(&r.v[DIM_ENFORCEMENT], GRADE_FAIL, "canary written", NULL);
	cr_assert_eq(result_dim_outcome(&r, DIM_ENFORCEMENT, &needed), OUTCOME_FAIL);
	cr_assert(needed);
}
