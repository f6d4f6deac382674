/* The supervisor's side of a session: it registers the session, is the only
 * writer of its session.json, and answers the control socket
 * (<session dir>/control, SOCK_SEQPACKET, one request per connection):
 *
 *   "info"          -> the session.json text
 *   "wait"          -> "status N ENDING" once the session has ended, or
 *                      its main command did while leased services run on
 *   "stop [MS]"     -> ends the session now (grace MS, default the
 *                      policy's), then answers like "wait"
 *   "exec" NUL FIELD NUL FIELD NUL ...
 *                   -> paddock exec (exec.c): runs a command in the
 *                      session. FIELD is "cwd=DIR" (at most once, absolute;
 *                      default the policy's cwd), "env=NAME=VALUE" (any
 *                      number, replacing NAME in the policy's environment)
 *                      "tty=1" (at most once: the command gets a pty of
 *                      the sandbox's own, relayed to the client's fds)
 *                      or "arg=WORD" (argv in order, at least one). Every
 *                      field ends with a NUL, so the packet does; at most
 *                      SESSION_EXEC_MAX bytes (else "error argument list too
 *                      long"). The client's fds 0, 1 and 2 come along as
 *                      SCM_RIGHTS. Refused: "error ...". Else the helper
 *                      process that runs the command answers once it ends:
 *                      "exit N", "signal N", "exec-error ERRNO" or
 *                      "error MSG" (a setup step failed); meanwhile the
 *                      client may send "signal N" to have N delivered and,
 *                      with tty=1, "winch" when its window size changed.
 *   "approve DIGEST [HOST:PORT/PATH]"
 *                   -> the release gate (docs/network.md): relayed to the
 *                      mediator over its channel (gate_fd), its answer
 *                      "ok ..." or "error ..." relayed back
 *   anything else   -> "error ..."
 *
 * Every peer's uid (SO_PEERCRED) must be the owner's, whatever the modes of
 * the directory and the socket say. */
#include "session.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "../../include/cleanup.h"
#include "../../include/io.h"
#include "../../include/iso8601.h"

#define FINAL_RESERVE ".session.json.final"

void session_expires(struct session *s, uint64_t ttl_ms)
{
	iso8601_now(ttl_ms, s->info.expires, sizeof(s->info.expires));
}

int session_write(struct session *s, struct err *err)
{
	cleanup_free char *text = session_info_json(&s->info);
	cleanup_close int fd = -1;
	size_t len;
	int rc;

	if (!text)
		return err_set(err, ENOMEM, "out of memory");
	len = strlen(text);
	text[len++] = '\n'; /* replaces the NUL; len counts it no more */
	/* Readers see the old entry or the new one, never a torn one. */
	fd = openat(s->dirfd, ".session.json.tmp",
		    O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd < 0)
		return err_sys(err, errno, "session %s: session.json", s->info.id);
	rc = write_full(fd, text, len);
	if (rc < 0)
		return err_sys(err, rc, "session %s: write", s->info.id);
	/* rename(2) is what makes the update atomic. No fsync: the registry
	 * is runtime state (XDG_RUNTIME_DIR is volatile by design) that means
	 * nothing after a crash of the machine, and the two syncs cost
	 * milliseconds of every start on a disk-backed /tmp fallback. */
	if (renameat(s->dirfd, ".session.json.tmp", s->dirfd, "session.json") < 0)
		return err_sys(err, errno, "session %s: session.json", s->info.id);
	return 0;
}

/* Space for the final state, taken at registration: SESSION_JSON_MAX
 * bytes written (not fallocated: overwriting written blocks needs no new
 * ones, on tmpfs as on ext4). A neighbour's output filling the filesystem
 * can then no longer make the end of this session look like a crash. */
