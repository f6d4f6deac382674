/* config.json's "process" (oci.h, docs/oci.md): args, env, cwd, user,
 * rlimits, capabilities (none: narrowed), terminal, oomScoreAdj. */
#include "oci_parse.h"

#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../include/cleanup.h"

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
		return oci_oom(err);
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
		r = oci_want_string(oci_get(it, "type"), p, &type, err);
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
		if (oci_get(rl, name))
			return err_set(err, EINVAL, "%s: \"%s\" given twice", p, type);
		oci_pathf(p, sizeof(p), "process.rlimits[%zu].soft", i);
		r = oci_want_int(oci_get(it, "soft"), p, 0, 9007199254740991.0, &soft, err);
		oci_pathf(p, sizeof(p), "process.rlimits[%zu].hard", i);
		if (r == 0)
			r = oci_want_int(oci_get(it, "hard"), p, 0, 9007199254740991.0, &hard, err);
		if (r < 0)
			return r;
		if (soft > hard)
			return err_set(err, EINVAL, "process.rlimits[%zu]: soft above hard", i);
		/* paddock sets one value as both limits: the soft one, so the
		 * workload never gets more than it was to start with. */
		if (soft != hard && oci_note(c, "process.rlimits[%zu]: %s soft and hard both %.0f",
					     i, type, soft) < 0)
			return oci_oom(err);
		if (!cJSON_AddNumberToObject(rl, name, soft))
			return oci_oom(err);
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
		r = oci_want_string(it, p, &s, err);
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
		if (oci_get(set, name))
			return err_set(err, EINVAL, "%s: %s is set twice", p, name);
		if (!cJSON_AddStringToObject(set, name, eq + 1))
			return oci_oom(err);
	}
	return 0;
}

static int parse_user(struct oci_config *c, const cJSON *u, struct err *err)
{
	static const char *const keys[] = {"uid",   "gid",	"additionalGids",
					   "umask", "username", NULL};
	cJSON *user = cJSON_AddObjectToObject(oci_policy(c), "user");
	double uid, gid;
	const cJSON *it;
	int r;

	if (!user)
		return oci_oom(err);
	r = oci_json_keys(u, "process.user", keys, err);
	if (r == 0)
		r = oci_want_int(oci_get(u, "uid"), "process.user.uid", 0, 4294967294.0, &uid, err);
	if (r == 0)
		r = oci_want_int(oci_get(u, "gid"), "process.user.gid", 0, 4294967294.0, &gid, err);
	if (r < 0)
		return r;
	if ((it = oci_get(u, "umask"))) {
		double m;

		if ((r = oci_want_int(it, "process.user.umask", 0, 0777, &m, err)) < 0)
			return r;
		c->has_umask = true;
		c->umask = (unsigned)m;
	}
	if (oci_get(u, "username"))
		return err_set(err, EINVAL, "process.user.username: not supported (Windows only)");
	if (!cJSON_AddNumberToObject(user, "uid", uid) ||
	    !cJSON_AddNumberToObject(user, "gid", gid))
		return oci_oom(err);
	it = oci_get(u, "additionalGids");
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
			r = oci_want_int(g, p, 0, 4294967294.0, &v, err);
			if (r < 0)
				return r;
			/* One gid is mapped in paddock's user namespace, and
			 * setgroups(2) is denied there. */
			if (v != gid && oci_note(c,
						 "%s: %.0f not a supplementary group (one gid is "
						 "mapped)",
						 p, v) < 0)
				return oci_oom(err);
		}
	}
	return 0;
}

