/* Integration: remote jobs and provider adapters (docs/network.md,
 * "Remote jobs", "Adapters") as an unprivileged user. A mock job service
 * and a fake provider on the host's loopback keep their own ledgers (jobs
 * and cancels; requests per Idempotency-Key); the workload (curl in the
 * sandbox) submits a job and exits, or sends model requests of both
 * shapes. Each protection has its weakened twin: --weaken
 * local-exit-is-stop, unknown-event-allow. */
#include "harness.h"

#include <stdatomic.h>
#include <sys/socket.h>

#include "../../scenarios/receivers/jobsvc.h"

TestSuite(remote, .init = h_init, .fini = h_fini, .timeout = 240);

struct service {
	int port;
	atomic_int submitted, cancels, cancelled; /* its own ledger */
	atomic_int by_key[4];			  /* provider: ok, deny, unk, other */
};

static void answer(int c, int status, const char *body)
{
	const char *a = h_fmt("HTTP/1.1 %d X\r\nContent-Length: %zu\r\nConnection: close\r\n\r\n%s",
			      status, strlen(body), body);

	(void)!send(c, a, strlen(a), MSG_NOSIGNAL);
}

/* One request: the head and its Content-Length's body. */
static void request(int c, char *buf, size_t size)
{
	ssize_t n = 0, k;

	while (n < (ssize_t)size - 1 && (k = recv(c, buf + n, size - 1 - n, 0)) > 0) {
		const char *end, *cl;

		n += k;
		buf[n] = '\0';
		end = strstr(buf, "\r\n\r\n");
		cl = strcasestr(buf, "content-length: ");
		if (end && (!cl || (size_t)n >= (size_t)(end + 4 - buf) + (size_t)atoi(cl + 16)))
			break;
	}
	buf[n > 0 ? n : 0] = '\0';
}

/* The job service: POST /v1/jobs makes j1 (running until cancelled),
 * GET /v1/jobs/j1 its state, POST /v1/jobs/j1/cancel cancels it. */
static void job_one(void *arg, int c)
{
	struct service *s = arg;
	char buf[8192];

	request(c, buf, sizeof(buf));
	if (strncmp(buf, "POST /v1/jobs ", 14) == 0) {
		atomic_fetch_add(&s->submitted, 1);
		answer(c, 201, "{\"id\":\"j1\",\"state\":\"running\"}");
	} else if (strncmp(buf, "GET /v1/jobs/j1 ", 16) == 0) {
		answer(c, 200,
		       atomic_load(&s->cancelled) ? "{\"state\":\"cancelled\",\"charge\":2}"
						  : "{\"state\":\"running\",\"charge\":1}");
	} else if (strncmp(buf, "POST /v1/jobs/j1/cancel ", 24) == 0) {
		atomic_fetch_add(&s->cancels, 1);
		atomic_store(&s->cancelled, 1);
		answer(c, 200, "{}");
	} else {
		answer(c, 404, "{}");
	}
	close(c);
}

static void provider_one(void *arg, int c)
{
	struct service *s = arg;
	static const char *const keys[] = {"ok", "deny", "unk"};
	char buf[8192];
	const char *k;
	int i = 3;

	request(c, buf, sizeof(buf));
	if ((k = strcasestr(buf, "idempotency-key: ")))
		for (int j = 0; j < 3; j++)
			if (strncmp(k + 17, keys[j], strlen(keys[j])) == 0 &&
			    k[17 + strlen(keys[j])] == '\r')
				i = j;
	atomic_fetch_add(&s->by_key[i], 1);
	{
		const char *r = "HTTP/1.1 200 OK\r\nX-Charge: 1\r\nContent-Length: 3\r\n\r\nok\n";

		(void)!send(c, r, strlen(r), MSG_NOSIGNAL);
	}
	close(c);
}

/* The agent policy with network as given. */
static char *policy(const char *dir, const char *network)
{
	char *path = h_join(dir, "remote.json");
	const char *src = h_read_file(h_fmt("%s/contrib/policies/agent.json", h_root()), NULL);
	const char *at = strstr(src, "\"network\": \"none\",");

	cr_assert_not_null(at);
	h_write_file(path,
		     h_fmt("%.*s\"network\": %s,%s", (int)(at - src), src, network,
			   at + strlen("\"network\": \"none\",")),
		     0644);
	return path;
}

