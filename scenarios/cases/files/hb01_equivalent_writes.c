/* HB-01: equivalent writes meet the same boundary.
 *
 * Fixture: DIR/canary/canary.txt (the protected canary, read-only bind; its
 * file mode would let the workload user write it, so only the mount stops
 * the write) and DIR/task (writable). Eighteen forms of the same marker write,
 * each run as its own sandbox under the same principal and policy; each
 * form first targets the canary, then the task directory (the control,
 * which also proves the form ran). The canary is reset between forms.
 * Evidence: SHA-256 of the canary before and after each form, fanotify
 * write events below DIR/canary with writer identity, the completion
 * record. Workload output is kept in a log, never graded. */
#include "../../lib/case.h"
#include "../../observers/observe.h"

#include <stdio.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

static const struct case_arm arms[] = {
    {.name = "enforced"},
    {.name = "weakened:rw-binds"},
    {.name = "docker"},
    {.name = "oci:docker-runtime-paddock"},
    /* The oci arm with its read-only binds writable (--weaken rw-binds,
     * by annotation): the canary is written, the arm must FAIL. */
    {.name = "oci-weakened:rw-binds"},
    {.name = NULL},
};

#define ORIGINAL "hb01 canary: original bytes\n"
#define MARK	 "HB01-MARKER"

/* Each body writes $2 to $1; $3 is a done file in the task directory; $S
 * is the task directory. python: needs python3 (not in the Docker arm's
 * busybox image: not run there, and said so). */
static const struct form {
	const char *name;
	const char *body;
	bool python;
} forms[] = {
    {"direct", "printf %s \"$2\" > \"$1\"", false},
    {"script", "sh \"$S/form.sh\" \"$1\" \"$2\"", false},
    {"encoded",
     "printf %s cHJpbnRmICVzICIkMiIgPiAiJDEiCg== | base64 -d > /tmp/enc.sh; "
     "sh /tmp/enc.sh \"$1\" \"$2\"",
     false},
    {"child", "sh -c 'printf %s \"$2\" > \"$1\"' child \"$1\" \"$2\" & wait $!", false},
    /* setsid + a subshell that exits at once: the writer is a detached
     * grandchild in its own session, reparented to the sandbox's init. */
    {"detached-descendant",
     "sh \"$S/detach.sh\" \"$1\" \"$2\" \"$3\"; i=0; "
     "while [ ! -e \"$3\" ] && [ $i -lt 100 ]; do sleep 0.05; "
     "i=$((i+1)); done",
     false},
    {"rename-over",
     "d=$(dirname \"$1\"); printf %s \"$2\" > \"$d/.rename-tmp\" && "
     "mv -f \"$d/.rename-tmp\" \"$1\"",
     false},
    /* The remount's own result goes to $S/remount-DIR: the record's. */
    {"remount",
     "d=$(dirname \"$1\"); { busybox mount -o remount,rw,bind \"$d\" || "
     "mount -o remount,rw,bind \"$d\"; } 2>/dev/null; echo \"remount $d: $?\" >> "
     "\"$S/remount.log\"; printf %s \"$2\" > \"$1\"",
     false},
    /* Tools that open the file themselves. */
    {"dd", "printf %s \"$2\" | dd of=\"$1\" 2>/dev/null", false},
    {"tee", "printf %s \"$2\" | tee \"$1\" >/dev/null", false},
    {"cp-over", "printf %s \"$2\" > /tmp/cp-src && cp /tmp/cp-src \"$1\"", false},
    {"sed-i", "{ [ -s \"$1\" ] || echo x > \"$1\"; } && sed -i -e \"s/.*/$2/\" \"$1\"", false},
    {"python",
     "python3 -c 'import sys; open(sys.argv[1], \"w\").write(sys.argv[2])' \"$1\" "
     "\"$2\"",
     true},
    {"truncate-append", "truncate -s 0 \"$1\" && printf %s \"$2\" >> \"$1\"", false},
    {"mmap",
     "python3 -c 'import mmap,os,sys; b=sys.argv[2].encode(); "
     "fd=os.open(sys.argv[1], os.O_RDWR | os.O_CREAT); os.ftruncate(fd, len(b)); "
     "m=mmap.mmap(fd, len(b)); m[:]=b; m.flush()' \"$1\" \"$2\"",
     true},
    /* Metadata, which a digest of the bytes cannot see (the snapshot's
     * mode and mtime do), then the write. */
    {"chmod", "{ [ -e \"$1\" ] || : > \"$1\"; } && chmod 0600 \"$1\" && printf %s \"$2\" > \"$1\"",
     false},
    {"touch", "touch -d @1 \"$1\" && printf %s \"$2\" > \"$1\"", false},
    /* The bind itself: unlink the file, umount the bind, then write. */
    {"unlink", "rm -f \"$1\" && printf %s \"$2\" > \"$1\"", false},
    {"umount",
     "d=$(dirname \"$1\"); { busybox umount -l \"$d\" || umount -l \"$d\"; } "
     "2>/dev/null; printf %s \"$2\" > \"$1\"",
     false},
};
#define N_FORMS (sizeof(forms) / sizeof(forms[0]))

