/* The evidence log's writer and verifier (evidence.h). */
#include "evidence.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <unistd.h>

#include "../include/io.h"
#include "../include/iso8601.h"
#include "../policy/sha256.h"

#define SUFFIX_LEN (sizeof(",\"mac\":\"\"}") - 1 + 64) /* after the MAC'd body */

static void hex(const unsigned char *b, size_t n, char *out)
{
	static const char d[] = "0123456789abcdef";

	for (size_t i = 0; i < n; i++) {
		out[2 * i] = d[b[i] >> 4];
		out[2 * i + 1] = d[b[i] & 15];
	}
	out[2 * n] = '\0';
}

void evidence_sha256_hex(const void *data, size_t len, char out[65])
{
	unsigned char dg[32];

	sha256(data, len, dg);
	hex(dg, 32, out);
}

static void genesis(const char *session, char out[65])
{
	char text[96];
	unsigned char dg[32];
	int n = snprintf(text, sizeof(text), "paddock-evidence-1 %s", session);

	sha256(text, (size_t)n, dg);
	hex(dg, 32, out);
}

int evidence_open(struct evidence_log *log, int fd, const unsigned char *key, const char *session,
		  const char *source)
{
	unsigned char e[16];

	memset(log, 0, sizeof(*log));
	log->fd = fd;
	memcpy(log->key, key, EVIDENCE_KEY_LEN);
	snprintf(log->session, sizeof(log->session), "%s", session);
	snprintf(log->source, sizeof(log->source), "%s", source);
	if (getrandom(e, sizeof(e), 0) != (ssize_t)sizeof(e))
		return -errno;
	hex(e, sizeof(e), log->epoch);
	genesis(log->session, log->head);
	return 0;
}

void evidence_json_string(const char *s, char *buf, size_t size)
{
	size_t n = 0;

	if (size < 3) {
		if (size)
			buf[0] = '\0';
		return;
	}
	buf[n++] = '"';
	for (; *s && n + 8 < size; s++) {
		unsigned char c = (unsigned char)*s;

		if (c == '"' || c == '\\') {
			buf[n++] = '\\';
			buf[n++] = (char)c;
		} else if (c < 0x20 || c == 0x7f) {
			n += (size_t)snprintf(buf + n, size - n, "\\u%04x", c);
		} else {
			buf[n++] = (char)c;
		}
	}
	buf[n++] = '"';
	buf[n] = '\0';
}

void evidence_append(struct evidence_log *log, const char *type, const char *fields)
{
	char line[EVIDENCE_LINE_MAX], t[ISO8601_LEN], drops[32] = "";
	unsigned char mac[32], dg[32];
	char machex[65];
	off_t end;
	int n;

	if (log->fd < 0)
		return;
	iso8601_now(0, t, sizeof(t));
	if (log->drops)
		snprintf(drops, sizeof(drops), ",\"drops\":%lu", log->drops);
	if (log->unsequenced)
		n = snprintf(line, sizeof(line),
			     "{\"source\":\"%s\",\"epoch\":\"%s\",\"session\":\"%s\","
			     "\"time\":\"%s\",\"type\":\"%s\"%s%s%s}",
			     log->source, log->epoch, log->session, t, type,
			     fields && *fields ? "," : "", fields ? fields : "", drops);
	else
		n = snprintf(line, sizeof(line),
			     "{\"seq\":%" PRIu64 ",\"source\":\"%s\",\"epoch\":\"%s\","
			     "\"session\":\"%s\",\"time\":\"%s\",\"type\":\"%s\"%s%s%s,"
			     "\"prev\":\"%s\"}",
			     log->seq + 1, log->source, log->epoch, log->session, t, type,
			     fields && *fields ? "," : "", fields ? fields : "", drops, log->head);
	if (n < 0 || (size_t)n + SUFFIX_LEN + 2 > sizeof(line)) {
		log->drops++;
		log->drops_total++;
		return;
	}
	/* The MAC covers the line without its own member; then the member
	 * goes in before the closing brace. */
	evidence_hmac(log->key, EVIDENCE_KEY_LEN, line, (size_t)n, mac);
	hex(mac, 32, machex);
	n = snprintf(line + n - 1, sizeof(line) - (size_t)n + 1, ",\"mac\":\"%s\"}", machex) + n -
	    1;
	sha256(line, (size_t)n, dg);
	line[n] = '\n';
	/* A write that fails part way (ENOSPC on a full file system, whose
	 * last page took part of the line; EFBIG) would leave half a line for
	 * the next one to run into: the log is cut back to where it was, so
	 * the next line that can be written starts a line of its own (and
	 * says how many were lost). */
	end = lseek(log->fd, 0, SEEK_END);
	if (write_full(log->fd, line, (size_t)n + 1) < 0) {
		if (end >= 0)
			(void)!ftruncate(log->fd, end);
		log->drops++;
		log->drops_total++;
		return;
	}
	log->seq++;
	hex(dg, 32, log->head);
	log->drops = 0;
}