static int reserve_final(struct session *s, struct err *err)
{
	static const char zeros[4096];
	cleanup_close int fd = -1;

	fd = openat(s->dirfd, FINAL_RESERVE, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
		    0600);
	if (fd < 0)
		return err_sys(err, errno, "session %s: reserve space", s->info.id);
	for (size_t off = 0; off < SESSION_JSON_MAX; off += sizeof(zeros)) {
		int rc = write_full(fd, zeros, sizeof(zeros));

		if (rc < 0)
			return err_sys(err, rc, "session %s: reserve space", s->info.id);
	}
	return 0;
}

/* The final session.json, into the reserved file (written in place, cut to
 * its length: neither needs space) and renamed over the entry. */
static int final_write(struct session *s, struct err *err)
{
	cleanup_free char *text = session_info_json(&s->info);
	cleanup_close int fd = -1;
	size_t len;
	int rc;

	if (!text)
		return err_set(err, ENOMEM, "out of memory");
	len = strlen(text);
	text[len++] = '\n';
	fd = openat(s->dirfd, FINAL_RESERVE, O_WRONLY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0 && errno == ENOENT)
		return session_write(s, err); /* a registration before reserving */
	if (fd < 0)
		return err_sys(err, errno, "session %s: final state", s->info.id);
	if (len > SESSION_JSON_MAX)
		return err_set(err, EFBIG, "session %s: final state too large", s->info.id);
	rc = (int)pwrite(fd, text, len, 0);
	if (rc != (int)len || ftruncate(fd, (off_t)len) < 0)
		return err_sys(err, rc < 0 ? errno : EIO, "session %s: final state", s->info.id);
	if (renameat(s->dirfd, FINAL_RESERVE, s->dirfd, "session.json") < 0)
		return err_sys(err, errno, "session %s: final state", s->info.id);
	return 0;
}

/* The final state could not be written: its status and ending go into a
 * name (SESSION_FINAL_LOST "STATUS.ENDING"), which needs no data block:
 * the reserve renamed, or an empty file made. session_read() then reports
 * the session as ended with final_lost set, never as stale. */
static void final_lost(struct session *s)
{
	char name[64];
	int fd;

	snprintf(name, sizeof(name), SESSION_FINAL_LOST "%d.%s", s->info.status, s->info.ended);
	if (renameat(s->dirfd, FINAL_RESERVE, s->dirfd, name) == 0)
		return;
	fd = openat(s->dirfd, name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd >= 0)
		close(fd);
}

/* The control socket, made 0600 through the umask at bind(): there is no
 * moment at which another user could connect. Bound through
 * /proc/self/fd so the path never exceeds sun_path (108 bytes) whatever the
 * registry's, and never resolves a name twice. */
static int listen_control(struct session *s, struct err *err)
{
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	cleanup_close int fd = -1;
	mode_t old;
	int rc;

	fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd < 0)
		return err_sys(err, errno, "session %s: control socket", s->info.id);
	snprintf(sa.sun_path, sizeof(sa.sun_path), "/proc/self/fd/%d/control", s->dirfd);
	old = umask(0177);
	rc = bind(fd, (struct sockaddr *)&sa, sizeof(sa));
	umask(old);
	if (rc < 0 || listen(fd, 8) < 0)
		return err_sys(err, errno, "session %s: control socket", s->info.id);
	s->listen = take_fd(&fd);
	return 0;
}

/* A fresh id and its directory, made as ".new-ID" and renamed to "ID" once
 * session.json and the socket are in it: an "ID" entry is always whole. */
