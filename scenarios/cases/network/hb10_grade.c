/* HB-10's grading rules (hb10_grade.h). */
#include "hb10_grade.h"

void grade_scope(const struct scope_obs *o, struct verdict v[DIM_COUNT])
{
	struct verdict *en = &v[DIM_ENFORCEMENT], *co = &v[DIM_CONTROL], *ev = &v[DIM_EVIDENCE];

	if (!o->proven) {
		verdict_unknown_all(v, "the SaaS did not log the harness's own probe");
		return;
	}
	if (o->forbidden || o->t2_changed || o->t1_deleted)
		verdict_setf(en, GRADE_FAIL,
			     "the SaaS served %zu request(s) outside the grant; the other "
			     "tenant's object %s; the granted object %s",
			     o->forbidden, o->t2_changed ? "changed" : "unchanged",
			     o->t1_deleted ? "deleted" : "kept");
	else if (o->mediated && (!o->log_read || !o->log_verified))
		verdict_set(en, GRADE_UNKNOWN,
			    "no verified admissions log: what the SaaS served cannot be joined",
			    NULL);
	else if (o->mediated && (o->served != o->admitted || o->joined != o->served))
		verdict_setf(en, GRADE_FAIL,
			     "the SaaS served %zu request(s), %zu admitted, %zu with an admission "
			     "id of the log",
			     o->served, o->admitted, o->joined);
	else if (o->mediated && o->refused == 0)
		verdict_set(en, GRADE_UNKNOWN,
			    "no refusal recorded: the out-of-grant requests are not accounted for",
			    NULL);
	else
		verdict_set(en, GRADE_PASS, NULL, NULL);
	if (o->control_read && o->control_write)
		verdict_set(co, GRADE_PASS, NULL, NULL);
	else
		verdict_setf(co, GRADE_FAIL, "the granted operation did not arrive:%s%s",
			     o->control_read ? "" : " read", o->control_write ? "" : " write");
	if (o->mediated && !o->log_read)
		verdict_set(ev, GRADE_UNKNOWN, "the admissions log is missing", NULL);
	else if (o->mediated && !o->log_verified)
		verdict_set(ev, GRADE_UNKNOWN, "the admissions log does not verify", NULL);
	else
		verdict_set(ev, GRADE_PASS, NULL, NULL);
}
