/* paddock exec, the supervisor's side: a command run in a live session.
 *
 * The command is a fork of the session's zygote (exec_helper.c), a process
 * of the sandbox hardened once as the workload is, made at the first
 * request with its keeper: the supervisor forks once, and that child forks
 * the keeper and exits at once (the supervisor reaps only its own child by
 * pid, never waitpid(-1), which could take paddock-init's status from the
 * pidfd wait, and the helpers are nobody's zombies of ours). The keeper
 * joins the sandbox's namespaces and clones the zygote, which hardens
 * itself; the supervisor waits for its "ready" (and its seccomp listener)
 * before it sends it anything. Each request goes to a relay, forked the
 * same way and joined, made ahead (the spare): a request is checked here
 * (refusal()), then handed to the spare with the client's socket and stdio
 * and the zygote's request channel; the relay makes the command's stdio,
 * the zygote forks the command. The next spare is made after the
 * hand-over, while the command runs, so that the next request finds one
 * ready. The first request of a session waits for the zygote and its
 * spare.
 *
 * Seccomp listener: the zygote's filter is the workload's program with a
 * listener of its own, which comes up the keeper's channel before the
 * zygote is ready; every command (a fork) is on it. The supervise loop
 * serves it with the workload's handlers (denials.c, notice.c), and sends
 * the lines about a call to the relay of the command it belongs to
 * (exec_sink(): by its session, which is the command's own), which writes
 * them to its client's stderr; what no running command owns (a leftover
 * in a session of its own) goes to the session's stderr. A listener is
 * closed once no process is left on its filter (POLLHUP).
 *
 * Lifetime: the command is a process of the session. When the session
 * starts to end (stop, TTL, the main command done) the supervisor closes
 * the pipe every helper watches, and each relay has the zygote send its
 * command SIGTERM (paddock-init's own SIGTERM does not reach it: the
 * zygote and its commands have a Landlock domain of their own, and signal
 * scoping, ABI 6, keeps one domain from signalling another's processes).
 * The exit of paddock-init at the end of the grace period kills whatever
 * is left in the pid namespace, the zygote and the commands' descendants
 * included (pid_namespaces(7)); the client then learns "signal 15" or
 * "signal 9" (exit 143 or 137). When the client goes away (its socket
 * hangs up) the command is SIGKILLed: nothing outlives its owner (docker
 * exec lets it run on). When a command ends the zygote kills what is left
 * in its process group before it reaps it.
 *
 * Stdio: the command never gets the client's fds (which arrive by
 * SCM_RIGHTS and stay in the relay): pipes, or with -t a pty of the
 * sandbox's devpts, relayed by the relay (stdio.c's relay) until the
 * command ends; then the relay closes, so a leftover child of the command
 * can read nothing more from the client's terminal. */
#include "run.h"

#include <fcntl.h>
#include <poll.h>
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

/* The zygote's keeper (exec_keeper()), forked twice: our child forks it
 * and exits at once, so that the keeper is reparented away from us; we
 * reap only our child. */
static int keeper_fork(struct run *r, int chan, int zreq)
{
	int ws;
	pid_t pid = fork();

	if (pid < 0)
		return -errno;
	if (pid == 0) {
		if (fork() == 0)
			exec_keeper(r, chan, zreq);
		_exit(0);
	}
	while (waitpid(pid, &ws, 0) < 0 && errno == EINTR)
		;
	return 0;
}

static void relay_free(struct run *r, struct exec_relay *l)
{
	struct exec_state *x = &r->live.exec;

	if (x->spare >= 0 && &x->relay[x->spare] == l)
		x->spare = -1;
	if (l->chan >= 0)
		close(l->chan);
	*l = (struct exec_relay){.chan = -1, .sink = {.chan = -1}};
}

/* A relay the keeper made ("relay" + its channel) into a free slot, as
 * the spare; none free: closed (it exits). */
static void relay_take(struct run *r, int fd)
{
	struct exec_state *x = &r->live.exec;
	size_t i;

	x->asked = false;
	for (i = 0; i < EXEC_RELAYS_MAX && x->relay[i].chan >= 0; i++)
		;
	if (i == EXEC_RELAYS_MAX || x->spare >= 0) {
		close(fd);
		return;
	}
	x->relay[i] = (struct exec_relay){.chan = fd, .sink = {.chan = -1}};
	x->spare = (int)i;
}

