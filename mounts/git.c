/* Git-aware protection, supervisor side (docs/security.md, "Protected
 * paths"). At start: find the git directories of the repository that
 * contains a protected root (walk up, follow a .git file and commondir, as
 * git does: gitrepository-layout(5)) and of every repository, submodule and
 * worktree below it (a bounded walk), and turn each into protected names:
 * the files that make git run code or read configuration from elsewhere.
 * After the run: read those directories' config files again, never running
 * git, and report what could run code that was not there at start. */
#include "git.h"

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

struct strv {
	char **v;
	size_t n, cap;
};

static int strv_add(struct strv *s, const char *str)
{
	for (size_t i = 0; i < s->n; i++)
		if (strcmp(s->v[i], str) == 0)
			return 0;
	if (s->n == s->cap) {
		size_t cap = s->cap ? 2 * s->cap : 16;
		char **grown = realloc(s->v, cap * sizeof(*grown));

		if (!grown)
			return -ENOMEM;
		s->v = grown;
		s->cap = cap;
	}
	s->v[s->n] = strdup(str);
	if (!s->v[s->n])
		return -ENOMEM;
	s->n++;
	return 1;
}

static void strv_free(struct strv *s)
{
	for (size_t i = 0; i < s->n; i++)
		free(s->v[i]);
	free(s->v);
	s->v = NULL;
	s->n = s->cap = 0;
}

/* Read a small regular file below dirfd without following any symlink.
 * Returns the length, -errno (-EFBIG over max). */
static ssize_t read_small(int dirfd, const char *name, char *buf, size_t max)
{
	cleanup_close int fd =
	    sys_openat2(dirfd, name, O_RDONLY | O_NONBLOCK | O_CLOEXEC,
			RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS);
	struct stat st;
	size_t n = 0;

	if (fd < 0)
		return fd;
	if (fstat(fd, &st) < 0)
		return -errno;
	if (!S_ISREG(st.st_mode))
		return -EINVAL;
	if ((size_t)st.st_size > max)
		return -EFBIG;
	while (n < max) {
		ssize_t r = read(fd, buf + n, max - n);

		if (r < 0)
			return -errno;
		if (r == 0)
			break;
		n += (size_t)r;
	}
	return (ssize_t)n;
}

