/* paddock exec, the helpers' side (exec.c is the supervisor's).
 *
 * Three kinds of helper:
 *
 * - The zygote (zygote(), visible in the session as "paddock-exec"), one
 *   per session: a process of the sandbox, inside its pid namespace,
 *   hardened once as the workload is hardened (sandbox_harden(): rlimits,
 *   a session of its own, only its channels kept, no capabilities,
 *   no_new_privs, Landlock, seccomp), which then only forks. Each
 *   request's command is a fork of it, so it starts hardened: no join, no
 *   rule set and no seccomp program per request, only a fork of a small
 *   process. The command moves the relay's ends onto 0-2, changes to the
 *   cwd and execs (command()). The zygote waits for each (SIGCHLD by
 *   signalfd), ends what it left in its process group before reaping it,
 *   and reports its status on the command's status channel. It holds its
 *   request channel, the status channels and nothing of the host's; it is
 *   not dumpable, and its Landlock domain is its own, so the workload can
 *   neither signal nor trace it or its commands. With the protected-path
 *   notice or --trace-denials its program is the workload's whole one with
 *   a seccomp listener of its own (the listener is one per filter chain),
 *   which goes up to the supervisor at once and serves every command.
 * - Its keeper (keeper()), the zygote's parent outside the sandbox's pid
 *   namespace (joined to it, so the zygote is inside): it passes the
 *   listener and the zygote's "ready" up, and kills the zygote when the
 *   supervisor is gone (EOF on its channel).
 *   The zygote goes with its keeper (PR_SET_PDEATHSIG), each command with
 *   the zygote.
 * - A relay per request (exec_helper(), forked twice by the supervisor
 *   and joined to the sandbox's namespaces, outside its pid namespace),
 *   made while no client waits: the spare. A request gives it the client's
 *   socket and stdio and the zygote's request channel; it makes the relay
 *   (pipes, or a pty of the sandbox's devpts), sends the zygote the
 *   request with the command's ends and one end of a status channel,
 *   relays the stdio, passes the client's "signal N" on, makes "winch"
 *   the pty's size, and answers the client with the status the zygote
 *   reports. The supervisor's lines for the client (the notice, denials)
 *   come on its channel while the command runs and go to the client's
 *   stderr. Each relay serves one request.
 *
 * Lifetime of a running command, stdio and signals: see exec.c. */
#include "run.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/capability.h>
#include <sys/pidfd.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "../../include/exitcodes.h"
#include "../../include/log.h"
#include "../../include/sys.h"

extern char **environ;

/* EXEC_FDS (run.h): what a request hands on, the client's socket and
 * stdio and the zygote's request channel (supervisor to relay), or the
 * status channel and the command's stdio (relay to zygote). */

void exec_reply(int fd, const char *fmt, ...)
{
	char msg[sizeof(((struct err *)0)->msg) + 16];
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (n < 0)
		return;
	/* MSG_NOSIGNAL: a client that left must not kill us. */
	if (send(fd, msg, strlen(msg), MSG_NOSIGNAL) < 0 && errno == ENOTSOCK)
		(void)!write(fd, msg, strlen(msg));
}

/* The policy's environment with the request's additions, replacing the
 * same names. Only in the command's process, which execs or exits. */
static char **merged_env(char *const *base, const char *const *add, size_t n_add)
{
	size_t n = 0, k;
	char **env;

	while (base && base[n])
		n++;
	env = calloc(n + n_add + 1, sizeof(*env));
	if (!env)
		return NULL;
	memcpy(env, base, n * sizeof(*env));
	for (size_t i = 0; i < n_add; i++) {
		size_t len = strcspn(add[i], "=") + 1; /* the name and its '=' */

		for (k = 0; k < n && strncmp(env[k], add[i], len) != 0; k++)
			;
		env[k] = (char *)add[i];
		if (k == n)
			n++;
	}
	return env;
}

/* --weaken exec-unhardened (evaluation only): instead of
 * sandbox_harden(), only what keeps the command a process of the session
 * (a session of its own, only its channel) and the spare's capabilities
 * carried across execve(2): every capability of its permitted set (all of
 * them in the sandbox's user namespace after the join) made inheritable and
 * ambient, since an exec by a non-zero uid otherwise clears them
 * (capabilities(7), "Transformation of capabilities during execve()"). No
 * bounding set drop, no no_new_privs, no Landlock, no seccomp: the twin of
 * test_exec.c's `exec_has_the_workloads_*` tests, which must see each of
 * these. */
