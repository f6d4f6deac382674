/* Walk the cJSON tree of a policy into struct policy: unknown and duplicate
 * keys, JSON types, and the scalar forms (durations, sizes, modes, enums).
 * What the values mean is checked afterwards by validate.c. */
#include "policy.h"

#include <stdlib.h>
#include <string.h>

#include "../include/cleanup.h"
#include "json.h"
#include "parse.h"
#include "sha256.h"
#include "validate.h"

static void cleanup_policy_fn(struct policy **p)
{
	policy_free(*p);
}
#define cleanup_policy __attribute__((cleanup(cleanup_policy_fn)))

static const cJSON *member(const cJSON *obj, const char *key)
{
	return cJSON_GetObjectItemCaseSensitive(obj, key);
}

static int oom(struct err *err)
{
	return err_set(err, ENOMEM, "out of memory");
}

/* Arrays of n elements; calloc(0) may return NULL, so ask for one at least. */
static void *alloc_array(size_t n, size_t size)
{
	return calloc(n ? n : 1, size);
}

static int parse_version(const cJSON *root, struct err *err)
{
	const cJSON *v = member(root, "version");
	uint64_t n;
	int r;

	if (!v)
		return err_set(err, EINVAL, "(root): missing key \"version\"");
	r = policy_json_uint(v, "version", JSON_MAX_EXACT, &n, err);
	if (r < 0)
		return r;
	if (n != 1)
		return err_set(err, EINVAL,
			       "version: unsupported version %llu (this paddock reads 1)",
			       (unsigned long long)n);
	return 0;
}

static unsigned ns_bit(const char *name)
{
	for (unsigned bit = 1; bit & POLICY_NS_ALL; bit <<= 1)
		if (strcmp(policy_ns_name(bit), name) == 0)
			return bit;
	return 0;
}

static int parse_namespaces(const cJSON *arr, struct policy *p, struct err *err)
{
	char path[JPATH_MAX];
	const cJSON *it;
	unsigned ns = 0, bit;
	const char *s;
	size_t i = 0;
	int r;

	r = policy_json_array(arr, "namespaces", err);
	if (r < 0)
		return r;
	cJSON_ArrayForEach(it, arr) {
		snprintf(path, sizeof(path), "namespaces[%zu]", i++);
		r = policy_json_string(it, path, &s, err);
		if (r < 0)
			return r;
		bit = ns_bit(s);
		if (!bit)
			return err_set(err, EINVAL, "%s: unknown namespace %s", path, QUOTE(s));
		if (ns & bit)
			return err_set(err, EINVAL, "%s: duplicate namespace %s", path, QUOTE(s));
		ns |= bit;
	}
	p->namespaces = ns;
	return 0;
}

static int parse_user(const cJSON *obj, struct policy *p, struct err *err)
{
	static const char *const keys[] = {"uid", "gid", NULL};
	const cJSON *uid = member(obj, "uid"), *gid = member(obj, "gid");
	uint64_t v;
	int r;

	r = policy_json_object(obj, "user", err);
	if (r >= 0)
		r = policy_json_check_keys(obj, keys, "user", NULL, err);
	if (r < 0)
		return r;
	/* 4294967295 is (uid_t)-1, "no change" to setresuid() and friends. */
	if (uid) {
		r = policy_json_uint(uid, "user.uid", 4294967294u, &v, err);
		if (r < 0)
			return r;
		p->has_uid = true;
		p->uid = (uint32_t)v;
	}
	if (gid) {
		r = policy_json_uint(gid, "user.gid", 4294967294u, &v, err);
		if (r < 0)
			return r;
		p->has_gid = true;
		p->gid = (uint32_t)v;
	}
	return 0;
}

static int parse_env_keep(const cJSON *arr, struct policy *p, struct err *err)
{
	char path[JPATH_MAX];
	const cJSON *it;
	const char *s;
	size_t len;
	int r;

	r = policy_json_array(arr, "environment.keep", err);
	if (r < 0)
		return r;
	p->env_keep = alloc_array((size_t)cJSON_GetArraySize(arr), sizeof(char *));
	if (!p->env_keep)
		return oom(err);
	cJSON_ArrayForEach(it, arr) {
		snprintf(path, sizeof(path), "environment.keep[%zu]", p->n_env_keep);
		r = policy_json_string(it, path, &s, err);
		if (r < 0)
			return r;
		len = strlen(s);
		if (len > 1 && s[len - 1] == '*')
			len--; /* "LC_*": keep every name with this prefix */
		if (!policy_env_name_ok(s, len))
			return err_set(err, EINVAL,
				       "%s: invalid variable name %s (letters, digits and '_', "
				       "not starting with a digit, optionally ending in '*')",
				       path, QUOTE(s));
		r = policy_json_strdup(it, path, &p->env_keep[p->n_env_keep++], err);
		if (r < 0)
			return r;
	}
	return 0;
}

