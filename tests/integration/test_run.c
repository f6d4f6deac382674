/* Integration: exit status, commands, environment, signals and the
 * completion record of `paddock run`, as an unprivileged user, checked from
 * outside the sandbox. */
#include "harness.h"

#include <sys/stat.h>

#include <sys/utsname.h>

TestSuite(run, .init = h_init, .fini = h_fini, .timeout = 60);

/* paddock run -- sh -c SCRIPT in a fresh workspace. */
static int run_sh(struct h_proc *p, const struct h_world *w, const char *script)
{
	return H_PADDOCK(p, w->ws, "run", "--", "sh", "-c", script);
}

/* ------------------------------------------------------------ exit status */

Test(run, exit_zero)
{
	struct h_world w = h_world();
	struct h_proc p;

	run_sh(&p, &w, "echo hello");
	cr_assert_eq(p.status, 0, H_SHOW(&p));
	cr_assert_str_eq(p.out_text, "hello\n", H_SHOW(&p));
	cr_assert_str_eq(p.err_text, "", H_SHOW(&p));
}

Test(run, exit_code_passed_through)
{
	struct h_world w = h_world();
	struct h_proc p;

	run_sh(&p, &w, "exit 3");
	cr_assert_eq(p.status, 3, H_SHOW(&p));
	run_sh(&p, &w, "exit 255");
	cr_assert_eq(p.status, 255, H_SHOW(&p));
}

Test(run, death_by_sigterm_is_143)
{
	struct h_world w = h_world();
	struct h_proc p;

	run_sh(&p, &w, "kill -TERM $$; sleep 5");
	cr_assert_eq(p.status, 143, H_SHOW(&p));
	cr_assert_lt(p.secs, 4.0, H_SHOW(&p));
}

Test(run, death_by_sigkill_is_137)
{
	struct h_world w = h_world();
	struct h_proc p;

	run_sh(&p, &w, "kill -KILL $$; sleep 5");
	cr_assert_eq(p.status, 137, H_SHOW(&p));
	cr_assert_lt(p.secs, 4.0, H_SHOW(&p));
}

Test(run, missing_command_is_127)
{
	struct h_world w = h_world();
	struct h_proc p;

	H_PADDOCK(&p, w.ws, "run", "--", "/nonexistent/paddock-no-such-cmd");
	cr_assert_eq(p.status, 127, H_SHOW(&p));
	cr_assert(h_contains(p.err_text, "No such file or directory"), H_SHOW(&p));
	cr_assert_eq(h_count_lines(p.err_text), 1, H_SHOW(&p));

	/* Looked up in the sandbox's PATH, not found there either. */
	H_PADDOCK(&p, w.ws, "run", "--", "paddock-no-such-cmd-in-path");
	cr_assert_eq(p.status, 127, H_SHOW(&p));
	cr_assert(h_contains(p.err_text, "No such file or directory"), H_SHOW(&p));
}

Test(run, non_executable_is_126)
{
	struct h_world w = h_world();
	struct h_proc p;
	char *file = h_join(w.ws, "not-exec.sh");

	h_write_file(file, "#!/bin/sh\necho should-not-run\n", 0644);
	H_PADDOCK(&p, w.ws, "run", "--", file);
	cr_assert_eq(p.status, 126, H_SHOW(&p));
	cr_assert(!h_contains(p.out_text, "should-not-run"), H_SHOW(&p));
	cr_assert_eq(h_count_lines(p.err_text), 1, H_SHOW(&p));

	/* A directory is not executable either. */
	H_PADDOCK(&p, w.ws, "run", "--", "/usr");
	cr_assert_eq(p.status, 126, H_SHOW(&p));
}

Test(run, arguments_reach_the_command_verbatim)
{
	struct h_world w = h_world();
	struct h_proc p;

	/* No shell in between: spaces, quotes, globs and "--" stay as they are. */
	H_PADDOCK(&p, w.ws, "run", "--", "/usr/bin/printf", "[%s]\\n", "a b", "'q'", "*", "--", "");
	cr_assert_eq(p.status, 0, H_SHOW(&p));
	cr_assert_str_eq(p.out_text, "[a b]\n['q']\n[*]\n[--]\n[]\n", H_SHOW(&p));
}

Test(run, stdin_is_passed)
{
	struct h_world w = h_world();
	struct h_proc p;

	/* The harness gives /dev/null as stdin: the workload reads EOF at once. */
	run_sh(&p, &w, "cat; echo eof");
	cr_assert_eq(p.status, 0, H_SHOW(&p));
	cr_assert_str_eq(p.out_text, "eof\n", H_SHOW(&p));
}

/* ------------------------------------------------------------- environment */

