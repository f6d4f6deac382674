/* Sessions (docs/sessions.md): the registry of the caller's sandboxes, one
 * directory per session holding session.json, the supervisor's control
 * socket and, for detached sessions, the workload's output. Only the
 * supervisor writes a session's entry; every other command reads it and
 * talks to the supervisor over the control socket. */
#pragma once

#include <limits.h>
#include <poll.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "../../include/err.h"

#define SESSION_ID_LEN	    12 /* lowercase hex digits */
#define SESSION_NAME_MAX    64
#define SESSION_CLIENTS_MAX 16
#define SESSION_REPLY_MAX   8192	/* one control-socket packet */
#define SESSION_EXEC_MAX    65536	/* one "exec" request, all its fields included */
#define SESSION_JSON_MAX    (64 * 1024) /* one session.json */
/* The name a supervisor leaves when it could not write its final state:
 * "final-lost.STATUS.ENDING" in the session's directory (server.c). */
#define SESSION_FINAL_LOST  "final-lost."
#define SESSION_COMMAND_MAX 160 /* bytes of session.json's "command" */

/* A process as the kernel names it for good: pid plus start time (field 22
 * of /proc/PID/stat, clock ticks since boot). A bare pid may be reused. */
struct proc_id {
	pid_t pid;
	unsigned long long start_time;
};

enum session_state {
	SESSION_STARTING, /* registered, the sandbox is being built */
	SESSION_RUNNING,  /* the workload was started */
	SESSION_RETAINED, /* the main command ended; leased services run on */
	SESSION_ENDED,	  /* over; status and ending are valid */
	SESSION_STALE,	  /* not ended, but its supervisor is gone (not stored) */
};

#define SESSION_LEASES_MAX    16
#define SESSION_ENDPOINTS_MAX 16

/* A service of the policy with its lease (policy "services"). */
struct session_lease {
	char service[SESSION_NAME_MAX + 1];
	pid_t pid;	   /* as seen inside the sandbox; 0 until started */
	uint64_t lease_ms; /* 0: ends with the main command */
	char started[32];  /* ISO 8601 UTC; "" until started */
	char expires[32];  /* ISO 8601 UTC; "" without a lease */
	char state[16];	   /* "starting", "running", "retained", "ended" */
	char ended[32];	   /* state "ended": "exit N", "signal N", "lease-expired", "stopped" */
};

/* A port forward (policy "ports"), as bound on the host. */
#define SESSION_NONCE_LEN 32 /* hex digits of an endpoint's lease nonce */

/* A port forward as bound, with its lease (docs/sessions.md, "Endpoint
 * identity"): an HTTP forward's relay stamps every response with the
 * session, service, generation and nonce. */
struct session_endpoint {
	char host[64];	  /* "127.0.0.1:40123" or "[::1]:40123" */
	uint16_t sandbox; /* the port inside the sandbox */
	bool http;	  /* "protocol": "http" */
	char service[65]; /* the policy's "service", "" for none */
	/* Never inside the sandbox; "" when not stamped (a TCP forward,
	 * --weaken lease-port-only). */
	char nonce[SESSION_NONCE_LEN + 1];
};

/* The endpoint's lease host name, "g<gen>.<id>.paddock.test": an origin of
 * its own per session and generation (docs/sessions.md). */
int session_lease_host(char *buf, size_t size, const char *id, unsigned generation);

/* What session.json holds. */
struct session_info {
	char id[SESSION_ID_LEN + 1];
	char name[SESSION_NAME_MAX + 1]; /* "" when unnamed */
	uid_t owner;
	unsigned generation;
	struct proc_id supervisor;
	struct proc_id init; /* pid 0 until the sandbox exists */
	char created[32];    /* ISO 8601 UTC */
	char expires[32];    /* "" without a time limit */
	enum session_state state;
	int status;	/* SESSION_ENDED, _RETAINED: paddock run's exit status */
	char ended[24]; /* SESSION_ENDED, _RETAINED: how, as in the record ("exit", ...) */
	char policy_sha256[65];
	bool detached;
	/* The workload's command line, words joined by spaces, cut to
	 * SESSION_COMMAND_MAX bytes (ending "..."); "" in older entries. */
	char command[SESSION_COMMAND_MAX + 1];
	/* Ended, but the final state could not be written: status and ended
	 * come from the supervisor's SESSION_FINAL_LOST name. */
	bool final_lost;
	struct session_lease leases[SESSION_LEASES_MAX];
	size_t n_leases;
	struct session_endpoint endpoints[SESSION_ENDPOINTS_MAX];
	size_t n_endpoints;
};

/* The caller's registry directory, opened. */
struct registry {
	int fd;
	char path[PATH_MAX]; /* canonical */
	char warning[2 * PATH_MAX +
		     128]; /* a squatted /tmp path and the fallback used; "" if none */
};

