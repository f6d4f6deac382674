/* The redaction of brokered secrets from what an upstream sends back
 * (docs/network.md, "Redaction"). A response is read as HTTP/1.1 frames it
 * (RFC 9112 6): its head is held until it is whole, then its body by
 * Content-Length, chunked coding (decoded: a secret split across chunks,
 * or across the mediator's reads, is one run of entity bytes here) or up
 * to the close. Every entity byte goes through two views at once:
 *
 *   the wire view     the bytes as they are: the secret, its hex (either
 *                     case), its base64 (standard or url-safe alphabet, at
 *                     each of the three alignments to a 3-byte group);
 *   the decoded view  %XX and JSON escapes (\uXXXX, \" \\ \/ ...) undone
 *                     once: the same forms, percent-encoded or JSON-escaped
 *                     (also in part, in either case of hex digits).
 *
 * Each form is one Knuth-Morris-Pratt automaton per view; a complete match
 * turns every wire byte it spans into '*' (the framing between them stays).
 * Bytes that could still begin a match are held back from the workload
 * until the next read decides them, or the body (or the stream) ends: a
 * partial match that the end cuts off is not the secret. A chunk extension
 * (which a recipient must ignore, RFC 9112 7.1.1) is starred whole.
 *
 * Not covered, and said in docs/network.md: a compressed body (the
 * mediator asks an audience for none and refuses one it gets: loop.c),
 * an encoding applied twice (%25XX, base64 of hex), a form with separators
 * inserted (MIME's line breaks every 76 base64 characters, "de:ad:..."), a
 * secret split between the head and the body, and an upstream that
 * cooperates with the workload to smuggle the secret out (it can encrypt
 * it): the audience is trusted with the secret by design.
 *
 * Pure code (no I/O), unit-tested and fuzzed ('x'). */
#include "mediator.h"

#include <stdlib.h>
#include <string.h>
#include <strings.h>

enum {
	P_HEAD,	 /* the response's head is being read (held whole) */
	P_LEN,	 /* a Content-Length body */
	P_CHUNK, /* a chunked body */
	P_CLOSE, /* a body up to the close, or a raw stream */
	P_AFTER, /* past the response's end: one request, one response */
};

enum {
	C_SIZE,
	C_EXT,
	C_SIZE_LF,
	C_DATA,
	C_DATA_CR,
	C_DATA_LF,
	C_TRAILER,
	C_TLINE,
	C_TLINE_LF,
	C_END_LF,
	C_DONE,
};

static int hexval(unsigned char c)
{
	return c >= '0' && c <= '9'   ? c - '0'
	       : c >= 'a' && c <= 'f' ? c - 'a' + 10
	       : c >= 'A' && c <= 'F' ? c - 'A' + 10
				      : -1;
}

/* ---------------------------------------------------------- the stream */

static size_t pow2(size_t n)
{
	size_t c = 16;

	while (c < n)
		c *= 2;
	return c;
}

int redact_init(struct redact *r, const struct mediator_credentials *cr, bool http,
		bool head_request, bool strict)
{
	memset(r, 0, sizeof(*r));
	r->cr = cr;
	r->phase = http ? P_HEAD : P_CLOSE;
	r->head_request = head_request;
	r->strict = strict;
	/* A decoded byte spans at most 6 entity bytes (\u00XX), and a
	 * pending escape 5 more; but what a match spans is all in the
	 * caller's buffer (at most HTTP_HEAD_MAX bytes: a longer hold is the
	 * caller's cut), so no ring needs more. */
	r->dcap = pow2(cr->form_max + 1 < HTTP_HEAD_MAX ? cr->form_max + 1 : HTTP_HEAD_MAX);
	r->cap = pow2(6 * cr->form_max + 8 < HTTP_HEAD_MAX ? 6 * cr->form_max + 8 : HTTP_HEAD_MAX);
	r->wire = calloc(r->cap, sizeof(*r->wire));
	r->dstart = calloc(r->dcap, sizeof(*r->dstart));
	if (!r->wire || !r->dstart) {
		redact_free(r);
		return -ENOMEM;
	}
	return 0;
}

