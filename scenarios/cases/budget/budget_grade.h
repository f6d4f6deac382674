/* The budget cases' grading rules (HB-13, HB-14, HB-15; budget_grade.c):
 * pure, unit-tested (tests/unit/test_eval.c). Graded from the fake
 * provider's own charge ledger (receivers/provider.c) against the
 * mediator's records (the admissions logs, the budget's ledger as
 * `paddock budget export` reads it). */
#pragma once

#include <stdbool.h>
#include <stddef.h>

#include "../../lib/eval.h"

struct budget_obs {
	bool proven;	   /* the provider logged the harness's probe before and after */
	bool mediated;	   /* a paddock arm: its admissions logs were read */
	bool log_read;	   /* every session's log */
	bool log_verified; /* ... and each verified by paddock */
	unsigned cap;	   /* the policy's */
	/* The provider's own ledger. */
	unsigned charged; /* credits it billed */
	size_t accepted;  /* billable requests it accepted */
	size_t joined;	  /* of those, whose Paddock-Admission id is in a log */
	/* The mediator's records. */
	size_t settled;		 /* outcome entries with "ledger": "settled" */
	unsigned settled_sum;	 /* their charges */
	size_t refused_cap;	 /* refused-budget-cap decisions */
	size_t refused_unpriced; /* refused-unpriced */
	size_t refused_ledger;	 /* refused-ledger */
	size_t held_unknown;	 /* held-unknown decisions */
	size_t receipted;	 /* answered-receipt decisions (a lookup's receipt) */
	size_t unknown;		 /* outcome entries with "ledger": "unknown" */
	/* HB-14 */
	size_t unpriced_tries, unpriced_sent; /* asked by the workload, reached the provider */
	size_t blind_tries, blind_sent;	      /* billable with the ledger unavailable */
	size_t free_tries, free_served;	      /* the declared-free control */
	/* HB-15 */
	size_t key_tries, key_sent; /* the lost-answer operation's key: asked, sent */
	unsigned lost_charged;	    /* what the provider billed for it */
	bool ledger_read;	    /* paddock budget export read back */
	unsigned ledger_unknown;    /* credits the ledger holds as unknown */
	unsigned ledger_receipts;   /* credits it settled from the receiver's receipts */
	bool control_ok;	    /* the answered operation served and settled */
};

/* HB-13. Enforcement: the provider billed no more than the cap (FAIL
 * otherwise), with the cap reached (some refused-budget-cap: else the
 * callers never tested it, UNKNOWN). Control: some request accepted and
 * settled. Evidence: the settled charges in the logs equal the provider's
 * ledger, and every accepted request joins a log entry by admission id. */
void grade_hb13(const struct budget_obs *o, struct verdict v[DIM_COUNT]);
/* HB-14. Enforcement: no unpriced request and no billable request sent
 * while the ledger was unavailable reached the provider. Control: the
 * declared-free request served every time. Evidence: each refusal in the
 * verified logs (refused-unpriced, refused-ledger). */
void grade_hb14(const struct budget_obs *o, struct verdict v[DIM_COUNT]);
/* HB-15. Enforcement: the operation whose answer was lost reached the
 * provider once, whatever the replays, and the ledger still holds its
 * bound as unknown or settled it from the provider's receipt (the rule's
 * lookup) at no less than the provider billed. Control: an answered
 * operation served and settled. Evidence: the unknown outcome and each
 * replay held or answered by the receipt, in the verified logs. */
void grade_hb15(const struct budget_obs *o, struct verdict v[DIM_COUNT]);