Test(run, environment_is_cleared_and_set)
{
	struct h_world w = h_world();
	struct h_proc p;
	char *argv[] = {(char *)h_paddock(), "run", "--setenv", "FOO=bar baz", "--", "env", NULL};
	char *envp[] = {"PATH=/usr/bin:/bin",
			"HOME=/tmp",
			"TERM=xterm-paddock-test",
			"LC_PADDOCK_TEST=kept",
			"SECRET_TOKEN=s3cr3t-do-not-leak",
			"LD_PRELOAD=/nonexistent.so",
			NULL};

	h_spawn(&p, w.ws, argv, envp);
	h_wait(&p, H_TIMEOUT_MS);
	cr_assert_eq(p.status, 0, H_SHOW(&p));
	cr_assert(h_contains(p.out_text, "PATH=/usr/local/bin:/usr/bin:/bin\n"), H_SHOW(&p));
	cr_assert(h_contains(p.out_text, "HOME=/home/sandbox\n"), H_SHOW(&p));
	cr_assert(h_contains(p.out_text, "TERM=xterm-paddock-test\n"), H_SHOW(&p));
	cr_assert(h_contains(p.out_text, "LC_PADDOCK_TEST=kept\n"), H_SHOW(&p));
	cr_assert(h_contains(p.out_text, "FOO=bar baz\n"), H_SHOW(&p));
	cr_assert(!h_contains(p.out_text, "s3cr3t"), H_SHOW(&p));
	cr_assert(!h_contains(p.out_text, "SECRET_TOKEN"), H_SHOW(&p));
	cr_assert(!h_contains(p.out_text, "LD_PRELOAD"), H_SHOW(&p));
}

Test(run, cwd_hostname_and_ids)
{
	struct h_world w = h_world();
	struct h_proc p;
	char *want;

	run_sh(&p, &w, "pwd; cat /proc/sys/kernel/hostname; id -u; id -g");
	cr_assert_eq(p.status, 0, H_SHOW(&p));
	/* The workspace at its own path, the policy's hostname, our own ids
	 * (mapped 1:1, no root inside). */
	want = h_fmt("%s\npaddock\n%u\n%u\n", w.ws, (unsigned)getuid(), (unsigned)getgid());
	cr_assert_str_eq(p.out_text, want, H_SHOW(&p));

	H_PADDOCK(&p, w.ws, "run", "--cwd", "/tmp", "--", "pwd");
	cr_assert_eq(p.status, 0, H_SHOW(&p));
	cr_assert_str_eq(p.out_text, "/tmp\n", H_SHOW(&p));
}

/* ----------------------------------------------------------------- signals */

/* Poll for a file the sandbox creates in the workspace. */
static bool wait_for_file(const char *path, int ms)
{
	for (int waited = 0; waited < ms; waited += 20) {
		if (h_exists(path))
			return true;
		h_sleep_ms(20);
	}
	return h_exists(path);
}

/* --env NAME takes the value from paddock's environment: it reaches the
 * workload, and neither paddock's command line (which other users read in
 * ps) nor the record holds it. The twin passes it with --setenv: then the
 * command line shows it, which is what the test looks for. */
static void env_by_name(bool twin)
{
	struct h_world w = h_world();
	const char *marker = "pdk-env-marker-7f3a";
	const char *seen = h_join(w.ws, "seen");
	char *argv[] = {(char *)h_paddock(),
			"run",
			"--record",
			w.record,
			twin ? "--setenv" : "--env",
			twin ? (char *)h_fmt("SECRET_X=%s", marker) : "SECRET_X",
			"--",
			"sh",
			"-c",
			"echo \"$SECRET_X\" > seen; sleep 2",
			NULL};
	char *envp[] = {"PATH=/usr/bin:/bin", "HOME=/tmp", (char *)h_fmt("SECRET_X=%s", marker),
			NULL};
	struct h_proc p;
	size_t len = 0;
	char *cmdline;

	h_spawn(&p, w.ws, argv, envp);
	cr_assert(wait_for_file(seen, 10000), "the workload never ran");
	cmdline = h_read_file(h_fmt("/proc/%d/cmdline", (int)p.pid), &len);
	cr_assert_not_null(cmdline);
	for (size_t i = 0; i + 1 < len; i++)
		if (!cmdline[i])
			cmdline[i] = ' ';
	h_wait(&p, H_TIMEOUT_MS);
	cr_assert_eq(p.status, 0, H_SHOW(&p));
	cr_assert_str_eq(h_read_file(seen, NULL), h_fmt("%s\n", marker));
	if (twin) {
		cr_assert(h_contains(cmdline, marker), "the twin's command line: %s", cmdline);
		return;
	}
	cr_assert(!h_contains(cmdline, marker), "paddock's command line shows it: %s", cmdline);
	cr_assert(!h_contains(h_read_file(w.record, NULL), marker), "in the record");
	cr_assert_str_eq(h_json(w.record, "d['env_passed']"), "[\"SECRET_X\"]");
}

