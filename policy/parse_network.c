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

/* RFC 3986 pchar without pct-encoded: unreserved, sub-delims, ':' and
 * '@'. A '%' is refused (an encoded '/' or '.' would make one path two). */
static bool pchar(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
	       strchr("-._~!$&'()*+,;=:@", c) != NULL;
}

static bool var_name_ok(const char *s, size_t n)
{
	if (n == 0 || n > 32 || s[0] < 'a' || s[0] > 'z')
		return false;
	for (size_t i = 0; i < n; i++)
		if (!((s[i] >= 'a' && s[i] <= 'z') || (s[i] >= '0' && s[i] <= '9') || s[i] == '_'))
			return false;
	return true;
}

int policy_grant_path_check(const char *path, const char **why)
{
	size_t len = strlen(path);
	const char *seg = path + 1;

	*why = "must start with \"/\"";
	if (path[0] != '/')
		return -EINVAL;
	*why = "longer than 512 bytes";
	if (len > POLICY_GRANT_PATH_MAX)
		return -EINVAL;
	if (len == 1)
		return 0;
	for (;;) {
		size_t n = strcspn(seg, "/");

		*why = "has an empty segment (\"//\" or a trailing \"/\")";
		if (n == 0)
			return -EINVAL;
		if (seg[0] == '{') {
			*why = "has a {name} that is not a whole segment, or a bad name (a-z, 0-9, "
			       "'_', starting with a letter, at most 32)";
			if (seg[n - 1] != '}' || !var_name_ok(seg + 1, n - 2))
				return -EINVAL;
		} else {
			*why = "has \".\" or \"..\" as a segment";
			if ((n == 1 && seg[0] == '.') || (n == 2 && seg[0] == '.' && seg[1] == '.'))
				return -EINVAL;
			for (size_t i = 0; i < n; i++) {
				*why =
				    "has a character that is not a plain path character (no '%', "
				    "'?', '#', '{' or '}' in a literal segment)";
				if (!pchar(seg[i]))
					return -EINVAL;
			}
		}
		if (!seg[n])
			return 0;
		seg += n + 1;
	}
}

/* The {name}s of path: the n-th into name (at most size), or 0 when none. */
static size_t path_var(const char *path, size_t nth, char *name, size_t size)
{
	for (const char *s = strchr(path, '{'); s; s = strchr(s + 1, '{')) {
		const char *e = strchr(s, '}');

		if (!e)
			return 0;
		if (nth-- == 0) {
			size_t n = (size_t)(e - s - 1);

			if (n >= size)
				return 0;
			memcpy(name, s + 1, n);
			name[n] = '\0';
			return n;
		}
	}
	return 0;
}

static int parse_grant(const cJSON *obj, const char *path, const struct policy_net_rule *rule,
		       struct policy_net_grant *g, struct err *err)
{
	static const char *const keys[] = {"methods",  "path",	     "values",	"attempts",
					   "deadline", "credential", "metered", NULL};
	const cJSON *methods = member(obj, "methods"), *tpl = member(obj, "path"),
		    *values = member(obj, "values"), *it;
	char sub[JPATH_MAX + 80], name[40];
	const char *s, *why;
	int r;

