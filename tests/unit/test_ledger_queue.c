/* The ledger's writers' queue (mediator/ledger_queue.c, docs/budget.md,
 * "The ledger and its durability"): writers of a budget wait asleep for
 * the queue instead of polling SQLite's lock; the busy timeout still
 * holds (a ledger locked past it refuses, -EBUSY, never hangs), whether
 * the holder is a writer of ours (the queue) or one without the queue
 * (SQLite's lock, as the sqlite3 shell takes it); a holder SIGKILLed
 * while holding either is no obstacle to the next caller, and a queue
 * file of another boot is made anew. Each holder is a child process,
 * killed by its pid when the test ends, also when it fails. */
#include <criterion/criterion.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <sqlite3.h>

#include "../../mediator/mediator.h"
#include "unit.h"

static char dir[] = "/tmp/paddock-ledgerq.XXXXXX";
static pid_t holder = -1;

static void setup(void)
{
	cr_assert_not_null(mkdtemp(dir));
}

static void teardown(void)
{
	char cmd[128];

	if (holder > 0) {
		kill(holder, SIGKILL);
		waitpid(holder, NULL, 0);
	}
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	(void)!system(cmd);
	unit_leak_check();
}

TestSuite(ledgerq, .init = setup, .fini = teardown, .timeout = 120);

static struct ledger *open_l(unsigned busy_ms)
{
	struct ledger *l = NULL;
	struct err err = {0};

	cr_assert_eq(ledger_open(dir, "b", busy_ms, &l, &err), 0, "%s", err.msg);
	return l;
}

static const struct ledger_request rq = {
    .budget = "b", .cap = 1ull << 40, .session = "s", .route = "POST q.test:80/x", .bound = 4};

static double now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

/* A child that holds the budget's lock until it is killed: the queue
 * (as a writer of ours holds it) or SQLite's write lock taken without
 * the queue (BEGIN IMMEDIATE on a plain connection: the sqlite3 shell). */
static void hold(bool queue)
{
	int p[2];
	char c = 0;

	cr_assert_eq(pipe(p), 0);
	holder = fork();
	cr_assert_geq(holder, 0);
	if (holder == 0) {
		struct ledger *l = NULL;
		struct err err = {0};
		sqlite3 *db = NULL;
		char path[128];

		snprintf(path, sizeof(path), "%s/b.sqlite", dir);
		if (queue ? ledger_open(dir, "b", 5000, &l, &err) < 0 ||
				ledger_queue_hold(l, 5000) < 0
			  : sqlite3_open(path, &db) != SQLITE_OK ||
				sqlite3_exec(db, "BEGIN IMMEDIATE", NULL, NULL, NULL) != SQLITE_OK)
			_exit(1);
		(void)!write(p[1], "h", 1);
		for (;;)
			pause();
	}
	close(p[1]);
	cr_assert_eq(read(p[0], &c, 1), 1, "the holder took the lock");
	close(p[0]);
}

static void kill_holder(void)
{
	kill(holder, SIGKILL);
	waitpid(holder, NULL, 0);
	holder = -1;
}

/* Refused, not hung, and only after the busy timeout: the wait is
 * bounded below by busy_ms (an upper bound would be a timing assertion;
 * the suite's timeout is the hang's). */
static void refused(struct ledger *l, unsigned busy_ms, const char *what)
{
	struct err err = {0};
	int64_t id;
	double t0 = now_ms(), took;
	int r = ledger_reserve(l, &rq, &id, &err);

	took = now_ms() - t0;
	cr_assert_eq(r, -EBUSY, "%s: %d %s", what, r, err.msg);
	cr_assert(strstr(err.msg, "ledger: "), "one line naming the ledger: %s", err.msg);
	cr_assert_geq(took, busy_ms - 5, "%s: waited %.0f ms of %u", what, took, busy_ms);
	cr_log_info("%s: refused after %.0f ms (busy timeout %u ms): %s", what, took, busy_ms,
		    err.msg);
}

static void proceeds(struct ledger *l, const char *what)
{
	struct err err = {0};
	int64_t id;

	cr_assert_eq(ledger_reserve(l, &rq, &id, &err), LEDGER_OK, "%s: %s", what, err.msg);
	cr_assert_eq(ledger_settle(l, id, 3, "receiver", &err), 0, "%s: %s", what, err.msg);
	cr_assert_eq(ledger_check(l, &err), 0, "%s", err.msg);
}

