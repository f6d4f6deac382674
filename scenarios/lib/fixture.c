/* Fixtures: the directories and files a case works in, and where its logs
 * and completion records go (harness.h). */
#include "harness.h"

#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../../include/cleanup.h"
#include "../../include/io.h"

int fixture_make(struct fixture *fx, const char *name, struct err *err)
{
	memset(fx, 0, sizeof(*fx));
	snprintf(fx->dir, sizeof(fx->dir), "/tmp/paddock-eval-%s.XXXXXX", name);
	if (!mkdtemp(fx->dir)) {
		fx->dir[0] = '\0';
		return err_sys(err, errno, "mkdtemp");
	}
	if (geteuid() == 0) {
		/* A tmpfs of its own: the fanotify filesystem mark then sees
		 * the fixture and nothing else of the host. Without it the
		 * observer falls back (fan.h), so a refused mount is no error. */
		if (mount("paddock-eval", fx->dir, "tmpfs", MS_NOSUID | MS_NODEV,
			  "size=16m,mode=0755") == 0)
			fx->mounted = true;
	}
	if (chmod(fx->dir, 0755) < 0)
		return err_sys(err, errno, "chmod %s", fx->dir);
	return 0;
}

int fixture_mkdir(const struct eval_ctx *ctx, const struct fixture *fx, const char *rel, char *out,
		  size_t n)
{
	snprintf(out, n, "%s/%s", fx->dir, rel);
	if (mkdir(out, 0755) < 0 && errno != EEXIST)
		return -errno;
	if (ctx->drop && chown(out, ctx->subj->workload_uid, ctx->subj->workload_gid) < 0)
		return -errno;
	return 0;
}

int fixture_canary(const struct eval_ctx *ctx, const struct fixture *fx, char *dir, size_t dir_n,
		   char *canary, size_t canary_n, bool *mounted)
{
	int rc = fixture_mkdir(ctx, fx, "canary", dir, dir_n);

	*mounted = false;
	if (rc < 0)
		return rc;
	snprintf(canary, canary_n, "%s/canary.txt", dir);
	if (fx->mounted && mount("paddock-eval-canary", dir, "tmpfs", MS_NOSUID | MS_NODEV,
				 "size=1m,mode=0755") == 0) {
		*mounted = true;
		if (ctx->drop && chown(dir, ctx->subj->workload_uid, ctx->subj->workload_gid) < 0)
			return -errno;
	}
	return 0;
}

int fixture_write(const struct eval_ctx *ctx, const char *path, const char *data, mode_t mode)
{
	cleanup_close int fd =
	    open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, mode);
	int r;

	if (fd < 0)
		return -errno;
	r = write_full(fd, data, strlen(data));
	if (r < 0)
		return r;
	if (fchmod(fd, mode) < 0)
		return -errno;
	/* Owned by the workload user: only the mount may stop its writes,
	 * not file permissions. */
	if (ctx->drop && fchown(fd, ctx->subj->workload_uid, ctx->subj->workload_gid) < 0)
		return -errno;
	return 0;
}

static int rm_one(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st;
	(void)ftw;
	if (flag == FTW_DP || flag == FTW_D)
		return rmdir(path) < 0 && errno != ENOENT ? -1 : 0;
	return unlink(path) < 0 && errno != ENOENT ? -1 : 0;
}

int fixture_teardown(struct fixture *fx)
{
	struct stat st;
	int r = 0;

	if (!fx->dir[0])
		return 0;
	if (fx->mounted) {
		/* MNT_DETACH: a docker container still holding a bind of it
		 * must not keep the fixture from going away. */
		if (umount2(fx->dir, MNT_DETACH) < 0)
			r = -errno;
		fx->mounted = false;
	}
	if (nftw(fx->dir, rm_one, 16, FTW_DEPTH | FTW_PHYS) < 0)
		r = -errno;
	if (lstat(fx->dir, &st) == 0)
		r = r ? r : -EEXIST;
	fx->dir[0] = '\0';
	return r;
}

void log_path(const struct eval_ctx *ctx, const struct result *r, const char *name, char *out,
	      size_t n)
{
	char arm[64];

	snprintf(arm, sizeof(arm), "%s", r->arm);
	for (char *p = arm; *p; p++)
		if (*p == ':' || *p == '/')
			*p = '_';
	snprintf(out, n, "%s/%s.%s.%s", ctx->outdir, r->case_id, arm, name);
}

int records_dir(const struct eval_ctx *ctx, const struct result *r, char *out, size_t n)
{
	char p[PATH_MAX + 16];

	snprintf(p, sizeof(p), "%s/records", ctx->outdir);
	if (mkdir(p, 0755) < 0 && errno != EEXIST)
		return -errno;
	snprintf(out, n, "%s/records/%s.", ctx->outdir, r->case_id);
	for (const char *a = r->arm; *a && strlen(out) + 1 < n; a++) {
		size_t l = strlen(out);

		out[l] = *a == ':' ? '_' : *a;
		out[l + 1] = '\0';
	}
	if (mkdir(out, 0755) < 0 && errno != EEXIST)
		return -errno;
	if (ctx->drop && chown(out, ctx->subj->workload_uid, ctx->subj->workload_gid) < 0)
		return -errno;
	return 0;
}
