/* Integration: the endpoint identity of an HTTP port forward (docs/sessions.md,
 * "Endpoint identity"), without a browser: what the relay stamps on the
 * responses it passes, what it refuses after a restart, and what paddock
 * endpoint and ps --json say. Each protection has a twin run with
 * --weaken lease-port-only that shows the test sees it go.
 *
 * The sandbox side is the probe's "http:PORT:MODE:MARKER" mode; its "f"
 * letter makes the server send a forged Paddock-Lease of its own. Fixed
 * loopback ports 19000-19006, one per test (they run at the same time); each test has its
 * own registry. */
#include "harness.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>

TestSuite(lease_id, .init = h_init, .fini = h_fini, .timeout = 120);

static const char *js(const struct h_sworld *s, const char *id, const char *expr)
{
	return h_session_json(s, id, expr);
}

/* One HTTP GET of "/" to 127.0.0.1:port with that Host header, read until
 * the relay closes (3 s limit): the whole response, or NULL when the
 * connection was refused. */
static const char *get(int port, const char *host)
{
	struct sockaddr_in in4 = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
	struct timeval tv = {.tv_sec = 3};
	const char *req = h_fmt("GET / HTTP/1.1\r\nHost: %s\r\nUser-Agent: t\r\n\r\n", host);
	char *buf = calloc(1, 1), chunk[4096];
	size_t len = 0;
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);

	cr_assert(fd >= 0 && buf);
	in4.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	if (connect(fd, (struct sockaddr *)&in4, sizeof(in4)) < 0) {
		close(fd);
		free(buf);
		return NULL;
	}
	(void)!send(fd, req, strlen(req), MSG_NOSIGNAL);
	for (;;) {
		ssize_t r = recv(fd, chunk, sizeof(chunk), 0);
		char *b;

		if (r <= 0)
			break;
		b = realloc(buf, len + (size_t)r + 1);
		cr_assert_not_null(b);
		buf = b;
		memcpy(buf + len, chunk, (size_t)r);
		len += (size_t)r;
		buf[len] = '\0';
	}
	close(fd);
	return h_keep(buf);
}

/* The value of header name in response r ("" when absent), and how many
 * times it appears. */
static const char *header(const char *r, const char *name, int *count)
{
	const char *end = r ? strstr(r, "\r\n\r\n") : NULL, *found = "";
	size_t k = strlen(name);

	*count = 0;
	for (const char *l = r ? strstr(r, "\r\n") : NULL; l && l < end; l = strstr(l + 2, "\r\n"))
		if (strncasecmp(l + 2, name, k) == 0 && l[2 + k] == ':') {
			(*count)++;
			found = h_fmt("%.*s", (int)strcspn(l + 4 + k, "\r"), l + 4 + k);
		}
	return found;
}

/* Retry until port answers a GET with marker in the body. */
static const char *await_page(int port, const char *host, const char *marker)
{
	for (int waited = 0; waited <= 5000; waited += 50) {
		const char *r = get(port, host);

		if (r && h_contains(r, h_fmt("<h1 id=\"marker\">%s</h1>", marker)))
			return r;
		h_sleep_ms(50);
	}
	return NULL;
}

/* paddock run --detach --name NAME [--weaken lease-port-only] --port
 * 127.0.0.1:PORT:8080/http -- probe http:8080:f:MARKER; the id. */
static const char *serve(const struct h_sworld *s, const char *name, int port, bool weak,
			 const char *marker)
{
	const char *args[20];
	size_t n = 0;
	struct h_proc p;

	args[n++] = "run";
	args[n++] = "--detach";
	args[n++] = "--name";
	args[n++] = name;
	if (weak) {
		args[n++] = "--weaken";
		args[n++] = "lease-port-only";
	}
	args[n++] = "--ro-bind";
	args[n++] = h_fmt("%s:/probe", h_helpers_dir());
	args[n++] = "--port";
	args[n++] = h_fmt("127.0.0.1:%d:8080/http", port);
	args[n++] = "--";
	args[n++] = "/probe/probe";
	args[n++] = h_fmt("http:8080:f:%s", marker);
	args[n] = NULL;
	h_run_paddock(&p, s->w.ws, args);
	cr_assert_eq(p.status, 0, H_SHOW(&p));
	return h_fmt("%.*s", (int)strcspn(p.out_text, "\n"), p.out_text);
}

static void stop(const struct h_sworld *s, const char *id)
{
	struct h_proc p;

	H_PADDOCK(&p, s->w.ws, "stop", "--grace", "0s", id);
	cr_assert_eq(p.status, 0, H_SHOW(&p));
}

/* The endpoint's nonce in session.json, unquoted ("null" for none). */
static const char *nonce(const struct h_sworld *s, const char *id)
{
	const char *v = js(s, id, "d['endpoints'][0]['nonce']");

	return v[0] == '"' ? h_fmt("%.*s", (int)strlen(v) - 2, v + 1) : v;
}