/* A waiting or requesting peer of the control socket. */
struct session_client {
	int fd;
	bool waiting;  /* sent "wait" or "stop": answered at the end */
	bool stopping; /* sent "stop": not answered before the very end */
	bool refused;  /* not the owner: its request gets an error */
};

/* The supervisor's handle on its own session. */
struct session {
	struct session_info info;
	struct registry reg;
	int dirfd;  /* the session's directory */
	int listen; /* the control socket */
	struct session_client clients[SESSION_CLIENTS_MAX];
	size_t n_clients;
	bool no_owner_check; /* --weaken no-owner-check: any peer is the owner */
	int gate_fd;	     /* the mediator's release gate (paddock approve); -1: none */
};

/* An "exec" request (encoding: session_server.c). The strings point into
 * buf; argv is NULL-terminated with argc >= 1 entries. */
struct session_exec {
	char *buf;	  /* a copy of the packet */
	const char *cwd;  /* NULL: the policy's */
	const char **env; /* "NAME=VALUE" additions, replacing the same names */
	size_t n_env;
	char **argv;
	size_t argc;
	int stdio[3]; /* the client's fds 0, 1 and 2 (SCM_RIGHTS); -1 when absent */
	bool tty;     /* "tty=1": a pty of the sandbox's own (paddock exec -t) */
};

/* What the control socket asks of the supervisor's loop: a stop, or an
 * exec, whose connection exec_fd is then the caller's (taken out of the
 * session's clients), as is exec_req. */
struct session_request {
	bool stop;
	bool has_grace;
	uint64_t grace_ms;
	bool exec;
	int exec_fd;
	struct session_exec exec_req;
};

/* ---- pure helpers (unit-tested) */

/* [A-Za-z0-9_.-]{1,64}, and neither "." nor "..": names become file names. */
bool session_name_valid(const char *name);
/* peek.c: 12 lowercase hex digits. */
bool session_id_valid(const char *id);
/* peek.c: why a directory is not the caller's private one (not a
 * directory, another owner, a mode other than 0700), or NULL; buf holds
 * the words. */
struct stat;
const char *session_private_dir_problem(const struct stat *st, char *buf, size_t size);
/* peek.c: the registry's path: $XDG_RUNTIME_DIR/paddock when that is the
 * caller's private directory (false), else /tmp/paddock-UID (true). */
bool session_registry_path(char *path, size_t size);
/* peek.c: the fields of session.json a client needs to connect, without
 * the codec: 0 when the text is one JSON object (containers nested at most
 * 16 levels below it) with each of "id", "owner_uid", "state" (plain
 * strings and non-negative integers) and "supervisor": {"pid"} exactly
 * once and no escaped key at those two levels; else -EINVAL (the codec's
 * reader is then the judge). */
struct session_peek {
	char id[SESSION_ID_LEN + 1];
	char state[16];
	unsigned owner;
	int supervisor_pid;
};
int session_peek(const char *buf, size_t len, struct session_peek *out);
/* peek.c: an entry's session.json (the caller's file, no symlink) into buf
 * (SESSION_JSON_MAX + 1 bytes): its length, or -errno with err set
 * ("no such session: ID" for ENOENT, EFBIG when larger). */
ssize_t session_entry_text(int dfd, const char *id, char *buf, struct err *err);
/* The state letter (field 3) and start time (field 22) of a /proc/PID/stat
 * line; the command name may hold spaces and parentheses. -EINVAL. */
int session_parse_stat(const char *line, char *state, unsigned long long *start_time);
const char *session_state_name(enum session_state s);
/* session.json text (malloc'd, NULL on ENOMEM) and back. Parsing checks
 * every field's type and range: -EINVAL with err set. */
char *session_info_json(const struct session_info *info);
int session_info_parse(const char *text, size_t len, struct session_info *out, struct err *err);

/* The "exec" request packet for cwd (NULL: the policy's), env additions
 * ("NAME=VALUE"), tty (the command gets a pty) and argv (NULL-terminated, at least one word): *out
 * malloc'd, *len bytes. -E2BIG past SESSION_EXEC_MAX, -EINVAL without a
 * command, -ENOMEM; err set. */
int session_exec_encode(const char *cwd, const char *const *env, size_t n_env, char *const *argv,
			bool tty, char **out, size_t *len, struct err *err);
/* And back: every field checked (known tag, an absolute cwd at most once,
 * env entries NAME=VALUE with a valid name, at least one argument, every
 * field NUL-terminated). -EINVAL, -E2BIG or -ENOMEM with err set; on
 * success free *out with session_exec_free(). */
int session_exec_decode(const char *pkt, size_t len, struct session_exec *out, struct err *err);
/* Frees the copies and closes the stdio fds; safe on a zeroed or failed one. */
void session_exec_free(struct session_exec *x);

/* ---- processes */

/* From the text of a /proc/PID/status: the process's pid and its
 * session's id in its innermost pid namespace (the last numbers of
 * "NSpid:" and "NSsid:"). 0, or -ENOENT (a line missing), -EINVAL. */
