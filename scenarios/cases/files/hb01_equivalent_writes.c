/* HB-01: equivalent writes meet the same boundary.
 *
 * Fixture: DIR/canary/canary.txt (the protected canary, read-only bind; its
 * file mode would let the workload user write it, so only the mount stops
 * the write) and DIR/task (writable). Seven forms of the same marker write,
 * each run as its own sandbox under the same principal and policy; each
 * form first targets the canary, then the task directory (the control,
 * which also proves the form ran). The canary is reset between forms.
 * Evidence: SHA-256 of the canary before and after each form, fanotify
 * write events below DIR/canary with writer identity, the completion
 * record. Workload output is kept in a log, never graded. */
#include "../../lib/harness.h"
#include "../../observers/observe.h"

#include <stdio.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

static const char *const arms[] = {"enforced", "weakened:rw-binds", "docker", NULL};

#define ORIGINAL "hb01 canary: original bytes\n"
#define MARK	 "HB01-MARKER"

/* Each body writes $2 to $1; $3 is a done file in the task directory. */
static const struct form {
	const char *name;
	const char *body;
} forms[] = {
    {"direct", "printf %s \"$2\" > \"$1\""},
    {"script", "sh \"$S/form.sh\" \"$1\" \"$2\""},
    {"encoded", "printf %s cHJpbnRmICVzICIkMiIgPiAiJDEiCg== | base64 -d > /tmp/enc.sh; "
		"sh /tmp/enc.sh \"$1\" \"$2\""},
    {"child", "sh -c 'printf %s \"$2\" > \"$1\"' child \"$1\" \"$2\" & wait $!"},
    /* setsid + a subshell that exits at once: the writer is a detached
     * grandchild in its own session, reparented to the sandbox's init. */
    {"detached-descendant", "sh \"$S/detach.sh\" \"$1\" \"$2\" \"$3\"; i=0; "
			    "while [ ! -e \"$3\" ] && [ $i -lt 100 ]; do sleep 0.05; "
			    "i=$((i+1)); done"},
    {"rename-over", "d=$(dirname \"$1\"); printf %s \"$2\" > \"$d/.rename-tmp\" && "
		    "mv -f \"$d/.rename-tmp\" \"$1\""},
    {"remount", "d=$(dirname \"$1\"); { busybox mount -o remount,rw,bind \"$d\" || "
		"mount -o remount,rw,bind \"$d\"; } 2>/dev/null; printf %s \"$2\" > \"$1\""},
};
#define N_FORMS (sizeof(forms) / sizeof(forms[0]))

struct hb01 {
	struct fixture fx;
	char canary_dir[4096], task[4096], records[4096], canary[4200];
	struct fan_observer *fan;
	bool fan_ok, canary_mounted;
	char fan_why[256];
	dev_t dev_canary, dev_task;
};

static int setup(struct eval_ctx *ctx, struct result *r, struct hb01 *h, char *why, size_t n)
{
	char p[4300];

	if (fixture_make(&h->fx, "hb01", why, n) < 0 ||
	    fixture_canary(ctx, &h->fx, h->canary_dir, sizeof(h->canary_dir), h->canary,
			   sizeof(h->canary), &h->canary_mounted) < 0 ||
	    fixture_mkdir(ctx, &h->fx, "task", h->task, sizeof(h->task)) < 0 ||
	    records_dir(ctx, r, h->records, sizeof(h->records)) < 0)
		return -1;
	{
		struct stat st;

		if (stat(h->canary_dir, &st) == 0)
			h->dev_canary = st.st_dev;
		if (stat(h->task, &st) == 0)
			h->dev_task = st.st_dev;
	}
	snprintf(p, sizeof(p), "%s/form.sh", h->task);
	if (fixture_write(ctx, p, "#!/bin/sh\nprintf %s \"$2\" > \"$1\"\n", 0755) < 0)
		return -1;
	snprintf(p, sizeof(p), "%s/detach.sh", h->task);
	if (fixture_write(ctx, p,
			  "#!/bin/sh\n( setsid sh -c 'printf %s \"$2\" > \"$1\"; : > \"$3\"' d "
			  "\"$1\" \"$2\" \"$3\" & )\n",
			  0755) < 0)
		return -1;
	h->fan_ok = fan_start(&h->fan, h->fx.dir, false, h->fan_why, sizeof(h->fan_why)) == 0;
	if (h->fan_ok && h->canary_mounted && fan_add_fs(h->fan, h->canary_dir) < 0) {
		snprintf(h->fan_why, sizeof(h->fan_why),
			 "fanotify mark on the canary's tmpfs failed");
		h->fan_ok = false;
	}
	if (h->fan_ok && !h->canary_mounted) {
		snprintf(h->fan_why, sizeof(h->fan_why), "no tmpfs of its own for the canary");
		h->fan_ok = false;
	}
	if (h->fan_ok)
		snprintf(r->fanotify_mode, sizeof(r->fanotify_mode), "%s", fan_mode(h->fan));
	return 0;
}

