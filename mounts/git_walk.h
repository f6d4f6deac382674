/* Inside mounts/: the walks that find git directories (git_walk.c), for
 * git.c's expansion at start and check after the run. Not a public header. */
#pragma once

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "git.h"

struct strv {
	char **v;
	size_t n, cap;
};

int git_strv_add(struct strv *s, const char *str); /* 1 added, 0 present, -ENOMEM */
void git_strv_free(struct strv *s);

struct git_found {
	struct strv common;	/* git directories with everything (main, submodules) */
	struct strv worktree;	/* linked worktrees' own git directories */
	struct strv gitfiles;	/* .git files inside walked roots */
	size_t dirs;		/* directories walked, against GIT_WALK_DIRS */
	bool bounded;		/* a walk stopped at its bound */
	bool after;		/* the check after the run: follow a .git symlink */
	bool no_git;		/* only names: .git entries are not looked at */
	char symlink[PATH_MAX]; /* at start: a .git symlink, refused */
};

/* Below dir (a bounded walk, see git.h): every .git, and with n_names every
 * DIR/.../NAME whose first component exists into hits. */
int git_walk(struct git_found *f, const char *dir, dev_t dev, int depth, const char *const *names,
	     size_t n_names, struct strv *hits);
/* The repository containing root (stops below $HOME). */
int git_walk_up(struct git_found *f, const char *root);
void git_found_free(struct git_found *f);

/* A small regular file below dirfd, no symlinks: its length or -errno. */
ssize_t git_read_small(int dirfd, const char *name, char *buf, size_t max);
/* base/path or path made canonical, malloc'd; NULL when missing. */
char *git_resolve_rel(const char *base, const char *path);
/* Length of dir when path is dir or below it ("/" never matches), else 0. */
size_t git_under(const char *path, const char *dir);
