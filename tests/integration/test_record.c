/* Integration: the completion record under faults (docs/record.md, "The
 * file"): replaced whole, never empty or torn, an earlier record kept until
 * the new one replaces it, what the record says when paddock-init never
 * reported or the policy was wrong, the workload's status kept when the
 * record cannot be written; and a --policy that is not a regular file. */
#include "harness.h"

#include <sys/stat.h>

TestSuite(record, .init = h_init, .fini = h_fini, .timeout = 120);

static const char old_record[] = "{\"old\": true}\n";

/* The id of the one session in s's registry once it is running. */
static const char *running_session(const struct h_sworld *s)
{
	for (int i = 0; i < 500; i++) {
		const char *names = h_exists(s->reg) ? h_list_dir(s->reg) : "";

		if (strlen(names) == 13 && names[0] != '.') {
			const char *id = h_fmt("%.12s", names);
			const char *json = h_fmt("%s/%s/session.json", s->reg, id);

			if (h_exists(json) &&
			    strcmp(h_json(json, "d['state']"), "\"running\"") == 0)
				return id;
		}
		h_sleep_ms(20);
	}
	cr_assert_fail("no running session in %s", s->reg);
	return NULL;
}

/* Files in dir other than the record itself: leftover temporary files. */
static void assert_no_temp_files(const char *dir, const char *except)
{
	const char *names = h_list_dir(dir);

	cr_assert(!h_contains(names, ".tmp"), "temporary files left in %s:\n%s", dir, names);
	(void)except;
}

/* A reader polls the record while 25 runs rewrite it: every read is the
 * earlier record or a whole new one. With the record truncated and written
 * in place, readers saw empty and torn files. */
Test(record, a_reader_never_sees_an_empty_or_torn_record)
{
	struct h_world w = h_world();
	struct h_proc reader, p;
	const char *stop = h_join(w.base, "stop");

	h_write_file(w.record, old_record, 0644);
	char *argv[] = {H_PYTHON,
			"-c",
			"import json, os, sys\n"
			"reads = bad = 0\n"
			"while not os.path.exists(sys.argv[2]):\n"
			"    with open(sys.argv[1]) as f:\n"
			"        t = f.read()\n"
			"    reads += 1\n"
			"    try:\n"
			"        json.loads(t)\n"
			"    except ValueError:\n"
			"        bad += 1\n"
			"print(reads, bad)\n",
			w.record,
			(char *)stop,
			NULL};

	h_spawn(&reader, NULL, argv, NULL);
	for (int i = 0; i < 25; i++) {
		H_PADDOCK(&p, w.ws, "run", "--record", w.record, "--", "true");
		cr_assert_eq(p.status, 0, H_SHOW(&p));
	}
	h_write_file(stop, "", 0644);
	h_wait(&reader, 10000);
	cr_assert_eq(reader.status, 0, H_SHOW(&reader));
	cr_assert_gt(atol(reader.out_text), 0, H_SHOW(&reader));
	cr_assert_str_eq(strchr(reader.out_text, ' '), " 0\n", "empty or torn reads: %s",
			 reader.out_text);
	cr_assert_str_eq(h_json(w.record, "d['ended']"), "\"exit\"");
	assert_no_temp_files(w.base, "record.json");
}

/* The earlier record stays while the run goes on, and a SIGKILLed
 * supervisor leaves it as it was: never an empty file. */
Test(record, killed_supervisor_leaves_the_earlier_record_whole)
{
	struct h_sworld s = h_sworld();
	struct h_proc p;

	h_write_file(s.w.record, old_record, 0644);
	H_PADDOCK_START(&p, s.w.ws, "run", "--record", s.w.record, "--", "sleep", "300");
	running_session(&s);
	cr_assert_str_eq(h_read_file(s.w.record, NULL), old_record);
	cr_assert_eq((int)syscall(SYS_pidfd_send_signal, p.pidfd, SIGKILL, NULL, 0), 0);
	h_wait(&p, 10000);
	cr_assert_eq(p.status, 128 + SIGKILL, H_SHOW(&p));
	cr_assert_str_eq(h_read_file(s.w.record, NULL), old_record);
	assert_no_temp_files(s.w.base, "record.json");
}

/* A workload that ran keeps its status when the record cannot be
 * written (a directory it may not write: the check at the start only
 * needs to look it up); --record-required makes that 122. */
