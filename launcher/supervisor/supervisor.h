/* supervisor/: one run of paddock run, outside the sandbox: prepare (policy,
 * plan, filters, record, session), start (sandbox/), supervise (init's
 * reports, signals, the TTL, the control socket, exec, port forwards,
 * leases), and the outcome, written to the record and the session.
 *
 * Its public face is what the binary (launcher/) needs: the options of
 * paddock run, the weakening knobs, and supervisor_run(). */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <limits.h>
#include <stdio.h>

#include "../../include/err.h"
#include "../../policy/policy.h"

/* The weakening knobs (--weaken NAME), a bit each of a uint64_t. */
#define WEAKEN_RW_BINDS (UINT64_C(1) << 0) /* read-only binds become writable */
#define WEAKEN_NO_PIDNS \
	(UINT64_C(1) << 1) /* no pid namespace: expiry kills only the direct child */
#define WEAKEN_HOST_NET	      (UINT64_C(1) << 2) /* no network namespace: the host's network */
#define WEAKEN_NO_SECCOMP     (UINT64_C(1) << 3) /* no seccomp filter */
#define WEAKEN_NO_LANDLOCK    (UINT64_C(1) << 4) /* no Landlock rules */
#define WEAKEN_NO_NEW_SESSION (UINT64_C(1) << 5) /* the workload stays in the caller's session */
#define WEAKEN_NO_SWEEP \
	(UINT64_C(1) << 6) /* paddock-init leaves the workload's leftovers running */
#define WEAKEN_NO_OWNER_CHECK \
	(UINT64_C(1) << 7) /* the control socket serves any uid that can connect */
#define WEAKEN_EXEC_HOST_MOUNTS \
	(UINT64_C(1) << 8) /* paddock exec keeps the host's mount namespace */
#define WEAKEN_NO_PROTECT \
	(UINT64_C(1) << 9) /* no protected paths (the check after the run stays) */
#define WEAKEN_HOST_ROOT      (UINT64_C(1) << 10) /* a root caller's workload is host uid 0 */
#define WEAKEN_DIRECT_STDIO   (UINT64_C(1) << 11) /* the caller's fds 0-2 as they are, no relay */
#define WEAKEN_PROXY_ENV_ONLY (UINT64_C(1) << 12) /* mediated, but no local default routes */
#define WEAKEN_DNS_OPEN	      (UINT64_C(1) << 13) /* the DNS stub forwards what it would refuse */
#define WEAKEN_GATE_OFF                                                          \
	(UINT64_C(1) << 14) /* the release gate admits every body, taint ignored \
			     */
#define WEAKEN_VERBOSE_DENIAL \
	(UINT64_C(1) << 15) /* refusals name the decision, rule and destination */
#define WEAKEN_RETRY_UNBOUNDED \
	(UINT64_C(1) << 16) /* no attempt budget, no deadline, no held replays */
#define WEAKEN_CREDENTIAL_ANY_AUDIENCE \
	(UINT64_C(1) << 17) /* a placeholder swapped on any destination */
#define WEAKEN_LEASE_PORT_ONLY \
	(UINT64_C(1) << 18) /* HTTP forwards unstamped: a port is all a client has */
#define WEAKEN_TRUST_PATH_ONLY \
	(UINT64_C(1) << 19) /* a project policy trusted by its path, any bytes */
#define WEAKEN_SIGNATURE_ONLY \
	(UINT64_C(1) << 20) /* a plugin update signed by its signer is granted */
/* Budgets of metered rules (mediator/ledger.c, docs/network.md): */
#define WEAKEN_CHECK_THEN_CHARGE \
	(UINT64_C(1) << 21) /* read the balance, dispatch, charge afterwards */
#define WEAKEN_UNPRICED_AS_FREE (UINT64_C(1) << 22) /* an unpriced operation is admitted at 0 */
#define WEAKEN_RELEASE_ON_TIMEOUT                                       \
	(UINT64_C(1) << 23) /* no answer: the bound is released, resent \
			     */
/* The evidence (docs/evidence.md): */
#define WEAKEN_NO_SEQ \
	(UINT64_C(1) << 24) /* evidence lines without seq or chain: a lost line is unseen */
#define WEAKEN_RAW_EXPORT \
	(UINT64_C(1) << 25) /* paddock evidence export copies this run's files raw */
#define WEAKEN_EVIDENCE_IN_SANDBOX \
	(UINT64_C(1) << 26) /* the record's directory bound rw in the sandbox */
#define WEAKEN_TRUST_TOOL_CLAIM \
	(UINT64_C(1) << 27) /* evidence reconcile takes the claim for the effect */
/* Receiver lookups of unknown operations (docs/budget.md, "Lookup"): */
#define WEAKEN_LOOKUP_FAIL_OPEN \
	(UINT64_C(1) << 28) /* a lookup that fails reads as "not found": the replay is sent */
