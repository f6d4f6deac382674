/* Who wrote: matching a fanotify write event to the writer's identity,
 * pure (no syscalls; malloc only), so tests/unit/test_eval.c pins every
 * rule. The observer (fan.c) feeds it what /proc said and when. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

/* One process as /proc showed it; pid and start time name it. */
struct fan_ident {
	pid_t pid;
	unsigned long long start; /* field 22 of /proc/PID/stat (clock ticks since boot) */
	uid_t uid;
	pid_t sid;
	unsigned long pidns;
	char exe[256];
};

/* One open(2) of a watched file, its opener's identity read while the
 * opener was held in open(2) by a FAN_OPEN_PERM event (and before the
 * observer allowed it). */
struct fan_open {
	struct fan_ident id;
	dev_t dev; /* the opened object (fstat of the event's fd) */
	ino_t ino;
	unsigned long long seq; /* position of the event in the group's queue */
	long cursor;		/* pid allocation cursor (ns_last_pid) while held; -1 unknown */
};

/* The last cap opens, oldest overwritten first (counted in evicted). */
struct fan_opens {
	struct fan_open *v;
	size_t cap, n, next;
	size_t evicted;
};

/* 0 or -ENOMEM; fan_opens_free(NULL-initialised table) is a no-op. */
int fan_opens_init(struct fan_opens *t, size_t cap);
void fan_opens_free(struct fan_opens *t);
void fan_opens_add(struct fan_opens *t, const struct fan_open *o);

/* What the observer knows about the event's pid when it reads a write event. */
struct fan_now {
	bool live;	     /* a full identity (exe, stat, status, ns) was read just now */
	bool verified;	     /* ... and the event's own pidfd showed the process unreaped after
				the read: it is the writer, not a process that reused its pid */
	struct fan_ident id; /* when live */
	bool present;	     /* /proc/PID/stat readable now (a zombie too): start below */
	unsigned long long start;
	long cursor; /* pid allocation cursor after the event was read; -1 unknown */
};

/* How a write event got (or did not get) its writer's identity. */
enum fan_how {
	FAN_HOW_NONE,		 /* writer gone and no recorded open by that pid of that file */
	FAN_HOW_LIVE,		 /* read when the event was read, verified by the event's pidfd */
	FAN_HOW_LIVE_OPEN,	 /* read live; the same pid and start time opened the file */
	FAN_HOW_LIVE_UNVERIFIED, /* read live, no pidfd and no recorded open: as a
				    notification-only observer (pid reuse not excluded) */
	FAN_HOW_OPEN_HELD,	 /* writer gone (zombie); its recorded open has the same start
				    time, so the pid has not changed hands */
	FAN_HOW_OPEN_FREED,	 /* writer reaped; the pid cursor has not come round to its pid
				    since the recorded open, so no other process had that pid */
	FAN_HOW_REUSED,		 /* another process (other start time) holds the pid: ambiguous */
	FAN_HOW_STALE,		 /* writer reaped and the pid may have been handed out again
				    (cursor passed it, or cursor unknown): not attributed */
};

/* The writer of a write event from pid on (dev, ino) at queue position seq.
 * Uses the latest recorded open by that pid of that object queued before
 * the event. Fills out (when the result is identified) and returns how. */
enum fan_how fan_ident_match(const struct fan_opens *t, pid_t pid, dev_t dev, ino_t ino,
			     unsigned long long seq, const struct fan_now *now,
			     struct fan_ident *out);
bool fan_how_identified(enum fan_how h);
const char *fan_how_name(enum fan_how h);

/* Whether the cyclic pid allocator, seen at cursor from and later at to,
 * may have handed out pid in between (its net advance covers pid). One
 * full cycle or more between the two looks like no advance: the residual
 * that docs/scenarios.md states. */
bool fan_pid_cursor_passed(long from, long to, pid_t pid);
