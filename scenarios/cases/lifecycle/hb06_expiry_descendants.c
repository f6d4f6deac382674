/* HB-06: workload expiry accounts for descendants.
 *
 * Session A (the managed workload, --ttl 3s) starts a bounded child
 * (sleep 20) and a detached descendant (setsid plus a subshell that exits
 * at once, so the descendant is orphaned: sleep 120) and then waits.
 * Session B, another workload of the same owner, runs the whole time,
 * always with the enforced policy. Expiry goes through A's supervisor
 * (its --ttl); `paddock wait` returns once it is over. Inventories before
 * and after, read from the host's /proc by pid namespace and by the
 * parent links below A's paddock-init, identify every process by host pid
 * and start time. Teardown stops B and SIGKILLs, by pidfd and only after
 * checking the start time, any process of A's or B's inventory still
 * alive (the no-pidns arm leaves the detached descendant behind).
 *
 * Control: a third run (hb06_lease_policy.json) declares a service with a
 * 4 s lease (a python3 marker server on a unix socket in the task
 * directory); its main command starts a detached `sleep 60.PID` and ends.
 * The server must answer from the host after the main command's end and
 * not after the session ended; the lease must be listed in ps --json and
 * the record (owner, generation, expiry); the detached sleep must be gone
 * while the service lives (a leak never rides on a lease). */
#include "../../lib/harness.h"
#include "../../observers/observe.h"
#include "hb06_grade.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const char *const arms[] = {"enforced", "weakened:no-pidns", "docker", NULL};

#define A_SCRIPT "sleep 20 & ( setsid sh -c 'exec sleep 120' & ); sleep 0.2; : > \"$1/ready\"; wait"

struct inv {
	struct proc_entry p[64];
	size_t n;
};

/* Everything in pidns (when it is not ours) plus everything below root by
 * parent links. */
static void inventory_of(pid_t root, unsigned long pidns, struct inv *out)
{
	struct proc_entry *all = NULL;
	size_t n = 0;
	unsigned long self_ns = 0;
	struct proc_entry me;

	out->n = 0;
	if (inventory_read(getpid(), &me) == 0)
		self_ns = me.pidns;
	if (inventory_scan(&all, &n) < 0)
		return;
	for (int pass = 0; pass < 8; pass++) {
		for (size_t i = 0; i < n && out->n < 64; i++) {
			bool in = (pidns && pidns != self_ns && all[i].pidns == pidns) ||
				  all[i].pid == root;
			bool have = false;

			for (size_t k = 0; k < out->n; k++) {
				have |= out->p[k].pid == all[i].pid;
				in |= out->p[k].pid == all[i].ppid;
			}
			if (in && !have)
				out->p[out->n++] = all[i];
		}
	}
	free(all);
}

static size_t alive_count(const struct inv *v)
{
	size_t c = 0;

	for (size_t i = 0; i < v->n; i++)
		c += inventory_alive(v->p[i].pid, v->p[i].start);
	return c;
}

static size_t detached_count(const struct inv *v, pid_t root)
{
	size_t c = 0;

	for (size_t i = 0; i < v->n; i++)
		c += v->p[i].pid != root && v->p[i].sid == v->p[i].pid &&
		     strcmp(v->p[i].comm, "sleep") == 0;
	return c;
}

static void list(struct result *r, const char *what, const struct inv *v)
{
	for (size_t i = 0; i < v->n; i++)
		result_evidence(r, "inventory",
				"%s: host pid %d start %llu comm %s uid %u sid %d "
				"pidns %lu ppid %d%s",
				what, (int)v->p[i].pid, v->p[i].start, v->p[i].comm,
				(unsigned)v->p[i].uid, (int)v->p[i].sid, v->p[i].pidns,
				(int)v->p[i].ppid,
				inventory_alive(v->p[i].pid, v->p[i].start) ? " (alive now)" : "");
}

static size_t reap_leftovers(struct result *r, const struct inv *v, const char *what)
{
	size_t k = 0;

	for (size_t i = 0; i < v->n; i++)
		if (inventory_alive(v->p[i].pid, v->p[i].start) &&
		    inventory_kill(v->p[i].pid, v->p[i].start) == 0) {
			result_evidence(r, "teardown", "%s: SIGKILL to leftover pid %d (%s)", what,
					(int)v->p[i].pid, v->p[i].comm);
			k++;
		}
	return k;
}

