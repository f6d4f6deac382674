/* Integration: the workload's fds 0-2 (supervisor/stdio.c). Under a real
 * pty (a small harness on posix_openpt below, the caller's terminal as
 * the tests see it): terminal mode, job control, window sizes, the
 * caller's termios on every way out. Without one: the relay's pipes, their
 * EOF/EPIPE semantics, and that nothing of the host is reachable through
 * /dev/stdin. Services and exec leftovers never read the caller's
 * terminal. And init ends an expired sandbox when the supervisor is
 * stopped. */
#include "harness.h"

#include <sys/ioctl.h>
#include <sys/xattr.h>
#include <termios.h>

TestSuite(stdio, .init = h_init, .fini = h_fini, .timeout = 120);

/* ------------------------------------------------------ the pty harness */

struct tty_run {
	pid_t pid;
	int master;
	char slave[64];
	struct termios before;
	char *out;
	size_t olen, seen;
	int status;
	bool exited;
};

/* The caller's terminal's termios, read from the slave side (a pty
 * master has termios of its own on Linux). */
static struct termios slave_termios(const struct tty_run *t)
{
	struct termios tio;
	int s = open(t->slave, O_RDWR | O_NOCTTY | O_CLOEXEC);

	cr_assert_geq(s, 0, "open %s: %s", t->slave, strerror(errno));
	cr_assert_eq(tcgetattr(s, &tio), 0);
	close(s);
	return tio;
}

static bool termios_same(const struct termios *a, const struct termios *b)
{
	return a->c_iflag == b->c_iflag && a->c_oflag == b->c_oflag && a->c_cflag == b->c_cflag &&
	       a->c_lflag == b->c_lflag && memcmp(a->c_cc, b->c_cc, sizeof(a->c_cc)) == 0;
}

/* argv[0] an absolute path; the new pty is its controlling terminal and
 * its 0-2, 24x80, the default cooked mode. With stdin_file, stdin is
 * that file instead (1 and 2 stay the pty). */
static void tty_start(struct tty_run *t, const char *cwd, const char *const args[],
		      const char *stdin_file)
{
	char **argv = h_keep(calloc(64, sizeof(char *)));
	struct winsize ws = {.ws_row = 24, .ws_col = 80};
	size_t n = 0;

	memset(t, 0, sizeof(*t));
	for (; *args && n < 62; args++)
		argv[n++] = (char *)*args;
	t->master = posix_openpt(O_RDWR | O_NOCTTY | O_CLOEXEC);
	cr_assert_geq(t->master, 0, "posix_openpt: %s", strerror(errno));
	cr_assert_eq(grantpt(t->master), 0);
	cr_assert_eq(unlockpt(t->master), 0);
	snprintf(t->slave, sizeof(t->slave), "%s", ptsname(t->master));
	cr_assert_eq(ioctl(t->master, TIOCSWINSZ, &ws), 0);
	t->before = slave_termios(t);
	fflush(NULL);
	t->pid = fork();
	cr_assert_geq(t->pid, 0);
	if (t->pid == 0) {
		sigset_t none;
		int s;

		sigemptyset(&none);
		sigprocmask(SIG_SETMASK, &none, NULL);
		signal(SIGPIPE, SIG_DFL);
		if (setsid() < 0)
			_exit(120);
		s = open(t->slave, O_RDWR);
		if (s < 0 || ioctl(s, TIOCSCTTY, 0) < 0)
			_exit(121);
		if (dup2(s, 0) < 0 || dup2(s, 1) < 0 || dup2(s, 2) < 0)
			_exit(122);
		if (s > 2)
			close(s);
		if (stdin_file) {
			int f = open(stdin_file, O_RDONLY);

			if (f < 0 || dup2(f, 0) < 0)
				_exit(125);
		}
		if (chdir(cwd) < 0)
			_exit(123);
		execve(argv[0], argv, environ);
		_exit(124);
	}
	h_track_pid(t->pid);
	/* A read after poll() must never block the test. */
	fcntl(t->master, F_SETFL, O_NONBLOCK);
}

/* Read what the master has, up to ms. */
static void tty_read(struct tty_run *t, int ms)
{
	struct pollfd p = {.fd = t->master, .events = POLLIN};
	char buf[4096];
	ssize_t got;

	if (poll(&p, 1, ms) <= 0)
		return;
	got = read(t->master, buf, sizeof(buf));
	if (got <= 0)
		return;
	t->out = realloc(t->out, t->olen + (size_t)got + 1);
	cr_assert_not_null(t->out);
	memcpy(t->out + t->olen, buf, (size_t)got);
	t->olen += (size_t)got;
	t->out[t->olen] = '\0';
}

/* Until needle appears in what was not seen yet (then seen moves past it),
 * up to secs. */
static bool tty_expect(struct tty_run *t, const char *needle, double secs)
{
	double end = h_now() + secs;

	for (;;) {
		const char *at = t->out ? strstr(t->out + t->seen, needle) : NULL;

		if (at) {
			t->seen = (size_t)(at - t->out) + strlen(needle);
			return true;
		}
		if (h_now() > end)
			return false;
		tty_read(t, 50);
	}
}

static void tty_send(struct tty_run *t, const char *s)
{
	cr_assert_eq(write(t->master, s, strlen(s)), (ssize_t)strlen(s));
}

#define TTY_SHOW(t) "output so far:\n%s", (t)->out ? (t)->out : ""

/* Wait for the exit (then the caller's terminal is the test's again). */
static int tty_wait(struct tty_run *t, double secs)
{
	double end = h_now() + secs;
	int ws = 0;

	while (!t->exited) {
		if (waitpid(t->pid, &ws, WNOHANG) == t->pid) {
			t->exited = true;
			break;
		}
		if (h_now() > end) {
			kill(t->pid, SIGKILL);
			waitpid(t->pid, &ws, 0);
			t->exited = true;
			cr_assert_fail("paddock did not end; " TTY_SHOW(t));
		}
		tty_read(t, 50);
	}
	h_untrack_pid(t->pid);
	tty_read(t, 50);
	t->status = WIFEXITED(ws) ? WEXITSTATUS(ws) : 128 + WTERMSIG(ws);
	if (t->out)
		h_keep(t->out);
	return t->status;
}

