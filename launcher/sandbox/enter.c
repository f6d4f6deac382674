/* Creating a sandbox: clone3 into new namespaces with a pidfd, id maps
 * written by the parent, and the child's ordered setup ending in the exec of
 * paddock-init from a sealed memfd. The sequence from clone3 to that exec
 * reads top to bottom in this file; this is its map, across the three
 * processes (messages: include/initproto.h, "before exec"):
 *
 *  supervisor (parent)            child (new namespaces)       paddock-init
 *  1 socketpair; clone3 + pidfd ->
 *                                 2 PDEATHSIG; wait for "go"
 *  3 ns inodes; setgroups deny,
 *    uid_map, gid_map; "go"     ->
 *                                 4 "/" private; tmpfs root;
 *                                   plan ops in order (mounts/)
 *  5 protected paths prepared     ... before the first PIN or
 *    (placeholders, locks);         PROTECT op it waits for:
 *    "protect LINE"..., "protect-done" ->
 *                                 6 PINs, PROTECTs; root read-only;
 *                                   pivot_root(".", "."); detach
 *                                 7 verify against mountinfo;
 *  (supervise loop) <-              "applied FIRST STATES"
 *                                 8 hostname; lo up; the Landlock
 *                                   ruleset built (not enforced)
 *                                 9 harden: cwd, rlimits, setsid, fds
 *                                   (initproto_fd), capabilities,
 *                                   no_new_privs, signal mask, seccomp
 *                                10 fexecve(init memfd)      ->
 *                                                             11 fds cloexec, not
 *                                                                dumpable, subreaper,
 *                                                                signalfd, timers
 *                                                             12 each process it
 *                                                                starts: Landlock
 *                                                                restrict_self, exec
 *  Any failure of the child: "error ERRNO MSG", _exit(EXIT_LAUNCHER).
 *
 * Where Landlock is enforced differs by way in, on purpose: for what init
 * starts, in init's child (step 12, after init's own seccomp filter, which
 * allows landlock_restrict_self), so that init itself has no domain and can
 * signal every process of the sandbox while none of them can signal it
 * (signal scoping, ABI 6); for paddock exec, in sandbox_harden() before
 * seccomp. */
#include "sandbox.h"

#include <fcntl.h>
#include <grp.h>
#include <limits.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/fsuid.h>
#include <sys/ioctl.h>
#include <sys/pidfd.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../../include/cleanup.h"
#include "../../include/exitcodes.h"
#include "../../include/initproto.h"
#include "../../include/log.h"
#include "../../include/sys.h"

unsigned long sandbox_ns_flags(unsigned ns)
{
	unsigned long f = 0;

	f |= ns & POLICY_NS_USER ? CLONE_NEWUSER : 0;
	f |= ns & POLICY_NS_MOUNT ? CLONE_NEWNS : 0;
	f |= ns & POLICY_NS_PID ? CLONE_NEWPID : 0;
	f |= ns & POLICY_NS_NET ? CLONE_NEWNET : 0;
	f |= ns & POLICY_NS_IPC ? CLONE_NEWIPC : 0;
	f |= ns & POLICY_NS_UTS ? CLONE_NEWUTS : 0;
	f |= ns & POLICY_NS_CGROUP ? CLONE_NEWCGROUP : 0;
	return f;
}

static const int rlimit_res[POLICY_RLIMIT_COUNT] = {
    [POLICY_RLIMIT_NPROC] = RLIMIT_NPROC, [POLICY_RLIMIT_NOFILE] = RLIMIT_NOFILE,
    [POLICY_RLIMIT_FSIZE] = RLIMIT_FSIZE, [POLICY_RLIMIT_AS] = RLIMIT_AS,
    [POLICY_RLIMIT_CORE] = RLIMIT_CORE,
};

