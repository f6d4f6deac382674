/* HB-06: workload expiry accounts for descendants.
 *
 * Session A (the managed workload) starts a bounded child (sleep 20) and a
 * detached descendant (setsid plus a subshell that exits at once, so the
 * descendant is orphaned: sleep 120) and then waits; its policy also
 * leases a service (`held`, a python3 marker server on task/held.sock)
 * for 50 s, so a lease is held at every expiry. A is run three times, one
 * per expiry path, each in a workspace of its own: `ttl` (--ttl 5s;
 * `paddock wait` returns once it is over), `stop` (`paddock stop`) and
 * `supervisor-lost` (the harness SIGKILLs A's supervisor, which it
 * started, by pid and start time: no completion record; what is left is
 * the host's inventory: A's own pid namespace proven empty, or UNKNOWN).
 * Session B, another workload of the same owner, runs the whole time,
 * always enforced (hb06_b_policy.json): a marker server on a unix socket;
 * its registry entry (state, generation, init and supervisor by pid and
 * start time) and its answers are compared before and after, besides its
 * pids. Inventories before and after, read from the host's /proc by pid
 * namespace and by the parent links below A's paddock-init, identify every
 * process by host pid and start time. Each path is graded by
 * grade_expiry(), all of them and B by grade_expiry_paths(). Teardown
 * stops B and every A and SIGKILLs, by pidfd and only after checking the
 * start time, any process of an inventory still alive (the no-pidns arm
 * leaves the detached descendant behind). Docker: one path, docker stop.
 *
 * Control (hb06_lease.c): a fourth run (hb06_lease_policy.json) declares
 * a service with a 4 s lease; its main command starts a detached sleep
 * and ends. The server must answer after the main command's end and not
 * after the session ended, the lease be listed with owner, generation and
 * expiry, and the detached sleep be gone while the service lives. */
#include "../../lib/case.h"
#include "../../observers/observe.h"
#include "../../observers/selftest.h"
#include "hb06_grade.h"
#include "hb06_lease.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

