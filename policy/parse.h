/* Parsing split across files (private to policy/). */
#pragma once

#include <cjson/cJSON.h>

#include "../include/err.h"
#include "policy.h"

/* Walk the "mounts" array into p->mounts; strings as written. */
int policy_parse_mounts(const cJSON *arr, struct policy *p, struct err *err);

/* "<path>: invalid size ..." or "<path>: size ... is too large" for the
 * result r of policy_parse_size(); hint is appended to the examples. */
int policy_size_error(int r, const char *path, const char *s, const char *hint, struct err *err);
