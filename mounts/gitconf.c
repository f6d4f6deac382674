/* Readers of git's own files, for the supervisor, which must never run git
 * on a repository the workload could write (a planted core.fsmonitor would
 * run as the caller): git config files, .git files ("gitdir: PATH") and
 * commondir. Pure; fuzzed (tests/fuzz/fuzz_git.c). The config grammar is
 * git-config(1) "CONFIGURATION FILE"; where this reader and git could
 * disagree it refuses (-EINVAL), and the caller reports the file as
 * suspect rather than trusting a partial reading. */
#include "git.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>

#define NAME_MAX_LEN 256
#define VALUE_MAX    4096

struct cursor {
	const char *p, *end;
};

static int peek(const struct cursor *c)
{
	return c->p < c->end ? (unsigned char)*c->p : -1;
}

static void skip_blank(struct cursor *c)
{
	while (c->p < c->end && (*c->p == ' ' || *c->p == '\t' || *c->p == '\r'))
		c->p++;
}

static void skip_line(struct cursor *c)
{
	while (c->p < c->end && *c->p != '\n')
		c->p++;
	if (c->p < c->end)
		c->p++;
}

/* "[name]", "[name \"sub\"]" or the old "[name.sub]" (sub lower-cased). */
static int parse_section(struct cursor *c, char *sec, char *sub, bool *has_sub)
{
	size_t n = 0, m = 0;

	c->p++; /* '[' */
	*has_sub = false;
	while (c->p < c->end && (isalnum((unsigned char)*c->p) || *c->p == '-' || *c->p == '.')) {
		if (n + 1 >= NAME_MAX_LEN)
			return -EINVAL;
		sec[n++] = (char)tolower((unsigned char)*c->p++);
	}
	sec[n] = '\0';
	if (n == 0)
		return -EINVAL;
	if (peek(c) == ' ' || peek(c) == '\t') {
		if (strchr(sec, '.'))
			return -EINVAL;
		skip_blank(c);
		if (peek(c) != '"')
			return -EINVAL;
		c->p++;
		for (;;) {
			int ch = peek(c);

			if (ch < 0 || ch == '\n' || ch == '\0')
				return -EINVAL;
			c->p++;
			if (ch == '"')
				break;
			if (ch == '\\') {
				ch = peek(c);
				if (ch < 0 || ch == '\n' || ch == '\0')
					return -EINVAL;
				c->p++;
			}
			if (m + 1 >= NAME_MAX_LEN)
				return -EINVAL;
			sub[m++] = (char)ch;
		}
		sub[m] = '\0';
		*has_sub = true;
	} else {
		char *dot = strchr(sec, '.');

		if (dot) {
			/* [a.b.c]: section a, subsection "b.c". */
			snprintf(sub, NAME_MAX_LEN, "%s", dot + 1);
			*dot = '\0';
			if (!sec[0] || !sub[0])
				return -EINVAL;
			*has_sub = true;
		}
	}
	if (peek(c) != ']')
		return -EINVAL;
	c->p++;
	return 0;
}

/* The value after '=': quotes, escapes, backslash-newline, comments. */
static int parse_value(struct cursor *c, char *out)
{
	bool quoted = false;
	size_t n = 0, keep = 0; /* keep: length without trailing blanks */

	skip_blank(c);
	for (;;) {
		int ch = peek(c);

		if (ch < 0 || ch == '\n') {
			if (quoted)
				return -EINVAL;
			if (ch == '\n')
				c->p++;
			break;
		}
		if (ch == '\0')
			return -EINVAL;
		c->p++;
		if (!quoted && (ch == '#' || ch == ';')) {
			skip_line(c);
			break;
		}
		if (ch == '"') {
			quoted = !quoted;
			keep = n;
			continue;
		}
		if (ch == '\\') {
			ch = peek(c);
			if (ch < 0)
				return -EINVAL;
			c->p++;
			if (ch == '\n')
				continue;
			if (ch == '\r' && peek(c) == '\n') {
				c->p++;
				continue;
			}
			switch (ch) {
			case 'n':
				ch = '\n';
				break;
			case 't':
				ch = '\t';
				break;
			case 'b':
				ch = '\b';
				break;
			case '"':
			case '\\':
				break;
			default:
				return -EINVAL;
			}
			if (n + 1 >= VALUE_MAX)
				return -EINVAL;
			out[n++] = (char)ch;
			keep = n;
			continue;
		}
		if (n + 1 >= VALUE_MAX)
			return -EINVAL;
		out[n++] = (char)ch;
		if (quoted || (ch != ' ' && ch != '\t' && ch != '\r'))
			keep = n;
	}
	out[keep] = '\0';
	return 0;
}

