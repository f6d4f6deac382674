/* paddock oci: the container's monitor, its hooks, and exec.
 *
 * The monitor is the process create forks and leaves behind: paddock's
 * supervisor for the container (supervisor_run(), the same code as
 * paddock run), with a call between the sandbox's clone and its release
 * (struct options.before_go) where the create/start split happens: the
 * namespaces exist, the id maps are written, the hooks that want them
 * (prestart, createRuntime) run, and the child waits for start. Whoever
 * reaps the monitor (the shim, conmon: subreapers) gets the container's
 * exit status; its child, the sandbox, dies with it (PR_SET_PDEATHSIG). */
#include "launcher.h"
#include "oci_cli.h"

#include <fcntl.h>
#include <sched.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/pidfd.h>
#include <sys/resource.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/ioctl.h>
#include <sys/un.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "../include/cleanup.h"
#include "../include/exitcodes.h"

struct gate_arg {
	const struct oci_ctx *c;
	const struct oci_config *cfg;
	const char *bundle;
	const char *record;
	int ready_fd;
	int stderr_fd;
};

static pid_t spawn_hook(const struct oci_hook *h, int in)
{
	pid_t pid = fork();

	if (pid == 0) {
		if (dup2(in, 0) < 0)
			_exit(127);
		execve(h->path, h->args, h->env);
		_exit(127);
	}
	return pid;
}

int oci_hooks_run(const struct oci_config *cfg, enum oci_hook_kind kind, const char *state,
		  struct err *err)
{
	static const char *const names[] = {"prestart", "createRuntime", "poststart", "poststop"};

	for (size_t i = 0; i < cfg->n_hooks[kind]; i++) {
		const struct oci_hook *h = &cfg->hooks[kind][i];
		cleanup_close int pidfd = -1;
		siginfo_t si = {0};
		int p[2], r;
		pid_t pid;

		if (pipe2(p, O_CLOEXEC) < 0)
			return err_sys(err, errno, "hooks.%s[%zu]: pipe", names[kind], i);
		pid = spawn_hook(h, p[0]);
		close(p[0]);
		if (pid < 0) {
			close(p[1]);
			return err_sys(err, errno, "hooks.%s[%zu]: fork", names[kind], i);
		}
		/* The state document on its stdin (runtime-spec "Hooks"); a
		 * hook that does not read it gets EPIPE here, which is fine. */
		signal(SIGPIPE, SIG_IGN);
		(void)!write(p[1], state, strlen(state));
		close(p[1]);
		pidfd = pidfd_open(pid, 0);
		if (pidfd >= 0 && h->timeout_s) {
			struct pollfd pf = {.fd = pidfd, .events = POLLIN};

			if (poll(&pf, 1, h->timeout_s * 1000) == 0) {
				pidfd_send_signal(pidfd, SIGKILL, NULL, 0);
				waitid(P_PIDFD, (id_t)pidfd, &si, WEXITED);
				return err_set(err, ETIMEDOUT,
					       "hooks.%s[%zu] %s: timed out after %ds", names[kind],
					       i, h->path, h->timeout_s);
			}
		}
		r = pidfd >= 0 ? waitid(P_PIDFD, (id_t)pidfd, &si, WEXITED)
			       : waitid(P_PID, (id_t)pid, &si, WEXITED);
		if (r < 0)
			return err_sys(err, errno, "hooks.%s[%zu]: wait", names[kind], i);
		if (si.si_code != CLD_EXITED || si.si_status != 0)
			return err_set(err, EIO, "hooks.%s[%zu] %s: %s %d", names[kind], i, h->path,
				       si.si_code == CLD_EXITED ? "exited with status"
								: "killed by signal",
				       si.si_status);
	}
	return 0;
}

/* net.* sysctls, written from a child that joined the sandbox's network
 * namespace: /proc/sys/net answers for the writer's namespace. The
 * monitor may (host root, or the user namespace's owner). */
