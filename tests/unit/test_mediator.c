/* Unit tests for paddock-mediator's pure parts (mediator/): the strict
 * HTTP/1.1 parser (every smuggling shape refused), the chunked scanner, the
 * ClientHello SNI reader, the DNS stub's wire format, the rules and address
 * classes, the synthetic names, the proof that nothing a rule does not
 * name is ever dialled (a dial hook counts every dial), and what
 * network.on_capture_loss lets through while the admissions log fails. */
#include <arpa/inet.h>
#include <criterion/criterion.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <string.h>
#include <unistd.h>

#include "../../mediator/mediator.h"
#include "unit.h"
#include "unit_policy.h"

TestSuite(mediator, .fini = unit_leak_check);

static int parse(const char *text, struct http_request *rq, const char **why)
{
	return http_parse_request(text, strlen(text), rq, why);
}

Test(mediator, http_good_requests)
{
	struct http_request rq;
	const char *why = "";
	const char *get =
	    "GET http://a.test:8080/x?y HTTP/1.1\r\nHost: A.test:8080\r\nX: 1 \r\n\r\n";
	char name[300];
	const char *path;
	uint16_t port;

	cr_assert_eq(parse(get, &rq, &why), (int)strlen(get), "%s", why);
	cr_assert_str_eq(rq.method, "GET");
	cr_assert_str_eq(rq.host, "a.test:8080");
	cr_assert_eq(rq.n_headers, 2);
	cr_assert_eq(http_target_absolute(rq.target, name, sizeof(name), &port, &path), 0);
	cr_assert_str_eq(name, "a.test");
	cr_assert_eq(port, 8080);
	cr_assert_str_eq(path, "/x?y");
	cr_assert_eq(
	    parse("POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 5\r\n\r\nhello", &rq, &why), 47,
	    "the head only: the body is the relay's");
	cr_assert(rq.has_length && rq.content_length == 5);
	cr_assert_gt(
	    parse("POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n", &rq, &why),
	    0);
	cr_assert(rq.chunked);
	cr_assert_eq(parse("CONNECT a.test:443 HTTP/1.1\r\nHost: a.test:443\r\n\r\n", &rq, &why),
		     49);
	cr_assert_eq(http_target_authority(rq.target, name, sizeof(name), &port), 0);
	cr_assert_eq(port, 443);
	/* openssl s_client's CONNECT: HTTP/1.0, no Host. */
	cr_assert_eq(parse("CONNECT a.test:443 HTTP/1.0\r\n\r\n", &rq, &why), 31, "%s", why);
	cr_assert(rq.http10);
	/* Incomplete: more bytes needed, not an error. */
	cr_assert_eq(parse("GET / HTTP/1.1\r\nHost: a\r\n", &rq, &why), 0);
	cr_assert_eq(parse("GET / HTTP/1.1\r", &rq, &why), 0);
}

/* Every head two parsers could read differently is refused. */
Test(mediator, http_smuggling_shapes_are_refused)
{
	static const char *const bad[] = {
	    "GET / HTTP/1.1\nHost: a\r\n\r\n",		    /* bare LF */
	    "GET / HTTP/1.1\r\nHost: a\n\r\n",		    /* bare LF in a header */
	    "GET / HTTP/1.1\r\nHost: a\rX: 1\r\n\r\n",	    /* bare CR */
	    "GET / HTTP/1.1\r\nHost: a\r\n folded\r\n\r\n", /* obs-fold */
	    "GET / HTTP/1.1\r\nHost : a\r\n\r\n",	    /* space before the colon */
	    "GET / HTTP/1.1\r\nHost: a\r\nContent-Length: 1\r\nContent-Length: 1\r\n\r\n",
	    "GET / HTTP/1.1\r\nHost: a\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\n",
	    "GET / HTTP/1.1\r\nHost: a\r\nContent-Length: 1\r\nTransfer-Encoding: chunked\r\n\r\n",
	    "GET / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: gzip, chunked\r\n\r\n",
	    "GET / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\nTransfer-Encoding: "
	    "chunked\r\n\r\n",
	    "GET / HTTP/1.1\r\nHost: a\r\nContent-Length: +1\r\n\r\n",
	    "GET / HTTP/1.1\r\nHost: a\r\nContent-Length: 1 1\r\n\r\n",
	    "GET / HTTP/1.1\r\nHost: a\r\nHost: b\r\n\r\n", /* two Hosts */
	    "GET / HTTP/1.1\r\n\r\n",			    /* no Host */
	    "GET / HTTP/1.0\r\nHost: a\r\n\r\n",	    /* only 1.1 (but CONNECT) */
	    "GET  / HTTP/1.1\r\nHost: a\r\n\r\n",	    /* two spaces */
	    "G(T / HTTP/1.1\r\nHost: a\r\n\r\n",	    /* method not a token */
	    "GET / HTTP/1.1\r\nHo\x01st: a\r\n\r\n",
	    "GET / HTTP/1.1\r\nHost: a\x01\r\n\r\n",
	};
	struct http_request rq;
	const char *why;

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		cr_expect_lt(parse(bad[i], &rq, &why), 0, "accepted: %s", bad[i]);
}

Test(mediator, http_limits)
{
	static char big[HTTP_HEAD_MAX + 64];
	struct http_request rq;
	const char *why;
	size_t n;

	n = (size_t)snprintf(big, sizeof(big), "GET / HTTP/1.1\r\nHost: a\r\n");
	while (n + 16 < sizeof(big))
		n += (size_t)snprintf(big + n, sizeof(big) - n, "X-A: %010zu\r\n", n);
	cr_assert_eq(http_parse_request(big, n, &rq, &why), -E2BIG, "%s", why);
	n = (size_t)snprintf(big, sizeof(big), "GET / HTTP/1.1\r\nHost: a\r\n");
	for (int i = 0; i < HTTP_HEADERS_MAX; i++)
		n += (size_t)snprintf(big + n, sizeof(big) - n, "X%d: 1\r\n", i);
	n += (size_t)snprintf(big + n, sizeof(big) - n, "\r\n");
	cr_assert_eq(http_parse_request(big, n, &rq, &why), -E2BIG, "%s", why);
	memset(big, 'a', HTTP_LINE_MAX + 8);
	cr_assert_eq(http_parse_request(big, HTTP_LINE_MAX + 8, &rq, &why), -E2BIG);
}

