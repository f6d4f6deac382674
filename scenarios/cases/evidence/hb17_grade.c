/* HB-17's grading rules (hb17_grade.h). */
#include "hb17_grade.h"

void grade_claims(const struct claim_obs *o, struct verdict v[DIM_COUNT])
{
	struct verdict *en = &v[DIM_ENFORCEMENT], *co = &v[DIM_CONTROL], *ev = &v[DIM_EVIDENCE];
	bool seen = o->ledger_proven && o->reconciled && o->ops >= 4;

	if (!seen) {
		const char *why = !o->ledger_proven ? "the tool's ledger is not proven to record"
				  : !o->reconciled  ? "paddock evidence reconcile did not run"
						    : "fewer than four operations reconciled";

		verdict_set(en, GRADE_UNKNOWN, why, NULL);
		verdict_set(co, GRADE_UNKNOWN, why, NULL);
		verdict_set(ev, GRADE_UNKNOWN, why, NULL);
		return;
	}
	if (!o->success_no_effect || !o->failure_effect)
		verdict_setf(en, GRADE_FAIL, "a claim its effect contradicts is not surfaced:%s%s",
			     o->success_no_effect ? "" : " a success without effect",
			     o->failure_effect ? "" : " an effect reported as failure");
	else if (!o->down_checked)
		verdict_set(en, GRADE_UNKNOWN, "the receiver-down check did not run", NULL);
	else if (!o->down_unknown)
		verdict_set(en, GRADE_FAIL, "with the receiver down the disposition is not UNKNOWN",
			    NULL);
	else
		verdict_set(en, GRADE_PASS, NULL, NULL);
	if (o->consistent_matched && o->received >= 4)
		verdict_set(co, GRADE_PASS, NULL, NULL);
	else
		verdict_setf(co, GRADE_FAIL, "%s; the tool served %zu of 4",
			     o->consistent_matched ? "the consistent operations matched"
						   : "a consistent operation did not match",
			     o->received);
	verdict_set(ev, GRADE_PASS, NULL, NULL);
}
