/* Integration: services and leases (policy "services") - a leased service
 * outlives the main command, paddock run returns at the main command's end,
 * and the session stays "retained" until the lease ends, paddock stop, or
 * the TTL. Checked from outside: the service is a unix-socket server in the
 * workspace that answers its marker; processes are found in the host's
 * /proc by their marker and by the session's pid namespace.
 *
 * Every test has its own registry (XDG_RUNTIME_DIR in its temporary tree).
 * The main command, the service and so paddock-init and the supervisor (a
 * fork of paddock run, same argv) all carry the test's marker: h_fini
 * SIGKILLs them by pid even when an assertion failed. */
#include "harness.h"

#include <sys/socket.h>
#include <sys/un.h>

TestSuite(services, .init = h_init, .fini = h_fini, .timeout = 120);

struct v_world {
	struct h_world w;
	char *xdg, *policy, *sock;
	const char *marker;
};

/* A unix-socket server answering argv[2] to every connection on argv[1]. */
#define SERVER                                                                                \
	"\"/usr/bin/python3\", \"-c\", \"import socket,sys\\ns=socket.socket(socket.AF_UNIX)" \
	"\\ns.bind(sys.argv[1])\\ns.listen(8)\\nwhile 1:\\n c=s.accept()[0]\\n "              \
	"c.sendall(sys.argv[2].encode())\\n c.close()\""

/* The policy: /usr, /bin, /lib, /proc, the workspace read-write, limits
 * (limits_json, may be NULL), and the service "web" with lease; extras adds
 * "plain" (no lease: sleep 300 MARKER) and "broken" (cannot be executed). */
static struct v_world v_world(const char *lease, bool extras, const char *limits_json)
{
	struct v_world v;
	const char *svc;

	v.w = h_world();
	v.xdg = h_mkdir(v.w.base, "xdg", 0700);
	cr_assert_eq(setenv("XDG_RUNTIME_DIR", v.xdg, 1), 0);
	v.marker = h_marker();
	v.sock = h_join(v.w.ws, "svc.sock");
	v.policy = h_join(v.w.base, "p.json");
	svc =
	    h_fmt("{\"name\": \"web\", \"argv\": [" SERVER ", \"%s\", \"%s\"], \"lease\": \"%s\"}",
		  v.sock, v.marker, lease);
	if (extras)
		svc =
		    h_fmt("%s, {\"name\": \"plain\", \"argv\": [\"sleep\", \"300\", \"%s\"]},"
			  " {\"name\": \"broken\", \"argv\": [\"/paddock-test-no-such-command\"]}",
			  svc, v.marker);
	h_write_file(
	    v.policy,
	    h_fmt("{\"version\": 1, \"mounts\": ["
		  "{\"type\": \"bind\", \"source\": \"/usr\", \"mode\": \"ro\"},"
		  "{\"type\": \"bind\", \"source\": \"/bin\", \"mode\": \"ro\", \"symlink\": "
		  "\"copy\"},"
		  "{\"type\": \"bind\", \"source\": \"/lib\", \"mode\": \"ro\", \"symlink\": "
		  "\"copy\"},"
		  "{\"type\": \"bind\", \"source\": \"/lib64\", \"mode\": \"ro\", \"symlink\": "
		  "\"copy\", \"optional\": true},"
		  "{\"type\": \"proc\", \"target\": \"/proc\"},"
		  "{\"type\": \"dev\", \"target\": \"/dev\"},"
		  "{\"type\": \"bind\", \"source\": \"${WORKSPACE}\", \"mode\": \"rw\"}],"
		  " \"cwd\": \"${WORKSPACE}\", \"limits\": {%s}, \"services\": [%s]}\n",
		  limits_json ? limits_json : "", svc),
	    0644);
	return v;
}

/* Connects to the service: 1 when it answered its marker, 0 when nobody
 * listens (no socket file, ECONNREFUSED, or closed without an answer);
 * fails on anything else. */
