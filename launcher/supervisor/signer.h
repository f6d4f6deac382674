/* signer.c: a plugin manifest's signer verified by ssh-keygen -Y verify
 * against the caller's allowed signers (docs/trust.md, "Signed
 * manifests"). */
#pragma once

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>

#include "../../include/err.h"

/* A manifest without a signer: 0, not verified. One that names one: 0
 * and verified (the key in key), or -EPERM with the one line why (no
 * allowed signers, no MANIFEST.sig, an unknown key, another identity's
 * key, a bad signature), -ENOENT without ssh-keygen. bytes: the manifest
 * as read and parsed. */
struct manifest;
struct signer_check {
	bool verified;
	char key[160]; /* "ED25519 key SHA256:..." */
	char allowed[PATH_MAX];
};
int plugin_signer_verify(const char *manifest, const char *bytes, size_t len,
			 const struct manifest *m, struct signer_check *out, struct err *err);
/* $XDG_CONFIG_HOME/paddock/allowed_signers (beside the trust store). */
int plugin_allowed_signers_path(char out[PATH_MAX], struct err *err);
/* Pure, for the above (unit-tested): is identity a line of ssh-keygen -Y
 * find-principals's output? The key of its -Y verify's "Good ... signature
 * for ID with KEY" line ("" when absent). */
bool signer_principal_listed(const char *out, const char *identity);
void signer_key_of(const char *out, char *key, size_t n);
