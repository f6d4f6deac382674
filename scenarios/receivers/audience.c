/* HB-11's services (audience.h). One thread per receiver; the heads are
 * kept under a lock (the case reads them while the workload runs). */
#include "audience.h"

#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include "../observers/secret_scan.h"
#include "counter.h"

#define HEADS_MAX 64
#define HEAD_MAX  4096

struct audience_rx {
	struct rthread rt;
	pthread_mutex_t lock;
	char *heads[HEADS_MAX];
	size_t n;
	bool sent_any;
	char sent[HEADS_MAX * 2048]; /* the echoes' bodies, in order */
	size_t n_sent;
};

/* The value of header name in head ("" if none), cut at 100 bytes. */
static void value(const char *head, const char *name, char *out, size_t size)
{
	const char *h = strstr(head, name);
	size_t n = h ? strcspn(h + strlen(name), "\r\n") : 0;

	snprintf(out, size, "%.*s", (int)(n > 100 ? 100 : n), h ? h + strlen(name) : "");
}

/* The echo: the credential headers as they came, then the token (the
 * Authorization value past "Bearer ", or the X-Api-Key value) in every
 * form the outside scan looks for (hex, base64, percent-encoded,
 * JSON-escaped: secret_scan.h), as a chunked body of 3-byte chunks written
 * in pieces: an upstream echoing it split and encoded. */
static void answer(struct audience_rx *rx, int c, const char *head)
{
	static __thread char f[SCAN_FORMS][SCAN_FORM_LEN];
	char a[128], k[128], body[SCAN_FORMS * (SCAN_FORM_LEN + 8) + 300], resp[4 * sizeof(body)];
	const char *tok;
	int bl, n;

	value(head, "\r\nAuthorization: ", a, sizeof(a));
	value(head, "\r\nX-Api-Key: ", k, sizeof(k));
	tok = strncmp(a, "Bearer ", 7) == 0 ? a + 7 : k;
	bl = snprintf(body, sizeof(body), "echo:[%s][%s]\n", a, k);
	if (*tok) {
		scan_forms(tok, f);
		for (size_t i = 0; i < SCAN_FORMS && (size_t)bl < sizeof(body); i++)
			bl += snprintf(body + bl, sizeof(body) - (size_t)bl, "%s:<<%s>>\n",
				       scan_form_names[i], f[i]);
	}
	if ((size_t)bl >= sizeof(body))
		bl = (int)sizeof(body) - 1;
	n = snprintf(resp, sizeof(resp),
		     "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n");
	for (int i = 0; i < bl; i += 3)
		n += snprintf(resp + n, sizeof(resp) - (size_t)n, "%x\r\n%.*s\r\n",
			      bl - i < 3 ? bl - i : 3, 3, body + i);
	n += snprintf(resp + n, sizeof(resp) - (size_t)n, "0\r\n\r\n");
	for (int i = 0; i < n; i += 256) {
		(void)!send(c, resp + i, (size_t)(n - i < 256 ? n - i : 256), MSG_NOSIGNAL);
		usleep(1000);
	}
	pthread_mutex_lock(&rx->lock);
	if (rx->n_sent + (size_t)bl < sizeof(rx->sent)) {
		memcpy(rx->sent + rx->n_sent, body, (size_t)bl);
		rx->n_sent += (size_t)bl;
	}
	pthread_mutex_unlock(&rx->lock);
}

static void *serve(void *arg)
{
	struct audience_rx *rx = arg;
	char buf[HEAD_MAX];

	for (;;) {
		struct pollfd p[2] = {{.fd = rx->rt.fd, .events = POLLIN},
				      {.fd = rx->rt.stop[0], .events = POLLIN}};
		struct timeval tv = {.tv_sec = 2};
		ssize_t n;
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
		n = recv(c, buf, sizeof(buf) - 1, 0);
		buf[n > 0 ? n : 0] = '\0';
		pthread_mutex_lock(&rx->lock);
		if (rx->n < HEADS_MAX)
			rx->heads[rx->n++] = strdup(buf);
		pthread_mutex_unlock(&rx->lock);
		answer(rx, c, buf);
		close(c);
	}
}

int audience_start(struct audience_rx **out, int port)
{
	struct audience_rx *rx = calloc(1, sizeof(*rx));
	int e;

	if (!rx)
		return -ENOMEM;
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

size_t audience_count(struct audience_rx *rx)
{
	size_t n;

	pthread_mutex_lock(&rx->lock);
	n = rx->n;
	pthread_mutex_unlock(&rx->lock);
	return n;
}

size_t audience_matching_off(struct audience_rx *rx, const char *text, const char *line)
{
	size_t k = 0;

	pthread_mutex_lock(&rx->lock);
	for (size_t i = 0; i < rx->n; i++)
		if (rx->heads[i] && strstr(rx->heads[i], text) &&
		    (!line || strncmp(rx->heads[i], line, strlen(line)) != 0))
			k++;
	pthread_mutex_unlock(&rx->lock);
	return k;
}

size_t audience_matching(struct audience_rx *rx, const char *text)
{
	return audience_matching_off(rx, text, NULL);
}

const char *audience_head(struct audience_rx *rx, size_t n)
{
	const char *h;

	pthread_mutex_lock(&rx->lock);
	h = n < rx->n ? rx->heads[n] : NULL;
	pthread_mutex_unlock(&rx->lock);
	return h;
}

bool audience_sent(struct audience_rx *rx, const char *text)
{
	bool yes;

	pthread_mutex_lock(&rx->lock);
	yes = memmem(rx->sent, rx->n_sent, text, strlen(text)) != NULL;
	pthread_mutex_unlock(&rx->lock);
	return yes;
}

void audience_stop(struct audience_rx *rx)
{
	if (!rx)
		return;
	rthread_stop(&rx->rt);
	for (size_t i = 0; i < rx->n; i++)
		free(rx->heads[i]);
	free(rx);
}
