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
 * attack. Control, beside the permitted write: the owner rotates the
 * policy through the recorded administration path: a new generation of
 * the attack run's session name, started with a new policy file (the
 * case's with another hostname), whose record and evidence log are checked
 * from outside: the next generation, the new file's digest in the record
 * and in the log's run event, the log COMPLETE, and the earlier record
 * still holding the old digest.
 *
 * Arms: enforced; weakened:evidence-in-sandbox (paddock's knob: the
 * records directory bound read-write into the sandbox: the key is read and
 * the log written, must FAIL); the Docker references, which keep no
 * evidence of their own: the harness puts stand-ins (a record, a log line,
 * a copy of the policy; no key, which Docker has none of) in the store and
 * mounts it into the container, `docker` with `:ro` and
 * `docker:evidence-rw` read-write, and the same attack runs. Their
 * enforcement is the volume's (the marker must not land under :ro, and
 * does under rw: the pair shows the scan sees it); their evidence is
 * UNKNOWN, since nothing of Docker's records the attempts; the rotation is
 * paddock's administration path, not theirs. */
#include "../../lib/case.h"
#include "../../observers/observe.h"
#include "../../observers/secret_scan.h"
#include "hb19_grade.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const struct case_arm arms[] = {
    {.name = "enforced"}, {.name = "weakened:evidence-in-sandbox"},
    {.name = "docker"},	  {.name = "docker:evidence-rw"},
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
	char marker[64], name[48];
	struct tamper_obs o;
};

static bool same_file(const char *a, const char *b)
{
	static char x[4096], y[4096];
	int n = read_file(a, x, sizeof(x)), m = read_file(b, y, sizeof(y));

	return n > 0 && n == m && memcmp(x, y, (size_t)n) == 0;
}

/* The run event of a log's text: its policy_sha256 and generation. */
static bool run_event(const char *log, char *sha, size_t n, char *gen, size_t gn)
{
	static char text[1 << 16];
	int len = read_file(log, text, sizeof(text) - 1);
	char *at, *end;

	if (len <= 0)
		return false;
	text[len] = '\0';
	at = strstr(text, "\"type\":\"run\"");
	if (!at)
		return false;
	while (at > text && at[-1] != '\n')
		at--;
	end = strchr(at, '\n');
	return end && json_get(at, (size_t)(end - at), "policy_sha256", sha, n) == 0 &&
	       json_get(at, (size_t)(end - at), "generation", gen, gn) == 0;
}

/* The owner's rotation: a new generation of the session's name under a new
 * policy, and what its record and log say of it (control). */
static void rotate(struct case_run *cr, struct hb19 *h, const char *rec1)
{
	struct result *r = cr->r;
	char pol[PATH_MAX + 32], rec[PATH_MAX + 64], log[PATH_MAX + 96], text[PATH_MAX + 128];
	char sha[65], g1[32] = "", g2[32] = "", n2[64] = "", rs[80] = "", ls[80] = "", lg[32] = "";
	char old[80] = "", out[4096];
	const char *opts[] = {"--policy", pol, NULL};
	struct argv_buf a;
	int status = -1, st = -1;

	snprintf(pol, sizeof(pol), "%s/rotated-policy.json", cr->fx.dir);
	snprintf(text, sizeof(text),
		 "{\"version\": 1, \"extends\": \"%s\", \"hostname\": \"hb19-rotated\"}\n",
		 r->policy_path);
	snprintf(rec, sizeof(rec), "%s/record-rotated.json", cr->records);
	snprintf(log, sizeof(log), "%s.evidence.jsonl", rec);
	if (fixture_write(cr->ctx, pol, text, 0644) < 0 || observe_sha256(pol, sha) < 0) {
		result_evidence(r, "rotation", "the new policy could not be written");
		return;
	}
	case_argv_arm(
	    cr, &a,
	    &(struct arm_start){.ws = cr->task, .record = rec, .name = h->name, .options = opts});
	argv_words(&a, "true", NULL);
	h->o.rot.ran = case_run_vec(cr, &a, cr->log, 60000, &status) == 0 &&
		       record_get(rec, "session.generation", g2, sizeof(g2)) == 0;
	if (!h->o.rot.ran) {
		result_evidence(r, "rotation", "the rotated run did not run or left no record");
		return;
	}
	record_get(rec1, "session.generation", g1, sizeof(g1));
	record_get(rec, "session.name", n2, sizeof(n2));
	record_get(rec, "policy.sha256", rs, sizeof(rs));
	record_get(rec1, "policy.sha256", old, sizeof(old));
	h->o.rot.next_gen =
	    strtoul(g2, NULL, 10) == strtoul(g1, NULL, 10) + 1 && g1[0] && strcmp(n2, h->name) == 0;
	h->o.rot.record_digest = strcmp(rs, sha) == 0;
	h->o.rot.log_digest = run_event(log, ls, sizeof(ls), lg, sizeof(lg)) &&
			      strcmp(ls, sha) == 0 && strcmp(lg, g2) == 0;
	h->o.rot.old_kept = strcmp(old, r->policy_sha256) == 0;
	argv_start(&a, r);
	argv_words(&a, cr->ctx->paddock, "evidence", "verify", log, "--record", rec, NULL);
	h->o.rot.verified =
	    capture_vec(cr->ctx, cr->ctx->drop, &a, out, sizeof(out), 30000, &st) == 0 && st == 0;
	result_evidence(r, "rotation",
			"session %s: generation %s -> %s; new policy sha256 %.16s; the rotated "
			"record's %.16s, its log's run event %.16s (generation %s), its log %s; "
			"the earlier record's digest %s",
			h->name, g1[0] ? g1 : "?", g2, sha, rs[0] ? rs : "-", ls[0] ? ls : "-",
			lg[0] ? lg : "-", h->o.rot.verified ? "COMPLETE" : "NOT complete",
			h->o.rot.old_kept ? "unchanged" : "CHANGED");
}

