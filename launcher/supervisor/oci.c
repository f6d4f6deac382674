/* config.json of an OCI bundle into a paddock policy (oci.h, docs/oci.md).
 *
 * The walk is strict the way policy/parse.c is: case-sensitive lookups,
 * every member of every object checked against the keys known for it, the
 * type checked before the value is read, integers whole and in range. A
 * key paddock cannot honour is refused by its JSON path; a key it honours
 * with less than was asked (no capabilities, a minimal /dev) adds a note,
 * which the state's annotations and the record carry. */
#include "oci.h"
#include "oci_parse.h"

#include <limits.h>
#include <math.h>
#include <sched.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../../include/cleanup.h"
#include "../../policy/sha256.h"

void oci_pathf(char *out, size_t size, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(out, size, fmt, ap);
	va_end(ap);
}

static void cjson_del(cJSON **p)
{
	cJSON_Delete(*p);
}
#define cleanup_cjson __attribute__((cleanup(cjson_del)))

int oci_oom(struct err *err)
{
	return err_set(err, ENOMEM, "out of memory");
}

int oci_note(struct oci_config *c, const char *fmt, ...)
{
	char buf[512];
	va_list ap;

	if (c->n_notes >= OCI_NOTES_MAX)
		return 0;
	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	c->notes[c->n_notes] = strdup(buf);
	if (!c->notes[c->n_notes])
		return -ENOMEM;
	c->n_notes++;
	return 0;
}

/* Every member of obj is one of known (NULL-terminated), at most once. */
int oci_json_keys(const void *json, const char *path, const char *const *known, struct err *err)
{
	const cJSON *obj = json, *it, *prev;

	if (!cJSON_IsObject(obj))
		return err_set(err, EINVAL, "%s: must be an object", path);
	cJSON_ArrayForEach(it, obj) {
		size_t i;

		for (i = 0; known[i]; i++)
			if (strcmp(known[i], it->string) == 0)
				break;
		if (!known[i])
			return err_set(err, EINVAL, "%s.%s: not supported by paddock oci", path,
				       it->string);
		for (prev = obj->child; prev != it; prev = prev->next)
			if (strcmp(prev->string, it->string) == 0)
				return err_set(err, EINVAL, "%s: duplicate key \"%s\"", path,
					       it->string);
	}
	return 0;
}

const cJSON *oci_get(const cJSON *obj, const char *key)
{
	return cJSON_GetObjectItemCaseSensitive(obj, key);
}

int oci_want_string(const cJSON *it, const char *path, const char **out, struct err *err)
{
	if (!cJSON_IsString(it))
		return err_set(err, EINVAL, "%s: must be a string", path);
	/* paddock's policy reads "${NAME}" as a variable, and has no way to
	 * write it literally: refused rather than expanded. */
	if (strstr(it->valuestring, "${"))
		return err_set(err, EINVAL, "%s: \"${\" is not supported (paddock would expand it)",
			       path);
	*out = it->valuestring;
	return 0;
}

int oci_want_bool(const cJSON *it, const char *path, bool *out, struct err *err)
{
	if (!cJSON_IsBool(it))
		return err_set(err, EINVAL, "%s: must be true or false", path);
	*out = cJSON_IsTrue(it);
	return 0;
}

int oci_want_int(const cJSON *it, const char *path, double lo, double hi, double *out,
		 struct err *err)
{
	double d;

	if (!cJSON_IsNumber(it))
		return err_set(err, EINVAL, "%s: must be an integer", path);
	d = it->valuedouble;
	if (!isfinite(d) || d != floor(d) || d < lo || d > hi)
		return err_set(err, EINVAL, "%s: must be an integer from %.0f to %.0f", path, lo,
			       hi);
	*out = d;
	return 0;
}

/* An array of strings into a NULL-terminated malloc'd copy. */
int oci_want_strings(const cJSON *arr, const char *path, bool nonempty, char ***out, size_t *n,
		     struct err *err)
{
	char p[PATHLEN];
	const cJSON *it;
	size_t i = 0, count;
	char **v;

	if (!cJSON_IsArray(arr))
		return err_set(err, EINVAL, "%s: must be an array of strings", path);
	count = (size_t)cJSON_GetArraySize(arr);
	if (nonempty && count == 0)
		return err_set(err, EINVAL, "%s: must not be empty", path);
	v = calloc(count + 1, sizeof(*v));
	if (!v)
		return oci_oom(err);
	cJSON_ArrayForEach(it, arr) {
		const char *s;
		int r;

		oci_pathf(p, sizeof(p), "%s[%zu]", path, i);
		r = oci_want_string(it, p, &s, err);
		if (r == 0 && !(v[i] = strdup(s)))
			r = oci_oom(err);
		if (r < 0) {
			for (size_t j = 0; j < i; j++)
				free(v[j]);
			free(v);
			return r;
		}
		i++;
	}
	*out = v;
	if (n)
		*n = i;
	return 0;
}

