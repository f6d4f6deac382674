/* paddock-eval: the scenario harness (DESIGN.md "Scenario harness").
 *
 * One file per case (hbNN_*.c) with the same shape: fixture in a fresh
 * temporary directory, arms, a legitimate control task, evidence collected
 * outside the workload, grading, teardown. The shared part: grading.c
 * (pure), report.c (JSON, Markdown, JUnit writers; pure over FILE *),
 * observe.c (canary digests, fanotify, /proc inventories), arms.c (running
 * paddock as the unprivileged test user, and docker). */
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
	ARM_WEAKENED,	      /* one --weaken knob: expected to FAIL enforcement */
	ARM_DOCKER,	      /* reference arm */
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

#define EVAL_MAX_EVIDENCE 96
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

struct result {
	char case_id[16];
	char title[96];
	char arm[48];
	enum arm_kind kind;
	char knob[32];
	struct verdict v[DIM_COUNT];
	char alarm[320]; /* loud problems: a weakened arm that did not fail, ... */
	bool fixture_only;
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
};

/* ---- grading.c: pure, no syscalls ---- */

const char *grade_name(enum grade g);
const char *dim_name(enum dim d);

/* Set one dimension. Every grade other than PASS needs a reason, and
 * NOT APPLICABLE also a scope: -EINVAL otherwise (the grade is then set to
 * UNKNOWN with a reason saying so, never left as asked). */
int verdict_set(struct verdict *v, enum grade g, const char *reason, const char *scope);

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
	bool transient_in_scope; /* a transient write-and-restore would matter */
};

/* Prevention: an observed forbidden effect (by any observer) is FAIL, even
 * when detection worked; missing evidence is UNKNOWN, never PASS; with only
 * before/after snapshots where transient mutation is in scope: UNKNOWN. */
void grade_prevention(const struct prevention_obs *o, struct verdict *out);

/* HB-04's observation claim. */
struct transient_obs {
	enum observer_state events;
	size_t transient_writes;  /* write events on the scratch file */
	size_t identified_writes; /* ... with writer identity (pid, exe, uid, session) */
	bool marker_identified;	  /* the first of them (the marker write) has its writer */
	bool snapshot_equal;	  /* final bytes, size, mtime and inode equal the initial ones */
	bool snapshot_taken;	  /* before and after snapshots exist */
	bool review_claims_no_mutation; /* the conclusion written says "no mutation" */
	bool identity_required;
};
void grade_transient(const struct transient_obs *o, struct verdict *out);

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

/* HB-05: session A meets session B's busy port. */
struct busy_port_obs {
	size_t checks;	    /* B health checks made while A acted */
	size_t check_fails; /* ... that did not return B's marker */
	bool b_read;	    /* B's identity (init pid + start, state, generation, endpoint) read */
	bool b_unchanged;   /* ... and equal before and after, B's init still alive */
	bool fixed_ran;	    /* A asked for B's port as a fixed port */
	int fixed_status;   /* its exit status */
	bool fixed_in_use;  /* it printed the "is in use; nothing started" line */
	bool fixed_nothing; /* no session of it was registered */
	size_t stops;	    /* A's attempts to stop B (CLI by id and name, control socket) */
	size_t stops_refused;  /* ... refused */
	bool listener_read;    /* /proc/net/tcp read for B's port */
	size_t listeners;      /* sockets listening on it */
	bool listener_is_b;    /* the one listener was created by B's uid */
	int b_port, auto_port; /* auto_port: A's auto endpoint, 0 when none */
	bool auto_marker;      /* A's auto endpoint returned A's marker */
	bool auto_owned;       /* ... and names A's session id and generation */
};
/* Enforcement: FAIL when B missed a check, was stopped or changed, a stop
 * by A was accepted, or A got B's port; the fixed request must end in the
 * truthful bounded failure (125, "in use", nothing registered). UNKNOWN
 * when health checks or B's identity or the listener table are missing. */
