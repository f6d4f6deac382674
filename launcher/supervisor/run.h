/* The state of one run of paddock run, from policy to completion record. */
#pragma once

#include <stdio.h>
#include <time.h>

#include "../include/initproto.h"
#include "launcher.h"
#include "session.h"

struct killed {
	pid_t pid; /* as seen inside the sandbox */
	char comm[64];
	int sig;
};

struct survivor {
	pid_t pid; /* host pid */
	char comm[64];
};

/* Port forwards (ports.c, relay.c): one listener per policy "ports" entry,
 * in policy order. */
struct port_listener {
	int fd;		  /* on the host's loopback; -1 once handed to the relay */
	int family;	  /* AF_INET or AF_INET6: the sandbox side uses the same */
	uint16_t sandbox; /* the port inside the sandbox */
};

struct ports {
	struct port_listener l[POLICY_PORTS_MAX];
	struct session_endpoint endpoints[POLICY_PORTS_MAX]; /* as bound */
	size_t n;
	pid_t relay_pid; /* 0: no relay */
	int relay_pidfd;
};

struct run {
	const struct options *opt;
	const char *policy_label; /* file path, or "(built-in agent policy)" */
	char file_sha256[65];	  /* digest of the policy file bytes */
	struct policy *policy;	  /* effective: file + command-line additions */
	struct mount_plan plan;
	struct protect_state protect;
	char **env;
	struct seccomp_info seccomp_info;
	struct landlock_info landlock;
	unsigned namespaces; /* POLICY_NS_* actually created */
	uid_t uid_in, uid_out;
	gid_t gid_in, gid_out;
	int init_fd; /* sealed memfd copy of paddock-init */
	int ctl;     /* our end of the control socket */
	int pidfd;
	pid_t pid;
	dev_t ns_dev;
	ino_t pidns, userns; /* of the sandbox, read at start */
	struct timespec t_start, t_end;
	struct session *session; /* NULL with --explain */
	struct ports ports;
	/* --detach: the socket to the waiting foreground process, and the
	 * caller's stderr kept for errors until the workload has started */
	int report_fd, caller_err;
	/* outcome */
	bool started, expired, stopped, done;
	bool init_reaped; /* waitid() returned PID 1's status */
	int exec_errno;
	bool wl_reported;
	bool wl_signaled;
	int wl_code; /* exit code, or signal number when wl_signaled */
	enum ending ending;
	int status; /* paddock run's own exit status */
	struct killed *killed;
	size_t n_killed;
	struct survivor *survivors;
	size_t n_survivors;
	int placeholders_left;
	/* paddock exec (exec.c): its helpers watch exec_end[0] and end
	 * their command when the supervisor is gone (EOF). */
	int exec_end[2];
	bool exec_end_open;
	char child_error[INITPROTO_MAX + 1];
	/* services (policy "services"), as paddock-init reports them; after
	 * "retained" the main command's outcome above is final and only
	 * leased services run on */
	struct session_lease services[SESSION_LEASES_MAX];
	size_t n_services;
	bool retained;
	bool services_stop_sent; /* stop or TTL after the main command's end */
	bool over;		 /* the sandbox is gone: the final record */
	struct timespec t_main_end;
	int record_fd;	/* --record: written at "retained" and at the end */
	struct err err; /* a launcher error after the start, for the record */
};

/* spawn.c */
int sandbox_prepare_init(struct run *r, struct err *err);
int sandbox_start(struct run *r, struct err *err);
int sandbox_protect(struct run *r, struct err *err);
/* CLONE_NEW* for the POLICY_NS_* bits ns. */
unsigned long sandbox_ns_flags(unsigned ns);
/* The hardening of every process that enters the sandbox, in the
 * sandbox's namespaces (after the mounts, or after setns(2) into them),
 * as its last steps before execve: cwd (resolved in the root), rlimits,
 * setsid, only fds 0-2 and keep (moved to 3, 4, ...; keep[] is updated;
 * the first n_inherit stay open across execve, the others become
 * close-on-exec), no capabilities, no_new_privs, Landlock (with
 * apply_landlock; paddock-init applies it to what it starts), an empty signal
 * mask, seccomp. -errno with err set; the process is then half-hardened
 * and must only report and _exit(). */
int sandbox_harden(const struct run *r, const char *cwd, int *keep, size_t n_keep, size_t n_inherit,
		   bool apply_landlock, struct err *err);

