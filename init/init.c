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
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/timerfd.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../include/cleanup.h"
#include "../include/err.h"
#include "../include/exitcodes.h"
#include "../include/initproto.h"
#include "../include/log.h"

#ifndef PADDOCK_VERSION
#define PADDOCK_VERSION "0.1.0"
#endif

#define GRACE_MS_DEFAULT 2000
#define GRACE_MS_MAX	 (30L * 24 * 3600 * 1000) /* the policy's limit for limits.grace */
#define COMM_MAX	 64
#define KILLED_MAX	 256

enum phase {
	RUNNING,     /* the workload runs, nothing asked us to stop */
	TERMINATING, /* SIGTERM sent, grace timer armed */
	KILLING,     /* grace expired, SIGKILL sent */
};

struct init {
	int ctl;	 /* control socket, -1 without --control-fd */
	bool ctl_closed; /* EOF or a hard error: stop polling it */
	long grace_ms;	 /* SIGTERM -> SIGKILL delay */
	bool pid1;	 /* we are PID 1 of our own pid namespace */
	pid_t self;	 /* getpid() */
	int sfd;	 /* signalfd for every blocked signal */
	int tfd;	 /* grace timer */
	sigset_t orig_mask;
	pid_t wpid;  /* the workload, also its process group id */
	bool reaped; /* wstatus is valid */
	int wstatus;
	bool no_children; /* waitpid() said ECHILD */
	enum phase phase;
	pid_t killed[KILLED_MAX]; /* already reported as "kill" */
	unsigned nkilled;
};

/* Synchronous fault signals stay unblocked: blocking them would not stop the
 * kernel from killing us on a real fault (force_sig_fault), it would only
 * hide the reason; a crashing init should crash loudly. */
static const int fault_signals[] = {SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGABRT, SIGTRAP, SIGSYS};

#define BIT(s) (1UL << (s))
#define FORWARDED                                                                                \
	(BIT(SIGINT) | BIT(SIGTERM) | BIT(SIGHUP) | BIT(SIGQUIT) | BIT(SIGUSR1) | BIT(SIGUSR2) | \
	 BIT(SIGWINCH) | BIT(SIGCONT) | BIT(SIGALRM))

__attribute__((format(printf, 1, 2))) static void complain(const char *fmt, ...)
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
__attribute__((format(printf, 2, 3))) static void say(struct init *in, const char *fmt, ...)
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
		complain("control socket: send \"%s\": %m", msg);
}

/* Makes s one printable protocol word: blanks and non-ASCII become '_'. */
static void printable(char *s)
{
	for (; *s; s++)
		if (*s <= ' ' || *s >= 0x7f)
			*s = '_';
}

/* Reads a small file (procfs) into buf, NUL-terminated. */
static int read_small(const char *path, char *buf, size_t size)
{
	cleanup_close int fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t n;

	if (fd < 0)
		return -errno;
	n = read(fd, buf, size - 1);
	if (n < 0)
		return -errno;
	buf[n] = '\0';
	return (int)n;
}

struct proc {
	char state;
	int ppid, pgrp;
	char comm[COMM_MAX + 1];
};

/* /proc/PID/stat fields 3-5 (state, ppid, pgrp) and a printable comm, from
 * one read: field 2 is the same task name /proc/PID/comm shows (both come
 * from proc_task_name()), so a second open per process is not needed. The
 * expiry path scans every process before it signals them, and with 1,000
 * processes that scan is most of the time from the deadline to the kill. */
static int read_proc(pid_t pid, struct proc *p)
{
	char path[64], buf[1024];
	const char *open_paren, *s;
	size_t len;
	int r;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	r = read_small(path, buf, sizeof(buf));
	if (r < 0)
		return r;
	/* comm may hold ')' and blanks; the fields after the last ')' do not. */
	open_paren = strchr(buf, '(');
	s = strrchr(buf, ')');
	if (!open_paren || !s || s < open_paren ||
	    sscanf(s + 1, " %c %d %d", &p->state, &p->ppid, &p->pgrp) != 3)
		return -EINVAL;
	len = (size_t)(s - open_paren - 1);
	if (len > COMM_MAX)
		len = COMM_MAX;
	memcpy(p->comm, open_paren + 1, len);
	p->comm[len] = '\0';
	printable(p->comm);
	if (!p->comm[0])
		strcpy(p->comm, "?");
	return 0;
}

