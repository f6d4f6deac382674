/* config.json's "mounts" and "hooks" (oci.h, docs/oci.md): each mount a
 * paddock mount (or part of paddock's /dev, or narrowed), each hook kept
 * for the monitor to run. */
#include "oci_parse.h"

#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../include/cleanup.h"

/* --------------------------------------------------------------- mounts */

/* The options of one mount: each one paddock applies anyway, one it
 * narrows (a note), or refused. */
static int mount_options(struct oci_config *c, const cJSON *opts, const char *path,
			 const char *const *ok, bool *ro, char *size, size_t size_len, char *mode,
			 size_t mode_len, struct err *err)
{
	char p[PATHLEN];
	const cJSON *it;
	size_t i = 0;

	if (!opts)
		return 0;
	if (!cJSON_IsArray(opts))
		return err_set(err, EINVAL, "%s.options: must be an array of strings", path);
	cJSON_ArrayForEach(it, opts) {
		const char *s;
		size_t k;
		int r;

		oci_pathf(p, sizeof(p), "%s.options[%zu]", path, i++);
		if ((r = oci_want_string(it, p, &s, err)) < 0)
			return r;
		if (strcmp(s, "ro") == 0 && ro) {
			*ro = true;
			continue;
		}
		if (strcmp(s, "rw") == 0 && ro) {
			*ro = false;
			continue;
		}
		if (strncmp(s, "size=", 5) == 0 && size && strlen(s + 5) < size_len &&
		    strspn(s + 5, "0123456789kmgKMG") == strlen(s + 5) && s[5]) {
			snprintf(size, size_len, "%s", s + 5);
			for (char *q = size; *q; q++)
				*q = (char)(*q | 0x20);
			continue;
		}
		if (strncmp(s, "mode=", 5) == 0 && mode && strlen(s + 5) <= 4 && s[5] &&
		    strspn(s + 5, "01234567") == strlen(s + 5)) {
			snprintf(mode, mode_len, "%04lo", strtoul(s + 5, NULL, 8));
			continue;
		}
		for (k = 0; ok[k]; k++)
			if (strcmp(ok[k], s) == 0)
				break;
		if (!ok[k])
			return err_set(err, EINVAL, "%s: \"%s\" is not supported here", p, s);
		/* paddock's binds and tmpfs mounts are nosuid and nodev
		 * always; noexec it does not set on them. */
		if (strcmp(s, "noexec") == 0 && oci_note(c, "%s: noexec not applied", p) < 0)
			return oci_oom(err);
	}
	return 0;
}

static const char *const common_opts[] = {"nosuid",	 "nodev",   "noexec",	  "relatime",
					  "strictatime", "noatime", "nodiratime", "private",
					  "rprivate",	 "slave",   "rslave",	  NULL};

static cJSON *add_mount(struct oci_config *c, const char *type, const char *target)
{
	cJSON *mounts = cJSON_GetObjectItemCaseSensitive(oci_policy(c), "mounts");
	cJSON *m = cJSON_CreateObject();

	if (!m || !cJSON_AddStringToObject(m, "type", type) ||
	    !cJSON_AddStringToObject(m, "target", target) || !cJSON_AddItemToArray(mounts, m)) {
		cJSON_Delete(m);
		return NULL;
	}
	return m;
}

