/* HB-06: workload expiry accounts for descendants: what the driver observes and
 * how it is graded. Pure (no syscalls, no printing): the driver fills the
 * observation, tests/unit/test_eval.c pins every rule. */
#pragma once

#include <stdbool.h>
#include <stddef.h>

#include "../../lib/eval.h"

/* HB-06 enforcement: one expiry path of A (--ttl, paddock stop, or the
 * supervisor lost), from the host's inventories. */
struct expiry_obs {
	size_t a_before, b_before; /* processes of A and of B before A's expiry */
	size_t a_alive, b_alive;   /* ... of those still alive (same start time) after */
	size_t detached;	   /* detached descendants in A's inventory */
	bool record_read;	   /* A's completion record (not for docker) */
	int record_survivors;	   /* its "survivors" length, -1 absent */
	/* Every look at A's processes after the expiry was conclusive: the
	 * host's /proc said gone or alive (a read that fails otherwise is not
	 * "gone": a blind inventory must not pass). */
	bool after_read;
	/* A's pid namespace, when it is A's own: scanned on the host after
	 * the expiry (the scan saw the harness itself), and what is left in
	 * it: anything, also a process born after the inventory, is A's. */
	bool pidns_own, pidns_scanned;
	size_t pidns_left;
	/* A lease held by A at the expiry (paddock arms; docker: none). */
	bool lease_declared; /* A's policy leases a service past the expiry */
	bool lease_held;     /* it answered from the host right before the expiry */
	bool lease_after;    /* ... and still answered after it */
	bool lease_label;    /* the record says how it ended */
	bool lease_label_ok; /* ... ended by this expiry ("expired", "stopped", ...) */
	/* The supervisor lost contact (the harness SIGKILLed it): no record is
	 * expected, the host inventory is all there is. */
	bool lost;
};
/* One path. FAIL when any of A's processes outlived the expiry (by start
 * time, or anything left in A's own pid namespace), the leased service
 * still answers after it, B lost a process, A's record lists fewer
 * survivors than the host sees alive (the record hides a leftover), or
 * the record says the leased service ended otherwise than by the expiry.
 * UNKNOWN with an empty inventory, an inconclusive look after the expiry,
 * a lost supervisor whose final descendant state is unavailable (no pid
 * namespace of A's own proven empty, and no record: the spec's UNKNOWN),
 * no lease held at the expiry where one was declared, or no detached
 * descendant to account for. Evidence: PASS with both inventories and a
 * conclusive look after, else UNKNOWN. */
void grade_expiry(const struct expiry_obs *o, struct verdict *enforcement,
		  struct verdict *evidence);

/* The other workload (B), compared before and after all of A's expiries:
 * its state, generation and init (pid and start time) from its registry
 * entry (docker: status, pid, start and restart count) and whether it
 * answers its marker. */
struct other_obs {
	bool read;	      /* read before and after */
	bool same;	      /* ... equal */
	size_t probes_before; /* marker probes before A's expiries */
	size_t ok_before;     /* ... answered */
	size_t probes_after;  /* after */
	size_t ok_after;
};
/* Every path graded by grade_expiry(), then B: the first FAIL wins (B
 * changed or stopped answering is a FAIL whatever the paths say), then
 * the first UNKNOWN; each reason names its path. n paths, names[i] for
 * paths[i]. */
void grade_expiry_paths(const struct expiry_obs *paths, const char *const *names, size_t n,
			const struct other_obs *b, struct verdict *enforcement,
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
