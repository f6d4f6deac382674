/* The default seccomp profile, compiled at build time (gen/seccomp_default.c)
 * and embedded in paddock. */
#pragma once

#include <stdbool.h>
#include <stddef.h>

#include "sandbox.h"

extern const unsigned char paddock_default_bpf[];
extern const size_t paddock_default_bpf_len;
extern const unsigned paddock_default_allowed;
extern const unsigned paddock_default_rules;
extern const char paddock_default_bpf_sha256[];
extern const char *const paddock_default_denied[];
extern const size_t paddock_default_n_denied;

/* Does this policy ask for exactly the default profile (no additions, the
 * default action EPERM)? Then the embedded program is what seccomp_build()
 * would produce. */
bool seccomp_default_applies(const struct policy *p);

/* Fill info from the embedded program, as seccomp_build() would. -ENOMEM. */
int seccomp_default_info(struct seccomp_info *info);