static int parse_env_set(const cJSON *obj, struct policy *p, struct err *err)
{
	char path[JPATH_MAX];
	const cJSON *it;
	const char *v;
	size_t len;
	int r;

	r = policy_json_object(obj, "environment.set", err);
	if (r >= 0)
		r = policy_json_check_dups(obj, "environment.set", err);
	if (r < 0)
		return r;
	p->env_set = alloc_array((size_t)cJSON_GetArraySize(obj), sizeof(char *));
	if (!p->env_set)
		return oom(err);
	cJSON_ArrayForEach(it, obj) {
		if (!policy_env_name_ok(it->string, strlen(it->string)))
			return err_set(err, EINVAL,
				       "environment.set: invalid variable name %s (letters, digits "
				       "and '_', not starting with a digit)",
				       QUOTE(it->string));
		snprintf(path, sizeof(path), "environment.set.%s", it->string);
		r = policy_json_string(it, path, &v, err);
		if (r < 0)
			return r;
		/* Stored as written; validate.c expands the value. */
		len = strlen(it->string) + 1 + strlen(v) + 1;
		p->env_set[p->n_env_set] = malloc(len);
		if (!p->env_set[p->n_env_set])
			return oom(err);
		snprintf(p->env_set[p->n_env_set++], len, "%s=%s", it->string, v);
	}
	return 0;
}

static int parse_environment(const cJSON *obj, struct policy *p, struct err *err)
{
	static const char *const keys[] = {"clear", "keep", "set", NULL};
	const cJSON *it;
	int r;

	r = policy_json_object(obj, "environment", err);
	if (r >= 0)
		r = policy_json_check_keys(obj, keys, "environment", NULL, err);
	if (r >= 0 && (it = member(obj, "clear")))
		r = policy_json_bool(it, "environment.clear", &p->env_clear, err);
	if (r >= 0 && (it = member(obj, "keep")))
		r = parse_env_keep(it, p, err);
	if (r >= 0 && (it = member(obj, "set")))
		r = parse_env_set(it, p, err);
	return r < 0 ? r : 0;
}

static int parse_protect(const cJSON *arr, struct policy *p, struct err *err)
{
	char path[JPATH_MAX];
	const cJSON *it;
	int r;

	r = policy_json_array(arr, "protect", err);
	if (r < 0)
		return r;
	p->protect = alloc_array((size_t)cJSON_GetArraySize(arr), sizeof(char *));
	if (!p->protect)
		return oom(err);
	cJSON_ArrayForEach(it, arr) {
		snprintf(path, sizeof(path), "protect[%zu]", p->n_protect);
		r = policy_json_strdup(it, path, &p->protect[p->n_protect], err);
		if (r < 0)
			return r;
		p->n_protect++;
	}
	return 0;
}

static int parse_protect_git(const cJSON *it, struct policy *p, struct err *err)
{
	const char *s;
	int r = policy_json_string(it, "protect_git", &s, err);

	if (r < 0)
		return r;
	if (strcmp(s, "check") == 0)
		p->protect_git = POLICY_PROTECT_GIT_CHECK;
	else if (strcmp(s, "allowlist") == 0)
		p->protect_git = POLICY_PROTECT_GIT_ALLOWLIST;
	else
		return err_set(err, EINVAL,
			       "protect_git: must be \"check\" or \"allowlist\", not \"%.64s\"", s);
	return 0;
}

static int parse_duration(const cJSON *it, const char *path, uint64_t *out, struct err *err)
{
	const char *s;
	int r;

	r = policy_json_string(it, path, &s, err);
	if (r < 0)
		return r;
	r = policy_parse_duration(s, out);
	if (r == -ERANGE)
		return err_set(err, EINVAL, "%s: duration %s is longer than 30 days", path,
			       QUOTE(s));
	if (r < 0)
		return err_set(err, EINVAL, "%s: invalid duration %s (use e.g. 500ms, 2s, 5m, 1h)",
			       path, QUOTE(s));
	return 0;
}

