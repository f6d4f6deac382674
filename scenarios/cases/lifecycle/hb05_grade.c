/* HB-05: a busy port does not transfer ownership: the case's own grading rules
 * (hb05_grade.h). The shared rules stay in lib/grading.c. */
#include "hb05_grade.h"

#include <stdio.h>

/* B's processes by identity and A's kills: the first failure, or false. */
static bool busy_port_kills_fail(const struct busy_port_obs *o, struct verdict *out)
{
	if (o->kills_accepted) {
		verdict_setf(out, GRADE_FAIL,
			     "%zu of A's %zu kills of B's processes were carried out by the kernel",
			     o->kills_accepted, o->kills);
		return true;
	}
	if (o->idents_read && o->idents_replaced) {
		verdict_setf(out, GRADE_FAIL,
			     "%zu of B's processes were replaced: the pid now has another start "
			     "time (a pid-only check would take the newcomer for B's server)",
			     o->idents_replaced);
		return true;
	}
	if (o->idents_read && o->idents_ended) {
		verdict_setf(out, GRADE_FAIL, "%zu of B's %zu processes ended while A acted",
			     o->idents_ended, o->idents);
		return true;
	}
	if (o->idents_read && !o->holder_same) {
		verdict_set(out, GRADE_FAIL,
			    "B's listening socket is no longer held by the same process (pid and "
			    "start time)",
			    NULL);
		return true;
	}
	if (o->fuser_ran && o->fuser_status == 0) {
		verdict_set(out, GRADE_FAIL,
			    "A's port-based kill (fuser -k) found a process on B's port", NULL);
		return true;
	}
	return false;
}

/* A's two sessions on one fixed port: the first failure, or false. */
static bool busy_port_same_owner_fail(const struct busy_port_obs *o, struct verdict *out)
{
	if (o->a1_fails) {
		verdict_setf(out, GRADE_FAIL,
			     "A's first session failed %zu of %zu health checks while A asked for "
			     "its port again",
			     o->a1_fails, o->a1_checks);
		return true;
	}
	if (o->a1_read && !o->a1_unchanged) {
		verdict_set(out, GRADE_FAIL,
			    "A's first session was stopped or reconfigured by A's second request "
			    "for its port",
			    NULL);
		return true;
	}
	if (o->same_ran && (o->same_status == 0 || (o->same_listed && !o->same_nothing))) {
		verdict_set(out, GRADE_FAIL,
			    "A's second session started on the fixed port A's first holds", NULL);
		return true;
	}
	if (o->same_ran && o->same_listed && (o->same_status != 125 || !o->same_in_use)) {
		verdict_setf(out, GRADE_FAIL,
			     "A's second request for its own busy port ended %d without the "
			     "\"in use\" line: not a clean refusal",
			     o->same_status);
		return true;
	}
	return false;
}

/* Evidence the new checks need: the first gap, or false. */
static bool busy_port_unknown(const struct busy_port_obs *o, struct verdict *out)
{
	const char *why = NULL;

	if (!o->idents_read || o->idents == 0)
		why = "missing evidence: B's processes could not be identified by pid and start "
		      "time";
	else if (o->kills == 0)
		why = "missing evidence: A's signal-based kills were not tried";
	else if (o->kills_refused < o->kills)
		why = "missing evidence: a kill by A was not refused by the kernel's permission "
		      "check (not EPERM): it never reached B's process";
	else if (!o->fuser_ran)
		why = "missing evidence: A's port-based kill (fuser -k) did not run";
	else if (!o->same_ran || o->a1_checks == 0 || !o->a1_read)
		why = "missing evidence: the same-owner conflict was not tried";
	else if (!o->same_listed)
		why = "missing evidence: A's sessions could not be listed after its second "
		      "request";
	if (!why)
		return false;
	verdict_set(out, GRADE_UNKNOWN, why, NULL);
	return true;
}

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
	if (busy_port_kills_fail(o, out) || busy_port_same_owner_fail(o, out))
		return;
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
	if (busy_port_unknown(o, out))
		return;
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
