/* Unit tests: an HTTP forward's stamping and Host check (launcher/supervisor/
 * http_stamp.c), the relay's pure part. */
#include <criterion/criterion.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "../../launcher/supervisor/http_stamp.h"
#include "unit.h"

static const char lease[] = "session=0123456789ab; service=web; gen=2; nonce=00ff";
static char out[HTTP_HEAD_MAX + 65536 + HTTP_STAMP_GROWTH];

/* Feed in chunks of size step (0: all at once); the output, or NULL on
 * error (*rc). */
static const char *feed(struct http_stamp *s, const char *in, size_t step, ssize_t *rc)
{
	static char all[65536];
	size_t len = strlen(in), total = 0;

	memset(s, 0, sizeof(*s));
	s->lease = lease;
	for (size_t off = 0; off < len;) {
		size_t n = step && len - off > step ? step : len - off;

		*rc = http_stamp_feed(s, in + off, n, out, sizeof(out));
		if (*rc < 0)
			return NULL;
		memcpy(all + total, out, (size_t)*rc);
		total += (size_t)*rc;
		off += n;
	}
	all[total] = '\0';
	return all;
}

Test(http_stamp, a_response_head_is_stamped_and_the_servers_own_lease_dropped)
{
	struct http_stamp s;
	ssize_t rc = 0;
	const char *r =
	    feed(&s,
		 "HTTP/1.1 200 OK\r\nContent-Type: text/html\r\npaddock-lease: session=forged; "
		 "gen=9; nonce=1\r\nConnection: keep-alive\r\nKeep-Alive: timeout=5\r\n"
		 "Content-Length: 5\r\n\r\nhelloHTTP/1.1 200 OK\r\n\r\nsmuggled",
		 0, &rc);

	cr_assert_not_null(r);
	cr_assert_str_eq(r,
			 "HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nContent-Length: 5\r\n"
			 "Paddock-Lease: session=0123456789ab; service=web; gen=2; nonce=00ff\r\n"
			 "Connection: close\r\n\r\nhello");
	cr_assert_eq(s.state, HTTP_STAMP_DONE, "the exchange ends with its body");
}

Test(http_stamp, byte_by_byte_gives_the_same_bytes)
{
	static const char in[] = "HTTP/1.1 100 Continue\r\n\r\nHTTP/1.0 200 OK\nX: a\n b\n"
				 "Connection: close\n folded\nTransfer-Encoding: chunked\n\n"
				 "5\r\nhello\r\n0\r\n\r\n";
	struct http_stamp s;
	ssize_t rc = 0;
	char whole[4096];

	snprintf(whole, sizeof(whole), "%s", feed(&s, in, 0, &rc));
	for (size_t step = 1; step < 9; step++)
		cr_assert_str_eq(feed(&s, in, step, &rc), whole, "step %zu", step);
	/* Both heads stamped; the folded line of a dropped header dropped. */
	cr_assert_str_eq(whole,
			 "HTTP/1.1 100 Continue\r\nPaddock-Lease: session=0123456789ab; "
			 "service=web; gen=2; nonce=00ff\r\nConnection: close\r\n\r\n"
			 "HTTP/1.0 200 OK\r\nX: a\r\n b\r\nTransfer-Encoding: chunked\r\n"
			 "Paddock-Lease: session=0123456789ab; service=web; gen=2; nonce=00ff\r\n"
			 "Connection: close\r\n\r\n5\r\nhello\r\n0\r\n\r\n");
	cr_assert_eq(s.state, HTTP_STAMP_RAW);
}

Test(http_stamp, what_cannot_be_stamped_is_refused)
{
	struct http_stamp s;
	ssize_t rc = 0;
	static char big[HTTP_HEAD_MAX + 64];

	cr_assert_null(feed(&s, "SSH-2.0-OpenSSH\r\n\r\n", 0, &rc));
	cr_assert_eq(rc, -EPROTO);
	cr_assert_null(feed(&s, "HTTP/1.1 2x0 OK\r\n\r\n", 0, &rc));
	cr_assert_null(
	    feed(&s, "HTTP/1.1 200 OK\r\nContent-Length: 5\r\nContent-Length: 6\r\n\r\n", 0, &rc));
	cr_assert_eq(rc, -EPROTO);
	cr_assert_null(feed(&s,
			    "HTTP/1.1 100 A\r\n\r\nHTTP/1.1 100 A\r\n\r\nHTTP/1.1 100 A\r\n\r\n"
			    "HTTP/1.1 100 A\r\n\r\nHTTP/1.1 100 A\r\n\r\n",
			    0, &rc));
	memcpy(big, "HTTP/1.1 200 OK\r\nX: ", 20);
	memset(big + 20, 'a', sizeof(big) - 21);
	cr_assert_null(feed(&s, big, 1000, &rc), "a head longer than HTTP_HEAD_MAX");
	cr_assert_eq(rc, -EPROTO);
	/* 204 and 304 have no body, whatever they say. */
	cr_assert_not_null(
	    feed(&s, "HTTP/1.1 304 Not Modified\r\nContent-Length: 9\r\n\r\nxyz", 0, &rc));
	cr_assert_eq(s.state, HTTP_STAMP_DONE);
}

Test(http_stamp, the_request_host_and_which_lease_names_pass)
{
	char host[64];
	static const char own[] = "g2.0123456789ab.paddock.test";

	cr_assert_eq(http_request_host("GET / HTTP/1.1\r\nHost: x", 24, host, sizeof(host)), 0);
	cr_assert_eq(
	    http_request_host("GET / HTTP/1.1\r\nHOST:  G2.0123456789AB.Paddock.Test.:19000 "
			      "\r\n\r\n",
			      69, host, sizeof(host)),
	    1);
	cr_assert_str_eq(host, own);
	cr_assert_eq(
	    http_request_host("GET / HTTP/1.1\r\nHost: [::1]:8080\r\n\r\n", 37, host, sizeof(host)),
	    1);
	cr_assert_str_eq(host, "[::1]");
	cr_assert_eq(http_request_host("GET / HTTP/1.0\n\n", 16, host, sizeof(host)), 1);
	cr_assert_str_eq(host, "");
	cr_assert_eq(http_request_host("GET / HTTP/1.1\r\nHost: a\r\nHost: b\r\n\r\n", 36, host,
				       sizeof(host)),
		     -EPROTO, "two Host headers");
	cr_assert(http_host_allowed(own, own));
	cr_assert(http_host_allowed("127.0.0.1", own));
	cr_assert(http_host_allowed("", own));
	cr_assert(!http_host_allowed("g1.0123456789ab.paddock.test", own), "an ended generation");
	cr_assert(!http_host_allowed("g2.ffffffffffff.paddock.test", own), "another session");
	cr_assert(!http_host_allowed("paddock.test", own));
	cr_assert(http_host_allowed("paddock.test.example", own));
}
