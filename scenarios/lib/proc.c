/* Running workloads: paddock as the unprivileged test user, docker as
 * root (harness.h). */
#include "harness.h"

#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "../../include/cleanup.h"

static long long now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

void sleep_ms(int ms)
{
	struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};

	while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
		;
}

/* In the child: become the workload user. Order matters: supplementary
 * groups and gid while we still have CAP_SETGID, uid last (it drops every
 * capability). paddock is rootless; running it as root would test another
 * configuration than the one users get. */
static void child_exec_as(uid_t uid, gid_t gid, bool drop, char *const argv[], int out_fd,
			  int in_fd)
{
	if (in_fd >= 0)
		dup2(in_fd, 0);
	if (out_fd >= 0) {
		dup2(out_fd, 1);
		dup2(out_fd, 2);
	}
	if (chdir("/") < 0)
		_exit(125);
	if (drop && (setgroups(0, NULL) < 0 || setresgid(gid, gid, gid) < 0 ||
		     setresuid(uid, uid, uid) < 0))
		_exit(125);
	if (drop) {
		/* A clean environment like setpriv --reset-env: the registry
		 * falls back to /tmp/paddock-UID. */
		clearenv();
		setenv("PATH", "/usr/local/bin:/usr/bin:/bin", 1);
		setenv("HOME", "/nonexistent", 1);
		setenv("LANG", "C", 1);
	}
	execvp(argv[0], argv);
	_exit(errno == ENOENT ? 127 : 126);
}

static int wait_child(pid_t pid, int timeout_ms, int *status)
{
	cleanup_close int pfd = (int)syscall(SYS_pidfd_open, pid, 0);
	struct pollfd p = {.fd = pfd, .events = POLLIN};
	int ws;

	if (pfd >= 0 && poll(&p, 1, timeout_ms) == 0) {
		/* Timed out: our own child, by its pidfd. */
		syscall(SYS_pidfd_send_signal, pfd, SIGKILL, NULL, 0);
	}
	while (waitpid(pid, &ws, 0) < 0)
		if (errno != EINTR)
			return -errno;
	*status = WIFEXITED(ws) ? WEXITSTATUS(ws) : 128 + WTERMSIG(ws);
	return 0;
}

/* The one fork-and-wait body of run_argv() and run_argv_as(). */
static int run_as(bool drop, uid_t uid, gid_t gid, char *const argv[], const char *out_path,
		  int timeout_ms, int *status)
{
	cleanup_close int fd = open(out_path ? out_path : "/dev/null",
				    O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
	cleanup_close int in = open("/dev/null", O_RDONLY | O_CLOEXEC);
	pid_t pid;

	if (fd < 0 || in < 0)
		return -errno;
	pid = fork();
	if (pid < 0)
		return -errno;
	if (pid == 0)
		child_exec_as(uid, gid, drop, argv, fd, in);
	return wait_child(pid, timeout_ms, status);
}

int run_argv(const struct eval_ctx *ctx, bool drop, char *const argv[], const char *out_path,
	     int timeout_ms, int *status)
{
	return run_as(drop, ctx->subj->workload_uid, ctx->subj->workload_gid, argv, out_path,
		      timeout_ms, status);
}

static int capture(const struct eval_ctx *ctx, bool drop, uid_t uid, gid_t gid, char *const argv[],
		   char *buf, size_t n, int timeout_ms, int *status)
{
	long long end = now_ms() + timeout_ms, left;
	cleanup_close int rd = -1;
	int p[2];
	size_t len;
	pid_t pid;
	ssize_t k;

	(void)ctx;
	if (pipe2(p, O_CLOEXEC) < 0)
		return -errno;
	rd = p[0];
	pid = fork();
	if (pid < 0) {
		int e = -errno;

		close(p[1]);
		return e;
	}
	if (pid == 0) {
		int in = open("/dev/null", O_RDONLY | O_CLOEXEC);
		int null = open("/dev/null", O_WRONLY | O_CLOEXEC);

		dup2(p[1], 1);
		dup2(null, 2);
		child_exec_as(uid, gid, drop, argv, -1, in);
	}
	close(p[1]);
	/* Up to n-1 bytes, read against the deadline: a child that hangs
	 * with the pipe open, or has more to say than fits, is killed at the
	 * timeout by wait_child() instead of hanging the harness. */
	len = 0;
	while (len < n - 1) {
		struct pollfd pf = {.fd = rd, .events = POLLIN};
		int ready;

		left = end - now_ms();
		ready = left > 0 ? poll(&pf, 1, (int)left) : 0;
		if (ready < 0 && errno == EINTR)
			continue;
		if (ready <= 0)
			break;
		k = read(rd, buf + len, n - 1 - len);
		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0)
			break;
		len += (size_t)k;
	}
	buf[len] = '\0';
	while (len && (buf[len - 1] == '\n' || buf[len - 1] == '\r'))
		buf[--len] = '\0';
	left = end - now_ms();
	return wait_child(pid, left > 0 ? (int)left : 0, status);
}

int run_capture(const struct eval_ctx *ctx, bool drop, char *const argv[], char *buf, size_t n,
		int timeout_ms, int *status)
{
	return capture(ctx, drop, ctx->subj->workload_uid, ctx->subj->workload_gid, argv, buf, n,
		       timeout_ms, status);
}

int run_capture_as(const struct eval_ctx *ctx, uid_t uid, gid_t gid, char *const argv[], char *buf,
		   size_t n, int timeout_ms, int *status)
{
	return capture(ctx, true, uid, gid, argv, buf, n, timeout_ms, status);
}

int run_argv_as(const struct eval_ctx *ctx, uid_t uid, gid_t gid, char *const argv[],
		const char *out_path, int timeout_ms, int *status)
{
	(void)ctx;
	return run_as(true, uid, gid, argv, out_path, timeout_ms, status);
}

int run_vec(const struct eval_ctx *ctx, bool drop, const struct argv_buf *a, const char *out_path,
	    int timeout_ms, int *status)
{
	if (a->err)
		return a->err;
	return run_argv(ctx, drop, a->v, out_path, timeout_ms, status);
}

int capture_vec(const struct eval_ctx *ctx, bool drop, const struct argv_buf *a, char *buf,
		size_t n, int timeout_ms, int *status)
{
	if (a->err)
		return a->err;
	return run_capture(ctx, drop, a->v, buf, n, timeout_ms, status);
}

int capture_vec_as(const struct eval_ctx *ctx, uid_t uid, gid_t gid, const struct argv_buf *a,
		   char *buf, size_t n, int timeout_ms, int *status)
{
	if (a->err)
		return a->err;
	return run_capture_as(ctx, uid, gid, a->v, buf, n, timeout_ms, status);
}
