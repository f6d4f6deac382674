/* Integration: the evidence log of a run (docs/evidence.md), checked from
 * outside with paddock evidence verify: a run's log is COMPLETE against its
 * record's checkpoint; the owner's later edits, deletions, reorderings and
 * truncations make it INCOMPLETE; and the workload cannot reach the log or
 * its key. */
#include "harness.h"

TestSuite(evidence_log, .init = h_init, .fini = h_fini, .timeout = 60);

static void run(const struct h_world *w, const char *script)
{
	struct h_proc p;

	H_PADDOCK(&p, w->ws, "run", "--record", w->record, "--", "sh", "-c", script);
	cr_assert_lt(p.status, 125, H_SHOW(&p));
}

static int verify(const struct h_world *w, struct h_proc *p)
{
	return H_PADDOCK(p, w->ws, "evidence", "verify", h_fmt("%s.evidence.jsonl", w->record),
			 "--record", w->record);
}

Test(evidence_log, a_run_verifies_complete_and_every_change_is_seen)
{
	struct h_world w = h_world();
	char *log = h_fmt("%s.evidence.jsonl", w.record);
	struct h_proc p;
	size_t len = 0;
	char *text, *second, *third;

	run(&w, "exit 3");
	cr_assert_eq(verify(&w, &p), 0, H_SHOW(&p));
	cr_assert(strstr(p.out_text, "COMPLETE"), H_SHOW(&p));
	cr_assert_str_eq(h_json(w.record, "d['evidence']['seq'] >= 4"), "true");
	text = h_read_file(log, &len);
	cr_assert(strstr(text, "\"type\":\"run\""));
	cr_assert(strstr(text, "\"message\":\"exit 3\""));
	cr_assert(strstr(text, "\"type\":\"end\",\"ended\":\"exit\",\"status\":3"));
	second = strchr(text, '\n') + 1;
	third = strchr(second, '\n') + 1;
	/* an edited status */
	h_write_file(log, h_fmt("%.*s", (int)len, text), 0600);
	{
		char *e = h_fmt("%s", text), *s = strstr(e, "\"status\":3");

		s[9] = '0';
		h_write_file(log, e, 0600);
		cr_assert_eq(verify(&w, &p), 1, H_SHOW(&p));
		cr_assert(strstr(p.out_text, "MAC does not match"), H_SHOW(&p));
	}
	/* a line deleted */
	h_write_file(log, h_fmt("%.*s%s", (int)(second - text), text, third), 0600);
	cr_assert_eq(verify(&w, &p), 1, H_SHOW(&p));
	cr_assert(strstr(p.out_text, "does not follow"), H_SHOW(&p));
	/* two lines swapped */
	h_write_file(log,
		     h_fmt("%.*s%.*s%.*s%s", (int)(second - text), text,
			   (int)(strchr(third, '\n') + 1 - third), third, (int)(third - second),
			   second, strchr(third, '\n') + 1),
		     0600);
	cr_assert_eq(verify(&w, &p), 1, H_SHOW(&p));
	/* the tail cut off: the record's checkpoint says where the log ends */
	h_write_file(log, h_fmt("%.*s", (int)(third - text), text), 0600);
	cr_assert_eq(verify(&w, &p), 1, H_SHOW(&p));
	cr_assert(strstr(p.out_text, "checkpoint"), H_SHOW(&p));
	/* the original again: complete */
	h_write_file(log, h_fmt("%.*s", (int)len, text), 0600);
	cr_assert_eq(verify(&w, &p), 0, H_SHOW(&p));
}

/* The log and its key are beside the record, which must be outside every
 * writable bind: inside the sandbox the path does not exist, and nothing
 * of the run's writes reaches them. */
Test(evidence_log, the_workload_cannot_reach_the_log_or_key)
{
	struct h_world w = h_world();
	struct h_proc p;
	size_t len = 0;

	H_PADDOCK(
	    &p, w.ws, "run", "--record", w.record, "--", "sh", "-c",
	    h_fmt("for f in %s.evidence.jsonl %s.evidence.key; do "
		  "cat $f >/dev/null 2>&1 && echo read $f; echo x >>$f 2>/dev/null; done; true",
		  w.record, w.record));
	cr_assert_eq(p.status, 0, H_SHOW(&p));
	/* Not visible inside (a write there lands in the sandbox's own
	 * /tmp, never in the files outside). */
	cr_assert_str_eq(p.out_text, "", H_SHOW(&p));
	cr_assert_eq(verify(&w, &p), 0, H_SHOW(&p));
	h_read_file(h_fmt("%s.evidence.key", w.record), &len);
	cr_assert_eq(len, 32, "the key was changed");
}

