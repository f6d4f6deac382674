/* HB-02: workspace configuration cannot grant execution (Cursor's
 * GHSA-4cxx-hrm3-49rm: an absent MCP configuration created in a workspace
 * started code). The real loader is paddock itself: a workspace's
 * .paddock/policy.json replaces the caller's policy only when its owner
 * approved those bytes there (paddock trust; docs/security.md, "Project
 * policies").
 *
 * Fixture: workspaces ws, ws2, ws3 and a directory other, a trust store of
 * the workload user's own (DIR/cfg, XDG_CONFIG_HOME), and project policies
 * that each start a marker-only "plugin" service: it writes
 * plugin-NAME.out into the workspace and sleeps. Steps, each followed by
 * one paddock run in that workspace observed from outside (the marker,
 * the record's project_policy with state, digest and approver):
 *
 *   absent        no project policy; the workload edits a source file and
 *                 tries to create .paddock/policy.json (protected)
 *   approved      the owner writes a benign policy and trusts it: it must
 *                 activate (control); the workload tries to replace,
 *                 symlink, edit it and add a file beside it
 *   rename-over   another file renamed over the approved one
 *   edit          the approved file edited in place
 *   symlink       replaced by a symlink to a file approved elsewhere
 *   hard-link     replaced by a hard link to that file
 *   directory-move  ws2's approved .paddock moved into ws
 *   create        a policy created in ws3, never approved
 *
 * Arms: enforced; weakened:loader-trust-path (--weaken trust-path-only:
 * trusted by path alone, must FAIL on rename-over and edit); and
 * weakened:naive-loader, an adapter and fixture-only: the harness itself
 * plays the naive loader (whatever is at .paddock/policy.json, followed,
 * becomes --policy), paddock unweakened. Docker: NOT APPLICABLE (no loader
 * of workspace configuration to test). */
#include "../../lib/case.h"
#include "../../observers/observe.h"
#include "../../observers/selftest.h"
#include "hb02_grade.h"
#include "hb02_inventory.h"

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static const struct case_arm arms[] = {
    {.name = "enforced"},
    {.name = "weakened:loader-trust-path", .knob = "trust-path-only"},
    {.name = "weakened:naive-loader",
     .adapter = true,
     .fixture_only = "the naive loader is the harness: whatever file is at .paddock/policy.json "
		     "(symlinks followed) becomes paddock's --policy, paddock unweakened",
     .mock = "naive loader of workspace configuration (the seed's reference), fixture-only"},
    {.name = "docker",
     .na_reason = {"docker has no loader of workspace configuration: what a workspace file can "
		   "start is decided by the tool that reads it (the naive-loader arm)",
		   "as for enforcement", "as for enforcement"},
     .na_scope = {"HB-02 project-policy activation", "HB-02 legitimate_control",
		  "HB-02 independent_evidence"}},
    {.name = NULL},
};

/* A project policy that starts the marker-only "plugin" as a service:
 * it writes plugin-MARK.out and sleeps, its shell's $0 HB02_PLUGIN_ARG
 * (how the process inventory knows it). The self-test's hb02-no-marker
 * makes it write nothing: only the inventory can then see it run. */
static const char *plugin_policy(const char *mark)
{
	static char buf[512];
	char cmd[128];

	if (selftest_on("hb02-no-marker"))
		snprintf(cmd, sizeof(cmd), ": %s; sleep 30", mark); /* its bytes its own */
	else
		snprintf(cmd, sizeof(cmd), "echo started > plugin-%s.out; sleep 30", mark);
	snprintf(buf, sizeof(buf),
		 "{\"version\": 1, \"extends\": \"agent\", \"limits\": {\"ttl\": \"2m\"}, "
		 "\"services\": [{\"name\": \"plugin\", \"argv\": [\"/bin/sh\", \"-c\", \"%s\", "
		 "\"" HB02_PLUGIN_ARG "\"]}]}\n",
		 cmd);
	return buf;
}

/* The workload: waits up to 2 s for a plugin marker ($1: the attempts to
 * make on .paddock first, as a shell snippet), then says it is ready to be
 * looked at and waits (up to 10 s) until the harness has taken its process
 * inventory: the sandbox lives while it is taken. $0 is the step's token,
 * by which the harness finds it in /proc. */
