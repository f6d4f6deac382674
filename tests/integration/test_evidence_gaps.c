/* Integration: gaps in the evidence are explicit (docs/evidence.md, HB-18).
 * A mediated run writes two logs, the supervisor's and the mediator's,
 * tied by checkpoints (the record's "evidence.sources" and the
 * supervisor's "checkpoint" event); paddock evidence verify checks both.
 * A line removed from either, a cut-off tail or a checkpoint that does not
 * match makes it INCOMPLETE with the missing sequence numbers. The twin:
 * with --weaken no-seq the same removal leaves a clean-looking log
 * (COMPLETE), which is what the sequence numbers and the chain are for.
 * network.on_capture_loss under a file size limit the admissions log
 * reaches: deny lets nothing more out, its twin allow lets everything out;
 * both runs' evidence says INCOMPLETE (the mediator's last word, the lines
 * it lost, is in the checkpoint). */
#include "harness.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdatomic.h>
#include <sys/socket.h>
#include <sys/stat.h>

TestSuite(evidence_gaps, .init = h_init, .fini = h_fini, .timeout = 150);

/* The agent policy with a mediated network allowing gap.test on port
 * 19021 (nothing listens there: the mediator admits, then fails to dial). */
static char *policy(const struct h_world *w)
{
	char *path = h_join(w->base, "net.json");
	const char *src = h_read_file(h_fmt("%s/contrib/policies/agent.json", h_root()), NULL);
	const char *at = strstr(src, "\"network\": \"none\",");

	cr_assert_not_null(at, "agent.json has no \"network\": \"none\" line");
	h_write_file(path,
		     h_fmt("%.*s\"network\": {\"mode\": \"mediated\", \"allow\": [{\"host\": "
			   "\"gap.test\", \"ports\": [19021], \"protocol\": \"http\"}], "
			   "\"resolve\": {\"gap.test\": \"127.0.0.1\"}},%s",
			   (int)(at - src), src, at + strlen("\"network\": \"none\",")),
		     0644);
	return path;
}

static void run(const struct h_world *w, const char *weaken)
{
	struct h_proc p;
	const char *script = "curl -s -m 3 http://gap.test:19021/a; "
			     "curl -s -m 3 --noproxy '*' http://gap.test:19021/b; exit 0";

	if (weaken)
		H_PADDOCK(&p, w->ws, "run", "--policy", policy(w), "--weaken", weaken, "--record",
			  w->record, "--", "sh", "-c", script);
	else
		H_PADDOCK(&p, w->ws, "run", "--policy", policy(w), "--record", w->record, "--",
			  "sh", "-c", script);
	cr_assert_eq(p.status, 0, H_SHOW(&p));
}

static int verify(const struct h_world *w, struct h_proc *p)
{
	return H_PADDOCK(p, w->ws, "evidence", "verify", h_fmt("%s.evidence.jsonl", w->record),
			 "--record", w->record);
}

/* text without its line number k (from 1). */
static char *without_line(const char *text, int k)
{
	const char *a = text, *b;

	while (--k > 0)
		a = strchr(a, '\n') + 1;
	b = strchr(a, '\n') + 1;
	return h_fmt("%.*s%s", (int)(a - text), text, b);
}

