/* The supervisor's side of a mediated network (docs/network.md): the
 * mediator's listening sockets are bound inside the sandbox's network
 * namespace by a short-lived helper that joins it before the child is
 * released (so no workload can take their ports first), handed back over a
 * socket pair, and given to paddock-mediator, which stays in the caller's
 * namespaces and dials from there. At the end it is stopped by pidfd and
 * its admissions log summed up for the record. */
#include "run.h"

#include <arpa/inet.h>
#include <cjson/cJSON.h>
#include <fcntl.h>
#include <limits.h>
#include <netinet/in.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/pidfd.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../../include/cleanup.h"
#include "../../include/exitcodes.h"
#include "../../include/io.h"
#include "../../policy/sha256.h"

#define PROXY_PORT 3128
#define DNS_PORT   53

/* What to bind: the proxy on 127.0.0.1, DNS on both wildcards (UDP and
 * TCP), and every port a rule names on both wildcards. */
static int plan(const struct policy *p, struct mediator_listener *out, size_t max)
{
	size_t n = 0;

#define ADD(k, f, port_)                                                    \
	do {                                                                \
		if (n == max)                                               \
			return -ENOSPC;                                     \
		out[n++] = (struct mediator_listener){                      \
		    .kind = (k), .family = (f), .port = (port_), .fd = -1}; \
	} while (0)
	ADD(MED_L_PROXY, AF_INET, PROXY_PORT);
	ADD(MED_L_DNS_UDP, AF_INET, DNS_PORT);
	ADD(MED_L_DNS_UDP, AF_INET6, DNS_PORT);
	ADD(MED_L_DNS_TCP, AF_INET, DNS_PORT);
	ADD(MED_L_DNS_TCP, AF_INET6, DNS_PORT);
	for (size_t i = 0; i < p->n_net_allow; i++)
		for (size_t k = 0; k < p->net_allow[i].n_ports; k++) {
			uint16_t port = p->net_allow[i].ports[k];
			bool seen = false;

			for (size_t j = 0; j < n && !seen; j++)
				seen = out[j].kind == MED_L_TCP && out[j].port == port;
			if (seen)
				continue;
			ADD(MED_L_TCP, AF_INET, port);
			ADD(MED_L_TCP, AF_INET6, port);
		}
#undef ADD
	return (int)n;
}

/* In the helper, inside the sandbox's user and network namespaces. */
static int bind_one(struct mediator_listener *l, struct err *err)
{
	struct sockaddr_storage ss = {0};
	struct sockaddr_in *in4 = (struct sockaddr_in *)&ss;
	struct sockaddr_in6 *in6 = (struct sockaddr_in6 *)&ss;
	bool udp = l->kind == MED_L_DNS_UDP;
	int one = 1, fd;

	fd = socket(l->family, (udp ? SOCK_DGRAM : SOCK_STREAM) | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd < 0)
		return err_sys(err, errno, "mediator: socket");
	/* Never SO_REUSEPORT: nothing else may share these ports. */
	if (l->family == AF_INET6 &&
	    setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &one, sizeof(one)) < 0)
		return err_sys(err, errno, "mediator: IPV6_V6ONLY");
	if (l->family == AF_INET) {
		in4->sin_family = AF_INET;
		in4->sin_port = htons(l->port);
		in4->sin_addr.s_addr = htonl(l->kind == MED_L_PROXY ? INADDR_LOOPBACK : INADDR_ANY);
	} else {
		in6->sin6_family = AF_INET6;
		in6->sin6_port = htons(l->port);
		in6->sin6_addr = in6addr_any;
	}
	if (bind(fd, (struct sockaddr *)&ss, l->family == AF_INET ? sizeof(*in4) : sizeof(*in6)) <
	    0)
		return err_sys(err, errno, "mediator: bind port %u", l->port);
	if (!udp && listen(fd, 128) < 0)
		return err_sys(err, errno, "mediator: listen port %u", l->port);
	l->fd = fd;
	return 0;
}

