/* "metered" of a network rule or grant (docs/network.md, "Budgets"): the
 * budget an attempt is reserved against before it leaves, its cap in
 * credits, where the receiver states the actual charge, and the price of
 * an attempt (fixed, or an upper bound from the request's JSON body).
 * There is no default price: an operation with none is unpriced, and the
 * mediator refuses it (strict mode); a price of 0 must be written. */
#include "parse.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "json.h"

static const cJSON *member(const cJSON *obj, const char *key)
{
	return cJSON_GetObjectItemCaseSensitive(obj, key);
}

bool policy_budget_id_valid(const char *s)
{
	size_t n = strlen(s);

	if (n == 0 || n > POLICY_METER_ID_MAX || s[0] == '.')
		return false;
	return strspn(s, "abcdefghijklmnopqrstuvwxyz0123456789_.-") == n;
}

/* A JSON member name or a header name: 1 to 64 of [A-Za-z0-9_-]. */
static bool field_name_ok(const char *s)
{
	size_t n = strlen(s);

	return n > 0 && n <= POLICY_METER_FIELD_MAX &&
	       strspn(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-") == n;
}

static int credits(const cJSON *it, const char *path, uint64_t *out, struct err *err)
{
	if (policy_json_uint(it, path, POLICY_METER_CREDITS_MAX, out, err) < 0)
		return err_set(err, EINVAL, "%s: must be a whole number of credits from 0 to %llu",
			       path, (unsigned long long)POLICY_METER_CREDITS_MAX);
	return 0;
}

void policy_price_free(struct policy_net_price *p)
{
	free(p->field);
	p->field = NULL;
}

void policy_meter_free(struct policy_net_meter *m)
{
	if (!m)
		return;
	free(m->budget);
	free(m->charge_header);
	free(m->charge_field);
	free(m->lookup.prefix);
	free(m->lookup.suffix);
	policy_price_free(&m->price);
	free(m);
}

/* "price": N, or {"field": NAME, "per": N, "base": N, "max": N}. */
static int parse_price(const cJSON *it, const char *path, struct policy_net_price *p,
		       struct err *err)
{
	static const char *const keys[] = {"field", "per", "base", "max", NULL};
	const cJSON *f = member(it, "field"), *per = member(it, "per"), *base = member(it, "base"),
		    *max = member(it, "max");
	char sub[2 * JPATH_MAX + 192];
	const char *s;
	int r;

	if (cJSON_IsNumber(it)) {
		r = credits(it, path, &p->base, err);
		if (r >= 0)
			p->kind = POLICY_PRICE_FIXED;
		return r;
	}
	if (!cJSON_IsObject(it))
		return err_set(err, EINVAL,
			       "%s: must be a number of credits or an object {\"field\", \"per\", "
			       "\"max\", \"base\"}",
			       path);
	r = policy_json_check_keys(it, keys, path, " (known: field, per, base, max)", err);
	if (r < 0)
		return r;
	if (!f || !per || !max)
		return err_set(err, EINVAL,
			       "%s: missing key \"%s\" (a bound needs the field, its price and its "
			       "largest value)",
			       path,
			       !f     ? "field"
			       : !per ? "per"
				      : "max");
	snprintf(sub, sizeof(sub), "%s.field", path);
	r = policy_json_string(f, sub, &s, err);
	if (r < 0)
		return r;
	if (!field_name_ok(s))
		return err_set(err, EINVAL,
			       "%s: %s is not a member name (1 to 64 of A-Z, a-z, 0-9, '_', '-')",
			       sub, QUOTE(s));
	snprintf(sub, sizeof(sub), "%s.per", path);
	r = credits(per, sub, &p->per, err);
	if (r >= 0 && base) {
		snprintf(sub, sizeof(sub), "%s.base", path);
		r = credits(base, sub, &p->base, err);
	}
	if (r >= 0) {
		snprintf(sub, sizeof(sub), "%s.max", path);
		r = credits(max, sub, &p->field_max, err);
	}
	if (r < 0)
		return r;
	/* The bound of the largest request must itself be a number of
	 * credits (no overflow at admission). */
	if (p->per && (p->field_max > (POLICY_METER_CREDITS_MAX - p->base) / p->per))
		return err_set(err, EINVAL, "%s: base + per x max is more than %llu credits", path,
			       (unsigned long long)POLICY_METER_CREDITS_MAX);
	p->field = strdup(s);
	if (!p->field)
		return err_set(err, ENOMEM, "out of memory");
	p->kind = POLICY_PRICE_FIELD;
	return 0;
}

/* "charge": {"header": NAME} or {"field": NAME}. */
static int parse_charge(const cJSON *it, const char *path, struct policy_net_meter *m,
			struct err *err)
{
	static const char *const keys[] = {"header", "field", NULL};
	const cJSON *h = member(it, "header"), *f = member(it, "field");
	char sub[2 * JPATH_MAX + 192];
	const char *s;
	int r;

	r = policy_json_object(it, path, err);
	if (r >= 0)
		r = policy_json_check_keys(it, keys, path, " (known: header, field)", err);
	if (r < 0)
		return r;
	if (!h == !f)
		return err_set(err, EINVAL, "%s: one of \"header\" or \"field\"", path);
	snprintf(sub, sizeof(sub), "%s.%s", path, h ? "header" : "field");
	r = policy_json_string(h ? h : f, sub, &s, err);
	if (r < 0)
		return r;
	if (!field_name_ok(s))
		return err_set(err, EINVAL,
			       "%s: %s is not a %s name (1 to 64 of A-Z, a-z, 0-9, '_', '-')", sub,
			       QUOTE(s), h ? "header" : "member");
	if (h) {
		m->charge_header = strdup(s);
		for (char *c = m->charge_header; c && *c; c++)
			if (*c >= 'A' && *c <= 'Z')
				*c = (char)(*c - 'A' + 'a');
	} else {
		m->charge_field = strdup(s);
	}
	if (!m->charge_header && !m->charge_field)
		return err_set(err, ENOMEM, "out of memory");
	return 0;
}

/* "lookup": {"request": "GET /path/{key}[...]", "timeout": "2s"}: one GET
 * (a lookup must be safe to repeat: RFC 9110 9.2.1), a path of the
 * printable characters of a request target with exactly one {key} and no
 * other brace, a timeout (2 s unless given) of at most 10 s (a replay is
 * held that long at most). */
static int parse_lookup(const cJSON *it, const char *path, struct policy_net_lookup *lk,
			struct err *err)
{
	static const char *const keys[] = {"request", "timeout", NULL};
	const cJSON *rq = member(it, "request"), *to = member(it, "timeout");
	char sub[2 * JPATH_MAX + 192];
	const char *s, *key;
	size_t n;
	int r;

	r = policy_json_object(it, path, err);
	if (r >= 0)
		r = policy_json_check_keys(it, keys, path, " (known: request, timeout)", err);
	if (r < 0)
		return r;
	if (!rq)
		return err_set(err, EINVAL, "%s: missing key \"request\"", path);
	snprintf(sub, sizeof(sub), "%s.request", path);
	r = policy_json_string(rq, sub, &s, err);
	if (r < 0)
		return r;
	if (strncmp(s, "GET /", 5) != 0)
		return err_set(err, EINVAL,
			       "%s: must be \"GET /PATH\" (a lookup changes nothing: GET only)",
			       sub);
	s += 4;
	n = strlen(s);
	key = strstr(s, "{key}");
	if (n > POLICY_LOOKUP_PATH_MAX || !key || strstr(key + 5, "{key}"))
		return err_set(
		    err, EINVAL,
		    "%s: the path must hold \"{key}\" once (the replay's Idempotency-Key) "
		    "and be at most %d bytes",
		    sub, POLICY_LOOKUP_PATH_MAX);
	for (size_t i = 0; i < n; i++) {
		bool in_key = s + i >= key && s + i < key + 5;

		if (s[i] <= ' ' || s[i] >= 127 || s[i] == '#' ||
		    (!in_key && (s[i] == '{' || s[i] == '}')))
			return err_set(
			    err, EINVAL,
			    "%s: byte %zu of the request is not a request target's (printable, "
			    "no space, '#' or brace but {key})",
			    sub, i + 4);
	}
	lk->prefix = strndup(s, (size_t)(key - s));
	lk->suffix = strdup(key + 5);
	if (!lk->prefix || !lk->suffix)
		return err_set(err, ENOMEM, "out of memory");
	lk->timeout_ms = 2000;
	if (to) {
		snprintf(sub, sizeof(sub), "%s.timeout", path);
		r = policy_json_string(to, sub, &s, err);
		if (r < 0)
			return r;
		if (policy_parse_duration(s, &lk->timeout_ms) < 0 || lk->timeout_ms == 0 ||
		    lk->timeout_ms > POLICY_LOOKUP_TIMEOUT_MAX)
			return err_set(
			    err, EINVAL,
			    "%s: %s is not a duration from 1ms to 10s (\"500ms\", \"2s\")", sub,
			    QUOTE(s));
	}
	return 0;
}

int policy_parse_meter(const cJSON *obj, const char *path, struct policy_net_rule *rule,
		       struct err *err)
{
	static const char *const keys[] = {"budget", "cap", "charge", "price", "lookup", NULL};
	const cJSON *it = member(obj, "metered"), *b, *cap;
	struct policy_net_meter *m;
	char sub[JPATH_MAX + 128];
	const char *s;
	int r;

	if (!it)
		return 0;
	snprintf(sub, sizeof(sub), "%s.metered", path);
	if (rule->protocol != POLICY_NET_HTTP)
		return err_set(err, EINVAL,
			       "%s: only on an \"http\" rule: the mediator does not see the "
			       "requests and responses of a \"%s\" one",
			       sub, policy_net_proto_name(rule->protocol));
	r = policy_json_object(it, sub, err);
	if (r >= 0)
		r = policy_json_check_keys(it, keys, sub,
					   " (known: budget, cap, charge, price, lookup)", err);
	if (r < 0)
		return r;
	b = member(it, "budget");
	cap = member(it, "cap");
	if (!b || !cap)
		return err_set(err, EINVAL, "%s: missing key \"%s\"", sub, !b ? "budget" : "cap");
	m = calloc(1, sizeof(*m));
	if (!m)
		return err_set(err, ENOMEM, "out of memory");
	rule->meter = m; /* owned by the rule from here on */
	snprintf(sub, sizeof(sub), "%s.metered.budget", path);
	r = policy_json_string(b, sub, &s, err);
	if (r < 0)
		return r;
	if (!policy_budget_id_valid(s))
		return err_set(err, EINVAL,
			       "%s: %s is not a budget id (1 to 64 of a-z, 0-9, '_', '.', '-'; not "
			       "starting with '.')",
			       sub, QUOTE(s));
	m->budget = strdup(s);
	if (!m->budget)
		return err_set(err, ENOMEM, "out of memory");
	snprintf(sub, sizeof(sub), "%s.metered.cap", path);
	r = credits(cap, sub, &m->cap, err);
	if (r < 0)
		return r;
	if (member(it, "charge")) {
		snprintf(sub, sizeof(sub), "%s.metered.charge", path);
		r = parse_charge(member(it, "charge"), sub, m, err);
		if (r < 0)
			return r;
	}
	if (member(it, "price")) {
		snprintf(sub, sizeof(sub), "%s.metered.price", path);
		r = parse_price(member(it, "price"), sub, &m->price, err);
	}
	if (r >= 0 && member(it, "lookup")) {
		snprintf(sub, sizeof(sub), "%s.metered.lookup", path);
		r = parse_lookup(member(it, "lookup"), sub, &m->lookup, err);
	}
	return r;
}

int policy_parse_grant_meter(const cJSON *obj, const char *path, const struct policy_net_rule *rule,
			     struct policy_net_grant *g, struct err *err)
{
	static const char *const keys[] = {"price", NULL};
	const cJSON *it = member(obj, "metered");
	char sub[JPATH_MAX + 128];
	int r;

	if (!it)
		return 0;
	snprintf(sub, sizeof(sub), "%s.metered", path);
	if (!rule->meter)
		return err_set(err, EINVAL,
			       "%s: the rule is not metered (its \"metered\" names the budget)",
			       sub);
	r = policy_json_object(it, sub, err);
	if (r >= 0)
		r = policy_json_check_keys(it, keys, sub,
					   " (known: price; the budget is the rule's)", err);
	if (r < 0)
		return r;
	if (!member(it, "price"))
		return err_set(err, EINVAL, "%s: missing key \"price\"", sub);
	snprintf(sub, sizeof(sub), "%s.metered.price", path);
	return parse_price(member(it, "price"), sub, &g->price, err);
}

const struct policy_net_price *policy_meter_price(const struct policy_net_rule *r, long grant)
{
	if (grant >= 0 && (size_t)grant < r->n_grants &&
	    r->grants[grant].price.kind != POLICY_PRICE_NONE)
		return &r->grants[grant].price;
	return &r->meter->price;
}

bool policy_has_meter(const struct policy *p)
{
	for (size_t i = 0; i < p->n_net_allow; i++)
		if (p->net_allow[i].meter)
			return true;
	return false;
}
