/* The record's file (docs/record.md, "The file"): replaced whole, never
 * rewritten in place, and only where no other user can put a file of
 * theirs in its place.
 *
 * A reader sees the earlier record or the new one, never an empty or a
 * torn one: every write goes to a new temporary file in the same directory
 * (O_EXCL), is fsynced, and renamed over the record (rename(2) is atomic
 * within a filesystem), then the directory is fsynced; runc and Docker
 * keep their state files the same way. The directory is held by an O_PATH
 * fd from the start, so a rename of the directory later cannot redirect
 * the record. */
#include "run.h"

#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "../../include/cleanup.h"
#include "../../include/io.h"

static const char *base_name(const char *path)
{
	const char *slash = strrchr(path, '/');

	return slash ? slash + 1 : path;
}

/* An existing record may be replaced only if it is the caller's regular
 * file (or a symlink of the caller's, which rename replaces, never follows). */
static int check_target(int dirfd, const char *path, struct err *err)
{
	struct stat st;

	if (fstatat(dirfd, base_name(path), &st, AT_SYMLINK_NOFOLLOW) < 0)
		return errno == ENOENT ? 0 : err_sys(err, errno, "--record %s", path);
	if (st.st_uid != getuid())
		return err_set(err, EPERM,
			       "--record %s: the file belongs to uid %u, not to you; refusing to "
			       "write a record another user can read or rewrite",
			       path, (unsigned)st.st_uid);
	if (!S_ISREG(st.st_mode) && !S_ISLNK(st.st_mode))
		return err_set(err, EINVAL, "--record %s: not a regular file", path);
	return 0;
}

/* Temporary names of this record (".NAME.HEX16.tmp") of the caller's
 * that are older than a minute: left by a run killed between its link
 * and its rename. */
static void sweep(int dirfd, const char *path)
{
	const char *name = base_name(path);
	size_t n = strlen(name);
	struct timespec now;
	struct dirent *e;
	DIR *d;
	int fd = openat(dirfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);

	if (fd < 0)
		return;
	d = fdopendir(fd);
	if (!d) {
		close(fd);
		return;
	}
	clock_gettime(CLOCK_REALTIME, &now);
	while ((e = readdir(d))) {
		const char *t = e->d_name;
		struct stat st;

		if (t[0] != '.' || strncmp(t + 1, name, n) != 0 || strlen(t + 1 + n) != 21 ||
		    t[1 + n] != '.' || strspn(t + 2 + n, "0123456789abcdef") != 16 ||
		    strcmp(t + 18 + n, ".tmp") != 0)
			continue;
		if (fstatat(dirfd, t, &st, AT_SYMLINK_NOFOLLOW) == 0 && st.st_uid == getuid() &&
		    S_ISREG(st.st_mode) && now.tv_sec - st.st_mtim.tv_sec > 60)
			(void)unlinkat(dirfd, t, 0);
	}
	closedir(d);
}

int record_open_dir(const char *path, struct err *err)
{
	char dir[PATH_MAX];
	cleanup_close int fd = -1;
	const char *name = base_name(path);
	struct stat st;
	int rc;

	if (snprintf(dir, sizeof(dir), "%.*s", (int)(name - path), path) >= (int)sizeof(dir))
		return err_set(err, ENAMETOOLONG, "--record %s: path too long", path);
	if (!*name || strcmp(name, ".") == 0 || strcmp(name, "..") == 0)
		return err_set(err, EINVAL, "--record %s: not a file name", path);
	fd = open(dir[0] ? dir : ".", O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0 || fstat(fd, &st) < 0)
		return err_sys(err, errno, "--record %s", path);
	/* Whoever may rename entries in the directory may swap the record
	 * for a file of theirs: the directory must be the caller's (or
	 * root's, which root-owned system directories are), and one others
	 * may write must be sticky, where only an entry's owner can rename
	 * or remove it (/tmp). */
	if (st.st_uid != getuid() && st.st_uid != 0)
		return err_set(err, EPERM,
			       "--record %s: the directory belongs to uid %u; another user could "
			       "replace the record",
			       path, (unsigned)st.st_uid);
	if ((st.st_mode & (S_IWGRP | S_IWOTH)) && !(st.st_mode & S_ISVTX))
		return err_set(err, EPERM,
			       "--record %s: the directory is writable by others and not sticky; "
			       "another user could replace the record",
			       path);
	rc = check_target(fd, path, err);
	if (rc < 0)
		return rc;
	sweep(fd, path);
	return take_fd(&fd);
}

int record_replace(int dirfd, const char *path, const char *text, size_t len, struct err *err)
{
	char tmp[NAME_MAX + 1];
	uint64_t rnd = 0;
	cleanup_close int fd = -1;
	cleanup_close int dir = -1;
	int rc;

	rc = check_target(dirfd, path, err);
	if (rc < 0)
		return rc;
	if (getrandom(&rnd, sizeof(rnd), 0) != sizeof(rnd))
		return err_sys(err, errno, "record: getrandom");
	if (snprintf(tmp, sizeof(tmp), ".%.200s.%016llx.tmp", base_name(path),
		     (unsigned long long)rnd) >= (int)sizeof(tmp))
		return err_set(err, ENAMETOOLONG, "--record %s: name too long", path);
	/* Unnamed until written and synced (O_TMPFILE): a SIGKILL before
	 * then leaves nothing behind; only between the link and the rename,
	 * two system calls, could a temporary name stay (swept later, see
	 * sweep()). Where the filesystem has no O_TMPFILE, a named file with
	 * O_EXCL: never a file someone else made, never a symlink. */
	fd = openat(dirfd, ".", O_TMPFILE | O_WRONLY | O_CLOEXEC, 0644);
	if (fd >= 0) {
		char proc[64];

		rc = write_full(fd, text, len);
		if (rc >= 0 && fsync(fd) < 0)
			rc = -errno;
		snprintf(proc, sizeof(proc), "/proc/self/fd/%d", fd);
		if (rc >= 0 && linkat(AT_FDCWD, proc, dirfd, tmp, AT_SYMLINK_FOLLOW) < 0)
			return err_sys(err, errno, "record %s", path);
	} else if (errno == EOPNOTSUPP || errno == EISDIR || errno == EINVAL) {
		fd = openat(dirfd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
		if (fd < 0)
			return err_sys(err, errno, "record: create %s", tmp);
		rc = write_full(fd, text, len);
		if (rc >= 0 && fsync(fd) < 0)
			rc = -errno;
	} else {
		return err_sys(err, errno, "record %s", path);
	}
	if (rc >= 0 && renameat(dirfd, tmp, dirfd, base_name(path)) < 0)
		rc = -errno;
	if (rc < 0) {
		unlinkat(dirfd, tmp, 0);
		return err_sys(err, rc, "record %s", path);
	}
	/* The rename itself is durable once the directory is. An O_PATH fd
	 * cannot be fsynced; a read-only one of the same directory can. */
	dir = openat(dirfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dir >= 0)
		(void)fsync(dir);
	return 0;
}
