/* The completion record: JSON, written only by the supervisor, through an fd
 * it opened before the sandbox existed (docs/record.md). */
#include "run.h"

#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "../../include/cleanup.h"
#include "../../include/io.h"
#include "../../include/iso8601.h"

static cJSON *namespaces(unsigned ns)
{
	cJSON *a = cJSON_CreateArray();

	for (unsigned bit = 1; a && bit <= POLICY_NS_CGROUP; bit <<= 1)
		if (ns & bit)
			cJSON_AddItemToArray(a, cJSON_CreateString(policy_ns_name(bit)));
	return a;
}

/* paddock oci's joined namespaces: type and inode (their paths are the
 * engine's, in config.json, whose digest the record has). */
static cJSON *joined(const struct sandbox_spec *sb)
{
	cJSON *a = cJSON_CreateArray();

	for (size_t i = 0; a && i < sb->n_join; i++) {
		cJSON *j = cJSON_CreateObject();

		if (!j || !cJSON_AddItemToArray(a, j))
			break;
		cJSON_AddStringToObject(j, "type", policy_ns_name(sb->join[i].ns));
		cJSON_AddNumberToObject(j, "inode", (double)sb->join[i].ino);
	}
	return a;
}

/* The plan as the child applied it: "state" is what the child reported
 * for the op ("applied", "skipped": an optional source missing, "symlink":
 * recreated as one), or "not-reported" when it never got that far (then
 * "mode" is only the plan's). */
static cJSON *mounts(const struct mount_plan *plan, const struct outcome *out)
{
	cJSON *a = cJSON_CreateArray();

	for (size_t i = 0; a && i < plan->n; i++) {
		const struct mount_op *op = &plan->ops[i];
		cJSON *m = cJSON_CreateObject();
		const char *state;

		if (!m)
			break;
		cJSON_AddStringToObject(m, "from", op->what);
		cJSON_AddStringToObject(m, "type", mounts_op_name(op->kind));
		if (op->source)
			cJSON_AddStringToObject(m, "source", op->source);
		cJSON_AddStringToObject(m, "target", op->target);
		state = outcome_applied_state(out, i);
		if (op->kind == MOUNT_OP_BIND || op->kind == MOUNT_OP_PROTECT) {
			const char *mode = op->readonly ? "ro" : "rw";

			if (state && strcmp(state, "applied") != 0)
				mode = state;
			else if (!state && op->skipped)
				mode = "skipped";
			cJSON_AddStringToObject(m, "mode", mode);
		}
		if (op->host_proc)
			cJSON_AddStringToObject(m, "mode", "host-proc-bind");
		cJSON_AddStringToObject(m, "state", state ? state : "not-reported");
		cJSON_AddItemToArray(a, m);
	}
	return a;
}

static cJSON *weakenings(const struct run *r)
{
	const char *w[WEAKEN_COUNT + 1];
	size_t n = weakenings_in_effect(r->spec->opt->weaken, r->spec->policy, w, WEAKEN_COUNT + 1);
	cJSON *a = cJSON_CreateArray();

	for (size_t i = 0; a && i < n; i++)
		cJSON_AddItemToArray(a, cJSON_CreateString(w[i]));
	return a;
}

static cJSON *seccomp(const struct run *r)
{
	const struct seccomp_info *s = &r->spec->sb.seccomp;
	cJSON *o = cJSON_CreateObject(), *a;

	if (!o)
		return NULL;
	cJSON_AddBoolToObject(o, "enabled", s->enabled);
	if (!s->enabled)
		return o;
	cJSON_AddNumberToObject(o, "allowed", s->n_allowed);
	cJSON_AddNumberToObject(o, "rules", s->n_rules);
	cJSON_AddStringToObject(o, "bpf_sha256", s->bpf_sha256);
	a = cJSON_AddArrayToObject(o, "denied");
	for (size_t i = 0; a && i < s->n_denied; i++)
		cJSON_AddItemToArray(a, cJSON_CreateString(s->denied[i]));
	return o;
}

static cJSON *access_names(uint64_t mask)
{
	cJSON *a = cJSON_CreateArray();

	for (int b = 0; a && b < 64; b++)
		if (mask & (1ull << b))
			cJSON_AddItemToArray(a,
					     cJSON_CreateString(landlock_access_name(1ull << b)));
	return a;
}