Test(evidence_log, bad_arguments)
{
	struct h_world w = h_world();
	struct h_proc p;

	H_PADDOCK(&p, w.ws, "evidence", "verify");
	cr_assert_eq(p.status, 125, H_SHOW(&p));
	H_PADDOCK(&p, w.ws, "evidence", "verify", "/nonexistent.jsonl");
	cr_assert_eq(p.status, 125, H_SHOW(&p));
	cr_assert_eq(h_count_lines(p.err_text), 1, H_SHOW(&p));
	H_PADDOCK(&p, w.ws, "evidence", "frobnicate");
	cr_assert_eq(p.status, 125, H_SHOW(&p));
}

/* The twin of the_workload_cannot_reach_the_log_or_key: with --weaken
 * evidence-in-sandbox the record's directory is writable inside, and the
 * same script reads the key and writes into the log. */
Test(evidence_log, weakened_evidence_in_sandbox_lets_the_workload_write_it)
{
	struct h_world w = h_world();
	struct h_proc p;

	/* Its own directory: the record's beside the workspace would be a
	 * bind over it. */
	w.record = h_join(h_mkdir(w.base, "rec", 0755), "record.json");
	H_PADDOCK(
	    &p, w.ws, "run", "--weaken", "evidence-in-sandbox", "--record", w.record, "--", "sh",
	    "-c",
	    h_fmt("for f in %s.evidence.jsonl %s.evidence.key; do "
		  "cat $f >/dev/null 2>&1 && echo read $f; echo x >>$f 2>/dev/null; done; true",
		  w.record, w.record));
	cr_assert_eq(p.status, 0, H_SHOW(&p));
	cr_assert(strstr(p.out_text, h_fmt("read %s.evidence.key", w.record)), H_SHOW(&p));
	cr_assert(strstr(p.err_text, "evidence-in-sandbox"), "warned: " H_FMT, H_ARGS(&p));
	cr_assert_str_eq(h_json(w.record, "'evidence-in-sandbox' in d['weakenings']"), "true");
	cr_assert_neq(verify(&w, &p), 0, "the workload's writes must show: " H_FMT, H_ARGS(&p));
	H_PADDOCK(&p, w.ws, "run", "--weaken", "evidence-in-sandbox", "--", "true");
	cr_assert_eq(p.status, 125, H_SHOW(&p));
	cr_assert(strstr(p.err_text, "needs --record"), H_SHOW(&p));
}

/* The log's files and its run line are made once the child is released
 * (launcher/supervisor/run.c, off the start path): the run line is still
 * seq 1, before every report of paddock-init's, and the record's
 * checkpoint is the log's last line as it is on disk. */
Test(evidence_log, the_run_line_comes_first_and_the_checkpoint_is_the_last_line)
{
	struct h_world w = h_world();
	char *log = h_fmt("%s.evidence.jsonl", w.record);
	const char *prog = "import hashlib,json,sys\n"
			   "l=open(sys.argv[1],'rb').read().split(b'\\n')[:-1]\n"
			   "r=json.load(open(sys.argv[2]))['evidence']\n"
			   "f=[json.loads(x) for x in l]\n"
			   "print(f[0]['type'],f[0]['seq'],f[1]['type'],f[1]['message'].split()[0],"
			   "f[-1]['type'],r['seq']==f[-1]['seq'],"
			   "r['head']==hashlib.sha256(l[-1]).hexdigest())\n";
	struct h_proc p;

	run(&w, "true");
	H_CMD(&p, NULL, H_PYTHON, "-c", prog, log, w.record);
	cr_assert_eq(p.status, 0, H_SHOW(&p));
	cr_assert_str_eq(p.out_text, "run 1 init applied end True True\n", H_SHOW(&p));
}

/* A detached run's caller gets the id once the workload runs: by then the
 * session's log exists and holds its run line (made after the child was
 * released, before the supervisor reads the child's first report). */
Test(evidence_log, a_detached_runs_log_exists_when_its_caller_has_the_id)
{
	struct h_sworld s = h_sworld();
	struct h_proc p;
	char *id, *log;
	size_t len = 0;

	H_PADDOCK(&p, s.w.ws, "run", "--detach", "--", "sleep", "30");
	cr_assert_eq(p.status, 0, H_SHOW(&p));
	id = h_fmt("%.*s", (int)strcspn(p.out_text, "\n"), p.out_text);
	log = h_fmt("%s/%s/evidence.jsonl", s.reg, id);
	cr_assert(access(log, R_OK) == 0, "no log %s when the id was returned", log);
	cr_assert(strstr(h_read_file(log, &len), "\"seq\":1,") != NULL, "%s", log);
	H_PADDOCK(&p, s.w.ws, "evidence", "verify", log);
	cr_expect_eq(p.status, 0, H_SHOW(&p));
	H_PADDOCK(&p, s.w.ws, "stop", "--grace", "0s", id);
	cr_expect_eq(p.status, 0, H_SHOW(&p));
	H_PADDOCK(&p, s.w.ws, "rm", id);
}
