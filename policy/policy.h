/* Policy v1: JSON bytes in, validated struct policy out. Pure code: no
 * syscalls, no printing, no exit. The format is documented field by field
 * in docs/policy.md and paddock-policy(5). */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "../include/err.h"

#define POLICY_MAX_BYTES (1u << 20) /* larger input is refused before parsing */
#define POLICY_MAX_DEPTH 16	    /* JSON nesting deeper than this is refused */

enum policy_ns {
	POLICY_NS_USER = 1u << 0,
	POLICY_NS_MOUNT = 1u << 1,
	POLICY_NS_PID = 1u << 2,
	POLICY_NS_NET = 1u << 3,
	POLICY_NS_IPC = 1u << 4,
	POLICY_NS_UTS = 1u << 5,
	POLICY_NS_CGROUP = 1u << 6,
};
#define POLICY_NS_ALL	   0x7fu
#define POLICY_NS_REQUIRED (POLICY_NS_USER | POLICY_NS_MOUNT | POLICY_NS_PID | POLICY_NS_NET)

enum policy_mount_type {
	POLICY_MOUNT_BIND,
	POLICY_MOUNT_TMPFS,
	POLICY_MOUNT_PROC,
	POLICY_MOUNT_DEV,
	POLICY_MOUNT_DIR,
	POLICY_MOUNT_SYMLINK,
};

enum policy_net {
	POLICY_NET_NONE,     /* a new net namespace with only lo, up */
	POLICY_NET_MEDIATED, /* the same, and paddock-mediator the only way out (docs/network.md) */
};

enum policy_rlimit {
	POLICY_RLIMIT_NPROC,
	POLICY_RLIMIT_NOFILE,
	POLICY_RLIMIT_FSIZE,
	POLICY_RLIMIT_AS,
	POLICY_RLIMIT_CORE,
	POLICY_RLIMIT_COUNT,
};
#define POLICY_UNLIMITED      UINT64_MAX
#define POLICY_OUTPUT_DEFAULT (64ull << 20)

struct policy_mount {
	enum policy_mount_type type;
	size_t index;	     /* position in "mounts", for error messages */
	char *source;	     /* bind: absolute host path, variables expanded */
	char *target;	     /* absolute sandbox path, variables expanded, never "/" */
	char *link;	     /* symlink: the link text */
	bool readonly;	     /* bind: "mode" "ro" (the default) */
	bool optional;	     /* bind: a missing source is skipped, not an error */
	bool copy_symlink;   /* bind: "symlink": "copy" - a symlink source is recreated */
	bool follow_symlink; /* bind: "symlink": "follow" - the source resolved first */
	uint64_t size;	     /* tmpfs: bytes, 0 = kernel default */
	unsigned mode;	     /* tmpfs, dir: permission bits (tmpfs default 0755, dir 0755) */
};

enum policy_protect_git {
	POLICY_PROTECT_GIT_CHECK,     /* "check": its config, hooks, ... read-only, the rest checked
					 after */
	POLICY_PROTECT_GIT_ALLOWLIST, /* "allowlist": read-only but what git writes
					 (mounts/gitallow.c) */
};

enum policy_seccomp_profile {
	POLICY_SECCOMP_DEFAULT, /* the built-in allowlist (launcher/seccomp.c) */
	POLICY_SECCOMP_NONE,	/* no filter: a weakening, recorded as such */
};

enum policy_seccomp_action {
	POLICY_SECCOMP_ERRNO, /* fail the call with seccomp_errno (default EPERM) */
	POLICY_SECCOMP_KILL,  /* kill the process (SCMP_ACT_KILL_PROCESS) */
	POLICY_SECCOMP_LOG,   /* allow, but log (SCMP_ACT_LOG); for profiling only */
};

struct policy_syscall_rule {
	char *name;	 /* syscall name, checked against libseccomp by the launcher */
	int errno_value; /* deny: the errno returned (positive) */
	size_t index;	 /* position in the JSON list, for error messages */
};

