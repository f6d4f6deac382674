/* Integration: port forwards (policy "ports", paddock run --port) as an
 * unprivileged user, checked from the host: what answers on the host's
 * loopback, what session.json, ps and the record say, and which processes
 * exist in the host's /proc.
 *
 * The sandbox side is the probe's "serve:PORT:MARKER" mode: a TCP server on
 * the sandbox's loopback that answers "MARKER\n", reads to EOF and answers
 * the byte count. Every marker comes from h_marker(), so the probe, its
 * paddock-init and its supervisor carry it in their argv and h_fini
 * SIGKILLs them by pid even when an assertion failed.
 *
 * Each test has its own registry (XDG_RUNTIME_DIR in its temporary tree).
 * Network: the host's 127.0.0.1 and ::1 only.
 *
 * The two-user test needs run.sh as root: it starts, as paddock-test2, a
 * detached session forwarding a fixed loopback port to a probe server
 * (PADDOCK_TEST_OTHER_PORT*); without it the test skips. */
#include "harness.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdatomic.h>
#include <sys/socket.h>

TestSuite(ports, .init = h_init, .fini = h_fini, .timeout = 120);

static const char *js(const struct h_sworld *s, const char *id, const char *expr)
{
	return h_session_json(s, id, expr);
}

/* ------------------------------------------------------------ sockets */

static socklen_t sa_make(const char *addr, int port, struct sockaddr_storage *ss)
{
	memset(ss, 0, sizeof(*ss));
	if (strchr(addr, ':')) {
		struct sockaddr_in6 *in6 = (struct sockaddr_in6 *)ss;

		in6->sin6_family = AF_INET6;
		in6->sin6_port = htons((uint16_t)port);
		cr_assert_eq(inet_pton(AF_INET6, addr, &in6->sin6_addr), 1);
		return sizeof(*in6);
	}
	struct sockaddr_in *in4 = (struct sockaddr_in *)ss;

	in4->sin_family = AF_INET;
	in4->sin_port = htons((uint16_t)port);
	cr_assert_eq(inet_pton(AF_INET, addr, &in4->sin_addr), 1);
	return sizeof(*in4);
}

/* A listening socket of the test's own on addr:port (0: any), or -errno. */
static int hold(const char *addr, int port)
{
	struct sockaddr_storage ss;
	socklen_t len = sa_make(addr, port, &ss);
	int fd = socket(ss.ss_family, SOCK_STREAM | SOCK_CLOEXEC, 0), e;

	cr_assert_geq(fd, 0);
	if (bind(fd, (struct sockaddr *)&ss, len) < 0 || listen(fd, 16) < 0) {
		e = errno;
		close(fd);
		return -e;
	}
	return fd;
}

static int port_of(int fd)
{
	struct sockaddr_storage ss;
	socklen_t len = sizeof(ss);

	cr_assert_eq(getsockname(fd, (struct sockaddr *)&ss, &len), 0);
	return ss.ss_family == AF_INET6 ? ntohs(((struct sockaddr_in6 *)&ss)->sin6_port)
					: ntohs(((struct sockaddr_in *)&ss)->sin_port);
}

/* A loopback port that was free a moment ago. */
static int free_port(void)
{
	int fd = hold("127.0.0.1", 0), port;

	cr_assert_geq(fd, 0);
	port = port_of(fd);
	close(fd);
	return port;
}

/* Connect to addr:port, send n bytes, shut down the sending side and read
 * to EOF (3 s limit each way). The reply (malloc'd, caller frees), or NULL
 * with *err the connect's errno. No Criterion calls: threads use it. */
