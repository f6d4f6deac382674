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
	/* A Docker reference: stand-ins of the evidence on a volume; no
	 * log, verify or rotation of its own. */
	bool reference;
	/* The owner's rotation of the policy, through the recorded
	 * administration path: a new generation of the session's name with
	 * the new policy, checked from outside. */
	struct {
		bool ran;	    /* the rotated run happened, its record read */
		bool next_gen;	    /* its session.generation is the attack run's + 1, same name */
		bool record_digest; /* its record's policy.sha256 is the new file's */
		bool log_digest;    /* its log's run event has that digest and generation */
		bool verified;	    /* its log verifies COMPLETE against its record */
		bool old_kept;	    /* the attack run's record keeps the old digest */
	} rot;
};

/* Enforcement: every route refused: no marker in the evidence, the record
 * or the policy, the policy's digest unchanged, the key not read, and the
 * logs verify COMPLETE; anything else seen is a FAIL. Control: the
 * permitted write landed, and the owner's rotation worked and is recorded
 * (next generation, the new digest in record and log, the log COMPLETE,
 * the old record untouched): FAIL when a part is wrong, UNKNOWN when the
 * rotated run did not happen. Evidence: verify ran and the scan is proven.
 * Missing evidence is UNKNOWN. A reference (Docker): enforcement is the
 * volume's alone (no marker, the policy unchanged, the scan proven), the
 * control the permitted write (the rotation is not its path), and the
 * evidence UNKNOWN: nothing of its own records the attempts. */
void grade_tamper(const struct tamper_obs *o, struct verdict v[DIM_COUNT]);
