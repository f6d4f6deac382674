/* Unit tests for budgets of metered rules (docs/network.md, "Budgets"):
 * the pure part (mediator/meter.c: bounds, charges, the operation key)
 * and the ledger (mediator/ledger.c: SQLite in a temporary directory):
 * reserve before dispatch, the cap, settlement, unknown kept, recovery
 * after a crash; and the concurrency property of issue 17's Checks:
 * randomised trials of concurrent callers in several processes sharing one
 * budget, where the provider's own charges never exceed the cap, no
 * operation is in flight twice, and the ledger equals the provider's after
 * settlement; its weakened twin (check-then-charge) overspends.
 *
 * PADDOCK_BUDGET_TRIALS sets the number of trials (default 30 here; the
 * issue's full size is 10000: PADDOCK_BUDGET_TRIALS=10000
 * build/tests/test_meter --filter 'meter/concurrent_*'), and
 * PADDOCK_BUDGET_CRASHES the crash test's rounds (default 20; the issue's
 * 200: PADDOCK_BUDGET_CRASHES=200 build/tests/test_meter --filter
 * 'meter/crashes*'). The crash test's twin was checked by hand: recovery
 * made to release a dead owner's rows fails it at once ("released, never
 * asked"). */
#include <criterion/criterion.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <sqlite3.h>

#include "../../mediator/mediator.h"
#include "unit.h"
#include "unit_policy.h"

TestSuite(meter, .fini = unit_leak_check, .timeout = 600);

static const char pol[] =
    "{\"version\": 1, \"network\": {\"mode\": \"mediated\", \"allow\": [{\"host\": \"m.test\", "
    "\"ports\": [8080], \"protocol\": \"http\", \"metered\": {\"budget\": \"b\", \"cap\": 10, "
    "\"charge\": {\"header\": \"X-Charge\"}, \"price\": 4}, \"grants\": ["
    "{\"methods\": [\"POST\"], \"path\": \"/c\", \"metered\": {\"price\": {\"field\": "
    "\"max_tokens\", \"per\": 2, \"base\": 1, \"max\": 100}}},"
    "{\"methods\": [\"GET\"], \"path\": \"/free\", \"metered\": {\"price\": 0}},"
    "{\"methods\": [\"POST\"], \"path\": \"/fixed\"}]},"
    "{\"host\": \"u.test\", \"ports\": [8080], \"protocol\": \"http\", \"metered\": "
    "{\"budget\": \"b\", \"cap\": 10, \"charge\": {\"field\": \"credits\"}}}]}}";

static int bound_of(const struct policy_net_rule *r, const char *req, bool eof, uint64_t *b)
{
	struct http_request rq;
	const char *why;
	int n = http_parse_request(req, strlen(req), &rq, &why);

	cr_assert_gt(n, 0, "%s", req);
	return meter_bound(policy_meter_price(r, mediator_grant_find(r, rq.method, rq.target)), &rq,
			   req, strlen(req), eof, b);
}

#define POST_C(body) "POST /c HTTP/1.1\r\nHost: m.test\r\nContent-Length: " #body "\r\n\r\n"

Test(meter, bounds_from_price_and_request)
{
	struct policy *p = unit_policy(pol);
	const struct policy_net_rule *r = &p->net_allow[0];
	uint64_t b = 0;
	char req[512];

	cr_assert_eq(bound_of(r, "POST /fixed HTTP/1.1\r\nHost: m.test\r\n\r\n", false, &b), 0);
	cr_assert_eq(b, 4, "the rule's price for a grant without one");
	cr_assert_eq(bound_of(r, "GET /free HTTP/1.1\r\nHost: m.test\r\n\r\n", false, &b), 0);
	cr_assert_eq(b, 0, "a declared price of 0");
#define BODY(s)                                                                                   \
	(snprintf(req, sizeof(req),                                                               \
		  "POST /c HTTP/1.1\r\nHost: m.test\r\nContent-Length: %zu\r\n\r\n%s", strlen(s), \
		  s),                                                                             \
	 req)
	cr_assert_eq(bound_of(r, BODY("{\"max_tokens\": 10, \"x\": [1]}"), false, &b), 0);
	cr_assert_eq(b, 21, "base 1 + 2 x 10");
	cr_assert_eq(bound_of(r, BODY("{\"max_tokens\": 100}"), false, &b), 0);
	cr_assert_eq(b, 201);
	/* No defensible bound: refused by the caller (unpriced). */
	cr_assert_eq(bound_of(r, BODY("{\"max_tokens\": 101}"), false, &b), -EINVAL, "above max");
	cr_assert_eq(bound_of(r, BODY("{\"max_tokens\": 1.5}"), false, &b), -EINVAL);
	cr_assert_eq(bound_of(r, BODY("{\"max_tokens\": -1}"), false, &b), -EINVAL);
	cr_assert_eq(bound_of(r, BODY("{\"max_tokens\": \"9\"}"), false, &b), -EINVAL);
	cr_assert_eq(bound_of(r, BODY("{\"tokens\": 9}"), false, &b), -EINVAL, "absent");
	cr_assert_eq(bound_of(r, BODY("{\"max_tokens\": 1, \"max_tokens\": 100}"), false, &b),
		     -EINVAL, "given twice: the receiver may read the other one");
	cr_assert_eq(bound_of(r, BODY("[1]"), false, &b), -EINVAL);
	cr_assert_eq(bound_of(r, BODY("{\"max_tokens\": 1"), false, &b), -EINVAL);
	cr_assert_eq(bound_of(r,
			      "POST /c HTTP/1.1\r\nHost: m.test\r\nTransfer-Encoding: "
			      "chunked\r\n\r\n",
			      false, &b),
		     -EINVAL, "chunked: not read");
	cr_assert_eq(bound_of(r, "POST /c HTTP/1.1\r\nHost: m.test\r\n\r\n", false, &b), -EINVAL,
		     "no body");
	/* The body still to come. */
	cr_assert_eq(bound_of(r, POST_C(20) "{\"max_tokens\"", false, &b), 1);
	cr_assert_eq(bound_of(r, POST_C(20) "{\"max_tokens\"", true, &b), -EINVAL);
	/* The unpriced rule. */
	cr_assert_eq(
	    bound_of(&p->net_allow[1], "GET / HTTP/1.1\r\nHost: u.test\r\n\r\n", false, &b),
	    -ENOENT);
	policy_free(p);
}

