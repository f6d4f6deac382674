/* session.json both ways: struct session_info to text and back. Pure (no
 * I/O): unit-tested, and what a reader trusts of an entry is what this
 * checked. */
#include "session.h"

#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../include/cleanup.h"

/* ---------------------------------------------------------------- JSON */

static cJSON *proc_json(const struct proc_id *id)
{
	cJSON *o;

	if (id->pid <= 0)
		return cJSON_CreateNull();
	o = cJSON_CreateObject();
	if (o) {
		cJSON_AddNumberToObject(o, "pid", id->pid);
		cJSON_AddNumberToObject(o, "start_time", (double)id->start_time);
	}
	return o;
}

static void add_str_or_null(cJSON *o, const char *key, const char *s)
{
	if (s[0])
		cJSON_AddStringToObject(o, key, s);
	else
		cJSON_AddNullToObject(o, key);
}

/* Each lease and endpoint names its session, owner and generation, so a
 * client that found it (ps --json) can check it is the one it meant. */
static void add_leases(cJSON *o, const struct session_info *i)
{
	cJSON *a = cJSON_AddArrayToObject(o, "leases");

	for (size_t k = 0; a && k < i->n_leases; k++) {
		const struct session_lease *l = &i->leases[k];
		cJSON *e = cJSON_CreateObject();

		if (!e)
			return;
		cJSON_AddStringToObject(e, "service", l->service);
		cJSON_AddStringToObject(e, "session", i->id);
		cJSON_AddNumberToObject(e, "owner_uid", i->owner);
		cJSON_AddNumberToObject(e, "generation", i->generation);
		cJSON_AddNumberToObject(e, "pid", l->pid);
		cJSON_AddNumberToObject(e, "lease_ms", (double)l->lease_ms);
		add_str_or_null(e, "started", l->started);
		add_str_or_null(e, "expires", l->expires);
		cJSON_AddStringToObject(e, "state", l->state);
		add_str_or_null(e, "ended", l->ended);
		cJSON_AddItemToArray(a, e);
	}
}

static void add_endpoints(cJSON *o, const struct session_info *i)
{
	cJSON *a = cJSON_AddArrayToObject(o, "endpoints");

	for (size_t k = 0; a && k < i->n_endpoints; k++) {
		cJSON *e = cJSON_CreateObject();

		if (!e)
			return;
		cJSON_AddStringToObject(e, "host", i->endpoints[k].host);
		cJSON_AddNumberToObject(e, "sandbox", i->endpoints[k].sandbox);
		cJSON_AddStringToObject(e, "session", i->id);
		cJSON_AddNumberToObject(e, "generation", i->generation);
		cJSON_AddStringToObject(e, "protocol", i->endpoints[k].http ? "http" : "tcp");
		add_str_or_null(e, "service", i->endpoints[k].service);
		/* The lease host only with a nonce: without one (--weaken
		 * lease-port-only) the relay checks no host name. */
		if (i->endpoints[k].http && i->endpoints[k].nonce[0]) {
			char name[96];

			session_lease_host(name, sizeof(name), i->id, i->generation);
			cJSON_AddStringToObject(e, "lease_host", name);
		}
		if (i->endpoints[k].http)
			add_str_or_null(e, "nonce", i->endpoints[k].nonce);
		cJSON_AddItemToArray(a, e);
	}
}

char *session_info_json(const struct session_info *i)
{
	cJSON *o = cJSON_CreateObject();
	char *text;

	if (!o)
		return NULL;
	cJSON_AddStringToObject(o, "id", i->id);
	add_str_or_null(o, "name", i->name);
	cJSON_AddNumberToObject(o, "owner_uid", i->owner);
	cJSON_AddNumberToObject(o, "generation", i->generation);
	cJSON_AddItemToObject(o, "supervisor", proc_json(&i->supervisor));
	cJSON_AddItemToObject(o, "init", proc_json(&i->init));
	cJSON_AddStringToObject(o, "created", i->created);
	add_str_or_null(o, "expires", i->expires);
	cJSON_AddStringToObject(o, "state", session_state_name(i->state));
	if (i->state == SESSION_ENDED || i->state == SESSION_RETAINED) {
		cJSON_AddNumberToObject(o, "status", i->status);
		cJSON_AddStringToObject(o, "ended", i->ended);
	}
	if (i->final_lost) /* read back only, never written so */
		cJSON_AddTrueToObject(o, "final_lost");
	cJSON_AddStringToObject(o, "policy_sha256", i->policy_sha256);
	cJSON_AddBoolToObject(o, "detached", i->detached);
	cJSON_AddStringToObject(o, "command", i->command);
	add_leases(o, i);
	add_endpoints(o, i);
	text = cJSON_Print(o);
	cJSON_Delete(o);
	return text;
}

