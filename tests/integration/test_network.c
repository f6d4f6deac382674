/* Integration: the mediated network (docs/network.md) as an unprivileged
 * user. Receivers are threads of the test on the host's loopback, which
 * count what reaches them; the policy's network.resolve maps test names
 * to 127.0.0.1 or ::1 (an explicit rule: loopback stays refused for every
 * other name). Each denial is checked where a victim would see it, at the
 * receiver, and has a weakened twin (--weaken host-net) showing that the
 * same client does reach it when the network is not mediated. */
#include "harness.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdatomic.h>
#include <sys/socket.h>

TestSuite(network, .init = h_init, .fini = h_fini, .timeout = 120);

struct receiver {
	int fd, port;
	atomic_int count;
	pthread_mutex_t lock;
	char seen[8192]; /* the request heads, in order */
	size_t n_seen;
	pthread_t thread;
};

static void *serve(void *arg)
{
	struct receiver *r = arg;

	for (;;) {
		char buf[4096];
		int c = accept(r->fd, NULL, NULL);
		ssize_t n;

		if (c < 0)
			return NULL;
		atomic_fetch_add(&r->count, 1);
		n = recv(c, buf, sizeof(buf) - 1, 0);
		if (n > 0) {
			pthread_mutex_lock(&r->lock);
			if (r->n_seen + (size_t)n < sizeof(r->seen)) {
				memcpy(r->seen + r->n_seen, buf, (size_t)n);
				r->n_seen += (size_t)n;
			}
			pthread_mutex_unlock(&r->lock);
		}
		(void)!send(c,
			    "HTTP/1.1 200 OK\r\nContent-Length: 3\r\nConnection: close\r\n\r\nok\n",
			    61, MSG_NOSIGNAL);
		close(c);
	}
}

/* A receiver on addr (127.0.0.1 or ::1), port chosen by the kernel. */
static struct receiver *receiver(const char *addr)
{
	struct receiver *r = calloc(1, sizeof(*r));
	struct sockaddr_storage ss = {0};
	socklen_t len;
	int one = 1;