static char *fetch_raw(const char *addr, int port, size_t n, int *err)
{
	struct sockaddr_storage ss = {0};
	struct timeval tv = {.tv_sec = 3};
	char *buf = NULL, chunk[4096];
	size_t len = 0, sent = 0;
	socklen_t sl;
	int fd;

	if (strchr(addr, ':')) {
		struct sockaddr_in6 *in6 = (struct sockaddr_in6 *)&ss;

		in6->sin6_family = AF_INET6;
		in6->sin6_port = htons((uint16_t)port);
		inet_pton(AF_INET6, addr, &in6->sin6_addr);
		sl = sizeof(*in6);
	} else {
		struct sockaddr_in *in4 = (struct sockaddr_in *)&ss;

		in4->sin_family = AF_INET;
		in4->sin_port = htons((uint16_t)port);
		inet_pton(AF_INET, addr, &in4->sin_addr);
		sl = sizeof(*in4);
	}
	fd = socket(ss.ss_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0) {
		*err = errno;
		return NULL;
	}
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
	if (connect(fd, (struct sockaddr *)&ss, sl) < 0) {
		*err = errno;
		close(fd);
		return NULL;
	}
	*err = 0;
	memset(chunk, 'x', sizeof(chunk));
	while (sent < n) {
		size_t k = n - sent < sizeof(chunk) ? n - sent : sizeof(chunk);
		ssize_t w = send(fd, chunk, k, MSG_NOSIGNAL);

		if (w <= 0)
			break;
		sent += (size_t)w;
	}
	shutdown(fd, SHUT_WR);
	buf = calloc(1, 1);
	for (;;) {
		ssize_t r = recv(fd, chunk, sizeof(chunk), 0);
		char *b;

		if (r <= 0 || !buf)
			break;
		b = realloc(buf, len + (size_t)r + 1);
		if (!b)
			break;
		buf = b;
		memcpy(buf + len, chunk, (size_t)r);
		len += (size_t)r;
		buf[len] = '\0';
	}
	close(fd);
	return buf;
}

static const char *fetch(const char *addr, int port, size_t n, int *err)
{
	char *r = fetch_raw(addr, port, n, err);

	return r ? h_keep(r) : NULL;
}

/* Retry until addr:port answers with marker first (the server in the
 * sandbox may still be starting): the reply, or NULL after ms. */
static const char *await_marker(const char *addr, int port, const char *marker, int ms)
{
	const char *want = h_fmt("%s\n", marker);

	for (int waited = 0; waited <= ms; waited += 50) {
		int err;
		const char *r = fetch(addr, port, 0, &err);

		if (r && strncmp(r, want, strlen(want)) == 0)
			return r;
		h_sleep_ms(50);
	}
	return NULL;
}

static bool refused(const char *addr, int port)
{
	int err;
	const char *r = fetch(addr, port, 0, &err);

	return !r && err == ECONNREFUSED;
}

/* ---------------------------------------------------------- processes */

/* Field 22 of /proc/PID/stat, 0 when the process is gone or a zombie. */
static unsigned long long start_time(pid_t pid)
{
	char *stat = h_read_file(h_fmt("/proc/%d/stat", (int)pid), NULL);
	const char *p = stat ? strrchr(stat, ')') : NULL;
	unsigned long long v = 0;

	if (!p || p[2] == 'Z' || p[2] == 'X')
		return 0;
	for (int field = 3; field <= 22 && p; field++)
		p = strchr(p + 1, ' ');
	if (p)
		v = strtoull(p + 1, NULL, 10);
	return v;
}

/* The relay: the supervisor's child named paddock-relay, from /proc. */
static pid_t relay_of(pid_t supervisor)
{
	DIR *d = opendir("/proc");
	struct dirent *e;
	pid_t found = 0;

	cr_assert_not_null(d);
	while ((e = readdir(d))) {
		pid_t pid = (pid_t)atoi(e->d_name);
		char *st;
		const char *p;

		if (pid <= 0)
			continue;
		st = h_read_file(h_fmt("/proc/%d/stat", (int)pid), NULL);
		p = st ? strrchr(st, ')') : NULL;
		if (p && strstr(st, "(paddock-relay)") && atoi(p + 4) == supervisor)
			found = pid;
	}
	closedir(d);
	return found;
}

