/* "jobs" of a metered network rule (docs/network.md, "Remote jobs"): the
 * routes of an asynchronous job service (submit, status, cancel, and the
 * submit of jobs authorised to outlive the session), and how long the
 * mediator waits at the session's end for the jobs it cancels to end. A
 * job's exposure is its submission's bound (the rule's or grant's price):
 * jobs are only declared on a metered rule, so that no job runs without a
 * bound reserved against a budget. */
#include "parse.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "json.h"

static const cJSON *member(const cJSON *obj, const char *key)
{
	return cJSON_GetObjectItemCaseSensitive(obj, key);
}

/* "METHOD /path": a method of GET, POST, PUT, PATCH, DELETE and a path
 * template (policy_grant_path_check) with "{id}" once (want_id) or never. */
static int parse_route(const cJSON *it, const char *path, bool want_id, struct policy_net_route *rt,
		       struct err *err)
{
	static const char *const methods[] = {"GET", "POST", "PUT", "PATCH", "DELETE", NULL};
	const char *s, *sp, *why = NULL, *id;
	size_t mlen;
	bool known = false;
	int r = policy_json_string(it, path, &s, err);

	if (r < 0)
		return r;
	sp = strchr(s, ' ');
	mlen = sp ? (size_t)(sp - s) : 0;
	for (size_t i = 0; methods[i] && !known; i++)
		known = mlen == strlen(methods[i]) && strncmp(s, methods[i], mlen) == 0;
	if (!known)
		return err_set(err, EINVAL,
			       "%s: %s is not \"METHOD /path\" (GET, POST, PUT, PATCH or DELETE)",
			       path, QUOTE(s));
	if (strlen(sp + 1) > POLICY_JOB_PATH_MAX || policy_grant_path_check(sp + 1, &why) < 0)
		return err_set(err, EINVAL, "%s: %s: %s", path, QUOTE(sp + 1),
			       why ? why : "longer than 256 bytes");
	id = strstr(sp + 1, "{id}");
	if (want_id && (!id || strstr(id + 1, "{id}") || strchr(sp + 1, '{') != id))
		return err_set(err, EINVAL,
			       "%s: %s must hold \"{id}\" once (the job's id) and no "
			       "other {name}",
			       path, QUOTE(sp + 1));
	if (!want_id && strchr(sp + 1, '{'))
		return err_set(err, EINVAL, "%s: %s: a submission's path is exact (no {name})",
			       path, QUOTE(sp + 1));
	memcpy(rt->method, s, mlen);
	rt->method[mlen] = '\0';
	rt->path = strdup(sp + 1);
	return rt->path ? 0 : err_set(err, ENOMEM, "out of memory");
}

void policy_jobs_free(struct policy_net_jobs *j)
{
	if (!j)
		return;
	free(j->submit.path);
	free(j->status.path);
	free(j->cancel.path);
	free(j->outlive.path);
	free(j);
}

int policy_parse_jobs(const cJSON *obj, const char *path, struct policy_net_rule *rule,
		      struct err *err)
{
	static const char *const keys[] = {"submit", "status", "cancel", "outlive", "settle", NULL};
	static const char *const need[] = {"submit", "status", "cancel"};
	const cJSON *it = member(obj, "jobs"), *x;
	struct policy_net_jobs *j;
	char sub[JPATH_MAX + 128];
	const char *s;
	int r;

	if (!it)
		return 0;
	snprintf(sub, sizeof(sub), "%s.jobs", path);
	if (!rule->meter)
		return err_set(err, EINVAL,
			       "%s: only on a metered rule (a job's exposure is reserved against "
			       "its \"metered\" budget)",
			       sub);
	r = policy_json_object(it, sub, err);
	if (r >= 0)
		r = policy_json_check_keys(
		    it, keys, sub, " (known: submit, status, cancel, outlive, settle)", err);
	if (r < 0)
		return r;
	for (size_t i = 0; i < 3; i++)
		if (!member(it, need[i]))
			return err_set(err, EINVAL, "%s: missing key \"%s\"", sub, need[i]);
	j = calloc(1, sizeof(*j));
	if (!j)
		return err_set(err, ENOMEM, "out of memory");
	rule->jobs = j; /* owned by the rule from here on */
	j->settle_ms = POLICY_JOBS_SETTLE_DEF;
	snprintf(sub, sizeof(sub), "%s.jobs.submit", path);
	r = parse_route(member(it, "submit"), sub, false, &j->submit, err);
	snprintf(sub, sizeof(sub), "%s.jobs.status", path);
	if (r >= 0)
		r = parse_route(member(it, "status"), sub, true, &j->status, err);
	snprintf(sub, sizeof(sub), "%s.jobs.cancel", path);
	if (r >= 0)
		r = parse_route(member(it, "cancel"), sub, true, &j->cancel, err);
	snprintf(sub, sizeof(sub), "%s.jobs.outlive", path);
	if (r >= 0 && member(it, "outlive"))
		r = parse_route(member(it, "outlive"), sub, false, &j->outlive, err);
	if (r < 0)
		return r;
	if (j->outlive.path && strcmp(j->outlive.method, j->submit.method) == 0 &&
	    strcmp(j->outlive.path, j->submit.path) == 0)
		return err_set(err, EINVAL,
			       "%s: the same route as \"submit\" (a job outlives the session only "
			       "when submitted through a route of its own)",
			       sub);
	if ((x = member(it, "settle"))) {
		uint64_t v = 0;

		snprintf(sub, sizeof(sub), "%s.jobs.settle", path);
		r = policy_json_string(x, sub, &s, err);
		if (r < 0)
			return r;
		if (policy_parse_duration(s, &v) < 0 || v == 0 || v > POLICY_JOBS_SETTLE_MAX)
			return err_set(err, EINVAL,
				       "%s: %s is not a duration from 1ms to 60s (as \"5s\")", sub,
				       QUOTE(s));
		j->settle_ms = v;
	}
	return 0;
}

bool policy_route_match(const struct policy_net_route *rt, const char *method, const char *path)
{
	size_t n = strcspn(path, "?#");
	const char *t = rt->path, *p = path, *end = path + n;

	if (!t || strcmp(method, rt->method) != 0)
		return false;
	while (*t && p < end) {
		if (strncmp(t, "{id}", 4) == 0) {
			size_t seg = strcspn(p, "/?#");

			if (seg == 0)
				return false;
			p += seg;
			t += 4;
			continue;
		}
		if (*t != *p)
			return false;
		t++;
		p++;
	}
	return !*t && p == end;
}

uint64_t policy_jobs_settle_ms(const struct policy *p)
{
	uint64_t ms = 0;

	for (size_t i = 0; i < p->n_net_allow; i++)
		if (p->net_allow[i].jobs && p->net_allow[i].jobs->settle_ms > ms)
			ms = p->net_allow[i].jobs->settle_ms;
	return ms;
}
