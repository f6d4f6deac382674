/* paddock: the launcher's entry point. It only orchestrates: parse the
 * command line, load the policy, plan, start, supervise, record, and print
 * the one error. */
#include "run.h"

#include <fcntl.h>
#include <limits.h>
#include <pwd.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/pidfd.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../include/cleanup.h"
#include "../include/exitcodes.h"
#include "../include/log.h"
#include "../policy/sha256.h"
#include "seccomp_default.h"

extern char **environ;
extern const char paddock_default_policy[];
extern const char paddock_default_policy_end[];

static const char usage[] =
    "Usage: paddock COMMAND [OPTION]...\n"
    "A setuid-free sandbox launcher with a tiny PID 1.\n"
    "\n"
    "Commands:\n"
    "  run [OPTION]... [--] CMD [ARG]...   run CMD in a new sandbox (paddock run --help)\n"
    "  ps [--all] [--json]                 list the caller's sessions\n"
    "  stop [--grace DUR] ID|NAME          end a session and wait until it has ended\n"
    "  wait ID|NAME                        wait for a session; exit with its status\n"
    "  rm ID|NAME...                       remove ended sessions from the registry\n"
    "  exec [OPTION]... ID|NAME [--] CMD [ARG]...\n"
    "                                      run CMD in a running session (paddock exec --help)\n"
    "  help                                show this help\n"
    "\n"
    "Options:\n"
    "  -h, --help      show this help\n"
    "  -V, --version   show the version\n"
    "\n"
    "See paddock(1), paddock-policy(5), paddock-init(8).\n";

static int read_policy(const char *path, char **out, size_t *len, struct err *err)
{
	cleanup_close int fd = -1;
	cleanup_free char *buf = NULL;
	size_t n = 0;

	if (!path) {
		*len = (size_t)(paddock_default_policy_end - paddock_default_policy);
		*out = malloc(*len + 1);
		if (!*out)
			return err_set(err, ENOMEM, "out of memory");
		memcpy(*out, paddock_default_policy, *len);
		return 0;
	}
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return err_sys(err, errno, "policy %s", path);
	buf = malloc(POLICY_MAX_BYTES + 1);
	if (!buf)
		return err_set(err, ENOMEM, "out of memory");
	for (;;) {
		ssize_t r = read(fd, buf + n, POLICY_MAX_BYTES + 1 - n);

		if (r < 0)
			return err_sys(err, errno, "policy %s", path);
		if (r == 0)
			break;
		n += (size_t)r;
		if (n > POLICY_MAX_BYTES)
			return err_set(err, E2BIG, "policy %s: larger than %u bytes", path,
				       POLICY_MAX_BYTES);
	}
	*out = take_ptr(&buf);
	*len = n;
	return 0;
}

/* ${WORKSPACE}, ${HOME}, ${PWD}: canonical, so that the mount code can then
 * refuse any symlink it meets. A HOME that does not exist is left unset. */
struct vars_buf {
	char workspace[PATH_MAX], home[PATH_MAX], pwd[PATH_MAX];
};

static int make_vars(const struct options *o, struct vars_buf *b, struct policy_vars *v,
		     struct err *err)
{
	const char *home = getenv("HOME");
	struct passwd *pw;

	if (!realpath(o->workspace ? o->workspace : ".", b->workspace))
		return err_sys(err, errno, "workspace %s", o->workspace ? o->workspace : ".");
	if (!realpath(".", b->pwd))
		return err_sys(err, errno, "current directory");
	if (!home || home[0] != '/') {
		pw = getpwuid(getuid());
		home = pw ? pw->pw_dir : NULL;
	}
	v->workspace = b->workspace;
	v->pwd = b->pwd;
	v->home = home && realpath(home, b->home) ? b->home : NULL;
	return 0;
}

static int load_policy(struct run *r, struct err *err)
{
	const struct options *o = r->opt;
	struct policy_additions add = {
	    .binds = o->binds,
	    .n_binds = o->n_binds,
	    .protect = o->protect,
	    .n_protect = o->n_protect,
	    .setenv = o->setenv,
	    .n_setenv = o->n_setenv,
	    .cwd = o->cwd,
	    .ports = o->ports,
	    .n_ports = o->n_ports,
	};
	cleanup_free char *file = NULL, *eff = NULL;
	unsigned char digest[SHA256_DIGEST_LEN];
	size_t len = 0, eff_len = 0;
	struct vars_buf vb;
	struct policy_vars vars;
	int rc;

	r->policy_label = o->policy_path ? o->policy_path : "(built-in agent policy)";
	rc = read_policy(o->policy_path, &file, &len, err);
	if (rc < 0)
		return rc;
	rc = make_vars(o, &vb, &vars, err);
	if (rc < 0)
		return rc;
	rc = policy_amend(file, len, &add, &eff, &eff_len, err);
	if (rc >= 0)
		rc = policy_load_buffer(eff, eff_len, &vars, &r->policy, err);
	if (rc < 0)
		return err_wrap(err, "policy %s", r->policy_label);
	/* Without additions the effective text is the file's, byte for byte,
	 * and its digest is already computed by the loader. */
	if (eff_len == len && memcmp(eff, file, len) == 0) {
		memcpy(r->file_sha256, r->policy->sha256, sizeof(r->file_sha256));
	} else {
		sha256(file, len, digest);
		sha256_hex(digest, r->file_sha256);
	}
	if (o->has_ttl)
		r->policy->ttl_ms = o->ttl_ms;
	return 0;
}

