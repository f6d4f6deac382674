/* paddock run, from parsed options to the exit status: prepare, start,
 * supervise, finish. The one place that prints the run's final messages. */
#include "run.h"

#include <fcntl.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <sys/resource.h>
#include <stdlib.h>
#include <string.h>
#include <sys/pidfd.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../../include/cleanup.h"
#include "../../include/exitcodes.h"
#include "../../include/log.h"

/* Where the final messages go: a detached run that never started still
 * reports to the caller's terminal; otherwise stderr (for a detached run,
 * the session's stderr file). */
static FILE *message_stream(const struct run *r)
{
	FILE *f;
	int fd;

	if (r->live.caller_err < 0)
		return stderr;
	fd = fcntl(r->live.caller_err, F_DUPFD_CLOEXEC, 3);
	f = fd >= 0 ? fdopen(fd, "w") : NULL;
	if (!f && fd >= 0)
		close(fd);
	return f ? f : stderr;
}

/* A duration as a policy writes it: the largest unit that divides it. */
static const char *format_ms(uint64_t ms, char *buf, size_t size)
{
	if (ms && ms % 3600000 == 0)
		snprintf(buf, size, "%lluh", (unsigned long long)(ms / 3600000));
	else if (ms && ms % 60000 == 0)
		snprintf(buf, size, "%llum", (unsigned long long)(ms / 60000));
	else if (ms && ms % 1000 == 0)
		snprintf(buf, size, "%llus", (unsigned long long)(ms / 1000));
	else
		snprintf(buf, size, "%llums", (unsigned long long)ms);
	return buf;
}

/* A policy wider than the agent policy says so (docs/security.md,
 * "Widenings"). */
static void warn_widenings(const struct run *r)
{
	FILE *f;

	if (!r->spec->n_widenings)
		return;
	f = message_stream(r);
	for (size_t i = 0; i < r->spec->n_widenings; i++)
		fprintf(f, "paddock: warning: the policy is wider than the agent policy: %s\n",
			r->spec->widenings[i]);
	if (f != stderr)
		fclose(f);
}

/* An "auto" port forward: which host port it got, since the caller
 * cannot know it otherwise (docker run -p prints none, docker port does). */
static void tell_auto_ports(const struct run *r)
{
	const struct policy *p = r->spec->policy;
	FILE *f = NULL;

	for (size_t i = 0; i < p->n_ports; i++) {
		if (p->ports[i].host_port)
			continue;
		if (!f)
			f = message_stream(r);
		fprintf(f, "paddock: port %s -> %u (auto)\n", r->live.ports.endpoints[i].host,
			r->live.ports.endpoints[i].sandbox);
	}
	if (f && f != stderr)
		fclose(f);
}

static void live_free(struct run_live *l)
{
	ports_stop(&l->ports);
	mediator_stop(&l->mediator);
	if (l->mediator.log_fd >= 0)
		close(l->mediator.log_fd);
	if (l->evidence.fd >= 0)
		close(l->evidence.fd);
	l->evidence.fd = -1;
	if (l->denials.fd >= 0)
		close(l->denials.fd);
	l->denials.fd = -1;
	exec_close(l);
	gitallow_close(&l->gitallow);
	if (l->box.ctl >= 0)
		close(l->box.ctl);
	if (l->box.pidfd >= 0)
		close(l->box.pidfd);
	l->box.ctl = l->box.pidfd = -1;
}

/* The services' stdout and stderr: the session's output files, never the
 * caller's stdio (a leased service outlives the main command). */
static int open_service_output(struct run *r, struct err *err)
{
	if (!r->spec->sb.svc_output)
		return 0;
	for (int i = 0; i < 2; i++) {
		int fd = r->live.session ? session_output_fd(r->live.session, i, err)
					 : open("/dev/null", O_WRONLY | O_CLOEXEC);

		if (fd < 0)
			return r->live.session ? fd : err_sys(err, errno, "/dev/null");
		r->live.svc_out[i] = r->live.box.svc_out[i] = fd;
	}
	return 0;
}

/* Before the child is released: the mediator's listeners (a mediated
 * network), then paddock oci's call (struct options.before_go). */
static int gate(struct sandbox *sb, void *arg, struct err *err)
{
	struct run *r = arg;
	const struct options *o = r->spec->opt;
	int rc = 0;

	if (r->spec->sb.anyip)
		rc = mediator_bind(sb, arg, err);
	if (rc >= 0 && o->before_go)
		rc = o->before_go(r->live.session ? r->live.session->info.id : "", (int)sb->pid,
				  o->before_go_arg, err);
	return rc;
}

