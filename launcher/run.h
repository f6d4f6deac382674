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
	char child_error[INITPROTO_MAX + 1];
	struct err err; /* a launcher error after the start, for the record */
};

/* spawn.c */
int sandbox_prepare_init(struct run *r, struct err *err);
int sandbox_start(struct run *r, struct err *err);
int sandbox_protect(struct run *r, struct err *err);

/* supervise.c: wait for the end, forwarding signals and enforcing the TTL. */
int sandbox_supervise(struct run *r, struct err *err);
/* Processes still in the sandbox's namespaces, from outside. */
int sandbox_find_survivors(struct run *r);

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

/* record.c */
int record_write(const struct run *r, int fd, struct err *err);
/* The weakenings in effect: the --weaken knobs plus what the policy itself
 * turns off ("seccomp-profile-none"). For the record and --explain. */
size_t run_weakenings(const struct run *r, const char **out, size_t max);

/* explain.c: paddock run --explain. */
void explain_print(const struct run *r, FILE *f);
