/* The mock job service (jobsvc.h). */
#include "jobsvc.h"
#include "counter.h"

#include <arpa/inet.h>
#include <cjson/cJSON.h>
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define REQ_MAX 8192

struct job {
	struct jobsvc_job pub;
	uint64_t start_ms, end_ms; /* end_ms: cancelled at (0: not) */
	unsigned run_ms;
};

struct jobsvc {
	struct rconns rc;
	pthread_mutex_t lock;
	struct job j[JOBSVC_MAX];
	size_t n;
	struct rlog lines; /* request lines */
};

static uint64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

/* A job's state and charge as of now (under the lock). */
static void advance(struct job *j)
{
	uint64_t t = now_ms(), ran;

	if (strcmp(j->pub.state, "running") != 0)
		return;
	ran = t - j->start_ms;
	if (ran >= j->run_ms) {
		ran = j->run_ms;
		snprintf(j->pub.state, sizeof(j->pub.state), "completed");
	}
	j->pub.charge = (unsigned)(ran / JOBSVC_TICK_MS);
	if (j->pub.charge > j->pub.max)
		j->pub.charge = j->pub.max;
}

/* The session of "SESSION-GEN-N": the admission id without its last two
 * fields; "" without one. */
static void owner_of(const char *req, char *out, size_t size)
{
	char adm[96];
	char *dash;

	receiver_header(req, "Paddock-Admission:", adm, sizeof(adm));
	for (int k = 0; k < 2 && (dash = strrchr(adm, '-')); k++)
		*dash = '\0';
	snprintf(out, size, "%s", strchr(adm, '-') || adm[0] ? adm : "");
}

static void answer(int fd, int status, const char *body)
{
	char out[512];
	int n = snprintf(out, sizeof(out),
			 "HTTP/1.1 %d %s\r\nContent-Type: application/json\r\nContent-Length: "
			 "%zu\r\nConnection: close\r\n\r\n%s",
			 status, status < 300 ? "OK" : "No", strlen(body), body);

	(void)!send(fd, out, (size_t)n, MSG_NOSIGNAL);
}

/* A silent job's service: nothing, until the caller leaves (10 s at most). */
static void silence(int fd)
{
	struct pollfd p = {.fd = fd, .events = POLLIN};
	char b[256];

	while (poll(&p, 1, 10000) > 0 && recv(fd, b, sizeof(b), 0) > 0)
		;
}

static struct job *find(struct jobsvc *s, const char *id, size_t n)
{
	for (size_t i = 0; i < s->n; i++)
		if (strlen(s->j[i].pub.id) == n && strncmp(s->j[i].pub.id, id, n) == 0)
			return &s->j[i];
	return NULL;
}

static void submit(struct jobsvc *s, int fd, const char *req, const char *path)
{
	const char *body = strstr(req, "\r\n\r\n");
	cJSON *b = body ? cJSON_Parse(body + 4) : NULL;
	const cJSON *mx = cJSON_GetObjectItemCaseSensitive(b, "max");
	const cJSON *cm = cJSON_GetObjectItemCaseSensitive(b, "cancel");
	const cJSON *rm = cJSON_GetObjectItemCaseSensitive(b, "run_ms");
	char owner[80], out[128];
	struct job *j = NULL;

	owner_of(req, owner, sizeof(owner));
	pthread_mutex_lock(&s->lock);
	if (owner[0] && cJSON_IsNumber(mx) && cJSON_IsString(cm) && cJSON_IsNumber(rm) &&
	    s->n < JOBSVC_MAX) {
		j = &s->j[s->n];
		*j = (struct job){.start_ms = now_ms(), .run_ms = (unsigned)rm->valuedouble};
		snprintf(j->pub.id, sizeof(j->pub.id), "j%zu", s->n + 1);
		snprintf(j->pub.owner, sizeof(j->pub.owner), "%s", owner);
		snprintf(j->pub.via, sizeof(j->pub.via), "%s", path);
		snprintf(j->pub.mode, sizeof(j->pub.mode), "%s", cm->valuestring);
		snprintf(j->pub.state, sizeof(j->pub.state), "running");
		j->pub.max = (unsigned)mx->valuedouble;
		s->n++;
		snprintf(out, sizeof(out), "{\"id\":\"%s\",\"state\":\"running\"}", j->pub.id);
	}
	pthread_mutex_unlock(&s->lock);
	cJSON_Delete(b);
	answer(fd, j ? 201 : 400, j ? out : "{\"error\":\"bad job\"}");
}

