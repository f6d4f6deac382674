/* Integration: terse denials and attempt budgets (HB-23, docs/network.md
 * "Denials and attempt budgets") as an unprivileged user. A mock tool on
 * the host's loopback answers by path: /deny a 403, /busy a 503 (both with
 * an operator-only diagnostic), /drop reads the request and closes without
 * a response, /slow answers only after 4 s, /ok a 200; it counts what
 * reaches it per path. The workload speaks raw HTTP to the proxy and
 * prints what it got; the decisions are checked in the admissions log and
 * the counts at the receiver. Each protection has its weakened twin
 * (--weaken verbose-denial, --weaken retry-unbounded) showing the test
 * sees the effect. */
#include "harness.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdatomic.h>
#include <sys/socket.h>

TestSuite(denials, .init = h_init, .fini = h_fini, .timeout = 180);

#define DIAG "DIAG-7f3a: acl rule tenant-acl matched principal agent-7"

enum {
	P_DENY,
	P_BUSY,
	P_DROP,
	P_SLOW,
	P_OK,
	P_COUNT
};
static const char *const paths[P_COUNT] = {"/deny", "/busy", "/drop", "/slow", "/ok"};

struct tool {
	int port;
	atomic_int count[P_COUNT];
};

static void one(void *arg, int c)
{
	struct tool *t = arg;
	char buf[8192], resp[512];
	ssize_t n = recv(c, buf, sizeof(buf) - 1, 0);
	int k = -1, len;

	if (n > 0) {
		buf[n] = '\0';
		for (int i = 0; i < P_COUNT && k < 0; i++)
			if (strncmp(buf + strcspn(buf, " ") + 1, paths[i], strlen(paths[i])) == 0)
				k = i;
	}
	if (k >= 0)
		atomic_fetch_add(&t->count[k], 1);
	len = k == P_DENY   ? snprintf(resp, sizeof(resp),
				       "HTTP/1.1 403 Forbidden\r\nContent-Length: %zu\r\n"
					 "Connection: close\r\n\r\n%s",
				       strlen(DIAG), DIAG)
	      : k == P_BUSY ? snprintf(resp, sizeof(resp),
				       "HTTP/1.1 503 Service Unavailable\r\nContent-Length: %zu\r\n"
				       "Connection: close\r\n\r\n%s",
				       strlen(DIAG), DIAG)
	      : k == P_OK
		  ? snprintf(resp, sizeof(resp),
			     "HTTP/1.1 200 OK\r\nContent-Length: 3\r\nConnection: close\r\n\r\n"
			     "ok\n")
		  : 0;
	if (k == P_SLOW)
		sleep(4);
	if (len > 0)
		(void)!send(c, resp, (size_t)len, MSG_NOSIGNAL);
	close(c);
}

static struct tool *tool(void)
{
	struct tool *t = calloc(1, sizeof(*t));

	cr_assert_not_null(t);
	h_server(one, t, 64, &t->port);
	return t;
}

/* A port nothing listens on (bound, never listened: connect is refused). */
static int dead_port(void)
{
	struct sockaddr_in a = {.sin_family = AF_INET};
	socklen_t len = sizeof(a);
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);

	inet_pton(AF_INET, "127.0.0.1", &a.sin_addr);
	cr_assert_eq(bind(fd, (struct sockaddr *)&a, sizeof(a)), 0);
	getsockname(fd, (struct sockaddr *)&a, &len);
	return ntohs(a.sin_port); /* fd stays open: the port stays ours */
}

/* tool.test: a tool rule, 3 attempts in 30 s, one grant "/{op}";
 * slow.test the same tool with a 2 s deadline; dead.test nothing
 * listening, 3 attempts. */