/* /proc must be the procfs of our own pid namespace, or its pids are not ours
 * to report (a host /proc seen from PID 1 would list host processes). */
static bool proc_is_ours(pid_t self)
{
	char buf[32];
	ssize_t n = readlink("/proc/self", buf, sizeof(buf) - 1);

	if (n <= 0)
		return false;
	buf[n] = '\0';
	return atoi(buf) == self;
}

/* Says "kill" once per pid: in the no-pidns mode sweep() repeats. */
static bool first_kill(struct init *in, pid_t pid)
{
	for (unsigned i = 0; i < in->nkilled; i++)
		if (in->killed[i] == pid)
			return false;
	if (in->nkilled < KILLED_MAX)
		in->killed[in->nkilled++] = pid;
	return true;
}

/* Reports every process left (skipping init and zombies, which only wait to
 * be reaped): all of the namespace as PID 1; otherwise the workload's process
 * group and init's own children, and signals those children that are outside
 * the group. Returns the number of live members of the workload's group. */
static int scan(struct init *in, int sig)
{
	const char *verb = sig == SIGKILL ? "kill" : "term";
	DIR *d;
	struct dirent *de;
	int members = 0;

	if (!proc_is_ours(in->self)) {
		complain("/proc is missing or not of our pid namespace: no term/kill reports");
		return 0;
	}
	d = opendir("/proc");
	if (!d) {
		complain("opendir /proc: %m");
		return 0;
	}
	while ((de = readdir(d))) {
		struct proc p;
		char *end;
		long pid = strtol(de->d_name, &end, 10);
		bool mine, group;

		if (*end || pid <= 0 || pid == in->self || read_proc((pid_t)pid, &p) < 0)
			continue;
		if (p.state == 'Z' || p.state == 'X')
			continue;
		mine = p.ppid == in->self;
		group = p.pgrp == in->wpid;
		if (!in->pid1 && !mine && !group)
			continue;
		members += group;
		if (sig != SIGKILL || first_kill(in, (pid_t)pid))
			say(in, "%s %ld %s", verb, pid, p.comm);
		/* Our own child's pid cannot be reused before we reap it, so it
		 * is safe to signal by pid; the group is signalled by sweep(). */
		if (!in->pid1 && mine && !group && pid != in->wpid && kill((pid_t)pid, sig) < 0 &&
		    errno != ESRCH)
			complain("kill %ld: %m", pid);
	}
	closedir(d);
	return members;
}

/* Reports and signals what is left of the sandbox. */
static void sweep(struct init *in, int sig)
{
	int members = scan(in, sig);

	if (in->pid1) {
		/* kill(2): kill(-1) from the namespace's PID 1 reaches every process
		 * in it but the caller. ESRCH: nobody else is left. */
		if (kill(-1, sig) < 0 && errno != ESRCH)
			complain("kill -1: %m");
		return;
	}
	/* No pid namespace: kill(-1) would signal every process of our user on
	 * the host, so only what is provably the sandbox's is signalled: the
	 * workload's group, the workload and (scan()) init's own children, which
	 * orphans of the sandbox become since we are their subreaper. The group
	 * id is the workload's pid; once that is reaped and the group empty the
	 * kernel may hand the number to an unrelated host process group, so the
	 * group is signalled only while the workload is unreaped or scan() saw a
	 * live member. ESRCH: the group just emptied. */
	if ((!in->reaped || members > 0) && kill(-in->wpid, sig) < 0 && errno != ESRCH)
		complain("kill -%d: %m", (int)in->wpid);
	if (!in->reaped && getpgid(in->wpid) != in->wpid && kill(in->wpid, sig) < 0)
		complain("kill %d: %m", (int)in->wpid);
}

