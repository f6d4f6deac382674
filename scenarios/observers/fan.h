/* The fanotify event observer: write events on the fixture's filesystems
 * with the writer's identity (fan.c; docs/scenarios.md "Observers").
 *
 * Two modes. Permission mode (the fixture has a filesystem of its own and
 * the kernel accepts a FAN_CLASS_CONTENT group): every open(2) of a file
 * there is held by a FAN_OPEN_PERM event while the opener's identity is
 * read from /proc, then always allowed; a later write event from that
 * process gets the identity even if the writer has exited by then.
 * Notification mode (fallback): FAN_CLASS_NOTIF, identity read when the
 * write event is read, so a writer already gone has none. fan_mode() says
 * which ran and why. The observer never denies anything. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "fan_ident.h"

/* One write event (FAN_MODIFY and/or FAN_CLOSE_WRITE, merged by the
 * kernel) with its writer's identity when established (identity_ok; how
 * says from where). */
struct fan_event {
	uint64_t mask;
	pid_t pid;
	bool identity_ok;
	enum fan_how how;
	unsigned long long start;
	uid_t uid;
	pid_t sid;
	unsigned long pidns;
	char exe[256];
	char path[512]; /* for display only: a detached mount's path may be partial */
	dev_t dev;	/* fstat of the event's fd: what the event is about */
	ino_t ino;
	/* When: the event's position in the group's queue (1, 2, ...; the
	 * kernel queues in order, so it orders events exactly unless the
	 * kernel merged two into one; 0 unknown), and the clocks at the
	 * read(2) that returned it (CLOCK_MONOTONIC, CLOCK_REALTIME): an
	 * upper bound of when it happened, shared by a batch. */
	unsigned long long qseq;
	long long t_mono_ns, t_real_ns;
};

#define FAN_MAX_EVENTS 512

struct fan_health {
	bool permission;    /* every marked filesystem holds openers (FAN_OPEN_PERM) */
	bool pidfd;	    /* events carry the process's pidfd (FAN_REPORT_PIDFD) */
	size_t kept;	    /* write events kept */
	size_t dropped;	    /* not kept: broken mode, full buffer, read by the watchdog */
	size_t overflow;    /* FAN_Q_OVERFLOW seen: the kernel dropped events */
	size_t perm;	    /* permission events answered (always FAN_ALLOW) */
	size_t opens;	    /* openers' identities recorded */
	size_t late;	    /* answered by the watchdog before the identity read ended */
	size_t gone;	    /* opener gone (killed) before its identity was read */
	size_t resp_errors; /* a response the kernel refused (opener killed meanwhile) */
	size_t evicted;	    /* recorded opens overwritten (table full) */
	long max_answer_us; /* slowest permission answer, from read to response */
};

struct fan_observer; /* opaque: its threads may outlive a stuck fan_stop() */

/* Watch writes on the whole filesystem that holds root (FAN_MARK_FILESYSTEM:
 * the sandbox's bind mounts are other mounts of it), keeping events whose
 * path lies under root or that are on a filesystem of the fixture's own.
 * Permission mode only when root is a filesystem of its own (holding
 * every opener of a shared filesystem, / or /tmp, would stall the host);
 * PADDOCK_EVAL_FANOTIFY=notification forces the fallback. broken: keep no
 * event (HB-04's broken-collector arm). Needs CAP_SYS_ADMIN; 0, or a
 * negative errno and a reason in why. */
int fan_start(struct fan_observer **out, const char *root, bool broken, char *why, size_t n);
/* Also watch the filesystem at path (a fixture tmpfs of its own; held in
 * permission mode when it is a mount of its own). 0 or a negative errno. */
int fan_add_fs(struct fan_observer *o, const char *path);
/* The mode, for the record: class, events, pidfd, any fallback reason. */
const char *fan_mode(const struct fan_observer *o);
/* Wait until every event queued before this call has been read: write a
 * sentinel file under root and wait for its event (fanotify's queue is in
 * order). Returns 0, or -ETIMEDOUT (the collector lost contact). */
int fan_sync(struct fan_observer *o);
/* fan_sync(), and where its sentinel's event stood: its queue position
 * and read time (fan_event's qseq, t_mono_ns). Every event with a lower
 * qseq was queued before the sentinel's write, every higher one after. */
int fan_sync_at(struct fan_observer *o, unsigned long long *qseq, long long *t_mono_ns);
/* The observer's proof that it sees writes on the filesystem holding dir
 * (a watched one): write a probe file there and wait for its write event
 * from that filesystem (st_dev of the event's fd). 0, -ETIMEDOUT when it
 * was not seen within 2 s (that filesystem is not watched, or the
 * observer is blind), or a negative errno from creating the file. */
int fan_probe_fs(struct fan_observer *o, const char *dir);
/* Stop: answer anything pending, join both threads (bounded), close the
 * group (the kernel allows whatever is still queued), free. NULL is a
 * no-op. -EDEADLK when the reader did not stop in time: then the object is
 * left to the process's exit (the watchdog keeps answering) and not freed. */
int fan_stop(struct fan_observer *o);
/* Forget the kept events (recorded opens stay: a writer may have opened
 * before and write after). */
void fan_clear(struct fan_observer *o);
/* A copy of kept event k; false past the end. */
bool fan_event_at(struct fan_observer *o, size_t k, struct fan_event *out);
void fan_health(struct fan_observer *o, struct fan_health *out);
/* One line for the record: mode, counters, slowest answer. */
void fan_health_text(const struct fan_health *h, char *out, size_t n);
/* Events (not the harness's own) on filesystem dev; ino 0: any inode,
 * otherwise that inode (not_ino: every inode but that one). */
size_t fan_count_dev(struct fan_observer *o, dev_t dev, ino_t ino, bool not_ino,
		     size_t *identified);
