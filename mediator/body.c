/* The body of a publication (gate.c), read whole before anything is
 * dialled: the wire bytes as they came (forwarded once released) and the
 * entity bytes they carry (digested). A chunked body is decoded here, by
 * a parser of its own with the same strictness as http_chunked_scan()
 * (and the same count of body bytes: the fuzzer checks both agree). */
#include "mediator.h"

#include <stdlib.h>
#include <string.h>

#include "../policy/sha256.h"

enum {
	B_SIZE,
	B_EXT,
	B_SIZE_LF,
	B_DATA,
	B_DATA_CR,
	B_DATA_LF,
	B_TRAILER,
	B_TRAILER_LF,
	B_TLINE,
	B_TLINE_LF,
	B_DONE
};

static int hex(char c)
{
	return c >= '0' && c <= '9'   ? c - '0'
	       : c >= 'a' && c <= 'f' ? c - 'a' + 10
	       : c >= 'A' && c <= 'F' ? c - 'A' + 10
				      : -1;
}

void gate_body_init(struct gate_body *b, bool chunked, uint64_t length)
{
	memset(b, 0, sizeof(*b));
	b->chunked = chunked;
	b->left = length;
	b->done = !chunked && length == 0;
}

static int grow(char **p, size_t *cap, size_t need)
{
	size_t c = *cap ? *cap : 4096;
	char *q;

	if (need <= *cap)
		return 0;
	while (c < need)
		c *= 2;
	q = realloc(*p, c);
	if (!q)
		return -ENOMEM;
	*p = q;
	*cap = c;
	return 0;
}

static int keep(struct gate_body *b, const char *data, size_t n)
{
	if (grow(&b->ent, &b->ent_cap, b->ent_len + n) < 0)
		return -ENOMEM;
	memcpy(b->ent + b->ent_len, data, n);
	b->ent_len += n;
	return 0;
}

/* The chunked framing of buf[0..n): the entity bytes kept, the count of
 * bytes that belong to the body returned. */
static long chunked(struct gate_body *b, const char *buf, size_t n)
{
	size_t i = 0;

	while (i < n && b->state != B_DONE) {
		char ch = buf[i];

		switch (b->state) {
		case B_SIZE:
			if (hex(ch) >= 0) {
				if (++b->digits > 15)
					return -EINVAL;
				b->left = b->left * 16 + (uint64_t)hex(ch);
			} else if (b->digits && (ch == ';' || ch == '\r')) {
				b->state = ch == ';' ? B_EXT : B_SIZE_LF;
			} else {
				return -EINVAL;
			}
			break;
		case B_EXT:
			if (ch == '\n')
				return -EINVAL;
			if (ch == '\r')
				b->state = B_SIZE_LF;
			break;
		case B_SIZE_LF:
			if (ch != '\n')
				return -EINVAL;
			b->state = b->left ? B_DATA : B_TRAILER;
			break;
		case B_DATA: {
			size_t take = n - i < b->left ? n - i : (size_t)b->left;

			if (keep(b, buf + i, take) < 0)
				return -ENOMEM;
			b->left -= take;
			i += take;
			if (!b->left)
				b->state = B_DATA_CR;
			continue; /* i moved already */
		}
		case B_DATA_CR:
		case B_TRAILER_LF:
		case B_TLINE_LF:
			if (ch != (b->state == B_DATA_CR ? '\r' : '\n'))
				return -EINVAL;
			b->state = b->state == B_DATA_CR    ? B_DATA_LF
				   : b->state == B_TLINE_LF ? B_TRAILER
							    : B_DONE;
			break;
		case B_DATA_LF:
			if (ch != '\n')
				return -EINVAL;
			b->state = B_SIZE;
			b->digits = 0;
			break;
		case B_TRAILER: /* after the last chunk: CRLF, or trailer lines */
			if (ch == '\n')
				return -EINVAL;
			b->state = ch == '\r' ? B_TRAILER_LF : B_TLINE;
			break;
		case B_TLINE:
			if (ch == '\n')
				return -EINVAL;
			if (ch == '\r')
				b->state = B_TLINE_LF;
			break;
		}
		i++;
	}
	b->done = b->state == B_DONE;
	return (long)i;
}

long gate_body_feed(struct gate_body *b, const char *buf, size_t n, size_t max)
{
	long k;

	if (b->done)
		return 0;
	if (b->chunked) {
		k = chunked(b, buf, n);
	} else {
		k = (long)(n < b->left ? n : b->left);
		if (keep(b, buf, (size_t)k) < 0)
			return -ENOMEM;
		b->left -= (uint64_t)k;
		b->done = b->left == 0;
	}
	if (k < 0)
		return k;
	/* The wire bytes are what is held (and forwarded): framing counts. */
	if (b->raw_len + (size_t)k > max)
		return -E2BIG;
	if (grow(&b->raw, &b->raw_cap, b->raw_len + (size_t)k) < 0)
		return -ENOMEM;
	memcpy(b->raw + b->raw_len, buf, (size_t)k);
	b->raw_len += (size_t)k;
	return k;
}

void gate_body_digest(const struct gate_body *b, char hex_out[65])
{
	unsigned char d[SHA256_DIGEST_LEN];

	sha256(b->ent, b->ent_len, d);
	sha256_hex(d, hex_out);
}

void gate_body_free(struct gate_body *b)
{
	free(b->raw);
	free(b->ent);
	b->raw = b->ent = NULL;
	b->raw_len = b->ent_len = b->raw_cap = b->ent_cap = 0;
}
