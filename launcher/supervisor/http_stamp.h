/* The HTTP side of a port forward with "protocol": "http" (relay.c,
 * docs/sessions.md "Endpoint identity"): pure code, unit-tested and fuzzed
 * (tests/fuzz/fuzz_proto.c 'h' and 'q').
 *
 * One exchange per connection: the relay reads the client's request head,
 * refuses a lease host name that is not its own, and stamps the server's
 * response heads (interim 1xx ones and the final one) with
 *   Paddock-Lease: session=ID; service=NAME; gen=N; nonce=HEX
 *   Connection: close
 * after dropping any Paddock-Lease, Connection and Keep-Alive header the
 * server sent. A final response with a Content-Length ends after that many
 * body bytes; any other body runs until the server closes. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#define HTTP_HEAD_MAX	  8192 /* bytes of one request or response head */
#define HTTP_INTERIM_MAX  4    /* 1xx heads before the final one */
#define HTTP_LEASE_MAX	  192  /* the Paddock-Lease value */
#define HTTP_STAMP_GROWTH (HTTP_INTERIM_MAX + 1) * (HTTP_LEASE_MAX + 64)

enum http_stamp_state {
	HTTP_STAMP_HEAD, /* reading a response head */
	HTTP_STAMP_BODY, /* left bytes of a Content-Length body */
	HTTP_STAMP_RAW,	 /* until the server closes */
	HTTP_STAMP_DONE, /* the exchange is over: drop what follows */
};

struct http_stamp {
	enum http_stamp_state state;
	char head[HTTP_HEAD_MAX];
	size_t head_len;
	uint64_t left;
	unsigned interim;
	const char *lease; /* the Paddock-Lease value */
};

/* Feeds n bytes the server sent; appends what the client gets to out
 * (room for HTTP_HEAD_MAX + n + HTTP_STAMP_GROWTH bytes is always enough)
 * and returns its length, or -EPROTO for a head that is too long, has no
 * status line, or too many interim heads. */
ssize_t http_stamp_feed(struct http_stamp *s, const char *in, size_t n, char *out, size_t cap);

/* The request head in buf[0..len): 1 and the Host header's name (lower
 * case, without the port; "" when there is none) in host once the head is
 * complete, 0 while it is not, -EPROTO when it is longer than
 * HTTP_HEAD_MAX or the Host header is too long for host. */
int http_request_host(const char *buf, size_t len, char *host, size_t size);

/* Whether a request for host may reach the lease named own
 * ("g<gen>.<id>.paddock.test"): any name outside .paddock.test may (a
 * literal address, localhost), a lease host name only when it is own. */
bool http_host_allowed(const char *host, const char *own);
