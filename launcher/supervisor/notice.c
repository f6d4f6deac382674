/* The protected-path notice, supervisor side (docs/security.md, "Why a
 * change was refused"; the program is launcher/sandbox/seccomp_protect.c).
 * A rename or a directory removal (rmdir, unlinkat with AT_REMOVEDIR) in
 * the sandbox arrives here as a seccomp user notification. When one of its paths names a protected
 * path (a mount root whose inode the supervisor locked at start), the call is answered here: EACCES
 * and one line on stderr that names the path; the kernel would have said EBUSY, which git prints as
 * "Device or resource busy". Every other call goes on to the kernel (SECCOMP_USER_NOTIF_FLAG_
 * CONTINUE), which enforces the protection by the mount whatever is
 * decided here: this is a message, not the boundary. A workload that
 * changes the path in its memory after our read (seccomp_unotify(2),
 * "Design goals") only trades the message for the kernel's EBUSY.
 *
 * One change is done here instead of refused: git's rewrite of a protected
 * config with the very bytes it holds (git submodule update sets the
 * submodule's core.worktree to what it is, every time: "X.lock" renamed
 * over X). The supervisor compares the two files and, when they are equal,
 * removes X.lock and answers success: nothing protected changes, and git
 * goes on. A content that differs is refused like any other change. */
#include "run.h"

#include <cjson/cJSON.h>
#include <dirent.h>
#include <fcntl.h>
#include <limits.h>
#include <seccomp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>
#include <linux/seccomp.h>

#include "../../include/cleanup.h"
#include "../../include/sys.h"

#define NOTICE_LINES 20
#define SAME_MAX     (1u << 20) /* bytes compared for an unchanged rewrite */

#ifndef STATX_ATTR_MOUNT_ROOT
#define STATX_ATTR_MOUNT_ROOT 0x00002000
#endif

int notice_prepare(struct run_spec *r, struct err *err)
{
	struct sandbox_spec *sb = &r->sb;
	int rc;

	/* Nothing protected, nothing to say; no filter, no notice (the
	 * mount still refuses, with EBUSY). */
	if ((r->opt->weaken & WEAKEN_NO_PROTECT) || !r->policy->n_protect || !sb->seccomp.enabled)
		return 0;
	rc = seccomp_protect_program(&sb->seccomp, r->policy, r->git.n_allow > 0);
	if (rc < 0)
		return err_sys(err, rc, "the protected-path notice's seccomp program");
	return 0;
}

/* One path argument, looked up as the caller sees it, never following a
 * symlink (one on the way: not ours to say, the kernel decides). */
struct lookup {
	int parent; /* O_PATH of the directory, -1 */
	char name[NAME_MAX + 1];
	long op; /* the PROTECT op of the plan it names, -1 */
	bool regular;
};

static void lookup_close(struct lookup *l)
{
	if (l->parent >= 0)
		close(l->parent);
	l->parent = -1;
}

static long protect_op(const struct mount_plan *plan, dev_t dev, ino_t ino)
{
	for (size_t i = 0; i < plan->n; i++)
		if (plan->ops[i].kind == MOUNT_OP_PROTECT && plan->ops[i].ino == ino &&
		    plan->ops[i].dev == dev && plan->ops[i].ino)
			return (long)i;
	return -1;
}

static void look(const struct run *r, pid_t pid, int dfd, uint64_t addr, struct lookup *l)
{
	struct statx stx;

	*l = (struct lookup){.parent = -1, .op = -1};
	l->parent = caller_parent(pid, dfd, addr, l->name, sizeof(l->name));
	if (l->parent < 0)
		return;
	if (statx(l->parent, l->name, AT_SYMLINK_NOFOLLOW | AT_STATX_DONT_SYNC,
		  STATX_TYPE | STATX_INO, &stx) < 0)
		return;
	l->regular = S_ISREG(stx.stx_mode);
	/* Only a mount root can be a protected path in the sandbox: a hard
	 * link elsewhere to the same inode is not protected, and its unlink
	 * is not ours to refuse. */
	if (!(stx.stx_attributes_mask & STATX_ATTR_MOUNT_ROOT) ||
	    !(stx.stx_attributes & STATX_ATTR_MOUNT_ROOT))
		return;
	l->op = protect_op(&r->spec->sb.plan, makedev(stx.stx_dev_major, stx.stx_dev_minor),
			   (ino_t)stx.stx_ino);
}

