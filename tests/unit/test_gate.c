/* Unit tests for the release gate's pure parts (docs/network.md,
 * "Release gate"): the approvals parsers (policy/approvals.c: digests,
 * destinations, the approvals file, the control request), the body
 * reader that digests chunked bodies over their entity bytes
 * (mediator/body.c), and the gate itself (mediator/gate.c): single use,
 * bound to the destination, any one-byte change refused, taint. */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#include "../../mediator/mediator.h"
#include "../../policy/sha256.h"
#include "unit.h"
#include "unit_policy.h"

TestSuite(gate, .fini = unit_leak_check);

static const char D[] = "2cf24dba5fb0a30e26e83b2ac5b9e29e1b161e5c1fa7425e73043362938b9824";

Test(gate, digests)
{
	char out[65];
	const char *why;

	cr_assert_eq(approval_parse_digest(D, out, &why), 0);
	cr_assert_str_eq(out, D);
	cr_assert_eq(
	    approval_parse_digest("sha256:2CF24DBA5FB0A30E26E83B2AC5B9E29E1B161E5C1FA7425E7"
				  "3043362938B9824",
				  out, &why),
	    0);
	cr_assert_str_eq(out, D, "upper case is read as lower");
	cr_assert_lt(approval_parse_digest("", out, &why), 0);
	cr_assert_lt(approval_parse_digest("sha256:", out, &why), 0);
	cr_assert_lt(approval_parse_digest("SHA256:2cf24dba5fb0a30e26e83b2ac5b9e29e1b161e5c1fa7425e"
					   "73043362938b9824",
					   out, &why),
		     0);
	cr_assert_lt(approval_parse_digest("2cf24dba5fb0a30e26e83b2ac5b9e29e1b161e5c1fa7425e7304336"
					   "2938b982",
					   out, &why),
		     0, "63 digits");
	cr_assert_lt(approval_parse_digest("2cf24dba5fb0a30e26e83b2ac5b9e29e1b161e5c1fa7425e7304336"
					   "2938b98244",
					   out, &why),
		     0, "65 digits");
	cr_assert_lt(approval_parse_digest("2cf24dba5fb0a30e26e83b2ac5b9e29e1b161e5c1fa7425e7304336"
					   "2938b982g",
					   out, &why),
		     0);
	cr_assert(strstr(why, "SHA-256"));
}

