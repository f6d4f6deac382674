/* Integration: paddock exec - a command run in a live session, as an
 * unprivileged user, checked from outside where possible: the exec'd
 * process is found in the host's /proc (by a marker in its argv, and in
 * the session's pid namespace) and compared with the session's PID 1.
 *
 * Every test has its own registry (XDG_RUNTIME_DIR in its temporary tree)
 * and its processes carry its markers: h_fini SIGKILLs them by pid even
 * when an assertion failed. The two-user test needs run.sh as root (the
 * second user's session, PADDOCK_TEST_OTHER_*); without it, it skips. */
#include "harness.h"

#include <sys/socket.h>
#include <sys/un.h>

TestSuite(exec, .init = h_init, .fini = h_fini, .timeout = 90);

static const char *js(const struct h_sworld *s, const char *id, const char *expr)
{
	return h_session_json(s, id, expr);
}

/* paddock run --detach [EXTRA...] -- sh -c SCRIPT MARKER, with the probe
 * at /probe: the id. extra is NULL-terminated (may be NULL). */
static const char *detach(const struct h_sworld *s, const char *const *extra, const char *script,
			  const char *marker)
{
	const char *args[32] = {"run", "--detach", "--ro-bind",
				h_fmt("%s:/probe", h_helpers_dir())};
	size_t n = 4;
	struct h_proc p;

	for (; extra && *extra; extra++)
		args[n++] = *extra;
	args[n++] = "--";
	args[n++] = "sh";
	args[n++] = "-c";
	args[n++] = script;
	args[n++] = marker;
	args[n] = NULL;
	h_run_paddock(&p, s->w.ws, args);
	cr_assert_eq(p.status, 0, H_SHOW(&p));
	cr_assert_eq(strlen(p.out_text), 13, "one line, the id: " H_FMT, H_ARGS(&p));
	return h_fmt("%.12s", p.out_text);
}

/* Field 22 of /proc/PID/stat, 0 when the process is gone or a zombie. */
static unsigned long long start_time(pid_t pid)
{
	char *stat = h_read_file(h_fmt("/proc/%d/stat", (int)pid), NULL);
	const char *p = stat ? strrchr(stat, ')') : NULL;
	unsigned long long v = 0;

	if (!p || p[2] == 'Z' || p[2] == 'X')
		return 0;
	for (int field = 3; field <= 22 && p; field++)
		p = strchr(p + 1, ' ');
	if (p)
		v = strtoull(p + 1, NULL, 10);
	return v;
}

static const char *ns_link(pid_t pid, const char *ns)
{
	char buf[128];
	ssize_t n = readlink(h_fmt("/proc/%d/ns/%s", (int)pid, ns), buf, sizeof(buf) - 1);

	if (n < 0)
		return h_fmt("(%s)", strerror(errno));
	return h_fmt("%.*s", (int)n, buf);
}

static pid_t init_pid(const struct h_sworld *s, const char *id)
{
	return atoi(js(s, id, "d['init']['pid']"));
}

/* Host processes carrying marker inside the session's pid namespace
 * (which leaves out the paddock exec client, whose argv holds it too);
 * waits up to 5 s for at least want of them. */
static size_t in_session(pid_t init, const char *marker, size_t want, pid_t *out,
			 unsigned long long *starts)
{
	const char *pidns = ns_link(init, "pid");
	size_t n = 0;

	for (int i = 0; i < 250; i++) {
		pid_t pids[64];
		size_t found = h_marker_pids(marker, pids, 64);

		n = 0;
		for (size_t k = 0; k < found; k++) {
			if (strcmp(ns_link(pids[k], "pid"), pidns) != 0)
				continue;
			starts[n] = start_time(pids[k]);
			if (starts[n])
				out[n++] = pids[k];
		}
		if (n >= want)
			break;
		h_sleep_ms(20);
	}
	return n;
}

static void assert_one_line_error(const struct h_proc *p, const char *expect)
{
	cr_assert_eq(p->status, 125, H_SHOW(p));
	cr_assert_eq(h_count_lines(p->err_text), 1, "one line: " H_FMT, H_ARGS(p));
	cr_assert(strncmp(p->err_text, "paddock: ", 9) == 0, H_SHOW(p));
	cr_assert(h_contains(p->err_text, expect), "expected \"%s\": " H_FMT, expect, H_ARGS(p));
}

static bool gone_within(pid_t pid, unsigned long long start, int ms)
{
	for (int waited = 0; waited <= ms; waited += 20) {
		if (start_time(pid) != start)
			return true;
		h_sleep_ms(20);
	}
	return false;
}

/* ------------------------------------------------------ inside the session */

Test(exec, runs_in_the_sessions_namespaces_seen_from_outside)
{
	static const char *const nss[] = {"pid", "user", "mnt", "net", "ipc", "uts", "cgroup"};
	struct h_sworld s = h_sworld();
	const char *m = h_marker(), *m2 = h_marker();
	const char *id = detach(&s, NULL, "exec sleep 300 $0", m);
	pid_t init = init_pid(&s, id), pid;
	unsigned long long start;
	struct h_proc e, p;

	H_PADDOCK_START(&e, s.w.ws, "exec", id, "--", "sleep", "300", m2);
	cr_assert_eq(in_session(init, m2, 1, &pid, &start), 1, "no exec'd process in the session");
	for (size_t i = 0; i < sizeof(nss) / sizeof(nss[0]); i++) {
		cr_assert_str_eq(ns_link(pid, nss[i]), ns_link(init, nss[i]), "%s namespace",
				 nss[i]);
		cr_assert_str_neq(ns_link(pid, nss[i]), ns_link(getpid(), nss[i]),
				  "%s namespace is the host's", nss[i]);
	}
	/* The same root (the sandbox's), and nothing of the host's open. */
	cr_assert_str_eq(h_read_file(h_fmt("/proc/%d/mountinfo", (int)pid), NULL),
			 h_read_file(h_fmt("/proc/%d/mountinfo", (int)init), NULL));
	cr_assert_str_eq(h_list_dir(h_fmt("/proc/%d/fd", (int)pid)), "0\n1\n2\n");
	/* Its parent is not the supervisor: the helper, itself nobody's
	 * child of ours. */
	H_PADDOCK(&p, s.w.ws, "stop", "--grace", "0s", id);
	cr_assert_eq(p.status, 0, H_SHOW(&p));
	h_wait(&e, 10000);
	cr_assert(e.status == 137 || e.status == 143, H_SHOW(&e));
	cr_assert(gone_within(pid, start, 3000), "the exec'd process outlived the session");
}

/* The twin of the test above: with --weaken exec-host-mounts the exec'd
 * command joins every namespace of the session but the mount namespace,
 * which stays the host's (so the knob really opens the host's files to
 * it). */
Test(exec, weaken_exec_host_mounts_keeps_the_host_mount_namespace)
{
	struct h_sworld s = h_sworld();
	const char *m = h_marker(), *m2 = h_marker();
	/* With Landlock on, the rules' paths are opened in the host's view
	 * (the built-in policy's /home/sandbox is not there: the command is
	 * refused, fail-closed); HB-03 runs the pair too. */
	const char *extra[] = {"--weaken", "exec-host-mounts", "--weaken", "no-landlock", NULL};
	const char *id = detach(&s, extra, "exec sleep 300 $0", m);
	pid_t init = init_pid(&s, id), pid;
	unsigned long long start;
	struct h_proc e, p;

	H_PADDOCK_START(&e, s.w.ws, "exec", id, "--", "sleep", "300", m2);
	cr_assert_eq(in_session(init, m2, 1, &pid, &start), 1, "no exec'd process in the session");
	cr_assert_str_eq(ns_link(pid, "mnt"), ns_link(getpid(), "mnt"),
			 "the weakening is not real: the sandbox's mount namespace");
	cr_assert_str_neq(ns_link(pid, "mnt"), ns_link(init, "mnt"));
	cr_assert_str_eq(ns_link(pid, "pid"), ns_link(init, "pid"));
	cr_assert_str_eq(ns_link(pid, "user"), ns_link(init, "user"));
	H_PADDOCK(&p, s.w.ws, "stop", "--grace", "0s", id);
	cr_assert_eq(p.status, 0, H_SHOW(&p));
	h_wait(&e, 10000);
	cr_assert(gone_within(pid, start, 3000), "the exec'd process outlived the session");
}