/* ------------------------------------------------------------ verifying */

static void reason(struct evidence_report *r, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
static void reason(struct evidence_report *r, const char *fmt, ...)
{
	va_list ap;

	r->verdict = EVIDENCE_INCOMPLETE;
	if (r->n_reasons == EVIDENCE_REASONS_MAX) {
		r->more_reasons++;
		return;
	}
	va_start(ap, fmt);
	vsnprintf(r->reasons[r->n_reasons++], sizeof(r->reasons[0]), fmt, ap);
	va_end(ap);
}

static bool is_hex64(const char *s)
{
	for (int i = 0; i < 64; i++)
		if (!((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f')))
			return false;
	return true;
}

/* What the lines read so far say. */
struct walk {
	uint64_t seq;	 /* the last sequence number seen */
	char epoch[40];	 /* the epoch of the last line */
	char source[16]; /* the source of the first line */
	int sequenced;	 /* -1 before the first line; 1 with seq and prev; 0 without */
};

static void gap(struct evidence_report *r, uint64_t from, uint64_t to)
{
	if (r->n_gaps < EVIDENCE_GAPS_MAX) {
		r->gaps[r->n_gaps].from = from;
		r->gaps[r->n_gaps].to = to;
		r->n_gaps++;
	}
	r->missing += to - from + 1;
}

/* The fields of one line whose MAC held. */
static void check_fields(const cJSON *o, uint64_t no, const char *session, const char *prev_head,
			 struct walk *w, struct evidence_report *r)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, "seq");
	const cJSON *ep = cJSON_GetObjectItemCaseSensitive(o, "epoch");
	const cJSON *src = cJSON_GetObjectItemCaseSensitive(o, "source");
	int sequenced = v != NULL;

	if (w->sequenced < 0) {
		w->sequenced = sequenced;
		r->sequenced = sequenced;
		snprintf(w->source, sizeof(w->source), "%s",
			 cJSON_IsString(src) ? src->valuestring : "");
		snprintf(r->source, sizeof(r->source), "%s", w->source);
	} else if (sequenced != w->sequenced) {
		reason(r, "line %" PRIu64 ": %s sequence number where the log %s one", no,
		       sequenced ? "a" : "no", w->sequenced ? "has" : "has no");
	}
	if (!cJSON_IsString(src) || strcmp(src->valuestring, w->source) != 0)
		reason(r, "line %" PRIu64 ": of another source (one log holds one source)", no);
	if (!cJSON_IsString(ep) || strlen(ep->valuestring) >= sizeof(w->epoch)) {
		reason(r, "line %" PRIu64 ": no epoch", no);
	} else {
		if (w->epoch[0] && strcmp(w->epoch, ep->valuestring) != 0)
			reason(r,
			       "line %" PRIu64 ": a new epoch (the source restarted): what it did "
			       "between epoch %.8s... and %.8s... is unknown",
			       no, w->epoch, ep->valuestring);
		snprintf(w->epoch, sizeof(w->epoch), "%s", ep->valuestring);
		snprintf(r->epoch, sizeof(r->epoch), "%s", ep->valuestring);
	}
	v = cJSON_GetObjectItemCaseSensitive(o, "session");
	if (!cJSON_IsString(v) || strcmp(v->valuestring, session) != 0)
		reason(r, "line %" PRIu64 ": of another session", no);
	v = cJSON_GetObjectItemCaseSensitive(o, "drops");
	if (v) {
		double d = cJSON_IsNumber(v) ? v->valuedouble : 0.0;

		reason(r, "line %" PRIu64 ": %.0f event(s) before it could not be written", no, d);
		r->dropped += d > 0 && d < 1e15 ? (uint64_t)d : 0;
	}
	if (!sequenced)
		return;
	v = cJSON_GetObjectItemCaseSensitive(o, "prev");
	if (!cJSON_IsString(v) || strcmp(v->valuestring, prev_head) != 0)
		reason(r,
		       "line %" PRIu64 ": does not follow the line before (a line is missing, "
		       "moved or replayed)",
		       no);
	v = cJSON_GetObjectItemCaseSensitive(o, "seq");
	if (!cJSON_IsNumber(v) || v->valuedouble < 1 || v->valuedouble > 1e15 ||
	    v->valuedouble != (double)(uint64_t)v->valuedouble) {
		reason(r, "line %" PRIu64 ": no sequence number", no);
		return;
	}
	if ((uint64_t)v->valuedouble > w->seq + 1) {
		reason(r, "line %" PRIu64 ": sequence numbers %" PRIu64 "-%" PRIu64 " are missing",
		       no, w->seq + 1, (uint64_t)v->valuedouble - 1);
		gap(r, w->seq + 1, (uint64_t)v->valuedouble - 1);
	} else if ((uint64_t)v->valuedouble <= w->seq) {
		reason(r,
		       "line %" PRIu64 ": sequence number %.0f where %" PRIu64
		       " was due (moved or replayed)",
		       no, v->valuedouble, w->seq + 1);
	}
	w->seq = (uint64_t)v->valuedouble;
}

/* One line (without its newline): its MAC, then its fields. */
static void check_line(const char *line, size_t len, uint64_t no, const unsigned char *key,
		       const char *session, const char *prev_head, struct walk *w,
		       struct evidence_report *r)
{
	char body[EVIDENCE_LINE_MAX], got[65];
	unsigned char mac[32];
	const char *tail;
	cJSON *o;

	if (len <= SUFFIX_LEN + 1 || len >= sizeof(body)) {
		reason(r, "line %" PRIu64 ": not an evidence line", no);
		return;
	}
	tail = line + len - SUFFIX_LEN;
	if (strncmp(tail, ",\"mac\":\"", 8) != 0 || !is_hex64(tail + 8) ||
	    strncmp(tail + 72, "\"}", 2) != 0) {
		reason(r, "line %" PRIu64 ": no MAC", no);
		return;
	}
	memcpy(body, line, len - SUFFIX_LEN);
	body[len - SUFFIX_LEN] = '}';
	evidence_hmac(key, EVIDENCE_KEY_LEN, body, len - SUFFIX_LEN + 1, mac);
	hex(mac, 32, got);
	if (memcmp(got, tail + 8, 64) != 0) {
		reason(r, "line %" PRIu64 ": the MAC does not match (edited, or another key)", no);
		return;
	}
	o = cJSON_ParseWithLength(line, len);
	if (!o || !cJSON_IsObject(o)) {
		reason(r, "line %" PRIu64 ": not JSON", no);
		cJSON_Delete(o);
		return;
	}
	check_fields(o, no, session, prev_head, w, r);
	cJSON_Delete(o);
}

void evidence_verify(const char *text, size_t len, const unsigned char *key, const char *session,
		     uint64_t want_seq, const char *want_head, struct evidence_report *out)
{
	struct walk w = {.sequenced = -1};
	char head[65];
	uint64_t no = 0;
	size_t off = 0;

	memset(out, 0, sizeof(*out));
	genesis(session, head);
	while (off < len) {
		const char *nl = memchr(text + off, '\n', len - off);
		size_t l = nl ? (size_t)(nl - text - off) : len - off;
		unsigned char dg[32];

		no++;
		if (!nl) {
			reason(out, "line %" PRIu64 ": cut short (no newline)", no);
			break;
		}
		check_line(text + off, l, no, key, session, head, &w, out);
		sha256(text + off, l, dg);
		hex(dg, 32, head);
		off += l + 1;
	}
	out->lines = no;
	out->last_seq = w.seq;
	snprintf(out->head, sizeof(out->head), "%s", head);
	if (want_head && strcmp(head, want_head) != 0)
		reason(out, "the log's last line is not the checkpoint's (lines were cut off or "
			    "added after it was taken)");
	if (want_seq && w.seq != want_seq) {
		reason(out,
		       "the log ends at %" PRIu64 " but the checkpoint says %" PRIu64
		       " (lines were cut off or added)",
		       w.seq, want_seq);
		if (w.seq < want_seq)
			gap(out, w.seq + 1, want_seq);
	}
	if (no == 0)
		reason(out, "the log is empty");
}
