/* HB-06: workload expiry accounts for descendants: what the driver observes and
 * how it is graded. Pure (no syscalls, no printing): the driver fills the
 * observation, tests/unit/test_eval.c pins every rule. */
#pragma once

#include <stdbool.h>
#include <stddef.h>

#include "../../lib/eval.h"

/* HB-06 enforcement: A's expiry, from the host's inventories. */
struct expiry_obs {
	size_t a_before, b_before; /* processes of A and of B before A's expiry */
	size_t a_alive, b_alive;   /* ... of those still alive (same start time) after */
	size_t detached;	   /* detached descendants in A's inventory */
	bool record_read;	   /* A's completion record (not for docker) */
	int record_survivors;	   /* its "survivors" length, -1 absent */
};
/* Enforcement: FAIL when any of A's processes outlived the expiry, when
 * B lost a process, or when A's record lists fewer survivors than the
 * host sees alive (the record hides a leftover); UNKNOWN with an empty
 * inventory or no detached descendant to account for. Evidence: PASS
 * with both inventories, else UNKNOWN. */
void grade_expiry(const struct expiry_obs *o, struct verdict *enforcement,
		  struct verdict *evidence);

/* HB-06 control: a leased server after its main command's end. */
struct lease_obs {
	bool ran;	      /* the main command ended and paddock run returned */
	bool retained;	      /* the session was "retained" after the main command */
	bool listed;	      /* ps --json: lease with owner, generation and expiry */
	bool recorded;	      /* record "phase": "retained" lists it likewise */
	size_t probes_during; /* client probes between the main end and the expiry */
	size_t ok_during;     /* ... answered by the service */
	bool probed_after;    /* a probe after the session ended */
	bool ok_after;	      /* ... answered */
	bool leak_checked;    /* the main command's detached descendant was looked for */
	size_t leaks_alive;   /* ... and found alive while the service ran */
	bool ended_by_lease;  /* the final record says "lease-expired" */
};
void grade_lease_control(const struct lease_obs *o, struct verdict *out);