static char *policy(const struct h_world *w, int port, int dead)
{
	char *path = h_join(w->base, "denials.json");
	const char *src = h_read_file(h_fmt("%s/contrib/policies/agent.json", h_root()), NULL);
	const char *at = strstr(src, "\"network\": \"none\",");

	cr_assert_not_null(at);
	h_write_file(
	    path,
	    h_fmt("%.*s\"network\": {\"mode\": \"mediated\", \"allow\": ["
		  "{\"host\": \"tool.test\", \"ports\": [%d], \"protocol\": \"http\", \"tool\": "
		  "true, \"attempts\": 3, \"deadline\": \"30s\", \"grants\": [{\"methods\": "
		  "[\"POST\"], \"path\": \"/{op}\"}]},"
		  "{\"host\": \"slow.test\", \"ports\": [%d], \"protocol\": \"http\", \"tool\": "
		  "true, \"deadline\": \"2s\"},"
		  "{\"host\": \"dead.test\", \"ports\": [%d], \"protocol\": \"http\", "
		  "\"attempts\": 3}],"
		  "\"resolve\": {\"tool.test\": \"127.0.0.1\", \"slow.test\": \"127.0.0.1\", "
		  "\"dead.test\": \"127.0.0.1\"}},%s",
		  (int)(at - src), src, port, port, dead, at + strlen("\"network\": \"none\",")),
	    0644);
	return path;
}

/* The workload: each argument HOST,PATH,KEY,BODY[,HOSTHEADER][,SLEEP][,t]
 * is one request through the proxy (with t, transparently: to the name's
 * synthetic address, in origin-form; dead.test on the dead port); per request one line "R STATUS
 * BODY SHA256 HEADERS" (the telling headers only). */
static const char client[] =
    "import socket, sys, hashlib, time\n"
    "P = int(sys.argv[1])\n"
    "for a in sys.argv[2:]:\n"
    "    f = a.split(',') + ['', '', '']\n"
    "    host, path, key, body, hh, nap, tr = f[:7]\n"
    "    host, _, port = host.partition(':')\n"
    "    port = int(port or P)\n"
    "    if nap: time.sleep(float(nap))\n"
    "    h = 'Host: %s\\r\\n' % (hh or '%s:%d' % (host, port))\n"
    "    if key: h += 'Idempotency-Key: %s\\r\\n' % key\n"
    "    s = socket.create_connection((host, port) if tr else ('127.0.0.1', 3128), timeout=20)\n"
    "    t = path if tr else 'http://%s:%d%s' % (host, port, path)\n"
    "    s.sendall(('POST %s HTTP/1.1\\r\\n%sContent-Length: %d\\r\\n\\r\\n%s'\n"
    "               % (t, h, len(body), body)).encode())\n"
    "    d = b''\n"
    "    while True:\n"
    "        try: c = s.recv(65536)\n"
    "        except OSError: break\n"
    "        if not c: break\n"
    "        d += c\n"
    "    head, _, b = d.partition(b'\\r\\n\\r\\n')\n"
    "    ls = head.decode(errors='replace').split('\\r\\n')\n"
    "    st = ls[0].split(' ')[1] if ls[0] else '-'\n"
    "    hs = [l for l in ls[1:] if l.lower().startswith(('retry-after', 'paddock-'))]\n"
    "    print('R', st, b.decode(errors='replace').strip().replace('\\n', ' ').replace(' ', '_'),\n"
    "          hashlib.sha256(d).hexdigest(), '|'.join(hs).replace(' ', ''), flush=True)\n";

struct run {
	struct h_world w;
	struct tool *t;
	struct h_proc pr;
	char *lines[32];
	size_t n;
};

