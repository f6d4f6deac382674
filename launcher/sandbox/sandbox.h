/* The launcher's shared types: options from the command line, and the
 * functions each setup concern exports. One struct passed down, no globals. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <seccomp.h>
#include <sys/types.h>

#include "../include/err.h"
#include "../mounts/mounts.h"
#include "../policy/policy.h"

enum weaken {
	WEAKEN_RW_BINDS = 1u << 0,	 /* read-only binds become writable */
	WEAKEN_NO_PIDNS = 1u << 1,	 /* no pid namespace: expiry kills only the direct child */
	WEAKEN_HOST_NET = 1u << 2,	 /* no network namespace: the host's network */
	WEAKEN_NO_SECCOMP = 1u << 3,	 /* no seccomp filter */
	WEAKEN_NO_LANDLOCK = 1u << 4,	 /* no Landlock rules */
	WEAKEN_NO_NEW_SESSION = 1u << 5, /* the workload stays in the caller's session */
};
#define WEAKEN_COUNT 6

struct options {
	const char *policy_path; /* NULL: the built-in agent policy */
	const char *workspace;	 /* NULL: the current directory */
	const char *record_path; /* NULL: no record */
	const char *init_path;	 /* NULL: found next to the paddock binary */
	uint64_t ttl_ms;
	bool has_ttl;
	unsigned weaken; /* WEAKEN_* */
	struct policy_bind_arg *binds;
	size_t n_binds;
	const char **protect;
	size_t n_protect;
	const char **setenv;
	size_t n_setenv;
	const char *cwd;
	const char **ports; /* --port HOST:PORT:SANDBOXPORT, checked by policy_amend() */
	size_t n_ports;
	bool explain;	  /* print the effective sandbox, start nothing */
	bool detach;	  /* print the session id once started; supervise in the background */
	const char *name; /* the session's name, NULL: unnamed */
	char **argv;	  /* the workload command, NULL-terminated */
};

/* args.c: parse "paddock run ..." (argv after "run"). Returns 0, 1 when
 * help or version was printed (exit 0), or -EINVAL with err set. *o owns
 * arrays; free with options_free(). */
int options_parse(int argc, char **argv, struct options *o, struct err *err);
void options_free(struct options *o);
const char *weaken_name(unsigned bit);
const char *weaken_warning(unsigned bit);
int weaken_parse(const char *name, unsigned *out);

/* env.c: the workload's environment from the policy and the caller's
 * environment. Returns a malloc'd NULL-terminated array of "K=V" (strings
 * malloc'd too), free with env_free(). -ENOMEM. */
int env_build(const struct policy *p, char *const *caller_env, char ***out);
void env_free(char **env);

/* status.c: exit status of paddock run. */
enum ending {
	ENDING_EXIT,
	ENDING_SIGNAL,
	ENDING_EXPIRED,
	ENDING_LAUNCHER_ERROR,
	ENDING_STOPPED, /* paddock stop */
};
const char *ending_name(enum ending e);
/* code: exit code (ENDING_EXIT), signal number (ENDING_SIGNAL), the
 * workload's status as reported (ENDING_EXPIRED, ENDING_STOPPED: a signal
 * number, or -1). */
int exit_status_for(enum ending e, int code);

/* userns.c: id maps for the child, written by the parent (user_namespaces(7)). */
int userns_write_maps(pid_t pid, uid_t inside_uid, uid_t outside_uid, gid_t inside_gid,
		      gid_t outside_gid, struct err *err);
/* The map line "INSIDE OUTSIDE 1\n" into buf. */
int userns_map_line(char *buf, size_t size, unsigned inside, unsigned outside);

/* net.c: bring lo up in the current network namespace over rtnetlink. */
int net_lo_up(struct err *err);

/* caps.c: drop every capability from every set, the bounding set and the
 * ambient set, then set no_new_privs. */
int caps_drop_all(struct err *err);

/* fds.c: keep only 0-2 and the listed fds (moved to 3, 4, ...), close the rest. */
int fds_keep_only(int *keep, size_t n, struct err *err);
/* Make sure fds 0-2 are open (on /dev/null), so a closed stdio fd cannot be
 * taken by something we open. */
int fds_ensure_stdio(void);

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
};
int seccomp_build(const struct policy *p, scmp_filter_ctx *out, struct seccomp_info *info,
		  struct err *err);
void seccomp_info_free(struct seccomp_info *info);
/* Child side, the last step before exec: load the filter. */
int seccomp_apply(scmp_filter_ctx ctx, struct err *err);
/* The same, from the program exported in the parent: the child then only
 * makes one system call instead of having libseccomp generate the program
 * again (about 2 ms of every start). Nothing to do when !info->enabled. */
int seccomp_apply_bpf(const struct seccomp_info *info, struct err *err);

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
