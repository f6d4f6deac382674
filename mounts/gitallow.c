/* The git directory as an allowlist (docs/security.md, "The git directory
 * as an allowlist"): which changes git itself makes in a git directory, by
 * the path relative to it. The supervisor asks this for every creating,
 * writing or removing call whose parent directory lies in the read-only
 * part of a protected git directory, and performs the call itself only on
 * a yes. Pure: no allocation, no syscalls; unit-tested (tests/unit/
 * test_git.c) and fuzzed (tests/fuzz/fuzz_git.c, selector 'a').
 *
 * The list is gitrepository-layout(5) and the state files of git-rebase(1),
 * git-merge(1), git-bisect(1), git-stash(1), git-gc(1) and git-worktree(1),
 * aligned with git_name_known(): every name git makes at the top, except
 * those that make git run code or read configuration from elsewhere. */
#include "git.h"

#include <string.h>

/* Names git makes that it reads as configuration, hooks or a redirect:
 * never written from inside. remotes/ and branches/ are the old remote
 * configuration (URLs, refspecs); modules/ holds submodules' own git
 * directories with their config and hooks. */
static const char *const refused[] = {
    "config",  "config.worktree",  "commondir", "hooks",  "info",
    "remotes", "branches",	   "modules",	"gitdir", "fsmonitor--daemon.ipc",
    "svn",     "fsmonitor--daemon"};

/* Directories whose whole tree is data git reads as objects, refs, logs or
 * the state of an operation in progress. */
static const char *const data_dirs[] = {
    "objects",	"refs",	      "logs",	  "rebase-merge", "rebase-apply",	 "sequencer",
    "rr-cache", "lost-found", "reftable", "lfs",	  "NOTES_MERGE_WORKTREE"};
/* The same in a linked worktree's own directory (worktrees/NAME/). */
static const char *const worktree_dirs[] = {"refs", "logs", "rebase-merge", "rebase-apply",
					    "sequencer"};

#define N(a) (sizeof(a) / sizeof((a)[0]))

static bool listed(const char *const *v, size_t n, const char *s, size_t len)
{
	for (size_t i = 0; i < n; i++)
		if (strlen(v[i]) == len && memcmp(v[i], s, len) == 0)
			return true;
	return false;
}

/* One component of rel: [s, s+len). Empty, "." and ".." are refused. */
static bool component_ok(const char *s, size_t len)
{
	if (!len || (len == 1 && s[0] == '.') || (len == 2 && s[0] == '.' && s[1] == '.'))
		return false;
	return memchr(s, '\0', len) == NULL;
}

/* A file git makes at the top of a git directory (or of a worktree's). */
static bool state_file(const char *name, size_t len)
{
	char buf[256];

	if (len >= sizeof(buf) || listed(refused, N(refused), name, len))
		return false;
	/* Nor a lock of one, but for config's. */
	if (len > 5 && memcmp(name + len - 5, ".lock", 5) == 0 &&
	    listed(refused, N(refused), name, len - 5))
		/* config.lock: git's rewrite of a config with the bytes it
		 * holds (git submodule update) goes through it; the rename
		 * onto config is then done only when nothing changes. */
		return len == 11 && memcmp(name, "config", 6) == 0;
	memcpy(buf, name, len);
	buf[len] = '\0';
	/* git pack-refs writes packed-refs.new, then renames it. */
	if (strcmp(buf, "packed-refs.new") == 0)
		return true;
	return git_name_known(buf) && !listed(data_dirs, N(data_dirs), name, len) &&
	       strcmp(buf, "worktrees") != 0;
}

enum gitallow_verdict gitallow_check(const char *rel, enum gitallow_op op)
{
	const char *c[4];
	size_t len[4], n = 0;
	const char *p = rel;

	if (!rel || !*rel || *rel == '/')
		return GITALLOW_NO;
	/* Split into at most four components; deeper is only ever inside a
	 * data directory, where the rest need only be well formed. */
	for (;;) {
		const char *slash = strchr(p, '/');
		size_t l = slash ? (size_t)(slash - p) : strlen(p);

		if (!component_ok(p, l))
			return GITALLOW_NO;
		if (n < N(c)) {
			c[n] = p;
			len[n] = l;
		}
		n++;
		if (!slash)
			break;
		p = slash + 1;
	}
	/* Inside a data directory: anything. The directory itself: made
	 * and removed as git does (rebase-merge comes and goes), never renamed. */
	if (listed(data_dirs, N(data_dirs), c[0], len[0]))
		return n > 1 || op == GITALLOW_MKDIR || op == GITALLOW_REMOVE ? GITALLOW_YES
									      : GITALLOW_NO;
	/* info/: exclude, attributes, sparse-checkout and grafts change what
	 * git does, so only what git update-server-info (run by git gc)
	 * writes there: refs, through a temporary refs_XXXXXX, and the
	 * removal of an old rev-cache. */
	if (len[0] == 4 && memcmp(c[0], "info", 4) == 0) {
		if (n == 1)
			return op == GITALLOW_MKDIR ? GITALLOW_YES : GITALLOW_NO;
		if (n > 2 || op == GITALLOW_MKDIR)
			return GITALLOW_NO;
		if ((len[1] == 4 && memcmp(c[1], "refs", 4) == 0) ||
		    (len[1] > 5 && memcmp(c[1], "refs_", 5) == 0))
			return GITALLOW_YES;
		return len[1] == 9 && memcmp(c[1], "rev-cache", 9) == 0 && op == GITALLOW_REMOVE
			   ? GITALLOW_YES
			   : GITALLOW_NO;
	}
	if (len[0] == 9 && memcmp(c[0], "worktrees", 9) == 0 && n == 1)
		return op == GITALLOW_MKDIR || op == GITALLOW_REMOVE ? GITALLOW_YES : GITALLOW_NO;
	if (n == 1)
		return op != GITALLOW_MKDIR && state_file(c[0], len[0]) ? GITALLOW_YES
									: GITALLOW_NO;
	if (len[0] != 9 || memcmp(c[0], "worktrees", 9) != 0)
		return GITALLOW_NO;
	/* worktrees/NAME: git worktree add, remove, prune. */
	if (n == 2)
		return op == GITALLOW_MKDIR || op == GITALLOW_REMOVE || op == GITALLOW_RENAME
			   ? GITALLOW_YES
			   : GITALLOW_NO;
	if (listed(worktree_dirs, N(worktree_dirs), c[2], len[2]))
		return n > 3 || op == GITALLOW_MKDIR || op == GITALLOW_REMOVE ? GITALLOW_YES
									      : GITALLOW_NO;
	if (n > 3)
		return GITALLOW_NO;
	/* commondir: only what git worktree add writes ("../.."), by the
	 * supervisor; its removal with the worktree. */
	if (len[2] == 9 && memcmp(c[2], "commondir", 9) == 0)
		return op == GITALLOW_FILE     ? GITALLOW_COMMONDIR
		       : op == GITALLOW_REMOVE ? GITALLOW_YES
					       : GITALLOW_NO;
	if ((len[2] == 6 && memcmp(c[2], "gitdir", 6) == 0) ||
	    (len[2] == 6 && memcmp(c[2], "locked", 6) == 0))
		return op == GITALLOW_MKDIR ? GITALLOW_NO : GITALLOW_YES;
	return op != GITALLOW_MKDIR && state_file(c[2], len[2]) ? GITALLOW_YES : GITALLOW_NO;
}