Test(run, env_by_name_is_not_on_the_command_line_nor_in_the_record)
{
	env_by_name(false);
}

Test(run, env_by_name_twin_setenv_is_on_the_command_line)
{
	env_by_name(true);
}

/* --env-file: lines, comments, NAME alone from the environment; and every
 * bad form is one line and 125, a FIFO included (it would hang). */
Test(run, env_file_and_its_bad_forms)
{
	struct h_world w = h_world();
	const char *f = h_join(w.base, "vars.env"), *fifo = h_join(w.base, "fifo");
	struct h_proc p;
	static const struct {
		const char *arg, *content, *msg;
	} bad[] = {
	    {"-e", NULL, "--env --: not a variable name"},
	    {"--env=X=1", NULL, "takes a NAME"},
	    {"--env=1X", NULL, "not a variable name"},
	    {"--env=PADDOCK_SURELY_UNSET", NULL, "not set in your environment"},
	    {"--env-file=/nonexistent/x", NULL, "No such file"},
	    {"--env-file=BAD", "OK=1\n1BAD=x\n", "vars.env:2: expected NAME=VALUE"},
	    {"--env-file=BAD", "=x\n", "vars.env:1: expected"},
	    {"--env-file=BAD", "A B=1\n", "vars.env:1: expected"},
	};

	h_write_file(f, "# comment\n\nFOO=bar baz=q\nPATH\nUNSET_ONE\n", 0600);
	H_PADDOCK(&p, w.ws, "run", "--env-file", f, "--", "sh", "-c",
		  "echo \"$FOO|$PATH|${UNSET_ONE-unset}\"");
	cr_assert_eq(p.status, 0, H_SHOW(&p));
	cr_assert(h_contains(p.out_text, "bar baz=q|"), H_SHOW(&p));
	cr_assert(h_contains(p.out_text, "|unset\n"), H_SHOW(&p));
	cr_assert_eq(mkfifo(fifo, 0600), 0);
	H_PADDOCK(&p, w.ws, "run", "--env-file", fifo, "--", "true");
	cr_assert_eq(p.status, 125, H_SHOW(&p));
	cr_assert(h_contains(p.err_text, "not a regular file"), H_SHOW(&p));
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		const char *arg = bad[i].arg;

		if (bad[i].content) {
			h_write_file(f, bad[i].content, 0600);
			arg = h_fmt("--env-file=%s", f);
		}
		H_PADDOCK(&p, w.ws, "run", arg, "--", "true");
		cr_assert_eq(p.status, 125, "%s\n" H_FMT, arg, H_ARGS(&p));
		cr_assert(h_contains(p.err_text, bad[i].msg), "%s\n" H_FMT, arg, H_ARGS(&p));
		cr_assert_eq(strchr(p.err_text, '\n') - p.err_text + 1, (long)strlen(p.err_text),
			     "more than one line: %s", p.err_text);
	}
}

Test(run, sigterm_to_paddock_reaches_the_workload)
{
	struct h_world w = h_world();
	struct h_proc p;
	char *ready = h_join(w.ws, "ready"), *got = h_join(w.ws, "got-term");
	const char *text;

	H_PADDOCK_START(&p, w.ws, "run", "--", "sh", "-c",
			"trap 'echo term > got-term; exit 7' TERM; echo > ready; "
			"i=0; while [ $i -lt 200 ]; do sleep 0.05; i=$((i+1)); done; exit 99");
	cr_assert(wait_for_file(ready, 8000), "the workload never started");
	cr_assert_eq(kill(p.pid, SIGTERM), 0);
	h_wait(&p, 15000);
	cr_assert_eq(p.status, 7, H_SHOW(&p));
	text = h_read_file(got, NULL);
	cr_assert_not_null(text, "the workload's TERM trap did not run: " H_FMT, H_ARGS(&p));
	cr_assert_str_eq(text, "term\n");
}

Test(run, sigint_and_sigusr1_are_forwarded_too)
{
	struct h_world w = h_world();
	struct h_proc p;
	char *ready = h_join(w.ws, "ready");

	H_PADDOCK_START(&p, w.ws, "run", "--", "sh", "-c",
			"trap 'echo usr1 >> got' USR1; trap 'echo int >> got; exit 5' INT; "
			"echo > ready; i=0; while [ $i -lt 200 ]; do sleep 0.05; i=$((i+1)); done");
	cr_assert(wait_for_file(ready, 8000), "the workload never started");
	cr_assert_eq(kill(p.pid, SIGUSR1), 0);
	h_sleep_ms(300);
	cr_assert_eq(kill(p.pid, SIGINT), 0);
	h_wait(&p, 15000);
	cr_assert_eq(p.status, 5, H_SHOW(&p));
	cr_assert_str_eq(h_read_file(h_join(w.ws, "got"), NULL), "usr1\nint\n");
}

/* ----------------------------------------------- trusting paddock-init */

