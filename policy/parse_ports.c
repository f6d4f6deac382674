/* Walk "ports": port forwards from the host's loopback into the sandbox's
 * network namespace. Only loopback may be published: a forward is a way in
 * for the caller's own clients, never for the network (docs/policy.md). */
#include "parse.h"

#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "json.h"

static const cJSON *member(const cJSON *obj, const char *key)
{
	return cJSON_GetObjectItemCaseSensitive(obj, key);
}

/* "1" to "65535", digits only: strtoul would take "+80", " 80" and "0x50". */
static int parse_port_number(const char *s, size_t len, uint16_t *out)
{
	unsigned long v = 0;

	if (len == 0 || len > 5)
		return -EINVAL;
	for (size_t i = 0; i < len; i++) {
		if (s[i] < '0' || s[i] > '9')
			return -EINVAL;
		v = v * 10 + (unsigned long)(s[i] - '0');
	}
	if (v == 0 || v > 65535)
		return -ERANGE;
	*out = (uint16_t)v;
	return 0;
}

int policy_port_host_parse(const char *s, const char **addr, uint16_t *port, const char **why)
{
	const char *colon, *p;
	size_t alen;
	int r;

	*why = "expected \"127.0.0.1:PORT\", \"127.0.0.1:auto\", \"[::1]:PORT\" or \"[::1]:auto\" "
	       "(localhost: 127.0.0.1)";
	if (s[0] == '[') {
		const char *close = strchr(s, ']');

		if (!close || close[1] != ':')
			return -EINVAL;
		colon = close + 1;
		alen = (size_t)(close - s - 1);
		*addr = alen == 3 && strncmp(s + 1, "::1", 3) == 0 ? "::1" : NULL;
	} else {
		colon = strrchr(s, ':');
		if (!colon || colon == s)
			return -EINVAL;
		alen = (size_t)(colon - s);
		/* An IPv6 address without brackets cannot be told from its port. */
		if (memchr(s, ':', alen))
			return -EINVAL;
		/* "localhost" is meant as loopback: its IPv4 address, never a
		 * lookup (a resolver could say otherwise). */
		*addr = (alen == 9 && strncmp(s, "127.0.0.1", 9) == 0) ||
				(alen == 9 && strncasecmp(s, "localhost", 9) == 0)
			    ? "127.0.0.1"
			    : NULL;
	}
	if (!*addr) {
		*why = "only 127.0.0.1, localhost or [::1] (loopback) may be published";
		return -EINVAL;
	}
	p = colon + 1;
	if (strcmp(p, "auto") == 0) {
		*port = 0;
		return 0;
	}
	r = parse_port_number(p, strlen(p), port);
	if (r < 0)
		*why = "the port must be 1 to 65535, or \"auto\"";
	return r < 0 ? -EINVAL : 0;
}

int policy_port_host_format(char *buf, size_t size, const char *addr, uint16_t port)
{
	bool v6 = strchr(addr, ':') != NULL;

	if (port == 0)
		return snprintf(buf, size, "%s%s%s:auto", v6 ? "[" : "", addr, v6 ? "]" : "");
	return snprintf(buf, size, "%s%s%s:%u", v6 ? "[" : "", addr, v6 ? "]" : "", port);
}

/* "protocol" and "service": what the relay stamps on an HTTP forward
 * (docs/sessions.md, "Endpoint identity"). services are parsed before
 * ports, whatever their order in the file. */
static int parse_lease(const cJSON *obj, size_t index, const struct policy *p,
		       struct policy_port *out, struct err *err)
{
	const cJSON *proto = member(obj, "protocol"), *svc = member(obj, "service");
	char sub[JPATH_MAX];
	const char *s;
	int r;

