/* The supervisor: the launcher's parent side, outside the sandbox. It waits
 * on the pidfd of PID 1, enforces the TTL on a timerfd, forwards signals from
 * a signalfd, collects init's reports, and afterwards checks from outside
 * that nothing of the sandbox is left. */
#include "run.h"

#include <dirent.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/pidfd.h>
#include <sys/stat.h>
#include <sys/timerfd.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../../include/cleanup.h"
#include "../../include/log.h"
#include "../../include/timer.h"

/* SIGWINCH: in terminal mode a size change of the sandbox's pty
 * (stdio_winch()), else the signal. */
const int forwarded_signals[] = {SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2, SIGWINCH};
const size_t n_forwarded_signals = sizeof(forwarded_signals) / sizeof(forwarded_signals[0]);

void forwarded_sigset(sigset_t *set)
{
	sigemptyset(set);
	for (size_t i = 0; i < n_forwarded_signals; i++)
		sigaddset(set, forwarded_signals[i]);
}

void supervisor_sigset(sigset_t *set)
{
	forwarded_sigset(set);
	/* Job control of the caller's terminal: the relay stops cleanly
	 * (stdio_suspend()) and resumes (stdio_resume()). */
	sigaddset(set, SIGTSTP);
	sigaddset(set, SIGCONT);
}

static void on_signal(struct run *r, int sig)
{
	if (sig == SIGTSTP) {
		stdio_suspend(r);
		return;
	}
	if (sig == SIGCONT) {
		stdio_resume(r);
		return;
	}
	if (sig == SIGWINCH && r->live.stdio.mode == STDIO_TTY) {
		stdio_winch(r);
		return;
	}
	/* ESRCH: PID 1 is already gone; pidfd readiness follows. */
	pidfd_send_signal(r->live.box.pidfd, sig, NULL, 0);
}

/* SIGKILL margin after the grace period: init's own deadline comes first,
 * so it can report what it had to kill; this one ends it regardless. */
#define KILL_MARGIN_MS 1000

/* The workload runs: the session says so, and a detached run's foreground
 * process prints the id and leaves. */
static void started(struct run *r)
{
	/* Once, in the order of paddock-init's messages: a detached run's
	 * foreground gets "started ID" before a "retained" read in the same
	 * drain() could answer it (leases.c). */
	if (r->live.announced)
		return;
	r->live.announced = true;
	if (r->live.session) {
		if (proc_identity(r->live.box.pid, &r->live.session->info.init) < 0)
			r->live.session->info.init = (struct proc_id){0};
		/* "started" and "retained" can come in one drain(): the
		 * main command's end, already written, stays. */
		if (r->live.session->info.state == SESSION_STARTING)
			r->live.session->info.state = SESSION_RUNNING;
		/* A registry that went away meanwhile does not stop the
		 * workload; ps and stop will not find it. */
		(void)session_write(r->live.session, NULL);
	}
	detach_report_started(r);
}

/* One message from the child (before exec) or from paddock-init: the
 * outcome changes (pure), then its effects happen here. */
static void handle_message(struct run *r, const char *m)
{
	struct timespec now;
	int fx;

	clock_gettime(CLOCK_REALTIME, &now);
	{
		char q[2 * INITPROTO_MAX + 8];

		evidence_json_string(m, q, sizeof(q));
		evidence_event(r, "init", "\"message\":%s", q);
	}
	fx = outcome_apply(&r->out, m, &now);
	if (fx < 0) {
		log_debug("ignored message: %s", m);
		return;
	}
	if (fx & OUTCOME_FX_STARTED)
		started(r);
	if (fx & OUTCOME_FX_SERVICE_FAILED) {
		const struct session_lease *l = &r->out.leases[r->out.fx_lease];

		fprintf(stderr, "paddock: warning: service %s: %s: %s\n", l->service,
			r->spec->policy->services[r->out.fx_lease].argv[0],
			strerror(atoi(strrchr(l->ended, ' ') ? strrchr(l->ended, ' ') + 1 : "0")));
	}
	if (fx & OUTCOME_FX_RETAINED) {
		/* The main command is over and the caller gets its terminal
		 * back: the relay ends here, whatever runs on. */
		stdio_finish(r);
		leases_retained(r);
	} else if (fx & OUTCOME_FX_LEASE)
		leases_publish(r);
}

static void drain(struct run *r, bool *open)
{
	char buf[INITPROTO_MAX + 1];

	while (*open) {
		int fd = -1;
		int n = sandbox_recv(r->live.box.ctl, buf, sizeof(buf), &fd);

		if (n == -EAGAIN || n == -EINTR)
			return;
		if (n <= 0) {
			*open = false; /* EOF: init (or the child) is gone */
			return;
		}
		log_debug("message: %s", buf);
		/* The child's pty master (terminal mode); a fd with any
		 * other message is closed unused. */
		if (fd >= 0 && strcmp(buf, "pty") == 0)
			stdio_master(r, fd);
		else if (fd >= 0 && strcmp(buf, "seccomp-notify") == 0 && r->live.denials.fd < 0) {
			r->live.denials.fd = fd;
			denials_listener_sync(fd);
		} else if (fd >= 0)
			close(fd);
		else
			handle_message(r, buf);
	}
}