Test(evidence_gaps, two_sources_verify_complete_and_each_gap_is_named)
{
	struct h_world w = h_world();
	char *slog = h_fmt("%s.evidence.jsonl", w.record);
	char *mlog = h_fmt("%s.admissions.jsonl", w.record);
	char *stext, *mtext, *rtext;
	struct h_proc p;
	size_t slen, mlen, rlen;

	run(&w, NULL);
	cr_assert_eq(verify(&w, &p), 0, H_SHOW(&p));
	cr_assert(strstr(p.out_text, "2 source(s)"), H_SHOW(&p));
	cr_assert(strstr(p.out_text, "  supervisor: complete"), H_SHOW(&p));
	cr_assert(strstr(p.out_text, "  mediator: complete"), H_SHOW(&p));
	cr_assert(strstr(p.out_text, "\nCOMPLETE\n"), H_SHOW(&p));
	cr_assert_str_eq(h_json(w.record, "[s['source'] for s in d['evidence']['sources']]"),
			 "[\"supervisor\", \"mediator\"]");
	cr_assert_str_eq(h_json(w.record, "d['evidence']['sources'][1]['seq'] >= 3"), "true");
	/* HB-20: the controls, labelled; the mediator refused nothing here
	 * (both requests were allowed, then failed to connect). */
	cr_assert_str_eq(h_json(w.record, "[(c['control'], c['kind']) for c in d['controls'] "
					  "if c['control'] in ('mediator', 'tampering-check', "
					  "'expiry')]"),
			 "[[\"mediator\", \"prevention\"], [\"tampering-check\", \"detection\"], "
			 "[\"expiry\", \"response\"]]");
	cr_assert_str_eq(h_json(w.record, "[c['effect_observed'] for c in d['controls']]"),
			 "[null, null, null, null, null, null, null, null]");
	stext = h_read_file(slog, &slen);
	mtext = h_read_file(mlog, &mlen);
	rtext = h_read_file(w.record, &rlen);
	cr_assert(strstr(stext, "\"type\":\"checkpoint\",\"of\":\"mediator\""), "%s", stext);
	cr_assert(strstr(mtext, "\"type\":\"started\""), "%s", mtext);

	/* A supervisor line removed: its sequence number is named. */
	h_write_file(slog, without_line(stext, 2), 0600);
	cr_assert_eq(verify(&w, &p), 1, H_SHOW(&p));
	cr_assert(strstr(p.out_text, "supervisor: line 2: sequence numbers 2-2 are missing"),
		  H_SHOW(&p));
	cr_assert(strstr(p.out_text, "supervisor: missing seq 2-2"), H_SHOW(&p));
	cr_assert(strstr(p.out_text, "mediator: complete"), H_SHOW(&p));
	cr_assert(strstr(p.out_text, "\nINCOMPLETE\n"), H_SHOW(&p));
	h_write_file(slog, stext, 0600);

	/* The mediator's last line cut off: only its checkpoint can tell. */
	{
		const char *last = mtext + mlen - 1;
		int n = 0;

		while (last > mtext && last[-1] != '\n')
			last--;
		for (const char *c = mtext; *c; c++)
			n += *c == '\n';
		h_write_file(mlog, h_fmt("%.*s", (int)(last - mtext), mtext), 0600);
		cr_assert_eq(verify(&w, &p), 1, H_SHOW(&p));
		cr_assert(strstr(p.out_text, h_fmt("mediator: missing seq %d-%d", n, n)),
			  H_SHOW(&p));
		cr_assert(strstr(p.out_text, "supervisor: complete"), H_SHOW(&p));
	}
	/* A mediator line from the middle removed. */
	h_write_file(mlog, without_line(mtext, 2), 0600);
	cr_assert_eq(verify(&w, &p), 1, H_SHOW(&p));
	cr_assert(strstr(p.out_text, "mediator: missing seq 2-2"), H_SHOW(&p));
	h_write_file(mlog, mtext, 0600);
	cr_assert_eq(verify(&w, &p), 0, H_SHOW(&p));

	/* The record's checkpoint of the mediator edited: it no longer
	 * matches the log, nor the supervisor's checkpoint event. */
	{
		char *e = h_fmt("%s", rtext), *s = strstr(e, "\"sources\"");

		cr_assert_not_null(s, "%s", rtext);
		s = strstr(strstr(s, "\"mediator\""), "\"head\":");
		s = strchr(s + 7, '"') + 1; /* the record is printed with tabs */
		*s = *s == '0' ? '1' : '0';
		h_write_file(w.record, e, 0600);
		cr_assert_eq(verify(&w, &p), 1, H_SHOW(&p));
		cr_assert(strstr(p.out_text, "mediator: the record's checkpoint does not match"),
			  H_SHOW(&p));
		h_write_file(w.record, rtext, 0600);
	}
	/* The mediator's log gone altogether. */
	h_write_file(mlog, "", 0600);
	cr_assert_eq(verify(&w, &p), 1, H_SHOW(&p));
	cr_assert(strstr(p.out_text, "mediator: the log is empty"), H_SHOW(&p));
	h_write_file(mlog, mtext, 0600);
	cr_assert_eq(verify(&w, &p), 0, H_SHOW(&p));
}

/* The twin: --weaken no-seq writes lines without seq and prev; the same
 * removal is then not seen at all. */
Test(evidence_gaps, weakened_no_seq_hides_a_removed_line)
{
	struct h_world w = h_world();
	char *slog = h_fmt("%s.evidence.jsonl", w.record);
	char *mlog = h_fmt("%s.admissions.jsonl", w.record);
	struct h_proc p;
	char *stext, *mtext;

	run(&w, "no-seq");
	cr_assert_str_eq(h_json(w.record, "'no-seq' in d['weakenings']"), "true");
	cr_assert_str_eq(h_json(w.record, "d['evidence']['sequenced']"), "false");
	stext = h_read_file(slog, NULL);
	mtext = h_read_file(mlog, NULL);
	cr_assert_null(strstr(stext, "\"seq\":"), "%s", stext);
	h_write_file(slog, without_line(stext, 2), 0600);
	h_write_file(mlog, without_line(mtext, 2), 0600);
	cr_assert_eq(verify(&w, &p), 0, "the removal should go unseen: " H_FMT, H_ARGS(&p));
	cr_assert(strstr(p.out_text, "unsequenced"), H_SHOW(&p));
}

/* ------------------------------------------------ on_capture_loss */

struct counter {
	int fd, port;
	atomic_int count;
	pthread_t thread;
};

