/* Remote jobs (docs/network.md, "Remote jobs"): the pure part (which
 * request submits a job, the job id and status a service answers with)
 * and the reconciliation at the session's end. The session ending is
 * not the jobs ending (HB-16): a job is cancelled and its end confirmed
 * by the service, or it is recorded as retained (authorised to outlive
 * the session) or unknown, with its exposure still held. */
#include "mediator.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define JOBS_RESP_MAX	 8192
#define JOBS_EXCHANGE_MS 1500 /* one request of ours: connect, send, read to the end */
#define JOBS_POLL_MS	 200  /* between two rounds of status requests */

enum job_route jobs_route(const struct policy_net_rule *r, const char *method, const char *path)
{
	if (!r->jobs)
		return JOB_NONE;
	if (policy_route_match(&r->jobs->submit, method, path))
		return JOB_SUBMIT;
	if (r->jobs->outlive.path && policy_route_match(&r->jobs->outlive, method, path))
		return JOB_OUTLIVE;
	return JOB_NONE;
}

/* The JSON object of a response's body (after its head), or NULL. */
static cJSON *body_json(const char *resp, size_t len)
{
	const char *end = memmem(resp, len, "\r\n\r\n", 4);
	cJSON *j;

	if (!end)
		return NULL;
	end += 4;
	if (memchr(end, '\0', len - (size_t)(end - resp)))
		return NULL; /* a NUL would cut what cJSON reads */
	j = cJSON_ParseWithLength(end, len - (size_t)(end - resp));
	if (j && !cJSON_IsObject(j)) {
		cJSON_Delete(j);
		return NULL;
	}
	return j;
}

static bool word(const char *s, size_t max, const char *set)
{
	size_t n = strlen(s);

	return n > 0 && n <= max && strspn(s, set) == n;
}

int jobs_parse_id(const char *resp, size_t len, char id[JOB_ID_MAX + 1])
{
	cJSON *j = body_json(resp, len);
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(j, "id");
	int r = -EINVAL;

	if (cJSON_IsString(v) &&
	    word(v->valuestring, JOB_ID_MAX,
		 "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.-") &&
	    strcmp(v->valuestring, ".") != 0 && strcmp(v->valuestring, "..") != 0) {
		snprintf(id, JOB_ID_MAX + 1, "%s", v->valuestring);
		r = 0;
	}
	cJSON_Delete(j);
	return r;
}

int jobs_parse_status(const char *resp, size_t len, unsigned *status, char state[32],
		      uint64_t *charge, bool *has_charge)
{
	cJSON *j;
	const cJSON *s, *c;
	int r = http_parse_status(resp, len, status);

	*has_charge = false;
	state[0] = '\0';
	if (r <= 0)
		return -EINVAL;
	j = body_json(resp, len);
	s = cJSON_GetObjectItemCaseSensitive(j, "state");
	c = cJSON_GetObjectItemCaseSensitive(j, "charge");
	r = -EINVAL;
	if (cJSON_IsString(s) && word(s->valuestring, 31, "abcdefghijklmnopqrstuvwxyz_-")) {
		snprintf(state, 32, "%s", s->valuestring);
		r = 0;
	}
	if (r == 0 && c) {
		double d = cJSON_IsNumber(c) ? c->valuedouble : -1;

		if (d < 0 || d > (double)POLICY_METER_CREDITS_MAX || d != (double)(uint64_t)d)
			r = -EINVAL; /* a charge that cannot be read is none */
		else
			*charge = (uint64_t)d, *has_charge = true;
	}
	cJSON_Delete(j);
	return r;
}

bool jobs_state_ended(const char *state)
{
	return strcmp(state, "cancelled") == 0 || strcmp(state, "completed") == 0 ||
	       strcmp(state, "failed") == 0;
}

int jobs_target(const char *tmpl, const char *id, char *out, size_t size)
{
	const char *at = strstr(tmpl, "{id}");
	int n;

	if (!at)
		n = snprintf(out, size, "%s", tmpl);
	else
		n = snprintf(out, size, "%.*s%s%s", (int)(at - tmpl), tmpl, id, at + 4);
	return n < 0 || (size_t)n >= size ? -E2BIG : 0;
}

/* ------------------------------------------------------ reconciliation */

static uint64_t mono_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

static bool wait_fd(int fd, short ev, uint64_t until)
{
	for (;;) {
		uint64_t now = mono_ms();
		struct pollfd p = {.fd = fd, .events = ev};
		int r;

		if (now >= until)
			return false;
		r = poll(&p, 1, (int)(until - now));
		if (r < 0 && errno == EINTR)
			continue;
		return r > 0 && !(p.revents & POLLNVAL);
	}
}

/* One request of ours to the job's service, its whole response into
 * resp: the length, or -1 (not dialled, not answered in time). */