/* End the sandbox now: on expiry of the TTL, or on "paddock stop" with
 * its own grace period when has_grace. */
static void end_now(struct run *r, int kill_tfd, bool has_grace, uint64_t grace_ms)
{
	char msg[48] = "stop";

	if (r->spec->opt->weaken & WEAKEN_NO_PIDNS) {
		/* Without a pid namespace the supervisor has no handle on the
		 * sandbox's other processes: all it can end is its direct
		 * child. That is the hole this weakening demonstrates. */
		pidfd_send_signal(r->live.box.pidfd, SIGKILL, NULL, 0);
		return;
	}
	/* Ask init to TERM everything, then SIGKILL PID 1 after the grace
	 * period: when a pid namespace's init dies the kernel kills every
	 * process left in it (pid_namespaces(7)), detached or not. */
	if (has_grace)
		snprintf(msg, sizeof(msg), "stop %llu", (unsigned long long)grace_ms);
	(void)!send(r->live.box.ctl, msg, strlen(msg), MSG_NOSIGNAL);
	timer_arm_ms(kill_tfd, (has_grace ? grace_ms : r->spec->policy->grace_ms) + KILL_MARGIN_MS);
}

static void expire(struct run *r, int kill_tfd)
{
	if (r->out.stopped || r->out.services_stop_sent)
		return; /* already ending, with the grace paddock stop asked for */
	r->out.expired = true;
	evidence_event(r, "expired", "\"ttl_ms\":%llu",
		       (unsigned long long)r->spec->policy->ttl_ms);
	log_debug("ttl expired");
	end_now(r, kill_tfd, false, 0);
}

/* paddock stop. A workload that already ended, or a sandbox already
 * ending, is not "stopped": init is finishing, and the stop waits for it. */
static void stop(struct run *r, int kill_tfd, const struct session_request *req)
{
	if (r->out.expired || r->out.stopped || r->out.services_stop_sent)
		return;
	if (r->out.wl_reported) {
		/* The main command is over; what a stop still ends is the
		 * leased services. The main command's outcome stays. */
		if (!leases_any(r->spec->policy))
			return;
		r->out.services_stop_sent = true;
		end_now(r, kill_tfd, req->has_grace, req->grace_ms);
		return;
	}
	r->out.stopped = true;
	end_now(r, kill_tfd, req->has_grace, req->grace_ms);
}

int supervise(struct run *r, struct err *err)
{
	cleanup_close int sfd = -1, ttl_tfd = -1, kill_tfd = -1;
	bool ctl_open = true;
	sigset_t set;
	siginfo_t si = {0};

	supervisor_sigset(&set);
	sfd = signalfd(-1, &set, SFD_CLOEXEC | SFD_NONBLOCK);
	ttl_tfd = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC | TFD_NONBLOCK);
	kill_tfd = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC | TFD_NONBLOCK);
	if (sfd < 0 || ttl_tfd < 0 || kill_tfd < 0)
		return err_sys(err, errno, "supervisor fds");
	/* The TTL from the deadline init was given too (run_prepare()),
	 * which is INIT_DEADLINE_MARGIN_MS later. */
	if (r->spec->sb.deadline_ms) {
		int rc =
		    timer_arm_at_ms(ttl_tfd, r->spec->sb.deadline_ms - INIT_DEADLINE_MARGIN_MS);

		if (rc < 0)
			return err_sys(err, rc, "arm the TTL");
	}
	if (r->spec->policy->ttl_ms && r->live.session)
		session_expires(r->live.session, r->spec->policy->ttl_ms);

	for (;;) {
		struct pollfd pfd[5 + STDIO_PFDS + 1 + SESSION_CLIENTS_MAX + 2 + 1 + EXEC_POLLFDS] =
		    {
			{.fd = r->live.box.pidfd, .events = POLLIN},
			{.fd = ctl_open ? r->live.box.ctl : -1, .events = POLLIN},
			{.fd = sfd, .events = POLLIN},
			{.fd = ttl_tfd, .events = POLLIN},
			{.fd = kill_tfd, .events = POLLIN},
		    };
		/* The relay's fds, then the session's control socket and
		 * its clients. */
		size_t ns = stdio_pollfds(r, pfd + 5, STDIO_PFDS);
		struct pollfd *spfd = pfd + 5 + ns;
		size_t n = r->live.session
			       ? session_pollfds(r->live.session, spfd, 1 + SESSION_CLIENTS_MAX)
			       : 0;
		/* Then a detached run's output pipes (output.c). */
		size_t n_out = output_pollfds(r, spfd + n);
		/* And the seccomp listener of --trace-denials (denials.c). */
		struct pollfd *dpfd = spfd + n + n_out;
		/* And the exec'd commands' listeners (exec.c). */
		size_t n_x = exec_pollfds(r, dpfd + 1);
		struct session_request req;
		uint64_t ticks;

		*dpfd = (struct pollfd){.fd = r->live.denials.fd, .events = POLLIN};
		if (poll(pfd, 5 + ns + n + n_out + 1 + n_x, stdio_poll_timeout(r)) < 0) {
			if (errno == EINTR)
				continue;
			return err_sys(err, errno, "poll");
		}
		stdio_tick(r);
		if (pfd[1].revents)
			drain(r, &ctl_open);
		if (pfd[2].revents & POLLIN) {
			struct signalfd_siginfo ssi;

			while (read(sfd, &ssi, sizeof(ssi)) == sizeof(ssi))
				on_signal(r, (int)ssi.ssi_signo);
		}
		stdio_handle(r, pfd + 5, ns);
		if ((pfd[3].revents & POLLIN) && read(ttl_tfd, &ticks, sizeof(ticks)) > 0)
			expire(r, kill_tfd);
		if ((pfd[4].revents & POLLIN) && read(kill_tfd, &ticks, sizeof(ticks)) > 0)
			pidfd_send_signal(r->live.box.pidfd, SIGKILL, NULL, 0);
		if (n_out)
			output_serve(r, spfd + n);
		if ((dpfd->revents & POLLIN)
			? !denials_serve(r, r->live.denials.fd, &r->live.denials.wl)
			: (dpfd->revents & (POLLERR | POLLHUP | POLLNVAL))) {
			/* Nothing left that the filter can stop. */
			close(r->live.denials.fd);
			r->live.denials.fd = -1;
		}
		/* Before the session's requests, which may dispatch to the
		 * spare whose slot this reads. */
		exec_serve(r, dpfd + 1, n_x);
		if (n) {
			session_serve(r->live.session, spfd, n, &req);
			if (req.stop)
				stop(r, kill_tfd, &req);
			if (req.stop)
				evidence_event(r, "stop-requested", "\"grace_ms\":%llu",
					       (unsigned long long)req.grace_ms);
			if (req.exec) {
				char a[256];

				evidence_json_string(req.exec_req.argv && req.exec_req.argv[0]
							 ? req.exec_req.argv[0]
							 : "",
						     a, sizeof(a));
				evidence_event(r, "exec", "\"argv0\":%s", a);
				exec_spawn(r, req.exec_fd, &req.exec_req);
			}
		}
		if (pfd[0].revents & POLLIN)
			break;
	}
	if (waitid(P_PIDFD, (id_t)r->live.box.pidfd, &si, WEXITED) < 0)
		return err_sys(err, errno, "waitid");
	clock_gettime(CLOCK_REALTIME, &r->out.t_end);
	drain(r, &ctl_open);
	outcome_conclude(&r->out, &si);
	return 0;
}

