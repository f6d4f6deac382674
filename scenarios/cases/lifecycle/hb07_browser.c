/* HB-07: results are attributed to the session and generation that
 * produced them, checked with a real headless Chromium.
 *
 * Per variant (plain: Cache-Control no-store; cache: max-age=3600; sw: the
 * page registers a cache-first service worker), two sessions A and B, each
 * a python3 web server inside the sandbox behind an HTTP port forward
 * (`--port 127.0.0.1:P:8080/http`) whose page shows a marker only that
 * generation has. Then:
 *
 *  1. Chromium (Debian's, headless, driven over --remote-debugging-pipe by
 *     hb07_cdp.c, a fresh --user-data-dir in the fixture under /tmp) visits
 *     A and B at the URL the client was given: the lease host name
 *     (`http://g1.ID.paddock.test:P/`, mapped to 127.0.0.1 by
 *     --host-resolver-rules) from `paddock endpoint`, or, when paddock gave
 *     no lease, `http://127.0.0.1:P/`; with the service worker, it waits
 *     until the worker is active;
 *  2. A is restarted under its name: generation 2 on the same port, a new
 *     marker;
 *  3. the browser again, with the same profile (its HTTP cache and service
 *     workers), visits A's current endpoint, A's old origin, B, and B's
 *     endpoint taken for A; a scripted HTTP client (no cache) asks the
 *     same.
 *
 * Every navigation records the remote address, the Paddock-Lease value,
 * fromDiskCache, fromServiceWorker (Network.responseReceived), the marker
 * in the rendered page and a screenshot (Page.captureScreenshot, a PNG in
 * the results directory, linked from report.md). The checker accepts a
 * result only when lease session, generation and nonce are those paddock
 * endpoint gave (enforced); a client with only a port accepts any 200 on
 * the expected port (weakened:lease-port-only, paddock's --weaken
 * lease-port-only: no stamp, no lease host; and the docker arm: two
 * containers with --network host, servers on distinct loopback ports, one
 * restarted). hb07_grade.c grades: an accepted result whose marker is not
 * the expected generation's is a misattribution (FAIL).
 *
 * Loopback ports 19010-19015 (two per variant). Chromium runs as the
 * workload user with its own sandbox (as root it would need --no-sandbox),
 * only against loopback: every other name is mapped to NOTFOUND and its
 * background networking is off. No Chromium: NOT EXECUTED with the reason
 * (scenarios/chromium.sh deps installs Debian's package in make eval). */
#include "../../lib/case.h"
#include "../../observers/observe.h"
#include "hb07_cdp.h"
#include "hb07_grade.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#define CHROMIUM   "/usr/bin/chromium"
#define PORT_BASE  19010
#define NA_CHROME  "Debian's chromium is not installed (scenarios/chromium.sh deps could not)"
#define RESOLVER   "MAP *.paddock.test 127.0.0.1, MAP * ~NOTFOUND, EXCLUDE 127.0.0.1"
#define SERVE_PORT "8080"

static const struct case_arm arms[] = {
    {.name = "enforced"},
    {.name = "weakened:lease-port-only"},
    {.name = "docker"},
    {.name = NULL},
};

static const char *const variants[] = {"plain", "cache", "sw"};
#define N_VARIANTS 3

/* The web server: "/" a page with the marker (Cache-Control by MODE: c
 * max-age, else no-store; s registers /sw.js), "/sw.js" a cache-first
 * service worker. HTTP/1.0: one response per connection. */
