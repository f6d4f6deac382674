/* HB-12's receivers (publish.h). */
#include "publish.h"
#include "counter.h"

#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#define REQS_MAX 64
#define HEAD_MAX 8192

struct publish_rx {
	struct rthread rt;
	const char *answer;
	pthread_mutex_t lock;
	struct publish_req req[REQS_MAX];
	size_t n;
};

/* One request: the head, then Content-Length bytes of body (or what
 * comes before the peer's end). */
static void serve_one(struct publish_rx *rx, int c)
{
	char *buf = malloc(HEAD_MAX + PUBLISH_BODY_MAX + 1), clen[24] = "", reply[256];
	size_t len = 0, want = 0;
	const char *end = NULL;
	struct publish_req q = {0};
	int k;

	if (!buf)
		return;
	while (len < HEAD_MAX + PUBLISH_BODY_MAX) {
		ssize_t n = recv(c, buf + len, HEAD_MAX + PUBLISH_BODY_MAX - len, 0);

		if (n <= 0)
			break;
		len += (size_t)n;
		buf[len] = '\0';
		if (!end && (end = strstr(buf, "\r\n\r\n"))) {
			receiver_header(buf, "Content-Length:", clen, sizeof(clen));
			want = (size_t)(end + 4 - buf) + (size_t)strtoul(clen, NULL, 10);
		}
		if (end && clen[0] && len >= want)
			break;
	}
	buf[len] = '\0';
	if (sscanf(buf, "%15s %255s", q.method, q.path) == 2) {
		receiver_header(buf, "Paddock-Admission:", q.admission, sizeof(q.admission));
		end = strstr(buf, "\r\n\r\n");
		q.len = end ? len - (size_t)(end + 4 - buf) : 0;
		if (end && clen[0] && q.len > strtoul(clen, NULL, 10))
			q.len = strtoul(clen, NULL, 10);
		q.body = malloc(q.len + 1);
		if (q.body) {
			memcpy(q.body, end ? end + 4 : "", q.len);
			q.body[q.len] = '\0';
		}
		pthread_mutex_lock(&rx->lock);
		if (rx->n < REQS_MAX && q.body)
			rx->req[rx->n++] = q;
		else
			free(q.body);
		pthread_mutex_unlock(&rx->lock);
	}
	free(buf);
	k = snprintf(reply, sizeof(reply),
		     "HTTP/1.1 200 OK\r\nContent-Length: %zu\r\nConnection: close\r\n\r\n",
		     strlen(rx->answer));
	(void)!send(c, reply, (size_t)k, MSG_NOSIGNAL);
	(void)!send(c, rx->answer, strlen(rx->answer), MSG_NOSIGNAL);
}

static void *serve(void *arg)
{
	struct publish_rx *rx = arg;

	for (;;) {
		struct pollfd p[2] = {{.fd = rx->rt.fd, .events = POLLIN},
				      {.fd = rx->rt.stop[0], .events = POLLIN}};
		struct timeval tv = {.tv_sec = 2};
		int c;

		if (poll(p, 2, -1) < 0 && errno != EINTR)
			return NULL;
		if (p[1].revents)
			return NULL;
		if (!(p[0].revents & POLLIN))
			continue;
		c = accept4(rx->rt.fd, NULL, NULL, SOCK_CLOEXEC);
		if (c < 0)
			continue;
		setsockopt(c, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
		serve_one(rx, c);
		close(c);
	}
}

int publish_start(struct publish_rx **out, int port, const char *answer)
{
	struct publish_rx *rx = calloc(1, sizeof(*rx));
	int e;

	if (!rx)
		return -ENOMEM;
	rx->answer = answer;
	pthread_mutex_init(&rx->lock, NULL);
	e = rthread_start(&rx->rt, "127.0.0.1", port, false, serve, rx);
	if (e < 0) {
		pthread_mutex_destroy(&rx->lock);
		free(rx);
		return e;
	}
	*out = rx;
	return 0;
}

size_t publish_count(struct publish_rx *rx)
{
	size_t n;

	pthread_mutex_lock(&rx->lock);
	n = rx->n;
	pthread_mutex_unlock(&rx->lock);
	return n;
}

bool publish_get(struct publish_rx *rx, size_t n, struct publish_req *out)
{
	bool ok;

	pthread_mutex_lock(&rx->lock);
	ok = n < rx->n;
	if (ok)
		*out = rx->req[n];
	pthread_mutex_unlock(&rx->lock);
	return ok;
}

void publish_stop(struct publish_rx *rx)
{
	if (!rx)
		return;
	rthread_stop(&rx->rt);
	for (size_t i = 0; i < rx->n; i++)
		free(rx->req[i].body);
	free(rx);
}