static int unhardened(int *keep, size_t n_keep, struct err *err)
{
	cap_t caps = cap_get_proc();
	cap_value_t last = (cap_value_t)cap_max_bits() - 1;
	sigset_t mask;
	int rc = 0;

	if (setsid() < 0)
		return err_sys(err, errno, "exec-unhardened: setsid");
	/* Only the channels, at 3 and on, close-on-exec. */
	rc = fds_keep_only(keep, n_keep, err);
	if (rc < 0)
		return rc;
	for (size_t i = 0; i < n_keep; i++) {
		keep[i] = 3 + (int)i;
		if (fcntl(keep[i], F_SETFD, FD_CLOEXEC) < 0)
			return err_sys(err, errno, "cloexec");
	}
	if (!caps)
		return err_sys(err, errno, "exec-unhardened: cap_get_proc");
	for (cap_value_t c = 0; c <= last && rc == 0; c++) {
		cap_flag_value_t v = CAP_CLEAR;

		if (cap_get_flag(caps, c, CAP_PERMITTED, &v) == 0 && v == CAP_SET)
			rc = cap_set_flag(caps, CAP_INHERITABLE, 1, &c, CAP_SET);
	}
	if (rc == 0)
		rc = cap_set_proc(caps);
	cap_free(caps);
	if (rc < 0)
		return err_sys(err, errno, "exec-unhardened: inheritable capabilities");
	/* EPERM for a capability not in the permitted and inheritable sets:
	 * not ours to carry. */
	for (cap_value_t c = 0; c <= last; c++)
		(void)prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_RAISE, (unsigned long)c, 0UL, 0UL);
	sigemptyset(&mask);
	if (sigprocmask(SIG_SETMASK, &mask, NULL) < 0)
		return err_sys(err, errno, "sigprocmask");
	return 0;
}

/* One packet and up to EXEC_FDS fds (all close-on-exec), on a
 * SOCK_SEQPACKET channel: the packet's length, 0 at EOF, or -errno. fds[]
 * not received are -1. */
static ssize_t recv_fds(int ch, char *buf, size_t size, int fds[EXEC_FDS])
{
	union {
		char b[CMSG_SPACE(EXEC_FDS * sizeof(int))];
		struct cmsghdr align;
	} u;
	struct iovec iov = {.iov_base = buf, .iov_len = size};
	struct msghdr mh = {
	    .msg_iov = &iov, .msg_iovlen = 1, .msg_control = u.b, .msg_controllen = sizeof(u.b)};
	struct cmsghdr *c;
	ssize_t n;

	for (int i = 0; i < EXEC_FDS; i++)
		fds[i] = -1;
	do
		n = recvmsg(ch, &mh, MSG_CMSG_CLOEXEC);
	while (n < 0 && errno == EINTR);
	if (n < 0)
		return -errno;
	for (c = CMSG_FIRSTHDR(&mh); c; c = CMSG_NXTHDR(&mh, c))
		if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_RIGHTS) {
			size_t k = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);

			memcpy(fds, CMSG_DATA(c), (k < EXEC_FDS ? k : EXEC_FDS) * sizeof(int));
		}
	/* A cut packet or a lost fd is no request (only the supervisor and
	 * the spare write here). */
	if (mh.msg_flags & (MSG_TRUNC | MSG_CTRUNC))
		return -EMSGSIZE;
	return n;
}

int exec_send_fds(int ch, const char *pkt, size_t len, const int *fds, size_t n)
{
	union {
		char b[CMSG_SPACE(EXEC_FDS * sizeof(int))];
		struct cmsghdr align;
	} u;
	struct iovec iov = {.iov_base = (void *)pkt, .iov_len = len};
	struct msghdr mh = {
	    .msg_iov = &iov, .msg_iovlen = 1, .msg_control = u.b, .msg_controllen = sizeof(u.b)};
	struct cmsghdr *c = CMSG_FIRSTHDR(&mh);

	memset(u.b, 0, sizeof(u.b));
	c->cmsg_level = SOL_SOCKET;
	c->cmsg_type = SCM_RIGHTS;
	if (n > EXEC_FDS)
		return -EINVAL;
	c->cmsg_len = CMSG_LEN(n * sizeof(int));
	mh.msg_controllen = CMSG_SPACE(n * sizeof(int));
	memcpy(CMSG_DATA(c), fds, n * sizeof(int));
	return sendmsg(ch, &mh, MSG_NOSIGNAL) < 0 ? -errno : 0;
}

/* ------------------------------------------------------------ the zygote */

/* Commands the zygote waits for at once: the supervisor allows
 * EXEC_RELAYS_MAX relays, and a command whose relay is gone (its client
 * hung up) is only being killed. */
#define ZYGOTE_CMDS (2 * EXEC_RELAYS_MAX)

struct zcmd {
	pid_t pid;
	int st; /* its status channel, -1 once the relay is gone */
};

/* The command's process: a vfork(2) of the zygote, hardened as it is (no
 * copy of the zygote's memory to make: the zygote waits until the exec).
 * So it allocates nothing and writes nothing of the zygote's but environ,
 * which the zygote puts back (env is the command's environment, made by
 * the zygote before). Never returns; a failure before the exec is one
 * message on its status channel (fds[0], close-on-exec like every fd the
 * zygote holds). */
