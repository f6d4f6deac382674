/* Protected paths, supervisor side. A protected path inside a writable bind
 * must be read-only in the sandbox, and when it does not exist yet its
 * creation must be impossible too. A mount needs something to sit on, so a
 * missing path gets a placeholder at its first missing component; the
 * read-only bind over it makes it impossible to write, unlink, rename over
 * or create anything below it from inside (a mount point is busy in its
 * namespace).
 *
 * A placeholder must not be junk in the user's repository (docs/security.md,
 * "No junk"): in the work tree it is an empty directory, which git never
 * shows or commits; inside a VCS's own directory (a git directory, .hg,
 * .jj), where no status shows anything, an empty file, because git reads
 * config.worktree and friends as files (and commondir holds ".", which
 * names the git directory itself: git behaves as without one). Each is
 * marked before it becomes visible, so that a run killed at any moment
 * leaves nothing a later run cannot prove is paddock's and remove: a
 * directory is made with mode 0500 (an empty directory of that mode is the
 * mark: mkdir(2) sets it atomically); a file is made as an O_TMPFILE,
 * written, marked with the extended attribute user.paddock.placeholder,
 * and only then linked in.
 *
 * Two sandboxes may share a workspace. Cleanup of a placeholder in the host
 * namespace would silently detach the other sandbox's mount on it (unlink
 * of a mount point in another namespace detaches it, Linux 3.18+), so every
 * sandbox holds a shared flock() on each protected inode for its lifetime,
 * and a placeholder is removed only by whoever can take it exclusively; the
 * mark lets the last one to end remove it, whoever made it. */
#include "mounts.h"

#include <dirent.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <poll.h>
#include <signal.h>
#include <sys/file.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <sys/xattr.h>
#include <unistd.h>

#include "../include/cleanup.h"
#include "../include/sys.h"

#define NOFOLLOW_BENEATH (RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS)
#define MARK		 "user.paddock.placeholder"
#define DIR_MARK_MODE	 0500

static bool dir_empty(int fd)
{
	int dup = fcntl(fd, F_DUPFD_CLOEXEC, 3);
	DIR *d;
	struct dirent *e;
	bool empty = true;

	if (dup < 0)
		return false;
	d = fdopendir(dup);
	if (!d) {
		close(dup);
		return false;
	}
	rewinddir(d);
	while (empty && (e = readdir(d)))
		if (strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0)
			empty = false;
	closedir(d);
	return empty;
}

static bool is_placeholder(int fd)
{
	struct stat st;
	char v[2];

	if (fstat(fd, &st) < 0)
		return false;
	if (S_ISDIR(st.st_mode))
		return (st.st_mode & 07777) == DIR_MARK_MODE && dir_empty(fd);
	return S_ISREG(st.st_mode) && st.st_size <= 2 && fgetxattr(fd, MARK, v, sizeof(v)) == 1 &&
	       v[0] == '1';
}

/* Is dirfd (named name) a VCS's own directory, where nothing is shown by
 * a status and a file placeholder is what its tool expects? */
