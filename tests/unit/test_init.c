/* Unit tests for paddock-init: run build/paddock-init (build it first) with a
 * SOCK_SEQPACKET socketpair as its control fd, both as a plain process (the
 * no-pidns subreaper mode) and as PID 1 of a fresh pid namespace through
 * unshare(1), and check the protocol messages and exit statuses.
 *
 * Cleanup: the test worker makes itself a child subreaper, so whatever a
 * test starts stays its descendant; teardown() SIGKILLs its children by pid
 * (never by name) until none is left, even after a failed assertion. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <criterion/criterion.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/pidfd.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "../../include/initproto.h"
#include "unit.h"

#define INIT	 "build/paddock-init"
#define SVC_FD	 200
#define SVC_FD_S "200"
#define CTL_FD	 7
#define MAX_MSGS 128
#define WAIT_MS	 4000 /* per test, from start(): each test stays under 5 s */

static const char *const unshare_argv[] = {
    "unshare", "--user", "--map-root-user", "--pid", "--fork", "--mount-proc", "--kill-child",
};

static struct run {
	pid_t pid; /* init, or unshare in PID 1 mode */
	int pidfd;
	int sock; /* our end of the control socketpair */
	int out;  /* the workload's stdout, when captured */
	char msgs[MAX_MSGS][INITPROTO_MAX + 1];
	int nmsgs;
	char tmp[64];  /* a temporary file to unlink */
	long deadline; /* CLOCK_MONOTONIC ms: every wait of the test ends here */
} R = {.pid = -1, .pidfd = -1, .sock = -1, .out = -1};

static long now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* A poll() timeout up to the deadline, never negative (that would be -1:
 * forever), so a failing test fails in time and teardown() still runs. */
static int left_ms(void)
{
	long left = R.deadline - now_ms();

	return left > 0 ? (int)left : 0;
}

/* Our live (non-zombie) children, from /proc/PID/stat field 4. */
static int children(pid_t *out, int max)
{
	DIR *d = opendir("/proc");
	struct dirent *de;
	char path[300];
	int n = 0, ppid;
	char state;
	FILE *f;

	cr_assert_not_null(d);
	while (n < max && (de = readdir(d))) {
		snprintf(path, sizeof(path), "/proc/%s/stat", de->d_name);
		if (de->d_name[0] < '1' || de->d_name[0] > '9' || !(f = fopen(path, "re")))
			continue;
		if (fscanf(f, "%*d (%*[^)]) %c %d", &state, &ppid) == 2 && ppid == getpid() &&
		    state != 'Z')
			out[n++] = atoi(de->d_name);
		fclose(f);
	}
	closedir(d);
	return n;
}

static void setup(void)
{
	/* Orphans of the sandbox come to us, so teardown() can find them. */
	cr_assert_eq(prctl(PR_SET_CHILD_SUBREAPER, 1), 0);
}

static void teardown(void)
{
	pid_t kids[64];
	int n;

	if (R.pid > 0) {
		kill(R.pid, SIGKILL); /* our child, unreaped: the pid is still ours */
		waitpid(R.pid, NULL, 0);
	}
	/* Killing a child reparents its children to us: repeat until ECHILD.
	 * Each pid is our unreaped child, so it cannot have been reused. */
	for (long end = now_ms() + 2000; now_ms() < end;) {
		n = children(kids, 64);
		for (int i = 0; i < n; i++)
			kill(kids[i], SIGKILL);
		while (waitpid(-1, NULL, WNOHANG) > 0)
			;
		if (waitpid(-1, NULL, WNOHANG) < 0 && errno == ECHILD)
			break;
		usleep(10000);
	}
	if (R.pidfd >= 0)
		close(R.pidfd);
	if (R.sock >= 0)
		close(R.sock);
	if (R.out >= 0)
		close(R.out);
	if (R.tmp[0])
		unlink(R.tmp);
	unit_leak_check();
}

TestSuite(init, .init = setup, .fini = teardown, .timeout = 10);

static void need_init(bool pid1)
{
	if (access(INIT, X_OK) != 0)
		cr_skip_test("%s is missing: build it first", INIT);
	if (pid1 && system("unshare --user --map-root-user --pid --fork --mount-proc true "
			   ">/dev/null 2>&1") != 0)
		cr_skip_test("unshare cannot create user and pid namespaces here");
}

/* Starts init (as PID 1 under unshare when pid1) with our socket as fd 7;
 * grace may be NULL; opts (NULL or NULL-terminated) go before "--";
 * capture puts the workload's stdout on R.out. */