static int answers(const struct v_world *v)
{
	struct sockaddr_un a = {.sun_family = AF_UNIX};
	char buf[128] = "";
	ssize_t n, len = 0;
	int fd, r;

	cr_assert_lt(strlen(v->sock), sizeof(a.sun_path));
	strcpy(a.sun_path, v->sock);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	cr_assert_geq(fd, 0);
	r = connect(fd, (struct sockaddr *)&a, sizeof(a));
	if (r < 0) {
		int e = errno;

		close(fd);
		cr_assert(e == ECONNREFUSED || e == ENOENT, "connect: %s", strerror(e));
		return 0;
	}
	while (len < (ssize_t)sizeof(buf) - 1 &&
	       (n = read(fd, buf + len, sizeof(buf) - 1 - len)) > 0)
		len += n;
	close(fd);
	buf[len] = '\0';
	/* Connected to a backlog whose listener just died: no answer. */
	if (len == 0)
		return 0;
	cr_assert_str_eq(buf, v->marker, "the service answered something else");
	return 1;
}

/* Polls until the service answers (1) or stops answering (0), up to secs. */
static bool answers_within(const struct v_world *v, int want, double secs)
{
	for (double end = h_now() + secs; h_now() < end; h_sleep_ms(50))
		if (answers(v) == want)
			return true;
	return answers(v) == want;
}

/* The pid namespace (ns/pid link text) of the service, found by its
 * marker and python3 in its cmdline: the session's, seen from outside. */
static const char *service_pidns(const struct v_world *v)
{
	pid_t pids[64];
	size_t n = h_marker_pids(v->marker, pids, 64);
	char buf[64];

	for (size_t i = 0; i < n; i++) {
		const char *cmd = h_read_file(h_fmt("/proc/%d/cmdline", (int)pids[i]), NULL);
		ssize_t len =
		    readlink(h_fmt("/proc/%d/ns/pid", (int)pids[i]), buf, sizeof(buf) - 1);

		if (len <= 0 || !cmd || strncmp(cmd, "/usr/bin/python3", 16) != 0)
			continue;
		buf[len] = '\0';
		return h_fmt("%s", buf);
	}
	cr_assert_fail("the service is not running");
	return NULL;
}

/* Live host processes in pid namespace ns (its ns/pid link text). */
static int procs_in_ns(const char *ns)
{
	DIR *d = opendir("/proc");
	struct dirent *e;
	int n = 0;
	char buf[64];

	cr_assert_not_null(d);
	while ((e = readdir(d))) {
		ssize_t len;

		if (e->d_name[0] < '1' || e->d_name[0] > '9')
			continue;
		len = readlink(h_fmt("/proc/%s/ns/pid", e->d_name), buf, sizeof(buf) - 1);
		if (len <= 0)
			continue;
		buf[len] = '\0';
		n += strcmp(buf, ns) == 0;
	}
	closedir(d);
	return n;
}

static bool ns_empty_within(const char *ns, double secs)
{
	for (double end = h_now() + secs; h_now() < end; h_sleep_ms(50))
		if (procs_in_ns(ns) == 0)
			return true;
	return procs_in_ns(ns) == 0;
}

/* The session id from run's one stderr line at "retained". */
static const char *retained_id(const struct h_proc *p)
{
	const char *s = strstr(p->err_text, " in session ");

	cr_assert_not_null(s, "no retained line: " H_FMT, H_ARGS(p));
	cr_assert_eq(h_count_lines(p->err_text), 1, H_SHOW(p));
	cr_assert(h_contains(p->err_text, "leased services run on until "), H_SHOW(p));
	return h_fmt("%.12s", s + strlen(" in session "));
}

static const char *rec(const struct v_world *v, const char *expr)
{
	return h_json(v->w.record, expr);
}

/* A foreground run with a leased service returns the main command's status
 * at its end: its detached descendant (setsid, double fork) is gone, the
 * service answers, ps shows the lease, wait gives the status, the record is
 * "retained"; the service answers until its lease ends and not after; then
 * the record is "final" and nothing of the session's pid namespace is left. */
/* The main command: leaves a detached descendant (setsid, double fork:
 * sleep 300 MARKER, reparented away from it) and exits with code. */
static const char *main_script(int code)
{
	return h_fmt("setsid sh -c 'sleep 300 \"$0\" & echo $! >leftover.pid' \"$0\"; "
		     "while ! [ -s leftover.pid ]; do sleep 0.01; done; exit %d",
		     code);
}

/* Host processes with the marker whose cmdline starts with "sleep". */
static int marked_sleeps(const struct v_world *v)
{
	pid_t pids[64];
	size_t n = h_marker_pids(v->marker, pids, 64);
	int count = 0;

	for (size_t i = 0; i < n; i++) {
		const char *cmd = h_read_file(h_fmt("/proc/%d/cmdline", (int)pids[i]), NULL);

		count += cmd && strncmp(cmd, "sleep", 6) == 0;
	}
	return count;
}