/* Is l an empty directory? (anything else: not known to be full) */
static bool empty_dir(const struct lookup *l)
{
	int fd = openat(l->parent, l->name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	DIR *d = fd >= 0 ? fdopendir(fd) : NULL;
	struct dirent *e;
	bool empty = true;

	if (!d) {
		if (fd >= 0)
			close(fd);
		return true;
	}
	while (empty && (e = readdir(d)))
		empty = !strcmp(e->d_name, ".") || !strcmp(e->d_name, "..");
	closedir(d);
	return empty;
}

/* Are two regular files, name a in dir fa and b in fb, byte for byte the
 * same (at most SAME_MAX)? *sa: a's status. Also gitallow.c's. */
bool notice_same_bytes(int fa, const char *a, int fb, const char *b, struct stat *sa)
{
	cleanup_close int x = openat(fa, a, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	cleanup_close int y = openat(fb, b, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	cleanup_free char *bx = NULL, *by = NULL;
	struct stat sb;

	if (x < 0 || y < 0 || fstat(x, sa) < 0 || fstat(y, &sb) < 0)
		return false;
	if (!S_ISREG(sa->st_mode) || !S_ISREG(sb.st_mode) || sa->st_size != sb.st_size ||
	    sa->st_size > SAME_MAX)
		return false;
	bx = malloc((size_t)sa->st_size + 1);
	by = malloc((size_t)sa->st_size + 1);
	if (!bx || !by)
		return false;
	if (pread(x, bx, (size_t)sa->st_size + 1, 0) != sa->st_size ||
	    pread(y, by, (size_t)sa->st_size + 1, 0) != sa->st_size)
		return false;
	return memcmp(bx, by, (size_t)sa->st_size) == 0;
}

/* rename(LOCK, X) where X is protected, LOCK is "X.lock" beside it and
 * holds what X holds: remove LOCK and call it done. */
static bool unchanged_rewrite(const struct lookup *from, const struct lookup *to)
{
	size_t n = strlen(to->name);
	struct stat pa, pb, sa, now;

	if (from->op >= 0 || to->op < 0 || from->parent < 0 || !to->regular || !from->regular ||
	    strncmp(from->name, to->name, n) != 0 || strcmp(from->name + n, ".lock") != 0)
		return false;
	if (fstat(from->parent, &pa) < 0 || fstat(to->parent, &pb) < 0 || pa.st_dev != pb.st_dev ||
	    pa.st_ino != pb.st_ino)
		return false;
	if (!notice_same_bytes(from->parent, from->name, to->parent, to->name, &sa))
		return false;
	/* The lock is still the file compared: the workload could only
	 * have put another of its own files there, in a directory it can
	 * write anyway. */
	if (fstatat(from->parent, from->name, &now, AT_SYMLINK_NOFOLLOW) < 0 ||
	    now.st_ino != sa.st_ino || now.st_dev != sa.st_dev)
		return false;
	return unlinkat(from->parent, from->name, 0) == 0;
}

static void say(struct run *r, struct denials_sink *to, const struct lookup *l,
		const struct seccomp_notif *req)
{
	const struct mount_op *op = &r->spec->sb.plan.ops[l->op];
	const struct policy *p = r->spec->policy;
	char *call = seccomp_syscall_resolve_num_arch(req->data.arch, req->data.nr);
	size_t k = 0;
	const char *entry = "";

	if (sscanf(op->what, "protect[%zu]", &k) == 1 && k < p->n_protect)
		entry = p->protect[k];
	if (to->notice_lines++ < NOTICE_LINES)
		denials_say(
		    to,
		    "paddock: %s is protected by paddock (policy protect %s); the change was "
		    "refused (%s by pid %u: %s)\n",
		    op->target, entry, call ? call : "?", (unsigned)req->pid, strerror(EACCES));
	free(call);
}

bool notice_serve(struct run *r, int fd, struct denials_sink *to, const struct seccomp_notif *req,
		  struct seccomp_notif_resp *resp, bool *sent)
{
	const struct seccomp_info *si = &r->spec->sb.seccomp;
	const __u64 *a = req->data.args;
	struct lookup l[2];
	size_t n = 0;
	long hit = -1;
	bool rename_plain = false;
	int nr = req->data.nr;

	if (!seccomp_protect_call(si, nr))
		return false;
	/* A call in a protected git directory's read-only part: performed or
	 * refused there (gitallow.c). */
	if (gitallow_serve(&r->live.gitallow, fd, to, req, resp, sent))
		return true;
	resp->id = req->id;
	resp->flags = SECCOMP_USER_NOTIF_FLAG_CONTINUE;
	resp->error = 0;
	resp->val = 0;
#ifdef SYS_rename
	if (nr == SYS_rename || nr == SYS_rmdir) {
		look(r, (pid_t)req->pid, AT_FDCWD, a[0], &l[n++]);
		if (nr == SYS_rename)
			look(r, (pid_t)req->pid, AT_FDCWD, a[1], &l[n++]);
		rename_plain = nr == SYS_rename;
	}
#endif
	if (nr == SYS_renameat || nr == SYS_renameat2) {
		look(r, (pid_t)req->pid, (int)a[0], a[1], &l[n++]);
		look(r, (pid_t)req->pid, (int)a[2], a[3], &l[n++]);
		rename_plain = nr == SYS_renameat || (unsigned)a[4] == 0;
	} else if (nr == SYS_unlinkat) {
		look(r, (pid_t)req->pid, (int)a[0], a[1], &l[n++]);
	}
	for (size_t i = 0; i < n && hit < 0; i++)
		if (l[i].op >= 0)
			hit = (long)i;
	/* RENAME_NOREPLACE onto an existing path fails with EEXIST before
	 * the kernel looks for a mount (rename(2)), and callers such as
	 * coreutils' mv take that answer to mean "replace it then": theirs
	 * is the plain rename that follows, and the line goes with it. */
	if (hit == 1 && nr == SYS_renameat2 && ((unsigned)a[4] & RENAME_NOREPLACE))
		hit = -1;
	/* What we read belongs to this call of this process only if the
	 * notification is still pending (the pid may have been reused). */
	if (hit >= 0 && ioctl(fd, SECCOMP_IOCTL_NOTIF_ID_VALID, &req->id) == 0) {
		resp->flags = 0;
		if (rename_plain && n == 2 && unchanged_rewrite(&l[0], &l[1])) {
			r->live.denials.notice_unchanged++;
		} else if (!rename_plain && n == 1 && !empty_dir(&l[0])) {
			/* rmdir of a full directory changes nothing: the
			 * answer it would get anyway (git's removal of empty
			 * parents after a file's unlink tries .git too). */
			resp->error = -ENOTEMPTY;
		} else {
			resp->error = -EACCES;
			r->live.denials.notice_refused++;
			say(r, to, &l[hit], req);
		}
	}
	for (size_t i = 0; i < n; i++)
		lookup_close(&l[i]);
	return true;
}

void notice_json(const struct run *r, cJSON *o)
{
	const struct denials *d = &r->live.denials;
	cJSON *x = cJSON_AddObjectToObject(o, "protect_notice");

	if (!x)
		return;
	cJSON_AddBoolToObject(x, "enabled", r->spec->sb.seccomp.n_protect_nrs > 0);
	/* What the workload loads: the policy's program (seccomp.bpf_sha256)
	 * with the notice in front (and --trace-denials' turns, if any). */
	if (r->spec->sb.seccomp.n_protect_nrs > 0)
		cJSON_AddStringToObject(x, "program_sha256", r->spec->sb.seccomp.bpf_notify_sha256);
	cJSON_AddNumberToObject(x, "refused", (double)d->notice_refused);
	cJSON_AddNumberToObject(x, "unchanged_rewrites",
				(double)(d->notice_unchanged + r->live.gitallow.unchanged));
	/* protect_git "allowlist": the git directories, and the calls made
	 * in them by the supervisor or refused there. */
	cJSON_AddNumberToObject(x, "git_allowlist_dirs", (double)r->live.gitallow.n);
	cJSON_AddNumberToObject(x, "git_allowlist_performed", (double)r->live.gitallow.performed);
	cJSON_AddNumberToObject(x, "git_allowlist_refused", (double)r->live.gitallow.refused);
}
