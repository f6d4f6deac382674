/* Running workloads: paddock as the unprivileged test user, docker as root,
 * and the fixture directories they work in (harness.h). */
#include "harness.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <grp.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "../../include/cleanup.h"
#include "../observers/fan.h"

void sleep_ms(int ms)
{
	struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};

	while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
		;
}

/* In the child: become the workload user. Order matters: supplementary
 * groups and gid while we still have CAP_SETGID, uid last (it drops every
 * capability). paddock is rootless; running it as root would test another
 * configuration than the one users get. */
static void child_exec_as(uid_t uid, gid_t gid, bool drop, char *const argv[], int out_fd,
			  int in_fd)
{
	if (in_fd >= 0)
		dup2(in_fd, 0);
	if (out_fd >= 0) {
		dup2(out_fd, 1);
		dup2(out_fd, 2);
	}
	if (chdir("/") < 0)
		_exit(125);
	if (drop && (setgroups(0, NULL) < 0 || setresgid(gid, gid, gid) < 0 ||
		     setresuid(uid, uid, uid) < 0))
		_exit(125);
	if (drop) {
		/* A clean environment like setpriv --reset-env: the registry
		 * falls back to /tmp/paddock-UID. */
		clearenv();
		setenv("PATH", "/usr/local/bin:/usr/bin:/bin", 1);
		setenv("HOME", "/nonexistent", 1);
		setenv("LANG", "C", 1);
	}
	execvp(argv[0], argv);
	_exit(errno == ENOENT ? 127 : 126);
}

static void child_exec(const struct eval_ctx *ctx, bool drop, char *const argv[], int out_fd,
		       int in_fd)
{
	child_exec_as(ctx->subj->workload_uid, ctx->subj->workload_gid, drop, argv, out_fd, in_fd);
}

static int wait_child(pid_t pid, int timeout_ms, int *status)
{
	cleanup_close int pfd = (int)syscall(SYS_pidfd_open, pid, 0);
	struct pollfd p = {.fd = pfd, .events = POLLIN};
	int ws;

	if (pfd >= 0 && poll(&p, 1, timeout_ms) == 0) {
		/* Timed out: our own child, by its pidfd. */
		syscall(SYS_pidfd_send_signal, pfd, SIGKILL, NULL, 0);
	}
	while (waitpid(pid, &ws, 0) < 0)
		if (errno != EINTR)
			return -errno;
	*status = WIFEXITED(ws) ? WEXITSTATUS(ws) : 128 + WTERMSIG(ws);
	return 0;
}