static int charge_of(const struct policy_net_meter *m, const char *resp, bool eof, uint64_t *c)
{
	return meter_charge(m, resp, strlen(resp), eof, false, c);
}

Test(meter, charges_stated_by_the_response)
{
	struct policy *p = unit_policy(pol);
	const struct policy_net_meter *h = p->net_allow[0].meter, *f = p->net_allow[1].meter;
	uint64_t c = 99;

	cr_assert_eq(charge_of(h, "HTTP/1.1 200 OK\r\nx-charge: 3\r\n\r\n", false, &c), 0);
	cr_assert_eq(c, 3);
	cr_assert_eq(charge_of(h, "HTTP/1.1 500 E\r\nX-Charge:  0 \r\nA: b\r\n\r\nbody", false, &c),
		     0);
	cr_assert_eq(c, 0);
	cr_assert_eq(charge_of(h, "HTTP/1.1 200 OK\r\nX-Charge: 3", false, &c), 1, "more head");
	cr_assert_eq(charge_of(h, "HTTP/1.1 200 OK\r\nX-Charge: 3", true, &c), -ENOENT);
	cr_assert_eq(charge_of(h, "HTTP/1.1 200 OK\r\n\r\n", false, &c), -ENOENT, "none stated");
	cr_assert_eq(charge_of(h, "HTTP/1.1 200 OK\r\nX-Charge: 3x\r\n\r\n", false, &c), -ENOENT);
	cr_assert_eq(charge_of(h, "HTTP/1.1 200 OK\r\nX-Charge: -3\r\n\r\n", false, &c), -ENOENT);
	cr_assert_eq(
	    charge_of(h, "HTTP/1.1 200 OK\r\nX-Charge: 1\r\nX-Charge: 9\r\n\r\n", false, &c),
	    -ENOENT, "stated twice");
	cr_assert_eq(
	    charge_of(h, "HTTP/1.1 200 OK\r\nX-Charge: 99999999999999999999\r\n\r\n", false, &c),
	    -ENOENT);
	cr_assert_eq(charge_of(h, "HTTP/1.1 200 OK\nX-Charge: 1\r\n\r\n", false, &c), -ENOENT);
	/* A JSON member of the body. */
	cr_assert_eq(charge_of(f, "HTTP/1.1 200 OK\r\nContent-Length: 14\r\n\r\n{\"credits\": 7}",
			       false, &c),
		     0);
	cr_assert_eq(c, 7);
	cr_assert_eq(
	    charge_of(f, "HTTP/1.1 200 OK\r\nContent-Length: 14\r\n\r\n{\"cred", false, &c), 1);
	cr_assert_eq(charge_of(f, "HTTP/1.1 200 OK\r\n\r\n{\"credits\": 2}", false, &c), 1,
		     "no length: until the end");
	cr_assert_eq(charge_of(f, "HTTP/1.1 200 OK\r\n\r\n{\"credits\": 2}", true, &c), 0);
	cr_assert_eq(c, 2);
	cr_assert_eq(charge_of(f, "HTTP/1.1 200 OK\r\n\r\n{\"credit\": 2}", true, &c), -ENOENT);
	policy_free(p);
}

Test(meter, the_key_is_the_same_in_every_session)
{
	const char *a = "POST /c HTTP/1.1\r\nHost: m.test\r\nIdempotency-Key: op-1\r\n\r\n";
	const char *b = "POST /c HTTP/1.1\r\nHost: m.test\r\nidempotency-key: op-2\r\n\r\n";
	const char *none = "POST /c HTTP/1.1\r\nHost: m.test\r\n\r\n";
	struct http_request rq;
	char k1[65], k2[65], k3[65];
	const char *why;

	cr_assert_gt(http_parse_request(a, strlen(a), &rq, &why), 0);
	cr_assert_eq(meter_op_key(&rq, a, "b", "m.test", 8080, k1), 0);
	cr_assert_eq(meter_op_key(&rq, a, "b", "m.test", 8080, k2), 0);
	cr_assert_str_eq(k1, k2);
	cr_assert_eq(meter_op_key(&rq, a, "c", "m.test", 8080, k3), 0);
	cr_assert_str_neq(k1, k3, "another budget");
	cr_assert_gt(http_parse_request(b, strlen(b), &rq, &why), 0);
	cr_assert_eq(meter_op_key(&rq, b, "b", "m.test", 8080, k3), 0);
	cr_assert_str_neq(k1, k3);
	cr_assert_gt(http_parse_request(none, strlen(none), &rq, &why), 0);
	cr_assert_eq(meter_op_key(&rq, none, "b", "m.test", 8080, k3), -ENOENT);
}

