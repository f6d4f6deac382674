/* Integration: sessions - paddock run --detach/--name, ps, stop, wait, rm -
 * as an unprivileged user, checked from outside (the registry's files and
 * the host's /proc).
 *
 * Every test has its own registry: XDG_RUNTIME_DIR points at a private
 * directory in the test's temporary tree. Every workload carries the test's
 * marker in its argv (as sh's $0 or an extra sleep operand), and so do its
 * paddock-init and its supervisor (a fork of paddock run, same argv): h_fini
 * SIGKILLs them all by pid even when an assertion failed.
 *
 * The two-user tests need run.sh running as root: it starts a detached
 * session as the second test user (paddock-test2) and passes its identity
 * in PADDOCK_TEST_OTHER_*; without it they skip. */
#include "harness.h"

#include <sys/socket.h>
#include <sys/un.h>

TestSuite(sessions, .init = h_init, .fini = h_fini, .timeout = 90);

static char *entry(const struct h_sworld *s, const char *id, const char *file)
{
	return h_fmt("%s/%s/%s", s->reg, id, file);
}

static const char *js(const struct h_sworld *s, const char *id, const char *expr)
{
	return h_session_json(s, id, expr);
}

static bool is_id(const char *s)
{
	if (strlen(s) != 12)
		return false;
	for (size_t i = 0; i < 12; i++)
		if (!strchr("0123456789abcdef", s[i]))
			return false;
	return true;
}

