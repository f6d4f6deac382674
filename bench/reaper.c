/* make bench: the reaping workload for PID 1 candidates (not a test).
 *
 * reaper N [direct]
 *
 * Run as the workload under an init that is PID 1 of a fresh pid namespace
 * with its own /proc. An intermediate process forks N children that block
 * on a pipe, then exits: the N children become orphans of PID 1. Closing
 * the pipe releases them all at once; the time from the release until the
 * last one is reaped (its pidfd reports POLLHUP, which the kernel raises
 * only once the task is released) is the init's reaping time. Afterwards
 * the namespace's /proc is scanned for zombies, and PID 1's VmHWM is read.
 * "direct": the children stay ours and we reap them ourselves with
 * waitpid(), the reference without any init involved.
 *
 * PID 1's CPU time over the same interval (/proc/1/schedstat) is the
 * init's own reaping cost, less noisy than the wall time, which also holds
 * the 10,000 exits.
 *
 * Output, one line: reap_ms=F init_cpu_ms=F zombies=N left=N init_hwm_kb=N */
#include <dirent.h>
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static double now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

static void die(const char *what)
{
	perror(what);
	exit(1);
}

/* Processes of this namespace other than PID 1 and us; zombies apart. */
static void scan(int *zombies, int *left)
{
	DIR *d = opendir("/proc");
	struct dirent *e;
	char path[64], buf[512];

	*zombies = *left = 0;
	if (!d)
		die("opendir /proc");
	while ((e = readdir(d))) {
		int pid = atoi(e->d_name);
		FILE *f;
		char *p;

		if (pid <= 1 || pid == getpid())
			continue;
		snprintf(path, sizeof(path), "/proc/%d/stat", pid);
		f = fopen(path, "r");
		if (!f)
			continue;
		if (fgets(buf, sizeof(buf), f) && (p = strrchr(buf, ')')) && p[1] && p[2] == 'Z')
			(*zombies)++;
		else
			(*left)++;
		fclose(f);
	}
	closedir(d);
}

static long init_hwm_kb(void)
{
	FILE *f = fopen("/proc/1/status", "r");
	char line[256];
	long kb = -1;

	while (f && fgets(line, sizeof(line), f))
		if (sscanf(line, "VmHWM: %ld", &kb) == 1)
			break;
	if (f)
		fclose(f);
	return kb;
}

/* PID 1's CPU time so far (ns), from the scheduler's own accounting. */
static double init_cpu_ms(void)
{
	FILE *f = fopen("/proc/1/schedstat", "r");
	unsigned long long ns = 0;

	if (f && fscanf(f, "%llu", &ns) != 1)
		ns = 0;
	if (f)
		fclose(f);
	return (double)ns / 1e6;
}

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 10000;
	int direct = argc > 2 && strcmp(argv[2], "direct") == 0;
	int gate[2], pids[2], *fds, zombies, left;
	struct rlimit rl;
	double t0, t1, c0, c1;
	pid_t mid;

	if (n <= 0)
		return 2;
	/* One pidfd per orphan. */
	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < (rlim_t)n + 64) {
		rl.rlim_cur = rl.rlim_max;
		setrlimit(RLIMIT_NOFILE, &rl);
	}
	fds = calloc((size_t)n, sizeof(*fds));
	if (!fds || pipe(gate) < 0 || pipe(pids) < 0)
		die("setup");
	mid = direct ? 0 : fork();
	if (mid < 0)
		die("fork");
	if (mid == 0 || direct) {
		for (long i = 0; i < n; i++) {
			pid_t c = fork();
			char b;

			if (c < 0)
				die("fork child");
			if (c == 0) {
				close(gate[1]);
				(void)!read(gate[0], &b, 1);
				_exit(0);
			}
			if (write(pids[1], &c, sizeof(c)) != sizeof(c))
				die("write pid");
			if (direct) {
				/* Read as we go: the pipe holds 16k pids. */
				pid_t got;

				if (read(pids[0], &got, sizeof(got)) != sizeof(got))
					die("read pid");
				fds[i] = got;
			}
		}
		if (!direct)
			_exit(0);
	}
	if (!direct) {
		close(pids[1]);
		for (long i = 0; i < n; i++) {
			pid_t c;

			if (read(pids[0], &c, sizeof(c)) != sizeof(c))
				die("read pid");
			fds[i] = (int)syscall(SYS_pidfd_open, c, 0);
			if (fds[i] < 0)
				die("pidfd_open");
		}
		if (waitpid(mid, NULL, 0) < 0)
			die("waitpid");
	}
	/* Release. */
	c0 = init_cpu_ms();
	t0 = now_ms();
	close(gate[1]);
	if (direct) {
		for (long i = 0; i < n; i++)
			if (waitpid(fds[i], NULL, 0) < 0)
				die("waitpid child");
	} else {
		for (long i = 0; i < n;) {
			struct pollfd p = {.fd = fds[i], .events = 0};

			if (poll(&p, 1, 0) == 1 && (p.revents & POLLHUP)) {
				close(fds[i]);
				i++;
				continue;
			}
			/* Not reaped yet: let init run. */
			nanosleep(&(struct timespec){0, 100000}, NULL);
		}
	}
	t1 = now_ms();
	c1 = init_cpu_ms();
	scan(&zombies, &left);
	printf("reap_ms=%.2f init_cpu_ms=%.2f zombies=%d left=%d init_hwm_kb=%ld\n", t1 - t0,
	       c1 - c0, zombies, left, init_hwm_kb());
	return 0;
}