static int send_fds(int sock, const struct mediator_listener *l, size_t n)
{
	char cbuf[CMSG_SPACE(sizeof(int) * MED_LISTENERS_MAX)] = {0};
	int fds[MED_LISTENERS_MAX];
	char byte = 0;
	struct iovec iov = {.iov_base = &byte, .iov_len = 1};
	struct msghdr msg = {.msg_iov = &iov,
			     .msg_iovlen = 1,
			     .msg_control = cbuf,
			     .msg_controllen = CMSG_SPACE(sizeof(int) * n)};
	struct cmsghdr *cm = CMSG_FIRSTHDR(&msg);

	for (size_t i = 0; i < n; i++)
		fds[i] = l[i].fd;
	cm->cmsg_level = SOL_SOCKET;
	cm->cmsg_type = SCM_RIGHTS;
	cm->cmsg_len = CMSG_LEN(sizeof(int) * n);
	memcpy(CMSG_DATA(cm), fds, sizeof(int) * n);
	return sendmsg(sock, &msg, MSG_NOSIGNAL) == 1 ? 0 : -errno;
}

static _Noreturn void bind_helper(struct mediator_listener *l, size_t n, int pidfd, int sock)
{
	int keep[1] = {sock};
	struct sandbox_join j = {.parent = getppid(),
				 .pidfd = pidfd,
				 .nstypes = CLONE_NEWUSER | CLONE_NEWNET,
				 .keep = keep,
				 .n_keep = 1,
				 .flags = SANDBOX_JOIN_NOT_DUMPABLE | SANDBOX_JOIN_NULL_STDIO};
	struct err err = {0};
	int rc = sandbox_join(&j, &err);

	/* The join's capabilities in the sandbox's user namespace are what
	 * binds ports below 1024 there; the helper exits right after. */
	for (size_t i = 0; rc >= 0 && i < n; i++)
		rc = bind_one(&l[i], &err);
	if (rc >= 0)
		rc = send_fds(keep[0], l, n);
	if (rc < 0) {
		char msg[sizeof(err.msg)];

		snprintf(msg, sizeof(msg), "%s", err.msg[0] ? err.msg : strerror(-rc));
		(void)!write(keep[0], msg, strlen(msg));
	}
	_exit(rc < 0 ? EXIT_LAUNCHER : 0);
}

static int recv_fds(int sock, struct mediator_listener *l, size_t n, struct err *err)
{
	char cbuf[CMSG_SPACE(sizeof(int) * MED_LISTENERS_MAX)];
	char text[512];
	struct iovec iov = {.iov_base = text, .iov_len = sizeof(text) - 1};
	struct msghdr msg = {
	    .msg_iov = &iov, .msg_iovlen = 1, .msg_control = cbuf, .msg_controllen = sizeof(cbuf)};
	struct cmsghdr *cm;
	ssize_t k = recvmsg(sock, &msg, MSG_CMSG_CLOEXEC);

	cm = k > 0 ? CMSG_FIRSTHDR(&msg) : NULL;
	if (!cm || cm->cmsg_type != SCM_RIGHTS || cm->cmsg_len != CMSG_LEN(sizeof(int) * n)) {
		text[k > 0 ? k : 0] = '\0';
		return err_set(err, EIO, "mediator listeners: %s",
			       k > 1 ? text : "the helper failed");
	}
	for (size_t i = 0; i < n; i++)
		memcpy(&l[i].fd, CMSG_DATA(cm) + i * sizeof(int), sizeof(int));
	return 0;
}