/* GET /v1/jobs/ID, POST /v1/jobs/ID/cancel. */
static void about(struct jobsvc *s, int fd, const char *req, const char *method, const char *path)
{
	const char *id = path + strlen("/v1/jobs/");
	size_t n = strcspn(id, "/");
	bool cancel = strcmp(id + n, "/cancel") == 0 && strcmp(method, "POST") == 0;
	bool status = id[n] == '\0' && strcmp(method, "GET") == 0;
	char owner[80], out[160];
	int code = 404;
	bool silent = false;
	struct job *j;

	owner_of(req, owner, sizeof(owner));
	snprintf(out, sizeof(out), "{\"error\":\"no such job\"}");
	pthread_mutex_lock(&s->lock);
	j = (cancel || status) ? find(s, id, n) : NULL;
	if (j) {
		advance(j);
		silent = strcmp(j->pub.mode, "silent") == 0;
		if (cancel && strcmp(owner, j->pub.owner) != 0) {
			j->pub.foreign++;
			code = 403;
			snprintf(out, sizeof(out), "{\"error\":\"not the owner\"}");
			silent = false;
		} else if (cancel) {
			j->pub.cancels++;
			code = strcmp(j->pub.mode, "refuse") == 0 ? 409 : 200;
			if (code == 200 && strcmp(j->pub.state, "running") == 0 && !silent) {
				snprintf(j->pub.state, sizeof(j->pub.state), "cancelled");
				j->end_ms = now_ms();
			}
		} else {
			code = 200;
		}
		if (code != 403)
			snprintf(out, sizeof(out), "{\"id\":\"%s\",\"state\":\"%s\",\"charge\":%u}",
				 j->pub.id, j->pub.state, j->pub.charge);
	}
	pthread_mutex_unlock(&s->lock);
	if (silent)
		silence(fd);
	else
		answer(fd, code, out);
}

static void one(void *arg, int fd)
{
	struct jobsvc *s = arg;
	char req[REQ_MAX + 1], method[16] = "", path[256] = "";

	(void)receiver_read_request(fd, req, sizeof(req), 5);
	if (sscanf(req, "%15s %255s", method, path) == 2) {
		rlog_add(&s->lines, req, strcspn(req, "\r\n"));
		if (strcmp(method, "POST") == 0 &&
		    (strcmp(path, "/v1/jobs") == 0 || strcmp(path, "/v1/batch") == 0))
			submit(s, fd, req, path);
		else if (strncmp(path, "/v1/jobs/", 9) == 0)
			about(s, fd, req, method, path);
		else
			answer(fd, 200, "{}"); /* the harness's probe */
	}
}

int jobsvc_start(struct jobsvc **out, int port)
{
	struct jobsvc *s = calloc(1, sizeof(*s));
	int e;

	if (!s)
		return -ENOMEM;
	pthread_mutex_init(&s->lock, NULL);
	rlog_init(&s->lines);
	e = rconns_start(&s->rc, port, one, s);
	if (e < 0) {
		pthread_mutex_destroy(&s->lock);
		rlog_free(&s->lines);
		free(s);
		return e;
	}
	*out = s;
	return 0;
}

int jobsvc_port(struct jobsvc *s)
{
	struct sockaddr_in a;
	socklen_t len = sizeof(a);

	if (getsockname(s->rc.rt.fd, (struct sockaddr *)&a, &len) < 0)
		return -errno;
	return ntohs(a.sin_port);
}

size_t jobsvc_count(struct jobsvc *s)
{
	size_t n;

	pthread_mutex_lock(&s->lock);
	n = s->n;
	pthread_mutex_unlock(&s->lock);
	return n;
}

bool jobsvc_get(struct jobsvc *s, size_t i, struct jobsvc_job *out)
{
	bool ok;

	pthread_mutex_lock(&s->lock);
	ok = i < s->n;
	if (ok) {
		advance(&s->j[i]);
		*out = s->j[i].pub;
	}
	pthread_mutex_unlock(&s->lock);
	return ok;
}

size_t jobsvc_requests(struct jobsvc *s, const char *text)
{
	return rlog_matching(&s->lines, text);
}

void jobsvc_stop(struct jobsvc *s)
{
	if (!s)
		return;
	/* Connection threads end within their receive timeout, or when a
	 * silent one's caller left (10 s at most). */
	rconns_stop(&s->rc, 12000);
	rlog_free(&s->lines);
	pthread_mutex_destroy(&s->lock);
	free(s);
}
