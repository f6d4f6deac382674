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

/* The first thing wrong with one task, as FAIL, or NULL. */
static const char *task_fail(const struct hb08_task *t, bool docker)
{
	if (t->received > t->attempts)
		return "the receiver counted more attempts than the runner reported";
	if (t->tool_lies)
		return "paddock's exit status differs from the exit code the tool reported to the "
		       "receiver";
	if (t->known_bad)
		return "paddock's exit status differs from the tool's known exit code (3 while "
		       "failing, 0 on success)";
	if (!docker && t->record_bad)
		return "a completion record disagrees with the real exit status";
	return NULL;
}

void grade_completion(const struct completion_obs *o, struct verdict *out)
{
	const struct hb08_task *ok = &o->ok, *bad = &o->bad;
	size_t all = ok->attempts + bad->attempts;
	const char *why;

	if ((why = task_fail(ok, o->docker)) || (why = task_fail(bad, o->docker))) {
		verdict_set(out, GRADE_FAIL, why, NULL);
		return;
	}
	if (o->inv_read && o->live) {
		verdict_setf(out, GRADE_FAIL,
			     "%zu process(es) of the sessions still live after completion (host "
			     "/proc, by user namespace)",
			     o->live);
		return;
	}
	/* Before any rule that reads a status: a lost runner's status is
	 * the harness's view of a killed process, not paddock's report. */
	if (ok->runner_lost || bad->runner_lost) {
		verdict_setf(out, GRADE_UNKNOWN,
			     "the runner disappeared without a trusted completion record (%zu "
			     "attempt(s)): the outcome is unknown",
			     ok->runner_lost + bad->runner_lost);
		return;
	}
	if (bad->attempts == HB08_RETRIES && bad->received == HB08_RETRIES && bad->status == 0) {
		verdict_set(out, GRADE_FAIL, "exit zero conceals the fatal failure", NULL);
		return;
	}
	if (ok->status != 0) {
		verdict_set(out, GRADE_UNKNOWN,
			    "the success path failed, so failure reporting cannot be compared",
			    NULL);
		return;
	}
	if (bad->status == 0 || bad->attempts != HB08_RETRIES) {
		verdict_setf(out, GRADE_FAIL,
			     "the fatal failure was not machine-readable as failure after %d "
			     "retries (status %d after %zu attempts)",
			     HB08_RETRIES, bad->status, bad->attempts);
		return;
	}
	if (ok->received < ok->attempts || bad->received < bad->attempts) {
		verdict_setf(out, GRADE_UNKNOWN,
			     "missing evidence: the receiver got %zu of %zu attempt reports",
			     ok->received + bad->received, all);
		return;
	}
	if (!o->docker && (ok->records < ok->attempts || bad->records < bad->attempts)) {
		verdict_set(out, GRADE_UNKNOWN,
			    "missing evidence: an attempt has no completion record", NULL);
		return;
	}
	if (!o->docker && (o->ns_known < all || o->ns_host)) {
		verdict_setf(out, GRADE_UNKNOWN,
			     "missing evidence: the session's own user namespace is known for %zu "
			     "of %zu attempts (%zu were the host's)",
			     o->ns_known - o->ns_host, all, o->ns_host);
		return;
	}
	if (!o->inv_read) {
		verdict_set(out, GRADE_UNKNOWN, "missing evidence: no host inventory", NULL);
		return;
	}
	verdict_set(out, GRADE_PASS, NULL, NULL);
}

void grade_completion_control(const struct completion_obs *o, struct verdict *out)
{
	if (o->ok.runner_lost)
		verdict_set(out, GRADE_UNKNOWN,
			    "the successful tool's runner disappeared without a trusted record",
			    NULL);
	else if (o->ok.status == 0 && o->ok.attempts == 1 && o->ok.received == 1 &&
		 !o->ok.tool_lies)
		verdict_set(out, GRADE_PASS, NULL, NULL);
	else if (o->ok.received < o->ok.attempts)
		verdict_set(out, GRADE_UNKNOWN,
			    "the receiver did not see the successful tool's attempt", NULL);
	else
		verdict_set(out, GRADE_FAIL,
			    "the successful tool needed extra attempts or did not succeed", NULL);
}

void grade_completion_evidence(const struct completion_obs *o, struct verdict *out)
{
	size_t all = o->ok.attempts + o->bad.attempts;

	if (o->ok.received + o->bad.received < all)
		verdict_set(out, GRADE_UNKNOWN, "the receiver missed an attempt", NULL);
	else if (o->ok.runner_lost + o->bad.runner_lost)
		verdict_set(out, GRADE_UNKNOWN,
			    "a runner disappeared: no trusted completion record of its attempt",
			    NULL);
	else if (o->docker)
		verdict_set(out, GRADE_UNKNOWN,
			    "exit status and receiver only: Docker writes no completion record",
			    NULL);
	else if (o->ok.records + o->bad.records < all)
		verdict_set(out, GRADE_UNKNOWN, "completion record missing", NULL);
	else if (o->ns_known < all || o->ns_host || !o->inv_read)
		verdict_set(out, GRADE_UNKNOWN,
			    "the sessions' user namespaces or the host inventory are missing",
			    NULL);
	else
		verdict_set(out, GRADE_PASS, NULL, NULL);
}
