/* The launcher's shared types: options from the command line, and the
 * functions each setup concern exports. One struct passed down, no globals. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "../include/err.h"
#include "../mounts/mounts.h"
#include "../policy/policy.h"

enum weaken {
	WEAKEN_RW_BINDS = 1u << 0, /* read-only binds become writable */
	WEAKEN_NO_PIDNS = 1u << 1, /* no pid namespace: expiry kills only the direct child */
	WEAKEN_HOST_NET = 1u << 2, /* no network namespace: the host's network */
};
#define WEAKEN_COUNT 3

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
	char **argv; /* the workload command, NULL-terminated */
};

/* args.c: parse "paddock run ..." (argv after "run"). Returns 0, 1 when
 * help or version was printed (exit 0), or -EINVAL with err set. *o owns
 * arrays; free with options_free(). */
int options_parse(int argc, char **argv, struct options *o, struct err *err);
void options_free(struct options *o);
const char *weaken_name(unsigned bit);
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
};
const char *ending_name(enum ending e);
/* code: exit code (ENDING_EXIT), signal number (ENDING_SIGNAL), the
 * workload's status as reported (ENDING_EXPIRED: a signal number, or -1). */
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