/* One message of the keeper's after "ready": "relay" with a relay's
 * channel. false: the keeper is gone (and the zygote with it). */
static bool keeper_serve(struct run *r)
{
	struct exec_state *x = &r->live.exec;
	char buf[16];
	int fd = -1, n = sandbox_recv(x->zkeep, buf, sizeof(buf), &fd);

	if (n == -EAGAIN || n == -EINTR)
		return true;
	if (n > 0 && fd >= 0 && strcmp(buf, "relay") == 0) {
		relay_take(r, fd);
		return true;
	}
	if (fd >= 0)
		close(fd);
	return n > 0;
}

/* Ask the keeper for the next request's relay (once: its answer comes on
 * the keeper's channel, keeper_serve()). wait: until it is here (at most
 * 5 s): 0, or -errno. */
static int spare_start(struct run *r, bool wait)
{
	struct exec_state *x = &r->live.exec;

	if (x->spare >= 0)
		return 0;
	if (x->zkeep < 0)
		return -EPIPE;
	if (!x->asked) {
		if (send(x->zkeep, "spare", 5, MSG_NOSIGNAL) < 0)
			return -errno;
		x->asked = true;
	}
	while (wait && x->spare < 0) {
		struct pollfd p = {.fd = x->zkeep, .events = POLLIN};

		if (poll(&p, 1, 5000) <= 0)
			return -ETIMEDOUT;
		if (!keeper_serve(r))
			return -EPIPE;
	}
	return 0;
}

static void zygote_gone(struct exec_state *x)
{
	if (x->zkeep >= 0)
		close(x->zkeep);
	if (x->zreq >= 0)
		close(x->zreq);
	x->zkeep = x->zreq = -1;
	x->asked = false;
}

/* The session's zygote, made once and again when it is gone (killed, or
 * its keeper): 0 once it is ready, with its listener taken, or -errno
 * with why in err. Waits for it (at most 10 s): only the first request
 * of a session, or the first after a zygote ended, pays for this. */
static int zygote_start(struct run *r, struct err *err)
{
	struct exec_state *x = &r->live.exec;
	int kv[2], qv[2], rc;
	struct pollfd p;

	if (x->zkeep >= 0) {
		/* Gone since we looked (its keeper's hang-up not read yet)?
		 * What it sent (a relay) is taken on the way. */
		p = (struct pollfd){.fd = x->zkeep, .events = POLLIN};
		while (x->zkeep >= 0 && poll(&p, 1, 0) == 1)
			if (!keeper_serve(r))
				zygote_gone(x);
		if (x->zkeep >= 0)
			return 0;
	}
	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, kv) < 0)
		return err_sys(err, errno, "socketpair");
	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, qv) < 0) {
		close(kv[0]);
		close(kv[1]);
		return err_sys(err, errno, "socketpair");
	}
	rc = keeper_fork(r, kv[1], qv[1]);
	close(kv[1]);
	close(qv[1]);
	x->zkeep = kv[0];
	x->zreq = qv[0];
	if (rc < 0) {
		zygote_gone(x);
		return err_sys(err, -rc, "fork");
	}
	for (;;) {
		char buf[sizeof(err->msg) + 16];
		int fd = -1, n;

		p = (struct pollfd){.fd = x->zkeep, .events = POLLIN};
		if (poll(&p, 1, 10000) <= 0) {
			zygote_gone(x);
			return err_set(err, ETIMEDOUT, "exec: the session's zygote did not start");
		}
		n = sandbox_recv(x->zkeep, buf, sizeof(buf), &fd);
		if (n == -EAGAIN || n == -EINTR)
			continue;
		if (n > 0 && fd >= 0 && strcmp(buf, "seccomp-notify") == 0) {
			size_t i;

			for (i = 0; i < EXEC_LISTENERS_MAX && x->listener[i] >= 0; i++)
				;
			if (i == EXEC_LISTENERS_MAX) {
				/* The oldest goes: what was left on it fails
				 * its calls with ENOSYS from now on. */
				close(x->listener[0]);
				memmove(x->listener, x->listener + 1,
					sizeof(x->listener) - sizeof(x->listener[0]));
				i = EXEC_LISTENERS_MAX - 1;
			}
			x->listener[i] = fd;
			denials_listener_sync(fd);
			continue;
		}
		if (fd >= 0)
			close(fd);
		if (n > 0 && strcmp(buf, "ready") == 0) {
			log_debug("exec: the zygote is ready");
			return 0;
		}
		zygote_gone(x);
		if (n > 6 && strncmp(buf, "error ", 6) == 0)
			return err_set(err, EPROTO, "%s", buf + 6);
		return err_set(err, EPIPE, "exec: the session's zygote ended before it was ready");
	}
}