int mediator_bind(struct sandbox *sb, void *arg, struct err *err)
{
	struct run *r = arg;
	struct mediator_state *ms = &r->live.mediator;
	int sv[2], rc;
	pid_t pid;

	rc = plan(r->spec->policy, ms->l, MED_LISTENERS_MAX);
	if (rc < 0)
		return err_set(err, ENOSPC,
			       "network.allow: more ports than the mediator can listen on");
	ms->n = (size_t)rc;
	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) < 0)
		return err_sys(err, errno, "mediator: socketpair");
	pid = fork();
	if (pid < 0) {
		close(sv[0]);
		close(sv[1]);
		return err_sys(err, errno, "mediator: fork");
	}
	if (pid == 0) {
		close(sv[0]);
		bind_helper(ms->l, ms->n, sb->pidfd, sv[1]);
	}
	close(sv[1]);
	rc = recv_fds(sv[0], ms->l, ms->n, err);
	close(sv[0]);
	/* Our unreaped child, by pid: nothing else has that pid yet. */
	while (waitpid(pid, NULL, 0) < 0 && errno == EINTR)
		;
	/* Still before "go": the child goes on only once the mediator said
	 * it serves, so no workload ever runs beside a missing one. */
	return rc < 0 ? rc : mediator_start(r, err);
}

/* ------------------------------------------------------ paddock-mediator */

/* HB-23: an attempt budget, as the policy wrote it (the deadline in ms). */
static void add_budget(cJSON *o, const struct policy_net_budget *b)
{
	char d[32];

	if (b->attempts)
		cJSON_AddNumberToObject(o, "attempts", b->attempts);
	snprintf(d, sizeof(d), "%llums", (unsigned long long)b->deadline_ms);
	if (b->deadline_ms)
		cJSON_AddStringToObject(o, "deadline", d);
}

/* A price (metered rules), as the policy wrote it; nothing for none. */
static void add_price(cJSON *o, const struct policy_net_price *p)
{
	cJSON *po;

	if (p->kind == POLICY_PRICE_FIXED) {
		cJSON_AddNumberToObject(o, "price", (double)p->base);
		return;
	}
	if (p->kind != POLICY_PRICE_FIELD || !(po = cJSON_AddObjectToObject(o, "price")))
		return;
	cJSON_AddStringToObject(po, "field", p->field);
	cJSON_AddNumberToObject(po, "per", (double)p->per);
	cJSON_AddNumberToObject(po, "base", (double)p->base);
	cJSON_AddNumberToObject(po, "max", (double)p->field_max);
}

/* A rule's "metered" (docs/network.md, "Budgets"). */
static void add_meter(cJSON *o, const struct policy_net_meter *m)
{
	cJSON *mo = cJSON_AddObjectToObject(o, "metered"), *ch;

	if (!mo)
		return;
	cJSON_AddStringToObject(mo, "budget", m->budget);
	cJSON_AddNumberToObject(mo, "cap", (double)m->cap);
	if ((m->charge_header || m->charge_field) && (ch = cJSON_AddObjectToObject(mo, "charge")))
		cJSON_AddStringToObject(ch, m->charge_header ? "header" : "field",
					m->charge_header ? m->charge_header : m->charge_field);
	add_price(mo, &m->price);
	if (m->lookup.prefix && (ch = cJSON_AddObjectToObject(mo, "lookup"))) {
		char rq[POLICY_LOOKUP_PATH_MAX + 16], d[32];

		snprintf(rq, sizeof(rq), "GET %s{key}%s", m->lookup.prefix, m->lookup.suffix);
		snprintf(d, sizeof(d), "%llums", (unsigned long long)m->lookup.timeout_ms);
		cJSON_AddStringToObject(ch, "request", rq);
		cJSON_AddStringToObject(ch, "timeout", d);
	}
}

