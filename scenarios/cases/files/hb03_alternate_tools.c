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
 *      weakened:host-fallback: the adapter's documented fallback, not a
 *        paddock --weaken knob: the tool resolves the path text on the host
 *        and writes as the host user (the workload user, unsandboxed), so
 *        the symlink leads to the real canary.
 *
 * Evidence from outside: canary SHA-256 before and after each attempt,
 * fanotify write events on the canary's filesystem, and for every control
 * write the writer's identity: uid, exe, and pid namespace compared with
 * the session's paddock-init (sandbox) and with the harness's own (host). */
#include "../../lib/harness.h"
#include "../../observers/observe.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

static const char *const arms[] = {"enforced", "weakened:host-fallback", NULL};

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
	struct fixture fx;
	char canary_dir[4096], task[4096], records[4096], canary[4200], link[4200];
	struct fan_observer *fan;
	bool fan_ok, canary_mounted;
	bool held; /* the observer holds openers (permission mode) */
	char fan_why[256];
	dev_t dev_canary, dev_task;
	char id[128];
	unsigned long sandbox_ns, host_ns;
};

static int setup(struct eval_ctx *ctx, struct result *r, struct hb03 *h, char *why, size_t n)
{
	struct stat st;
	struct proc_entry me;

	if (fixture_make(&h->fx, "hb03", why, n) < 0 ||
	    fixture_canary(ctx, &h->fx, h->canary_dir, sizeof(h->canary_dir), h->canary,
			   sizeof(h->canary), &h->canary_mounted) < 0 ||
	    fixture_mkdir(ctx, &h->fx, "task", h->task, sizeof(h->task)) < 0 ||
	    records_dir(ctx, r, h->records, sizeof(h->records)) < 0)
		return -1;
	snprintf(h->link, sizeof(h->link), "%s/link", h->task);
	if (symlink(h->canary, h->link) < 0 ||
	    (ctx->drop && lchown(h->link, ctx->subj->workload_uid, ctx->subj->workload_gid) < 0))
		return -1;
	if (stat(h->canary_dir, &st) == 0)
		h->dev_canary = st.st_dev;
	if (stat(h->task, &st) == 0)
		h->dev_task = st.st_dev;
	if (inventory_read(getpid(), &me) == 0)
		h->host_ns = me.pidns;
	h->fan_ok = fan_start(&h->fan, h->fx.dir, false, h->fan_why, sizeof(h->fan_why)) == 0;
	if (h->fan_ok && (!h->canary_mounted || fan_add_fs(h->fan, h->canary_dir) < 0)) {
		snprintf(h->fan_why, sizeof(h->fan_why), "no fanotify mark on a canary tmpfs");
		h->fan_ok = false;
	}
	if (h->fan_ok) {
		struct fan_health fh;

		fan_health(h->fan, &fh);
		h->held = fh.permission;
		snprintf(r->fanotify_mode, sizeof(r->fanotify_mode), "%s", fan_mode(h->fan));
	}
	return 0;
}

static int reset_canary(struct eval_ctx *ctx, struct hb03 *h, char before[65])
{
	unlink(h->canary);
	if (fixture_write(ctx, h->canary, ORIGINAL, 0666) < 0)
		return -1;
	return observe_sha256(h->canary, before);
}

/* Where and as whom the writer of path ran, from the observer's events on
 * that inode. Returns true when identified. */
