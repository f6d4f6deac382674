/* paddock run --detach: the foreground process forks the supervisor before
 * anything else and waits for one line from it over a socket pair:
 * "started ID" once paddock-init reported the workload started (the
 * foreground prints ID and exits 0), or "exit N" when the run ended without
 * starting (the supervisor has printed the error on the caller's stderr;
 * the foreground exits N: 125, or 126/127 when the command cannot run). */
#include "run.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <poll.h>
#include <signal.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <termios.h>
#include <unistd.h>

#include "../../include/cleanup.h"
#include "../../include/exitcodes.h"

static void report(struct run *r, const char *line)
{
	if (r->live.report_fd < 0)
		return;
	/* MSG_NOSIGNAL: a foreground process that was killed meanwhile
	 * must not take the supervisor with it (SIGPIPE). */
	(void)!send(r->live.report_fd, line, strlen(line), MSG_NOSIGNAL);
	close(r->live.report_fd);
	r->live.report_fd = -1;
	if (r->live.caller_err >= 0)
		close(r->live.caller_err);
	r->live.caller_err = -1;
}

void detach_report_started(struct run *r)
{
	char line[SESSION_ID_LEN + 16];

	if (!r->spec->opt->detach)
		return; /* a foreground run with leases reports at "retained" */
	snprintf(line, sizeof(line), "started %s\n",
		 r->live.session ? r->live.session->info.id : "?");
	report(r, line);
}

void retain_report(struct run *r, int status)
{
	char line[32];
	int null;

	snprintf(line, sizeof(line), "retained %d\n", status);
	report(r, line);
	/* The caller has its status and its terminal back: what the
	 * supervisor could still say is in the record and the session. */
	null = open("/dev/null", O_RDWR | O_CLOEXEC);
	if (null >= 0) {
		/* stdin too: the caller's terminal is not the supervisor's
		 * to hold while the leases run on. */
		dup2(null, 0);
		dup2(null, 1);
		dup2(null, 2);
		close(null);
	}
}

void detach_report_exit(struct run *r, int status)
{
	char line[32];

	snprintf(line, sizeof(line), "exit %d\n", status);
	report(r, line);
}

/* The supervisor-to-be: out of the caller's session and terminal (no
 * SIGHUP when it closes, no job-control stops), stdin from /dev/null,
 * and none of the caller's fds but 0-2, which it gives up later for the
 * session's output files. */
static int become_supervisor(struct run *r, int fd, struct err *err)
{
	const struct sandbox_join j = {
	    .parent = 0, .pidfd = -1, .keep = &fd, .n_keep = 1, .flags = SANDBOX_JOIN_NULL_STDIN};
	int rc;

	if (setsid() < 0)
		return err_sys(err, errno, "setsid");
	rc = sandbox_join(&j, err);
	if (rc < 0)
		return rc;
	r->live.report_fd = fd;
	return 0;
}

/* Fork the supervisor-to-be with a socket pair to report over: returns 0
 * in the child (*fd its end), the child's pid in the parent (*fd ours), or
 * -errno. */
static pid_t fork_reporting(int *fd, struct err *err)
{
	int sv[2];
	pid_t pid;

	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) < 0)
		return err_sys(err, errno, "socketpair");
	fflush(NULL);
	pid = fork();
	if (pid < 0) {
		pid = err_sys(err, errno, "fork");
		close(sv[0]);
		close(sv[1]);
		return pid;
	}
	close(sv[pid == 0 ? 0 : 1]);
	*fd = sv[pid == 0 ? 1 : 0];
	return pid;
}

/* The report "exit N" (else a complaint and 125), once the supervisor has
 * ended: nothing of the run is left when the foreground returns. A report
 * that is neither (a bug of ours) would leave the supervisor running and
 * us waiting for it: it is told to end the run (SIGTERM, forwarded to the
 * sandbox; still our unreaped child, so its pid is its own). */
