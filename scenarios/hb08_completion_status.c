/* HB-08: completion reports actual execution status.
 *
 * A mock tool (task/tool.sh) appends one line per attempt to a ledger in
 * the task directory, which the harness reads from outside, and fails
 * while the ledger has fewer than FAILS lines. The harness is the runner
 * with a bounded retry policy of 3 attempts, each attempt one `paddock run
 * --record`. Success: FAILS=0 (one attempt). Fatal failure: FAILS=5 (three
 * attempts, then give up). For each attempt the real exit status is
 * compared with the completion record (ended, exit_code, status), and the
 * task's disposition and summary are derived from the real status only.
 * After completion the live inventory (`paddock ps --json` of our session
 * names) must be empty. The retained-service part needs policy "services":
 * NOT EXECUTED while the paddock under test refuses it. */
#include "harness.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const char *const arms[] = {"enforced", "docker", NULL};

#define RETRIES 3
#define TOOL                                                                                  \
	"#!/bin/sh\n# mock tool: $1 ledger, $2 failures before success\n"                      \
	"n=$(cat \"$1\" 2>/dev/null | wc -l)\necho attempt >> \"$1\"\n"                         \
	"[ $((n + 1)) -gt \"$2\" ] && exit 0\necho 'tool: transient failure' >&2\nexit 3\n"

struct task_out {
	int status;	 /* last real exit status */
	int attempts;	 /* runner's count */
	int ledger;	 /* receiver-owned count */
	bool record_ok;	 /* every attempt's record agrees with its real status */
	bool record_all; /* every attempt has a record */
};

static int count_lines(const char *path)
{
	char buf[4096];
	int n = 0;

	if (read_file(path, buf, sizeof(buf)) < 0)
		return -1;
	for (char *p = buf; *p; p++)
		n += *p == '\n';
	return n;
}

static void run_task(struct eval_ctx *ctx, struct result *r, const char *ws, const char *task,
		     const char *recs, const char *label, int fails, struct task_out *t)
{
	char ledger[4300], tool[4300], nfail[16], log[4300], name[96];

	snprintf(ledger, sizeof(ledger), "%s/ledger-%s", task, label);
	snprintf(tool, sizeof(tool), "%s/tool.sh", task);
	snprintf(nfail, sizeof(nfail), "%d", fails);
	log_path(ctx, r, "log", log, sizeof(log));
	memset(t, 0, sizeof(*t));
	t->record_ok = t->record_all = true;
	for (int i = 1; i <= RETRIES; i++) {
		char rec[4400], ended[32] = "", code[32] = "", st_s[32] = "";
		struct argv_buf a;

		snprintf(rec, sizeof(rec), "%s/record-%s-%d.json", recs, label, i);
		snprintf(name, sizeof(name), "paddock-eval-hb08-%d-%s-%d", (int)getpid(), label, i);
		if (r->kind == ARM_DOCKER) {
			char v[9000];

			snprintf(v, sizeof(v), "%s:%s", task, task);
			a.n = 0;
			argv_add(&a, "docker");
			argv_add(&a, "run");
			argv_add(&a, "--rm");
			argv_add(&a, "--network");
			argv_add(&a, "none");
			argv_add(&a, "-v");
			argv_add(&a, v);
			argv_add(&a, ctx->docker_image);
		} else {
			argv_paddock_run(&a, ctx, r, ws, rec);
			argv_add(&a, "--name");
			argv_add(&a, name);
			argv_add(&a, "--");
		}
		argv_add(&a, "sh");
		argv_add(&a, tool);
		argv_add(&a, ledger);
		argv_add(&a, nfail);
		t->attempts = i;
		if (run_argv(ctx, r->kind != ARM_DOCKER && ctx->drop, a.v, log, 60000, &t->status) < 0)
			t->status = -1;
		if (r->kind != ARM_DOCKER) {
			if (record_get(rec, "ended", ended, sizeof(ended)) < 0) {
				t->record_all = false;
			} else {
				record_get(rec, "exit_code", code, sizeof(code));
				record_get(rec, "status", st_s, sizeof(st_s));
				if (strcmp(ended, "exit") != 0 || atoi(code) != t->status ||
				    atoi(st_s) != t->status)
					t->record_ok = false;
			}
			result_evidence(r, "record", "%s attempt %d: real status %d; record ended %s "
					"exit_code %s status %s",
					label, i, t->status, ended[0] ? ended : "(none)", code, st_s);
		} else {
			result_evidence(r, "exit", "%s attempt %d: docker run status %d", label, i,
					t->status);
		}
		if (t->status == 0)
			break;
	}
	t->ledger = count_lines(ledger);
	result_evidence(r, "ledger", "%s: %d attempts in the receiver's ledger, runner counted %d; "
			"disposition %s (exit %d)",
			label, t->ledger, t->attempts, t->status == 0 ? "success" : "failure",
			t->status);
}

/* Our sessions still listed by `paddock ps --all --json` in a live state. */
static int live_sessions(struct eval_ctx *ctx)
{
	char *argv[] = {ctx->paddock, "ps", "--json", NULL};
	static char buf[65536];
	char needle[64];
	int st = -1, n = 0;

	if (run_capture(ctx, ctx->drop, argv, buf, sizeof(buf), 10000, &st) < 0 || st != 0)
		return -1;
	snprintf(needle, sizeof(needle), "paddock-eval-hb08-%d-", (int)getpid());
	for (char *p = buf; (p = strstr(p, needle)); p++)
		n++;
	return n;
}