static __attribute__((noreturn)) void command(const struct run *r, const struct session_exec *x,
					      const int fds[EXEC_FDS], pid_t zygote_pid, char **env)
{
	const char *cwd = x->cwd ? x->cwd : r->spec->policy->cwd;
	struct err err = {0};
	sigset_t none;
	int e;

	sigemptyset(&none);
	/* The zygote's signal mask (SIGCHLD blocked for its signalfd) is not
	 * the command's, nor its session: a new one, whose process group the
	 * command's end takes with it and which -t gives the pty. Killed with
	 * the zygote, which alone reports its status. */
	if (sigprocmask(SIG_SETMASK, &none, NULL) < 0 || setsid() < 0) {
		err_sys(&err, errno, "the command's session");
		exec_reply(fds[0], "error %s", err.msg);
		_exit(EXIT_LAUNCHER);
	}
	if (prctl(PR_SET_PDEATHSIG, SIGKILL) < 0 || getppid() != zygote_pid)
		_exit(EXIT_LAUNCHER);
	/* The relay's pipes or pty slave, never the client's own fds: the
	 * client's terminal or files are host inodes (chmod /dev/stdin), and
	 * a leftover of the command would keep reading the client's terminal
	 * after paddock exec returned. */
	for (int i = 0; i < 3; i++)
		if (dup2(fds[1 + i], i) < 0)
			_exit(EXIT_LAUNCHER);
	for (int i = 1; i < EXEC_FDS; i++)
		if (fds[i] > 2)
			close(fds[i]);
	/* In the sandbox's root: the zygote's, as the workload's cwd is
	 * resolved (sandbox_harden()), with the same words on failure. */
	if (chdir(cwd) < 0) {
		err_sys(&err, errno, "cwd %s", cwd);
		exec_reply(fds[0], "error %s", err.msg);
		_exit(EXIT_LAUNCHER);
	}
	/* execvp(3) searches the PATH of the environment it runs in: the
	 * command's, as paddock-init's execvp does for the workload. */
	environ = env;
	/* -t: the pty slave becomes the controlling terminal of the session
	 * made above, so job control works. A policy's seccomp filter may
	 * refuse the ioctl: then the command runs without one. */
	if (x->tty)
		(void)ioctl(0, TIOCSCTTY, 0);
	execvp(x->argv[0], x->argv);
	e = errno;
	exec_reply(fds[0], "exec-error %d", e);
	_exit(e == ENOENT || e == ENOTDIR ? EXIT_NOTFOUND : EXIT_NOEXEC);
}

/* vfork(2) and the command: its pid, or -1 with errno. Its own function,
 * so that nothing of the caller's frame lives across the vfork. A policy's
 * seccomp profile that refuses vfork but allows fork gets a fork. */
static pid_t spawn(const struct run *r, const struct session_exec *x, const int fds[EXEC_FDS],
		   pid_t self, char **env)
{
	pid_t pid = vfork();

	if (pid < 0 && (errno == ENOSYS || errno == EPERM || errno == EACCES))
		pid = fork();
	if (pid == 0)
		command(r, x, fds, self, env);
	return pid;
}

/* One request from a relay: the packet, its status channel and the
 * command's stdio. The command is forked, its pid said on the status
 * channel (for the supervisor's lines, exec.c exec_sink()). The command
 * may have written environ (command()). */
static void zygote_request(const struct run *r, int zreq, struct zcmd *c, size_t *n, pid_t self)
{
	static char pkt[SESSION_EXEC_MAX];
	struct session_exec x = {.stdio = {-1, -1, -1}};
	struct err err = {0};
	int fds[EXEC_FDS];
	ssize_t len = recv_fds(zreq, pkt, sizeof(pkt), fds);
	char **env = NULL, **saved = environ;
	pid_t pid = -1;

	if (len <= 0)
		return;
	/* Only relays write here, each with all four. */
	if (fds[0] < 0 || fds[1] < 0 || fds[2] < 0 || fds[3] < 0)
		goto out;
	if (*n == ZYGOTE_CMDS)
		err_set(&err, EMFILE, "%d exec'd commands run in this session", ZYGOTE_CMDS);
	else if (session_exec_decode(pkt, (size_t)len, &x, &err) == 0 &&
		 !(env = merged_env(r->spec->sb.env, x.env, x.n_env)))
		err_set(&err, ENOMEM, "out of memory");
	else if (env && (pid = spawn(r, &x, fds, self, env)) < 0)
		err_sys(&err, errno, "fork in the sandbox");
	environ = saved;
	free(env);
	session_exec_free(&x);
	if (pid < 0) {
		exec_reply(fds[0], "error %s", err.msg);
		goto out;
	}
	exec_reply(fds[0], "pid %ld", (long)pid);
	c[(*n)++] = (struct zcmd){.pid = pid, .st = fds[0]};
	fds[0] = -1;
out:
	for (int i = 0; i < EXEC_FDS; i++)
		if (fds[i] >= 0)
			close(fds[i]);
}

/* The commands that ended: what each left in its process group is killed
 * before it is reaped (until then its pid is the group's id; docker exec
 * leaves such leftovers running, here nothing outlives its command), then
 * its status goes to its relay. */
