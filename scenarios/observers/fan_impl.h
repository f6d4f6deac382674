/* Private to the fanotify observer (fan.c: set-up and the caller's side;
 * fan_read.c: the reader and watchdog threads). */
#pragma once

#include <limits.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <sys/fanotify.h>

#include "fan.h"

#define NOTE_MASK (FAN_MODIFY | FAN_CLOSE_WRITE)
#define PERM_MASK (FAN_OPEN_PERM | NOTE_MASK)

/* A permission answer normally takes tens of microseconds (four small
 * /proc reads). Past this budget the watchdog allows the open without the
 * identity rather than hold the workload longer. */
#define FAN_ANSWER_BUDGET_MS 200
#define FAN_STALL_MS	     1000
#define FAN_WATCHDOG_TICK_MS 20
#define FAN_STOP_MS	     3000
#define FAN_OPENS_CAP	     4096
#define FAN_BATCH	     8192
/* A batch of FAN_BATCH bytes holds at most this many events (FAN_EVENT_OK
 * needs FAN_EVENT_METADATA_LEN bytes each), so every permission event of a
 * batch has a slot. */
#define FAN_PEND_MAX (FAN_BATCH / FAN_EVENT_METADATA_LEN + 1)

struct pend {
	int fd;
	long long t_ns;
	bool answered;
};

struct fan_observer {
	int fd;
	int stop_pipe[2]; /* reader */
	int wd_pipe[2];	  /* watchdog */
	pthread_t reader, watchdog;
	bool reader_up, watchdog_up;
	bool permission, pidfd, broken;
	bool cursor_ok; /* ns_last_pid readable: reaped writers can be attributed */
	pid_t self;
	char mode[200];
	char root[PATH_MAX];
	dev_t own_dev[4]; /* filesystems marked that hold nothing but the fixture */
	size_t n_own;

	/* The reader's alone: matching needs no lock. */
	struct fan_opens opens;
	unsigned long long seq;

	/* Answers, shared with the watchdog. */
	pthread_mutex_t resp_lock;
	struct pend pend[FAN_PEND_MAX];
	size_t n_pend;
	long max_answer_us;
	atomic_llong busy_since_ns; /* the reader is inside a batch since; 0 idle */
	atomic_int reader_done;
	atomic_size_t n_perm, n_late, n_gone, n_resp_err, n_wd_lost;

	/* Results, shared with the caller. */
	pthread_mutex_t lock;
	struct fan_event ev[FAN_MAX_EVENTS];
	size_t n, dropped, overflow, n_opens, n_evicted;
	unsigned long seq_sent; /* sentinel files written by fan_sync() */
	unsigned long seq_seen; /* highest sentinel number whose write was seen */
	/* ... and that sentinel event's queue position and read time. */
	unsigned long long seen_qseq;
	long long seen_t_mono_ns;
	/* fan_probe_fs(): probes written, and the last ones seen (number and
	 * the filesystem the event's fd was on). */
	unsigned long probe_sent;
	struct {
		unsigned long seq;
		dev_t dev;
	} probe_seen[16];
	size_t n_probe_seen;
	/* Test-only (PADDOCK_EVAL_SELFTEST=fan-keep-nothing, make
	 * eval-selftest): keep no event at all, sentinels and probes
	 * included, and count nothing: a silently blind observer. */
	bool keep_nothing;
};

/* The threads (fan_read.c); arg is the observer. */
void *fan_reader(void *arg);
void *fan_watchdog(void *arg);
/* The pid allocator's cursor in our pid namespace, -1 when unreadable. */
long fan_pid_cursor(void);
