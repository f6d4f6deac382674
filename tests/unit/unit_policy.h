/* A unit test's policy from a JSON text (workspace, home and pwd "/"):
 * one that does not load fails the test with the parser's message.
 * Include it after unit.h and a header that declares policy_load_buffer. */
#pragma once

#include <string.h>

static inline struct policy *unit_policy(const char *json)
{
	static const struct policy_vars vars = {.workspace = "/", .home = "/", .pwd = "/"};
	struct policy *p = NULL;
	struct err err = {0};

	cr_assert_eq(policy_load_buffer(json, strlen(json), &vars, &p, &err), 0, "%s", err.msg);
	return p;
}