Test(gate, destinations)
{
	struct approval_dest d;
	char buf[1200];
	const char *why;

	cr_assert_eq(approval_parse_dest("sink.test:8080/publish?x=1", &d, &why), 0);
	cr_assert_str_eq(d.host, "sink.test");
	cr_assert_eq(d.port, 8080);
	cr_assert_str_eq(d.target, "/publish?x=1");
	approval_dest_format(&d, buf, sizeof(buf));
	cr_assert_str_eq(buf, "sink.test:8080/publish?x=1");
	cr_assert_eq(approval_parse_dest("a:1/", &d, &why), 0);
	static const char *const bad[] = {
	    "sink.test/publish", "sink.test:/p",	  ":80/p",
	    "sink.test:0/p",	 "sink.test:65536/p",	  "sink.test:080/p",
	    "sink.test:80",	 "sink.test:80p",	  "Sink.test:80/p",
	    "*.sink.test:80/p",	 "10.0.0.1:80/p",	  "sink.test:80/a b",
	    "sink.test:80/\x01", "sink.test:80/\xc3\xa9", "",
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		cr_assert_lt(approval_parse_dest(bad[i], &d, &why), 0, "%s", bad[i]);
	memset(buf, 'a', sizeof(buf));
	memcpy(buf, "s.test:80/", 10);
	buf[10 + APPROVAL_TARGET_MAX] = '\0'; /* a path of 1025 bytes */
	cr_assert_lt(approval_parse_dest(buf, &d, &why), 0);
	buf[9 + APPROVAL_TARGET_MAX] = '\0';
	cr_assert_eq(approval_parse_dest(buf, &d, &why), 0);
}

Test(gate, approvals_files)
{
	struct approval *a = NULL;
	struct err err = {0};
	size_t n;
	char *text;

	text =
	    strdup("# comment\r\n\nsha256:2cf24dba5fb0a30e26e83b2ac5b9e29e1b161e5c1fa7425e730433"
		   "62938b9824 sink.test:80/a\r\n"
		   "2cf24dba5fb0a30e26e83b2ac5b9e29e1b161e5c1fa7425e73043362938b9824\tb.test:1/b");
	cr_assert_eq(approvals_parse(text, strlen(text), &a, &n, &err), 0, "%s", err.msg);
	cr_assert_eq(n, 2);
	cr_assert_str_eq(a[0].dest.target, "/a");
	cr_assert_str_eq(a[1].dest.host, "b.test");
	free(a);
	free(text);
	cr_assert_eq(approvals_parse("", 0, &a, &n, &err), 0);
	cr_assert_eq(n, 0);
	free(a);
	static const struct {
		const char *text, *want;
	} bad[] = {
	    {"x\n", "line 1: is not \"DIGEST HOST:PORT/PATH\""},
	    {"\n\nabc s.test:1/x\n", "line 3: is not a SHA-256"},
	    {"2cf24dba5fb0a30e26e83b2ac5b9e29e1b161e5c1fa7425e73043362938b9824 s.test/x\n",
	     "line 1: is not a destination"},
	    {"2cf24dba5fb0a30e26e83b2ac5b9e29e1b161e5c1fa7425e73043362938b9824  s.test:1/x\n",
	     "line 1: does not name a host"},
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		err = (struct err){0};
		cr_assert_eq(approvals_parse(bad[i].text, strlen(bad[i].text), &a, &n, &err),
			     -EINVAL, "%s", bad[i].text);
		cr_assert(strstr(err.msg, bad[i].want), "%s: %s", bad[i].text, err.msg);
		cr_assert_null(a);
	}
	cr_assert_eq(approvals_parse("a\0b", 3, &a, &n, &err), -EINVAL);
	cr_assert(strstr(err.msg, "NUL"));
	/* Limits: the size, and the count. */
	text = malloc(APPROVALS_FILE_MAX + 1);
	memset(text, '\n', APPROVALS_FILE_MAX + 1);
	cr_assert_eq(approvals_parse(text, APPROVALS_FILE_MAX + 1, &a, &n, &err), -E2BIG);
	free(text);
	text = calloc(APPROVALS_MAX + 1, 80);
	for (int i = 0; i <= APPROVALS_MAX; i++)
		strcat(
		    text,
		    "2cf24dba5fb0a30e26e83b2ac5b9e29e1b161e5c1fa7425e73043362938b9824 s.test:1/\n");
	cr_assert_eq(approvals_parse(text, strlen(text), &a, &n, &err), -E2BIG);
	cr_assert(strstr(err.msg, "more than 256"), "%s", err.msg);
	free(text);
}

Test(gate, control_requests)
{
	struct approval a;
	bool has_dest;
	const char *why;

	cr_assert_eq(approval_parse_request(
			 "approve 2cf24dba5fb0a30e26e83b2ac5b9e29e1b161e5c1fa7425e73043362938b9824",
			 &a, &has_dest, &why),
		     0);
	cr_assert_not(has_dest);
	cr_assert_str_eq(a.digest, D);
	cr_assert_eq(
	    approval_parse_request("approve sha256:2cf24dba5fb0a30e26e83b2ac5b9e29e1b161e5c1"
				   "fa7425e73043362938b9824 s.test:9/p",
				   &a, &has_dest, &why),
	    0);
	cr_assert(has_dest);
	cr_assert_eq(a.dest.port, 9);
	cr_assert_lt(approval_parse_request("approve", &a, &has_dest, &why), 0);
	cr_assert_lt(approval_parse_request("approve ", &a, &has_dest, &why), 0);
	cr_assert_lt(approval_parse_request("stop", &a, &has_dest, &why), 0);
	cr_assert_lt(
	    approval_parse_request("approve 2cf24dba5fb0a30e26e83b2ac5b9e29e1b161e5c1fa7425"
				   "e73043362938b9824 s.test:9/p extra",
				   &a, &has_dest, &why),
	    0);
}

/* Feed text in pieces of step bytes: the total of body bytes. */
static long feed(struct gate_body *b, const char *text, size_t step)
{
	size_t len = strlen(text), total = 0;

	for (size_t i = 0; i < len && !b->done; i += step) {
		size_t n = len - i < step ? len - i : step;
		long k = gate_body_feed(b, text + i, n, GATE_BODY_MAX);

		if (k < 0)
			return k;
		total += (size_t)k;
	}
	return (long)total;
}

Test(gate, bodies_are_digested_over_their_entity_bytes)
{
	const char chunked[] = "2\r\nhe\r\n3;x=y\r\nllo\r\n0\r\nT: 1\r\n\r\nGET /next";
	char hex[65];
	struct gate_body b;

	for (size_t step = 1; step <= sizeof(chunked); step++) {
		gate_body_init(&b, true, 0);
		cr_assert_eq(feed(&b, chunked, step), (long)(strlen(chunked) - 9), "step %zu",
			     step);
		cr_assert(b.done);
		gate_body_digest(&b, hex);
		cr_assert_str_eq(hex, D, "the chunked entity is \"hello\" (step %zu)", step);
		cr_assert_eq(b.raw_len, strlen(chunked) - 9, "the wire bytes are kept");
		gate_body_free(&b);
	}
	gate_body_init(&b, false, 5);
	cr_assert_eq(feed(&b, "helloXX", 3), 5);
	cr_assert(b.done);
	gate_body_digest(&b, hex);
	cr_assert_str_eq(hex, D);
	gate_body_free(&b);
	gate_body_init(&b, false, 0);
	cr_assert(b.done);
	gate_body_free(&b);
	static const char *const bad[] = {
	    "5\nhello", "x\r\n", "1\r\nab\r\n", "ffffffffffffffff\r\n", "0\r\n\n", "1;\n"};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		gate_body_init(&b, true, 0);
		cr_assert_eq(feed(&b, bad[i], 64), -EINVAL, "%s", bad[i]);
		gate_body_free(&b);
	}
	/* The limit counts the wire bytes, framing included. */
	{
		char *big = malloc(GATE_BODY_MAX + 64);

		memset(big, 'a', GATE_BODY_MAX + 64);
		gate_body_init(&b, false, GATE_BODY_MAX + 1);
		cr_assert_eq(gate_body_feed(&b, big, GATE_BODY_MAX + 1, GATE_BODY_MAX), -E2BIG);
		gate_body_free(&b);
		free(big);
	}
}

