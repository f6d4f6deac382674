/* paddock-mediator: a mediated sandbox's only way out (docs/network.md).
 * Outside the sandbox, in the caller's namespaces; its listening sockets
 * were bound inside the sandbox's network namespace before the workload
 * started, and it dials upstream from the host's. What it admits is
 * decided by the policy's network.allow rules, by name.
 *
 * The parsers here (http.c, dns.c, tls.c) and the rules (rules.c) are pure
 * code: unit-tested and fuzzed (tests/fuzz/fuzz_mediator.c). loop.c is the
 * only part that does I/O. */
#pragma once

#include <netinet/in.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

#include "../include/admission.h"
#include "../evidence/evidence.h"
#include "../include/err.h"
#include "../policy/approvals.h"
#include "../policy/policy.h"

/* ------------------------------------------------------------ http.c */

#define HTTP_HEAD_MAX	 16384 /* request line and headers, bytes */
#define HTTP_LINE_MAX	 8192
#define HTTP_HEADERS_MAX 64

struct http_header {
	size_t name, name_len; /* offsets into the buffer */
	size_t value, value_len;
};

struct http_request {
	char method[16];
	char target[HTTP_LINE_MAX];
	size_t head_len; /* bytes up to and including the blank line */
	struct http_header h[HTTP_HEADERS_MAX];
	size_t n_headers;
	char host[POLICY_NET_NAME_MAX + 8]; /* the Host header, lower case; "" if none */
	bool http10;			    /* only for CONNECT */
	bool has_length;
	uint64_t content_length;
	bool chunked;
};

/* Parse the head of one HTTP/1.1 request in buf[0..len). Strict: CRLF
 * line ends only (a bare LF or CR is refused), no obs-fold, token header
 * names with no space before the colon, one Host (required but for
 * CONNECT, which may also be HTTP/1.0), at most one
 * Content-Length and never with Transfer-Encoding, which may only be
 * "chunked". Returns head_len (> 0), 0 when more bytes are needed, -EINVAL
 * with *why (static text) for a malformed or forbidden head, -E2BIG past
 * the limits above. */
int http_parse_request(const char *buf, size_t len, struct http_request *out, const char **why);

/* The target of a request as name and port: "http://NAME[:PORT]/PATH"
 * (absolute-form, *path the path, "/" when empty) or "NAME:PORT"
 * (authority-form, CONNECT). The name is lower-cased; an IP literal is
 * returned as such (the rules never name one). -EINVAL otherwise. */
int http_target_absolute(const char *target, char *name, size_t size, uint16_t *port,
			 const char **path);
int http_target_authority(const char *target, char *name, size_t size, uint16_t *port);
/* "NAME" or "NAME:PORT" of a Host header: name lower-cased, *port 0 when
 * absent. -EINVAL otherwise. */
int http_host_split(const char *host, char *name, size_t size, uint16_t *port);

/* A chunked body, scanned as it passes: how many of the n bytes belong to
 * the body (the rest is not forwarded), and done once the last chunk and
 * its trailers ended. -EINVAL for anything malformed. */
struct http_chunked {
	int state;
	uint64_t left; /* bytes of the current chunk still to come */
	unsigned digits;
	bool done;
};
long http_chunked_scan(struct http_chunked *c, const char *buf, size_t n);

/* -------------------------------------------------------- response.c */

/* The status of an HTTP/1.x response at the start of buf, past any 1xx
 * interim responses (each a status line and headers up to a blank line):
 * "HTTP/1.1 DDD reason" (or HTTP/1.0), CRLF-ended, DDD from 100 to 599, the
 * reason of visible characters, spaces and tabs. Returns the offset just
 * past the final status line (> 0) with *status; 0 when more bytes are
 * needed; -EINVAL for anything else (also a line past HTTP_LINE_MAX, or
 * more than 8 interim responses). Pure, fuzzed. */
int http_parse_status(const char *buf, size_t len, unsigned *status);

/* ------------------------------------------------------------- tls.c */

/* The server name (SNI, host_name) of a TLS ClientHello at the start of
 * buf, lower-cased into name. -EAGAIN: more bytes needed; -ENOENT: a valid
 * ClientHello without SNI; -EINVAL: not a ClientHello. */
int tls_client_hello_sni(const unsigned char *buf, size_t len, char *name, size_t size);

/* ------------------------------------------------------------- dns.c */

#define DNS_MAX 1232 /* the answers we write fit; queries larger are refused */

struct dns_query {
	uint16_t id;
	bool rd;
	char name[POLICY_NET_NAME_MAX + 2]; /* lower case, no trailing dot */
	uint16_t qtype, qclass;
	size_t question_end; /* offset just past the question */
};

#define DNS_A	 1
#define DNS_AAAA 28

/* Parse one query (opcode QUERY, one question, no answers). -EINVAL. */
int dns_parse_query(const unsigned char *buf, size_t len, struct dns_query *out);
/* The response to q (its question copied from query) into out: with
 * rcode 0 and addr (4 or 16 bytes, matching qtype), one answer; with
 * addr NULL, none (rcode 0: NODATA; 5: REFUSED). Returns its length, or
 * -ENOSPC. */
/* "ADDR:PORT" or "[ADDR6]:PORT" (an upstream resolver, --weaken dns-open)
 * into sa. 0, or -EINVAL. Pure, fuzzed. */
int dns_parse_upstream(const char *s, struct sockaddr_storage *sa, socklen_t *len);
int dns_build_response(const unsigned char *query, const struct dns_query *q, int rcode,
		       const unsigned char *addr, size_t addr_len, unsigned char *out, size_t size);

/* ----------------------------------------------------------- rules.c */

