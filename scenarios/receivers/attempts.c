/* The attempt receiver (attempts.h). */
#include "attempts.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "../observers/observe.h"

#define RX_MAX 64

struct attempt_rx {
	int fd;
	int fifo; /* the fallback of a tool without a socket client: unidentified */
	int stop[2];
	char fifo_path[112];
	char fifo_buf[256];
	size_t fifo_len;
	pthread_t thread;
	bool up;
	char path[108];
	pthread_mutex_t lock;
	struct attempt_report v[RX_MAX];
	size_t n;
};

/* Open the reporter's user and pid namespaces and check they are the ones
 * e names, and that pid is still e's process (same start time) after the
 * opens: then the fds pin what e says. 0, or -ESRCH (and nothing held). */
static int hold_ns(pid_t pid, const struct proc_entry *e, struct attempt_report *a)
{
	char path[64];
	struct proc_entry again;
	struct stat su, sp;

	snprintf(path, sizeof(path), "/proc/%d/ns/user", (int)pid);
	a->userns_fd = open(path, O_RDONLY | O_CLOEXEC);
	snprintf(path, sizeof(path), "/proc/%d/ns/pid", (int)pid);
	a->pidns_fd = open(path, O_RDONLY | O_CLOEXEC);
	if (a->userns_fd >= 0 && a->pidns_fd >= 0 && fstat(a->userns_fd, &su) == 0 &&
	    fstat(a->pidns_fd, &sp) == 0 && su.st_ino == e->userns && sp.st_ino == e->pidns &&
	    inventory_read(pid, &again) == 0 && again.start == e->start)
		return 0;
	if (a->userns_fd >= 0)
		close(a->userns_fd);
	if (a->pidns_fd >= 0)
		close(a->pidns_fd);
	a->userns_fd = a->pidns_fd = -1;
	return -ESRCH;
}

/* One connection: identity first (the tool waits for our answer, so it is
 * alive and its pid is its own), then its line, then the answer. */
static void serve(struct attempt_rx *rx, int c)
{
	struct attempt_report a = {.exit_code = -1, .pidns_fd = -1, .userns_fd = -1};
	struct ucred cred;
	socklen_t len = sizeof(cred);
	struct proc_entry e;
	struct pollfd p = {.fd = c, .events = POLLIN};
	char line[64] = "";
	ssize_t k = 0;

	if (getsockopt(c, SOL_SOCKET, SO_PEERCRED, &cred, &len) == 0 && cred.pid > 0 &&
	    inventory_read(cred.pid, &e) == 0 && hold_ns(cred.pid, &e, &a) == 0) {
		a.identified = true;
		a.pid = cred.pid;
		a.start = e.start;
		a.uid = e.uid;
		a.pidns = e.pidns;
		a.userns = e.userns;
	}
	if (poll(&p, 1, 2000) == 1)
		k = read(c, line, sizeof(line) - 1);
	line[k > 0 ? k : 0] = '\0';
	if (sscanf(line, "exit %d", &a.exit_code) != 1)
		a.exit_code = -1;
	if (write(c, "ok\n", 3) < 0) {
		/* The tool went away: its report still counts. */
	}
	pthread_mutex_lock(&rx->lock);
	if (rx->n < RX_MAX) {
		rx->v[rx->n++] = a;
	} else {
		if (a.userns_fd >= 0)
			close(a.userns_fd);
		if (a.pidns_fd >= 0)
			close(a.pidns_fd);
	}
	pthread_mutex_unlock(&rx->lock);
}

/* Lines "exit N" from the FIFO: counted, with no identity (a FIFO has no
 * peer credentials). */
static void fifo_read(struct attempt_rx *rx)
{
	ssize_t k =
	    read(rx->fifo, rx->fifo_buf + rx->fifo_len, sizeof(rx->fifo_buf) - 1 - rx->fifo_len);
	char *nl;

	if (k <= 0)
		return;
	rx->fifo_len += (size_t)k;
	rx->fifo_buf[rx->fifo_len] = '\0';
	while ((nl = strchr(rx->fifo_buf, '\n'))) {
		struct attempt_report a = {.exit_code = -1, .pidns_fd = -1, .userns_fd = -1};

		*nl = '\0';
		if (sscanf(rx->fifo_buf, "exit %d", &a.exit_code) != 1)
			a.exit_code = -1;
		pthread_mutex_lock(&rx->lock);
		if (rx->n < RX_MAX)
			rx->v[rx->n++] = a;
		pthread_mutex_unlock(&rx->lock);
		rx->fifo_len -= (size_t)(nl + 1 - rx->fifo_buf);
		memmove(rx->fifo_buf, nl + 1, rx->fifo_len + 1);
	}
	if (rx->fifo_len >= sizeof(rx->fifo_buf) - 1)
		rx->fifo_len = 0; /* a line that long is nobody's report */
}

