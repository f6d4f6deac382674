/* Git-aware protection, supervisor side (docs/security.md, "Protected
 * paths"). At start: find the git directories of the repository that
 * contains a protected root (walk up, follow a .git file and commondir, as
 * git does: gitrepository-layout(5)) and of every repository, submodule and
 * worktree below it (a bounded walk), and turn each into protected names:
 * the files that make git run code or read configuration from elsewhere.
 * After the run: read those directories' config files again, never running
 * git, and report what could run code that was not there at start. */
#include "git.h"

#include "git_walk.h"

#include <dirent.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../include/cleanup.h"
#include "../include/sys.h"

/* The names in a git directory that run code or redirect git: its config
 * (and the per-worktree one), a redirect of everything common (commondir),
 * the hooks, and info/ (exclude, attributes, grafts, sparse-checkout: what
 * git reads from there decides which filter drivers apply). A linked
 * worktree's own directory holds only config.worktree and commondir of
 * these; git reads the rest from the common directory. */
static const char *const common_names[] = {"config", "config.worktree", "commondir", "hooks",
					   "info"};
static const char *const worktree_names[] = {"config.worktree", "commondir"};

/* ------------------------------------------------ policy paths and binds */

/* The innermost bind whose target contains a sandbox path. */
static const struct policy_mount *bind_of_target(const struct policy *p, const char *path)
{
	const struct policy_mount *best = NULL;
	size_t best_len = 0;

	for (size_t i = 0; i < p->n_mounts; i++) {
		size_t n;

		if (p->mounts[i].type != POLICY_MOUNT_BIND)
			continue;
		n = git_under(path, p->mounts[i].target);
		if (n && n >= best_len) {
			best = &p->mounts[i];
			best_len = n;
		}
	}
	return best;
}

/* The sandbox path of a host path through a writable bind, malloc'd, or
 * NULL when no writable bind shows it. */
static char *sandbox_path(const struct policy *p, const char *host)
{
	for (size_t i = p->n_mounts; i-- > 0;) {
		const struct policy_mount *m = &p->mounts[i];
		size_t n;
		char *out;

		if (m->type != POLICY_MOUNT_BIND || m->readonly || !m->source)
			continue;
		n = git_under(host, m->source);
		if (!n)
			continue;
		if (asprintf(&out, "%s%s", m->target, host + n) < 0)
			return NULL;
		return out;
	}
	return NULL;
}

static bool seen_readonly(const struct policy *p, const char *host)
{
	for (size_t i = 0; i < p->n_mounts; i++)
		if (p->mounts[i].type == POLICY_MOUNT_BIND && p->mounts[i].source &&
		    git_under(host, p->mounts[i].source))
			return true;
	return false;
}

/* A git directory no bind shows: bound writable at its own host path. */
static int add_bind(struct policy *p, const char *host)
{
	struct policy_mount *grown = realloc(p->mounts, (p->n_mounts + 1) * sizeof(*grown));
	struct policy_mount *m;

	if (!grown)
		return -ENOMEM;
	p->mounts = grown;
	m = &p->mounts[p->n_mounts];
	memset(m, 0, sizeof(*m));
	m->type = POLICY_MOUNT_BIND;
	m->index = p->n_mounts;
	m->source = strdup(host);
	m->target = strdup(host);
	if (!m->source || !m->target) {
		free(m->source);
		free(m->target);
		return -ENOMEM;
	}
	p->n_mounts++;
	return 0;
}

static int add_protect(struct policy *p, struct strv *out, const char *sandbox)
{
	for (size_t i = 0; i < p->n_protect; i++)
		if (p->protect[i] && strcmp(p->protect[i], sandbox) == 0)
			return 0;
	return git_strv_add(out, sandbox);
}

/* The sandbox path of a git directory, malloc'd in *out; NULL when it is
 * seen read-only (nothing to protect) or not at all and missing: a
 * workspace's repository outside every bind becomes visible, writable, so
 * that git works inside. One that does not exist (a commondir naming a
 * missing directory) the workload cannot create outside its binds. */
static int git_dir_sandbox(struct policy *p, const char *host, char **out)
{
	int r;

	*out = sandbox_path(p, host);
	if (*out)
		return 0;
	if (seen_readonly(p, host) || access(host, F_OK) < 0)
		return 0;
	r = add_bind(p, host);
	if (r < 0)
		return r;
	*out = sandbox_path(p, host);
	return *out ? 0 : -ENOMEM;
}