void redact_free(struct redact *r)
{
	free(r->wire);
	free(r->dstart);
	r->wire = r->dstart = NULL;
	r->cr = NULL;
}

struct pass {
	struct redact *r;
	char *buf;
	size_t len;
	uint64_t base;
};

/* Star the wire bytes of entity bytes from..to (inclusive); true when one
 * was not a '*' already (the occurrence is counted once, by one view). */
static bool star(struct pass *ps, uint64_t from, uint64_t to)
{
	struct redact *r = ps->r;
	bool changed = false;

	for (uint64_t e = from; e <= to; e++) {
		uint64_t o = r->wire[e & (r->cap - 1)];

		if (o >= ps->base && o < ps->base + ps->len && ps->buf[o - ps->base] != '*') {
			ps->buf[o - ps->base] = '*';
			changed = true;
		}
	}
	return changed;
}

/* One byte c through every automaton of view v (0: the wire, 1: decoded);
 * last_ent is the last entity byte it came from. A form complete there is
 * starred, and counted. */
static void step_view(struct pass *ps, unsigned v, unsigned char c, uint64_t last_ent)
{
	struct redact *r = ps->r;
	const struct mediator_credentials *cr = r->cr;

	/* The fast path: no automaton of the view is past its start, and
	 * no form begins with c (most bytes of most bodies). */
	if (!r->active[v] && !cr->first[c])
		return;
	for (size_t i = 0; i < cr->n; i++)
		for (unsigned f = 0; f < REDACT_FORMS; f++) {
			const struct redact_form *rf = &cr->s[i].form[f];
			uint32_t *st = &r->st[i][f][v], was = *st;
			unsigned char x = redact_canon(rf->canon, c);
			uint64_t first;

			if (!rf->n)
				continue;
			while (*st && (unsigned char)rf->p[*st] != x)
				*st = rf->fail[*st - 1];
			if ((unsigned char)rf->p[*st] == x)
				++*st;
			r->active[v] += (*st && !was) - (!*st && was);
			if (*st < rf->n)
				continue;
			r->active[v]--;
			first = v == 0 ? last_ent - rf->n + 1
				       : r->dstart[(r->dec - rf->n) & (r->dcap - 1)];
			if (star(ps, first, last_ent))
				r->count++;
			*st = 0;
		}
}

/* A byte of the decoded view, from entity bytes start..end. */
static void emit(struct pass *ps, unsigned char d, uint64_t start, uint64_t end)
{
	struct redact *r = ps->r;

	r->dstart[r->dec & (r->dcap - 1)] = start;
	r->dec++;
	step_view(ps, 1, d, end);
}

/* A pending escape that is none after all: its bytes as they are. */
static void flush(struct pass *ps)
{
	struct redact *r = ps->r;
	size_t n = r->npend;

	r->npend = 0;
	for (size_t k = 0; k < n; k++)
		emit(ps, r->pend[k], r->pend_start + k, r->pend_start + k);
}

