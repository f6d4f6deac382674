/* Approvals of the release gate (docs/network.md, "Release gate"): a
 * body's SHA-256 bound to one destination, single use. Pure parsers,
 * shared by paddock (the approvals file, paddock approve) and
 * paddock-mediator (its configuration and control channel); fuzzed
 * (tests/fuzz/fuzz_mediator.c, 'a' and 'v'). */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "../include/err.h"
#include "policy.h"

#define APPROVAL_TARGET_MAX 1024	/* the destination's path (origin-form target) */
#define APPROVALS_MAX	    256		/* approvals of one file */
#define APPROVALS_FILE_MAX  (64 * 1024) /* bytes of one file */

/* A destination: the name and port of an http rule and the request's
 * whole origin-form target ("/path?query"), compared byte for byte. */
struct approval_dest {
	char host[POLICY_NET_NAME_MAX + 1];
	uint16_t port;
	char target[APPROVAL_TARGET_MAX + 1];
};

struct approval {
	char digest[65]; /* lower-case hex SHA-256 of the entity bytes */
	struct approval_dest dest;
};

/* "sha256:HEX" or "HEX", 64 hex digits in either case, into out as lower
 * case. -EINVAL with *why (static text). */
int approval_parse_digest(const char *s, char out[65], const char **why);

/* "HOST:PORT/TARGET": HOST a host name as a rule names one (no wildcard,
 * lower case), PORT 1-65535, TARGET starting with "/" of visible ASCII
 * (no space or control byte), at most APPROVAL_TARGET_MAX. -EINVAL with
 * *why. */
int approval_parse_dest(const char *s, struct approval_dest *out, const char **why);

/* The destination as "HOST:PORT/TARGET" (what approval_parse_dest reads). */
int approval_dest_format(const struct approval_dest *d, char *buf, size_t size);

/* An approvals file: one "DIGEST DEST" a line (one space or tab between
 * them), blank lines and lines starting with '#' ignored, LF or CRLF line
 * ends; no NUL byte. *out malloc'd (free()), *n entries. -EINVAL with
 * err "line N: ..." (no file name: the caller adds it), -E2BIG past
 * APPROVALS_FILE_MAX or APPROVALS_MAX, -ENOMEM. */
int approvals_parse(const char *text, size_t len, struct approval **out, size_t *n,
		    struct err *err);

/* A request of the control channel ("approve DIGEST" or "approve DIGEST
 * DEST": paddock approve), into out; *has_dest says which. -EINVAL with
 * *why. */
int approval_parse_request(const char *s, struct approval *out, bool *has_dest, const char **why);