int run_argv(const struct eval_ctx *ctx, bool drop, char *const argv[], const char *out_path,
	     int timeout_ms, int *status)
{
	cleanup_close int fd = open(out_path ? out_path : "/dev/null",
				    O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
	cleanup_close int in = open("/dev/null", O_RDONLY | O_CLOEXEC);
	pid_t pid;

	if (fd < 0 || in < 0)
		return -errno;
	pid = fork();
	if (pid < 0)
		return -errno;
	if (pid == 0)
		child_exec(ctx, drop, argv, fd, in);
	return wait_child(pid, timeout_ms, status);
}

static int capture(const struct eval_ctx *ctx, bool drop, uid_t uid, gid_t gid, char *const argv[],
		   char *buf, size_t n, int timeout_ms, int *status)
{
	int p[2];
	size_t len = 0;
	pid_t pid;
	ssize_t k;
	int r;

	if (pipe2(p, O_CLOEXEC) < 0)
		return -errno;
	pid = fork();
	if (pid < 0) {
		r = -errno;
		close(p[0]);
		close(p[1]);
		return r;
	}
	if (pid == 0) {
		int in = open("/dev/null", O_RDONLY | O_CLOEXEC);
		int err = open("/dev/null", O_WRONLY | O_CLOEXEC);

		(void)ctx;
		dup2(p[1], 1);
		dup2(err, 2);
		child_exec_as(uid, gid, drop, argv, -1, in);
	}
	close(p[1]);
	while (len + 1 < n && (k = read(p[0], buf + len, n - 1 - len)) != 0) {
		if (k < 0 && errno == EINTR)
			continue;
		if (k < 0)
			break;
		len += (size_t)k;
	}
	close(p[0]);
	buf[len] = '\0';
	while (len && (buf[len - 1] == '\n' || buf[len - 1] == '\r'))
		buf[--len] = '\0';
	return wait_child(pid, timeout_ms, status);
}

int run_capture(const struct eval_ctx *ctx, bool drop, char *const argv[], char *buf, size_t n,
		int timeout_ms, int *status)
{
	return capture(ctx, drop, ctx->subj->workload_uid, ctx->subj->workload_gid, argv, buf, n,
		       timeout_ms, status);
}

int run_capture_as(const struct eval_ctx *ctx, uid_t uid, gid_t gid, char *const argv[], char *buf,
		   size_t n, int timeout_ms, int *status)
{
	return capture(ctx, true, uid, gid, argv, buf, n, timeout_ms, status);
}

int run_argv_as(const struct eval_ctx *ctx, uid_t uid, gid_t gid, char *const argv[],
		const char *out_path, int timeout_ms, int *status)
{
	cleanup_close int fd = open(out_path ? out_path : "/dev/null",
				    O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
	cleanup_close int in = open("/dev/null", O_RDONLY | O_CLOEXEC);
	pid_t pid;

	(void)ctx;
	if (fd < 0 || in < 0)
		return -errno;
	pid = fork();
	if (pid < 0)
		return -errno;
	if (pid == 0)
		child_exec_as(uid, gid, true, argv, fd, in);
	return wait_child(pid, timeout_ms, status);
}

void session_json_path(uid_t owner, const char *id, char *out, size_t n)
{
	/* The registry of a caller without XDG_RUNTIME_DIR (child_exec clears
	 * the environment): docs/sessions.md. */
	snprintf(out, n, "/tmp/paddock-%u/%s/session.json", (unsigned)owner, id);
}

void argv_add(struct argv_buf *a, const char *s)
{
	if (a->n + 1 < sizeof(a->v) / sizeof(a->v[0]))
		a->v[a->n++] = (char *)s;
	a->v[a->n] = NULL;
}

void argv_docker_run(struct argv_buf *a)
{
	static const char *const w[] = {"docker", "run", "--rm", "--network", "none"};

	for (size_t i = 0; i < sizeof(w) / sizeof(w[0]); i++)
		argv_add(a, w[i]);
}

void argv_paddock_run(struct argv_buf *a, const struct eval_ctx *ctx, const struct result *r,
		      const char *ws, const char *record)
{
	a->n = 0;
	argv_add(a, ctx->paddock);
	argv_add(a, "run");
	if (r->policy_path[0]) {
		argv_add(a, "--policy");
		argv_add(a, r->policy_path);
	}
	if (ws) {
		argv_add(a, "--workspace");
		argv_add(a, ws);
	}
	if (record) {
		argv_add(a, "--record");
		argv_add(a, record);
	}
	if (r->kind == ARM_WEAKENED) {
		argv_add(a, "--weaken");
		argv_add(a, r->knob);
	}
}

int fixture_make(struct fixture *fx, const char *case_id, char *why, size_t n)
{
	memset(fx, 0, sizeof(*fx));
	snprintf(fx->dir, sizeof(fx->dir), "/tmp/paddock-eval-%s.XXXXXX", case_id);
	if (!mkdtemp(fx->dir)) {
		snprintf(why, n, "mkdtemp: %s", strerror(errno));
		return -errno;
	}
	if (geteuid() == 0) {
		/* A tmpfs of its own: the fanotify filesystem mark then sees
		 * the fixture and nothing else of the host. */
		if (mount("paddock-eval", fx->dir, "tmpfs", MS_NOSUID | MS_NODEV,
			  "size=16m,mode=0755") == 0)
			fx->mounted = true;
	}
	if (chmod(fx->dir, 0755) < 0) {
		snprintf(why, n, "chmod %s: %s", fx->dir, strerror(errno));
		return -errno;
	}
	return 0;
}

int fixture_mkdir(const struct eval_ctx *ctx, const struct fixture *fx, const char *rel, char *out,
		  size_t n)
{
	snprintf(out, n, "%s/%s", fx->dir, rel);
	if (mkdir(out, 0755) < 0 && errno != EEXIST)
		return -errno;
	if (ctx->drop && chown(out, ctx->subj->workload_uid, ctx->subj->workload_gid) < 0)
		return -errno;
	return 0;
}

void fixture_finish(struct result *r, struct fan_observer *fan, const char *canary_dir,
		    struct fixture *fx)
{
	if (fan_stop(fan) < 0)
		snprintf(r->alarm, sizeof(r->alarm), "the fanotify reader did not stop");
	if (canary_dir)
		umount2(canary_dir, MNT_DETACH);
	if (fixture_teardown(fx) < 0)
		snprintf(r->alarm, sizeof(r->alarm), "teardown left the fixture behind");
}

int fixture_canary(const struct eval_ctx *ctx, const struct fixture *fx, char *dir, size_t dir_n,
		   char *canary, size_t canary_n, bool *mounted)
{
	int rc = fixture_mkdir(ctx, fx, "canary", dir, dir_n);

	*mounted = false;
	if (rc < 0)
		return rc;
	snprintf(canary, canary_n, "%s/canary.txt", dir);
	if (fx->mounted && mount("paddock-eval-canary", dir, "tmpfs", MS_NOSUID | MS_NODEV,
				 "size=1m,mode=0755") == 0) {
		*mounted = true;
		if (ctx->drop && chown(dir, ctx->subj->workload_uid, ctx->subj->workload_gid) < 0)
			return -errno;
	}
	return 0;
}

int fixture_write(const struct eval_ctx *ctx, const char *path, const char *data, mode_t mode)
{
	cleanup_close int fd =
	    open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, mode);
	size_t len = strlen(data);

	if (fd < 0)
		return -errno;
	if (write(fd, data, len) != (ssize_t)len)
		return -EIO;
	if (fchmod(fd, mode) < 0)
		return -errno;
	/* Owned by the workload user: only the mount may stop its writes,
	 * not file permissions. */
	if (ctx->drop && fchown(fd, ctx->subj->workload_uid, ctx->subj->workload_gid) < 0)
		return -errno;
	return 0;
}

static int rm_one(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st;
	(void)ftw;
	if (flag == FTW_DP || flag == FTW_D)
		return rmdir(path) < 0 && errno != ENOENT ? -1 : 0;
	return unlink(path) < 0 && errno != ENOENT ? -1 : 0;
}

int fixture_teardown(struct fixture *fx)
{
	struct stat st;
	int r = 0;

	if (!fx->dir[0])
		return 0;
	if (fx->mounted) {
		/* MNT_DETACH: a docker container still holding a bind of it
		 * must not keep the fixture from going away. */
		if (umount2(fx->dir, MNT_DETACH) < 0)
			r = -errno;
		fx->mounted = false;
	}
	if (nftw(fx->dir, rm_one, 16, FTW_DEPTH | FTW_PHYS) < 0)
		r = -errno;
	if (lstat(fx->dir, &st) == 0)
		r = r ? r : -EEXIST;
	fx->dir[0] = '\0';
	return r;
}

int read_file(const char *path, char *buf, size_t n)
{
	cleanup_close int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	size_t len = 0;
	ssize_t k;

	if (fd < 0)
		return -errno;
	while (len + 1 < n && (k = read(fd, buf + len, n - 1 - len)) > 0)
		len += (size_t)k;
	buf[len] = '\0';
	return (int)len;
}

int json_get(const char *text, size_t len, const char *key, char *out, size_t n)
{
	cJSON *root, *v;
	int r;

	root = cJSON_ParseWithLength(text, len);
	if (!root)
		return -EINVAL;
	/* A dotted path: "init.pid". */
	v = root;
	for (const char *k = key; v && *k;) {
		char part[64];
		size_t plen = strcspn(k, ".");

		snprintf(part, sizeof(part), "%.*s", (int)plen, k);
		/* "endpoints.0.host": a number indexes an array. */
		if (cJSON_IsArray(v) && plen && strspn(part, "0123456789") == plen)
			v = cJSON_GetArrayItem(v, atoi(part));
		else
			v = cJSON_GetObjectItemCaseSensitive(v, part);
		k += plen + (k[plen] == '.');
	}
	r = 0;
	if (cJSON_IsString(v))
		snprintf(out, n, "%s", v->valuestring);
	else if (cJSON_IsNumber(v))
		snprintf(out, n, "%.0f", v->valuedouble);
	else if (cJSON_IsArray(v))
		snprintf(out, n, "%d", cJSON_GetArraySize(v));
	else if (cJSON_IsBool(v))
		snprintf(out, n, "%s", cJSON_IsTrue(v) ? "true" : "false");
	else
		r = -ENOENT;
	cJSON_Delete(root);
	return r;
}

int record_get(const char *path, const char *key, char *out, size_t n)
{
	static __thread char buf[65536];
	int r = read_file(path, buf, sizeof(buf));

	if (r < 0)
		return r;
	return json_get(buf, (size_t)r, key, out, n);
}

int paddock_ps_entry(const struct eval_ctx *ctx, const char *id, char *out, size_t n)
{
	char *argv[] = {(char *)ctx->paddock, "ps", "--all", "--json", NULL};
	static char buf[1 << 18];
	cJSON *root, *e;
	int st = -1, r = -ENOENT;

	if (run_capture(ctx, ctx->drop, argv, buf, sizeof(buf), 10000, &st) < 0 || st != 0)
		return -EIO;
	root = cJSON_Parse(buf);
	if (!root)
		return -EINVAL;
	cJSON_ArrayForEach(e, root) {
		cJSON *i = cJSON_GetObjectItemCaseSensitive(e, "id");
		char *txt;

		if (!cJSON_IsString(i) || strcmp(i->valuestring, id) != 0)
			continue;
		txt = cJSON_PrintUnformatted(e);
		if (txt) {
			snprintf(out, n, "%s", txt);
			free(txt);
			r = 0;
		}
		break;
	}
	cJSON_Delete(root);
	return r;
}

void log_path(const struct eval_ctx *ctx, const struct result *r, const char *name, char *out,
	      size_t n)
{
	char arm[64];

	snprintf(arm, sizeof(arm), "%s", r->arm);
	for (char *p = arm; *p; p++)
		if (*p == ':' || *p == '/')
			*p = '_';
	snprintf(out, n, "%s/%s.%s.%s", ctx->outdir, r->case_id, arm, name);
}

bool docker_unavailable(const struct eval_ctx *ctx, struct result *r)
{
	char why[320];

	if (ctx->docker_ok)
		return false;
	snprintf(why, sizeof(why), "no Docker engine: %s", ctx->subj->docker_reason);
	result_not_executed(r, why);
	return true;
}

bool paddock_has_exec(const struct eval_ctx *ctx, char *why, size_t n)
{
	char *argv[] = {(char *)ctx->paddock, "exec", "--help", NULL};
	int st = -1;

	if (run_argv(ctx, ctx->drop, argv, NULL, 10000, &st) == 0 && st == 0)
		return true;
	snprintf(why, n,
		 "the paddock under test has no 'paddock exec' ('paddock exec --help' exit %d)",
		 st);
	return false;
}

bool paddock_accepts_policy(const struct eval_ctx *ctx, const char *json, const char *what,
			    char *why, size_t n)
{
	char dir[] = "/tmp/paddock-eval-probe.XXXXXX", path[64], out[1024] = "";
	char *argv[] = {(char *)ctx->paddock, "run", "--explain", "--policy", path,
			"--workspace",	      dir,   NULL};
	int st = -1;
	bool ok;

	if (!mkdtemp(dir)) {
		snprintf(why, n, "mkdtemp: %s", strerror(errno));
		return false;
	}
	chmod(dir, 0755);
	snprintf(path, sizeof(path), "%s/policy.json", dir);
	ok = fixture_write(ctx, path, json, 0644) == 0 &&
	     run_capture(ctx, ctx->drop, argv, out, sizeof(out), 10000, &st) == 0 && st == 0;
	unlink(path);
	rmdir(dir);
	if (!ok)
		snprintf(why, n,
			 "the paddock under test refuses a policy with %s (--explain exit %d)",
			 what, st);
	return ok;
}

int records_dir(const struct eval_ctx *ctx, const struct result *r, char *out, size_t n)
{
	char p[PATH_MAX + 16];

	snprintf(p, sizeof(p), "%s/records", ctx->outdir);
	if (mkdir(p, 0755) < 0 && errno != EEXIST)
		return -errno;
	log_path(ctx, r, "", out, n);
	snprintf(out, n, "%s/records/%s.", ctx->outdir, r->case_id);
	for (const char *a = r->arm; *a && strlen(out) + 1 < n; a++) {
		size_t l = strlen(out);

		out[l] = *a == ':' ? '_' : *a;
		out[l + 1] = '\0';
	}
	if (mkdir(out, 0755) < 0 && errno != EEXIST)
		return -errno;
	if (ctx->drop && chown(out, ctx->subj->workload_uid, ctx->subj->workload_gid) < 0)
		return -errno;
	return 0;
}