enum policy_landlock_mode {
	POLICY_LANDLOCK_BEST_EFFORT, /* apply what the kernel's ABI offers; none is recorded */
	POLICY_LANDLOCK_REQUIRED,    /* no Landlock on this kernel: exit 125 */
};

/* "services": started by paddock-init before the main command; each may
 * outlive it until its lease ends (docs/sessions.md). */
struct policy_service {
	char *name;  /* [A-Za-z0-9_.-]{1,64}, unique in the policy */
	char **argv; /* NULL-terminated, argv[0] non-empty */
	size_t argc;
	uint64_t lease_ms; /* from the service's start; 0 = ends with the main command */
	size_t index;	   /* position in "services", for error messages */
};

#define POLICY_PORTS_MAX 16 /* entries of "ports" */

#define POLICY_NET_RULES_MAX	   64		/* entries of "network.allow" */
#define POLICY_NET_PORTS_MAX	   16		/* ports of one rule */
#define POLICY_NET_RESOLVE_MAX	   16		/* entries of "network.resolve" */
#define POLICY_NET_NAME_MAX	   253		/* a DNS name, without the trailing dot */
#define POLICY_NET_HOLD_DEFAULT_MS 5000		/* "network.hold" when absent */
#define POLICY_NET_HOLD_MAX_MS	   (10 * 60000) /* and at most */

enum policy_net_proto {
	POLICY_NET_HTTP = 1u << 0, /* HTTP/1.1: proxy-form, or transparent on the port */
	POLICY_NET_TLS =
	    1u << 1, /* TLS, the SNI checked against the name (CONNECT or transparent) */
	POLICY_NET_TCP = 1u << 2, /* plain TCP to the name's port */
};

/* "network.allow": where a mediated sandbox may connect. */
#define POLICY_GRANTS_MAX	 32  /* grants of one rule */
#define POLICY_GRANT_METHODS_MAX 8   /* methods of one grant */
#define POLICY_GRANT_VARS_MAX	 8   /* {named} segments of one path template */
#define POLICY_GRANT_VALUES_MAX	 64  /* allowed values of one named segment */
#define POLICY_GRANT_PATH_MAX	 512 /* a path template's length */

/* A named segment of a grant's path template and the values it may take
 * (none listed: any one segment). */
struct policy_net_grant_var {
	char *name;
	char **values;
	size_t n_values;
};

/* "grants" of an http rule (docs/network.md, "Grants"): a request is
 * admitted when its method is one of methods and its path matches the
 * template segment by segment, each {name} bound to one of its values. */
/* An attempt budget (docs/network.md, "Denials and attempt budgets"):
 * per logical operation, at most attempts tries and none after deadline_ms
 * from the first; 0 = not set. On a grant it replaces the rule's. */
#define POLICY_BUDGET_ATTEMPTS_MAX 100
#define POLICY_BUDGET_DEADLINE_MAX (24ull * 60 * 60 * 1000)
struct policy_net_budget {
	unsigned attempts;
	uint64_t deadline_ms;
};

/* A grant's brokered credential (docs/network.md, "Brokered
 * credentials"): the workload finds a per-session placeholder in env; the
 * mediator puts the secret named secret (from the secrets file, never
 * inside the sandbox) in place of it, in header (after prefix) or in the
 * query parameter query, only on requests this grant covers. */
#define POLICY_CRED_NAME_MAX   64 /* secret, env, header and query names */
#define POLICY_CRED_PREFIX_MAX 64
struct policy_net_credential {
	char *secret;
	char *env;
	char *header; /* NULL for a query credential */
	char *prefix; /* "" unless given; header only */
	char *query;  /* NULL for a header credential */
};

/* Metered rules (docs/network.md, "Budgets"): the price of one attempt,
 * in credits: fixed, or an upper bound from the request's JSON body
 * (base + per x the body's top-level integer field, which must be there
 * and at most field_max). POLICY_PRICE_NONE: unpriced (strict mode
 * refuses it). */
