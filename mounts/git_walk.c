/* Finding git directories without running git (gitrepository-layout(5)):
 * up from a directory to the repository that contains it, down through a
 * bounded walk to every repository below, and from each git directory to
 * its submodules, linked worktrees and common directory. */
#include "git_walk.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../include/io.h"

#include "../include/cleanup.h"
#include "../include/sys.h"

int git_strv_add(struct strv *s, const char *str)
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

void git_strv_free(struct strv *s)
{
	for (size_t i = 0; i < s->n; i++)
		free(s->v[i]);
	free(s->v);
	s->v = NULL;
	s->n = s->cap = 0;
}

/* Read a small regular file below dirfd without following any symlink.
 * Returns the length, -errno (-EFBIG over max). */
ssize_t git_read_small(int dirfd, const char *name, char *buf, size_t max)
{
	cleanup_close int fd =
	    sys_openat2(dirfd, name, O_RDONLY | O_NONBLOCK | O_CLOEXEC,
			RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS);
	struct stat st;

	if (fd < 0)
		return fd;
	if (fstat(fd, &st) < 0)
		return -errno;
	if (!S_ISREG(st.st_mode))
		return -EINVAL;
	if ((size_t)st.st_size > max)
		return -EFBIG;
	return read_full(fd, buf, max);
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
char *git_resolve_rel(const char *base, const char *path)
{
	char buf[PATH_MAX * 2];

	if (path[0] == '/')
		return realpath(path, NULL);
	if (snprintf(buf, sizeof(buf), "%s/%s", base, path) >= (int)sizeof(buf))
		return NULL;
	return realpath(buf, NULL);
}

static int add_gitdir(struct git_found *f, const char *dir, int depth);

/* A common git directory's submodules (modules/NAME..., NAME may have
 * slashes) and linked worktrees (worktrees/NAME). */
static int add_children(struct git_found *f, const char *dir, const char *sub, int depth)
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
			r = git_strv_add(&f->worktree, child);
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

/* Where a commondir points when that does not exist (yet): its existing
 * parent made canonical, and the last name, which the workload could
 * create there. NULL when even that is not a plain name. */
static char *resolve_missing(const char *base, const char *path)
{
	char buf[PATH_MAX * 2], *slash, *parent, *out;
	const char *last;

	if (snprintf(buf, sizeof(buf), "%s%s%s", path[0] == '/' ? "" : base,
		     path[0] == '/' ? "" : "/", path) >= (int)sizeof(buf))
		return NULL;
	while ((slash = strrchr(buf, '/')) && slash != buf && !slash[1])
		*slash = '\0'; /* "../x/" */
	slash = strrchr(buf, '/');
	if (!slash)
		return NULL;
	last = slash + 1;
	if (!*last || !strcmp(last, ".") || !strcmp(last, ".."))
		return NULL;
	*slash = '\0';
	parent = realpath(*buf ? buf : "/", NULL);
	if (!parent)
		return NULL;
	if (asprintf(&out, "%s/%s", strcmp(parent, "/") ? parent : "", last) < 0)
		out = NULL;
	free(parent);
	return out;
}

/* A git directory: a linked worktree's (it has a commondir) brings its
 * common directory too. A commondir that names the directory itself (".",
 * as a placeholder's reads) redirects nothing: git reads config and hooks
 * from here, so here is a common directory too. */
static int add_gitdir(struct git_found *f, const char *dir, int depth)
{
	cleanup_close int fd = open(dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
	char buf[PATH_MAX], rel[PATH_MAX];
	ssize_t n;
	int r;

	if (fd < 0 || depth > GIT_WALK_DEPTH)
		return 0;
	n = git_read_small(fd, "commondir", buf, sizeof(buf) - 1);
	if (n >= 0 && gitcommondir_parse(buf, (size_t)n, rel, sizeof(rel)) == 0) {
		cleanup_free char *common = git_resolve_rel(dir, rel);

		r = git_strv_add(&f->worktree, dir);
		if (r < 0)
			return r;
		/* Not there yet: what the workload could create there is
		 * what git would read. */
		if (!common && !f->after)
			common = resolve_missing(dir, rel);
		if (common && strcmp(common, dir) != 0) {
			struct stat st;

			if (stat(common, &st) == 0)
				return add_gitdir(f, common, depth + 1);
			return git_strv_add(&f->common, common) < 0 ? -ENOMEM : 0;
		}
		if (!common)
			return 0;
	}
	r = git_strv_add(&f->common, dir);
	if (r <= 0)
		return r; /* seen before, or no memory */
	r = add_children(f, dir, "modules", depth);
	if (r < 0)
		return r;
	return add_children(f, dir, "worktrees", depth);
}

/* The .git entry of directory dir, if any: a directory, or a file naming
 * one. */
static int add_dotgit(struct git_found *f, const char *dir, bool inside)
{
	cleanup_close int fd = open(dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
	char buf[PATH_MAX + 16], rel[PATH_MAX], path[PATH_MAX];
	struct stat st;
	ssize_t n;

	if (fd < 0 || f->no_git)
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
		int r = git_strv_add(&f->gitfiles, path);

		if (r < 0)
			return r;
	}
	n = git_read_small(fd, ".git", buf, sizeof(buf) - 1);
	if (n >= 0 && gitfile_parse(buf, (size_t)n, rel, sizeof(rel)) == 0) {
		cleanup_free char *gitdir = git_resolve_rel(dir, rel);

		if (gitdir)
			return add_gitdir(f, gitdir, 0);
	}
	return 0;
}

/* Below root: every .git, not descending into .git directories, symlinks
 * or other filesystems; at most GIT_WALK_DIRS directories and
 * GIT_WALK_DEPTH levels in all. names (when n_names) collects every
 * ROOT/.../NAME whose NAME exists, for "**" NAME entries. */
int git_walk(struct git_found *f, const char *dir, dev_t dev, int depth, const char *const *names,
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
					r = git_strv_add(hits, hit);
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
		r = git_walk(f, path, dev, depth + 1, names, n_names, hits);
	}
	closedir(d);
	return r < 0 ? r : 0;
}

/* The repository containing root: walk up to the first .git, but not to
 * the caller's home directory or above it. A repository there (dotfiles
 * kept in ~/.git) would be bound into the sandbox whole, and with it every
 * file ever committed to it, for a workspace that merely lies below. */
int git_walk_up(struct git_found *f, const char *root)
{
	cleanup_free char *home = getenv("HOME") ? realpath(getenv("HOME"), NULL) : NULL;
	char dir[PATH_MAX];

	if (snprintf(dir, sizeof(dir), "%s", root) >= (int)sizeof(dir))
		return 0;
	for (;;) {
		cleanup_close int fd = open(dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
		char *slash;

		if (home && strcmp(dir, root) != 0 && git_under(home, dir))
			return 0;
		if (fd >= 0 && fstatat(fd, ".git", &(struct stat){0}, AT_SYMLINK_NOFOLLOW) == 0)
			return add_dotgit(f, dir, strcmp(dir, root) == 0);
		slash = strrchr(dir, '/');
		if (!slash || slash == dir)
			return 0;
		*slash = '\0';
	}
}

void git_found_free(struct git_found *f)
{
	git_strv_free(&f->common);
	git_strv_free(&f->worktree);
	git_strv_free(&f->gitfiles);
}

size_t git_under(const char *path, const char *dir)
{
	size_t n = strlen(dir);

	if (strcmp(dir, "/") == 0)
		return 0;
	if (strncmp(path, dir, n) != 0 || (path[n] != '\0' && path[n] != '/'))
		return 0;
	return n;
}
