/* paddock-init's shared state and what its files share: init.c (the loop
 * and the reports), exec.c (a child's exec), procs.c (/proc and the
 * shutdown's sweeps) and services.c (the services). libc only. */
#pragma once

#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "../include/err.h"

#define COMM_MAX   64
#define KILLED_MAX 256
/* The shutdown names at most this many processes per signal ("term PID
 * COMM"); the rest are only counted ("term-more N"): reading a thousand
 * names while they die took the CPU from their exits (bench/: expiry). */
#define NAMED_MAX    64
#define SERVICES_MAX 16

enum service_state {
	SVC_NEW,     /* declared, not started */
	SVC_RUNNING, /* its leader runs */
	SVC_ENDING,  /* SIGTERM sent to its session; SIGKILL at kill_at */
	SVC_ENDED,   /* its leader was reaped and reported */
};

/* A service of the policy: its leader is started in a session of its own
 * (setsid), and its processes are that session's members. */
struct service {
	char *name;
	char **argv;
	long lease_ms; /* 0: ends with the workload */
	pid_t pid;     /* the leader; also its session and group id */
	enum service_state state;
	int64_t lease_end; /* CLOCK_MONOTONIC ms; 0 without a lease */
	int64_t kill_at;   /* SVC_ENDING: when SIGKILL follows */
	const char *cause; /* reported with its end: "exited", "lease-expired", ... */
};

enum phase {
	RUNNING,     /* the workload runs, nothing asked us to stop */
	SHEDDING,    /* the workload ended, leased services run: the rest ends */
	RETAINED,    /* only leased services (and their sessions) are left */
	TERMINATING, /* SIGTERM sent, grace timer armed */
	KILLING,     /* grace expired, SIGKILL sent */
};

struct init {
	int ctl;	 /* control socket, -1 without --control-fd */
	int landlock_fd; /* --landlock-fd: a ruleset for what init starts, or -1 */
	bool ctl_closed; /* EOF or a hard error: stop polling it */
	long grace_ms;	 /* SIGTERM -> SIGKILL delay */
	bool pid1;	 /* we are PID 1 of our own pid namespace */
	bool no_sweep;	 /* --no-sweep (paddock's --weaken no-sweep): leave at the workload's end */
	pid_t self;	 /* getpid() */
	int sfd;	 /* signalfd for every blocked signal */
	int tfd;	 /* grace timer */
	sigset_t orig_mask;
	pid_t wpid;  /* the workload, also its process group id */
	bool reaped; /* wstatus is valid */
	int wstatus;
	bool no_children; /* waitpid() said ECHILD */
	bool reap_burst;  /* many children end at once: reap on a timer */
	enum phase phase;
	pid_t killed[KILLED_MAX]; /* already reported as "kill" */
	unsigned nkilled;
	/* per signal (0 SIGTERM, 1 SIGKILL): reports with a name, and the
	 * processes signalled past NAMED_MAX, said as "term-more N" */
	unsigned named[2];
	unsigned long unnamed[2];
	/* procs.c: the shutdown's "term"/"kill" reports, sent at the end */
	char *later;
	size_t later_len, later_cap;
	/* services.c */
	struct service svc[SERVICES_MAX];
	unsigned nsvc;
	int svc_tfd;	/* the next lease or service grace deadline */
	int svc_out[2]; /* --service-stdout-fd, --service-stderr-fd, or -1 */
	int null_fd;	/* /dev/null, or -1 */
	/* --tty: fd 0 is the sandbox's pty slave, init's controlling
	 * terminal; tty_fd keeps it (close-on-exec) once 0-2 are given up */
	bool tty;
	int tty_fd;
	int64_t deadline_ms; /* --deadline-ms, CLOCK_MONOTONIC; 0: none */
	int dl_tfd;	     /* its timer: first the warm-up's (DL_WARM_MS before), then it */
	bool dl_warmed;	     /* the warm-up is done (or was too late to do) */
	bool shed_killing;   /* SHEDDING: the grace period is over, SIGKILL */
};

struct proc {
	char state;
	int ppid, pgrp, sid;
	char comm[COMM_MAX + 1];
};

/* init.c: the reports, and the small helpers every file of init uses. */
/* One protocol message to the supervisor (include/initproto.h); dropped
 * without --control-fd or once the supervisor is gone. */
void init_say(struct init *in, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* "paddock-init: warning: ..." on stderr; %m is the caller's errno. */
void init_complain(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* A decimal in 0..max (no sign, no blanks): 0 and *out, or -EINVAL. */
int init_parse_num(const char *s, long max, long *out);
/* Blanks and non-ASCII of s become '_' (one protocol word). */
void init_printable(char *s);
/* CLOCK_MONOTONIC in milliseconds. */
int64_t init_now_ms(void);

/* exec.c: the child's side of every fork of init. */
/* The original signal mask, the sandbox's Landlock domain (--landlock-fd),
 * execvp; a failure is written to errfd (below) and the child exits. */
__attribute__((noreturn)) void init_exec_child(const struct init *in, char **argv, int errfd);
/* The child's report through its close-on-exec pipe: errno of the failed
 * execvp, or INIT_LANDLOCK_FAILED | errno when the domain could not be
 * entered. */
#define INIT_LANDLOCK_FAILED 0x10000

/* procs.c: the sandbox's processes in /proc, and the shutdown's sweeps. */
/* /proc/PID/stat: state, ppid, pgrp, session and a printable comm. 0 or
 * -errno. */
int procs_read(pid_t pid, struct proc *p);
/* fn(in, pid, arg) for every process in /proc but init, named from the
 * directory alone (no file of a process is opened); a nonzero return from
 * fn ends the walk. 0; -ENOENT when /proc is missing or not of our pid
 * namespace (its pids are not ours to signal or report; nothing said);
 * -errno when it cannot be read (then warned). */
int procs_each(struct init *in, int (*fn)(struct init *in, pid_t pid, void *arg), void *arg);
/* True the first time for pid: "kill" is said once per pid. */
bool procs_first_kill(struct init *in, pid_t pid);
/* Reports ("term"/"kill") and signals what is left of the sandbox. */
void procs_sweep(struct init *in, int sig);
/* Lists /proc once, for nothing but its cache: see DL_WARM_MS. */
void procs_warm(struct init *in);
/* Sends the reports procs_sweep() kept for later (before "done"). */
void procs_flush_reports(struct init *in);

/* services.c */
/* "--service NAME LEASE_MS ARGC ARG..." at argv[*i] (NAME is optarg):
 * *i moves past it. */
int services_add(struct init *in, const char *name, int argc, char **argv, int *i, struct err *err);
/* Fork every service (before the workload), reporting each. */
void services_start(struct init *in);
/* A reaped child: true if it was a service's leader (then reported). */
bool services_reaped(struct init *in, pid_t pid, int status);
/* A leased service is still running: the workload's end does not end it. */
bool services_retainable(const struct init *in);
/* Signal every process of the sandbox outside the running leased
 * services' sessions (PID 1 only); returns how many there were. With
 * sig 0 they are only counted. */
int services_sweep_others(struct init *in, int sig);
/* The sandbox ends: services not already ending are marked with cause. */
void services_mark(struct init *in, const char *cause);
/* svc_tfd fired, or the state changed: act on passed deadlines, re-arm. */
void services_tick(struct init *in);
bool services_running(const struct init *in);
