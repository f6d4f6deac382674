/* Id maps for the sandbox's user namespace (user_namespaces(7)). The parent
 * writes them: an unprivileged process may map exactly its own uid and gid,
 * and only after "deny" is written to setgroups (Linux 3.19, CVE-2014-8989:
 * dropping groups could otherwise lift negative group permissions). */
#include "sandbox.h"

#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "../../include/cleanup.h"

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