Test(mediator, http_targets)
{
	char name[300];
	const char *path;
	uint16_t port;

	cr_assert_eq(http_target_absolute("http://a.test", name, sizeof(name), &port, &path), 0);
	cr_assert(port == 80 && strcmp(path, "/") == 0);
	cr_assert_lt(http_target_absolute("https://a.test/", name, sizeof(name), &port, &path), 0);
	cr_assert_lt(http_target_absolute("http://u@a.test/", name, sizeof(name), &port, &path), 0);
	cr_assert_lt(http_target_absolute("http://a.test:0/", name, sizeof(name), &port, &path), 0);
	cr_assert_lt(http_target_absolute("http://a.test:99999/", name, sizeof(name), &port, &path),
		     0);
	cr_assert_lt(http_target_authority("a.test", name, sizeof(name), &port), 0);
	cr_assert_eq(http_target_authority("[2001:db8::1]:443", name, sizeof(name), &port), 0);
	cr_assert_str_eq(name, "[2001:db8::1]");
	cr_assert_eq(http_host_split("A.Test", name, sizeof(name), &port), 0);
	cr_assert(strcmp(name, "a.test") == 0 && port == 0);
}

Test(mediator, chunked_bodies)
{
	struct http_chunked c = {0};
	const char body[] = "5\r\nhello\r\n3;ext=1\r\nabc\r\n0\r\nTrailer: x\r\n\r\nGET /next";

	cr_assert_eq(http_chunked_scan(&c, body, strlen(body)),
		     (long)(strlen(body) - strlen("GET /next")));
	cr_assert(c.done);
	/* One byte at a time gives the same end. */
	c = (struct http_chunked){0};
	for (size_t i = 0; i < strlen(body) && !c.done; i++)
		cr_assert_eq(http_chunked_scan(&c, body + i, 1), 1, "at %zu", i);
	cr_assert(c.done);
	c = (struct http_chunked){0};
	cr_assert_lt(http_chunked_scan(&c, "5\nhello", 7), 0, "bare LF");
	c = (struct http_chunked){0};
	cr_assert_lt(http_chunked_scan(&c, "x\r\n", 3), 0, "not hex");
	c = (struct http_chunked){0};
	cr_assert_lt(http_chunked_scan(&c, "1\r\nab\r\n", 7), 0, "data longer than its size");
	c = (struct http_chunked){0};
	cr_assert_lt(http_chunked_scan(&c, "ffffffffffffffff\r\n", 18), 0, "size too large");
}

/* A minimal ClientHello with (or without) a server_name extension. */
static size_t client_hello(unsigned char *b, const char *sni)
{
	size_t n = 0, ext_len = sni ? 9 + strlen(sni) : 0, body = 2 + 32 + 1 + 4 + 2 + 2 + ext_len;
	size_t hs = 4 + body;

	b[n++] = 22;
	b[n++] = 3;
	b[n++] = 1;
	b[n++] = (unsigned char)(hs >> 8);
	b[n++] = (unsigned char)hs;
	b[n++] = 1;
	b[n++] = 0;
	b[n++] = (unsigned char)(body >> 8);
	b[n++] = (unsigned char)body;
	b[n++] = 3;
	b[n++] = 3;
	memset(b + n, 7, 32);
	n += 32;
	b[n++] = 0; /* session id */
	b[n++] = 0;
	b[n++] = 2; /* one cipher suite */
	b[n++] = 0x13;
	b[n++] = 0x01;
	b[n++] = 1; /* compression: null */
	b[n++] = 0;
	b[n++] = (unsigned char)(ext_len >> 8);
	b[n++] = (unsigned char)ext_len;
	if (sni) {
		size_t l = strlen(sni);

		b[n++] = 0;
		b[n++] = 0; /* server_name */
		b[n++] = (unsigned char)((l + 5) >> 8);
		b[n++] = (unsigned char)(l + 5);
		b[n++] = (unsigned char)((l + 3) >> 8);
		b[n++] = (unsigned char)(l + 3);
		b[n++] = 0; /* host_name */
		b[n++] = (unsigned char)(l >> 8);
		b[n++] = (unsigned char)l;
		memcpy(b + n, sni, l);
		n += l;
	}
	return n;
}

Test(mediator, sni)
{
	unsigned char b[512];
	char name[300];
	size_t n = client_hello(b, "API.Example.com");

	cr_assert_eq(tls_client_hello_sni(b, n, name, sizeof(name)), 0);
	cr_assert_str_eq(name, "api.example.com");
	cr_assert_eq(tls_client_hello_sni(b, n - 1, name, sizeof(name)), -EAGAIN);
	cr_assert_eq(tls_client_hello_sni(b, 3, name, sizeof(name)), -EAGAIN);
	n = client_hello(b, NULL);
	cr_assert_eq(tls_client_hello_sni(b, n, name, sizeof(name)), -ENOENT);
	cr_assert_eq(tls_client_hello_sni((const unsigned char *)"GET / HTTP/1.1\r\n", 16, name,
					  sizeof(name)),
		     -EINVAL);
	n = client_hello(b, "a.test");
	b[n - 7] = 0xff; /* the name list's length now overruns */
	cr_assert_eq(tls_client_hello_sni(b, n, name, sizeof(name)), -EINVAL);
}

static size_t query(unsigned char *b, const char *name, uint16_t type)
{
	size_t n = 12;

	memset(b, 0, 12);
	b[0] = 0x12;
	b[1] = 0x34;
	b[2] = 1; /* RD */
	b[5] = 1; /* one question */
	for (const char *p = name; *p;) {
		size_t l = strcspn(p, ".");

		b[n++] = (unsigned char)l;
		memcpy(b + n, p, l);
		n += l;
		p += l + (p[l] == '.');
	}
	b[n++] = 0;
	b[n++] = (unsigned char)(type >> 8);
	b[n++] = (unsigned char)type;
	b[n++] = 0;
	b[n++] = 1;
	return n;
}