/* ------------------------------------------------------------ the ledger */

static char *tmpdir(void)
{
	char *d = strdup("/tmp/paddock-ledger.XXXXXX");

	cr_assert_not_null(mkdtemp(d));
	return d;
}

static void rmdir_all(char *d)
{
	char cmd[128];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", d);
	cr_assert_eq(system(cmd), 0);
	free(d);
}

static struct ledger *open_l(const char *dir)
{
	struct ledger *l = NULL;
	struct err err = {0};

	cr_assert_eq(ledger_open(dir, "b", 5000, &l, &err), 0, "%s", err.msg);
	return l;
}

static int reserve(struct ledger *l, const char *key, uint64_t bound, bool weak, int64_t *id)
{
	struct ledger_request rq = {.budget = "b",
				    .cap = 10,
				    .op_key = key,
				    .session = "s1",
				    .route = "POST m.test:8080/c",
				    .bound = bound,
				    .check_then_charge = weak};
	struct err err = {0};
	int r = ledger_reserve(l, &rq, id, &err);

	cr_assert_geq(r, 0, "%s", err.msg);
	return r;
}

Test(meter, ledger_reserve_settle_unknown_release)
{
	char *dir = tmpdir();
	struct ledger *l = open_l(dir);
	struct ledger_totals t;
	struct err err = {0};
	struct stat st;
	int64_t a, b, c, d;
	char path[256];

	snprintf(path, sizeof(path), "%s/b.sqlite", dir);
	cr_assert_eq(stat(path, &st), 0);
	cr_assert_eq(st.st_mode & 0777, 0600);
	cr_assert_eq(reserve(l, NULL, 4, false, &a), LEDGER_OK);
	cr_assert_eq(reserve(l, "k1", 4, false, &b), LEDGER_OK);
	cr_assert_eq(reserve(l, NULL, 4, false, &c), LEDGER_CAP, "8 + 4 > 10");
	cr_assert_eq(reserve(l, "k1", 1, false, &c), LEDGER_IN_FLIGHT, "k1 is reserved");
	cr_assert_eq(ledger_settle(l, a, 1, "receiver", &err), 0);
	cr_assert_eq(ledger_settle(l, a, 1, "receiver", &err), -ENOENT, "resolves once");
	cr_assert_eq(ledger_unknown(l, b, &err), 0);
	cr_assert_eq(reserve(l, "k1", 1, false, &c), LEDGER_UNKNOWN, "never sent again");
	cr_assert_eq(reserve(l, NULL, 5, false, &c), LEDGER_OK, "1 + 4 + 5 = 10");
	cr_assert_eq(reserve(l, NULL, 1, false, &d), LEDGER_CAP);
	cr_assert_eq(ledger_release(l, c, "not-sent", &err), 0);
	cr_assert_eq(ledger_totals(l, &t, &err), 0);
	cr_assert_eq(t.settled, 1);
	cr_assert_eq(t.unknown, 4);
	cr_assert_eq(t.reserved, 0);
	cr_assert_eq(t.cap, 10);
	cr_assert_eq(ledger_operator_settle(l, a, 3, &err), -ENOENT, "only unknown ones");
	cr_assert_eq(ledger_operator_settle(l, b, 4, &err), 0);
	cr_assert_eq(reserve(l, "k1", 1, false, &d), LEDGER_OK, "settled: a new attempt");
	cr_assert_eq(ledger_check(l, &err), 0);
	ledger_close(l);
	rmdir_all(dir);
}

/* Receiver lookups (docs/budget.md, "Lookup"): a receipt settles an
 * unknown row at the receiver's charge (or its bound) and every later
 * replay of the key is sent to the lookup, never dispatched; "not found"
 * reserves the same row again (a larger bound only if it fits); a row
 * ended once is not ended again by a second lookup. */
Test(meter, ledger_lookup_settles_and_claims)
{
	char *dir = tmpdir();
	struct ledger *l = open_l(dir);
	struct ledger_request rq = {
	    .budget = "b", .cap = 10, .op_key = "k2", .session = "s2", .route = "r", .bound = 4};
	struct ledger_totals t;
	struct err err = {0};
	int64_t a, b, c, id = 0;
	uint64_t bound = 0;

	cr_assert_eq(reserve(l, "k1", 4, false, &a), LEDGER_OK);
	cr_assert_eq(ledger_unknown(l, a, &err), 0);
	cr_assert_eq(reserve(l, "k1", 4, false, &id), LEDGER_UNKNOWN);
	cr_assert_eq(id, a, "the unknown row, for the lookup");
	cr_assert_eq(ledger_lookup_settle(l, a, true, 3, &err), LEDGER_OK, "%s", err.msg);
	cr_assert_eq(ledger_lookup_settle(l, a, true, 3, &err), -ENOENT, "once");
	cr_assert_eq(reserve(l, "k1", 4, false, &id), LEDGER_RECEIPT, "answered by the receipt");
	cr_assert_eq(id, a);
	/* Not found: the same row, reserved again, for the replay. */
	cr_assert_eq(reserve(l, "k2", 2, false, &b), LEDGER_OK);
	cr_assert_eq(ledger_unknown(l, b, &err), 0);
	rq.cap = 6;
	cr_assert_eq(ledger_lookup_claim(l, b, &rq, &bound, &err), LEDGER_CAP,
		     "3 settled + 2 unknown held: 2 more does not fit a cap of 6");
	rq.bound = 2;
	cr_assert_eq(ledger_lookup_claim(l, b, &rq, &bound, &err), LEDGER_OK, "%s", err.msg);
	cr_assert_eq(bound, 2);
	cr_assert_eq(ledger_lookup_claim(l, b, &rq, &bound, &err), -ENOENT, "claimed once");
	cr_assert_eq(reserve(l, "k2", 2, false, &c), LEDGER_IN_FLIGHT, "the replay holds it");
	cr_assert_eq(ledger_settle(l, b, 2, "receiver", &err), 0);
	/* A receipt stating no charge: the bound. */
	cr_assert_eq(reserve(l, "k3", 5, false, &c), LEDGER_OK);
	cr_assert_eq(ledger_unknown(l, c, &err), 0);
	cr_assert_eq(ledger_lookup_settle(l, c, false, 0, &err), LEDGER_OK);
	cr_assert_eq(ledger_totals(l, &t, &err), 0);
	cr_assert_eq(t.settled, 3 + 2 + 5);
	cr_assert_eq(t.unknown + t.reserved, 0);
	cr_assert_eq(ledger_check(l, &err), 0, "%s", err.msg);
	ledger_close(l);
	rmdir_all(dir);
}

