/* A strict HTTP/1.1 request-head parser (RFC 9112), for a proxy that must
 * agree with every upstream on where a request ends: anything two parsers
 * could read differently (request smuggling) is refused rather than
 * guessed. Pure code, fuzzed. */
#include "mediator.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* tchar of RFC 9110 5.6.2 */
static bool tchar(unsigned char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
	       (c && strchr("!#$%&'*+-.^_`|~", c));
}

/* The next line of buf from *off: its length without CRLF, the offset past
 * it in *next; 0 with *next unchanged when no CRLF yet; -EINVAL for a CR
 * not followed by LF or a LF without CR. */
static long line(const char *buf, size_t len, size_t off, size_t *next)
{
	for (size_t i = off; i < len; i++) {
		if (buf[i] == '\n')
			return -EINVAL; /* bare LF */
		if (buf[i] != '\r')
			continue;
		if (i + 1 == len)
			return 0;
		if (buf[i + 1] != '\n')
			return -EINVAL; /* bare CR */
		*next = i + 2;
		return (long)(i - off);
	}
	return 0;
}

static int request_line(const char *s, size_t n, struct http_request *out, const char **why)
{
	const char *sp1 = memchr(s, ' ', n), *sp2;
	size_t mlen, tlen;

	*why = "malformed request line";
	if (!sp1)
		return -EINVAL;
	mlen = (size_t)(sp1 - s);
	sp2 = memchr(sp1 + 1, ' ', n - mlen - 1);
	if (!sp2 || mlen == 0 || mlen >= sizeof(out->method))
		return -EINVAL;
	tlen = (size_t)(sp2 - sp1 - 1);
	if (tlen == 0 || tlen >= sizeof(out->target))
		return -EINVAL;
	for (size_t i = 0; i < mlen; i++)
		if (!tchar((unsigned char)s[i]))
			return -EINVAL;
	for (size_t i = 0; i < tlen; i++)
		if ((unsigned char)sp1[1 + i] <= ' ' || (unsigned char)sp1[1 + i] == 0x7f)
			return -EINVAL;
	/* HTTP/1.1; and CONNECT in HTTP/1.0 too, which proxy clients such
	 * as openssl s_client send (its target is the whole authority). */
	if ((size_t)(s + n - sp2 - 1) != 8 ||
	    (memcmp(sp2 + 1, "HTTP/1.1", 8) != 0 &&
	     !(mlen == 7 && memcmp(s, "CONNECT", 7) == 0 && memcmp(sp2 + 1, "HTTP/1.0", 8) == 0))) {
		*why = "only HTTP/1.1 requests";
		return -EINVAL;
	}
	out->http10 = sp2[8] == '0';
	memcpy(out->method, s, mlen);
	out->method[mlen] = '\0';
	memcpy(out->target, sp1 + 1, tlen);
	out->target[tlen] = '\0';
	return 0;
}

static bool is(const char *buf, const struct http_header *h, const char *name)
{
	return h->name_len == strlen(name) && strncasecmp(buf + h->name, name, h->name_len) == 0;
}

static int header(const char *buf, size_t off, size_t n, struct http_request *out, const char **why)
{
	const char *s = buf + off, *colon = memchr(s, ':', n);
	struct http_header *h;
	size_t v, e;

	if (s[0] == ' ' || s[0] == '\t') {
		*why = "obsolete line folding";
		return -EINVAL;
	}
	*why = "malformed header";
	if (!colon || colon == s)
		return -EINVAL;
	for (const char *p = s; p < colon; p++)
		if (!tchar((unsigned char)*p))
			return -EINVAL; /* also a space before the colon */
	if (out->n_headers == HTTP_HEADERS_MAX) {
		*why = "too many headers";
		return -E2BIG;
	}
	v = (size_t)(colon - s) + 1;
	while (v < n && (s[v] == ' ' || s[v] == '\t'))
		v++;
	e = n;
	while (e > v && (s[e - 1] == ' ' || s[e - 1] == '\t'))
		e--;
	for (size_t i = v; i < e; i++)
		if ((unsigned char)s[i] < ' ' && s[i] != '\t')
			return -EINVAL;
	h = &out->h[out->n_headers++];
	h->name = off;
	h->name_len = (size_t)(colon - s);
	h->value = off + v;
	h->value_len = e - v;
	return 0;
}

