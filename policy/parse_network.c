/* Walk "network": "none", or {"mode": "none"|"mediated", "allow": [...],
 * "resolve": {...}} (docs/policy.md, docs/network.md). Names are checked
 * for form here; the mediator decides per connection. */
#include "parse.h"

#include <arpa/inet.h>
#include <stdlib.h>
#include <string.h>

#include "json.h"

static const cJSON *member(const cJSON *obj, const char *key)
{
	return cJSON_GetObjectItemCaseSensitive(obj, key);
}

const char *policy_net_proto_name(enum policy_net_proto p)
{
	return p == POLICY_NET_HTTP  ? "http"
	       : p == POLICY_NET_TLS ? "tls"
	       : p == POLICY_NET_TCP ? "tcp"
				     : "?";
}

bool policy_net_host_valid(const char *s, bool wildcard)
{
	size_t len = strlen(s), label = 0;
	bool letter = false; /* in the last label: "10.0.0.1" is an address */

	if (wildcard && strncmp(s, "*.", 2) == 0) {
		s += 2;
		len -= 2;
	}
	if (len == 0 || len > POLICY_NET_NAME_MAX)
		return false;
	for (size_t i = 0; i <= len; i++) {
		char c = s[i];

		if (c == '.' || c == '\0') {
			if (label == 0 || label > 63 || s[i - 1] == '-')
				return false;
			label = 0;
			if (c == '.')
				letter = false;
			continue;
		}
		letter |= c >= 'a' && c <= 'z';
		if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-'))
			return false;
		if (c == '-' && label == 0)
			return false;
		label++;
	}
	return letter;
}

bool policy_net_host_match(const char *pattern, const char *name)
{
	size_t pl, nl;

	if (strncmp(pattern, "*.", 2) != 0)
		return strcmp(pattern, name) == 0;
	/* "*.example.com" matches "a.example.com" and "a.b.example.com",
	 * never "example.com" or "badexample.com". */
	pl = strlen(pattern + 1); /* ".example.com" */
	nl = strlen(name);
	return nl > pl && strcmp(name + nl - pl, pattern + 1) == 0;
}

static int parse_proto(const cJSON *it, const char *path, enum policy_net_proto *out,
		       struct err *err)
{
	static const enum policy_net_proto all[] = {POLICY_NET_HTTP, POLICY_NET_TLS,
						    POLICY_NET_TCP};
	const char *s;
	int r = policy_json_string(it, path, &s, err);

	if (r < 0)
		return r;
	for (size_t i = 0; i < sizeof(all) / sizeof(all[0]); i++) {
		if (strcmp(s, policy_net_proto_name(all[i])) == 0) {
			*out = all[i];
			return 0;
		}
	}
	return err_set(err, EINVAL, "%s: unknown protocol %s (known: http, tls, tcp)", path,
		       QUOTE(s));
}

static int parse_ports(const cJSON *arr, const char *path, struct policy_net_rule *rule,
		       struct err *err)
{
	char sub[JPATH_MAX + 24];
	const cJSON *it;
	uint64_t v;
	int r;

	r = policy_json_array(arr, path, err);
	if (r < 0)
		return r;
	if (cJSON_GetArraySize(arr) == 0)
		return err_set(err, EINVAL, "%s: must name at least one port", path);
	if (cJSON_GetArraySize(arr) > POLICY_NET_PORTS_MAX)
		return err_set(err, EINVAL, "%s: at most %d ports", path, POLICY_NET_PORTS_MAX);
	cJSON_ArrayForEach(it, arr) {
		snprintf(sub, sizeof(sub), "%s[%zu]", path, rule->n_ports);
		r = policy_json_uint(it, sub, 65535, &v, err);
		if (r >= 0 && v == 0)
			r = -EINVAL;
		if (r < 0)
			return err_set(err, EINVAL, "%s: must be an integer from 1 to 65535", sub);
		/* The mediator's own: its DNS stub and its proxy. */
		if (v == 53 || v == 3128)
			return err_set(err, EINVAL,
				       "%s: port %u is the mediator's own (DNS stub, proxy); "
				       "name the service's real port",
				       sub, (unsigned)v);
		for (size_t i = 0; i < rule->n_ports; i++)
			if (rule->ports[i] == v)
				return err_set(err, EINVAL, "%s: port %u is listed twice", sub,
					       (unsigned)v);
		rule->ports[rule->n_ports++] = (uint16_t)v;
	}
	return 0;
}

static int parse_rule(const cJSON *obj, size_t index, struct policy_net_rule *rule, struct err *err)
{
	static const char *const keys[] = {"host", "ports", "protocol", NULL};
	char path[JPATH_MAX], sub[JPATH_MAX];
	const cJSON *host = member(obj, "host"), *ports = member(obj, "ports"),
		    *proto = member(obj, "protocol");
	const char *s;
	int r;

	snprintf(path, sizeof(path), "network.allow[%zu]", index);
	rule->index = index;
	r = policy_json_object(obj, path, err);
	if (r >= 0)
		r = policy_json_check_keys(obj, keys, path, " (known: host, ports, protocol)", err);
	if (r < 0)
		return r;
	if (!host || !ports || !proto)
		return err_set(err, EINVAL, "%s: missing key \"%s\"", path,
			       !host	? "host"
			       : !ports ? "ports"
					: "protocol");
	snprintf(sub, sizeof(sub), "network.allow[%zu].host", index);
	r = policy_json_string(host, sub, &s, err);
	if (r < 0)
		return r;
	if (!policy_net_host_valid(s, true))
		return err_set(err, EINVAL,
			       "%s: %s is not a host name (lower-case labels of a-z, 0-9 and '-', "
			       "optionally \"*.\" first; no addresses)",
			       sub, QUOTE(s));
	snprintf(sub, sizeof(sub), "network.allow[%zu].ports", index);
	r = parse_ports(ports, sub, rule, err);
	if (r < 0)
		return r;
	snprintf(sub, sizeof(sub), "network.allow[%zu].protocol", index);
	r = parse_proto(proto, sub, &rule->protocol, err);
	if (r < 0)
		return r;
	rule->host = strdup(s);
	return rule->host ? 0 : err_set(err, ENOMEM, "out of memory");
}

