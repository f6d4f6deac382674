/* Performing the mount plan, in the child, inside new user and mount
 * namespaces. Every path inside the new root is resolved with openat2()
 * without following symlinks, and every mount is made by fd (open_tree,
 * fsmount, move_mount), so a symlink swapped in during setup cannot redirect
 * a mount (CVE-2021-30465, the runc mount-target race). */
#include "mounts.h"

#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../include/cleanup.h"
#include "../include/sys.h"

/* Resolution inside the new root: never follow a symlink, never leave it. */
#define IN_ROOT (RESOLVE_IN_ROOT | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS)

struct tree {
	int fd;		     /* detached mount (open_tree clone), -1 if none */
	bool is_dir;	     /* the source is a directory */
	char link[PATH_MAX]; /* copy_symlink: the source's link text */
};

static int set_attr(int fd, unsigned set, bool recursive, const char *what, struct err *err)
{
	struct mount_attr attr = {.attr_set = set};
	unsigned flags = AT_EMPTY_PATH | (recursive ? AT_RECURSIVE : 0);

	if (mount_setattr(fd, "", flags, &attr, sizeof(attr)) < 0)
		return err_sys(err, errno, "%s: mount_setattr", what);
	return 0;
}

/* Open the directory that will contain the last component of path (below
 * rootfd), creating missing directories on the way, mode 0755. */
static int open_parent(int rootfd, const char *path, const char **last, struct err *err)
{
	char buf[PATH_MAX];
	cleanup_close int dirfd = -1;
	char *p, *slash;

	if (snprintf(buf, sizeof(buf), "%s", path + 1) >= (int)sizeof(buf))
		return err_set(err, ENAMETOOLONG, "%s: path too long", path);
	dirfd = fcntl(rootfd, F_DUPFD_CLOEXEC, 3);
	if (dirfd < 0)
		return err_sys(err, errno, "dup");
	p = buf;
	while ((slash = strchr(p, '/'))) {
		int next;

		*slash = '\0';
		if (mkdirat(dirfd, p, 0755) < 0 && errno != EEXIST)
			return err_sys(err, errno, "mkdir %s", path);
		next = sys_openat2(dirfd, p, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC,
				   RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS);
		if (next < 0)
			return err_sys(err, next, "open %s (component %s)", path, p);
		close(dirfd);
		dirfd = next;
		p = slash + 1;
	}
	*last = path + 1 + (p - buf);
	return take_fd(&dirfd);
}

/* Create the mount point target (a directory, or an empty file when the
 * thing mounted on it is not a directory) and return an O_PATH fd to it. */
static int make_mountpoint(int rootfd, const char *target, bool dir, struct err *err)
{
	cleanup_close int parent = -1;
	const char *last;
	int fd;

	parent = open_parent(rootfd, target, &last, err);
	if (parent < 0)
		return parent;
	if (dir) {
		if (mkdirat(parent, last, 0755) < 0 && errno != EEXIST)
			return err_sys(err, errno, "mkdir %s", target);
	} else {
		fd = openat(parent, last, O_WRONLY | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0444);
		if (fd < 0 && errno != EEXIST && errno != EISDIR && errno != EROFS &&
		    errno != EACCES)
			return err_sys(err, errno, "create %s", target);
		if (fd >= 0)
			close(fd);
	}
	fd = sys_openat2(parent, last, O_PATH | O_NOFOLLOW | O_CLOEXEC,
			 RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS);
	if (fd < 0)
		return err_sys(err, fd, "open %s", target);
	return fd;
}

static int attach(int mnt, int rootfd, const char *target, bool dir, struct err *err)
{
	cleanup_close int tfd = make_mountpoint(rootfd, target, dir, err);

	if (tfd < 0)
		return tfd;
	if (move_mount(mnt, "", tfd, "", MOVE_MOUNT_F_EMPTY_PATH | MOVE_MOUNT_T_EMPTY_PATH) < 0)
		return err_sys(err, errno, "move_mount onto %s", target);
	return 0;
}