static int set_sysctls(const struct oci_config *cfg, pid_t pid, struct err *err)
{
	cleanup_close int pidfd = -1;
	siginfo_t si = {0};
	pid_t child;

	if (!cfg->n_sysctl)
		return 0;
	pidfd = pidfd_open(pid, 0);
	if (pidfd < 0)
		return err_sys(err, errno, "linux.sysctl: pidfd_open");
	child = fork();
	if (child < 0)
		return err_sys(err, errno, "linux.sysctl: fork");
	if (child == 0) {
		if (setns(pidfd, CLONE_NEWNET) < 0)
			_exit(1);
		for (size_t i = 0; i < cfg->n_sysctl; i++) {
			char path[512];
			const char *eq = strchr(cfg->sysctl[i], '=');
			int fd;

			snprintf(path, sizeof(path), "/proc/sys/%.*s", (int)(eq - cfg->sysctl[i]),
				 cfg->sysctl[i]);
			for (char *q = path + 10; *q; q++)
				if (*q == '.')
					*q = '/';
			fd = open(path, O_WRONLY | O_CLOEXEC);
			if (fd < 0 || write(fd, eq + 1, strlen(eq + 1)) < 0)
				_exit(10 + (int)i < 250 ? 10 + (int)i : 250);
			close(fd);
		}
		_exit(0);
	}
	if (waitid(P_PID, (id_t)child, &si, WEXITED) < 0 || si.si_code != CLD_EXITED ||
	    si.si_status != 0) {
		if (si.si_status >= 10 && (size_t)(si.si_status - 10) < cfg->n_sysctl)
			return err_set(err, EPERM, "linux.sysctl: %s could not be set",
				       cfg->sysctl[si.si_status - 10]);
		return err_set(err, EPERM,
			       "linux.sysctl: the network namespace could not be "
			       "joined");
	}
	return 0;
}

/* What the state's annotations add to config.json's: the record, the
 * session, the effective policy's digest and what was narrowed. */
static char *annotations(const struct gate_arg *g, const char *session)
{
	cJSON *a = cJSON_Parse(g->cfg->annotations ? g->cfg->annotations : "{}");
	char narrowed[8192] = "", req[96], got[96], *out;
	size_t n = 0;

	if (!a)
		return NULL;
	for (size_t i = 0; i < g->cfg->n_notes && n < sizeof(narrowed); i++)
		n += (size_t)snprintf(narrowed + n, sizeof(narrowed) - n, "%s%s", i ? "; " : "",
				      g->cfg->notes[i]);
	if (g->cfg->weaken && n < sizeof(narrowed))
		n += (size_t)snprintf(narrowed + n, sizeof(narrowed) - n,
				      "%s--weaken, org.paddock.weaken: %s (weakened on purpose, in "
				      "the record)",
				      n ? "; " : "", g->cfg->weaken_names);
	/* Joined as asked, not narrowed; which namespace it was is its
	 * inode (the path could name another one by now). */
	for (size_t i = 0; i < g->cfg->n_join && n < sizeof(narrowed); i++)
		n += (size_t)snprintf(narrowed + n, sizeof(narrowed) - n,
				      "%slinux.namespaces[%zu]: %s namespace joined (inode %lu)",
				      n ? "; " : "", g->cfg->join[i].index, g->cfg->join[i].type,
				      g->cfg->join[i].ino);
	cJSON_AddStringToObject(a, "org.paddock.record", g->record);
	cJSON_AddStringToObject(a, "org.paddock.session", session);
	/* What was asked (config.json's bytes) and what paddock was given
	 * (the policy it made of them, ROOT/ID/policy.json), by digest. */
	snprintf(req, sizeof(req), "config.json sha256:%s", g->cfg->config_sha256);
	snprintf(got, sizeof(got), "policy.json sha256:%s", g->cfg->policy_sha256);
	cJSON_AddStringToObject(a, "org.paddock.requested", req);
	cJSON_AddStringToObject(a, "org.paddock.effective", got);
	cJSON_AddStringToObject(a, "org.paddock.achieved",
				n ? narrowed : "as requested (no field narrowed)");
	out = cJSON_PrintUnformatted(a);
	cJSON_Delete(a);
	return out;
}

static void now_rfc3339(char *buf, size_t size)
{
	struct timespec t;
	struct tm tm;
	char s[32];

	clock_gettime(CLOCK_REALTIME, &t);
	gmtime_r(&t.tv_sec, &tm);
	strftime(s, sizeof(s), "%Y-%m-%dT%H:%M:%S", &tm);
	snprintf(buf, size, "%s.%09ldZ", s, t.tv_nsec);
}