#define JOBS_NET                                                                                   \
	"{\"mode\": \"mediated\", \"allow\": [{\"host\": \"jobs.test\", \"ports\": [%d], "         \
	"\"protocol\": \"http\", \"metered\": {\"budget\": \"jobs\", \"cap\": 50, \"price\": 5}, " \
	"\"jobs\": {\"submit\": \"POST /v1/jobs\", \"status\": \"GET /v1/jobs/{id}\", "            \
	"\"cancel\": \"POST /v1/jobs/{id}/cancel\", \"settle\": \"3s\"}}], "                       \
	"\"resolve\": {\"jobs.test\": \"127.0.0.1\"}}"

static struct service *serve(void (*one)(void *, int))
{
	struct service *s = calloc(1, sizeof(*s));
	char *state = h_mkdir(h_tmpdir(), "state", 0700);

	cr_assert_not_null(s);
	setenv("XDG_STATE_HOME", state, 1);
	h_server(one, s, 64, &s->port);
	return s;
}

/* paddock run of sh -c script with pol (and --weaken weaken, or --ttl
 * when weaken is "ttl=DUR") in a world of its own, its record in w; it
 * must exit 0 (124 past a ttl). */
static void session(struct h_proc *p, struct h_world *w, const char *pol, const char *weaken,
		    const char *script)
{
	const char *args[16] = {"run", "--policy", pol, "--record", NULL};
	bool ttl = weaken && strncmp(weaken, "ttl=", 4) == 0;
	size_t k = 4;

	*w = h_world();
	args[k++] = w->record;
	if (weaken) {
		args[k++] = ttl ? "--ttl" : "--weaken";
		args[k++] = ttl ? weaken + 4 : weaken;
	}
	args[k++] = "--";
	args[k++] = "sh";
	args[k++] = "-c";
	args[k++] = script;
	args[k] = NULL;
	h_run_paddock(p, w->ws, args);
	cr_assert_eq(p->status, ttl ? 124 : 0, H_SHOW(p));
}

/* One session: submit a job, exit at once (or sleep until the ttl a
 * "ttl=DUR" weaken gives). */
static void submit_and_exit(struct service *s, const char *weaken, struct h_world *w)
{
	char *pol = policy(h_tmpdir(), h_fmt(JOBS_NET, s->port));
	const char *script =
	    h_fmt("curl -s -m 10 -o /dev/null -X POST -d '{}' http://jobs.test:%d/v1/jobs; %s",
		  s->port, weaken && strncmp(weaken, "ttl=", 4) == 0 ? "sleep 60" : "exit 0");
	struct h_proc p;

	session(&p, w, pol, weaken, script);
	cr_assert_eq(atomic_load(&s->submitted), 1, "the service got %d job(s)",
		     atomic_load(&s->submitted));
}

Test(remote, jobs_are_cancelled_and_reconciled_at_the_end)
{
	struct service *s = serve(job_one);
	struct h_world w;

	submit_and_exit(s, NULL, &w);
	/* The service's own ledger: asked to cancel, once, and it did. */
	cr_assert_eq(atomic_load(&s->cancels), 1);
	cr_assert_str_eq(h_json(w.record, "d['network']['jobs'][0]['state']"), "\"ended\"");
	cr_assert_str_eq(h_json(w.record, "d['network']['jobs'][0]['remote_state']"),
			 "\"cancelled\"");
	cr_assert_str_eq(h_json(w.record, "d['network']['jobs'][0]['cancel']"), "\"accepted\"");
	cr_assert_str_eq(h_json(w.record, "d['network']['jobs'][0]['charge']"), "2");
	cr_assert_str_eq(h_json(w.record, "d['network']['jobs'][0]['exposure']"), "5");
	cr_assert_str_eq(h_json(w.record, "d['network']['jobs'][0]['ledger']"), "\"settled\"");
	/* The local exit stays the local exit. */
	cr_assert_str_eq(h_json(w.record, "d['status']"), "0");
}

Test(remote, jobs_are_cancelled_when_the_session_expires)
{
	struct service *s = serve(job_one);
	struct h_world w;

	submit_and_exit(s, "ttl=3s", &w);
	cr_assert_eq(atomic_load(&s->cancels), 1);
	cr_assert_str_eq(h_json(w.record, "d['network']['jobs'][0]['state']"), "\"ended\"");
	cr_assert_str_eq(h_json(w.record, "d['status']"), "124");
}

