/* The supervisor's part of remote jobs and provider adapters
 * (docs/network.md, "Remote jobs", "Adapters"): their knobs, their part of
 * the mediator's configuration, and the jobs' ends read from the
 * admissions log into the record, beside (never instead of) the local
 * exit. */
#include "run.h"

#include <cjson/cJSON.h>
#include <stdio.h>
#include <string.h>

int jobs_prepare(struct run_spec *r, struct err *err)
{
	bool jobs = policy_jobs_settle_ms(r->policy) > 0;

	if ((r->opt->weaken & WEAKEN_LOCAL_EXIT_IS_STOP) && !jobs)
		return err_set(err, EINVAL,
			       "--weaken local-exit-is-stop: the policy has no rule with \"jobs\"");
	if ((r->opt->weaken & WEAKEN_UNKNOWN_EVENT_ALLOW) && !policy_has_adapter(r->policy))
		return err_set(err, EINVAL,
			       "--weaken unknown-event-allow: the policy has no rule with an "
			       "\"adapter\"");
	return 0;
}

void jobs_config(cJSON *root, const struct run_spec *r)
{
	if (r->opt->weaken & WEAKEN_LOCAL_EXIT_IS_STOP)
		cJSON_AddTrueToObject(root, "local_exit_is_stop");
	if (r->opt->weaken & WEAKEN_UNKNOWN_EVENT_ALLOW)
		cJSON_AddTrueToObject(root, "unknown_event_allow");
}

static void route(cJSON *o, const char *key, const struct policy_net_route *rt)
{
	char s[POLICY_JOB_PATH_MAX + 16];

	if (!rt->path)
		return;
	snprintf(s, sizeof(s), "%s %s", rt->method, rt->path);
	cJSON_AddStringToObject(o, key, s);
}

void jobs_policy_json(cJSON *rule, const struct policy_net_rule *p)
{
	if (p->jobs) {
		cJSON *j = cJSON_AddObjectToObject(rule, "jobs");
		char settle[32];

		route(j, "submit", &p->jobs->submit);
		route(j, "status", &p->jobs->status);
		route(j, "cancel", &p->jobs->cancel);
		route(j, "outlive", &p->jobs->outlive);
		snprintf(settle, sizeof(settle), "%llums", (unsigned long long)p->jobs->settle_ms);
		cJSON_AddStringToObject(j, "settle", settle);
	}
	if (p->adapter)
		cJSON_AddStringToObject(rule, "adapter", policy_adapter_name(p->adapter));
	if (p->fallback)
		cJSON_AddStringToObject(rule, "fallback", p->fallback);
}

void jobs_actions_json(cJSON *net, const struct policy *p)
{
	const struct policy_net_actions *a = p->net_actions;
	cJSON *o, *ms, *ts;

	if (!a || !(o = cJSON_AddObjectToObject(net, "actions")))
		return;
	ms = cJSON_AddArrayToObject(o, "models");
	for (size_t i = 0; ms && i < a->n_models; i++)
		cJSON_AddItemToArray(ms, cJSON_CreateString(a->models[i]));
	ts = cJSON_AddArrayToObject(o, "tools");
	for (size_t i = 0; ts && i < a->n_tools; i++)
		cJSON_AddItemToArray(ts, cJSON_CreateString(a->tools[i]));
}

static void copy(char *dst, size_t size, const cJSON *o, const char *key)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);

	snprintf(dst, size, "%s", cJSON_IsString(v) ? v->valuestring : "");
}

static uint64_t number(const cJSON *o, const char *key)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);

	return cJSON_IsNumber(v) && v->valuedouble >= 0 && v->valuedouble < 1e15
		   ? (uint64_t)v->valuedouble
		   : 0;
}

void jobs_log_line(struct outcome_net *out, const cJSON *line)
{
	const cJSON *ev = cJSON_GetObjectItemCaseSensitive(line, "event");
	char adm[48], state[16];
	struct outcome_job *j = NULL;

	if (!cJSON_IsString(ev) || strcmp(ev->valuestring, "job") != 0)
		return;
	copy(adm, sizeof(adm), line, "job_admission");
	copy(state, sizeof(state), line, "state");
	for (size_t i = 0; i < out->n_jobs && !j; i++)
		if (strcmp(out->jobs[i].admission, adm) == 0)
			j = &out->jobs[i];
	if (!j) {
		if (out->n_jobs == OUTCOME_JOBS_MAX)
			return;
		j = &out->jobs[out->n_jobs++];
		memset(j, 0, sizeof(*j));
		snprintf(j->admission, sizeof(j->admission), "%s", adm);
	}
	copy(j->id, sizeof(j->id), line, "job");
	copy(j->lease, sizeof(j->lease), line, "lease");
	copy(j->ledger, sizeof(j->ledger), line, "ledger");
	j->exposure = number(line, "exposure");
	if (strcmp(state, "leased") == 0) {
		/* Until its end line: nobody confirmed its end. */
		snprintf(j->state, sizeof(j->state), "unknown");
		snprintf(j->remote, sizeof(j->remote), "not-reconciled");
		return;
	}
	snprintf(j->state, sizeof(j->state), "%s", state);
	copy(j->remote, sizeof(j->remote), line, "remote_state");
	copy(j->cancel, sizeof(j->cancel), line, "cancel");
	j->charge = number(line, "charge");
	j->charge_known = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(line, "charge_known"));
}

cJSON *jobs_json(const struct outcome_net *net)
{
	cJSON *a = cJSON_CreateArray();

	for (size_t i = 0; a && i < net->n_jobs; i++) {
		const struct outcome_job *j = &net->jobs[i];
		cJSON *o = cJSON_CreateObject();

		cJSON_AddStringToObject(o, "id", j->id);
		cJSON_AddStringToObject(o, "submitted_by", j->admission);
		cJSON_AddStringToObject(o, "lease", j->lease);
		cJSON_AddStringToObject(o, "state", j->state);
		cJSON_AddStringToObject(o, "remote_state", j->remote);
		cJSON_AddStringToObject(o, "cancel", j->cancel[0] ? j->cancel : "not-sent");
		if (j->charge_known)
			cJSON_AddNumberToObject(o, "charge", (double)j->charge);
		else
			cJSON_AddNullToObject(o, "charge");
		cJSON_AddNumberToObject(o, "exposure", (double)j->exposure);
		cJSON_AddStringToObject(o, "ledger", j->ledger);
		cJSON_AddItemToArray(a, o);
	}
	return a;
}

unsigned jobs_stop_ms(const struct policy *p)
{
	uint64_t ms = policy_jobs_settle_ms(p);

	return ms ? (unsigned)ms + 2000 : 0;
}
