/* Unit tests for the evidence log (evidence/): HMAC-SHA-256 against RFC
 * 4231, and the verifier against every way a log can be changed after the
 * fact: a byte edited at every position, a line dropped, moved, replayed or
 * taken from another session, a key change, a cut-off tail. */
#include <criterion/criterion.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "../../evidence/evidence.h"
#include "unit.h"

TestSuite(evidence, .fini = unit_leak_check);

static void hexof(const unsigned char *b, size_t n, char *out)
{
	for (size_t i = 0; i < n; i++)
		sprintf(out + 2 * i, "%02x", b[i]);
}

Test(evidence, hmac_rfc4231)
{
	unsigned char key[131], mac[32];
	char h[65];

	/* Test case 1 */
	memset(key, 0x0b, 20);
	evidence_hmac(key, 20, "Hi There", 8, mac);
	hexof(mac, 32, h);
	cr_assert_str_eq(h, "b0344c61d8db38535ca8afceaf0bf12b881dc200c9833da726e9376c2e32cff7");
	/* Test case 2 */
	evidence_hmac((const unsigned char *)"Jefe", 4, "what do ya want for nothing?", 28, mac);
	hexof(mac, 32, h);
	cr_assert_str_eq(h, "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843");
	/* Test case 6: a key longer than the block */
	memset(key, 0xaa, 131);
	evidence_hmac(key, 131, "Test Using Larger Than Block-Size Key - Hash Key First", 54, mac);
	hexof(mac, 32, h);
	cr_assert_str_eq(h, "60e431591ee0b67f0d8a26aacbf5b77f8e0bc6213728c5140546040f0ee37f54");
}

static const unsigned char key[EVIDENCE_KEY_LEN] = {1, 2, 3, 4, 5, 6, 7, 8};

/* A log of n events of session s, its text (malloc'd) and checkpoint. */
static char *make(const char *s, int n, size_t *len, uint64_t *seq, char head[65])
{
	struct evidence_log log;
	int fd = memfd_create("ev", 0);
	char *text;
	off_t size;

	cr_assert_geq(fd, 0);
	cr_assert_eq(evidence_open(&log, fd, key, s, "supervisor"), 0);
	for (int i = 0; i < n; i++) {
		char f[64];

		snprintf(f, sizeof(f), "\"n\":%d,\"what\":\"event \\\"%d\\\"\"", i, i);
		evidence_append(&log, i ? "init" : "start", f);
	}
	size = lseek(fd, 0, SEEK_END);
	text = calloc(1, (size_t)size + 1);
	cr_assert_eq(pread(fd, text, (size_t)size, 0), size);
	close(fd);
	*len = (size_t)size;
	*seq = log.seq;
	memcpy(head, log.head, 65);
	return text;
}

static enum evidence_verdict verdict(const char *t, size_t len, const char *s, uint64_t seq,
				     const char *head, struct evidence_report *r)
{
	evidence_verify(t, len, key, s, seq, head, r);
	return r->verdict;
}

Test(evidence, a_log_verifies_complete)
{
	struct evidence_report r;
	uint64_t seq;
	char head[65];
	size_t len;
	char *t = make("sess1", 5, &len, &seq, head);

	cr_assert_eq(seq, 5);
	cr_assert_eq(verdict(t, len, "sess1", seq, head, &r), EVIDENCE_COMPLETE, "%s",
		     r.reasons[0]);
	cr_assert_eq(r.lines, 5);
	cr_assert_str_eq(r.head, head);
	cr_assert(strstr(t, "\"what\":\"event \\\"1\\\"\""), "fields are kept as given");
	free(t);
}

/* The exhaustive property: every single-byte change anywhere is seen. */
Test(evidence, every_byte_edit_is_detected)
{
	struct evidence_report r;
	uint64_t seq;
	char head[65];
	size_t len;
	char *t = make("sess1", 4, &len, &seq, head);

	for (size_t i = 0; i < len; i++) {
		char was = t[i];

		t[i] = (char)(was == 'a' ? 'b' : was == '\n' ? ' ' : was ^ 1);
		cr_assert_eq(verdict(t, len, "sess1", seq, head, &r), EVIDENCE_INCOMPLETE,
			     "an edit at byte %zu went unseen", i);
		t[i] = was;
	}
	free(t);
}

static size_t line_start(const char *t, int k)
{
	size_t off = 0;

	while (k-- > 0)
		off = (size_t)(strchr(t + off, '\n') - t) + 1;
	return off;
}