/* A rule's grants, as the policy wrote them. */
static void add_grants(cJSON *o, const struct policy_net_rule *rule)
{
	cJSON *gs = cJSON_AddArrayToObject(o, "grants");

	for (size_t g = 0; gs && g < rule->n_grants; g++) {
		const struct policy_net_grant *gr = &rule->grants[g];
		cJSON *go = cJSON_CreateObject(), *ms, *vs = NULL;

		ms = cJSON_AddArrayToObject(go, "methods");
		for (size_t k = 0; ms && k < gr->n_methods; k++)
			cJSON_AddItemToArray(ms, cJSON_CreateString(gr->methods[k]));
		cJSON_AddStringToObject(go, "path", gr->path);
		for (size_t v = 0; v < gr->n_vars; v++) {
			cJSON *a;

			if (!gr->vars[v].n_values)
				continue;
			if (!vs)
				vs = cJSON_AddObjectToObject(go, "values");
			a = vs ? cJSON_AddArrayToObject(vs, gr->vars[v].name) : NULL;
			for (size_t k = 0; a && k < gr->vars[v].n_values; k++)
				cJSON_AddItemToArray(a, cJSON_CreateString(gr->vars[v].values[k]));
		}
		add_budget(go, &gr->budget);
		credentials_policy_json(go, gr);
		if (gr->price.kind != POLICY_PRICE_NONE) {
			cJSON *mo = cJSON_AddObjectToObject(go, "metered");

			if (mo)
				add_price(mo, &gr->price);
		}
		cJSON_AddItemToArray(gs, go);
	}
}

/* {"version":1,"network":{...}}: the effective network, as a policy the
 * mediator loads with the same parser. */
static cJSON *network_policy(const struct policy *p)
{
	cJSON *root = cJSON_CreateObject(), *net, *allow, *res;

	cJSON_AddNumberToObject(root, "version", 1);
	net = cJSON_AddObjectToObject(root, "network");
	cJSON_AddStringToObject(net, "mode", "mediated");
	allow = cJSON_AddArrayToObject(net, "allow");
	for (size_t i = 0; allow && i < p->n_net_allow; i++) {
		const struct policy_net_rule *rule = &p->net_allow[i];
		cJSON *o = cJSON_CreateObject(), *ports;

		cJSON_AddStringToObject(o, "host", rule->host);
		ports = cJSON_AddArrayToObject(o, "ports");
		for (size_t k = 0; ports && k < rule->n_ports; k++)
			cJSON_AddItemToArray(ports, cJSON_CreateNumber(rule->ports[k]));
		cJSON_AddStringToObject(o, "protocol", policy_net_proto_name(rule->protocol));
		if (rule->n_grants)
			add_grants(o, rule);
		if (rule->publish)
			cJSON_AddBoolToObject(o, "publish", true);
		if (rule->private)
			cJSON_AddBoolToObject(o, "private", true);
		add_budget(o, &rule->budget);
		if (rule->tool)
			cJSON_AddTrueToObject(o, "tool");
		if (rule->meter)
			add_meter(o, rule->meter);
		jobs_policy_json(o, rule);
		cJSON_AddItemToArray(allow, o);
	}
	{
		char hold[32];

		snprintf(hold, sizeof(hold), "%llums", (unsigned long long)p->net_hold_ms);
		cJSON_AddStringToObject(net, "hold", hold);
	}
	cJSON_AddStringToObject(net, "on_capture_loss",
				policy_capture_loss_name(p->net_on_capture_loss));
	jobs_actions_json(net, p);
	res = cJSON_AddObjectToObject(net, "resolve");
	for (size_t i = 0; res && i < p->n_net_resolve; i++)
		cJSON_AddStringToObject(res, p->net_resolve[i].host, p->net_resolve[i].addr);
	return root;
}

/* The configuration, for the fds as the mediator will have them: 3 the
 * configuration, 4 the log, 5... the listeners, then the ready pipe and
 * the release gate's control channel. */
