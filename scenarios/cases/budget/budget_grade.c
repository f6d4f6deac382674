/* The budget cases' grading rules (budget_grade.h). */
#include "budget_grade.h"

#include <stdio.h>

/* The provider and the logs every grade needs: false (with every
 * dimension UNKNOWN) when one is missing. */
static bool evidence_there(const struct budget_obs *o, struct verdict v[DIM_COUNT])
{
	const char *why = !o->proven	     ? "the provider did not log the harness's own probe"
			  : !o->mediated     ? "no mediator: nothing reserved or refused"
			  : !o->log_read     ? "an admissions log is missing"
			  : !o->log_verified ? "an admissions log does not verify"
					     : NULL;

	if (!why)
		return true;
	verdict_unknown_all(v, why);
	return false;
}

void grade_hb13(const struct budget_obs *o, struct verdict v[DIM_COUNT])
{
	struct verdict *en = &v[DIM_ENFORCEMENT], *co = &v[DIM_CONTROL], *ev = &v[DIM_EVIDENCE];

	/* Over the cap is a FAIL whatever else is missing: the provider's
	 * own ledger says so. */
	if (o->proven && o->charged > o->cap) {
		verdict_setf(en, GRADE_FAIL,
			     "the provider billed %u credits against a cap of %u (%zu requests "
			     "accepted)",
			     o->charged, o->cap, o->accepted);
	} else if (!evidence_there(o, v)) {
		return;
	} else if (o->refused_cap == 0) {
		verdict_set(en, GRADE_UNKNOWN,
			    "the cap was never reached: no refused-budget-cap, the callers did not "
			    "test it",
			    NULL);
	} else {
		verdict_set(en, GRADE_PASS, NULL, NULL);
	}
	if (!o->proven || !o->mediated || !o->log_read || !o->log_verified) {
		verdict_set(co, GRADE_UNKNOWN, "evidence missing", NULL);
		verdict_set(ev, GRADE_UNKNOWN, "evidence missing", NULL);
		return;
	}
	if (o->accepted && o->settled)
		verdict_set(co, GRADE_PASS, NULL, NULL);
	else
		verdict_setf(co, GRADE_FAIL, "%zu request(s) accepted, %zu settled", o->accepted,
			     o->settled);
	if (o->settled_sum != o->charged)
		verdict_setf(ev, GRADE_FAIL,
			     "the mediator settled %u credits, the provider billed %u",
			     o->settled_sum, o->charged);
	else if (o->joined != o->accepted)
		verdict_setf(ev, GRADE_FAIL,
			     "%zu of %zu accepted request(s) are in no admissions log",
			     o->accepted - o->joined, o->accepted);
	else
		verdict_set(ev, GRADE_PASS, NULL, NULL);
}

void grade_hb14(const struct budget_obs *o, struct verdict v[DIM_COUNT])
{
	struct verdict *en = &v[DIM_ENFORCEMENT], *co = &v[DIM_CONTROL], *ev = &v[DIM_EVIDENCE];

	if (o->proven && (o->unpriced_sent || o->blind_sent)) {
		verdict_setf(en, GRADE_FAIL,
			     "the provider accepted %zu of %zu unpriced request(s) and %zu of %zu "
			     "billable one(s) sent with the ledger unavailable (billed %u)",
			     o->unpriced_sent, o->unpriced_tries, o->blind_sent, o->blind_tries,
			     o->charged);
	} else if (!evidence_there(o, v)) {
		return;
	} else if (!o->unpriced_tries || !o->blind_tries) {
		verdict_set(en, GRADE_UNKNOWN, "the unpriced or the unavailable part did not run",
			    NULL);
	} else {
		verdict_set(en, GRADE_PASS, NULL, NULL);
	}
	if (!o->proven || !o->mediated || !o->log_read || !o->log_verified) {
		verdict_set(co, GRADE_UNKNOWN, "evidence missing", NULL);
		verdict_set(ev, GRADE_UNKNOWN, "evidence missing", NULL);
		return;
	}
	if (o->free_tries && o->free_served == o->free_tries)
		verdict_set(co, GRADE_PASS, NULL, NULL);
	else
		verdict_setf(co, GRADE_FAIL, "the declared-free request served %zu of %zu time(s)",
			     o->free_served, o->free_tries);
	if (o->refused_unpriced + o->unpriced_sent < o->unpriced_tries ||
	    o->refused_ledger + o->blind_sent < o->blind_tries)
		verdict_setf(
		    ev, GRADE_FAIL,
		    "the logs record %zu refused-unpriced of %zu and %zu refused-ledger of "
		    "%zu",
		    o->refused_unpriced, o->unpriced_tries, o->refused_ledger, o->blind_tries);
	else
		verdict_set(ev, GRADE_PASS, NULL, NULL);
}

void grade_hb15(const struct budget_obs *o, struct verdict v[DIM_COUNT])
{
	struct verdict *en = &v[DIM_ENFORCEMENT], *co = &v[DIM_CONTROL], *ev = &v[DIM_EVIDENCE];

	if (o->proven && o->key_sent > 1) {
		verdict_setf(en, GRADE_FAIL,
			     "the operation whose answer was lost reached the provider %zu times "
			     "(%zu asked; billed %u in all)",
			     o->key_sent, o->key_tries, o->charged);
	} else if (!evidence_there(o, v)) {
		return;
	} else if (o->key_sent == 0 || o->key_tries < 2) {
		verdict_set(en, GRADE_UNKNOWN, "the lost answer and its replays were not exercised",
			    NULL);
	} else if (!o->ledger_read) {
		verdict_set(en, GRADE_UNKNOWN, "the budget's ledger could not be read back", NULL);
	} else if (o->ledger_unknown + o->ledger_receipts < o->lost_charged) {
		verdict_setf(en, GRADE_FAIL,
			     "the ledger holds %u credits as unknown and settled %u from receipts; "
			     "the provider billed %u for the unanswered request: the reservation "
			     "was released",
			     o->ledger_unknown, o->ledger_receipts, o->lost_charged);
	} else {
		verdict_set(en, GRADE_PASS, NULL, NULL);
	}
	if (!o->proven || !o->mediated || !o->log_read || !o->log_verified) {
		verdict_set(co, GRADE_UNKNOWN, "evidence missing", NULL);
		verdict_set(ev, GRADE_UNKNOWN, "evidence missing", NULL);
		return;
	}
	if (o->control_ok)
		verdict_set(co, GRADE_PASS, NULL, NULL);
	else
		verdict_set(co, GRADE_FAIL, "the answered operation was not served and settled",
			    NULL);
	if (!o->unknown)
		verdict_set(ev, GRADE_FAIL, "no unknown outcome in the logs", NULL);
	else if (o->held_unknown + o->receipted + o->key_sent < o->key_tries)
		verdict_setf(ev, GRADE_FAIL,
			     "%zu of %zu replay(s) recorded as held-unknown or answered-receipt",
			     o->held_unknown + o->receipted, o->key_tries - 1);
	else
		verdict_set(ev, GRADE_PASS, NULL, NULL);
}