static void start_opts(bool pid1, const char *grace, bool capture, const char *const *opts,
		       const char *const *cmd)
{
	const char *argv[64];
	int sv[2], out[2] = {-1, -1}, n = 0;

	need_init(pid1);
	R.deadline = now_ms() + WAIT_MS;
	if (pid1)
		for (size_t i = 0; i < sizeof(unshare_argv) / sizeof(unshare_argv[0]); i++)
			argv[n++] = unshare_argv[i];
	argv[n++] = INIT;
	argv[n++] = "--control-fd";
	argv[n++] = "7";
	if (grace) {
		argv[n++] = "--grace";
		argv[n++] = grace;
	}
	while (opts && *opts && n < 48)
		argv[n++] = *opts++;
	argv[n++] = "--";
	while (*cmd && n < 63)
		argv[n++] = *cmd++;
	argv[n] = NULL;

	cr_assert_eq(socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv), 0);
	if (capture)
		cr_assert_eq(pipe2(out, O_CLOEXEC), 0);
	R.pid = fork();
	cr_assert_geq(R.pid, 0);
	if (R.pid == 0) {
		int null = open("/dev/null", O_RDONLY | O_CLOEXEC);
		sigset_t none;

		/* If the test worker dies, so does init (and under unshare
		 * --kill-child, its whole namespace). */
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		/* As the launcher's child starts init: an empty signal mask
		 * (sandbox_harden()), not Criterion's. */
		sigemptyset(&none);
		sigprocmask(SIG_SETMASK, &none, NULL);
		dup2(null, 0); /* never hand our terminal to the workload */
		if (capture)
			dup2(out[1], 1);
		if (sv[1] == CTL_FD)
			fcntl(CTL_FD, F_SETFD, 0);
		else
			dup2(sv[1], CTL_FD);
		close_range(3, CTL_FD - 1, 0);
		/* SVC_FD stays: service_stdio's output file, when open. */
		close_range(CTL_FD + 1, SVC_FD - 1, 0);
		close_range(SVC_FD + 1, ~0U, 0);
		execvp(argv[0], (char **)argv);
		_exit(99);
	}
	close(sv[1]);
	R.sock = sv[0];
	if (capture) {
		close(out[1]);
		R.out = out[0];
	}
	R.pidfd = pidfd_open(R.pid, 0);
	cr_assert_geq(R.pidfd, 0);
}

static void start(bool pid1, const char *grace, bool capture, const char *const *cmd)
{
	start_opts(pid1, grace, capture, NULL, cmd);
}

/* The next message, or NULL at EOF or when the deadline passes. */
static const char *next_msg(void)
{
	struct pollfd p = {.fd = R.sock, .events = POLLIN};
	ssize_t n;

	if (R.nmsgs >= MAX_MSGS || poll(&p, 1, left_ms()) <= 0)
		return NULL;
	n = recv(R.sock, R.msgs[R.nmsgs], INITPROTO_MAX, 0);
	if (n <= 0)
		return NULL;
	R.msgs[R.nmsgs][n] = '\0';
	return R.msgs[R.nmsgs++];
}

/* The workload's first line of output, read with the deadline. */
static void expect_line(const char *want)
{
	struct pollfd p = {.fd = R.out, .events = POLLIN};
	char buf[256];
	size_t len = 0;
	ssize_t n;

	while (len < sizeof(buf) - 1 && (len == 0 || buf[len - 1] != '\n') &&
	       poll(&p, 1, left_ms()) > 0 &&
	       (n = read(R.out, buf + len, sizeof(buf) - 1 - len)) > 0)
		len += (size_t)n;
	buf[len] = '\0';
	cr_assert_str_eq(buf, want);
}

/* Reads messages until fnmatch(pattern) matches one; asserts it does. */
static const char *expect_msg(const char *pattern)
{
	const char *m;

	while ((m = next_msg()))
		if (fnmatch(pattern, m, 0) == 0)
			return m;
	cr_assert_fail("no message matching \"%s\" (%d received)", pattern, R.nmsgs);
	return NULL;
}

