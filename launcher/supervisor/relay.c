/* The port relay: a child of the supervisor that holds the host listeners
 * and connects, for every accepted client, to the sandbox's loopback from
 * inside the sandbox's network namespace, then copies bytes both ways.
 *
 * It stays in the host's pid namespace (the sandbox cannot see or signal
 * it) and joins the sandbox's user and network namespaces only: sockets it
 * creates afterwards live in the sandbox's network namespace, while the
 * listeners bound before stay on the host's loopback (a socket keeps the
 * namespace it was created in, network_namespaces(7)). */
#include "run.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include "../../include/exitcodes.h"

#define RELAY_CONNS_MAX 256   /* concurrent connections; more are refused (closed) */
#define RELAY_BUF	16384 /* bytes in flight per direction */

struct relay_dir {
	char *buf;
	size_t off, len;
	bool eof;  /* the source end sent FIN */
	bool shut; /* passed on with shutdown(SHUT_WR) */
};

/* fd[0] the client on the host, fd[1] the socket into the sandbox; dir[0]
 * copies client -> sandbox, dir[1] sandbox -> client. An HTTP forward's
 * connection first reads the request head (fd[1] is -1 until then), and
 * stamps what comes back through st. */
struct relay_conn {
	int fd[2];
	bool connecting;
	bool head; /* HTTP: still reading the request head */
	const struct port_listener *l;
	struct http_stamp *st;
	struct relay_dir dir[2];
};

/* What the server sends, before stamping (one connection at a time). */
static char stamp_in[RELAY_BUF];
#define RELAY_OUT_BUF (HTTP_HEAD_MAX + RELAY_BUF + HTTP_STAMP_GROWTH)

struct relay {
	const struct port_listener *l;
	size_t n_l;
	struct relay_conn *c;
	size_t n_c;
};

static void conn_close(struct relay *rl, size_t i)
{
	struct relay_conn *c = &rl->c[i];

	close(c->fd[0]);
	if (c->fd[1] >= 0)
		close(c->fd[1]);
	free(c->dir[0].buf);
	free(c->dir[1].buf);
	free(c->st);
	rl->c[i] = rl->c[--rl->n_c];
}

/* The inner connection: to the same port on the sandbox's loopback.
 * -errno when it cannot even be started. */
static int connect_inner(const struct port_listener *l)
{
	struct sockaddr_storage ss = {0};
	struct sockaddr_in *in4 = (struct sockaddr_in *)&ss;
	struct sockaddr_in6 *in6 = (struct sockaddr_in6 *)&ss;
	int fd = socket(l->family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);

	if (fd < 0)
		return -errno;
	if (l->family == AF_INET6) {
		in6->sin6_family = AF_INET6;
		in6->sin6_port = htons(l->sandbox);
		in6->sin6_addr = in6addr_loopback;
	} else {
		in4->sin_family = AF_INET;
		in4->sin_port = htons(l->sandbox);
		in4->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	}
	if (connect(fd, (struct sockaddr *)&ss,
		    l->family == AF_INET6 ? sizeof(*in6) : sizeof(*in4)) < 0 &&
	    errno != EINPROGRESS) {
		int e = errno;

		close(fd);
		return -e;
	}
	return fd;
}

/* A new client of listener l: connect to the same port on the sandbox's
 * loopback (an HTTP forward: once the request head has been read). A
 * refused or failed inner connect closes the client. */
static void conn_open(struct relay *rl, const struct port_listener *l, int client)
{
	struct relay_conn *c;
	int fd = -1;

	if (rl->n_c == RELAY_CONNS_MAX) {
		close(client);
		return;
	}
	c = &rl->c[rl->n_c];
	memset(c, 0, sizeof(*c));
	c->l = l;
	c->dir[0].buf = malloc(RELAY_BUF);
	c->dir[1].buf = malloc(l->http ? RELAY_OUT_BUF : RELAY_BUF);
	if (l->http)
		c->st = calloc(1, sizeof(*c->st));
	if (!l->http && c->dir[0].buf && c->dir[1].buf)
		fd = connect_inner(l);
	if (!c->dir[0].buf || !c->dir[1].buf || (l->http && !c->st) || (!l->http && fd < 0)) {
		free(c->dir[0].buf);
		free(c->dir[1].buf);
		free(c->st);
		close(client);
		return;
	}
	c->fd[0] = client;
	c->fd[1] = fd;
	if (l->http) {
		c->st->lease = l->lease;
		c->head = true;
	} else {
		c->connecting = true; /* confirmed by POLLOUT and SO_ERROR */
	}
	rl->n_c++;
}