static void decode(struct pass *ps, unsigned char c, uint64_t e)
{
	static const char esc[] = "\"\\/bfnrt", val[] = "\"\\/\b\f\n\r\t";
	struct redact *r = ps->r;

	if (!r->npend) {
		if (c == '%' || c == '\\') {
			r->pend[r->npend++] = c;
			r->pend_start = e;
		} else {
			emit(ps, c, e, e);
		}
		return;
	}
	r->pend[r->npend++] = c;
	if (r->pend[0] == '%') {
		if (hexval(c) < 0) {
			r->npend--;
			flush(ps);
			decode(ps, c, e);
		} else if (r->npend == 3) {
			r->npend = 0;
			emit(ps, (unsigned char)(hexval(r->pend[1]) << 4 | hexval(r->pend[2])),
			     r->pend_start, e);
		}
		return;
	}
	if (r->npend == 2 && c != 'u') {
		const char *k = c ? strchr(esc, c) : NULL;

		if (k) {
			r->npend = 0;
			emit(ps, (unsigned char)val[k - esc], r->pend_start, e);
		} else {
			r->npend--;
			flush(ps);
			decode(ps, c, e);
		}
	} else if (r->npend > 2 && hexval(c) < 0) {
		r->npend--;
		flush(ps);
		decode(ps, c, e);
	} else if (r->npend == 6) {
		unsigned v = 0;

		for (int k = 2; k < 6; k++)
			v = v << 4 | (unsigned)hexval(r->pend[k]);
		r->npend = 0;
		/* Past ASCII it is no byte of a secret (visible ASCII only):
		 * 0 matches nothing, and breaks a match in progress. */
		emit(ps, v < 0x80 ? (unsigned char)v : 0, r->pend_start, e);
	}
}

/* One entity byte, at wire offset o. */
static void entity(struct pass *ps, uint64_t o)
{
	struct redact *r = ps->r;
	unsigned char c = (unsigned char)ps->buf[o - ps->base];
	uint64_t e = r->ent++;

	r->wire[e & (r->cap - 1)] = o;
	step_view(ps, 0, c, e);
	decode(ps, c, e);
}

/* The end of a run of entity bytes: what is partial there is no secret. */
static void end_run(struct pass *ps)
{
	struct redact *r = ps->r;

	flush(ps);
	memset(r->st, 0, sizeof(r->st));
	r->active[0] = r->active[1] = 0;
}

static bool tchar(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
	       (c && strchr("!#$%&'*+-.^_`|~", c));
}

/* The response's head at buf[i..): its length once whole, 0 for more,
 * -EINVAL when it cannot be framed, -EPROTO for a coding we cannot read
 * (strict), with the body's framing in r. */
static long head(struct redact *r, const char *buf, size_t n)
{
	unsigned status;
	int s = http_parse_status(buf, n, &status);
	const char *end, *line;
	bool te = false, cl = false, coded = false;

	if (s <= 0)
		return s;
	end = memmem(buf + s - 2, n - (size_t)s + 2, "\r\n\r\n", 4);
	if (!end)
		return n - (size_t)s > HTTP_HEAD_MAX ? -EINVAL : 0;
	end += 4;
	for (line = buf + s; line < end - 2;) {
		const char *eol = memmem(line, (size_t)(end - line), "\r\n", 2);
		const char *colon = memchr(line, ':', (size_t)(eol - line)), *v;
		size_t kn, vn;

		/* A name of token characters (no space before the colon, no
		 * obs-fold), no bare CR or LF: what a lenient client might
		 * read as another framing is refused (RFC 9112 5.1, 5.2). */
		if (!colon || colon == line || memchr(line, '\n', (size_t)(eol - line)) ||
		    memchr(line, '\r', (size_t)(eol - line)))
			return -EINVAL;
		kn = (size_t)(colon - line);
		for (size_t k = 0; k < kn; k++)
			if (!tchar(line[k]))
				return -EINVAL;
		for (v = colon + 1; v < eol && (*v == ' ' || *v == '\t'); v++)
			;
		vn = (size_t)(eol - v);
		while (vn && (v[vn - 1] == ' ' || v[vn - 1] == '\t'))
			vn--;
		if (kn == 14 && strncasecmp(line, "content-length", kn) == 0) {
			uint64_t x = 0;

			if (cl || !vn || vn > 15)
				return -EINVAL;
			for (size_t k = 0; k < vn; k++) {
				if (v[k] < '0' || v[k] > '9')
					return -EINVAL;
				x = x * 10 + (uint64_t)(v[k] - '0');
			}
			cl = true;
			r->left = x;
		} else if (kn == 17 && strncasecmp(line, "transfer-encoding", kn) == 0) {
			if (te)
				return -EINVAL;
			te = true;
			if (vn != 7 || strncasecmp(v, "chunked", 7) != 0)
				coded = true; /* gzip, chunked; or one we do not know */
		} else if (kn == 16 && strncasecmp(line, "content-encoding", kn) == 0) {
			if (vn != 8 || strncasecmp(v, "identity", 8) != 0)
				coded = true;
		}
		line = eol + 2;
	}
	/* Both: a request-smuggling shape (RFC 9112 6.3, item 3). */
	if (te && cl)
		return -EINVAL;
	if (coded && r->strict)
		return -EPROTO;
	if (r->head_request || status == 204 || status == 304)
		r->phase = P_AFTER;
	else if (coded)
		r->phase = P_CLOSE; /* not an audience: scanned as it is */
	else if (te)
		r->phase = P_CHUNK;
	else if (cl)
		r->phase = r->left ? P_LEN : P_AFTER;
	else
		r->phase = P_CLOSE;
	r->cstate = C_SIZE;
	r->digits = 0;
	return end - buf;
}

