/* HB-16: a session's end accounts for its remote jobs.
 *
 * Fixture (outside every sandbox): the mock job service (receivers/
 * jobsvc.c, 127.0.0.1:19030, "jobs.test"), its own ledger of jobs
 * (owner, state, charge) and of the cancels asked. The policy meters
 * jobs.test (budget "jobs", cap 100; a job's exposure is its "max") and
 * declares its jobs (submit POST /v1/jobs, outlive POST /v1/batch, status,
 * cancel; settle 6 s). Session A submits one job through /v1/batch
 * (authorised to outlive it: 2.5 s of work) and exits. Session B submits
 * three through /v1/jobs, each 8 credits at most, whose cancellation the
 * service accepts (20 s of work), refuses (2 s) or never answers (20 s),
 * and exits at once. Evidence: the service's ledger once A's job had time
 * to finish, against each session record's network.jobs, and the
 * budget's ledger (`paddock budget show jobs --json`: the credits held as
 * unknown).
 *
 * Arms: enforced; weakened:local-exit-is-stop (paddock's knob: the
 * session's end is taken for the jobs' end, nothing is cancelled, every
 * job recorded stopped: must FAIL); docker NOT APPLICABLE. The reference:
 * the seed's fixture run (in the evidence). */
#include "budget_run.h"
#include "../../observers/observe.h"
#include "../../receivers/jobsvc.h"
#include "hb16_grade.h"

#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define PORT 19030
#define REFERENCE                                                                               \
	"the seed's reference supervisor (fixture only): enforcement UNKNOWN, control PASS; a " \
	"remote job kept billing after the local task was killed; one arm could not observe "   \
	"the remote stop"
#define NA_REASON                                                                        \
	"a container has no mediator: nothing leases, cancels or reconciles its remote " \
	"jobs; the reference is " REFERENCE
#define NA_SCOPE "HB-16 (the mediator's remote jobs); harness rule: --network none/host only"

static const struct case_arm arms[] = {
    {.name = "enforced"},
    {.name = "weakened:local-exit-is-stop"},
    {.name = "docker",
     .na_reason = {NA_REASON, NA_REASON, NA_REASON},
     .na_scope = {NA_SCOPE, NA_SCOPE, NA_SCOPE}},
    {.name = NULL},
};

struct hb16 {
	struct jobsvc *s;
	struct hb16_obs o;
};

#define C "curl -s -m 20 -o /dev/null -X POST -H 'Content-Type: application/json' "
#define U "http://jobs.test:19030"
#define JOB(path, max, mode, ms) \
	C "-d '{\"max\":" #max ",\"cancel\":\"" mode "\",\"run_ms\":" #ms "}' " U path "\n"
#define RUN_A JOB("/v1/batch", 6, "accept", 2500) "exit 0\n"
#define RUN_B                               \
	JOB("/v1/jobs", 8, "accept", 20000) \
	JOB("/v1/jobs", 8, "refuse", 2000) JOB("/v1/jobs", 8, "silent", 20000) "exit 0\n"

static int setup(struct case_run *cr, struct err *why)
{
	struct hb16 *h = cr->priv;
	int rc = jobsvc_start(&h->s, PORT);

	if (rc < 0)
		return err_sys(why, rc, "the job service could not listen on 127.0.0.1:%d", PORT);
	return 0;
}

static void teardown(struct case_run *cr)
{
	struct hb16 *h = cr->priv;

	jobsvc_stop(h->s);
}

static bool probe(struct jobsvc *s, size_t want)
{
	static const char req[] = "GET /probe HTTP/1.1\r\nHost: h\r\n\r\n";
	char b[256];

	(void)observe_request_tcp(PORT, req, 2000, b, sizeof(b));
	for (int t = 0; t < 50 && jobsvc_requests(s, "GET /probe ") < want; t++)
		sleep_ms(10);
	return jobsvc_requests(s, "GET /probe ") >= want;
}