static void *loop(void *arg)
{
	struct attempt_rx *rx = arg;

	for (;;) {
		struct pollfd p[3] = {{.fd = rx->fd, .events = POLLIN},
				      {.fd = rx->stop[0], .events = POLLIN},
				      {.fd = rx->fifo, .events = POLLIN}};
		int c;

		if (poll(p, 3, -1) < 0 && errno != EINTR)
			break;
		if (p[1].revents)
			break;
		if (p[2].revents & POLLIN)
			fifo_read(rx);
		if (!(p[0].revents & POLLIN))
			continue;
		c = accept4(rx->fd, NULL, NULL, SOCK_CLOEXEC);
		if (c < 0)
			continue;
		serve(rx, c);
		close(c);
	}
	return NULL;
}

int attempts_rx_start(struct attempt_rx **out, const char *path, const char *fifo)
{
	struct attempt_rx *rx = calloc(1, sizeof(*rx));
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	int r;

	*out = NULL;
	if (!rx)
		return -ENOMEM;
	rx->fd = rx->fifo = rx->stop[0] = rx->stop[1] = -1;
	pthread_mutex_init(&rx->lock, NULL);
	if (strlen(path) >= sizeof(sa.sun_path)) {
		r = -ENAMETOOLONG;
		goto fail;
	}
	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", path);
	snprintf(rx->path, sizeof(rx->path), "%s", path);
	rx->fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (rx->fd < 0 || bind(rx->fd, (struct sockaddr *)&sa, sizeof(sa)) < 0 ||
	    chmod(path, 0666) < 0 || listen(rx->fd, 16) < 0 || pipe2(rx->stop, O_CLOEXEC) < 0) {
		r = -errno;
		goto fail;
	}
	snprintf(rx->fifo_path, sizeof(rx->fifo_path), "%s", fifo);
	/* O_RDWR: the FIFO never reports EOF between writers, and opening it
	 * does not wait for one (fifo(7)). */
	if (mkfifo(fifo, 0666) < 0 || chmod(fifo, 0666) < 0 ||
	    (rx->fifo = open(fifo, O_RDWR | O_NONBLOCK | O_CLOEXEC)) < 0) {
		r = -errno;
		goto fail;
	}
	r = -pthread_create(&rx->thread, NULL, loop, rx);
	if (r < 0)
		goto fail;
	rx->up = true;
	*out = rx;
	return 0;
fail:
	attempts_rx_stop(rx);
	return r;
}

size_t attempts_rx_count(struct attempt_rx *rx)
{
	size_t n;

	pthread_mutex_lock(&rx->lock);
	n = rx->n;
	pthread_mutex_unlock(&rx->lock);
	return n;
}

size_t attempts_rx_wait(struct attempt_rx *rx, size_t n, int timeout_ms)
{
	size_t have = attempts_rx_count(rx);

	for (int t = 0; have < n && t < timeout_ms; t += 10) {
		struct timespec ts = {0, 10 * 1000 * 1000};

		nanosleep(&ts, NULL);
		have = attempts_rx_count(rx);
	}
	return have;
}

bool attempts_rx_at(struct attempt_rx *rx, size_t k, struct attempt_report *out)
{
	bool ok;

	pthread_mutex_lock(&rx->lock);
	ok = k < rx->n;
	if (ok)
		*out = rx->v[k];
	pthread_mutex_unlock(&rx->lock);
	return ok;
}

void attempts_rx_stop(struct attempt_rx *rx)
{
	if (!rx)
		return;
	if (rx->up) {
		if (write(rx->stop[1], "x", 1) < 0) {
			/* Our own empty pipe: cannot fail short of EBADF. */
		}
		pthread_join(rx->thread, NULL);
	}
	if (rx->fd >= 0)
		close(rx->fd);
	if (rx->fifo >= 0)
		close(rx->fifo);
	if (rx->fifo_path[0])
		unlink(rx->fifo_path);
	for (int i = 0; i < 2; i++)
		if (rx->stop[i] >= 0)
			close(rx->stop[i]);
	if (rx->path[0])
		unlink(rx->path);
	for (size_t i = 0; i < rx->n; i++) {
		if (rx->v[i].userns_fd >= 0)
			close(rx->v[i].userns_fd);
		if (rx->v[i].pidns_fd >= 0)
			close(rx->v[i].pidns_fd);
	}
	pthread_mutex_destroy(&rx->lock);
	free(rx);
}