static void tty_close(struct tty_run *t)
{
	close(t->master);
}

/* paddock's argv: its path, then args (NULL-terminated). */
#define PADDOCK(...) ((const char *const[]){h_paddock(), __VA_ARGS__, NULL})

/* ---------------------------------------------------------- terminal mode */

/* An interactive bash: a pty of its own, job control, ^C to the
 * foreground group, ^Z and fg, the window size, exit 7, and the caller's
 * termios as they were. */
Test(stdio, tty_bash_job_control_and_exit_status)
{
	struct h_world w = h_world();
	struct winsize ws = {.ws_row = 40, .ws_col = 120};
	struct termios after;
	struct tty_run t;

	tty_start(&t, w.ws, PADDOCK("run", "--", "bash", "--norc", "--noprofile", "-i"), NULL);
	tty_send(&t, "tty; set -o | grep '^monitor'; echo M1-$((1+1))\n");
	cr_assert(tty_expect(&t, "M1-2", 20), TTY_SHOW(&t));
	cr_assert(strstr(t.out, "/dev/pts/"), TTY_SHOW(&t));
	cr_assert(strstr(t.out, "monitor") && strstr(strstr(t.out, "monitor"), "on"), TTY_SHOW(&t));
	cr_assert(!strstr(t.out, "no job control"), TTY_SHOW(&t));
	/* While it runs, the caller's terminal is raw (no echo). */
	after = slave_termios(&t);
	cr_assert(!(after.c_lflag & ECHO) && !(after.c_lflag & ICANON), "not raw");
	/* ^C ends the whole foreground job; the shell survives. */
	tty_send(&t, "sh -c 'sleep 100; echo n''o'\n");
	h_sleep_ms(500);
	tty_send(&t, "\x03");
	tty_send(&t, "echo M2-$((2+2))\n");
	cr_assert(tty_expect(&t, "M2-4", 10), TTY_SHOW(&t));
	cr_assert(!strstr(t.out, "\nno\r"), TTY_SHOW(&t));
	/* ^Z stops the job, fg resumes it. */
	tty_send(&t, "sleep 1; echo slept-$((3+3))\n");
	h_sleep_ms(300);
	tty_send(&t, "\x1a");
	cr_assert(tty_expect(&t, "Stopped", 10), TTY_SHOW(&t));
	tty_send(&t, "fg\n");
	cr_assert(tty_expect(&t, "slept-6", 10), TTY_SHOW(&t));
	/* ^\ quits the foreground job (SIGQUIT), the shell survives. */
	tty_send(&t, "sleep 100\n");
	h_sleep_ms(300);
	tty_send(&t, "\x1c");
	tty_send(&t, "echo Q-$((7+7))\n");
	cr_assert(tty_expect(&t, "Q-14", 10), TTY_SHOW(&t));
	cr_assert(strstr(t.out, "Quit"), TTY_SHOW(&t));
	/* A resize of the caller's terminal reaches the sandbox's pty. */
	cr_assert_eq(ioctl(t.master, TIOCSWINSZ, &ws), 0);
	h_sleep_ms(200);
	tty_send(&t, "stty size\n");
	cr_assert(tty_expect(&t, "40 120", 10), TTY_SHOW(&t));
	tty_send(&t, "exit 7\n");
	cr_assert_eq(tty_wait(&t, 20), 7, TTY_SHOW(&t));
	after = slave_termios(&t);
	cr_assert(termios_same(&t.before, &after), "the caller's termios changed");
	tty_close(&t);
}

/* The caller's termios come back however the workload ends. */
Test(stdio, tty_termios_restored_after_sigkill_and_expiry)
{
	struct h_world w = h_world();
	struct termios after;
	struct tty_run t;

	tty_start(&t, w.ws, PADDOCK("run", "--", "sh", "-c", "echo up; kill -KILL $$"), NULL);
	cr_assert_eq(tty_wait(&t, 20), 137, TTY_SHOW(&t));
	after = slave_termios(&t);
	cr_assert(termios_same(&t.before, &after), "termios changed after SIGKILL");
	tty_close(&t);

	tty_start(&t, w.ws, PADDOCK("run", "--ttl", "1s", "--", "sh", "-c", "echo up; sleep 30"),
		  NULL);
	cr_assert(tty_expect(&t, "up", 20), TTY_SHOW(&t));
	after = slave_termios(&t);
	cr_assert(!(after.c_lflag & ECHO), "not raw while it ran");
	cr_assert_neq(tty_wait(&t, 30), 0, TTY_SHOW(&t));
	after = slave_termios(&t);
	cr_assert(termios_same(&t.before, &after), "termios changed after expiry");
	tty_close(&t);

	/* A signal to paddock (forwarded: the workload ends on it). */
	tty_start(&t, w.ws, PADDOCK("run", "--", "sh", "-c", "echo up; exec sleep 30"), NULL);
	cr_assert(tty_expect(&t, "up", 20), TTY_SHOW(&t));
	h_sleep_ms(100);
	cr_assert_eq(kill(t.pid, SIGTERM), 0);
	cr_assert_eq(tty_wait(&t, 20), 143, TTY_SHOW(&t));
	after = slave_termios(&t);
	cr_assert(termios_same(&t.before, &after), "termios changed after SIGTERM");
	tty_close(&t);

	/* A launcher error after the start (the command cannot run). */
	tty_start(&t, w.ws, PADDOCK("run", "--", "/paddock-no-such-command"), NULL);
	cr_assert_eq(tty_wait(&t, 20), 127, TTY_SHOW(&t));
	after = slave_termios(&t);
	cr_assert(termios_same(&t.before, &after), "termios changed after exec failure");
	tty_close(&t);
}