/* Regression (fixed: init is not dumpable, and the supervisor checks init's
 * report against its exit status): the workload could take over
 * paddock-init (PID 1) and forge its own
 * exit status and completion record. init runs with the workload's uid, is
 * dumpable, and there is neither seccomp nor Yama in the way, so any
 * process in the sandbox can ptrace PID 1 or copy its control socket (fd 3)
 * with pidfd_getfd(2) and send the supervisor "exit 0". A workload that
 * exits 1 leaves a TERM-ignoring helper behind, which, once the workload is
 * gone, sends "exit 0": paddock exits 0 and the record says
 * "exit_code": 0. Reproduction (in a workspace holding forger.py below):
 *   paddock run --record /tmp/r.json -- sh -c \
 *     'setsid python3 forger.py & sleep 0.3; exit 1'; echo $?   -> 0
 * forger.py: ignore SIGTERM; wait until /proc/2 is gone;
 *   fd = pidfd_getfd(pidfd_open(1), 3); send(fd, "exit 0").
 * (init/, launcher/spawn.c: make init non-dumpable (PR_SET_DUMPABLE 0)
 * after exec, or deny ptrace/pidfd_getfd with seccomp; the supervisor
 * should also take the workload's status from a source the workload
 * cannot write to.) */
static const char forger_py[] = "import ctypes, os, signal, socket, sys, time\n"
				"signal.signal(signal.SIGTERM, signal.SIG_IGN)\n"
				"libc = ctypes.CDLL(None, use_errno=True)\n"
				"while os.path.exists('/proc/2'):\n"
				"    time.sleep(0.01)\n"
				"fd = libc.syscall(438, os.pidfd_open(1), 3, 0)  # pidfd_getfd\n"
				"if fd < 0:\n"
				"    sys.exit(0)\n"
				"socket.socket(fileno=fd).send(b'exit 0')\n";

Test(run, workload_cannot_forge_its_exit_status)
{
	struct h_world w = h_world();
	struct h_proc p;

	h_write_file(h_join(w.ws, "forger.py"), forger_py, 0644);
	H_PADDOCK(&p, w.ws, "run", "--record", w.record, "--", "sh", "-c",
		  "setsid python3 forger.py & sleep 0.3; exit 1");
	cr_assert_eq(p.status, 1, "the workload exited 1\n" H_FMT, H_ARGS(&p));
	cr_assert_str_eq(h_json(w.record, "d.get('exit_code')"), "1");
}

/* Regression (the mechanism of the bug above): PID 1 could be ptrace-attached, and
 * its fds copied with pidfd_getfd(2), by the workload. Reproduction:
 *   paddock run -- python3 -c 'import ctypes; l = ctypes.CDLL(None);
 *     print(l.ptrace(0x4206, 1, 0, 0))'    -> 0 (PTRACE_SEIZE works) */
Test(run, init_cannot_be_ptraced_by_the_workload)
{
	struct h_world w = h_world();
	struct h_proc p;

	H_PADDOCK(&p, w.ws, "run", "--", "python3", "-c",
		  "import ctypes, os\n"
		  "libc = ctypes.CDLL(None, use_errno=True)\n"
		  "print('seize', libc.ptrace(0x4206, 1, 0, 0))\n"
		  "print('getfd', libc.syscall(438, os.pidfd_open(1), 3, 0))\n");
	cr_assert_eq(p.status, 0, H_SHOW(&p));
	cr_assert(h_contains(p.out_text, "seize -1\n"), "PID 1 can be ptraced\n" H_FMT, H_ARGS(&p));
	cr_assert(h_contains(p.out_text, "getfd -1\n"), "PID 1's fds can be taken\n" H_FMT,
		  H_ARGS(&p));
}

/* ------------------------------------------------------------------ record */

static const char *sha256_of(const char *path)
{
	struct h_proc p;

	H_CMD(&p, NULL, "/usr/bin/sha256sum", path);
	cr_assert_eq(p.status, 0, H_SHOW(&p));
	cr_assert_geq(strlen(p.out_text), 64u);
	return h_fmt("\"%.64s\"", p.out_text);
}

