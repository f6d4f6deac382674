/* Integration: the second witness (docs/evidence.md, "A second witness").
 * A policy's evidence.witness names a directory (or file) outside the
 * state directory and every bind of the sandbox; the run writes every
 * source's checkpoint there too, and paddock evidence verify checks the
 * log against both and says which disagrees. The owner's consistent
 * rewrite of log and record (a tail cut off, the record's checkpoint
 * moved to match) is seen only with the second witness: its twin without
 * one verifies COMPLETE, which is what the second witness is for. A
 * rewritten or missing witness is INCOMPLETE, and one the workload could
 * reach is refused before anything starts. */
#include "harness.h"

TestSuite(evidence_witness, .init = h_init, .fini = h_fini, .timeout = 90);

/* The agent profile, and a witness at wit when not NULL. */
static char *policy(const struct h_world *w, const char *wit)
{
	char *path = h_join(w->base, "witness-policy.json");

	h_write_file(path,
		     wit ? h_fmt("{\"version\": 1, \"extends\": \"agent\", \"evidence\": "
				 "{\"witness\": \"%s\"}}",
				 wit)
			 : "{\"version\": 1, \"extends\": \"agent\"}",
		     0644);
	return path;
}

/* A directory of its own, outside the record's (w->base) and every bind. */
static char *witness_dir(void)
{
	char *d = h_tmpdir();

	chmod(d, 0700);
	return d;
}

static void run(const struct h_world *w, const char *wit, const char *script)
{
	struct h_proc p;

	H_PADDOCK(&p, w->ws, "run", "--policy", policy(w, wit), "--record", w->record, "--", "sh",
		  "-c", script);
	cr_assert_eq(p.status, 0, H_SHOW(&p));
}

static int verify(const struct h_world *w, struct h_proc *p)
{
	return H_PADDOCK(p, w->ws, "evidence", "verify", h_fmt("%s.evidence.jsonl", w->record),
			 "--record", w->record);
}

static const char *witness_file(const struct h_world *w)
{
	const char *q = h_json(w->record, "d['evidence']['witness']['path']");
	size_t n = strlen(q);

	cr_assert_gt(n, 2, "no witness in the record");
	return h_fmt("%.*s", (int)(n - 2), q + 1);
}

/* Cut the log after its line k and move the record's checkpoint to
 * match, as an owner who holds the key and the record could. */
static void rewrite_consistently(const struct h_world *w, int k)
{
	char *log = h_fmt("%s.evidence.jsonl", w->record), *text = h_read_file(log, NULL), *at;
	struct h_proc p;

	at = text;
	for (int i = 0; i < k; i++)
		at = strchr(at, '\n') + 1;
	*at = '\0';
	h_write_file(log, text, 0600);
	H_CMD(&p, NULL, H_PYTHON, "-c",
	      "import json,sys,hashlib\n"
	      "lines=open(sys.argv[1],'rb').read().split(b'\\n')[:-1]\n"
	      "d=json.load(open(sys.argv[2]))\n"
	      "s=d['evidence']['sources'][0]\n"
	      "s['seq']=json.loads(lines[-1])['seq']\n"
	      "s['head']=hashlib.sha256(lines[-1]).hexdigest()\n"
	      "d['evidence']['seq']=s['seq']; d['evidence']['head']=s['head']\n"
	      "json.dump(d,open(sys.argv[2],'w'))\n",
	      log, w->record);
	cr_assert_eq(p.status, 0, H_SHOW(&p));
}

Test(evidence_witness, a_run_writes_it_and_verify_checks_both)
{
	struct h_world w = h_world();
	char *dir = witness_dir();
	struct h_proc p;

	/* Inside, the witness's directory does not exist. */
	run(&w, dir, h_fmt("ls %s >/dev/null 2>&1 && echo seen; exit 0", dir));
	cr_assert_str_eq(h_json(w.record, "d['evidence']['witness']['written']"), "true");
	cr_assert_eq(verify(&w, &p), 0, H_SHOW(&p));
	cr_assert(strstr(p.out_text, "and the second witness"), H_SHOW(&p));
	cr_assert(strstr(p.out_text, "\nCOMPLETE\n"), H_SHOW(&p));
	cr_assert_str_eq(h_json(witness_file(&w), "d['evidence']['sources']"),
			 h_json(w.record, "d['evidence']['sources']"));
	cr_assert_str_eq(h_json(witness_file(&w), "d['session']['id']"),
			 h_json(w.record, "d['session']['id']"));
}

