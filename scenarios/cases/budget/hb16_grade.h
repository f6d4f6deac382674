/* HB-16's grading rule (hb16_grade.c): pure, unit-tested
 * (tests/unit/test_eval.c). Graded from the mock job service's own ledger
 * (receivers/jobsvc.c: each job's owner, state, charge, and the cancels
 * it was asked) against paddock's records (each session record's
 * network.jobs) and the budget's ledger. */
#pragma once

#include <stdbool.h>
#include <stddef.h>

#include "../../lib/eval.h"

#define HB16_JOBS_MAX 8

struct hb16_job {
	/* The service's ledger. */
	char id[16];
	char owner[80]; /* the session that submitted it, as the service saw it */
	char via[16];	/* /v1/jobs (the session's lease) or /v1/batch (outlive) */
	char mode[8];	/* its cancellation: accept, refuse, silent */
	char state[16]; /* running, cancelled, completed */
	unsigned charge;
	unsigned foreign; /* cancels asked by another session */
	/* paddock's record of its owner (none: recorded false). */
	bool recorded;
	char rec_state[16]; /* ended, retained, unknown, stopped */
	char rec_lease[8];
	bool rec_charge_known;
	unsigned rec_charge, rec_exposure;
};

struct hb16_obs {
	bool proven;	   /* the service logged the harness's probe before and after */
	bool records_read; /* both sessions' records */
	struct hb16_job j[HB16_JOBS_MAX];
	size_t n;
	size_t asked; /* submissions the workloads made */
	bool ledger_read;
	unsigned ledger_unknown; /* credits the budget's ledger holds as unknown */
};

/* Enforcement: every job whose service answers (accept, refuse) is
 * confirmed ended or retained under an outlive lease: a session-leased job
 * running at the service, or recorded stopped, a cancelled outlive job, a
 * cancel of another session's job, a charge over the exposure, or a job in
 * no record FAIL. The silent job's cancellation cannot be confirmed: it is
 * graded in the evidence dimension only (the spec: an unknown can pass the
 * evidence, never the cancellation). Control: the outlive job finished at
 * the service, attributed to its session and recorded retained. Evidence:
 * every ended job's charge as the service's, the silent job unknown (never
 * stopped or ended) with its exposure held in the ledger. */
void grade_hb16(const struct hb16_obs *o, struct verdict v[DIM_COUNT]);
