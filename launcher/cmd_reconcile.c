/* paddock evidence reconcile RECORD [--ledger FILE] [--weaken
 * trust-tool-claim]: the disposition of every admitted operation of a run,
 * its task state (what the tool claimed: the status the mediator saw) and
 * its effect state (what the receiver's ledger says) apart, and their join
 * (docs/evidence.md, HB-17). Exit 0 every operation matched, 1 a claim the
 * effect contradicts, 2 an effect unknown (no ledger, or one silent on an
 * operation) and no contradiction, 125 when it cannot be checked. */
#include "launcher.h"

#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../evidence/evidence.h"
#include "../include/cleanup.h"

#define LOG_MAX (256u << 20)

static const char usage[] =
    "Usage: paddock evidence reconcile RECORD [--ledger FILE] [--key FILE]\n"
    "Join every admitted operation of a run (its outcome in the mediator's log: the\n"
    "status the tool answered, the task state) with a receiver's ledger of effects\n"
    "(JSON lines {\"admission\": ID, \"effect\": true|false}, the effect state); the\n"
    "mediator's log is verified against the record first. Each operation: matched,\n"
    "claimed-success-no-effect, claimed-failure-effect or effect-unknown.\n"
    "  --ledger FILE  the receiver's ledger (none: every effect is unknown)\n"
    "  --key FILE     the run's key (default: the supervisor's log with .jsonl as .key)\n"
    "  --weaken trust-tool-claim  take the claim for the effect (evaluation only; also\n"
    "                 when the run had --weaken trust-tool-claim)\n"
    "\n"
    "Exit status: 0 every operation matched; 1 a claim its effect contradicts; 2 an\n"
    "effect unknown and none contradicted; 125 it could not be checked.\n";

int cmd_evidence_reconcile(int argc, char **argv)
{
	static const struct option opts[] = {{"ledger", required_argument, NULL, 'l'},
					     {"key", required_argument, NULL, 'k'},
					     {"weaken", required_argument, NULL, 'W'},
					     {"help", no_argument, NULL, 'h'},
					     {NULL, 0, NULL, 0}};
	const char *ledger_path = NULL, *key_path = NULL;
	cleanup_free char *rtext = NULL, *key = NULL, *kdefault = NULL, *log = NULL, *ledger = NULL;
	struct evidence_reconciled *rc = NULL;
	struct evidence_witness w;
	struct evidence_report rep;
	const struct evidence_checkpoint *cp = NULL;
	size_t rlen, klen, len, llen = 0;
	bool trust = false;
	int c, r, status;

	optind = 1;
	while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		if (c == 'l')
			ledger_path = optarg;
		else if (c == 'k')
			key_path = optarg;
		else if (c == 'W' && strcmp(optarg, "trust-tool-claim") == 0)
			trust = true;
		else if (c == 'h') {
			fputs(usage, stdout);
			return 0;
		} else
			return cli_fail("evidence reconcile: bad option (see paddock evidence "
					"reconcile --help)");
	}
	if (optind + 1 != argc)
		return cli_fail("evidence reconcile: expected one RECORD (see paddock evidence "
				"reconcile --help)");
	r = evidence_slurp(argv[optind], 1u << 20, &rtext, &rlen);
	if (r < 0 || evidence_witness_parse(rtext, rlen, &w) < 0)
		return cli_fail("evidence reconcile: record %s: %s", argv[optind],
				r < 0 ? strerror(-r) : "no session or evidence checkpoint in it");
	trust = trust || evidence_recorded_knob(rtext, rlen, "trust-tool-claim");
	for (size_t i = 0; i < w.n; i++)
		if (strcmp(w.cp[i].source, "mediator") == 0)
			cp = &w.cp[i];
	if (!cp)
		return cli_fail("evidence reconcile: record %s: no mediator's log (the run had no "
				"mediated network)",
				argv[optind]);
	if (!key_path) {
		size_t n = strlen(w.cp[0].log);

		if (n > 6 && strcmp(w.cp[0].log + n - 6, ".jsonl") == 0 &&
		    asprintf(&kdefault, "%.*s.key", (int)(n - 6), w.cp[0].log) > 0)
			key_path = kdefault;
	}
	r = key_path ? evidence_slurp(key_path, 64, &key, &klen) : -ENOENT;
	if (r < 0 || klen != EVIDENCE_KEY_LEN)
		return cli_fail("evidence reconcile: key %s: %s", key_path ? key_path : "(none)",
				r < 0 ? strerror(-r) : "not a 32-byte key");
	r = evidence_slurp(cp->log, LOG_MAX, &log, &len);
	if (r < 0)
		return cli_fail("evidence reconcile: %s: %s", cp->log, strerror(-r));
	if (ledger_path && (r = evidence_slurp(ledger_path, LOG_MAX, &ledger, &llen)) < 0)
		return cli_fail("evidence reconcile: --ledger %s: %s", ledger_path, strerror(-r));
	/* Claims are read only from a log that holds. */
	evidence_verify(log, len, (const unsigned char *)key, w.session, w.sequenced ? cp->seq : 0,
			cp->head, &rep);
	if (rep.verdict != EVIDENCE_COMPLETE) {
		printf("the mediator's log does not verify (%s): every disposition UNKNOWN\n",
		       rep.n_reasons ? rep.reasons[0] : "?");
		return 2;
	}
	rc = malloc(sizeof(*rc));
	if (!rc)
		return cli_fail("evidence reconcile: out of memory");
	evidence_reconcile(log, len, ledger, llen, trust, rc);
	if (trust)
		fprintf(stderr, "paddock: warning: --weaken trust-tool-claim: the tool's claim is "
				"taken for the effect\n");
	for (size_t i = 0; i < rc->n; i++) {
		const struct evidence_op *op = &rc->ops[i];

		printf("%s: task %s (status %u), effect %s: %s\n", op->admission,
		       op->claimed_ok ? "claimed success" : "claimed failure", op->status,
		       !op->effect_known ? "unknown"
		       : op->effect	 ? "happened"
					 : "none",
		       evidence_disposition_name(op->d));
	}
	if (rc->more)
		printf("(%zu more operations not reconciled)\n", rc->more);
	status = rc->counts[EVIDENCE_CLAIMED_SUCCESS_NO_EFFECT] ||
			 rc->counts[EVIDENCE_CLAIMED_FAILURE_EFFECT]
		     ? 1
		 : rc->counts[EVIDENCE_EFFECT_UNKNOWN] || rc->more || !ledger_path ? 2
										   : 0;
	printf("%zu operations: %zu matched, %zu claimed-success-no-effect, %zu "
	       "claimed-failure-effect, %zu effect-unknown\n%s\n",
	       rc->n, rc->counts[EVIDENCE_MATCHED], rc->counts[EVIDENCE_CLAIMED_SUCCESS_NO_EFFECT],
	       rc->counts[EVIDENCE_CLAIMED_FAILURE_EFFECT], rc->counts[EVIDENCE_EFFECT_UNKNOWN],
	       status == 0   ? "MATCHED"
	       : status == 1 ? "MISMATCH"
			     : "UNKNOWN");
	free(rc);
	return status;
}
