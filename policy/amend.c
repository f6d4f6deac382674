/* Command-line additions (--bind, --protect, --setenv, --cwd, --port) applied to the
 * policy text, so that the effective policy is one JSON document whose
 * digest covers them. Argument syntax is checked here; whether the paths
 * are valid is left to policy_load_buffer() on the result. */
#include "policy.h"

#include <stdlib.h>
#include <string.h>

#include "../include/cleanup.h"
#include "json.h"
#include "validate.h"

/* s escaped for a message but without the quotes, as in "--bind x: ...". */
static const char *shown(const char *s, char buf[QUOTE_MAX])
{
	size_t n;

	policy_quote_n(s, (size_t)-1, buf, QUOTE_MAX);
	n = strlen(buf);
	memmove(buf, buf + 1, n - 2);
	buf[n - 2] = '\0';
	return buf;
}

/* --port HOST:PORT:SANDBOXPORT: the host side is checked here too, so that
 * the message names the argument rather than a "ports[N]" the caller never
 * wrote. */
static int check_port(const char *s, struct err *err)
{
	char buf[QUOTE_MAX];
	const char *colon = s ? strrchr(s, ':') : NULL, *addr, *why;
	cleanup_free char *host = NULL;
	uint16_t port;
	char *end;
	unsigned long v;

	/* "127.0.0.1:8080" is HOST:PORT without the sandbox's port. */
	if (!colon || colon == s || !colon[1] || !memchr(s, ':', (size_t)(colon - s)))
		return err_set(err, EINVAL,
			       "--port %s: expected HOST:PORT:SANDBOXPORT (e.g. 127.0.0.1:8080:80, "
			       "127.0.0.1:auto:80, [::1]:8080:80)",
			       shown(s ? s : "", buf));
	host = strndup(s, (size_t)(colon - s));
	if (!host)
		return err_set(err, ENOMEM, "out of memory");
	if (policy_port_host_parse(host, &addr, &port, &why) < 0)
		return err_set(err, EINVAL, "--port %s: %s", shown(s, buf), why);
	errno = 0;
	v = strtoul(colon + 1, &end, 10);
	/* "/http": the forward stamps its responses ("protocol": "http"). */
	if (strcmp(end, "/http") == 0 || strcmp(end, "/tcp") == 0)
		end += strlen(end);
	if (colon[1] < '0' || colon[1] > '9' || *end || errno || v == 0 || v > 65535)
		return err_set(err, EINVAL,
			       "--port %s: the sandbox port must be 1 to 65535 (with /http or "
			       "/tcp after it, or nothing)",
			       shown(s, buf));
	return 0;
}

/* --allow-net HOST[:PORT]: the name a rule may hold, a port 1-65535 (443
 * when none) that is not the mediator's own. */
static int allow_net_split(const char *s, char *host, size_t size, uint16_t *port, struct err *err)
{
	char buf[QUOTE_MAX];
	const char *colon = s ? strrchr(s, ':') : NULL;
	size_t len = colon ? (size_t)(colon - s) : (s ? strlen(s) : 0);
	unsigned long v = 443;
	char *end;

	if (!s || len == 0 || len >= size)
		return err_set(err, EINVAL, "--allow-net %s: expected HOST or HOST:PORT",
			       shown(s ? s : "", buf));
	memcpy(host, s, len);
	host[len] = '\0';
	if (!policy_net_host_valid(host, true))
		return err_set(err, EINVAL,
			       "--allow-net %s: %s is not a host name (lower-case labels, "
			       "optionally \"*.\" first; no addresses)",
			       shown(s, buf), QUOTE(host));
	if (colon) {
		errno = 0;
		v = strtoul(colon + 1, &end, 10);
		if (colon[1] < '0' || colon[1] > '9' || *end || errno || v == 0 || v > 65535)
			return err_set(err, EINVAL, "--allow-net %s: the port must be 1 to 65535",
				       shown(s, buf));
		if (v == 53 || v == 3128)
			return err_set(err, EINVAL,
				       "--allow-net %s: port %lu is the mediator's own",
				       shown(s, buf), v);
	}
	*port = (uint16_t)v;
	return 0;
}

static int check_args(const struct policy_additions *add, struct err *err)
{
	char host[POLICY_NET_NAME_MAX + 8];
	uint16_t port;
	char buf[QUOTE_MAX];
	const char *s, *colon, *eq;

	for (size_t i = 0; i < add->n_binds; i++) {
		s = add->binds[i].spec;
		colon = s ? strchr(s, ':') : NULL;
		if (!s || !*s || colon == s || (colon && !colon[1]))
			return err_set(err, EINVAL, "--bind %s: expected SRC or SRC:DST",
				       shown(s ? s : "", buf));
	}
	for (size_t i = 0; i < add->n_setenv; i++) {
		s = add->setenv[i];
		eq = s ? strchr(s, '=') : NULL;
		if (!eq || eq == s)
			return err_set(err, EINVAL, "--setenv %s: expected NAME=VALUE",
				       shown(s ? s : "", buf));
		if (!policy_env_name_ok(s, (size_t)(eq - s)))
			return err_set(err, EINVAL, "--setenv %s: invalid variable name %s",
				       shown(s, buf), QUOTE_N(s, (size_t)(eq - s)));
	}
	for (size_t i = 0; i < add->n_protect; i++)
		if (!add->protect[i])
			return err_set(err, EINVAL, "--protect: missing path");
	for (size_t i = 0; i < add->n_ports; i++) {
		int r = check_port(add->ports[i], err);

		if (r < 0)
			return r;
	}
	for (size_t i = 0; i < add->n_allow_net; i++) {
		int r = allow_net_split(add->allow_net[i], host, sizeof(host), &port, err);

		if (r < 0)
			return r;
	}
	return 0;
}

