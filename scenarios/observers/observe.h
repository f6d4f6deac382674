/* Observers outside the workload: canary digests and snapshots, /proc
 * inventories, clients; the fanotify event observer is fan.h. */
#pragma once

#include <limits.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "../lib/eval.h"
#include "fan.h"

/* Up to n-1 bytes of a file (not through a final symlink), NUL-terminated:
 * the length or -errno. The harness's one small-file reader. */
int read_file(const char *path, char *buf, size_t n);

/* SHA-256 of a file's bytes as lower-case hex; negative errno on failure. */
int observe_sha256(const char *path, char hex[65]);

/* The digest's proof that it sees bytes: two files of other bytes in dir
 * must digest apart. 0, -EIO when they do not (a digest that cannot see a
 * change is no evidence), or a negative errno. */
int observe_digest_proof(const char *dir);

struct snapshot {
	bool ok;
	char sha256[65];
	off_t size;
	ino_t ino;
	dev_t dev;
	mode_t mode;
	long long mtime_ns;
	uid_t uid;
	gid_t gid;
};
void observe_snapshot(const char *path, struct snapshot *out);
bool snapshot_equal(const struct snapshot *a, const struct snapshot *b);

/* A process as /proc shows it from the host. */
struct proc_entry {
	pid_t pid, ppid, sid;
	unsigned long long start; /* field 22 of /proc/PID/stat */
	unsigned long pidns;
	unsigned long userns; /* inode of /proc/PID/ns/user */
	uid_t uid;
	char comm[32];
};

/* All processes; the caller frees *out. */
int inventory_scan(struct proc_entry **out, size_t *n);
/* pid is alive with this start time (not a reused pid). */
bool inventory_alive(pid_t pid, unsigned long long start);
int inventory_read(pid_t pid, struct proc_entry *out);
/* End pid (only if it still has this start time) with SIGKILL via a pidfd. */
int inventory_kill(pid_t pid, unsigned long long start);

/* A client's view of a service, from outside the sandbox: connect to
 * 127.0.0.1:port (or a unix socket), read until EOF or n-1 bytes, trailing
 * newline trimmed. 0, or a negative errno (-ECONNREFUSED, -ETIMEDOUT ...). */
int observe_connect_tcp(int port, int timeout_ms, char *buf, size_t n);
/* The same after sending req first (one request of the harness's own, such
 * as a receiver's probe). */
int observe_request_tcp(int port, const char *req, int timeout_ms, char *buf, size_t n);
int observe_connect_unix(const char *path, int timeout_ms, char *buf, size_t n);

/* Sockets listening on 127.0.0.1:port in the caller's network namespace
 * (/proc/net/tcp), with the uid that created each. Returns how many (up to
 * max uids filled) or a negative errno. */
int observe_tcp_listeners(int port, uid_t *uids, size_t max);

/* Processes whose command line is exactly "a0 a1" (a marker argument the
 * fixture chose), up to max. */
size_t inventory_find_cmdline(const char *a0, const char *a1, struct proc_entry *out, size_t max);