Test(exec, gets_the_workloads_hardening_environment_and_cwd)
{
	struct h_sworld s = h_sworld();
	const char *m = h_marker();
	const char *id = detach(&s, NULL, "exec sleep 300 $0", m);
	char real[PATH_MAX];
	struct h_proc p;

	cr_assert_not_null(realpath(s.w.ws, real));
	setenv("PADDOCK_TEST_HOST_ONLY", "leak", 1);
	H_PADDOCK(&p, s.w.ws, "exec", id, "--", "/probe/probe", "w:/usr/paddock-new",
		  "w:/etc/paddock-new", "w:/tmp/ok");
	cr_assert_eq(p.status, 0, H_SHOW(&p));
	cr_assert_str_eq(h_kv(p.out_text, "CapEff"), "0000000000000000", H_SHOW(&p));
	cr_assert_str_eq(h_kv(p.out_text, "CapBnd"), "0000000000000000", H_SHOW(&p));
	cr_assert_str_eq(h_kv(p.out_text, "NoNewPrivs"), "1", H_SHOW(&p));
	cr_assert_str_eq(h_kv(p.out_text, "Seccomp"), "2", H_SHOW(&p));
	cr_assert_str_eq(h_kv(p.out_text, "uid"), h_fmt("%u", (unsigned)getuid()), H_SHOW(&p));
	cr_assert_str_eq(h_kv(p.out_text, "fds"), "0,1,2", H_SHOW(&p));
	cr_assert_str_eq(h_kv(p.out_text, "w:/usr/paddock-new"), "EROFS", H_SHOW(&p));
	cr_assert_str_eq(h_kv(p.out_text, "w:/etc/paddock-new"), "EROFS", H_SHOW(&p));
	cr_assert_str_eq(h_kv(p.out_text, "w:/tmp/ok"), "OK", H_SHOW(&p));

	/* The policy's environment (cleared, its PATH and HOME), the
	 * policy's cwd; --setenv adds and replaces. */
	H_PADDOCK(&p, s.w.ws, "exec", id, "sh", "-c",
		  "echo \"home=$HOME path=$PATH foo=$FOO host=${PADDOCK_TEST_HOST_ONLY-unset}\"; "
		  "echo cwd=$(pwd); echo to-stderr >&2");
	cr_assert_eq(p.status, 0, H_SHOW(&p));
	cr_assert(h_contains(p.out_text, "home=/home/sandbox path=/usr/local/bin:/usr/bin:/bin "
					 "foo= host=unset\n"),
		  H_SHOW(&p));
	cr_assert(h_contains(p.out_text, h_fmt("cwd=%s\n", real)), H_SHOW(&p));
	cr_assert_str_eq(p.err_text, "to-stderr\n", H_SHOW(&p));
	H_PADDOCK(&p, s.w.ws, "exec", "--setenv", "FOO=bar=baz", "--setenv", "HOME=/tmp", "--cwd",
		  "/tmp", id, "--", "sh", "-c", "echo \"home=$HOME foo=$FOO\"; echo cwd=$(pwd)");
	cr_assert_eq(p.status, 0, H_SHOW(&p));
	cr_assert_str_eq(p.out_text, "home=/tmp foo=bar=baz\ncwd=/tmp\n", H_SHOW(&p));
	H_PADDOCK(&p, s.w.ws, "stop", "--grace", "0s", id);
	cr_assert_eq(p.status, 0, H_SHOW(&p));
}

/* Landlock: the command gets a domain of its own (it is created from
 * outside), so with signal scoping (ABI 6) it cannot signal the workload's
 * processes, PID 1 included, though it has their uid in their namespaces;
 * without Landlock (the control: --weaken no-landlock) it can. */
Test(exec, landlock_applies_to_the_exec_command)
{
	struct h_sworld s = h_sworld();
	const char *m = h_marker();
	const char *weak[] = {"--weaken", "no-landlock", NULL};
	long abi = syscall(444 /* landlock_create_ruleset */, NULL, 0, 1UL);
	const char *ids[2];

	if (abi < 6)
		h_skip("Landlock ABI %ld has no signal scope", abi);
	ids[0] = detach(&s, NULL, "exec sleep 300 $0", m);
	ids[1] = detach(&s, weak, "exec sleep 300 $0", m);
	for (int i = 0; i < 2; i++) {
		struct h_proc p;

		H_PADDOCK(&p, s.w.ws, "exec", ids[i], "--", "sh", "-c",
			  "kill -0 1 && echo signalled");
		if (i == 0) {
			cr_assert_neq(p.status, 0, H_SHOW(&p));
			cr_assert(h_contains(p.err_text, "Operation not permitted"), H_SHOW(&p));
		} else {
			cr_assert_eq(p.status, 0, H_SHOW(&p));
			cr_assert_str_eq(p.out_text, "signalled\n", H_SHOW(&p));
		}
		H_PADDOCK(&p, s.w.ws, "stop", "--grace", "0s", ids[i]);
		cr_assert_eq(p.status, 0, H_SHOW(&p));
	}
}

Test(exec, exit_statuses_are_the_commands)
{
	struct h_sworld s = h_sworld();
	const char *m = h_marker();
	const char *id = detach(&s, NULL, "exec sleep 300 $0", m);
	struct h_proc p;

	H_PADDOCK(&p, s.w.ws, "exec", id, "--", "true");
	cr_assert_eq(p.status, 0, H_SHOW(&p));
	cr_assert_str_eq(p.err_text, "", H_SHOW(&p));
	H_PADDOCK(&p, s.w.ws, "exec", id, "--", "sh", "-c", "echo three; exit 3");
	cr_assert_eq(p.status, 3, H_SHOW(&p));
	cr_assert_str_eq(p.out_text, "three\n", H_SHOW(&p));
	H_PADDOCK(&p, s.w.ws, "exec", id, "--", "sh", "-c", "kill -TERM $$");
	cr_assert_eq(p.status, 143, H_SHOW(&p));
	H_PADDOCK(&p, s.w.ws, "exec", id, "--", "sh", "-c", "kill -KILL $$");
	cr_assert_eq(p.status, 137, H_SHOW(&p));
	h_write_file(h_join(s.w.ws, "notexec"), "echo ran\n", 0644);
	H_PADDOCK(&p, s.w.ws, "exec", id, "--", "./notexec");
	cr_assert_eq(p.status, 126, H_SHOW(&p));
	cr_assert_str_eq(p.err_text, "paddock: ./notexec: Permission denied\n", H_SHOW(&p));
	H_PADDOCK(&p, s.w.ws, "exec", id, "--", "/nonexistent/cmd");
	cr_assert_eq(p.status, 127, H_SHOW(&p));
	cr_assert_str_eq(p.err_text, "paddock: /nonexistent/cmd: No such file or directory\n",
			 H_SHOW(&p));
	H_PADDOCK(&p, s.w.ws, "exec", id, "no-such-command-paddock");
	cr_assert_eq(p.status, 127, H_SHOW(&p));
	H_PADDOCK(&p, s.w.ws, "stop", "--grace", "0s", id);
	cr_assert_eq(p.status, 0, H_SHOW(&p));
}

/* SIGINT to the client reaches the command; a client that dies takes its
 * command with it. */
Test(exec, signals_are_passed_on_and_the_command_dies_with_its_client)
{
	struct h_sworld s = h_sworld();
	const char *m = h_marker(), *m2 = h_marker(), *m3 = h_marker();
	const char *id = detach(&s, NULL, "exec sleep 300 $0", m);
	pid_t init = init_pid(&s, id), pid;
	unsigned long long start;
	struct h_proc e, p;

	H_PADDOCK_START(&e, s.w.ws, "exec", id, "--", "sleep", "300", m2);
	cr_assert_eq(in_session(init, m2, 1, &pid, &start), 1);
	cr_assert_eq(kill(e.pid, SIGINT), 0);
	h_wait(&e, 10000);
	cr_assert_eq(e.status, 130, H_SHOW(&e));
	cr_assert(gone_within(pid, start, 3000));

	H_PADDOCK_START(&e, s.w.ws, "exec", id, "--", "sleep", "300", m3);
	cr_assert_eq(in_session(init, m3, 1, &pid, &start), 1);
	cr_assert_eq(kill(e.pid, SIGKILL), 0);
	h_wait(&e, 10000);
	cr_assert(gone_within(pid, start, 3000), "the command outlived its client");
	/* The session itself runs on. */
	cr_assert_str_eq(js(&s, id, "d['state']"), "\"running\"");
	cr_assert_neq(start_time(init), 0);
	H_PADDOCK(&p, s.w.ws, "stop", "--grace", "0s", id);
	cr_assert_eq(p.status, 0, H_SHOW(&p));
}

/* A command that ends without reading its stdin while its client still
 * sends: the relay's write into the ended command's pipe is an EPIPE, not
 * the relay's end (SIGPIPE stays blocked in it), so the client gets the
 * command's status, each time. */
Test(exec, a_command_that_leaves_its_input_unread_still_reports)
{
	struct h_sworld s = h_sworld();
	const char *id = detach(&s, NULL, "exec sleep 300 $0", h_marker());
	const char *cmd =
	    h_fmt("for i in 1 2 3 4 5 6 7 8; do head -c 4000000 /dev/zero | %s exec %s "
		  "-- sh -c 'exit 7'; echo status=$?; done",
		  h_paddock(), id);
	char *argv[] = {"/bin/sh", "-c", (char *)cmd, NULL};
	struct h_proc p;

	h_spawn(&p, s.w.ws, argv, NULL);
	h_wait(&p, H_TIMEOUT_MS);
	cr_assert_eq(p.status, 0, H_SHOW(&p));
	cr_assert_str_eq(p.out_text,
			 "status=7\nstatus=7\nstatus=7\nstatus=7\nstatus=7\nstatus=7\nstatus=7\n"
			 "status=7\n",
			 H_SHOW(&p));
	H_PADDOCK(&p, s.w.ws, "stop", "--grace", "0s", id);
	cr_assert_eq(p.status, 0, H_SHOW(&p));
}

/* Requests at once (as many as the control socket takes) are each a
 * command of the one zygote: all answer, and each command's parent (in
 * the session's pid namespace) is the zygote that was there before (a
 * relay that the keeper sent while a request came is no sign of the
 * keeper's end). */