/* Open a bind source without following any symlink. Returns an O_PATH fd,
 * -ENOENT or -EACCES with op->skipped (and err untouched) for a missing or
 * unreachable optional source, or -errno. A symlink
 * source is refused unless the policy asks to copy it. */
static int open_source(struct mount_op *op, struct stat *st, struct err *err)
{
	int fd = sys_openat2(AT_FDCWD, op->source, O_PATH | O_NOFOLLOW | O_CLOEXEC,
			     RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS);

	/* Missing, or where the caller cannot look (another user's home):
	 * nothing the sandbox could have seen either. */
	if ((fd == -ENOENT || fd == -EACCES) && op->optional) {
		op->skipped = true;
		return fd;
	}
	if (fd == -ELOOP)
		return err_set(err, ELOOP, "%s.source: %s has a symlink in its path", op->what,
			       op->source);
	if (fd < 0)
		return err_sys(err, fd, "%s.source: %s", op->what, op->source);
	if (fstat(fd, st) < 0) {
		close(fd);
		return err_sys(err, errno, "%s.source: stat %s", op->what, op->source);
	}
	if (S_ISLNK(st->st_mode) && !op->copy_symlink) {
		close(fd);
		return err_set(err, ELOOP, "%s.source: %s is a symlink (set \"symlink\": \"copy\")",
			       op->what, op->source);
	}
	op->as_symlink = S_ISLNK(st->st_mode);
	return fd;
}

int mounts_check_sources(struct mount_plan *plan, struct err *err)
{
	for (size_t i = 0; i < plan->n; i++) {
		struct stat st;
		int fd;

		if (plan->ops[i].kind != MOUNT_OP_BIND)
			continue;
		fd = open_source(&plan->ops[i], &st, err);
		if (fd < 0 && !plan->ops[i].skipped)
			return fd;
		if (fd >= 0)
			close(fd);
	}
	return 0;
}

/* A detached clone of a host path, taken before the new root hides
 * anything, with its final flags already set. */
static int capture(struct mount_op *op, struct tree *t, struct err *err)
{
	unsigned attrs = MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV;
	cleanup_close int fd = -1;
	struct stat st;
	ssize_t n;

	if (op->given_fd > 0) {
		/* Made and flagged (nosuid, nodev, idmapped) by the
		 * supervisor: our user namespace may attach it but not change
		 * a mount the host's user namespace owns. */
		t->fd = op->given_fd;
		op->given_fd = 0;
		if (fstat(t->fd, &st) < 0)
			return err_sys(err, errno, "%s: fstat %s", op->what, op->source);
		t->is_dir = S_ISDIR(st.st_mode);
		return 0;
	}
	fd = open_source(op, &st, err);
	if (fd < 0)
		return op->skipped ? 0 : fd;
	if (S_ISLNK(st.st_mode)) {
		n = readlinkat(fd, "", t->link, sizeof(t->link) - 1);
		if (n < 0)
			return err_sys(err, errno, "%s: readlink %s", op->what, op->source);
		t->link[n] = '\0';
		return 0;
	}
	t->is_dir = S_ISDIR(st.st_mode);
	t->fd =
	    open_tree(fd, "", OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | AT_EMPTY_PATH | AT_RECURSIVE);
	if (t->fd < 0)
		return err_sys(err, errno, "%s: open_tree %s", op->what, op->source);
	/* Read-only is set on the detached clone, recursively, before it is
	 * attached: there is never a moment where the tree is visible and
	 * writable. */
	if (op->readonly)
		attrs |= MOUNT_ATTR_RDONLY;
	return set_attr(t->fd, attrs, true, op->what, err);
}