/* Wait for start (a byte on exec.fifo), or a signal that ends the
 * container before it ran. */
static int wait_start(int fifo, struct err *err)
{
	sigset_t set;
	cleanup_close int sfd = -1;

	sigemptyset(&set);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGHUP);
	sigaddset(&set, SIGQUIT);
	sfd = signalfd(-1, &set, SFD_CLOEXEC);
	if (sfd < 0)
		return err_sys(err, errno, "signalfd");
	for (;;) {
		struct pollfd pf[2] = {{.fd = fifo, .events = POLLIN},
				       {.fd = sfd, .events = POLLIN}};
		struct signalfd_siginfo si;
		char b;
		ssize_t n;

		if (poll(pf, 2, -1) < 0) {
			if (errno == EINTR)
				continue;
			return err_sys(err, errno, "poll");
		}
		if (pf[1].revents & POLLIN && read(sfd, &si, sizeof(si)) == sizeof(si))
			return err_set(err, EINTR,
				       "signal %u before start: the container did not run",
				       si.ssi_signo);
		if (!(pf[0].revents & (POLLIN | POLLHUP)))
			continue;
		n = read(fifo, &b, 1);
		if (n == 1)
			return 0;
		/* A writer came and went without a byte: POLLHUP until the
		 * next one, so wait for that one without spinning. */
		if (n == 0) {
			struct pollfd w = {.fd = sfd, .events = POLLIN};

			if (poll(&w, 1, 20) > 0)
				continue;
		}
	}
}

static int gate(const char *session, int pid, void *arg, struct err *err)
{
	struct gate_arg *g = arg;
	const cJSON *user = cJSON_GetObjectItemCaseSensitive(g->cfg->policy, "user");
	struct oci_state st = {.pid = getpid(), .init = pid};
	cleanup_free char *ann = NULL, *state = NULL;
	cleanup_close int fifo = -1;
	char path[4200];
	int r;

	snprintf(st.id, sizeof(st.id), "%s", g->c->id);
	snprintf(st.bundle, sizeof(st.bundle), "%s", g->bundle);
	snprintf(st.session, sizeof(st.session), "%s", session);
	snprintf(st.record, sizeof(st.record), "%s", g->record);
	now_rfc3339(st.created, sizeof(st.created));
	st.start = oci_start_time(st.pid);
	st.init_start = oci_start_time(pid);
	st.uid = (uint32_t)cJSON_GetNumberValue(cJSON_GetObjectItemCaseSensitive(user, "uid"));
	st.gid = (uint32_t)cJSON_GetNumberValue(cJSON_GetObjectItemCaseSensitive(user, "gid"));
	if (g->cfg->has_oom) {
		FILE *f;

		snprintf(path, sizeof(path), "/proc/%d/oom_score_adj", pid);
		f = fopen(path, "we");
		if (!f || fprintf(f, "%d", g->cfg->oom_score_adj) < 0 || fclose(f) != 0)
			return err_sys(err, errno, "process.oomScoreAdj");
	}
	if ((r = set_sysctls(g->cfg, pid, err)) < 0)
		return r;
	if (!(ann = annotations(g, session)))
		return err_set(err, ENOMEM, "out of memory");
	if ((r = oci_state_write(g->c, &st, ann, err)) < 0)
		return r;
	/* The hooks see the sandbox's PID 1 (its namespaces, e.g. the
	 * network namespace an engine's prestart hook configures). */
	if (!(state = oci_state_json(g->c, &st, OCI_CREATED, pid)))
		return err_set(err, ENOMEM, "out of memory");
	if ((r = oci_hooks_run(g->cfg, OCI_HOOK_PRESTART, state, err)) < 0 ||
	    (r = oci_hooks_run(g->cfg, OCI_HOOK_CREATE_RUNTIME, state, err)) < 0)
		return r;
	snprintf(path, sizeof(path), "%s/exec.fifo", g->c->dir);
	fifo = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	if (fifo < 0)
		return err_sys(err, errno, "%s", path);
	/* The container's stderr from here on (the relay writes to fd 2). */
	if (dup2(g->stderr_fd, 2) < 0)
		return err_sys(err, errno, "stderr");
	close(g->stderr_fd);
	g->stderr_fd = -1;
	if (write(g->ready_fd, "ok", 2) != 2)
		return err_sys(err, errno, "create went away");
	close(g->ready_fd);
	g->ready_fd = -1;
	return wait_start(fifo, err);
}

