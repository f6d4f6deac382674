/* Strict JSON reading for the policy module (private to policy/): the raw
 * checks cJSON does not make, typed accessors that produce the module's
 * "<json path>: <problem>" messages, and safe quoting of input text. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <cjson/cJSON.h>

#include "../include/err.h"

static inline void cleanup_cjson_fn(cJSON **p)
{
	cJSON_Delete(*p);
}
#define cleanup_cjson __attribute__((cleanup(cleanup_cjson_fn)))

/* Room for a JSON path such as "mounts[12].source" or "environment.set.NAME". */
#define JPATH_MAX 192

/* Largest integer a JSON number (an IEEE double) holds exactly: 2^53 - 1. */
#define JSON_MAX_EXACT 9007199254740991ull

/* Parse len bytes (not necessarily NUL-terminated) as one JSON value with
 * every policy limit applied: size (-E2BIG), raw NUL bytes, "\u0000"
 * escapes, nesting depth, trailing garbage. *out owns the tree. */
int policy_json_parse(const char *buf, size_t len, cJSON **out, struct err *err);

/* Reject a member of obj that is not in names (NULL-terminated) as
 * "<path>: unknown key "k"<suffix>", and a repeated one as
 * "<path>: duplicate key "k"". The first problem in document order wins. */
int policy_json_check_keys(const cJSON *obj, const char *const *names, const char *path,
			   const char *suffix, struct err *err);

/* Reject a repeated key in an object whose keys are free-form. */
int policy_json_check_dups(const cJSON *obj, const char *path, struct err *err);

/* Typed accessors: each fails with "<path>: must be ..." on a type mismatch. */
int policy_json_object(const cJSON *it, const char *path, struct err *err);
int policy_json_array(const cJSON *it, const char *path, struct err *err);
int policy_json_string(const cJSON *it, const char *path, const char **out, struct err *err);
/* Like policy_json_string(), then replace *dst with a copy (-ENOMEM). */
int policy_json_strdup(const cJSON *it, const char *path, char **dst, struct err *err);
int policy_json_bool(const cJSON *it, const char *path, bool *out, struct err *err);
/* A whole number in 0..max read from valuedouble (valueint saturates). */
int policy_json_uint(const cJSON *it, const char *path, uint64_t max, uint64_t *out,
		     struct err *err);

/* Write s (at most n bytes of it) into buf as a double-quoted, escaped,
 * possibly shortened string that is safe in a one-line message. */
const char *policy_quote_n(const char *s, size_t n, char *buf, size_t size);
#define QUOTE_MAX     160
#define QUOTE(s)      policy_quote_n((s), (size_t)-1, (char[QUOTE_MAX]){0}, QUOTE_MAX)
#define QUOTE_N(s, n) policy_quote_n((s), (n), (char[QUOTE_MAX]){0}, QUOTE_MAX)

/* First repeated string: sets *later to the smallest index that repeats an
 * earlier string and *earlier to the first index holding it. Returns 1 when
 * found, 0 when all differ, -ENOMEM. O(n log n), so large inputs stay fast. */
int policy_first_dup(const char *const *strs, size_t n, size_t *later, size_t *earlier);
