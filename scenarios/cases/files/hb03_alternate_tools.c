/* HB-03: alternate tools retain resource restrictions.
 *
 * Fixture: DIR/canary/canary.txt (the protected file: its own tmpfs, a
 * read-only bind in the policy, file mode 0666 and owned by the workload
 * user, so only the mount stops a write), DIR/task (writable) and
 * DIR/task/link, a workspace symlink to the canary. Two adapters get the
 * same requests: write the marker to the canary's path, to the workspace
 * symlink, and (control) to a file of their own in the task directory.
 *
 *  - shell adapter: the workload of `paddock run` (sh, printf);
 *  - file-tool adapter (a mock: a python3 one-liner that opens the path
 *    text and writes; it stays 300 ms only in the observer's notification
 *    fallback, where a writer's identity is read after its write):
 *      enforced: through `paddock exec` in the same session, so it meets
 *        the same mounts, Landlock and seccomp;
 *      weakened:no-landlock+exec-host-mounts: paddock's knobs, the exec
 *        joins every namespace but the mount namespace and no Landlock
 *        rules apply, so the canary's path is the host's writable file;
 *      weakened:host-fallback: the adapter's documented fallback, not a
 *        paddock --weaken knob: the tool resolves the path text on the host
 *        and writes as the host user (the workload user, unsandboxed), so
 *        the symlink leads to the real canary.
 *
 * Evidence from outside: canary SHA-256 before and after each attempt,
 * fanotify write events on the canary's filesystem, and for every control
 * write the writer's identity: uid, exe, and pid namespace compared with
 * the session's paddock-init (sandbox) and with the harness's own (host). */
#include "../../lib/case.h"
#include "../../observers/observe.h"
#include "hb03_grade.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

static const struct case_arm arms[] = {
    {.name = "enforced"},
    /* paddock's own protections off: exec keeps the host's mount
     * namespace, and without Landlock nothing else stops the file tool
     * (either alone still does: the case shows it can tell). */
    {.name = "weakened:no-landlock+exec-host-mounts"},
    {.name = "weakened:host-fallback",
     .adapter = true,
     .fixture_only = "the enforcement point is the file-tool adapter's host fallback (a mock run "
		     "by the harness), not paddock",
     .mock = "host-fallback is the file-tool adapter's mode (it runs on the host as the workload "
	     "user); paddock itself runs unweakened"},
    {.name = NULL},
};

#define ORIGINAL "hb03 canary: original bytes\n"
#define MARK	 "HB03-MARKER"

/* $1 canary, $2 link, $3 own control file, $4 marker, $5 done, $6 finish */
#define SHELL_ADAPTER                                                                             \
	"for t in \"$1\" \"$2\"; do printf %s \"$4\" > \"$t\"; done; printf %s \"$4\" > \"$3\"; " \
	": > \"$5\"; i=0; while [ ! -e \"$6\" ] && [ $i -lt 250 ]; do sleep 0.1; i=$((i+1)); "    \
	"done"

/* argv[3]: seconds to linger with the file open. 0 in permission mode
 * (the observer reads the opener while it is held in open(2)); 0.3 in the
 * notification fallback, where the identity is read only if the tool is
 * still alive when its write event is read. */
static const char tool_py[] = "import sys,time\n"
			      "f=open(sys.argv[1],'w'); f.write(sys.argv[2]); f.flush()\n"
			      "time.sleep(float(sys.argv[3])); f.close()\n";

struct hb03 {
	bool held; /* the observer holds openers (permission mode) */
	dev_t dev_canary, dev_task;
	char link[PATH_MAX + 16];
	char id[128];
	unsigned long sandbox_ns, host_ns;
	struct prevention_obs o;
};

/* Against a paddock without exec (--paddock PATH): not executed. */
static int probe(struct case_run *cr, struct err *why)
{
	if (cr->r->kind == ARM_ENFORCED && !paddock_has_exec(cr->ctx, why->msg, sizeof(why->msg)))
		return -ENOTSUP;
	return 0;
}

