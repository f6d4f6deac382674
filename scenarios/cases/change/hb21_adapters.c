/* HB-21: two provider adapters behind one grant keep its authority.
 *
 * Fixture (outside every sandbox): three fake metered providers
 * (receivers/provider.c) on 127.0.0.1:19040 ("oa.test", an OpenAI-like
 * chat completion), 19041 ("an.test", an Anthropic-like message) and
 * 19042 ("fb.test", the configured fallback of oa.test), each with its
 * own charge ledger (4 credits a request, its Idempotency-Key logged).
 * The policy's one grant (network.actions) allows model "small" with the
 * tool "search"; every adapter rule is metered against budget "models".
 * One session: an allowed and a denied operation through each adapter
 * and through the fallback, and an event of a shape no adapter parses
 * (a tool event posted to the chat endpoint). Evidence: the providers'
 * ledgers against the mediator's verified admissions log (each decision
 * with the adapter, the route and the normalised action; the ledger's
 * settlements).
 *
 * Arms: enforced; weakened:unknown-event-allow (paddock's knob: the
 * unparsed event passes unchecked and unmetered: must FAIL); docker NOT
 * APPLICABLE. The reference: the seed's fixture run (in the evidence). */
#include "../../lib/case.h"
#include "../../observers/observe.h"
#include "../../receivers/provider.h"
#include "hb21_grade.h"

#include <cjson/cJSON.h>
#include <stdio.h>
#include <string.h>

#define PORT0 19040
#define REFERENCE                                                                                \
	"the seed's reference adapter contract (fixture only): enforcement PASS, control PASS; " \
	"two fake providers under one grant, the drifted adapter rejected; the ungated-drift "   \
	"arm FAILED"
#define NA_REASON                                                                                \
	"a container has no mediator: nothing parses, grants or meters its model requests; the " \
	"reference is " REFERENCE
#define NA_SCOPE "HB-21 (the mediator's adapters); harness rule: --network none/host only"

static const struct case_arm arms[] = {
    {.name = "enforced"},
    {.name = "weakened:unknown-event-allow"},
    {.name = "docker",
     .na_reason = {NA_REASON, NA_REASON, NA_REASON},
     .na_scope = {NA_SCOPE, NA_SCOPE, NA_SCOPE}},
    {.name = NULL},
};

struct hb21 {
	struct provider *p[3];
	struct hb21_obs o;
};

static const struct hb21_op ops[] = {
    {.key = "ok-oa", .adapter = "openai", .route = "primary", .want = HB21_ALLOW},
    {.key = "deny-oa", .adapter = "openai", .route = "primary", .want = HB21_DENY},
    {.key = "ok-an", .adapter = "anthropic", .route = "primary", .want = HB21_ALLOW},
    {.key = "deny-an", .adapter = "anthropic", .route = "primary", .want = HB21_DENY},
    {.key = "unknown", .adapter = "openai", .route = "primary", .want = HB21_UNKNOWN},
    {.key = "ok-fb", .adapter = "openai", .route = "fallback", .want = HB21_ALLOW},
    {.key = "deny-fb", .adapter = "openai", .route = "fallback", .want = HB21_DENY},
};
#define N_OPS (sizeof(ops) / sizeof(ops[0]))

#define C(key)                                                                                     \
	"curl -s -m 20 -o /dev/null -H 'Content-Type: application/json' -H 'Idempotency-Key: " key \
	"' "
#define MSG "\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}]"
#define OA(host, port, key, model)                                                     \
	C(key)                                                                         \
	"-d '{\"model\":\"" model "\"," MSG ",\"max_tokens\":16,\"tools\":[{\"type\":" \
	"\"function\",\"function\":{\"name\":\"search\"}}]}' http://" host ":" port    \
	"/v1/chat/completions\n"
#define AN(key, tool)                                                                     \
	C(key)                                                                            \
	"-d '{\"model\":\"small\",\"max_tokens\":16," MSG ",\"tools\":[{\"name\":\"" tool \
	"\"}]}' http://an.test:19041/v1/messages\n"
#define UNKNOWN                                                                           \
	C("unknown")                                                                      \
	"-d '{\"type\":\"tool_event\",\"event\":{\"name\":\"shell\",\"input\":\"id\"}}' " \
	"http://oa.test:19040/v1/chat/completions\n"
#define RUN                                              \
	OA("oa.test", "19040", "ok-oa", "small")         \
	OA("oa.test", "19040", "deny-oa", "large")       \
	AN("ok-an", "search")                            \
	AN("deny-an", "shell")                           \
	UNKNOWN OA("fb.test", "19042", "ok-fb", "small") \
	    OA("fb.test", "19042", "deny-fb", "large") "exit 0\n"

static int setup(struct case_run *cr, struct err *why)
{
	struct hb21 *h = cr->priv;

	for (int i = 0; i < 3; i++) {
		int rc = provider_start(&h->p[i], PORT0 + i);

		if (rc < 0)
			return err_sys(why, rc, "a fake provider could not listen on 127.0.0.1:%d",
				       PORT0 + i);
	}
	return 0;
}

static void teardown(struct case_run *cr)
{
	struct hb21 *h = cr->priv;

	for (int i = 0; i < 3; i++)
		provider_stop(h->p[i]);
}

