/* The mount plan: a policy turned into an ordered list of operations
 * (plan.c, pure), and the child-side code that performs them (apply.c). */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "../include/err.h"
#include "../policy/policy.h"

enum mount_op_kind {
	MOUNT_OP_BIND,
	MOUNT_OP_TMPFS,
	MOUNT_OP_PROC,
	MOUNT_OP_DEV,
	MOUNT_OP_DIR,
	MOUNT_OP_SYMLINK,
	MOUNT_OP_PROTECT, /* an existing path inside a bind, bound on itself read-only */
	MOUNT_OP_PIN,	  /* a directory above a protected path, bound on itself (as is) */
	/* protect_git "allowlist": a git directory that is a whole bind (readonly)
	 * or a data directory in one (writable again), bound on itself */
	MOUNT_OP_REMOUNT,
};

struct mount_op {
	enum mount_op_kind kind;
	char *source;	   /* owned: host path (BIND) */
	char *target;	   /* owned: absolute sandbox path */
	char *link;	   /* owned: SYMLINK text */
	bool readonly;	   /* BIND: as planned, after weakenings */
	bool optional;	   /* BIND: a missing source is skipped */
	bool copy_symlink; /* BIND: a symlink source is recreated as a symlink */
	bool host_proc;	   /* PROC: bind the host's /proc (no pid namespace) */
	/* PROC: absolute paths below target masked (a file covered by the
	 * null device, a directory by an empty read-only tmpfs) and made
	 * read-only, besides paddock's own lists (apply.c); one that does not
	 * exist is skipped. Not owned (paddock oci's maskedPaths and
	 * readonlyPaths, set after mounts_plan()). */
	char *const *masked;
	size_t n_masked;
	char *const *readonly_paths;
	size_t n_readonly_paths;
	/* BIND: > 0 when the supervisor made the detached tree (an idmapped
	 * writable bind for a root caller, sandbox/enter.c); the child attaches
	 * it as given (fd 0 is stdin, never a tree) */
	int given_fd;
	uint64_t size; /* TMPFS bytes, 0 = default */
	unsigned mode; /* TMPFS, DIR */
	char what[32]; /* "mounts[3]" or "protect[1]", for errors and records */
	/* PROTECT: the host inode the supervisor checked (and locked) */
	dev_t dev;
	ino_t ino;
	/* Set by mounts_check_sources() in the supervisor and again by
	 * mounts_apply() in the child, whose copy is the truth: the child
	 * reports it back ("applied", include/initproto.h). */
	bool skipped;	 /* optional source missing */
	bool as_symlink; /* copy_symlink applied */
};

struct mount_plan {
	struct mount_op *ops;
	size_t n;
};

enum mounts_plan_flags {
	MOUNTS_RW_BINDS = 1u << 0,  /* the rw-binds weakening: every bind writable */
	MOUNTS_HOST_PROC = 1u << 1, /* no pid namespace: /proc is a bind of the host's */
};

/* Turn a validated policy into the ordered operations: the policy's mounts
 * in order, then one PIN per directory between a bind's target and a
 * protected path below it, then one PROTECT per protected path (which stay
 * read-only whatever the flags). The plan owns copies of its strings.
 * -ENOMEM. */
int mounts_plan(const struct policy *p, unsigned flags, struct mount_plan *out);
void mounts_plan_free(struct mount_plan *plan);
/* "bind", "tmpfs", ... for records and --explain; "?" for no kind. */
const char *mounts_op_name(enum mount_op_kind k);

/* Host path of a sandbox path that lies inside a bind mount of the plan
 * (the innermost bind wins). *out is malloc'd. -ENOENT when it is not
 * inside a bind, -ENOMEM. Pure. */
int mounts_host_path(const struct mount_plan *plan, const char *sandbox_path, char **out);

/* Index of the innermost BIND op whose target contains sandbox_path, or -1. */
long mounts_enclosing_bind(const struct mount_plan *plan, const char *sandbox_path);

