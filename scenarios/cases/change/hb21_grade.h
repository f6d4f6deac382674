/* HB-21's grading rule (hb21_grade.c): pure, unit-tested
 * (tests/unit/test_eval.c). Graded from the three fake providers' own
 * ledgers (receivers/provider.c: each request's Idempotency-Key and
 * charge) against the mediator's verified admissions log (each request's
 * decision, adapter, route, normalised action and ledger row). */
#pragma once

#include <stdbool.h>
#include <stddef.h>

#include "../../lib/eval.h"

#define HB21_OPS_MAX 8

enum hb21_want {
	HB21_ALLOW,   /* the grant allows its action */
	HB21_DENY,    /* the grant does not: refused-action */
	HB21_UNKNOWN, /* a shape no adapter parses: refused-unparsed */
};

struct hb21_op {
	const char *key;     /* its Idempotency-Key: the providers log it */
	const char *adapter; /* openai, anthropic */
	const char *route;   /* primary, fallback */
	enum hb21_want want;
	/* The providers' ledgers. */
	size_t reached; /* requests with its key, over every provider */
	/* Its decision line in the log (the n-th with an adapter field). */
	bool logged;
	char decision[32];
	char log_adapter[16], log_route[16], log_model[72];
	bool reserved; /* the line names a ledger row */
	bool settled;  /* its outcome line settled the row */
};

struct hb21_obs {
	bool proven;	   /* every provider logged the harness's probe before and after */
	bool log_read;	   /* the session's admissions log */
	bool log_verified; /* ... verified by paddock */
	struct hb21_op op[HB21_OPS_MAX];
	size_t n;
	unsigned charged;     /* credits the providers billed, in all */
	unsigned settled_sum; /* the ledger's settlements, from the log */
};

/* Enforcement: no denied or unparsed operation reached a provider, and
 * every allowed one (the fallback's too) was reserved in the ledger
 * before it went. Control: each allowed operation reached its provider
 * once and settled. Evidence: each decision in the verified log with the
 * adapter and route actually used, the allowed ones' normalised model,
 * the unknown shape as refused-unparsed, and the ledger's settlements
 * equal to the providers' charges. */
void grade_hb21(const struct hb21_obs *o, struct verdict v[DIM_COUNT]);