/* The record must be out of the sandbox's reach: refuse a path inside a
 * writable bind, where the workload could replace it. */
static int open_record(const struct run *r, struct err *err)
{
	char dir[PATH_MAX], real[PATH_MAX];
	const char *path = r->opt->record_path;
	const struct mount_op *op;
	char *slash;
	long i;
	int fd;

	if (snprintf(dir, sizeof(dir), "%s", path) >= (int)sizeof(dir))
		return err_set(err, ENAMETOOLONG, "--record %s: path too long", path);
	slash = strrchr(dir, '/');
	if (slash)
		*slash = '\0';
	if (!realpath(slash ? (dir[0] ? dir : "/") : ".", real))
		return err_sys(err, errno, "--record %s", path);
	i = mounts_exposing_bind(&r->plan, real, MOUNTS_EXPOSE_WRITABLE);
	if (i >= 0) {
		op = &r->plan.ops[i];
		return err_set(err, EPERM,
			       "--record %s: inside the writable bind %s (%s); the sandbox "
			       "could tamper with it",
			       path, op->source, op->what);
	}
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0644);
	if (fd < 0)
		return err_sys(err, errno, "--record %s", path);
	return fd;
}

/* Register the session. The registry must be out of the sandbox's sight
 * entirely, not just out of its writable binds: it holds every session's
 * control socket, and connect(2) to a socket only needs write permission on
 * the socket inode, which a read-only mount does not take away (checked on
 * Linux 6.x). A bind below the registry would show one session's entry. */
static int open_session(struct run *r, struct session *s, struct err *err)
{
	struct registry reg;
	const struct mount_op *op;
	long i;
	int rc;

	rc = session_registry_open(&reg, true, err);
	if (rc < 0)
		return rc;
	i = mounts_exposing_bind(&r->plan, reg.path, MOUNTS_EXPOSE_BELOW);
	if (i >= 0) {
		op = &r->plan.ops[i];
		rc = err_set(err, EPERM,
			     "session registry %s: the sandbox would see it through the bind %s "
			     "(%s); set XDG_RUNTIME_DIR to a private directory elsewhere",
			     reg.path, op->source, op->what);
		session_registry_close(&reg);
		return rc;
	}
	rc = session_create(s, &reg, r->opt->name, r->opt->detach, r->policy->sha256, err);
	if (rc < 0)
		return rc;
	r->session = s;
	if (!r->opt->detach)
		return 0;
	/* Errors until the workload has started are still the caller's. */
	r->caller_err = fcntl(2, F_DUPFD_CLOEXEC, 3);
	if (r->caller_err < 0)
		return err_sys(err, errno, "dup stderr");
	return session_open_output(s, err);
}

/* Where the final messages go: a detached run that never started still
 * reports to the caller's terminal; otherwise stderr (for a detached run,
 * the session's stderr file). */
static FILE *message_stream(struct run *r)
{
	FILE *f;
	int fd;

	if (r->caller_err < 0)
		return stderr;
	fd = fcntl(r->caller_err, F_DUPFD_CLOEXEC, 3);
	f = fd >= 0 ? fdopen(fd, "w") : NULL;
	if (!f && fd >= 0)
		close(fd);
	return f ? f : stderr;
}

static void run_free(struct run *r)
{
	ports_stop(r);
	seccomp_info_free(&r->seccomp_info);
	landlock_info_free(&r->landlock);
	policy_free(r->policy);
	mounts_plan_free(&r->plan);
	env_free(r->env);
	free(r->killed);
	free(r->survivors);
	if (r->init_fd >= 0)
		close(r->init_fd);
	if (r->ctl >= 0)
		close(r->ctl);
	if (r->pidfd >= 0)
		close(r->pidfd);
}

static void block_forwarded(void)
{
	sigset_t set;

	sigemptyset(&set);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGHUP);
	sigaddset(&set, SIGQUIT);
	sigaddset(&set, SIGUSR1);
	sigaddset(&set, SIGUSR2);
	sigprocmask(SIG_BLOCK, &set, NULL);
}