static int protect_names(struct policy *p, struct strv *out, const char *host,
			 const char *const *names, size_t n)
{
	cleanup_free char *sb = NULL;
	char path[PATH_MAX];
	int r = git_dir_sandbox(p, host, &sb);

	if (r < 0 || !sb)
		return r;
	for (size_t i = 0; i < n; i++) {
		if (snprintf(path, sizeof(path), "%s/%s", sb, names[i]) >= (int)sizeof(path))
			return -ENAMETOOLONG;
		r = add_protect(p, out, path);
		if (r < 0)
			return r;
	}
	return 0;
}

/* protect_git "allowlist": the whole git directory read-only (a PROTECT
 * of the directory itself), its data directories writable again on top,
 * and the directory on the supervisor's list of those whose changes it
 * makes itself when git's allowlist says yes (launcher/supervisor/
 * gitallow.c). One inside another (a submodule's in modules/, a linked
 * worktree's in worktrees/) is an entry of its own: the supervisor goes by
 * the nearest. */
static int protect_allowlist(struct policy *p, struct strv *out, struct git_watch *w,
			     const char *host)
{
	static const char *const data[] = {"objects", "refs", "logs"};
	struct strv rw = {.v = p->protect_rw, .n = p->n_protect_rw, .cap = p->n_protect_rw};
	struct strv hosts = {.v = w->allow, .n = w->n_allow, .cap = w->n_allow};
	struct strv sbs = {.v = w->allow_sb, .n = w->n_allow, .cap = w->n_allow};
	cleanup_free char *sb = NULL;
	char path[PATH_MAX];
	int r;

	const struct policy_mount *b;

	r = git_dir_sandbox(p, host, &sb);
	if (r < 0 || !sb)
		return r;
	/* A git directory that is a bind of its own (outside the workspace,
	 * bound so that git works: git_dir_sandbox()) is remounted read-only
	 * on itself: a protected path cannot be a whole bind, and the bind
	 * stays writable below (a root caller's is idmapped, and the
	 * supervisor goes by what the caller's mount shows). */
	b = bind_of_target(p, sb);
	/* One that does not exist (a commondir naming a missing directory):
	 * its placeholder keeps it from being made, and there is nothing
	 * for git to write. */
	if (access(host, F_OK) < 0)
		return add_protect(p, out, sb);
	if (b && strcmp(b->target, sb) == 0) {
		struct strv ro = {.v = p->protect_ro, .n = p->n_protect_ro, .cap = p->n_protect_ro};

		r = git_strv_add(&ro, sb);
		p->protect_ro = ro.v;
		p->n_protect_ro = ro.n;
	} else {
		r = add_protect(p, out, sb);
	}
	for (size_t i = 0; r >= 0 && i < sizeof(data) / sizeof(data[0]); i++) {
		struct stat st;

		snprintf(path, sizeof(path), "%s/%s", host, data[i]);
		if (lstat(path, &st) < 0 || !S_ISDIR(st.st_mode))
			continue;
		if (snprintf(path, sizeof(path), "%s/%s", sb, data[i]) >= (int)sizeof(path))
			return -ENAMETOOLONG;
		r = git_strv_add(&rw, path);
	}
	p->protect_rw = rw.v;
	p->n_protect_rw = rw.n;
	if (r >= 0)
		r = git_strv_add(&hosts, host);
	w->allow = hosts.v;
	if (r > 0) {
		r = git_strv_add(&sbs, sb);
		if (r == 0) /* two git directories at one sandbox path: cannot be */
			r = -EEXIST;
	}
	w->allow_sb = sbs.v;
	w->n_allow = hosts.n;
	return r;
}

/* One "**" entry: prefix (sandbox) and the rest after "/STAR-STAR/". */
/* The "**" entries of one prefix, names[] their rests: one walk for all. */
static int expand_prefix(struct policy *p, const char *prefix, const char *const *names,
			 size_t n_names, struct strv *out, struct git_watch *w, bool *bounded,
			 struct err *err)
{
	const char *others[64];
	size_t n_others = 0;
	const struct policy_mount *b;
	cleanup_free char *host = NULL;
	struct git_found f = {.no_git = true};
	struct strv hits = {0};
	struct stat st;
	int r;

