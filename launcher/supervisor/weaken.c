/* The weakening knobs (--weaken NAME): names, warnings, and what is in
 * effect for a run (the record, --explain). */
#include "supervisor.h"

#include <string.h>

/* The weakening knobs, in bit order: name, and the warning printed when
 * one is in effect. */
static const char *const weakenings[WEAKEN_COUNT][2] = {
    {"rw-binds", "read-only binds are writable in this sandbox"},
    {"no-pidns", "no pid namespace: expiry can only kill the direct child"},
    {"host-net", "no network namespace: the workload has the host's network"},
    {"no-seccomp", "no seccomp filter: every system call is open to the workload"},
    {"no-landlock", "no Landlock rules: writes are limited by the mounts alone"},
    {"no-new-session", "the workload shares the caller's session and terminal (TIOCSTI)"},
    {"direct-stdio", "the workload gets the caller's fds 0-2: chmod, chown and xattrs through "
		     "/dev/stdin reach the host's file or terminal"},
};

const char *weaken_name(unsigned bit)
{
	for (int i = 0; i < WEAKEN_COUNT; i++)
		if (bit == 1u << i)
			return weakenings[i][0];
	return "unknown";
}

const char *weaken_warning(unsigned bit)
{
	for (int i = 0; i < WEAKEN_COUNT; i++)
		if (bit == 1u << i)
			return weakenings[i][1];
	return "unknown";
}

int weaken_parse(const char *name, unsigned *out)
{
	for (int i = 0; i < WEAKEN_COUNT; i++) {
		if (strcmp(name, weakenings[i][0]) == 0) {
			*out = 1u << i;
			return 0;
		}
	}
	return -EINVAL;
}

size_t weakenings_in_effect(unsigned weaken, const struct policy *p, const char **out, size_t max)
{
	size_t n = 0;

	for (unsigned bit = 1; bit < (1u << WEAKEN_COUNT); bit <<= 1)
		if ((weaken & bit) && n < max)
			out[n++] = weaken_name(bit);
	if (p && p->seccomp_profile == POLICY_SECCOMP_NONE && n < max)
		out[n++] = "seccomp-profile-none";
	return n;
}
