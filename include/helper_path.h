/* Where paddock's own programs are: beside the running one in the build
 * tree, in ../libexec/paddock when installed (PREFIX/bin/paddock ->
 * PREFIX/libexec/paddock/NAME). Shared by the launcher (paddock-init,
 * paddock-mediator, the budget helper: sandbox_find_helper()) and the
 * static front (client/paddock_exec.c, the launcher itself). Header-only:
 * libc alone, for the musl build of the front. */
#ifndef PADDOCK_HELPER_PATH_H
#define PADDOCK_HELPER_PATH_H

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

/* NAME's path into buf: 0, or -errno (-ENOENT: in neither place). */
static inline int helper_path(const char *name, char *buf, size_t size)
{
	char self[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	char *slash;

	if (n < 0)
		return -errno;
	self[n] = '\0';
	slash = strrchr(self, '/');
	if (!slash)
		return -ENOENT;
	*slash = '\0';
	if (snprintf(buf, size, "%s/%s", self, name) < (int)size && access(buf, X_OK) == 0)
		return 0;
	if (snprintf(buf, size, "%s/../libexec/paddock/%s", self, name) < (int)size &&
	    access(buf, X_OK) == 0)
		return 0;
	return -ENOENT;
}

#endif