Test(run, record_contents)
{
	struct h_world w = h_world();
	struct h_proc p;
	char *policy = h_join(w.base, "agent.json");
	const char *src = h_read_file(h_fmt("%s/contrib/policies/agent.json", h_root()), NULL);
	struct utsname u;

	cr_assert_not_null(src, "contrib/policies/agent.json: %s", strerror(errno));
	h_write_file(policy, src, 0644);
	H_PADDOCK(&p, w.ws, "run", "--policy", policy, "--record", w.record, "--", "sh", "-c",
		  "exit 3");
	cr_assert_eq(p.status, 3, H_SHOW(&p));

	cr_assert_str_eq(h_json(w.record, "d['paddock']['version']"), "\"0.1.0\"");
	cr_assert_eq(uname(&u), 0);
	cr_assert_str_eq(h_json(w.record, "d['kernel']"), h_fmt("\"%s\"", u.release));
	cr_assert_str_eq(h_json(w.record, "d['policy']['sha256']"), sha256_of(policy));
	cr_assert_str_eq(h_json(w.record, "sorted(d['namespaces'])"),
			 "[\"cgroup\", \"ipc\", \"mount\", \"net\", \"pid\", \"user\", \"uts\"]");
	cr_assert_str_eq(h_json(w.record, "[m['mode'] for m in d['mounts'] if m['target'] == "
					  "'/usr']"),
			 "[\"ro\"]");
	cr_assert_str_eq(
	    h_json(w.record,
		   h_fmt("[m['mode'] for m in d['mounts'] if m['target'] == '%s']", w.ws)),
	    "[\"rw\"]");
	cr_assert_str_eq(h_json(w.record, "d['weakenings']"), "[]");
	cr_assert_str_eq(h_json(w.record, "d['ended']"), "\"exit\"");
	cr_assert_str_eq(h_json(w.record, "d['exit_code']"), "3");
	cr_assert_str_eq(h_json(w.record, "d['status']"), "3");
	cr_assert_str_eq(h_json(w.record, "d['command']"), "[\"sh\", \"-c\", \"exit 3\"]");
	/* ISO 8601 UTC times, the end not before the start. */
	cr_assert_str_eq(h_json(w.record, "len(d['start']) == 24 and d['start'].endswith('Z') "
					  "and d['start'] <= d['end']"),
			 "true");
	cr_assert_str_eq(h_json(w.record, "d['survivors']"), "[]");
	/* What the child applied, as it reported it (not the parent's plan),
	 * and init's word that nothing else was left. */
	cr_assert_str_eq(h_json(w.record, "[m['state'] for m in d['mounts'] if m['target'] == "
					  "'/usr']"),
			 "[\"applied\"]");
	cr_assert_str_eq(h_json(w.record, "d['mounts_reported']"), "true");
	cr_assert_str_eq(h_json(w.record, "d['init_done']"), "true");
	cr_assert_str_eq(h_json(w.record, "d['warnings']"), "[]");
}

/* An optional bind whose source is missing is recorded as skipped, as the
 * child saw it. */
Test(run, record_of_a_skipped_optional_bind)
{
	struct h_world w = h_world();
	struct h_proc p;
	char *policy = h_join(w.base, "p.json");

	h_write_file(policy,
		     "{\"version\":1,\"mounts\":[{\"type\":\"bind\",\"source\":\"/usr\"},"
		     "{\"type\":\"proc\",\"target\":\"/proc\"},"
		     "{\"type\":\"bind\",\"source\":\"/lib\",\"symlink\":\"copy\"},"
		     "{\"type\":\"bind\",\"source\":\"/lib64\",\"symlink\":\"copy\","
		     "\"optional\":true},"
		     "{\"type\":\"bind\",\"source\":\"/nonexistent-paddock-src\","
		     "\"target\":\"/opt/x\",\"optional\":true}]}",
		     0644);
	H_PADDOCK(&p, w.ws, "run", "--policy", policy, "--record", w.record, "--", "/usr/bin/true");
	cr_assert_eq(p.status, 0, H_SHOW(&p));
	cr_assert_str_eq(h_json(w.record, "[(m['mode'], m['state']) for m in d['mounts'] if "
					  "m['target'] == '/opt/x']"),
			 "[[\"skipped\", \"skipped\"]]");
}

Test(run, record_of_the_builtin_policy_and_a_signal)
{
	struct h_world w = h_world();
	struct h_proc p;

	H_PADDOCK(&p, w.ws, "run", "--record", w.record, "--", "sh", "-c", "kill -TERM $$");
	cr_assert_eq(p.status, 143, H_SHOW(&p));
	/* The built-in policy's digest is the digest of contrib/policies/agent.json. */
	cr_assert_str_eq(h_json(w.record, "d['policy']['sha256']"),
			 sha256_of(h_fmt("%s/contrib/policies/agent.json", h_root())));
	cr_assert_str_eq(h_json(w.record, "d['ended']"), "\"signal\"");
	cr_assert_str_eq(h_json(w.record, "d['status']"), "143");
	cr_assert_str_eq(h_json(w.record, "d.get('signal')"), "15");
}

