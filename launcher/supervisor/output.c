/* A detached workload's output, capped (docs/sessions.md, "Output"): the
 * sandbox writes into two pipes, and the supervisor appends what comes out
 * of them to ID/stdout and ID/stderr, up to the policy's limits.output
 * bytes per stream, from its supervise loop. At the limit it writes one
 * marker line and drops the rest (the start of the output is kept: a
 * stream is truncated, never rotated), still reading so the workload never
 * blocks, and counts what it dropped. Without it one session's output could
 * fill the registry's filesystem and cost its neighbours their records and
 * statuses.
 *
 * The supervisor's own messages go to the files directly (they are few);
 * only the sandbox gets the pipes, as its fds 1 and 2 at the clone. */
#include "run.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "../../include/cleanup.h"
#include "../../include/io.h"

/* How long finish() drains once the sandbox is over: only processes that
 * outlived it (no pid namespace) can hold the pipes open that long; the
 * counts are then unknown. */
#define OUTPUT_DRAIN_MS 2000

static const char *const stream_names[2] = {"stdout", "stderr"};

int output_start(struct run *r, struct err *err)
{
	struct output *o = &r->live.output;

	for (int i = 0; i < 2; i++) {
		int p[2];

		if (pipe2(p, O_CLOEXEC) < 0)
			return err_sys(err, errno, "output pipe");
		o->rd[i] = p[0];
		o->wr[i] = p[1];
		/* Read as far as there is data, never wait in the loop. */
		if (fcntl(p[0], F_SETFL, O_NONBLOCK) < 0)
			return err_sys(err, errno, "output pipe");
		o->file[i] = fcntl(1 + i, F_DUPFD_CLOEXEC, 3);
		if (o->file[i] < 0)
			return err_sys(err, errno, "session %s", stream_names[i]);
	}
	o->max = r->spec->policy->output_max;
	o->active = true;
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
		/* The sandbox has its copies now; ours would keep the pipe
		 * from ever reaching EOF. */
		if (r->live.output.wr[i] >= 0)
			close(r->live.output.wr[i]);
		r->live.output.wr[i] = -1;
	}
}

size_t output_pollfds(const struct run *r, struct pollfd *pfd)
{
	const struct output *o = &r->live.output;

	if (!o->active)
		return 0;
	for (int i = 0; i < 2; i++)
		pfd[i] = (struct pollfd){.fd = o->rd[i], .events = POLLIN};
	return 2;
}

/* One read of stream i: kept up to the limit, then the marker once, then
 * dropped. EOF closes the stream. */
static void pump(struct output *o, int i)
{
	struct output_report *rep = &o->rep;
	char buf[65536];
	ssize_t n = read(o->rd[i], buf, sizeof(buf));
	size_t keep;

	if (n < 0 && (errno == EAGAIN || errno == EINTR))
		return;
	if (n <= 0) {
		close(o->rd[i]);
		o->rd[i] = -1;
		return;
	}
	keep = rep->bytes[i] >= o->max		      ? 0
	       : (uint64_t)n > o->max - rep->bytes[i] ? (size_t)(o->max - rep->bytes[i])
						      : (size_t)n;
	/* A failed write (ENOSPC) is the workload's loss, not the run's. */
	if (keep && write_full(o->file[i], buf, keep) >= 0)
		rep->bytes[i] += keep;
	else
		rep->dropped[i] += keep;
	rep->dropped[i] += (uint64_t)n - keep;
	if (rep->bytes[i] >= o->max && (uint64_t)n > keep && !rep->marked[i]) {
		char line[160];
		int len = snprintf(line, sizeof(line),
				   "\n[paddock: %s reached limits.output (%llu bytes); the rest is "
				   "dropped]\n",
				   stream_names[i], (unsigned long long)o->max);

		(void)!write_full(o->file[i], line, (size_t)len);
		rep->marked[i] = true;
	}
}

void output_serve(struct run *r, const struct pollfd *pfd)
{
	struct output *o = &r->live.output;

	for (int i = 0; o->active && i < 2; i++)
		if (o->rd[i] >= 0 && pfd[i].revents)
			pump(o, i);
}

void output_finish(struct run *r)
{
	struct output *o = &r->live.output;
	struct timespec t0, t;

	if (!o->active)
		return;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (;;) {
		struct pollfd pfd[2];
		long left;

		clock_gettime(CLOCK_MONOTONIC, &t);
		left = OUTPUT_DRAIN_MS -
		       ((t.tv_sec - t0.tv_sec) * 1000 + (t.tv_nsec - t0.tv_nsec) / 1000000);
		if ((o->rd[0] < 0 && o->rd[1] < 0) || left <= 0)
			break;
		output_pollfds(r, pfd);
		if (poll(pfd, 2, (int)left) > 0)
			output_serve(r, pfd);
	}
	o->reported = o->rd[0] < 0 && o->rd[1] < 0;
	for (int i = 0; i < 2; i++) {
		if (o->rd[i] >= 0)
			close(o->rd[i]);
		if (o->file[i] >= 0)
			close(o->file[i]);
		o->rd[i] = o->file[i] = -1;
	}
	o->active = false;
}