/* The member key of obj, created empty when missing; it must have type
 * (cJSON_Array or cJSON_Object). */
static int container(cJSON *obj, const char *key, const char *path, int type, cJSON **out,
		     struct err *err)
{
	cJSON *it = cJSON_GetObjectItemCaseSensitive(obj, key);

	if (!it) {
		it = type == cJSON_Array ? cJSON_AddArrayToObject(obj, key)
					 : cJSON_AddObjectToObject(obj, key);
		if (!it)
			return err_set(err, ENOMEM, "out of memory");
	}
	if ((it->type & 0xff) != type)
		return err_set(err, EINVAL, "%s: must be %s", path,
			       type == cJSON_Array ? "an array" : "an object");
	*out = it;
	return 0;
}

/* Move item (owned) to the end of arr. */
static int append(cJSON *arr, cJSON *item, struct err *err)
{
	if (!item || !cJSON_AddItemToArray(arr, item)) {
		cJSON_Delete(item);
		return err_set(err, ENOMEM, "out of memory");
	}
	return 0;
}

static cJSON *bind_item(const struct policy_bind_arg *b)
{
	const char *colon = strchr(b->spec, ':');
	cleanup_free char *src =
	    strndup(b->spec, colon ? (size_t)(colon - b->spec) : strlen(b->spec));
	cleanup_cjson cJSON *o = cJSON_CreateObject();

	if (!src || !o || !cJSON_AddStringToObject(o, "type", "bind") ||
	    !cJSON_AddStringToObject(o, "source", src) ||
	    !cJSON_AddStringToObject(o, "target", colon ? colon + 1 : src) ||
	    !cJSON_AddStringToObject(o, "mode", b->readonly ? "ro" : "rw"))
		return NULL;
	return take_ptr(&o);
}

static int add_binds(cJSON *root, const struct policy_additions *add, struct err *err)
{
	cJSON *mounts = NULL;
	int r;

	if (add->n_binds == 0)
		return 0;
	r = container(root, "mounts", "mounts", cJSON_Array, &mounts, err);
	for (size_t i = 0; r >= 0 && i < add->n_binds; i++)
		r = append(mounts, bind_item(&add->binds[i]), err);
	return r;
}

static int add_protect(cJSON *root, const struct policy_additions *add, struct err *err)
{
	cJSON *protect = NULL;
	int r;

	if (add->n_protect == 0)
		return 0;
	r = container(root, "protect", "protect", cJSON_Array, &protect, err);
	for (size_t i = 0; r >= 0 && i < add->n_protect; i++)
		r = append(protect, cJSON_CreateString(add->protect[i]), err);
	return r;
}

/* Set key of obj to the string value, replacing the first existing member. */
static int put_string(cJSON *obj, const char *key, const char *value, struct err *err)
{
	cJSON *item = cJSON_CreateString(value);
	bool ok;

	if (!item)
		return err_set(err, ENOMEM, "out of memory");
	if (cJSON_GetObjectItemCaseSensitive(obj, key))
		ok = cJSON_ReplaceItemInObjectCaseSensitive(obj, key, item);
	else
		ok = cJSON_AddItemToObject(obj, key, item);
	if (!ok) {
		cJSON_Delete(item);
		return err_set(err, ENOMEM, "out of memory");
	}
	return 0;
}

static cJSON *port_item(const char *spec)
{
	const char *colon = strrchr(spec, ':');
	cleanup_free char *host = strndup(spec, (size_t)(colon - spec));
	cleanup_cjson cJSON *o = cJSON_CreateObject();

	char *end;
	double port = (double)strtoul(colon + 1, &end, 10);

	if (!host || !o || !cJSON_AddStringToObject(o, "host", host) ||
	    !cJSON_AddNumberToObject(o, "sandbox", port) ||
	    (strcmp(end, "/http") == 0 && !cJSON_AddStringToObject(o, "protocol", "http")))
		return NULL;
	return take_ptr(&o);
}

static int add_ports(cJSON *root, const struct policy_additions *add, struct err *err)
{
	cJSON *ports = NULL;
	int r;

	if (add->n_ports == 0)
		return 0;
	r = container(root, "ports", "ports", cJSON_Array, &ports, err);
	for (size_t i = 0; r >= 0 && i < add->n_ports; i++)
		r = append(ports, port_item(add->ports[i]), err);
	return r;
}