static int new_fs(const char *type, const char *size, const char *mode, unsigned attrs,
		  const char *what, struct err *err)
{
	cleanup_close int fs = fsopen(type, FSOPEN_CLOEXEC);
	int mnt;

	if (fs < 0)
		return err_sys(err, errno, "%s: fsopen %s", what, type);
	if (size && fsconfig(fs, FSCONFIG_SET_STRING, "size", size, 0) < 0)
		return err_sys(err, errno, "%s: %s size=%s", what, type, size);
	if (mode && fsconfig(fs, FSCONFIG_SET_STRING, "mode", mode, 0) < 0)
		return err_sys(err, errno, "%s: %s mode=%s", what, type, mode);
	if (strcmp(type, "devpts") == 0 &&
	    (fsconfig(fs, FSCONFIG_SET_STRING, "ptmxmode", "0666", 0) < 0 ||
	     fsconfig(fs, FSCONFIG_SET_FLAG, "newinstance", NULL, 0) < 0))
		return err_sys(err, errno, "%s: devpts options", what);
	if (fsconfig(fs, FSCONFIG_CMD_CREATE, NULL, NULL, 0) < 0)
		return err_sys(err, errno, "%s: create %s", what, type);
	mnt = fsmount(fs, FSMOUNT_CLOEXEC, attrs);
	if (mnt < 0)
		return err_sys(err, errno, "%s: fsmount %s", what, type);
	return mnt;
}

static int mount_fs(int rootfd, const char *target, const char *type, const char *size,
		    const char *mode, unsigned attrs, const char *what, struct err *err)
{
	cleanup_close int mnt = new_fs(type, size, mode, attrs, what, err);

	if (mnt < 0)
		return mnt;
	return attach(mnt, rootfd, target, true, err);
}

static int tmpfs_op(int rootfd, const struct mount_op *op, struct err *err)
{
	char size[32], mode[16];

	snprintf(size, sizeof(size), "%llu", (unsigned long long)op->size);
	snprintf(mode, sizeof(mode), "%o", op->mode);
	return mount_fs(rootfd, op->target, "tmpfs", op->size ? size : NULL, mode,
			MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV, op->what, err);
}

static int symlink_at(int rootfd, const char *link, const char *target, struct err *err)
{
	cleanup_close int parent = -1;
	const char *last;

	parent = open_parent(rootfd, target, &last, err);
	if (parent < 0)
		return parent;
	if (symlinkat(link, parent, last) < 0)
		return err_sys(err, errno, "symlink %s -> %s", target, link);
	return 0;
}

static const char *const dev_nodes[] = {"null", "zero", "full", "random", "urandom", "tty"};
static const char *const dev_links[][2] = {
    {"/proc/self/fd", "fd"},	   {"/proc/self/fd/0", "stdin"}, {"/proc/self/fd/1", "stdout"},
    {"/proc/self/fd/2", "stderr"}, {"pts/ptmx", "ptmx"},	 {"/proc/kcore", "core"},
};

/* A minimal /dev: a small tmpfs with bind mounts of the harmless host
 * character devices (a user namespace cannot mknod), a private devpts
 * instance, /dev/shm, and the usual symlinks; then read-only, so the
 * workload cannot add nodes or files to it. */
static int dev_op(int rootfd, const struct mount_op *op, struct err *err)
{
	cleanup_close int dev = -1;
	char path[PATH_MAX];

	dev = new_fs("tmpfs", "65536", "755", MOUNT_ATTR_NOSUID | MOUNT_ATTR_NOEXEC, op->what, err);
	if (dev < 0)
		return dev;
	/* Attached first, then filled: moving mounts into a detached tree is
	 * only allowed on recent kernels. */
	if (attach(dev, rootfd, op->target, true, err) < 0)
		return err_wrap(err, "%s", op->what);
	for (size_t i = 0; i < sizeof(dev_nodes) / sizeof(dev_nodes[0]); i++) {
		cleanup_close int src = -1;
		int r;

		snprintf(path, sizeof(path), "/dev/%s", dev_nodes[i]);
		src = open_tree(AT_FDCWD, path, OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC);
		if (src < 0)
			return err_sys(err, errno, "%s: open_tree %s", op->what, path);
		/* Device nodes need the mount without nodev; nosuid and
		 * noexec still apply. */
		r = set_attr(src, MOUNT_ATTR_NOSUID | MOUNT_ATTR_NOEXEC, false, op->what, err);
		if (r < 0)
			return r;
		snprintf(path, sizeof(path), "/%s", dev_nodes[i]);
		r = attach(src, dev, path, false, err);
		if (r < 0)
			return err_wrap(err, "%s", op->what);
	}
	for (size_t i = 0; i < sizeof(dev_links) / sizeof(dev_links[0]); i++) {
		int r;

		if (strcmp(dev_links[i][1], "core") == 0)
			continue; /* not exposed: /proc/kcore is for debuggers only */
		snprintf(path, sizeof(path), "/%s", dev_links[i][1]);
		r = symlink_at(dev, dev_links[i][0], path, err);
		if (r < 0)
			return err_wrap(err, "%s", op->what);
	}
	if (mount_fs(dev, "/pts", "devpts", NULL, "620", MOUNT_ATTR_NOSUID | MOUNT_ATTR_NOEXEC,
		     op->what, err) < 0 ||
	    mount_fs(dev, "/shm", "tmpfs", "67108864", "1777", MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV,
		     op->what, err) < 0)
		return -err->code;
	return set_attr(dev, MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID | MOUNT_ATTR_NOEXEC, false,
			op->what, err);
}