static struct policy *net_policy(void)
{
	static const char json[] =
	    "{\"version\":1,\"network\":{\"mode\":\"mediated\",\"allow\":["
	    "{\"host\":\"api.example.com\",\"ports\":[443],\"protocol\":\"tls\"},"
	    "{\"host\":\"*.pkg.test\",\"ports\":[443,8443],\"protocol\":\"tls\"},"
	    "{\"host\":\"local.test\",\"ports\":[8080],\"protocol\":\"http\"}],"
	    "\"resolve\":{\"local.test\":\"127.0.0.1\"}}}";

	return unit_policy(json);
}

Test(mediator, rules_and_wildcards)
{
	struct policy *p = net_policy();

	cr_assert_not_null(mediator_rule(p, "api.example.com", 443));
	cr_assert_null(mediator_rule(p, "api.example.com", 80), "another port");
	cr_assert_null(mediator_rule(p, "example.com", 443));
	cr_assert_null(mediator_rule(p, "xapi.example.com", 443));
	cr_assert_not_null(mediator_rule(p, "a.pkg.test", 8443));
	cr_assert_not_null(mediator_rule(p, "a.b.pkg.test", 443));
	cr_assert_null(mediator_rule(p, "pkg.test", 443), "*.x does not match x");
	cr_assert_null(mediator_rule(p, "evilpkg.test", 443));
	cr_assert(mediator_name_allowed(p, "local.test"));
	cr_assert(!mediator_name_allowed(p, "marker.exfil.test"));
	cr_assert_str_eq(mediator_resolve_entry(p, "local.test"), "127.0.0.1");
	policy_free(p);
}

static bool pub(const char *a)
{
	struct sockaddr_storage ss = {0};

	if (inet_pton(AF_INET, a, &((struct sockaddr_in *)&ss)->sin_addr) == 1)
		ss.ss_family = AF_INET;
	else if (inet_pton(AF_INET6, a, &((struct sockaddr_in6 *)&ss)->sin6_addr) == 1)
		ss.ss_family = AF_INET6;
	else
		cr_assert_fail("bad test address %s", a);
	return mediator_addr_public((struct sockaddr *)&ss);
}

Test(mediator, address_classes)
{
	static const char *const refused[] = {
	    "127.0.0.1",
	    "10.1.2.3",
	    "172.16.0.1",
	    "192.168.1.1",
	    "169.254.1.1",
	    "100.64.0.1",
	    "0.0.0.0",
	    "198.18.0.1",
	    "198.19.255.1",
	    "192.0.2.7",
	    "198.51.100.1",
	    "203.0.113.9",
	    "224.0.0.1",
	    "255.255.255.255",
	    "::1",
	    "::",
	    "fd70:6164:646f:636b::1",
	    "fe80::1",
	    "ff02::1",
	    "2001:db8::1",
	    "::ffff:127.0.0.1",
	    "::ffff:10.0.0.1",
	};

	for (size_t i = 0; i < sizeof(refused) / sizeof(refused[0]); i++)
		cr_expect(!pub(refused[i]), "%s counted as public", refused[i]);
	cr_expect(pub("93.184.216.34"));
	cr_expect(pub("2606:4700::1111"));
	cr_expect(pub("::ffff:93.184.216.34"));
}

Test(mediator, synthetic_names)
{
	struct mediator_names m = {0};
	struct sockaddr_in a = {.sin_family = AF_INET};
	struct sockaddr_in6 b = {.sin6_family = AF_INET6};

	cr_assert_eq(mediator_names_add(&m, "a.test"), 0);
	cr_assert_eq(mediator_names_add(&m, "b.test"), 1);
	cr_assert_eq(mediator_names_add(&m, "a.test"), 0, "one address per name");
	mediator_names_addr(1, AF_INET, (unsigned char *)&a.sin_addr);
	cr_assert_eq(ntohl(a.sin_addr.s_addr), 0xc6120002u); /* 198.18.0.2 */
	cr_assert_str_eq(mediator_names_lookup(&m, (struct sockaddr *)&a), "b.test");
	mediator_names_addr(0, AF_INET6, b.sin6_addr.s6_addr);
	cr_assert_str_eq(mediator_names_lookup(&m, (struct sockaddr *)&b), "a.test");
	a.sin_addr.s_addr = htonl(0xc6120063u);
	cr_assert_null(mediator_names_lookup(&m, (struct sockaddr *)&a), "never handed out");
	mediator_names_free(&m);
}

static int dials;
static int counting_dial(struct mediator *m, const struct sockaddr *sa, socklen_t len)
{
	(void)m;
	(void)sa;
	(void)len;
	dials++;
	return dup(0);
}

/* Nothing a rule does not name reaches the dial; a named one does. */
Test(mediator, nothing_unnamed_is_ever_dialled)
{
	struct policy *p = net_policy();
	struct mediator_config cfg = {.policy = p, .session = "s", .log_fd = -1};
	struct mediator *m = NULL;
	enum mediator_decision d;
	int fd;

	cr_assert_eq(mediator_new(&cfg, &m), 0);
	mediator_set_dial(m, counting_dial);
	dials = 0;
	cr_assert_eq(mediator_open_upstream(m, "denied.test", 443, &d), -1);
	cr_assert_eq(d, MEDIATOR_NO_RULE);
	cr_assert_eq(mediator_open_upstream(m, "api.example.com", 80, &d), -1);
	cr_assert_eq(mediator_open_upstream(m, "192.0.2.1", 443, &d), -1);
	cr_assert_eq(mediator_open_upstream(m, "198.18.0.1", 443, &d), -1);
	cr_assert_eq(mediator_open_upstream(m, "pkg.test", 443, &d), -1);
	cr_assert_eq(dials, 0, "a refused destination was dialled");
	/* The weakened twin: a name the policy resolves is dialled. */
	fd = mediator_open_upstream(m, "local.test", 8080, &d);
	cr_assert_geq(fd, 0);
	cr_assert_eq(d, MEDIATOR_ALLOWED);
	cr_assert_eq(dials, 1);
	close(fd);
	mediator_free(m);
	policy_free(p);
}