	if (proto) {
		snprintf(sub, sizeof(sub), "ports[%zu].protocol", index);
		r = policy_json_string(proto, sub, &s, err);
		if (r < 0)
			return r;
		if (strcmp(s, "http") != 0 && strcmp(s, "tcp") != 0)
			return err_set(err, EINVAL, "%s: expected \"tcp\" or \"http\" (got %s)",
				       sub, QUOTE(s));
		out->http = strcmp(s, "http") == 0;
	}
	if (!svc)
		return 0;
	snprintf(sub, sizeof(sub), "ports[%zu].service", index);
	r = policy_json_string(svc, sub, &s, err);
	if (r < 0)
		return r;
	for (size_t i = 0; i < p->n_services; i++)
		if (strcmp(p->services[i].name, s) == 0) {
			out->service = strdup(s);
			return out->service ? 0 : err_set(err, ENOMEM, "out of memory");
		}
	return err_set(err, EINVAL, "%s: no service named %s in \"services\"", sub, QUOTE(s));
}

static int parse_entry(const cJSON *obj, size_t index, const struct policy *p,
		       struct policy_port *out, struct err *err)
{
	char path[JPATH_MAX];
	static const char *const keys[] = {"host", "sandbox", "protocol", "service", NULL};
	char sub[JPATH_MAX];
	const cJSON *host = member(obj, "host"), *sandbox = member(obj, "sandbox");
	const char *s, *addr, *why;
	uint64_t v;
	int r;

	snprintf(path, sizeof(path), "ports[%zu]", index);
	r = policy_json_object(obj, path, err);
	if (r >= 0)
		r = policy_json_check_keys(obj, keys, path,
					   " (known: host, sandbox, protocol, service)", err);
	if (r < 0)
		return r;
	if (!host || !sandbox)
		return err_set(err, EINVAL, "%s: missing key \"%s\"", path,
			       host ? "sandbox" : "host");
	snprintf(sub, sizeof(sub), "ports[%zu].host", index);
	r = policy_json_string(host, sub, &s, err);
	if (r < 0)
		return r;
	if (policy_port_host_parse(s, &addr, &out->host_port, &why) < 0)
		return err_set(err, EINVAL, "%s: %s (got %s)", sub, why, QUOTE(s));
	snprintf(sub, sizeof(sub), "ports[%zu].sandbox", index);
	r = policy_json_uint(sandbox, sub, 65535, &v, err);
	if (r >= 0 && v == 0)
		r = -EINVAL;
	if (r < 0)
		return err_set(err, EINVAL, "%s: must be an integer from 1 to 65535", sub);
	out->sandbox_port = (uint16_t)v;
	out->host_addr = strdup(addr);
	if (!out->host_addr)
		return err_set(err, ENOMEM, "out of memory");
	return parse_lease(obj, index, p, out, err);
}

int policy_parse_ports(const cJSON *arr, struct policy *p, struct err *err)
{
	char shown[64];
	const cJSON *it;
	int r;

	r = policy_json_array(arr, "ports", err);
	if (r < 0)
		return r;
	if (cJSON_GetArraySize(arr) > POLICY_PORTS_MAX)
		return err_set(err, EINVAL, "ports: at most %d port forwards", POLICY_PORTS_MAX);
	p->ports = calloc((size_t)cJSON_GetArraySize(arr) + 1, sizeof(*p->ports));
	if (!p->ports)
		return err_set(err, ENOMEM, "out of memory");
	cJSON_ArrayForEach(it, arr) {
		struct policy_port *e = &p->ports[p->n_ports];

		e->index = p->n_ports;
		r = parse_entry(it, e->index, p, e, err);
		if (e->host_addr)
			p->n_ports++; /* owned by p from here on, freed by policy_free() */
		if (r < 0)
			return r;
		/* A fixed host address and port can be bound once; "auto" ones
		 * never collide (each gets a port of its own). */
		for (size_t i = 0; e->host_port && i + 1 < p->n_ports; i++) {
			if (p->ports[i].host_port != e->host_port ||
			    strcmp(p->ports[i].host_addr, e->host_addr) != 0)
				continue;
			policy_port_host_format(shown, sizeof(shown), e->host_addr, e->host_port);
			return err_set(err, EINVAL,
				       "ports[%zu].host: %s is already published by ports[%zu]",
				       e->index, shown, i);
		}
	}
	return 0;
}
