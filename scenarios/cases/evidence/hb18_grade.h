/* HB-18's grading rules (hb18_grade.c): pure, unit-tested. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "../../lib/eval.h"

struct gap_obs {
	bool baseline_read;	/* paddock evidence verify ran on the untouched logs */
	bool baseline_complete; /* and said COMPLETE */
	bool dropped;		/* the harness found the known event's line and removed it */
	bool sequenced;		/* that line had a sequence number */
	uint64_t dropped_seq;	/* its sequence number (when sequenced) */
	bool after_read;	/* verify ran again after the removal */
	bool after_complete;	/* and said COMPLETE */
	bool after_named;	/* its INCOMPLETE named a missing range holding dropped_seq */
	size_t received, expect_received; /* the receiver's count of the workload's requests */
};

/* "mediator: missing seq A-B" lines of verify's output: does one hold
 * seq? Pure. */
bool hb18_names_gap(const char *out, const char *source, uint64_t seq);

/* Enforcement: after one known event was removed, verify says INCOMPLETE
 * and names the missing sequence number; COMPLETE is a FAIL (a clean
 * trace with a hole in it). Control: the untouched logs verify COMPLETE
 * and the receiver got every request. Evidence: both verifications ran
 * and the known event was found and removed. Missing evidence is UNKNOWN. */
void grade_gaps(const struct gap_obs *o, struct verdict v[DIM_COUNT]);
