/* Starting the sandbox: clone3 into new namespaces with a pidfd, id maps
 * written by the parent, and the child's ordered setup ending in the exec of
 * paddock-init from a sealed memfd. */
#include "run.h"

#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/pidfd.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/sendfile.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../include/cleanup.h"
#include "../include/exitcodes.h"
#include "../include/log.h"
#include "../include/sys.h"

static int find_init(const struct options *o, char *buf, size_t size)
{
	char self[PATH_MAX];
	ssize_t n;
	char *slash;

	if (o->init_path)
		return snprintf(buf, size, "%s", o->init_path) < (int)size ? 0 : -ENAMETOOLONG;
	n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	if (n < 0)
		return -errno;
	self[n] = '\0';
	slash = strrchr(self, '/');
	if (!slash)
		return -ENOENT;
	*slash = '\0';
	/* Build tree: next to paddock. Installed: PREFIX/libexec/paddock. */
	if (snprintf(buf, size, "%s/paddock-init", self) < (int)size && access(buf, X_OK) == 0)
		return 0;
	if (snprintf(buf, size, "%s/../libexec/paddock/paddock-init", self) < (int)size &&
	    access(buf, X_OK) == 0)
		return 0;
	return -ENOENT;
}

/* paddock-init runs from a sealed memfd copy, so the sandbox's /proc/1/exe
 * points at an anonymous, unwritable file and never at a host binary that
 * could be overwritten through it (CVE-2019-5736, the runc /proc/self/exe
 * overwrite). */
int sandbox_prepare_init(struct run *r, struct err *err)
{
	char path[PATH_MAX];
	cleanup_close int src = -1, mfd = -1;
	struct stat st;
	off_t off = 0;
	int rc;

	rc = find_init(r->opt, path, sizeof(path));
	if (rc < 0)
		return err_sys(err, rc, "cannot find paddock-init (use --init PATH)");
	src = open(path, O_RDONLY | O_CLOEXEC);
	if (src < 0 || fstat(src, &st) < 0)
		return err_sys(err, errno, "open %s", path);
	mfd = memfd_create("paddock-init", MFD_CLOEXEC | MFD_ALLOW_SEALING);
	if (mfd < 0)
		return err_sys(err, errno, "memfd_create");
	while (off < st.st_size) {
		ssize_t n = sendfile(mfd, src, &off, (size_t)(st.st_size - off));

		if (n <= 0)
			return err_sys(err, n < 0 ? errno : EIO, "copy %s", path);
	}
	if (fcntl(mfd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_WRITE | F_SEAL_SEAL) < 0)
		return err_sys(err, errno, "seal the paddock-init copy");
	r->init_fd = take_fd(&mfd);
	return 0;
}

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