int oci_parse_process(struct oci_config *c, const cJSON *pr, struct err *err)
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
	if ((it = oci_get(pr, "terminal")) &&
	    (r = oci_want_bool(it, "process.terminal", &c->terminal, err)))
		return r;
	if ((it = oci_get(pr, "consoleSize"))) {
		static const char *const ck[] = {"height", "width", NULL};
		double h, w;

		if (!c->terminal)
			return err_set(err, EINVAL,
				       "process.consoleSize: only with \"terminal\": true");
		if ((r = oci_json_keys(it, "process.consoleSize", ck, err)) < 0 ||
		    (r = oci_want_int(oci_get(it, "height"), "process.consoleSize.height", 0, 65535,
				      &h, err)) < 0 ||
		    (r = oci_want_int(oci_get(it, "width"), "process.consoleSize.width", 0, 65535,
				      &w, err)) < 0)
			return r;
		c->rows = (unsigned)h;
		c->cols = (unsigned)w;
	}
	if (!oci_get(pr, "user"))
		return err_set(err, EINVAL, "process.user: required");
	r = parse_user(c, oci_get(pr, "user"), err);
	if (r < 0)
		return r;
	if (oci_get(pr, "commandLine"))
		return err_set(err, EINVAL, "process.commandLine: not supported (Windows only)");
	if (!oci_get(pr, "args"))
		return err_set(err, EINVAL, "process.args: required");
	r = oci_want_strings(oci_get(pr, "args"), "process.args", true, &c->argv, &c->argc, err);
	if (r < 0)
		return r;
	if (!c->argv[0][0])
		return err_set(err, EINVAL, "process.args[0]: must not be empty");
	if (oci_want_string(oci_get(pr, "cwd"), "process.cwd", &cwd, err) < 0)
		return -EINVAL;
	if (cwd[0] != '/')
		return err_set(err, EINVAL, "process.cwd: must be an absolute path");
	if (!cJSON_AddStringToObject(oci_policy(c), "cwd", cwd))
		return oci_oom(err);
	env = cJSON_AddObjectToObject(oci_policy(c), "environment");
	if (!env || !cJSON_AddBoolToObject(env, "clear", true))
		return oci_oom(err);
	if (!(env = cJSON_AddObjectToObject(env, "set")))
		return oci_oom(err);
	if ((it = oci_get(pr, "env")) && (r = parse_env(it, env, err)) < 0)
		return r;
	/* paddock's workload has no capability at all, in any set: less than
	 * any list asks for. */
	if ((it = oci_get(pr, "capabilities"))) {
		static const char *const ck[] = {"bounding",  "effective", "inheritable",
						 "permitted", "ambient",   NULL};
		size_t most = 0;

		r = oci_json_keys(it, "process.capabilities", ck, err);
		if (r < 0)
			return r;
		for (size_t k = 0; ck[k]; k++) {
			char p[PATHLEN], **v = NULL;
			size_t n = 0;

			if (!oci_get(it, ck[k]))
				continue;
			oci_pathf(p, sizeof(p), "process.capabilities.%s", ck[k]);
			r = oci_want_strings(oci_get(it, ck[k]), p, false, &v, &n, err);
			oci_strv_free(v);
			if (r < 0)
				return r;
			most = n > most ? n : most;
		}
		if (most && oci_note(c, "process.capabilities: none (%zu asked)", most) < 0)
			return oci_oom(err);
	}
	if ((it = oci_get(pr, "noNewPrivileges"))) {
		bool nnp = true;

		if ((r = oci_want_bool(it, "process.noNewPrivileges", &nnp, err)) < 0)
			return r;
		if (!nnp &&
		    oci_note(c, "process.noNewPrivileges: true (paddock always sets it)") < 0)
			return oci_oom(err);
	}
	limits = cJSON_AddObjectToObject(oci_policy(c), "limits");
	if (!limits)
		return oci_oom(err);
	if ((it = oci_get(pr, "rlimits")) && (r = parse_rlimits(c, it, limits, err)) < 0)
		return r;
	if ((it = oci_get(pr, "oomScoreAdj"))) {
		double v;

		if ((r = oci_want_int(it, "process.oomScoreAdj", -1000, 1000, &v, err)) < 0)
			return r;
		c->has_oom = v != 0;
		c->oom_score_adj = (int)v;
	}
	for (size_t k = 0; k < 2; k++) {
		const char *key = k ? "selinuxLabel" : "apparmorProfile";
		const char *s;

		if (!(it = oci_get(pr, key)))
			continue;
		if ((r = oci_want_string(it, key, &s, err)) < 0)
			return r;
		if (s[0])
			return err_set(err, EINVAL, "process.%s: not supported by paddock oci",
				       key);
	}
	for (const char *const *k =
		 (const char *const[]){"ioPriority", "scheduler", "execCPUAffinity", NULL};
	     *k; k++)
		if (oci_get(pr, *k))
			return err_set(err, EINVAL, "process.%s: not supported by paddock oci", *k);
	return 0;
}