/* The lookup's request and verdict (mediator/lookup.c): the key is
 * percent-encoded into one path whatever its bytes; 2xx is a receipt with
 * its charge, 404/410 not found, anything else (or a short or truncated
 * answer) a failed lookup. */
/* A remote job's row (`paddock budget jobs`): noted at its lease with
 * what its status needs, its session's word at its end; listed with its
 * op; settled from unknown only, once, at the stated charge or its bound. */
static void job_seen(const struct ledger_op *op, const struct ledger_job *jb, bool alive, void *arg)
{
	char *out = arg;

	snprintf(out + strlen(out), 256 - strlen(out), "%lld %s %llu %s %s %s:%u %s %s %d %s %d;",
		 (long long)op->id, op->state, (unsigned long long)op->bound, jb->job,
		 jb->admission, jb->host, jb->port, jb->address, jb->status, jb->outlive,
		 jb->session_end, alive);
}

Test(meter, ledger_jobs_are_noted_and_settled_once)
{
	char *dir = tmpdir();
	struct ledger *l = open_l(dir);
	struct ledger_totals t;
	struct err err = {0};
	struct ledger_job jb = {.job = "j1",
				.admission = "s-1-2",
				.host = "jobs.test",
				.port = 8080,
				.address = "127.0.0.1",
				.status = "GET /v1/jobs/{id}",
				.outlive = true};
	char seen[256] = "";
	int64_t a, b;

	cr_assert_eq(reserve(l, NULL, 4, false, &a), LEDGER_OK);
	cr_assert_eq(reserve(l, NULL, 5, false, &b), LEDGER_OK);
	cr_assert_eq(ledger_job_note(l, a, &jb, &err), 0, "%s", err.msg);
	jb.job = "j2";
	cr_assert_eq(ledger_job_note(l, b, &jb, &err), 0, "%s", err.msg);
	cr_assert_eq(ledger_job_end(l, a, "retained", &err), 0, "%s", err.msg);
	cr_assert_eq(ledger_job_end(l, 99, "retained", &err), -ENOENT);
	cr_assert_eq(ledger_each_job(l, job_seen, seen, &err), 0);
	cr_assert_str_eq(seen, "1 reserved 4 j1 s-1-2 jobs.test:8080 127.0.0.1 GET /v1/jobs/{id} 1 "
			       "retained 1;2 reserved 5 j2 s-1-2 jobs.test:8080 127.0.0.1 GET "
			       "/v1/jobs/{id} 1  1;");
	cr_assert_eq(ledger_job_settle(l, a, true, 3, &err), -ENOENT, "only an unknown row");
	cr_assert_eq(ledger_unknown(l, a, &err), 0);
	cr_assert_eq(ledger_unknown(l, b, &err), 0);
	cr_assert_eq(ledger_job_settle(l, a, true, 3, &err), 0, "%s", err.msg);
	cr_assert_eq(ledger_job_settle(l, a, true, 1, &err), -ENOENT, "once");
	cr_assert_eq(ledger_job_settle(l, b, false, 0, &err), 0, "%s", err.msg);
	cr_assert_eq(ledger_totals(l, &t, &err), 0);
	cr_assert_eq(t.settled, 3 + 5, "b stated none: its bound");
	cr_assert_eq(t.unknown, 0);
	cr_assert_eq(ledger_check(l, &err), 0, "%s", err.msg);
	ledger_close(l);
	rmdir_all(dir);
}