/* paddock run --detach [--name NAME] -- sh -c SCRIPT MARKER: the id. */
static const char *detach(const struct h_sworld *s, const char *name, const char *script,
			  const char *marker)
{
	struct h_proc p;
	const char *id;

	if (name)
		H_PADDOCK(&p, s->w.ws, "run", "--detach", "--name", name, "--", "sh", "-c", script,
			  marker);
	else
		H_PADDOCK(&p, s->w.ws, "run", "--detach", "--", "sh", "-c", script, marker);
	cr_assert_eq(p.status, 0, H_SHOW(&p));
	cr_assert_eq(h_count_lines(p.out_text), 1, "one line, the id: " H_FMT, H_ARGS(&p));
	id = h_fmt("%.*s", (int)strcspn(p.out_text, "\n"), p.out_text);
	cr_assert(is_id(id), "not an id: " H_FMT, H_ARGS(&p));
	cr_assert_str_eq(p.err_text, "", H_SHOW(&p));
	return id;
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

/* The line of `paddock ps [--all]` for id, split into its first 9 columns
 * (ID NAME GEN STATE STATUS PID AGE EXPIRES PORTS; COMMAND is the rest),
 * or NULL when it is not listed. */
static char **ps_row(const struct h_sworld *s, const char *id, bool all, struct h_proc *p)
{
	char **cols = h_keep(calloc(10, sizeof(char *)));
	const char *line;

	if (all)
		H_PADDOCK(p, s->w.ws, "ps", "--all");
	else
		H_PADDOCK(p, s->w.ws, "ps");
	cr_assert_eq(p->status, 0, H_SHOW(p));
	cr_assert(strncmp(p->out_text, "ID ", 3) == 0, "no header: " H_FMT, H_ARGS(p));
	line = strstr(p->out_text, h_fmt("\n%s ", id));
	if (!line)
		return NULL;
	line++;
	for (int i = 0; i < 9; i++) {
		size_t n;

		line += strspn(line, " ");
		n = strcspn(line, " \n");
		cr_assert_gt(n, 0, "short row: " H_FMT, H_ARGS(p));
		cols[i] = h_fmt("%.*s", (int)n, line);
		line += n;
	}
	return cols;
}

/* Poll until session.json says "ended" (up to ms). */
static bool ended_within(const struct h_sworld *s, const char *id, int ms)
{
	for (int waited = 0; waited <= ms; waited += 50) {
		char *text = h_read_file(entry(s, id, "session.json"), NULL);

		if (text && strstr(text, "\"state\":\t\"ended\""))
			return true;
		h_sleep_ms(50);
	}
	return false;
}

/* Poll until pid is gone (or a zombie), up to ms. */
static bool gone_within(pid_t pid, int ms)
{
	for (int waited = 0; waited <= ms; waited += 20) {
		if (start_time(pid) == 0)
			return true;
		h_sleep_ms(20);
	}
	return false;
}

static void assert_one_line_error(const struct h_proc *p, const char *expect)
{
	cr_assert_eq(p->status, 125, H_SHOW(p));
	cr_assert_eq(h_count_lines(p->err_text), 1, "one line: " H_FMT, H_ARGS(p));
	cr_assert(strncmp(p->err_text, "paddock: ", 9) == 0, H_SHOW(p));
	cr_assert(h_contains(p->err_text, expect), "expected \"%s\": " H_FMT, expect, H_ARGS(p));
}

static mode_t mode_of(const char *path)
{
	struct stat st;

	cr_assert_eq(lstat(path, &st), 0, "%s: %s", path, strerror(errno));
	return st.st_mode;
}

/* ------------------------------------------------------ detach, ps, stop */

Test(sessions, detach_prints_an_id_and_ps_lists_it_running)
{
	struct h_sworld s = h_sworld();
	const char *m = h_marker();
	const char *id = detach(&s, "web", "exec sleep 300 $0", m);
	struct h_proc p;
	char **row = ps_row(&s, id, false, &p);
	pid_t sup, init;

	cr_assert_not_null(row, "not listed: " H_FMT, H_ARGS(&p));
	cr_assert_str_eq(row[1], "web", H_SHOW(&p));
	cr_assert_str_eq(row[2], "1", H_SHOW(&p));
	cr_assert_str_eq(row[3], "running", H_SHOW(&p));
	cr_assert_str_eq(row[4], "-", H_SHOW(&p));
	cr_assert_str_eq(row[5], js(&s, id, "d['init']['pid']"), H_SHOW(&p));
	cr_assert(!strcmp(row[6], "0s") || !strcmp(row[6], "1s") || !strcmp(row[6], "2s"),
		  H_SHOW(&p));
	cr_assert_neq(strcmp(row[7], "-"), 0, "the agent policy's 1h TTL: " H_FMT, H_ARGS(&p));
	cr_assert(h_contains(p.out_text, h_fmt("  sh -c exec sleep 300 $0 %s\n", m)), H_SHOW(&p));

	/* The entry: who owns it, and which processes it names, by pid and
	 * start time, checked against the host's /proc. */
	cr_assert_str_eq(js(&s, id, "d['id']"), h_fmt("\"%s\"", id));
	cr_assert_str_eq(js(&s, id, "d['name']"), "\"web\"");
	cr_assert_str_eq(js(&s, id, "d['owner_uid']"), h_fmt("%u", (unsigned)getuid()));
	cr_assert_str_eq(js(&s, id, "d['generation']"), "1");
	cr_assert_str_eq(js(&s, id, "d['state']"), "\"running\"");
	cr_assert_str_eq(js(&s, id, "d['detached']"), "true");
	cr_assert_str_eq(js(&s, id, "len(d['policy_sha256'])"), "64");
	sup = atoi(js(&s, id, "d['supervisor']['pid']"));
	init = atoi(js(&s, id, "d['init']['pid']"));
	cr_assert_str_eq(js(&s, id, "d['supervisor']['start_time']"),
			 h_fmt("%llu", start_time(sup)));
	cr_assert_str_eq(js(&s, id, "d['init']['start_time']"), h_fmt("%llu", start_time(init)));
	cr_assert(
	    h_contains(h_read_file(h_fmt("/proc/%d/cmdline", (int)init), NULL), "paddock-init"));

	/* Nobody else can enter or connect. */
	cr_assert_eq(mode_of(s.reg) & 07777, 0700);
	cr_assert_eq(mode_of(entry(&s, id, "")) & 07777, 0700);
	cr_assert_eq(mode_of(entry(&s, id, "session.json")) & 07777, 0600);
	cr_assert(S_ISSOCK(mode_of(entry(&s, id, "control"))));
	cr_assert_eq(mode_of(entry(&s, id, "control")) & 07777, 0600);

	H_PADDOCK(&p, s.w.ws, "stop", id);
	cr_assert_eq(p.status, 0, H_SHOW(&p));
	cr_assert_str_eq(p.out_text, "", H_SHOW(&p));
	cr_assert_str_eq(p.err_text, "", H_SHOW(&p));
}

Test(sessions, detached_output_goes_to_the_session_files)
{
	struct h_sworld s = h_sworld();
	const char *m = h_marker();
	const char *id = detach(&s, NULL, "echo out; echo err >&2; exit 3", m);
	struct h_proc p;

	cr_assert(ended_within(&s, id, 10000));
	cr_assert_str_eq(h_read_file(entry(&s, id, "stdout"), NULL), "out\n");
	cr_assert_str_eq(h_read_file(entry(&s, id, "stderr"), NULL), "err\n");
	cr_assert_eq(mode_of(entry(&s, id, "stdout")) & 07777, 0600);
	cr_assert_str_eq(js(&s, id, "d['name']"), "null");
	cr_assert_str_eq(js(&s, id, "d['generation']"), "1");
	cr_assert_str_eq(js(&s, id, "(d['status'], d['ended'])"), "[3, \"exit\"]");
	/* Ended sessions are listed with --all only, until paddock rm. */
	cr_assert_null(ps_row(&s, id, false, &p), H_SHOW(&p));
	cr_assert_not_null(ps_row(&s, id, true, &p), H_SHOW(&p));
	cr_assert_str_eq(ps_row(&s, id, true, &p)[3], "ended");
	cr_assert_str_eq(ps_row(&s, id, true, &p)[4], "exit(3)");
	/* paddock logs: stdout to stdout, stderr to stderr; by a prefix. */
	H_PADDOCK(&p, s.w.ws, "logs", h_fmt("%.5s", id));
	cr_assert_eq(p.status, 0, H_SHOW(&p));
	cr_assert_str_eq(p.out_text, "out\n", H_SHOW(&p));
	cr_assert_str_eq(p.err_text, "err\n", H_SHOW(&p));
	H_PADDOCK(&p, s.w.ws, "rm", id);
	cr_assert_eq(p.status, 0, H_SHOW(&p));
	cr_assert(!h_exists(entry(&s, id, "")));
	cr_assert_null(ps_row(&s, id, true, &p), H_SHOW(&p));
}

Test(sessions, stop_ends_every_descendant_seen_from_outside)
{
	struct h_sworld s = h_sworld();
	const char *m = h_marker();
	/* A double-forked, setsid'd sleep (orphaned to PID 1, in its own
	 * session), a plain background one, and the foreground one. */
	const char *id =
	    detach(&s, "many", "(setsid sleep 300 $0 &); sleep 300 $0 & echo up; sleep 300 $0", m);
	pid_t pids[64], sup = atoi(js(&s, id, "d['supervisor']['pid']")), box[64], init;
	unsigned long long start[64];
	size_t n = 0, nbox = 0;
	struct h_proc p;

	/* The sandbox's processes: init, sh and three sleeps (the
	 * supervisor carries the marker too). */
	for (int i = 0; i < 200 && nbox < 5; i++) {
		h_sleep_ms(20);
		n = h_marker_pids(m, pids, 64);
		nbox = 0;
		for (size_t k = 0; k < n; k++)
			if (pids[k] != sup && (start[nbox] = start_time(pids[k])))
				box[nbox++] = pids[k];
	}
	cr_assert_eq(nbox, 5, "the workload did not start its sleeps");
	init = atoi(js(&s, id, "d['init']['pid']"));
	for (size_t k = 0; k < nbox && box[k] != init; k++)
		cr_assert_lt(k + 1, nbox, "init %d is not among them", (int)init);

	H_PADDOCK(&p, s.w.ws, "stop", "--grace", "1s", "many");
	cr_assert_eq(p.status, 0, H_SHOW(&p));
	cr_assert_lt(p.secs, 5.0, H_SHOW(&p));
	/* stop returns once the session has ended: by then every one of
	 * them is gone, seen from the host's /proc. */
	for (size_t k = 0; k < nbox; k++)
		cr_assert_neq(start_time(box[k]), start[k], "process %d is still there: %s",
			      (int)box[k],
			      h_read_file(h_fmt("/proc/%d/cmdline", (int)box[k]), NULL));
	/* The supervisor exits right after answering (a sanitizer build's
	 * leak checker, a clone of it, goes with it). */
	cr_assert(gone_within(sup, 3000), "the supervisor did not exit");
	for (int i = 0; i < 150 && h_marker_pids(m, pids, 64) > 0; i++)
		h_sleep_ms(20);
	cr_assert_eq(h_marker_pids(m, pids, 64), 0);

	cr_assert_str_eq(js(&s, id, "(d['state'], d['status'], d['ended'])"),
			 "[\"ended\", 143, \"stopped\"]");
	/* wait on the ended session: its status, from the entry. */
	H_PADDOCK(&p, s.w.ws, "wait", id);
	cr_assert_eq(p.status, 143, H_SHOW(&p));
	/* stop on an ended session: nothing to do. */
	H_PADDOCK(&p, s.w.ws, "stop", id);
	cr_assert_eq(p.status, 0, H_SHOW(&p));
}

Test(sessions, wait_returns_the_workloads_status)
{
	struct h_sworld s = h_sworld();
	const char *m = h_marker();
	const char *id3 = detach(&s, NULL, "sleep 1; exit 3", m);
	const char *id0 = detach(&s, NULL, "exit 0", m);
	const char *idt = detach(&s, "term", "exec sleep 300 $0", m);
	struct h_proc p, w;

	/* Live: the supervisor answers when the workload has ended. */
	H_PADDOCK(&p, s.w.ws, "wait", id3);
	cr_assert_eq(p.status, 3, H_SHOW(&p));
	cr_assert_str_eq(p.err_text, "", H_SHOW(&p));
	/* Already ended: from session.json. */
	cr_assert(ended_within(&s, id0, 10000));
	H_PADDOCK(&p, s.w.ws, "wait", id0);
	cr_assert_eq(p.status, 0, H_SHOW(&p));
	/* A waiter, by name, while another client stops the session: 143. */
	H_PADDOCK_START(&w, s.w.ws, "wait", "term");
	h_sleep_ms(300);
	H_PADDOCK(&p, s.w.ws, "stop", idt);
	cr_assert_eq(p.status, 0, H_SHOW(&p));
	h_wait(&w, 10000);
	cr_assert_eq(w.status, 143, H_SHOW(&w));
}

Test(sessions, one_live_session_per_name_and_generations)
{
	struct h_sworld s = h_sworld();
	const char *m = h_marker();
	const char *id1 = detach(&s, "dup", "exec sleep 300 $0", m), *id2;
	struct h_proc p;

	H_PADDOCK(&p, s.w.ws, "run", "--detach", "--name", "dup", "--", "sh", "-c",
		  "echo ran; sleep 300 $0", m);
	assert_one_line_error(&p, h_fmt("a session named dup is already running (%s)", id1));
	cr_assert_str_eq(p.out_text, "", H_SHOW(&p));
	/* The same without --detach: refused before anything runs. */
	H_PADDOCK(&p, s.w.ws, "run", "--name", "dup", "--", "sh", "-c", "echo ran", m);
	assert_one_line_error(&p, "already running");
	cr_assert_str_eq(p.out_text, "", H_SHOW(&p));
	/* Another name is fine meanwhile, with its own generation 1. */
	H_PADDOCK(&p, s.w.ws, "run", "--name", "other", "--", "true");
	cr_assert_eq(p.status, 0, H_SHOW(&p));

	H_PADDOCK(&p, s.w.ws, "stop", "--grace", "0s", id1);
	cr_assert_eq(p.status, 0, H_SHOW(&p));
	id2 = detach(&s, "dup", "exec sleep 300 $0", m);
	cr_assert_str_neq(id1, id2);
	cr_assert_str_eq(js(&s, id2, "d['generation']"), "2");
	cr_assert_str_eq(ps_row(&s, id2, false, &p)[2], "2", H_SHOW(&p));
	/* The name means the live session; rm refuses a running one. */
	H_PADDOCK(&p, s.w.ws, "rm", "dup");
	assert_one_line_error(&p, h_fmt("session %s is still running", id2));
	H_PADDOCK(&p, s.w.ws, "stop", "dup");
	cr_assert_eq(p.status, 0, H_SHOW(&p));
	cr_assert_str_eq(js(&s, id1, "d['ended']"), "\"stopped\"");
}

/* ---------------------------------------------- foreground runs are sessions */

Test(sessions, a_foreground_run_is_registered_stoppable_and_removed_at_the_end)
{
	struct h_sworld s = h_sworld();
	const char *m = h_marker();
	struct h_proc run, p;
	char **row = NULL;
	const char *id;

	H_PADDOCK_START(&run, s.w.ws, "run", "--record", s.w.record, "--", "sh", "-c",
			"sleep 300 $0", m);
	/* Its entry appears (the only one), and turns "running". */
	for (int i = 0; i < 400 && !(row && strcmp(row[3], "running") == 0); i++) {
		const char *names = h_exists(s.reg) ? h_list_dir(s.reg) : "";

		h_sleep_ms(20);
		if (strlen(names) == 13 && is_id(h_fmt("%.12s", names)))
			row = ps_row(&s, h_fmt("%.12s", names), false, &p);
	}
	cr_assert_not_null(row, "never listed");
	cr_assert_str_eq(row[3], "running");
	id = row[0];
	cr_assert_str_eq(js(&s, id, "d['detached']"), "false");
	H_PADDOCK(&p, s.w.ws, "stop", id);
	cr_assert_eq(p.status, 0, H_SHOW(&p));
	h_wait(&run, 10000);
	cr_assert_eq(run.status, 143, H_SHOW(&run));
	cr_assert_str_eq(h_json(s.w.record, "(d['ended'], d['session']['id'])"),
			 h_fmt("[\"stopped\", \"%s\"]", id));
	/* Its caller has the status: the entry is gone. */
	cr_assert(!h_exists(entry(&s, id, "")));
}

/* --------------------------------------------------- stale and recycled */

Test(sessions, a_dead_supervisor_makes_the_entry_stale_and_ps_cleans_it)
{
	struct h_sworld s = h_sworld();
	const char *m = h_marker();
	const char *id = detach(&s, "doomed", "exec sleep 300 $0", m);
	pid_t sup = atoi(js(&s, id, "d['supervisor']['pid']"));
	pid_t init = atoi(js(&s, id, "d['init']['pid']"));
	unsigned long long sup_start =
	    strtoull(js(&s, id, "d['supervisor']['start_time']"), NULL, 10);
	unsigned long long init_start = strtoull(js(&s, id, "d['init']['start_time']"), NULL, 10);
	struct h_proc p;
	char **row;

	/* By pid, and only while the pid is still the registered process. */
	cr_assert_eq(start_time(sup), sup_start);
	cr_assert_eq(kill(sup, SIGKILL), 0);
	cr_assert(gone_within(sup, 3000));
	if (start_time(init) == init_start)
		kill(init, SIGKILL); /* PR_SET_PDEATHSIG already did, normally */
	h_kill_marker(m);

	row = ps_row(&s, id, false, &p);
	cr_assert_not_null(row, H_SHOW(&p));
	cr_assert_str_eq(row[3], "stale", H_SHOW(&p));
	cr_assert(!h_exists(entry(&s, id, "")), "ps did not remove the stale entry");
	cr_assert_null(ps_row(&s, id, true, &p), H_SHOW(&p));
	/* Its name is free again: the next one is generation 2. */
	id = detach(&s, "doomed", "exec sleep 300 $0", m);
	cr_assert_str_eq(js(&s, id, "d['generation']"), "2");
	H_PADDOCK(&p, s.w.ws, "stop", id);
	cr_assert_eq(p.status, 0, H_SHOW(&p));
}

/* An entry naming a live process of ours with the wrong start time: the
 * pid was reused. Neither stop nor wait may touch that process. */
static void plant(const struct h_sworld *s, const char *id, const char *name, pid_t pid,
		  unsigned long long start, unsigned owner)
{
	char *dir = h_join(s->reg, id);

	if (!h_exists(s->reg))
		h_mkdir(s->xdg, "paddock", 0700);
	if (!h_exists(dir))
		h_mkdir(s->reg, id, 0700);
	h_write_file(
	    h_join(dir, "session.json"),
	    h_fmt("{\"id\": \"%s\", \"name\": \"%s\", \"owner_uid\": %u, \"generation\": 1,"
		  " \"supervisor\": {\"pid\": %d, \"start_time\": %llu},"
		  " \"init\": {\"pid\": %d, \"start_time\": %llu},"
		  " \"created\": \"2026-01-01T00:00:00.000Z\", \"expires\": null,"
		  " \"state\": \"running\", \"policy_sha256\": \"\", \"detached\": true}\n",
		  id, name, owner, (int)pid, start, (int)pid, start),
	    0600);
}

Test(sessions, a_recycled_pid_is_never_signalled)
{
	struct h_sworld s = h_sworld();
	const char *m = h_marker();
	char *argv[] = {"/bin/sleep", "300", (char *)m, NULL};
	struct h_proc victim, p;
	unsigned long long real;

	h_spawn(&victim, NULL, argv, NULL);
	for (int i = 0; i < 100 && !(real = start_time(victim.pid)); i++)
		h_sleep_ms(10);
	cr_assert_neq(real, 0);

	plant(&s, "aaaaaaaaaaaa", "victim", victim.pid, real + 1000, (unsigned)getuid());
	H_PADDOCK(&p, s.w.ws, "stop", "--grace", "0s", "aaaaaaaaaaaa");
	assert_one_line_error(&p, "session aaaaaaaaaaaa is stale");
	cr_assert(!h_exists(entry(&s, "aaaaaaaaaaaa", "")), "the stale entry was not removed");

	plant(&s, "bbbbbbbbbbbb", "victim", victim.pid, real + 1000, (unsigned)getuid());
	H_PADDOCK(&p, s.w.ws, "wait", "victim");
	assert_one_line_error(&p, "session bbbbbbbbbbbb is stale");

	h_sleep_ms(200);
	cr_assert_eq(start_time(victim.pid), real, "the unrelated process was hit");
	cr_assert_eq(waitpid(victim.pid, NULL, WNOHANG), 0, "the unrelated process ended");
}

/* ------------------------------------------------------------- bad inputs */

Test(sessions, bad_inputs_are_one_line_errors)
{
	struct h_sworld s = h_sworld();
	const char *m = h_marker();
	struct h_proc p;

	H_PADDOCK(&p, s.w.ws, "stop", "0123456789ab");
	assert_one_line_error(&p, "no such session: 0123456789ab");
	H_PADDOCK(&p, s.w.ws, "wait", "nosuchname");
	assert_one_line_error(&p, "no such session: nosuchname");
	H_PADDOCK(&p, s.w.ws, "stop", "../../etc");
	assert_one_line_error(&p, "no such session");
	H_PADDOCK(&p, s.w.ws, "stop");
	assert_one_line_error(&p, "no session given");
	H_PADDOCK(&p, s.w.ws, "wait", "a", "b");
	assert_one_line_error(&p, "unexpected argument 'b'");
	H_PADDOCK(&p, s.w.ws, "stop", "--grace");
	assert_one_line_error(&p, "needs an argument");
	H_PADDOCK(&p, s.w.ws, "stop", "--grace", "soon", "x");
	assert_one_line_error(&p, "--grace soon: invalid duration");
	H_PADDOCK(&p, s.w.ws, "ps", "--grace", "1s");
	assert_one_line_error(&p, "unknown option");
	H_PADDOCK(&p, s.w.ws, "rm");
	assert_one_line_error(&p, "no session given");
	H_PADDOCK(&p, s.w.ws, "run", "--name", "no spaces", "--", "true");
	assert_one_line_error(&p, "--name no spaces: invalid name");
	H_PADDOCK(&p, s.w.ws, "run", "--name", "..", "--", "true");
	assert_one_line_error(&p, "invalid name");

	/* A command that cannot run: the exec status, and no entry left. */
	H_PADDOCK(&p, s.w.ws, "run", "--detach", "--", "/nonexistent/paddock-cmd", m);
	cr_assert_eq(p.status, 127, H_SHOW(&p));
	cr_assert_str_eq(p.out_text, "", H_SHOW(&p));
	cr_assert_eq(h_count_lines(p.err_text), 1, H_SHOW(&p));
	H_PADDOCK(&p, s.w.ws, "run", "--detach", "--policy", "/nonexistent.json", "--", "true");
	assert_one_line_error(&p, "/nonexistent.json");
	H_PADDOCK(&p, s.w.ws, "ps", "--all");
	cr_assert_eq(h_count_lines(p.out_text), 1, "only the header: " H_FMT, H_ARGS(&p));

	/* An entry of another uid's in our registry. */
	plant(&s, "cccccccccccc", "theirs", getpid(), start_time(getpid()), 65534);
	H_PADDOCK(&p, s.w.ws, "stop", "cccccccccccc");
	assert_one_line_error(&p, "session cccccccccccc belongs to uid 65534");
	cr_assert(h_exists(entry(&s, "cccccccccccc", "session.json")), "another's entry removed");
}

Test(sessions, a_registry_that_is_not_private_is_refused)
{
	struct h_sworld s = h_sworld();
	char *other = h_mkdir(s.w.base, "elsewhere", 0700);
	struct h_proc p;

	h_mkdir(s.xdg, "paddock", 0755);
	H_PADDOCK(&p, s.w.ws, "ps");
	assert_one_line_error(&p, "mode 0755, not 0700");
	H_PADDOCK(&p, s.w.ws, "run", "--", "sh", "-c", "echo ran");
	assert_one_line_error(&p, "mode 0755, not 0700");
	cr_assert_str_eq(p.out_text, "", "the workload ran: " H_FMT, H_ARGS(&p));

	cr_assert_eq(rmdir(s.reg), 0);
	cr_assert_eq(symlink(other, s.reg), 0);
	H_PADDOCK(&p, s.w.ws, "run", "--detach", "--", "sh", "-c", "echo ran");
	assert_one_line_error(&p, "not a directory (a symlink?)");
	H_PADDOCK(&p, s.w.ws, "stop", "0123456789ab");
	assert_one_line_error(&p, "not a directory (a symlink?)");
	cr_assert_str_eq(h_list_dir(other), "", "something was made through the symlink");
}

Test(sessions, the_registry_is_never_visible_in_a_sandbox)
{
	struct h_sworld s = h_sworld();
	struct h_proc p;

	H_PADDOCK(&p, s.w.ws, "ps");
	cr_assert_eq(p.status, 0, H_SHOW(&p));
	/* Read-only too: connect(2) to a socket on a read-only mount works. */
	H_PADDOCK(&p, s.w.ws, "run", "--ro-bind", h_fmt("%s:/mnt", s.xdg), "--", "sh", "-c",
		  "echo ran");
	assert_one_line_error(&p, "the sandbox would see it through the bind");
	cr_assert_str_eq(p.out_text, "", H_SHOW(&p));
	H_PADDOCK(&p, s.w.ws, "run", "--bind", h_fmt("%s:/mnt", s.w.base), "--", "true");
	assert_one_line_error(&p, "session registry");
}

/* --------------------------------------------------------- two users */

/* The other user's session, started by run.sh as paddock-test2. */
struct other {
	const char *id, *dir, *socket;
	pid_t init;
	unsigned long long init_start;
};

static struct other other_session(void)
{
	struct other o = {0};
	const char *uid2 = getenv("PADDOCK_TEST_UID2");
	const char *err = getenv("PADDOCK_TEST_OTHER_ERROR");

	if (!uid2 || !uid2[0])
		h_skip("needs run.sh as root (a second test user)");
	cr_assert(!err || !err[0], "run.sh could not start the other user's session: %s", err);
	o.id = getenv("PADDOCK_TEST_OTHER_ID");
	o.dir = getenv("PADDOCK_TEST_OTHER_DIR");
	o.socket = getenv("PADDOCK_TEST_OTHER_SOCKET");
	cr_assert(o.id && o.dir && o.socket, "PADDOCK_TEST_OTHER_* missing");
	o.init = atoi(getenv("PADDOCK_TEST_OTHER_INIT_PID") ?: "0");
	o.init_start = strtoull(getenv("PADDOCK_TEST_OTHER_INIT_START") ?: "0", NULL, 10);
	cr_assert_neq(o.init, 0);
	cr_assert_eq(start_time(o.init), o.init_start, "the other user's session is not running");
	cr_assert_neq((unsigned)atoi(uid2), (unsigned)getuid());
	return o;
}

Test(sessions, another_users_session_cannot_be_stopped_or_waited_on)
{
	struct h_sworld s = h_sworld();
	struct other o = other_session();
	struct h_proc p;

	H_PADDOCK(&p, s.w.ws, "stop", "--grace", "0s", o.id);
	assert_one_line_error(&p, h_fmt("no such session: %s", o.id));
	H_PADDOCK(&p, s.w.ws, "stop", "other");
	assert_one_line_error(&p, "no such session: other");
	H_PADDOCK(&p, s.w.ws, "wait", o.id);
	assert_one_line_error(&p, "no such session");
	H_PADDOCK(&p, s.w.ws, "rm", o.id);
	assert_one_line_error(&p, "no such session");
	/* Not even with its registry as our runtime directory: it is not
	 * ours, so ours is elsewhere (and theirs is 0700 anyway). */
	setenv("XDG_RUNTIME_DIR", h_fmt("%.*s", (int)(strrchr(o.dir, '/') - o.dir), o.dir), 1);
	H_PADDOCK(&p, s.w.ws, "stop", o.id);
	cr_assert_eq(p.status, 125, H_SHOW(&p));
	cr_assert_eq(access(h_fmt("%s/session.json", o.dir), R_OK), -1);
	cr_assert_eq(errno, EACCES);
	h_sleep_ms(200);
	cr_assert_eq(start_time(o.init), o.init_start, "the other user's session was ended");
}

/* With the directory and socket modes out of the way (run.sh hard-linked
 * the other session's socket where we can reach it and made it 0666), the
 * supervisor still refuses us: SO_PEERCRED. */
Test(sessions, a_control_socket_answers_only_its_owner)
{
	struct other o = other_session();
	const char *requests[] = {"stop 0", "wait", "info"};

	for (size_t i = 0; i < 3; i++) {
		struct sockaddr_un sa = {.sun_family = AF_UNIX};
		int fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
		char reply[256];
		ssize_t n;

		cr_assert_geq(fd, 0);
		snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", o.socket);
		cr_assert_eq(connect(fd, (struct sockaddr *)&sa, sizeof(sa)), 0, "connect %s: %s",
			     o.socket, strerror(errno));
		(void)send(fd, requests[i], strlen(requests[i]), MSG_NOSIGNAL);
		n = recv(fd, reply, sizeof(reply) - 1, 0);
		close(fd);
		cr_assert_gt(n, 0, "no reply to %s", requests[i]);
		reply[n] = '\0';
		cr_assert(strncmp(reply, "error session ", 14) == 0 &&
			      strstr(reply, "belongs to uid"),
			  "%s: %s", requests[i], reply);
	}
	h_sleep_ms(200);
	cr_assert_eq(start_time(o.init), o.init_start, "the other user's session was ended");
}

/* The twin of a_control_socket_answers_only_its_owner: the second user's
 * session started with --weaken no-owner-check obeys paddock-test's "stop"
 * through the same kind of 0666 link, so the knob really removes the
 * SO_PEERCRED check (and the check is what refuses above). */
Test(sessions, weaken_no_owner_check_obeys_another_uid)
{
	const char *sock = getenv("PADDOCK_TEST_OTHER_WEAK_SOCKET");
	const char *err = getenv("PADDOCK_TEST_OTHER_WEAK_ERROR");
	pid_t init = atoi(getenv("PADDOCK_TEST_OTHER_WEAK_INIT_PID") ?: "0");
	unsigned long long start =
	    strtoull(getenv("PADDOCK_TEST_OTHER_WEAK_INIT_START") ?: "0", NULL, 10);
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	char reply[256];
	ssize_t n;
	int fd;

	if (!getenv("PADDOCK_TEST_UID2") || !getenv("PADDOCK_TEST_UID2")[0])
		h_skip("needs run.sh as root (a second test user)");
	cr_assert(!err || !err[0], "%s", err);
	cr_assert(sock && sock[0] && init > 0, "PADDOCK_TEST_OTHER_WEAK_* missing");
	cr_assert_eq(start_time(init), start, "the weakened session is not running");
	fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
	cr_assert_geq(fd, 0);
	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", sock);
	cr_assert_eq(connect(fd, (struct sockaddr *)&sa, sizeof(sa)), 0, "connect %s: %s", sock,
		     strerror(errno));
	(void)send(fd, "stop 0", 6, MSG_NOSIGNAL);
	n = recv(fd, reply, sizeof(reply) - 1, 0);
	close(fd);
	reply[n > 0 ? n : 0] = '\0';
	cr_assert_null(strstr(reply, "belongs to uid"), "refused although weakened: %s", reply);
	for (int i = 0; i < 50 && start_time(init) == start; i++)
		h_sleep_ms(100);
	cr_assert_neq(start_time(init), start,
		      "the weakening is not real: the other user's session still runs (%s)", reply);
}

/* paddock logs -f follows until the session ends, then returns 0; a
 * foreground session has no logs, an unknown one is one line and 125. */
Test(sessions, logs_follow_until_the_end)
{
	struct h_sworld s = h_sworld();
	const char *m = h_marker();
	const char *id =
	    detach(&s, "chatty", "echo one; sleep 1; echo two; sleep 1; echo three", m);
	struct h_proc p;

	H_PADDOCK(&p, s.w.ws, "logs", "-f", "chatty");
	cr_assert_eq(p.status, 0, H_SHOW(&p));
	cr_assert_str_eq(p.out_text, "one\ntwo\nthree\n", H_SHOW(&p));
	cr_assert(ended_within(&s, id, 5000));
	H_PADDOCK(&p, s.w.ws, "logs", "nosuch");
	cr_assert_eq(p.status, 125, H_SHOW(&p));
	cr_assert_str_eq(p.err_text, "paddock: no such session: nosuch\n", H_SHOW(&p));
	H_PADDOCK(&p, s.w.ws, "logs", "--bogus", id);
	cr_assert_eq(p.status, 125, H_SHOW(&p));
	H_PADDOCK(&p, s.w.ws, "logs");
	cr_assert_eq(p.status, 125, H_SHOW(&p));
}

/* A unique prefix of an id names its session for every verb; two that
 * share it are refused by name, never guessed. */
Test(sessions, id_prefixes_unique_or_refused)
{
	struct h_sworld s = h_sworld();
	const char *m = h_marker();
	const char *ids[24];
	struct h_proc p;
	const char *shared = NULL, *unique = NULL;

	/* 24 ids of 16 first digits: two share one (pigeonhole). */
	for (int i = 0; i < 24; i++)
		ids[i] = detach(&s, NULL, "exit 0", m);
	for (int i = 0; i < 24 && !shared; i++)
		for (int j = i + 1; j < 24 && !shared; j++)
			if (ids[i][0] == ids[j][0])
				shared = h_fmt("%.1s", ids[i]);
	cr_assert_not_null(shared);
	for (int i = 0; i < 24; i++)
		ended_within(&s, ids[i], 5000);
	H_PADDOCK(&p, s.w.ws, "wait", shared);
	cr_assert_eq(p.status, 125, H_SHOW(&p));
	cr_assert(h_contains(p.err_text, "ambiguous"), H_SHOW(&p));
	unique = h_fmt("%.11s", ids[0]);
	H_PADDOCK(&p, s.w.ws, "wait", unique);
	cr_assert_eq(p.status, 0, H_SHOW(&p));
	H_PADDOCK(&p, s.w.ws, "rm", unique);
	cr_assert_eq(p.status, 0, H_SHOW(&p));
	cr_assert(!h_exists(entry(&s, ids[0], "")));
}

/* run --detach --rm: the entry and its output go when it ends; a waiter
 * connected before still gets the status. */
Test(sessions, detach_rm_removes_the_entry_at_the_end)
{
	struct h_sworld s = h_sworld();
	const char *m = h_marker();
	struct h_proc p;
	const char *id;

	H_PADDOCK(&p, s.w.ws, "run", "--detach", "--rm", "--", "sh", "-c", "sleep 1; exit 7", m);
	cr_assert_eq(p.status, 0, H_SHOW(&p));
	id = h_fmt("%.12s", p.out_text);
	H_PADDOCK(&p, s.w.ws, "wait", id);
	cr_assert_eq(p.status, 7, H_SHOW(&p));
	for (int i = 0; i < 100 && h_exists(entry(&s, id, "")); i++)
		h_sleep_ms(20);
	cr_assert(!h_exists(entry(&s, id, "")), "the entry is still there");
	cr_assert_null(ps_row(&s, id, true, &p), H_SHOW(&p));
	/* The twin: without --rm it stays until paddock rm. */
	id = detach(&s, NULL, "exit 7", m);
	cr_assert(ended_within(&s, id, 5000));
	cr_assert_not_null(ps_row(&s, id, true, &p), H_SHOW(&p));
}

/* paddock stop with the supervisor stopped (SIGSTOP): it cannot answer,
 * so stop says so after 2 s and ends the sandbox from outside (SIGKILL to
 * paddock-init by pidfd); resumed, the supervisor records the end. */
Test(sessions, stop_with_a_stopped_supervisor_ends_the_sandbox)
{
	struct h_sworld s = h_sworld();
	const char *m = h_marker();
	const char *id = detach(&s, NULL, "exec sleep 300 $0", m);
	pid_t sup = (pid_t)atol(js(&s, id, "d['supervisor']['pid']"));
	struct h_proc p;
	pid_t left[4];
	size_t n = 1;

	cr_assert_eq(kill(sup, SIGSTOP), 0);
	H_PADDOCK(&p, s.w.ws, "stop", id);
	kill(sup, SIGCONT);
	cr_assert_eq(p.status, 0, H_SHOW(&p));
	cr_assert(h_contains(p.err_text, "is stopped and does not answer; ended its sandbox from "
					 "outside"),
		  H_SHOW(&p));
	cr_assert_lt(p.secs, 10.0, H_SHOW(&p));
	for (int i = 0; i < 250 && (n = h_marker_pids(m, left, 4)); i++)
		h_sleep_ms(20);
	cr_assert_eq(n, 0, "the workload is still there (pid %d)", (int)left[0]);
	cr_assert(ended_within(&s, id, 10000));
	/* Resumed, it reads the stop request queued on its socket. */
	cr_assert(!strcmp(js(&s, id, "d['ended']"), "\"stopped\"") ||
		      !strcmp(js(&s, id, "d['ended']"), "\"init-died\""),
		  "%s", js(&s, id, "d['ended']"));
}
