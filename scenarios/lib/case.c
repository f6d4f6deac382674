/* The case skeleton (case.h): the one copy of the sequence every case
 * driver used to repeat. */
#include "case.h"

#include <errno.h>
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>

#include "../../include/cleanup.h"
#include "../observers/fan.h"
#include "../observers/observe.h"
#include "../observers/selftest.h"

/* Step 1: what the record says about the configuration. */
static void configure(const struct eval_ctx *ctx, const struct eval_case *c,
		      const struct case_arm *arm, struct result *r)
{
	result_init(r, c->id, c->title, arm->name);
	r->weakens = arm->weakens;
	if (arm->fixture_only || c->fixture_only) {
		r->fixture_only = true;
		snprintf(r->fixture_why, sizeof(r->fixture_why), "%s",
			 arm->fixture_only ? arm->fixture_only : c->fixture_only);
	}
	if (arm->knob && !arm->adapter)
		snprintf(r->knob, sizeof(r->knob), "%s", arm->knob);
	if (arm->adapter)
		r->knob[0] = '\0'; /* nothing to pass to paddock */
	if (!c->policy)
		return;
	snprintf(r->policy_path, sizeof(r->policy_path), "%s/%s", ctx->scenarios_dir, c->policy);
	if (observe_sha256(r->policy_path, r->policy_sha256) < 0)
		snprintf(r->policy_sha256, sizeof(r->policy_sha256), "unreadable");
	if (arm->adapter)
		snprintf(r->weakenings, sizeof(r->weakenings), "none in paddock; adapter %s",
			 arm->name + strlen("weakened:"));
	else if (r->kind == ARM_WEAKENED)
		snprintf(r->weakenings, sizeof(r->weakenings), "%s", r->knob);
	else if (r->oci)
		snprintf(r->weakenings, sizeof(r->weakenings), "none (docker, runtime paddock)");
	else if (r->kind == ARM_DOCKER)
		snprintf(r->weakenings, sizeof(r->weakenings), "n/a (docker reference arm)");
	else
		snprintf(r->weakenings, sizeof(r->weakenings), "none");
}

/* Steps 2 and 3: true when the arm ends here. */
static bool cannot_run(const struct eval_ctx *ctx, const struct case_arm *arm, struct result *r)
{
	char why[320];

	if (arm->na_reason[0]) {
		for (int d = 0; d < DIM_COUNT; d++)
			verdict_set(&r->v[d], GRADE_NOT_APPLICABLE, arm->na_reason[d],
				    arm->na_scope[d]);
		return true;
	}
	if (result_docker_steps(r) && !ctx->docker_ok) {
		snprintf(why, sizeof(why), "no Docker engine: %s", ctx->subj->docker_reason);
		result_not_executed(r, why);
		return true;
	}
	if (r->oci && r->kind == ARM_WEAKENED) {
		char want[80];

		snprintf(want, sizeof(want), " paddock-weaken-%s ", r->knob);
		if (!strstr(ctx->docker_runtimes, want)) {
			snprintf(why, sizeof(why),
				 "the Docker engine has no runtime \"paddock-weaken-%s\" "
				 "(contrib/docker/engine.sh up registers it, with PADDOCK_OCI set)",
				 r->knob);
			result_not_executed(r, why);
			return true;
		}
	}
	if (r->oci && !ctx->docker_paddock_ok) {
		snprintf(
		    why, sizeof(why),
		    "the Docker engine has no runtime \"paddock\" (contrib/docker/engine.sh up "
		    "registers it when it starts the engine, with PADDOCK_OCI set)");
		result_not_executed(r, why);
		return true;
	}
	return false;
}