static void zygote_reap(struct zcmd *c, size_t *n)
{
	for (;;) {
		siginfo_t si = {0};
		size_t k;

		if (waitid(P_ALL, 0, &si, WEXITED | WNOHANG | WNOWAIT) < 0 || si.si_pid == 0)
			return;
		(void)kill(-si.si_pid, SIGKILL); /* ESRCH: nothing is left in it */
		if (waitid(P_PID, (id_t)si.si_pid, &si, WEXITED) < 0)
			return;
		for (k = 0; k < *n && c[k].pid != si.si_pid; k++)
			;
		if (k == *n)
			continue;
		if (c[k].st >= 0) {
			exec_reply(c[k].st, si.si_code == CLD_EXITED ? "exit %d" : "signal %d",
				   si.si_status);
			close(c[k].st);
		}
		c[k] = c[--*n];
	}
}

/* A relay's word on a command's status channel: "signal N" passed on, or
 * its hang-up (the client is gone): the command is killed, with nobody
 * left to tell. */
static void zygote_relay(struct zcmd *z)
{
	char buf[32];
	ssize_t n = recv(z->st, buf, sizeof(buf) - 1, MSG_DONTWAIT);
	int sig;

	if (n < 0 && (errno == EAGAIN || errno == EINTR))
		return;
	if (n <= 0) {
		(void)kill(z->pid, SIGKILL);
		close(z->st);
		z->st = -1;
		return;
	}
	buf[n] = '\0';
	/* ESRCH: it just ended; SIGCHLD tells us next. */
	if (sscanf(buf, "signal %d", &sig) == 1 && sig > 0 && sig < NSIG)
		(void)kill(z->pid, sig);
}

/* The zygote: a child of its keeper, in the sandbox's namespaces (pid
 * included), hardened once, then forking a command per request. ch: to
 * the keeper (the listener, "ready" or "error MSG"), zreq: the requests.
 * Never returns. */
static __attribute__((noreturn)) void zygote(const struct run *r, int ch, int zreq)
{
	static struct zcmd c[ZYGOTE_CMDS];
	struct err err = {0};
	int keep[2] = {ch, zreq}, rc, sfd;
	size_t n = 0;
	sigset_t chld, all;
	pid_t self;

	/* Killed with the keeper. Our parent is outside our pid namespace,
	 * so getppid() is 0 while it lives; a reparented process sees PID 1. */
	if (prctl(PR_SET_PDEATHSIG, SIGKILL) < 0 || getppid() != 0)
		_exit(EXIT_LAUNCHER);
	(void)prctl(PR_SET_NAME, "paddock-exec");
	/* Its cwd is "/" (sandbox_harden() resolves it in the root); each
	 * command goes to its own. */
	if (r->spec->opt->weaken & WEAKEN_EXEC_UNHARDENED)
		rc = unhardened(keep, 2, &err);
	else
		/* With the notice or --trace-denials, the workload's own
		 * program with a listener of ours, which goes to the keeper
		 * at once ("seccomp-notify") and never stays with us. */
		rc = sandbox_harden(&r->spec->sb, "/", keep, 2, 0, true, exec_listener_expected(r),
				    &err);
	/* Every signal blocked (each command unblocks them): paddock-init's
	 * SIGTERM at the session's end reaches us too, and we must live to
	 * report our commands' ends until the pid namespace's end kills us.
	 * SIGCHLD by signalfd. */
	sigfillset(&all);
	sigemptyset(&chld);
	sigaddset(&chld, SIGCHLD);
	if (rc == 0 && (sigprocmask(SIG_BLOCK, &all, NULL) < 0 ||
			(sfd = signalfd(-1, &chld, SFD_CLOEXEC | SFD_NONBLOCK)) < 0))
		rc = err_sys(&err, errno, "the zygote's signalfd");
	if (rc < 0) {
		exec_reply(keep[0], "error %s", err.msg);
		_exit(EXIT_LAUNCHER);
	}
	self = getpid();
	exec_reply(keep[0], "ready");
	close(keep[0]);
	log_debug("exec: zygote hardened");
	for (;;) {
		struct pollfd p[2 + ZYGOTE_CMDS];
		struct zcmd seen[ZYGOTE_CMDS];
		size_t ns = n;
		struct signalfd_siginfo ssi;

		p[0] = (struct pollfd){.fd = keep[1], .events = POLLIN};
		p[1] = (struct pollfd){.fd = sfd, .events = POLLIN};
		for (size_t k = 0; k < ns; k++) {
			seen[k] = c[k];
			p[2 + k] = (struct pollfd){.fd = c[k].st, .events = POLLIN};
		}
		if (poll(p, 2 + ns, -1) < 0) {
			if (errno == EINTR)
				continue;
			break;
		}
		/* The relays' words first, by pid: reaping reorders c[]. */
		for (size_t k = 0; k < ns; k++)
			for (size_t j = 0; p[2 + k].revents && j < n; j++)
				if (c[j].pid == seen[k].pid && c[j].st == seen[k].st)
					zygote_relay(&c[j]);
		if (p[1].revents) {
			while (read(sfd, &ssi, sizeof(ssi)) == sizeof(ssi))
				;
			zygote_reap(c, &n);
		}
		if (p[0].revents & POLLIN)
			zygote_request(r, keep[1], c, &n, self);
		else if (p[0].revents)
			break; /* no sender left: the supervisor is gone */
	}
	for (size_t k = 0; k < n; k++)
		(void)kill(c[k].pid, SIGKILL);
	_exit(0);
}

