/* The git directory as an allowlist, supervisor side (docs/security.md,
 * "The git directory as an allowlist"). With protect_git "allowlist" every
 * protected git directory is bound read-only, its objects/, refs/ and logs/
 * writable again on top (mounts/git.c, mounts/apply.c), and every call of
 * the sandbox that creates, writes or removes a name comes here first
 * (launcher/sandbox/seccomp_protect.c). Here the call's parent directory is
 * resolved as the kernel would (the caller's cwd or dirfd, through /proc/
 * PID, openat2 without symlinks or magic links):
 * - in the read-only part of a protected git directory: the path relative
 *   to it is looked up in git's allowlist (mounts/gitallow.c). Yes: the
 *   supervisor performs the call itself, on its own copy of the path and
 *   its own fd of the git directory (opened at start, outside the
 *   sandbox), one component at a time with O_NOFOLLOW, with the caller's
 *   umask and, as root, the owner the kernel would have given; an open's
 *   fd is the call's result (SECCOMP_IOCTL_NOTIF_ADDFD with
 *   SECCOMP_ADDFD_FLAG_SEND). No: EACCES and one line naming the path,
 *   before any effect.
 * - anywhere else: not ours (the caller answers "continue"). That is safe
 *   because the kernel still enforces: if another thread swaps the path
 *   after our look, the kernel meets the read-only mount and says EROFS.
 *   This decision is the boundary only for the calls performed here. */
#include "gitallow.h"

#include "run.h"

#include "../sandbox/sandbox.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/fsuid.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>

#include <seccomp.h>

#include "../../include/cleanup.h"
#include "../../include/sys.h"

#define WALK_MAX  16 /* levels from a parent up to its git directory */
#define LINES_MAX 20
#define COMMONDIR "../..\n" /* what git worktree add writes */
#define NO_LINKS  (RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS)

#ifndef STATX_ATTR_MOUNT_ROOT
#define STATX_ATTR_MOUNT_ROOT 0x00002000
#endif