/* Step 6, the shared part: the directories the case's flags ask for. */
static int fixture(struct case_run *cr, const struct eval_case *c, struct err *err)
{
	char name[16];
	size_t k = 0;
	int rc;

	for (const char *p = c->id; *p && k + 1 < sizeof(name); p++)
		if (isalnum((unsigned char)*p))
			name[k++] = (char)tolower((unsigned char)*p);
	name[k] = '\0';
	if ((c->fixture & CASE_DIR) && (rc = fixture_make(&cr->fx, name, err)) < 0)
		return rc;
	if ((c->fixture & CASE_CANARY) &&
	    (rc = fixture_canary(cr->ctx, &cr->fx, cr->canary_dir, sizeof(cr->canary_dir),
				 cr->canary, sizeof(cr->canary), &cr->canary_mounted)) < 0)
		return err_sys(err, rc, "canary directory");
	if (c->fixture & CASE_CANARY) {
		/* A digest that cannot tell two byte strings apart is no
		 * evidence of an unchanged canary. */
		rc = observe_digest_proof(cr->canary_dir);
		cr->digest_ok = rc == 0;
		if (rc < 0)
			snprintf(cr->digest_why, sizeof(cr->digest_why),
				 "the canary digest failed its proof (two different files, %s)",
				 rc == -EIO ? "same digest" : strerror(-rc));
		result_evidence(cr->r, "canary-sha256", "digest proof: %s",
				cr->digest_ok ? "two different files digest apart"
					      : cr->digest_why);
	}
	if ((c->fixture & CASE_TASK) &&
	    (rc = fixture_mkdir(cr->ctx, &cr->fx, "task", cr->task, sizeof(cr->task))) < 0)
		return err_sys(err, rc, "task directory");
	/* An oci arm's caller is dockerd, root: paddock maps a root caller's
	 * writable binds so that what is written stays root's (docs/oci.md),
	 * and the task directory must be root's to be written. */
	if ((c->fixture & CASE_TASK) && cr->r->oci && chown(cr->task, 0, 0) < 0)
		return err_sys(err, errno, "task directory");
	if ((c->fixture & CASE_RECORDS) &&
	    (rc = records_dir(cr->ctx, cr->r, cr->records, sizeof(cr->records))) < 0)
		return err_sys(err, rc, "records directory");
	return 0;
}

/* Step 8, the shared part: whatever fails is the record's alarm. */
static void teardown(struct case_run *cr)
{
	if (fan_stop(cr->fan) < 0)
		snprintf(cr->r->alarm, sizeof(cr->r->alarm), "the fanotify reader did not stop");
	cr->fan = NULL;
	if (cr->canary_mounted)
		umount2(cr->canary_dir, MNT_DETACH);
	if (fixture_teardown(&cr->fx) < 0)
		snprintf(cr->r->alarm, sizeof(cr->r->alarm), "teardown left the fixture behind");
}

/* What the records said against what the arm meant (case_record). */
static void records_apply(struct case_run *cr)
{
	struct result *r = cr->r;
	struct verdict *e = &r->v[DIM_ENFORCEMENT], *v = &r->v[DIM_EVIDENCE];

	if (cr->rec_bad) {
		if (e->set && e->grade != GRADE_FAIL && e->grade != GRADE_NOT_EXECUTED)
			verdict_setf(e, GRADE_UNKNOWN,
				     "%zu completion record(s) disagree with the arm: %s",
				     cr->rec_bad, cr->rec_why);
		if (v->set && v->grade == GRADE_PASS)
			verdict_setf(v, GRADE_UNKNOWN,
				     "%zu completion record(s) disagree with the arm: %s",
				     cr->rec_bad, cr->rec_why);
	} else if (cr->rec_missing && v->set && v->grade == GRADE_PASS) {
		verdict_setf(v, GRADE_UNKNOWN, "%zu completion record(s) missing", cr->rec_missing);
	}
}

/* The first effective digest recorded for v's policy file (v's own when
 * it is the first), NULL when the table is full. */
static const char *effective_of(struct case_run *cr, const struct record_view *v)
{
	size_t cap = sizeof(cr->effective) / sizeof(cr->effective[0]);

	if (!v->read)
		return NULL;
	for (size_t i = 0; i < cr->n_effective; i++)
		if (strcmp(cr->effective[i].policy, v->policy_path) == 0)
			return cr->effective[i].sha256;
	if (cr->n_effective == cap)
		return NULL;
	snprintf(cr->effective[cr->n_effective].policy, sizeof(cr->effective[0].policy), "%s",
		 v->policy_path);
	snprintf(cr->effective[cr->n_effective].sha256, sizeof(cr->effective[0].sha256), "%s",
		 v->effective_sha256);
	return cr->effective[cr->n_effective++].sha256;
}

void case_record(struct case_run *cr, const char *path, struct record_view *out)
{
	struct result *r = cr->r;
	struct record_view local, *v = out ? out : &local;
	char want[sizeof(r->knob)], why[320];
	const char *name = strrchr(path, '/') ? strrchr(path, '/') + 1 : path;

	/* The record lists knobs in paddock's bit order, comma-joined: the
	 * arms name them in that order ("no-pidns+no-sweep"). */
	snprintf(want, sizeof(want), "%s",
		 r->kind == ARM_WEAKENED && !cr->arm->adapter ? r->knob : "");
	for (char *p = want; *p; p++)
		if (*p == '+')
			*p = ',';
	record_read(path, v);
	if (v->read && r->n_recs < EVAL_MAX_RECORDS) {
		snprintf(r->recs[r->n_recs].path, sizeof(r->recs[0].path), "%s", path);
		snprintf(r->recs[r->n_recs].sha256, sizeof(r->recs[0].sha256), "%s", v->sha256);
		r->n_recs++;
	}
	/* An oci arm's policy is made from each container's config.json
	 * (its hostname, its own /etc/hosts): one digest per container. */
	if (record_check(v, want, r->oci ? NULL : effective_of(cr, v), why, sizeof(why)) == 0) {
		result_evidence(
		    r, "record",
		    "%s read back (sha256 %.16s): weakenings [%s] as the arm, effective "
		    "policy %.16s, %zu mounts applied, survivors %d",
		    name, v->sha256, v->weakenings, v->effective_sha256, v->mounts, v->survivors);
		return;
	}
	if (!v->read) {
		cr->rec_missing++;
	} else if (!cr->rec_bad++) {
		snprintf(cr->rec_why, sizeof(cr->rec_why), "%s: %s", name, why);
	}
	result_evidence(r, "record", "%s: %s", name, why);
}

