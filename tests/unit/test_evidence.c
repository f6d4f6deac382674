/* Unit tests for the evidence log (evidence/): HMAC-SHA-256 against RFC
 * 4231, and the verifier against every way a log can be changed after the
 * fact: a byte edited at every position, a line dropped, moved, replayed or
 * taken from another session, a key change, a cut-off tail. */
#include <criterion/criterion.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/resource.h>
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

/* A write cut short part way (here RLIMIT_FSIZE: the file may grow by 100
 * bytes, less than a line; tmpfs's ENOSPC after a page's rest does the
 * same) leaves no half line: the log is cut back, the next line starts a
 * line of its own and reports the drop; every line still verifies. The
 * twin is the byte count: the cut line did reach the file first. */
Test(evidence, a_line_cut_short_is_taken_back)
{
	struct evidence_log log;
	struct evidence_report r;
	struct rlimit old, lim;
	int fd = memfd_create("ev", 0);
	char text[8192];
	off_t before;
	ssize_t n;

	cr_assert_eq(evidence_open(&log, fd, key, "s", "supervisor"), 0);
	evidence_append(&log, "start", "");
	before = lseek(fd, 0, SEEK_END);
	cr_assert_eq(getrlimit(RLIMIT_FSIZE, &old), 0);
	lim = old;
	lim.rlim_cur = (rlim_t)before + 100;
	signal(SIGXFSZ, SIG_IGN);
	cr_assert_eq(setrlimit(RLIMIT_FSIZE, &lim), 0);
	cr_assert_eq(write(fd, "x", 1), 1, "the limit lets a little through");
	cr_assert_eq(ftruncate(fd, before), 0);
	evidence_append(&log, "lost", "\"pad\":\"0123456789012345678901234567890123456789\"");
	cr_assert_eq(setrlimit(RLIMIT_FSIZE, &old), 0);
	signal(SIGXFSZ, SIG_DFL);
	cr_assert_eq(log.drops, 1);
	cr_assert_eq(lseek(fd, 0, SEEK_END), before, "half a line was left");
	evidence_append(&log, "end", "");
	n = pread(fd, text, sizeof(text), 0);
	cr_assert_gt(n, 0);
	cr_assert_eq(verdict(text, (size_t)n, "s", log.seq, log.head, &r), EVIDENCE_INCOMPLETE);
	cr_assert_eq(r.n_reasons, 1, "%s", r.reasons[0]);
	cr_assert(strstr(r.reasons[0], "line 2: 1 event(s) before it could not be written"), "%s",
		  r.reasons[0]);
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

/* A gap is named by its sequence numbers, and a tail cut off against the
 * checkpoint too. */
Test(evidence, gaps_are_named)
{
	struct evidence_report r;
	uint64_t seq;
	char head[65], *u;
	size_t len, a, c;
	char *t = make("sess1", 6, &len, &seq, head);

	a = line_start(t, 2);
	c = line_start(t, 4);
	u = calloc(1, len + 1);
	memcpy(u, t, a);
	memcpy(u + a, t + c, len - c); /* lines 3 and 4 out */
	cr_assert_eq(verdict(u, len - (c - a), "sess1", seq, head, &r), EVIDENCE_INCOMPLETE);
	cr_assert_eq(r.n_gaps, 1);
	cr_assert_eq(r.gaps[0].from, 3);
	cr_assert_eq(r.gaps[0].to, 4);
	cr_assert_eq(r.missing, 2);
	/* the last two cut off: the checkpoint's range */
	cr_assert_eq(verdict(t, c, "sess1", seq, head, &r), EVIDENCE_INCOMPLETE);
	cr_assert_eq(r.n_gaps, 1);
	cr_assert_eq(r.gaps[0].from, 5);
	cr_assert_eq(r.gaps[0].to, 6);
	cr_assert_eq(r.last_seq, 4);
	cr_assert_str_eq(r.source, "supervisor");
	cr_assert(r.sequenced);
	free(u);
	free(t);
}

/* Two epochs in one log: the source restarted, and what it did in
 * between is unknown, even when every line is genuine. */
Test(evidence, an_epoch_change_is_incomplete)
{
	struct evidence_log log;
	struct evidence_report r;
	int fd = memfd_create("ev", 0);
	char text[8192];
	ssize_t n;

	cr_assert_eq(evidence_open(&log, fd, key, "s", "mediator"), 0);
	evidence_append(&log, "started", "");
	evidence_append(&log, "admission", "");
	memcpy(log.epoch, "00000000000000000000000000000000", 33); /* a restart */
	evidence_append(&log, "admission", "");
	n = pread(fd, text, sizeof(text), 0);
	cr_assert_gt(n, 0);
	cr_assert_eq(verdict(text, (size_t)n, "s", log.seq, log.head, &r), EVIDENCE_INCOMPLETE);
	cr_assert(strstr(r.reasons[0], "a new epoch"), "%s", r.reasons[0]);
	cr_assert_eq(r.n_reasons, 1, "only the epoch: %s", r.reasons[1]);
	close(fd);
}

/* --weaken no-seq: lines MAC'd alone, and a removed line is not seen
 * (the weakened twin of dropped_moved_replayed_and_cut_lines). */
Test(evidence, unsequenced_logs_hide_a_removed_line)
{
	struct evidence_log log;
	struct evidence_report r;
	int fd = memfd_create("ev", 0);
	char text[8192], *u;
	size_t a, b;
	ssize_t n;

	cr_assert_eq(evidence_open(&log, fd, key, "s", "supervisor"), 0);
	log.unsequenced = true;
	for (int i = 0; i < 4; i++)
		evidence_append(&log, "init", "");
	n = pread(fd, text, sizeof(text) - 1, 0);
	cr_assert_gt(n, 0);
	text[n] = '\0';
	cr_assert_null(strstr(text, "\"seq\""));
	cr_assert_eq(verdict(text, (size_t)n, "s", 0, log.head, &r), EVIDENCE_COMPLETE, "%s",
		     r.reasons[0]);
	cr_assert(!r.sequenced);
	a = line_start(text, 1);
	b = line_start(text, 2);
	u = calloc(1, (size_t)n + 1);
	memcpy(u, text, a);
	memcpy(u + a, text + b, (size_t)n - b);
	cr_assert_eq(verdict(u, (size_t)n - (b - a), "s", 0, log.head, &r), EVIDENCE_COMPLETE,
		     "unsequenced, a removed line is unseen");
	/* an edit is still seen (the MAC) */
	u[10] ^= 1;
	cr_assert_eq(verdict(u, (size_t)n - (b - a), "s", 0, log.head, &r), EVIDENCE_INCOMPLETE);
	free(u);
	close(fd);
}

/* The record's checkpoints, and the supervisor's checkpoint events. */
Test(evidence, the_witness)
{
	struct evidence_witness w;
	struct evidence_checkpoint ev[4];
	static const char h[] = "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa";
	char *rec = NULL, *log = NULL;

	cr_assert_gt(
	    asprintf(&rec,
		     "{\"session\":{\"id\":\"s1\"},\"evidence\":{\"log\":\"/l\",\"seq\":3,"
		     "\"head\":\"%s\",\"sequenced\":true,\"sources\":["
		     "{\"source\":\"supervisor\",\"log\":\"/l\",\"epoch\":\"e1\",\"seq\":3,"
		     "\"head\":\"%s\",\"drops\":0},"
		     "{\"source\":\"mediator\",\"log\":\"/m\",\"epoch\":\"e2\",\"seq\":7,"
		     "\"head\":\"%s\"}]}}",
		     h, h, h),
	    0);
	cr_assert_eq(evidence_witness_parse(rec, strlen(rec), &w), 0);
	cr_assert_str_eq(w.session, "s1");
	cr_assert_eq(w.n, 2);
	cr_assert_str_eq(w.cp[1].source, "mediator");
	cr_assert_eq(w.cp[1].seq, 7);
	cr_assert(w.sequenced);
	free(rec);
	/* an old record: the supervisor's alone */
	cr_assert_gt(asprintf(&rec,
			      "{\"session\":{\"id\":\"s1\"},\"evidence\":{\"log\":\"/l\",\"seq\":3,"
			      "\"head\":\"%s\"}}",
			      h),
		     0);
	cr_assert_eq(evidence_witness_parse(rec, strlen(rec), &w), 0);
	cr_assert_eq(w.n, 1);
	cr_assert_str_eq(w.cp[0].source, "supervisor");
	free(rec);
	/* bad shapes */
	static const char *const bad[] = {
	    "{}",
	    "{\"session\":{\"id\":\"s\"}}",
	    "{\"session\":{\"id\":\"s\"},\"evidence\":{\"sources\":[]}}",
	    "{\"session\":{\"id\":\"s\"},\"evidence\":{\"sources\":[{\"source\":\"x\"}]}}",
	    "{\"session\":{\"id\":\"s\"},\"evidence\":{\"sources\":[{\"source\":\"x\",\"log\":"
	    "\"/l\",\"seq\":-1,\"head\":\"aa\"}]}}",
	    "{\"session\":{\"id\":\"s\"},\"evidence\":{\"log\":\"/l\",\"seq\":1.5}}",
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		cr_assert_eq(evidence_witness_parse(bad[i], strlen(bad[i]), &w), -EINVAL, "%s",
			     bad[i]);
	cr_assert_gt(asprintf(&log,
			      "{\"type\":\"init\"}\n{\"type\":\"checkpoint\",\"of\":\"mediator\","
			      "\"log\":\"/m\",\"of_epoch\":\"e2\",\"last_seq\":7,\"head\":\"%s\"}\n"
			      "not json\n",
			      h),
		     0);
	cr_assert_eq(evidence_checkpoint_events(log, strlen(log), ev, 4), 1);
	cr_assert_str_eq(ev[0].source, "mediator");
	cr_assert_str_eq(ev[0].epoch, "e2");
	cr_assert_eq(ev[0].seq, 7);
	free(log);
}

/* The second witness's judgement: which checkpoint is not where the log
 * ends (its last seq and head as read). */
Test(evidence, the_second_witness_judgement)
{
	static const char a[] = "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa";
	static const char b[] = "bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb";
	struct evidence_checkpoint rec = {.source = "supervisor", .epoch = "e1", .seq = 5};
	struct evidence_checkpoint sec = rec;
	static struct evidence_witness wit = {.n = 1};

	memcpy(rec.head, a, 65);
	memcpy(sec.head, a, 65);
	cr_assert_eq(evidence_witness_judge(5, a, true, &rec, &sec), EVIDENCE_AGREE);
	cr_assert_eq(evidence_witness_judge(5, a, true, &rec, NULL), EVIDENCE_SECOND_LACKS);
	/* the second says another seq, another head, another epoch */
	sec.seq = 4;
	cr_assert_eq(evidence_witness_judge(5, a, true, &rec, &sec), EVIDENCE_SECOND_DIFFERS);
	sec.seq = 5;
	memcpy(sec.head, b, 65);
	cr_assert_eq(evidence_witness_judge(5, a, true, &rec, &sec), EVIDENCE_SECOND_DIFFERS);
	memcpy(sec.head, a, 65);
	snprintf(sec.epoch, sizeof(sec.epoch), "e2");
	cr_assert_eq(evidence_witness_judge(5, a, true, &rec, &sec), EVIDENCE_SECOND_DIFFERS);
	snprintf(sec.epoch, sizeof(sec.epoch), "e1");
	/* the record is the odd one */
	rec.seq = 3;
	cr_assert_eq(evidence_witness_judge(5, a, true, &rec, &sec), EVIDENCE_RECORD_DIFFERS);
	/* the log ends where neither says (its tail cut after both) */
	cr_assert_eq(evidence_witness_judge(2, b, true, &rec, &sec), EVIDENCE_NEITHER_MATCHES);
	/* unsequenced: the head alone counts */
	cr_assert_eq(evidence_witness_judge(0, a, false, &rec, &sec), EVIDENCE_AGREE);
	/* find */
	wit.cp[0] = sec;
	cr_assert_eq(evidence_witness_find(&wit, "supervisor"), &wit.cp[0]);
	cr_assert_null(evidence_witness_find(&wit, "mediator"));
}

/* The packet's allowlist: listed fields keep plain values; free text,
 * unlisted fields and nested values of unlisted fields become keyed
 * digests. */
Test(evidence, export_allowlist)
{
	static const char line[] =
	    "{\"seq\":3,\"type\":\"admission\",\"decision\":\"refused-no-rule\",\"rule\":-1,"
	    "\"name\":\"secret-marker.exfil.test\",\"admission\":\"a1b2\","
	    "\"message\":\"Jane Roe\",\"time\":\"2026-12-01T08:34:42.618Z\","
	    "\"session\":\"has space\",\"x-chosen\":{\"deep\":\"secret-marker\"}}";
	char *out = NULL;

	cr_assert_eq(evidence_export_json(line, strlen(line), key, &out), 0);
	cr_assert(strstr(out, "\"seq\":3"), "%s", out);
	cr_assert(strstr(out, "\"decision\":\"refused-no-rule\""), "%s", out);
	cr_assert(strstr(out, "\"rule\":-1"), "%s", out);
	cr_assert(strstr(out, "\"admission\":\"a1b2\""), "%s", out);
	cr_assert(strstr(out, "\"time\":\"2026-12-01T08:34:42.618Z\""), "%s", out);
	cr_assert_null(strstr(out, "secret-marker"), "%s", out);
	cr_assert_null(strstr(out, "Jane"), "%s", out);
	cr_assert_null(strstr(out, "x-chosen"), "an unlisted field's name is dropped: %s", out);
	cr_assert_null(strstr(out, "has space"), "a listed field with free text: %s", out);
	cr_assert(strstr(out, "\"unlisted\":[{\"hmac\":\""), "%s", out);
	cr_assert(strstr(out, "\"len\":24"), "the name's length: %s", out);
	free(out);
	cr_assert_eq(evidence_export_json("[1]", 3, key, &out), -EINVAL);
	cr_assert_eq(evidence_export_json("nope", 4, key, &out), -EINVAL);
	/* the same value, the same digest: a reviewer can link without
	 * reading it */
	{
		char *a = NULL, *b = NULL;

		cr_assert_eq(evidence_export_json("{\"name\":\"x.test\"}", 17, key, &a), 0);
		cr_assert_eq(evidence_export_json("{\"name\":\"x.test\"}", 17, key, &b), 0);
		cr_assert_str_eq(a, b);
		free(a);
		free(b);
	}
}

static const char *fake_env(const char *name)
{
	return strcmp(name, "FROM_ENV") == 0 ? "env-value-1234" : NULL;
}

Test(evidence, export_markers)
{
	struct evidence_markers m = {0};
	static const char secrets[] = "# comment\nTOKEN=tok-abcdef\nSHORT=ab\n\nFROM_ENV\n";
	static const char deny[] = "Jane Roe\r\nid\n";

	cr_assert_eq(evidence_markers_add_text(&m, secrets, strlen(secrets), true, fake_env), 0);
	cr_assert_eq(evidence_markers_add_text(&m, deny, strlen(deny), false, NULL), 0);
	cr_assert_eq(evidence_markers_add(&m, "quo\"te", 6), 0);
	cr_assert_eq(m.n, 4, "tok-abcdef, env-value-1234, Jane Roe, quo\"te");
	cr_assert_eq(m.skipped, 2, "ab and id are too short to scan");
	cr_assert_eq(evidence_markers_scan(&m, "xx tok-abcdef", 13), 0);
	cr_assert_eq(evidence_markers_scan(&m, "env-value-1234", 14), 1);
	cr_assert_eq(evidence_markers_scan(&m, "{\"m\":\"Jane Roe\"}", 16), 2);
	cr_assert_eq(evidence_markers_scan(&m, "{\"m\":\"quo\\\"te\"}", 15), 3, "escaped");
	cr_assert_eq(evidence_markers_scan(&m, "clean", 5), -1);
	evidence_markers_free(&m);
	/* without lookup, a NAME alone is nothing */
	cr_assert_eq(evidence_markers_add_text(&m, secrets, strlen(secrets), true, NULL), 0);
	cr_assert_eq(m.n, 1);
	evidence_markers_free(&m);
}

/* HB-17's join: the claim from the mediator's outcome lines, the effect
 * from the receiver's ledger, apart; the weakened way takes the claim. */
Test(evidence, reconcile_claims_with_effects)
{
	static const char log[] =
	    "{\"event\":\"decision\",\"admission\":\"s-1-1\",\"decision\":\"allowed\"}\n"
	    "{\"event\":\"outcome\",\"admission\":\"s-1-1\",\"status\":200}\n"
	    "{\"event\":\"outcome\",\"admission\":\"s-1-2\",\"status\":200}\n"
	    "{\"event\":\"outcome\",\"admission\":\"s-1-3\",\"status\":500}\n"
	    "{\"event\":\"outcome\",\"admission\":\"s-1-4\",\"status\":500}\n"
	    "{\"event\":\"outcome\",\"admission\":\"s-1-5\",\"status\":0}\n"
	    "not json\n{\"event\":\"outcome\",\"admission\":\"s-1-6\",\"status\":\"x\"}\n";
	static const char ledger[] = "{\"admission\":\"s-1-1\",\"effect\":true}\n"
				     "{\"admission\":\"s-1-2\",\"effect\":false}\n"
				     "{\"admission\":\"s-1-3\",\"effect\":true}\n"
				     "{\"admission\":\"s-1-4\",\"effect\":false}\n"
				     "{\"admission\":\"nope\",\"effect\":true}\n";
	struct evidence_reconciled *r = malloc(sizeof(*r));

	evidence_reconcile(log, strlen(log), ledger, strlen(ledger), false, r);
	cr_assert_eq(r->n, 5, "the status must be a number");
	cr_assert_eq(r->ops[0].d, EVIDENCE_MATCHED);
	cr_assert_eq(r->ops[1].d, EVIDENCE_CLAIMED_SUCCESS_NO_EFFECT);
	cr_assert_eq(r->ops[2].d, EVIDENCE_CLAIMED_FAILURE_EFFECT);
	cr_assert_eq(r->ops[3].d, EVIDENCE_MATCHED);
	cr_assert_eq(r->ops[4].d, EVIDENCE_EFFECT_UNKNOWN, "the ledger is silent on it");
	cr_assert(!r->ops[4].claimed_ok, "no response is no success");
	/* the receiver down: every effect unknown */
	evidence_reconcile(log, strlen(log), NULL, 0, false, r);
	cr_assert_eq(r->counts[EVIDENCE_EFFECT_UNKNOWN], 5);
	/* trust-tool-claim: both mismatches unseen, even without a ledger */
	evidence_reconcile(log, strlen(log), ledger, strlen(ledger), true, r);
	cr_assert_eq(r->counts[EVIDENCE_MATCHED], 5);
	evidence_reconcile(log, strlen(log), NULL, 0, true, r);
	cr_assert_eq(r->counts[EVIDENCE_MATCHED], 5);
	cr_assert_str_eq(evidence_disposition_name(EVIDENCE_CLAIMED_FAILURE_EFFECT),
			 "claimed-failure-effect");
	free(r);
}
