/* make bench: expiry of a sandbox with many descendants (not a test).
 *
 * expiry load N
 *   The workload. Starts N descendants that sleep forever: a third are
 *   plain children, a third start a new session (setsid), a third are
 *   double-forked daemons (their parent exits, so they are orphans). Every
 *   process is named "pdkbench". Prints "ready" on stdout once all N run,
 *   then sleeps. SIGTERM and SIGKILL end all of them.
 *
 * expiry watch MODE -- CMD [ARG]...
 *   The observer, outside (as root, so that it sees every user's
 *   processes). Starts CMD with stdout on a pipe, waits for "ready", finds
 *   every "pdkbench" process in the host's /proc and opens a pidfd for
 *   each, then the deadline comes:
 *     pid1    SIGKILL to the workload, which is PID 1 of a bare pid
 *             namespace (unshare -f): the kernel's floor;
 *     parent  CMD runs as the child of a holder process, and the deadline
 *             is SIGKILL to the holder (bwrap --die-with-parent);
 *     ttl     the deadline is paddock's own: CMD's stderr carries
 *             PADDOCK_DEBUG timestamps (CLOCK_MONOTONIC) and the line
 *             "ttl expired" is the deadline;
 *     docker  after "ready", run `docker stop -t 0 pdkbench-expiry`.
 *   The end is when the last pidfd reports POLLHUP: the process is not
 *   only dead but reaped, gone from the host's /proc. A final scan checks
 *   that no "pdkbench" process is left.
 *
 * Output, one line: gone_ms=F n=N left=N (ms from the deadline to the last
 * process gone). */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define NAME	  "pdkbench"
#define MAX_PROCS 4096

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

static void sleep_forever(int ready)
{
	char b = 'r';

	prctl(PR_SET_NAME, NAME);
	if (write(ready, &b, 1) != 1)
		_exit(1);
	close(ready);
	for (;;)
		pause();
}

static int load(long n)
{
	int ready[2];
	char b;

	prctl(PR_SET_NAME, NAME);
	if (pipe(ready) < 0)
		die("pipe");
	for (long i = 0; i < n; i++) {
		pid_t c = fork();

		if (c < 0)
			die("fork");
		if (c > 0) {
			if (i % 3 == 2)
				waitpid(c, NULL, 0); /* the double fork's middle */
			continue;
		}
		close(ready[0]);
		if (i % 3 == 1)
			setsid();
		if (i % 3 == 2) {
			setsid();
			if (fork() != 0)
				_exit(0);
		}
		sleep_forever(ready[1]);
	}
	close(ready[1]);
	for (long i = 0; i < n; i++)
		if (read(ready[0], &b, 1) != 1)
			die("read ready");
	printf("ready\n");
	fflush(stdout);
	for (;;)
		pause();
}