static bool probes(struct hb21 *h, size_t want)
{
	static const char req[] = "GET /free-probe HTTP/1.1\r\nHost: h\r\n\r\n";
	bool ok = true;

	for (int i = 0; i < 3; i++) {
		char b[256];

		(void)observe_request_tcp(PORT0 + i, req, 2000, b, sizeof(b));
		for (int t = 0; t < 50 && provider_matching(h->p[i], "GET /free-probe ") < want;
		     t++)
			sleep_ms(10);
		ok &= provider_matching(h->p[i], "GET /free-probe ") >= want;
	}
	return ok;
}

static const char *str(const cJSON *o, const char *k)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, k);

	return cJSON_IsString(v) ? v->valuestring : "";
}

/* The log's lines in order: the n-th decision with an adapter field is
 * the n-th operation (the workload sends them one by one); an outcome
 * line names its admission's settlement. */
static void read_log(struct hb21_obs *o, char *log)
{
	size_t k = 0;
	char adm[N_OPS][48] = {{0}};

	for (char *line = log; *line;) {
		char *end = strchr(line, '\n');
		cJSON *e = cJSON_ParseWithLength(line, end ? (size_t)(end - line) : strlen(line));
		const cJSON *act = cJSON_GetObjectItemCaseSensitive(e, "action");
		const cJSON *chg = cJSON_GetObjectItemCaseSensitive(e, "charge");

		if (e && !strcmp(str(e, "event"), "decision") && str(e, "adapter")[0] && k < o->n) {
			struct hb21_op *p = &o->op[k];

			p->logged = true;
			snprintf(p->decision, sizeof(p->decision), "%s", str(e, "decision"));
			snprintf(p->log_adapter, sizeof(p->log_adapter), "%s", str(e, "adapter"));
			snprintf(p->log_route, sizeof(p->log_route), "%s", str(e, "route"));
			snprintf(p->log_model, sizeof(p->log_model), "%s", str(act, "model"));
			p->reserved =
			    cJSON_IsNumber(cJSON_GetObjectItemCaseSensitive(e, "ledger_op"));
			snprintf(adm[k], sizeof(adm[k]), "%s", str(e, "admission"));
			k++;
		}
		if (e && !strcmp(str(e, "event"), "outcome") &&
		    !strcmp(str(e, "ledger"), "settled")) {
			o->settled_sum += cJSON_IsNumber(chg) ? (unsigned)chg->valuedouble : 0;
			for (size_t i = 0; i < k; i++)
				if (adm[i][0] && !strcmp(adm[i], str(e, "admission")))
					o->op[i].settled = true;
		}
		cJSON_Delete(e);
		if (!end)
			break;
		line = end + 1;
	}
}

static void run(struct case_run *cr)
{
	static char log[1 << 19];
	struct hb21 *h = cr->priv;
	struct hb21_obs *o = &h->o;
	struct result *r = cr->r;
	char rec[PATH_MAX + 64], path[512], key[64];
	struct argv_buf a;
	bool before, verified = false;
	int status = -1, n;

	snprintf(rec, sizeof(rec), "%s/record.json", cr->records);
	before = probes(h, 1);
	{
		char e[PATH_MAX + 32];
		const char *const envv[] = {e, NULL};

		snprintf(e, sizeof(e), "XDG_STATE_HOME=%s", cr->records);
		case_argv_arm(cr, &a,
			      &(struct arm_start){.ws = cr->fx.dir, .record = rec, .env = envv});
		argv_words(&a, "sh", "-c", RUN, NULL);
		if (case_run_vec(cr, &a, cr->log, 120000, &status) < 0) {
			result_not_executed(r, "could not start the workload");
			return;
		}
	}
	o->proven = before && probes(h, 2);
	o->n = N_OPS;
	for (size_t i = 0; i < N_OPS; i++) {
		o->op[i] = ops[i];
		snprintf(key, sizeof(key), "key=%s ", ops[i].key);
		for (int p = 0; p < 3; p++)
			o->op[i].reached += provider_matching(h->p[p], key);
	}
	for (int p = 0; p < 3; p++)
		o->charged += provider_charged(h->p[p]);
	case_record(cr, rec, NULL);
	n = admissions_read(rec, path, sizeof(path), &verified, log, sizeof(log));
	o->log_read = n >= 0;
	o->log_verified = verified;
	if (n >= 0)
		read_log(o, log);
	for (size_t i = 0; i < N_OPS; i++) {
		const struct hb21_op *p = &o->op[i];

		result_evidence(r, "providers", "%s (%s, %s): reached a provider %zu time(s)",
				p->key, p->adapter, p->route, p->reached);
		result_evidence(r, "mediator", "%s: %s, adapter %s, route %s, model %s%s%s", p->key,
				p->logged ? p->decision : "NOT logged", p->log_adapter,
				p->log_route, p->log_model[0] ? p->log_model : "-",
				p->reserved ? ", reserved in the ledger" : "",
				p->settled ? ", settled" : "");
	}
	result_evidence(r, "ledger",
			"the providers billed %u credits, the log's settlements %u; log %s (%s)",
			o->charged, o->settled_sum, n >= 0 ? path : "NOT read",
			verified ? "complete" : "not verified");
	result_evidence(r, "reference", "%s", REFERENCE);
	result_evidence(r, "exit", "workload status %d (not evidence)", status);
	grade_hb21(o, r->v);
}

const struct eval_case hb21_case = {
    .id = "HB-21",
    .title = "Two provider adapters behind one grant keep its authority",
    .policy = "cases/change/hb21_policy.json",
    .arms = arms,
    .fixture = CASE_DIR | CASE_RECORDS,
    .priv_size = sizeof(struct hb21),
    .setup = setup,
    .run = run,
    .teardown = teardown,
};
