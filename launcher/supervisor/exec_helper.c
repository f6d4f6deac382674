/* paddock exec, the helper's side (exec.c is the supervisor's): a spare
 * helper, made while no client waits, that takes the next request.
 *
 * The spare (exec_helper(), a grandchild of the supervisor, reparented
 * away) makes itself non-dumpable, keeps only its channel to the
 * supervisor and the session's end pipe, joins the sandbox's namespaces
 * through the pidfd of its PID 1 (sandbox_join(): setns(2), all at once,
 * the user namespace first), and forks the command's process at once. That
 * process is inside the sandbox's pid namespace and hardens itself as the
 * workload is hardened (sandbox_harden(): rlimits, a new session, only its
 * channel kept, no capabilities, no_new_privs, Landlock, seccomp), then
 * waits: the expensive part of an exec (two forks of the supervisor, the
 * join, the Landlock rule set, the seccomp program's load) is done before
 * the request comes. With the protected-path notice or --trace-denials the
 * program is the workload's whole one with a seccomp listener of the
 * command's own (the listener is one per filter chain); the command sends
 * it to the spare as soon as it is loaded, and the spare passes it to the
 * supervisor before it takes a request (pass_listener()), so the command
 * never holds it when it runs what it was asked to. The supervisor's lines
 * for the client (the notice, denials) come back on the channel while the
 * command runs, and go to the client's stderr.
 * A request gives the spare the client's socket and
 * stdio; the spare resolves the cwd in the sandbox's root, makes the relay
 * (pipes or a pty of the sandbox's devpts) and hands the command the
 * request, the cwd and the relay's ends; the command only moves them onto
 * 0-2, changes to the cwd and execs. The spare then waits for it by
 * pidfd, forwards the client's "signal N" and "winch", relays the stdio
 * and reports the end. Each spare serves one request.
 *
 * The waiting command is a process of the session, visible in it as
 * "paddock-exec": it holds nothing of the host's (its fds 0-2 are
 * /dev/null until a request), it is not dumpable, and its Landlock domain
 * is its own (the workload can neither signal nor trace it). It goes with
 * its spare (PR_SET_PDEATHSIG), the spare with the supervisor (EOF on the
 * end pipe) or the sandbox (the command's pidfd).
 *
 * Lifetime of a running command, stdio and signals: as before the spare,
 * see exec.c. */
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
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "../../include/exitcodes.h"
#include "../../include/log.h"
#include "../../include/sys.h"

extern char **environ;