static int parse_allow(const cJSON *arr, struct policy *p, struct err *err)
{
	const cJSON *it;
	int r;

	r = policy_json_array(arr, "network.allow", err);
	if (r < 0)
		return r;
	if (cJSON_GetArraySize(arr) > POLICY_NET_RULES_MAX)
		return err_set(err, EINVAL, "network.allow: at most %d rules",
			       POLICY_NET_RULES_MAX);
	p->net_allow = calloc((size_t)cJSON_GetArraySize(arr) + 1, sizeof(*p->net_allow));
	if (!p->net_allow)
		return err_set(err, ENOMEM, "out of memory");
	cJSON_ArrayForEach(it, arr) {
		struct policy_net_rule *rule = &p->net_allow[p->n_net_allow];

		r = parse_rule(it, p->n_net_allow, rule, err);
		if (rule->host)
			p->n_net_allow++; /* owned by p from here on */
		if (r < 0)
			return r;
	}
	return 0;
}

static bool is_address(const char *s)
{
	unsigned char buf[16];

	return inet_pton(AF_INET, s, buf) == 1 || inet_pton(AF_INET6, s, buf) == 1;
}

static int parse_resolve(const cJSON *obj, struct policy *p, struct err *err)
{
	char sub[JPATH_MAX];
	const cJSON *it;
	const char *s;
	int r;

	r = policy_json_object(obj, "network.resolve", err);
	if (r >= 0)
		r = policy_json_check_dups(obj, "network.resolve", err);
	if (r < 0)
		return r;
	if (cJSON_GetArraySize(obj) > POLICY_NET_RESOLVE_MAX)
		return err_set(err, EINVAL, "network.resolve: at most %d names",
			       POLICY_NET_RESOLVE_MAX);
	p->net_resolve = calloc((size_t)cJSON_GetArraySize(obj) + 1, sizeof(*p->net_resolve));
	if (!p->net_resolve)
		return err_set(err, ENOMEM, "out of memory");
	cJSON_ArrayForEach(it, obj) {
		struct policy_net_resolve *e = &p->net_resolve[p->n_net_resolve];

		snprintf(sub, sizeof(sub), "network.resolve.%s", QUOTE(it->string));
		if (!policy_net_host_valid(it->string, false))
			return err_set(err, EINVAL, "%s: not a host name", sub);
		r = policy_json_string(it, sub, &s, err);
		if (r < 0)
			return r;
		if (!is_address(s))
			return err_set(err, EINVAL, "%s: %s is not an IPv4 or IPv6 address", sub,
				       QUOTE(s));
		e->host = strdup(it->string);
		e->addr = strdup(s);
		if (e->host || e->addr)
			p->n_net_resolve++;
		if (!e->host || !e->addr)
			return err_set(err, ENOMEM, "out of memory");
	}
	return 0;
}

static int check_resolve_named(const struct policy *p, struct err *err)
{
	for (size_t i = 0; i < p->n_net_resolve; i++) {
		bool named = false;

		for (size_t k = 0; k < p->n_net_allow && !named; k++)
			named = strcmp(p->net_allow[k].host, p->net_resolve[i].host) == 0;
		if (!named)
			return err_set(err, EINVAL,
				       "network.resolve.\"%s\": no rule of network.allow names it",
				       p->net_resolve[i].host);
	}
	return 0;
}

int policy_parse_network(const cJSON *it, struct policy *p, struct err *err)
{
	static const char *const keys[] = {"mode", "allow", "resolve", NULL};
	const cJSON *mode, *x;
	const char *s;
	int r;

	if (cJSON_IsString(it)) {
		mode = it;
	} else {
		r = policy_json_object(it, "network", err);
		if (r >= 0)
			r = policy_json_check_keys(it, keys, "network",
						   " (known: mode, allow, resolve)", err);
		if (r < 0)
			return r;
		mode = member(it, "mode");
		if (!mode)
			return err_set(err, EINVAL, "network: missing key \"mode\"");
	}
	r = policy_json_string(mode, cJSON_IsString(it) ? "network" : "network.mode", &s, err);
	if (r < 0)
		return r;
	if (strcmp(s, "host") == 0)
		return err_set(err, EINVAL,
			       "network: \"host\" is only available as --weaken host-net");
	if (strcmp(s, "none") == 0)
		p->network = POLICY_NET_NONE;
	else if (strcmp(s, "mediated") == 0)
		p->network = POLICY_NET_MEDIATED;
	else
		return err_set(err, EINVAL, "network: unknown mode %s (known: none, mediated)",
			       QUOTE(s));
	if (cJSON_IsString(it))
		return 0;
	if ((x = member(it, "allow"))) {
		if (p->network != POLICY_NET_MEDIATED)
			return err_set(err, EINVAL,
				       "network.allow: only with \"mode\": \"mediated\"");
		r = parse_allow(x, p, err);
		if (r < 0)
			return r;
	}
	if ((x = member(it, "resolve"))) {
		if (p->network != POLICY_NET_MEDIATED)
			return err_set(err, EINVAL,
				       "network.resolve: only with \"mode\": \"mediated\"");
		r = parse_resolve(x, p, err);
		if (r < 0)
			return r;
	}
	return check_resolve_named(p, err);
}