Test(meter, lookup_request_and_verdict)
{
	struct policy *p = unit_policy(pol);
	struct policy_net_meter mt = *p->net_allow[0].meter;
	struct policy_net_lookup lk = {.prefix = "/r/", .suffix = "?full=1", .timeout_ms = 1000};
	char out[1024];
	unsigned st;
	bool stated;
	uint64_t c = 0;
	int n;

	n = lookup_request(&lk, "m.test", 8080, "a b/\r\n?#%\0", 10, "adm-1", out, sizeof(out));
	cr_assert_gt(n, 0);
	cr_assert(strncmp(out, "GET /r/a%20b%2F%0D%0A%3F%23%25%00?full=1 HTTP/1.1\r\n", 49) == 0,
		  "%s", out);
	cr_assert(strstr(out, "Host: m.test:8080\r\n") &&
		  strstr(out, "Paddock-Admission: adm-1\r\n"));
	cr_assert_eq(lookup_request(&lk, "m.test", 8080, "k", 0, "", out, sizeof(out)), -EINVAL);
	cr_assert_eq(lookup_request(&lk, "m.test", 8080, "k1", 2, "", out, 20), -ENOSPC);
#define R(s) s, sizeof(s) - 1
	cr_assert_eq(lookup_verdict(&mt, R("HTTP/1.1 200 OK\r\nX-Charge: 3\r\n\r\n"), false, &st,
				    &stated, &c),
		     LOOKUP_FOUND);
	cr_assert(stated && c == 3 && st == 200);
	cr_assert_eq(lookup_verdict(&mt, R("HTTP/1.1 201 OK\r\n\r\n"), false, &st, &stated, &c),
		     LOOKUP_FOUND);
	cr_assert(!stated, "no charge stated: the bound");
	cr_assert_eq(lookup_verdict(&mt, R("HTTP/1.1 404 No\r\n\r\n"), false, &st, &stated, &c),
		     LOOKUP_NOT_FOUND);
	cr_assert_eq(lookup_verdict(&mt, R("HTTP/1.1 410 Gone\r\n\r\n"), false, &st, &stated, &c),
		     LOOKUP_NOT_FOUND);
	cr_assert_eq(lookup_verdict(&mt, R("HTTP/1.1 503 Busy\r\n\r\n"), false, &st, &stated, &c),
		     LOOKUP_FAILED);
	cr_assert_eq(lookup_verdict(&mt, R("HTTP/1.1 200"), false, &st, &stated, &c), LOOKUP_FAILED,
		     "cut short");
	cr_assert_eq(lookup_verdict(&mt, R("HTTP/1.1 200 OK\r\n\r\n"), true, &st, &stated, &c),
		     LOOKUP_FAILED, "filled the buffer: not whole");
	cr_assert_eq(lookup_verdict(&mt, R(""), false, &st, &stated, &c), LOOKUP_FAILED);
#undef R
	policy_free(p);
}

/* The ledger's own invariant: the totals a reservation reads are the sums
 * of the rows; a ledger whose totals were changed behind its back fails
 * ledger_check() (the twin: the check sees a drift). */
Test(meter, ledger_check_sees_totals_that_drifted)
{
	char *dir = tmpdir();
	struct ledger *l = open_l(dir);
	struct err err = {0};
	char path[256];
	sqlite3 *db = NULL;
	int64_t a;

	cr_assert_eq(reserve(l, "k1", 4, false, &a), LEDGER_OK);
	cr_assert_eq(ledger_settle(l, a, 3, "receiver", &err), 0);
	cr_assert_eq(ledger_check(l, &err), 0, "%s", err.msg);
	snprintf(path, sizeof(path), "%s/b.sqlite", dir);
	cr_assert_eq(sqlite3_open(path, &db), SQLITE_OK);
	cr_assert_eq(sqlite3_exec(db, "UPDATE totals SET settled = settled - 1", NULL, NULL, NULL),
		     SQLITE_OK);
	sqlite3_close(db);
	cr_assert_eq(ledger_check(l, &err), -EIO);
	cr_assert(strstr(err.msg, "totals"), "%s", err.msg);
	ledger_close(l);
	rmdir_all(dir);
}

Test(meter, ledger_files_must_be_ours_and_private)
{
	char *dir = tmpdir();
	struct ledger *l = NULL;
	struct err err = {0};
	char path[256], other[256];

	snprintf(path, sizeof(path), "%s/b.sqlite", dir);
	snprintf(other, sizeof(other), "%s/elsewhere", dir);
	cr_assert_eq(close(open(path, O_CREAT | O_WRONLY, 0644)), 0);
	chmod(path, 0644);
	cr_assert_eq(ledger_open(dir, "b", 100, &l, &err), -EPERM);
	cr_assert(strstr(err.msg, "mode 0600"), "%s", err.msg);
	unlink(path);
	cr_assert_eq(close(open(other, O_CREAT | O_WRONLY, 0600)), 0);
	cr_assert_eq(symlink(other, path), 0);
	cr_assert_lt(ledger_open(dir, "b", 100, &l, &err), 0, "a symlink is not followed");
	unlink(path);
	chmod(dir, 0777);
	cr_assert_eq(ledger_open(dir, "b", 100, &l, &err), -EPERM, "a directory others write");
	chmod(dir, 0700);
	cr_assert_eq(ledger_open(dir, "../b", 100, &l, &err), -EINVAL);
	/* Garbage where the ledger should be: unavailable, never a fresh one. */
	{
		int fd = open(path, O_CREAT | O_WRONLY, 0600);

		cr_assert_eq(write(fd, "not a database, not at all, no\n", 32), 32);
		for (int i = 0; i < 200; i++)
			(void)!write(fd, "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx", 32);
		close(fd);
	}
	cr_assert_lt(ledger_open(dir, "b", 100, &l, &err), 0);
	rmdir_all(dir);
}

/* A process that reserves and dies (SIGKILL) before it ends its row: the
 * bound stays held, as unknown after recovery; nothing is released. */
