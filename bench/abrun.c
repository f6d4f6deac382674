/* bench/row.sh: interleaved wall times of a few commands (not a test).
 *
 * abrun ROUNDS NAME CMD [ARG]... [';' NAME CMD [ARG]...]...
 *   Runs each command once per round, in turn, ROUNDS times (so a load
 *   that comes and goes falls on every command alike: hyperfine runs one
 *   command's runs before the next's), from posix_spawn() to waitpid(),
 *   stdout and stderr on /dev/null. Prints per command the median, the
 *   quartiles and the minimum in ms, and how many runs exited non-zero. */
#define _GNU_SOURCE
#include <fcntl.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define CMDS_MAX 16

extern char **environ;

static double now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

static int cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

int main(int argc, char **argv)
{
	char **cmds[CMDS_MAX], *names[CMDS_MAX];
	int bad[CMDS_MAX] = {0}, nc = 0, rounds = argc > 1 ? atoi(argv[1]) : 0;
	posix_spawn_file_actions_t fa;
	double *t;

	for (int i = 2; i < argc && nc < CMDS_MAX;) {
		names[nc] = argv[i++];
		cmds[nc] = &argv[i];
		while (i < argc && strcmp(argv[i], ";") != 0)
			i++;
		if (i < argc)
			argv[i++] = NULL;
		if (cmds[nc][0])
			nc++;
	}
	if (rounds <= 0 || nc == 0) {
		fprintf(stderr, "usage: abrun ROUNDS NAME CMD [ARG]... [';' NAME CMD...]...\n");
		return 2;
	}
	t = calloc((size_t)nc * (size_t)rounds, sizeof(*t));
	if (!t)
		return 1;
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
	posix_spawn_file_actions_addopen(&fa, 2, "/dev/null", O_WRONLY, 0);
	for (int r = 0; r < rounds; r++)
		for (int c = 0; c < nc; c++) {
			double t0 = now_ms();
			pid_t pid;
			int st;

			if (posix_spawnp(&pid, cmds[c][0], &fa, NULL, cmds[c], environ) != 0) {
				perror(cmds[c][0]);
				return 1;
			}
			if (waitpid(pid, &st, 0) != pid)
				return 1;
			t[c * rounds + r] = now_ms() - t0;
			bad[c] += st != 0;
		}
	for (int c = 0; c < nc; c++) {
		double *v = t + c * rounds;

		qsort(v, (size_t)rounds, sizeof(*v), cmp);
		printf("%-24s median %8.2f ms  p25 %8.2f  p75 %8.2f  min %8.2f  non-zero %d\n",
		       names[c], v[rounds / 2], v[rounds / 4], v[3 * rounds / 4], v[0], bad[c]);
	}
	return 0;
}
