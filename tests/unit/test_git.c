/* mounts/gitconf.c: the readers of git's files the supervisor uses after a
 * run (it never runs git on a workspace). */
#include "../../mounts/git.h"

#include <limits.h>
#include <stdio.h>
#include <string.h>

#include <criterion/criterion.h>

#include "unit.h"

TestSuite(git, .fini = unit_leak_check);

struct seen {
	char lines[16][300];
	size_t n, code;
};

static int collect(const char *section, const char *sub, const char *key, const char *value,
		   void *arg)
{
	struct seen *s = arg;

	if (s->n < 16)
		snprintf(s->lines[s->n++], sizeof(s->lines[0]), "%s|%s|%s|%s", section,
			 sub ? sub : "-", key, value ? value : "(bare)");
	s->code += gitconf_runs_code(section, sub, key, value);
	return 0;
}

static struct seen parse(const char *text, int expect)
{
	struct seen s = {0};
	int r = gitconf_parse(text, strlen(text), collect, &s);

	cr_assert_eq(r, expect, "%s: %d", text, r);
	return s;
}

Test(git, config_sections_values_and_code_keys)
{
	struct seen s = parse("# c\n[core]\n\tbare = false\n\tFSMonitor = \"touch /tmp/x\" ; c\n"
			      "[alias]\n\tst = status\n\tx = !sh -c \\\n  'id'\n"
			      "[diff \"pdf\"]\n\ttextconv = pdftotext\n"
			      "[remote.Origin] url = /r\n[user] name\n",
			      7);

	cr_expect_str_eq(s.lines[0], "core|-|bare|false");
	cr_expect_str_eq(s.lines[1], "core|-|fsmonitor|touch /tmp/x");
	cr_expect_str_eq(s.lines[2], "alias|-|st|status");
	cr_expect_str_eq(s.lines[3], "alias|-|x|!sh -c   'id'");
	cr_expect_str_eq(s.lines[4], "diff|pdf|textconv|pdftotext");
	/* The old [a.b] form lower-cases its subsection, as git does. */
	cr_expect_str_eq(s.lines[5], "remote|origin|url|/r");
	cr_expect_str_eq(s.lines[6], "user|-|name|(bare)");
	cr_expect_eq(s.code, 3); /* fsmonitor, alias with !, textconv */
}

Test(git, code_keys_table)
{
	cr_expect(gitconf_runs_code("core", NULL, "hookspath", "/x"));
	cr_expect(gitconf_runs_code("include", NULL, "path", "x"));
	cr_expect(gitconf_runs_code("includeif", "gitdir:/x", "path", "x"));
	cr_expect(gitconf_runs_code("filter", "lfs", "smudge", "x"));
	cr_expect(gitconf_runs_code("extensions", NULL, "worktreeconfig", "true"));
	cr_expect(gitconf_runs_code("submodule", "s", "update", "!x"));
	cr_expect_not(gitconf_runs_code("submodule", "s", "update", "checkout"));
	cr_expect_not(gitconf_runs_code("alias", NULL, "st", "status"));
	cr_expect_not(gitconf_runs_code("core", NULL, "bare", "false"));
	cr_expect_not(gitconf_runs_code("diff", NULL, "textconv", "x")); /* needs a driver */
	cr_expect_not(gitconf_runs_code("pager", NULL, "log", "false"));
	cr_expect(gitconf_runs_code("pager", NULL, "log", "sh -c id"));
}

Test(git, names_git_makes)
{
	static const char *const known[] = {
	    "objects",	   "refs",	     "HEAD",	   "ORIG_HEAD",	     "MERGE_MSG",
	    "AUTO_MERGE",  "index",	     "index.lock", "index.stash.42", "config",
	    "hooks",	   "rebase-merge",   "sequencer",  "modules",	     "worktrees",
	    "packed-refs", "COMMIT_EDITMSG", "x.lock"};
	static const char *const unknown[] = {"config.d", "hooksdir", "Config", "head",
					      ".lock",	  "",	      "evil",	"config~",
					      "HEAD-x",	  "info.d",   "lfsx",	"a.lock.x"};

	for (size_t i = 0; i < sizeof(known) / sizeof(known[0]); i++)
		cr_expect(git_name_known(known[i]), "%s", known[i]);
	for (size_t i = 0; i < sizeof(unknown) / sizeof(unknown[0]); i++)
		cr_expect_not(git_name_known(unknown[i]), "%s", unknown[i]);
}

Test(git, config_refused)
{
	static const char *const bad[] = {
	    "[core\n",	      "k = v\n",      "[core]\n\t1k = v\n", "[x]\nk = \"open\n",
	    "[x]\nk = \\q\n", "[x \"a\" ]\n", "[x]\nk v\n",	    "[x]\nk = a\\",
	};

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		cr_expect_eq(gitconf_parse(bad[i], strlen(bad[i]), NULL, NULL), -EINVAL, "%s",
			     bad[i]);
	cr_expect_eq(gitconf_parse("[x]\nk = a\0b\n", 12, NULL, NULL), -EINVAL);
	cr_expect_eq(gitconf_parse("", GITCONF_MAX + 1, NULL, NULL), -E2BIG);
}