#define POLICY_METER_ID_MAX	 64	      /* a budget id: [a-z0-9_.-] */
#define POLICY_METER_CREDITS_MAX (1ull << 50) /* caps, prices and bounds */
#define POLICY_METER_FIELD_MAX	 64	      /* a JSON member or header name */
enum policy_price_kind {
	POLICY_PRICE_NONE,
	POLICY_PRICE_FIXED,
	POLICY_PRICE_FIELD,
};
struct policy_net_price {
	enum policy_price_kind kind;
	uint64_t base; /* FIXED: the price; FIELD: added to per x field */
	char *field;   /* FIELD only */
	uint64_t per;
	uint64_t field_max;
};
/* A rule's "metered": the budget every attempt is reserved against
 * before it is dispatched (a ledger shared by every session naming the
 * same budget id), its cap, where the receiver states the actual charge
 * (a response header or a top-level JSON member of its body; neither:
 * the bound is charged), and the rule's price (a grant's replaces it). */
/* A metered rule's "lookup" (docs/budget.md, "Lookup"): how the mediator
 * asks the receiver whether an operation whose outcome is unknown took
 * place: GET prefix KEY suffix on the rule's own name and port, KEY the
 * replay's Idempotency-Key (percent-encoded), answered within timeout_ms:
 * a 2xx is a receipt (its charge where the rule's "charge" says), 404 or
 * 410 "not found", anything else a failed lookup. */
#define POLICY_LOOKUP_PATH_MAX	  256
#define POLICY_LOOKUP_TIMEOUT_MAX (10 * 1000)
struct policy_net_lookup {
	char *prefix; /* "/v1/receipts/"; NULL: no lookup */
	char *suffix; /* what follows {key}, "" or "?full=1" */
	uint64_t timeout_ms;
};
struct policy_net_meter {
	char *budget;
	uint64_t cap;
	char *charge_header; /* lower case, or NULL */
	char *charge_field;  /* or NULL */
	struct policy_net_price price;
	struct policy_net_lookup lookup;
};

/* A metered rule's asynchronous jobs (docs/network.md, "Remote jobs"):
 * a request of submit (or outlive) is a job submission; its bound (the
 * grant's or rule's price) is the job's exposure, reserved until the job
 * ends. The response's JSON member "id" names the job; status and cancel
 * are path templates with one "{id}". At the session's end the mediator
 * asks each job's status, cancels those not ended (and not submitted
 * through outlive, which are authorised to outlive the session), and polls
 * them for at most settle_ms; what it cannot confirm is unknown. */
#define POLICY_JOBS_SETTLE_MAX (60ull * 1000)
#define POLICY_JOBS_SETTLE_DEF (5ull * 1000)
#define POLICY_JOB_PATH_MAX    256
struct policy_net_route {
	char method[8];
	char *path; /* NULL: none */
};
struct policy_net_jobs {
	struct policy_net_route submit, status, cancel, outlive;
	uint64_t settle_ms;
};

/* Provider adapters (docs/network.md, "Adapters"): an http rule's
 * "adapter" names the request shape the mediator parses into the one
 * action schema ("network.actions" is the grant every adapter shares);
 * "fallback" names the adapter rule it stands in for. */
enum policy_adapter {
	POLICY_ADAPTER_NONE,
	POLICY_ADAPTER_OPENAI,	  /* POST /v1/chat/completions */
	POLICY_ADAPTER_ANTHROPIC, /* POST /v1/messages */
};
#define POLICY_ACTIONS_MAX 32 /* models, and tools */
struct policy_net_actions {
	char **models; /* a "generate" action's model must be one of them */
	size_t n_models;
	char **tools; /* every tool it declares must be one of them */
	size_t n_tools;
};