static const char *lease_of(const struct h_sworld *s, const char *id, unsigned gen)
{
	return h_fmt("session=%s; service=-; gen=%u; nonce=%s", id, gen, nonce(s, id));
}

/* ---------------------------------------------------------------- tests */

static void stamping(bool weak)
{
	struct h_sworld s = h_sworld();
	const char *m = h_marker();
	int port = weak ? 19003 : 19000; /* the tests run at the same time */
	const char *id = serve(&s, "web", port, weak, m), *r, *v;
	int count;

	r = await_page(port, h_fmt("127.0.0.1:%d", port), m);
	cr_assert_not_null(r, "no page on %d", port);
	v = header(r, "Paddock-Lease", &count);
	if (weak) {
		/* The twin: nothing stamped, the server's forgery passes. */
		cr_assert_str_eq(nonce(&s, id), "null");
		cr_assert_eq(count, 1, "%s", r);
		cr_assert_str_eq(v, "session=forged; service=x; gen=99; nonce=0000");
	} else {
		cr_assert_str_eq(js(&s, id, "len(d['endpoints'][0]['nonce'])"), "32");
		cr_assert_eq(count, 1, "one Paddock-Lease, the relay's: %s", r);
		cr_assert_str_eq(v, lease_of(&s, id, 1));
		cr_assert_str_eq(header(r, "Connection", &count), "close");
		cr_assert_eq(count, 1, "%s", r);
	}
	/* The body is whole either way. */
	cr_assert(h_contains(r, h_fmt("<title>%s</title>", m)), "%s", r);
	stop(&s, id);
}

Test(lease_id, an_http_forward_stamps_every_response_with_its_lease)
{
	stamping(false);
}

Test(lease_id, weakened_lease_port_only_stamps_nothing)
{
	stamping(true);
}

static void restart(bool weak)
{
	struct h_sworld s = h_sworld();
	const char *m1 = h_marker(), *m2 = h_marker();
	int port = weak ? 19004 : 19001, count;
	const char *id1 = serve(&s, "web", port, false, m1), *id2, *r, *old_host, *new_host;

	old_host = h_fmt("g1.%s.paddock.test:%d", id1, port);
	cr_assert_not_null(await_page(port, old_host, m1), "generation 1 does not answer");
	stop(&s, id1);
	/* The same port, the next generation. */
	id2 = serve(&s, "web", port, weak, m2);
	new_host = h_fmt("g2.%s.paddock.test:%d", id2, port);
	cr_assert_str_eq(js(&s, id2, "d['endpoints'][0]['generation']"), "2");
	r = await_page(port, "127.0.0.1", m2);
	cr_assert_not_null(r, "generation 2 does not answer");

	/* A request for the ended generation: refused, never relayed. */
	r = get(port, old_host);
	cr_assert_not_null(r);
	if (weak) {
		cr_assert(h_contains(r, m2), "the twin relays it to generation 2: %s", r);
		stop(&s, id2);
		return;
	}
	cr_assert(strncmp(r, "HTTP/1.1 421 ", 13) == 0, "%s", r);
	cr_assert(!h_contains(r, m2) && !h_contains(r, m1), "%s", r);
	cr_assert_str_eq(header(r, "Paddock-Lease", &count), lease_of(&s, id2, 2));
	/* Another session's name (any id) is refused the same way. */
	r = get(port, "g2.000000000000.paddock.test");
	cr_assert(r && strncmp(r, "HTTP/1.1 421 ", 13) == 0, "%s", r);
	/* Its own name is relayed, stamped with generation 2. */
	r = await_page(port, new_host, m2);
	cr_assert_not_null(r);
	cr_assert_str_eq(header(r, "Paddock-Lease", &count), lease_of(&s, id2, 2));
	cr_assert_str_neq(nonce(&s, id2), nonce(&s, id1));
	stop(&s, id2);
}

Test(lease_id, after_a_restart_the_ended_generations_host_is_refused)
{
	restart(false);
}

Test(lease_id, weakened_lease_port_only_relays_the_ended_generations_host)
{
	restart(true);
}