static cJSON *ports(const uint16_t *p, size_t n)
{
	cJSON *a = cJSON_CreateArray();

	for (size_t i = 0; a && i < n; i++)
		cJSON_AddItemToArray(a, cJSON_CreateNumber(p[i]));
	return a;
}

static cJSON *landlock(const struct run *r)
{
	const struct landlock_info *l = &r->spec->sb.landlock;
	cJSON *o = cJSON_CreateObject(), *a;

	if (!o)
		return NULL;
	cJSON_AddNumberToObject(o, "abi", l->abi);
	cJSON_AddBoolToObject(o, "enabled", l->enabled);
	if (r->spec->policy)
		cJSON_AddStringToObject(o, "mode",
					r->spec->policy->landlock_mode == POLICY_LANDLOCK_REQUIRED
					    ? "required"
					    : "best-effort");
	if (!l->enabled)
		return o;
	cJSON_AddItemToObject(o, "handled_fs", access_names(l->handled_fs));
	a = cJSON_AddArrayToObject(o, "rules");
	for (size_t i = 0; a && i < l->n_rules; i++) {
		cJSON *rule = cJSON_CreateObject();

		if (!rule)
			break;
		cJSON_AddStringToObject(rule, "path", l->rules[i].path);
		cJSON_AddItemToObject(rule, "access", access_names(l->rules[i].access));
		cJSON_AddItemToArray(a, rule);
	}
	if (l->handled_net) {
		cJSON_AddItemToObject(o, "tcp_bind", ports(l->tcp_bind, l->n_tcp_bind));
		cJSON_AddItemToObject(o, "tcp_connect", ports(l->tcp_connect, l->n_tcp_connect));
	}
	a = cJSON_AddArrayToObject(o, "scoped");
	for (size_t i = 0; a && i < 2; i++)
		if (l->scoped & (1ull << i))
			cJSON_AddItemToArray(a, cJSON_CreateString(landlock_scope_name(1ull << i)));
	return o;
}

static cJSON *killed(const struct run *r)
{
	cJSON *a = cJSON_CreateArray();

	for (size_t i = 0; a && i < r->out.n_killed; i++) {
		cJSON *k = cJSON_CreateObject();

		if (!k)
			break;
		cJSON_AddNumberToObject(k, "pid", r->out.killed[i].pid);
		cJSON_AddStringToObject(k, "comm", r->out.killed[i].comm);
		cJSON_AddStringToObject(k, "signal",
					r->out.killed[i].sig == 9 ? "SIGKILL" : "SIGTERM");
		cJSON_AddItemToArray(a, k);
	}
	return a;
}

static cJSON *survivors(const struct run *r)
{
	cJSON *a = cJSON_CreateArray();

	for (size_t i = 0; a && i < r->out.n_survivors; i++) {
		cJSON *s = cJSON_CreateObject();

		if (!s)
			break;
		cJSON_AddNumberToObject(s, "host_pid", r->out.survivors[i].pid);
		cJSON_AddStringToObject(s, "comm", r->out.survivors[i].comm);
		cJSON_AddItemToArray(a, s);
	}
	return a;
}

/* Each service with its lease: who holds it (session, owner, generation),
 * until when, and how it ended. */
static cJSON *services(const struct run *r)
{
	cJSON *a = cJSON_CreateArray();

	for (size_t i = 0; a && i < r->out.n_leases; i++) {
		const struct session_lease *l = &r->out.leases[i];
		cJSON *s = cJSON_CreateObject();

		if (!s)
			break;
		cJSON_AddStringToObject(s, "name", l->service);
		if (r->live.session) {
			cJSON_AddStringToObject(s, "session", r->live.session->info.id);
			cJSON_AddNumberToObject(s, "generation", r->live.session->info.generation);
		}
		cJSON_AddNumberToObject(s, "owner_uid", r->spec->sb.uid_out);
		cJSON_AddNumberToObject(s, "pid", l->pid);
		cJSON_AddNumberToObject(s, "lease_ms", (double)l->lease_ms);
		if (l->started[0])
			cJSON_AddStringToObject(s, "started", l->started);
		if (l->expires[0])
			cJSON_AddStringToObject(s, "expires", l->expires);
		cJSON_AddStringToObject(s, "state", l->state);
		if (l->ended[0])
			cJSON_AddStringToObject(s, "ended", l->ended);
		cJSON_AddItemToArray(a, s);
	}
	return a;
}