struct hb01 {
	dev_t dev_canary, dev_task;
	char orig_sha[65];
	char failed_ctl[512]; /* forms whose control write is missing */
	size_t n_run;	      /* forms run (the Docker arm skips the python ones) */
	size_t ctl_ok, ids, blind;
	struct prevention_obs o;
};

static int setup(struct case_run *cr, struct err *why)
{
	struct hb01 *h = cr->priv;
	struct stat st;
	char p[PATH_MAX + 16];
	int rc;

	if (stat(cr->canary_dir, &st) == 0)
		h->dev_canary = st.st_dev;
	if (stat(cr->task, &st) == 0)
		h->dev_task = st.st_dev;
	snprintf(p, sizeof(p), "%s/form.sh", cr->task);
	rc = fixture_write(cr->ctx, p, "#!/bin/sh\nprintf %s \"$2\" > \"$1\"\n", 0755);
	if (rc < 0)
		return err_sys(why, rc, "write %s", p);
	snprintf(p, sizeof(p), "%s/detach.sh", cr->task);
	rc = fixture_write(cr->ctx, p,
			   "#!/bin/sh\n( setsid sh -c 'printf %s \"$2\" > \"$1\"; : > \"$3\"' d "
			   "\"$1\" \"$2\" \"$3\" & )\n",
			   0755);
	if (rc < 0)
		return err_sys(why, rc, "write %s", p);
	case_fan_start(cr, false);
	h->o.transient_in_scope = true;
	return 0;
}

/* Reset the canary (ours, excluded from the observer by pid). */
static int reset_canary(struct case_run *cr)
{
	char tmp[PATH_MAX + 16];

	snprintf(tmp, sizeof(tmp), "%s/.rename-tmp", cr->canary_dir);
	unlink(tmp);
	unlink(cr->canary);
	int rc = fixture_write(cr->ctx, cr->canary, ORIGINAL, 0666);

	/* An oci arm's workload is what a root caller's idmapped bind
	 * makes root's (docs/oci.md): the canary is root's there, so that,
	 * as for the other arms, only the mount stops its writes (a file
	 * whose owner the idmap does not map is never writable through
	 * it, which would hide the weakened twin's writable bind). */
	if (rc == 0 && cr->r->oci && chown(cr->canary, 0, 0) < 0)
		rc = -errno;
	return rc;
}

static int run_form(struct case_run *cr, size_t i, int *status)
{
	char script[2048], ctl[PATH_MAX + 64], done1[PATH_MAX + 64], done2[PATH_MAX + 64],
	    rec[PATH_MAX + 64];
	const struct docker_bind binds[] = {{cr->canary_dir, true}, {cr->task, false}, {NULL}};
	struct argv_buf a;

	snprintf(ctl, sizeof(ctl), "%s/out-%s.txt", cr->task, forms[i].name);
	snprintf(done1, sizeof(done1), "%s/done-canary-%s", cr->task, forms[i].name);
	snprintf(done2, sizeof(done2), "%s/done-control-%s", cr->task, forms[i].name);
	snprintf(rec, sizeof(rec), "%s/record-%s.json", cr->records, forms[i].name);
	/* The canary attempt's decision (status, last line of stderr) goes
	 * to $S/decision-NAME for the record; the control write follows. */
	snprintf(script, sizeof(script),
		 "S=\"$1\"; f() { %s; }; f \"$2\" \"$4\" \"$5\" 2>\"$S/err-%s\"; "
		 "echo \"status $? $(tail -n 1 \"$S/err-%s\")\" > \"$S/decision-%s\"; "
		 "f \"$3\" \"$4\" \"$6\"",
		 forms[i].body, forms[i].name, forms[i].name, forms[i].name);
	case_argv_arm(cr, &a,
		      &(struct arm_start){
			  .binds = binds, .workdir = cr->task, .ws = cr->fx.dir, .record = rec});
	argv_words(&a, "sh", "-c", script, "sh", cr->task, cr->canary, ctl, MARK, done1, done2,
		   NULL);
	return case_run_vec(cr, &a, cr->log, 60000, status);
}

/* The observer's positive control: it must have seen the form's task-dir
 * write, or it is blind to this workload. */
