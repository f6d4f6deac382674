/* One run of paddock run, inside supervisor/: the spec (filled by
 * run_prepare(), const afterwards), the live state (fds, pids, the session)
 * and the outcome (outcome.h). Private to supervisor/. */
#pragma once

#include <limits.h>
#include <poll.h>
#include <stdio.h>
#include <termios.h>
#include <time.h>

#include "../../include/initproto.h"
#include "../../mounts/git.h"
#include "../sandbox/sandbox.h"
#include "../../evidence/evidence.h"
#include "../session/session.h"
#include "gitallow.h"
#include "http_stamp.h"
#include "outcome.h"
#include "signer.h"
#include "subid.h"
#include "../../policy/trust.h"
#include "supervisor.h"

/* The host uid and gid of a root caller's workload (prepare.c) when root
 * has no subordinate range in /etc/subuid and /etc/subgid: the overflow id
 * "nobody", which owns no file a sandbox could reach. */
#define ROOT_CALLER_ID 65534

/* profiles.c: policies by name (a profile on the search path, or
 * built in) and by file. */
bool profile_name_valid(const char *s);
int profile_read_file(const char *path, char **out, size_t *len, struct err *err);
int profile_find(const char *name, char **out, size_t *len, char *label, size_t label_size,
		 struct err *err);
int profile_fetch(void *arg, const char *name, const char *from, char **text, size_t *len,
		  char *label, size_t label_size, struct err *err);
void profile_list(FILE *f);

/* project.c: project policies (docs/trust.md, "Project policies"). */
enum project_state {
	PROJECT_ABSENT,
	PROJECT_UNTRUSTED, /* found, not applied: reason says why */
	PROJECT_TRUSTED,   /* applied in place of the caller's policy */
};
struct project_policy {
	enum project_state state;
	char path[PATH_MAX]; /* canonical */
	char sha256[65];     /* of the bytes read, "" when none were */
	char reason[512];
	uint32_t uid; /* trusted: who approved, and when */
	int64_t time;
};
/* One read of a project policy: its canonical path, bytes and digest. */
struct project_file {
	bool found; /* something is there (maybe a symlink: rc < 0) */
	char path[PATH_MAX];
	char sha256[65];
	char *text;
	size_t len;
};
const char *project_state_name(enum project_state s);
/* Open the project policy (given, or workspace/.paddock/policy.json) once,
 * without following a symlink in .paddock or the file's name, and read and
 * hash it from that fd. 0 with !f->found: absent (only when not given);
 * -errno with err and f->found: there, but not a file it reads. */
int project_open(const char *given, const char *workspace, struct project_file *f, struct err *err);
void project_file_free(struct project_file *f);
/* Where project policy p is wider than the caller's u: one line each. */
size_t project_widenings(const struct policy *u, const struct policy *p, const char *workspace,
			 char (*out)[WIDENING_LEN], size_t max);
int project_fetch(void *arg, const char *name, const char *from, char **text, size_t *len,
		  char *label, size_t label_size, struct err *err);
int project_user_policy(const char *text, size_t len, const char *label,
			const struct policy_vars *vars, struct policy **out, struct err *err);
/* Load the project text (its "extends" profiles only) and list where it is
 * wider than user into out (*n lines). */
/* -EPERM: its writable binds would show the trust store (at store). */
int project_check(const struct policy *user, const char *text, size_t len, const char *label,
		  const struct policy_vars *vars, const char *store, char (*out)[WIDENING_LEN],
		  size_t *n, struct err *err);
/* The trust store: its path, read (the caller's, 0600), changed under a
 * lock and replaced whole (change returns 0 to write, 1 to leave it). */
int trust_store_locate(char out[PATH_MAX], struct err *err);
int trust_store_load(const char *path, struct trust_store *s, struct err *err);
int trust_store_update(const char *path, int (*change)(struct trust_store *, void *), void *arg,
		       struct err *err);
int project_store_path(const struct policy *user, const char *workspace, char out[PATH_MAX],
		       struct err *err);