static int length(const char *v, size_t n, uint64_t *out)
{
	uint64_t x = 0;

	if (n == 0 || n > 15)
		return -EINVAL;
	for (size_t i = 0; i < n; i++) {
		if (v[i] < '0' || v[i] > '9')
			return -EINVAL;
		x = x * 10 + (uint64_t)(v[i] - '0');
	}
	*out = x;
	return 0;
}

/* The headers whose meaning decides where the request ends, and Host. */
static int framing(const char *buf, struct http_request *out, const char **why)
{
	bool te = false, host = false;

	for (size_t i = 0; i < out->n_headers; i++) {
		const struct http_header *h = &out->h[i];
		const char *v = buf + h->value;

		if (is(buf, h, "content-length")) {
			*why = "duplicate or invalid Content-Length";
			if (out->has_length || length(v, h->value_len, &out->content_length) < 0)
				return -EINVAL;
			out->has_length = true;
		} else if (is(buf, h, "transfer-encoding")) {
			*why = "Transfer-Encoding other than one \"chunked\"";
			if (te || h->value_len != 7 || strncasecmp(v, "chunked", 7) != 0)
				return -EINVAL;
			te = out->chunked = true;
		} else if (is(buf, h, "host")) {
			*why = "duplicate or empty Host";
			if (host || h->value_len == 0 || h->value_len >= sizeof(out->host))
				return -EINVAL;
			host = true;
			for (size_t k = 0; k < h->value_len; k++)
				out->host[k] =
				    (char)(v[k] >= 'A' && v[k] <= 'Z' ? v[k] + 32 : v[k]);
			out->host[h->value_len] = '\0';
		}
	}
	if (te && out->has_length) {
		*why = "both Transfer-Encoding and Content-Length";
		return -EINVAL;
	}
	if (!host && strcmp(out->method, "CONNECT") != 0) {
		*why = "no Host header";
		return -EINVAL;
	}
	return 0;
}

int http_parse_request(const char *buf, size_t len, struct http_request *out, const char **why)
{
	size_t off = 0, next = 0;
	long n;
	int r;

	memset(out, 0, sizeof(*out));
	*why = "request head too large";
	n = line(buf, len, 0, &next);
	if (n <= 0) {
		if (n < 0)
			*why = "bare CR or LF";
		return n < 0 ? -EINVAL : (len > HTTP_LINE_MAX ? -E2BIG : 0);
	}
	if (n > HTTP_LINE_MAX)
		return -E2BIG;
	r = request_line(buf, (size_t)n, out, why);
	if (r < 0)
		return r;
	for (off = next;;) {
		n = line(buf, len, off, &next);
		if (n < 0) {
			*why = "bare CR or LF";
			return -EINVAL;
		}
		if (n == 0 && next <= off) {
			*why = "request head too large";
			return len - off > HTTP_LINE_MAX || len > HTTP_HEAD_MAX ? -E2BIG : 0;
		}
		if (n > HTTP_LINE_MAX || next > HTTP_HEAD_MAX) {
			*why = "request head too large";
			return -E2BIG;
		}
		if (n == 0)
			break;
		r = header(buf, off, (size_t)n, out, why);
		if (r < 0)
			return r;
		off = next;
	}
	r = framing(buf, out, why);
	if (r < 0)
		return r;
	out->head_len = next;
	return (int)next;
}

static int name_port(const char *s, size_t n, char *name, size_t size, uint16_t *port,
		     bool need_port)
{
	const char *colon;
	size_t nlen;
	unsigned long v = 0;

	if (n && s[0] == '[') { /* an IPv6 literal: kept as text, never a rule's name */
		colon = memchr(s, ']', n);
		if (!colon)
			return -EINVAL;
		colon++;
		if (colon < s + n && *colon != ':')
			return -EINVAL;
		if (colon == s + n)
			colon = NULL;
	} else {
		colon = memchr(s, ':', n);
	}
	nlen = colon ? (size_t)(colon - s) : n;
	if (nlen == 0 || nlen >= size)
		return -EINVAL;
	for (size_t i = 0; i < nlen; i++)
		name[i] = (char)(s[i] >= 'A' && s[i] <= 'Z' ? s[i] + 32 : s[i]);
	name[nlen] = '\0';
	*port = 0;
	if (!colon)
		return need_port ? -EINVAL : 0;
	if (colon + 1 == s + n || s + n - colon - 1 > 5)
		return -EINVAL;
	for (const char *p = colon + 1; p < s + n; p++) {
		if (*p < '0' || *p > '9')
			return -EINVAL;
		v = v * 10 + (unsigned long)(*p - '0');
	}
	if (v == 0 || v > 65535)
		return -EINVAL;
	*port = (uint16_t)v;
	return 0;
}

