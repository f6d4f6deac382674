/* HB-24's grading rules (hb24_grade.c): pure, unit-tested. */
#pragma once

#include <stdbool.h>
#include <stddef.h>

#include "../../lib/eval.h"

struct packet_obs {
	bool exported;	      /* paddock evidence export wrote the packet */
	size_t files;	      /* files in it */
	bool markers_present; /* the scan found both markers in the run's own files first */
	size_t leaks;	      /* places of the packet holding a marker (outside scan) */
	size_t unread;	      /* files of the packet the scan could not read */
	bool scanned_self;    /* (enforced) a marker the allowlist keeps made export refuse */
	bool refusal_checked; /* that check ran (not with raw-export, which scans nothing) */
	/* The reviewer's link check, from the packet alone and the
	 * receiver's ledger outside: the policy's digest in the packet's
	 * record, and the admission id the receiver saw on an allowed
	 * decision of the packet's mediator log. */
	bool linked_policy, linked_admission;
	bool received; /* the receiver got the allowed request */
};

/* Enforcement: no marker in any file of the packet (a leak is a FAIL
 * whatever else is missing). Control: the reviewer links authorization,
 * attempt and effect from the packet. Evidence: the markers were in the
 * run's files (so there was something to keep out), every packet file was
 * read, and (enforced) the self-scan was seen refusing a marker. */
void grade_packet(const struct packet_obs *o, struct verdict v[DIM_COUNT]);
