/* paddock-init: the PID 1 of each sandbox; see paddock-init(8), docs/init.md
 * and the protocol in include/initproto.h. libc only, linked statically.
 *
 * When init exits: the workload's end, "stop" or the supervisor's loss starts
 * the shutdown (SIGTERM to what is left, SIGKILL after the grace period), and
 * init exits once waitpid() says ECHILD - no process but init is left - so the
 * rest gets its grace period and its report. Exiting with the workload (tini,
 * catatonit) would let the kernel SIGKILL the rest of the namespace unseen
 * (pid_namespaces(7)), or, without a pid namespace, let it outlive init. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/timerfd.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "../include/cleanup.h"
#include "../include/err.h"
#include "../include/exitcodes.h"
#include "../include/initproto.h"
#include "../include/io.h"
#include "../include/log.h"
#include "../include/timer.h"
#include "init.h"

#ifndef PADDOCK_VERSION
#define PADDOCK_VERSION "0.1.0"
#endif

#define GRACE_MS_DEFAULT 2000
#define GRACE_MS_MAX	 (30L * 24 * 3600 * 1000) /* the policy's limit for limits.grace */

/* Synchronous fault signals stay unblocked: blocking them would not stop the
 * kernel from killing us on a real fault (force_sig_fault), it would only
 * hide the reason; a crashing init should crash loudly. */
static const int fault_signals[] = {SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGABRT, SIGTRAP, SIGSYS};

#define BIT(s) (1UL << (s))
#define FORWARDED                                                                                \
	(BIT(SIGINT) | BIT(SIGTERM) | BIT(SIGHUP) | BIT(SIGQUIT) | BIT(SIGUSR1) | BIT(SIGUSR2) | \
	 BIT(SIGWINCH) | BIT(SIGCONT) | BIT(SIGALRM))

void init_complain(const char *fmt, ...)
{
	int saved = errno; /* for %m */
	va_list ap;

	fputs("paddock-init: warning: ", stderr);
	errno = saved;
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	va_end(ap);
}

/* One protocol message per packet. A blocking send on purpose: "exit" and
 * "done" are the contract, so when the supervisor is slow init waits for it
 * rather than dropping reports; a dead supervisor gives EPIPE, not a hang. */
void init_say(struct init *in, const char *fmt, ...)
{
	char msg[INITPROTO_MAX + 1];
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	n = n > INITPROTO_MAX ? INITPROTO_MAX : n; /* n < 0 cannot happen here */
	log_debug("init -> %s", msg);
	if (in->ctl < 0)
		return;
	/* MSG_NOSIGNAL: no SIGPIPE. EPIPE and ECONNRESET mean the supervisor is
	 * gone; its EOF starts the shutdown and there is nobody left to tell. */
	if (send(in->ctl, msg, (size_t)n, MSG_NOSIGNAL) < 0 && errno != EPIPE &&
	    errno != ECONNRESET)
		init_complain("control socket: send \"%s\": %m", msg);
}

void init_printable(char *s)
{
	for (; *s; s++)
		if (*s <= ' ' || *s >= 0x7f)
			*s = '_';
}

int init_parse_num(const char *s, long max, long *out)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(s, &end, 10);
	if (s[0] < '0' || s[0] > '9' || errno || *end || v > max)
		return -EINVAL;
	*out = v;
	return 0;
}

int64_t init_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static void shutdown_begin(struct init *in)
{
	int r;

	if (in->phase >= TERMINATING)
		return;
	in->phase = TERMINATING;
	services_tick(in); /* disarms the services' own deadlines */
	if (in->no_children)
		return;
	procs_sweep(in, SIGTERM);
	/* --grace 0 means "now" (timer_arm_ms() of 0 fires at once). */
	r = timer_arm_ms(in->tfd, (uint64_t)in->grace_ms);
	if (r < 0) {
		init_complain("timerfd_settime: %s; sending SIGKILL now", strerror(-r));
		in->phase = KILLING;
		procs_sweep(in, SIGKILL);
	}
}