/* A protected path: bind the existing inode (the one the supervisor checked
 * and locked) on itself, read-only. */
static int protect_op(int rootfd, const struct mount_op *op, struct err *err)
{
	cleanup_close int fd = -1, tree = -1;
	struct stat st;

	fd = sys_openat2(rootfd, op->target + 1, O_PATH | O_NOFOLLOW | O_CLOEXEC, IN_ROOT);
	if (fd < 0)
		return err_sys(err, fd, "%s: open %s", op->what, op->target);
	if (fstat(fd, &st) < 0)
		return err_sys(err, errno, "%s: stat %s", op->what, op->target);
	if (op->ino && (st.st_dev != op->dev || st.st_ino != op->ino))
		return err_set(err, EXDEV, "%s: %s changed during setup", op->what, op->target);
	tree =
	    open_tree(fd, "", OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | AT_EMPTY_PATH | AT_RECURSIVE);
	if (tree < 0)
		return err_sys(err, errno, "%s: open_tree %s", op->what, op->target);
	if (set_attr(tree, MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV, true, op->what,
		     err) < 0)
		return -err->code;
	if (move_mount(tree, "", fd, "", MOVE_MOUNT_F_EMPTY_PATH | MOVE_MOUNT_T_EMPTY_PATH) < 0)
		return err_sys(err, errno, "%s: move_mount onto %s", op->what, op->target);
	return 0;
}

/* /proc, read-only or masked where the host's kernel state shows through,
 * as Docker's default masked and read-only paths: the kernel already refuses
 * most writes to a user namespace, this is defence in depth and keeps
 * secrets like /proc/kcore and /proc/keys from being read. */
static const char *const proc_readonly[] = {"sys", "sysrq-trigger", "irq", "bus", "fs"};
static const char *const proc_masked[] = {"kcore",	 "keys",	  "timer_list",
					  "sched_debug", "latency_stats", "acpi",
					  "scsi",	 "firmware",	  "interrupts"};

static int proc_path(int rootfd, const struct mount_op *op, const char *name, struct err *err)
{
	char path[PATH_MAX];
	int fd;

	if (snprintf(path, sizeof(path), "%s/%s", op->target + 1, name) >= (int)sizeof(path))
		return err_set(err, ENAMETOOLONG, "%s: path too long", op->what);
	fd = sys_openat2(rootfd, path, O_PATH | O_NOFOLLOW | O_CLOEXEC, IN_ROOT);
	if (fd == -ENOENT)
		return fd; /* not every kernel has every file: the caller skips it */
	if (fd < 0)
		return err_sys(err, fd, "%s: open /%s", op->what, path);
	return fd;
}

/* The name of path below op's target ("/proc/acpi" -> "acpi"), NULL when
 * it is not below it. */
static const char *below(const struct mount_op *op, const char *path)
{
	size_t n = strlen(op->target);

	return strncmp(path, op->target, n) == 0 && path[n] == '/' && path[n + 1] ? path + n + 1
										  : NULL;
}