void oci_strv_free(char **v)
{
	if (!v)
		return;
	for (size_t i = 0; v[i]; i++)
		free(v[i]);
	free(v);
}

/* ------------------------------------------------------------ the whole */

static int parse_annotations(struct oci_config *c, const cJSON *an, struct err *err)
{
	const cJSON *it;

	if (!cJSON_IsObject(an))
		return err_set(err, EINVAL, "annotations: must be an object");
	cJSON_ArrayForEach(it, an) {
		char p[PATHLEN];
		const char *v;
		int r;

		oci_pathf(p, sizeof(p), "annotations.%s", it->string);
		if (!cJSON_IsString(it))
			return err_set(err, EINVAL, "%s: must be a string", p);
		v = it->valuestring;
		if (strncmp(it->string, "org.paddock.", 12) != 0)
			continue;
		if (strcmp(it->string, "org.paddock.policy") == 0) {
			if ((r = oci_want_string(it, p, &v, err)) < 0)
				return r;
			if (v[0] != '/')
				return err_set(err, EINVAL,
					       "%s: an absolute path to a paddock policy", p);
			if (!(c->policy_ref = strdup(v)))
				return oci_oom(err);
		} else if (strcmp(it->string, "org.paddock.ttl") == 0) {
			if ((r = oci_want_string(it, p, &v, err)) < 0)
				return r;
			if (!(c->ttl = strdup(v)))
				return oci_oom(err);
		} else if (strcmp(it->string, "org.paddock.weaken") == 0) {
			/* paddock run's --weaken, for an evaluation's weakened
			 * arm (docs/oci.md): its names are checked by the caller
			 * (oci_cli.h), and every one is in the record. */
			if ((r = oci_want_string(it, p, &v, err)) < 0)
				return r;
			if (!v[0])
				return err_set(err, EINVAL, "%s: names no knob", p);
			if (!(c->weaken_names = strdup(v)))
				return oci_oom(err);
		} else {
			return err_set(err, EINVAL,
				       "%s: unknown paddock annotation (known: org.paddock.policy, "
				       "org.paddock.ttl, org.paddock.weaken)",
				       p);
		}
	}
	c->annotations = cJSON_PrintUnformatted(an);
	return c->annotations ? 0 : oci_oom(err);
}

static int parse_root(struct oci_config *c, const cJSON *root, const char *bundle, struct err *err)
{
	static const char *const keys[] = {"path", "readonly", NULL};
	const cJSON *it;
	const char *s;
	int r;

	if ((r = oci_json_keys(root, "root", keys, err)) < 0)
		return r;
	if ((r = oci_want_string(oci_get(root, "path"), "root.path", &s, err)) < 0)
		return r;
	if (!s[0])
		return err_set(err, EINVAL, "root.path: must not be empty");
	if (strstr(s, "/../") || strncmp(s, "../", 3) == 0 || strcmp(s, "..") == 0 ||
	    (strlen(s) >= 3 && strcmp(s + strlen(s) - 3, "/..") == 0))
		return err_set(err, EINVAL, "root.path: must not contain \"..\"");
	if (s[0] == '/')
		c->root = strdup(s);
	else if (asprintf(&c->root, "%s/%s", bundle, s) < 0)
		c->root = NULL;
	if (!c->root)
		return oci_oom(err);
	if ((it = oci_get(root, "readonly")) &&
	    (r = oci_want_bool(it, "root.readonly", &c->root_readonly, err)) < 0)
		return r;
	return 0;
}

int oci_config_parse(const char *text, size_t len, const char *bundle, struct oci_config *out,
		     struct err *err)
{
	static const char *const keys[] = {"ociVersion", "process", "root",  "hostname",
					   "domainname", "mounts",  "hooks", "annotations",
					   "linux",	 NULL};
	cleanup_cjson cJSON *doc = NULL;
	unsigned char digest[SHA256_DIGEST_LEN];
	const char *end = NULL, *s;
	const cJSON *it;
	bool uts = false;
	int r;

