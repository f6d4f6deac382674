/* Observers outside the workload (observe.h). */
#include "observe.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "../../include/cleanup.h"
#include "../../include/io.h"
#include "../../policy/sha256.h"
#include "selftest.h"

int observe_sha256(const char *path, char hex[65])
{
	cleanup_close int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	cleanup_free char *buf = NULL;
	size_t len = 0, cap = 0;
	unsigned char d[SHA256_DIGEST_LEN];

	if (fd < 0)
		return -errno;
	/* Grow until a read_full() comes back short: that was EOF. */
	for (;;) {
		ssize_t k;
		char *nb;

		cap = cap ? cap * 2 : 4096;
		if (cap > (64u << 20))
			return -EFBIG;
		nb = realloc(buf, cap);
		if (!nb)
			return -ENOMEM;
		buf = nb;
		k = read_full(fd, buf + len, cap - len);
		if (k < 0)
			return (int)k;
		len += (size_t)k;
		if (len < cap)
			break;
	}
	/* Test-only: a digest that ignores the bytes (make eval-selftest). */
	sha256(buf, selftest_on("digest-blind") ? 0 : len, d);
	sha256_hex(d, hex);
	return 0;
}

int observe_digest_proof(const char *dir)
{
	char path[PATH_MAX + 32], a[65], b[65];
	int r = 0;

	snprintf(path, sizeof(path), "%s/.digest-probe", dir);
	for (int i = 0; i < 2 && r == 0; i++) {
		cleanup_close int fd =
		    open(path, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0600);

		if (fd < 0 || write(fd, i ? "probe B" : "probe A", 7) != 7)
			r = -errno;
		else if (close(take_fd(&fd)) < 0)
			r = -errno;
		else
			r = observe_sha256(path, i ? b : a);
	}
	unlink(path);
	if (r < 0)
		return r;
	return strcmp(a, b) != 0 ? 0 : -EIO;
}

void observe_snapshot(const char *path, struct snapshot *out)
{
	struct stat st;

	memset(out, 0, sizeof(*out));
	if (lstat(path, &st) < 0 || observe_sha256(path, out->sha256) < 0)
		return;
	out->size = st.st_size;
	out->ino = st.st_ino;
	out->dev = st.st_dev;
	out->mode = st.st_mode;
	out->uid = st.st_uid;
	out->gid = st.st_gid;
	out->mtime_ns = (long long)st.st_mtim.tv_sec * 1000000000LL + st.st_mtim.tv_nsec;
	out->ok = true;
}

bool snapshot_equal(const struct snapshot *a, const struct snapshot *b)
{
	return a->ok && b->ok && strcmp(a->sha256, b->sha256) == 0 && a->size == b->size &&
	       a->ino == b->ino && a->mode == b->mode && a->mtime_ns == b->mtime_ns;
}

/* ---- /proc readers ---- */

int read_file(const char *path, char *buf, size_t n)
{
	cleanup_close int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	ssize_t k;

	if (fd < 0)
		return -errno;
	k = read_full(fd, buf, n - 1);
	if (k < 0)
		return (int)k;
	buf[k] = '\0';
	return (int)k;
}

/* Fields of /proc/PID/stat after the command name, which may hold ") ".
 *
 * This parser is the harness's own on purpose: paddock's launcher and init
 * parse /proc/PID/stat too, but an observer must not share a parser with
 * its subject - a shared bug would make the harness agree with the thing
 * it checks (docs/scenarios.md "Observers"). */
static int stat_fields(pid_t pid, pid_t *ppid, pid_t *sid, unsigned long long *start, char *comm,
		       size_t ncomm, char *state)
{
	char path[64], buf[1024];
	char *open_p, *close_p;
	int r;
	pid_t pgrp;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	r = read_file(path, buf, sizeof(buf));
	if (r < 0)
		return r;
	open_p = strchr(buf, '(');
	close_p = strrchr(buf, ')');
	if (!open_p || !close_p || close_p < open_p)
		return -EINVAL;
	if (comm)
		snprintf(comm, ncomm, "%.*s", (int)(close_p - open_p - 1), open_p + 1);
	/* state ppid pgrp session tty tpgid flags minflt cminflt majflt cmajflt
	 * utime stime cutime cstime priority nice threads itrealvalue starttime */
	if (sscanf(close_p + 2,
		   "%c %d %d %d %*d %*d %*u %*u %*u %*u %*u %*u %*u %*d %*d %*d %*d "
		   "%*d %*d %llu",
		   state, ppid, &pgrp, sid, start) != 5)
		return -EINVAL;
	return 0;
}

