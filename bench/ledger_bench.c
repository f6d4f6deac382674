/* The budgets' ledger under load (issue 17's Checks): reserve+settle pairs
 * per second with 1, 8 and 32 concurrent callers (threads, each with its
 * own connection, as separate mediators have; PROCS=1 in the environment
 * runs each caller as a process of its own instead), on this machine's
 * disk, in the same run, alternated in slices: the ledger's group commit
 * (the reservation flushed by its caller after the lock is released:
 * mediator/ledger.c) with its writers queued (ledger_queue.c: they sleep
 * until the lock is theirs), the same without the queue (they poll
 * SQLite's lock: the ledger before the queue), and SQLite's
 * synchronous=FULL (an fsync inside every commit: the ledger before the
 * group commit), with the busy handler's retries per pair; and what one
 * fdatasync of a 4 KiB append costs here.
 * Not a test: nothing here passes or fails on timing.
 *
 *   build/ledger_bench [DIR] [SECONDS]   (default /var/tmp, 3)
 *
 * LEDGER_BENCH_SKIP=p (or q, f, a combination) leaves out the polled (the
 * queued, the FULL) slices: an A/B against another build's bench then has
 * the same slices of the same length. */
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "../mediator/mediator.h"

static const char *dir;
static double seconds;
enum variant {
	QUEUED,
	POLLED,
	FULL,
};
static enum variant variant;
/* Shared with the callers' processes when PROCS is set. */
struct shared {
	atomic_int go, stop;
	atomic_long pairs, waits;
};
static struct shared *sh;

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void *caller(void *arg)
{
	struct ledger *l = NULL;
	struct err err = {0};

	(void)arg;
	if (ledger_open(dir, "bench", 30000, &l, &err) < 0) {
		fprintf(stderr, "ledger_bench: %s\n", err.msg);
		return NULL;
	}
	if (variant == FULL)
		ledger_commit_sync(l);
	if (variant != QUEUED)
		ledger_queue_off(l);
	while (!atomic_load(&sh->go))
		usleep(100);
	while (!atomic_load(&sh->stop)) {
		struct ledger_request rq = {.budget = "bench",
					    .cap = 1ull << 50,
					    .session = "b",
					    .route = "POST bench.test:80/x",
					    .bound = 4};
		int64_t id;

		if (ledger_reserve(l, &rq, &id, &err) != LEDGER_OK ||
		    ledger_settle(l, id, 3, "receiver", &err) < 0) {
			fprintf(stderr, "ledger_bench: %s\n", err.msg);
			break;
		}
		atomic_fetch_add(&sh->pairs, 1);
	}
	atomic_fetch_add(&sh->waits, (long)ledger_busy_waits(l));
	ledger_close(l);
	return NULL;
}

/* Pairs a second; *waits: busy retries a pair. */
static double run(int n, bool procs, double *waits)
{
	pthread_t th[32];
	pid_t pid[32];
	double t0;

	atomic_store(&sh->go, 0);
	atomic_store(&sh->stop, 0);
	atomic_store(&sh->pairs, 0);
	atomic_store(&sh->waits, 0);
	for (int i = 0; i < n; i++) {
		if (!procs) {
			pthread_create(&th[i], NULL, caller, NULL);
			continue;
		}
		pid[i] = fork();
		if (pid[i] == 0) {
			caller(NULL);
			_exit(0);
		}
	}
	usleep(200000);
	t0 = now();
	atomic_store(&sh->go, 1);
	usleep((useconds_t)(seconds * 1e6));
	atomic_store(&sh->stop, 1);
	for (int i = 0; i < n; i++) {
		if (procs && pid[i] > 0)
			waitpid(pid[i], NULL, 0);
		else if (!procs)
			pthread_join(th[i], NULL);
	}
	*waits = (double)atomic_load(&sh->waits) /
		 (double)(atomic_load(&sh->pairs) ? atomic_load(&sh->pairs) : 1);
	return (double)atomic_load(&sh->pairs) / (now() - t0);
}

/* One fdatasync of a 4 KiB append, the median of 200 (in ms). */
static double fsync_ms(void)
{
	char path[4200], block[4096] = {0};
	double t[200], x;
	int fd;

	snprintf(path, sizeof(path), "%s/fsync", dir);
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (fd < 0)
		return -1;
	for (int i = 0; i < 200; i++) {
		double t1 = now();

		if (write(fd, block, sizeof(block)) != (ssize_t)sizeof(block) ||
		    fdatasync(fd) < 0) {
			close(fd);
			return -1;
		}
		t[i] = (now() - t1) * 1000;
	}
	close(fd);
	unlink(path);
	for (int i = 1; i < 200; i++)
		for (int j = i; j > 0 && t[j - 1] > t[j]; j--)
			x = t[j], t[j] = t[j - 1], t[j - 1] = x;
	return t[100];
}

int main(int argc, char **argv)
{
	static const int callers[] = {1, 8, 32};
	const char *skip = getenv("LEDGER_BENCH_SKIP");
	char tmpl[4096];

	snprintf(tmpl, sizeof(tmpl), "%s/paddock-ledger-bench.XXXXXX",
		 argc > 1 ? argv[1] : "/var/tmp");
	seconds = argc > 2 ? atof(argv[2]) : 3;
	dir = mkdtemp(tmpl);
	if (!dir) {
		perror("ledger_bench: mkdtemp");
		return 1;
	}
	sh = mmap(NULL, sizeof(*sh), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (sh == MAP_FAILED) {
		perror("ledger_bench: mmap");
		return 1;
	}
	printf("ledger (WAL) in %s, %.0f s each, callers as %s; one fdatasync of 4 KiB: %.2f ms\n",
	       dir, seconds, getenv("PROCS") ? "processes" : "threads", fsync_ms());
	for (size_t i = 0; i < sizeof(callers) / sizeof(callers[0]); i++) {
		double r[3] = {0, 0, 0}, w[3] = {0, 0, 0};
		double whole = seconds;

		/* Alternated in slices of the same run (4 of each, a quarter of
		 * SECONDS long): a loaded machine's load, which changes from
		 * second to second, is shared by all three. */
		seconds = whole / 4;
		for (int slice = 0; slice < 12; slice++) {
			double waits;

			variant = (enum variant)(slice % 3);
			if (skip && strchr(skip, "qpf"[variant]))
				continue; /* LEDGER_BENCH_SKIP: variants left out, for A/Bs */
			r[variant] += run(callers[i], getenv("PROCS") != NULL, &waits) / 4;
			w[variant] += waits / 4;
		}
		seconds = whole;
		printf("callers %2d: %8.0f reserve+settle per second (group commit, queued), %8.0f "
		       "(polled), %8.0f (synchronous=FULL): x%.2f of polled, x%.1f of FULL; busy "
		       "retries a pair %.2f / %.2f / %.2f\n",
		       callers[i], r[QUEUED], r[POLLED], r[FULL],
		       r[POLLED] > 0 ? r[QUEUED] / r[POLLED] : 0,
		       r[FULL] > 0 ? r[QUEUED] / r[FULL] : 0, w[QUEUED], w[POLLED], w[FULL]);
		fflush(stdout);
	}
	{
		char cmd[4200];

		snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
		if (system(cmd) != 0)
			return 1;
	}
	return 0;
}