struct run_spec;
/* paddock run: when a project policy is there and trusted, *file (the
 * caller's policy text) becomes its text and the label its path; else
 * a warning. r->project says which. */
int project_resolve(struct run_spec *r, const struct policy_vars *vars, char **file, size_t *len,
		    struct err *err);

/* prepare.c: ${WORKSPACE}, ${HOME}, ${PWD} of o, canonical. */
struct vars_buf {
	char workspace[PATH_MAX], home[PATH_MAX], pwd[PATH_MAX];
};
int run_make_vars(const struct options *o, struct vars_buf *b, struct policy_vars *v,
		  struct err *err);

/* home.c: the caller's home in a writable bind. Is home (canonical, or
 * NULL) in a writable bind (of source, when not NULL)? */
bool home_exposed(const struct policy *p, const char *home, const char *source);
#define HOME_PROTECTS_MAX 96
/* The sandbox paths of the login places under home in every writable bind
 * that shows it, not already in p's protect: their number (at most max). */
size_t home_protects(const struct policy *p, const char *home, char (*out)[PATH_MAX], size_t max);

/* stdio.c: how the workload's fds 0-2 reach the caller's. */
enum stdio_mode {
	STDIO_PIPES,  /* three pipes the supervisor relays */
	STDIO_TTY,    /* a pty of the sandbox's devpts, relayed */
	STDIO_DIRECT, /* the caller's own fds (--weaken direct-stdio, no-new-session) */
	/* The supervisor's own 0-2, which are not the caller's: a detached
	 * run's /dev/null and its capped output's pipes (output.c). No relay;
	 * no weakening (paddock exec still relays its client's fds). */
	STDIO_INHERIT,
};

/* One direction of the relay: src -> dst, spliced or copied through buf. */
struct stdio_dir {
	int src, dst;
	bool src_ours, dst_ours; /* closed by the relay when it ends */
	bool open;		 /* still relaying */
	bool splice;		 /* false once splice(2) refused the pair */
	bool want_out;		 /* waiting for dst to take more (else for src) */
	size_t len, off;	 /* copy mode: what buf holds */
	uint64_t bytes;
	char *buf;	/* copy mode: STDIO_BUF bytes, malloc'd when first needed */
	int caller_fd;	/* the caller's pipe grown for the relay, -1: none */
	int caller_was; /* its size before, given back at the end */
};
#define STDIO_BUF 65536

struct stdio_relay {
	enum stdio_mode mode;
	struct stdio_dir d[3]; /* pipes: 0 in, 1 out, 2 err; tty: 0 in, 1 out */
	size_t n;	       /* directions in use */
	int master;	       /* tty: the pty master, -1 until the child sent it */
	int tty_fd;	       /* the caller's terminal (one of 0-2), -1: none */
	struct termios saved;
	bool saved_ok, raw;
	bool paused; /* tty: stdin not read (stopped, or in the background) */
};

/* paddock-init ends the sandbox itself this long after the supervisor's
 * own TTL deadline (sb.deadline_ms - this), which normally comes first. */
#define INIT_DEADLINE_MARGIN_MS 100

/* What the run is: decided before anything starts. */
struct run_spec {
	const struct options *opt;
	enum stdio_mode stdio;
	const char *policy_label; /* file path, or "(built-in agent policy)" */
	char policy_label_buf[PATH_MAX + 64];
	char file_sha256[65]; /* digest of the policy file bytes */
	struct project_policy project;
	struct policy *policy; /* effective: file + command-line additions */
	struct sandbox_spec sb;
	struct git_watch git; /* the git directories protected, for the check after */
	/* where the effective policy is wider than the agent policy */
	char widenings[WIDENINGS_MAX][WIDENING_LEN];
	size_t n_widenings;
	char *approvals; /* --approvals FILE's text, checked (gate.c); NULL: none */
	/* Brokered credentials (credentials.c): the secrets file the
	 * mediator reads, and one placeholder per variable. */
	char secrets_path[PATH_MAX];
	struct run_credential {
		char env[POLICY_CRED_NAME_MAX + 1];
		char placeholder[40]; /* "pdk_" + 32 hex digits */
	} cred[32];
	size_t n_cred;
	/* Metered rules (budget.c): the ledgers' directory, "" for none. */
	char budget_dir[PATH_MAX];
};