/* One of op's procfs paths (name: relative to its target) read-only, as a
 * recursive bind of itself. A name that does not exist is skipped. */
static int proc_ro(int rootfd, const struct mount_op *op, const char *name, struct err *err)
{
	unsigned ro = MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV | MOUNT_ATTR_NOEXEC;
	cleanup_close int fd = proc_path(rootfd, op, name, err);
	cleanup_close int tree = -1;

	if (fd == -ENOENT)
		return 0;
	if (fd < 0)
		return fd;
	tree =
	    open_tree(fd, "", OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | AT_EMPTY_PATH | AT_RECURSIVE);
	if (tree < 0)
		return err_sys(err, errno, "%s: open_tree /proc/%s", op->what, name);
	if (set_attr(tree, ro, true, op->what, err) < 0)
		return -err->code;
	if (move_mount(tree, "", fd, "", MOVE_MOUNT_F_EMPTY_PATH | MOVE_MOUNT_T_EMPTY_PATH) < 0)
		return err_sys(err, errno, "%s: read-only /proc/%s", op->what, name);
	return 0;
}

/* One of op's procfs paths masked: a directory gets an empty read-only
 * tmpfs, a file the (read-only) null device, as runc does; a name that
 * does not exist is skipped, also as runc does. */
static int proc_mask(int rootfd, const struct mount_op *op, const char *name, struct err *err)
{
	unsigned ro = MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV | MOUNT_ATTR_NOEXEC;
	cleanup_close int fd = proc_path(rootfd, op, name, err);
	cleanup_close int cover = -1;
	struct stat st;

	if (fd == -ENOENT)
		return 0;
	if (fd < 0)
		return fd;
	if (fstat(fd, &st) < 0)
		return err_sys(err, errno, "%s: stat /proc/%s", op->what, name);
	if (S_ISDIR(st.st_mode))
		cover = new_fs("tmpfs", "4096", "555", ro, op->what, err);
	else
		cover = open_tree(AT_FDCWD, "/dev/null", OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC);
	if (cover < 0)
		return cover == -1 ? err_sys(err, errno, "%s: open_tree /dev/null", op->what)
				   : cover;
	/* Not nodev on the null device: it reads as empty, like
	 * Docker's masked files, instead of failing. */
	if (!S_ISDIR(st.st_mode) &&
	    set_attr(cover, MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID | MOUNT_ATTR_NOEXEC, false,
		     op->what, err) < 0)
		return -err->code;
	if (move_mount(cover, "", fd, "", MOVE_MOUNT_F_EMPTY_PATH | MOVE_MOUNT_T_EMPTY_PATH) < 0)
		return err_sys(err, errno, "%s: mask /proc/%s", op->what, name);
	return 0;
}

static int harden_proc(int rootfd, const struct mount_op *op, struct err *err)
{
	int r = 0;

	for (size_t i = 0; r == 0 && i < sizeof(proc_readonly) / sizeof(proc_readonly[0]); i++)
		r = proc_ro(rootfd, op, proc_readonly[i], err);
	for (size_t i = 0; r == 0 && i < op->n_readonly_paths; i++)
		if (below(op, op->readonly_paths[i]))
			r = proc_ro(rootfd, op, below(op, op->readonly_paths[i]), err);
	for (size_t i = 0; r == 0 && i < sizeof(proc_masked) / sizeof(proc_masked[0]); i++)
		r = proc_mask(rootfd, op, proc_masked[i], err);
	for (size_t i = 0; r == 0 && i < op->n_masked; i++)
		if (below(op, op->masked[i]))
			r = proc_mask(rootfd, op, below(op, op->masked[i]), err);
	return r;
}

static int host_proc(int rootfd, const struct mount_op *op, struct err *err)
{
	cleanup_close int tree =
	    open_tree(AT_FDCWD, "/proc", OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | AT_RECURSIVE);

	if (tree < 0)
		return err_sys(err, errno, "%s: open_tree /proc", op->what);
	if (set_attr(tree, MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV | MOUNT_ATTR_NOEXEC, true, op->what,
		     err) < 0)
		return -err->code;
	return attach(tree, rootfd, op->target, true, err);
}

