/* Integration: git works inside the sandbox with its git directories
 * protected (docs/security.md, "Protected paths"), and says why when it
 * cannot: the protected-path notice (launcher/supervisor/notice.c). The
 * workflow runs the same script inside and outside in each layout (a
 * repository at the workspace root with a submodule, a workspace in a
 * subdirectory with a submodule, a linked worktree) and compares what git
 * says of the result afterwards, on the host. */
#include "harness.h"

TestSuite(git_inside, .init = h_init, .fini = h_fini, .timeout = 180);

#define GIT_ENV                                                                          \
	"export HOME='%s' GIT_CONFIG_NOSYSTEM=1 GIT_AUTHOR_NAME=t GIT_AUTHOR_EMAIL=t@t " \
	"GIT_COMMITTER_NAME=t GIT_COMMITTER_EMAIL=t@t; "

#define REPO_INIT "git init -q -b main && echo a > a && git add a && git commit -qm init"

struct gx {
	struct h_world w;
	char *home; /* HOME of the host's git: empty, no global config */
};

static struct gx gx_new(void)
{
	struct gx g;

	g.w = h_world();
	g.home = h_mkdir(g.w.base, "home", 0755);
	return g;
}

/* A script as the host user in dir; asserts it worked, returns stdout. */
static const char *host(const struct gx *g, const char *dir, const char *script)
{
	struct h_proc p;

	H_CMD(&p, dir, "/bin/sh", "-c", h_fmt(GIT_ENV "set -e; %s", g->home, script));
	cr_assert_eq(p.status, 0, "host script failed: %s\n" H_FMT, script, H_ARGS(&p));
	return p.out_text;
}

/* ------------------------------------------------ the protected-path notice */

/* A repository at the workspace root: its config's path and bytes. */
static const char *repo_config(const struct gx *g, char **config)
{
	host(g, g->w.ws, REPO_INIT);
	*config = h_join(g->w.ws, ".git/config");
	return h_read_file(*config, NULL);
}

/* git config inside: refused with a line that names paddock and the file,
 * not "Device or resource busy"; the host's config is unchanged. The twin
 * (--weaken no-protect) shows the same command writes it. mode: the
 * policy's protect_git. */
static void git_config(bool weak, const char *mode)
{
	struct gx g = gx_new();
	char *config;
	const char *before = repo_config(&g, &config);
	bool allow = strcmp(mode, "allowlist") == 0;
	struct h_proc p;

	H_PADDOCK(&p, g.w.ws, "run", "--policy", h_protect_git_policy(g.w.base, mode), "--record",
		  g.w.record, weak ? "--weaken" : "--cwd", weak ? "no-protect" : g.w.ws, "--", "sh",
		  "-c", "git config user.name planted; echo config=$?");
	cr_assert_eq(p.status, 0, H_SHOW(&p));
	if (weak) {
		cr_assert(h_contains(p.out_text, "config=0\n"), H_SHOW(&p));
		cr_assert_str_eq(host(&g, g.w.ws, "git config user.name"), "planted\n", H_SHOW(&p));
		cr_assert(!h_contains(p.err_text, "protected by paddock"), H_SHOW(&p));
		cr_assert_str_eq(h_json(g.w.record, "d['protect_notice']['enabled']"), "false",
				 H_SHOW(&p));
		return;
	}
	cr_assert(!h_contains(p.out_text, "config=0\n"), H_SHOW(&p));
	cr_assert(
	    h_contains(p.err_text, h_fmt("paddock: %s is protected by paddock (policy %s", config,
					 allow ? "protect_git \"allowlist\"" : "protect ")),
	    H_SHOW(&p));
	cr_assert(h_contains(p.err_text, "the change was refused"), H_SHOW(&p));
	cr_assert(!h_contains(p.err_text, "Device or resource busy"), H_SHOW(&p));
	cr_assert(!h_contains(p.err_text, "Read-only file system"), H_SHOW(&p));
	cr_assert_str_eq(h_read_file(config, NULL), before, H_SHOW(&p));
	cr_assert_str_eq(h_json(g.w.record, allow ? "d['protect_notice']['git_allowlist_refused'] "
						    ">= 1"
						  : "d['protect_notice']['refused'] >= 1"),
			 "true", H_SHOW(&p));
}