static unsigned long ns_inode(pid_t pid, const char *ns)
{
	char path[64], link[64];
	ssize_t k;
	unsigned long ino = 0;

	snprintf(path, sizeof(path), "/proc/%d/ns/%s", (int)pid, ns);
	k = readlink(path, link, sizeof(link) - 1);
	if (k <= 0)
		return 0;
	link[k] = '\0';
	if (sscanf(link, "%*[^[][%lu]", &ino) != 1)
		return 0;
	return ino;
}

static int status_uid(pid_t pid, uid_t *uid)
{
	char path[64], buf[4096];
	char *p;

	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	if (read_file(path, buf, sizeof(buf)) < 0)
		return -ESRCH;
	p = strstr(buf, "\nUid:");
	if (!p)
		return -EINVAL;
	*uid = (uid_t)strtoul(p + 5, NULL, 10);
	return 0;
}

int inventory_read(pid_t pid, struct proc_entry *e)
{
	char state;
	int r;

	memset(e, 0, sizeof(*e));
	e->pid = pid;
	r = stat_fields(pid, &e->ppid, &e->sid, &e->start, e->comm, sizeof(e->comm), &state);
	if (r < 0)
		return r;
	e->pidns = ns_inode(pid, "pid");
	e->userns = ns_inode(pid, "user");
	if (status_uid(pid, &e->uid) < 0)
		return -ESRCH;
	return 0;
}

/* ---- /proc inventories ---- */

int inventory_scan(struct proc_entry **out, size_t *n)
{
	DIR *d = opendir("/proc");
	struct dirent *de;
	struct proc_entry *v = NULL;
	size_t len = 0, cap = 0;

	if (!d)
		return -errno;
	while ((de = readdir(d))) {
		struct proc_entry e;

		if (!isdigit((unsigned char)de->d_name[0]))
			continue;
		if (inventory_read((pid_t)atoi(de->d_name), &e) < 0)
			continue; /* gone while we looked: not a process any more */
		if (len == cap) {
			struct proc_entry *nv;

			cap = cap ? cap * 2 : 256;
			nv = realloc(v, cap * sizeof(*v));
			if (!nv) {
				free(v);
				closedir(d);
				return -ENOMEM;
			}
			v = nv;
		}
		v[len++] = e;
	}
	closedir(d);
	*out = v;
	*n = len;
	return 0;
}

bool inventory_alive(pid_t pid, unsigned long long start)
{
	unsigned long long now_start;
	pid_t ppid, sid;
	char state;

	if (stat_fields(pid, &ppid, &sid, &now_start, NULL, 0, &state) < 0 || now_start != start)
		return false;
	/* A zombie has ended; it only waits for its parent. */
	return state != 'Z' && state != 'X';
}

int inventory_kill(pid_t pid, unsigned long long start)
{
	cleanup_close int pfd = (int)syscall(SYS_pidfd_open, pid, 0);
	struct proc_entry e;

	if (pfd < 0)
		return -errno;
	/* Check the start time after holding the pidfd: from here on the pid
	 * cannot be reused under us. */
	if (inventory_read(pid, &e) < 0 || e.start != start)
		return -ESRCH;
	if (syscall(SYS_pidfd_send_signal, pfd, SIGKILL, NULL, 0) < 0)
		return -errno;
	return 0;
}

/* ---- clients and sockets ---- */

/* The reply, until EOF or n-1 bytes. The socket turns blocking with
 * SO_RCVTIMEO, so read_full() needs no poll loop of its own: each read
 * waits at most timeout_ms, as a poll before it would, and a timeout shows
 * as EAGAIN. */
