/* The ledger's writers' queue (ledger_queue.c): a robust process-shared
 * mutex in DIR/BUDGET.sqlite-queue, so that writers of a budget wait in
 * the kernel instead of polling SQLite's lock. Private to ledger.c. */
#pragma once

#include <stdbool.h>
#include <time.h>

#include "../include/err.h"

struct ledger_queue;

/* path opened read-write (created 0600), refused unless it is a regular
 * file of ours with no group or other bits, not a symlink: the fd, or
 * -errno with err's one line. The ledger's files are all opened so. */
int ledger_private_open(const char *path, struct err *err);

/* Open (create: 0600, one page) the queue's file path, refused unless it
 * is a regular file of ours with no group or other bits; its mutex made
 * anew when it is not of this boot (boot: /proc/sys/kernel/random/boot_id).
 * -errno with err's one line. */
int ledger_queue_open(const char *path, const char *boot, struct ledger_queue **out,
		      struct err *err);
/* Unlocks first if held. NULL is a no-op. */
void ledger_queue_close(struct ledger_queue *q);
/* Wait (asleep) for the queue until deadline (CLOCK_MONOTONIC): 0, held
 * (also when its last holder died holding it), or -ETIMEDOUT. Held
 * already by q: 0. */
int ledger_queue_lock(struct ledger_queue *q, const struct timespec *deadline);
/* Not held: a no-op. */
void ledger_queue_unlock(struct ledger_queue *q);