/* A foreground run with a leased service returns the main command's status
 * at its end, well before the lease ends: its detached descendant is gone,
 * the service answers, ps and ps --json show the lease (owner, generation,
 * expiry, "retained"), wait gives the main status, the record is
 * "retained"; the service answers until its lease ends and not after; then
 * the record is "final" and nothing of the session's pid namespace is left. */
Test(services, foreground_run_returns_and_the_lease_runs_out)
{
	struct v_world v = v_world("4s", false, NULL);
	struct h_proc run, p;
	const char *id, *ns;
	double t0 = h_now(), t_last = 0;

	H_PADDOCK(&run, v.w.ws, "run", "--policy", v.policy, "--record", v.w.record, "--", "sh",
		  "-c", main_script(7), v.marker);
	cr_assert_eq(run.status, 7, H_SHOW(&run));
	id = retained_id(&run);
	/* "service-started" means exec'd, not listening: give python a moment. */
	cr_assert(answers_within(&v, 1, 10),
		  "the service does not answer after the run: " H_SHOW(&run));
	cr_assert_eq(marked_sleeps(&v), 0, "the main command's detached descendant survived");
	cr_assert_lt(h_now() - t0, 3.5, "the run did not return well before the lease's end");
	ns = service_pidns(&v);

	/* ps: the session is retained, the lease under it. */
	H_PADDOCK(&p, v.w.ws, "ps");
	cr_assert_eq(p.status, 0, H_SHOW(&p));
	cr_assert(h_contains(p.out_text, h_fmt("\n%s ", id)), H_SHOW(&p));
	cr_assert(h_contains(p.out_text, " retained "), H_SHOW(&p));
	cr_assert(
	    h_contains(p.out_text, h_fmt("  lease web                   owner %u  gen 1  pid ",
					 (unsigned)getuid())),
	    H_SHOW(&p));
	cr_assert(h_contains(p.out_text, "Z  retained\n"), H_SHOW(&p));
	H_PADDOCK(&p, v.w.ws, "ps", "--json");
	cr_assert_eq(p.status, 0, H_SHOW(&p));
	h_write_file(h_join(v.w.base, "ps.json"), p.out_text, 0600);
	cr_assert_str_eq(
	    h_json(h_join(v.w.base, "ps.json"),
		   "[(s['state'], s['status'], [(l['service'], l['session'], l['owner_uid'], "
		   "l['generation'], l['lease_ms'], l['state'], l['expires'] is not None, l['pid'] "
		   "> 1)"
		   " for l in s['leases']]) for s in d]"),
	    h_fmt("[[\"retained\", 7, [[\"web\", \"%s\", %u, 1, 4000, \"retained\", true, true]]]]",
		  id, (unsigned)getuid()));

	/* wait: the main command's status, at once. */
	H_PADDOCK(&p, v.w.ws, "wait", id);
	cr_assert_eq(p.status, 7, H_SHOW(&p));
	cr_assert_eq(answers(&v), 1, "wait ended the service");

	/* The record at "retained". */
	cr_assert_str_eq(rec(&v, "(d['phase'], d['ended'], d['status'], 'main_end' in d)"),
			 "[\"retained\", \"exit\", 7, true]");
	cr_assert_str_eq(rec(&v, "[(s['name'], s['state'], s['lease_ms'], s['session'], "
				 "s['generation']) for s in d['services']]"),
			 h_fmt("[[\"web\", \"retained\", 4000, \"%s\", 1]]", id));

	/* Until the lease ends: it answers, then it does not. */
	for (double end = t0 + 15; h_now() < end && answers(&v); h_sleep_ms(50))
		t_last = h_now();
	cr_assert_eq(answers(&v), 0, "the service outlived its lease by far");
	cr_assert_geq(t_last - t0, 2.0, "the service ended long before its 4 s lease");
	cr_assert(ns_empty_within(ns, 10), "a process of the session is left");
	for (double end = h_now() + 10;
	     h_now() < end && strcmp(rec(&v, "d['phase']"), "\"final\"");)
		h_sleep_ms(100);
	cr_assert_str_eq(rec(&v, "(d['phase'], d['ended'], d['status'])"),
			 "[\"final\", \"exit\", 7]");
	cr_assert_str_eq(rec(&v, "[(s['name'], s['state'], s['ended']) for s in d['services']]"),
			 "[[\"web\", \"ended\", \"lease-expired signal:15\"]]");
}