/* The workload's terminal is a pty of the sandbox's own devpts instance:
 * not the caller's pty, not the host's devpts; /dev/pts lists only its
 * own. Changing its mode changes nothing of the caller's terminal. The
 * twin (--weaken direct-stdio) gets the caller's pty and changes it. */
static const char own_pts_script[] =
    "stat -L -c 'dev=%d rdev=%t:%T' /dev/stdin; ls /dev/pts | tr '\\n' ' '; echo; "
    "chmod 0666 /dev/stdin; echo chmod=$?; echo END";

Test(stdio, tty_is_the_sandboxes_own_devpts)
{
	struct h_world w = h_world();
	struct stat host, now;
	struct tty_run t;

	tty_start(&t, w.ws, PADDOCK("run", "--", "sh", "-c", own_pts_script), NULL);
	cr_assert_eq(stat(t.slave, &host), 0);
	cr_assert(tty_expect(&t, "END", 20), TTY_SHOW(&t));
	cr_assert_eq(tty_wait(&t, 20), 0, TTY_SHOW(&t));
	cr_assert(!strstr(t.out, h_fmt("dev=%lu ", (unsigned long)host.st_dev)),
		  "the host's devpts inside; " TTY_SHOW(&t));
	cr_assert(strstr(t.out, "chmod=0"), TTY_SHOW(&t));
	/* Its own instance holds its own pty and the ptmx node only. */
	cr_assert(strstr(t.out, "0 ptmx"), TTY_SHOW(&t));
	cr_assert_eq(stat(t.slave, &now), 0);
	cr_assert_eq(now.st_mode, host.st_mode, "the caller's pty mode changed");
	tty_close(&t);

	tty_start(&t, w.ws,
		  PADDOCK("run", "--weaken", "direct-stdio", "--", "sh", "-c", own_pts_script),
		  NULL);
	cr_assert(tty_expect(&t, "END", 20), TTY_SHOW(&t));
	cr_assert_eq(tty_wait(&t, 20), 0, TTY_SHOW(&t));
	cr_assert(strstr(t.out, "warning: --weaken direct-stdio"), TTY_SHOW(&t));
	cr_assert(strstr(t.out, h_fmt("dev=%lu ", (unsigned long)host.st_dev)), TTY_SHOW(&t));
	cr_assert_eq(stat(t.slave, &now), 0);
	cr_assert_eq(now.st_mode & 07777, 0666, "the twin did not reach the caller's pty");
	tty_close(&t);
}

/* SIGTSTP at the caller's terminal: the termios come back while paddock
 * is stopped; SIGCONT in the foreground makes it raw again and the relay
 * goes on. */
Test(stdio, tty_sigtstp_restores_and_cont_resumes)
{
	struct h_world w = h_world();
	struct termios mid;
	struct tty_run t;
	int ws;

	tty_start(&t, w.ws, PADDOCK("run", "--", "bash", "--norc", "--noprofile", "-i"), NULL);
	tty_send(&t, "echo A-$((5+5))\n");
	cr_assert(tty_expect(&t, "A-10", 20), TTY_SHOW(&t));
	cr_assert_eq(kill(t.pid, SIGTSTP), 0);
	cr_assert_eq(waitpid(t.pid, &ws, WUNTRACED), t.pid);
	cr_assert(WIFSTOPPED(ws), "paddock did not stop");
	mid = slave_termios(&t);
	cr_assert(termios_same(&t.before, &mid), "termios not restored while stopped");
	cr_assert_eq(kill(t.pid, SIGCONT), 0);
	h_sleep_ms(300);
	mid = slave_termios(&t);
	cr_assert(!(mid.c_lflag & ECHO), "not raw again after SIGCONT");
	tty_send(&t, "echo B-$((6+6)); exit 3\n");
	cr_assert(tty_expect(&t, "B-12", 20), TTY_SHOW(&t));
	cr_assert_eq(tty_wait(&t, 20), 3, TTY_SHOW(&t));
	mid = slave_termios(&t);
	cr_assert(termios_same(&t.before, &mid));
	tty_close(&t);
}

/* ^Z at the pty when the top process has no job control of its own
 * (sh -c, no -i): it and its group are stopped, nothing inside could
 * resume them, and ^C would wait behind the stop. paddock-init resumes
 * them at once, as Docker's PID 1 ignores ^Z; ^C then still works. */
Test(stdio, tty_ctrl_z_of_the_top_process_does_not_hang)
{
	struct h_world w = h_world();
	struct tty_run t;

	tty_start(
	    &t, w.ws,
	    PADDOCK("run", "--", "sh", "-c", "echo go; sleep 1; echo top-$((1+1)); exec sleep 100"),
	    NULL);
	cr_assert(tty_expect(&t, "go", 20), TTY_SHOW(&t));
	h_sleep_ms(300);
	tty_send(&t, "\x1a");
	cr_assert(tty_expect(&t, "top-2", 10), "stopped by ^Z for good\n" TTY_SHOW(&t));
	h_sleep_ms(200);
	tty_send(&t, "\x03");
	cr_assert_eq(tty_wait(&t, 20), 130, TTY_SHOW(&t));
	tty_close(&t);
}

/* ------------------------------------------------------------ pipe mode */

