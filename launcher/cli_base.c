/* The two helpers of the client verbs that the static paddock-exec
 * (client/paddock_exec.c) is built with too: stdio made safe, and the one
 * error line. */
#include "exec_client.h"

#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <unistd.h>

#include "../include/exitcodes.h"

int cli_ensure_stdio(void)
{
	for (int fd = 0; fd < 3; fd++) {
		if (fcntl(fd, F_GETFD) >= 0 || errno != EBADF)
			continue;
		/* A closed stdio fd would be handed to the next open() and
		 * then mistaken for the workload's stdin/stdout/stderr. */
		int n = open("/dev/null", O_RDWR);
		if (n < 0)
			return -errno;
		if (n != fd)
			return -EBADF;
	}
	return 0;
}

int cli_fail(const char *fmt, ...)
{
	va_list ap;

	fputs("paddock: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	return EXIT_LAUNCHER;
}