/* Reads to EOF, then reaps init: its exit code, or 128 + signal. */
static int finish(void)
{
	struct pollfd p = {.fd = R.pidfd, .events = POLLIN};
	int st;

	while (R.sock >= 0 && next_msg())
		;
	cr_assert_gt(poll(&p, 1, left_ms()), 0, "init did not exit");
	cr_assert_eq(waitpid(R.pid, &st, 0), R.pid);
	R.pid = -1;
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

/* The messages received, matched in order against NULL-terminated patterns. */
static void assert_msgs(const char *const *want)
{
	int i;

	for (i = 0; want[i]; i++) {
		cr_assert_lt(i, R.nmsgs, "message %d missing, want \"%s\"", i, want[i]);
		cr_assert_eq(fnmatch(want[i], R.msgs[i], 0), 0,
			     "message %d is \"%s\", want \"%s\" (%d in all, last \"%s\")", i,
			     R.msgs[i], want[i], R.nmsgs, R.msgs[R.nmsgs - 1]);
	}
	cr_assert_eq(i, R.nmsgs, "unexpected message \"%s\" (then \"%s\", %d in all)",
		     R.nmsgs > i ? R.msgs[i] : "", R.nmsgs > i + 1 ? R.msgs[i + 1] : "", R.nmsgs);
}

#define CMD(...)  ((const char *const[]){__VA_ARGS__, NULL})
#define WANT(...) ((const char *const[]){__VA_ARGS__, NULL})

static void exit_code(bool pid1)
{
	start(pid1, NULL, false, CMD("sh", "-c", "exit 3"));
	cr_assert_eq(finish(), 3);
	assert_msgs(WANT("started [0-9]*", "exit 3", "done"));
}

Test(init, exit_code)
{
	exit_code(false);
}

Test(init, exit_code_pid1)
{
	exit_code(true);
}

static void signal_death(bool pid1)
{
	start(pid1, NULL, false, CMD("sh", "-c", "kill -TERM $$"));
	cr_assert_eq(finish(), 143);
	assert_msgs(WANT("started [0-9]*", "signal 15", "done"));
}

Test(init, signal_death)
{
	signal_death(false);
}

Test(init, signal_death_pid1)
{
	signal_death(true);
}

static void missing_command(bool pid1)
{
	start(pid1, NULL, false, CMD("paddock-test-no-such-command"));
	cr_assert_eq(finish(), 127);
	assert_msgs(WANT("exec-error 2", "exit 127", "done"));
}

Test(init, missing_command)
{
	missing_command(false);
}

Test(init, missing_command_pid1)
{
	missing_command(true);
}

Test(init, not_executable)
{
	int fd;

	need_init(false);
	snprintf(R.tmp, sizeof(R.tmp), "/tmp/paddock-test-noexec-XXXXXX");
	fd = mkstemp(R.tmp);
	cr_assert_geq(fd, 0);
	fchmod(fd, 0644); /* no x bit: EACCES even for root (execve(2)) */
	close(fd);
	start(false, NULL, false, CMD(R.tmp));
	cr_assert_eq(finish(), 126);
	assert_msgs(WANT("exec-error 13", "exit 126", "done"));
}

/* A workload that cannot enter the Landlock domain is reported as "error
 * ERRNO MSG" (include/initproto.h), its errno a number the supervisor can
 * parse, and ends with 125 before its exec. Fd 7 is the control socket, not
 * a ruleset: EBADFD (EOPNOTSUPP or ENOSYS without Landlock). */
static void landlock_error(bool pid1)
{
	struct err e = {0};
	char want[128];

	start_opts(pid1, NULL, false, CMD("--landlock-fd", "7"), CMD("true"));
	cr_assert_eq(finish(), 125);
	assert_msgs(WANT("error [1-9]* landlock: restrict_self: *", "exit 125", "done"));
	cr_assert_eq(initproto_error_parse(R.msgs[0], &e), 0);
	cr_assert(e.code == EBADFD || e.code == EOPNOTSUPP || e.code == ENOSYS, "errno %d", e.code);
	snprintf(want, sizeof(want), "landlock: restrict_self: %s", strerror(e.code));
	cr_assert_str_eq(e.msg, want);
}

Test(init, landlock_error)
{
	landlock_error(false);
}

Test(init, landlock_error_pid1)
{
	landlock_error(true);
}

static void stop_message(bool pid1)
{
	const char *m;
	char term[64];

	start(pid1, NULL, false, CMD("sleep", "30"));
	m = expect_msg("started [0-9]*");
	snprintf(term, sizeof(term), "term %s sleep", m + strlen("started "));
	cr_assert_eq(send(R.sock, "bogus", 5, 0), 5); /* ignored with a warning */
	cr_assert_eq(send(R.sock, "stop", 4, 0), 4);
	cr_assert_eq(finish(), 143);
	/* As PID 1 the shutdown's reports come last, before "done". */
	if (pid1)
		assert_msgs(WANT("started [0-9]*", "signal 15", term, "done"));
	else
		assert_msgs(WANT("started [0-9]*", term, "signal 15", "done"));
}

Test(init, stop_message)
{
	stop_message(false);
}

Test(init, stop_message_pid1)
{
	stop_message(true);
}

Test(init, stop_term_ignored_gets_kill)
{
	char path[64], comm[32] = "";
	FILE *f;

	/* "started" only means sh was exec'd: wait until it became sleep, with
	 * SIGTERM ignored by then. */
	start(false, "300", false, CMD("sh", "-c", "trap '' TERM; exec sleep 30"));
	snprintf(path, sizeof(path), "/proc/%s/comm", expect_msg("started *") + strlen("started "));
	while (strcmp(comm, "sleep\n") != 0 && left_ms() > 0 && (f = fopen(path, "re"))) {
		if (!fgets(comm, sizeof(comm), f))
			comm[0] = '\0';
		fclose(f);
		usleep(1000);
	}
	cr_assert_str_eq(comm, "sleep\n");
	cr_assert_eq(send(R.sock, "stop", 4, 0), 4);
	cr_assert_eq(finish(), 137);
	assert_msgs(WANT("started *", "term * sleep", "kill * sleep", "signal 9", "done"));
}

/* "stop MS" (paddock stop --grace): this shutdown's grace period replaces
 * --grace: 100 ms instead of 30 s before the SIGKILL. */
Test(init, stop_with_its_own_grace_period)
{
	char path[64], comm[32] = "";
	struct timespec t0, t1;
	FILE *f;

	start(false, "30000", false, CMD("sh", "-c", "trap '' TERM; exec sleep 30"));
	snprintf(path, sizeof(path), "/proc/%s/comm", expect_msg("started *") + strlen("started "));
	while (strcmp(comm, "sleep\n") != 0 && left_ms() > 0 && (f = fopen(path, "re"))) {
		if (!fgets(comm, sizeof(comm), f))
			comm[0] = '\0';
		fclose(f);
		usleep(1000);
	}
	cr_assert_str_eq(comm, "sleep\n");
	clock_gettime(CLOCK_MONOTONIC, &t0);
	cr_assert_eq(send(R.sock, "stop 100", 8, 0), 8);
	cr_assert_eq(finish(), 137);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	cr_assert_lt(t1.tv_sec - t0.tv_sec, 5, "the 30 s grace period was used");
	assert_msgs(WANT("started *", "term * sleep", "kill * sleep", "signal 9", "done"));
}

/* The shutdown names at most 64 processes per signal and counts the rest
 * in one "term-more N" just before "done": 80 background sleeps and the
 * workload (exec'd into sleep) are 81, so 64 named and 17 counted. */
static void names_are_capped(bool pid1)
{
	int named = 0;

	start(pid1, NULL, true,
	      CMD("sh", "-c",
		  "i=0; while [ $i -lt 80 ]; do sleep 30 & i=$((i + 1)); done; "
		  "echo ready; exec sleep 30"));
	expect_line("ready\n");
	cr_assert_eq(send(R.sock, "stop", 4, 0), 4);
	cr_assert_eq(finish(), 143);
	for (int i = 0; i < R.nmsgs; i++)
		named += fnmatch("term [0-9]* *", R.msgs[i], 0) == 0;
	cr_assert_eq(named, 64, "%d named (%d messages)", named, R.nmsgs);
	cr_assert_geq(R.nmsgs, 2);
	cr_assert_str_eq(R.msgs[R.nmsgs - 2], "term-more 17");
	cr_assert_str_eq(R.msgs[R.nmsgs - 1], "done");
}

Test(init, names_are_capped)
{
	names_are_capped(false);
}

Test(init, names_are_capped_pid1)
{
	names_are_capped(true);
}

Test(init, supervisor_eof_stops)
{
	start(false, NULL, false, CMD("sleep", "30"));
	expect_msg("started [0-9]*");
	close(R.sock);
	R.sock = -1;
	cr_assert_eq(finish(), 143);
}

/* A grandchild in its own session outlives the workload: init reports and
 * SIGTERMs it, and it is gone when init exits. The workload waits until the
 * grandchild is sleep, so the comm is not still "sh" or "setsid". */
static void detached_grandchild(bool pid1)
{
	pid_t kids[4];

	start(pid1, NULL, false,
	      CMD("sh", "-c",
		  "setsid sleep 30 & p=$!; "
		  "while [ \"$(cat /proc/$p/comm 2>/dev/null)\" != sleep ]; do sleep 0.01; done"));
	cr_assert_eq(finish(), 0);
	assert_msgs(WANT("started [0-9]*", "exit 0", "term [0-9]* sleep", "done"));
	cr_assert_eq(children(kids, 4), 0, "a process outlived init");
}

Test(init, detached_grandchild)
{
	detached_grandchild(false);
}

Test(init, detached_grandchild_pid1)
{
	detached_grandchild(true);
}

/* A detached leftover that ignores SIGTERM gets SIGKILL after --grace. */
static void term_ignored(bool pid1)
{
	pid_t kids[4];
	long t0 = now_ms();

	start(pid1, "300", false,
	      CMD("sh", "-c",
		  "setsid sh -c 'trap \"\" TERM; exec sleep 30' & p=$!; "
		  "while [ \"$(cat /proc/$p/comm 2>/dev/null)\" != sleep ]; do sleep 0.01; done"));
	cr_assert_eq(finish(), 0);
	assert_msgs(WANT("started *", "exit 0", "term [0-9]* sleep", "kill [0-9]* sleep", "done"));
	cr_assert_geq(now_ms() - t0, 300, "SIGKILL came before the grace period");
	cr_assert_eq(children(kids, 4), 0, "a process outlived init");
}

Test(init, term_ignored_gets_kill)
{
	term_ignored(false);
}

Test(init, term_ignored_gets_kill_pid1)
{
	term_ignored(true);
}

/* ls lists its own directory fd too: 3 when nothing leaked into the workload. */
static void no_fd_leak(bool pid1)
{
	start(pid1, NULL, true, CMD("sh", "-c", "echo $(ls /proc/self/fd)"));
	expect_line("0 1 2 3\n");
	cr_assert_eq(finish(), 0);
}

Test(init, control_fd_not_inherited)
{
	no_fd_leak(false);
}

Test(init, control_fd_not_inherited_pid1)
{
	no_fd_leak(true);
}

/* SIGUSR1 to init reaches the workload, which traps it once it said "ready".
 * As PID 1 the signal comes from the parent namespace to the namespace's
 * init, which the kernel delivers only because init blocks it. */
static void forward_usr1(bool pid1)
{
	char path[64];
	pid_t target = R.pid;
	FILE *f;

	/* Bounded (~5 s) so that even a leaked workload ends by itself. */
	start(pid1, NULL, true,
	      CMD("sh", "-c",
		  "trap 'exit 42' USR1; echo ready; "
		  "i=0; while [ $i -lt 250 ]; do sleep 0.02; i=$((i+1)); done"));
	expect_line("ready\n");
	target = R.pid;
	if (pid1) { /* init is unshare's only child */
		snprintf(path, sizeof(path), "/proc/%d/task/%d/children", R.pid, R.pid);
		f = fopen(path, "re");
		cr_assert_not_null(f);
		cr_assert_eq(fscanf(f, "%d", &target), 1);
		fclose(f);
	}
	cr_assert_eq(kill(target, SIGUSR1), 0);
	cr_assert_eq(finish(), 42);
	assert_msgs(WANT("started *", "exit 42", "done"));
}

Test(init, forwards_sigusr1)
{
	forward_usr1(false);
}

Test(init, forwards_sigusr1_pid1)
{
	forward_usr1(true);
}

/* Without --control-fd init works standalone; bad usage exits 125. */
Test(init, command_line)
{
	need_init(false);
	cr_assert_eq(WEXITSTATUS(system(INIT " sh -c 'exit 5'")), 5);
	cr_assert_eq(WEXITSTATUS(system(INIT " -- sh -c 'exit 6'")), 6);
	cr_assert_eq(WEXITSTATUS(system(INIT " --help >/dev/null")), 0);
	cr_assert_eq(WEXITSTATUS(system(INIT " --version | grep -qx 'paddock-init [0-9.]*'")), 0);
	cr_assert_eq(WEXITSTATUS(system(INIT " 2>/dev/null")), 125);
	cr_assert_eq(WEXITSTATUS(system(INIT " --bogus true 2>/dev/null")), 125);
	cr_assert_eq(WEXITSTATUS(system(INIT " --grace 1x true 2>/dev/null")), 125);
	cr_assert_eq(WEXITSTATUS(system(INIT " --control-fd 1 true 2>/dev/null")), 125);
	cr_assert_eq(WEXITSTATUS(system(INIT " --control-fd 99 true 2>/dev/null")), 125);
	cr_assert_eq(WEXITSTATUS(system(INIT " --grace 2>/dev/null")), 125);
}

/* The workload keeps the launcher's cwd; init itself moves to "/". */
Test(init, cwd)
{
	char want[4096 + 2], path[64], got[64] = "";
	ssize_t n;

	cr_assert_not_null(getcwd(want, sizeof(want) - 1));
	strcat(want, "\n");
	start(false, NULL, true, CMD("sh", "-c", "pwd; exec sleep 30"));
	expect_line(want);
	snprintf(path, sizeof(path), "/proc/%d/cwd", R.pid);
	while (strcmp(got, "/") != 0 && left_ms() > 0 && (n = readlink(path, got, 63)) > 0) {
		got[n] = '\0';
		usleep(1000);
	}
	cr_assert_str_eq(got, "/");
	cr_assert_eq(send(R.sock, "stop", 4, 0), 4);
	cr_assert_eq(finish(), 143);
}

/* Services (--service NAME LEASE_MS ARGC ARG...): each is started before
 * the workload in a session of its own; leased ones outlive the workload
 * as PID 1 ("retained"), the rest end with it. */

#define LEFTOVER                   \
	"setsid sleep 30 & p=$!; " \
	"while [ \"$(cat /proc/$p/comm 2>/dev/null)\" != sleep ]; do sleep 0.01; done; "

/* init's host pid under unshare (its only child), once it runs. */
static pid_t init_host_pid(void)
{
	char path[64];
	pid_t pid = -1;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/task/%d/children", R.pid, R.pid);
	f = fopen(path, "re");
	cr_assert_not_null(f);
	cr_assert_eq(fscanf(f, "%d", &pid), 1);
	fclose(f);
	return pid;
}

/* Live descendants of init (all of its pid namespace: orphans there go to
 * init), from the host's /proc by ppid: their host pids and session ids.
 * Not by /proc/PID/ns/pid: a process with full capabilities in its user
 * namespace is not ptrace-readable here when our own capability sets are
 * not a superset (cap_ptrace_access_check), which hides its ns links. */
static int ns_procs(pid_t init, pid_t *pids, int *sids, int max)
{
	static struct {
		int pid, ppid, sid;
		char state;
	} all[4096];
	DIR *d = opendir("/proc");
	struct dirent *de;
	char path[300];
	int n = 0, count = 0;
	FILE *f;

	cr_assert_not_null(d);
	while (n < 4096 && (de = readdir(d))) {
		snprintf(path, sizeof(path), "/proc/%s/stat", de->d_name);
		if (de->d_name[0] < '1' || de->d_name[0] > '9' || !(f = fopen(path, "re")))
			continue;
		if (fscanf(f, "%d (%*[^)]) %c %d %*d %d", &all[n].pid, &all[n].state, &all[n].ppid,
			   &all[n].sid) == 4)
			n++;
		fclose(f);
	}
	closedir(d);
	for (int i = 0; i < n; i++) {
		int up = all[i].ppid;

		if (all[i].state == 'Z' || all[i].state == 'X')
			continue;
		for (int depth = 0; depth < 32 && up > 1 && up != init; depth++) {
			int j = 0;

			while (j < n && all[j].pid != up)
				j++;
			up = j < n ? all[j].ppid : 0;
		}
		if (up == init && count < max) {
			pids[count] = all[i].pid;
			sids[count++] = all[i].sid;
		}
	}
	return count;
}

/* Services start before the workload, in order; without a lease they end
 * with it ("main-ended"), SIGTERMed in the shutdown. */
static void services_end_with_workload(bool pid1)
{
	start_opts(pid1, NULL, false,
		   CMD("--service", "a", "0", "2", "sleep", "30", "--service", "b", "0", "2",
		       "sleep", "30"),
		   CMD("sh", "-c", "exit 3"));
	cr_assert_eq(finish(), 3);
	if (pid1) {
		/* The shutdown's reports come last, before "done". */
		assert_msgs(WANT("service-started a [0-9]*", "service-started b [0-9]*",
				 "started [0-9]*", "exit 3",
				 "service-ended [ab] main-ended signal:15",
				 "service-ended [ab] main-ended signal:15", "term [0-9]* sleep",
				 "term [0-9]* sleep", "done"));
		cr_assert_neq(strcmp(R.msgs[4] + 14, R.msgs[5] + 14), 0,
			      "one service reported twice");
		return;
	}
	assert_msgs(WANT("service-started a [0-9]*", "service-started b [0-9]*", "started [0-9]*",
			 "exit 3", "term [0-9]* sleep", "term [0-9]* sleep",
			 "service-ended [ab] main-ended signal:15",
			 "service-ended [ab] main-ended signal:15", "done"));
	cr_assert_neq(strcmp(R.msgs[6] + 14, R.msgs[7] + 14), 0, "one service reported twice");
}

Test(init, services_end_with_workload)
{
	services_end_with_workload(false);
}

Test(init, services_end_with_workload_pid1)
{
	services_end_with_workload(true);
}

/* A lease that runs out while the workload runs ends its service only. */
Test(init, service_lease_expires_pid1)
{
	start_opts(true, NULL, false, CMD("--service", "web", "300", "2", "sleep", "30"),
		   CMD("sleep", "30"));
	expect_msg("service-ended web lease-expired signal:15");
	cr_assert_eq(send(R.sock, "stop", 4, 0), 4);
	cr_assert_eq(finish(), 143);
	assert_msgs(WANT("service-started web [0-9]*", "started [0-9]*",
			 "service-ended web lease-expired signal:15", "signal 15",
			 "term [0-9]* sleep", "done"));
}

/* Retention: the workload's detached leftover (setsid) is SIGTERMed, the
 * leased service and its own child (same session) live on, alone in the
 * namespace, until the lease ends; init exits with the workload's status. */
Test(init, service_retained_until_lease_end_pid1)
{
	pid_t pids[8], init;
	int sids[8], n = 0;
	char svc[32];

	start_opts(true, NULL, false,
		   CMD("--service", "web", "2500", "3", "sh", "-c", "sleep 30 & exec sleep 31"),
		   CMD("sh", "-c", LEFTOVER "exit 7"));
	snprintf(svc, sizeof(svc), "term %s sleep",
		 expect_msg("service-started web *") + strlen("service-started web "));
	init = init_host_pid();
	expect_msg("retained");
	/* The service's child may still be forking: wait for both. */
	while (left_ms() > 0 && (n = ns_procs(init, pids, sids, 8)) != 2)
		usleep(10000);
	cr_assert_eq(n, 2, "%d processes retained, want the service and its child", n);
	cr_assert_eq(sids[0], sids[1], "not one session");
	cr_assert(sids[0] == pids[0] || sids[0] == pids[1], "not the service's session");
	cr_assert_eq(finish(), 7);
	/* The leader's end is reported first; its child, signalled with it,
	 * may still be dying when the shutdown sweep looks (then "term"). */
	while (R.nmsgs > 7 && fnmatch("term [0-9]* sleep", R.msgs[R.nmsgs - 2], 0) == 0) {
		memmove(R.msgs[R.nmsgs - 2], R.msgs[R.nmsgs - 1], sizeof(R.msgs[0]));
		R.nmsgs--;
	}
	assert_msgs(WANT("service-started web [0-9]*", "started [0-9]*", "exit 7",
			 "term [0-9]* sleep", "retained",
			 "service-ended web lease-expired signal:15", "done"));
	cr_assert_str_neq(R.msgs[3], svc, "the service was swept with the workload");
	cr_assert_eq(ns_procs(init, pids, sids, 8), 0, "a process outlived init");
}

/* "stop" in the retained phase ends the service ("stopped"); the exit
 * status stays the workload's. */
Test(init, service_stopped_when_retained_pid1)
{
	start_opts(true, NULL, false, CMD("--service", "web", "30000", "2", "sleep", "30"),
		   CMD("sh", "-c", "exit 4"));
	expect_msg("retained");
	cr_assert_eq(send(R.sock, "stop", 4, 0), 4);
	cr_assert_eq(finish(), 4);
	assert_msgs(WANT("service-started web [0-9]*", "started [0-9]*", "exit 4", "retained",
			 "service-ended web stopped signal:15", "term [0-9]* sleep", "done"));
}

/* Without a pid namespace nothing is retained: a leased service ends with
 * the workload. */
Test(init, service_not_retained_without_pidns)
{
	start_opts(false, NULL, false, CMD("--service", "web", "30000", "2", "sleep", "30"),
		   CMD("sh", "-c", "exit 4"));
	cr_assert_eq(finish(), 4);
	assert_msgs(WANT("service-started web [0-9]*", "started [0-9]*", "exit 4",
			 "term [0-9]* sleep", "service-ended web main-ended signal:15", "done"));
}

/* A service that cannot be executed is reported; the workload still runs. */
static void service_exec_error(bool pid1)
{
	start_opts(pid1, NULL, true,
		   CMD("--service", "web", "0", "1", "paddock-test-no-such-command"),
		   CMD("sh", "-c", "echo ok"));
	expect_line("ok\n");
	cr_assert_eq(finish(), 0);
	assert_msgs(WANT("service-ended web exec-error 2", "started [0-9]*", "exit 0", "done"));
}

Test(init, service_exec_error)
{
	service_exec_error(false);
}

Test(init, service_exec_error_pid1)
{
	service_exec_error(true);
}

/* Bad --service arguments: exit 125 with one line on stderr, nothing run. */
Test(init, service_bad_arguments)
{
	static const char *const bad[] = {
	    "--service",
	    "--service web",
	    "--service web 0",
	    "--service web 0 1",
	    "--service web 0 1 true",
	    "--service web x 1 true -- true",
	    "--service web -1 1 true -- true",
	    "--service web 2592000001 1 true -- true",
	    "--service web 0 0 -- true",
	    "--service web 0 257 true -- true",
	    "--service web 0 9 true -- true",
	    "--service '' 0 1 true -- true",
	    "--service 'a b' 0 1 true -- true",
	};
	char cmd[1024], out[512];

	need_init(false);
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		size_t len = 0, n;
		FILE *f;
		int st;

		snprintf(cmd, sizeof(cmd), "%s %s 2>&1", INIT, bad[i]);
		f = popen(cmd, "re");
		cr_assert_not_null(f);
		while ((n = fread(out + len, 1, sizeof(out) - 1 - len, f)) > 0)
			len += n;
		out[len] = '\0';
		st = pclose(f);
		cr_assert_eq(WEXITSTATUS(st), 125, "%s: status %d", bad[i], WEXITSTATUS(st));
		cr_assert(len > 0 && out[len - 1] == '\n' && !memchr(out, '\n', len - 1),
			  "%s: not one line: \"%s\"", bad[i], out);
		cr_assert_eq(strncmp(out, "paddock-init: ", 14), 0, "%s: \"%s\"", bad[i], out);
	}
	/* 17 services: one too many. */
	snprintf(cmd, sizeof(cmd), "%s", INIT);
	for (int i = 0; i < 17; i++)
		snprintf(cmd + strlen(cmd), sizeof(cmd) - strlen(cmd), " --service s%d 0 1 true",
			 i);
	strcat(cmd, " -- true 2>/dev/null");
	cr_assert_eq(WEXITSTATUS(system(cmd)), 125);
	/* 16 are fine; so is a lease of 30 days, the longest. */
	*strstr(cmd, " --service s16") = '\0';
	strcat(cmd, " --service long 2592000000 1 true -- sh -c 'exit 5'");
	strcat(cmd, " 2>/dev/null");
	cr_assert_eq(WEXITSTATUS(system(cmd)), 125, "17 again: %s", cmd);
	*strstr(cmd, " --service s15") = '\0';
	strcat(cmd, " --service long 2592000000 1 true -- sh -c 'exit 5'");
	cr_assert_eq(WEXITSTATUS(system(cmd)), 5, "16: %s", cmd);
}