Test(git_inside, git_config_says_protected_by_paddock)
{
	git_config(false, "check");
}

Test(git_inside, git_config_says_protected_by_paddock_weakened_twin)
{
	git_config(true, "check");
}

Test(git_inside, allowlist_git_config_says_protected_by_paddock)
{
	git_config(false, "allowlist");
}

Test(git_inside, allowlist_git_config_says_protected_by_paddock_weakened_twin)
{
	git_config(true, "allowlist");
}

/* The other calls of the notice: a rename away, an rmdir and rm -r's
 * unlinkat(AT_REMOVEDIR) of protected paths (placeholder directories in the
 * work tree), each refused with the line, and the paths still there. An
 * unlink of a protected file is not sent (the hot call of builds): the
 * kernel's EBUSY, without the line. */
Test(git_inside, rename_and_rmdir_of_protected_paths_are_explained)
{
	struct gx g = gx_new();
	struct h_proc p;

	host(&g, g.w.ws, REPO_INIT);
	H_PADDOCK(&p, g.w.ws, "run", "--policy", h_protect_git_policy(g.w.base, "check"), "--",
		  "sh", "-c",
		  "mv .git/hooks hooks-away; echo mv=$?; rmdir .claude; echo rmdir=$?; "
		  "rm -r .idea; echo rmr=$?; python3 -c 'import os; os.rename(\".git/info\", "
		  "\"/tmp/x\")'; echo py=$?; rm -f .git/config; echo rm=$?");
	cr_assert_eq(p.status, 0, H_SHOW(&p));
	cr_assert(h_contains(p.out_text, "mv=1\n"), H_SHOW(&p));
	cr_assert(h_contains(p.out_text, "rmdir=1\n"), H_SHOW(&p));
	cr_assert(h_contains(p.out_text, "rmr=1\n"), H_SHOW(&p));
	cr_assert(!h_contains(p.out_text, "py=0\n"), H_SHOW(&p));
	cr_assert(h_contains(p.out_text, "rm=1\n"), H_SHOW(&p));
	cr_assert(h_contains(p.err_text, h_fmt("paddock: %s/.git/hooks is protected", g.w.ws)),
		  H_SHOW(&p));
	cr_assert(h_contains(p.err_text, h_fmt("paddock: %s/.git/info is protected", g.w.ws)),
		  H_SHOW(&p));
	cr_assert(h_contains(p.err_text, h_fmt("paddock: %s/.claude is protected", g.w.ws)),
		  H_SHOW(&p));
	cr_assert(h_contains(p.err_text, h_fmt("paddock: %s/.idea is protected", g.w.ws)),
		  H_SHOW(&p));
	cr_assert(h_contains(p.err_text, "cannot remove '.git/config': Device or resource busy"),
		  H_SHOW(&p));
	cr_assert(h_exists(h_join(g.w.ws, ".git/hooks")) && h_exists(h_join(g.w.ws, ".git/config")),
		  H_SHOW(&p));
}

/* The one change the notice does rather than refuse: X.lock renamed over
 * a protected X beside it with the very bytes X holds. Any other bytes, or
 * a lock of another name or place, is refused; the config is unchanged. */
