/* Id maps for the sandbox's user namespace (user_namespaces(7)). The parent
 * writes them: an unprivileged process may map exactly its own uid and gid,
 * and only after "deny" is written to setgroups (Linux 3.19, CVE-2014-8989:
 * dropping groups could otherwise lift negative group permissions). */
#include "sandbox.h"

#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/pidfd.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../../include/cleanup.h"
#include "../../include/sys.h"

int userns_map_line(char *buf, size_t size, unsigned inside, unsigned outside)
{
	int n = snprintf(buf, size, "%u %u 1\n", inside, outside);

	return n < 0 || (size_t)n >= size ? -ENAMETOOLONG : n;
}

static int write_file(pid_t pid, const char *name, const char *text, struct err *err)
{
	char path[64];
	cleanup_close int fd = -1;
	size_t len = strlen(text);

	snprintf(path, sizeof(path), "/proc/%d/%s", (int)pid, name);
	fd = open(path, O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return err_sys(err, errno, "open %s", path);
	if (write(fd, text, len) != (ssize_t)len)
		return err_sys(err, errno, "write %s", path);
	return 0;
}

int userns_write_maps(pid_t pid, uid_t inside_uid, uid_t outside_uid, gid_t inside_gid,
		      gid_t outside_gid, struct err *err)
{
	char line[64];
	int r;

	r = write_file(pid, "setgroups", "deny", err);
	if (r < 0)
		return r;
	userns_map_line(line, sizeof(line), inside_uid, outside_uid);
	r = write_file(pid, "uid_map", line, err);
	if (r < 0)
		return r;
	userns_map_line(line, sizeof(line), inside_gid, outside_gid);
	return write_file(pid, "gid_map", line, err);
}

/* A user namespace whose only mapping is inside -> outside (uid and gid),
 * as an fd: the idmapping of an idmapped mount (mount_setattr(2),
 * MOUNT_ATTR_IDMAP). A user namespace lives as long as a process or an fd
 * holds it, so a child that made it is killed once its ns fd is open. */
int userns_idmap_fd(uid_t inside_uid, uid_t outside_uid, gid_t inside_gid, gid_t outside_gid,
		    struct err *err)
{
	struct sys_clone_args args = {0};
	int pidfd = -1, fd = -1, rc;
	pid_t parent = getpid();
	char path[64];
	long pid;

	args.flags = CLONE_NEWUSER | CLONE_PIDFD;
	args.pidfd = (uintptr_t)&pidfd;
	args.exit_signal = SIGCHLD;
	pid = sys_clone3(&args);
	if (pid < 0)
		return err_sys(err, pid, "clone3 a user namespace for the idmapped mount");
	if (pid == 0) {
		/* It only has to exist until the parent opened the ns; a
		 * parent that died before the prctl would never signal it. */
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		if (getppid() != parent)
			_exit(0);
		for (;;)
			pause();
	}
	rc = userns_write_maps((pid_t)pid, inside_uid, outside_uid, inside_gid, outside_gid, err);
	if (rc >= 0) {
		snprintf(path, sizeof(path), "/proc/%ld/ns/user", pid);
		fd = open(path, O_RDONLY | O_CLOEXEC);
		if (fd < 0)
			rc = err_sys(err, errno, "open %s", path);
	}
	pidfd_send_signal(pidfd, SIGKILL, NULL, 0);
	waitid(P_PIDFD, (id_t)pidfd, &(siginfo_t){0}, WEXITED);
	close(pidfd);
	return rc < 0 ? rc : fd;
}

int userns_idmapped_tree(const char *source, int userns_fd, struct err *err)
{
	struct mount_attr attr = {
	    .attr_set = MOUNT_ATTR_IDMAP | MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV,
	    .userns_fd = (uint64_t)userns_fd,
	};
	cleanup_close int src = -1;
	cleanup_close int tree = -1;

	/* As the child opens bind sources: no symlink anywhere in the path. */
	src = sys_openat2(AT_FDCWD, source, O_PATH | O_NOFOLLOW | O_CLOEXEC,
			  RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS);
	if (src < 0)
		return err_sys(err, src, "%s", source);
	tree =
	    open_tree(src, "", OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | AT_EMPTY_PATH | AT_RECURSIVE);
	if (tree < 0)
		return err_sys(err, errno, "open_tree %s", source);
	/* Only the host's root may idmap a mount of a filesystem the host
	 * owns (CAP_SYS_ADMIN in the filesystem's user namespace), so the
	 * supervisor does it, on the detached clone, before anything sees
	 * it. nosuid here too: the sandbox's user namespace cannot change the
	 * flags of a mount the host's owns. */
	if (mount_setattr(tree, "", AT_EMPTY_PATH | AT_RECURSIVE, &attr, sizeof(attr)) < 0)
		return err_sys(err, errno, "idmap %s (mount_setattr MOUNT_ATTR_IDMAP)", source);
	return take_fd(&tree);
}
