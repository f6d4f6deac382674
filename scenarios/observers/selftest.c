/* Test-only switches of the harness (selftest.h). */
#include "selftest.h"

#include <stdlib.h>
#include <string.h>

bool selftest_on(const char *name)
{
	const char *s = getenv("PADDOCK_EVAL_SELFTEST");
	size_t n = strlen(name);

	for (const char *p = s; p && *p;) {
		const char *end = strchr(p, ',');
		size_t k = end ? (size_t)(end - p) : strlen(p);

		if (k == n && strncmp(p, name, n) == 0)
			return true;
		p = end ? end + 1 : NULL;
	}
	return false;
}