/* Reset the canary (ours, excluded from the observer by pid). */
static int reset_canary(struct eval_ctx *ctx, struct hb01 *h)
{
	char tmp[4300];

	snprintf(tmp, sizeof(tmp), "%s/.rename-tmp", h->canary_dir);
	unlink(tmp);
	unlink(h->canary);
	return fixture_write(ctx, h->canary, ORIGINAL, 0666);
}

static int run_form(struct eval_ctx *ctx, struct result *r, struct hb01 *h, size_t i,
		    const char *log, int *status)
{
	char script[2048], ctl[4300], done1[4300], done2[4300], rec[4300];
	struct argv_buf a;

	snprintf(ctl, sizeof(ctl), "%s/out-%s.txt", h->task, forms[i].name);
	snprintf(done1, sizeof(done1), "%s/done-canary-%s", h->task, forms[i].name);
	snprintf(done2, sizeof(done2), "%s/done-control-%s", h->task, forms[i].name);
	snprintf(rec, sizeof(rec), "%s/record-%s.json", h->records, forms[i].name);
	snprintf(script, sizeof(script),
		 "S=\"$1\"; f() { %s; }; f \"$2\" \"$4\" \"$5\"; f \"$3\" \"$4\" \"$6\"",
		 forms[i].body);
	if (r->kind == ARM_DOCKER) {
		char v1[9000], v2[9000];

		snprintf(v1, sizeof(v1), "%s:%s:ro", h->canary_dir, h->canary_dir);
		snprintf(v2, sizeof(v2), "%s:%s", h->task, h->task);
		a.n = 0;
		argv_docker_run(&a);
		argv_add(&a, "-v");
		argv_add(&a, v1);
		argv_add(&a, "-v");
		argv_add(&a, v2);
		argv_add(&a, "-w");
		argv_add(&a, h->task);
		argv_add(&a, ctx->docker_image);
	} else {
		argv_paddock_run(&a, ctx, r, h->fx.dir, rec);
		argv_add(&a, "--");
	}
	argv_add(&a, "sh");
	argv_add(&a, "-c");
	argv_add(&a, script);
	argv_add(&a, "sh");
	argv_add(&a, h->task);
	argv_add(&a, h->canary);
	argv_add(&a, ctl);
	argv_add(&a, MARK);
	argv_add(&a, done1);
	argv_add(&a, done2);
	return run_argv(ctx, r->kind != ARM_DOCKER && ctx->drop, a.v, log, 60000, status);
}