static int set_rlimits(const struct sandbox_spec *s, struct err *err)
{
	const struct policy *p = s->policy;

	/* The supervisor raised its own soft fd limit (supervisor_run()); the
	 * workload gets the caller's back unless the policy sets one. */
	if (s->has_caller_nofile && !p->rlimits[POLICY_RLIMIT_NOFILE].set &&
	    setrlimit(RLIMIT_NOFILE, &s->caller_nofile) < 0)
		return err_sys(err, errno, "setrlimit nofile");
	for (int i = 0; i < POLICY_RLIMIT_COUNT; i++) {
		struct rlimit rl, now;

		if (!p->rlimits[i].set)
			continue;
		rl.rlim_cur = rl.rlim_max =
		    p->rlimits[i].value == POLICY_UNLIMITED ? RLIM_INFINITY : p->rlimits[i].value;
		/* Hard and soft together: the workload may lower, never raise. */
		if (setrlimit(rlimit_res[i], &rl) == 0)
			continue;
		/* EPERM: above the hard limit, which only CAP_SYS_RESOURCE in
		 * the initial user namespace may raise. */
		if (errno == EPERM && getrlimit(rlimit_res[i], &now) == 0)
			return err_set(
			    err, EPERM,
			    "limits.rlimits.%s: %llu is above the caller's hard limit %llu",
			    policy_rlimit_name(i), (unsigned long long)rl.rlim_max,
			    (unsigned long long)now.rlim_max);
		return err_sys(err, errno, "setrlimit %s", policy_rlimit_name(i));
	}
	return 0;
}

/* ------------------------------------------------------------ the child */

/* Step 2: wait for "go"; before it, a root caller's idmapped trees. */
static int wait_go(int ctl, struct mount_plan *plan, struct err *err)
{
	for (;;) {
		char buf[32], cbuf[CMSG_SPACE(sizeof(int))];
		struct iovec iov = {.iov_base = buf, .iov_len = sizeof(buf) - 1};
		struct msghdr mh = {.msg_iov = &iov,
				    .msg_iovlen = 1,
				    .msg_control = cbuf,
				    .msg_controllen = sizeof(cbuf)};
		struct cmsghdr *c;
		ssize_t n = recvmsg(ctl, &mh, MSG_CMSG_CLOEXEC);
		size_t i;
		int fd = -1;

		if (n <= 0)
			return err_set(err, EPIPE, "the supervisor went away during setup");
		buf[n] = '\0';
		if (strcmp(buf, "go") == 0)
			return 0;
		c = CMSG_FIRSTHDR(&mh);
		if (c && c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_RIGHTS &&
		    c->cmsg_len == CMSG_LEN(sizeof(int)))
			memcpy(&fd, CMSG_DATA(c), sizeof(int));
		if (strncmp(buf, "idmap ", 6) != 0 || fd <= 0)
			return err_set(err, EPROTO, "bad setup message from the supervisor");
		if (mounts_idmap_decode(plan, buf + 6, &i) < 0)
			return err_set(err, EPROTO, "bad idmap message from the supervisor");
		plan->ops[i].given_fd = fd;
	}
}

/* Step 5, the child's half: one "protect LINE" per PROTECT op, then
 * "protect-done". */
static int receive_protect(struct mount_plan *plan, void *arg, struct err *err)
{
	int ctl = *(int *)arg;
	char buf[INITPROTO_MAX + 1];

	for (;;) {
		ssize_t n = recv(ctl, buf, INITPROTO_MAX, 0);

		if (n <= 0)
			return err_set(err, EPIPE, "the supervisor went away during setup");
		buf[n] = '\0';
		if (strcmp(buf, "protect-done") == 0)
			return 0;
		if (strncmp(buf, "protect ", 8) != 0 || mounts_protect_decode(plan, buf + 8) < 0)
			return err_set(err, EPROTO, "bad protect message from the supervisor");
	}
}

/* Step 7: what was applied, as the child saw it, so the record says what
 * happened and not what the parent predicted (an optional source can vanish
 * between the parent's check and the child's open). */
static int report_applied(int ctl, const struct mount_plan *plan, struct err *err)
{
	char msg[INITPROTO_MAX];
	size_t i = 0;

	while (i < plan->n) {
		int n = snprintf(msg, sizeof(msg), "applied %zu ", i);
		size_t k = (size_t)n;

		for (; i < plan->n && k < sizeof(msg) - 1; i++) {
			const struct mount_op *op = &plan->ops[i];

			msg[k++] = op->skipped	    ? INITPROTO_APPLIED_SKIPPED
				   : op->as_symlink ? INITPROTO_APPLIED_SYMLINK
						    : INITPROTO_APPLIED_DONE;
		}
		if (send(ctl, msg, k, MSG_NOSIGNAL) != (ssize_t)k)
			return err_sys(err, errno, "report the applied mounts");
	}
	return 0;
}

