/* Observers outside the workload: canary digests and snapshots, a
 * fanotify event observer with writer identity, /proc inventories. */
#pragma once

#include <limits.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "eval.h"

/* SHA-256 of a file's bytes as lower-case hex; negative errno on failure. */
int observe_sha256(const char *path, char hex[65]);

struct snapshot {
	bool ok;
	char sha256[65];
	off_t size;
	ino_t ino;
	dev_t dev;
	long long mtime_ns;
};
void observe_snapshot(const char *path, struct snapshot *out);
bool snapshot_equal(const struct snapshot *a, const struct snapshot *b);

/* One write event with the writer's identity, read from /proc/PID the
 * moment the event was read (the writer may be gone: identity_ok false). */
struct fan_event {
	uint64_t mask;
	pid_t pid;
	bool identity_ok;
	uid_t uid;
	pid_t sid;
	unsigned long pidns;
	char exe[256];
	char path[512]; /* for display only: a detached mount's path may be partial */
	dev_t dev;	/* fstat of the event's fd: what the event is about */
	ino_t ino;
};

#define FAN_MAX_EVENTS 512

struct fan_observer {
	int fd;
	int stop_pipe[2];
	pthread_t thread;
	bool running;
	bool broken; /* deliberately drop every event (HB-04 broken-collector arm) */
	char root[PATH_MAX];
	dev_t own_dev[4]; /* filesystems marked that hold nothing but the fixture */
	size_t n_own;
	pthread_mutex_t lock;
	struct fan_event ev[FAN_MAX_EVENTS];
	size_t n;
	size_t dropped;		/* events not kept: broken mode, full buffer */
	size_t overflow;	/* FAN_Q_OVERFLOW seen: the kernel dropped events */
	unsigned long seq_sent; /* sentinel files written by fan_sync() */
	unsigned long seq_seen; /* highest sentinel number whose write was seen */
};

/* Watch writes (FAN_MODIFY, FAN_CLOSE_WRITE) on the whole filesystem that
 * holds root (FAN_MARK_FILESYSTEM: the sandbox's bind mounts are other
 * mounts of it), keeping events whose path lies under root. Needs
 * CAP_SYS_ADMIN; negative errno and a reason otherwise. */
int fan_start(struct fan_observer *o, const char *root, bool broken, char *why, size_t n);
/* Wait until every event queued before this call has been read: write a
 * sentinel file under root and wait for its event (fanotify's queue is in
 * order). Returns 0, or -ETIMEDOUT (the collector lost contact). */
int fan_sync(struct fan_observer *o);
void fan_stop(struct fan_observer *o);
/* Events on path (exact) or, with prefix, below it; not the harness's own. */
size_t fan_count(struct fan_observer *o, const char *path, bool prefix, size_t *identified);
void fan_clear(struct fan_observer *o);
/* Also watch the filesystem at path (a fixture tmpfs of its own). */
int fan_add_fs(struct fan_observer *o, const char *path);
/* Events (not the harness's own) on filesystem dev; ino 0: any inode,
 * otherwise that inode (not_ino: every inode but that one). */
size_t fan_count_dev(struct fan_observer *o, dev_t dev, ino_t ino, bool not_ino,
		     size_t *identified);

/* A process as /proc shows it from the host. */
struct proc_entry {
	pid_t pid, ppid, sid;
	unsigned long long start; /* field 22 of /proc/PID/stat */
	unsigned long pidns;
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
int observe_connect_unix(const char *path, int timeout_ms, char *buf, size_t n);

/* Sockets listening on 127.0.0.1:port in the caller's network namespace
 * (/proc/net/tcp), with the uid that created each. Returns how many (up to
 * max uids filled) or a negative errno. */
int observe_tcp_listeners(int port, uid_t *uids, size_t max);

/* Processes whose command line is exactly "a0 a1" (a marker argument the
 * fixture chose), up to max. */
size_t inventory_find_cmdline(const char *a0, const char *a1, struct proc_entry *out, size_t max);
