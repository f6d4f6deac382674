/* A process as the kernel names it for good: pid plus start time, read
 * from /proc/PID/stat (the registry's supervisors and inits). */
#include "session.h"

#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../../include/cleanup.h"

int session_parse_stat(const char *line, char *state, unsigned long long *start_time)
{
	/* "PID (COMM) S PPID ...": COMM may contain ") ", so the fields
	 * start after the last ')'. Field 3 is the state, 22 the start time. */
	const char *p = strrchr(line, ')');
	char *end;

	if (!p || p[1] != ' ' || !p[2] || p[3] != ' ')
		return -EINVAL;
	*state = p[2];
	p += 3;
	for (int field = 4; field < 22; field++) {
		p = strchr(p + 1, ' ');
		if (!p)
			return -EINVAL;
	}
	errno = 0;
	*start_time = strtoull(p + 1, &end, 10);
	if (errno || end == p + 1 || (*end != ' ' && *end != '\n' && *end != '\0'))
		return -EINVAL;
	return 0;
}

/* The last number of the line "KEY:\t..." of a /proc/PID/status: the id
 * in the innermost pid namespace. */
static int status_last(const char *text, const char *key, pid_t *out)
{
	size_t klen = strlen(key);
	const char *p = text;
	long v = -1;

	while (p && strncmp(p, key, klen) != 0)
		p = (p = strchr(p, '\n')) ? p + 1 : NULL;
	if (!p)
		return -ENOENT;
	p += klen;
	while (*p && *p != '\n') {
		char *end;
		long n;

		while (*p == ' ' || *p == '\t')
			p++;
		if (*p == '\n' || !*p)
			break;
		errno = 0;
		n = strtol(p, &end, 10);
		if (errno || end == p || n < 0 || n > INT32_MAX ||
		    (*end != ' ' && *end != '\t' && *end != '\n' && *end != '\0'))
			return -EINVAL;
		v = n;
		p = end;
	}
	if (v < 0)
		return -EINVAL;
	*out = (pid_t)v;
	return 0;
}

int session_parse_nsids(const char *status, pid_t *pid, pid_t *sid)
{
	pid_t p, s;
	int rc = status_last(status, "NSpid:", &p);

	if (rc == 0)
		rc = status_last(status, "NSsid:", &s);
	if (rc < 0)
		return rc;
	*pid = p;
	*sid = s;
	return 0;
}

int proc_identity(pid_t pid, struct proc_id *out)
{
	char path[64], buf[1024];
	cleanup_close int fd = -1;
	ssize_t n;
	char state;

	if (pid <= 0)
		return -ESRCH;
	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return errno == ENOENT ? -ESRCH : -errno;
	n = read(fd, buf, sizeof(buf) - 1);
	if (n <= 0)
		return -ESRCH; /* it exited between open and read */
	buf[n] = '\0';
	out->pid = pid;
	if (session_parse_stat(buf, &state, &out->start_time) < 0)
		return -EINVAL;
	/* A zombie has ended; only its parent's wait is missing. */
	return state == 'Z' || state == 'X' ? -ESRCH : 0;
}

bool proc_stopped(const struct proc_id *id)
{
	char path[64], buf[1024], state;
	cleanup_close int fd = -1;
	unsigned long long start;
	ssize_t n;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)id->pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0 || (n = read(fd, buf, sizeof(buf) - 1)) <= 0)
		return false;
	buf[n] = '\0';
	return session_parse_stat(buf, &state, &start) == 0 && start == id->start_time &&
	       (state == 'T' || state == 't');
}

bool proc_alive(const struct proc_id *id)
{
	struct proc_id now;

	return proc_identity(id->pid, &now) == 0 && now.start_time == id->start_time;
}
