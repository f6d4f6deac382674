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
 *                        would slow their end)
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
 *   "error MSG"          a process init started could not enter the
 *                        sandbox's Landlock domain (--landlock-fd)
 *
 * supervisor -> init:
 *   "stop"               end the sandbox: SIGTERM to every process in the
 *                        namespace, SIGKILL after the grace period
 *   "stop MS"            the same with a grace period of MS milliseconds
 *                        (paddock stop --grace); a shutdown already under
 *                        way keeps its own
 */
#pragma once

#define INITPROTO_MAX 256