static bool gone_within(pid_t pid, int ms)
{
	for (int waited = 0; waited <= ms; waited += 20) {
		if (start_time(pid) == 0)
			return true;
		h_sleep_ms(20);
	}
	return false;
}

/* -------------------------------------------------------------- paddock */

static bool is_id(const char *s)
{
	if (strlen(s) != 12)
		return false;
	for (size_t i = 0; i < 12; i++)
		if (!strchr("0123456789abcdef", s[i]))
			return false;
	return true;
}

/* paddock run --detach [--name NAME] --ro-bind helpers:/probe --port SPEC
 * [--port SPEC2] -- /probe/probe serve:INSIDE:MARKER; the id. */
static const char *serve_detached(const struct h_sworld *s, const char *name, int inside,
				  const char *spec, const char *spec2, const char *marker)
{
	const char *args[24];
	size_t n = 0;
	struct h_proc p;
	const char *id;

	args[n++] = "run";
	args[n++] = "--detach";
	if (name) {
		args[n++] = "--name";
		args[n++] = name;
	}
	args[n++] = "--ro-bind";
	args[n++] = h_fmt("%s:/probe", h_helpers_dir());
	args[n++] = "--port";
	args[n++] = spec;
	if (spec2) {
		args[n++] = "--port";
		args[n++] = spec2;
	}
	args[n++] = "--";
	args[n++] = "/probe/probe";
	args[n++] = h_fmt("serve:%d:%s", inside, marker);
	args[n] = NULL;
	h_run_paddock(&p, s->w.ws, args);
	cr_assert_eq(p.status, 0, H_SHOW(&p));
	id = h_fmt("%.*s", (int)strcspn(p.out_text, "\n"), p.out_text);
	cr_assert(is_id(id), "not an id: " H_FMT, H_ARGS(&p));
	/* Nothing on stderr but an auto port's line. */
	for (const char *l = p.err_text; *l; l = strchr(l, '\n') + 1)
		cr_assert(strncmp(l, "paddock: port 127.0.0.1:", 24) == 0 &&
			      strstr(l, " (auto)\n") && strchr(l, '\n'),
			  H_SHOW(&p));
	return id;
}

static void stop(const struct h_sworld *s, const char *id)
{
	struct h_proc p;

	H_PADDOCK(&p, s->w.ws, "stop", "--grace", "0s", id);
	cr_assert_eq(p.status, 0, H_SHOW(&p));
}

/* The host port of endpoint i in session.json. */
static int endpoint_port(const struct h_sworld *s, const char *id, int i)
{
	const char *host = js(s, id, h_fmt("d['endpoints'][%d]['host']", i));

	return atoi(strrchr(host, ':') + 1);
}

static void assert_one_line_error(const struct h_proc *p, const char *expect)
{
	cr_assert_eq(p->status, 125, H_SHOW(p));
	cr_assert_eq(h_count_lines(p->err_text), 1, "one line: " H_FMT, H_ARGS(p));
	cr_assert(strncmp(p->err_text, "paddock: ", 9) == 0, H_SHOW(p));
	cr_assert(h_contains(p->err_text, expect), "expected \"%s\": " H_FMT, expect, H_ARGS(p));
}

/* No session in the test's registry at all (ps --all: the header only). */
static void assert_no_sessions(const struct h_sworld *s)
{
	struct h_proc p;

	H_PADDOCK(&p, s->w.ws, "ps", "--all");
	cr_assert_eq(p.status, 0, H_SHOW(&p));
	cr_assert_eq(h_count_lines(p.out_text), 1, "a session was registered: " H_FMT, H_ARGS(&p));
}