Test(stdio, pipes_keep_eof_epipe_and_status)
{
	struct h_world w = h_world();
	char *big = h_join(w.base, "big"), *out = h_join(w.base, "out");
	struct h_proc p;

	/* yes | head: the reader goes, yes gets SIGPIPE (141). */
	H_CMD(&p, w.ws, "/bin/sh", "-c", "\"$0\" run -- yes | head -n 3; echo st=${PIPESTATUS:-x}",
	      h_paddock());
	cr_assert_eq(p.status, 0, H_SHOW(&p));
	cr_assert(h_contains(p.out_text, "y\ny\ny\n"), H_SHOW(&p));
	H_CMD(&p, w.ws, "/bin/bash", "-c",
	      "\"$0\" run -- yes | head -n 1 >/dev/null; "
	      "echo st=${PIPESTATUS[0]}",
	      h_paddock());
	cr_assert(h_contains(p.out_text, "st=141"), H_SHOW(&p));
	/* cat big | paddock run -- wc -c */
	H_CMD(&p, w.ws, "/bin/sh", "-c", "head -c 20000000 /dev/zero > \"$1\"", "sh", big);
	H_CMD(&p, w.ws, "/bin/sh", "-c", "cat \"$1\" | \"$0\" run -- wc -c", h_paddock(), big);
	cr_assert_eq(p.status, 0, H_SHOW(&p));
	cr_assert_str_eq(p.out_text, "20000000\n", H_SHOW(&p));
	/* paddock run -- cat > file, stdin a file: the bytes arrive whole. */
	H_CMD(&p, w.ws, "/bin/sh", "-c", "\"$0\" run -- cat < \"$1\" > \"$2\"", h_paddock(), big,
	      out);
	cr_assert_eq(p.status, 0, H_SHOW(&p));
	cr_assert(h_snap_diff(out, &(struct h_snap){0}) != NULL);
	H_CMD(&p, w.ws, "/usr/bin/cmp", big, out);
	cr_assert_eq(p.status, 0, H_SHOW(&p));
	/* stdout and stderr stay apart; the status passes through. */
	H_PADDOCK(&p, w.ws, "run", "--", "sh", "-c", "echo o; echo e >&2; exit 9");
	cr_assert_eq(p.status, 9, H_SHOW(&p));
	cr_assert_str_eq(p.out_text, "o\n", H_SHOW(&p));
	cr_assert(h_contains(p.err_text, "e\n"), H_SHOW(&p));
	/* --explain says so. */
	H_PADDOCK(&p, w.ws, "run", "--explain", "--", "true");
	cr_assert(h_contains(p.out_text, "stdio: pipes, relayed\n"), H_SHOW(&p));
	H_PADDOCK(&p, w.ws, "run", "--explain", "--weaken", "direct-stdio", "--", "true");
	cr_assert(h_contains(p.out_text, "stdio: the caller's fds 0-2 (weakened)\n"), H_SHOW(&p));
	/* The weakening is recorded (and warned). */
	H_PADDOCK(&p, w.ws, "run", "--weaken", "direct-stdio", "--record", w.record, "--", "true");
	cr_assert_eq(p.status, 0, H_SHOW(&p));
	cr_assert(h_contains(p.err_text, "warning: --weaken direct-stdio"), H_SHOW(&p));
	cr_assert_str_eq(h_json(w.record, "d['weakenings']"), "[\"direct-stdio\"]");
	/* SIGWINCH without a pty is forwarded as the signal. */
	H_PADDOCK_START(&p, w.ws, "run", "--no-tty", "--", "sh", "-c",
			"trap 'echo winch; exit 0' WINCH; touch ready; i=0; "
			"while [ $i -lt 100 ]; do sleep 0.1; i=$((i+1)); done; exit 1");
	for (double end = h_now() + 20; !h_exists(h_join(w.ws, "ready")) && h_now() < end;)
		h_sleep_ms(20);
	h_sleep_ms(100);
	cr_assert_eq(kill(p.pid, SIGWINCH), 0);
	h_wait(&p, 20000);
	cr_assert_eq(p.status, 0, H_SHOW(&p));
	cr_assert(h_contains(p.out_text, "winch"), H_SHOW(&p));
	/* Output written just before the end is not lost. */
	H_PADDOCK(&p, w.ws, "run", "--", "sh", "-c", "head -c 3000000 /dev/zero | tr '\\0' x");
	cr_assert_eq(p.status, 0, H_SHOW(&p));
	cr_assert_eq(strlen(p.out_text), 3000000u);
}

/* What the workload can do to its fds 0-2 through /dev/stdin: chmod,
 * chown, utimes, setxattr. With a file, a pipe and a pty as stdin, none
 * of it reaches the host's inode; the twin (--weaken direct-stdio) does. */
static const char meta_script[] =
    "import os\n"
    "for name, f in (('chmod', lambda: os.chmod('/dev/stdin', 0o666)),\n"
    "                ('chown', lambda: os.chown('/dev/stdin', os.getuid(), os.getgid())),\n"
    "                ('utime', lambda: os.utime('/dev/stdin', (1, 1))),\n"
    "                ('xattr', lambda: os.setxattr('/dev/stdin', 'user.paddock', b'x'))):\n"
    "    try:\n"
    "        f(); print(name, 'ok')\n"
    "    except OSError as e:\n"
    "        print(name, e.strerror)\n";

struct meta {
	mode_t mode;
	uid_t uid;
	gid_t gid;
	struct timespec mtime;
	bool xattr;
};

static struct meta meta_of(int fd)
{
	struct meta m = {0};
	struct stat st;
	char v[8];

	cr_assert_eq(fstat(fd, &st), 0);
	m.mode = st.st_mode;
	m.uid = st.st_uid;
	m.gid = st.st_gid;
	m.mtime = st.st_mtim;
	m.xattr = fgetxattr(fd, "user.paddock", v, sizeof(v)) >= 0;
	return m;
}

static bool meta_same(const struct meta *a, const struct meta *b)
{
	return a->mode == b->mode && a->uid == b->uid && a->gid == b->gid &&
	       a->mtime.tv_sec == b->mtime.tv_sec && a->mtime.tv_nsec == b->mtime.tv_nsec &&
	       a->xattr == b->xattr;
}

/* paddock run (with weaken or not) -- python3 meta_script, stdin being
 * fd in_fd; returns paddock's status. */
