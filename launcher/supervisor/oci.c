/* config.json of an OCI bundle into a paddock policy (oci.h, docs/oci.md).
 *
 * The walk is strict the way policy/parse.c is: case-sensitive lookups,
 * every member of every object checked against the keys known for it, the
 * type checked before the value is read, integers whole and in range. A
 * key paddock cannot honour is refused by its JSON path; a key it honours
 * with less than was asked (no capabilities, a minimal /dev) adds a note,
 * which the state's annotations and the record carry. */
#include "oci.h"

#include <cjson/cJSON.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../include/cleanup.h"

#define PATHLEN 192

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

static int oom(struct err *err)
{
	return err_set(err, ENOMEM, "out of memory");
}

__attribute__((format(printf, 2, 3))) static int note(struct oci_config *c, const char *fmt, ...)
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

static const cJSON *get(const cJSON *obj, const char *key)
{
	return cJSON_GetObjectItemCaseSensitive(obj, key);
}

static int want_string(const cJSON *it, const char *path, const char **out, struct err *err)
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

static int want_bool(const cJSON *it, const char *path, bool *out, struct err *err)
{
	if (!cJSON_IsBool(it))
		return err_set(err, EINVAL, "%s: must be true or false", path);
	*out = cJSON_IsTrue(it);
	return 0;
}

