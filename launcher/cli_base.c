/* The helpers of the client verbs that the static paddock-exec
 * (client/paddock_exec.c) is built with too: stdio made safe, the one
 * error line, and the supervisor's reply read. */
#include "exec_client.h"

#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdarg.h>
#include <stdio.h>
#include <sys/socket.h>
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

ssize_t cli_recv_reply(int fd, char *buf, size_t size, int flags)
{
	ssize_t n;
	bool reset = false;

	for (;;) {
		n = recv(fd, buf, size - 1, flags);
		if (n < 0 && errno == EINTR)
			continue;
		/* A peer closed with data of ours unread: the kernel reports
		 * ECONNRESET once, before what the peer sent first. */
		if (n < 0 && errno == ECONNRESET && !reset) {
			reset = true;
			flags |= MSG_DONTWAIT;
			continue;
		}
		break;
	}
	if (n >= 0)
		buf[n] = '\0';
	return n;
}
