/* Provider adapters (docs/network.md, "Adapters"): two request shapes of
 * a model API, an OpenAI-like chat completion and an Anthropic-like
 * message, each parsed strictly into the one action schema the grant
 * (network.actions) and the ledger see:
 *
 *   {"action": "generate", "model": M, "tools": [T...], "max_tokens": N}
 *
 * A request the adapter cannot parse (another path or method, a body that
 * is not its shape: a key it does not know, a member of the wrong type, a
 * chunked or oversized body) is unparsed, and refused as such: never
 * passed on with the grant unchecked (HB-21). Pure, fuzzed ('a'). */
#include "mediator.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>

static const cJSON *member(const cJSON *o, const char *k)
{
	return cJSON_GetObjectItemCaseSensitive(o, k);
}

/* Every member of o is one of keys. */
static bool known_keys(const cJSON *o, const char *const *keys)
{
	const cJSON *it;

	cJSON_ArrayForEach(it, o) {
		bool k = false;

		for (size_t i = 0; keys[i] && !k; i++)
			k = it->string && strcmp(it->string, keys[i]) == 0;
		if (!k)
			return false;
	}
	return true;
}

static bool name_ok(const cJSON *v)
{
	size_t n = cJSON_IsString(v) ? strlen(v->valuestring) : 0;

	return n > 0 && n <= ADAPTER_NAME_MAX &&
	       strspn(v->valuestring,
		      "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.:-") == n;
}

/* A non-empty array of objects, each with a string "role". */
static bool messages_ok(const cJSON *m)
{
	const cJSON *it;

	if (!cJSON_IsArray(m) || cJSON_GetArraySize(m) == 0)
		return false;
	cJSON_ArrayForEach(it, m) {
		if (!cJSON_IsObject(it) || !cJSON_IsString(member(it, "role")))
			return false;
	}
	return true;
}

static int tool_names(const cJSON *tools, bool openai, struct adapter_action *a, const char **why)
{
	const cJSON *it;

	if (!tools)
		return 0;
	if (!cJSON_IsArray(tools) || cJSON_GetArraySize(tools) > ADAPTER_TOOLS_MAX) {
		*why = "tools: not an array of at most 8";
		return -EINVAL;
	}
	cJSON_ArrayForEach(it, tools) {
		const cJSON *n =
		    openai ? member(member(it, "function"), "name") : member(it, "name");

		if (!cJSON_IsObject(it) || !name_ok(n) ||
		    (openai && !(cJSON_IsString(member(it, "type")) &&
				 strcmp(member(it, "type")->valuestring, "function") == 0))) {
			*why = "tools: an entry not of the adapter's shape";
			return -EINVAL;
		}
		snprintf(a->tools[a->n_tools++], ADAPTER_NAME_MAX + 1, "%s", n->valuestring);
	}
	return 0;
}

static int max_tokens(const cJSON *v, struct adapter_action *a, const char **why)
{
	if (!v)
		return 0;
	if (!cJSON_IsNumber(v) || v->valuedouble < 1 || v->valuedouble > 1e9 ||
	    v->valuedouble != (double)(uint64_t)v->valuedouble) {
		*why = "max_tokens: not a whole number from 1";
		return -EINVAL;
	}
	a->max_tokens = (uint64_t)v->valuedouble;
	a->has_max = true;
	return 0;
}

static int parse_body(enum policy_adapter ad, const cJSON *b, struct adapter_action *a,
		      const char **why)
{
	static const char *const oa[] = {
	    "model",  "messages", "max_tokens", "max_completion_tokens", "tools", "temperature",
	    "stream", "user",	  NULL};
	static const char *const an[] = {"model",	"messages", "max_tokens", "system", "tools",
					 "temperature", "stream",   "metadata",	  NULL};
	bool openai = ad == POLICY_ADAPTER_OPENAI;
	const cJSON *mt = member(b, "max_tokens");

	if (!cJSON_IsObject(b)) {
		*why = "the body is not a JSON object";
		return -EINVAL;
	}
	if (!known_keys(b, openai ? oa : an)) {
		*why = "a member the adapter does not know";
		return -EINVAL;
	}
	if (!name_ok(member(b, "model")) || !messages_ok(member(b, "messages"))) {
		*why = "no model, or no messages of the adapter's shape";
		return -EINVAL;
	}
	if (openai && !mt)
		mt = member(b, "max_completion_tokens");
	if (!openai && !mt) {
		*why = "max_tokens is required by the adapter";
		return -EINVAL;
	}
	snprintf(a->kind, sizeof(a->kind), "generate");
	snprintf(a->model, sizeof(a->model), "%s", member(b, "model")->valuestring);
	if (max_tokens(mt, a, why) < 0)
		return -EINVAL;
	return tool_names(member(b, "tools"), openai, a, why);
}

