/* The trust store of project policies (trust.h). Pure. */
#include "trust.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "json.h"

static void entry_free(struct trust_entry *e)
{
	free(e->path);
	for (size_t i = 0; i < e->n_widenings; i++)
		free(e->widenings[i]);
	free(e->widenings);
	memset(e, 0, sizeof(*e));
}

void trust_store_free(struct trust_store *s)
{
	for (size_t i = 0; i < s->n; i++)
		entry_free(&s->e[i]);
	free(s->e);
	s->e = NULL;
	s->n = 0;
}

static bool hex64(const char *s)
{
	if (strlen(s) != 64)
		return false;
	for (int i = 0; i < 64; i++)
		if (!((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f')))
			return false;
	return true;
}

/* An absolute path of printable bytes, no "." or ".." component and no
 * "//": what realpath(3) gives (a canonical path is compared byte for
 * byte, so anything else could never match and is a damaged store). */
static bool canonical(const char *p)
{
	size_t n = strlen(p);

	if (p[0] != '/' || n >= TRUST_PATH_MAX || (n > 1 && p[n - 1] == '/'))
		return false;
	for (size_t i = 0; i < n; i++) {
		if ((unsigned char)p[i] < 0x20 || p[i] == 0x7f)
			return false;
		if (p[i] == '/' &&
		    (p[i + 1] == '/' || (p[i + 1] == '.' && (p[i + 2] == '/' || !p[i + 2])) ||
		     (p[i + 1] == '.' && p[i + 2] == '.' && (p[i + 3] == '/' || !p[i + 3]))))
			return false;
	}
	return true;
}

static bool widening_ok(const char *w)
{
	size_t n = strlen(w);

	if (!n || n >= TRUST_WIDENING_LEN)
		return false;
	for (size_t i = 0; i < n; i++)
		if ((unsigned char)w[i] < 0x20 || w[i] == 0x7f)
			return false;
	return true;
}

static int entry_check(const struct trust_entry *e, const char *path, struct err *err)
{
	if (!e->path || !canonical(e->path))
		return err_set(err, EINVAL, "%s.path: must be a canonical absolute path", path);
	if (!hex64(e->sha256))
		return err_set(err, EINVAL, "%s.sha256: must be 64 lower-case hex digits", path);
	if (e->time < 0)
		return err_set(err, EINVAL, "%s.time: must not be negative", path);
	if (e->n_widenings > TRUST_WIDENINGS_MAX)
		return err_set(err, E2BIG, "%s.widenings: more than %d", path, TRUST_WIDENINGS_MAX);
	for (size_t i = 0; i < e->n_widenings; i++)
		if (!e->widenings[i] || !widening_ok(e->widenings[i]))
			return err_set(err, EINVAL,
				       "%s.widenings[%zu]: must be 1 to %d printable bytes", path,
				       i, TRUST_WIDENING_LEN - 1);
	return 0;
}

static int parse_entry(const cJSON *it, const char *path, struct trust_entry *e, struct err *err)
{
	static const char *const keys[] = {"path", "sha256", "uid", "time", "widenings", NULL};
	const cJSON *w, *x;
	const char *s;
	char wp[JPATH_MAX + 32];
	uint64_t v;
	int rc;

	rc = policy_json_object(it, path, err);
	if (rc < 0)
		return rc;
	rc = policy_json_check_keys(it, keys, path, "", err);
	if (rc < 0)
		return rc;
	for (int i = 0; keys[i]; i++)
		if (i < 4 && !cJSON_GetObjectItemCaseSensitive(it, keys[i]))
			return err_set(err, EINVAL, "%s: \"%s\" missing", path, keys[i]);
	snprintf(wp, sizeof(wp), "%s.path", path);
	rc = policy_json_strdup(cJSON_GetObjectItemCaseSensitive(it, "path"), wp, &e->path, err);
	if (rc < 0)
		return rc;
	snprintf(wp, sizeof(wp), "%s.sha256", path);
	rc = policy_json_string(cJSON_GetObjectItemCaseSensitive(it, "sha256"), wp, &s, err);
	if (rc < 0)
		return rc;
	if (strlen(s) != 64)
		return err_set(err, EINVAL, "%s: must be 64 lower-case hex digits", wp);
	memcpy(e->sha256, s, 65);
	snprintf(wp, sizeof(wp), "%s.uid", path);
	rc = policy_json_uint(cJSON_GetObjectItemCaseSensitive(it, "uid"), wp, UINT32_MAX, &v, err);
	if (rc < 0)
		return rc;
	e->uid = (uint32_t)v;
	snprintf(wp, sizeof(wp), "%s.time", path);
	rc = policy_json_uint(cJSON_GetObjectItemCaseSensitive(it, "time"), wp, JSON_MAX_EXACT, &v,
			      err);
	if (rc < 0)
		return rc;
	e->time = (int64_t)v;
	w = cJSON_GetObjectItemCaseSensitive(it, "widenings");
	if (w) {
		snprintf(wp, sizeof(wp), "%s.widenings", path);
		rc = policy_json_array(w, wp, err);
		if (rc < 0)
			return rc;
		if (cJSON_GetArraySize(w) > TRUST_WIDENINGS_MAX)
			return err_set(err, E2BIG, "%s: more than %d", wp, TRUST_WIDENINGS_MAX);
		e->widenings = calloc(TRUST_WIDENINGS_MAX, sizeof(*e->widenings));
		if (!e->widenings)
			return err_set(err, ENOMEM, "out of memory");
		cJSON_ArrayForEach(x, w) {
			snprintf(wp, sizeof(wp), "%s.widenings[%zu]", path, e->n_widenings);
			rc = policy_json_strdup(x, wp, &e->widenings[e->n_widenings], err);
			if (rc < 0)
				return rc;
			e->n_widenings++;
		}
	}
	return entry_check(e, path, err);
}

static int parse(const cJSON *doc, struct trust_store *s, struct err *err)
{
	static const char *const keys[] = {"version", "trusted", NULL};
	const cJSON *list, *it;
	char path[JPATH_MAX];
	uint64_t version;
	int rc;

	rc = policy_json_object(doc, "trust store", err);
	if (rc >= 0)
		rc = policy_json_check_keys(doc, keys, "trust store", "", err);
	if (rc < 0)
		return rc;
	rc = policy_json_uint(cJSON_GetObjectItemCaseSensitive(doc, "version"), "version", 1,
			      &version, err);
	if (rc < 0)
		return rc;
	if (version != 1)
		return err_set(err, EINVAL, "version: must be 1");
	list = cJSON_GetObjectItemCaseSensitive(doc, "trusted");
	if (!list)
		return err_set(err, EINVAL, "trust store: \"trusted\" missing");
	rc = policy_json_array(list, "trusted", err);
	if (rc < 0)
		return rc;
	if (cJSON_GetArraySize(list) > TRUST_ENTRIES_MAX)
		return err_set(err, E2BIG, "trusted: more than %d entries", TRUST_ENTRIES_MAX);
	s->e = calloc((size_t)cJSON_GetArraySize(list) + 1, sizeof(*s->e));
	if (!s->e)
		return err_set(err, ENOMEM, "out of memory");
	cJSON_ArrayForEach(it, list) {
		snprintf(path, sizeof(path), "trusted[%zu]", s->n);
		rc = parse_entry(it, path, &s->e[s->n], err);
		s->n++; /* freed with the store, also when half-filled */
		if (rc < 0)
			return rc;
		if (trust_store_find(&(struct trust_store){s->e, s->n - 1}, s->e[s->n - 1].path))
			return err_set(err, EINVAL, "%s.path: a second entry for %s", path,
				       QUOTE(s->e[s->n - 1].path));
	}
	return 0;
}

int trust_store_parse(const char *text, size_t len, struct trust_store *out, struct err *err)
{
	cleanup_cjson cJSON *doc = NULL;
	int rc;

	memset(out, 0, sizeof(*out));
	if (len == 0)
		return 0;
	if (len > TRUST_FILE_MAX)
		return err_set(err, E2BIG, "larger than %d bytes", TRUST_FILE_MAX);
	rc = policy_json_parse(text, len, &doc, err);
	if (rc < 0)
		return rc;
	rc = parse(doc, out, err);
	if (rc < 0)
		trust_store_free(out);
	return rc;
}

char *trust_store_format(const struct trust_store *s)
{
	cleanup_cjson cJSON *doc = cJSON_CreateObject();
	cJSON *list, *o, *w;

	if (!doc || !cJSON_AddNumberToObject(doc, "version", 1) ||
	    !(list = cJSON_AddArrayToObject(doc, "trusted")))
		return NULL;
	for (size_t i = 0; i < s->n; i++) {
		const struct trust_entry *e = &s->e[i];

		o = cJSON_CreateObject();
		if (!o || !cJSON_AddItemToArray(list, o))
			return cJSON_Delete(o), NULL;
		if (!cJSON_AddStringToObject(o, "path", e->path) ||
		    !cJSON_AddStringToObject(o, "sha256", e->sha256) ||
		    !cJSON_AddNumberToObject(o, "uid", e->uid) ||
		    !cJSON_AddNumberToObject(o, "time", (double)e->time) ||
		    !(w = cJSON_AddArrayToObject(o, "widenings")))
			return NULL;
		for (size_t k = 0; k < e->n_widenings; k++)
			if (!cJSON_AddItemToArray(w, cJSON_CreateString(e->widenings[k])))
				return NULL;
	}
	return cJSON_Print(doc);
}

const struct trust_entry *trust_store_find(const struct trust_store *s, const char *path)
{
	for (size_t i = 0; i < s->n; i++)
		if (s->e[i].path && strcmp(s->e[i].path, path) == 0)
			return &s->e[i];
	return NULL;
}

static int copy_entry(const struct trust_entry *from, struct trust_entry *to)
{
	memset(to, 0, sizeof(*to));
	memcpy(to->sha256, from->sha256, sizeof(to->sha256));
	to->uid = from->uid;
	to->time = from->time;
	to->path = strdup(from->path);
	to->widenings = calloc(TRUST_WIDENINGS_MAX, sizeof(*to->widenings));
	if (!to->path || !to->widenings)
		return -ENOMEM;
	for (size_t i = 0; i < from->n_widenings; i++) {
		to->widenings[i] = strdup(from->widenings[i]);
		if (!to->widenings[i])
			return -ENOMEM;
		to->n_widenings++;
	}
	return 0;
}

int trust_store_put(struct trust_store *s, const struct trust_entry *e)
{
	struct err err = {0};
	struct trust_entry copy, *grown;

	if (entry_check(e, "entry", &err) < 0)
		return -(err.code ? err.code : EINVAL);
	if (copy_entry(e, &copy) < 0) {
		entry_free(&copy);
		return -ENOMEM;
	}
	for (size_t i = 0; i < s->n; i++)
		if (strcmp(s->e[i].path, e->path) == 0) {
			entry_free(&s->e[i]);
			s->e[i] = copy;
			return 0;
		}
	if (s->n >= TRUST_ENTRIES_MAX) {
		entry_free(&copy);
		return -E2BIG;
	}
	grown = realloc(s->e, (s->n + 1) * sizeof(*s->e));
	if (!grown) {
		entry_free(&copy);
		return -ENOMEM;
	}
	s->e = grown;
	s->e[s->n++] = copy;
	return 0;
}

bool trust_store_remove(struct trust_store *s, const char *path)
{
	for (size_t i = 0; i < s->n; i++)
		if (strcmp(s->e[i].path, path) == 0) {
			entry_free(&s->e[i]);
			memmove(&s->e[i], &s->e[i + 1], (s->n - i - 1) * sizeof(*s->e));
			s->n--;
			return true;
		}
	return false;
}