/* Reaps every child that has ended: the workload, services, and orphans the
 * kernel reparented to us. Returns how many. */
static unsigned reap(struct init *in)
{
	unsigned n = 0;
	pid_t p;
	int st;

	/* --tty: WUNTRACED, to see the workload's top process stopped by
	 * the pty's ^Z (below). */
	while ((p = waitpid(-1, &st, WNOHANG | (in->tty ? WUNTRACED : 0))) > 0 ||
	       (p < 0 && errno == EINTR)) {
		if (p > 0 && WIFSTOPPED(st)) {
			/* ^Z stopped the workload's top process itself: a
			 * program with no job control of its own (a shell
			 * without -i, an editor that does not catch it). Nothing
			 * inside could resume it, and ^C would wait behind the
			 * stop: resumed at once, as Docker's PID 1 ignores ^Z.
			 * The stopped jobs of an interactive shell are its own
			 * children, never seen here. */
			if (p == in->wpid && WSTOPSIG(st) == SIGTSTP)
				(void)kill(-in->wpid, SIGCONT);
			continue;
		}
		n += p > 0;
		if (p != in->wpid || in->reaped) {
			services_reaped(in, p, st);
			continue;
		}
		in->reaped = true;
		in->wstatus = st;
		if (WIFSIGNALED(st))
			init_say(in, "signal %d", WTERMSIG(st));
		else
			init_say(in, "exit %d", WEXITSTATUS(st));
	}
	if (p < 0 && errno == ECHILD)
		in->no_children = true;
	else if (p < 0)
		init_complain("waitpid: %m");
	return n;
}

/* Many children ending at once (thousands of orphans, a shutdown): every
 * waitpid(2) that finds nothing walks all of our children in the kernel
 * (do_wait), so reaping at each SIGCHLD costs O(children) per exit and
 * O(n^2) in all (bench/: reaping 10,000 orphans took up to a second of
 * init's CPU). In a burst init reaps on a timer instead, a few hundred
 * exits per walk (every 2 ms in the shutdown, where each pass also ends the
 * wait of whoever waits for the end), and goes back to SIGCHLD once a pass
 * finds none. */
#define REAP_BATCH_MS	  10  /* while the workload runs */
#define REAP_BATCH_END_MS 2   /* in the shutdown, when the end is what counts */
#define DL_WARM_MS	  200 /* the deadline timer's warm-up, before it (deadline_timer()) */
#define REAP_BURST	  2

static void reap_children(struct init *in)
{
	unsigned n = reap(in);

	if (n >= REAP_BURST)
		in->reap_burst = true;
	else if (n == 0)
		in->reap_burst = false;
	/* No-pidns mode: killing a child that left the group hands its own
	 * children to us (subreaper), so those are found and killed here. */
	if (in->phase == KILLING && !in->pid1 && !in->no_children)
		procs_sweep(in, SIGKILL);
	if (in->phase == SHEDDING && in->shed_killing)
		services_sweep_others(in, SIGKILL);
}

/* Where a forwarded signal goes: SIGINT and SIGQUIT, as a terminal sends
 * them, to the whole foreground process group (the pty's, else the
 * workload's group), so that "sh -c make" stops on Ctrl-C as it does
 * outside and not only sh; the rest to the workload alone. Called only
 * while the workload is unreaped: its group id cannot belong to anyone
 * else then, and a pty's foreground group is one of the sandbox's own
 * session (the pty is the sandbox's). */
static pid_t target(const struct init *in, int sig)
{
	pid_t fg;

	if (sig != SIGINT && sig != SIGQUIT)
		return in->wpid;
	fg = in->tty_fd >= 0 ? tcgetpgrp(in->tty_fd) : -1;
	return fg > 0 ? -fg : -in->wpid;
}