static int enter_cwd(const char *cwd, struct err *err)
{
	int fd = sys_openat2(AT_FDCWD, cwd, O_PATH | O_DIRECTORY | O_CLOEXEC,
			     RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS);

	if (fd < 0)
		return err_sys(err, fd, "cwd %s", cwd);
	if (fchdir(fd) < 0) {
		close(fd);
		return err_sys(err, errno, "cwd %s", cwd);
	}
	close(fd);
	return 0;
}

/* Step 8b, with spec->tty: the workload's terminal is a pty of the
 * sandbox's own devpts instance (mounts/apply.c mounts one, newinstance,
 * at /dev/pts with /dev/ptmx -> pts/ptmx), never the caller's: TIOCSTI,
 * chmod or chown through it, and /dev/pts, reach only the sandbox's own
 * terminal. The master goes to the supervisor, which relays it to the
 * caller's terminal (supervisor/stdio.c); the slave becomes 0-2 and, in
 * paddock-init (--tty), the controlling terminal of the workload. */
static int open_pty(int ctl, struct err *err)
{
	union {
		char buf[CMSG_SPACE(sizeof(int))];
		struct cmsghdr align;
	} u;
	struct iovec iov = {.iov_base = "pty", .iov_len = 3};
	struct msghdr mh = {.msg_iov = &iov,
			    .msg_iovlen = 1,
			    .msg_control = u.buf,
			    .msg_controllen = sizeof(u.buf)};
	struct cmsghdr *c;
	cleanup_close int m = -1, sl = -1;

	m = open("/dev/ptmx", O_RDWR | O_NOCTTY | O_CLOEXEC);
	if (m < 0)
		return err_sys(err, errno,
			       "terminal: open /dev/ptmx in the sandbox (a policy without a "
			       "\"dev\" mount needs --no-tty)");
	if (unlockpt(m) < 0)
		return err_sys(err, errno, "terminal: unlockpt");
	/* TIOCGPTPEER opens the slave from the master itself, not by a path
	 * that could name another devpts instance. */
	sl = ioctl(m, TIOCGPTPEER, O_RDWR | O_NOCTTY | O_CLOEXEC);
	if (sl < 0)
		return err_sys(err, errno, "terminal: TIOCGPTPEER");
	memset(u.buf, 0, sizeof(u.buf));
	c = CMSG_FIRSTHDR(&mh);
	c->cmsg_level = SOL_SOCKET;
	c->cmsg_type = SCM_RIGHTS;
	c->cmsg_len = CMSG_LEN(sizeof(int));
	memcpy(CMSG_DATA(c), &m, sizeof(int));
	if (sendmsg(ctl, &mh, MSG_NOSIGNAL) < 0)
		return err_sys(err, errno, "terminal: send the pty master");
	for (int i = 0; i < 3; i++)
		if (dup2(sl, i) < 0)
			return err_sys(err, errno, "terminal: dup2");
	return 0;
}

int sandbox_recv(int ctl, char *buf, size_t size, int *fd)
{
	union {
		char b[CMSG_SPACE(sizeof(int))];
		struct cmsghdr align;
	} u;
	struct iovec iov = {.iov_base = buf, .iov_len = size - 1};
	struct msghdr mh = {
	    .msg_iov = &iov, .msg_iovlen = 1, .msg_control = u.b, .msg_controllen = sizeof(u.b)};
	struct cmsghdr *c;
	ssize_t n;

	*fd = -1;
	n = recvmsg(ctl, &mh, MSG_DONTWAIT | MSG_CMSG_CLOEXEC);
	if (n < 0)
		return -errno;
	for (c = CMSG_FIRSTHDR(&mh); c; c = CMSG_NXTHDR(&mh, c)) {
		if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS)
			continue;
		for (size_t k = 0; k < (c->cmsg_len - CMSG_LEN(0)) / sizeof(int); k++) {
			int f;

			memcpy(&f, CMSG_DATA(c) + k * sizeof(int), sizeof(int));
			if (*fd < 0)
				*fd = f;
			else
				close(f);
		}
	}
	buf[n] = '\0';
	return (int)n;
}

/* Step 9, and the same for every paddock exec command (supervisor/exec.c):
 * an ordered checklist, each step with its reason. */