Test(mediator, dns_stub)
{
	struct policy *p = net_policy();
	struct mediator_config cfg = {.policy = p, .session = "s", .log_fd = -1};
	struct mediator *m = NULL;
	unsigned char q[512], r[DNS_MAX];
	size_t n;
	int k;

	cr_assert_eq(mediator_new(&cfg, &m), 0);
	n = query(q, "API.example.com", DNS_A);
	k = mediator_dns_answer(m, q, n, r, sizeof(r));
	cr_assert_eq(k, (int)n + 16);
	cr_assert_eq(r[0], 0x12);
	cr_assert_eq(r[3] & 0xf, 0, "NOERROR");
	cr_assert_eq(r[7], 1, "one answer");
	cr_assert_eq(memcmp(r + k - 4, (unsigned char[]){198, 18, 0, 1}, 4), 0);
	n = query(q, "api.example.com", DNS_AAAA);
	k = mediator_dns_answer(m, q, n, r, sizeof(r));
	cr_assert_eq(k, (int)n + 28);
	n = query(q, "marker.exfil.test", 16 /* TXT */);
	k = mediator_dns_answer(m, q, n, r, sizeof(r));
	cr_assert_eq(k, (int)n);
	cr_assert_eq(r[3] & 0xf, 5, "REFUSED");
	cr_assert_eq(r[7], 0);
	n = query(q, "api.example.com", 16);
	k = mediator_dns_answer(m, q, n, r, sizeof(r));
	cr_assert_eq(r[3] & 0xf, 0, "NODATA for other types of an allowed name");
	cr_assert_eq(r[7], 0);
	cr_assert_eq(mediator_dns_answer(m, q, 5, r, sizeof(r)), -EINVAL);
	q[2] = 0x80; /* a response, not a query */
	cr_assert_eq(mediator_dns_answer(m, q, n, r, sizeof(r)), -EINVAL);
	mediator_free(m);
	policy_free(p);
}

/* The admissions log is an evidence log: a client's name with a quote in
 * it stays inside its string (no forged field), and the chain verifies. */
Test(mediator, the_admissions_log_cannot_be_forged_by_a_name)
{
	struct policy *p = net_policy();
	int fd = memfd_create("adm", 0);
	struct mediator_config cfg = {.policy = p, .session = "s1", .log_fd = fd, .key = {7}};
	struct mediator *m = NULL;
	struct evidence_report rep;
	unsigned char q[512], r[DNS_MAX];
	char text[8192];
	size_t n = query(q, "x\",\"decision\":\"allowed.test", DNS_A);
	ssize_t len;

	cr_assert_eq(mediator_new(&cfg, &m), 0);
	cr_assert_gt(mediator_dns_answer(m, q, n, r, sizeof(r)), 0);
	mediator_free(m);
	len = pread(fd, text, sizeof(text) - 1, 0);
	cr_assert_gt(len, 0);
	text[len] = '\0';
	cr_assert(strstr(text, "\"decision\":\"dns-refused\""), "%s", text);
	cr_assert(strstr(text, "\\\",\\\"decision\\\":\\\"allowed.test"), "%s", text);
	evidence_verify(text, (size_t)len, cfg.key, "s1", 0, NULL, &rep);
	cr_assert_eq(rep.verdict, EVIDENCE_COMPLETE, "%s", rep.reasons[0]);
	close(fd);
	policy_free(p);
}

/* PADDOCK_DNS_UPSTREAM (--weaken dns-open): ADDR:PORT or [ADDR6]:PORT,
 * numeric only; anything else refused. */
Test(mediator, dns_upstream_forms)
{
	static const char *const bad[] = {
	    "",
	    "127.0.0.1",
	    "127.0.0.1:",
	    "127.0.0.1:0",
	    "127.0.0.1:65536",
	    "127.0.0.1:53x",
	    "::1:53",
	    "[::1]",
	    "[::1]53",
	    "[::1:53",
	    "localhost:53",
	    "[127.0.0.1]:53",
	    "1.2.3.4.5:53",
	    ":53",
	    "127.0.0.1:-1",
	};
	struct sockaddr_storage sa;
	socklen_t len = 0;

	cr_assert_eq(dns_parse_upstream("127.0.0.1:18953", &sa, &len), 0);
	cr_assert_eq(sa.ss_family, AF_INET);
	cr_assert_eq(len, sizeof(struct sockaddr_in));
	cr_assert_eq(ntohs(((struct sockaddr_in *)&sa)->sin_port), 18953);
	cr_assert_eq(dns_parse_upstream("[::1]:53", &sa, &len), 0);
	cr_assert_eq(sa.ss_family, AF_INET6);
	cr_assert_eq(len, sizeof(struct sockaddr_in6));
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		cr_assert_eq(dns_parse_upstream(bad[i], &sa, &len), -EINVAL, "%s", bad[i]);
}

/* Grants (HB-10): method and path template, a {name} bound to values;
 * fails closed on every form that could alias a path. */
Test(mediator, grants_match_and_fail_closed)
{
	static const char json[] =
	    "{\"version\":1,\"network\":{\"mode\":\"mediated\",\"allow\":[{\"host\":\"saas.test\","
	    "\"ports\":[8080],\"protocol\":\"http\",\"grants\":["
	    "{\"methods\":[\"GET\",\"HEAD\"],\"path\":\"/tenants/{tenant}/objects/{id}\","
	    "\"values\":{\"tenant\":[\"t1\",\"t3\"]}},"
	    "{\"methods\":[\"POST\"],\"path\":\"/tenants/{tenant}/objects\","
	    "\"values\":{\"tenant\":[\"t1\"]}},"
	    "{\"methods\":[\"GET\"],\"path\":\"/\"}]}]}}";
	static const struct policy_vars vars = {.workspace = "/", .home = "/", .pwd = "/"};
	static const struct {
		const char *method, *target;
		bool ok;
	} cases[] = {
	    {"GET", "/tenants/t1/objects/7", true},
	    {"HEAD", "/tenants/t3/objects/x-1", true},
	    {"GET", "/tenants/t1/objects/7?fields=a&b=c", true},
	    {"POST", "/tenants/t1/objects", true},
	    {"GET", "/", true},
	    {"GET", "/tenants/t2/objects/7", false},	/* tenant outside */
	    {"DELETE", "/tenants/t1/objects/7", false}, /* operation outside */
	    {"POST", "/tenants/t3/objects", false},	/* tenant of another grant */
	    {"get", "/tenants/t1/objects/7", false},	/* methods are exact */
	    {"GET", "/tenants/t1/objects", false},	/* too short */
	    {"GET", "/tenants/t1/objects/7/x", false},	/* too long */
	    {"GET", "/tenants/t1/objects/", false},	/* empty {id} */
	    {"GET", "/tenants//objects/7", false},	/* empty segment */
	    {"GET", "/tenants/t1/objects/../../t2/objects/7", false},
	    {"GET", "/tenants/t1/./objects/7", false},
	    {"GET", "/tenants/t1%2F..%2Ft2/objects/7", false}, /* encoded slash */
	    {"GET", "/tenants/%74%31/objects/7", false},       /* encoded t1 */
	    {"GET", "/Tenants/t1/objects/7", false},	       /* literals are exact */
	    {"GET", "tenants/t1/objects/7", false},
	    {"GET", "", false},
	    {"GET", "/tenants/t1/objects/7#frag", true},
	    {"GET", "//", false},
	};
	struct policy *p = NULL;
	struct err err = {0};
	const struct policy_net_rule *r;

	cr_assert_eq(policy_load_buffer(json, strlen(json), &vars, &p, &err), 0, "%s", err.msg);
	r = mediator_rule(p, "saas.test", 8080);
	cr_assert_not_null(r);
	cr_assert_eq(r->n_grants, 3);
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		cr_expect_eq(mediator_grant_allows(r, cases[i].method, cases[i].target),
			     cases[i].ok, "%s %s", cases[i].method, cases[i].target);
	policy_free(p);
}