/* One stat per process: the pid namespace when there is one (it holds
 * every process of the sandbox, nested user namespaces included), else the
 * user namespace. */
static bool in_sandbox(const struct run *r, const char *pid)
{
	bool pidns = r->spec->sb.namespaces & POLICY_NS_PID;
	char path[300];
	struct stat st;

	snprintf(path, sizeof(path), "/proc/%s/ns/%s", pid, pidns ? "pid" : "user");
	return stat(path, &st) == 0 && st.st_dev == r->live.box.ns_dev &&
	       st.st_ino == (pidns ? r->live.box.pidns : r->live.box.userns);
}

static void read_comm(const char *pid, char *out, size_t size)
{
	char path[300];
	cleanup_close int fd = -1;
	ssize_t n;

	snprintf(out, size, "?");
	snprintf(path, sizeof(path), "/proc/%s/comm", pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return;
	n = read(fd, out, size - 1);
	if (n <= 0)
		return;
	out[n] = '\0';
	out[strcspn(out, "\n")] = '\0';
}

/* Processes still in the sandbox's pid or user namespace, found from the
 * host's /proc: with a pid namespace there must be none (the kernel ended
 * them with PID 1); without one, what is left is recorded, not hidden. */
int find_survivors(struct run *r)
{
	DIR *d;
	struct dirent *e;

	/* With a pid namespace there is nothing to look for once PID 1 is
	 * reaped: its exit runs zap_pid_ns_processes(), which SIGKILLs every
	 * other process of the namespace (nested namespaces and processes that
	 * entered by setns() included, they all hold a pid in it) and waits
	 * until all of them are reaped, before PID 1 becomes a zombie its
	 * parent can wait for (pid_namespaces(7), kernel/pid_namespace.c).
	 * The scan read every process of the host (~1 ms on an idle machine,
	 * more under load) after every run and could only find nothing. */
	if ((r->spec->sb.namespaces & POLICY_NS_PID) && r->out.init_reaped)
		return 0;
	d = opendir("/proc");
	if (!d)
		return -errno;
	while ((e = readdir(d))) {
		struct survivor *s;

		if (e->d_name[0] < '0' || e->d_name[0] > '9' || !in_sandbox(r, e->d_name))
			continue;
		s = realloc(r->out.survivors, (r->out.n_survivors + 1) * sizeof(*s));
		if (!s)
			break;
		r->out.survivors = s;
		s = &r->out.survivors[r->out.n_survivors++];
		s->pid = atoi(e->d_name);
		read_comm(e->d_name, s->comm, sizeof(s->comm));
	}
	closedir(d);
	return (int)r->out.n_survivors;
}