static void *serve(void *arg)
{
	struct counter *c = arg;

	for (;;) {
		char buf[2048];
		int s = accept(c->fd, NULL, NULL);

		if (s < 0)
			return NULL;
		atomic_fetch_add(&c->count, 1);
		(void)!recv(s, buf, sizeof(buf), 0);
		(void)!send(s,
			    "HTTP/1.1 200 OK\r\nContent-Length: 3\r\nConnection: close\r\n\r\nok\n",
			    61, MSG_NOSIGNAL);
		close(s);
	}
}

static struct counter *counter(void)
{
	struct counter *c = calloc(1, sizeof(*c));
	struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	socklen_t len = sizeof(a);

	cr_assert_not_null(c);
	c->fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	cr_assert_eq(bind(c->fd, (struct sockaddr *)&a, sizeof(a)), 0);
	cr_assert_eq(listen(c->fd, 64), 0);
	cr_assert_eq(getsockname(c->fd, (struct sockaddr *)&a, &len), 0);
	c->port = ntohs(a.sin_port);
	cr_assert_eq(pthread_create(&c->thread, NULL, serve, c), 0);
	return c;
}

/* 160 requests under a file size limit (100 kB: above paddock-init's copy
 * in a memfd, 88 kB) the admissions log reaches after about 110 of them;
 * the record and the supervisor's log stay below it. */
static int capture_run(const struct h_world *w, const char *mode, struct counter *c,
		       struct h_proc *p)
{
	char *path = h_join(w->base, "cap.json");
	const char *src = h_read_file(h_fmt("%s/contrib/policies/agent.json", h_root()), NULL);
	const char *at = strstr(src, "\"network\": \"none\",");

	struct stat st;
	char *init = h_fmt("%s", h_paddock());

	/* paddock copies paddock-init into a memfd, which the file size
	 * limit counts too: a sanitizer build's is far larger than the
	 * limit the admissions log must reach, so the run could not start. */
	strcpy(strrchr(init, '/') + 1, "paddock-init");
	if (stat(init, &st) == 0 && st.st_size > 96000)
		h_skip("paddock-init is %lld bytes (a sanitizer build?), above what this test's "
		       "file size limit leaves room for",
		       (long long)st.st_size);
	h_write_file(path,
		     h_fmt("%.*s\"network\": {\"mode\": \"mediated\", \"allow\": [{\"host\": "
			   "\"cap.test\", \"ports\": [%d], \"protocol\": \"http\"}], "
			   "\"resolve\": {\"cap.test\": \"127.0.0.1\"}, \"on_capture_loss\": "
			   "\"%s\"},%s",
			   (int)(at - src), src, c->port, mode,
			   at + strlen("\"network\": \"none\",")),
		     0644);
	return H_CMD(p, w->ws, "/usr/bin/prlimit", "--fsize=100000", h_paddock(), "run", "--policy",
		     path, "--record", w->record, "--", "sh", "-c",
		     h_fmt("i=0; while [ $i -lt 160 ]; do i=$((i+1)); "
			   "curl -s -m 3 -o /dev/null http://cap.test:%d/$i; done; exit 0",
			   c->port));
}

/* deny: once the log is full nothing more goes out, and the record and
 * verify say the capture was impaired. The twin, allow: all 160 go out. */
Test(evidence_gaps, on_capture_loss_deny_stops_what_cannot_be_recorded)
{
	struct h_world w = h_world();
	struct counter *c = counter();
	struct h_proc p;
	int n;

	cr_assert_eq(capture_run(&w, "deny", c, &p), 0, H_SHOW(&p));
	n = atomic_load(&c->count);
	cr_assert(n >= 5 && n < 160, "deny: %d of 160 requests went out", n);
	cr_assert_str_eq(h_json(w.record, "d['network']['capture']['on_capture_loss']"),
			 "\"deny\"");
	cr_assert_str_eq(h_json(w.record, "d['network']['capture']['impaired']"), "true");
	cr_assert_str_eq(h_json(w.record, "d['evidence']['sources'][1]['drops'] > 0"), "true");
	cr_assert_str_eq(h_json(w.record, "d['evidence']['sources'][1]['end_reported']"), "true");
	cr_assert_eq(verify(&w, &p), 1, H_SHOW(&p));
	cr_assert(strstr(p.out_text, "mediator: its checkpoint counts"), H_SHOW(&p));
	cr_assert(strstr(p.out_text, "supervisor: complete"), H_SHOW(&p));
}

Test(evidence_gaps, on_capture_loss_allow_lets_everything_out_unrecorded)
{
	struct h_world w = h_world();
	struct counter *c = counter();
	struct h_proc p;

	cr_assert_eq(capture_run(&w, "allow", c, &p), 0, H_SHOW(&p));
	cr_assert_eq(atomic_load(&c->count), 160, "allow: every request goes out");
	cr_assert_str_eq(h_json(w.record, "d['network']['capture']['impaired']"), "true");
	cr_assert_eq(verify(&w, &p), 1, "unrecorded is still INCOMPLETE: " H_FMT, H_ARGS(&p));
}