	cr_assert_not_null(r);
	if (strchr(addr, ':')) {
		struct sockaddr_in6 *a = (struct sockaddr_in6 *)&ss;

		a->sin6_family = AF_INET6;
		inet_pton(AF_INET6, addr, &a->sin6_addr);
		len = sizeof(*a);
	} else {
		struct sockaddr_in *a = (struct sockaddr_in *)&ss;

		a->sin_family = AF_INET;
		inet_pton(AF_INET, addr, &a->sin_addr);
		len = sizeof(*a);
	}
	r->fd = socket(ss.ss_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
	cr_assert_geq(r->fd, 0);
	setsockopt(r->fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	cr_assert_eq(bind(r->fd, (struct sockaddr *)&ss, len), 0, "%s", strerror(errno));
	cr_assert_eq(listen(r->fd, 64), 0);
	len = sizeof(ss);
	getsockname(r->fd, (struct sockaddr *)&ss, &len);
	r->port = ntohs(ss.ss_family == AF_INET6 ? ((struct sockaddr_in6 *)&ss)->sin6_port
						 : ((struct sockaddr_in *)&ss)->sin_port);
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

/* The agent policy with a mediated network: allowed.test (http), the
 * receiver's port; allowed6.test the same over IPv6; tls.test a "tls"
 * rule on the TLS receiver's port. */
/* The agent policy with network (a JSON value) in place of "none",
 * written as w's base/NAME. */
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

static char *policy(const struct h_world *w, int port, int port6, int tls_port)
{
	return agent_with_network(
	    w, "net.json",
	    h_fmt("{\"mode\": \"mediated\", \"allow\": ["
		  "{\"host\": \"allowed.test\", \"ports\": [%d], \"protocol\": \"http\"},"
		  "{\"host\": \"allowed6.test\", \"ports\": [%d], \"protocol\": \"http\"},"
		  "{\"host\": \"tls.test\", \"ports\": [%d], \"protocol\": \"tls\"}],"
		  "\"resolve\": {\"allowed.test\": \"127.0.0.1\", \"allowed6.test\": \"::1\","
		  "\"tls.test\": \"127.0.0.1\"}}",
		  port, port6, tls_port));
}

static const char *rec(const struct h_world *w, const char *expr)
{
	return h_json(w->record, expr);
}

Test(network, proxy_aware_and_unaware_clients_reach_an_allowed_name)
{
	struct h_world w = h_world();
	struct receiver *ok = receiver("127.0.0.1"), *ok6 = receiver("::1");
	char *p = policy(&w, ok->port, ok6->port, 1);
	struct h_proc pr;

	H_PADDOCK(&pr, w.ws, "run", "--policy", p, "--record", w.record, "--", "sh", "-c",
		  h_fmt("curl -s -m 5 http://allowed.test:%d/proxied && "
			"curl -s -m 5 --noproxy '*' http://allowed.test:%d/transparent && "
			"curl -s -m 5 --noproxy '*' http://allowed6.test:%d/six",
			ok->port, ok->port, ok6->port));
	cr_assert_eq(pr.status, 0, H_SHOW(&pr));
	cr_assert_str_eq(pr.out_text, "ok\nok\nok\n", H_SHOW(&pr));
	cr_assert_eq(atomic_load(&ok->count), 2);
	cr_assert_eq(atomic_load(&ok6->count), 1);
	cr_assert(saw(ok, "GET /proxied HTTP/1.1"));
	cr_assert(saw(ok, "GET /transparent HTTP/1.1"));
	/* Every admitted request carries its admission id, and the record
	 * counts exactly the admissions the receivers saw. */
	cr_assert(saw(ok, "Paddock-Admission: "));
	cr_assert(saw(ok6, "Paddock-Admission: "));
	cr_assert_str_eq(rec(&w, "d['network']['mode']"), "\"mediated\"");
	cr_assert_str_eq(rec(&w, "d['network']['admissions']['allowed']"), "3");
	cr_assert_str_eq(h_json(w.record, "sum(1 for l in open(d['network']['admissions_log']) "
					  "if '\"event\":\"close\"' in l)"),
			 "3");
	/* The admissions log is an evidence log under the run's key. */
	cr_assert_str_eq(rec(&w, "d['network']['admissions_log_verified']"), "\"complete\"");
	H_PADDOCK(&pr, w.ws, "evidence", "verify", h_fmt("%s.admissions.jsonl", w.record), "--key",
		  h_fmt("%s.evidence.key", w.record));
	cr_assert_eq(pr.status, 0, H_SHOW(&pr));
}

/* The same clients to a name no rule allows, to a literal address, and
 * to the host's loopback: nothing reaches the receiver. With the host's
 * network (the twin) only the loopback literals: a name would be a query
 * to the host's resolver and 192.0.2.1 a packet off the machine. */
static const char *denied_script(int port)
{
	return h_fmt("curl -s -m 3 http://denied.test:%d/a; "
		     "curl -s -m 3 --noproxy '*' http://127.0.0.1:%d/b; "
		     "curl -s -m 3 --noproxy '*' http://[::1]:%d/c; "
		     "curl -s -m 3 --noproxy '*' http://192.0.2.1:%d/d; "
		     "getent hosts marker.exfil.test; true",
		     port, port, port, port);
}

static const char *loopback_script(int port)
{
	return h_fmt("curl -s -m 3 --noproxy '*' http://127.0.0.1:%d/b; "
		     "curl -s -m 3 --noproxy '*' http://[::1]:%d/c; true",
		     port, port);
}

Test(network, nothing_else_gets_out)
{
	struct h_world w = h_world();
	struct receiver *denied = receiver("127.0.0.1");
	char *p = policy(&w, 1, 2, 3);
	struct h_proc pr;

	H_PADDOCK(&pr, w.ws, "run", "--policy", p, "--record", w.record, "--", "sh", "-c",
		  denied_script(denied->port));
	cr_assert_eq(pr.status, 0, H_SHOW(&pr));
	cr_assert_eq(atomic_load(&denied->count), 0, "the denied receiver was reached");
	/* The terse denial (test_denials.c): a class, nothing of the rule. */
	cr_assert(strstr(pr.out_text, "{\"class\":\"denied\",\"correlation_id\":\""), H_SHOW(&pr));
	cr_assert_null(strstr(pr.out_text, "denied.test"), H_SHOW(&pr));
	cr_assert_str_eq(rec(&w, "d['network']['admissions']['allowed']"), "0");
	cr_assert_str_eq(rec(&w, "d['network']['admissions']['refused-no-rule'] >= 1"), "true");
	cr_assert_str_eq(rec(&w, "d['network']['admissions']['dns-refused'] >= 1"), "true");
}

/* The weakened twin: with the host's network the same script reaches the
 * receiver, so the test above can see a leak. */
Test(network, weaken_host_net_reaches_the_denied_receiver)
{
	struct h_world w = h_world();
	struct receiver *denied = receiver("127.0.0.1");
	char *p = policy(&w, 1, 2, 3);
	struct h_proc pr;

	H_PADDOCK(&pr, w.ws, "run", "--policy", p, "--weaken", "host-net", "--record", w.record,
		  "--", "sh", "-c", loopback_script(denied->port));
	cr_assert_eq(pr.status, 0, H_SHOW(&pr));
	cr_assert_geq(atomic_load(&denied->count), 1, H_SHOW(&pr));
	cr_assert_str_eq(rec(&w, "d['network']['mode']"), "\"host\"");
}

/* --weaken proxy-env-only: the mediator stays, the local default routes
 * go. The proxy-aware client still gets through, admitted; the one that
 * ignores the proxy variables has no route at all (HB-09's arm: control
 * fails, nothing denied gets out). */
Test(network, weaken_proxy_env_only_loses_the_proxy_unaware_path)
{
	struct h_world w = h_world();
	struct receiver *ok = receiver("127.0.0.1"), *denied = receiver("127.0.0.1");
	char *p = policy(&w, ok->port, 2, 3);
	struct h_proc pr;

	H_PADDOCK(&pr, w.ws, "run", "--policy", p, "--weaken", "proxy-env-only", "--record",
		  w.record, "--", "sh", "-c",
		  h_fmt("curl -s -m 5 http://allowed.test:%d/proxied; "
			"curl -s -m 5 --noproxy '*' http://allowed.test:%d/transparent; "
			"echo transparent=$?; %s",
			ok->port, ok->port, denied_script(denied->port)));
	cr_assert_eq(pr.status, 0, H_SHOW(&pr));
	cr_assert(h_contains(pr.err_text, "proxy-env-only"), H_SHOW(&pr));
	cr_assert(saw(ok, "GET /proxied HTTP/1.1"), H_SHOW(&pr));
	cr_assert(!saw(ok, "/transparent"), H_SHOW(&pr));
	cr_assert(!h_contains(pr.out_text, "transparent=0\n"), H_SHOW(&pr));
	cr_assert_eq(atomic_load(&ok->count), 1, H_SHOW(&pr));
	cr_assert_eq(atomic_load(&denied->count), 0, H_SHOW(&pr));
	cr_assert_str_eq(rec(&w, "d['weakenings']"), "[\"proxy-env-only\"]");
	cr_assert_str_eq(rec(&w, "d['network']['admissions']['allowed']"), "1");
}

/* The workload cannot end or replace the mediator: it is outside the
 * sandbox's pid namespace (kill -1 reaches only the sandbox), and its
 * proxy port is taken before the workload runs. */
Test(network, the_workload_cannot_kill_or_replace_the_mediator)
{
	struct h_world w = h_world();
	struct receiver *ok = receiver("127.0.0.1");
	char *p = policy(&w, ok->port, 2, 3);
	struct h_proc pr;

	H_PADDOCK(&pr, w.ws, "run", "--policy", p, "--record", w.record, "--", "sh", "-c",
		  h_fmt("kill -KILL -1 2>/dev/null; "
			"python3 -c \"import socket; s = socket.socket(); "
			"s.bind(('127.0.0.1', 3128))\" 2>/dev/null && echo BOUND-3128; "
			"curl -s -m 5 http://allowed.test:%d/after-kill",
			ok->port));
	cr_assert_eq(pr.status, 0, H_SHOW(&pr));
	cr_assert(!h_contains(pr.out_text, "BOUND-3128"), H_SHOW(&pr));
	cr_assert(saw(ok, "GET /after-kill HTTP/1.1"), "the mediator did not answer\n" H_FMT,
		  H_ARGS(&pr));
}

/* --allow-net NAME:PORT adds a rule (a "tcp" one for a port other than
 * 80 and 443) to the policy, in its effective digest; without it the same
 * client is refused. The name resolves through the policy's resolve
 * entry, so nothing is looked up on the host. Bad forms: one line, 125. */
Test(network, allow_net_adds_a_rule_and_bad_forms_are_refused)
{
	struct h_world w = h_world();
	struct receiver *rx = receiver("127.0.0.1");
	char *p = agent_with_network(
	    &w, "allow.json",
	    "{\"mode\": \"mediated\", \"allow\": [{\"host\": \"named.test\", \"ports\": "
	    "[443], \"protocol\": \"tls\"}], \"resolve\": {\"named.test\": \"127.0.0.1\"}}");
	const char *client = h_fmt("curl -s -m 5 --noproxy '*' http://named.test:%d/x", rx->port);
	char *with, *without;
	struct h_proc pr;

	H_PADDOCK(&pr, w.ws, "run", "--policy", p, "--record", w.record, "--", "sh", "-c",
		  h_fmt("%s; echo curl=$?", client));
	cr_assert_eq(pr.status, 0, H_SHOW(&pr));
	cr_assert(!h_contains(pr.out_text, "curl=0"), H_SHOW(&pr));
	cr_assert_eq(atomic_load(&rx->count), 0, "reached without a rule\n" H_FMT, H_ARGS(&pr));
	without = strdup(rec(&w, "d['policy']['effective_sha256']"));
	H_PADDOCK(&pr, w.ws, "run", "--policy", p, "--allow-net", h_fmt("named.test:%d", rx->port),
		  "--record", w.record, "--", "sh", "-c", client);
	cr_assert_eq(pr.status, 0, H_SHOW(&pr));
	cr_assert_str_eq(pr.out_text, "ok\n", H_SHOW(&pr));
	cr_assert_eq(atomic_load(&rx->count), 1, H_SHOW(&pr));
	cr_assert_str_eq(rec(&w, "d['network']['admissions']['allowed']"), "1");
	with = strdup(rec(&w, "d['policy']['effective_sha256']"));
	cr_assert_str_neq(with, without, "--allow-net is not in the effective digest");
	free(with);
	free(without);
	for (size_t i = 0; i < 4; i++) {
		static const char *const bad[] = {"named.test:53", "named.test:0", "1.2.3.4",
						  "Named.Test:x"};

		H_PADDOCK(&pr, w.ws, "run", "--policy", p, "--allow-net", bad[i], "--", "sh", "-c",
			  "echo ran");
		cr_assert_eq(pr.status, 125, "%s\n" H_FMT, bad[i], H_ARGS(&pr));
		cr_assert_eq(h_count_lines(pr.err_text), 1, "%s\n" H_FMT, bad[i], H_ARGS(&pr));
		cr_assert(h_contains(pr.err_text, "--allow-net"), H_SHOW(&pr));
		cr_assert(!h_contains(pr.out_text, "ran"), H_SHOW(&pr));
	}
}

/* Grants (HB-10): on a rule with grants only the covered operations of
 * the allowed tenant arrive, through the proxy and transparently; the
 * twin, the same rule without grants (host-wide), lets every one through,
 * so the test sees what the grants hold back. */
static void grants(bool host_wide)
{
	struct h_world w = h_world();
	struct receiver *rx = receiver("127.0.0.1");
	const char *g =
	    host_wide ? ""
		      : ", \"grants\": [{\"methods\": [\"GET\"], \"path\": "
			"\"/tenants/{tenant}/objects/{id}\", \"values\": {\"tenant\": [\"t1\"]}}, "
			"{\"methods\": [\"POST\"], \"path\": \"/tenants/{tenant}/objects\", "
			"\"values\": {\"tenant\": [\"t1\"]}}]";
	char *p = agent_with_network(
	    &w, "grants.json",
	    h_fmt("{\"mode\": \"mediated\", \"allow\": [{\"host\": \"saas.test\", \"ports\": "
		  "[%d], \"protocol\": \"http\"%s}], \"resolve\": {\"saas.test\": \"127.0.0.1\"}}",
		  rx->port, g));
	const char *u = h_fmt("http://saas.test:%d", rx->port);
	struct h_proc pr;

	H_PADDOCK(&pr, w.ws, "run", "--policy", p, "--record", w.record, "--", "sh", "-c",
		  h_fmt("c='curl -s -m 5 -o /dev/null'; "
			"$c %1$s/tenants/t1/objects/7; "
			"$c -X POST -d x %1$s/tenants/t1/objects; "
			"$c --noproxy '*' %1$s/tenants/t1/objects/8; "
			"$c %1$s/tenants/t2/objects/7; "
			"$c -X DELETE %1$s/tenants/t1/objects/7; "
			"$c --path-as-is %1$s/tenants/t1/objects/../../t2/objects/7; "
			"$c %1$s/tenants/t1%%2F..%%2Ft2/objects/7; "
			"$c --noproxy '*' %1$s/tenants/t2/objects/9; true",
			u));
	cr_assert_eq(pr.status, 0, H_SHOW(&pr));
	if (host_wide) {
		cr_assert_eq(atomic_load(&rx->count), 8,
			     "the twin's requests did not all arrive\n" H_FMT, H_ARGS(&pr));
		cr_assert(saw(rx, "GET /tenants/t2/objects/7 "), H_SHOW(&pr));
		return;
	}
	cr_assert_eq(atomic_load(&rx->count), 3, H_SHOW(&pr));
	cr_assert(saw(rx, "GET /tenants/t1/objects/7 "), H_SHOW(&pr));
	cr_assert(saw(rx, "POST /tenants/t1/objects "), H_SHOW(&pr));
	cr_assert(saw(rx, "GET /tenants/t1/objects/8 "), H_SHOW(&pr));
	cr_assert(!saw(rx, "t2"), H_SHOW(&pr));
	cr_assert(!saw(rx, "DELETE"), H_SHOW(&pr));
	cr_assert_str_eq(rec(&w, "d['network']['admissions']['allowed']"), "3");
	cr_assert_str_eq(rec(&w, "d['network']['admissions']['refused-grant']"), "5");
}

Test(network, grants_admit_only_the_covered_operations)
{
	grants(false);
}

Test(network, grants_weakened_twin_host_wide_rule)
{
	grants(true);
}

/* A UDP socket on the host's loopback that remembers what it got. */
static int udp_receiver(int *port)
{
	struct sockaddr_in a = {.sin_family = AF_INET};
	socklen_t len = sizeof(a);
	int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);

	cr_assert_geq(fd, 0);
	inet_pton(AF_INET, "127.0.0.1", &a.sin_addr);
	cr_assert_eq(bind(fd, (struct sockaddr *)&a, sizeof(a)), 0);
	getsockname(fd, (struct sockaddr *)&a, &len);
	*port = ntohs(a.sin_port);
	return fd;
}

/* Did a datagram with the label arrive (DNS names are length-prefixed
 * labels, so the label itself is looked for)? */
static bool udp_saw(int fd, const char *label)
{
	char buf[1024];
	ssize_t n;
	bool yes = false;

	while ((n = recv(fd, buf, sizeof(buf), 0)) > 0)
		yes |= memmem(buf, (size_t)n, label, strlen(label)) != NULL;
	return yes;
}

/* UDP other than DNS goes nowhere (the sandbox's own stack answers it),
 * and a CONNECT to a name's http port is refused, so no tunnel through an
 * allowed host carries a request; the twin with the host's network shows
 * the datagram arriving (loopback only). */
static const char udp_and_relay[] =
    "import socket, sys\n"
    "u = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)\n"
    "u.sendto(b'udpmarker77', ('127.0.0.1', int(sys.argv[1])))\n"
    "try:\n"
    "    s = socket.create_connection(('127.0.0.1', 3128), timeout=3)\n"
    "    s.sendall(('CONNECT allowed.test:%s HTTP/1.1\\r\\nHost: a\\r\\n\\r\\n' % "
    "sys.argv[2]).encode())\n"
    "    r = s.recv(200)\n"
    "    print('connect', r.split(b' ')[1].decode())\n"
    "    if b' 200 ' in r: s.sendall(b'GET /relayed HTTP/1.1\\r\\nHost: d\\r\\n\\r\\n')\n"
    "except OSError as e:\n"
    "    print('connect', 'error')\n";

static void udp_relay(bool weak)
{
	struct h_world w = h_world();
	struct receiver *ok = receiver("127.0.0.1");
	char *p = policy(&w, ok->port, 2, 3);
	int port, fd = udp_receiver(&port);
	struct h_proc pr;

	H_PADDOCK(&pr, w.ws, "run", "--policy", p, "--record", w.record,
		  weak ? "--weaken" : "--cwd", weak ? "host-net" : w.ws, "--", "python3", "-c",
		  udp_and_relay, h_fmt("%d", port), h_fmt("%d", ok->port));
	cr_assert_eq(pr.status, 0, H_SHOW(&pr));
	h_sleep_ms(100);
	if (weak) {
		cr_assert(udp_saw(fd, "udpmarker77"), "the twin's datagram did not arrive\n" H_FMT,
			  H_ARGS(&pr));
	} else {
		cr_assert(!udp_saw(fd, "udpmarker77"), "a datagram left the sandbox\n" H_FMT,
			  H_ARGS(&pr));
		cr_assert(h_contains(pr.out_text, "connect 403\n"), H_SHOW(&pr));
		cr_assert(!saw(ok, "/relayed"), H_SHOW(&pr));
		cr_assert_eq(atomic_load(&ok->count), 0, H_SHOW(&pr));
		cr_assert_str_eq(rec(&w, "d['network']['admissions']['refused-protocol']"), "1");
	}
	close(fd);
}

Test(network, udp_goes_nowhere_and_connect_to_an_http_rule_is_refused)
{
	udp_relay(false);
}

Test(network, udp_goes_nowhere_weakened_twin)
{
	udp_relay(true);
}

/* The stub refuses a name no rule allows and sends nothing anywhere, even
 * with PADDOCK_DNS_UPSTREAM set; --weaken dns-open forwards it there (the
 * twin: the test can see a query leave). */
static void dns_upstream(bool weak)
{
	struct h_world w = h_world();
	char *p = policy(&w, 1, 2, 3);
	int port, fd = udp_receiver(&port);
	struct h_proc pr;

	H_CMD(&pr, w.ws, "/usr/bin/env", h_fmt("PADDOCK_DNS_UPSTREAM=127.0.0.1:%d", port),
	      h_paddock(), "run", "--policy", p, "--record", w.record, weak ? "--weaken" : "--cwd",
	      weak ? "dns-open" : w.ws, "--", "sh", "-c",
	      "getent hosts dnsmarker42.exfil.test; true");
	cr_assert_eq(pr.status, 0, H_SHOW(&pr));
	if (weak) {
		cr_assert(udp_saw(fd, "dnsmarker42"), "the open stub sent nothing\n" H_FMT,
			  H_ARGS(&pr));
		cr_assert_str_eq(rec(&w, "d['network']['admissions']['dns-forwarded'] >= 1"),
				 "true");
	} else {
		cr_assert(!udp_saw(fd, "dnsmarker42"), "a refused name left\n" H_FMT, H_ARGS(&pr));
		cr_assert_str_eq(rec(&w, "d['network']['admissions']['dns-forwarded']"), "0");
		cr_assert_str_eq(rec(&w, "d['network']['admissions']['dns-refused'] >= 1"), "true");
	}
	close(fd);
}

Test(network, refused_names_are_sent_nowhere)
{
	dns_upstream(false);
}

Test(network, weaken_dns_open_forwards_refused_names)
{
	dns_upstream(true);
}

/* The two network knobs' bad uses: 125, nothing started, one line of
 * error after the knob's own warning line (printed for every knob before
 * the policy is read). */
static void knob_refused(struct h_proc *pr, const char *what)
{
	cr_assert_eq(pr->status, 125, H_SHOW(pr));
	cr_assert_eq(h_count_lines(pr->err_text), 2, H_SHOW(pr));
	cr_assert(h_contains(pr->err_text, "paddock: warning: --weaken "), H_SHOW(pr));
	cr_assert(h_contains(strchr(pr->err_text, '\n'), what), H_SHOW(pr));
	cr_assert(!h_contains(pr->out_text, "ran"), H_SHOW(pr));
}

Test(network, network_knobs_bad_input)
{
	struct h_world w = h_world();
	char *p = policy(&w, 1, 2, 3);
	struct h_proc pr;

	H_PADDOCK(&pr, w.ws, "run", "--weaken", "proxy-env-only", "--", "sh", "-c", "echo ran");
	knob_refused(&pr, "--weaken proxy-env-only: needs a mediated network");
	H_PADDOCK(&pr, w.ws, "run", "--weaken", "dns-open", "--", "sh", "-c", "echo ran");
	knob_refused(&pr, "--weaken dns-open: needs a mediated network");
	H_CMD(&pr, w.ws, "/usr/bin/env", "-u", "PADDOCK_DNS_UPSTREAM", h_paddock(), "run",
	      "--policy", p, "--weaken", "dns-open", "--", "sh", "-c", "echo ran");
	knob_refused(&pr, "set PADDOCK_DNS_UPSTREAM=ADDR:PORT");
	H_CMD(&pr, w.ws, "/usr/bin/env", "PADDOCK_DNS_UPSTREAM=::1:53", h_paddock(), "run",
	      "--policy", p, "--weaken", "dns-open", "--", "sh", "-c", "echo ran");
	knob_refused(&pr, "is not ADDR:PORT");
}

/* TLS through CONNECT: the ClientHello's server name must be the name the
 * tunnel was admitted for; the receiver sees the good one only. */
Test(network, tls_server_name_must_match)
{
	struct h_world w = h_world();
	struct receiver *tls = receiver("127.0.0.1");
	char *p = policy(&w, 1, 2, tls->port);
	struct h_proc pr;

	H_PADDOCK(&pr, w.ws, "run", "--policy", p, "--record", w.record, "--", "sh", "-c",
		  h_fmt("openssl s_client -proxy 127.0.0.1:3128 -connect tls.test:%d "
			"-servername evil.test </dev/null >/dev/null 2>&1; "
			"openssl s_client -proxy 127.0.0.1:3128 -connect tls.test:%d "
			"-noservername </dev/null >/dev/null 2>&1; "
			"openssl s_client -proxy 127.0.0.1:3128 -connect tls.test:%d "
			"-servername tls.test </dev/null >/dev/null 2>&1; true",
			tls->port, tls->port, tls->port));
	cr_assert_eq(pr.status, 0, H_SHOW(&pr));
	cr_assert_eq(atomic_load(&tls->count), 1, "only the matching server name gets through");
	cr_assert_str_eq(rec(&w, "d['network']['admissions']['refused-sni']"), "2");
}

/* Request smuggling shapes never reach the receiver. */
Test(network, malformed_requests_are_refused)
{
	struct h_world w = h_world();
	struct receiver *ok = receiver("127.0.0.1");
	char *p = policy(&w, ok->port, 2, 3);
	struct h_proc pr;
	const char *send =
	    "import socket,sys\n"
	    "for req in sys.argv[1:]:\n"
	    "  s=socket.create_connection(('127.0.0.1',3128)); s.sendall(req.encode())\n"
	    "  s.shutdown(socket.SHUT_WR); print(s.recv(100).split(b' ')[1].decode())\n";
	const char *url = h_fmt("http://allowed.test:%d/", ok->port);

	H_PADDOCK(&pr, w.ws, "run", "--policy", p, "--record", w.record, "--", "python3", "-c",
		  send,
		  h_fmt("GET %s HTTP/1.1\r\nHost: allowed.test\r\nContent-Length: 1\r\n"
			"Transfer-Encoding: chunked\r\n\r\n",
			url),
		  h_fmt("GET %s HTTP/1.1\r\nHost: other.test\r\n\r\n", url),
		  h_fmt("GET %s HTTP/1.1\nHost: allowed.test\n\n", url));
	cr_assert_eq(pr.status, 0, H_SHOW(&pr));
	cr_assert_str_eq(pr.out_text, "403\n403\n403\n", H_SHOW(&pr));
	cr_assert_eq(atomic_load(&ok->count), 0);
	cr_assert_str_eq(rec(&w, "d['network']['admissions']['refused-malformed']"), "3");
}

Test(network, bad_policies_are_one_line_errors)
{
	struct h_world w = h_world();
	char *p = h_join(w.base, "bad.json");
	struct h_proc pr;

	h_write_file(p,
		     "{\"version\": 1, \"network\": {\"mode\": \"mediated\", \"allow\": "
		     "[{\"host\": \"a.test\", \"ports\": [53], \"protocol\": \"tcp\"}]}}",
		     0644);
	H_PADDOCK(&pr, w.ws, "run", "--policy", p, "--", "true");
	cr_assert_eq(pr.status, 125, H_SHOW(&pr));
	cr_assert_eq(h_count_lines(pr.err_text), 1, H_SHOW(&pr));
	cr_assert(strstr(pr.err_text, "port 53 is the mediator's own"), H_SHOW(&pr));
}

/* The mediator's own limits: 300 clients that never finish their heads, a
 * client that closes mid-request, and one that keeps a tunnel open when
 * the sandbox expires; the mediator still answers, and the run ends. */
Test(network, slow_and_vanishing_clients_do_not_stop_the_mediator)
{
	struct h_world w = h_world();
	struct receiver *ok = receiver("127.0.0.1");
	char *p = policy(&w, ok->port, 2, 3);
	struct h_proc pr;
	const char *script =
	    "import socket,subprocess,sys\n"
	    "held=[]\n"
	    "for i in range(300):\n"
	    "  s=socket.create_connection(('127.0.0.1',3128)); s.sendall(b'GET http://a'); "
	    "held.append(s)\n"
	    "s=socket.create_connection(('127.0.0.1',3128)); s.sendall(b'GET "
	    "http://allowed.test'); s.close()\n"
	    "r=subprocess.run(['curl','-s','-m','5',sys.argv[1]],capture_output=True)\n"
	    "print(r.stdout.decode().strip(), flush=True)\n"
	    "t=socket.create_connection(('127.0.0.1',3128))\n"
	    "t.sendall(('GET '+sys.argv[1]+' HTTP/1.1\\r\\nHost: "
	    "allowed.test:'+sys.argv[2]+'\\r\\n\\r\\n').encode())\n"
	    "import time; time.sleep(60)\n";

	H_PADDOCK(&pr, w.ws, "run", "--policy", p, "--ttl", "3s", "--record", w.record, "--",
		  "python3", "-c", script, h_fmt("http://allowed.test:%d/after", ok->port),
		  h_fmt("%d", ok->port));
	cr_assert_eq(pr.status, 124, H_SHOW(&pr)); /* expired */
	cr_assert_str_eq(pr.out_text, "ok\n", H_SHOW(&pr));
	cr_assert(saw(ok, "GET /after HTTP/1.1"));
	cr_assert_str_eq(rec(&w, "d['ended']"), "\"expired\"");
	cr_assert_str_eq(rec(&w, "d['network']['admissions_reported']"), "true");
	cr_assert_str_eq(rec(&w, "d['network']['admissions']['allowed']"), "2");
}

/* 1,000 clients at once, each with a whole request: every one answered
 * (the mediator raises its own fd limit; past its limits it refuses, and
 * counts, rather than spin or fall over). */
Test(network, a_thousand_concurrent_clients)
{
	struct h_world w = h_world();
	struct receiver *ok = receiver("127.0.0.1");
	char *p = policy(&w, ok->port, 2, 3);
	struct h_proc pr;
	const char *script =
	    "import socket,sys\n"
	    "req=('GET http://allowed.test:'+sys.argv[1]+'/ HTTP/1.1\\r\\nHost: allowed.test:'+"
	    "sys.argv[1]+'\\r\\n\\r\\n').encode()\n"
	    "ss=[]\n"
	    "for i in range(1000):\n"
	    "  s=socket.create_connection(('127.0.0.1',3128)); s.sendall(req); ss.append(s)\n"
	    "n=0\n"
	    "for s in ss:\n"
	    "  s.settimeout(20)\n"
	    "  d=b''\n"
	    "  while True:\n"
	    "    c=s.recv(4096)\n"
	    "    if not c: break\n"
	    "    d+=c\n"
	    "  n+=d.startswith(b'HTTP/1.1 200')\n"
	    "print(n, flush=True)\n";

	H_PADDOCK(&pr, w.ws, "run", "--policy", p, "--record", w.record, "--", "python3", "-c",
		  script, h_fmt("%d", ok->port));
	cr_assert_eq(pr.status, 0, H_SHOW(&pr));
	cr_assert_str_eq(pr.out_text, "1000\n", H_SHOW(&pr));
	cr_assert_eq(atomic_load(&ok->count), 1000);
	cr_assert_str_eq(rec(&w, "d['network']['admissions']['allowed']"), "1000");
}

/* --trace-denials says the mediator's refusals on stderr as they happen
 * (the twin without it: no line; the workload's view is the same). */
Test(network, trace_denials_says_the_mediators_refusals)
{
	struct h_world w = h_world();
	struct h_proc p;
	const char *script = "curl -s -m 3 http://denied.test/x >/dev/null; echo rc=$?";

	H_PADDOCK(&p, w.ws, "run", "--trace-denials", "--allow-net", "allowed.test:80", "--", "sh",
		  "-c", script);
	cr_assert_eq(p.status, 0, H_SHOW(&p));
	cr_assert(
	    h_contains(p.err_text,
		       "paddock: denied: denied.test:80 (mediator: refused-no-rule, rule -1)\n"),
	    H_SHOW(&p));
	H_PADDOCK(&p, w.ws, "run", "--allow-net", "allowed.test:80", "--", "sh", "-c", script);
	cr_assert_eq(p.status, 0, H_SHOW(&p));
	cr_assert(!h_contains(p.err_text, "denied:"), H_SHOW(&p));
}
