/* The meaning of a parsed policy (private to policy/): variables, paths,
 * names, mount order and cross-field rules. */
#pragma once

#include <stdbool.h>
#include <stddef.h>

#include "../include/err.h"
#include "policy.h"

/* What parse.c saw that the final struct cannot tell. */
struct policy_parse_info {
	bool hostname_set; /* "hostname" was given explicitly */
	/* Keys given in "seccomp", for the rules that tie them together. */
	bool seccomp_default_action_set, seccomp_errno_set, seccomp_allow_set, seccomp_deny_set;
};

/* Expand variables in p's paths and environment values in place, then check
 * every rule of docs/policy.md that is not about JSON types. p holds the
 * strings as written; bind mounts without "target" have target == NULL. */
int policy_validate(struct policy *p, const struct policy_parse_info *info,
		    const struct policy_vars *vars, struct err *err);
