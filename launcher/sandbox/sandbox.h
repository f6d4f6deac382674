/* sandbox/: create a sandbox or enter one. The only code a reader audits
 * for escapes. It never prints: every failure is a -errno with a struct err
 * for the caller (the supervisor) to report.
 *
 * A sandbox is made from a sandbox_spec, filled by the supervisor before
 * anything starts (the policy, its mount plan, the seccomp program, the
 * Landlock rules, the environment) and not changed afterwards, except the
 * PROTECT ops' host inodes, which sandbox_protect() fills in while the
 * child mounts the rest (the one planned interleave, enter.c). */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <seccomp.h>
#include <sys/resource.h>
#include <sys/types.h>
#include <time.h>

#include "../../include/err.h"
#include "../../mounts/mounts.h"
#include "../../policy/policy.h"

/* env.c: the workload's environment from the policy and the caller's
 * environment. Returns a malloc'd NULL-terminated array of "K=V" (strings
 * malloc'd too), free with env_free(). -ENOMEM. */
int env_build(const struct policy *p, char *const *caller_env, char *const *pass, size_t n_pass,
	      char ***out);
void env_free(char **env);
/* pass: "NAME=VALUE" entries of --env and --env-file, set last: they
 * replace the policy's. */

/* userns.c: id maps for the child, written by the parent (user_namespaces(7)). */
int userns_write_maps(pid_t pid, uid_t inside_uid, uid_t outside_uid, gid_t inside_gid,
		      gid_t outside_gid, struct err *err);
/* A user namespace mapping only inside -> outside, as an O_RDONLY fd for
 * MOUNT_ATTR_IDMAP; made by a short-lived child. -errno with err set. */
int userns_idmap_fd(uid_t inside_uid, uid_t outside_uid, gid_t inside_gid, gid_t outside_gid,
		    struct err *err);
/* A detached recursive clone of the host path source (no symlinks in it),
 * idmapped through userns_fd, nosuid and nodev: an fd, or -errno with err
 * set. Needs CAP_SYS_ADMIN in the filesystem's user namespace (host root). */
int userns_idmapped_tree(const char *source, int userns_fd, struct err *err);
/* The map line "INSIDE OUTSIDE 1\n" into buf. */
int userns_map_line(char *buf, size_t size, unsigned inside, unsigned outside);

/* net.c: bring lo up in the current network namespace over rtnetlink;
 * for a mediated network, local default routes on lo for IPv4 and IPv6
 * (every destination is local: docs/network.md). */
int net_lo_up(struct err *err);
int net_anyip_routes(struct err *err);

/* caps.c: drop every capability from every set, the bounding set and the
 * ambient set. */
int caps_drop_all(struct err *err);
/* PR_SET_NO_NEW_PRIVS: no execve from here on can gain privileges (setuid
 * bits, file capabilities); Landlock and an unprivileged seccomp filter
 * require it. Its own step, after caps_drop_all(). */
int caps_no_new_privs(struct err *err);

/* fds.c: keep only 0-2 and the listed fds (moved to 3, 4, ...), close the rest. */
int fds_keep_only(int *keep, size_t n, struct err *err);

/* seccomp.c: the filter from the policy's "seccomp" section, built and
 * checked in the parent before anything starts (an unknown syscall name is
 * -EINVAL with err naming the JSON path, e.g. "seccomp.allow[2]: unknown
 * syscall \"fooo\""). *out is NULL when the profile is "none". */
struct seccomp_info {
	bool enabled;	    /* a filter will be loaded */
	unsigned n_allowed; /* syscalls allowed unconditionally */
	unsigned n_rules;   /* every rule added, conditional ones included */
	char **denied;	    /* names denied outright or conditionally, sorted, for --explain */
	size_t n_denied;
	char bpf_sha256[65]; /* SHA-256 of the exported BPF program, for the record */
	void *bpf;	     /* the exported program (struct sock_filter[]) */
	size_t bpf_len;	     /* its length in bytes */
	/* --trace-denials: the same program with the default action's
	 * errno return turned into SECCOMP_RET_USER_NOTIF (the supervisor
	 * answers with that errno and says what was denied); NULL without. */
	void *bpf_notify;
	size_t bpf_notify_len; /* its length in bytes */
	char bpf_notify_sha256[65];
	int notify_errno; /* what the supervisor answers (the default action's) */
	/* The protected-path notice (seccomp_protect.c): the calls the
	 * notify program sends to the supervisor for a look at their path. */
	int protect_nrs[16];
	size_t n_protect_nrs;
};
/* The notify program of info (its default action must be errno): 0, or
 * -EINVAL when it has none to turn, -ENOMEM. */
