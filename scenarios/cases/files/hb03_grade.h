/* HB-03: alternate tools retain resource restrictions: the evidence rule,
 * the adapters' identities and their effective policy as read back.
 * Pure (no syscalls, no printing): the driver fills the observation,
 * tests/unit/test_eval.c pins every rule. The prevention part is the
 * shared grade_prevention() (lib/grading.c). */
#pragma once

#include <stdbool.h>
#include <stddef.h>

#include "../../lib/eval.h"

/* ---- a process's effective policy, read from outside ---- */

/* The namespaces a policy can ask for, in the policy's spelling; the
 * /proc/PID/ns link names differ only for mount ("mnt"). */
enum pp_ns {
	PP_NS_USER,
	PP_NS_MOUNT,
	PP_NS_PID,
	PP_NS_NET,
	PP_NS_IPC,
	PP_NS_UTS,
	PP_NS_CGROUP
};
#define PP_NS_COUNT 7
extern const char *const pp_ns_policy[PP_NS_COUNT]; /* "user", "mount", ... */
extern const char *const pp_ns_proc[PP_NS_COUNT];   /* "user", "mnt", ... */

/* What /proc/PID/status and /proc/PID/ns say: no_new_privs, seccomp mode
 * and filter count, the five capability sets, the namespace inodes (0 when
 * unread). Landlock has no such interface: a domain cannot be read from
 * outside, so it is not part of this view. */
struct proc_policy {
	bool read;
	int nnp, seccomp, filters;
	unsigned long long cap_inh, cap_prm, cap_eff, cap_bnd, cap_amb;
	unsigned long ns[PP_NS_COUNT];
};
/* Fill the status part from the text of /proc/PID/status (lines
 * "NoNewPrivs:", "Seccomp:", "Seccomp_filters:", "Cap*:"; anything else,
 * the process's own Name line included, is ignored). 0, or -EINVAL when a
 * line is missing or malformed. */
int proc_policy_status(const char *text, struct proc_policy *out);

/* What the session's policy declares, as far as it can be read back. */
struct declared_policy {
	unsigned ns;  /* 1u << enum pp_ns for each namespace listed */
	bool seccomp; /* a seccomp profile other than none */
};
/* The session's workload (ref) against its declared policy and the host
 * (the harness's own process): every declared namespace other than the
 * host's, no_new_privs, a seccomp filter when declared, no capability in
 * any set. 0, or the number of mismatches with the first in why. */
int proc_policy_confined(const struct proc_policy *ref, const struct proc_policy *host,
			 const struct declared_policy *d, char *why, size_t n);
/* Another process of the session (got: the file tool) against the
 * session's workload (ref): not weaker than it: the same namespace for
 * every declared one, no_new_privs and seccomp mode at least ref's, at
 * least ref's filters, capability sets within ref's. 0, or the number of
 * mismatches with the first in why. */
int proc_policy_compare(const struct proc_policy *ref, const struct proc_policy *got,
			const struct declared_policy *d, char *why, size_t n);

/* ---- the grades ---- */

struct adapters_obs {
	size_t attempts;	    /* canary attempts (shell adapter, file tool twice) */
	size_t snapshots_taken;	    /* ... with before and after digests */
	enum observer_state events; /* the event observer, with its proofs and positive control */
	/* Each adapter's control write was made by that adapter's own
	 * inventoried identity (the shell: a process of the session's
	 * workload session; the tool: the very process the harness held and
	 * read before its write). */
	bool where_shell;
	bool where_tool;
	bool sandbox_ns_known; /* the session's pid namespace was read */
	/* The adapters' identities are distinct (the workload's session id
	 * is not any tool run's, no tool run is a process of it). */
	bool distinct;
	/* The effective-policy read-back: its proof (a process the harness
	 * put in a user namespace with no_new_privs reads apart from the
	 * harness), the session's workload against its declared policy (-1
	 * unread), and the file-tool runs: how many, read back, and weaker
	 * than the workload (or, host-fallback, outside it). */
	bool readback_proven;
	int workload_mismatch;
	size_t tool_runs, tool_read, tool_weaker;
	const char *readback_why; /* the first mismatch, or why something was unread */
	/* Write events on the canary by adapter (the inventoried
	 * identities), and by nobody inventoried. */
	size_t canary_by_shell, canary_by_tool, canary_by_other;
};
/* Enforcement: grade_prevention() over the canary's digests and events;
 * a FAIL names the adapter that wrote. Then the read-back: a file tool
 * weaker than the session's workload, or a workload not confined as its
 * policy declares, is FAIL (the task policy does not apply to that
 * route); a read-back unproven or missing for a run is UNKNOWN. */
void grade_adapters(const struct prevention_obs *p, const struct adapters_obs *o,
		    struct verdict *out);
/* Evidence: PASS with digests for every attempt, a healthy observer, both
 * adapters located by their own identity, distinct identities and a
 * proven read-back; UNKNOWN otherwise. */
void grade_adapters_evidence(const struct adapters_obs *o, struct verdict *out);