int http_target_absolute(const char *t, char *name, size_t size, uint16_t *port, const char **path)
{
	const char *auth, *slash;
	int r;

	if (strncasecmp(t, "http://", 7) != 0)
		return -EINVAL;
	auth = t + 7;
	slash = strchr(auth, '/');
	if (!slash)
		slash = auth + strlen(auth);
	if (memchr(auth, '@', (size_t)(slash - auth)) || memchr(auth, '?', (size_t)(slash - auth)))
		return -EINVAL; /* no userinfo; a query needs a path first */
	r = name_port(auth, (size_t)(slash - auth), name, size, port, false);
	if (r < 0)
		return r;
	if (*port == 0)
		*port = 80;
	*path = *slash ? slash : "/";
	return 0;
}

int http_target_authority(const char *t, char *name, size_t size, uint16_t *port)
{
	return name_port(t, strlen(t), name, size, port, true);
}

int http_host_split(const char *host, char *name, size_t size, uint16_t *port)
{
	return name_port(host, strlen(host), name, size, port, false);
}

enum {
	CH_SIZE,
	CH_EXT,
	CH_SIZE_LF,
	CH_DATA,
	CH_DATA_CR,
	CH_DATA_LF,
	CH_TRAILER,
	CH_TRAILER_LF,
	CH_TLINE,
	CH_TLINE_LF,
	CH_DONE
};

static int hex(char c)
{
	return c >= '0' && c <= '9'   ? c - '0'
	       : c >= 'a' && c <= 'f' ? c - 'a' + 10
	       : c >= 'A' && c <= 'F' ? c - 'A' + 10
				      : -1;
}

long http_chunked_scan(struct http_chunked *c, const char *buf, size_t n)
{
	size_t i = 0;

	while (i < n && c->state != CH_DONE) {
		char ch = buf[i];

		switch (c->state) {
		case CH_SIZE:
			if (hex(ch) >= 0) {
				if (++c->digits > 15)
					return -EINVAL;
				c->left = c->left * 16 + (uint64_t)hex(ch);
			} else if (c->digits && (ch == ';')) {
				c->state = CH_EXT;
			} else if (c->digits && ch == '\r') {
				c->state = CH_SIZE_LF;
			} else {
				return -EINVAL;
			}
			i++;
			break;
		case CH_EXT:
			if (ch == '\n')
				return -EINVAL;
			if (ch == '\r')
				c->state = CH_SIZE_LF;
			i++;
			break;
		case CH_SIZE_LF:
			if (ch != '\n')
				return -EINVAL;
			c->state = c->left ? CH_DATA : CH_TRAILER;
			i++;
			break;
		case CH_DATA: {
			size_t take = n - i < c->left ? n - i : (size_t)c->left;

			c->left -= take;
			i += take;
			if (!c->left)
				c->state = CH_DATA_CR;
			break;
		}
		case CH_DATA_CR:
			if (ch != '\r')
				return -EINVAL;
			c->state = CH_DATA_LF;
			i++;
			break;
		case CH_DATA_LF:
			if (ch != '\n')
				return -EINVAL;
			c->state = CH_SIZE;
			c->digits = 0;
			i++;
			break;
		case CH_TRAILER: /* after the last chunk: CRLF, or trailer lines */
			c->state = ch == '\r' ? CH_TRAILER_LF : CH_TLINE;
			if (ch == '\n')
				return -EINVAL;
			i++;
			break;
		case CH_TRAILER_LF:
			if (ch != '\n')
				return -EINVAL;
			c->state = CH_DONE;
			c->done = true;
			i++;
			break;
		case CH_TLINE:
			if (ch == '\n')
				return -EINVAL;
			if (ch == '\r')
				c->state = CH_TLINE_LF;
			i++;
			break;
		case CH_TLINE_LF:
			if (ch != '\n')
				return -EINVAL;
			c->state = CH_TRAILER;
			i++;
			break;
		}
	}
	return (long)i;
}
