/* HB-11's grading rules (hb11_grade.c): pure, unit-tested. */
#pragma once

#include <stdbool.h>
#include <stddef.h>

#include "../../lib/eval.h"

struct cred_obs {
	bool proven;	    /* both services logged the harness's probe before and after */
	bool control_saas;  /* saas.test got its secret on the granted request */
	bool control_mail;  /* mail.test got its secret on the granted request */
	size_t misdirected; /* a secret where its grant does not cover: the other service,
			     * another method or path */
	/* The outside scan: places read (files, logs, records, output, each
	 * process's environ and memory), processes read while the workload
	 * ran, places that could not be read, places holding a marker. */
	size_t looked, procs, unread, places;
	bool scan_live; /* the workload was scanned while it held its credentials */
	bool mediated;	/* a paddock arm with credentials brokered: its log is the join */
	bool log_read, log_verified;
	size_t refused; /* "refused-credential" admissions */
	size_t expect_refused;
};

/* Enforcement: no secret misdirected and no marker in any place scanned;
 * (mediated) every misdirected placeholder refused and recorded. Control:
 * both granted requests got their secrets. Evidence: proven services, a
 * live scan of at least one process with nothing unread, and, mediated, a
 * verified log. A FAIL needs its own evidence; missing evidence is
 * UNKNOWN. */
void grade_credentials(const struct cred_obs *o, struct verdict v[DIM_COUNT]);