/* A record's network.jobs joined to the service's jobs by id. */
static bool read_jobs(struct case_run *cr, const char *rec, struct hb16_obs *o)
{
	static char text[1 << 20];
	FILE *f = fopen(rec, "r");
	size_t n = f ? fread(text, 1, sizeof(text) - 1, f) : 0;
	cJSON *root, *it;
	const cJSON *jobs;

	if (f)
		fclose(f);
	text[n] = '\0';
	root = cJSON_Parse(text);
	jobs = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(root, "network"),
						"jobs");
	if (!root) {
		result_evidence(cr->r, "record", "%s: not read", rec);
		return false;
	}
	cJSON_ArrayForEach(it, jobs) {
		const cJSON *id = cJSON_GetObjectItemCaseSensitive(it, "id");
		const cJSON *st = cJSON_GetObjectItemCaseSensitive(it, "state");
		const cJSON *ls = cJSON_GetObjectItemCaseSensitive(it, "lease");
		const cJSON *ch = cJSON_GetObjectItemCaseSensitive(it, "charge");
		const cJSON *ex = cJSON_GetObjectItemCaseSensitive(it, "exposure");
		const cJSON *rs = cJSON_GetObjectItemCaseSensitive(it, "remote_state");

		for (size_t i = 0; cJSON_IsString(id) && i < o->n; i++) {
			struct hb16_job *j = &o->j[i];

			if (strcmp(j->id, id->valuestring) != 0)
				continue;
			j->recorded = true;
			snprintf(j->rec_state, sizeof(j->rec_state), "%s",
				 cJSON_IsString(st) ? st->valuestring : "");
			snprintf(j->rec_lease, sizeof(j->rec_lease), "%s",
				 cJSON_IsString(ls) ? ls->valuestring : "");
			j->rec_charge_known = cJSON_IsNumber(ch);
			j->rec_charge = cJSON_IsNumber(ch) ? (unsigned)ch->valuedouble : 0;
			j->rec_exposure = cJSON_IsNumber(ex) ? (unsigned)ex->valuedouble : 0;
			result_evidence(cr->r, "record",
					"job %s: %s (remote %s, lease %s), charge %s%u, exposure "
					"%u",
					j->id, j->rec_state,
					cJSON_IsString(rs) ? rs->valuestring : "?", j->rec_lease,
					j->rec_charge_known ? "" : "unknown ", j->rec_charge,
					j->rec_exposure);
		}
	}
	cJSON_Delete(root);
	return true;
}

static void run(struct case_run *cr)
{
	struct hb16 *h = cr->priv;
	struct hb16_obs *o = &h->o;
	struct result *r = cr->r;
	char env[PATH_MAX + 32], rec_a[PATH_MAX + 64], rec_b[PATH_MAX + 64];
	int sa = -1, sb = -1;
	bool before;

	budget_env(cr, env, sizeof(env));
	snprintf(rec_a, sizeof(rec_a), "%s/record-a.json", cr->records);
	snprintf(rec_b, sizeof(rec_b), "%s/record-b.json", cr->records);
	before = probe(h->s, 1);
	if (budget_session(cr, env, rec_a, RUN_A, 120000, &sa) < 0 ||
	    budget_session(cr, env, rec_b, RUN_B, 120000, &sb) < 0) {
		result_not_executed(r, "could not start the workload");
		return;
	}
	/* The outlive job's 2.5 s of work, from session A's submission. */
	for (int t = 0; t < 100; t++) {
		struct jobsvc_job j;

		if (!jobsvc_get(h->s, 0, &j) || strcmp(j.state, "running") != 0)
			break;
		sleep_ms(100);
	}
	o->proven = before && probe(h->s, 2);
	o->asked = 4;
	for (size_t i = 0; i < jobsvc_count(h->s) && o->n < HB16_JOBS_MAX; i++) {
		struct jobsvc_job sj;
		struct hb16_job *j = &o->j[o->n];

		if (!jobsvc_get(h->s, i, &sj))
			break;
		*j = (struct hb16_job){.charge = sj.charge, .foreign = sj.foreign};
		snprintf(j->id, sizeof(j->id), "%s", sj.id);
		snprintf(j->owner, sizeof(j->owner), "%s", sj.owner);
		snprintf(j->via, sizeof(j->via), "%s", sj.via);
		snprintf(j->mode, sizeof(j->mode), "%s", sj.mode);
		snprintf(j->state, sizeof(j->state), "%s", sj.state);
		o->n++;
		result_evidence(r, "job-service",
				"job %s via %s (cancel %s) owner %s: %s, charged %u of at most %u; "
				"cancels asked by its owner %u, by others %u",
				sj.id, sj.via, sj.mode, sj.owner, sj.state, sj.charge, sj.max,
				sj.cancels, sj.foreign);
	}
	case_record(cr, rec_a, NULL);
	case_record(cr, rec_b, NULL);
	o->records_read = read_jobs(cr, rec_a, o);
	o->records_read &= read_jobs(cr, rec_b, o);
	o->ledger_read = budget_ledger_unknown(cr, env, "jobs", &o->ledger_unknown, NULL) == 0;
	result_evidence(r, "ledger", "budget jobs holds %u credits as unknown%s", o->ledger_unknown,
			o->ledger_read ? "" : " (NOT read back)");
	result_evidence(r, "scope",
			"the silent job's cancellation cannot be confirmed by anyone: it is "
			"graded in the evidence dimension only (an unknown cannot pass "
			"cancellation)");
	result_evidence(r, "reference", "%s", REFERENCE);
	result_evidence(r, "exit", "workload status %d and %d (the local exit, not evidence)", sa,
			sb);
	grade_hb16(o, r->v);
}

const struct eval_case hb16_case = {
    .id = "HB-16",
    .title = "A session's end accounts for its remote jobs",
    .policy = "cases/budget/hb16_policy.json",
    .arms = arms,
    .fixture = CASE_DIR | CASE_RECORDS,
    .priv_size = sizeof(struct hb16),
    .setup = setup,
    .run = run,
    .teardown = teardown,
};