Test(exec, concurrent_requests_share_the_one_zygote)
{
	struct h_sworld s = h_sworld();
	const char *id = detach(&s, NULL, "exec sleep 300 $0", h_marker());
	struct h_proc c[12], p;
	const char *zygote;

	H_PADDOCK(&p, s.w.ws, "exec", id, "--", "sh", "-c", "echo $PPID");
	cr_assert_eq(p.status, 0, H_SHOW(&p));
	zygote = p.out_text;
	cr_assert_gt(atoi(zygote), 1, H_SHOW(&p));
	for (int round = 0; round < 5; round++) {
		for (int i = 0; i < 12; i++)
			H_PADDOCK_START(&c[i], s.w.ws, "exec", id, "--", "sh", "-c",
					h_fmt("echo $PPID; exit %d", i));
		for (int i = 0; i < 12; i++) {
			h_wait(&c[i], H_TIMEOUT_MS);
			cr_assert_eq(c[i].status, i, "round %d, exec %d: " H_FMT, round, i,
				     H_ARGS(&c[i]));
			cr_assert_str_eq(c[i].out_text, zygote, "another parent: " H_FMT,
					 H_ARGS(&c[i]));
		}
	}
	H_PADDOCK(&p, s.w.ws, "stop", "--grace", "0s", id);
	cr_assert_eq(p.status, 0, H_SHOW(&p));
}

/* ------------------------------------------------ ending with the session */

/* An exec'd command, its background child and a double-forked setsid
 * descendant: all in the session, all gone once stop returns. */
static void exec_tree(const struct h_sworld *s, const char *id, const char *m2, struct h_proc *e,
		      pid_t *pids, unsigned long long *starts)
{
	H_PADDOCK_START(e, s->w.ws, "exec", id, "--", "sh", "-c",
			"(setsid sleep 300 $0 &); sleep 300 $0 & exec sleep 300 $0", m2);
	cr_assert_eq(in_session(init_pid(s, id), m2, 3, pids, starts), 3,
		     "the exec'd command did not start its sleeps");
}

Test(exec, stop_ends_exec_processes_seen_from_outside)
{
	struct h_sworld s = h_sworld();
	const char *m = h_marker(), *m2 = h_marker();
	const char *id = detach(&s, NULL, "exec sleep 300 $0", m);
	pid_t pids[64];
	unsigned long long starts[64];
	struct h_proc e, p;

	exec_tree(&s, id, m2, &e, pids, starts);
	H_PADDOCK(&p, s.w.ws, "stop", "--grace", "1s", id);
	cr_assert_eq(p.status, 0, H_SHOW(&p));
	for (int k = 0; k < 3; k++)
		cr_assert(gone_within(pids[k], starts[k], 4000), "process %d outlived the stop",
			  (int)pids[k]);
	h_wait(&e, 10000);
	cr_assert(e.status == 143 || e.status == 137, H_SHOW(&e));
	cr_assert_str_eq(e.err_text, "", H_SHOW(&e));
}

Test(exec, expiry_and_the_workloads_end_end_exec_processes)
{
	struct h_sworld s = h_sworld();
	const char *m = h_marker(), *m2 = h_marker(), *m3 = h_marker();
	const char *ttl[] = {"--ttl", "2s", NULL};
	const char *id = detach(&s, ttl, "exec sleep 300 $0", m);
	const char *id2;
	pid_t pids[64];
	unsigned long long starts[64];
	struct h_proc e, w;

	exec_tree(&s, id, m2, &e, pids, starts);
	h_wait(&e, 15000);
	cr_assert(e.status == 143 || e.status == 137, H_SHOW(&e));
	cr_assert_lt(e.secs, 8.0, H_SHOW(&e));
	for (int k = 0; k < 3; k++)
		cr_assert(gone_within(pids[k], starts[k], 5000), "process %d outlived the TTL",
			  (int)pids[k]);
	/* The session's end is written after its last process is gone. */
	H_PADDOCK(&w, s.w.ws, "wait", id);
	cr_assert_str_eq(js(&s, id, "d['ended']"), "\"expired\"");

	/* The main command's end ends them too. */
	id2 = detach(&s, NULL, "sleep 2", m);
	exec_tree(&s, id2, m3, &e, pids, starts);
	h_wait(&e, 15000);
	cr_assert(e.status == 143 || e.status == 137, H_SHOW(&e));
	for (int k = 0; k < 3; k++)
		cr_assert(gone_within(pids[k], starts[k], 5000), "process %d outlived the workload",
			  (int)pids[k]);
	H_PADDOCK(&w, s.w.ws, "wait", id2);
	cr_assert_str_eq(js(&s, id2, "(d['ended'], d['status'])"), "[\"exit\", 0]");
}

/* --------------------------------------------------------------- refusals */

Test(exec, bad_inputs_and_dead_sessions_are_one_line_errors_and_start_nothing)
{
	struct h_sworld s = h_sworld();
	const char *m = h_marker(), *m2 = h_marker();
	const char *weak[] = {"--weaken", "no-pidns", NULL};
	const char *id = detach(&s, NULL, "exec sleep 300 $0", m);
	const char *ended = detach(&s, NULL, "exit 0", m);
	const char *nopid = detach(&s, weak, "exec sleep 300 $0", m);
	pid_t pids[8];
	struct h_proc p;

	H_PADDOCK(&p, s.w.ws, "exec", "0123456789ab", "--", "sh", "-c", "echo ran", m2);
	assert_one_line_error(&p, "no such session: 0123456789ab");
	H_PADDOCK(&p, s.w.ws, "exec", "nosuchname", "sh", "-c", "echo ran", m2);
	assert_one_line_error(&p, "no such session: nosuchname");
	H_PADDOCK(&p, s.w.ws, "exec");
	assert_one_line_error(&p, "no session given");
	H_PADDOCK(&p, s.w.ws, "exec", id);
	assert_one_line_error(&p, "no command given");
	H_PADDOCK(&p, s.w.ws, "exec", id, "--");
	assert_one_line_error(&p, "no command given");
	H_PADDOCK(&p, s.w.ws, "exec", "--setenv", "FOO", id, "sh", "-c", "echo ran", m2);
	assert_one_line_error(&p, "--setenv FOO: expected NAME=VALUE");
	H_PADDOCK(&p, s.w.ws, "exec", "--setenv", "1X=y", id, "sh", "-c", "echo ran", m2);
	assert_one_line_error(&p, "--setenv 1X=y: invalid variable name");
	H_PADDOCK(&p, s.w.ws, "exec", "--cwd", "tmp", id, "sh", "-c", "echo ran", m2);
	assert_one_line_error(&p, "--cwd tmp: not an absolute path");
	H_PADDOCK(&p, s.w.ws, "exec", "--cwd");
	assert_one_line_error(&p, "needs an argument");
	H_PADDOCK(&p, s.w.ws, "exec", "--grace", "1s", id, "true");
	assert_one_line_error(&p, "unknown option");
	/* Checked inside: a cwd that does not exist there. */
	H_PADDOCK(&p, s.w.ws, "exec", "--cwd", "/nonexistent", id, "sh", "-c", "echo ran", m2);
	assert_one_line_error(&p, "cwd /nonexistent: No such file or directory");
	/* A directory as stdin would be a way out of the root. */
	H_CMD(&p, s.w.ws, "/bin/sh", "-c", "exec \"$0\" exec \"$1\" sh -c 'echo ran' <\"$2\"",
	      h_paddock(), id, s.w.base);
	assert_one_line_error(&p, "fd 0 of the client is a directory");
	/* An ended session, and one without a pid namespace. */
	for (int i = 0; i < 250 && !h_contains(js(&s, ended, "d['state']"), "ended"); i++)
		h_sleep_ms(20);
	H_PADDOCK(&p, s.w.ws, "exec", ended, "sh", "-c", "echo ran", m2);
	assert_one_line_error(&p, h_fmt("session %s has ended", ended));
	H_PADDOCK(&p, s.w.ws, "exec", nopid, "sh", "-c", "echo ran", m2);
	assert_one_line_error(&p, h_fmt("session %s has no pid namespace (--weaken no-pidns); "
					"exec would escape its lifetime",
					nopid));
	/* Too long for one request. */
	{
		char *big = h_keep(malloc(70000));

		memset(big, 'x', 69999);
		big[69999] = '\0';
		H_PADDOCK(&p, s.w.ws, "exec", id, "echo", big);
		assert_one_line_error(&p, "argument list too long");
	}
	cr_assert_eq(h_marker_pids(m2, pids, 8), 0, "something ran");
	H_PADDOCK(&p, s.w.ws, "stop", "--grace", "0s", id);
	cr_assert_eq(p.status, 0, H_SHOW(&p));
	H_PADDOCK(&p, s.w.ws, "stop", "--grace", "0s", nopid);
	cr_assert_eq(p.status, 0, H_SHOW(&p));
}

