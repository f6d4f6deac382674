/* Plugin manifests and their capability diff (manifest.h). Pure. */
#include "manifest.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "json.h"
#include "policy.h"
#include "sha256.h"

void manifest_free(struct manifest *m)
{
	if (!m)
		return;
	free(m->name);
	free(m->artifact);
	free(m->signer_issuer);
	free(m->signer_identity);
	for (size_t i = 0; i < m->n_files; i++)
		free(m->files[i].path);
	for (size_t i = 0; i < m->n_net; i++)
		free(m->net[i].host);
	for (size_t i = 0; i < m->n_tools; i++) {
		free(m->tools[i].name);
		free(m->tools[i].description);
	}
	free(m->files);
	free(m->net);
	free(m->tools);
	free(m);
}

static bool name_ok(const char *s)
{
	size_t n = strlen(s);

	if (!n || n > MANIFEST_NAME_MAX || s[0] == '.')
		return false;
	for (size_t i = 0; i < n; i++)
		if (!(s[i] == '-' || s[i] == '_' || s[i] == '.' || (s[i] >= 'a' && s[i] <= 'z') ||
		      (s[i] >= 'A' && s[i] <= 'Z') || (s[i] >= '0' && s[i] <= '9')))
			return false;
	return true;
}

static bool text_ok(const char *s)
{
	size_t n = strlen(s);

	if (n > MANIFEST_TEXT_MAX)
		return false;
	for (size_t i = 0; i < n; i++)
		if ((unsigned char)s[i] < 0x20 && s[i] != '\n' && s[i] != '\t')
			return false;
	return true;
}

/* A relative path of plain components: "." alone, or a/b (no "", ".",
 * "..", no leading or trailing '/'). */
