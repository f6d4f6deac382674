/* Provider adapters (docs/network.md, "Adapters"): an http rule's
 * "adapter" (the request shape the mediator parses into the one action
 * schema), "fallback" (the adapter rule it stands in for), and
 * "network.actions", the one grant every adapter's actions are checked
 * against. A fallback goes through the same grant and the same ledger as
 * the rule it stands in for: one with another budget, or none where that
 * rule has one, is refused here, before anything runs. */
#include "parse.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "json.h"

static const cJSON *member(const cJSON *obj, const char *key)
{
	return cJSON_GetObjectItemCaseSensitive(obj, key);
}

const char *policy_adapter_name(enum policy_adapter a)
{
	return a == POLICY_ADAPTER_OPENAI      ? "openai"
	       : a == POLICY_ADAPTER_ANTHROPIC ? "anthropic"
					       : "none";
}

int policy_parse_adapter(const cJSON *obj, const char *path, struct policy_net_rule *rule,
			 struct err *err)
{
	const cJSON *a = member(obj, "adapter"), *f = member(obj, "fallback");
	char sub[JPATH_MAX + 32];
	const char *s;
	int r;

	if (!a && !f)
		return 0;
	snprintf(sub, sizeof(sub), "%s.adapter", path);
	if (!a)
		return err_set(err, EINVAL, "%s.fallback: only on a rule with an \"adapter\"",
			       path);
	if (rule->protocol != POLICY_NET_HTTP)
		return err_set(err, EINVAL,
			       "%s: only on an \"http\" rule: the mediator does not see the "
			       "requests of a \"%s\" one",
			       sub, policy_net_proto_name(rule->protocol));
	r = policy_json_string(a, sub, &s, err);
	if (r < 0)
		return r;
	if (strcmp(s, "openai") == 0)
		rule->adapter = POLICY_ADAPTER_OPENAI;
	else if (strcmp(s, "anthropic") == 0)
		rule->adapter = POLICY_ADAPTER_ANTHROPIC;
	else
		return err_set(err, EINVAL, "%s: unknown adapter %s (known: openai, anthropic)",
			       sub, QUOTE(s));
	if (!f)
		return 0;
	snprintf(sub, sizeof(sub), "%s.fallback", path);
	r = policy_json_string(f, sub, &s, err);
	if (r < 0)
		return r;
	if (!policy_net_host_valid(s, false))
		return err_set(err, EINVAL, "%s: %s is not a host name", sub, QUOTE(s));
	rule->fallback = strdup(s);
	return rule->fallback ? 0 : err_set(err, ENOMEM, "out of memory");
}

static int names(const cJSON *arr, const char *path, char ***out, size_t *n, struct err *err)
{
	const cJSON *it;
	int r = policy_json_array(arr, path, err);

	if (r < 0)
		return r;
	if (cJSON_GetArraySize(arr) > POLICY_ACTIONS_MAX)
		return err_set(err, EINVAL, "%s: at most %d names", path, POLICY_ACTIONS_MAX);
	*out = calloc(POLICY_ACTIONS_MAX, sizeof(char *));
	if (!*out)
		return err_set(err, ENOMEM, "out of memory");
	cJSON_ArrayForEach(it, arr) {
		char sub[JPATH_MAX + 32];
		const char *s;
		size_t len;

		snprintf(sub, sizeof(sub), "%s[%zu]", path, *n);
		r = policy_json_string(it, sub, &s, err);
		if (r < 0)
			return r;
		len = strlen(s);
		if (len == 0 || len > 64 ||
		    strspn(s,
			   "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.:-") !=
			len)
			return err_set(err, EINVAL,
				       "%s: %s is not a name (1 to 64 of A-Z, a-z, 0-9, '_', '.', "
				       "':', '-')",
				       sub, QUOTE(s));
		(*out)[*n] = strdup(s);
		if (!(*out)[*n])
			return err_set(err, ENOMEM, "out of memory");
		(*n)++;
	}
	return 0;
}

void policy_actions_free(struct policy_net_actions *a)
{
	if (!a)
		return;
	for (size_t i = 0; i < a->n_models; i++)
		free(a->models[i]);
	for (size_t i = 0; i < a->n_tools; i++)
		free(a->tools[i]);
	free(a->models);
	free(a->tools);
	free(a);
}

int policy_parse_actions(const cJSON *it, struct policy *p, struct err *err)
{
	static const char *const keys[] = {"models", "tools", NULL};
	struct policy_net_actions *a;
	int r = policy_json_object(it, "network.actions", err);

	if (r >= 0)
		r = policy_json_check_keys(it, keys, "network.actions", " (known: models, tools)",
					   err);
	if (r < 0)
		return r;
	if (!member(it, "models"))
		return err_set(err, EINVAL, "network.actions: missing key \"models\"");
	a = calloc(1, sizeof(*a));
	if (!a)
		return err_set(err, ENOMEM, "out of memory");
	p->net_actions = a;
	r = names(member(it, "models"), "network.actions.models", &a->models, &a->n_models, err);
	if (r >= 0 && member(it, "tools"))
		r = names(member(it, "tools"), "network.actions.tools", &a->tools, &a->n_tools,
			  err);
	return r;
}

/* The rule a fallback names: an adapter rule, not itself a fallback. */
static const struct policy_net_rule *primary(const struct policy *p, const char *host)
{
	for (size_t i = 0; i < p->n_net_allow; i++)
		if (strcmp(p->net_allow[i].host, host) == 0 && p->net_allow[i].adapter &&
		    !p->net_allow[i].fallback)
			return &p->net_allow[i];
	return NULL;
}

int policy_check_adapters(const struct policy *p, struct err *err)
{
	for (size_t i = 0; i < p->n_net_allow; i++) {
		const struct policy_net_rule *r = &p->net_allow[i], *pr;

		if (!r->adapter)
			continue;
		if (!p->net_actions)
			return err_set(err, EINVAL,
				       "network.allow[%zu].adapter: needs \"network.actions\" (the "
				       "grant its actions are checked against)",
				       i);
		if (!r->fallback)
			continue;
		pr = primary(p, r->fallback);
		if (!pr)
			return err_set(
			    err, EINVAL,
			    "network.allow[%zu].fallback: %s is not the host of an adapter "
			    "rule (that is not a fallback itself)",
			    i, QUOTE(r->fallback));
		if (!pr->meter != !r->meter ||
		    (pr->meter && strcmp(pr->meter->budget, r->meter->budget) != 0))
			return err_set(
			    err, EINVAL,
			    "network.allow[%zu].fallback: must be metered against the same "
			    "budget as %s (a fallback goes through the same ledger)",
			    i, QUOTE(r->fallback));
	}
	return 0;
}

bool policy_has_adapter(const struct policy *p)
{
	for (size_t i = 0; i < p->n_net_allow; i++)
		if (p->net_allow[i].adapter)
			return true;
	return false;
}
