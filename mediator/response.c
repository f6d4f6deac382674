/* The status line of an upstream's HTTP/1.x response (RFC 9112 4), read
 * by the mediator only to class an attempt's outcome (attempts.c). Strict
 * as the request parser: what it cannot read is an unknown outcome, never
 * a guess. Pure code, fuzzed. */
#include "mediator.h"

#include <string.h>

#define INTERIM_MAX 8

/* One status line at buf[0..len): its length with CRLF, 0 for more, or
 * -EINVAL. */
static long status_line(const char *buf, size_t len, unsigned *status)
{
	const char *cr = memchr(buf, '\r', len < HTTP_LINE_MAX ? len : HTTP_LINE_MAX);
	size_t n;

	if (!cr)
		return len >= HTTP_LINE_MAX || memchr(buf, '\n', len) ? -EINVAL : 0;
	n = (size_t)(cr - buf);
	if (n + 1 == len)
		return 0;
	if (cr[1] != '\n' || memchr(buf, '\n', n))
		return -EINVAL;
	/* "HTTP/1.x DDD" then a space and the reason (which may be empty). */
	if (n < 12 || (memcmp(buf, "HTTP/1.1 ", 9) != 0 && memcmp(buf, "HTTP/1.0 ", 9) != 0))
		return -EINVAL;
	for (size_t i = 9; i < 12; i++)
		if (buf[i] < '0' || buf[i] > '9')
			return -EINVAL;
	if (n > 12 && buf[12] != ' ')
		return -EINVAL;
	for (size_t i = 13; i < n; i++)
		if ((unsigned char)buf[i] < ' ' && buf[i] != '\t')
			return -EINVAL;
		else if ((unsigned char)buf[i] == 0x7f)
			return -EINVAL;
	*status = (unsigned)((buf[9] - '0') * 100 + (buf[10] - '0') * 10 + (buf[11] - '0'));
	if (*status < 100 || *status > 599)
		return -EINVAL;
	return (long)n + 2;
}

/* The end of an interim response's headers from off: the offset past its
 * blank line, 0 for more, -EINVAL for a bare LF or a line too long. */
static long headers_end(const char *buf, size_t len, size_t off)
{
	size_t start = off;

	for (size_t i = off; i < len; i++) {
		if (buf[i] == '\n' && (i == 0 || buf[i - 1] != '\r'))
			return -EINVAL;
		if (buf[i] != '\n')
			continue;
		if (i - start > HTTP_LINE_MAX)
			return -EINVAL;
		if (i == start + 1)
			return (long)i + 1; /* "\r\n" alone: the blank line */
		start = i + 1;
	}
	return len - start > HTTP_LINE_MAX ? -EINVAL : 0;
}

int http_parse_status(const char *buf, size_t len, unsigned *status)
{
	size_t off = 0;

	for (int interim = 0; interim <= INTERIM_MAX; interim++) {
		long n = status_line(buf + off, len - off, status);

		if (n <= 0)
			return (int)n;
		if (*status >= 200)
			return (int)(off + (size_t)n);
		/* 1xx (100 Continue, 103 Early Hints): headers, then the
		 * final response follows. */
		n = headers_end(buf, len, off + (size_t)n);
		if (n <= 0)
			return (int)n;
		off = (size_t)n;
	}
	return -EINVAL;
}