	memset(out, 0, sizeof(*out));
	sha256(text, len, digest);
	sha256_hex(digest, out->config_sha256);
	if (len > OCI_CONFIG_MAX_BYTES)
		return err_set(err, E2BIG, "config.json: larger than %u bytes",
			       OCI_CONFIG_MAX_BYTES);
	if (memchr(text, '\0', len) || memmem(text, len, "\\u0000", 6))
		return err_set(err, EINVAL, "config.json: a NUL byte or \\u0000 escape");
	doc = cJSON_ParseWithLengthOpts(text, len, &end, false);
	if (!doc) {
		size_t off = end && end >= text ? (size_t)(end - text) : 0, line = 1, col = 1;

		for (size_t i = 0; i < off && i < len; i++, col++)
			if (text[i] == '\n')
				line++, col = 0;
		return err_set(err, EINVAL, "config.json: line %zu, column %zu: invalid JSON", line,
			       col);
	}
	if (!(out->policy = cJSON_CreateObject()) ||
	    !cJSON_AddNumberToObject(oci_policy(out), "version", 1) ||
	    !cJSON_AddArrayToObject(oci_policy(out), "mounts"))
		return r = oci_oom(err), oci_config_free(out), r;
	r = oci_json_keys(doc, "config.json", keys, err);
	if (r == 0 &&
	    (r = oci_want_string(oci_get(doc, "ociVersion"), "ociVersion", &s, err)) == 0 &&
	    strncmp(s, "1.", 2) != 0)
		r = err_set(err, EINVAL, "ociVersion: \"%s\" is not supported (1.x)", s);
	if (r == 0 && !oci_get(doc, "process"))
		r = err_set(err, EINVAL, "process: required (paddock oci runs a process)");
	if (r == 0)
		r = oci_parse_process(out, oci_get(doc, "process"), err);
	if (r == 0 && !oci_get(doc, "root"))
		r = err_set(err, EINVAL, "root: required");
	if (r == 0)
		r = parse_root(out, oci_get(doc, "root"), bundle, err);
	if (r == 0 && !oci_get(doc, "linux"))
		r = err_set(err, EINVAL, "linux: required");
	if (r == 0)
		r = oci_parse_linux(out, oci_get(doc, "linux"), &uts, err);
	if (r == 0 && (it = oci_get(doc, "hostname"))) {
		if ((r = oci_want_string(it, "hostname", &s, err)) == 0 && s[0]) {
			if (!uts)
				r = err_set(err, EINVAL, "hostname: needs a \"uts\" namespace");
			/* A joined uts namespace is its owner's: the sandbox's
			 * user namespace may not rename it. */
			else if (oci_joins(out, CLONE_NEWUTS)) {
				if (oci_note(out, "hostname: the joined uts namespace's own") < 0)
					r = oci_oom(err);
			} else if (!cJSON_AddStringToObject(oci_policy(out), "hostname", s))
				r = oci_oom(err);
		}
	}
	if (r == 0 && (it = oci_get(doc, "domainname")) &&
	    (!cJSON_IsString(it) || it->valuestring[0]))
		r = err_set(err, EINVAL, "domainname: not supported by paddock oci");
	if (r == 0 && (it = oci_get(doc, "mounts")))
		r = oci_parse_mounts(out, it, err);
	if (r == 0 && (it = oci_get(doc, "hooks")))
		r = oci_parse_hooks(out, it, err);
	if (r == 0 && (it = oci_get(doc, "annotations")))
		r = parse_annotations(out, it, err);
	if (r == 0 && out->ttl) {
		cJSON *limits = cJSON_GetObjectItemCaseSensitive(oci_policy(out), "limits");

		if (!cJSON_AddStringToObject(limits, "ttl", out->ttl))
			r = oci_oom(err);
	}
	if (r < 0)
		oci_config_free(out);
	return r;
}

/* Is /name the destination of a mount of config.json, or below one? */
static bool covered(const cJSON *mounts, const char *name)
{
	const cJSON *m;

	cJSON_ArrayForEach(m, mounts) {
		const char *t = cJSON_GetStringValue(oci_get(m, "target"));

		if (t && t[0] == '/' && strcmp(t + 1, name) == 0)
			return true;
	}
	return false;
}

/* "network" and "protect" of a paddock policy named by an annotation:
 * paddock's own enforcement points (the mediator, protected paths),
 * chosen per container. */
static int take_extra(struct oci_config *c, const char *extra, size_t len, struct err *err)
{
	static const char *const keys[] = {"version", "network", "protect", NULL};
	cleanup_cjson cJSON *doc = cJSON_ParseWithLength(extra, len);
	int r;

	if (!doc)
		return err_set(err, EINVAL, "annotations.org.paddock.policy: invalid JSON");
	/* The rest of the container is config.json's to say. */
	if ((r = oci_json_keys(doc, "annotations.org.paddock.policy", keys, err)) < 0) {
		size_t n = strlen(err->msg);

		snprintf(err->msg + n, sizeof(err->msg) - n,
			 " (only \"network\" and \"protect\" are taken from it)");
		return r;
	}
	for (size_t k = 1; keys[k]; k++) {
		cJSON *it = cJSON_DetachItemFromObjectCaseSensitive(doc, keys[k]);

		if (it && !cJSON_AddItemToObject(oci_policy(c), keys[k], it)) {
			cJSON_Delete(it);
			return oci_oom(err);
		}
	}
	return 0;
}

