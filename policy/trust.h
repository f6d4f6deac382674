/* The trust store of project policies (docs/security.md, "Project
 * policies"): which bytes of which file its owner approved. A JSON file
 *
 *   {"version": 1, "trusted": [{"path": "/canonical/path", "sha256": HEX,
 *     "uid": N, "time": SECONDS, "widenings": ["...", ...]}, ...]}
 *
 * path the file's canonical path, sha256 the digest of the bytes read from
 * the file when it was approved, uid who approved, time when (seconds since
 * the epoch), widenings what the approval allows beyond the approver's own
 * policy. Pure: bytes in, entries out, and back; fuzzed (tests/fuzz/
 * fuzz_policy.c, selector 't'). */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "../include/err.h"

#define TRUST_FILE_MAX	    (1024 * 1024) /* bytes of one trust store */
#define TRUST_ENTRIES_MAX   1024
#define TRUST_WIDENINGS_MAX 32
#define TRUST_WIDENING_LEN  192 /* with its NUL, as WIDENING_LEN */
#define TRUST_PATH_MAX	    4096

struct trust_entry {
	char *path;
	char sha256[65]; /* lower-case hex */
	uint32_t uid;
	int64_t time;
	char **widenings;
	size_t n_widenings;
};

struct trust_store {
	struct trust_entry *e;
	size_t n;
};

/* Parse a trust store. Every problem fails the whole store: -EINVAL with
 * err "<json path>: ..." (no file name: the caller adds it), -E2BIG past
 * TRUST_FILE_MAX or TRUST_ENTRIES_MAX, -ENOMEM. An empty text (len 0) is an
 * empty store. On failure *out is empty. */
int trust_store_parse(const char *text, size_t len, struct trust_store *out, struct err *err);

/* The store as JSON text (what trust_store_parse reads back to the same
 * entries), malloc'd, NULL when out of memory. */
char *trust_store_format(const struct trust_store *s);

/* The entry of path, or NULL. */
const struct trust_entry *trust_store_find(const struct trust_store *s, const char *path);

/* Add e (its strings copied), replacing the entry of the same path.
 * -EINVAL when e is not what the parser accepts, -E2BIG when full,
 * -ENOMEM. */
int trust_store_put(struct trust_store *s, const struct trust_entry *e);

/* Remove the entry of path: true when there was one. */
bool trust_store_remove(struct trust_store *s, const char *path);

void trust_store_free(struct trust_store *s);