Test(git_inside, unchanged_rewrite_is_done_and_only_that)
{
	struct gx g = gx_new();
	char *config;
	const char *before = repo_config(&g, &config);
	struct h_proc p;

	H_PADDOCK(
	    &p, g.w.ws, "run", "--policy", h_protect_git_policy(g.w.base, "check"), "--record",
	    g.w.record, "--", "sh", "-c",
	    "cp .git/config .git/config.lock && mv .git/config.lock .git/config; echo same=$?; "
	    "test -e .git/config.lock; echo lock=$?; "
	    "cp .git/config other.lock && mv other.lock .git/config; echo other=$?; "
	    "cp .git/config .git/hooks.lock && mv .git/hooks.lock .git/config; echo name=$?; "
	    "(cat .git/config; printf '[core]\\n\\tfsmonitor = x\\n') > .git/config.lock && "
	    "mv .git/config.lock .git/config; echo changed=$?; rm -f .git/config.lock");
	cr_assert_eq(p.status, 0, H_SHOW(&p));
	cr_assert(h_contains(p.out_text, "same=0\nlock=1\n"), H_SHOW(&p));
	cr_assert(h_contains(p.out_text, "other=1\n"), H_SHOW(&p));
	cr_assert(h_contains(p.out_text, "name=1\n"), H_SHOW(&p));
	cr_assert(h_contains(p.out_text, "changed=1\n"), H_SHOW(&p));
	cr_assert_str_eq(h_read_file(config, NULL), before, H_SHOW(&p));
	cr_assert_str_eq(h_json(g.w.record, "[d['protect_notice'][k] for k in ('refused', "
					    "'unchanged_rewrites')]"),
			 "[3, 1]", H_SHOW(&p));
}

/* What the notice does not refuse: ordinary renames and unlinks, also of
 * names beside protected ones and through a symlink, and a hard link to a
 * protected file elsewhere (the same inode, not a mount root). */
Test(git_inside, ordinary_renames_and_unlinks_go_on)
{
	struct gx g = gx_new();
	struct h_proc p;

	host(&g, g.w.ws, REPO_INIT " && ln .git/description desc-link");
	H_PADDOCK(
	    &p, g.w.ws, "run", "--protect", h_join(g.w.ws, ".git/description"), "--", "sh", "-c",
	    "set -e; touch x && mv x y && rm y; touch .git/config.lock && rm .git/config.lock; "
	    "mkdir d && ln -s d l && touch l/f && mv l/f l/g && rm l/g && rmdir d && rm l; "
	    "rm desc-link; echo ordinary-done");
	cr_assert_eq(p.status, 0, H_SHOW(&p));
	cr_assert(h_contains(p.out_text, "ordinary-done\n"), H_SHOW(&p));
	cr_assert(!h_contains(p.err_text, "protected by paddock"), H_SHOW(&p));
	cr_assert(!h_exists(h_join(g.w.ws, "desc-link")), H_SHOW(&p));
}

/* ------------------------------------------------------- git workflow */

enum layout {
	AT_ROOT,   /* the repository is the workspace, with a submodule */
	IN_SUBDIR, /* the workspace is dir/ of the repository, a submodule in it */
	WORKTREE,  /* the workspace is a linked worktree of a repository beside it */
};

/* A submodule of src added at path and checked out one commit behind. */
static const char *sub_add(const char *src, const char *path)
{
	return h_fmt("git -c protocol.file.allow=always submodule add -q %s %s && "
		     "git commit -qm sub && git submodule update -q && "
		     "git -C %s checkout -q HEAD~1",
		     src, path, path);
}

/* The repository; returns the workspace directory, and in *top the
 * directory the summary runs in (the repository's top level). */
static char *workflow_setup(const struct gx *g, enum layout l, char **top)
{
	char *src = h_mkdir(g->w.base, "subsrc", 0755);

	host(g, src, REPO_INIT " && echo 2 > a && git commit -qam two");
	switch (l) {
	case AT_ROOT:
		host(g, g->w.ws, h_fmt("%s && %s", REPO_INIT, sub_add(src, "sub")));
		*top = g->w.ws;
		return g->w.ws;
	case IN_SUBDIR:
		host(g, g->w.ws,
		     h_fmt("%s && mkdir dir && echo f > dir/f && git add dir && git commit -qm dir "
			   "&& %s",
			   REPO_INIT, sub_add(src, "dir/sub")));
		*top = g->w.ws;
		return h_join(g->w.ws, "dir");
	case WORKTREE: {
		char *main_repo = h_mkdir(g->w.base, "main", 0755);
		char *wt = h_join(g->w.base, "wt");

		host(g, main_repo, REPO_INIT " && git worktree add -q -b wtb ../wt");
		*top = wt;
		return wt;
	}
	}
	return NULL;
}