int gitallow_open(struct gitallow *g, const struct git_watch *w, const struct sandbox_spec *s)
{
	cleanup_close int ns = -1;
	struct err err = {0};

	memset(g, 0, sizeof(*g));
	if (!w->n_allow)
		return 0;
	g->dirs = calloc(w->n_allow, sizeof(*g->dirs));
	if (!g->dirs)
		return -ENOMEM;
	/* A root caller's workload writes through idmapped binds (sandbox/
	 * enter.c); the supervisor does the same, as the workload. */
	g->as_caller = s->root_caller && geteuid() == 0;
	if (g->as_caller) {
		ns = userns_idmap_fd(s->caller_uid, s->uid_out, s->caller_gid, s->gid_out, &err);
		if (ns < 0) {
			gitallow_close(g);
			return ns;
		}
	}
	for (size_t i = 0; i < w->n_allow; i++) {
		struct gitallow_dir *d = &g->dirs[g->n];
		struct stat st;

		d->fd = g->as_caller
			    ? userns_idmapped_tree(w->allow[i], ns, &err)
			    : open(w->allow[i], O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (d->fd < 0 || fstat(d->fd, &st) < 0) {
			int e = d->fd < 0 && g->as_caller ? -d->fd : errno;

			if (d->fd >= 0)
				close(d->fd);
			gitallow_close(g);
			return -e;
		}
		d->dev = st.st_dev;
		d->ino = st.st_ino;
		d->host = w->allow[i];
		d->sandbox = w->allow_sb[i];
		g->n++;
	}
	return 0;
}

void gitallow_close(struct gitallow *g)
{
	for (size_t i = 0; i < g->n; i++)
		close(g->dirs[i].fd);
	free(g->dirs);
	memset(g, 0, sizeof(*g));
}

/* A NUL-terminated string of the caller's memory at addr: its length, or
 * -1 (unreadable, too long). Read up to each page end, as the string may
 * end just before an unmapped page. */
static ssize_t caller_string(pid_t pid, uint64_t addr, char *out, size_t size)
{
	size_t got = 0;

	while (got < size) {
		size_t page = 4096 - (size_t)((addr + got) % 4096);
		size_t want = page < size - got ? page : size - got;
		struct iovec local = {.iov_base = out + got, .iov_len = want};
		struct iovec remote = {.iov_base = (void *)(uintptr_t)(addr + got),
				       .iov_len = want};
		ssize_t n = process_vm_readv(pid, &local, 1, &remote, 1, 0);
		char *nul;

		if (n <= 0)
			return -1;
		nul = memchr(out + got, '\0', (size_t)n);
		if (nul)
			return nul - out;
		got += (size_t)n;
	}
	return -1;
}

/* One path argument: its parent as the caller's kernel would find it and,
 * when that lies in a protected git directory's read-only part, which one
 * and the path relative to it. */
struct where {
	int parent; /* O_PATH, sandbox side; -1 */
	char name[NAME_MAX + 1];
	long dir;	      /* index in g->dirs, -1: not ours */
	char rel[PATH_MAX];   /* relative to the git directory: "a/b/name" */
	char shown[PATH_MAX]; /* the sandbox path, for the line */
};

static void where_close(struct where *w)
{
	if (w->parent >= 0)
		close(w->parent);
	w->parent = -1;
}

static long dir_of(const struct gitallow *g, const struct stat *st)
{
	for (size_t i = 0; i < g->n; i++)
		if (g->dirs[i].ino == st->st_ino && g->dirs[i].dev == st->st_dev)
			return (long)i;
	return -1;
}

/* The name of the entry of directory fd whose inode is ino. */
static int name_in(int fd, ino_t ino, char *out, size_t size)
{
	int rd = openat(fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	DIR *d = rd >= 0 ? fdopendir(rd) : NULL;
	struct dirent *e;
	int r = -ENOENT;

	if (!d) {
		if (rd >= 0)
			close(rd);
		return -errno;
	}
	while ((e = readdir(d)))
		if (e->d_ino == ino && strcmp(e->d_name, ".") && strcmp(e->d_name, "..")) {
			r = snprintf(out, size, "%s", e->d_name) < (int)size ? 0 : -ENAMETOOLONG;
			break;
		}
	closedir(d);
	return r;
}

/* The id of the mount fd lies on (0: unknown). */
static uint64_t mount_id(int fd)
{
	struct statx stx;

	if (statx(fd, "", AT_EMPTY_PATH | AT_STATX_DONT_SYNC, STATX_MNT_ID, &stx) < 0 ||
	    !(stx.stx_mask & STATX_MNT_ID))
		return 0;
	return stx.stx_mnt_id;
}

/* From the parent up to a protected git directory: w->dir and w->rel. Every
 * directory on the way must lie on the git directory's own read-only
 * mount: another mount between (a path the policy protects on its own,
 * inside the git directory) is not the allowlist's to open. */
static void find_dir(const struct gitallow *g, struct where *w)
{
	char names[WALK_MAX][NAME_MAX + 1];
	size_t depth = 0;
	int cur = fcntl(w->parent, F_DUPFD_CLOEXEC, 3);
	uint64_t mnt = mount_id(w->parent);
	struct stat st;

	while (mnt && cur >= 0 && fstat(cur, &st) == 0 && mount_id(cur) == mnt) {
		long i = dir_of(g, &st);
		int up;
		struct stat ust;
		size_t len = 0;

		if (i >= 0) {
			w->rel[0] = '\0';
			for (size_t k = depth; k-- > 0;)
				len += (size_t)snprintf(w->rel + len, sizeof(w->rel) - len, "%s/",
							names[k]);
			if (len + strlen(w->name) >= sizeof(w->rel))
				break;
			strcat(w->rel, w->name);
			snprintf(w->shown, sizeof(w->shown), "%s/%s", g->dirs[i].sandbox, w->rel);
			w->dir = i;
			break;
		}
		if (depth == WALK_MAX)
			break;
		up = openat(cur, "..", O_PATH | O_DIRECTORY | O_CLOEXEC);
		if (up < 0 || fstat(up, &ust) < 0 ||
		    (ust.st_ino == st.st_ino && ust.st_dev == st.st_dev) ||
		    name_in(up, st.st_ino, names[depth], sizeof(names[depth])) < 0) {
			if (up >= 0)
				close(up);
			break;
		}
		depth++;
		close(cur);
		cur = up;
	}
	if (cur >= 0)
		close(cur);
}

int caller_parent(pid_t pid, int dfd, uint64_t addr, char *name, size_t size)
{
	char path[PATH_MAX], proc[64], *slash;
	const char *dir = ".";
	cleanup_close int base = -1;
	uint64_t how = NO_LINKS;
	ssize_t n;
	int fd;

	name[0] = '\0';
	n = caller_string(pid, addr, path, sizeof(path));
	if (n <= 0)
		return -1;
	while (n > 1 && path[n - 1] == '/')
		path[--n] = '\0';
	if (path[0] == '/') {
		/* Absolute: beneath the sandbox's root, as the caller sees it. */
		snprintf(proc, sizeof(proc), "/proc/%d/root", pid);
		how |= RESOLVE_IN_ROOT;
	} else if (dfd == AT_FDCWD) {
		snprintf(proc, sizeof(proc), "/proc/%d/cwd", pid);
	} else {
		snprintf(proc, sizeof(proc), "/proc/%d/fd/%d", pid, dfd);
	}
	slash = strrchr(path, '/');
	if (slash) {
		*slash = '\0';
		dir = path[0] ? path : "/";
	}
	if (snprintf(name, size, "%s", slash ? slash + 1 : path) >= (int)size || !name[0] ||
	    !strcmp(name, ".") || !strcmp(name, "..")) {
		name[0] = '\0';
		return -1;
	}
	base = open(proc, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (base < 0)
		return -1;
	fd = sys_openat2(base, dir, O_PATH | O_DIRECTORY | O_CLOEXEC, how);
	return fd < 0 ? -1 : fd;
}

static void look(const struct gitallow *g, pid_t pid, int dfd, uint64_t addr, struct where *w)
{
	struct statvfs vfs;

	*w = (struct where){.parent = -1, .dir = -1};
	w->parent = caller_parent(pid, dfd, addr, w->name, sizeof(w->name));
	/* Only a read-only mount can be a git directory's protected part;
	 * everything else is the kernel's to decide. */
	if (w->parent < 0 || fstatvfs(w->parent, &vfs) < 0 || !(vfs.f_flag & ST_RDONLY))
		return;
	find_dir(g, w);
}

struct ids {
	mode_t umask;
	uid_t uid; /* fsuid, fsgid: host ids (read from outside) */
	gid_t gid;
};

/* The caller's umask, fsuid and fsgid. */
static int caller_ids(pid_t pid, struct ids *id)
{
	mode_t *umask_out = &id->umask;
	uid_t *uid = &id->uid;
	gid_t *gid = &id->gid;

	char path[64], line[256];
	FILE *f;
	int found = 0;

	snprintf(path, sizeof(path), "/proc/%d/status", pid);
	f = fopen(path, "re");
	if (!f)
		return -errno;
	*umask_out = 022;
	while (fgets(line, sizeof(line), f)) {
		unsigned a, b, c, d;

		if (sscanf(line, "Umask: %o", &a) == 1)
			*umask_out = (mode_t)a & 0777;
		else if (sscanf(line, "Uid: %u %u %u %u", &a, &b, &c, &d) == 4 && ++found)
			*uid = d;
		else if (sscanf(line, "Gid: %u %u %u %u", &a, &b, &c, &d) == 4 && ++found)
			*gid = d;
	}
	fclose(f);
	return found == 2 ? 0 : -EIO;
}

/* As root (a root caller, whose workload is another uid), every change is
 * made with the caller's fsuid and fsgid, through an idmapped clone of the
 * git directory like the caller's own mount (gitallow_open()): the kernel
 * checks the caller's permissions and gives a new file the owner it would
 * have given the caller. Rootless, the supervisor is the caller's user. */
static bool become(const struct gitallow *g, const struct ids *id)
{
	if (!g->as_caller)
		return true;
	setfsgid(id->gid);
	setfsuid(id->uid);
	return (uid_t)setfsuid((uid_t)-1) == id->uid && (gid_t)setfsgid((gid_t)-1) == id->gid;
}

static void unbecome(const struct gitallow *g)
{
	if (!g->as_caller)
		return;
	setfsuid(0);
	setfsgid(0);
}

/* The host directory that is w's parent: walked from the git directory's
 * fd one component at a time, never through a symlink, and checked to be
 * the very directory the caller's path named. */
static int host_parent(const struct gitallow *g, const struct where *w)
{
	char rel[PATH_MAX], *p = rel, *slash;
	int fd = fcntl(g->dirs[w->dir].fd, F_DUPFD_CLOEXEC, 3);
	struct stat a, b;

	snprintf(rel, sizeof(rel), "%s", w->rel);
	while (fd >= 0 && (slash = strchr(p, '/'))) {
		int next;

		*slash = '\0';
		next = openat(fd, p, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		close(fd);
		fd = next;
		p = slash + 1;
	}
	if (fd < 0)
		return -errno;
	if (fstat(fd, &a) < 0 || fstat(w->parent, &b) < 0 || a.st_ino != b.st_ino ||
	    a.st_dev != b.st_dev) {
		close(fd);
		return -EXDEV;
	}
	return fd;
}

static bool mount_root(const struct where *w)
{
	struct statx stx;

	return statx(w->parent, w->name, AT_SYMLINK_NOFOLLOW | AT_STATX_DONT_SYNC, STATX_TYPE,
		     &stx) == 0 &&
	       (stx.stx_attributes_mask & STATX_ATTR_MOUNT_ROOT) &&
	       (stx.stx_attributes & STATX_ATTR_MOUNT_ROOT);
}

/* The line goes where the listener's lines go (the workload's stderr, or
 * a paddock exec client's: denials_say()), at most LINES_MAX a listener. */
static void say(struct gitallow *g, struct denials_sink *to, const struct where *w,
		const struct seccomp_notif *req, int e)
{
	char *call = seccomp_syscall_resolve_num_arch(req->data.arch, req->data.nr);

	g->refused++;
	if (to->notice_lines++ < LINES_MAX)
		denials_say(
		    to,
		    "paddock: %s is protected by paddock (policy protect_git \"allowlist\": "
		    "not a change git makes); the change was refused (%s by pid %u: %s)\n",
		    w->shown, call ? call : "?", (unsigned)req->pid, strerror(e));
	free(call);
}

/* rename(X.lock, X) onto a name git may not write, with the very bytes X
 * holds (git submodule update rewrites a config unchanged): drop the lock
 * and call it done. */
static bool unchanged_rewrite(int hfrom, const struct where *from, int hto, const struct where *to)
{
	size_t n = strlen(to->rel);
	struct stat sa;

	return strncmp(from->rel, to->rel, n) == 0 && strcmp(from->rel + n, ".lock") == 0 &&
	       notice_same_bytes(hfrom, from->name, hto, to->name, &sa) &&
	       unlinkat(hfrom, from->name, 0) == 0;
}

struct call {
	enum {
		C_OPEN,
		C_MKDIR,
		C_REMOVE,
		C_RENAME,
		C_CHMOD
	} kind;
	int dfd[2];
	uint64_t path[2];
	int flags;
	mode_t mode;
	unsigned rflags;
	bool rmdir; /* C_REMOVE: a directory */
};

static bool classify(const struct seccomp_notif *req, struct call *c)
{
	const __u64 *a = req->data.args;
	int nr = req->data.nr;

	*c = (struct call){.dfd = {AT_FDCWD, AT_FDCWD}};
#ifdef SYS_open
	if (nr == SYS_open) {
		*c = (struct call){C_OPEN, {AT_FDCWD, 0}, {a[0], 0}, (int)a[1], (mode_t)a[2], 0, 0};
		return true;
	}
	if (nr == SYS_creat) {
		*c = (struct call){
		    C_OPEN, {AT_FDCWD, 0}, {a[0], 0}, O_CREAT | O_WRONLY | O_TRUNC, (mode_t)a[1], 0,
		    0};
		return true;
	}
	if (nr == SYS_mkdir) {
		*c = (struct call){C_MKDIR, {AT_FDCWD, 0}, {a[0], 0}, 0, (mode_t)a[1], 0, 0};
		return true;
	}
	if (nr == SYS_unlink || nr == SYS_rmdir) {
		*c = (struct call){C_REMOVE, {AT_FDCWD, 0}, {a[0], 0}, 0, 0, 0, nr == SYS_rmdir};
		return true;
	}
	if (nr == SYS_rename) {
		*c = (struct call){C_RENAME, {AT_FDCWD, AT_FDCWD}, {a[0], a[1]}, 0, 0, 0, 0};
		return true;
	}
	if (nr == SYS_chmod) {
		*c = (struct call){C_CHMOD, {AT_FDCWD, 0}, {a[0], 0}, 0, (mode_t)a[1], 0, 0};
		return true;
	}
#endif
#ifdef SYS_fchmodat2
	if (nr == SYS_fchmodat2 && (int)a[3] != 0)
		return false; /* AT_SYMLINK_NOFOLLOW, AT_EMPTY_PATH: not git's */
	if (nr == SYS_fchmodat || nr == SYS_fchmodat2) {
#else
	if (nr == SYS_fchmodat) {
#endif
		*c = (struct call){C_CHMOD, {(int)a[0], 0}, {a[1], 0}, 0, (mode_t)a[2], 0, 0};
		return true;
	}
	if (nr == SYS_openat) {
		*c =
		    (struct call){C_OPEN, {(int)a[0], 0}, {a[1], 0}, (int)a[2], (mode_t)a[3], 0, 0};
		return true;
	}
	if (nr == SYS_mkdirat) {
		*c = (struct call){C_MKDIR, {(int)a[0], 0}, {a[1], 0}, 0, (mode_t)a[2], 0, 0};
		return true;
	}
	if (nr == SYS_unlinkat) {
		*c = (struct call){
		    C_REMOVE, {(int)a[0], 0}, {a[1], 0}, 0, 0, 0, ((int)a[2] & AT_REMOVEDIR) != 0};
		return true;
	}
	if (nr == SYS_renameat || nr == SYS_renameat2) {
		*c = (struct call){C_RENAME,
				   {(int)a[0], (int)a[2]},
				   {a[1], a[3]},
				   0,
				   0,
				   nr == SYS_renameat2 ? (unsigned)a[4] : 0,
				   0};
		return true;
	}
	return false;
}

/* The open itself (as the caller): its fd handed over as the call's
 * result. */
static void do_open(struct gitallow *g, int listener, const struct seccomp_notif *req,
		    const struct call *c, int hp, const struct where *w, bool commondir,
		    const struct ids *id, struct seccomp_notif_resp *resp, bool *sent)
{
	struct stat st;
	/* O_NONBLOCK: a FIFO must not hold the supervisor (cleared after). */
	int flags = (c->flags & ~O_CLOEXEC) | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK;
	cleanup_close int fd = -1;
	struct seccomp_notif_addfd add = {0};

	fd = openat(hp, w->name,
		    commondir ? O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC : flags,
		    c->mode & ~id->umask & 07777);
	if (fd < 0) {
		resp->error = -errno;
		return;
	}
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) ||
	    (!(c->flags & O_NONBLOCK) &&
	     fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK) < 0)) {
		resp->error = -EACCES; /* not a regular file: not git's */
		return;
	}
	if (commondir) {
		/* The file holds what git worktree add writes; what the caller
		 * writes goes to an anonymous file. */
		if (write(fd, COMMONDIR, strlen(COMMONDIR)) != (ssize_t)strlen(COMMONDIR)) {
			resp->error = -EIO;
			return;
		}
		close(fd);
		fd = memfd_create("commondir", MFD_CLOEXEC);
		if (fd < 0) {
			resp->error = -errno;
			return;
		}
	}
	add.id = req->id;
	add.flags = SECCOMP_ADDFD_FLAG_SEND;
	add.srcfd = (__u32)fd;
	add.newfd_flags = (c->flags & O_CLOEXEC) ? O_CLOEXEC : 0;
	if (ioctl(listener, SECCOMP_IOCTL_NOTIF_ADDFD, &add) >= 0 || errno == ENOENT) {
		*sent = true; /* done, or the caller is gone */
		g->performed++;
		return;
	}
	resp->error = -errno;
}

/* The change itself, as the caller: mkdir, chmod, unlink or rename. */
static int change(int hp, int hp2, const struct call *c, const struct where *w, mode_t umask_)
{
	if (c->kind == C_MKDIR)
		return mkdirat(hp, w[0].name, c->mode & ~umask_ & 07777) < 0 ? -errno : 0;
	if (c->kind == C_REMOVE)
		return unlinkat(hp, w[0].name, c->rmdir ? AT_REMOVEDIR : 0) < 0 ? -errno : 0;
	if (c->kind == C_CHMOD) {
		cleanup_close int fd = openat(hp, w[0].name, O_PATH | O_NOFOLLOW | O_CLOEXEC);
		struct stat st;
		char proc[64];

		/* Through the fd's own mount: the kernel's owner check. */
		if (fd < 0 || fstat(fd, &st) < 0)
			return -errno;
		if (!S_ISREG(st.st_mode) && !S_ISDIR(st.st_mode))
			return -EPERM;
		snprintf(proc, sizeof(proc), "/proc/self/fd/%d", fd);
		return chmod(proc, c->mode & 07777) < 0 ? -errno : 0;
	}
	return syscall(SYS_renameat2, hp, w[0].name, hp2, w[1].name, c->rflags) < 0 ? -errno : 0;
}

static void perform(struct gitallow *g, int listener, struct denials_sink *to,
		    const struct seccomp_notif *req, const struct call *c, struct where *w,
		    struct seccomp_notif_resp *resp, bool *sent)
{
	enum gitallow_op op = c->kind == C_OPEN || c->kind == C_CHMOD ? GITALLOW_FILE
			      : c->kind == C_MKDIR		      ? GITALLOW_MKDIR
			      : c->kind == C_REMOVE		      ? GITALLOW_REMOVE
								      : GITALLOW_RENAME;
	enum gitallow_verdict v[2];
	cleanup_close int hp = -1, hp2 = -1;
	struct ids id = {022, 0, 0};

	resp->flags = 0;
	resp->error = 0;
	resp->val = 0;
	if (c->kind == C_RENAME && (w[0].dir < 0 || w[1].dir < 0 || w[0].dir != w[1].dir)) {
		/* Two mounts: the kernel says EXDEV (and mv copies, then
		 * removes). A name git does not make is refused here, with
		 * the line, rather than file by file after the copy. */
		const struct where *in = w[0].dir >= 0 ? &w[0] : &w[1];

		resp->error = -EXDEV;
		if (gitallow_check(in->rel, GITALLOW_RENAME) == GITALLOW_NO &&
		    ioctl(listener, SECCOMP_IOCTL_NOTIF_ID_VALID, &req->id) == 0) {
			resp->error = -EACCES;
			say(g, to, in, req, EACCES);
		}
		return;
	}
	v[0] = gitallow_check(w[0].rel, op);
	v[1] = c->kind == C_RENAME ? gitallow_check(w[1].rel, op) : GITALLOW_YES;
	if (c->kind == C_OPEN && (c->flags & O_TMPFILE) == O_TMPFILE)
		v[0] = GITALLOW_NO;
	if (c->kind == C_RENAME && (c->rflags & ~(unsigned)(RENAME_NOREPLACE | RENAME_EXCHANGE)))
		v[0] = GITALLOW_NO;
	/* A mount point in the git directory (its objects, refs and logs, a
	 * path the policy protects on its own): the kernel's answer, EBUSY
	 * for a removal or a rename, EROFS else (what is mounted there is
	 * not the host file the supervisor would open). */
	if (mount_root(&w[0]) || (c->kind == C_RENAME && mount_root(&w[1]))) {
		resp->error = c->kind == C_REMOVE || c->kind == C_RENAME ? -EBUSY : -EROFS;
		return;
	}
	hp = host_parent(g, &w[0]);
	if (hp >= 0 && c->kind == C_RENAME)
		hp2 = host_parent(g, &w[1]);
	if (hp < 0 || (c->kind == C_RENAME && hp2 < 0) || caller_ids((pid_t)req->pid, &id) < 0) {
		resp->error = -EACCES;
		return;
	}
	/* What we read belongs to this call only if it is still pending. */
	if (ioctl(listener, SECCOMP_IOCTL_NOTIF_ID_VALID, &req->id) < 0) {
		resp->error = -ENOENT;
		return;
	}
	if (!become(g, &id)) {
		unbecome(g);
		resp->error = -EACCES;
		return;
	}
	if (c->kind == C_RENAME && v[0] == GITALLOW_YES && v[1] == GITALLOW_NO && !c->rflags &&
	    unchanged_rewrite(hp, &w[0], hp2, &w[1])) {
		g->unchanged++;
	} else if (v[0] == GITALLOW_NO || v[1] != GITALLOW_YES ||
		   (v[0] == GITALLOW_COMMONDIR && c->kind != C_OPEN && c->kind != C_CHMOD)) {
		resp->error = -EACCES;
		say(g, to, v[0] == GITALLOW_NO ? &w[0] : &w[1], req, EACCES);
	} else if (v[0] == GITALLOW_COMMONDIR && c->kind == C_CHMOD) {
		/* the supervisor's file keeps its mode */
	} else if (c->kind == C_OPEN) {
		do_open(g, listener, req, c, hp, &w[0], v[0] == GITALLOW_COMMONDIR, &id, resp,
			sent);
	} else {
		resp->error = change(hp, hp2, c, w, id.umask);
		if (!resp->error)
			g->performed++;
	}
	unbecome(g);
}

bool gitallow_serve(struct gitallow *g, int listener, struct denials_sink *to,
		    const struct seccomp_notif *req, struct seccomp_notif_resp *resp, bool *sent)
{
	struct call c;
	struct where w[2] = {{.parent = -1, .dir = -1}, {.parent = -1, .dir = -1}};
	size_t n;
	bool ours = false;

	*sent = false;
	if (!g->n || !classify(req, &c))
		return false;
	n = c.kind == C_RENAME ? 2 : 1;
	for (size_t i = 0; i < n; i++) {
		look(g, (pid_t)req->pid, c.dfd[i], c.path[i], &w[i]);
		ours |= w[i].dir >= 0;
	}
	if (ours) {
		resp->id = req->id;
		perform(g, listener, to, req, &c, w, resp, sent);
	}
	for (size_t i = 0; i < n; i++)
		where_close(&w[i]);
	return ours;
}