/* The rootfs at view, in a mount namespace of the monitor's own (the
 * sandbox's is made from it): the engine's directories above the rootfs
 * are 0700 (Docker's data root), which the workload's unprivileged uid
 * cannot pass, and which paddock will not widen on the host. */
static int view_rootfs(const char *root, const char *view, struct err *err)
{
	if (unshare(CLONE_NEWNS) < 0)
		return err_sys(err, errno, "unshare(CLONE_NEWNS)");
	/* Nothing of ours propagates back to the host's namespace. */
	if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0)
		return err_sys(err, errno, "make / private");
	if ((mkdir(OCI_VIEW_DIR, 0711) < 0 && errno != EEXIST) ||
	    (mkdir(view, 0700) < 0 && errno != EEXIST))
		return err_sys(err, errno, "%s", view);
	if (mount(root, view, NULL, MS_BIND | MS_REC, NULL) < 0)
		return err_sys(err, errno, "bind %s at %s", root, view);
	return 0;
}

/* Is the top directory of target one of the rootfs' own (bound from it),
 * rather than a mount of config.json or paddock's? */
static bool in_rootfs(const cJSON *mounts, const char *target, const char *root)
{
	const char *slash = strchr(target + 1, '/');
	const cJSON *m;

	cJSON_ArrayForEach(m, mounts) {
		const char *t = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(m, "target"));
		const char *src =
		    cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(m, "source"));
		size_t n = strlen(root);

		if (!t || strlen(t) != (size_t)(slash - target) ||
		    strncmp(t, target, (size_t)(slash - target)) != 0)
			continue;
		return src && strncmp(src, root, n) == 0 && src[n] == '/';
	}
	return false;
}

/* The mount points of config.json's mounts below the rootfs' own
 * directories (/etc/hosts in an image without one), made in the rootfs as
 * runc makes them: paddock binds the rootfs' directories (read-only for a
 * root caller) and cannot make them inside. Each component is opened
 * without following a symlink, so an image's /etc -> /somewhere cannot
 * send this anywhere but into the rootfs: such a path is refused. */
static int make_mountpoints(const struct oci_config *cfg, struct err *err)
{
	const cJSON *mounts = cJSON_GetObjectItemCaseSensitive(cfg->policy, "mounts"), *m;
	const char *view = cfg->root_view ? cfg->root_view : cfg->root;

	cJSON_ArrayForEach(m, mounts) {
		const char *t = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(m, "target"));
		const char *type =
		    cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(m, "type"));
		const char *src =
		    cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(m, "source"));
		cleanup_close int dir = -1;
		char buf[4096], *comp, *next;
		struct stat st;
		bool file;

		if (!t || !type || !strchr(t + 1, '/') || !in_rootfs(mounts, t, view))
			continue;
		file =
		    strcmp(type, "bind") == 0 && src && stat(src, &st) == 0 && !S_ISDIR(st.st_mode);
		snprintf(buf, sizeof(buf), "%s", t + 1);
		dir = open(view, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		if (dir < 0)
			return err_sys(err, errno, "%s", view);
		for (comp = buf; comp; comp = next) {
			int fd;

			next = strchr(comp, '/');
			if (next)
				*next++ = '\0';
			if (!*comp)
				continue;
			if (!next && file) {
				fd = openat(dir, comp, O_WRONLY | O_CREAT | O_NOFOLLOW | O_CLOEXEC,
					    0644);
				if (fd < 0 && errno != EISDIR)
					return err_sys(err, errno, "mount point %s in the rootfs",
						       t);
				if (fd >= 0)
					close(fd);
				break;
			}
			if (mkdirat(dir, comp, 0755) < 0 && errno != EEXIST)
				return err_sys(err, errno, "mount point %s in the rootfs", t);
			fd = openat(dir, comp, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
			if (fd < 0)
				return err_sys(
				    err, errno == ELOOP ? ELOOP : errno,
				    "mount point %s in the rootfs (a symlink on the way?)", t);
			close(dir);
			dir = fd;
		}
	}
	return 0;
}