/* Point 4's list of issue 12, in the current directory, on its branch.
 * Whole-tree commands are limited to the workspace ("-- ."): in a
 * subdirectory workspace the repository's files outside it are not in the
 * sandbox, and git there sees them as deleted (docs/security.md); rebase
 * needs a clean tree, so it runs where the workspace is the top level. */
static const char workflow[] =
    "set -e; export GIT_EDITOR=true GIT_SEQUENCE_EDITOR=true; B=$(git branch --show-current); "
    "git status --porcelain >/dev/null; "
    "if [ -e sub/.git ]; then git submodule update; fi; "
    "echo b > b && git add b && git commit -qm add-b; "
    "git log --oneline >/dev/null; git diff HEAD~1 --stat >/dev/null; "
    "git branch feature && git checkout -q feature && echo c > c && git add c && "
    "git commit -qm add-c && git checkout -q $B; "
    "echo d >> b && git stash push -q -- . && git stash pop -q && git commit -qm mod-b -- .; "
    "echo e > e && git add e && git commit -qm add-e; "
    "if [ -z \"$(git rev-parse --show-prefix)\" ]; then git rebase -q -i HEAD~2; fi; "
    "git worktree add -q .wt/w2 feature && git -C .wt/w2 log -1 --format=%s && "
    "git worktree remove .wt/w2 && rmdir .wt; "
    "git gc -q; git fsck --no-progress; "
    "mkdir fresh && git -C fresh init -q && echo x > fresh/x && git -C fresh add x && "
    "git -C fresh commit -qm fresh && git -C fresh log --format=%s && rm -rf fresh; "
    "echo workflow-done";

static const char summary[] =
    "git log --format=%s --all | sort; git status --porcelain; "
    "git submodule status --recursive | cut -c1; "
    "git fsck --no-progress --no-dangling && echo fsck-ok; git branch; git stash list";

/* allow: with protect_git "allowlist" (docs/security.md, "The git
 * directory as an allowlist"), where the supervisor makes git's changes in
 * the read-only git directories. */
static void workflow_in(enum layout l, bool allow)
{
	struct gx in = gx_new(), out = gx_new();
	char *top_in, *top_out;
	char *ws_in = workflow_setup(&in, l, &top_in), *ws_out = workflow_setup(&out, l, &top_out);
	struct h_proc p;
	const char *a, *b;

	if (allow)
		H_PADDOCK(&p, ws_in, "run", "--policy", h_allowlist_policy(in.w.base), "--record",
			  in.w.record, "--", "sh", "-c", h_fmt(GIT_ENV "%s", in.home, workflow));
	else
		H_PADDOCK(&p, ws_in, "run", "--record", in.w.record, "--", "sh", "-c",
			  h_fmt(GIT_ENV "%s", in.home, workflow));
	cr_assert_eq(p.status, 0, H_SHOW(&p));
	cr_assert(h_contains(p.out_text, "workflow-done\n"), H_SHOW(&p));
	cr_assert_str_eq(h_json(in.w.record, "d['tampering']"), "[]", H_SHOW(&p));
	cr_assert(!h_contains(p.err_text, "protected by paddock"), H_SHOW(&p));
	if (allow)
		cr_assert_str_eq(h_json(in.w.record,
					"d['protect_notice']['git_allowlist_performed'] "
					"> 10 and d['protect_notice']['git_allowlist_refused'] "
					"== 0"),
				 "true", H_SHOW(&p));
	if (l != WORKTREE)
		/* git submodule update rewrote the submodule's protected
		 * config with what it holds: done by the supervisor. */
		cr_assert_str_eq(h_json(in.w.record, "d['protect_notice']['unchanged_rewrites'] "
						     ">= 1"),
				 "true", H_SHOW(&p));
	host(&out, ws_out, workflow);
	a = host(&in, top_in, summary);
	b = host(&out, top_out, summary);
	cr_assert_str_eq(a, b, "inside:\n%s\noutside:\n%s\n" H_FMT, a, b, H_ARGS(&p));
	cr_assert(h_contains(a, "fsck-ok\n"), "%s", a);
	if (l != WORKTREE)
		cr_assert(h_contains(a, "add-e\n") && !h_contains(a, "\n+\n"), "%s", a);
	/* Nothing of paddock's is left, for git or for ls. */
	cr_assert_str_eq(host(&in, top_in, "git status --porcelain --ignored"), "");
	cr_assert_str_eq(h_list_dir(ws_in), h_list_dir(ws_out));
}