static bool relpath_ok(const char *p)
{
	const char *c = p;

	if (strcmp(p, ".") == 0)
		return true;
	if (!*p || *p == '/' || strlen(p) > 1024)
		return false;
	while (*c) {
		size_t n = strcspn(c, "/");

		if (n == 0 || (n == 1 && c[0] == '.') || (n == 2 && c[0] == '.' && c[1] == '.'))
			return false;
		for (size_t i = 0; i < n; i++)
			if ((unsigned char)c[i] < 0x20)
				return false;
		c += n;
		if (*c == '/' && !*++c)
			return false;
	}
	return true;
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

static int string(const cJSON *obj, const char *key, const char *path, bool required, char **out,
		  struct err *err)
{
	const cJSON *it = cJSON_GetObjectItemCaseSensitive(obj, key);
	char p[JPATH_MAX + 64];

	snprintf(p, sizeof(p), "%s%s%s", path, path[0] ? "." : "", key);
	if (!it)
		return required ? err_set(err, EINVAL, "%s: missing", p) : 0;
	return policy_json_strdup(it, p, out, err);
}

static int artifact(const cJSON *a, struct manifest *m, struct err *err)
{
	static const char *const keys[] = {"path", "sha256", NULL};
	char *sha = NULL;
	int rc;

	rc = policy_json_object(a, "artifact", err);
	if (rc >= 0)
		rc = policy_json_check_keys(a, keys, "artifact", "", err);
	if (rc >= 0)
		rc = string(a, "path", "artifact", true, &m->artifact, err);
	if (rc >= 0)
		rc = string(a, "sha256", "artifact", true, &sha, err);
	if (rc < 0) {
		free(sha);
		return rc;
	}
	if (!relpath_ok(m->artifact) || strcmp(m->artifact, ".") == 0)
		rc = err_set(err, EINVAL, "artifact.path: must be a relative path (no \"..\")");
	else if (!hex64(sha))
		rc = err_set(err, EINVAL, "artifact.sha256: must be 64 lower-case hex digits");
	else
		memcpy(m->artifact_sha256, sha, 65);
	free(sha);
	return rc;
}

static int signer(const cJSON *s, struct manifest *m, struct err *err)
{
	static const char *const keys[] = {"issuer", "identity", NULL};
	int rc = policy_json_object(s, "signer", err);

	if (rc >= 0)
		rc = policy_json_check_keys(s, keys, "signer", "", err);
	if (rc >= 0)
		rc = string(s, "issuer", "signer", true, &m->signer_issuer, err);
	if (rc >= 0)
		rc = string(s, "identity", "signer", true, &m->signer_identity, err);
	if (rc >= 0 && (!m->signer_issuer[0] || !m->signer_identity[0] ||
			!text_ok(m->signer_issuer) || !text_ok(m->signer_identity)))
		rc = err_set(err, EINVAL, "signer: issuer and identity must be non-empty text");
	return rc;
}

static int array(const cJSON *doc, const char *key, const cJSON **out, size_t *n, struct err *err)
{
	const cJSON *a = cJSON_GetObjectItemCaseSensitive(doc, key);
	int rc;

	*out = a;
	*n = 0;
	if (!a)
		return 0;
	rc = policy_json_array(a, key, err);
	if (rc < 0)
		return rc;
	if (cJSON_GetArraySize(a) > MANIFEST_ITEMS_MAX)
		return err_set(err, E2BIG, "%s: more than %d", key, MANIFEST_ITEMS_MAX);
	*n = (size_t)cJSON_GetArraySize(a);
	return 0;
}

static int files(const cJSON *doc, struct manifest *m, struct err *err)
{
	static const char *const keys[] = {"path", "mode", NULL};
	const cJSON *a, *it;
	char p[JPATH_MAX];
	char *mode = NULL;
	size_t n;
	int rc = array(doc, "files", &a, &n, err);

	if (rc < 0 || !n)
		return rc;
	m->files = calloc(n, sizeof(*m->files));
	if (!m->files)
		return err_set(err, ENOMEM, "out of memory");
	cJSON_ArrayForEach(it, a) {
		struct manifest_file *f = &m->files[m->n_files];

		snprintf(p, sizeof(p), "files[%zu]", m->n_files);
		rc = policy_json_object(it, p, err);
		if (rc >= 0)
			rc = policy_json_check_keys(it, keys, p, "", err);
		if (rc >= 0)
			rc = string(it, "path", p, true, &f->path, err);
		m->n_files++;
		if (rc >= 0)
			rc = string(it, "mode", p, true, &mode, err);
		if (rc < 0)
			return rc;
		f->rw = strcmp(mode, "rw") == 0;
		rc = f->rw || strcmp(mode, "ro") == 0
			 ? 0
			 : err_set(err, EINVAL, "%s.mode: must be \"ro\" or \"rw\"", p);
		free(mode);
		mode = NULL;
		if (rc >= 0 && !relpath_ok(f->path))
			rc = err_set(err, EINVAL,
				     "%s.path: must be relative to the workspace (no \"..\")", p);
		for (size_t k = 0; rc >= 0 && k + 1 < m->n_files; k++)
			if (strcmp(m->files[k].path, f->path) == 0)
				rc = err_set(err, EINVAL, "%s.path: repeats files[%zu]", p, k);
		if (rc < 0)
			return rc;
	}
	return 0;
}

static int network(const cJSON *doc, struct manifest *m, struct err *err)
{
	const cJSON *a, *it;
	char p[JPATH_MAX];
	size_t n;
	int rc = array(doc, "network", &a, &n, err);

	if (rc < 0 || !n)
		return rc;
	m->net = calloc(n, sizeof(*m->net));
	if (!m->net)
		return err_set(err, ENOMEM, "out of memory");
	cJSON_ArrayForEach(it, a) {
		struct manifest_net *e = &m->net[m->n_net];
		const char *s, *colon;
		unsigned long port = 0;

		snprintf(p, sizeof(p), "network[%zu]", m->n_net);
		rc = policy_json_string(it, p, &s, err);
		if (rc < 0)
			return rc;
		colon = strrchr(s, ':');
		if (!colon || colon == s || (size_t)(colon - s) > POLICY_NET_NAME_MAX)
			return err_set(err, EINVAL, "%s: must be HOST:PORT", p);
		for (const char *d = colon + 1; *d && port <= 65535; d++)
			port =
			    *d >= '0' && *d <= '9' ? port * 10 + (unsigned long)(*d - '0') : 70000;
		if (!colon[1] || port == 0 || port > 65535 || colon[1] == '0')
			return err_set(err, EINVAL, "%s: PORT must be 1 to 65535", p);
		e->host = strndup(s, (size_t)(colon - s));
		if (!e->host)
			return err_set(err, ENOMEM, "out of memory");
		e->port = (uint16_t)port;
		m->n_net++;
		if (!policy_net_host_valid(e->host, true))
			return err_set(err, EINVAL, "%s: not a host name as a rule names one", p);
		for (size_t k = 0; k + 1 < m->n_net; k++)
			if (strcmp(m->net[k].host, e->host) == 0 && m->net[k].port == e->port)
				return err_set(err, EINVAL, "%s: repeats network[%zu]", p, k);
	}
	return 0;
}

/* A tool's digest: its definition written back compactly, so that any
 * change of name, description or schema (a key order included) shows. */
static int tool_digest(const cJSON *it, struct manifest_tool *t, struct err *err)
{
	cleanup_cjson cJSON *def = cJSON_CreateObject();
	const cJSON *schema = cJSON_GetObjectItemCaseSensitive(it, "schema");
	unsigned char d[SHA256_DIGEST_LEN];
	char *text;

	if (!def || !cJSON_AddStringToObject(def, "name", t->name) ||
	    !cJSON_AddStringToObject(def, "description", t->description) ||
	    (schema && !cJSON_AddItemToObject(def, "schema", cJSON_Duplicate(schema, true))))
		return err_set(err, ENOMEM, "out of memory");
	text = cJSON_PrintUnformatted(def);
	if (!text)
		return err_set(err, ENOMEM, "out of memory");
	sha256(text, strlen(text), d);
	sha256_hex(d, t->sha256);
	free(text);
	return 0;
}

static int tools(const cJSON *doc, struct manifest *m, struct err *err)
{
	static const char *const keys[] = {"name", "description", "schema", NULL};
	const cJSON *a, *it;
	char p[JPATH_MAX];
	size_t n;
	int rc = array(doc, "tools", &a, &n, err);

	if (rc < 0 || !n)
		return rc;
	m->tools = calloc(n, sizeof(*m->tools));
	if (!m->tools)
		return err_set(err, ENOMEM, "out of memory");
	cJSON_ArrayForEach(it, a) {
		struct manifest_tool *t = &m->tools[m->n_tools];
		const cJSON *schema;

		snprintf(p, sizeof(p), "tools[%zu]", m->n_tools);
		rc = policy_json_object(it, p, err);
		if (rc >= 0)
			rc = policy_json_check_keys(it, keys, p, "", err);
		if (rc >= 0)
			rc = string(it, "name", p, true, &t->name, err);
		if (rc >= 0)
			rc = string(it, "description", p, true, &t->description, err);
		m->n_tools++;
		if (rc < 0)
			return rc;
		schema = cJSON_GetObjectItemCaseSensitive(it, "schema");
		if (schema && !cJSON_IsObject(schema))
			return err_set(err, EINVAL, "%s.schema: must be an object", p);
		if (!name_ok(t->name))
			return err_set(err, EINVAL, "%s.name: letters, digits, - _ . (1 to 64)", p);
		if (!text_ok(t->description))
			return err_set(err, EINVAL, "%s.description: at most %d bytes of text", p,
				       MANIFEST_TEXT_MAX);
		for (size_t k = 0; k + 1 < m->n_tools; k++)
			if (strcmp(m->tools[k].name, t->name) == 0)
				return err_set(err, EINVAL, "%s.name: repeats tools[%zu]", p, k);
		rc = tool_digest(it, t, err);
		if (rc < 0)
			return rc;
	}
	return 0;
}

static int parse(const cJSON *doc, struct manifest *m, struct err *err)
{
	static const char *const keys[] = {"version", "name",	 "artifact", "signer",
					   "files",   "network", "tools",    NULL};
	const cJSON *a;
	uint64_t v;
	int rc;

	rc = policy_json_object(doc, "manifest", err);
	if (rc >= 0)
		rc = policy_json_check_keys(doc, keys, "manifest", "", err);
	if (rc >= 0)
		rc = policy_json_uint(cJSON_GetObjectItemCaseSensitive(doc, "version"), "version",
				      1, &v, err);
	if (rc >= 0 && v != 1)
		rc = err_set(err, EINVAL, "version: must be 1");
	if (rc >= 0)
		rc = string(doc, "name", "", true, &m->name, err);
	if (rc >= 0 && !name_ok(m->name))
		rc = err_set(err, EINVAL,
			     "name: letters, digits, - _ . (1 to 64, not starting "
			     "with .)");
	if (rc < 0)
		return rc;
	a = cJSON_GetObjectItemCaseSensitive(doc, "artifact");
	if (!a)
		return err_set(err, EINVAL, "artifact: missing");
	rc = artifact(a, m, err);
	if (rc >= 0 && (a = cJSON_GetObjectItemCaseSensitive(doc, "signer")))
		rc = signer(a, m, err);
	if (rc >= 0)
		rc = files(doc, m, err);
	if (rc >= 0)
		rc = network(doc, m, err);
	if (rc >= 0)
		rc = tools(doc, m, err);
	return rc;
}

int manifest_parse(const char *text, size_t len, struct manifest **out, struct err *err)
{
	cleanup_cjson cJSON *doc = NULL;
	struct manifest *m;
	unsigned char d[SHA256_DIGEST_LEN];
	int rc;

	*out = NULL;
	if (len > MANIFEST_MAX_BYTES)
		return err_set(err, E2BIG, "larger than %d bytes", MANIFEST_MAX_BYTES);
	rc = policy_json_parse(text, len, &doc, err);
	if (rc < 0)
		return rc;
	m = calloc(1, sizeof(*m));
	if (!m)
		return err_set(err, ENOMEM, "out of memory");
	rc = parse(doc, m, err);
	if (rc < 0) {
		manifest_free(m);
		return rc;
	}
	sha256(text, len, d);
	sha256_hex(d, m->sha256);
	*out = m;
	return 0;
}

/* ------------------------------------------------------------- the diff */

#define CHANGE(k, ...)                                                           \
	do {                                                                     \
		if (n < max) {                                                   \
			out[n].kind = (k);                                       \
			snprintf(out[n].text, sizeof(out[n].text), __VA_ARGS__); \
			n++;                                                     \
		}                                                                \
	} while (0)

static const struct manifest_file *file_of(const struct manifest *m, const char *path)
{
	for (size_t i = 0; i < m->n_files; i++)
		if (strcmp(m->files[i].path, path) == 0)
			return &m->files[i];
	return NULL;
}

static bool net_in(const struct manifest *m, const struct manifest_net *e)
{
	for (size_t i = 0; i < m->n_net; i++)
		if (strcmp(m->net[i].host, e->host) == 0 && m->net[i].port == e->port)
			return true;
	return false;
}

static const struct manifest_tool *tool_of(const struct manifest *m, const char *name)
{
	for (size_t i = 0; i < m->n_tools; i++)
		if (strcmp(m->tools[i].name, name) == 0)
			return &m->tools[i];
	return NULL;
}

bool manifest_tool_approved(const struct manifest *approved, const struct manifest_tool *t)
{
	const struct manifest_tool *a = tool_of(approved, t->name);

	return a && strcmp(a->sha256, t->sha256) == 0;
}

static bool str_eq(const char *a, const char *b)
{
	return (!a && !b) || (a && b && strcmp(a, b) == 0);
}

size_t manifest_diff(const struct manifest *a, const struct manifest *u,
		     struct manifest_change *out, size_t max)
{
	size_t n = 0, added = 0, removed = 0;

	if (strcmp(a->artifact_sha256, u->artifact_sha256) != 0)
		CHANGE(MANIFEST_CHANGED, "artifact %s sha256 %.16s -> %s sha256 %.16s", a->artifact,
		       a->artifact_sha256, u->artifact, u->artifact_sha256);
	if (!str_eq(a->signer_issuer, u->signer_issuer) ||
	    !str_eq(a->signer_identity, u->signer_identity))
		CHANGE(MANIFEST_CHANGED, "signer %s %s -> %s %s",
		       a->signer_issuer ? a->signer_issuer : "(none)",
		       a->signer_identity ? a->signer_identity : "",
		       u->signer_issuer ? u->signer_issuer : "(none)",
		       u->signer_identity ? u->signer_identity : "");
	for (size_t i = 0; i < u->n_files; i++) {
		const struct manifest_file *f = &u->files[i], *old = file_of(a, f->path);

		if (!old)
			CHANGE(MANIFEST_WIDENS, "new file scope %s (%s)", f->path,
			       f->rw ? "rw" : "ro");
		else if (f->rw && !old->rw)
			CHANGE(MANIFEST_WIDENS, "file scope %s ro -> rw", f->path);
		else if (!f->rw && old->rw)
			CHANGE(MANIFEST_NARROWS, "file scope %s rw -> ro", f->path);
	}
	for (size_t i = 0; i < a->n_files; i++)
		if (!file_of(u, a->files[i].path))
			CHANGE(MANIFEST_NARROWS, "file scope %s removed", a->files[i].path);
	for (size_t i = 0; i < u->n_net; i++)
		if (!net_in(a, &u->net[i]))
			CHANGE(MANIFEST_WIDENS, "new endpoint %s:%u", u->net[i].host,
			       u->net[i].port);
	for (size_t i = 0; i < a->n_net; i++)
		if (!net_in(u, &a->net[i]))
			CHANGE(MANIFEST_NARROWS, "endpoint %s:%u removed", a->net[i].host,
			       a->net[i].port);
	for (size_t i = 0; i < u->n_tools; i++) {
		const struct manifest_tool *t = &u->tools[i], *old = tool_of(a, t->name);

		if (!old) {
			added++;
			CHANGE(MANIFEST_WIDENS, "new tool %s", t->name);
		} else if (strcmp(old->sha256, t->sha256) != 0) {
			CHANGE(MANIFEST_WIDENS,
			       "tool %s changed its definition%s (sha256 %.16s -> "
			       "%.16s)",
			       t->name,
			       strcmp(old->description, t->description) != 0 ? " and description"
									     : "",
			       old->sha256, t->sha256);
		}
	}
	for (size_t i = 0; i < a->n_tools; i++)
		if (!tool_of(u, a->tools[i].name)) {
			removed++;
			CHANGE(MANIFEST_NARROWS, "tool %s removed", a->tools[i].name);
		}
	/* A rename defeats pinning by name: say so (the added tool is held
	 * either way). */
	if (added && removed)
		CHANGE(MANIFEST_WIDENS, "%zu tool%s removed and %zu added: possibly renamed",
		       removed, removed == 1 ? "" : "s", added);
	return n;
}

bool manifest_widens(const struct manifest_change *c, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (c[i].kind == MANIFEST_WIDENS)
			return true;
	return false;
}
