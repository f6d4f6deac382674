/* paddock-init's services (policy "services", docs/sessions.md): started
 * before the workload, each in a session of its own, and ended when its
 * lease runs out or with the sandbox. Only a running service with a lease
 * outlives the workload; its processes are its session's members, which no
 * other process can join (setsid(2), setpgid(2)), so a leftover of the
 * workload can never pass for a service. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../include/io.h"
#include "../include/timer.h"
#include "init.h"

/* While a service's session is being killed, how often it is swept again
 * (members can fork until the SIGKILL reaches them). */
#define RESWEEP_MS 100

int services_add(struct init *in, const char *name, int argc, char **argv, int *i, struct err *err)
{
	struct service *sv = &in->svc[in->nsvc];
	long lease, n;

	if (in->nsvc == SERVICES_MAX)
		return err_set(err, EINVAL, "more than %d services", SERVICES_MAX);
	if (!name[0] || strlen(name) > 64 || strpbrk(name, " \t\n"))
		return err_set(err, EINVAL, "bad service name '%s'", name);
	if (*i + 2 > argc || init_parse_num(argv[*i], 30L * 24 * 3600 * 1000, &lease) < 0 ||
	    init_parse_num(argv[*i + 1], 256, &n) < 0 || n < 1 || *i + 2 + n > argc)
		return err_set(err, EINVAL, "--service %s: expected LEASE_MS ARGC ARG...", name);
	sv->name = (char *)name;
	sv->lease_ms = lease;
	sv->argv = calloc((size_t)n + 1, sizeof(char *));
	if (!sv->argv)
		return err_set(err, ENOMEM, "out of memory");
	memcpy(sv->argv, argv + *i + 2, (size_t)n * sizeof(char *));
	*i += 2 + (int)n;
	in->nsvc++;
	return 0;
}

static __attribute__((noreturn)) void service_child(struct init *in, struct service *sv, int errfd)
{
	/* Its own session and group: its processes are found by session id,
	 * and job control of the workload's group does not reach it. */
	setsid();
	/* Never the caller's stdio, nor the relay of it: a leased service
	 * outlives the main command, and the caller's terminal is the
	 * caller's again by then (a service reading it would read the next
	 * command line, a password). stdin /dev/null, stdout and stderr the
	 * session's output files (--service-stdout-fd, -stderr-fd; without
	 * them, as with --weaken direct-stdio, init's own 0-2). */
	if (in->svc_out[0] >= 0 && (in->null_fd < 0 || dup2(in->null_fd, 0) < 0))
		close(0);
	for (int i = 0; i < 2 && in->svc_out[0] >= 0; i++) {
		int fd = in->svc_out[i] >= 0 ? in->svc_out[i] : in->null_fd;

		if (fd < 0 || dup2(fd, 1 + i) < 0)
			close(1 + i);
	}
	init_exec_child(in, sv->argv, errfd);
}

static void start_one(struct init *in, struct service *sv)
{
	int fd[2], e = 0;
	ssize_t n;
	pid_t pid;

	if (pipe2(fd, O_CLOEXEC) < 0) {
		init_complain("service %s: pipe2: %m", sv->name);
		sv->state = SVC_ENDED;
		init_say(in, "service-ended %s exec-error %d", sv->name, errno);
		return;
	}
	pid = fork();
	if (pid == 0)
		service_child(in, sv, fd[1]);
	close(fd[1]);
	e = pid < 0 ? errno : 0;
	/* The pipe is close-on-exec: EOF means the exec succeeded. */
	n = pid < 0 ? 0 : read_full(fd[0], &e, sizeof(e));
	close(fd[0]);
	sv->pid = pid;
	if (pid < 0 || n == sizeof(e)) {
		/* Reaped now: the failed child only has _exit() left to do, and
		 * until then a shutdown sweep would report it as a leftover
		 * ("term 2 paddock-init") when the workload ends quickly. */
		while (pid > 0 && waitpid(pid, NULL, 0) < 0 && errno == EINTR)
			;
		sv->state = SVC_ENDED;
		if (e & INIT_LANDLOCK_FAILED)
			init_say(in, "service-ended %s landlock-error %d", sv->name,
				 e & ~INIT_LANDLOCK_FAILED);
		else
			init_say(in, "service-ended %s exec-error %d", sv->name, e);
		return;
	}
	sv->state = SVC_RUNNING;
	sv->cause = "exited";
	sv->lease_end = sv->lease_ms ? init_now_ms() + sv->lease_ms : 0;
	init_say(in, "service-started %s %d", sv->name, (int)pid);
}

void services_start(struct init *in)
{
	for (unsigned i = 0; i < in->nsvc; i++)
		start_one(in, &in->svc[i]);
	services_tick(in);
}

static bool leased(const struct service *sv)
{
	return sv->state == SVC_RUNNING && sv->lease_ms > 0;
}

bool services_retainable(const struct init *in)
{
	for (unsigned i = 0; i < in->nsvc; i++)
		if (leased(&in->svc[i]))
			return true;
	return false;
}

bool services_running(const struct init *in)
{
	for (unsigned i = 0; i < in->nsvc; i++)
		if (in->svc[i].state == SVC_RUNNING || in->svc[i].state == SVC_ENDING)
			return true;
	return false;
}

