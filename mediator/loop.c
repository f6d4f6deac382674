/* The mediator's one event loop (plain epoll: no event library in the
 * trusted part). Every connection from the sandbox is decided by name
 * before anything is dialled:
 *
 *   proxy, CONNECT NAME:PORT      rule for NAME:PORT; a "tls" rule reads the
 *                                 ClientHello and checks its SNI is NAME
 *   proxy, GET http://NAME/...    an "http" rule; Host must be NAME; the
 *                                 request goes on in origin-form with
 *                                 Paddock-Admission and Connection: close
 *   transparent, to ADDR:PORT     ADDR must be a synthetic address of the
 *                                 DNS stub (so it stands for a NAME); then
 *                                 as above by the rule's protocol
 *   DNS                           an allowed name gets its synthetic
 *                                 address; every other name REFUSED
 *
 * One request per HTTP connection: what follows the body is not forwarded
 * (no pipelining past the parser). Upstream names are resolved with the
 * host's resolver (blocking: the mediator serves one sandbox) or the
 * policy's network.resolve, and a refused address class is never dialled
 * unless a resolve entry names it. */
#include "mediator.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <ifaddrs.h>
#include <netdb.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/mman.h>
#include <sys/signalfd.h>
#include <time.h>
#include <unistd.h>

#include "../policy/sha256.h"

#define BUF_SIZE HTTP_HEAD_MAX
/* A client that has not finished its request head (or ClientHello) by then
 * is dropped: a slow client cannot hold connection slots for ever. */
#define HEAD_TIMEOUT_MS 10000
#define CONNS_MAX	1024
#define LISTENERS_MAX	64

enum tag_kind {
	TAG_LISTENER,
	TAG_CLIENT,
	TAG_UPSTREAM
};

struct tag {
	enum tag_kind kind;
	void *ptr;
};

struct listener {
	struct tag tag;
	int fd;
	enum mediator_listener_kind kind;
	uint16_t port;
};

enum conn_state {
	C_HEAD,	   /* reading an HTTP head (proxy, or a transparent "http" rule) */
	C_SNI,	   /* reading a ClientHello to check its server name */
	C_RELAY,   /* upstream dialled (or connecting): bytes both ways */
	C_DNS,	   /* DNS over TCP: one query */
	C_CLOSING, /* a reply queued for the client, then close */
	C_HOLD,	   /* a publication: its body read, then held for an approval */
	C_LOOKUP,  /* a replay held while its receiver is asked (docs/budget.md) */
};

struct buf {
	char d[BUF_SIZE];
	size_t len;
};

/* An attempt of a metered rule (docs/network.md, "Budgets"). */
struct meter_conn {
	bool metered;	/* priced: its fields go into the log lines */
	bool active;	/* its bound is reserved in the ledger, not yet ended */
	size_t ledger;	/* index into mediator.ledgers */
	int64_t id;	/* its row */
	uint64_t bound; /* reserved */
	char note[512]; /* how it ended, for the outcome line */
};

/* A receiver lookup (docs/budget.md, "Lookup") on the connection's
 * upstream fd and buffers, while the connection is C_LOOKUP: the request
 * is written from u2c, the answer read into it; then the request's head
 * is admitted again with the result. */
enum lookup_phase {
	LK_NONE,
	LK_SENDING,
	LK_READING,
	LK_DONE,
};
struct lookup_conn {
	enum lookup_phase phase;
	bool by_meter;	   /* started by the ledger's unknown row (else the attempt budget) */
	int64_t op;	   /* the ledger's row, for the log */
	size_t sent;	   /* of the request in u2c */
	uint64_t deadline; /* CLOCK_MONOTONIC ms */
	enum lookup_result res;
	bool stated;
	uint64_t charge;
};

struct conn {
	struct tag ctag, utag;
	int cfd, ufd;
	enum conn_state state;
	bool proxy;
	bool connecting;
	bool c_eof, u_eof, c_stop; /* c_stop: read nothing more from the client */
	bool u_shut;		   /* our half of the upstream is shut */
	char name[POLICY_NET_NAME_MAX + 2];
	uint16_t port;
	const struct policy_net_rule *rule;
	char admission[48];
	char client[64];
	/* client -> upstream: pending bytes; body accounting for http */
	struct buf c2u, u2c;
	bool http_body;
	uint64_t body_left;
	bool chunked;
	struct http_chunked ch;
	uint64_t up, down;
	uint64_t since_ms;	/* accepted at (CLOCK_MONOTONIC) */
	bool dead;		/* closed; freed after the current batch of events */
	bool admitted;		/* an upstream was dialled for it: its close is logged */
	struct gate_hold *hold; /* a publication (the release gate), or NULL */
	bool http;		/* the client spoke HTTP: a refusal gets the terse response */
	bool read_only;		/* GET, HEAD or OPTIONS without a body (on_capture_loss) */
	struct attempt_conn at; /* HB-23: its operation's attempt (attempts.c) */
	struct meter_conn mt;	/* its reservation in a budget's ledger (metered rules) */
	long job;		/* a job submission's slot in mediator.jobs (jobs.c), or -1 */
	char adapter[512];	/* an adapter's fields for the log lines (adapter.c), or "" */
	char action[160];	/* its normalised action, for the ledger's route */
	bool unmetered;		/* --weaken unknown-event-allow passed it unparsed */
	bool lookup_cleared;	/* a receiver lookup found no trace of its operation */
	struct lookup_conn lk;	/* the receiver lookup of its operation, if any */
	/* Brokered credentials (credentials.c): the log's extra fields, the
	 * bytes of u2c held back (a secret's prefix), secrets redacted. */
	char note[192];
	size_t u2c_hold;
	unsigned long redacted;
	struct redact rd; /* redact.c: set up once an upstream answers */
	bool rd_http, rd_head;
	struct conn *next;
};

struct mediator {
	char dialled[INET6_ADDRSTRLEN]; /* the address mediator_open_upstream() last dialled */
	struct mediator_config cfg;
	struct mediator_names names;
	mediator_dial_fn dial;
	int ep;
	struct listener l[LISTENERS_MAX];
	size_t n_l;
	struct conn *conns;
	struct conn *dead; /* closed in this batch, freed after it */
	size_t n_conns;
	unsigned long next_id;
	unsigned long counts[MEDIATOR_DECISIONS];
	struct evidence_log log;	 /* the admissions log */
	int reserve_fd;			 /* spent to refuse a connection when out of fds */
	struct sockaddr_storage own[32]; /* the host's own addresses: never dialled */
	size_t n_own;
	struct gate *gate;	  /* the release gate */
	size_t held_bytes;	  /* wire bytes held by publications now */
	struct attempts attempts; /* HB-23: the operations' attempt budgets */
	/* The budgets' ledgers (ledger.c), opened on first use, and again
	 * after a failure: a ledger that is back serves again. */
	struct {
		char budget[POLICY_METER_ID_MAX + 1];
		struct ledger *l;
	} ledgers[POLICY_NET_RULES_MAX];
	size_t n_ledgers;
	struct mediator_jobs *jobs; /* the session's remote jobs (a rule declares "jobs") */
	/* While the log cannot be written (network.on_capture_loss): what
	 * was decided unrecorded, said when it can be written again. */
	struct {
		unsigned long refused, admitted;
	} blind;
};

/* Metered rules' part of the loop (below, after refuse()). */
static void meter_end(struct mediator *m, struct conn *c, bool sent);
/* Remote jobs' part of the loop (below, after the metered rules'). */
static void job_close(struct mediator *m, struct conn *c);

/* The release gate's log of an approval (below, after dial()). */
static void approval_log(struct mediator *m, const struct approval *a, const char *by);

static uint64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

static int default_dial(struct mediator *m, const struct sockaddr *sa, socklen_t len)
{
	int fd = socket(sa->sa_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);

	(void)m;
	if (fd < 0)
		return -errno;
	if (connect(fd, sa, len) < 0 && errno != EINPROGRESS) {
		int e = errno;

		close(fd);
		return -e;
	}
	return fd;
}

static void own_addresses(struct mediator *m)
{
	struct ifaddrs *ifa = NULL;

	if (getifaddrs(&ifa) < 0)
		return;
	for (struct ifaddrs *i = ifa; i && m->n_own < 32; i = i->ifa_next) {
		if (!i->ifa_addr ||
		    (i->ifa_addr->sa_family != AF_INET && i->ifa_addr->sa_family != AF_INET6))
			continue;
		memcpy(&m->own[m->n_own++], i->ifa_addr,
		       i->ifa_addr->sa_family == AF_INET ? sizeof(struct sockaddr_in)
							 : sizeof(struct sockaddr_in6));
	}
	freeifaddrs(ifa);
}

int mediator_new(const struct mediator_config *cfg, struct mediator **out)
{
	struct mediator *m = calloc(1, sizeof(*m));

	if (!m)
		return -ENOMEM;
	m->cfg = *cfg;
	m->dial = default_dial;
	m->reserve_fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
	m->log.fd = -1;
	if (cfg->log_fd >= 0 && evidence_open(&m->log, cfg->log_fd, cfg->key,
					      cfg->session ? cfg->session : "", "mediator") < 0) {
		free(m);
		return -EIO;
	}
	m->log.unsequenced = cfg->log_unsequenced;
	/* The first line of the source's epoch: the log is never empty, and
	 * what the checkpoint names began here. */
	{
		char f[64];

		snprintf(f, sizeof(f), "\"generation\":%u", cfg->generation);
		evidence_append(&m->log, "started", f);
	}
	m->ep = epoll_create1(EPOLL_CLOEXEC);
	if (m->ep < 0) {
		int e = errno;

		free(m);
		return -e;
	}
	own_addresses(m);
	for (size_t i = 0; i < cfg->policy->n_net_allow && !m->jobs; i++)
		if (cfg->policy->net_allow[i].jobs && !(m->jobs = calloc(1, sizeof(*m->jobs)))) {
			mediator_free(m);
			return -ENOMEM;
		}
	if (gate_new(cfg->gate_off, cfg->policy->net_hold_ms, &m->gate) < 0) {
		mediator_free(m);
		return -ENOMEM;
	}
	for (size_t i = 0; i < cfg->n_approvals; i++) {
		if (gate_add(m->gate, &cfg->approvals[i]) < 0) {
			mediator_free(m);
			return -ENOMEM;
		}
		approval_log(m, &cfg->approvals[i], "approvals-file");
	}
	*out = m;
	return 0;
}

unsigned long mediator_log_lost(const struct mediator *m)
{
	return m ? m->log.drops : 0;
}

void mediator_set_dial(struct mediator *m, mediator_dial_fn dial)
{
	m->dial = dial;
}

/* ----------------------------------------------------------- the log */

/* The log was impaired (a line was lost): before anything else, a line
 * that says what was decided meanwhile (it also carries the drops). true
 * when the log can be written (again). */
static bool capture_restored(struct mediator *m)
{
	char g[160];

	if (!m->log.drops)
		return true;
	snprintf(g, sizeof(g), "\"on_capture_loss\":\"%s\",\"refused\":%lu,\"admitted\":%lu",
		 policy_capture_loss_name(m->cfg.policy->net_on_capture_loss), m->blind.refused,
		 m->blind.admitted);
	evidence_append(&m->log, "capture-restored", g);
	if (m->log.drops)
		return false;
	m->blind.refused = m->blind.admitted = 0;
	return true;
}

/* One event of the admissions log: an evidence log of its own (source
 * "mediator": chained and MAC'd under the run's key, docs/evidence.md).
 * Every string a client chose (names, and whatever else) is escaped: a
 * name with a quote in it must not forge a field. */
static void log_line(struct mediator *m, const struct conn *c, const char *event,
		     enum mediator_decision d, const char *name, uint16_t port, const char *extra)
{
	char f[2560], qn[2 * POLICY_NET_NAME_MAX + 16], qc[160];

	/* If the log is still impaired, the drop of the restoring line
	 * stands for this event's. */
	if (m->log.fd < 0 || !capture_restored(m))
		return;
	evidence_json_string(name ? name : "", qn, sizeof(qn));
	evidence_json_string(c ? c->client : "", qc, sizeof(qc));
	snprintf(f, sizeof(f),
		 "\"event\":\"%s\",\"generation\":%u,\"admission\":\"%s\",\"client\":%s,"
		 "\"name\":%s,\"port\":%u,\"protocol\":\"%s\",\"decision\":\"%s\",\"rule\":%ld,"
		 "\"bytes_up\":%llu,\"bytes_down\":%llu%s",
		 event, m->cfg.generation, c ? c->admission : "", qc, qn, port,
		 c && c->rule ? policy_net_proto_name(c->rule->protocol) : "",
		 mediator_decision_name(d), c && c->rule ? (long)c->rule->index : -1L,
		 c ? (unsigned long long)c->up : 0ULL, c ? (unsigned long long)c->down : 0ULL,
		 extra ? extra : "");
	evidence_append(&m->log, "admission", f);
}