/* A whole 1xx interim response at buf[0..n): its length, else 0 (more
 * bytes, or no interim response: head() decides). */
static long interim(const char *buf, size_t n)
{
	unsigned status;
	const char *end;
	long s;

	if (n < 12 || (memcmp(buf, "HTTP/1.1 1", 10) != 0 && memcmp(buf, "HTTP/1.0 1", 10) != 0))
		return 0;
	end = memmem(buf, n, "\r\n\r\n", 4);
	if (!end)
		return 0;
	/* Well formed: the parser wants the final response after it (0);
	 * else head() refuses it. */
	s = http_parse_status(buf, (size_t)(end - buf) + 4, &status);
	return s == 0 ? end + 4 - buf : 0;
}

/* A chunked body's byte at offset o: 0, or -EINVAL. */
static int chunk(struct pass *ps, uint64_t o)
{
	struct redact *r = ps->r;
	char ch = ps->buf[o - ps->base];

	switch (r->cstate) {
	case C_SIZE:
		if (hexval((unsigned char)ch) >= 0) {
			/* At most 7 digits (a chunk under 256 MiB): a size
			 * line, which is framing and not scanned, can then
			 * hold no secret (8 characters at least). */
			if (++r->digits > 7)
				return -EINVAL;
			r->left = r->left * 16 + (uint64_t)hexval((unsigned char)ch);
		} else if (r->digits && (ch == ';' || ch == '\r')) {
			r->cstate = ch == ';' ? C_EXT : C_SIZE_LF;
		} else {
			return -EINVAL;
		}
		return 0;
	case C_EXT:
		if (ch == '\n')
			return -EINVAL;
		if (ch == '\r')
			r->cstate = C_SIZE_LF;
		else
			ps->buf[o - ps->base] = '*'; /* ignorable, and no place to hide */
		return 0;
	case C_SIZE_LF:
		if (ch != '\n')
			return -EINVAL;
		r->cstate = r->left ? C_DATA : C_TRAILER;
		return 0;
	case C_DATA:
		entity(ps, o);
		if (!--r->left)
			r->cstate = C_DATA_CR;
		return 0;
	case C_DATA_CR:
		if (ch != '\r')
			return -EINVAL;
		r->cstate = C_DATA_LF;
		return 0;
	case C_DATA_LF:
		if (ch != '\n')
			return -EINVAL;
		r->cstate = C_SIZE;
		r->digits = 0;
		return 0;
	case C_TRAILER: /* after the last chunk: CRLF, or trailer lines */
		if (ch == '\n')
			return -EINVAL;
		if (ch == '\r') {
			r->cstate = C_END_LF;
			return 0;
		}
		end_run(ps);
		r->cstate = C_TLINE;
		entity(ps, o);
		return 0;
	case C_TLINE: /* a trailer field: scanned as the head is */
		if (ch == '\n')
			return -EINVAL;
		if (ch == '\r')
			r->cstate = C_TLINE_LF;
		else
			entity(ps, o);
		return 0;
	case C_TLINE_LF:
	case C_END_LF:
		if (ch != '\n')
			return -EINVAL;
		r->cstate = r->cstate == C_END_LF ? C_DONE : C_TRAILER;
		if (r->cstate == C_DONE)
			end_run(ps);
		return 0;
	}
	return 0;
}