/* ------------------------------------------------ brokered credentials */

Test(mediator, secrets_file_lines)
{
	static const struct {
		const char *text, *name, *value;
		int r;
		size_t line;
	} cases[] = {
	    {"saas=abcdefgh\n", "saas", "abcdefgh", 0, 0},
	    {"# c\n\nq=12345678\nsaas=a=b!~cdef\n", "saas", "a=b!~cdef", 0, 0},
	    {"saas=abcdefgh", "saas", "abcdefgh", 0, 0}, /* no final LF */
	    {"q=12345678\n", "saas", NULL, -ENOENT, 2},
	    {"", "saas", NULL, -ENOENT, 0},
	    {"saas=abcdefgh\nbad line\n", "saas", NULL, -EINVAL, 2},
	    {"saas=\n", "saas", NULL, -EINVAL, 1},	  /* empty value */
	    {"saas=abcdefg\n", "saas", NULL, -EINVAL, 1}, /* shorter than 8 */
	    {"=abcdefgh\n", "saas", NULL, -EINVAL, 1},	  /* no name */
	    {"saas = abcdefgh\n", "saas", NULL, -EINVAL, 1},
	    {"saas=abcd efgh\n", "saas", NULL, -EINVAL, 1},  /* a space in the value */
	    {"saas=abcdefgh\r\n", "saas", NULL, -EINVAL, 1}, /* CR */
	    {"saas=abcd\tefgh\n", "saas", NULL, -EINVAL, 1}, /* a control character */
	    {"saas=11111111\nq=22222222\nsaas=33333333\n", "saas", NULL, -EINVAL, 3},
	    {"sa$s=12345678\n", "saas", NULL, -EINVAL, 1},
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const char *v = NULL;
		size_t vlen = 0, line = 99;
		int r = mediator_secrets_find(cases[i].text, strlen(cases[i].text), cases[i].name,
					      &v, &vlen, &line);

		cr_expect_eq(r, cases[i].r, "%zu: %d", i, r);
		if (cases[i].value && r == 0)
			cr_expect(vlen == strlen(cases[i].value) &&
				      memcmp(v, cases[i].value, vlen) == 0,
				  "%zu", i);
		if (cases[i].r == -EINVAL)
			cr_expect_eq(line, cases[i].line, "%zu: line %zu", i, line);
	}
}

/* A policy like test_credentials.c's: a header credential on GET
 * /v1/items/{id}, a query one on GET /v1/search, a POST without. */
static const char cred_json[] =
    "{\"version\":1,\"network\":{\"mode\":\"mediated\",\"allow\":[{\"host\":\"s.test\","
    "\"ports\":[80],\"protocol\":\"http\",\"grants\":["
    "{\"methods\":[\"GET\"],\"path\":\"/v1/items/{id}\",\"credential\":{\"secret\":\"a\","
    "\"env\":\"A_TOKEN\",\"header\":\"Authorization\",\"prefix\":\"Bearer \"}},"
    "{\"methods\":[\"GET\"],\"path\":\"/v1/search\",\"credential\":{\"secret\":\"b\","
    "\"env\":\"B_TOKEN\",\"query\":\"api_key\"}},"
    "{\"methods\":[\"POST\"],\"path\":\"/v1/items/{id}\"}]},"
    "{\"host\":\"o.test\",\"ports\":[80],\"protocol\":\"http\"}]}}";
#define PA "pdk_aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
#define PB "pdk_bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb"
#define PF "pdk_0123456789abcdef0123456789abcdef" /* another session's */

static struct policy *cred_setup(struct mediator_credentials *cr, const char *file)
{
	static const struct policy_vars vars = {.workspace = "/", .home = "/", .pwd = "/"};
	static const unsigned char key[EVIDENCE_KEY_LEN] = {1};
	char path[] = "/tmp/paddock-unit-secrets-XXXXXX";
	struct policy *p = NULL;
	struct err err = {0};
	int fd = mkstemp(path);

	cr_assert_geq(fd, 0);
	cr_assert_eq(write(fd, file, strlen(file)), (ssize_t)strlen(file));
	close(fd);
	cr_assert_eq(policy_load_buffer(cred_json, strlen(cred_json), &vars, &p, &err), 0, "%s",
		     err.msg);
	cr_assert_eq(mediator_credentials_add(cr, "A_TOKEN", PA, &err), 0, "%s", err.msg);
	cr_assert_eq(mediator_credentials_add(cr, "B_TOKEN", PB, &err), 0, "%s", err.msg);
	cr_assert_eq(mediator_credentials_load(cr, path, p, key, &err), 0, "%s", err.msg);
	unlink(path);
	return p;
}

/* The kernel's own word: the mapping at p has "dd" (VM_DONTDUMP) in its
 * VmFlags (/proc/self/smaps), so no core dump holds it. */