static int config(const struct run *r, int *out, struct err *err)
{
	static const char *const kinds[] = {"proxy", "tcp", "dns-udp", "dns-tcp"};
	const struct mediator_state *ms = &r->live.mediator;
	cJSON *root = cJSON_CreateObject(), *ls, *pol = network_policy(r->spec->policy);
	cleanup_free char *text = NULL, *ptext = pol ? cJSON_PrintUnformatted(pol) : NULL;
	int fd;

	cJSON_Delete(pol);
	cJSON_AddStringToObject(root, "session", r->live.session ? r->live.session->info.id : "");
	cJSON_AddNumberToObject(root, "generation",
				r->live.session ? r->live.session->info.generation : 0);
	cJSON_AddNumberToObject(root, "log_fd", 4);
	{
		/* The run's evidence key: the admissions log is an evidence log
		 * of its own (source "mediator"). Only in the memfd the
		 * mediator reads. */
		char khex[2 * EVIDENCE_KEY_LEN + 1];

		for (int i = 0; i < EVIDENCE_KEY_LEN; i++)
			snprintf(khex + 2 * i, 3, "%02x", r->live.evidence.key[i]);
		cJSON_AddStringToObject(root, "key", khex);
	}
	cJSON_AddStringToObject(root, "policy", ptext ? ptext : "");
	/* --weaken dns-open: checked at prepare (prepare.c); parsed by the
	 * mediator. */
	if ((r->spec->opt->weaken & WEAKEN_DNS_OPEN) && getenv("PADDOCK_DNS_UPSTREAM"))
		cJSON_AddStringToObject(root, "dns_upstream", getenv("PADDOCK_DNS_UPSTREAM"));
	/* --weaken verbose-denial, retry-unbounded: the mediator's (HB-23). */
	if (r->spec->opt->weaken & WEAKEN_VERBOSE_DENIAL)
		cJSON_AddTrueToObject(root, "verbose_denial");
	if (r->spec->opt->trace_denials)
		cJSON_AddTrueToObject(root, "trace_denials");
	if (r->spec->opt->weaken & WEAKEN_RETRY_UNBOUNDED)
		cJSON_AddTrueToObject(root, "retry_unbounded");
	/* --weaken no-seq: the admissions log like the supervisor's. */
	if (r->spec->opt->weaken & WEAKEN_NO_SEQ)
		cJSON_AddTrueToObject(root, "log_unsequenced");
	credentials_config(root, r->spec);
	budget_config(root, r->spec);
	jobs_config(root, r->spec);
	ls = cJSON_AddArrayToObject(root, "listeners");
	for (size_t i = 0; ls && i < ms->n; i++) {
		cJSON *o = cJSON_CreateObject();

		cJSON_AddNumberToObject(o, "fd", 5 + (double)i);
		cJSON_AddStringToObject(o, "kind", kinds[ms->l[i].kind]);
		cJSON_AddNumberToObject(o, "port", ms->l[i].port);
		cJSON_AddItemToArray(ls, o);
	}
	cJSON_AddNumberToObject(root, "ready_fd", 5 + (double)ms->n);
	/* The release gate: paddock approve through us (server.c), the
	 * approvals file's text, --weaken gate-off. */
	cJSON_AddNumberToObject(root, "control_fd", 6 + (double)ms->n);
	if (r->spec->approvals)
		cJSON_AddStringToObject(root, "approvals", r->spec->approvals);
	if (r->spec->opt->weaken & WEAKEN_GATE_OFF)
		cJSON_AddBoolToObject(root, "gate_off", true);
	text = cJSON_PrintUnformatted(root);
	cJSON_Delete(root);
	if (!text || !ptext)
		return err_set(err, ENOMEM, "out of memory");
	fd = memfd_create("paddock-mediator-config", MFD_CLOEXEC);
	if (fd < 0)
		return err_sys(err, errno, "mediator: memfd");
	if (write_full(fd, text, strlen(text)) < 0 || lseek(fd, 0, SEEK_SET) < 0) {
		close(fd);
		return err_sys(err, errno, "mediator: config");
	}
	*out = fd;
	return 0;
}