/* Why there is no evidence log: on stderr and in the record. */
static void no_evidence_log(struct run *r, const struct err *eerr)
{
	fprintf(stderr, "paddock: warning: no evidence log: %s\n", eerr->msg);
	outcome_warn(&r->out, "no evidence log: %s", eerr->msg);
}

#ifndef PADDOCK_BENCH_NO_EVIDENCE
/* The log's key (before the sandbox starts: a mediator gets it), or the
 * warning why there is no log. Whether there is to be one. */
static bool evidence_key(struct run *r, struct err *eerr)
{
	int rc = run_evidence_key(r, eerr);

	if (rc < 0)
		no_evidence_log(r, eerr);
	return rc > 0;
}
#endif

/* The log's files, then its first line: the run, its policy's digests and
 * generation (an owner's rotation of the policy is a new generation of the
 * session's name with the new digest: docs/evidence.md, HB-19). */
static void evidence_begin(struct run *r, struct err *eerr)
{
	const struct run_spec *spec = r->spec;
	char c[512];

	if (run_evidence_open(r, eerr) < 0) {
		no_evidence_log(r, eerr);
		return;
	}
	evidence_json_string(spec->opt->argv[0], c, sizeof(c));
	evidence_event(r, "run",
		       "\"policy_sha256\":\"%s\",\"effective_sha256\":\"%s\",\"command\":%s,"
		       "\"weaken\":%" PRIu64 ",\"generation\":%u",
		       spec->file_sha256, spec->policy->sha256, c, spec->opt->weaken,
		       r->live.session ? r->live.session->info.generation : 0);
}

/* Start the sandbox and what runs beside it. On failure the child (which
 * waits for "go" or for its protected paths) must not outlive us. */
static int start(struct run *r, struct err *err)
{
	bool gated = r->spec->sb.anyip || r->spec->opt->before_go;
	sigset_t set;
	int rc;

	/* Blocked before the clone, so none is lost before the signalfd. */
	supervisor_sigset(&set);
	/* SIGPIPE too, not read: a reader of the relay's output that went
	 * away is an EPIPE for the relay (stdio.c), not our end. Every
	 * process that enters the sandbox starts with an empty mask
	 * (sandbox_harden()) and no pending signal (fork(2)). */
	sigaddset(&set, SIGPIPE);
	sigprocmask(SIG_BLOCK, &set, NULL);
	rc = stdio_prepare(r, err);
	if (rc >= 0)
		rc = open_service_output(r, err);
	/* A detached run: the sandbox's fds 1 and 2 are the capped output's
	 * pipes (output.c), its stdin the supervisor's /dev/null (stdio mode
	 * "inherit": nothing of the caller's). A mediated network: the
	 * mediator's listeners are bound inside before the child is
	 * released. */
	if (rc >= 0 && r->live.output.active) {
		int save[2] = {-1, -1};

		rc = output_swap(r, save);
		if (rc >= 0)
			rc = gated ? sandbox_start_gated(&r->spec->sb, &r->live.box, gate, r, err)
				   : sandbox_start(&r->spec->sb, &r->live.box, err);
		else
			err_sys(err, rc, "output pipes");
		output_unswap(r, save);
	} else if (rc >= 0 && gated) {
		rc = sandbox_start_gated(&r->spec->sb, &r->live.box, gate, r, err);
	} else if (rc >= 0) {
		rc = sandbox_start(&r->spec->sb, &r->live.box, err);
	}
	/* The child has its copies. */
	stdio_started(r);
	for (int i = 0; i < 2; i++) {
		if (r->live.svc_out[i] >= 0)
			close(r->live.svc_out[i]);
		r->live.svc_out[i] = r->live.box.svc_out[i] = -1;
	}
	if (rc >= 0)
		rc = sandbox_protect(&r->spec->sb, &r->live.box, &r->live.protect, err);
	log_debug("protected paths prepared");
	if (rc >= 0)
		rc = ports_start(r, err);
	if (rc < 0 && r->live.box.pidfd >= 0) {
		pidfd_send_signal(r->live.box.pidfd, SIGKILL, NULL, 0);
		waitid(P_PIDFD, (id_t)r->live.box.pidfd, &(siginfo_t){0}, WEXITED);
	}
	return rc;
}

/* After the sandbox: what is left is looked for, placeholders go, the
 * record and the session get the outcome, and the one message is printed.
 * Returns the exit status. */
