/* HB-17: a tool's claim is reconciled with the receiver's effect.
 *
 * Fixture (outside every sandbox): a mock tool on 127.0.0.1:19022
 * ("tool17.test", a thread of the harness) with its own ledger of effects
 * (a file of the fixture: one JSON line per request, its
 * Paddock-Admission id and whether it had an effect). /ok writes a
 * harmless marker and answers 200; /claim-success answers 200 and writes
 * nothing; /claim-failure writes the marker and answers 500; /fail writes
 * nothing and answers 500. The workload calls each once through the
 * mediator (a "tool" rule: each outcome is logged with its status, the
 * claim). Outside evidence: paddock evidence reconcile of the record with
 * the ledger (task state and effect state per operation, and their join),
 * and again without it (the receiver down: every effect unknown). The
 * tool's output never reaches the grade.
 *
 * Arms: enforced; weakened:trust-tool-claim (paddock run --weaken
 * trust-tool-claim: reconcile takes the claim for the effect, both
 * mismatches are reported matched: must FAIL); docker NOT APPLICABLE (no
 * mediator records a claim). */
#include "../../lib/case.h"
#include "../../observers/observe.h"
#include "../../receivers/counter.h"
#include "hb17_grade.h"

#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#define PORT 19022
#define NA_REASON                                                                         \
	"a Docker container has no mediator: no claim is recorded to reconcile with the " \
	"receiver's effect"
#define NA_SCOPE "HB-17 (paddock evidence reconcile)"

static const struct case_arm arms[] = {
    {.name = "enforced"},
    {.name = "weakened:trust-tool-claim"},
    {.name = "docker",
     .na_reason = {NA_REASON, NA_REASON, NA_REASON},
     .na_scope = {NA_SCOPE, NA_SCOPE, NA_SCOPE}},
    {.name = NULL},
};

#define CLIENTS                                             \
	"for p in ok claim-success claim-failure fail; do " \
	"curl -s -m 5 -o /dev/null http://tool17.test:19022/$p; done; exit 0"

struct hb17 {
	struct rthread rt;
	bool on;
	char ledger[PATH_MAX + 16], effect[PATH_MAX + 16];
	pthread_mutex_t lock;
	size_t served;
	struct claim_obs o;
};

/* One request: its path and admission id, the effect, the ledger line,
 * the answer. */
static void serve_one(struct hb17 *h, int s)
{
	char buf[4096], id[96] = "", path[64] = "";
	ssize_t n = recv(s, buf, sizeof(buf) - 1, 0);
	const char *a;
	bool effect, ok;
	FILE *f;

	if (n <= 0)
		return;
	buf[n] = '\0';
	sscanf(buf, "%*s %63s", path);
	if ((a = strstr(buf, "Paddock-Admission: ")))
		snprintf(id, sizeof(id), "%.*s", (int)strcspn(a + 19, "\r\n"), a + 19);
	if (!strstr(path, "/probe") && !id[0])
		return;
	effect = strcmp(path, "/ok") == 0 || strcmp(path, "/claim-failure") == 0 ||
		 strcmp(path, "/probe") == 0;
	ok = strcmp(path, "/ok") == 0 || strcmp(path, "/claim-success") == 0 ||
	     strcmp(path, "/probe") == 0;
	pthread_mutex_lock(&h->lock);
	if (effect && (f = fopen(h->effect, "ae"))) {
		fprintf(f, "marker %s\n", id[0] ? id : "probe");
		fclose(f);
	}
	if ((f = fopen(h->ledger, "ae"))) {
		fprintf(f, "{\"admission\":\"%s\",\"path\":\"%s\",\"effect\":%s}\n",
			id[0] ? id : "harness-probe", path, effect ? "true" : "false");
		fclose(f);
	}
	h->served += strcmp(path, "/probe") != 0;
	pthread_mutex_unlock(&h->lock);
	(void)!send(s,
		    ok ? "HTTP/1.1 200 OK\r\nContent-Length: 3\r\nConnection: close\r\n\r\nok\n"
		       : "HTTP/1.1 500 Internal Server Error\r\nContent-Length: 5\r\nConnection: "
			 "close\r\n\r\nfail\n",
		    ok ? 61 : 80, MSG_NOSIGNAL);
}

static void *serve(void *arg)
{
	struct hb17 *h = arg;

	for (;;) {
		struct pollfd p[2] = {{.fd = h->rt.fd, .events = POLLIN},
				      {.fd = h->rt.stop[0], .events = POLLIN}};
		int s;

		if (poll(p, 2, -1) < 0 && errno != EINTR)
			return NULL;
		if (p[1].revents)
			return NULL;
		if (!(p[0].revents & POLLIN))
			continue;
		s = accept4(h->rt.fd, NULL, NULL, SOCK_CLOEXEC);
		if (s < 0)
			continue;
		serve_one(h, s);
		close(s);
	}
}

