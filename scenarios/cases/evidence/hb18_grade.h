/* HB-18's grading rules (hb18_grade.c): pure, unit-tested. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "../../lib/eval.h"

/* The exporter outage: the evidence sink (the file system of the run's
 * logs) made full by the fixture while the run goes on, with
 * network.on_capture_loss allow-read-only. */
struct outage_obs {
	bool ran;		/* the outage run happened (a status) */
	bool made;		/* the fixture filled the logs' file system (ENOSPC seen) */
	bool freed;		/* ... and freed it before the run's end */
	bool record;		/* the run's record was read */
	bool impaired;		/* it says the capture was impaired */
	bool mode_matches;	/* ... under on_capture_loss allow-read-only */
	unsigned long refused;	/* its refused_while_impaired */
	bool read_received;	/* the receiver got the read (GET) sent during the outage */
	bool write_received;	/* the receiver got the sensitive (POST) one */
	bool verify_read;	/* paddock evidence verify ran on the run's logs */
	bool verify_complete;	/* and said COMPLETE */
	bool witness_lost_said; /* the record says the second witness was not written */
};

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
	struct outage_obs outage;
};

/* "mediator: missing seq A-B" lines of verify's output: does one hold
 * seq? Pure. */
bool hb18_names_gap(const char *out, const char *source, uint64_t seq);

/* Enforcement: after one known event was removed, verify says INCOMPLETE
 * and names the missing sequence number; COMPLETE is a FAIL (a clean
 * trace with a hole in it). During the outage, the sensitive request must
 * not reach the receiver and the outage run's logs must not verify
 * COMPLETE (each a FAIL); an outage the fixture could not make, or whose
 * run or record is missing, is UNKNOWN. Control: the untouched logs verify
 * COMPLETE, the receiver got every request, and the read sent during the
 * outage reached it (allow-read-only keeps read-only work going).
 * Evidence: both verifications ran and the known event was found and
 * removed; the outage run's record says the capture was impaired under
 * allow-read-only, counts a refusal, and says the second witness (whose
 * directory the fixture removed) was not written. Missing evidence is UNKNOWN; a
 * FAIL is never lifted by another part. */
void grade_gaps(const struct gap_obs *o, struct verdict v[DIM_COUNT]);