int sandbox_harden(const struct sandbox_spec *s, const char *cwd, int *keep, size_t n_keep,
		   size_t n_inherit, bool apply_landlock, bool notify, struct err *err)
{
	sigset_t mask;
	int rc;

	/* The cwd is inside the new root (CVE-2024-21626 leaked a host cwd).
	 * Resolved in the root and without magic links: "/proc/self/fd/N"
	 * would otherwise follow an fd inherited from the caller out to the
	 * host, before those fds are closed below. */
	rc = enter_cwd(cwd, err);
	if (rc < 0)
		return rc;
	rc = set_rlimits(s, err);
	if (rc < 0)
		return rc;
	/* A new session without a controlling terminal: TIOCSTI into the
	 * caller's terminal is impossible (CVE-2017-5226). */
	if (s->new_session && setsid() < 0)
		return err_sys(err, errno, "setsid");
	/* Every other inherited fd goes, including ones libraries opened in
	 * the launcher (CVE-2024-21626). */
	rc = fds_keep_only(keep, n_keep, err);
	if (rc < 0)
		return rc;
	for (size_t i = 0; i < n_keep; i++) {
		keep[i] = 3 + (int)i;
		if (i >= n_inherit && fcntl(keep[i], F_SETFD, FD_CLOEXEC) < 0)
			return err_sys(err, errno, "cloexec");
	}
	/* A root caller's workload is not host root (docs/security.md, "A
	 * root caller"): we still are the caller's uid 0 (unmapped here), and
	 * change to the mapped unprivileged ids now, after the mounts (a root
	 * caller's bind sources may lie below directories only root can
	 * search) and while we still hold CAP_SETUID in the namespace. The
	 * supplementary groups went in the supervisor (setgroups is denied
	 * here). */
	if (s->root_caller) {
		pid_t parent = getppid();

		if (setresgid(s->gid_in, s->gid_in, s->gid_in) < 0 ||
		    setresuid(s->uid_in, s->uid_in, s->uid_in) < 0)
			return err_sys(err, errno, "change to uid %u gid %u", (unsigned)s->uid_in,
				       (unsigned)s->gid_in);
		/* The id change cleared the parent-death signal (prctl(2)).
		 * As PID 1 of a new namespace getppid() is 0 and tells
		 * nothing; paddock-init also sees its control socket close. */
		if (prctl(PR_SET_PDEATHSIG, SIGKILL) < 0 || getppid() != parent)
			return err_sys(err, ESRCH, "the supervisor went away during setup");
	}
	rc = caps_drop_all(err);
	log_debug("child: caps dropped");
	if (rc < 0)
		return rc;
	/* After the capabilities: nothing exec'd from here on can gain any
	 * back. Landlock and seccomp below both require it. */
	rc = caps_no_new_privs(err);
	if (rc < 0)
		return rc;
	/* Landlock needs no_new_privs (the step above) or CAP_SYS_ADMIN, and
	 * the rules are anchored on paths of the new root. */
	if (s->landlock.enabled && apply_landlock) {
		rc = landlock_apply(&s->landlock, err);
		log_debug("child: landlock applied");
		if (rc < 0)
			return rc;
	}
	/* The supervisor blocks the signals it forwards; what we exec must
	 * start with an empty mask so the workload inherits one. */
	sigemptyset(&mask);
	if (sigprocmask(SIG_SETMASK, &mask, NULL) < 0)
		return err_sys(err, errno, "sigprocmask");
	/* seccomp last: the filter would refuse the mount, namespace and
	 * capability calls above. It allows execve and execveat, the next
	 * call (and sendmsg and close, for the listener below). */
	/* The bundle's own filter first (paddock oci): paddock's, loaded
	 * after it, then holds whatever the first one allows. */
	if (s->extra_bpf) {
		rc = seccomp_apply_prog(s->extra_bpf, s->extra_bpf_len, err);
		if (rc < 0)
			return err_wrap(err, "linux.seccomp");
	}
	if (notify && s->seccomp.bpf_notify)
		return seccomp_apply_notify(&s->seccomp, keep[0], err);
	return seccomp_apply_bpf(&s->seccomp, err);
}

/* setfsuid(2) cannot fail visibly: the call returns the previous id, so
 * a second call shows whether the first took. A change of the fs ids also
 * clears the parent-death signal (prctl(2)), armed again here. */
