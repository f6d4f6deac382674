/* Brokered credentials (docs/network.md, "Brokered credentials"): a
 * grant's "credential" object and "network.secrets". The secret itself is
 * never in a policy: the policy names it, the mediator reads it from the
 * secrets file. */
#include "parse.h"

#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "json.h"

static const cJSON *member(const cJSON *obj, const char *key)
{
	return cJSON_GetObjectItemCaseSensitive(obj, key);
}

void policy_credential_free(struct policy_net_credential *c)
{
	if (!c)
		return;
	free(c->secret);
	free(c->env);
	free(c->header);
	free(c->prefix);
	free(c->query);
	free(c);
}

/* A secret's name in the secrets file: [A-Za-z0-9_.-]{1,64}. */
static bool secret_name_ok(const char *s)
{
	size_t n = strlen(s);

	return n >= 1 && n <= POLICY_CRED_NAME_MAX &&
	       strspn(s, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_.-") == n;
}

/* An RFC 9110 token, and not a header the mediator owns or that frames
 * the request: a credential must never change where or how much is sent. */
static bool header_ok(const char *s)
{
	static const char *const own[] = {"host",
					  "content-length",
					  "transfer-encoding",
					  "connection",
					  "proxy-connection",
					  "keep-alive",
					  "proxy-authorization",
					  "paddock-admission",
					  "te",
					  "upgrade",
					  "trailer",
					  "expect",
					  NULL};
	size_t n = strlen(s);

	if (n < 1 || n > POLICY_CRED_NAME_MAX ||
	    strspn(
		s,
		"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789!#$&'*+-.^_`|~") !=
		n)
		return false;
	for (size_t i = 0; own[i]; i++)
		if (strcasecmp(s, own[i]) == 0)
			return false;
	return true;
}

/* A query parameter's name: unreserved characters only (no '&', '=', '%'
 * or '#' that would make it two). */
static bool query_ok(const char *s)
{
	size_t n = strlen(s);

	return n >= 1 && n <= POLICY_CRED_NAME_MAX &&
	       strspn(s, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~") == n;
}

/* Visible ASCII and space, no quote or backslash. */
static bool prefix_ok(const char *s)
{
	size_t n = strlen(s);

	if (n > POLICY_CRED_PREFIX_MAX)
		return false;
	for (size_t i = 0; i < n; i++)
		if (s[i] < 0x20 || s[i] > 0x7e)
			return false;
	return true;
}

/* The proxy variables are paddock's (launcher/sandbox/env.c). */
static bool env_reserved(const char *s)
{
	static const char *const own[] = {"HTTP_PROXY", "HTTPS_PROXY", "NO_PROXY", NULL};

	for (size_t i = 0; own[i]; i++)
		if (strcasecmp(s, own[i]) == 0)
			return true;
	return false;
}

static int dup_member(const cJSON *obj, const char *key, const char *path, char **out,
		      struct err *err)
{
	char sub[JPATH_MAX + 120];

	snprintf(sub, sizeof(sub), "%s.%s", path, key);
	return policy_json_strdup(member(obj, key), sub, out, err);
}

int policy_parse_credential(const cJSON *obj, const char *path, struct policy_net_grant *g,
			    struct err *err)
{
	static const char *const keys[] = {"secret", "env", "header", "prefix", "query", NULL};
	struct policy_net_credential *c;
	int r;

	r = policy_json_object(obj, path, err);
	if (r >= 0)
		r = policy_json_check_keys(obj, keys, path,
					   " (known: secret, env, header, prefix, query)", err);
	if (r < 0)
		return r;
	if (!member(obj, "secret") || !member(obj, "env"))
		return err_set(err, EINVAL, "%s: missing key \"%s\"", path,
			       !member(obj, "secret") ? "secret" : "env");
	if (!member(obj, "header") == !member(obj, "query"))
		return err_set(err, EINVAL, "%s: exactly one of \"header\" and \"query\"", path);
	if (member(obj, "prefix") && !member(obj, "header"))
		return err_set(err, EINVAL, "%s.prefix: only with \"header\"", path);
	c = calloc(1, sizeof(*c));
	if (!c)
		return err_set(err, ENOMEM, "out of memory");
	g->credential = c; /* owned by the grant from here on */
	r = dup_member(obj, "secret", path, &c->secret, err);
	if (r >= 0)
		r = dup_member(obj, "env", path, &c->env, err);
	if (r >= 0 && member(obj, "header"))
		r = dup_member(obj, "header", path, &c->header, err);
	if (r >= 0 && member(obj, "query"))
		r = dup_member(obj, "query", path, &c->query, err);
	if (r >= 0)
		r = member(obj, "prefix")      ? dup_member(obj, "prefix", path, &c->prefix, err)
		    : (c->prefix = strdup("")) ? 0
					       : err_set(err, ENOMEM, "out of memory");
	if (r < 0)
		return r;
	if (!secret_name_ok(c->secret))
		return err_set(err, EINVAL,
			       "%s.secret: %s is not a secret's name (1 to 64 of A-Z, a-z, 0-9, "
			       "'_', '.', '-')",
			       path, QUOTE(c->secret));
	if (strlen(c->env) > POLICY_CRED_NAME_MAX || !policy_env_name_ok(c->env, strlen(c->env)))
		return err_set(err, EINVAL, "%s.env: %s is not a variable name", path,
			       QUOTE(c->env));
	if (env_reserved(c->env))
		return err_set(err, EINVAL, "%s.env: %s is paddock's own (the proxy variables)",
			       path, QUOTE(c->env));
	if (c->header && !header_ok(c->header))
		return err_set(err, EINVAL,
			       "%s.header: %s is not a header a credential may go in (a token "
			       "of at most 64; not Host, Content-Length, Transfer-Encoding, a "
			       "hop-by-hop header or Paddock-Admission)",
			       path, QUOTE(c->header));
	if (c->query && !query_ok(c->query))
		return err_set(err, EINVAL,
			       "%s.query: %s is not a query parameter's name (1 to 64 of A-Z, "
			       "a-z, 0-9, '-', '.', '_', '~')",
			       path, QUOTE(c->query));
	if (!prefix_ok(c->prefix))
		return err_set(err, EINVAL,
			       "%s.prefix: at most 64 visible ASCII characters or spaces", path);
	return 0;
}

int policy_parse_net_secrets(const cJSON *it, struct policy *p, struct err *err)
{
	if (p->network != POLICY_NET_MEDIATED)
		return err_set(err, EINVAL, "network.secrets: only with \"mode\": \"mediated\"");
	/* An absolute path once expanded: validate.c. */
	return policy_json_strdup(it, "network.secrets", &p->net_secrets, err);
}

bool policy_has_credentials(const struct policy *p)
{
	for (size_t i = 0; i < p->n_net_allow; i++)
		for (size_t g = 0; g < p->net_allow[i].n_grants; g++)
			if (p->net_allow[i].grants[g].credential)
				return true;
	return false;
}

/* The credentials of p in order: the k-th, with its rule and grant. */
static const struct policy_net_credential *nth(const struct policy *p, size_t k, size_t *rule,
					       size_t *grant)
{
	for (size_t i = 0; i < p->n_net_allow; i++)
		for (size_t g = 0; g < p->net_allow[i].n_grants; g++) {
			const struct policy_net_credential *c =
			    p->net_allow[i].grants[g].credential;

			if (c && k-- == 0) {
				*rule = i;
				*grant = g;
				return c;
			}
		}
	return NULL;
}

static bool same(const char *a, const char *b)
{
	return a && b && strcasecmp(a, b) == 0;
}

int policy_check_credentials(const struct policy *p, struct err *err)
{
	const struct policy_net_credential *a, *b;
	size_t ra, ga, rb, gb;

	for (size_t i = 0; (a = nth(p, i, &ra, &ga)); i++) {
		size_t len = strlen(a->env);

		/* The placeholder is the variable's value: nothing else may
		 * set it (--setenv lands in environment.set). */
		for (size_t k = 0; k < p->n_env_set; k++)
			if (strncmp(p->env_set[k], a->env, len) == 0 && p->env_set[k][len] == '=')
				return err_set(
				    err, EINVAL,
				    "network.allow[%zu].grants[%zu].credential.env: %s is "
				    "also set by environment.set (or --setenv); it holds "
				    "the credential's placeholder",
				    ra, ga, a->env);
		for (size_t k = 0; k < i && (b = nth(p, k, &rb, &gb)); k++) {
			/* One placeholder per variable, standing for one secret. */
			if (strcmp(a->env, b->env) == 0 && strcmp(a->secret, b->secret) != 0)
				return err_set(err, EINVAL,
					       "network.allow[%zu].grants[%zu].credential.env: %s "
					       "already stands for the secret %s "
					       "(network.allow[%zu].grants[%zu])",
					       ra, ga, a->env, b->secret, rb, gb);
			/* The mediator strips every other value of a
			 * credential's header (or parameter): two variables
			 * in one place of one rule would strip each other. */
			if (ra == rb && strcmp(a->env, b->env) != 0 &&
			    (same(a->header, b->header) ||
			     (a->query && b->query && strcmp(a->query, b->query) == 0)))
				return err_set(err, EINVAL,
					       "network.allow[%zu].grants[%zu].credential: %s is "
					       "already where %s goes (grants[%zu])",
					       ra, ga, a->header ? a->header : a->query, b->env,
					       gb);
		}
	}
	return 0;
}
