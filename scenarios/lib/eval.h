/* paddock-eval: the scenario harness (DESIGN.md "Scenario harness").
 *
 * The result model every part shares: grades, verdicts, one result per
 * case and arm, the subject under test; the shared grading rules
 * (grading.c: verdict_set, grade_prevention, grade_write_evidence, the
 * alarms) and the result's life (result.c), both pure; the report writers
 * (report.c, pure over FILE *). A case's own observation struct and grader
 * live beside its driver (cases/AREA/hbNN_grade.h); the case skeleton is
 * case.h; docs/scenarios.md "Layout" maps the folders. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <sys/types.h>

enum grade {
	GRADE_PASS,
	GRADE_FAIL,
	GRADE_UNKNOWN,
	GRADE_NOT_EXECUTED,
	GRADE_NOT_APPLICABLE,
};

enum dim {
	DIM_ENFORCEMENT,
	DIM_CONTROL,
	DIM_EVIDENCE,
	DIM_COUNT,
};

enum arm_kind {
	ARM_ENFORCED,
	ARM_WEAKENED, /* one --weaken knob: expected to FAIL enforcement (or its arm's "weakens") */
	ARM_DOCKER,   /* reference arm */
	ARM_BROKEN_COLLECTOR, /* the event collector drops everything: expected UNKNOWN */
};

/* One grade with its one-line reason (required unless PASS) and, for
 * NOT APPLICABLE, the scope it refers to. */
struct verdict {
	enum grade grade;
	bool set;
	char reason[320];
	char scope[160];
};

#define EVAL_MAX_EVIDENCE 192
#define EVAL_MAX_MOCKS	  4

struct evidence {
	char source[32]; /* which observer: canary-sha256, fanotify, inventory, record, ledger, exit
			  */
	char text[400];
};

/* What is under test, the same for every record of a run. */
struct subject {
	char paddock_version[64];
	char paddock_commit[64];
	char paddock_path[512];
	char kernel[128];
	char libseccomp[64];
	char docker_client[64];
	char docker_server[64];
	char docker_reason[200]; /* why the docker arms cannot run, "" when they can */
	char run_id[64];
	uid_t workload_uid;
	gid_t workload_gid;
	bool root;		   /* the harness runs as root: fanotify with identity */
	char fanotify_reason[200]; /* why no fanotify observer, "" when available */
};

/* One completion record as the harness read it back (lib/record.c). */
struct record_view {
	bool read;
	char path[256];
	char sha256[65];	   /* of the record file's bytes: embedded in the arm's JSON */
	char weakenings[160];	   /* "weakenings", comma-joined in order; "" none */
	char effective_sha256[80]; /* "policy.effective_sha256" */
	char policy_path[256];	   /* "policy.path" */
	bool pidns;		   /* "pid" in "namespaces" */
	int survivors;		   /* length of "survivors", -1 absent */
	bool mounts_reported;	   /* "mounts_reported" true */
	size_t mounts;		   /* ops in "mounts" */
	size_t mounts_bad;	   /* ... whose state is not applied, skipped or symlink */
};

#define EVAL_MAX_RECORDS   16
#define EVAL_MAX_ARTIFACTS 48 /* screenshots and saved responses (HB-07) */

struct result {
	char case_id[16];
	char title[96];
	char arm[48];
	enum arm_kind kind;
	/* oci:docker-runtime-paddock (kind ARM_DOCKER: the docker arm's
	 * image and steps): Docker with paddock oci as its runtime
	 * (docs/oci.md), graded as paddock's own arm, not as a reference. */
	bool oci;
	char knob[32];
	/* ARM_WEAKENED: the dimension that must FAIL (the case's arm table;
	 * enforcement unless it says otherwise). */
	enum dim weakens;
	struct verdict v[DIM_COUNT];
	char alarm[320]; /* loud problems: a weakened arm that did not fail, ... */
	/* The enforcement point is a mock or the harness itself (a fixture),
	 * not paddock: said next to the grade in every report. */
	bool fixture_only;
	char fixture_why[200];
	char mocks[EVAL_MAX_MOCKS][200];
	size_t n_mocks;
	char policy_path[512];
	char policy_sha256[80];
	char weakenings[64];
	char fanotify_mode[200]; /* the event observer's mode, "" when none ran */
	struct evidence ev[EVAL_MAX_EVIDENCE];
	size_t n_ev;
	size_t ev_dropped; /* evidence lines that did not fit */
	double seconds;
	/* Completion records read back (case_record()): path and digest. */
	struct {
		char path[256];
		char sha256[65];
	} recs[EVAL_MAX_RECORDS];
	size_t n_recs;
	/* Files beside the reports that show what a validation saw (HB-07's
	 * screenshots): a label and the path relative to the results
	 * directory, linked from report.md and listed in the JSON. */
	struct {
		char label[96];
		char path[200];
	} artifacts[EVAL_MAX_ARTIFACTS];
	size_t n_artifacts;
	/* Set once a step of the arm could not run as written (argv_add()
	 * refused a word): result_finish() makes every dimension NOT EXECUTED
	 * with it, whatever the driver graded. */
	char not_run[320];
};