/* Everything up to the start; nothing of the sandbox exists on failure. */
static int prepare(struct run *r, int *record_fd, struct err *err)
{
	int rc = load_policy(r, err);

	log_debug("policy loaded");
	if (rc < 0)
		return rc;
	r->namespaces = r->policy->namespaces;
	if (r->opt->weaken & WEAKEN_NO_PIDNS)
		r->namespaces &= ~POLICY_NS_PID;
	if (r->opt->weaken & WEAKEN_HOST_NET)
		r->namespaces &= ~POLICY_NS_NET;
	r->uid_out = getuid();
	r->gid_out = getgid();
	r->uid_in = r->policy->has_uid ? r->policy->uid : r->uid_out;
	r->gid_in = r->policy->has_gid ? r->policy->gid : r->gid_out;
	if (mounts_plan(r->policy,
			(r->opt->weaken & WEAKEN_RW_BINDS ? MOUNTS_RW_BINDS : 0) |
			    (r->namespaces & POLICY_NS_PID ? 0 : MOUNTS_HOST_PROC),
			&r->plan) < 0 ||
	    env_build(r->policy, environ, &r->env) < 0)
		return err_set(err, ENOMEM, "out of memory");
	log_debug("planned");
	rc = mounts_check_sources(&r->plan, err);
	if (rc < 0)
		return err_wrap(err, "policy %s", r->policy_label);
	if (r->opt->record_path && !r->opt->explain) {
		*record_fd = open_record(r, err);
		if (*record_fd < 0)
			return *record_fd;
	}
	log_debug("sources checked");
	/* The filter is built and checked here, before anything starts: a
	 * bad rule is a policy error, not a half-built sandbox. */
	if (!(r->opt->weaken & WEAKEN_NO_SECCOMP) && seccomp_default_applies(r->policy)) {
		/* The default profile was compiled at build time by the same
		 * code (tests/unit/test_seccomp_default.c checks they agree). */
		if (seccomp_default_info(&r->seccomp_info) < 0)
			return err_set(err, ENOMEM, "out of memory");
	} else if (!(r->opt->weaken & WEAKEN_NO_SECCOMP)) {
		scmp_filter_ctx ctx = NULL;

		rc = seccomp_build(r->policy, &ctx, &r->seccomp_info, err);
		if (rc < 0)
			return err_wrap(err, "policy %s", r->policy_label);
		/* The exported program is all the child needs. */
		if (ctx)
			seccomp_release(ctx);
	}
	if (!(r->opt->weaken & WEAKEN_NO_LANDLOCK)) {
		rc = landlock_prepare(r->policy, &r->plan, &r->landlock, err);
		if (rc < 0)
			return rc;
	} else {
		r->landlock.abi = landlock_abi(); /* recorded even when not applied */
	}
	rc = ports_check(r, err);
	if (rc < 0 || r->opt->explain)
		return rc;
	log_debug("filters built");
	/* Host ports before the sandbox: a busy one means nothing starts. */
	rc = ports_bind(r, err);
	if (rc < 0)
		return rc;
	rc = sandbox_prepare_init(r, err);
	log_debug("init copied");
	return rc;
}