static int set_rlimits(const struct policy *p, struct err *err)
{
	for (int i = 0; i < POLICY_RLIMIT_COUNT; i++) {
		struct rlimit rl;

		if (!p->rlimits[i].set)
			continue;
		rl.rlim_cur = rl.rlim_max =
		    p->rlimits[i].value == POLICY_UNLIMITED ? RLIM_INFINITY : p->rlimits[i].value;
		/* Hard and soft together: the workload may lower, never raise. */
		if (setrlimit(rlimit_res[i], &rl) < 0)
			return err_sys(err, errno, "setrlimit %s", policy_rlimit_name(i));
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

/* The protected paths, prepared by the supervisor while we mount the rest:
 * one "protect LINE" per PROTECT op, then "protect-done". */
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

static int wait_go(int ctl, struct err *err)
{
	char buf[8];
	ssize_t n = recv(ctl, buf, sizeof(buf), 0);

	if (n != 2 || memcmp(buf, "go", 2) != 0)
		return err_set(err, EPIPE, "the supervisor went away during setup");
	return 0;
}

/* The child, in its new namespaces. An ordered checklist; each step says
 * why it is where it is. Never returns into the parent's code. */
static int child_setup(struct run *r, int *ctl, struct err *err)
{
	const struct policy *p = r->policy;
	int keep[3];
	size_t n = 0;
	int rc;

	/* Killed if the launcher dies (it holds the only handle on us). */
	if (prctl(PR_SET_PDEATHSIG, SIGKILL) < 0)
		return err_sys(err, errno, "PR_SET_PDEATHSIG");
	/* The parent writes our id maps; until then we have no usable ids. */
	rc = wait_go(*ctl, err);
	if (rc < 0)
		return rc;
	keep[n++] = *ctl;
	log_debug("child: go");
	rc = mounts_apply(&r->plan, receive_protect, ctl, err);
	log_debug("child: mounted");
	if (rc < 0)
		return rc;
	/* Trust the kernel's mount table, not our own bookkeeping. */
	rc = mounts_verify(&r->plan, err);
	log_debug("child: verified");
	if (rc < 0)
		return rc;
	if ((r->namespaces & POLICY_NS_UTS) && sethostname(p->hostname, strlen(p->hostname)) < 0)
		return err_sys(err, errno, "sethostname");
	if (r->namespaces & POLICY_NS_NET) {
		rc = net_lo_up(err);
		if (rc < 0)
			return rc;
	}
	log_debug("child: net up");
	/* Landlock is built here, in the new root its rules are anchored
	 * in, and enforced by paddock-init in each process it starts (the
	 * workload, the services), not on init itself: a domain-less init
	 * can signal every process of the sandbox, paddock exec's included,
	 * which have domains of their own (signal scoping, ABI 6), while
	 * none of them can signal init. */
	if (r->landlock.enabled) {
		rc = landlock_ruleset(&r->landlock, err);
		if (rc < 0)
			return rc;
		keep[n++] = rc;
	}
	/* Only 0-2, the control socket (init's fd 3), the ruleset (fd 4,
	 * with Landlock) and init's memfd (close-on-exec) survive. */
	keep[n++] = r->init_fd;
	rc = sandbox_harden(r, p->cwd, keep, n, n - 1, false, err);
	*ctl = keep[0];
	return rc;
}

/* The same for the workload's init and for every paddock exec command
 * (exec.c): an ordered checklist, each step with its reason. */
int sandbox_harden(const struct run *r, const char *cwd, int *keep, size_t n_keep, size_t n_inherit,
		   bool apply_landlock, struct err *err)
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
	rc = set_rlimits(r->policy, err);
	if (rc < 0)
		return rc;
	/* A new session without a controlling terminal: TIOCSTI into the
	 * caller's terminal is impossible (CVE-2017-5226). */
	if (!(r->opt->weaken & WEAKEN_NO_NEW_SESSION) && setsid() < 0)
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
	rc = caps_drop_all(err);
	log_debug("child: caps dropped");
	if (rc < 0)
		return rc;
	/* Landlock needs no_new_privs (set above) or CAP_SYS_ADMIN, and the
	 * rules are anchored on paths of the new root. */
	if (r->landlock.enabled && apply_landlock) {
		rc = landlock_apply(&r->landlock, err);
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
	 * call. */
	return seccomp_apply_bpf(&r->seccomp_info, err);
}

/* paddock-init's argv: its options, each service as "--service NAME
 * LEASE_MS ARGC ARG...", then "--" and the workload. Heap: we are a copy
 * of the launcher after clone3, and exec next. */
static char **init_argv(const struct run *r)
{
	const struct policy *p = r->policy;
	size_t n = 0, total = 10, i;
	char **argv;

	for (i = 0; r->opt->argv[i]; i++)
		total++;
	for (size_t k = 0; k < p->n_services; k++)
		total += 4 + p->services[k].argc;
	argv = calloc(total, sizeof(*argv));
	if (!argv)
		return NULL;
	argv[n++] = "paddock-init";
	argv[n++] = "--control-fd";
	argv[n++] = "3";
	argv[n++] = "--grace";
	if (asprintf(&argv[n++], "%llu", (unsigned long long)p->grace_ms) < 0)
		return NULL;
	if (r->landlock.enabled) {
		argv[n++] = "--landlock-fd";
		argv[n++] = "4"; /* child_setup()'s order */
	}
	for (size_t k = 0; k < p->n_services; k++) {
		const struct policy_service *sv = &p->services[k];

		argv[n++] = "--service";
		argv[n++] = sv->name;
		if (asprintf(&argv[n++], "%llu", (unsigned long long)sv->lease_ms) < 0 ||
		    asprintf(&argv[n++], "%zu", sv->argc) < 0)
			return NULL;
		for (size_t j = 0; j < sv->argc; j++)
			argv[n++] = sv->argv[j];
	}
	argv[n++] = "--";
	for (i = 0; r->opt->argv[i]; i++)
		argv[n++] = r->opt->argv[i];
	return argv;
}

static void child(struct run *r, int ctl)
{
	struct err err = {0};
	char msg[INITPROTO_MAX];
	/* Before the setup: after the seccomp filter, only the exec. */
	char **argv = init_argv(r);

	if (!argv)
		err_set(&err, ENOMEM, "out of memory");
	else if (child_setup(r, &ctl, &err) == 0) {
		fexecve(r->landlock.enabled ? 5 : 4, argv, r->env);
		err_sys(&err, errno, "exec paddock-init");
	}
	/* A longer message is cut to one protocol packet. */
	if (snprintf(msg, sizeof(msg), "error %s", err.msg) >= 0)
		(void)!send(ctl, msg, strlen(msg), MSG_NOSIGNAL);
	_exit(EXIT_LAUNCHER);
}

/* A map for inside=outside: the caller's own uid appears as uid_in. */
int sandbox_start(struct run *r, struct err *err)
{
	int sv[2];
	cleanup_close int peer = -1;
	struct sys_clone_args args = {0};
	int pidfd = -1;
	long pid;
	int rc;

	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) < 0)
		return err_sys(err, errno, "socketpair");
	r->ctl = sv[0];
	peer = sv[1];
	args.flags = sandbox_ns_flags(r->namespaces) | CLONE_PIDFD;
	args.pidfd = (uintptr_t)&pidfd;
	args.exit_signal = SIGCHLD;
	pid = sys_clone3(&args);
	if (pid < 0)
		return err_sys(err, pid, "clone3 into new namespaces");
	if (pid == 0) {
		close(sv[0]);
		child(r, peer);
	}
	r->pid = (pid_t)pid;
	r->pidfd = pidfd;
	log_debug("cloned");
	clock_gettime(CLOCK_REALTIME, &r->t_start);
	{
		char path[64];
		struct stat st;

		snprintf(path, sizeof(path), "/proc/%ld/ns/pid", pid);
		if (stat(path, &st) == 0)
			r->pidns = st.st_ino;
		snprintf(path, sizeof(path), "/proc/%ld/ns/user", pid);
		if (stat(path, &st) == 0) {
			r->userns = st.st_ino;
			r->ns_dev = st.st_dev;
		}
	}
	rc = userns_write_maps(r->pid, r->uid_in, r->uid_out, r->gid_in, r->gid_out, err);
	if (rc < 0)
		return rc;
	log_debug("maps written");
	if (send(r->ctl, "go", 2, MSG_NOSIGNAL) != 2)
		return err_sys(err, errno, "release the sandbox");
	return 0;
}

