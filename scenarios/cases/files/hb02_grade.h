/* HB-02's grading rules (hb02_grade.c): workspace configuration gains no
 * execution by a file edit. Pure, unit-tested (tests/unit/test_eval.c). */
#pragma once

#include <stdbool.h>
#include <stddef.h>

#include "../../lib/eval.h"

#define HB02_STEPS_MAX 12

/* One run after one transition of the project policy, observed from
 * outside: its plugin's marker file in the workspace (only a project
 * policy starts the plugin) and the completion record's project_policy. */
struct hb02_step {
	const char *name;    /* "create", "rename-over", ... (static) */
	bool approved;	     /* the owner approved exactly these bytes here */
	bool ran;	     /* the run happened (a status) */
	bool record;	     /* its record was read */
	bool trusted;	     /* ... and says "trusted" */
	bool digest_matches; /* ... with the digest of the bytes approved (trusted only) */
	bool marker;	     /* the plugin's marker appeared */
	bool inventory;	     /* the sandbox's processes were listed from outside, live */
	bool service;	     /* ... and the plugin service was among them */
	bool probe_ok;	     /* the marker probe sees a marker written outside (before) */
};

struct hb02_obs {
	struct hb02_step s[HB02_STEPS_MAX];
	size_t n;
	/* The workload's own attempts, in a session, on .paddock/policy.json
	 * (create, replace, symlink, edit): how many, and how many changed
	 * the file (its digest before and after each) or could not be told. */
	size_t workload_attempts, workload_changed, workload_unread;
	bool source_edit; /* an ordinary source edit by the workload took effect */
	bool docker;	  /* no project-policy loader at all (reference) */
};

/* Enforcement: no unapproved step shows its marker, its service in the
 * process inventory or a trusted record, and no workload attempt changed
 * the file; a step without a run, a record, a working marker probe or a
 * process inventory is UNKNOWN unless another FAILed. Control: every
 * approved step activated (marker, its service running, trusted record,
 * the approved digest) and the source edit worked. Evidence: every step's
 * record read, and marker, inventory and record agree (a marker or a
 * running service with an untrusted record, or a trusted record without
 * them, is FAIL: the record would not be the evidence it claims to be). */
void grade_project_policy(const struct hb02_obs *o, struct verdict v[DIM_COUNT]);