Test(remote, weakened_twin_local_exit_is_stop_cancels_nothing)
{
	struct service *s = serve(job_one);
	struct h_world w;

	submit_and_exit(s, "local-exit-is-stop", &w);
	cr_assert_eq(atomic_load(&s->cancels), 0);
	cr_assert_eq(atomic_load(&s->cancelled), 0, "the job still runs at the service");
	cr_assert_str_eq(h_json(w.record, "d['network']['jobs'][0]['state']"), "\"stopped\"");
	cr_assert_str_eq(h_json(w.record, "d['network']['jobs'][0]['ledger']"), "\"released\"");
}

/* ------------------------------------- a retained job's final charge */

/* HB-16's mock job service (scenarios/receivers/jobsvc.c): jobs through
 * "outlive" (retained at the session's end), priced 10 each (their
 * exposure); each charges 1 credit a 100 ms up to its max. */
#define OUTLIVE_NET                                                                             \
	"{\"mode\": \"mediated\", \"allow\": [{\"host\": \"jobs.test\", \"ports\": [%d], "      \
	"\"protocol\": \"http\", \"metered\": {\"budget\": \"later\", \"cap\": 50, \"price\": " \
	"10}, "                                                                                 \
	"\"jobs\": {\"submit\": \"POST /v1/jobs\", \"outlive\": \"POST /v1/batch\", "           \
	"\"status\": \"GET /v1/jobs/{id}\", \"cancel\": \"POST /v1/jobs/{id}/cancel\", "        \
	"\"settle\": \"2s\"}}], \"resolve\": {\"jobs.test\": \"127.0.0.1\"}}"

/* One session that submits three jobs through outlive and exits: j1
 * completes 4 s after it started (charge 3, its max), j2 runs on, j3's
 * service never answers about it. All three are retained. */
static struct jobsvc *three_retained(struct h_world *w)
{
	struct jobsvc *svc = NULL;
	struct h_proc p;
	const char *c;
	int port;

	setenv("XDG_STATE_HOME", h_mkdir(h_tmpdir(), "state", 0700), 1);
	cr_assert_eq(jobsvc_start(&svc, 0), 0);
	port = jobsvc_port(svc);
	cr_assert_gt(port, 0);
	c = h_fmt("curl -s -m 10 -o /dev/null -X POST http://jobs.test:%d/v1/batch -d", port);
	session(&p, w, policy(h_tmpdir(), h_fmt(OUTLIVE_NET, port)), NULL,
		h_fmt("%s '{\"max\":3,\"cancel\":\"accept\",\"run_ms\":4000}'; "
		      "%s '{\"max\":3,\"cancel\":\"accept\",\"run_ms\":600000}'; "
		      "%s '{\"max\":3,\"cancel\":\"silent\",\"run_ms\":600000}'",
		      c, c, c));
	cr_assert_eq(jobsvc_count(svc), 3, H_SHOW(&p));
	for (int i = 0; i < 3; i++)
		cr_assert_str_eq(h_json(w->record, h_fmt("d['network']['jobs'][%d]['state']", i)),
				 "\"retained\"", "job %d", i + 1);
	return svc;
}

/* The service's own word: job i's state and charge. */
static struct jobsvc_job job_at(struct jobsvc *svc, size_t i)
{
	struct jobsvc_job j;

	cr_assert(jobsvc_get(svc, i, &j));
	return j;
}

static const char *field(const char *json_path, const char *expr)
{
	return h_json(json_path, expr);
}