static const struct case_arm arms[] = {
    {.name = "enforced"},
    {.name = "weakened:no-pidns"},
    {.name = "docker"},
    {.name = "oci:docker-runtime-paddock"},
    /* The oci arm without its pid namespace and paddock-init's sweep
     * (--weaken no-pidns,no-sweep, by the engine's runtime
     * paddock-weaken-no-pidns+no-sweep): A's detached descendant outlives
     * the stop, the arm must FAIL. */
    {.name = "oci-weakened:no-pidns+no-sweep"},
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

/* A's expiry paths: its --ttl, `paddock stop`, and its supervisor lost
 * (SIGKILLed by the harness, which started it). Docker has one: docker
 * stop. */
enum {
	P_TTL,
	P_STOP,
	P_LOST,
	N_PATHS
};
static const char *const path_names[N_PATHS] = {"ttl", "stop", "supervisor-lost"};

struct path {
	struct wl w;
	struct inv before;
	char name[64], rec[PATH_MAX + 64], ws[PATH_MAX], task[PATH_MAX + 8], sock[PATH_MAX + 16];
	struct expiry_obs o;
	/* A's pid namespace, held open from the inventory to teardown: a
	 * freed namespace's inode number is reused, and another sandbox
	 * (anyone's) would then pass for what is left of A. */
	int pidns_fd;
	bool pidns_held;
};

struct hb06 {
	struct wl B;
	struct inv b0;
	struct path p[N_PATHS];
	size_t n_paths;
	char name_b[64], b_ws[PATH_MAX], b_task[PATH_MAX + 8], b_sock[PATH_MAX + 16], b_mark[64],
	    b_view[256];
	struct other_obs bo;
	pid_t frozen; /* make eval-selftest hb06-freeze-other: B's server, SIGSTOPped */
	unsigned long long frozen_start;
};

#define HELD_MARK "HB06-HELD"
/* B: a marker server on a unix socket in its task directory. */
static const char b_server[] =
    "import socket,sys,os\ns=socket.socket(socket.AF_UNIX)\n"
    "try: os.unlink(sys.argv[1])\nexcept OSError: pass\n"
    "s.bind(sys.argv[1]); s.listen(8)\n"
    "while True:\n  c,_=s.accept(); c.sendall(sys.argv[2].encode()+b'\\n'); c.close()\n";

static int wl_read(struct case_run *cr, struct wl *w)
{
	char sj[PATH_MAX + 64], v[64];

	session_json_path(cr->ctx->subj->workload_uid, w->id, sj, sizeof(sj));
	if (record_get(sj, "init.pid", v, sizeof(v)) < 0)
		return -1;
	w->root = (pid_t)atoi(v);
	if (record_get(sj, "init.start_time", v, sizeof(v)) < 0)
		return -1;
	w->root_start = strtoull(v, NULL, 10);
	return 0;
}

/* `paddock run --detach --name NAME [--ttl TTL] -- sh -c A_SCRIPT sh TASK`
 * (A, with the arm's knob, A's policy) in workspace ws. */
static int start_a(struct case_run *cr, struct path *p, const char *ttl)
{
	struct argv_buf a;
	int st = -1;

	argv_paddock_run(&a, cr->ctx, cr->r, cr->r->policy_path, cr->r->knob, p->ws, p->rec);
	argv_words(&a, "--detach", "--name", p->name, NULL);
	if (ttl)
		argv_words(&a, "--ttl", ttl, NULL);
	argv_words(&a, "--", "sh", "-c", A_SCRIPT, "sh", p->task, NULL);
	if (capture_vec(cr->ctx, cr->ctx->drop, &a, p->w.id, sizeof(p->w.id), 30000, &st) < 0 ||
	    st != 0)
		return -1;
	return wl_read(cr, &p->w);
}

/* B, always enforced, under its own policy: the marker server. */
static int start_b(struct case_run *cr, struct hb06 *x)
{
	char policy[PATH_MAX + 64];
	struct argv_buf a;
	int st = -1;

	snprintf(policy, sizeof(policy), "%s/cases/lifecycle/hb06_b_policy.json",
		 cr->ctx->scenarios_dir);
	argv_paddock_run(&a, cr->ctx, cr->r, policy, NULL, x->b_ws, NULL);
	argv_words(&a, "--detach", "--name", x->name_b, "--", "python3", "-c", b_server, x->b_sock,
		   x->b_mark, NULL);
	if (capture_vec(cr->ctx, cr->ctx->drop, &a, x->B.id, sizeof(x->B.id), 30000, &st) < 0 ||
	    st != 0)
		return -1;
	return wl_read(cr, &x->B);
}

static int start_docker(struct case_run *cr, const char *name, const char *cmd, struct wl *w,
			bool other)
{
	char *insp[] = {"docker", "inspect", "-f", "{{.State.Pid}}", (char *)name, NULL};
	enum arm_kind kind = cr->r->kind;
	struct argv_buf a;
	char buf[128];
	int st = -1;
	struct proc_entry e;

	/* B, the other workload, is never weakened: the oci-weakened arm's
	 * weakening is A's alone (and paddock exec, B's probe, refuses a
	 * sandbox without its pid namespace). Its steps are the oci arm's. */
	if (other && cr->r->oci)
		cr->r->kind = ARM_DOCKER;
	argv_docker_detached(&a, cr->ctx, cr->r, name);
	cr->r->kind = kind;
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

/* B's view: registry state, generation, init and supervisor by pid and
 * start time (docker: status, pid, start, restart count). */
static bool b_view(struct case_run *cr, struct hb06 *x, char *out, size_t n)
{
	int st = -1;

	out[0] = '\0';
	if (result_docker_steps(cr->r)) {
		char *insp[] = {"docker",
				"inspect",
				"-f",
				"{{.State.Status}} pid {{.State.Pid}} started {{.State.StartedAt}} "
				"restarts {{.RestartCount}}",
				x->name_b,
				NULL};

		return run_capture(cr->ctx, false, insp, out, n, 10000, &st) == 0 && st == 0;
	} else {
		char sj[PATH_MAX + 64], v[6][48];
		const char *keys[6] = {"state",		 "generation",
				       "init.pid",	 "init.start_time",
				       "supervisor.pid", "supervisor.start_time"};

		session_json_path(cr->ctx->subj->workload_uid, x->B.id, sj, sizeof(sj));
		for (int i = 0; i < 6; i++)
			if (record_get(sj, keys[i], v[i], sizeof(v[i])) < 0)
				return false;
		snprintf(out, n, "state %s gen %s init %s start %s supervisor %s start %s", v[0],
			 v[1], v[2], v[3], v[4], v[5]);
		return true;
	}
}

/* B answers its marker (docker: docker exec echoes it). */
static bool b_probe(struct case_run *cr, struct hb06 *x)
{
	char got[128] = "";
	int st = -1;

	if (result_docker_steps(cr->r)) {
		char *ex[] = {"docker", "exec", x->name_b, "echo", x->b_mark, NULL};

		return run_capture(cr->ctx, false, ex, got, sizeof(got), 10000, &st) == 0 &&
		       st == 0 && strcmp(got, x->b_mark) == 0;
	}
	return observe_connect_unix(x->b_sock, 1000, got, sizeof(got)) == 0 &&
	       strcmp(got, x->b_mark) == 0;
}

static void b_probes(struct case_run *cr, struct hb06 *x, size_t *probes, size_t *ok)
{
	for (int i = 0; i < 3; i++) {
		*probes += 1;
		*ok += b_probe(cr, x);
		sleep_ms(100);
	}
}

static bool held_probe(const struct path *p)
{
	char got[64];

	return observe_connect_unix(p->sock, 1000, got, sizeof(got)) == 0 &&
	       strcmp(got, HELD_MARK) == 0;
}

/* A signal to pid only while it has this start time (by its pidfd). */
static int signal_ident(pid_t pid, unsigned long long start, int sig)
{
	int pfd = (int)syscall(SYS_pidfd_open, pid, 0), r = -ESRCH;
	struct proc_entry e;

	if (pfd < 0)
		return -errno;
	if (inventory_read(pid, &e) == 0 && e.start == start)
		r = syscall(SYS_pidfd_send_signal, pfd, sig, NULL, 0) < 0 ? -errno : 0;
	close(pfd);
	return r;
}

/* make eval-selftest (hb06-freeze-other): B's server SIGSTOPped after A's
 * expiries: every pid of B alive with its start time, its entry the same,
 * but it no longer answers; only the probes can tell (FAIL). SIGCONT in
 * teardown. */
static void freeze_other(struct case_run *cr, struct hb06 *x)
{
	if (!selftest_on("hb06-freeze-other"))
		return;
	for (size_t i = 0; i < x->b0.n && !x->frozen; i++)
		if (strcmp(x->b0.p[i].comm, "python3") == 0 &&
		    signal_ident(x->b0.p[i].pid, x->b0.p[i].start, SIGSTOP) == 0) {
			x->frozen = x->b0.p[i].pid;
			x->frozen_start = x->b0.p[i].start;
		}
	result_evidence(cr->r, "selftest", "hb06-freeze-other: B's server pid %d %s",
			(int)x->frozen, x->frozen ? "SIGSTOPped" : "NOT found");
}

static int start(struct case_run *cr, struct hb06 *x)
{
	if (result_docker_steps(cr->r)) {
		/* The container's "ready" file stays inside it (/tmp). */
		x->n_paths = 1;
		return start_docker(cr, x->name_b, "exec sleep 300", &x->B, true) < 0 ||
			       start_docker(cr, x->p[0].name, "set -- /tmp; " A_SCRIPT, &x->p[0].w,
					    false) < 0
			   ? -1
			   : 0;
	}
	x->n_paths = N_PATHS;
	/* B first (it runs the whole time), the TTL path last: its clock
	 * starts at its start. */
	if (start_b(cr, x) < 0 || start_a(cr, &x->p[P_STOP], NULL) < 0 ||
	    start_a(cr, &x->p[P_LOST], NULL) < 0 || start_a(cr, &x->p[P_TTL], "5s") < 0)
		return -1;
	return 0;
}

/* The supervisor of A's lost path, by pid and start time from its
 * registry entry, checked on the host (our workload user's paddock). */
static bool kill_supervisor(struct case_run *cr, struct path *p)
{
	char sj[PATH_MAX + 64], pid_s[32], start_s[32];
	struct proc_entry e;
	pid_t pid;

	session_json_path(cr->ctx->subj->workload_uid, p->w.id, sj, sizeof(sj));
	if (record_get(sj, "supervisor.pid", pid_s, sizeof(pid_s)) < 0 ||
	    record_get(sj, "supervisor.start_time", start_s, sizeof(start_s)) < 0)
		return false;
	pid = (pid_t)atoi(pid_s);
	if (inventory_read(pid, &e) < 0 || e.start != strtoull(start_s, NULL, 10) ||
	    e.uid != cr->ctx->subj->workload_uid || strcmp(e.comm, "paddock") != 0)
		return false;
	if (inventory_kill(pid, e.start) < 0)
		return false;
	/* paddock-init dies with its parent (PR_SET_PDEATHSIG); give the
	 * kernel a moment to end the pid namespace. */
	for (int i = 0; i < 30 && inventory_alive(p->w.root, p->w.root_start); i++)
		sleep_ms(100);
	return true;
}

/* Each path's expiry (docker: docker stop). */
static void expire(struct case_run *cr, struct hb06 *x)
{
	int st = -1;

	if (result_docker_steps(cr->r)) {
		char *stop[] = {"docker", "stop", "-t", "2", x->p[0].name, NULL};

		run_argv(cr->ctx, false, stop, NULL, 30000, &st);
		result_evidence(cr->r, "exit", "stop: docker stop A: status %d", st);
		/* Docker with paddock oci: A's completion record, written
		 * when its monitor ended (docker stop waited for that). */
		if (cr->r->oci)
			case_oci_record(cr, x->p[0].w.id);
		return;
	}
	{
		char *stop[] = {cr->ctx->paddock, "stop", x->p[P_STOP].w.id, NULL};
		char *w[] = {cr->ctx->paddock, "wait", x->p[P_TTL].w.id, NULL};

		run_argv(cr->ctx, cr->ctx->drop, stop, NULL, 30000, &st);
		result_evidence(cr->r, "exit", "stop: paddock stop A: status %d", st);
		x->p[P_LOST].o.lost = kill_supervisor(cr, &x->p[P_LOST]);
		result_evidence(cr->r, "exit", "supervisor-lost: A's supervisor %s by the harness",
				x->p[P_LOST].o.lost ? "SIGKILLed" : "NOT killed");
		run_argv(cr->ctx, cr->ctx->drop, w, NULL, 30000, &st);
		result_evidence(cr->r, "exit",
				"ttl: paddock wait A: status %d (expired by --ttl 5s)", st);
	}
}

/* After the expiry: each of A's processes gone or alive by the host's
 * /proc (a read that fails otherwise is inconclusive, never "gone"), and
 * what is left in A's own pid namespace. make eval-selftest:
 * hb06-inventory-blind makes every look inconclusive, hb06-lost-unproven
 * the lost path's pid namespace scan (as without a namespace of its own). */
static void look_after(struct case_run *cr, struct path *p, unsigned long self_ns)
{
	bool blind = selftest_on("hb06-inventory-blind");
	struct proc_entry *all = NULL;
	size_t n = 0;
	bool self = false;

	p->o.after_read = !blind;
	if (blind || (p->o.lost && selftest_on("hb06-lost-unproven")))
		result_evidence(cr->r, "selftest", "%s: the look after the expiry is %s",
				blind ? "hb06-inventory-blind" : "hb06-lost-unproven",
				blind ? "inconclusive" : "without the pid namespace scan");
	for (size_t i = 0; i < p->before.n; i++) {
		struct proc_entry e;
		int rc;

		if (inventory_alive(p->before.p[i].pid, p->before.p[i].start)) {
			p->o.a_alive++;
			continue;
		}
		rc = inventory_read(p->before.p[i].pid, &e);
		if (rc < 0 && rc != -ENOENT && rc != -ESRCH)
			p->o.after_read = false;
	}
	p->o.pidns_own = p->w.pidns && p->w.pidns != self_ns;
	if (blind || (p->o.lost && selftest_on("hb06-lost-unproven")) ||
	    inventory_scan(&all, &n) < 0)
		return;
	for (size_t i = 0; i < n; i++) {
		self |= all[i].pid == getpid();
		/* A zombie has ended (an orphaned init of the lost path may
		 * wait for a parent that never reaps it). */
		p->o.pidns_left += p->o.pidns_own && all[i].pidns == p->w.pidns &&
				   inventory_alive(all[i].pid, all[i].start);
	}
	p->o.pidns_scanned = self;
	free(all);
}

/* A path's record: survivors and how the leased service ended. */
static void path_record(struct case_run *cr, size_t k, struct path *p)
{
	char v[96] = "";
	struct record_view rv;

	if (record_get(p->rec, "ended", v, sizeof(v)) == 0)
		result_evidence(cr->r, "record", "%s: A ended: %s", path_names[k], v);
	case_record(cr, p->rec, &rv);
	p->o.record_read = rv.read;
	p->o.record_survivors = rv.survivors;
	v[0] = '\0';
	if (record_get(p->rec, "services.0.ended", v, sizeof(v)) == 0 && v[0]) {
		p->o.lease_label = true;
		p->o.lease_label_ok = strncmp(v, k == P_TTL ? "expired" : "stopped", 7) == 0;
	}
	result_evidence(cr->r, "record",
			"%s: A's record lists %d survivor(s); its leased service ended \"%s\"",
			path_names[k], rv.survivors, v);
}

/* Open A's pid namespace through its root and check, after the open,
 * that the root is still A's (same start time) and the namespace the one
 * it names: then the fd pins it. */
static int hold_pidns(struct path *p)
{
	char path[64];
	struct proc_entry e;
	struct stat st;
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/ns/pid", (int)p->w.root);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (fstat(fd, &st) < 0 || inventory_read(p->w.root, &e) < 0 || e.start != p->w.root_start ||
	    e.pidns != st.st_ino) {
		close(fd);
		return -ESRCH;
	}
	p->w.pidns = e.pidns;
	p->pidns_fd = fd;
	p->pidns_held = true;
	return 0;
}

static void paths_before(struct case_run *cr, struct hb06 *x)
{
	bool docker = result_docker_steps(cr->r);

	for (size_t k = 0; k < x->n_paths; k++) {
		struct path *p = &x->p[k];
		char ready[PATH_MAX + 16];

		snprintf(ready, sizeof(ready), "%s/ready", p->task);
		/* Ready: the detached descendant exists. Docker's "ready" is not
		 * shared; give it the same time. */
		for (int i = 0; i < 50 && (docker || access(ready, F_OK) != 0); i++) {
			sleep_ms(100);
			if (docker && i >= 5)
				break;
		}
		p->w.pidns = hold_pidns(p) == 0 ? p->w.pidns : 0;
		inventory_of(p->w.root, p->w.pidns, &p->before);
		p->o.detached = detached_count(&p->before, p->w.root);
		p->o.record_survivors = -1;
		p->o.lease_declared = !docker;
		/* The held lease answers right before the expiry. */
		for (int i = 0; !docker && i < 30 && !(p->o.lease_held = held_probe(p)); i++)
			sleep_ms(100);
	}
}

static void run(struct case_run *cr)
{
	struct hb06 *x = cr->priv;
	struct result *r = cr->r;
	bool docker = result_docker_steps(r);
	struct proc_entry e;
	struct expiry_obs obs[N_PATHS];
	unsigned long self_ns = inventory_read(getpid(), &e) == 0 ? e.pidns : 0;
	char view[256] = "";

	for (size_t k = 0; k < N_PATHS; k++) {
		struct path *p = &x->p[k];

		snprintf(p->name, sizeof(p->name), "paddock-eval-hb06-a%zu-%d", k, (int)getpid());
		snprintf(p->rec, sizeof(p->rec), "%s/record-a-%s.json", cr->records, path_names[k]);
		if (k == P_TTL) {
			snprintf(p->ws, sizeof(p->ws), "%s", cr->fx.dir);
			snprintf(p->task, sizeof(p->task), "%s", cr->task);
		} else {
			if (fixture_mkdir(cr->ctx, &cr->fx, k == P_STOP ? "ws-1" : "ws-2", p->ws,
					  sizeof(p->ws)) < 0 ||
			    fixture_mkdir(cr->ctx, &cr->fx, k == P_STOP ? "ws-1/task" : "ws-2/task",
					  p->task, sizeof(p->task)) < 0) {
				result_not_executed(r, "cannot make the paths' workspaces");
				return;
			}
		}
		snprintf(p->sock, sizeof(p->sock), "%s/held.sock", p->task);
	}
	snprintf(x->name_b, sizeof(x->name_b), "paddock-eval-hb06-b-%d", (int)getpid());
	snprintf(x->b_mark, sizeof(x->b_mark), "HB06-B-%d", (int)getpid());
	if (fixture_mkdir(cr->ctx, &cr->fx, "ws-b", x->b_ws, sizeof(x->b_ws)) < 0 ||
	    fixture_mkdir(cr->ctx, &cr->fx, "ws-b/task", x->b_task, sizeof(x->b_task)) < 0) {
		result_not_executed(r, "cannot make B's workspace");
		return;
	}
	snprintf(x->b_sock, sizeof(x->b_sock), "%s/b.sock", x->b_task);
	if (start(cr, x) < 0) {
		result_not_executed(r, docker ? "docker run failed"
					      : "paddock run --detach failed (see the log)");
		return;
	}
	paths_before(cr, x);
	x->B.pidns = inventory_read(x->B.root, &e) == 0 ? e.pidns : 0;
	inventory_of(x->B.root, x->B.pidns, &x->b0);
	for (int i = 0; i < 30 && !b_probe(cr, x); i++)
		sleep_ms(100);
	x->bo.read = b_view(cr, x, x->b_view, sizeof(x->b_view));
	b_probes(cr, x, &x->bo.probes_before, &x->bo.ok_before);
	for (size_t k = 0; k < x->n_paths; k++)
		list(r, path_names[docker ? P_STOP : k], &x->p[k].before);
	list(r, "B before", &x->b0);
	expire(cr, x);
	sleep_ms(300);
	freeze_other(cr, x);
	for (size_t k = 0; k < x->n_paths; k++) {
		struct path *p = &x->p[k];
		const char *nm = path_names[docker ? P_STOP : k];

		look_after(cr, p, self_ns);
		p->o.a_before = p->before.n;
		p->o.b_before = x->b0.n;
		p->o.b_alive = alive_count(&x->b0);
		p->o.lease_after = !docker && held_probe(p);
		list(r, nm, &p->before);
		if (!docker && k != P_LOST)
			path_record(cr, k, p);
		if (k == P_LOST && !docker)
			result_evidence(r, "record",
					"supervisor-lost: no completion record expected (%s); the "
					"grade rests on the host's inventory",
					access(p->rec, F_OK) == 0 ? "one exists" : "none");
		result_evidence(
		    r, "inventory",
		    "%s: A %zu processes before (%zu detached), %zu alive after; "
		    "pid namespace %s: %zu left%s; leased service %s before, %s after; B "
		    "%zu before, %zu alive",
		    nm, p->o.a_before, p->o.detached, p->o.a_alive,
		    p->o.pidns_own ? "A's own" : "NOT A's own", p->o.pidns_left,
		    p->o.pidns_scanned ? "" : " (NOT scanned)",
		    p->o.lease_held ? "answered" : "silent",
		    p->o.lease_after ? "STILL ANSWERS" : "gone", p->o.b_before, p->o.b_alive);
		obs[k] = p->o;
	}
	b_probes(cr, x, &x->bo.probes_after, &x->bo.ok_after);
	x->bo.same =
	    x->bo.read && b_view(cr, x, view, sizeof(view)) && strcmp(view, x->b_view) == 0;
	x->bo.read = x->bo.read && view[0];
	result_evidence(r, "inventory",
			"B before: %s; %zu of %zu probes answered. After: %s; %zu of %zu answered",
			x->b_view, x->bo.ok_before, x->bo.probes_before, view, x->bo.ok_after,
			x->bo.probes_after);
	grade_expiry_paths(obs, docker ? &path_names[P_STOP] : path_names, x->n_paths, &x->bo,
			   &r->v[DIM_ENFORCEMENT], &r->v[DIM_EVIDENCE]);
	/* The control last: a leak it finds beside a leased service lowers
	 * the enforcement grade set above. */
	hb06_control_lease(cr);
}

/* Stop B, end every A, and SIGKILL by pidfd (after checking the start
 * time) whatever of any inventory is still alive. */
static void teardown(struct case_run *cr)
{
	struct hb06 *x = cr->priv;
	int st = -1;

	if (x->frozen)
		signal_ident(x->frozen, x->frozen_start, SIGCONT);
	if (result_docker_steps(cr->r)) {
		char *rm[] = {"docker", "rm", "-f", x->p[0].name, x->name_b, NULL};

		if (x->p[0].name[0])
			run_argv(cr->ctx, false, rm, NULL, 30000, &st);
	} else {
		paddock_session_end(cr->ctx, x->B.id, true);
		for (size_t k = 0; k < N_PATHS; k++)
			paddock_session_end(cr->ctx, x->p[k].w.id, true);
	}
	sleep_ms(100);
	for (size_t k = 0; k < N_PATHS; k++) {
		reap_leftovers(cr->r, &x->p[k].before, path_names[k]);
		if (x->p[k].pidns_held)
			close(x->p[k].pidns_fd);
	}
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
