/* HB-05: a busy port does not transfer ownership.
 *
 * Two sessions of two owners. B (user paddock-test2) publishes a marker
 * server on a fixed loopback port P (`--port 127.0.0.1:P:P`); A (user
 * paddock-test, the workload user) then, while a thread checks B's health
 * every 20 ms from the host (connect to P, read B's marker):
 *
 *  1. asks for 127.0.0.1:P fixed: must end 125 with "is in use; nothing
 *     started" and register no session;
 *  2. asks for 127.0.0.1:auto with sandbox port P (so "auto" would prefer
 *     B's port number): must get another endpoint, which names A's session
 *     and generation and returns A's marker (the control);
 *  3. tries to stop B: `paddock stop` by B's id and by B's name, and a raw
 *     "stop" on B's control socket sent with A's uid as effective uid (the
 *     harness lends the process filesystem access with fsuid 0, so that the
 *     supervisor's SO_PEERCRED check is what is tested, not the socket's
 *     mode): every one must be refused.
 *
 * Evidence from outside: the health counters, B's registry entry (init pid
 * and start time, supervisor, state, generation, endpoint) before and after
 * and its init alive by start time, the listener table (/proc/net/tcp: one
 * listener on P, created by B's uid), A's session.json and ps --json.
 * Teardown stops A as its owner and B as its owner (never by port or name
 * of someone else) and removes both entries. Arm weakened:no-owner-check
 * starts B with that paddock knob: A's raw stop is then obeyed and the
 * case must FAIL. */
#include "../../lib/case.h"
#include "../../observers/observe.h"
#include "../../observers/selftest.h"
#include "../../../include/io.h"
#include "hb05_grade.h"
#include "hb05_procs.h"

#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <netinet/in.h>
#include <pthread.h>
#include <pwd.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/fsuid.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/* docker stop needs the engine's socket, which is root: there is no owner
 * check to test, and publishing a port (-p) needs a bridge network, which
 * this harness does not use. */
#define NA_REASON                                                                        \
	"Docker has no per-owner stop authority (its socket is root-equivalent) and -p " \
	"publishing "                                                                    \
	"needs a bridge network"
#define NA_SCOPE "HB-05 boundary (only the owner may stop); harness rule: --network none/host only"

static const struct case_arm arms[] = {
    {.name = "enforced"},
    /* B's session without the SO_PEERCRED check: A's raw stop gets in. */
    {.name = "weakened:no-owner-check"},
    {.name = "docker",
     .na_reason = {NA_REASON, NA_REASON, NA_REASON},
     .na_scope = {NA_SCOPE, NA_SCOPE, NA_SCOPE}},
    {.name = NULL},
};

/* A marker server: one line per connection. python3 is on the host and
 * /usr is bound read-only (busybox nc also exists, but its -l -k flags vary
 * by build). */
static const char server_py[] =
    "import socket,sys\n"
    "s=socket.socket(); s.setsockopt(socket.SOL_SOCKET,socket.SO_REUSEADDR,1)\n"
    "s.bind(('127.0.0.1',int(sys.argv[1]))); s.listen(64)\n"
    "while True:\n"
    "  c,_=s.accept(); c.sendall(sys.argv[2].encode()+b'\\n'); c.close()\n";

struct health {
	int port;
	char marker[64];
	atomic_bool stop;
	pthread_t thread;
	bool running;
	size_t checks, fails; /* written by the thread only, read after join */
	char first_fail[160];
};

static void *health_loop(void *arg)
{
	struct health *h = arg;

	while (!atomic_load(&h->stop)) {
		char got[128];
		int r = observe_connect_tcp(h->port, 1000, got, sizeof(got));

		h->checks++;
		if (r < 0 || strcmp(got, h->marker) != 0) {
			if (!h->fails++)
				snprintf(h->first_fail, sizeof(h->first_fail), "check %zu: %s",
					 h->checks, r < 0 ? strerror(-r) : got);
		}
		sleep_ms(20);
	}
	return NULL;
}

struct sess {
	char id[128], name[96];
	char init_pid[32], init_start[32], sup_pid[32], sup_start[32], state[32], gen[32], host[64];
};