static void shutdown_begin(struct init *in)
{
	struct itimerspec t = {
	    .it_value = {.tv_sec = in->grace_ms / 1000, .tv_nsec = in->grace_ms % 1000 * 1000000}};

	if (in->phase != RUNNING)
		return;
	in->phase = TERMINATING;
	if (in->no_children)
		return;
	sweep(in, SIGTERM);
	/* An all-zero it_value would disarm the timer: --grace 0 means "now". */
	if (in->grace_ms == 0)
		t.it_value.tv_nsec = 1;
	if (timerfd_settime(in->tfd, 0, &t, NULL) < 0) {
		complain("timerfd_settime: %m; sending SIGKILL now");
		in->phase = KILLING;
		sweep(in, SIGKILL);
	}
}

/* Reaps every child: the workload, and orphans the kernel reparented to us. */
static void reap(struct init *in)
{
	pid_t p;
	int st;

	while ((p = waitpid(-1, &st, WNOHANG)) > 0 || (p < 0 && errno == EINTR)) {
		if (p != in->wpid || in->reaped)
			continue;
		in->reaped = true;
		in->wstatus = st;
		if (WIFSIGNALED(st))
			say(in, "signal %d", WTERMSIG(st));
		else
			say(in, "exit %d", WEXITSTATUS(st));
	}
	if (p < 0 && errno == ECHILD)
		in->no_children = true;
	else if (p < 0)
		complain("waitpid: %m");
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
				 kill(in->wpid, sig) < 0 && errno != ESRCH)
				complain("forward signal %d: %m", sig);
		}
	}
	if (n < 0 && errno != EAGAIN && errno != EINTR)
		complain("read signalfd: %m");
	if (!child)
		return;
	reap(in);
	/* No-pidns mode: killing a child that left the group hands its own
	 * children to us (subreaper), so those are found and killed here. */
	if (in->phase == KILLING && !in->pid1 && !in->no_children)
		sweep(in, SIGKILL);
}

static int parse_num(const char *s, long max, long *out)
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
		shutdown_begin(in);
		return;
	}
	if (n < 0) {
		complain("control socket: read: %m; no longer listening");
		in->ctl_closed = true;
		return;
	}
	buf[n > INITPROTO_MAX ? INITPROTO_MAX : n] = '\0';
	if (strcmp(buf, "stop") == 0) {
		shutdown_begin(in);
		return;
	}
	/* "stop MS": this shutdown's grace period (paddock stop --grace);
	 * one already under way keeps its own. */
	if (strncmp(buf, "stop ", 5) == 0 && parse_num(buf + 5, GRACE_MS_MAX, &grace) == 0) {
		if (in->phase == RUNNING)
			in->grace_ms = grace;
		shutdown_begin(in);
		return;
	}
	printable(buf);
	complain("ignoring unknown control message \"%s\"", buf);
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
	say(in, "done");
	exit(code);
}

static __attribute__((noreturn)) void loop(struct init *in)
{
	for (;;) {
		struct pollfd p[3] = {
		    {.fd = in->sfd, .events = POLLIN},
		    {.fd = in->ctl >= 0 && !in->ctl_closed ? in->ctl : -1, .events = POLLIN},
		    {.fd = in->phase == TERMINATING ? in->tfd : -1, .events = POLLIN},
		};

		if (in->phase != RUNNING && in->no_children)
			finish(in);
		if (poll(p, 3, -1) < 0) {
			if (errno != EINTR)
				complain("poll: %m");
			continue;
		}
		if (p[0].revents)
			on_signals(in);
		if (p[1].revents)
			on_control(in, p[1].revents);
		if (p[2].revents) { /* grace expired; tfd is not polled again */
			in->phase = KILLING;
			sweep(in, SIGKILL);
		}
		if (in->reaped)
			shutdown_begin(in);
	}
}

