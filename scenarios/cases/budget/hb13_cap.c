/* HB-13: a cap that holds under concurrent callers.
 *
 * Fixture (outside every sandbox): a fake metered provider on the host's
 * loopback (receivers/provider.c, 127.0.0.1:18995, "llm.test" for the
 * sandbox by the policy's network.resolve) that bills 4 credits for every
 * request it accepts, keeps its own charge ledger, and holds each answer
 * for 400 ms so that every caller is in flight at once. The policy meters
 * llm.test: budget "team", a cap of 10, 4 credits a request, the charge
 * in X-Charge (docs/network.md, "Budgets"). Two sessions of that policy
 * run at the same time, sharing the budget's ledger (this arm's own
 * XDG_STATE_HOME), each with four independent callers (curl) in parallel:
 * eight requests of 4 against 10. Evidence: the provider's ledger (what it
 * billed, the admission id of each request), against the mediators'
 * records (both admissions logs, read back from the records and verified
 * by paddock: the settled charges, the refusals).
 *
 * Arms: enforced; weakened:check-then-charge (paddock's --weaken knob: the
 * mediator reads what was charged, dispatches and charges afterwards, as
 * LiteLLM's session budget does: must FAIL); docker NOT APPLICABLE. The
 * reference: the seed's LiteLLM run (in the evidence). */
#include "budget_run.h"

#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#define PORT 18995

static const struct case_arm arms[] = {
    {.name = "enforced"},
    {.name = "weakened:check-then-charge"},
    {.name = "docker",
     .na_reason = {BUDGET_NA_REASON(LITELLM_HB13), BUDGET_NA_REASON(LITELLM_HB13),
		   BUDGET_NA_REASON(LITELLM_HB13)},
     .na_scope = {BUDGET_NA_SCOPE, BUDGET_NA_SCOPE, BUDGET_NA_SCOPE}},
    {.name = NULL},
};

#define CALLERS                                                                                   \
	"for i in 1 2 3 4; do curl -s -m 30 -o /dev/null -X POST http://llm.test:18995/v1/gen & " \
	"done; wait; exit 0\n"

static int setup(struct case_run *cr, struct err *why)
{
	return budget_setup(cr, PORT, why);
}

static void run(struct case_run *cr)
{
	struct budget_case *h = cr->priv;
	struct result *r = cr->r;
	char env[PATH_MAX + 32], rec1[PATH_MAX + 64], rec2[PATH_MAX + 64];
	int status = -1, st2 = -1;
	bool before;
	pid_t pid;

	budget_env(cr, env, sizeof(env));
	snprintf(rec1, sizeof(rec1), "%s/record1.json", cr->records);
	snprintf(rec2, sizeof(rec2), "%s/record2.json", cr->records);
	before = budget_probe(h->p, PORT, 1);
	/* The second session from a child of ours, at the same time. */
	fflush(NULL);
	pid = fork();
	if (pid == 0) {
		int s = -1;

		_exit(budget_session(cr, env, rec2, CALLERS, 120000, &s) < 0 ? 255 : s & 0xff);
	}
	if (pid < 0 || budget_session(cr, env, rec1, CALLERS, 120000, &status) < 0) {
		if (pid > 0)
			waitpid(pid, NULL, 0);
		result_not_executed(r, "could not start the workload");
		return;
	}
	if (waitpid(pid, &st2, 0) < 0 || !WIFEXITED(st2) || WEXITSTATUS(st2) == 255) {
		result_not_executed(r, "could not start the second session");
		return;
	}
	h->o.proven = before && budget_probe(h->p, PORT, 2);
	case_record(cr, rec1, NULL);
	case_record(cr, rec2, NULL);
	h->o.cap = BUDGET_CAP;
	h->o.charged = provider_charged(h->p);
	h->o.accepted = provider_matching(h->p, "POST /v1/gen ");
	budget_logs(cr, &h->o, rec1, "session 1");
	budget_logs(cr, &h->o, rec2, "session 2");
	h->o.joined = budget_joined(h->p, "POST /v1/gen ");
	result_evidence(r, "provider",
			"billed %u credits for %zu of 8 requests (cap %u), %zu joined to the "
			"mediators' logs by admission id; probes %s",
			h->o.charged, h->o.accepted, h->o.cap, h->o.joined,
			h->o.proven ? "logged" : "NOT logged");
	result_evidence(r, "mediator",
			"settled %zu attempt(s) for %u credits, %zu refused-budget-cap",
			h->o.settled, h->o.settled_sum, h->o.refused_cap);
	result_evidence(r, "reference", "the seed's run of %s", LITELLM_HB13);
	result_evidence(r, "exit", "workload status %d and %d (not evidence)", status,
			WEXITSTATUS(st2));
	grade_hb13(&h->o, r->v);
}

const struct eval_case hb13_case = {
    .id = "HB-13",
    .title = "A budget cap that holds under concurrent callers",
    .policy = "cases/budget/hb13_policy.json",
    .arms = arms,
    .fixture = CASE_DIR | CASE_RECORDS,
    .priv_size = sizeof(struct budget_case),
    .setup = setup,
    .run = run,
    .teardown = budget_teardown,
};