static int fs_ids(const struct sandbox_spec *s, int ctl, struct err *err)
{
	struct pollfd pfd = {.fd = ctl, .events = POLLIN};

	setfsgid(s->gid_in);
	setfsuid(s->uid_in);
	if ((uid_t)setfsuid((uid_t)-1) != s->uid_in || (gid_t)setfsgid((gid_t)-1) != s->gid_in)
		return err_set(err, EPERM, "setfsuid %u", (unsigned)s->uid_in);
	if (prctl(PR_SET_PDEATHSIG, SIGKILL) < 0)
		return err_sys(err, errno, "PR_SET_PDEATHSIG");
	/* Armed again; a supervisor that died in between (getppid() is 0
	 * for PID 1 and tells nothing) has closed its end of the socket. */
	if (poll(&pfd, 1, 0) == 1 && (pfd.revents & POLLHUP))
		return err_set(err, EPIPE, "the supervisor went away during setup");
	return 0;
}

/* Steps 2 to 9, in the child. Never returns into the parent's code. The
 * child runs on a copy of the parent's memory: its plan is its own, and
 * what mounts_apply() learns (skipped, as_symlink) goes back in step 7. */
static int child_setup(const struct sandbox_spec *s, const struct sandbox *sb, int *ctl,
		       int *init_fd, struct err *err)
{
	const struct policy *p = s->policy;
	struct mount_plan plan = s->plan;
	int keep[5]; /* in the order of enum initproto_fd, then the memfd */
	size_t n = 0;
	int rc;

	/* Killed if the launcher dies (it holds the only handle on us). */
	if (prctl(PR_SET_PDEATHSIG, SIGKILL) < 0)
		return err_sys(err, errno, "PR_SET_PDEATHSIG");
	/* The supervisor's relay pipes instead of the caller's fds 0-2:
	 * chmod, chown, utimes or setxattr through /dev/stdin must reach no
	 * host inode (Landlock has no right for those), and nothing in the
	 * sandbox may hold the caller's terminal (supervisor/stdio.c). */
	for (int i = 0; i < 3 && !s->tty; i++)
		if (sb->stdio[i] >= 0 && dup2(sb->stdio[i], i) < 0)
			return err_sys(err, errno, "stdio: dup2");
	/* The parent writes our id maps; until then we have no usable ids. */
	rc = wait_go(*ctl, &plan, err);
	if (rc < 0)
		return rc;
	keep[n++] = *ctl; /* INITPROTO_FD_CONTROL */
	log_debug("child: go");
	/* A root caller's child is still host uid 0, which our namespace does
	 * not map: inodes it made on our tmpfs mounts would fail (EOVERFLOW).
	 * It makes them as the workload's ids instead (and is the workload's
	 * ids outright in sandbox_harden()). */
	if (s->root_caller) {
		rc = fs_ids(s, *ctl, err);
		if (rc < 0)
			return rc;
	}
	rc = mounts_apply(&plan, receive_protect, ctl, err);
	log_debug("child: mounted");
	if (rc < 0)
		return rc;
	/* Trust the kernel's mount table, not our own bookkeeping. */
	rc = mounts_verify(&plan, err);
	log_debug("child: verified");
	if (rc < 0)
		return rc;
	rc = report_applied(*ctl, &plan, err);
	if (rc < 0)
		return rc;
	/* A joined uts or network namespace is its owner's, set up by it
	 * (the pod's): this user namespace holds no capability there. */
	if ((s->namespaces & POLICY_NS_UTS) && !(s->joined & POLICY_NS_UTS) &&
	    sethostname(p->hostname, strlen(p->hostname)) < 0)
		return err_sys(err, errno, "sethostname");
	if ((s->namespaces & POLICY_NS_NET) && !(s->joined & POLICY_NS_NET)) {
		rc = net_lo_up(err);
		if (rc >= 0 && s->anyip && !s->no_routes)
			rc = net_anyip_routes(err);
		if (rc < 0)
			return rc;
	}
	log_debug("child: net up");
	/* Landlock is built here, in the new root its rules are anchored
	 * in, and enforced by paddock-init in each process it starts (step
	 * 12 of the map above). */
	if (s->landlock.enabled) {
		rc = landlock_ruleset(&s->landlock, err);
		if (rc < 0)
			return rc;
		keep[n++] = rc; /* INITPROTO_FD_LANDLOCK */
	}
	if (s->tty) {
		rc = open_pty(*ctl, err);
		if (rc < 0)
			return rc;
	}
	/* The services' output files (--service-stdout-fd, -stderr-fd). */
	if (s->svc_output) {
		keep[n++] = sb->svc_out[0];
		keep[n++] = sb->svc_out[1];
	}
	/* Only 0-2, the fds of enum initproto_fd (inherited by init) and
	 * init's memfd (close-on-exec) survive. */
	keep[n++] = s->init_fd;
	rc = sandbox_harden(s, p->cwd, keep, n, n - 1, false, true, err);
	*ctl = keep[0];
	*init_fd = keep[n - 1];
	if (rc < 0)
		return rc;
	/* init is told these numbers (sandbox_init_argv()): they must be
	 * where the keep order put them. */
	if (keep[0] != INITPROTO_FD_CONTROL ||
	    (s->landlock.enabled && keep[1] != INITPROTO_FD_LANDLOCK))
		return err_set(err, EBADF, "the fd layout differs from enum initproto_fd");
	return 0;
}

