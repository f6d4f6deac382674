/* Git-aware protection (docs/security.md, "Protected paths"): the pure
 * readers of the few git files paddock looks at without running git
 * (gitconf.c), and the supervisor-side discovery of git directories and the
 * check after the run (git.c). */
#pragma once

#include <stdbool.h>
#include <stddef.h>

#include "../include/err.h"
#include "../policy/policy.h"

/* One variable of a git config file: section and key lower-cased, the
 * subsection as written (NULL for none), the value with quotes and escapes
 * resolved (NULL for a bare boolean key). Return non-zero to stop. */
typedef int (*gitconf_cb)(const char *section, const char *sub, const char *key, const char *value,
			  void *arg);
/* Parse a git config file (git-config(1), "CONFIGURATION FILE"). Returns the
 * number of variables, -EINVAL for anything git itself would refuse or that
 * this reader cannot follow (the caller counts that as suspect), -E2BIG over
 * GITCONF_MAX bytes. Pure: no allocation, no syscalls. */
#define GITCONF_MAX (1u << 20)
int gitconf_parse(const char *buf, size_t len, gitconf_cb cb, void *arg);
/* Does this variable make git run a command, load configuration from
 * elsewhere, or turn on a file that does (include.path, core.fsmonitor,
 * alias.x = !cmd, extensions.worktreeConfig, ...)? */
bool gitconf_runs_code(const char *section, const char *sub, const char *key, const char *value);

/* Is name an entry git itself makes at the top of a git directory (the
 * list in docs/security.md, "After the run: tampering")? Pure. */
bool git_name_known(const char *name);

/* "gitdir: PATH" (a .git file, gitrepository-layout(5)): the path into
 * out. -EINVAL for anything else, -ENAMETOOLONG. Pure. */
int gitfile_parse(const char *buf, size_t len, char *out, size_t size);
/* A commondir file: one path, trailing whitespace dropped. Pure. */
int gitcommondir_parse(const char *buf, size_t len, char *out, size_t size);

/* The git directories found at start, for the check after the run. */
struct git_watch {
	char **dirs;  /* host paths of git directories, canonical */
	bool *had_cd; /* a commondir file existed at start */
	char **known; /* "DIR\tFILE\tsection.sub.key=value" of code keys at start */
	size_t n_dirs, n_known;
	char **roots; /* host directories walked for repositories */
	size_t n_roots;
	/* protect_git "allowlist": the git directories read-only but for
	 * what git writes, host paths and their sandbox paths */
	char **allow, **allow_sb;
	size_t n_allow;
};

/* Expand the policy's "**" protect entries, supervisor side, before the
 * plan: ROOT/STAR-STAR/.git becomes the protected names of every git
 * directory of a repository containing ROOT or found below it (bounded
 * walk: GIT_WALK_DIRS directories, GIT_WALK_DEPTH levels); ROOT/STAR-STAR/NAME
 * becomes every existing ROOT/.../NAME. A git directory outside every bind
 * (a workspace that is a subdirectory, worktree or submodule of a
 * repository) is added as a writable bind at its own path, so git works
 * inside. Fills *watch for git_check_after(). *warn gets a message when a
 * walk stopped at its bound. -ENOMEM, -E2BIG (too many entries). */
#define GIT_WALK_DIRS  4096
#define GIT_WALK_DEPTH 8
int git_expand_protect(struct policy *p, struct git_watch *watch, char *warn, size_t warn_size,
		       struct err *err);

/* After the run, from outside, never running git: every git directory of
 * *watch and every one now found below its roots, for code-running keys
 * not there at start and for a commondir that was not. Each finding is
 * one malloc'd line in (*out)[]; returns their number or -ENOMEM. */
int git_check_after(const struct git_watch *watch, char ***out);
void git_watch_free(struct git_watch *watch);

/* The git directory as an allowlist (gitallow.c): may git's change op of
 * rel (a path relative to a git directory, no "." or ".." components) be
 * made? GITALLOW_COMMONDIR: a linked worktree's commondir, which the
 * supervisor writes itself with what git worktree add writes. Pure. */
enum gitallow_op {
	GITALLOW_FILE,	 /* open for writing, created or not */
	GITALLOW_MKDIR,	 /* mkdir */
	GITALLOW_REMOVE, /* unlink, rmdir */
	GITALLOW_RENAME, /* either end of a rename */
};
enum gitallow_verdict {
	GITALLOW_NO,
	GITALLOW_YES,
	GITALLOW_COMMONDIR,
};
enum gitallow_verdict gitallow_check(const char *rel, enum gitallow_op op);