/* After a failure of ours while the child was running: end it, and if it
 * had failed on its own first (it reports "error MSG" before it exits),
 * its message is the real cause, not our broken pipe. */
static int child_failed_first(struct run *r, int rc, struct err *err)
{
	char buf[INITPROTO_MAX + 1];
	siginfo_t si = {0};
	ssize_t n;

	pidfd_send_signal(r->pidfd, SIGKILL, NULL, 0);
	waitid(P_PIDFD, (id_t)r->pidfd, &si, WEXITED);
	while ((n = recv(r->ctl, buf, INITPROTO_MAX, MSG_DONTWAIT)) > 0) {
		buf[n] = '\0';
		if (strncmp(buf, "error ", 6) == 0)
			return err_set(err, EIO, "%s", buf + 6);
	}
	return rc;
}

/* Prepare the protected paths (placeholders, locks) while the child mounts
 * everything else, then hand it what it needs to mount them. The child
 * waits for these messages only when the plan has protected paths. */
int sandbox_protect(struct run *r, struct err *err)
{
	char msg[INITPROTO_MAX];
	bool any = false;
	int rc;

	rc = mounts_protect_prepare(&r->plan, &r->protect, err);
	if (rc < 0)
		return child_failed_first(r, rc, err);
	for (size_t i = 0; i < r->plan.n; i++) {
		if (r->plan.ops[i].kind != MOUNT_OP_PROTECT)
			continue;
		any = true;
		memcpy(msg, "protect ", 8);
		if (mounts_protect_encode(&r->plan, i, msg + 8, sizeof(msg) - 8) < 0)
			return child_failed_first(
			    r, err_set(err, ENOSPC, "protect message too long"), err);
		if (send(r->ctl, msg, strlen(msg), MSG_NOSIGNAL) < 0)
			return child_failed_first(r, err_sys(err, errno, "send protect message"),
						  err);
	}
	if (any && send(r->ctl, "protect-done", 12, MSG_NOSIGNAL) != 12)
		return child_failed_first(r, err_sys(err, errno, "send protect message"), err);
	return 0;
}