static void query(bool weak)
{
	struct h_sworld s = h_sworld();
	int port = weak ? 19005 : 19002, count;
	const char *m = h_marker(), *id = serve(&s, "web", port, weak, m), *r, *line;
	const char *ps_json = h_join(s.w.base, "ps.json");
	struct h_proc p;

	r = await_page(port, "127.0.0.1", m);
	cr_assert_not_null(r);
	H_PADDOCK(&p, s.w.ws, "endpoint", "web");
	cr_assert_eq(p.status, 0, H_SHOW(&p));
	line =
	    h_fmt("127.0.0.1:%d sandbox=8080 protocol=http session=%s service=- gen=1", port, id);
	if (weak) {
		/* The twin: a port is all there is. */
		cr_assert_str_eq(p.out_text, h_fmt("%s\n", line));
		cr_assert(!h_contains(header(r, "Paddock-Lease", &count), id));
		stop(&s, id);
		return;
	}
	/* The nonce it gives is the one the relay stamps. */
	cr_assert_str_eq(p.out_text, h_fmt("%s nonce=%s lease_host=g1.%s.paddock.test\n", line,
					   nonce(&s, id), id));
	cr_assert_str_eq(header(r, "Paddock-Lease", &count), lease_of(&s, id, 1));
	H_PADDOCK(&p, s.w.ws, "ps", "--json");
	cr_assert_eq(p.status, 0, H_SHOW(&p));
	h_write_file(ps_json, p.out_text, 0600);
	cr_assert_str_eq(h_json(ps_json, "d[0]['endpoints'][0]['nonce']"),
			 h_fmt("\"%s\"", nonce(&s, id)));
	cr_assert_str_eq(h_json(ps_json, "d[0]['endpoints'][0]['lease_host']"),
			 h_fmt("\"g1.%s.paddock.test\"", id));
	H_PADDOCK(&p, s.w.ws, "endpoint", "--json", "web");
	cr_assert_eq(p.status, 0, H_SHOW(&p));
	cr_assert(h_contains(p.out_text, "\"protocol\":\t\"http\""), H_SHOW(&p));
	/* A service it has no forward of, then an ended session: one line, 125. */
	H_PADDOCK(&p, s.w.ws, "endpoint", "web", "db");
	cr_assert_eq(p.status, 125, H_SHOW(&p));
	cr_assert(h_contains(p.err_text, "has no endpoint of service db"), H_SHOW(&p));
	stop(&s, id);
	H_PADDOCK(&p, s.w.ws, "endpoint", "web");
	cr_assert_eq(p.status, 125, H_SHOW(&p));
	cr_assert_eq(h_count_lines(p.err_text), 1, H_SHOW(&p));
	cr_assert(h_contains(p.err_text, "it has no live endpoint"), H_SHOW(&p));
}

Test(lease_id, paddock_endpoint_gives_the_current_endpoint_and_its_nonce)
{
	query(false);
}

Test(lease_id, weakened_lease_port_only_endpoint_has_no_nonce)
{
	query(true);
}

/* A port that names a service: the stamp says which, and paddock endpoint
 * ID SERVICE selects it. The server is the policy's service "web". */
Test(lease_id, a_services_port_carries_the_service_in_its_lease)
{
	struct h_sworld s = h_sworld();
	const char *m = h_marker(), *policy = h_join(s.w.base, "p.json"), *id, *r;
	struct h_proc p;
	int count;

	h_write_file(
	    policy,
	    h_fmt("{\"version\": 1, \"mounts\": ["
		  "{\"type\": \"bind\", \"source\": \"/usr\", \"mode\": \"ro\"},"
		  "{\"type\": \"bind\", \"source\": \"/bin\", \"mode\": \"ro\", \"symlink\": "
		  "\"copy\"},"
		  "{\"type\": \"bind\", \"source\": \"/lib\", \"mode\": \"ro\", \"symlink\": "
		  "\"copy\"},"
		  "{\"type\": \"bind\", \"source\": \"/lib64\", \"mode\": \"ro\", \"symlink\": "
		  "\"copy\", \"optional\": true},"
		  "{\"type\": \"bind\", \"source\": \"%s\", \"target\": \"/probe\", \"mode\": "
		  "\"ro\"},"
		  "{\"type\": \"proc\", \"target\": \"/proc\"}],"
		  " \"services\": [{\"name\": \"web\", \"argv\": [\"/probe/probe\", "
		  "\"http:8080:p:%s\"]}],"
		  " \"ports\": [{\"host\": \"127.0.0.1:19006\", \"sandbox\": 8080, \"protocol\": "
		  "\"http\", \"service\": \"web\"}]}\n",
		  h_helpers_dir(), m),
	    0644);
	H_PADDOCK(&p, s.w.ws, "run", "--detach", "--name", "svc", "--policy", policy, "--", "sleep",
		  "60");
	cr_assert_eq(p.status, 0, H_SHOW(&p));
	id = h_fmt("%.*s", (int)strcspn(p.out_text, "\n"), p.out_text);
	r = await_page(19006, "127.0.0.1", m);
	cr_assert_not_null(r, "the service does not answer");
	cr_assert_str_eq(header(r, "Paddock-Lease", &count),
			 h_fmt("session=%s; service=web; gen=1; nonce=%s", id, nonce(&s, id)));
	H_PADDOCK(&p, s.w.ws, "endpoint", "svc", "web");
	cr_assert_eq(p.status, 0, H_SHOW(&p));
	cr_assert_eq(h_count_lines(p.out_text), 1, H_SHOW(&p));
	cr_assert(h_contains(p.out_text, " service=web gen=1 nonce="), H_SHOW(&p));
	H_PADDOCK(&p, s.w.ws, "endpoint", "svc", "db");
	cr_assert_eq(p.status, 125, H_SHOW(&p));
	stop(&s, id);
}