/* The holder still takes connections: connect, and accept on it. */
static void assert_holder_answers(int holder, int port)
{
	struct sockaddr_storage ss;
	socklen_t len = sa_make("127.0.0.1", port, &ss);
	int c = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0), a;

	cr_assert_geq(c, 0);
	cr_assert_eq(connect(c, (struct sockaddr *)&ss, len), 0, "connect to the holder: %s",
		     strerror(errno));
	a = accept4(holder, NULL, NULL, SOCK_CLOEXEC);
	cr_assert_geq(a, 0, "the holder's listener lost the connection: %s", strerror(errno));
	close(a);
	close(c);
}

/* ---------------------------------------------------------------- tests */

Test(ports, a_fixed_forward_answers_from_the_sandbox_and_ends_with_the_session)
{
	struct h_sworld s = h_sworld();
	const char *m = h_marker();
	int port = free_port();
	const char *id = serve_detached(&s, NULL, 8080, h_fmt("127.0.0.1:%d:8080", port), NULL, m);
	const char *reply, *ps_json = h_join(s.w.base, "ps.json");
	struct h_proc p;
	pid_t sup, relay;
	unsigned long long relay_start;
	int err;

	cr_assert_not_null(await_marker("127.0.0.1", port, m, 5000), "no answer on %d", port);
	/* Both ways, with a half-close: 200000 bytes in, their count out. */
	reply = fetch("127.0.0.1", port, 200000, &err);
	cr_assert_str_eq(reply, h_fmt("%s\n200000\n", m));

	/* Recorded as bound, with the session and generation. */
	cr_assert_str_eq(
	    js(&s, id, "d['endpoints']"),
	    h_fmt("[{\"generation\": 1, \"host\": \"127.0.0.1:%d\", \"protocol\": "
		  "\"tcp\", \"sandbox\": 8080, \"service\": null, \"session\": \"%s\"}]",
		  port, id));
	H_PADDOCK(&p, s.w.ws, "ps", "--json");
	cr_assert_eq(p.status, 0, H_SHOW(&p));
	h_write_file(ps_json, p.out_text, 0600);
	cr_assert_str_eq(h_json(ps_json, "[e for x in d for e in x['endpoints']]"),
			 js(&s, id, "d['endpoints']"));
	H_PADDOCK(&p, s.w.ws, "ps");
	cr_assert(h_contains(p.out_text, "PORTS"), H_SHOW(&p));
	cr_assert(h_contains(p.out_text, h_fmt("127.0.0.1:%d->8080", port)), H_SHOW(&p));

	/* The relay: the supervisor's child, outside the sandbox's pid
	 * namespace. */
	sup = atoi(js(&s, id, "d['supervisor']['pid']"));
	relay = relay_of(sup);
	cr_assert_gt(relay, 0, "no paddock-relay child of %d", (int)sup);
	relay_start = start_time(relay);
	cr_assert_neq(relay_start, 0);

	stop(&s, id);
	cr_assert(refused("127.0.0.1", port), "the endpoint still answers after stop");
	cr_assert(gone_within(relay, 2000) || start_time(relay) != relay_start,
		  "relay %d outlived its session", (int)relay);
	cr_assert(refused("127.0.0.1", port));
}

Test(ports, ipv6_loopback_is_forwarded_too)
{
	struct h_sworld s = h_sworld();
	const char *m = h_marker();
	int probe = hold("::1", 0), port;
	const char *id;

	if (probe < 0)
		h_skip("no IPv6 loopback on this host");
	port = port_of(probe);
	close(probe);
	id = serve_detached(&s, NULL, 8080, h_fmt("[::1]:%d:8080", port), NULL, m);
	cr_assert_not_null(await_marker("::1", port, m, 5000), "no answer on [::1]:%d", port);
	cr_assert_str_eq(js(&s, id, "d['endpoints'][0]['host']"), h_fmt("\"[::1]:%d\"", port));
	stop(&s, id);
	cr_assert(refused("::1", port));
}