	for (size_t i = 0; i < n_names; i++) {
		if (strcmp(names[i], ".git") == 0)
			f.no_git = false;
		else if (n_others < sizeof(others) / sizeof(others[0]))
			others[n_others++] = names[i];
		else
			return -E2BIG;
	}
	b = bind_of_target(p, prefix);
	if (!b || asprintf(&host, "%s%s", b->source, prefix + strlen(b->target)) < 0) {
		host = NULL;
		return b ? -ENOMEM : 0;
	}
	if (stat(host, &st) < 0 || !S_ISDIR(st.st_mode))
		return 0; /* an optional bind that is not there */
	r = f.no_git ? 0 : git_walk_up(&f, host);
	if (r >= 0)
		r = git_walk(&f, host, st.st_dev, 0, others, n_others, &hits);
	if (!f.no_git && p->protect_git == POLICY_PROTECT_GIT_ALLOWLIST) {
		for (size_t i = 0; r >= 0 && i < f.common.n + f.worktree.n; i++)
			r = protect_allowlist(p, out, w,
					      i < f.common.n ? f.common.v[i]
							     : f.worktree.v[i - f.common.n]);
	} else if (!f.no_git) {
		for (size_t i = 0; r >= 0 && i < f.common.n; i++)
			r = protect_names(p, out, f.common.v[i], common_names,
					  sizeof(common_names) / sizeof(common_names[0]));
		for (size_t i = 0; r >= 0 && i < f.worktree.n; i++)
			r = protect_names(p, out, f.worktree.v[i], worktree_names,
					  sizeof(worktree_names) / sizeof(worktree_names[0]));
	}
	if (!f.no_git) {
		for (size_t i = 0; r >= 0 && i < f.gitfiles.n; i++) {
			cleanup_free char *sb = sandbox_path(p, f.gitfiles.v[i]);

			if (sb)
				r = add_protect(p, out, sb);
		}
		/* For the check after the run. */
		for (size_t i = 0; r >= 0 && i < f.common.n + f.worktree.n; i++) {
			const char *d =
			    i < f.common.n ? f.common.v[i] : f.worktree.v[i - f.common.n];
			struct strv dirs = {.v = w->dirs, .n = w->n_dirs, .cap = w->n_dirs};

			r = git_strv_add(&dirs, d);
			w->dirs = dirs.v;
			w->n_dirs = dirs.n;
		}
		if (r >= 0) {
			struct strv roots = {.v = w->roots, .n = w->n_roots, .cap = w->n_roots};

			r = git_strv_add(&roots, host);
			w->roots = roots.v;
			w->n_roots = roots.n;
		}
	}
	for (size_t i = 0; r >= 0 && i < hits.n; i++) {
		cleanup_free char *sb = sandbox_path(p, hits.v[i]);

		if (sb)
			r = add_protect(p, out, sb);
	}
	*bounded |= f.bounded;
	if (r == -ELOOP && f.symlink[0])
		r = err_set(err, ELOOP, "protect: %s is a symlink; refusing to protect through it",
			    f.symlink);
	git_found_free(&f);
	git_strv_free(&hits);
	return r < 0 ? r : 0;
}

/* -------------------------------------------------- config, now and then */

struct scan {
	const char *dir, *file;
	struct strv *lines;
	int r;
};

static int scan_var(const char *section, const char *sub, const char *key, const char *value,
		    void *arg)
{
	struct scan *s = arg;
	char line[PATH_MAX + 600];

	if (!gitconf_runs_code(section, sub, key, value))
		return 0;
	snprintf(line, sizeof(line), "%s\t%s\t%s%s%s.%s=%.200s", s->dir, s->file, section,
		 sub ? "." : "", sub ? sub : "", key, value ? value : "(true)");
	s->r = git_strv_add(s->lines, line);
	return s->r < 0;
}

/* The code-running variables of dir's config files (and, for a finding,
 * every hook that is not a sample), one line each into lines. */
static int scan_dir(const char *dir, struct strv *lines, bool hooks)
{
	static const char *const files[] = {"config", "config.worktree"};
	cleanup_close int fd = open(dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
	cleanup_free char *buf = malloc(GITCONF_MAX + 1);
	struct scan s = {.dir = dir, .lines = lines};
	char line[PATH_MAX + 300];

	if (!buf)
		return -ENOMEM;
	if (fd < 0)
		return 0;
	for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
		ssize_t n = git_read_small(fd, files[i], buf, GITCONF_MAX);

		if (n == -ENOENT)
			continue;
		s.file = files[i];
		if (n < 0 || gitconf_parse(buf, (size_t)n, scan_var, &s) < 0) {
			/* Unreadable to us is no proof of harmless to git. */
			snprintf(line, sizeof(line), "%s\t%s\tunreadable or not a config file", dir,
				 files[i]);
			s.r = git_strv_add(lines, line);
		}
		if (s.r < 0)
			return s.r;
	}
	if (hooks) {
		char path[PATH_MAX];
		DIR *d;
		struct dirent *e;

		snprintf(path, sizeof(path), "%s/hooks", dir);
		d = opendir(path);
		while (d && (e = readdir(d))) {
			size_t len = strlen(e->d_name);

			if (e->d_name[0] == '.' ||
			    (len > 7 && !strcmp(e->d_name + len - 7, ".sample")))
				continue;
			snprintf(line, sizeof(line), "%s\thooks\t%s", dir, e->d_name);
			if (git_strv_add(lines, line) < 0) {
				closedir(d);
				return -ENOMEM;
			}
		}
		if (d)
			closedir(d);
	}
	return 0;
}

