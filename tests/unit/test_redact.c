/* The redaction of brokered secrets from responses (mediator/redact.c):
 * every form of the secret, at every split position of chunked framing
 * and of the reads, in the head and the body. The encoders here are the
 * test's own (plain, independent of redact.c's forms), and every check is
 * run once against mediator_cred_redact() too (--weaken
 * redact-plain-only): the twin that shows a check sees a leak. */
#include <criterion/criterion.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../../mediator/mediator.h"
#include "unit.h"

TestSuite(redact, .fini = unit_leak_check);

#define BUFSZ	HTTP_HEAD_MAX /* loop.c's buffer */
#define OUT_MAX (1 << 20)

/* '~', '>' and '?' give base64 '+' and '/' (and url-safe '-', '_'). */
#define SECRET "Sk~>?7q/Zx!e"

static const char policy_json[] =
    "{\"version\":1,\"network\":{\"mode\":\"mediated\",\"allow\":[{\"host\":\"s.test\","
    "\"ports\":[80],\"protocol\":\"http\",\"grants\":["
    "{\"methods\":[\"GET\"],\"path\":\"/v1/items/{id}\",\"credential\":{\"secret\":\"a\","
    "\"env\":\"A_TOKEN\",\"header\":\"Authorization\",\"prefix\":\"Bearer \"}}]}]}}";

static struct policy *pol;
static struct mediator_credentials cr;

static void setup(void)
{
	static const struct policy_vars vars = {.workspace = "/", .home = "/", .pwd = "/"};
	static const unsigned char key[EVIDENCE_KEY_LEN] = {1};
	static const char file[] = "a=" SECRET "\n";
	char path[] = "/tmp/paddock-unit-redact-XXXXXX";
	struct err err = {0};
	int fd = mkstemp(path);

	cr_assert_geq(fd, 0);
	cr_assert_eq(write(fd, file, strlen(file)), (ssize_t)strlen(file));
	close(fd);
	cr_assert_eq(policy_load_buffer(policy_json, strlen(policy_json), &vars, &pol, &err), 0,
		     "%s", err.msg);
	cr_assert_eq(
	    mediator_credentials_add(&cr, "A_TOKEN", "pdk_aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa", &err),
	    0, "%s", err.msg);
	cr_assert_eq(mediator_credentials_load(&cr, path, pol, key, &err), 0, "%s", err.msg);
	unlink(path);
}

static void teardown(void)
{
	mediator_credentials_free(&cr);
	memset(&cr, 0, sizeof(cr));
	policy_free(pol);
	pol = NULL;
	unit_leak_check();
}

/* ------------------------------------------------ the test's encoders */

static size_t enc_hex(const char *s, size_t n, bool upper, char *out)
{
	const char *d = upper ? "0123456789ABCDEF" : "0123456789abcdef";

	for (size_t i = 0; i < n; i++) {
		out[2 * i] = d[(unsigned char)s[i] >> 4];
		out[2 * i + 1] = d[s[i] & 15];
	}
	return 2 * n;
}

static size_t enc_b64(const char *s, size_t n, bool url, char *out)
{
	const char *a = url ? "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"
			    : "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
	size_t k = 0;

	for (size_t i = 0; i < n; i += 3) {
		unsigned v = (unsigned char)s[i] << 16;

		if (i + 1 < n)
			v |= (unsigned char)s[i + 1] << 8;
		if (i + 2 < n)
			v |= (unsigned char)s[i + 2];
		out[k++] = a[v >> 18 & 63];
		out[k++] = a[v >> 12 & 63];
		out[k++] = i + 1 < n ? a[v >> 6 & 63] : '=';
		out[k++] = i + 2 < n ? a[v & 63] : '=';
	}
	return k;
}

