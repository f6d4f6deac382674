/* The budgets' ledger under load (issue 17's Checks): reserve+settle pairs
 * per second with 1, 8 and 32 concurrent callers (threads, each with its
 * own connection, as separate mediators have), on this machine's disk,
 * with the ledger's own settings (WAL, synchronous=FULL, BEGIN
 * IMMEDIATE). Not a test: nothing here passes or fails on timing.
 *
 *   build/ledger_bench [DIR] [SECONDS]   (default /var/tmp, 3) */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "../mediator/mediator.h"

static const char *dir;
static double seconds;
static atomic_int go, stop;
static atomic_long pairs;

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
	while (!atomic_load(&go))
		usleep(100);
	while (!atomic_load(&stop)) {
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
		atomic_fetch_add(&pairs, 1);
	}
	ledger_close(l);
	return NULL;
}

static double run(int n)
{
	pthread_t th[32];
	double t0;

	atomic_store(&go, 0);
	atomic_store(&stop, 0);
	atomic_store(&pairs, 0);
	for (int i = 0; i < n; i++)
		pthread_create(&th[i], NULL, caller, NULL);
	usleep(200000);
	t0 = now();
	atomic_store(&go, 1);
	usleep((useconds_t)(seconds * 1e6));
	atomic_store(&stop, 1);
	for (int i = 0; i < n; i++)
		pthread_join(th[i], NULL);
	return (double)atomic_load(&pairs) / (now() - t0);
}

int main(int argc, char **argv)
{
	static const int callers[] = {1, 8, 32};
	char tmpl[4096];

	snprintf(tmpl, sizeof(tmpl), "%s/paddock-ledger-bench.XXXXXX",
		 argc > 1 ? argv[1] : "/var/tmp");
	seconds = argc > 2 ? atof(argv[2]) : 3;
	dir = mkdtemp(tmpl);
	if (!dir) {
		perror("ledger_bench: mkdtemp");
		return 1;
	}
	printf("ledger (WAL, synchronous=FULL) in %s, %.0f s each\n", dir, seconds);
	for (size_t i = 0; i < sizeof(callers) / sizeof(callers[0]); i++) {
		double r = run(callers[i]);

		printf(
		    "callers %2d: %8.0f reserve+settle per second (%.2f ms per pair per caller)\n",
		    callers[i], r, r > 0 ? 1000.0 * callers[i] / r : 0);
	}
	{
		char cmd[4200];

		snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
		if (system(cmd) != 0)
			return 1;
	}
	return 0;
}