Test(record, a_lost_record_keeps_the_workload_status)
{
	struct h_world w = h_world();
	char *dir = h_mkdir(w.base, "rec", 0555);
	char *rec = h_join(dir, "r.json");
	struct h_proc p;

	if (access(dir, W_OK) == 0)
		h_skip("this user can write a 0555 directory (root?)");
	H_PADDOCK(&p, w.ws, "run", "--record", rec, "--", "sh", "-c", "exit 42");
	cr_assert_eq(p.status, 42, H_SHOW(&p));
	cr_assert(h_contains(p.err_text, "warning: the record was not written"), H_SHOW(&p));
	cr_assert_eq(h_count_lines(p.err_text), 1, H_SHOW(&p));
	H_PADDOCK(&p, w.ws, "run", "--record", rec, "--record-required", "--", "sh", "-c",
		  "exit 42");
	cr_assert_eq(p.status, 122, H_SHOW(&p));
	cr_assert(h_contains(p.err_text, "warning: the record was not written"), H_SHOW(&p));
	/* Nothing ran: that stays 125, asked or not. */
	H_PADDOCK(&p, w.ws, "run", "--record", rec, "--record-required", "--bind",
		  "/nonexistent-paddock-src", "--", "true");
	cr_assert_eq(p.status, 125, H_SHOW(&p));
	chmod(dir, 0755);
}

/* A directory others may write, not sticky: another user could swap the
 * record for a file of theirs. A sticky one (/tmp) is fine. */
Test(record, a_directory_others_may_write_is_refused_unless_sticky)
{
	struct h_world w = h_world();
	char *open_dir = h_mkdir(w.base, "open", 0777);
	char *sticky = h_mkdir(w.base, "sticky", 01777);
	struct h_proc p;

	H_PADDOCK(&p, w.ws, "run", "--record", h_join(open_dir, "r.json"), "--", "true");
	cr_assert_eq(p.status, 125, H_SHOW(&p));
	cr_assert(h_contains(p.err_text, "writable by others and not sticky"), H_SHOW(&p));
	cr_assert_eq(h_count_lines(p.err_text), 1, H_SHOW(&p));
	cr_assert(!h_exists(h_join(open_dir, "r.json")));
	H_PADDOCK(&p, w.ws, "run", "--record", h_join(sticky, "r.json"), "--", "true");
	cr_assert_eq(p.status, 0, H_SHOW(&p));
	cr_assert_str_eq(h_json(h_join(sticky, "r.json"), "d['ended']"), "\"exit\"");
}

/* A record path that is a directory or a FIFO is refused before anything
 * starts. */
Test(record, a_record_that_is_not_a_regular_file_is_refused)
{
	struct h_world w = h_world();
	char *fifo = h_join(w.base, "fifo");
	struct h_proc p;

	cr_assert_eq(mkfifo(fifo, 0644), 0);
	H_PADDOCK(&p, w.ws, "run", "--record", fifo, "--", "true");
	cr_assert_eq(p.status, 125, H_SHOW(&p));
	cr_assert(h_contains(p.err_text, "not a regular file"), H_SHOW(&p));
	H_PADDOCK(&p, w.ws, "run", "--record", w.ws, "--", "true");
	cr_assert_eq(p.status, 125, H_SHOW(&p));
}

/* docs/record.md: written even when the launcher fails, a policy error
 * included. */
Test(record, a_policy_error_is_recorded)
{
	struct h_world w = h_world();
	char *bad = h_join(w.base, "bad.json");
	struct h_proc p;

	h_write_file(bad, "{\"version\": 1, \"nope\": 2}", 0644);
	H_PADDOCK(&p, w.ws, "run", "--policy", bad, "--record", w.record, "--", "true");
	cr_assert_eq(p.status, 125, H_SHOW(&p));
	cr_assert_eq(h_count_lines(p.err_text), 1, H_SHOW(&p));
	cr_assert_str_eq(h_json(w.record, "d['ended']"), "\"launcher-error\"");
	cr_assert_str_eq(h_json(w.record, "d['status']"), "125");
	cr_assert_str_eq(h_json(w.record, "d['workload_started']"), "false");
	cr_assert(h_contains(h_json(w.record, "d['errors'][0]"), "nope"));
	/* A missing bind source is a policy error too. */
	H_PADDOCK(&p, w.ws, "run", "--bind", "/nonexistent-paddock-src", "--record", w.record, "--",
		  "true");
	cr_assert_eq(p.status, 125, H_SHOW(&p));
	cr_assert_str_eq(h_json(w.record, "d['ended']"), "\"launcher-error\"");
	cr_assert(h_contains(h_json(w.record, "d['errors'][0]"), "nonexistent-paddock-src"));
}

/* An init that never reports: the record says the workload never started
 * and gives init's own status, not an invented clean exit. */
