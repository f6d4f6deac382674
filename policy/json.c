/* Strict JSON reading: the limits cJSON does not enforce (STYLE.md section 8)
 * and typed accessors with the module's error shapes. */
#include "json.h"

#include <assert.h>
#include <stdlib.h>
#include <string.h>

#include "../include/cleanup.h"
#include "policy.h"

/* Line and column (1-based) of byte offset off. Columns count characters:
 * UTF-8 continuation bytes do not advance them. */
static void position(const char *buf, size_t off, size_t *line, size_t *col)
{
	*line = 1;
	*col = 1;
	for (size_t i = 0; i < off; i++) {
		unsigned char c = (unsigned char)buf[i];

		if (c == '\n') {
			(*line)++;
			*col = 1;
		} else if ((c & 0xc0) != 0x80) {
			(*col)++;
		}
	}
}

static int at(const char *buf, size_t off, int code, const char *problem, struct err *err)
{
	size_t line, col;

	position(buf, off, &line, &col);
	return err_set(err, code, "line %zu, column %zu: %s", line, col, problem);
}

/* One pass over the raw text before cJSON sees it:
 * - a NUL byte would end the text early for cJSON's string functions;
 * - "\u0000" decodes to a NUL inside a string, and cJSON then returns the
 *   string cut short ("/tmp\u0000/../etc" came back as "/tmp");
 * - cJSON recurses up to 1000 levels, we allow POLICY_MAX_DEPTH.
 * Strings are tracked so that brackets and backslashes inside them are not
 * miscounted; an escaped backslash ("\\u0000") is not an escape. */
static int raw_check(const char *buf, size_t len, struct err *err)
{
	bool in_str = false, escaped = false;
	size_t depth = 0;

	for (size_t i = 0; i < len; i++) {
		char c = buf[i];

		if (c == '\0')
			return at(buf, i, EINVAL, "NUL byte is not allowed", err);
		if (in_str) {
			if (escaped) {
				escaped = false;
			} else if (c == '\\') {
				escaped = true;
				if (len - i >= 6 && memcmp(buf + i + 1, "u0000", 5) == 0)
					return at(buf, i, EINVAL, "\\u0000 is not allowed", err);
			} else if (c == '"') {
				in_str = false;
			}
		} else if (c == '"') {
			in_str = true;
		} else if (c == '{' || c == '[') {
			if (++depth > POLICY_MAX_DEPTH)
				return at(buf, i, EINVAL, "nesting deeper than 16", err);
		} else if ((c == '}' || c == ']') && depth > 0) {
			depth--;
		}
	}
	return 0;
}

int policy_json_parse(const char *buf, size_t len, cJSON **out, struct err *err)
{
	cleanup_free char *copy = NULL;
	const char *end = NULL;
	cJSON *root;
	size_t off;
	int r;

	_Static_assert(POLICY_MAX_DEPTH == 16, "update the nesting message");
	if (len > POLICY_MAX_BYTES)
		return err_set(err, E2BIG, "(root): larger than %u bytes", POLICY_MAX_BYTES);
	r = raw_check(buf, len, err);
	if (r < 0)
		return r;
	/* cJSON wants a terminated buffer, and with require_null_terminated
	 * it checks that the byte after the value is that NUL, so the length
	 * handed over includes it. */
	copy = malloc(len + 1);
	if (!copy)
		return err_set(err, ENOMEM, "out of memory");
	if (len)
		memcpy(copy, buf, len);
	copy[len] = '\0';
	root = cJSON_ParseWithLengthOpts(copy, len + 1, &end, true);
	if (!root) {
		off = end && end >= copy ? (size_t)(end - copy) : 0;
		return at(copy, off > len ? len : off, EINVAL, "invalid JSON", err);
	}
	*out = root;
	return 0;
}

static size_t key_index(const char *const *names, const char *key)
{
	size_t i;

	for (i = 0; names[i]; i++)
		if (strcmp(names[i], key) == 0)
			return i;
	return i;
}

int policy_json_check_keys(const cJSON *obj, const char *const *names, const char *path,
			   const char *suffix, struct err *err)
{
	uint64_t seen = 0;
	const cJSON *it;

	cJSON_ArrayForEach(it, obj) {
		size_t k = key_index(names, it->string);

		if (!names[k])
			return err_set(err, EINVAL, "%s: unknown key %s%s", path, QUOTE(it->string),
				       suffix ? suffix : "");
		assert(k < 64); /* the longest list of keys has 10 */
		if (seen & (1ull << k))
			return err_set(err, EINVAL, "%s: duplicate key %s", path,
				       QUOTE(it->string));
		seen |= 1ull << k;
	}
	return 0;
}