/* ------------------------------------------------------------ the keeper */

/* The zygote's listener, which it sends as soon as its filter is loaded
 * (seccomp_apply_notify()), on to the supervisor, then its "ready" or its
 * hardening's "error MSG": the supervisor waits for one of these before
 * it sends the zygote a request (exec.c zygote_start()), so it serves the
 * commands' calls from their first. */
static int pass_up(int z, int chan, bool listener)
{
	char buf[sizeof(((struct err *)0)->msg) + 16];
	int fds[EXEC_FDS], rc;
	ssize_t n = recv_fds(z, buf, sizeof(buf) - 1, fds);

	buf[n > 0 ? n : 0] = '\0';
	if (listener && n > 0 && fds[0] >= 0 && strcmp(buf, "seccomp-notify") == 0) {
		rc = exec_send_fds(chan, buf, (size_t)n, fds, 1);
		close(fds[0]);
		return rc < 0 ? rc : pass_up(z, chan, false);
	}
	for (int i = 0; i < EXEC_FDS; i++)
		if (fds[i] >= 0)
			close(fds[i]);
	if (n > 0 && (strcmp(buf, "ready") == 0 || strncmp(buf, "error ", 6) == 0))
		exec_reply(chan, "%s", buf);
	else
		exec_reply(chan, "error the zygote ended during its hardening");
	return n > 0 && strcmp(buf, "ready") == 0 ? 0 : -1;
}

/* The zygote, cloned into the sandbox's pid namespace by a child of ours
 * that joins it first (we stay out of it, so that our other children, the
 * relays, are outside), with CLONE_PARENT, so that it is our child: its
 * pidfd comes back on a socketpair. -errno with err set. */
static int clone_zygote(struct run *r, int pidns, int zch, int zreq, int *zpidfd, struct err *err)
{
	int sv[2], fds[EXEC_FDS], ws;
	char buf[32];
	pid_t pid;

	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) < 0)
		return err_sys(err, errno, "socketpair");
	pid = fork();
	if (pid < 0) {
		close(sv[0]);
		close(sv[1]);
		return err_sys(err, errno, "fork");
	}
	if (pid == 0) {
		struct sys_clone_args args = {0};
		int fd = -1;
		long z;

		close(sv[0]);
		if (setns(pidns, CLONE_NEWPID) < 0) {
			exec_reply(sv[1], "setns %d", errno);
			_exit(1);
		}
		/* The exit signal is ours (SIGCHLD, a fork's) with
		 * CLONE_PARENT: clone3(2) wants 0 here. */
		args.flags = CLONE_PARENT | CLONE_PIDFD;
		args.pidfd = (uintptr_t)&fd;
		z = sys_clone3(&args);
		if (z == 0) {
			close(sv[1]);
			zygote(r, zch, zreq);
		}
		if (z < 0) {
			exec_reply(sv[1], "clone3 %d", (int)-z);
			_exit(1);
		}
		(void)exec_send_fds(sv[1], "zygote", 6, &fd, 1);
		_exit(0);
	}
	close(sv[1]);
	while (waitpid(pid, &ws, 0) < 0 && errno == EINTR)
		;
	ws = (int)recv_fds(sv[0], buf, sizeof(buf) - 1, fds);
	close(sv[0]);
	for (int i = 1; i < EXEC_FDS; i++)
		if (fds[i] >= 0)
			close(fds[i]);
	if (ws > 0 && fds[0] >= 0) {
		*zpidfd = fds[0];
		return 0;
	}
	buf[ws > 0 ? ws : 0] = '\0';
	if (fds[0] >= 0)
		close(fds[0]);
	/* ENOMEM: the pid namespace has no init any more (fork(2)). */
	if (strcmp(buf, "clone3 12") == 0)
		return err_set(err, ESRCH, "session %s has ended", r->live.session->info.id);
	return err_set(err, EPROTO, "the zygote's clone: %s", buf[0] ? buf : "no answer");
}

/* A relay for the next request, on the supervisor's word "spare": our
 * fork (in the sandbox's namespaces but its pid namespace, not dumpable)
 * with only its channel and the session's end pipe, whose other end goes
 * up to the supervisor ("relay" + fd). */
static void make_relay(struct run *r, int chan, int end_fd)
{
	int rv[2];
	pid_t pid;

	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, rv) < 0)
		return; /* the supervisor asks again at its next request */
	pid = fork();
	if (pid == 0) {
		int keep[2] = {rv[1], end_fd};
		struct err err = {0};
		sigset_t chld;

		/* The supervisor's mask otherwise (SIGPIPE blocked: a reader
		 * that went away is an EPIPE for the relay, stdio.c). */
		sigemptyset(&chld);
		sigaddset(&chld, SIGCHLD);
		if (fds_keep_only(keep, 2, &err) < 0 || sigprocmask(SIG_UNBLOCK, &chld, NULL) < 0)
			_exit(EXIT_LAUNCHER);
		exec_helper(r, 3, 4);
	}
	close(rv[1]);
	if (pid > 0)
		(void)exec_send_fds(chan, "relay", 5, &rv[0], 1);
	close(rv[0]);
}