/* paddock stop in the retained phase ends the leased service ("stopped")
 * and returns; the main command's status stays; a service without a lease
 * ended with the main command, one that could not be executed says so. */
Test(services, stop_in_the_retained_phase)
{
	struct v_world v = v_world("10m", true, NULL);
	struct h_proc run, p;
	const char *id, *ns;

	H_PADDOCK(&run, v.w.ws, "run", "--policy", v.policy, "--record", v.w.record, "--", "sh",
		  "-c", "exit 3", v.marker);
	cr_assert_eq(run.status, 3, H_SHOW(&run));
	cr_assert(h_contains(run.err_text, "service broken: /paddock-test-no-such-command: "),
		  H_SHOW(&run));
	id = h_fmt("%.12s", strstr(run.err_text, " in session ") + strlen(" in session "));
	cr_assert(answers_within(&v, 1, 10), H_SHOW(&run));
	cr_assert_eq(marked_sleeps(&v), 0, "the service without a lease outlived the main command");
	ns = service_pidns(&v);
	cr_assert_str_eq(rec(&v, "(d['phase'], [(s['name'], s['state'], s.get('ended')) for s in "
				 "d['services']])"),
			 "[\"retained\", [[\"web\", \"retained\", null], [\"plain\", \"ended\", "
			 "\"main-ended signal:15\"], [\"broken\", \"ended\", \"exec-error 2\"]]]");

	H_PADDOCK(&p, v.w.ws, "stop", id);
	cr_assert_eq(p.status, 0, H_SHOW(&p));
	cr_assert_str_eq(p.err_text, "", H_SHOW(&p));
	cr_assert_eq(answers(&v), 0, "the service outlived paddock stop");
	cr_assert(ns_empty_within(ns, 5), "a process of the session is left");
	for (double end = h_now() + 10;
	     h_now() < end && strcmp(rec(&v, "d['phase']"), "\"final\"");)
		h_sleep_ms(100);
	cr_assert_str_eq(rec(&v, "(d['phase'], d['ended'], d['status'])"),
			 "[\"final\", \"exit\", 3]");
	cr_assert_str_eq(rec(&v, "d['services'][0]['ended']"), "\"stopped signal:15\"");
	/* A retained foreground run's entry stays, ended, with the main
	 * command's status and how each service ended (main.c keeps it:
	 * the caller got the status before the services ended). */
	H_PADDOCK(&p, v.w.ws, "wait", id);
	cr_assert_eq(p.status, 3, H_SHOW(&p));
	H_PADDOCK(&p, v.w.ws, "ps", "--all");
	cr_assert_eq(p.status, 0, H_SHOW(&p));
	cr_assert(h_contains(p.out_text, " ended stopped signal:15\n"), H_SHOW(&p));
	cr_assert(h_contains(p.out_text, " ended main-ended signal:15\n"), H_SHOW(&p));
	cr_assert(h_contains(p.out_text, " ended exec-error 2\n"), H_SHOW(&p));
	H_PADDOCK(&p, v.w.ws, "rm", id);
	cr_assert_eq(p.status, 0, H_SHOW(&p));
}

/* The TTL ends a retained session's leased service ("expired"); the main
 * command's status stays. The lease equals the TTL but starts later (with
 * the service), so the TTL comes first. */
Test(services, ttl_ends_leased_services)
{
	struct v_world v = v_world("3s", false, "\"ttl\": \"3s\"");
	struct h_proc run;
	const char *ns;

	H_PADDOCK(&run, v.w.ws, "run", "--policy", v.policy, "--record", v.w.record, "--", "sh",
		  "-c", "exit 4", v.marker);
	cr_assert_eq(run.status, 4, H_SHOW(&run));
	cr_assert(answers_within(&v, 1, 10), H_SHOW(&run));
	ns = service_pidns(&v);
	cr_assert(answers_within(&v, 0, 10), "the TTL did not end the service");
	cr_assert(ns_empty_within(ns, 5), "a process of the session is left");
	for (double end = h_now() + 10;
	     h_now() < end && strcmp(rec(&v, "d['phase']"), "\"final\"");)
		h_sleep_ms(100);
	cr_assert_str_eq(
	    rec(&v, "(d['phase'], d['ended'], d['status'], d['services'][0]['ended'])"),
	    "[\"final\", \"exit\", 4, \"expired signal:15\"]");
}