Test(record, an_init_that_never_reports_is_init_died)
{
	struct h_world w = h_world();
	struct h_proc p;

	H_PADDOCK(&p, w.ws, "run", "--init", "/bin/true", "--record", w.record, "--", "true");
	cr_assert_eq(p.status, 125, H_SHOW(&p));
	cr_assert(h_contains(p.err_text, "without reporting the workload's start"), H_SHOW(&p));
	cr_assert_str_eq(h_json(w.record, "d['ended']"), "\"init-died\"");
	cr_assert_str_eq(h_json(w.record, "d['workload_started']"), "false");
	cr_assert_str_eq(h_json(w.record, "d['init_status']"), "{\"exit_code\": 0}");
	cr_assert_str_eq(h_json(w.record, "'exit_code' in d or 'signal' in d"), "false");
}

/* paddock-init SIGKILLed while the workload runs: not the workload's
 * SIGKILL, init's. */
Test(record, a_killed_init_is_init_died_not_a_workload_signal)
{
	struct h_sworld s = h_sworld();
	struct h_proc p;
	const char *id;
	pid_t init;

	H_PADDOCK_START(&p, s.w.ws, "run", "--record", s.w.record, "--", "sleep", "300");
	id = running_session(&s);
	init = (pid_t)atol(h_session_json(&s, id, "d['init']['pid']"));
	cr_assert_gt(init, 1);
	cr_assert_eq(kill(init, SIGKILL), 0, "kill %d: %s", (int)init, strerror(errno));
	h_wait(&p, 10000);
	cr_assert_eq(p.status, 128 + SIGKILL, H_SHOW(&p));
	cr_assert(h_contains(p.err_text, "paddock-init was killed by signal 9"), H_SHOW(&p));
	cr_assert_str_eq(h_json(s.w.record, "d['ended']"), "\"init-died\"");
	cr_assert_str_eq(h_json(s.w.record, "d['workload_started']"), "true");
	cr_assert_str_eq(h_json(s.w.record, "d['init_status']"), "{\"signal\": 9}");
	cr_assert_str_eq(h_json(s.w.record, "'signal' in d or 'exit_code' in d"), "false");
}

/* A FIFO as --policy: refused at once (the open used to wait for a
 * writer for ever). */
Test(record, a_fifo_policy_is_refused_without_hanging)
{
	struct h_world w = h_world();
	char *fifo = h_join(w.base, "policy.fifo");
	struct h_proc p;

	cr_assert_eq(mkfifo(fifo, 0644), 0);
	H_PADDOCK(&p, w.ws, "run", "--policy", fifo, "--record", w.record, "--", "true");
	cr_assert_eq(p.status, 125, H_SHOW(&p));
	cr_assert(!p.timed_out, H_SHOW(&p));
	cr_assert(h_contains(p.err_text, "not a regular file"), H_SHOW(&p));
	cr_assert_eq(h_count_lines(p.err_text), 1, H_SHOW(&p));
	cr_assert_str_eq(h_json(w.record, "d['ended']"), "\"launcher-error\"");
	H_PADDOCK(&p, w.ws, "run", "--policy", "/dev/zero", "--", "true");
	cr_assert_eq(p.status, 125, H_SHOW(&p));
	cr_assert(h_contains(p.err_text, "not a regular file"), H_SHOW(&p));
}

/* A policy wider than the agent policy warns on stderr, lists each
 * widening in the record beside the weakenings, and --explain shows them
 * first; the agent policy has none. */