/* A raw request on our own socket that paddock exec would never send. */
static const char *raw_request(const char *socket_path, const char *pkt, size_t len, bool fds)
{
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	union {
		char buf[CMSG_SPACE(3 * sizeof(int))];
		struct cmsghdr align;
	} u;
	int stdio[3] = {0, 1, 2};
	struct iovec iov = {.iov_base = (void *)pkt, .iov_len = len};
	struct msghdr mh = {.msg_iov = &iov, .msg_iovlen = 1};
	int fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
	char reply[512];
	ssize_t n;

	cr_assert_geq(fd, 0);
	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", socket_path);
	cr_assert_eq(connect(fd, (struct sockaddr *)&sa, sizeof(sa)), 0, "connect %s: %s",
		     socket_path, strerror(errno));
	if (fds) {
		struct cmsghdr *c;

		memset(u.buf, 0, sizeof(u.buf));
		mh.msg_control = u.buf;
		mh.msg_controllen = sizeof(u.buf);
		c = CMSG_FIRSTHDR(&mh);
		c->cmsg_level = SOL_SOCKET;
		c->cmsg_type = SCM_RIGHTS;
		c->cmsg_len = CMSG_LEN(sizeof(stdio));
		memcpy(CMSG_DATA(c), stdio, sizeof(stdio));
	}
	cr_assert_geq(sendmsg(fd, &mh, MSG_NOSIGNAL), 0, "sendmsg: %s", strerror(errno));
	n = recv(fd, reply, sizeof(reply) - 1, 0);
	close(fd);
	cr_assert_gt(n, 0, "no reply");
	return h_fmt("%.*s", (int)n, reply);
}

#define PKT(s) (s), sizeof(s) - 1

Test(exec, malformed_requests_are_refused_by_the_supervisor)
{
	struct h_sworld s = h_sworld();
	const char *m = h_marker(), *m2 = h_marker();
	const char *id = detach(&s, NULL, "exec sleep 300 $0", m);
	const char *sock = h_fmt("%s/%s/control", s.reg, id);
	const char *mk = h_fmt("exec%carg=sleep%carg=300%carg=%s%c", 0, 0, 0, m2, 0);
	pid_t pids[8];
	struct h_proc p;

	cr_assert(h_contains(raw_request(sock, PKT("exec\0arg=true"), true),
			     "error exec request: the last field is not NUL-terminated"));
	cr_assert(h_contains(raw_request(sock, PKT("exec\0cwd=/\0"), true), "no command"));
	cr_assert(
	    h_contains(raw_request(sock, PKT("exec\0bogus\0arg=true\0"), true), "unknown field"));
	cr_assert(
	    h_contains(raw_request(sock, PKT("exec\0env=A\0arg=true\0"), true), "not NAME=VALUE"));
	cr_assert(
	    h_contains(raw_request(sock, PKT("exec\0cwd=x\0arg=true\0"), true), "not absolute"));
	/* Without the three fds, a well-formed request is refused too. */
	cr_assert(h_contains(raw_request(sock, mk, 5 + 10 + 8 + 4 + strlen(m2) + 1, false),
			     "not exactly the client's fds 0, 1 and 2"));
	cr_assert_eq(h_marker_pids(m2, pids, 8), 0, "something ran");
	/* And the session still serves. */
	H_PADDOCK(&p, s.w.ws, "exec", id, "true");
	cr_assert_eq(p.status, 0, H_SHOW(&p));
	H_PADDOCK(&p, s.w.ws, "stop", "--grace", "0s", id);
	cr_assert_eq(p.status, 0, H_SHOW(&p));
}

/* More clients at once than the control socket takes (16, each holding
 * its connection without a request): the next exec is told "busy" in one
 * line, not the broken pipe of its request to a connection the supervisor
 * closed, and runs nothing; once they go, it runs. */
Test(exec, a_full_control_socket_is_busy_in_one_line)
{
	struct h_sworld s = h_sworld();
	const char *m = h_marker();
	const char *id = detach(&s, NULL, "exec sleep 300 $0", h_marker());
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	int held[16];
	pid_t pids[8];
	struct h_proc p;

	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s/%s/control", s.reg, id);
	for (int i = 0; i < 16; i++) {
		held[i] = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
		cr_assert_geq(held[i], 0);
		cr_assert_eq(connect(held[i], (struct sockaddr *)&sa, sizeof(sa)), 0, "%s",
			     strerror(errno));
	}
	/* The supervisor has taken them all before ours comes. */
	h_sleep_ms(200);
	H_PADDOCK(&p, s.w.ws, "exec", id, "--", "sleep", "300", m);
	assert_one_line_error(&p, h_fmt("session %s: busy", id));
	cr_assert_eq(h_marker_pids(m, pids, 8), 0, "something ran");
	for (int i = 0; i < 16; i++)
		close(held[i]);
	for (int i = 0; i < 250; i++) {
		H_PADDOCK(&p, s.w.ws, "exec", id, "--", "true");
		if (p.status == 0)
			break;
		h_sleep_ms(20);
	}
	cr_assert_eq(p.status, 0, H_SHOW(&p));
	H_PADDOCK(&p, s.w.ws, "stop", "--grace", "0s", id);
	cr_assert_eq(p.status, 0, H_SHOW(&p));
}

/* --------------------------------------------------------------- two users */

/* The other user's processes on the host, by /proc owner. */
static size_t count_uid(uid_t uid)
{
	DIR *d = opendir("/proc");
	struct dirent *e;
	size_t n = 0;

	cr_assert_not_null(d);
	while ((e = readdir(d))) {
		struct stat st;

		if (e->d_name[0] >= '1' && e->d_name[0] <= '9' &&
		    stat(h_fmt("/proc/%s", e->d_name), &st) == 0 && st.st_uid == uid)
			n++;
	}
	closedir(d);
	return n;
}

Test(exec, another_users_session_cannot_be_entered)
{
	struct h_sworld s = h_sworld();
	const char *uid2 = getenv("PADDOCK_TEST_UID2");
	const char *err = getenv("PADDOCK_TEST_OTHER_ERROR");
	const char *id, *sock, *pkt;
	pid_t init;
	unsigned long long init_start;
	size_t before;
	struct h_proc p;

	if (!uid2 || !uid2[0])
		h_skip("needs run.sh as root (a second test user)");
	cr_assert(!err || !err[0], "run.sh could not start the other user's session: %s", err);
	id = getenv("PADDOCK_TEST_OTHER_ID");
	sock = getenv("PADDOCK_TEST_OTHER_SOCKET");
	init = atoi(getenv("PADDOCK_TEST_OTHER_INIT_PID") ?: "0");
	init_start = strtoull(getenv("PADDOCK_TEST_OTHER_INIT_START") ?: "0", NULL, 10);
	cr_assert(id && sock && init);
	cr_assert_eq(start_time(init), init_start, "the other user's session is not running");
	before = count_uid((uid_t)atoi(uid2));

	H_PADDOCK(&p, s.w.ws, "exec", id, "--", "sh", "-c", "echo ran");
	assert_one_line_error(&p, h_fmt("no such session: %s", id));
	/* Past the directory and socket modes (run.sh's 0666 hard link of
	 * its socket): SO_PEERCRED. */
	pkt = h_fmt("exec%carg=sh%carg=-c%carg=echo ran%c", 0, 0, 0, 0);
	cr_assert_str_eq(raw_request(sock, pkt, 5 + 7 + 7 + 13, true),
			 h_fmt("error session %s belongs to uid %s", id, uid2));
	h_sleep_ms(200);
	cr_assert_eq(count_uid((uid_t)atoi(uid2)), before, "a process of the other user appeared");
	cr_assert_eq(start_time(init), init_start, "the other user's session was ended");
}

/* ------------------------------- the same hardening as the workload's */

/* The fields of /proc/PID/status that say a process's hardening: its
 * seccomp mode and the number of filters stacked on it, no_new_privs and
 * the five capability sets. */
static const char *const hardening_keys[] = {"Seccomp", "Seccomp_filters", "NoNewPrivs", "CapInh",
					     "CapPrm",	"CapEff",	   "CapBnd",	 "CapAmb"};

#define N_HARDENING (sizeof(hardening_keys) / sizeof(hardening_keys[0]))

/* "KEY:\tVALUE" of /proc/PID/status, read from outside (the file is
 * world-readable); "(none)" without the line. */
static const char *status_field(pid_t pid, const char *key)
{
	char *text = h_read_file(h_fmt("/proc/%d/status", (int)pid), NULL);
	const char *line = text ? strstr(text, h_fmt("\n%s:", key)) : NULL;

	if (!line)
		return "(none)";
	line += strlen(key) + 2;
	line += strspn(line, " \t");
	return h_fmt("%.*s", (int)strcspn(line, "\n"), line);
}

/* A session whose workload (marker m) sleeps, and a command exec'd into it
 * (marker m2) that sleeps too: both found in the host's /proc, in the
 * session's pid namespace. */
struct pair {
	const char *id;
	pid_t workload, exec;
	struct h_proc client;
};

static struct pair exec_pair(const struct h_sworld *s, const char *const *extra)
{
	const char *m = h_marker(), *m2 = h_marker();
	struct pair x = {.id = detach(s, extra, "exec sleep 300 $0", m)};
	pid_t init = init_pid(s, x.id), pids[4];
	unsigned long long start, starts[4];
	size_t n;

	/* paddock-init's argv holds the workload's (and so the marker). */
	n = in_session(init, m, 2, pids, starts);
	for (size_t i = 0; i < n; i++)
		if (pids[i] != init)
			x.workload = pids[i];
	cr_assert_gt(x.workload, 0, "no workload in the session");
	H_PADDOCK_START(&x.client, s->w.ws, "exec", x.id, "--", "sleep", "300", m2);
	cr_assert_eq(in_session(init, m2, 1, &x.exec, &start), 1,
		     "no exec'd process in the session");
	return x;
}

static void pair_end(const struct h_sworld *s, struct pair *x)
{
	struct h_proc p;

	H_PADDOCK(&p, s->w.ws, "stop", "--grace", "0s", x->id);
	cr_assert_eq(p.status, 0, H_SHOW(&p));
	h_wait(&x->client, 10000);
}