/* ports.c. ports_check(): a policy with ports needs the sandbox's own
 * network namespace (-EINVAL, err set). ports_bind(): before anything
 * starts, every host listener bound and listening, r->ports.endpoints
 * filled; a busy fixed port is -EADDRINUSE with err "ports[N]: ADDR is in
 * use; nothing started" (never shared: no SO_REUSEPORT). ports_start():
 * once r->pidfd exists, fork the relay, wait for its set-up report and
 * give it the listeners (closed here); the endpoints go into the session.
 * ports_stop(): kill the relay by pidfd and reap exactly it, close any
 * listener left; safe to call at any point and more than once. */
int ports_check(const struct run *r, struct err *err);
int ports_bind(struct run *r, struct err *err);
int ports_start(struct run *r, struct err *err);
void ports_stop(struct run *r);
/* relay.c: the relay child's body (never returns). It reports its set-up
 * on report: nothing and EOF when ready, else the error text. */
__attribute__((noreturn)) void ports_relay(struct port_listener *l, size_t n, int sandbox_pidfd,
					   pid_t parent, int report);

/* supervise.c: wait for the end, forwarding signals and enforcing the TTL. */
int sandbox_supervise(struct run *r, struct err *err);
/* The main command's ending and status from init's report. */
void sandbox_conclude_main(struct run *r);
/* Processes still in the sandbox's namespaces, from outside. */
int sandbox_find_survivors(struct run *r);

/* exec.c: paddock exec, the supervisor's side. Runs req's command in the
 * sandbox for the client on fd (docs/sessions.md), or answers it "error
 * ...". Takes fd and req (closed and freed). Returns at once: the command
 * is run and waited for by a helper process that is not the supervisor's
 * child, so the supervisor never reaps anything but its own. */
void exec_spawn(struct run *r, int fd, struct session_exec *req);
/* cmd_exec.c: paddock exec (argv from the command word on). */
int cmd_exec(int argc, char **argv);

/* detach.c: paddock run --detach. detach_start() forks; in the child (the
 * supervisor-to-be: new session, stdin /dev/null, no inherited fds but
 * 0-2) it returns 0 with r->report_fd set; in the foreground process it
 * returns 1 once the child reported, with *status the exit status (the
 * session id is printed on stdout, an error on stderr). -errno when the
 * fork fails. */
int detach_start(struct run *r, int *status, struct err *err);
/* Supervisor: the workload runs (prints the id), or the run is over and
 * never started (exit status). Both close the report socket and give up
 * the caller's stderr; later calls do nothing. */
void detach_report_started(struct run *r);
void detach_report_exit(struct run *r, int status);

/* cmd_session.c: paddock ps, stop, wait and rm (argv from the command
 * word on). Each returns the exit status and prints its own one-line
 * errors. */
int cmd_ps(int argc, char **argv);
int cmd_stop(int argc, char **argv);
int cmd_wait(int argc, char **argv);
int cmd_rm(int argc, char **argv);
/* Open the caller's registry into reg and find the session (an id or a
 * name), removing a stale one (-ESRCH). err says what is wrong. */
int cmd_lookup(struct registry *reg, const char *what, struct session_info *info, struct err *err);
/* Connect to the session's control socket, whose listener must be the
 * registered supervisor with the caller's uid (SO_PEERCRED): the fd, or
 * -errno with err set. */
int cmd_dial(const struct registry *reg, const struct session_info *info, struct err *err);

/* services.c: the supervisor's side of services and leases. */
void services_init(struct run *r);
/* A "service-..." message from init: true if it was one. */
bool services_message(struct run *r, const char *m);
/* init said "retained": the main command's outcome is final; the session,
 * the record and a waiting foreground process learn it now. */
void services_retained(struct run *r);
/* A leased service keeps the session after the main command. */
bool services_leased(const struct policy *p);

/* detach.c: a foreground paddock run whose policy has leased services
 * returns when the main command ends, while the supervisor keeps the
 * leases: like detach_start(), the supervisor is forked first (keeping the
 * caller's stdio), and the foreground forwards signals to it and waits
 * for "retained N" or "exit N". */
int retain_start(struct run *r, int *status, struct err *err);
void retain_report(struct run *r, int status);

/* record.c */
int record_write(const struct run *r, int fd, struct err *err);
/* The weakenings in effect: the --weaken knobs plus what the policy itself
 * turns off ("seccomp-profile-none"). For the record and --explain. */
size_t run_weakenings(const struct run *r, const char **out, size_t max);

/* explain.c: paddock run --explain. */
void explain_print(const struct run *r, FILE *f);