static int run_main(int argc, char **argv)
{
	struct options o;
	struct run r = {.init_fd = -1,
			.ctl = -1,
			.pidfd = -1,
			.report_fd = -1,
			.caller_err = -1,
			.record_fd = -1,
			.ports = {.relay_pidfd = -1}};
	struct session session = {.dirfd = -1, .listen = -1, .reg = {.fd = -1}};
	struct err err = {0};
	cleanup_close int record_fd = -1;
	FILE *out;
	int rc, status;

	rc = options_parse(argc, argv, &o, &err);
	if (rc != 0) {
		if (rc < 0)
			fprintf(stderr, "paddock: %s\n", err.msg);
		options_free(&o);
		return rc > 0 ? 0 : EXIT_LAUNCHER;
	}
	r.opt = &o;
	log_debug("start");
	for (unsigned i = 0; i < WEAKEN_COUNT; i++)
		if (o.weaken & (1u << i))
			fprintf(stderr, "paddock: warning: --weaken %s: %s\n", weaken_name(1u << i),
				weaken_warning(1u << i));
	/* Detached: everything from here on happens in the supervisor, which
	 * reports back once the workload runs or the run is over. */
	if (o.detach && !o.explain) {
		rc = detach_start(&r, &status, &err);
		if (rc != 0) {
			if (rc < 0)
				fprintf(stderr, "paddock: %s\n", err.msg);
			options_free(&o);
			return rc < 0 ? EXIT_LAUNCHER : status;
		}
	}
	rc = prepare(&r, &record_fd, &err);
	log_debug("prepared");
	if (rc >= 0 && o.explain) {
		explain_print(&r, stdout);
		run_free(&r);
		options_free(&o);
		return 0;
	}
	if (rc >= 0) {
		r.record_fd = record_fd;
		services_init(&r);
	}
	/* Leased services outlive the main command: the caller gets its
	 * status at the main command's end from a supervisor that goes on. */
	if (rc >= 0 && !o.detach && services_leased(r.policy)) {
		rc = retain_start(&r, &status, &err);
		if (rc > 0) {
			run_free(&r);
			options_free(&o);
			return status;
		}
	}
	if (rc >= 0)
		rc = open_session(&r, &session, &err);
	log_debug("session registered");
	if (rc >= 0) {
		block_forwarded();
		rc = sandbox_start(&r, &err);
		if (rc >= 0)
			rc = sandbox_protect(&r, &err);
		log_debug("protected paths prepared");
		if (rc >= 0)
			rc = ports_start(&r, &err);
		if (rc < 0 && r.pidfd >= 0) {
			/* The child waits for "go"; it must not outlive us. */
			pidfd_send_signal(r.pidfd, SIGKILL, NULL, 0);
			waitid(P_PIDFD, (id_t)r.pidfd, &(siginfo_t){0}, WEXITED);
		}
	}
	log_debug("sandbox released");
	if (rc >= 0)
		rc = sandbox_supervise(&r, &err);
	log_debug("sandbox ended");
	/* The endpoints end with the session, before anyone learns it ended. */
	ports_stop(&r);
	if (rc < 0) {
		r.ending = ENDING_LAUNCHER_ERROR;
		r.status = EXIT_LAUNCHER;
		r.err = err;
		clock_gettime(CLOCK_REALTIME, &r.t_end);
	}
	if (r.pidfd >= 0)
		sandbox_find_survivors(&r);
	log_debug("survivors checked");
	r.placeholders_left = mounts_protect_release(&r.protect);
	log_debug("placeholders released");
	r.over = true;
	if (record_fd >= 0 && record_write(&r, record_fd, &err) < 0) {
		fprintf(stderr, "paddock: %s\n", err.msg);
		if (rc >= 0)
			r.status = EXIT_LAUNCHER;
	}
	/* The session's waiters learn the status now. A foreground run's
	 * entry goes (its caller has the status), and so does a detached
	 * run's that never started (its caller never got the id). */
	session_finish(&session, r.status, ending_name(r.ending),
		       (!o.detach && !r.retained) || r.report_fd >= 0);
	out = message_stream(&r);
	if (rc < 0)
		fprintf(out, "paddock: %s\n", r.err.msg);
	else if (r.child_error[0])
		fprintf(out, "paddock: %s\n", r.child_error);
	else if (r.exec_errno)
		fprintf(out, "paddock: %s: %s\n", o.argv[0], strerror(r.exec_errno));
	for (size_t i = 0; i < r.n_survivors; i++)
		fprintf(out, "paddock: warning: process %d (%s) outlived the sandbox\n",
			(int)r.survivors[i].pid, r.survivors[i].comm);
	if (out != stderr)
		fclose(out);
	status = r.status;
	detach_report_exit(&r, status);
	run_free(&r);
	options_free(&o);
	return status;
}

int main(int argc, char **argv)
{
	if (fds_ensure_stdio() < 0)
		return EXIT_LAUNCHER;
	if (argc < 2) {
		fputs("paddock: no command given (see paddock --help)\n", stderr);
		return EXIT_LAUNCHER;
	}
	if (strcmp(argv[1], "run") == 0)
		return run_main(argc - 1, argv + 1);
	if (strcmp(argv[1], "ps") == 0)
		return cmd_ps(argc - 1, argv + 1);
	if (strcmp(argv[1], "stop") == 0)
		return cmd_stop(argc - 1, argv + 1);
	if (strcmp(argv[1], "wait") == 0)
		return cmd_wait(argc - 1, argv + 1);
	if (strcmp(argv[1], "rm") == 0)
		return cmd_rm(argc - 1, argv + 1);
	if (strcmp(argv[1], "exec") == 0)
		return cmd_exec(argc - 1, argv + 1);
	if (strcmp(argv[1], "help") == 0 || strcmp(argv[1], "--help") == 0 ||
	    strcmp(argv[1], "-h") == 0) {
		fputs(usage, stdout);
		return 0;
	}
	if (strcmp(argv[1], "--version") == 0 || strcmp(argv[1], "-V") == 0) {
		printf("paddock %s (commit %s)\n", PADDOCK_VERSION, PADDOCK_COMMIT);
		return 0;
	}
	fprintf(stderr, "paddock: unknown command '%s' (see paddock --help)\n", argv[1]);
	return EXIT_LAUNCHER;
}