/* The directory op->target bound on itself (recursively: mounts below stay
 * as they are), with attr applied to the new top mount (recursively when
 * recursive_attr), or as it is (attr NULL). One that does not exist, or is
 * not a directory, is left alone. */
static int on_itself(int rootfd, const struct mount_op *op, const struct mount_attr *attr,
		     bool recursive_attr, struct err *err)
{
	cleanup_close int fd = -1, tree = -1;

	fd = sys_openat2(rootfd, op->target + 1, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC,
			 IN_ROOT);
	if (fd == -ENOENT || fd == -ENOTDIR)
		return 0;
	if (fd < 0)
		return err_sys(err, fd, "%s: open %s", op->what, op->target);
	tree =
	    open_tree(fd, "", OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | AT_EMPTY_PATH | AT_RECURSIVE);
	if (tree < 0)
		return err_sys(err, errno, "%s: open_tree %s", op->what, op->target);
	if (attr && mount_setattr(tree, "", AT_EMPTY_PATH | (recursive_attr ? AT_RECURSIVE : 0),
				  (struct mount_attr *)attr, sizeof(*attr)) < 0)
		return err_sys(err, errno, "%s: mount_setattr %s", op->what, op->target);
	if (move_mount(tree, "", fd, "", MOVE_MOUNT_F_EMPTY_PATH | MOVE_MOUNT_T_EMPTY_PATH) < 0)
		return err_sys(err, errno, "%s: bind %s on itself", op->what, op->target);
	return 0;
}

/* A directory above a protected path becomes a mount point of its own, as
 * it is (see add_pins() in plan.c). One that does not exist, or is not a
 * directory, has nothing below it to protect: the placeholder covers it. */
static int pin_op(int rootfd, const struct mount_op *op, struct err *err)
{
	return on_itself(rootfd, op, NULL, false, err);
}

/* protect_git "allowlist" (docs/security.md, "The git directory as an
 * allowlist"): a git directory that is a whole bind, bound on itself
 * read-only (its bind stays writable below, so that a root caller's is
 * idmapped), or a data directory of a protected one (objects, refs, logs):
 * the read-only subtree bound on itself with the read-only flag cleared on
 * the top mount only (a protected path below keeps its own), so that git
 * writes there without a round trip to the supervisor. One missing is made
 * by the supervisor, on the allowlist. */
static int remount_op(int rootfd, const struct mount_op *op, struct err *err)
{
	const struct mount_attr ro = {.attr_set = MOUNT_ATTR_RDONLY},
				rw = {.attr_clr = MOUNT_ATTR_RDONLY};

	return on_itself(rootfd, op, op->readonly ? &ro : &rw, op->readonly, err);
}

static int apply_op(int rootfd, struct mount_op *op, struct tree *t, struct err *err)
{
	char proc_path[64];
	int r;

	switch (op->kind) {
	case MOUNT_OP_BIND:
		if (op->skipped)
			return 0;
		if (op->as_symlink)
			return symlink_at(rootfd, t->link, op->target, err);
		r = attach(t->fd, rootfd, op->target, t->is_dir, err);
		return r < 0 ? err_wrap(err, "%s", op->what) : 0;
	case MOUNT_OP_TMPFS:
		return tmpfs_op(rootfd, op, err);
	case MOUNT_OP_PROC:
		/* A fresh procfs for the new pid namespace. It must be mounted
		 * while the host's /proc is still visible: the kernel refuses a
		 * new procfs in a user namespace that cannot see a full one
		 * (mount_too_revealing(), fs/namespace.c). */
		if (op->host_proc)
			r = host_proc(rootfd, op, err);
		else
			r = mount_fs(rootfd, op->target, "proc", NULL, NULL,
				     MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV | MOUNT_ATTR_NOEXEC,
				     op->what, err);
		return r < 0 ? r : harden_proc(rootfd, op, err);
	case MOUNT_OP_DEV:
		return dev_op(rootfd, op, err);
	case MOUNT_OP_DIR: {
		cleanup_close int fd = make_mountpoint(rootfd, op->target, true, err);

		if (fd < 0)
			return err_wrap(err, "%s", op->what);
		/* fchmodat: the umask must not narrow the planned mode. */
		snprintf(proc_path, sizeof(proc_path), "/proc/self/fd/%d", fd);
		if (chmod(proc_path, op->mode) < 0)
			return err_sys(err, errno, "%s: chmod %s", op->what, op->target);
		return 0;
	}
	case MOUNT_OP_SYMLINK:
		r = symlink_at(rootfd, op->link, op->target, err);
		return r < 0 ? err_wrap(err, "%s", op->what) : 0;
	case MOUNT_OP_PROTECT:
		return op->skipped ? 0 : protect_op(rootfd, op, err);
	case MOUNT_OP_PIN:
		return pin_op(rootfd, op, err);
	case MOUNT_OP_REMOUNT:
		return remount_op(rootfd, op, err);
	}
	return err_set(err, EINVAL, "%s: unknown operation", op->what);
}

