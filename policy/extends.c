/* "extends": a policy built on a base (docs/policy.md, "Policies that
 * compose"). The base is fetched by the caller (a file, a profile on the
 * search path, a built-in), its own "extends" resolved first, and the
 * policy merged onto it, key by key:
 *
 *   - an object (environment, environment.set, limits, limits.rlimits,
 *     network, seccomp, landlock) is merged recursively;
 *   - the lists that add (mounts, protect, environment.keep, services,
 *     ports, network.allow, network.resolve, seccomp.allow, seccomp.deny)
 *     are the base's followed by the policy's;
 *   - anything else (a string, number, bool, another list, null) replaces
 *     the base's.
 *
 * The result is one JSON document, so the effective policy's digest covers
 * the base too. Without "extends" the text is returned byte for byte. */
#include "policy.h"

#include <cjson/cJSON.h>
#include <stdlib.h>
#include <string.h>

#include "../include/cleanup.h"

#define EXTENDS_DEPTH_MAX 8

/* The dotted path of a list that adds. */
static bool appends(const char *path)
{
	static const char *const lists[] = {
	    "mounts",	     "protect",		"environment.keep", "services",	    "ports",
	    "network.allow", "network.resolve", "seccomp.allow",    "seccomp.deny",
	};

	for (size_t i = 0; i < sizeof(lists) / sizeof(lists[0]); i++)
		if (strcmp(path, lists[i]) == 0)
			return true;
	return false;
}

static int merge(cJSON *base, const cJSON *over, const char *prefix, struct err *err)
{
	const cJSON *it;

	cJSON_ArrayForEach(it, over) {
		char path[256];
		cJSON *mine = cJSON_GetObjectItemCaseSensitive(base, it->string), *copy;

		snprintf(path, sizeof(path), "%s%s%s", prefix, *prefix ? "." : "", it->string);
		if (mine && cJSON_IsObject(mine) && cJSON_IsObject(it)) {
			int rc = merge(mine, it, path, err);

			if (rc < 0)
				return rc;
			continue;
		}
		if (mine && cJSON_IsArray(mine) && cJSON_IsArray(it) && appends(path)) {
			const cJSON *e;

			cJSON_ArrayForEach(e, it) {
				copy = cJSON_Duplicate(e, true);
				if (!copy || !cJSON_AddItemToArray(mine, copy)) {
					cJSON_Delete(copy);
					return err_set(err, ENOMEM, "out of memory");
				}
			}
			continue;
		}
		/* "network": "none" over an object, or the other way: the
		 * policy's form wins whole. */
		copy = cJSON_Duplicate(it, true);
		if (!copy)
			return err_set(err, ENOMEM, "out of memory");
		if (mine)
			cJSON_ReplaceItemViaPointer(base, mine, copy);
		else
			cJSON_AddItemToObject(base, it->string, copy);
	}
	return 0;
}

int policy_merge(cJSON *base, const cJSON *over, struct err *err)
{
	return merge(base, over, "", err);
}

/* The policy text as a tree, its "extends" resolved: into *out. */
static int resolve(const char *text, size_t len, const char *label, policy_fetch_fn fetch,
		   void *arg, const char **chain, size_t depth, cJSON **out, struct err *err)
{
	cJSON *doc = cJSON_ParseWithLength(text, len), *ext, *base = NULL;
	cleanup_free char *btext = NULL;
	char blabel[512];
	size_t blen = 0;
	int rc;

	if (!doc)
		return err_set(err, EINVAL, "%s: not valid JSON", label);
	if (!cJSON_IsObject(doc)) {
		cJSON_Delete(doc);
		return err_set(err, EINVAL, "%s: the policy must be a JSON object", label);
	}
	ext = cJSON_DetachItemFromObjectCaseSensitive(doc, "extends");
	if (!ext) {
		*out = doc;
		return 0;
	}
	if (!cJSON_IsString(ext) || !ext->valuestring[0]) {
		rc = err_set(err, EINVAL, "%s: extends: must be a profile name or a file", label);
		goto fail;
	}
	if (depth >= EXTENDS_DEPTH_MAX) {
		rc = err_set(err, ELOOP, "%s: extends: more than %d levels", label,
			     EXTENDS_DEPTH_MAX);
		goto fail;
	}
	for (size_t i = 0; i < depth; i++)
		if (strcmp(chain[i], ext->valuestring) == 0) {
			rc =
			    err_set(err, ELOOP, "%s: extends %s: a cycle", label, ext->valuestring);
			goto fail;
		}
	rc = fetch(arg, ext->valuestring, label, &btext, &blen, blabel, sizeof(blabel), err);
	if (rc < 0)
		goto fail;
	chain[depth] = ext->valuestring;
	rc = resolve(btext, blen, blabel, fetch, arg, chain, depth + 1, &base, err);
	if (rc < 0)
		goto fail;
	if (cJSON_GetObjectItemCaseSensitive(base, "version") &&
	    cJSON_GetObjectItemCaseSensitive(doc, "version") &&
	    !cJSON_Compare(cJSON_GetObjectItemCaseSensitive(base, "version"),
			   cJSON_GetObjectItemCaseSensitive(doc, "version"), true)) {
		rc = err_set(err, EINVAL, "%s: extends %s: another policy version", label,
			     ext->valuestring);
		goto fail;
	}
	rc = policy_merge(base, doc, err);
	if (rc < 0)
		goto fail;
	cJSON_Delete(doc);
	cJSON_Delete(ext);
	*out = base;
	return 0;
fail:
	cJSON_Delete(base);
	cJSON_Delete(doc);
	cJSON_Delete(ext);
	return rc;
}

static int copy_text(const char *text, size_t len, char **out, size_t *out_len, struct err *err)
{
	*out = malloc(len + 1);
	if (!*out)
		return err_set(err, ENOMEM, "out of memory");
	memcpy(*out, text, len);
	(*out)[len] = '\0';
	*out_len = len;
	return 0;
}

int policy_extends_resolve(const char *text, size_t len, const char *label, policy_fetch_fn fetch,
			   void *arg, char **out, size_t *out_len, struct err *err)
{
	const char *chain[EXTENDS_DEPTH_MAX];
	cJSON *doc = NULL, *probe;
	char *printed;
	int rc;

	if (len > POLICY_MAX_BYTES)
		return err_set(err, E2BIG, "%s: larger than %u bytes", label, POLICY_MAX_BYTES);
	/* No "extends" at the top: the text as it is (its digest unchanged);
	 * the loader then says what is wrong with it, if anything. A text
	 * without the word is not parsed here at all: every run reads its
	 * policy through this, and the loader parses it once more anyway. */
	if (!memmem(text, len, "\"extends\"", 9))
		return copy_text(text, len, out, out_len, err);
	probe = cJSON_ParseWithLength(text, len);
	if (!probe || !cJSON_IsObject(probe) ||
	    !cJSON_GetObjectItemCaseSensitive(probe, "extends")) {
		cJSON_Delete(probe);
		return copy_text(text, len, out, out_len, err);
	}
	cJSON_Delete(probe);
	rc = resolve(text, len, label, fetch, arg, chain, 0, &doc, err);
	if (rc < 0)
		return rc;
	printed = cJSON_Print(doc);
	cJSON_Delete(doc);
	if (!printed)
		return err_set(err, ENOMEM, "out of memory");
	*out_len = strlen(printed);
	if (*out_len > POLICY_MAX_BYTES) {
		free(printed);
		return err_set(err, E2BIG, "%s: with its bases, larger than %u bytes", label,
			       POLICY_MAX_BYTES);
	}
	*out = printed;
	return 0;
}