struct policy_net_grant {
	char *methods[POLICY_GRANT_METHODS_MAX];
	size_t n_methods;
	char *path; /* "/tenants/{tenant}/objects/{id}" */
	struct policy_net_grant_var vars[POLICY_GRANT_VARS_MAX];
	size_t n_vars;
	struct policy_net_budget budget;
	struct policy_net_credential *credential; /* NULL: none */
	struct policy_net_price price;		  /* "metered": {"price": ...} */
};

struct policy_net_rule {
	char *host; /* lower case; "api.example.com", or "*.example.com" (any name below) */
	uint16_t ports[POLICY_NET_PORTS_MAX];
	size_t n_ports;
	enum policy_net_proto protocol;
	size_t index; /* position in "network.allow", for messages and admissions */
	/* None: every request to host and port (the rule is host-wide). */
	struct policy_net_grant *grants;
	size_t n_grants;
	/* The release gate (docs/network.md, "Release gate"): a publication
	 * sink ("publish", an http rule) holds every request with a body
	 * until its digest is approved; a response from a "private" rule
	 * taints the session. */
	bool publish;
	bool private;
	struct policy_net_budget budget; /* "attempts", "deadline" (http rules) */
	/* "tool": an upstream's own error response is replaced by the terse
	 * denial (its status and digest go to the admissions log only). */
	bool tool;
	struct policy_net_meter *meter; /* "metered" (http rules), or NULL */
	struct policy_net_jobs *jobs;	/* "jobs" (metered rules), or NULL */
	enum policy_adapter adapter;	/* "adapter" (http rules) */
	char *fallback;			/* "fallback": the host of the rule it stands in for */
};

/* A path template's form: "/", or "/" segments each a {name} (a-z, 0-9,
 * '_', starting with a letter) or literal RFC 3986 path characters
 * without '%', never "." or "..". 0, or -EINVAL with *why. */
int policy_grant_path_check(const char *path, const char **why);

/* "network.resolve": a name resolved to a fixed address by the mediator
 * instead of DNS; an address it would refuse (loopback, private) is then
 * allowed for that name only, because a rule names it (tests, local
 * services). */
struct policy_net_resolve {
	char *host;
	char *addr; /* an IPv4 or IPv6 literal */
};

/* "ports": the supervisor listens on the host's loopback and relays each
 * connection into the sandbox's network namespace. */
struct policy_port {
	char *host_addr;       /* "127.0.0.1" or "::1" (loopback only) */
	uint16_t host_port;    /* 0 = "auto": the sandbox port if free, else any free port */
	uint16_t sandbox_port; /* 1-65535, inside the sandbox, on its loopback */
	bool http;	       /* "protocol": "http": the relay stamps every response */
	char *service;	       /* "service": a name of "services", or NULL */
	size_t index;	       /* position in "ports", for error messages */
};

struct policy_rlimit_value {
	bool set;
	uint64_t value; /* POLICY_UNLIMITED for "unlimited" */
};

/* network.on_capture_loss: what the mediator admits while its admissions
 * log cannot be written (docs/evidence.md). */
enum policy_capture_loss {
	POLICY_CAPTURE_DENY,	  /* nothing new: every admission is refused */
	POLICY_CAPTURE_READ_ONLY, /* http GET, HEAD and OPTIONS only; no tunnel */
	POLICY_CAPTURE_ALLOW,	  /* as usual, unrecorded (the next line counts the drops) */
};

const char *policy_capture_loss_name(enum policy_capture_loss c);