Test(git_inside, workflow_at_the_workspace_root_with_a_submodule)
{
	workflow_in(AT_ROOT, false);
}

Test(git_inside, workflow_in_a_subdirectory_workspace_with_a_submodule)
{
	workflow_in(IN_SUBDIR, false);
}

Test(git_inside, workflow_in_a_linked_worktree)
{
	workflow_in(WORKTREE, false);
}

Test(git_inside, allowlist_workflow_at_the_workspace_root_with_a_submodule)
{
	workflow_in(AT_ROOT, true);
}

Test(git_inside, allowlist_workflow_in_a_subdirectory_workspace_with_a_submodule)
{
	workflow_in(IN_SUBDIR, true);
}

Test(git_inside, allowlist_workflow_in_a_linked_worktree)
{
	workflow_in(WORKTREE, true);
}

/* git submodule update --init of a submodule never initialised writes its
 * url into .git/config: a change, refused with the notice (the policy's
 * choice: .git/config is never written from inside; init it outside). */
Test(git_inside, submodule_init_inside_is_refused_with_the_notice)
{
	struct gx g = gx_new();
	char *src = h_mkdir(g.w.base, "subsrc", 0755);
	char *clone = h_join(g.w.base, "clone");
	struct h_proc p;

	host(&g, src, REPO_INIT);
	host(&g, g.w.ws,
	     h_fmt(REPO_INIT " && git -c protocol.file.allow=always submodule add -q %s sub && "
			     "git commit -qm sub && git clone -q . %s",
		   src, clone));
	H_PADDOCK(&p, clone, "run", "--", "sh", "-c",
		  "git -c protocol.file.allow=always submodule update --init; echo init=$?");
	cr_assert(!h_contains(p.out_text, "init=0\n"), H_SHOW(&p));
	cr_assert(
	    h_contains(p.err_text, h_fmt("paddock: %s/.git/config is protected by paddock", clone)),
	    H_SHOW(&p));
}

/* ------------------------------------------- the git directory's names */

/* A name git does not make, new in a git directory during the run (a
 * .git/config.d/ a future git might read): it cannot be kept from being
 * made (docs/security.md, "The git directory as an allowlist"), so it is
 * reported after the run; one that was there at start is not, nor is
 * anything the workflow above makes (its tampering is empty). */
Test(git_inside, new_name_in_a_git_directory_is_reported)
{
	struct gx g = gx_new();
	struct h_proc p;
	const char *t;

	host(&g, g.w.ws, REPO_INIT " && mkdir .git/old-tool");
	H_PADDOCK(&p, g.w.ws, "run", "--policy", h_protect_git_policy(g.w.base, "check"),
		  "--record", g.w.record, "--", "sh", "-c",
		  "mkdir .git/config.d && echo '[core]' > .git/config.d/x && touch .git/ORIG_HEAD "
		  ".git/index.stash.1 .git/new.lock && echo made");
	cr_assert_eq(p.status, 0, H_SHOW(&p));
	cr_assert(h_contains(p.out_text, "made\n"), H_SHOW(&p));
	/* Made: this is detection, not prevention. */
	cr_assert(h_exists(h_join(g.w.ws, ".git/config.d/x")), H_SHOW(&p));
	t = h_json(g.w.record, "d['tampering']");
	cr_assert(h_contains(t, "/.git/config.d: not a name git makes"), "%s\n" H_FMT, t,
		  H_ARGS(&p));
	cr_assert(h_contains(p.err_text, "paddock: warning: tampering: "), H_SHOW(&p));
	cr_assert(!h_contains(t, "old-tool") && !h_contains(t, "ORIG_HEAD") &&
		      !h_contains(t, "index.stash") && !h_contains(t, "new.lock"),
		  "%s", t);
}