static void on_signals(struct init *in)
{
	struct signalfd_siginfo si[16];
	bool child = false;
	ssize_t n;

	while ((n = read(in->sfd, si, sizeof(si))) > 0) {
		for (size_t i = 0; i < (size_t)n / sizeof(si[0]); i++) {
			int sig = (int)si[i].ssi_signo;

			if (sig == SIGCHLD)
				child = true;
			/* Until we reap it, the workload's pid is ours and even a
			 * zombie accepts kill(2), so ESRCH cannot really happen;
			 * were it to, the workload is gone and reap() says so.
			 * The other signals (SIGPIPE, SIGTSTP, ...) are dropped. */
			else if (sig < 64 && (FORWARDED & BIT(sig)) && !in->reaped &&
				 kill(target(in, sig), sig) < 0 && errno != ESRCH)
				init_complain("forward signal %d: %m", sig);
		}
	}
	if (n < 0 && errno != EAGAIN && errno != EINTR)
		init_complain("read signalfd: %m");
	/* In a burst the next timed pass reaps (loop()). */
	if (child && !in->reap_burst)
		reap_children(in);
}

static void on_control(struct init *in, short revents)
{
	char buf[INITPROTO_MAX + 1];
	long grace;
	ssize_t n = read(in->ctl, buf, sizeof(buf));

	if (n < 0 && (errno == EAGAIN || errno == EINTR))
		return;
	/* EOF or ECONNRESET: the supervisor is gone. The launcher also sets
	 * PDEATHSIG on init; this is belt and braces. A zero-length packet
	 * without POLLHUP is not an EOF, just an empty message. */
	if ((n == 0 && (revents & POLLHUP)) || (n < 0 && errno == ECONNRESET)) {
		in->ctl_closed = true;
		services_mark(in, "stopped");
		shutdown_begin(in);
		return;
	}
	if (n < 0) {
		init_complain("control socket: read: %m; no longer listening");
		in->ctl_closed = true;
		return;
	}
	buf[n > INITPROTO_MAX ? INITPROTO_MAX : n] = '\0';
	if (strcmp(buf, "stop") == 0) {
		services_mark(in, "stopped");
		shutdown_begin(in);
		return;
	}
	/* "stop MS": this shutdown's grace period (paddock stop --grace);
	 * one already under way keeps its own. */
	if (strncmp(buf, "stop ", 5) == 0 && init_parse_num(buf + 5, GRACE_MS_MAX, &grace) == 0) {
		if (in->phase < TERMINATING)
			in->grace_ms = grace;
		services_mark(in, "stopped");
		shutdown_begin(in);
		return;
	}
	init_printable(buf);
	init_complain("ignoring unknown control message \"%s\"", buf);
}

static __attribute__((noreturn)) void finish(struct init *in)
{
	/* finish() runs only after ECHILD, and the workload is init's own
	 * child until reaped, so its status is always known here: the
	 * EXIT_LAUNCHER fallback cannot be reached. */
	int code = EXIT_LAUNCHER;

	if (in->reaped)
		code = WIFSIGNALED(in->wstatus) ? EXIT_SIGNAL_BASE + WTERMSIG(in->wstatus)
						: WEXITSTATUS(in->wstatus);
	procs_flush_reports(in);
	init_say(in, "done");
	exit(code);
}

/* The grace timer, ms from now (0: at once). A failure is only warned: the
 * workload runs, so init must not exit (section 9 of STYLE.md). */
static void arm_grace(struct init *in, long ms)
{
	int r = timer_arm_ms(in->tfd, (uint64_t)ms);

	if (r < 0)
		init_complain("timerfd_settime: %s", strerror(-r));
}

/* The workload ended. Without a running leased service the sandbox ends;
 * with one, everything else does (SHEDDING: SIGTERM, SIGKILL after the
 * grace period) and then only the services are left (RETAINED), until
 * their leases end, "stop", or the supervisor's loss. */
