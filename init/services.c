/* paddock-init's services (policy "services", docs/sessions.md): started
 * before the workload, each in a session of its own, and ended when its
 * lease runs out or with the sandbox. Only a running service with a lease
 * outlives the workload; its processes are its session's members, which no
 * other process can join (setsid(2), setpgid(2)), so a leftover of the
 * workload can never pass for a service. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/timerfd.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "../include/exitcodes.h"
#include "init.h"

/* While a service's session is being killed, how often it is swept again
 * (members can fork until the SIGKILL reaches them). */
#define RESWEEP_MS 100

void exec_child(const struct init *in, char **argv, int errfd)
{
	int e;

	sigprocmask(SIG_SETMASK, &in->orig_mask, NULL);
	e = enter_landlock(in);
	if (e < 0) {
		e = LANDLOCK_FAILED | -e;
		(void)!write(errfd, &e, sizeof(e));
		_exit(EXIT_LAUNCHER);
	}
	execvp(argv[0], argv);
	e = errno;
	(void)!write(errfd, &e, sizeof(e));
	_exit(e == ENOENT || e == ENOTDIR ? EXIT_NOTFOUND : EXIT_NOEXEC);
}

int enter_landlock(const struct init *in)
{
	/* landlock_restrict_self(2); no_new_privs is inherited from the
	 * launcher, which set it before exec'ing us. */
	if (in->landlock_fd >= 0 && syscall(SYS_landlock_restrict_self, in->landlock_fd, 0) < 0)
		return -errno;
	return 0;
}

int64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static int parse_long(const char *s, long max, long *out)
{
	char *end;

	errno = 0;
	*out = strtol(s, &end, 10);
	return s[0] >= '0' && s[0] <= '9' && !errno && !*end && *out <= max ? 0 : -EINVAL;
}

int services_add(struct init *in, const char *name, int argc, char **argv, int *i, struct err *err)
{
	struct service *sv = &in->svc[in->nsvc];
	long lease, n;

	if (in->nsvc == SERVICES_MAX)
		return err_set(err, EINVAL, "more than %d services", SERVICES_MAX);
	if (!name[0] || strlen(name) > 64 || strpbrk(name, " \t\n"))
		return err_set(err, EINVAL, "bad service name '%s'", name);
	if (*i + 2 > argc || parse_long(argv[*i], 30L * 24 * 3600 * 1000, &lease) < 0 ||
	    parse_long(argv[*i + 1], 256, &n) < 0 || n < 1 || *i + 2 + n > argc)
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
	exec_child(in, sv->argv, errfd);
}

static void start_one(struct init *in, struct service *sv)
{
	int fd[2], e = 0;
	ssize_t n;
	pid_t pid;

	if (pipe2(fd, O_CLOEXEC) < 0) {
		complain("service %s: pipe2: %m", sv->name);
		sv->state = SVC_ENDED;
		say(in, "service-ended %s exec-error %d", sv->name, errno);
		return;
	}
	pid = fork();
	if (pid == 0)
		service_child(in, sv, fd[1]);
	close(fd[1]);
	e = pid < 0 ? errno : 0;
	/* The pipe is close-on-exec: EOF means the exec succeeded. */
	do
		n = pid < 0 ? 0 : read(fd[0], &e, sizeof(e));
	while (n < 0 && errno == EINTR);
	close(fd[0]);
	sv->pid = pid;
	if (pid < 0 || n == sizeof(e)) {
		/* Reaped now: the failed child only has _exit() left to do, and
		 * until then a shutdown sweep would report it as a leftover
		 * ("term 2 paddock-init") when the workload ends quickly. */
		while (pid > 0 && waitpid(pid, NULL, 0) < 0 && errno == EINTR)
			;
		sv->state = SVC_ENDED;
		if (e & LANDLOCK_FAILED)
			say(in, "service-ended %s landlock-error %d", sv->name,
			    e & ~LANDLOCK_FAILED);
		else
			say(in, "service-ended %s exec-error %d", sv->name, e);
		return;
	}
	sv->state = SVC_RUNNING;
	sv->cause = "exited";
	sv->lease_end = sv->lease_ms ? now_ms() + sv->lease_ms : 0;
	say(in, "service-started %s %d", sv->name, (int)pid);
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

/* Every live process of our pid namespace but init, with fn deciding. */
static int each_proc(struct init *in, bool (*pick)(const struct init *, const struct proc *, int),
		     int arg, int sig, bool report)
{
	DIR *d;
	struct dirent *de;
	int count = 0;

	if (!in->pid1 || !proc_is_ours(in->self))
		return 0;
	d = opendir("/proc");
	if (!d) {
		complain("opendir /proc: %m");
		return 0;
	}
	while ((de = readdir(d))) {
		struct proc p;
		char *end;
		long pid = strtol(de->d_name, &end, 10);

		if (*end || pid <= 1 || read_proc((pid_t)pid, &p) < 0 || !pick(in, &p, arg))
			continue;
		/* A zombie is gone, but one of ours counts until reap() has
		 * reported it (a service's end comes before "retained"). */
		if ((p.state == 'Z' || p.state == 'X') && (sig || p.ppid != in->self))
			continue;
		count++;
		if (!sig)
			continue;
		if (report && (sig != SIGKILL || first_kill(in, (pid_t)pid)))
			say(in, "%s %ld %s", sig == SIGKILL ? "kill" : "term", pid, p.comm);
		if (kill((pid_t)pid, sig) < 0 && errno != ESRCH)
			complain("kill %ld: %m", pid);
	}
	closedir(d);
	return count;
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
		complain("kill -%d: %m", (int)sv->pid);
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
			say(in, "service-ended %s %s signal:%d", sv->name, sv->cause,
			    WTERMSIG(status));
		else
			say(in, "service-ended %s %s exit:%d", sv->name, sv->cause,
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

static void arm(struct init *in, int64_t at)
{
	struct itimerspec t = {0};
	int64_t d;

	if (at) {
		d = at - now_ms();
		d = d < 1 ? 1 : d;
		t.it_value.tv_sec = d / 1000;
		t.it_value.tv_nsec = d % 1000 * 1000000;
	}
	if (timerfd_settime(in->svc_tfd, 0, &t, NULL) < 0)
		complain("timerfd_settime (services): %m");
}

void services_tick(struct init *in)
{
	int64_t now = now_ms(), next = 0;

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