static int sess_read(uid_t owner, struct sess *s)
{
	char p[512];

	session_json_path(owner, s->id, p, sizeof(p));
	if (record_get(p, "init.pid", s->init_pid, sizeof(s->init_pid)) < 0 ||
	    record_get(p, "init.start_time", s->init_start, sizeof(s->init_start)) < 0 ||
	    record_get(p, "supervisor.pid", s->sup_pid, sizeof(s->sup_pid)) < 0 ||
	    record_get(p, "supervisor.start_time", s->sup_start, sizeof(s->sup_start)) < 0 ||
	    record_get(p, "state", s->state, sizeof(s->state)) < 0 ||
	    record_get(p, "generation", s->gen, sizeof(s->gen)) < 0)
		return -1;
	if (record_get(p, "endpoints.0.host", s->host, sizeof(s->host)) < 0)
		s->host[0] = '\0';
	return 0;
}

static bool sess_same(const struct sess *a, const struct sess *b)
{
	return strcmp(a->init_pid, b->init_pid) == 0 && strcmp(a->init_start, b->init_start) == 0 &&
	       strcmp(a->sup_pid, b->sup_pid) == 0 && strcmp(a->sup_start, b->sup_start) == 0 &&
	       strcmp(a->state, b->state) == 0 && strcmp(a->gen, b->gen) == 0 &&
	       strcmp(a->host, b->host) == 0;
}

static int free_port(void)
{
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0), port = -1;
	struct sockaddr_in sa = {.sin_family = AF_INET};
	socklen_t len = sizeof(sa);

	if (fd < 0)
		return -1;
	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (bind(fd, (struct sockaddr *)&sa, sizeof(sa)) == 0 &&
	    getsockname(fd, (struct sockaddr *)&sa, &len) == 0)
		port = ntohs(sa.sin_port);
	close(fd);
	return port;
}

/* argv of `paddock run --detach --name NAME --port SPEC -- python3 -c SRV P MARK` */
static void server_argv(struct argv_buf *a, const struct eval_ctx *ctx, struct result *r,
			const char *name, const char *spec, const char *port, const char *mark,
			const char *rec, bool detach, const char *knob)
{
	argv_paddock_run(a, ctx, r, r->policy_path, knob, NULL, rec);
	if (detach)
		argv_add(a, "--detach");
	argv_words(a, "--name", name, "--port", spec, "--", "python3", "-c", server_py, port, mark,
		   NULL);
}

/* "stop" on B's control socket from a process whose effective uid is A's.
 * The saved uid stays 0 so that setfsuid(0) may give the path lookup and
 * the socket's write permission back: the supervisor's SO_PEERCRED check
 * (which reports the effective uid) is then the only thing between A and
 * B. Reply in buf; negative errno when no reply came. */
static int stop_via_socket(const struct eval_ctx *ctx, const char *sock, char *buf, size_t n)
{
	int p[2], ws;
	pid_t pid;
	ssize_t k;

	if (pipe2(p, O_CLOEXEC) < 0)
		return -errno;
	pid = fork();
	if (pid < 0)
		return -errno;
	if (pid == 0) {
		int fd;
		struct sockaddr_un sa = {.sun_family = AF_UNIX};
		struct timeval tv = {5, 0};
		char reply[512];
		ssize_t got;

		close(p[0]);
		if (setgroups(0, NULL) < 0 ||
		    setresgid(ctx->subj->workload_gid, ctx->subj->workload_gid, 0) < 0 ||
		    setresuid(ctx->subj->workload_uid, ctx->subj->workload_uid, 0) < 0)
			_exit(125);
		setfsuid(0);
		setfsgid(0);
		fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
		snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", sock);
		if (fd < 0 || connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
			dprintf(p[1], "connect: %s", strerror(errno));
			_exit(1);
		}
		setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
		if (send(fd, "stop", 4, 0) < 0)
			_exit(1);
		got = recv(fd, reply, sizeof(reply) - 1, 0);
		if (got < 0)
			_exit(1);
		if (write_full(p[1], reply, (size_t)got) < 0)
			_exit(1);
		_exit(0);
	}
	close(p[1]);
	/* Until the child's exit closes the pipe. */
	k = read_full(p[0], buf, n - 1);
	buf[k > 0 ? k : 0] = '\0';
	close(p[0]);
	while (waitpid(pid, &ws, 0) < 0 && errno == EINTR)
		;
	return WIFEXITED(ws) && WEXITSTATUS(ws) == 0 ? 0 : -EIO;
}