static void run(struct run *r, const char *weaken, const char *const *reqs)
{
	char *argv[48];
	size_t k = 0;
	int dead = dead_port();
	char *p;

	r->w = h_world();
	r->t = tool();
	p = policy(&r->w, r->t->port, dead);
	argv[k++] = (char *)h_paddock();
	argv[k++] = "run";
	argv[k++] = "--policy";
	argv[k++] = p;
	argv[k++] = "--record";
	argv[k++] = r->w.record;
	if (weaken) {
		argv[k++] = "--weaken";
		argv[k++] = (char *)weaken;
	}
	argv[k++] = "--";
	argv[k++] = "python3";
	argv[k++] = "-c";
	argv[k++] = (char *)client;
	argv[k++] = h_fmt("%d", r->t->port);
	for (size_t i = 0; reqs[i]; i++)
		argv[k++] = strncmp(reqs[i], "dead.test,", 10) == 0
				? h_fmt("dead.test:%d%s", dead, reqs[i] + 9)
				: (char *)reqs[i];
	argv[k] = NULL;
	h_spawn(&r->pr, r->w.ws, argv, NULL);
	h_wait(&r->pr, 90000);
	cr_assert_eq(r->pr.status, 0, H_SHOW(&r->pr));
	r->n = 0;
	for (char *s = h_fmt("%s", r->pr.out_text), *e; (e = strchr(s, '\n')) && r->n < 32;
	     s = e + 1) {
		*e = '\0';
		if (strncmp(s, "R ", 2) == 0)
			r->lines[r->n++] = s;
	}
}

/* Field f (0 status, 1 body, 2 sha256, 3 headers) of response i. */
static const char *field(const struct run *r, size_t i, int f)
{
	char *s = h_fmt("%s", r->lines[i] + 2), *tok = strtok(s, " ");

	for (int k = 0; k < f && tok; k++)
		tok = strtok(NULL, " ");
	return tok ? tok : "";
}

/* The correlation id in a terse body, or "". */
static const char *corr(const char *body)
{
	const char *at = strstr(body, "\"correlation_id\":\"");

	return at ? h_fmt("%.32s", at + 18) : "";
}

/* How many admissions log entries satisfy the Python condition on l. */
static int adm_count(const struct run *r, const char *cond)
{
	return atoi(h_json(r->w.record, h_fmt("sum(1 for l in map(json.loads, open(d['network']"
					      "['admissions_log'])) if %s)",
					      cond)));
}

/* The admissions log's text, for failure messages. */
static const char *adm_log(const struct run *r)
{
	const char *q = h_json(r->w.record, "d['network']['admissions_log']");
	const char *t = h_read_file(h_fmt("%.*s", (int)strlen(q) - 2, q + 1), NULL);

	return t ? t : "(none)";
}

/* The terse body: exactly {"class":C,"correlation_id":32 hex} (and
 * "retry_after":1 for transient), nothing else. */
static bool terse(const char *body, const char *cls)
{
	const char *want = h_fmt("{\"class\":\"%s\",\"correlation_id\":\"%s\"%s}", cls, corr(body),
				 strcmp(cls, "transient") == 0 ? ",\"retry_after\":1" : "");

	return strlen(corr(body)) == 32 && strspn(corr(body), "0123456789abcdef") == 32 &&
	       strcmp(body, want) == 0;
}

/* Every kind of refusal: the mediator's own (no rule, malformed, grant,
 * terminal replay, held unknown) and a tool's replaced error (terminal,
 * transient, unknown): terse, and each correlation id names the full
 * decision in the admissions log, with the digest of what was written. */