/* A whole number in [min, max] (cJSON keeps numbers as doubles). */
static int get_num(const cJSON *o, const char *key, double min, double max, double *out,
		   struct err *err)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);

	if (!cJSON_IsNumber(v) || v->valuedouble < min || v->valuedouble > max ||
	    v->valuedouble != (double)(long long)v->valuedouble)
		return err_set(err, EINVAL, "session.json: %s: expected a whole number", key);
	*out = v->valuedouble;
	return 0;
}

/* A string that fits size, or "" for null when nullable. */
static int get_str(const cJSON *o, const char *key, bool nullable, char *buf, size_t size,
		   struct err *err)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);

	if (nullable && cJSON_IsNull(v)) {
		buf[0] = '\0';
		return 0;
	}
	if (!cJSON_IsString(v) || strlen(v->valuestring) >= size)
		return err_set(err, EINVAL, "session.json: %s: expected a string", key);
	memcpy(buf, v->valuestring, strlen(v->valuestring) + 1);
	return 0;
}

static int get_proc(const cJSON *o, const char *key, bool nullable, struct proc_id *out,
		    struct err *err)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
	double pid, start;

	out->pid = 0;
	out->start_time = 0;
	if (nullable && cJSON_IsNull(v))
		return 0;
	if (!cJSON_IsObject(v) || get_num(v, "pid", 1, INT32_MAX, &pid, err) < 0 ||
	    get_num(v, "start_time", 0, 9007199254740992.0, &start, err) < 0)
		return err_set(err, EINVAL, "session.json: %s: expected {pid, start_time}", key);
	out->pid = (pid_t)pid;
	out->start_time = (unsigned long long)start;
	return 0;
}

/* "leases" and "endpoints" may be missing (entries of older versions). */
static int parse_leases(const cJSON *o, struct session_info *out, struct err *err)
{
	const cJSON *a = cJSON_GetObjectItemCaseSensitive(o, "leases"), *e;
	double pid, lease;
	int rc;

	if (!a)
		return 0;
	if (!cJSON_IsArray(a) || cJSON_GetArraySize(a) > SESSION_LEASES_MAX)
		return err_set(err, EINVAL, "session.json: leases: expected an array");
	cJSON_ArrayForEach(e, a) {
		struct session_lease *l = &out->leases[out->n_leases++];

		if ((rc = get_str(e, "service", false, l->service, sizeof(l->service), err)) < 0 ||
		    (rc = get_num(e, "pid", 0, INT32_MAX, &pid, err)) < 0 ||
		    (rc = get_num(e, "lease_ms", 0, 9007199254740992.0, &lease, err)) < 0 ||
		    (rc = get_str(e, "started", true, l->started, sizeof(l->started), err)) < 0 ||
		    (rc = get_str(e, "expires", true, l->expires, sizeof(l->expires), err)) < 0 ||
		    (rc = get_str(e, "state", false, l->state, sizeof(l->state), err)) < 0 ||
		    (rc = get_str(e, "ended", true, l->ended, sizeof(l->ended), err)) < 0)
			return rc;
		/* The states the supervisor writes; like the session's own
		 * state, anything else is not an entry of ours. */
		if (strcmp(l->state, "starting") != 0 && strcmp(l->state, "running") != 0 &&
		    strcmp(l->state, "retained") != 0 && strcmp(l->state, "ended") != 0)
			return err_set(err, EINVAL, "session.json: leases: state: unknown \"%s\"",
				       l->state);
		l->pid = (pid_t)pid;
		l->lease_ms = (uint64_t)lease;
	}
	return 0;
}

int session_lease_host(char *buf, size_t size, const char *id, unsigned generation)
{
	return snprintf(buf, size, "g%u.%s.paddock.test", generation, id);
}

/* A string, or "" when missing or null (entries of older versions). */
static int opt_str(const cJSON *o, const char *key, char *buf, size_t size, struct err *err)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);

	buf[0] = '\0';
	if (!v || cJSON_IsNull(v))
		return 0;
	return get_str(o, key, false, buf, size, err);
}