/* The same under protect_git "allowlist": the new name is refused before
 * it exists, git's own names are made, nothing is left to report. */
Test(git_inside, allowlist_new_name_in_a_git_directory_is_refused)
{
	struct gx g = gx_new();
	struct h_proc p;

	host(&g, g.w.ws, REPO_INIT " && mkdir .git/old-tool");
	H_PADDOCK(&p, g.w.ws, "run", "--policy", h_allowlist_policy(g.w.base), "--record",
		  g.w.record, "--", "sh", "-c",
		  "mkdir .git/config.d; echo config.d=$?; touch .git/ORIG_HEAD .git/index.stash.1 "
		  ".git/new.lock && echo made");
	cr_assert_eq(p.status, 0, H_SHOW(&p));
	cr_assert(h_contains(p.out_text, "config.d=1\nmade\n"), H_SHOW(&p));
	cr_assert(!h_exists(h_join(g.w.ws, ".git/config.d")), H_SHOW(&p));
	cr_assert(h_exists(h_join(g.w.ws, ".git/ORIG_HEAD")), H_SHOW(&p));
	cr_assert(h_contains(p.err_text, h_fmt("paddock: %s/.git/config.d is protected by paddock "
					       "(policy protect_git \"allowlist\"",
					       g.w.ws)),
		  H_SHOW(&p));
	cr_assert_str_eq(h_json(g.w.record, "d['tampering']"), "[]", H_SHOW(&p));
}

/* --trace-denials and the notice share the one seccomp listener. */
Test(git_inside, notice_and_trace_denials_together)
{
	struct gx g = gx_new();
	struct h_proc p;

	host(&g, g.w.ws, REPO_INIT);
	H_PADDOCK(&p, g.w.ws, "run", "--trace-denials", "--", "sh", "-c",
		  "git config user.name x; echo config=$?; mount -t tmpfs x /mnt; echo mount=$?");
	cr_assert_eq(p.status, 0, H_SHOW(&p));
	cr_assert(!h_contains(p.out_text, "config=0\n") && !h_contains(p.out_text, "mount=0\n"),
		  H_SHOW(&p));
	cr_assert(h_contains(p.err_text, "/.git/config is protected by paddock"), H_SHOW(&p));
	cr_assert(h_contains(p.err_text, "paddock: denied: mount by pid"), H_SHOW(&p));
}

/* git submodule update --recursive: the nested submodule's config
 * (.git/modules/mid/modules/leaf/config) is protected too, and rewritten
 * with the same bytes like the first level's. */
Test(git_inside, nested_submodules_update_recursively)
{
	struct gx g = gx_new();
	char *leaf = h_mkdir(g.w.base, "leaf", 0755), *mid = h_mkdir(g.w.base, "mid", 0755);
	struct h_proc p;

	host(&g, leaf, REPO_INIT " && echo 2 > a && git commit -qam two");
	host(&g, mid,
	     h_fmt(REPO_INIT " && git -c protocol.file.allow=always submodule add -q %s leaf && "
			     "git commit -qm leaf",
		   leaf));
	host(&g, g.w.ws,
	     h_fmt(REPO_INIT " && git -c protocol.file.allow=always submodule add -q %s mid && "
			     "git commit -qm mid && git -c protocol.file.allow=always submodule "
			     "update -q --init --recursive && git -C mid/leaf checkout -q HEAD~1",
		   mid));
	H_PADDOCK(&p, g.w.ws, "run", "--record", g.w.record, "--", "sh", "-c",
		  "git submodule update --recursive && echo updated && "
		  "git submodule status --recursive | cut -c1 | tr -d '\\n'; echo");
	cr_assert_eq(p.status, 0, H_SHOW(&p));
	/* Both clean: a space, not "+", before each of the two. */
	cr_assert(h_contains(p.out_text, "updated\n  \n"),
		  "a submodule is not at its recorded commit\n" H_FMT, H_ARGS(&p));
	cr_assert_str_eq(h_json(g.w.record, "d['protect_notice']['unchanged_rewrites'] >= 2"),
			 "true", H_SHOW(&p));
	cr_assert_str_eq(h_json(g.w.record, "d['tampering']"), "[]", H_SHOW(&p));
}

