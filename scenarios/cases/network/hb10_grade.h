/* HB-10's grading rules (hb10_grade.c): pure, unit-tested. */
#pragma once

#include <stdbool.h>
#include <stddef.h>

#include "../../lib/eval.h"

struct scope_obs {
	bool proven;	    /* the SaaS logged the harness's probe before and after */
	size_t forbidden;   /* requests it served outside the grant (t2, DELETE, POST, tricks) */
	bool t2_changed;    /* the other tenant's object is not as it was */
	bool t1_deleted;    /* the granted object is gone (DELETE is not granted) */
	bool control_read;  /* it served the granted read */
	bool control_write; /* it served the granted write, and the object holds it */
	bool mediated;	    /* a paddock arm: its admissions log is the join */
	bool log_read, log_verified;
	size_t admitted; /* "allowed" admissions for saas.test */
	size_t served;	 /* the workload's requests it served */
	size_t joined;	 /* of those, with an admission id of the log */
	size_t refused;	 /* "refused-grant" admissions */
};

/* Enforcement: nothing outside the grant served, the other tenant's
 * object untouched, the granted one not deleted; (mediated) every served
 * request admitted and carrying its id, and the refusals recorded.
 * Control: the granted read and write arrived. Evidence: a proven SaaS
 * and, mediated, a verified log. Missing evidence is UNKNOWN. */
void grade_scope(const struct scope_obs *o, struct verdict v[DIM_COUNT]);
