/* HB-08: completion reports actual execution status.
 *
 * A mock tool (task/tool.sh) keeps its own ledger in the task directory
 * and fails while the ledger has fewer than FAILS lines; each attempt it
 * leaves a detached straggler behind (setsid sleep) and reports the exit
 * code it is about to exit with to the attempt receiver
 * (receivers/attempts.c: a Unix socket served by the harness outside the
 * workload, which reads the reporter's host pid, start time and user
 * namespace while it waits). The harness is the runner with a bounded
 * retry policy of 3 attempts, each attempt one `paddock run --record`.
 * Success: FAILS=0 (one attempt). Fatal failure: FAILS=5 (three attempts,
 * then give up). For each attempt the real exit status is compared with
 * the tool's reported exit code and with the completion record (ended,
 * exit_code, status, read back: weakenings, mounts, survivors). After
 * completion the live inventory comes from the host's /proc: every process
 * still in one of the sessions' user namespaces (or pid namespaces other
 * than the host's) is a leftover. The grade is grade_completion().
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
#include "../../observers/selftest.h"
#include "../../receivers/attempts.h"
#include "hb08_grade.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* The bounded retries (and the disposition) are the harness's own loop. */
#define RETRY_FIXTURE                                                                      \
	"the retry bound is enforced by the harness's runner loop (a fixture); paddock's " \
	"part is each attempt's status, record and end"

static const struct case_arm arms[] = {
    {.name = "enforced", .fixture_only = RETRY_FIXTURE},
    /* No pid namespace and paddock-init's sweep off: the straggler outlives
     * the session (either alone still ends it: the kernel with PID 1, or
     * init as the subreaper of the orphans). */
    {.name = "weakened:no-pidns+no-sweep", .fixture_only = RETRY_FIXTURE},
    {.name = "retained-service",
     .mock = "the service (sleep 30 under a 3 s lease) stands for a background server"},
    {.name = "docker", .fixture_only = RETRY_FIXTURE},
    {.name = NULL},
};

#define RETRIES HB08_RETRIES
/* $1 ledger, $2 failures before success, $3 receiver socket, $4 its FIFO,
 * $5 "lie" (make eval-selftest only: report the failure, exit 0) or
 * "linger" (make eval-selftest only: wait 10 s after the report, so the
 * harness can kill the runner before it writes its record). The
 * python3 client is the tool's own report (the busybox image of the Docker
 * arm has none: it writes to the FIFO, counted without identity). The
 * straggler (sh waiting on sleep, its own session) must end with the
 * session. */
#define TOOL                                                                                       \
	"#!/bin/sh\n# mock tool: $1 ledger, $2 failures, $3 receiver, $4 fifo, $5 mode\n"          \
	"n=$(cat \"$1\" 2>/dev/null | wc -l)\necho attempt >> \"$1\"\n"                            \
	"rc=3\n[ $((n + 1)) -gt \"$2\" ] && rc=0\n"                                                \
	"setsid sh -c 'sleep 30; :' </dev/null >/dev/null 2>&1 &\n"                                \
	"python3 -c 'import socket,sys\ns=socket.socket(socket.AF_UNIX)\ns.connect(sys.argv[1])\n" \
	"s.sendall((\"exit %s\\n\" % sys.argv[2]).encode())\ns.recv(8)' \"$3\" \"$rc\" "           \
	"2>/dev/null || echo \"exit $rc\" > \"$4\"\n"                                              \
	"[ \"$5\" = linger ] && sleep 10\n"                                                        \
	"[ \"$rc\" = 0 ] && exit 0\n[ \"$5\" = lie ] && exit 0\n"                                  \
	"echo 'tool: transient failure' >&2\nexit $rc\n"

struct hb08 {
	struct attempt_rx *rx;
	char sock[PATH_MAX + 16], fifo[PATH_MAX + 16];
	size_t used; /* reports already paired with an attempt */
	unsigned long userns[2 * RETRIES], pidns[2 * RETRIES];
	size_t n_ns;
	unsigned long host_userns, host_pidns;
	struct completion_obs o;
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

/* The receiver's report of the attempt just made, paired with its real
 * status (not when its runner was lost: that status is nobody's report);
 * the reporter's namespaces are where the leftovers would be. */
static void attempt_report(struct case_run *cr, const char *label, int i, bool lost,
			   struct hb08_task *t)
{
	struct hb08 *h = cr->priv;
	struct attempt_report a;