/* The endpoints as bound, each with its session and generation, as in
 * session.json: a client can tell which session it reached. */
static cJSON *endpoints(const struct run *r)
{
	cJSON *a = cJSON_CreateArray();

	for (size_t i = 0; a && r->live.session && i < r->live.session->info.n_endpoints; i++) {
		const struct session_endpoint *e = &r->live.session->info.endpoints[i];
		cJSON *o = cJSON_CreateObject();

		if (!o)
			break;
		cJSON_AddStringToObject(o, "host", e->host);
		cJSON_AddNumberToObject(o, "sandbox", e->sandbox);
		cJSON_AddStringToObject(o, "session", r->live.session->info.id);
		cJSON_AddNumberToObject(o, "generation", r->live.session->info.generation);
		/* The nonce stays in session.json (the owner's 0700 registry):
		 * a record may be handed around. */
		cJSON_AddStringToObject(o, "protocol", e->http ? "http" : "tcp");
		if (e->service[0])
			cJSON_AddStringToObject(o, "service", e->service);
		else
			cJSON_AddNullToObject(o, "service");
		cJSON_AddItemToArray(a, o);
	}
	return a;
}

/* The network mode and, when mediated, what the mediator decided: counts
 * per decision from its admissions log, the log's path and digest. */
static cJSON *network(const struct run *r)
{
	const struct policy *p = r->spec->policy;
	cJSON *o = cJSON_CreateObject(), *c;

	if (!o)
		return NULL;
	cJSON_AddStringToObject(o, "mode",
				!(r->spec->sb.namespaces & POLICY_NS_NET) ? "host"
				: r->spec->sb.joined & POLICY_NS_NET	  ? "joined"
				: p && p->network == POLICY_NET_MEDIATED  ? "mediated"
									  : "none");
	if (!r->spec->sb.anyip)
		return o;
	cJSON_AddBoolToObject(o, "admissions_reported", r->out.net.reported);
	if (!r->out.net.reported)
		return o;
	c = cJSON_AddObjectToObject(o, "admissions");
	for (int k = 0; c && k < MEDIATOR_DECISIONS; k++)
		cJSON_AddNumberToObject(c, mediator_decision_names[k],
					(double)r->out.net.counts[k]);
	cJSON_AddStringToObject(o, "admissions_log", r->out.net.log_path);
	cJSON_AddStringToObject(o, "admissions_sha256", r->out.net.log_sha256);
	cJSON_AddStringToObject(o, "admissions_log_verified",
				r->out.net.verified ? "complete" : "incomplete");
	if (!r->out.net.verified)
		cJSON_AddStringToObject(o, "admissions_log_problem", r->out.net.verify_reason);
	/* network.on_capture_loss, and what it decided while the log could
	 * not be written (docs/evidence.md). */
	c = cJSON_AddObjectToObject(o, "capture");
	cJSON_AddStringToObject(c, "on_capture_loss",
				policy_capture_loss_name(p ? p->net_on_capture_loss : 0));
	cJSON_AddBoolToObject(c, "impaired",
			      r->out.net.dropped > 0 || r->out.net.blind_refused ||
				  r->out.net.blind_admitted);
	cJSON_AddNumberToObject(c, "lines_lost", (double)r->out.net.dropped);
	cJSON_AddNumberToObject(c, "refused_while_impaired", (double)r->out.net.blind_refused);
	cJSON_AddNumberToObject(c, "admitted_while_impaired", (double)r->out.net.blind_admitted);
	if (r->out.net.n_jobs)
		cJSON_AddItemToObject(o, "jobs", jobs_json(&r->out.net));
	return o;
}

/* A detached run's output files (supervisor/output.c): the limit, and
 * per stream what was kept and dropped; counts null when unknown. */
static cJSON *output(const struct run *r)
{
	const struct output *out = &r->live.output;
	cJSON *o = cJSON_CreateObject(), *x;

	cJSON_AddNumberToObject(o, "limit", (double)r->spec->policy->output_max);
	cJSON_AddStringToObject(o, "at_limit", "truncated with a marker line; the rest dropped");
	for (int i = 0; i < 2; i++) {
		x = cJSON_AddObjectToObject(o, i ? "stderr" : "stdout");
		if (!out->reported) {
			cJSON_AddNullToObject(x, "bytes");
			cJSON_AddNullToObject(x, "dropped");
			continue;
		}
		cJSON_AddNumberToObject(x, "bytes", (double)out->rep.bytes[i]);
		cJSON_AddNumberToObject(x, "dropped", (double)out->rep.dropped[i]);
	}
	return o;
}