static void every_kind(bool verbose)
{
	static const char *const reqs[] = {"other.test,/x,,",	   "tool.test,/x,,,evil.test",
					   "tool.test,/a/b,,",	   "tool.test,/deny,d1,",
					   "tool.test,/deny,d1,",  "tool.test,/busy,b1,",
					   "tool.test,/drop,u1,",  "tool.test,/drop,u1,",
					   "tool.test,/a/b,,,,,t", NULL};
	static const char *const cls[] = {"denied",    "denied",  "denied",  "denied", "denied",
					  "transient", "unknown", "unknown", "denied"};
	static const char *const what[] = {"l.get('decision')=='refused-no-rule'",
					   "l.get('decision')=='refused-malformed'",
					   "l.get('decision')=='refused-grant'",
					   "l.get('outcome')=='denied' and l['status']==403",
					   "l.get('decision')=='refused-terminal'",
					   "l.get('outcome')=='transient' and "
					   "l['status']==503",
					   "l.get('outcome')=='unknown'",
					   "l.get('decision')=='held-unknown'",
					   "l.get('decision')=='refused-grant'"};
	struct run r;

	run(&r, verbose ? "verbose-denial" : NULL, reqs);
	cr_assert_eq(r.n, 9, H_SHOW(&r.pr));
	if (verbose) {
		/* The twin: the refusal names its decision and destination,
		 * and the tool's own diagnostic reaches the workload. */
		cr_assert(h_contains(r.pr.out_text, "Paddock-Decision:refused-no-rule"),
			  H_SHOW(&r.pr));
		cr_assert(h_contains(r.pr.out_text, "other.test"), H_SHOW(&r.pr));
		cr_assert(h_contains(r.pr.out_text, "DIAG-7f3a"), H_SHOW(&r.pr));
		return;
	}
	cr_assert(!h_contains(r.pr.out_text, "DIAG"), H_SHOW(&r.pr));
	cr_assert(!h_contains(r.pr.out_text, "refused"), H_SHOW(&r.pr));
	cr_assert(!h_contains(r.pr.out_text, ".test"), H_SHOW(&r.pr));
	cr_assert(!h_contains(r.pr.out_text, "Paddock-"), H_SHOW(&r.pr));
	cr_assert(!h_contains(r.pr.out_text, "rule"), H_SHOW(&r.pr));
	/* The last one transparently: the same terse form once it spoke HTTP. */
	for (size_t i = 0; i < 9; i++) {
		const char *body = field(&r, i, 1), *id = corr(body);

		cr_assert(terse(body, cls[i]), "response %zu: %s\n" H_FMT, i, body, H_ARGS(&r.pr));
		cr_assert_str_eq(field(&r, i, 0), i == 5	     ? "503"
						  : i == 6 || i == 7 ? "502"
								     : "403");
		if (i == 5)
			cr_assert_str_eq(field(&r, i, 3), "Retry-After:1");
		/* The operator's record: this id, the full decision, and the
		 * digest of exactly the bytes the workload got. */
		cr_assert_eq(adm_count(&r, h_fmt("l.get('correlation')=='%s' and %s", id, what[i])),
			     1, "response %zu (%s): no %s in the admissions log", i, id, what[i]);
		cr_assert_eq(adm_count(&r, h_fmt("l.get('correlation')=='%s' and "
						 "l.get('denial_sha256')=='%s'",
						 id, field(&r, i, 2))),
			     1, "response %zu: the logged digest is not what was written", i);
	}
	/* The replaced diagnostic: its digest and length in the log. */
	cr_assert_eq(adm_count(&r, "l.get('outcome')=='denied' and l.get('detail_bytes',0)>0 and "
				   "len(l.get('detail_sha256',''))==64"),
		     1);
	cr_assert_eq(atomic_load(&r.t->count[P_DENY]), 1);
	cr_assert_eq(atomic_load(&r.t->count[P_DROP]), 1);
}

Test(denials, every_refusal_is_terse_and_recorded_in_full)
{
	every_kind(false);
}

Test(denials, weakened_twin_verbose_denial_tells_the_details)
{
	every_kind(true);
}

/* A terminal denial cannot be retried into success, keyed by an
 * Idempotency-Key or by method, URL and body. */