/* Seen from outside, in /proc/PID/status: the exec'd command has the
 * workload's seccomp mode and as many filters (one: the policy's program;
 * the program itself is compared in test_root.c, which may read it), the
 * same no_new_privs and the same five capability sets. */
Test(exec, exec_has_the_workloads_seccomp_caps_and_no_new_privs_seen_from_outside)
{
	struct h_sworld s = h_sworld();
	struct pair x = exec_pair(&s, NULL);

	for (size_t i = 0; i < N_HARDENING; i++)
		cr_assert_str_eq(status_field(x.exec, hardening_keys[i]),
				 status_field(x.workload, hardening_keys[i]),
				 "%s: exec'd %d, workload %d", hardening_keys[i], (int)x.exec,
				 (int)x.workload);
	cr_assert_str_eq(status_field(x.exec, "Seccomp"), "2");
	cr_assert_str_eq(status_field(x.exec, "Seccomp_filters"), "1");
	cr_assert_str_eq(status_field(x.exec, "NoNewPrivs"), "1");
	cr_assert_str_eq(status_field(x.exec, "CapEff"), "0000000000000000");
	cr_assert_str_eq(status_field(x.exec, "CapBnd"), "0000000000000000");
	pair_end(&s, &x);
}

/* The twin: with --weaken exec-unhardened the exec'd command keeps the
 * helper's capabilities and gets no no_new_privs and no filter, and the
 * comparison above sees each of the eight fields differ. */
Test(exec, weaken_exec_unhardened_differs_from_the_workload_in_every_field)
{
	struct h_sworld s = h_sworld();
	const char *weak[] = {"--weaken", "exec-unhardened", NULL};
	struct pair x = exec_pair(&s, weak);

	for (size_t i = 0; i < N_HARDENING; i++)
		cr_assert_str_neq(status_field(x.exec, hardening_keys[i]),
				  status_field(x.workload, hardening_keys[i]),
				  "%s is the same: the weakening is not real", hardening_keys[i]);
	cr_assert_str_eq(status_field(x.exec, "Seccomp"), "0");
	cr_assert_str_eq(status_field(x.exec, "NoNewPrivs"), "0");
	cr_assert_str_eq(status_field(x.workload, "Seccomp"), "2");
	pair_end(&s, &x);
}

/* What the kernel answers the workload and an exec'd command, asked the
 * same questions by the probe: writes the mounts refuse (EROFS), the
 * policy's Landlock TCP rules (bind 18990 and connect 18990 allowed, the
 * port beside it refused with EACCES: nothing but Landlock refuses a bind
 * of a free loopback port in the sandbox's own network namespace), the
 * signal scope (kill -0 of PID 1, a process of another domain: EPERM), and
 * every call the default seccomp profile refuses (calls). The workload
 * writes its answers to the sandbox's /tmp before it sleeps. */
static const char landlock_policy[] =
    "{\"version\": 1, \"extends\": \"agent\", \"landlock\": {\"mode\": \"required\", "
    "\"tcp\": {\"bind\": [18990], \"connect\": [18990]}}}";
static const char questions[] = "/probe/probe w:/usr/paddock-new w:/tmp/new tcpbind:18990 "
				"tcpbind:18991 tcpconnect:18990 tcpconnect:18991 kill:1 calls";

/* The probe's answers without its pid= line (the one that differs). */
static const char *answers(const char *text)
{
	const char *nl = strncmp(text, "pid=", 4) == 0 ? strchr(text, '\n') : NULL;

	return nl ? nl + 1 : text;
}

static void landlock_pair(const char *weaken, const char **workload, const char **exec)
{
	long abi = syscall(444 /* landlock_create_ruleset */, NULL, 0, 1UL);
	struct h_sworld s;
	const char *pol, *m = h_marker(), *id;
	struct h_proc p;

	if (abi < 6)
		h_skip("Landlock ABI %ld: no TCP rules or signal scope", abi);
	s = h_sworld();
	pol = h_join(s.w.base, "landlock.json");
	h_write_file(pol, landlock_policy, 0644);
	const char *extra[] = {"--policy", pol, weaken ? "--weaken" : NULL, weaken, NULL};
	id = detach(
	    &s, extra,
	    h_fmt("%s > /tmp/workload.txt 2>&1; touch /tmp/done; exec sleep 300 $0", questions), m);
	for (int i = 0; i < 250; i++) {
		H_PADDOCK(&p, s.w.ws, "exec", id, "--", "test", "-e", "/tmp/done");
		if (p.status == 0)
			break;
		h_sleep_ms(20);
	}
	cr_assert_eq(p.status, 0, "the workload's probe did not finish: " H_FMT, H_ARGS(&p));
	H_PADDOCK(&p, s.w.ws, "exec", id, "--", "cat", "/tmp/workload.txt");
	cr_assert_eq(p.status, 0, H_SHOW(&p));
	*workload = answers(p.out_text);
	H_PADDOCK(&p, s.w.ws, "exec", id, "--", "sh", "-c", questions);
	cr_assert_eq(p.status, 0, H_SHOW(&p));
	*exec = answers(p.out_text);
	H_PADDOCK(&p, s.w.ws, "stop", "--grace", "0s", id);
	cr_assert_eq(p.status, 0, H_SHOW(&p));
}

Test(exec, exec_has_the_workloads_landlock_rules_and_seccomp_answers)
{
	const char *wl, *ex;

	landlock_pair(NULL, &wl, &ex);
	cr_assert_str_eq(ex, wl, "the exec'd command's answers differ from the workload's");
	cr_assert_str_eq(h_kv(ex, "tcpbind:18990"), "OK", "%s", ex);
	cr_assert_str_eq(h_kv(ex, "tcpbind:18991"), "EACCES", "%s", ex);
	cr_assert_str_eq(h_kv(ex, "tcpconnect:18991"), "EACCES", "%s", ex);
	cr_assert_str_eq(h_kv(ex, "kill:1"), "EPERM", "%s", ex);
	cr_assert_str_eq(h_kv(ex, "w:/usr/paddock-new"), "EROFS", "%s", ex);
	cr_assert(h_contains(ex, "call.unshare_user=EPERM\n"), "%s", ex);
}

/* The twin: --weaken exec-unhardened leaves the workload's answers as they
 * were and the exec'd command's Landlock and seccomp refusals gone. */
Test(exec, weaken_exec_unhardened_answers_differ_from_the_workloads)
{
	const char *wl, *ex;

	landlock_pair("exec-unhardened", &wl, &ex);
	cr_assert_str_neq(ex, wl, "the weakening is not real");
	cr_assert_str_eq(h_kv(wl, "tcpbind:18991"), "EACCES", "%s", wl);
	cr_assert_str_eq(h_kv(ex, "tcpbind:18991"), "OK", "%s", ex);
	cr_assert_str_eq(h_kv(ex, "tcpconnect:18991"), "ECONNREFUSED", "%s", ex);
	cr_assert_str_eq(h_kv(ex, "kill:1"), "OK", "%s", ex);
	/* The mounts stay: the knob weakens the process, not the tree. */
	cr_assert_str_eq(h_kv(ex, "w:/usr/paddock-new"), "EROFS", "%s", ex);
}

/* The session's zygote (exec_helper.c), which every exec'd command is a
 * fork of, is a process of the session between requests, holding a copy
 * of the supervisor's memory: the workload finds it by its name and tries
 * to signal it, trace it, read its environment and memory and take its
 * channel; then to kill it. No exec runs meanwhile (the workload and the
 * test meet in the workspace), and the exec after it works either way (a
 * zygote that is gone is made again). */
static const char *probe_spare(const char *const *extra)
{
	struct h_sworld s = h_sworld();
	const char *m = h_marker(), *id, *out = NULL;
	struct h_proc p;

	id = detach(&s, extra,
		    "while [ ! -e go ]; do sleep 0.05; done; w=; "
		    "for i in $(seq 200); do for p in /proc/[0-9]*; do "
		    "[ \"$(cat $p/comm 2>/dev/null)\" = paddock-exec ] && w=${p#/proc/}; done; "
		    "[ -n \"$w\" ] && break; sleep 0.05; done; "
		    "/probe/probe kill:$w ptrace:$w r:/proc/$w/environ r:/proc/$w/mem getfd:$w:3 "
		    "kill9:$w > out.tmp 2>&1; echo spare=$w >> out.tmp; mv out.tmp out; "
		    "exec sleep 300 $0",
		    m);
	/* The first exec makes the zygote: the one the workload finds. */
	H_PADDOCK(&p, s.w.ws, "exec", id, "--", "true");
	cr_assert_eq(p.status, 0, H_SHOW(&p));
	h_write_file(h_join(s.w.ws, "go"), "", 0644);
	for (int i = 0; i < 250 && !out; i++) {
		out = h_read_file(h_join(s.w.ws, "out"), NULL);
		if (!out)
			h_sleep_ms(40);
	}
	cr_assert_not_null(out, "no answers from the workload");
	H_PADDOCK(&p, s.w.ws, "exec", id, "--", "true");
	cr_assert_eq(p.status, 0, "the exec after the probe: " H_FMT, H_ARGS(&p));
	H_PADDOCK(&p, s.w.ws, "stop", "--grace", "0s", id);
	cr_assert_eq(p.status, 0, H_SHOW(&p));
	return out;
}