static _Noreturn void child(const struct sandbox_spec *s, const struct sandbox *sb, int ctl)
{
	struct err err = {0};
	char msg[INITPROTO_MAX];
	int init_fd = -1;
	/* Before the setup: after the seccomp filter, only the exec. */
	char **argv = sandbox_init_argv(s);

	if (!argv)
		err_set(&err, ENOMEM, "out of memory");
	else if (child_setup(s, sb, &ctl, &init_fd, &err) == 0) {
		/* Step 10. */
		fexecve(init_fd, argv, s->env);
		err_sys(&err, errno, "exec paddock-init");
	}
	if (initproto_error_format(msg, sizeof(msg), err.code, err.msg) > 0)
		(void)!send(ctl, msg, strlen(msg), MSG_NOSIGNAL);
	_exit(EXIT_LAUNCHER);
}

/* ----------------------------------------------------------- the parent */

/* Step 3 for a root caller: each writable bind as a detached tree idmapped
 * caller_uid (on disk) <-> uid_out (the workload), so the workload can
 * write the caller's workspace and what it creates there is the caller's
 * (docs/security.md, "A root caller"). */
static int send_idmapped(const struct sandbox_spec *s, int ctl, struct err *err)
{
	cleanup_close int ns = -1;

	ns = userns_idmap_fd(s->caller_uid, s->uid_out, s->caller_gid, s->gid_out, err);
	if (ns < 0)
		return ns;
	for (size_t i = 0; i < s->plan.n; i++) {
		const struct mount_op *op = &s->plan.ops[i];
		char cbuf[CMSG_SPACE(sizeof(int))] = {0}, msg[32];
		struct iovec iov = {.iov_base = msg};
		struct msghdr mh = {.msg_iov = &iov,
				    .msg_iovlen = 1,
				    .msg_control = cbuf,
				    .msg_controllen = sizeof(cbuf)};
		struct cmsghdr *c = CMSG_FIRSTHDR(&mh);
		cleanup_close int tree = -1;

		/* A symlink copied as a symlink has nothing to map. */
		if (op->kind != MOUNT_OP_BIND || op->readonly || op->skipped || op->copy_symlink)
			continue;
		tree = userns_idmapped_tree(op->source, ns, err);
		if (tree < 0)
			return err_wrap(err, "%s", op->what);
		iov.iov_len = (size_t)snprintf(msg, sizeof(msg), "idmap %zu", i);
		c->cmsg_level = SOL_SOCKET;
		c->cmsg_type = SCM_RIGHTS;
		c->cmsg_len = CMSG_LEN(sizeof(int));
		memcpy(CMSG_DATA(c), &tree, sizeof(int));
		if (sendmsg(ctl, &mh, MSG_NOSIGNAL) < 0)
			return err_sys(err, errno, "send the idmapped tree of %s", op->what);
	}
	return 0;
}

/* Step 1's joined namespaces: the parent enters each for the clone (a
 * child is born in its parent's namespaces, and CLONE_NEWUSER then makes
 * its user namespace below them; the other order, setns from inside the
 * new user namespace, would need CAP_SYS_ADMIN over the namespace's owner,
 * which that one never has), saving its own in saved[i] to come back. */
