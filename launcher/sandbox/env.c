/* The workload's environment: cleared by default, then the policy's keep
 * list from the caller's environment, then its set list. */
#include "sandbox.h"

#include <stdlib.h>
#include <string.h>

void env_free(char **env)
{
	if (!env)
		return;
	for (char **e = env; *e; e++)
		free(*e);
	free(env);
}

static bool name_is(const char *entry, const char *name, size_t len)
{
	return strncmp(entry, name, len) == 0 && entry[len] == '=';
}

static bool kept(const struct policy *p, const char *entry)
{
	for (size_t i = 0; i < p->n_env_keep; i++) {
		const char *k = p->env_keep[i];
		size_t len = strlen(k);

		if (len && k[len - 1] == '*') {
			if (strncmp(entry, k, len - 1) == 0 && strchr(entry, '='))
				return true;
		} else if (name_is(entry, k, len)) {
			return true;
		}
	}
	return false;
}

/* Replace or append "NAME=..." in env (n entries, room for one more). */
static int put(char **env, size_t *n, const char *entry)
{
	size_t len = strcspn(entry, "=");
	char *copy = strdup(entry);

	if (!copy)
		return -ENOMEM;
	for (size_t i = 0; i < *n; i++) {
		if (name_is(env[i], entry, len)) {
			free(env[i]);
			env[i] = copy;
			return 0;
		}
	}
	env[(*n)++] = copy;
	return 0;
}

/* A mediated network: proxy-aware clients find the mediator's proxy by
 * these (docs/network.md); proxy-unaware ones reach it anyway through the
 * local routes. Set before the policy's own list, which may replace them. */
static const char *const proxy_env[] = {
    "HTTP_PROXY=http://127.0.0.1:3128", "HTTPS_PROXY=http://127.0.0.1:3128",
    "http_proxy=http://127.0.0.1:3128", "https_proxy=http://127.0.0.1:3128",
    "NO_PROXY=localhost,127.0.0.1,::1", "no_proxy=localhost,127.0.0.1,::1",
};
#define N_PROXY_ENV (sizeof(proxy_env) / sizeof(proxy_env[0]))

int env_build(const struct policy *p, char *const *caller_env, char *const *pass, size_t n_pass,
	      char ***out)
{
	size_t n_caller = 0, n = 0;
	char **env;

	while (caller_env && caller_env[n_caller])
		n_caller++;
	env = calloc(n_caller + p->n_env_set + N_PROXY_ENV + n_pass + 1, sizeof(*env));
	if (!env)
		return -ENOMEM;
	for (size_t i = 0; i < n_caller; i++) {
		if (!strchr(caller_env[i], '='))
			continue;
		if (p->env_clear && !kept(p, caller_env[i]))
			continue;
		if (put(env, &n, caller_env[i]) < 0)
			goto oom;
	}
	for (size_t i = 0; p->network == POLICY_NET_MEDIATED && i < N_PROXY_ENV; i++)
		if (put(env, &n, proxy_env[i]) < 0)
			goto oom;
	for (size_t i = 0; i < p->n_env_set; i++)
		if (put(env, &n, p->env_set[i]) < 0)
			goto oom;
	for (size_t i = 0; i < n_pass; i++)
		if (put(env, &n, pass[i]) < 0)
			goto oom;
	*out = env;
	return 0;
oom:
	env_free(env);
	return -ENOMEM;
}