static int finish(struct run *r, struct session *session, int rc, const struct err *err)
{
	const struct options *o = r->spec->opt;
	struct err werr = {0};
	struct rlimit nofile;
	FILE *out;

	/* The workload's last output, and the caller's terminal as it was,
	 * before anything else is said. */
	stdio_finish(r);
	/* The endpoints end with the session, before anyone learns it ended;
	 * the mediator too, and what it admitted goes into the record. */
	ports_stop(&r->live.ports);
	if (r->live.session)
		r->live.session->gate_fd = -1; /* paddock approve: too late now */
	mediator_stop(&r->live.mediator);
	mediator_summary(r);
	if (rc < 0) {
		outcome_fail(&r->out, err);
		clock_gettime(CLOCK_REALTIME, &r->out.t_end);
	}
	if (r->live.box.pidfd >= 0)
		find_survivors(r);
	log_debug("survivors checked");
	r->out.placeholders_left = mounts_protect_release(&r->live.protect);
	log_debug("placeholders released");
	output_finish(r);
	/* The cgroup's peaks, then the cgroup itself (empty now). */
	cgroup_collect(&r->live.cgroup);
	cgroup_remove(&r->live.cgroup);
	/* From outside, after the sandbox is gone: what the host's git would
	 * now run that it did not before (mounts/git.c; never runs git). */
	r->out.n_tampering = git_check_after(&r->spec->git, &r->out.tampering);
	if (r->out.n_tampering < 0)
		r->out.n_tampering = 0;
	r->out.over = true;
	/* The other sources' logs are tied to this one by their checkpoints
	 * (docs/evidence.md): where each ended when paddock read it. */
	if (r->out.net.reported) {
		char q[PATH_MAX + 16];

		evidence_json_string(r->out.net.log_path, q, sizeof(q));
		evidence_event(
		    r, "checkpoint",
		    "\"of\":\"mediator\",\"log\":%s,\"of_epoch\":\"%s\",\"last_seq\":%llu,"
		    "\"head\":\"%s\",\"verified\":%s",
		    q, r->out.net.epoch, (unsigned long long)r->out.net.seq, r->out.net.head,
		    r->out.net.verified ? "true" : "false");
	}
	/* The last event before the record, which holds the checkpoint. */
	evidence_event(r, "end", "\"ended\":\"%s\",\"status\":%d,\"survivors\":%zu",
		       ending_name(r->out.ending), r->out.status, r->out.n_survivors);
	/* On disk before a witness that says where it ends: the record is
	 * fsynced (record_file.c), and a log lost to a crash behind a durable
	 * checkpoint would read as a gap. One fdatasync a run. */
	if (r->live.evidence.fd >= 0 && (r->live.record_fd >= 0 || r->live.witness_file[0])) {
		(void)fdatasync(r->live.evidence.fd);
		run_evidence_key_sync(r);
	}
	/* The second witness before the record, which says whether it was
	 * written (docs/evidence.md, "A second witness"). */
	run_witness_write(r);
	if (r->live.witness_error[0])
		outcome_warn(&r->out, "the evidence witness was not written: %s",
			     r->live.witness_error);
	/* A workload that ran keeps its status: 125 would tell a harness
	 * that nothing ran, and one that retries on 125 would run it twice.
	 * Only a caller who asked (--record-required) gets a status of its
	 * own for a lost record. */
	if (r->live.record_fd >= 0 && record_write(r, r->live.record_fd, &werr) < 0) {
		fprintf(stderr, "paddock: warning: the record was not written: %s\n", werr.msg);
		if (o->record_required && r->out.status != EXIT_LAUNCHER)
			r->out.status = EXIT_RECORD;
	}
	/* The session's waiters learn the status now. A foreground run's
	 * entry goes (its caller has the status), and so does a detached
	 * run's that never started (its caller never got the id). */
	if (session_finish(session, r->out.status, ending_name(r->out.ending),
			   (!o->detach && !r->out.retained) || r->live.report_fd >= 0 || o->rm,
			   &werr) < 0)
		outcome_warn(&r->out, "%s; its status is kept in the entry's name (final-lost)",
			     werr.msg);
	log_debug("record and session finished");
	out = message_stream(r);
	if (r->out.error.code == EMFILE && getrlimit(RLIMIT_NOFILE, &nofile) == 0)
		fprintf(out, "paddock: %s (open file limit %llu; raise it with ulimit -n)\n",
			r->out.error.msg, (unsigned long long)nofile.rlim_max);
	else if (r->out.error.code)
		fprintf(out, "paddock: %s\n", r->out.error.msg);
	else if (r->out.exec_errno)
		fprintf(out, "paddock: %s: %s\n", o->argv[0], strerror(r->out.exec_errno));
	if (r->out.ending == ENDING_EXPIRED) {
		size_t n = r->out.n_killed + r->out.killed_unnamed;
		char ttl[32];

		fprintf(out, "paddock: time limit %s reached; ended %zu process%s\n",
			format_ms(r->spec->policy->ttl_ms, ttl, sizeof(ttl)), n,
			n == 1 ? "" : "es");
	}
	for (size_t i = 0; i < r->out.n_warnings; i++)
		fprintf(out, "paddock: warning: %s\n", r->out.warnings[i]);
	for (int i = 0; i < r->out.n_tampering; i++)
		fprintf(out, "paddock: warning: tampering: %s\n", r->out.tampering[i]);
	for (size_t i = 0; i < r->out.n_survivors; i++)
		fprintf(out, "paddock: warning: process %d (%s) outlived the sandbox\n",
			(int)r->out.survivors[i].pid, r->out.survivors[i].comm);
	if (out != stderr)
		fclose(out);
	detach_report_exit(r, r->out.status);
	return r->out.status;
}