/* An answer of the relay's own, stamped, then the end of the connection:
 * the request never reaches the sandbox. */
static bool refuse(struct relay_conn *c, const char *status)
{
	char msg[HTTP_LEASE_MAX + 256];
	int n = snprintf(msg, sizeof(msg),
			 "HTTP/1.1 %s\r\nPaddock-Lease: %s\r\nConnection: close\r\n"
			 "Content-Length: 0\r\n\r\n",
			 status, c->l->lease);

	(void)!send(c->fd[0], msg, (size_t)n, MSG_DONTWAIT | MSG_NOSIGNAL);
	return false;
}

/* HTTP: more of the request head. Once it is whole, a request for another
 * lease's host name (an ended generation, another session) is refused
 * with 421; any other is relayed, its head first. */
static bool read_head(struct relay_conn *c)
{
	struct relay_dir *x = &c->dir[0];
	char host[256];
	ssize_t n = recv(c->fd[0], x->buf + x->len, RELAY_BUF - x->len, MSG_DONTWAIT);
	int r, fd;

	if (n < 0)
		return errno == EAGAIN || errno == EINTR;
	if (n == 0)
		return false;
	x->len += (size_t)n;
	r = http_request_host(x->buf, x->len, host, sizeof(host));
	if (r == 0)
		return true;
	if (r < 0)
		return refuse(c, "400 Bad Request");
	if (!http_host_allowed(host, c->l->name))
		return refuse(c, "421 Misdirected Request");
	fd = connect_inner(c->l);
	if (fd < 0)
		return false;
	c->fd[1] = fd;
	c->head = false;
	c->connecting = true;
	x->off = 0;
	return true;
}

static void accept_all(struct relay *rl, const struct port_listener *l)
{
	for (;;) {
		int fd = accept4(l->fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);

		/* EAGAIN: drained. Anything else (ECONNABORTED, EMFILE)
		 * concerns this one client; try again on the next poll. */
		if (fd < 0)
			return;
		conn_open(rl, l, fd);
	}
}

/* Move what can be moved in direction d. false: the connection is over
 * (an error on either end). */
static bool pump(struct relay_conn *c, int d, short src_ev, short dst_ev)
{
	struct relay_dir *x = &c->dir[d];
	int src = c->fd[d], dst = c->fd[1 - d];
	ssize_t n;

	if (!x->eof && x->len == 0 && (src_ev & (POLLIN | POLLHUP | POLLERR))) {
		bool stamp = d == 1 && c->st;

		n = recv(src, stamp ? stamp_in : x->buf, RELAY_BUF, MSG_DONTWAIT);
		if (n < 0 && errno != EAGAIN && errno != EINTR)
			return false;
		if (n == 0)
			x->eof = true;
		if (n > 0 && stamp) {
			n = http_stamp_feed(c->st, stamp_in, (size_t)n, x->buf, RELAY_OUT_BUF);
			if (n < 0)
				return false; /* not a response we can stamp: never unstamped */
			/* The exchange is over: nothing more either way. */
			if (c->st->state == HTTP_STAMP_DONE)
				x->eof = c->dir[0].eof = true;
		}
		if (n > 0) {
			x->off = 0;
			x->len = (size_t)n;
			dst_ev |= POLLOUT; /* try at once, most writes fit */
		}
	}
	if (x->len && (dst_ev & (POLLOUT | POLLHUP | POLLERR))) {
		n = send(dst, x->buf + x->off, x->len - x->off, MSG_DONTWAIT | MSG_NOSIGNAL);
		if (n < 0 && errno != EAGAIN && errno != EINTR)
			return false;
		if (n > 0) {
			x->off += (size_t)n;
			if (x->off == x->len)
				x->off = x->len = 0;
		}
	}
	/* A half-close is passed on: the other end may still answer. */
	if (x->eof && x->len == 0 && !x->shut) {
		x->shut = true;
		if (shutdown(dst, SHUT_WR) < 0 && errno != ENOTCONN)
			return false;
	}
	return true;
}

static bool conn_step(struct relay_conn *c, short ev0, short ev1)
{
	int e = 0;
	socklen_t len = sizeof(e);

	/* An error (a reset, a refused inner connect) ends both ways; it
	 * would otherwise be reported by every poll. */
	if ((ev0 | ev1) & POLLERR)
		return false;
	if (c->head)
		return !(ev0 & (POLLIN | POLLHUP)) || read_head(c);
	if (c->connecting) {
		if (!ev1)
			return true;
		if (getsockopt(c->fd[1], SOL_SOCKET, SO_ERROR, &e, &len) < 0 || e != 0)
			return false; /* nothing listens there in the sandbox */
		c->connecting = false;
		ev0 |= POLLIN; /* the client may have sent already */
	}
	if (!pump(c, 0, ev0, ev1) || !pump(c, 1, ev1, ev0))
		return false;
	return !(c->dir[0].shut && c->dir[1].shut);
}