static int final_status(const char *buf, pid_t pid)
{
	int status = EXIT_LAUNCHER;

	if (sscanf(buf, "exit %d", &status) != 1) {
		if (buf[0]) {
			fprintf(stderr,
				"paddock: the supervisor's report \"%.64s\" was neither the run's "
				"start nor its end; ending the run\n",
				buf);
			(void)kill(pid, SIGTERM);
		} else {
			fputs("paddock: the supervisor ended without a report\n", stderr);
		}
		status = EXIT_LAUNCHER;
	}
	while (waitpid(pid, NULL, 0) < 0 && errno == EINTR)
		;
	return status;
}

/* The foreground side: the supervisor's one line, then its exit if it
 * ended, so nothing of a failed run is left when we return. */
/* A line, not read_full(): the line is all there is to wait for, whoever
 * else may still hold the other end. */
static int wait_report(int fd, pid_t pid)
{
	char buf[128];
	size_t n = 0;

	while (n < sizeof(buf) - 1) {
		ssize_t k = read(fd, buf + n, sizeof(buf) - 1 - n);

		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0)
			break;
		n += (size_t)k;
		if (memchr(buf, '\n', n))
			break;
	}
	buf[n] = '\0';
	buf[strcspn(buf, "\n")] = '\0';
	if (strncmp(buf, "started ", 8) == 0) {
		printf("%s\n", buf + 8);
		return fflush(stdout) == 0 ? 0 : EXIT_LAUNCHER;
	}
	return final_status(buf, pid);
}

int detach_start(struct run *r, int *status, struct err *err)
{
	int fd = -1;
	pid_t pid = fork_reporting(&fd, err);
	int rc;

	if (pid < 0)
		return pid;
	if (pid == 0) {
		rc = become_supervisor(r, fd, err);
		if (rc < 0) {
			/* Still the caller's stderr. */
			fprintf(stderr, "paddock: %s\n", err->msg);
			r->live.report_fd = fd;
			detach_report_exit(r, EXIT_LAUNCHER);
			_exit(EXIT_LAUNCHER);
		}
		return 0;
	}
	*status = wait_report(fd, pid);
	close(fd);
	return 1;
}

/* The foreground side of retain_start(): signals sent to us by a process
 * (kill(1), a harness) go on to the supervisor; those of the terminal
 * (si_code SI_KERNEL) reach it directly, as it shares our process group. */
static int retain_wait(int fd, pid_t pid)
{
	cleanup_close int sfd = -1;
	char buf[64];
	size_t n = 0;
	int status = EXIT_LAUNCHER;
	sigset_t set;

	forwarded_sigset(&set);
	sigprocmask(SIG_BLOCK, &set, NULL);
	sfd = signalfd(-1, &set, SFD_CLOEXEC | SFD_NONBLOCK);
	while (n < sizeof(buf) - 1 && !memchr(buf, '\n', n)) {
		struct pollfd p[2] = {{.fd = fd, .events = POLLIN}, {.fd = sfd, .events = POLLIN}};
		struct signalfd_siginfo si;
		ssize_t k;

		if (poll(p, 2, -1) < 0)
			continue;
		while (sfd >= 0 && read(sfd, &si, sizeof(si)) == sizeof(si))
			if (si.ssi_code != SI_KERNEL)
				kill(pid, (int)si.ssi_signo); /* unreaped: still our child */
		if (!p[0].revents)
			continue;
		k = read(fd, buf + n, sizeof(buf) - 1 - n);
		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0)
			break;
		n += (size_t)k;
	}
	buf[n] = '\0';
	if (sscanf(buf, "retained %d", &status) == 1)
		return status; /* it supervises the leases on */
	return final_status(buf, pid);
}

int retain_start(struct run *r, int *status, struct err *err)
{
	struct termios saved;
	/* The supervisor-to-be relays the caller's terminal (stdio.c) and
	 * restores its mode itself; should it die without (SIGKILL), we
	 * do, once it has ended or reported, from the foreground only. */
	bool tty = isatty(0) && tcgetattr(0, &saved) == 0;
	int fd = -1;
	pid_t pid = fork_reporting(&fd, err);

	if (pid < 0)
		return pid;
	if (pid == 0) {
		r->live.report_fd = fd;
		return 0;
	}
	*status = retain_wait(fd, pid);
	close(fd);
	if (tty && tcgetpgrp(0) == getpgrp())
		(void)tcsetattr(0, TCSADRAIN, &saved);
	return 1;
}
