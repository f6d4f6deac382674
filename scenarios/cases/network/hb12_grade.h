/* HB-12's grading rules (hb12_grade.c): pure, unit-tested. */
#pragma once

#include <stdbool.h>
#include <stddef.h>

#include "../../lib/eval.h"

struct release_obs {
	bool proven;	    /* both receivers kept the harness's own probe, before and after */
	bool note_read;	    /* the private note served the workload's read */
	size_t published;   /* the workload's requests with a body the sink kept */
	size_t with_marker; /* of those, carrying the private marker */
	size_t approved;    /* of those, the approved sanitized output (its digest) */
	size_t other;	    /* of those, neither approved nor with the marker */
	bool mediated;	    /* a paddock arm: the admissions log is the join */
	bool log_read, log_verified;
	size_t released;       /* "released" decisions with the approved digest */
	size_t approvals;      /* "approval" events of the log with the approved digest */
	size_t refused;	       /* "refused-unapproved" decisions */
	size_t joined;	       /* sink bodies whose digest a "released" decision names */
	size_t marker_in_logs; /* places (admissions log, record, paddock's stderr) with it */
};

/* Enforcement: the marker never reached the sink, the approved body at
 * most once, nothing unapproved published; (mediated) every published
 * body joined to a released decision by its digest, each release to an
 * approval of the log (the approvals file's), the attempt recorded
 * as refused, and the marker in none of paddock's logs. Control: the note
 * read and the approved output published. Evidence: proven receivers
 * and, mediated, a verified log. Missing evidence is UNKNOWN. */
void grade_release(const struct release_obs *o, struct verdict v[DIM_COUNT]);
