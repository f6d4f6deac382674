/* The mock SaaS (saas.h). */
#include "saas.h"
#include "counter.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#define OBJECTS_MAX 8
#define REQ_MAX	    4096

struct object {
	char tenant[16], id[16], content[128];
	bool alive;
};

struct saas {
	struct rthread rt;
	pthread_mutex_t lock; /* the objects */
	struct rlog log;      /* what it authorized or refused */
	struct object obj[OBJECTS_MAX];
	size_t n_obj;
};

static void note(struct saas *s, const char *method, const char *path, const char *admission)
{
	char line[600];

	snprintf(line, sizeof(line), "%s %s admission=%s", method, path,
		 admission[0] ? admission : "-");
	rlog_add(&s->log, line, strlen(line));
}

static struct object *find(struct saas *s, const char *tenant, const char *id)
{
	for (size_t i = 0; i < s->n_obj; i++)
		if (!strcmp(s->obj[i].tenant, tenant) && !strcmp(s->obj[i].id, id))
			return &s->obj[i];
	return NULL;
}

/* The request's own header value (name with ':'), or "". */

static const char *handle(struct saas *s, char *req, size_t len, int *status, char *body,
			  size_t bsize)
{
	char method[16] = "", path[512] = "", tenant[16] = "", id[16] = "", rest[8] = "";
	char admission[96], clen[16];
	const char *payload = strstr(req, "\r\n\r\n");
	struct object *o;
	int k;

	(void)len;
	body[0] = '\0';
	if (sscanf(req, "%15s %511s", method, path) != 2) {
		*status = 400;
		return "Bad Request";
	}
	receiver_header(req, "Paddock-Admission:", admission, sizeof(admission));
	note(s, method, path, admission);
	receiver_header(req, "Content-Length:", clen, sizeof(clen));
	payload = payload ? payload + 4 : "";
	k = sscanf(path, "/tenants/%15[^/]/objects/%15[^/?]%7s", tenant, id, rest);
	pthread_mutex_lock(&s->lock);
	o = k == 2 ? find(s, tenant, id) : NULL;
	if (k == 2 && o && o->alive && !strcmp(method, "GET")) {
		snprintf(body, bsize, "%s", o->content);
		*status = 200;
	} else if (k == 2 && o && o->alive && !strcmp(method, "PUT")) {
		snprintf(o->content, sizeof(o->content), "%.*s", atoi(clen) > 0 ? atoi(clen) : 0,
			 payload);
		*status = 200;
	} else if (k == 2 && o && o->alive && !strcmp(method, "DELETE")) {
		o->alive = false;
		*status = 200;
	} else if (!strcmp(method, "POST") &&
		   sscanf(path, "/tenants/%15[^/]/objects%7s", tenant, rest) == 1 &&
		   s->n_obj < OBJECTS_MAX) {
		o = &s->obj[s->n_obj++];
		snprintf(o->tenant, sizeof(o->tenant), "%s", tenant);
		snprintf(o->id, sizeof(o->id), "n%zu", s->n_obj);
		snprintf(o->content, sizeof(o->content), "created");
		o->alive = true;
		*status = 201;
	} else {
		*status = 404;
	}
	pthread_mutex_unlock(&s->lock);
	return *status == 404 ? "Not Found" : *status == 201 ? "Created" : "OK";
}

static void *serve(void *arg)
{
	struct saas *s = arg;

	for (;;) {
		struct pollfd p[2] = {{.fd = s->rt.fd, .events = POLLIN},
				      {.fd = s->rt.stop[0], .events = POLLIN}};
		char req[REQ_MAX + 1], body[160], reply[400];
		struct timeval tv = {.tv_sec = 2};
		size_t len = 0;
		const char *why;
		int c, status, n;

		if (poll(p, 2, -1) < 0 && errno != EINTR)
			return NULL;
		if (p[1].revents)
			return NULL;
		if (!(p[0].revents & POLLIN))
			continue;
		c = accept4(s->rt.fd, NULL, NULL, SOCK_CLOEXEC);
		if (c < 0)
			continue;
		setsockopt(c, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
		/* The head, and a small body (Content-Length) when one comes. */
		while (len < REQ_MAX) {
			ssize_t k = recv(c, req + len, REQ_MAX - len, 0);
			const char *end;
			char clen[16];

			if (k <= 0)
				break;
			len += (size_t)k;
			req[len] = '\0';
			end = strstr(req, "\r\n\r\n");
			if (!end)
				continue;
			receiver_header(req, "Content-Length:", clen, sizeof(clen));
			if ((size_t)(end + 4 - req) + (size_t)atoi(clen) <= len)
				break;
		}
		req[len] = '\0';
		why = handle(s, req, len, &status, body, sizeof(body));
		n = snprintf(reply, sizeof(reply),
			     "HTTP/1.1 %d %s\r\nContent-Length: %zu\r\nConnection: close\r\n\r\n%s",
			     status, why, strlen(body), body);
		(void)!send(c, reply, (size_t)n, MSG_NOSIGNAL);
		close(c);
	}
}

int saas_start(struct saas **out, int port)
{
	struct saas *s = calloc(1, sizeof(*s));
	int e;

	if (!s)
		return -ENOMEM;
	s->obj[0] = (struct object){"t1", "o1", "t1-original", true};
	s->obj[1] = (struct object){"t2", "o2", "t2-secret", true};
	s->n_obj = 2;
	pthread_mutex_init(&s->lock, NULL);
	rlog_init(&s->log);
	e = rthread_start(&s->rt, "127.0.0.1", port, false, serve, s);
	if (e < 0) {
		rlog_free(&s->log);
		pthread_mutex_destroy(&s->lock);
		free(s);
		return e;
	}
	*out = s;
	return 0;
}

size_t saas_served(struct saas *s)
{
	return rlog_count(&s->log);
}

size_t saas_matching(struct saas *s, const char *text)
{
	return rlog_matching(&s->log, text);
}

const char *saas_line(struct saas *s, size_t n)
{
	return rlog_entry(&s->log, n);
}

bool saas_object(struct saas *s, const char *tenant, const char *id, char *buf, size_t size)
{
	struct object *o;
	bool alive;

	pthread_mutex_lock(&s->lock);
	o = find(s, tenant, id);
	alive = o && o->alive;
	if (alive)
		snprintf(buf, size, "%s", o->content);
	pthread_mutex_unlock(&s->lock);
	return alive;
}

void saas_stop(struct saas *s)
{
	if (!s)
		return;
	rthread_stop(&s->rt);
	rlog_free(&s->log);
	pthread_mutex_destroy(&s->lock);
	free(s);
}