static int read_reply(int fd, int timeout_ms, char *buf, size_t n)
{
	struct timeval tv = {timeout_ms / 1000, (long)(timeout_ms % 1000) * 1000};
	int fl = fcntl(fd, F_GETFL);
	size_t len;
	ssize_t k;

	buf[0] = '\0';
	if (fl < 0 || fcntl(fd, F_SETFL, fl & ~O_NONBLOCK) < 0 ||
	    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv)) < 0)
		return -errno;
	k = read_full(fd, buf, n - 1);
	if (k == -EAGAIN || k == -EWOULDBLOCK)
		return -ETIMEDOUT;
	if (k < 0)
		return (int)k;
	len = (size_t)k;
	buf[len] = '\0';
	while (len && (buf[len - 1] == '\n' || buf[len - 1] == '\r'))
		buf[--len] = '\0';
	return 0;
}

static int connect_timed(int fd, const struct sockaddr *sa, socklen_t len, int timeout_ms)
{
	struct pollfd p = {.fd = fd, .events = POLLOUT};
	int e = 0;
	socklen_t el = sizeof(e);

	if (connect(fd, sa, len) == 0)
		return 0;
	if (errno != EINPROGRESS)
		return -errno;
	if (poll(&p, 1, timeout_ms) <= 0)
		return -ETIMEDOUT;
	if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &e, &el) < 0)
		return -errno;
	return e ? -e : 0;
}

int observe_connect_tcp(int port, int timeout_ms, char *buf, size_t n)
{
	return observe_request_tcp(port, NULL, timeout_ms, buf, n);
}

int observe_request_tcp(int port, const char *req, int timeout_ms, char *buf, size_t n)
{
	cleanup_close int fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
	int r;

	if (fd < 0)
		return -errno;
	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	r = connect_timed(fd, (struct sockaddr *)&sa, sizeof(sa), timeout_ms);
	if (r < 0)
		return r;
	if (req && send(fd, req, strlen(req), MSG_NOSIGNAL) != (ssize_t)strlen(req))
		return -EIO;
	return read_reply(fd, timeout_ms, buf, n);
}

int observe_connect_unix(const char *path, int timeout_ms, char *buf, size_t n)
{
	cleanup_close int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	int r;

	if (fd < 0)
		return -errno;
	if (strlen(path) >= sizeof(sa.sun_path))
		return -ENAMETOOLONG;
	memcpy(sa.sun_path, path, strlen(path) + 1);
	r = connect_timed(fd, (struct sockaddr *)&sa, sizeof(sa), timeout_ms);
	if (r < 0)
		return r;
	return read_reply(fd, timeout_ms, buf, n);
}

int observe_tcp_listeners(int port, uid_t *uids, size_t max)
{
	cleanup_fclose FILE *f = fopen("/proc/net/tcp", "re");
	char line[512];
	int count = 0;

	if (!f)
		return -errno;
	if (!fgets(line, sizeof(line), f))
		return -EIO;
	while (fgets(line, sizeof(line), f)) {
		unsigned addr, lport, st, uid;

		/* sl local rem st tx:rx tr:when retrnsmt uid */
		if (sscanf(line, " %*d: %8X:%4X %*8X:%*4X %2X %*8X:%*8X %*2X:%*8X %*8X %u", &addr,
			   &lport, &st, &uid) != 4)
			continue;
		/* 0x0A: TCP_LISTEN; the address is in network byte order as
		 * the kernel prints it (0100007F is 127.0.0.1 on x86). */
		if (st != 0x0A || (int)lport != port || ntohl(addr) != INADDR_LOOPBACK)
			continue;
		if ((size_t)count < max)
			uids[count] = (uid_t)uid;
		count++;
	}
	return count;
}

size_t inventory_find_cmdline(const char *a0, const char *a1, struct proc_entry *out, size_t max)
{
	DIR *d = opendir("/proc");
	struct dirent *de;
	size_t k = 0, l0 = strlen(a0), l1 = strlen(a1);

	if (!d)
		return 0;
	while ((de = readdir(d)) && k < max) {
		char path[64], buf[256];
		int len;

		if (!isdigit((unsigned char)de->d_name[0]))
			continue;
		snprintf(path, sizeof(path), "/proc/%s/cmdline", de->d_name);
		len = read_file(path, buf, sizeof(buf));
		if (len != (int)(l0 + l1 + 2) || memcmp(buf, a0, l0 + 1) != 0 ||
		    memcmp(buf + l0 + 1, a1, l1 + 1) != 0)
			continue;
		if (inventory_read((pid_t)atoi(de->d_name), &out[k]) == 0)
			k++;
	}
	closedir(d);
	return k;
}