/* Remote jobs and adapters (mediator/jobs.c, adapter.c; bits 28 and 29
 * are other knobs' ): */
#define WEAKEN_LOCAL_EXIT_IS_STOP \
	(UINT64_C(1) << 30) /* the session's end taken for its jobs' end: no cancel */
#define WEAKEN_UNKNOWN_EVENT_ALLOW \
	(UINT64_C(1) << 31) /* an adapter request it cannot parse passes, unchecked */
/* The redaction of brokered secrets (mediator/redact.c): */
#define WEAKEN_REDACT_PLAIN_ONLY \
	(UINT64_C(1) << 34) /* a secret is redacted only as it is, not split or encoded */
/* An exec'd command's seccomp listener (supervisor/exec.c), bit 37: */
#define WEAKEN_EXEC_PLAIN_SECCOMP \
	(UINT64_C(1) << 37) /* exec'd commands load the plain program: no notice, no trace */
/* paddock exec (supervisor/exec.c), bits 44 and 45: */
#define WEAKEN_EXEC_UNHARDENED \
	(UINT64_C(1) << 44) /* exec'd commands keep the helper's caps, no NNP/Landlock/seccomp */
/* The size of the knob table: bits without a name in it are no knobs. */
#define WEAKEN_COUNT 46

/* The budgets' ledgers' directory (supervisor/budget.c):
 * $XDG_STATE_HOME/paddock/budgets, or ~/.local/state/paddock/budgets;
 * made (0700) when create; it must be ours and writable by us only. */
int budget_dir_path(char *out, size_t size, bool create, struct err *err);
/* paddock budget VERB BUDGET [ARGS] (argv without "budget"): exec
 * paddock-mediator --budget DIR VERB BUDGET [ARGS], which holds the only
 * SQLite code. Returns only on failure, -errno with err. */
int budget_exec(int argc, char **argv, struct err *err);

/* -t/--tty, --no-tty: terminal mode (supervisor/stdio.c). */
enum opt_tty {
	OPT_TTY_AUTO, /* when stdin is a terminal */
	OPT_TTY_YES,
	OPT_TTY_NO,
};

struct oci_join;

/* What paddock run was asked to do (launcher/args.c fills it). */
struct options {
	const char *policy_path; /* NULL: the built-in policy below */
	/* --project-policy FILE; NULL: ${WORKSPACE}/.paddock/policy.json
	 * when there is one (project.c) */
	const char *project_policy;
	const char *builtin_policy;
	size_t builtin_policy_len;
	const char *workspace;	 /* NULL: the current directory */
	const char *record_path; /* NULL: no record */
	bool record_required;	 /* a record that cannot be written: EXIT_RECORD */
	const char *init_path;	 /* NULL: found next to the paddock binary */
	uint64_t ttl_ms;
	bool has_ttl;
	uint64_t weaken; /* WEAKEN_* */
	struct policy_bind_arg *binds;
	size_t n_binds;
	const char **protect;
	size_t n_protect;
	const char **setenv;
	size_t n_setenv;
	/* --env NAME and --env-file: "NAME=VALUE", owned; the values never go
	 * into the policy, its digest, the record or the registry (names
	 * only), nor into argv where other users would see them in ps. */
	char **env_pass;
	size_t n_env_pass;
	/* The per-user defaults file applied (launcher/config.c), or "". */
	bool no_config;
	bool trace_denials; /* --trace-denials */
	char config_path[4096];
	char config_sha256[65];
	char *config_policy; /* owned: the file's "policy", when it gave it */
	const char *cwd;
	const char *secrets_path; /* --secrets FILE: overrides network.secrets */
	const char **ports;	  /* --port HOST:PORT:SANDBOXPORT, checked by policy_amend() */
	size_t n_ports;
	const char **allow_net; /* --allow-net HOST[:PORT], checked by policy_amend() */
	size_t n_allow_net;
	const char *approvals_path; /* --approvals FILE: the release gate's, read at prepare */
	bool explain;		    /* print the effective sandbox, start nothing */
	bool detach;	  /* print the session id once started; supervise in the background */
	bool rm;	  /* --rm: the session's entry (and output) go when it ends */
	const char *name; /* the session's name, NULL: unnamed */
	enum opt_tty tty;
	char **argv; /* the workload command, NULL-terminated */
	/* paddock oci (launcher/cmd_oci.c): the bundle's seccomp program,
	 * stacked on paddock's (sandbox_spec.extra_bpf); and a call once the
	 * sandbox's namespaces exist (pid: its PID 1 on the host) and before
	 * anything of it runs: the create/start split. Non-zero fails the
	 * run with err. */
	const void *extra_bpf;
	size_t extra_bpf_len;
	int (*before_go)(const char *session_id, int pid, void *arg, struct err *err);
	void *before_go_arg;
	/* paddock oci: namespaces joined instead of made (config.json's
	 * linux.namespaces[].path, opened and checked: oci_join_open()).
	 * Not owned. */
	const struct oci_join *join;
	size_t n_join;
	/* paddock oci: linux.maskedPaths and readonlyPaths below /proc
	 * (absolute), besides paddock's own (struct mount_op.masked). */
	char *const *proc_masked;
	size_t n_proc_masked;
	char *const *proc_readonly;
	size_t n_proc_readonly;
};

