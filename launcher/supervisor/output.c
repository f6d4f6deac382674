/* A detached workload's output, capped (docs/sessions.md, "Output"): the
 * workload writes into two pipes, and a copier process appends what comes
 * out of them to ID/stdout and ID/stderr, up to the policy's limits.output
 * bytes per stream. At the limit it writes one marker line and drops the
 * rest (the start of the output is kept: a stream is truncated, never
 * rotated), counting what it dropped. Without it, one session's output
 * could fill the registry's filesystem and cost its neighbours their
 * records and statuses.
 *
 * The supervisor's own messages go to the files directly (they are few);
 * only the sandbox gets the pipes, as its fds 1 and 2 at the clone. The
 * copier reports its counts when both pipes are at EOF, which is once
 * every process of the sandbox is gone. */
#include "run.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/pidfd.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../../include/cleanup.h"
#include "../../include/io.h"

/* How long finish() waits for the copier once the sandbox is over: only
 * processes that outlived the sandbox (no pid namespace) can keep the
 * pipes open that long; the copier is then killed and the counts are
 * unknown. */
#define OUTPUT_DRAIN_MS 2000

static const char *const stream_names[2] = {"stdout", "stderr"};

/* The copier: fds 3, 4 the pipes' read ends, 5, 6 the files, 7 the report
 * pipe. Never returns. */
static _Noreturn void copier(uint64_t max)
{
	struct output_report rep = {0};
	bool open_[2] = {true, true};
	char buf[65536];

	while (open_[0] || open_[1]) {
		struct pollfd pfd[2] = {{.fd = open_[0] ? 3 : -1, .events = POLLIN},
					{.fd = open_[1] ? 4 : -1, .events = POLLIN}};

		if (poll(pfd, 2, -1) < 0)
			continue; /* EINTR: no handlers are installed, but be safe */
		for (int i = 0; i < 2; i++) {
			ssize_t n;
			size_t keep;

			if (!pfd[i].revents)
				continue;
			n = read(3 + i, buf, sizeof(buf));
			if (n <= 0) {
				open_[i] = false;
				continue;
			}
			keep = rep.bytes[i] >= max		  ? 0
			       : (uint64_t)n > max - rep.bytes[i] ? (size_t)(max - rep.bytes[i])
								  : (size_t)n;
			if (keep && write_full(5 + i, buf, keep) >= 0)
				rep.bytes[i] += keep;
			rep.dropped[i] += (uint64_t)n - keep;
			if (rep.dropped[i] && !rep.marked[i]) {
				char line[160];
				int len =
				    snprintf(line, sizeof(line),
					     "\n[paddock: %s reached limits.output (%llu bytes); "
					     "the rest is dropped]\n",
					     stream_names[i], (unsigned long long)max);

				(void)!write_full(5 + i, line, (size_t)len);
				rep.marked[i] = true;
			}
		}
	}
	(void)!write_full(7, &rep, sizeof(rep));
	_exit(0);
}

int output_start(struct run *r, struct err *err)
{
	int out[2] = {-1, -1}, errp[2] = {-1, -1}, rep[2] = {-1, -1};
	pid_t pid;

	if (pipe2(out, O_CLOEXEC) < 0 || pipe2(errp, O_CLOEXEC) < 0 || pipe2(rep, O_CLOEXEC) < 0) {
		int e = errno;

		for (int i = 0; i < 2; i++) {
			if (out[i] >= 0)
				close(out[i]);
			if (errp[i] >= 0)
				close(errp[i]);
		}
		return err_sys(err, e, "output pipes");
	}
	pid = fork();
	if (pid < 0) {
		int e = errno;

		close(out[0]), close(out[1]), close(errp[0]), close(errp[1]);
		close(rep[0]), close(rep[1]);
		return err_sys(err, e, "fork the output copier");
	}
	if (pid == 0) {
		int fds[5] = {out[0], errp[0], 1, 2, rep[1]};

		/* Not dumpable: it holds the session's files. Out of the
		 * supervisor's process group: a terminal's signals are not
		 * for it (the caller's session is gone anyway, detach.c). */
		prctl(PR_SET_DUMPABLE, 0);
		signal(SIGPIPE, SIG_IGN);
		/* Onto 3..7, above anything they could clobber. */
		for (int i = 0; i < 5; i++)
			fds[i] = fcntl(fds[i], F_DUPFD, 8);
		for (int i = 0; i < 5; i++)
			if (fds[i] < 0 || dup2(fds[i], 3 + i) < 0)
				_exit(1);
		close_range(8, ~0U, 0);
		copier(r->spec->policy->output_max);
	}
	close(out[0]);
	close(errp[0]);
	close(rep[1]);
	r->live.output.pid = pid;
	r->live.output.pidfd = pidfd_open(pid, 0);
	r->live.output.wr[0] = out[1];
	r->live.output.wr[1] = errp[1];
	r->live.output.report = rep[0];
	return 0;
}

int output_swap(struct run *r, int save[2])
{
	for (int i = 0; i < 2; i++) {
		save[i] = fcntl(1 + i, F_DUPFD_CLOEXEC, 3);
		if (save[i] < 0 || dup2(r->live.output.wr[i], 1 + i) < 0)
			return -errno;
	}
	return 0;
}

void output_unswap(struct run *r, int save[2])
{
	for (int i = 0; i < 2; i++) {
		if (save[i] >= 0) {
			dup2(save[i], 1 + i);
			close(save[i]);
			save[i] = -1;
		}
		/* The sandbox has its copies now; ours would keep the copier
		 * from ever seeing EOF. */
		if (r->live.output.wr[i] >= 0)
			close(r->live.output.wr[i]);
		r->live.output.wr[i] = -1;
	}
}

void output_finish(struct run *r)
{
	struct output *o = &r->live.output;
	struct pollfd pfd = {.fd = o->report, .events = POLLIN};

	if (o->pid <= 0)
		return;
	for (int i = 0; i < 2; i++)
		if (o->wr[i] >= 0)
			close(o->wr[i]), o->wr[i] = -1;
	if (poll(&pfd, 1, OUTPUT_DRAIN_MS) == 1 &&
	    read_full(o->report, &o->rep, sizeof(o->rep)) == (ssize_t)sizeof(o->rep))
		o->reported = true;
	else if (o->pidfd >= 0)
		pidfd_send_signal(o->pidfd, SIGKILL, NULL, 0);
	waitpid(o->pid, NULL, 0);
	o->pid = 0;
	close(o->report);
	o->report = -1;
	if (o->pidfd >= 0)
		close(o->pidfd);
	o->pidfd = -1;
}
