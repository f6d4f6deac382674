/* HB-12's receivers (receivers/publish.c): a plain HTTP server on the
 * host's loopback, outside every sandbox, that answers every request with
 * one fixed body and keeps every request it served whole: method, path,
 * the Paddock-Admission header and the body (Content-Length, at most
 * PUBLISH_BODY_MAX bytes kept). One stands for the private note (its
 * answer holds the marker), one for the public sink (what it kept is
 * what was published). A harness fixture, not an enforcement point
 * (README). */
#pragma once

#include <stdbool.h>
#include <stddef.h>

#define PUBLISH_BODY_MAX 65536

struct publish_rx;

struct publish_req {
	char method[16];
	char path[256];
	char admission[96]; /* "" without one */
	char *body;	    /* NUL-terminated; len bytes */
	size_t len;
};

/* Listen on 127.0.0.1:port (counter_listen()), answering answer. 0 or
 * -errno. */
int publish_start(struct publish_rx **out, int port, const char *answer);
/* Requests served so far, and the n-th (a copy into out: its body is
 * the receiver's, valid until publish_stop()). */
size_t publish_count(struct publish_rx *rx);
bool publish_get(struct publish_rx *rx, size_t n, struct publish_req *out);
void publish_stop(struct publish_rx *rx);