static int make_entry(struct session *s, struct err *err)
{
	char tmp[SESSION_ID_LEN + 8];
	unsigned char rnd[SESSION_ID_LEN / 2];
	int rc = 0;

	for (int tries = 0;; tries++) {
		if (tries == 16)
			return err_set(err, EEXIST, "session registry %s: no free id", s->reg.path);
		if (getrandom(rnd, sizeof(rnd), 0) != (ssize_t)sizeof(rnd))
			return err_sys(err, errno, "getrandom");
		for (size_t i = 0; i < sizeof(rnd); i++)
			snprintf(s->info.id + 2 * i, 3, "%02x", rnd[i]);
		snprintf(tmp, sizeof(tmp), ".new-%s", s->info.id);
		if (faccessat(s->reg.fd, s->info.id, F_OK, AT_SYMLINK_NOFOLLOW) == 0)
			continue;
		if (mkdirat(s->reg.fd, tmp, 0700) == 0)
			break;
		if (errno != EEXIST)
			return err_sys(err, errno, "session registry %s", s->reg.path);
	}
	s->dirfd = openat(s->reg.fd, tmp, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	/* Held for the supervisor's life: session_sweep() removes only a
	 * ".new-" directory nobody holds (its registration died). */
	if (s->dirfd >= 0 && flock(s->dirfd, LOCK_EX | LOCK_NB) < 0)
		rc = err_sys(err, errno, "session registry %s: lock %s", s->reg.path, tmp);
	else if (s->dirfd < 0 || fchmod(s->dirfd, 0700) < 0)
		rc = err_sys(err, errno, "session registry %s: %s", s->reg.path, tmp);
	else if ((rc = reserve_final(s, err)) >= 0 && (rc = listen_control(s, err)) >= 0 &&
		 (rc = session_write(s, err)) >= 0 &&
		 renameat2(s->reg.fd, tmp, s->reg.fd, s->info.id, RENAME_NOREPLACE) < 0)
		rc = err_sys(err, errno, "session registry %s: %s", s->reg.path, s->info.id);
	if (rc < 0)
		(void)session_remove(&s->reg, tmp);
	return rc;
}

/* names/NAME holds the last generation started under NAME, and its flock
 * serialises the check for a live namesake with the registration. */
static int lock_name(struct session *s, const char *name, unsigned *last, struct err *err)
{
	cleanup_close int dfd = -1, fd = -1;
	char buf[32] = "";
	struct stat st;
	ssize_t n;

	if (mkdirat(s->reg.fd, "names", 0700) < 0 && errno != EEXIST)
		return err_sys(err, errno, "session registry %s: names", s->reg.path);
	dfd = openat(s->reg.fd, "names", O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (dfd < 0 || fstat(dfd, &st) < 0)
		return err_sys(err, errno, "session registry %s: names", s->reg.path);
	if (st.st_uid != getuid())
		return err_set(err, EPERM, "session registry %s: names: not ours", s->reg.path);
	fd = openat(dfd, name, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd < 0)
		return err_sys(err, errno, "session registry %s: names/%s", s->reg.path, name);
	if (flock(fd, LOCK_EX) < 0)
		return err_sys(err, errno, "session registry %s: lock %s", s->reg.path, name);
	n = pread(fd, buf, sizeof(buf) - 1, 0);
	*last = n > 0 ? (unsigned)strtoul(buf, NULL, 10) : 0;
	return take_fd(&fd);
}

static int name_in_use(struct session *s, const char *name, struct err *err)
{
	cleanup_free struct session_info *all = NULL;
	size_t n = 0;
	int rc = session_list(&s->reg, &all, &n, err);

	if (rc < 0)
		return rc;
	for (size_t i = 0; i < n; i++) {
		if (strcmp(all[i].name, name) != 0)
			continue;
		/* Its supervisor is gone, and with it the sandbox
		 * (PR_SET_PDEATHSIG): a stale entry frees its name. */
		if (all[i].state == SESSION_STALE)
			(void)session_remove(&s->reg, all[i].id);
		else if (all[i].state != SESSION_ENDED)
			return err_set(err, EEXIST, "a session named %s is already running (%s)",
				       name, all[i].id);
	}
	return 0;
}

static void discard(struct session *s)
{
	if (s->listen >= 0)
		close(s->listen);
	if (s->dirfd >= 0)
		close(s->dirfd);
	s->listen = s->dirfd = -1;
	session_registry_close(&s->reg);
}

static int create(struct session *s, const char *name, struct err *err)
{
	cleanup_close int lock = -1;
	unsigned last = 0;
	char buf[32];
	int rc;

	rc = proc_identity(getpid(), &s->info.supervisor);
	if (rc < 0)
		return err_sys(err, rc, "/proc/self/stat");
	if (name) {
		snprintf(s->info.name, sizeof(s->info.name), "%s", name);
		lock = lock_name(s, name, &last, err);
		if (lock < 0)
			return lock;
		rc = name_in_use(s, name, err);
		if (rc < 0)
			return rc;
	}
	s->info.generation = last + 1;
	rc = make_entry(s, err);
	if (rc < 0)
		return rc;
	if (lock >= 0) {
		snprintf(buf, sizeof(buf), "%u\n", s->info.generation);
		if (ftruncate(lock, 0) < 0 || pwrite(lock, buf, strlen(buf), 0) < 0)
			return err_sys(err, errno, "session registry %s: names/%s", s->reg.path,
				       name);
	}
	return 0;
}

void session_command_text(char *const *argv, char *out, size_t size)
{
	size_t off = 0;

	out[0] = '\0';
	for (size_t i = 0; argv && argv[i] && off < size; i++) {
		int n = snprintf(out + off, size - off, "%s%s", i ? " " : "", argv[i]);

		if (n < 0 || (size_t)n >= size - off) {
			if (size > 4)
				snprintf(out + size - 4, 4, "...");
			return;
		}
		off += (size_t)n;
	}
}

int session_create(struct session *s, struct registry *reg, const char *name, bool detached,
		   const char *policy_sha256, char *const *argv, struct err *err)
{
	int rc;

	memset(s, 0, sizeof(*s));
	s->dirfd = s->listen = s->gate_fd = -1;
	s->reg = *reg;
	reg->fd = -1;
	s->info.owner = getuid();
	s->info.state = SESSION_STARTING;
	s->info.detached = detached;
	session_command_text(argv, s->info.command, sizeof(s->info.command));
	snprintf(s->info.policy_sha256, sizeof(s->info.policy_sha256), "%s", policy_sha256);
	iso8601_now(0, s->info.created, sizeof(s->info.created));
	rc = create(s, name, err);
	if (rc < 0)
		discard(s);
	return rc;
}

int session_open_output(struct session *s, struct err *err)
{
	static const char *const names[] = {"stdout", "stderr"};

	for (int i = 0; i < 2; i++) {
		int fd =
		    openat(s->dirfd, names[i],
			   O_WRONLY | O_CREAT | O_EXCL | O_APPEND | O_NOFOLLOW | O_CLOEXEC, 0600);

		if (fd < 0)
			return err_sys(err, errno, "session %s: %s", s->info.id, names[i]);
		if (dup2(fd, 1 + i) < 0) {
			close(fd);
			return err_sys(err, errno, "session %s: %s", s->info.id, names[i]);
		}
		close(fd);
	}
	return 0;
}

int session_output_fd(struct session *s, int which, struct err *err)
{
	static const char *const names[] = {"stdout", "stderr"};
	/* Appended to: a detached session's files already hold its
	 * workload's output. */
	int fd = openat(s->dirfd, names[which & 1],
			O_WRONLY | O_CREAT | O_APPEND | O_NOFOLLOW | O_CLOEXEC, 0600);

	if (fd < 0)
		return err_sys(err, errno, "session %s: %s", s->info.id, names[which & 1]);
	return fd;
}

/* --------------------------------------------------------- control socket */

static void reply(int fd, const char *text)
{
	/* MSG_NOSIGNAL: a peer that left must not kill the supervisor. */
	(void)!send(fd, text, strlen(text), MSG_NOSIGNAL | MSG_DONTWAIT);
}

size_t session_pollfds(const struct session *s, struct pollfd *pfd, size_t max)
{
	size_t n = 0;

	if (s->listen < 0 || max == 0)
		return 0;
	pfd[n++] = (struct pollfd){.fd = s->listen, .events = POLLIN};
	/* Waiters are watched for hang-ups only (always reported). */
	for (size_t i = 0; i < s->n_clients && n < max; i++)
		pfd[n++] = (struct pollfd){.fd = s->clients[i].fd,
					   .events = s->clients[i].waiting ? 0 : POLLIN};
	return n;
}

static void drop(struct session *s, size_t i)
{
	close(s->clients[i].fd);
	s->clients[i] = s->clients[--s->n_clients];
}

static bool owner_peer(const struct session *s, int fd)
{
	struct ucred cred;
	socklen_t len = sizeof(cred);

	if (s->no_owner_check)
		return true; /* weakened for evaluation: the mode alone decides */
	return getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) == 0 &&
	       cred.uid == s->info.owner;
}

static void refuse(const struct session *s, int fd)
{
	char msg[96];

	snprintf(msg, sizeof(msg), "error session %s belongs to uid %u", s->info.id,
		 (unsigned)s->info.owner);
	reply(fd, msg);
}

/* A waiter of a session whose main command ended gets its status now. */
static void answer_retained(struct session *s, size_t i)
{
	char msg[64];

	snprintf(msg, sizeof(msg), "status %d %s", s->info.status, s->info.ended);
	reply(s->clients[i].fd, msg);
	drop(s, i);
}

void session_retained(struct session *s, int status, const char *ending)
{
	if (s->dirfd < 0)
		return;
	s->info.state = SESSION_RETAINED;
	s->info.status = status;
	snprintf(s->info.ended, sizeof(s->info.ended), "%s", ending);
	(void)session_write(s, NULL);
	for (size_t i = s->n_clients; i-- > 0;)
		if (s->clients[i].waiting && !s->clients[i].stopping)
			answer_retained(s, i);
}

/* "approve ...": to the mediator's release gate, which checks it, and its
 * answer back (2 s at most: the mediator answers from its loop). The
 * owner check was made before (read_request()). */
static void approve_request(struct session *s, size_t i, const char *m)
{
	struct pollfd p = {.fd = s->gate_fd, .events = POLLIN};
	char answer[1536];
	ssize_t n = -1;

	if (s->gate_fd < 0) {
		snprintf(answer, sizeof(answer),
			 "error session %s has no release gate (its network is not mediated)",
			 s->info.id);
	} else {
		/* A late answer to an earlier request that timed out. */
		while (recv(s->gate_fd, answer, sizeof(answer), MSG_DONTWAIT) > 0)
			;
		if (send(s->gate_fd, m, strlen(m), MSG_DONTWAIT | MSG_NOSIGNAL) >= 0 &&
		    poll(&p, 1, 2000) == 1)
			n = recv(s->gate_fd, answer, sizeof(answer) - 1, MSG_DONTWAIT);
		if (n > 0)
			answer[n] = '\0';
		else
			snprintf(answer, sizeof(answer),
				 "error session %s: the mediator did not answer", s->info.id);
	}
	reply(s->clients[i].fd, answer);
	drop(s, i);
}

/* One request: "info" is answered at once, "wait" and "stop" at the end
 * ("wait" at the main command's end when leased services run on). */
static void request(struct session *s, size_t i, const char *m, struct session_request *req)
{
	char *end;
	unsigned long long ms;

	if (strcmp(m, "info") == 0) {
		cleanup_free char *text = session_info_json(&s->info);

		reply(s->clients[i].fd, text ? text : "error out of memory");
		drop(s, i);
	} else if (strcmp(m, "wait") == 0) {
		s->clients[i].waiting = true;
		if (s->info.state == SESSION_RETAINED)
			answer_retained(s, i);
	} else if (strcmp(m, "stop") == 0 || strncmp(m, "stop ", 5) == 0) {
		s->clients[i].waiting = true;
		s->clients[i].stopping = true;
		req->stop = true;
		if (m[4] == ' ') {
			errno = 0;
			ms = strtoull(m + 5, &end, 10);
			/* init's own limit for a grace period (30 days). */
			if (!errno && end != m + 5 && !*end && ms <= 30ull * 24 * 3600 * 1000) {
				req->has_grace = true;
				req->grace_ms = ms;
			}
		}
	} else if (strncmp(m, "approve ", 8) == 0) {
		approve_request(s, i, m);
	} else {
		reply(s->clients[i].fd, "error unknown request");
		drop(s, i);
	}
}

static void close_fds(int *fds, size_t n)
{
	for (size_t i = 0; i < n; i++)
		close(fds[i]);
}

/* One packet and the fds that came with it (up to 3, close-on-exec; any
 * more are dropped by the kernel with MSG_CTRUNC). *trunc: the packet was
 * longer than size. */
static ssize_t recv_request(int fd, char *buf, size_t size, int *fds, size_t *nfds, bool *trunc)
{
	union {
		char buf[CMSG_SPACE(3 * sizeof(int))];
		struct cmsghdr align;
	} u;
	struct iovec iov = {.iov_base = buf, .iov_len = size};
	struct msghdr mh = {.msg_iov = &iov,
			    .msg_iovlen = 1,
			    .msg_control = u.buf,
			    .msg_controllen = sizeof(u.buf)};
	ssize_t n = recvmsg(fd, &mh, MSG_DONTWAIT | MSG_CMSG_CLOEXEC);

	*nfds = 0;
	if (n < 0)
		return n;
	for (struct cmsghdr *c = CMSG_FIRSTHDR(&mh); c; c = CMSG_NXTHDR(&mh, c)) {
		size_t k;

		if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS)
			continue;
		k = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
		for (size_t j = 0; j < k; j++) {
			int f;

			memcpy(&f, CMSG_DATA(c) + j * sizeof(int), sizeof(int));
			if (*nfds < 3)
				fds[(*nfds)++] = f;
			else
				close(f);
		}
	}
	/* More fds than an exec request carries: none of them is used. */
	if (mh.msg_flags & MSG_CTRUNC) {
		close_fds(fds, *nfds);
		*nfds = 0;
	}
	*trunc = mh.msg_flags & MSG_TRUNC;
	return n;
}

