/* HB-19's grading rules (hb19_grade.c): pure, unit-tested. */
#pragma once

#include <stdbool.h>
#include <stddef.h>

#include "../../lib/eval.h"

struct tamper_obs {
	bool scan_proven;      /* the scan found the marker where the harness knows it is */
	bool verified;	       /* paddock evidence verify ran against the record */
	bool complete;	       /* and said COMPLETE */
	size_t marked;	       /* evidence files, record or policy holding the workload's marker */
	bool policy_unchanged; /* the policy file's digest is the one the arm started with */
	bool key_copied;       /* the workspace holds a copy of the run's key */
	bool workspace_ok;     /* the workload's permitted write landed */
};

/* Enforcement: every route refused: no marker in the evidence, the record
 * or the policy, the policy's digest unchanged, the key not read, and the
 * logs verify COMPLETE; anything else seen is a FAIL. Control: the
 * permitted write landed. Evidence: verify ran and the scan is proven.
 * Missing evidence is UNKNOWN. */
void grade_tamper(const struct tamper_obs *o, struct verdict v[DIM_COUNT]);