/* Start a workload; fill its root pid and pid namespace. */
struct wl {
	char id[128];
	pid_t root;
	unsigned long long root_start;
	unsigned long pidns;
};

static int start_paddock(struct eval_ctx *ctx, struct result *r, const char *ws, const char *name,
			 const char *ttl, const char *rec, bool weaken, const char *script,
			 const char *arg, struct wl *w)
{
	struct argv_buf a;
	struct result tmp = *r;
	char sj[4300], v[64];
	int st = -1;

	if (!weaken)
		tmp.kind = ARM_ENFORCED;
	argv_paddock_run(&a, ctx, &tmp, ws, rec);
	argv_add(&a, "--detach");
	argv_add(&a, "--name");
	argv_add(&a, name);
	argv_add(&a, "--ttl");
	argv_add(&a, ttl);
	argv_add(&a, "--");
	argv_add(&a, "sh");
	argv_add(&a, "-c");
	argv_add(&a, script);
	argv_add(&a, "sh");
	argv_add(&a, arg);
	if (run_capture(ctx, ctx->drop, a.v, w->id, sizeof(w->id), 30000, &st) < 0 || st != 0)
		return -1;
	snprintf(sj, sizeof(sj), "/tmp/paddock-%u/%s/session.json",
		 (unsigned)ctx->subj->workload_uid, w->id);
	if (record_get(sj, "init.pid", v, sizeof(v)) < 0)
		return -1;
	w->root = (pid_t)atoi(v);
	if (record_get(sj, "init.start_time", v, sizeof(v)) < 0)
		return -1;
	w->root_start = strtoull(v, NULL, 10);
	return 0;
}

static int start_docker(struct eval_ctx *ctx, const char *name, const char *cmd, struct wl *w)
{
	char *argv[] = {"docker", "run",       "-d",	     "--init",		"--network",
			"none",	  "--name",    (char *)name, ctx->docker_image, "sh",
			"-c",	  (char *)cmd, NULL};
	char *insp[] = {"docker", "inspect", "-f", "{{.State.Pid}}", (char *)name, NULL};
	char buf[128];
	int st = -1;
	struct proc_entry e;

	if (run_capture(ctx, false, argv, w->id, sizeof(w->id), 60000, &st) < 0 || st != 0)
		return -1;
	if (run_capture(ctx, false, insp, buf, sizeof(buf), 10000, &st) < 0 || st != 0)
		return -1;
	w->root = (pid_t)atoi(buf);
	if (inventory_read(w->root, &e) < 0)
		return -1;
	w->root_start = e.start;
	return 0;
}

#define LEASE_MARK "HB06-LEASED-SERVER"

/* Probe the leased server's unix socket from the host. */
static bool lease_probe(const char *sock)
{
	char got[128];

	return observe_connect_unix(sock, 1000, got, sizeof(got)) == 0 &&
	       strcmp(got, LEASE_MARK) == 0;
}

static void lease_views(struct eval_ctx *ctx, struct result *r, const char *id, const char *rec,
			struct lease_obs *o)
{
	static char ps[65536];
	char state[32] = "", owner[32] = "", gen[32] = "", exp[64] = "", phase[32] = "",
	     rowner[32] = "", rgen[32] = "", rexp[64] = "";
	size_t len;

	if (paddock_ps_entry(ctx, id, ps, sizeof(ps)) == 0) {
		len = strlen(ps);
		json_get(ps, len, "state", state, sizeof(state));
		json_get(ps, len, "leases.0.owner_uid", owner, sizeof(owner));
		json_get(ps, len, "leases.0.generation", gen, sizeof(gen));
		json_get(ps, len, "leases.0.expires", exp, sizeof(exp));
	}
	record_get(rec, "phase", phase, sizeof(phase));
	record_get(rec, "services.0.owner_uid", rowner, sizeof(rowner));
	record_get(rec, "services.0.generation", rgen, sizeof(rgen));
	record_get(rec, "services.0.expires", rexp, sizeof(rexp));
	o->retained = strcmp(state, "retained") == 0;
	o->listed = owner[0] && (uid_t)atol(owner) == ctx->subj->workload_uid && gen[0] && exp[0];
	o->recorded = strcmp(phase, "retained") == 0 && rowner[0] &&
		      (uid_t)atol(rowner) == ctx->subj->workload_uid && rgen[0] && rexp[0];
	result_evidence(r, "inventory",
			"lease run after its main command: ps --json state %s, "
			"lease owner %s gen %s expires %s",
			state[0] ? state : "(none)", owner, gen, exp);
	result_evidence(r, "record", "lease run: phase %s, service owner %s gen %s expires %s",
			phase[0] ? phase : "(none)", rowner, rgen, rexp);
}