void exec_keeper(struct run *r, int chan, int zreq)
{
	int pidns = fcntl(r->live.box.pidfd, F_DUPFD_CLOEXEC, 3);
	int keep[4] = {chan, zreq, r->live.exec_end[0], pidns}, sv[2], zpidfd = -1, sfd;
	struct err err = {0};
	/* Every namespace but the pid namespace, whose join applies to our
	 * children (the zygote is cloned by one that joins it). --weaken
	 * exec-host-mounts (evaluation only): and but the mount namespace, so
	 * the commands see the host's files and only Landlock is left between
	 * them and those. */
	const struct sandbox_join j = {
	    .parent = 0, /* reparented at once (exec.c); our channel ends us */
	    .pidfd = r->live.box.pidfd,
	    .nstypes = (int)(sandbox_ns_flags(r->spec->sb.namespaces) & ~CLONE_NEWPID &
			     ~(r->spec->opt->weaken & WEAKEN_EXEC_HOST_MOUNTS ? CLONE_NEWNS : 0)),
	    .keep = keep,
	    .n_keep = 4,
	    .n_inherit = 0,
	    .flags = SANDBOX_JOIN_NOT_DUMPABLE | SANDBOX_JOIN_NULL_STDIO,
	};
	sigset_t chld;

	/* Our copy of the supervisor's memory has the evidence log's key;
	 * neither we, the relays nor the zygote need it (docs/security.md,
	 * "paddock exec"). */
	explicit_bzero(r->live.evidence.key, sizeof(r->live.evidence.key));
	if (pidns < 0 || sandbox_join(&j, &err) < 0) {
		if (pidns < 0)
			err_sys(&err, errno, "dup the sandbox's pidfd");
		exec_reply(keep[0], "error %s", err.msg);
		_exit(EXIT_LAUNCHER);
	}
	/* The commands' cwds are resolved from the zygote's root: without
	 * the mount namespace's join we still stand in the supervisor's cwd. */
	if ((r->spec->opt->weaken & WEAKEN_EXEC_HOST_MOUNTS) && chdir("/") < 0) {
		exec_reply(keep[0], "error chdir /: %s", strerror(errno));
		_exit(EXIT_LAUNCHER);
	}
	/* The relays' and the zygote's ends by signalfd; they unblock it. */
	sigemptyset(&chld);
	sigaddset(&chld, SIGCHLD);
	if (sigprocmask(SIG_BLOCK, &chld, NULL) < 0 ||
	    (sfd = signalfd(-1, &chld, SFD_CLOEXEC | SFD_NONBLOCK)) < 0) {
		exec_reply(keep[0], "error signalfd: %s", strerror(errno));
		_exit(EXIT_LAUNCHER);
	}
	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) < 0) {
		exec_reply(keep[0], "error socketpair: %s", strerror(errno));
		_exit(EXIT_LAUNCHER);
	}
	if (clone_zygote(r, keep[3], sv[1], keep[1], &zpidfd, &err) < 0) {
		exec_reply(keep[0], "error %s", err.msg);
		_exit(EXIT_LAUNCHER);
	}
	close(sv[1]);
	close(keep[1]);
	close(keep[3]);
	if (pass_up(sv[0], keep[0], exec_listener_expected(r)) < 0) {
		pidfd_send_signal(zpidfd, SIGKILL, NULL, 0);
		_exit(0);
	}
	close(sv[0]);
	/* Until the zygote ends (the sandbox ended, or something killed it:
	 * the supervisor makes another), or the supervisor does (EOF on our
	 * channel); the supervisor's "spare" meanwhile. Not at the session's
	 * end pipe: the zygote reports its commands' ends (SIGTERM from
	 * their relays) until the pid namespace's end kills it. */
	for (;;) {
		struct pollfd p[3] = {{.fd = zpidfd, .events = POLLIN},
				      {.fd = keep[0], .events = POLLIN},
				      {.fd = sfd, .events = POLLIN}};
		struct signalfd_siginfo ssi;
		char buf[16];
		ssize_t n;

		if (poll(p, 3, -1) < 0) {
			if (errno == EINTR)
				continue;
			break;
		}
		if (p[2].revents) {
			while (read(sfd, &ssi, sizeof(ssi)) == sizeof(ssi))
				;
			/* Relays; the zygote's own end is its pidfd's. */
			for (;;) {
				siginfo_t si = {0};

				if (waitid(P_ALL, 0, &si, WEXITED | WNOHANG) < 0 || si.si_pid == 0)
					break;
			}
		}
		if (p[0].revents)
			break;
		if (!p[1].revents)
			continue;
		n = recv(keep[0], buf, sizeof(buf) - 1, MSG_DONTWAIT);
		if (n < 0 && (errno == EAGAIN || errno == EINTR))
			continue;
		if (n <= 0) {
			pidfd_send_signal(zpidfd, SIGKILL, NULL, 0);
			break;
		}
		buf[n] = '\0';
		if (strcmp(buf, "spare") == 0)
			make_relay(r, keep[0], keep[2]);
	}
	_exit(0);
}