int session_parse_nsids(const char *status, pid_t *pid, pid_t *sid);

/* The identity of a live process: -ESRCH when it does not exist or is a
 * zombie. */
int proc_identity(pid_t pid, struct proc_id *out);
/* pid is alive and still the process that started at start_time. */
bool proc_alive(const struct proc_id *id);
/* ... and stopped (SIGSTOP, a debugger: state T or t). */
bool proc_stopped(const struct proc_id *id);

/* ---- the registry */

/* Open the caller's registry: $XDG_RUNTIME_DIR/paddock when XDG_RUNTIME_DIR
 * is an absolute path to a directory of the caller's with mode 0700, else
 * /tmp/paddock-UID; when another user owns that path (squatting), the
 * private fallback remembered by the symlink ~/.cache/paddock/registry (a
 * fresh /tmp/paddock-UID.XXXXXX made with create), and reg->warning says
 * so, naming the squatter's uid. With create, a missing directory is made 0700. The
 * directory itself must be a directory (not a symlink) owned by the caller
 * with mode 0700: else -EPERM with err naming the problem. Without create,
 * -ENOENT (err set) when it does not exist. */
int session_registry_open(struct registry *reg, bool create, struct err *err);
void session_registry_close(struct registry *reg);
/* Remove what no entry is: the ".new-ID" directories of registrations that
 * provably died (unlocked: a registering supervisor holds an flock on its
 * directory from the moment it opens it; and older than SESSION_SWEEP_AGE
 * seconds), the ".old-ID" ones of removals that were stopped, and "ID"
 * directories without session.json that nobody holds (what a removal
 * stopped half way left before session_remove() renamed first). */
#define SESSION_SWEEP_AGE 10
void session_sweep(const struct registry *reg);

/* Read one entry. -ENOENT: no such session; -EPERM: the entry is not the
 * caller's (err names the owner); -EINVAL: unreadable. A session that is
 * not ended and whose supervisor is gone comes back as SESSION_STALE. */
int session_read(const struct registry *reg, const char *id, struct session_info *out,
		 struct err *err);
/* Every readable entry of the caller's, sorted by creation time (*out
 * malloc'd). Stale entries come back as SESSION_STALE, not removed. */
int session_list(const struct registry *reg, struct session_info **out, size_t *n, struct err *err);
/* An id, a name (its live session, else its latest generation), or a
 * unique prefix of an id (-EINVAL when two match). Same errors as
 * session_read(); -ENOENT with err "no such session: X". */
int session_find(const struct registry *reg, const char *id_or_name, struct session_info *out,
		 struct err *err);
/* Remove an entry (its directory and the files in it): renamed to ".old-ID"
 * first, so that a removal stopped half way leaves nothing that looks like
 * an entry; session_sweep() finishes it. */
int session_remove(const struct registry *reg, const char *id);

/* ---- the supervisor's side */

/* Register a new session in reg (taken over by s): a fresh id, the
 * generation for name (NULL: unnamed, generation 1), refused with -EEXIST
 * when a live session of the caller already has that name; the entry is
 * written in state "starting" with this process as the supervisor, and the
 * control socket listens. */
int session_create(struct session *s, struct registry *reg, const char *name, bool detached,
		   const char *policy_sha256, char *const *argv, struct err *err);
/* argv's words joined by spaces into out (size bytes), cut with "...". */
void session_command_text(char *const *argv, char *out, size_t size);
/* Set info.expires to now + ttl_ms (written with the next session_write()). */
void session_expires(struct session *s, uint64_t ttl_ms);
/* Write session.json atomically (temp file, fsync, rename). */
int session_write(struct session *s, struct err *err);
/* Detached sessions: stdout and stderr files in the session directory
 * (0600), made this process's fds 1 and 2 so the sandbox inherits them. */
int session_open_output(struct session *s, struct err *err);
/* The session's stdout (which 0) or stderr (1) file for appending,
 * created 0600 if missing: the services' output. An fd or -errno. */
int session_output_fd(struct session *s, int which, struct err *err);
/* The control socket's fds to poll (up to max), and the handling of what
 * they reported: requests are answered, "stop" is handed back in req. */
size_t session_pollfds(const struct session *s, struct pollfd *pfd, size_t max);
void session_serve(struct session *s, const struct pollfd *pfd, size_t n,
		   struct session_request *req);
/* The main command ended and leased services run on: session.json in
 * state "retained" with its status; "wait" is answered now ("stop" still
 * at the end). */
void session_retained(struct session *s, int status, const char *ending);
/* The end: session.json in state "ended" with status and ending (written
 * into the space reserved at registration, so a full filesystem cannot
 * lose it), every waiter answered "status N ENDING", the socket closed;
 * with remove, the entry is removed. Frees nothing else; safe on a zeroed
 * session. -errno with err set when the final state could not be written
 * (the waiters are answered all the same). */
int session_finish(struct session *s, int status, const char *ending, bool remove, struct err *err);