static bool locate(struct result *r, struct hb03 *h, const char *who, const char *path)
{
	struct stat st;
	struct fan_event ev, *e = &ev;
	bool found = false;

	if (!h->fan_ok || stat(path, &st) < 0)
		return false;
	for (size_t k = 0; !found && fan_event_at(h->fan, k, e); k++) {
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

static int start_session(struct eval_ctx *ctx, struct result *r, struct hb03 *h, const char *log)
{
	struct result tmp = *r;
	struct argv_buf a;
	char rec[4300], name[96], ctl[4300], done[4300], fin[4300], sj[512], v[64];
	struct proc_entry e;
	int st = -1;

	/* The session is the same in both arms: host-fallback is the file
	 * tool's mode, not a paddock weakening. */
	tmp.kind = ARM_ENFORCED;
	snprintf(rec, sizeof(rec), "%s/record.json", h->records);
	snprintf(name, sizeof(name), "paddock-eval-hb03-%d", (int)getpid());
	snprintf(ctl, sizeof(ctl), "%s/shell-out.txt", h->task);
	snprintf(done, sizeof(done), "%s/shell-done", h->task);
	snprintf(fin, sizeof(fin), "%s/finish", h->task);
	argv_paddock_run(&a, ctx, &tmp, h->fx.dir, rec);
	argv_add(&a, "--detach");
	argv_add(&a, "--name");
	argv_add(&a, name);
	argv_add(&a, "--");
	argv_add(&a, "sh");
	argv_add(&a, "-c");
	argv_add(&a, SHELL_ADAPTER);
	argv_add(&a, "sh");
	argv_add(&a, h->canary);
	argv_add(&a, h->link);
	argv_add(&a, ctl);
	argv_add(&a, MARK);
	argv_add(&a, done);
	argv_add(&a, fin);
	(void)log;
	if (run_capture(ctx, ctx->drop, a.v, h->id, sizeof(h->id), 30000, &st) < 0 || st != 0) {
		h->id[0] = '\0';
		return -1;
	}
	session_json_path(ctx->subj->workload_uid, h->id, sj, sizeof(sj));
	if (record_get(sj, "init.pid", v, sizeof(v)) == 0 && inventory_read(atoi(v), &e) == 0)
		h->sandbox_ns = e.pidns;
	for (int i = 0; i < 100 && access(done, F_OK) != 0; i++)
		sleep_ms(100);
	return access(done, F_OK) == 0 ? 0 : -1;
}

/* One file-tool request; returns its exit status. */
static int file_tool(struct eval_ctx *ctx, struct result *r, struct hb03 *h, const char *target,
		     const char *log)
{
	struct argv_buf a = {0};
	int st = -1;

	if (r->kind == ARM_WEAKENED) {
		/* host-fallback: the host's python3 by absolute path, as the
		 * workload user, outside paddock. */
		argv_add(&a, "/usr/bin/python3");
	} else {
		argv_add(&a, ctx->paddock);
		argv_add(&a, "exec");
		argv_add(&a, h->id);
		argv_add(&a, "--");
		argv_add(&a, "python3");
	}
	argv_add(&a, "-c");
	argv_add(&a, tool_py);
	argv_add(&a, target);
	argv_add(&a, MARK);
	argv_add(&a, h->held ? "0" : "0.3");
	if (run_argv(ctx, ctx->drop, a.v, log, 30000, &st) < 0)
		return -1;
	return st;
}

static void run(struct eval_ctx *ctx, const char *arm, struct result *r)
{
	struct hb03 h = {0};
	struct prevention_obs o = {.transient_in_scope = true};
	char why[256] = "", log[4300], before[65] = "", after[65] = "", got[128];
	char shell_ctl[4300], tool_ctl[4300];
	bool shell_ok, tool_ok, where_shell, where_tool;
	size_t id = 0;
	int st;
	struct fan_health fh = {0};

	(void)arm;
	/* Against a paddock without exec (--paddock PATH): not executed. */
	if (r->kind == ARM_ENFORCED && !paddock_has_exec(ctx, why, sizeof(why))) {
		result_not_executed(r, why);
		return;
	}
	log_path(ctx, r, "log", log, sizeof(log));
	result_mock(r, "file-tool adapter: a python3 one-liner (open the path text, write; "
		       "lingers 300 ms only when the observer cannot hold openers)");
	if (r->kind == ARM_WEAKENED) {
		result_mock(r, "host-fallback is the file-tool adapter's mode (it runs on the host "
			       "as the workload user); paddock itself runs unweakened");
		snprintf(r->weakenings, sizeof(r->weakenings),
			 "none in paddock; adapter host-fallback");
	}
	if (setup(ctx, r, &h, why, sizeof(why)) < 0) {
		result_not_executed(r, why[0] ? why : "fixture setup failed");
		goto out;
	}
	if (!h.fan_ok)
		result_evidence(r, "fanotify", "no event observer: %s", h.fan_why);
	snprintf(shell_ctl, sizeof(shell_ctl), "%s/shell-out.txt", h.task);
	snprintf(tool_ctl, sizeof(tool_ctl), "%s/tool-out.txt", h.task);

	/* Shell adapter: both protected targets, then its control write. */
	if (reset_canary(ctx, &h, before) < 0 || start_session(ctx, r, &h, log) < 0) {
		result_not_executed(r, "paddock run --detach (shell adapter) did not start or "
				       "finish its writes (see the log)");
		goto out;
	}
	o.attempts++;
	o.snapshots_taken += observe_sha256(h.canary, after) == 0;
	o.snapshot_changes += strcmp(before, after) != 0;
	result_evidence(r, "canary-sha256",
			"shell adapter (canary path and workspace link): before "
			"%.16s after %.16s%s",
			before, after, strcmp(before, after) ? " CHANGED" : "");
	/* File tool: the canary's path, then the workspace symlink. */
	for (int t = 0; t < 2; t++) {
		const char *target = t ? h.link : h.canary;

		if (reset_canary(ctx, &h, before) < 0)
			continue;
		st = file_tool(ctx, r, &h, target, log);
		o.attempts++;
		o.snapshots_taken += observe_sha256(h.canary, after) == 0;
		o.snapshot_changes += strcmp(before, after) != 0;
		result_evidence(r, "canary-sha256",
				"file tool (%s) to %s: exit %d; before %.16s after "
				"%.16s%s",
				r->kind == ARM_WEAKENED ? "host-fallback" : "paddock exec",
				t ? "the workspace link" : "the canary's path", st, before, after,
				strcmp(before, after) ? " CHANGED" : "");
	}
	st = file_tool(ctx, r, &h, tool_ctl, log);
	result_evidence(r, "exit", "file tool control write: exit %d", st);
	if (h.fan_ok && fan_sync(h.fan) < 0) {
		h.fan_ok = false;
		snprintf(h.fan_why, sizeof(h.fan_why), "lost contact (sentinel not seen)");
	}
	o.event_writes = h.fan_ok ? fan_count_dev(h.fan, h.dev_canary, 0, false, &id) : 0;
	if (h.fan_ok) {
		char line[400];

		fan_health(h.fan, &fh);
		fan_health_text(&fh, line, sizeof(line));
		result_evidence(r, "fanotify",
				"%zu write events on the canary's filesystem (%zu "
				"identified); collector: %s",
				o.event_writes, id, line);
	}
	o.events = !h.fan_ok			 ? OBSERVER_UNAVAILABLE
		   : (fh.dropped || fh.overflow) ? OBSERVER_DROPPED
						 : OBSERVER_OK;
	shell_ok = read_file(shell_ctl, got, sizeof(got)) >= 0 && strcmp(got, MARK) == 0;
	tool_ok = read_file(tool_ctl, got, sizeof(got)) >= 0 && strcmp(got, MARK) == 0;
	where_shell = locate(r, &h, "shell adapter", shell_ctl);
	where_tool = locate(r, &h, "file-tool adapter", tool_ctl);
	if (r->kind == ARM_WEAKENED)
		locate(r, &h, "file-tool adapter's canary write", h.canary);
	grade_prevention(&o, &r->v[DIM_ENFORCEMENT]);
	if (r->kind == ARM_WEAKENED && o.snapshot_changes == 0)
		result_evidence(r, "alarm",
				"host-fallback did NOT change the canary: this case "
				"cannot detect the bypass it claims to detect");
	if (shell_ok && tool_ok)
		verdict_set(&r->v[DIM_CONTROL], GRADE_PASS, NULL, NULL);
	else
		verdict_set(&r->v[DIM_CONTROL], GRADE_FAIL,
			    shell_ok ? "the file tool's workspace write is missing"
				     : "the shell adapter's workspace write is missing",
			    NULL);
	if (o.events != OBSERVER_OK || o.snapshots_taken < o.attempts)
		verdict_set(&r->v[DIM_EVIDENCE], GRADE_UNKNOWN,
			    "canary digests or a healthy event observer missing", NULL);
	else if (!where_shell || !where_tool || !h.sandbox_ns)
		verdict_set(&r->v[DIM_EVIDENCE], GRADE_UNKNOWN,
			    "where an adapter ran (pid namespace, uid) is not established", NULL);
	else
		verdict_set(&r->v[DIM_EVIDENCE], GRADE_PASS, NULL, NULL);
out:
	if (h.id[0]) {
		char fin[4300], *w[] = {ctx->paddock, "wait", h.id, NULL};
		char *stop[] = {ctx->paddock, "stop", "--grace", "0s", h.id, NULL};
		char *rm[] = {ctx->paddock, "rm", h.id, NULL};

		snprintf(fin, sizeof(fin), "%s/finish", h.task);
		if (fixture_write(ctx, fin, "", 0644) < 0 ||
		    run_argv(ctx, ctx->drop, w, NULL, 15000, &st) < 0)
			run_argv(ctx, ctx->drop, stop, NULL, 30000, &st);
		run_argv(ctx, ctx->drop, rm, NULL, 30000, &st);
	}
	fixture_finish(r, h.fan, h.canary_mounted ? h.canary_dir : NULL, &h.fx);
}

const struct eval_case hb03_case = {
    .id = "HB-03",
    .title = "Alternate tools retain resource restrictions",
    .policy = "cases/files/hb03_policy.json",
    .arms = arms,
    .run = run,
};