static void workload_ended(struct init *in)
{
	/* --no-sweep (evaluation only): leave now, ending nothing, and never
	 * say "done" (something may be left). As PID 1 our exit still ends the
	 * namespace (zap_pid_ns_processes); without a pid namespace the
	 * leftovers, our children as their subreaper, go to the host's. */
	if (in->no_sweep) {
		procs_flush_reports(in);
		exit(WIFSIGNALED(in->wstatus) ? EXIT_SIGNAL_BASE + WTERMSIG(in->wstatus)
					      : WEXITSTATUS(in->wstatus));
	}
	if (in->phase == RUNNING) {
		services_mark(in, "main-ended");
		if (!in->pid1 || !services_retainable(in)) {
			shutdown_begin(in);
			return;
		}
		in->phase = SHEDDING;
		services_sweep_others(in, SIGTERM);
		arm_grace(in, in->grace_ms);
	}
	/* Zombies are not counted: reap ours first, so that every service
	 * that ended is reported before "retained". */
	if (in->phase == SHEDDING)
		(void)reap(in);
	if (in->phase == SHEDDING && services_sweep_others(in, 0) == 0) {
		in->phase = RETAINED;
		/* The shedding's grace timer, disarmed. */
		(void)timer_disarm(in->tfd);
		init_say(in, "retained");
	}
	if (in->phase == RETAINED && !services_running(in))
		shutdown_begin(in);
}

/* --deadline-ms passed: the supervisor's own TTL check should have ended
 * the sandbox just before, so it is stopped, hung or slow. Expiry must not
 * depend on it (a SIGSTOPped supervisor would otherwise keep the sandbox
 * alive for as long as it is stopped): init ends the sandbox itself, with
 * its usual grace period, and says so. */
static void deadline(struct init *in)
{
	init_say(in, "deadline");
	services_mark(in, "stopped");
	shutdown_begin(in);
}

/* The deadline's timer fires twice: DL_WARM_MS before the deadline, where
 * /proc is listed once so that the shutdown's own listing finds its
 * entries cached (procs_warm()), then at the deadline. The supervisor's
 * TTL stop normally comes INIT_DEADLINE_MARGIN_MS (100 ms) before ours,
 * so the warm-up comes before that too. */
static void deadline_timer(struct init *in)
{
	int r;

	if (in->dl_warmed) {
		deadline(in);
		return;
	}
	in->dl_warmed = true;
	if (in->pid1)
		procs_warm(in);
	if ((r = timer_arm_at_ms(in->dl_tfd, in->deadline_ms)) < 0) {
		errno = -r;
		init_complain("deadline timer: %m; ending the sandbox now");
		deadline(in);
	}
}

/* The grace timer: of the shutdown, or of the shedding after the
 * workload's end (then swept again every 100 ms until nothing is left:
 * the rest may have parents other than init, whose end we never see). */
static void grace_over(struct init *in)
{
	if (in->phase == SHEDDING) {
		in->shed_killing = true;
		services_sweep_others(in, SIGKILL);
		arm_grace(in, 100);
		return;
	}
	if (in->phase == TERMINATING) {
		in->phase = KILLING;
		procs_sweep(in, SIGKILL);
	}
}