int gitconf_parse(const char *buf, size_t len, gitconf_cb cb, void *arg)
{
	struct cursor c = {buf, buf + len};
	char sec[NAME_MAX_LEN] = "", sub[NAME_MAX_LEN] = "", key[NAME_MAX_LEN];
	char value[VALUE_MAX];
	bool in_section = false, has_sub = false;
	int count = 0;

	if (len > GITCONF_MAX)
		return -E2BIG;
	/* A UTF-8 byte order mark is skipped, as git does. */
	if (len >= 3 && memcmp(buf, "\xef\xbb\xbf", 3) == 0)
		c.p += 3;
	while (c.p < c.end) {
		int ch, r;
		size_t n = 0;
		bool bare;

		skip_blank(&c);
		ch = peek(&c);
		if (ch < 0)
			break;
		if (ch == '\n' || ch == '#' || ch == ';') {
			skip_line(&c);
			continue;
		}
		if (ch == '[') {
			r = parse_section(&c, sec, sub, &has_sub);
			if (r < 0)
				return r;
			in_section = true;
			continue; /* a variable may follow on the same line */
		}
		if (!isalpha(ch) || !in_section)
			return -EINVAL;
		while (c.p < c.end && (isalnum((unsigned char)*c.p) || *c.p == '-')) {
			if (n + 1 >= NAME_MAX_LEN)
				return -EINVAL;
			key[n++] = (char)tolower((unsigned char)*c.p++);
		}
		key[n] = '\0';
		skip_blank(&c);
		ch = peek(&c);
		bare = ch != '=';
		if (bare) {
			if (ch >= 0 && ch != '\n' && ch != '#' && ch != ';')
				return -EINVAL;
			skip_line(&c);
		} else {
			c.p++;
			r = parse_value(&c, value);
			if (r < 0)
				return r;
		}
		count++;
		if (cb && cb(sec, has_sub ? sub : NULL, key, bare ? NULL : value, arg))
			break;
	}
	return count;
}

static bool starts_bang(const char *v)
{
	return v && v[0] == '!';
}

bool gitconf_runs_code(const char *section, const char *sub, const char *key, const char *value)
{
	/* section, key; "*" for any subsection, "" for none. */
	static const char *const table[][3] = {
	    {"core", "", "fsmonitor"},
	    {"core", "", "hookspath"},
	    {"core", "", "sshcommand"},
	    {"core", "", "editor"},
	    {"core", "", "pager"},
	    {"core", "", "askpass"},
	    {"core", "", "gitproxy"},
	    {"core", "", "alternaterefscommand"},
	    {"core", "", "worktree"},
	    {"sequence", "", "editor"},
	    {"diff", "", "external"},
	    {"diff", "*", "textconv"},
	    {"diff", "*", "command"},
	    {"filter", "*", "clean"},
	    {"filter", "*", "smudge"},
	    {"filter", "*", "process"},
	    {"merge", "*", "driver"},
	    {"include", "", "path"},
	    {"includeif", "*", "path"},
	    {"credential", "", "helper"},
	    {"credential", "*", "helper"},
	    {"gpg", "", "program"},
	    {"gpg", "*", "program"},
	    {"uploadpack", "", "packobjectshook"},
	    {"interactive", "", "difffilter"},
	    {"remote", "*", "uploadpack"},
	    {"remote", "*", "receivepack"},
	    {"remote", "*", "vcs"},
	    {"url", "*", "insteadof"},
	    {"url", "*", "pushinsteadof"},
	    {"protocol", "", "allow"},
	    {"protocol", "*", "allow"},
	    {"difftool", "*", "cmd"},
	    {"mergetool", "*", "cmd"},
	    {"web", "", "browser"},
	    {"browser", "*", "cmd"},
	    {"browser", "*", "path"},
	    {"man", "*", "cmd"},
	    {"man", "*", "path"},
	    {"hook", "*", "command"},
	    {"sendemail", "", "smtpserver"},
	    {"sendemail", "", "tocmd"},
	    {"sendemail", "", "cccmd"},
	    {"extensions", "", "worktreeconfig"},
	    {"safe", "", "directory"},
	};

	if (strcmp(section, "alias") == 0)
		return starts_bang(value);
	if (strcmp(section, "submodule") == 0 && sub && strcmp(key, "update") == 0)
		return starts_bang(value);
	/* pager.<command> = a program, unless a boolean. */
	if (strcmp(section, "pager") == 0 && !sub)
		return value && strcmp(value, "true") != 0 && strcmp(value, "false") != 0 &&
		       strcmp(value, "0") != 0 && strcmp(value, "1") != 0;
	for (size_t i = 0; i < sizeof(table) / sizeof(table[0]); i++) {
		if (strcmp(section, table[i][0]) != 0 || strcmp(key, table[i][2]) != 0)
			continue;
		if (table[i][1][0] == '*' ? sub != NULL : sub == NULL)
			return true;
	}
	return false;
}