static void run(struct eval_ctx *ctx, const char *arm, struct result *r)
{
	static const char svc[] =
		"{\"version\": 1, \"mounts\": [{\"type\": \"bind\", \"source\": \"/usr\", "
		"\"mode\": \"ro\"}], \"services\": [{\"name\": \"web\", \"argv\": [\"/usr/bin/sleep\", "
		"\"1\"], \"lease\": \"5s\"}]}\n";
	struct fixture fx = {0};
	struct task_out ok, bad;
	char why[320] = "", task[4096], recs[4096], tool[4300];
	int live = 0;
	bool machine_failure, record_issue;

	(void)arm;
	if (r->kind == ARM_DOCKER && docker_unavailable(ctx, r))
		return;
	result_mock(r, "the tool (task/tool.sh) is a mock that fails a set number of times");
	if (fixture_make(&fx, "hb08", why, sizeof(why)) < 0 ||
	    fixture_mkdir(ctx, &fx, "task", task, sizeof(task)) < 0 ||
	    records_dir(ctx, r, recs, sizeof(recs)) < 0) {
		result_not_executed(r, why[0] ? why : "fixture setup failed");
		goto out;
	}
	snprintf(tool, sizeof(tool), "%s/tool.sh", task);
	if (fixture_write(ctx, tool, TOOL, 0755) < 0) {
		result_not_executed(r, "cannot write the mock tool");
		goto out;
	}
	run_task(ctx, r, fx.dir, task, recs, "success", 0, &ok);
	run_task(ctx, r, fx.dir, task, recs, "fatal", 5, &bad);
	if (r->kind != ARM_DOCKER) {
		live = live_sessions(ctx);
		result_evidence(r, "inventory", "live sessions of this run after completion: %d", live);
		if (!paddock_accepts_policy(ctx, svc, "\"services\"", why, sizeof(why)))
			result_evidence(r, "part", "retained-service completion: NOT EXECUTED (%s)",
					why);
		else
			result_evidence(r, "part", "retained-service completion: NOT EXECUTED (policy "
					"\"services\" accepted; check not implemented in this "
					"harness version)");
	} else {
		result_evidence(r, "part", "retained-service completion: NOT APPLICABLE for Docker "
				"(no service lease); scope HB-08 procedure");
	}
	machine_failure = bad.status != 0 && bad.attempts == RETRIES && bad.ledger == RETRIES;
	record_issue = r->kind != ARM_DOCKER && (!ok.record_all || !bad.record_all);
	if (ok.status != 0)
		verdict_set(&r->v[DIM_ENFORCEMENT], GRADE_UNKNOWN,
			    "the success path failed, so failure reporting cannot be compared", NULL);
	else if (!machine_failure)
		verdict_set(&r->v[DIM_ENFORCEMENT], GRADE_FAIL,
			    "the fatal failure was not machine-readable as failure after the bounded "
			    "retries",
			    NULL);
	else if (r->kind != ARM_DOCKER && (!ok.record_ok || !bad.record_ok))
		verdict_set(&r->v[DIM_ENFORCEMENT], GRADE_FAIL,
			    "a completion record disagrees with the real exit status", NULL);
	else if (record_issue)
		verdict_set(&r->v[DIM_ENFORCEMENT], GRADE_UNKNOWN,
			    "missing evidence: an attempt has no completion record", NULL);
	else if (live != 0)
		verdict_set(&r->v[DIM_ENFORCEMENT], live < 0 ? GRADE_UNKNOWN : GRADE_FAIL,
			    live < 0 ? "paddock ps failed: live inventory unknown"
				     : "an undeclared session is still live after completion",
			    NULL);
	else
		verdict_set(&r->v[DIM_ENFORCEMENT], GRADE_PASS, NULL, NULL);

	if (ok.status == 0 && ok.attempts == 1 && ok.ledger == 1)
		verdict_set(&r->v[DIM_CONTROL], GRADE_PASS, NULL, NULL);
	else
		verdict_set(&r->v[DIM_CONTROL], GRADE_FAIL,
			    "the successful tool needed extra attempts or did not succeed", NULL);
	if (ok.ledger < 0 || bad.ledger < 0)
		verdict_set(&r->v[DIM_EVIDENCE], GRADE_UNKNOWN, "ledger missing", NULL);
	else if (record_issue)
		verdict_set(&r->v[DIM_EVIDENCE], GRADE_UNKNOWN, "completion record missing", NULL);
	else if (r->kind == ARM_DOCKER)
		verdict_set(&r->v[DIM_EVIDENCE], GRADE_UNKNOWN,
			    "exit status and ledger only: Docker writes no completion record", NULL);
	else
		verdict_set(&r->v[DIM_EVIDENCE], GRADE_PASS, NULL, NULL);
out:
	if (fixture_teardown(&fx) < 0)
		snprintf(r->alarm, sizeof(r->alarm), "teardown left the fixture behind");
}

const struct eval_case hb08_case = {
	.id = "HB-08",
	.title = "Completion reports actual execution status",
	.policy = "hb08_policy.json",
	.arms = arms,
	.run = run,
};
