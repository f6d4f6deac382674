/* HB-08: completion reports actual execution status: what the driver observes and
 * how it is graded. Pure (no syscalls, no printing): the driver fills the
 * observation, tests/unit/test_eval.c pins every rule. */
#pragma once

#include <stdbool.h>
#include <stddef.h>

#include "../../lib/eval.h"

/* HB-08 retained-service completion. */
struct retained_obs {
	int real_status;      /* paddock run's exit status */
	bool record_read;     /* the record as written at the main end */
	bool record_retained; /* "phase": "retained" */
	int record_status;    /* its "status" */
	bool record_exit_n;   /* "ended": "exit" with "exit_code" == real_status */
	bool record_lease;    /* services[] with owner_uid, generation and expires */
	bool ps_read;	      /* paddock ps --json */
	bool ps_retained;     /* state "retained", "status" == real_status */
	bool ps_lease;	      /* leases[] with owner_uid, generation and expires */
	bool inv_read;	      /* host /proc inventory of the session's pid namespace */
	size_t svc_alive;     /* the service's process alive there */
	size_t other_alive;   /* any other process there but paddock-init */
	bool final_read;      /* the record rewritten at the end */
	bool final_ok;	      /* "phase": "final", status still real_status */
};
/* PASS: non-zero status and every view says so; the live service is
 * declared with owner and expiry in ps and the record; nothing else runs.
 * FAIL: exit zero, a view that disagrees, an undeclared process, a lease
 * without owner or expiry. UNKNOWN: a view missing. */
void grade_retained(const struct retained_obs *o, struct verdict *out);