int oci_config_policy(struct oci_config *c, const struct oci_entry *entries, size_t n,
		      const char *extra, size_t extra_len, struct err *err)
{
	cJSON *oci_mounts = cJSON_DetachItemFromObjectCaseSensitive(oci_policy(c), "mounts");
	cJSON *mounts = cJSON_AddArrayToObject(oci_policy(c), "mounts");
	cJSON *m;
	int r = 0;

	if (!oci_mounts || !mounts) {
		cJSON_Delete(oci_mounts);
		return oci_oom(err);
	}
	if (c->root_force_ro && !c->root_readonly &&
	    oci_note(c, "root.readonly: true (the rootfs cannot be idmapped for paddock's "
			"unprivileged workload), a tmpfs on /tmp") < 0) {
		cJSON_Delete(oci_mounts);
		return oci_oom(err);
	}
	/* The rootfs' top entries first, then config.json's mounts on top
	 * (a mount may not hide an earlier one in paddock's plan: an entry a
	 * mount replaces is left out). */
	for (size_t i = 0; i < n && r == 0; i++) {
		char target[PATH_MAX], source[PATH_MAX];
		const struct oci_entry *e = &entries[i];

		if (!e->name[0] || strchr(e->name, '/') || strcmp(e->name, ".") == 0 ||
		    strcmp(e->name, "..") == 0 || strstr(e->name, "${") ||
		    covered(oci_mounts, e->name))
			continue;
		snprintf(target, sizeof(target), "/%s", e->name);
		if (snprintf(source, sizeof(source), "%s/%s", c->root_view ? c->root_view : c->root,
			     e->name) >= (int)sizeof(source))
			r = err_set(err, ENAMETOOLONG, "root.path: too long");
		else if (!(m = cJSON_CreateObject()) || !cJSON_AddItemToArray(mounts, m))
			r = (cJSON_Delete(m), oci_oom(err));
		else if (e->kind == OCI_ENTRY_SYMLINK)
			r = cJSON_AddStringToObject(m, "type", "symlink") &&
				    cJSON_AddStringToObject(m, "target", target) &&
				    cJSON_AddStringToObject(m, "link", e->link ? e->link : "")
				? 0
				: oci_oom(err);
		else if (e->kind == OCI_ENTRY_DIR && c->root_force_ro && !c->root_readonly &&
			 strcmp(e->name, "tmp") == 0)
			r = cJSON_AddStringToObject(m, "type", "tmpfs") &&
				    cJSON_AddStringToObject(m, "target", target) &&
				    cJSON_AddStringToObject(m, "mode", "1777")
				? 0
				: oci_oom(err);
		else
			r = cJSON_AddStringToObject(m, "type", "bind") &&
				    cJSON_AddStringToObject(m, "source", source) &&
				    cJSON_AddStringToObject(m, "target", target) &&
				    cJSON_AddStringToObject(
					m, "mode",
					c->root_readonly || c->root_force_ro ? "ro" : "rw")
				? 0
				: oci_oom(err);
	}
	while (r == 0 && (m = cJSON_DetachItemFromArray(oci_mounts, 0)))
		if (!cJSON_AddItemToArray(mounts, m))
			r = (cJSON_Delete(m), oci_oom(err));
	cJSON_Delete(oci_mounts);
	if (r == 0 && extra)
		r = take_extra(c, extra, extra_len, err);
	if (r == 0 && !(c->policy_json = cJSON_Print(oci_policy(c))))
		r = oci_oom(err);
	if (r == 0) {
		unsigned char d[SHA256_DIGEST_LEN];

		sha256(c->policy_json, strlen(c->policy_json), d);
		sha256_hex(d, c->policy_sha256);
	}
	return r;
}

void oci_config_free(struct oci_config *c)
{
	oci_strv_free(c->argv);
	free(c->root);
	free(c->root_view);
	oci_strv_free(c->sysctl);
	for (size_t k = 0; k < OCI_HOOK_KINDS; k++) {
		for (size_t i = 0; i < c->n_hooks[k]; i++) {
			free(c->hooks[k][i].path);
			oci_strv_free(c->hooks[k][i].args);
			oci_strv_free(c->hooks[k][i].env);
		}
		free(c->hooks[k]);
	}
	free(c->bpf);
	free(c->policy_ref);
	free(c->ttl);
	free(c->weaken_names);
	free(c->annotations);
	cJSON_Delete(c->policy);
	free(c->policy_json);
	for (size_t i = 0; i < c->n_notes; i++)
		free(c->notes[i]);
	oci_strv_free(c->proc_masked);
	oci_strv_free(c->proc_readonly);
	for (size_t i = 0; i < c->n_join; i++) {
		free(c->join[i].path);
		if (c->join[i].fd >= 0)
			close(c->join[i].fd);
	}
	memset(c, 0, sizeof(*c));
}