/* The request to the spare, which takes it: 0, or -errno (-EPIPE: the
 * spare is gone). */
static int dispatch(struct run *r, int fd, const struct session_exec *req)
{
	struct exec_state *x = &r->live.exec;
	struct exec_relay *l = &x->relay[x->spare];
	cleanup_free char *pkt = NULL;
	struct err err = {0};
	size_t len = 0;
	int rc = session_exec_encode(req->cwd, req->env, req->n_env, req->argv, req->tty, &pkt,
				     &len, &err);

	if (rc >= 0)
		rc = exec_send_fds(
		    l->chan, pkt, len,
		    (int[EXEC_FDS]){fd, req->stdio[0], req->stdio[1], req->stdio[2], x->zreq},
		    EXEC_FDS);
	x->spare = -1;
	if (rc < 0) {
		relay_free(r, l);
		return rc;
	}
	l->taken = true;
	l->sink = (struct denials_sink){.chan = l->chan};
	return 0;
}

void exec_spawn(struct run *r, int fd, struct session_exec *req)
{
	struct exec_state *x = &r->live.exec;
	struct err err = {0};
	char why[160];
	const char *no = r->live.session ? refusal(r, req, why, sizeof(why)) : "no session";
	int rc = 0;

	log_debug("exec: request");
	if (!no && x->spare < 0) {
		size_t i;

		for (i = 0; i < EXEC_RELAYS_MAX && x->relay[i].chan >= 0; i++)
			;
		if (i == EXEC_RELAYS_MAX) {
			snprintf(why, sizeof(why),
				 "session %s: %d exec'd commands still run; one must end first",
				 r->live.session->info.id, EXEC_RELAYS_MAX);
			no = why;
		}
	}
	if (!no && !r->live.exec_end_open) {
		if (pipe2(r->live.exec_end, O_CLOEXEC) < 0)
			no = strerror(errno);
		else
			r->live.exec_end_open = true;
	}
	if (!no && zygote_start(r, &err) < 0)
		no = err.msg;
	/* A spare that is gone (killed, or the sandbox ended) is replaced
	 * once. */
	for (int tries = 0; !no && tries < 2; tries++) {
		rc = spare_start(r, true);
		if (rc >= 0)
			rc = dispatch(r, fd, req);
		if (rc != -EPIPE && rc != -ECONNREFUSED)
			break;
		if (x->zkeep < 0 && zygote_start(r, &err) < 0) {
			no = err.msg;
			break;
		}
	}
	if (no)
		exec_reply(fd, "error %s", no);
	else if (rc < 0)
		exec_reply(fd, "error exec helper: %s", strerror(-rc));
	else
		(void)spare_start(r, false); /* the next request's, made while this runs */
	close(fd);
	session_exec_free(req);
}

/* ------------------------------------------------------------ the loop */

size_t exec_pollfds(struct run *r, struct pollfd *pfd)
{
	struct exec_state *x = &r->live.exec;
	size_t n = 0;

	pfd[n++] = (struct pollfd){.fd = x->zkeep, .events = POLLIN};
	for (size_t i = 0; i < EXEC_LISTENERS_MAX; i++)
		pfd[n++] = (struct pollfd){.fd = x->listener[i], .events = POLLIN};
	x->n_poll = 0;
	for (size_t i = 0; i < EXEC_RELAYS_MAX; i++)
		if (x->relay[i].chan >= 0) {
			x->slot[x->n_poll++] = (unsigned char)i;
			pfd[n++] = (struct pollfd){.fd = x->relay[i].chan, .events = POLLIN};
		}
	return n;
}