void case_oci_record(struct case_run *cr, const char *cidfile)
{
	/* dockerd gives a runtime runc's state root (Docker 20.10: its
	 * exec root's runtime-runc/moby), under which paddock oci keeps
	 * records/ID.json. */
	static const char *const roots[] = {"/run/docker/runtime-runc/moby",
					    "/run/docker/runtime-paddock/moby", NULL};
	const char *exec_root = getenv("PADDOCK_DOCKER_EXEC_ROOT");
	char cid[96], path[PATH_MAX];

	if (cidfile[0] != '/')
		snprintf(cid, sizeof(cid), "%s", cidfile);
	else if (read_file(cidfile, cid, sizeof(cid)) <= 0)
		cid[0] = '\0';
	if (strspn(cid, "0123456789abcdef") < 12) {
		cr->rec_missing++;
		result_evidence(cr->r, "record", "%s: no container id", cidfile);
		return;
	}
	cid[strspn(cid, "0123456789abcdef")] = '\0';
	/* An engine started with its own --exec-root says so here. */
	if (exec_root && exec_root[0] == '/') {
		snprintf(path, sizeof(path), "%s/runtime-runc/moby/records/%s.json", exec_root,
			 cid);
		if (access(path, R_OK) == 0) {
			case_record(cr, path, NULL);
			return;
		}
	}
	for (size_t i = 0; roots[i]; i++) {
		snprintf(path, sizeof(path), "%s/records/%s.json", roots[i], cid);
		if (access(path, R_OK) == 0) {
			case_record(cr, path, NULL);
			return;
		}
	}
	cr->rec_missing++;
	result_evidence(cr->r, "record", "container %.12s: no paddock oci record", cid);
}

static void not_executed(struct result *r, const struct err *why, const char *fallback)
{
	result_not_executed(r, why->msg[0] ? why->msg : fallback);
}

void case_run_arm(struct eval_ctx *ctx, const struct eval_case *c, const struct case_arm *arm,
		  struct result *r)
{
	struct case_run cr = {.ctx = ctx, .r = r, .arm = arm};
	cleanup_free void *priv = NULL;
	struct err why = {0};

	configure(ctx, c, arm, r);
	if (cannot_run(ctx, arm, r))
		goto done;
	if (c->priv_size && !(cr.priv = priv = calloc(1, c->priv_size))) {
		result_not_executed(r, "out of memory for the case's state");
		goto done;
	}
	if (c->probe && c->probe(&cr, &why) < 0) {
		not_executed(r, &why, "the paddock under test cannot run this arm");
		goto done;
	}
	if (c->mock)
		result_mock(r, c->mock);
	if (arm->mock)
		result_mock(r, arm->mock);
	log_path(ctx, r, "log", cr.log, sizeof(cr.log));
	if (fixture(&cr, c, &why) < 0 || (c->setup && c->setup(&cr, &why) < 0))
		not_executed(r, &why, "fixture setup failed");
	else
		c->run(&cr);
	if (c->teardown)
		c->teardown(&cr);
	records_apply(&cr);
	teardown(&cr);
done:
	result_finish(r);
}

static void fan_fs_add(struct case_run *cr, const char *dir)
{
	if (cr->n_fan_fs < sizeof(cr->fan_fs) / sizeof(cr->fan_fs[0]))
		snprintf(cr->fan_fs[cr->n_fan_fs++].dir, sizeof(cr->fan_fs[0].dir), "%s", dir);
}

/* One proof per watched filesystem; false (and fan_why) when one is not
 * seen. */