static __attribute__((noreturn)) void loop(struct init *in)
{
	for (;;) {
		bool grace = in->phase == TERMINATING || in->phase == SHEDDING;
		struct pollfd p[5] = {
		    {.fd = in->sfd, .events = POLLIN},
		    {.fd = in->ctl >= 0 && !in->ctl_closed ? in->ctl : -1, .events = POLLIN},
		    {.fd = grace ? in->tfd : -1, .events = POLLIN},
		    {.fd = in->nsvc ? in->svc_tfd : -1, .events = POLLIN},
		    {.fd = in->phase < TERMINATING ? in->dl_tfd : -1, .events = POLLIN},
		};
		uint64_t ticks;

		if (in->phase != RUNNING && in->no_children)
			finish(in);
		int batch = in->phase >= TERMINATING ? REAP_BATCH_END_MS : REAP_BATCH_MS;
		int ready = poll(p, 5, in->reap_burst ? batch : -1);

		if (ready < 0) {
			if (errno != EINTR)
				init_complain("poll: %m");
			continue;
		}
		if (p[0].revents)
			on_signals(in);
		if (in->reap_burst && ready == 0)
			reap_children(in);
		if (p[1].revents)
			on_control(in, p[1].revents);
		if (p[2].revents && read(in->tfd, &ticks, sizeof(ticks)) > 0)
			grace_over(in);
		if (p[4].revents && read(in->dl_tfd, &ticks, sizeof(ticks)) > 0)
			deadline_timer(in);
		if (in->nsvc && ((p[3].revents && read(in->svc_tfd, &ticks, sizeof(ticks)) > 0) ||
				 p[0].revents))
			services_tick(in);
		if (in->reaped)
			workload_ended(in);
	}
}

/* The child's side of the fork: never returns into init's code. */
static __attribute__((noreturn)) void child(struct init *in, char **cmd, int errfd)
{
	pid_t fg = tcgetpgrp(STDIN_FILENO); /* -1 (ENOTTY) without a tty */

	/* Own process group so that a "term"/"kill" of the group (no-pidns
	 * mode) and job control address the workload and not init. */
	setpgid(0, 0);
	/* Hand the workload the terminal only if init's group holds it (never
	 * steal it from the shell of a background job). Signals are still
	 * blocked, so SIGTTOU does not stop this background group (tcsetpgrp(3));
	 * a failure just leaves the terminal where it was. */
	if (fg > 0 && fg == getpgid(getppid()))
		(void)tcsetpgrp(STDIN_FILENO, getpid());
	init_exec_child(in, cmd, errfd);
}

/* 0, or -errno. */
static int set_cloexec(int fd)
{
	int fl = fcntl(fd, F_GETFD);

	if (fl < 0 || fcntl(fd, F_SETFD, fl | FD_CLOEXEC) < 0)
		return -errno;
	return 0;
}

/* Everything that may fail before the workload exists; failing here is an
 * exit 125, with nothing started. */
