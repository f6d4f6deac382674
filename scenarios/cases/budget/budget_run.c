/* What the budget cases' drivers share (budget_run.h). */
#include "budget_run.h"
#include "../../observers/observe.h"

#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define LOGS_MAX 4
static char logs[LOGS_MAX][1 << 19];
static size_t n_logs;

void budget_logs_reset(void)
{
	n_logs = 0;
}

int budget_setup(struct case_run *cr, int port, struct err *why)
{
	struct budget_case *h = cr->priv;
	int rc = provider_start(&h->p, port);

	budget_logs_reset();
	if (rc < 0)
		return err_sys(why, rc, "the fake provider could not listen on 127.0.0.1:%d", port);
	return 0;
}

void budget_teardown(struct case_run *cr)
{
	struct budget_case *h = cr->priv;

	provider_stop(h->p);
}

void budget_env(struct case_run *cr, char *env, size_t n)
{
	snprintf(env, n, "XDG_STATE_HOME=%s", cr->records);
}

int budget_session(struct case_run *cr, const char *env, const char *rec, const char *script,
		   int timeout_ms, int *status)
{
	const char *const envv[] = {env, NULL};
	struct argv_buf a;

	case_argv_arm(cr, &a, &(struct arm_start){.ws = cr->fx.dir, .record = rec, .env = envv});
	argv_words(&a, "sh", "-c", script, NULL);
	return case_run_vec(cr, &a, cr->log, timeout_ms, status);
}

static const char *str(const cJSON *o, const char *k)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, k);

	return cJSON_IsString(v) ? v->valuestring : "";
}

static void entry(struct budget_obs *o, const cJSON *e)
{
	const char *d = str(e, "decision"), *ev = str(e, "event"), *l = str(e, "ledger");
	const cJSON *c = cJSON_GetObjectItemCaseSensitive(e, "charge");

	if (!strcmp(ev, "decision")) {
		o->refused_cap += !strcmp(d, "refused-budget-cap");
		o->refused_unpriced += !strcmp(d, "refused-unpriced");
		o->refused_ledger += !strcmp(d, "refused-ledger");
		o->held_unknown += !strcmp(d, "held-unknown");
		o->receipted += !strcmp(d, "answered-receipt");
	}
	if (!strcmp(ev, "outcome") && !strcmp(l, "settled")) {
		o->settled++;
		o->settled_sum += cJSON_IsNumber(c) ? (unsigned)c->valuedouble : 0;
	}
	if (!strcmp(ev, "outcome") && !strcmp(l, "unknown"))
		o->unknown++;
}

void budget_logs(struct case_run *cr, struct budget_obs *o, const char *rec, const char *what)
{
	char path[512], *log;
	bool verified = false;
	int n;

	if (n_logs == 0)
		o->log_read = o->log_verified = true;
	o->mediated = true;
	if (n_logs == LOGS_MAX) {
		o->log_read = false;
		return;
	}
	log = logs[n_logs];
	n = admissions_read(rec, path, sizeof(path), &verified, log, sizeof(logs[0]));
	if (n < 0) {
		o->log_read = false;
		result_evidence(cr->r, "admissions", "%s: %s", what,
				n == -ENOENT ? "the record names no admissions log"
					     : "cannot read the admissions log");
		return;
	}
	n_logs++;
	o->log_verified &= verified;
	for (char *line = log; *line;) {
		char *end = strchr(line, '\n');
		cJSON *e = cJSON_ParseWithLength(line, end ? (size_t)(end - line) : strlen(line));

		if (e)
			entry(o, e);
		cJSON_Delete(e);
		if (!end)
			break;
		line = end + 1;
	}
	result_evidence(cr->r, "admissions", "%s: log %s (%s)", what, path,
			verified ? "complete" : "not verified");
}

size_t budget_joined(struct provider *p, const char *text)
{
	size_t joined = 0;

	for (size_t i = 0; i < provider_lines(p); i++) {
		const char *l = provider_line(p, i), *a;
		size_t n;

		if (!l || !strstr(l, text) || !(a = strstr(l, "admission=")))
			continue;
		a += strlen("admission=");
		n = strcspn(a, " ");
		for (size_t k = 0; k < n_logs; k++)
			if (n > 1 && admissions_has(logs[k], a, n)) {
				joined++;
				break;
			}
	}
	return joined;
}

bool budget_probe(struct provider *p, int port, size_t want)
{
	static const char req[] = "GET /free-probe HTTP/1.1\r\nHost: h\r\n\r\n";
	char b[256];

	(void)observe_request_tcp(port, req, 2000, b, sizeof(b));
	for (int t = 0; t < 50 && provider_matching(p, "GET /free-probe ") < want; t++)
		sleep_ms(10);
	return provider_matching(p, "GET /free-probe ") >= want;
}

int budget_ledger_unknown(struct case_run *cr, const char *env, const char *budget,
			  unsigned *unknown, unsigned *receipts)
{
	static char out[1 << 16];
	struct argv_buf a;
	cJSON *j, *u, *op;
	int status = -1, rc;

	argv_start(&a, NULL);
	argv_words(&a, "/usr/bin/env", env, cr->ctx->paddock, "budget", "show", budget, "--json",
		   NULL);
	rc = capture_vec(cr->ctx, cr->ctx->drop, &a, out, sizeof(out), 30000, &status);
	if (rc < 0 || status != 0)
		return rc < 0 ? rc : -EIO;
	j = cJSON_Parse(out);
	u = cJSON_GetObjectItemCaseSensitive(j, "unknown");
	rc = cJSON_IsNumber(u) ? 0 : -EINVAL;
	if (!rc)
		*unknown = (unsigned)u->valuedouble;
	if (receipts) {
		*receipts = 0;
		cJSON_ArrayForEach(op, cJSON_GetObjectItemCaseSensitive(j, "ops")) {
			const cJSON *c = cJSON_GetObjectItemCaseSensitive(op, "charge");

			if (!strcmp(str(op, "source"), "lookup") && cJSON_IsNumber(c))
				*receipts += (unsigned)c->valuedouble;
		}
	}
	cJSON_Delete(j);
	return rc;
}