/* An rlimit value: an integer, "unlimited", or for the byte-valued limits
 * (fsize, as, core) a size string. */
static int parse_rlimit(const cJSON *it, enum policy_rlimit which, struct policy_rlimit_value *v,
			struct err *err)
{
	bool bytes = which == POLICY_RLIMIT_FSIZE || which == POLICY_RLIMIT_AS ||
		     which == POLICY_RLIMIT_CORE;
	char path[JPATH_MAX];
	int r;

	snprintf(path, sizeof(path), "limits.rlimits.%s", policy_rlimit_name(which));
	if (cJSON_IsNumber(it)) {
		r = policy_json_uint(it, path, JSON_MAX_EXACT, &v->value, err);
	} else if (cJSON_IsString(it) && strcmp(it->valuestring, "unlimited") == 0) {
		v->value = POLICY_UNLIMITED;
		r = 0;
	} else if (cJSON_IsString(it) && bytes) {
		r = policy_parse_size(it->valuestring, &v->value);
		if (r < 0)
			r = policy_size_error(r, path, it->valuestring, ", or \"unlimited\"", err);
	} else if (bytes) {
		r = err_set(err, EINVAL,
			    "%s: must be an integer, a size such as \"64m\", or \"unlimited\"",
			    path);
	} else {
		r = err_set(err, EINVAL, "%s: must be an integer or \"unlimited\"", path);
	}
	v->set = r >= 0;
	return r;
}

static int parse_rlimits(const cJSON *obj, struct policy *p, struct err *err)
{
	const char *keys[POLICY_RLIMIT_COUNT + 1] = {NULL};
	const cJSON *it;
	int r;

	for (int i = 0; i < POLICY_RLIMIT_COUNT; i++)
		keys[i] = policy_rlimit_name(i);
	r = policy_json_object(obj, "limits.rlimits", err);
	if (r >= 0)
		r = policy_json_check_keys(obj, keys, "limits.rlimits", NULL, err);
	for (int i = 0; r >= 0 && i < POLICY_RLIMIT_COUNT; i++)
		if ((it = member(obj, keys[i])))
			r = parse_rlimit(it, i, &p->rlimits[i], err);
	return r < 0 ? r : 0;
}

/* limits.output, limits.memory: bytes as an integer or a size string,
 * greater than 0. */
static int parse_bytes(const cJSON *it, const char *path, uint64_t *out, struct err *err)
{
	int r;

	if (cJSON_IsString(it)) {
		r = policy_parse_size(it->valuestring, out);
		if (r < 0)
			return policy_size_error(r, path, it->valuestring, "", err);
	} else if (cJSON_IsNumber(it) && it->valuedouble >= 1 && it->valuedouble <= 9.0e15 &&
		   it->valuedouble == (double)(uint64_t)it->valuedouble) {
		*out = (uint64_t)it->valuedouble;
	} else {
		return err_set(err, EINVAL,
			       "%s: must be a positive integer or a size string such as \"64m\"",
			       path);
	}
	if (*out == 0)
		return err_set(err, EINVAL, "%s: must be greater than 0", path);
	return 0;
}

/* limits.cpu: CPUs as a number (0.01 to 1024; 0.5 is half of one), kept
 * as a quota in microseconds per 100 ms period (cgroup v2 cpu.max). */
static int parse_cpu(const cJSON *it, uint64_t *quota_us, struct err *err)
{
	if (!cJSON_IsNumber(it) || !(it->valuedouble >= 0.01 && it->valuedouble <= 1024))
		return err_set(err, EINVAL,
			       "limits.cpu: must be a number of CPUs from 0.01 to 1024 (0.5: half "
			       "of one)");
	*quota_us = (uint64_t)(it->valuedouble * 100000.0 + 0.5);
	return 0;
}