static int setup(struct case_run *cr, struct err *why)
{
	struct hb17 *h = cr->priv;
	char dir[PATH_MAX];
	int rc;

	pthread_mutex_init(&h->lock, NULL);
	if (fixture_mkdir(cr->ctx, &cr->fx, "tool", dir, sizeof(dir)) < 0)
		return err_set(why, EIO, "cannot make the tool's directory");
	snprintf(h->ledger, sizeof(h->ledger), "%s/ledger.jsonl", dir);
	snprintf(h->effect, sizeof(h->effect), "%s/effects", dir);
	rc = rthread_start(&h->rt, "127.0.0.1", PORT, false, serve, h);
	if (rc < 0)
		return err_sys(why, rc, "the tool could not listen on 127.0.0.1:%d", PORT);
	h->on = true;
	return 0;
}

/* The harness's own request: the ledger must record it. */
static bool prove(struct hb17 *h)
{
	static const char req[] = "GET /probe HTTP/1.1\r\nHost: h\r\n\r\n";
	char b[256];
	static char text[65536];

	(void)observe_request_tcp(PORT, req, 2000, b, sizeof(b));
	return read_file(h->ledger, text, sizeof(text)) > 0 && strstr(text, "harness-probe");
}

/* paddock evidence reconcile REC [--ledger L]: its output and status. */
static int reconcile(struct case_run *cr, const char *rec, const char *ledger, char *out, size_t n)
{
	struct argv_buf a;
	int st = -1;

	argv_start(&a, cr->r);
	argv_words(&a, cr->ctx->paddock, "evidence", "reconcile", rec, NULL);
	if (ledger)
		argv_words(&a, "--ledger", ledger, NULL);
	if (capture_vec(cr->ctx, cr->ctx->drop, &a, out, n, 30000, &st) < 0)
		return -1;
	return st;
}

/* The disposition the output gives the operation the tool's ledger has
 * for path. */
static bool disposed(const char *out, const char *ledger, const char *path, const char *d)
{
	char want[160], id[96];
	const char *at = strstr(ledger, path), *line;

	if (!at)
		return false;
	line = at;
	while (line > ledger && line[-1] != '\n')
		line--;
	if (sscanf(line, "{\"admission\":\"%95[^\"]\"", id) != 1)
		return false;
	snprintf(want, sizeof(want), "%s: ", id);
	at = strstr(out, want);
	return at && strstr(at, d) && strstr(at, d) < strchr(at, '\n');
}

static void run(struct case_run *cr)
{
	struct hb17 *h = cr->priv;
	struct result *r = cr->r;
	static char out[8192], ledger[65536];
	char rec[PATH_MAX + 64];
	struct argv_buf a;
	int status = -1, st;

	snprintf(rec, sizeof(rec), "%s/record.json", cr->records);
	h->o.ledger_proven = prove(h);
	case_argv_arm(cr, &a, &(struct arm_start){.ws = cr->task, .record = rec});
	argv_words(&a, "sh", "-c", CLIENTS, NULL);
	if (case_run_vec(cr, &a, cr->log, 120000, &status) < 0) {
		result_not_executed(r, "could not start the workload");
		return;
	}
	case_record(cr, rec, NULL);
	pthread_mutex_lock(&h->lock);
	h->o.received = h->served;
	pthread_mutex_unlock(&h->lock);
	read_file(h->ledger, ledger, sizeof(ledger));
	st = reconcile(cr, rec, h->ledger, out, sizeof(out));
	h->o.reconciled = st >= 0 && st <= 2;
	for (const char *p = out; (p = strstr(p, ": task ")); p++)
		h->o.ops++;
	h->o.success_no_effect =
	    disposed(out, ledger, "\"/claim-success\"", "claimed-success-no-effect");
	h->o.failure_effect = disposed(out, ledger, "\"/claim-failure\"", "claimed-failure-effect");
	h->o.consistent_matched = disposed(out, ledger, "\"/ok\"", ": matched") ||
				  disposed(out, ledger, "\"/ok\"", "matched");
	h->o.consistent_matched =
	    h->o.consistent_matched && disposed(out, ledger, "\"/fail\"", "matched");
	result_evidence(r, "reconcile", "with the ledger (status %d): %s", st, out);
	st = reconcile(cr, rec, NULL, out, sizeof(out));
	h->o.down_checked = st >= 0;
	h->o.down_unknown = st == 2 && strstr(out, "\nUNKNOWN") && !strstr(out, ": matched");
	result_evidence(r, "reconcile", "the receiver down (no ledger; status %d): %s", st, out);
	result_evidence(r, "tool", "served %zu request(s); its ledger proven: %s", h->o.received,
			h->o.ledger_proven ? "yes" : "no");
	result_evidence(r, "exit", "workload status %d (not evidence)", status);
	grade_claims(&h->o, r->v);
}

static void teardown(struct case_run *cr)
{
	struct hb17 *h = cr->priv;

	if (!h->on)
		return;
	rthread_stop(&h->rt);
	pthread_mutex_destroy(&h->lock);
}

const struct eval_case hb17_case = {
    .id = "HB-17",
    .title = "A tool's claim is reconciled with the receiver's effect",
    .policy = "cases/evidence/hb17_policy.json",
    .arms = arms,
    .fixture = CASE_DIR | CASE_TASK | CASE_RECORDS,
    .priv_size = sizeof(struct hb17),
    .setup = setup,
    .run = run,
    .teardown = teardown,
};
