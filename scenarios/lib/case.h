/* The case skeleton (case.c): every driver fills in the same shape and the
 * skeleton owns the order, so that 24 cases do not carry 24 copies of it:
 *
 *   1. result and configuration (policy path and digest, weakenings);
 *   2. arms NOT APPLICABLE by the case table: graded, nothing runs;
 *   3. docker arms without an engine: NOT EXECUTED with the reason;
 *   4. the case's state (priv), then probe(): can the paddock under test
 *      run this arm at all;
 *   5. mocked parts named in the table, the arm's log path;
 *   6. fixture by flags (directory, canary, task directory, records), then
 *      setup() for the case's own files and observers;
 *   7. run(): arms, control task, outside evidence, grade;
 *   8. teardown() for the case's own sessions and processes, then the
 *      skeleton's: the event observer, the canary's tmpfs, the fixture;
 *   9. result_finish().
 *
 * A failure in 4 or 6 is NOT EXECUTED with its one-line reason; teardown
 * runs whatever happened after 6 began. */
#pragma once

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>

#include "../../include/err.h"
#include "eval.h"
#include "harness.h"

struct fan_observer;

/* One arm of a case. */
struct case_arm {
	const char *name; /* enforced, weakened:KNOB, docker, broken-collector, or the case's */
	const char *mock; /* a mocked part only this arm adds (the record's "mocked"), or NULL */
	/* weakened:MODE names a mode of a harness adapter, not a paddock
	 * --weaken knob: paddock runs unweakened (no --weaken is passed) and
	 * the record's weakenings say so; the arm must still FAIL. */
	bool adapter;
	/* Set when this arm's enforcement point is a mock or the harness
	 * itself: why (the record's fixture_only, the report's note). */
	const char *fixture_only;
	/* NOT APPLICABLE in every dimension, with these reasons and scopes,
	 * when na_reason[0] is set: nothing of the case runs. */
	const char *na_reason[DIM_COUNT];
	const char *na_scope[DIM_COUNT];
	/* A weakened arm: the dimension whose FAIL shows the weakening
	 * (enforcement unless set; HB-09's proxy-env-only keeps every
	 * denied request out and loses the permitted one: control). */
	enum dim weakens;
	/* weakened:MODE run with this paddock knob (--weaken KNOB) when its
	 * name is not MODE (HB-11's audience-unchecked), or NULL. */
	const char *knob;
};

/* What the skeleton sets up before setup(). */
enum case_fixture_flags {
	CASE_DIR = 1u << 0,	/* /tmp/paddock-eval-hbNN.XXXXXX (its own tmpfs as root) */
	CASE_CANARY = 1u << 1,	/* DIR/canary/canary.txt's directory (own tmpfs as root) */
	CASE_TASK = 1u << 2,	/* DIR/task, writable by the workload user */
	CASE_RECORDS = 1u << 3, /* OUTDIR/records/CASE.ARM for completion records */
};

/* One arm's run of a case, as the hooks see it. */
struct case_run {
	struct eval_ctx *ctx;
	struct result *r;
	const struct case_arm *arm;
	struct fixture fx;
	char task[PATH_MAX];	   /* CASE_TASK */
	char records[PATH_MAX];	   /* CASE_RECORDS */
	char canary_dir[PATH_MAX]; /* CASE_CANARY */
	char canary[PATH_MAX + 16];
	bool canary_mounted;
	char log[PATH_MAX + 64]; /* OUTDIR/CASE.ARM.log: workload output, never evidence */
	/* The event observer, when case_fan_start() ran: stopped by the
	 * skeleton; fan_ok false with fan_why when there is none. */
	struct fan_observer *fan;
	bool fan_ok;
	char fan_why[256];
	/* The observer's proof per watched filesystem (the fixture's and the
	 * canary's): a probe write there seen before the workload
	 * (case_fan_start) and after it (case_fan_prove). A proof missing
	 * makes fan_ok false with fan_why. */
	struct {
		char dir[PATH_MAX];
		bool before, after;
	} fan_fs[2];
	size_t n_fan_fs;
	/* CASE_CANARY: the digest's proof that it sees bytes
	 * (observe_digest_proof); false: no digest is evidence (digest_why). */
	bool digest_ok;
	char digest_why[160];
	/* Completion records read back by case_record(): per policy file the
	 * first record's effective policy digest (every later record of that
	 * policy must equal it), how many disagreed with the arm or were
	 * missing, and the first reason. */
	struct {
		char policy[256];
		char sha256[80];
	} effective[4];
	size_t n_effective;
	size_t rec_bad, rec_missing;
	char rec_why[320];
	void *priv; /* the case's own state: priv_size bytes, zeroed, freed after teardown */
};

