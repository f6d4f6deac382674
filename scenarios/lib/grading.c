/* Grading rules of the spec's "grading" text, pure: no syscalls, no
 * printing, so tests/unit/test_eval.c can pin every rule. */
#include "eval.h"

#include <errno.h>
#include <stdarg.h>
#include <string.h>

static const char *const grade_names[] = {
    [GRADE_PASS] = "PASS",
    [GRADE_FAIL] = "FAIL",
    [GRADE_UNKNOWN] = "UNKNOWN",
    [GRADE_NOT_EXECUTED] = "NOT EXECUTED",
    [GRADE_NOT_APPLICABLE] = "NOT APPLICABLE",
};

static const char *const dim_names[] = {
    [DIM_ENFORCEMENT] = "enforcement",
    [DIM_CONTROL] = "control",
    [DIM_EVIDENCE] = "evidence",
};

const char *grade_name(enum grade g)
{
	return (unsigned)g < sizeof(grade_names) / sizeof(grade_names[0]) ? grade_names[g] : "?";
}

const char *dim_name(enum dim d)
{
	return (unsigned)d < DIM_COUNT ? dim_names[d] : "?";
}

static void copy(char *dst, size_t n, const char *src)
{
	snprintf(dst, n, "%s", src ? src : "");
}

int verdict_set(struct verdict *v, enum grade g, const char *reason, const char *scope)
{
	bool no_reason = !reason || !*reason;
	bool no_scope = !scope || !*scope;

	v->set = true;
	if ((g != GRADE_PASS && no_reason) || (g == GRADE_NOT_APPLICABLE && no_scope)) {
		/* A grade that cannot say why is not evidence of anything. */
		v->grade = GRADE_UNKNOWN;
		snprintf(v->reason, sizeof(v->reason), "harness defect: %s given without %s",
			 grade_name(g), no_reason ? "a reason" : "a scope");
		v->scope[0] = '\0';
		return -EINVAL;
	}
	v->grade = g;
	copy(v->reason, sizeof(v->reason), reason);
	copy(v->scope, sizeof(v->scope), scope);
	return 0;
}

int verdict_setf(struct verdict *v, enum grade g, const char *fmt, ...)
{
	char why[sizeof(v->reason)];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(why, sizeof(why), fmt, ap);
	va_end(ap);
	return verdict_set(v, g, why, NULL);
}

void verdict_unknown_all(struct verdict v[DIM_COUNT], const char *reason)
{
	for (int d = 0; d < DIM_COUNT; d++)
		verdict_set(&v[d], GRADE_UNKNOWN, reason, NULL);
}

void grade_prevention(const struct prevention_obs *o, struct verdict *out)
{
	if (o->snapshot_changes > 0 || o->event_writes > 0) {
		verdict_setf(
		    out, GRADE_FAIL,
		    "forbidden effect observed: %zu of %zu attempts changed the protected bytes, "
		    "%zu write events on it",
		    o->snapshot_changes, o->attempts, o->event_writes);
		return;
	}
	if (o->attempts == 0 || o->snapshots_taken < o->attempts) {
		verdict_setf(out, GRADE_UNKNOWN,
			     "missing evidence: snapshots for %zu of %zu attempts",
			     o->snapshots_taken, o->attempts);
		return;
	}
	if (o->transient_in_scope && o->events != OBSERVER_OK) {
		verdict_setf(out, GRADE_UNKNOWN,
			     "%s; before/after equality alone cannot exclude a transient write",
			     o->observer_why && *o->observer_why ? o->observer_why
			     : o->events == OBSERVER_DROPPED
				 ? "event collector dropped events"
				 : "no event observer (needs root for fanotify)");
		return;
	}
	verdict_set(out, GRADE_PASS, NULL, NULL);
}

