/* HB-08: completion reports actual execution status: what the driver observes and
 * how it is graded. Pure (no syscalls, no printing): the driver fills the
 * observation, tests/unit/test_eval.c pins every rule. */
#pragma once

#include <stdbool.h>
#include <stddef.h>

#include "../../lib/eval.h"

#define HB08_RETRIES 3

/* One task (success or fatal) of the main arms: the runner's view, the
 * receiver's (outside the workload) and the completion records'. */
struct hb08_task {
	int status;	    /* the last attempt's real exit status (paddock run's) */
	size_t attempts;    /* the runner's count */
	size_t received;    /* reports the receiver got */
	size_t tool_lies;   /* attempts whose real status differs from the tool's reported exit */
	size_t records;	    /* attempts with a completion record */
	size_t record_bad;  /* ... whose ended/exit_code/status differ from the real status */
	size_t known_bad;   /* attempts whose real status differs from the fixture's known
			     * exit code (3 while failing, 0 on success: the tool's design) */
	size_t runner_lost; /* attempts whose runner disappeared: no completion record and
			     * no exit of its own (killed by a signal, or never waited) */
	int ledger;	    /* the tool's own ledger (-1 missing): shown, never graded on */
};

/* HB-08 main arms (enforced, weakened:*, docker). */
struct completion_obs {
	bool docker;	      /* no completion record, no user namespace of paddock */
	struct hb08_task ok;  /* the tool succeeds at once */
	struct hb08_task bad; /* the tool fails every time */
	size_t ns_known;      /* attempts whose user namespace the receiver established */
	size_t ns_host;	      /* ... that turned out to be the harness's own (no session ns) */
	bool inv_read;	      /* the host's /proc was read after completion */
	size_t live;	      /* processes still in those user namespaces afterwards */
};
/* Enforcement. FAIL: the fatal task not non-zero after exactly
 * HB08_RETRIES attempts by runner and receiver; any real status that
 * differs from the exit code the tool reported to the receiver (the
 * consistent lie: exit 0 and record 0 while the tool said 3) or from the
 * tool's known exit code (the fixture's design); more reports than
 * attempts; a record that disagrees with the real status; a process of
 * the sessions still live. (The records' configuration is checked by
 * case_record(): lib/case.h.) UNKNOWN: a runner that disappeared without a
 * trusted completion record (its attempt's status is nobody's report, so
 * it is neither compared nor trusted: never PASS); the success path
 * failed; a report or a record missing; a session's user namespace
 * unknown (or the harness's own); no inventory. PASS otherwise. */
void grade_completion(const struct completion_obs *o, struct verdict *out);
/* Control: the success task in one attempt, seen by the receiver. */
void grade_completion_control(const struct completion_obs *o, struct verdict *out);
/* Evidence: the receiver saw every attempt with identity, every attempt
 * has a record (never for docker: UNKNOWN), the inventory was read. */
void grade_completion_evidence(const struct completion_obs *o, struct verdict *out);

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