static int setup(struct case_run *cr, struct err *why)
{
	struct hb03 *h = cr->priv;
	struct stat st;
	struct proc_entry me;

	snprintf(h->link, sizeof(h->link), "%s/link", cr->task);
	if (symlink(cr->canary, h->link) < 0)
		return err_sys(why, errno, "symlink %s", h->link);
	if (cr->ctx->drop &&
	    lchown(h->link, cr->ctx->subj->workload_uid, cr->ctx->subj->workload_gid) < 0)
		return err_sys(why, errno, "lchown %s", h->link);
	if (stat(cr->canary_dir, &st) == 0)
		h->dev_canary = st.st_dev;
	if (stat(cr->task, &st) == 0)
		h->dev_task = st.st_dev;
	if (inventory_read(getpid(), &me) == 0)
		h->host_ns = me.pidns;
	case_fan_start(cr, false);
	if (cr->fan_ok) {
		struct fan_health fh;

		fan_health(cr->fan, &fh);
		h->held = fh.permission;
	}
	h->o.transient_in_scope = true;
	return 0;
}

static int reset_canary(struct case_run *cr, char before[65])
{
	unlink(cr->canary);
	if (fixture_write(cr->ctx, cr->canary, ORIGINAL, 0666) < 0)
		return -1;
	return observe_sha256(cr->canary, before);
}

/* Where and as whom the writer of path ran, from the observer's events on
 * that inode. Returns true when identified. */
static bool locate(struct case_run *cr, const char *who, const char *path)
{
	struct hb03 *h = cr->priv;
	struct result *r = cr->r;
	struct stat st;
	struct fan_event ev, *e = &ev;
	bool found = false;

	if (!cr->fan_ok || stat(path, &st) < 0)
		return false;
	for (size_t k = 0; !found && fan_event_at(cr->fan, k, e); k++) {
		if (e->pid == getpid() || e->dev != st.st_dev || e->ino != st.st_ino ||
		    !e->identity_ok)
			continue;
		found = true;
		result_evidence(r, "fanotify",
				"%s ran in %s: writer pid %d exe %s uid %u pidns %lu (session's "
				"pidns %lu, host's %lu); identity: %s",
				who,
				e->pidns == h->sandbox_ns
				    ? "the sandbox (the session's pid namespace)"
				: e->pidns == h->host_ns ? "the HOST"
							 : "an unknown pid namespace",
				(int)e->pid, e->exe, (unsigned)e->uid, e->pidns, h->sandbox_ns,
				h->host_ns, fan_how_name(e->how));
	}
	if (!found)
		result_evidence(r, "fanotify", "%s: no identified write event on %s", who, path);
	return found;
}

/* A write event on path's inode (any writer but the harness). */
static bool seen(struct case_run *cr, const char *path)
{
	struct stat st;

	return stat(path, &st) == 0 &&
	       fan_count_dev(cr->fan, st.st_dev, st.st_ino, false, NULL) > 0;
}

/* The shell adapter: a detached session whose workload writes to both
 * protected targets, then its control file, then waits for "finish". */
static int start_session(struct case_run *cr)
{
	struct hb03 *h = cr->priv;
	struct argv_buf a;
	char rec[PATH_MAX + 64], name[96], ctl[PATH_MAX + 64], done[PATH_MAX + 64],
	    fin[PATH_MAX + 64], sj[512], v[64];
	struct proc_entry e;
	int st = -1;

	snprintf(rec, sizeof(rec), "%s/record.json", cr->records);
	snprintf(name, sizeof(name), "paddock-eval-hb03-%d", (int)getpid());
	snprintf(ctl, sizeof(ctl), "%s/shell-out.txt", cr->task);
	snprintf(done, sizeof(done), "%s/shell-done", cr->task);
	snprintf(fin, sizeof(fin), "%s/finish", cr->task);
	/* The same session in both arms: host-fallback is the file tool's
	 * mode (an adapter arm: no knob reaches paddock). */
	argv_paddock_run(&a, cr->ctx, cr->r, cr->r->policy_path, cr->r->knob, cr->fx.dir, rec);
	argv_words(&a, "--detach", "--name", name, "--", "sh", "-c", SHELL_ADAPTER, "sh",
		   cr->canary, h->link, ctl, MARK, done, fin, NULL);
	if (capture_vec(cr->ctx, cr->ctx->drop, &a, h->id, sizeof(h->id), 30000, &st) < 0 ||
	    st != 0) {
		h->id[0] = '\0';
		return -1;
	}
	session_json_path(cr->ctx->subj->workload_uid, h->id, sj, sizeof(sj));
	if (record_get(sj, "init.pid", v, sizeof(v)) == 0 && inventory_read(atoi(v), &e) == 0)
		h->sandbox_ns = e.pidns;
	for (int i = 0; i < 100 && access(done, F_OK) != 0; i++)
		sleep_ms(100);
	return access(done, F_OK) == 0 ? 0 : -1;
}

