/* SHA-256 after FIPS 180-4 section 6.2, one-shot. Tested against the FIPS
 * and NIST CAVP vectors in tests/unit/test_policy.c. */
#include "sha256.h"

#include <stdbool.h>
#include <stdint.h>
#include <string.h>
#if defined(__x86_64__) && defined(__GNUC__) && __has_include(<sys/platform/x86.h>)
#define SHA256_SHANI 1
#include <immintrin.h>
#include <sys/platform/x86.h>
#endif

static const uint32_t K[64] = {
    0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5,
    0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174,
    0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
    0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967,
    0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
    0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
    0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
    0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2,
};

static uint32_t ror(uint32_t x, unsigned n)
{
	return (x >> n) | (x << (32 - n));
}

static void block(uint32_t h[8], const unsigned char *p)
{
	uint32_t w[64], a, b, c, d, e, f, g, hh, t1, t2;

	for (int i = 0; i < 16; i++)
		w[i] = (uint32_t)p[4 * i] << 24 | (uint32_t)p[4 * i + 1] << 16 |
		       (uint32_t)p[4 * i + 2] << 8 | (uint32_t)p[4 * i + 3];
	for (int i = 16; i < 64; i++) {
		uint32_t s0 = ror(w[i - 15], 7) ^ ror(w[i - 15], 18) ^ (w[i - 15] >> 3);
		uint32_t s1 = ror(w[i - 2], 17) ^ ror(w[i - 2], 19) ^ (w[i - 2] >> 10);

		w[i] = w[i - 16] + s0 + w[i - 7] + s1;
	}
	a = h[0], b = h[1], c = h[2], d = h[3], e = h[4], f = h[5], g = h[6], hh = h[7];
	for (int i = 0; i < 64; i++) {
		t1 =
		    hh + (ror(e, 6) ^ ror(e, 11) ^ ror(e, 25)) + ((e & f) ^ (~e & g)) + K[i] + w[i];
		t2 = (ror(a, 2) ^ ror(a, 13) ^ ror(a, 22)) + ((a & b) ^ (a & c) ^ (b & c));
		hh = g, g = f, f = e, e = d + t1, d = c, c = b, b = a, a = t1 + t2;
	}
	h[0] += a, h[1] += b, h[2] += c, h[3] += d, h[4] += e, h[5] += f, h[6] += g, h[7] += hh;
}

static void blocks_portable(uint32_t h[8], const unsigned char *p, size_t n)
{
	for (; n; n--, p += 64)
		block(h, p);
}

#ifdef SHA256_SHANI
/* The SHA extensions (Intel SHA-NI, AMD since Zen): the same rounds by
 * sha256rnds2/msg1/msg2, ~5x fewer cycles a block than block() on the
 * bench machine; every evidence line is three digests (bench/profile.md).
 * State in the instructions' order: ABEF and CDGH. */
__attribute__((target("sha,sse4.1,ssse3"))) static void
blocks_shani(uint32_t h[8], const unsigned char *p, size_t n)
{
	const __m128i bswap = _mm_set_epi64x(0x0c0d0e0f08090a0bULL, 0x0405060700010203ULL);
	__m128i t = _mm_shuffle_epi32(_mm_loadu_si128((const __m128i *)&h[0]), 0xB1);  /* CDAB */
	__m128i s1 = _mm_shuffle_epi32(_mm_loadu_si128((const __m128i *)&h[4]), 0x1B); /* EFGH */
	__m128i s0 = _mm_alignr_epi8(t, s1, 8);					       /* ABEF */

	s1 = _mm_blend_epi16(s1, t, 0xF0); /* CDGH */
	for (; n; n--, p += 64) {
		__m128i abef = s0, cdgh = s1, m[4], k;

		for (int i = 0; i < 4; i++)
			m[i] =
			    _mm_shuffle_epi8(_mm_loadu_si128((const __m128i *)(p + 16 * i)), bswap);
		/* Four rounds a step; m[i & 3] holds W[4i..4i+3], and once used
		 * becomes W[4i+16..4i+19] (FIPS 180-4 6.2.2 step 1). */
		for (int i = 0; i < 16; i++) {
			k = _mm_add_epi32(m[i & 3], _mm_loadu_si128((const __m128i *)&K[4 * i]));
			s1 = _mm_sha256rnds2_epu32(s1, s0, k);
			s0 = _mm_sha256rnds2_epu32(s0, s1, _mm_shuffle_epi32(k, 0x0E));
			if (i < 12) {
				t = _mm_sha256msg1_epu32(m[i & 3], m[(i + 1) & 3]);
				t = _mm_add_epi32(
				    t, _mm_alignr_epi8(m[(i + 3) & 3], m[(i + 2) & 3], 4));
				m[i & 3] = _mm_sha256msg2_epu32(t, m[(i + 3) & 3]);
			}
		}
		s0 = _mm_add_epi32(s0, abef);
		s1 = _mm_add_epi32(s1, cdgh);
	}
	t = _mm_shuffle_epi32(s0, 0x1B);				  /* FEBA */
	s1 = _mm_shuffle_epi32(s1, 0xB1);				  /* DCHG */
	_mm_storeu_si128((__m128i *)&h[0], _mm_blend_epi16(t, s1, 0xF0)); /* DCBA */
	_mm_storeu_si128((__m128i *)&h[4], _mm_alignr_epi8(s1, t, 8));	  /* HGFE */
}