/* Port forwards (ports.c, relay.c): one listener per policy "ports" entry,
 * in policy order. */
struct port_listener {
	int fd;		  /* on the host's loopback; -1 once handed to the relay */
	int family;	  /* AF_INET or AF_INET6: the sandbox side uses the same */
	uint16_t sandbox; /* the port inside the sandbox */
	/* "protocol": "http" (and not --weaken lease-port-only): the relay
	 * stamps responses with lease and refuses another lease host name
	 * than name (http_stamp.h). */
	bool http;
	char lease[HTTP_LEASE_MAX];
	char name[96];
};

struct ports {
	struct port_listener l[POLICY_PORTS_MAX];
	struct session_endpoint endpoints[POLICY_PORTS_MAX]; /* as bound */
	size_t n;
	pid_t relay_pid; /* 0: no relay */
	int relay_pidfd;
};

/* The mediator of a mediated network (mediator.c). */
#define MED_LISTENERS_MAX 64
enum med_listener_kind {
	MED_L_PROXY,
	MED_L_TCP,
	MED_L_DNS_UDP,
	MED_L_DNS_TCP
};
struct mediator_listener {
	enum med_listener_kind kind;
	int family;
	uint16_t port;
	int fd;
};
struct mediator_state {
	struct mediator_listener l[MED_LISTENERS_MAX];
	size_t n;
	pid_t pid; /* 0: none */
	int pidfd;
	int log_fd; /* the admissions log: beside the record, or in the session's directory */
	char log_path[PATH_MAX];
	int ctl_fd;		/* the release gate's control channel (paddock approve); -1: none */
	int ready_fd;		/* the ready pipe, kept for the mediator's last word; -1: none */
	bool end_reported;	/* it said "end N" */
	unsigned long end_lost; /* N: log lines lost after its last line */
	unsigned stop_ms;	/* after SIGTERM, before SIGKILL (jobs_stop_ms()) */
};

/* What is open and running. */
/* output.c: a detached run's capped output. */
struct output_report {
	uint64_t bytes[2];   /* written to ID/stdout, ID/stderr (the marker aside) */
	uint64_t dropped[2]; /* beyond limits.output, or lost to a failed write */
	bool marked[2];	     /* the marker line was written */
};
struct output {
	bool active; /* a detached run: the pipes exist */
	int rd[2];   /* the pipes' read ends (-1 at EOF) */
	int wr[2];   /* their write ends, for the sandbox's 1 and 2 */
	int file[2]; /* ID/stdout, ID/stderr */
	uint64_t max;
	bool reported; /* both streams reached EOF: the counts are whole */
	struct output_report rep;
};

struct cJSON;

/* denials.c: --trace-denials, the seccomp listener and what it saw. */
#define DENIALS_MAX 64 /* distinct system calls counted; the rest in other */
struct denial_count {
	int nr;
	unsigned long count;
	pid_t first_pid;
};
/* Where a listener's lines go (denials_say()): stderr, or with chan >= 0
 * the spare helper of an exec'd command, which writes them to its
 * client's stderr; each with its own caps on the lines. */
struct denials_sink {
	int chan;
	unsigned long lines, notice_lines;
};
struct denials {
	int fd;			/* the workload's listener, -1 without */
	struct denials_sink wl; /* its lines: stderr */
	struct denial_count c[DENIALS_MAX];
	size_t n;
	unsigned long other, suppressed;
	/* The protected-path notice (notice.c), on the same listeners. */
	unsigned long notice_refused, notice_unchanged;
};

/* cgroup.c: limits.memory, .cpu, .pids through cgroup v2. */
struct cgroup_state {
	bool asked, enforced;
	int fd, dirfd, parent; /* the sandbox's cgroup, its parent; -1 */
	char name[80];
	char path[PATH_MAX + 80];
	char why[3 * PATH_MAX]; /* not enforced: the reason */
	uint64_t memory_peak, pids_peak, cpu_usec, oom_kills;
};
/* Make the sandbox's cgroup, when the policy asks for a limit and one can
 * be had; else cg->why. Always 0: a limit that cannot be had is said,
 * never fatal. */