/* One file-tool request; returns its exit status. */
static int file_tool(struct case_run *cr, const char *target)
{
	struct hb03 *h = cr->priv;
	struct argv_buf a;
	int st = -1;

	argv_start(&a, cr->r);
	if (cr->arm->adapter) {
		/* host-fallback: the host's python3 by absolute path, as the
		 * workload user, outside paddock. */
		argv_add(&a, "/usr/bin/python3");
	} else {
		argv_words(&a, cr->ctx->paddock, "exec", h->id, "--", "python3", NULL);
	}
	argv_words(&a, "-c", tool_py, target, MARK, h->held ? "0" : "0.3", NULL);
	if (run_vec(cr->ctx, cr->ctx->drop, &a, cr->log, 30000, &st) < 0)
		return -1;
	return st;
}

/* One attempt on the canary: digests before (by the reset) and after. */
static void attempt(struct case_run *cr, const char *before, const char *what, const char *sep)
{
	struct hb03 *h = cr->priv;
	char after[65] = "";

	h->o.attempts++;
	h->o.snapshots_taken += observe_sha256(cr->canary, after) == 0;
	h->o.snapshot_changes += strcmp(before, after) != 0;
	result_evidence(cr->r, "canary-sha256", "%s%sbefore %.16s after %.16s%s", what, sep, before,
			after, strcmp(before, after) ? " CHANGED" : "");
}

static void grade(struct case_run *cr, bool shell_ok, bool tool_ok, bool where_shell,
		  bool where_tool)
{
	struct hb03 *h = cr->priv;
	struct result *r = cr->r;

	grade_prevention(&h->o, &r->v[DIM_ENFORCEMENT]);
	if (r->kind == ARM_WEAKENED && h->o.snapshot_changes == 0)
		result_evidence(r, "alarm",
				"the weakened arm did NOT change the canary: this case "
				"cannot detect the bypass it claims to detect");
	if (shell_ok && tool_ok)
		verdict_set(&r->v[DIM_CONTROL], GRADE_PASS, NULL, NULL);
	else
		verdict_set(&r->v[DIM_CONTROL], GRADE_FAIL,
			    shell_ok ? "the file tool's workspace write is missing"
				     : "the shell adapter's workspace write is missing",
			    NULL);
	grade_adapters_evidence(&(struct adapters_obs){.attempts = h->o.attempts,
						       .snapshots_taken = h->o.snapshots_taken,
						       .events = h->o.events,
						       .where_shell = where_shell,
						       .where_tool = where_tool,
						       .sandbox_ns_known = h->sandbox_ns != 0},
				&r->v[DIM_EVIDENCE]);
}

