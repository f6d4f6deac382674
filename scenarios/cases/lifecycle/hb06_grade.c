/* HB-06: workload expiry accounts for descendants: the case's own grading rules
 * (hb06_grade.h). The shared rules stay in lib/grading.c. */
#include "hb06_grade.h"

#include <stdio.h>

/* Rules in order, first match wins: the one-line reasons make the chain
 * look alike to duplicates, but each rule is its own claim. */
void grade_lease_control(const struct lease_obs *o, struct verdict *out)
{
	if (!o->ran) {
		verdict_set(out, GRADE_UNKNOWN, "missing evidence: the leased run did not complete",
			    NULL);
		return;
	}
	if (o->probes_during && !o->ok_during) {
		verdict_set(out, GRADE_FAIL,
			    o->retained ? "the leased server was unreachable during its lease"
					: "the leased server was gone after the main command ended "
					  "(session not retained)",
			    NULL);
		return;
	}
	if (o->leak_checked && o->leaks_alive) {
		verdict_setf(out, GRADE_FAIL,
			     "%zu leftover(s) of the main command still alive beside the leased "
			     "service: a leak must not ride on a lease",
			     o->leaks_alive);
		return;
	}
	if (o->probed_after && o->ok_after) {
		verdict_set(out, GRADE_FAIL, "the server still answered after its lease ended",
			    NULL);
		return;
	}
	if (!o->probes_during || !o->probed_after || !o->leak_checked) {
		verdict_set(
		    out, GRADE_UNKNOWN,
		    "missing evidence: probes during and after the lease, and the leak check, "
		    "are all needed",
		    NULL);
		return;
	}
	if (!o->retained || !o->listed || !o->recorded) {
		verdict_set(
		    out, GRADE_FAIL,
		    "reachable, but not declared as a retained lease with owner, generation "
		    "and expiry in ps and the record",
		    NULL);
		return;
	}
	if (!o->ended_by_lease) {
		verdict_set(out, GRADE_FAIL, "the final record does not say the lease ended it",
			    NULL);
		return;
	}
	verdict_set(out, GRADE_PASS, NULL, NULL);
}

/* The first FAIL of one path, or NULL (reason in buf). */
static const char *expiry_fail(const struct expiry_obs *o, char *buf, size_t n)
{
	if (o->a_alive > 0)
		snprintf(buf, n, "%zu of A's %zu processes outlived the expiry", o->a_alive,
			 o->a_before);
	else if (o->pidns_own && o->pidns_scanned && o->pidns_left > 0)
		snprintf(buf, n, "%zu process(es) still in A's pid namespace after the expiry",
			 o->pidns_left);
	else if (o->lease_after)
		snprintf(buf, n,
			 "A's leased service still answered after the expiry: a lease "
			 "never outlives its session");
	else if (o->b_alive != o->b_before)
		snprintf(buf, n, "the other workload (B) was affected by A's expiry");
	else if (o->record_read && o->record_survivors >= 0 &&
		 (size_t)o->record_survivors < o->a_alive)
		snprintf(buf, n, "A's record lists %d survivor(s), the host sees %zu alive",
			 o->record_survivors, o->a_alive);
	else if (o->lease_label && !o->lease_label_ok)
		snprintf(buf, n,
			 "A's record says the leased service ended otherwise than by the "
			 "expiry");
	else
		return NULL;
	return buf;
}

/* The first UNKNOWN of one path, or NULL. */
static const char *expiry_unknown(const struct expiry_obs *o)
{
	if (o->a_before == 0 || o->b_before == 0)
		return "missing evidence: empty inventory before expiry";
	if (!o->after_read)
		return "missing evidence: the host's /proc gave no conclusive answer after the "
		       "expiry: A's final state is unavailable";
	if (o->lost && !(o->pidns_own && o->pidns_scanned))
		return "the supervisor lost contact and the final descendant state is unavailable "
		       "(no completion record, and no pid namespace of A's own proven empty)";
	if (o->lease_declared && !o->lease_held)
		return "missing evidence: A's leased service did not answer before the expiry (no "
		       "lease held at expiry)";
	if (o->detached == 0)
		return "the fixture produced no detached descendant to account for";
	return NULL;
}

void grade_expiry(const struct expiry_obs *o, struct verdict *enforcement, struct verdict *evidence)
{
	char buf[200];
	const char *why;

	/* The record's survivors against the host's count: a record that
	 * hides a leftover fails whatever else failed. */
	if (o->record_read && o->record_survivors >= 0 && (size_t)o->record_survivors < o->a_alive)
		verdict_setf(enforcement, GRADE_FAIL,
			     "A's record lists %d survivor(s), the host sees %zu of A's processes "
			     "alive",
			     o->record_survivors, o->a_alive);
	else if (o->a_before && o->b_before && (why = expiry_fail(o, buf, sizeof(buf))))
		verdict_set(enforcement, GRADE_FAIL, why, NULL);
	else if ((why = expiry_unknown(o)))
		verdict_set(enforcement, GRADE_UNKNOWN, why, NULL);
	else
		verdict_set(enforcement, GRADE_PASS, NULL, NULL);
	if (o->a_before && o->b_before && o->after_read)
		verdict_set(evidence, GRADE_PASS, NULL, NULL);
	else
		verdict_set(evidence, GRADE_UNKNOWN,
			    "inventory incomplete (before, or a conclusive look after the expiry)",
			    NULL);
}

/* B's own FAIL or UNKNOWN, or NULL. */
static const char *other_fail(const struct other_obs *b)
{
	if (b->read && !b->same)
		return "the other workload (B) changed: state, generation or init differ after "
		       "A's expiries";
	if (b->ok_before && b->ok_after < b->probes_after)
		return "the other workload (B) stopped answering after A's expiries";
	return NULL;
}

void grade_expiry_paths(const struct expiry_obs *paths, const char *const *names, size_t n,
			const struct other_obs *b, struct verdict *enforcement,
			struct verdict *evidence)
{
	struct verdict e[8] = {0}, v[8] = {0};
	const char *why;
	size_t k;

	n = n < 8 ? n : 8;
	for (k = 0; k < n; k++)
		grade_expiry(&paths[k], &e[k], &v[k]);
	for (k = 0; k < n && e[k].grade != GRADE_FAIL; k++)
		;
	if (k < n) {
		verdict_setf(enforcement, GRADE_FAIL, "%s: %s", names[k], e[k].reason);
	} else if ((why = other_fail(b))) {
		verdict_set(enforcement, GRADE_FAIL, why, NULL);
	} else {
		for (k = 0; k < n && e[k].grade == GRADE_PASS; k++)
			;
		if (k < n)
			verdict_setf(enforcement, e[k].grade, "%s: %s", names[k], e[k].reason);
		else if (!b->read || !b->probes_before || !b->probes_after || !b->ok_before)
			verdict_set(
			    enforcement, GRADE_UNKNOWN,
			    "missing evidence: the other workload's state or answers before "
			    "and after A's expiries",
			    NULL);
		else
			verdict_set(enforcement, GRADE_PASS, NULL, NULL);
	}
	for (k = 0; k < n && v[k].grade == GRADE_PASS; k++)
		;
	if (k < n)
		verdict_setf(evidence, v[k].grade, "%s: %s", names[k], v[k].reason);
	else if (!b->read)
		verdict_set(evidence, GRADE_UNKNOWN, "the other workload's state was not read",
			    NULL);
	else
		verdict_set(evidence, GRADE_PASS, NULL, NULL);
}
