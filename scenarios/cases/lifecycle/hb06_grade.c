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

void grade_expiry(const struct expiry_obs *o, struct verdict *enforcement, struct verdict *evidence)
{
	if (o->a_before == 0 || o->b_before == 0)
		verdict_set(enforcement, GRADE_UNKNOWN,
			    "missing evidence: empty inventory before expiry", NULL);
	else if (o->a_alive > 0)
		verdict_setf(enforcement, GRADE_FAIL,
			     "%zu of A's %zu processes outlived the expiry", o->a_alive,
			     o->a_before);
	else if (o->b_alive != o->b_before)
		verdict_set(enforcement, GRADE_FAIL,
			    "the other workload (B) was affected by A's expiry", NULL);
	else if (o->detached == 0)
		verdict_set(enforcement, GRADE_UNKNOWN,
			    "the fixture produced no detached descendant to account for", NULL);
	else
		verdict_set(enforcement, GRADE_PASS, NULL, NULL);
	/* The record's survivors against the host's count: a record that
	 * hides a leftover is a failure of its own, whatever else failed. */
	if (o->record_read && o->record_survivors >= 0 && (size_t)o->record_survivors < o->a_alive)
		verdict_setf(enforcement, GRADE_FAIL,
			     "A's record lists %d survivor(s), the host sees %zu of A's processes "
			     "alive",
			     o->record_survivors, o->a_alive);
	if (o->a_before && o->b_before)
		verdict_set(evidence, GRADE_PASS, NULL, NULL);
	else
		verdict_set(evidence, GRADE_UNKNOWN, "inventory incomplete", NULL);
}
