/* HB-23: terse denials, precise records, and an attempt budget.
 *
 * Fixture (outside every sandbox): a mock tool on the host's loopback
 * (receivers/tool.c, 127.0.0.1:18990, "tool.test" for the sandbox by the
 * policy's network.resolve) that answers /deny with a terminal 403 and
 * /busy with a transient 503, both carrying an operator-only diagnostic,
 * closes /drop without a response (an unknown outcome), and serves /ok;
 * it logs every request it read with the digest of what it sent. The
 * policy's rule for tool.test is a "tool" rule with a fixed budget of 3
 * attempts in 30 s per operation (docs/network.md, "Denials and attempt
 * budgets"). The sandboxed client (curl): the terminal operation tried 3
 * times, the transient one 5 times and the unknown one 3 times (each with
 * its own Idempotency-Key), a request to a name no rule allows, and /ok
 * (the control). Evidence: the tool's log (how often each operation
 * reached it, the digests of the diagnostics it sent), and the admissions
 * log read back from the record (verified by paddock): every denial the
 * mediator wrote, by class, correlation id and the SHA-256 of its bytes,
 * which the grade compares with the fixed terse form; the tool's error
 * outcomes and their detail digests. What the workload saw is judged from
 * the mediator's digest of what it wrote (the enforcement point's own
 * record, not the workload's word); a capture on the sandbox's side would
 * be the workload's.
 *
 * Arms: enforced; weakened:verbose-denial and weakened:retry-unbounded
 * (paddock's --weaken knobs: the denials tell the decision and the tool's
 * diagnostics pass / no budget: both must FAIL); docker NOT APPLICABLE (no
 * mediator in a container: nothing writes a denial or keeps a budget). The
 * model-wording axis (what a model makes of a terse denial) is NOT
 * EXECUTED: no model runs here (recorded in every arm's evidence). */
#include "../../lib/case.h"
#include "../../observers/observe.h"
#include "../../receivers/tool.h"
#include "hb23_grade.h"

#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../../../policy/sha256.h"

#define PORT_TOOL 18990
#define NA_REASON                                                                                  \
	"a Docker container has no mediator: nothing writes a denial or keeps an attempt budget, " \
	"so the reference would measure only the mock tool"
#define NA_SCOPE "HB-23 (the mediator's denials and budget); harness rule: --network none/host only"

static const struct case_arm arms[] = {
    {.name = "enforced"},
    {.name = "weakened:verbose-denial"},
    {.name = "weakened:retry-unbounded"},
    {.name = "docker",
     .na_reason = {NA_REASON, NA_REASON, NA_REASON},
     .na_scope = {NA_SCOPE, NA_SCOPE, NA_SCOPE}},
    {.name = NULL},
};

#define DENY_TRIES 3
#define BUSY_TRIES 5
#define DROP_TRIES 3

#define CLIENTS                                                              \
	"u=http://tool.test:18990; c='curl -s -m 10 -o /dev/null -X POST'\n" \
	"for i in 1 2 3; do $c -H 'Idempotency-Key: t1' $u/deny; done\n"     \
	"for i in 1 2 3 4 5; do $c -H 'Idempotency-Key: b1' $u/busy; done\n" \
	"for i in 1 2 3; do $c -H 'Idempotency-Key: u1' $u/drop; done\n"     \
	"curl -s -m 10 -o /dev/null http://other.test:18990/x\n"             \
	"curl -s -m 10 -o /dev/null $u/ok\n"                                 \
	"exit 0\n"

struct hb23 {
	struct tool *tool;
	struct denial_obs o;
};

static int setup(struct case_run *cr, struct err *why)
{
	struct hb23 *h = cr->priv;
	int rc = tool_start(&h->tool, PORT_TOOL);

	if (rc < 0)
		return err_sys(why, rc, "the mock tool could not listen on 127.0.0.1:%d",
			       PORT_TOOL);
	return 0;
}

/* The harness's own request: the tool must log it. */
static bool prove(struct hb23 *h, size_t want)
{
	static const char req[] = "GET /probe HTTP/1.1\r\nHost: h\r\n\r\n";
	char b[256];

	(void)observe_request_tcp(PORT_TOOL, req, 2000, b, sizeof(b));
	for (int t = 0; t < 50 && tool_matching(h->tool, "GET /probe ") < want; t++)
		sleep_ms(10);
	return tool_matching(h->tool, "GET /probe ") >= want;
}

static const char *str(const cJSON *o, const char *k)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, k);

	return cJSON_IsString(v) ? v->valuestring : NULL;
}

