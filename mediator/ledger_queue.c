/* The ledger's writers' queue (docs/budget.md, "The ledger and its
 * durability"): a robust, process-shared mutex in a small mapped file
 * beside the ledger, DIR/BUDGET.sqlite-queue, taken around each write
 * transaction of ours (BEGIN IMMEDIATE..COMMIT) and released before the
 * flush. Without it every writer that finds SQLite's write lock taken
 * polls it (SQLite has no blocking lock: its busy handler sleeps and
 * retries), and 32 callers' wake-ups ate this machine's two cores: 1,738
 * pairs a second against 3,227 with 8. A waiter here sleeps in the kernel
 * (a futex) until the holder unlocks, which wakes one waiter, not all.
 *
 * SQLite's own locking stays the guarantee: a writer without the queue
 * (the sqlite3 shell, an older paddock) is still safe, it only waits by
 * polling as before. Why this and not an OFD lock (fcntl F_OFD_SETLKW):
 * that call has no timeout, and the busy timeout is a contract (a ledger
 * locked past it refuses, never hangs); pthread_mutex_clocklock() has one.
 * Why robust: the kernel marks the mutex of a thread that dies holding it
 * (SIGKILL included: the robust list is walked at exit, futex(2),
 * set_robust_list(2)) and the next locker gets EOWNERDEAD; the mutex
 * guards no data of its own (the state is SQLite's), so it is made
 * consistent and used on. Not PI: a PI futex names its owner by a tid in
 * the kernel's lookup of the locker's pid namespace, and the mediators of
 * a budget need not share one. */
#include "ledger_queue.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#define QUEUE_MAGIC 0x70646b71u /* "pdkq" */
#define QUEUE_READY 1u
#define QUEUE_SIZE  4096

/* The file. A mutex is only meaningful within one boot (its word names
 * a thread by its tid): one of an earlier boot is made anew, under the
 * file's flock, before anyone uses it. */
struct queue_file {
	uint32_t magic;
	uint32_t size; /* sizeof(struct queue_file): a layout of another build is made anew */
	char boot[40];
	_Atomic uint32_t ready; /* set last: the rest is made */
	pthread_mutex_t m;
};

struct ledger_queue {
	int fd;
	struct queue_file *f;
	bool held;
};

_Static_assert(sizeof(struct queue_file) <= QUEUE_SIZE, "the queue's file is one page");

static bool usable(const struct queue_file *f, const char *boot)
{
	return atomic_load_explicit(&f->ready, memory_order_acquire) == QUEUE_READY &&
	       f->magic == QUEUE_MAGIC && f->size == sizeof(*f) && strcmp(f->boot, boot) == 0;
}

/* The mutex made anew (the file's flock held: no one else makes it, and
 * no one uses one that is not ready). */
static int make(struct queue_file *f, const char *boot)
{
	pthread_mutexattr_t a;
	int r;

	atomic_store_explicit(&f->ready, 0, memory_order_release);
	memset(&f->m, 0, sizeof(f->m));
	r = pthread_mutexattr_init(&a);
	if (r == 0)
		r = pthread_mutexattr_setpshared(&a, PTHREAD_PROCESS_SHARED);
	if (r == 0)
		r = pthread_mutexattr_setrobust(&a, PTHREAD_MUTEX_ROBUST);
	if (r == 0)
		r = pthread_mutex_init(&f->m, &a);
	pthread_mutexattr_destroy(&a);
	if (r != 0)
		return -r;
	f->magic = QUEUE_MAGIC;
	f->size = sizeof(*f);
	snprintf(f->boot, sizeof(f->boot), "%s", boot);
	atomic_store_explicit(&f->ready, QUEUE_READY, memory_order_release);
	return 0;
}

int ledger_private_open(const char *path, struct err *err)
{
	struct stat st;
	int fd = open(path, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC | O_NOCTTY, 0600);

	if (fd < 0)
		return err_sys(err, errno, "ledger: %s", path);
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) || st.st_uid != geteuid() ||
	    (st.st_mode & 077)) {
		close(fd);
		return err_set(err, EPERM,
			       "ledger: %s: must be a regular file of ours with mode 0600", path);
	}
	return fd;
}

int ledger_queue_open(const char *path, const char *boot, struct ledger_queue **out,
		      struct err *err)
{
	struct ledger_queue *q;
	struct stat st;
	int fd, r = 0;
	void *p;

	fd = ledger_private_open(path, err);
	if (fd < 0)
		return fd;
	/* Made at most once at a time: the file's size and its mutex. flock
	 * (not the mutex) because it is what must exist first, and the
	 * kernel drops it with its holder. */
	if (flock(fd, LOCK_EX) < 0) {
		r = err_sys(err, errno, "ledger: lock %s", path);
		close(fd);
		return r;
	}
	if (fstat(fd, &st) == 0 && st.st_size < QUEUE_SIZE && ftruncate(fd, QUEUE_SIZE) < 0)
		r = err_sys(err, errno, "ledger: %s", path);
	p = r < 0 ? MAP_FAILED : mmap(NULL, QUEUE_SIZE, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (r == 0 && p == MAP_FAILED)
		r = err_sys(err, errno, "ledger: map %s", path);
	if (r == 0 && !usable(p, boot)) {
		r = make(p, boot);
		if (r < 0)
			err_set(err, -r, "ledger: %s: the queue's mutex: %s", path, strerror(-r));
	}
	(void)flock(fd, LOCK_UN);
	q = r == 0 ? calloc(1, sizeof(*q)) : NULL;
	if (!q) {
		if (p != MAP_FAILED)
			munmap(p, QUEUE_SIZE);
		close(fd);
		return r < 0 ? r : err_set(err, ENOMEM, "out of memory");
	}
	q->fd = fd;
	q->f = p;
	*out = q;
	return 0;
}

void ledger_queue_close(struct ledger_queue *q)
{
	if (!q)
		return;
	ledger_queue_unlock(q);
	munmap(q->f, QUEUE_SIZE);
	close(q->fd);
	free(q);
}

int ledger_queue_lock(struct ledger_queue *q, const struct timespec *deadline)
{
	int r;

	if (q->held)
		return 0;
	r = pthread_mutex_clocklock(&q->f->m, CLOCK_MONOTONIC, deadline);
	if (r == EOWNERDEAD) {
		/* Its holder died holding it (a SIGKILLed mediator): the
		 * mutex guards nothing of its own, SQLite rolled the holder's
		 * transaction back, so it is simply ours now. */
		r = pthread_mutex_consistent(&q->f->m);
	}
	if (r != 0)
		return -r; /* -ETIMEDOUT; -ENOTRECOVERABLE cannot happen (see above) */
	q->held = true;
	return 0;
}

void ledger_queue_unlock(struct ledger_queue *q)
{
	if (!q || !q->held)
		return;
	q->held = false;
	(void)pthread_mutex_unlock(&q->f->m);
}
