/* paddock exec, the supervisor's side: a command run in a live session.
 *
 * The command is started by a spare helper (exec_helper.c) made before the
 * request: the supervisor forks once, and that child forks the spare and
 * exits at once (the supervisor reaps only its own child by pid, never
 * waitpid(-1), which could take paddock-init's status from the pidfd
 * wait, and the spare is nobody's zombie of ours). The spare joins the
 * sandbox's namespaces and forks the command's process, which hardens
 * itself as the workload is hardened and waits. A request is checked here
 * (refusal()), then handed to the spare on its channel with the client's
 * socket and stdio; the next spare is made after that, while the command
 * runs, so that the next request finds one ready. The first request of a
 * session waits for its spare to be made.
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
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../../include/cleanup.h"
#include "../../include/log.h"

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

/* A spare helper for the next request: r->live.exec_spare, or -errno. */
static int spare_start(struct run *r)
{
	int sv[2], ws;
	pid_t pid;

	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) < 0)
		return -errno;
	pid = fork();
	if (pid < 0) {
		close(sv[0]);
		close(sv[1]);
		return -errno;
	}
	if (pid == 0) {
		/* The spare's parent exits at once: the spare is reparented
		 * away from the supervisor (to the host's init or subreaper),
		 * which reaps it; the supervisor never has to. */
		close(sv[0]);
		if (fork() == 0)
			exec_helper(r, sv[1]);
		_exit(0);
	}
	close(sv[1]);
	while (waitpid(pid, &ws, 0) < 0 && errno == EINTR)
		;
	r->live.exec_spare = sv[0];
	return 0;
}

/* The request to the spare, which takes it (our end is closed): 0, or
 * -errno (-EPIPE: the spare is gone). */
static int dispatch(struct run *r, int fd, const struct session_exec *x)
{
	cleanup_free char *pkt = NULL;
	struct err err = {0};
	size_t len = 0;
	int rc = session_exec_encode(x->cwd, x->env, x->n_env, x->argv, x->tty, &pkt, &len, &err);

	if (rc >= 0)
		rc = exec_send_fds(r->live.exec_spare, pkt, len,
				   (int[EXEC_FDS]){fd, x->stdio[0], x->stdio[1], x->stdio[2]});
	close(r->live.exec_spare);
	r->live.exec_spare = -1;
	return rc;
}

void exec_spawn(struct run *r, int fd, struct session_exec *req)
{
	char why[160];
	const char *no = r->live.session ? refusal(r, req, why, sizeof(why)) : "no session";
	int rc = 0;

	log_debug("exec: request");
	if (!no && !r->live.exec_end_open) {
		if (pipe2(r->live.exec_end, O_CLOEXEC) < 0)
			no = strerror(errno);
		else
			r->live.exec_end_open = true;
	}
	/* A spare that is gone (killed, or the sandbox ended) is replaced
	 * once. */
	for (int tries = 0; !no && tries < 2; tries++) {
		rc = r->live.exec_spare >= 0 ? 0 : spare_start(r);
		if (rc >= 0)
			rc = dispatch(r, fd, req);
		if (rc != -EPIPE && rc != -ECONNREFUSED)
			break;
	}
	if (no)
		exec_reply(fd, "error %s", no);
	else if (rc < 0)
		exec_reply(fd, "error exec helper: %s", strerror(-rc));
	else
		(void)spare_start(r); /* the next request's, made while this one runs */
	close(fd);
	session_exec_free(req);
}
