/* Walk "mounts": one object per mount, its keys depending on its "type". */
#include "parse.h"

#include <stdlib.h>
#include <string.h>

#include "json.h"

static const cJSON *member(const cJSON *obj, const char *key)
{
	return cJSON_GetObjectItemCaseSensitive(obj, key);
}

/* "0755" or "755": permission bits as 3 or 4 octal digits (so <= 07777). */
static int parse_mode(const cJSON *it, const char *path, unsigned *out, struct err *err)
{
	const char *s;
	size_t len;
	int r;

	r = policy_json_string(it, path, &s, err);
	if (r < 0)
		return r;
	len = strlen(s);
	if ((len != 3 && len != 4) || strspn(s, "01234567") != len)
		return err_set(err, EINVAL,
			       "%s: invalid mode %s (use 3 or 4 octal digits, e.g. \"0755\")", path,
			       QUOTE(s));
	*out = (unsigned)strtoul(s, NULL, 8);
	return 0;
}

int policy_size_error(int r, const char *path, const char *s, const char *hint, struct err *err)
{
	if (r == -ERANGE)
		return err_set(err, EINVAL, "%s: size %s is too large", path, QUOTE(s));
	return err_set(err, EINVAL, "%s: invalid size %s (use e.g. 4096, 64k, 512m, 2g%s)", path,
		       QUOTE(s), hint);
}

/* tmpfs "size": bytes as an integer or a size string, greater than 0. */
static int parse_tmpfs_size(const cJSON *it, const char *path, uint64_t *out, struct err *err)
{
	int r;

	if (cJSON_IsString(it)) {
		r = policy_parse_size(it->valuestring, out);
		if (r < 0)
			return policy_size_error(r, path, it->valuestring, "", err);
	} else if (cJSON_IsNumber(it)) {
		r = policy_json_uint(it, path, JSON_MAX_EXACT, out, err);
		if (r < 0)
			return r;
	} else {
		return err_set(err, EINVAL,
			       "%s: must be an integer or a size string such as \"64m\"", path);
	}
	if (*out == 0)
		return err_set(err, EINVAL, "%s: must be greater than 0", path);
	return 0;
}

static int parse_choice(const cJSON *it, const char *path, const char *no, const char *yes,
			bool *out, struct err *err)
{
	const char *s;
	int r;

	r = policy_json_string(it, path, &s, err);
	if (r < 0)
		return r;
	if (strcmp(s, no) && strcmp(s, yes))
		return err_set(err, EINVAL, "%s: must be \"%s\" or \"%s\"", path, no, yes);
	*out = strcmp(s, yes) == 0;
	return 0;
}

static const char *const mount_keys[] = {"type",    "source", "target", "mode", "optional",
					 "symlink", "size",   "link",	NULL};

static const char *const *type_keys(enum policy_mount_type t)
{
	static const char *const bind[] = {"type",     "source",  "target", "mode",
					   "optional", "symlink", NULL};
	static const char *const tmpfs[] = {"type", "target", "size", "mode", NULL};
	static const char *const plain[] = {"type", "target", NULL};
	static const char *const dir[] = {"type", "target", "mode", NULL};
	static const char *const symlink[] = {"type", "target", "link", NULL};

	switch (t) {
	case POLICY_MOUNT_BIND:
		return bind;
	case POLICY_MOUNT_TMPFS:
		return tmpfs;
	case POLICY_MOUNT_DIR:
		return dir;
	case POLICY_MOUNT_SYMLINK:
		return symlink;
	case POLICY_MOUNT_PROC:
	case POLICY_MOUNT_DEV:
		break;
	}
	return plain;
}

static int mount_type(const cJSON *obj, const char *path, enum policy_mount_type *out,
		      struct err *err)
{
	const cJSON *it = member(obj, "type");
	char tpath[JPATH_MAX];
	const char *s;
	int r;

	if (!it)
		return err_set(err, EINVAL, "%s: missing key \"type\"", path);
	snprintf(tpath, sizeof(tpath), "%s.type", path);
	r = policy_json_string(it, tpath, &s, err);
	if (r < 0)
		return r;
	for (int t = POLICY_MOUNT_BIND; t <= POLICY_MOUNT_SYMLINK; t++) {
		if (strcmp(s, policy_mount_type_name(t)) == 0) {
			*out = t;
			return 0;
		}
	}
	return err_set(err, EINVAL, "%s: unknown mount type %s", tpath, QUOTE(s));
}

/* Read key of obj as a string into *dst when present; a missing key is an
 * error when required. */
static int mount_str(const cJSON *obj, const char *path, const char *key, bool required, char **dst,
		     struct err *err)
{
	char kpath[JPATH_MAX];

	if (!member(obj, key)) {
		if (required)
			return err_set(err, EINVAL, "%s: missing key \"%s\"", path, key);
		return 0;
	}
	snprintf(kpath, sizeof(kpath), "%s.%s", path, key);
	return policy_json_strdup(member(obj, key), kpath, dst, err);
}