/* The first rule that allows name on port, or NULL. Pure. */
/* Does a grant of rule r (which has some) cover method and target (an
 * origin-form "/path?query")? Fails closed: a '%' anywhere in the path,
 * an empty, "." or ".." segment, or any character that is not a plain
 * path character is never covered. Pure, fuzzed. */
bool mediator_grant_allows(const struct policy_net_rule *r, const char *method, const char *target);
/* The index of the first grant of r that covers them, or -1. */
long mediator_grant_find(const struct policy_net_rule *r, const char *method, const char *target);
const struct policy_net_rule *mediator_rule(const struct policy *p, const char *name,
					    uint16_t port);
/* Any rule names this name (on any port): the DNS stub answers it. */
bool mediator_name_allowed(const struct policy *p, const char *name);
/* The policy's fixed address for name (network.resolve), or NULL. */
const char *mediator_resolve_entry(const struct policy *p, const char *name);
/* May an upstream dial go to this address without a resolve entry naming
 * it? No for loopback, unspecified, private (RFC 1918), CGNAT, link-local,
 * ULA, multicast, broadcast, documentation and benchmark ranges (our own
 * synthetic addresses live there) and IPv4-mapped forms of those. */
bool mediator_addr_public(const struct sockaddr *sa);

/* Synthetic addresses the DNS stub hands out, one per name: 198.18.0.0/15
 * and fd70:6164:646f:636b::/64 ("padock"), mapped back to the name when the
 * workload connects to one. */
#define MEDIATOR_NAMES_MAX 4096
struct mediator_names {
	char (*name)[POLICY_NET_NAME_MAX + 2];
	size_t n;
};
/* The index of name, added if new: -ENOSPC when full, -ENOMEM. */
int mediator_names_add(struct mediator_names *m, const char *name);
void mediator_names_free(struct mediator_names *m);
/* The synthetic address of index i: 4 bytes (family AF_INET) or 16. */
void mediator_names_addr(size_t i, int family, unsigned char *out);
/* The name behind a synthetic address, or NULL. */
const char *mediator_names_lookup(const struct mediator_names *m, const struct sockaddr *sa);

/* ------------------------------------------------- body.c and gate.c */

/* The release gate (docs/network.md, "Release gate"). A publication is a
 * request with a body (Content-Length above 0, or chunked) to a rule
 * with "publish", or, once the session is tainted, to any rule that is
 * not "private". Its body is read whole (at most GATE_BODY_MAX bytes on
 * the wire) and held until an approval of its SHA-256 (over the entity
 * bytes, chunked framing decoded) and its destination is spent on it. */
#define GATE_BODY_MAX	   (1 << 20)
#define GATE_HELD_MAX	   (16 << 20) /* bytes held by all requests at once */
#define GATE_APPROVALS_MAX 4096	      /* unspent approvals */

struct gate_body {
	bool chunked, done;
	uint64_t left; /* Content-Length: bytes to come; chunked: of this chunk */
	int state;
	unsigned digits;
	char *raw; /* the wire bytes, framing included: forwarded once released */
	size_t raw_len, raw_cap;
	char *ent; /* the entity bytes: digested */
	size_t ent_len, ent_cap;
};

void gate_body_init(struct gate_body *b, bool chunked, uint64_t length);
/* Of n bytes, how many belong to the body (kept; the rest is not): >= 0,
 * done once it ended; -EINVAL for malformed chunked framing, -E2BIG past
 * max wire bytes, -ENOMEM. Pure, fuzzed ('b'). */
long gate_body_feed(struct gate_body *b, const char *buf, size_t n, size_t max);
void gate_body_digest(const struct gate_body *b, char hex[65]);
void gate_body_free(struct gate_body *b);

struct gate;
int gate_new(bool off, uint64_t hold_ms, struct gate **out);
void gate_free(struct gate *g);
uint64_t gate_hold_ms(const struct gate *g);
bool gate_tainted(const struct gate *g);
/* An approval, unspent until gate_take(). -ENOSPC past
 * GATE_APPROVALS_MAX, -ENOMEM. */
int gate_add(struct gate *g, const struct approval *a);
/* Spend an approval of digest for d: true when there was one (it is gone
 * then: single use). */
bool gate_take(struct gate *g, const char *digest, const struct approval_dest *d);
bool gate_dest_equal(const struct approval_dest *x, const struct approval_dest *y);
/* Is a request to r (with a body or not) a publication to hold? */
bool gate_holds(const struct gate *g, const struct policy_net_rule *r, bool has_body);
/* May a tls or tcp tunnel to r open (no: the session is tainted and r is
 * not private; the gate cannot see what a tunnel carries)? */
bool gate_tunnel_ok(const struct gate *g, const struct policy_net_rule *r);
/* A response of r reached the workload: true when it taints the session
 * now (r is private, the gate on, not tainted before). */
bool gate_taint(struct gate *g, const struct policy_net_rule *r);
/* ---------------------------------------------------------- denial.c */

/* What the workload is told of a refusal (docs/network.md, "Denials and
 * attempt budgets"): a class and a correlation id, nothing else. */
enum denial_class {
	DENIAL_DENIED,	  /* terminal: retrying cannot help */
	DENIAL_TRANSIENT, /* may be retried, after Retry-After, within the budget */
	DENIAL_UNKNOWN,	  /* the request may or may not have taken effect */
};
#define DENIAL_ID_LEN	   32 /* hex digits of a correlation id (128 random bits) */
#define DENIAL_RETRY_AFTER 1  /* seconds, in a transient denial */

