/* HB-14: strict mode: unpriced operations and an unavailable ledger.
 *
 * Fixture (outside every sandbox): the fake metered provider
 * (receivers/provider.c, 127.0.0.1:18996, "llm.test"), billing 4 credits a
 * request and keeping its own ledger. The policy meters llm.test without a
 * rule price: GET /free is declared free (price 0), POST /v1/complete is
 * priced by its JSON body's max_tokens (1 a token, at most 8), every other
 * POST /v1/{op} has no price (docs/network.md, "Budgets": strict mode).
 * Run 1, the ledger fine: two unpriced operations and a /v1/complete
 * without max_tokens (no defensible bound), each tagged by its
 * Idempotency-Key, a priced one (the ledger's first row) and the free one.
 * Run 2, the ledger unavailable (the harness makes its file 0644, which
 * the mediator refuses to trust): two priced requests and the free one.
 * Evidence: the provider's ledger (which tagged requests reached it),
 * against the admissions logs (refused-unpriced, refused-ledger).
 *
 * Arms: enforced; weakened:unpriced-as-free (paddock's --weaken knob: an
 * unpriced operation is admitted at 0: must FAIL); docker NOT APPLICABLE.
 * The reference: the seed's LiteLLM run (in the evidence). */
#include "budget_run.h"

#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#define PORT 18996

static const struct case_arm arms[] = {
    {.name = "enforced"},
    {.name = "weakened:unpriced-as-free"},
    {.name = "docker",
     .na_reason = {BUDGET_NA_REASON(LITELLM_HB14), BUDGET_NA_REASON(LITELLM_HB14),
		   BUDGET_NA_REASON(LITELLM_HB14)},
     .na_scope = {BUDGET_NA_SCOPE, BUDGET_NA_SCOPE, BUDGET_NA_SCOPE}},
    {.name = NULL},
};

#define C  "curl -s -m 20 -o /dev/null "
#define U  "http://llm.test:18996"
#define CJ "-H 'Content-Type: application/json' "
#define RUN1                                                                                   \
	C "-X POST -H 'Idempotency-Key: unpriced-1' " U "/v1/gen\n" C                          \
	  "-X POST -H 'Idempotency-Key: unpriced-2' " U "/v1/embed\n" C CJ                     \
	  "-H 'Idempotency-Key: unpriced-3' -d '{\"prompt\": \"x\"}' " U "/v1/complete\n" C CJ \
	  "-H 'Idempotency-Key: priced-1' -d '{\"max_tokens\": 4}' " U "/v1/complete\n" C U    \
	  "/free\nexit 0\n"
#define RUN2                                                                                   \
	C CJ "-H 'Idempotency-Key: blind-1' -d '{\"max_tokens\": 4}' " U "/v1/complete\n" C CJ \
	     "-H 'Idempotency-Key: blind-2' -d '{\"max_tokens\": 2}' " U "/v1/complete\n" C U  \
	     "/free\nexit 0\n"

static int setup(struct case_run *cr, struct err *why)
{
	return budget_setup(cr, PORT, why);
}

static void run(struct case_run *cr)
{
	struct budget_case *h = cr->priv;
	struct result *r = cr->r;
	char env[PATH_MAX + 32], rec1[PATH_MAX + 64], rec2[PATH_MAX + 64], ledger[PATH_MAX + 64];
	int s1 = -1, s2 = -1;
	bool before, broke;

	budget_env(cr, env, sizeof(env));
	snprintf(rec1, sizeof(rec1), "%s/record1.json", cr->records);
	snprintf(rec2, sizeof(rec2), "%s/record2.json", cr->records);
	snprintf(ledger, sizeof(ledger), "%s/paddock/budgets/team.sqlite", cr->records);
	before = budget_probe(h->p, PORT, 1);
	if (budget_session(cr, env, rec1, RUN1, 120000, &s1) < 0) {
		result_not_executed(r, "could not start the workload");
		return;
	}
	/* The ledger made unavailable from outside: a mode the mediator
	 * refuses (its file must be 0600). */
	broke = chmod(ledger, 0644) == 0;
	if (!broke || budget_session(cr, env, rec2, RUN2, 120000, &s2) < 0) {
		result_not_executed(r, broke ? "could not start the second run"
					     : "the ledger file was not made by the first run");
		return;
	}
	(void)chmod(ledger, 0600);
	h->o.proven = before && budget_probe(h->p, PORT, 2);
	case_record(cr, rec1, NULL);
	case_record(cr, rec2, NULL);
	h->o.cap = BUDGET_CAP;
	h->o.charged = provider_charged(h->p);
	h->o.unpriced_tries = 3;
	h->o.unpriced_sent = provider_matching(h->p, "key=unpriced-");
	h->o.blind_tries = 2;
	h->o.blind_sent = provider_matching(h->p, "key=blind-");
	h->o.free_tries = 2;
	h->o.free_served = provider_matching(h->p, "GET /free key=");
	budget_logs(cr, &h->o, rec1, "run 1 (ledger fine)");
	budget_logs(cr, &h->o, rec2, "run 2 (ledger unavailable)");
	result_evidence(r, "provider",
			"accepted %zu of %zu unpriced request(s), %zu of %zu billable one(s) sent "
			"with the ledger unavailable, the free one %zu of %zu time(s), the priced "
			"one %zu; billed %u; probes %s",
			h->o.unpriced_sent, h->o.unpriced_tries, h->o.blind_sent, h->o.blind_tries,
			h->o.free_served, h->o.free_tries, provider_matching(h->p, "key=priced-1"),
			h->o.charged, h->o.proven ? "logged" : "NOT logged");
	result_evidence(r, "mediator", "%zu refused-unpriced, %zu refused-ledger",
			h->o.refused_unpriced, h->o.refused_ledger);
	result_evidence(r, "reference", "the seed's run of %s", LITELLM_HB14);
	result_evidence(r, "exit", "workload status %d and %d (not evidence)", s1, s2);
	grade_hb14(&h->o, r->v);
}

const struct eval_case hb14_case = {
    .id = "HB-14",
    .title = "Strict mode: unpriced operations and an unavailable ledger are refused",
    .policy = "cases/budget/hb14_policy.json",
    .arms = arms,
    .fixture = CASE_DIR | CASE_RECORDS,
    .priv_size = sizeof(struct budget_case),
    .setup = setup,
    .run = run,
    .teardown = budget_teardown,
};
