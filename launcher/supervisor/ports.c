/* Port forwards (policy "ports"): the supervisor binds every host listener
 * before anything of the sandbox exists, so a busy port is an ordinary
 * start-up error (125, nothing started); once the sandbox's namespaces exist
 * it forks the relay (relay.c), which takes the listeners over and connects
 * from inside the sandbox's network namespace; at the end it kills the
 * relay by pidfd, which closes the endpoints with it. */
#include "run.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/pidfd.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../../include/cleanup.h"
#include "../../include/io.h"

_Static_assert(POLICY_PORTS_MAX <= SESSION_ENDPOINTS_MAX, "every forward has an endpoint");

int ports_check(const struct run_spec *s, struct err *err)
{
	if (s->policy->n_ports == 0)
		return 0;
	/* Without its own network namespace the sandbox's loopback is the
	 * host's: there is nothing to forward to, and a relay would only
	 * shadow ports the workload can bind itself. */
	if (!(s->sb.namespaces & POLICY_NS_NET))
		return err_set(err, EINVAL,
			       "ports: port forwards need the sandbox's own network namespace "
			       "(not with --weaken host-net); nothing started");
	return 0;
}

/* A listening TCP socket on addr:port (port 0: the kernel chooses), or
 * -errno. SO_REUSEADDR only lets us bind a port whose earlier connections
 * linger in TIME_WAIT (a restarted session's own): Linux still refuses a
 * port that any socket listens on. Never SO_REUSEPORT: with it, a second
 * listener of the same uid shares the port and takes a share of its
 * connections, which is exactly the takeover a busy port must not allow. */
static int listen_on(const char *addr, uint16_t port, int *family)
{
	struct sockaddr_storage ss = {0};
	struct sockaddr_in *in4 = (struct sockaddr_in *)&ss;
	struct sockaddr_in6 *in6 = (struct sockaddr_in6 *)&ss;
	bool v6 = strchr(addr, ':') != NULL;
	cleanup_close int fd = -1;
	int one = 1;

	*family = v6 ? AF_INET6 : AF_INET;
	fd = socket(*family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	if (setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) < 0)
		return -errno;
	if (v6) {
		/* [::1] only: never the IPv4 side of a dual-stack socket. */
		if (setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &one, sizeof(one)) < 0)
			return -errno;
		in6->sin6_family = AF_INET6;
		in6->sin6_port = htons(port);
		in6->sin6_addr = in6addr_loopback;
	} else {
		in4->sin_family = AF_INET;
		in4->sin_port = htons(port);
		in4->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	}
	if (bind(fd, (struct sockaddr *)&ss, v6 ? sizeof(*in6) : sizeof(*in4)) < 0)
		return -errno;
	if (listen(fd, SOMAXCONN) < 0)
		return -errno;
	return take_fd(&fd);
}

static int bound_port(int fd)
{
	struct sockaddr_storage ss;
	socklen_t len = sizeof(ss);

	if (getsockname(fd, (struct sockaddr *)&ss, &len) < 0)
		return -errno;
	if (ss.ss_family == AF_INET6)
		return ntohs(((struct sockaddr_in6 *)&ss)->sin6_port);
	return ntohs(((struct sockaddr_in *)&ss)->sin_port);
}

static int bind_one(struct ports *pt, const struct policy_port *pp, struct err *err)
{
	struct port_listener *l = &pt->l[pp->index];
	struct session_endpoint *e = &pt->endpoints[pp->index];
	char shown[64];
	int fd, port;

	policy_port_host_format(shown, sizeof(shown), pp->host_addr,
				pp->host_port ? pp->host_port : pp->sandbox_port);
	if (pp->host_port) {
		fd = listen_on(pp->host_addr, pp->host_port, &l->family);
	} else {
		/* "auto": the sandbox's port number when it is free here (and
		 * not privileged), else whatever free port the kernel picks. */
		fd = listen_on(pp->host_addr, pp->sandbox_port, &l->family);
		if (fd == -EADDRINUSE || fd == -EACCES)
			fd = listen_on(pp->host_addr, 0, &l->family);
	}
	if (fd == -EADDRINUSE)
		return err_set(err, EADDRINUSE, "ports[%zu]: %s is in use; nothing started",
			       pp->index, shown);
	if (fd == -EACCES)
		return err_set(
		    err, EACCES,
		    "ports[%zu]: %s: permission denied (a port below "
		    "net.ipv4.ip_unprivileged_port_start needs privilege); nothing started",
		    pp->index, shown);
	if (fd < 0)
		return err_sys(err, fd, "ports[%zu]: %s", pp->index, shown);
	l->fd = fd;
	l->sandbox = pp->sandbox_port;
	port = bound_port(fd);
	if (port <= 0)
		return err_sys(err, port < 0 ? port : EINVAL, "ports[%zu]: getsockname", pp->index);
	policy_port_host_format(e->host, sizeof(e->host), pp->host_addr, (uint16_t)port);
	e->sandbox = pp->sandbox_port;
	e->http = pp->http;
	snprintf(e->service, sizeof(e->service), "%s", pp->service ? pp->service : "");
	return 0;
}