const char *denial_class_name(enum denial_class c);
/* The class of a refusal of the mediator's own. */
enum denial_class denial_class_of(enum mediator_decision d);
/* The class of an upstream's final response status, or -1 for a success
 * (below 400): 408, 425, 429, 500, 502, 503 and 504 are transient, every
 * other 4xx and 5xx terminal (denied). */
int denial_status_class(unsigned status);
/* A fresh correlation id: DENIAL_ID_LEN hex digits from getrandom(). */
void denial_new_id(char id[DENIAL_ID_LEN + 1]);
/* The whole terse response for class c into out: a fixed status line
 * (403, 503 with Retry-After, 502), Content-Length, Connection: close and
 * a JSON body {"class":..,"correlation_id":..[,"retry_after":N]}. Its
 * length, or -ENOSPC. Pure but for nothing: id is the caller's. */
int denial_terse(enum denial_class c, const char *id, char *out, size_t size);
/* --weaken verbose-denial: the old, telling form (a Paddock-Decision
 * header, the destination, the decision and the rule; the upstream's
 * status when there is one). Its length, or -ENOSPC. */
int denial_verbose(enum mediator_decision d, const char *name, uint16_t port, long rule,
		   unsigned status, char *out, size_t size);

/* -------------------------------------------------------- attempts.c */

/* The attempt budget of logical operations (policy "attempts" and
 * "deadline" on a rule or grant). An operation is keyed by SHA-256 over
 * the rule and grant indices and either the request's Idempotency-Key or
 * its method, name:port, target and the SHA-256 of its body (which is
 * then buffered: at most ATTEMPTS_BODY_MAX bytes, Content-Length only). */
#define ATTEMPTS_OPS_MAX  4096
#define ATTEMPTS_BODY_MAX 8192

enum attempts_state {
	ATTEMPTS_FREE,
	ATTEMPTS_OPEN,	    /* tried, and may be tried again (transient failures) */
	ATTEMPTS_IN_FLIGHT, /* an attempt waits for its response */
	ATTEMPTS_TERMINAL,  /* a terminal denial: never tried again */
	ATTEMPTS_UNKNOWN,   /* sent, no response: never sent again */
};

enum attempts_outcome {
	ATTEMPT_SUCCEEDED, /* a final status below 400: the entry is dropped */
	ATTEMPT_TERMINAL,
	ATTEMPT_TRANSIENT,
	ATTEMPT_UNKNOWN,
};

struct attempts_op {
	unsigned char key[32];
	enum attempts_state state;
	unsigned tries;
	uint64_t first_ms;
};

struct attempts {
	struct attempts_op op[ATTEMPTS_OPS_MAX];
};

/* One connection's attempt: set by attempts_admit(). */
struct attempt_conn {
	bool watch;	      /* the response's status is read (budget or tool rule) */
	bool hold;	      /* ... and nothing of it reaches the client until then */
	bool tool;	      /* an error response is replaced by the terse denial */
	bool counted;	      /* op is an entry of the table (not retry-unbounded) */
	size_t op;	      /* its index */
	unsigned tries;	      /* this attempt's number */
	uint64_t deadline_ms; /* CLOCK_MONOTONIC ms; 0: none */
	char op_hex[17];      /* the key's first 8 bytes, for the log */
};

/* The key of an operation (see above) into out: 0, 1 when the body is
 * needed and not all in buf[head_len..len) yet, or -EINVAL when it cannot
 * be keyed (a chunked body, or one larger than ATTEMPTS_BODY_MAX or past
 * HTTP_HEAD_MAX with its head, without Idempotency-Key). Pure,
 * fuzzed. */
int attempts_key(const struct http_request *rq, const char *buf, size_t len, const char *name,
		 uint16_t port, const char *target, size_t rule, long grant, unsigned char out[32]);
/* Decide an admitted http request of rule (grant: the index of the grant
 * that covered it, -1 for none) at now: 0 to send it (*ac set), 1 to wait
 * for more of its body, -1 with *d to refuse it (refused-terminal,
 * held-unknown, refused-in-flight, refused-budget, refused-malformed).
 * unbounded (--weaken retry-unbounded): the table is neither read nor
 * written. Pure (now is the caller's). */
int attempts_admit(struct attempts *t, const struct policy_net_rule *rule, long grant,
		   const struct http_request *rq, const char *buf, size_t len, bool eof,
		   const char *name, uint16_t port, const char *target, uint64_t now,
		   bool unbounded, struct attempt_conn *ac, enum mediator_decision *d);
/* The outcome of ac's attempt, once: the entry's new state. */
void attempts_end(struct attempts *t, struct attempt_conn *ac, enum attempts_outcome o);
/* A receiver lookup found no trace of rq's operation (docs/budget.md,
 * "Lookup"): its unknown entry is open again (its tries still count). 0,
 * or -ENOENT when rq's operation is not unknown. */
int attempts_reopen(struct attempts *t, const struct policy_net_rule *rule, long grant,
		    const struct http_request *rq, const char *buf, size_t len, const char *name,
		    uint16_t port, const char *target);

/* What to do with the response read so far (buf, len; eof: the upstream
 * is done; full: no room to read more) of a held attempt. */
enum attempts_verdict {
	ATTEMPTS_WAIT,	  /* nothing decided: keep holding */
	ATTEMPTS_PASS,	  /* relay the upstream's response */
	ATTEMPTS_REPLACE, /* the client gets the terse denial of *cls instead */
};
/* Records the outcome (attempts_end) when it decides; *status is the
 * upstream's (0: none). verbose (--weaken verbose-denial): a tool's error
 * response passes. Pure. */
enum attempts_verdict attempts_response(struct attempts *t, struct attempt_conn *ac,
					const char *buf, size_t len, bool eof, bool full,
					bool verbose, unsigned *status, enum denial_class *cls);