Test(evidence_witness, a_consistent_rewrite_of_log_and_record_is_seen)
{
	struct h_world w = h_world();
	struct h_proc p;

	run(&w, witness_dir(), "echo a; echo b; exit 0");
	rewrite_consistently(&w, 3);
	cr_assert_eq(verify(&w, &p), 1, H_SHOW(&p));
	cr_assert(strstr(p.out_text, "supervisor: the second witness disagrees"), H_SHOW(&p));
	/* The record and the log agree with each other: nothing else is
	 * said against them. */
	cr_assert(!strstr(p.out_text, "does not follow"), H_SHOW(&p));
	cr_assert(strstr(p.out_text, "\nINCOMPLETE\n"), H_SHOW(&p));
}

/* The twin: without a second witness the same rewrite is unseen. */
Test(evidence_witness, twin_without_a_witness_the_rewrite_is_unseen)
{
	struct h_world w = h_world();
	struct h_proc p;

	run(&w, NULL, "echo a; echo b; exit 0");
	rewrite_consistently(&w, 3);
	cr_assert_eq(verify(&w, &p), 0, "a consistent rewrite passes without a witness: " H_FMT,
		     H_ARGS(&p));
	cr_assert(strstr(p.out_text, "\nCOMPLETE\n"), H_SHOW(&p));
}

Test(evidence_witness, a_rewritten_witness_or_record_is_named)
{
	struct h_world w = h_world();
	struct h_proc p;
	const char *wf;
	char *saved, *rsaved;

	run(&w, witness_dir(), "exit 0");
	wf = witness_file(&w);
	saved = h_read_file(wf, NULL);
	rsaved = h_read_file(w.record, NULL);
	/* the witness moved back by one */
	H_CMD(&p, NULL, H_PYTHON, "-c",
	      "import json,sys\nd=json.load(open(sys.argv[1]))\n"
	      "d['evidence']['sources'][0]['seq']-=1\njson.dump(d,open(sys.argv[1],'w'))\n",
	      wf);
	cr_assert_eq(verify(&w, &p), 1, H_SHOW(&p));
	cr_assert(strstr(p.out_text, "the second witness disagrees"), H_SHOW(&p));
	h_write_file(wf, saved, 0600);
	/* the record moved back by one: the record is the odd one */
	H_CMD(&p, NULL, H_PYTHON, "-c",
	      "import json,sys\nd=json.load(open(sys.argv[1]))\n"
	      "d['evidence']['sources'][0]['seq']-=1\njson.dump(d,open(sys.argv[1],'w'))\n",
	      w.record);
	cr_assert_eq(verify(&w, &p), 1, H_SHOW(&p));
	cr_assert(strstr(p.out_text, "the record disagrees"), H_SHOW(&p));
	h_write_file(w.record, rsaved, 0600);
	/* a witness of another session */
	h_write_file(wf,
		     h_fmt("{\"session\":{\"id\":\"0123456789ab\"},\"evidence\":%s}",
			   h_json(wf, "d['evidence']")),
		     0600);
	cr_assert_eq(verify(&w, &p), 1, H_SHOW(&p));
	cr_assert(strstr(p.out_text, "of session 0123456789ab"), H_SHOW(&p));
	/* both back: complete again */
	h_write_file(wf, saved, 0600);
	cr_assert_eq(verify(&w, &p), 0, H_SHOW(&p));
}

