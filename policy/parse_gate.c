/* The release gate's fields of "network" (docs/network.md, "Release
 * gate"): "publish" and "private" on a rule, "hold" on the network. */
#include "parse.h"

#include <string.h>

#include "json.h"

int policy_parse_gate_rule(const cJSON *obj, const char *path, struct policy_net_rule *rule,
			   struct err *err)
{
	const cJSON *pub = cJSON_GetObjectItemCaseSensitive(obj, "publish");
	const cJSON *priv = cJSON_GetObjectItemCaseSensitive(obj, "private");
	char sub[JPATH_MAX + 16];
	int r;

	if (pub) {
		snprintf(sub, sizeof(sub), "%s.publish", path);
		r = policy_json_bool(pub, sub, &rule->publish, err);
		if (r < 0)
			return r;
		/* The gate digests the body: only a plain HTTP request shows
		 * one (TLS is not terminated, a tcp stream has no end). */
		if (rule->publish && rule->protocol != POLICY_NET_HTTP)
			return err_set(err, EINVAL,
				       "%s: only on an \"http\" rule: the mediator must see the "
				       "request's body to digest it, and a \"%s\" connection does "
				       "not show it",
				       sub, policy_net_proto_name(rule->protocol));
	}
	if (priv) {
		snprintf(sub, sizeof(sub), "%s.private", path);
		r = policy_json_bool(priv, sub, &rule->private, err);
		if (r < 0)
			return r;
	}
	if (rule->publish && rule->private)
		return err_set(err, EINVAL,
			       "%s: a rule is either a publication sink (\"publish\") or a private "
			       "source (\"private\"), not both",
			       path);
	return 0;
}

int policy_parse_gate_hold(const cJSON *it, struct policy *p, struct err *err)
{
	const char *s;
	uint64_t ms;
	int r;

	if (!it)
		return 0;
	r = policy_json_string(it, "network.hold", &s, err);
	if (r < 0)
		return r;
	r = policy_parse_duration(s, &ms);
	if (r < 0 || ms > POLICY_NET_HOLD_MAX_MS)
		return err_set(err, EINVAL,
			       "network.hold: %s is not a duration from 0s to 10m (e.g. 5s, 500ms)",
			       QUOTE(s));
	p->net_hold_ms = ms;
	return 0;
}
