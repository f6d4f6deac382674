/* Completion records read back (eval.h struct record_view; the pure check
 * is grading.c's record_check()). Fields by their documented names
 * (docs/record.md); a field missing stays at its "unknown" value, so a
 * record of another version is read defensively, never guessed. */
#include "harness.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "../observers/observe.h"

static const char *str(const cJSON *o, const char *k)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, k);

	return cJSON_IsString(v) ? v->valuestring : NULL;
}

int record_read(const char *path, struct record_view *out)
{
	static __thread char buf[1 << 17];
	const cJSON *w, *e, *m, *ns, *sv, *pol;
	cJSON *root;
	int k;

	memset(out, 0, sizeof(*out));
	out->survivors = -1;
	snprintf(out->path, sizeof(out->path), "%s", path);
	k = read_file(path, buf, sizeof(buf));
	if (k < 0)
		return k;
	if (observe_sha256(path, out->sha256) < 0)
		out->sha256[0] = '\0';
	root = cJSON_ParseWithLength(buf, (size_t)k);
	if (!root)
		return -EINVAL;
	out->read = true;
	w = cJSON_GetObjectItemCaseSensitive(root, "weakenings");
	cJSON_ArrayForEach(e, w) {
		size_t len = strlen(out->weakenings);

		if (cJSON_IsString(e))
			snprintf(out->weakenings + len, sizeof(out->weakenings) - len, "%s%s",
				 len ? "," : "", e->valuestring);
	}
	pol = cJSON_GetObjectItemCaseSensitive(root, "policy");
	snprintf(out->effective_sha256, sizeof(out->effective_sha256), "%s",
		 str(pol, "effective_sha256") ? str(pol, "effective_sha256") : "");
	snprintf(out->policy_path, sizeof(out->policy_path), "%s",
		 str(pol, "path") ? str(pol, "path") : "");
	ns = cJSON_GetObjectItemCaseSensitive(root, "namespaces");
	cJSON_ArrayForEach(e, ns) {
		if (cJSON_IsString(e) && strcmp(e->valuestring, "pid") == 0)
			out->pidns = true;
	}
	sv = cJSON_GetObjectItemCaseSensitive(root, "survivors");
	if (cJSON_IsArray(sv))
		out->survivors = cJSON_GetArraySize(sv);
	out->mounts_reported =
	    cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(root, "mounts_reported"));
	m = cJSON_GetObjectItemCaseSensitive(root, "mounts");
	cJSON_ArrayForEach(e, m) {
		const char *st = str(e, "state");

		out->mounts++;
		if (!st ||
		    (strcmp(st, "applied") && strcmp(st, "skipped") && strcmp(st, "symlink")))
			out->mounts_bad++;
	}
	cJSON_Delete(root);
	return 0;
}
