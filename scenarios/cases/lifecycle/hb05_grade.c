/* HB-05: a busy port does not transfer ownership: the case's own grading rules
 * (hb05_grade.h). The shared rules stay in lib/grading.c. */
#include "hb05_grade.h"

#include <stdio.h>

void grade_busy_port(const struct busy_port_obs *o, struct verdict *out)
{
	if (o->checks == 0) {
		verdict_set(out, GRADE_UNKNOWN, "missing evidence: B's health checks could not run",
			    NULL);
		return;
	}
	if (o->check_fails > 0) {
		verdict_setf(out, GRADE_FAIL, "B failed %zu of %zu health checks while A acted",
			     o->check_fails, o->checks);
		return;
	}
	if (o->b_read && !o->b_unchanged) {
		verdict_set(out, GRADE_FAIL, "B was stopped or reconfigured (its identity changed)",
			    NULL);
		return;
	}
	if (o->stops_refused < o->stops) {
		verdict_setf(out, GRADE_FAIL, "%zu of A's %zu stop requests for B were accepted",
			     o->stops - o->stops_refused, o->stops);
		return;
	}
	if (o->auto_port && o->auto_port == o->b_port) {
		verdict_set(out, GRADE_FAIL, "A's auto endpoint is B's port", NULL);
		return;
	}
	if (o->fixed_ran && (o->fixed_status == 0 || (o->fixed_listed && !o->fixed_nothing))) {
		verdict_set(out, GRADE_FAIL, "A started a session on B's fixed port", NULL);
		return;
	}
	if (o->fixed_ran && !o->fixed_listed) {
		verdict_set(
		    out, GRADE_UNKNOWN,
		    "missing evidence: A's sessions could not be listed after its refused run",
		    NULL);
		return;
	}
	if (o->listener_read && (o->listeners != 1 || !o->listener_is_b)) {
		verdict_setf(out, GRADE_FAIL,
			     "%zu listeners on B's port, %s: A shares or claims it", o->listeners,
			     o->listener_is_b ? "one B's" : "not B's");
		return;
	}
	if (o->fixed_ran && (o->fixed_status != 125 || !o->fixed_in_use)) {
		verdict_setf(
		    out, GRADE_FAIL,
		    "A's fixed request ended %d without the \"in use\" line: not a truthful "
		    "bounded failure",
		    o->fixed_status);
		return;
	}
	if (!o->fixed_ran || o->stops == 0) {
		verdict_set(out, GRADE_UNKNOWN,
			    "missing evidence: A's conflict or stop was not tried", NULL);
		return;
	}
	if (!o->b_read || !o->listener_read) {
		verdict_set(out, GRADE_UNKNOWN,
			    !o->b_read ? "missing evidence: B's identity could not be read"
				       : "missing evidence: the listener table could not be read",
			    NULL);
		return;
	}
	verdict_set(out, GRADE_PASS, NULL, NULL);
}

void grade_busy_port_control(const struct busy_port_obs *o, struct verdict *out)
{
	if (!o->auto_port)
		verdict_set(out, GRADE_FAIL, "A got no alternate endpoint", NULL);
	else if (!o->auto_marker)
		verdict_set(out, GRADE_FAIL, "A's alternate endpoint did not return A's marker",
			    NULL);
	else if (!o->auto_owned)
		verdict_set(out, GRADE_FAIL,
			    "A's alternate endpoint does not name A's session and generation",
			    NULL);
	else
		verdict_set(out, GRADE_PASS, NULL, NULL);
}