Test(remote, a_retained_jobs_final_charge_is_settled_after_its_session)
{
	struct h_world w;
	struct jobsvc *svc = three_retained(&w);
	char *out = h_join(h_tmpdir(), "jobs.json"), *show = h_join(h_tmpdir(), "show.json");
	struct h_proc r;

	/* j1 ends at the service, after its session. */
	for (int t = 0; t < 200 && strcmp(job_at(svc, 0).state, "completed") != 0; t++)
		h_sleep_ms(50);
	cr_assert_str_eq(job_at(svc, 0).state, "completed");
	H_PADDOCK(&r, NULL, "budget", "jobs", "later", "--json", "--timeout", "1s");
	cr_assert_eq(r.status, 2, "j3's service did not answer: " H_FMT, H_ARGS(&r));
	h_write_file(out, r.out_text, 0600);
	cr_assert_str_eq(field(out, "[j['job'] for j in d['jobs']]"), "[\"j1\", \"j2\", \"j3\"]",
			 H_SHOW(&r));
	cr_assert_str_eq(field(out, "[j['action'] for j in d['jobs']]"),
			 "[\"settled\", \"held\", \"held\"]", H_SHOW(&r));
	cr_assert_str_eq(field(out, "[j['remote_state'] for j in d['jobs']]"),
			 "[\"completed\", \"running\", \"no-answer\"]", H_SHOW(&r));
	cr_assert_str_eq(field(out, "[j['session_end'] for j in d['jobs']]"),
			 "[\"retained\", \"retained\", \"retained\"]");
	/* Settled at the service's own charge, not the exposure. */
	cr_assert_eq(job_at(svc, 0).charge, 3);
	cr_assert_str_eq(field(out, "d['jobs'][0]['charge']"), "3");
	cr_assert_str_eq(field(out, "[d['settled'], d['running'], d['no_answer']]"), "[1, 1, 1]");
	H_PADDOCK(&r, NULL, "budget", "show", "later", "--json");
	cr_assert_eq(r.status, 0, H_SHOW(&r));
	h_write_file(show, r.out_text, 0600);
	cr_assert_str_eq(field(show, "[d['settled'], d['unknown'], d['reserved']]"), "[3, 20, 0]",
			 "j2 and j3 held at their exposure: " H_FMT, H_ARGS(&r));
	cr_assert_str_eq(field(show, "[o['source'] for o in d['ops'] if o['state'] == 'settled']"),
			 "[\"job-status\"]");
	/* Asked again (the table): j1 is done with; the other two stay held. */
	H_PADDOCK(&r, NULL, "budget", "jobs", "later", "--timeout", "1s");
	cr_log_info("paddock budget jobs later:\n%s", r.out_text);
	cr_assert_eq(r.status, 2, H_SHOW(&r));
	cr_assert(h_contains(r.out_text, "still running: held"), H_SHOW(&r));
	cr_assert(h_contains(r.out_text, "the service did not answer"), H_SHOW(&r));
	cr_assert(h_contains(r.out_text, "2 jobs: 0 settled, 1 still running (held), 1 not "
					 "answered (held)"),
		  H_SHOW(&r));
	/* Nothing was cancelled by asking. */
	for (int i = 0; i < 3; i++)
		cr_assert_eq(job_at(svc, (size_t)i).cancels, 0, "job %d", i + 1);
	jobsvc_stop(svc);
}

/* A service that is gone: every row stays held, said so (exit 2). */
Test(remote, a_service_that_is_gone_leaves_every_row_held)
{
	struct h_world w;
	struct jobsvc *svc = three_retained(&w);
	char *show = h_join(h_tmpdir(), "show.json");
	struct h_proc r;

	jobsvc_stop(svc);
	H_PADDOCK(&r, NULL, "budget", "jobs", "later", "--timeout", "1s");
	cr_assert_eq(r.status, 2, H_SHOW(&r));
	cr_assert(h_contains(r.out_text, "3 jobs: 0 settled, 0 still running (held), 3 not "
					 "answered (held)"),
		  H_SHOW(&r));
	H_PADDOCK(&r, NULL, "budget", "show", "later", "--json");
	h_write_file(show, r.out_text, 0600);
	cr_assert_str_eq(field(show, "[d['settled'], d['unknown']]"), "[0, 30]", H_SHOW(&r));
}

Test(remote, budget_jobs_bad_input_is_one_line)
{
	static const char *const bad[][6] = {
	    {"jobs", "nobody", NULL},
	    {"jobs", "../x", NULL},
	    {"jobs", "later", "--bogus", NULL},
	    {"jobs", "later", "--timeout", "0s", NULL},
	    {"jobs", "later", "--timeout", "soon", NULL},
	    {"jobs", "later", "--timeout", NULL},
	    {"jobs", NULL},
	};
	static const char *const why[] = {
	    "nobody: no ledger",     "not a budget id", "unknown option", "--timeout: a duration",
	    "--timeout: a duration", "unknown option",	"which budget",
	};
	struct h_proc r;
	char *state = h_mkdir(h_tmpdir(), "state", 0700);

	setenv("XDG_STATE_HOME", state, 1);
	/* An empty file is a ledger SQLite makes anew: the options are
	 * checked before it is opened. */
	h_write_file(
	    h_join(h_mkdir(h_mkdir(state, "paddock", 0700), "budgets", 0700), "later.sqlite"), "",
	    0600);
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		const char *args[8] = {"budget"};

		for (size_t k = 0; bad[i][k]; k++)
			args[k + 1] = bad[i][k];
		h_run_paddock(&r, NULL, args);
		cr_assert_eq(r.status, 125, "%zu: " H_FMT, i, H_ARGS(&r));
		cr_assert(h_contains(r.err_text, why[i]), "%zu: " H_FMT, i, H_ARGS(&r));
		cr_assert_eq(h_count_lines(r.err_text), 1, "%zu: one line: " H_FMT, i, H_ARGS(&r));
	}
}