/* ----------------------------------------------------------- meter.c */

/* Metered rules (docs/network.md, "Budgets"), the pure part. */
#define METER_BODY_MAX 8192 /* a body a bound is read from, or a charge */

/* The upper bound of an attempt priced p: 0 with *bound; 1 when the body
 * it is read from is not all in buf[head_len..len) yet (and !eof);
 * -ENOENT for no price (unpriced); -EINVAL for no defensible bound (the
 * field absent, given twice, not a whole number, above its max, a body
 * that is not a JSON object, chunked or over METER_BODY_MAX). Pure,
 * fuzzed ('m'). */
int meter_bound(const struct policy_net_price *p, const struct http_request *rq, const char *buf,
		size_t len, bool eof, uint64_t *bound);
/* The request's Idempotency-Key (1 to 255 bytes: *n), or NULL. */
const char *meter_idempotency_key(const struct http_request *rq, const char *buf, size_t *n);
/* The ledger key of an operation: SHA-256 (hex) over the budget, the
 * destination and the request's Idempotency-Key (1 to 255 bytes): the same
 * in every session of the budget. -ENOENT without a key. */
int meter_op_key(const struct http_request *rq, const char *buf, const char *budget,
		 const char *name, uint16_t port, char hex[65]);
/* The actual charge the response in buf[0..len) states (m's charge
 * header, or its top-level JSON member of the body): 0 with *charge, 1
 * when more of the response is needed (not eof, not full), -ENOENT when it
 * states none that can be read (the caller charges the bound). Pure,
 * fuzzed ('M'). */
int meter_charge(const struct policy_net_meter *m, const char *buf, size_t len, bool eof, bool full,
		 uint64_t *charge);

/* ------------------------------------------------------------ jobs.c */

/* Remote jobs (docs/network.md, "Remote jobs"): a job submitted through a
 * rule's "jobs" is leased to the session (its owner), its exposure (the
 * submission's bound) held in the ledger until its end is known. */
#define JOBS_MAX   64
#define JOB_ID_MAX 64

struct mediator_job {
	char id[JOB_ID_MAX + 1]; /* "" when the submission's response named none */
	char admission[48];	 /* the submission's: the job service's owner */
	char name[POLICY_NET_NAME_MAX + 2];
	uint16_t port;
	char address[46]; /* the literal its submission was sent to (INET6_ADDRSTRLEN) */
	const struct policy_net_rule *rule;
	bool outlive;	   /* submitted through "outlive": may outlive the session */
	size_t ledger;	   /* the ledger's slot (loop.c) */
	int64_t row;	   /* its reservation */
	uint64_t exposure; /* the bound reserved */
	bool reserved;	   /* row is the job's (not a free submission's) */
	bool pending;	   /* submitted, no response read yet */
	bool voided;	   /* no job: never sent, or the submission was refused */
	/* Its end (jobs_reconcile): our word for it, the service's, the
	 * cancel's answer, and the charge the service states. */
	char state[16];	 /* ended, retained, unknown, stopped */
	char remote[32]; /* the service's state, or "no-answer" */
	char cancel[16]; /* accepted, refused, no-answer, not-sent */
	uint64_t charge;
	bool has_charge;
	bool final;
};

struct mediator_jobs {
	struct mediator_job j[JOBS_MAX];
	size_t n;
};

enum job_route {
	JOB_NONE,
	JOB_SUBMIT,
	JOB_OUTLIVE,
};
/* Is a request of rule r a job submission? Pure. */
enum job_route jobs_route(const struct policy_net_rule *r, const char *method, const char *path);
/* The job id of a submission's whole response (head and body): its JSON
 * body's member "id", 1 to 64 of [A-Za-z0-9_.-] (it goes into a path).
 * 0, or -EINVAL. Pure, fuzzed ('j'). */
int jobs_parse_id(const char *resp, size_t len, char id[JOB_ID_MAX + 1]);
/* A status response: its HTTP status, the JSON body's "state" (1 to 31
 * of [a-z_-]) and "charge" (a whole number of credits, optional). 0, or
 * -EINVAL. Pure, fuzzed ('J'). */
int jobs_parse_status(const char *resp, size_t len, unsigned *status, char state[32],
		      uint64_t *charge, bool *has_charge);
/* A state the service will not leave: cancelled, completed, failed. */
bool jobs_state_ended(const char *state);
/* A route template with "{id}" replaced by id, into out. 0, or -E2BIG. */
int jobs_target(const char *tmpl, const char *id, char *out, size_t size);

/* What jobs_reconcile needs of the loop: a connecting socket to name:port
 * (or -1), and each job's end (its ledger row settled, its line logged). */
struct jobs_io {
	void *arg;
	int (*dial)(void *arg, const char *name, uint16_t port);
	void (*end)(void *arg, struct mediator_job *j);
};
/* Job j's status asked once, by method and tmpl (its "{id}" j->id), of
 * j->name:port through io->dial, with j->admission, within timeout_ms:
 * true when the service answered 2xx with a state (j->remote, j->charge,
 * j->has_charge); else false, j->remote "no-answer" (not dialled, not
 * answered in time) or "unreadable" unless it holds a state already. */
bool jobs_status(const struct jobs_io *io, struct mediator_job *j, const char *method,
		 const char *tmpl, uint64_t timeout_ms);
/* At the session's end: each job's status asked; one not ended is
 * retained (outlive) or cancelled and polled until it ends, for at most
 * settle_ms in all; what is not confirmed by then is unknown, never
 * stopped. stop (--weaken local-exit-is-stop): nothing asked, every job
 * "stopped". io->end is called once per job. */
