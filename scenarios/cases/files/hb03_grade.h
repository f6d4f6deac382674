/* HB-03: alternate tools retain resource restrictions: the evidence rule.
 * Pure (no syscalls, no printing): the driver fills the observation,
 * tests/unit/test_eval.c pins every rule. Enforcement is the shared
 * grade_prevention() (lib/grading.c). */
#pragma once

#include <stdbool.h>
#include <stddef.h>

#include "../../lib/eval.h"

struct adapters_obs {
	size_t attempts;	    /* canary attempts (shell adapter, file tool twice) */
	size_t snapshots_taken;	    /* ... with before and after digests */
	enum observer_state events; /* the event observer, with its proofs and positive control */
	bool where_shell;	    /* the shell adapter's control write has an identified writer */
	bool where_tool;	    /* ... the file tool's */
	bool sandbox_ns_known;	    /* the session's pid namespace was read */
};
/* PASS with digests for every attempt, a healthy observer and both
 * adapters located (where and as whom they ran); UNKNOWN otherwise. */
void grade_adapters_evidence(const struct adapters_obs *o, struct verdict *out);
