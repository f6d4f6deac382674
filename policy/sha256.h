/* A small self-contained SHA-256 (FIPS 180-4), enough to fingerprint a
 * policy without pulling in a crypto library. */
#pragma once

#include <stdbool.h>
#include <stddef.h>

#define SHA256_DIGEST_LEN 32

/* Digest of len bytes at data (data may be NULL when len is 0). */
void sha256(const void *data, size_t len, unsigned char out[SHA256_DIGEST_LEN]);

/* Tests only: on, the portable block function even where the CPU has the
 * SHA extensions (the path every other CPU takes); off, detection again. */
void sha256_force_portable(bool on);

/* Lower-case hex of a digest, NUL-terminated. */
void sha256_hex(const unsigned char digest[SHA256_DIGEST_LEN], char out[2 * SHA256_DIGEST_LEN + 1]);