void jobs_reconcile(struct mediator_jobs *t, uint64_t settle_ms, bool stop,
		    const struct jobs_io *io);

/* --------------------------------------------------------- adapter.c */

/* Provider adapters (docs/network.md, "Adapters"): the one action schema
 * both request shapes are parsed into. Names (model, tools) are 1 to 64 of
 * [A-Za-z0-9_.:-]: they go into the log as they are. */
#define ADAPTER_NAME_MAX  64
#define ADAPTER_TOOLS_MAX 8
#define ADAPTER_BODY_MAX  8192
struct adapter_action {
	char kind[16]; /* "generate" */
	char model[ADAPTER_NAME_MAX + 1];
	char tools[ADAPTER_TOOLS_MAX][ADAPTER_NAME_MAX + 1];
	size_t n_tools;
	uint64_t max_tokens;
	bool has_max;
};
/* A request of an adapter rule (its head parsed into rq, path its
 * origin-form target, the body in buf[head_len..len)) into a: 0; 1 when
 * the body is not all in yet (and !eof); -EINVAL with *why (static text)
 * when it is not the adapter's shape (unparsed). Pure, fuzzed ('a'). */
int adapter_parse(enum policy_adapter ad, const struct http_request *rq, const char *path,
		  const char *buf, size_t len, bool eof, struct adapter_action *a,
		  const char **why);
/* Does the grant g allow a (its model one of g's, each tool one of g's)?
 * 0, or -EACCES with *why. Pure. */
int adapter_allows(const struct policy_net_actions *g, const struct adapter_action *a,
		   const char **why);
/* The charge an adapter's response states, when the rule's "metered"
 * names none: the JSON body's usage.completion_tokens (openai) or
 * usage.output_tokens (anthropic), a whole number. 0 with *charge; 1 until
 * the response is read to its end (eof) or fills the buffer (full);
 * -ENOENT when it states none readably (the bound is charged). Pure,
 * fuzzed ('A'). */
int adapter_charge(enum policy_adapter ad, const char *buf, size_t len, bool eof, bool full,
		   uint64_t *charge);
/* a as the log's JSON object, into out. */
void adapter_action_json(const struct adapter_action *a, char *out, size_t size);
/* ---------------------------------------------------------- lookup.c */

/* A receiver lookup of an unknown operation (policy "metered.lookup",
 * docs/budget.md "Lookup"). */
enum lookup_result {
	LOOKUP_FOUND,	  /* a receipt (2xx): it took place */
	LOOKUP_NOT_FOUND, /* 404 or 410: it did not */
	LOOKUP_FAILED,	  /* no answer, or another one: still unknown */
};
/* The lookup's request for the Idempotency-Key key (kn bytes, 1 to 255,
 * percent-encoded into the path) to name:port, with a Paddock-Admission
 * header when admission is not empty, into out: its length, -EINVAL (no
 * lookup, no key), -ENOSPC. Pure, fuzzed. */
int lookup_request(const struct policy_net_lookup *lk, const char *name, uint16_t port,
		   const char *key, size_t kn, const char *admission, char *out, size_t size);
/* The verdict on a whole answer buf (full: it filled the buffer, so it is
 * not whole: FAILED): *status (0 if none), and for a receipt the charge it
 * states by m's "charge" (*stated false: none stated). Pure, fuzzed. */
enum lookup_result lookup_verdict(const struct policy_net_meter *m, const char *buf, size_t len,
				  bool full, unsigned *status, bool *stated, uint64_t *charge);

/* ---------------------------------------------------------- ledger.c */

/* The durable ledger of a budget: DIR/BUDGET.sqlite (SQLite, WAL, a
 * group commit: see ledger.c, STRICT tables), shared by every process naming the
 * budget. Rows: reserved -> settled (the receiver's charge, or the bound),
 * released (never sent), unknown (sent, no answer: the bound stays held
 * until the operator settles it). */
struct ledger;
enum {
	LEDGER_OK = 0,
	LEDGER_CAP = 1,	      /* the bound does not fit what is left of the cap */
	LEDGER_UNKNOWN = 2,   /* an attempt of this op_key is unknown: not sent again */
	LEDGER_IN_FLIGHT = 3, /* an attempt of this op_key is reserved now */
	LEDGER_RECEIPT = 4,   /* this op_key was settled from a receipt (a lookup) */
};
struct ledger_request {
	const char *budget;
	uint64_t cap;
	const char *op_key; /* or NULL */
	const char *session;
	const char *route; /* "METHOD NAME:PORT/PATH", for the operator */
	uint64_t bound;
	bool check_then_charge; /* --weaken check-then-charge */
};
struct ledger_totals {
	uint64_t reserved, unknown, settled, ops, n_unknown, cap;
	bool has_cap;
};
struct ledger_op {
	int64_t id;
	const char *op_key, *session, *route, *state, *source;
	uint64_t bound, charge;
	bool has_charge;
	int64_t created_ms, ended_ms;
};
typedef void (*ledger_each_fn)(const struct ledger_op *op, void *arg);

/* Open (create: 0600) DIR/BUDGET.sqlite; DIR must be ours and writable
 * by us only, the file a regular file of ours with mode 0600 (not a
 * symlink). busy_ms: how long a locked ledger is waited for. -errno with
 * err's one line. */
int ledger_open(const char *dir, const char *budget, unsigned busy_ms, struct ledger **out,
		struct err *err);
void ledger_close(struct ledger *l);
/* SQLite's synchronous=FULL instead of the group commit (an fsync inside
 * every commit, with the lock held): bench/ledger_bench.c's "before",
 * measured in the same run. Durable either way. */
