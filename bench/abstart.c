/* An interleaved A/B of two commands' wall time (fork to reaped), for a
 * cost smaller than the machine's drift: hyperfine runs all of one
 * command's runs before the next command's, so a load that changes in
 * between (other jobs, the disk's writeback) reads as a difference. Here
 * every round runs both, in alternating order (AB, BA, AB, ...), and the
 * paired difference of each round is what is summarised: its median, its
 * quartiles, and a distribution-free 95% confidence interval of the median
 * (the order statistics n/2 -+ 0.98 sqrt(n)); and the same of the paired
 * difference in CPU time (user + system of the command and all it reaped:
 * on a loaded machine the wall time is mostly waiting for a core, the CPU
 * time is the work itself). Not a test: nothing passes
 * or fails on timing.
 *
 *   abstart ROW ROUNDS WARMUP "A ARGV" "B ARGV"
 *
 * Each ARGV is split on spaces (no shell, no quoting); stdout and stderr
 * go to /dev/null. A round in which either command exits non-zero is
 * counted in failed= and left out. Output, one line (bench/report.py's
 * kv_rows):
 *
 *   ROW rounds=N failed=F a_median_us=.. b_median_us=.. diff_median_us=..
 *       diff_p25_us=.. diff_p75_us=.. diff_lo_us=.. diff_hi_us=.. ratio=..
 *       cpu_diff_median_us=.. cpu_diff_lo_us=.. cpu_diff_hi_us=..
 *
 * (diff: B - A; ratio: B's median / A's) */
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define ARGS_MAX 512

/* -1 when there are more words than ARGS_MAX - 1: never a command cut
 * short. */
static int split(char *s, char *argv[ARGS_MAX])
{
	int n = 0;

	for (char *t = strtok(s, " "); t; t = strtok(NULL, " "))
		if (n < ARGS_MAX - 1)
			argv[n++] = t;
		else
			return -1;
	argv[n] = NULL;
	return n;
}

/* Microseconds from fork to reaped, and the CPU time (user + system) of
 * the command and every descendant it reaped, in *cpu; -1 when it did not
 * exit 0. */
static double run(char *const argv[], double *cpu)
{
	struct timespec a, b;
	struct rusage ru;
	int st, null;
	pid_t pid;

	clock_gettime(CLOCK_MONOTONIC, &a);
	pid = fork();
	if (pid < 0)
		return -1;
	if (pid == 0) {
		null = open("/dev/null", O_WRONLY);
		dup2(null, 1);
		dup2(null, 2);
		execv(argv[0], argv);
		_exit(127);
	}
	if (wait4(pid, &st, 0, &ru) < 0 || !WIFEXITED(st) || WEXITSTATUS(st) != 0)
		return -1;
	clock_gettime(CLOCK_MONOTONIC, &b);
	*cpu = (double)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1e6 +
	       (double)(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec);
	return (double)(b.tv_sec - a.tv_sec) * 1e6 + (double)(b.tv_nsec - a.tv_nsec) / 1e3;
}

static int cmp(const void *x, const void *y)
{
	double a = *(const double *)x, b = *(const double *)y;

	return (a > b) - (a < b);
}

static double at(const double *v, size_t n, double q)
{
	size_t i = (size_t)(q * (double)(n - 1) + 0.5);

	return v[i < n ? i : n - 1];
}

int main(int argc, char **argv)
{
	char *av[2][ARGS_MAX];
	double *t[2], *d, *c;
	long rounds, warm;
	size_t n = 0, failed = 0, lo, hi;

	if (argc != 6 || (rounds = atol(argv[2])) < 1 || (warm = atol(argv[3])) < 0) {
		fprintf(stderr, "usage: abstart ROW ROUNDS WARMUP \"A ARGV\" \"B ARGV\"\n");
		return 2;
	}
	if (split(argv[4], av[0]) <= 0 || split(argv[5], av[1]) <= 0) {
		fprintf(stderr, "abstart: an empty command, or one of more than %d words\n",
			ARGS_MAX - 1);
		return 2;
	}
	t[0] = calloc((size_t)rounds, sizeof(double));
	t[1] = calloc((size_t)rounds, sizeof(double));
	d = calloc((size_t)rounds, sizeof(double));
	c = calloc((size_t)rounds, sizeof(double));
	if (!t[0] || !t[1] || !d || !c)
		return 1;
	for (long i = 0; i < warm; i++) {
		double u;

		run(av[0], &u);
		run(av[1], &u);
	}
	for (long i = 0; i < rounds; i++) {
		int first = (int)(i & 1); /* AB, BA, AB, ... */
		double x[2], u[2];

		x[first] = run(av[first], &u[first]);
		x[!first] = run(av[!first], &u[!first]);
		if (x[0] < 0 || x[1] < 0) {
			failed++;
			continue;
		}
		t[0][n] = x[0];
		t[1][n] = x[1];
		d[n] = x[1] - x[0];
		c[n] = u[1] - u[0];
		n++;
	}
	if (n == 0) {
		printf("%s rounds=0 failed=%zu\n", argv[1], failed);
		return 1;
	}
	qsort(t[0], n, sizeof(double), cmp);
	qsort(t[1], n, sizeof(double), cmp);
	qsort(d, n, sizeof(double), cmp);
	qsort(c, n, sizeof(double), cmp);
	lo = (size_t)fmax(0.0, floor((double)n / 2 - 0.98 * sqrt((double)n)));
	hi = (size_t)fmin((double)n - 1, ceil((double)n / 2 + 0.98 * sqrt((double)n)));
	printf("%s rounds=%zu failed=%zu a_median_us=%.0f b_median_us=%.0f diff_median_us=%.0f "
	       "diff_p25_us=%.0f diff_p75_us=%.0f diff_lo_us=%.0f diff_hi_us=%.0f ratio=%.4f "
	       "cpu_diff_median_us=%.0f cpu_diff_lo_us=%.0f cpu_diff_hi_us=%.0f\n",
	       argv[1], n, failed, at(t[0], n, 0.5), at(t[1], n, 0.5), at(d, n, 0.5),
	       at(d, n, 0.25), at(d, n, 0.75), d[lo], d[hi], at(t[1], n, 0.5) / at(t[0], n, 0.5),
	       at(c, n, 0.5), c[lo], c[hi]);
	return 0;
}