static const char server_py[] =
    "import http.server,sys\n"
    "P,MODE,MARK=int(sys.argv[1]),sys.argv[2],sys.argv[3]\n"
    "SW=b\"self.addEventListener('install',e=>{self.skipWaiting();"
    "e.waitUntil(caches.open('v').then(c=>c.add('/')))});"
    "self.addEventListener('activate',e=>e.waitUntil(self.clients.claim()));"
    "self.addEventListener('fetch',e=>e.respondWith(caches.match(e.request)"
    ".then(r=>r||fetch(e.request))));\"\n"
    "class H(http.server.BaseHTTPRequestHandler):\n"
    "  def do_GET(s):\n"
    "    if s.path=='/sw.js': b,t,c=SW,'application/javascript','no-cache'\n"
    "    elif s.path=='/':\n"
    "      js=\"<script>navigator.serviceWorker.register('/sw.js')</script>\" if 's' in MODE "
    "else ''\n"
    "      b=('<!doctype html><html><head><title>%s</title></head><body "
    "style=\"font:32px sans-serif\"><p>server-owned marker</p><h1 id=\"marker\">%s</h1>"
    "%s</body></html>'%(MARK,MARK,js)).encode()\n"
    "      t,c='text/html','max-age=3600' if 'c' in MODE else 'no-store'\n"
    "    else:\n"
    "      s.send_error(404); return\n"
    "    s.send_response(200); s.send_header('Content-Type',t); "
    "s.send_header('Cache-Control',c)\n"
    "    s.send_header('Content-Length',str(len(b))); s.end_headers(); s.wfile.write(b)\n"
    "  def log_message(s,*a): pass\n"
    "http.server.HTTPServer(('127.0.0.1',P),H).serve_forever()\n";

/* One session (or container) of a variant. */
struct hb07_sess {
	char name[96];
	int port;
	struct hb07_expect e;
	char host[128]; /* the lease host name, "" when paddock gave none */
	bool up;
	char rec[PATH_MAX]; /* its completion record (paddock arms), read at its stop */
};

struct hb07 {
	char shots[PATH_MAX]; /* OUTDIR/hb07-ARM */
	char rel[64];	      /* hb07-ARM, relative to OUTDIR */
	struct hb07_nav nav[HB07_NAVS_MAX * N_VARIANTS];
	size_t n;
	bool port_only, docker;
	struct hb07_sess s[2];
	char gone_a1[96]; /* A's first generation's URL host (its old origin) */
	bool recorded;	  /* the arm's one completion record was asked for */
	unsigned long long rnd;
};

static unsigned long long rnd64(void)
{
	unsigned long long v = 0;
	int fd = open("/dev/urandom", O_RDONLY | O_CLOEXEC);

	if (fd >= 0) {
		(void)!read(fd, &v, sizeof(v));
		close(fd);
	}
	return v;
}

static int probe(struct case_run *cr, struct err *why)
{
	(void)cr;
	if (access(CHROMIUM, X_OK) != 0)
		return err_set(why, ENOENT, NA_CHROME);
	return 0;
}

/* GET / from 127.0.0.1:port with that Host header, no cache, one
 * exchange (3 s): the response's length in resp (NUL-terminated). */
static size_t fetch(const char *host, int port, char *resp, size_t size)
{
	struct sockaddr_in in4 = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
	struct timeval tv = {.tv_sec = 3};
	char req[256];
	size_t len = 0;
	ssize_t k;
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);

	in4.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (fd >= 0)
		setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	if (fd >= 0 && connect(fd, (struct sockaddr *)&in4, sizeof(in4)) == 0) {
		snprintf(req, sizeof(req), "GET / HTTP/1.1\r\nHost: %s:%d\r\n\r\n", host, port);
		(void)!send(fd, req, strlen(req), MSG_NOSIGNAL);
		while (len < size - 1 && (k = recv(fd, resp + len, size - 1 - len, 0)) > 0)
			len += (size_t)k;
	}
	if (fd >= 0)
		close(fd);
	resp[len] = '\0';
	return len;
}

/* ------------------------------------------------------------ sessions */

/* The arm's paddock knob: weakened:KNOB's, or none. */
static const char *knob(const struct case_run *cr)
{
	if (cr->r->kind != ARM_WEAKENED)
		return NULL;
	return cr->arm->knob ? cr->arm->knob : strchr(cr->arm->name, ':') + 1;
}

/* Start s (its name, port and marker set): paddock run --detach, or docker
 * run -d --network host. Then wait until it answers, and read its lease. */