Test(run, record_of_a_launcher_error)
{
	struct h_world w = h_world();
	struct h_proc p;

	/* The sandbox could not be set up (no such cwd): the record still
	 * says so, and the workload never ran. */
	H_PADDOCK(&p, w.ws, "run", "--record", w.record, "--cwd", "/nonexistent-paddock-cwd", "--",
		  "sh", "-c", "touch started");
	cr_assert_eq(p.status, 125, H_SHOW(&p));
	cr_assert_eq(h_count_lines(p.err_text), 1, H_SHOW(&p));
	cr_assert(!h_exists(h_join(w.ws, "started")));
	cr_assert_str_eq(h_json(w.record, "d['ended']"), "\"launcher-error\"");
	cr_assert_str_eq(h_json(w.record, "d['status']"), "125");
	cr_assert_str_eq(h_json(w.record, "len(d['errors'])"), "1");
	cr_assert_str_eq(
	    h_json(w.record, "d['errors'][0].startswith('cwd /nonexistent-paddock-cwd')"), "true");
	/* The mounts were applied and reported before the cwd failed. */
	cr_assert_str_eq(h_json(w.record, "d['mounts_reported']"), "true");
	cr_assert_str_eq(h_json(w.record, "d['init_done']"), "false");
	cr_assert_str_eq(h_list_dir(w.ws), "", "placeholders left behind");
}

Test(run, record_refused_inside_the_workspace)
{
	struct h_world w = h_world();
	struct h_proc p;
	char *inside = h_join(w.ws, "record.json");

	/* The sandbox could rewrite its own record there. */
	H_PADDOCK(&p, w.ws, "run", "--record", inside, "--", "sh", "-c", "echo ran > ran");
	cr_assert_eq(p.status, 125, H_SHOW(&p));
	cr_assert_eq(h_count_lines(p.err_text), 1, H_SHOW(&p));
	cr_assert(!h_exists(inside));
	cr_assert(!h_exists(h_join(w.ws, "ran")), "the workload ran anyway");
}

/* First-run errors from /, /tmp or /usr say what happened and what to do,
 * with the policy's own words after it; one line, 125. */
Test(run, workspace_clash_is_explained)
{
	static const struct {
		const char *cwd, *workspace, *says;
	} cases[] = {
	    {"/tmp", NULL,
	     "the workspace /tmp is a directory the policy already gives the sandbox (a private "
	     "or read-only one of its own); run paddock in a project directory, or give "
	     "--workspace DIR (the policy says: mounts["},
	    {"/", NULL, "the workspace / is the whole filesystem"},
	    {"/tmp", "/usr",
	     "the workspace /usr is a directory the policy already gives the "
	     "sandbox (a private or read-only one of its own); give --workspace a "
	     "project directory"},
	};
	struct h_proc p;

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		if (cases[i].workspace)
			H_PADDOCK(&p, cases[i].cwd, "run", "--workspace", cases[i].workspace, "--",
				  "true");
		else
			H_PADDOCK(&p, cases[i].cwd, "run", "--", "true");
		cr_assert_eq(p.status, 125, H_SHOW(&p));
		cr_assert(h_contains(p.err_text, cases[i].says), H_SHOW(&p));
		cr_assert_eq(h_count_lines(p.err_text), 1, H_SHOW(&p));
	}
}

/* The per-user defaults file: its ttl, binds and env names come before the
 * command line's (which wins); --no-config ignores it; one writable by
 * others is refused (it could grant binds), the same file 0644 is used. */
