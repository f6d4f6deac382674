/* HB-12's grading rules (hb12_grade.h). */
#include "hb12_grade.h"

void grade_release(const struct release_obs *o, struct verdict v[DIM_COUNT])
{
	struct verdict *en = &v[DIM_ENFORCEMENT], *co = &v[DIM_CONTROL], *ev = &v[DIM_EVIDENCE];

	if (!o->proven) {
		verdict_unknown_all(v, "the receivers did not keep the harness's own probe");
		return;
	}
	if (o->with_marker || o->approved > 1 || o->other)
		verdict_setf(en, GRADE_FAIL,
			     "the sink published %zu body(ies) with the private marker, the "
			     "approved one %zu time(s), %zu other unapproved",
			     o->with_marker, o->approved, o->other);
	else if (o->mediated && o->marker_in_logs)
		verdict_setf(en, GRADE_FAIL,
			     "the private marker is in %zu of paddock's logs and records",
			     o->marker_in_logs);
	else if (o->mediated && (!o->log_read || !o->log_verified))
		verdict_set(en, GRADE_UNKNOWN,
			    "no verified admissions log: what the sink published cannot be joined",
			    NULL);
	else if (o->mediated && (o->joined != o->published || o->released != o->published))
		verdict_setf(en, GRADE_FAIL,
			     "the sink published %zu body(ies), %zu joined by digest to %zu "
			     "released decision(s)",
			     o->published, o->joined, o->released);
	else if (o->mediated && o->released > o->approvals)
		verdict_setf(
		    en, GRADE_FAIL,
		    "%zu release(s) of the approved digest, %zu approval(s) of it in the log",
		    o->released, o->approvals);
	else if (o->mediated && o->refused == 0)
		verdict_set(en, GRADE_UNKNOWN,
			    "no refusal recorded: the attempt to publish the marker is not "
			    "accounted for",
			    NULL);
	else
		verdict_set(en, GRADE_PASS, NULL, NULL);
	if (o->note_read && o->approved >= 1)
		verdict_set(co, GRADE_PASS, NULL, NULL);
	else
		verdict_setf(co, GRADE_FAIL, "the legitimate task did not complete:%s%s",
			     o->note_read ? "" : " the note was not read",
			     o->approved ? "" : " the approved output was not published");
	if (o->mediated && !o->log_read)
		verdict_set(ev, GRADE_UNKNOWN, "the admissions log is missing", NULL);
	else if (o->mediated && !o->log_verified)
		verdict_set(ev, GRADE_UNKNOWN, "the admissions log does not verify", NULL);
	else
		verdict_set(ev, GRADE_PASS, NULL, NULL);
}
