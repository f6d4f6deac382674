/* Metered rules, the pure part (docs/network.md, "Budgets"): the upper
 * bound of an attempt from its price and its request, the charge a
 * response states, and the key that makes a replay the same operation in
 * every session of a budget. No default anywhere: what cannot be priced
 * or bounded is said so, and the caller refuses it. Fuzzed ('m', 'M'). */
#include "mediator.h"

#include <cjson/cJSON.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "../policy/sha256.h"

/* The value of header name of a request, or NULL. */
static const char *req_header(const struct http_request *rq, const char *buf, const char *name,
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

/* A top-level member of a JSON object text that is a whole number from 0
 * to max: 0 with *v, -EINVAL otherwise (not JSON, not an object, absent,
 * not a number, a fraction, negative, too large). */
static int json_uint_member(const char *text, size_t len, const char *name, uint64_t max,
			    uint64_t *v)
{
	cJSON *root, *it;
	int r = -EINVAL;

	if (len == 0 || len > METER_BODY_MAX || memchr(text, '\0', len))
		return -EINVAL;
	root = cJSON_ParseWithLength(text, len);
	if (!root)
		return -EINVAL;
	if (cJSON_IsObject(root)) {
		size_t seen = 0;

		/* A name given twice would let the workload show us one value
		 * and the receiver (which may take the last) another. */
		cJSON_ArrayForEach(it, root)
			if (it->string && strcmp(it->string, name) == 0)
				seen++;
		it = cJSON_GetObjectItemCaseSensitive(root, name);
		if (seen == 1 && cJSON_IsNumber(it) && it->valuedouble >= 0 &&
		    it->valuedouble <= (double)max &&
		    it->valuedouble == (double)(uint64_t)it->valuedouble) {
			*v = (uint64_t)it->valuedouble;
			r = 0;
		}
	}
	cJSON_Delete(root);
	return r;
}

int meter_bound(const struct policy_net_price *p, const struct http_request *rq, const char *buf,
		size_t len, bool eof, uint64_t *bound)
{
	uint64_t v, n;

	switch (p->kind) {
	case POLICY_PRICE_NONE:
		return -ENOENT;
	case POLICY_PRICE_FIXED:
		*bound = p->base;
		return 0;
	case POLICY_PRICE_FIELD:
		break;
	}
	/* The bound is read from the body the receiver will get: all of it,
	 * with a Content-Length, in the buffer with its head. */
	if (rq->chunked || !rq->has_length || rq->content_length > METER_BODY_MAX ||
	    rq->head_len + rq->content_length > HTTP_HEAD_MAX)
		return -EINVAL;
	n = rq->content_length;
	if (len < rq->head_len || len - rq->head_len < n)
		return eof ? -EINVAL : 1;
	if (json_uint_member(buf + rq->head_len, (size_t)n, p->field, p->field_max, &v) < 0)
		return -EINVAL;
	*bound = p->base + p->per * v; /* no overflow: checked at parse */
	return 0;
}

const char *meter_idempotency_key(const struct http_request *rq, const char *buf, size_t *n)
{
	const char *k = req_header(rq, buf, "idempotency-key", n);

	return k && *n > 0 && *n <= 255 ? k : NULL;
}

int meter_op_key(const struct http_request *rq, const char *buf, const char *budget,
		 const char *name, uint16_t port, char hex[65])
{
	char text[POLICY_METER_ID_MAX + POLICY_NET_NAME_MAX + 300];
	unsigned char d[SHA256_DIGEST_LEN];
	size_t kn = 0;
	const char *k = req_header(rq, buf, "idempotency-key", &kn);
	int w;

	if (!k || kn == 0 || kn > 255)
		return -ENOENT;
	w = snprintf(text, sizeof(text), "%s%c%s:%u%c", budget, 0, name, port, 0);
	if (w < 0 || (size_t)w + kn > sizeof(text))
		return -EINVAL;
	memcpy(text + w, k, kn);
	sha256(text, (size_t)w + kn, d);
	sha256_hex(d, hex);
	return 0;
}

/* Digits, optionally surrounded by spaces or tabs, at most max: 0, or
 * -EINVAL. */
static int credits_text(const char *s, size_t n, uint64_t max, uint64_t *v)
{
	size_t i = 0, digits = 0;
	uint64_t x = 0;

	while (i < n && (s[i] == ' ' || s[i] == '\t'))
		i++;
	for (; i < n && s[i] >= '0' && s[i] <= '9'; i++, digits++) {
		if (x > (max - (uint64_t)(s[i] - '0')) / 10)
			return -EINVAL;
		x = x * 10 + (uint64_t)(s[i] - '0');
	}
	while (i < n && (s[i] == ' ' || s[i] == '\t'))
		i++;
	if (i != n || digits == 0 || digits > 16)
		return -EINVAL;
	*v = x;
	return 0;
}

/* The response's header lines from off to the blank line: the value of
 * name (lower case) into *val and *vn, and Content-Length; the offset past the
 * blank line, 0 for more, -EINVAL. A header given twice is -EINVAL. */
static long resp_headers(const char *buf, size_t len, size_t off, const char *name,
			 const char **val, size_t *vn, bool *has_length, uint64_t *length)
{
	size_t nl = strlen(name);
	int seen = 0, lens = 0;

	*val = NULL;
	*has_length = false;
	for (;;) {
		const char *e = memchr(buf + off, '\n', len - off), *colon;
		size_t n;

		if (!e)
			return len - off > HTTP_LINE_MAX ? -EINVAL : 0;
		n = (size_t)(e - (buf + off));
		if (n == 0 || buf[off + n - 1] != '\r')
			return -EINVAL;
		n--; /* without the CR */
		if (n == 0)
			return seen > 1 || lens > 1 ? -EINVAL : (long)(off + 2);
		colon = memchr(buf + off, ':', n);
		if (colon) {
			size_t hn = (size_t)(colon - (buf + off));
			const char *v = colon + 1;
			size_t vl = n - hn - 1;

			if (hn == nl && strncasecmp(buf + off, name, nl) == 0) {
				*val = v;
				*vn = vl;
				seen++;
			}
			if (hn == 14 && strncasecmp(buf + off, "content-length", 14) == 0) {
				lens++;
				if (credits_text(v, vl, UINT64_MAX / 2, length) < 0)
					return -EINVAL;
				*has_length = true;
			}
		}
		off += n + 2;
	}
}

int meter_charge(const struct policy_net_meter *m, const char *buf, size_t len, bool eof, bool full,
		 uint64_t *charge)
{
	const char *val = NULL;
	size_t vn = 0;
	bool has_length;
	uint64_t length = 0;
	unsigned status;
	int s = http_parse_status(buf, len, &status);
	long h;

	if (!m->charge_header && !m->charge_field)
		return -ENOENT;
	if (s == 0)
		return eof || full ? -ENOENT : 1;
	if (s < 0)
		return -ENOENT;
	h = resp_headers(buf, len, (size_t)s, m->charge_header ? m->charge_header : "", &val, &vn,
			 &has_length, &length);
	if (h == 0)
		return eof || full ? -ENOENT : 1;
	if (h < 0)
		return -ENOENT;
	if (m->charge_header)
		return val && credits_text(val, vn, POLICY_METER_CREDITS_MAX, charge) == 0
			   ? 0
			   : -ENOENT;
	/* A JSON member of the body: all of it, within the buffer. */
	if (has_length) {
		if (len - (size_t)h < length)
			return eof || full ? -ENOENT : 1;
		return json_uint_member(buf + h, (size_t)length, m->charge_field,
					POLICY_METER_CREDITS_MAX, charge) == 0
			   ? 0
			   : -ENOENT;
	}
	if (!eof)
		return full ? -ENOENT : 1;
	return json_uint_member(buf + h, len - (size_t)h, m->charge_field, POLICY_METER_CREDITS_MAX,
				charge) == 0
		   ? 0
		   : -ENOENT;
}