/* Which project policy was found and whether it was applied
 * (docs/record.md): state, its canonical path and digest, who approved
 * it, or why not. */
static cJSON *project(const struct project_policy *pp)
{
	cJSON *x = cJSON_CreateObject();

	if (!x)
		return NULL;
	cJSON_AddStringToObject(x, "state", project_state_name(pp->state));
	if (pp->state == PROJECT_ABSENT)
		return x;
	cJSON_AddStringToObject(x, "path", pp->path);
	if (pp->sha256[0])
		cJSON_AddStringToObject(x, "sha256", pp->sha256);
	else
		cJSON_AddNullToObject(x, "sha256");
	if (pp->state == PROJECT_TRUSTED) {
		cJSON_AddNumberToObject(x, "approved_by", pp->uid);
		cJSON_AddNumberToObject(x, "approved_at", (double)pp->time);
	} else {
		cJSON_AddStringToObject(x, "reason", pp->reason);
	}
	return x;
}

/* Every source's checkpoint (docs/evidence.md): one log per source, each
 * checked against its own entry here, and the other sources' also against
 * the checkpoint event the supervisor's log ends with. */
cJSON *record_evidence_sources(const struct run *r)
{
	cJSON *a = cJSON_CreateArray(), *x = cJSON_CreateObject();

	cJSON_AddStringToObject(x, "source", "supervisor");
	cJSON_AddStringToObject(x, "log", r->live.evidence_path);
	cJSON_AddStringToObject(x, "epoch", r->live.evidence.epoch);
	cJSON_AddNumberToObject(x, "seq", (double)r->live.evidence.seq);
	cJSON_AddStringToObject(x, "head", r->live.evidence.head);
	cJSON_AddNumberToObject(x, "drops", (double)r->live.evidence.drops_total);
	cJSON_AddItemToArray(a, x);
	if (r->out.net.reported) {
		x = cJSON_CreateObject();
		cJSON_AddStringToObject(x, "source", "mediator");
		cJSON_AddStringToObject(x, "log", r->out.net.log_path);
		cJSON_AddStringToObject(x, "epoch", r->out.net.epoch);
		cJSON_AddNumberToObject(x, "seq", (double)r->out.net.seq);
		cJSON_AddStringToObject(x, "head", r->out.net.head);
		cJSON_AddNumberToObject(x, "drops", (double)r->out.net.dropped);
		cJSON_AddNumberToObject(x, "missing", (double)r->out.net.missing);
		cJSON_AddBoolToObject(x, "end_reported", r->out.net.end_reported);
		cJSON_AddBoolToObject(x, "verified", r->out.net.verified);
		cJSON_AddItemToArray(a, x);
	}
	return a;
}