/* process.rlimits above our hard limit: a root monitor raises its own
 * (CAP_SYS_RESOURCE), as runc would, so that paddock can give the workload
 * what it asks; otherwise paddock refuses it with its own message. */
static void raise_hard_limits(const struct oci_config *cfg)
{
	static const struct {
		const char *name;
		int resource;
	} names[] = {{"nproc", RLIMIT_NPROC},
		     {"nofile", RLIMIT_NOFILE},
		     {"fsize", RLIMIT_FSIZE},
		     {"as", RLIMIT_AS},
		     {"core", RLIMIT_CORE}};
	const cJSON *rl = cJSON_GetObjectItemCaseSensitive(
	    cJSON_GetObjectItemCaseSensitive(cfg->policy, "limits"), "rlimits");

	if (!supervisor_host_root())
		return;
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		const cJSON *v = cJSON_GetObjectItemCaseSensitive(rl, names[i].name);
		struct rlimit cur;

		if (!cJSON_IsNumber(v) || getrlimit(names[i].resource, &cur) < 0 ||
		    (rlim_t)v->valuedouble <= cur.rlim_max)
			continue;
		cur.rlim_max = (rlim_t)v->valuedouble;
		(void)setrlimit(names[i].resource, &cur);
	}
}

static int take_console(const struct oci_ctx *c, const struct oci_config *cfg, int *stderr_fd,
			struct err *err);

void oci_monitor(const struct oci_ctx *c, struct oci_config *cfg, const char *bundle, int ready_fd,
		 int stderr_fd)
{
	struct options o = {0};
	char record[4200], path[4200];
	struct gate_arg g = {c, cfg, bundle, record, ready_fd, stderr_fd};
	struct err err = {0};
	FILE *f;
	int r;

	/* Out of the caller's session: a terminal that closes must not
	 * hang up the container. */
	(void)setsid();
	snprintf(path, sizeof(path), "%s/records", c->root);
	if ((mkdir(path, 0700) < 0 && errno != EEXIST) ||
	    snprintf(record, sizeof(record), "%s/%s.json", path, c->id) >= (int)sizeof(record))
		_exit(oci_fail(c, "%s: %s", path, strerror(errno)));
	(void)unlink(record);
	snprintf(path, sizeof(path), "%s/policy.json", c->dir);
	if (!(f = fopen(path, "we")) || fputs(cfg->policy_json, f) < 0 || fclose(f) != 0)
		_exit(oci_fail(c, "%s: %s", path, strerror(errno)));
	snprintf(path, sizeof(path), "%s/exec.fifo", c->dir);
	if (mkfifo(path, 0600) < 0 && errno != EEXIST)
		_exit(oci_fail(c, "%s: %s", path, strerror(errno)));
	if ((cfg->root_view && view_rootfs(cfg->root, cfg->root_view, &err) < 0) ||
	    make_mountpoints(cfg, &err) < 0 ||
	    (cfg->terminal && take_console(c, cfg, &g.stderr_fd, &err) < 0)) {
		r = oci_fail(c, "%s", err.msg);
		goto out;
	}
	raise_hard_limits(cfg);
	/* The workload inherits it through the sandbox's clone and init. */
	if (cfg->has_umask)
		umask(cfg->umask);
	o.builtin_policy = cfg->policy_json;
	o.builtin_policy_len = strlen(cfg->policy_json);
	o.workspace = bundle;
	o.record_path = record;
	o.no_config = true;
	o.tty = cfg->terminal ? OPT_TTY_YES : OPT_TTY_NO;
	o.argv = cfg->argv;
	o.extra_bpf = cfg->bpf;
	o.extra_bpf_len = cfg->bpf_len;
	o.before_go = gate;
	o.before_go_arg = &g;
	o.join = cfg->join;
	o.n_join = cfg->n_join;
	o.weaken = cfg->weaken;
	o.proc_masked = cfg->proc_masked;
	o.n_proc_masked = cfg->n_proc_masked;
	o.proc_readonly = cfg->proc_readonly;
	o.n_proc_readonly = cfg->n_proc_readonly;
	r = supervisor_run(&o);
out:
	/* The view's directory on the host: empty there (the bind is in our
	 * namespace only), removed once the bind is gone. */
	if (cfg->root_view) {
		(void)umount2(cfg->root_view, MNT_DETACH);
		(void)rmdir(cfg->root_view);
	}
	_exit(r);
}