static int want_int(const cJSON *it, const char *path, double lo, double hi, double *out,
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
static int want_strings(const cJSON *arr, const char *path, bool nonempty, char ***out, size_t *n,
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
		return oom(err);
	cJSON_ArrayForEach(it, arr) {
		const char *s;
		int r;

		oci_pathf(p, sizeof(p), "%s[%zu]", path, i);
		r = want_string(it, p, &s, err);
		if (r == 0 && !(v[i] = strdup(s)))
			r = oom(err);
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

static void strv_free(char **v)
{
	if (!v)
		return;
	for (size_t i = 0; v[i]; i++)
		free(v[i]);
	free(v);
}

static cJSON *policy(struct oci_config *c)
{
	return c->policy;
}

/* ------------------------------------------------------------- process */

static const char *const rlimit_names[][2] = {
    {"RLIMIT_NPROC", "nproc"}, {"RLIMIT_NOFILE", "nofile"}, {"RLIMIT_FSIZE", "fsize"},
    {"RLIMIT_AS", "as"},       {"RLIMIT_CORE", "core"},
};

static int parse_rlimits(struct oci_config *c, const cJSON *arr, cJSON *limits, struct err *err)
{
	static const char *const keys[] = {"type", "soft", "hard", NULL};
	cJSON *rl = cJSON_AddObjectToObject(limits, "rlimits");
	char p[PATHLEN];
	const cJSON *it;
	size_t i = 0;
	int r;

	if (!rl)
		return oom(err);
	if (!cJSON_IsArray(arr))
		return err_set(err, EINVAL, "process.rlimits: must be an array");
	cJSON_ArrayForEach(it, arr) {
		const char *type = NULL, *name = NULL;
		double soft, hard;

		oci_pathf(p, sizeof(p), "process.rlimits[%zu]", i);
		r = oci_json_keys(it, p, keys, err);
		if (r < 0)
			return r;
		oci_pathf(p, sizeof(p), "process.rlimits[%zu].type", i);
		r = want_string(get(it, "type"), p, &type, err);
		if (r < 0)
			return r;
		for (size_t k = 0; k < sizeof(rlimit_names) / sizeof(rlimit_names[0]); k++)
			if (strcmp(type, rlimit_names[k][0]) == 0)
				name = rlimit_names[k][1];
		if (!name)
			return err_set(err, EINVAL,
				       "%s: \"%s\" is not supported (known: RLIMIT_NPROC, "
				       "RLIMIT_NOFILE, RLIMIT_FSIZE, RLIMIT_AS, RLIMIT_CORE)",
				       p, type);
		if (get(rl, name))
			return err_set(err, EINVAL, "%s: \"%s\" given twice", p, type);
		oci_pathf(p, sizeof(p), "process.rlimits[%zu].soft", i);
		r = want_int(get(it, "soft"), p, 0, 9007199254740991.0, &soft, err);
		oci_pathf(p, sizeof(p), "process.rlimits[%zu].hard", i);
		if (r == 0)
			r = want_int(get(it, "hard"), p, 0, 9007199254740991.0, &hard, err);
		if (r < 0)
			return r;
		if (soft > hard)
			return err_set(err, EINVAL, "process.rlimits[%zu]: soft above hard", i);
		/* paddock sets one value as both limits: the soft one, so the
		 * workload never gets more than it was to start with. */
		if (soft != hard &&
		    note(c, "process.rlimits[%zu]: %s soft and hard both %.0f", i, type, soft) < 0)
			return oom(err);
		if (!cJSON_AddNumberToObject(rl, name, soft))
			return oom(err);
		i++;
	}
	return 0;
}

static int parse_env(const cJSON *arr, cJSON *set, struct err *err)
{
	char p[PATHLEN];
	const cJSON *it;
	size_t i = 0;

	if (!cJSON_IsArray(arr))
		return err_set(err, EINVAL, "process.env: must be an array of strings");
	cJSON_ArrayForEach(it, arr) {
		const char *s, *eq;
		char name[256];
		int r;

		oci_pathf(p, sizeof(p), "process.env[%zu]", i++);
		r = want_string(it, p, &s, err);
		if (r < 0)
			return r;
		eq = strchr(s, '=');
		if (!eq || eq == s || (size_t)(eq - s) >= sizeof(name))
			return err_set(err, EINVAL, "%s: must be NAME=VALUE", p);
		memcpy(name, s, (size_t)(eq - s));
		name[eq - s] = '\0';
		for (const char *q = name; *q; q++)
			if (!(*q == '_' || (*q >= 'A' && *q <= 'Z') || (*q >= 'a' && *q <= 'z') ||
			      (q > name && *q >= '0' && *q <= '9')))
				return err_set(err, EINVAL,
					       "%s: \"%s\" is not a variable name paddock "
					       "accepts ([A-Za-z_][A-Za-z0-9_]*)",
					       p, name);
		/* The last one wins, as execve(2) readers (getenv) see the first:
		 * a name given twice is refused instead of guessed. */
		if (get(set, name))
			return err_set(err, EINVAL, "%s: %s is set twice", p, name);
		if (!cJSON_AddStringToObject(set, name, eq + 1))
			return oom(err);
	}
	return 0;
}

static int parse_user(struct oci_config *c, const cJSON *u, struct err *err)
{
	static const char *const keys[] = {"uid",   "gid",	"additionalGids",
					   "umask", "username", NULL};
	cJSON *user = cJSON_AddObjectToObject(policy(c), "user");
	double uid, gid;
	const cJSON *it;
	int r;

	if (!user)
		return oom(err);
	r = oci_json_keys(u, "process.user", keys, err);
	if (r == 0)
		r = want_int(get(u, "uid"), "process.user.uid", 0, 4294967294.0, &uid, err);
	if (r == 0)
		r = want_int(get(u, "gid"), "process.user.gid", 0, 4294967294.0, &gid, err);
	if (r < 0)
		return r;
	if ((it = get(u, "umask"))) {
		double m;

		if ((r = want_int(it, "process.user.umask", 0, 0777, &m, err)) < 0)
			return r;
		c->has_umask = true;
		c->umask = (unsigned)m;
	}
	if (get(u, "username"))
		return err_set(err, EINVAL, "process.user.username: not supported (Windows only)");
	if (!cJSON_AddNumberToObject(user, "uid", uid) ||
	    !cJSON_AddNumberToObject(user, "gid", gid))
		return oom(err);
	it = get(u, "additionalGids");
	if (it) {
		const cJSON *g;
		size_t i = 0;

		if (!cJSON_IsArray(it))
			return err_set(err, EINVAL,
				       "process.user.additionalGids: must be an array");
		cJSON_ArrayForEach(g, it) {
			char p[PATHLEN];
			double v;

			oci_pathf(p, sizeof(p), "process.user.additionalGids[%zu]", i++);
			r = want_int(g, p, 0, 4294967294.0, &v, err);
			if (r < 0)
				return r;
			/* One gid is mapped in paddock's user namespace, and
			 * setgroups(2) is denied there. */
			if (v != gid && note(c,
					     "%s: %.0f not a supplementary group (one gid is "
					     "mapped)",
					     p, v) < 0)
				return oom(err);
		}
	}
	return 0;
}

static int parse_process(struct oci_config *c, const cJSON *pr, struct err *err)
{
	static const char *const keys[] = {"terminal",
					   "consoleSize",
					   "user",
					   "args",
					   "commandLine",
					   "env",
					   "cwd",
					   "capabilities",
					   "rlimits",
					   "noNewPrivileges",
					   "apparmorProfile",
					   "oomScoreAdj",
					   "selinuxLabel",
					   "ioPriority",
					   "scheduler",
					   "execCPUAffinity",
					   NULL};
	cJSON *env, *limits;
	const cJSON *it;
	const char *cwd;
	int r;

	r = oci_json_keys(pr, "process", keys, err);
	if (r < 0)
		return r;
	if ((it = get(pr, "terminal")) &&
	    (r = want_bool(it, "process.terminal", &c->terminal, err)))
		return r;
	if ((it = get(pr, "consoleSize"))) {
		static const char *const ck[] = {"height", "width", NULL};
		double h, w;

		if (!c->terminal)
			return err_set(err, EINVAL,
				       "process.consoleSize: only with \"terminal\": true");
		if ((r = oci_json_keys(it, "process.consoleSize", ck, err)) < 0 ||
		    (r = want_int(get(it, "height"), "process.consoleSize.height", 0, 65535, &h,
				  err)) < 0 ||
		    (r = want_int(get(it, "width"), "process.consoleSize.width", 0, 65535, &w,
				  err)) < 0)
			return r;
		c->rows = (unsigned)h;
		c->cols = (unsigned)w;
	}
	if (!get(pr, "user"))
		return err_set(err, EINVAL, "process.user: required");
	r = parse_user(c, get(pr, "user"), err);
	if (r < 0)
		return r;
	if (get(pr, "commandLine"))
		return err_set(err, EINVAL, "process.commandLine: not supported (Windows only)");
	if (!get(pr, "args"))
		return err_set(err, EINVAL, "process.args: required");
	r = want_strings(get(pr, "args"), "process.args", true, &c->argv, &c->argc, err);
	if (r < 0)
		return r;
	if (!c->argv[0][0])
		return err_set(err, EINVAL, "process.args[0]: must not be empty");
	if (want_string(get(pr, "cwd"), "process.cwd", &cwd, err) < 0)
		return -EINVAL;
	if (cwd[0] != '/')
		return err_set(err, EINVAL, "process.cwd: must be an absolute path");
	if (!cJSON_AddStringToObject(policy(c), "cwd", cwd))
		return oom(err);
	env = cJSON_AddObjectToObject(policy(c), "environment");
	if (!env || !cJSON_AddBoolToObject(env, "clear", true))
		return oom(err);
	if (!(env = cJSON_AddObjectToObject(env, "set")))
		return oom(err);
	if ((it = get(pr, "env")) && (r = parse_env(it, env, err)) < 0)
		return r;
	/* paddock's workload has no capability at all, in any set: less than
	 * any list asks for. */
	if ((it = get(pr, "capabilities"))) {
		static const char *const ck[] = {"bounding",  "effective", "inheritable",
						 "permitted", "ambient",   NULL};
		size_t most = 0;

		r = oci_json_keys(it, "process.capabilities", ck, err);
		if (r < 0)
			return r;
		for (size_t k = 0; ck[k]; k++) {
			char p[PATHLEN], **v = NULL;
			size_t n = 0;

			if (!get(it, ck[k]))
				continue;
			oci_pathf(p, sizeof(p), "process.capabilities.%s", ck[k]);
			r = want_strings(get(it, ck[k]), p, false, &v, &n, err);
			strv_free(v);
			if (r < 0)
				return r;
			most = n > most ? n : most;
		}
		if (most && note(c, "process.capabilities: none (%zu asked)", most) < 0)
			return oom(err);
	}
	if ((it = get(pr, "noNewPrivileges"))) {
		bool nnp = true;

		if ((r = want_bool(it, "process.noNewPrivileges", &nnp, err)) < 0)
			return r;
		if (!nnp && note(c, "process.noNewPrivileges: true (paddock always sets it)") < 0)
			return oom(err);
	}
	limits = cJSON_AddObjectToObject(policy(c), "limits");
	if (!limits)
		return oom(err);
	if ((it = get(pr, "rlimits")) && (r = parse_rlimits(c, it, limits, err)) < 0)
		return r;
	if ((it = get(pr, "oomScoreAdj"))) {
		double v;

		if ((r = want_int(it, "process.oomScoreAdj", -1000, 1000, &v, err)) < 0)
			return r;
		c->has_oom = v != 0;
		c->oom_score_adj = (int)v;
	}
	for (size_t k = 0; k < 2; k++) {
		const char *key = k ? "selinuxLabel" : "apparmorProfile";
		const char *s;

		if (!(it = get(pr, key)))
			continue;
		if ((r = want_string(it, key, &s, err)) < 0)
			return r;
		if (s[0])
			return err_set(err, EINVAL, "process.%s: not supported by paddock oci",
				       key);
	}
	for (const char *const *k =
		 (const char *const[]){"ioPriority", "scheduler", "execCPUAffinity", NULL};
	     *k; k++)
		if (get(pr, *k))
			return err_set(err, EINVAL, "process.%s: not supported by paddock oci", *k);
	return 0;
}

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
		if ((r = want_string(it, p, &s, err)) < 0)
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
		if (strcmp(s, "noexec") == 0 && note(c, "%s: noexec not applied", p) < 0)
			return oom(err);
	}
	return 0;
}

static const char *const common_opts[] = {"nosuid",	 "nodev",   "noexec",	  "relatime",
					  "strictatime", "noatime", "nodiratime", "private",
					  "rprivate",	 "slave",   "rslave",	  NULL};

static cJSON *add_mount(struct oci_config *c, const char *type, const char *target)
{
	cJSON *mounts = cJSON_GetObjectItemCaseSensitive(policy(c), "mounts");
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
	const cJSON *opts = get(m, "options"), *it;
	cJSON *pm;
	int r;

	snprintf(path, sizeof(path), "mounts[%zu]", i);
	if ((r = oci_json_keys(m, path, keys, err)) < 0)
		return r;
	oci_pathf(p, sizeof(p), "%s.destination", path);
	if ((r = want_string(get(m, "destination"), p, &dest, err)) < 0)
		return r;
	if (dest[0] != '/' || strcmp(dest, "/") == 0)
		return err_set(err, EINVAL, "%s: must be an absolute path other than /", p);
	if (get(m, "uidMappings") || get(m, "gidMappings"))
		return err_set(err, EINVAL, "%s.%s: idmapped mounts are not supported", path,
			       get(m, "uidMappings") ? "uidMappings" : "gidMappings");
	oci_pathf(p, sizeof(p), "%s.type", path);
	if ((it = get(m, "type")) && (r = want_string(it, p, &type, err)) < 0)
		return r;
	oci_pathf(p, sizeof(p), "%s.source", path);
	if ((it = get(m, "source")) && (r = want_string(it, p, &source, err)) < 0)
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
			return oom(err);
		return 0;
	}
	if (strcmp(type, "proc") == 0) {
		if ((r = mount_options(c, opts, path, proc_opts, NULL, NULL, 0, NULL, 0, err)) < 0)
			return r;
		return add_mount(c, "proc", dest) ? 0 : oom(err);
	}
	if (strcmp(type, "tmpfs") == 0 && strcmp(dest, "/dev") == 0) {
		if ((r = mount_options(c, opts, path, common_opts, NULL, size, sizeof(size), mode,
				       sizeof(mode), err)) < 0)
			return r;
		/* paddock's /dev: a tmpfs with null, zero, full, random,
		 * urandom, tty, its own devpts and a /dev/shm. */
		*has_dev = true;
		if (note(c,
			 "%s: paddock's minimal /dev (null zero full random urandom tty pts "
			 "shm)",
			 path) < 0)
			return oom(err);
		return add_mount(c, "dev", dest) ? 0 : oom(err);
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
		return note(c, "%s: %s is paddock's own (part of /dev)", path, dest) < 0 ? oom(err)
											 : 0;
	}
	if (strcmp(type, "tmpfs") == 0) {
		if ((r = mount_options(c, opts, path, common_opts, NULL, size, sizeof(size), mode,
				       sizeof(mode), err)) < 0)
			return r;
		if (!(pm = add_mount(c, "tmpfs", dest)) ||
		    (size[0] && !cJSON_AddStringToObject(pm, "size", size)) ||
		    (mode[0] && !cJSON_AddStringToObject(pm, "mode", mode)))
			return oom(err);
		return 0;
	}
	if (strcmp(type, "sysfs") == 0) {
		static const char *const so[] = {"nosuid", "nodev", "noexec", "ro", NULL};

		if ((r = mount_options(c, opts, path, so, NULL, NULL, 0, NULL, 0, err)) < 0)
			return r;
		/* A user namespace may mount sysfs only with its own network
		 * namespace, and then shows the host's devices anyway: an
		 * empty directory instead. */
		if (note(c, "%s: %s is an empty directory (no sysfs)", path, dest) < 0)
			return oom(err);
		return add_mount(c, "dir", dest) ? 0 : oom(err);
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
		return note(c, "%s: %s %s not mounted", path, type, dest) < 0 ? oom(err) : 0;
	}
	return err_set(err, EINVAL,
		       "%s.type: \"%s\" is not supported (known: bind, tmpfs, proc, devpts, sysfs, "
		       "cgroup, cgroup2, mqueue)",
		       path, type);
}