static int start(struct case_run *cr, struct hb07 *x, struct hb07_sess *s, const char *mode)
{
	struct argv_buf a;
	char log[PATH_MAX + 64], spec[64], port[16], buf[4096], v[128];
	int st = -1;

	log_path(cr->ctx, cr->r, "servers.log", log, sizeof(log));
	snprintf(port, sizeof(port), "%d", s->port);
	if (x->docker) {
		argv_start(&a, cr->r);
		argv_words(&a, "docker", "run", "-d", "--rm", "--network", "host", "--name",
			   s->name, "-v", "/usr:/usr:ro", "-v", "/usr/lib:/lib:ro", "-v",
			   "/usr/lib64:/lib64:ro", cr->ctx->docker_image, "/usr/bin/python3", "-c",
			   server_py, port, mode, s->e.marker, NULL);
		if (run_vec(cr->ctx, false, &a, log, 60000, &st) < 0 || st != 0)
			return -1;
	} else {
		snprintf(spec, sizeof(spec), "127.0.0.1:%d:" SERVE_PORT "/http", s->port);
		/* One record per arm shows the weakenings in effect (each
		 * session's --port makes its effective policy its own, so
		 * their digests are not comparable). */
		if (!x->recorded)
			snprintf(s->rec, sizeof(s->rec), "%s/%s.json", cr->records, s->name);
		x->recorded = true;
		argv_paddock_run(&a, cr->ctx, cr->r, cr->r->policy_path, knob(cr), NULL, s->rec);
		argv_words(&a, "--detach", "--name", s->name, "--port", spec, "--", "python3", "-c",
			   server_py, SERVE_PORT, mode, s->e.marker, NULL);
		if (run_vec(cr->ctx, cr->ctx->drop, &a, log, 30000, &st) < 0 || st != 0)
			return -1;
	}
	s->up = true;
	/* The relay accepts before the server inside listens: until a 200. */
	for (int i = 0; i < 100; i++) {
		if (fetch("127.0.0.1", s->port, buf, sizeof(buf)) > 12 && atoi(buf + 9) == 200)
			break;
		sleep_ms(100);
	}
	s->e.port = s->port;
	s->e.nonce[0] = s->host[0] = '\0';
	if (x->docker)
		return 0;
	{
		char *ep[] = {cr->ctx->paddock, "endpoint", "--json", s->name, NULL};

		if (run_capture(cr->ctx, cr->ctx->drop, ep, buf, sizeof(buf), 10000, &st) < 0 ||
		    st != 0)
			return -1;
	}
	if (json_get(buf, strlen(buf), "0.session", s->e.session, sizeof(s->e.session)) < 0 ||
	    json_get(buf, strlen(buf), "0.generation", v, sizeof(v)) < 0)
		return -1;
	s->e.gen = (unsigned)atoi(v);
	(void)json_get(buf, strlen(buf), "0.nonce", s->e.nonce, sizeof(s->e.nonce));
	(void)json_get(buf, strlen(buf), "0.lease_host", s->host, sizeof(s->host));
	if (strcmp(s->e.nonce, "null") == 0)
		s->e.nonce[0] = '\0';
	/* A client without a nonce to check has only the port. */
	if (strcmp(s->host, "null") == 0 || !s->e.nonce[0] || x->port_only)
		s->host[0] = '\0';
	return 0;
}

static void stop(struct case_run *cr, struct hb07 *x, struct hb07_sess *s)
{
	int st;

	if (!s->up)
		return;
	if (x->docker) {
		char *rm[] = {"docker", "rm", "-f", s->name, NULL};

		(void)run_argv(cr->ctx, false, rm, NULL, 30000, &st);
	} else {
		char *sp[] = {cr->ctx->paddock, "stop", "--grace", "0s", s->name, NULL};
		char *rm[] = {cr->ctx->paddock, "rm", s->name, NULL};

		(void)run_argv(cr->ctx, cr->ctx->drop, sp, NULL, 15000, &st);
		(void)run_argv(cr->ctx, cr->ctx->drop, rm, NULL, 15000, &st);
		/* Its weakenings as the arm meant them (none, or the knob). */
		if (s->rec[0])
			case_record(cr, s->rec, NULL);
		s->rec[0] = '\0';
	}
	s->up = false;
}