static void terminal(bool unbounded)
{
	static const char *const reqs[] = {"tool.test,/deny,t1,",     "tool.test,/deny,t1,",
					   "tool.test,/deny,t1,",     "tool.test,/deny,,body-a",
					   "tool.test,/deny,,body-a", "tool.test,/deny,,body-a",
					   "tool.test,/deny,,body-b", NULL};
	struct run r;

	run(&r, unbounded ? "retry-unbounded" : NULL, reqs);
	cr_assert_eq(r.n, 7, H_SHOW(&r.pr));
	if (unbounded) {
		cr_assert_eq(atomic_load(&r.t->count[P_DENY]), 7,
			     "the twin's retries did not all arrive\n" H_FMT, H_ARGS(&r.pr));
		return;
	}
	cr_assert_eq(atomic_load(&r.t->count[P_DENY]), 3, "t1 once, body-a once, body-b once");
	cr_assert_eq(adm_count(&r, "l.get('decision')=='refused-terminal'"), 4, "%s", adm_log(&r));
	cr_assert_eq(adm_count(&r, "l.get('outcome')=='denied'"), 3, "%s", adm_log(&r));
}

Test(denials, terminal_denial_is_not_retried)
{
	terminal(false);
}

Test(denials, weakened_twin_retry_unbounded_terminal)
{
	terminal(true);
}

/* Transient failures (the tool's 503, a refused connect) are tried at
 * most the budget (3); then refused-budget, denied. */
static void transient(bool unbounded)
{
	static const char *const reqs[] = {"tool.test,/busy,b,", "tool.test,/busy,b,",
					   "tool.test,/busy,b,", "tool.test,/busy,b,",
					   "tool.test,/busy,b,", "dead.test,/x,c,",
					   "dead.test,/x,c,",	 "dead.test,/x,c,",
					   "dead.test,/x,c,",	 NULL};
	struct run r;

	run(&r, unbounded ? "retry-unbounded" : NULL, reqs);
	cr_assert_eq(r.n, 9, H_SHOW(&r.pr));
	if (unbounded) {
		cr_assert_eq(atomic_load(&r.t->count[P_BUSY]), 5, H_SHOW(&r.pr));
		cr_assert_eq(adm_count(&r, "l.get('decision')=='upstream-failed'"), 4, "%s",
			     adm_log(&r));
		return;
	}
	cr_assert_eq(atomic_load(&r.t->count[P_BUSY]), 3, H_SHOW(&r.pr));
	cr_assert_eq(adm_count(&r, "l.get('outcome')=='transient' and l['attempt']<=3"), 3, "%s",
		     adm_log(&r));
	cr_assert_eq(adm_count(&r, "l.get('decision')=='upstream-failed'"), 3, "%s", adm_log(&r));
	cr_assert_eq(adm_count(&r, "l.get('decision')=='refused-budget'"), 3, "%s", adm_log(&r));
	for (size_t i = 0; i < 9; i++) {
		bool over = i == 3 || i == 4 || i == 8;

		cr_assert(terse(field(&r, i, 1), over ? "denied" : "transient"),
			  "response %zu\n" H_FMT, i, H_ARGS(&r.pr));
	}
}

Test(denials, transient_failures_are_tried_at_most_the_budget)
{
	transient(false);
}

Test(denials, weakened_twin_retry_unbounded_transient)
{
	transient(true);
}

/* An unknown outcome (the tool closed without a response; the slow one
 * past the rule's deadline) is recorded as unknown and the replay never
 * reaches the tool. */
static void unknown(bool unbounded)
{
	static const char *const reqs[] = {"tool.test,/drop,u,", "tool.test,/drop,u,",
					   "tool.test,/drop,u,", "slow.test,/slow,s,",
					   "slow.test,/slow,s,", NULL};
	struct run r;

	run(&r, unbounded ? "retry-unbounded" : NULL, reqs);
	cr_assert_eq(r.n, 5, H_SHOW(&r.pr));
	if (unbounded) {
		cr_assert_eq(atomic_load(&r.t->count[P_DROP]), 3, H_SHOW(&r.pr));
		cr_assert_eq(atomic_load(&r.t->count[P_SLOW]), 2, H_SHOW(&r.pr));
		return;
	}
	cr_assert_eq(atomic_load(&r.t->count[P_DROP]), 1, H_SHOW(&r.pr));
	cr_assert_eq(atomic_load(&r.t->count[P_SLOW]), 1, H_SHOW(&r.pr));
	cr_assert_eq(adm_count(&r, "l.get('outcome')=='unknown'"), 2, "%s", adm_log(&r));
	cr_assert_eq(adm_count(&r, "l.get('decision')=='held-unknown'"), 3, "%s", adm_log(&r));
	for (size_t i = 0; i < 5; i++)
		cr_assert(terse(field(&r, i, 1), "unknown"), "response %zu\n" H_FMT, i,
			  H_ARGS(&r.pr));
}