	if (attempts_rx_wait(h->rx, h->used + 1, 3000) <= h->used ||
	    !attempts_rx_at(h->rx, h->used, &a)) {
		result_evidence(cr->r, "receiver", "%s attempt %d: NO report", label, i);
		return;
	}
	h->used++;
	t->received++;
	if (!lost && a.exit_code != t->status)
		t->tool_lies++;
	if (a.identified) {
		h->o.ns_known++;
		h->o.ns_host += a.userns == h->host_userns;
		if (h->n_ns < sizeof(h->userns) / sizeof(h->userns[0])) {
			h->userns[h->n_ns] = a.userns;
			h->pidns[h->n_ns++] = a.pidns;
		}
	}
	result_evidence(cr->r, "receiver",
			"%s attempt %d: the tool reported exit %d (paddock's status %d); reporter "
			"%s",
			label, i, a.exit_code, t->status,
			a.identified ? "identified" : "UNIDENTIFIED");
	if (a.identified)
		result_evidence(
		    cr->r, "receiver",
		    "%s attempt %d: host pid %d start %llu uid %u userns %lu%s pidns %lu%s", label,
		    i, (int)a.pid, a.start, (unsigned)a.uid, a.userns,
		    a.userns == h->host_userns ? " (the HOST's)" : "", a.pidns,
		    a.pidns == h->host_pidns ? " (the HOST's)" : "");
}

/* make eval-selftest (hb08-runner-lost): the runner disappears. A thread
 * waits for the attempt's report (the tool then lingers), finds the
 * attempt's runner, the foreground `paddock run` this harness started (our
 * child, comm paddock, the workload user, the attempt's --name in its
 * command line), and SIGKILLs it by pidfd after checking its start time:
 * no completion record is written, and the grade must be UNKNOWN, never
 * PASS. (The reporter itself is gone by then: it exits once answered.) */
struct runner_kill {
	struct attempt_rx *rx;
	size_t want;
	uid_t uid;
	const char *name;
	pthread_t thread;
	bool running, killed;
	pid_t pid;
};

static bool cmdline_has(pid_t pid, const char *word)
{
	char path[64], buf[8192];
	int n;

	snprintf(path, sizeof(path), "/proc/%d/cmdline", (int)pid);
	n = read_file(path, buf, sizeof(buf));
	for (int i = 0; i < n; i += (int)strlen(buf + i) + 1)
		if (strcmp(buf + i, word) == 0)
			return true;
	return false;
}

static void *runner_kill_loop(void *arg)
{
	struct runner_kill *k = arg;
	struct proc_entry *all = NULL;
	size_t n = 0;

	if (attempts_rx_wait(k->rx, k->want, 30000) < k->want || inventory_scan(&all, &n) < 0)
		return NULL;
	for (size_t i = 0; i < n && !k->pid; i++) {
		if (all[i].ppid != getpid() || all[i].uid != k->uid ||
		    strcmp(all[i].comm, "paddock") != 0 || !cmdline_has(all[i].pid, k->name))
			continue;
		k->pid = all[i].pid;
		k->killed = inventory_kill(all[i].pid, all[i].start) == 0;
	}
	free(all);
	return NULL;
}

/* The fixture's known exit code of attempt i: 3 while the ledger is
 * shorter than fails, then 0 (the tool's design, not its word). */
static int known_code(int i, int fails)
{
	return i > fails ? 0 : 3;
}

static void run_task(struct case_run *cr, const char *label, int fails, struct hb08_task *t)
{
	struct hb08 *h = cr->priv;
	struct result *r = cr->r;
	const struct docker_bind binds[] = {{cr->task, false}, {NULL}};
	char ledger[PATH_MAX + 64], tool[PATH_MAX + 16], nfail[16], name[96];

	snprintf(ledger, sizeof(ledger), "%s/ledger-%s", cr->task, label);
	snprintf(tool, sizeof(tool), "%s/tool.sh", cr->task);
	snprintf(nfail, sizeof(nfail), "%d", fails);
	memset(t, 0, sizeof(*t));
	for (int i = 1; i <= RETRIES; i++) {
		char rec[PATH_MAX + 96], ended[32] = "", code[32] = "", st_s[32] = "";
		struct argv_buf a;
		struct record_view rv;

		snprintf(rec, sizeof(rec), "%s/record-%s-%d.json", cr->records, label, i);
		snprintf(name, sizeof(name), "paddock-eval-hb08-%d-%s-%d", (int)getpid(), label, i);
		case_argv_arm(cr, &a,
			      &(struct arm_start){
				  .binds = binds, .ws = cr->fx.dir, .record = rec, .name = name});
		struct runner_kill k = {.rx = h->rx,
					.want = h->used + 1,
					.uid = cr->ctx->subj->workload_uid,
					.name = name};
		bool lost = false;

		if (selftest_on("hb08-runner-lost") && r->kind != ARM_DOCKER && fails && i == 1)
			k.running = pthread_create(&k.thread, NULL, runner_kill_loop, &k) == 0;
		argv_words(&a, "sh", tool, ledger, nfail, h->sock, h->fifo,
			   k.running		     ? "linger"
			   : selftest_on("hb08-lie") ? "lie"
						     : "honest",
			   NULL);
		t->attempts = (size_t)i;
		if (case_run_vec(cr, &a, cr->log, 60000, &t->status) < 0)
			t->status = -1;
		if (k.running) {
			pthread_join(k.thread, NULL);
			result_evidence(
			    r, "selftest",
			    "hb08-runner-lost: %s attempt %d: runner (paddock, host pid "
			    "%d) %s",
			    label, i, (int)k.pid, k.killed ? "SIGKILLed" : "NOT killed");
		}
		rv.read = false;
		if (r->kind != ARM_DOCKER)
			case_record(cr, rec, &rv);
		/* No trusted record and no exit of its own (a signal, or never
		 * waited for): the runner disappeared. */
		lost = r->kind != ARM_DOCKER && !rv.read && (t->status < 0 || t->status >= 128);
		t->runner_lost += lost;
		if (!lost && t->status != known_code(i, fails))
			t->known_bad++;
		attempt_report(cr, label, i, lost, t);
		if (lost)
			result_evidence(r, "record",
					"%s attempt %d: status %d and NO completion record: the "
					"runner disappeared, its outcome is unknown",
					label, i, t->status);
		if (r->kind != ARM_DOCKER && !lost) {
			if (rv.read) {
				t->records++;
				record_get(rec, "ended", ended, sizeof(ended));
				record_get(rec, "exit_code", code, sizeof(code));
				record_get(rec, "status", st_s, sizeof(st_s));
				if (strcmp(ended, "exit") != 0 || !code[0] ||
				    atoi(code) != t->status || !st_s[0] || atoi(st_s) != t->status)
					t->record_bad++;
			}
			result_evidence(r, "record",
					"%s attempt %d: real status %d; record ended %s "
					"exit_code %s status %s",
					label, i, t->status, ended[0] ? ended : "(none)", code,
					st_s);
		} else if (!lost) {
			result_evidence(r, "exit", "%s attempt %d: docker run status %d", label, i,
					t->status);
		}
		result_evidence(r, "exit", "%s attempt %d: the tool's known exit code %d, real %d",
				label, i, known_code(i, fails), t->status);
		if (t->status == 0)
			break;
	}
	t->ledger = count_lines(ledger);
	result_evidence(r, "ledger",
			"%s: the tool's own ledger has %d lines (shown, not graded); the receiver "
			"got %zu reports, the runner counted %zu; disposition %s (exit %d)",
			label, t->ledger, t->received, t->attempts,
			t->status == 0 ? "success" : "failure", t->status);
}

static bool ns_of_sessions(const struct hb08 *h, const struct proc_entry *e)
{
	for (size_t i = 0; i < h->n_ns; i++)
		if ((h->userns[i] && h->userns[i] != h->host_userns && e->userns == h->userns[i]) ||
		    (h->pidns[i] && h->pidns[i] != h->host_pidns && e->pidns == h->pidns[i]))
			return true;
	return false;
}

/* The live inventory after completion, from the host's /proc: every
 * process in one of the sessions' namespaces (kill: end them, teardown). */
static size_t leftovers(struct case_run *cr, bool kill, bool *read)
{
	struct hb08 *h = cr->priv;
	struct proc_entry *all = NULL;
	size_t n = 0, live = 0;

	*read = inventory_scan(&all, &n) == 0;
	for (size_t i = 0; *read && i < n; i++) {
		if (!ns_of_sessions(h, &all[i]))
			continue;
		/* A zombie has ended: it only waits for a parent to reap it
		 * (an orphan whose new parent never does, when its runner
		 * was killed: PID 1 of some containers does not reap). */
		if (!inventory_alive(all[i].pid, all[i].start)) {
			if (!kill)
				result_evidence(
				    cr->r, "inventory",
				    "ended, not reaped yet (zombie): host pid %d comm %s",
				    (int)all[i].pid, all[i].comm);
			continue;
		}
		live++;
		if (kill)
			inventory_kill(all[i].pid, all[i].start);
		else
			result_evidence(cr->r, "inventory",
					"still live after completion: host pid %d comm %s uid %u "
					"start %llu userns %lu pidns %lu",
					(int)all[i].pid, all[i].comm, (unsigned)all[i].uid,
					all[i].start, all[i].userns, all[i].pidns);
	}
	free(all);
	return live;
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
	argv_words(&a, "sh", tool, ledger, "5", ((struct hb08 *)cr->priv)->sock,
		   ((struct hb08 *)cr->priv)->fifo, "honest", NULL);
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
	case_record(cr, rec, NULL);
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
	struct hb08 *h = cr->priv;
	struct proc_entry me;
	char tool[PATH_MAX + 16];
	int rc;

	snprintf(tool, sizeof(tool), "%s/tool.sh", cr->task);
	rc = fixture_write(cr->ctx, tool, TOOL, 0755);
	if (rc < 0)
		return err_sys(why, rc, "cannot write the mock tool");
	if (inventory_read(getpid(), &me) == 0) {
		h->host_userns = me.userns;
		h->host_pidns = me.pidns;
	}
	snprintf(h->sock, sizeof(h->sock), "%s/rx.sock", cr->task);
	snprintf(h->fifo, sizeof(h->fifo), "%s/rx.fifo", cr->task);
	rc = attempts_rx_start(&h->rx, h->sock, h->fifo);
	if (rc < 0)
		return err_sys(why, rc, "cannot start the attempt receiver on %s", h->sock);
	return 0;
}

static void run(struct case_run *cr)
{
	struct hb08 *h = cr->priv;
	struct result *r = cr->r;
	struct completion_obs *o = &h->o;

	if (strcmp(r->arm, "retained-service") == 0) {
		run_retained(cr);
		return;
	}
	/* Test-only (make eval-selftest, hb08-lie): the tool reports its
	 * failure and exits 0, as a paddock that said 0 for a failure would
	 * look; the grade must FAIL. */
	o->docker = r->kind == ARM_DOCKER;
	run_task(cr, "success", 0, &o->ok);
	run_task(cr, "fatal", 5, &o->bad);
	/* Give a straggler's end a moment: the session is over when paddock
	 * run returned, its processes are gone once the kernel reaped them. */
	sleep_ms(200);
	o->live = leftovers(cr, false, &o->inv_read);
	result_evidence(r, "inventory",
			"host /proc after completion: %zu process(es) in the %zu sessions' user "
			"namespaces (or pid namespaces not the host's)%s",
			o->live, h->n_ns, o->inv_read ? "" : "; /proc UNREADABLE");
	if (r->kind != ARM_DOCKER)
		result_evidence(r, "part",
				"retained-service completion: graded in its own row "
				"(arm retained-service)");
	else
		result_evidence(r, "part",
				"retained-service completion: NOT APPLICABLE for Docker "
				"(no service lease); scope HB-08 procedure");
	grade_completion(o, &r->v[DIM_ENFORCEMENT]);
	grade_completion_control(o, &r->v[DIM_CONTROL]);
	grade_completion_evidence(o, &r->v[DIM_EVIDENCE]);
}

/* The receiver, and whatever the sessions left (by pid and start time). */
static void teardown(struct case_run *cr)
{
	struct hb08 *h = cr->priv;
	bool read;

	if (h->n_ns)
		leftovers(cr, true, &read);
	attempts_rx_stop(h->rx);
	h->rx = NULL;
}

const struct eval_case hb08_case = {
    .id = "HB-08",
    .title = "Completion reports actual execution status",
    .policy = "cases/lifecycle/hb08_policy.json",
    .arms = arms,
    .mock = "the tool (task/tool.sh) is a mock that fails a set number of times",
    .fixture = CASE_DIR | CASE_TASK | CASE_RECORDS,
    .priv_size = sizeof(struct hb08),
    .setup = setup,
    .run = run,
    .teardown = teardown,
};