int cgroup_prepare(struct run_spec *r, struct cgroup_state *cg, const char *session);
void cgroup_collect(struct cgroup_state *cg);
void cgroup_remove(struct cgroup_state *cg);
void cgroup_json(const struct cgroup_state *cg, const struct policy *p, struct cJSON *o);

/* exec.c: paddock exec's helpers (exec_helper.c). A relay per request
 * (a slot: its channel, whether it has its request, its command's pid in
 * the sandbox's pid namespace once the zygote said it, and in ours once a
 * call of it was seen, and where the supervisor's lines for its client
 * go); the one zygote of the session (its keeper's channel, our end of
 * its request channel); the zygotes' seccomp listeners (one per zygote,
 * kept until no process is left on its filter, POLLHUP: a zygote killed
 * and made again leaves its commands' leftovers on the old one). */
#define EXEC_RELAYS_MAX	   128
#define EXEC_LISTENERS_MAX 4
struct exec_relay {
	int chan;
	bool taken;
	pid_t cmd, host;
	struct denials_sink sink; /* chan while taken */
};
struct exec_state {
	struct exec_relay relay[EXEC_RELAYS_MAX];
	int spare;	 /* the relay made ahead (its slot), -1: none */
	bool asked;	 /* a "spare" asked of the keeper, not come yet */
	int zkeep, zreq; /* -1: no zygote */
	int listener[EXEC_LISTENERS_MAX];
	struct denials_sink left; /* lines of processes no running command owns */
	/* exec_pollfds(): which slot each relay's pollfd is */
	unsigned char slot[EXEC_RELAYS_MAX];
	size_t n_poll;
};

struct run_live {
	struct sandbox box; /* ctl, pidfd, pid: -1/0 until started */
	struct cgroup_state cgroup;
	struct denials denials;
	struct gitallow gitallow; /* protect_git "allowlist", on the same listener */
	struct protect_state protect;
	struct session *session; /* NULL with --explain */
	struct ports ports;
	/* --detach: the socket to the waiting foreground process, and the
	 * caller's stderr kept for errors until the workload has started */
	int report_fd, caller_err;
	bool announced; /* supervise.c started(): the workload's start said, once */
	/* paddock exec (exec.c): its helpers watch exec_end[0] and end
	 * their command when the supervisor is gone (EOF). */
	int exec_end[2];
	bool exec_end_open;
	/* The relays and the zygote (exec.c). */
	struct exec_state exec;
	struct mediator_state mediator;
	struct evidence_log evidence; /* fd -1: none */
	char evidence_path[PATH_MAX];
	/* evidence.witness: the file the checkpoints also go to ("" none),
	 * and why it was not written ("" written, or not yet) */
	char witness_file[PATH_MAX];
	char witness_error[PATH_MAX + 128];
	bool witness_written;
	int record_fd; /* --record: its directory (record_open_dir()), written at
			* "retained" and at the end */
	struct output output;
	struct stdio_relay stdio;
	/* The services' stdout and stderr (the session's output files),
	 * for the child; closed once it has them. */
	int svc_out[2];
};

struct run {
	const struct run_spec *spec;
	struct run_live live;
	struct outcome out;
};

int denials_prepare(struct run_spec *r, struct err *err);
/* One notification of the listener fd: answered (the notice's or the
 * policy's errno), counted. Its lines go to sink (exec.c). false: the
 * listener is broken, close it. */
bool denials_serve(struct run *r, int fd, struct denials_sink *sink);
/* A listener's notifications served on the caller's CPU (Linux 6.6's
 * SECCOMP_USER_NOTIF_FD_SYNC_WAKE_UP), where the kernel has it. */