/* weaken.c */
/* Where a policy is wider than the built-in agent policy (docs/security.md,
 * "Widenings"): one short line each into out[0..max-1] (e.g. "seccomp
 * off", "namespace ipc shared with the host", "seccomp allows unshare",
 * "writable bind /home/u outside the workspace"); returns how many.
 * workspace: the canonical ${WORKSPACE}. Pure. */
#define WIDENINGS_MAX 32
#define WIDENING_LEN  192
size_t policy_widenings(const struct policy *p, const char *workspace, char (*out)[WIDENING_LEN],
			size_t max);
const char *weaken_name(uint64_t bit);
const char *weaken_warning(uint64_t bit);
int weaken_parse(const char *name, uint64_t *out);
/* The knobs whose name contains near or is within two edits of it,
 * ", "-separated, into buf (cut at size); returns how many. */
int weaken_known(char *buf, size_t size, const char *near);
/* How many knobs there are (bits without a name are none). */
int weaken_named(void);
/* The weakenings in effect: the knobs plus what the policy itself turns
 * off ("seccomp-profile-none"). For the record and --explain. */
size_t weakenings_in_effect(uint64_t weaken, const struct policy *p, const char **out, size_t max);

/* prepare.c: the caller is uid 0 of the host's user namespace (a root
 * caller, whose workload is another uid); uid 0 of another namespace is
 * not. */
bool supervisor_host_root(void);

/* run.c: paddock run from parsed options to the exit status (the
 * workload's, or a documented launcher status), its one-line errors
 * printed. */
int supervisor_run(const struct options *o);

/* paddock policy (launcher/cmd_policy.c). The policy o names (--policy's
 * forms: a file, a profile, or the built-in agent policy) with its
 * "extends" resolved, as one JSON text (malloc'd), and its label. */
int supervisor_policy_text(const struct options *o, char **out, size_t *len, char *label,
			   size_t label_size, struct err *err);
/* Load it as paddock run would, with the same messages (the command-line
 * additions of o applied): its effective digest into sha. */
int supervisor_policy_check(const struct options *o, char sha[65], char *label, size_t label_size,
			    struct err *err);
/* paddock trust (launcher/cmd_trust.c, supervisor/trust_cmd.c): approve
 * the project policy at path (NULL: .paddock/policy.json of o's workspace)
 * against o's policy, its widenings shown on out and refused unless
 * allow_widen; list the approvals; revoke the approval of path. 0 or
 * -errno with err. */
int supervisor_trust(const struct options *o, const char *path, bool allow_widen, FILE *out,
		     struct err *err);
int supervisor_trust_list(FILE *out, struct err *err);
int supervisor_trust_revoke(const char *path, FILE *out, struct err *err);
/* paddock plugin (launcher/cmd_plugin.c, supervisor/plugin.c; HB-22):
 * review a manifest against the approved one (the capability diff on
 * out), approve it (its artifact must match), or plan a run: the
 * additions of paddock run for the scope it gets (the approved one when
 * the update widens: held), with a private copy of the artifact's hashed
 * bytes bound at target. 0 or -errno with err. */
#define PLUGIN_ARGS_MAX 300
struct plugin_plan {
	char name[72];
	bool held;
	char dir[PATH_MAX], artifact_copy[PATH_MAX + 16], target[128];
	int dir_fd; /* dir, flock'd while in use (-1 none): a later run sweeps one nobody holds */
	char *args[PLUGIN_ARGS_MAX]; /* paddock run options, malloc'd */
	size_t n_args;
};
int supervisor_plugin_review(const char *manifest, FILE *out, struct err *err);
int supervisor_plugin_approve(const char *manifest, FILE *out, struct err *err);
int supervisor_plugin_plan(const char *manifest, const char *workspace, bool signature_only,
			   struct plugin_plan *p, FILE *out, struct err *err);
void supervisor_plugin_plan_free(struct plugin_plan *p);
/* The per-user defaults file folded into o (supervisor/config.c,
 * docs/usage.md "Defaults"): before the command line's options. */
int config_apply(struct options *o, struct err *err);
/* The policy o names, loaded as paddock run would (into *out, freed with
 * policy_free()), and its label. */
int supervisor_policy_load(const struct options *o, struct policy **out, char *label,
			   size_t label_size, struct err *err);
/* The built-in profiles, one per line. */
void supervisor_profiles(FILE *f);