int supervisor_run(const struct options *o)
{
	struct run_spec spec = {.sb = {.init_fd = -1}};
	struct run r = {
	    .spec = &spec,
	    .live = {.box = {.ctl = -1,
			     .pidfd = -1,
			     .stdio = {-1, -1, -1},
			     .svc_out = {-1, -1},
			     .cgroup_fd = -1},
		     .cgroup = {.fd = -1, .dirfd = -1, .parent = -1},
		     .stdio = {.master = -1, .tty_fd = -1},
		     .exec = {.spare = -1, .zkeep = -1, .zreq = -1, .left = {.chan = -1}},
		     .svc_out = {-1, -1},
		     .report_fd = -1,
		     .caller_err = -1,
		     .record_fd = -1,
		     .denials = {.fd = -1, .wl = {.chan = -1}},
		     .output = {.rd = {-1, -1}, .wr = {-1, -1}, .file = {-1, -1}},
		     .ports = {.relay_pidfd = -1},
		     .mediator = {.pidfd = -1, .log_fd = -1, .ctl_fd = -1, .ready_fd = -1},
		     .evidence = {.fd = -1}}};
	struct session session = {.dirfd = -1, .listen = -1, .gate_fd = -1, .reg = {.fd = -1}};
	struct err err = {0}, eerr = {0};
	bool logged, early;
	cleanup_close int record_fd = -1;
	int rc, status;

	for (size_t i = 0; i < EXEC_RELAYS_MAX; i++)
		r.live.exec.relay[i] = (struct exec_relay){.chan = -1, .sink = {.chan = -1}};
	for (size_t i = 0; i < EXEC_LISTENERS_MAX; i++)
		r.live.exec.listener[i] = -1;
	/* paddock holds an fd per mount op, protected path and client during
	 * setup, and the kernel's default soft limit (1024, for select(2),
	 * which paddock does not use) may have been lowered by the caller:
	 * the soft limit goes up to the hard one, and the workload gets the
	 * caller's back (sandbox/enter.c). */
	if (getrlimit(RLIMIT_NOFILE, &spec.sb.caller_nofile) == 0) {
		struct rlimit up = spec.sb.caller_nofile;

		spec.sb.has_caller_nofile = true;
		up.rlim_cur = up.rlim_max;
		(void)setrlimit(RLIMIT_NOFILE, &up);
	}
	for (unsigned i = 0; i < WEAKEN_COUNT; i++)
		if (o->weaken & (UINT64_C(1) << i))
			fprintf(stderr, "paddock: warning: --weaken %s: %s\n",
				weaken_name(UINT64_C(1) << i), weaken_warning(UINT64_C(1) << i));
	/* Detached: everything from here on happens in the supervisor, which
	 * reports back once the workload runs or the run is over. */
	if (o->detach && !o->explain) {
		spec.opt = o;
		rc = detach_start(&r, &status, &err);
		if (rc != 0) {
			if (rc < 0)
				fprintf(stderr, "paddock: %s\n", err.msg);
			return rc < 0 ? EXIT_LAUNCHER : status;
		}
	}
	rc = run_prepare(&spec, o, &record_fd, &err);
	log_debug("prepared");
	if (rc >= 0 && o->explain) {
		explain_print(&spec, stdout);
		run_spec_free(&spec);
		return 0;
	}
	/* Host ports before the sandbox: a busy one means nothing starts. */
	if (rc >= 0)
		rc = ports_bind(spec.policy, &r.live.ports, &err);
	/* protect_git "allowlist": the git directories' fds, before the
	 * sandbox (outside it). */
	if (rc >= 0 && spec.sb.seccomp.n_protect_nrs > 0) {
		int g = gitallow_open(&r.live.gitallow, &spec.git, &spec.sb);

		if (g < 0)
			rc = err_sys(&err, g, "protect_git: opening the git directories");
	}
	/* Whatever failed, a record that could be opened gets the outcome. */
	r.live.record_fd = record_fd;
	if (rc >= 0) {
		if (outcome_init(&r.out, spec.policy, spec.sb.plan.n) < 0)
			rc = err_set(&err, ENOMEM, "out of memory");
	}
	/* Leased services outlive the main command: the caller gets its
	 * status at the main command's end from a supervisor that goes on. */
	if (rc >= 0 && !o->detach && leases_any(spec.policy)) {
		rc = retain_start(&r, &status, &err);
		if (rc > 0) {
			live_free(&r.live);
			outcome_free(&r.out);
			run_spec_free(&spec);
			return status;
		}
	}
#ifndef PADDOCK_BENCH_NO_REGISTRY
	if (rc >= 0)
		rc = run_open_session(&r, &session, &err);
#else
	/* build/paddock-noreg, a benchmark's binary that is never installed
	 * (Makefile): the run without its registry entry, for bench/run.sh's
	 * A/B row of what registration costs. Nothing can list or stop it. */
	(void)session;
#endif
	log_debug("session registered");
	/* Once the run is going to start (a run refused before has its one
	 * line of error), on the caller's stderr. */
	if (rc >= 0) {
		warn_widenings(&r);
		tell_auto_ports(&r);
		/* limits.memory, .cpu, .pids: a cgroup of the sandbox's own, or
		 * a line that says they are not enforced, and why. */
		cgroup_prepare(&spec, &r.live.cgroup,
			       r.live.session ? r.live.session->info.id : "explain");
		r.live.box.cgroup_fd = r.live.cgroup.fd;
		if (r.live.cgroup.asked && !r.live.cgroup.enforced)
			fprintf(
			    stderr,
			    "paddock: warning: limits.memory, limits.cpu and limits.pids are not "
			    "enforced: %s\n",
			    r.live.cgroup.why);
	}
	/* An evidence log that cannot be made does not stop the run (the
	 * record says so, like a record that cannot be written). */
#ifdef PADDOCK_BENCH_NO_EVIDENCE
	/* build/paddock-noev, a benchmark's binary that is never installed
	 * (Makefile): the run without its evidence log, for bench/run.sh's
	 * A/B row of what the log costs. */
	logged = false;
#else
	logged = rc >= 0 && evidence_key(&r, &eerr);
#endif
	/* Its files and first line: where the workload is to see them
	 * (--weaken evidence-in-sandbox, HB-19's weakened arm reads the key
	 * from inside) before it starts; otherwise once the child is
	 * released, while it mounts its tree and execs the workload, which
	 * need nothing of them (bench/profile.md: ~0.12 ms off the start
	 * path). A sandbox that failed to start still gets its run and end
	 * lines. */
	early = (o->weaken & WEAKEN_EVIDENCE_IN_SANDBOX) != 0;
	if (logged && early)
		evidence_begin(&r, &eerr);
	if (rc >= 0)
		rc = start(&r, &err);
	log_debug("sandbox released");
	if (logged && !early) {
		evidence_begin(&r, &eerr);
		log_debug("evidence log opened");
	}
	if (rc >= 0) {
		rc = supervise(&r, &err);
		/* The loop itself failed (no fds for it, poll): the sandbox
		 * must not run on unsupervised until we exit. */
		if (rc < 0 && r.live.box.pidfd >= 0 && !r.out.init_reaped) {
			pidfd_send_signal(r.live.box.pidfd, SIGKILL, NULL, 0);
			waitid(P_PIDFD, (id_t)r.live.box.pidfd, &(siginfo_t){0}, WEXITED);
		}
	}
	log_debug("sandbox ended");
	status = finish(&r, &session, rc, &err);
	live_free(&r.live);
	outcome_free(&r.out);
	run_spec_free(&spec);
	return status;
}