struct policy {
	unsigned namespaces; /* POLICY_NS_* bits; always includes POLICY_NS_REQUIRED */
	char *hostname;	     /* never NULL; default "paddock" */
	bool has_uid, has_gid;
	uint32_t uid, gid; /* inside; when !has_*, the caller's own ids */
	char *cwd;	   /* never NULL; default "/" */
	enum policy_net network;
	struct policy_net_rule *net_allow;
	size_t n_net_allow;
	struct policy_net_resolve *net_resolve;
	size_t n_net_resolve;
	uint64_t net_hold_ms; /* "network.hold": how long a publication waits for an approval */
	char *net_secrets;    /* network.secrets: the secrets file, or NULL */
	enum policy_capture_loss net_on_capture_loss; /* network.on_capture_loss (default deny) */
	struct policy_net_actions *net_actions;	      /* network.actions (adapters), or NULL */
	bool env_clear;				      /* default true */
	char **env_keep;			      /* names; a trailing '*' matches a prefix */
	size_t n_env_keep;
	char **env_set; /* "NAME=value", variables expanded, in policy order */
	size_t n_env_set;
	struct policy_mount *mounts;
	size_t n_mounts;
	char **protect; /* absolute sandbox paths, each inside a bind target */
	size_t n_protect;
	/* "protect_git": how a git directory found by a ** entry is protected
	 * (docs/security.md, "The git directory as an allowlist") */
	enum policy_protect_git protect_git;
	/* Not a policy key: with "allowlist", the data directories (objects,
	 * refs, logs) of each protected git directory, sandbox paths, bound
	 * writable again on top of its read-only bind (mounts/git.c). */
	char **protect_rw;
	size_t n_protect_rw;
	char **protect_ro; /* ... and those that are a whole bind, made read-only */
	size_t n_protect_ro;
	uint64_t ttl_ms;   /* 0 = no time limit */
	uint64_t grace_ms; /* default 2000 */
	struct policy_rlimit_value rlimits[POLICY_RLIMIT_COUNT];
	uint64_t output_max; /* limits.output: bytes kept per detached stream; default 64 MiB */
	/* limits.memory, .cpu, .pids: cgroup v2 memory.max, cpu.max (quota in
	 * us per 100 ms), pids.max; 0 = not set. */
	uint64_t memory_max;
	uint64_t cpu_quota_us;
	uint64_t pids_max;
	/* "seccomp" */
	enum policy_seccomp_profile seccomp_profile;	   /* default POLICY_SECCOMP_DEFAULT */
	enum policy_seccomp_action seccomp_default_action; /* for calls not allowed */
	int seccomp_errno;				   /* default EPERM */
	struct policy_syscall_rule *seccomp_allow;	   /* errno_value unused */
	size_t n_seccomp_allow;
	struct policy_syscall_rule *seccomp_deny;
	size_t n_seccomp_deny;
	/* "landlock" */
	enum policy_landlock_mode landlock_mode; /* default best-effort */
	bool landlock_tcp;			 /* "tcp" present: restrict TCP bind/connect */
	uint16_t *landlock_tcp_bind;		 /* ports that may be bound */
	size_t n_landlock_tcp_bind;
	uint16_t *landlock_tcp_connect; /* ports that may be connected to */
	size_t n_landlock_tcp_connect;
	struct policy_service *services; /* "services", in policy order */
	size_t n_services;
	struct policy_port *ports; /* "ports", in policy order */
	size_t n_ports;
	/* evidence.witness: a second witness of the evidence checkpoints (a
	 * directory, or a file), absolute, variables expanded; or NULL. */
	char *evidence_witness;
	char sha256[65]; /* lower-case hex SHA-256 of the exact input bytes */
};

/* Values for ${WORKSPACE}, ${HOME} and ${PWD}; each an absolute path the
 * caller has already made canonical. A NULL value makes its use an error. */
struct policy_vars {
	const char *workspace;
	const char *home;
	const char *pwd;
};

/* An environment variable name, as the policy and paddock exec accept it:
 * [A-Za-z_][A-Za-z0-9_]* over len bytes. */
bool policy_env_name_ok(const char *s, size_t len);
/* "extends" (policy/extends.c, docs/policy.md "Policies that compose").
 * fetch gives the text of the base named name (a profile or a file, as
 * the caller decides; from names a policy that includes it, for relative
 * paths and messages), malloc'd, and a label for messages: 0, or -errno
 * with err set. */