static bool in_log(const char *log, const char *needle)
{
	static char buf[65536];

	return read_file(log, buf, sizeof(buf)) > 0 && strstr(buf, needle);
}

/* A's sessions under this name in the output of argv (paddock ps --all --json). */
static int listed(const struct eval_ctx *ctx, char *const argv[], const char *name, int *st)
{
	/* The caller's registry may hold many ended sessions: room for them. */
	static char buf[1 << 22];
	char needle[128];
	int k = 0;

	*st = -1;
	if (run_capture(ctx, ctx->drop, argv, buf, sizeof(buf), 10000, st) < 0 || *st != 0)
		return -1;
	snprintf(needle, sizeof(needle), "\"%s\"", name);
	for (char *q = buf; (q = strstr(q, needle)); q++)
		k++;
	return k;
}

static void step_fixed(struct eval_ctx *ctx, struct result *r, const char *recs, int P,
		       const char *mark_a, struct busy_port_obs *o)
{
	char spec[64], port[16], name[96], log[4300], rec[4300];
	char *ps[] = {(char *)ctx->paddock, "ps", "--all", "--json", NULL};
	struct argv_buf a;
	int n, st, st2 = -1;

	snprintf(spec, sizeof(spec), "127.0.0.1:%d:%d", P, P);
	snprintf(port, sizeof(port), "%d", P);
	snprintf(name, sizeof(name), "paddock-eval-hb05-a-fixed-%d", (int)getpid());
	snprintf(rec, sizeof(rec), "%s/record-a-fixed.json", recs);
	log_path(ctx, r, "a-fixed.log", log, sizeof(log));
	server_argv(&a, ctx, r, name, spec, port, mark_a, rec, true, NULL);
	o->fixed_ran = run_vec(ctx, ctx->drop, &a, log, 30000, &o->fixed_status) == 0;
	o->fixed_in_use = in_log(log, "is in use; nothing started");
	n = listed(ctx, ps, name, &st);
	o->fixed_listed = n >= 0;
	o->fixed_nothing = n == 0;
	if (n < 0) {
		/* Keep what ps said (its stderr) for whoever reads the record. */
		log_path(ctx, r, "a-ps.log", log, sizeof(log));
		(void)run_argv(ctx, ctx->drop, ps, log, 10000, &st2);
		result_evidence(r, "exit",
				"A fixed 127.0.0.1:%d: status %d, \"in use\" line %s; paddock ps "
				"--all --json failed (status %d, again %d: %s)",
				P, o->fixed_status, o->fixed_in_use ? "printed" : "MISSING", st,
				st2, log);
		return;
	}
	result_evidence(r, "exit",
			"A fixed 127.0.0.1:%d: status %d, \"in use\" line %s, sessions "
			"registered under its name %d",
			P, o->fixed_status, o->fixed_in_use ? "printed" : "MISSING", n);
}

static void step_auto(struct eval_ctx *ctx, struct result *r, int P, const char *mark_a,
		      struct sess *A, struct busy_port_obs *o)
{
	char spec[64], port[16], p[512], sess_id[64] = "", gen[32] = "", got[128] = "";
	struct argv_buf a;
	int st = -1, rc = -1;