static bool never_dumped(const void *p)
{
	FILE *f = fopen("/proc/self/smaps", "re");
	char line[512];
	bool in = false, dd = false;

	while (f && fgets(line, sizeof(line), f)) {
		unsigned long lo, hi;

		if (sscanf(line, "%lx-%lx ", &lo, &hi) == 2) /* a mapping's first line */
			in = lo == (unsigned long)p;
		else if (in && strncmp(line, "VmFlags:", 8) == 0)
			dd = strstr(line, " dd") != NULL;
	}
	if (f)
		fclose(f);
	return dd;
}

static int swap(struct mediator_credentials *cr, const struct policy_net_rule *r, const char *in,
		char *out, char *note)
{
	size_t len = strlen(in);
	const char *e = strstr(in, "\r\n\r\n");
	int k;

	memcpy(out, in, len + 1);
	k = mediator_cred_swap(cr, r, out, &len, HTTP_HEAD_MAX, (size_t)(e - in) + 4, note, 192);
	if (k >= 0)
		out[len] = '\0';
	return k;
}

Test(mediator, credential_swap_and_audience)
{
	struct mediator_credentials cr = {0};
	struct policy *p = cred_setup(&cr, "a=SECRET-A\nb=s&b%-b-b-b\n");
	const struct policy_net_rule *s = &p->net_allow[0], *o = &p->net_allow[1];
	static char out[HTTP_HEAD_MAX];
	char note[192];

	cr_assert_str_eq(cr.s[0].value, "SECRET-A");
	cr_assert_eq(strlen(cr.s[0].fingerprint), 8);
	cr_assert(never_dumped(cr.region), "the secrets' region is not MADV_DONTDUMP");
	/* The header: swapped, the other value dropped, the body kept. */
	cr_assert_gt(swap(&cr, s,
			  "GET /v1/items/1 HTTP/1.1\r\nHost: s.test\r\nAuthorization: Bearer " PA
			  "\r\nauthorization: mine\r\nX: y\r\n\r\nBODY",
			  out, note),
		     0);
	cr_assert_str_eq(out, "GET /v1/items/1 HTTP/1.1\r\nHost: s.test\r\nAuthorization: Bearer "
			      "SECRET-A\r\nX: y\r\nAccept-Encoding: identity\r\n\r\nBODY");
	cr_assert(strstr(note, "\"credential\":\"A_TOKEN\",\"fingerprint\":\""), "%s", note);
	cr_assert(!strstr(note, "SECRET"));
	/* The query: swapped (encoded), the other value of it dropped. */
	cr_assert_gt(swap(&cr, s,
			  "GET /v1/search?x=1&api_key=" PB "&api_key=2 HTTP/1.1\r\nHost: s\r\n\r\n",
			  out, note),
		     0);
	cr_assert_str_eq(out, "GET /v1/search?x=1&api_key=s%26b%25-b-b-b HTTP/1.1\r\nHost: "
			      "s\r\nAccept-Encoding: identity\r\n\r\n");
	/* A covered request without the placeholder: the header is the
	 * client's own, dropped. */
	cr_assert_gt(
	    swap(&cr, s, "GET /v1/items/2 HTTP/1.1\r\nAuthorization: Bearer x\r\n\r\n", out, note),
	    0);
	cr_assert_str_eq(out, "GET /v1/items/2 HTTP/1.1\r\nAccept-Encoding: identity\r\n\r\n");
	cr_assert_str_eq(note, "");
	/* The wrong method, path, host, place, or the other credential's
	 * placeholder: refused, and the note names the variable only. */
	cr_assert_eq(swap(&cr, s,
			  "POST /v1/items/1 HTTP/1.1\r\nAuthorization: Bearer " PA "\r\n\r\n", out,
			  note),
		     -EACCES);
	cr_assert_str_eq(note, ",\"credential\":\"A_TOKEN\"");
	cr_assert_eq(swap(&cr, s, "GET /v1/items HTTP/1.1\r\nAuthorization: Bearer " PA "\r\n\r\n",
			  out, note),
		     -EACCES);
	cr_assert_eq(
	    swap(&cr, o, "GET / HTTP/1.1\r\nAuthorization: Bearer " PA "\r\n\r\n", out, note),
	    -EACCES);
	cr_assert_eq(swap(&cr, s, "GET /v1/items/1 HTTP/1.1\r\nX-Token: " PA "\r\n\r\n", out, note),
		     -EACCES);
	cr_assert_eq(swap(&cr, s, "GET /v1/items/1?api_key=" PB " HTTP/1.1\r\n\r\n", out, note),
		     -EACCES);
	cr_assert_eq(
	    swap(&cr, s, "GET /v1/items/1 HTTP/1.1\r\nAuthorization: " PA "\r\n\r\n", out, note),
	    -EACCES); /* without its prefix */
	/* An audience is asked for no coding (the redaction reads what it
	 * answers); another host keeps the client's Accept-Encoding. */
	cr_assert_gt(swap(&cr, s,
			  "GET /v1/items/1 HTTP/1.1\r\nAccept-Encoding: gzip, br\r\nRange: "
			  "bytes=4-\r\nIf-Range: x\r\nAuthorization: Bearer " PA "\r\n\r\n",
			  out, note),
		     0);
	cr_assert(!strstr(out, "gzip") && !strstr(out, "Range") &&
		      strstr(out, "\r\nAccept-Encoding: identity\r\n\r\n"),
		  "%s", out);
	cr_assert_gt(swap(&cr, o,
			  "GET / HTTP/1.1\r\nAccept-Encoding: gzip\r\nRange: bytes=1-\r\n\r\n", out,
			  note),
		     0);
	cr_assert_str_eq(out, "GET / HTTP/1.1\r\nAccept-Encoding: gzip\r\nRange: bytes=1-\r\n\r\n");
	/* The twin: --weaken credential-any-audience swaps it anywhere. */
	cr.any_audience = true;
	cr_assert_gt(
	    swap(&cr, o, "GET / HTTP/1.1\r\nAuthorization: Bearer " PA "\r\n\r\n", out, note), 0);
	cr_assert(strstr(out, "Authorization: Bearer SECRET-A\r\n"), "%s", out);
	mediator_credentials_free(&cr);
	policy_free(p);
}

