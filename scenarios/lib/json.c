/* JSON lookups in paddock's outputs (completion records, session.json,
 * ps --json) and small file reads (harness.h). The harness reads these
 * as a client would; it links nothing of paddock but policy/sha256. */
#include "harness.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../observers/observe.h"

int json_get(const char *text, size_t len, const char *key, char *out, size_t n)
{
	cJSON *root, *v;
	int r;

	root = cJSON_ParseWithLength(text, len);
	if (!root)
		return -EINVAL;
	/* A dotted path: "init.pid". */
	v = root;
	for (const char *k = key; v && *k;) {
		char part[64];
		size_t plen = strcspn(k, ".");

		snprintf(part, sizeof(part), "%.*s", (int)plen, k);
		/* "endpoints.0.host": a number indexes an array. */
		if (cJSON_IsArray(v) && plen && strspn(part, "0123456789") == plen)
			v = cJSON_GetArrayItem(v, atoi(part));
		else
			v = cJSON_GetObjectItemCaseSensitive(v, part);
		k += plen + (k[plen] == '.');
	}
	r = 0;
	if (cJSON_IsString(v))
		snprintf(out, n, "%s", v->valuestring);
	else if (cJSON_IsNumber(v))
		snprintf(out, n, "%.0f", v->valuedouble);
	else if (cJSON_IsArray(v))
		snprintf(out, n, "%d", cJSON_GetArraySize(v));
	else if (cJSON_IsBool(v))
		snprintf(out, n, "%s", cJSON_IsTrue(v) ? "true" : "false");
	else
		r = -ENOENT;
	cJSON_Delete(root);
	return r;
}

int record_get(const char *path, const char *key, char *out, size_t n)
{
	static __thread char buf[65536];
	int r = read_file(path, buf, sizeof(buf));

	if (r < 0)
		return r;
	return json_get(buf, (size_t)r, key, out, n);
}

int paddock_ps_entry(const struct eval_ctx *ctx, const char *id, char *out, size_t n)
{
	char *argv[] = {(char *)ctx->paddock, "ps", "--all", "--json", NULL};
	static char buf[1 << 18];
	cJSON *root, *e;
	int st = -1, r = -ENOENT;

	if (run_capture(ctx, ctx->drop, argv, buf, sizeof(buf), 10000, &st) < 0 || st != 0)
		return -EIO;
	root = cJSON_Parse(buf);
	if (!root)
		return -EINVAL;
	cJSON_ArrayForEach(e, root) {
		cJSON *i = cJSON_GetObjectItemCaseSensitive(e, "id");
		char *txt;

		if (!cJSON_IsString(i) || strcmp(i->valuestring, id) != 0)
			continue;
		txt = cJSON_PrintUnformatted(e);
		if (txt) {
			snprintf(out, n, "%s", txt);
			free(txt);
			r = 0;
		}
		break;
	}
	cJSON_Delete(root);
	return r;
}

void session_json_path(uid_t owner, const char *id, char *out, size_t n)
{
	/* The registry of a caller without XDG_RUNTIME_DIR (child_exec clears
	 * the environment): docs/sessions.md. */
	snprintf(out, n, "/tmp/paddock-%u/%s/session.json", (unsigned)owner, id);
}

int admissions_read(const char *rec, char *path, size_t psize, bool *verified, char *log,
		    size_t lsize)
{
	char v[32] = "";
	int n;

	*verified = false;
	path[0] = '\0';
	if (record_get(rec, "network.admissions_log", path, psize) < 0 || !path[0])
		return -ENOENT;
	(void)record_get(rec, "network.admissions_log_verified", v, sizeof(v));
	*verified = strstr(v, "complete") && !strstr(v, "incomplete");
	n = read_file(path, log, lsize);
	return n < 0 ? n : 0;
}

size_t admissions_count(const char *log, const char *decision, const char *name)
{
	size_t n = 0;

	for (const char *l = log; *l;) {
		const char *e = strchr(l, '\n');
		cJSON *o = cJSON_ParseWithLength(l, e ? (size_t)(e - l) : strlen(l));
		const cJSON *ev = cJSON_GetObjectItemCaseSensitive(o, "event");
		const cJSON *d = cJSON_GetObjectItemCaseSensitive(o, "decision");
		const cJSON *nm = cJSON_GetObjectItemCaseSensitive(o, "name");

		n += cJSON_IsString(ev) && strcmp(ev->valuestring, "decision") == 0 &&
		     cJSON_IsString(d) && strcmp(d->valuestring, decision) == 0 &&
		     (!name || (cJSON_IsString(nm) && strcmp(nm->valuestring, name) == 0));
		cJSON_Delete(o);
		if (!e)
			break;
		l = e + 1;
	}
	return n;
}

bool admissions_has(const char *log, const char *id, size_t n)
{
	char want[128];

	if (n > 96)
		return false;
	snprintf(want, sizeof(want), "\"admission\":\"%.*s\"", (int)n, id);
	return strstr(log, want) != NULL;
}