	snprintf(spec, sizeof(spec), "127.0.0.1:auto:%d", P);
	snprintf(port, sizeof(port), "%d", P);
	server_argv(&a, ctx, r, A->name, spec, port, mark_a, NULL, true, NULL);
	if (capture_vec(ctx, ctx->drop, &a, A->id, sizeof(A->id), 30000, &st) < 0 || st != 0) {
		result_evidence(r, "exit", "A auto: paddock run --detach status %d", st);
		A->id[0] = '\0';
		return;
	}
	session_json_path(ctx->subj->workload_uid, A->id, p, sizeof(p));
	if (sess_read(ctx->subj->workload_uid, A) < 0 || !A->host[0]) {
		result_evidence(r, "record", "A auto: no endpoint in A's session.json");
		return;
	}
	record_get(p, "endpoints.0.session", sess_id, sizeof(sess_id));
	record_get(p, "endpoints.0.generation", gen, sizeof(gen));
	o->auto_port = atoi(strrchr(A->host, ':') ? strrchr(A->host, ':') + 1 : "0");
	o->auto_owned = strcmp(sess_id, A->id) == 0 && strcmp(gen, A->gen) == 0;
	for (int i = 0; i < 60 && rc < 0; i++) {
		rc = observe_connect_tcp(o->auto_port, 1000, got, sizeof(got));
		if (rc < 0 || strcmp(got, mark_a) != 0) {
			rc = -1;
			sleep_ms(50);
		}
	}
	o->auto_marker = rc == 0;
	result_evidence(r, "record",
			"A auto: session %s gen %s, endpoint %s names session %s gen "
			"%s; answer \"%s\" (A's marker %s)",
			A->id, A->gen, A->host, sess_id, gen, got, mark_a);
}

static void step_stops(struct eval_ctx *ctx, struct result *r, const struct sess *B, uid_t uid_b,
		       struct busy_port_obs *o)
{
	const char *targets[] = {B->id, B->name};
	char sock[512], reply[512] = "";

	for (size_t i = 0; i < 2; i++) {
		char *argv[] = {ctx->paddock, "stop", "--grace", "0s", (char *)targets[i], NULL};
		char out[512] = "";
		int st = -1;

		o->stops++;
		if (run_capture(ctx, ctx->drop, argv, out, sizeof(out), 30000, &st) == 0 && st != 0)
			o->stops_refused++;
		result_evidence(r, "exit", "A: paddock stop %s (B's %s): status %d", targets[i],
				i ? "name" : "id", st);
	}
	snprintf(sock, sizeof(sock), "/tmp/paddock-%u/%s/control", (unsigned)uid_b, B->id);
	o->stops++;
	if (stop_via_socket(ctx, sock, reply, sizeof(reply)) == 0 &&
	    strncmp(reply, "error", 5) == 0)
		o->stops_refused++;
	result_evidence(r, "exit", "A (euid %u): \"stop\" on B's control socket: reply \"%s\"",
			(unsigned)ctx->subj->workload_uid, reply);
}

struct hb05 {
	struct busy_port_obs o;
	struct health h, h1; /* B's health; A1's during the same-owner conflict */
	struct sess A, B, A1;
	uid_t uid_b;
	gid_t gid_b;
	char mark_a[64], name_a2[96];
	/* B's processes by pid and start time, and its listener's holder(s),
	 * read before A acted (idents_ok). */
	struct idents bid, holder;
	bool idents_ok;
};

/* A second owner and port forwards: without them there is nothing to test. */
static int probe(struct case_run *cr, struct err *why)
{
	struct hb05 *x = cr->priv;
	struct passwd *pw = getpwnam("paddock-test2");

	if (!pw)
		return err_set(why, ENOENT, "no user paddock-test2 (scenarios/run.sh creates it)");
	if (!cr->ctx->drop)
		return err_set(why, EPERM, "not root: cannot run a second owner");
	/* Against a paddock without port forwards (--paddock PATH). */
	if (!paddock_accepts_policy(cr->ctx,
				    "{\"version\": 1, \"ports\": [{\"host\": \"127.0.0.1:auto\", "
				    "\"sandbox\": 8080}]}\n",
				    "\"ports\"", why->msg, sizeof(why->msg)))
		return -ENOTSUP;
	x->uid_b = pw->pw_uid;
	x->gid_b = pw->pw_gid;
	return 0;
}

/* B, as its own owner, on a port free a moment ago (a race with the rest of
 * the host: one retry with another port); then until it answers. */