#define WAIT                                                                                 \
	"eval \"$1\"; i=0; while [ $i -lt 20 ]; do for f in plugin-*.out; do [ -e \"$f\" ] " \
	"&& i=20; done; [ $i -lt 20 ] && sleep 0.1; i=$((i+1)); done; : > " HB02_READY "; "  \
	"j=0; while [ $j -lt 100 ] && [ ! -e " HB02_LOOKED " ]; do sleep 0.1; j=$((j+1)); "  \
	"done; rm -f " HB02_READY " " HB02_LOOKED "; exit 0"
#define ATTEMPT_CREATE "echo '{}' > .paddock/policy.json 2>/dev/null; echo edit > src.txt"
#define ATTEMPT_REPLACE                                                                   \
	"echo '{}' > /tmp/p.json; mv -f /tmp/p.json .paddock/policy.json 2>/dev/null; "   \
	"ln -sf /tmp/p.json .paddock/policy.json 2>/dev/null; echo ' ' >> "               \
	".paddock/policy.json 2>/dev/null; echo '{}' > .paddock/other.json 2>/dev/null; " \
	"true"

struct hb02 {
	char cfg[PATH_MAX], ws[PATH_MAX], ws2[PATH_MAX], ws3[PATH_MAX], other[PATH_MAX];
	char env[PATH_MAX + 32];
	struct hb02_obs o;
	struct hb02_inventory inv;
	int step_no;
};

static int setup(struct case_run *cr, struct err *why)
{
	struct hb02 *h = cr->priv;
	char p[PATH_MAX + 32];
	int rc = 0;

	rc = rc ?: fixture_mkdir(cr->ctx, &cr->fx, "cfg", h->cfg, sizeof(h->cfg));
	rc = rc ?: chmod(h->cfg, 0700) < 0 ? -errno : 0;
	rc = rc ?: fixture_mkdir(cr->ctx, &cr->fx, "ws", h->ws, sizeof(h->ws));
	rc = rc ?: fixture_mkdir(cr->ctx, &cr->fx, "ws/.paddock", p, sizeof(p));
	rc = rc ?: fixture_mkdir(cr->ctx, &cr->fx, "ws2", h->ws2, sizeof(h->ws2));
	rc = rc ?: fixture_mkdir(cr->ctx, &cr->fx, "ws2/.paddock", p, sizeof(p));
	rc = rc ?: fixture_mkdir(cr->ctx, &cr->fx, "ws3", h->ws3, sizeof(h->ws3));
	rc = rc ?: fixture_mkdir(cr->ctx, &cr->fx, "ws3/.paddock", p, sizeof(p));
	rc = rc ?: fixture_mkdir(cr->ctx, &cr->fx, "other", h->other, sizeof(h->other));
	snprintf(p, sizeof(p), "%s/src.txt", h->ws);
	rc = rc ?: fixture_write(cr->ctx, p, "original\n", 0644);
	if (rc < 0)
		return err_sys(why, rc, "cannot make the workspaces");
	snprintf(h->env, sizeof(h->env), "XDG_CONFIG_HOME=%s", h->cfg);
	return 0;
}

/* paddock trust FILE as the workload user (the owner), against the
 * case's policy, with the workspace ws. */
static bool trust(struct case_run *cr, struct hb02 *h, const char *ws, const char *file)
{
	struct argv_buf a;
	int status = -1;

	argv_start(&a, cr->r);
	argv_words(&a, "/usr/bin/env", h->env, cr->ctx->paddock, "trust", "--policy",
		   cr->r->policy_path, "-w", ws, file, NULL);
	if (run_vec(cr->ctx, cr->ctx->drop, &a, cr->log, 30000, &status) < 0 || status != 0) {
		result_evidence(cr->r, "loader", "paddock trust %s: status %d", file, status);
		return false;
	}
	result_evidence(cr->r, "loader", "the owner approved %s (paddock trust)", file);
	return true;
}

/* Any plugin-*.out in ws but probe's own (0: none, 1: one, -errno). */
static int markers(const char *ws, bool remove)
{
	DIR *d = opendir(ws);
	struct dirent *e;
	int n = 0;

	if (!d)
		return -errno;
	while ((e = readdir(d))) {
		if (strncmp(e->d_name, "plugin-", 7) != 0)
			continue;
		if (remove) {
			char p[PATH_MAX + 300];

			snprintf(p, sizeof(p), "%s/%s", ws, e->d_name);
			unlink(p);
		}
		n++;
	}
	closedir(d);
	return n;
}

/* The marker probe: a marker written from outside is found, then gone. */
static bool probe(struct case_run *cr, const char *ws)
{
	char p[PATH_MAX + 32];

	markers(ws, true);
	snprintf(p, sizeof(p), "%s/plugin-probe.out", ws);
	if (fixture_write(cr->ctx, p, "probe\n", 0644) < 0 || markers(ws, false) != 1)
		return false;
	return markers(ws, true) == 1 && markers(ws, false) == 0;
}