Test(exec, the_waiting_command_is_out_of_the_workloads_reach)
{
	const char *out = probe_spare(NULL);
	const char *w = h_kv(out, "spare");

	cr_assert(w && atoi(w) > 1, "the workload found no waiting command: %s", out);
	cr_assert_str_eq(h_kv(out, h_fmt("kill:%s", w)), "EPERM", "%s", out);
	cr_assert_str_eq(h_kv(out, h_fmt("kill9:%s", w)), "EPERM", "%s", out);
	cr_assert_str_eq(h_kv(out, h_fmt("ptrace:%s", w)), "EPERM", "%s", out);
	cr_assert_str_eq(h_kv(out, h_fmt("r:/proc/%s/environ", w)), "EACCES", "%s", out);
	cr_assert_str_eq(h_kv(out, h_fmt("r:/proc/%s/mem", w)), "EACCES", "%s", out);
	cr_assert_str_eq(h_kv(out, h_fmt("getfd:%s:3", w)), "EPERM", "%s", out);
}

/* The twin: without Landlock's signal scope (and seccomp) the workload can
 * signal and kill it (not dumpable, it still cannot be traced or read),
 * and the exec after it still works: the supervisor makes another
 * zygote. */
Test(exec, weaken_no_landlock_the_workload_can_kill_the_waiting_command)
{
	const char *weak[] = {"--weaken", "no-landlock", "--weaken", "no-seccomp", NULL};
	const char *out = probe_spare(weak);
	const char *w = h_kv(out, "spare");

	cr_assert(w && atoi(w) > 1, "the workload found no waiting command: %s", out);
	cr_assert_str_eq(h_kv(out, h_fmt("kill:%s", w)), "OK", "%s", out);
	cr_assert_str_eq(h_kv(out, h_fmt("kill9:%s", w)), "OK", "%s", out);
	cr_assert_str_eq(h_kv(out, h_fmt("ptrace:%s", w)), "EPERM", "%s", out);
}

/* ------------------------------------ the workload's seccomp listener */

/* The lines of text that contain needle, joined ("" when none). */
static const char *lines_with(const char *text, const char *needle)
{
	const char *out = "";

	for (const char *l = text; l && *l;) {
		size_t n = strcspn(l, "\n");
		const char *line = h_fmt("%.*s", (int)n, l);

		if (h_contains(line, needle))
			out = h_fmt("%s%s\n", out, line);
		l += n + (l[n] == '\n');
	}
	return out;
}

/* A protected file (--protect) that the workload tries to move first, then
 * an exec'd command: mv's words and status, the workload's from a file it
 * writes, the exec'd command's from its client; and the notice lines, the
 * workload's in the session's log, the exec'd command's on its client's
 * stderr (where its user looks). */
struct moved {
	const char *wl_err, *ex_err, *ex_out, *log, *guarded;
};

static struct moved move_protected(const char *weaken)
{
	struct h_sworld s = h_sworld();
	const char *m = h_marker(), *id, *wl = NULL;
	const char *guarded = h_join(s.w.ws, "guarded");
	const char *extra[] = {"--protect", guarded, weaken ? "--weaken" : NULL, weaken, NULL};
	struct moved x = {.guarded = guarded};
	struct h_proc p;

	h_write_file(guarded, "kept\n", 0644);
	id = detach(&s, extra,
		    "mv guarded moved 2> wl.tmp; echo status=$? >> wl.tmp; mv wl.tmp wl.txt; "
		    "exec sleep 300 $0",
		    m);
	for (int i = 0; i < 250 && !wl; i++) {
		wl = h_read_file(h_join(s.w.ws, "wl.txt"), NULL);
		if (!wl)
			h_sleep_ms(20);
	}
	cr_assert_not_null(wl, "the workload's mv did not finish");
	x.wl_err = wl;
	H_PADDOCK(&p, s.w.ws, "exec", id, "--", "sh", "-c", "mv guarded moved; echo status=$?");
	cr_assert_eq(p.status, 0, H_SHOW(&p));
	x.ex_out = p.out_text;
	x.ex_err = p.err_text;
	H_PADDOCK(&p, s.w.ws, "logs", id);
	x.log = h_fmt("%s%s", p.out_text, p.err_text);
	H_PADDOCK(&p, s.w.ws, "stop", "--grace", "0s", id);
	cr_assert_eq(p.status, 0, H_SHOW(&p));
	cr_assert_str_eq(h_read_file(guarded, NULL), "kept\n", "the protected file changed");
	return x;
}

/* An exec'd mv of a protected path is refused as the workload's is: the
 * same words from mv (EACCES, "Permission denied"), the same status, and
 * the one-line notice on the exec client's stderr, not the kernel's bare
 * EBUSY. */
Test(exec, exec_mv_of_a_protected_path_gets_the_notice_and_the_workloads_errno)
{
	struct moved x = move_protected(NULL);
	const char *notice =
	    h_fmt("paddock: %s is protected by paddock (policy protect ", x.guarded);
	const char *wl_mv = lines_with(x.wl_err, "mv: ");

	cr_assert(h_contains(wl_mv, "Permission denied"), "the workload's mv: %s", x.wl_err);
	cr_assert(h_contains(x.log, notice), "no notice for the workload: %s", x.log);
	cr_assert_str_eq(lines_with(x.ex_err, "mv: "), wl_mv, "exec'd: %s", x.ex_err);
	cr_assert_str_eq(h_kv(x.ex_out, "status"), h_kv(x.wl_err, "status"), "%s", x.ex_out);
	cr_assert(h_contains(x.ex_err, notice), "no notice for the exec'd mv: %s", x.ex_err);
	cr_assert(h_contains(x.ex_err, "the change was refused (rename"), "%s", x.ex_err);
	cr_assert_eq(h_count_lines(lines_with(x.ex_err, "paddock: ")), 1, "%s", x.ex_err);
	cr_assert(!h_contains(x.ex_err, "Device or resource busy"), "%s", x.ex_err);
}

/* The twin: with --weaken exec-plain-seccomp the exec'd command loads the
 * policy's program without the notice's prefix (as before it had a
 * listener): its mv meets the mount's EBUSY, says nothing of paddock, and
 * the comparison above sees it differ from the workload's; the file is
 * kept either way (the mount refuses). */
Test(exec, weaken_exec_plain_seccomp_mv_says_ebusy_without_the_notice)
{
	struct moved x = move_protected("exec-plain-seccomp");
	const char *wl_mv = lines_with(x.wl_err, "mv: ");

	cr_assert(h_contains(wl_mv, "Permission denied"), "the workload's mv: %s", x.wl_err);
	cr_assert(h_contains(x.ex_err, "Device or resource busy"), "%s", x.ex_err);
	cr_assert_str_neq(lines_with(x.ex_err, "mv: "), wl_mv, "the weakening is not real");
	cr_assert(!h_contains(x.ex_err, "protected by paddock"), "%s", x.ex_err);
}

/* --trace-denials with a workload that only sleeps: the calls the probe
 * makes in an exec'd command that the policy refuses are said on its
 * client's stderr and counted in the record, and refused the same. */
static void traced_exec(const char *weaken, struct h_proc *p, const char **record)
{
	struct h_sworld s = h_sworld();
	const char *extra[] = {"--trace-denials",	   "--record", s.w.record,
			       weaken ? "--weaken" : NULL, weaken,     NULL};
	const char *id = detach(&s, extra, "exec sleep 300 $0", h_marker());
	struct h_proc q;

	H_PADDOCK(p, s.w.ws, "exec", id, "--", "/probe/probe", "calls");
	cr_assert_eq(p->status, 0, H_SHOW(p));
	cr_assert_str_eq(h_kv(p->out_text, "call.unshare_user"), "EPERM", H_SHOW(p));
	H_PADDOCK(&q, s.w.ws, "stop", "--grace", "0s", id);
	cr_assert_eq(q.status, 0, H_SHOW(&q));
	H_PADDOCK(&q, s.w.ws, "wait", id);
	*record = s.w.record;
}

Test(exec, trace_denials_lists_an_exec_commands_denials)
{
	struct h_proc p;
	const char *record;

	traced_exec(NULL, &p, &record);
	cr_assert(h_contains(p.err_text, "paddock: denied: unshare by pid "), H_SHOW(&p));
	cr_assert_str_eq(
	    h_json(record, "[e['count'] >= 1 for e in d['denials']['seccomp'] if e['syscall'] == "
			   "'unshare']"),
	    "[true]", "%s", h_read_file(record, NULL));
}

/* The twin: exec-plain-seccomp's command refuses the same calls, silently,
 * and the record counts none of them. */
Test(exec, weaken_exec_plain_seccomp_denials_are_not_traced)
{
	struct h_proc p;
	const char *record;

	traced_exec("exec-plain-seccomp", &p, &record);
	cr_assert(!h_contains(p.err_text, "paddock: denied: "), H_SHOW(&p));
	cr_assert_str_eq(h_json(record, "[e for e in d['denials']['seccomp'] if e['syscall'] == "
					"'unshare']"),
			 "[]");
}

/* The seccomp listeners among pid's fds, read from outside. */
static size_t listeners(pid_t pid)
{
	char *dir = h_list_dir(h_fmt("/proc/%d/fd", (int)pid));
	size_t n = 0;

	cr_assert_not_null(dir, "/proc/%d/fd: %s", (int)pid, strerror(errno));
	for (char *name = strtok(dir, "\n"); name; name = strtok(NULL, "\n")) {
		char buf[64];
		ssize_t k = readlink(h_fmt("/proc/%d/fd/%s", (int)pid, name), buf, sizeof(buf) - 1);

		if (k > 0 && (buf[k] = '\0', strcmp(buf, "anon_inode:seccomp notify") == 0))
			n++;
	}
	return n;
}