/* The chunked reader and http_chunked_scan() agree on where a body ends. */
Test(gate, body_reader_agrees_with_the_chunked_scanner)
{
	static const char *const inputs[] = {
	    "5\r\nhello\r\n3;ext=1\r\nabc\r\n0\r\nTrailer: x\r\n\r\nGET /next",
	    "0\r\n\r\n",
	    "a\r\n0123456789\r\n0\r\n\r\nrest",
	    "1\r\nx\r\n",
	};
	for (size_t i = 0; i < sizeof(inputs) / sizeof(inputs[0]); i++) {
		struct http_chunked c = {0};
		struct gate_body b;

		gate_body_init(&b, true, 0);
		cr_assert_eq(gate_body_feed(&b, inputs[i], strlen(inputs[i]), GATE_BODY_MAX),
			     http_chunked_scan(&c, inputs[i], strlen(inputs[i])), "%s", inputs[i]);
		cr_assert_eq(b.done, c.done);
		gate_body_free(&b);
	}
}

static struct approval approval(const char *body, const char *dest)
{
	struct approval a;
	unsigned char d[SHA256_DIGEST_LEN];
	const char *why;

	sha256(body, strlen(body), d);
	sha256_hex(d, a.digest);
	cr_assert_eq(approval_parse_dest(dest, &a.dest, &why), 0);
	return a;
}

Test(gate, approvals_are_single_use_and_bound_to_their_destination)
{
	struct gate *g = NULL;
	struct approval a = approval("notes", "s.test:80/publish");
	struct approval other = approval("notes", "s.test:80/other");

	cr_assert_eq(gate_new(false, 1000, &g), 0);
	cr_assert_not(gate_take(g, a.digest, &a.dest), "nothing approved yet");
	cr_assert_eq(gate_add(g, &a), 0);
	cr_assert_not(gate_take(g, a.digest, &other.dest), "another path");
	other = approval("notes", "s.test:81/publish");
	cr_assert_not(gate_take(g, a.digest, &other.dest), "another port");
	other = approval("notes", "t.test:80/publish");
	cr_assert_not(gate_take(g, a.digest, &other.dest), "another host");
	other = approval("notes", "s.test:80/publish?x");
	cr_assert_not(gate_take(g, a.digest, &other.dest), "another query");
	cr_assert(gate_take(g, a.digest, &a.dest));
	cr_assert_not(gate_take(g, a.digest, &a.dest), "single use");
	/* Two approvals, two releases. */
	cr_assert_eq(gate_add(g, &a), 0);
	cr_assert_eq(gate_add(g, &a), 0);
	cr_assert(gate_take(g, a.digest, &a.dest));
	cr_assert(gate_take(g, a.digest, &a.dest));
	cr_assert_not(gate_take(g, a.digest, &a.dest));
	gate_free(g);
}