/* ------------------------------- paddock exec under the allowlist */

/* An exec'd command loads the workload's program (exec_helper.c), so git
 * works through `paddock exec` under protect_git "allowlist" as in the
 * workload: a commit lands (its index.lock, objects and ref are made by
 * the supervisor or in the writable binds), and `git config` is refused
 * with the allowlist's line on the exec client's stderr. The twin
 * (--weaken exec-plain-seccomp: the plain program, no listener) shows the
 * test sees the difference: the same commit meets the read-only git
 * directory (EROFS) and nothing is committed. */
static void exec_git(bool weak)
{
	struct h_sworld s = h_sworld();
	char *home = h_mkdir(s.w.base, "home", 0755);
	struct gx g = {.w = s.w, .home = home};
	char *config = h_join(s.w.ws, ".git/config");
	const char *before, *id, *out, *err, *env = h_fmt(GIT_ENV, home);
	struct h_proc p;

	host(&g, s.w.ws, REPO_INIT);
	before = h_read_file(config, NULL);
	H_PADDOCK(&p, s.w.ws, "run", "--detach", "--policy", h_allowlist_policy(s.w.base),
		  weak ? "--weaken" : "--cwd", weak ? "exec-plain-seccomp" : s.w.ws, "--", "sleep",
		  "300");
	cr_assert_eq(p.status, 0, H_SHOW(&p));
	id = h_fmt("%.12s", p.out_text);
	H_PADDOCK(&p, s.w.ws, "exec", id, "--", "sh", "-c",
		  h_fmt("%s echo b > b && git add b && git commit -qm second; echo commit=$?; "
			"git config user.name planted; echo config=$?",
			env));
	out = p.out_text;
	err = p.err_text;
	H_PADDOCK(&p, s.w.ws, "stop", "--grace", "0s", id);
	cr_assert_eq(p.status, 0, H_SHOW(&p));
	cr_assert_str_eq(h_read_file(config, NULL), before, "the git config changed");
	cr_assert(!h_contains(out, "config=0\n"), "%s%s", out, err);
	if (weak) {
		cr_assert(!h_contains(out, "commit=0\n"), "%s%s", out, err);
		cr_assert(h_contains(err, "Read-only file system"), "%s%s", out, err);
		cr_assert_str_eq(host(&g, s.w.ws, "git log --format=%s"), "init\n");
		return;
	}
	cr_assert(h_contains(out, "commit=0\n"), "%s%s", out, err);
	cr_assert(h_contains(err, h_fmt("paddock: %s is protected by paddock (policy protect_git "
					"\"allowlist\"",
					config)),
		  "%s%s", out, err);
	cr_assert_str_eq(host(&g, s.w.ws, "git log --format=%s"), "second\ninit\n");
	cr_assert_str_eq(host(&g, s.w.ws, "git status --porcelain"), "");
	cr_assert_str_eq(host(&g, s.w.ws, "git fsck --no-progress 2>&1; echo fsck=$?"), "fsck=0\n");
}

Test(git_inside, exec_git_commits_under_the_allowlist_and_config_is_refused)
{
	exec_git(false);
}

Test(git_inside, exec_git_commits_under_the_allowlist_weakened_twin)
{
	exec_git(true);
}
