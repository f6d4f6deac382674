/* The fake metered provider (provider.h). */
#include "provider.h"
#include "counter.h"

#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#define REQ_MAX 8192

struct provider {
	struct rconns rc;
	struct rlog log;      /* every request and receipt, a line each */
	pthread_mutex_t lock; /* of charged */
	unsigned charged;
};

static void header(const char *head, const char *name, char *out, size_t size)
{
	const char *h = strcasestr(head, name);
	size_t n;

	snprintf(out, size, "-");
	if (!h)
		return;
	h += strlen(name);
	h += strspn(h, " ");
	n = strcspn(h, "\r\n");
	snprintf(out, size, "%.*s", (int)(n < size ? n : size - 1), h);
}

static void nap(int ms)
{
	struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};

	while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
		;
}

/* GET /v1/receipts/KEY: the receipt of what this provider billed for
 * Idempotency-Key KEY (200, X-Charge: what it billed), or 404 when it
 * billed nothing for it. Free, and logged as a line of its own
 * ("RECEIPT KEY found|not-found admission=ID"), never as a request. */
static void receipt(struct provider *p, int c, const char *req, const char *key)
{
	char want[128], adm[96], line[256], out[256];
	unsigned billed = 0;
	int n;

	snprintf(want, sizeof(want), " key=%.*s ", (int)strcspn(key, "?"), key);
	header(req, "Paddock-Admission:", adm, sizeof(adm));
	for (size_t i = 0, n_log = rlog_count(&p->log); i < n_log; i++) {
		const char *l = rlog_entry(&p->log, i);

		if (l && strstr(l, want) && !strstr(l, " charged=0 "))
			billed += PROVIDER_PRICE;
	}
	snprintf(line, sizeof(line), "RECEIPT %.*s %s admission=%s", (int)strcspn(key, "?"), key,
		 billed ? "found" : "not-found", adm);
	rlog_add(&p->log, line, strlen(line));
	n = billed ? snprintf(out, sizeof(out),
			      "HTTP/1.1 200 OK\r\nX-Charge: %u\r\nContent-Length: 8\r\n"
			      "Connection: close\r\n\r\nreceipt\n",
			      billed)
		   : snprintf(out, sizeof(out),
			      "HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\nConnection: "
			      "close\r\n\r\n");
	(void)!send(c, out, (size_t)n, MSG_NOSIGNAL);
}

static void one(void *arg, int c)
{
	struct provider *p = arg;
	char req[REQ_MAX + 1], method[16] = "", path[256] = "", key[96], adm[96], line[800];
	char out[512];
	unsigned charge;
	bool answer = true;

	(void)receiver_read_request(c, req, sizeof(req), 5);
	if (sscanf(req, "%15s %255s", method, path) == 2 &&
	    strncmp(path, PROVIDER_RECEIPTS, strlen(PROVIDER_RECEIPTS)) == 0) {
		receipt(p, c, req, path + strlen(PROVIDER_RECEIPTS));
	} else if (sscanf(req, "%15s %255s", method, path) == 2) {
		charge = strncmp(path, "/free", 5) == 0 ? 0 : PROVIDER_PRICE;
		answer = strncmp(path, "/drop", 5) != 0;
		header(req, "Idempotency-Key:", key, sizeof(key));
		header(req, "Paddock-Admission:", adm, sizeof(adm));
		snprintf(line, sizeof(line), "%s %s key=%s admission=%s charged=%u answered=%s",
			 method, path, key, adm, charge, answer ? "yes" : "no");
		rlog_add(&p->log, line, strlen(line));
		pthread_mutex_lock(&p->lock);
		p->charged += charge;
		pthread_mutex_unlock(&p->lock);
		if (charge && answer)
			nap(PROVIDER_WAIT_MS);
		if (answer) {
			char body[160];
			int n;

			/* HB-21's two model-API shapes state the charge in their
			 * own usage member too. */
			if (strcmp(path, "/v1/chat/completions") == 0)
				snprintf(
				    body, sizeof(body),
				    "{\"choices\":[{\"message\":{\"role\":\"assistant\","
				    "\"content\":\"ok\"}}],\"usage\":{\"completion_tokens\":%u}}",
				    charge);
			else if (strcmp(path, "/v1/messages") == 0)
				snprintf(body, sizeof(body),
					 "{\"content\":[{\"type\":\"text\",\"text\":\"ok\"}],"
					 "\"usage\":{\"output_tokens\":%u}}",
					 charge);
			else
				snprintf(body, sizeof(body), "ok\n");
			n = snprintf(out, sizeof(out),
				     "HTTP/1.1 200 OK\r\nX-Charge: %u\r\nContent-Length: %zu\r\n"
				     "Connection: close\r\n\r\n%s",
				     charge, strlen(body), body);

			(void)!send(c, out, (size_t)n, MSG_NOSIGNAL);
		} else {
			nap(100);
		}
	}
}

int provider_start(struct provider **out, int port)
{
	struct provider *p = calloc(1, sizeof(*p));
	int e;

	if (!p)
		return -ENOMEM;
	pthread_mutex_init(&p->lock, NULL);
	rlog_init(&p->log);
	e = rconns_start(&p->rc, port, one, p);
	if (e < 0) {
		pthread_mutex_destroy(&p->lock);
		rlog_free(&p->log);
		free(p);
		return e;
	}
	*out = p;
	return 0;
}

unsigned provider_charged(struct provider *p)
{
	unsigned c;

	pthread_mutex_lock(&p->lock);
	c = p->charged;
	pthread_mutex_unlock(&p->lock);
	return c;
}

size_t provider_matching(struct provider *p, const char *text)
{
	return rlog_matching(&p->log, text);
}

size_t provider_lines(struct provider *p)
{
	return rlog_count(&p->log);
}

const char *provider_line(struct provider *p, size_t n)
{
	return rlog_entry(&p->log, n);
}

void provider_stop(struct provider *p)
{
	if (!p)
		return;
	/* Connection threads end within their receive timeout. */
	rconns_stop(&p->rc, 10000);
	rlog_free(&p->log);
	pthread_mutex_destroy(&p->lock);
	free(p);
}