/* The legitimate control: a leased server outlives its main command until
 * its lease ends, and nothing else of the main command does. */
static void control_lease(struct eval_ctx *ctx, struct result *r, const char *ws, const char *task,
			  const char *recs)
{
	struct lease_obs o = {0};
	struct result tmp = *r;
	struct argv_buf a;
	struct proc_entry leaks[8];
	char rec[4300], sock[4300], token[32], name[96], id[64] = "", state[32] = "",
							 ended[96] = "", sj[512], log[4300];
	size_t nl = 0;
	int st = -1;

	if (r->kind == ARM_DOCKER) {
		verdict_set(&r->v[DIM_CONTROL], GRADE_NOT_APPLICABLE,
			    "Docker has no lease of a service beyond its container",
			    "HB-06 legitimate_control (leased server)");
		return;
	}
	snprintf(tmp.policy_path, sizeof(tmp.policy_path),
		 "%s/cases/lifecycle/hb06_lease_policy.json", ctx->scenarios_dir);
	snprintf(rec, sizeof(rec), "%s/record-lease.json", recs);
	snprintf(sock, sizeof(sock), "%s/svc.sock", task);
	/* The leak's marker: a sleep nobody else runs. */
	snprintf(token, sizeof(token), "60.%d", (int)getpid());
	snprintf(name, sizeof(name), "paddock-eval-hb06-lease-%d", (int)getpid());
	log_path(ctx, r, "lease.log", log, sizeof(log));
	argv_paddock_run(&a, ctx, &tmp, ws, rec);
	argv_add(&a, "--name");
	argv_add(&a, name);
	argv_add(&a, "--");
	argv_add(&a, "sh");
	argv_add(&a, "-c");
	argv_add(&a, "( setsid sleep \"$1\" & ); sleep 0.5");
	argv_add(&a, "sh");
	argv_add(&a, token);
	o.ran = run_argv(ctx, ctx->drop, a.v, log, 30000, &st) == 0 && st == 0;
	result_evidence(r, "exit",
			"lease run (policy hb06_lease_policy.json, lease 4s): paddock "
			"run returned %d at its main command's end",
			st);
	if (record_get(rec, "session.id", id, sizeof(id)) < 0)
		o.ran = false;
	if (o.ran) {
		lease_views(ctx, r, id, rec, &o);
		/* During the lease: probe, and look for the main command's
		 * detached descendant while the service lives. */
		for (int i = 0; i < 4; i++) {
			bool ok = lease_probe(sock);

			o.probes_during++;
			o.ok_during += ok;
			if (i == 0) {
				nl = inventory_find_cmdline("sleep", token, leaks, 8);
				o.leak_checked = true;
				for (size_t k = 0; k < nl; k++)
					o.leaks_alive +=
					    inventory_alive(leaks[k].pid, leaks[k].start);
			}
			sleep_ms(300);
		}
		result_evidence(
		    r, "client",
		    "leased server: %zu of %zu probes answered after the main "
		    "command's end; the main command's detached \"sleep %s\": %zu alive",
		    o.ok_during, o.probes_during, token, o.leaks_alive);
		session_json_path(ctx->subj->workload_uid, id, sj, sizeof(sj));
		for (int i = 0; i < 120; i++) {
			if (record_get(sj, "state", state, sizeof(state)) == 0 &&
			    strcmp(state, "ended") == 0)
				break;
			sleep_ms(100);
		}
		o.probed_after = strcmp(state, "ended") == 0;
		o.ok_after = o.probed_after && lease_probe(sock);
		record_get(rec, "services.0.ended", ended, sizeof(ended));
		o.ended_by_lease = strncmp(ended, "lease-expired", 13) == 0;
		result_evidence(r, "client",
				"after the session ended (state %s): server %s; final "
				"record: service ended \"%s\"",
				state, o.ok_after ? "STILL ANSWERS" : "gone", ended);
	}
	grade_lease_control(&o, &r->v[DIM_CONTROL]);
	if (r->kind == ARM_WEAKENED && r->v[DIM_CONTROL].grade != GRADE_PASS)
		result_evidence(
		    r, "note",
		    "documented: without a pid namespace services are not "
		    "retained (docs/sessions.md); the control grade is what was observed");
	if (r->kind == ARM_ENFORCED && o.retained && o.leaks_alive)
		verdict_set(&r->v[DIM_ENFORCEMENT], GRADE_FAIL,
			    "a leftover of the main command lived on in a retained session", NULL);
	/* Teardown of the lease run: stop it if it is still there, remove it,
	 * and end any leftover by pidfd after checking its start time. */
	if (id[0]) {
		char *stop[] = {ctx->paddock, "stop", "--grace", "0s", id, NULL};
		char *rm[] = {ctx->paddock, "rm", id, NULL};

		if (strcmp(state, "ended") != 0)
			run_argv(ctx, ctx->drop, stop, NULL, 30000, &st);
		run_argv(ctx, ctx->drop, rm, NULL, 30000, &st);
	}
	nl = inventory_find_cmdline("sleep", token, leaks, 8);
	for (size_t k = 0; k < nl; k++)
		if (inventory_kill(leaks[k].pid, leaks[k].start) == 0)
			result_evidence(r, "teardown", "lease run: SIGKILL to leftover pid %d",
					(int)leaks[k].pid);
}

