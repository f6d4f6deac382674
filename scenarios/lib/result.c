/* One result per case and arm: its set-up, evidence lines, mocks and the
 * last word before reporting; and the run's growing list of results. Pure
 * apart from malloc, so tests/unit/test_eval.c links it. */
#include "eval.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void copy(char *dst, size_t n, const char *src)
{
	snprintf(dst, n, "%s", src ? src : "");
}

void result_evidence(struct result *r, const char *source, const char *fmt, ...)
{
	va_list ap;
	struct evidence *e;

	if (r->n_ev >= EVAL_MAX_EVIDENCE) {
		r->ev_dropped++;
		return;
	}
	e = &r->ev[r->n_ev++];
	copy(e->source, sizeof(e->source), source);
	va_start(ap, fmt);
	vsnprintf(e->text, sizeof(e->text), fmt, ap);
	va_end(ap);
}

void result_init(struct result *r, const char *case_id, const char *title, const char *arm)
{
	memset(r, 0, sizeof(*r));
	copy(r->case_id, sizeof(r->case_id), case_id);
	copy(r->title, sizeof(r->title), title);
	copy(r->arm, sizeof(r->arm), arm);
	if (strncmp(arm, "weakened:", 9) == 0) {
		r->kind = ARM_WEAKENED;
		copy(r->knob, sizeof(r->knob), arm + 9);
	} else if (strcmp(arm, "docker") == 0 || strncmp(arm, "docker:", 7) == 0) {
		r->kind = ARM_DOCKER;
	} else if (strncmp(arm, "oci-weakened:", 13) == 0) {
		/* The oci arm with one protection removed: must FAIL. */
		r->kind = ARM_WEAKENED;
		r->oci = true;
		copy(r->knob, sizeof(r->knob), arm + 13);
	} else if (strncmp(arm, "oci:", 4) == 0) {
		r->kind = ARM_DOCKER;
		r->oci = true;
	} else if (strcmp(arm, "broken-collector") == 0) {
		r->kind = ARM_BROKEN_COLLECTOR;
	} else {
		r->kind = ARM_ENFORCED;
	}
	for (int d = 0; d < DIM_COUNT; d++)
		r->v[d].grade = GRADE_UNKNOWN;
}

void result_mock(struct result *r, const char *what)
{
	if (r->n_mocks < EVAL_MAX_MOCKS)
		copy(r->mocks[r->n_mocks++], sizeof(r->mocks[0]), what);
}

void result_artifact(struct result *r, const char *label, const char *relpath)
{
	if (r->n_artifacts == EVAL_MAX_ARTIFACTS) {
		r->ev_dropped++;
		return;
	}
	copy(r->artifacts[r->n_artifacts].label, sizeof(r->artifacts[0].label), label);
	copy(r->artifacts[r->n_artifacts].path, sizeof(r->artifacts[0].path), relpath);
	r->n_artifacts++;
}

void result_not_executed(struct result *r, const char *reason)
{
	for (int d = 0; d < DIM_COUNT; d++)
		if (!r->v[d].set)
			verdict_set(&r->v[d], GRADE_NOT_EXECUTED, reason, NULL);
}

void result_finish(struct result *r)
{
	/* A step of the arm that could not run as written (a word of its
	 * argv did not fit) voids every grade: what ran was not the case. */
	if (r->not_run[0])
		for (int d = 0; d < DIM_COUNT; d++)
			verdict_set(&r->v[d], GRADE_NOT_EXECUTED, r->not_run, NULL);
	for (int d = 0; d < DIM_COUNT; d++)
		if (!r->v[d].set)
			verdict_set(&r->v[d], GRADE_UNKNOWN,
				    "missing evidence: the driver did not grade this dimension",
				    NULL);
	result_check_alarm(r);
}

void result_not_run(struct result *r, const char *reason)
{
	if (!r->not_run[0])
		copy(r->not_run, sizeof(r->not_run), reason);
}

int results_next(struct results *rs, struct result **out)
{
	if (rs->n == rs->cap) {
		size_t cap = rs->cap ? rs->cap * 2 : 16;
		struct result *v;

		if (cap > EVAL_MAX_RESULTS)
			cap = EVAL_MAX_RESULTS;
		/* A bound, loud: a run that wants more results than cases
		 * times arms can have is a harness defect, not a reason to
		 * drop the rest. */
		if (rs->n >= cap)
			return -E2BIG;
		v = realloc(rs->v, cap * sizeof(*v));
		if (!v)
			return -ENOMEM;
		rs->v = v;
		rs->cap = cap;
	}
	*out = &rs->v[rs->n++];
	memset(*out, 0, sizeof(**out));
	return 0;
}

void results_free(struct results *rs)
{
	free(rs->v);
	rs->v = NULL;
	rs->n = rs->cap = 0;
}
