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
 *      weakened:exec-host-mounts: the knob alone (Landlock's rules are then
 *        resolved on the host's tree: the policy's /tmp is the host's);
 *      weakened:no-seccomp: no filter in the session; the mount still
 *        stops every write, so only the read-back of the effective
 *        policy shows the weakening.
 *
 * Separate execution identities, inventoried from the host's /proc: the
 * shell adapter is the session's workload (its processes are in
 * paddock-init's session); every file-tool run is its own process, held
 * by the tool before it opens anything until the harness has found it
 * (its command line carries a token) and read its identity and its
 * effective policy; `paddock exec` gives it a session of its own
 * (setsid), the host fallback runs it from the harness's. Both adapters
 * run as the session owner's uid (paddock exec refuses anybody else), so
 * the uid cannot tell them apart; session, pid and start time can.
 *
 * Evidence from outside: canary SHA-256 before and after each attempt,
 * fanotify write events on the canary's filesystem attributed to the
 * inventoried identities, for every control write the writer's identity
 * (uid, exe, pid namespace compared with the session's paddock-init and
 * with the harness's own), and the effective policy (no_new_privs,
 * seccomp, capabilities, namespaces: /proc/PID/status and /proc/PID/ns)
 * of the workload against its declared policy and of each tool run
 * against the workload's. Landlock cannot be read from outside. */
#include "../../lib/case.h"
#include "../../observers/observe.h"
#include "hb03_grade.h"
#include "hb03_inventory.h"
#include "../../observers/selftest.h"

#include <errno.h>
#include <pthread.h>
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
     * (no-landlock alone still does: the mount). */
    {.name = "weakened:no-landlock+exec-host-mounts"},
    /* The mount namespace alone: the exec'd tool's Landlock rules are
     * resolved in the host's mount namespace, where the policy's /tmp
     * (a tmpfs of the sandbox's) is the host's /tmp, the fixture's
     * parent: the writes get through (seen), and the read-back shows
     * the tool outside the session's mount namespace. */
    {.name = "weakened:exec-host-mounts"},
    /* No seccomp filter in the session: the read-only mount still
     * refuses every write, so only the read-back of the effective
     * policy (against the declared one) can see the weakening. */
    {.name = "weakened:no-seccomp"},
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
 * still alive when its write event is read. argv[4]: a file whose
 * existence releases the tool: until then (at most 10 s) it waits, before
 * opening anything, while the harness inventories it. argv[5]: the token
 * the harness finds it by (unused here). */
static const char tool_py[] = "import sys,time,os\n"
			      "for i in range(1000):\n"
			      "    if os.path.exists(sys.argv[4]): break\n"
			      "    time.sleep(0.01)\n"
			      "f=open(sys.argv[1],'w'); f.write(sys.argv[2]); f.flush()\n"
			      "time.sleep(float(sys.argv[3])); f.close()\n";

#define TOOL_RUNS 3

struct hb03 {
	bool held; /* the observer holds openers (permission mode) */
	dev_t dev_canary, dev_task;
	char link[PATH_MAX + 16];
	char id[128];
	unsigned long sandbox_ns, host_ns;
	struct prevention_obs o;
	/* The inventory: the session's workload (shell adapter; its
	 * session id is paddock-init's pid), each file-tool run, the host. */
	pid_t shell_sid;
	struct ident shell, host, tool[TOOL_RUNS];
	size_t n_tool;
	struct declared_policy declared;
	struct adapters_obs a;
	char readback_why[320];
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
	adapter_ident_read(getpid(), &h->host);
	adapter_declared_read(cr->r->policy_path, &h->declared);
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

/* Which inventoried identity wrote: WHO_SHELL (a process of the
 * workload's session, in the session's pid namespace), a file-tool run's
 * index (that very process: pid and start time), or WHO_OTHER. */
#define WHO_SHELL (-1)
#define WHO_OTHER (-2)
static int whose(const struct hb03 *h, const struct fan_event *e)
{
	if (!e->identity_ok)
		return WHO_OTHER;
	if (h->shell_sid && e->sid == h->shell_sid && e->pidns == h->sandbox_ns)
		return WHO_SHELL;
	for (size_t k = 0; k < h->n_tool; k++)
		if (h->tool[k].found && e->pid == h->tool[k].e.pid &&
		    e->start == h->tool[k].e.start)
			return (int)k;
	return WHO_OTHER;
}

static const char *who_name(int w)
{
	return w == WHO_SHELL ? "the shell adapter"
	       : w >= 0	      ? "the file-tool adapter"
			      : "an identity not inventoried";
}

/* Where and as whom the writer of path ran, from the observer's events on
 * that inode; true when an identified writer is the inventoried identity
 * want (WHO_SHELL or a file-tool run). */
static bool locate(struct case_run *cr, const char *who, const char *path, int want)
{
	struct hb03 *h = cr->priv;
	struct result *r = cr->r;
	struct stat st;
	struct fan_event ev, *e = &ev;
	bool found = false, any = false;

	if (!cr->fan_ok || stat(path, &st) < 0)
		return false;
	for (size_t k = 0; !found && fan_event_at(cr->fan, k, e); k++) {
		int w;

		if (e->pid == getpid() || e->dev != st.st_dev || e->ino != st.st_ino ||
		    !e->identity_ok)
			continue;
		any = true;
		w = whose(h, e);
		found = w == want;
		result_evidence(r, "fanotify",
				"%s ran in %s: writer pid %d exe %s uid %u sid %d pidns %lu "
				"(session's pidns %lu, host's %lu): %s; identity: %s",
				who,
				e->pidns == h->sandbox_ns
				    ? "the sandbox (the session's pid namespace)"
				: e->pidns == h->host_ns ? "the HOST"
							 : "an unknown pid namespace",
				(int)e->pid, e->exe, (unsigned)e->uid, (int)e->sid, e->pidns,
				h->sandbox_ns, h->host_ns, who_name(w), fan_how_name(e->how));
	}
	if (!any)
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

/* The shell adapter's identity: paddock-init's child (the workload's sh,
 * alive until "finish"), as the host's /proc shows it. */
static void inventory_shell(struct case_run *cr, pid_t init)
{
	struct hb03 *h = cr->priv;
	struct proc_entry *v = NULL;
	size_t n = 0;

	if (!h->shell_sid || inventory_scan(&v, &n) < 0)
		return;
	for (size_t i = 0; i < n && !h->shell.found; i++)
		if (v[i].ppid == init)
			adapter_ident_read(v[i].pid, &h->shell);
	free(v);
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
	if (record_get(sj, "init.pid", v, sizeof(v)) == 0 && inventory_read(atoi(v), &e) == 0) {
		h->sandbox_ns = e.pidns;
		/* paddock-init leads the session its workload runs in. */
		h->shell_sid = e.sid;
	}
	for (int i = 0; i < 100 && access(done, F_OK) != 0; i++)
		sleep_ms(100);
	if (access(done, F_OK) != 0)
		return -1;
	inventory_shell(cr, e.pid);
	return 0;
}

/* One file-tool request, run by a thread of ours while this one finds
 * the tool's process by its token, inventories it and only then lets it
 * open its target. */
struct tool_job {
	struct case_run *cr;
	const char *target, *release, *token;
	int st;
};

static void *tool_thread(void *arg)
{
	struct tool_job *j = arg;
	struct hb03 *h = j->cr->priv;
	struct argv_buf a;

	argv_start(&a, j->cr->r);
	if (j->cr->arm->adapter) {
		/* host-fallback: the host's python3 by absolute path, as the
		 * workload user, outside paddock. */
		argv_add(&a, "/usr/bin/python3");
	} else {
		argv_words(&a, j->cr->ctx->paddock, "exec", h->id, "--", "python3", NULL);
	}
	argv_words(&a, "-c", tool_py, j->target, MARK, h->held ? "0" : "0.3", j->release, j->token,
		   NULL);
	if (run_vec(j->cr->ctx, j->cr->ctx->drop, &a, j->cr->log, 30000, &j->st) < 0)
		j->st = -1;
	return NULL;
}

/* Returns the tool's exit status; h->tool[] gets its identity. */
static int file_tool(struct case_run *cr, const char *target)
{
	struct hb03 *h = cr->priv;
	char release[PATH_MAX + 64], token[64];
	struct tool_job j = {
	    .cr = cr, .target = target, .release = release, .token = token, .st = -1};
	struct ident *id = h->n_tool < TOOL_RUNS ? &h->tool[h->n_tool++] : NULL;
	pthread_t t;
	pid_t pid = 0;
	bool found = false;

	snprintf(release, sizeof(release), "%s/.release-%zu", cr->task, h->n_tool);
	snprintf(token, sizeof(token), "hb03-tool-%d-%zu", (int)getpid(), h->n_tool);
	unlink(release);
	if (pthread_create(&t, NULL, tool_thread, &j) != 0)
		return -1;
	/* Test-only (make eval-selftest, hb03-tool-unseen): an inventory
	 * that never finds the tool. */
	for (int i = 0; i < 1000 && !selftest_on("hb03-tool-unseen") &&
			!(found = adapter_tool_find(token, &pid));
	     i++)
		sleep_ms(10);
	if (found && id)
		adapter_ident_read(pid, id);
	/* Released either way: a tool not found still runs, unread. */
	if (fixture_write(cr->ctx, release, "", 0644) < 0)
		result_evidence(cr->r, "inventory", "could not release the file tool (%s)",
				release);
	pthread_join(t, NULL);
	unlink(release);
	return j.st;
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

/* One evidence line per inventoried identity. */
static void ident_evidence(struct result *r, const char *who, const struct ident *id)
{
	const struct proc_policy *p = &id->pol;

	if (!id->found) {
		result_evidence(r, "inventory", "%s: not found in the host's /proc", who);
		return;
	}
	result_evidence(r, "inventory",
			"%s: pid %d start %llu sid %d ppid %d uid %u exe %s; effective policy%s: "
			"no_new_privs %d, seccomp %d (%d filters), CapEff %llx CapBnd %llx, ns "
			"user %lu mnt %lu pid %lu net %lu ipc %lu uts %lu cgroup %lu; Landlock "
			"not readable from outside",
			who, (int)id->e.pid, id->e.start, (int)id->e.sid, (int)id->e.ppid,
			(unsigned)id->e.uid, id->exe, p->read ? "" : " NOT READ", p->nnp,
			p->seccomp, p->filters, p->cap_eff, p->cap_bnd, p->ns[PP_NS_USER],
			p->ns[PP_NS_MOUNT], p->ns[PP_NS_PID], p->ns[PP_NS_NET], p->ns[PP_NS_IPC],
			p->ns[PP_NS_UTS], p->ns[PP_NS_CGROUP]);
}

/* The identities and their effective policy: the workload against its
 * declared policy, each file-tool run against the workload; which
 * identity wrote each canary event; whether the identities are apart. */
static void readback(struct case_run *cr)
{
	struct hb03 *h = cr->priv;
	struct adapters_obs *a = &h->a;
	struct fan_event ev;
	char why[320], label[48];

	ident_evidence(cr->r, "host (the harness)", &h->host);
	ident_evidence(cr->r, "shell adapter (the session's workload)", &h->shell);
	a->readback_proven = adapter_readback_proof(&h->host.pol);
	result_evidence(cr->r, "inventory",
			"read-back proof (a child of ours with its own user namespace and "
			"no_new_privs reads apart from us): %s",
			a->readback_proven ? "seen" : "NOT SEEN: the read-back is blind");
	a->workload_mismatch =
	    h->shell.found && h->shell.pol.read && h->host.pol.read
		? proc_policy_confined(&h->shell.pol, &h->host.pol, &h->declared, why, sizeof(why))
		: -1;
	snprintf(h->readback_why, sizeof(h->readback_why), "%s",
		 a->workload_mismatch < 0 ? "the workload's policy was not read"
		 : a->workload_mismatch	  ? why
					  : "");
	a->distinct = h->shell_sid != 0 && h->shell.found;
	a->tool_runs = h->n_tool;
	for (size_t k = 0; k < h->n_tool; k++) {
		const struct ident *t = &h->tool[k];

		snprintf(label, sizeof(label), "file-tool run %zu", k + 1);
		ident_evidence(cr->r, label, t);
		if (!t->found || !t->pol.read) {
			if (!h->readback_why[0])
				snprintf(h->readback_why, sizeof(h->readback_why),
					 "file-tool run %zu was not read back", k + 1);
			continue;
		}
		a->tool_read++;
		a->distinct &= t->e.sid != h->shell_sid && t->e.pid != h->shell.e.pid;
		if (a->workload_mismatch >= 0 &&
		    proc_policy_compare(&h->shell.pol, &t->pol, &h->declared, why, sizeof(why)) >
			0) {
			if (!a->tool_weaker++)
				snprintf(h->readback_why, sizeof(h->readback_why),
					 "file-tool run %zu: %s", k + 1, why);
			result_evidence(cr->r, "inventory", "%s is weaker than the workload: %s",
					label, why);
		}
	}
	a->readback_why = h->readback_why[0] ? h->readback_why : NULL;
	for (size_t k = 0; cr->fan_ok && fan_event_at(cr->fan, k, &ev); k++) {
		int w;

		if (ev.pid == getpid() || ev.dev != h->dev_canary)
			continue;
		w = whose(h, &ev);
		a->canary_by_shell += w == WHO_SHELL;
		a->canary_by_tool += w >= 0;
		a->canary_by_other += w == WHO_OTHER;
	}
}

static void grade(struct case_run *cr, bool shell_ok, bool tool_ok)
{
	struct hb03 *h = cr->priv;
	struct result *r = cr->r;

	h->a.attempts = h->o.attempts;
	h->a.snapshots_taken = h->o.snapshots_taken;
	h->a.events = h->o.events;
	h->a.sandbox_ns_known = h->sandbox_ns != 0;
	grade_adapters(&h->o, &h->a, &r->v[DIM_ENFORCEMENT]);
	if (r->kind == ARM_WEAKENED && r->v[DIM_ENFORCEMENT].grade != GRADE_FAIL)
		result_evidence(r, "alarm",
				"the weakened arm did NOT fail: this case cannot detect the "
				"bypass it claims to detect");
	if (shell_ok && tool_ok)
		verdict_set(&r->v[DIM_CONTROL], GRADE_PASS, NULL, NULL);
	else
		verdict_set(&r->v[DIM_CONTROL], GRADE_FAIL,
			    shell_ok ? "the file tool's workspace write is missing"
				     : "the shell adapter's workspace write is missing",
			    NULL);
	grade_adapters_evidence(&h->a, &r->v[DIM_EVIDENCE]);
}

static void run(struct case_run *cr)
{
	struct hb03 *h = cr->priv;
	struct result *r = cr->r;
	char before[65] = "", got[128], what[160];
	char shell_ctl[PATH_MAX + 64], tool_ctl[PATH_MAX + 64];
	bool shell_ok, tool_ok;
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
	readback(cr);
	h->a.where_shell = locate(cr, "shell adapter", shell_ctl, WHO_SHELL);
	/* The control write is the last file-tool run. */
	h->a.where_tool =
	    h->n_tool == TOOL_RUNS && locate(cr, "file-tool adapter", tool_ctl, (int)h->n_tool - 1);
	if (r->kind == ARM_WEAKENED)
		locate(cr, "file-tool adapter's canary write", cr->canary, 0);
	grade(cr, shell_ok, tool_ok);
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
    .mock = "file-tool adapter: a python3 one-liner (waits for the harness's release, then opens "
	    "the path text and writes; lingers 300 ms only when the observer cannot hold openers)",
    .fixture = CASE_DIR | CASE_CANARY | CASE_TASK | CASE_RECORDS,
    .priv_size = sizeof(struct hb03),
    .probe = probe,
    .setup = setup,
    .run = run,
    .teardown = teardown,
};
