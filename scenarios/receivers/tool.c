/* The mock tool (tool.h). */
#include "tool.h"
#include "counter.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include "../../policy/sha256.h"

#define REQ_MAX 4096

struct tool {
	struct rthread rt;
	struct rlog log; /* each request read, as a line */
};

/* The request's own header value (name with ':'), or "-". */
static void header(const char *head, const char *name, char *out, size_t size)
{
	receiver_header(head, name, out, size);
	if (!out[0])
		snprintf(out, size, "-");
}

static void note(struct tool *t, const char *req, const char *sent, size_t n)
{
	char method[16] = "", path[256] = "", key[96], adm[96], line[800], hex[65] = "-";
	unsigned char d[SHA256_DIGEST_LEN];

	if (sscanf(req, "%15s %255s", method, path) != 2)
		return;
	header(req, "Idempotency-Key:", key, sizeof(key));
	header(req, "Paddock-Admission:", adm, sizeof(adm));
	if (sent) {
		sha256(sent, n, d);
		sha256_hex(d, hex);
	}
	snprintf(line, sizeof(line), "%s %s key=%s admission=%s sent=%s", method, path, key, adm,
		 hex);
	rlog_add(&t->log, line, strlen(line));
}

static int reply(char *out, size_t size, const char *path)
{
	const char *sp = strchr(path, ' ');
	const char *p = sp ? sp + 1 : "";

	if (strncmp(p, "/deny", 5) == 0)
		return snprintf(out, size,
				"HTTP/1.1 403 Forbidden\r\nContent-Length: %zu\r\nConnection: "
				"close\r\n\r\n%s",
				strlen(TOOL_DIAG), TOOL_DIAG);
	if (strncmp(p, "/busy", 5) == 0)
		return snprintf(out, size,
				"HTTP/1.1 503 Service Unavailable\r\nContent-Length: %zu\r\n"
				"Connection: close\r\n\r\n%s",
				strlen(TOOL_DIAG), TOOL_DIAG);
	if (strncmp(p, "/drop", 5) == 0)
		return 0;
	return snprintf(out, size,
			"HTTP/1.1 200 OK\r\nContent-Length: 3\r\nConnection: close\r\n\r\nok\n");
}

static void *serve(void *arg)
{
	struct tool *t = arg;

	for (;;) {
		struct pollfd p[2] = {{.fd = t->rt.fd, .events = POLLIN},
				      {.fd = t->rt.stop[0], .events = POLLIN}};
		struct timeval tv = {.tv_sec = 2};
		char req[REQ_MAX + 1], out[512];
		size_t len = 0;
		int c, n;

		if (poll(p, 2, -1) < 0 && errno != EINTR)
			return NULL;
		if (p[1].revents)
			return NULL;
		if (!(p[0].revents & POLLIN))
			continue;
		c = accept4(t->rt.fd, NULL, NULL, SOCK_CLOEXEC);
		if (c < 0)
			continue;
		setsockopt(c, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
		while (len < REQ_MAX) {
			ssize_t k = recv(c, req + len, REQ_MAX - len, 0);

			if (k <= 0)
				break;
			len += (size_t)k;
			req[len] = '\0';
			if (strstr(req, "\r\n\r\n"))
				break; /* the workload's requests carry no body */
		}
		req[len] = '\0';
		n = reply(out, sizeof(out), req);
		note(t, req, n > 0 ? out : NULL, n > 0 ? (size_t)n : 0);
		if (n > 0)
			(void)!send(c, out, (size_t)n, MSG_NOSIGNAL);
		close(c);
	}
}

int tool_start(struct tool **out, int port)
{
	struct tool *t = calloc(1, sizeof(*t));
	int e;

	if (!t)
		return -ENOMEM;
	rlog_init(&t->log);
	e = rthread_start(&t->rt, "127.0.0.1", port, false, serve, t);
	if (e < 0) {
		rlog_free(&t->log);
		free(t);
		return e;
	}
	*out = t;
	return 0;
}

size_t tool_served(struct tool *t)
{
	return rlog_count(&t->log);
}

size_t tool_matching(struct tool *t, const char *text)
{
	return rlog_matching(&t->log, text);
}

const char *tool_line(struct tool *t, size_t n)
{
	return rlog_entry(&t->log, n);
}

void tool_stop(struct tool *t)
{
	if (!t)
		return;
	rthread_stop(&t->rt);
	rlog_free(&t->log);
	free(t);
}
