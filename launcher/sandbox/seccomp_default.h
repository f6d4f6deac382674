/* The default seccomp profile, compiled at build time (gen/seccomp_default.c)
 * and embedded in paddock: the generated data, private to sandbox/ (its
 * users go through seccomp_default_applies() and seccomp_default_info() in
 * sandbox.h). */
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
