/* The decisions of paddock-mediator, as its admissions log writes them and
 * the completion record counts them (docs/network.md): one table for the
 * mediator and the supervisor. */
#pragma once

enum mediator_decision {
	MEDIATOR_ALLOWED,
	MEDIATOR_NO_RULE,	/* no rule names this name and port */
	MEDIATOR_LITERAL,	/* an address no name of ours stands for */
	MEDIATOR_ADDRESS,	/* the name resolved only to refused addresses */
	MEDIATOR_SNI,		/* TLS without SNI, or for another name */
	MEDIATOR_MALFORMED,	/* a request the strict parser refused */
	MEDIATOR_PROTOCOL,	/* the rule's protocol is not what the client spoke */
	MEDIATOR_GRANT,		/* the rule has grants and none covers the method and path */
	MEDIATOR_UPSTREAM,	/* admitted, but the upstream could not be reached */
	MEDIATOR_DNS_ANSWERED,	/* an allowed name, answered with a synthetic address */
	MEDIATOR_DNS_REFUSED,	/* any other name: REFUSED, nothing sent anywhere */
	MEDIATOR_DNS_FORWARDED, /* --weaken dns-open: any other name, sent to the upstream */
	/* The release gate (mediator/gate.c): */
	MEDIATOR_HELD,	     /* a publication's body is read and waits for an approval */
	MEDIATOR_RELEASED,   /* an approval of its digest and destination was spent on it */
	MEDIATOR_UNAPPROVED, /* no approval in time, or a body too large to digest */
	MEDIATOR_TAINTED,    /* a tunnel (tls, tcp) of a tainted session to a non-private rule */
	/* HB-23: an operation's attempt budget (mediator/attempts.c) */
	MEDIATOR_BUDGET,       /* its attempts or its deadline are spent */
	MEDIATOR_TERMINAL,     /* an earlier attempt ended in a terminal denial */
	MEDIATOR_HELD_UNKNOWN, /* an earlier attempt's outcome is unknown: never sent again */
	MEDIATOR_IN_FLIGHT,    /* an attempt of it is still waiting for its response */
	/* Brokered credentials (mediator/credentials.c): */
	MEDIATOR_CREDENTIAL, /* a credential's placeholder where no grant with it covers */
	/* Budgets of metered rules (mediator/ledger.c): */
	MEDIATOR_BUDGET_CAP, /* its bound does not fit what is left of the budget's cap */
	MEDIATOR_UNPRICED,   /* no price, or no defensible upper bound (strict mode) */
	MEDIATOR_LEDGER,     /* the ledger is unavailable (locked, full, corrupt, missing) */
	MEDIATOR_RECEIPT,    /* a replay of an unknown operation, answered by its receipt */
	/* network.on_capture_loss (docs/evidence.md): */
	MEDIATOR_CAPTURE, /* the admissions log cannot be written, and the policy refuses */
	/* Remote jobs and adapters (mediator/jobs.c, adapter.c): */
	MEDIATOR_JOBS_FULL, /* a job submission with no lease left to track it */
	MEDIATOR_UNPARSED,  /* an adapter's request the mediator cannot parse */
	MEDIATOR_ACTION,    /* an adapter's action the grant (network.actions) does not allow */
	MEDIATOR_DECISIONS,
};

static const char *const mediator_decision_names[MEDIATOR_DECISIONS] = {
    "allowed",
    "refused-no-rule",
    "refused-literal",
    "refused-address",
    "refused-sni",
    "refused-malformed",
    "refused-protocol",
    "refused-grant",
    "upstream-failed",
    "dns-answered",
    "dns-refused",
    "dns-forwarded",
    "held",
    "released",
    "refused-unapproved",
    "refused-tainted",
    "refused-budget",
    "refused-terminal",
    "held-unknown",
    "refused-in-flight",
    "refused-credential",
    "refused-budget-cap",
    "refused-unpriced",
    "refused-ledger",
    "answered-receipt",
    "refused-capture-loss",
    "refused-jobs-full",
    "refused-unparsed",
    "refused-action",
};

static inline const char *mediator_decision_name(enum mediator_decision d)
{
	return (unsigned)d < MEDIATOR_DECISIONS ? mediator_decision_names[d] : "?";
}
