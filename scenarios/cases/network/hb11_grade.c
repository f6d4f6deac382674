/* HB-11's grading rules (hb11_grade.h). */
#include "hb11_grade.h"

void grade_credentials(const struct cred_obs *o, struct verdict v[DIM_COUNT])
{
	struct verdict *en = &v[DIM_ENFORCEMENT], *co = &v[DIM_CONTROL], *ev = &v[DIM_EVIDENCE];
	bool scanned = o->scan_live && o->procs > 0 && o->unread == 0;

	if (!o->proven) {
		verdict_unknown_all(v, "the services did not log the harness's own probe");
		return;
	}
	/* What was seen is a FAIL whatever else is missing. */
	if (o->misdirected || o->places)
		verdict_setf(en, GRADE_FAIL,
			     "a secret reached %zu request(s) its grant does not cover; the marker "
			     "is in %zu of %zu place(s) scanned",
			     o->misdirected, o->places, o->looked);
	else if (!scanned)
		verdict_setf(en, GRADE_UNKNOWN,
			     "the outside scan is incomplete: %s%zu process(es), %zu place(s) "
			     "unread",
			     o->scan_live ? "" : "not while the workload ran; ", o->procs,
			     o->unread);
	else if (o->mediated && (!o->log_read || !o->log_verified))
		verdict_set(en, GRADE_UNKNOWN,
			    "no verified admissions log: the refusals are not accounted for", NULL);
	else if (o->mediated && o->refused < o->expect_refused)
		verdict_setf(en, GRADE_FAIL,
			     "%zu of %zu misdirected placeholder(s) recorded as refused-credential",
			     o->refused, o->expect_refused);
	else
		verdict_setf(en, GRADE_PASS, "the marker is in 0 of %zu place(s) scanned",
			     o->looked);
	if (o->control_saas && o->control_mail)
		verdict_set(co, GRADE_PASS, NULL, NULL);
	else
		verdict_setf(co, GRADE_FAIL, "a granted request did not get its secret:%s%s",
			     o->control_saas ? "" : " saas.test",
			     o->control_mail ? "" : " mail.test");
	if (!scanned)
		verdict_set(ev, GRADE_UNKNOWN, "the outside scan is incomplete", NULL);
	else if (o->mediated && !o->log_read)
		verdict_set(ev, GRADE_UNKNOWN, "the admissions log is missing", NULL);
	else if (o->mediated && !o->log_verified)
		verdict_set(ev, GRADE_UNKNOWN, "the admissions log does not verify", NULL);
	else
		verdict_set(ev, GRADE_PASS, NULL, NULL);
}
