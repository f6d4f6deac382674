/* The workload's fds 0-2, relayed by the supervisor (docs/usage.md, "The
 * terminal and stdio"). The sandbox never holds the caller's fds 0-2:
 *
 * - terminal mode (stdin is a terminal, or -t): the child opens a pty pair
 *   on the sandbox's own devpts instance and sends the master back
 *   (sandbox/enter.c); the slave is the workload's controlling terminal
 *   (paddock-init --tty). Here the caller's terminal goes raw, bytes go
 *   both ways, window sizes follow (TIOCSWINSZ on the master, so the
 *   sandbox's foreground group gets SIGWINCH from its own terminal), and
 *   the caller's termios come back on every way out (stdio_finish(),
 *   stdio_suspend()).
 * - pipe mode (otherwise): three pipes, spliced where the kernel can
 *   (splice(2) needs a pipe on one side, which ours always is; it refuses
 *   O_APPEND files and, on 6.1, ttys: then read/write). chmod, chown,
 *   utimes and setxattr through /dev/stdin reach the pipe, not a host
 *   inode, which Landlock could not have stopped (it has no right for
 *   them). EOF, EPIPE and SIGPIPE carry through: the caller's EOF closes
 *   the workload's stdin; a reader of our stdout that goes away closes the
 *   workload's stdout pipe, whose next write gets SIGPIPE as it would have
 *   directly (yes | head).
 *
 * --weaken direct-stdio (and no-new-session, which shares the caller's
 * session anyway) pass the caller's fds through as before. */
#include "run.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <termios.h>
#include <unistd.h>

#include "../../include/log.h"

#define SPLICE_MAX  (1u << 20)
#define PIPE_SIZE   (1 << 20)
#define PUMP_ROUNDS 16 /* per readiness: the other fds get their turn */

enum stdio_mode stdio_choose(const struct options *o)
{
	if (o->weaken & (WEAKEN_DIRECT_STDIO | WEAKEN_NO_NEW_SESSION))
		return STDIO_DIRECT;
	/* Detached: the supervisor's 0-2 by then are /dev/null and the capped
	 * output's pipes (output.c), nothing of the caller's. */
	if (o->detach)
		return STDIO_INHERIT;
	if (o->tty == OPT_TTY_NO)
		return STDIO_PIPES;
	if (o->tty == OPT_TTY_YES || isatty(0))
		return STDIO_TTY;
	return STDIO_PIPES;
}

static void dir_init(struct stdio_dir *d, int src, int dst, bool src_ours, bool dst_ours)
{
	*d = (struct stdio_dir){.src = src,
				.dst = dst,
				.src_ours = src_ours,
				.dst_ours = dst_ours,
				.splice = true,
				.open = true,
				.caller_fd = -1};
}

/* The caller's end of a direction, when it is a pipe smaller than ours:
 * grown to PIPE_SIZE while the relay runs. The relay adds a hop, and
 * through a 64 KiB window every 64 KiB costs the supervisor a splice, a
 * full destination and a wake-up where the workload writing the pipe
 * itself costs one write (bench/profile.md, "Stdout relay throughput").
 * A pipe's size is the pipe's, not an fd's flag: nothing the caller reads
 * or writes changes, only how much the kernel buffers. Best effort (the
 * limits are fs.pipe-max-size and fs.pipe-user-pages-soft), and given
 * back in dir_close() when what the pipe still holds fits the old size
 * (F_SETPIPE_SZ refuses to shrink below its content: then it stays). */
static void grow_caller_pipe(struct stdio_dir *d, int fd)
{
	struct stat st;
	int was;

	if (fstat(fd, &st) < 0 || !S_ISFIFO(st.st_mode))
		return;
	was = fcntl(fd, F_GETPIPE_SZ);
	if (was <= 0 || was >= PIPE_SIZE || fcntl(fd, F_SETPIPE_SZ, PIPE_SIZE) < 0)
		return;
	d->caller_fd = fd;
	d->caller_was = was;
}

static int close_ours(int fd, bool ours)
{
	if (fd >= 0 && ours)
		close(fd);
	return -1;
}

static void dir_close(struct stdio_dir *d)
{
	if (d->caller_fd >= 0 && d->caller_was > 0) /* never a zeroed dir's fd 0 */
		(void)fcntl(d->caller_fd, F_SETPIPE_SZ, d->caller_was);
	d->caller_fd = -1;
	d->caller_was = 0;
	d->src = close_ours(d->src, d->src_ours);
	d->dst = close_ours(d->dst, d->dst_ours);
	d->open = false;
	d->len = d->off = 0;
	free(d->buf);
	d->buf = NULL;
}