static int start_b(struct case_run *cr, struct hb05 *x)
{
	char port[16], spec[64], log[PATH_MAX + 64];
	int st = -1, P = -1;

	log_path(cr->ctx, cr->r, "b.log", log, sizeof(log));
	for (int tries = 0; tries < 2 && !x->B.id[0]; tries++) {
		struct argv_buf a;

		P = free_port();
		snprintf(port, sizeof(port), "%d", P);
		snprintf(spec, sizeof(spec), "127.0.0.1:%d:%d", P, P);
		/* The weakened arm turns B's owner check off (--weaken
		 * no-owner-check): A's raw stop must then get through. */
		server_argv(&a, cr->ctx, cr->r, x->B.name, spec, port, x->h.marker, NULL, true,
			    cr->r->kind == ARM_WEAKENED ? cr->r->knob : NULL);
		if (capture_vec_as(cr->ctx, x->uid_b, x->gid_b, &a, x->B.id, sizeof(x->B.id), 30000,
				   &st) < 0 ||
		    st != 0)
			x->B.id[0] = '\0';
	}
	x->o.b_port = P;
	if (!x->B.id[0] || sess_read(x->uid_b, &x->B) < 0)
		return -1;
	x->h.port = P;
	for (int i = 0; i < 100; i++) {
		char got[128];

		if (observe_connect_tcp(P, 1000, got, sizeof(got)) == 0 &&
		    !strcmp(got, x->h.marker))
			break;
		sleep_ms(50);
	}
	return 0;
}

static void health_start(struct health *h)
{
	atomic_store(&h->stop, false);
	h->checks = h->fails = 0;
	h->first_fail[0] = '\0';
	h->running = pthread_create(&h->thread, NULL, health_loop, h) == 0;
}

static void health_stop(struct health *h)
{
	if (!h->running)
		return;
	atomic_store(&h->stop, true);
	pthread_join(h->thread, NULL);
	h->running = false;
}

/* Until port answers marker (up to 5 s). */
static bool answers(int port, const char *marker)
{
	for (int i = 0; i < 100; i++) {
		char got[128];

		if (observe_connect_tcp(port, 1000, got, sizeof(got)) == 0 && !strcmp(got, marker))
			return true;
		sleep_ms(50);
	}
	return false;
}

/* B's processes by identity (host pid and start time): its pid namespace,
 * its supervisor, the holder of its listener. make eval-selftest
 * (hb05-idents-blind): none are read, so the grade must be UNKNOWN. */
static void read_idents(struct case_run *cr, struct hb05 *x)
{
	int rs, rl;

	x->bid.n = x->holder.n = 0;
	if (selftest_on("hb05-idents-blind")) {
		result_evidence(cr->r, "selftest", "hb05-idents-blind: B's processes not read");
		return;
	}
	rs = idents_session((pid_t)atoi(x->B.init_pid), strtoull(x->B.init_start, NULL, 10),
			    (pid_t)atoi(x->B.sup_pid), strtoull(x->B.sup_start, NULL, 10), &x->bid);
	rl = idents_listener(x->o.b_port, &x->holder);
	for (size_t i = 0; i < x->holder.n; i++)
		if (x->bid.n < IDENTS_MAX)
			x->bid.v[x->bid.n++] = x->holder.v[i];
	x->idents_ok = rs == 0 && rl > 0;
	for (size_t i = 0; i < x->bid.n; i++)
		result_evidence(cr->r, "inventory",
				"B's process before A acted: host pid %d start %llu (%s)",
				(int)x->bid.v[i].pid, x->bid.v[i].start, x->bid.v[i].what);
	if (!x->idents_ok)
		result_evidence(
		    cr->r, "inventory",
		    "B's processes: pid namespace and supervisor %s, listener holders %d",
		    rs == 0 ? "read" : strerror(-rs), rl);
}

/* A's port-based and signal-based kills of B's processes, as A (make
 * eval-selftest hb05-kill-as-owner: as B, the boundary broken on purpose:
 * the kernel then carries them out and the grade must FAIL). */