static int parse_mounts(struct oci_config *c, const cJSON *arr, struct err *err)
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
	if ((r = want_string(get(h, "path"), p, &s, err)) < 0)
		return r;
	if (s[0] != '/')
		return err_set(err, EINVAL, "%s: must be an absolute path", p);
	if (!(out->path = strdup(s)))
		return oom(err);
	oci_pathf(p, sizeof(p), "%s.args", path);
	if ((it = get(h, "args")))
		r = want_strings(it, p, false, &out->args, NULL, err);
	else if (!(out->args = calloc(2, sizeof(char *))) || !(out->args[0] = strdup(s)))
		r = oom(err);
	if (r < 0)
		return r;
	if (!out->args[0] && (free(out->args), !(out->args = calloc(2, sizeof(char *))) ||
						   !(out->args[0] = strdup(s))))
		return oom(err);
	oci_pathf(p, sizeof(p), "%s.env", path);
	if ((it = get(h, "env")))
		r = want_strings(it, p, false, &out->env, NULL, err);
	else if (!(out->env = calloc(1, sizeof(char *))))
		r = oom(err);
	if (r < 0)
		return r;
	if ((it = get(h, "timeout"))) {
		double t;

		oci_pathf(p, sizeof(p), "%s.timeout", path);
		if ((r = want_int(it, p, 1, 3600, &t, err)) < 0)
			return r;
		out->timeout_s = (int)t;
	}
	return 0;
}