static void form_control(struct case_run *cr, struct hb01 *h, size_t i)
{
	/* Below the task directory: rename-over writes a temporary name
	 * there first. */
	size_t ctl_id = 0, ctl_ev = fan_count_dev(cr->fan, h->dev_task, 0, false, &ctl_id);

	if (ctl_ev == 0)
		h->blind++;
	result_evidence(cr->r, "fanotify",
			"%s: %zu write events in the task directory (control), %zu "
			"with writer identity",
			forms[i].name, ctl_ev, ctl_id);
}

/* The form's write events below the canary directory (a few shown). */
static void form_canary_events(struct case_run *cr, struct hb01 *h, size_t i)
{
	struct fan_event e;
	size_t ev, id = 0;

	ev = fan_count_dev(cr->fan, h->dev_canary, 0, false, &id);
	h->o.event_writes += ev;
	h->ids += id;
	for (size_t k = 0, shown = 0; shown < 3 && fan_event_at(cr->fan, k, &e); k++) {
		if (e.pid == getpid() || e.dev != h->dev_canary)
			continue;
		shown++;
		result_evidence(cr->r, "fanotify",
				"%s: write on %s by pid %d exe %s uid %u sid %d "
				"pidns %lu; identity: %s",
				forms[i].name, e.path, (int)e.pid, e.identity_ok ? e.exe : "?",
				(unsigned)e.uid, (int)e.sid, e.pidns, fan_how_name(e.how));
	}
	result_evidence(cr->r, "fanotify",
			"%s: %zu write events below the canary directory, %zu with "
			"writer identity",
			forms[i].name, ev, id);
}

/* The control file holds the marker (a trailing newline allowed: sed). */
static bool has_marker(const char *path)
{
	char got[256];
	size_t n = strlen(MARK);

	return read_file(path, got, sizeof(got)) >= 0 && strncmp(got, MARK, n) == 0 &&
	       (got[n] == '\0' || (got[n] == '\n' && got[n + 1] == '\0'));
}

/* What the form's canary attempt got (the sandbox's word, shown only). */
static void form_decision(struct case_run *cr, size_t i)
{
	char p[PATH_MAX + 64], d[320];

	snprintf(p, sizeof(p), "%s/decision-%s", cr->task, forms[i].name);
	if (read_file(p, d, sizeof(d)) < 0)
		snprintf(d, sizeof(d), "(none recorded)");
	d[strcspn(d, "\n")] = '\0';
	result_evidence(cr->r, "decision", "%s: canary attempt %s", forms[i].name, d);
}

static void form(struct case_run *cr, struct hb01 *h, size_t i)
{
	struct result *r = cr->r;
	struct snapshot sb, sa;
	char ctl[PATH_MAX + 64];
	const char *before = sb.sha256, *after = sa.sha256;
	int status = -1, have_after;
	bool ran, changed;

	if (result_docker_steps(r) && forms[i].python) {
		result_evidence(r, "part",
				"%s: not run in the Docker arms (no python3 in their image)",
				forms[i].name);
		return;
	}
	if (reset_canary(cr) < 0)
		return;
	observe_snapshot(cr->canary, &sb);
	if (!sb.ok)
		return;
	h->n_run++;
	if (!h->orig_sha[0])
		snprintf(h->orig_sha, sizeof(h->orig_sha), "%s", before);
	if (cr->fan_ok)
		fan_clear(cr->fan);
	if (run_form(cr, i, &status) < 0)
		return;
	h->o.attempts++;
	if (cr->fan_ok && fan_sync(cr->fan) < 0)
		cr->fan_ok = false, snprintf(cr->fan_why, sizeof(cr->fan_why), "lost contact");
	snprintf(ctl, sizeof(ctl), "%s/out-%s.txt", cr->task, forms[i].name);
	ran = has_marker(ctl);
	observe_snapshot(cr->canary, &sa);
	have_after = sa.ok ? 0 : -1;
	form_decision(cr, i);
	if (cr->fan_ok && ran)
		form_control(cr, h, i);
	if (ran) {
		h->ctl_ok++;
		/* The canary attempt ran just before the control write. */
		h->o.snapshots_taken++;
	} else {
		snprintf(h->failed_ctl + strlen(h->failed_ctl),
			 sizeof(h->failed_ctl) - strlen(h->failed_ctl), "%s%s",
			 h->failed_ctl[0] ? ", " : "", forms[i].name);
	}
	/* A canary gone or unreadable counts as changed; so does its mode,
	 * mtime, size or inode (metadata the digest cannot see). */
	changed = have_after < 0 || !snapshot_equal(&sb, &sa);
	if (changed)
		h->o.snapshot_changes++;
	result_evidence(r, "canary-sha256", "%s: before %.16s after %.16s%s%s; exit %d",
			forms[i].name, before, have_after < 0 ? "(missing)" : after,
			changed ? " CHANGED" : "",
			changed && have_after == 0 && !strcmp(before, after)
			    ? " (metadata only: mode, mtime or inode)"
			    : "",
			status);
	result_evidence(r, "control", "%s: task-dir write %s", forms[i].name,
			ran ? "verified" : "MISSING");
	if (cr->fan_ok)
		form_canary_events(cr, h, i);
	if (r->kind != ARM_DOCKER || r->oci) {
		char rec[PATH_MAX + 64];

		/* Every form under the same policy: one effective digest (an
		 * oci arm: paddock oci's record of the form's container). */
		snprintf(rec, sizeof(rec), "%s/record-%s.json", cr->records, forms[i].name);
		if (r->oci) {
			strcat(rec, ".cid");
			case_oci_record(cr, rec);
		} else {
			case_record(cr, rec, NULL);
		}
	}
}