static void step_kills(struct case_run *cr, struct hb05 *x)
{
	struct busy_port_obs *o = &x->o;
	bool owner = selftest_on("hb05-kill-as-owner");
	uid_t uid = owner ? x->uid_b : cr->ctx->subj->workload_uid;
	gid_t gid = owner ? x->gid_b : cr->ctx->subj->workload_gid;
	char lines[2048] = "", spec[32], flog[PATH_MAX + 64];
	char *fu[] = {"fuser", "-k", spec, NULL};
	int st = -1;

	snprintf(spec, sizeof(spec), "%d/tcp", o->b_port);
	log_path(cr->ctx, cr->r, "a-fuser.log", flog, sizeof(flog));
	if (run_argv_as(cr->ctx, uid, gid, fu, flog, 10000, &st) < 0)
		st = -1;
	o->fuser_ran = st >= 0 && st != 126 && st != 127;
	o->fuser_status = st;
	result_evidence(cr->r, "exit", "%s (uid %u): fuser -k %s: status %d (%s)",
			owner ? "B" : "A", (unsigned)uid, spec, st,
			!o->fuser_ran ? "did not run: psmisc missing?"
			: st == 0     ? "it found a process to kill"
				      : "no process of its own on the port");
	if (x->bid.n && idents_kill_as(&x->bid, uid, gid, &o->kills, &o->kills_refused,
				       &o->kills_accepted, lines, sizeof(lines)) < 0)
		o->kills = o->kills_refused = o->kills_accepted = 0;
	for (char *q = lines; (q = strchr(q, '\n'));)
		*q = ';';
	result_evidence(cr->r, "exit",
			"%s (uid %u): SIGKILL by kill(2) and pidfd_send_signal(2) to B's %zu "
			"processes: %zu attempts, %zu refused (EPERM), %zu carried out [pid how "
			"errno: %s]",
			owner ? "selftest hb05-kill-as-owner: B" : "A", (unsigned)uid, x->bid.n,
			o->kills, o->kills_refused, o->kills_accepted, lines);
}

/* Same owner: A1 (A's) holds a fixed port Q; A asks for Q again in a
 * second session while a thread checks A1 every 20 ms. make
 * eval-selftest (hb05-same-owner-hit): the harness SIGKILLs A1's listener
 * holder first, as a takeover would: the grade must FAIL. */
static void step_same_owner(struct case_run *cr, struct hb05 *x)
{
	struct busy_port_obs *o = &x->o;
	const struct eval_ctx *ctx = cr->ctx;
	char spec[64], port[16], log[PATH_MAX + 64];
	char *ps[] = {(char *)ctx->paddock, "ps", "--all", "--json", NULL};
	struct idents h0 = {0}, h1 = {0};
	struct sess A1b;
	struct argv_buf a;
	int st = -1, Q = free_port(), n;

	snprintf(spec, sizeof(spec), "127.0.0.1:%d:%d", Q, Q);
	snprintf(port, sizeof(port), "%d", Q);
	server_argv(&a, cr->ctx, cr->r, x->A1.name, spec, port, x->h1.marker, NULL, true, NULL);
	if (capture_vec(ctx, ctx->drop, &a, x->A1.id, sizeof(x->A1.id), 30000, &st) < 0 ||
	    st != 0 || sess_read(ctx->subj->workload_uid, &x->A1) < 0 ||
	    !answers(Q, x->h1.marker) || idents_listener(Q, &h0) <= 0) {
		result_evidence(cr->r, "exit", "A1 (fixed 127.0.0.1:%d): did not start (status %d)",
				Q, st);
		return;
	}
	x->h1.port = Q;
	health_start(&x->h1);
	sleep_ms(100);
	if (selftest_on("hb05-same-owner-hit") && inventory_kill(h0.v[0].pid, h0.v[0].start) == 0)
		result_evidence(cr->r, "selftest",
				"hb05-same-owner-hit: SIGKILL to A1's listener holder pid %d",
				(int)h0.v[0].pid);
	log_path(ctx, cr->r, "a-same.log", log, sizeof(log));
	server_argv(&a, cr->ctx, cr->r, x->name_a2, spec, port, x->mark_a, NULL, true, NULL);
	o->same_ran = run_vec(ctx, ctx->drop, &a, log, 30000, &o->same_status) == 0;
	o->same_in_use = in_log(log, "is in use; nothing started");
	n = listed(ctx, ps, x->name_a2, &st);
	o->same_listed = n >= 0;
	o->same_nothing = n == 0;
	sleep_ms(200);
	health_stop(&x->h1);
	o->a1_checks = x->h1.checks;
	o->a1_fails = x->h1.fails;
	A1b = x->A1;
	o->a1_read = sess_read(ctx->subj->workload_uid, &A1b) == 0 && idents_listener(Q, &h1) >= 0;
	o->a1_unchanged =
	    o->a1_read && sess_same(&x->A1, &A1b) && idents_has(&h1, &h0.v[0]) &&
	    inventory_alive((pid_t)atoi(x->A1.init_pid), strtoull(x->A1.init_start, NULL, 10));
	result_evidence(cr->r, "exit",
			"same owner: A1 %s holds 127.0.0.1:%d (listener holder pid %d start "
			"%llu); A's second session for it: status %d, \"in use\" line %s, "
			"registered under its name %d",
			x->A1.id, Q, (int)h0.v[0].pid, h0.v[0].start, o->same_status,
			o->same_in_use ? "printed" : "MISSING", n);
	result_evidence(cr->r, "health",
			"A1: %zu checks every 20 ms across A's second request, %zu failed%s%s; "
			"entry and listener holder %s",
			o->a1_checks, o->a1_fails, x->h1.first_fail[0] ? "; first: " : "",
			x->h1.first_fail, o->a1_unchanged ? "unchanged" : "CHANGED");
}