/* The run's results, grown as the run goes (result.c). */
struct results {
	struct result *v;
	size_t n, cap;
};
/* The bound is far above cases times arms (24 cases of a few arms): past it
 * results_next() fails loudly instead of dropping results. */
#define EVAL_MAX_RESULTS 4096

/* The arm's steps are Docker's (docker run ...): the docker arms, the oci
 * arm and its weakened twin (oci-weakened:KNOB, kind ARM_WEAKENED, its
 * knob given to paddock oci as the annotation org.paddock.weaken). */
static inline bool result_docker_steps(const struct result *r)
{
	return r->kind == ARM_DOCKER || r->oci;
}

/* ---- grading.c (the shared grading rules) and result.c: pure ---- */

const char *grade_name(enum grade g);
const char *dim_name(enum dim d);

/* Set one dimension. Every grade other than PASS needs a reason, and
 * NOT APPLICABLE also a scope: -EINVAL otherwise (the grade is then set to
 * UNKNOWN with a reason saying so, never left as asked). */
int verdict_set(struct verdict *v, enum grade g, const char *reason, const char *scope);
/* The same with a formatted reason and no scope. */
__attribute__((format(printf, 3, 4))) int verdict_setf(struct verdict *v, enum grade g,
						       const char *fmt, ...);
/* Every dimension UNKNOWN for one reason: the evidence all three stand on
 * is missing (a receiver that did not log the harness's own probe). */
void verdict_unknown_all(struct verdict v[DIM_COUNT], const char *reason);

/* Observations behind a prevention claim. */
enum observer_state {
	OBSERVER_OK,	      /* ran, healthy, nothing dropped */
	OBSERVER_UNAVAILABLE, /* could not run (no privilege, no kernel support) */
	OBSERVER_DROPPED,     /* ran but lost events (overflow, broken collector) */
};

struct prevention_obs {
	size_t attempts;	 /* forbidden attempts made (forms) */
	size_t snapshots_taken;	 /* attempts with before and after digests */
	size_t snapshot_changes; /* attempts after which the protected bytes differed */
	size_t event_writes;	 /* write events on the protected object from the workload */
	enum observer_state events;
	const char *observer_why; /* why the event observer is missing or unhealthy, or NULL */
	bool transient_in_scope;  /* a transient write-and-restore would matter */
};

/* Prevention: an observed forbidden effect (by any observer) is FAIL, even
 * when detection worked; missing evidence is UNKNOWN, never PASS; with only
 * before/after snapshots where transient mutation is in scope: UNKNOWN. */
void grade_prevention(const struct prevention_obs *o, struct verdict *out);

/* Evidence behind a write-event claim (HB-01, HB-04): enough observation
 * to support "no forbidden write" or "this write, by this writer". */
struct write_evidence_obs {
	size_t attempts;	/* forms or runs that had to be observed */
	size_t snapshots_taken; /* ... with before and after digests */
	enum observer_state events;
	const char *observer_why; /* why the event observer is missing or unhealthy */
	size_t blind;		  /* positive controls (allowed writes) the observer missed */
	size_t writes;		  /* write events that matter to the claim */
	size_t identified;	  /* ... whose writer identity was established */
	bool held_identity;	  /* permission mode: openers were held in open(2) while read */
};
/* PASS only with digests for every attempt, a healthy observer that saw
 * every positive control, and an established identity for every write
 * event; UNKNOWN otherwise, with the reason (and the observer's mode when
 * identities are missing). More identified than writes is a harness defect
 * (UNKNOWN): the grade never claims identity it was not given. */
void grade_write_evidence(const struct write_evidence_obs *o, struct verdict *out);

/* The conclusion the snapshot observer may draw: limited to final-state
 * equality (static text; never "no mutation occurred"). */
const char *snapshot_conclusion(bool equal);

/* A weakened arm whose enforcement is not FAIL (PASS or UNKNOWN) cannot
 * show what the case claims to detect; a broken-collector arm that does
 * not give UNKNOWN hides missing evidence. Fills r->alarm and returns true
 * then (NOT EXECUTED and NOT APPLICABLE are no alarm: outcome says so). */
bool result_check_alarm(struct result *r);

/* What a graded dimension means for the run (docs/scenarios.md "Exit
 * status"), worst last: the exit status is the worst over the run. */
enum outcome {
	OUTCOME_OK,	      /* as expected (or not needed: docker, NOT APPLICABLE) */
	OUTCOME_NOT_EXECUTED, /* a needed dimension did not run */
	OUTCOME_UNKNOWN,      /* the harness could not tell (or an alarm) */
	OUTCOME_FAIL,	      /* the boundary failed */
};