Test(ledgerq, a_held_queue_refuses_within_the_busy_timeout_and_a_killed_holder_frees_it)
{
	struct ledger *l = open_l(300);

	hold(true);
	refused(l, 300, "the queue held by a live writer");
	kill_holder();
	proceeds(l, "its holder SIGKILLed while holding it");
	ledger_close(l);
}

/* The twin: the same holder stopped (alive, holding) instead of killed:
 * still refused, so the test above sees the kill's effect, not a lock
 * that was never held. */
Test(ledgerq, twin_a_stopped_holder_still_holds_the_queue)
{
	struct ledger *l = open_l(300);

	hold(true);
	kill(holder, SIGSTOP);
	refused(l, 300, "the queue held by a stopped writer");
	refused(l, 300, "and again");
	kill_holder();
	proceeds(l, "after the kill");
	ledger_close(l);
}

Test(ledgerq, a_writer_without_the_queue_is_still_excluded_and_waited_for)
{
	struct ledger *l = open_l(300);

	hold(false);
	refused(l, 300, "SQLite's lock held without the queue");
	kill_holder();
	proceeds(l, "its holder SIGKILLed while holding it");
	ledger_close(l);
}

/* The queue's file left by another boot (its mutex may name a thread of
 * that boot as its holder): made anew at the next open. Simulated by a
 * stopped holder and the file's boot id rewritten (the layout of
 * mediator/ledger_queue.c: magic, size, then the boot id). */
Test(ledgerq, a_queue_of_another_boot_is_made_anew)
{
	char path[128];
	struct ledger *l;
	int fd;

	hold(true);
	kill(holder, SIGSTOP);
	snprintf(path, sizeof(path), "%s/b.sqlite-queue", dir);
	fd = open(path, O_WRONLY | O_CLOEXEC);
	cr_assert_geq(fd, 0);
	cr_assert_eq(pwrite(fd, "another-boot", 13, 8), 13);
	close(fd);
	l = open_l(300);
	proceeds(l, "a queue of another boot");
	ledger_close(l);
}

/* A queue that fails other than by timing out (here its mutex's kind
 * overwritten with one glibc does not know: EINVAL, a file someone wrote
 * over): the transaction goes without it, SQLite's lock still excluding,
 * instead of refusing. The layout of mediator/ledger_queue.c and glibc's
 * x86-64 pthread_mutex_t: the mutex at offset 56, its lock word first,
 * __kind 16 into it (checked: a robust process-shared mutex is kind 144). */
Test(ledgerq, a_queue_that_fails_is_gone_without)
{
	struct ledger *l = open_l(300);
	char path[128];
	int fd, word[5] = {-1, -1, -1, -1, -1}, unknown_kind = 0x7f;

	snprintf(path, sizeof(path), "%s/b.sqlite-queue", dir);
	fd = open(path, O_RDWR | O_CLOEXEC);
	cr_assert_geq(fd, 0);
	cr_assert_eq(pread(fd, word, sizeof(word), 56), (ssize_t)sizeof(word));
	cr_assert(word[0] == 0 && word[4] == 144, "the mutex where the test expects it: %d %d",
		  word[0], word[4]);
	cr_assert_eq(pwrite(fd, &unknown_kind, sizeof(int), 56 + 16), (ssize_t)sizeof(int));
	close(fd);
	cr_assert_eq(ledger_queue_hold(l, 300), -EINVAL,
		     "the queue itself fails, not by timing out");
	proceeds(l, "a queue that cannot be taken");
	proceeds(l, "and again");
	ledger_close(l);
}

/* Writers of one budget queue instead of polling: 8 callers, each its
 * own connection, 300 reserve+settle pairs each; with the queue SQLite's
 * busy handler is (next to) never reached, without it (twin) the callers
 * poll. Counted from after the opens (opening a ledger takes SQLite's
 * lock outside the queue once, for journal_mode). */
#define CALLERS 8
#define PAIRS	300

struct caller {
	pthread_t th;
	struct ledger *l;
	unsigned long waits;
	int failed;
	pthread_barrier_t *go;
};