/* mode 0: every byte %XX; 1: every byte %xx; 2: only what a URL must. */
static size_t enc_pct(const char *s, size_t n, int mode, char *out)
{
	size_t k = 0;

	for (size_t i = 0; i < n; i++) {
		char c = s[i];

		if (mode == 2 && (strchr("-._~", c) || (c >= '0' && c <= '9') ||
				  (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z')))
			out[k++] = c;
		else
			k += (size_t)sprintf(out + k, mode == 1 ? "%%%02x" : "%%%02X",
					     (unsigned char)c);
	}
	return k;
}

/* mode 0: every byte \u00XX; 1: \u00xx; 2: JSON's own escapes (\/). */
static size_t enc_json(const char *s, size_t n, int mode, char *out)
{
	size_t k = 0;

	for (size_t i = 0; i < n; i++) {
		if (mode == 2 && s[i] != '/')
			out[k++] = s[i];
		else if (mode == 2)
			k += (size_t)sprintf(out + k, "\\/");
		else
			k += (size_t)sprintf(out + k, mode == 1 ? "\\u%04x" : "\\u%04X",
					     (unsigned char)s[i]);
	}
	return k;
}

/* One form of the secret, the way an upstream may echo it, with the
 * range [*lo, *hi) of the characters that must come back starred (all of
 * them, but for base64's characters that carry bits of the bytes around
 * the secret). */
struct form {
	const char *name;
	char text[256];
	size_t n, lo, hi;
};

static size_t forms(struct form *f)
{
	static const char *const names[] = {
	    "raw",	"hex", "HEX", "b64-0", "b64-1",	  "b64-2",   "b64url-0", "b64url-1",
	    "b64url-2", "%XX", "%xx", "%url",  "\\u00XX", "\\u00xx", "json-\\/", "%url-b64",
	};
	const char *s = SECRET;
	size_t n = strlen(s), k = 0;

	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++, k++) {
		struct form *x = &f[k];
		char tmp[64];

		x->name = names[i];
		x->lo = 0;
		if (i == 0) {
			memcpy(x->text, s, n);
			x->n = n;
		} else if (i <= 2) {
			x->n = enc_hex(s, n, i == 2, x->text);
		} else if (i <= 8) {
			unsigned a = (unsigned)(i - 3) % 3;

			/* a bytes before the secret, two after */
			snprintf(tmp, sizeof(tmp), "%.*s%s@@", (int)a, "##", s);
			x->n = enc_b64(tmp, strlen(tmp), i >= 6, x->text);
			x->lo = (8 * a + 5) / 6;
			x->hi = 8 * (a + n) / 6;
			continue;
		} else if (i <= 11) {
			x->n = enc_pct(s, n, (int)i - 9, x->text);
		} else if (i <= 14) {
			x->n = enc_json(s, n, (int)i - 12, x->text);
		} else {
			/* base64 in a URL: its '+' and '/' percent-encoded */
			size_t m = enc_b64(s, n, false, tmp);

			x->n = enc_pct(tmp, m, 2, x->text); /* 12 bytes: no '=' */
		}
		x->hi = x->n;
	}
	return k;
}

/* ----------------------------------------------------------- the loop */

/* As loop.c does: reads of rs bytes into a buffer of BUFSZ, each scanned,
 * the bytes not held released; the end of the stream after the last. */
static long stream(bool plain, bool http, bool strict, const char *wire, size_t wlen, size_t rs,
		   char *out, size_t *outn, unsigned long *count)
{
	struct redact r;
	static char buf[BUFSZ];
	size_t len = 0, fed = 0;
	uint64_t base = 0;
	long h = 0;

	*outn = 0;
	*count = 0;
	cr_assert_eq(redact_init(&r, &cr, http, false, strict), 0);
	for (;;) {
		size_t take = wlen - fed;
		bool eof;

		if (take > rs)
			take = rs;
		if (take > BUFSZ - len)
			take = BUFSZ - len;
		memcpy(buf + len, wire + fed, take);
		len += take;
		fed += take;
		eof = fed == wlen;
		h = plain ? (long)mediator_cred_redact(&cr, buf, len, eof, count)
			  : redact_scan(&r, buf, len, base, eof);
		if (h < 0)
			break;
		if (!eof && (size_t)h == len && len == BUFSZ) {
			h = -ENOBUFS;
			break;
		}
		memcpy(out + *outn, buf, len - (size_t)h);
		*outn += len - (size_t)h;
		base += len - (size_t)h;
		memmove(buf, buf + len - (size_t)h, (size_t)h);
		len = (size_t)h;
		if (eof)
			break;
	}
	if (!plain)
		*count = r.count;
	redact_free(&r);
	return h;
}

/* A body as chunks of cs bytes (the last shorter), after head. */
static size_t chunked(const char *head, const char *body, size_t n, size_t cs, char *out)
{
	size_t k = (size_t)sprintf(out, "%s", head);

	for (size_t i = 0; i < n; i += cs) {
		size_t m = n - i < cs ? n - i : cs;

		k += (size_t)sprintf(out + k, "%zx\r\n", m);
		memcpy(out + k, body + i, m);
		k += m;
		k += (size_t)sprintf(out + k, "\r\n");
	}
	return k + (size_t)sprintf(out + k, "0\r\n\r\n");
}

/* The body "<<" FORM ">>" with the form's range starred. */
static size_t body_of(const struct form *f, bool starred, char *out)
{
	memcpy(out, "<<", 2);
	memcpy(out + 2, f->text, f->n);
	if (starred)
		memset(out + 2 + f->lo, '*', f->hi - f->lo);
	memcpy(out + 2 + f->n, ">>", 2);
	return f->n + 4;
}

static const char head_cl[] = "HTTP/1.1 200 OK\r\nContent-Length: %zu\r\n\r\n";
static const char head_ch[] = "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n";

/* Every form, as a Content-Length body read in pieces of 1 .. n+6 bytes
 * (each split position of the TCP segments), and as a chunked body of
 * chunks of 1 .. n+6 bytes read in pieces of 1, 5 and all at once. The
 * output is the input with exactly the form's range starred. */
static unsigned every_split(bool plain)
{
	static char wire[OUT_MAX], want[OUT_MAX], out[OUT_MAX];
	struct form f[32];
	size_t nf = forms(f);
	unsigned bad = 0;

	for (size_t i = 0; i < nf; i++) {
		unsigned before = bad;

		char body[512], sbody[512];
		size_t bn = body_of(&f[i], false, body), wn, on, sn;
		unsigned long count;

		body_of(&f[i], true, sbody);
		for (size_t rs = 1; rs <= bn + 60; rs++) {
			wn = (size_t)sprintf(wire, head_cl, bn);
			memcpy(wire + wn, body, bn);
			memcpy(want, wire, wn);
			memcpy(want + wn, sbody, bn);
			wn += bn;
			if (stream(plain, true, true, wire, wn, rs, out, &on, &count) != 0 ||
			    on != wn || memcmp(out, want, wn) != 0 || count != 1) {
				bad++;
				if (!plain)
					cr_log_error("%s, Content-Length, reads of %zu: %.*s",
						     f[i].name, rs, (int)on, out);
				break;
			}
		}
		for (size_t cs = 1; cs <= bn + 6; cs++)
			for (size_t rs = 1; rs <= OUT_MAX; rs = rs == 1 ? 5 : OUT_MAX) {
				wn = chunked(head_ch, body, bn, cs, wire);
				sn = chunked(head_ch, sbody, bn, cs, want);
				if (stream(plain, true, true, wire, wn, rs, out, &on, &count) !=
					0 ||
				    on != sn || memcmp(out, want, sn) != 0 || count != 1) {
					bad++;
					if (!plain)
						cr_log_error(
						    "%s, chunks of %zu, reads of %zu: %.*s",
						    f[i].name, cs, rs, (int)on, out);
					cs = bn + 6;
					break;
				}
				if (rs == OUT_MAX)
					break;
			}
		bad = before + (bad > before); /* forms that failed a check */
	}
	return bad;
}

Test(redact, every_form_at_every_split, .init = setup, .fini = teardown)
{
	cr_assert_eq(every_split(false), 0);
}

/* The twin: the plain scan (--weaken redact-plain-only) fails the same
 * checks for every form but the raw one: they see a leak when there is
 * one. (Its raw form still fails when the secret is split by chunks.) */
Test(redact, weakened_twin_plain_scan_leaks, .init = setup, .fini = teardown)
{
	struct form f[32];
	size_t nf = forms(f);

	cr_assert_eq(every_split(true), nf, "the plain scan passed a check it must fail");
}

/* The headers an upstream echoes a token in, in the forms they use. */
Test(redact, headers, .init = setup, .fini = teardown)
{
	static char wire[4096], out[OUT_MAX];
	char b64[64], pct[128];
	size_t on, n;
	unsigned long count;

	enc_b64(SECRET, strlen(SECRET), false, b64);
	b64[16] = '\0';
	enc_pct(SECRET, strlen(SECRET), 2, pct);
	pct[enc_pct(SECRET, strlen(SECRET), 2, pct)] = '\0';
	n = (size_t)snprintf(
	    wire, sizeof(wire),
	    "HTTP/1.1 302 Found\r\nSet-Cookie: t=%s; Path=/\r\nLocation: "
	    "/cb?token=%s&x=1\r\nWWW-Authenticate: Bearer error=\"invalid_token\", "
	    "token=\"%s\"\r\nContent-Length: 0\r\n\r\n",
	    b64, pct, SECRET);
	for (size_t rs = 1; rs <= n; rs += 7) {
		cr_assert_eq(stream(false, true, true, wire, n, rs, out, &on, &count), 0);
		cr_assert_eq(on, n);
		out[on] = '\0';
		cr_assert_eq(count, 3, "%zu: %s", rs, out);
		cr_assert(strstr(out, "Set-Cookie: t=****************; Path=/\r\n"), "%s", out);
		cr_assert(!strstr(out, SECRET) && !strstr(out, "Sk%7E"), "%s", out);
		cr_assert(strstr(out, "&x=1\r\n") && strstr(out, "Content-Length: 0\r\n\r\n"));
	}
	/* The twin: the plain scan redacts only the raw one. */
	stream(true, true, true, wire, n, n, out, &on, &count);
	cr_assert_eq(count, 1);
}

/* A chunk extension is starred whole; a trailer is scanned; framing stays. */
Test(redact, chunk_extensions_and_trailers, .init = setup, .fini = teardown)
{
	static const char wire[] = "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"
				   "4;t=" SECRET "\r\nabcd\r\n0\r\nX-Echo: " SECRET "\r\n\r\n";
	static char out[OUT_MAX];
	size_t on;
	unsigned long count;

	cr_assert_eq(stream(false, true, true, wire, strlen(wire), 3, out, &on, &count), 0);
	out[on] = '\0';
	cr_assert_str_eq(out, "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"
			      "4;**************\r\nabcd\r\n0\r\nX-Echo: ************\r\n\r\n");
}

/* What cannot be framed, or is coded, is refused for an audience. */
Test(redact, refusals, .init = setup, .fini = teardown)
{
	static const struct {
		const char *wire;
		bool strict;
		long r;
	} cases[] = {
	    {"HTTP/1.1 200 OK\r\nContent-Encoding: gzip\r\nContent-Length: 3\r\n\r\nabc", true,
	     -EPROTO},
	    {"HTTP/1.1 200 OK\r\nContent-Encoding: br\r\n\r\nabc", true, -EPROTO},
	    {"HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip, chunked\r\n\r\n0\r\n\r\n", true, -EPROTO},
	    {"HTTP/1.1 200 OK\r\nContent-Encoding: identity\r\nContent-Length: 1\r\n\r\na", true,
	     0},
	    /* not an audience: passes, scanned as it is */
	    {"HTTP/1.1 200 OK\r\nContent-Encoding: gzip\r\nContent-Length: 3\r\n\r\nabc", false, 0},
	    {"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nContent-Length: 3\r\n\r\n", false,
	     -EINVAL},
	    {"HTTP/1.1 200 OK\r\nContent-Length: 1\r\nContent-Length: 1\r\n\r\na", false, -EINVAL},
	    {"HTTP/1.1 200 OK\r\nContent-Length: x\r\n\r\na", false, -EINVAL},
	    {"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n1\nA\r\n0\r\n\r\n", false,
	     -EINVAL},
	    {"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nz\r\n", false, -EINVAL},
	    {"HTTP/1.1 200 OK\r\nNo colon\r\n\r\n", false, -EINVAL},
	    {"HTTP/1.1 200 OK\r\nTransfer-Encoding : chunked\r\n\r\n", false, -EINVAL},
	    {"HTTP/1.1 200 OK\r\nX: a\r\n folded\r\n\r\n", false, -EINVAL},
	    {"HTTP/1.1 200 OK\r\nX: a\rb\r\n\r\n", false, -EINVAL},
	    {"HTTP/1.1 200 OK\nX: y\r\n\r\n", false, -EINVAL},
	    {"FTP 200\r\n\r\n", false, -EINVAL},
	};
	static char out[OUT_MAX];
	size_t on;
	unsigned long count;

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		cr_expect_eq(stream(false, true, cases[i].strict, cases[i].wire,
				    strlen(cases[i].wire), 4, out, &on, &count),
			     cases[i].r, "%zu", i);
}

/* Nothing held past the end of a body (a keep-alive client waits for
 * it), a prefix of a secret released at the end, a head held whole. */
Test(redact, holds, .init = setup, .fini = teardown)
{
	struct redact r;
	char a[] = "HTTP/1.1 200 OK\r\nContent-Length: 6\r\n\r\nxSk~>?";
	char b[] = "HTTP/1.1 200 OK\r\nContent-Length: 40\r\n\r\nxSk~>?";
	char c[] = "HTTP/1.1 200 OK\r\nContent-Le";
	char d[] = "HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 200 OK\r\nCont";
	char raw[] = "..U2t+Pj83cS9aeCFl"; /* base64 of the secret, no framing */

	cr_assert_eq(redact_init(&r, &cr, true, false, true), 0);
	cr_assert_eq(redact_scan(&r, a, strlen(a), 0, false), 0);
	cr_assert_str_eq(a, "HTTP/1.1 200 OK\r\nContent-Length: 6\r\n\r\nxSk~>?");
	redact_free(&r);
	cr_assert_eq(redact_init(&r, &cr, true, false, true), 0);
	cr_assert_eq(redact_scan(&r, b, strlen(b), 0, false), 5, "a secret's prefix is held");
	redact_free(&r);
	cr_assert_eq(redact_init(&r, &cr, true, false, true), 0);
	cr_assert_eq(redact_scan(&r, c, strlen(c), 0, false), (long)strlen(c));
	redact_free(&r);
	/* A 1xx goes on at once (a client may wait for it), the rest held. */
	cr_assert_eq(redact_init(&r, &cr, true, false, true), 0);
	cr_assert_eq(redact_scan(&r, d, strlen(d), 0, false), (long)strlen(d) - 25);
	redact_free(&r);
	/* A HEAD's response has no body, whatever its Content-Length. */
	cr_assert_eq(redact_init(&r, &cr, true, true, true), 0);
	cr_assert_eq(redact_scan(&r, b, strlen(b) - 6, 0, false), 0);
	redact_free(&r);
	/* A stream that is no HTTP (a tunnel): every form, no framing. */
	cr_assert_eq(redact_init(&r, &cr, false, false, true), 0);
	cr_assert_eq(redact_scan(&r, raw, strlen(raw), 0, true), 0);
	cr_assert_str_eq(raw, "..****************");
	redact_free(&r);
}

/* A match the buffer cannot hold: the loop sees the whole buffer held
 * (and cuts the connection), never a hang or a partial leak. */
Test(redact, a_hold_of_the_whole_buffer_is_seen, .init = setup, .fini = teardown)
{
	static char wire[OUT_MAX], out[OUT_MAX], body[8];
	size_t on, wn;
	unsigned long count;

	memcpy(body, SECRET, 7); /* a prefix, then the chunks go on for ever */
	wn = (size_t)sprintf(wire, "%s", head_ch);
	for (size_t i = 0; i < 7; i++)
		wn += (size_t)sprintf(wire + wn, "1;%04000d\r\n%c\r\n", 0, body[i]);
	cr_assert_eq(stream(false, true, true, wire, wn, 4096, out, &on, &count), -ENOBUFS);
	for (size_t i = 0; i + strlen("Sk~>") <= on; i++)
		cr_assert(memcmp(out + i, "Sk~>", 4) != 0);
}

/* A body longer than the mediator's buffer, the secret (as it is, and in
 * base64) straddling the buffer's end at each offset, chunked in chunks of
 * 1000 bytes or not: redacted all the same. */
Test(redact, across_the_buffers_end, .init = setup, .fini = teardown)
{
	static char body[3 * BUFSZ], wire[4 * BUFSZ], want[4 * BUFSZ], out[4 * BUFSZ];
	static const char *const forms_[] = {SECRET, "U2t+Pj83cS9aeCFl"};
	size_t on, wn, sn;
	unsigned long count;

	for (size_t fi = 0; fi < 2; fi++) {
		size_t n = strlen(forms_[fi]);

		for (size_t at = BUFSZ - 100 - n; at < BUFSZ + 10; at++)
			for (int ch = 0; ch < 2; ch++) {
				memset(body, 'a', sizeof(body));
				memcpy(body + at, forms_[fi], n);
				if (ch) {
					wn = chunked(head_ch, body, sizeof(body), 1000, wire);
					memset(body + at, '*', n);
					sn = chunked(head_ch, body, sizeof(body), 1000, want);
				} else {
					wn = (size_t)sprintf(wire, head_cl, sizeof(body));
					memcpy(want, wire, wn);
					memcpy(wire + wn, body, sizeof(body));
					memset(body + at, '*', n);
					memcpy(want + wn, body, sizeof(body));
					wn += sizeof(body);
					sn = wn;
				}
				cr_assert_eq(
				    stream(false, true, true, wire, wn, 4096, out, &on, &count), 0);
				cr_assert(on == sn && memcmp(out, want, sn) == 0 && count == 1,
					  "form %zu at %zu, chunked %d", fi, at, ch);
			}
	}
}