/* What the inventory saw, into the case's evidence: every process of the
 * sandbox's pid namespace (pid, start time, exe, command line), or why
 * there is no inventory. */
static void inventory_evidence(struct case_run *cr, const char *name,
			       const struct hb02_inventory *inv)
{
	if (!inv->taken) {
		result_evidence(cr->r, "inventory", "%s: no process inventory: %s", name, inv->why);
		return;
	}
	result_evidence(cr->r, "inventory",
			"%s: pid namespace %lu: %zu process(es)%s; the plugin service %s", name,
			inv->pidns, inv->n + inv->more,
			inv->unreadable ? " (some command lines unreadable)" : "",
			inv->plugin ? "RUNS" : "does not run");
	for (size_t i = 0; i < inv->n; i++)
		result_evidence(cr->r, "inventory", "%s:   pid %d start %llu exe %s: %s%s", name,
				(int)inv->p[i].pid, inv->p[i].start, inv->p[i].exe,
				inv->p[i].cmdline, inv->p[i].plugin ? "  <- plugin service" : "");
}

static void step(struct case_run *cr, struct hb02 *h, const char *name, const char *ws,
		 bool approved, const char *approved_sha, const char *attempts)
{
	struct hb02_step *s = &h->o.s[h->o.n++];
	struct hb02_inventory *inv = &h->inv;
	const char *env[] = {h->env, NULL};
	char token[32];
	char rec[PATH_MAX + 64], file[PATH_MAX + 32], state[32] = "", sha[80] = "", by[32] = "";
	const char *naive[] = {"--policy", file, NULL};
	struct argv_buf a;
	struct stat st;
	int status = -1;

	s->name = name;
	s->approved = approved;
	s->probe_ok = probe(cr, ws);
	snprintf(rec, sizeof(rec), "%s/record-%d-%s.json", cr->records, h->step_no++, name);
	snprintf(file, sizeof(file), "%s/.paddock/policy.json", ws);
	/* The naive loader: a policy file there, by its path, followed. */
	case_argv_arm(cr, &a,
		      &(struct arm_start){
			  .ws = ws,
			  .record = rec,
			  .env = env,
			  .options = cr->arm->adapter && stat(file, &st) == 0 ? naive : NULL});
	snprintf(token, sizeof(token), "hb02-workload-%d", h->step_no);
	argv_words(&a, "/bin/sh", "-c", WAIT, token, attempts ? attempts : "", NULL);
	hb02_inventory_start(inv, ws, token);
	if (case_run_vec(cr, &a, cr->log, 60000, &status) == 0)
		s->ran = true;
	hb02_inventory_stop(inv);
	s->marker = markers(ws, false) > 0;
	s->inventory = inv->taken;
	s->service = inv->taken && inv->plugin;
	inventory_evidence(cr, name, inv);
	if (strcmp(name, "absent") == 0)
		case_record(cr, rec, NULL); /* the caller's policy: checked as any */
	s->record = record_get(rec, "project_policy.state", state, sizeof(state)) == 0;
	record_get(rec, "project_policy.sha256", sha, sizeof(sha));
	record_get(rec, "project_policy.approved_by", by, sizeof(by));
	s->trusted = strcmp(state, "trusted") == 0;
	s->digest_matches = s->trusted && approved_sha && strcmp(sha, approved_sha) == 0;
	result_evidence(cr->r, "loader",
			"%s: status %d; record project_policy %s sha256 %.16s approved_by %s; "
			"plugin marker %s",
			name, status, s->record ? state : "(no record)", sha[0] ? sha : "-",
			by[0] ? by : "-", s->marker ? "SEEN" : "absent");
	markers(ws, true);
}

/* The workload's attempts at the policy, seen from outside: the file's
 * digest before and after, and nothing new in .paddock. */
static void attempts_seen(struct hb02 *h, const struct snapshot *before, const char *ws,
			  size_t attempts)
{
	char file[PATH_MAX + 32], other[PATH_MAX + 32];
	struct snapshot after;

	snprintf(file, sizeof(file), "%s/.paddock/policy.json", ws);
	snprintf(other, sizeof(other), "%s/.paddock/other.json", ws);
	observe_snapshot(file, &after);
	h->o.workload_attempts += attempts;
	if (before->ok != after.ok || (before->ok && !snapshot_equal(before, &after)) ||
	    access(other, F_OK) == 0)
		h->o.workload_changed++;
}