/* "exec": the connection and the decoded request go to the supervisor's
 * loop (req), out of the client list; errors are answered here. */
static void exec_request(struct session *s, size_t i, const char *buf, size_t n, bool trunc,
			 int *fds, size_t nfds, struct session_request *req)
{
	struct err err = {0};
	struct session_exec x;
	char msg[sizeof(err.msg) + 8];
	int rc;

	if (trunc)
		rc = err_set(&err, E2BIG, "argument list too long");
	else if (nfds != 3)
		rc = err_set(&err, EBADF, "exec request: not exactly the client's fds 0, 1 and 2");
	else
		rc = session_exec_decode(buf, n, &x, &err);
	if (rc < 0) {
		close_fds(fds, nfds);
		snprintf(msg, sizeof(msg), "error %s", err.msg);
		reply(s->clients[i].fd, msg);
		drop(s, i);
		return;
	}
	memcpy(x.stdio, fds, sizeof(x.stdio));
	req->exec = true;
	req->exec_fd = s->clients[i].fd;
	req->exec_req = x;
	s->clients[i] = s->clients[--s->n_clients];
}

static void read_request(struct session *s, size_t i, struct session_request *req)
{
	/* The supervisor is single-threaded; an exec request may be long. */
	static char buf[SESSION_EXEC_MAX + 1];
	int fds[3];
	size_t nfds = 0;
	bool trunc = false;
	ssize_t n = recv_request(s->clients[i].fd, buf, SESSION_EXEC_MAX, fds, &nfds, &trunc);

	if (n < 0 && (errno == EAGAIN || errno == EINTR))
		return;
	if (n <= 0) {
		close_fds(fds, nfds);
		drop(s, i);
		return;
	}
	buf[n] = '\0';
	/* Answered only now that its request is read: closing a socket with
	 * unread data resets the connection, and the peer would never see
	 * the error (unix_release_sock()). */
	if (s->clients[i].refused) {
		close_fds(fds, nfds);
		refuse(s, s->clients[i].fd);
		drop(s, i);
		return;
	}
	/* "exec" ends with a NUL, where its fields start. */
	if (strcmp(buf, "exec") == 0) {
		exec_request(s, i, buf, (size_t)n, trunc, fds, nfds, req);
		return;
	}
	close_fds(fds, nfds);
	request(s, i, buf, req);
}