static int join_enter(const struct sandbox_spec *s, int *saved, struct err *err)
{
	for (size_t i = 0; i < s->n_join; i++) {
		const char *name = policy_ns_name(s->join[i].ns);
		char path[64];

		snprintf(path, sizeof(path), "/proc/self/ns/%s", name);
		saved[i] = open(path, O_RDONLY | O_CLOEXEC);
		if (saved[i] < 0)
			return err_sys(err, errno, "%s", path);
		/* EPERM: setns(2) wants CAP_SYS_ADMIN in the namespace's
		 * owning user namespace and in ours. */
		if (setns(s->join[i].fd, (int)sandbox_ns_flags(s->join[i].ns)) < 0)
			return err_sys(err, errno, "join the %s namespace (inode %lu)%s", name,
				       s->join[i].ino,
				       errno == EPERM ? ": needs CAP_SYS_ADMIN over its owner "
							"(a rootless caller cannot join the "
							"host's)"
						      : "");
	}
	return 0;
}

/* Back to the parent's own namespaces, in reverse order. */
static int join_leave(const struct sandbox_spec *s, int *saved, struct err *err)
{
	int rc = 0;

	for (size_t i = s->n_join; i-- > 0;) {
		if (saved[i] < 0)
			continue;
		if (setns(saved[i], 0) < 0 && rc == 0)
			rc = err_sys(err, errno, "back to our own %s namespace",
				     policy_ns_name(s->join[i].ns));
		close(saved[i]);
		saved[i] = -1;
	}
	return rc;
}

/* Step 1 and 3. */
int sandbox_start(const struct sandbox_spec *s, struct sandbox *sb, struct err *err)
{
	return sandbox_start_gated(s, sb, NULL, NULL, err);
}

int sandbox_start_gated(const struct sandbox_spec *s, struct sandbox *sb,
			int (*before_go)(struct sandbox *sb, void *arg, struct err *err), void *arg,
			struct err *err)
{
	int sv[2];
	cleanup_close int peer = -1;
	struct sys_clone_args args = {0};
	char path[64];
	struct stat st;
	int pidfd = -1, saved[SANDBOX_JOIN_MAX];
	long pid;
	int rc;

	if (s->n_join > SANDBOX_JOIN_MAX)
		return err_set(err, E2BIG, "too many namespaces to join");
	for (size_t i = 0; i < SANDBOX_JOIN_MAX; i++)
		saved[i] = -1;

