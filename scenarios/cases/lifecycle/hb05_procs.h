/* HB-05: a session's processes by identity, and kills of them by another
 * user (hb05_procs.c). A process is its host pid and its /proc start time
 * together, never a bare pid: a pid freed and handed to a newcomer must not
 * pass for the process the case watches. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#define IDENTS_MAX 16

struct ident {
	pid_t pid;
	unsigned long long start;
	char what[24]; /* "init", "in B's pid ns", "listener holder", "supervisor" */
};

struct idents {
	struct ident v[IDENTS_MAX];
	size_t n;
};

/* The processes holding a socket that listens on 127.0.0.1:port in the
 * caller's network namespace (/proc/net/tcp's inode, then every
 * /proc/PID/fd: root reads them all). Appended to out; how many, or a
 * negative errno. */
int idents_listener(int port, struct idents *out);
/* Every process in init's pid namespace (init included) and the
 * supervisor when its start time is as recorded. 0 or a negative errno. */
int idents_session(pid_t init, unsigned long long init_start, pid_t sup,
		   unsigned long long sup_start, struct idents *out);

/* After: how many of before are gone, and how many pids now name another
 * process (another start time). */
void idents_compare(const struct idents *before, size_t *ended, size_t *replaced);
/* Is the process (pid and start) of a among b's? */
bool idents_has(const struct idents *b, const struct ident *a);

/* Kill every process of t, as uid:gid (a child that drops fully, so the
 * kernel's permission check is what decides): SIGKILL by kill(2), then by
 * pidfd_send_signal(2), each only while the pid still has its start time.
 * Counts attempts, EPERM refusals and accepted kills. 0 or a negative
 * errno (the child could not run). */
int idents_kill_as(const struct idents *t, uid_t uid, gid_t gid, size_t *attempts, size_t *refused,
		   size_t *accepted, char *log, size_t log_n);