static void admit_id(struct mediator *m, struct conn *c)
{
	if (c->admission[0])
		return; /* one id per connection */
	snprintf(c->admission, sizeof(c->admission), "%s-%u-%lu",
		 m->cfg.session ? m->cfg.session : "x", m->cfg.generation, ++m->next_id);
}

/* The release gate's part of the loop (below, after dial()). */
static const char *hold_extra(const struct mediator *m, const struct conn *c, char *buf,
			      size_t size);
static void hold_free(struct mediator *m, struct conn *c);
static void hold_refill(struct conn *c);

/* --trace-denials: a refusal said on stderr as it happens (the caller's:
 * the operator's, never the workload's), at most 50 lines. */
static void trace_denial(struct mediator *m, const struct conn *c, enum mediator_decision d)
{
	static unsigned lines;
	const char *name = mediator_decision_name(d);

	if (!m->cfg.trace_denials || strncmp(name, "refused-", 8) != 0 || lines >= 50)
		return;
	lines++;
	fprintf(stderr, "paddock: denied: %s:%u (mediator: %s, rule %ld)\n",
		c->name[0] ? c->name : "?", c->port, name, c->rule ? (long)c->rule->index : -1L);
}

/* The credential's fields (credentials.c) after first's, or either. */
static const char *cred_extra(const struct conn *c, const char *first, char *buf, size_t size)
{
	if (!c->note[0])
		return first;
	if (!first)
		return c->note;
	snprintf(buf, size, "%s%s", first, c->note);
	return buf;
}

/* A decision with more fields: the gate's (a held publication's digest
 * and destination), more (HB-23: a denial's class and correlation) and the
 * credential's. */
static void decide_extra(struct mediator *m, struct conn *c, enum mediator_decision d,
			 const char *more)
{
	char extra[640], both[1536], all[1792];
	const char *gate = hold_extra(m, c, extra, sizeof(extra));

	admit_id(m, c);
	m->counts[d]++;
	trace_denial(m, c, d);
	if (gate && more)
		snprintf(both, sizeof(both), "%s%s", gate, more);
	log_line(m, c, "decision", d, c->name, c->port,
		 cred_extra(c,
			    gate && more ? both
			    : gate	 ? gate
					 : more,
			    all, sizeof(all)));
}

static void decide(struct mediator *m, struct conn *c, enum mediator_decision d)
{
	decide_extra(m, c, d, NULL);
}

/* ------------------------------------------------------ upstream dials */

static bool own_address(const struct mediator *m, const struct sockaddr *sa)
{
	for (size_t i = 0; i < m->n_own; i++) {
		const struct sockaddr *o = (const struct sockaddr *)&m->own[i];

		if (o->sa_family != sa->sa_family)
			continue;
		if (sa->sa_family == AF_INET &&
		    ((const struct sockaddr_in *)o)->sin_addr.s_addr ==
			((const struct sockaddr_in *)sa)->sin_addr.s_addr)
			return true;
		if (sa->sa_family == AF_INET6 &&
		    memcmp(&((const struct sockaddr_in6 *)o)->sin6_addr,
			   &((const struct sockaddr_in6 *)sa)->sin6_addr, 16) == 0)
			return true;
	}
	return false;
}

static int literal(const char *addr, uint16_t port, struct sockaddr_storage *ss, socklen_t *len)
{
	struct sockaddr_in *in4 = (struct sockaddr_in *)ss;
	struct sockaddr_in6 *in6 = (struct sockaddr_in6 *)ss;

	memset(ss, 0, sizeof(*ss));
	if (inet_pton(AF_INET, addr, &in4->sin_addr) == 1) {
		in4->sin_family = AF_INET;
		in4->sin_port = htons(port);
		*len = sizeof(*in4);
		return 0;
	}
	if (inet_pton(AF_INET6, addr, &in6->sin6_addr) == 1) {
		in6->sin6_family = AF_INET6;
		in6->sin6_port = htons(port);
		*len = sizeof(*in6);
		return 0;
	}
	return -EINVAL;
}

int mediator_open_upstream(struct mediator *m, const char *name, uint16_t port,
			   enum mediator_decision *decision)
{
	const char *fixed = mediator_resolve_entry(m->cfg.policy, name);
	struct addrinfo hints = {.ai_socktype = SOCK_STREAM}, *res = NULL;
	struct sockaddr_storage ss;
	socklen_t len = 0;
	char ports[8];
	int fd = -1;

	if (!mediator_rule(m->cfg.policy, name, port)) {
		*decision = MEDIATOR_NO_RULE;
		return -1;
	}
	if (fixed) {
		/* Named by the policy: even loopback, for this name only. */
		if (literal(fixed, port, &ss, &len) < 0) {
			*decision = MEDIATOR_ADDRESS;
			return -1;
		}
	} else {
		snprintf(ports, sizeof(ports), "%u", port);
		if (getaddrinfo(name, ports, &hints, &res) != 0) {
			*decision = MEDIATOR_UPSTREAM;
			return -1;
		}
		for (struct addrinfo *a = res; a && !len; a = a->ai_next) {
			if (!mediator_addr_public(a->ai_addr) || own_address(m, a->ai_addr))
				continue;
			memcpy(&ss, a->ai_addr, a->ai_addrlen);
			len = a->ai_addrlen;
		}
		freeaddrinfo(res);
		if (!len) {
			*decision = MEDIATOR_ADDRESS;
			return -1;
		}
	}
	/* The address is pinned for the connection: it is the one dialled. */
	if (!inet_ntop(ss.ss_family,
		       ss.ss_family == AF_INET ? (void *)&((struct sockaddr_in *)&ss)->sin_addr
					       : (void *)&((struct sockaddr_in6 *)&ss)->sin6_addr,
		       m->dialled, sizeof(m->dialled)))
		m->dialled[0] = '\0';
	fd = m->dial(m, (struct sockaddr *)&ss, len);
	*decision = fd < 0 ? MEDIATOR_UPSTREAM : MEDIATOR_ALLOWED;
	return fd < 0 ? -1 : fd;
}

/* ------------------------------------------------------------ conns */

static void watch(struct mediator *m, int fd, struct tag *t, uint32_t ev, int op)
{
	struct epoll_event e = {.events = ev, .data.ptr = t};

	(void)epoll_ctl(m->ep, op, fd, &e);
}

static void attempt_abandon(struct mediator *m, struct conn *c);
static void lookup_abandon(struct mediator *m, struct conn *c);

static void conn_close(struct mediator *m, struct conn *c)
{
	struct conn **pp;

	attempt_abandon(m, c);
	job_close(m, c);
	lookup_abandon(m, c);
	if (c->admitted) {
		char extra[48];

		snprintf(extra, sizeof(extra), ",\"redacted\":%lu", c->redacted);
		log_line(m, c, "close", MEDIATOR_ALLOWED, c->name, c->port,
			 c->redacted ? extra : NULL);
	}
	hold_free(m, c);
	if (c->cfd >= 0)
		close(c->cfd);
	if (c->ufd >= 0)
		close(c->ufd);
	c->cfd = c->ufd = -1;
	for (pp = &m->conns; *pp; pp = &(*pp)->next)
		if (*pp == c) {
			*pp = c->next;
			break;
		}
	m->n_conns--;
	/* Later events of this batch may still name it. */
	c->dead = true;
	c->next = m->dead;
	m->dead = c;
}

/* Outside the heap and never in a core dump: a request's buffer holds a
 * brokered secret once it is swapped in. */
static struct conn *conn_alloc(void)
{
	void *p = mmap(NULL, sizeof(struct conn), PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (p == MAP_FAILED)
		return NULL;
	(void)madvise(p, sizeof(struct conn), MADV_DONTDUMP);
	return p;
}

static void conn_free(struct conn *c)
{
	redact_free(&c->rd);
	explicit_bzero(c, sizeof(*c));
	munmap(c, sizeof(*c));
}

static void reap_dead(struct mediator *m)
{
	while (m->dead) {
		struct conn *c = m->dead;

		m->dead = c->next;
		conn_free(c);
	}
}

/* The interest of both fds from the buffers and the state. */
static void update(struct mediator *m, struct conn *c)
{
	uint32_t cev = 0, uev = 0;

	if (c->state == C_LOOKUP) {
		/* Nothing to or from the client meanwhile (its hang-up is still
		 * reported); the lookup's own fd as its phase needs. */
		watch(m, c->cfd, &c->ctag, 0, EPOLL_CTL_MOD);
		watch(m, c->ufd, &c->utag, c->lk.phase == LK_SENDING ? EPOLLOUT : EPOLLIN,
		      EPOLL_CTL_MOD);
		return;
	}
	hold_refill(c);
	if (!c->c_eof && !c->c_stop && c->c2u.len < BUF_SIZE && c->state != C_CLOSING)
		cev |= EPOLLIN;
	if (c->u2c.len > c->u2c_hold && !c->at.hold)
		cev |= EPOLLOUT;
	watch(m, c->cfd, &c->ctag, cev, EPOLL_CTL_MOD);
	if (c->ufd < 0)
		return;
	if (c->connecting || (c->state == C_RELAY && c->c2u.len))
		uev |= EPOLLOUT;
	if (!c->connecting && !c->u_eof && c->u2c.len < BUF_SIZE)
		uev |= EPOLLIN;
	watch(m, c->ufd, &c->utag, uev, EPOLL_CTL_MOD);
}

static void reply(struct conn *c, const char *text)
{
	size_t n = strlen(text);

	if (n > BUF_SIZE - c->u2c.len)
		n = BUF_SIZE - c->u2c.len;
	memcpy(c->u2c.d + c->u2c.len, text, n);
	c->u2c.len += n;
}

/* HB-23 (denial.c): the response to a refused or failed request, in
 * place of anything queued: the terse form of cls (the verbose one with
 * --weaken verbose-denial); the fields of the log line that record it
 * (class, correlation id, the digest of what was written) into extra. A
 * client that spoke no HTTP (transparent TCP or TLS) just sees the close. */
static void tell(struct mediator *m, struct conn *c, enum mediator_decision d,
		 enum denial_class cls, unsigned status, char *extra, size_t size)
{
	char text[1024], id[DENIAL_ID_LEN + 1], hex[2 * SHA256_DIGEST_LEN + 1];
	unsigned char dg[SHA256_DIGEST_LEN];
	int n;

	/* An attempt still undecided ends here (a refusal after it was
	 * admitted): nothing is held from the client any more. */
	if (c->at.hold)
		attempts_end(&m->attempts, &c->at, c->up ? ATTEMPT_UNKNOWN : ATTEMPT_TRANSIENT);
	meter_end(m, c, c->up > 0);
	c->c2u.len = 0;
	c->u2c.len = 0;
	c->state = C_CLOSING;
	denial_new_id(id);
	if (!c->proxy && !c->http) {
		snprintf(extra, size, ",\"class\":\"%s\",\"correlation\":\"%s\"",
			 denial_class_name(cls), id);
		return;
	}
	n = m->cfg.verbose_denial
		? denial_verbose(d, c->name, c->port, c->rule ? (long)c->rule->index : -1L, status,
				 text, sizeof(text))
		: denial_terse(cls, id, text, sizeof(text));
	if (n < 0)
		n = 0;
	text[n] = '\0';
	reply(c, text);
	sha256(text, (size_t)n, dg);
	sha256_hex(dg, hex);
	snprintf(extra, size, ",\"class\":\"%s\",\"correlation\":\"%s\",\"denial_sha256\":\"%s\"",
		 denial_class_name(cls), id, hex);
}

/* The attempt's fields of a log line, appended to out. */
static void attempt_fields(const struct conn *c, char *out, size_t size)
{
	size_t n = strlen(out);

	if (c->at.op_hex[0] && n < size)
		snprintf(out + n, size - n, ",\"op\":\"%s\",\"attempt\":%u", c->at.op_hex,
			 c->at.tries);
	n = strlen(out);
	if (c->mt.metered && n < size)
		snprintf(out + n, size - n, ",\"budget\":\"%s\",\"bound\":%llu%s",
			 c->rule->meter->budget, (unsigned long long)c->mt.bound, c->mt.note);
	n = strlen(out);
	if (c->adapter[0] && n < size)
		snprintf(out + n, size - n, "%s", c->adapter);
}

static void refuse(struct mediator *m, struct conn *c, enum mediator_decision d)
{
	char extra[1024];

	tell(m, c, d, denial_class_of(d), 0, extra, sizeof(extra));
	attempt_fields(c, extra, sizeof(extra));
	decide_extra(m, c, d, extra);
}

/* ------------------------------------------------------ metered rules */

/* The ledger of budget, opened now if it is not (and its dead owners'
 * reservations recovered as unknown), or NULL with err: the ledger is
 * unavailable and billable requests are refused until it is back. */
static struct ledger *ledger_for(struct mediator *m, const char *budget, size_t *slot,
				 struct err *err)
{
	unsigned recovered = 0;
	size_t i;