/* Which host paths a sandbox can reach: the index of the first BIND op
 * (skipped ones aside) whose source is host_path (canonical) or one of its
 * ancestors; with MOUNTS_EXPOSE_BELOW also one whose source lies below
 * host_path; with MOUNTS_EXPOSE_WRITABLE only writable binds count. -1 when
 * none does. Pure. */
enum mounts_expose_flags {
	MOUNTS_EXPOSE_WRITABLE = 1u << 0,
	MOUNTS_EXPOSE_BELOW = 1u << 1,
};
long mounts_exposing_bind(const struct mount_plan *plan, const char *host_path, unsigned flags);

/* Supervisor side, before anything starts: every bind source can be opened
 * without following symlinks (a missing optional one is marked skipped).
 * Errors name the JSON path: "mounts[3].source: /x: No such file...". */
int mounts_check_sources(struct mount_plan *plan, struct err *err);

/* Child side, in new user and mount namespaces, before pivot: build the new
 * root on a tmpfs from the plan, mount /proc, pivot_root into it and detach
 * the old root. Ends with the process's root and cwd at the new "/". Errors
 * name the operation ("mounts[3] /usr: open_tree: ..."). */
/* before_protect, when not NULL, is called once, just before the first PIN
 * or PROTECT operation: the supervisor prepares protected paths while the
 * child builds the rest, and this is where the child takes in the result
 * (mounts_protect_decode()). */
typedef int (*mounts_protect_cb)(struct mount_plan *plan, void *arg, struct err *err);
int mounts_apply(struct mount_plan *plan, mounts_protect_cb before_protect, void *arg,
		 struct err *err);

/* Compare the mount table the process sees (/proc/self/mountinfo) with the
 * plan: every read-only bind and protected path must be mounted read-only.
 * -EPERM with err naming the first offender. */
int mounts_verify(const struct mount_plan *plan, struct err *err);
/* The same check against mountinfo text (unit tests). */
int mounts_verify_text(const struct mount_plan *plan, const char *mountinfo, struct err *err);

/* Supervisor side, before the sandbox starts: make every protected path
 * exist so a read-only mount can cover it. A missing path gets an empty
 * placeholder file at its first missing component, created here and removed
 * by mounts_protect_release(); every protected inode is flock()ed shared so
 * a concurrent sandbox's cleanup never removes a placeholder in use. */
struct protect_state {
	int *fds;	/* one locked fd per PROTECT op, -1 when none */
	char **created; /* host paths of placeholders we made, or NULL */
	size_t n;
	/* The sweeper: a process of ours outside the sandbox that is told
	 * each placeholder's path before it is made and removes what is left
	 * once we are gone and the sandbox (watched by its pidfd) too, so
	 * that a SIGKILL of the launcher leaves nothing. 0: none. */
	pid_t sweep_pid;
	int sweep_fd;
};
/* sandbox_pidfd: the sandbox the sweeper waits for before it sweeps (-1:
 * none to wait for). */
int mounts_protect_prepare(struct mount_plan *plan, struct protect_state *st, int sandbox_pidfd,
			   struct err *err);
/* What the child needs of that preparation, one line per PROTECT op:
 * "INDEX SKIPPED TARGETLEN DEV INO". encode writes the line for op i into
 * buf (-ENOSPC); decode applies one such line to the child's copy of the
 * plan (-EINVAL for anything malformed or out of range). */
int mounts_protect_encode(const struct mount_plan *plan, size_t i, char *buf, size_t size);
int mounts_protect_decode(struct mount_plan *plan, const char *line);
/* The index of "idmap INDEX" (a root caller's idmapped tree for a BIND op,
 * include/initproto.h): *out, or -EINVAL for anything but a decimal index
 * of a BIND op of plan. Pure. */
int mounts_idmap_decode(const struct mount_plan *plan, const char *index, size_t *out);
/* Remove placeholders we created that no other sandbox holds, close fds.
 * Returns the number of placeholders left behind because they were in use. */
int mounts_protect_release(struct protect_state *st);