int seccomp_notify_program(struct seccomp_info *info, int errno_value);
/* seccomp_protect.c: put the protected-path notice in front of the notify
 * program (or of the plain one when there is none yet): rename, renameat,
 * renameat2, rmdir and unlinkat with AT_REMOVEDIR, those the policy does
 * not deny, become notifications. Call after seccomp_notify_program(). 0 (also when
 * nothing applies: profile none or custom), -ENOMEM, -E2BIG. */
/* With allowlist (protect_git "allowlist"), also unlink, mkdir(at) and the
 * opens that create or write (launcher/supervisor/gitallow.c). */
int seccomp_protect_program(struct seccomp_info *info, const struct policy *p, bool allowlist);
/* Is nr one of the calls the notice sends to the supervisor? */
bool seccomp_protect_call(const struct seccomp_info *info, int nr);
int seccomp_build(const struct policy *p, scmp_filter_ctx *out, struct seccomp_info *info,
		  struct err *err);
void seccomp_info_free(struct seccomp_info *info);
/* Child side, the last step before exec: load the filter. */
int seccomp_apply(scmp_filter_ctx ctx, struct err *err);
/* The same, from the program exported in the parent: the child then only
 * makes one system call instead of having libseccomp generate the program
 * again (about 2 ms of every start). Nothing to do when !info->enabled. */
int seccomp_apply_bpf(const struct seccomp_info *info, struct err *err);
/* The same for a program given as bytes (len a multiple of struct
 * sock_filter). */
int seccomp_apply_prog(const void *bpf, size_t len, struct err *err);
/* --trace-denials: load info->bpf_notify with a new listener and send the
 * listener to the supervisor over ctl ("seccomp-notify" + SCM_RIGHTS). */
int seccomp_apply_notify(const struct seccomp_info *info, int ctl, struct err *err);

/* seccomp_default.c: the default profile, compiled at build time and
 * embedded. */
/* Does this policy ask for exactly the default profile (no additions, the
 * default action EPERM)? Then the embedded program is what seccomp_build()
 * would produce. */
bool seccomp_default_applies(const struct policy *p);

/* Fill info from the embedded program, as seccomp_build() would. -ENOMEM. */
int seccomp_default_info(struct seccomp_info *info);

/* landlock.c: filesystem writes only below writable binds and tmpfs mounts
 * (plus the few device nodes and /proc files a workload writes), TCP
 * bind/connect rules and scoping where the running kernel's ABI has them. */
struct landlock_rule {
	char *path;	 /* sandbox path the rule is anchored on */
	uint64_t access; /* LANDLOCK_ACCESS_FS_* allowed beneath it */
	bool optional;	 /* an optional or copy-symlink bind: absent or a symlink is skipped */
};
struct landlock_info {
	int abi;      /* probed ABI version, 0 when Landlock is unavailable */
	bool enabled; /* rules will be applied */
	uint64_t handled_fs;
	uint64_t handled_net;
	uint64_t scoped;
	struct landlock_rule *rules;
	size_t n_rules;
	uint16_t *tcp_bind, *tcp_connect;
	size_t n_tcp_bind, n_tcp_connect;
};
/* Parent: probe the ABI and derive the rules from the plan. Required mode
 * on a kernel without Landlock: -EOPNOTSUPP with err set. */
int landlock_prepare(const struct policy *p, const struct mount_plan *plan,
		     struct landlock_info *info, struct err *err);
/* Child, after pivot_root and no_new_privs, before seccomp. */
int landlock_apply(const struct landlock_info *info, struct err *err);
/* The ruleset of info, built but not enforced: an fd for
 * landlock_restrict_self(2), which paddock-init calls in each process it
 * starts (the workload, the services), or -errno with err set. */
int landlock_ruleset(const struct landlock_info *info, struct err *err);
void landlock_info_free(struct landlock_info *info);
/* The running kernel's Landlock ABI version, 0 when there is none. */
int landlock_abi(void);
/* Short name of one filesystem access right ("write_file", "make_dir", ...),
 * NULL for an unknown bit. The net and scope bits overlap the filesystem
 * ones (bit 0 is execute, bind_tcp and abstract_unix_socket), hence one
 * function per set. */
const char *landlock_access_name(uint64_t bit);
/* "bind_tcp", "connect_tcp"; NULL for an unknown bit. */
const char *landlock_net_access_name(uint64_t bit);
/* Short name of one scope bit: "abstract_unix_socket", "signal". (record.c) */
const char *landlock_scope_name(uint64_t bit);

/* ---------------------------------------------------------------- the spec */