	r = policy_json_object(obj, path, err);
	if (r >= 0)
		r = policy_json_check_keys(
		    obj, keys, path,
		    " (known: methods, path, values, attempts, deadline, credential, metered)",
		    err);
	if (r >= 0)
		r = policy_parse_budget(obj, path, &g->budget, err);
	if (r >= 0)
		r = policy_parse_grant_meter(obj, path, rule, g, err);
	if (r < 0)
		return r;
	if (!methods || !tpl)
		return err_set(err, EINVAL, "%s: missing key \"%s\"", path,
			       !methods ? "methods" : "path");
	snprintf(sub, sizeof(sub), "%s.methods", path);
	r = policy_json_array(methods, sub, err);
	if (r < 0)
		return r;
	if (cJSON_GetArraySize(methods) < 1 ||
	    cJSON_GetArraySize(methods) > POLICY_GRANT_METHODS_MAX)
		return err_set(err, EINVAL, "%s: 1 to %d methods", sub, POLICY_GRANT_METHODS_MAX);
	cJSON_ArrayForEach(it, methods) {
		size_t n;

		snprintf(sub, sizeof(sub), "%s.methods[%zu]", path, g->n_methods);
		r = policy_json_string(it, sub, &s, err);
		if (r < 0)
			return r;
		n = strlen(s);
		if (n == 0 || n > 16 || strspn(s, "ABCDEFGHIJKLMNOPQRSTUVWXYZ") != n ||
		    strcmp(s, "CONNECT") == 0)
			return err_set(
			    err, EINVAL,
			    "%s: %s is not a method (upper-case letters, as GET or POST; "
			    "not CONNECT)",
			    sub, QUOTE(s));
		for (size_t k = 0; k < g->n_methods; k++)
			if (strcmp(g->methods[k], s) == 0)
				return err_set(err, EINVAL, "%s: %s is listed twice", sub,
					       QUOTE(s));
		g->methods[g->n_methods] = strdup(s);
		if (!g->methods[g->n_methods])
			return err_set(err, ENOMEM, "out of memory");
		g->n_methods++;
	}
	snprintf(sub, sizeof(sub), "%s.path", path);
	r = policy_json_string(tpl, sub, &s, err);
	if (r < 0)
		return r;
	if (policy_grant_path_check(s, &why) < 0)
		return err_set(err, EINVAL, "%s: %s %s", sub, QUOTE(s), why);
	g->path = strdup(s);
	if (!g->path)
		return err_set(err, ENOMEM, "out of memory");
	for (size_t k = 0; path_var(g->path, k, name, sizeof(name)); k++) {
		for (size_t j = 0; j < g->n_vars; j++)
			if (strcmp(g->vars[j].name, name) == 0)
				return err_set(err, EINVAL, "%s: {%s} appears twice", sub, name);
		if (g->n_vars == POLICY_GRANT_VARS_MAX)
			return err_set(err, EINVAL, "%s: at most %d {named} segments", sub,
				       POLICY_GRANT_VARS_MAX);
		g->vars[g->n_vars].name = strdup(name);
		if (!g->vars[g->n_vars].name)
			return err_set(err, ENOMEM, "out of memory");
		g->n_vars++;
	}
	if (member(obj, "credential")) {
		snprintf(sub, sizeof(sub), "%s.credential", path);
		r = policy_parse_credential(member(obj, "credential"), sub, g, err);
		if (r < 0)
			return r;
	}
	if (!values)
		return 0;
	snprintf(sub, sizeof(sub), "%s.values", path);
	r = policy_json_object(values, sub, err);
	if (r >= 0)
		r = policy_json_check_dups(values, sub, err);
	if (r < 0)
		return r;
	cJSON_ArrayForEach(it, values) {
		struct policy_net_grant_var *v = NULL;
		const cJSON *x;
		char vsub[JPATH_MAX + 160];

		snprintf(vsub, sizeof(vsub), "%s.values.%s", path, QUOTE(it->string));
		for (size_t j = 0; j < g->n_vars && !v; j++)
			if (strcmp(g->vars[j].name, it->string) == 0)
				v = &g->vars[j];
		if (!v)
			return err_set(err, EINVAL, "%s: the path has no {%s}", vsub, it->string);
		r = policy_json_array(it, vsub, err);
		if (r < 0)
			return r;
		if (cJSON_GetArraySize(it) < 1 || cJSON_GetArraySize(it) > POLICY_GRANT_VALUES_MAX)
			return err_set(err, EINVAL, "%s: 1 to %d values", vsub,
				       POLICY_GRANT_VALUES_MAX);
		v->values = calloc((size_t)cJSON_GetArraySize(it), sizeof(*v->values));
		if (!v->values)
			return err_set(err, ENOMEM, "out of memory");
		cJSON_ArrayForEach(x, it) {
			size_t n;

			r = policy_json_string(x, vsub, &s, err);
			if (r < 0)
				return r;
			n = strlen(s);
			for (size_t i = 0; i < n && n <= 128; i++)
				if (!pchar(s[i]))
					n = 0;
			if (n == 0 || n > 128 || !strcmp(s, ".") || !strcmp(s, ".."))
				return err_set(err, EINVAL,
					       "%s: %s is not a path segment (1 to 128 plain path "
					       "characters, no '%%' or '/')",
					       vsub, QUOTE(s));
			v->values[v->n_values] = strdup(s);
			if (!v->values[v->n_values])
				return err_set(err, ENOMEM, "out of memory");
			v->n_values++;
		}
	}
	return 0;
}