/* The caller's terminal, if any of 0-2 is one: for the window size and
 * the termios. */
static int caller_tty(void)
{
	for (int i = 0; i < 3; i++)
		if (isatty(i))
			return i;
	return -1;
}

int stdio_relay_pipes(struct stdio_relay *s, int child[3], struct err *err)
{
	int p[3][2];

	for (int i = 0; i < 3; i++) {
		if (pipe2(p[i], O_CLOEXEC) < 0) {
			int e = errno;

			while (i-- > 0) {
				close(p[i][0]);
				close(p[i][1]);
			}
			return err_sys(err, e, "stdio pipes");
		}
	}
	/* 0: our stdin -> p[0][1]; the child reads p[0][0].
	 * 1, 2: the child writes p[i][1]; p[i][0] -> our fd i. */
	child[0] = p[0][0];
	child[1] = p[1][1];
	child[2] = p[2][1];
	s->mode = STDIO_PIPES;
	dir_init(&s->d[0], 0, p[0][1], false, true);
	dir_init(&s->d[1], p[1][0], 1, true, false);
	dir_init(&s->d[2], p[2][0], 2, true, false);
	s->n = 3;
	for (int i = 0; i < 3; i++) {
		int ours = i == 0 ? p[0][1] : p[i][0];

		/* Ours only: the caller's fds share their open file
		 * description with the caller, whose flags we leave alone. */
		fcntl(ours, F_SETFL, fcntl(ours, F_GETFL) | O_NONBLOCK);
		/* Bigger pipes, fewer wake-ups for a stream (best effort: the
		 * limit is fs.pipe-max-size). */
		(void)fcntl(ours, F_SETPIPE_SZ, PIPE_SIZE);
		grow_caller_pipe(&s->d[i], i);
	}
	return 0;
}

int stdio_prepare(struct run *r, struct err *err)
{
	struct stdio_relay *s = &r->live.stdio;

	s->mode = r->spec->stdio;
	s->master = s->tty_fd = -1;
	for (int i = 0; i < 3; i++)
		r->live.box.stdio[i] = -1;
	if (s->mode != STDIO_PIPES)
		return 0;
	return stdio_relay_pipes(s, r->live.box.stdio, err);
}

void stdio_started(struct run *r)
{
	for (int i = 0; i < 3; i++) {
		if (r->live.box.stdio[i] >= 0)
			close(r->live.box.stdio[i]);
		r->live.box.stdio[i] = -1;
	}
}

/* Raw mode on the caller's terminal, only while we are its foreground
 * process group: a background paddock neither steals the caller's input
 * nor changes its terminal (tcsetattr from the background would stop us
 * with SIGTTOU). */
static void enter_raw(struct stdio_relay *s)
{
	struct termios t;

	s->paused = true;
	if (s->tty_fd < 0)
		return;
	if (tcgetpgrp(s->tty_fd) != getpgrp())
		return;
	if (!s->saved_ok) {
		if (tcgetattr(s->tty_fd, &s->saved) < 0)
			return;
		s->saved_ok = true;
	}
	t = s->saved;
	cfmakeraw(&t);
	if (tcsetattr(s->tty_fd, TCSADRAIN, &t) == 0)
		s->raw = true;
	s->paused = false;
}

static void leave_raw(struct stdio_relay *s)
{
	if (!s->raw)
		return;
	/* TCSADRAIN: what the workload wrote last is shown in its mode. */
	while (tcsetattr(s->tty_fd, TCSADRAIN, &s->saved) < 0 && errno == EINTR)
		;
	s->raw = false;
}

void stdio_relay_winch(struct stdio_relay *s)
{
	struct winsize ws;

	if (s->master < 0 || s->tty_fd < 0 || ioctl(s->tty_fd, TIOCGWINSZ, &ws) < 0)
		return;
	(void)ioctl(s->master, TIOCSWINSZ, &ws);
}

void stdio_winch(struct run *r)
{
	stdio_relay_winch(&r->live.stdio);
}