static void *call(void *arg)
{
	struct caller *c = arg;
	struct err err = {0};
	unsigned long w0 = ledger_busy_waits(c->l);

	pthread_barrier_wait(c->go);
	for (int i = 0; i < PAIRS && !c->failed; i++) {
		int64_t id;

		if (ledger_reserve(c->l, &rq, &id, &err) != LEDGER_OK ||
		    ledger_settle(c->l, id, 3, "receiver", &err) < 0)
			c->failed = 1;
	}
	c->waits = ledger_busy_waits(c->l) - w0;
	return NULL;
}

static unsigned long contend(bool queue)
{
	struct caller c[CALLERS];
	pthread_barrier_t go;
	unsigned long waits = 0;
	struct ledger_totals t;
	struct err err = {0};

	pthread_barrier_init(&go, NULL, CALLERS);
	for (int i = 0; i < CALLERS; i++) {
		c[i] = (struct caller){.l = open_l(30000), .go = &go};
		if (!queue)
			ledger_queue_off(c[i].l);
	}
	for (int i = 0; i < CALLERS; i++)
		pthread_create(&c[i].th, NULL, call, &c[i]);
	for (int i = 0; i < CALLERS; i++) {
		pthread_join(c[i].th, NULL);
		cr_assert_eq(c[i].failed, 0, "caller %d failed", i);
		waits += c[i].waits;
	}
	cr_assert_eq(ledger_totals(c[0].l, &t, &err), 0);
	cr_assert_eq(t.ops, CALLERS * PAIRS);
	cr_assert_eq(t.settled, 3 * CALLERS * PAIRS);
	cr_assert_eq(ledger_check(c[0].l, &err), 0, "%s", err.msg);
	for (int i = 0; i < CALLERS; i++)
		ledger_close(c[i].l);
	pthread_barrier_destroy(&go);
	cr_log_info("%s: %lu busy retries over %d pairs", queue ? "queued" : "polled", waits,
		    CALLERS * PAIRS);
	return waits;
}

Test(ledgerq, writers_queue_instead_of_polling)
{
	unsigned long w = contend(true);

	cr_assert_leq(w, CALLERS * PAIRS / 20, "%lu busy retries with the queue", w);
}

Test(ledgerq, twin_without_the_queue_writers_poll)
{
	unsigned long w = contend(false);

	cr_assert_gt(w, CALLERS * PAIRS / 20, "only %lu busy retries without the queue", w);
}

/* Mediators of two sessions opening the same new budget at once: each
 * open makes the file WAL (a persistent mode the first one sets), which
 * needs its exclusive lock; SQLite answered the other one's shared lock
 * with SQLITE_BUSY at once ("PRAGMA journal_mode=WAL: database is
 * locked", refused-ledger: test_budget's two_sessions_share_one_cap once
 * in ~60 runs). Rounds of four processes released together on a new file
 * each: every open succeeds. */
Test(ledgerq, opens_of_a_new_budget_at_once_all_succeed)
{
	for (int round = 0; round < 40; round++) {
		char name[16];
		pid_t pids[4];
		int go[2], fail = 0;

		snprintf(name, sizeof(name), "n%d", round);
		cr_assert_eq(pipe(go), 0);
		for (int i = 0; i < 4; i++) {
			pids[i] = fork();
			cr_assert_geq(pids[i], 0);
			if (pids[i] == 0) {
				struct ledger *l = NULL;
				struct err err = {0};
				char c;

				close(go[1]);
				(void)!read(go[0], &c, 1); /* EOF: all go */
				if (ledger_open(dir, name, 5000, &l, &err) < 0) {
					fprintf(stderr, "round %d: %s\n", round, err.msg);
					_exit(1);
				}
				ledger_close(l);
				_exit(0);
			}
		}
		close(go[0]);
		close(go[1]);
		for (int i = 0; i < 4; i++) {
			int st = 0;

			cr_assert_eq(waitpid(pids[i], &st, 0), pids[i]);
			fail += !WIFEXITED(st) || WEXITSTATUS(st) != 0;
		}
		cr_assert_eq(fail, 0, "round %d: %d of 4 opens failed", round, fail);
	}
}