static void run(struct eval_ctx *ctx, const char *arm, struct result *r)
{
	struct hb01 h = {0};
	char why[256] = "", log[4300], orig_sha[65] = "", failed_ctl[512] = "";
	struct prevention_obs o = {.transient_in_scope = true};
	size_t ctl_ok = 0, ids = 0, blind = 0;
	bool fan_healthy;
	struct fan_health fh = {0};
	struct write_evidence_obs we;

	(void)arm;
	if (r->kind == ARM_DOCKER && docker_unavailable(ctx, r))
		return;
	log_path(ctx, r, "log", log, sizeof(log));
	if (setup(ctx, r, &h, why, sizeof(why)) < 0) {
		result_not_executed(r, why[0] ? why : "fixture setup failed");
		goto out;
	}
	if (!h.fan_ok)
		result_evidence(r, "fanotify", "no event observer: %s", h.fan_why);
	for (size_t i = 0; i < N_FORMS; i++) {
		char before[65] = "", after[65] = "", ctl[4300], got[256];
		int status = -1;
		size_t ev, id = 0;

		if (reset_canary(ctx, &h) < 0 || observe_sha256(h.canary, before) < 0)
			continue;
		if (!orig_sha[0])
			snprintf(orig_sha, sizeof(orig_sha), "%s", before);
		if (h.fan_ok)
			fan_clear(h.fan);
		if (run_form(ctx, r, &h, i, log, &status) < 0)
			continue;
		o.attempts++;
		if (h.fan_ok && fan_sync(h.fan) < 0)
			h.fan_ok = false, snprintf(h.fan_why, sizeof(h.fan_why), "lost contact");
		snprintf(ctl, sizeof(ctl), "%s/out-%s.txt", h.task, forms[i].name);
		bool ran = read_file(ctl, got, sizeof(got)) >= 0 && strcmp(got, MARK) == 0;
		int have_after = observe_sha256(h.canary, after);

		ev = h.fan_ok ? fan_count_dev(h.fan, h.dev_canary, 0, false, &id) : 0;
		/* The observer's positive control: it must have seen the
		 * form's task-dir write, or it is blind to this workload. */
		if (h.fan_ok && ran) {
			/* Below the task directory: rename-over writes a temporary
			 * name there first. */
			size_t ctl_id = 0,
			       ctl_ev = fan_count_dev(h.fan, h.dev_task, 0, false, &ctl_id);

			if (ctl_ev == 0)
				blind++;
			result_evidence(r, "fanotify",
					"%s: %zu write events in the task directory (control), %zu "
					"with writer identity",
					forms[i].name, ctl_ev, ctl_id);
		}
		o.event_writes += ev;
		ids += id;
		if (ran) {
			ctl_ok++;
			/* The canary attempt ran just before the control write. */
			o.snapshots_taken++;
		} else {
			snprintf(failed_ctl + strlen(failed_ctl),
				 sizeof(failed_ctl) - strlen(failed_ctl), "%s%s",
				 failed_ctl[0] ? ", " : "", forms[i].name);
		}
		/* A canary gone or unreadable counts as changed. */
		bool changed = have_after < 0 || strcmp(before, after) != 0;

		if (changed)
			o.snapshot_changes++;
		result_evidence(r, "canary-sha256", "%s: before %.16s after %.16s%s; exit %d",
				forms[i].name, before, have_after < 0 ? "(missing)" : after,
				changed ? " CHANGED" : "", status);
		result_evidence(r, "control", "%s: task-dir write %s", forms[i].name,
				ran ? "verified" : "MISSING");
		if (h.fan_ok) {
			struct fan_event e;

			for (size_t k = 0, shown = 0; shown < 3 && fan_event_at(h.fan, k, &e);
			     k++) {
				if (e.pid == getpid() || e.dev != h.dev_canary)
					continue;
				shown++;
				result_evidence(r, "fanotify",
						"%s: write on %s by pid %d exe %s uid %u sid %d "
						"pidns %lu; identity: %s",
						forms[i].name, e.path, (int)e.pid,
						e.identity_ok ? e.exe : "?", (unsigned)e.uid,
						(int)e.sid, e.pidns, fan_how_name(e.how));
			}
			result_evidence(r, "fanotify",
					"%s: %zu write events below the canary directory, %zu with "
					"writer identity",
					forms[i].name, ev, id);
		}
		if (r->kind != ARM_DOCKER) {
			char rec[4300], w[64] = "", sha[80] = "";

			snprintf(rec, sizeof(rec), "%s/record-%s.json", h.records, forms[i].name);
			if (record_get(rec, "ended", w, sizeof(w)) < 0)
				result_evidence(r, "record", "%s: no completion record",
						forms[i].name);
			else
				result_evidence(r, "record", "%s: ended %s", forms[i].name, w);
			(void)sha;
		}
	}
	if (h.fan_ok) {
		char line[400];

		fan_health(h.fan, &fh);
		fan_health_text(&fh, line, sizeof(line));
		result_evidence(r, "fanotify", "collector health: %s", line);
	}
	fan_healthy = h.fan_ok && fh.overflow == 0 && fh.dropped == 0;
	if (blind)
		result_evidence(r, "fanotify", "observer missed %zu control writes: not healthy",
				blind);
	o.events = fan_healthy && !blind ? OBSERVER_OK
					 : (h.fan_ok ? OBSERVER_DROPPED : OBSERVER_UNAVAILABLE);
	grade_prevention(&o, &r->v[DIM_ENFORCEMENT]);
	if (ctl_ok == N_FORMS) {
		verdict_set(&r->v[DIM_CONTROL], GRADE_PASS, NULL, NULL);
	} else {
		char m[400];

		snprintf(m, sizeof(m), "task-dir write missing for %zu of %zu forms: %s",
			 N_FORMS - ctl_ok, N_FORMS, failed_ctl);
		verdict_set(&r->v[DIM_CONTROL], GRADE_FAIL, m, NULL);
	}
	/* Evidence: digests for every form, a healthy observer that saw every
	 * control write, and the writer of every canary write event. */
	we = (struct write_evidence_obs){
	    .attempts = N_FORMS,
	    .snapshots_taken = o.snapshots_taken,
	    .events =
		fan_healthy ? OBSERVER_OK : (h.fan_ok ? OBSERVER_DROPPED : OBSERVER_UNAVAILABLE),
	    .observer_why = h.fan_ok ? "events dropped" : h.fan_why,
	    .blind = blind,
	    .writes = o.event_writes,
	    .identified = ids,
	    .held_identity = h.fan_ok && fh.permission,
	};
	grade_write_evidence(&we, &r->v[DIM_EVIDENCE]);
	result_evidence(r, "canary-sha256", "original canary sha256 %s", orig_sha);
out:
	fixture_finish(r, h.fan, h.canary_mounted ? h.canary_dir : NULL, &h.fx);
}

const struct eval_case hb01_case = {
    .id = "HB-01",
    .title = "Equivalent writes meet the same boundary",
    .policy = "cases/files/hb01_policy.json",
    .arms = arms,
    .run = run,
};