/* The oldest entity byte a partial match holds: its wire offset, or
 * UINT64_MAX. */
static uint64_t oldest(const struct redact *r)
{
	const struct mediator_credentials *cr = r->cr;
	uint64_t e = UINT64_MAX;

	for (size_t i = 0; i < cr->n; i++)
		for (unsigned f = 0; f < REDACT_FORMS; f++) {
			uint32_t s0 = r->st[i][f][0], s1 = r->st[i][f][1];

			if (s0 && r->ent - s0 < e)
				e = r->ent - s0;
			if (s1 && r->dstart[(r->dec - s1) & (r->dcap - 1)] < e)
				e = r->dstart[(r->dec - s1) & (r->dcap - 1)];
		}
	if (r->npend && r->pend_start < e)
		e = r->pend_start;
	return e == UINT64_MAX ? e : r->wire[e & (r->cap - 1)];
}

long redact_scan(struct redact *r, char *buf, size_t len, uint64_t base, bool eof)
{
	struct pass ps = {.r = r, .buf = buf, .len = len, .base = base};
	uint64_t end = base + len, o;

	if (r->failed)
		return r->failed;
	/* Bytes dropped unsent (a refusal replaced them): nothing to scan. */
	if (r->at < base || r->at > end)
		r->at = base;
	while (r->at < end) {
		if (r->phase == P_HEAD) {
			long h = interim(buf + (r->at - base), (size_t)(end - r->at));

			/* A 1xx (100 Continue) goes on at once, scanned: a
			 * client may wait for it before it sends its body. */
			if (h > 0) {
				for (o = r->at; o < r->at + (uint64_t)h; o++)
					entity(&ps, o);
				end_run(&ps);
				r->at += (uint64_t)h;
				continue;
			}
			h = head(r, buf + (r->at - base), (size_t)(end - r->at));

			/* A response we cannot frame is cut (fail closed);
			 * a head the end cut short is scanned as it is. */
			if (h < 0)
				return r->failed = h;
			if (h == 0 && eof) {
				r->phase = P_CLOSE;
				continue;
			}
			if (h == 0)
				return (long)(end - r->at);
			for (o = r->at; o < r->at + (uint64_t)h; o++)
				entity(&ps, o);
			end_run(&ps);
			r->at += (uint64_t)h;
			continue;
		}
		if (r->phase == P_CHUNK) {
			if (r->cstate == C_DONE) {
				r->phase = P_AFTER;
				continue;
			}
			if (chunk(&ps, r->at) < 0)
				return r->failed = -EINVAL;
		} else if (r->phase == P_AFTER) {
			/* The connection carried one request (Connection:
			 * close): bytes past its response belong to no
			 * message, and could finish a secret the end cut. */
			buf[r->at - base] = '*';
		} else {
			entity(&ps, r->at);
			if (r->phase == P_LEN && !--r->left) {
				end_run(&ps);
				r->phase = P_AFTER;
			}
		}
		r->at++;
	}
	if (eof) {
		end_run(&ps);
		return 0;
	}
	o = oldest(r);
	return o == UINT64_MAX || o < base ? 0 : (long)(end - o);
}

bool redact_rule_audience(const struct policy_net_rule *r)
{
	for (size_t g = 0; r && g < r->n_grants; g++)
		if (r->grants[g].credential)
			return true;
	return false;
}