Test(evidence, dropped_moved_replayed_and_cut_lines)
{
	struct evidence_report r;
	uint64_t seq;
	char head[65], *u;
	size_t len, a, b, c;
	char *t = make("sess1", 4, &len, &seq, head);

	a = line_start(t, 1);
	b = line_start(t, 2);
	c = line_start(t, 3);
	/* line 2 dropped */
	u = calloc(1, len + 1);
	memcpy(u, t, a);
	memcpy(u + a, t + b, len - b);
	cr_assert_eq(verdict(u, len - (b - a), "sess1", seq, head, &r), EVIDENCE_INCOMPLETE);
	cr_assert(strstr(r.reasons[0], "does not follow"), "%s", r.reasons[0]);
	/* lines 2 and 3 swapped */
	memcpy(u, t, a);
	memcpy(u + a, t + b, c - b);
	memcpy(u + a + (c - b), t + a, b - a);
	memcpy(u + c, t + c, len - c);
	cr_assert_eq(verdict(u, len, "sess1", seq, head, &r), EVIDENCE_INCOMPLETE);
	/* line 1 replayed at the end */
	free(u);
	u = calloc(1, len + a + 1);
	memcpy(u, t, len);
	memcpy(u + len, t, a);
	cr_assert_eq(verdict(u, len + a, "sess1", 0, NULL, &r), EVIDENCE_INCOMPLETE);
	/* the last line cut off: only the checkpoint can tell */
	cr_assert_eq(verdict(t, c, "sess1", 0, NULL, &r), EVIDENCE_COMPLETE,
		     "without a witness a clean prefix looks whole");
	cr_assert_eq(verdict(t, c, "sess1", seq, head, &r), EVIDENCE_INCOMPLETE);
	cr_assert(strstr(r.reasons[0], "checkpoint"), "%s", r.reasons[0]);
	/* half a line */
	cr_assert_eq(verdict(t, len - 5, "sess1", 0, NULL, &r), EVIDENCE_INCOMPLETE);
	free(u);
	free(t);
}

Test(evidence, another_session_or_key)
{
	struct evidence_report r;
	unsigned char other[EVIDENCE_KEY_LEN] = {9};
	uint64_t seq;
	char head[65];
	size_t len;
	char *t = make("sess1", 3, &len, &seq, head);

	cr_assert_eq(verdict(t, len, "sess2", 0, NULL, &r), EVIDENCE_INCOMPLETE);
	evidence_verify(t, len, other, "sess1", 0, NULL, &r);
	cr_assert_eq(r.verdict, EVIDENCE_INCOMPLETE);
	cr_assert(strstr(r.reasons[0], "MAC"), "%s", r.reasons[0]);
	cr_assert_eq(verdict("", 0, "sess1", 0, NULL, &r), EVIDENCE_INCOMPLETE, "empty");
	free(t);
}

/* A write that fails is a drop, and the next line says so. */
Test(evidence, drops_are_reported)
{
	struct evidence_log log;
	struct evidence_report r;
	int fd = memfd_create("ev", 0);
	char text[8192];
	ssize_t n;

	cr_assert_eq(evidence_open(&log, fd, key, "s", "supervisor"), 0);
	evidence_append(&log, "start", "");
	log.fd = open("/dev/null", O_RDONLY | O_CLOEXEC); /* EBADF: the next write fails */
	evidence_append(&log, "lost", "");
	cr_assert_eq(log.drops, 1);
	close(log.fd);
	log.fd = fd;
	evidence_append(&log, "end", "");
	n = pread(fd, text, sizeof(text), 0);
	cr_assert_gt(n, 0);
	cr_assert_eq(verdict(text, (size_t)n, "s", log.seq, log.head, &r), EVIDENCE_INCOMPLETE);
	cr_assert(strstr(r.reasons[0], "could not be written"), "%s", r.reasons[0]);
	close(fd);
}

Test(evidence, json_strings)
{
	char buf[64];

	evidence_json_string("a\"b\\c\n\x01", buf, sizeof(buf));
	cr_assert_str_eq(buf, "\"a\\\"b\\\\c\\u000a\\u0001\"");
	evidence_json_string("0123456789012345678901234567890", buf, 16);
	cr_assert_eq(buf[strlen(buf) - 1], '"', "cut, still a string: %s", buf);
}
