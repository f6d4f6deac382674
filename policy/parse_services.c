/* Walk "services": what paddock-init starts before the main command and
 * may keep running after it until a lease ends (docs/sessions.md). The
 * cross-checks with "limits" and "mounts" are validate.c's. */
#include "parse.h"

#include <stdlib.h>
#include <string.h>

#include "json.h"

#define SERVICES_MAX 16 /* SESSION_LEASES_MAX: each gets a registry slot */
#define ARGV_MAX     256

/* [A-Za-z0-9_.-]{1,64}, not "." or "..": names appear in reports and
 * protocol words. */
static bool name_ok(const char *s)
{
	size_t n = strlen(s);

	if (n == 0 || n > 64 || strcmp(s, ".") == 0 || strcmp(s, "..") == 0)
		return false;
	return strspn(s, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_.-") == n;
}

static int parse_argv(const cJSON *arr, const char *path, struct policy_service *sv,
		      struct err *err)
{
	char sub[JPATH_MAX + 24];
	const cJSON *it;
	int n, r;

	r = policy_json_array(arr, path, err);
	if (r < 0)
		return r;
	n = cJSON_GetArraySize(arr);
	if (n == 0 || n > ARGV_MAX)
		return err_set(err, EINVAL, "%s: must hold 1 to %d strings", path, ARGV_MAX);
	sv->argv = calloc((size_t)n + 1, sizeof(*sv->argv));
	if (!sv->argv)
		return err_set(err, ENOMEM, "out of memory");
	cJSON_ArrayForEach(it, arr) {
		snprintf(sub, sizeof(sub), "%s[%zu]", path, sv->argc);
		r = policy_json_strdup(it, sub, &sv->argv[sv->argc], err);
		if (r < 0)
			return r;
		sv->argc++;
	}
	if (!sv->argv[0][0])
		return err_set(err, EINVAL, "%s[0]: must not be empty", path);
	return 0;
}

static int parse_lease(const cJSON *it, const char *path, struct policy_service *sv,
		       struct err *err)
{
	const char *s;
	int r = policy_json_string(it, path, &s, err);

	if (r < 0)
		return r;
	r = policy_parse_duration(s, &sv->lease_ms);
	if (r == -ERANGE)
		return err_set(err, EINVAL, "%s: more than 30 days", path);
	if (r < 0 || sv->lease_ms == 0)
		return err_set(err, EINVAL, "%s: must be a duration above zero (500ms, 2s, 5m, 1h)",
			       path);
	return 0;
}

static int parse_one(const cJSON *obj, size_t i, struct policy *p, struct err *err)
{
	static const char *const keys[] = {"name", "argv", "lease", NULL};
	struct policy_service *sv = &p->services[i];
	char path[48], sub[JPATH_MAX];
	const cJSON *it;
	int r;

	snprintf(path, sizeof(path), "services[%zu]", i);
	sv->index = i;
	r = policy_json_object(obj, path, err);
	if (r >= 0)
		r = policy_json_check_keys(obj, keys, path, NULL, err);
	if (r < 0)
		return r;
	snprintf(sub, sizeof(sub), "%s.name", path);
	if (!(it = cJSON_GetObjectItemCaseSensitive(obj, "name")))
		return err_set(err, EINVAL, "%s: missing key \"name\"", path);
	if ((r = policy_json_strdup(it, sub, &sv->name, err)) < 0)
		return r;
	if (!name_ok(sv->name))
		return err_set(err, EINVAL, "%s: must be 1 to 64 of A-Z a-z 0-9 _ . -", sub);
	for (size_t k = 0; k < i; k++)
		if (strcmp(p->services[k].name, sv->name) == 0)
			return err_set(err, EINVAL, "%s: \"%s\" is already services[%zu]", sub,
				       sv->name, k);
	snprintf(sub, sizeof(sub), "%s.argv", path);
	if (!(it = cJSON_GetObjectItemCaseSensitive(obj, "argv")))
		return err_set(err, EINVAL, "%s: missing key \"argv\"", path);
	if ((r = parse_argv(it, sub, sv, err)) < 0)
		return r;
	snprintf(sub, sizeof(sub), "%s.lease", path);
	if ((it = cJSON_GetObjectItemCaseSensitive(obj, "lease")))
		return parse_lease(it, sub, sv, err);
	return 0;
}

int policy_parse_services(const cJSON *arr, struct policy *p, struct err *err)
{
	const cJSON *it;
	size_t i = 0;
	int r;

	r = policy_json_array(arr, "services", err);
	if (r < 0)
		return r;
	if (cJSON_GetArraySize(arr) > SERVICES_MAX)
		return err_set(err, EINVAL, "services: at most %d services", SERVICES_MAX);
	p->services = calloc((size_t)cJSON_GetArraySize(arr) + 1, sizeof(*p->services));
	if (!p->services)
		return err_set(err, ENOMEM, "out of memory");
	cJSON_ArrayForEach(it, arr) {
		/* Counted first: a half-parsed entry is freed with the rest. */
		p->n_services = i + 1;
		r = parse_one(it, i++, p, err);
		if (r < 0)
			return r;
	}
	return 0;
}