static void run(struct eval_ctx *ctx, const char *arm, struct result *r)
{
	struct fixture fx = {0};
	struct wl A = {0}, B = {0};
	static struct inv a0, b0;
	char why[256] = "", task[4096], recs[4096], rec[4300], ready[4300], name_a[64], name_b[64];
	size_t a_alive, b_alive, detached;
	int st = -1;
	bool docker = r->kind == ARM_DOCKER;
	struct proc_entry e;

	(void)arm;
	a0.n = b0.n = 0;
	if (docker && docker_unavailable(ctx, r))
		return;
	snprintf(name_a, sizeof(name_a), "paddock-eval-hb06-a-%d", (int)getpid());
	snprintf(name_b, sizeof(name_b), "paddock-eval-hb06-b-%d", (int)getpid());
	if (fixture_make(&fx, "hb06", why, sizeof(why)) < 0 ||
	    fixture_mkdir(ctx, &fx, "task", task, sizeof(task)) < 0 ||
	    records_dir(ctx, r, recs, sizeof(recs)) < 0) {
		result_not_executed(r, why[0] ? why : "fixture setup failed");
		goto out;
	}
	snprintf(rec, sizeof(rec), "%s/record-a.json", recs);
	snprintf(ready, sizeof(ready), "%s/ready", task);
	if (docker) {
		/* The container's "ready" file stays inside it (/tmp). */
		if (start_docker(ctx, name_b, "exec sleep 300", &B) < 0 ||
		    start_docker(ctx, name_a, "set -- /tmp; " A_SCRIPT, &A) < 0) {
			result_not_executed(r, "docker run failed");
			goto out;
		}
	} else if (start_paddock(ctx, r, fx.dir, name_b, "60s", NULL, false, "exec sleep 300", task,
				 &B) < 0 ||
		   start_paddock(ctx, r, fx.dir, name_a, "3s", rec, true, A_SCRIPT, task, &A) < 0) {
		result_not_executed(r, "paddock run --detach failed (see the log)");
		goto out;
	}
	/* Ready: the detached descendant exists. Docker's "ready" is not
	 * shared; give it the same time. */
	for (int i = 0; i < 50 && (docker || access(ready, F_OK) != 0); i++) {
		sleep_ms(100);
		if (docker && i >= 5)
			break;
	}
	A.pidns = inventory_read(A.root, &e) == 0 ? e.pidns : 0;
	B.pidns = inventory_read(B.root, &e) == 0 ? e.pidns : 0;
	inventory_of(A.root, A.pidns, &a0);
	inventory_of(B.root, B.pidns, &b0);
	detached = detached_count(&a0, A.root);
	list(r, "A before", &a0);
	list(r, "B before", &b0);

	/* Expiry through the supervisor. */
	if (docker) {
		char *stop[] = {"docker", "stop", "-t", "2", name_a, NULL};

		run_argv(ctx, false, stop, NULL, 30000, &st);
		result_evidence(r, "exit", "docker stop A: status %d", st);
	} else {
		char *w[] = {ctx->paddock, "wait", A.id, NULL};

		run_argv(ctx, ctx->drop, w, NULL, 30000, &st);
		result_evidence(r, "exit", "paddock wait A: status %d (expired by --ttl 3s)", st);
	}
	sleep_ms(300);
	a_alive = alive_count(&a0);
	b_alive = alive_count(&b0);
	list(r, "A after", &a0);
	if (!docker) {
		char v[64] = "";

		if (record_get(rec, "ended", v, sizeof(v)) == 0)
			result_evidence(r, "record", "A ended: %s", v);
		if (record_get(rec, "survivors", v, sizeof(v)) == 0)
			result_evidence(r, "record", "A survivors listed by paddock: %s", v);
	}
	result_evidence(r, "inventory",
			"A: %zu processes before, %zu detached descendants, %zu alive "
			"after expiry; B: %zu before, %zu alive after",
			a0.n, detached, a_alive, b0.n, b_alive);
	if (a0.n == 0 || b0.n == 0)
		verdict_set(&r->v[DIM_ENFORCEMENT], GRADE_UNKNOWN,
			    "missing evidence: empty inventory before expiry", NULL);
	else if (a_alive > 0) {
		snprintf(why, sizeof(why), "%zu of A's %zu processes outlived the expiry", a_alive,
			 a0.n);
		verdict_set(&r->v[DIM_ENFORCEMENT], GRADE_FAIL, why, NULL);
	} else if (b_alive != b0.n)
		verdict_set(&r->v[DIM_ENFORCEMENT], GRADE_FAIL,
			    "the other workload (B) was affected by A's expiry", NULL);
	else if (detached == 0)
		verdict_set(&r->v[DIM_ENFORCEMENT], GRADE_UNKNOWN,
			    "the fixture produced no detached descendant to account for", NULL);
	else
		verdict_set(&r->v[DIM_ENFORCEMENT], GRADE_PASS, NULL, NULL);
	if (a0.n && b0.n)
		verdict_set(&r->v[DIM_EVIDENCE], GRADE_PASS, NULL, NULL);
	else
		verdict_set(&r->v[DIM_EVIDENCE], GRADE_UNKNOWN, "inventory incomplete", NULL);
	/* The control last: a leak it finds beside a leased service lowers
	 * the enforcement grade set above. */
	control_lease(ctx, r, fx.dir, task, recs);
out:
	if (docker) {
		char *rm[] = {"docker", "rm", "-f", name_a, name_b, NULL};

		run_argv(ctx, false, rm, NULL, 30000, &st);
	} else {
		char *stop[] = {ctx->paddock, "stop", "--grace", "0s", B.id, NULL};
		char *rm_a[] = {ctx->paddock, "rm", A.id, NULL};
		char *rm_b[] = {ctx->paddock, "rm", B.id, NULL};
		char *wait_a[] = {ctx->paddock, "wait", A.id, NULL};

		if (B.id[0])
			run_argv(ctx, ctx->drop, stop, NULL, 30000, &st);
		if (A.id[0])
			run_argv(ctx, ctx->drop, wait_a, NULL, 30000, &st);
		if (A.id[0])
			run_argv(ctx, ctx->drop, rm_a, NULL, 30000, &st);
		if (B.id[0])
			run_argv(ctx, ctx->drop, rm_b, NULL, 30000, &st);
	}
	sleep_ms(100);
	reap_leftovers(r, &a0, "A");
	reap_leftovers(r, &b0, "B");
	if (fixture_teardown(&fx) < 0)
		snprintf(r->alarm, sizeof(r->alarm), "teardown left the fixture behind");
}

const struct eval_case hb06_case = {
    .id = "HB-06",
    .title = "Workload expiry accounts for descendants",
    .policy = "cases/lifecycle/hb06_policy.json",
    .arms = arms,
    .run = run,
};
