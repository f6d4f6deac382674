/* The review packet's pure parts (evidence.h): the allowlist rewrite and
 * the deny-list scan. */
#include "evidence.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The fields a reviewer needs to link authorization, attempt and effect:
 * ids, digests, decisions, counts, times. Free text (a command, a
 * destination name, paddock-init's messages, paths) is not among them. */
static const char *const allowed[] = {
    /* every evidence line */
    "seq", "source", "epoch", "session", "time", "type", "prev", "mac", "drops",
    /* the supervisor's events */
    "policy_sha256", "effective_sha256", "weaken", "ended", "status", "survivors", "ttl_ms",
    "grace_ms", "of", "of_epoch", "last_seq", "head", "verified",
    /* the mediator's */
    "event", "generation", "admission", "protocol", "decision", "rule", "port", "bytes_up",
    "bytes_down", "class", "correlation", "attempt", "op", "outcome", "digest", "length", "tainted",
    "redacted", "refused", "admitted", "on_capture_loss",
    /* the record */
    "record_version", "paddock", "version", "commit", "policy", "sha256", "id", "detached",
    "weakenings", "start", "end", "exit_code", "workload_started", "phase", "init_done", "network",
    "mode", "admissions", "admissions_reported", "admissions_sha256", "admissions_log_verified",
    "capture", "impaired", "lines_lost", "refused_while_impaired", "admitted_while_impaired",
    "evidence", "sources", "sequenced", "missing", "controls", "kind", "hook", "control",
    "effect_observed", "outcome_ok", NULL};

static bool listed(const char *k)
{
	for (int i = 0; allowed[i]; i++)
		if (strcmp(allowed[i], k) == 0)
			return true;
	return false;
}

/* Plain: what an id, a digest, a decision or a time is made of. */
static bool plain(const char *s)
{
	size_t n = 0;

	for (; s[n]; n++)
		if (!((s[n] >= 'a' && s[n] <= 'z') || (s[n] >= 'A' && s[n] <= 'Z') ||
		      (s[n] >= '0' && s[n] <= '9') || strchr("._:+-", s[n])))
			return false;
	return n <= 128;
}

static cJSON *digest(const unsigned char *key, const void *data, size_t len)
{
	static const char d[] = "0123456789abcdef";
	unsigned char mac[32];
	char hex[65];
	cJSON *o = cJSON_CreateObject();

	evidence_hmac(key, EVIDENCE_KEY_LEN, data, len, mac);
	for (int i = 0; i < 32; i++) {
		hex[2 * i] = d[mac[i] >> 4];
		hex[2 * i + 1] = d[mac[i] & 15];
	}
	hex[64] = '\0';
	cJSON_AddStringToObject(o, "hmac", hex);
	cJSON_AddNumberToObject(o, "len", (double)len);
	return o;
}

/* v as the packet may hold it: under a listed field (ok), v itself
 * (objects and arrays walked); anything else as its keyed digest. */
static cJSON *rewrite(const cJSON *v, bool ok, const unsigned char *key, int depth)
{
	cJSON *o;
	const cJSON *x;

	if (ok && (cJSON_IsNumber(v) || cJSON_IsBool(v) || cJSON_IsNull(v)))
		return cJSON_Duplicate(v, 0);
	if (ok && cJSON_IsString(v) && plain(v->valuestring))
		return cJSON_CreateString(v->valuestring);
	if (cJSON_IsString(v))
		return digest(key, v->valuestring, strlen(v->valuestring));
	if (ok && depth < 8 && cJSON_IsArray(v)) {
		o = cJSON_CreateArray();
		cJSON_ArrayForEach(x, v) {
			cJSON_AddItemToArray(o, rewrite(x, true, key, depth + 1));
		}
		return o;
	}
	if (ok && depth < 8 && cJSON_IsObject(v)) {
		bool counts = false;

		o = cJSON_CreateObject();
		cJSON_ArrayForEach(x, v) {
			/* The record's admissions: counts under decision names. */
			counts = v->string && strcmp(v->string, "admissions") == 0 &&
				 cJSON_IsNumber(x) && plain(x->string);
			cJSON_AddItemToObject(
			    o, x->string, rewrite(x, counts || listed(x->string), key, depth + 1));
		}
		return o;
	}
	{
		char *t = cJSON_PrintUnformatted(v);
		cJSON *d = t ? digest(key, t, strlen(t)) : NULL;

		free(t);
		return d;
	}
}

int evidence_export_json(const char *text, size_t len, const unsigned char *key, char **out)
{
	cJSON *in = cJSON_ParseWithLength(text, len), *o, *unlisted = NULL;
	const cJSON *x;

	*out = NULL;
	if (!cJSON_IsObject(in)) {
		cJSON_Delete(in);
		return -EINVAL;
	}
	o = cJSON_CreateObject();
	cJSON_ArrayForEach(x, in) {
		/* A field name is kept only when listed: a name a workload
		 * chose could itself carry data. */
		if (listed(x->string))
			cJSON_AddItemToObject(o, x->string, rewrite(x, true, key, 0));
		else if (unlisted || (unlisted = cJSON_AddArrayToObject(o, "unlisted")))
			cJSON_AddItemToArray(unlisted, rewrite(x, false, key, 0));
	}
	*out = cJSON_PrintUnformatted(o);
	cJSON_Delete(o);
	cJSON_Delete(in);
	return *out ? 0 : -ENOMEM;
}

/* ------------------------------------------------------------ markers */

int evidence_markers_add(struct evidence_markers *m, const char *s, size_t len)
{
	char **v;
	size_t *l;
	char *c;

	if (len < EVIDENCE_MARKER_MIN) {
		m->skipped++;
		return 0;
	}
	v = realloc(m->v, (m->n + 1) * sizeof(*v));
	if (!v)
		return -ENOMEM;
	m->v = v;
	l = realloc(m->len, (m->n + 1) * sizeof(*l));
	if (!l)
		return -ENOMEM;
	m->len = l;
	c = malloc(len + 1);
	if (!c)
		return -ENOMEM;
	memcpy(c, s, len);
	c[len] = '\0';
	m->v[m->n] = c;
	m->len[m->n++] = len;
	return 0;
}

int evidence_markers_add_text(struct evidence_markers *m, const char *text, size_t len, bool values,
			      const char *(*lookup)(const char *name))
{
	size_t off = 0;

	while (off < len) {
		const char *s = text + off, *nl = memchr(s, '\n', len - off), *eq;
		size_t n = nl ? (size_t)(nl - s) : len - off;
		int r = 0;

		off += n + 1;
		if (n && s[n - 1] == '\r')
			n--;
		if (n == 0 || (values && s[0] == '#'))
			continue;
		if (!values)
			r = evidence_markers_add(m, s, n);
		else if ((eq = memchr(s, '=', n)))
			r = evidence_markers_add(m, eq + 1, n - (size_t)(eq + 1 - s));
		else if (lookup && n < 256) {
			char name[256];
			const char *v;

			memcpy(name, s, n);
			name[n] = '\0';
			if ((v = lookup(name)))
				r = evidence_markers_add(m, v, strlen(v));
		}
		if (r < 0)
			return r;
	}
	return 0;
}

static bool has(const char *buf, size_t len, const char *s, size_t n)
{
	return n && len >= n && memmem(buf, len, s, n) != NULL;
}

long evidence_markers_scan(const struct evidence_markers *m, const char *buf, size_t len)
{
	for (size_t i = 0; i < m->n; i++) {
		char esc[2 * EVIDENCE_LINE_MAX];

		if (has(buf, len, m->v[i], m->len[i]))
			return (long)i;
		/* As a JSON string escapes it (quotes, backslashes, control
		 * characters), without its quotes. */
		if (m->len[i] < EVIDENCE_LINE_MAX / 4) {
			evidence_json_string(m->v[i], esc, sizeof(esc));
			if (has(buf, len, esc + 1, strlen(esc) - 2))
				return (long)i;
		}
	}
	return -1;
}

void evidence_markers_free(struct evidence_markers *m)
{
	for (size_t i = 0; i < m->n; i++)
		free(m->v[i]);
	free(m->v);
	free(m->len);
	*m = (struct evidence_markers){0};
}
