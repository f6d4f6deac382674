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
 * names) must be empty.
 *
 * Arm retained-service (its own row): one attempt of the fatal tool under
 * hb08_service_policy.json, which declares a service (sleep 30) with a 3 s
 * lease. paddock run's real exit status is compared with the record as
 * written at the main command's end ("phase": "retained", status, ended,
 * exit_code, the service's owner, generation and expiry), with ps --json
 * (state "retained", the lease) and with the live inventory (host /proc:
 * the processes of the session's pid namespace: the service and nothing
 * else but paddock-init); then with the final record once the lease ended. */
#include "../../lib/case.h"
#include "../../observers/observe.h"
#include "hb08_grade.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const struct case_arm arms[] = {
    {.name = "enforced"},
    {.name = "retained-service",
     .mock = "the service (sleep 30 under a 3 s lease) stands for a background server"},
    {.name = "docker"},
    {.name = NULL},
};

#define RETRIES 3
#define TOOL                                                              \
	"#!/bin/sh\n# mock tool: $1 ledger, $2 failures before success\n" \
	"n=$(cat \"$1\" 2>/dev/null | wc -l)\necho attempt >> \"$1\"\n"   \
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

static void run_task(struct case_run *cr, const char *label, int fails, struct task_out *t)
{
	struct result *r = cr->r;
	const struct docker_bind binds[] = {{cr->task, false}, {NULL}};
	char ledger[PATH_MAX + 64], tool[PATH_MAX + 16], nfail[16], name[96];

	snprintf(ledger, sizeof(ledger), "%s/ledger-%s", cr->task, label);
	snprintf(tool, sizeof(tool), "%s/tool.sh", cr->task);
	snprintf(nfail, sizeof(nfail), "%d", fails);
	memset(t, 0, sizeof(*t));
	t->record_ok = t->record_all = true;
	for (int i = 1; i <= RETRIES; i++) {
		char rec[PATH_MAX + 96], ended[32] = "", code[32] = "", st_s[32] = "";
		struct argv_buf a;

		snprintf(rec, sizeof(rec), "%s/record-%s-%d.json", cr->records, label, i);
		snprintf(name, sizeof(name), "paddock-eval-hb08-%d-%s-%d", (int)getpid(), label, i);
		case_argv_arm(cr, &a,
			      &(struct arm_start){
				  .binds = binds, .ws = cr->fx.dir, .record = rec, .name = name});
		argv_words(&a, "sh", tool, ledger, nfail, NULL);
		t->attempts = i;
		if (case_run_vec(cr, &a, cr->log, 60000, &t->status) < 0)
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
			result_evidence(r, "record",
					"%s attempt %d: real status %d; record ended %s "
					"exit_code %s status %s",
					label, i, t->status, ended[0] ? ended : "(none)", code,
					st_s);
		} else {
			result_evidence(r, "exit", "%s attempt %d: docker run status %d", label, i,
					t->status);
		}
		if (t->status == 0)
			break;
	}
	t->ledger = count_lines(ledger);
	result_evidence(r, "ledger",
			"%s: %d attempts in the receiver's ledger, runner counted %d; "
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

/* The processes of the session's pid namespace, from the host's /proc. */
static void retained_inventory(struct result *r, const char *init_pid, struct retained_obs *o)
{
	struct proc_entry *all = NULL, init;
	size_t n = 0;

	if (!init_pid[0] || inventory_read((pid_t)atoi(init_pid), &init) < 0 ||
	    inventory_scan(&all, &n) < 0)
		return;
	o->inv_read = true;
	for (size_t i = 0; i < n; i++) {
		if (all[i].pidns != init.pidns || all[i].pid == init.pid)
			continue;
		/* The service is a session leader (setsid) running sleep. */
		if (strcmp(all[i].comm, "sleep") == 0 && all[i].sid == all[i].pid)
			o->svc_alive++;
		else
			o->other_alive++;
		result_evidence(r, "inventory",
				"session pid namespace %lu: host pid %d comm %s uid "
				"%u sid %d",
				init.pidns, (int)all[i].pid, all[i].comm, (unsigned)all[i].uid,
				(int)all[i].sid);
	}
	free(all);
}

/* paddock run's record as written at the main command's end. */
static void record_view(struct case_run *cr, const char *rec, char *id, size_t id_n,
			struct retained_obs *o)
{
	char v[96] = "", code[32] = "", owner[32] = "", gen[32] = "", exp[64] = "";

	if (record_get(rec, "session.id", id, id_n) < 0)
		return;
	o->record_read = true;
	record_get(rec, "phase", v, sizeof(v));
	o->record_retained = strcmp(v, "retained") == 0;
	record_get(rec, "status", v, sizeof(v));
	o->record_status = atoi(v);
	record_get(rec, "ended", v, sizeof(v));
	record_get(rec, "exit_code", code, sizeof(code));
	o->record_exit_n = strcmp(v, "exit") == 0 && code[0] && atoi(code) == o->real_status;
	record_get(rec, "services.0.owner_uid", owner, sizeof(owner));
	record_get(rec, "services.0.generation", gen, sizeof(gen));
	record_get(rec, "services.0.expires", exp, sizeof(exp));
	o->record_lease =
	    owner[0] && (uid_t)atol(owner) == cr->ctx->subj->workload_uid && gen[0] && exp[0];
	result_evidence(cr->r, "record",
			"at the main end: phase %s, status %d, ended %s exit_code "
			"%s; service owner %s gen %s expires %s",
			o->record_retained ? "retained" : "NOT retained", o->record_status, v, code,
			owner, gen, exp);
}

/* `paddock ps --json`'s entry of the session; fills its init pid. */
static void ps_view(struct case_run *cr, const char *id, char *init_pid, size_t init_n,
		    struct retained_obs *o)
{
	static char ps[65536];
	char owner[32] = "", gen[32] = "", exp[64] = "", stat_s[32] = "", state[32] = "";
	size_t len;

	if (!id[0] || paddock_ps_entry(cr->ctx, id, ps, sizeof(ps)) < 0)
		return;
	len = strlen(ps);
	o->ps_read = true;
	json_get(ps, len, "state", state, sizeof(state));
	json_get(ps, len, "status", stat_s, sizeof(stat_s));
	json_get(ps, len, "init.pid", init_pid, init_n);
	json_get(ps, len, "leases.0.owner_uid", owner, sizeof(owner));
	json_get(ps, len, "leases.0.generation", gen, sizeof(gen));
	json_get(ps, len, "leases.0.expires", exp, sizeof(exp));
	o->ps_retained =
	    strcmp(state, "retained") == 0 && stat_s[0] && atoi(stat_s) == o->real_status;
	o->ps_lease =
	    owner[0] && (uid_t)atol(owner) == cr->ctx->subj->workload_uid && gen[0] && exp[0];
	result_evidence(cr->r, "inventory",
			"ps --json: state %s status %s; lease owner %s gen %s "
			"expires %s",
			state, stat_s, owner, gen, exp);
}

/* The end of the lease, then the final record. */
static void final_view(struct case_run *cr, const char *rec, const char *id, char *state,
		       size_t state_n, char *ended, size_t ended_n, struct retained_obs *o)
{
	char sj[512], v[96] = "";

	session_json_path(cr->ctx->subj->workload_uid, id, sj, sizeof(sj));
	for (int i = 0; id[0] && i < 100; i++) {
		if (record_get(sj, "state", state, state_n) == 0 && !strcmp(state, "ended"))
			break;
		sleep_ms(100);
	}
	if (record_get(rec, "phase", v, sizeof(v)) == 0 && strcmp(v, "final") == 0) {
		o->final_read = true;
		record_get(rec, "status", v, sizeof(v));
		o->final_ok = atoi(v) == o->real_status;
		record_get(rec, "services.0.ended", ended, ended_n);
	}
	result_evidence(cr->r, "record", "final: status %s, service ended \"%s\"",
			o->final_read ? v : "(no final record)", ended);
}

/* Arm retained-service: one attempt of the fatal tool under the service
 * policy, every view of its outcome compared with the real status. */
static void run_retained(struct case_run *cr)
{
	struct result *r = cr->r;
	struct retained_obs o = {0};
	struct argv_buf a;
	char rec[PATH_MAX + 64], name[96], ledger[PATH_MAX + 64], tool[PATH_MAX + 16],
	    id[64] = "", ended[96] = "";
	char init_pid[32] = "", state[32] = "";

	snprintf(r->policy_path, sizeof(r->policy_path),
		 "%s/cases/lifecycle/hb08_service_policy.json", cr->ctx->scenarios_dir);
	if (observe_sha256(r->policy_path, r->policy_sha256) < 0)
		snprintf(r->policy_sha256, sizeof(r->policy_sha256), "unreadable");
	snprintf(rec, sizeof(rec), "%s/record-retained.json", cr->records);
	snprintf(name, sizeof(name), "paddock-eval-hb08-%d-retained", (int)getpid());
	snprintf(ledger, sizeof(ledger), "%s/ledger-retained", cr->task);
	snprintf(tool, sizeof(tool), "%s/tool.sh", cr->task);
	case_argv_arm(cr, &a, &(struct arm_start){.ws = cr->fx.dir, .record = rec, .name = name});
	argv_words(&a, "sh", tool, ledger, "5", NULL);
	if (case_run_vec(cr, &a, cr->log, 30000, &o.real_status) < 0) {
		result_not_executed(r, "paddock run could not be started");
		return;
	}
	/* The three views right after paddock run returned. */
	record_view(cr, rec, id, sizeof(id), &o);
	ps_view(cr, id, init_pid, sizeof(init_pid), &o);
	retained_inventory(r, init_pid, &o);
	result_evidence(r, "exit",
			"real exit status of paddock run: %d; live service processes in "
			"the session: %zu, other processes: %zu",
			o.real_status, o.svc_alive, o.other_alive);
	final_view(cr, rec, id, state, sizeof(state), ended, sizeof(ended), &o);
	grade_retained(&o, &r->v[DIM_ENFORCEMENT]);
	if (strncmp(ended, "lease-expired", 13) == 0)
		verdict_set(&r->v[DIM_CONTROL], GRADE_PASS, NULL, NULL);
	else
		verdict_set(&r->v[DIM_CONTROL], o.final_read ? GRADE_FAIL : GRADE_UNKNOWN,
			    "the declared service did not run until its lease ended", NULL);
	if (o.record_read && o.ps_read && o.inv_read && o.final_read)
		verdict_set(&r->v[DIM_EVIDENCE], GRADE_PASS, NULL, NULL);
	else
		verdict_set(&r->v[DIM_EVIDENCE], GRADE_UNKNOWN,
			    "a view is missing (record, ps --json, inventory or final record)",
			    NULL);
	paddock_session_end(cr->ctx, id, strcmp(state, "ended") != 0);
}

static int setup(struct case_run *cr, struct err *why)
{
	char tool[PATH_MAX + 16];
	int rc;

	snprintf(tool, sizeof(tool), "%s/tool.sh", cr->task);
	rc = fixture_write(cr->ctx, tool, TOOL, 0755);
	if (rc < 0)
		return err_sys(why, rc, "cannot write the mock tool");
	return 0;
}

static void grade(struct case_run *cr, const struct task_out *ok, const struct task_out *bad,
		  int live)
{
	struct result *r = cr->r;
	bool machine_failure, record_issue;

	machine_failure = bad->status != 0 && bad->attempts == RETRIES && bad->ledger == RETRIES;
	record_issue = r->kind != ARM_DOCKER && (!ok->record_all || !bad->record_all);
	if (ok->status != 0)
		verdict_set(&r->v[DIM_ENFORCEMENT], GRADE_UNKNOWN,
			    "the success path failed, so failure reporting cannot be compared",
			    NULL);
	else if (!machine_failure)
		verdict_set(
		    &r->v[DIM_ENFORCEMENT], GRADE_FAIL,
		    "the fatal failure was not machine-readable as failure after the bounded "
		    "retries",
		    NULL);
	else if (r->kind != ARM_DOCKER && (!ok->record_ok || !bad->record_ok))
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
	if (ok->status == 0 && ok->attempts == 1 && ok->ledger == 1)
		verdict_set(&r->v[DIM_CONTROL], GRADE_PASS, NULL, NULL);
	else
		verdict_set(&r->v[DIM_CONTROL], GRADE_FAIL,
			    "the successful tool needed extra attempts or did not succeed", NULL);
	if (ok->ledger < 0 || bad->ledger < 0)
		verdict_set(&r->v[DIM_EVIDENCE], GRADE_UNKNOWN, "ledger missing", NULL);
	else if (record_issue)
		verdict_set(&r->v[DIM_EVIDENCE], GRADE_UNKNOWN, "completion record missing", NULL);
	else if (r->kind == ARM_DOCKER)
		verdict_set(&r->v[DIM_EVIDENCE], GRADE_UNKNOWN,
			    "exit status and ledger only: Docker writes no completion record",
			    NULL);
	else
		verdict_set(&r->v[DIM_EVIDENCE], GRADE_PASS, NULL, NULL);
}

static void run(struct case_run *cr)
{
	struct result *r = cr->r;
	struct task_out ok, bad;
	int live = 0;

	if (strcmp(r->arm, "retained-service") == 0) {
		run_retained(cr);
		return;
	}
	run_task(cr, "success", 0, &ok);
	run_task(cr, "fatal", 5, &bad);
	if (r->kind != ARM_DOCKER) {
		live = live_sessions(cr->ctx);
		result_evidence(r, "inventory", "live sessions of this run after completion: %d",
				live);
		result_evidence(r, "part",
				"retained-service completion: graded in its own row "
				"(arm retained-service)");
	} else {
		result_evidence(r, "part",
				"retained-service completion: NOT APPLICABLE for Docker "
				"(no service lease); scope HB-08 procedure");
	}
	grade(cr, &ok, &bad, live);
}

const struct eval_case hb08_case = {
    .id = "HB-08",
    .title = "Completion reports actual execution status",
    .policy = "cases/lifecycle/hb08_policy.json",
    .arms = arms,
    .mock = "the tool (task/tool.sh) is a mock that fails a set number of times",
    .fixture = CASE_DIR | CASE_TASK | CASE_RECORDS,
    .setup = setup,
    .run = run,
};
