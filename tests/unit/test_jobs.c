/* Unit tests for the mediator's remote jobs and adapters (mediator/jobs.c,
 * adapter.c, policy/parse_jobs.c): the routes, the id and status a service
 * answers with, the reconciliation at a session's end over a scripted
 * service (every job confirmed ended, retained, or unknown: never
 * stopped, but under local-exit-is-stop), the two adapters' shapes into one
 * action, and the grant over it. */
#include <criterion/criterion.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "../../mediator/mediator.h"
#include "unit.h"
#include "unit_policy.h"

TestSuite(jobs, .fini = unit_leak_check);

static const char jobs_policy[] =
    "{\"version\":1,\"network\":{\"mode\":\"mediated\",\"allow\":[{\"host\":\"j.test\","
    "\"ports\":[80],\"protocol\":\"http\",\"metered\":{\"budget\":\"b\",\"cap\":50,\"price\":3},"
    "\"jobs\":{\"submit\":\"POST /v1/jobs\",\"outlive\":\"POST /v1/batch\",\"status\":"
    "\"GET /v1/jobs/{id}\",\"cancel\":\"POST /v1/jobs/{id}/cancel\",\"settle\":\"1500ms\"}}]}}";

Test(jobs, routes)
{
	struct policy *p = unit_policy(jobs_policy);
	const struct policy_net_rule *r = &p->net_allow[0];

	cr_assert_eq(jobs_route(r, "POST", "/v1/jobs"), JOB_SUBMIT);
	cr_assert_eq(jobs_route(r, "POST", "/v1/jobs?x=1"), JOB_SUBMIT);
	cr_assert_eq(jobs_route(r, "POST", "/v1/batch"), JOB_OUTLIVE);
	cr_assert_eq(jobs_route(r, "GET", "/v1/jobs"), JOB_NONE);
	cr_assert_eq(jobs_route(r, "POST", "/v1/jobs/x"), JOB_NONE);
	cr_assert_eq(jobs_route(r, "POST", "/v1/jobsx"), JOB_NONE);
	cr_assert(policy_route_match(&r->jobs->status, "GET", "/v1/jobs/j1"));
	cr_assert(!policy_route_match(&r->jobs->status, "GET", "/v1/jobs/"));
	cr_assert(!policy_route_match(&r->jobs->status, "GET", "/v1/jobs/a/b"));
	cr_assert(policy_route_match(&r->jobs->cancel, "POST", "/v1/jobs/j1/cancel"));
	cr_assert_eq(r->jobs->settle_ms, 1500);
	cr_assert_eq(policy_jobs_settle_ms(p), 1500);
	policy_free(p);
}

Test(jobs, ids_and_statuses)
{
	char id[JOB_ID_MAX + 1], state[32], t[128];
	unsigned st = 0;
	uint64_t charge = 0;
	bool has = false;
	static const char *const bad_ids[] = {
	    "HTTP/1.1 201 C\r\n\r\n{\"id\":\"../x\"}", "HTTP/1.1 201 C\r\n\r\n{\"id\":\"..\"}",
	    "HTTP/1.1 201 C\r\n\r\n{\"id\":\"\"}",     "HTTP/1.1 201 C\r\n\r\n{\"id\":7}",
	    "HTTP/1.1 201 C\r\n\r\n[\"id\"]",	       "HTTP/1.1 201 C\r\n\r\nnot json",
	    "HTTP/1.1 201 C\r\n{\"id\":\"x\"}",	       "HTTP/1.1 201 C\r\n\r\n{\"id\":\"a b\"}",
	};
	const char *ok = "HTTP/1.1 201 Created\r\nContent-Length: 9\r\n\r\n{\"id\":\"j-1.a_B\"}";

	cr_assert_eq(jobs_parse_id(ok, strlen(ok), id), 0);
	cr_assert_str_eq(id, "j-1.a_B");
	for (size_t i = 0; i < sizeof(bad_ids) / sizeof(bad_ids[0]); i++)
		cr_assert_eq(jobs_parse_id(bad_ids[i], strlen(bad_ids[i]), id), -EINVAL, "%s",
			     bad_ids[i]);
	ok = "HTTP/1.1 200 OK\r\n\r\n{\"state\":\"cancelled\",\"charge\":3}";
	cr_assert_eq(jobs_parse_status(ok, strlen(ok), &st, state, &charge, &has), 0);
	cr_assert_eq(st, 200);
	cr_assert_str_eq(state, "cancelled");
	cr_assert(has);
	cr_assert_eq(charge, 3);
	cr_assert(jobs_state_ended(state));
	ok = "HTTP/1.1 200 OK\r\n\r\n{\"state\":\"running\"}";
	cr_assert_eq(jobs_parse_status(ok, strlen(ok), &st, state, &charge, &has), 0);
	cr_assert(!has);
	cr_assert(!jobs_state_ended(state));
	ok = "HTTP/1.1 200 OK\r\n\r\n{\"state\":\"done\",\"charge\":2.5}";
	cr_assert_eq(jobs_parse_status(ok, strlen(ok), &st, state, &charge, &has), -EINVAL);
	ok = "HTTP/1.1 200 OK\r\n\r\n{\"state\":\"Done!\"}";
	cr_assert_eq(jobs_parse_status(ok, strlen(ok), &st, state, &charge, &has), -EINVAL);
	ok = "garbage";
	cr_assert_eq(jobs_parse_status(ok, strlen(ok), &st, state, &charge, &has), -EINVAL);
	cr_assert_eq(jobs_target("/v1/jobs/{id}/cancel", "j1", t, sizeof(t)), 0);
	cr_assert_str_eq(t, "/v1/jobs/j1/cancel");
	cr_assert_eq(jobs_target("/v1/jobs/{id}", "j1", t, 8), -E2BIG);
}