int oci_console(const char *sock, unsigned rows, unsigned cols, struct err *err)
{
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	cleanup_close int m = -1, s = -1, fd = -1;
	union {
		char buf[CMSG_SPACE(sizeof(int))];
		struct cmsghdr align;
	} u;
	char name[64];
	struct iovec iov = {.iov_base = name};
	struct msghdr mh = {.msg_iov = &iov,
			    .msg_iovlen = 1,
			    .msg_control = u.buf,
			    .msg_controllen = sizeof(u.buf)};
	struct cmsghdr *cm;

	m = posix_openpt(O_RDWR | O_NOCTTY | O_CLOEXEC);
	if (m < 0 || grantpt(m) < 0 || unlockpt(m) < 0 || ptsname_r(m, name, sizeof(name)) != 0)
		return err_sys(err, errno, "a pty for the console");
	s = open(name, O_RDWR | O_NOCTTY | O_CLOEXEC);
	if (s < 0)
		return err_sys(err, errno, "%s", name);
	if (rows && cols)
		(void)ioctl(s, TIOCSWINSZ,
			    &(struct winsize){.ws_row = (unsigned short)rows,
					      .ws_col = (unsigned short)cols});
	if (strlen(sock) >= sizeof(sa.sun_path))
		return err_set(err, ENAMETOOLONG, "--console-socket %s: too long", sock);
	strcpy(sa.sun_path, sock);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0 || connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0)
		return err_sys(err, errno, "--console-socket %s", sock);
	memset(u.buf, 0, sizeof(u.buf));
	iov.iov_len = strlen(name);
	cm = CMSG_FIRSTHDR(&mh);
	cm->cmsg_level = SOL_SOCKET;
	cm->cmsg_type = SCM_RIGHTS;
	cm->cmsg_len = CMSG_LEN(sizeof(int));
	memcpy(CMSG_DATA(cm), &m, sizeof(int));
	if (sendmsg(fd, &mh, MSG_NOSIGNAL) < 0)
		return err_sys(err, errno, "--console-socket %s: send the pty", sock);
	return take_fd(&s);
}

/* The console's slave as our stdin and stdout (fd 2 follows at the gate,
 * through stderr_fd) and our controlling terminal: its size changes come
 * to us as SIGWINCH, which the supervisor passes on. */
static int take_console(const struct oci_ctx *c, const struct oci_config *cfg, int *stderr_fd,
			struct err *err)
{
	int s = oci_console(c->console, cfg->rows, cfg->cols, err);

	if (s < 0)
		return s;
	if (dup2(s, 0) < 0 || dup2(s, 1) < 0 || ioctl(0, TIOCSCTTY, 0) < 0) {
		close(s);
		return err_sys(err, errno, "the console as stdio");
	}
	close(*stderr_fd);
	*stderr_fd = s;
	return 0;
}

/* ----------------------------------------------------------------- exec */

/* Are rlimits (process.json's) those of the container's config.json? */
static bool same_rlimits(const struct oci_state *st, const cJSON *rlimits)
{
	cleanup_free char *text = NULL;
	char path[4200];
	bool same = false;
	size_t len;
	cJSON *cfg;

	snprintf(path, sizeof(path), "%s/config.json", st->bundle);
	if (evidence_slurp(path, OCI_CONFIG_MAX_BYTES, &text, &len) < 0)
		return false;
	cfg = cJSON_ParseWithLength(text, len);
	same = cJSON_Compare(cJSON_GetObjectItemCaseSensitive(
				 cJSON_GetObjectItemCaseSensitive(cfg, "process"), "rlimits"),
			     rlimits, true);
	cJSON_Delete(cfg);
	return same;
}

