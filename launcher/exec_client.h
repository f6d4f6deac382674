/* paddock exec's client, in two binaries: the paddock launcher's `exec`
 * verb (cmd_exec.c) and the static paddock-exec (client/paddock_exec.c),
 * which finds the session without cJSON (session/peek.c) and hands
 * anything else to the first. What both do once they hold a connection to
 * the session's supervisor: the request with fds 0-2, the caller's
 * terminal raw with -t, signals passed on, the reply as an exit status. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "../include/err.h"

struct exec_args {
	const char *cwd;
	const char **setenv;
	size_t n_setenv;
	const char *session;
	char **argv;
	int tty; /* 1 -t, 0 --no-tty, -1 when stdin is a terminal */
};

/* argv from the verb on (argv[0] "exec" or "paddock-exec"); prog names
 * us in --help. 0, 1 after --help, or -EINVAL with err set. a->setenv is
 * malloc'd. */
int exec_client_parse(int argc, char **argv, const char *prog, struct exec_args *a,
		      struct err *err);
/* Both clients' start: the options (prog names us in --help), the tty
 * decided, the request malloc'd into *pkt. -1 to go on, else the exit
 * status (0 after --help; 125 with the line printed). */
int exec_client_start(int argc, char **argv, const char *prog, struct exec_args *a, char **pkt,
		      size_t *len);
/* Send pkt on fd (connected to session id's supervisor) and wait for the
 * command's end: its exit status (128+N after signal N), or 125 with the
 * line printed. */
int exec_client_run(const struct exec_args *a, int fd, const char *id, const char *pkt, size_t len);

/* cli_base.c: make sure fds 0-2 are open (on /dev/null), so a closed stdio
 * fd cannot be taken by something we open (then handed to the sandbox as
 * its stdio); and the one error line, "paddock: MSG", EXIT_LAUNCHER.
 * cli_recv_reply(): recv(2) of the supervisor's reply into buf (NUL-ended,
 * at most size - 1 bytes), retried on EINTR; a reply that came before the
 * supervisor closed with our request unread ("error busy") is read past
 * the ECONNRESET the kernel reports first (a reset with nothing before it
 * reads as the end, 0). -1 with recv's errno otherwise. */
int cli_ensure_stdio(void);
int cli_fail(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
ssize_t cli_recv_reply(int fd, char *buf, size_t size, int flags);