Test(denials, unknown_outcome_is_held_never_sent_twice)
{
	unknown(false);
}

Test(denials, weakened_twin_retry_unbounded_unknown)
{
	unknown(true);
}

/* The deadline counts from the first attempt: a transient failure tried
 * again after it is refused-budget without a dial. */
Test(denials, deadline_ends_the_retries)
{
	static const char *const reqs[] = {"slow.test,/busy,x,", "slow.test,/busy,x,,,2.5", NULL};
	struct run r;

	run(&r, NULL, reqs);
	cr_assert_eq(r.n, 2, H_SHOW(&r.pr));
	cr_assert_eq(atomic_load(&r.t->count[P_BUSY]), 1, H_SHOW(&r.pr));
	cr_assert(terse(field(&r, 0, 1), "transient"), H_SHOW(&r.pr));
	cr_assert(terse(field(&r, 1, 1), "denied"), H_SHOW(&r.pr));
	cr_assert_eq(adm_count(&r, "l.get('decision')=='refused-budget'"), 1, "%s", adm_log(&r));
}

/* A successful operation passes as the tool sent it. */
Test(denials, success_passes_unchanged)
{
	static const char *const reqs[] = {"tool.test,/ok,k,", "tool.test,/ok,k,", NULL};
	struct run r;

	run(&r, NULL, reqs);
	cr_assert_eq(r.n, 2, H_SHOW(&r.pr));
	cr_assert_str_eq(field(&r, 0, 0), "200");
	cr_assert_str_eq(field(&r, 0, 1), "ok");
	cr_assert_str_eq(field(&r, 1, 1), "ok",
			 "a succeeded operation is done: the same again "
			 "is a new one");
	cr_assert_eq(atomic_load(&r.t->count[P_OK]), 2);
	cr_assert_eq(adm_count(&r, "l.get('outcome')=='succeeded' and l['status']==200"), 2, "%s",
		     adm_log(&r));
}

/* The knobs weaken the mediator: without one they are refused, in one
 * line after the warning, and nothing runs. */
Test(denials, knobs_need_a_mediated_network)
{
	static const char *const knobs[] = {"verbose-denial", "retry-unbounded"};
	struct h_world w = h_world();
	struct h_proc pr;

	for (size_t i = 0; i < 2; i++) {
		H_PADDOCK(&pr, w.ws, "run", "--weaken", knobs[i], "--", "sh", "-c", "echo ran");
		cr_assert_eq(pr.status, 125, H_SHOW(&pr));
		cr_assert_eq(h_count_lines(pr.err_text), 2, H_SHOW(&pr));
		cr_assert(h_contains(pr.err_text, "paddock: warning: --weaken "), H_SHOW(&pr));
		cr_assert(h_contains(pr.err_text,
				     h_fmt("--weaken %s: needs a mediated network", knobs[i])),
			  H_SHOW(&pr));
		cr_assert(!h_contains(pr.out_text, "ran"), H_SHOW(&pr));
	}
	H_PADDOCK(&pr, w.ws, "run", "--weaken", "verbose-denials", "--", "true");
	cr_assert_eq(pr.status, 125, H_SHOW(&pr));
	cr_assert_eq(h_count_lines(pr.err_text), 1, H_SHOW(&pr));
	cr_assert(h_contains(pr.err_text, "did you mean: verbose-denial?"), H_SHOW(&pr));
}