static int parse_limits(const cJSON *obj, struct policy *p, struct err *err)
{
	static const char *const keys[] = {"ttl",    "grace", "rlimits", "output",
					   "memory", "cpu",   "pids",	 NULL};
	const cJSON *it;
	int r;

	r = policy_json_object(obj, "limits", err);
	if (r >= 0)
		r = policy_json_check_keys(obj, keys, "limits", NULL, err);
	if (r >= 0 && (it = member(obj, "ttl")))
		r = parse_duration(it, "limits.ttl", &p->ttl_ms, err);
	if (r >= 0 && (it = member(obj, "grace")))
		r = parse_duration(it, "limits.grace", &p->grace_ms, err);
	if (r >= 0 && (it = member(obj, "rlimits")))
		r = parse_rlimits(it, p, err);
	if (r >= 0 && (it = member(obj, "output")))
		r = parse_bytes(it, "limits.output", &p->output_max, err);
	/* Through cgroup v2 where a delegated cgroup has the controllers
	 * (launcher/supervisor/cgroup.c); else said, and recorded. */
	if (r >= 0 && (it = member(obj, "memory")))
		r = parse_bytes(it, "limits.memory", &p->memory_max, err);
	if (r >= 0 && (it = member(obj, "cpu")))
		r = parse_cpu(it, &p->cpu_quota_us, err);
	if (r >= 0 && (it = member(obj, "pids"))) {
		r = policy_json_uint(it, "limits.pids", 4194304, &p->pids_max, err);
		if (r >= 0 && p->pids_max == 0)
			r = err_set(err, EINVAL, "limits.pids: must be from 1 to 4194304");
	}
	return r < 0 ? r : 0;
}

/* "evidence": {"witness": PATH}, where the checkpoints also go (docs/evidence.md,
 * "A second witness"); where PATH may lie is the supervisor's to check. */
static int parse_evidence(const cJSON *obj, struct policy *p, struct err *err)
{
	static const char *const keys[] = {"witness", NULL};
	const cJSON *it;
	int r;

	r = policy_json_object(obj, "evidence", err);
	if (r >= 0)
		r = policy_json_check_keys(obj, keys, "evidence", NULL, err);
	if (r >= 0 && (it = member(obj, "witness")))
		r = policy_json_strdup(it, "evidence.witness", &p->evidence_witness, err);
	return r < 0 ? r : 0;
}

static int parse_root(const cJSON *root, struct policy *p, struct policy_parse_info *info,
		      struct err *err)
{
	static const char *const keys[] = {
	    "version",	   "namespaces", "hostname", "user",	    "cwd",     "network",
	    "environment", "mounts",	 "protect",  "limits",	    "seccomp", "landlock",
	    "services",	   "ports",	 "evidence", "protect_git", NULL};
	const cJSON *it;
	int r;

	if (!cJSON_IsObject(root))
		return err_set(err, EINVAL, "(root): must be an object");
	/* The version first: a newer policy may well have keys we do not know. */
	r = parse_version(root, err);
	if (r >= 0)
		r = policy_json_check_keys(root, keys, "(root)", NULL, err);
	if (r >= 0 && (it = member(root, "namespaces")))
		r = parse_namespaces(it, p, err);
	if (r >= 0 && (it = member(root, "hostname"))) {
		info->hostname_set = true;
		r = policy_json_strdup(it, "hostname", &p->hostname, err);
	}
	if (r >= 0 && (it = member(root, "user")))
		r = parse_user(it, p, err);
	if (r >= 0 && (it = member(root, "cwd")))
		r = policy_json_strdup(it, "cwd", &p->cwd, err);
	if (r >= 0 && (it = member(root, "network")))
		r = policy_parse_network(it, p, err);
	if (r >= 0 && (it = member(root, "environment")))
		r = parse_environment(it, p, err);
	if (r >= 0 && (it = member(root, "mounts")))
		r = policy_parse_mounts(it, p, err);
	if (r >= 0 && (it = member(root, "protect")))
		r = parse_protect(it, p, err);
	if (r >= 0 && (it = member(root, "protect_git")))
		r = parse_protect_git(it, p, err);
	if (r >= 0 && (it = member(root, "limits")))
		r = parse_limits(it, p, err);
	if (r >= 0 && (it = member(root, "seccomp")))
		r = policy_parse_seccomp(it, p, info, err);
	if (r >= 0 && (it = member(root, "landlock")))
		r = policy_parse_landlock(it, p, err);
	if (r >= 0 && (it = member(root, "services")))
		r = policy_parse_services(it, p, err);
	if (r >= 0 && (it = member(root, "ports")))
		r = policy_parse_ports(it, p, err);
	if (r >= 0 && (it = member(root, "evidence")))
		r = parse_evidence(it, p, err);
	return r < 0 ? r : 0;
}

