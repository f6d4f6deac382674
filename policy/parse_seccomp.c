/* Walk "seccomp": the profile, the action for calls the profile does not
 * allow, and the policy's own allow and deny lists. Whether a syscall name
 * exists is the launcher's question (libseccomp knows the architecture);
 * here only its form is checked. Cross-field rules are in validate.c. */
#include "parse.h"

#include <stdlib.h>
#include <string.h>

#include "json.h"
#include "validate.h"

/* Longer than any syscall name (the longest are about 25 bytes). */
#define SYSCALL_NAME_MAX 64

static const cJSON *member(const cJSON *obj, const char *key)
{
	return cJSON_GetObjectItemCaseSensitive(obj, key);
}

static int oom(struct err *err)
{
	return err_set(err, ENOMEM, "out of memory");
}

static int parse_profile(const cJSON *it, struct policy *p, struct err *err)
{
	const char *s;
	int r;

	r = policy_json_string(it, "seccomp.profile", &s, err);
	if (r < 0)
		return r;
	if (strcmp(s, "default") == 0)
		p->seccomp_profile = POLICY_SECCOMP_DEFAULT;
	else if (strcmp(s, "none") == 0)
		p->seccomp_profile = POLICY_SECCOMP_NONE;
	else
		return err_set(err, EINVAL, "seccomp.profile: must be \"default\" or \"none\"");
	return 0;
}

static int parse_action(const cJSON *it, struct policy *p, struct err *err)
{
	const char *s;
	int r;

	r = policy_json_string(it, "seccomp.default_action", &s, err);
	if (r < 0)
		return r;
	if (strcmp(s, "errno") == 0)
		p->seccomp_default_action = POLICY_SECCOMP_ERRNO;
	else if (strcmp(s, "kill") == 0)
		p->seccomp_default_action = POLICY_SECCOMP_KILL;
	else if (strcmp(s, "log") == 0)
		p->seccomp_default_action = POLICY_SECCOMP_LOG;
	else
		return err_set(err, EINVAL,
			       "seccomp.default_action: must be \"errno\", \"kill\" or \"log\"");
	return 0;
}

/* An errno by name: numbers differ between architectures, names do not. */
static int parse_errno(const cJSON *it, const char *path, int *out, struct err *err)
{
	const char *s;
	int r;

	r = policy_json_string(it, path, &s, err);
	if (r < 0)
		return r;
	*out = policy_errno_value(s);
	if (!*out)
		return err_set(err, EINVAL, "%s: unknown errno name %s (see paddock-policy(5))",
			       path, QUOTE(s));
	return 0;
}

/* [a-z0-9_]+: every Linux syscall name has this form, and so nothing else
 * (paths, spaces, upper case) reaches libseccomp's name lookup. */
static int parse_name(const cJSON *it, const char *path, char **dst, struct err *err)
{
	const char *s;
	size_t len;
	int r;

	r = policy_json_string(it, path, &s, err);
	if (r < 0)
		return r;
	len = strlen(s);
	if (len == 0 || len > SYSCALL_NAME_MAX ||
	    strspn(s, "abcdefghijklmnopqrstuvwxyz0123456789_") != len)
		return err_set(err, EINVAL,
			       "%s: invalid syscall name %s (1 to %d lower-case letters, digits "
			       "or '_')",
			       path, QUOTE(s), SYSCALL_NAME_MAX);
	return policy_json_strdup(it, path, dst, err);
}

static int parse_allow(const cJSON *arr, struct policy *p, struct err *err)
{
	char path[JPATH_MAX];
	const cJSON *it;
	int r;

	r = policy_json_array(arr, "seccomp.allow", err);
	if (r < 0)
		return r;
	p->seccomp_allow = calloc((size_t)cJSON_GetArraySize(arr) + 1, sizeof(*p->seccomp_allow));
	if (!p->seccomp_allow)
		return oom(err);
	cJSON_ArrayForEach(it, arr) {
		struct policy_syscall_rule *rule = &p->seccomp_allow[p->n_seccomp_allow];

		snprintf(path, sizeof(path), "seccomp.allow[%zu]", p->n_seccomp_allow);
		rule->index = p->n_seccomp_allow;
		r = parse_name(it, path, &rule->name, err);
		if (r < 0)
			return r;
		p->n_seccomp_allow++;
	}
	return 0;
}