/* EXEC_FDS (run.h): what a request hands on, the client's socket and
 * stdio (supervisor to spare), or the cwd and the command's stdio (spare
 * to command). */

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
static int unhardened(int *keep, struct err *err)
{
	cap_t caps = cap_get_proc();
	cap_value_t last = (cap_value_t)cap_max_bits() - 1;
	sigset_t mask;
	int rc = 0;

	if (setsid() < 0)
		return err_sys(err, errno, "exec-unhardened: setsid");
	/* Only the channel, at 3, and close-on-exec: EOF after the exec is
	 * the spare's word that it succeeded. */
	rc = fds_keep_only(keep, 1, err);
	keep[0] = 3;
	if (rc < 0)
		return rc;
	if (fcntl(keep[0], F_SETFD, FD_CLOEXEC) < 0)
		return err_sys(err, errno, "cloexec");
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

/* The command's process: in the sandbox's namespaces (pid included), a
 * child of the spare, hardened before any request. Never returns. */
static __attribute__((noreturn)) void command(const struct run *r, int ch)
{
	struct session_exec x = {.stdio = {-1, -1, -1}};
	struct err err = {0};
	int keep[1] = {ch}, fds[EXEC_FDS], e, rc;
	char *pkt = malloc(SESSION_EXEC_MAX);
	char **env;
	ssize_t n;

	/* Killed with the spare: it holds the request and our only handle.
	 * Our parent is outside our pid namespace, so getppid() is 0 while
	 * it lives; a reparented process sees PID 1. */
	if (prctl(PR_SET_PDEATHSIG, SIGKILL) < 0 || getppid() != 0 || !pkt)
		_exit(EXIT_LAUNCHER);
	(void)prctl(PR_SET_NAME, "paddock-exec");
	/* The cwd is the request's: "/" until then (sandbox_harden()
	 * resolves it in the root), fchdir() to the spare's fd below. */
	if (r->spec->opt->weaken & WEAKEN_EXEC_UNHARDENED)
		rc = unhardened(keep, &err);
	else
		/* With the notice or --trace-denials, the workload's own
		 * program with a listener of ours, which goes to the spare
		 * at once ("seccomp-notify") and never stays with us. */
		rc = sandbox_harden(&r->spec->sb, "/", keep, 1, 0, true, exec_listener_expected(r),
				    &err);
	if (rc < 0) {
		exec_reply(keep[0], "error %s", err.msg);
		_exit(EXIT_LAUNCHER);
	}
	log_debug("exec: command hardened");
	n = recv_fds(keep[0], pkt, SESSION_EXEC_MAX, fds);
	if (n <= 0)
		_exit(EXIT_LAUNCHER); /* the spare is gone: nobody to tell */
	if (session_exec_decode(pkt, (size_t)n, &x, &err) < 0) {
		exec_reply(keep[0], "error %s", err.msg);
		_exit(EXIT_LAUNCHER);
	}
	/* The relay's pipes or pty slave, never the client's own fds: the
	 * client's terminal or files are host inodes (chmod /dev/stdin), and
	 * a leftover of the command would keep reading the client's terminal
	 * after paddock exec returned. */
	for (int i = 0; i < 3; i++)
		if (fds[1 + i] < 0 || dup2(fds[1 + i], i) < 0)
			_exit(EXIT_LAUNCHER);
	if (fds[0] < 0 || fchdir(fds[0]) < 0)
		_exit(EXIT_LAUNCHER);
	for (int i = 0; i < EXEC_FDS; i++)
		if (fds[i] > 2)
			close(fds[i]);
	env = merged_env(r->spec->sb.env, x.env, x.n_env);
	if (!env) {
		exec_reply(keep[0], "error out of memory");
		_exit(EXIT_LAUNCHER);
	}
	/* execvp(3) searches the PATH of the environment it runs in: the
	 * command's, as paddock-init's execvp does for the workload. */
	environ = env;
	/* -t: the pty slave becomes the controlling terminal of the session
	 * sandbox_harden() made us the leader of, so job control works. A
	 * policy's seccomp filter may refuse the ioctl: then the command
	 * runs without one. */
	if (x.tty)
		(void)ioctl(0, TIOCSCTTY, 0);
	execvp(x.argv[0], x.argv);
	e = errno;
	exec_reply(keep[0], "exec-error %d", e);
	_exit(e == ENOENT || e == ENOTDIR ? EXIT_NOTFOUND : EXIT_NOEXEC);
}

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

/* The client's requests until the command ends: "signal N", "winch"; the
 * relay of its stdio, and the supervisor's lines on chan. A hang-up kills
 * the command; the session's end (EOF on end_fd) terminates it. */
static void forward_client(int sock, int pidfd, int end_fd, int chan, struct stdio_relay *rel)
{
	bool client = true, ending = false;

	for (;;) {
		struct pollfd p[4 + STDIO_PFDS] = {
		    {.fd = pidfd, .events = POLLIN},
		    {.fd = client ? sock : -1, .events = POLLIN},
		    {.fd = ending ? -1 : end_fd, .events = POLLIN},
		    {.fd = chan, .events = POLLIN},
		};
		size_t nr = stdio_relay_pollfds(rel, p + 4, STDIO_PFDS);
		char buf[32];
		ssize_t n;
		int sig;

		if (poll(p, 4 + nr, -1) < 0) {
			if (errno == EINTR)
				continue;
			pidfd_send_signal(pidfd, SIGKILL, NULL, 0);
			return;
		}
		/* The line before the command's own words that follow it
		 * (git's "could not write config file"). */
		if (p[3].revents && !say(chan))
			chan = -1;
		stdio_relay_handle(rel, p + 4, nr);
		if (p[0].revents)
			return;
		if (p[2].revents) {
			/* Only the supervisor writes, and it never does: this
			 * is the hang-up of its close. */
			ending = true;
			pidfd_send_signal(pidfd, SIGTERM, NULL, 0);
		}
		if (!p[1].revents)
			continue;
		n = recv(sock, buf, sizeof(buf) - 1, MSG_DONTWAIT);
		if (n < 0 && (errno == EAGAIN || errno == EINTR))
			continue;
		if (n <= 0) {
			/* The client is gone: so is its command. */
			pidfd_send_signal(pidfd, SIGKILL, NULL, 0);
			client = false;
			continue;
		}
		buf[n] = '\0';
		if (strcmp(buf, "winch") == 0) {
			stdio_relay_winch(rel);
			continue;
		}
		/* ESRCH: it just ended; the pidfd tells us next. */
		if (sscanf(buf, "signal %d", &sig) == 1 && sig > 0 && sig < NSIG)
			pidfd_send_signal(pidfd, sig, NULL, 0);
	}
}

/* -t: a pty pair of the sandbox's own devpts (the helper is in its mount
 * namespace now), as the workload's (sandbox/enter.c): the master is
 * relayed to the client's fds, the slave is the command's 0-2. */
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

/* The end of the command: what it left in its process group goes too
 * (docker exec leaves such leftovers running; here nothing outlives its
 * owner), and the relay closes, so a leftover that changed its group
 * reads EOF and writes into nothing. The group id is the command's pid
 * (sandbox_harden()'s setsid()); the command is not reaped yet, so the
 * id is still its own. */
static void end_command(long pid, struct stdio_relay *rel)
{
	/* ESRCH: nothing is left in it. */
	(void)kill((pid_t)-pid, SIGKILL);
	stdio_relay_finish(rel);
}

/* The command's seccomp listener, which it sends us as soon as its filter
 * is loaded (seccomp_apply_notify()), on to the supervisor before we take
 * a request: the supervisor serves the command's calls from its first,
 * and the command never holds the listener after its hardening. Its
 * hardening's failure ("error MSG") instead becomes the request's answer. */
static int pass_listener(int cmd, int chan, struct err *err)
{
	char buf[sizeof(err->msg) + 16];
	int fds[EXEC_FDS], rc = 0;
	ssize_t n = recv_fds(cmd, buf, sizeof(buf) - 1, fds);

	buf[n > 0 ? n : 0] = '\0';
	if (n > 0 && fds[0] >= 0 && strcmp(buf, "seccomp-notify") == 0) {
		rc = exec_send_fds(chan, buf, (size_t)n, fds, 1);
		if (rc < 0)
			err_set(err, -rc, "pass the command's seccomp listener: %s", strerror(-rc));
	} else if (n > 6 && strncmp(buf, "error ", 6) == 0) {
		rc = err_set(err, EPROTO, "%s", buf + 6);
	} else {
		rc = err_set(err, EPIPE, "the command's process ended during its hardening");
	}
	for (int i = 0; i < EXEC_FDS; i++)
		if (fds[i] >= 0)
			close(fds[i]);
	return rc;
}

/* The spare's setup: only its channel and the session's end pipe, 0-2 on
 * /dev/null until a request, then the sandbox's namespaces (sandbox_join():
 * not dumpable before and after the join) and the command's process,
 * which hardens itself. *chan and *end_fd are their new numbers; *pidfd
 * and *cmd the command's pidfd and our end of its channel. */
static int prepare(const struct run *r, int *chan, int *end_fd, int *pidfd, int *cmd,
		   struct err *err)
{
	int keep[2] = {*chan, r->live.exec_end[0]};
	const struct sandbox_join j = {
	    .parent = 0, /* reparented at once (exec.c); the end pipe ends us */
	    .pidfd = r->live.box.pidfd,
	    /* --weaken exec-host-mounts (evaluation only): every namespace
	     * but the mount namespace, so the command sees the host's files
	     * and only Landlock is left between it and them. */
	    .nstypes = (int)(sandbox_ns_flags(r->spec->sb.namespaces) &
			     ~(r->spec->opt->weaken & WEAKEN_EXEC_HOST_MOUNTS ? CLONE_NEWNS : 0)),
	    .keep = keep,
	    .n_keep = 2,
	    .n_inherit = 0,
	    .flags = SANDBOX_JOIN_NOT_DUMPABLE | SANDBOX_JOIN_NULL_STDIO,
	};
	struct sys_clone_args args = {0};
	int rc = sandbox_join(&j, err), sv[2];
	long pid;

	/* Where the join left them, also after a failed step: the request
	 * still gets its "error" (exec_helper()). */
	*chan = keep[0];
	*end_fd = keep[1];
	if (rc < 0)
		return rc;
	/* The command's cwd is resolved with RESOLVE_IN_ROOT from ours:
	 * without the mount namespace's join (which leaves us at the
	 * sandbox's root) we still stand in the supervisor's cwd. */
	if ((r->spec->opt->weaken & WEAKEN_EXEC_HOST_MOUNTS) && chdir("/") < 0)
		return err_sys(err, errno, "chdir /");
	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) < 0)
		return err_sys(err, errno, "socketpair");
	args.flags = CLONE_PIDFD;
	args.pidfd = (uintptr_t)pidfd;
	args.exit_signal = SIGCHLD;
	pid = sys_clone3(&args);
	if (pid == 0) {
		close(sv[0]);
		command(r, sv[1]);
	}
	close(sv[1]);
	if (pid < 0) {
		close(sv[0]);
		/* ENOMEM: the pid namespace has no init any more (fork(2)). */
		if (pid == -ENOMEM)
			return err_set(err, ESRCH, "session %s has ended",
				       r->live.session->info.id);
		return err_set(err, (int)-pid, "clone3: %s", strerror((int)-pid));
	}
	*cmd = sv[0];
	if (exec_listener_expected(r)) {
		rc = pass_listener(*cmd, *chan, err);
		if (rc < 0)
			return rc;
	}
	return (int)pid;
}