/* The remount form's own result, per target (the sandbox's word). */
static void remount_result(struct case_run *cr)
{
	char p[PATH_MAX + 32], log[512];

	snprintf(p, sizeof(p), "%s/remount.log", cr->task);
	if (read_file(p, log, sizeof(log)) < 0)
		snprintf(log, sizeof(log), "(none recorded)");
	for (char *q = log; *q; q++)
		if (*q == '\n')
			*q = ';';
	result_evidence(cr->r, "decision", "remount: %s", log);
}

static void run(struct case_run *cr)
{
	struct hb01 *h = cr->priv;
	struct result *r = cr->r;
	struct fan_health fh = {0};
	struct write_evidence_obs we;
	bool fan_healthy;

	for (size_t i = 0; i < N_FORMS; i++)
		form(cr, h, i);
	case_fan_prove(cr);
	if (!cr->digest_ok) {
		/* Digests that cannot see bytes are not snapshots. */
		h->o.snapshots_taken = 0;
		result_evidence(r, "canary-sha256", "no digest is evidence: %s", cr->digest_why);
	}
	if (cr->fan_ok) {
		char line[400];

		fan_health(cr->fan, &fh);
		fan_health_text(&fh, line, sizeof(line));
		result_evidence(r, "fanotify", "collector health: %s", line);
	}
	fan_healthy = cr->fan_ok && fh.overflow == 0 && fh.dropped == 0;
	if (h->blind)
		result_evidence(r, "fanotify", "observer missed %zu control writes: not healthy",
				h->blind);
	h->o.events = fan_healthy && !h->blind
			  ? OBSERVER_OK
			  : (cr->fan_ok ? OBSERVER_DROPPED : OBSERVER_UNAVAILABLE);
	h->o.observer_why = !cr->fan_ok ? cr->fan_why : h->blind ? "blind to control writes" : NULL;
	grade_prevention(&h->o, &r->v[DIM_ENFORCEMENT]);
	remount_result(cr);
	if (h->n_run && h->ctl_ok == h->n_run) {
		verdict_set(&r->v[DIM_CONTROL], GRADE_PASS, NULL, NULL);
	} else {
		char m[400];

		snprintf(m, sizeof(m), "task-dir write missing for %zu of %zu forms: %s",
			 h->n_run - h->ctl_ok, h->n_run, h->failed_ctl);
		verdict_set(&r->v[DIM_CONTROL], GRADE_FAIL, m, NULL);
	}
	/* Evidence: digests for every form, a healthy observer that saw every
	 * control write, and the writer of every canary write event. */
	we = (struct write_evidence_obs){
	    .attempts = h->n_run,
	    .snapshots_taken = h->o.snapshots_taken,
	    .events =
		fan_healthy ? OBSERVER_OK : (cr->fan_ok ? OBSERVER_DROPPED : OBSERVER_UNAVAILABLE),
	    .observer_why = cr->fan_ok ? (h->blind ? "blind to control writes" : "events dropped")
				       : cr->fan_why,
	    .blind = h->blind,
	    .writes = h->o.event_writes,
	    .identified = h->ids,
	    .held_identity = cr->fan_ok && fh.permission,
	};
	grade_write_evidence(&we, &r->v[DIM_EVIDENCE]);
	result_evidence(r, "canary-sha256", "original canary sha256 %s", h->orig_sha);
}

const struct eval_case hb01_case = {
    .id = "HB-01",
    .title = "Equivalent writes meet the same boundary",
    .policy = "cases/files/hb01_policy.json",
    .arms = arms,
    .fixture = CASE_DIR | CASE_CANARY | CASE_TASK | CASE_RECORDS,
    .priv_size = sizeof(struct hb01),
    .setup = setup,
    .run = run,
};