Test(meter, a_crash_keeps_the_reservation_as_unknown)
{
	char *dir = tmpdir();
	struct ledger *l;
	struct ledger_totals t;
	struct err err = {0};
	unsigned n = 0;
	int st, p[2];
	pid_t pid;

	cr_assert_eq(pipe(p), 0);
	pid = fork();
	if (pid == 0) {
		struct ledger *cl = NULL;
		int64_t id;
		struct ledger_request rq = {
		    .budget = "b", .cap = 10, .session = "s", .route = "r", .bound = 6};

		if (ledger_open(dir, "b", 5000, &cl, &err) < 0 ||
		    ledger_reserve(cl, &rq, &id, &err) != LEDGER_OK)
			_exit(1);
		(void)!write(p[1], "r", 1);
		pause();
		_exit(0);
	}
	{
		char c;

		cr_assert_eq(read(p[0], &c, 1), 1);
	}
	l = open_l(dir);
	st = ledger_recover(l, &n, &err);
	if (st < 0 || n != 0)
		kill(pid, SIGKILL); /* no child left behind when this fails */
	cr_assert_eq(st, 0);
	cr_assert_eq(n, 0, "its owner is alive: not touched");
	kill(pid, SIGKILL);
	waitpid(pid, &st, 0);
	cr_assert_eq(ledger_recover(l, &n, &err), 0);
	cr_assert_eq(n, 1);
	cr_assert_eq(ledger_totals(l, &t, &err), 0);
	cr_assert_eq(t.unknown, 6, "held as unknown");
	cr_assert_eq(t.reserved, 0);
	{
		int64_t id;

		cr_assert_eq(reserve(l, NULL, 5, false, &id), LEDGER_CAP, "6 + 5 > 10");
	}
	cr_assert_eq(ledger_check(l, &err), 0);
	ledger_close(l);
	close(p[0]);
	close(p[1]);
	rmdir_all(dir);
}

/* ------------------------------------------- the concurrency property */

#define KEYS	8
#define OPS_MAX 4096

/* The provider's own ledger, shared by every process of a trial. */
struct provider {
	atomic_ullong charged;	      /* what it billed in all */
	atomic_int in_flight[KEYS];   /* per idempotency key, now */
	atomic_int twice;	      /* a key dispatched while in flight */
	atomic_ullong by_id[OPS_MAX]; /* its charge per ledger row, + 1 */
	atomic_int barrier;
};

struct trial {
	const char *dir;
	uint64_t cap;
	int callers; /* per process */
	unsigned seed;
	bool weak;
	bool lockstep; /* every caller reserves, then all dispatch */
	int total_callers;
	struct provider *pv;
};

struct caller {
	struct trial *t;
	unsigned seed;
};

static void *call(void *arg)
{
	struct caller *c = arg;
	struct trial *t = c->t;
	struct ledger *l = NULL;
	struct err err = {0};
	unsigned s = c->seed;
	int ops = t->lockstep ? 1 : 1 + (int)(rand_r(&s) % 3);

	if (ledger_open(t->dir, "b", 10000, &l, &err) < 0)
		return (void *)1;
	for (int i = 0; i < ops; i++) {
		/* A retry or a fallback: a new attempt reserving its own bound. */
		int key = t->lockstep ? KEYS : (int)(rand_r(&s) % (KEYS + 4));
		char kt[16];
		uint64_t bound = t->lockstep ? 4 : 1 + rand_r(&s) % 6;
		struct ledger_request rq = {.budget = "b",
					    .cap = t->cap,
					    .op_key = key < KEYS ? kt : NULL,
					    .session = "s",
					    .route = "r",
					    .bound = bound,
					    .check_then_charge = t->weak};
		int64_t id = 0;
		int r, fate = t->lockstep ? 2 : (int)(rand_r(&s) % 20);
		uint64_t charge;

		snprintf(kt, sizeof(kt), "k%d", key);
		r = ledger_reserve(l, &rq, &id, &err);
		if (t->lockstep) {
			atomic_fetch_add(&t->pv->barrier, 1);
			while (atomic_load(&t->pv->barrier) < t->total_callers)
				usleep(100);
		}
		if (r < 0) {
			ledger_close(l);
			return (void *)2;
		}
		if (r != LEDGER_OK)
			continue; /* refused before anything left */
		if (fate == 0) {
			/* Never sent (the dial failed). */
			(void)ledger_release(l, id, "not-sent", &err);
			continue;
		}
		/* Dispatched: the provider bills at most the bound. */
		if (key < KEYS && atomic_fetch_add(&t->pv->in_flight[key], 1) != 0)
			atomic_fetch_add(&t->pv->twice, 1);
		charge = t->lockstep ? 4 : rand_r(&s) % (bound + 1);
		if (fate == 1 && rand_r(&s) % 2)
			charge = 0; /* a timeout the provider never saw */
		atomic_fetch_add(&t->pv->charged, charge);
		if (id > 0 && id < OPS_MAX)
			atomic_store(&t->pv->by_id[id], charge + 1);
		if (t->lockstep || rand_r(&s) % 4 == 0)
			usleep(1000);
		if (key < KEYS)
			atomic_fetch_sub(&t->pv->in_flight[key], 1);
		if (fate == 1) {
			/* A timeout: unknown, the bound kept. */
			(void)ledger_unknown(l, id, &err);
		} else {
			(void)ledger_settle(l, id, charge, "receiver", &err);
		}
	}
	ledger_close(l);
	return NULL;
}

static void process(struct trial *t, int index)
{
	pthread_t th[32];
	struct caller cs[32];
	int bad = 0;

	for (int i = 0; i < t->callers; i++) {
		cs[i] = (struct caller){t, t->seed * 7919u + (unsigned)index * 131u + (unsigned)i};
		if (pthread_create(&th[i], NULL, call, &cs[i]) != 0)
			_exit(3);
	}
	for (int i = 0; i < t->callers; i++) {
		void *rv;

		pthread_join(th[i], &rv);
		bad |= rv != NULL;
	}
	_exit(bad);
}

struct settled_sum {
	uint64_t sum;
	struct provider *pv;
	struct ledger *l;
};