/* Every driver ends with its descriptor (and begins with its arm table):
 * designated initializers, data and not logic, so duplicates pairs them by
 * shape across drivers. That is the price of one line per fact; the
 * sequence they used to repeat lives in case.c. */
struct eval_case {
	const char *id;
	const char *title;
	const char *policy;	     /* relative to scenarios/, NULL when none */
	const struct case_arm *arms; /* ends with {.name = NULL} */
	const char *mock;	     /* a mocked part every arm uses, or NULL */
	const char *fixture_only;    /* every arm's enforcement point is a fixture: why */
	unsigned fixture;	     /* enum case_fixture_flags */
	size_t priv_size;
	/* Optional: 0, or negative with why (the arm is NOT EXECUTED). */
	int (*probe)(struct case_run *cr, struct err *why);
	int (*setup)(struct case_run *cr, struct err *why);
	/* Required: run the arm and grade it. A step that cannot run sets
	 * NOT EXECUTED itself (result_not_executed) and returns. */
	void (*run)(struct case_run *cr);
	/* Optional: the case's own teardown (sessions, processes). */
	void (*teardown)(struct case_run *cr);
};

/* Run one arm of c through the skeleton into r (result_init() included,
 * result_finish() last). */
void case_run_arm(struct eval_ctx *ctx, const struct eval_case *c, const struct case_arm *arm,
		  struct result *r);

/* Start the fanotify observer on the fixture (broken: HB-04's collector
 * that drops everything), also on the canary's tmpfs when CASE_CANARY;
 * records its mode in the result, or "no event observer: WHY" as
 * evidence. cr->fan_ok says which. */
void case_fan_start(struct case_run *cr, bool broken);

/* Read back one completion record of this arm (paddock arms): its digest
 * goes into the arm's JSON, one evidence line, and record_check() against
 * the arm's weakenings (the knob for a weakened arm, none for the others
 * and for adapter arms), the first effective digest of the same policy, the mounts and
 * the survivors. After the case's teardown the skeleton turns a mismatch
 * into UNKNOWN (enforcement unless FAIL, and evidence) and a missing record
 * into evidence UNKNOWN, each with the reason. out may be NULL. */
void case_record(struct case_run *cr, const char *path, struct record_view *out);
/* The same for an oci arm's container, whose id docker wrote to cidfile
 * (--cidfile, case_argv_arm()), or is cidfile itself when that is not a
 * path (docker run -d's output): paddock oci's record of it. */
void case_oci_record(struct case_run *cr, const char *cidfile);

/* After the workload, before grading: the observer's second proof on
 * every watched filesystem (a probe write seen there), one evidence line
 * each. Returns cr->fan_ok: false (with fan_why) when there was no
 * observer or a proof, before or after, is missing: every grade that needs
 * the observer must then be UNKNOWN. */
bool case_fan_prove(struct case_run *cr);

/* The workload's start for this arm: the docker reference arm's `docker
 * run` with binds and workdir, or `paddock run` with the arm's policy and
 * knob, workspace ws, record, `--name name` when set, and "--". The
 * caller appends the command. */
struct arm_start {
	const struct docker_bind *binds; /* docker: ends with {NULL} */
	const char *workdir;		 /* docker: -w, or NULL */
	const char *ws, *record, *name;	 /* paddock; NULL leaves one out */
	/* paddock: NAME=VALUE words for its environment (through env(1):
	 * the workload user's is clean), NULL-terminated, or NULL. */
	const char *const *env;
	/* paddock: more options before "--" (NULL-terminated, or NULL);
	 * docker: -e NAME=VALUE each of docker_env. */
	const char *const *options;
	const char *const *docker_env;
};
void case_argv_arm(struct case_run *cr, struct argv_buf *a, const struct arm_start *s);
/* Run a vector built by case_argv_arm(): docker as root, paddock as the
 * workload user. run_vec()'s return. */
int case_run_vec(struct case_run *cr, const struct argv_buf *a, const char *log, int timeout_ms,
		 int *status);

/* The case table (cases/cases.c). */
extern const struct eval_case *const eval_cases[];
extern const size_t eval_n_cases;
