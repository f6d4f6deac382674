/* Unit tests for HB-16's and HB-21's grading rules (scenarios/cases/
 * budget/hb16_grade.c, change/hb21_grade.c): each protection's FAIL, each
 * missing evidence's UNKNOWN, and the clean runs' PASS. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>

#include "../../scenarios/cases/budget/hb16_grade.h"
#include "../../scenarios/cases/change/hb21_grade.h"
#include "unit.h"

TestSuite(eval_jobs, .fini = unit_leak_check);

static void job(struct hb16_obs *o, const char *id, const char *via, const char *mode,
		const char *state, unsigned charge, const char *rec, unsigned rec_charge)
{
	struct hb16_job *j = &o->j[o->n++];

	*j = (struct hb16_job){.charge = charge,
			       .recorded = true,
			       .rec_charge_known = strcmp(rec, "unknown") != 0,
			       .rec_charge = rec_charge,
			       .rec_exposure = 8};
	snprintf(j->id, sizeof(j->id), "%s", id);
	snprintf(j->via, sizeof(j->via), "%s", via);
	snprintf(j->mode, sizeof(j->mode), "%s", mode);
	snprintf(j->state, sizeof(j->state), "%s", state);
	snprintf(j->rec_state, sizeof(j->rec_state), "%s", rec);
	snprintf(j->rec_lease, sizeof(j->rec_lease), "%s",
		 strcmp(via, "/v1/batch") == 0 ? "outlive" : "session");
}

/* The enforced arm as HB-16 saw it. */
static struct hb16_obs hb16_clean(void)
{
	struct hb16_obs o = {.proven = true,
			     .records_read = true,
			     .asked = 4,
			     .ledger_read = true,
			     .ledger_unknown = 14};

	job(&o, "j1", "/v1/batch", "accept", "completed", 6, "retained", 0);
	job(&o, "j2", "/v1/jobs", "accept", "cancelled", 0, "ended", 0);
	job(&o, "j3", "/v1/jobs", "refuse", "completed", 8, "ended", 8);
	job(&o, "j4", "/v1/jobs", "silent", "running", 8, "unknown", 0);
	return o;
}

static enum grade g16(const struct hb16_obs *o, enum dim d)
{
	struct verdict v[DIM_COUNT] = {0};

	grade_hb16(o, v);
	return v[d].grade;
}

Test(eval_jobs, hb16_rules)
{
	struct hb16_obs o = hb16_clean();

	cr_assert_eq(g16(&o, DIM_ENFORCEMENT), GRADE_PASS);
	cr_assert_eq(g16(&o, DIM_CONTROL), GRADE_PASS);
	cr_assert_eq(g16(&o, DIM_EVIDENCE), GRADE_PASS);
	/* local-exit-is-stop: every job stopped, the accepting one runs on. */
	o = hb16_clean();
	for (size_t i = 0; i < o.n; i++)
		snprintf(o.j[i].rec_state, sizeof(o.j[i].rec_state), "stopped");
	snprintf(o.j[1].state, sizeof(o.j[1].state), "running");
	o.ledger_unknown = 6;
	cr_assert_eq(g16(&o, DIM_ENFORCEMENT), GRADE_FAIL);
	cr_assert_eq(g16(&o, DIM_EVIDENCE), GRADE_FAIL);
	o = hb16_clean(), snprintf(o.j[1].state, sizeof(o.j[1].state), "running");
	cr_assert_eq(g16(&o, DIM_ENFORCEMENT), GRADE_FAIL, "recorded ended, runs on");
	o = hb16_clean(), o.j[0].foreign = 1;
	cr_assert_eq(g16(&o, DIM_ENFORCEMENT), GRADE_FAIL, "another session's cancel");
	o = hb16_clean(), snprintf(o.j[0].state, sizeof(o.j[0].state), "cancelled");
	cr_assert_eq(g16(&o, DIM_ENFORCEMENT), GRADE_FAIL, "the outlive job cancelled");
	cr_assert_eq(g16(&o, DIM_CONTROL), GRADE_FAIL);
	o = hb16_clean(), o.j[2].charge = 9;
	cr_assert_eq(g16(&o, DIM_ENFORCEMENT), GRADE_FAIL, "over the exposure");
	o = hb16_clean(), o.j[2].recorded = false;
	cr_assert_eq(g16(&o, DIM_ENFORCEMENT), GRADE_FAIL, "in no record");
	cr_assert_eq(g16(&o, DIM_EVIDENCE), GRADE_FAIL);
	o = hb16_clean(), o.j[2].rec_charge = 3;
	cr_assert_eq(g16(&o, DIM_EVIDENCE), GRADE_FAIL, "a charge not the service's");
	o = hb16_clean(), snprintf(o.j[3].rec_state, sizeof(o.j[3].rec_state), "ended");
	cr_assert_eq(g16(&o, DIM_EVIDENCE), GRADE_FAIL, "an unconfirmed end");
	cr_assert_eq(g16(&o, DIM_ENFORCEMENT), GRADE_PASS, "the silent job is evidence only");
	o = hb16_clean(), snprintf(o.j[2].rec_state, sizeof(o.j[2].rec_state), "unknown");
	cr_assert_eq(g16(&o, DIM_ENFORCEMENT), GRADE_UNKNOWN, "not confirmed in time: no claim");
	o = hb16_clean(), snprintf(o.j[1].state, sizeof(o.j[1].state), "running");
	snprintf(o.j[1].rec_state, sizeof(o.j[1].rec_state), "unknown");
	cr_assert_eq(g16(&o, DIM_ENFORCEMENT), GRADE_UNKNOWN, "runs on, honestly unknown");
	o = hb16_clean(), o.ledger_unknown = 7;
	cr_assert_eq(g16(&o, DIM_EVIDENCE), GRADE_FAIL, "its exposure not held");
	o = hb16_clean(), o.ledger_read = false;
	cr_assert_eq(g16(&o, DIM_EVIDENCE), GRADE_UNKNOWN);
	o = hb16_clean(), snprintf(o.j[0].state, sizeof(o.j[0].state), "running");
	cr_assert_eq(g16(&o, DIM_CONTROL), GRADE_UNKNOWN, "not finished yet");
	o = hb16_clean(), o.n = 3, o.j[2].recorded = true;
	cr_assert_eq(g16(&o, DIM_ENFORCEMENT), GRADE_UNKNOWN, "a job asked is missing");
	o = hb16_clean(), o.proven = false;
	cr_assert_eq(g16(&o, DIM_ENFORCEMENT), GRADE_UNKNOWN);
	cr_assert_eq(g16(&o, DIM_EVIDENCE), GRADE_UNKNOWN);
	o = hb16_clean(), o.records_read = false;
	cr_assert_eq(g16(&o, DIM_CONTROL), GRADE_UNKNOWN);
}