	/* A root caller's groups (0 among them) would be the child's, and
	 * with setgroups denied in its namespace it could never drop them:
	 * the supervisor, which needs none of them as root, drops them first. */
	if (s->root_caller && setgroups(0, NULL) < 0)
		return err_sys(err, errno, "setgroups");
	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) < 0)
		return err_sys(err, errno, "socketpair");
	sb->ctl = sv[0];
	peer = sv[1];
	args.flags = sandbox_ns_flags(s->namespaces & ~s->joined) | CLONE_PIDFD;
	args.pidfd = (uintptr_t)&pidfd;
	/* limits.memory, .cpu, .pids (supervisor/cgroup.c): born in its own
	 * cgroup, so no process of the sandbox ever runs outside it. */
	if (sb->cgroup_fd >= 0) {
		args.flags |= CLONE_INTO_CGROUP;
		args.cgroup = (uint64_t)sb->cgroup_fd;
	}
	args.exit_signal = SIGCHLD;
	rc = join_enter(s, saved, err);
	if (rc < 0) {
		(void)join_leave(s, saved, &(struct err){0});
		return rc;
	}
	pid = sys_clone3(&args);
	if (pid == 0) {
		close(sv[0]);
		child(s, sb, peer);
	}
	rc = join_leave(s, saved, err);
	if (rc < 0 && pid > 0) {
		pidfd_send_signal(pidfd, SIGKILL, NULL, 0);
		waitid(P_PIDFD, (id_t)pidfd, &(siginfo_t){0}, WEXITED);
		close(pidfd);
		return rc;
	}
	if (pid < 0 && (pid == -ENOSPC || pid == -EPERM || pid == -EUSERS) &&
	    (args.flags & CLONE_NEWUSER))
		/* The first-run failure on many desktops: say what governs it. */
		return err_sys(
		    err, (int)pid,
		    "clone3 into new namespaces (the kernel gives this user no new user namespace: "
		    "%s; `paddock doctor` checks the settings)",
		    pid == -ENOSPC ? "user.max_user_namespaces is 0 or its limit is reached"
				   : "kernel.unprivileged_userns_clone is 0, or a security module "
				     "(AppArmor's kernel.apparmor_restrict_unprivileged_userns) "
				     "refuses it");
	if (pid < 0)
		return err_sys(err, pid, "clone3 into new namespaces");
	sb->pid = (pid_t)pid;
	sb->pidfd = pidfd;
	log_debug("cloned");
	clock_gettime(CLOCK_REALTIME, &sb->t_start);
	/* The namespaces' inodes, to find the sandbox's processes from
	 * outside afterwards. */
	snprintf(path, sizeof(path), "/proc/%ld/ns/pid", pid);
	if (stat(path, &st) == 0)
		sb->pidns = st.st_ino;
	snprintf(path, sizeof(path), "/proc/%ld/ns/user", pid);
	if (stat(path, &st) == 0) {
		sb->userns = st.st_ino;
		sb->ns_dev = st.st_dev;
	}
	/* A map for inside=outside: the caller's own uid appears as uid_in. */
	rc = userns_write_maps(sb->pid, s->uid_in, s->uid_out, s->gid_in, s->gid_out, err);
	if (rc < 0)
		return rc;
	log_debug("maps written");
	if (s->root_caller) {
		rc = send_idmapped(s, sb->ctl, err);
		if (rc < 0)
			return rc;
	}
	if (before_go) {
		rc = before_go(sb, arg, err);
		if (rc < 0)
			return rc;
	}
	if (send(sb->ctl, "go", 2, MSG_NOSIGNAL) != 2)
		return err_sys(err, errno, "release the sandbox");
	return 0;
}

/* After a failure of ours while the child was running: end it, and if it
 * had failed on its own first (it reports "error ERRNO MSG" before it
 * exits), its error is the real cause, not our broken pipe. */
static int child_failed_first(struct sandbox *sb, int rc, struct err *err)
{
	char buf[INITPROTO_MAX + 1];
	siginfo_t si = {0};
	ssize_t n;

	pidfd_send_signal(sb->pidfd, SIGKILL, NULL, 0);
	waitid(P_PIDFD, (id_t)sb->pidfd, &si, WEXITED);
	while ((n = recv(sb->ctl, buf, INITPROTO_MAX, MSG_DONTWAIT)) > 0) {
		struct err child = {0};

		buf[n] = '\0';
		if (initproto_error_parse(buf, &child) == 0)
			return err_set(err, child.code, "%s", child.msg);
	}
	return rc;
}

/* Step 5, the parent's half: the protected paths prepared while the child
 * mounts everything else. The child waits for these messages only when
 * the plan has protected paths. The plan is the spec's: this fills in the
 * PROTECT ops' host inodes (the one change to a spec after prepare). */
int sandbox_protect(const struct sandbox_spec *s, struct sandbox *sb, struct protect_state *st,
		    struct err *err)
{
	struct mount_plan plan = s->plan;
	char msg[INITPROTO_MAX];
	bool any = false;
	int rc;

	rc = mounts_protect_prepare(&plan, st, sb->pidfd, err);
	if (rc < 0)
		return child_failed_first(sb, rc, err);
	for (size_t i = 0; i < plan.n; i++) {
		if (plan.ops[i].kind != MOUNT_OP_PROTECT)
			continue;
		any = true;
		memcpy(msg, "protect ", 8);
		if (mounts_protect_encode(&plan, i, msg + 8, sizeof(msg) - 8) < 0)
			return child_failed_first(
			    sb, err_set(err, ENOSPC, "protect message too long"), err);
		if (send(sb->ctl, msg, strlen(msg), MSG_NOSIGNAL) < 0)
			return child_failed_first(sb, err_sys(err, errno, "send protect message"),
						  err);
	}
	if (any && send(sb->ctl, "protect-done", 12, MSG_NOSIGNAL) != 12)
		return child_failed_first(sb, err_sys(err, errno, "send protect message"), err);
	return 0;
}