void ledger_commit_sync(struct ledger *l);
/* Without the writers' queue (DIR/BUDGET.sqlite-queue, ledger_queue.c):
 * SQLite's lock alone, polled by the busy handler, and SQLite's own
 * checkpoint inside COMMIT, as the ledger was before the queue: the
 * bench's "poll" and the tests' twin. */
void ledger_queue_off(struct ledger *l);
/* How many times this connection's busy handler retried SQLite's lock. */
unsigned long ledger_busy_waits(const struct ledger *l);
/* For the tests: the writers' queue taken (waited for at most ms: 0, or
 * -ETIMEDOUT) and released, as a writer holds it. */
int ledger_queue_hold(struct ledger *l, unsigned ms);
void ledger_queue_release(struct ledger *l);
/* In one BEGIN IMMEDIATE transaction: refuse a replay of a reserved or
 * unknown op_key, or of one settled from a receipt (*id: that row, for
 * the lookup), refuse a bound over what is left of the cap, else insert
 * the reservation (*id), durable when this returns. LEDGER_* >= 0, or
 * -errno (-EBUSY: locked past busy_ms; -EIO) with err. */
int ledger_reserve(struct ledger *l, const struct ledger_request *rq, int64_t *id, struct err *err);
/* A lookup's end of an unknown row: found, settled with charge (source
 * "lookup"); not found, reserved again by this process for the replay
 * (its bound raised to rq->bound if that fits the cap: else LEDGER_CAP;
 * *bound the row's),
 * durable when this returns. LEDGER_OK, LEDGER_CAP, -ENOENT when the row
 * is no longer unknown (another mediator's lookup came first), -errno. */
int ledger_lookup_settle(struct ledger *l, int64_t id, bool stated, uint64_t charge,
			 struct err *err);
int ledger_lookup_claim(struct ledger *l, int64_t id, const struct ledger_request *rq,
			uint64_t *bound, struct err *err);
/* A reserved row's end, once: settled with charge (source "receiver" or
 * "bound"), unknown, released. -ENOENT when it is not reserved. */
int ledger_settle(struct ledger *l, int64_t id, uint64_t charge, const char *source,
		  struct err *err);
int ledger_unknown(struct ledger *l, int64_t id, struct err *err);
int ledger_release(struct ledger *l, int64_t id, const char *source, struct err *err);
/* Reserved rows of processes that are gone (a crash) become unknown:
 * nothing is released. *count of them. */
int ledger_recover(struct ledger *l, unsigned *count, struct err *err);
/* The operator (paddock budget settle): an unknown row settled with the
 * charge the receiver's own records show. -ENOENT when it is not unknown. */
int ledger_operator_settle(struct ledger *l, int64_t id, uint64_t charge, struct err *err);
/* A remote job's row (docs/network.md, "Remote jobs"): what is needed to
 * ask its service about it after its session (`paddock budget jobs`). */
struct ledger_job {
	const char *job, *admission, *host;
	uint16_t port;
	const char *address; /* the literal its submission was sent to */
	const char *status;  /* the status route, "METHOD /path/{id}" */
	bool outlive;
	const char *session_end; /* the session's word at its end ("": none yet) */
};
typedef void (*ledger_each_job_fn)(const struct ledger_op *op, const struct ledger_job *jb,
				   bool owner_alive, void *arg);
/* Row id is the job's: noted at its lease, its session's word at its end
 * (retained, unknown, ended, stopped). -errno with err. */
int ledger_job_note(struct ledger *l, int64_t id, const struct ledger_job *jb, struct err *err);
int ledger_job_end(struct ledger *l, int64_t id, const char *session_end, struct err *err);
/* An unknown job's row settled by its service's word after its session:
 * its stated charge, or the bound (source "job-status"), durable when
 * this returns. -ENOENT when it is not unknown. */
int ledger_job_settle(struct ledger *l, int64_t id, bool stated, uint64_t charge, struct err *err);
/* Every job's row with its op (id, session, state, bound) and whether
 * the op's owner (its mediator) is alive. */
int ledger_each_job(struct ledger *l, ledger_each_job_fn fn, void *arg, struct err *err);
int ledger_totals(struct ledger *l, struct ledger_totals *t, struct err *err);
int ledger_each(struct ledger *l, ledger_each_fn fn, void *arg, struct err *err);
/* PRAGMA integrity_check. */
int ledger_check(struct ledger *l, struct err *err);

/* paddock budget jobs (budget_jobs.c): each job of an unknown row (its
 * session retained it, or could not confirm its end) asked once, within
 * timeout_ms, by the status route and address noted at its lease; an
 * ended one settled with its service's charge (none stated: its
 * exposure), the rest held; a JSON document or a table on stdout. 0 every
 * job asked answered, 2 a service did not answer, -errno (err). */
int budget_jobs(struct ledger *l, const char *budget, bool json, uint64_t timeout_ms,
		struct err *err);
/* paddock budget show|export|settle (budget.c): argv[0] "--budget",
 * then DIR VERB BUDGET [ARGS]. Its exit status. */
int budget_main(int argc, char **argv);

/* ----------------------------------------------------- credentials.c */

/* Brokered credentials (docs/network.md): the workload holds a placeholder
 * "pdk_" + 32 hex digits (random per session, made by the supervisor); the
 * mediator puts the secret in its place on requests a grant with that
 * credential covers, and redacts the secret from every response. */
#define CRED_MAX	     32
#define CRED_SECRET_MIN	     8 /* a shorter one would be redacted from every response */
#define CRED_SECRET_MAX	     4096
#define CRED_PLACEHOLDER_LEN 36
#define CRED_FILE_MAX	     65536

