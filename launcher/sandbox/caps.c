/* Dropping every capability (capabilities(7)). In the new user namespace the
 * child holds a full set over that namespace; none of it may reach the
 * workload, not even through an execve of a file with capabilities. */
#include "sandbox.h"

#include <linux/capability.h>
#include <sys/capability.h>
#include <sys/prctl.h>

static inline void cap_freep(cap_t *c)
{
	if (*c)
		cap_free(*c);
}
#define cleanup_cap __attribute__((cleanup(cap_freep)))

int caps_drop_all(struct err *err)
{
	cleanup_cap cap_t empty = NULL;
	int last = (int)cap_max_bits() - 1;

	/* The bounding set first: dropping it needs CAP_SETPCAP, which goes
	 * away with the rest below. */
	for (int c = 0; c <= last; c++) {
		if (prctl(PR_CAPBSET_DROP, c, 0, 0, 0) < 0 && errno != EINVAL)
			return err_sys(err, errno, "drop capability %d from the bounding set", c);
	}
	if (prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0) < 0)
		return err_sys(err, errno, "clear the ambient capabilities");
	empty = cap_init();
	if (!empty)
		return err_sys(err, errno, "cap_init");
	if (cap_set_proc(empty) < 0)
		return err_sys(err, errno, "drop the capability sets");
	return 0;
}

int caps_no_new_privs(struct err *err)
{
	/* No execve may gain privileges again (setuid bits, file caps). */
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
		return err_sys(err, errno, "PR_SET_NO_NEW_PRIVS");
	return 0;
}