static int one_mount(struct oci_config *c, const cJSON *m, size_t i, bool *has_dev, struct err *err)
{
	static const char *const keys[] = {"destination", "type",	 "source", "options",
					   "uidMappings", "gidMappings", NULL};
	static const char *const proc_opts[] = {"nosuid", "nodev", "noexec", NULL};
	const char *dest, *type = "", *source = NULL;
	char path[PATHLEN], p[PATHLEN], size[32] = "", mode[8] = "";
	bool ro = false, bind = false;
	const cJSON *opts = oci_get(m, "options"), *it;
	cJSON *pm;
	int r;

	snprintf(path, sizeof(path), "mounts[%zu]", i);
	if ((r = oci_json_keys(m, path, keys, err)) < 0)
		return r;
	oci_pathf(p, sizeof(p), "%s.destination", path);
	if ((r = oci_want_string(oci_get(m, "destination"), p, &dest, err)) < 0)
		return r;
	if (dest[0] != '/' || strcmp(dest, "/") == 0)
		return err_set(err, EINVAL, "%s: must be an absolute path other than /", p);
	if (oci_get(m, "uidMappings") || oci_get(m, "gidMappings"))
		return err_set(err, EINVAL, "%s.%s: idmapped mounts are not supported", path,
			       oci_get(m, "uidMappings") ? "uidMappings" : "gidMappings");
	oci_pathf(p, sizeof(p), "%s.type", path);
	if ((it = oci_get(m, "type")) && (r = oci_want_string(it, p, &type, err)) < 0)
		return r;
	oci_pathf(p, sizeof(p), "%s.source", path);
	if ((it = oci_get(m, "source")) && (r = oci_want_string(it, p, &source, err)) < 0)
		return r;
	if (cJSON_IsArray(opts))
		cJSON_ArrayForEach(it, opts)
			if (cJSON_IsString(it) && (strcmp(it->valuestring, "bind") == 0 ||
						   strcmp(it->valuestring, "rbind") == 0))
				bind = true;
	if (bind || strcmp(type, "bind") == 0) {
		static const char *const bo[] = {
		    "bind",    "rbind",	  "nosuid",   "nodev", "noexec", "relatime", "strictatime",
		    "noatime", "private", "rprivate", "slave", "rslave", NULL};

		if (!source || source[0] != '/')
			return err_set(err, EINVAL, "%s.source: a bind needs an absolute source",
				       path);
		r = mount_options(c, opts, path, bo, &ro, NULL, 0, NULL, 0, err);
		if (r < 0)
			return r;
		if (!(pm = add_mount(c, "bind", dest)) ||
		    !cJSON_AddStringToObject(pm, "source", source) ||
		    !cJSON_AddStringToObject(pm, "mode", ro ? "ro" : "rw"))
			return oci_oom(err);
		return 0;
	}
	if (strcmp(type, "proc") == 0) {
		if ((r = mount_options(c, opts, path, proc_opts, NULL, NULL, 0, NULL, 0, err)) < 0)
			return r;
		return add_mount(c, "proc", dest) ? 0 : oci_oom(err);
	}
	if (strcmp(type, "tmpfs") == 0 && strcmp(dest, "/dev") == 0) {
		if ((r = mount_options(c, opts, path, common_opts, NULL, size, sizeof(size), mode,
				       sizeof(mode), err)) < 0)
			return r;
		/* paddock's /dev: a tmpfs with null, zero, full, random,
		 * urandom, tty, its own devpts and a /dev/shm. */
		*has_dev = true;
		if (oci_note(c,
			     "%s: paddock's minimal /dev (null zero full random urandom tty pts "
			     "shm)",
			     path) < 0)
			return oci_oom(err);
		return add_mount(c, "dev", dest) ? 0 : oci_oom(err);
	}
	if ((strcmp(type, "devpts") == 0 && strcmp(dest, "/dev/pts") == 0) ||
	    (strcmp(type, "tmpfs") == 0 && strcmp(dest, "/dev/shm") == 0)) {
		static const char *const po[] = {"nosuid",	"noexec",	 "nodev",
						 "newinstance", "ptmxmode=0666", "mode=0620",
						 "gid=5",	"mode=620",	 "ptmxmode=666",
						 "private",	"rprivate",	 NULL};

		if (!*has_dev)
			return err_set(err, EINVAL, "%s: %s only below a tmpfs /dev", path, dest);
		if ((r = mount_options(c, opts, path, po, NULL, size, sizeof(size), mode,
				       sizeof(mode), err)) < 0)
			return r;
		return oci_note(c, "%s: %s is paddock's own (part of /dev)", path, dest) < 0
			   ? oci_oom(err)
			   : 0;
	}
	if (strcmp(type, "tmpfs") == 0) {
		if ((r = mount_options(c, opts, path, common_opts, NULL, size, sizeof(size), mode,
				       sizeof(mode), err)) < 0)
			return r;
		if (!(pm = add_mount(c, "tmpfs", dest)) ||
		    (size[0] && !cJSON_AddStringToObject(pm, "size", size)) ||
		    (mode[0] && !cJSON_AddStringToObject(pm, "mode", mode)))
			return oci_oom(err);
		return 0;
	}
	if (strcmp(type, "sysfs") == 0) {
		static const char *const so[] = {"nosuid", "nodev", "noexec", "ro", NULL};

		if ((r = mount_options(c, opts, path, so, NULL, NULL, 0, NULL, 0, err)) < 0)
			return r;
		/* A user namespace may mount sysfs only with its own network
		 * namespace, and then shows the host's devices anyway: an
		 * empty directory instead. */
		if (oci_note(c, "%s: %s is an empty directory (no sysfs)", path, dest) < 0)
			return oci_oom(err);
		return add_mount(c, "dir", dest) ? 0 : oci_oom(err);
	}
	if (strcmp(type, "cgroup") == 0 || strcmp(type, "cgroup2") == 0 ||
	    strcmp(type, "mqueue") == 0) {
		static const char *const co[] = {"nosuid",   "nodev",	"noexec",   "ro",
						 "relatime", "private", "rprivate", NULL};

		if ((r = mount_options(c, opts, path, co, NULL, NULL, 0, NULL, 0, err)) < 0)
			return r;
		/* Nothing is mounted: below an empty /sys (or paddock's /dev)
		 * the path is absent. mq_open(3) works without /dev/mqueue
		 * (the ipc namespace's own mount is internal). */
		return oci_note(c, "%s: %s %s not mounted", path, type, dest) < 0 ? oci_oom(err)
										  : 0;
	}
	return err_set(err, EINVAL,
		       "%s.type: \"%s\" is not supported (known: bind, tmpfs, proc, devpts, sysfs, "
		       "cgroup, cgroup2, mqueue)",
		       path, type);
}

