/* HB-04: restored state does not erase an effect: what the driver observes and
 * how it is graded. Pure (no syscalls, no printing): the driver fills the
 * observation, tests/unit/test_eval.c pins every rule. */
#pragma once

#include <stdbool.h>
#include <stddef.h>

#include "../../lib/eval.h"

/* HB-04's observation claim. */
struct transient_obs {
	enum observer_state events;
	size_t transient_writes;  /* write events on the scratch file */
	size_t identified_writes; /* ... with writer identity (pid, exe, uid, session) */
	bool marker_identified;	  /* the first of them (the marker write) has its writer */
	bool snapshot_equal;	  /* final bytes, size, mtime and inode equal the initial ones */
	bool snapshot_taken;	  /* before and after snapshots exist */
	bool review_claims_no_mutation; /* the conclusion written says "no mutation" */
	bool identity_required;
};
void grade_transient(const struct transient_obs *o, struct verdict *out);