/* Any one-byte change of an approved body, at every position, is refused
 * (a property over all positions and a few replacement bytes). */
Test(gate, any_one_byte_change_is_refused)
{
	const char body[] = "sanitized release notes, v1.2: 3 fixes, no private data";
	struct approval a = approval(body, "s.test:80/publish");
	struct gate *g = NULL;
	char copy[sizeof(body)];

	cr_assert_eq(gate_new(false, 1000, &g), 0);
	cr_assert_eq(gate_add(g, &a), 0);
	srand(12);
	for (size_t i = 0; i < strlen(body); i++) {
		for (int k = 0; k < 4; k++) {
			struct approval x;

			memcpy(copy, body, sizeof(body));
			copy[i] = (char)(copy[i] ^ (1 + rand() % 255));
			if (!copy[i])
				copy[i] = 'x' ^ body[i] ? 'x' : 'y';
			x = approval(copy, "s.test:80/publish");
			cr_assert_not(gate_take(g, x.digest, &x.dest), "byte %zu changed", i);
		}
	}
	cr_assert(gate_take(g, a.digest, &a.dest), "the approval was not spent by the changes");
	gate_free(g);
}

static struct policy *gate_policy(void)
{
	static const char json[] =
	    "{\"version\":1,\"network\":{\"mode\":\"mediated\",\"hold\":\"2s\",\"allow\":["
	    "{\"host\":\"sink.test\",\"ports\":[80],\"protocol\":\"http\",\"publish\":true},"
	    "{\"host\":\"note.test\",\"ports\":[80],\"protocol\":\"http\",\"private\":true},"
	    "{\"host\":\"pub.test\",\"ports\":[80],\"protocol\":\"http\"},"
	    "{\"host\":\"tun.test\",\"ports\":[443],\"protocol\":\"tls\"}]}}";

	return unit_policy(json);
}

Test(gate, publications_and_taint)
{
	struct policy *p = gate_policy();
	const struct policy_net_rule *sink = &p->net_allow[0], *note = &p->net_allow[1],
				     *pub = &p->net_allow[2], *tun = &p->net_allow[3];
	struct gate *g = NULL, *off = NULL;

	cr_assert_eq(p->net_hold_ms, 2000);
	cr_assert_eq(gate_new(false, p->net_hold_ms, &g), 0);
	cr_assert(gate_holds(g, sink, true));
	cr_assert_not(gate_holds(g, sink, false), "no body: not a publication");
	cr_assert_not(gate_holds(g, pub, true), "untainted: an ordinary rule passes");
	cr_assert(gate_tunnel_ok(g, tun));
	cr_assert_not(gate_taint(g, pub), "an ordinary rule taints nothing");
	cr_assert_not(gate_tainted(g));
	cr_assert(gate_taint(g, note));
	cr_assert_not(gate_taint(g, note), "tainted once");
	cr_assert(gate_tainted(g));
	cr_assert(gate_holds(g, pub, true), "tainted: every body to a rule not private");
	cr_assert_not(gate_holds(g, pub, false));
	cr_assert_not(gate_holds(g, note, true), "a private rule's own requests pass");
	cr_assert_not(gate_tunnel_ok(g, tun), "tainted: no tunnel to a rule not private");
	/* --weaken gate-off: nothing held, nothing tainted. */
	cr_assert_eq(gate_new(true, p->net_hold_ms, &off), 0);
	cr_assert_not(gate_holds(off, sink, true));
	cr_assert_not(gate_taint(off, note));
	cr_assert_not(gate_holds(off, pub, true));
	cr_assert(gate_tunnel_ok(off, tun));
	gate_free(g);
	gate_free(off);
	policy_free(p);
}
