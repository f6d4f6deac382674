/* Integration: the release gate (docs/network.md, "Release gate") as an
 * unprivileged user. Receivers are threads of the test on the host's
 * loopback that keep every request whole (head and body, read to the
 * mediator's end of it); the policy's network.resolve maps the test names
 * to 127.0.0.1. A refusal is checked where a victim would see it, at the
 * sink, and by the admissions log's decision (never the 403's text); each
 * protection has a twin (--weaken gate-off, or the same run without the
 * private read) in which the same body does arrive. */
#include "harness.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdatomic.h>
#include <sys/socket.h>
#include <sys/un.h>

TestSuite(release, .init = h_init, .fini = h_fini, .timeout = 120);

struct receiver {
	int fd, port;
	atomic_int count;
	pthread_mutex_t lock;
	const char *answer; /* the response's body */
	char seen[65536];   /* every request, whole, in order */
	size_t n_seen;
	pthread_t thread;
};

static void *serve(void *arg)
{
	struct receiver *r = arg;
	struct timeval tv = {.tv_sec = 3};

	for (;;) {
		char buf[8192], head[256];
		int c = accept(r->fd, NULL, NULL);
		ssize_t n;

		if (c < 0)
			return NULL;
		atomic_fetch_add(&r->count, 1);
		setsockopt(c, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
		/* The mediator sends one request and shuts its half down. */
		while ((n = recv(c, buf, sizeof(buf), 0)) > 0) {
			pthread_mutex_lock(&r->lock);
			if (r->n_seen + (size_t)n < sizeof(r->seen) - 1) {
				memcpy(r->seen + r->n_seen, buf, (size_t)n);
				r->n_seen += (size_t)n;
			}
			pthread_mutex_unlock(&r->lock);
		}
		snprintf(head, sizeof(head),
			 "HTTP/1.1 200 OK\r\nContent-Length: %zu\r\nConnection: close\r\n\r\n",
			 strlen(r->answer));
		(void)!send(c, head, strlen(head), MSG_NOSIGNAL);
		(void)!send(c, r->answer, strlen(r->answer), MSG_NOSIGNAL);
		close(c);
	}
}

static struct receiver *receiver(const char *answer)
{
	struct receiver *r = calloc(1, sizeof(*r));
	struct sockaddr_in a = {.sin_family = AF_INET};
	socklen_t len = sizeof(a);
	int one = 1;

	cr_assert_not_null(r);
	r->answer = answer;
	inet_pton(AF_INET, "127.0.0.1", &a.sin_addr);
	r->fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	cr_assert_geq(r->fd, 0);
	setsockopt(r->fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	cr_assert_eq(bind(r->fd, (struct sockaddr *)&a, sizeof(a)), 0, "%s", strerror(errno));
	cr_assert_eq(listen(r->fd, 64), 0);
	getsockname(r->fd, (struct sockaddr *)&a, &len);
	r->port = ntohs(a.sin_port);
	pthread_mutex_init(&r->lock, NULL);
	cr_assert_eq(pthread_create(&r->thread, NULL, serve, r), 0);
	return r;
}

static bool saw(struct receiver *r, const char *text)
{
	bool yes;

	pthread_mutex_lock(&r->lock);
	r->seen[r->n_seen] = '\0';
	yes = strstr(r->seen, text) != NULL;
	pthread_mutex_unlock(&r->lock);
	return yes;
}

static const char *digest(const char *body)
{
	struct h_proc p;

	H_CMD(&p, NULL, H_PYTHON, "-c",
	      "import hashlib,sys; print(hashlib.sha256(sys.argv[1].encode()).hexdigest())", body);
	cr_assert_eq(p.status, 0, H_SHOW(&p));
	return h_fmt("%.64s", p.out_text);
}

/* The agent policy with network (a JSON value) in place of "none". */
static char *agent_with_network(const struct h_world *w, const char *name, const char *network)
{
	char *path = h_join(w->base, name);
	const char *src = h_read_file(h_fmt("%s/contrib/policies/agent.json", h_root()), NULL);
	const char *at;

	cr_assert_not_null(src);
	at = strstr(src, "\"network\": \"none\",");
	cr_assert_not_null(at, "agent.json has no \"network\": \"none\" line");
	h_write_file(path,
		     h_fmt("%.*s\"network\": %s,%s", (int)(at - src), src, network,
			   at + strlen("\"network\": \"none\",")),
		     0644);
	return path;
}

/* sink.test: the publication sink; note.test: a private note; pub.test:
 * an ordinary http rule (no "publish"). Any may be NULL (port 0). */
static char *gate_policy(const struct h_world *w, int sink, int note, int pub, const char *hold)
{
	return agent_with_network(
	    w, "gate.json",
	    h_fmt("{\"mode\": \"mediated\", \"hold\": \"%s\", \"allow\": ["
		  "{\"host\": \"sink.test\", \"ports\": [%d], \"protocol\": \"http\", "
		  "\"publish\": true},"
		  "{\"host\": \"note.test\", \"ports\": [%d], \"protocol\": \"http\", "
		  "\"private\": true},"
		  "{\"host\": \"pub.test\", \"ports\": [%d], \"protocol\": \"http\"}],"
		  "\"resolve\": {\"sink.test\": \"127.0.0.1\", \"note.test\": \"127.0.0.1\","
		  "\"pub.test\": \"127.0.0.1\"}}",
		  hold, sink ? sink : 1, note ? note : 2, pub ? pub : 4));
}

static const char *adm(const struct h_world *w)
{
	const char *t = h_read_file(h_fmt("%s.admissions.jsonl", w->record), NULL);

	return t ? t : "";
}

static const char *count(const struct h_world *w, const char *decision)
{
	return h_json(w->record, h_fmt("d['network']['admissions']['%s']", decision));
}

static const char *approvals_file(const struct h_world *w, const char *text, mode_t mode)
{
	char *path = h_join(w->base, "approvals");

	h_write_file(path, text, mode);
	cr_assert_eq(chmod(path, mode), 0);
	return path;
}

#define BODY "release notes: 3 fixes"

/* An unapproved body to the sink is held, refused after network.hold,
 * and never reaches the sink; with --weaken gate-off the same body does. */
static void unapproved(bool weak)
{
	struct h_world w = h_world();
	struct receiver *sink = receiver("published\n");
	char *p = gate_policy(&w, sink->port, 0, 0, "1s");
	struct h_proc pr;

	H_PADDOCK(&pr, w.ws, "run", "--policy", p, "--record", w.record,
		  weak ? "--weaken" : "--ttl", weak ? "gate-off" : "1m", "--", "sh", "-c",
		  /* Built inside: the command line (in the record) lacks it. */
		  h_fmt("curl -s -m 10 -o /dev/null -d \"release notes: $((1+2)) fixes\" "
			"http://sink.test:%d/publish; true",
			sink->port));
	cr_assert_eq(pr.status, 0, H_SHOW(&pr));
	if (weak) {
		cr_assert(saw(sink, BODY), "gate-off did not let the body through\n" H_FMT,
			  H_ARGS(&pr));
		cr_assert(h_contains(pr.err_text, "gate-off"), H_SHOW(&pr));
		cr_assert(h_contains(h_json(w.record, "d['weakenings']"), "gate-off"));
		cr_assert_str_eq(count(&w, "held"), "0");
		return;
	}
	cr_assert_eq(atomic_load(&sink->count), 0, "the unapproved body arrived\n" H_FMT,
		     H_ARGS(&pr));
	cr_assert_str_eq(count(&w, "held"), "1");
	cr_assert_str_eq(count(&w, "refused-unapproved"), "1");
	cr_assert(h_contains(adm(&w),
			     h_fmt("\"digest\":\"%s\",\"length\":%zu", digest(BODY), strlen(BODY))),
		  "%s", adm(&w));
	cr_assert(h_contains(adm(&w), "\"reason\":\"timeout\""), "%s", adm(&w));
	/* Only its digest and length: the body is in no log. */
	cr_assert(!h_contains(adm(&w), BODY));
	cr_assert(!h_contains(h_read_file(w.record, NULL), BODY));
	cr_assert(!h_contains(pr.err_text, BODY), H_SHOW(&pr));
	cr_assert(
	    h_contains(pr.err_text, h_fmt("held a publication to sink.test:%d/publish (sha256:%s",
					  sink->port, digest(BODY))),
	    H_SHOW(&pr));
}

Test(release, an_unapproved_body_is_held_then_refused)
{
	unapproved(false);
}

Test(release, weaken_gate_off_lets_the_unapproved_body_through)
{
	unapproved(true);
}

/* An approval (the approvals file) releases the exact body to its
 * destination once: a replay is held and refused; a body one byte
 * different, or the approved body to another path, is refused. Chunked,
 * the same entity bytes have the same digest. */
Test(release, an_approval_releases_one_exact_body_once)
{
	struct h_world w = h_world();
	struct receiver *sink = receiver("published\n");
	char *p = gate_policy(&w, sink->port, 0, 0, "1s");
	const char *a = approvals_file(&w,
				       h_fmt("# approved by the owner\nsha256:%s "
					     "sink.test:%d/publish\n%s sink.test:%d/chunked\n",
					     digest(BODY), sink->port, digest(BODY), sink->port),
				       0600);
	const char *u = h_fmt("http://sink.test:%d", sink->port);
	struct h_proc pr;

	H_PADDOCK(&pr, w.ws, "run", "--policy", p, "--record", w.record, "--approvals", a, "--",
		  "sh", "-c",
		  h_fmt("c='curl -s -m 10 -o /dev/null'; "
			"$c -d 'release notes: 3 fixeS' %1$s/publish; "
			"$c -d '%2$s' %1$s/other; "
			"$c -d '%2$s' %1$s/publish; "
			"$c -d '%2$s' %1$s/publish; "
			"$c --noproxy '*' -H 'Transfer-Encoding: chunked' -d '%2$s' %1$s/chunked; "
			"true",
			u, BODY));
	cr_assert_eq(pr.status, 0, H_SHOW(&pr));
	cr_assert_eq(atomic_load(&sink->count), 2, H_SHOW(&pr));
	cr_assert(saw(sink, "POST /publish "), H_SHOW(&pr));
	cr_assert(saw(sink, "POST /chunked "), H_SHOW(&pr));
	cr_assert(!saw(sink, "fixeS"), H_SHOW(&pr));
	cr_assert(!saw(sink, "/other"), H_SHOW(&pr));
	cr_assert_str_eq(count(&w, "released"), "2");
	cr_assert_str_eq(count(&w, "refused-unapproved"), "3");
	cr_assert(h_contains(adm(&w), h_fmt("\"event\":\"approval\",\"generation\":1,\"digest\":"
					    "\"%s\",\"dest\":\"sink.test:%d/publish\"",
					    digest(BODY), sink->port)),
		  "%s", adm(&w));
	cr_assert_str_eq(count(&w, "allowed"), "2");
}

/* Taint: after a GET on the private rule, a body to an ordinary rule is a
 * publication (held, refused); its twin, the same run without the read,
 * lets it through. The private marker is in no log, record or stderr. */
static void taint(bool read)
{
	struct h_world w = h_world();
	const char *marker = h_fmt("PRIVATE-%s", h_marker());
	struct receiver *sink = receiver("published\n");
	struct receiver *note = receiver(h_fmt("%s\n", marker));
	struct receiver *pub = receiver("ok\n");
	char *p = gate_policy(&w, sink->port, note->port, pub->port, "1s");
	struct h_proc pr;

	H_PADDOCK(
	    &pr, w.ws, "run", "--policy", p, "--record", w.record, "--", "sh", "-c",
	    h_fmt("m=%s; "
		  "curl -s -m 10 -o /dev/null -d \"leak=$m\" http://pub.test:%d/upload; "
		  "curl -s -m 10 -o /dev/null -d \"leak=$m\" http://sink.test:%d/publish; "
		  "true",
		  read ? h_fmt("$(curl -s -m 10 http://note.test:%d/note)", note->port) : "none",
		  pub->port, sink->port));
	cr_assert_eq(pr.status, 0, H_SHOW(&pr));
	cr_assert_eq(atomic_load(&sink->count), 0, H_SHOW(&pr));
	if (!read) {
		cr_assert(saw(pub, "leak=none"), "the untainted body did not arrive\n" H_FMT,
			  H_ARGS(&pr));
		cr_assert_str_eq(count(&w, "held"), "1"); /* the sink's */
		return;
	}
	cr_assert_eq(atomic_load(&note->count), 1, H_SHOW(&pr));
	cr_assert_eq(atomic_load(&pub->count), 0, "the tainted body arrived\n" H_FMT, H_ARGS(&pr));
	cr_assert_str_eq(count(&w, "held"), "2");
	cr_assert_str_eq(count(&w, "refused-unapproved"), "2");
	cr_assert(h_contains(adm(&w), "\"tainted\":true"), "%s", adm(&w));
	cr_assert(h_contains(pr.err_text, "read from a private rule"), H_SHOW(&pr));
	cr_assert(!h_contains(adm(&w), marker), "%s", adm(&w));
	cr_assert(!h_contains(h_read_file(w.record, NULL), marker));
	cr_assert(!h_contains(pr.err_text, marker), H_SHOW(&pr));
}

Test(release, a_read_from_a_private_rule_taints_the_session)
{
	taint(true);
}

Test(release, taint_twin_without_the_private_read)
{
	taint(false);
}

static bool log_has(const struct h_world *w, const char *text)
{
	for (int i = 0; i < 100; i++) {
		if (h_contains(adm(w), text))
			return true;
		h_sleep_ms(100);
	}
	return false;
}

/* paddock approve by the owner while the run holds the body: released to
 * the sink. Bad input to paddock approve: one line, 125. */
Test(release, paddock_approve_releases_a_held_body)
{
	struct h_sworld s = h_sworld();
	struct receiver *sink = receiver("published\n");
	char *p = gate_policy(&s.w, sink->port, 0, 0, "20s");
	const char *name = h_fmt("gate-%d", getpid());
	const char *d = digest(BODY);
	struct h_proc pr, ap;

	H_PADDOCK_START(&pr, s.w.ws, "run", "--policy", p, "--record", s.w.record, "--name", name,
			"--", "sh", "-c",
			h_fmt("curl -s -m 25 -o /dev/null -d '%s' http://sink.test:%d/publish; "
			      "echo done",
			      BODY, sink->port));
	cr_assert(log_has(&s.w, "\"decision\":\"held\""), "nothing was held");
	cr_assert_eq(atomic_load(&sink->count), 0);
	/* Bad input first: the held request stays held. */
	H_PADDOCK(&ap, s.w.ws, "approve", name, "sha256:1234");
	cr_assert_eq(ap.status, 125, H_SHOW(&ap));
	cr_assert(h_contains(ap.err_text, "is not a SHA-256 digest"), H_SHOW(&ap));
	H_PADDOCK(&ap, s.w.ws, "approve", name, h_fmt("%.63sg", d));
	cr_assert_eq(ap.status, 125, H_SHOW(&ap));
	H_PADDOCK(&ap, s.w.ws, "approve", "no-such-session", d);
	cr_assert_eq(ap.status, 125, H_SHOW(&ap));
	cr_assert(h_contains(ap.err_text, "no such session"), H_SHOW(&ap));
	H_PADDOCK(&ap, s.w.ws, "approve", "--dest", "sink.test/publish", name, d);
	cr_assert_eq(ap.status, 125, H_SHOW(&ap));
	cr_assert(h_contains(ap.err_text, "--dest"), H_SHOW(&ap));
	H_PADDOCK(&ap, s.w.ws, "approve", name, digest("another body"));
	cr_assert_eq(ap.status, 125, H_SHOW(&ap));
	cr_assert(h_contains(ap.err_text, "nothing is held"), H_SHOW(&ap));
	/* Another destination: stored, and it releases nothing. */
	H_PADDOCK(&ap, s.w.ws, "approve", "--dest", h_fmt("sink.test:%d/other", sink->port), name,
		  d);
	cr_assert_eq(ap.status, 0, H_SHOW(&ap));
	cr_assert(h_contains(ap.out_text, "approved"), H_SHOW(&ap));
	h_sleep_ms(300);
	cr_assert_eq(atomic_load(&sink->count), 0);
	H_PADDOCK(&ap, s.w.ws, "approve", name, h_fmt("SHA256:%s", d));
	cr_assert_eq(ap.status, 125, H_SHOW(&ap)); /* the prefix is lower case */
	H_PADDOCK(&ap, s.w.ws, "approve", name, d);
	cr_assert_eq(ap.status, 0, H_SHOW(&ap));
	cr_assert(h_contains(ap.out_text, "released"), H_SHOW(&ap));
	cr_assert(h_contains(adm(&s.w), "\"by\":\"paddock-approve\""), "%s", adm(&s.w));
	cr_assert_eq(h_wait(&pr, H_TIMEOUT_MS), 0, H_SHOW(&pr));
	cr_assert_eq(atomic_load(&sink->count), 1, H_SHOW(&pr));
	cr_assert(saw(sink, BODY), H_SHOW(&pr));
	cr_assert_str_eq(count(&s.w, "released"), "1");
	cr_assert_str_eq(count(&s.w, "refused-unapproved"), "0");
	/* Over: nothing to approve any more. */
	H_PADDOCK(&ap, s.w.ws, "approve", name, d);
	cr_assert_eq(ap.status, 125, H_SHOW(&ap));
}

/* Only the owner: another user's session refuses our approve over the
 * 0666 link run.sh made to its socket (SO_PEERCRED), and its id is no
 * session of ours. */
Test(release, paddock_approve_of_another_users_session_is_refused)
{
	const char *uid2 = getenv("PADDOCK_TEST_UID2");
	const char *sock = getenv("PADDOCK_TEST_OTHER_SOCKET");
	const char *id = getenv("PADDOCK_TEST_OTHER_ID");
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	struct h_world w = h_world();
	char reply[256];
	struct h_proc ap;
	ssize_t n;
	int fd;

	if (!uid2 || !uid2[0])
		h_skip("needs run.sh as root (a second test user)");
	cr_assert(sock && sock[0] && id && id[0], "PADDOCK_TEST_OTHER_* missing");
	H_PADDOCK(&ap, w.ws, "approve", id, digest(BODY));
	cr_assert_eq(ap.status, 125, H_SHOW(&ap));
	cr_assert(h_contains(ap.err_text, "no such session"), H_SHOW(&ap));
	fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
	cr_assert_geq(fd, 0);
	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", sock);
	cr_assert_eq(connect(fd, (struct sockaddr *)&sa, sizeof(sa)), 0, "%s", strerror(errno));
	(void)send(fd, h_fmt("approve %s", digest(BODY)), 72, MSG_NOSIGNAL);
	n = recv(fd, reply, sizeof(reply) - 1, 0);
	close(fd);
	cr_assert_gt(n, 0);
	reply[n] = '\0';
	cr_assert(strstr(reply, "belongs to uid"), "%s", reply);
}

static void refused(struct h_proc *pr, const char *what)
{
	cr_assert_eq(pr->status, 125, "%s\n" H_FMT, what, H_ARGS(pr));
	cr_assert(h_contains(pr->err_text, what), H_SHOW(pr));
	cr_assert(!h_contains(pr->out_text, "ran"), H_SHOW(pr));
}

/* Bad approvals files and release-gate policies: one line, 125, nothing
 * run. */
Test(release, bad_approvals_files_and_policies_are_refused)
{
	struct h_world w = h_world();
	char *p = gate_policy(&w, 18989, 0, 0, "1s");
	const char *ok = h_fmt("%s sink.test:18989/publish\n", digest(BODY));
	const char *a;
	struct h_proc pr;

	a = approvals_file(&w, ok, 0620);
	H_PADDOCK(&pr, w.ws, "run", "--policy", p, "--approvals", a, "--", "echo", "ran");
	refused(&pr, "writable by its group or others");
	a = approvals_file(&w, ok, 0602);
	H_PADDOCK(&pr, w.ws, "run", "--policy", p, "--approvals", a, "--", "echo", "ran");
	refused(&pr, "writable by its group or others");
	a = approvals_file(&w, h_fmt("%ssha256:abc sink.test:1/x\n", ok), 0600);
	H_PADDOCK(&pr, w.ws, "run", "--policy", p, "--approvals", a, "--", "echo", "ran");
	refused(&pr, "line 2: is not a SHA-256 digest");
	a = approvals_file(&w, h_fmt("%s sink.test/publish\n", digest(BODY)), 0600);
	H_PADDOCK(&pr, w.ws, "run", "--policy", p, "--approvals", a, "--", "echo", "ran");
	refused(&pr, "line 1: is not a destination HOST:PORT/PATH");
	a = approvals_file(&w, h_fmt("%s\n", digest(BODY)), 0600);
	H_PADDOCK(&pr, w.ws, "run", "--policy", p, "--approvals", a, "--", "echo", "ran");
	refused(&pr, "line 1: is not \"DIGEST HOST:PORT/PATH\"");
	H_PADDOCK(&pr, w.ws, "run", "--policy", p, "--approvals", w.ws, "--", "echo", "ran");
	refused(&pr, "not a regular file");
	cr_assert_eq(symlink(approvals_file(&w, ok, 0600), h_join(w.base, "link")), 0);
	H_PADDOCK(&pr, w.ws, "run", "--policy", p, "--approvals", h_join(w.base, "link"), "--",
		  "echo", "ran");
	refused(&pr, "--approvals");
	H_PADDOCK(&pr, w.ws, "run", "--policy", p, "--approvals", h_join(w.base, "missing"), "--",
		  "echo", "ran");
	refused(&pr, "--approvals");
	/* Without a mediated network there is no gate to give them to. */
	H_PADDOCK(&pr, w.ws, "run", "--approvals", approvals_file(&w, ok, 0600), "--", "echo",
		  "ran");
	refused(&pr, "--approvals: needs a mediated network");
	H_PADDOCK(&pr, w.ws, "run", "--weaken", "gate-off", "--", "echo", "ran");
	refused(&pr, "--weaken gate-off: needs a mediated network");
	/* A sink must be http; a rule is a sink or private, not both; hold. */
	p = agent_with_network(&w, "bad1.json",
			       "{\"mode\": \"mediated\", \"allow\": [{\"host\": \"s.test\", "
			       "\"ports\": [443], \"protocol\": \"tls\", \"publish\": true}]}");
	H_PADDOCK(&pr, w.ws, "run", "--policy", p, "--", "echo", "ran");
	refused(&pr, "network.allow[0].publish: only on an \"http\" rule");
	p = agent_with_network(&w, "bad2.json",
			       "{\"mode\": \"mediated\", \"allow\": [{\"host\": \"s.test\", "
			       "\"ports\": [80], \"protocol\": \"http\", \"publish\": true, "
			       "\"private\": true}]}");
	H_PADDOCK(&pr, w.ws, "run", "--policy", p, "--", "echo", "ran");
	refused(&pr, "not both");
	p = agent_with_network(&w, "bad3.json",
			       "{\"mode\": \"mediated\", \"hold\": \"11m\", \"allow\": []}");
	H_PADDOCK(&pr, w.ws, "run", "--policy", p, "--", "echo", "ran");
	refused(&pr, "network.hold");
	p = agent_with_network(&w, "bad4.json",
			       "{\"mode\": \"mediated\", \"allow\": [{\"host\": \"s.test\", "
			       "\"ports\": [80], \"protocol\": \"http\", \"publish\": 1}]}");
	H_PADDOCK(&pr, w.ws, "run", "--policy", p, "--", "echo", "ran");
	refused(&pr, "network.allow[0].publish");
}

/* A body over 1 MiB to the sink is refused unread (Content-Length) and
 * never arrives, approved or not. */
Test(release, a_body_too_large_to_digest_is_refused)
{
	struct h_world w = h_world();
	struct receiver *sink = receiver("published\n");
	char *p = gate_policy(&w, sink->port, 0, 0, "1s");
	struct h_proc pr;

	H_PADDOCK(&pr, w.ws, "run", "--policy", p, "--record", w.record, "--", "sh", "-c",
		  h_fmt("head -c 1048577 /dev/zero | tr '\\0' x > /tmp/big; "
			"curl -s -m 10 -o /dev/null --data-binary @/tmp/big "
			"http://sink.test:%d/publish; true",
			sink->port));
	cr_assert_eq(pr.status, 0, H_SHOW(&pr));
	cr_assert_eq(atomic_load(&sink->count), 0, H_SHOW(&pr));
	cr_assert_str_eq(count(&w, "refused-unapproved"), "1");
	cr_assert(h_contains(adm(&w), "\"reason\":\"too-large\""), "%s", adm(&w));
}

/* A session without a mediated network has no gate to approve in. */
Test(release, paddock_approve_without_a_release_gate_is_refused)
{
	struct h_sworld s = h_sworld();
	const char *name = h_fmt("nogate-%d", getpid());
	struct h_proc pr, ap, st;

	H_PADDOCK_START(&pr, s.w.ws, "run", "--name", name, "--", "sleep", "20");
	for (int i = 0; i < 50; i++) {
		H_PADDOCK(&ap, s.w.ws, "approve", name,
			  "2cf24dba5fb0a30e26e83b2ac5b9e29e1b161e5c1fa7425e73043362938b9824");
		if (!h_contains(ap.err_text, "no such session"))
			break;
		h_sleep_ms(100);
	}
	cr_assert_eq(ap.status, 125, H_SHOW(&ap));
	cr_assert(h_contains(ap.err_text, "has no release gate"), H_SHOW(&ap));
	H_PADDOCK(&st, s.w.ws, "stop", "--grace", "0s", name);
	cr_assert_eq(st.status, 0, H_SHOW(&st));
	h_wait(&pr, H_TIMEOUT_MS);
}