/* A scripted job service: each dial gets the next canned response (NULL:
 * the dial fails), and counts what was asked. */
struct script {
	const char *const *resp;
	size_t n, next;
	int peers[32];
	size_t n_peers;
	size_t ended;
	char states[8][16];
};

static int script_dial(void *arg, const char *name, uint16_t port)
{
	struct script *s = arg;
	const char *r = s->next < s->n ? s->resp[s->next] : NULL;
	int sv[2];

	(void)name, (void)port;
	s->next++;
	if (!r || socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) < 0)
		return -1;
	/* The answer waits in the socket, then EOF; the request still goes
	 * into the peer, which stays open until the test ends. */
	cr_assert_eq(write(sv[1], r, strlen(r)), (ssize_t)strlen(r));
	shutdown(sv[1], SHUT_WR);
	s->peers[s->n_peers++] = sv[1];
	return sv[0];
}

static void script_end(void *arg, struct mediator_job *j)
{
	struct script *s = arg;

	snprintf(s->states[s->ended++], sizeof(s->states[0]), "%s", j->state);
}

static void script_free(struct script *s)
{
	for (size_t i = 0; i < s->n_peers; i++)
		close(s->peers[i]);
}

static void two_jobs(struct mediator_jobs *t, const struct policy_net_rule *r, bool outlive)
{
	memset(t, 0, sizeof(*t));
	for (int i = 0; i < 2; i++) {
		struct mediator_job *j = &t->j[t->n++];

		j->rule = r;
		j->port = 80;
		j->outlive = outlive && i == 1;
		snprintf(j->id, sizeof(j->id), "j%d", i + 1);
		snprintf(j->name, sizeof(j->name), "j.test");
	}
}

#define RUNNING	  "HTTP/1.1 200 OK\r\n\r\n{\"state\":\"running\",\"charge\":1}"
#define CANCELLED "HTTP/1.1 200 OK\r\n\r\n{\"state\":\"cancelled\",\"charge\":2}"
#define ACCEPTED  "HTTP/1.1 200 OK\r\n\r\n{}"

Test(jobs, reconcile_cancels_and_confirms)
{
	static const char *const resp[] = {RUNNING, ACCEPTED, RUNNING, CANCELLED};
	struct policy *p = unit_policy(jobs_policy);
	struct script s = {.resp = resp, .n = 4};
	struct jobs_io io = {.arg = &s, .dial = script_dial, .end = script_end};
	struct mediator_jobs t;

	two_jobs(&t, &p->net_allow[0], true);
	jobs_reconcile(&t, 3000, false, &io);
	/* j1: running, cancelled (accepted), then its status says cancelled;
	 * j2 (outlive): running, retained, never cancelled. */
	cr_assert_eq(s.ended, 2);
	cr_assert_str_eq(t.j[0].state, "ended");
	cr_assert_str_eq(t.j[0].remote, "cancelled");
	cr_assert_str_eq(t.j[0].cancel, "accepted");
	cr_assert(t.j[0].has_charge);
	cr_assert_eq(t.j[0].charge, 2);
	cr_assert_str_eq(t.j[1].state, "retained");
	cr_assert_str_eq(t.j[1].cancel, "not-sent");
	script_free(&s);
	policy_free(p);
}