/* The child's side of the fork: never returns into init's code. */
static __attribute__((noreturn)) void child(struct init *in, char **cmd, int errfd)
{
	pid_t fg = tcgetpgrp(STDIN_FILENO); /* -1 (ENOTTY) without a tty */
	int e;

	/* Own process group so that a "term"/"kill" of the group (no-pidns
	 * mode) and job control address the workload and not init. */
	setpgid(0, 0);
	/* Hand the workload the terminal only if init's group holds it (never
	 * steal it from the shell of a background job). Signals are still
	 * blocked, so SIGTTOU does not stop this background group (tcsetpgrp(3));
	 * a failure just leaves the terminal where it was. */
	if (fg > 0 && fg == getpgid(getppid()))
		(void)tcsetpgrp(STDIN_FILENO, getpid());
	sigprocmask(SIG_SETMASK, &in->orig_mask, NULL);
	execvp(cmd[0], cmd);
	e = errno;
	(void)!write(errfd, &e, sizeof(e));
	_exit(e == ENOENT || e == ENOTDIR ? EXIT_NOTFOUND : EXIT_NOEXEC);
}

/* Everything that may fail before the workload exists; failing here is an
 * exit 125, with nothing started. */
static int setup(struct init *in, int pipefd[2], struct err *err)
{
	struct sigaction sa;
	sigset_t block;
	int fl;

	/* The control socket is init's alone: the workload must never inherit
	 * it and speak to the supervisor in init's name. */
	if (in->ctl >= 0) {
		fl = fcntl(in->ctl, F_GETFD);
		if (fl < 0 || fcntl(in->ctl, F_SETFD, fl | FD_CLOEXEC) < 0)
			return err_sys(err, errno, "control fd %d", in->ctl);
	}
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
	if (in->tfd < 0)
		return err_sys(err, errno, "timerfd_create");
	if (pipe2(pipefd, O_CLOEXEC) < 0)
		return err_sys(err, errno, "pipe2");
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
		complain("setpgid %d: %m", (int)pid);
	/* The pipe is close-on-exec: EOF means the exec succeeded. */
	do
		n = read(pipefd[0], &e, sizeof(e));
	while (n < 0 && errno == EINTR);
	close(pipefd[0]);
	if (n == sizeof(e))
		say(in, "exec-error %d", e);
	else
		say(in, "started %d", (int)pid);
	/* After the fork: the workload keeps the cwd the launcher set; init
	 * holds no directory busy. */
	if (chdir("/") < 0)
		complain("chdir /: %m");
	return 0;
}

static void usage(void)
{
	fputs("Usage: paddock-init [--control-fd N] [--grace MS] [--] CMD [ARG]...\n"
	      "Run CMD as the init of a paddock sandbox; see paddock-init(8).\n"
	      "  --control-fd N  report to, and obey, the SOCK_SEQPACKET socket N (N >= 3)\n"
	      "  --grace MS      SIGTERM-to-SIGKILL delay in milliseconds (default 2000)\n"
	      "  --help, --version\n",
	      stdout);
}

/* Returns the index of CMD in argv, 0 after --help/--version, or -EINVAL. */
static int parse_args(int argc, char **argv, struct init *in, struct err *err)
{
	static const struct option opts[] = {
	    {"control-fd", required_argument, NULL, 'c'},
	    {"grace", required_argument, NULL, 'g'},
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
			if (parse_num(optarg, INT32_MAX, &v) < 0 || v < 3)
				return err_set(err, EINVAL, "bad --control-fd '%s'", optarg);
			in->ctl = (int)v;
			break;
		case 'g':
			if (parse_num(optarg, GRACE_MS_MAX, &v) < 0)
				return err_set(err, EINVAL, "bad --grace '%s'", optarg);
			in->grace_ms = v;
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
	struct init in = {.ctl = -1, .grace_ms = GRACE_MS_DEFAULT, .sfd = -1, .tfd = -1};
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
	if (r >= 0)
		r = spawn(&in, argv + cmd, pipefd, &err);
	if (r < 0) {
		fprintf(stderr, "paddock-init: %s\n", err.msg);
		return EXIT_LAUNCHER;
	}
	/* From here on the workload exists: init only warns, never exits on
	 * an error (catatonit's rule); finish() is the only way out. */
	loop(&in);
}