static _Noreturn void exec_mediator(const char *path, int *keep, size_t n, pid_t parent)
{
	const struct sandbox_join j = {.parent = parent,
				       .pidfd = -1,
				       .keep = keep,
				       .n_keep = n,
				       .n_inherit = n,
				       .flags =
					   SANDBOX_JOIN_NOT_DUMPABLE | SANDBOX_JOIN_NULL_STDIN};
	struct err err = {0};

	if (sandbox_join(&j, &err) == 0) {
		execl(path, "paddock-mediator", "--config-fd", "3", (char *)NULL);
		err_sys(&err, errno, "exec %s", path);
	}
	fprintf(stderr, "paddock: %s\n", err.msg);
	_exit(EXIT_LAUNCHER);
}

/* The mediator's first word on its ready pipe: "ok" once it serves, or
 * "error MSG" (its one line, said by us) and its exit; nothing at all
 * within five seconds, or its end before a word, is an error too. A run
 * never starts its workload beside a mediator that is not there. */
static int wait_ready(int rd, struct err *err)
{
	struct pollfd p = {.fd = rd, .events = POLLIN};
	char buf[768];
	size_t len = 0;

	while (len < sizeof(buf) - 1) {
		ssize_t n;
		int k = poll(&p, 1, 5000);

		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0)
			return err_set(err, ETIMEDOUT, "mediator: not ready after 5 s");
		n = read(rd, buf + len, sizeof(buf) - 1 - len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		len += (size_t)n;
		if (memchr(buf, '\n', len))
			break;
	}
	buf[len] = '\0';
	buf[strcspn(buf, "\n")] = '\0';
	if (strcmp(buf, "ok") == 0)
		return 0;
	if (strncmp(buf, "error ", 6) == 0)
		return err_set(err, EINVAL, "%s", buf + 6);
	return err_set(err, EPIPE, "mediator: ended before it was ready");
}

int mediator_start(struct run *r, struct err *err)
{
	struct mediator_state *ms = &r->live.mediator;
	char path[PATH_MAX];
	int keep[4 + MED_LISTENERS_MAX];
	int ready[2] = {-1, -1}, ctl[2] = {-1, -1};
	cleanup_close int cfg = -1;
	pid_t pid, parent = getpid();
	int rc;

	if (sandbox_find_helper("paddock-mediator", path, sizeof(path)) < 0)
		return err_set(err, ENOENT, "cannot find paddock-mediator next to paddock");
	/* Beside the record when there is one (its directory was checked to
	 * be out of the sandbox's reach, and it outlives the session), else
	 * in the session's directory. */
	ms->log_fd = -1;
	if (r->spec->opt->record_path &&
	    snprintf(ms->log_path, sizeof(ms->log_path), "%s.admissions.jsonl",
		     r->spec->opt->record_path) < (int)sizeof(ms->log_path))
		ms->log_fd =
		    open(ms->log_path,
			 O_RDWR | O_CREAT | O_TRUNC | O_APPEND | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (ms->log_fd < 0) {
		if (snprintf(ms->log_path, sizeof(ms->log_path), "%s/%s/admissions.jsonl",
			     r->live.session->reg.path,
			     r->live.session->info.id) >= (int)sizeof(ms->log_path))
			ms->log_path[0] = '\0'; /* too long to show; the fd is what counts */
		ms->log_fd =
		    openat(r->live.session->dirfd, "admissions.jsonl",
			   O_RDWR | O_CREAT | O_TRUNC | O_APPEND | O_NOFOLLOW | O_CLOEXEC, 0600);
	}
	if (ms->log_fd < 0)
		return err_sys(err, errno, "mediator: admissions log %s", ms->log_path);
	/* The admissions log is MAC'd with the run's evidence key. A run whose
	 * evidence log could not be made (a warning, run.c) has none: the
	 * mediator then gets a key of its own, never the all-zero one anybody
	 * could MAC a forged line with. */
	if (!memcmp(r->live.evidence.key, (const unsigned char[EVIDENCE_KEY_LEN]){0},
		    EVIDENCE_KEY_LEN) &&
	    getrandom(r->live.evidence.key, EVIDENCE_KEY_LEN, 0) != EVIDENCE_KEY_LEN)
		return err_sys(err, errno, "mediator: a key for its admissions log");
	rc = config(r, &cfg, err);
	if (rc < 0)
		return rc;
	if (pipe2(ready, O_CLOEXEC) < 0)
		return err_sys(err, errno, "mediator: pipe");
	/* The release gate's channel: one end ours (the control socket's
	 * server relays paddock approve over it), the other the mediator's.
	 * Nothing of it is in the sandbox. */
	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, ctl) < 0) {
		close(ready[0]);
		close(ready[1]);
		return err_sys(err, errno, "mediator: socketpair");
	}
	keep[0] = cfg;
	keep[1] = ms->log_fd;
	for (size_t i = 0; i < ms->n; i++)
		keep[2 + i] = ms->l[i].fd;
	keep[2 + ms->n] = ready[1];
	keep[3 + ms->n] = ctl[1];
	pid = fork();
	if (pid < 0) {
		close(ready[0]);
		close(ready[1]);
		close(ctl[0]);
		close(ctl[1]);
		return err_sys(err, errno, "mediator: fork");
	}
	if (pid == 0)
		exec_mediator(path, keep, 4 + ms->n, parent);
	close(ready[1]);
	close(ctl[1]);
	ms->ctl_fd = ctl[0];
	if (r->live.session)
		r->live.session->gate_fd = ms->ctl_fd;
	ms->pid = pid;
	ms->stop_ms = jobs_stop_ms(r->spec->policy);
	ms->pidfd = pidfd_open(pid, 0);
	if (ms->pidfd < 0) {
		kill(pid, SIGKILL); /* our unreaped child */
		waitpid(pid, NULL, 0);
		ms->pid = 0;
		return err_sys(err, errno, "mediator: pidfd_open");
	}
	/* The listeners are the mediator's now. */
	for (size_t i = 0; i < ms->n; i++) {
		close(ms->l[i].fd);
		ms->l[i].fd = -1;
	}
	rc = wait_ready(ready[0], err);
	/* Kept: the mediator's last word comes on it at its end. */
	ms->ready_fd = ready[0];
	return rc;
}

