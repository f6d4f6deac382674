/* Receiver lookups for unknown operations (docs/budget.md, "Lookup"). An
 * operation whose request was sent and got no answer is unknown: it may
 * have taken effect. A metered rule may say how to ask its receiver
 * ("lookup": GET /v1/receipts/{key}); the mediator then asks, on a
 * connection of its own (never the workload's), before a replay with the
 * same Idempotency-Key is answered or dispatched: a receipt (2xx) settles
 * the operation with the receiver's charge and answers the replay with
 * it, "not found" (404, 410) lets the replay go under the same
 * reservation, anything else (a refused connection, a timeout, another
 * status, an unreadable answer) changes nothing: still unknown, held.
 * The request and the verdict are pure (fuzzed, 'L' and 'l' of
 * fuzz_mediator); lookup_exchange() is the one blocking exchange. */
#include "mediator.h"

#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

int lookup_request(const struct policy_net_lookup *lk, const char *name, uint16_t port,
		   const char *key, size_t kn, const char *admission, char *out, size_t size)
{
	static const char hex[] = "0123456789ABCDEF";
	size_t n;
	int w;

	if (!lk->prefix || kn == 0 || kn > 255)
		return -EINVAL;
	w = snprintf(out, size, "GET %s", lk->prefix);
	if (w < 0 || (size_t)w >= size)
		return -ENOSPC;
	n = (size_t)w;
	/* The key percent-encoded but for RFC 3986's unreserved characters:
	 * whatever bytes the workload put in its header, the path stays one
	 * path (no '/', '?', '#', space or CRLF of its making). */
	for (size_t i = 0; i < kn; i++) {
		unsigned char ch = (unsigned char)key[i];
		bool plain = (ch >= 'A' && ch <= 'Z') || (ch >= 'a' && ch <= 'z') ||
			     (ch >= '0' && ch <= '9') || ch == '-' || ch == '.' || ch == '_' ||
			     ch == '~';

		if (n + 3 >= size)
			return -ENOSPC;
		if (plain) {
			out[n++] = (char)ch;
		} else {
			out[n++] = '%';
			out[n++] = hex[ch >> 4];
			out[n++] = hex[ch & 15];
		}
	}
	w = snprintf(out + n, size - n,
		     "%s HTTP/1.1\r\nHost: %s:%u\r\nAccept: */*\r\nPaddock-Lookup: unknown-outcome"
		     "\r\n%s%s%sConnection: close\r\n\r\n",
		     lk->suffix ? lk->suffix : "", name, port,
		     admission && *admission ? "Paddock-Admission: " : "",
		     admission && *admission ? admission : "",
		     admission && *admission ? "\r\n" : "");
	if (w < 0 || (size_t)w >= size - n)
		return -ENOSPC;
	return (int)(n + (size_t)w);
}

enum lookup_result lookup_verdict(const struct policy_net_meter *m, const char *buf, size_t len,
				  bool full, unsigned *status, bool *stated, uint64_t *charge)
{
	*status = 0;
	*stated = false;
	/* A receipt that does not fit is not read in part. */
	if (full || http_parse_status(buf, len, status) <= 0)
		return LOOKUP_FAILED; /* the whole answer is in: short or bad is a failure */
	if (*status == 404 || *status == 410)
		return LOOKUP_NOT_FOUND;
	if (*status < 200 || *status > 299)
		return LOOKUP_FAILED;
	*stated = m && meter_charge(m, buf, len, true, false, charge) == 0;
	return LOOKUP_FOUND;
}

static uint64_t mono_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

/* Wait for ev on fd until deadline: 0, or -ETIMEDOUT, or -errno. */
static int wait_fd(int fd, short ev, uint64_t deadline)
{
	for (;;) {
		struct pollfd p = {.fd = fd, .events = ev};
		uint64_t now = mono_ms();
		int r;

		if (now >= deadline)
			return -ETIMEDOUT;
		r = poll(&p, 1, (int)(deadline - now));
		if (r > 0)
			return 0;
		if (r == 0)
			return -ETIMEDOUT;
		if (errno != EINTR)
			return -errno;
	}
}

ssize_t lookup_exchange(int fd, const char *req, size_t n, char *buf, size_t size,
			uint64_t timeout_ms)
{
	uint64_t deadline = mono_ms() + timeout_ms;
	size_t off = 0, got = 0;
	int soerr = 0, r;
	socklen_t sl = sizeof(soerr);

	/* fd is non-blocking, its connect in progress (the mediator's dial). */
	r = wait_fd(fd, POLLOUT, deadline);
	if (r < 0)
		return r;
	if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &soerr, &sl) < 0 || soerr)
		return soerr ? -soerr : -errno;
	while (off < n) {
		ssize_t w = send(fd, req + off, n - off, MSG_NOSIGNAL);

		if (w > 0) {
			off += (size_t)w;
			continue;
		}
		if (w < 0 && errno != EAGAIN && errno != EINTR)
			return -errno;
		r = wait_fd(fd, POLLOUT, deadline);
		if (r < 0)
			return r;
	}
	/* The answer to its end (the request said Connection: close), or
	 * as much as fits. */
	while (got < size) {
		ssize_t k = recv(fd, buf + got, size - got, 0);

		if (k > 0) {
			got += (size_t)k;
			continue;
		}
		if (k == 0)
			break;
		if (errno != EAGAIN && errno != EINTR)
			return -errno;
		r = wait_fd(fd, POLLIN, deadline);
		if (r < 0)
			return r;
	}
	return (ssize_t)got;
}