int policy_json_check_dups(const cJSON *obj, const char *path, struct err *err)
{
	cleanup_free const char **keys = NULL;
	size_t n = 0, later, earlier;
	const cJSON *it;
	int r;

	cJSON_ArrayForEach(it, obj)
		n++;
	keys = calloc(n ? n : 1, sizeof(*keys));
	if (!keys)
		return err_set(err, ENOMEM, "out of memory");
	n = 0;
	cJSON_ArrayForEach(it, obj)
		keys[n++] = it->string;
	r = policy_first_dup(keys, n, &later, &earlier);
	if (r < 0)
		return err_set(err, r, "out of memory");
	if (r > 0)
		return err_set(err, EINVAL, "%s: duplicate key %s", path, QUOTE(keys[later]));
	return 0;
}

int policy_json_object(const cJSON *it, const char *path, struct err *err)
{
	if (!cJSON_IsObject(it))
		return err_set(err, EINVAL, "%s: must be an object", path);
	return 0;
}

int policy_json_array(const cJSON *it, const char *path, struct err *err)
{
	if (!cJSON_IsArray(it))
		return err_set(err, EINVAL, "%s: must be an array", path);
	return 0;
}

int policy_json_string(const cJSON *it, const char *path, const char **out, struct err *err)
{
	if (!cJSON_IsString(it) || !it->valuestring)
		return err_set(err, EINVAL, "%s: must be a string", path);
	*out = it->valuestring;
	return 0;
}

int policy_json_strdup(const cJSON *it, const char *path, char **dst, struct err *err)
{
	const char *s = NULL;
	char *copy;
	int r;

	r = policy_json_string(it, path, &s, err);
	if (r < 0)
		return r;
	copy = strdup(s);
	if (!copy)
		return err_set(err, ENOMEM, "out of memory");
	free(*dst);
	*dst = copy;
	return 0;
}

int policy_json_bool(const cJSON *it, const char *path, bool *out, struct err *err)
{
	if (!cJSON_IsBool(it))
		return err_set(err, EINVAL, "%s: must be true or false", path);
	*out = cJSON_IsTrue(it);
	return 0;
}

int policy_json_uint(const cJSON *it, const char *path, uint64_t max, uint64_t *out,
		     struct err *err)
{
	double d;

	if (!cJSON_IsNumber(it))
		return err_set(err, EINVAL, "%s: must be an integer", path);
	d = it->valuedouble;
	/* The range test also refuses NaN and the infinities; max is at most
	 * 2^53 - 1, so (double)max is exact and the cast back is too. */
	if (!(d >= 0 && d <= (double)max) || d != (double)(uint64_t)d)
		return err_set(err, EINVAL, "%s: must be an integer from 0 to %llu", path,
			       (unsigned long long)max);
	*out = (uint64_t)d;
	return 0;
}

const char *policy_quote_n(const char *s, size_t n, char *buf, size_t size)
{
	static const char hex[] = "0123456789abcdef";
	size_t o = 0;

	buf[o++] = '"';
	for (size_t i = 0; i < n && s[i]; i++) {
		unsigned char c = (unsigned char)s[i];

		/* Leave room for the longest escape, "...", '"' and the NUL. */
		if (o + 4 + 3 + 2 > size) {
			memcpy(buf + o, "...", 3);
			o += 3;
			break;
		}
		if (c == '"' || c == '\\') {
			buf[o++] = '\\';
			buf[o++] = (char)c;
		} else if (c >= 0x20 && c < 0x7f) {
			buf[o++] = (char)c;
		} else {
			buf[o++] = '\\';
			buf[o++] = 'x';
			buf[o++] = hex[c >> 4];
			buf[o++] = hex[c & 15];
		}
	}
	buf[o++] = '"';
	buf[o] = '\0';
	return buf;
}

struct dup_entry {
	const char *s;
	size_t i;
};

static int dup_cmp(const void *a, const void *b)
{
	const struct dup_entry *x = a, *y = b;
	int c = strcmp(x->s, y->s);

	if (c)
		return c;
	return (x->i > y->i) - (x->i < y->i);
}

int policy_first_dup(const char *const *strs, size_t n, size_t *later, size_t *earlier)
{
	cleanup_free struct dup_entry *e = NULL;
	bool found = false;

	if (n < 2)
		return 0;
	e = calloc(n, sizeof(*e));
	if (!e)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++)
		e[i] = (struct dup_entry){strs[i], i};
	qsort(e, n, sizeof(*e), dup_cmp);
	/* Within a run of equal strings the indices ascend: the run's second
	 * entry is its first repeat, and it repeats the run's first entry. */
	for (size_t k = 1; k < n; k++) {
		if (strcmp(e[k - 1].s, e[k].s) != 0 || (k >= 2 && !strcmp(e[k - 2].s, e[k].s)))
			continue;
		if (!found || e[k].i < *later) {
			*later = e[k].i;
			*earlier = e[k - 1].i;
			found = true;
		}
	}
	return found;
}
