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
#include "../../lib/case.h"
#include "../../observers/observe.h"
#include "hb06_grade.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const struct case_arm arms[] = {
    {.name = "enforced"},
    {.name = "weakened:no-pidns"},
    {.name = "docker"},
    {.name = NULL},
};

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

/* A workload: its id, root pid and pid namespace. */
struct wl {
	char id[128];
	pid_t root;
	unsigned long long root_start;
	unsigned long pidns;
};

struct hb06 {
	struct wl A, B;
	struct inv a0, b0;
	char name_a[64], name_b[64], rec[PATH_MAX + 64];
};

/* `paddock run --detach --name NAME --ttl TTL -- sh -c SCRIPT sh ARG`,
 * with the arm's knob when weaken. */
static int start_paddock(struct case_run *cr, const char *name, const char *ttl, const char *rec,
			 bool weaken, const char *script, struct wl *w)
{
	struct argv_buf a;
	struct result *r = cr->r;
	char sj[PATH_MAX + 64], v[64];
	int st = -1;

	argv_paddock_run(&a, cr->ctx, r, r->policy_path, weaken ? r->knob : NULL, cr->fx.dir, rec);
	argv_words(&a, "--detach", "--name", name, "--ttl", ttl, "--", "sh", "-c", script, "sh",
		   cr->task, NULL);
	if (capture_vec(cr->ctx, cr->ctx->drop, &a, w->id, sizeof(w->id), 30000, &st) < 0 ||
	    st != 0)
		return -1;
	session_json_path(cr->ctx->subj->workload_uid, w->id, sj, sizeof(sj));
	if (record_get(sj, "init.pid", v, sizeof(v)) < 0)
		return -1;
	w->root = (pid_t)atoi(v);
	if (record_get(sj, "init.start_time", v, sizeof(v)) < 0)
		return -1;
	w->root_start = strtoull(v, NULL, 10);
	return 0;
}

