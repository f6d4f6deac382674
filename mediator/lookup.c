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
 * fuzz_mediator); the exchange is the event loop's (loop.c, C_LOOKUP:
 * the replay waits, nothing else does). */
#include "mediator.h"

#include <stdio.h>
#include <string.h>

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