/* After its end: "end N" on the ready pipe, the log lines it lost after
 * its last one (nothing: killed, or older; the record says unreported). */
static void last_word(struct mediator_state *ms)
{
	char buf[128];
	ssize_t n;
	unsigned long lost;

	if (ms->ready_fd < 0)
		return;
	n = read(ms->ready_fd, buf, sizeof(buf) - 1);
	buf[n > 0 ? n : 0] = '\0';
	if (sscanf(buf, "end %lu", &lost) == 1) {
		ms->end_reported = true;
		ms->end_lost = lost;
	}
	close(ms->ready_fd);
	ms->ready_fd = -1;
}

void mediator_stop(struct mediator_state *ms)
{
	struct pollfd p;

	for (size_t i = 0; i < ms->n; i++)
		if (ms->l[i].fd >= 0) {
			close(ms->l[i].fd);
			ms->l[i].fd = -1;
		}
	if (ms->ctl_fd >= 0) {
		close(ms->ctl_fd);
		ms->ctl_fd = -1;
	}
	if (ms->pid <= 0) {
		if (ms->ready_fd >= 0)
			close(ms->ready_fd);
		ms->ready_fd = -1;
		return;
	}
	/* SIGTERM: it logs the close of every open connection and settles
	 * the session's remote jobs; SIGKILL one second later at the latest
	 * (after the jobs' settle time, with jobs). By pidfd, reaping
	 * exactly it. */
	pidfd_send_signal(ms->pidfd, SIGTERM, NULL, 0);
	p = (struct pollfd){.fd = ms->pidfd, .events = POLLIN};
	if (poll(&p, 1, ms->stop_ms ? (int)ms->stop_ms : 1000) <= 0)
		pidfd_send_signal(ms->pidfd, SIGKILL, NULL, 0);
	while (waitid(P_PIDFD, (id_t)ms->pidfd, &(siginfo_t){0}, WEXITED) < 0 && errno == EINTR)
		;
	last_word(ms);
	close(ms->pidfd);
	ms->pidfd = -1;
	ms->pid = 0;
}