struct cJSON;
typedef int (*policy_fetch_fn)(void *arg, const char *name, const char *from, char **text,
			       size_t *len, char *label, size_t label_size, struct err *err);
/* The policy text with its "extends" chain resolved and merged into one
 * JSON document (malloc'd into *out); a text without "extends" is copied
 * byte for byte. At most 8 levels; a cycle, a base of another "version",
 * or invalid JSON is -EINVAL/-ELOOP with err naming the file. */
int policy_extends_resolve(const char *text, size_t len, const char *label, policy_fetch_fn fetch,
			   void *arg, char **out, size_t *out_len, struct err *err);
/* over merged onto base by the rules of docs/policy.md (objects key by key,
 * the adding lists appended, anything else replaced). -ENOMEM. */
int policy_merge(struct cJSON *base, const struct cJSON *over, struct err *err);

/* The per-user defaults file (policy/user_config.c, docs/usage.md
 * "Defaults"): "policy" (a file or profile), "ttl" (a duration), "binds"
 * and "ro_binds" ("SRC" or "SRC:/DST", SRC absolute or "~/..."), "env"
 * (variable names passed as --env NAME, skipped when unset). */
struct policy_user_config {
	char *policy;
	bool has_ttl;
	uint64_t ttl_ms;
	char **binds; /* in file order, ro[i] for each */
	bool *ro;
	size_t n_binds;
	char **env;
	size_t n_env;
};
/* 0, or -EINVAL/-E2BIG/-ENOMEM with err "PATH: problem". Pure, fuzzed
 * (tests/fuzz/fuzz_policy.c: every input goes through it too). */
int policy_user_config_parse(const char *text, size_t len, struct policy_user_config *out,
			     struct err *err);
void policy_user_config_free(struct policy_user_config *c);

/* An --env-file's text: one NAME=VALUE per line (VALUE literal up to the
 * line's end, no quoting), or NAME alone (its value from lookup, skipped
 * when it gives NULL, as docker run --env-file does); blank lines and
 * lines starting with '#' ignored. Appends malloc'd "NAME=VALUE" to
 * (*out, *n). -EINVAL with *line (1-based) and *why (static) for a
 * malformed line or a NUL byte; -ENOMEM. Pure but for lookup, fuzzed
 * (tests/fuzz/fuzz_policy.c: every input goes through it too). */
int policy_env_file_parse(const char *text, size_t len, const char *(*lookup)(const char *name),
			  char ***out, size_t *n, size_t *line, const char **why);

/* Parse and validate len bytes of JSON. On success *out owns a new policy
 * (free with policy_free()). On failure returns -EINVAL (bad policy), -E2BIG
 * (over POLICY_MAX_BYTES) or -ENOMEM, and err->msg is one line that starts
 * with the JSON path, e.g. "mounts[2].target: must be an absolute path", or
 * "line 3, column 7: invalid JSON". Nothing is half-loaded. */
int policy_load_buffer(const char *buf, size_t len, const struct policy_vars *vars,
		       struct policy **out, struct err *err);

/* Free a policy; NULL is a no-op. */
void policy_free(struct policy *p);

/* Parse a duration: a whole number followed by ms, s, m or h ("500ms", "2s",
 * "5m", "1h"). Returns 0 and *out_ms, or -EINVAL (bad text) or -ERANGE (over
 * 30 days). */
int policy_parse_duration(const char *s, uint64_t *out_ms);

/* Parse a byte size: a whole number with an optional k, m or g suffix
 * (powers of 1024). Returns 0 or -EINVAL / -ERANGE. */
int policy_parse_size(const char *s, uint64_t *out);

/* Command-line additions to a policy (paddock run --bind etc.), applied to
 * the JSON text so that they are part of the effective policy and its
 * digest. */
struct policy_bind_arg {
	const char *spec; /* "SRC" or "SRC:DST", both absolute */
	bool readonly;
};