static int parse_hooks(struct oci_config *c, const cJSON *hooks, struct err *err)
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
		const cJSON *it = get(hooks, name);

		if (it && (!cJSON_IsArray(it) || cJSON_GetArraySize(it) > 0))
			return err_set(err, EINVAL, "hooks.%s: not supported by paddock oci", name);
	}
	for (size_t k = 0; k < OCI_HOOK_KINDS; k++) {
		const cJSON *arr = get(hooks, hook_names[k]), *it;
		size_t n, i = 0;

		if (!arr)
			continue;
		if (!cJSON_IsArray(arr))
			return err_set(err, EINVAL, "hooks.%s: must be an array", hook_names[k]);
		n = (size_t)cJSON_GetArraySize(arr);
		c->hooks[k] = calloc(n ? n : 1, sizeof(struct oci_hook));
		if (!c->hooks[k])
			return oom(err);
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

/* ---------------------------------------------------------------- linux */

static const struct {
	const char *oci, *paddock;
} ns_names[] = {
    {"pid", "pid"}, {"network", "net"}, {"mount", "mount"},   {"ipc", "ipc"},
    {"uts", "uts"}, {"user", "user"},	{"cgroup", "cgroup"}, {"time", NULL},
};

static int parse_namespaces(struct oci_config *c, const cJSON *arr, bool *uts, struct err *err)
{
	static const char *const keys[] = {"type", "path", NULL};
	cJSON *out = cJSON_AddArrayToObject(policy(c), "namespaces");
	bool seen[sizeof(ns_names) / sizeof(ns_names[0])] = {0};
	const cJSON *it;
	size_t i = 0;

	if (!out)
		return oom(err);
	if (!cJSON_IsArray(arr))
		return err_set(err, EINVAL, "linux.namespaces: must be an array");
	cJSON_ArrayForEach(it, arr) {
		char p[PATHLEN];
		const char *type;
		size_t k;
		int r;

		oci_pathf(p, sizeof(p), "linux.namespaces[%zu]", i);
		if ((r = oci_json_keys(it, p, keys, err)) < 0)
			return r;
		oci_pathf(p, sizeof(p), "linux.namespaces[%zu].type", i);
		if ((r = want_string(get(it, "type"), p, &type, err)) < 0)
			return r;
		for (k = 0; k < sizeof(ns_names) / sizeof(ns_names[0]); k++)
			if (strcmp(ns_names[k].oci, type) == 0)
				break;
		if (k == sizeof(ns_names) / sizeof(ns_names[0]))
			return err_set(err, EINVAL,
				       "%s: unknown namespace type \"%s\" (known: pid, network, "
				       "mount, ipc, uts, user, cgroup, time)",
				       p, type);
		if (seen[k])
			return err_set(err, EINVAL, "%s: \"%s\" given twice", p, type);
		seen[k] = true;
		if (!ns_names[k].paddock)
			return err_set(err, EINVAL, "%s: \"time\" namespaces are not supported", p);
		if (get(it, "path"))
			return err_set(
			    err, EINVAL,
			    "linux.namespaces[%zu].path: joining an existing namespace is "
			    "not supported (paddock makes its own)",
			    i);
		i++;
	}
	/* paddock is built on a user, mount, pid and network namespace of
	 * its own: one the config leaves out (shared with the host) would be
	 * less isolation than paddock gives, which it never silently does;
	 * the pid and network ones are refused, user and mount added. */
	if (!seen[0])
		return err_set(err, EINVAL,
			       "linux.namespaces: no \"pid\" namespace (the host's pid namespace "
			       "is not supported)");
	if (!seen[1])
		return err_set(err, EINVAL,
			       "linux.namespaces: no \"network\" namespace (the host's network "
			       "is not supported; use --network none)");
	if (!seen[2])
		return err_set(err, EINVAL, "linux.namespaces: no \"mount\" namespace");
	if (!seen[5] && note(c, "linux.namespaces: a user namespace of paddock's own") < 0)
		return oom(err);
	for (size_t k = 0; k < sizeof(ns_names) / sizeof(ns_names[0]); k++) {
		bool want = seen[k] || k == 5;

		if (want && ns_names[k].paddock &&
		    !cJSON_AddItemToArray(out, cJSON_CreateString(ns_names[k].paddock)))
			return oom(err);
	}
	*uts = seen[4];
	return 0;
}

/* uid/gid mappings: paddock maps one id (the process's) to the caller's
 * (or, for a root caller, an unprivileged one): a mapping is accepted as
 * a request for at most that, and narrowed. */
static int parse_mappings(struct oci_config *c, const cJSON *arr, const char *path, struct err *err)
{
	static const char *const keys[] = {"containerID", "hostID", "size", NULL};
	const cJSON *it;
	size_t i = 0;

	if (!cJSON_IsArray(arr))
		return err_set(err, EINVAL, "%s: must be an array", path);
	cJSON_ArrayForEach(it, arr) {
		char p[PATHLEN];
		double v;
		int r;

		oci_pathf(p, sizeof(p), "%s[%zu]", path, i++);
		if ((r = oci_json_keys(it, p, keys, err)) < 0)
			return r;
		for (size_t k = 0; keys[k]; k++) {
			char q[PATHLEN + 16];

			oci_pathf(q, sizeof(q), "%s.%s", p, keys[k]);
			if ((r = want_int(get(it, keys[k]), q, k == 2 ? 1 : 0, 4294967295.0, &v,
					  err)) < 0)
				return r;
		}
	}
	if (i && note(c, "%s: one id mapped (the process's)", path) < 0)
		return oom(err);
	return 0;
}

static int parse_sysctl(struct oci_config *c, const cJSON *obj, struct err *err)
{
	const cJSON *it;
	size_t n = 0;

	if (!cJSON_IsObject(obj))
		return err_set(err, EINVAL, "linux.sysctl: must be an object");
	c->sysctl = calloc((size_t)cJSON_GetArraySize(obj) + 1, sizeof(char *));
	if (!c->sysctl)
		return oom(err);
	cJSON_ArrayForEach(it, obj) {
		char p[PATHLEN];
		const char *v;
		int r;

		oci_pathf(p, sizeof(p), "linux.sysctl.%s", it->string);
		if ((r = want_string(it, p, &v, err)) < 0)
			return r;
		/* Only the network namespace's own: paddock's sandbox has one,
		 * and its root may set them. Any other would be the host's. */
		if (strncmp(it->string, "net.", 4) != 0 || strstr(it->string, "..") ||
		    strchr(it->string, '/') || !it->string[4] || strchr(v, '\n'))
			return err_set(
			    err, EINVAL,
			    "%s: only net.* sysctls of the container's network namespace "
			    "are supported",
			    p);
		if (asprintf(&c->sysctl[n], "%s=%s", it->string, v) < 0) {
			c->sysctl[n] = NULL;
			return oom(err);
		}
		c->n_sysctl = ++n;
	}
	return 0;
}

static int parse_resources(struct oci_config *c, const cJSON *res, struct err *err)
{
	static const char *const keys[] = {"devices", "memory", "cpu", "pids", "blockIO", NULL};
	cJSON *limits = cJSON_GetObjectItemCaseSensitive(policy(c), "limits");
	const cJSON *it;
	int r;

	if ((r = oci_json_keys(res, "linux.resources", keys, err)) < 0)
		return r;
	if ((it = get(res, "devices"))) {
		if (!cJSON_IsArray(it))
			return err_set(err, EINVAL, "linux.resources.devices: must be an array");
		/* paddock's /dev has its few nodes and nothing else: whatever
		 * the rules allow beyond them is not there. */
		if (cJSON_GetArraySize(it) &&
		    note(c, "linux.resources.devices: only paddock's /dev nodes") < 0)
			return oom(err);
	}
	if ((it = get(res, "memory"))) {
		static const char *const mk[] = {"limit", "swap", "disableOOMKiller", "reservation",
						 NULL};
		const cJSON *l = get(it, "limit");
		double v;

		if ((r = oci_json_keys(it, "linux.resources.memory", mk, err)) < 0)
			return r;
		if (get(it, "reservation") || get(it, "swap")) {
			const cJSON *s =
			    get(it, "reservation") ? get(it, "reservation") : get(it, "swap");

			if (!cJSON_IsNumber(s) || s->valuedouble != 0)
				return err_set(err, EINVAL,
					       "linux.resources.memory.%s: not supported",
					       get(it, "reservation") ? "reservation" : "swap");
		}
		if (get(it, "disableOOMKiller") && cJSON_IsTrue(get(it, "disableOOMKiller")))
			return err_set(err, EINVAL,
				       "linux.resources.memory.disableOOMKiller: not supported");
		if (l) {
			if ((r = want_int(l, "linux.resources.memory.limit", -1, 9007199254740991.0,
					  &v, err)) < 0)
				return r;
			if (v > 0 && !cJSON_AddNumberToObject(limits, "memory", v))
				return oom(err);
		}
	}
	if ((it = get(res, "cpu"))) {
		static const char *const ck[] = {"shares", "quota", "period", NULL};
		double q = 0, per = 100000, sh = 0;

		if ((r = oci_json_keys(it, "linux.resources.cpu", ck, err)) < 0)
			return r;
		if (get(it, "shares") &&
		    (r = want_int(get(it, "shares"), "linux.resources.cpu.shares", 0, 262144, &sh,
				  err)) < 0)
			return r;
		/* 1024 is the kernel's default weight: the same as none. */
		if (sh != 0 && sh != 1024)
			return err_set(err, EINVAL,
				       "linux.resources.cpu.shares: %.0f not supported (0 or 1024, "
				       "the default weight)",
				       sh);
		if (get(it, "quota") && (r = want_int(get(it, "quota"), "linux.resources.cpu.quota",
						      -1, 9007199254740991.0, &q, err)) < 0)
			return r;
		if (get(it, "period") &&
		    (r = want_int(get(it, "period"), "linux.resources.cpu.period", 0, 1000000, &per,
				  err)) < 0)
			return r;
		if (q > 0) {
			double cpus = per > 0 ? q / per : 0;

			if (cpus < 0.01 || cpus > 1024)
				return err_set(err, EINVAL,
					       "linux.resources.cpu: quota/period out of "
					       "range (0.01 to 1024 CPUs)");
			if (!cJSON_AddNumberToObject(limits, "cpu", cpus))
				return oom(err);
		}
	}
	if ((it = get(res, "pids"))) {
		static const char *const pk[] = {"limit", NULL};
		double v = 0;

		if ((r = oci_json_keys(it, "linux.resources.pids", pk, err)) < 0 ||
		    (r = want_int(get(it, "limit"), "linux.resources.pids.limit", -1, 4194304, &v,
				  err)) < 0)
			return r;
		if (v > 0 && !cJSON_AddNumberToObject(limits, "pids", v))
			return oom(err);
	}
	if ((it = get(res, "blockIO"))) {
		static const char *const bk[] = {"weight", NULL};
		double w = 0;

		if ((r = oci_json_keys(it, "linux.resources.blockIO", bk, err)) < 0 ||
		    (r = want_int(get(it, "weight"), "linux.resources.blockIO.weight", 0, 1000, &w,
				  err)) < 0)
			return r;
		if (w != 0)
			return err_set(err, EINVAL,
				       "linux.resources.blockIO.weight: not supported");
	}
	return 0;
}

/* maskedPaths and readonlyPaths: in paddock's sandbox /proc is a procfs
 * of its own pid namespace, mounted by a user namespace without any
 * capability in the host's: the files these lists name are the host's
 * (owned by the host's root), and writes to them are refused by their
 * owner and mode; /sys is an empty directory. Masking (a read that
 * returns nothing) is not done. */
static int parse_paths(struct oci_config *c, const cJSON *arr, const char *path, bool masked,
		       struct err *err)
{
	char **v = NULL;
	size_t n = 0, unmasked = 0;
	int r = want_strings(arr, path, false, &v, &n, err);

	if (r < 0)
		return r;
	for (size_t i = 0; i < n && r == 0; i++) {
		if (v[i][0] != '/')
			r = err_set(err, EINVAL, "%s[%zu]: must be an absolute path", path, i);
		else if (strncmp(v[i], "/proc/", 6) != 0 && strncmp(v[i], "/sys/", 5) != 0 &&
			 strcmp(v[i], "/sys") != 0)
			r = err_set(err, EINVAL,
				    "%s[%zu]: \"%s\" is not supported (only below /proc and /sys)",
				    path, i, v[i]);
		else if (masked && strncmp(v[i], "/proc/", 6) == 0)
			unmasked++;
	}
	strv_free(v);
	if (r == 0 && unmasked &&
	    note(c, "%s: %zu /proc path(s) readable where their mode allows (not masked)", path,
		 unmasked) < 0)
		r = oom(err);
	if (r == 0 && !masked && n &&
	    note(c, "%s: read-only by their host owner, not by a mount", path) < 0)
		r = oom(err);
	return r;
}

static int parse_linux(struct oci_config *c, const cJSON *lx, bool *uts, struct err *err)
{
	static const char *const keys[] = {
	    "namespaces",    "uidMappings", "gidMappings",	 "sysctl",
	    "resources",     "cgroupsPath", "seccomp",		 "maskedPaths",
	    "readonlyPaths", "mountLabel",  "rootfsPropagation", "devices",
	    "intelRdt",	     "personality", "timeOffsets",	 NULL};
	const cJSON *it;
	const char *s;
	int r;

	if ((r = oci_json_keys(lx, "linux", keys, err)) < 0)
		return r;
	if (!get(lx, "namespaces"))
		return err_set(err, EINVAL, "linux.namespaces: required");
	if ((r = parse_namespaces(c, get(lx, "namespaces"), uts, err)) < 0)
		return r;
	for (size_t k = 0; k < 2; k++) {
		const char *key = k ? "gidMappings" : "uidMappings";
		char p[PATHLEN];

		oci_pathf(p, sizeof(p), "linux.%s", key);
		if ((it = get(lx, key)) && (r = parse_mappings(c, it, p, err)) < 0)
			return r;
	}
	if ((it = get(lx, "sysctl")) && (r = parse_sysctl(c, it, err)) < 0)
		return r;
	if ((it = get(lx, "resources")) && (r = parse_resources(c, it, err)) < 0)
		return r;
	if ((it = get(lx, "cgroupsPath"))) {
		if ((r = want_string(it, "linux.cgroupsPath", &s, err)) < 0)
			return r;
		/* paddock makes the sandbox's cgroup itself, below its own,
		 * when limits ask for one (docs/policy.md "limits"). */
		if (s[0] && note(c, "linux.cgroupsPath: paddock's own cgroup instead") < 0)
			return oom(err);
	}
	if ((it = get(lx, "seccomp")) &&
	    (r = oci_seccomp_compile(it, "linux.seccomp", &c->bpf, &c->bpf_len, err)) < 0)
		return r;
	if ((it = get(lx, "maskedPaths")) &&
	    (r = parse_paths(c, it, "linux.maskedPaths", true, err)) < 0)
		return r;
	if ((it = get(lx, "readonlyPaths")) &&
	    (r = parse_paths(c, it, "linux.readonlyPaths", false, err)) < 0)
		return r;
	if ((it = get(lx, "mountLabel"))) {
		if ((r = want_string(it, "linux.mountLabel", &s, err)) < 0)
			return r;
		if (s[0])
			return err_set(err, EINVAL, "linux.mountLabel: not supported (no SELinux)");
	}
	if ((it = get(lx, "rootfsPropagation"))) {
		if ((r = want_string(it, "linux.rootfsPropagation", &s, err)) < 0)
			return r;
		/* paddock's root is private, and nothing propagates out. */
		if (strcmp(s, "private") != 0 && strcmp(s, "rprivate") != 0 && s[0])
			return err_set(err, EINVAL,
				       "linux.rootfsPropagation: \"%s\" is not supported (private "
				       "only)",
				       s);
	}
	if ((it = get(lx, "devices")) && (!cJSON_IsArray(it) || cJSON_GetArraySize(it) > 0))
		return err_set(err, EINVAL, "linux.devices: device nodes are not supported");
	for (const char *const *k =
		 (const char *const[]){"intelRdt", "personality", "timeOffsets", NULL};
	     *k; k++)
		if (get(lx, *k))
			return err_set(err, EINVAL, "linux.%s: not supported by paddock oci", *k);
	return 0;
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
			if ((r = want_string(it, p, &v, err)) < 0)
				return r;
			if (v[0] != '/')
				return err_set(err, EINVAL,
					       "%s: an absolute path to a paddock policy", p);
			if (!(c->policy_ref = strdup(v)))
				return oom(err);
		} else if (strcmp(it->string, "org.paddock.ttl") == 0) {
			if ((r = want_string(it, p, &v, err)) < 0)
				return r;
			if (!(c->ttl = strdup(v)))
				return oom(err);
		} else {
			return err_set(err, EINVAL,
				       "%s: unknown paddock annotation (known: org.paddock.policy, "
				       "org.paddock.ttl)",
				       p);
		}
	}
	c->annotations = cJSON_PrintUnformatted(an);
	return c->annotations ? 0 : oom(err);
}