Test(jobs, reconcile_unanswered_is_unknown_never_stopped)
{
	struct policy *p = unit_policy(jobs_policy);
	struct script s = {.resp = NULL, .n = 0};
	struct jobs_io io = {.arg = &s, .dial = script_dial, .end = script_end};
	struct mediator_jobs t;

	two_jobs(&t, &p->net_allow[0], false);
	t.j[1].id[0] = '\0'; /* a submission whose answer named no job */
	jobs_reconcile(&t, 300, false, &io);
	cr_assert_str_eq(t.j[0].state, "unknown");
	cr_assert_str_eq(t.j[0].remote, "no-answer");
	cr_assert_str_eq(t.j[0].cancel, "no-answer");
	cr_assert_str_eq(t.j[1].state, "unknown");
	cr_assert_str_eq(t.j[1].remote, "no-id");
	cr_assert_eq(s.ended, 2);
	script_free(&s);
	policy_free(p);
}

Test(jobs, weakened_twin_local_exit_is_stop_asks_nothing)
{
	static const char *const resp[] = {RUNNING, ACCEPTED, RUNNING, CANCELLED};
	struct policy *p = unit_policy(jobs_policy);
	struct script s = {.resp = resp, .n = 4};
	struct jobs_io io = {.arg = &s, .dial = script_dial, .end = script_end};
	struct mediator_jobs t;

	two_jobs(&t, &p->net_allow[0], false);
	jobs_reconcile(&t, 3000, true, &io);
	cr_assert_eq(s.next, 0, "the service was asked %zu time(s)", s.next);
	cr_assert_str_eq(t.j[0].state, "stopped");
	cr_assert_str_eq(t.j[1].state, "stopped");
	script_free(&s);
	policy_free(p);
}

static const char adapter_policy[] =
    "{\"version\":1,\"network\":{\"mode\":\"mediated\",\"actions\":{\"models\":[\"small\"],"
    "\"tools\":[\"search\"]},\"allow\":[{\"host\":\"o.test\",\"ports\":[80],\"protocol\":"
    "\"http\",\"adapter\":\"openai\"},{\"host\":\"a.test\",\"ports\":[80],\"protocol\":\"http\","
    "\"adapter\":\"anthropic\"}]}}";

static int parse_as(const struct policy *p, size_t k, const char *path, const char *body,
		    struct adapter_action *a, const char **why)
{
	static char buf[HTTP_HEAD_MAX];
	struct http_request rq;
	const char *w;
	int n = snprintf(buf, sizeof(buf),
			 "POST %s HTTP/1.1\r\nHost: x\r\nContent-Length: %zu\r\n\r\n%s", path,
			 strlen(body), body);

	cr_assert_gt(http_parse_request(buf, (size_t)n, &rq, &w), 0);
	return adapter_parse(p->net_allow[k].adapter, &rq, path, buf, (size_t)n, true, a, why);
}

Test(jobs, adapter_two_shapes_one_action)
{
	struct policy *p = unit_policy(adapter_policy);
	struct adapter_action a, b;
	const char *why;
	char ja[512], jb[512];

	cr_assert_eq(parse_as(p, 0, "/v1/chat/completions",
			      "{\"model\":\"small\",\"messages\":[{\"role\":\"user\",\"content\":"
			      "\"hi\"}],\"max_tokens\":16,\"tools\":[{\"type\":\"function\","
			      "\"function\":{\"name\":\"search\"}}]}",
			      &a, &why),
		     0, "%s", why);
	cr_assert_eq(parse_as(p, 1, "/v1/messages",
			      "{\"model\":\"small\",\"max_tokens\":16,\"messages\":[{\"role\":"
			      "\"user\",\"content\":\"hi\"}],\"tools\":[{\"name\":\"search\"}]}",
			      &b, &why),
		     0, "%s", why);
	adapter_action_json(&a, ja, sizeof(ja));
	adapter_action_json(&b, jb, sizeof(jb));
	cr_assert_str_eq(ja, jb);
	cr_assert_str_eq(ja, "{\"action\":\"generate\",\"model\":\"small\",\"tools\":[\"search\"],"
			     "\"max_tokens\":16}");
	cr_assert_eq(adapter_allows(p->net_actions, &a, &why), 0);
	snprintf(a.model, sizeof(a.model), "large");
	cr_assert_eq(adapter_allows(p->net_actions, &a, &why), -EACCES);
	snprintf(b.tools[0], sizeof(b.tools[0]), "shell");
	cr_assert_eq(adapter_allows(p->net_actions, &b, &why), -EACCES);
	policy_free(p);
}

