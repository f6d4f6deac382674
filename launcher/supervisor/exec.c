/* paddock exec, the supervisor's side: a command run in a live session.
 *
 * The supervisor forks once, and that child forks the helper and exits at
 * once: the supervisor reaps only its own child by pid (never
 * waitpid(-1), which could take paddock-init's status from the pidfd
 * wait), and the helper is nobody's zombie of ours. The helper makes
 * itself non-dumpable, keeps only the client's socket and stdio, joins
 * the sandbox's namespaces through the pidfd of its PID 1 (setns(2), all
 * at once, the user namespace first), and forks the command's process,
 * which is then inside the sandbox's pid namespace: it gets the same
 * hardening as the workload (sandbox_harden()) and execs the command.
 * The helper waits for it by pidfd, forwards the client's "signal N",
 * and reports its end to the client.
 *
 * Lifetime: the command is a process of the session. When the session
 * starts to end (stop, TTL, the main command done) the supervisor closes
 * the pipe every helper watches, and the helper sends its command SIGTERM
 * (paddock-init's own SIGTERM does not reach it: the command has a
 * Landlock domain of its own, and signal scoping, ABI 6, keeps one domain
 * from signalling another's processes). The exit of paddock-init at the
 * end of the grace period kills whatever is left in the pid namespace,
 * the command's descendants included (pid_namespaces(7)); the client then
 * learns "signal 15" or "signal 9" (exit 143 or 137).
 * When the client goes away (its socket hangs up) the command is
 * SIGKILLed: nothing outlives its owner (docker exec lets it run on).
 *
 * Stdio: the command never gets the client's fds (which arrive by
 * SCM_RIGHTS and stay in the helper): pipes, or with -t a pty of the
 * sandbox's devpts, relayed by the helper (stdio.c's relay) until the
 * command ends; then its process group is SIGKILLed and the relay
 * closed, so a leftover child of the command can read nothing more from
 * the client's terminal. */
#include "run.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/capability.h>
#include <sys/pidfd.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../../include/exitcodes.h"
#include "../../include/log.h"
#include "../../include/sys.h"

extern char **environ;