/* The origin the client was given for s. */
static void origin(const struct hb07_sess *s, char *buf, size_t n)
{
	snprintf(buf, n, "http://%s:%d", s->host[0] ? s->host : "127.0.0.1", s->port);
}

/* -------------------------------------------------------------- checks */

static struct hb07_nav *nav_new(struct hb07 *x, const char *var, const char *what,
				const struct hb07_sess *want)
{
	struct hb07_nav *n;

	if (x->n == sizeof(x->nav) / sizeof(x->nav[0]))
		return NULL;
	n = &x->nav[x->n++];
	memset(n, 0, sizeof(*n));
	snprintf(n->what, sizeof(n->what), "%s %s", what, var);
	n->want = want->e;
	return n;
}

static void record(struct case_run *cr, struct hb07 *x, struct hb07_nav *n, const char *url,
		   const char *file, const char *by)
{
	char label[160];

	n->accepted = hb07_accept(n, x->port_only);
	result_evidence(cr->r, by,
			"%s: %s -> status %d, remote %s:%d, Paddock-Lease [%s], fromDiskCache %d, "
			"fromServiceWorker %d, marker %s (expected %s gen %u %s): %s",
			n->what, url, n->status, n->remote[0] ? n->remote : "-", n->remote_port,
			n->lease, n->from_disk_cache, n->from_service_worker,
			n->marker[0] ? n->marker : "-", n->want.session[0] ? n->want.session : "-",
			n->want.gen, n->want.marker, n->accepted ? "ACCEPTED" : "rejected");
	if (n->shot) {
		snprintf(label, sizeof(label), "%s (%s)", n->what,
			 n->accepted ? "accepted" : "rejected");
		result_artifact(cr->r, label, file);
	}
}

static void browse(struct case_run *cr, struct hb07 *x, struct cdp *c, const char *var,
		   const char *what, const char *url, const struct hb07_sess *want)
{
	struct hb07_nav *n = nav_new(x, var, what, want);
	char png[PATH_MAX + 64], rel[128];

	if (!n)
		return;
	snprintf(rel, sizeof(rel), "%s/%s-%zu.png", x->rel, var, x->n);
	snprintf(png, sizeof(png), "%s/%s-%zu.png", x->shots, var, x->n);
	n->url_port = atoi(strrchr(url, ':') + 1);
	if (cdp_visit(c, url, png, n) < 0)
		result_evidence(cr->r, "browser", "%s: %s: %s", n->what, url, c->why);
	record(cr, x, n, url, rel, "browser");
}

/* The scripted client: GET / with the URL's Host, no cache. */
static void client(struct case_run *cr, struct hb07 *x, const char *var, const char *what,
		   const char *host, int port, const struct hb07_sess *want)
{
	struct hb07_nav *n = nav_new(x, var, what, want);
	char resp[8192], path[PATH_MAX + 64], rel[128] = "", url[160];
	const char *h, *m;

	if (!n)
		return;
	snprintf(url, sizeof(url), "http://%s:%d/", host, port);
	if (fetch(host, port, resp, sizeof(resp)) > 12 && strncmp(resp, "HTTP/1.", 7) == 0) {
		n->loaded = true;
		n->status = atoi(resp + 9);
		snprintf(n->remote, sizeof(n->remote), "127.0.0.1");
		n->remote_port = n->url_port = port;
		if ((h = strcasestr(resp, "\r\nPaddock-Lease: ")))
			snprintf(n->lease, sizeof(n->lease), "%.*s", (int)strcspn(h + 17, "\r"),
				 h + 17);
		if ((m = strstr(resp, "id=\"marker\">")))
			snprintf(n->marker, sizeof(n->marker), "%.*s", (int)strcspn(m + 12, "<"),
				 m + 12);
		snprintf(rel, sizeof(rel), "%s/%s-%zu.txt", x->rel, var, x->n);
		snprintf(path, sizeof(path), "%s/%s-%zu.txt", x->shots, var, x->n);
		n->shot = fixture_write(cr->ctx, path, resp, 0644) == 0;
	}
	record(cr, x, n, url, rel, "client");
}