static short want(const struct relay_conn *c, int fd_index)
{
	short ev = 0;

	if (c->head)
		return fd_index == 0 ? POLLIN : 0;
	if (c->connecting)
		return fd_index == 1 ? POLLOUT : 0;
	/* Read from this end when its direction's buffer is empty; write to
	 * it when the other direction has bytes for it. */
	if (!c->dir[fd_index].eof && c->dir[fd_index].len == 0)
		ev |= POLLIN;
	if (c->dir[1 - fd_index].len)
		ev |= POLLOUT;
	return ev;
}

static void relay_loop(struct relay *rl)
{
	struct pollfd *pfd = calloc(POLICY_PORTS_MAX + 2 * RELAY_CONNS_MAX, sizeof(*pfd));

	if (!pfd)
		_exit(EXIT_LAUNCHER);
	for (;;) {
		size_t n = 0, n_c;

		for (size_t i = 0; i < rl->n_l; i++)
			pfd[n++] = (struct pollfd){.fd = rl->l[i].fd, .events = POLLIN};
		for (size_t i = 0; i < rl->n_c; i++) {
			pfd[n++] =
			    (struct pollfd){.fd = rl->c[i].fd[0], .events = want(&rl->c[i], 0)};
			pfd[n++] =
			    (struct pollfd){.fd = rl->c[i].fd[1], .events = want(&rl->c[i], 1)};
		}
		if (poll(pfd, n, -1) < 0)
			continue; /* EINTR; nothing else can fail with valid fds */
		/* Connections first, from the end, so that closing one (the
		 * last moves into its slot) does not skip any. */
		n_c = rl->n_c;
		for (size_t i = n_c; i-- > 0;) {
			short ev0 = pfd[rl->n_l + 2 * i].revents,
			      ev1 = pfd[rl->n_l + 2 * i + 1].revents;

			if ((ev0 || ev1) && !conn_step(&rl->c[i], ev0, ev1))
				conn_close(rl, i);
		}
		for (size_t i = 0; i < rl->n_l; i++)
			if (pfd[i].revents & POLLIN)
				accept_all(rl, &rl->l[i]);
	}
}

static int relay_setup(struct port_listener *l, size_t n, int sandbox_pidfd, pid_t parent,
		       int *report, struct err *err)
{
	int keep[POLICY_PORTS_MAX + 1];
	/* Only the listeners and the report pipe stay (not the control
	 * sockets, the registry, the record), nor the caller's terminal or
	 * the session's output files. The sandbox's network namespace
	 * belongs to its user namespace, so joining it needs CAP_SYS_ADMIN
	 * there, which joining that user namespace gives; the capabilities
	 * are not needed to connect and go again. Killed with the
	 * supervisor: nobody else would ever end us. */
	struct sandbox_join j = {
	    .parent = parent,
	    .pidfd = sandbox_pidfd,
	    .nstypes = CLONE_NEWUSER | CLONE_NEWNET,
	    .keep = keep,
	    .n_keep = n + 1,
	    .n_inherit = 0,
	    .flags = SANDBOX_JOIN_NOT_DUMPABLE | SANDBOX_JOIN_NULL_STDIO | SANDBOX_JOIN_DROP_CAPS,
	};
	int rc;

	(void)prctl(PR_SET_NAME, "paddock-relay");
	for (size_t i = 0; i < n; i++)
		keep[i] = l[i].fd;
	keep[n] = *report;
	rc = sandbox_join(&j, err);
	if (rc < 0)
		return rc;
	for (size_t i = 0; i < n; i++)
		l[i].fd = keep[i];
	*report = keep[n];
	return 0;
}

void ports_relay(struct port_listener *l, size_t n, int sandbox_pidfd, pid_t parent, int report)
{
	struct err err = {0};
	struct relay rl = {.l = l, .n_l = n};

	if (relay_setup(l, n, sandbox_pidfd, parent, &report, &err) < 0) {
		(void)!write(report, err.msg, strlen(err.msg));
		_exit(EXIT_LAUNCHER);
	}
	rl.c = calloc(RELAY_CONNS_MAX, sizeof(*rl.c));
	if (!rl.c) {
		(void)!write(report, "out of memory", 13);
		_exit(EXIT_LAUNCHER);
	}
	close(report); /* EOF alone: ready */
	relay_loop(&rl);
	_exit(0);
}
