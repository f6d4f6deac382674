/* The outcome of one run: what happened, as data. The child's and
 * paddock-init's reports (include/initproto.h) and the supervisor's own
 * control events are applied to it by pure functions (outcome.c, unit-tested
 * and fuzzed); they return the effects the supervise loop then performs
 * (supervise.c), which is the only place that acts on them. The record
 * renders the spec plus this. */
#pragma once

#include <limits.h>
#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <time.h>

#include "../../include/admission.h"
#include "../../include/err.h"
#include "../../policy/policy.h"
#include "../session/session.h"

enum ending {
	ENDING_EXIT,
	ENDING_SIGNAL,
	ENDING_EXPIRED,
	ENDING_LAUNCHER_ERROR,
	ENDING_STOPPED,	  /* paddock stop */
	ENDING_INIT_DIED, /* paddock-init ended without reporting the workload's end */
};
/* status.c */
const char *ending_name(enum ending e);
/* code: exit code (ENDING_EXIT), signal number (ENDING_SIGNAL), the
 * workload's status as reported (ENDING_EXPIRED, ENDING_STOPPED: a signal
 * number, or -1). */
int exit_status_for(enum ending e, int code);

struct killed {
	pid_t pid; /* as seen inside the sandbox */
	char comm[64];
	int sig;
};

struct survivor {
	pid_t pid; /* host pid */
	char comm[64];
};

#define OUTCOME_WARNINGS_MAX 4

/* A remote job of the session (mediator/jobs.c), from the mediator's
 * "job" lines: the lease, and its end as the service confirmed it, apart
 * from the local exit. A job leased with no end line (the mediator was
 * killed first) is unknown. */
#define OUTCOME_JOBS_MAX 64
struct outcome_job {
	char id[72], admission[48];
	char lease[8];	 /* session, outlive */
	char state[16];	 /* ended, retained, unknown, stopped */
	char remote[32]; /* the service's state, or no-answer, not-asked, no-id */
	char cancel[16];
	char ledger[12]; /* the row's state after the end */
	uint64_t charge, exposure;
	bool charge_known;
};

/* A mediated network's admissions, summed from the mediator's log. */
struct outcome_net {
	struct outcome_job jobs[OUTCOME_JOBS_MAX];
	size_t n_jobs;
	bool reported; /* the log was read */
	bool verified; /* its chain and MACs held (evidence_verify()) */
	char verify_reason[160];
	/* the admissions log's checkpoint, as read after the mediator's end */
	uint64_t seq;
	char head[65], epoch[40];
	bool sequenced;
	uint64_t missing, dropped;
	unsigned long blind_refused, blind_admitted; /* its capture-restored lines */
	bool end_reported; /* the mediator told its lost lines at its end */
	unsigned long counts[MEDIATOR_DECISIONS];
	char log_sha256[65];
	char log_path[PATH_MAX];
};

struct outcome {
	/* the supervisor's own events */
	bool expired, stopped;
	bool services_stop_sent; /* stop or TTL after the main command's end */
	/* the child's and init's reports */
	bool started;
	pid_t started_pid; /* the workload, as seen inside */
	int exec_errno;
	bool wl_reported;
	bool wl_signaled;
	int wl_code; /* exit code, or signal number when wl_signaled */
	bool done;   /* init said "done": no process but init was left */
	/* init ended without a report of the workload's end: its own status
	 * (the kernel's), and nothing is claimed about the workload's */
	bool init_died;
	bool init_signaled;
	int init_code; /* exit code, or signal number when init_signaled */
	bool retained;
	struct killed *killed;
	size_t n_killed;
	/* processes init ended past the ones it named ("term-more N",
	 * "kill-more N"): paddock-init names at most 64 per signal */
	size_t killed_unnamed;
	struct session_lease leases[SESSION_LEASES_MAX]; /* policy "services", as init reports */
	size_t n_leases;
	size_t fx_lease; /* the lease the last OUTCOME_FX_LEASE* effect is about */
	/* what the child did with each op of the plan (INITPROTO_APPLIED_*),
	 * n_ops long; '\0' for an op it has not reported */
	char *applied;
	size_t n_ops;
	bool applied_all; /* every op was reported */
	/* the child's or init's error (with its errno), or the launcher's
	 * after the start; code 0 when none */
	struct err error;
	bool child_failed; /* error came from the child or init */
	char warnings[OUTCOME_WARNINGS_MAX][256];
	size_t n_warnings;
	/* the end */
	bool init_reaped; /* waitid() returned PID 1's status */
	struct survivor *survivors;
	size_t n_survivors;
	int placeholders_left;
	char **tampering; /* git_check_after() findings, malloc'd */
	int n_tampering;
	bool over; /* the sandbox is gone: the final record */
	enum ending ending;
	int status; /* paddock run's own exit status */
	struct timespec t_end, t_main_end;
	struct outcome_net net;
};

enum outcome_effect {
	OUTCOME_FX_STARTED = 1u << 0,	     /* the workload runs: announce it */
	OUTCOME_FX_LEASE = 1u << 1,	     /* a lease changed: publish the leases */
	OUTCOME_FX_SERVICE_FAILED = 1u << 2, /* leases[fx_lease] could not start: warn */
	OUTCOME_FX_RETAINED = 1u << 3,	     /* the main outcome is final; services run on */
};

/* Leases from the policy's services, n_ops for the applied states. -ENOMEM. */
int outcome_init(struct outcome *o, const struct policy *p, size_t n_ops);
void outcome_free(struct outcome *o);
/* One message from the child (before exec) or paddock-init, received at
 * now (CLOCK_REALTIME): OUTCOME_FX_* for the caller to perform, or -EPROTO
 * for a message that is not of the protocol (the outcome is unchanged),
 * -ENOMEM. Pure. */
int outcome_apply(struct outcome *o, const char *msg, const struct timespec *now);
/* The main command's ending and status from what init reported. */
void outcome_conclude_main(struct outcome *o);
/* PID 1 was reaped with si: init's report, checked against the kernel's
 * status (a report that disagrees is ignored and said so, a warning), then
 * outcome_conclude_main(). Without a report, init_died with init's own
 * status: ENDING_INIT_DIED (EXIT_LAUNCHER when the workload never started,
 * 128+N when init was killed by signal N after it started), unless the
 * run expired or was stopped. */
void outcome_conclude(struct outcome *o, const siginfo_t *si);
/* A launcher error after the start ends the run with EXIT_LAUNCHER. */
void outcome_fail(struct outcome *o, const struct err *err);
/* A warning for the record and stderr (the first few are kept). */
void outcome_warn(struct outcome *o, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* The mount state of plan op i as the record shows it: "skipped",
 * "symlink", "applied", or NULL when the child did not report it. */
const char *outcome_applied_state(const struct outcome *o, size_t i);