static size_t fd_count(pid_t pid)
{
	char *dir = h_list_dir(h_fmt("/proc/%d/fd", (int)pid));

	cr_assert_not_null(dir, "/proc/%d/fd: %s", (int)pid, strerror(errno));
	return h_count_lines(dir);
}

/* The session's zygote has a listener of its own, which the supervisor
 * holds (never the zygote or a command: every command is a fork of the
 * zygote and on its filter, the running one has none among its fds; the
 * zygote is not dumpable, so only root reads its fds: test_root.c). So
 * the supervisor holds two, the workload's and the zygote's, before,
 * while and after commands run: 200 execs later it holds what it held
 * after the first. */
Test(exec, the_supervisor_holds_the_zygotes_one_listener)
{
	struct h_sworld s = h_sworld();
	const char *extra[] = {"--trace-denials", NULL};
	const char *m2 = h_marker();
	struct pair x = {.id = detach(&s, extra, "exec sleep 300 $0", h_marker())};
	pid_t sup = atoi(js(&s, x.id, "d['supervisor']['pid']")), init = init_pid(&s, x.id);
	pid_t pids[4];
	unsigned long long starts[4];
	size_t base_fds;
	struct h_proc p;

	cr_assert_gt(sup, 0);
	cr_assert_eq(listeners(sup), 1, "before any exec: the workload's only");
	H_PADDOCK(&p, s.w.ws, "exec", x.id, "--", "true");
	cr_assert_eq(p.status, 0, H_SHOW(&p));
	cr_assert_eq(listeners(sup), 2, "the supervisor holds %zu listeners", listeners(sup));
	base_fds = fd_count(sup);
	H_PADDOCK_START(&x.client, s.w.ws, "exec", x.id, "--", "sleep", "300", m2);
	cr_assert_eq(in_session(init, m2, 1, pids, starts), 1, "no exec'd process");
	x.exec = pids[0];
	cr_assert_eq(listeners(sup), 2, "a listener per running command");
	cr_assert_eq(listeners(x.exec), 0, "the exec'd command holds a listener");
	h_kill_marker(m2);
	h_wait(&x.client, 10000);
	for (int i = 0; i < 200; i++) {
		H_PADDOCK(&p, s.w.ws, "exec", x.id, "--", "true");
		cr_assert_eq(p.status, 0, "exec %d: " H_FMT, i, H_ARGS(&p));
	}
	cr_assert_eq(listeners(sup), 2, "listeners after 200 execs");
	for (int i = 0; i < 250 && fd_count(sup) > base_fds + 2; i++)
		h_sleep_ms(20);
	cr_assert_leq(fd_count(sup), base_fds + 2, "fds: %zu after 200 execs, %zu before",
		      fd_count(sup), base_fds);
	H_PADDOCK(&p, s.w.ws, "stop", "--grace", "0s", x.id);
	cr_assert_eq(p.status, 0, H_SHOW(&p));
}

/* At most EXEC_RELAYS_MAX (128) exec'd commands run at once: the next
 * request is refused in one line, nothing started; once they end, exec
 * works again. A process a command left behind in a session of its own
 * (out of the process group exec ends) does not count: it holds nothing
 * of the supervisor's. */
Test(exec, exec_commands_are_bounded_and_a_request_beyond_is_refused)
{
	struct h_sworld s = h_sworld();
	const char *m = h_marker(), *m2 = h_marker();
	const char *id = detach(&s, NULL, "exec sleep 300 $0", h_marker());
	const char *script = "f=/tmp/left.$$; setsid sh -c ': > $0; exec sleep 300 $1' $f $1 & "
			     "while [ ! -e $f ]; do sleep 0.01; done";
	struct h_proc *c = h_keep(calloc(128, sizeof(*c)));
	pid_t *pids = h_keep(calloc(512, sizeof(*pids)));
	const char *pidns = ns_link(init_pid(&s, id), "pid");
	struct h_proc p;
	size_t n = 0;

	for (int i = 0; i < 3; i++) {
		H_PADDOCK(&p, s.w.ws, "exec", id, "--", "sh", "-c", script, "sh", m2);
		cr_assert_eq(p.status, 0, "a leftover %d: " H_FMT, i, H_ARGS(&p));
	}
	/* Eight at a time: more clients at once than the session's control
	 * socket takes (SESSION_CLIENTS_MAX) are told "busy". */
	for (size_t i = 0; i < 128; i += 8) {
		for (size_t k = i; k < i + 8; k++)
			H_PADDOCK_START(&c[k], s.w.ws, "exec", id, "--", "sleep", "300", m);
		/* The commands themselves (their clients have the marker
		 * too). */
		for (int t = 0; t < 500; t++) {
			size_t found = h_marker_pids(m, pids, 512);

			n = 0;
			for (size_t k = 0; k < found; k++)
				n += strcmp(ns_link(pids[k], "pid"), pidns) == 0;
			if (n >= i + 8)
				break;
			h_sleep_ms(10);
		}
		cr_assert_eq(n, i + 8, "%zu exec'd commands, not %zu", n, i + 8);
	}
	H_PADDOCK(&p, s.w.ws, "exec", id, "--", "true");
	assert_one_line_error(
	    &p, h_fmt("session %s: 128 exec'd commands still run; one must end first", id));
	cr_assert_geq(h_kill_marker(m), 128, "the commands (and their clients)");
	for (int i = 0; i < 128; i++)
		h_wait(&c[i], 10000);
	cr_assert_eq(h_kill_marker(m2), 3, "the leftovers");
	for (int i = 0; i < 250; i++) {
		H_PADDOCK(&p, s.w.ws, "exec", id, "--", "true");
		if (p.status == 0)
			break;
		h_sleep_ms(20);
	}
	cr_assert_eq(p.status, 0, "exec after the commands ended: " H_FMT, H_ARGS(&p));
	H_PADDOCK(&p, s.w.ws, "stop", "--grace", "0s", id);
	cr_assert_eq(p.status, 0, H_SHOW(&p));
}

/* ------------------------------------------- paddock-exec, the static client */

static const char *paddock_exec_bin(void)
{
	return h_fmt("%s/build/paddock-exec", h_root());
}

/* s with its first from replaced by to (kept for the test's life). */
static const char *replaced(const char *s, const char *from, const char *to)
{
	const char *at = strstr(s, from);

	cr_assert(at, "\"%s\" not in %s", from, s);
	return h_fmt("%.*s%s%s", (int)(at - s), s, to, at + strlen(from));
}

/* bin ARGS (NULL-terminated), waited for. */
static void run_bin(struct h_proc *p, const char *bin, const char *cwd, const char *const *args)
{
	char **argv = h_keep(calloc(64, sizeof(char *)));
	size_t n = 0;

	argv[n++] = (char *)bin;
	for (; *args; args++)
		argv[n++] = (char *)*args;
	h_spawn(p, cwd, argv, NULL);
	h_wait(p, H_TIMEOUT_MS);
}

/* paddock-exec ARGS (NULL-terminated), waited for. */
static void run_static(struct h_proc *p, const char *cwd, const char *const *args)
{
	run_bin(p, paddock_exec_bin(), cwd, args);
}

/* How many clients started for one call of paddock-exec: 1 when it took
 * the request itself, 2 when it handed it to paddock exec (each says
 * "exec: client start" under PADDOCK_DEBUG). */
static size_t clients(const char *cwd, const char *const *args, struct h_proc *p)
{
	const char *t;
	size_t n = 0;

	cr_assert_eq(setenv("PADDOCK_DEBUG", "1", 1), 0);
	run_static(p, cwd, args);
	cr_assert_eq(unsetenv("PADDOCK_DEBUG"), 0);
	for (t = p->err_text; (t = strstr(t, "exec: client start")); t++)
		n++;
	return n;
}

/* Every answer of the launcher's exec verb (build/paddock-launcher exec),
 * byte for byte, from the front's (build/paddock exec) and from
 * paddock-exec: statuses, output, the one-line errors, the refusals of the
 * supervisor and of the registry. */
