/* Walk "landlock": whether Landlock is required, and the TCP ports that
 * may be bound and connected to. Duplicate ports are found by validate.c. */
#include "parse.h"

#include <stdlib.h>
#include <string.h>

#include "json.h"

static const cJSON *member(const cJSON *obj, const char *key)
{
	return cJSON_GetObjectItemCaseSensitive(obj, key);
}

static int parse_mode(const cJSON *it, struct policy *p, struct err *err)
{
	const char *s;
	int r;

	r = policy_json_string(it, "landlock.mode", &s, err);
	if (r < 0)
		return r;
	if (strcmp(s, "required") == 0)
		p->landlock_mode = POLICY_LANDLOCK_REQUIRED;
	else if (strcmp(s, "best-effort") == 0)
		p->landlock_mode = POLICY_LANDLOCK_BEST_EFFORT;
	else
		return err_set(err, EINVAL,
			       "landlock.mode: must be \"required\" or \"best-effort\"");
	return 0;
}

/* An array of TCP ports, 1 to 65535. Port 0 asks bind(2) for any free
 * port, which a rule cannot name. */
static int parse_ports(const cJSON *arr, const char *path, uint16_t **out, size_t *n,
		       struct err *err)
{
	char sub[JPATH_MAX];
	const cJSON *it;
	uint64_t v;
	int r;

	r = policy_json_array(arr, path, err);
	if (r < 0)
		return r;
	*out = calloc((size_t)cJSON_GetArraySize(arr) + 1, sizeof(**out));
	if (!*out)
		return err_set(err, ENOMEM, "out of memory");
	cJSON_ArrayForEach(it, arr) {
		snprintf(sub, sizeof(sub), "%s[%zu]", path, *n);
		r = policy_json_uint(it, sub, 65535, &v, err);
		if (r >= 0 && v == 0)
			r = -EINVAL;
		if (r < 0)
			return err_set(err, EINVAL, "%s: must be an integer from 1 to 65535", sub);
		(*out)[(*n)++] = (uint16_t)v;
	}
	return 0;
}

static int parse_tcp(const cJSON *obj, struct policy *p, struct err *err)
{
	static const char *const keys[] = {"bind", "connect", NULL};
	const cJSON *it;
	int r;

	r = policy_json_object(obj, "landlock.tcp", err);
	if (r >= 0)
		r = policy_json_check_keys(obj, keys, "landlock.tcp", NULL, err);
	if (r < 0)
		return r;
	/* Present, even empty: TCP bind and connect are restricted, and a
	 * list left out allows no port at all. */
	p->landlock_tcp = true;
	if ((it = member(obj, "bind")))
		r = parse_ports(it, "landlock.tcp.bind", &p->landlock_tcp_bind,
				&p->n_landlock_tcp_bind, err);
	if (r >= 0 && (it = member(obj, "connect")))
		r = parse_ports(it, "landlock.tcp.connect", &p->landlock_tcp_connect,
				&p->n_landlock_tcp_connect, err);
	return r < 0 ? r : 0;
}

int policy_parse_landlock(const cJSON *obj, struct policy *p, struct err *err)
{
	static const char *const keys[] = {"mode", "tcp", NULL};
	const cJSON *it;
	int r;

	r = policy_json_object(obj, "landlock", err);
	if (r >= 0)
		r = policy_json_check_keys(obj, keys, "landlock", NULL, err);
	if (r >= 0 && (it = member(obj, "mode")))
		r = parse_mode(it, p, err);
	if (r >= 0 && (it = member(obj, "tcp")))
		r = parse_tcp(it, p, err);
	return r < 0 ? r : 0;
}