static void close_trees(struct tree *trees, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (trees[i].fd >= 0)
			close(trees[i].fd);
	free(trees);
}

static int build(struct mount_plan *plan, struct tree *trees, mounts_protect_cb cb, void *arg,
		 struct err *err)
{
	cleanup_close int root = -1;
	int r;

	/* Nothing we mount may propagate back to the host's namespace
	 * (mount_namespaces(7)); this must come before any mount. */
	if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0)
		return err_sys(err, errno, "make / private");
	/* Take every bind source first: the new root is attached on /tmp,
	 * which would hide sources that live there. */
	for (size_t i = 0; i < plan->n; i++) {
		if (plan->ops[i].kind != MOUNT_OP_BIND)
			continue;
		r = capture(&plan->ops[i], &trees[i], err);
		if (r < 0)
			return r;
	}
	root = new_fs("tmpfs", NULL, "755", MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV, "root", err);
	if (root < 0)
		return root;
	if (move_mount(root, "", AT_FDCWD, "/tmp", MOVE_MOUNT_F_EMPTY_PATH) < 0)
		return err_sys(err, errno, "attach the new root on /tmp");
	for (size_t i = 0; i < plan->n; i++) {
		enum mount_op_kind k = plan->ops[i].kind;

		if (cb && (k == MOUNT_OP_PIN || k == MOUNT_OP_PROTECT)) {
			r = cb(plan, arg, err);
			if (r < 0)
				return r;
			cb = NULL;
		}
		r = apply_op(root, &plan->ops[i], &trees[i], err);
		if (r < 0)
			return r;
	}
	/* The root itself is read-only: a write outside the planned mounts
	 * fails with EROFS instead of landing in a throw-away tmpfs. */
	r = set_attr(root, MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV, false, "root",
		     err);
	if (r < 0)
		return r;
	/* pivot_root(".", ".") stacks the old root on top of the new one;
	 * detaching "." then removes it (pivot_root(2), NOTES). */
	if (fchdir(root) < 0)
		return err_sys(err, errno, "chdir to the new root");
	r = sys_pivot_root(".", ".");
	if (r < 0)
		return err_sys(err, r, "pivot_root");
	if (umount2(".", MNT_DETACH) < 0)
		return err_sys(err, errno, "detach the old root");
	if (chdir("/") < 0)
		return err_sys(err, errno, "chdir /");
	return 0;
}

int mounts_apply(struct mount_plan *plan, mounts_protect_cb before_protect, void *arg,
		 struct err *err)
{
	struct tree *trees = calloc(plan->n ? plan->n : 1, sizeof(*trees));
	int r;

	if (!trees)
		return err_set(err, ENOMEM, "out of memory");
	for (size_t i = 0; i < plan->n; i++)
		trees[i].fd = -1;
	r = build(plan, trees, before_protect, arg, err);
	close_trees(trees, plan->n);
	return r;
}