Test(run, defaults_file_applies_and_is_checked)
{
	struct h_world w = h_world();
	char *conf = h_mkdir(w.base, "conf", 0755), *data = h_mkdir(w.base, "data", 0755);
	const char *file = h_join(h_mkdir(conf, "paddock", 0755), "config.json");
	struct h_proc p;

	h_write_file(h_join(data, "f"), "from-defaults\n", 0644);
	h_write_file(
	    file,
	    h_fmt("{\"ttl\": \"2h\", \"ro_binds\": [\"%s:/data\"], \"env\": [\"MY_TOKEN\", "
		  "\"PADDOCK_SURELY_UNSET\"]}",
		  data),
	    0644);
	cr_assert_eq(setenv("XDG_CONFIG_HOME", conf, 1), 0);
	cr_assert_eq(setenv("MY_TOKEN", "t0k", 1), 0);
	H_PADDOCK(&p, w.ws, "run", "--record", w.record, "--", "sh", "-c",
		  "cat /data/f; echo $MY_TOKEN");
	cr_assert_eq(p.status, 0, H_SHOW(&p));
	cr_assert_str_eq(p.out_text, "from-defaults\nt0k\n", H_SHOW(&p));
	cr_assert_str_eq(h_json(w.record, "d['ttl_ms']"), "7200000");
	cr_assert_str_eq(h_json(w.record, "d['user_config']['path']"), h_fmt("\"%s\"", file));
	cr_assert_str_eq(h_json(w.record, "d['env_passed']"), "[\"MY_TOKEN\"]");
	/* The command line wins; --no-config ignores it all. */
	H_PADDOCK(&p, w.ws, "run", "--ttl", "5m", "--record", w.record, "--", "true");
	cr_assert_str_eq(h_json(w.record, "d['ttl_ms']"), "300000");
	H_PADDOCK(&p, w.ws, "run", "--no-config", "--record", w.record, "--", "sh", "-c",
		  "test -e /data || echo none");
	cr_assert_str_eq(p.out_text, "none\n", H_SHOW(&p));
	cr_assert_str_eq(h_json(w.record, "d['user_config']"), "null");
	H_PADDOCK(&p, w.ws, "run", "--explain");
	cr_assert(h_contains(p.out_text, h_fmt("defaults: %s\n", file)), H_SHOW(&p));
	/* Writable by others: refused, one line. */
	cr_assert_eq(chmod(file, 0666), 0);
	H_PADDOCK(&p, w.ws, "run", "--", "true");
	cr_assert_eq(p.status, 125, H_SHOW(&p));
	cr_assert(h_contains(p.err_text, "writable by nobody else"), H_SHOW(&p));
	cr_assert_eq(h_count_lines(p.err_text), 1, H_SHOW(&p));
	cr_assert_eq(chmod(file, 0644), 0);
	h_write_file(file, "{\"tll\": \"1h\"}", 0644);
	H_PADDOCK(&p, w.ws, "run", "--", "true");
	cr_assert_eq(p.status, 125, H_SHOW(&p));
	cr_assert(h_contains(p.err_text, "unknown key \"tll\""), H_SHOW(&p));
	/* A symlinked file is followed (its target's owner and mode count); a
	 * default location this user cannot reach is no file of theirs. */
	h_write_file(h_join(data, "real.json"), "{\"ttl\": \"3h\"}", 0644);
	cr_assert_eq(unlink(file), 0);
	cr_assert_eq(symlink(h_join(data, "real.json"), file), 0);
	H_PADDOCK(&p, w.ws, "run", "--record", w.record, "--", "true");
	cr_assert_eq(p.status, 0, H_SHOW(&p));
	cr_assert_str_eq(h_json(w.record, "d['ttl_ms']"), "10800000");
	cr_assert_eq(chmod(conf, 0), 0);
	H_PADDOCK(&p, w.ws, "run", "--record", w.record, "--", "true");
	cr_assert_eq(chmod(conf, 0755), 0);
	cr_assert_eq(p.status, 0, H_SHOW(&p));
	cr_assert_str_eq(h_json(w.record, "d['user_config']"), "null");
	cr_assert_eq(setenv("PADDOCK_CONFIG", h_join(w.base, "missing.json"), 1), 0);
	H_PADDOCK(&p, w.ws, "run", "--", "true");
	cr_assert_eq(p.status, 125, H_SHOW(&p));
	cr_assert(h_contains(p.err_text, "No such file"), H_SHOW(&p));
}

/* --trace-denials: every call the seccomp filter refuses is said on
 * stderr (at most 50 lines) and counted in the record, and refused exactly
 * as without it (the same errno, the same statuses). The twin runs the
 * same script without the flag: the same output, no line, nothing counted. */
static void trace_run(bool trace, struct h_proc *p, struct h_world *w)
{
	const char *script = "perl -e 'for (1..60) { syscall(272, 0x10000000) == -1 or exit 9; "
			     "$! == 1 or exit 8 }'; echo unshare=$?";

	if (trace)
		H_PADDOCK(p, w->ws, "run", "--trace-denials", "--record", w->record, "--", "sh",
			  "-c", script);
	else
		H_PADDOCK(p, w->ws, "run", "--record", w->record, "--", "sh", "-c", script);
	cr_assert_eq(p->status, 0, H_SHOW(p));
	cr_assert_str_eq(p->out_text, "unshare=0\n", H_SHOW(p));
}

Test(run, trace_denials_says_and_counts_and_refuses_the_same)
{
	struct h_world w = h_world();
	struct h_proc p;

	trace_run(true, &p, &w);
	cr_assert(h_contains(p.err_text, "paddock: denied: unshare by pid "), H_SHOW(&p));
	cr_assert_eq(h_count_lines(p.err_text), 50, H_SHOW(&p));
	cr_assert_str_eq(
	    h_json(w.record, "[(e['syscall'], e['count']) for e in d['denials']['seccomp']]"),
	    "[[\"unshare\", 60]]");
	cr_assert_str_eq(h_json(w.record, "d['denials']['lines_suppressed']"), "10");
	trace_run(false, &p, &w);
	cr_assert_str_eq(p.err_text, "", H_SHOW(&p));
	cr_assert_str_eq(h_json(w.record, "d['denials']"), "{\"traced\": false}");
	/* Nothing to trace: one line, 125. */
	H_PADDOCK(&p, w.ws, "run", "--trace-denials", "--weaken", "no-seccomp", "--", "true");
	cr_assert_eq(p.status, 125, H_SHOW(&p));
	cr_assert(h_contains(p.err_text, "--trace-denials: no seccomp filter to trace"),
		  H_SHOW(&p));
}

