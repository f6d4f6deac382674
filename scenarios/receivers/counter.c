/* Counting receivers (counter.h). */
#include "counter.h"
#include "../observers/selftest.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#define HEAD_MAX 2048

struct counter_rx {
	struct rthread rt;
	bool udp;
	struct rlog heads; /* each connection's request head, or datagram */
};

static void keep(struct counter_rx *rx, const char *buf, size_t n)
{
	/* make eval-selftest: a receiver that counts nothing must make the
	 * case UNKNOWN (its probes go unseen), never PASS. */
	if (selftest_on("receivers-blind"))
		return;
	rlog_add(&rx->heads, buf, n);
}

static void *serve(void *arg)
{
	static const char ok[] =
	    "HTTP/1.1 200 OK\r\nContent-Length: 3\r\nConnection: close\r\n\r\nok\n";
	struct counter_rx *rx = arg;
	char buf[HEAD_MAX];

	for (;;) {
		struct pollfd p[2] = {{.fd = rx->rt.fd, .events = POLLIN},
				      {.fd = rx->rt.stop[0], .events = POLLIN}};
		ssize_t n;
		int c;

		if (poll(p, 2, -1) < 0 && errno != EINTR)
			return NULL;
		if (p[1].revents)
			return NULL;
		if (!(p[0].revents & POLLIN))
			continue;
		if (rx->udp) {
			n = recv(rx->rt.fd, buf, sizeof(buf) - 1, MSG_DONTWAIT);
			if (n > 0)
				keep(rx, buf, (size_t)n);
			continue;
		}
		c = accept4(rx->rt.fd, NULL, NULL, SOCK_CLOEXEC);
		if (c < 0)
			continue;
		{
			struct timeval tv = {.tv_sec = 2};

			setsockopt(c, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
		}
		n = recv(c, buf, sizeof(buf) - 1, 0);
		keep(rx, buf, n > 0 ? (size_t)n : 0);
		(void)!send(c, ok, sizeof(ok) - 1, MSG_NOSIGNAL);
		close(c);
	}
}

socklen_t counter_addr(const char *addr, int port, struct sockaddr_storage *ss)
{
	memset(ss, 0, sizeof(*ss));
	if (strchr(addr, ':')) {
		struct sockaddr_in6 *a = (struct sockaddr_in6 *)ss;

		a->sin6_family = AF_INET6;
		a->sin6_port = htons((uint16_t)port);
		inet_pton(AF_INET6, addr, &a->sin6_addr);
		return sizeof(*a);
	}
	struct sockaddr_in *a4 = (struct sockaddr_in *)ss;

	a4->sin_family = AF_INET;
	a4->sin_port = htons((uint16_t)port);
	inet_pton(AF_INET, addr, &a4->sin_addr);
	return sizeof(*a4);
}

int counter_listen(const char *addr, int port, bool udp)
{
	struct sockaddr_storage ss = {0};
	socklen_t len = counter_addr(addr, port, &ss);
	int one = 1, e;
	int fd = socket(ss.ss_family, (udp ? SOCK_DGRAM : SOCK_STREAM) | SOCK_CLOEXEC, 0);

	if (fd < 0)
		return -errno;
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (bind(fd, (struct sockaddr *)&ss, len) < 0 || (!udp && listen(fd, 256) < 0)) {
		e = errno;
		close(fd);
		return -e;
	}
	return fd;
}

int rthread_start(struct rthread *t, const char *addr, int port, bool udp, void *(*loop)(void *),
		  void *arg)
{
	int e;

	t->fd = counter_listen(addr, port, udp);
	if (t->fd < 0)
		return t->fd;
	if (pipe2(t->stop, O_CLOEXEC) < 0) {
		e = errno;
		close(t->fd);
		return -e;
	}
	e = pthread_create(&t->thread, NULL, loop, arg);
	if (e) {
		close(t->fd);
		close(t->stop[0]);
		close(t->stop[1]);
		return -e;
	}
	return 0;
}

void rthread_stop(struct rthread *t)
{
	(void)!write(t->stop[1], "x", 1);
	pthread_join(t->thread, NULL);
	close(t->fd);
	close(t->stop[0]);
	close(t->stop[1]);
}

size_t receiver_read_request(int fd, char *buf, size_t size, int timeout_s)
{
	struct timeval tv = {.tv_sec = timeout_s};
	size_t len = 0;

	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	while (len + 1 < size) {
		ssize_t k = recv(fd, buf + len, size - 1 - len, 0);
		const char *end, *cl;

		if (k <= 0)
			break;
		len += (size_t)k;
		buf[len] = '\0';
		end = strstr(buf, "\r\n\r\n");
		cl = strcasestr(buf, "content-length:");
		if (end && (!cl || len >= (size_t)(end + 4 - buf) + (size_t)atoi(cl + 15)))
			break;
	}
	buf[len] = '\0';
	return len;
}

struct rconn {
	struct rconns *c;
	int fd;
};

static void *rconn_thread(void *arg)
{
	struct rconn *cn = arg;
	struct rconns *c = cn->c;

	c->one(c->arg, cn->fd);
	close(cn->fd);
	free(cn);
	pthread_mutex_lock(&c->lock);
	c->live--;
	pthread_mutex_unlock(&c->lock);
	return NULL;
}

static void *rconns_loop(void *arg)
{
	struct rconns *c = arg;

	for (;;) {
		struct pollfd f[2] = {{.fd = c->rt.fd, .events = POLLIN},
				      {.fd = c->rt.stop[0], .events = POLLIN}};
		struct rconn *cn;
		pthread_t th;
		int fd;

		if (poll(f, 2, -1) < 0 && errno != EINTR)
			return NULL;
		if (f[1].revents)
			return NULL;
		if (!(f[0].revents & POLLIN) ||
		    (fd = accept4(c->rt.fd, NULL, NULL, SOCK_CLOEXEC)) < 0)
			continue;
		cn = malloc(sizeof(*cn));
		if (!cn) {
			close(fd);
			continue;
		}
		*cn = (struct rconn){c, fd};
		pthread_mutex_lock(&c->lock);
		c->live++;
		pthread_mutex_unlock(&c->lock);
		if (pthread_create(&th, NULL, rconn_thread, cn) != 0) {
			pthread_mutex_lock(&c->lock);
			c->live--;
			pthread_mutex_unlock(&c->lock);
			close(fd);
			free(cn);
			continue;
		}
		pthread_detach(th);
	}
}

int rconns_start(struct rconns *c, int port, void (*one)(void *arg, int fd), void *arg)
{
	int e;

	c->one = one;
	c->arg = arg;
	c->live = 0;
	pthread_mutex_init(&c->lock, NULL);
	e = rthread_start(&c->rt, "127.0.0.1", port, false, rconns_loop, c);
	if (e < 0)
		pthread_mutex_destroy(&c->lock);
	return e;
}

void rconns_stop(struct rconns *c, int wait_ms)
{
	rthread_stop(&c->rt);
	for (int t = 0; t < wait_ms / 100; t++) {
		struct timespec ts = {0, 100000000L};
		int live;

		pthread_mutex_lock(&c->lock);
		live = c->live;
		pthread_mutex_unlock(&c->lock);
		if (!live)
			break;
		nanosleep(&ts, NULL);
	}
}

int counter_start(struct counter_rx **out, const char *addr, int port, bool udp)
{
	struct counter_rx *rx = calloc(1, sizeof(*rx));
	int e;

	if (!rx)
		return -ENOMEM;
	rx->udp = udp;
	rlog_init(&rx->heads);
	e = rthread_start(&rx->rt, addr, port, udp, serve, rx);
	if (e < 0) {
		rlog_free(&rx->heads);
		free(rx);
		return e;
	}
	*out = rx;
	return 0;
}

size_t counter_count(struct counter_rx *rx)
{
	return rlog_count(&rx->heads);
}

size_t counter_matching(struct counter_rx *rx, const char *text)
{
	return rlog_matching(&rx->heads, text);
}

const char *counter_head(struct counter_rx *rx, size_t n)
{
	return rlog_entry(&rx->heads, n);
}

void counter_stop(struct counter_rx *rx)
{
	if (!rx)
		return;
	rthread_stop(&rx->rt);
	rlog_free(&rx->heads);
	free(rx);
}

void rlog_init(struct rlog *l)
{
	memset(l, 0, sizeof(*l));
	pthread_mutex_init(&l->lock, NULL);
}

void rlog_add(struct rlog *l, const void *buf, size_t n)
{
	pthread_mutex_lock(&l->lock);
	if (l->n < RLOG_MAX) {
		l->entry[l->n] = malloc(n + 1);
		if (l->entry[l->n]) {
			memcpy(l->entry[l->n], buf, n);
			l->entry[l->n][n] = '\0';
			l->len[l->n] = n;
		}
	}
	l->n++;
	pthread_mutex_unlock(&l->lock);
}

size_t rlog_count(struct rlog *l)
{
	size_t n;

	pthread_mutex_lock(&l->lock);
	n = l->n;
	pthread_mutex_unlock(&l->lock);
	return n;
}

size_t rlog_matching(struct rlog *l, const char *text)
{
	size_t n = 0;

	pthread_mutex_lock(&l->lock);
	for (size_t i = 0; i < l->n && i < RLOG_MAX; i++)
		n += l->entry[i] && memmem(l->entry[i], l->len[i], text, strlen(text));
	pthread_mutex_unlock(&l->lock);
	return n;
}

const char *rlog_entry(struct rlog *l, size_t i)
{
	const char *e;

	pthread_mutex_lock(&l->lock);
	e = i < l->n && i < RLOG_MAX ? l->entry[i] : NULL;
	pthread_mutex_unlock(&l->lock);
	return e;
}

void rlog_free(struct rlog *l)
{
	for (size_t i = 0; i < l->n && i < RLOG_MAX; i++)
		free(l->entry[i]);
	pthread_mutex_destroy(&l->lock);
	memset(l, 0, sizeof(*l));
}

void receiver_header(const char *head, const char *name, char *out, size_t size)
{
	const char *h = strcasestr(head, name);
	size_t n;

	out[0] = '\0';
	if (!h)
		return;
	h += strlen(name);
	h += strspn(h, " ");
	n = strcspn(h, "\r\n");
	snprintf(out, size, "%.*s", (int)(n < size ? n : size - 1), h);
}
