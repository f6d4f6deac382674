/* Attempt budgets per logical operation (HB-23, docs/network.md "Denials
 * and attempt budgets"). The mediator, not the workload, counts how often
 * an operation was tried and remembers how each try ended: a terminal
 * denial is never tried again, a transient failure at most "attempts"
 * times and never past "deadline", and an operation whose request was sent
 * without an answer (unknown: it may have taken effect) is never sent
 * again, whatever key or timing the workload chooses for the replay.
 * Pure code: the caller passes the time; unit-tested and fuzzed. */
#include "mediator.h"

#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "../policy/sha256.h"

/* The value of header name in rq, or NULL (*n its length). */
static const char *header(const struct http_request *rq, const char *buf, const char *name,
			  size_t *n)
{
	for (size_t i = 0; i < rq->n_headers; i++) {
		const struct http_header *h = &rq->h[i];

		if (h->name_len == strlen(name) &&
		    strncasecmp(buf + h->name, name, h->name_len) == 0) {
			*n = h->value_len;
			return buf + h->value;
		}
	}
	return NULL;
}

int attempts_key(const struct http_request *rq, const char *buf, size_t len, const char *name,
		 uint16_t port, const char *target, size_t rule, long grant, unsigned char out[32])
{
	/* "rule grant k KEY" or "rule grant m METHOD NAME:PORT TARGET BODY":
	 * the fields are fixed-size or end in a byte no field may hold
	 * (a NUL), so no two requests share a text. */
	char text[HTTP_LINE_MAX + POLICY_NET_NAME_MAX + 256];
	unsigned char body[SHA256_DIGEST_LEN];
	const char *k;
	size_t n = 0, kn = 0;
	int w;

	k = header(rq, buf, "idempotency-key", &kn);
	if (k && kn > 0 && kn <= 255) {
		w = snprintf(text, sizeof(text), "%zu %ld k ", rule, grant);
		if (w < 0 || (size_t)w + kn > sizeof(text))
			return -EINVAL;
		memcpy(text + w, k, kn);
		sha256(text, (size_t)w + kn, out);
		return 0;
	}
	if (k)
		return -EINVAL; /* an empty or huge key is not one */
	if (rq->chunked || (rq->has_length && rq->content_length > ATTEMPTS_BODY_MAX))
		return -EINVAL;
	n = rq->has_length ? (size_t)rq->content_length : 0;
	if (rq->head_len + n > HTTP_HEAD_MAX)
		return -EINVAL; /* head and body would not fit the buffer together */
	if (len < rq->head_len || len - rq->head_len < n)
		return 1;
	sha256(buf + rq->head_len, n, body);
	w = snprintf(text, sizeof(text), "%zu %ld m %s%c%s:%u%c%s%c", rule, grant, rq->method, 0,
		     name, port, 0, target, 0);
	if (w < 0 || (size_t)w + sizeof(body) > sizeof(text))
		return -EINVAL;
	memcpy(text + w, body, sizeof(body));
	sha256(text, (size_t)w + sizeof(body), out);
	return 0;
}

/* The budget that applies: the grant's fields where it sets them. */
static struct policy_net_budget budget(const struct policy_net_rule *rule, long grant)
{
	struct policy_net_budget b = rule->budget;

	if (grant >= 0 && (size_t)grant < rule->n_grants) {
		const struct policy_net_budget *g = &rule->grants[grant].budget;

		if (g->attempts)
			b.attempts = g->attempts;
		if (g->deadline_ms)
			b.deadline_ms = g->deadline_ms;
	}
	return b;
}

static long find(const struct attempts *t, const unsigned char key[32], long *free_slot)
{
	*free_slot = -1;
	for (size_t i = 0; i < ATTEMPTS_OPS_MAX; i++) {
		if (t->op[i].state == ATTEMPTS_FREE) {
			if (*free_slot < 0)
				*free_slot = (long)i;
			continue;
		}
		if (memcmp(t->op[i].key, key, 32) == 0)
			return (long)i;
	}
	return -1;
}