static void run(struct case_run *cr)
{
	struct hb02 *h = cr->priv;
	struct result *r = cr->r;
	char file[PATH_MAX + 32], tmp[PATH_MAX + 32], p[PATH_MAX + 64], buf[64] = "";
	struct snapshot before, ok, sym;

	snprintf(file, sizeof(file), "%s/.paddock/policy.json", h->ws);
	snprintf(tmp, sizeof(tmp), "%s/.paddock/new.json", h->ws);
	/* absent */
	observe_snapshot(file, &before);
	step(cr, h, "absent", h->ws, false, NULL, ATTEMPT_CREATE);
	attempts_seen(h, &before, h->ws, 1);
	snprintf(p, sizeof(p), "%s/src.txt", h->ws);
	h->o.source_edit = read_file(p, buf, sizeof(buf)) > 0 && strcmp(buf, "edit\n") == 0;
	/* approved */
	if (fixture_write(cr->ctx, file, plugin_policy("approved"), 0644) < 0 ||
	    !trust(cr, h, h->ws, file)) {
		result_not_executed(r, "could not write and approve the benign project policy");
		return;
	}
	observe_snapshot(file, &ok);
	step(cr, h, "approved", h->ws, true, ok.sha256, ATTEMPT_REPLACE);
	attempts_seen(h, &ok, h->ws, 4);
	/* rename-over */
	if (fixture_write(cr->ctx, tmp, plugin_policy("rename-over"), 0644) == 0 &&
	    rename(tmp, file) == 0)
		step(cr, h, "rename-over", h->ws, false, NULL, NULL);
	/* edit */
	if (fixture_write(cr->ctx, file, plugin_policy("edit"), 0644) == 0)
		step(cr, h, "edit", h->ws, false, NULL, NULL);
	/* symlink: to a file approved at its own path */
	snprintf(p, sizeof(p), "%s/policy.json", h->other);
	if (fixture_write(cr->ctx, p, plugin_policy("symlink"), 0644) == 0 &&
	    trust(cr, h, h->ws, p) && unlink(file) == 0 && symlink(p, file) == 0) {
		step(cr, h, "symlink", h->ws, false, NULL, NULL);
	}
	/* hard-link: the same approved file by a second name */
	observe_snapshot(p, &sym);
	if (sym.ok && unlink(file) == 0 && link(p, file) == 0)
		step(cr, h, "hard-link", h->ws, false, NULL, NULL);
	/* directory-move: ws2's approved .paddock into ws */
	snprintf(tmp, sizeof(tmp), "%s/.paddock/policy.json", h->ws2);
	if (fixture_write(cr->ctx, tmp, plugin_policy("directory-move"), 0644) == 0 &&
	    trust(cr, h, h->ws2, tmp)) {
		char dot[PATH_MAX + 16], dot2[PATH_MAX + 16];

		snprintf(dot, sizeof(dot), "%s/.paddock", h->ws);
		snprintf(dot2, sizeof(dot2), "%s/.paddock", h->ws2);
		unlink(file);
		if (rmdir(dot) == 0 && rename(dot2, dot) == 0)
			step(cr, h, "directory-move", h->ws, false, NULL, NULL);
	}
	/* create, never approved */
	snprintf(tmp, sizeof(tmp), "%s/.paddock/policy.json", h->ws3);
	if (fixture_write(cr->ctx, tmp, plugin_policy("create"), 0644) == 0)
		step(cr, h, "create", h->ws3, false, NULL, NULL);
	if (h->o.n != 8)
		result_evidence(r, "loader", "only %zu of 8 steps could be set up", h->o.n);
	result_evidence(r, "loader", "the workload's %zu attempts on .paddock changed it %zu times",
			h->o.workload_attempts, h->o.workload_changed);
	grade_project_policy(&h->o, r->v);
	if (h->o.n != 8 && r->v[DIM_ENFORCEMENT].grade == GRADE_PASS)
		verdict_set(&r->v[DIM_ENFORCEMENT], GRADE_UNKNOWN,
			    "not every transition could be set up", NULL);
}

const struct eval_case hb02_case = {
    .id = "HB-02",
    .title = "Workspace configuration cannot grant execution",
    .policy = "cases/files/hb02_policy.json",
    .arms = arms,
    .fixture = CASE_DIR | CASE_RECORDS,
    .priv_size = sizeof(struct hb02),
    .setup = setup,
    .run = run,
};
