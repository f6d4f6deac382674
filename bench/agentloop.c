/* make bench: agentloop N [PREFIX [ARG]...] - the agent loop: N short
 * commands, one after the other, as an agent issues them, each started as
 * PREFIX... CMD (no PREFIX: the bare command), in the current directory
 * (a small git repository with a file "notes.txt"). The fixed mix, in
 * turn: git status, ls -la, cat notes.txt, sh -c 'echo x > f', and a
 * failing command (ls of a missing path, exit 2). Absolute paths under
 * /usr/bin, so every row runs the same binaries (a container's own /bin
 * is left out). stdin, stdout and stderr are /dev/null.
 *
 * Prints one line: calls=N median_us= p90_us= mean_us= total_ms=
 * mismatched=M, where M counts calls whose exit status was not the one
 * the bare command gives (a row with M > 0 did not run the same work).
 * Each call is timed from posix_spawn() to waitpid()'s return
 * (CLOCK_MONOTONIC). Not a test: nothing here passes or fails. */
#include <fcntl.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

extern char **environ;

static char *const mix[][5] = {
    {"/usr/bin/git", "status", NULL},
    {"/usr/bin/ls", "-la", NULL},
    {"/usr/bin/cat", "notes.txt", NULL},
    {"/usr/bin/sh", "-c", "echo x > f", NULL},
    {"/usr/bin/ls", "/nonexistent-paddock-bench", NULL},
};
static const int expect[] = {0, 0, 0, 0, 2};

#define N_MIX (sizeof(mix) / sizeof(mix[0]))

static double now_us(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec * 1e6 + (double)t.tv_nsec / 1e3;
}

static int cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 0, nprefix = argc - 2, mismatched = 0;
	posix_spawn_file_actions_t fa;
	double *t, total = 0;
	char **av;

	if (n <= 0) {
		fprintf(stderr, "usage: agentloop N [PREFIX [ARG]...]\n");
		return 2;
	}
	t = calloc((size_t)n, sizeof(*t));
	av = calloc((size_t)nprefix + 5, sizeof(*av));
	if (!t || !av)
		return 1;
	memcpy(av, argv + 2, (size_t)nprefix * sizeof(*av));
	posix_spawn_file_actions_init(&fa);
	for (int fd = 0; fd < 3; fd++)
		posix_spawn_file_actions_addopen(&fa, fd, "/dev/null", fd ? O_WRONLY : O_RDONLY, 0);
	for (int i = 0; i < n; i++) {
		char *const *cmd = mix[(size_t)i % N_MIX];
		int k = nprefix, st;
		double s;
		pid_t pid;

		for (int j = 0; cmd[j]; j++)
			av[k++] = cmd[j];
		av[k] = NULL;
		s = now_us();
		if (posix_spawnp(&pid, av[0], &fa, NULL, av, environ) != 0) {
			perror(av[0]);
			return 1;
		}
		if (waitpid(pid, &st, 0) != pid)
			return 1;
		t[i] = now_us() - s;
		total += t[i];
		if (!WIFEXITED(st) || WEXITSTATUS(st) != expect[(size_t)i % N_MIX])
			mismatched++;
	}
	qsort(t, (size_t)n, sizeof(*t), cmp);
	printf("calls=%d median_us=%.0f p90_us=%.0f mean_us=%.0f total_ms=%.1f mismatched=%d\n", n,
	       t[n / 2], t[(n * 9) / 10], total / n, total / 1e3, mismatched);
	return 0;
}