/* A spelling of a secret the redaction looks for (redact.c): its bytes in
 * canonical form (hex lower case, base64 in the standard alphabet) and
 * its Knuth-Morris-Pratt failure table, both in a region never dumped. */
enum {
	REDACT_FORM_RAW,
	REDACT_FORM_HEX,
	REDACT_FORM_B64, /* + 0, 1, 2: the alignment to a 3-byte group */
	REDACT_FORMS = REDACT_FORM_B64 + 3,
};
enum {
	REDACT_CANON_NONE,
	REDACT_CANON_HEX, /* compared with A-F folded to a-f */
	REDACT_CANON_B64, /* compared with '-' and '_' folded to '+' and '/' */
};
struct redact_form {
	const char *p;
	size_t n;
	const uint32_t *fail;
	unsigned canon;
};
static inline unsigned char redact_canon(unsigned kind, unsigned char c)
{
	if (kind == REDACT_CANON_HEX && c >= 'A' && c <= 'F')
		return (unsigned char)(c | 0x20);
	if (kind == REDACT_CANON_B64)
		return c == '-' ? '+' : c == '_' ? '/' : c;
	return c;
}

struct mediator_secret {
	char env[POLICY_CRED_NAME_MAX + 1];
	char placeholder[CRED_PLACEHOLDER_LEN + 1];
	const struct policy_net_credential *where; /* the first grant's, for any-audience */
	char *value;				   /* in the locked region, never logged */
	size_t len;
	char fingerprint[9]; /* HMAC-SHA-256(key, value), the first 8 hex digits */
	struct redact_form form[REDACT_FORMS];
};

struct mediator_credentials {
	struct mediator_secret s[CRED_MAX];
	size_t n;
	bool any_audience; /* --weaken credential-any-audience */
	char *region;	   /* mmap'd, MADV_DONTDUMP, mlock'ed if it can be */
	size_t region_len;
	char *scratch; /* BUF_SIZE bytes in the region: a head being rebuilt */
	size_t used;
	bool plain_only;    /* --weaken redact-plain-only: mediator_cred_redact() alone */
	char *forms_region; /* the secrets' forms (redact.c), MADV_DONTDUMP */
	size_t forms_len;
	size_t form_max;	  /* the longest form */
	unsigned char first[256]; /* 1: a form may begin with this byte (its fast path) */
};

/* The secret called name in a secrets file's text: lines "NAME=VALUE"
 * (NAME 1 to 64 of [A-Za-z0-9_.-], VALUE 8 to 4096 visible ASCII
 * characters), blank lines and "#" comments; LF line ends. The whole text
 * is checked: -EINVAL with *line (1-based) for a bad line or a name given
 * twice; -ENOENT when name is not there; 0 with *value (into buf) and *len.
 * Pure, fuzzed; never copies the value. */
int mediator_secrets_find(const char *buf, size_t len, const char *name, const char **value,
			  size_t *vlen, size_t *line);

/* Add env's placeholder (from the supervisor), then read the secrets file
 * path (O_NOFOLLOW; a regular file of ours, no group or other bits) and
 * keep each env's secret in a region marked MADV_DONTDUMP. One line in err
 * for a bad file or a missing secret, never naming a value. */
int mediator_credentials_add(struct mediator_credentials *cr, const char *env,
			     const char *placeholder, struct err *err);
int mediator_credentials_load(struct mediator_credentials *cr, const char *path,
			      const struct policy *p, const unsigned char *key, struct err *err);
void mediator_credentials_free(struct mediator_credentials *cr);

/* An admitted request of rule r, rewritten (loop.c's rewrite()): its head
 * buf[0..head_len), body bytes up to *len, room for size. Each placeholder
 * in the header or query parameter of a covering grant's credential is
 * replaced by the secret; every other value of that header or parameter is
 * dropped; a placeholder left anywhere in the head is a refusal (-EACCES).
 * Returns the new head length; -E2BIG, -EINVAL. note gets the log's extra
 * fields (the variable and the fingerprint), or "". Pure but for cr's
 * scratch buffer. */
int mediator_cred_swap(const struct mediator_credentials *cr, const struct policy_net_rule *r,
		       char *buf, size_t *len, size_t size, size_t head_len, char *note,
		       size_t note_size);

/* Redact (same length, '*') every secret in buf[0..len) from upstream, and
 * the number of bytes at its end to hold back: a proper prefix of a secret
 * whose rest may come with the next read (none at eof). *count grows by the
 * occurrences. Pure. */
size_t mediator_cred_redact(const struct mediator_credentials *cr, char *buf, size_t len, bool eof,
			    unsigned long *count);

/* ---------------------------------------------------------- redact.c */

/* The redaction of responses (docs/network.md, "Redaction"): every secret,
 * also hex, base64 (both alphabets, any alignment), percent-encoded or
 * JSON-escaped, in the head, the body and a chunked body's trailers, also
 * split across chunks or reads. One per connection, over the bytes from
 * upstream in order. */
struct redact {
	const struct mediator_credentials *cr;
	int phase;
	bool head_request, strict;
	long failed;
	uint64_t at;   /* the wire offset of the next byte to read */
	uint64_t left; /* Content-Length: bytes to come; chunked: of this chunk */
	int cstate;
	unsigned digits;
	uint64_t ent, *wire; /* entity bytes seen; ring: entity byte -> wire offset */
	size_t cap;
	uint64_t dec, *dstart; /* decoded bytes seen; ring: -> its first entity byte */
	size_t dcap;
	uint32_t st[CRED_MAX][REDACT_FORMS][2]; /* each automaton: wire, decoded view */
	unsigned active[2];			/* automata of each view past state 0 */
	unsigned char pend[6];			/* an escape being read */
	size_t npend;
	uint64_t pend_start;
	unsigned long count; /* occurrences redacted */
};