/* limits.memory and limits.pids: through cgroup v2 where a delegated
 * cgroup has the controllers (then 200 MB against a 64 MiB limit is an
 * OOM kill, and the record has the peak), else one warning line and the
 * record says "not enforced" with the reason: never claimed unapplied.
 * This machine decides which branch runs; each asserts what it saw. */
Test(run, resource_limits_enforced_or_said_not_to_be)
{
	struct h_world w = h_world();
	const char *pol = h_join(w.base, "limits.json");
	struct h_proc p;

	h_write_file(pol,
		     "{\"version\": 1, \"extends\": \"agent\", \"limits\": {\"memory\": \"64m\", "
		     "\"pids\": 50}}",
		     0644);
	H_PADDOCK(&p, w.ws, "run", "--policy", pol, "--record", w.record, "--", "python3", "-c",
		  "b = bytearray(200 << 20); b[::4096] = b'x' * len(b[::4096]); print('alloc')");
	if (strcmp(h_json(w.record, "d['resources']['enforced']"), "true") == 0) {
		cr_assert_eq(p.status, 137, H_SHOW(&p));
		cr_assert_neq(strcmp(h_json(w.record, "d['resources']['oom_kills']"), "0"), 0);
		cr_assert_str_eq(h_json(w.record, "d['resources']['memory_max']"), "67108864");
	} else {
		cr_assert_eq(p.status, 0, H_SHOW(&p));
		cr_assert(h_contains(p.err_text,
				     "limits.memory, limits.cpu and limits.pids are not "
				     "enforced: "),
			  H_SHOW(&p));
		cr_assert_neq(strcmp(h_json(w.record, "d['resources']['reason']"), "\"\""), 0);
	}
	cr_assert_str_eq(h_json(w.record, "d['resources']['asked']"), "true");
	/* Without limits: nothing asked, nothing said. */
	H_PADDOCK(&p, w.ws, "run", "--record", w.record, "--", "true");
	cr_assert_str_eq(p.err_text, "", H_SHOW(&p));
	cr_assert_str_eq(h_json(w.record, "d['resources']"), "{\"asked\": false}");
}

/* The agent policy's /var/tmp is a private tmpfs (a file made there is
 * not on the host), and /opt, where the host has one, is read-only. */
Test(run, agent_var_tmp_is_private_and_opt_read_only)
{
	struct h_world w = h_world();
	const char *m = h_fmt("pdk-vartmp-%d", (int)getpid());
	struct h_proc p;

	H_PADDOCK(&p, w.ws, "run", "--", "sh", "-c",
		  h_fmt("echo x > /var/tmp/%s && echo vartmp; "
			"awk '$5 == \"/opt\" { split($6, o, \",\"); print \"opt-\" o[1] }' "
			"/proc/self/mountinfo",
			m));
	cr_assert_eq(p.status, 0, H_SHOW(&p));
	cr_assert(h_contains(p.out_text, "vartmp\n"), H_SHOW(&p));
	/* Read from the mount table, not from a refused write (which a test
	 * user meets on the host's /opt anyway). */
	if (h_exists("/opt"))
		cr_assert(h_contains(p.out_text, "opt-ro\n"), H_SHOW(&p));
	cr_assert(!h_exists(h_fmt("/var/tmp/%s", m)), "the sandbox's /var/tmp is the host's");
	cr_assert(!h_exists(h_fmt("/opt/%s", m)), "written into the host's /opt");
}

/* paddock doctor's rlimits row: a hard nofile below the policy's 4096 is
 * a FAIL (a run would fail raising it), exit 1; as the caller is, ok. */
Test(run, doctor_checks_hard_limits_against_the_policy)
{
	struct h_world w = h_world();
	struct h_proc p;

	H_CMD(&p, w.ws, "/bin/sh", "-c",
	      h_fmt("ulimit -Sn 1024 && ulimit -Hn 2048 && exec %s doctor", h_paddock()));
	cr_assert_eq(p.status, 1, H_SHOW(&p));
	cr_assert(h_contains(p.out_text, "rlimits             FAIL  hard nofile 2048 is below "
					 "(built-in agent policy)'s 4096"),
		  H_SHOW(&p));
	H_PADDOCK(&p, w.ws, "doctor");
	cr_assert_eq(p.status, 0, H_SHOW(&p));
	cr_assert(h_contains(p.out_text, "rlimits             ok    hard nofile"), H_SHOW(&p));
	H_PADDOCK(&p, w.ws, "doctor", "--policy", "nosuchprofile");
	cr_assert_eq(p.status, 1, H_SHOW(&p));
	cr_assert(h_contains(p.out_text, "policy profile nosuchprofile: not found"), H_SHOW(&p));
	H_PADDOCK(&p, w.ws, "doctor", "--bogus");
	cr_assert_eq(p.status, 125, H_SHOW(&p));
}
