/* Stamping an HTTP forward's responses with the lease, and reading the
 * request's Host header (http_stamp.h). Pure: bytes in, bytes out. */
#include "http_stamp.h"

#include <ctype.h>
#include <errno.h>
#include <string.h>
#include <strings.h>

/* The end of a head (just past its empty line) in buf[0..len), or 0.
 * Lines end with CRLF or a bare LF. */
static size_t head_end(const char *buf, size_t len, size_t from)
{
	for (size_t i = from; i < len; i++) {
		if (buf[i] != '\n')
			continue;
		if (i + 1 < len && buf[i + 1] == '\n')
			return i + 2;
		if (i + 2 < len && buf[i + 1] == '\r' && buf[i + 2] == '\n')
			return i + 3;
	}
	return 0;
}

/* The line at buf[*pos..end), without its CR LF; *pos moves past it. */
static size_t next_line(const char *buf, size_t end, size_t *pos, const char **line)
{
	size_t start = *pos, n;
	const char *nl = memchr(buf + start, '\n', end - start);

	n = nl ? (size_t)(nl - (buf + start)) : end - start;
	*pos = start + n + (nl ? 1 : 0);
	*line = buf + start;
	if (n && buf[start + n - 1] == '\r')
		n--;
	return n;
}

static bool is_header(const char *line, size_t n, const char *name)
{
	size_t k = strlen(name);

	return n > k && line[k] == ':' && strncasecmp(line, name, k) == 0;
}

static bool dropped(const char *line, size_t n)
{
	return is_header(line, n, "paddock-lease") || is_header(line, n, "connection") ||
	       is_header(line, n, "keep-alive");
}

/* A Content-Length value: digits only, at most 18 of them. */
static int content_length(const char *v, size_t n, uint64_t *out)
{
	uint64_t x = 0;
	size_t i = 0, digits = 0;

	while (i < n && (v[i] == ' ' || v[i] == '\t'))
		i++;
	for (; i < n && v[i] >= '0' && v[i] <= '9'; i++, digits++)
		x = x * 10 + (uint64_t)(v[i] - '0');
	while (i < n && (v[i] == ' ' || v[i] == '\t'))
		i++;
	if (i != n || digits == 0 || digits > 18)
		return -EINVAL;
	*out = x;
	return 0;
}

struct emit {
	char *out;
	size_t cap, len;
};

static int put(struct emit *e, const char *s, size_t n)
{
	if (n > e->cap - e->len)
		return -ENOBUFS;
	memcpy(e->out + e->len, s, n);
	e->len += n;
	return 0;
}

/* Rewrites the head in s->head[0..end) into e and sets the next state. */
static int stamp_head(struct http_stamp *s, size_t end, struct emit *e)
{
	const char *line;
	size_t pos = 0, n;
	bool keep = true, te = false, have_cl = false;
	uint64_t cl = 0, v;
	int code, r = 0;

	n = next_line(s->head, end, &pos, &line);
	if (n < 12 || strncmp(line, "HTTP/1.", 7) != 0 || line[8] != ' ' ||
	    !isdigit((unsigned char)line[9]) || !isdigit((unsigned char)line[10]) ||
	    !isdigit((unsigned char)line[11]))
		return -EPROTO;
	code = (line[9] - '0') * 100 + (line[10] - '0') * 10 + (line[11] - '0');
	r = put(e, line, n);
	r = r < 0 ? r : put(e, "\r\n", 2);
	while (r >= 0 && pos < end) {
		n = next_line(s->head, end, &pos, &line);
		if (n == 0)
			break; /* the empty line */
		/* A folded line belongs to the header before it. */
		if (line[0] != ' ' && line[0] != '\t')
			keep = !dropped(line, n);
		if (!keep)
			continue;
		if (is_header(line, n, "transfer-encoding"))
			te = true;
		if (is_header(line, n, "content-length")) {
			if (content_length(line + 15, n - 15, &v) < 0 || (have_cl && v != cl))
				return -EPROTO;
			have_cl = true;
			cl = v;
		}
		r = put(e, line, n);
		r = r < 0 ? r : put(e, "\r\n", 2);
	}
	if (r >= 0)
		r = put(e, "Paddock-Lease: ", 15);
	if (r >= 0)
		r = put(e, s->lease, strlen(s->lease));
	if (r >= 0)
		r = put(e, "\r\nConnection: close\r\n\r\n", 23);
	if (r < 0)
		return r;
	if (code >= 100 && code < 200 && code != 101) {
		if (++s->interim > HTTP_INTERIM_MAX)
			return -EPROTO;
		s->state = HTTP_STAMP_HEAD;
	} else if (code == 101 || te || !have_cl) {
		s->state = code == 204 || code == 304 ? HTTP_STAMP_DONE : HTTP_STAMP_RAW;
	} else {
		s->state =
		    cl == 0 || code == 204 || code == 304 ? HTTP_STAMP_DONE : HTTP_STAMP_BODY;
		s->left = cl;
	}
	return 0;
}

