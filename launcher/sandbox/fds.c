/* File descriptors that reach the sandbox. */
#include "sandbox.h"

#include <fcntl.h>
#include <unistd.h>

int fds_keep_only(int *keep, size_t n, struct err *err)
{
	/* Move the kept fds out of the way first so that placing them at
	 * 3, 4, ... cannot clobber one another: copies at 3 + n or above
	 * are out of that range, and the lowest such numbers fit under the
	 * smallest open file limit that can hold them at all. */
	for (size_t i = 0; i < n; i++) {
		int fd = fcntl(keep[i], F_DUPFD_CLOEXEC, 3 + (int)n);

		if (fd < 0)
			return err_sys(err, errno, "dup");
		keep[i] = fd;
	}
	for (size_t i = 0; i < n; i++) {
		if (dup2(keep[i], 3 + (int)i) < 0)
			return err_sys(err, errno, "dup2");
	}
	/* Everything else goes, whatever opened it (close_range(2), 5.9+). */
	if (close_range(3 + (unsigned)n, ~0U, 0) < 0)
		return err_sys(err, errno, "close_range");
	return 0;
}