static int setup(struct init *in, int pipefd[2], struct err *err)
{
	struct sigaction sa;
	sigset_t block;
	int r;

	/* The control socket is init's alone: the workload must never inherit
	 * it and speak to the supervisor in init's name. */
	if (in->ctl >= 0 && (r = set_cloexec(in->ctl)) < 0)
		return err_sys(err, r, "control fd %d", in->ctl);
	/* Likewise the ruleset: what init starts enters its domain and then
	 * has no use for it. */
	if (in->landlock_fd >= 0 && (r = set_cloexec(in->landlock_fd)) < 0)
		return err_sys(err, r, "landlock fd %d", in->landlock_fd);
	/* Not dumpable: the workload runs with our uid in our user namespace
	 * without capabilities, so this alone keeps it from ptrace()ing us,
	 * from pidfd_getfd(2) of the control socket and from /proc/1/fd
	 * (ptrace access mode checks, ptrace(2)); it could otherwise speak to
	 * the supervisor in our name and forge its own exit status. The
	 * workload itself is dumpable again after its execve. */
	if (prctl(PR_SET_DUMPABLE, 0) < 0)
		return err_sys(err, errno, "prctl(PR_SET_DUMPABLE)");
	/* Without a pid namespace, orphans of the workload would go to the
	 * host's init; as subreaper we reap them and can kill them. */
	if (!in->pid1 && prctl(PR_SET_CHILD_SUBREAPER, 1) < 0)
		return err_sys(err, errno, "prctl(PR_SET_CHILD_SUBREAPER)");
	/* execve(2) keeps only SIG_IGN dispositions. An ignored SIGCHLD would
	 * make the kernel reap our children itself and lose the workload's
	 * status (wait(2) NOTES), and the workload should start with defaults.
	 * Errors are glibc's reserved signals and SIGKILL/SIGSTOP. */
	for (int s = 1; s < NSIG; s++)
		if (sigaction(s, NULL, &sa) == 0 && sa.sa_handler == SIG_IGN)
			signal(s, SIG_DFL);
	sigfillset(&block);
	for (size_t i = 0; i < sizeof(fault_signals) / sizeof(fault_signals[0]); i++)
		sigdelset(&block, fault_signals[i]);
	/* Blocked signals are queued even for a namespace's PID 1, which drops
	 * unhandled SIG_DFL signals (pid_namespaces(7)); we read them here. */
	if (sigprocmask(SIG_SETMASK, &block, &in->orig_mask) < 0)
		return err_sys(err, errno, "sigprocmask");
	in->sfd = signalfd(-1, &block, SFD_CLOEXEC | SFD_NONBLOCK);
	if (in->sfd < 0)
		return err_sys(err, errno, "signalfd");
	in->tfd = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC | TFD_NONBLOCK);
	in->svc_tfd = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC | TFD_NONBLOCK);
	if (in->tfd < 0 || in->svc_tfd < 0)
		return err_sys(err, errno, "timerfd_create");
	if (pipe2(pipefd, O_CLOEXEC) < 0)
		return err_sys(err, errno, "pipe2");
	for (int i = 0; i < 2; i++)
		if (in->svc_out[i] >= 0 && (r = set_cloexec(in->svc_out[i])) < 0)
			return err_sys(err, r, "service output fd %d", in->svc_out[i]);
	/* Optional: a policy without a "dev" mount has no /dev/null; then
	 * the services' stdin, and init's own after the fork, are closed. */
	in->null_fd = open("/dev/null", O_RDWR | O_CLOEXEC);
	/* --tty: init is the leader of the sandbox's session (the launcher's
	 * setsid()) and takes the pty slave on fd 0 as its controlling
	 * terminal, so the workload can be given the foreground (child())
	 * and job control works inside: ^C, ^Z and ^\ of the pty reach the
	 * sandbox's foreground group, and only the sandbox's. */
	if (in->tty) {
		if (ioctl(0, TIOCSCTTY, 0) < 0)
			return err_sys(err, errno, "TIOCSCTTY");
		in->tty_fd = fcntl(0, F_DUPFD_CLOEXEC, 3);
		if (in->tty_fd < 0)
			return err_sys(err, errno, "dup the tty");
	}
	if (in->deadline_ms > 0) {
		in->dl_tfd = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC | TFD_NONBLOCK);
		if (in->dl_tfd < 0)
			return err_sys(err, errno, "deadline timer");
		/* Too close for a warm-up: the deadline itself. */
		in->dl_warmed = in->deadline_ms - DL_WARM_MS <= init_now_ms();
		if ((r = timer_arm_at_ms(in->dl_tfd,
					 in->deadline_ms - (in->dl_warmed ? 0 : DL_WARM_MS))) < 0)
			return err_sys(err, r, "deadline timer");
	}
	return 0;
}