/* A namespace the sandbox joins instead of making one (paddock oci's
 * linux.namespaces[].path): ns one of POLICY_NS_NET, _IPC, _UTS, _CGROUP;
 * fd an nsfs file of that type (checked by the caller); ino its inode,
 * for the record. */
#define SANDBOX_JOIN_MAX 4
struct sandbox_nsjoin {
	unsigned ns;
	int fd;
	unsigned long ino;
};

struct sandbox_spec {
	const struct policy *policy;
	struct mount_plan plan; /* its PROTECT ops: see the header comment */
	char **env;		/* the workload's environment (env_build()) */
	struct seccomp_info seccomp;
	struct landlock_info landlock;
	unsigned namespaces; /* POLICY_NS_* to create */
	uid_t uid_in, uid_out;
	gid_t gid_in, gid_out;
	int init_fd;	  /* sealed memfd copy of paddock-init (sandbox_prepare_init()) */
	bool new_session; /* setsid(2) for what enters; false only when weakened */
	bool anyip;	  /* mediated network: the mediator and its gate */
	bool no_routes;	  /* ... without the local default routes on lo (weakened only) */
	bool no_sweep;	  /* paddock-init --no-sweep (weakened only) */
	/* The caller is host root and the workload is not (uid_out, gid_out
	 * unprivileged): the supervisor clears its supplementary groups and
	 * idmaps the writable binds (caller_uid on disk = uid_out), and the
	 * child changes to uid_in/gid_in last (sandbox_harden()). */
	bool root_caller;
	bool subid; /* root_caller: uid_out and gid_out are root's subordinate ids */
	uid_t caller_uid;
	gid_t caller_gid;
	/* The caller's fd limit, before the supervisor raised its soft limit:
	 * the workload's, unless the policy sets limits.rlimits.nofile. */
	bool has_caller_nofile;
	struct rlimit caller_nofile;
	bool tty;	     /* a pty of the sandbox's own devpts on 0-2 (sandbox_start()) */
	bool svc_output;     /* the services' stdout/stderr fds are given (struct sandbox) */
	int64_t deadline_ms; /* CLOCK_MONOTONIC ms at which init ends the sandbox, 0: none */
	char *const *argv;   /* the workload command, NULL-terminated */
	/* A second seccomp program (struct sock_filter[]), loaded before
	 * paddock's own by sandbox_harden(): paddock oci's linux.seccomp.
	 * Filters stack and the strictest answer wins. NULL: none. */
	const void *extra_bpf;
	size_t extra_bpf_len;
	/* Namespaces joined: entered by the parent just for the clone, so
	 * the child is born in them (their bits stay in namespaces; joined
	 * says which of them are not new: no hostname, no lo set up there). */
	struct sandbox_nsjoin join[SANDBOX_JOIN_MAX];
	size_t n_join;
	unsigned joined;
};

/* A started sandbox, as the supervisor holds it. */
struct sandbox {
	int ctl; /* our end of the control socket (include/initproto.h) */
	/* Set before sandbox_start(): moved onto the child's fds 0-2 (the
	 * supervisor's relay pipes, supervisor/stdio.c); -1 keeps the fd the
	 * launcher has (--weaken direct-stdio). Ignored with spec->tty. */
	int stdio[3];
	/* Set before sandbox_start(): the services' stdout and stderr (the
	 * session's output files), -1: /dev/null. Closed by the caller. */
	int svc_out[2];
	/* Set before sandbox_start(): a cgroup (v2) directory to clone the
	 * child into (CLONE_INTO_CGROUP), -1: ours. Not closed here. */
	int cgroup_fd;
	int pidfd;
	pid_t pid;
	dev_t ns_dev;
	ino_t pidns, userns; /* of the sandbox, read at start */
	struct timespec t_start;
};

/* init_image.c: paddock-init (init_path, or next to the paddock binary,
 * or PREFIX/libexec/paddock) copied into a sealed memfd: *out. */
int sandbox_prepare_init(const char *init_path, int *out, struct err *err);
/* A helper binary of paddock's (paddock-init, paddock-mediator): next to
 * the running paddock (the build tree), or in PREFIX/libexec/paddock. Its
 * path into buf: 0, or -ENOENT. */
int sandbox_find_helper(const char *name, char *buf, size_t size);

/* enter.c: clone3 into the spec's namespaces with a pidfd, write the id
 * maps and release the child (with s->tty it opens a pty pair on the
 * sandbox's /dev/ptmx, sends the master back as "pty" with SCM_RIGHTS
 * and keeps the slave on 0-2; sandbox_recv() takes it), which builds the root and execs
 * paddock-init (the steps are mapped at the top of enter.c). sb->ctl, pidfd, pid and the namespace
 * inodes are set from the clone on, so the caller can end the child on any later failure. */