int adapter_parse(enum policy_adapter ad, const struct http_request *rq, const char *path,
		  const char *buf, size_t len, bool eof, struct adapter_action *a, const char **why)
{
	const char *want = ad == POLICY_ADAPTER_OPENAI ? "/v1/chat/completions" : "/v1/messages";
	size_t pn = strcspn(path, "?#");
	cJSON *b;
	int r;

	memset(a, 0, sizeof(*a));
	*why = "";
	if (strcmp(rq->method, "POST") != 0 || pn != strlen(want) || strncmp(path, want, pn) != 0) {
		*why = "not the adapter's endpoint";
		return -EINVAL;
	}
	if (rq->chunked || !rq->has_length || rq->content_length == 0 ||
	    rq->content_length > ADAPTER_BODY_MAX ||
	    rq->head_len + rq->content_length > HTTP_HEAD_MAX) {
		*why = "no body of a known length within 8 KiB";
		return -EINVAL;
	}
	if (len < rq->head_len || len - rq->head_len < rq->content_length) {
		if (eof) {
			*why = "the body ended short";
			return -EINVAL;
		}
		return 1;
	}
	if (memchr(buf + rq->head_len, '\0', rq->content_length)) {
		*why = "a NUL in the body";
		return -EINVAL;
	}
	b = cJSON_ParseWithLength(buf + rq->head_len, rq->content_length);
	if (!b) {
		*why = "the body is not JSON";
		return -EINVAL;
	}
	r = parse_body(ad, b, a, why);
	cJSON_Delete(b);
	return r;
}

int adapter_allows(const struct policy_net_actions *g, const struct adapter_action *a,
		   const char **why)
{
	bool ok = false;

	for (size_t i = 0; g && i < g->n_models && !ok; i++)
		ok = strcmp(g->models[i], a->model) == 0;
	if (!ok) {
		*why = "model not in network.actions.models";
		return -EACCES;
	}
	for (size_t t = 0; t < a->n_tools; t++) {
		ok = false;
		for (size_t i = 0; i < g->n_tools && !ok; i++)
			ok = strcmp(g->tools[i], a->tools[t]) == 0;
		if (!ok) {
			*why = "a tool not in network.actions.tools";
			return -EACCES;
		}
	}
	return 0;
}

int adapter_charge(enum policy_adapter ad, const char *buf, size_t len, bool eof, bool full,
		   uint64_t *charge)
{
	const char *member_name =
	    ad == POLICY_ADAPTER_OPENAI ? "completion_tokens" : "output_tokens";
	const char *end = memmem(buf, len, "\r\n\r\n", 4);
	const cJSON *u;
	cJSON *b;
	int r = -ENOENT;

	if (!eof && !full)
		return 1; /* the body is read to its end (the upstream closes) */
	if (!end || memchr(end + 4, '\0', len - (size_t)(end + 4 - buf)))
		return -ENOENT;
	b = cJSON_ParseWithLength(end + 4, len - (size_t)(end + 4 - buf));
	u = member(member(b, "usage"), member_name);
	if (cJSON_IsNumber(u) && u->valuedouble >= 0 &&
	    u->valuedouble <= (double)POLICY_METER_CREDITS_MAX &&
	    u->valuedouble == (double)(uint64_t)u->valuedouble) {
		*charge = (uint64_t)u->valuedouble;
		r = 0;
	}
	cJSON_Delete(b);
	return r;
}

void adapter_action_json(const struct adapter_action *a, char *out, size_t size)
{
	size_t n;

	snprintf(out, size, "{\"action\":\"%s\",\"model\":\"%s\",\"tools\":[", a->kind, a->model);
	for (size_t i = 0; i < a->n_tools; i++) {
		n = strlen(out);
		snprintf(out + n, size - n, "%s\"%s\"", i ? "," : "", a->tools[i]);
	}
	n = strlen(out);
	if (a->has_max)
		snprintf(out + n, size - n, "],\"max_tokens\":%llu}",
			 (unsigned long long)a->max_tokens);
	else
		snprintf(out + n, size - n, "]}");
}