static void collect(const struct ledger_op *op, void *arg)
{
	struct settled_sum *s = arg;

	if (op->has_charge)
		s->sum += op->charge;
}

/* One trial: procs processes of t->callers threads each; then the
 * operator settles every unknown row from the provider's records. */
static void trial(struct trial *t, int procs, uint64_t *charged, uint64_t *ledger_sum, int *twice)
{
	struct provider *pv =
	    mmap(NULL, sizeof(*pv), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	struct ledger *l;
	struct err err = {0};
	struct settled_sum ss = {0};
	pid_t pids[4];
	int64_t ids[OPS_MAX];
	size_t n_ids = 0;

	cr_assert_neq(pv, MAP_FAILED);
	memset(pv, 0, sizeof(*pv));
	t->pv = pv;
	t->total_callers = procs * t->callers;
	l = open_l(t->dir); /* makes the schema before the callers race */
	for (int i = 0; i < procs; i++) {
		pids[i] = fork();
		if (pids[i] == 0)
			process(t, i);
	}
	for (int i = 0; i < procs; i++) {
		int st;

		waitpid(pids[i], &st, 0);
		cr_assert(WIFEXITED(st) && WEXITSTATUS(st) == 0, "a caller failed (status %d)", st);
	}
	for (int64_t id = 1; id < OPS_MAX; id++)
		if (atomic_load(&pv->by_id[id]))
			ids[n_ids++] = id;
	for (size_t i = 0; i < n_ids; i++)
		(void)ledger_operator_settle(l, ids[i], atomic_load(&pv->by_id[ids[i]]) - 1, &err);
	ss.l = l;
	cr_assert_eq(ledger_each(l, collect, &ss, &err), 0);
	cr_assert_eq(ledger_check(l, &err), 0, "%s", err.msg);
	*charged = atomic_load(&pv->charged);
	*ledger_sum = ss.sum;
	*twice = atomic_load(&pv->twice);
	ledger_close(l);
	munmap(pv, sizeof(*pv));
}

static int trials(void)
{
	const char *s = getenv("PADDOCK_BUDGET_TRIALS");
	int n = s ? atoi(s) : 30;

	return n > 0 ? n : 30;
}

Test(meter, concurrent_callers_never_overspend_the_cap)
{
	unsigned seed = (unsigned)getpid();
	int n = trials(), worst_over = 0;

	for (int i = 0; i < n; i++) {
		char *dir = tmpdir();
		unsigned s = seed + (unsigned)i;
		int procs = 2 + (int)(rand_r(&s) % 3), per = 1 + (int)(rand_r(&s) % 8);
		struct trial t = {
		    .dir = dir, .cap = 5 + rand_r(&s) % 20, .callers = per, .seed = s};
		uint64_t charged, sum;
		int twice;

		trial(&t, procs, &charged, &sum, &twice);
		cr_assert_leq(charged, t.cap,
			      "trial %d (seed %u, %d processes x %d callers): the provider billed "
			      "%llu against a cap of %llu",
			      i, s, procs, per, (unsigned long long)charged,
			      (unsigned long long)t.cap);
		cr_assert_eq(twice, 0, "trial %d: a key was dispatched while in flight", i);
		cr_assert_eq(sum, charged,
			     "trial %d: the ledger (%llu) is not the provider's ledger (%llu)", i,
			     (unsigned long long)sum, (unsigned long long)charged);
		worst_over += charged > t.cap;
		rmdir_all(dir);
	}
	cr_assert_eq(worst_over, 0);
}

/* HB-13 in small: 8 callers in 2 processes, cap 10, 4 credits each, every
 * caller admitted before any is charged. Reserved: 2 go (8 credits). */
static uint64_t lockstep(bool weak)
{
	char *dir = tmpdir();
	struct trial t = {
	    .dir = dir, .cap = 10, .callers = 4, .seed = 1, .weak = weak, .lockstep = true};
	uint64_t charged, sum;
	int twice;

	trial(&t, 2, &charged, &sum, &twice);
	rmdir_all(dir);
	return charged;
}

Test(meter, concurrent_lockstep_holds_the_cap)
{
	uint64_t c = lockstep(false);

	cr_assert_leq(c, 10, "billed %llu", (unsigned long long)c);
	cr_assert_eq(c, 8, "two of the eight fit: billed %llu", (unsigned long long)c);
}

Test(meter, concurrent_weakened_twin_check_then_charge_overspends)
{
	uint64_t c = lockstep(true);

	cr_assert_gt(c, 10, "check-then-charge billed %llu: the twin must overspend",
		     (unsigned long long)c);
}

/* ------------------------------------------------------------ crashes */

#define CRASH_IDS 4096

/* What a crashing gateway told the outside before it died: each row id it
 * got back from a reservation, and how it ended the rows it ended. */
struct crash_book {
	atomic_int got[CRASH_IDS];   /* 1: reserved (committed, id known) */
	atomic_int ended[CRASH_IDS]; /* 1 settled, 2 unknown, 3 released (asked; maybe not done) */
	atomic_ullong charge[CRASH_IDS];
};

static _Noreturn void gateway(const char *dir, struct crash_book *b, unsigned seed)
{
	struct ledger *l = NULL;
	struct err err = {0};
	unsigned s = seed;

	if (ledger_open(dir, "b", 10000, &l, &err) < 0)
		_exit(1);
	for (;;) {
		struct ledger_request rq = {.budget = "b",
					    .cap = 40,
					    .session = "s",
					    .route = "r",
					    .bound = 1 + rand_r(&s) % 5};
		int64_t id;
		int fate = (int)(rand_r(&s) % 10);

		if (ledger_reserve(l, &rq, &id, &err) != LEDGER_OK || id <= 0 || id >= CRASH_IDS) {
			/* The cap is full: the operator would settle; start over. */
			usleep(100);
			continue;
		}
		atomic_store(&b->got[id], 1);
		if (fate < 6) {
			uint64_t c = rand_r(&s) % (rq.bound + 1);

			atomic_store(&b->charge[id], c);
			atomic_store(&b->ended[id], 1);
			(void)ledger_settle(l, id, c, "receiver", &err);
		} else if (fate < 8) {
			atomic_store(&b->ended[id], 2);
			(void)ledger_unknown(l, id, &err);
		} else {
			atomic_store(&b->ended[id], 3);
			(void)ledger_release(l, id, "not-sent", &err);
		}
	}
}

struct crash_check {
	struct crash_book *b;
	uint64_t held;
	int bad;
	char why[160];
};

static void crash_row(const struct ledger_op *op, void *arg)
{
	struct crash_check *c = arg;
	int e = op->id > 0 && op->id < CRASH_IDS ? atomic_load(&c->b->ended[op->id]) : 0;

	if (!strcmp(op->state, "reserved") && !c->bad) {
		c->bad = 1;
		snprintf(c->why, sizeof(c->why), "row %lld still reserved after recovery",
			 (long long)op->id);
	}
	/* A row is never in a state its gateway did not ask for, but unknown
	 * (recovered: the gateway died before its end committed). */
	if (!strcmp(op->state, "settled") &&
	    (e != 1 || op->charge != atomic_load(&c->b->charge[op->id])) && !c->bad) {
		c->bad = 2;
		snprintf(c->why, sizeof(c->why), "row %lld settled at %llu, asked %d",
			 (long long)op->id, (unsigned long long)op->charge, e);
	}
	if (!strcmp(op->state, "released") && e != 3 && !c->bad) {
		c->bad = 3;
		snprintf(c->why, sizeof(c->why),
			 "row %lld released, never asked (a reservation lost)", (long long)op->id);
	}
	if (!strcmp(op->state, "reserved") || !strcmp(op->state, "unknown"))
		c->held += op->bound;
	else if (!strcmp(op->state, "settled"))
		c->held += op->charge;
}

static void crash_count(const struct ledger_op *op, void *arg)
{
	int64_t *max = arg;

	if (op->id > *max)
		*max = op->id;
}

/* The crash test, reduced: a gateway SIGKILLed at random moments
 * of reserving and settling (PADDOCK_BUDGET_CRASHES times, default 20;
 * the 200 with PADDOCK_BUDGET_CRASHES=200), beside a second one
 * sharing the ledger and killed too every other round. After each crash
 * the ledger passes PRAGMA integrity_check; recovery leaves nothing
 * reserved; no row is released or settled that its gateway did not ask
 * for (no reservation lost, no charge counted twice or changed); every
 * reservation the gateway was told of is still there; the budget never
 * holds more than its cap. */
Test(meter, crashes_lose_no_reservation)
{
	const char *env = getenv("PADDOCK_BUDGET_CRASHES");
	int rounds = env && atoi(env) > 0 ? atoi(env) : 20;
	char *dir = tmpdir();
	struct crash_book *b =
	    mmap(NULL, sizeof(*b), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	unsigned seed = (unsigned)getpid();
	struct ledger *l;
	struct err err = {0};

	cr_assert_neq(b, MAP_FAILED);
	memset(b, 0, sizeof(*b));
	l = open_l(dir);
	for (int i = 0; i < rounds; i++) {
		pid_t g = fork(), g2 = -1;
		struct crash_check c = {.b = b};
		unsigned n = 0;
		int64_t max = 0;
		int st;

		if (g == 0)
			gateway(dir, b, seed + (unsigned)i);
		if (i % 2 && (g2 = fork()) == 0)
			gateway(dir, b, seed * 31 + (unsigned)i);
		usleep(2000 + rand_r(&seed) % 30000);
		kill(g, SIGKILL);
		waitpid(g, &st, 0);
		if (g2 > 0) {
			kill(g2, SIGKILL);
			waitpid(g2, &st, 0);
		}
		cr_assert_eq(ledger_check(l, &err), 0, "round %d: %s", i, err.msg);
		cr_assert_eq(ledger_recover(l, &n, &err), 0, "round %d: %s", i, err.msg);
		cr_assert_eq(ledger_each(l, crash_row, &c, &err), 0);
		cr_assert_eq(c.bad, 0, "round %d: %s", i, c.why);
		cr_assert_leq(c.held, 40, "round %d: the budget holds %llu of 40", i,
			      (unsigned long long)c.held);
		cr_assert_eq(ledger_each(l, crash_count, &max, &err), 0);
		for (int64_t id = 1; id < CRASH_IDS; id++)
			cr_assert(!atomic_load(&b->got[id]) || id <= max,
				  "round %d: reservation %lld the gateway was told of is gone", i,
				  (long long)id);
		/* The operator settles what is unknown, so the next round has
		 * room under the cap. */
		for (int64_t id = 1; id <= max && id < CRASH_IDS; id++)
			if (ledger_operator_settle(l, id, 0, &err) == 0) {
				atomic_store(&b->ended[id], 1);
				atomic_store(&b->charge[id], 0);
			}
	}
	ledger_close(l);
	munmap(b, sizeof(*b));
	rmdir_all(dir);
}