/* process.json of exec into paddock exec's arguments (av, n). */
static int exec_args(const struct oci_ctx *c, const struct oci_state *st, const char *text,
		     size_t len, char ***av, size_t *n, bool *terminal, unsigned *rows,
		     unsigned *cols)
{
	static const char *const keys[] = {"terminal",
					   "consoleSize",
					   "user",
					   "args",
					   "env",
					   "cwd",
					   "capabilities",
					   "noNewPrivileges",
					   "apparmorProfile",
					   "oomScoreAdj",
					   "selinuxLabel",
					   "rlimits",
					   NULL};
	cJSON *p = cJSON_ParseWithLength(text, len), *it, *user, *args, *env;
	const char *cwd;
	size_t cap, k = 0;
	int rc = 0;

	if (!cJSON_IsObject(p))
		return cJSON_Delete(p), oci_fail(c, "exec --process: not a JSON object");
	cJSON_ArrayForEach(it, p) {
		size_t i;

		for (i = 0; keys[i] && strcmp(keys[i], it->string) != 0; i++)
			;
		if (!keys[i])
			rc = oci_fail(c, "exec --process: process.%s: not supported by paddock oci",
				      it->string);
	}
	user = cJSON_GetObjectItemCaseSensitive(p, "user");
	args = cJSON_GetObjectItemCaseSensitive(p, "args");
	env = cJSON_GetObjectItemCaseSensitive(p, "env");
	cwd = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(p, "cwd"));
	*terminal = *terminal || cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(p, "terminal"));
	if ((it = cJSON_GetObjectItemCaseSensitive(p, "consoleSize"))) {
		*rows =
		    (unsigned)cJSON_GetNumberValue(cJSON_GetObjectItemCaseSensitive(it, "height"));
		*cols =
		    (unsigned)cJSON_GetNumberValue(cJSON_GetObjectItemCaseSensitive(it, "width"));
	}
	/* paddock exec's command gets the container's limits: the same
	 * ones asked again (Podman does) are honoured, others refused. */
	if (!rc && (it = cJSON_GetObjectItemCaseSensitive(p, "rlimits")) &&
	    cJSON_GetArraySize(it) > 0 && !same_rlimits(st, it))
		rc = oci_fail(c, "exec --process: process.rlimits: only the container's own");
	/* paddock exec runs as the container's process does: one id is
	 * mapped in its user namespace. */
	if (!rc && user &&
	    (cJSON_GetNumberValue(cJSON_GetObjectItemCaseSensitive(user, "uid")) != st->uid ||
	     cJSON_GetNumberValue(cJSON_GetObjectItemCaseSensitive(user, "gid")) != st->gid))
		rc = oci_fail(c, "exec --process: process.user: only the container's uid %u gid %u",
			      st->uid, st->gid);
	if (!rc && (!cJSON_IsArray(args) || cJSON_GetArraySize(args) == 0))
		rc = oci_fail(c, "exec --process: process.args: a non-empty array of strings");
	if (!rc && cwd && cwd[0] != '/')
		rc = oci_fail(c, "exec --process: process.cwd: an absolute path");
	cap = 8 + 2 * (size_t)cJSON_GetArraySize(env) + (size_t)cJSON_GetArraySize(args);
	if (!rc && !(*av = calloc(cap, sizeof(char *))))
		rc = oci_fail(c, "out of memory");
	if (rc) {
		cJSON_Delete(p);
		return rc;
	}
	(*av)[k++] = strdup("exec");
	(*av)[k++] = strdup(*terminal ? "--tty" : "--no-tty");
	if (cwd) {
		(*av)[k++] = strdup("--cwd");
		(*av)[k++] = strdup(cwd);
	}
	cJSON_ArrayForEach(it, env) {
		if (!cJSON_IsString(it) || !strchr(it->valuestring, '=')) {
			rc = oci_fail(c, "exec --process: process.env: NAME=VALUE strings");
			break;
		}
		(*av)[k++] = strdup("--setenv");
		(*av)[k++] = strdup(it->valuestring);
	}
	(*av)[k++] = strdup(st->session);
	(*av)[k++] = strdup("--");
	cJSON_ArrayForEach(it, args) {
		if (!cJSON_IsString(it)) {
			rc = oci_fail(c, "exec --process: process.args: strings only");
			break;
		}
		(*av)[k++] = strdup(it->valuestring);
	}
	cJSON_Delete(p);
	*n = k;
	for (size_t i = 0; i < k && !rc; i++)
		if (!(*av)[i])
			rc = oci_fail(c, "out of memory");
	return rc;
}