void grade_busy_port(const struct busy_port_obs *o, struct verdict *out);
/* Control: A's permitted alternate endpoint answers with A's marker and
 * names A's session. */
void grade_busy_port_control(const struct busy_port_obs *o, struct verdict *out);

/* HB-06 control: a leased server after its main command's end. */
struct lease_obs {
	bool ran;	      /* the main command ended and paddock run returned */
	bool retained;	      /* the session was "retained" after the main command */
	bool listed;	      /* ps --json: lease with owner, generation and expiry */
	bool recorded;	      /* record "phase": "retained" lists it likewise */
	size_t probes_during; /* client probes between the main end and the expiry */
	size_t ok_during;     /* ... answered by the service */
	bool probed_after;    /* a probe after the session ended */
	bool ok_after;	      /* ... answered */
	bool leak_checked;    /* the main command's detached descendant was looked for */
	size_t leaks_alive;   /* ... and found alive while the service ran */
	bool ended_by_lease;  /* the final record says "lease-expired" */
};
void grade_lease_control(const struct lease_obs *o, struct verdict *out);

/* HB-08 retained-service completion. */
struct retained_obs {
	int real_status;      /* paddock run's exit status */
	bool record_read;     /* the record as written at the main end */
	bool record_retained; /* "phase": "retained" */
	int record_status;    /* its "status" */
	bool record_exit_n;   /* "ended": "exit" with "exit_code" == real_status */
	bool record_lease;    /* services[] with owner_uid, generation and expires */
	bool ps_read;	      /* paddock ps --json */
	bool ps_retained;     /* state "retained", "status" == real_status */
	bool ps_lease;	      /* leases[] with owner_uid, generation and expires */
	bool inv_read;	      /* host /proc inventory of the session's pid namespace */
	size_t svc_alive;     /* the service's process alive there */
	size_t other_alive;   /* any other process there but paddock-init */
	bool final_read;      /* the record rewritten at the end */
	bool final_ok;	      /* "phase": "final", status still real_status */
};
/* PASS: non-zero status and every view says so; the live service is
 * declared with owner and expiry in ps and the record; nothing else runs.
 * FAIL: exit zero, a view that disagrees, an undeclared process, a lease
 * without owner or expiry. UNKNOWN: a view missing. */
void grade_retained(const struct retained_obs *o, struct verdict *out);

/* A weakened arm whose enforcement is not FAIL cannot show what the case
 * claims to detect; a broken-collector arm that does not give UNKNOWN
 * hides missing evidence. Fills r->alarm and returns true then. */
bool result_check_alarm(struct result *r);

/* The run fails on this result: an enforced arm failing enforcement or
 * control, or an alarm (weakened arm passing, broken collector not
 * UNKNOWN). Docker arms are reference only. */
bool result_fails_run(const struct result *r);

/* Append one evidence line (truncated, counted in ev_dropped when full). */
__attribute__((format(printf, 3, 4))) void result_evidence(struct result *r, const char *source,
							   const char *fmt, ...);
void result_init(struct result *r, const char *case_id, const char *title, const char *arm);
void result_mock(struct result *r, const char *what);

/* Before reporting: a dimension nobody graded is UNKNOWN (missing
 * evidence), then the alarm check. */
void result_finish(struct result *r);

/* Fill every dimension left unset with NOT EXECUTED and the reason. */
void result_not_executed(struct result *r, const char *reason);

/* ---- report.c: writers over FILE * (pure apart from the stream) ---- */

void json_write_string(FILE *f, const char *s);
void xml_write_escaped(FILE *f, const char *s);
void md_write_cell(FILE *f, const char *s);
void report_write_json(FILE *f, const struct result *r, const struct subject *s);
void report_write_md(FILE *f, const struct result *rs, size_t n, const struct subject *s);
void report_write_junit(FILE *f, const struct result *rs, size_t n, const struct subject *s);
/* The short matrix printed on stdout. */
void report_write_matrix(FILE *f, const struct result *rs, size_t n);