static int add_setenv(cJSON *root, const struct policy_additions *add, struct err *err)
{
	cJSON *env = NULL, *set = NULL;
	int r;

	if (add->n_setenv == 0)
		return 0;
	r = container(root, "environment", "environment", cJSON_Object, &env, err);
	if (r >= 0)
		r = container(env, "set", "environment.set", cJSON_Object, &set, err);
	for (size_t i = 0; r >= 0 && i < add->n_setenv; i++) {
		const char *kv = add->setenv[i], *eq = strchr(kv, '=');
		cleanup_free char *name = strndup(kv, (size_t)(eq - kv));

		r = name ? put_string(set, name, eq + 1, err)
			 : err_set(err, ENOMEM, "out of memory");
	}
	return r;
}

/* The network becomes mediated (an object), and each --allow-net a rule:
 * port 443 "tls", 80 "http", any other "tcp". */
static int add_allow_net(cJSON *root, const struct policy_additions *add, struct err *err)
{
	char host[POLICY_NET_NAME_MAX + 8];
	cJSON *net, *mode, *allow = NULL;
	uint16_t port;
	int r;

	if (add->n_allow_net == 0)
		return 0;
	net = cJSON_GetObjectItemCaseSensitive(root, "network");
	if (!net || cJSON_IsString(net)) {
		if (net && strcmp(net->valuestring, "none") != 0 &&
		    strcmp(net->valuestring, "mediated") != 0)
			return err_set(err, EINVAL, "--allow-net: the policy's network is %s",
				       QUOTE(net->valuestring));
		cJSON_DeleteItemFromObjectCaseSensitive(root, "network");
		net = cJSON_AddObjectToObject(root, "network");
		if (!net || !cJSON_AddStringToObject(net, "mode", "mediated"))
			return err_set(err, ENOMEM, "out of memory");
	}
	if (!cJSON_IsObject(net))
		return err_set(err, EINVAL, "network: must be a string or an object");
	mode = cJSON_GetObjectItemCaseSensitive(net, "mode");
	if (cJSON_IsString(mode) && strcmp(mode->valuestring, "none") == 0)
		cJSON_DeleteItemFromObjectCaseSensitive(net, "mode");
	if (!cJSON_GetObjectItemCaseSensitive(net, "mode") &&
	    !cJSON_AddStringToObject(net, "mode", "mediated"))
		return err_set(err, ENOMEM, "out of memory");
	r = container(net, "allow", "network.allow", cJSON_Array, &allow, err);
	for (size_t i = 0; r >= 0 && i < add->n_allow_net; i++) {
		cJSON *o = cJSON_CreateObject(), *ports;

		r = allow_net_split(add->allow_net[i], host, sizeof(host), &port, err);
		if (r < 0) {
			cJSON_Delete(o);
			break;
		}
		if (!o || !cJSON_AddStringToObject(o, "host", host) ||
		    !(ports = cJSON_AddArrayToObject(o, "ports")) ||
		    !cJSON_AddItemToArray(ports, cJSON_CreateNumber(port)) ||
		    !cJSON_AddStringToObject(o, "protocol",
					     port == 443  ? "tls"
					     : port == 80 ? "http"
							  : "tcp")) {
			cJSON_Delete(o);
			return err_set(err, ENOMEM, "out of memory");
		}
		r = append(allow, o, err);
	}
	return r;
}

static int copy_out(const char *s, size_t len, char **out, size_t *out_len, struct err *err)
{
	char *c = malloc(len + 1);

	if (!c)
		return err_set(err, ENOMEM, "out of memory");
	if (len)
		memcpy(c, s, len);
	c[len] = '\0';
	*out = c;
	*out_len = len;
	return 0;
}

int policy_amend(const char *buf, size_t len, const struct policy_additions *add, char **out,
		 size_t *out_len, struct err *err)
{
	cleanup_cjson cJSON *root = NULL;
	char *text;
	int r;

	/* Nothing to add: the very same bytes, so the digest does not move. */
	if (!add || (!add->n_binds && !add->n_protect && !add->n_setenv && !add->cwd &&
		     !add->n_ports && !add->n_allow_net))
		return copy_out(buf, len, out, out_len, err);
	r = check_args(add, err);
	if (r >= 0)
		r = policy_json_parse(buf, len, &root, err);
	if (r >= 0 && !cJSON_IsObject(root))
		r = err_set(err, EINVAL, "(root): must be an object");
	if (r >= 0)
		r = add_binds(root, add, err);
	if (r >= 0)
		r = add_protect(root, add, err);
	if (r >= 0)
		r = add_setenv(root, add, err);
	if (r >= 0 && add->cwd)
		r = put_string(root, "cwd", add->cwd, err);
	if (r >= 0)
		r = add_ports(root, add, err);
	if (r >= 0)
		r = add_allow_net(root, add, err);
	if (r < 0)
		return r;
	text = cJSON_PrintUnformatted(root);
	if (!text)
		return err_set(err, ENOMEM, "out of memory");
	/* Our own copy: the caller frees with free(), cJSON's text is cJSON_free()'s. */
	r = copy_out(text, strlen(text), out, out_len, err);
	cJSON_free(text);
	return r;
}
