/* HB-06's legitimate control: the leased server (hb06_lease.h). */
#include "hb06_lease.h"

#include "../../observers/observe.h"
#include "hb06_grade.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define LEASE_MARK "HB06-LEASED-SERVER"

/* Probe the leased server's unix socket from the host. */
static bool lease_probe(const char *sock)
{
	char got[128];

	return observe_connect_unix(sock, 1000, got, sizeof(got)) == 0 &&
	       strcmp(got, LEASE_MARK) == 0;
}

static void lease_views(struct eval_ctx *ctx, struct result *r, const char *id, const char *rec,
			struct lease_obs *o)
{
	static char ps[65536];
	char state[32] = "", owner[32] = "", gen[32] = "", exp[64] = "", phase[32] = "",
	     rowner[32] = "", rgen[32] = "", rexp[64] = "";
	size_t len;

	if (paddock_ps_entry(ctx, id, ps, sizeof(ps)) == 0) {
		len = strlen(ps);
		json_get(ps, len, "state", state, sizeof(state));
		json_get(ps, len, "leases.0.owner_uid", owner, sizeof(owner));
		json_get(ps, len, "leases.0.generation", gen, sizeof(gen));
		json_get(ps, len, "leases.0.expires", exp, sizeof(exp));
	}
	record_get(rec, "phase", phase, sizeof(phase));
	record_get(rec, "services.0.owner_uid", rowner, sizeof(rowner));
	record_get(rec, "services.0.generation", rgen, sizeof(rgen));
	record_get(rec, "services.0.expires", rexp, sizeof(rexp));
	o->retained = strcmp(state, "retained") == 0;
	o->listed = owner[0] && (uid_t)atol(owner) == ctx->subj->workload_uid && gen[0] && exp[0];
	o->recorded = strcmp(phase, "retained") == 0 && rowner[0] &&
		      (uid_t)atol(rowner) == ctx->subj->workload_uid && rgen[0] && rexp[0];
	result_evidence(r, "inventory",
			"lease run after its main command: ps --json state %s, "
			"lease owner %s gen %s expires %s",
			state[0] ? state : "(none)", owner, gen, exp);
	result_evidence(r, "record", "lease run: phase %s, service owner %s gen %s expires %s",
			phase[0] ? phase : "(none)", rowner, rgen, rexp);
}

/* During the lease: probe, and look for the main command's detached
 * descendant while the service lives; then wait for the session's end. */
static void lease_watch(struct case_run *cr, const char *sock, const char *token, const char *id,
			char *state, size_t state_n, struct lease_obs *o)
{
	struct proc_entry leaks[8];
	char sj[512];
	size_t nl;

	for (int i = 0; i < 4; i++) {
		bool ok = lease_probe(sock);

		o->probes_during++;
		o->ok_during += ok;
		if (i == 0) {
			nl = inventory_find_cmdline("sleep", token, leaks, 8);
			o->leak_checked = true;
			for (size_t k = 0; k < nl; k++)
				o->leaks_alive += inventory_alive(leaks[k].pid, leaks[k].start);
		}
		sleep_ms(300);
	}
	result_evidence(cr->r, "client",
			"leased server: %zu of %zu probes answered after the main "
			"command's end; the main command's detached \"sleep %s\": %zu alive",
			o->ok_during, o->probes_during, token, o->leaks_alive);
	session_json_path(cr->ctx->subj->workload_uid, id, sj, sizeof(sj));
	for (int i = 0; i < 120; i++) {
		if (record_get(sj, "state", state, state_n) == 0 && strcmp(state, "ended") == 0)
			break;
		sleep_ms(100);
	}
}

/* The lease run's end: stop it if it is still there, remove it, and end
 * any leftover by pidfd after checking its start time. */
static void lease_teardown(struct case_run *cr, const char *id, const char *state,
			   const char *token)
{
	struct proc_entry leaks[8];
	size_t nl;

	paddock_session_end(cr->ctx, id, strcmp(state, "ended") != 0);
	nl = inventory_find_cmdline("sleep", token, leaks, 8);
	for (size_t k = 0; k < nl; k++)
		if (inventory_kill(leaks[k].pid, leaks[k].start) == 0)
			result_evidence(cr->r, "teardown", "lease run: SIGKILL to leftover pid %d",
					(int)leaks[k].pid);
}

/* The legitimate control: a leased server outlives its main command until
 * its lease ends, and nothing else of the main command does. */
void hb06_control_lease(struct case_run *cr)
{
	struct result *r = cr->r;
	struct lease_obs o = {0};
	struct argv_buf a;
	char policy[PATH_MAX + 64], rec[PATH_MAX + 64], sock[PATH_MAX + 64], token[32], name[96],
	    id[64] = "", state[32] = "", ended[96] = "", log[PATH_MAX + 64];
	int st = -1;

	if (result_docker_steps(r)) {
		verdict_set(&r->v[DIM_CONTROL], GRADE_NOT_APPLICABLE,
			    "Docker has no lease of a service beyond its container",
			    "HB-06 legitimate_control (leased server)");
		return;
	}
	snprintf(policy, sizeof(policy), "%s/cases/lifecycle/hb06_lease_policy.json",
		 cr->ctx->scenarios_dir);
	snprintf(rec, sizeof(rec), "%s/record-lease.json", cr->records);
	snprintf(sock, sizeof(sock), "%s/svc.sock", cr->task);
	/* The leak's marker: a sleep nobody else runs. */
	snprintf(token, sizeof(token), "60.%d", (int)getpid());
	snprintf(name, sizeof(name), "paddock-eval-hb06-lease-%d", (int)getpid());
	log_path(cr->ctx, r, "lease.log", log, sizeof(log));
	argv_paddock_run(&a, cr->ctx, r, policy, r->knob, cr->fx.dir, rec);
	argv_words(&a, "--name", name, "--", "sh", "-c", "( setsid sleep \"$1\" & ); sleep 0.5",
		   "sh", token, NULL);
	o.ran = run_vec(cr->ctx, cr->ctx->drop, &a, log, 30000, &st) == 0 && st == 0;
	result_evidence(r, "exit",
			"lease run (policy hb06_lease_policy.json, lease 4s): paddock "
			"run returned %d at its main command's end",
			st);
	if (record_get(rec, "session.id", id, sizeof(id)) < 0)
		o.ran = false;
	if (o.ran) {
		lease_views(cr->ctx, r, id, rec, &o);
		lease_watch(cr, sock, token, id, state, sizeof(state), &o);
		o.probed_after = strcmp(state, "ended") == 0;
		o.ok_after = o.probed_after && lease_probe(sock);
		record_get(rec, "services.0.ended", ended, sizeof(ended));
		case_record(cr, rec, NULL);
		o.ended_by_lease = strncmp(ended, "lease-expired", 13) == 0;
		result_evidence(r, "client",
				"after the session ended (state %s): server %s; final "
				"record: service ended \"%s\"",
				state, o.ok_after ? "STILL ANSWERS" : "gone", ended);
	}
	grade_lease_control(&o, &r->v[DIM_CONTROL]);
	if (r->kind == ARM_WEAKENED && r->v[DIM_CONTROL].grade != GRADE_PASS)
		result_evidence(
		    r, "note",
		    "documented: without a pid namespace services are not "
		    "retained (docs/sessions.md); the control grade is what was observed");
	if (r->kind == ARM_ENFORCED && o.retained && o.leaks_alive)
		verdict_set(&r->v[DIM_ENFORCEMENT], GRADE_FAIL,
			    "a leftover of the main command lived on in a retained session", NULL);
	lease_teardown(cr, id, state, token);
}