/* An HTTP forward's lease: a fresh nonce from getrandom(2) per endpoint,
 * known to the supervisor, the relay and the owner's registry only, and
 * the value and host name the relay stamps and checks. */
static int lease_one(struct port_listener *l, struct session_endpoint *e, const char *id,
		     unsigned gen, struct err *err)
{
	static const char hex[] = "0123456789abcdef";
	unsigned char rnd[SESSION_NONCE_LEN / 2];

	if (getrandom(rnd, sizeof(rnd), 0) != (ssize_t)sizeof(rnd))
		return err_sys(err, errno, "port relay: getrandom");
	for (size_t i = 0; i < sizeof(rnd); i++) {
		e->nonce[2 * i] = hex[rnd[i] >> 4];
		e->nonce[2 * i + 1] = hex[rnd[i] & 15];
	}
	e->nonce[SESSION_NONCE_LEN] = '\0';
	l->http = true;
	snprintf(l->lease, sizeof(l->lease), "session=%s; service=%s; gen=%u; nonce=%s", id,
		 e->service[0] ? e->service : "-", gen, e->nonce);
	session_lease_host(l->name, sizeof(l->name), id, gen);
	return 0;
}

int ports_bind(const struct policy *p, struct ports *pt, struct err *err)
{
	int rc = 0;

	for (size_t i = 0; i < p->n_ports; i++)
		pt->l[i].fd = -1;
	pt->n = p->n_ports;
	/* Fixed ports first: an "auto" one must not take a port that a
	 * fixed entry of the same policy names. */
	for (size_t i = 0; rc >= 0 && i < p->n_ports; i++)
		if (p->ports[i].host_port)
			rc = bind_one(pt, &p->ports[i], err);
	for (size_t i = 0; rc >= 0 && i < p->n_ports; i++)
		if (!p->ports[i].host_port)
			rc = bind_one(pt, &p->ports[i], err);
	return rc;
}

static void close_listeners(struct ports *pt)
{
	for (size_t i = 0; i < pt->n; i++) {
		if (pt->l[i].fd >= 0)
			close(pt->l[i].fd);
		pt->l[i].fd = -1;
	}
}

int ports_start(struct run *r, struct err *err)
{
	struct ports *pt = &r->live.ports;
	char msg[sizeof(err->msg)];
	cleanup_close int rd = -1;
	int rep[2];
	size_t got;
	ssize_t n;
	pid_t parent = getpid(), pid;

	if (pt->n == 0)
		return 0;
	for (size_t i = 0; i < pt->n; i++) {
		const struct session_info *si = r->live.session ? &r->live.session->info : NULL;
		int rc;

		if (!pt->endpoints[i].http || (r->spec->opt->weaken & WEAKEN_LEASE_PORT_ONLY))
			continue;
		rc = lease_one(&pt->l[i], &pt->endpoints[i], si ? si->id : "-",
			       si ? si->generation : 0, err);
		if (rc < 0)
			return rc;
	}
	if (pipe2(rep, O_CLOEXEC) < 0)
		return err_sys(err, errno, "port relay: pipe");
	rd = rep[0];
	pid = fork();
	if (pid < 0) {
		close(rep[1]);
		return err_sys(err, errno, "port relay: fork");
	}
	if (pid == 0) {
		close(rep[0]);
		ports_relay(pt->l, pt->n, r->live.box.pidfd, parent, rep[1]);
	}
	close(rep[1]);
	/* Our unreaped child: its pid cannot have been reused yet. */
	pt->relay_pid = pid;
	pt->relay_pidfd = pidfd_open(pid, 0);
	if (pt->relay_pidfd < 0) {
		int e = errno;

		kill(pid, SIGKILL);
		waitpid(pid, NULL, 0);
		pt->relay_pid = 0;
		return err_sys(err, e, "port relay: pidfd_open");
	}
	/* The listeners are the relay's now. Ours must go: a listener left
	 * open here would keep accepting (into its backlog) after the relay
	 * is gone, so the endpoint would hang instead of refusing. */
	close_listeners(pt);
	/* The relay reports its set-up: EOF alone is success, text an error. */
	n = read_full(rd, msg, sizeof(msg) - 1);
	got = n > 0 ? (size_t)n : 0;
	msg[got] = '\0';
	if (got)
		return err_set(err, EIO, "port relay: %s", msg);
	if (r->live.session) {
		memcpy(r->live.session->info.endpoints, pt->endpoints,
		       pt->n * sizeof(pt->endpoints[0]));
		r->live.session->info.n_endpoints = pt->n;
	}
	return 0;
}

void ports_stop(struct ports *pt)
{
	close_listeners(pt);
	if (pt->relay_pid <= 0)
		return;
	/* By pidfd, and reaping exactly that child: a waitpid(-1) here could
	 * reap the sandbox's PID 1, whose status the supervisor reads. */
	pidfd_send_signal(pt->relay_pidfd, SIGKILL, NULL, 0);
	while (waitid(P_PIDFD, (id_t)pt->relay_pidfd, &(siginfo_t){0}, WEXITED) < 0 &&
	       errno == EINTR)
		;
	close(pt->relay_pidfd);
	pt->relay_pidfd = -1;
	pt->relay_pid = 0;
}