/* A deny entry: a bare name (EPERM) or {"syscall": name, "errno": name}. */
static int parse_deny_entry(const cJSON *it, const char *path, struct policy_syscall_rule *rule,
			    struct err *err)
{
	size_t i = rule->index;
	static const char *const keys[] = {"syscall", "errno", NULL};
	char sub[JPATH_MAX];
	const cJSON *v;
	int r;

	rule->errno_value = EPERM;
	if (cJSON_IsString(it))
		return parse_name(it, path, &rule->name, err);
	if (!cJSON_IsObject(it))
		return err_set(err, EINVAL, "%s: must be a syscall name or an object", path);
	r = policy_json_check_keys(it, keys, path, NULL, err);
	if (r < 0)
		return r;
	v = member(it, "syscall");
	if (!v)
		return err_set(err, EINVAL, "%s: missing key \"syscall\"", path);
	snprintf(sub, sizeof(sub), "seccomp.deny[%zu].syscall", i);
	r = parse_name(v, sub, &rule->name, err);
	if (r >= 0 && (v = member(it, "errno"))) {
		snprintf(sub, sizeof(sub), "seccomp.deny[%zu].errno", i);
		r = parse_errno(v, sub, &rule->errno_value, err);
	}
	return r < 0 ? r : 0;
}

static int parse_deny(const cJSON *arr, struct policy *p, struct err *err)
{
	char path[JPATH_MAX];
	const cJSON *it;
	int r;

	r = policy_json_array(arr, "seccomp.deny", err);
	if (r < 0)
		return r;
	p->seccomp_deny = calloc((size_t)cJSON_GetArraySize(arr) + 1, sizeof(*p->seccomp_deny));
	if (!p->seccomp_deny)
		return oom(err);
	cJSON_ArrayForEach(it, arr) {
		struct policy_syscall_rule *rule = &p->seccomp_deny[p->n_seccomp_deny];

		snprintf(path, sizeof(path), "seccomp.deny[%zu]", p->n_seccomp_deny);
		rule->index = p->n_seccomp_deny;
		/* Counted before parsing so that policy_free() sees a name
		 * that was copied before a later error. */
		p->n_seccomp_deny++;
		r = parse_deny_entry(it, path, rule, err);
		if (r < 0)
			return r;
	}
	return 0;
}

int policy_parse_seccomp(const cJSON *obj, struct policy *p, struct policy_parse_info *info,
			 struct err *err)
{
	static const char *const keys[] = {"profile", "default_action", "errno",
					   "allow",   "deny",		NULL};
	const cJSON *it;
	int r;

	r = policy_json_object(obj, "seccomp", err);
	if (r >= 0)
		r = policy_json_check_keys(obj, keys, "seccomp", NULL, err);
	if (r >= 0 && (it = member(obj, "profile")))
		r = parse_profile(it, p, err);
	if (r >= 0 && (it = member(obj, "default_action"))) {
		info->seccomp_default_action_set = true;
		r = parse_action(it, p, err);
	}
	if (r >= 0 && (it = member(obj, "errno"))) {
		info->seccomp_errno_set = true;
		r = parse_errno(it, "seccomp.errno", &p->seccomp_errno, err);
	}
	if (r >= 0 && (it = member(obj, "allow"))) {
		info->seccomp_allow_set = true;
		r = parse_allow(it, p, err);
	}
	if (r >= 0 && (it = member(obj, "deny"))) {
		info->seccomp_deny_set = true;
		r = parse_deny(it, p, err);
	}
	return r < 0 ? r : 0;
}