int attempts_admit(struct attempts *t, const struct policy_net_rule *rule, long grant,
		   const struct http_request *rq, const char *buf, size_t len, bool eof,
		   const char *name, uint16_t port, const char *target, uint64_t now,
		   bool unbounded, struct attempt_conn *ac, enum mediator_decision *d)
{
	struct policy_net_budget b = budget(rule, grant);
	unsigned char key[32];
	struct attempts_op *op;
	long i, slot;
	int r;

	memset(ac, 0, sizeof(*ac));
	if (!b.attempts && !b.deadline_ms && !rule->tool)
		return 0;
	ac->tool = rule->tool;
	if ((!b.attempts && !b.deadline_ms) || unbounded) {
		ac->watch = ac->hold = true; /* a tool rule without a budget: the responses */
		return 0;
	}
	r = attempts_key(rq, buf, len, name, port, target, rule->index, grant, key);
	if (r == 1 && !eof)
		return 1;
	if (r != 0) {
		*d = MEDIATOR_MALFORMED; /* cannot be keyed, so cannot be counted */
		return -1;
	}
	for (int k = 0; k < 8; k++)
		snprintf(ac->op_hex + 2 * k, 3, "%02x", key[k]);
	i = find(t, key, &slot);
	if (i < 0) {
		if (slot < 0) {
			*d = MEDIATOR_BUDGET; /* the table is full: fail closed */
			return -1;
		}
		i = slot;
		t->op[i] = (struct attempts_op){.state = ATTEMPTS_OPEN, .first_ms = now};
		memcpy(t->op[i].key, key, 32);
	}
	op = &t->op[i];
	switch (op->state) {
	case ATTEMPTS_TERMINAL:
		*d = MEDIATOR_TERMINAL;
		return -1;
	case ATTEMPTS_UNKNOWN:
		*d = MEDIATOR_HELD_UNKNOWN;
		return -1;
	case ATTEMPTS_IN_FLIGHT:
		*d = MEDIATOR_IN_FLIGHT;
		return -1;
	default:
		break;
	}
	if ((b.attempts && op->tries >= b.attempts) ||
	    (b.deadline_ms && now - op->first_ms >= b.deadline_ms)) {
		*d = MEDIATOR_BUDGET;
		return -1;
	}
	op->tries++;
	op->state = ATTEMPTS_IN_FLIGHT;
	ac->counted = true;
	ac->op = (size_t)i;
	ac->tries = op->tries;
	ac->deadline_ms = b.deadline_ms ? op->first_ms + b.deadline_ms : 0;
	ac->watch = ac->hold = true; /* a refused one has nothing to hold */
	return 0;
}

int attempts_reopen(struct attempts *t, const struct policy_net_rule *rule, long grant,
		    const struct http_request *rq, const char *buf, size_t len, const char *name,
		    uint16_t port, const char *target)
{
	unsigned char key[32];
	long i, slot;

	if (attempts_key(rq, buf, len, name, port, target, rule->index, grant, key) != 0)
		return -ENOENT;
	i = find(t, key, &slot);
	if (i < 0 || t->op[i].state != ATTEMPTS_UNKNOWN)
		return -ENOENT;
	/* The receiver said it never took place: tried, not spent. */
	t->op[i].state = ATTEMPTS_OPEN;
	return 0;
}

void attempts_end(struct attempts *t, struct attempt_conn *ac, enum attempts_outcome o)
{
	struct attempts_op *op;

	ac->hold = ac->watch = false;
	if (!ac->counted)
		return;
	ac->counted = false;
	op = &t->op[ac->op];
	switch (o) {
	case ATTEMPT_SUCCEEDED:
		/* Done: the same request later is a new operation. */
		memset(op, 0, sizeof(*op));
		break;
	case ATTEMPT_TERMINAL:
		op->state = ATTEMPTS_TERMINAL;
		break;
	case ATTEMPT_TRANSIENT:
		op->state = ATTEMPTS_OPEN;
		break;
	case ATTEMPT_UNKNOWN:
		op->state = ATTEMPTS_UNKNOWN;
		break;
	}
}

enum attempts_verdict attempts_response(struct attempts *t, struct attempt_conn *ac,
					const char *buf, size_t len, bool eof, bool full,
					bool verbose, unsigned *status, enum denial_class *cls)
{
	int r = http_parse_status(buf, len, status);
	int k;

	if (r == 0 && !eof && !full)
		return ATTEMPTS_WAIT;
	if (r <= 0) {
		/* Closed without a (readable) response after the request was
		 * sent: it may have been executed. */
		*status = 0;
		*cls = DENIAL_UNKNOWN;
		attempts_end(t, ac, ATTEMPT_UNKNOWN);
		return ATTEMPTS_REPLACE;
	}
	k = denial_status_class(*status);
	if (k < 0) {
		attempts_end(t, ac, ATTEMPT_SUCCEEDED);
		return ATTEMPTS_PASS;
	}
	*cls = (enum denial_class)k;
	/* A tool's error carries its diagnostic: the whole of it is read
	 * (for its digest in the log) before the terse form replaces it. */
	if (ac->tool && !verbose && !eof && !full)
		return ATTEMPTS_WAIT;
	attempts_end(t, ac, k == DENIAL_TRANSIENT ? ATTEMPT_TRANSIENT : ATTEMPT_TERMINAL);
	return ac->tool && !verbose ? ATTEMPTS_REPLACE : ATTEMPTS_PASS;
}