ssize_t http_stamp_feed(struct http_stamp *s, const char *in, size_t n, char *out, size_t cap)
{
	struct emit e = {.out = out, .cap = cap};
	size_t take, end, old;
	int r;

	while (n > 0) {
		switch (s->state) {
		case HTTP_STAMP_HEAD:
			old = s->head_len;
			take = n < HTTP_HEAD_MAX - old ? n : HTTP_HEAD_MAX - old;
			memcpy(s->head + old, in, take);
			s->head_len += take;
			end = head_end(s->head, s->head_len, old > 2 ? old - 2 : 0);
			if (!end) {
				if (s->head_len == HTTP_HEAD_MAX)
					return -EPROTO;
				in += take;
				n -= take;
				break;
			}
			/* Only the head's bytes are consumed; the rest is fed
			 * again in the state the head leads to. */
			in += end - old;
			n -= end - old;
			s->head_len = 0;
			r = stamp_head(s, end, &e);
			if (r < 0)
				return r;
			break;
		case HTTP_STAMP_BODY:
			take = (uint64_t)n < s->left ? n : (size_t)s->left;
			if ((r = put(&e, in, take)) < 0)
				return r;
			s->left -= take;
			in += take;
			n -= take;
			if (s->left == 0)
				s->state = HTTP_STAMP_DONE;
			break;
		case HTTP_STAMP_RAW:
			if ((r = put(&e, in, n)) < 0)
				return r;
			n = 0;
			break;
		case HTTP_STAMP_DONE:
			n = 0; /* one exchange per connection: nothing follows */
			break;
		}
	}
	return (ssize_t)e.len;
}

int http_request_host(const char *buf, size_t len, char *host, size_t size)
{
	size_t end = head_end(buf, len < HTTP_HEAD_MAX ? len : HTTP_HEAD_MAX, 0), pos = 0, n;
	const char *line, *v;
	bool seen = false;

	if (!end)
		return len >= HTTP_HEAD_MAX ? -EPROTO : 0;
	host[0] = '\0';
	(void)next_line(buf, end, &pos, &line); /* the request line */
	while (pos < end && (n = next_line(buf, end, &pos, &line)) > 0) {
		size_t i = 5, k = 0;

		if (!is_header(line, n, "host"))
			continue;
		if (seen)
			return -EPROTO; /* two Host headers: which one would the server take? */
		seen = true;
		v = line;
		while (i < n && (v[i] == ' ' || v[i] == '\t'))
			i++;
		while (n > i && (v[n - 1] == ' ' || v[n - 1] == '\t'))
			n--;
		if (i < n && v[i] == '[') { /* an IPv6 literal keeps its brackets */
			const char *close = memchr(v + i, ']', n - i);

			if (!close)
				return -EPROTO;
			n = (size_t)(close - v) + 1;
		} else {
			const char *colon = memchr(v + i, ':', n - i);

			if (colon)
				n = (size_t)(colon - v);
		}
		if (n > i && v[n - 1] == '.')
			n--; /* "name." is "name" */
		if (n - i >= size)
			return -EPROTO;
		for (; i < n; i++)
			host[k++] = (char)tolower((unsigned char)v[i]);
		host[k] = '\0';
	}
	return 1;
}

bool http_host_allowed(const char *host, const char *own)
{
	static const char suffix[] = ".paddock.test";
	size_t n = strlen(host), k = sizeof(suffix) - 1;

	if (strcmp(host, "paddock.test") != 0 && (n < k || strcmp(host + n - k, suffix) != 0))
		return true;
	return strcasecmp(host, own) == 0;
}