static int is_ours(const char *pid)
{
	char path[300], comm[32] = "";
	int fd;
	ssize_t r;

	snprintf(path, sizeof(path), "/proc/%s/comm", pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	r = read(fd, comm, sizeof(comm) - 1);
	close(fd);
	return r > 0 && strncmp(comm, NAME "\n", sizeof(NAME)) == 0;
}

/* pidfds for every process named NAME; returns how many. */
static int collect(int *fds, int max)
{
	DIR *d = opendir("/proc");
	struct dirent *e;
	int n = 0;

	if (!d)
		die("opendir /proc");
	while ((e = readdir(d)) && n < max) {
		int fd;

		if (e->d_name[0] < '0' || e->d_name[0] > '9' || !is_ours(e->d_name))
			continue;
		fd = (int)syscall(SYS_pidfd_open, atoi(e->d_name), 0);
		if (fd >= 0)
			fds[n++] = fd;
	}
	closedir(d);
	return n;
}

static double debug_time(const char *log, const char *what)
{
	const char *p = strstr(log, what), *line;
	double s;

	if (!p)
		return -1;
	for (line = p; line > log && line[-1] != '\n'; line--)
		;
	if (sscanf(line, "paddock: debug: %lf:", &s) != 1)
		return -1;
	return s * 1e3;
}

static int watch(const char *mode, char **cmd)
{
	int out[2], errfd, *fds, n, left, status;
	static char log[1 << 20];
	size_t loglen = 0;
	double deadline = 0, end;
	pid_t pid, holder = 0;
	char line[64];
	FILE *f;

	/* stderr to a file, not a pipe: a full pipe would stall the
	 * supervisor's debug output and with it the run being measured. */
	errfd = open("/tmp", O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
	if (pipe(out) < 0 || errfd < 0)
		die("pipe");
	pid = fork();
	if (pid < 0)
		die("fork");
	if (pid == 0) {
		if (strcmp(mode, "parent") == 0) {
			pid_t c = fork();

			if (c < 0)
				_exit(1);
			if (c > 0) { /* the holder: bwrap's parent */
				close(out[1]);
				close(errfd);
				for (;;)
					pause();
			}
		}
		dup2(out[1], 1);
		dup2(errfd, 2);
		close(out[0]);
		execvp(cmd[0], cmd);
		_exit(127);
	}
	holder = pid;
	close(out[1]);
	f = fdopen(out[0], "r");
	if (!f || !fgets(line, sizeof(line), f) || strcmp(line, "ready\n") != 0) {
		fprintf(stderr, "expiry: the workload did not get ready\n");
		return 1;
	}
	fds = calloc(MAX_PROCS, sizeof(*fds));
	if (!fds)
		die("calloc");
	n = collect(fds, MAX_PROCS);
	if (strcmp(mode, "pid1") == 0) {
		/* unshare -f: its child (the workload) is PID 1 of the namespace. */
		char path[64];
		int c = -1;
		FILE *cf;

		snprintf(path, sizeof(path), "/proc/%d/task/%d/children", pid, pid);
		cf = fopen(path, "r");
		if (!cf || fscanf(cf, "%d", &c) != 1)
			die("find PID 1");
		fclose(cf);
		deadline = now_ms();
		kill(c, SIGKILL);
	} else if (strcmp(mode, "parent") == 0) {
		deadline = now_ms();
		kill(holder, SIGKILL);
	} else if (strcmp(mode, "docker") == 0) {
		deadline = now_ms();
		if (system("docker stop -t 0 pdkbench-expiry >/dev/null") != 0)
			fprintf(stderr, "expiry: docker stop failed\n");
	}
	for (int i = 0, done = 0; done < n; i = (i + 1) % n) {
		struct pollfd p;

		if (fds[i] < 0)
			continue;
		p = (struct pollfd){.fd = fds[i], .events = 0};
		if (poll(&p, 1, 0) == 1 && (p.revents & POLLHUP)) {
			close(fds[i]);
			fds[i] = -1;
			done++;
			continue;
		}
		if (i == n - 1)
			nanosleep(&(struct timespec){0, 100000}, NULL);
	}
	end = now_ms();
	/* The run's own end, and what it said. */
	waitpid(pid, &status, 0);
	lseek(errfd, 0, SEEK_SET);
	for (;;) {
		ssize_t r = read(errfd, log + loglen, sizeof(log) - 1 - loglen);

		if (r <= 0)
			break;
		loglen += (size_t)r;
	}
	log[loglen] = '\0';
	if (strcmp(mode, "ttl") == 0) {
		deadline = debug_time(log, "ttl expired");
		if (deadline < 0) {
			fprintf(stderr, "expiry: no \"ttl expired\" in paddock's debug output\n%s",
				log);
			return 1;
		}
	}
	left = collect(fds, MAX_PROCS);
	printf("gone_ms=%.2f n=%d left=%d\n", end - deadline, n, left);
	return left != 0;
}

int main(int argc, char **argv)
{
	if (argc >= 3 && strcmp(argv[1], "load") == 0)
		return load(atol(argv[2]));
	if (argc >= 5 && strcmp(argv[1], "watch") == 0 && strcmp(argv[3], "--") == 0)
		return watch(argv[2], argv + 4);
	fprintf(stderr, "usage: expiry load N | expiry watch pid1|parent|ttl|docker -- CMD...\n");
	return 2;
}