/* A's three steps while a thread checks B's health every 20 ms. */
static void steps(struct case_run *cr, struct hb05 *x)
{
	struct health *h = &x->h;
	int P = x->o.b_port;

	health_start(h);
	if (h->running) {
		sleep_ms(200); /* a baseline before A acts */
		step_fixed(cr->ctx, cr->r, cr->records, P, x->mark_a, &x->o);
		step_auto(cr->ctx, cr->r, P, x->mark_a, &x->A, &x->o);
		step_same_owner(cr, x);
		step_stops(cr->ctx, cr->r, &x->B, x->uid_b, &x->o);
		step_kills(cr, x);
		sleep_ms(300); /* B must still answer after A's stops and kills */
		health_stop(h);
		x->o.checks = h->checks;
		x->o.check_fails = h->fails;
	}
	result_evidence(cr->r, "health",
			"B: %zu checks every 20 ms across A's actions, %zu failed%s%s", x->o.checks,
			x->o.check_fails, h->first_fail[0] ? "; first: " : "", h->first_fail);
}

/* After A acted: B's processes by pid and start time, and its listener's
 * holder (no listener at all is a fact too: not the same holder). */
static void after_idents(struct case_run *cr, struct hb05 *x)
{
	struct busy_port_obs *o = &x->o;
	struct idents h1 = {0};
	int rl = idents_listener(o->b_port, &h1);

	o->idents = x->bid.n;
	o->idents_read = x->idents_ok && (rl >= 0 || rl == -ENOENT);
	if (!o->idents_read)
		return;
	idents_compare(&x->bid, &o->idents_ended, &o->idents_replaced);
	o->holder_same = x->holder.n > 0;
	for (size_t i = 0; i < x->holder.n; i++)
		o->holder_same &= idents_has(&h1, &x->holder.v[i]);
	result_evidence(cr->r, "inventory",
			"B's %zu processes after A acted (by pid and start time): %zu ended, %zu "
			"pids now another process; listener holder %s",
			x->bid.n, o->idents_ended, o->idents_replaced,
			o->holder_same ? "the same" : "CHANGED or gone");
}

/* After A acted: the listener table and B's registry entry again. */
static void after(struct case_run *cr, struct hb05 *x)
{
	struct result *r = cr->r;
	struct busy_port_obs *o = &x->o;
	struct sess B2 = x->B;
	uid_t uids[8];
	int n = observe_tcp_listeners(o->b_port, uids, 8);

	o->listener_read = n >= 0;
	o->listeners = n > 0 ? (size_t)n : 0;
	o->listener_is_b = n == 1 && uids[0] == x->uid_b;
	result_evidence(r, "listeners", "127.0.0.1:%d: %d listening socket(s)%s%u", o->b_port, n,
			n > 0 ? ", first created by uid " : "", n > 0 ? (unsigned)uids[0] : 0);
	o->b_read = sess_read(x->uid_b, &B2) == 0;
	o->b_unchanged =
	    o->b_read && sess_same(&x->B, &B2) &&
	    inventory_alive((pid_t)atoi(x->B.init_pid), strtoull(x->B.init_start, NULL, 10));
	result_evidence(r, "record",
			"B after: state %s gen %s init pid %s start %s endpoint %s "
			"(%s)",
			B2.state, B2.gen, B2.init_pid, B2.init_start, B2.host,
			o->b_unchanged ? "unchanged, init alive" : "CHANGED");
	after_idents(cr, x);
}