static int start_docker(struct case_run *cr, const char *name, const char *cmd, struct wl *w)
{
	char *insp[] = {"docker", "inspect", "-f", "{{.State.Pid}}", (char *)name, NULL};
	struct argv_buf a;
	char buf[128];
	int st = -1;
	struct proc_entry e;

	argv_docker_detached(&a, cr->ctx, cr->r, name);
	argv_words(&a, "sh", "-c", cmd, NULL);
	if (capture_vec(cr->ctx, false, &a, w->id, sizeof(w->id), 60000, &st) < 0 || st != 0)
		return -1;
	if (run_capture(cr->ctx, false, insp, buf, sizeof(buf), 10000, &st) < 0 || st != 0)
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

/* During the lease: probe, and look for the main command's detached
 * descendant while the service lives; then wait for the session's end. */
static void lease_watch(struct case_run *cr, const char *sock, const char *token, const char *id,
			char *state, size_t state_n, struct lease_obs *o)
{
	struct proc_entry leaks[8];
	char sj[512];
	size_t nl;

	for (int i = 0; i < 4; i++) {
		bool ok = lease_probe(sock);

		o->probes_during++;
		o->ok_during += ok;
		if (i == 0) {
			nl = inventory_find_cmdline("sleep", token, leaks, 8);
			o->leak_checked = true;
			for (size_t k = 0; k < nl; k++)
				o->leaks_alive += inventory_alive(leaks[k].pid, leaks[k].start);
		}
		sleep_ms(300);
	}
	result_evidence(cr->r, "client",
			"leased server: %zu of %zu probes answered after the main "
			"command's end; the main command's detached \"sleep %s\": %zu alive",
			o->ok_during, o->probes_during, token, o->leaks_alive);
	session_json_path(cr->ctx->subj->workload_uid, id, sj, sizeof(sj));
	for (int i = 0; i < 120; i++) {
		if (record_get(sj, "state", state, state_n) == 0 && strcmp(state, "ended") == 0)
			break;
		sleep_ms(100);
	}
}

/* The lease run's end: stop it if it is still there, remove it, and end
 * any leftover by pidfd after checking its start time. */
static void lease_teardown(struct case_run *cr, const char *id, const char *state,
			   const char *token)
{
	struct proc_entry leaks[8];
	size_t nl;

	paddock_session_end(cr->ctx, id, strcmp(state, "ended") != 0);
	nl = inventory_find_cmdline("sleep", token, leaks, 8);
	for (size_t k = 0; k < nl; k++)
		if (inventory_kill(leaks[k].pid, leaks[k].start) == 0)
			result_evidence(cr->r, "teardown", "lease run: SIGKILL to leftover pid %d",
					(int)leaks[k].pid);
}

/* The legitimate control: a leased server outlives its main command until
 * its lease ends, and nothing else of the main command does. */
static void control_lease(struct case_run *cr)
{
	struct result *r = cr->r;
	struct lease_obs o = {0};
	struct argv_buf a;
	char policy[PATH_MAX + 64], rec[PATH_MAX + 64], sock[PATH_MAX + 64], token[32], name[96],
	    id[64] = "", state[32] = "", ended[96] = "", log[PATH_MAX + 64];
	int st = -1;

	if (r->kind == ARM_DOCKER) {
		verdict_set(&r->v[DIM_CONTROL], GRADE_NOT_APPLICABLE,
			    "Docker has no lease of a service beyond its container",
			    "HB-06 legitimate_control (leased server)");
		return;
	}
	snprintf(policy, sizeof(policy), "%s/cases/lifecycle/hb06_lease_policy.json",
		 cr->ctx->scenarios_dir);
	snprintf(rec, sizeof(rec), "%s/record-lease.json", cr->records);
	snprintf(sock, sizeof(sock), "%s/svc.sock", cr->task);
	/* The leak's marker: a sleep nobody else runs. */
	snprintf(token, sizeof(token), "60.%d", (int)getpid());
	snprintf(name, sizeof(name), "paddock-eval-hb06-lease-%d", (int)getpid());
	log_path(cr->ctx, r, "lease.log", log, sizeof(log));
	argv_paddock_run(&a, cr->ctx, r, policy, r->knob, cr->fx.dir, rec);
	argv_words(&a, "--name", name, "--", "sh", "-c", "( setsid sleep \"$1\" & ); sleep 0.5",
		   "sh", token, NULL);
	o.ran = run_vec(cr->ctx, cr->ctx->drop, &a, log, 30000, &st) == 0 && st == 0;
	result_evidence(r, "exit",
			"lease run (policy hb06_lease_policy.json, lease 4s): paddock "
			"run returned %d at its main command's end",
			st);
	if (record_get(rec, "session.id", id, sizeof(id)) < 0)
		o.ran = false;
	if (o.ran) {
		lease_views(cr->ctx, r, id, rec, &o);
		lease_watch(cr, sock, token, id, state, sizeof(state), &o);
		o.probed_after = strcmp(state, "ended") == 0;
		o.ok_after = o.probed_after && lease_probe(sock);
		record_get(rec, "services.0.ended", ended, sizeof(ended));
		case_record(cr, rec, NULL);
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
	lease_teardown(cr, id, state, token);
}

/* A and B: B always enforced; A with the arm's knob, --ttl 3s. */
static int start(struct case_run *cr, struct hb06 *x)
{
	if (cr->r->kind == ARM_DOCKER) {
		/* The container's "ready" file stays inside it (/tmp). */
		if (start_docker(cr, x->name_b, "exec sleep 300", &x->B) < 0 ||
		    start_docker(cr, x->name_a, "set -- /tmp; " A_SCRIPT, &x->A) < 0)
			return -1;
	} else if (start_paddock(cr, x->name_b, "60s", NULL, false, "exec sleep 300", &x->B) < 0 ||
		   start_paddock(cr, x->name_a, "3s", x->rec, true, A_SCRIPT, &x->A) < 0) {
		return -1;
	}
	return 0;
}

/* Expiry through the supervisor (docker: docker stop). */
static void expire(struct case_run *cr, struct hb06 *x)
{
	int st = -1;

	if (cr->r->kind == ARM_DOCKER) {
		char *stop[] = {"docker", "stop", "-t", "2", x->name_a, NULL};

		run_argv(cr->ctx, false, stop, NULL, 30000, &st);
		result_evidence(cr->r, "exit", "docker stop A: status %d", st);
	} else {
		char *w[] = {cr->ctx->paddock, "wait", x->A.id, NULL};

		run_argv(cr->ctx, cr->ctx->drop, w, NULL, 30000, &st);
		result_evidence(cr->r, "exit", "paddock wait A: status %d (expired by --ttl 3s)",
				st);
	}
}

static void run(struct case_run *cr)
{
	struct hb06 *x = cr->priv;
	struct result *r = cr->r;
	bool docker = r->kind == ARM_DOCKER;
	char ready[PATH_MAX + 16];
	size_t a_alive, b_alive, detached;
	struct proc_entry e;
	struct expiry_obs eo;

	snprintf(x->name_a, sizeof(x->name_a), "paddock-eval-hb06-a-%d", (int)getpid());
	snprintf(x->name_b, sizeof(x->name_b), "paddock-eval-hb06-b-%d", (int)getpid());
	snprintf(x->rec, sizeof(x->rec), "%s/record-a.json", cr->records);
	snprintf(ready, sizeof(ready), "%s/ready", cr->task);
	if (start(cr, x) < 0) {
		result_not_executed(r, docker ? "docker run failed"
					      : "paddock run --detach failed (see the log)");
		return;
	}
	/* Ready: the detached descendant exists. Docker's "ready" is not
	 * shared; give it the same time. */
	for (int i = 0; i < 50 && (docker || access(ready, F_OK) != 0); i++) {
		sleep_ms(100);
		if (docker && i >= 5)
			break;
	}
	x->A.pidns = inventory_read(x->A.root, &e) == 0 ? e.pidns : 0;
	x->B.pidns = inventory_read(x->B.root, &e) == 0 ? e.pidns : 0;
	inventory_of(x->A.root, x->A.pidns, &x->a0);
	inventory_of(x->B.root, x->B.pidns, &x->b0);
	detached = detached_count(&x->a0, x->A.root);
	list(r, "A before", &x->a0);
	list(r, "B before", &x->b0);
	expire(cr, x);
	sleep_ms(300);
	a_alive = alive_count(&x->a0);
	b_alive = alive_count(&x->b0);
	list(r, "A after", &x->a0);
	eo = (struct expiry_obs){.a_before = x->a0.n,
				 .b_before = x->b0.n,
				 .a_alive = a_alive,
				 .b_alive = b_alive,
				 .detached = detached,
				 .record_survivors = -1};
	if (!docker) {
		char v[64] = "";
		struct record_view rv;

		if (record_get(x->rec, "ended", v, sizeof(v)) == 0)
			result_evidence(r, "record", "A ended: %s", v);
		if (record_get(x->rec, "survivors", v, sizeof(v)) == 0)
			result_evidence(r, "record", "A survivors listed by paddock: %s", v);
		case_record(cr, x->rec, &rv);
		eo.record_read = rv.read;
		eo.record_survivors = rv.survivors;
	}
	result_evidence(r, "inventory",
			"A: %zu processes before, %zu detached descendants, %zu alive "
			"after expiry; B: %zu before, %zu alive after",
			x->a0.n, detached, a_alive, x->b0.n, b_alive);
	grade_expiry(&eo, &r->v[DIM_ENFORCEMENT], &r->v[DIM_EVIDENCE]);
	/* The control last: a leak it finds beside a leased service lowers
	 * the enforcement grade set above. */
	control_lease(cr);
}

/* Stop B, remove both, and SIGKILL by pidfd (after checking the start
 * time) whatever of either inventory is still alive. */
static void teardown(struct case_run *cr)
{
	struct hb06 *x = cr->priv;
	int st = -1;

	if (cr->r->kind == ARM_DOCKER) {
		char *rm[] = {"docker", "rm", "-f", x->name_a, x->name_b, NULL};

		if (x->name_a[0])
			run_argv(cr->ctx, false, rm, NULL, 30000, &st);
	} else {
		char *stop[] = {cr->ctx->paddock, "stop", "--grace", "0s", x->B.id, NULL};
		char *wait_a[] = {cr->ctx->paddock, "wait", x->A.id, NULL};

		if (x->B.id[0])
			run_argv(cr->ctx, cr->ctx->drop, stop, NULL, 30000, &st);
		if (x->A.id[0])
			run_argv(cr->ctx, cr->ctx->drop, wait_a, NULL, 30000, &st);
		paddock_session_end(cr->ctx, x->A.id, false);
		paddock_session_end(cr->ctx, x->B.id, false);
	}
	sleep_ms(100);
	reap_leftovers(cr->r, &x->a0, "A");
	reap_leftovers(cr->r, &x->b0, "B");
}

const struct eval_case hb06_case = {
    .id = "HB-06",
    .title = "Workload expiry accounts for descendants",
    .policy = "cases/lifecycle/hb06_policy.json",
    .arms = arms,
    .fixture = CASE_DIR | CASE_TASK | CASE_RECORDS,
    .priv_size = sizeof(struct hb06),
    .run = run,
    .teardown = teardown,
};
