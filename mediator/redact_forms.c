/* The forms of each brokered secret that the redaction (redact.c) looks
 * for, built once the secrets are read: the secret, its hex and its
 * base64 at the three alignments, each in canonical spelling (hex lower
 * case, base64 in the standard alphabet) with its Knuth-Morris-Pratt
 * failure table, in memory never dumped (they are the secret in other
 * spellings). */
#include "mediator.h"

#include <string.h>
#include <sys/mman.h>

/* The base64 characters of s[0..n) preceded by a (0 to 2) other bytes:
 * only those whose six bits all come from s. */
static size_t b64_form(const unsigned char *s, size_t n, unsigned a, char *out)
{
	static const char alpha[] =
	    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
	size_t bits = 8 * (a + n), first = (8 * a + 5) / 6, k = 0;

	for (size_t i = first; 6 * i + 6 <= bits; i++) {
		unsigned v = 0;

		for (size_t b = 6 * i; b < 6 * i + 6; b++) {
			size_t byte = b / 8;
			unsigned bit = byte < a ? 0 : (s[byte - a] >> (7 - b % 8)) & 1;

			v = v << 1 | bit;
		}
		out[k++] = alpha[v];
	}
	return k;
}

static size_t form_of(const unsigned char *s, size_t n, unsigned f, char *out, unsigned *kind)
{
	static const char hex[] = "0123456789abcdef";

	switch (f) {
	case REDACT_FORM_RAW:
		*kind = REDACT_CANON_NONE;
		memcpy(out, s, n);
		return n;
	case REDACT_FORM_HEX:
		*kind = REDACT_CANON_HEX;
		for (size_t i = 0; i < n; i++) {
			out[2 * i] = hex[s[i] >> 4];
			out[2 * i + 1] = hex[s[i] & 15];
		}
		return 2 * n;
	default:
		*kind = REDACT_CANON_B64;
		return b64_form(s, n, f - REDACT_FORM_B64, out);
	}
}

/* Room for one secret's forms: raw, hex, three base64. */
static size_t forms_room(size_t n)
{
	return n + 2 * n + 3 * (4 * n / 3 + 2);
}

int redact_forms_build(struct mediator_credentials *cr)
{
	size_t need = 0, max = 0;
	char *p;

	for (size_t i = 0; i < cr->n; i++)
		need += forms_room(cr->s[i].len) * (1 + sizeof(uint32_t));
	if (!need)
		return 0;
	/* The forms are the secret in other spellings: never dumped, as
	 * the secrets' own region. */
	p = mmap(NULL, need, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED)
		return -errno;
	if (madvise(p, need, MADV_DONTDUMP) < 0) {
		int e = errno;

		munmap(p, need);
		return -e;
	}
	(void)mlock(p, need);
	cr->forms_region = p;
	cr->forms_len = need;
	for (size_t i = 0; i < cr->n; i++) {
		const unsigned char *s = (const unsigned char *)cr->s[i].value;

		for (unsigned f = 0; f < REDACT_FORMS; f++) {
			struct redact_form *rf = &cr->s[i].form[f];
			uint32_t *fail;
			size_t k = 0;

			rf->p = p;
			rf->n = form_of(s, cr->s[i].len, f, p, &rf->canon);
			p += rf->n;
			fail = (uint32_t *)(void *)(((uintptr_t)p + 3) & ~(uintptr_t)3);
			rf->fail = fail;
			/* KMP: fail[j] is the longest proper border of p[0..j]. */
			fail[0] = 0;
			for (size_t j = 1; j < rf->n; j++) {
				while (k && rf->p[j] != rf->p[k])
					k = fail[k - 1];
				if (rf->p[j] == rf->p[k])
					k++;
				fail[j] = (uint32_t)k;
			}
			p = (char *)(fail + rf->n);
			if (rf->n > max)
				max = rf->n;
			for (unsigned c = 0; rf->n && c < 256; c++)
				if (redact_canon(rf->canon, (unsigned char)c) ==
				    (unsigned char)rf->p[0])
					cr->first[c] = 1;
		}
	}
	cr->form_max = max;
	return 0;
}

void redact_forms_free(struct mediator_credentials *cr)
{
	if (!cr->forms_region)
		return;
	explicit_bzero(cr->forms_region, cr->forms_len);
	munmap(cr->forms_region, cr->forms_len);
	cr->forms_region = NULL;
}