/* --detach with a leased service: wait returns the main command's status
 * while the service answers; ps --all shows the session ended after stop,
 * and nothing of it is left. */
Test(services, detached_session_with_a_lease)
{
	struct v_world v = v_world("10m", false, NULL);
	struct h_proc run, p;
	const char *id, *ns;

	H_PADDOCK(&run, v.w.ws, "run", "--detach", "--policy", v.policy, "--", "sh", "-c",
		  main_script(5), v.marker);
	cr_assert_eq(run.status, 0, H_SHOW(&run));
	id = h_fmt("%.12s", run.out_text);
	H_PADDOCK(&p, v.w.ws, "wait", id);
	cr_assert_eq(p.status, 5, H_SHOW(&p));
	cr_assert(answers_within(&v, 1, 10), "the service does not answer after wait");
	cr_assert_eq(marked_sleeps(&v), 0, "the main command's detached descendant survived");
	ns = service_pidns(&v);
	cr_assert_str_eq(h_json(h_fmt("%s/paddock/%s/session.json", v.xdg, id),
				"(d['state'], d['status'], d['leases'][0]['state'])"),
			 "[\"retained\", 5, \"retained\"]");
	H_PADDOCK(&p, v.w.ws, "stop", id);
	cr_assert_eq(p.status, 0, H_SHOW(&p));
	cr_assert_eq(answers(&v), 0, "the service outlived paddock stop");
	cr_assert(ns_empty_within(ns, 5), "a process of the session is left");
	H_PADDOCK(&p, v.w.ws, "wait", id);
	cr_assert_eq(p.status, 5, "the main status changed with stop: " H_FMT, H_ARGS(&p));
	cr_assert_str_eq(h_json(h_fmt("%s/paddock/%s/session.json", v.xdg, id),
				"(d['state'], d['status'], d['leases'][0]['state'], "
				"d['leases'][0]['ended'])"),
			 "[\"ended\", 5, \"ended\", \"stopped signal:15\"]");
	H_PADDOCK(&p, v.w.ws, "rm", id);
	cr_assert_eq(p.status, 0, H_SHOW(&p));
}

/* A detached run whose main command ends at once, while its leased service
 * runs on: paddock-init's "started", the main command's end and "retained"
 * can reach the supervisor in one read, and the foreground must still get
 * "started ID" (it printed "the supervisor ended without a report" and
 * then waited for the supervisor, which runs on for the lease, until
 * killed). Each run prints its id and exits 0; wait gives the main status. */
Test(services, detached_run_whose_command_ends_at_once)
{
	struct v_world v = v_world("10m", false, NULL);

	for (int i = 0; i < 8; i++) {
		struct h_proc run, p;
		const char *id;

		H_PADDOCK(&run, v.w.ws, "run", "--detach", "--policy", v.policy, "--", "sh", "-c",
			  "exit 3");
		cr_assert_eq(run.status, 0, "run %d: " H_FMT, i, H_ARGS(&run));
		cr_assert_eq(strlen(run.out_text), 13, "run %d: not one id: " H_FMT, i,
			     H_ARGS(&run));
		id = h_fmt("%.12s", run.out_text);
		H_PADDOCK(&p, v.w.ws, "wait", id);
		cr_assert_eq(p.status, 3, H_SHOW(&p));
		H_PADDOCK(&p, v.w.ws, "stop", id);
		cr_assert_eq(p.status, 0, H_SHOW(&p));
		H_PADDOCK(&p, v.w.ws, "rm", id);
		cr_assert_eq(p.status, 0, H_SHOW(&p));
	}
}

/* --explain lists each service with its lease, and starts nothing. */
Test(services, explain_lists_the_services)
{
	struct v_world v = v_world("3s", true, "\"ttl\": \"1m\"");
	struct h_proc p;

	H_PADDOCK(&p, v.w.ws, "run", "--policy", v.policy, "--explain", "--", "true");
	cr_assert_eq(p.status, 0, H_SHOW(&p));
	cr_assert(strstr(p.out_text, "services (started by paddock-init"), H_SHOW(&p));
	cr_assert(strstr(p.out_text, "(lease 3000 ms: may outlive the command)"), H_SHOW(&p));
	cr_assert(strstr(p.out_text, "  plain: sleep 300 "), H_SHOW(&p));
	cr_assert(strstr(p.out_text, "(no lease: ends with the command)"), H_SHOW(&p));
	cr_assert_eq(answers(&v), 0, "--explain started a service");
}