/* ------------------------------------------------------------ the relay */

/* A line the supervisor has for our client ("say LINE": the protected-path
 * notice or a denial of our command, denials.c), onto the client's stderr,
 * our fd 2. false: the channel is closed. */
static bool say(int chan)
{
	char buf[1024 + 1];
	ssize_t n = recv(chan, buf, sizeof(buf) - 1, MSG_DONTWAIT);

	if (n < 0)
		return errno == EAGAIN || errno == EINTR;
	if (n == 0)
		return false;
	if (n > 4 && memcmp(buf, "say ", 4) == 0)
		(void)!write(2, buf + 4, (size_t)n - 4);
	return true;
}

/* The zygote's word on the status channel: "pid N" (passed up, for the
 * supervisor's lines), or the end: "exit N", "signal N", "exec-error N",
 * "error MSG", into status. true: the end came. EOF without one: the
 * zygote is gone; when paddock-init ends too (init, its pidfd: within a
 * second, since its exit waits for the rest of its pid namespace) that was
 * the namespace's end, which kills every process in it with SIGKILL
 * (pid_namespaces(7)), the command too. */
static bool from_zygote(int st, int chan, int init, char *status, size_t size)
{
	char buf[sizeof(((struct err *)0)->msg) + 16];
	ssize_t n = recv(st, buf, sizeof(buf) - 1, MSG_DONTWAIT);

	if (n < 0 && (errno == EAGAIN || errno == EINTR))
		return false;
	if (n <= 0) {
		struct pollfd p = {.fd = init, .events = POLLIN};

		snprintf(status, size, "%s",
			 init >= 0 && poll(&p, 1, 1000) == 1
			     ? "signal 9"
			     : "error exec: the session's zygote ended; try again");
		return true;
	}
	buf[n] = '\0';
	if (strncmp(buf, "pid ", 4) == 0) {
		if (chan >= 0)
			(void)!send(chan, buf, (size_t)n, MSG_DONTWAIT | MSG_NOSIGNAL);
		return false;
	}
	snprintf(status, size, "%s", buf);
	return true;
}

/* The client's requests until the command ends: "signal N", "winch"; the
 * relay of its stdio, the supervisor's lines on chan, the zygote's words
 * on st. The session's end (EOF on end_fd) sends the command SIGTERM.
 * true: the end is in status; false: the client hung up (closing st then
 * makes the zygote kill the command). */
static bool forward_client(int sock, int st, int end_fd, int chan, int init,
			   struct stdio_relay *rel, char *status, size_t size)
{
	bool ending = false;

	for (;;) {
		struct pollfd p[4 + STDIO_PFDS] = {
		    {.fd = st, .events = POLLIN},
		    {.fd = sock, .events = POLLIN},
		    {.fd = ending ? -1 : end_fd, .events = POLLIN},
		    {.fd = chan, .events = POLLIN},
		};
		size_t nr = stdio_relay_pollfds(rel, p + 4, STDIO_PFDS);
		char buf[32];
		ssize_t n;

		if (poll(p, 4 + nr, -1) < 0) {
			if (errno == EINTR)
				continue;
			return false;
		}
		/* The line before the command's own words that follow it
		 * (git's "could not write config file"). */
		if (p[3].revents && !say(chan))
			chan = -1;
		stdio_relay_handle(rel, p + 4, nr);
		if (p[0].revents && from_zygote(st, chan, init, status, size))
			return true;
		if (p[2].revents) {
			/* Only the supervisor writes, and it never does: this
			 * is the hang-up of its close. */
			ending = true;
			(void)!send(st, "signal 15", 9, MSG_NOSIGNAL);
		}
		if (!p[1].revents)
			continue;
		n = recv(sock, buf, sizeof(buf) - 1, MSG_DONTWAIT);
		if (n < 0 && (errno == EAGAIN || errno == EINTR))
			continue;
		if (n <= 0)
			return false; /* the client is gone: so is its command */
		buf[n] = '\0';
		if (strcmp(buf, "winch") == 0)
			stdio_relay_winch(rel);
		else if (strncmp(buf, "signal ", 7) == 0)
			(void)!send(st, buf, (size_t)n, MSG_NOSIGNAL);
	}
}

/* -t: a pty pair of the sandbox's own devpts (the relay is in its mount
 * namespace), as the workload's (sandbox/enter.c): the master is relayed
 * to the client's fds, the slave is the command's 0-2. */
static int open_pty(int *master, int child[3], struct err *err)
{
	int m = open("/dev/ptmx", O_RDWR | O_NOCTTY | O_CLOEXEC), sl;

	if (m < 0)
		return err_sys(err, errno,
			       "terminal: open /dev/ptmx in the sandbox (use --no-tty)");
	if (unlockpt(m) < 0 || (sl = ioctl(m, TIOCGPTPEER, O_RDWR | O_NOCTTY | O_CLOEXEC)) < 0) {
		close(m);
		return err_sys(err, errno, "terminal: the pty's slave");
	}
	*master = m;
	child[0] = child[1] = child[2] = sl;
	return 0;
}