/* A placeholder of another session (running or ended: this mediator's
 * table never had it) is refused wherever it is in the head, never passed
 * on; the twin: the same request with this session's own is swapped. */
Test(mediator, credential_foreign_placeholder_refused)
{
	struct mediator_credentials cr = {0};
	struct policy *p = cred_setup(&cr, "a=SECRET-A\nb=s&b%-b-b-b\n");
	const struct policy_net_rule *s = &p->net_allow[0], *o = &p->net_allow[1];
	static char out[HTTP_HEAD_MAX];
	char note[192];
	static const char *const heads[] = {
	    "GET /v1/items/1 HTTP/1.1\r\nAuthorization: Bearer " PF "\r\n\r\n",
	    "GET /v1/search?api_key=" PF " HTTP/1.1\r\n\r\n",
	    "GET /v1/items/1 HTTP/1.1\r\nX-Other: " PF "\r\n\r\n",
	};

	for (size_t i = 0; i < sizeof(heads) / sizeof(heads[0]); i++) {
		cr_expect_eq(swap(&cr, s, heads[i], out, note), -EACCES, "%zu", i);
		cr_expect_str_eq(note, ",\"placeholder\":\"foreign\"", "%zu", i);
	}
	cr_expect_eq(swap(&cr, o, "GET / HTTP/1.1\r\nCookie: t=" PF "\r\n\r\n", out, note),
		     -EACCES);
	/* Not a placeholder's shape: passes. */
	cr_expect_gt(swap(&cr, o, "GET / HTTP/1.1\r\nX: pdk_12345\r\n\r\n", out, note), 0);
	cr_expect_gt(swap(&cr, s,
			  "GET /v1/items/1 HTTP/1.1\r\nAuthorization: Bearer " PA "\r\n\r\n", out,
			  note),
		     0);
	mediator_credentials_free(&cr);
	policy_free(p);
}

Test(mediator, credential_redaction_across_reads)
{
	struct mediator_credentials cr = {0};
	struct policy *p = cred_setup(&cr, "a=SECRET-A\nb=s&b%-b-b-b\n");
	unsigned long count = 0;
	char b1[] = "x SECRET-A y SECRET-", b2[] = "SECRET-Ab";

	cr_assert_eq(mediator_cred_redact(&cr, b1, strlen(b1), false, &count), 7);
	cr_assert_str_eq(b1, "x ******** y SECRET-");
	cr_assert_eq(count, 1);
	cr_assert_eq(mediator_cred_redact(&cr, b2, strlen(b2), false, &count), 0);
	cr_assert_str_eq(b2, "********b");
	/* At the end nothing is held: a prefix alone is not the secret. */
	cr_assert_eq(mediator_cred_redact(&cr, b1 + 13, 7, true, &count), 0);
	cr_assert_eq(count, 2);
	mediator_credentials_free(&cr);
	policy_free(p);
}

Test(mediator, credentials_load_refuses_bad_files)
{
	static const struct policy_vars vars = {.workspace = "/", .home = "/", .pwd = "/"};
	static const unsigned char key[EVIDENCE_KEY_LEN] = {1};
	struct mediator_credentials cr = {0};
	char path[] = "/tmp/paddock-unit-secrets-XXXXXX";
	struct policy *p = NULL;
	struct err err = {0};
	int fd = mkstemp(path);

	cr_assert_geq(fd, 0);
	cr_assert_eq(write(fd, "a=SECRET-A\n", 11), 11);
	close(fd);
	cr_assert_eq(policy_load_buffer(cred_json, strlen(cred_json), &vars, &p, &err), 0);
	cr_assert_eq(mediator_credentials_add(&cr, "A_TOKEN", PA, &err), 0);
	cr_assert_eq(mediator_credentials_add(&cr, "B_TOKEN", PB, &err), 0);
	/* b is missing: named, the value of a never in the message. */
	cr_assert_lt(mediator_credentials_load(&cr, path, p, key, &err), 0);
	cr_assert(strstr(err.msg, "no secret \"b\""), "%s", err.msg);
	cr_assert(!strstr(err.msg, "SECRET"), "%s", err.msg);
	mediator_credentials_free(&cr);
	memset(&cr, 0, sizeof(cr));
	chmod(path, 0640);
	cr_assert_eq(mediator_credentials_add(&cr, "A_TOKEN", PA, &err), 0);
	cr_assert_lt(mediator_credentials_load(&cr, path, p, key, &err), 0);
	cr_assert(strstr(err.msg, "mode 0600"), "%s", err.msg);
	mediator_credentials_free(&cr);
	memset(&cr, 0, sizeof(cr));
	cr_assert_lt(mediator_credentials_add(&cr, "A_TOKEN", "pdk_short", &err), 0);
	unlink(path);
	policy_free(p);
}

/* ----------------------------------------------- on_capture_loss */

static struct policy *capture_policy(const char *mode)
{
	char json[512];
	static const struct policy_vars vars = {.workspace = "/", .home = "/", .pwd = "/"};
	struct policy *p = NULL;
	struct err err = {0};

	snprintf(json, sizeof(json),
		 "{\"version\":1,\"network\":{\"mode\":\"mediated\",\"allow\":["
		 "{\"host\":\"local.test\",\"ports\":[8080],\"protocol\":\"http\"}],"
		 "\"resolve\":{\"local.test\":\"127.0.0.1\"}%s%s%s}}",
		 mode ? ",\"on_capture_loss\":\"" : "", mode ? mode : "", mode ? "\"" : "");
	cr_assert_eq(policy_load_buffer(json, strlen(json), &vars, &p, &err), 0, "%s", err.msg);
	return p;
}

static int failing_dial(struct mediator *m, const struct sockaddr *sa, socklen_t len)
{
	(void)m;
	(void)sa;
	(void)len;
	dials++;
	errno = ECONNREFUSED;
	return -1;
}

struct served {
	struct mediator *m;
	int stop[2];
	int port;
	pthread_t t;
};

static void *serve_thread(void *arg)
{
	struct served *s = arg;

	mediator_run(s->m, s->stop[0]);
	return NULL;
}