/* The entries git itself makes at the top of a git directory (common,
 * worktree or submodule one): gitrepository-layout(5), the state files of
 * git-rebase(1), git-bisect(1), git-merge(1), git-notes(1), git-stash(1),
 * git-gc(1) and git-fsmonitor--daemon(1), and the directories of git-lfs
 * and git-svn. */
bool git_name_known(const char *name)
{
	static const char *const names[] = {"objects",
					    "refs",
					    "packed-refs",
					    "index",
					    "logs",
					    "hooks",
					    "info",
					    "config",
					    "config.worktree",
					    "commondir",
					    "gitdir",
					    "locked",
					    "description",
					    "branches",
					    "remotes",
					    "rr-cache",
					    "modules",
					    "worktrees",
					    "shallow",
					    "lost-found",
					    "rebase-merge",
					    "rebase-apply",
					    "sequencer",
					    "gc.pid",
					    "gc.log",
					    "COMMIT_EDITMSG",
					    "fsmonitor--daemon",
					    "fsmonitor--daemon.ipc",
					    "reftable",
					    "lfs",
					    "svn",
					    "prune-lock",
					    "gitk.cache"};
	size_t n = strlen(name);

	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (strcmp(name, names[i]) == 0)
			return true;
	/* A lock (X.lock) beside what it locks, git's temporary files
	 * (git-stash's index.stash.PID, sharedindex.*, next-index-*), and the
	 * upper-case pseudo-refs and state files (ORIG_HEAD, MERGE_MSG,
	 * BISECT_LOG, AUTO_MERGE, TAG_EDITMSG, ...): data that git reads as
	 * refs or messages, never as configuration. */
	if (n > 5 && strcmp(name + n - 5, ".lock") == 0)
		return true;
	if (!strncmp(name, "index.", 6) || !strncmp(name, "sharedindex.", 12) ||
	    !strncmp(name, "next-index-", 11))
		return true;
	if (!n)
		return false;
	for (size_t i = 0; i < n; i++)
		if (!((name[i] >= 'A' && name[i] <= 'Z') || name[i] == '_' ||
		      (name[i] >= '0' && name[i] <= '9')))
			return false;
	return true;
}

static int copy_path(const char *s, size_t n, char *out, size_t size)
{
	while (n && (s[n - 1] == '\n' || s[n - 1] == '\r' || s[n - 1] == ' ' || s[n - 1] == '\t'))
		n--;
	if (n == 0 || memchr(s, '\0', n) || memchr(s, '\n', n))
		return -EINVAL;
	if (n >= size)
		return -ENAMETOOLONG;
	memcpy(out, s, n);
	out[n] = '\0';
	return 0;
}

int gitfile_parse(const char *buf, size_t len, char *out, size_t size)
{
	if (len < 8 || memcmp(buf, "gitdir: ", 8) != 0)
		return -EINVAL;
	return copy_path(buf + 8, len - 8, out, size);
}

int gitcommondir_parse(const char *buf, size_t len, char *out, size_t size)
{
	return copy_path(buf, len, out, size);
}