static int parse_grants(const cJSON *arr, const char *path, struct policy_net_rule *rule,
			struct err *err)
{
	char sub[JPATH_MAX + 24];
	const cJSON *it;
	int r;

	r = policy_json_array(arr, path, err);
	if (r < 0)
		return r;
	if (cJSON_GetArraySize(arr) < 1 || cJSON_GetArraySize(arr) > POLICY_GRANTS_MAX)
		return err_set(err, EINVAL,
			       "%s: 1 to %d grants (leave it out for a host-wide rule)", path,
			       POLICY_GRANTS_MAX);
	/* Grants need what a request asks for: its method and path, which
	 * only a plain HTTP rule shows (TLS is not terminated). */
	if (rule->protocol != POLICY_NET_HTTP)
		return err_set(err, EINVAL,
			       "%s: only on an \"http\" rule: the mediator does not terminate "
			       "TLS, so it cannot see the method or path of a \"%s\" connection",
			       path, policy_net_proto_name(rule->protocol));
	rule->grants = calloc((size_t)cJSON_GetArraySize(arr), sizeof(*rule->grants));
	if (!rule->grants)
		return err_set(err, ENOMEM, "out of memory");
	cJSON_ArrayForEach(it, arr) {
		snprintf(sub, sizeof(sub), "%s[%zu]", path, rule->n_grants);
		/* Counted first: a half-parsed grant is freed with the rule. */
		rule->n_grants++;
		r = parse_grant(it, sub, rule, &rule->grants[rule->n_grants - 1], err);
		if (r < 0)
			return r;
	}
	return 0;
}

/* HB-23: the rule's attempt budget and "tool"; both need the responses'
 * status lines, which only a plain HTTP rule shows. */
static int budget_and_tool(const cJSON *obj, const char *path, struct policy_net_rule *rule,
			   struct err *err)
{
	const cJSON *tool = member(obj, "tool");
	char sub[JPATH_MAX + 8];
	int r;

	if ((member(obj, "attempts") || member(obj, "deadline") || tool) &&
	    rule->protocol != POLICY_NET_HTTP)
		return err_set(err, EINVAL,
			       "%s: \"attempts\", \"deadline\" and \"tool\" only on an \"http\" "
			       "rule: the mediator does not see the responses of a \"%s\" one",
			       path, policy_net_proto_name(rule->protocol));
	r = policy_parse_budget(obj, path, &rule->budget, err);
	if (r < 0 || !tool)
		return r;
	snprintf(sub, sizeof(sub), "%s.tool", path);
	return policy_json_bool(tool, sub, &rule->tool, err);
}