Test(evidence_witness, a_missing_witness_is_incomplete)
{
	struct h_world w = h_world();
	struct h_proc p;

	run(&w, witness_dir(), "exit 0");
	cr_assert_eq(unlink(witness_file(&w)), 0);
	cr_assert_eq(verify(&w, &p), 1, H_SHOW(&p));
	cr_assert(strstr(p.out_text, "No such file or directory"), H_SHOW(&p));
	cr_assert(strstr(p.out_text, "\nINCOMPLETE\n"), H_SHOW(&p));
	/* --witness names another file: that one is read */
	H_PADDOCK(&p, w.ws, "evidence", "verify", h_fmt("%s.evidence.jsonl", w.record), "--record",
		  w.record, "--witness", "/nonexistent/witness.json");
	cr_assert_eq(p.status, 1, H_SHOW(&p));
	cr_assert(strstr(p.out_text, "/nonexistent/witness.json: No such file"), H_SHOW(&p));
}

/* Refused at start, one line, nothing run: in the workspace (a writable
 * bind), under a read-only bind (/usr), in the record's directory (with the
 * logs and the key). */
Test(evidence_witness, a_witness_the_workload_or_the_state_could_reach_is_refused)
{
	struct h_world w = h_world();
	const char *where[][2] = {
	    {h_join(w.ws, "witness.json"), "could reach it through the bind"},
	    {"/usr/paddock-witness.json", "could reach it through the bind /usr"},
	    {h_join(w.base, "witness.json"), "in the record's directory"},
	    {w.base, "could reach it through the bind"}, /* the workspace is below it */
	    {"/nonexistent-dir/witness.json", "its directory"},
	};
	struct h_proc p;

	for (size_t i = 0; i < sizeof(where) / sizeof(where[0]); i++) {
		H_PADDOCK(&p, w.ws, "run", "--policy", policy(&w, where[i][0]), "--record",
			  w.record, "--", "sh", "-c", h_fmt("touch %s/ran", w.ws));
		cr_assert_eq(p.status, 125, "%s: " H_FMT, where[i][0], H_ARGS(&p));
		cr_assert(strstr(p.err_text, where[i][1]), "%s: " H_FMT, where[i][0], H_ARGS(&p));
		cr_assert_eq(h_count_lines(p.err_text), 1, H_SHOW(&p));
		cr_assert_neq(access(h_join(w.ws, "ran"), F_OK), 0, "%s: it ran", where[i][0]);
		cr_assert_neq(access(where[i][0], F_OK) == 0 && strcmp(where[i][0], w.base) != 0, 1,
			      "%s: written", where[i][0]);
	}
	/* A relative path is a policy error. */
	H_PADDOCK(&p, w.ws, "run", "--policy", policy(&w, "witness.json"), "--", "true");
	cr_assert_eq(p.status, 125, H_SHOW(&p));
	cr_assert(strstr(p.err_text, "evidence.witness: must be an absolute path"), H_SHOW(&p));
}

/* A witness path that is not a directory is the file itself, replaced at
 * every run: the latest run verifies against it, an earlier one's record
 * names a witness of another session now (INCOMPLETE, and said). */
Test(evidence_witness, a_file_witness_is_the_latest_runs)
{
	struct h_world w = h_world();
	char *file = h_join(witness_dir(), "witness.json");
	char *first = h_join(w.base, "first.json");
	struct h_proc p;

	run(&w, file, "exit 0");
	cr_assert_eq(rename(w.record, first), 0);
	cr_assert_eq(
	    rename(h_fmt("%s.evidence.jsonl", w.record), h_fmt("%s.evidence.jsonl", first)), 0);
	cr_assert_eq(rename(h_fmt("%s.evidence.key", w.record), h_fmt("%s.evidence.key", first)),
		     0);
	run(&w, file, "exit 0");
	cr_assert_str_eq(witness_file(&w), file);
	cr_assert_eq(verify(&w, &p), 0, H_SHOW(&p));
	H_PADDOCK(&p, w.ws, "evidence", "verify", h_fmt("%s.evidence.jsonl", first), "--record",
		  first);
	cr_assert_eq(p.status, 1, H_SHOW(&p));
	cr_assert(strstr(p.out_text, "of session"), H_SHOW(&p));
}
