/* HB-19: the workload cannot rewrite its policy or its evidence.
 *
 * Fixture (outside every sandbox): the case's policy, the records
 * directory (the completion record, the evidence log and its key, which
 * paddock puts beside the record), all harmless test artefacts of the
 * harness. The workload is handed their paths and tries every route it
 * has: append a marker line to each, replace each by a rename over it,
 * and copy the key into its workspace; then it makes a permitted write to
 * its workspace (the control). Outside evidence: paddock evidence verify
 * against the record's checkpoints; an outside scan of the log, the
 * record and the policy for the marker (observers/secret_scan.c; proven
 * on a file where the harness put the marker itself); the policy's
 * digest against the one the arm started with; the workspace for a copy of
 * the key. There is no observer in this case, so no observer state to
 * attack; the owner's rotation of the policy (a new run with a new
 * digest) is not driven here.
 *
 * Arms: enforced; weakened:evidence-in-sandbox (paddock's knob: the
 * records directory bound read-write into the sandbox: the key is read and
 * the log written, must FAIL); docker NOT APPLICABLE (no evidence log or
 * record of its own to protect; a :ro volume is Docker's read-only bind,
 * graded by HB-01). */
#include "../../lib/case.h"
#include "../../observers/observe.h"
#include "../../observers/secret_scan.h"
#include "hb19_grade.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define NA_REASON                                                                                \
	"the Docker reference writes no evidence log or record of its own; a :ro volume is its " \
	"read-only bind, which HB-01 grades"
#define NA_SCOPE "HB-19 (paddock's evidence and policy out of the workload's reach)"

static const struct case_arm arms[] = {
    {.name = "enforced"},
    {.name = "weakened:evidence-in-sandbox"},
    {.name = "docker",
     .na_reason = {NA_REASON, NA_REASON, NA_REASON},
     .na_scope = {NA_SCOPE, NA_SCOPE, NA_SCOPE}},
    {.name = NULL},
};

/* $1 log, $2 key, $3 record, $4 policy, $5 workspace; the marker in
 * $5/marker (not on the command line, which the record holds). */
#define ATTACK                                                                           \
	"m=$(cat \"$5/marker\"); set -- \"$1\" \"$2\" \"$3\" \"$4\" \"$5\" \"$m\"\n"     \
	"for f in \"$1\" \"$3\" \"$4\"; do\n"                                            \
	"  echo \"$6\" >> \"$f\" 2>/dev/null && echo \"appended $f\"\n"                  \
	"  echo \"$6\" > \"$f.new\" 2>/dev/null && mv -f \"$f.new\" \"$f\" 2>/dev/null " \
	"&& echo \"replaced $f\"\n"                                                      \
	"done\n"                                                                         \
	"cp \"$2\" \"$5/key.copy\" 2>/dev/null && echo 'read the key'\n"                 \
	"echo ok > \"$5/ok\"; exit 0\n"

struct hb19 {
	char marker[64];
	struct tamper_obs o;
};

static bool same_file(const char *a, const char *b)
{
	static char x[4096], y[4096];
	int n = read_file(a, x, sizeof(x)), m = read_file(b, y, sizeof(y));

	return n > 0 && n == m && memcmp(x, y, (size_t)n) == 0;
}

static void run(struct case_run *cr)
{
	struct hb19 *h = cr->priv;
	struct result *r = cr->r;
	char rec[PATH_MAX + 64], log[PATH_MAX + 96], key[PATH_MAX + 96], copy[PATH_MAX + 16];
	char proof[PATH_MAX + 16], ok[PATH_MAX + 16], sha[65], out[4096];
	struct scan_result s = {0}, self = {0};
	struct argv_buf a;
	int status = -1, st = -1;

	snprintf(h->marker, sizeof(h->marker), "hb19-TAMPER-%d%lx", (int)getpid(), (long)random());
	snprintf(rec, sizeof(rec), "%s/record.json", cr->records);
	snprintf(log, sizeof(log), "%s.evidence.jsonl", rec);
	snprintf(key, sizeof(key), "%s.evidence.key", rec);
	snprintf(copy, sizeof(copy), "%s/key.copy", cr->task);
	snprintf(ok, sizeof(ok), "%s/ok", cr->task);
	case_argv_arm(cr, &a, &(struct arm_start){.ws = cr->task, .record = rec});
	argv_words(&a, "sh", "-c", ATTACK, "sh", log, key, rec, r->policy_path, cr->task, NULL);
	snprintf(proof, sizeof(proof), "%s/marker", cr->task);
	if (fixture_write(cr->ctx, proof, h->marker, 0644) < 0) {
		result_not_executed(r, "cannot write the marker file");
		return;
	}
	if (case_run_vec(cr, &a, cr->log, 60000, &status) < 0) {
		result_not_executed(r, "could not start the workload");
		return;
	}
	case_record(cr, rec, NULL);
	/* The scan's proof: the marker where the harness put it. */
	snprintf(proof, sizeof(proof), "%s/proof", cr->records);
	fixture_write(cr->ctx, proof, h->marker, 0600);
	scan_file(proof, h->marker, &self);
	h->o.scan_proven = self.places == 1;
	scan_file(log, h->marker, &s);
	scan_file(rec, h->marker, &s);
	scan_file(r->policy_path, h->marker, &s);
	h->o.marked = s.places;
	h->o.policy_unchanged =
	    observe_sha256(r->policy_path, sha) == 0 && strcmp(sha, r->policy_sha256) == 0;
	h->o.key_copied = same_file(copy, key);
	h->o.workspace_ok = access(ok, F_OK) == 0;
	argv_start(&a, r);
	argv_words(&a, cr->ctx->paddock, "evidence", "verify", log, "--record", rec, NULL);
	h->o.verified =
	    capture_vec(cr->ctx, cr->ctx->drop, &a, out, sizeof(out), 30000, &st) == 0 &&
	    (st == 0 || st == 1);
	h->o.complete = st == 0;
	result_evidence(r, "scan",
			"marker in %zu of the log, record and policy%s%s; policy digest %s; key "
			"%s; the scan's proof %s",
			s.places, s.n_where ? ", first " : "", s.n_where ? s.where[0] : "",
			h->o.policy_unchanged ? "unchanged" : "changed",
			h->o.key_copied ? "copied into the workspace" : "not read",
			h->o.scan_proven ? "seen" : "NOT seen");
	result_evidence(r, "verify", "%s", h->o.verified ? out : "did not run");
	result_evidence(r, "exit", "workload status %d (not evidence)", status);
	grade_tamper(&h->o, r->v);
}

const struct eval_case hb19_case = {
    .id = "HB-19",
    .title = "The workload cannot rewrite its policy or its evidence",
    .policy = "cases/evidence/hb19_policy.json",
    .arms = arms,
    .fixture = CASE_DIR | CASE_TASK | CASE_RECORDS,
    .priv_size = sizeof(struct hb19),
    .run = run,
};