static bool in_leased_session(const struct init *in, int sid)
{
	for (unsigned i = 0; i < in->nsvc; i++)
		if (leased(&in->svc[i]) && in->svc[i].pid == sid)
			return true;
	return false;
}

/* What each_proc() is after, and how many it found. */
struct each {
	bool (*pick)(const struct init *in, const struct proc *p, int arg);
	int arg;
	int sig;
	bool report;
	int count;
};

static int each_one(struct init *in, pid_t pid, void *arg)
{
	struct each *e = arg;
	struct proc p;

	if (procs_read(pid, &p) < 0 || !e->pick(in, &p, e->arg))
		return 0;
	/* A zombie is gone, but one of ours counts until reap() has
	 * reported it (a service's end comes before "retained"). */
	if ((p.state == 'Z' || p.state == 'X') && (e->sig || p.ppid != in->self))
		return 0;
	e->count++;
	if (!e->sig)
		return 0;
	if (e->report && (e->sig != SIGKILL || procs_first_kill(in, pid)))
		init_say(in, "%s %d %s", e->sig == SIGKILL ? "kill" : "term", (int)pid, p.comm);
	if (kill(pid, e->sig) < 0 && errno != ESRCH)
		init_complain("kill %d: %m", (int)pid);
	return 0;
}

/* Every live process of our pid namespace but init that pick() chooses:
 * counted, and with sig signalled (and reported). PID 1 only: without a pid
 * namespace /proc lists the host's processes. */
static int each_proc(struct init *in, bool (*pick)(const struct init *, const struct proc *, int),
		     int arg, int sig, bool report)
{
	struct each e = {.pick = pick, .arg = arg, .sig = sig, .report = report};

	if (in->pid1)
		(void)procs_each(in, each_one, &e);
	return e.count;
}

static bool pick_other(const struct init *in, const struct proc *p, int arg)
{
	(void)arg;
	return !in_leased_session(in, p->sid);
}

static bool pick_session(const struct init *in, const struct proc *p, int sid)
{
	(void)in;
	return p->sid == sid;
}

int services_sweep_others(struct init *in, int sig)
{
	return each_proc(in, pick_other, 0, sig, true);
}

/* A service's whole session. Its group is its session id; signalled by
 * group only while the leader is unreaped (its number cannot be reused
 * before), which is all there is without a pid namespace. */
static void signal_service(struct init *in, struct service *sv, int sig)
{
	if (sv->state != SVC_ENDED && kill(-sv->pid, sig) < 0 && errno != ESRCH)
		init_complain("kill -%d: %m", (int)sv->pid);
	each_proc(in, pick_session, sv->pid, sig, false);
}

bool services_reaped(struct init *in, pid_t pid, int status)
{
	for (unsigned i = 0; i < in->nsvc; i++) {
		struct service *sv = &in->svc[i];

		if (sv->pid != pid || sv->state == SVC_NEW)
			continue;
		if (sv->state == SVC_ENDED)
			return true; /* its exec failed; already reported */
		sv->state = SVC_ENDED;
		if (WIFSIGNALED(status))
			init_say(in, "service-ended %s %s signal:%d", sv->name, sv->cause,
				 WTERMSIG(status));
		else
			init_say(in, "service-ended %s %s exit:%d", sv->name, sv->cause,
				 WEXITSTATUS(status));
		/* What the leader leaves of its session goes with it. */
		signal_service(in, sv, SIGKILL);
		return true;
	}
	return false;
}

void services_mark(struct init *in, const char *cause)
{
	for (unsigned i = 0; i < in->nsvc; i++)
		if (in->svc[i].state == SVC_RUNNING)
			in->svc[i].cause = cause;
}

/* svc_tfd for the deadline at (CLOCK_MONOTONIC ms), disarmed for 0. */
static void arm(struct init *in, int64_t at)
{
	int64_t d = at - init_now_ms();
	int r = at ? timer_arm_ms(in->svc_tfd, d < 1 ? 1 : (uint64_t)d) : timer_disarm(in->svc_tfd);

	if (r < 0)
		init_complain("timerfd_settime (services): %s", strerror(-r));
}

void services_tick(struct init *in)
{
	int64_t now = init_now_ms(), next = 0;

	for (unsigned i = 0; i < in->nsvc; i++) {
		struct service *sv = &in->svc[i];

		/* The sandbox's own shutdown ends every service. */
		if (in->phase >= TERMINATING)
			break;
		if (sv->state == SVC_RUNNING && sv->lease_end && now >= sv->lease_end) {
			sv->cause = "lease-expired";
			sv->state = SVC_ENDING;
			sv->kill_at = now + in->grace_ms;
			signal_service(in, sv, SIGTERM);
		} else if (sv->state == SVC_ENDING && now >= sv->kill_at) {
			signal_service(in, sv, SIGKILL);
			sv->kill_at = now + RESWEEP_MS;
		}
		if (sv->state == SVC_RUNNING && sv->lease_end && (!next || sv->lease_end < next))
			next = sv->lease_end;
		if (sv->state == SVC_ENDING && (!next || sv->kill_at < next))
			next = sv->kill_at;
	}
	arm(in, in->phase >= TERMINATING ? 0 : next);
}
