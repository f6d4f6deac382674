/* HB-07: results are attributed to the session and generation that
 * produced them: what the browser driver and the scripted client observe
 * for each navigation, the checker's acceptance rule, and the grade. Pure
 * (no syscalls, no printing): tests/unit/test_eval.c pins every rule. */
#pragma once

#include <stdbool.h>
#include <stddef.h>

#include "../../lib/eval.h"

#define HB07_NAVS_MAX 24

/* What a validation expects: the session (its current generation) it is
 * meant to credit. */
struct hb07_expect {
	char session[16];
	unsigned gen;
	char nonce[40];	 /* "" when paddock gave none (lease-port-only, docker) */
	char marker[64]; /* the server-owned marker of that generation */
	int port;	 /* the host port the client was given */
};

/* One navigation (browser) or request (scripted client). */
struct hb07_nav {
	char what[48]; /* "cache: A after restart, old origin", ... */
	struct hb07_expect want;
	bool loaded; /* a response was seen (the DevTools event, or the client's read) */
	int status;  /* its HTTP status */
	char remote[64];
	int remote_port; /* 0 when the browser named none (a cache or a service worker) */
	int url_port;	 /* the port of the URL navigated to */
	char lease[256]; /* the Paddock-Lease value seen, "" for none */
	bool from_disk_cache, from_service_worker;
	char marker[64]; /* the marker in the page as rendered (#marker), "" for none */
	bool accepted;	 /* hb07_accept() */
	bool shot;	 /* a screenshot was written */
};

/* The checker. port_only (the weakened rule, and all a Docker client has):
 * any 200 from the expected port (the remote port, or the URL's when a
 * cache or service worker answered and names none). Otherwise: a Paddock-Lease whose session, gen
 * and nonce are the expected ones, and a 200. */
bool hb07_accept(const struct hb07_nav *n, bool port_only);

/* Lease value "session=ID; service=S; gen=N; nonce=HEX" into its parts;
 * false when one of session, gen, nonce is missing. */
bool hb07_lease_parse(const char *v, char *session, size_t ssize, unsigned *gen, char *nonce,
		      size_t nsize);

/* Enforcement. FAIL: an accepted result whose rendered marker is not the
 * expected generation's (stale, or the other session's). UNKNOWN: a 200
 * whose marker could not be read, or no navigation at all.
 * PASS otherwise. */
void hb07_grade(const struct hb07_nav *v, size_t n, struct verdict *out);
/* Control: every navigation flagged as a current endpoint's (want.port
 * > 0 and what starts with "current") accepted with its marker. */
void hb07_grade_control(const struct hb07_nav *v, size_t n, struct verdict *out);
/* Evidence: every loaded navigation has a screenshot (browser) or its
 * saved response (client), and every 200 its marker. */
void hb07_grade_evidence(const struct hb07_nav *v, size_t n, struct verdict *out);
