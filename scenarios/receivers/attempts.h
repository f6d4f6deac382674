/* The attempt receiver (HB-08): a Unix socket in the fixture's task
 * directory, served by a thread of the harness outside every sandbox.
 * The mock tool connects once per attempt and says "exit N", the exit
 * code it is about to exit with; the receiver reads the peer's host pid
 * (SO_PEERCRED: the receiver is in the host's pid namespace) and, while
 * the tool waits for the answer, its identity from the host's /proc: start
 * time, uid, pid and user namespace. So attempts are counted, and the
 * tool's own outcome known, by something the workload cannot write; the
 * session's user namespace is where the live inventory looks afterwards.
 * A harness fixture, not an enforcement point (README). */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

struct attempt_report {
	int exit_code;	 /* what the tool said it exits with */
	bool identified; /* the peer's identity was read while it waited (never via the FIFO) */
	pid_t pid;	 /* host pid of the reporting process */
	unsigned long long start;
	uid_t uid;
	unsigned long pidns, userns;
	/* The receiver holds both namespaces open until attempts_rx_stop():
	 * a namespace's inode number is reused once it is freed, so without
	 * them a later sandbox (anyone's) could carry the same number. */
	int pidns_fd, userns_fd;
};

struct attempt_rx;

/* Listen on path (mode 0666, so the workload user can connect), and read
 * the FIFO fifo (created, 0666): the fallback of a tool that has no
 * socket client (the Docker arm's busybox image), counted without
 * identity. 0 or a negative errno. */
int attempts_rx_start(struct attempt_rx **out, const char *path, const char *fifo);
/* Reports received so far. */
size_t attempts_rx_count(struct attempt_rx *rx);
/* Wait up to timeout_ms until at least n reports are in; the count. */
size_t attempts_rx_wait(struct attempt_rx *rx, size_t n, int timeout_ms);
/* A copy of report k; false past the end. */
bool attempts_rx_at(struct attempt_rx *rx, size_t k, struct attempt_report *out);
/* Stop the thread, close and unlink the socket, free. NULL is a no-op. */
void attempts_rx_stop(struct attempt_rx *rx);
