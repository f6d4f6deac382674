/* Terse denials (HB-23, docs/network.md "Denials and attempt budgets"):
 * what the workload is told of a refusal is a class and a correlation id;
 * the decision, the rule, the destination and an upstream's diagnostic go
 * to the admissions log only, under the same correlation id. A refusal
 * that names its rule tells a probing workload which rule to work around
 * (AWS encodes its authorization failures for the same reason). */
#include "mediator.h"

#include <stdio.h>
#include <sys/random.h>

const char *denial_class_name(enum denial_class c)
{
	return c == DENIAL_TRANSIENT ? "transient" : c == DENIAL_UNKNOWN ? "unknown" : "denied";
}

enum denial_class denial_class_of(enum mediator_decision d)
{
	switch (d) {
	case MEDIATOR_UPSTREAM:
	case MEDIATOR_IN_FLIGHT:
	case MEDIATOR_LEDGER:  /* it may be back: a later try may pass */
	case MEDIATOR_CAPTURE: /* again once the log can be written */
		return DENIAL_TRANSIENT;
	case MEDIATOR_HELD_UNKNOWN:
		return DENIAL_UNKNOWN;
	default:
		return DENIAL_DENIED;
	}
}

int denial_status_class(unsigned status)
{
	if (status < 400)
		return -1;
	switch (status) {
	case 408:
	case 425:
	case 429:
	case 500:
	case 502:
	case 503:
	case 504:
		return DENIAL_TRANSIENT;
	default:
		return DENIAL_DENIED;
	}
}

void denial_new_id(char id[DENIAL_ID_LEN + 1])
{
	static const char hex[] = "0123456789abcdef";
	unsigned char r[DENIAL_ID_LEN / 2] = {0};
	size_t got = 0;

	/* getrandom() of 16 bytes does not block once the pool is ready
	 * and is never short (random(7)); EINTR is retried. */
	while (got < sizeof(r)) {
		ssize_t n = getrandom(r + got, sizeof(r) - got, 0);

		if (n < 0 && errno != EINTR)
			break;
		if (n > 0)
			got += (size_t)n;
	}
	for (size_t i = 0; i < sizeof(r); i++) {
		id[2 * i] = hex[r[i] >> 4];
		id[2 * i + 1] = hex[r[i] & 15];
	}
	id[DENIAL_ID_LEN] = '\0';
}

int denial_terse(enum denial_class c, const char *id, char *out, size_t size)
{
	static const char *const line[] = {"403 Forbidden", "503 Service Unavailable",
					   "502 Bad Gateway"};
	char body[128], retry[32] = "";
	int b, n;

	if (c == DENIAL_TRANSIENT) {
		b = snprintf(
		    body, sizeof(body),
		    "{\"class\":\"transient\",\"correlation_id\":\"%s\",\"retry_after\":%d}\n", id,
		    DENIAL_RETRY_AFTER);
		snprintf(retry, sizeof(retry), "Retry-After: %d\r\n", DENIAL_RETRY_AFTER);
	} else {
		b = snprintf(body, sizeof(body), "{\"class\":\"%s\",\"correlation_id\":\"%s\"}\n",
			     denial_class_name(c), id);
	}
	if (b < 0 || (size_t)b >= sizeof(body))
		return -ENOSPC;
	n = snprintf(out, size,
		     "HTTP/1.1 %s\r\nContent-Type: application/json\r\nContent-Length: %d\r\n"
		     "%sConnection: close\r\n\r\n%s",
		     line[c], b, retry, body);
	return n < 0 || (size_t)n >= size ? -ENOSPC : n;
}

int denial_verbose(enum mediator_decision d, const char *name, uint16_t port, long rule,
		   unsigned status, char *out, size_t size)
{
	char up[48] = "";
	int n;

	if (status)
		snprintf(up, sizeof(up), " (the upstream said %u)", status);
	n = snprintf(out, size,
		     "HTTP/1.1 403 Forbidden\r\nContent-Type: text/plain\r\nConnection: close\r\n"
		     "Paddock-Decision: %s\r\n\r\npaddock: %s:%u is not allowed by the policy "
		     "(network.allow, rule %ld): %s%s\n",
		     mediator_decision_name(d), name && name[0] ? name : "?", port, rule,
		     mediator_decision_name(d), up);
	return n < 0 || (size_t)n >= size ? -ENOSPC : n;
}