/* Each secret's forms (redact_forms.c; at the end of
 * mediator_credentials_load()), and their region's end (in
 * mediator_credentials_free()). -errno. */
int redact_forms_build(struct mediator_credentials *cr);
void redact_forms_free(struct mediator_credentials *cr);
/* A connection's redaction: http (an HTTP request was sent: the response
 * is framed), head_request (its method was HEAD: no body), strict (an
 * audience of a credential: a coded response is refused). -ENOMEM. */
int redact_init(struct redact *r, const struct mediator_credentials *cr, bool http,
		bool head_request, bool strict);
void redact_free(struct redact *r);
/* The bytes from upstream not yet released, buf[0..len) (len at most
 * HTTP_HEAD_MAX: a hold of all of it when full is the caller's to cut),
 * the first at wire offset base (the count released before): each secret's occurrence
 * there starred ('*', same length); returns how many bytes at the end to
 * hold back (0 at eof). -EINVAL for a response that cannot be framed
 * (strict HTTP/1.1, a Content-Length with Transfer-Encoding), -EPROTO for
 * a compressed or otherwise coded one when strict: the rest must not reach
 * the workload. Pure but for its state; fuzzed ('x'). */
long redact_scan(struct redact *r, char *buf, size_t len, uint64_t base, bool eof);
/* Does a grant of r carry a credential (r is an audience)? */
bool redact_rule_audience(const struct policy_net_rule *r);

/* ------------------------------------------------------------ loop.c */

enum mediator_listener_kind {
	MEDIATOR_PROXY,	      /* HTTP proxy: absolute-form requests and CONNECT */
	MEDIATOR_TRANSPARENT, /* a declared port on the wildcard address */
	MEDIATOR_DNS_UDP,
	MEDIATOR_DNS_TCP,
	MEDIATOR_CONTROL, /* the supervisor's channel (paddock approve): SOCK_SEQPACKET */
};

/* Why a connection or query was admitted or refused: include/admission.h. */

struct mediator;
/* The dial of an admitted connection: a connecting non-blocking socket, or
 * -errno. Tests replace it (mediator->dial) to prove what is never dialled. */
typedef int (*mediator_dial_fn)(struct mediator *m, const struct sockaddr *sa, socklen_t len);

struct mediator_config {
	const struct policy *policy; /* its network.allow and network.resolve */
	const char *session;	     /* for the admissions log */
	unsigned generation;
	int log_fd;			     /* the admissions log (O_APPEND), or -1 */
	unsigned char key[EVIDENCE_KEY_LEN]; /* the run's evidence key: the log is chained */
	/* --weaken dns-open: every name the stub would refuse is sent to
	 * this resolver and its answer relayed (len 0: never). */
	struct sockaddr_storage dns_upstream;
	socklen_t dns_upstream_len;
	/* The release gate: --weaken gate-off, and the approvals given
	 * before the run (the approvals file). */
	bool gate_off;
	const struct approval *approvals;
	size_t n_approvals;
	bool verbose_denial;  /* --weaken verbose-denial */
	bool trace_denials;   /* paddock run --trace-denials: refusals also on stderr */
	bool retry_unbounded; /* --weaken retry-unbounded */
	bool log_unsequenced; /* --weaken no-seq */
	const struct mediator_credentials *cred; /* NULL: none brokered */
	/* Metered rules (ledger.c): the ledgers' directory (NULL: every
	 * billable request is refused, the ledger is unavailable), how long a
	 * locked one is waited for, and the budgets' weakenings. */
	const char *budget_dir;
	unsigned ledger_busy_ms;
	bool check_then_charge;	  /* --weaken check-then-charge */
	bool unpriced_free;	  /* --weaken unpriced-as-free */
	bool release_on_timeout;  /* --weaken release-on-timeout */
	bool local_exit_is_stop;  /* --weaken local-exit-is-stop */
	bool unknown_event_allow; /* --weaken unknown-event-allow */
	bool lookup_fail_open;	  /* --weaken lookup-fail-open */
};

/* A mediator over cfg (which must outlive it). -ENOMEM. */
int mediator_new(const struct mediator_config *cfg, struct mediator **out);
void mediator_free(struct mediator *m);
void mediator_set_dial(struct mediator *m, mediator_dial_fn dial);
/* Lines of the admissions log lost since the last one written (no line
 * says so): what the mediator tells the supervisor at its end. */
unsigned long mediator_log_lost(const struct mediator *m);
/* Resolve name for port and dial it, if a rule allows it: the fd, or -1
 * with *decision why not (nothing is dialled then). The admission id of an
 * allowed one is in id. */
int mediator_open_upstream(struct mediator *m, const char *name, uint16_t port,
			   enum mediator_decision *decision);
/* The listening socket fd of kind (port: TRANSPARENT's). -ENOMEM. */
int mediator_add_listener(struct mediator *m, int fd, enum mediator_listener_kind kind,
			  uint16_t port);
/* Serve until SIGTERM (or SIGINT) arrives on the signalfd sfd: then every
 * open connection is logged as closed. -errno on a failure of the loop. */
int mediator_run(struct mediator *m, int sfd);
/* After mediator_run: the session's remote jobs reconciled (jobs.c), each
 * end in the log. */
void mediator_end_jobs(struct mediator *m);
/* DNS: the answer to one query in buf (len bytes) into out. Pure but for
 * the name table it extends. Returns its length, or -EINVAL for a query
 * not worth an answer. */
int mediator_dns_answer(struct mediator *m, const unsigned char *buf, size_t len,
			unsigned char *out, size_t size);