/* Until the request: nothing, or the end of the supervisor. The request's
 * packet into pkt (its length), its fds into fds[], or 0 when there will
 * be none. */
static ssize_t await_request(int chan, int end_fd, char *pkt, int fds[EXEC_FDS])
{
	for (;;) {
		struct pollfd p[2] = {{.fd = chan, .events = POLLIN},
				      {.fd = end_fd, .events = POLLIN}};

		if (poll(p, 2, -1) < 0) {
			if (errno == EINTR)
				continue;
			return 0;
		}
		if (p[0].revents & POLLIN)
			return recv_fds(chan, pkt, SESSION_EXEC_MAX, fds);
		/* A hang-up of the channel without a request, or the end
		 * pipe (only the supervisor holds its write end). */
		if (p[0].revents || p[1].revents)
			return 0;
	}
}

void exec_helper(struct run *r, int chan, int end_fd)
{
	struct session_exec x = {.stdio = {-1, -1, -1}};
	struct stdio_relay rel = {.master = -1, .tty_fd = -1};
	struct err err = {0}, setup = {0};
	char status[sizeof(err.msg) + 16], *pkt = malloc(SESSION_EXEC_MAX);
	struct timespec ready;
	int fds[EXEC_FDS], cstdio[3] = {-1, -1, -1}, st[2] = {-1, -1}, sock, zreq, master = -1;
	/* paddock-init, by its pid in ours (we are outside its pid
	 * namespace, the keeper's joined child): its end is the session's. */
	int init = (int)syscall(SYS_pidfd_open, r->live.box.pid, 0);
	/* The session's --weaken direct-stdio: the client's own fds. */
	bool direct = r->spec->opt->weaken & WEAKEN_DIRECT_STDIO;
	ssize_t n;
	int rc;

	if (!pkt)
		err_set(&setup, ENOMEM, "out of memory");
	clock_gettime(CLOCK_MONOTONIC, &ready);
	n = pkt ? await_request(chan, end_fd, pkt, fds) : 0;
	if (n <= 0)
		_exit(0);
	/* chan stays: the supervisor's lines for the client come on it. */
	sock = fds[0];
	zreq = fds[4];
	/* The client's stdio onto our 0-2, where the relay expects it. */
	for (int i = 0; i < 3; i++)
		if (fds[1 + i] < 0 || dup2(fds[1 + i], i) < 0 || close(fds[1 + i]) < 0)
			err_sys(&setup, EBADF, "the client's fd %d", i);
	if (zreq < 0 && !setup.msg[0])
		err_set(&setup, EBADF, "no zygote");
	if (setup.msg[0] || sock < 0) {
		exec_reply(sock, "error %s", setup.msg);
		_exit(EXIT_LAUNCHER);
	}
	if (direct)
		for (int i = 0; i < 3; i++)
			cstdio[i] = i;
	rc = session_exec_decode(pkt, (size_t)n, &x, &err);
	if (rc == 0)
		rc = direct  ? 0
		     : x.tty ? open_pty(&master, cstdio, &err)
			     : stdio_relay_pipes(&rel, cstdio, &err);
	if (rc == 0 && socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, st) < 0)
		rc = err_sys(&err, errno, "socketpair");
	if (rc < 0) {
		exec_reply(sock, "error %s", err.msg);
		_exit(EXIT_LAUNCHER);
	}
	/* Our 0-2 are the client's now: when we were ready, for a timeline
	 * with the client's lines (PADDOCK_DEBUG, bench/profile.md). */
	log_debug("exec: spare was ready at %ld.%06ld", (long)ready.tv_sec, ready.tv_nsec / 1000);
	log_debug("exec: spare has the request, relay ready");
	rc = exec_send_fds(zreq, pkt, (size_t)n,
			   (int[EXEC_FDS]){st[1], cstdio[0], cstdio[1], cstdio[2]}, 4);
	close(zreq);
	close(st[1]);
	/* The zygote has its copies. */
	for (int i = 0; i < 3 && !direct; i++)
		if (cstdio[i] >= 0 && (i == 0 || cstdio[i] != cstdio[i - 1]))
			close(cstdio[i]);
	if (rc < 0) {
		exec_reply(sock, "error exec: the session's zygote ended; try again");
		_exit(EXIT_LAUNCHER);
	}
	/* The client's terminal mode is the client's (cmd_exec.c). */
	if (master >= 0)
		stdio_relay_pty(&rel, master, false);
	if (!forward_client(sock, st[0], end_fd, chan, init, &rel, status, sizeof(status)))
		_exit(0);
	log_debug("exec: the command's end");
	/* The zygote ended what the command left in its process group
	 * before it reported: the relay closes, so a leftover that changed
	 * its group reads EOF and writes into nothing. */
	stdio_relay_finish(&rel);
	exec_reply(sock, "%s", status);
	_exit(0);
}