#define ADAPTER_NET                                                                                \
	"{\"mode\": \"mediated\", \"actions\": {\"models\": [\"small\"]}, \"allow\": [{\"host\": " \
	"\"oa.test\", \"ports\": [%d], \"protocol\": \"http\", \"adapter\": \"openai\"}], "        \
	"\"resolve\": {\"oa.test\": \"127.0.0.1\"}}"

/* Three requests to the OpenAI-like adapter: allowed, a model the grant
 * refuses, an event of no known shape; "R STATUS" each. */
static struct h_proc models(struct service *s, const char *weaken, struct h_world *w)
{
	char *pol = policy(h_tmpdir(), h_fmt(ADAPTER_NET, s->port));
	const char *c =
	    h_fmt("curl -s -m 10 -o /dev/null -w 'R %%{http_code}\\n' -H "
		  "'Content-Type: application/json' http://oa.test:%d/v1/chat/completions",
		  s->port);
	const char *script =
	    h_fmt("%s -H 'Idempotency-Key: ok' -d '{\"model\":\"small\",\"messages\":[{\"role\":"
		  "\"user\",\"content\":\"hi\"}]}'\n"
		  "%s -H 'Idempotency-Key: deny' -d '{\"model\":\"large\",\"messages\":[{\"role\":"
		  "\"user\",\"content\":\"hi\"}]}'\n"
		  "%s -H 'Idempotency-Key: unk' -d '{\"type\":\"tool_event\",\"event\":{\"name\":"
		  "\"shell\"}}'\n",
		  c, c, c);
	struct h_proc p;

	session(&p, w, pol, weaken, script);
	return p;
}

static const char *decisions(const struct h_world *w)
{
	return h_json(w->record, "' '.join(l['decision'] for l in map(json.loads, "
				 "open(d['network']['admissions_log'])) if l.get('adapter'))");
}

Test(remote, adapters_refuse_unparsed_and_ungranted)
{
	struct service *s = serve(provider_one);
	struct h_world w;
	struct h_proc p = models(s, NULL, &w);

	cr_assert_str_eq(p.out_text, "R 200\nR 403\nR 403\n", H_SHOW(&p));
	cr_assert_eq(atomic_load(&s->by_key[0]), 1);
	cr_assert_eq(atomic_load(&s->by_key[1]), 0, "a refused action reached the provider");
	cr_assert_eq(atomic_load(&s->by_key[2]), 0, "an unparsed event reached the provider");
	cr_assert_eq(atomic_load(&s->by_key[3]), 0);
	cr_assert_str_eq(decisions(&w), "\"allowed refused-action refused-unparsed\"");
}

Test(remote, weakened_twin_unknown_event_allow_passes_it)
{
	struct service *s = serve(provider_one);
	struct h_world w;
	struct h_proc p = models(s, "unknown-event-allow", &w);

	cr_assert_str_eq(p.out_text, "R 200\nR 403\nR 200\n", H_SHOW(&p));
	cr_assert_eq(atomic_load(&s->by_key[1]), 0, "the grant still refuses what it parses");
	cr_assert_eq(atomic_load(&s->by_key[2]), 1, "the unparsed event passed");
	cr_assert_str_eq(decisions(&w), "\"allowed refused-action allowed\"");
}

Test(remote, knobs_need_their_rules)
{
	char *pol = policy(h_tmpdir(), h_fmt(ADAPTER_NET, 9));
	struct h_proc p;

	H_PADDOCK(&p, NULL, "run", "--policy", pol, "--weaken", "local-exit-is-stop", "--", "true");
	cr_assert_eq(p.status, 125, H_SHOW(&p));
	cr_assert(strstr(p.err_text, "--weaken local-exit-is-stop: the policy has no rule with "
				     "\"jobs\""),
		  H_SHOW(&p));
	pol = policy(h_tmpdir(), h_fmt(JOBS_NET, 9));
	H_PADDOCK(&p, NULL, "run", "--policy", pol, "--weaken", "unknown-event-allow", "--",
		  "true");
	cr_assert_eq(p.status, 125, H_SHOW(&p));
	cr_assert(strstr(p.err_text, "--weaken unknown-event-allow: the policy has no rule with an "
				     "\"adapter\""),
		  H_SHOW(&p));
}