static int parse_rule(const cJSON *obj, size_t index, struct policy_net_rule *rule, struct err *err)
{
	static const char *const keys[] = {"host",    "ports",	  "protocol", "grants", "publish",
					   "private", "attempts", "deadline", "tool",	"metered",
					   "jobs",    "adapter",  "fallback", NULL};
	char path[JPATH_MAX], sub[JPATH_MAX];
	const cJSON *host = member(obj, "host"), *ports = member(obj, "ports"),
		    *proto = member(obj, "protocol");
	const char *s;
	int r;

	snprintf(path, sizeof(path), "network.allow[%zu]", index);
	rule->index = index;
	r = policy_json_object(obj, path, err);
	if (r >= 0)
		r = policy_json_check_keys(
		    obj, keys, path,
		    " (known: host, ports, protocol, grants, publish, "
		    "private, attempts, deadline, tool, metered, jobs, adapter, "
		    "fallback)",
		    err);
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
	if (!rule->host)
		return err_set(err, ENOMEM, "out of memory");
	r = budget_and_tool(obj, path, rule, err);
	if (r >= 0)
		r = policy_parse_meter(obj, path, rule, err);
	if (r >= 0)
		r = policy_parse_jobs(obj, path, rule, err);
	if (r >= 0)
		r = policy_parse_adapter(obj, path, rule, err);
	if (r < 0)
		return r;
	if (member(obj, "grants")) {
		snprintf(sub, sizeof(sub), "network.allow[%zu].grants", index);
		r = parse_grants(member(obj, "grants"), sub, rule, err);
		if (r < 0)
			return r;
	}
	snprintf(sub, sizeof(sub), "network.allow[%zu]", index);
	return policy_parse_gate_rule(obj, sub, rule, err);
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

const char *policy_capture_loss_name(enum policy_capture_loss c)
{
	static const char *const names[] = {"deny", "allow-read-only", "allow"};

	return (unsigned)c < 3 ? names[c] : "?";
}

/* network.on_capture_loss: "deny" | "allow-read-only" | "allow". */
static int parse_capture_loss(const cJSON *x, struct policy *p, struct err *err)
{
	const char *s;
	int r = policy_json_string(x, "network.on_capture_loss", &s, err);

	if (r < 0)
		return r;
	if (p->network != POLICY_NET_MEDIATED)
		return err_set(err, EINVAL,
			       "network.on_capture_loss: only with \"mode\": \"mediated\"");
	for (int c = POLICY_CAPTURE_DENY; c <= POLICY_CAPTURE_ALLOW; c++)
		if (strcmp(s, policy_capture_loss_name((enum policy_capture_loss)c)) == 0) {
			p->net_on_capture_loss = (enum policy_capture_loss)c;
			return 0;
		}
	return err_set(err, EINVAL,
		       "network.on_capture_loss: unknown value %s (known: deny, allow-read-only, "
		       "allow)",
		       QUOTE(s));
}

int policy_parse_network(const cJSON *it, struct policy *p, struct err *err)
{
	static const char *const keys[] = {"mode",    "allow",		 "resolve", "hold",
					   "secrets", "on_capture_loss", "actions", NULL};
	const cJSON *mode, *x;
	const char *s;
	int r;

	if (cJSON_IsString(it)) {
		mode = it;
	} else {
		r = policy_json_object(it, "network", err);
		if (r >= 0)
			r = policy_json_check_keys(it, keys, "network",
						   " (known: mode, allow, resolve, hold, secrets, "
						   "on_capture_loss, actions)",
						   err);
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
	r = policy_parse_gate_hold(member(it, "hold"), p, err);
	if (r < 0)
		return r;
	if ((x = member(it, "secrets"))) {
		r = policy_parse_net_secrets(x, p, err);
		if (r < 0)
			return r;
	}
	if ((x = member(it, "on_capture_loss"))) {
		r = parse_capture_loss(x, p, err);
		if (r < 0)
			return r;
	}
	if ((x = member(it, "actions"))) {
		r = policy_parse_actions(x, p, err);
		if (r < 0)
			return r;
	}
	r = policy_check_adapters(p, err);
	if (r < 0)
		return r;
	return check_resolve_named(p, err);
}
