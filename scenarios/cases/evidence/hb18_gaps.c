/* HB-18: a gap in the evidence is explicit.
 *
 * Fixture (outside every sandbox): a counting receiver on 127.0.0.1:19020
 * (receivers/counter.c), "hb18.test" by the policy's network.resolve. The
 * workload makes three requests to it through the mediator. Outside
 * evidence: paddock evidence verify on the untouched logs, against the
 * completion record's checkpoints (the control: COMPLETE, and the receiver
 * got three requests); then the harness drops one known event, the
 * mediator's decision line of the second request (the test-only switch
 * is the harness itself: it removes the line from the mediator's log after
 * the run, as a line lost between the writer and a reader would be; no
 * switch of paddock's, release or test build), and runs verify again: it
 * must say INCOMPLETE and name that line's sequence number as missing.
 *
 * The exporter outage (hb18_outage.c): a second run, its logs on a tmpfs
 * the fixture fills while the workload sends a read and a sensitive
 * request, under network.on_capture_loss allow-read-only: the read must
 * go out, the sensitive one must not, the record must say so and the logs
 * must not verify COMPLETE.
 *
 * Arms: enforced; weakened:no-seq (paddock's --weaken no-seq: lines
 * without sequence numbers or chain, so the removal leaves a clean trace:
 * must FAIL); docker NOT APPLICABLE (no evidence log to verify). */
#include "../../lib/case.h"
#include "../../observers/observe.h"
#include "../../receivers/counter.h"
#include "hb18_grade.h"
#include "hb18_outage.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define PORT 19020
#define NA_REASON                                                                                  \
	"a Docker container writes no evidence log: there is no sequence, chain or checkpoint to " \
	"check"
#define NA_SCOPE "HB-18 (gaps in paddock's evidence logs)"

static const struct case_arm arms[] = {
    {.name = "enforced"},
    {.name = "weakened:no-seq"},
    {.name = "docker",
     .na_reason = {NA_REASON, NA_REASON, NA_REASON},
     .na_scope = {NA_SCOPE, NA_SCOPE, NA_SCOPE}},
    {.name = NULL},
};

#define CLIENTS                                                                    \
	"for i in 1 2 3; do curl -s -m 5 -o /dev/null http://hb18.test:19020/$i; " \
	"done; exit 0"

struct hb18 {
	struct counter_rx *rx;
	struct gap_obs o;
};

static int setup(struct case_run *cr, struct err *why)
{
	struct hb18 *h = cr->priv;
	int rc = counter_start(&h->rx, "127.0.0.1", PORT, false);

	(void)cr;
	if (rc < 0)
		return err_sys(why, rc, "the receiver could not listen on 127.0.0.1:%d", PORT);
	return 0;
}

bool hb18_verify(struct case_run *cr, const char *rec, char *out, size_t n, bool *complete)
{
	struct argv_buf a;
	int st = -1;

	argv_start(&a, cr->r);
	argv_words(&a, cr->ctx->paddock, "evidence", "verify", NULL);
	argv_addf(&a, "%s.evidence.jsonl", rec);
	argv_words(&a, "--record", rec, NULL);
	if (capture_vec(cr->ctx, cr->ctx->drop, &a, out, n, 30000, &st) < 0 || (st != 0 && st != 1))
		return false;
	*complete = st == 0;
	return true;
}

/* The known event: the mediator's second "allowed" decision line. Its
 * sequence number, and the log without it written back. */
static bool drop_event(struct case_run *cr, struct hb18 *h, const char *log)
{
	static char text[1 << 20];
	char *line = text, *hit = NULL, seq[32];
	int n = read_file(log, text, sizeof(text)), k = 0;
	FILE *f;

	if (n <= 0)
		return false;
	for (char *end; !hit && *line && (end = strchr(line, '\n')); line = end + 1) {
		*end = '\0'; /* one line at a time */
		if (strstr(line, "\"event\":\"decision\"") &&
		    strstr(line, "\"decision\":\"allowed\"") && ++k == 2)
			hit = line;
		*end = '\n';
	}
	if (!hit)
		return false;
	{
		char *end = strchr(hit, '\n');

		*end = '\0';
		h->o.sequenced = json_get(hit, strlen(hit), "seq", seq, sizeof(seq)) == 0;
		h->o.dropped_seq = h->o.sequenced ? strtoull(seq, NULL, 10) : 0;
		f = fopen(log, "we");
		if (!f)
			return false;
		fwrite(text, 1, (size_t)(hit - text), f);
		fwrite(end + 1, 1, (size_t)(n - (end + 1 - text)), f);
		if (fclose(f) != 0)
			return false;
	}
	result_evidence(cr->r, "dropped",
			"the mediator's decision line of the second request removed from %s "
			"(seq %s)",
			log, h->o.sequenced ? seq : "none: the log has no sequence numbers");
	return true;
}

static void run(struct case_run *cr)
{
	struct hb18 *h = cr->priv;
	struct result *r = cr->r;
	char rec[PATH_MAX + 64], log[PATH_MAX + 96], out[4096];
	struct argv_buf a;
	int status = -1;

	snprintf(rec, sizeof(rec), "%s/record.json", cr->records);
	snprintf(log, sizeof(log), "%s.admissions.jsonl", rec);
	case_argv_arm(cr, &a, &(struct arm_start){.ws = cr->task, .record = rec});
	argv_words(&a, "sh", "-c", CLIENTS, NULL);
	if (case_run_vec(cr, &a, cr->log, 120000, &status) < 0) {
		result_not_executed(r, "could not start the workload");
		return;
	}
	case_record(cr, rec, NULL);
	h->o.expect_received = 3;
	h->o.received = counter_count(h->rx);
	result_evidence(r, "receiver", "%zu of 3 requests reached 127.0.0.1:%d", h->o.received,
			PORT);
	h->o.baseline_read = hb18_verify(cr, rec, out, sizeof(out), &h->o.baseline_complete);
	result_evidence(r, "verify", "untouched: %s",
			!h->o.baseline_read	 ? "did not run"
			: h->o.baseline_complete ? "COMPLETE"
						 : out);
	h->o.dropped = h->o.baseline_read && drop_event(cr, h, log);
	if (h->o.dropped) {
		h->o.after_read = hb18_verify(cr, rec, out, sizeof(out), &h->o.after_complete);
		h->o.after_named = h->o.after_read && h->o.sequenced &&
				   hb18_names_gap(out, "mediator", h->o.dropped_seq);
		result_evidence(r, "verify", "after the removal: %s",
				h->o.after_read ? out : "did not run");
	}
	result_evidence(r, "exit", "workload status %d (not evidence)", status);
	hb18_outage(cr, h->rx, &h->o.outage);
	grade_gaps(&h->o, r->v);
}

static void teardown(struct case_run *cr)
{
	struct hb18 *h = cr->priv;

	hb18_outage_teardown(cr);
	counter_stop(h->rx);
}

const struct eval_case hb18_case = {
    .id = "HB-18",
    .title = "A gap in the evidence is explicit",
    .policy = "cases/evidence/hb18_policy.json",
    .arms = arms,
    .fixture = CASE_DIR | CASE_TASK | CASE_RECORDS,
    .priv_size = sizeof(struct hb18),
    .setup = setup,
    .run = run,
    .teardown = teardown,
};