	for (i = 0; i < m->n_ledgers; i++)
		if (strcmp(m->ledgers[i].budget, budget) == 0)
			break;
	if (i == m->n_ledgers) {
		if (i == POLICY_NET_RULES_MAX) {
			err_set(err, ENOSPC, "too many budgets");
			return NULL;
		}
		snprintf(m->ledgers[i].budget, sizeof(m->ledgers[i].budget), "%s", budget);
		m->n_ledgers++;
	}
	*slot = i;
	if (m->ledgers[i].l)
		return m->ledgers[i].l;
	if (!m->cfg.budget_dir) {
		err_set(err, ENOENT, "no ledger directory");
		return NULL;
	}
	if (ledger_open(m->cfg.budget_dir, budget, m->cfg.ledger_busy_ms, &m->ledgers[i].l, err) <
	    0)
		return NULL;
	if (ledger_recover(m->ledgers[i].l, &recovered, err) < 0) {
		ledger_close(m->ledgers[i].l);
		m->ledgers[i].l = NULL;
		return NULL;
	}
	if (recovered) {
		char f[160];

		snprintf(f, sizeof(f), ",\"budget\":\"%s\",\"recovered_unknown\":%u", budget,
			 recovered);
		log_line(m, NULL, "ledger", MEDIATOR_ALLOWED, "", 0, f);
	}
	return m->ledgers[i].l;
}

/* A refusal of a metered attempt with the ledger's one line, escaped. */
static void meter_refuse(struct mediator *m, struct conn *c, enum mediator_decision d,
			 const struct err *err)
{
	char q[300];

	if (err && err->msg[0]) {
		evidence_json_string(err->msg, q, sizeof(q));
		snprintf(c->mt.note, sizeof(c->mt.note), ",\"ledger_error\":%s", q);
	}
	refuse(m, c, d);
}

/* ---------------------------------------------------- receiver lookups */

/* The end of c's lookup: the verdict on the answer in c->u2c (err < 0:
 * none was read), kept in c->lk and logged as an event "lookup" of its
 * own; the answer stays in u2c only when it is a receipt. */
static void lookup_done(struct mediator *m, struct conn *c, int err)
{
	static const char *const names[] = {"found", "not-found", "failed"};
	const struct policy_net_meter *mt = c->rule->meter;
	unsigned status = 0;
	char f[320];

	c->lk.res = LOOKUP_FAILED;
	c->lk.stated = false;
	if (err == 0)
		c->lk.res = lookup_verdict(mt, c->u2c.d, c->u2c.len, c->u2c.len == BUF_SIZE,
					   &status, &c->lk.stated, &c->lk.charge);
	/* --weaken lookup-fail-open: a lookup that could not be made reads
	 * as "not found", and the replay is dispatched. */
	if (c->lk.res == LOOKUP_FAILED && m->cfg.lookup_fail_open)
		c->lk.res = LOOKUP_NOT_FOUND;
	if (c->lk.res != LOOKUP_FOUND)
		c->u2c.len = 0;
	c->lk.phase = LK_DONE;
	snprintf(f, sizeof(f), ",\"lookup\":\"%s\",\"status\":%u,\"ledger_op\":%lld%s%s%s",
		 names[c->lk.res], status, (long long)c->lk.op,
		 err < 0 ? ",\"lookup_error\":\"" : "", err < 0 ? strerror(-err) : "",
		 err < 0 ? "\"" : "");
	if (c->lk.res == LOOKUP_FOUND && c->lk.stated) {
		size_t k = strlen(f);

		snprintf(f + k, sizeof(f) - k, ",\"charge\":%llu",
			 (unsigned long long)c->lk.charge);
	}
	log_line(m, c, "lookup", MEDIATOR_ALLOWED, c->name, c->port, f);
}

/* Ask the receiver of c's metered rule whether the operation of rq (its
 * Idempotency-Key) took place (docs/budget.md, "Lookup"): a connection of
 * the mediator's own to the rule's name and port (its pinned address,
 * never a refused one), never the workload's, within the lookup's
 * timeout. The request is written from c->u2c and the answer read into
 * it while c waits in C_LOOKUP; the loop serves every other connection
 * meanwhile. 0: under way; -1: it ended at once (c->lk has the failure). */
static int lookup_start(struct mediator *m, struct conn *c, const struct http_request *rq,
			int64_t op, bool by_meter)
{
	const struct policy_net_meter *mt = c->rule->meter;
	enum mediator_decision d;
	const char *key;
	size_t kn = 0;
	int w, fd;

	admit_id(m, c);
	c->lk = (struct lookup_conn){.by_meter = by_meter, .op = op};
	c->u2c.len = 0;
	key = meter_idempotency_key(rq, c->c2u.d, &kn);
	w = key ? lookup_request(&mt->lookup, c->name, c->port, key, kn, c->admission, c->u2c.d,
				 BUF_SIZE)
		: -EINVAL;
	if (w <= 0) {
		lookup_done(m, c, -EINVAL);
		return -1;
	}
	fd = mediator_open_upstream(m, c->name, c->port, &d);
	if (fd < 0) {
		lookup_done(m, c, d == MEDIATOR_UPSTREAM ? -ECONNREFUSED : -EACCES);
		return -1;
	}
	c->u2c.len = (size_t)w;
	c->ufd = fd;
	c->lk.phase = LK_SENDING;
	c->lk.deadline = now_ms() + mt->lookup.timeout_ms;
	c->state = C_LOOKUP;
	watch(m, fd, &c->utag, EPOLLOUT, EPOLL_CTL_ADD);
	return 0;
}

static void http_head(struct mediator *m, struct conn *c);

/* The lookup ended (err < 0: without an answer): its fd closed, and the
 * request's head admitted again, now with the lookup's result. */
static void lookup_finish(struct mediator *m, struct conn *c, int err)
{
	close(c->ufd);
	c->ufd = -1;
	lookup_done(m, c, err);
	c->state = C_HEAD;
	if (c->lk.by_meter)
		memset(&c->mt, 0, sizeof(c->mt)); /* reserved again, from the top */
	http_head(m, c);
	if (!c->dead)
		update(m, c);
}

/* An event of the lookup's fd: the request written, the answer read. */
static void lookup_io(struct mediator *m, struct conn *c)
{
	int err = 0;
	socklen_t sl = sizeof(err);

	if (c->lk.phase == LK_SENDING) {
		if (c->lk.sent == 0 &&
		    (getsockopt(c->ufd, SOL_SOCKET, SO_ERROR, &err, &sl) < 0 || err)) {
			lookup_finish(m, c, err ? -err : -errno);
			return;
		}
		while (c->lk.sent < c->u2c.len) {
			ssize_t w = send(c->ufd, c->u2c.d + c->lk.sent, c->u2c.len - c->lk.sent,
					 MSG_NOSIGNAL);

			if (w < 0 && (errno == EAGAIN || errno == EINTR)) {
				update(m, c);
				return;
			}
			if (w <= 0) {
				lookup_finish(m, c, w < 0 ? -errno : -EPIPE);
				return;
			}
			c->lk.sent += (size_t)w;
		}
		c->u2c.len = 0;
		c->lk.phase = LK_READING;
		update(m, c);
		return;
	}
	/* The answer to its end (the request said Connection: close), or as
	 * much as fits. */
	while (c->u2c.len < BUF_SIZE) {
		ssize_t n = read(c->ufd, c->u2c.d + c->u2c.len, BUF_SIZE - c->u2c.len);

		if (n > 0) {
			c->u2c.len += (size_t)n;
			continue;
		}
		if (n < 0 && (errno == EAGAIN || errno == EINTR)) {
			update(m, c);
			return;
		}
		if (n < 0)
			err = -errno;
		break;
	}
	lookup_finish(m, c, err);
}

/* A connection that ends while its lookup waits (the client left, the
 * mediator stops): logged; an attempt's reservation, never sent, is
 * released. */
static void lookup_abandon(struct mediator *m, struct conn *c)
{
	if (c->state != C_LOOKUP)
		return;
	c->state = C_CLOSING;
	lookup_done(m, c, -ECONNABORTED);
	if (!c->lk.by_meter)
		meter_end(m, c, false);
}

/* A replay answered by the receipt in c->u2c: nothing is dispatched. */
static void lookup_answer(struct mediator *m, struct conn *c, int64_t op)
{
	char extra[160];

	c->c2u.len = 0;
	c->c_stop = true;
	c->state = C_CLOSING;
	snprintf(extra, sizeof(extra), ",\"ledger_op\":%lld,\"receipt_bytes\":%zu", (long long)op,
		 c->u2c.len);
	decide_extra(m, c, MEDIATOR_RECEIPT, extra);
}

/* A replay of an operation the ledger holds as unknown (or settled from a
 * receipt), on a rule with a lookup: 0 to go on (not found: row id is
 * reserved again for it), 1 while the receiver is asked, -1 when it was
 * answered or refused. */
static int meter_lookup(struct mediator *m, struct conn *c, const struct http_request *rq,
			struct ledger *l, const struct ledger_request *lr, int64_t id, bool receipt)
{
	struct err err = {0};
	uint64_t bound = 0;
	enum lookup_result res;
	int r;