/* The origins a service worker may use (http origins other than loopback
 * are not secure contexts): the lease hosts known so far. */
static void secure_list(const struct hb07 *x, char *buf, size_t n)
{
	char o[160];

	buf[0] = '\0';
	for (int i = 0; i < 2; i++) {
		origin(&x->s[i], o, sizeof(o));
		snprintf(buf + strlen(buf), n - strlen(buf), "%s%s", buf[0] ? "," : "", o);
	}
	if (x->gone_a1[0])
		snprintf(buf + strlen(buf), n - strlen(buf), ",%s", x->gone_a1);
}

static int browser(struct case_run *cr, struct hb07 *x, struct cdp *c, const char *profile)
{
	char sec[1024];
	uid_t uid = cr->ctx->drop ? cr->ctx->subj->workload_uid : getuid();
	gid_t gid = cr->ctx->drop ? cr->ctx->subj->workload_gid : getgid();

	secure_list(x, sec, sizeof(sec));
	if (cdp_start(c, CHROMIUM, profile, RESOLVER, sec, uid, gid) < 0) {
		result_evidence(cr->r, "browser", "chromium: %s", c->why);
		cdp_stop(c);
		return -1;
	}
	return 0;
}

static int variant(struct case_run *cr, struct hb07 *x, int vi)
{
	const char *var = variants[vi], *mode = vi == 0 ? "p" : vi == 1 ? "c" : "s";
	struct hb07_sess *A = &x->s[0], *B = &x->s[1];
	char profile[PATH_MAX], url_a[160], url_b[160], url_a1[160], host[128];
	struct cdp c;

	for (int i = 0; i < 2; i++) {
		memset(&x->s[i], 0, sizeof(x->s[i]));
		snprintf(x->s[i].name, sizeof(x->s[i].name), "paddock-eval-hb07-%d-%c-%s-%c",
			 (int)getpid(), cr->arm->name[0], var, 'a' + i);
		x->s[i].port = PORT_BASE + 2 * vi + i;
		snprintf(x->s[i].e.marker, sizeof(x->s[i].e.marker), "%c1-%s-%08llx", 'A' + i, var,
			 (x->rnd + (unsigned)vi) & 0xffffffffull);
		if (start(cr, x, &x->s[i], mode) < 0) {
			result_evidence(cr->r, "fixture", "%s: %s did not start", var,
					x->s[i].name);
			return -1;
		}
	}
	x->gone_a1[0] = '\0';
	snprintf(host, sizeof(host), "profile-%s", var);
	if (fixture_mkdir(cr->ctx, &cr->fx, host, profile, sizeof(profile)) < 0) {
		result_evidence(cr->r, "fixture", "%s: no profile directory", var);
		return -1;
	}
	origin(A, url_a, sizeof(url_a));
	origin(B, url_b, sizeof(url_b));
	strcat(url_a, "/");
	strcat(url_b, "/");
	/* Phase 1: both sessions' first generation. */
	if (browser(cr, x, &c, profile) < 0)
		return -1;
	browse(cr, x, &c, var, "current: A gen 1", url_a, A);
	if (vi == 2 && !cdp_sw_ready(&c, 8000))
		result_evidence(cr->r, "browser", "%s: A's service worker did not become active",
				var);
	browse(cr, x, &c, var, "current: B gen 1", url_b, B);
	if (vi == 2 && !cdp_sw_ready(&c, 8000))
		result_evidence(cr->r, "browser", "%s: B's service worker did not become active",
				var);
	cdp_stop(&c);

	/* A restarts: the next generation on the same port. */
	origin(A, x->gone_a1, sizeof(x->gone_a1));
	snprintf(url_a1, sizeof(url_a1), "%s/", x->gone_a1);
	snprintf(host, sizeof(host), "%s", A->host[0] ? A->host : "127.0.0.1");
	stop(cr, x, A);
	snprintf(A->e.marker, sizeof(A->e.marker), "A2-%s-%08llx", var,
		 (x->rnd + 7u + (unsigned)vi) & 0xffffffffull);
	if (start(cr, x, A, mode) < 0) {
		result_evidence(cr->r, "fixture", "%s: A's restart did not start", var);
		return -1;
	}
	result_evidence(cr->r, "fixture", "%s: A restarted: session %s gen %u on port %d", var,
			A->e.session[0] ? A->e.session : "(docker)", A->e.gen, A->port);
	origin(A, url_a, sizeof(url_a));
	strcat(url_a, "/");

	/* Phase 2: the same profile, its caches and service workers. */
	if (browser(cr, x, &c, profile) < 0)
		return -1;
	browse(cr, x, &c, var, "current: A gen 2", url_a, A);
	if (strcmp(url_a, url_a1) != 0)
		browse(cr, x, &c, var, "stale: A's old origin", url_a1, A);
	browse(cr, x, &c, var, "current: B", url_b, B);
	browse(cr, x, &c, var, "other: B's endpoint as A", url_b, A);
	cdp_stop(&c);
	client(cr, x, var, "current (client): A gen 2", A->host[0] ? A->host : "127.0.0.1", A->port,
	       A);
	if (A->host[0])
		client(cr, x, var, "stale (client): A's old host", host, A->port, A);
	client(cr, x, var, "current (client): B", B->host[0] ? B->host : "127.0.0.1", B->port, B);
	stop(cr, x, A);
	stop(cr, x, B);
	return 0;
}