int sandbox_start(const struct sandbox_spec *s, struct sandbox *sb, struct err *err);
/* The same, with before_go called once the id maps are written and before
 * the child is released: nothing of the sandbox runs yet, and before_go may
 * join its namespaces through sb->pidfd (the mediator binds its listeners
 * inside then, so no workload can take their ports first). */
int sandbox_start_gated(const struct sandbox_spec *s, struct sandbox *sb,
			int (*before_go)(struct sandbox *sb, void *arg, struct err *err), void *arg,
			struct err *err);
/* One message of the control socket (nonblocking): its length (0 at EOF)
 * or -errno; a fd that came with it (only "pty" carries one) in *fd, else
 * -1. buf gets a NUL. */
int sandbox_recv(int ctl, char *buf, size_t size, int *fd);
/* Prepare the protected paths (placeholders, locks) while the child mounts
 * the rest, and hand it the result. On failure the child is killed and its
 * own error, if it failed first, is the one reported. */
int sandbox_protect(const struct sandbox_spec *s, struct sandbox *sb, struct protect_state *st,
		    struct err *err);
/* CLONE_NEW* for the POLICY_NS_* bits ns. */
unsigned long sandbox_ns_flags(unsigned ns);
/* The hardening of every process that enters the sandbox, in the
 * sandbox's namespaces (after the mounts, or after sandbox_join()), as its
 * last steps before execve: cwd (resolved in the root), rlimits, setsid,
 * only fds 0-2 and keep (moved to 3, 4, ...; keep[] is updated; the first
 * n_inherit stay open across execve, the others become close-on-exec), no
 * capabilities, no_new_privs, Landlock (with apply_landlock; paddock-init
 * applies it to what it starts), an empty signal mask, seccomp. -errno
 * with err set; the process is then half-hardened and must only report and
 * _exit(). */
/* notify: load the notify program (seccomp_info.bpf_notify) with a new
 * listener and send it as "seccomp-notify" + fd over keep[0] (the
 * workload's child only; paddock exec's commands get the plain one). */
int sandbox_harden(const struct sandbox_spec *s, const char *cwd, int *keep, size_t n_keep,
		   size_t n_inherit, bool apply_landlock, bool notify, struct err *err);

/* join.c: the one way into a running sandbox from outside (the paddock exec
 * helper, the port relay), and the fd and process steps of every helper
 * the supervisor forks (the detached supervisor: no pidfd).
 *
 * In this order: PR_SET_PDEATHSIG and a check that parent still lives
 * (with parent > 0); not dumpable (with SANDBOX_JOIN_NOT_DUMPABLE); only
 * fds 0-2, keep[] (moved to 3, 4, ...; keep[] is updated, all close-on-exec
 * but the first n_inherit) and the pidfd; 0-2 on /dev/null
 * (SANDBOX_JOIN_NULL_STDIO) or, with SANDBOX_JOIN_STDIO_LAST3, the last
 * three keep fds moved onto 0-2; setns(2) into nstypes through pidfd
 * (>= 0), which is closed after; dumpable and the parent-death signal
 * again (a credential change resets both); with SANDBOX_JOIN_DROP_CAPS no
 * capabilities and no_new_privs; chdir("/") after a mount namespace join.
 * -errno with err set: the caller reports and _exit()s. */
enum sandbox_join_flags {
	SANDBOX_JOIN_NOT_DUMPABLE = 1u << 0,
	SANDBOX_JOIN_NULL_STDIO = 1u << 1,
	SANDBOX_JOIN_NULL_STDIN = 1u << 2,
	SANDBOX_JOIN_STDIO_LAST3 = 1u << 3,
	SANDBOX_JOIN_DROP_CAPS = 1u << 4,
};
struct sandbox_join {
	pid_t parent; /* > 0: die with it */
	int pidfd;    /* the sandbox's PID 1, or -1: no setns */
	int nstypes;  /* CLONE_NEW* to join through pidfd */
	int *keep;
	size_t n_keep, n_inherit;
	unsigned flags; /* SANDBOX_JOIN_* */
};
int sandbox_join(const struct sandbox_join *j, struct err *err);

/* init_image.c: paddock-init's argv for s: its options (the fds of enum
 * initproto_fd), each service as "--service NAME LEASE_MS ARGC ARG...",
 * then "--" and the workload. Heap, never freed: built in the child that
 * execs next. NULL on ENOMEM. */
char **sandbox_init_argv(const struct sandbox_spec *s);