/* Until the request: nothing, or the end of the supervisor, the session or
 * the command. The request's packet into pkt (its length), its fds into
 * fds[], or 0 when there will be none. */
static ssize_t await_request(int chan, int end_fd, int pidfd, char *pkt, int fds[EXEC_FDS])
{
	for (;;) {
		struct pollfd p[3] = {{.fd = chan, .events = POLLIN},
				      {.fd = end_fd, .events = POLLIN},
				      {.fd = pidfd, .events = POLLIN}};

		if (poll(p, pidfd >= 0 ? 3 : 2, -1) < 0) {
			if (errno == EINTR)
				continue;
			return 0;
		}
		if (p[0].revents & POLLIN)
			return recv_fds(chan, pkt, SESSION_EXEC_MAX, fds);
		/* A hang-up of the channel without a request, the end pipe
		 * (only the supervisor holds its write end), or the command
		 * gone (the sandbox ended): no request will come. */
		if (p[0].revents || p[1].revents || p[2].revents)
			return 0;
	}
}

void exec_helper(struct run *r, int chan)
{
	struct session_exec x = {.stdio = {-1, -1, -1}};
	struct stdio_relay rel = {.master = -1, .tty_fd = -1};
	struct err err = {0}, setup = {0};
	char buf[sizeof(err.msg) + 16], *pkt = malloc(SESSION_EXEC_MAX);
	siginfo_t si = {0};
	struct timespec ready;
	int pidfd = -1, end_fd = -1, cmd = -1, sock, cwd = -1, master = -1;
	int fds[EXEC_FDS], cstdio[3] = {-1, -1, -1};
	/* The session's --weaken direct-stdio: the client's own fds. */
	bool direct = r->spec->opt->weaken & WEAKEN_DIRECT_STDIO;
	long pid;
	ssize_t n;

	/* Our copy of the supervisor's memory has the evidence log's key;
	 * neither we nor the waiting command need it (docs/security.md,
	 * "paddock exec"). */
	explicit_bzero(r->live.evidence.key, sizeof(r->live.evidence.key));
	pid = pkt ? prepare(r, &chan, &end_fd, &pidfd, &cmd, &setup) : -ENOMEM;
	clock_gettime(CLOCK_MONOTONIC, &ready);

	if (pid < 0 && !setup.msg[0])
		err_set(&setup, ENOMEM, "out of memory");
	n = chan >= 0 ? await_request(chan, end_fd, pidfd, pkt, fds) : 0;
	if (n <= 0) {
		if (pidfd >= 0)
			pidfd_send_signal(pidfd, SIGKILL, NULL, 0);
		_exit(0);
	}
	/* chan stays: the supervisor's lines for the client come on it. */
	sock = fds[0];
	/* The client's stdio onto our 0-2, where the relay expects it. */
	for (int i = 0; i < 3; i++)
		if (fds[1 + i] < 0 || dup2(fds[1 + i], i) < 0 || close(fds[1 + i]) < 0)
			err_sys(&setup, EBADF, "the client's fd %d", i);
	if (setup.msg[0] || sock < 0) {
		exec_reply(sock, "error %s", setup.msg);
		_exit(EXIT_LAUNCHER);
	}
	if (direct)
		for (int i = 0; i < 3; i++)
			cstdio[i] = i;
	if (session_exec_decode(pkt, (size_t)n, &x, &err) < 0 ||
	    (cwd = sys_openat2(AT_FDCWD, x.cwd ? x.cwd : r->spec->policy->cwd,
			       O_PATH | O_DIRECTORY | O_CLOEXEC,
			       RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS)) < 0) {
		/* The same words as sandbox_harden()'s. */
		if (!err.msg[0])
			err_sys(&err, cwd, "cwd %s", x.cwd ? x.cwd : r->spec->policy->cwd);
		exec_reply(sock, "error %s", err.msg);
		_exit(EXIT_LAUNCHER);
	}
	if ((direct  ? 0
	     : x.tty ? open_pty(&master, cstdio, &err)
		     : stdio_relay_pipes(&rel, cstdio, &err)) < 0) {
		exec_reply(sock, "error %s", err.msg);
		_exit(EXIT_LAUNCHER);
	}
	/* Our 0-2 are the client's now: when we were ready, for a timeline
	 * with the client's lines (PADDOCK_DEBUG, bench/profile.md). */
	log_debug("exec: spare was ready at %ld.%06ld", (long)ready.tv_sec, ready.tv_nsec / 1000);
	log_debug("exec: spare has the request, relay ready");
	/* EPIPE: it died before the request (its hardening failed); its
	 * last words, if any, or its status below. */
	(void)exec_send_fds(cmd, pkt, (size_t)n,
			    (int[EXEC_FDS]){cwd, cstdio[0], cstdio[1], cstdio[2]}, EXEC_FDS);
	close(cwd);
	/* The command has its copies. */
	for (int i = 0; i < 3 && !direct; i++)
		if (cstdio[i] >= 0 && (i == 0 || cstdio[i] != cstdio[i - 1]))
			close(cstdio[i]);
	/* The client's terminal mode is the client's (cmd_exec.c). */
	if (master >= 0)
		stdio_relay_pty(&rel, master, false);
	/* Close-on-exec: EOF means the exec succeeded; else one report. */
	do
		n = recv(cmd, buf, sizeof(buf) - 1, 0);
	while (n < 0 && errno == EINTR);
	close(cmd);
	if (n > 0) {
		buf[n] = '\0';
		waitid(P_PIDFD, (id_t)pidfd, &si, WEXITED);
		exec_reply(sock, "%s", buf);
		_exit(0);
	}
	log_debug("exec: command started");
	forward_client(sock, pidfd, end_fd, chan, &rel);
	end_command(pid, &rel);
	if (waitid(P_PIDFD, (id_t)pidfd, &si, WEXITED) < 0)
		_exit(EXIT_LAUNCHER);
	if (si.si_code == CLD_EXITED)
		exec_reply(sock, "exit %d", si.si_status);
	else
		exec_reply(sock, "signal %d", si.si_status);
	_exit(0);
}