/* Forks the workload; fails only if fork() does. */
static int spawn(struct init *in, char **cmd, int pipefd[2], struct err *err)
{
	pid_t pid = fork();
	ssize_t n;
	int e = 0;

	if (pid < 0)
		return err_sys(err, errno, "fork");
	if (pid == 0)
		child(in, cmd, pipefd[1]);
	close(pipefd[1]);
	in->wpid = pid;
	/* Both sides call setpgid() so no signal or kill of the group can race
	 * it (setpgid(2), the job-control idiom). EACCES: the child already
	 * exec'd, which it does only after its own setpgid(). */
	if (setpgid(pid, pid) < 0 && errno != EACCES)
		init_complain("setpgid %d: %m", (int)pid);
	/* The pipe is close-on-exec: EOF means the exec succeeded. */
	n = read_full(pipefd[0], &e, sizeof(e));
	close(pipefd[0]);
	if (n == sizeof(e) && (e & INIT_LANDLOCK_FAILED)) {
		/* "error ERRNO MSG", as the launcher's child reports its own
		 * setup failures: the errno crosses the socket as a number. */
		char msg[INITPROTO_MAX + 1];
		struct err le;

		err_sys(&le, e & ~INIT_LANDLOCK_FAILED, "landlock: restrict_self");
		if (initproto_error_format(msg, sizeof(msg), le.code, le.msg) >= 0)
			init_say(in, "%s", msg);
	} else if (n == sizeof(e))
		init_say(in, "exec-error %d", e);
	else
		init_say(in, "started %d", (int)pid);
	/* init gives up its stdin and stdout (the relay's pipes or the
	 * sandbox's pty): the workload's end is then the end of its input,
	 * and the supervisor's relay sees the workload's readers go. stderr
	 * stays for init's own warnings. */
	if (in->null_fd >= 0 && (dup2(in->null_fd, 0) < 0 || dup2(in->null_fd, 1) < 0))
		init_complain("stdio to /dev/null: %m");
	/* After the fork: the workload keeps the cwd the launcher set; init
	 * holds no directory busy. */
	if (chdir("/") < 0)
		init_complain("chdir /: %m");
	return 0;
}

static void usage(void)
{
	fputs("Usage: paddock-init [--control-fd N] [--grace MS] [--landlock-fd N] [--tty]\n"
	      "       [--deadline-ms T] [--service-stdout-fd N] [--service-stderr-fd N]\n"
	      "       [--no-sweep] [--service NAME "
	      "LEASE_MS ARGC "
	      "ARG...]... [--] CMD [ARG]...\n"
	      "Run CMD as the init of a paddock sandbox; see paddock-init(8).\n"
	      "  --control-fd N  report to, and obey, the SOCK_SEQPACKET socket N (N >= 3)\n"
	      "  --grace MS      SIGTERM-to-SIGKILL delay in milliseconds (default 2000)\n"
	      "  --landlock-fd N enter the Landlock ruleset N in every process started\n"
	      "  --no-sweep      evaluation only: exit when CMD ends, leaving the rest\n"
	      "  --service-stdout-fd N, --service-stderr-fd N\n"
	      "                  the services' stdout and stderr (default /dev/null);\n"
	      "                  their stdin is /dev/null\n"
	      "  --tty           fd 0 is a pty slave: make it the controlling terminal\n"
	      "  --deadline-ms T end the sandbox at CLOCK_MONOTONIC time T (ms)\n"
	      "  --service NAME LEASE_MS ARGC ARG...\n"
	      "                  start ARG... first, in a session of its own; with LEASE_MS\n"
	      "                  above 0 it outlives CMD until LEASE_MS after its start\n"
	      "  --help, --version\n",
	      stdout);
}

/* An fd given on the command line: 3 or above, 0-2 being stdio. */
static int parse_fd(const char *s, int *out)
{
	long v;

	if (init_parse_num(s, INT32_MAX, &v) < 0 || v < 3)
		return -EINVAL;
	*out = (int)v;
	return 0;
}