/* One message on the client's socket, or the error pipe (not a socket). */
static void reply(int fd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void reply(int fd, const char *fmt, ...)
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
 * (a session of its own, the cwd, fds 0-2 and the close-on-exec error
 * pipe) and the helper's capabilities carried across execve(2): every
 * capability of its permitted set (all of them in the sandbox's user
 * namespace after the join) made inheritable and ambient, since an exec
 * by a non-zero uid otherwise clears them (capabilities(7), "Transformation
 * of capabilities during execve()"). No bounding set drop, no
 * no_new_privs, no Landlock, no seccomp: the twin of test_exec.c's
 * `exec_has_the_workloads_*` tests, which must see each of these. */
static int unhardened(const char *cwd, struct err *err)
{
	cap_t caps = cap_get_proc();
	cap_value_t last = (cap_value_t)cap_max_bits() - 1;
	sigset_t mask;
	int rc = 0;

	if (setsid() < 0 || chdir(cwd) < 0)
		return err_sys(err, errno, "exec-unhardened: setsid or cwd %s", cwd);
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

/* The command's process: in the sandbox's namespaces (pid included), a
 * child of the helper. Never returns. */
static __attribute__((noreturn)) void command(const struct run *r, struct session_exec *x,
					      const int cstdio[3], int errfd)
{
	struct err err = {0};
	int keep[1] = {errfd};
	const char *cwd;
	char **env;
	int e, rc = -1;

	/* Killed with the helper: it holds the client's connection and our
	 * only handle. Our parent is outside our pid namespace, so getppid()
	 * is 0 while it lives; a reparented process sees PID 1. */
	if (prctl(PR_SET_PDEATHSIG, SIGKILL) < 0 || getppid() != 0)
		_exit(EXIT_LAUNCHER);
	/* The relay's pipes or pty slave, never the client's own fds: the
	 * client's terminal or files are host inodes (chmod /dev/stdin), and
	 * a leftover of the command would keep reading the client's terminal
	 * after paddock exec returned. */
	for (int i = 0; i < 3; i++)
		if (dup2(cstdio[i], i) < 0)
			_exit(EXIT_LAUNCHER);
	env = merged_env(r->spec->sb.env, x->env, x->n_env);
	cwd = x->cwd ? x->cwd : r->spec->policy->cwd;
	if (!env)
		err_set(&err, ENOMEM, "out of memory");
	else if (r->spec->opt->weaken & WEAKEN_EXEC_UNHARDENED)
		rc = unhardened(cwd, &err);
	else
		rc = sandbox_harden(&r->spec->sb, cwd, keep, 1, 0, true, false, &err);
	if (env && rc >= 0) {
		/* execvp(3) searches the PATH of the environment it runs in:
		 * the command's, as paddock-init's execvp does for the
		 * workload. */
		environ = env;
		/* -t: the pty slave becomes the controlling terminal of the
		 * session sandbox_harden() made us the leader of, so job
		 * control works. A policy's seccomp filter may refuse the
		 * ioctl: then the command runs without one. */
		if (x->tty)
			(void)ioctl(0, TIOCSCTTY, 0);
		log_debug("exec: command hardened");
		execvp(x->argv[0], x->argv);
		e = errno;
		reply(keep[0], "exec-error %d", e);
		_exit(e == ENOENT || e == ENOTDIR ? EXIT_NOTFOUND : EXIT_NOEXEC);
	}
	reply(keep[0], "error %s", err.msg);
	_exit(EXIT_LAUNCHER);
}

/* The helper's setup: only the client's socket, the session's end pipe
 * and the client's stdio (onto 0-2), then the sandbox's namespaces
 * (sandbox_join(): not dumpable before and after the join). *sock and
 * *end_fd are their new numbers. */
static int enter(const struct run *r, int *sock, int *end_fd, struct session_exec *x,
		 struct err *err)
{
	int keep[5] = {*sock, r->live.exec_end[0], x->stdio[0], x->stdio[1], x->stdio[2]};
	const struct sandbox_join j = {
	    .parent = 0, /* reparented at once (exec_spawn()); the client's hang-up ends us */
	    .pidfd = r->live.box.pidfd,
	    /* --weaken exec-host-mounts (evaluation only): every namespace
	     * but the mount namespace, so the command sees the host's files
	     * and only Landlock is left between it and them. */
	    .nstypes = (int)(sandbox_ns_flags(r->spec->sb.namespaces) &
			     ~(r->spec->opt->weaken & WEAKEN_EXEC_HOST_MOUNTS ? CLONE_NEWNS : 0)),
	    .keep = keep,
	    .n_keep = 5,
	    .n_inherit = 0,
	    .flags = SANDBOX_JOIN_NOT_DUMPABLE | SANDBOX_JOIN_STDIO_LAST3,
	};
	int rc = sandbox_join(&j, err);

	if (rc < 0)
		return rc;
	/* The command's cwd is resolved with RESOLVE_IN_ROOT from ours:
	 * without the mount namespace's join (which leaves us at the
	 * sandbox's root) we still stand in the supervisor's cwd. */
	if ((r->spec->opt->weaken & WEAKEN_EXEC_HOST_MOUNTS) && chdir("/") < 0)
		return err_sys(err, errno, "chdir /");
	*sock = keep[0];
	*end_fd = keep[1];
	for (int i = 0; i < 3; i++)
		x->stdio[i] = -1; /* now 0-2 */
	return 0;
}

/* The client's requests until the command ends: "signal N", "winch"; and
 * the relay of its stdio. A hang-up kills the command; the session's end
 * (EOF on end_fd) terminates it. */
static void forward_client(int sock, int pidfd, int end_fd, struct stdio_relay *rel)
{
	bool client = true, ending = false;

	for (;;) {
		struct pollfd p[3 + STDIO_PFDS] = {
		    {.fd = pidfd, .events = POLLIN},
		    {.fd = client ? sock : -1, .events = POLLIN},
		    {.fd = ending ? -1 : end_fd, .events = POLLIN},
		};
		size_t nr = stdio_relay_pollfds(rel, p + 3, STDIO_PFDS);
		char buf[32];
		ssize_t n;
		int sig;

		if (poll(p, 3 + nr, -1) < 0) {
			if (errno == EINTR)
				continue;
			pidfd_send_signal(pidfd, SIGKILL, NULL, 0);
			return;
		}
		stdio_relay_handle(rel, p + 3, nr);
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

/* The helper: never returns. */
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

static __attribute__((noreturn)) void helper(const struct run *r, int sock, struct session_exec *x)
{
	struct sys_clone_args args = {0};
	struct stdio_relay rel = {.master = -1, .tty_fd = -1};
	struct err err = {0};
	char buf[sizeof(err.msg) + 16];
	siginfo_t si = {0};
	int pipefd[2], pidfd = -1, end_fd = -1, cstdio[3] = {-1, -1, -1}, master = -1;
	/* The session's --weaken direct-stdio: the client's own fds. */
	bool direct = r->spec->opt->weaken & WEAKEN_DIRECT_STDIO;

	if (direct)
		for (int i = 0; i < 3; i++)
			cstdio[i] = i;
	ssize_t n;
	long pid;

	if (enter(r, &sock, &end_fd, x, &err) < 0 ||
	    (direct   ? 0
	     : x->tty ? open_pty(&master, cstdio, &err)
		      : stdio_relay_pipes(&rel, cstdio, &err)) < 0) {
		reply(sock, "error %s", err.msg);
		_exit(EXIT_LAUNCHER);
	}
	log_debug("exec: helper joined, relay ready");
	if (pipe2(pipefd, O_CLOEXEC) < 0) {
		reply(sock, "error pipe: %s", strerror(errno));
		_exit(EXIT_LAUNCHER);
	}
	args.flags = CLONE_PIDFD;
	args.pidfd = (uintptr_t)&pidfd;
	args.exit_signal = SIGCHLD;
	pid = sys_clone3(&args);
	if (pid == 0) {
		close(pipefd[0]);
		command(r, x, cstdio, pipefd[1]);
	}
	/* The command has its copies. */
	for (int i = 0; i < 3 && !direct; i++)
		if (cstdio[i] >= 0 && (i == 0 || cstdio[i] != cstdio[i - 1]))
			close(cstdio[i]);
	/* The client's terminal mode is the client's (cmd_exec.c). */
	if (master >= 0)
		stdio_relay_pty(&rel, master, false);
	if (pid < 0) {
		/* ENOMEM: the pid namespace has no init any more (fork(2)). */
		if (pid == -ENOMEM)
			reply(sock, "error session %s has ended", r->live.session->info.id);
		else
			reply(sock, "error clone3: %s", strerror((int)-pid));
		_exit(EXIT_LAUNCHER);
	}
	close(pipefd[1]);
	/* Close-on-exec: EOF means the exec succeeded; else one report. */
	do
		n = read(pipefd[0], buf, sizeof(buf) - 1);
	while (n < 0 && errno == EINTR);
	close(pipefd[0]);
	if (n > 0) {
		buf[n] = '\0';
		waitid(P_PIDFD, (id_t)pidfd, &si, WEXITED);
		reply(sock, "%s", buf);
		_exit(0);
	}
	log_debug("exec: command started");
	forward_client(sock, pidfd, end_fd, &rel);
	end_command(pid, &rel);
	if (waitid(P_PIDFD, (id_t)pidfd, &si, WEXITED) < 0)
		_exit(EXIT_LAUNCHER);
	if (si.si_code == CLD_EXITED)
		reply(sock, "exit %d", si.si_status);
	else
		reply(sock, "signal %d", si.si_status);
	_exit(0);
}

/* Why an exec request is refused, or NULL. */
static const char *refusal(const struct run *r, const struct session_exec *x, char *buf,
			   size_t size)
{
	const char *id = r->live.session->info.id;

	/* Without a pid namespace nothing would end the command with the
	 * session: the supervisor can only kill its direct child then. */
	if (!(r->spec->sb.namespaces & POLICY_NS_PID)) {
		snprintf(buf, size,
			 "session %s has no pid namespace (--weaken no-pidns); exec would escape "
			 "its lifetime",
			 id);
		return buf;
	}
	if (!r->out.started) {
		snprintf(buf, size, "session %s is still starting", id);
		return buf;
	}
	if (r->out.retained) {
		snprintf(buf, size,
			 "session %s: its main command has ended (only leased services run on)",
			 id);
		return buf;
	}
	if (r->out.wl_reported || r->out.expired || r->out.stopped) {
		snprintf(buf, size, "session %s is ending", id);
		return buf;
	}
	for (int i = 0; i < 3; i++) {
		struct stat st;
		int fl = fcntl(x->stdio[i], F_GETFL);

		/* A directory (or O_PATH) fd would be a way out of the new
		 * root: fchdir(0); chdir("..") (CVE-2024-21626). */
		if (fl < 0 || (fl & O_PATH) || fstat(x->stdio[i], &st) < 0 || S_ISDIR(st.st_mode)) {
			snprintf(buf, size,
				 "fd %d of the client is a directory or an O_PATH fd; refused", i);
			return buf;
		}
	}
	return NULL;
}

void exec_spawn(struct run *r, int fd, struct session_exec *req)
{
	char why[160];
	const char *no = r->live.session ? refusal(r, req, why, sizeof(why)) : "no session";
	pid_t pid;
	int ws;

	log_debug("exec: request");
	if (!no && !r->live.exec_end_open) {
		if (pipe2(r->live.exec_end, O_CLOEXEC) < 0)
			no = strerror(errno);
		else
			r->live.exec_end_open = true;
	}
	if (no) {
		reply(fd, "error %s", no);
	} else if ((pid = fork()) < 0) {
		reply(fd, "error fork: %s", strerror(errno));
	} else if (pid == 0) {
		/* The helper's parent exits at once: the helper is reparented
		 * away from the supervisor (to the host's init or subreaper),
		 * which reaps it; the supervisor never has to. */
		pid = fork();
		if (pid == 0)
			helper(r, fd, req);
		if (pid < 0)
			reply(fd, "error fork: %s", strerror(errno));
		_exit(0);
	} else {
		while (waitpid(pid, &ws, 0) < 0 && errno == EINTR)
			;
	}
	close(fd);
	session_exec_free(req);
}
