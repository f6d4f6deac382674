/* HB-08: completion reports actual execution status: the case's own grading rules
 * (hb08_grade.h). The shared rules stay in lib/grading.c. */
#include "hb08_grade.h"

#include <stdio.h>

void grade_retained(const struct retained_obs *o, struct verdict *out)
{
	if (o->real_status == 0) {
		verdict_set(out, GRADE_FAIL, "exit zero conceals the fatal failure", NULL);
		return;
	}
	if (o->record_read &&
	    (o->record_status != o->real_status || !o->record_exit_n || !o->record_retained)) {
		verdict_setf(out, GRADE_FAIL,
			     "the record (status %d%s%s) disagrees with the real status %d",
			     o->record_status, o->record_exit_n ? "" : ", ended/exit_code differ",
			     o->record_retained ? "" : ", phase not retained", o->real_status);
		return;
	}
	if (o->ps_read && !o->ps_retained) {
		verdict_set(out, GRADE_FAIL,
			    "ps --json does not list the session as retained with the real status",
			    NULL);
		return;
	}
	if (o->inv_read && o->other_alive) {
		verdict_setf(
		    out, GRADE_FAIL,
		    "%zu undeclared process(es) still run in the session beside the service",
		    o->other_alive);
		return;
	}
	if (o->inv_read && o->svc_alive &&
	    ((o->ps_read && !o->ps_lease) || (o->record_read && !o->record_lease))) {
		verdict_set(out, GRADE_FAIL,
			    "a live service is not identified with owner, generation and expiry",
			    NULL);
		return;
	}
	if (o->final_read && !o->final_ok) {
		verdict_set(out, GRADE_FAIL, "the final record changed the outcome", NULL);
		return;
	}
	if (!o->record_read || !o->ps_read || !o->inv_read || !o->final_read) {
		verdict_set(
		    out, GRADE_UNKNOWN,
		    "missing evidence: record, ps, inventory and final record are all needed",
		    NULL);
		return;
	}
	if (!o->svc_alive) {
		verdict_set(out, GRADE_UNKNOWN,
			    "the service was not found alive: retained completion not exercised",
			    NULL);
		return;
	}
	verdict_set(out, GRADE_PASS, NULL, NULL);
}
