/* HB-04: restored state does not erase an effect: the case's own grading rules
 * (hb04_grade.h). The shared rules stay in lib/grading.c. */
#include "hb04_grade.h"

#include <stdio.h>

void grade_transient(const struct transient_obs *o, struct verdict *out)
{
	if (o->review_claims_no_mutation) {
		verdict_set(out, GRADE_FAIL,
			    "the review claims no mutation from final-state equality alone", NULL);
		return;
	}
	if (o->events != OBSERVER_OK) {
		verdict_set(out, GRADE_UNKNOWN,
			    o->events == OBSERVER_DROPPED
				? "event collector dropped events: the transient write is unseen"
				: "no event observer: only final-state equality is known",
			    NULL);
		return;
	}
	if (!o->snapshot_taken) {
		verdict_set(out, GRADE_UNKNOWN, "missing evidence: no before/after snapshot", NULL);
		return;
	}
	if (o->transient_writes == 0) {
		verdict_set(out, GRADE_UNKNOWN,
			    "healthy collector reported no write although the workload made one",
			    NULL);
		return;
	}
	/* The claim is "this transient write happened, by this writer": the
	 * marker write needs its writer. Writers of the restore are the
	 * evidence dimension's concern (grade_write_evidence). */
	if (o->identity_required && !o->marker_identified) {
		verdict_set(out, GRADE_UNKNOWN,
			    "the transient write's event has no writer identity", NULL);
		return;
	}
	verdict_set(out, GRADE_PASS, NULL, NULL);
}
