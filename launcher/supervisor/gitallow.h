/* The git directory as an allowlist, supervisor side (gitallow.c; docs/
 * security.md, "The git directory as an allowlist"). Callable for any
 * seccomp listener fd whose program has the allowlist prefix
 * (launcher/sandbox/seccomp_protect.c). */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <linux/seccomp.h>

#include "../../mounts/git.h"

/* One path argument of a call (addr in the caller's memory, relative to
 * dfd or its cwd, or absolute in its root), read once: the O_PATH fd of its
 * parent as the caller sees it (resolved from /proc/PID/{cwd,fd/N,root},
 * never through a symlink or magic link), its last component into name
 * (size bytes). -1: unreadable, unresolved, or a last component of ".",
 * ".." or nothing. Also the notice's (notice.c). */
int caller_parent(pid_t pid, int dfd, uint64_t addr, char *name, size_t size);

struct gitallow_dir {
	int fd; /* O_PATH of the host directory, opened at start, outside the sandbox */
	dev_t dev;
	ino_t ino;
	const char *host, *sandbox; /* the git_watch's strings */
};

struct gitallow {
	struct gitallow_dir *dirs;
	size_t n;
	bool as_caller; /* root: each change with the caller's fsuid, through idmapped fds */
	unsigned long performed, refused, unchanged, lines;
};

/* Open the git directories of w (protect_git "allowlist"), idmapped as the
 * sandbox's writable binds are for a root caller. 0, -errno. */
struct sandbox_spec;
int gitallow_open(struct gitallow *g, const struct git_watch *w, const struct sandbox_spec *s);
void gitallow_close(struct gitallow *g);

/* One notification of the listener fd. true: it was one of a git
 * directory's read-only part, and answered (*sent: already, by
 * SECCOMP_IOCTL_NOTIF_ADDFD with SECCOMP_ADDFD_FLAG_SEND; else resp is to
 * be sent). false: not ours, nothing was done (the caller lets it
 * continue, or answers it otherwise). */
struct denials_sink; /* run.h: where a listener's lines go */
bool gitallow_serve(struct gitallow *g, int listener, struct denials_sink *to,
		    const struct seccomp_notif *req, struct seccomp_notif_resp *resp, bool *sent);