int oci_exec(const struct oci_ctx *c0, int argc, char **argv)
{
	struct oci_ctx c = *c0;
	const char *process = NULL, *pid_file = NULL, *id = NULL;
	cleanup_free char *text = NULL;
	bool detach = false, terminal = false, tty_flag = false;
	unsigned rows = 0, cols = 0;
	struct err err = {0};
	struct oci_state st;
	char **av = NULL;
	size_t len, n = 0;
	int r, slave = -1;

	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];

		if ((strcmp(a, "--process") == 0 || strcmp(a, "-p") == 0) && i + 1 < argc)
			process = argv[++i];
		else if (strcmp(a, "--pid-file") == 0 && i + 1 < argc)
			pid_file = argv[++i];
		else if (strcmp(a, "--detach") == 0 || strcmp(a, "-d") == 0)
			detach = true;
		else if (strcmp(a, "--console-socket") == 0 && i + 1 < argc)
			c.console = argv[++i];
		else if (strcmp(a, "--tty") == 0 || strcmp(a, "-t") == 0)
			tty_flag = true; /* runc's: the same as process.terminal */
		else if (a[0] == '-')
			return oci_fail(
			    &c, "exec %s: not supported by paddock oci (give --process)", a);
		else if (!id && i == argc - 1)
			id = a;
		else
			return oci_fail(&c, "exec: a command line after the id is not supported "
					    "(give --process)");
	}
	if (!id || !process)
		return oci_fail(&c,
				"exec: usage: exec --process FILE [--detach] [--pid-file F] ID");
	c.id = id;
	if (snprintf(c.dir, sizeof(c.dir), "%s/%s", c.root, id) >= (int)sizeof(c.dir))
		return oci_fail(&c, "--root %s: too long", c.root);
	r = oci_state_read(&c, &st);
	if (r == -ENOENT)
		return oci_fail(&c, "container \"%s\" does not exist", id);
	if (r < 0 || oci_status_of(&c, &st) != OCI_RUNNING)
		return oci_fail(&c, "container not running");
	if ((r = evidence_slurp(process, 1u << 20, &text, &len)) < 0)
		return oci_fail(&c, "exec --process %s: %s", process, strerror(-r));
	terminal = tty_flag;
	if ((r = exec_args(&c, &st, text, len, &av, &n, &terminal, &rows, &cols)) != 0)
		goto out;
	if (terminal != !!c.console) {
		r = oci_fail(&c, "%s",
			     c.console ? "exec --console-socket: process.terminal is false"
				       : "exec: process.terminal needs --console-socket");
		goto out;
	}
	/* The console's master goes to the engine before we return. */
	if (terminal && (slave = oci_console(c.console, rows, cols, &err)) < 0) {
		r = oci_fail(&c, "%s", err.msg);
		goto out;
	}
	if (detach || terminal) {
		pid_t pid = fork();

		if (pid < 0) {
			r = oci_fail(&c, "fork: %s", strerror(errno));
			goto out;
		}
		if (pid == 0) {
			(void)setsid();
			/* paddock exec -t relays its own terminal: the console. */
			if (terminal && (dup2(slave, 0) < 0 || dup2(slave, 1) < 0 ||
					 dup2(slave, 2) < 0 || ioctl(0, TIOCSCTTY, 0) < 0))
				_exit(oci_fail(&c, "the console as stdio: %s", strerror(errno)));
			_exit(cmd_exec((int)n, av));
		}
		if (slave >= 0)
			close(slave);
		if (!detach) {
			int status = 0;

			waitpid(pid, &status, 0);
			r = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
			goto out;
		}
		if (pid_file) {
			FILE *f = fopen(pid_file, "we");

			if (!f || fprintf(f, "%d", (int)pid) < 0 || fclose(f) != 0) {
				kill(pid, SIGKILL);
				r = oci_fail(&c, "--pid-file %s: %s", pid_file, strerror(errno));
				goto out;
			}
		}
		r = 0;
	} else {
		r = cmd_exec((int)n, av);
	}
out:
	for (size_t i = 0; av && i < n; i++)
		free(av[i]);
	free(av);
	return r;
}