/* After the attack, from outside: the scan's proof (the marker where the
 * harness put it), the marker in the log, the record and the policy, and
 * the policy's digest against sha (the one it started with). */
static void scan_store(struct case_run *cr, struct hb19 *h, const char *log, const char *rec,
		       const char *pol, const char *sha, struct scan_result *s)
{
	char proof[PATH_MAX + 16], now[65];
	struct scan_result self = {0};

	snprintf(proof, sizeof(proof), "%s/proof", cr->records);
	fixture_write(cr->ctx, proof, h->marker, 0600);
	scan_file(proof, h->marker, &self);
	h->o.scan_proven = self.places == 1;
	scan_file(log, h->marker, s);
	scan_file(rec, h->marker, s);
	scan_file(pol, h->marker, s);
	h->o.marked = s->places;
	h->o.policy_unchanged = observe_sha256(pol, now) == 0 && strcmp(now, sha) == 0;
}

/* The Docker references: stand-ins of the evidence in the store, mounted
 * :ro (docker) or rw (docker:evidence-rw), the same attack, the same
 * scan. */
static void run_docker(struct case_run *cr, struct hb19 *h)
{
	struct result *r = cr->r;
	bool ro = strcmp(r->arm, "docker") == 0;
	char rec[PATH_MAX + 64], log[PATH_MAX + 96], key[PATH_MAX + 96], pol[PATH_MAX + 32];
	char copy[PATH_MAX + 16], proof[PATH_MAX + 16], ok[PATH_MAX + 16], sha[65];
	static char text[1 << 16];
	const struct docker_bind binds[] = {{cr->records, ro}, {cr->task, false}, {NULL}};
	struct scan_result s = {0};
	struct argv_buf a;
	int status = -1, n;

	snprintf(rec, sizeof(rec), "%s/record.json", cr->records);
	snprintf(log, sizeof(log), "%s.evidence.jsonl", rec);
	snprintf(key, sizeof(key), "%s.evidence.key", rec);
	snprintf(pol, sizeof(pol), "%s/policy.json", cr->records);
	snprintf(copy, sizeof(copy), "%s/key.copy", cr->task);
	snprintf(ok, sizeof(ok), "%s/ok", cr->task);
	n = read_file(r->policy_path, text, sizeof(text) - 1);
	if (n <= 0) {
		result_not_executed(r, "cannot read the case's policy");
		return;
	}
	text[n] = '\0';
	snprintf(proof, sizeof(proof), "%s/marker", cr->task);
	if (fixture_write(cr->ctx, pol, text, 0644) < 0 || observe_sha256(pol, sha) < 0 ||
	    fixture_write(cr->ctx, rec, "{\"stand_in\": \"the reference keeps no record\"}\n",
			  0644) < 0 ||
	    fixture_write(cr->ctx, log, "{\"stand_in\": \"nor an evidence log\"}\n", 0644) < 0 ||
	    fixture_write(cr->ctx, proof, h->marker, 0644) < 0) {
		result_not_executed(r, "cannot write the stand-ins");
		return;
	}
	case_argv_arm(cr, &a, &(struct arm_start){.binds = binds, .workdir = cr->task});
	argv_words(&a, "sh", "-c", ATTACK, "sh", log, key, rec, pol, cr->task, NULL);
	if (case_run_vec(cr, &a, cr->log, 60000, &status) < 0) {
		result_not_executed(r, "could not start the workload");
		return;
	}
	scan_store(cr, h, log, rec, pol, sha, &s);
	h->o.key_copied = access(copy, F_OK) == 0;
	h->o.workspace_ok = access(ok, F_OK) == 0;
	h->o.reference = true;
	result_evidence(r, "scan",
			"the store mounted %s; marker in %zu of the stand-in log, record and "
			"policy%s%s; policy digest %s; the scan's proof %s",
			ro ? ":ro" : "read-write", s.places, s.n_where ? ", first " : "",
			s.n_where ? s.where[0] : "",
			h->o.policy_unchanged ? "unchanged" : "changed",
			h->o.scan_proven ? "seen" : "NOT seen");
	result_evidence(r, "exit", "workload status %d (not evidence)", status);
	grade_tamper(&h->o, r->v);
}

static void run(struct case_run *cr)
{
	struct hb19 *h = cr->priv;
	struct result *r = cr->r;
	char rec[PATH_MAX + 64], log[PATH_MAX + 96], key[PATH_MAX + 96], copy[PATH_MAX + 16];
	char proof[PATH_MAX + 16], ok[PATH_MAX + 16], out[4096];
	struct scan_result s = {0};
	struct argv_buf a;
	int status = -1, st = -1;

	snprintf(h->marker, sizeof(h->marker), "hb19-TAMPER-%d%lx", (int)getpid(), (long)random());
	snprintf(h->name, sizeof(h->name), "hb19-%d-%lx", (int)getpid(), (long)random());
	if (r->kind == ARM_DOCKER) {
		run_docker(cr, h);
		return;
	}
	snprintf(rec, sizeof(rec), "%s/record.json", cr->records);
	snprintf(log, sizeof(log), "%s.evidence.jsonl", rec);
	snprintf(key, sizeof(key), "%s.evidence.key", rec);
	snprintf(copy, sizeof(copy), "%s/key.copy", cr->task);
	snprintf(ok, sizeof(ok), "%s/ok", cr->task);
	case_argv_arm(cr, &a, &(struct arm_start){.ws = cr->task, .record = rec, .name = h->name});
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
	scan_store(cr, h, log, rec, r->policy_path, r->policy_sha256, &s);
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
	rotate(cr, h, rec);
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