static int policy_new(struct policy **out, struct err *err)
{
	cleanup_policy struct policy *p = calloc(1, sizeof(*p));

	if (!p)
		return oom(err);
	p->namespaces = POLICY_NS_ALL;
	p->hostname = strdup("paddock");
	p->cwd = strdup("/");
	if (!p->hostname || !p->cwd)
		return oom(err);
	p->network = POLICY_NET_NONE;
	p->env_clear = true;
	p->grace_ms = 2000;
	p->net_hold_ms = POLICY_NET_HOLD_DEFAULT_MS;
	p->output_max = POLICY_OUTPUT_DEFAULT;
	p->seccomp_profile = POLICY_SECCOMP_DEFAULT;
	p->seccomp_default_action = POLICY_SECCOMP_ERRNO;
	p->seccomp_errno = EPERM;
	p->landlock_mode = POLICY_LANDLOCK_BEST_EFFORT;
	*out = take_ptr(&p);
	return 0;
}

int policy_load_buffer(const char *buf, size_t len, const struct policy_vars *vars,
		       struct policy **out, struct err *err)
{
	cleanup_cjson cJSON *root = NULL;
	cleanup_policy struct policy *p = NULL;
	struct policy_parse_info info = {0};
	unsigned char digest[SHA256_DIGEST_LEN];
	int r;

	r = policy_json_parse(buf, len, &root, err);
	if (r >= 0)
		r = policy_new(&p, err);
	if (r >= 0)
		r = parse_root(root, p, &info, err);
	if (r >= 0)
		r = policy_validate(p, &info, vars, err);
	if (r < 0)
		return r;
	/* The digest names the exact bytes the caller has, not a re-rendering. */
	sha256(buf, len, digest);
	sha256_hex(digest, p->sha256);
	*out = take_ptr(&p);
	return 0;
}

static void free_strv(char **v, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(v[i]);
	free(v);
}

static void free_rules(struct policy_syscall_rule *v, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(v[i].name);
	free(v);
}

void policy_free(struct policy *p)
{
	if (!p)
		return;
	free(p->hostname);
	free(p->cwd);
	free_strv(p->env_keep, p->n_env_keep);
	free_strv(p->env_set, p->n_env_set);
	for (size_t i = 0; i < p->n_mounts; i++) {
		free(p->mounts[i].source);
		free(p->mounts[i].target);
		free(p->mounts[i].link);
	}
	free(p->mounts);
	free_strv(p->protect, p->n_protect);
	free_strv(p->protect_rw, p->n_protect_rw);
	free_strv(p->protect_ro, p->n_protect_ro);
	free_rules(p->seccomp_allow, p->n_seccomp_allow);
	free_rules(p->seccomp_deny, p->n_seccomp_deny);
	for (size_t i = 0; i < p->n_services; i++) {
		free(p->services[i].name);
		free_strv(p->services[i].argv, p->services[i].argc);
	}
	free(p->services);
	for (size_t i = 0; i < p->n_ports; i++) {
		free(p->ports[i].host_addr);
		free(p->ports[i].service);
	}
	free(p->ports);
	for (size_t i = 0; i < p->n_net_allow; i++) {
		struct policy_net_rule *r = &p->net_allow[i];

		free(r->host);
		for (size_t g = 0; g < r->n_grants; g++) {
			struct policy_net_grant *gr = &r->grants[g];

			for (size_t k = 0; k < gr->n_methods; k++)
				free(gr->methods[k]);
			free(gr->path);
			for (size_t v = 0; v < gr->n_vars; v++) {
				free(gr->vars[v].name);
				free_strv(gr->vars[v].values, gr->vars[v].n_values);
			}
			policy_credential_free(gr->credential);
			policy_price_free(&gr->price);
		}
		free(r->grants);
		policy_meter_free(r->meter);
		policy_jobs_free(r->jobs);
		free(r->fallback);
	}
	free(p->net_allow);
	for (size_t i = 0; i < p->n_net_resolve; i++) {
		free(p->net_resolve[i].host);
		free(p->net_resolve[i].addr);
	}
	free(p->net_resolve);
	free(p->net_secrets);
	free(p->evidence_witness);
	policy_actions_free(p->net_actions);
	free(p->landlock_tcp_bind);
	free(p->landlock_tcp_connect);
	free(p);
}