static int parse_root(struct oci_config *c, const cJSON *root, const char *bundle, struct err *err)
{
	static const char *const keys[] = {"path", "readonly", NULL};
	const cJSON *it;
	const char *s;
	int r;

	if ((r = oci_json_keys(root, "root", keys, err)) < 0)
		return r;
	if ((r = want_string(get(root, "path"), "root.path", &s, err)) < 0)
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
		return oom(err);
	if ((it = get(root, "readonly")) &&
	    (r = want_bool(it, "root.readonly", &c->root_readonly, err)) < 0)
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
	const char *end = NULL, *s;
	const cJSON *it;
	bool uts = false;
	int r;

	memset(out, 0, sizeof(*out));
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
	    !cJSON_AddNumberToObject(policy(out), "version", 1) ||
	    !cJSON_AddArrayToObject(policy(out), "mounts"))
		return r = oom(err), oci_config_free(out), r;
	r = oci_json_keys(doc, "config.json", keys, err);
	if (r == 0 && (r = want_string(get(doc, "ociVersion"), "ociVersion", &s, err)) == 0 &&
	    strncmp(s, "1.", 2) != 0)
		r = err_set(err, EINVAL, "ociVersion: \"%s\" is not supported (1.x)", s);
	if (r == 0 && !get(doc, "process"))
		r = err_set(err, EINVAL, "process: required (paddock oci runs a process)");
	if (r == 0)
		r = parse_process(out, get(doc, "process"), err);
	if (r == 0 && !get(doc, "root"))
		r = err_set(err, EINVAL, "root: required");
	if (r == 0)
		r = parse_root(out, get(doc, "root"), bundle, err);
	if (r == 0 && !get(doc, "linux"))
		r = err_set(err, EINVAL, "linux: required");
	if (r == 0)
		r = parse_linux(out, get(doc, "linux"), &uts, err);
	if (r == 0 && (it = get(doc, "hostname"))) {
		if ((r = want_string(it, "hostname", &s, err)) == 0 && s[0]) {
			if (!uts)
				r = err_set(err, EINVAL, "hostname: needs a \"uts\" namespace");
			else if (!cJSON_AddStringToObject(policy(out), "hostname", s))
				r = oom(err);
		}
	}
	if (r == 0 && (it = get(doc, "domainname")) && (!cJSON_IsString(it) || it->valuestring[0]))
		r = err_set(err, EINVAL, "domainname: not supported by paddock oci");
	if (r == 0 && (it = get(doc, "mounts")))
		r = parse_mounts(out, it, err);
	if (r == 0 && (it = get(doc, "hooks")))
		r = parse_hooks(out, it, err);
	if (r == 0 && (it = get(doc, "annotations")))
		r = parse_annotations(out, it, err);
	if (r == 0 && out->ttl) {
		cJSON *limits = cJSON_GetObjectItemCaseSensitive(policy(out), "limits");

		if (!cJSON_AddStringToObject(limits, "ttl", out->ttl))
			r = oom(err);
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
		const char *t = cJSON_GetStringValue(get(m, "target"));

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
	if ((r = oci_json_keys(doc, "annotations.org.paddock.policy", keys, err)) < 0)
		return r;
	for (size_t k = 1; keys[k]; k++) {
		cJSON *it = cJSON_DetachItemFromObjectCaseSensitive(doc, keys[k]);

		if (it && !cJSON_AddItemToObject(policy(c), keys[k], it)) {
			cJSON_Delete(it);
			return oom(err);
		}
	}
	return 0;
}