static void op(struct hb21_obs *o, const char *key, const char *ad, const char *route,
	       enum hb21_want want)
{
	static const char *const dec[] = {"allowed", "refused-action", "refused-unparsed"};
	struct hb21_op *p = &o->op[o->n++];

	*p = (struct hb21_op){.key = key,
			      .adapter = ad,
			      .route = route,
			      .want = want,
			      .reached = want == HB21_ALLOW,
			      .logged = true,
			      .reserved = want == HB21_ALLOW,
			      .settled = want == HB21_ALLOW};
	snprintf(p->decision, sizeof(p->decision), "%s", dec[want]);
	snprintf(p->log_adapter, sizeof(p->log_adapter), "%s", ad);
	snprintf(p->log_route, sizeof(p->log_route), "%s", route);
	snprintf(p->log_model, sizeof(p->log_model), "%s", want == HB21_ALLOW ? "small" : "");
}

static struct hb21_obs hb21_clean(void)
{
	struct hb21_obs o = {.proven = true,
			     .log_read = true,
			     .log_verified = true,
			     .charged = 12,
			     .settled_sum = 12};

	op(&o, "ok-oa", "openai", "primary", HB21_ALLOW);
	op(&o, "deny-oa", "openai", "primary", HB21_DENY);
	op(&o, "ok-an", "anthropic", "primary", HB21_ALLOW);
	op(&o, "unknown", "openai", "primary", HB21_UNKNOWN);
	op(&o, "ok-fb", "openai", "fallback", HB21_ALLOW);
	return o;
}

static enum grade g21(const struct hb21_obs *o, enum dim d)
{
	struct verdict v[DIM_COUNT] = {0};

	grade_hb21(o, v);
	return v[d].grade;
}

Test(eval_jobs, hb21_rules)
{
	struct hb21_obs o = hb21_clean();

	cr_assert_eq(g21(&o, DIM_ENFORCEMENT), GRADE_PASS);
	cr_assert_eq(g21(&o, DIM_CONTROL), GRADE_PASS);
	cr_assert_eq(g21(&o, DIM_EVIDENCE), GRADE_PASS);
	/* unknown-event-allow: it reached the provider, logged allowed. */
	o = hb21_clean(), o.op[3].reached = 1, snprintf(o.op[3].decision, 32, "allowed");
	cr_assert_eq(g21(&o, DIM_ENFORCEMENT), GRADE_FAIL);
	cr_assert_eq(g21(&o, DIM_EVIDENCE), GRADE_FAIL);
	o = hb21_clean(), o.op[1].reached = 1;
	cr_assert_eq(g21(&o, DIM_ENFORCEMENT), GRADE_FAIL, "a refused action reached");
	o = hb21_clean(), o.op[1].reached = 1, o.proven = false;
	cr_assert_eq(g21(&o, DIM_ENFORCEMENT), GRADE_UNKNOWN, "no proof the providers log");
	o = hb21_clean(), o.op[1].reached = 1, o.log_verified = false;
	cr_assert_eq(g21(&o, DIM_ENFORCEMENT), GRADE_FAIL, "the providers' ledger is enough");
	cr_assert_eq(g21(&o, DIM_EVIDENCE), GRADE_UNKNOWN);
	o = hb21_clean(), o.op[4].reserved = false;
	cr_assert_eq(g21(&o, DIM_ENFORCEMENT), GRADE_FAIL, "the fallback bypassed the ledger");
	o = hb21_clean(), o.op[2].reached = 0, o.op[2].settled = false;
	cr_assert_eq(g21(&o, DIM_CONTROL), GRADE_FAIL);
	o = hb21_clean(), snprintf(o.op[4].log_route, 16, "primary");
	cr_assert_eq(g21(&o, DIM_EVIDENCE), GRADE_FAIL, "the route actually used not recorded");
	o = hb21_clean(), snprintf(o.op[0].log_model, 72, "large");
	cr_assert_eq(g21(&o, DIM_EVIDENCE), GRADE_FAIL);
	o = hb21_clean(), o.settled_sum = 8;
	cr_assert_eq(g21(&o, DIM_EVIDENCE), GRADE_FAIL, "the ledger short of the providers");
	o = hb21_clean(), o.op[1].logged = false;
	cr_assert_eq(g21(&o, DIM_ENFORCEMENT), GRADE_UNKNOWN);
	o = hb21_clean(), o.log_read = false;
	cr_assert_eq(g21(&o, DIM_CONTROL), GRADE_UNKNOWN);
}