static int parse_bind(const cJSON *obj, const char *path, struct policy_mount *m, struct err *err)
{
	char kpath[JPATH_MAX];
	const cJSON *it;
	bool rw = false;
	int r;

	m->readonly = true;
	r = mount_str(obj, path, "source", true, &m->source, err);
	if (r >= 0 && (it = member(obj, "mode"))) {
		snprintf(kpath, sizeof(kpath), "%s.mode", path);
		r = parse_choice(it, kpath, "ro", "rw", &rw, err);
		m->readonly = !rw;
	}
	if (r >= 0 && (it = member(obj, "optional"))) {
		snprintf(kpath, sizeof(kpath), "%s.optional", path);
		r = policy_json_bool(it, kpath, &m->optional, err);
	}
	if (r >= 0 && (it = member(obj, "symlink"))) {
		const char *s;

		snprintf(kpath, sizeof(kpath), "%s.symlink", path);
		r = policy_json_string(it, kpath, &s, err);
		if (r >= 0 && strcmp(s, "copy") && strcmp(s, "follow") && strcmp(s, "error"))
			r = err_set(err, EINVAL, "%s: must be \"error\", \"copy\" or \"follow\"",
				    kpath);
		if (r >= 0) {
			m->copy_symlink = strcmp(s, "copy") == 0;
			m->follow_symlink = strcmp(s, "follow") == 0;
		}
	}
	return r < 0 ? r : 0;
}

static int parse_link(const cJSON *obj, const char *path, struct policy_mount *m, struct err *err)
{
	size_t len;
	int r;

	r = mount_str(obj, path, "link", true, &m->link, err);
	if (r < 0)
		return r;
	/* The link text is not a sandbox path: relative links are fine and
	 * it is stored as written, but symlink(2) refuses "" and PATH_MAX. */
	len = strlen(m->link);
	if (len == 0)
		return err_set(err, EINVAL, "%s.link: must not be empty", path);
	if (len >= 4096)
		return err_set(err, EINVAL, "%s.link: is longer than 4095 bytes", path);
	return 0;
}

static int parse_mount(const cJSON *obj, struct policy_mount *m, struct err *err)
{
	char path[40], kpath[JPATH_MAX], suffix[32]; /* path: "mounts[<size_t>]" */
	const cJSON *it;
	int r;

	snprintf(path, sizeof(path), "mounts[%zu]", m->index);
	r = policy_json_object(obj, path, err);
	if (r >= 0)
		r = policy_json_check_keys(obj, mount_keys, path, NULL, err);
	if (r >= 0)
		r = mount_type(obj, path, &m->type, err);
	if (r < 0)
		return r;
	snprintf(suffix, sizeof(suffix), " for a %s mount", policy_mount_type_name(m->type));
	r = policy_json_check_keys(obj, type_keys(m->type), path, suffix, err);
	if (r >= 0 && m->type == POLICY_MOUNT_BIND)
		r = parse_bind(obj, path, m, err);
	/* A bind's target defaults to its source; validate.c fills it in. */
	if (r >= 0)
		r = mount_str(obj, path, "target", m->type != POLICY_MOUNT_BIND, &m->target, err);
	if (r >= 0 && m->type == POLICY_MOUNT_SYMLINK)
		r = parse_link(obj, path, m, err);
	if (m->type == POLICY_MOUNT_TMPFS || m->type == POLICY_MOUNT_DIR)
		m->mode = 0755;
	if (r >= 0 && (it = member(obj, "mode")) && m->type != POLICY_MOUNT_BIND) {
		snprintf(kpath, sizeof(kpath), "%s.mode", path);
		r = parse_mode(it, kpath, &m->mode, err);
	}
	if (r >= 0 && (it = member(obj, "size"))) {
		snprintf(kpath, sizeof(kpath), "%s.size", path);
		r = parse_tmpfs_size(it, kpath, &m->size, err);
	}
	return r < 0 ? r : 0;
}

int policy_parse_mounts(const cJSON *arr, struct policy *p, struct err *err)
{
	const cJSON *it;
	size_t n;
	int r;

	r = policy_json_array(arr, "mounts", err);
	if (r < 0)
		return r;
	n = (size_t)cJSON_GetArraySize(arr);
	p->mounts = calloc(n ? n : 1, sizeof(*p->mounts));
	if (!p->mounts)
		return err_set(err, ENOMEM, "out of memory");
	cJSON_ArrayForEach(it, arr) {
		struct policy_mount *m = &p->mounts[p->n_mounts];

		/* Counted before parsing so that policy_free() sees every string. */
		m->index = p->n_mounts++;
		r = parse_mount(it, m, err);
		if (r < 0)
			return r;
	}
	return 0;
}