static void run(struct case_run *cr)
{
	struct hb05 *x = cr->priv;
	struct result *r = cr->r;
	pid_t me = getpid();

	snprintf(x->h.marker, sizeof(x->h.marker), "HB05-B-%d", (int)me);
	snprintf(x->mark_a, sizeof(x->mark_a), "HB05-A-%d", (int)me);
	snprintf(x->B.name, sizeof(x->B.name), "paddock-eval-hb05-b-%d", (int)me);
	snprintf(x->A.name, sizeof(x->A.name), "paddock-eval-hb05-a-%d", (int)me);
	snprintf(x->A1.name, sizeof(x->A1.name), "paddock-eval-hb05-a1-%d", (int)me);
	snprintf(x->name_a2, sizeof(x->name_a2), "paddock-eval-hb05-a2-%d", (int)me);
	snprintf(x->h1.marker, sizeof(x->h1.marker), "HB05-A1-%d", (int)me);
	if (start_b(cr, x) < 0) {
		result_not_executed(r, "session B (paddock-test2) did not start");
		return;
	}
	result_evidence(r, "record",
			"B: session %s owner uid %u gen %s init pid %s start %s "
			"endpoint %s",
			x->B.id, (unsigned)x->uid_b, x->B.gen, x->B.init_pid, x->B.init_start,
			x->B.host);
	read_idents(cr, x);
	steps(cr, x);
	after(cr, x);
	grade_busy_port(&x->o, &r->v[DIM_ENFORCEMENT]);
	grade_busy_port_control(&x->o, &r->v[DIM_CONTROL]);
	if (x->o.checks && x->o.b_read && x->o.listener_read)
		verdict_set(&r->v[DIM_EVIDENCE], GRADE_PASS, NULL, NULL);
	else
		verdict_set(&r->v[DIM_EVIDENCE], GRADE_UNKNOWN,
			    "health checks, B's registry entry or the listener table missing",
			    NULL);
}

/* Each owner stops and removes its own session. */
static void teardown(struct case_run *cr)
{
	struct hb05 *x = cr->priv;
	const struct subject *s = cr->ctx->subj;

	health_stop(&x->h);
	health_stop(&x->h1);
	paddock_session_end_as(cr->ctx, s->workload_uid, s->workload_gid, x->A.id, true);
	paddock_session_end_as(cr->ctx, s->workload_uid, s->workload_gid, x->A1.id, true);
	/* It should not exist; if it does it is A's own, by name. */
	if (x->o.same_ran && !x->o.same_nothing)
		paddock_session_end_as(cr->ctx, s->workload_uid, s->workload_gid, x->name_a2, true);
	if (x->o.fixed_ran && !x->o.fixed_nothing) {
		/* It should not exist; if it does it is A's own, by name. */
		char fixed[96];

		snprintf(fixed, sizeof(fixed), "paddock-eval-hb05-a-fixed-%d", (int)getpid());
		paddock_session_end_as(cr->ctx, s->workload_uid, s->workload_gid, fixed, true);
	}
	paddock_session_end_as(cr->ctx, x->uid_b, x->gid_b, x->B.id, true);
}

const struct eval_case hb05_case = {
    .id = "HB-05",
    .title = "A busy port does not transfer ownership",
    .policy = "cases/lifecycle/hb05_policy.json",
    .arms = arms,
    .fixture = CASE_RECORDS,
    .priv_size = sizeof(struct hb05),
    .probe = probe,
    .run = run,
    .teardown = teardown,
};