Test(ports, auto_takes_the_sandbox_port_when_free_and_another_when_busy)
{
	struct h_sworld s = h_sworld();
	const char *m1 = h_marker(), *m2 = h_marker(), *m3 = h_marker();
	int free1 = free_port(), holder, held, got2, got3;
	const char *id1, *id2, *id3;

	/* Free: the sandbox's port number. */
	id1 = serve_detached(&s, NULL, free1, h_fmt("127.0.0.1:auto:%d", free1), NULL, m1);
	cr_assert_eq(endpoint_port(&s, id1, 0), free1);
	cr_assert_not_null(await_marker("127.0.0.1", free1, m1, 5000));

	/* Busy with a plain listener of ours: another port, which answers,
	 * and the holder keeps its port. */
	holder = hold("127.0.0.1", 0);
	cr_assert_geq(holder, 0);
	held = port_of(holder);
	id2 = serve_detached(&s, NULL, held, h_fmt("127.0.0.1:auto:%d", held), NULL, m2);
	got2 = endpoint_port(&s, id2, 0);
	cr_assert_neq(got2, held);
	cr_assert_str_eq(js(&s, id2, "d['endpoints'][0]['sandbox']"), h_fmt("%d", held));
	cr_assert_not_null(await_marker("127.0.0.1", got2, m2, 5000), "auto port %d", got2);
	assert_holder_answers(holder, held);

	/* Busy with another session's forward: the same, and the first
	 * session keeps answering on its port. */
	id3 = serve_detached(&s, NULL, free1, h_fmt("127.0.0.1:auto:%d", free1), NULL, m3);
	got3 = endpoint_port(&s, id3, 0);
	cr_assert_neq(got3, free1);
	cr_assert_not_null(await_marker("127.0.0.1", got3, m3, 5000));
	cr_assert_not_null(await_marker("127.0.0.1", free1, m1, 5000));
	close(holder);
	stop(&s, id1);
	stop(&s, id2);
	stop(&s, id3);
	cr_assert(refused("127.0.0.1", got3));
	cr_assert(refused("127.0.0.1", free1));
}

Test(ports, a_busy_fixed_port_is_refused_and_its_holder_untouched)
{
	struct h_sworld s = h_sworld();
	int holder = hold("127.0.0.1", 0), held;
	const char *started;
	struct h_proc p;

	cr_assert_geq(holder, 0);
	held = port_of(holder);
	started = h_join(s.w.ws, "started");
	H_PADDOCK(&p, s.w.ws, "run", "--port", h_fmt("127.0.0.1:%d:8080", held), "--", "sh", "-c",
		  "touch started");
	assert_one_line_error(&p, h_fmt("ports[0]: 127.0.0.1:%d is in use; nothing started", held));
	cr_assert(!h_exists(started), "the workload ran");
	H_PADDOCK(&p, s.w.ws, "run", "--detach", "--name", "busy", "--port", "127.0.0.1:auto:8080",
		  "--port", h_fmt("127.0.0.1:%d:80", held), "--", "sh", "-c", "touch started");
	assert_one_line_error(&p, h_fmt("ports[1]: 127.0.0.1:%d is in use; nothing started", held));
	cr_assert_str_eq(p.out_text, "", H_SHOW(&p));
	cr_assert(!h_exists(started), "the workload ran");
	assert_no_sessions(&s);
	assert_holder_answers(holder, held);
	close(holder);
}

