/* The evidence log's writer under load (issue 18's Checks): events per
 * second appended by evidence_append() (a chained, HMAC'd JSON line each,
 * as the supervisor and the mediator write them) to a file on this
 * machine's disk, without a sync and with an fdatasync(2) at every
 * checkpoint (one per CHECKPOINT events, as a long run with periodic
 * checkpoints would pay). Not a test: nothing here passes or fails on
 * timing.
 *
 *   build/evidence_bench [DIR] [EVENTS]   (default /var/tmp, 20000)
 *
 * Output, one line per mode: MODE events=N secs=S per_s=R */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "../evidence/evidence.h"

#define CHECKPOINT 100

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static int run(const char *dir, long events, int every, const char *mode)
{
	unsigned char key[EVIDENCE_KEY_LEN];
	struct evidence_log log;
	char path[4096], fields[256];
	double t0, t;
	int fd;

	snprintf(path, sizeof(path), "%s/evidence_bench.%d.jsonl", dir, (int)getpid());
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_APPEND | O_CLOEXEC, 0600);
	if (fd < 0) {
		perror(path);
		return 1;
	}
	memset(key, 0x5a, sizeof(key));
	if (evidence_open(&log, fd, key, "bench-session", "supervisor") < 0) {
		fprintf(stderr, "evidence_bench: evidence_open failed\n");
		close(fd);
		unlink(path);
		return 1;
	}
	t0 = now();
	for (long i = 1; i <= events; i++) {
		/* An admission's size: a decision, a destination, a digest. */
		snprintf(fields, sizeof(fields),
			 "\"decision\":\"allowed\",\"rule\":%ld,\"host\":\"api.example.test\","
			 "\"port\":443,\"bytes\":%ld",
			 i % 7, i * 13);
		evidence_append(&log, "admission", fields);
		if (every && i % every == 0)
			(void)fdatasync(fd);
	}
	if (every)
		(void)fdatasync(fd);
	t = now() - t0;
	printf("%s events=%ld secs=%.4f per_s=%.0f drops=%lu\n", mode, events, t,
	       (double)events / t, log.drops_total);
	close(fd);
	unlink(path);
	return 0;
}

int main(int argc, char **argv)
{
	const char *dir = argc > 1 ? argv[1] : "/var/tmp";
	long events = argc > 2 ? strtol(argv[2], NULL, 10) : 20000;

	if (events <= 0) {
		fprintf(stderr, "usage: evidence_bench [DIR] [EVENTS > 0]\n");
		return 2;
	}
	return run(dir, events, 0, "no-sync") | run(dir, events, CHECKPOINT, "checkpoint-sync");
}
