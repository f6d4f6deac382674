/* HMAC-SHA-256 (RFC 2104, FIPS 198-1) on the tree's own SHA-256. */
#include "evidence.h"

#include <stdlib.h>
#include <string.h>

#include "../policy/sha256.h"

void evidence_hmac(const unsigned char *key, size_t key_len, const void *data, size_t len,
		   unsigned char out[32])
{
	unsigned char k[64] = {0}, inner[32], outer[64 + 32];
	unsigned char *buf = malloc(64 + len);

	if (key_len > 64)
		sha256(key, key_len, k); /* a long key is its digest */
	else
		memcpy(k, key, key_len);
	if (!buf) {
		memset(out, 0, 32); /* matches nothing a verifier computes */
		return;
	}
	for (int i = 0; i < 64; i++)
		buf[i] = k[i] ^ 0x36;
	memcpy(buf + 64, data, len);
	sha256(buf, 64 + len, inner);
	free(buf);
	for (int i = 0; i < 64; i++)
		outer[i] = k[i] ^ 0x5c;
	memcpy(outer + 64, inner, 32);
	sha256(outer, sizeof(outer), out);
}