struct policy_additions {
	const struct policy_bind_arg *binds; /* appended to "mounts", in order */
	size_t n_binds;
	const char *const *protect; /* appended to "protect" */
	size_t n_protect;
	const char *const *setenv; /* "K=V", added to environment.set (replacing K) */
	size_t n_setenv;
	const char *cwd;	  /* replaces "cwd" when not NULL */
	const char *const *ports; /* "HOST:PORT:SANDBOXPORT", appended to "ports" */
	size_t n_ports;
	/* "HOST[:PORT]" (--allow-net), appended to "network.allow"; the
	 * network becomes "mediated". PORT 443 (the default) is "tls", 80
	 * "http", any other "tcp". */
	const char *const *allow_net;
	size_t n_allow_net;
};

/* Return in *out (malloc'd, NUL-terminated, length in *out_len) the JSON
 * text of the policy with the additions applied. With no additions the
 * output is a byte-for-byte copy of the input, so the digest is unchanged.
 * Errors: -EINVAL with err->msg naming the bad argument ("--bind x: ...") or
 * the JSON problem, -ENOMEM. */
int policy_amend(const char *buf, size_t len, const struct policy_additions *add, char **out,
		 size_t *out_len, struct err *err);

/* The host side of a port forward: "127.0.0.1:PORT", "127.0.0.1:auto",
 * "[::1]:PORT" or "[::1]:auto". On success *addr is "127.0.0.1" or "::1"
 * (static strings) and *port 1-65535, or 0 for "auto". -EINVAL with *why
 * (static, no path) for any other text: only loopback may be published. */
int policy_port_host_parse(const char *s, const char **addr, uint16_t *port, const char **why);
/* addr and port as "127.0.0.1:8080" or "[::1]:8080" ("...:auto" for port
 * 0) into buf; returns what snprintf() returns. */
int policy_port_host_format(char *buf, size_t size, const char *addr, uint16_t port);

/* Names for records and --explain. */
const char *policy_mount_type_name(enum policy_mount_type t);
const char *policy_rlimit_name(enum policy_rlimit r);
const char *policy_ns_name(unsigned bit);		    /* one POLICY_NS_* bit -> "user", ... */
const char *policy_errno_name(int e);			    /* EPERM -> "EPERM", unknown -> "E?" */
const char *policy_net_proto_name(enum policy_net_proto p); /* "http", "tls", "tcp" */

/* Does name (lower case, no trailing dot) match rule host pattern ("a.b" or
 * "*.b": any name ending in ".b", not "b" itself)? Pure. */
bool policy_net_host_match(const char *pattern, const char *name);
/* Is s a host name a rule may name: labels of [a-z0-9-], not starting or
 * ending with '-', 1-63 bytes each, at most POLICY_NET_NAME_MAX in all;
 * with wildcard, "*." may come first. */
bool policy_net_host_valid(const char *s, bool wildcard);
/* Does p broker any credential (a grant with "credential")? */
bool policy_has_credentials(const struct policy *p);
/* A budget id: 1 to 64 of [a-z0-9_.-], not starting with '.' (it names a
 * file of the ledger's directory). */
bool policy_budget_id_valid(const char *s);
/* The price of a request of metered rule r covered by grant (-1: none):
 * the grant's when it has one, else the rule's (kind NONE: unpriced). */
const struct policy_net_price *policy_meter_price(const struct policy_net_rule *r, long grant);
/* Any rule is metered. */
bool policy_has_meter(const struct policy *p);
/* Any rule declares jobs; the longest settle_ms of them (0: none). */
uint64_t policy_jobs_settle_ms(const struct policy *p);
/* Does route rt (its path exact, or a template with "{id}") match method
 * and path (origin-form, the query ignored)? Pure. */
bool policy_route_match(const struct policy_net_route *rt, const char *method, const char *path);
const char *policy_adapter_name(enum policy_adapter a);
/* Any rule has an adapter. */
bool policy_has_adapter(const struct policy *p);