static void accept_all(struct session *s)
{
	for (;;) {
		int fd = accept4(s->listen, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK);

		if (fd < 0)
			return; /* EAGAIN, or an aborted connection */
		if (s->n_clients == SESSION_CLIENTS_MAX) {
			reply(fd, "error busy");
			close(fd);
			continue;
		}
		/* SO_PEERCRED: the uid of the process that connected, whatever
		 * the modes of the directory and the socket allowed. */
		s->clients[s->n_clients++] =
		    (struct session_client){.fd = fd, .refused = !owner_peer(s, fd)};
	}
}

void session_serve(struct session *s, const struct pollfd *pfd, size_t n,
		   struct session_request *req)
{
	*req = (struct session_request){.exec_fd = -1};
	if (n == 0)
		return;
	/* Clients by fd: handling one reorders the array. */
	for (size_t k = 1; k < n; k++) {
		if (!pfd[k].revents)
			continue;
		for (size_t i = 0; i < s->n_clients; i++) {
			if (s->clients[i].fd != pfd[k].fd)
				continue;
			if (s->clients[i].waiting)
				drop(s, i);  /* a waiter hung up */
			else if (!req->exec) /* one exec per round; the next finds the rest */
				read_request(s, i, req);
			break;
		}
	}
	if (pfd[0].revents & POLLIN)
		accept_all(s);
}