static bool vcs_dir(int dirfd, const char *name)
{
	struct stat st;

	if (name && (!strcmp(name, ".git") || !strcmp(name, ".hg") || !strcmp(name, ".jj")))
		return true;
	return fstatat(dirfd, "HEAD", &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISREG(st.st_mode);
}

/* A placeholder file, complete and marked before its name appears. */
static int create_file(int dirfd, const char *name)
{
	cleanup_close int fd = openat(dirfd, ".", O_TMPFILE | O_RDWR | O_CLOEXEC, 0644);
	char proc[64];

	if (fd < 0 && (errno == EOPNOTSUPP || errno == EISDIR || errno == ENOENT)) {
		/* No O_TMPFILE on this filesystem: the name first. A kill
		 * before the mark leaves an empty unmarked file. */
		fd =
		    openat(dirfd, name, O_RDONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
		if (fd < 0)
			return -errno;
		(void)fsetxattr(fd, MARK, "1", 1, 0);
		(void)fchmod(fd, 0444);
		return take_fd(&fd);
	}
	if (fd < 0)
		return -errno;
	/* commondir "." is the git directory itself: git reads it, and
	 * behaves as without one (an empty commondir is fatal to git). */
	if (strcmp(name, "commondir") == 0 && write(fd, ".", 1) != 1)
		return -EIO;
	/* ENOTSUP: the filesystem has no user xattrs; see above. */
	(void)fsetxattr(fd, MARK, "1", 1, 0);
	/* After the mark: a user xattr needs write permission. */
	(void)fchmod(fd, 0444);
	snprintf(proc, sizeof(proc), "/proc/self/fd/%d", fd);
	if (linkat(AT_FDCWD, proc, dirfd, name, AT_SYMLINK_FOLLOW) < 0)
		return -errno;
	return take_fd(&fd);
}

/* A new placeholder (see the top of the file). */
static int create_placeholder(int dirfd, const char *dir_name, const char *name)
{
	int fd;

	if (vcs_dir(dirfd, dir_name))
		return create_file(dirfd, name);
	if (mkdirat(dirfd, name, DIR_MARK_MODE) < 0)
		return -errno;
	fd = openat(dirfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	return fd < 0 ? -errno : fd;
}

struct dir_cache;
static bool remove_placeholder(int fd, const char *path, struct dir_cache *dc);
static int start_sweeper(struct protect_state *st, int sandbox_pidfd);

/* Tell the sweeper a path before it is made: "SOURCE/PREFIX\n" (only
 * this process writes; a stream keeps the order). A sweeper that is gone
 * costs only its service: the mark still lets a later run remove it. */
static void announce(int sweep_fd, const char *source, const char *rel, size_t prefix)
{
	char line[PATH_MAX + 2];
	int n;

	if (sweep_fd < 0)
		return;
	n = snprintf(line, sizeof(line), "%s/%.*s\n", source, (int)prefix, rel);
	/* send(): a sweeper that died must not SIGPIPE the supervisor. */
	if (n > 0 && (size_t)n < sizeof(line))
		(void)!send(sweep_fd, line, (size_t)n, MSG_NOSIGNAL);
}

/* Lock an opened protected inode and check the name still points at it (a
 * concurrent cleanup may have removed it between open and lock). Returns
 * the fd, -EAGAIN to retry, or another -errno. */
static int lock_same(int dirfd, const char *name, int fd)
{
	struct stat a, b;

	if (flock(fd, LOCK_SH) < 0)
		return -errno;
	if (fstat(fd, &a) < 0)
		return -errno;
	if (fstatat(dirfd, name, &b, AT_SYMLINK_NOFOLLOW) < 0)
		return errno == ENOENT ? -EAGAIN : -errno;
	if (a.st_dev != b.st_dev || a.st_ino != b.st_ino)
		return -EAGAIN;
	return fd;
}

/* Resolve one protected host path. On success returns a locked fd and sets
 * *depth to the number of leading components of rel that exist or were
 * created (the protected prefix), *created when we made a placeholder. */
static int resolve(int base, const char *source, const char *rel, int sweep_fd, size_t *prefix_len,
		   bool *created, bool *is_link, struct err *err, const char *what)
{
	char buf[PATH_MAX];
	cleanup_close int dirfd = -1;
	char *p = buf, *slash;
	const char *dir_name = NULL;

	if (snprintf(buf, sizeof(buf), "%s", rel) >= (int)sizeof(buf))
		return err_set(err, ENAMETOOLONG, "%s: path too long", what);
	dirfd = fcntl(base, F_DUPFD_CLOEXEC, 3);
	if (dirfd < 0)
		return err_sys(err, errno, "%s: dup", what);
	for (;;) {
		int fd, next;
		struct stat st;

		slash = strchr(p, '/');
		if (slash)
			*slash = '\0';
		*prefix_len = (size_t)(p - buf) + strlen(p);
		fd = sys_openat2(dirfd, p, O_PATH | O_NOFOLLOW | O_CLOEXEC, NOFOLLOW_BENEATH);
		if (fd == -ENOENT) {
			/* The first missing component: an empty placeholder,
			 * announced to the sweeper before it exists. */
			announce(sweep_fd, source, rel, *prefix_len);
			fd = create_placeholder(dirfd, dir_name, p);
			/* EEXIST: another sandbox made it first; ENOENT: the
			 * directory we are in was another's placeholder, removed
			 * at its end meanwhile. Either way: look again. */
			if (fd == -EEXIST || fd == -ENOENT)
				return -EAGAIN;
			if (fd < 0)
				return err_sys(err, fd, "%s: create placeholder %s", what, rel);
			*created = true;
			return lock_same(dirfd, p, fd);
		}
		if (fd < 0)
			return err_sys(err, fd, "%s: %s", what, rel);
		if (fstat(fd, &st) < 0) {
			close(fd);
			return err_sys(err, errno, "%s: stat", what);
		}
		if (S_ISLNK(st.st_mode) && !slash) {
			/* The protected name is a symlink (an .envrc kept in a
			 * dotfiles repository): the link itself is pinned, a
			 * mount on it (prepare_one() checks where it points).
			 * Nobody removes a user's link, so no lock: an O_PATH
			 * fd cannot take one. */
			*is_link = true;
			return fd;
		}
		close(fd);
		if (S_ISLNK(st.st_mode))
			return err_set(err, ELOOP,
				       "%s: %s is a symlink; refusing to protect through it", what,
				       rel);
		/* A placeholder directory on the way (another run's, or one
		 * left by a killed run) covers everything below it. */
		if (slash && S_ISDIR(st.st_mode) && (st.st_mode & 07777) == DIR_MARK_MODE) {
			cleanup_close int d =
			    openat(dirfd, p, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);

			if (d >= 0 && is_placeholder(d))
				slash = NULL;
		}
		if (!slash || !S_ISDIR(st.st_mode)) {
			/* The path itself, or a non-directory on the way, which
			 * then blocks creation below it once read-only. */
			fd = openat(dirfd, p, O_RDONLY | O_NONBLOCK | O_NOFOLLOW | O_CLOEXEC);
			if (fd < 0 && errno == ENOENT)
				return -EAGAIN; /* removed since the look: again */
			if (fd < 0)
				return err_sys(err, errno, "%s: open %s", what, rel);
			next = lock_same(dirfd, p, fd);
			if (next < 0)
				close(fd);
			else
				*created = is_placeholder(fd); /* another sandbox's: ours too */
			return next;
		}
		next = sys_openat2(dirfd, p, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC,
				   NOFOLLOW_BENEATH);
		if (next == -ENOENT)
			return -EAGAIN;
		if (next < 0)
			return err_sys(err, next, "%s: open %s", what, rel);
		close(dirfd);
		dirfd = next;
		dir_name = p;
		p = slash + 1;
	}
}

/* Where the symlink at the sandbox path link (fd: O_PATH of it) points, as
 * a sandbox path normalised without looking at the filesystem, into out:
 * is it inside a writable bind, other than as a protected path itself?
 * Through a link there, the workload could change what the host's tool
 * reads. Unknown (too long, unreadable) counts as writable. */
static bool link_target_writable(const struct mount_plan *plan, int fd, const char *link, char *out,
				 size_t size)
{
	char text[PATH_MAX], joined[2 * PATH_MAX + 2];
	char *parts[PATH_MAX / 2];
	size_t n = 0, off = 0;
	ssize_t len = readlinkat(fd, "", text, sizeof(text) - 1);
	long b;

	snprintf(out, size, "(unreadable)");
	if (len <= 0)
		return true;
	text[len] = '\0';
	if (text[0] == '/')
		snprintf(joined, sizeof(joined), "%s", text);
	else
		snprintf(joined, sizeof(joined), "%.*s/%s", (int)(strrchr(link, '/') - link), link,
			 text);
	for (char *save = NULL, *c = strtok_r(joined, "/", &save); c;
	     c = strtok_r(NULL, "/", &save)) {
		if (strcmp(c, ".") == 0)
			continue;
		if (strcmp(c, "..") == 0) {
			if (n)
				n--;
			continue;
		}
		if (n == sizeof(parts) / sizeof(parts[0]))
			return true;
		parts[n++] = c;
	}
	out[0] = '\0';
	for (size_t i = 0; i < n; i++) {
		int w = snprintf(out + off, size - off, "/%s", parts[i]);

		if (w < 0 || (size_t)w >= size - off)
			return true;
		off += (size_t)w;
	}
	if (!n)
		snprintf(out, size, "/");
	for (size_t i = 0; i < plan->n; i++)
		if (plan->ops[i].kind == MOUNT_OP_PROTECT && strcmp(plan->ops[i].target, out) == 0)
			return false; /* protected too (its own op checks it) */
	b = mounts_enclosing_bind(plan, out);
	return b >= 0 && !plan->ops[b].readonly;
}

static int prepare_one(struct mount_plan *plan, struct mount_op *op, struct protect_state *st,
		       size_t k, struct err *err)
{
	long b = mounts_enclosing_bind(plan, op->target);
	const struct mount_op *bind;
	cleanup_close int base = -1;
	const char *rel;
	size_t prefix = 0;
	int fd = -EAGAIN;
	bool is_link = false;
	char target[PATH_MAX];

	if (b < 0)
		return err_set(err, EINVAL, "%s: %s is not inside a bind mount", op->what,
			       op->target);
	bind = &plan->ops[b];
	rel = op->target + strlen(bind->target);
	if (*rel == '\0')
		return err_set(err, EINVAL,
			       "%s: %s is a whole bind mount; make it read-only instead", op->what,
			       op->target);
	rel++;
	base = sys_openat2(AT_FDCWD, bind->source, O_PATH | O_DIRECTORY | O_CLOEXEC,
			   RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS);
	if (base == -ENOENT && bind->optional) {
		op->skipped = true;
		return 0;
	}
	if (base < 0)
		return err_sys(err, base, "%s: bind source %s", op->what, bind->source);
	for (int tries = 0; fd == -EAGAIN && tries < 16; tries++) {
		bool created = false;

		is_link = false;
		fd = resolve(base, bind->source, rel, st->sweep_pid > 0 ? st->sweep_fd : -1,
			     &prefix, &created, &is_link, err, op->what);
		if (fd >= 0 && created &&
		    asprintf(&st->created[k], "%s/%.*s", bind->source, (int)prefix, rel) < 0) {
			st->created[k] = NULL;
			close(fd);
			return err_set(err, ENOMEM, "out of memory");
		}
	}
	if (fd == -EAGAIN)
		return err_set(err, EAGAIN, "%s: %s keeps changing", op->what, op->target);
	if (fd < 0)
		return fd;
	st->fds[k] = fd;
	if (is_link && link_target_writable(plan, fd, op->target, target, sizeof(target)))
		return err_set(err, EPERM,
			       "%s: %s is a symlink to %s, which the sandbox can write: protect "
			       "that too (--protect %s, or in the policy)",
			       op->what, op->target, target, target);
	/* The op now covers the protected prefix: the path itself, or its
	 * first missing (now placeholder) or non-directory component. */
	op->target[strlen(bind->target) + 1 + prefix] = '\0';
	{
		struct stat s;

		if (fstat(fd, &s) < 0)
			return err_sys(err, errno, "%s: stat", op->what);
		op->dev = s.st_dev;
		op->ino = s.st_ino;
	}
	/* Two protected paths can share a protected prefix (.git/hooks and
	 * .git/config with no .git yet): one mount and one lock suffice, and
	 * a second lock of ours would keep us from removing the placeholder. */
	for (size_t i = 0; i < k; i++) {
		const struct mount_op *o = &plan->ops[i];

		if (o->kind == MOUNT_OP_PROTECT && !o->skipped && o->dev == op->dev &&
		    o->ino == op->ino) {
			op->skipped = true;
			close(take_fd(&st->fds[k]));
			if (st->created[k] && !st->created[i])
				st->created[i] = take_ptr(&st->created[k]);
			free(take_ptr(&st->created[k]));
			break;
		}
	}
	return 0;
}

int mounts_protect_prepare(struct mount_plan *plan, struct protect_state *st, int sandbox_pidfd,
			   struct err *err)
{
	bool any = false;

	for (size_t i = 0; i < plan->n; i++)
		any |= plan->ops[i].kind == MOUNT_OP_PROTECT;
	if (any) {
		int r = start_sweeper(st, sandbox_pidfd);

		if (r < 0)
			return err_sys(err, r, "protect: start the placeholder sweeper");
	}
	st->n = plan->n;
	st->fds = malloc(plan->n * sizeof(*st->fds) + 1);
	st->created = calloc(plan->n + 1, sizeof(*st->created));
	if (!st->fds || !st->created)
		return err_set(err, ENOMEM, "out of memory");
	for (size_t i = 0; i < plan->n; i++)
		st->fds[i] = -1;
	for (size_t i = 0; i < plan->n; i++) {
		int r;

		if (plan->ops[i].kind != MOUNT_OP_PROTECT)
			continue;
		r = prepare_one(plan, &plan->ops[i], st, i, err);
		if (r < 0)
			return r;
	}
	return 0;
}

/* The directory the last placeholder was removed from, kept open for the
 * next: a run's placeholders are mostly in one (the workspace). */
struct dir_cache {
	char path[PATH_MAX];
	int fd;
};

/* An O_PATH fd of dir (not to be closed by the caller), from the cache
 * when it is the last one's; -errno. */
static int cached_dir(struct dir_cache *dc, const char *dir)
{
	if (dc->fd >= 0 && strcmp(dc->path, dir) == 0)
		return dc->fd;
	if (dc->fd >= 0)
		close(dc->fd);
	dc->fd = -1;
	if (snprintf(dc->path, sizeof(dc->path), "%s", dir) >= (int)sizeof(dc->path))
		return -ENAMETOOLONG;
	dc->fd = sys_openat2(AT_FDCWD, *dir ? dir : "/", O_PATH | O_DIRECTORY | O_CLOEXEC,
			     RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS);
	return dc->fd;
}

/* Remove one placeholder if nobody else holds it and it is still ours: an
 * empty regular file with the inode we locked. */
static bool remove_placeholder(int fd, const char *path, struct dir_cache *dc)
{
	cleanup_free char *dir = strdup(path);
	struct stat a, b;
	char *slash;
	int dirfd;

	if (!dir || !(slash = strrchr(dir, '/')))
		return false;
	*slash = '\0';
	if (flock(fd, LOCK_EX | LOCK_NB) < 0)
		return false; /* another sandbox still uses it; it removes it */
	dirfd = cached_dir(dc, dir);
	if (dirfd < 0 || fstat(fd, &a) < 0 ||
	    fstatat(dirfd, slash + 1, &b, AT_SYMLINK_NOFOLLOW) < 0)
		return false;
	if (a.st_dev != b.st_dev || a.st_ino != b.st_ino)
		return false;
	if (S_ISDIR(b.st_mode))
		/* The mark's mode, and rmdir(2) refuses a directory that is not
		 * empty: the rest of is_placeholder() (a readdir) would only ask
		 * again what rmdir(2) answers itself, atomically. */
		return (b.st_mode & 07777) == DIR_MARK_MODE &&
		       unlinkat(dirfd, slash + 1, AT_REMOVEDIR) == 0;
	if (!S_ISREG(b.st_mode) || b.st_size > 2)
		return false;
	/* Only a marked file, unless the filesystem cannot mark (we made it). */
	if (!is_placeholder(fd) && fgetxattr(fd, MARK, NULL, 0) != -1)
		return false;
	return unlinkat(dirfd, slash + 1, 0) == 0;
}

/* The line that tells the sweeper the run ended normally: the supervisor
 * removed the placeholders itself, and the sweeper is only to close the
 * fds that come with the line. Announced paths are absolute, so no path
 * is this line. */
#define SWEEP_RELEASED "!released\n"

/* Hands the fds of the removed placeholders to the sweeper with the
 * released line (SCM_RIGHTS, in chunks): the last close of an unlinked
 * directory is where ext4 frees its inode and block (0.1-0.2 ms each,
 * most of the release on this VM's ext4), and that is not the caller's to
 * wait for: the names are gone already. True when the sweeper has them. */
static bool hand_over(int sweep_fd, const int *fds, size_t n)
{
	size_t i = 0;

	do {
		size_t k = n - i > 250 ? 250 : n - i; /* SCM_MAX_FD is 253 */
		char line[] = SWEEP_RELEASED;
		union {
			struct cmsghdr h;
			char buf[CMSG_SPACE(250 * sizeof(int))];
		} c = {0};
		struct iovec iov = {.iov_base = line, .iov_len = sizeof(line) - 1};
		struct msghdr m = {.msg_iov = &iov, .msg_iovlen = 1};

		if (k) {
			m.msg_control = c.buf;
			m.msg_controllen = CMSG_SPACE(k * sizeof(int));
			c.h.cmsg_level = SOL_SOCKET;
			c.h.cmsg_type = SCM_RIGHTS;
			c.h.cmsg_len = CMSG_LEN(k * sizeof(int));
			memcpy(CMSG_DATA(&c.h), fds + i, k * sizeof(int));
		}
		if (sendmsg(sweep_fd, &m, MSG_NOSIGNAL) != (ssize_t)iov.iov_len)
			return false;
		i += k;
	} while (i < n);
	return true;
}

int mounts_protect_release(struct protect_state *st)
{
	struct dir_cache dc = {.fd = -1};
	cleanup_free int *gone = malloc(st->n * sizeof(int) + 1);
	size_t n_gone = 0;
	bool handed = false;
	int left = 0;

	for (size_t i = 0; i < st->n; i++) {
		if (st->created && st->created[i] && st->fds[i] >= 0) {
			if (!remove_placeholder(st->fds[i], st->created[i], &dc))
				left++;
			else if (gone)
				gone[n_gone++] = take_fd(&st->fds[i]);
		}
		if (st->fds && st->fds[i] >= 0)
			close(st->fds[i]);
		if (st->created)
			free(st->created[i]);
	}
	if (dc.fd >= 0)
		close(dc.fd);
	/* What we removed the sweeper need not look for: told so, it touches
	 * no path after we return, and takes the last references to what we
	 * removed (hand_over()). Then it is not waited for; our own closes
	 * below are cheap while it holds them. Without the line (no sweeper
	 * left to take it) the sweep is as after a kill: the sweeper finds
	 * what we removed gone and leaves what another sandbox still holds
	 * (its flock), and is waited for, so that nothing of ours changes the
	 * workspace after we return. */
	if (st->sweep_pid > 0)
		handed = hand_over(st->sweep_fd, gone, n_gone);
	for (size_t i = 0; i < n_gone; i++)
		close(gone[i]);
	free(st->fds);
	free(st->created);
	st->fds = NULL;
	st->created = NULL;
	st->n = 0;
	if (st->sweep_pid > 0) {
		close(st->sweep_fd);
		while (!handed && waitpid(st->sweep_pid, NULL, 0) < 0 && errno == EINTR)
			;
		st->sweep_pid = 0;
	}
	return left;
}

int mounts_protect_encode(const struct mount_plan *plan, size_t i, char *buf, size_t size)
{
	const struct mount_op *op = &plan->ops[i];
	int n =
	    snprintf(buf, size, "%zu %d %zu %llu %llu", i, op->skipped ? 1 : 0, strlen(op->target),
		     (unsigned long long)op->dev, (unsigned long long)op->ino);

	return n < 0 || (size_t)n >= size ? -ENOSPC : n;
}

int mounts_protect_decode(struct mount_plan *plan, const char *line)
{
	unsigned long long dev, ino;
	size_t i, len;
	int skipped, used = 0;
	struct mount_op *op;

	if (sscanf(line, "%zu %d %zu %llu %llu%n", &i, &skipped, &len, &dev, &ino, &used) != 5 ||
	    line[used] != '\0' || i >= plan->n || (skipped != 0 && skipped != 1))
		return -EINVAL;
	op = &plan->ops[i];
	/* Only ever shortened to a prefix ending at a component boundary. */
	if (op->kind != MOUNT_OP_PROTECT || len > strlen(op->target) || len < 2 ||
	    (op->target[len] != '\0' && op->target[len] != '/'))
		return -EINVAL;
	op->target[len] = '\0';
	op->skipped = skipped;
	op->dev = (dev_t)dev;
	op->ino = (ino_t)ino;
	return 0;
}

/* The sweeper, after fork: gather the announced paths until the launcher's
 * end of the pipe closes (its exit, however it came), wait for the sandbox
 * to be gone (its pidfd becomes readable once every process of its pid
 * namespace has exited), then remove each path that is still a
 * placeholder nobody holds. */
static _Noreturn void sweep(int in, int pidfd)
{
	static char buf[1u << 16];
	struct dir_cache dc = {.fd = -1};
	size_t len = 0;
	ssize_t n;

	/* Woken by the end of the stream (POLLRDHUP, the launcher's close),
	 * not by each line: a wake-up per placeholder took the CPU from the
	 * start-up it runs beside (two CPUs). Every 50 ms what has come is
	 * taken anyway, so a full socket never holds up a send for longer. */
	while (len < sizeof(buf) - 1) {
		struct pollfd p = {.fd = in, .events = POLLRDHUP};

		(void)poll(&p, 1, 50);
		n = recv(in, buf + len, sizeof(buf) - 1 - len, MSG_DONTWAIT);
		if (n == 0)
			break;
		if (n < 0 && errno != EAGAIN && errno != EINTR)
			break;
		if (n > 0)
			len += (size_t)n;
	}
	buf[len] = '\0';
	/* A normal end: nothing left to sweep (the fds that came with the
	 * line were closed by recv(), which had no room for them). */
	if (strncmp(buf, SWEEP_RELEASED, strlen(SWEEP_RELEASED)) == 0 ||
	    strstr(buf, "\n" SWEEP_RELEASED))
		_exit(0);
	if (pidfd >= 0) {
		struct pollfd p = {.fd = pidfd, .events = POLLIN};

		while (poll(&p, 1, -1) < 0 && errno == EINTR)
			;
	}
	for (char *line = buf, *nl; (nl = strchr(line, '\n')); line = nl + 1) {
		int fd;

		*nl = '\0';
		fd = open(line, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
		/* Announced by us: removed only if still a placeholder (the
		 * same rule as at the end of a run). */
		if (fd >= 0) {
			(void)remove_placeholder(fd, line, &dc);
			close(fd);
		}
	}
	_exit(0);
}

/* The sweeper is a copy of the supervisor: its command line would name
 * the workload's command, and whoever looks for the sandbox's processes by
 * their command line (paddock's own tests, a user's pgrep) would count it.
 * Overwritten in place, as setproctitle() does: /proc/PID/cmdline reads
 * arg_start..arg_end of the process's memory (proc(5), stat fields 48-49). */
static void rename_self(void)
{
	char buf[1024], *p;
	unsigned long start = 0, end = 0;
	ssize_t n;
	int fd = open("/proc/self/stat", O_RDONLY | O_CLOEXEC);

	(void)prctl(PR_SET_NAME, "paddock-sweep");
	if (fd < 0)
		return;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return;
	buf[n] = '\0';
	p = strrchr(buf, ')');
	/* p: the ')' that ends field 2; each step moves to the space
	 * before the next field, so 46 steps reach field 48, arg_start. */
	for (int field = 3; p && field <= 48; field++)
		p = strchr(p + 1, ' ');
	if (!p || sscanf(p, " %lu %lu", &start, &end) != 2 || end <= start)
		return;
	memset((void *)start, 0, end - start);
	snprintf((char *)start, end - start, "paddock-sweeper");
}

static int start_sweeper(struct protect_state *st, int sandbox_pidfd)
{
	int pipefd[2], null;
	sigset_t none;
	pid_t pid;

	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, pipefd) < 0)
		return -errno;
	pid = fork();
	if (pid < 0) {
		close(pipefd[0]);
		close(pipefd[1]);
		return -errno;
	}
	if (pid == 0) {
		/* Outlives a killed launcher on purpose: no PDEATHSIG, and
		 * deaf to the terminal's and the caller's signals (it ends
		 * by itself, on EOF). Holds nothing of the launcher's but
		 * the pipe and the sandbox's pidfd: an inherited lock or
		 * socket would keep a placeholder or the sandbox alive. */
		for (int s = 1; s < NSIG; s++)
			if (s != SIGKILL && s != SIGSTOP)
				signal(s, s == SIGCHLD ? SIG_DFL : SIG_IGN);
		sigemptyset(&none);
		sigprocmask(SIG_SETMASK, &none, NULL);
		rename_self();
		/* Nor the caller's stdio: a caller that reads our output to
		 * its EOF (a shell's $(paddock run ...)) would wait for the
		 * sweeper too, which outlives a normal end by its last closes
		 * (hand_over()). It never prints. */
		null = open("/dev/null", O_RDWR | O_CLOEXEC);
		if (null < 0 || dup2(null, 0) < 0 || dup2(null, 1) < 0 || dup2(null, 2) < 0)
			_exit(1);
		/* Moved above both before either lands on 3 or 4. */
		pipefd[0] = fcntl(pipefd[0], F_DUPFD, 64);
		sandbox_pidfd = sandbox_pidfd >= 0 ? fcntl(sandbox_pidfd, F_DUPFD, 64) : -1;
		if (pipefd[0] < 0 || dup2(pipefd[0], 3) < 0 ||
		    (sandbox_pidfd >= 0 && dup2(sandbox_pidfd, 4) < 0))
			_exit(1);
		close_range(sandbox_pidfd >= 0 ? 5 : 4, ~0U, 0);
		sweep(3, sandbox_pidfd >= 0 ? 4 : -1);
	}
	close(pipefd[0]);
	st->sweep_fd = pipefd[1];
	st->sweep_pid = pid;
	return 0;
}

int mounts_idmap_decode(const struct mount_plan *plan, const char *index, size_t *out)
{
	unsigned long i;
	char *end;

	if (index[0] < '0' || index[0] > '9' || strlen(index) > 20)
		return -EINVAL;
	errno = 0;
	i = strtoul(index, &end, 10);
	if (errno || *end || i >= plan->n || plan->ops[i].kind != MOUNT_OP_BIND)
		return -EINVAL;
	*out = i;
	return 0;
}