static ssize_t exchange(const struct jobs_io *io, const struct mediator_job *j, const char *method,
			const char *tmpl, char *resp, size_t size, uint64_t until)
{
	char target[POLICY_JOB_PATH_MAX + JOB_ID_MAX + 8], req[1024];
	size_t len = 0, sent = 0;
	int n, fd, soerr = 0;
	socklen_t sl = sizeof(soerr);

	if (jobs_target(tmpl, j->id, target, sizeof(target)) < 0)
		return -1;
	/* Our own requests carry the submission's admission id: the service
	 * knows the owner by it, and the log joins them. */
	n = snprintf(req, sizeof(req),
		     "%s %s HTTP/1.1\r\nHost: %s:%u\r\nPaddock-Admission: %s\r\n"
		     "Content-Length: 0\r\nConnection: close\r\n\r\n",
		     method, target, j->name, j->port, j->admission);
	if (n < 0 || (size_t)n >= sizeof(req))
		return -1;
	fd = io->dial(io->arg, j->name, j->port);
	if (fd < 0)
		return -1;
	if (!wait_fd(fd, POLLOUT, until) || getsockopt(fd, SOL_SOCKET, SO_ERROR, &soerr, &sl) < 0 ||
	    soerr) {
		close(fd);
		return -1;
	}
	while (sent < (size_t)n) {
		ssize_t k = send(fd, req + sent, (size_t)n - sent, MSG_NOSIGNAL);

		if (k < 0 && (errno == EAGAIN || errno == EINTR) && wait_fd(fd, POLLOUT, until))
			continue;
		if (k <= 0) {
			close(fd);
			return -1;
		}
		sent += (size_t)k;
	}
	for (;;) {
		ssize_t k;

		if (len == size || !wait_fd(fd, POLLIN, until))
			break;
		k = recv(fd, resp + len, size - len, 0);
		if (k < 0 && (errno == EAGAIN || errno == EINTR))
			continue;
		if (k <= 0) {
			close(fd);
			return k == 0 ? (ssize_t)len : -1;
		}
		len += (size_t)k;
	}
	close(fd);
	return -1; /* not to its end in time, or larger than we read */
}

static uint64_t until_of(uint64_t deadline)
{
	uint64_t now = mono_ms(), u = now + JOBS_EXCHANGE_MS;

	return u < deadline ? u : deadline;
}

/* jobs_status() by an absolute deadline (mono_ms()). */
static bool status_until(const struct jobs_io *io, struct mediator_job *j, const char *method,
			 const char *tmpl, uint64_t until)
{
	char resp[JOBS_RESP_MAX];
	unsigned status = 0;
	char state[32];
	uint64_t charge = 0;
	bool has = false;
	ssize_t n = exchange(io, j, method, tmpl, resp, sizeof(resp), until);

	if (n < 0 || jobs_parse_status(resp, (size_t)n, &status, state, &charge, &has) < 0 ||
	    status >= 300) {
		if (!j->remote[0] || n < 0)
			snprintf(j->remote, sizeof(j->remote), "%s",
				 n < 0 ? "no-answer" : "unreadable");
		return false;
	}
	snprintf(j->remote, sizeof(j->remote), "%s", state);
	j->charge = charge;
	j->has_charge = has;
	return true;
}

bool jobs_status(const struct jobs_io *io, struct mediator_job *j, const char *method,
		 const char *tmpl, uint64_t timeout_ms)
{
	return status_until(io, j, method, tmpl, mono_ms() + timeout_ms);
}

/* The job's status, asked once: true when the service said one. */
static bool ask_status(const struct jobs_io *io, struct mediator_job *j, uint64_t deadline)
{
	return status_until(io, j, j->rule->jobs->status.method, j->rule->jobs->status.path,
			    until_of(deadline));
}

static void cancel(const struct jobs_io *io, struct mediator_job *j, uint64_t deadline)
{
	char resp[JOBS_RESP_MAX];
	unsigned status = 0;
	ssize_t n = exchange(io, j, j->rule->jobs->cancel.method, j->rule->jobs->cancel.path, resp,
			     sizeof(resp), until_of(deadline));

	if (n < 0 || http_parse_status(resp, (size_t)n, &status) <= 0)
		snprintf(j->cancel, sizeof(j->cancel), "no-answer");
	else
		snprintf(j->cancel, sizeof(j->cancel), "%s", status < 300 ? "accepted" : "refused");
}

static void conclude(const struct jobs_io *io, struct mediator_job *j, const char *state)
{
	snprintf(j->state, sizeof(j->state), "%s", state);
	j->final = true;
	io->end(io->arg, j);
}

void jobs_reconcile(struct mediator_jobs *t, uint64_t settle_ms, bool stop,
		    const struct jobs_io *io)
{
	uint64_t deadline = mono_ms() + settle_ms;
	size_t open = 0;

	for (size_t i = 0; i < t->n; i++) {
		struct mediator_job *j = &t->j[i];

		if (j->voided) {
			j->final = true;
			continue;
		}
		snprintf(j->cancel, sizeof(j->cancel), "not-sent");
		if (stop) {
			/* --weaken local-exit-is-stop: the local end taken for the
			 * job's; nothing asked, the exposure released. */
			snprintf(j->remote, sizeof(j->remote), "not-asked");
			conclude(io, j, "stopped");
			continue;
		}
		if (!j->id[0]) {
			/* Submitted, and no id to ask about: it may be running. */
			snprintf(j->remote, sizeof(j->remote), "no-id");
			conclude(io, j, "unknown");
			continue;
		}
		if (ask_status(io, j, deadline) && jobs_state_ended(j->remote)) {
			conclude(io, j, "ended");
			continue;
		}
		if (j->outlive) {
			/* Authorised to outlive the session: its lease (owner,
			 * exposure) goes on; its exposure stays held. */
			conclude(io, j, "retained");
			continue;
		}
		cancel(io, j, deadline);
		open++;
	}
	while (open) {
		for (size_t i = 0; i < t->n; i++) {
			struct mediator_job *j = &t->j[i];

			if (j->final)
				continue;
			if (mono_ms() >= deadline) {
				conclude(io, j, "unknown");
				open--;
			} else if (ask_status(io, j, deadline) && jobs_state_ended(j->remote)) {
				conclude(io, j, "ended");
				open--;
			}
		}
		if (open && mono_ms() < deadline) {
			struct timespec ts = {0, JOBS_POLL_MS * 1000000L};

			nanosleep(&ts, NULL);
		}
	}
}