static bool is_file_at(int dirfd, const char *name)
{
	struct stat st;

	return fstatat(dirfd, name, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISREG(st.st_mode);
}

static bool is_dir_at(int dirfd, const char *name)
{
	struct stat st;

	return fstatat(dirfd, name, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISDIR(st.st_mode);
}

/* A path relative to base, or absolute, made canonical. Returns malloc'd or
 * NULL (missing, a loop, no memory: nothing to protect there). */
static char *resolve_rel(const char *base, const char *path)
{
	char buf[PATH_MAX * 2];

	if (path[0] == '/')
		return realpath(path, NULL);
	if (snprintf(buf, sizeof(buf), "%s/%s", base, path) >= (int)sizeof(buf))
		return NULL;
	return realpath(buf, NULL);
}

struct found {
	struct strv common;	/* git directories with everything (main, submodules) */
	struct strv worktree;	/* linked worktrees' own git directories */
	struct strv gitfiles;	/* .git files inside walked roots */
	size_t dirs;		/* directories walked, against GIT_WALK_DIRS */
	bool bounded;		/* a walk stopped at its bound */
	bool after;		/* the check after the run: follow a .git symlink */
	char symlink[PATH_MAX]; /* at start: a .git symlink, refused */
};

static int add_gitdir(struct found *f, const char *dir, int depth);
static size_t under(const char *path, const char *dir);

/* A common git directory's submodules (modules/NAME..., NAME may have
 * slashes) and linked worktrees (worktrees/NAME). */
static int add_children(struct found *f, const char *dir, const char *sub, int depth)
{
	char path[PATH_MAX];
	DIR *d;
	struct dirent *e;
	int r = 0;

	if (snprintf(path, sizeof(path), "%s/%s", dir, sub) >= (int)sizeof(path))
		return 0;
	d = opendir(path);
	if (!d)
		return 0;
	while (r >= 0 && (e = readdir(d))) {
		char child[PATH_MAX];
		cleanup_close int fd = -1;

		if (e->d_name[0] == '.' &&
		    (!e->d_name[1] || (e->d_name[1] == '.' && !e->d_name[2])))
			continue;
		if (snprintf(child, sizeof(child), "%s/%s", path, e->d_name) >= (int)sizeof(child))
			continue;
		fd = open(child, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (fd < 0)
			continue;
		if (strcmp(sub, "worktrees") == 0) {
			r = strv_add(&f->worktree, child);
		} else if (is_file_at(fd, "HEAD")) {
			r = add_gitdir(f, child, depth + 1);
		} else if (depth < GIT_WALK_DEPTH) {
			/* A submodule named a/b lives in modules/a/b. */
			char rel[PATH_MAX];

			if (snprintf(rel, sizeof(rel), "%s/%s", sub, e->d_name) < (int)sizeof(rel))
				r = add_children(f, dir, rel, depth + 1);
		}
	}
	closedir(d);
	return r < 0 ? r : 0;
}

/* A git directory: a linked worktree's (it has a commondir) brings its
 * common directory too. */
static int add_gitdir(struct found *f, const char *dir, int depth)
{
	cleanup_close int fd = open(dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
	char buf[PATH_MAX], rel[PATH_MAX];
	ssize_t n;
	int r;

	if (fd < 0 || depth > GIT_WALK_DEPTH)
		return 0;
	n = read_small(fd, "commondir", buf, sizeof(buf) - 1);
	if (n >= 0 && gitcommondir_parse(buf, (size_t)n, rel, sizeof(rel)) == 0) {
		cleanup_free char *common = resolve_rel(dir, rel);

		r = strv_add(&f->worktree, dir);
		if (r < 0)
			return r;
		if (common && strcmp(common, dir) != 0)
			return add_gitdir(f, common, depth + 1);
		return 0;
	}
	r = strv_add(&f->common, dir);
	if (r <= 0)
		return r; /* seen before, or no memory */
	r = add_children(f, dir, "modules", depth);
	if (r < 0)
		return r;
	return add_children(f, dir, "worktrees", depth);
}

/* The .git entry of directory dir, if any: a directory, or a file naming
 * one. */
static int add_dotgit(struct found *f, const char *dir, bool inside)
{
	cleanup_close int fd = open(dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
	char buf[PATH_MAX + 16], rel[PATH_MAX], path[PATH_MAX];
	struct stat st;
	ssize_t n;

	if (fd < 0)
		return 0;
	if (snprintf(path, sizeof(path), "%s/.git", dir) >= (int)sizeof(path))
		return 0;
	/* Any .git directory, whether git would take it as a repository
	 * yet or not: the workload could complete it. */
	if (is_dir_at(fd, ".git"))
		return add_gitdir(f, path, 0);
	/* git follows a .git symlink. At start it is refused, as any
	 * symlink on a protected path (protecting "through" it could reach
	 * outside the workspace); after the run, made by the workload, it
	 * is followed to what the host's git would read. */
	if (fstatat(fd, ".git", &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISLNK(st.st_mode)) {
		cleanup_free char *real = NULL;

		if (!f->after) {
			snprintf(f->symlink, sizeof(f->symlink), "%s", path);
			return -ELOOP;
		}
		real = realpath(path, NULL);
		return real && stat(real, &st) == 0 && S_ISDIR(st.st_mode) ? add_gitdir(f, real, 0)
									   : 0;
	}
	if (!is_file_at(fd, ".git"))
		return 0;
	if (inside) {
		int r = strv_add(&f->gitfiles, path);

		if (r < 0)
			return r;
	}
	n = read_small(fd, ".git", buf, sizeof(buf) - 1);
	if (n >= 0 && gitfile_parse(buf, (size_t)n, rel, sizeof(rel)) == 0) {
		cleanup_free char *gitdir = resolve_rel(dir, rel);

		if (gitdir)
			return add_gitdir(f, gitdir, 0);
	}
	return 0;
}

/* Below root: every .git, not descending into .git directories, symlinks
 * or other filesystems; at most GIT_WALK_DIRS directories and
 * GIT_WALK_DEPTH levels in all. names (when n_names) collects every
 * ROOT/.../NAME whose NAME exists, for "**" NAME entries. */
static int walk(struct found *f, const char *dir, dev_t dev, int depth, const char *const *names,
		size_t n_names, struct strv *hits)
{
	DIR *d;
	struct dirent *e;
	int r = 0;

	if (f->dirs >= GIT_WALK_DIRS || depth > GIT_WALK_DEPTH) {
		f->bounded = true;
		return 0;
	}
	f->dirs++;
	d = opendir(dir);
	if (!d)
		return 0;
	while (r >= 0 && (e = readdir(d))) {
		char path[PATH_MAX];
		struct stat st;

		if (e->d_name[0] == '.' &&
		    (!e->d_name[1] || (e->d_name[1] == '.' && !e->d_name[2])))
			continue;
		if (snprintf(path, sizeof(path), "%s/%s", dir, e->d_name) >= (int)sizeof(path))
			continue;
		for (size_t i = 0; i < n_names && r >= 0; i++) {
			size_t len = strcspn(names[i], "/");

			if (strlen(e->d_name) == len && strncmp(e->d_name, names[i], len) == 0) {
				char hit[PATH_MAX];

				if (snprintf(hit, sizeof(hit), "%s/%s", dir, names[i]) <
				    (int)sizeof(hit))
					r = strv_add(hits, hit);
			}
		}
		if (r < 0)
			break;
		if (strcmp(e->d_name, ".git") == 0) {
			if (depth > 0)
				r = add_dotgit(f, dir, true);
			continue;
		}
		if (fstatat(dirfd(d), e->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0 ||
		    !S_ISDIR(st.st_mode) || st.st_dev != dev)
			continue;
		r = walk(f, path, dev, depth + 1, names, n_names, hits);
	}
	closedir(d);
	return r < 0 ? r : 0;
}

/* The repository containing root: walk up to the first .git, but not to
 * the caller's home directory or above it. A repository there (dotfiles
 * kept in ~/.git) would be bound into the sandbox whole, and with it every
 * file ever committed to it, for a workspace that merely lies below. */
static int walk_up(struct found *f, const char *root)
{
	cleanup_free char *home = getenv("HOME") ? realpath(getenv("HOME"), NULL) : NULL;
	char dir[PATH_MAX];

	if (snprintf(dir, sizeof(dir), "%s", root) >= (int)sizeof(dir))
		return 0;
	for (;;) {
		cleanup_close int fd = open(dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
		char *slash;

		if (home && strcmp(dir, root) != 0 && under(home, dir))
			return 0;
		if (fd >= 0 && fstatat(fd, ".git", &(struct stat){0}, AT_SYMLINK_NOFOLLOW) == 0)
			return add_dotgit(f, dir, strcmp(dir, root) == 0);
		slash = strrchr(dir, '/');
		if (!slash || slash == dir)
			return 0;
		*slash = '\0';
	}
}

static void found_free(struct found *f)
{
	strv_free(&f->common);
	strv_free(&f->worktree);
	strv_free(&f->gitfiles);
}

/* ------------------------------------------------ policy paths and binds */

static size_t under(const char *path, const char *dir)
{
	size_t n = strlen(dir);

	if (strcmp(dir, "/") == 0)
		return 0;
	if (strncmp(path, dir, n) != 0 || (path[n] != '\0' && path[n] != '/'))
		return 0;
	return n;
}

/* The innermost bind whose target contains a sandbox path. */
static const struct policy_mount *bind_of_target(const struct policy *p, const char *path)
{
	const struct policy_mount *best = NULL;
	size_t best_len = 0;

	for (size_t i = 0; i < p->n_mounts; i++) {
		size_t n;

		if (p->mounts[i].type != POLICY_MOUNT_BIND)
			continue;
		n = under(path, p->mounts[i].target);
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
		n = under(host, m->source);
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
		    under(host, p->mounts[i].source))
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
	return strv_add(out, sandbox);
}

static int protect_names(struct policy *p, struct strv *out, const char *host,
			 const char *const *names, size_t n)
{
	cleanup_free char *sb = sandbox_path(p, host);
	char path[PATH_MAX];
	int r;

	if (!sb) {
		/* Seen read-only (nothing to protect) or not at all: a
		 * workspace's repository outside every bind becomes visible,
		 * writable, so that git works inside. */
		if (seen_readonly(p, host))
			return 0;
		r = add_bind(p, host);
		if (r < 0)
			return r;
		sb = sandbox_path(p, host);
		if (!sb)
			return -ENOMEM;
	}
	for (size_t i = 0; i < n; i++) {
		if (snprintf(path, sizeof(path), "%s/%s", sb, names[i]) >= (int)sizeof(path))
			return -ENAMETOOLONG;
		r = add_protect(p, out, path);
		if (r < 0)
			return r;
	}
	return 0;
}

/* One "**" entry: prefix (sandbox) and the rest after "/STAR-STAR/". */
static int expand_one(struct policy *p, const char *entry, struct strv *out, struct git_watch *w,
		      bool *bounded, struct err *err)
{
	const char *star = strstr(entry, "/**/");
	const struct policy_mount *b;
	cleanup_free char *prefix = strndup(entry, (size_t)(star - entry));
	cleanup_free char *host = NULL;
	const char *rest = star + 4;
	struct found f = {0};
	struct strv hits = {0};
	struct stat st;
	int r;

	if (!prefix)
		return -ENOMEM;
	b = bind_of_target(p, prefix);
	if (!b || asprintf(&host, "%s%s", b->source, prefix + strlen(b->target)) < 0) {
		host = NULL;
		return b ? -ENOMEM : 0;
	}
	if (stat(host, &st) < 0 || !S_ISDIR(st.st_mode))
		return 0; /* an optional bind that is not there */
	if (strcmp(rest, ".git") == 0) {
		r = walk_up(&f, host);
		if (r >= 0)
			r = walk(&f, host, st.st_dev, 0, NULL, 0, NULL);
		for (size_t i = 0; r >= 0 && i < f.common.n; i++)
			r = protect_names(p, out, f.common.v[i], common_names,
					  sizeof(common_names) / sizeof(common_names[0]));
		for (size_t i = 0; r >= 0 && i < f.worktree.n; i++)
			r = protect_names(p, out, f.worktree.v[i], worktree_names,
					  sizeof(worktree_names) / sizeof(worktree_names[0]));
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

			r = strv_add(&dirs, d);
			w->dirs = dirs.v;
			w->n_dirs = dirs.n;
		}
		if (r >= 0) {
			struct strv roots = {.v = w->roots, .n = w->n_roots, .cap = w->n_roots};

			r = strv_add(&roots, host);
			w->roots = roots.v;
			w->n_roots = roots.n;
		}
	} else {
		const char *names[1] = {rest};

		r = walk(&f, host, st.st_dev, 0, names, 1, &hits);
		for (size_t i = 0; r >= 0 && i < hits.n; i++) {
			cleanup_free char *sb = sandbox_path(p, hits.v[i]);

			if (sb)
				r = add_protect(p, out, sb);
		}
	}
	*bounded |= f.bounded;
	if (r == -ELOOP && f.symlink[0])
		r = err_set(err, ELOOP, "protect: %s is a symlink; refusing to protect through it",
			    f.symlink);
	found_free(&f);
	strv_free(&hits);
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
	s->r = strv_add(s->lines, line);
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
		ssize_t n = read_small(fd, files[i], buf, GITCONF_MAX);

		if (n == -ENOENT)
			continue;
		s.file = files[i];
		if (n < 0 || gitconf_parse(buf, (size_t)n, scan_var, &s) < 0) {
			/* Unreadable to us is no proof of harmless to git. */
			snprintf(line, sizeof(line), "%s\t%s\tunreadable or not a config file", dir,
				 files[i]);
			s.r = strv_add(lines, line);
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
			if (strv_add(lines, line) < 0) {
				closedir(d);
				return -ENOMEM;
			}
		}
		if (d)
			closedir(d);
	}
	return 0;
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
	n = read_small(fd, "commondir", buf, sizeof(buf) - 1);
	if (n < 0 || gitcommondir_parse(buf, (size_t)n, rel, sizeof(rel)) < 0)
		return 0;
	target = resolve_rel(dir, rel);
	if (!target || strcmp(target, dir) == 0)
		return 0;
	return scan_dir(target, lines, true);
}

static bool has_commondir(const char *dir)
{
	cleanup_close int fd = open(dir, O_PATH | O_DIRECTORY | O_CLOEXEC);

	return fd >= 0 && fstatat(fd, "commondir", &(struct stat){0}, AT_SYMLINK_NOFOLLOW) == 0;
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
	int r = 0;

	memset(w, 0, sizeof(*w));
	warn[0] = '\0';
	for (size_t i = 0; r >= 0 && i < p->n_protect; i++) {
		if (!strstr(p->protect[i], "/**/")) {
			r = strv_add(&out, p->protect[i]);
			continue;
		}
		r = expand_one(p, p->protect[i], &out, w, &bounded, err);
	}
	if (r < 0) {
		strv_free(&out);
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
	struct found f = {.after = true};
	int r = 0;

	*out = NULL;
	/* Repositories made during the run count too: a new nested
	 * repository's config is as dangerous as an old one's. */
	for (size_t i = 0; r >= 0 && i < w->n_roots; i++) {
		struct stat st;

		if (stat(w->roots[i], &st) == 0) {
			r = walk_up(&f, w->roots[i]);
			if (r >= 0)
				r = walk(&f, w->roots[i], st.st_dev, 0, NULL, 0, NULL);
		}
	}
	for (size_t i = 0; r >= 0 && i < w->n_dirs; i++)
		r = strv_add(&f.common, w->dirs[i]);
	for (size_t i = 0; r >= 0 && i < f.worktree.n; i++)
		r = strv_add(&f.common, f.worktree.v[i]);
	for (size_t i = 0; r >= 0 && i < f.common.n; i++) {
		const char *d = f.common.v[i];
		bool watched = false, had = false;

		for (size_t k = 0; k < w->n_dirs; k++)
			if (strcmp(w->dirs[k], d) == 0) {
				watched = true;
				had = w->had_cd[k];
			}
		r = scan_dir(d, &lines, !watched);
		if (r >= 0 && watched && !had && has_commondir(d)) {
			char line[PATH_MAX + 64];

			snprintf(line, sizeof(line), "%s\tcommondir\tappeared during the run", d);
			r = strv_add(&lines, line);
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
		r = strv_add(&report, line);
		free(line);
	}
	found_free(&f);
	strv_free(&lines);
	if (r < 0) {
		strv_free(&report);
		return r;
	}
	*out = report.v;
	return (int)report.n;
}

void git_watch_free(struct git_watch *w)
{
	struct strv a = {.v = w->dirs, .n = w->n_dirs}, b = {.v = w->known, .n = w->n_known},
		    c = {.v = w->roots, .n = w->n_roots};

	strv_free(&a);
	strv_free(&b);
	strv_free(&c);
	free(w->had_cd);
	memset(w, 0, sizeof(*w));
}