Test(ports, a_restart_under_the_same_name_is_a_new_generation_and_the_old_endpoint_refuses)
{
	struct h_sworld s = h_sworld();
	const char *m1 = h_marker(), *m2 = h_marker(), *m3 = h_marker();
	int p1 = free_port(), p2;
	const char *id1, *id2, *id3;

	id1 = serve_detached(&s, "web", 8080, h_fmt("127.0.0.1:%d:8080", p1), NULL, m1);
	cr_assert_not_null(await_marker("127.0.0.1", p1, m1, 5000));
	cr_assert_str_eq(js(&s, id1, "d['endpoints'][0]['generation']"), "1");
	stop(&s, id1);
	cr_assert(refused("127.0.0.1", p1));

	p2 = free_port();
	id2 = serve_detached(&s, "web", 8080, h_fmt("127.0.0.1:%d:8080", p2), NULL, m2);
	cr_assert_str_neq(id2, id1);
	cr_assert_str_eq(
	    js(&s, id2, "(d['endpoints'][0]['generation'], d['endpoints'][0]['session'])"),
	    h_fmt("[2, \"%s\"]", id2));
	cr_assert_not_null(await_marker("127.0.0.1", p2, m2, 5000));
	cr_assert(refused("127.0.0.1", p1), "the first generation's endpoint answers");
	stop(&s, id2);
	cr_assert(refused("127.0.0.1", p2));

	/* The first port again (its old connections may linger in
	 * TIME_WAIT): generation 3 answers there, with its own marker. */
	id3 = serve_detached(&s, "web", 8080, h_fmt("127.0.0.1:%d:8080", p1), NULL, m3);
	cr_assert_str_eq(js(&s, id3, "d['endpoints'][0]['generation']"), "3");
	cr_assert_not_null(await_marker("127.0.0.1", p1, m3, 5000));
	stop(&s, id3);
}

Test(ports, a_foreground_run_forwards_and_records_its_endpoints)
{
	struct h_sworld s = h_sworld();
	const char *m = h_marker();
	int port = free_port();
	struct h_proc p;

	H_PADDOCK_START(&p, s.w.ws, "run", "--record", s.w.record, "--ttl", "3s", "--ro-bind",
			h_fmt("%s:/probe", h_helpers_dir()), "--port",
			h_fmt("127.0.0.1:%d:8080", port), "--", "/probe/probe",
			h_fmt("serve:8080:%s", m));
	cr_assert_not_null(await_marker("127.0.0.1", port, m, 5000));
	h_wait(&p, 20000);
	cr_assert_eq(p.status, 124, "ended by the TTL: " H_FMT, H_ARGS(&p));
	cr_assert(refused("127.0.0.1", port));
	cr_assert_str_eq(h_json(s.w.record, "len(d['endpoints'])"), "1");
	cr_assert_str_eq(h_json(s.w.record, "d['endpoints'][0]['host']"),
			 h_fmt("\"127.0.0.1:%d\"", port));
	cr_assert_str_eq(h_json(s.w.record, "d['endpoints'][0]['sandbox']"), "8080");
	cr_assert_str_eq(h_json(s.w.record, "d['endpoints'][0]['generation']"), "1");
	cr_assert_str_eq(h_json(s.w.record, "d['endpoints'][0]['session']"),
			 h_json(s.w.record, "d['session']['id']"));
}

Test(ports, explain_shows_the_forwards_and_binds_nothing)
{
	struct h_sworld s = h_sworld();
	int holder = hold("127.0.0.1", 0), held;
	struct h_proc p;

	cr_assert_geq(holder, 0);
	held = port_of(holder);
	H_PADDOCK(&p, s.w.ws, "run", "--explain", "--port", h_fmt("127.0.0.1:%d:80", held),
		  "--port", "[::1]:auto:8080");
	cr_assert_eq(p.status, 0, H_SHOW(&p));
	cr_assert(h_contains(p.out_text, h_fmt("  127.0.0.1:%d -> 80\n", held)), H_SHOW(&p));
	cr_assert(h_contains(p.out_text, "  [::1]:auto -> 8080 (auto"), H_SHOW(&p));
	H_PADDOCK(&p, s.w.ws, "run", "--explain");
	cr_assert(h_contains(p.out_text, "ports: none\n"), H_SHOW(&p));
	assert_holder_answers(holder, held);
	close(holder);
}

/* localhost is loopback (127.0.0.1, never looked up), and an auto port's
 * host side is told on stderr: the caller cannot know it otherwise. */