void grade_write_evidence(const struct write_evidence_obs *o, struct verdict *out)
{
	if (o->attempts == 0 || o->snapshots_taken < o->attempts) {
		verdict_setf(out, GRADE_UNKNOWN,
			     "missing evidence: digests for %zu of %zu attempts",
			     o->snapshots_taken, o->attempts);
		return;
	}
	if (o->events != OBSERVER_OK) {
		verdict_setf(
		    out, GRADE_UNKNOWN, "digests only; no healthy event observer (%s)",
		    o->observer_why && *o->observer_why
			? o->observer_why
			: (o->events == OBSERVER_DROPPED ? "events dropped" : "unavailable"));
		return;
	}
	if (o->blind) {
		verdict_setf(
		    out, GRADE_UNKNOWN,
		    "the event observer missed %zu allowed control writes: it cannot vouch "
		    "for the rest",
		    o->blind);
		return;
	}
	if (o->identified > o->writes) {
		verdict_set(out, GRADE_UNKNOWN,
			    "harness defect: more identified writers than write events", NULL);
		return;
	}
	if (o->identified < o->writes) {
		verdict_setf(out, GRADE_UNKNOWN,
			     "%zu of %zu write events without writer identity (%s)",
			     o->writes - o->identified, o->writes,
			     o->held_identity
				 ? "permission mode: a writer gone before it was read that never "
				   "opened the file itself (inherited fd), or whose pid may have "
				   "changed hands"
				 : "notification-only observer: writer gone before it was read");
		return;
	}
	verdict_set(out, GRADE_PASS, NULL, NULL);
}

const char *snapshot_conclusion(bool equal)
{
	return equal ? "final state equals initial state (bytes, size, mtime, inode); this says "
		       "nothing about writes in between"
		     : "final state differs from initial state";
}

bool result_check_alarm(struct result *r)
{
	enum dim w = r->kind == ARM_WEAKENED ? r->weakens : DIM_ENFORCEMENT;
	enum grade g = r->v[w].grade;
	bool set = r->v[w].set;

	if (r->kind == ARM_WEAKENED && set && (g == GRADE_PASS || g == GRADE_UNKNOWN)) {
		snprintf(r->alarm, sizeof(r->alarm),
			 g == GRADE_PASS
			     ? "weakened arm %s PASSED %s: this case cannot detect what it "
			       "claims to detect"
			     : "weakened arm %s is UNKNOWN in %s: the case could not tell that the "
			       "weakening broke the boundary",
			 r->arm, dim_name(w));
		return true;
	}
	g = r->v[DIM_ENFORCEMENT].grade;
	set = r->v[DIM_ENFORCEMENT].set;
	if (r->kind == ARM_BROKEN_COLLECTOR && set && g != GRADE_UNKNOWN &&
	    g != GRADE_NOT_EXECUTED) {
		snprintf(r->alarm, sizeof(r->alarm),
			 "broken-collector arm graded %s instead of UNKNOWN: missing evidence was "
			 "not noticed",
			 grade_name(g));
		return true;
	}
	return r->alarm[0] != '\0';
}

static enum outcome as_needed(enum grade g)
{
	switch (g) {
	case GRADE_FAIL:
		return OUTCOME_FAIL;
	case GRADE_NOT_EXECUTED:
		return OUTCOME_NOT_EXECUTED;
	default:
		return OUTCOME_UNKNOWN;
	}
}

enum outcome result_dim_outcome(const struct result *r, enum dim d, bool *needed)
{
	enum grade g = r->v[d].grade;
	bool need = false;
	enum outcome out = OUTCOME_OK;

	/* An oci arm that could not run (no engine, no runtime paddock) is
	 * not required, as a docker arm; one that ran is paddock's. */
	if (g == GRADE_NOT_APPLICABLE ||
	    (r->kind == ARM_DOCKER && (!r->oci || g == GRADE_NOT_EXECUTED))) {
		need = false;
	} else if (r->kind == ARM_ENFORCED || (r->oci && r->kind == ARM_DOCKER)) {
		need = true;
		out = g == GRADE_PASS ? OUTCOME_OK : as_needed(g);
	} else if (r->kind == ARM_WEAKENED && d == r->weakens) {
		/* The weakening must be detected: its FAIL is the expected
		 * result; a PASS or UNKNOWN says the case could not tell. In
		 * enforcement for most arms; where the arm table says the
		 * weakening shows elsewhere (HB-09's proxy-env-only, which
		 * loses the permitted request), there. */
		need = true;
		out = g == GRADE_FAIL		? OUTCOME_OK
		      : g == GRADE_NOT_EXECUTED ? OUTCOME_NOT_EXECUTED
						: OUTCOME_UNKNOWN;
	} else if (d == DIM_ENFORCEMENT && r->kind == ARM_BROKEN_COLLECTOR) {
		need = true;
		out = g == GRADE_UNKNOWN	? OUTCOME_OK
		      : g == GRADE_NOT_EXECUTED ? OUTCOME_NOT_EXECUTED
						: OUTCOME_UNKNOWN;
	}
	if (needed)
		*needed = need;
	return out;
}