static int meta_run(const char *ws, int in_fd, bool weaken)
{
	const char *argv[16];
	size_t n = 0;
	pid_t pid;
	int st;

	argv[n++] = h_paddock();
	argv[n++] = "run";
	argv[n++] = "--no-tty";
	if (weaken) {
		argv[n++] = "--weaken";
		argv[n++] = "direct-stdio";
	}
	argv[n++] = "--";
	argv[n++] = "python3";
	argv[n++] = "-c";
	argv[n++] = meta_script;
	argv[n] = NULL;
	fflush(NULL);
	pid = fork();
	cr_assert_geq(pid, 0);
	if (pid == 0) {
		int null = open("/dev/null", O_WRONLY);
		sigset_t none;

		sigemptyset(&none);
		sigprocmask(SIG_SETMASK, &none, NULL);
		if (dup2(in_fd, 0) < 0 || dup2(null, 1) < 0 || dup2(null, 2) < 0 || chdir(ws) < 0)
			_exit(120);
		execve(argv[0], (char **)argv, environ);
		_exit(121);
	}
	h_track_pid(pid);
	cr_assert_eq(waitpid(pid, &st, 0), pid);
	h_untrack_pid(pid);
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

static void meta_case(const char *ws, int in_fd, int check_fd, const char *what)
{
	struct meta before = meta_of(check_fd), after;

	cr_assert_eq(meta_run(ws, in_fd, false), 0, "%s", what);
	after = meta_of(check_fd);
	cr_assert(meta_same(&before, &after), "%s: the host's inode changed through /dev/stdin",
		  what);
	cr_assert_eq(meta_run(ws, in_fd, true), 0, "%s (weakened)", what);
	after = meta_of(check_fd);
	cr_assert(!meta_same(&before, &after), "%s: the weakened twin changed nothing", what);
	cr_assert_eq(after.mode & 07777, 0666, "%s: the twin's chmod did not arrive", what);
}

/* The size of the caller's stdout pipe, seen by its reader: while the
 * workload runs (it waits for "go") and after paddock has exited, before
 * anything is read. */
static void callers_pipe_sizes(const struct h_world *w, bool weaken, int *during, int *after)
{
	char *go = h_join(w->ws, "go"), *ready = h_join(w->ws, "ready");
	const char *script = "echo hi; touch ready; while [ ! -e go ]; do sleep 0.05; done";
	struct pollfd exited;
	struct h_proc p;

	unlink(go);
	unlink(ready);
	if (weaken)
		H_PADDOCK_START(&p, w->ws, "run", "--weaken", "direct-stdio", "--", "sh", "-c",
				script);
	else
		H_PADDOCK_START(&p, w->ws, "run", "--", "sh", "-c", script);
	for (double end = h_now() + 20; !h_exists(ready) && h_now() < end;)
		usleep(20000);
	cr_assert(h_exists(ready), "the workload did not start");
	*during = fcntl(p.out, F_GETPIPE_SZ);
	h_write_file(go, "", 0644);
	exited = (struct pollfd){.fd = p.pidfd, .events = POLLIN};
	cr_assert_eq(poll(&exited, 1, H_TIMEOUT_MS), 1, "paddock did not exit");
	*after = fcntl(p.out, F_GETPIPE_SZ);
	h_wait(&p, H_TIMEOUT_MS);
	cr_assert_eq(p.status, 0, H_SHOW(&p));
	cr_assert_str_eq(p.out_text, "hi\n", H_SHOW(&p));
}

/* The relay grows the caller's pipe to its own 1 MiB for the run (a
 * stream through a 64 KiB window costs a wake-up per 64 KiB), and gives
 * it back its size at the end; --weaken direct-stdio, which hands the
 * workload the pipe itself, leaves it alone (the twin: the test sees the
 * size). */
Test(stdio, callers_pipe_grown_while_relaying_and_given_back)
{
	struct h_world w = h_world();
	int was, during, after;
	int fds[2];

	cr_assert_eq(pipe(fds), 0);
	was = fcntl(fds[0], F_GETPIPE_SZ); /* what the harness's pipe has */
	close(fds[0]);
	close(fds[1]);
	cr_assert_lt(was, 1 << 20);
	callers_pipe_sizes(&w, false, &during, &after);
	cr_assert_eq(during, 1 << 20, "relayed: the caller's pipe holds %d bytes", during);
	cr_assert_eq(after, was, "relayed, after: %d bytes, not %d", after, was);
	callers_pipe_sizes(&w, true, &during, &after);
	cr_assert_eq(during, was, "direct-stdio: the caller's pipe holds %d bytes", during);
	cr_assert_eq(after, was);
}

Test(stdio, metadata_through_stdin_reaches_nothing_of_the_host)
{
	struct h_world w = h_world();
	char *file = h_join(w.base, "input");
	int fd, p[2], m, s;

	/* A file. */
	h_write_file(file, "the caller's file\n", 0600);
	fd = open(file, O_RDONLY | O_CLOEXEC);
	cr_assert_geq(fd, 0);
	meta_case(w.ws, fd, fd, "file");
	close(fd);
	/* A pipe (the caller keeps the write end open). */
	cr_assert_eq(pipe2(p, O_CLOEXEC), 0);
	cr_assert_eq(fchmod(p[0], 0600), 0);
	meta_case(w.ws, p[0], p[1], "pipe");
	close(p[0]);
	close(p[1]);
	/* A pty, not the controlling terminal (--no-tty). */
	m = posix_openpt(O_RDWR | O_NOCTTY | O_CLOEXEC);
	cr_assert_geq(m, 0);
	cr_assert_eq(grantpt(m), 0);
	cr_assert_eq(unlockpt(m), 0);
	s = open(ptsname(m), O_RDWR | O_NOCTTY | O_CLOEXEC);
	cr_assert_geq(s, 0);
	cr_assert_eq(fchmod(s, 0600), 0);
	meta_case(w.ws, s, s, "pty");
	close(s);
	close(m);
}

/* Without a pty, SIGINT reaches the workload's whole foreground group: the
 * inner sh of "sh -c" ends at once, as under a terminal's ^C. */
Test(stdio, sigint_without_pty_reaches_the_foreground_group)
{
	struct h_world w = h_world();
	struct h_proc p;

	H_PADDOCK_START(&p, w.ws, "run", "--no-tty", "--", "sh", "-c",
			"trap 'echo outer-int' INT; sh -c 'touch ready; sleep 5; echo survived'; "
			"echo after=$?");
	for (double end = h_now() + 20; !h_exists(h_join(w.ws, "ready")) && h_now() < end;)
		h_sleep_ms(20);
	h_sleep_ms(100);
	cr_assert_eq(kill(p.pid, SIGINT), 0);
	h_wait(&p, 20000);
	cr_assert_eq(p.status, 0, H_SHOW(&p));
	cr_assert(h_contains(p.out_text, "after=130"), H_SHOW(&p));
	cr_assert(!h_contains(p.out_text, "survived"), H_SHOW(&p));
	cr_assert_lt(p.secs, 4.0, H_SHOW(&p));
}

/* ------------------------------------------------- services and exec */

/* A leased service that reads its stdin and writes what it read: after
 * the foreground paddock run has returned the test types a marker into
 * the caller's terminal; the service's output (the session's stdout file)
 * never holds it. The twin (--weaken direct-stdio) gives the service the
 * caller's terminal, and it reads the marker. */
static const char *service_policy(const struct h_world *w)
{
	char *p = h_join(w->base, "svc.json");

	h_write_file(
	    p,
	    "{\"version\": 1, \"mounts\": ["
	    "{\"type\": \"bind\", \"source\": \"/usr\", \"mode\": \"ro\"},"
	    "{\"type\": \"bind\", \"source\": \"/bin\", \"mode\": \"ro\", \"symlink\": \"copy\"},"
	    "{\"type\": \"bind\", \"source\": \"/lib\", \"mode\": \"ro\", \"symlink\": \"copy\"},"
	    "{\"type\": \"bind\", \"source\": \"/lib64\", \"mode\": \"ro\", \"symlink\": \"copy\", "
	    "\"optional\": true},"
	    "{\"type\": \"proc\", \"target\": \"/proc\"},"
	    "{\"type\": \"dev\", \"target\": \"/dev\"},"
	    "{\"type\": \"bind\", \"source\": \"${WORKSPACE}\", \"mode\": \"rw\"}],"
	    " \"cwd\": \"${WORKSPACE}\", \"services\": [{\"name\": \"reader\", \"argv\": "
	    "[\"sh\", \"-c\", \"touch svc-up; echo svc-start; while read -r l; do echo "
	    "\\\"got:$l\\\" >> got; done; echo svc-eof >> got; sleep 30\"], \"lease\": "
	    "\"30s\"}]}\n",
	    0644);
	return p;
}

static const char *service_reads(bool weaken)
{
	struct h_sworld s = h_sworld();
	const char *policy = service_policy(&s.w), *marker = h_marker();
	char *got = h_join(s.w.ws, "got");
	struct termios after;
	struct tty_run t;
	const char *text;

	if (weaken)
		tty_start(&t, s.w.ws,
			  PADDOCK("run", "--weaken", "direct-stdio", "--policy", policy, "--", "sh",
				  "-c", "while [ ! -e svc-up ]; do sleep 0.05; done"),
			  NULL);
	else
		tty_start(&t, s.w.ws,
			  PADDOCK("run", "--policy", policy, "--", "sh", "-c",
				  "while [ ! -e svc-up ]; do sleep 0.05; done"),
			  NULL);
	cr_assert_eq(tty_wait(&t, 30), 0, TTY_SHOW(&t));
	/* The run returned at the main command's end (the lease runs on)
	 * with the caller's terminal mode as it was. */
	after = slave_termios(&t);
	cr_assert(termios_same(&t.before, &after), "termios changed at the main command's end");
	/* The caller's prompt is back: the user types a line. */
	tty_send(&t, h_fmt("%s\n", marker));
	h_sleep_ms(1000);
	text = h_read_file(got, NULL);
	/* The session: stopped, whatever happened. */
	H_CMD(&(struct h_proc){0}, s.w.ws, "/bin/sh", "-c",
	      "for id in $(\"$0\" ps --json | python3 -c 'import json,sys; [print(d[\"id\"]) for d "
	      "in json.load(sys.stdin)]'); do \"$0\" stop --grace 0s $id; done",
	      h_paddock());
	tty_close(&t);
	return text ? h_fmt("%s|%s", marker, text) : h_fmt("%s|", marker);
}

Test(stdio, service_reads_nothing_of_the_callers_terminal)
{
	const char *r = service_reads(false);
	const char *marker = h_fmt("%.*s", (int)strcspn(r, "|"), r);

	cr_assert(!strstr(strchr(r, '|') + 1, marker), "the service read the caller's input: %s",
		  r);
}

Test(stdio, weaken_direct_stdio_service_reads_the_callers_terminal)
{
	const char *r = service_reads(true);
	const char *marker = h_fmt("%.*s", (int)strcspn(r, "|"), r);

	cr_assert(strstr(strchr(r, '|') + 1, marker), "the twin's service read nothing: %s", r);
}

/* An exec'd command leaves a child that escapes its process group
 * (setsid) and reads its stdin (through fd 3: sh gives an asynchronous
 * list /dev/null as stdin). After paddock exec returned, the test
 * types a marker into the caller's terminal: the leftover's capture never
 * holds it (the relay closed: it read EOF). The twin (a session with
 * --weaken direct-stdio: the client's own fds) reads the marker. */
static const char *exec_leftover_reads(bool weaken, bool tty)
{
	struct h_sworld s = h_sworld();
	const char *marker = h_marker();
	char *cap = h_join(s.w.ws, "cap");
	struct tty_run t;
	struct h_proc d;
	const char *id, *text;

	if (weaken)
		H_PADDOCK(&d, s.w.ws, "run", "--detach", "--weaken", "direct-stdio", "--ttl", "60s",
			  "--", "sleep", "1000");
	else
		H_PADDOCK(&d, s.w.ws, "run", "--detach", "--ttl", "60s", "--", "sleep", "1000");
	cr_assert_eq(d.status, 0, H_SHOW(&d));
	id = h_fmt("%.*s", (int)strcspn(d.out_text, "\n"), d.out_text);
	tty_start(
	    &t, s.w.ws,
	    PADDOCK("exec", tty ? "-t" : "--no-tty", id, "--", "sh", "-c",
		    "exec 3<&0; setsid sh -c 'exec 0<&3 3<&-; echo up > cap; while read -r l; "
		    "do echo \"got:$l\" >> cap; done; echo eof >> cap; sleep 30' & "
		    "while [ ! -s cap ]; do sleep 0.05; done"),
	    NULL);
	cr_assert_eq(tty_wait(&t, 30), 0, TTY_SHOW(&t));
	tty_send(&t, h_fmt("%s\n", marker));
	h_sleep_ms(1000);
	text = h_read_file(cap, NULL);
	H_PADDOCK(&d, s.w.ws, "stop", "--grace", "0s", id);
	tty_close(&t);
	return h_fmt("%s|%s", marker, text ? text : "");
}

static bool marker_read(const char *r)
{
	const char *marker = h_fmt("%.*s", (int)strcspn(r, "|"), r);

	return strstr(strchr(r, '|') + 1, marker) != NULL;
}

Test(stdio, exec_leftover_reads_nothing_of_the_callers_terminal)
{
	const char *r = exec_leftover_reads(false, false);

	cr_assert(!marker_read(r), "the leftover read the caller's input: %s", r);
	r = exec_leftover_reads(false, true);
	cr_assert(!marker_read(r), "the leftover (-t) read the caller's input: %s", r);
}

Test(stdio, weaken_direct_stdio_exec_leftover_reads_the_callers_terminal)
{
	const char *r = exec_leftover_reads(true, false);

	cr_assert(marker_read(r), "the twin's leftover read nothing: %s", r);
}

/* paddock exec -t: a pty of the sandbox's own, sized like the caller's;
 * the exit status passes through; the caller's termios come back. */
Test(stdio, exec_tty)
{
	struct h_sworld s = h_sworld();
	struct termios after;
	struct tty_run t;
	struct h_proc d;
	const char *id;

	H_PADDOCK(&d, s.w.ws, "run", "--detach", "--ttl", "60s", "--", "sleep", "1000");
	cr_assert_eq(d.status, 0, H_SHOW(&d));
	id = h_fmt("%.*s", (int)strcspn(d.out_text, "\n"), d.out_text);
	tty_start(&t, s.w.ws,
		  PADDOCK("exec", id, "--", "sh", "-c", "tty; stty size; echo E-$((4+4)); exit 6"),
		  NULL);
	cr_assert(tty_expect(&t, "E-8", 20), TTY_SHOW(&t));
	cr_assert_eq(tty_wait(&t, 20), 6, TTY_SHOW(&t));
	cr_assert(strstr(t.out, "/dev/pts/0"), TTY_SHOW(&t));
	cr_assert(strstr(t.out, "24 80"), TTY_SHOW(&t));
	after = slave_termios(&t);
	cr_assert(termios_same(&t.before, &after));
	tty_close(&t);
	/* --no-tty: pipes. */
	H_PADDOCK(&d, s.w.ws, "exec", "--no-tty", id, "--", "sh", "-c",
		  "ls -l /proc/self/fd/0; exit 4");
	cr_assert_eq(d.status, 4, H_SHOW(&d));
	cr_assert(h_contains(d.out_text, "pipe:"), H_SHOW(&d));
	H_PADDOCK(&d, s.w.ws, "stop", "--grace", "0s", id);
}

/* ------------------------------------------ expiry without a supervisor */

/* Processes carrying marker but the supervisor (whose argv holds it too). */
static size_t sandbox_pids(const char *marker, pid_t supervisor, pid_t *pids)
{
	pid_t all[8];
	size_t n = h_marker_pids(marker, all, 8), k = 0;

	for (size_t i = 0; i < n; i++)
		if (all[i] != supervisor)
			pids[k++] = all[i];
	return k;
}

/* The supervisor is SIGSTOPped past the TTL: paddock-init ends the sandbox
 * at the deadline by itself. When the supervisor resumes, it reports the
 * expiry. (The twin without --deadline-ms is tests/unit/test_init.c's
 * no_deadline_no_end: nothing else ends the workload.) */
Test(stdio, init_ends_the_sandbox_when_the_supervisor_is_stopped)
{
	struct h_world w = h_world();
	const char *marker = h_marker();
	pid_t pids[8];
	struct h_proc p;
	double t0;

	H_PADDOCK_START(&p, w.ws, "run", "--ttl", "1s", "--record", w.record, "--", "sh", "-c",
			"touch up; while :; do sleep 0.1; done", marker);
	for (double end = h_now() + 20; !h_exists(h_join(w.ws, "up")) && h_now() < end;)
		h_sleep_ms(20);
	cr_assert(h_exists(h_join(w.ws, "up")), "the workload did not start");
	cr_assert_eq(kill(p.pid, SIGSTOP), 0);
	t0 = h_now();
	/* The TTL (1 s) and the default grace period pass while it is
	 * stopped; the workload's sh (its argv holds the marker) must go. */
	while (sandbox_pids(marker, p.pid, pids) > 0 && h_now() - t0 < 15)
		h_sleep_ms(50);
	cr_assert_eq(sandbox_pids(marker, p.pid, pids), 0,
		     "the sandbox outlived its TTL while the supervisor was stopped");
	cr_assert_eq(kill(p.pid, SIGCONT), 0);
	h_wait(&p, 20000);
	cr_assert_eq(p.status, 124, H_SHOW(&p));
	cr_assert(!p.timed_out, H_SHOW(&p));
	cr_assert_str_eq(h_json(w.record, "d['ended']"), "\"expired\"");
}

/* ---------------------------------------------------------- bad input */

Test(stdio, bad_terminal_options)
{
	struct h_world w = h_world();
	char *nodev = h_join(w.base, "nodev.json");
	struct h_proc p;

	H_PADDOCK(&p, w.ws, "run", "--tty", "--detach", "--", "true");
	cr_assert_eq(p.status, 125, H_SHOW(&p));
	cr_assert_eq(h_count_lines(p.err_text), 1, H_SHOW(&p));
	cr_assert(h_contains(p.err_text, "--tty and --detach"), H_SHOW(&p));
	H_PADDOCK(&p, w.ws, "exec", "--bogus-tty", "x", "--", "true");
	cr_assert_eq(p.status, 125, H_SHOW(&p));
	/* -t with a policy that has no /dev: one line, nothing started. */
	h_write_file(nodev,
		     "{\"version\": 1, \"mounts\": ["
		     "{\"type\": \"bind\", \"source\": \"/usr\", \"mode\": \"ro\"},"
		     "{\"type\": \"bind\", \"source\": \"/bin\", \"mode\": \"ro\", \"symlink\": "
		     "\"copy\"},"
		     "{\"type\": \"bind\", \"source\": \"/lib\", \"mode\": \"ro\", \"symlink\": "
		     "\"copy\"},"
		     "{\"type\": \"bind\", \"source\": \"/lib64\", \"mode\": \"ro\", \"symlink\": "
		     "\"copy\", \"optional\": true},"
		     "{\"type\": \"proc\", \"target\": \"/proc\"}]}\n",
		     0644);
	H_PADDOCK(&p, w.ws, "run", "-t", "--policy", nodev, "--", "true");
	cr_assert_eq(p.status, 125, H_SHOW(&p));
	cr_assert_eq(h_count_lines(p.err_text), 1, H_SHOW(&p));
	cr_assert(h_contains(p.err_text, "--no-tty"), H_SHOW(&p));
	/* The same policy without a terminal runs. */
	H_PADDOCK(&p, w.ws, "run", "--policy", nodev, "--", "true");
	cr_assert_eq(p.status, 0, H_SHOW(&p));
}

/* TIOCSTI, with seccomp off so the kernel decides: in terminal mode the
 * controlling terminal is the sandbox's own pty, so the pushed input
 * lands there and the workload reads it back itself; the caller's
 * terminal gets nothing to execute (paddock's relay only ever writes the
 * sandbox pty's output to it). */
static const char own_tiocsti_py[] =
    "import fcntl, os, termios, errno\n"
    "try:\n"
    "    for c in b'ZQZ\\n': fcntl.ioctl(0, termios.TIOCSTI, bytes([c]))\n"
    "    os.set_blocking(0, False)\n"
    "    print('own=' + os.read(0, 64).decode().strip() + '=')\n"
    "except OSError as e:\n"
    "    print('ioctl', errno.errorcode[e.errno])\n";

Test(stdio, tty_tiocsti_reaches_only_the_sandboxes_pty)
{
	struct h_world w = h_world();
	const char *l = h_read_file("/proc/sys/dev/tty/legacy_tiocsti", NULL);
	struct termios after;
	struct tty_run t;

	tty_start(&t, w.ws,
		  PADDOCK("run", "--weaken", "no-seccomp", "--", "python3", "-c", own_tiocsti_py),
		  NULL);
	cr_assert_eq(tty_wait(&t, 20), 0, TTY_SHOW(&t));
	if (l && l[0] == '0')
		cr_assert(strstr(t.out, "ioctl EIO"), TTY_SHOW(&t));
	else
		cr_assert(strstr(t.out, "own=ZQZ="), TTY_SHOW(&t));
	after = slave_termios(&t);
	cr_assert(termios_same(&t.before, &after));
	tty_close(&t);
}

/* Job control at the caller's shell: a paddock started in the background
 * (`&`) neither takes the caller's terminal raw nor reads it, so the line
 * typed next is the caller's shell's; after `fg` it is raw and relays. */
Test(stdio, tty_background_does_not_steal_input_and_fg_resumes)
{
	struct h_world w = h_world();
	struct termios after;
	struct tty_run t;

	tty_start(
	    &t, w.ws,
	    (const char *const[]){"/bin/bash", "--norc", "--noprofile", "--noediting", "-i", NULL},
	    NULL);
	tty_send(&t, "PS1='host$ '; echo H0-$((1+1))\n");
	cr_assert(tty_expect(&t, "H0-2", 20), TTY_SHOW(&t));
	tty_send(&t, h_fmt("%s run -- cat &\n", h_paddock()));
	h_sleep_ms(1500);
	/* The caller's shell gets this line, and its terminal is cooked. */
	after = slave_termios(&t);
	cr_assert((after.c_lflag & ISIG) && (after.c_oflag & OPOST),
		  "a background paddock made the terminal raw");
	tty_send(&t, "echo H1-$((2+3))\n");
	cr_assert(tty_expect(&t, "H1-5", 20), TTY_SHOW(&t));
	/* fg: paddock in the foreground, raw, relaying to cat. */
	tty_send(&t, "fg\n");
	h_sleep_ms(800);
	after = slave_termios(&t);
	cr_assert(!(after.c_lflag & ISIG), "not raw after fg; " TTY_SHOW(&t));
	tty_send(&t, "inside-line\n");
	cr_assert(tty_expect(&t, "inside-line", 10), TTY_SHOW(&t));
	cr_assert(tty_expect(&t, "inside-line", 10), "cat did not answer; " TTY_SHOW(&t));
	tty_send(&t, "\x04");
	h_sleep_ms(800);
	tty_send(&t, "echo H2-$((3+4)); exit 0\n");
	cr_assert(tty_expect(&t, "H2-7", 20), TTY_SHOW(&t));
	cr_assert_eq(tty_wait(&t, 20), 0, TTY_SHOW(&t));
	tty_close(&t);
}