void mediator_summary(struct run *r)
{
	struct mediator_state *ms = &r->live.mediator;
	unsigned char digest[SHA256_DIGEST_LEN];
	struct stat st;
	char *text;
	ssize_t n;

	if (ms->log_fd < 0 || fstat(ms->log_fd, &st) < 0 || st.st_size > (64 << 20))
		return;
	text = malloc((size_t)st.st_size + 1);
	if (!text)
		return;
	n = pread(ms->log_fd, text, (size_t)st.st_size, 0);
	if (n >= 0) {
		struct evidence_report rep;
		const char *sid = r->live.session ? r->live.session->info.id : "";

		text[n] = '\0';
		sha256(text, (size_t)n, digest);
		sha256_hex(digest, r->out.net.log_sha256);
		r->out.net.reported = true;
		/* Chained and MAC'd by the mediator: checked before it is
		 * counted, and counted by parsing, never by searching text a
		 * client's names are in. */
		evidence_verify(text, (size_t)n, r->live.evidence.key, sid, 0, NULL, &rep);
		r->out.net.verified = rep.verdict == EVIDENCE_COMPLETE;
		r->out.net.seq = rep.last_seq;
		r->out.net.sequenced = rep.sequenced;
		r->out.net.missing = rep.missing;
		/* The lines no line reports: its last word, at its end. */
		r->out.net.dropped = rep.dropped + ms->end_lost;
		r->out.net.end_reported = ms->end_reported;
		snprintf(r->out.net.head, sizeof(r->out.net.head), "%s", rep.head);
		snprintf(r->out.net.epoch, sizeof(r->out.net.epoch), "%s", rep.epoch);
		snprintf(r->out.net.verify_reason, sizeof(r->out.net.verify_reason), "%s",
			 rep.n_reasons ? rep.reasons[0] : "");
		for (char *line = text; *line;) {
			char *end = strchr(line, '\n');
			cJSON *o =
			    cJSON_ParseWithLength(line, end ? (size_t)(end - line) : strlen(line));
			const cJSON *ev = cJSON_GetObjectItemCaseSensitive(o, "event");
			const cJSON *d = cJSON_GetObjectItemCaseSensitive(o, "decision");
			const cJSON *t = cJSON_GetObjectItemCaseSensitive(o, "type");

			if (cJSON_IsString(t) && strcmp(t->valuestring, "capture-restored") == 0) {
				const cJSON *rf = cJSON_GetObjectItemCaseSensitive(o, "refused");
				const cJSON *ad = cJSON_GetObjectItemCaseSensitive(o, "admitted");

				if (cJSON_IsNumber(rf) && rf->valuedouble >= 0 &&
				    rf->valuedouble < 1e12)
					r->out.net.blind_refused += (unsigned long)rf->valuedouble;
				if (cJSON_IsNumber(ad) && ad->valuedouble >= 0 &&
				    ad->valuedouble < 1e12)
					r->out.net.blind_admitted += (unsigned long)ad->valuedouble;
			}

			for (int k = 0;
			     cJSON_IsString(ev) && cJSON_IsString(d) &&
			     strcmp(ev->valuestring, "close") != 0 &&
			     strcmp(ev->valuestring, "outcome") != 0 && k < MEDIATOR_DECISIONS;
			     k++)
				if (strcmp(d->valuestring, mediator_decision_names[k]) == 0 &&
				    strcmp(ev->valuestring, "job") != 0)
					r->out.net.counts[k]++;
			jobs_log_line(&r->out.net, o);
			cJSON_Delete(o);
			if (!end)
				break;
			line = end + 1;
		}
	}
	free(text);
	snprintf(r->out.net.log_path, sizeof(r->out.net.log_path), "%s", ms->log_path);
}