/* Returns the index of CMD in argv, 0 after --help/--version, or -EINVAL. */
static int parse_args(int argc, char **argv, struct init *in, struct err *err)
{
	static const struct option opts[] = {
	    {"control-fd", required_argument, NULL, 'c'},
	    {"grace", required_argument, NULL, 'g'},
	    {"service", required_argument, NULL, 's'},
	    {"landlock-fd", required_argument, NULL, 'l'},
	    {"no-sweep", no_argument, NULL, 'n'},
	    {"service-stdout-fd", required_argument, NULL, 'o'},
	    {"service-stderr-fd", required_argument, NULL, 'e'},
	    {"tty", no_argument, NULL, 't'},
	    {"deadline-ms", required_argument, NULL, 'd'},
	    {"help", no_argument, NULL, 'h'},
	    {"version", no_argument, NULL, 'V'},
	    {NULL, 0, NULL, 0},
	};
	long v;
	int c;

	opterr = 0; /* our own one-line messages */
	/* '+': stop at CMD, whose options are its own. */
	while ((c = getopt_long(argc, argv, "+:", opts, NULL)) != -1) {
		switch (c) {
		case 'c':
			if (parse_fd(optarg, &in->ctl) < 0)
				return err_set(err, EINVAL, "bad --control-fd '%s'", optarg);
			break;
		case 'g':
			if (init_parse_num(optarg, GRACE_MS_MAX, &v) < 0)
				return err_set(err, EINVAL, "bad --grace '%s'", optarg);
			in->grace_ms = v;
			break;
		case 'n':
			in->no_sweep = true;
			break;
		case 'l':
			if (parse_fd(optarg, &in->landlock_fd) < 0)
				return err_set(err, EINVAL, "bad --landlock-fd '%s'", optarg);
			break;
		case 'o':
		case 'e':
			if (parse_fd(optarg, &in->svc_out[c == 'e']) < 0)
				return err_set(err, EINVAL, "bad --service-%s-fd '%s'",
					       c == 'e' ? "stderr" : "stdout", optarg);
			break;
		case 't':
			in->tty = true;
			break;
		case 'd':
			if (init_parse_num(optarg, LONG_MAX, &v) < 0 || v == 0)
				return err_set(err, EINVAL, "bad --deadline-ms '%s'", optarg);
			in->deadline_ms = v;
			break;
		case 's':
			if (services_add(in, optarg, argc, argv, &optind, err) < 0)
				return -EINVAL;
			break;
		case 'h':
			usage();
			return 0;
		case 'V':
			puts("paddock-init " PADDOCK_VERSION);
			return 0;
		case ':':
			return err_set(err, EINVAL, "option '%s' needs a value", argv[optind - 1]);
		default:
			return err_set(err, EINVAL, "unknown option '%s'", argv[optind - 1]);
		}
	}
	if (optind >= argc)
		return err_set(err, EINVAL, "no command given (try --help)");
	return optind;
}

#if defined(__SANITIZE_ADDRESS__)
/* Sanitizer builds only: LeakSanitizer stops the world with ptrace at exit,
 * which a non-dumpable process refuses (fatal error, exit 1). The launcher
 * and the unit tests keep leak checking; init gives it up. */
const char *__asan_default_options(void);
const char *__asan_default_options(void)
{
	return "detect_leaks=0";
}
#endif

int main(int argc, char **argv)
{
	struct init in = {.ctl = -1,
			  .landlock_fd = -1,
			  .grace_ms = GRACE_MS_DEFAULT,
			  .sfd = -1,
			  .tfd = -1,
			  .svc_tfd = -1,
			  .svc_out = {-1, -1},
			  .null_fd = -1,
			  .tty_fd = -1,
			  .dl_tfd = -1};
	struct err err = {0};
	int pipefd[2] = {-1, -1};
	int r, cmd = 0;

	r = parse_args(argc, argv, &in, &err);
	if (r == 0)
		return 0;
	if (r > 0) {
		cmd = r;
		in.self = getpid();
		in.pid1 = in.self == 1;
		r = setup(&in, pipefd, &err);
	}
	if (r >= 0) {
		/* Before the workload, which may want to use them. */
		services_start(&in);
		r = spawn(&in, argv + cmd, pipefd, &err);
	}
	if (r < 0) {
		fprintf(stderr, "paddock-init: %s\n", err.msg);
		return EXIT_LAUNCHER;
	}
	/* From here on the workload exists: init only warns, never exits on
	 * an error (catatonit's rule); finish() is the only way out. */
	loop(&in);
}
