/* The one way into a running sandbox from outside: the paddock exec helper
 * and the port relay join through here (setns(2) on the pidfd of its PID 1),
 * and the detached supervisor takes the same fd and process steps without
 * a join. The order and its reasons are in sandbox.h; each step says why
 * here. */
#include "sandbox.h"

#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <sys/prctl.h>
#include <unistd.h>

/* Die with parent, and make sure it is still there: a parent that died
 * before PR_SET_PDEATHSIG would never send the signal. */
static int die_with(pid_t parent, struct err *err)
{
	if (parent <= 0)
		return 0;
	if (prctl(PR_SET_PDEATHSIG, SIGKILL) < 0)
		return err_sys(err, errno, "PR_SET_PDEATHSIG");
	if (getppid() != parent)
		return err_set(err, ESRCH, "the supervisor is gone");
	return 0;
}

/* Not dumpable: we hold fds of the host (a client's socket and stdio, the
 * listeners) and, after setns, sit in the sandbox's user namespace with
 * its uid. ptrace(2), /proc/PID/fd and /proc/PID/exe of a non-dumpable
 * process need CAP_SYS_PTRACE in the user namespace of its mm, which no
 * sandbox process has (CVE-2019-5736, CVE-2016-9962). A process we fork
 * inherits this until its execve. */
static int not_dumpable(unsigned flags, struct err *err)
{
	if (!(flags & SANDBOX_JOIN_NOT_DUMPABLE))
		return 0;
	if (prctl(PR_SET_DUMPABLE, 0) < 0)
		return err_sys(err, errno, "PR_SET_DUMPABLE");
	return 0;
}

static int stdio(const struct sandbox_join *j, int first_free, struct err *err)
{
	int null;

	if (j->flags & SANDBOX_JOIN_STDIO_LAST3) {
		/* The caller's own stdio (a paddock exec client's, by
		 * SCM_RIGHTS): the last three kept fds, onto 0-2. */
		for (int i = 0; i < 3; i++) {
			if (dup2(first_free - 3 + i, i) < 0)
				return err_sys(err, errno, "dup2");
			close(first_free - 3 + i);
		}
		return first_free - 3;
	}
	if (!(j->flags & (SANDBOX_JOIN_NULL_STDIO | SANDBOX_JOIN_NULL_STDIN)))
		return first_free;
	/* Nor the caller's terminal or the session's output files. */
	null = open("/dev/null", O_RDWR | O_CLOEXEC);
	if (null < 0 || dup2(null, 0) < 0)
		return err_sys(err, errno, "/dev/null");
	if ((j->flags & SANDBOX_JOIN_NULL_STDIO) && (dup2(null, 1) < 0 || dup2(null, 2) < 0))
		return err_sys(err, errno, "/dev/null");
	close(null);
	return first_free;
}

int sandbox_join(const struct sandbox_join *j, struct err *err)
{
	int keep[j->n_keep + 1];
	size_t n = 0;
	int rc, next, pidfd = -1;

	rc = die_with(j->parent, err);
	if (rc < 0)
		return rc;
	rc = not_dumpable(j->flags, err);
	if (rc < 0)
		return rc;
	/* Nothing else of the supervisor's may reach the sandbox or the
	 * helper: its registry, policy and record fds, the control sockets,
	 * other clients (CVE-2024-21626). */
	for (; n < j->n_keep; n++)
		keep[n] = j->keep[n];
	if (j->pidfd >= 0)
		keep[n++] = j->pidfd;
	rc = fds_keep_only(keep, n, err);
	if (rc < 0)
		return rc;
	if (j->pidfd >= 0)
		pidfd = 3 + (int)j->n_keep;
	next = stdio(j, 3 + (int)j->n_keep, err);
	if (next < 0)
		return next;
	for (size_t i = 0; i < j->n_keep; i++) {
		j->keep[i] = 3 + (int)i;
		if (j->keep[i] >= next)
			j->keep[i] = -1; /* moved onto 0-2 */
		else if (i >= j->n_inherit && fcntl(j->keep[i], F_SETFD, FD_CLOEXEC) < 0)
			return err_sys(err, errno, "cloexec");
	}
	if (pidfd < 0)
		return 0;
	/* Exactly the sandbox's namespaces, through the pidfd of its PID 1
	 * (5.8+): the kernel joins the user namespace first, so the rest is
	 * joined with the capabilities we hold there as its owner (an
	 * unprivileged caller's own namespace: user_namespaces(7)). The pid
	 * namespace applies to our children only. */
	if (setns(pidfd, j->nstypes) < 0)
		return err_sys(err, errno, "setns into the sandbox");
	close(pidfd);
	/* The join changed our credentials (a full capability set in the
	 * sandbox's user namespace), and commit_creds() resets both the
	 * dumpable flag (to fs.suid_dumpable) and the parent-death signal:
	 * set them again. */
	rc = not_dumpable(j->flags, err);
	if (rc >= 0)
		rc = die_with(j->parent, err);
	if (rc < 0)
		return rc;
	/* The capabilities the join gave are not needed by a relay. */
	if (j->flags & SANDBOX_JOIN_DROP_CAPS) {
		rc = caps_drop_all(err);
		if (rc >= 0)
			rc = caps_no_new_privs(err);
		if (rc < 0)
			return rc;
	}
	/* setns(CLONE_NEWNS) put our root and cwd at the sandbox's root;
	 * sandbox_harden() resolves a cwd from there (RESOLVE_IN_ROOT). */
	if ((j->nstypes & CLONE_NEWNS) && chdir("/") < 0)
		return err_sys(err, errno, "chdir /");
	return 0;
}