void stdio_relay_pty(struct stdio_relay *s, int master, bool termios)
{
	s->mode = STDIO_TTY;
	s->master = master;
	fcntl(master, F_SETFL, fcntl(master, F_GETFL) | O_NONBLOCK);
	s->tty_fd = caller_tty();
	/* Our stdin -> the master; the master -> our stdout (the pty
	 * merges the workload's stdout and stderr, as a terminal does). */
	dir_init(&s->d[0], 0, master, false, false);
	dir_init(&s->d[1], master, 1, false, false);
	s->n = 2;
	stdio_relay_winch(s);
	if (termios)
		enter_raw(s);
}

void stdio_master(struct run *r, int fd)
{
	struct stdio_relay *s = &r->live.stdio;

	if (s->mode != STDIO_TTY || s->master >= 0) {
		close(fd);
		return;
	}
	stdio_relay_pty(s, fd, true);
}

/* The end of a direction's source. */
static void src_eof(struct stdio_relay *s, struct stdio_dir *d)
{
	if (d == &s->d[0] && s->mode == STDIO_TTY && s->master >= 0) {
		/* -t with a stdin that is not a terminal: its end is ^D to
		 * the pty's line discipline, as typed. */
		(void)!write(s->master, "\x04", 1);
		d->open = false;
		return;
	}
	dir_close(d);
}

/* The destination went away (EPIPE, EIO): its source closes too, so the
 * workload's next write gets SIGPIPE as it would have directly. */
static void dst_gone(struct stdio_relay *s, struct stdio_dir *d)
{
	(void)s;
	dir_close(d);
}

/* Move what is ready from d->src to d->dst; afterwards d->want says what
 * to wait for (POLLIN on src, POLLOUT on dst). */
static void pump(struct stdio_relay *s, struct stdio_dir *d)
{
	for (int round = 0; round < PUMP_ROUNDS && d->open; round++) {
		ssize_t n;

		if (d->splice && d->len == 0) {
			n = splice(d->src, NULL, d->dst, NULL, SPLICE_MAX,
				   SPLICE_F_NONBLOCK | SPLICE_F_MOVE);
			if (n > 0) {
				d->bytes += (uint64_t)n;
				continue;
			}
			if (n == 0) {
				src_eof(s, d);
				return;
			}
			if (errno == EINTR)
				continue;
			if (errno == EAGAIN) {
				struct pollfd p = {.fd = d->dst, .events = POLLOUT};

				/* Empty source or full destination: ask. */
				d->want_out = poll(&p, 1, 0) == 0;
				return;
			}
			if (errno == EPIPE) {
				dst_gone(s, d);
				return;
			}
			/* EINVAL: this pair cannot splice (a tty, an O_APPEND
			 * file, /dev/null); copy instead, for good. */
			d->splice = false;
		}
		/* Only now: the buffer of a spliced stream is never touched
		 * (the supervisor's RSS is a bench row). */
		if (!d->buf && !(d->buf = malloc(STDIO_BUF))) {
			dir_close(d);
			return;
		}
		if (d->len == 0) {
			/* A source not ours may block: one read per wake-up. */
			if (!d->src_ours && round > 0) {
				d->want_out = false;
				return;
			}
			n = read(d->src, d->buf, STDIO_BUF);
			if (n == 0 || (n < 0 && errno == EIO)) {
				src_eof(s, d); /* EIO: the pty's last slave closed */
				return;
			}
			if (n < 0) {
				if (errno == EINTR)
					continue;
				if (errno == EAGAIN) {
					d->want_out = false;
					return;
				}
				src_eof(s, d);
				return;
			}
			d->len = (size_t)n;
			d->off = 0;
		}
		n = write(d->dst, d->buf + d->off, d->len - d->off);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && errno == EAGAIN) {
			d->want_out = true;
			return;
		}
		if (n <= 0) {
			dst_gone(s, d);
			return;
		}
		d->bytes += (uint64_t)n;
		d->off += (size_t)n;
		if (d->off == d->len)
			d->len = d->off = 0;
	}
	d->want_out = false;
}

size_t stdio_relay_pollfds(const struct stdio_relay *s, struct pollfd *pfd, size_t max)
{
	size_t n = 0;

	for (size_t i = 0; i < s->n && n < max; i++) {
		const struct stdio_dir *d = &s->d[i];
		bool in_paused = i == 0 && s->paused;

		if (!d->open || (in_paused && !d->want_out)) {
			pfd[n++] = (struct pollfd){.fd = -1};
			continue;
		}
		pfd[n++] = d->want_out ? (struct pollfd){.fd = d->dst, .events = POLLOUT}
				       : (struct pollfd){.fd = d->src, .events = POLLIN};
	}
	/* The workload's stdin pipe, for its reader's end (POLLERR) while
	 * we wait on the caller. */
	if (s->mode == STDIO_PIPES && n < max)
		pfd[n++] = (struct pollfd){
		    .fd = s->d[0].open && !s->d[0].want_out ? s->d[0].dst : -1, .events = 0};
	return n;
}

