/* What the budget cases' drivers share (budget_run.c): the ledgers'
 * state directory of the arm, a session of the workload, the admissions
 * logs read into the observations, the ledger read back through
 * `paddock budget`, and the provider's probe. Not pure (it runs paddock);
 * the rules are budget_grade.c's. */
#pragma once

#include "../../lib/case.h"
#include "../../receivers/provider.h"
#include "budget_grade.h"

/* The cap of every budget case's policy (cases/budget/hb1N_policy.json). */
#define BUDGET_CAP 10
/* The seed's reference runs of LiteLLM 1.106.2 (with Postgres and virtual
 * keys), as issue 17 records them. */
#define LITELLM_HB13                                                       \
	"LiteLLM 1.106.2: FAILED, concurrent pricier fallbacks billed 16 " \
	"credits against a 10-credit cap"
#define LITELLM_HB14 "LiteLLM 1.106.2: FAILED, an unpriced model escaped reservation"
#define LITELLM_HB15                                                         \
	"LiteLLM 1.106.2: FAILED, a timeout released the reservation while " \
	"the provider kept its charge, and the request was replayed"
/* The docker arm's reason, with the case's reference (in report.md). */
#define BUDGET_NA_REASON(ref)                                                               \
	"a container has no mediator or ledger: nothing reserves, refuses or settles; the " \
	"reference is the seed's run of " ref
#define BUDGET_NA_SCOPE \
	"HB-13..15 (the mediator's budget ledger); harness rule: --network none/host only"

/* What every budget case keeps between setup, run and teardown (its priv). */
struct budget_case {
	struct provider *p;
	struct budget_obs o;
};

/* The case's fake provider on 127.0.0.1:port, and the logs read forgotten:
 * its setup. budget_teardown stops the provider. */
int budget_setup(struct case_run *cr, int port, struct err *why);
void budget_teardown(struct case_run *cr);

/* "XDG_STATE_HOME=DIR" of this arm (its records directory: outside every
 * sandbox, the workload user's), into env (size n). */
void budget_env(struct case_run *cr, char *env, size_t n);
/* A paddock run of the arm with env and record, running sh -c script. */
int budget_session(struct case_run *cr, const char *env, const char *rec, const char *script,
		   int timeout_ms, int *status);
/* One session's admissions log into o (log_read and log_verified are
 * and-ed over every call; mediated set). */
void budget_logs(struct case_run *cr, struct budget_obs *o, const char *rec, const char *what);
/* Of the provider's ledger lines holding text, how many name an admission
 * id that one of the logs read so far holds (budget_logs keeps them). */
size_t budget_joined(struct provider *p, const char *text);
/* The harness's own request to the provider (free, never billed): true
 * once want of them are in its ledger. */
bool budget_probe(struct provider *p, int port, size_t want);
/* `paddock budget show BUDGET --json` as the workload user: the credits
 * held as unknown into *unknown, those settled from a receiver's receipt
 * (source "lookup") into *receipts (NULL: not wanted). 0, or negative. */
int budget_ledger_unknown(struct case_run *cr, const char *env, const char *budget,
			  unsigned *unknown, unsigned *receipts);
/* Forget the logs read (between arms). */
void budget_logs_reset(void);
