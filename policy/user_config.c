/* The per-user defaults file, $XDG_CONFIG_HOME/paddock/config.json
 * (docs/usage.md, "Defaults"): what paddock run takes as if it were on the
 * command line before the caller's own options. Read as strictly as a
 * policy: unknown keys, wrong types and bad values are one-line errors. */
#include "policy.h"

#include <stdlib.h>
#include <string.h>

#include "../include/cleanup.h"
#include "json.h"

void policy_user_config_free(struct policy_user_config *c)
{
	free(c->policy);
	for (size_t i = 0; i < c->n_binds; i++)
		free(c->binds[i]);
	free(c->binds);
	for (size_t i = 0; i < c->n_env; i++)
		free(c->env[i]);
	free(c->env);
	free(c->ro);
	memset(c, 0, sizeof(*c));
}

static int add_strings(const cJSON *arr, const char *path, char ***list, size_t *n, bool **ro,
		       bool readonly, bool names, struct err *err)
{
	const cJSON *it;
	size_t i = 0;
	int r = policy_json_array(arr, path, err);

	if (r < 0)
		return r;
	cJSON_ArrayForEach(it, arr) {
		char sub[JPATH_MAX];
		const char *s;
		char **grown;

		snprintf(sub, sizeof(sub), "%s[%zu]", path, i++);
		r = policy_json_string(it, sub, &s, err);
		if (r < 0)
			return r;
		if (names && !policy_env_name_ok(s, strlen(s)))
			return err_set(err, EINVAL,
				       "%s: %s is not a variable name (A-Z a-z 0-9 _, not starting "
				       "with a digit)",
				       sub, QUOTE(s));
		if (!names && s[0] != '/' && strncmp(s, "~/", 2) != 0)
			return err_set(err, EINVAL,
				       "%s: %s: a bind's source must be absolute or start with ~/",
				       sub, QUOTE(s));
		if (!names && (strchr(s, ':') ? strchr(s, ':')[1] != '/' : false))
			return err_set(err, EINVAL, "%s: %s: expected SRC or SRC:/DST", sub,
				       QUOTE(s));
		grown = realloc(*list, (*n + 1) * sizeof(**list));
		if (!grown)
			return err_set(err, ENOMEM, "out of memory");
		*list = grown;
		if (ro) {
			bool *g = realloc(*ro, (*n + 1) * sizeof(**ro));

			if (!g)
				return err_set(err, ENOMEM, "out of memory");
			*ro = g;
			(*ro)[*n] = readonly;
		}
		(*list)[*n] = strdup(s);
		if (!(*list)[*n])
			return err_set(err, ENOMEM, "out of memory");
		(*n)++;
	}
	return 0;
}

int policy_user_config_parse(const char *text, size_t len, struct policy_user_config *out,
			     struct err *err)
{
	static const char *const keys[] = {"policy", "ttl", "binds", "ro_binds", "env", NULL};
	cleanup_cjson cJSON *root = NULL;
	const cJSON *it;
	int r;

	memset(out, 0, sizeof(*out));
	r = policy_json_parse(text, len, &root, err);
	if (r < 0)
		return r;
	if (!cJSON_IsObject(root))
		return err_set(err, EINVAL, "(root): must be an object");
	r = policy_json_check_keys(root, keys, "(root)",
				   " (known: policy, ttl, binds, ro_binds, env)", err);
	if (r < 0)
		return r;
	if ((it = cJSON_GetObjectItemCaseSensitive(root, "policy")) &&
	    (r = policy_json_strdup(it, "policy", &out->policy, err)) < 0)
		goto fail;
	if (out->policy && !out->policy[0]) {
		r = err_set(err, EINVAL, "policy: must not be empty");
		goto fail;
	}
	if ((it = cJSON_GetObjectItemCaseSensitive(root, "ttl"))) {
		const char *s;

		if ((r = policy_json_string(it, "ttl", &s, err)) < 0)
			goto fail;
		if (policy_parse_duration(s, &out->ttl_ms) < 0 || out->ttl_ms == 0) {
			r = err_set(err, EINVAL, "ttl: %s: invalid duration (use e.g. 2s, 5m, 1h)",
				    QUOTE(s));
			goto fail;
		}
		out->has_ttl = true;
	}
	if ((it = cJSON_GetObjectItemCaseSensitive(root, "binds")) &&
	    (r = add_strings(it, "binds", &out->binds, &out->n_binds, &out->ro, false, false,
			     err)) < 0)
		goto fail;
	if ((it = cJSON_GetObjectItemCaseSensitive(root, "ro_binds")) &&
	    (r = add_strings(it, "ro_binds", &out->binds, &out->n_binds, &out->ro, true, false,
			     err)) < 0)
		goto fail;
	if ((it = cJSON_GetObjectItemCaseSensitive(root, "env")) &&
	    (r = add_strings(it, "env", &out->env, &out->n_env, NULL, false, true, err)) < 0)
		goto fail;
	return 0;
fail:
	policy_user_config_free(out);
	return r;
}