/* A relay's word: "pid N" (its command's pid in the sandbox's pid
 * namespace, from the zygote), or its end. */
static void relay_serve(struct run *r, struct exec_relay *l)
{
	char buf[32];
	ssize_t n = recv(l->chan, buf, sizeof(buf) - 1, MSG_DONTWAIT);
	long pid;

	if (n < 0 && (errno == EAGAIN || errno == EINTR))
		return;
	if (n <= 0) {
		relay_free(r, l);
		return;
	}
	buf[n] = '\0';
	if (l->taken && sscanf(buf, "pid %ld", &pid) == 1 && pid > 0)
		l->cmd = (pid_t)pid;
}

void exec_serve(struct run *r, const struct pollfd *pfd, size_t n)
{
	struct exec_state *x = &r->live.exec;
	size_t k = 0;

	if (n < 1 + EXEC_LISTENERS_MAX)
		return;
	/* The keeper's relays; its hang-up is its end, and the zygote's.
	 * The next request makes another. */
	if (pfd[k++].revents && x->zkeep >= 0 && !keeper_serve(r))
		zygote_gone(x);
	/* The relays' words before the listeners' calls: a command's pid
	 * is known before its lines are routed. */
	for (size_t j = 0; j < x->n_poll && 1 + EXEC_LISTENERS_MAX + j < n; j++)
		if (pfd[1 + EXEC_LISTENERS_MAX + j].revents &&
		    x->relay[x->slot[j]].chan == pfd[1 + EXEC_LISTENERS_MAX + j].fd)
			relay_serve(r, &x->relay[x->slot[j]]);
	for (size_t i = 0; i < EXEC_LISTENERS_MAX; i++, k++) {
		short ev = pfd[k].revents;

		if (x->listener[i] < 0 || x->listener[i] != pfd[k].fd)
			continue;
		if ((ev & POLLIN) && !denials_serve(r, x->listener[i], NULL))
			ev = POLLERR;
		/* POLLHUP: no process is left on the filter. Closed and
		 * forgotten. */
		if (ev & (POLLERR | POLLHUP | POLLNVAL)) {
			close(x->listener[i]);
			x->listener[i] = -1;
		}
	}
}

/* The command a call of pid belongs to: by its session, which is the
 * command's own (command() calls setsid()), seen in the sandbox's pid
 * namespace in /proc/PID/status; the command itself is then known by our
 * pid too, so its own calls need no read. */
struct denials_sink *exec_sink(struct run *r, pid_t pid)
{
	struct exec_state *x = &r->live.exec;
	pid_t inner = 0, sid = 0;
	char path[64], buf[4096];
	cleanup_close int fd = -1;
	ssize_t n;

	for (size_t i = 0; i < EXEC_RELAYS_MAX; i++)
		if (x->relay[i].taken && x->relay[i].host == pid)
			return &x->relay[i].sink;
	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	n = fd >= 0 ? read(fd, buf, sizeof(buf) - 1) : -1;
	if (n <= 0)
		return &x->left;
	buf[n] = '\0';
	if (session_parse_nsids(buf, &inner, &sid) < 0)
		return &x->left;
	for (size_t i = 0; i < EXEC_RELAYS_MAX; i++) {
		struct exec_relay *l = &x->relay[i];

		if (!l->taken || l->cmd <= 0 || l->cmd != sid)
			continue;
		if (inner == l->cmd)
			l->host = pid;
		return &l->sink;
	}
	return &x->left;
}

void exec_close(struct run_live *live)
{
	struct exec_state *x = &live->exec;

	for (size_t i = 0; i < EXEC_RELAYS_MAX; i++) {
		if (x->relay[i].chan >= 0)
			close(x->relay[i].chan);
		x->relay[i] = (struct exec_relay){.chan = -1, .sink = {.chan = -1}};
	}
	for (size_t i = 0; i < EXEC_LISTENERS_MAX; i++) {
		if (x->listener[i] >= 0)
			close(x->listener[i]);
		x->listener[i] = -1;
	}
	zygote_gone(x);
	x->spare = -1;
}