void stdio_relay_handle(struct stdio_relay *s, const struct pollfd *pfd, size_t n)
{
	for (size_t i = 0; i < s->n && i < n; i++)
		if (pfd[i].fd >= 0 && pfd[i].revents)
			pump(s, &s->d[i]);
	/* Nobody reads the workload's stdin any more: stop reading ours. */
	if (s->mode == STDIO_PIPES && n > s->n && pfd[s->n].fd >= 0 &&
	    (pfd[s->n].revents & POLLERR))
		dir_close(&s->d[0]);
}

size_t stdio_pollfds(const struct run *r, struct pollfd *pfd, size_t max)
{
	return stdio_relay_pollfds(&r->live.stdio, pfd, max);
}

void stdio_handle(struct run *r, const struct pollfd *pfd, size_t n)
{
	stdio_relay_handle(&r->live.stdio, pfd, n);
}

bool stdio_relay_output_open(const struct stdio_relay *s)
{
	for (size_t i = 1; i < s->n; i++)
		if (s->d[i].open)
			return true;
	return false;
}

void stdio_suspend(struct run *r)
{
	struct stdio_relay *s = &r->live.stdio;

	/* The caller's terminal as it was, then stop: the caller's shell
	 * gets its prompt in its own mode. SIGSTOP cannot be caught. */
	leave_raw(s);
	s->paused = true;
	raise(SIGSTOP);
	stdio_resume(r);
}

void stdio_resume(struct run *r)
{
	struct stdio_relay *s = &r->live.stdio;

	if (s->mode != STDIO_TTY || s->master < 0) {
		s->paused = false;
		return;
	}
	/* In the foreground again (fg): raw, and reading. In the background
	 * (bg): neither, until the next SIGCONT. */
	enter_raw(s);
	if (s->tty_fd < 0)
		s->paused = false;
	stdio_winch(r);
}

/* While paused in the background: `fg` need not send SIGCONT to a job
 * that runs (bash does not), so whether we are the foreground again is
 * looked at on a timer. */
#define BACKGROUND_CHECK_MS 100

int stdio_poll_timeout(const struct run *r)
{
	const struct stdio_relay *s = &r->live.stdio;

	return s->mode == STDIO_TTY && s->master >= 0 && s->paused && s->tty_fd >= 0
		   ? BACKGROUND_CHECK_MS
		   : -1;
}

void stdio_tick(struct run *r)
{
	if (stdio_poll_timeout(r) >= 0)
		stdio_resume(r);
}

void stdio_finish(struct run *r)
{
	stdio_started(r);
	stdio_relay_finish(&r->live.stdio);
}

void stdio_relay_finish(struct stdio_relay *s)
{
	/* What the workload wrote before its end is the caller's: drain the
	 * output pipes (or the master) until EOF or until nothing more is
	 * there. Once PID 1 is reaped nothing of the sandbox holds their
	 * write ends (pid_namespaces(7)); a leftover of a --weaken no-pidns
	 * run that still does gets EAGAIN here and nothing more. */
	for (size_t i = 1; i < s->n; i++) {
		struct stdio_dir *d = &s->d[i];

		d->want_out = false;
		while (d->open && d->src_ours) {
			uint64_t before = d->bytes;

			pump(s, d);
			if (d->bytes == before && d->open && !d->want_out && d->len == 0)
				break;
			if (d->open && d->want_out) {
				struct pollfd p = {.fd = d->dst, .events = POLLOUT};

				(void)poll(&p, 1, -1);
			}
		}
		if (s->mode == STDIO_TTY && d->open) {
			/* The master is not ours to close twice. */
			while (d->open) {
				uint64_t before = d->bytes;

				pump(s, d);
				if (d->bytes == before)
					break;
			}
		}
		dir_close(d);
	}
	dir_close(&s->d[0]);
	leave_raw(s);
	if (s->master >= 0)
		close(s->master);
	s->master = -1;
	s->n = 0;
}