/* The allowlist, as a check: every entry at the top of dir that git does
 * not make itself (git_name_known()), one line each. Read at start too, so
 * that only what appeared during the run is reported: a name a future git
 * (or a tool) may read from a git directory cannot be kept from being made
 * while git works (docs/security.md, "The git directory as an
 * allowlist"), but it is said. */
static int scan_names(const char *dir, struct strv *lines)
{
	char line[PATH_MAX + 300];
	DIR *d = opendir(dir);
	struct dirent *e;
	int r = 0;

	while (d && r >= 0 && (e = readdir(d))) {
		if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, "..") ||
		    git_name_known(e->d_name))
			continue;
		snprintf(line, sizeof(line),
			 "%s\t%s\tnot a name git makes in a git directory (appeared during the "
			 "run; what reads it is unknown)",
			 dir, e->d_name);
		r = git_strv_add(lines, line);
	}
	if (d)
		closedir(d);
	return r;
}

/* The directory a commondir points to, scanned as a new git directory. */
static int scan_redirect(const char *dir, struct strv *lines)
{
	cleanup_close int fd = open(dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
	char buf[PATH_MAX], rel[PATH_MAX];
	cleanup_free char *target = NULL;
	ssize_t n;

	if (fd < 0)
		return 0;
	n = git_read_small(fd, "commondir", buf, sizeof(buf) - 1);
	if (n < 0 || gitcommondir_parse(buf, (size_t)n, rel, sizeof(rel)) < 0)
		return 0;
	target = git_resolve_rel(dir, rel);
	if (!target || strcmp(target, dir) == 0)
		return 0;
	return scan_dir(target, lines, true);
}

/* A commondir that redirects git: one that names the directory itself
 * (".", as a placeholder's reads, another sandbox's among them) does not. */
static bool has_commondir(const char *dir)
{
	cleanup_close int fd = open(dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
	char buf[PATH_MAX], rel[PATH_MAX];
	cleanup_free char *target = NULL;
	ssize_t n;

	if (fd < 0 || fstatat(fd, "commondir", &(struct stat){0}, AT_SYMLINK_NOFOLLOW) < 0)
		return false;
	n = git_read_small(fd, "commondir", buf, sizeof(buf) - 1);
	if (n < 0 || gitcommondir_parse(buf, (size_t)n, rel, sizeof(rel)) < 0)
		return true; /* unreadable to us is no proof of harmless */
	target = git_resolve_rel(dir, rel);
	return !target || strcmp(target, dir) != 0;
}

static int snapshot(struct git_watch *w)
{
	struct strv known = {0};
	int r = 0;

	w->had_cd = calloc(w->n_dirs + 1, sizeof(*w->had_cd));
	if (!w->had_cd)
		return -ENOMEM;
	for (size_t i = 0; r >= 0 && i < w->n_dirs; i++) {
		w->had_cd[i] = has_commondir(w->dirs[i]);
		r = scan_dir(w->dirs[i], &known, false);
		if (r >= 0)
			r = scan_names(w->dirs[i], &known);
	}
	w->known = known.v;
	w->n_known = known.n;
	return r;
}

int git_expand_protect(struct policy *p, struct git_watch *w, char *warn, size_t warn_size,
		       struct err *err)
{
	struct strv out = {0};
	bool bounded = false;
	cleanup_free bool *done = calloc(p->n_protect + 1, sizeof(*done));
	cleanup_free const char **names = calloc(p->n_protect + 1, sizeof(*names));
	int r = done && names ? 0 : -ENOMEM;

	memset(w, 0, sizeof(*w));
	warn[0] = '\0';
	for (size_t i = 0; r >= 0 && i < p->n_protect; i++) {
		const char *star = strstr(p->protect[i], "/**/");
		size_t len = star ? (size_t)(star - p->protect[i]) : 0;
		cleanup_free char *prefix = NULL;
		size_t n = 0;

		if (done[i])
			continue;
		if (!star) {
			r = git_strv_add(&out, p->protect[i]);
			continue;
		}
		/* Every entry of this prefix, walked once. */
		for (size_t k = i; k < p->n_protect; k++) {
			const char *s = strstr(p->protect[k], "/**/");

			if (!done[k] && s && (size_t)(s - p->protect[k]) == len &&
			    strncmp(p->protect[k], p->protect[i], len) == 0) {
				names[n++] = s + 4;
				done[k] = true;
			}
		}
		prefix = strndup(p->protect[i], len);
		r = prefix ? expand_prefix(p, prefix, names, n, &out, w, &bounded, err) : -ENOMEM;
	}
	if (r < 0) {
		git_strv_free(&out);
		return err->code
			   ? r
			   : err_set(err, -r, "protect: finding the git directories and ** names");
	}
	for (size_t i = 0; i < p->n_protect; i++)
		free(p->protect[i]);
	free(p->protect);
	p->protect = out.v;
	p->n_protect = out.n;
	if (bounded)
		snprintf(warn, warn_size,
			 "protect: the walk for ** stopped at %d directories or %d levels; "
			 "deeper repositories and names are not protected",
			 GIT_WALK_DIRS, GIT_WALK_DEPTH);
	r = snapshot(w);
	return r < 0 ? err_set(err, -r, "protect: reading git config files") : 0;
}

static bool known(const struct git_watch *w, const char *line)
{
	for (size_t i = 0; i < w->n_known; i++)
		if (strcmp(w->known[i], line) == 0)
			return true;
	return false;
}

int git_check_after(const struct git_watch *w, char ***out)
{
	struct strv lines = {0}, report = {0};
	struct git_found f = {.after = true};
	int r = 0;

	*out = NULL;
	/* Repositories made during the run count too: a new nested
	 * repository's config is as dangerous as an old one's. */
	for (size_t i = 0; r >= 0 && i < w->n_roots; i++) {
		struct stat st;

		if (stat(w->roots[i], &st) == 0) {
			r = git_walk_up(&f, w->roots[i]);
			if (r >= 0)
				r = git_walk(&f, w->roots[i], st.st_dev, 0, NULL, 0, NULL);
		}
	}
	for (size_t i = 0; r >= 0 && i < w->n_dirs; i++)
		r = git_strv_add(&f.common, w->dirs[i]);
	for (size_t i = 0; r >= 0 && i < f.worktree.n; i++)
		r = git_strv_add(&f.common, f.worktree.v[i]);
	for (size_t i = 0; r >= 0 && i < f.common.n; i++) {
		const char *d = f.common.v[i];
		bool watched = false, had = false;

		for (size_t k = 0; k < w->n_dirs; k++)
			if (strcmp(w->dirs[k], d) == 0) {
				watched = true;
				had = w->had_cd[k];
			}
		r = scan_dir(d, &lines, !watched);
		if (r >= 0 && watched)
			r = scan_names(d, &lines);
		if (r >= 0 && watched && !had && has_commondir(d)) {
			char line[PATH_MAX + 64];

			snprintf(line, sizeof(line), "%s\tcommondir\tappeared during the run", d);
			r = git_strv_add(&lines, line);
			/* ... and what git now reads through it. */
			if (r >= 0)
				r = scan_redirect(d, &lines);
		}
	}
	for (size_t i = 0; r >= 0 && i < lines.n; i++) {
		char *a, *b, *line;

		if (known(w, lines.v[i]))
			continue;
		/* "DIR\tFILE\tWHAT" reads as "DIR/FILE: WHAT". */
		a = strchr(lines.v[i], '\t');
		b = a ? strchr(a + 1, '\t') : NULL;
		if (!b)
			continue;
		*a = *b = '\0';
		if (asprintf(&line, "%s/%s: %s", lines.v[i], a + 1, b + 1) < 0) {
			r = -ENOMEM;
			break;
		}
		r = git_strv_add(&report, line);
		free(line);
	}
	git_found_free(&f);
	git_strv_free(&lines);
	if (r < 0) {
		git_strv_free(&report);
		return r;
	}
	*out = report.v;
	return (int)report.n;
}

void git_watch_free(struct git_watch *w)
{
	struct strv a = {.v = w->dirs, .n = w->n_dirs}, b = {.v = w->known, .n = w->n_known},
		    c = {.v = w->roots, .n = w->n_roots}, d = {.v = w->allow, .n = w->n_allow},
		    e = {.v = w->allow_sb, .n = w->n_allow};

	git_strv_free(&d);
	git_strv_free(&e);
	git_strv_free(&a);
	git_strv_free(&b);
	git_strv_free(&c);
	free(w->had_cd);
	memset(w, 0, sizeof(*w));
}