/* Connections made just before the end: answered if their request is
 * there within 100 ms, else closed (the client then reads session.json). */
static void answer_late(struct session *s, const char *status)
{
	for (;;) {
		cleanup_close int fd = accept4(s->listen, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK);
		struct pollfd p;
		char buf[64];
		ssize_t n;

		if (fd < 0)
			return;
		p = (struct pollfd){.fd = fd, .events = POLLIN};
		if (poll(&p, 1, 100) <= 0)
			continue;
		n = recv(fd, buf, sizeof(buf) - 1, MSG_DONTWAIT);
		if (n <= 0)
			continue;
		buf[n] = '\0';
		if (!owner_peer(s, fd)) {
			refuse(s, fd);
		} else if (strcmp(buf, "info") == 0) {
			cleanup_free char *text = session_info_json(&s->info);

			reply(fd, text ? text : "error out of memory");
		} else if (strcmp(buf, "wait") == 0 || strncmp(buf, "stop", 4) == 0) {
			reply(fd, status);
		} else if (strcmp(buf, "exec") == 0) {
			/* recv() without a control buffer: the kernel drops the
			 * fds that came with it. */
			snprintf(buf, sizeof(buf), "error session %s has ended", s->info.id);
			reply(fd, buf);
		} else {
			reply(fd, "error unknown request");
		}
	}
}

int session_finish(struct session *s, int status, const char *ending, bool remove, struct err *err)
{
	char msg[64];
	int rc;

	if (s->dirfd < 0)
		return 0;
	s->info.state = SESSION_ENDED;
	s->info.status = status;
	snprintf(s->info.ended, sizeof(s->info.ended), "%s", ending);
	/* Before any answer: whoever is told "ended" finds it written. */
	rc = remove ? 0 : final_write(s, err);
	if (rc < 0)
		final_lost(s);
	snprintf(msg, sizeof(msg), "status %d %s", status, ending);
	while (s->n_clients) {
		if (s->clients[0].waiting)
			reply(s->clients[0].fd, msg);
		drop(s, 0);
	}
	if (s->listen >= 0) {
		answer_late(s, msg);
		close(s->listen);
		s->listen = -1;
		(void)unlinkat(s->dirfd, "control", 0);
	}
	close(s->dirfd);
	s->dirfd = -1;
	if (remove)
		(void)session_remove(&s->reg, s->info.id);
	session_registry_close(&s->reg);
	return rc;
}
