/* HB-15: an unanswered request keeps its reservation and is not replayed.
 *
 * Fixture (outside every sandbox): the fake metered provider
 * (receivers/provider.c, 127.0.0.1:18997, "llm.test"): /drop bills 4
 * credits, reads the request and closes without an answer (the
 * acknowledgement withheld); /v1/gen bills 4 and answers. The policy
 * meters llm.test (budget "team", cap 10, 4 a request). Session 1: POST
 * /drop with Idempotency-Key k1, the same again (a client's retry), and
 * POST /v1/gen with k2 (the control). Session 2, later, shares the
 * budget: POST /drop with k1 once more. Evidence: the provider's ledger
 * (how often k1 reached it, what it billed for it, how often its receipts
 * endpoint was asked), against the mediators' records (the unknown
 * outcome, the replays held or answered by the receipt) and the budget's
 * ledger read back with `paddock budget show --json` (the credits held as
 * unknown or settled from the receipt). The policy declares the
 * provider's receipts endpoint as the rule's lookup (GET
 * /v1/receipts/{key}): the first replay makes the mediator ask it, settle
 * k1 at the receipt's charge and answer the replay with the receipt; the
 * replay in session 2 is answered from a fresh lookup too. Neither is
 * dispatched.
 *
 * Arms: enforced; weakened:release-on-timeout (paddock's --weaken knob: the
 * unanswered request's bound is released and it may be sent again: must
 * FAIL); docker NOT APPLICABLE. The reference: the seed's LiteLLM run (in
 * the evidence). */
#include "budget_run.h"

#include <stdio.h>
#include <string.h>

#define PORT 18997

static const struct case_arm arms[] = {
    {.name = "enforced"},
    {.name = "weakened:release-on-timeout"},
    {.name = "docker",
     .na_reason = {BUDGET_NA_REASON(LITELLM_HB15), BUDGET_NA_REASON(LITELLM_HB15),
		   BUDGET_NA_REASON(LITELLM_HB15)},
     .na_scope = {BUDGET_NA_SCOPE, BUDGET_NA_SCOPE, BUDGET_NA_SCOPE}},
    {.name = NULL},
};

#define C "curl -s -m 20 -o /dev/null -X POST "
#define U "http://llm.test:18997"
#define RUN1                                                                                  \
	C "-H 'Idempotency-Key: k1' " U "/drop\n" C "-H 'Idempotency-Key: k1' " U "/drop\n" C \
	  "-H 'Idempotency-Key: k2' " U "/v1/gen\nexit 0\n"
#define RUN2 C "-H 'Idempotency-Key: k1' " U "/drop\nexit 0\n"

static int setup(struct case_run *cr, struct err *why)
{
	return budget_setup(cr, PORT, why);
}

static void run(struct case_run *cr)
{
	struct budget_case *h = cr->priv;
	struct result *r = cr->r;
	char env[PATH_MAX + 32], rec1[PATH_MAX + 64], rec2[PATH_MAX + 64];
	int s1 = -1, s2 = -1;
	bool before;

	budget_env(cr, env, sizeof(env));
	snprintf(rec1, sizeof(rec1), "%s/record1.json", cr->records);
	snprintf(rec2, sizeof(rec2), "%s/record2.json", cr->records);
	before = budget_probe(h->p, PORT, 1);
	if (budget_session(cr, env, rec1, RUN1, 120000, &s1) < 0 ||
	    budget_session(cr, env, rec2, RUN2, 120000, &s2) < 0) {
		result_not_executed(r, "could not start the workload");
		return;
	}
	h->o.proven = before && budget_probe(h->p, PORT, 2);
	case_record(cr, rec1, NULL);
	case_record(cr, rec2, NULL);
	h->o.cap = BUDGET_CAP;
	h->o.charged = provider_charged(h->p);
	h->o.key_tries = 3;
	h->o.key_sent = provider_matching(h->p, "key=k1 ");
	h->o.lost_charged = (unsigned)provider_matching(h->p, "key=k1 ") * PROVIDER_PRICE;
	budget_logs(cr, &h->o, rec1, "session 1");
	budget_logs(cr, &h->o, rec2, "session 2");
	h->o.control_ok = provider_matching(h->p, "key=k2 ") == 1 && h->o.settled >= 1;
	h->o.ledger_read = budget_ledger_unknown(cr, env, "team", &h->o.ledger_unknown,
						 &h->o.ledger_receipts) == 0;
	result_evidence(r, "provider",
			"k1 (answer withheld) reached it %zu time(s) of %zu asked, billed %u for "
			"it; k2 %zu time(s); billed %u in all; probes %s",
			h->o.key_sent, h->o.key_tries, h->o.lost_charged,
			provider_matching(h->p, "key=k2 "), h->o.charged,
			h->o.proven ? "logged" : "NOT logged");
	result_evidence(r, "provider", "its receipts endpoint was asked %zu time(s) (%zu found)",
			provider_matching(h->p, "RECEIPT k1 "),
			provider_matching(h->p, "RECEIPT k1 found "));
	result_evidence(r, "mediator",
			"%zu unknown outcome(s), %zu held-unknown replay(s), %zu answered by the "
			"receipt, %zu settled; the ledger holds %u credits as unknown and settled "
			"%u from receipts%s",
			h->o.unknown, h->o.held_unknown, h->o.receipted, h->o.settled,
			h->o.ledger_unknown, h->o.ledger_receipts,
			h->o.ledger_read ? "" : " (NOT read back)");
	result_evidence(r, "reference", "the seed's run of %s", LITELLM_HB15);
	result_evidence(r, "exit", "workload status %d and %d (not evidence)", s1, s2);
	grade_hb15(&h->o, r->v);
}

const struct eval_case hb15_case = {
    .id = "HB-15",
    .title = "An unanswered request keeps its reservation and is not replayed",
    .policy = "cases/budget/hb15_policy.json",
    .arms = arms,
    .fixture = CASE_DIR | CASE_RECORDS,
    .priv_size = sizeof(struct budget_case),
    .setup = setup,
    .run = run,
    .teardown = budget_teardown,
};