Test(ports, localhost_and_the_auto_port_told_on_stderr)
{
	struct h_world w = h_world();
	struct h_proc p;
	int port = free_port();

	H_PADDOCK(&p, w.ws, "run", "--record", w.record, "-p", h_fmt("localhost:auto:%d", port),
		  "--", "true");
	cr_assert_eq(p.status, 0, H_SHOW(&p));
	cr_assert_str_eq(p.err_text, h_fmt("paddock: port 127.0.0.1:%d -> %d (auto)\n", port, port),
			 H_SHOW(&p));
	H_PADDOCK(&p, w.ws, "run", "-p", h_fmt("localhost:%d:80", port), "--", "true");
	cr_assert_eq(p.status, 0, H_SHOW(&p));
	cr_assert_str_eq(p.err_text, "", H_SHOW(&p));
}

Test(ports, bad_port_arguments_are_one_line_errors)
{
	static const char *const bad[][2] = {
	    {"8080", "expected HOST:PORT:SANDBOXPORT"},
	    {"127.0.0.1:8080", "expected HOST:PORT:SANDBOXPORT"},
	    {"0.0.0.0:8080:80", "only 127.0.0.1, localhost or [::1] (loopback) may be published"},
	    {"192.0.2.1:8080:80", "only 127.0.0.1, localhost or [::1] (loopback) may be published"},
	    {"localhost.localdomain:8080:80",
	     "only 127.0.0.1, localhost or [::1] (loopback) may be published"},
	    {"[::]:8080:80", "only 127.0.0.1, localhost or [::1] (loopback) may be published"},
	    {"::1:8080:80", "expected \"127.0.0.1:PORT\""},
	    {"127.0.0.1:0:80", "the port must be 1 to 65535, or \"auto\""},
	    {"127.0.0.1:65536:80", "the port must be 1 to 65535"},
	    {"127.0.0.1:+80:80", "the port must be 1 to 65535"},
	    {"127.0.0.1:8080:0", "the sandbox port must be 1 to 65535"},
	    {"127.0.0.1:8080:70000", "the sandbox port must be 1 to 65535"},
	    {"127.0.0.1:auto:http", "the sandbox port must be 1 to 65535"},
	    {"127.0.0.1:8080:", "expected HOST:PORT:SANDBOXPORT"},
	};
	struct h_sworld s = h_sworld();
	const char *started = h_join(s.w.ws, "started");
	int port = free_port();
	struct h_proc p;

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		H_PADDOCK(&p, s.w.ws, "run", "--port", bad[i][0], "--", "sh", "-c",
			  "touch started");
		assert_one_line_error(&p, h_fmt("--port %s: %s", bad[i][0], bad[i][1]));
	}
	H_PADDOCK(&p, s.w.ws, "run", "--port", "127.0.0.1:auto:80", "--port",
		  h_fmt("127.0.0.1:%d:80", port), "--port", h_fmt("127.0.0.1:%d:81", port), "--",
		  "sh", "-c", "touch started");
	assert_one_line_error(&p, h_fmt("ports[2].host: 127.0.0.1:%d is already published by "
					"ports[1]",
					port));
	H_PADDOCK(&p, s.w.ws, "run", "--weaken", "host-net", "--port", "127.0.0.1:auto:80", "--",
		  "sh", "-c", "touch started");
	cr_assert_eq(p.status, 125, H_SHOW(&p));
	cr_assert(h_contains(p.err_text, "paddock: ports: port forwards need the sandbox's own "
					 "network namespace"),
		  H_SHOW(&p));
	cr_assert(!h_exists(started), "a workload ran");
	assert_no_sessions(&s);
}

/* --------------------------------------------------------- two users */

struct health {
	int port;
	const char *marker;
	atomic_bool stop;
	atomic_long ok, failed;
	char first_failure[256];
};

/* Every ~20 ms: connect to the other user's endpoint and expect its
 * marker. */
