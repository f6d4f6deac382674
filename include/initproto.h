/* The protocol between the supervisor (launcher parent) and paddock-init,
 * over one SOCK_SEQPACKET socket that init receives as --control-fd N.
 * One message per packet, ASCII, no trailing newline, at most
 * INITPROTO_MAX bytes.
 *
 * init -> supervisor:
 *   "started PID"        the workload was forked (PID as seen inside)
 *   "exec-error ERRNO"   execvp of the workload failed (then init exits
 *                        126 or 127 after sending "exit 126|127")
 *   "exit CODE"          the workload exited with CODE
 *   "signal N"           the workload was killed by signal N
 *   "term PID COMM"      init sent SIGTERM to a process left over after
 *                        the workload ended or on "stop"
 *   "kill PID COMM"      that process was still alive after the grace
 *                        period and got SIGKILL (as PID 1, "term" and
 *                        "kill" are sent together just before "done": a
 *                        thousand reports sent while the processes die
 *                        would slow their end); at most 64 processes per
 *                        signal are named
 *   "term-more N"        N more processes got SIGTERM, not named (just
 *   "kill-more N"        before "done"; likewise for SIGKILL)
 *   "done"               no process but init is left; init exits next
 *   "service-started NAME PID"
 *                        a service of --service was started
 *   "service-ended NAME CAUSE exit:N|signal:N"
 *                        its first process ended; CAUSE is exited,
 *                        lease-expired, main-ended or stopped
 *   "service-ended NAME exec-error ERRNO" (or landlock-error ERRNO)
 *                        it could not be started
 *   "retained"           the workload ended and everything but the leased
 *                        services' sessions is gone; init goes on until
 *                        they end (or "stop")
 *   "error ERRNO MSG"    a process init started could not enter the
 *                        sandbox's Landlock domain (--landlock-fd)
 *   "deadline"           init reached --deadline-ms itself (the supervisor
 *                        did not end the sandbox in time, e.g. it was
 *                        stopped) and starts the shutdown
 *
 * supervisor -> init:
 *   "stop"               end the sandbox: SIGTERM to every process in the
 *                        namespace, SIGKILL after the grace period
 *   "stop MS"            the same with a grace period of MS milliseconds
 *                        (paddock stop --grace); a shutdown already under
 *                        way keeps its own
 */

/* Before exec: the same socket, between the launcher's parent and the child
 * it cloned, until the child execs paddock-init (launcher/sandbox/enter.c
 * has the map of the steps).
 *
 * parent -> child:
 *   "idmap INDEX" + fd   (root caller only, before "go") the detached,
 *                        idmapped tree for writable BIND op INDEX, passed
 *                        with SCM_RIGHTS; the child attaches it as given
 *   "go"                 the id maps are written: the child may mount
 *   "protect LINE"       one per PROTECT op of the plan, LINE as
 *                        mounts_protect_encode() writes it ("INDEX SKIPPED
 *                        TARGETLEN DEV INO"); the child waits for them just
 *                        before its first PIN or PROTECT op
 *   "protect-done"       the last of them (sent only if there was one)
 *
 * child -> parent:
 *   "pty"                with SCM_RIGHTS: the master of the pty pair the
 *                        child opened on the sandbox's /dev/ptmx (terminal
 *                        mode); the slave is its fds 0-2
 *   "applied FIRST STATES"
 *                        after the mount table was verified: what the child
 *                        did with plan ops FIRST, FIRST+1, ..., one
 *                        character each (INITPROTO_APPLIED_*); as many
 *                        packets as the plan needs, in order
 *   "error ERRNO MSG"    the setup failed (ERRNO a positive errno); the
 *                        child exits EXIT_LAUNCHER next
 *
 * Every message is parsed by a function the fuzz replay covers
 * (tests/fuzz/fuzz_proto.c): initproto_error_parse() here,
 * mounts_protect_decode(), mounts_idmap_decode() and the supervisor's
 * outcome_apply(). The "pty" message carries only an fd (SCM_RIGHTS) and
 * the word.
 */
#pragma once

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "err.h"

#define INITPROTO_MAX 256

/* The fds of the sandbox's first process when it execs paddock-init, and so
 * init's own: 0-2, then these in this order, then (close-on-exec) the init
 * memfd being executed. Nothing else survives (fds_keep_only()). */
enum initproto_fd {
	INITPROTO_FD_CONTROL = 3,  /* the control socket: --control-fd */
	INITPROTO_FD_LANDLOCK = 4, /* the Landlock ruleset, when enabled: --landlock-fd */
	/* Then, when the policy has services, their stdout and stderr (the
	 * session's output files): --service-stdout-fd, --service-stderr-fd,
	 * numbered on from the last of the above. */
};

/* One character per plan op in "applied". */
enum initproto_applied {
	INITPROTO_APPLIED_DONE = 'm',	 /* performed as planned */
	INITPROTO_APPLIED_SKIPPED = 's', /* an optional bind whose source is missing */
	INITPROTO_APPLIED_SYMLINK = 'l', /* a symlink source recreated as a symlink */
};

/* "error ERRNO MSG" into buf (a message too long is cut to the packet):
 * the length written, or -ENOSPC when not even "error N" fits. */
static inline int initproto_error_format(char *buf, size_t size, int code, const char *msg)
{
	int n;

	if (size > INITPROTO_MAX)
		size = INITPROTO_MAX;
	if (code < 0)
		code = -code;
	n = snprintf(buf, size, "error %d %s", code ? code : EIO, msg ? msg : "");
	if (n < 0 || size < 16)
		return -ENOSPC;
	return (size_t)n < size ? n : (int)size - 1;
}

/* Parse "error ERRNO MSG" into out (code and message): 0, or -EINVAL when m
 * is not such a message (ERRNO a decimal in 1..4095). */
static inline int initproto_error_parse(const char *m, struct err *out)
{
	char *end;
	long code;

	if (strncmp(m, "error ", 6) != 0 || m[6] < '1' || m[6] > '9')
		return -EINVAL;
	errno = 0;
	code = strtol(m + 6, &end, 10);
	if (errno || code < 1 || code > 4095 || (*end != ' ' && *end != '\0'))
		return -EINVAL;
	out->code = (int)code;
	snprintf(out->msg, sizeof(out->msg), "%s", *end ? end + 1 : "");
	return 0;
}