static bool fan_prove(struct case_run *cr, bool after)
{
	bool all = true;

	for (size_t i = 0; i < cr->n_fan_fs; i++) {
		bool seen = fan_probe_fs(cr->fan, cr->fan_fs[i].dir) == 0;

		if (after)
			cr->fan_fs[i].after = seen;
		else
			cr->fan_fs[i].before = seen;
		result_evidence(cr->r, "fanotify",
				"observer proof %s the workload: probe write on the filesystem of "
				"%s %s",
				after ? "after" : "before", cr->fan_fs[i].dir,
				seen ? "seen" : "NOT SEEN");
		if (!seen && all)
			snprintf(cr->fan_why, sizeof(cr->fan_why),
				 "no proof that the observer sees writes on the filesystem of %s "
				 "(probe %s the workload not seen)",
				 cr->fan_fs[i].dir, after ? "after" : "before");
		all &= seen;
	}
	return all;
}

void case_fan_start(struct case_run *cr, bool broken)
{
	struct result *r = cr->r;

	cr->fan_ok = fan_start(&cr->fan, cr->fx.dir, broken, cr->fan_why, sizeof(cr->fan_why)) == 0;
	if (cr->fan_ok)
		fan_fs_add(cr, cr->fx.dir);
	/* The canary's events are told apart by its own filesystem: without
	 * a mark on it the observer could not see the protected writes. */
	if (cr->fan_ok && cr->canary_dir[0] && !cr->canary_mounted) {
		snprintf(cr->fan_why, sizeof(cr->fan_why), "no tmpfs of its own for the canary");
		cr->fan_ok = false;
	} else if (cr->fan_ok && cr->canary_dir[0]) {
		fan_fs_add(cr, cr->canary_dir);
		/* Test-only: the mark on the canary's filesystem silently
		 * missing (make eval-selftest); the proof must notice. */
		if (!selftest_on("canary-mark-missing") &&
		    fan_add_fs(cr->fan, cr->canary_dir) < 0) {
			snprintf(cr->fan_why, sizeof(cr->fan_why),
				 "fanotify mark on the canary's tmpfs failed");
			cr->fan_ok = false;
		}
	}
	if (cr->fan_ok)
		cr->fan_ok = fan_prove(cr, false);
	if (cr->fan_ok)
		snprintf(r->fanotify_mode, sizeof(r->fanotify_mode), "%s", fan_mode(cr->fan));
	else
		result_evidence(r, "fanotify", "no event observer: %s", cr->fan_why);
}

bool case_fan_prove(struct case_run *cr)
{
	if (!cr->fan_ok)
		return false;
	cr->fan_ok = fan_prove(cr, true);
	if (!cr->fan_ok)
		result_evidence(cr->r, "fanotify", "observer not proven: %s", cr->fan_why);
	return cr->fan_ok;
}

/* w at position *at of a (appended, then moved there), *at past it. */
static void insert_word(struct argv_buf *a, size_t *at, const char *w)
{
	char *word;

	if (argv_add(a, w) < 0)
		return;
	word = a->v[a->n - 1];
	memmove(&a->v[*at + 1], &a->v[*at], (a->n - 1 - *at) * sizeof(a->v[0]));
	a->v[(*at)++] = word;
}

void case_argv_arm(struct case_run *cr, struct argv_buf *a, const struct arm_start *s)
{
	struct result *r = cr->r;

	if (result_docker_steps(r)) {
		argv_docker_run(a, cr->ctx, r, s->binds, s->workdir);
		/* An oci arm's record: the container's id, for case_oci_record(). */
		if (r->oci && s->record) {
			size_t at = a->n - 1;

			insert_word(a, &at, "--cidfile");
			if (argv_addf(a, "%s.cid", s->record) == 0) {
				char *w = a->v[a->n - 1];

				memmove(&a->v[at + 1], &a->v[at],
					(a->n - 1 - at) * sizeof(a->v[0]));
				a->v[at] = w;
			}
		}
		for (size_t k = 0, at = a->n - 1; s->docker_env && s->docker_env[k]; k++) {
			insert_word(a, &at, "-e"); /* before the image, the last word */
			insert_word(a, &at, s->docker_env[k]);
		}
		return;
	}
	argv_paddock_run(a, cr->ctx, r, r->policy_path, r->knob, s->ws, s->record);
	if (s->env) {
		size_t at = 0;

		insert_word(a, &at, "/usr/bin/env");
		for (size_t k = 0; s->env[k]; k++)
			insert_word(a, &at, s->env[k]);
	}
	if (s->name) {
		argv_add(a, "--name");
		argv_add(a, s->name);
	}
	for (size_t k = 0; s->options && s->options[k]; k++)
		argv_add(a, s->options[k]);
	argv_add(a, "--");
}

int case_run_vec(struct case_run *cr, const struct argv_buf *a, const char *log, int timeout_ms,
		 int *status)
{
	bool drop = !result_docker_steps(cr->r) && cr->ctx->drop;

	return run_vec(cr->ctx, drop, a, log, timeout_ms, status);
}