int oci_config_policy(struct oci_config *c, const struct oci_entry *entries, size_t n,
		      const char *extra, size_t extra_len, struct err *err)
{
	cJSON *oci_mounts = cJSON_DetachItemFromObjectCaseSensitive(policy(c), "mounts");
	cJSON *mounts = cJSON_AddArrayToObject(policy(c), "mounts");
	cJSON *m;
	int r = 0;

	if (!oci_mounts || !mounts) {
		cJSON_Delete(oci_mounts);
		return oom(err);
	}
	if (c->root_force_ro && !c->root_readonly &&
	    note(c, "root.readonly: true (the rootfs cannot be idmapped for paddock's "
		    "unprivileged workload), a tmpfs on /tmp") < 0) {
		cJSON_Delete(oci_mounts);
		return oom(err);
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
			r = (cJSON_Delete(m), oom(err));
		else if (e->kind == OCI_ENTRY_SYMLINK)
			r = cJSON_AddStringToObject(m, "type", "symlink") &&
				    cJSON_AddStringToObject(m, "target", target) &&
				    cJSON_AddStringToObject(m, "link", e->link ? e->link : "")
				? 0
				: oom(err);
		else if (e->kind == OCI_ENTRY_DIR && c->root_force_ro && !c->root_readonly &&
			 strcmp(e->name, "tmp") == 0)
			r = cJSON_AddStringToObject(m, "type", "tmpfs") &&
				    cJSON_AddStringToObject(m, "target", target) &&
				    cJSON_AddStringToObject(m, "mode", "1777")
				? 0
				: oom(err);
		else
			r = cJSON_AddStringToObject(m, "type", "bind") &&
				    cJSON_AddStringToObject(m, "source", source) &&
				    cJSON_AddStringToObject(m, "target", target) &&
				    cJSON_AddStringToObject(
					m, "mode",
					c->root_readonly || c->root_force_ro ? "ro" : "rw")
				? 0
				: oom(err);
	}
	while (r == 0 && (m = cJSON_DetachItemFromArray(oci_mounts, 0)))
		if (!cJSON_AddItemToArray(mounts, m))
			r = (cJSON_Delete(m), oom(err));
	cJSON_Delete(oci_mounts);
	if (r == 0 && extra)
		r = take_extra(c, extra, extra_len, err);
	if (r == 0 && !(c->policy_json = cJSON_Print(policy(c))))
		r = oom(err);
	return r;
}

void oci_config_free(struct oci_config *c)
{
	strv_free(c->argv);
	free(c->root);
	free(c->root_view);
	strv_free(c->sysctl);
	for (size_t k = 0; k < OCI_HOOK_KINDS; k++) {
		for (size_t i = 0; i < c->n_hooks[k]; i++) {
			free(c->hooks[k][i].path);
			strv_free(c->hooks[k][i].args);
			strv_free(c->hooks[k][i].env);
		}
		free(c->hooks[k]);
	}
	free(c->bpf);
	free(c->policy_ref);
	free(c->ttl);
	free(c->annotations);
	cJSON_Delete(c->policy);
	free(c->policy_json);
	for (size_t i = 0; i < c->n_notes; i++)
		free(c->notes[i]);
	memset(c, 0, sizeof(*c));
}