/* --deadline-ms: init ends the sandbox by itself at the deadline (the
 * supervisor may be stopped), says "deadline", and the workload gets the
 * usual SIGTERM. Not before it: its timer first fires DL_WARM_MS (200 ms)
 * before, for the warm-up of /proc's listing, which must not end anything
 * (a deadline closer than that has no warm-up: in_ms 100). The warm-up's
 * own effect, a cheaper listing, is not visible here: bench/ expiry. */
static void deadline(bool pid1, int in_ms)
{
	char at[32];
	struct timespec ts;
	long long at_ms;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	at_ms = (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000 + in_ms;
	snprintf(at, sizeof(at), "%lld", at_ms);
	start_opts(pid1, "500", false, (const char *const[]){"--deadline-ms", at, NULL},
		   CMD("sleep", "100"));
	cr_assert_eq(finish(), 143);
	clock_gettime(CLOCK_MONOTONIC, &ts);
	cr_assert_geq((long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000, at_ms,
		      "the sandbox ended before its deadline");
	if (pid1)
		assert_msgs(
		    WANT("started [0-9]*", "deadline", "signal 15", "term * sleep", "done"));
	else
		assert_msgs(
		    WANT("started [0-9]*", "deadline", "term * sleep", "signal 15", "done"));
}

Test(init, deadline_ends_the_sandbox)
{
	deadline(false, 300);
}

Test(init, deadline_ends_the_sandbox_pid1)
{
	deadline(true, 300);
}

Test(init, deadline_too_close_for_a_warm_up_pid1)
{
	deadline(true, 100);
}

/* The twin: without --deadline-ms nothing ends the workload by itself. */
Test(init, no_deadline_no_end)
{
	start(false, NULL, false, CMD("sh", "-c", "sleep 1; exit 4"));
	cr_assert_eq(finish(), 4);
	assert_msgs(WANT("started [0-9]*", "exit 4", "done"));
}

Test(init, bad_new_options)
{
	need_init(false);
	cr_assert_eq(WEXITSTATUS(system(INIT " --deadline-ms 0 true 2>/dev/null")), 125);
	cr_assert_eq(WEXITSTATUS(system(INIT " --deadline-ms x true 2>/dev/null")), 125);
	cr_assert_eq(WEXITSTATUS(system(INIT " --deadline-ms -5 true 2>/dev/null")), 125);
	cr_assert_eq(WEXITSTATUS(system(INIT " --service-stdout-fd 2 true 2>/dev/null")), 125);
	cr_assert_eq(WEXITSTATUS(system(INIT " --service-stderr-fd x true 2>/dev/null")), 125);
	/* --tty on a stdin that is no terminal: one line, 125, nothing run. */
	cr_assert_eq(WEXITSTATUS(system(INIT " --tty true </dev/null 2>/dev/null")), 125);
}

/* SIGINT reaches the workload's whole process group, as a terminal's ^C
 * would: the outer sh traps it, the inner one (its sleep) ends at once.
 * Sent to the workload alone (the old forwarding) the sleep would run on
 * for 5 s, past the test's deadline. */
static void sigint_to_group(bool pid1)
{
	char path[64], buf[512];
	size_t len = 0;
	ssize_t n;
	pid_t target;
	FILE *f;

	start(pid1, NULL, true,
	      CMD("sh", "-c",
		  "trap 'echo outer-int' INT; sh -c 'echo ready; exec sleep 5'; echo after=$?"));
	expect_line("ready\n");
	target = R.pid;
	if (pid1) {
		snprintf(path, sizeof(path), "/proc/%d/task/%d/children", R.pid, R.pid);
		f = fopen(path, "re");
		cr_assert_not_null(f);
		cr_assert_eq(fscanf(f, "%d", &target), 1);
		fclose(f);
	}
	cr_assert_eq(kill(target, SIGINT), 0);
	cr_assert_eq(finish(), 0);
	while (len < sizeof(buf) - 1 && (n = read(R.out, buf + len, sizeof(buf) - 1 - len)) > 0)
		len += (size_t)n;
	buf[len] = '\0';
	cr_assert(strstr(buf, "after=130"), "%s", buf);
}

Test(init, sigint_reaches_the_whole_group)
{
	sigint_to_group(false);
}

Test(init, sigint_reaches_the_whole_group_pid1)
{
	sigint_to_group(true);
}

/* A service gets stdin /dev/null and the given output fds, never init's
 * own 0-2 (the relay of the caller's stdio). */
Test(init, service_stdio)
{
	char dir[] = "/tmp/paddock-unit.XXXXXX", out[4096 + 32], buf[512] = "";
	int fd, n;

	cr_assert_not_null(mkdtemp(dir));
	snprintf(out, sizeof(out), "%s/out", dir);
	fd = open(out, O_WRONLY | O_CREAT | O_APPEND, 0600);
	cr_assert_geq(fd, 0);
	/* SVC_FD in init (start_opts keeps only it, 0-2 and the socket). */
	cr_assert_eq(dup2(fd, SVC_FD), SVC_FD);
	close(fd);
	start_opts(false, NULL, true,
		   (const char *const[]){"--service-stdout-fd", SVC_FD_S, "--service-stderr-fd",
					 SVC_FD_S, "--service", "svc", "0", "3", "sh", "-c",
					 "read x; echo read=$? x=$x; ls -l /proc/self/fd/0 >&2",
					 NULL},
		   CMD("sh", "-c", "sleep 0.5; echo main"));
	close(SVC_FD);
	expect_line("main\n");
	cr_assert_eq(finish(), 0);
	fd = open(out, O_RDONLY);
	cr_assert_geq(fd, 0);
	n = (int)read(fd, buf, sizeof(buf) - 1);
	close(fd);
	buf[n > 0 ? n : 0] = '\0';
	unlink(out);
	rmdir(dir);
	cr_assert(strstr(buf, "read=1 x=\n"), "%s", buf);
	cr_assert(strstr(buf, "-> /dev/null"), "%s", buf);
}