/* paddock-eval's exit status (main.c, docs/scenarios.md). */
enum eval_exit {
	EVAL_EXIT_OK = 0,	    /* every needed dimension as expected */
	EVAL_EXIT_FAIL = 1,	    /* an enforced arm FAILed enforcement or control */
	EVAL_EXIT_USAGE = 2,	    /* bad command line */
	EVAL_EXIT_HARNESS = 3,	    /* the harness could not run */
	EVAL_EXIT_UNKNOWN = 4,	    /* the harness could not tell, or an alarm */
	EVAL_EXIT_NOT_EXECUTED = 5, /* a needed dimension was NOT EXECUTED */
};

/* Dimension d of r: needed (an enforced arm's three; a weakened arm's and
 * a broken-collector arm's enforcement; never a docker arm's or a
 * NOT APPLICABLE one) and its outcome. Expected: an enforced arm PASSes,
 * a weakened arm FAILs ("weakening detected"), a broken-collector arm is
 * UNKNOWN ("missing evidence noticed"). Anything else of a needed
 * dimension is FAIL (enforced FAIL), NOT_EXECUTED, or UNKNOWN. */
enum outcome result_dim_outcome(const struct result *r, enum dim d, bool *needed);
/* The worst of r's dimensions; an alarm is at least UNKNOWN. */
enum outcome result_outcome(const struct result *r);
/* The run fails on this result (result_outcome() is not OK). */
bool result_fails_run(const struct result *r);
/* The run's verdict: the exit status (EVAL_EXIT_OK, _FAIL, _UNKNOWN,
 * _NOT_EXECUTED) and one line saying why, naming the first result and
 * dimension with the worst outcome. */
int run_verdict(const struct result *rs, size_t n, char *line, size_t len);

/* A completion record against what the arm meant to run: weakenings
 * equal to want ("" none; an adapter arm wants none); effective digest
 * equal to effective when that is set (the same policy across forms);
 * every mount op reported and applied (or skipped, a recreated symlink);
 * no survivors where a pid namespace exists. 0 when it agrees, else the
 * number of mismatches with the first one in why. An unread record is 1
 * with why "record missing". */
int record_check(const struct record_view *v, const char *want, const char *effective, char *why,
		 size_t n);

/* Append one evidence line (truncated, counted in ev_dropped when full). */
__attribute__((format(printf, 3, 4))) void result_evidence(struct result *r, const char *source,
							   const char *fmt, ...);
void result_init(struct result *r, const char *case_id, const char *title, const char *arm);
void result_mock(struct result *r, const char *what);
/* One artifact (label, path relative to the results directory); past
 * EVAL_MAX_ARTIFACTS it is dropped and counted in ev_dropped. */
void result_artifact(struct result *r, const char *label, const char *relpath);

/* Before reporting: a result that did not run as written (not_run) is
 * NOT EXECUTED in every dimension; a dimension nobody graded is UNKNOWN
 * (missing evidence); then the alarm check. */
void result_finish(struct result *r);

/* Fill every dimension left unset with NOT EXECUTED and the reason. */
void result_not_executed(struct result *r, const char *reason);
/* The arm did not run as written: keep the first reason; result_finish()
 * turns every dimension into NOT EXECUTED with it. */
void result_not_run(struct result *r, const char *reason);

/* A new zeroed result at the end of rs: 0, -ENOMEM, or -E2BIG past
 * EVAL_MAX_RESULTS (never a silent drop). rs->v may move: pointers from
 * earlier calls are stale. */
int results_next(struct results *rs, struct result **out);
void results_free(struct results *rs);

/* ---- merge.c: reading a run's per-arm JSON record back (paddock-eval
 * report), pure apart from malloc ---- */

/* One record as report_write_json() wrote it into r (result_init() with
 * its case, title and arm: kind from the arm's name; the caller sets what
 * the case table knows, weakens) and s (the subject it names). 0, or
 * -EINVAL/-E2BIG with err naming the key ("\"grades.control.grade\":
 * unknown grade \"MAYBE\""). */
struct err;
int result_read_json(const char *text, size_t len, struct result *r, struct subject *s,
		     struct err *err);
/* The same grade in every dimension. */
bool result_agrees(const struct result *a, const struct result *b);
/* "PASS/PASS/FAIL": enforcement, control, evidence. */
void result_grades_text(const struct result *r, char *out, size_t n);

/* ---- report.c: writers over FILE * (pure apart from the stream) ---- */

void json_write_string(FILE *f, const char *s);
void xml_write_escaped(FILE *f, const char *s);
void md_write_cell(FILE *f, const char *s);
void report_write_json(FILE *f, const struct result *r, const struct subject *s);
void report_write_md(FILE *f, const struct result *rs, size_t n, const struct subject *s);
void report_write_junit(FILE *f, const struct result *rs, size_t n, const struct subject *s);
/* The short matrix printed on stdout. */
void report_write_matrix(FILE *f, const struct result *rs, size_t n);
