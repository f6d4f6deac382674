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
 * Seccomp listeners: an exec'd command's filter is the workload's program
 * with a listener of its own (exec_helper.c), which comes up the spare's
 * channel before the spare takes a request; the supervise loop serves it
 * with the workload's handlers (denials.c, notice.c), sends the lines for
 * the client back on that channel while the command runs, and closes the
 * listener once no process is left on its filter (POLLHUP).
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

bool exec_listener_expected(const struct run *r)
{
	/* --weaken exec-unhardened loads no filter at all; exec-plain-seccomp
	 * the policy's program without the notice's prefix, as before an
	 * exec'd command had a listener. */
	return r->spec->sb.seccomp.bpf_notify &&
	       !(r->spec->opt->weaken & (WEAKEN_EXEC_UNHARDENED | WEAKEN_EXEC_PLAIN_SECCOMP));
}

static struct exec_listener *slot_free(struct run *r)
{
	for (size_t i = 0; i < EXEC_LISTENERS_MAX; i++) {
		struct exec_listener *l = &r->live.exec_listeners.l[i];

		if (l->chan < 0 && l->fd < 0)
			return l;
	}
	return NULL;
}

static struct exec_listener *slot_of_chan(struct run *r, int chan)
{
	for (size_t i = 0; chan >= 0 && i < EXEC_LISTENERS_MAX; i++)
		if (r->live.exec_listeners.l[i].chan == chan)
			return &r->live.exec_listeners.l[i];
	return NULL;
}

static void close_chan(struct run *r, struct exec_listener *l)
{
	if (r->live.exec_spare == l->chan)
		r->live.exec_spare = -1;
	close(l->chan);
	l->chan = -1;
}

/* A spare helper for the next request: r->live.exec_spare, or -errno
 * (-EMFILE: every listener slot is taken). With a listener to come, the
 * channel is a slot's, polled until the listener is here. */
static int spare_start(struct run *r)
{
	struct exec_listener *l = NULL;
	int sv[2], ws;
	pid_t pid;

	if (exec_listener_expected(r) && !(l = slot_free(r)))
		return -EMFILE;
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
	if (l)
		*l = (struct exec_listener){.chan = sv[0], .fd = -1, .sink = {.chan = -1}};
	return 0;
}

/* The request to the spare, which takes it: 0, or -errno (-EPIPE: the
 * spare is gone). Our end of its channel is closed, or kept by its slot
 * for the listener still to come and the lines for the client. */
static int dispatch(struct run *r, int fd, const struct session_exec *x)
{
	cleanup_free char *pkt = NULL;
	struct err err = {0};
	struct exec_listener *l = slot_of_chan(r, r->live.exec_spare);
	size_t len = 0;
	int rc = session_exec_encode(x->cwd, x->env, x->n_env, x->argv, x->tty, &pkt, &len, &err);

	if (rc >= 0)
		rc = exec_send_fds(r->live.exec_spare, pkt, len,
				   (int[EXEC_FDS]){fd, x->stdio[0], x->stdio[1], x->stdio[2]},
				   EXEC_FDS);
	if (l && rc >= 0)
		l->taken = true;
	else if (l)
		close_chan(r, l);
	else
		close(r->live.exec_spare);
	r->live.exec_spare = -1;
	return rc;
}

/* ------------------------------------------------------------ listeners */

size_t exec_pollfds(struct run *r, struct pollfd *pfd)
{
	struct exec_listeners *x = &r->live.exec_listeners;
	size_t n = 0;

	x->n_poll = 0;
	for (size_t i = 0; i < EXEC_LISTENERS_MAX; i++) {
		const struct exec_listener *l = &x->l[i];

		if (l->chan < 0 && l->fd < 0)
			continue;
		x->slot[x->n_poll++] = (unsigned char)i;
		/* The channel: the listener's packet while it is to come,
		 * else only its hang-up (POLLHUP needs no events). */
		pfd[n++] = (struct pollfd){.fd = l->chan, .events = l->fd < 0 ? POLLIN : 0};
		pfd[n++] = (struct pollfd){.fd = l->fd, .events = POLLIN};
	}
	return n;
}

/* The spare's one packet: "seccomp-notify" with the listener (anything
 * else is dropped: only the spare writes here). */
static void take_listener(struct run *r, struct exec_listener *l)
{
	char buf[32];
	int fd = -1;
	int n = sandbox_recv(l->chan, buf, sizeof(buf), &fd);

	if (n == -EAGAIN || n == -EINTR)
		return;
	if (n > 0 && fd >= 0 && strcmp(buf, "seccomp-notify") == 0 && l->fd < 0) {
		l->fd = fd;
		denials_listener_sync(fd);
		r->live.exec_listeners.served++;
		return;
	}
	if (fd >= 0)
		close(fd);
	/* EOF or a stray packet: the spare is gone, or is no spare. */
	if (n <= 0)
		close_chan(r, l);
}

void exec_serve(struct run *r, const struct pollfd *pfd, size_t n)
{
	struct exec_listeners *x = &r->live.exec_listeners;

	for (size_t k = 0; k < x->n_poll && 2 * k + 1 < n; k++) {
		struct exec_listener *l = &x->l[x->slot[k]];
		const struct pollfd *c = &pfd[2 * k];
		short ev = pfd[2 * k + 1].revents;

		if (l->chan >= 0 && (c->revents & POLLIN) && l->fd < 0)
			take_listener(r, l);
		else if (l->chan >= 0 && c->revents)
			/* The spare is gone: before a request, the next one
			 * makes another; after it, its command has ended
			 * (what it left may go on, on the listener). */
			close_chan(r, l);
		/* The client's stderr through its spare while the command
		 * runs; afterwards (what it left) the session's. */
		l->sink.chan = l->taken ? l->chan : -1;
		if (l->fd >= 0 && (ev & POLLIN) && !denials_serve(r, l->fd, &l->sink))
			ev = POLLERR;
		/* POLLHUP: no process is left on the filter. Closed and
		 * forgotten, so that many execs do not add up. */
		if (l->fd >= 0 && (ev & (POLLERR | POLLHUP | POLLNVAL))) {
			close(l->fd);
			l->fd = -1;
		}
	}
}

void exec_listeners_close(struct run_live *live)
{
	for (size_t i = 0; i < EXEC_LISTENERS_MAX; i++) {
		struct exec_listener *l = &live->exec_listeners.l[i];

		if (l->chan >= 0 && l->chan == live->exec_spare)
			live->exec_spare = -1;
		if (l->chan >= 0)
			close(l->chan);
		if (l->fd >= 0)
			close(l->fd);
		*l = (struct exec_listener){.chan = -1, .fd = -1};
	}
}

void exec_spawn(struct run *r, int fd, struct session_exec *req)
{
	char why[160];
	const char *no = r->live.session ? refusal(r, req, why, sizeof(why)) : "no session";
	int rc = 0;

	log_debug("exec: request");
	/* Every exec'd command (and what it left running) holds a listener
	 * we serve: a bound on them, said in one line. */
	if (!no && r->live.exec_spare < 0 && exec_listener_expected(r) && !slot_free(r)) {
		snprintf(why, sizeof(why),
			 "session %s: %d exec'd commands, or processes they left, still run; one "
			 "must end first",
			 r->live.session->info.id, EXEC_LISTENERS_MAX);
		no = why;
	}
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
