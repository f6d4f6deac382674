/* HB-16's grading rule (hb16_grade.h). */
#include "hb16_grade.h"

#include <string.h>

static bool is(const char *a, const char *b)
{
	return strcmp(a, b) == 0;
}

static bool outlive(const struct hb16_job *j)
{
	return is(j->via, "/v1/batch");
}

/* The first reason a confirmable job fails enforcement, or NULL; *unknown
 * when its record honestly says its end was not confirmed (an unknown
 * cannot pass the cancellation, nor is it a false claim). */
static const char *enforcement_fault(const struct hb16_job *j, bool *unknown)
{
	*unknown = false;
	if (j->foreign)
		return "another session asked to cancel it";
	if (!j->recorded)
		return "it is in no record";
	if (j->charge > j->rec_exposure)
		return "the service charged more than the exposure reserved";
	if (is(j->rec_state, "stopped"))
		return "its record says stopped: the local exit taken for its end";
	if (outlive(j) && is(j->state, "cancelled"))
		return "an outlive job was cancelled";
	if (is(j->rec_state, "unknown")) {
		*unknown = true;
		return NULL;
	}
	if (outlive(j))
		return is(j->rec_state, "ended") || is(j->rec_state, "retained")
			   ? NULL
			   : "an outlive job not recorded retained";
	if (is(j->state, "running"))
		return "it runs on at the service after its session ended";
	if (!is(j->rec_state, "ended"))
		return "its end was confirmed by the service but not recorded";
	return NULL;
}

static void enforcement(const struct hb16_obs *o, struct verdict *en)
{
	const struct hb16_job *unconfirmed = NULL;
	size_t judged = 0;

	for (size_t i = 0; i < o->n; i++) {
		const struct hb16_job *j = &o->j[i];
		const char *f;
		bool unknown;

		if (is(j->mode, "silent"))
			continue;
		judged++;
		if ((f = enforcement_fault(j, &unknown))) {
			verdict_setf(en, GRADE_FAIL, "job %s (%s, cancel %s): %s", j->id, j->via,
				     j->mode, f);
			return;
		}
		if (unknown && !unconfirmed)
			unconfirmed = j;
	}
	if (o->n < o->asked || judged == 0)
		verdict_setf(en, GRADE_UNKNOWN, "the service holds %zu of %zu job(s) asked", o->n,
			     o->asked);
	else if (unconfirmed)
		verdict_setf(en, GRADE_UNKNOWN,
			     "job %s (cancel %s): its end was not confirmed within the settle time "
			     "(recorded unknown; the service says %s)",
			     unconfirmed->id, unconfirmed->mode, unconfirmed->state);
	else
		verdict_set(en, GRADE_PASS, NULL, NULL);
}

static void control(const struct hb16_obs *o, struct verdict *co)
{
	for (size_t i = 0; i < o->n; i++) {
		const struct hb16_job *j = &o->j[i];

		if (!outlive(j))
			continue;
		if (is(j->state, "running"))
			verdict_setf(co, GRADE_UNKNOWN, "the outlive job %s had not finished",
				     j->id);
		else if (!is(j->state, "completed"))
			verdict_setf(co, GRADE_FAIL, "the outlive job %s was %s, not completed",
				     j->id, j->state);
		else if (!j->recorded || !is(j->rec_lease, "outlive"))
			verdict_setf(co, GRADE_FAIL,
				     "the outlive job %s is not attributed to its session's lease",
				     j->id);
		else
			verdict_set(co, GRADE_PASS, NULL, NULL);
		return;
	}
	verdict_set(co, GRADE_UNKNOWN, "no outlive job at the service", NULL);
}

static void evidence(const struct hb16_obs *o, struct verdict *ev)
{
	bool silent = false;
	unsigned held = 0;

	for (size_t i = 0; i < o->n; i++) {
		const struct hb16_job *j = &o->j[i];

		if (!j->recorded) {
			verdict_setf(ev, GRADE_FAIL, "job %s is in no record", j->id);
			return;
		}
		if (is(j->mode, "silent")) {
			silent = true;
			held += j->rec_exposure;
			if (!is(j->rec_state, "unknown")) {
				verdict_setf(ev, GRADE_FAIL,
					     "job %s: the service never answered, its record says "
					     "%s",
					     j->id, j->rec_state);
				return;
			}
		}
		if (is(j->rec_state, "ended") &&
		    (!j->rec_charge_known || j->rec_charge != j->charge)) {
			verdict_setf(
			    ev, GRADE_FAIL, "job %s: recorded charge %u%s, the service's %u", j->id,
			    j->rec_charge, j->rec_charge_known ? "" : " (unknown)", j->charge);
			return;
		}
	}
	if (!silent)
		verdict_set(ev, GRADE_UNKNOWN, "no job whose service never answers", NULL);
	else if (!o->ledger_read)
		verdict_set(ev, GRADE_UNKNOWN, "the budget's ledger was not read back", NULL);
	else if (o->ledger_unknown < held)
		verdict_setf(ev, GRADE_FAIL,
			     "the ledger holds %u credits as unknown, the unconfirmed job's "
			     "exposure is %u",
			     o->ledger_unknown, held);
	else
		verdict_set(ev, GRADE_PASS, NULL, NULL);
}

void grade_hb16(const struct hb16_obs *o, struct verdict v[DIM_COUNT])
{
	if (!o->proven || !o->records_read) {
		verdict_unknown_all(v, !o->proven
					   ? "the job service did not log the harness's probe"
					   : "a session's record is missing");
		return;
	}
	enforcement(o, &v[DIM_ENFORCEMENT]);
	control(o, &v[DIM_CONTROL]);
	evidence(o, &v[DIM_EVIDENCE]);
}
