/* An environment variable's name, as a policy, --setenv and paddock exec
 * accept it: alone in its file, so that the static paddock-exec
 * (client/paddock_exec.c) can be built with it and without the rest of
 * policy/. */
#include "policy.h"

bool policy_env_name_ok(const char *s, size_t len)
{
	if (len == 0 || (s[0] >= '0' && s[0] <= '9'))
		return false;
	for (size_t i = 0; i < len; i++) {
		char c = s[i];

		if (!((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
		      c == '_'))
			return false;
	}
	return true;
}