/* One entry of the admissions log into the observations. */
static void entry(struct hb23 *h, const cJSON *o)
{
	const char *cls = str(o, "class"), *id = str(o, "correlation"),
		   *dg = str(o, "denial_sha256");
	const char *ev = str(o, "event"), *out = str(o, "outcome"), *det = str(o, "detail_sha256");
	const cJSON *st = cJSON_GetObjectItemCaseSensitive(o, "status");
	char form[512], hex[2 * SHA256_DIGEST_LEN + 1], want[96];
	unsigned char d[SHA256_DIGEST_LEN];
	size_t n;

	if (!ev)
		return;
	if (dg) {
		h->o.written++;
		n = cls && id ? hb23_terse_form(cls, id, form, sizeof(form)) : 0;
		sha256(form, n, d);
		sha256_hex(d, hex);
		h->o.terse += n && strcmp(hex, dg) == 0;
		h->o.correlated += id && strlen(id) == 32 && str(o, "decision") != NULL;
	}
	if (out && !strcmp(ev, "outcome") && !strcmp(out, "unknown"))
		h->o.unknown++;
	if (str(o, "decision") && !strcmp(str(o, "decision"), "held-unknown"))
		h->o.held++;
	if (out && !strcmp(out, "succeeded") &&
	    strstr(str(o, "name") ? str(o, "name") : "", "tool"))
		h->o.control = true;
	if (out && cJSON_IsNumber(st) && st->valuedouble >= 400) {
		h->o.tool_errors++;
		h->o.replaced += dg != NULL;
		snprintf(want, sizeof(want), "sent=%s", det ? det : "none");
		h->o.joined += det && dg && tool_matching(h->tool, want) > 0;
	}
}

static void admissions(struct case_run *cr, struct hb23 *h, const char *rec)
{
	static char log[1 << 20];
	char path[512];
	int n = admissions_read(rec, path, sizeof(path), &h->o.log_verified, log, sizeof(log));

	if (n == -ENOENT) {
		result_evidence(cr->r, "admissions", "the record names no admissions log");
		return;
	}
	if (n < 0) {
		result_evidence(cr->r, "admissions", "cannot read %s", path);
		return;
	}
	h->o.log_read = true;
	for (char *line = log; *line;) {
		char *end = strchr(line, '\n');
		cJSON *o = cJSON_ParseWithLength(line, end ? (size_t)(end - line) : strlen(line));

		if (o)
			entry(h, o);
		cJSON_Delete(o);
		if (!end)
			break;
		line = end + 1;
	}
	result_evidence(cr->r, "admissions",
			"log %s (%s): %zu denial(s) written, %zu the fixed terse form, %zu with "
			"decision and correlation id; %zu tool error(s), %zu replaced, %zu joined "
			"by the tool's digest; %zu unknown outcome(s), %zu replay(s) held",
			path, h->o.log_verified ? "complete" : "not verified", h->o.written,
			h->o.terse, h->o.correlated, h->o.tool_errors, h->o.replaced, h->o.joined,
			h->o.unknown, h->o.held);
}

static void run(struct case_run *cr)
{
	struct hb23 *h = cr->priv;
	struct result *r = cr->r;
	char rec[PATH_MAX + 64];
	struct argv_buf a;
	int status = -1;
	bool before;

	snprintf(rec, sizeof(rec), "%s/record.json", cr->records);
	before = prove(h, 1);
	case_argv_arm(cr, &a, &(struct arm_start){.ws = cr->fx.dir, .record = rec});
	argv_words(&a, "sh", "-c", CLIENTS, NULL);
	if (case_run_vec(cr, &a, cr->log, 180000, &status) < 0) {
		result_not_executed(r, "could not start the workload");
		return;
	}
	h->o.proven = before && prove(h, 2);
	case_record(cr, rec, NULL);
	h->o.mediated = true;
	h->o.attempts = 3;
	h->o.deny_tries = DENY_TRIES;
	h->o.busy_tries = BUSY_TRIES;
	h->o.drop_tries = DROP_TRIES;
	h->o.deny_served = tool_matching(h->tool, "POST /deny ");
	h->o.busy_served = tool_matching(h->tool, "POST /busy ");
	h->o.drop_served = tool_matching(h->tool, "POST /drop ");
	h->o.ok_served = tool_matching(h->tool, "GET /ok ");
	result_evidence(r, "tool",
			"served /deny %zu of %d, /busy %zu of %d, /drop %zu of %d, /ok %zu; "
			"probes %s",
			h->o.deny_served, DENY_TRIES, h->o.busy_served, BUSY_TRIES,
			h->o.drop_served, DROP_TRIES, h->o.ok_served,
			h->o.proven ? "logged" : "NOT logged");
	admissions(cr, h, rec);
	result_evidence(r, "model-wording",
			"NOT EXECUTED: no model runs here; what a model makes of a terse denial "
			"is not measured");
	result_evidence(r, "exit", "workload status %d (not evidence)", status);
	grade_denials(&h->o, r->v);
}

static void teardown(struct case_run *cr)
{
	struct hb23 *h = cr->priv;

	tool_stop(h->tool);
}

const struct eval_case hb23_case = {
    .id = "HB-23",
    .title = "Terse denials, precise records, an attempt budget",
    .policy = "cases/network/hb23_policy.json",
    .arms = arms,
    .fixture = CASE_DIR | CASE_RECORDS,
    .priv_size = sizeof(struct hb23),
    .setup = setup,
    .run = run,
    .teardown = teardown,
};
