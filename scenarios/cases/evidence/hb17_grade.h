/* HB-17's grading rules (hb17_grade.c): pure, unit-tested. */
#pragma once

#include <stdbool.h>
#include <stddef.h>

#include "../../lib/eval.h"

struct claim_obs {
	bool ledger_proven;	 /* the mock tool's ledger holds the harness's own probe */
	bool reconciled;	 /* paddock evidence reconcile ran on the ledger */
	size_t ops;		 /* operations it reported */
	bool success_no_effect;	 /* /claim-success: claimed-success-no-effect */
	bool failure_effect;	 /* /claim-failure: claimed-failure-effect */
	bool consistent_matched; /* /ok and /fail: matched */
	bool down_checked;	 /* reconcile ran without the ledger (the receiver down) */
	bool down_unknown;	 /* and said UNKNOWN for every operation */
	size_t received;	 /* requests the tool served */
};

/* Enforcement: both mismatches surfaced (each as its own disposition), and
 * the receiver down gives UNKNOWN, never MATCHED; a mismatch reported
 * matched is a FAIL. Control: the two consistent operations matched and
 * the tool served four requests. Evidence: a proven ledger and four
 * operations reconciled. Missing evidence is UNKNOWN. */
void grade_claims(const struct claim_obs *o, struct verdict v[DIM_COUNT]);