static void serve_start(struct served *s, struct mediator *m)
{
	struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	socklen_t len = sizeof(a);
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);

	cr_assert_geq(fd, 0);
	cr_assert_eq(bind(fd, (struct sockaddr *)&a, sizeof(a)), 0);
	cr_assert_eq(listen(fd, 8), 0);
	cr_assert_eq(getsockname(fd, (struct sockaddr *)&a, &len), 0);
	s->m = m;
	s->port = ntohs(a.sin_port);
	cr_assert_eq(pipe2(s->stop, O_CLOEXEC), 0);
	cr_assert_eq(mediator_add_listener(m, fd, MEDIATOR_PROXY, 0), 0);
	cr_assert_eq(pthread_create(&s->t, NULL, serve_thread, s), 0);
}

static void serve_stop(struct served *s)
{
	cr_assert_eq(write(s->stop[1], "x", 1), 1);
	pthread_join(s->t, NULL);
	close(s->stop[0]);
	close(s->stop[1]);
}

/* One proxied request of method (a body with POST); the response's
 * first line into out. */
static void request(const struct served *s, const char *method, char *out, size_t size)
{
	struct sockaddr_in a = {.sin_family = AF_INET,
				.sin_addr.s_addr = htonl(INADDR_LOOPBACK),
				.sin_port = htons((uint16_t)s->port)};
	struct timeval tv = {.tv_sec = 5};
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	char req[256];
	ssize_t n;
	int k;

	cr_assert_geq(fd, 0);
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	cr_assert_eq(connect(fd, (struct sockaddr *)&a, sizeof(a)), 0);
	k = snprintf(req, sizeof(req),
		     "%s http://local.test:8080/x HTTP/1.1\r\nHost: local.test:8080\r\n%s\r\n%s",
		     method, strcmp(method, "POST") == 0 ? "Content-Length: 2\r\n" : "",
		     strcmp(method, "POST") == 0 ? "hi" : "");
	cr_assert_eq(write(fd, req, (size_t)k), k);
	n = read(fd, out, size - 1);
	out[n > 0 ? n : 0] = '\0';
	out[strcspn(out, "\r\n")] = '\0';
	close(fd);
}

/* While the admissions log cannot be written, the policy's
 * on_capture_loss decides: deny sends nothing, allow-read-only only GET,
 * allow everything. The twin: with a working log the same requests are
 * sent whatever the mode (the refusal is the impairment's). */
Test(mediator, on_capture_loss_while_the_log_fails)
{
	static const struct {
		const char *mode;
		int get, post; /* dials expected */
	} cases[] = {{NULL, 0, 0}, {"deny", 0, 0}, {"allow-read-only", 1, 0}, {"allow", 1, 1}};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		for (int working = 0; working < 2; working++) {
			struct policy *p = capture_policy(cases[i].mode);
			int fd = working ? memfd_create("adm", 0)
					 : open("/dev/full", O_WRONLY | O_CLOEXEC);
			struct mediator_config cfg = {
			    .policy = p, .session = "s", .log_fd = fd, .key = {7}};
			struct mediator *m = NULL;
			struct served s;
			char line[256];
			int get, post;

			cr_assert_geq(fd, 0);
			cr_assert_eq(mediator_new(&cfg, &m), 0);
			mediator_set_dial(m, failing_dial);
			serve_start(&s, m);
			dials = 0;
			request(&s, "GET", line, sizeof(line));
			get = dials;
			request(&s, "POST", line, sizeof(line));
			post = dials - get;
			serve_stop(&s);
			mediator_free(m);
			close(fd);
			policy_free(p);
			if (working) {
				cr_assert_eq(get + post, 2, "%s, a working log: GET %d, POST %d",
					     cases[i].mode ? cases[i].mode : "(default)", get,
					     post);
				continue;
			}
			cr_assert_eq(get, cases[i].get, "%s: GET dialled %d",
				     cases[i].mode ? cases[i].mode : "(default deny)", get);
			cr_assert_eq(post, cases[i].post, "%s: POST dialled %d",
				     cases[i].mode ? cases[i].mode : "(default deny)", post);
			cr_assert(line[0], "a response to the refused or failed request");
		}
	}
}

/* A log that can be written again says first what was decided while it
 * could not (and how many lines were lost). */
Test(mediator, capture_restored_is_logged)
{
	struct policy *p = capture_policy("deny");
	char path[] = "/tmp/paddock-unit-capture.XXXXXX";
	int fd = mkstemp(path);
	struct mediator_config cfg = {.policy = p, .session = "s", .log_fd = fd, .key = {7}};
	struct mediator *m = NULL;
	struct rlimit small, was;
	struct served s;
	char line[256], text[16384];
	ssize_t n;

	cr_assert_geq(fd, 0);
	unlink(path);
	signal(SIGXFSZ, SIG_IGN); /* a write past the limit fails with EFBIG instead */
	cr_assert_eq(mediator_new(&cfg, &m), 0);
	mediator_set_dial(m, failing_dial);
	getrlimit(RLIMIT_FSIZE, &was);
	small = was;
	small.rlim_cur = (rlim_t)lseek(fd, 0, SEEK_END); /* nothing more fits */
	cr_assert_eq(setrlimit(RLIMIT_FSIZE, &small), 0);
	serve_start(&s, m);
	dials = 0;
	request(&s, "GET", line, sizeof(line)); /* lost: the log is full, capture fine */
	request(&s, "GET", line, sizeof(line)); /* refused: impaired */
	cr_assert_eq(dials, 1);
	cr_assert_eq(setrlimit(RLIMIT_FSIZE, &was), 0);
	request(&s, "GET", line, sizeof(line)); /* capture-restored, then this one */
	cr_assert_eq(dials, 2);
	serve_stop(&s);
	mediator_free(m);
	n = pread(fd, text, sizeof(text) - 1, 0);
	cr_assert_gt(n, 0);
	text[n] = '\0';
	cr_assert(strstr(text, "\"type\":\"capture-restored\""), "%s", text);
	cr_assert(strstr(text, "\"on_capture_loss\":\"deny\",\"refused\":1,\"admitted\":0"), "%s",
		  text);
	cr_assert(strstr(text, "\"drops\":"), "%s", text);
	close(fd);
	policy_free(p);
}