Test(record, widenings_warn_are_recorded_and_explained_first)
{
	struct h_world w = h_world();
	char *pol = h_join(w.base, "wide.json");
	char *home = h_mkdir(w.base, "home", 0755);
	struct h_proc p;
	char *agent, *at;

	H_PADDOCK(&p, w.ws, "run", "--record", w.record, "--", "true");
	cr_assert_eq(p.status, 0, H_SHOW(&p));
	cr_assert_str_eq(p.err_text, "", H_SHOW(&p));
	cr_assert_str_eq(h_json(w.record, "d['widenings']"), "[]");
	H_PADDOCK(&p, w.ws, "run", "--explain");
	cr_assert(strncmp(p.out_text, "widenings (wider than the agent policy): none\n", 46) == 0,
		  H_SHOW(&p));

	/* The agent policy, widened along each axis at once. */
	agent = h_read_file(h_join(h_root(), "contrib/policies/agent.json"), NULL);
	cr_assert_not_null(agent);
	at = strstr(agent, "\"ipc\", ");
	cr_assert_not_null(at);
	memmove(at, at + 7, strlen(at + 7) + 1);
	at = strstr(agent, "{\"profile\": \"default\"}");
	cr_assert_not_null(at);
	agent = h_fmt("%.*s{\"profile\": \"default\", \"allow\": [\"unshare\", \"keyctl\"]}%s",
		      (int)(at - agent), agent, at + strlen("{\"profile\": \"default\"}"));
	at = strstr(agent, "\"mounts\": [");
	agent = h_fmt("%.*s\"mounts\": [{\"type\": \"bind\", \"source\": \"${HOME}\", \"target\": "
		      "\"/h\", \"mode\": \"rw\"}, %s",
		      (int)(at - agent), agent, at + strlen("\"mounts\": ["));
	h_write_file(pol, agent, 0644);
	cr_assert_eq(setenv("HOME", home, 1), 0);
	H_PADDOCK(&p, w.ws, "run", "--policy", pol, "--record", w.record, "--", "true");
	cr_assert_eq(p.status, 0, H_SHOW(&p));
	cr_assert(h_contains(p.err_text, "wider than the agent policy: seccomp allows unshare\n"),
		  H_SHOW(&p));
	cr_assert(h_contains(p.err_text, "seccomp allows keyctl\n"), H_SHOW(&p));
	cr_assert(h_contains(p.err_text, "namespace ipc shared with the host\n"), H_SHOW(&p));
	cr_assert(h_contains(p.err_text, h_fmt("writable bind %s outside the workspace\n", home)),
		  H_SHOW(&p));
	/* The home in a writable bind also gets its login files protected
	 * (docs/security.md, "The caller's home"), with a line of its own. */
	cr_assert(h_contains(p.err_text, "login and tool files in it are read-only\n"), H_SHOW(&p));
	cr_assert_eq(h_count_lines(p.err_text), 5, H_SHOW(&p));
	cr_assert_str_eq(
	    h_json(w.record, "d['widenings']"),
	    h_fmt("[\"seccomp allows unshare\", \"seccomp allows keyctl\", \"namespace "
		  "ipc shared with the host\", \"writable bind %s outside the "
		  "workspace\"]",
		  home));
	H_PADDOCK(&p, w.ws, "run", "--policy", pol, "--explain");
	cr_assert_eq(p.status, 0, H_SHOW(&p));
	cr_assert(strncmp(p.out_text, "widenings (wider than the agent policy):\n  seccomp allows",
			  57) == 0,
		  H_SHOW(&p));
	/* seccomp off: a widening and, as before, a weakening. */
	agent = h_read_file(h_join(h_root(), "contrib/policies/agent.json"), NULL);
	at = strstr(agent, "{\"profile\": \"default\"}");
	cr_assert_not_null(at);
	memcpy(at, "{\"profile\":    \"none\"}", strlen("{\"profile\": \"default\"}"));
	h_write_file(pol, agent, 0644);
	H_PADDOCK(&p, w.ws, "run", "--policy", pol, "--record", w.record, "--", "true");
	cr_assert_eq(p.status, 0, H_SHOW(&p));
	cr_assert(h_contains(p.err_text, "wider than the agent policy: seccomp off"), H_SHOW(&p));
	cr_assert_str_eq(h_json(w.record, "d['widenings']"), "[\"seccomp off\"]");
	cr_assert_str_eq(h_json(w.record, "d['weakenings']"), "[\"seccomp-profile-none\"]");
}

/* No setuid or setgid bit from inside, for every caller (a setuid file of
 * the caller's in the workspace would run as the caller for whoever runs
 * it next); the twin without seccomp shows the bit surviving outside. */
Test(record, setuid_bits_are_refused_inside_and_absent_outside)
{
	struct h_world w = h_world();
	const char *script = "cp /bin/true t && chmod u+s t; echo chmod=$?; chmod 2755 t;"
			     " echo chmodg=$?";
	struct h_proc p;
	struct stat st;

	H_PADDOCK(&p, w.ws, "run", "--", "sh", "-c", script);
	cr_assert_eq(p.status, 0, H_SHOW(&p));
	cr_assert_str_eq(p.out_text, "chmod=1\nchmodg=1\n", H_SHOW(&p));
	cr_assert_eq(stat(h_join(w.ws, "t"), &st), 0);
	cr_assert_eq(st.st_mode & (S_ISUID | S_ISGID), 0, "mode %o", st.st_mode);
	H_PADDOCK(&p, w.ws, "run", "--weaken", "no-seccomp", "--", "sh", "-c", script);
	cr_assert_eq(p.status, 0, H_SHOW(&p));
	cr_assert_str_eq(p.out_text, "chmod=0\nchmodg=0\n", H_SHOW(&p));
	cr_assert_eq(stat(h_join(w.ws, "t"), &st), 0);
	cr_assert_eq(st.st_mode & S_ISGID, S_ISGID, "mode %o", st.st_mode);
}