	if (c->lk.phase == LK_NONE && lookup_start(m, c, rq, id, true) == 0)
		return 1; /* held: admitted again with the answer */
	res = c->lk.res;
	if (res == LOOKUP_FOUND) {
		r = receipt ? 0 : ledger_lookup_settle(l, id, c->lk.stated, c->lk.charge, &err);
		/* -ENOENT: another mediator's lookup settled it first. */
		if (r < 0 && r != -ENOENT) {
			c->u2c.len = 0;
			meter_refuse(m, c, MEDIATOR_LEDGER, &err);
			return -1;
		}
		lookup_answer(m, c, id);
		return -1;
	}
	if (res == LOOKUP_NOT_FOUND && !receipt) {
		r = ledger_lookup_claim(l, id, lr, &bound, &err);
		if (r == LEDGER_OK) {
			c->mt.active = true;
			c->mt.id = id;
			c->mt.bound = bound;
			c->lookup_cleared = true;
			snprintf(c->mt.note, sizeof(c->mt.note),
				 ",\"ledger_op\":%lld,\"lookup\":\"not-found\"", (long long)id);
			return 0;
		}
		meter_refuse(m, c,
			     r == LEDGER_CAP ? MEDIATOR_BUDGET_CAP
			     : r == -ENOENT  ? MEDIATOR_IN_FLIGHT
					     : MEDIATOR_LEDGER,
			     r < 0 && r != -ENOENT ? &err : NULL);
		return -1;
	}
	/* Failed (or a receipt no longer found): still unknown, held. */
	meter_refuse(m, c, MEDIATOR_HELD_UNKNOWN, NULL);
	return -1;
}

/* The bound of a metered rule's attempt, reserved before anything is
 * dialled: 0 to go on (reserved, or not metered, or declared free), 1 to
 * wait for the body its bound is read from, -1 when it was refused. */
static int meter_admit(struct mediator *m, struct conn *c, const struct http_request *rq,
		       const char *path)
{
	const struct policy_net_meter *mt = c->rule->meter;
	long grant = c->rule->n_grants ? mediator_grant_find(c->rule, rq->method, path) : -1;
	const struct policy_net_price *price;
	struct ledger_request lr = {0};
	char key[65], route[640];
	struct err err = {0};
	struct ledger *l;
	int64_t id = 0;
	uint64_t bound = 0;
	int r;

	if (!mt || c->mt.metered || c->unmetered)
		return 0;
	price = policy_meter_price(c->rule, grant);
	r = meter_bound(price, rq, c->c2u.d, c->c2u.len, c->c_eof, &bound);
	if (r == 1)
		return 1;
	c->mt.metered = true;
	if (r < 0 && !m->cfg.unpriced_free) {
		/* Strict: no price, or no bound that can be defended, is
		 * never a price of 0 (LiteLLM #25874). */
		meter_refuse(m, c, MEDIATOR_UNPRICED, NULL);
		return -1;
	}
	if (r == 0 && bound == 0)
		return 0; /* declared free: not billable, the ledger is not needed */
	l = ledger_for(m, mt->budget, &c->mt.ledger, &err);
	if (!l) {
		meter_refuse(m, c, MEDIATOR_LEDGER, &err);
		return -1;
	}
	if (c->action[0])
		snprintf(route, sizeof(route), "%s (%s %s:%u)", c->action, rq->method, c->name,
			 c->port);
	else
		snprintf(route, sizeof(route), "%s %s:%u%.*s", rq->method, c->name, c->port,
			 (int)strcspn(path, "?#"), path);
	lr = (struct ledger_request){
	    .budget = mt->budget,
	    .cap = mt->cap,
	    .op_key =
		meter_op_key(rq, c->c2u.d, mt->budget, c->name, c->port, key) == 0 ? key : NULL,
	    .session = m->cfg.session ? m->cfg.session : "",
	    .route = route,
	    .bound = bound,
	    .check_then_charge = m->cfg.check_then_charge};
	c->mt.bound = bound;
	r = ledger_reserve(l, &lr, &id, &err);
	if ((r == LEDGER_UNKNOWN || r == LEDGER_RECEIPT) && mt->lookup.prefix)
		return meter_lookup(m, c, rq, l, &lr, id, r == LEDGER_RECEIPT);
	if (r == LEDGER_OK && c->lk.phase == LK_DONE)
		c->u2c.len = 0; /* a receipt asked for before the row ended elsewhere */
	if (r == LEDGER_RECEIPT)
		r = LEDGER_UNKNOWN; /* no lookup now (another policy): held */
	if (r != LEDGER_OK) {
		meter_refuse(m, c,
			     r == LEDGER_CAP	     ? MEDIATOR_BUDGET_CAP
			     : r == LEDGER_UNKNOWN   ? MEDIATOR_HELD_UNKNOWN
			     : r == LEDGER_IN_FLIGHT ? MEDIATOR_IN_FLIGHT
						     : MEDIATOR_LEDGER,
			     r < 0 ? &err : NULL);
		return -1;
	}
	c->mt.active = true;
	c->mt.id = id;
	snprintf(c->mt.note, sizeof(c->mt.note), ",\"ledger_op\":%lld", (long long)id);
	return 0;
}

/* The ledger's row of c ended as state (with charge when settled), in the
 * outcome line's fields. A ledger that fails here keeps the row reserved:
 * the bound stays held, and recovery makes it unknown, never released. */
static void meter_note(struct conn *c, const char *state, const char *source, uint64_t charge,
		       const struct err *err)
{
	char q[300] = "\"\"";

	if (err && err->msg[0])
		evidence_json_string(err->msg, q, sizeof(q));
	snprintf(
	    c->mt.note, sizeof(c->mt.note),
	    ",\"ledger_op\":%lld,\"ledger\":\"%s\",\"charge_source\":\"%s\",\"charge\":%llu%s%s",
	    (long long)c->mt.id, err && err->msg[0] ? "reserved" : state, source,
	    (unsigned long long)charge, err && err->msg[0] ? ",\"ledger_error\":" : "",
	    err && err->msg[0] ? q : "");
}

/* A response came: the row is settled with the charge it states, or with
 * the bound when it states none (what was reserved is what may have been
 * spent; the contract never guesses lower). */
static void meter_settle(struct mediator *m, struct conn *c, bool stated, uint64_t charge)
{
	struct err err = {0};

	if (!c->mt.active)
		return;
	c->mt.active = false;
	if (!stated)
		charge = c->mt.bound;
	(void)ledger_settle(m->ledgers[c->mt.ledger].l, c->mt.id, charge,
			    stated ? "receiver" : "bound", &err);
	meter_note(c, "settled", stated ? "receiver" : "bound", charge, &err);
}

/* No response to read: sent, it may have been charged, and the bound stays
 * held as unknown (--weaken release-on-timeout releases it, and lets the
 * attempt be sent again, as LiteLLM did); never sent, it is released. */
static void meter_end(struct mediator *m, struct conn *c, bool sent)
{
	struct ledger *l;
	struct err err = {0};
	bool release = !sent || m->cfg.release_on_timeout;

	if (!c->mt.active)
		return;
	c->mt.active = false;
	l = m->ledgers[c->mt.ledger].l;
	if (release)
		(void)ledger_release(l, c->mt.id, sent ? "timeout" : "not-sent", &err);
	else
		(void)ledger_unknown(l, c->mt.id, &err);
	meter_note(c, release ? "released" : "unknown", sent ? "none" : "not-sent", 0, &err);
	if (sent && m->cfg.release_on_timeout && c->at.op_hex[0] &&
	    m->attempts.op[c->at.op].state == ATTEMPTS_UNKNOWN)
		m->attempts.op[c->at.op].state = ATTEMPTS_OPEN;
}

/* ------------------------------------------------------- remote jobs */

/* A job submission (jobs.c) gets its slot before anything is reserved or
 * dialled: one that could not be tracked is never sent. 0, or -1 when it
 * was refused. */
static int job_admit(struct mediator *m, struct conn *c, const char *method, const char *path)
{
	enum job_route jr = jobs_route(c->rule, method, path);
	struct mediator_job *j;

	if (jr == JOB_NONE || !m->jobs || c->job >= 0)
		return 0; /* none, or its slot taken when its head was first read */
	if (m->jobs->n == JOBS_MAX) {
		refuse(m, c, MEDIATOR_JOBS_FULL);
		return -1;
	}
	c->job = (long)m->jobs->n;
	j = &m->jobs->j[m->jobs->n++];
	*j = (struct mediator_job){.rule = c->rule,
				   .port = c->port,
				   .outlive = jr == JOB_OUTLIVE,
				   .pending = true,
				   .row = -1};
	snprintf(j->name, sizeof(j->name), "%s", c->name);
	return 0;
}

static void job_line(struct mediator *m, const struct conn *c, const struct mediator_job *j,
		     const char *ledger)
{
	char f[1024], qs[80], qr[80];

	evidence_json_string(j->state, qs, sizeof(qs));
	evidence_json_string(j->remote[0] ? j->remote : "", qr, sizeof(qr));
	snprintf(f, sizeof(f),
		 ",\"job\":\"%s\",\"job_admission\":\"%s\",\"owner\":\"%s\",\"lease\":\"%s\","
		 "\"state\":%s,\"remote_state\":%s,\"cancel\":\"%s\",\"charge\":%llu,"
		 "\"charge_known\":%s,\"exposure\":%llu,\"budget\":\"%s\",\"ledger_op\":%lld,"
		 "\"ledger\":\"%s\"",
		 j->id, j->admission, m->cfg.session ? m->cfg.session : "",
		 j->outlive ? "outlive" : "session", qs, qr, j->cancel[0] ? j->cancel : "not-sent",
		 (unsigned long long)j->charge, j->has_charge ? "true" : "false",
		 (unsigned long long)j->exposure, j->rule->meter ? j->rule->meter->budget : "",
		 (long long)j->row, ledger);
	log_line(m, c, "job", MEDIATOR_ALLOWED, j->name, j->port, f);
}

/* A reserved job with an id, in its ledger row's jobs entry: what
 * `paddock budget jobs` needs to ask its service about it once the session
 * is gone (a retained job's final charge), the address its submission
 * went to included. Best effort: without it the row is the operator's to
 * settle by hand, as before. */
static void job_note(struct mediator *m, const struct mediator_job *j)
{
	char status[POLICY_JOB_PATH_MAX + 16];
	struct err err = {0};

	if (!j->reserved || !j->id[0] || !j->address[0] || !m->ledgers[j->ledger].l)
		return;
	snprintf(status, sizeof(status), "%s %s", j->rule->jobs->status.method,
		 j->rule->jobs->status.path);
	(void)ledger_job_note(m->ledgers[j->ledger].l, j->row,
			      &(struct ledger_job){.job = j->id,
						   .admission = j->admission,
						   .host = j->name,
						   .port = j->port,
						   .address = j->address,
						   .status = status,
						   .outlive = j->outlive},
			      &err);
}

/* A submission's response: a 2xx one leases the job (the id its body
 * names; none: the job is unknown at the end) and the reservation becomes
 * the job's, held until its end. true when it did. */
static bool job_lease(struct mediator *m, struct conn *c, unsigned status)
{
	struct mediator_job *j;

	if (c->job < 0)
		return false;
	j = &m->jobs->j[c->job];
	c->job = -1;
	j->pending = false;
	if (status < 200 || status >= 300) {
		j->voided = true;
		return false;
	}
	if (jobs_parse_id(c->u2c.d, c->u2c.len, j->id) < 0)
		j->id[0] = '\0';
	snprintf(j->admission, sizeof(j->admission), "%s", c->admission);
	snprintf(j->state, sizeof(j->state), "leased");
	j->exposure = c->mt.bound;
	j->reserved = c->mt.active;
	j->ledger = c->mt.ledger;
	j->row = c->mt.active ? c->mt.id : -1;
	c->mt.active = false;
	snprintf(c->mt.note, sizeof(c->mt.note), ",\"ledger_op\":%lld,\"ledger\":\"leased\"",
		 (long long)j->row);
	job_note(m, j);
	job_line(m, c, j, j->reserved ? "reserved" : "free");
	return true;
}

/* A submission's connection ends unanswered: sent, a job may run (its
 * end is unknown; the ledger made its bound unknown); never sent, none. */
static void job_close(struct mediator *m, struct conn *c)
{
	if (c->job < 0)
		return;
	m->jobs->j[c->job].pending = false;
	m->jobs->j[c->job].voided = c->up == 0;
	m->jobs->j[c->job].exposure = c->mt.bound;
	snprintf(m->jobs->j[c->job].admission, sizeof(m->jobs->j[c->job].admission), "%s",
		 c->admission);
	c->job = -1;
}

static int job_dial(void *arg, const char *name, uint16_t port)
{
	enum mediator_decision d;

	return mediator_open_upstream(arg, name, port, &d);
}

/* A job's end, in the ledger and the log: ended with the charge the
 * service states (none stated: the exposure, never less), unknown (held),
 * retained (held: the lease goes on), stopped (--weaken
 * local-exit-is-stop: released). */
static void job_end(void *arg, struct mediator_job *j)
{
	struct mediator *m = arg;
	struct ledger *l = j->reserved ? m->ledgers[j->ledger].l : NULL;
	struct err err = {0};
	const char *ledger = j->reserved ? "reserved" : "free";

	if (l && strcmp(j->state, "ended") == 0) {
		if (!j->has_charge)
			j->charge = j->exposure;
		(void)ledger_settle(l, j->row, j->charge, j->has_charge ? "receiver" : "bound",
				    &err);
		ledger = err.msg[0] ? "reserved" : "settled";
	} else if (l && strcmp(j->state, "unknown") == 0) {
		(void)ledger_unknown(l, j->row, &err);
		ledger = err.msg[0] ? "reserved" : "unknown";
	} else if (l && strcmp(j->state, "stopped") == 0) {
		(void)ledger_release(l, j->row, "local-exit", &err);
		ledger = err.msg[0] ? "reserved" : "released";
	}
	if (l)
		(void)ledger_job_end(l, j->row, j->state, NULL);
	job_line(m, NULL, j, ledger);
}

void mediator_end_jobs(struct mediator *m)
{
	const struct jobs_io io = {.arg = m, .dial = job_dial, .end = job_end};

	if (!m || !m->jobs || !m->jobs->n)
		return;
	/* Connections still open are closed first: a submission whose answer
	 * never came is then known to be unanswered. */
	while (m->conns)
		conn_close(m, m->conns);
	reap_dead(m);
	jobs_reconcile(m->jobs, policy_jobs_settle_ms(m->cfg.policy), m->cfg.local_exit_is_stop,
		       &io);
}

/* ---------------------------------------------------- provider adapters */

/* An adapter rule's request (adapter.c): parsed into the action schema
 * and checked against network.actions before anything is reserved or
 * dialled; the adapter, the route (primary, or the fallback of which
 * rule) and the action go into its log lines. 0 to go on, 1 to wait for
 * its body, -1 when it was refused. */
static int adapter_admit(struct mediator *m, struct conn *c, const struct http_request *rq,
			 const char *path)
{
	struct adapter_action a;
	const char *why = "";
	char act[512] = "null", route[128], q[160];
	int r;

	if (!c->rule->adapter || c->adapter[0])
		return 0;
	r = adapter_parse(c->rule->adapter, rq, path, c->c2u.d, c->c2u.len, c->c_eof, &a, &why);
	if (r == 1)
		return 1;
	if (r == 0) {
		adapter_action_json(&a, act, sizeof(act));
		snprintf(c->action, sizeof(c->action), "%s %s via %s", a.kind, a.model,
			 policy_adapter_name(c->rule->adapter));
	}
	evidence_json_string(why, q, sizeof(q));
	if (c->rule->fallback)
		snprintf(route, sizeof(route), "\"fallback\",\"fallback_of\":\"%s\"",
			 c->rule->fallback);
	else
		snprintf(route, sizeof(route), "\"primary\"");
	snprintf(c->adapter, sizeof(c->adapter),
		 ",\"adapter\":\"%s\",\"route\":%s,\"action\":%s%s%s",
		 policy_adapter_name(c->rule->adapter), route, act, r < 0 ? ",\"unparsed\":" : "",
		 r < 0 ? q : "");
	if (r < 0 && m->cfg.unknown_event_allow) {
		/* --weaken unknown-event-allow: passed as it is, unchecked and
		 * unmetered (the default approval HB-21 must catch). */
		c->unmetered = true;
		return 0;
	}
	if (r < 0) {
		refuse(m, c, MEDIATOR_UNPARSED);
		return -1;
	}
	if (adapter_allows(m->cfg.policy->net_actions, &a, &why) < 0) {
		size_t n = strlen(c->adapter);

		evidence_json_string(why, q, sizeof(q));
		snprintf(c->adapter + n, sizeof(c->adapter) - n, ",\"refused_by\":%s", q);
		refuse(m, c, MEDIATOR_ACTION);
		return -1;
	}
	return 0;
}

/* HB-23: the attempt of an admitted http request (attempts.c): 0 to go
 * on, 1 to wait for more of its body, -1 when it was refused. */
static int attempt_admit(struct mediator *m, struct conn *c, const struct http_request *rq,
			 const char *path)
{
	enum mediator_decision d = MEDIATOR_MALFORMED;
	long grant = c->rule->n_grants ? mediator_grant_find(c->rule, rq->method, path) : -1;
	int r =
	    attempts_admit(&m->attempts, c->rule, grant, rq, c->c2u.d, c->c2u.len, c->c_eof,
			   c->name, c->port, path, now_ms(), m->cfg.retry_unbounded, &c->at, &d);

	/* An unknown operation on a rule with a lookup: the receiver is
	 * asked (once per request: the ledger's lookup may have asked). */
	if (r < 0 && d == MEDIATOR_HELD_UNKNOWN && c->rule->meter &&
	    c->rule->meter->lookup.prefix) {
		enum lookup_result res = LOOKUP_NOT_FOUND;

		if (!c->lookup_cleared) {
			if (c->lk.phase == LK_NONE && lookup_start(m, c, rq, c->mt.id, false) == 0)
				return 1; /* held, its reservation kept: admitted again */
			res = c->lk.res;
		}
		if (res == LOOKUP_FOUND) {
			lookup_answer(m, c, c->mt.id);
			return -1;
		}
		if (res == LOOKUP_NOT_FOUND &&
		    attempts_reopen(&m->attempts, c->rule, grant, rq, c->c2u.d, c->c2u.len, c->name,
				    c->port, path) == 0)
			r = attempts_admit(&m->attempts, c->rule, grant, rq, c->c2u.d, c->c2u.len,
					   c->c_eof, c->name, c->port, path, now_ms(),
					   m->cfg.retry_unbounded, &c->at, &d);
	}
	if (r < 0)
		refuse(m, c, d);
	return r;
}

/* The end of an attempt, logged as an "outcome" event (not a decision:
 * the request was admitted): how it ended, the upstream's status and,
 * when a tool's error was replaced, its length and SHA-256 (the detail
 * itself stays out of the log: it may carry what the upstream echoed). */
static void outcome(struct mediator *m, struct conn *c, const char *how, unsigned status,
		    const char *detail, size_t detail_len, const char *extra)
{
	char f[1280], hex[2 * SHA256_DIGEST_LEN + 1] = "";
	unsigned char dg[SHA256_DIGEST_LEN];
	size_t n;

	snprintf(f, sizeof(f), ",\"outcome\":\"%s\",\"status\":%u", how, status);
	attempt_fields(c, f, sizeof(f));
	n = strlen(f);
	if (detail) {
		sha256(detail, detail_len, dg);
		sha256_hex(dg, hex);
		snprintf(f + n, sizeof(f) - n, ",\"detail_sha256\":\"%s\",\"detail_bytes\":%zu",
			 hex, detail_len);
		n = strlen(f);
	}
	snprintf(f + n, sizeof(f) - n, "%s", extra ? extra : "");
	log_line(m, c, "outcome", MEDIATOR_ALLOWED, c->name, c->port, f);
}

/* The upstream could not be reached (a transient failure of the attempt):
 * the client is told, then the connection ends. */
static void upstream_failed(struct mediator *m, struct conn *c, bool dialled)
{
	char extra[1024];

	if (c->at.watch)
		attempts_end(&m->attempts, &c->at, ATTEMPT_TRANSIENT);
	if (c->ufd >= 0) {
		close(c->ufd);
		c->ufd = -1;
	}
	tell(m, c, MEDIATOR_UPSTREAM, DENIAL_TRANSIENT, 0, extra, sizeof(extra));
	attempt_fields(c, extra, sizeof(extra));
	if (dialled) {
		/* Admitted and logged as such: the failure is an event of its own. */
		m->counts[MEDIATOR_UPSTREAM]++;
		log_line(m, c, "upstream-failed", MEDIATOR_UPSTREAM, c->name, c->port, extra);
	} else {
		decide_extra(m, c, MEDIATOR_UPSTREAM, extra);
	}
}

/* A held response, once more of it (or its end) is in: relayed, still
 * held, or replaced by the terse form of its class. */
static void attempt_response(struct mediator *m, struct conn *c)
{
	enum denial_class cls = DENIAL_UNKNOWN;
	unsigned status = 0;
	char extra[1024];
	enum attempts_verdict v;

	uint64_t charge = 0;
	int k = -ENOENT;

	if (!c->at.hold)
		return;
	/* A metered attempt: the response is held until the charge it
	 * states can be read (its head, or its body for a JSON member). */
	if (c->mt.active) {
		k = meter_charge(c->rule->meter, c->u2c.d, c->u2c.len, c->u_eof,
				 c->u2c.len == BUF_SIZE, &charge);
		/* No charge declared: an adapter reads its shape's usage. */
		if (k == -ENOENT && c->rule->adapter && !c->rule->meter->charge_header &&
		    !c->rule->meter->charge_field)
			k = adapter_charge(c->rule->adapter, c->u2c.d, c->u2c.len, c->u_eof,
					   c->u2c.len == BUF_SIZE, &charge);
		if (k == 1)
			return;
	}
	/* A job submission: the job's id is in the whole response. */
	if (c->job >= 0 && !c->u_eof && c->u2c.len < BUF_SIZE)
		return;
	v = attempts_response(&m->attempts, &c->at, c->u2c.d, c->u2c.len, c->u_eof,
			      c->u2c.len == BUF_SIZE, m->cfg.verbose_denial, &status, &cls);
	if (v == ATTEMPTS_WAIT)
		return;
	if (status && job_lease(m, c, status))
		; /* the reservation is the job's now, held until its end */
	else if (status)
		meter_settle(m, c, k == 0, charge);
	else
		meter_end(m, c, true); /* sent, and no response to read */
	if (v == ATTEMPTS_PASS) {
		outcome(m, c,
			denial_status_class(status) < 0
			    ? "succeeded"
			    : denial_class_name((enum denial_class)denial_status_class(status)),
			status, NULL, 0, NULL);
		return;
	}
	{
		/* The detail is logged by digest before tell() drops it. */
		char hex[2 * SHA256_DIGEST_LEN + 1];
		unsigned char dg[SHA256_DIGEST_LEN];
		size_t dn = c->u2c.len;
		char f[1280];

		sha256(c->u2c.d, dn, dg);
		sha256_hex(dg, hex);
		if (c->ufd >= 0) {
			close(c->ufd);
			c->ufd = -1;
		}
		tell(m, c, status ? MEDIATOR_ALLOWED : MEDIATOR_UPSTREAM, cls, status, extra,
		     sizeof(extra));
		snprintf(f, sizeof(f), ",\"detail_sha256\":\"%s\",\"detail_bytes\":%zu%s", hex, dn,
			 extra);
		outcome(m, c, denial_class_name(cls), status, NULL, 0, f);
	}
}

/* A held attempt past its deadline: unknown once its request went out
 * (it may be executing), transient if nothing was sent. */
static void attempt_overdue(struct mediator *m, struct conn *c, uint64_t now)
{
	char extra[1024];
	bool sent = c->up > 0;

	if (!c->at.hold || !c->at.deadline_ms || now < c->at.deadline_ms || c->state != C_RELAY)
		return;
	attempts_end(&m->attempts, &c->at, sent ? ATTEMPT_UNKNOWN : ATTEMPT_TRANSIENT);
	if (c->ufd >= 0) {
		close(c->ufd);
		c->ufd = -1;
	}
	tell(m, c, MEDIATOR_UPSTREAM, sent ? DENIAL_UNKNOWN : DENIAL_TRANSIENT, 0, extra,
	     sizeof(extra));
	outcome(m, c, sent ? "unknown" : "transient", 0, NULL, 0, extra);
	update(m, c);
}

/* A connection that ends with its attempt undecided (the client left,
 * the relay failed): unknown if its request went out. */
static void attempt_abandon(struct mediator *m, struct conn *c)
{
	if (!c->at.hold)
		return;
	attempts_end(&m->attempts, &c->at, c->up > 0 ? ATTEMPT_UNKNOWN : ATTEMPT_TRANSIENT);
	meter_end(m, c, c->up > 0);
	outcome(m, c, c->up > 0 ? "unknown" : "transient", 0, NULL, 0, NULL);
}

/* network.on_capture_loss (docs/evidence.md): capture is impaired while
 * the admissions log cannot be written (its last line was lost: a full
 * disk, an I/O error); then the policy says what may still go out.
 * true: refuse c. The DNS stub is not asked: it sends nothing anywhere. */
static bool capture_refuses(struct mediator *m, const struct conn *c)
{
	if (m->log.fd < 0 || capture_restored(m))
		return false;
	if (m->cfg.policy->net_on_capture_loss == POLICY_CAPTURE_ALLOW ||
	    (m->cfg.policy->net_on_capture_loss == POLICY_CAPTURE_READ_ONLY && c->read_only)) {
		m->blind.admitted++;
		return false;
	}
	m->blind.refused++;
	return true;
}

static void dial(struct mediator *m, struct conn *c)
{
	enum mediator_decision d;
	int fd;

	if (capture_refuses(m, c)) {
		refuse(m, c, MEDIATOR_CAPTURE);
		return;
	}
	fd = mediator_open_upstream(m, c->name, c->port, &d);
	if (fd < 0) {
		if (d == MEDIATOR_UPSTREAM) {
			upstream_failed(m, c, false);
			return;
		}
		refuse(m, c, d);
		return;
	}
	{
		char extra[1024] = "";

		attempt_fields(c, extra, sizeof(extra));
		decide_extra(m, c, MEDIATOR_ALLOWED, extra);
	}
	c->admitted = true;
	if (c->job >= 0) /* where its status is asked after the session (job_note) */
		snprintf(m->jobs->j[c->job].address, sizeof(m->jobs->j[c->job].address), "%s",
			 m->dialled);
	c->ufd = fd;
	c->connecting = true;
	c->state = C_RELAY;
	watch(m, fd, &c->utag, EPOLLOUT, EPOLL_CTL_ADD);
}

/* ---------------------------------------------------- the release gate */

/* A publication (docs/network.md, "Release gate"): its head rewritten in
 * c2u, its body read into body (never logged: only its digest and
 * length), then held until an approval of digest for dest is spent on it
 * or hold_ms passed. Released, the body's wire bytes follow the head. */
struct gate_hold {
	struct gate_body body;
	struct approval_dest dest;
	char digest[65];    /* "" until the body is complete */
	size_t head;	    /* the rewritten head's length in c2u */
	uint64_t declared;  /* Content-Length, for one too large to read */
	uint64_t since_ms;  /* the head came; once waiting, the body was complete */
	bool waiting;	    /* complete and not approved: logged "held" */
	size_t sent;	    /* released: wire bytes handed to c2u */
	const char *reason; /* of a refusal: "timeout", "too-large", "busy" */
};

/* The gate's fields of a decision line: digest, length, the destination
 * without its query (the workload chose it; only whether there is one),
 * the session's taint, the reason of a refusal. NULL without a hold. */
static const char *hold_extra(const struct mediator *m, const struct conn *c, char *buf,
			      size_t size)
{
	const struct gate_hold *h = c->hold;
	char dest[300], qd[400];

	if (!h)
		return NULL;
	snprintf(dest, sizeof(dest), "%s:%u%.*s", h->dest.host, h->dest.port,
		 (int)strcspn(h->dest.target, "?"), h->dest.target);
	evidence_json_string(dest, qd, sizeof(qd));
	snprintf(buf, size,
		 ",\"digest\":\"%s\",\"length\":%llu,\"dest\":%s,\"query\":%s,\"tainted\":%s%s%s%s",
		 h->digest, (unsigned long long)(h->declared ? h->declared : h->body.ent_len), qd,
		 strchr(h->dest.target, '?') ? "true" : "false",
		 gate_tainted(m->gate) ? "true" : "false", h->reason ? ",\"reason\":\"" : "",
		 h->reason ? h->reason : "", h->reason ? "\"" : "");
	return buf;
}

/* An approval the gate took (the file's at the start, paddock approve's
 * as it comes): an "approval" event of the admissions log (no decision:
 * it is not counted as one), its digest and destination without the
 * query, so an approval, its release and the sink's record join on the
 * digest. */
static void approval_log(struct mediator *m, const struct approval *a, const char *by)
{
	char f[600], dest[300], qd[400];

	if (m->log.fd < 0)
		return;
	snprintf(dest, sizeof(dest), "%s:%u%.*s", a->dest.host, a->dest.port,
		 (int)strcspn(a->dest.target, "?"), a->dest.target);
	evidence_json_string(dest, qd, sizeof(qd));
	snprintf(f, sizeof(f),
		 "\"event\":\"approval\",\"generation\":%u,\"digest\":\"%s\",\"dest\":%s,"
		 "\"query\":%s,\"by\":\"%s\"",
		 m->cfg.generation, a->digest, qd, strchr(a->dest.target, '?') ? "true" : "false",
		 by);
	evidence_append(&m->log, "admission", f);
}

static void hold_free(struct mediator *m, struct conn *c)
{
	if (!c->hold)
		return;
	m->held_bytes -= c->hold->body.raw_len;
	gate_body_free(&c->hold->body);
	free(c->hold);
	c->hold = NULL;
}

static bool hold_pending(const struct conn *c)
{
	return c->hold && c->hold->sent < c->hold->body.raw_len;
}

/* Released: the next wire bytes of the body into c2u as it drains. */
static void hold_refill(struct conn *c)
{
	struct gate_hold *h = c->hold;
	size_t n;

	if (!h || c->state != C_RELAY || !hold_pending(c))
		return;
	n = h->body.raw_len - h->sent;
	if (n > BUF_SIZE - c->c2u.len)
		n = BUF_SIZE - c->c2u.len;
	memcpy(c->c2u.d + c->c2u.len, h->body.raw + h->sent, n);
	c->c2u.len += n;
	h->sent += n;
}

/* One line for the operator: what is held (and how to approve it) or
 * refused. Digest and length only, never the body. */
static void hold_say(const struct mediator *m, const struct conn *c, const char *what)
{
	const struct gate_hold *h = c->hold;

	fprintf(stderr, "paddock: %s a publication to %s:%u%.*s (sha256:%s, %llu bytes)%s%s%s%s\n",
		what, h->dest.host, h->dest.port, (int)strcspn(h->dest.target, "?"), h->dest.target,
		h->digest[0] ? h->digest : "-",
		(unsigned long long)(h->declared ? h->declared : h->body.ent_len),
		h->waiting ? "; approve it with: paddock approve " : "",
		h->waiting ? (m->cfg.session ? m->cfg.session : "SESSION") : "",
		h->waiting ? " sha256:" : "", h->waiting ? h->digest : "");
}

static void hold_refuse(struct mediator *m, struct conn *c, enum mediator_decision d,
			const char *reason)
{
	c->hold->reason = reason;
	c->hold->waiting = false;
	refuse(m, c, d);
	hold_say(m, c, "refused");
}

static void hold_release(struct mediator *m, struct conn *c)
{
	c->hold->waiting = false;
	decide(m, c, MEDIATOR_RELEASED);
	dial(m, c);
}

/* The body is complete: an approval spent on it now, or held. */
static void hold_try(struct mediator *m, struct conn *c)
{
	struct gate_hold *h = c->hold;

	if (gate_take(m->gate, h->digest, &h->dest)) {
		hold_release(m, c);
		return;
	}
	if (h->waiting)
		return;
	if (!gate_hold_ms(m->gate)) {
		hold_refuse(m, c, MEDIATOR_UNAPPROVED, "unapproved");
		return;
	}
	h->waiting = true;
	h->since_ms = now_ms();
	decide(m, c, MEDIATOR_HELD);
	hold_say(m, c, "held");
}

/* The client's bytes after the head go into the body; past its end they
 * are dropped and the client is read no more. */
static void hold_feed(struct mediator *m, struct conn *c)
{
	struct gate_hold *h = c->hold;
	size_t before = h->body.raw_len;
	long k;

	if (h->body.done) {
		c->c2u.len = h->head;
		return;
	}
	k = gate_body_feed(&h->body, c->c2u.d + h->head, c->c2u.len - h->head, GATE_BODY_MAX);
	c->c2u.len = h->head;
	m->held_bytes += h->body.raw_len - before;
	if (k == -EINVAL) {
		hold_refuse(m, c, MEDIATOR_MALFORMED, "malformed");
		return;
	}
	if (k < 0 || m->held_bytes > GATE_HELD_MAX) {
		hold_refuse(m, c, MEDIATOR_UNAPPROVED, k == -E2BIG ? "too-large" : "busy");
		return;
	}
	if (!h->body.done) {
		if (c->c_eof)
			hold_refuse(m, c, MEDIATOR_MALFORMED, "incomplete");
		return;
	}
	c->c_stop = true;
	gate_body_digest(&h->body, h->digest);
	hold_try(m, c);
}

/* After rewrite() (head bytes of c2u): is this request a publication?
 * Then it is the gate's (true): read, held or refused. */
static bool hold_start(struct mediator *m, struct conn *c, const struct http_request *rq,
		       const char *path, size_t head)
{
	bool has_body = rq->chunked || (rq->has_length && rq->content_length);
	struct gate_hold *h;

	if (!gate_holds(m->gate, c->rule, has_body))
		return false;
	h = c->hold = calloc(1, sizeof(*c->hold));
	if (!h) {
		refuse(m, c, MEDIATOR_UPSTREAM);
		return true;
	}
	gate_body_init(&h->body, rq->chunked, rq->has_length ? rq->content_length : 0);
	snprintf(h->dest.host, sizeof(h->dest.host), "%.*s", POLICY_NET_NAME_MAX, c->name);
	h->dest.port = c->port;
	snprintf(h->dest.target, sizeof(h->dest.target), "%s", path);
	h->head = head;
	h->since_ms = now_ms();
	/* The body is the gate's: nothing of it passes body() unread. */
	c->body_left = 0;
	c->chunked = false;
	c->state = C_HOLD;
	if (strlen(path) > APPROVAL_TARGET_MAX ||
	    (rq->has_length && rq->content_length > GATE_BODY_MAX)) {
		h->declared = rq->has_length ? rq->content_length : 0;
		hold_refuse(m, c, MEDIATOR_UNAPPROVED, "too-large");
		return true;
	}
	hold_feed(m, c);
	return true;
}

/* Held past hold_ms: refused. A body not complete within the head's
 * time: refused as malformed. */
static void hold_expire(struct mediator *m, struct conn *c, uint64_t now)
{
	struct gate_hold *h = c->hold;

	if (h->waiting && now - h->since_ms >= gate_hold_ms(m->gate))
		hold_refuse(m, c, MEDIATOR_UNAPPROVED, "timeout");
	else if (!h->waiting && !h->body.done && now - h->since_ms > HEAD_TIMEOUT_MS)
		hold_refuse(m, c, MEDIATOR_MALFORMED, "incomplete");
	else
		return;
	update(m, c);
}

/* A response of c's rule reached the workload: a private rule's taints
 * the session, and every open connection to a rule that is not private
 * and may still carry the workload's bytes (a tunnel, a body still
 * streaming) is closed: what was read may not leave that way. */
static void taint(struct mediator *m, struct conn *c)
{
	if (!c->rule || !gate_taint(m->gate, c->rule))
		return;
	fprintf(stderr,
		"paddock: the session read from a private rule (network.allow[%zu]): from now on "
		"every publication needs an approval\n",
		c->rule->index);
	for (struct conn *o = m->conns, *next; o; o = next) {
		next = o->next;
		if (o == c || !o->rule || o->rule->private || o->state != C_RELAY || o->c_stop ||
		    o->c_eof)
			continue;
		decide(m, o, MEDIATOR_TAINTED);
		conn_close(m, o);
	}
}

/* paddock approve, through the supervisor: "approve DIGEST [DEST]". With
 * DEST the approval is stored (and spent at once on a request held for
 * it); without, it is bound to the held request with that digest. */
static void approve(struct mediator *m, struct approval *a, bool has_dest, char *out, size_t size)
{
	struct conn *held = NULL;
	char dest[APPROVAL_TARGET_MAX + POLICY_NET_NAME_MAX + 8];

	for (struct conn *c = m->conns; c && !held; c = c->next)
		if (c->state == C_HOLD && c->hold->waiting && !strcmp(c->hold->digest, a->digest) &&
		    (!has_dest || gate_dest_equal(&c->hold->dest, &a->dest)))
			held = c;
	if (!has_dest && !held) {
		snprintf(out, size,
			 "error nothing is held with digest sha256:%s; name its destination "
			 "(--dest HOST:PORT/PATH) to approve it ahead",
			 a->digest);
		return;
	}
	if (!has_dest)
		a->dest = held->hold->dest;
	if (gate_add(m->gate, a) < 0) {
		snprintf(out, size, "error too many approvals waiting (%d)", GATE_APPROVALS_MAX);
		return;
	}
	approval_log(m, a, "paddock-approve");
	approval_dest_format(&a->dest, dest, sizeof(dest));
	if (!held) {
		snprintf(out, size, "ok approved sha256:%s for %s (single use)", a->digest, dest);
		return;
	}
	(void)gate_take(m->gate, a->digest, &a->dest);
	hold_release(m, held);
	update(m, held);
	snprintf(out, size, "ok released sha256:%s to %s", a->digest, dest);
}

static void control(struct mediator *m, struct listener *l)
{
	char buf[APPROVAL_TARGET_MAX + POLICY_NET_NAME_MAX + 128], out[APPROVAL_TARGET_MAX + 512];
	ssize_t n = recv(l->fd, buf, sizeof(buf) - 1, MSG_DONTWAIT);
	struct approval a;
	const char *why;
	bool has_dest;

	if (n < 0 && (errno == EAGAIN || errno == EINTR))
		return;
	if (n <= 0) {
		/* The supervisor is gone: watched no more. */
		(void)epoll_ctl(m->ep, EPOLL_CTL_DEL, l->fd, NULL);
		return;
	}
	buf[n] = '\0';
	if (approval_parse_request(buf, &a, &has_dest, &why) < 0)
		snprintf(out, sizeof(out), "error the approval %s", why);
	else
		approve(m, &a, has_dest, out, sizeof(out));
	(void)send(l->fd, out, strlen(out), MSG_DONTWAIT | MSG_NOSIGNAL);
}

/* An HTTP request to forward: origin-form, hop-by-hop headers dropped,
 * the admission id added, one request only. */
static int rewrite(struct conn *c, const struct http_request *rq, const char *path)
{
	static const char *const hop[] = {"connection",	       "proxy-connection",
					  "keep-alive",	       "proxy-authorization",
					  "paddock-admission", "te",
					  "upgrade",	       NULL};
	char head[BUF_SIZE];
	size_t n = 0, rest = c->c2u.len - rq->head_len;
	int k;

	k = snprintf(head, sizeof(head), "%s %s HTTP/1.1\r\n", rq->method, path);
	if (k < 0 || (size_t)k >= sizeof(head))
		return -E2BIG;
	n = (size_t)k;
	for (size_t i = 0; i < rq->n_headers; i++) {
		const struct http_header *h = &rq->h[i];
		bool drop = false;

		for (size_t j = 0; hop[j] && !drop; j++)
			drop = h->name_len == strlen(hop[j]) &&
			       strncasecmp(c->c2u.d + h->name, hop[j], h->name_len) == 0;
		if (drop)
			continue;
		k = snprintf(head + n, sizeof(head) - n, "%.*s: %.*s\r\n", (int)h->name_len,
			     c->c2u.d + h->name, (int)h->value_len, c->c2u.d + h->value);
		if (k < 0 || (size_t)k >= sizeof(head) - n)
			return -E2BIG;
		n += (size_t)k;
	}
	k = snprintf(head + n, sizeof(head) - n,
		     "Paddock-Admission: %s\r\nConnection: close\r\n\r\n", c->admission);
	if (k < 0 || (size_t)k >= sizeof(head) - n || n + (size_t)k + rest > BUF_SIZE)
		return -E2BIG;
	n += (size_t)k;
	memmove(c->c2u.d + n, c->c2u.d + rq->head_len, rest);
	memcpy(c->c2u.d, head, n);
	c->c2u.len = n + rest;
	c->http_body = true;
	c->chunked = rq->chunked;
	c->body_left = rq->has_length ? rq->content_length : 0;
	return (int)n;
}

/* Of the client's bytes from offset off, how many belong to the body; the
 * rest is dropped and the client is read no more. */
static void body(struct conn *c, size_t off)
{
	size_t n = c->c2u.len - off, keep;

	if (!c->http_body)
		return;
	if (c->chunked) {
		long k = http_chunked_scan(&c->ch, c->c2u.d + off, n);

		keep = k < 0 ? 0 : (size_t)k;
		if (k < 0 || c->ch.done)
			c->c_stop = true;
	} else {
		keep = n < c->body_left ? n : (size_t)c->body_left;
		c->body_left -= keep;
		if (!c->body_left)
			c->c_stop = true;
	}
	c->c2u.len = off + keep;
}

static void http_head(struct mediator *m, struct conn *c)
{
	struct http_request rq;
	const char *why, *path = NULL;
	char hname[POLICY_NET_NAME_MAX + 8];
	uint16_t hport = 0;
	int r = http_parse_request(c->c2u.d, c->c2u.len, &rq, &why);

	if (r == 0 && !c->c_eof)
		return;
	if (r <= 0) {
		refuse(m, c, MEDIATOR_MALFORMED);
		return;
	}
	c->http = strcmp(rq.method, "CONNECT") != 0;
	/* Read-only for on_capture_loss: a method that changes nothing by
	 * definition (RFC 9110 9.2.1), and no body to carry data out. */
	c->read_only = (strcmp(rq.method, "GET") == 0 || strcmp(rq.method, "HEAD") == 0 ||
			strcmp(rq.method, "OPTIONS") == 0) &&
		       !rq.chunked && (!rq.has_length || rq.content_length == 0);
	if (c->proxy && strcmp(rq.method, "CONNECT") == 0) {
		if (http_target_authority(rq.target, c->name, sizeof(c->name), &c->port) < 0) {
			refuse(m, c, MEDIATOR_MALFORMED);
			return;
		}
		c->rule = mediator_rule(m->cfg.policy, c->name, c->port);
		if (!c->rule) {
			refuse(m, c,
			       policy_net_host_valid(c->name, false) ? MEDIATOR_NO_RULE
								     : MEDIATOR_LITERAL);
			return;
		}
		if (c->rule->protocol == POLICY_NET_HTTP) {
			refuse(m, c, MEDIATOR_PROTOCOL);
			return;
		}
		if (!gate_tunnel_ok(m->gate, c->rule)) {
			refuse(m, c, MEDIATOR_TAINTED);
			return;
		}
		/* The tunnel is promised before anything is dialled: for "tls"
		 * the ClientHello is read and checked first. */
		memmove(c->c2u.d, c->c2u.d + rq.head_len, c->c2u.len - rq.head_len);
		c->c2u.len -= rq.head_len;
		reply(c, "HTTP/1.1 200 Connection established\r\n\r\n");
		if (c->rule->protocol == POLICY_NET_TLS)
			c->state = C_SNI;
		else
			dial(m, c);
		return;
	}
	if (c->proxy) {
		if (http_target_absolute(rq.target, c->name, sizeof(c->name), &c->port, &path) <
		    0) {
			refuse(m, c, MEDIATOR_MALFORMED);
			return;
		}
	} else {
		path = rq.target;
		if (path[0] != '/') {
			refuse(m, c, MEDIATOR_MALFORMED);
			return;
		}
	}
	/* The Host header must name what the connection was admitted for
	 * (a mismatched Host is how a proxy is made to front another
	 * name). */
	if (http_host_split(rq.host, hname, sizeof(hname), &hport) < 0 ||
	    strcmp(hname, c->name) != 0 || (hport && hport != c->port)) {
		refuse(m, c, MEDIATOR_MALFORMED);
		return;
	}
	c->rule = mediator_rule(m->cfg.policy, c->name, c->port);
	if (!c->rule) {
		refuse(m, c,
		       policy_net_host_valid(c->name, false) ? MEDIATOR_NO_RULE : MEDIATOR_LITERAL);
		return;
	}
	if (c->rule->protocol != POLICY_NET_HTTP) {
		refuse(m, c, MEDIATOR_PROTOCOL);
		return;
	}
	/* A rule with grants admits only what one of them covers; the body
	 * is not read (the refusal comes before anything is dialled). */
	if (c->rule->n_grants && !mediator_grant_allows(c->rule, rq.method, path)) {
		refuse(m, c, MEDIATOR_GRANT);
		return;
	}
	r = adapter_admit(m, c, &rq, path);
	if (r != 0)
		return;
	if (job_admit(m, c, rq.method, path) < 0)
		return;
	/* A metered rule: the attempt's bound is reserved in its budget's
	 * ledger before anything is dialled (or it is refused). */
	r = meter_admit(m, c, &rq, path);
	if (r != 0)
		return;
	/* HB-23: the operation's attempt budget (attempts.c); a request
	 * keyed by its body waits here until the body is in. */
	r = attempt_admit(m, c, &rq, path);
	if (r != 0) {
		if (r < 0)
			meter_end(m, c, false);
		return;
	}
	if (c->mt.active || c->job >= 0)
		c->at.watch = c->at.hold = true; /* its charge (a job's id) is in the response */
	admit_id(m, c);
	r = rewrite(c, &rq, path);
	if (r >= 0 && m->cfg.cred) {
		r = mediator_cred_swap(m->cfg.cred, c->rule, c->c2u.d, &c->c2u.len, BUF_SIZE,
				       (size_t)r, c->note, sizeof(c->note));
		if (r == -EACCES) {
			refuse(m, c, MEDIATOR_CREDENTIAL);
			return;
		}
		c->rd_http = true;
		c->rd_head = strcmp(rq.method, "HEAD") == 0;
	}
	if (r < 0) {
		refuse(m, c, MEDIATOR_MALFORMED);
		return;
	}
	if (hold_start(m, c, &rq, path, (size_t)r))
		return;
	body(c, (size_t)r);
	dial(m, c);
}

static void sni(struct mediator *m, struct conn *c)
{
	char name[POLICY_NET_NAME_MAX + 2];
	int r =
	    tls_client_hello_sni((const unsigned char *)c->c2u.d, c->c2u.len, name, sizeof(name));

	if (r == -EAGAIN && !c->c_eof && c->c2u.len < BUF_SIZE)
		return;
	if (r < 0 || strcmp(name, c->name) != 0) {
		refuse(m, c, r == -EINVAL || r == -EAGAIN ? MEDIATOR_MALFORMED : MEDIATOR_SNI);
		return;
	}
	dial(m, c);
}

/* A transparent connection: to a synthetic address, for its name. */
static void transparent(struct mediator *m, struct conn *c, const struct sockaddr *dst)
{
	const char *name = mediator_names_lookup(&m->names, dst);

	if (!name) {
		refuse(m, c, MEDIATOR_LITERAL);
		return;
	}
	snprintf(c->name, sizeof(c->name), "%s", name);
	c->rule = mediator_rule(m->cfg.policy, c->name, c->port);
	if (!c->rule) {
		refuse(m, c, MEDIATOR_NO_RULE);
		return;
	}
	admit_id(m, c);
	if (c->rule->protocol != POLICY_NET_HTTP && !gate_tunnel_ok(m->gate, c->rule)) {
		refuse(m, c, MEDIATOR_TAINTED);
		return;
	}
	if (c->rule->protocol == POLICY_NET_HTTP)
		c->state = C_HEAD;
	else if (c->rule->protocol == POLICY_NET_TLS)
		c->state = C_SNI;
	else
		dial(m, c);
}

static void client_addr(struct conn *c, const struct sockaddr_storage *ss)
{
	char a[INET6_ADDRSTRLEN] = "?";

	if (ss->ss_family == AF_INET)
		inet_ntop(AF_INET, &((const struct sockaddr_in *)ss)->sin_addr, a, sizeof(a));
	else if (ss->ss_family == AF_INET6)
		inet_ntop(AF_INET6, &((const struct sockaddr_in6 *)ss)->sin6_addr, a, sizeof(a));
	snprintf(c->client, sizeof(c->client), "%s", a);
}

static void accept_one(struct mediator *m, struct listener *l)
{
	struct sockaddr_storage peer, dst;
	socklen_t plen = sizeof(peer), dlen = sizeof(dst);
	int fd = accept4(l->fd, (struct sockaddr *)&peer, &plen, SOCK_NONBLOCK | SOCK_CLOEXEC);
	struct conn *c;

	if (fd < 0 && (errno == EMFILE || errno == ENFILE) && m->reserve_fd >= 0) {
		/* Out of fds: the pending connection would keep the listener
		 * readable and the loop spinning. The reserve fd makes room to
		 * take it and close it at once (refused, and counted). */
		close(m->reserve_fd);
		fd = accept4(l->fd, NULL, NULL, SOCK_CLOEXEC);
		if (fd >= 0)
			close(fd);
		m->reserve_fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
		m->counts[MEDIATOR_UPSTREAM]++;
		return;
	}
	if (fd < 0)
		return;
	if (m->n_conns >= CONNS_MAX || !(c = conn_alloc())) {
		m->counts[MEDIATOR_UPSTREAM]++;
		close(fd);
		return;
	}
	c->cfd = fd;
	c->job = -1;
	c->ufd = -1;
	c->since_ms = now_ms();
	c->ctag = (struct tag){TAG_CLIENT, c};
	c->utag = (struct tag){TAG_UPSTREAM, c};
	c->next = m->conns;
	m->conns = c;
	m->n_conns++;
	client_addr(c, &peer);
	watch(m, fd, &c->ctag, EPOLLIN, EPOLL_CTL_ADD);
	if (l->kind == MEDIATOR_DNS_TCP) {
		c->state = C_DNS;
		return;
	}
	if (l->kind == MEDIATOR_PROXY) {
		c->proxy = true;
		c->state = C_HEAD;
		return;
	}
	/* The original destination: with the local default routes every
	 * address is local, and the kernel gave the connection to our
	 * wildcard listener with the address the client dialled. */
	if (getsockname(fd, (struct sockaddr *)&dst, &dlen) < 0) {
		conn_close(m, c);
		return;
	}
	c->port = l->port;
	transparent(m, c, (struct sockaddr *)&dst);
	update(m, c);
}

/* ----------------------------------------------------------------- DNS */

/* --weaken dns-open: the query to the upstream resolver and its answer
 * back, waited for (one second at most) in the loop: evaluation only. The
 * answer's length, or -errno. */
static int dns_forward(struct mediator *m, const unsigned char *buf, size_t len, unsigned char *out,
		       size_t size)
{
	const struct sockaddr_storage *up = &m->cfg.dns_upstream;
	int fd = socket(up->ss_family, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	struct pollfd p = {.fd = fd, .events = POLLIN};
	ssize_t n = -1;

	if (fd < 0)
		return -errno;
	if (connect(fd, (const struct sockaddr *)up, m->cfg.dns_upstream_len) == 0 &&
	    send(fd, buf, len, 0) == (ssize_t)len && poll(&p, 1, 1000) == 1)
		n = recv(fd, out, size, 0);
	close(fd);
	/* The upstream's answer to this query (its id), or nothing. */
	if (n < 12 || out[0] != buf[0] || out[1] != buf[1])
		return -EPROTO;
	return (int)n;
}

int mediator_dns_answer(struct mediator *m, const unsigned char *buf, size_t len,
			unsigned char *out, size_t size)
{
	struct dns_query q;
	unsigned char addr[16];
	struct conn none = {0};
	int i;

	if (dns_parse_query(buf, len, &q) < 0)
		return -EINVAL;
	snprintf(none.name, sizeof(none.name), "%s", q.name);
	if ((!mediator_name_allowed(m->cfg.policy, q.name) || q.qclass != 1) &&
	    m->cfg.dns_upstream_len) {
		/* --weaken dns-open: what an open stub does. */
		m->counts[MEDIATOR_DNS_FORWARDED]++;
		log_line(m, NULL, "dns", MEDIATOR_DNS_FORWARDED, q.name, 53, NULL);
		i = dns_forward(m, buf, len, out, size);
		return i > 0 ? i : dns_build_response(buf, &q, 2, NULL, 0, out, size);
	}
	if (!mediator_name_allowed(m->cfg.policy, q.name) || q.qclass != 1) {
		m->counts[MEDIATOR_DNS_REFUSED]++;
		log_line(m, NULL, "dns", MEDIATOR_DNS_REFUSED, q.name, 53, NULL);
		return dns_build_response(buf, &q, 5, NULL, 0, out, size);
	}
	m->counts[MEDIATOR_DNS_ANSWERED]++;
	log_line(m, NULL, "dns", MEDIATOR_DNS_ANSWERED, q.name, 53, NULL);
	if (q.qtype != DNS_A && q.qtype != DNS_AAAA)
		return dns_build_response(buf, &q, 0, NULL, 0, out, size); /* NODATA */
	i = mediator_names_add(&m->names, q.name);
	if (i < 0)
		return dns_build_response(buf, &q, 2, NULL, 0, out, size); /* SERVFAIL */
	mediator_names_addr((size_t)i, q.qtype == DNS_A ? AF_INET : AF_INET6, addr);
	return dns_build_response(buf, &q, 0, addr, q.qtype == DNS_A ? 4 : 16, out, size);
}

static void dns_udp(struct mediator *m, struct listener *l)
{
	unsigned char in[DNS_MAX + 1], out[DNS_MAX];
	struct sockaddr_storage peer;

	for (int k = 0; k < 64; k++) {
		socklen_t plen = sizeof(peer);
		ssize_t n =
		    recvfrom(l->fd, in, sizeof(in), MSG_DONTWAIT, (struct sockaddr *)&peer, &plen);
		int r;

		if (n < 0)
			return;
		r = mediator_dns_answer(m, in, (size_t)n, out, sizeof(out));
		if (r > 0)
			(void)sendto(l->fd, out, (size_t)r, MSG_DONTWAIT, (struct sockaddr *)&peer,
				     plen);
	}
}

static void dns_tcp(struct mediator *m, struct conn *c)
{
	unsigned char out[DNS_MAX + 2];
	size_t qlen;
	int r;

	if (c->c2u.len < 2)
		return;
	qlen = (size_t)(unsigned char)c->c2u.d[0] << 8 | (unsigned char)c->c2u.d[1];
	if (qlen > DNS_MAX) {
		c->state = C_CLOSING;
		return;
	}
	if (c->c2u.len < 2 + qlen)
		return;
	r = mediator_dns_answer(m, (const unsigned char *)c->c2u.d + 2, qlen, out + 2,
				sizeof(out) - 2);
	c->c2u.len = 0;
	c->state = C_CLOSING;
	if (r <= 0)
		return;
	out[0] = (unsigned char)(r >> 8);
	out[1] = (unsigned char)r;
	memcpy(c->u2c.d, out, (size_t)r + 2);
	c->u2c.len = (size_t)r + 2;
}

/* ----------------------------------------------------------- the relay */

static void client_readable(struct mediator *m, struct conn *c)
{
	size_t before = c->c2u.len;
	ssize_t n = read(c->cfd, c->c2u.d + c->c2u.len, BUF_SIZE - c->c2u.len);

	if (n < 0 && (errno == EAGAIN || errno == EINTR))
		return;
	if (n <= 0) {
		c->c_eof = true;
	} else {
		c->c2u.len += (size_t)n;
		if (c->state == C_RELAY)
			body(c, before);
	}
	switch (c->state) {
	case C_HEAD:
		http_head(m, c);
		break;
	case C_SNI:
		sni(m, c);
		break;
	case C_DNS:
		dns_tcp(m, c);
		break;
	case C_HOLD:
		hold_feed(m, c);
		break;
	default:
		break;
	}
}

/* The redaction of what came from upstream (redact.c): false when the
 * connection ended, because the rest of a response could not be scanned
 * (it cannot be framed, it is compressed, or a possible secret would hold
 * the whole buffer): fail closed, nothing more of it reaches the client. */
static bool redact_step(struct mediator *m, struct conn *c)
{
	const struct mediator_credentials *cr = m->cfg.cred;
	char extra[1024];
	long h;
	int n;

	if (c->state == C_CLOSING) { /* our own reply replaced it */
		c->u2c_hold = 0;
		return true;
	}
	/* A tunnel (tls, tcp) gets the plain scan: no secret is ever swapped
	 * into one, its bytes are opaque, and holding back what might begin
	 * an encoded form would stall an interactive protocol more often.
	 * --weaken redact-plain-only: every connection the plain scan. */
	if (cr->plain_only || !c->rd_http) {
		c->u2c_hold =
		    mediator_cred_redact(cr, c->u2c.d, c->u2c.len, c->u_eof, &c->redacted);
		return true;
	}
	if (!c->rd.cr && redact_init(&c->rd, cr, c->rd_http, c->rd_head,
				     c->rd_http && redact_rule_audience(c->rule)) < 0)
		h = -ENOMEM;
	else
		h = redact_scan(&c->rd, c->u2c.d, c->u2c.len, c->down, c->u_eof);
	c->redacted = c->rd.count;
	if (h >= 0 && !((size_t)h == c->u2c.len && c->u2c.len == BUF_SIZE)) {
		c->u2c_hold = (size_t)h;
		return true;
	}
	n = snprintf(extra, sizeof(extra), ",\"response\":\"%s\"",
		     h == -EPROTO   ? "coded"
		     : h == -EINVAL ? "malformed"
				    : "unscannable");
	if (c->ufd >= 0) {
		close(c->ufd);
		c->ufd = -1;
	}
	m->counts[MEDIATOR_CREDENTIAL]++;
	if (c->down == 0 && c->http) {
		/* Nothing of it reached the client yet: the terse denial. */
		tell(m, c, MEDIATOR_CREDENTIAL, DENIAL_DENIED, 0, extra + n,
		     sizeof(extra) - (size_t)n);
		c->u2c_hold = 0;
		log_line(m, c, "response-refused", MEDIATOR_CREDENTIAL, c->name, c->port, extra);
		update(m, c);
		return false;
	}
	log_line(m, c, "response-refused", MEDIATOR_CREDENTIAL, c->name, c->port, extra);
	c->u2c.len = 0;
	conn_close(m, c);
	return false;
}

static bool drain(int fd, struct buf *b, size_t hold, uint64_t *count)
{
	ssize_t n = write(fd, b->d, b->len - hold);

	if (n < 0)
		return errno == EAGAIN || errno == EINTR;
	memmove(b->d, b->d + n, b->len - (size_t)n);
	b->len -= (size_t)n;
	*count += (uint64_t)n;
	return true;
}

static void step(struct mediator *m, struct conn *c, bool client, uint32_t ev)
{
	if (c->state == C_LOOKUP) {
		if (!client)
			lookup_io(m, c);
		else if (ev & (EPOLLHUP | EPOLLERR))
			conn_close(m, c); /* the client left while its replay was held */
		return;
	}
	if (client) {
		if ((ev & EPOLLOUT) && c->u2c.len > c->u2c_hold && !c->at.hold &&
		    !drain(c->cfd, &c->u2c, c->u2c_hold, &c->down)) {
			conn_close(m, c);
			return;
		}
		if (ev & (EPOLLIN | EPOLLHUP | EPOLLERR))
			client_readable(m, c);
	} else if (c->connecting) {
		int e = 0;
		socklen_t l = sizeof(e);

		if (getsockopt(c->ufd, SOL_SOCKET, SO_ERROR, &e, &l) < 0 || e) {
			upstream_failed(m, c, true);
			update(m, c);
			return;
		}
		c->connecting = false;
	} else {
		if ((ev & EPOLLOUT) && c->c2u.len && !drain(c->ufd, &c->c2u, 0, &c->up)) {
			conn_close(m, c);
			return;
		}
		if ((ev & (EPOLLIN | EPOLLHUP | EPOLLERR)) && c->u2c.len < BUF_SIZE) {
			ssize_t n = read(c->ufd, c->u2c.d + c->u2c.len, BUF_SIZE - c->u2c.len);

			if (n == 0 || (n < 0 && errno != EAGAIN && errno != EINTR))
				c->u_eof = true;
			else if (n > 0)
				c->u2c.len += (size_t)n;
			if (n > 0)
				taint(m, c);
			attempt_response(m, c);
		}
		/* No secret goes back to the workload (redact.c). */
		if (m->cfg.cred && !redact_step(m, c))
			return;
		/* The upstream is done: it is watched no more (a hung-up
		 * socket would report EPOLLHUP for ever). */
		if (c->u_eof && c->ufd >= 0) {
			close(c->ufd);
			c->ufd = -1;
		}
	}
	/* Half-closes pass on once the buffers are flushed; both ends shut
	 * (or a refusal delivered) ends the connection. */
	if (c->state == C_RELAY && c->ufd >= 0 && !c->connecting && (c->c_eof || c->c_stop) &&
	    !c->c2u.len && !hold_pending(c) && !c->u_shut) {
		c->u_shut = true;
		(void)shutdown(c->ufd, SHUT_WR);
	}
	if ((c->state == C_CLOSING && !c->u2c.len) || (c->u_eof && !c->u2c.len) ||
	    (c->c_eof && c->state != C_RELAY && c->state != C_CLOSING && c->state != C_HOLD)) {
		conn_close(m, c);
		return;
	}
	update(m, c);
}

int mediator_add_listener(struct mediator *m, int fd, enum mediator_listener_kind kind,
			  uint16_t port)
{
	struct listener *l;

	if (m->n_l == LISTENERS_MAX)
		return -ENOSPC;
	l = &m->l[m->n_l++];
	l->fd = fd;
	l->kind = kind;
	l->port = port;
	l->tag = (struct tag){TAG_LISTENER, l};
	watch(m, fd, &l->tag, EPOLLIN, EPOLL_CTL_ADD);
	return 0;
}

/* Connections still reading their head past HEAD_TIMEOUT_MS: refused as
 * malformed (and logged). */
static void expire_heads(struct mediator *m)
{
	uint64_t now = now_ms();

	for (struct conn *c = m->conns, *next; c; c = next) {
		next = c->next;
		if (c->state == C_LOOKUP) {
			if (now >= c->lk.deadline)
				lookup_finish(m, c, -ETIMEDOUT);
			continue;
		}
		if (c->state == C_HOLD)
			hold_expire(m, c, now);
		else if ((c->state == C_HEAD || c->state == C_SNI || c->state == C_DNS) &&
			 now - c->since_ms > HEAD_TIMEOUT_MS) {
			decide(m, c, MEDIATOR_MALFORMED);
			conn_close(m, c);
			continue;
		}
		attempt_overdue(m, c, now);
	}
}

int mediator_run(struct mediator *m, int sfd)
{
	struct tag stag = {TAG_LISTENER, NULL};
	struct epoll_event ev[64];

	watch(m, sfd, &stag, EPOLLIN, EPOLL_CTL_ADD);
	for (;;) {
		int n = epoll_wait(m->ep, ev, 64, 1000);

		expire_heads(m);
		reap_dead(m);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -errno;
		for (int i = 0; i < n; i++) {
			struct tag *t = ev[i].data.ptr;

			if (t == &stag)
				return 0;
			if (t->kind == TAG_LISTENER) {
				struct listener *l = t->ptr;

				if (l->kind == MEDIATOR_DNS_UDP)
					dns_udp(m, l);
				else if (l->kind == MEDIATOR_CONTROL)
					control(m, l);
				else
					accept_one(m, l);
			} else if (!((struct conn *)t->ptr)->dead) {
				step(m, t->ptr, t->kind == TAG_CLIENT, ev[i].events);
			}
		}
		reap_dead(m);
	}
}

void mediator_free(struct mediator *m)
{
	if (!m)
		return;
	while (m->conns)
		conn_close(m, m->conns);
	reap_dead(m);
	for (size_t i = 0; i < m->n_l; i++)
		close(m->l[i].fd);
	close(m->ep);
	if (m->reserve_fd >= 0)
		close(m->reserve_fd);
	mediator_names_free(&m->names);
	gate_free(m->gate);
	free(m->jobs);
	for (size_t i = 0; i < m->n_ledgers; i++)
		ledger_close(m->ledgers[i].l);
	free(m);
}