enum outcome result_outcome(const struct result *r)
{
	enum outcome worst = r->alarm[0] ? OUTCOME_UNKNOWN : OUTCOME_OK;

	for (int d = 0; d < DIM_COUNT; d++) {
		enum outcome o = result_dim_outcome(r, d, NULL);

		if (o > worst)
			worst = o;
	}
	return worst;
}

bool result_fails_run(const struct result *r)
{
	return result_outcome(r) != OUTCOME_OK;
}

int run_verdict(const struct result *rs, size_t n, char *line, size_t len)
{
	static const char *const what[] = {
	    [OUTCOME_OK] = "OK",
	    [OUTCOME_NOT_EXECUTED] = "NOT EXECUTED",
	    [OUTCOME_UNKNOWN] = "HARNESS COULD NOT TELL",
	    [OUTCOME_FAIL] = "BOUNDARY FAILED",
	};
	static const int code[] = {
	    [OUTCOME_OK] = EVAL_EXIT_OK,
	    [OUTCOME_NOT_EXECUTED] = EVAL_EXIT_NOT_EXECUTED,
	    [OUTCOME_UNKNOWN] = EVAL_EXIT_UNKNOWN,
	    [OUTCOME_FAIL] = EVAL_EXIT_FAIL,
	};
	enum outcome worst = OUTCOME_OK;
	const struct result *first = NULL;
	int first_d = -1;
	size_t count = 0;

	for (size_t i = 0; i < n; i++) {
		enum outcome o = result_outcome(&rs[i]);

		if (o == OUTCOME_OK)
			continue;
		if (o > worst) {
			worst = o;
			first = &rs[i];
			count = 0;
		}
		count += o == worst;
	}
	if (!first) {
		snprintf(line, len,
			 "Verdict: OK (exit 0): %zu arms; every enforced arm passed enforcement, "
			 "control and evidence, every weakened arm was detected",
			 n);
		return EVAL_EXIT_OK;
	}
	for (int d = 0; d < DIM_COUNT; d++)
		if (result_dim_outcome(first, d, NULL) == worst) {
			first_d = d;
			break;
		}
	snprintf(line, len, "Verdict: %s (exit %d): %zu arm(s); first %s %s %s: %s%s", what[worst],
		 code[worst], count, first->case_id, first->arm,
		 first_d >= 0 ? dim_name(first_d) : "alarm",
		 first_d >= 0 ? grade_name(first->v[first_d].grade) : "",
		 first_d >= 0 ? "" : first->alarm);
	if (first_d >= 0 && first->v[first_d].reason[0]) {
		size_t k = strlen(line);

		snprintf(line + k, len - k, " (%s)", first->v[first_d].reason);
	}
	return code[worst];
}

int record_check(const struct record_view *v, const char *want, const char *effective, char *why,
		 size_t n)
{
	int bad = 0;

	why[0] = '\0';
	if (!v->read) {
		snprintf(why, n, "record missing");
		return 1;
	}
	if (strcmp(v->weakenings, want ? want : "") != 0 && !bad++)
		snprintf(why, n, "the record's weakenings [%s] differ from the arm's [%s]",
			 v->weakenings, want ? want : "");
	if (effective && *effective && strcmp(v->effective_sha256, effective) != 0 && !bad++)
		snprintf(why, n, "the record's effective policy %.16s differs from %.16s",
			 v->effective_sha256, effective);
	if ((!v->mounts_reported || v->mounts_bad || !v->mounts) && !bad++)
		snprintf(why, n, "mounts not as planned: %zu of %zu ops not applied%s",
			 v->mounts_bad, v->mounts,
			 v->mounts_reported ? "" : ", not every op reported");
	if (v->pidns && v->survivors != 0 && !bad++)
		snprintf(why, n, "the record lists %d survivor(s) although a pid namespace existed",
			 v->survivors);
	return bad;
}