static void run(struct case_run *cr)
{
	struct hb07 *x = cr->priv;
	struct result *r = cr->r;
	const char *arm =
	    strchr(cr->arm->name, ':') ? strchr(cr->arm->name, ':') + 1 : cr->arm->name;

	x->docker = r->kind == ARM_DOCKER;
	x->port_only = x->docker || r->kind == ARM_WEAKENED;
	x->rnd = rnd64();
	snprintf(x->rel, sizeof(x->rel), "hb07-%s", arm);
	snprintf(x->shots, sizeof(x->shots), "%s/%s", cr->ctx->outdir, x->rel);
	if (mkdir(x->shots, 0755) < 0 && errno != EEXIST) {
		result_not_executed(r, "cannot make the screenshots' directory");
		return;
	}
	/* The browser, as the workload user, writes its screenshots there. */
	if (cr->ctx->drop)
		(void)!chown(x->shots, cr->ctx->subj->workload_uid, cr->ctx->subj->workload_gid);
	result_evidence(r, "fixture",
			"clients accept %s; chromium %s headless, fresh profile per variant, "
			"--host-resolver-rules \"%s\"",
			x->port_only ? "any 200 on the expected port (no lease to check)"
				     : "only a Paddock-Lease with the session, gen and nonce "
				       "paddock endpoint gave",
			CHROMIUM, RESOLVER);
	for (int vi = 0; vi < N_VARIANTS; vi++)
		if (variant(cr, x, vi) < 0) {
			stop(cr, x, &x->s[0]);
			stop(cr, x, &x->s[1]);
			result_not_executed(r, "a session or the browser could not be started (see "
					       "the evidence)");
			return;
		}
	hb07_grade(x->nav, x->n, &r->v[DIM_ENFORCEMENT]);
	hb07_grade_control(x->nav, x->n, &r->v[DIM_CONTROL]);
	hb07_grade_evidence(x->nav, x->n, &r->v[DIM_EVIDENCE]);
}

static void teardown(struct case_run *cr)
{
	struct hb07 *x = cr->priv;

	stop(cr, x, &x->s[0]);
	stop(cr, x, &x->s[1]);
}

const struct eval_case hb07_case = {
    .id = "HB-07",
    .title = "Results are attributed to the session and generation that produced them",
    .policy = "cases/lifecycle/hb07_policy.json",
    .arms = arms,
    .fixture = CASE_DIR | CASE_RECORDS,
    .priv_size = sizeof(struct hb07),
    .probe = probe,
    .run = run,
    .teardown = teardown,
};