static int parse_endpoints(const cJSON *o, struct session_info *out, struct err *err)
{
	const cJSON *a = cJSON_GetObjectItemCaseSensitive(o, "endpoints"), *e;
	double port;
	int rc;

	if (!a)
		return 0;
	if (!cJSON_IsArray(a) || cJSON_GetArraySize(a) > SESSION_ENDPOINTS_MAX)
		return err_set(err, EINVAL, "session.json: endpoints: expected an array");
	cJSON_ArrayForEach(e, a) {
		struct session_endpoint *p = &out->endpoints[out->n_endpoints++];

		char proto[8];

		if ((rc = get_str(e, "host", false, p->host, sizeof(p->host), err)) < 0 ||
		    (rc = get_num(e, "sandbox", 1, 65535, &port, err)) < 0 ||
		    (rc = opt_str(e, "protocol", proto, sizeof(proto), err)) < 0 ||
		    (rc = opt_str(e, "service", p->service, sizeof(p->service), err)) < 0 ||
		    (rc = opt_str(e, "nonce", p->nonce, sizeof(p->nonce), err)) < 0)
			return rc;
		p->sandbox = (uint16_t)port;
		p->http = strcmp(proto, "http") == 0;
	}
	return 0;
}

static int parse_fields(const cJSON *o, struct session_info *out, struct err *err)
{
	char state[16];
	double owner, gen, status;
	int rc;

	if ((rc = get_str(o, "id", false, out->id, sizeof(out->id), err)) < 0 ||
	    (rc = get_str(o, "name", true, out->name, sizeof(out->name), err)) < 0 ||
	    (rc = get_num(o, "owner_uid", 0, UINT32_MAX - 1.0, &owner, err)) < 0 ||
	    (rc = get_num(o, "generation", 1, UINT32_MAX, &gen, err)) < 0 ||
	    (rc = get_proc(o, "supervisor", false, &out->supervisor, err)) < 0 ||
	    (rc = get_proc(o, "init", true, &out->init, err)) < 0 ||
	    (rc = get_str(o, "created", false, out->created, sizeof(out->created), err)) < 0 ||
	    (rc = get_str(o, "expires", true, out->expires, sizeof(out->expires), err)) < 0 ||
	    (rc = get_str(o, "state", false, state, sizeof(state), err)) < 0 ||
	    (rc = get_str(o, "policy_sha256", false, out->policy_sha256, sizeof(out->policy_sha256),
			  err)) < 0)
		return rc;
	if (!session_id_valid(out->id) || (out->name[0] && !session_name_valid(out->name)))
		return err_set(err, EINVAL, "session.json: bad id or name");
	out->owner = (uid_t)owner;
	out->generation = (unsigned)gen;
	out->detached = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(o, "detached"));
	/* Optional: entries written before it have none. */
	if (cJSON_GetObjectItemCaseSensitive(o, "command") &&
	    (rc = get_str(o, "command", false, out->command, sizeof(out->command), err)) < 0)
		return rc;
	if ((rc = parse_leases(o, out, err)) < 0 || (rc = parse_endpoints(o, out, err)) < 0)
		return rc;
	if (strcmp(state, "starting") == 0)
		out->state = SESSION_STARTING;
	else if (strcmp(state, "running") == 0)
		out->state = SESSION_RUNNING;
	else if (strcmp(state, "retained") == 0)
		out->state = SESSION_RETAINED;
	else if (strcmp(state, "ended") == 0)
		out->state = SESSION_ENDED;
	else
		return err_set(err, EINVAL, "session.json: state: unknown \"%s\"", state);
	if (out->state != SESSION_ENDED && out->state != SESSION_RETAINED)
		return 0;
	if ((rc = get_num(o, "status", 0, 255, &status, err)) < 0 ||
	    (rc = get_str(o, "ended", false, out->ended, sizeof(out->ended), err)) < 0)
		return rc;
	out->status = (int)status;
	return 0;
}

int session_info_parse(const char *text, size_t len, struct session_info *out, struct err *err)
{
	cJSON *o;
	int rc;

	memset(out, 0, sizeof(*out));
	if (len > SESSION_JSON_MAX || memchr(text, '\0', len))
		return err_set(err, EINVAL, "session.json: not a JSON text");
	o = cJSON_ParseWithLengthOpts(text, len, NULL, false);
	if (!cJSON_IsObject(o)) {
		cJSON_Delete(o);
		return err_set(err, EINVAL, "session.json: not a JSON object");
	}
	rc = parse_fields(o, out, err);
	cJSON_Delete(o);
	return rc;
}

/* ------------------------------------------------------------ registry */