void denials_listener_sync(int fd);
/* One line of the notice or a denial, to stderr or the sink's spare. */
void denials_say(const struct denials_sink *sink, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
void denials_json(const struct run *r, struct cJSON *o);

/* notice.c: the protected-path notice on the same listener. prepare: the
 * notice's program when something is protected (not under --weaken
 * no-protect, nor without seccomp). serve: false when req is not one of its
 * calls; else resp is filled (continue, refused, or an unchanged rewrite
 * done) and the caller sends it. */
struct seccomp_notif;
struct seccomp_notif_resp;
int notice_prepare(struct run_spec *r, struct err *err);
/* *sent: answered already (an fd handed over as the call's result). */
bool notice_serve(struct run *r, int fd, struct denials_sink *sink, const struct seccomp_notif *req,
		  struct seccomp_notif_resp *resp, bool *sent);
struct stat;
bool notice_same_bytes(int fa, const char *a, int fb, const char *b, struct stat *sa);
void notice_json(const struct run *r, struct cJSON *o);

/* output.c. output_start(): the pipes (detached runs, after
 * session_open_output() made fds 1 and 2 the session's files).
 * output_swap() puts the pipes on 1 and 2 around the clone (save: the
 * files), output_unswap() puts the files back and drops our write ends.
 * output_pollfds() fills 0 or 2 pollfds for the supervise loop,
 * output_serve() handles their events. output_finish(): once the sandbox
 * is over, drains to EOF (at most OUTPUT_DRAIN_MS) and closes. */
int output_start(struct run *r, struct err *err);
int output_swap(struct run *r, int save[2]);
void output_unswap(struct run *r, int save[2]);
size_t output_pollfds(const struct run *r, struct pollfd *pfd);
void output_serve(struct run *r, const struct pollfd *pfd);
void output_finish(struct run *r);

/* prepare.c: everything up to the start into spec (nothing of the sandbox
 * exists on failure; err says what is wrong); with --record the record's
 * fd is *record_fd. run_spec_free() is safe on a partly filled spec. */
int run_prepare(struct run_spec *spec, const struct options *o, int *record_fd, struct err *err);
void run_spec_free(struct run_spec *spec);
/* Register the session, out of the sandbox's sight. */
int run_open_session(struct run *r, struct session *s, struct err *err);

/* ports.c. ports_check(): a policy with ports needs the sandbox's own
 * network namespace (-EINVAL, err set). ports_bind(): before anything
 * starts, every host listener bound and listening, pt->endpoints filled; a
 * busy fixed port is -EADDRINUSE with err "ports[N]: ADDR is in use; nothing
 * started" (never shared: no SO_REUSEPORT). ports_start(): once the
 * sandbox's pidfd exists, fork the relay, wait for its set-up report and
 * give it the listeners (closed here); the endpoints go into the session.
 * ports_stop(): kill the relay by pidfd and reap exactly it, close any
 * listener left; safe to call at any point and more than once. */
int ports_check(const struct run_spec *s, struct err *err);
int ports_bind(const struct policy *p, struct ports *pt, struct err *err);
int ports_start(struct run *r, struct err *err);
void ports_stop(struct ports *pt);
/* relay.c: the relay child's body (never returns). It reports its set-up
 * on report: nothing and EOF when ready, else the error text. */
__attribute__((noreturn)) void ports_relay(struct port_listener *l, size_t n, int sandbox_pidfd,
					   pid_t parent, int report);

/* supervise.c: wait for the end, forwarding signals, enforcing the TTL,
 * applying init's reports (outcome_apply()) and performing their effects. */
int supervise(struct run *r, struct err *err);
/* Processes still in the sandbox's namespaces, from outside. */
int find_survivors(struct run *r);

/* exec.c: paddock exec, the supervisor's side. Runs req's command in the
 * sandbox for the client on fd (docs/sessions.md), or answers it "error
 * ...". Takes fd and req (closed and freed). Returns at once: the command
 * is run and waited for by a helper process that is not the supervisor's
 * child, so the supervisor never reaps anything but its own. */
void exec_spawn(struct run *r, int fd, struct session_exec *req);
/* Does the zygote load the workload's notify program (the protected-path
 * notice, --trace-denials) with a listener of its own? */
bool exec_listener_expected(const struct run *r);
/* The zygote's keeper, its listeners and the relays' channels in the
 * supervise loop: exec_pollfds() fills at most EXEC_POLLFDS, exec_serve()
 * handles their events (the same pfd and count). exec_sink(): where a
 * line about a call of pid (ours) on an exec listener goes: its command's
 * client, else the session's stderr. */
#define EXEC_POLLFDS (1 + EXEC_LISTENERS_MAX + EXEC_RELAYS_MAX)
size_t exec_pollfds(struct run *r, struct pollfd *pfd);
void exec_serve(struct run *r, const struct pollfd *pfd, size_t n);
struct denials_sink *exec_sink(struct run *r, pid_t pid);
void exec_close(struct run_live *l);

/* exec_helper.c: the relay that serves the next request (forked by the
 * zygote's keeper at the supervisor's "spare", while no client waits;
 * chan: its end of a SOCK_SEQPACKET pair whose one packet is the request,
 * re-encoded by session_exec_encode(), with EXEC_FDS fds: the client's
 * socket and stdio 0-2 and the zygote's request channel; end_fd: the
 * session's end pipe). exec_keeper(): the zygote's keeper (forked twice
 * by exec.c; chan: its channel to the supervisor, zreq: the zygote's end
 * of its request channel). Neither returns. exec_reply(): one message on
 * the client's socket or a channel. exec_send_fds(): one packet with n (at
 * most EXEC_FDS) fds, 0 or -errno (MSG_NOSIGNAL). */
#define EXEC_FDS 5
__attribute__((noreturn)) void exec_helper(struct run *r, int chan, int end_fd);
__attribute__((noreturn)) void exec_keeper(struct run *r, int chan, int zreq);
void exec_reply(int fd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
int exec_send_fds(int ch, const char *pkt, size_t len, const int *fds, size_t n);

/* detach.c: paddock run --detach. detach_start() forks; in the child (the
 * supervisor-to-be: new session, stdin /dev/null, no inherited fds but
 * 0-2) it returns 0 with r->live.report_fd set; in the foreground process
 * it returns 1 once the child reported, with *status the exit status (the
 * session id is printed on stdout, an error on stderr). -errno when the
 * fork fails. */
int detach_start(struct run *r, int *status, struct err *err);
/* Supervisor: the workload runs (prints the id), or the run is over and
 * never started (exit status). Both close the report socket and give up
 * the caller's stderr; later calls do nothing. */
void detach_report_started(struct run *r);
void detach_report_exit(struct run *r, int status);
/* A foreground paddock run whose policy has leased services returns when
 * the main command ends, while the supervisor keeps the leases: like
 * detach_start(), the supervisor is forked first (keeping the caller's
 * stdio), and the foreground forwards signals to it and waits for
 * "retained N" or "exit N". */
int retain_start(struct run *r, int *status, struct err *err);
void retain_report(struct run *r, int status);

/* leases.c: the supervisor's side of services and leases. */
bool leases_any(const struct policy *p);
/* Publish the outcome's leases into the session. */
void leases_publish(struct run *r);
/* The effects of "retained": the session, the record and a waiting
 * foreground process learn the main command's outcome now. */
void leases_retained(struct run *r);

/* mediator.c: a mediated network. mediator_bind() is sandbox_start_gated()'s
 * before_go (arg: the run): the listeners bound inside the sandbox's
 * network namespace before anything of the sandbox runs. mediator_start():
 * paddock-mediator started with them (in the caller's namespaces), its
 * admissions log in the session's directory. mediator_stop(): SIGTERM,
 * SIGKILL a second later, reaped by pidfd; safe at any point.
 * mediator_summary(): the log's counts and digest into the outcome. */
int mediator_bind(struct sandbox *sb, void *arg, struct err *err);
int mediator_start(struct run *r, struct err *err);
void mediator_stop(struct mediator_state *ms);

/* gate.c: the release gate's inputs (docs/network.md, "Release gate"):
 * --weaken gate-off and --approvals FILE need a mediated network; the
 * file must be a regular file of the caller's, not group- or
 * other-writable, and parse (policy/approvals.h): its text into
 * s->approvals. -EINVAL with err naming the file and line. */
int gate_prepare(struct run_spec *s, bool mediated, struct err *err);
/* credentials.c. credentials_prepare(): with credentials in the policy
 * (or --secrets), check the secrets file (a regular file of the caller's,
 * no group or other bits, not a symlink, not in reach of the sandbox),
 * make the placeholders (getrandom) and put them in the workload's
 * environment; -errno with err's one line. credentials_config(): their
 * part of the mediator's configuration (never a secret: it reads the file
 * itself). credentials_policy_json(): a grant's "credential" as written. */
int credentials_prepare(struct run_spec *r, struct err *err);
struct cJSON;
void credentials_config(struct cJSON *root, const struct run_spec *r);
void credentials_policy_json(struct cJSON *grant, const struct policy_net_grant *g);
/* budget.c: with a metered rule, the ledgers' directory (made 0700,
 * ours, not in reach of any bind of the sandbox) into r->budget_dir;
 * the budget knobs need a metered rule. budget_config(): the mediator's
 * part of the configuration. */
int budget_prepare(struct run_spec *r, struct err *err);
void budget_config(struct cJSON *root, const struct run_spec *r);
void mediator_summary(struct run *r);
/* jobs.c: remote jobs and adapters. jobs_prepare(): their knobs need a
 * rule with "jobs" (local-exit-is-stop) or an "adapter"
 * (unknown-event-allow). jobs_config(): the mediator's part of the
 * configuration. jobs_policy_json(): a rule's "jobs", "adapter",
 * "fallback" as written; jobs_actions_json(): "network.actions".
 * jobs_log_line(): one line of the admissions log into out->jobs.
 * jobs_json(): the record's "jobs" array. jobs_stop_ms(): how long the
 * mediator is given after SIGTERM (the jobs' settle time added). */
int jobs_prepare(struct run_spec *r, struct err *err);
void jobs_config(struct cJSON *root, const struct run_spec *r);
void jobs_policy_json(struct cJSON *rule, const struct policy_net_rule *p);
void jobs_actions_json(struct cJSON *net, const struct policy *p);
void jobs_log_line(struct outcome_net *out, const struct cJSON *line);
struct cJSON *jobs_json(const struct outcome_net *net);
unsigned jobs_stop_ms(const struct policy *p);

/* evidence.c: the run's evidence log (docs/evidence.md), in two steps.
 * run_evidence_key(), once the session exists and before the sandbox
 * starts (a mediator gets the key in its configuration): the key, the
 * epoch and the chain's genesis, in memory only; 1 when there is to be a
 * log, 0 without a session, -errno. run_evidence_open(), after it (the
 * files made while the child sets itself up, off the start path:
 * bench/profile.md): the key written beside the record
 * (RECORD.evidence.key, 0600) and the log opened (RECORD.evidence.jsonl),
 * or both in the session's directory; -errno, and then nothing is
 * written. evidence_event() adds one event (fields as in
 * evidence_append()); nothing without a log's fd, and the first one
 * written is seq 1 whenever it comes. */
int run_evidence_key(struct run *r, struct err *err);
int run_evidence_open(struct run *r, struct err *err);
void run_evidence_key_sync(const struct run *r);
void evidence_event(struct run *r, const char *type, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* evidence.witness, before anything starts: the second witness must lie
 * outside the state directory (the record's directory, where the logs and
 * their key are, and the session registry) and outside every bind of the
 * sandbox, read-only ones too (what the workload can read it can wait
 * for, and a read-only bind does not stop a socket). Sets
 * r->live.witness_file. -EPERM/-errno with the one line why. */
int run_witness_check(struct run *r, const char *registry, struct err *err);
/* Write every source's checkpoint to the witness (atomically, by
 * rename), once the logs are final; a failure is kept in
 * r->live.witness_error (the record says it, the run goes on). */
void run_witness_write(struct run *r);
/* Once the session exists: a directory witness's file, SESSION.witness.json. */
void run_witness_name(struct run *r);
/* record.c: every source's checkpoint, as the record's evidence.sources. */
struct cJSON *record_evidence_sources(const struct run *r);

/* controls.c: the record's "controls" (HB-20): each control paddock
 * reports, labelled prevention, detection or response, with its hook. */
struct cJSON;
struct cJSON *record_controls(const struct run *r);

/* record.c: the completion record (docs/record.md) from spec and outcome. */
int record_write(const struct run *r, int fd, struct err *err);
/* The record's text, malloc'd, newline-terminated and not NUL-terminated
 * (*len bytes); NULL when out of memory. Pure. */
char *record_render(const struct run *r, size_t *len);
/* record_file.c: the record's directory (fd: O_PATH), checked: the caller's
 * or root's, sticky if others may write it; an existing record must be the
 * caller's regular file. -errno with err set. */
int record_open_dir(const char *path, struct err *err);
/* Replace the record at path (its last component, below dirfd) with text:
 * a new temporary file, fsync, rename over, fsync of the directory. */
int record_replace(int dirfd, const char *path, const char *text, size_t len, struct err *err);

/* explain.c: paddock run --explain. */
void explain_print(const struct run_spec *s, FILE *f);

/* stdio.c: the workload's fds 0-2 (see its header comment).
 * stdio_choose(): the mode for these options. stdio_prepare(): before
 * sandbox_start(), the pipes (pipe mode), their child ends in r->live.box
 * .stdio; stdio_started() closes those after the start. stdio_master():
 * the pty master from the child ("pty"), taken (closed when not wanted):
 * the caller's terminal goes raw. stdio_pollfds()/stdio_handle(): the
 * relay's part of the supervise loop. stdio_winch(): the caller's window
 * size onto the pty. stdio_suspend() (SIGTSTP): the caller's termios back,
 * stop; stdio_resume() (SIGCONT, or after the stop): raw again only in the
 * foreground. stdio_finish(): drain the output, close the relay, the
 * caller's termios back; safe to call more than once. */
enum stdio_mode stdio_choose(const struct options *o);
/* The relay itself, for the supervisor and the exec helper: between our
 * fds 0-2 and pipes whose other ends (child[]) the workload gets, or a pty
 * master (with termios: our terminal raw while we are in its foreground).
 * stdio_relay_finish() drains, closes and restores. */
int stdio_relay_pipes(struct stdio_relay *s, int child[3], struct err *err);
void stdio_relay_pty(struct stdio_relay *s, int master, bool termios);
size_t stdio_relay_pollfds(const struct stdio_relay *s, struct pollfd *pfd, size_t max);
void stdio_relay_handle(struct stdio_relay *s, const struct pollfd *pfd, size_t n);
bool stdio_relay_output_open(const struct stdio_relay *s);
void stdio_relay_winch(struct stdio_relay *s);
void stdio_relay_finish(struct stdio_relay *s);
int stdio_prepare(struct run *r, struct err *err);
void stdio_started(struct run *r);
void stdio_master(struct run *r, int fd);
size_t stdio_pollfds(const struct run *r, struct pollfd *pfd, size_t max);
void stdio_handle(struct run *r, const struct pollfd *pfd, size_t n);
void stdio_winch(struct run *r);
void stdio_suspend(struct run *r);
void stdio_resume(struct run *r);
/* The supervise loop's poll timeout (-1: none) and what to do on each
 * pass: a relay paused in the background resumes once in the foreground. */
int stdio_poll_timeout(const struct run *r);
void stdio_tick(struct run *r);
void stdio_finish(struct run *r);

/* supervise.c: the signals the supervisor passes on to the sandbox (and a
 * detached or retaining foreground process to its supervisor), blocked
 * before the start so none is lost: one table. */
extern const int forwarded_signals[];
extern const size_t n_forwarded_signals;
void forwarded_sigset(sigset_t *set);
/* The supervisor's signalfd set: the forwarded ones plus SIGTSTP and
 * SIGCONT (stdio_suspend(), stdio_resume()). */
void supervisor_sigset(sigset_t *set);
#define STDIO_PFDS 4 /* stdio_pollfds() gives at most this many */