Test(exec, paddock_exec_static_client_answers_as_paddock_exec)
{
	struct h_sworld s = h_sworld();
	const char *m = h_marker();
	const char *named[] = {"--name", "fastexec", NULL},
		   *weak[] = {"--weaken", "no-pidns", NULL};
	const char *id = detach(&s, NULL, "exec sleep 300 $0", m);
	const char *byname = detach(&s, named, "exec sleep 300 $0", m);
	const char *ended = detach(&s, NULL, "exit 0", m);
	const char *nopid = detach(&s, weak, "exec sleep 300 $0", m);
	const char *const calls[][8] = {
	    {id, "--", "true", NULL},
	    {id, "sh", "-c", "echo three; echo two >&2; exit 3", NULL},
	    {id, "sh", "-c", "kill -TERM $$", NULL},
	    {id, "/nonexistent/cmd", NULL},
	    {"--setenv", "A=b", "--cwd", "/tmp", id, "sh", "-c", "echo $A; pwd"},
	    {"fastexec", "sh", "-c", "echo by name", NULL},
	    {"0123456789ab", "true", NULL},
	    {"nosuchname", "true", NULL},
	    {NULL},
	    {id, NULL},
	    {"--setenv", "FOO", id, "true", NULL},
	    {"--grace", "1s", id, "true", NULL},
	    {"--cwd", "/nonexistent", id, "true", NULL},
	    {ended, "true", NULL},
	    {nopid, "true", NULL},
	};
	struct h_proc p, q;

	for (int i = 0; i < 250 && !h_contains(js(&s, ended, "d['state']"), "ended"); i++)
		h_sleep_ms(20);
	for (size_t i = 0; i < sizeof(calls) / sizeof(calls[0]); i++) {
		const char *args[10] = {"exec"};

		for (size_t k = 0; k < 8 && calls[i][k]; k++)
			args[k + 1] = calls[i][k];
		run_bin(&p, h_fmt("%s/build/paddock-launcher", h_root()), s.w.ws, args);
		for (int k = 0; k < 2; k++) {
			if (k == 0)
				run_static(&q, s.w.ws, calls[i]);
			else
				h_run_paddock(&q, s.w.ws, args);
			cr_assert_eq(q.status, p.status,
				     "call %zu: paddock-launcher exec " H_FMT "%s " H_FMT, i,
				     H_ARGS(&p), k ? "paddock exec" : "paddock-exec", H_ARGS(&q));
			cr_assert_str_eq(q.out_text, p.out_text, "call %zu: " H_FMT, i, H_ARGS(&q));
			cr_assert_str_eq(q.err_text, p.err_text, "call %zu: " H_FMT, i, H_ARGS(&q));
		}
	}
	for (const char *const *x = (const char *const[]){id, byname, nopid, NULL}; *x; x++) {
		H_PADDOCK(&p, s.w.ws, "stop", "--grace", "0s", *x);
		cr_assert_eq(p.status, 0, H_SHOW(&p));
	}
}

/* It takes the request itself only for a running session named by its
 * id; a name, an ended session and a missing one go to paddock exec. */
Test(exec, paddock_exec_static_client_takes_only_a_running_session_by_id)
{
	struct h_sworld s = h_sworld();
	const char *m = h_marker();
	const char *named[] = {"--name", "fastexec2", NULL};
	const char *id = detach(&s, named, "exec sleep 300 $0", m);
	const char *ended = detach(&s, NULL, "exit 0", m);
	struct h_proc p;

	for (int i = 0; i < 250 && !h_contains(js(&s, ended, "d['state']"), "ended"); i++)
		h_sleep_ms(20);
	cr_assert_eq(clients(s.w.ws, (const char *[]){id, "true", NULL}, &p), 1, H_SHOW(&p));
	cr_assert_eq(p.status, 0, H_SHOW(&p));
	cr_assert_eq(clients(s.w.ws, (const char *[]){"fastexec2", "true", NULL}, &p), 2,
		     H_SHOW(&p));
	cr_assert_eq(p.status, 0, H_SHOW(&p));
	cr_assert_eq(clients(s.w.ws, (const char *[]){ended, "true", NULL}, &p), 2, H_SHOW(&p));
	cr_assert_eq(p.status, 125, H_SHOW(&p));
	cr_assert_eq(clients(s.w.ws, (const char *[]){"0123456789ab", "true", NULL}, &p), 2,
		     H_SHOW(&p));
	H_PADDOCK(&p, s.w.ws, "stop", "--grace", "0s", id);
	cr_assert_eq(p.status, 0, H_SHOW(&p));
}

/* An entry whose control socket is another supervisor's (a symlink to a
 * live session's) is refused as paddock exec refuses it, nothing runs;
 * the twin, the same entry naming that supervisor's pid, runs the command
 * on the fast path: the refusal is the pid check's. */
Test(exec, paddock_exec_static_client_checks_the_supervisors_pid)
{
	struct h_sworld s = h_sworld();
	const char *m = h_marker(), *m2 = h_marker();
	const char *id = detach(&s, NULL, "exec sleep 300 $0", m);
	const char *fake = "abcdef012345", *dir = h_join(s.reg, fake);
	const char *text = h_read_file(h_join(h_join(s.reg, id), "session.json"), NULL);
	const char *pid = js(&s, id, "d['supervisor']['pid']");
	const char *real = replaced(text, h_fmt("\"%s\"", id), h_fmt("\"%s\"", fake));
	pid_t pids[4];
	struct h_proc p;

	cr_assert_eq(mkdir(dir, 0700), 0);
	cr_assert_eq(symlink(h_join(h_join(s.reg, id), "control"), h_join(dir, "control")), 0);
	/* The supervisor (the first "pid" and "start_time") made the
	 * session's paddock-init: alive, and not the listener. */
	h_write_file(
	    h_join(dir, "session.json"),
	    replaced(replaced(real, h_fmt("\"pid\":\t%s,", pid),
			      h_fmt("\"pid\":\t%s,", js(&s, id, "d['init']['pid']"))),
		     h_fmt("\"start_time\":\t%s\n", js(&s, id, "d['supervisor']['start_time']")),
		     h_fmt("\"start_time\":\t%s\n", js(&s, id, "d['init']['start_time']"))),
	    0600);
	cr_assert_eq(
	    clients(s.w.ws, (const char *[]){fake, "sh", "-c", "echo ran $0", m2, NULL}, &p), 2,
	    H_SHOW(&p));
	cr_assert_eq(p.status, 125, H_SHOW(&p));
	cr_assert(
	    h_contains(p.err_text, h_fmt("\npaddock: session %s: its control socket is not its "
					 "supervisor's\n",
					 fake)),
	    H_SHOW(&p));
	cr_assert_eq(h_marker_pids(m2, pids, 4), 0, "it ran");
	cr_assert(!h_contains(p.out_text, "ran"), H_SHOW(&p));
	/* The twin: the real pid. */
	h_write_file(h_join(dir, "session.json"), real, 0600);
	cr_assert_eq(
	    clients(s.w.ws, (const char *[]){fake, "sh", "-c", "echo ran $0", m2, NULL}, &p), 1,
	    H_SHOW(&p));
	cr_assert_eq(p.status, 0, H_SHOW(&p));
	cr_assert(h_contains(p.out_text, h_fmt("ran %s", m2)), H_SHOW(&p));
	cr_assert_eq(unlink(h_join(dir, "control")), 0);
	cr_assert_eq(unlink(h_join(dir, "session.json")), 0);
	cr_assert_eq(rmdir(dir), 0);
	H_PADDOCK(&p, s.w.ws, "stop", "--grace", "0s", id);
	cr_assert_eq(p.status, 0, H_SHOW(&p));
}

/* `paddock exec` is the front's own (client/paddock_exec.c): into a
 * running session by its id it needs no launcher. A copy of build/paddock
 * alone in a directory, without paddock-launcher beside it, runs the
 * command; the twin, anything that needs the launcher (ps, exec by name),
 * fails in one line with 125 and starts nothing: the front really does
 * hand everything else over. And by build/paddock, one client start. */
Test(exec, paddock_exec_needs_no_launcher)
{
	struct h_sworld s = h_sworld();
	const char *m = h_marker(), *m2 = h_marker();
	const char *named[] = {"--name", "nolauncher", NULL};
	const char *id = detach(&s, named, "exec sleep 300 $0", m);
	const char *alone = h_join(h_mkdir(s.w.base, "alone", 0755), "paddock");
	size_t len = 0;
	const char *bytes = h_read_file(h_paddock(), &len);
	pid_t pids[4];
	struct h_proc p;
	int fd;

	cr_assert_not_null(bytes);
	fd = open(alone, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0755);
	cr_assert_geq(fd, 0, "%s: %s", alone, strerror(errno));
	cr_assert_eq(write(fd, bytes, len), (ssize_t)len);
	close(fd);
	run_bin(&p, alone, s.w.ws,
		(const char *[]){"exec", id, "--", "sh", "-c", "echo ran", NULL});
	cr_assert_eq(p.status, 0, H_SHOW(&p));
	cr_assert_str_eq(p.out_text, "ran\n", H_SHOW(&p));
	run_bin(&p, alone, s.w.ws, (const char *[]){"ps", NULL});
	cr_assert_eq(p.status, 125, H_SHOW(&p));
	cr_assert(h_contains(p.err_text, "paddock: cannot find paddock-launcher"), H_SHOW(&p));
	cr_assert_eq(h_count_lines(p.err_text), 1, H_SHOW(&p));
	run_bin(&p, alone, s.w.ws,
		(const char *[]){"exec", "nolauncher", "--", "sh", "-c", "echo ran $0", m2, NULL});
	cr_assert_eq(p.status, 125, H_SHOW(&p));
	cr_assert(h_contains(p.err_text, "paddock: cannot find paddock-launcher"), H_SHOW(&p));
	cr_assert_eq(h_marker_pids(m2, pids, 4), 0, "it ran");
	cr_assert_eq(setenv("PADDOCK_DEBUG", "1", 1), 0);
	H_PADDOCK(&p, s.w.ws, "exec", id, "--", "true");
	cr_assert_eq(unsetenv("PADDOCK_DEBUG"), 0);
	cr_assert_eq(p.status, 0, H_SHOW(&p));
	cr_assert(h_contains(p.err_text, "exec: client start"), H_SHOW(&p));
	cr_assert(!h_contains(strstr(p.err_text, "exec: client start") + 1, "exec: client start"),
		  "two clients started: " H_FMT, H_ARGS(&p));
	H_PADDOCK(&p, s.w.ws, "stop", "--grace", "0s", id);
	cr_assert_eq(p.status, 0, H_SHOW(&p));
}