Test(jobs, adapter_charges_from_each_shape)
{
	static const char oa[] =
	    "HTTP/1.1 200 OK\r\n\r\n{\"choices\":[],\"usage\":{\"prompt_tokens\":9,"
	    "\"completion_tokens\":4}}";
	static const char an[] =
	    "HTTP/1.1 200 OK\r\n\r\n{\"content\":[],\"usage\":{\"input_tokens\":9,"
	    "\"output_tokens\":3}}";
	static const char frac[] = "HTTP/1.1 200 OK\r\n\r\n{\"usage\":{\"output_tokens\":2.5}}";
	uint64_t c = 0;

	cr_assert_eq(adapter_charge(POLICY_ADAPTER_OPENAI, oa, strlen(oa), false, false, &c), 1);
	cr_assert_eq(adapter_charge(POLICY_ADAPTER_OPENAI, oa, strlen(oa), true, false, &c), 0);
	cr_assert_eq(c, 4);
	cr_assert_eq(adapter_charge(POLICY_ADAPTER_ANTHROPIC, an, strlen(an), true, false, &c), 0);
	cr_assert_eq(c, 3);
	/* Each reads its own shape only; a fraction is no charge (the bound). */
	cr_assert_eq(adapter_charge(POLICY_ADAPTER_OPENAI, an, strlen(an), true, false, &c),
		     -ENOENT);
	cr_assert_eq(adapter_charge(POLICY_ADAPTER_ANTHROPIC, oa, strlen(oa), true, false, &c),
		     -ENOENT);
	cr_assert_eq(adapter_charge(POLICY_ADAPTER_ANTHROPIC, frac, strlen(frac), true, false, &c),
		     -ENOENT);
}

Test(jobs, adapter_unparsed_shapes)
{
	struct policy *p = unit_policy(adapter_policy);
	struct adapter_action a;
	const char *why;
	static const char *const oa[] = {
	    "{\"type\":\"tool_event\",\"event\":{\"name\":\"shell\"}}",
	    "{\"model\":\"small\",\"messages\":[]}",
	    "{\"model\":\"small\",\"messages\":[{\"role\":\"user\"}],\"extra\":1}",
	    "{\"model\":7,\"messages\":[{\"role\":\"user\"}]}",
	    "{\"model\":\"small\",\"messages\":[{\"role\":\"user\"}],\"max_tokens\":1.5}",
	    "{\"model\":\"small\",\"messages\":[{\"role\":\"user\"}],\"tools\":[{\"name\":\"x\"}]}",
	    "[1,2]",
	    "not json",
	};

	for (size_t i = 0; i < sizeof(oa) / sizeof(oa[0]); i++)
		cr_assert_eq(parse_as(p, 0, "/v1/chat/completions", oa[i], &a, &why), -EINVAL, "%s",
			     oa[i]);
	/* Anthropic's needs max_tokens; neither takes the other's endpoint. */
	cr_assert_eq(parse_as(p, 1, "/v1/messages",
			      "{\"model\":\"small\",\"messages\":[{\"role\":\"user\"}]}", &a, &why),
		     -EINVAL);
	cr_assert_eq(
	    parse_as(p, 1, "/v1/chat/completions",
		     "{\"model\":\"small\",\"max_tokens\":1,\"messages\":[{\"role\":\"u\"}]}", &a,
		     &why),
	    -EINVAL);
	cr_assert_str_eq(why, "not the adapter's endpoint");
	policy_free(p);
}