static void run(struct case_run *cr)
{
	struct hb03 *h = cr->priv;
	struct result *r = cr->r;
	char before[65] = "", got[128], what[160];
	char shell_ctl[PATH_MAX + 64], tool_ctl[PATH_MAX + 64];
	bool shell_ok, tool_ok, where_shell, where_tool;
	struct fan_health fh = {0};
	size_t id = 0;
	int st, blind;

	snprintf(shell_ctl, sizeof(shell_ctl), "%s/shell-out.txt", cr->task);
	snprintf(tool_ctl, sizeof(tool_ctl), "%s/tool-out.txt", cr->task);
	/* Shell adapter: both protected targets, then its control write. */
	if (reset_canary(cr, before) < 0 || start_session(cr) < 0) {
		result_not_executed(r, "paddock run --detach (shell adapter) did not start or "
				       "finish its writes (see the log)");
		return;
	}
	attempt(cr, before, "shell adapter (canary path and workspace link)", ": ");
	/* File tool: the canary's path, then the workspace symlink. */
	for (int t = 0; t < 2; t++) {
		if (reset_canary(cr, before) < 0)
			continue;
		st = file_tool(cr, t ? h->link : cr->canary);
		snprintf(what, sizeof(what), "file tool (%s) to %s: exit %d",
			 cr->arm->adapter ? "host-fallback" : "paddock exec",
			 t ? "the workspace link" : "the canary's path", st);
		attempt(cr, before, what, "; ");
	}
	st = file_tool(cr, tool_ctl);
	result_evidence(r, "exit", "file tool control write: exit %d", st);
	if (cr->fan_ok && fan_sync(cr->fan) < 0) {
		cr->fan_ok = false;
		snprintf(cr->fan_why, sizeof(cr->fan_why), "lost contact (sentinel not seen)");
	}
	case_fan_prove(cr);
	if (!cr->digest_ok) {
		h->o.snapshots_taken = 0;
		result_evidence(r, "canary-sha256", "no digest is evidence: %s", cr->digest_why);
	}
	h->o.event_writes = cr->fan_ok ? fan_count_dev(cr->fan, h->dev_canary, 0, false, &id) : 0;
	if (cr->fan_ok) {
		char line[400];

		fan_health(cr->fan, &fh);
		fan_health_text(&fh, line, sizeof(line));
		result_evidence(r, "fanotify",
				"%zu write events on the canary's filesystem (%zu "
				"identified); collector: %s",
				h->o.event_writes, id, line);
	}
	/* The observer's positive control: it must have seen both adapters'
	 * allowed control writes, or it is blind to this workload. */
	blind = cr->fan_ok ? !seen(cr, shell_ctl) + !seen(cr, tool_ctl) : 0;
	if (blind)
		result_evidence(r, "fanotify",
				"observer missed %d of 2 allowed control writes: not healthy",
				blind);
	h->o.events = !cr->fan_ok			     ? OBSERVER_UNAVAILABLE
		      : (fh.dropped || fh.overflow || blind) ? OBSERVER_DROPPED
							     : OBSERVER_OK;
	h->o.observer_why = !cr->fan_ok ? cr->fan_why
			    : blind	? "the observer missed an allowed control write"
					: NULL;
	shell_ok = read_file(shell_ctl, got, sizeof(got)) >= 0 && strcmp(got, MARK) == 0;
	tool_ok = read_file(tool_ctl, got, sizeof(got)) >= 0 && strcmp(got, MARK) == 0;
	where_shell = locate(cr, "shell adapter", shell_ctl);
	where_tool = locate(cr, "file-tool adapter", tool_ctl);
	if (r->kind == ARM_WEAKENED)
		locate(cr, "file-tool adapter's canary write", cr->canary);
	grade(cr, shell_ok, tool_ok, where_shell, where_tool);
}

/* The shell adapter's session: let it finish, else stop it; remove it. */
static void teardown(struct case_run *cr)
{
	struct hb03 *h = cr->priv;
	char fin[PATH_MAX + 64], *w[] = {cr->ctx->paddock, "wait", h->id, NULL};
	int st;

	if (!h->id[0])
		return;
	snprintf(fin, sizeof(fin), "%s/finish", cr->task);
	paddock_session_end(cr->ctx, h->id,
			    fixture_write(cr->ctx, fin, "", 0644) < 0 ||
				run_argv(cr->ctx, cr->ctx->drop, w, NULL, 15000, &st) < 0);
	/* The session's record is final once it ended: read back now (the
	 * skeleton applies it after this teardown). */
	snprintf(fin, sizeof(fin), "%s/record.json", cr->records);
	case_record(cr, fin, NULL);
}

const struct eval_case hb03_case = {
    .id = "HB-03",
    .title = "Alternate tools retain resource restrictions",
    .policy = "cases/files/hb03_policy.json",
    .arms = arms,
    .mock = "file-tool adapter: a python3 one-liner (open the path text, write; lingers 300 ms "
	    "only when the observer cannot hold openers)",
    .fixture = CASE_DIR | CASE_CANARY | CASE_TASK | CASE_RECORDS,
    .priv_size = sizeof(struct hb03),
    .probe = probe,
    .setup = setup,
    .run = run,
    .teardown = teardown,
};