Test(git, gitfile_and_commondir)
{
	char out[PATH_MAX];

	cr_expect_eq(gitfile_parse("gitdir: ../.git/worktrees/w\n", 28, out, sizeof(out)), 0);
	cr_expect_str_eq(out, "../.git/worktrees/w");
	cr_expect_eq(gitfile_parse("gitdir:x\n", 9, out, sizeof(out)), -EINVAL);
	cr_expect_eq(gitfile_parse("gitdir: \n", 9, out, sizeof(out)), -EINVAL);
	cr_expect_eq(gitfile_parse("gitdir: abc", 11, out, 3), -ENAMETOOLONG);
	cr_expect_eq(gitcommondir_parse("../..\n", 6, out, sizeof(out)), 0);
	cr_expect_str_eq(out, "../..");
	cr_expect_eq(gitcommondir_parse("a\nb", 3, out, sizeof(out)), -EINVAL);
}

/* ------------------------------------------ the allowlist (gitallow.c) */

Test(git, allowlist_what_git_writes)
{
	static const char *const files[] = {
	    "index",
	    "index.lock",
	    "HEAD.lock",
	    "ORIG_HEAD",
	    "FETCH_HEAD",
	    "MERGE_MSG",
	    "AUTO_MERGE",
	    "COMMIT_EDITMSG",
	    "packed-refs",
	    "packed-refs.lock",
	    "packed-refs.new",
	    "shallow.lock",
	    "gc.pid",
	    "gc.log",
	    "index.stash.42",
	    "config.lock",
	    "refs/heads/x",
	    "logs/HEAD",
	    "objects/ab/cdef",
	    "rebase-merge/done",
	    "sequencer/todo",
	    "info/refs",
	    "info/refs_Ab12Cd",
	    "worktrees/w/HEAD",
	    "worktrees/w/index.lock",
	    "worktrees/w/gitdir",
	    "worktrees/w/logs/HEAD",
	    "worktrees/w/locked",
	};
	static const char *const dirs[] = {"refs/heads/a",    "rebase-merge", "sequencer",
					   "worktrees",	      "worktrees/w",  "worktrees/w/refs",
					   "logs/refs/heads", "info"};

	for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
		cr_expect_eq(gitallow_check(files[i], GITALLOW_FILE), GITALLOW_YES, "%s", files[i]);
		cr_expect_eq(gitallow_check(files[i], GITALLOW_RENAME), GITALLOW_YES, "%s",
			     files[i]);
		cr_expect_eq(gitallow_check(files[i], GITALLOW_REMOVE), GITALLOW_YES, "%s",
			     files[i]);
	}
	for (size_t i = 0; i < sizeof(dirs) / sizeof(dirs[0]); i++)
		cr_expect_eq(gitallow_check(dirs[i], GITALLOW_MKDIR), GITALLOW_YES, "%s", dirs[i]);
	cr_expect_eq(gitallow_check("worktrees/w/commondir", GITALLOW_FILE), GITALLOW_COMMONDIR);
	cr_expect_eq(gitallow_check("worktrees/w/commondir", GITALLOW_REMOVE), GITALLOW_YES);
	cr_expect_eq(gitallow_check("info/rev-cache", GITALLOW_REMOVE), GITALLOW_YES);
}

Test(git, allowlist_refuses_what_runs_code_or_redirects)
{
	static const char *const no[] = {
	    "config",
	    "config.worktree",
	    "config.worktree.lock",
	    "commondir",
	    "commondir.lock",
	    "hooks",
	    "hooks/pre-commit",
	    "info/exclude",
	    "info/attributes",
	    "info/sparse-checkout",
	    "info/grafts",
	    "modules/s/config",
	    "modules",
	    "remotes/origin",
	    "branches/x",
	    "gitdir",
	    "config.d/x",
	    "newname",
	    "worktrees/w/config.worktree",
	    "worktrees/w/commondir.lock",
	    "worktrees/w/hooks/x",
	    "worktrees/w/x/y",
	    "worktrees/w/newname",
	    "../config",
	    "refs/../config",
	    "./config",
	    "",
	    "/config",
	    "refs//x",
	    "objects",
	    "fsmonitor--daemon.ipc",
	};
	static const enum gitallow_op ops[] = {GITALLOW_FILE, GITALLOW_RENAME};

	for (size_t i = 0; i < sizeof(no) / sizeof(no[0]); i++)
		for (size_t k = 0; k < 2; k++)
			cr_expect_eq(gitallow_check(no[i], ops[k]), GITALLOW_NO, "%s op %d", no[i],
				     (int)ops[k]);
	/* Directories: not where git makes none, not for a file name. */
	cr_expect_eq(gitallow_check("hooks", GITALLOW_MKDIR), GITALLOW_NO);
	cr_expect_eq(gitallow_check("config.d", GITALLOW_MKDIR), GITALLOW_NO);
	cr_expect_eq(gitallow_check("index", GITALLOW_MKDIR), GITALLOW_NO);
	cr_expect_eq(gitallow_check("info/x", GITALLOW_MKDIR), GITALLOW_NO);
	cr_expect_eq(gitallow_check("worktrees/w/commondir", GITALLOW_RENAME), GITALLOW_NO);
	cr_expect_eq(gitallow_check("info/rev-cache", GITALLOW_FILE), GITALLOW_NO);
	cr_expect_eq(gitallow_check(NULL, GITALLOW_FILE), GITALLOW_NO);
}