static cJSON *build(const struct run *r)
{
	cJSON *o = cJSON_CreateObject(), *x;
	struct utsname u;
	char t[64];

	if (!o)
		return NULL;
	cJSON_AddNumberToObject(o, "record_version", 1);
	x = cJSON_AddObjectToObject(o, "paddock");
	cJSON_AddStringToObject(x, "version", PADDOCK_VERSION);
	cJSON_AddStringToObject(x, "commit", PADDOCK_COMMIT);
	cJSON_AddStringToObject(o, "kernel", uname(&u) == 0 ? u.release : "unknown");
	x = cJSON_AddObjectToObject(o, "policy");
	cJSON_AddStringToObject(x, "path", r->spec->policy_label);
	cJSON_AddStringToObject(x, "sha256", r->spec->file_sha256);
	cJSON_AddStringToObject(x, "effective_sha256",
				r->spec->policy ? r->spec->policy->sha256 : "");
	cJSON_AddItemToObject(o, "project_policy", project(&r->spec->project));
	cJSON_AddItemToObject(o, "namespaces",
			      namespaces(r->spec->sb.namespaces & ~r->spec->sb.joined));
	if (r->spec->sb.n_join)
		cJSON_AddItemToObject(o, "namespaces_joined", joined(&r->spec->sb));
	cJSON_AddItemToObject(o, "mounts", mounts(&r->spec->sb.plan, &r->out));
	cJSON_AddBoolToObject(o, "mounts_reported", r->out.applied_all);
	cJSON_AddItemToObject(o, "weakenings", weakenings(r));
	x = cJSON_AddArrayToObject(o, "widenings");
	for (size_t i = 0; x && i < r->spec->n_widenings; i++)
		cJSON_AddItemToArray(x, cJSON_CreateString(r->spec->widenings[i]));
	cJSON_AddItemToObject(o, "seccomp", seccomp(r));
	cJSON_AddItemToObject(o, "landlock", landlock(r));
	x = cJSON_AddArrayToObject(o, "command");
	for (char **a = r->spec->opt->argv; x && a && *a; a++)
		cJSON_AddItemToArray(x, cJSON_CreateString(*a));
	if (r->live.session) {
		x = cJSON_AddObjectToObject(o, "session");
		cJSON_AddStringToObject(x, "id", r->live.session->info.id);
		if (r->live.session->info.name[0])
			cJSON_AddStringToObject(x, "name", r->live.session->info.name);
		else
			cJSON_AddNullToObject(x, "name");
		cJSON_AddNumberToObject(x, "generation", r->live.session->info.generation);
		cJSON_AddBoolToObject(x, "detached", r->live.session->info.detached);
	}
	cJSON_AddItemToObject(o, "endpoints", endpoints(r));
	cJSON_AddItemToObject(o, "network", network(r));
	cJSON_AddItemToObject(o, "controls", record_controls(r));
	if (r->live.evidence.fd >= 0) {
		/* The checkpoint: the witness outside the log that says where it
		 * ends (paddock evidence verify --record). */
		x = cJSON_AddObjectToObject(o, "evidence");
		cJSON_AddStringToObject(x, "log", r->live.evidence_path);
		cJSON_AddNumberToObject(x, "seq", (double)r->live.evidence.seq);
		cJSON_AddStringToObject(x, "head", r->live.evidence.head);
		cJSON_AddNumberToObject(x, "drops", (double)r->live.evidence.drops_total);
		cJSON_AddBoolToObject(x, "sequenced", !r->live.evidence.unsequenced);
		cJSON_AddItemToObject(x, "sources", record_evidence_sources(r));
		if (r->live.witness_file[0]) {
			cJSON *wi = cJSON_AddObjectToObject(x, "witness");

			cJSON_AddStringToObject(wi, "path", r->live.witness_file);
			cJSON_AddBoolToObject(wi, "written", r->live.witness_written);
			if (r->live.witness_error[0])
				cJSON_AddStringToObject(wi, "error", r->live.witness_error);
		}
	}
	/* The per-user defaults file that shaped the run, if any. */
	if (r->spec->opt->config_path[0]) {
		x = cJSON_AddObjectToObject(o, "user_config");
		cJSON_AddStringToObject(x, "path", r->spec->opt->config_path);
		cJSON_AddStringToObject(x, "sha256", r->spec->opt->config_sha256);
	} else {
		cJSON_AddNullToObject(o, "user_config");
	}
	/* --env and --env-file: the names, never the values. */
	denials_json(r, o);
	notice_json(r, o);
	cgroup_json(&r->live.cgroup, r->spec->policy, o);
	x = cJSON_AddArrayToObject(o, "env_passed");
	for (size_t i = 0; x && i < r->spec->opt->n_env_pass; i++) {
		const char *e = r->spec->opt->env_pass[i];
		char name[256];

		snprintf(name, sizeof(name), "%.*s", (int)strcspn(e, "="), e);
		cJSON_AddItemToArray(x, cJSON_CreateString(name));
	}
	x = cJSON_AddObjectToObject(o, "ids");
	cJSON_AddNumberToObject(x, "uid_inside", r->spec->sb.uid_in);
	cJSON_AddNumberToObject(x, "uid_outside", r->spec->sb.uid_out);
	cJSON_AddNumberToObject(x, "gid_inside", r->spec->sb.gid_in);
	cJSON_AddNumberToObject(x, "gid_outside", r->spec->sb.gid_out);
	/* Where the outside ids come from: the caller's own, a root caller's
	 * overflow id, or root's subordinate range (docs/security.md). */
	cJSON_AddStringToObject(x, "outside_from",
				!r->spec->sb.root_caller ? "caller"
				: r->spec->sb.subid	 ? "subid"
							 : "overflow");
	if (r->spec->policy)
		cJSON_AddNumberToObject(o, "ttl_ms", (double)r->spec->policy->ttl_ms);
	iso8601(&r->live.box.t_start, 0, t, sizeof(t));
	cJSON_AddStringToObject(o, "start", t);
	iso8601(&r->out.t_end, 0, t, sizeof(t));
	cJSON_AddStringToObject(o, "end", t);
	cJSON_AddStringToObject(o, "ended", ending_name(r->out.ending));
	if (r->out.ending != ENDING_LAUNCHER_ERROR && r->out.wl_reported) {
		if (r->out.wl_signaled)
			cJSON_AddNumberToObject(o, "signal", r->out.wl_code);
		else
			cJSON_AddNumberToObject(o, "exit_code", r->out.wl_code);
	}
	cJSON_AddBoolToObject(o, "workload_started", r->out.started);
	if (r->spec->opt->detach && r->spec->policy)
		cJSON_AddItemToObject(o, "output", output(r));
	if (r->out.init_died) {
		x = cJSON_AddObjectToObject(o, "init_status");
		cJSON_AddNumberToObject(x, r->out.init_signaled ? "signal" : "exit_code",
					r->out.init_code);
	}
	if (r->out.exec_errno)
		cJSON_AddStringToObject(o, "exec_error", strerror(r->out.exec_errno));
	cJSON_AddNumberToObject(o, "status", r->out.status);
	/* "retained": written at the main command's end while leased
	 * services run on; rewritten as "final" when the sandbox is over. */
	cJSON_AddStringToObject(o, "phase", r->out.retained && !r->out.over ? "retained" : "final");
	if (r->out.retained) {
		iso8601(&r->out.t_main_end, 0, t, sizeof(t));
		cJSON_AddStringToObject(o, "main_end", t);
	}
	cJSON_AddItemToObject(o, "services", services(r));
	cJSON_AddItemToObject(o, "killed", killed(r));
	/* The list is capped (paddock-init names at most 64 per signal): how
	 * many there were in all, and whether the list holds fewer. */
	cJSON_AddNumberToObject(o, "killed_count",
				(double)(r->out.n_killed + r->out.killed_unnamed));
	cJSON_AddBoolToObject(o, "killed_capped", r->out.killed_unnamed > 0);
	cJSON_AddItemToObject(o, "survivors", survivors(r));
	cJSON_AddNumberToObject(o, "placeholders_left", r->out.placeholders_left);
	/* What the host's git would run after this run that it did not
	 * before (docs/security.md, "After the run"). */
	x = cJSON_AddArrayToObject(o, "tampering");
	for (int i = 0; x && i < r->out.n_tampering; i++)
		cJSON_AddItemToArray(x, cJSON_CreateString(r->out.tampering[i]));
	/* init's "done": it saw no process but itself left. Absent (false)
	 * when the kernel ended the rest: init was killed, or never ran. */
	cJSON_AddBoolToObject(o, "init_done", r->out.done);
	x = cJSON_AddArrayToObject(o, "errors");
	if (x && r->out.error.code)
		cJSON_AddItemToArray(x, cJSON_CreateString(r->out.error.msg));
	x = cJSON_AddArrayToObject(o, "warnings");
	for (size_t i = 0; x && i < r->out.n_warnings; i++)
		cJSON_AddItemToArray(x, cJSON_CreateString(r->out.warnings[i]));
	return o;
}

char *record_render(const struct run *r, size_t *len)
{
	cJSON *o = build(r);
	char *text;

	if (!o)
		return NULL;
	text = cJSON_Print(o);
	cJSON_Delete(o);
	if (!text)
		return NULL;
	*len = strlen(text);
	text[(*len)++] = '\n'; /* cJSON_Print's NUL, now the last newline */
	return text;
}

int record_write(const struct run *r, int fd, struct err *err)
{
	cleanup_free char *text = NULL;
	size_t len = 0;
	int rc;

	text = record_render(r, &len);
	if (!text)
		return err_set(err, ENOMEM, "record: out of memory");
	/* Replaced whole (record_file.c): a reader never sees it half. */
	rc = record_replace(fd, r->spec->opt->record_path, text, len, err);
	return rc < 0 ? rc : 0;
}