static void *health_loop(void *arg)
{
	struct health *h = arg;
	size_t mlen = strlen(h->marker);

	while (!atomic_load(&h->stop)) {
		int err;
		char *r = fetch_raw("127.0.0.1", h->port, 0, &err);

		if (r && strncmp(r, h->marker, mlen) == 0 && r[mlen] == '\n') {
			atomic_fetch_add(&h->ok, 1);
		} else {
			if (atomic_fetch_add(&h->failed, 1) == 0)
				snprintf(h->first_failure, sizeof(h->first_failure), "%s",
					 r ? r : strerror(err));
		}
		free(r);
		h_sleep_ms(20);
	}
	return NULL;
}

Test(ports, another_users_forward_is_never_taken_over)
{
	struct h_sworld s = h_sworld();
	const char *uid2 = getenv("PADDOCK_TEST_UID2");
	const char *error = getenv("PADDOCK_TEST_OTHER_PORT_ERROR");
	const char *m = h_marker();
	struct health h = {0};
	pthread_t th;
	pid_t init;
	unsigned long long init_start;
	struct h_proc p;
	const char *id;
	int got;

	if (!uid2 || !uid2[0])
		h_skip("needs run.sh as root (a second test user)");
	cr_assert(!error || !error[0], "run.sh could not start the other user's forward: %s",
		  error);
	h.port = atoi(getenv("PADDOCK_TEST_OTHER_PORT") ?: "0");
	h.marker = getenv("PADDOCK_TEST_OTHER_PORT_MARKER");
	init = atoi(getenv("PADDOCK_TEST_OTHER_PORT_INIT_PID") ?: "0");
	init_start = strtoull(getenv("PADDOCK_TEST_OTHER_PORT_INIT_START") ?: "0", NULL, 10);
	cr_assert(h.port > 0 && h.marker && init > 0, "PADDOCK_TEST_OTHER_PORT* missing");
	cr_assert_eq(start_time(init), init_start, "the other user's session is not running");
	cr_assert_not_null(await_marker("127.0.0.1", h.port, h.marker, 5000),
			   "the other user's forward does not answer");

	cr_assert_eq(pthread_create(&th, NULL, health_loop, &h), 0);
	h_sleep_ms(100);
	/* Its port, fixed: refused, nothing started. */
	H_PADDOCK(&p, s.w.ws, "run", "--ro-bind", h_fmt("%s:/probe", h_helpers_dir()), "--port",
		  h_fmt("127.0.0.1:%d:8080", h.port), "--", "/probe/probe",
		  h_fmt("serve:8080:%s", m));
	if (p.status != 125)
		atomic_store(&h.stop, true);
	assert_one_line_error(&p,
			      h_fmt("ports[0]: 127.0.0.1:%d is in use; nothing started", h.port));
	/* Its port as the preferred one of "auto": another port, which
	 * answers with our marker, not theirs. */
	id = serve_detached(&s, NULL, h.port, h_fmt("127.0.0.1:auto:%d", h.port), NULL, m);
	got = endpoint_port(&s, id, 0);
	cr_assert_neq(got, h.port);
	cr_assert_not_null(await_marker("127.0.0.1", got, m, 5000), "auto port %d", got);
	h_sleep_ms(200);
	stop(&s, id);
	h_sleep_ms(100);
	atomic_store(&h.stop, true);
	pthread_join(th, NULL);

	cr_assert_gt(atomic_load(&h.ok), 0, "no health check ran");
	cr_assert_eq(atomic_load(&h.failed), 0,
		     "%ld of %ld health checks of the other user's forward failed; first: %s",
		     atomic_load(&h.failed), atomic_load(&h.ok) + atomic_load(&h.failed),
		     h.first_failure);
	cr_assert_eq(start_time(init), init_start, "the other user's session was touched");
	cr_assert_not_null(await_marker("127.0.0.1", h.port, h.marker, 1000));
}