/* glibc's CPU features, read once at its start (<sys/platform/x86.h>,
 * glibc 2.33): a CPUID of our own costs ~13 us in this VM (a trap to the
 * hypervisor), more than the digests of a short run save. */
static bool cpu_has_sha(void)
{
	return CPU_FEATURE_ACTIVE(SHA) && CPU_FEATURE_ACTIVE(SSE4_1) && CPU_FEATURE_ACTIVE(SSSE3);
}
#endif

/* 1: the SHA extensions, 0: block(), -1: not yet looked (relaxed atomics:
 * the mediator's threads may race to the same answer). */
static int use_shani = -1;

void sha256_force_portable(bool on)
{
	__atomic_store_n(&use_shani, on ? 0 : -1, __ATOMIC_RELAXED);
}

static void blocks(uint32_t h[8], const unsigned char *p, size_t n)
{
	int u = __atomic_load_n(&use_shani, __ATOMIC_RELAXED);

	if (u < 0) {
#ifdef SHA256_SHANI
		u = cpu_has_sha();
#else
		u = 0;
#endif
		__atomic_store_n(&use_shani, u, __ATOMIC_RELAXED);
	}
#ifdef SHA256_SHANI
	if (u) {
		blocks_shani(h, p, n);
		return;
	}
#endif
	blocks_portable(h, p, n);
}

void sha256(const void *data, size_t len, unsigned char out[SHA256_DIGEST_LEN])
{
	uint32_t h[8] = {0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a,
			 0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19};
	const unsigned char *p = data;
	unsigned char tail[128] = {0};
	uint64_t bits = (uint64_t)len * 8;
	size_t rest, n;

	if (len >= 64) {
		blocks(h, p, len / 64);
		p += len / 64 * 64;
		len %= 64;
	}
	/* Padding: 0x80, zeros, then the message length in bits, big-endian,
	 * ending on a block boundary (one block, or two when the tail is long). */
	rest = len;
	if (rest)
		memcpy(tail, p, rest);
	tail[rest] = 0x80;
	n = rest + 1 + 8 <= 64 ? 64 : 128;
	for (int i = 0; i < 8; i++)
		tail[n - 1 - i] = (unsigned char)(bits >> (8 * i));
	blocks(h, tail, n / 64);
	for (int i = 0; i < 8; i++) {
		out[4 * i] = (unsigned char)(h[i] >> 24);
		out[4 * i + 1] = (unsigned char)(h[i] >> 16);
		out[4 * i + 2] = (unsigned char)(h[i] >> 8);
		out[4 * i + 3] = (unsigned char)h[i];
	}
}

void sha256_hex(const unsigned char digest[SHA256_DIGEST_LEN], char out[2 * SHA256_DIGEST_LEN + 1])
{
	static const char hex[] = "0123456789abcdef";

	for (int i = 0; i < SHA256_DIGEST_LEN; i++) {
		out[2 * i] = hex[digest[i] >> 4];
		out[2 * i + 1] = hex[digest[i] & 15];
	}
	out[2 * SHA256_DIGEST_LEN] = '\0';
}