int oci_parse_mounts(struct oci_config *c, const cJSON *arr, struct err *err)
{
	const cJSON *it;
	bool has_dev = false;
	size_t i = 0;

	if (!cJSON_IsArray(arr))
		return err_set(err, EINVAL, "mounts: must be an array");
	cJSON_ArrayForEach(it, arr) {
		int r = one_mount(c, it, i++, &has_dev, err);

		if (r < 0)
			return r;
	}
	return 0;
}

/* ---------------------------------------------------------------- hooks */

static const char *const hook_names[OCI_HOOK_KINDS] = {"prestart", "createRuntime", "poststart",
						       "poststop"};

static int parse_hook(const cJSON *h, const char *path, struct oci_hook *out, struct err *err)
{
	static const char *const keys[] = {"path", "args", "env", "timeout", NULL};
	char p[PATHLEN];
	const cJSON *it;
	const char *s;
	int r;

	if ((r = oci_json_keys(h, path, keys, err)) < 0)
		return r;
	oci_pathf(p, sizeof(p), "%s.path", path);
	if ((r = oci_want_string(oci_get(h, "path"), p, &s, err)) < 0)
		return r;
	if (s[0] != '/')
		return err_set(err, EINVAL, "%s: must be an absolute path", p);
	if (!(out->path = strdup(s)))
		return oci_oom(err);
	oci_pathf(p, sizeof(p), "%s.args", path);
	if ((it = oci_get(h, "args")))
		r = oci_want_strings(it, p, false, &out->args, NULL, err);
	else if (!(out->args = calloc(2, sizeof(char *))) || !(out->args[0] = strdup(s)))
		r = oci_oom(err);
	if (r < 0)
		return r;
	if (!out->args[0] && (free(out->args), !(out->args = calloc(2, sizeof(char *))) ||
						   !(out->args[0] = strdup(s))))
		return oci_oom(err);
	oci_pathf(p, sizeof(p), "%s.env", path);
	if ((it = oci_get(h, "env")))
		r = oci_want_strings(it, p, false, &out->env, NULL, err);
	else if (!(out->env = calloc(1, sizeof(char *))))
		r = oci_oom(err);
	if (r < 0)
		return r;
	if ((it = oci_get(h, "timeout"))) {
		double t;

		oci_pathf(p, sizeof(p), "%s.timeout", path);
		if ((r = oci_want_int(it, p, 1, 3600, &t, err)) < 0)
			return r;
		out->timeout_s = (int)t;
	}
	return 0;
}

int oci_parse_hooks(struct oci_config *c, const cJSON *hooks, struct err *err)
{
	static const char *const keys[] = {"prestart", "createRuntime",	  "poststart",
					   "poststop", "createContainer", "startContainer",
					   NULL};
	int r = oci_json_keys(hooks, "hooks", keys, err);

	if (r < 0)
		return r;
	/* These two run inside the container's namespaces, between the
	 * mounts and pivot_root: paddock's child takes no detour there. */
	for (size_t k = 0; k < 2; k++) {
		const char *name = k ? "startContainer" : "createContainer";
		const cJSON *it = oci_get(hooks, name);

		if (it && (!cJSON_IsArray(it) || cJSON_GetArraySize(it) > 0))
			return err_set(err, EINVAL, "hooks.%s: not supported by paddock oci", name);
	}
	for (size_t k = 0; k < OCI_HOOK_KINDS; k++) {
		const cJSON *arr = oci_get(hooks, hook_names[k]), *it;
		size_t n, i = 0;

		if (!arr)
			continue;
		if (!cJSON_IsArray(arr))
			return err_set(err, EINVAL, "hooks.%s: must be an array", hook_names[k]);
		n = (size_t)cJSON_GetArraySize(arr);
		c->hooks[k] = calloc(n ? n : 1, sizeof(struct oci_hook));
		if (!c->hooks[k])
			return oci_oom(err);
		cJSON_ArrayForEach(it, arr) {
			char p[PATHLEN];

			oci_pathf(p, sizeof(p), "hooks.%s[%zu]", hook_names[k], i);
			r = parse_hook(it, p, &c->hooks[k][i], err);
			c->n_hooks[k] = ++i;
			if (r < 0)
				return r;
		}
	}
	return 0;
}
