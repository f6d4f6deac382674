/* Integration test harness: run the real build/paddock as the current
 * (unprivileged) user and check its effects from outside.
 *
 * Everything is static and header-only: each tests/integration/test_*.c is
 * its own Criterion binary linked with nothing but -lcriterion. Criterion
 * runs every test in its own forked process, so the per-test cleanup lists
 * below are per test; h_fini (the suites' .fini) runs them even when an
 * assertion failed: it SIGKILLs, by pid, every process a test started that
 * is still running and every host process carrying one of the test's
 * markers, then removes the test's temporary directories.
 *
 * Every test makes its own directory with h_tmpdir() (mkdtemp under /tmp,
 * mode 0755, named for its maker: h_init sweeps the leftovers of makers
 * that are gone): tests run two at a time and share nothing.
 *
 * Environment: PADDOCK_TEST_ROOT is the repository root (default: the
 * current directory); MUST_WORK=1 turns "user namespaces do not work here"
 * from a skip into a failure (CI). */
#pragma once

#include <criterion/criterion.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <limits.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

extern char **environ;

#define H_FN  static __attribute__((unused))
#define H_VAR static __attribute__((unused))

/* A run that has not ended after this long is SIGKILLed by pid. */
#define H_TIMEOUT_MS 30000
#define H_MAX	     256
#define H_OUT_MAX    (4u << 20)

/* ---------------------------------------------------------------- cleanup */

H_VAR char *h_dirs[H_MAX];
H_VAR size_t h_ndirs;
H_VAR pid_t h_pids[H_MAX];
H_VAR size_t h_npids;
H_VAR char h_markers[H_MAX][64];
H_VAR size_t h_nmarkers;
H_VAR void *h_allocs[1024];
H_VAR size_t h_nallocs;

/* Memory handed to tests is owned by the harness and freed in h_fini. */
H_FN void *h_keep(void *p)
{
	cr_assert_not_null(p, "out of memory");
	if (h_nallocs < sizeof(h_allocs) / sizeof(h_allocs[0]))
		h_allocs[h_nallocs++] = p;
	return p;
}

static char *h_fmt(const char *fmt, ...) __attribute__((format(printf, 1, 2), unused));
static char *h_fmt(const char *fmt, ...)
{
	va_list ap;
	char *s = NULL;
	int n;

	va_start(ap, fmt);
	n = vasprintf(&s, fmt, ap);
	va_end(ap);
	cr_assert_geq(n, 0, "out of memory");
	return h_keep(s);
}

H_FN void h_track_pid(pid_t pid)
{
	/* A slot freed by h_untrack_pid() first: a test may start many
	 * processes one after another. */
	for (size_t i = 0; i < h_npids; i++) {
		if (h_pids[i] == 0) {
			h_pids[i] = pid;
			return;
		}
	}
	cr_assert_lt(h_npids, (size_t)H_MAX, "too many processes for one test");
	h_pids[h_npids++] = pid;
}

H_FN void h_untrack_pid(pid_t pid)
{
	/* Compacted, so a test may start many processes one after another. */
	for (size_t i = 0; i < h_npids; i++)
		if (h_pids[i] == pid) {
			h_pids[i] = h_pids[--h_npids];
			return;
		}
}

/* ---------------------------------------------------------- small helpers */

H_FN const char *h_root(void)
{
	static char root[PATH_MAX];
	const char *env = getenv("PADDOCK_TEST_ROOT");

	if (!root[0]) {
		if (env && env[0])
			snprintf(root, sizeof(root), "%s", env);
		else if (!getcwd(root, sizeof(root)))
			snprintf(root, sizeof(root), ".");
	}
	return root;
}

H_FN const char *h_paddock(void)
{
	return h_fmt("%s/build/paddock", h_root());
}

/* The directory holding the test helpers (probe), to bind at /probe. */
H_FN const char *h_helpers_dir(void)
{
	return h_fmt("%s/build/tests/helpers", h_root());
}

H_FN bool h_contains(const char *hay, const char *needle)
{
	return hay && needle && strstr(hay, needle) != NULL;
}

/* The value of the first "key=value" line of text, or NULL. */
H_FN const char *h_kv(const char *text, const char *key)
{
	size_t klen = strlen(key);

	for (const char *l = text; l && *l; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : NULL) {
		if (strncmp(l, key, klen) == 0 && l[klen] == '=') {
			const char *v = l + klen + 1;

			return h_fmt("%.*s", (int)strcspn(v, "\n"), v);
		}
	}
	return NULL;
}

H_FN size_t h_count_lines(const char *s)
{
	size_t n = 0;

	for (; s && *s; s++)
		n += *s == '\n';
	return n;
}

H_FN double h_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

H_FN void h_sleep_ms(long ms)
{
	struct timespec ts = {.tv_sec = ms / 1000, .tv_nsec = (ms % 1000) * 1000000L};

	while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
		;
}

/* A few random bytes as hex digits, for names and markers. */
H_FN unsigned long long h_random(void)
{
	unsigned long long v = 0;
	int fd = open("/dev/urandom", O_RDONLY | O_CLOEXEC);

	if (fd >= 0) {
		if (read(fd, &v, sizeof(v)) != (ssize_t)sizeof(v))
			v = 0;
		close(fd);
	}
	return v ^ ((unsigned long long)getpid() << 32) ^ (unsigned long long)time(NULL);
}

/* ------------------------------------------------------------------- files */

static int h_rm_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st;
	(void)ftw;
	if (flag == FTW_DP || flag == FTW_D)
		(void)rmdir(path);
	else
		(void)unlink(path);
	return 0;
}

static int h_chmod_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)ftw;
	if (flag == FTW_D && (st->st_mode & 0700) != 0700)
		(void)chmod(path, (st->st_mode & 07777) | 0700);
	return 0;
}

/* Remove a tree, whatever modes the sandbox left in it (best effort). */
H_FN void h_rm_rf(const char *path)
{
	(void)nftw(path, h_chmod_entry, 16, FTW_PHYS);
	(void)nftw(path, h_rm_entry, 16, FTW_PHYS | FTW_DEPTH);
}

/* The start time of pid (field 22 of /proc/PID/stat), 0 when it is gone. */
H_FN unsigned long long h_start_time(pid_t pid)
{
	char path[64], buf[1024];
	unsigned long long t = 0;
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return 0;
	buf[n] = '\0';
	const char *p = strrchr(buf, ')');
	for (int field = 2; p && field < 22; field++)
		p = strchr(p + 1, ' ');
	if (p)
		t = strtoull(p + 1, NULL, 10);
	return t;
}

/* A test's directories are named for the process that made them
 * (/tmp/paddock-it.PID-START.XXXXXX), so a later run can prove one is a
 * leftover: a test killed by Criterion's timeout, or a run stopped by
 * hand, never reaches h_fini. h_init removes this user's directories whose
 * maker is gone (pid absent or with another start time); any other entry
 * under /tmp is left alone. */
H_FN void h_sweep_leftovers(void)
{
	DIR *dir = opendir("/tmp");
	struct dirent *e;

	if (!dir)
		return;
	while ((e = readdir(dir))) {
		char rest[16], path[PATH_MAX];
		unsigned long long start;
		struct stat st;
		int pid;

		if (sscanf(e->d_name, "paddock-it.%d-%llu.%15s", &pid, &start, rest) != 3 ||
		    strlen(rest) != 6 || pid <= 0)
			continue;
		snprintf(path, sizeof(path), "/tmp/%s", e->d_name);
		if (lstat(path, &st) < 0 || !S_ISDIR(st.st_mode) || st.st_uid != geteuid())
			continue;
		if (h_start_time(pid) == start)
			continue; /* its maker still runs */
		h_rm_rf(path);
	}
	closedir(dir);
}

/* A fresh private directory for this test, removed in h_fini. */
H_FN char *h_tmpdir(void)
{
	char *d = NULL;

	cr_assert_gt(
	    asprintf(&d, "/tmp/paddock-it.%d-%llu.XXXXXX", (int)getpid(), h_start_time(getpid())),
	    0);
	cr_assert_not_null(d);
	cr_assert_not_null(mkdtemp(d), "mkdtemp: %s", strerror(errno));
	cr_assert_eq(chmod(d, 0755), 0, "chmod %s: %s", d, strerror(errno));
	if (h_ndirs < H_MAX)
		h_dirs[h_ndirs++] = d;
	return d;
}

H_FN char *h_join(const char *dir, const char *name)
{
	return h_fmt("%s/%s", dir, name);
}

H_FN char *h_mkdir(const char *dir, const char *name, mode_t mode)
{
	char *p = h_join(dir, name);

	cr_assert_eq(mkdir(p, mode), 0, "mkdir %s: %s", p, strerror(errno));
	cr_assert_eq(chmod(p, mode), 0, "chmod %s: %s", p, strerror(errno));
	return p;
}

H_FN void h_write_file(const char *path, const char *data, mode_t mode)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, mode);
	size_t len = strlen(data), off = 0;

	cr_assert_geq(fd, 0, "create %s: %s", path, strerror(errno));
	while (off < len) {
		ssize_t n = write(fd, data + off, len - off);

		cr_assert_gt(n, 0, "write %s: %s", path, strerror(errno));
		off += (size_t)n;
	}
	cr_assert_eq(fchmod(fd, mode), 0);
	cr_assert_eq(close(fd), 0);
}

/* The whole file, NUL-terminated, or NULL (errno set) when it cannot be
 * read. *len may be NULL. */
H_FN char *h_read_file(const char *path, size_t *len)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	size_t cap = 4096, n = 0;
	char *buf;

	if (fd < 0)
		return NULL;
	buf = malloc(cap + 1);
	cr_assert_not_null(buf);
	for (;;) {
		ssize_t r;

		if (n == cap) {
			char *b = realloc(buf, cap * 2 + 1);

			cr_assert_not_null(b);
			buf = b;
			cap *= 2;
		}
		r = read(fd, buf + n, cap - n);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			break;
		n += (size_t)r;
	}
	close(fd);
	buf[n] = '\0';
	if (len)
		*len = n;
	return h_keep(buf);
}

H_FN bool h_exists(const char *path)
{
	struct stat st;

	return lstat(path, &st) == 0;
}

/* What a file looked like, to tell later whether anything changed: its
 * bytes, and the inode behind the name (a rename-over keeps the bytes of
 * the new file but changes the inode). */
struct h_snap {
	bool exists;
	char *data;
	size_t len;
	dev_t dev;
	ino_t ino;
	mode_t mode;
};

H_FN struct h_snap h_snap_take(const char *path)
{
	struct h_snap s = {0};
	struct stat st;

	if (lstat(path, &st) < 0)
		return s;
	s.exists = true;
	s.dev = st.st_dev;
	s.ino = st.st_ino;
	s.mode = st.st_mode;
	if (S_ISREG(st.st_mode))
		s.data = h_read_file(path, &s.len);
	return s;
}

/* NULL when unchanged, else what changed (for the assertion message). */
H_FN const char *h_snap_diff(const char *path, const struct h_snap *old)
{
	struct h_snap now = h_snap_take(path);

	if (old->exists != now.exists)
		return now.exists ? "appeared" : "disappeared";
	if (!now.exists)
		return NULL;
	if (old->dev != now.dev || old->ino != now.ino)
		return "replaced by another inode";
	if (old->mode != now.mode)
		return "mode changed";
	if (old->len != now.len)
		return "size changed";
	if ((old->data == NULL) != (now.data == NULL) ||
	    (old->data && memcmp(old->data, now.data, old->len) != 0))
		return "bytes changed";
	return NULL;
}

/* Names in a directory, sorted, one per line ("" when empty). */
static int h_cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

H_FN char *h_list_dir(const char *path)
{
	DIR *d = opendir(path);
	struct dirent *e;
	char *names[512];
	size_t n = 0, len = 1;
	char *out;

	cr_assert_not_null(d, "opendir %s: %s", path, strerror(errno));
	while ((e = readdir(d)) && n < 512) {
		if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
			continue;
		names[n] = strdup(e->d_name);
		len += strlen(e->d_name) + 1;
		n++;
	}
	closedir(d);
	qsort(names, n, sizeof(names[0]), h_cmp_str);
	out = calloc(1, len);
	cr_assert_not_null(out);
	for (size_t i = 0; i < n; i++) {
		strcat(out, names[i]);
		strcat(out, "\n");
		free(names[i]);
	}
	return h_keep(out);
}

/* The protected names of the built-in agent policy: none of them may be
 * left in a workspace as a placeholder once every sandbox has ended. */
H_FN void h_assert_no_placeholders(const char *ws)
{
	static const char *const names[] = {
	    ".git",	".bashrc",    ".bash_profile", ".zshrc",    ".zprofile",
	    ".profile", ".gitconfig", ".gitmodules",   ".mcp.json", ".vscode",
	    ".idea",	".paddock",   ".envrc",
	};

	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		const char *path = h_join(ws, names[i]);

		cr_assert(!h_exists(path), "placeholder %s left on the host; workspace:\n%s", path,
			  h_list_dir(ws));
	}
}

/* Standard base64, for smuggling a script through `base64 -d | sh`. */
H_FN char *h_base64(const char *s)
{
	static const char tab[] =
	    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
	size_t len = strlen(s), o = 0;
	char *out = calloc(1, (len + 2) / 3 * 4 + 1);

	cr_assert_not_null(out);
	for (size_t i = 0; i < len; i += 3) {
		uint32_t v = (uint32_t)(unsigned char)s[i] << 16;

		if (i + 1 < len)
			v |= (uint32_t)(unsigned char)s[i + 1] << 8;
		if (i + 2 < len)
			v |= (unsigned char)s[i + 2];
		out[o++] = tab[(v >> 18) & 63];
		out[o++] = tab[(v >> 12) & 63];
		out[o++] = i + 1 < len ? tab[(v >> 6) & 63] : '=';
		out[o++] = i + 2 < len ? tab[v & 63] : '=';
	}
	return h_keep(out);
}

/* --------------------------------------------------------------- processes */

struct h_proc {
	pid_t pid;
	int pidfd, out, err;
	char *obuf, *ebuf;
	size_t olen, elen;
	double t0;
	bool running;
	/* After h_wait: */
	int status; /* exit code, 128+N for signal N, -1 on timeout */
	bool timed_out;
	double secs;
	const char *out_text, *err_text; /* never NULL after h_wait */
};

static void h_append(char **buf, size_t *len, const char *data, size_t n)
{
	char *b;

	if (*len + n > H_OUT_MAX)
		n = H_OUT_MAX - *len;
	if (n == 0)
		return;
	b = realloc(*buf, *len + n + 1);
	cr_assert_not_null(b);
	memcpy(b + *len, data, n);
	*len += n;
	b[*len] = '\0';
	*buf = b;
}

/* Read what is there without blocking; false at EOF or error. */
static bool h_drain(int fd, char **buf, size_t *len)
{
	char chunk[8192];

	for (;;) {
		ssize_t n = read(fd, chunk, sizeof(chunk));

		if (n > 0) {
			h_append(buf, len, chunk, (size_t)n);
			continue;
		}
		if (n < 0 && errno == EINTR)
			continue;
		return n < 0 && errno == EAGAIN;
	}
}

/* Start argv[0] (an absolute path) with stdin from /dev/null and stdout and
 * stderr captured. envp NULL: the test's environment. Every fd of the test
 * that is not close-on-exec is inherited, on purpose. */
H_FN void h_spawn(struct h_proc *p, const char *cwd, char *const argv[], char *const envp[])
{
	int o[2], e[2];
	pid_t pid;

	memset(p, 0, sizeof(*p));
	p->pidfd = p->out = p->err = -1;
	cr_assert_eq(pipe2(o, O_CLOEXEC), 0);
	cr_assert_eq(pipe2(e, O_CLOEXEC), 0);
	fflush(NULL);
	pid = fork();
	cr_assert_geq(pid, 0, "fork: %s", strerror(errno));
	if (pid == 0) {
		int null = open("/dev/null", O_RDONLY);
		sigset_t none;

		/* Criterion's own signal setup is not the workload's. */
		sigemptyset(&none);
		sigprocmask(SIG_SETMASK, &none, NULL);
		signal(SIGPIPE, SIG_DFL);
		if (null < 0 || dup2(null, 0) < 0 || dup2(o[1], 1) < 0 || dup2(e[1], 2) < 0)
			_exit(120);
		if (null > 2)
			close(null);
		if (cwd && chdir(cwd) < 0) {
			dprintf(2, "harness: chdir %s: %s\n", cwd, strerror(errno));
			_exit(121);
		}
		execve(argv[0], argv, envp ? envp : environ);
		dprintf(2, "harness: exec %s: %s\n", argv[0], strerror(errno));
		_exit(122);
	}
	h_track_pid(pid);
	close(o[1]);
	close(e[1]);
	p->pid = pid;
	p->out = o[0];
	p->err = e[0];
	fcntl(p->out, F_SETFL, O_NONBLOCK);
	fcntl(p->err, F_SETFL, O_NONBLOCK);
	p->pidfd = (int)syscall(SYS_pidfd_open, pid, 0);
	cr_assert_geq(p->pidfd, 0, "pidfd_open: %s", strerror(errno));
	p->t0 = h_now();
	p->running = true;
}

/* Wait for the process to end, up to timeout_ms, then SIGKILL it. The end
 * is the process's exit, not EOF on its pipes: a process that outlived the
 * sandbox may still hold them. Returns the status (see struct h_proc). */
H_FN int h_wait(struct h_proc *p, int timeout_ms)
{
	double deadline = p->t0 + timeout_ms / 1000.0;
	int ws = 0;
	bool out_open = true, err_open = true;

	cr_assert(p->running, "h_wait on a process that is not running");
	for (;;) {
		struct pollfd pfd[3] = {
		    {.fd = out_open ? p->out : -1, .events = POLLIN},
		    {.fd = err_open ? p->err : -1, .events = POLLIN},
		    {.fd = p->pidfd, .events = POLLIN},
		};
		double left = deadline - h_now();
		int r;

		if (left <= 0) {
			kill(p->pid, SIGKILL);
			p->timed_out = true;
			break;
		}
		r = poll(pfd, 3, (int)(left * 1000) + 1);
		if (r < 0 && errno != EINTR)
			cr_assert_fail("poll: %s", strerror(errno));
		if (r <= 0)
			continue;
		if (pfd[0].revents)
			out_open = h_drain(p->out, &p->obuf, &p->olen);
		if (pfd[1].revents)
			err_open = h_drain(p->err, &p->ebuf, &p->elen);
		if (pfd[2].revents)
			break;
	}
	while (waitpid(p->pid, &ws, 0) < 0 && errno == EINTR)
		;
	h_untrack_pid(p->pid);
	p->running = false;
	p->secs = h_now() - p->t0;
	if (out_open)
		(void)h_drain(p->out, &p->obuf, &p->olen);
	if (err_open)
		(void)h_drain(p->err, &p->ebuf, &p->elen);
	close(p->out);
	close(p->err);
	close(p->pidfd);
	p->out = p->err = p->pidfd = -1;
	if (p->obuf)
		h_keep(p->obuf);
	if (p->ebuf)
		h_keep(p->ebuf);
	p->out_text = p->obuf ? p->obuf : "";
	p->err_text = p->ebuf ? p->ebuf : "";
	if (p->timed_out)
		p->status = -1;
	else if (WIFEXITED(ws))
		p->status = WEXITSTATUS(ws);
	else
		p->status = 128 + WTERMSIG(ws);
	return p->status;
}

/* argv of paddock from a NULL-terminated list of arguments after it. */
static char **h_paddock_argv(va_list ap)
{
	char **argv = h_keep(calloc(128, sizeof(char *)));
	size_t n = 0;
	const char *a;

	argv[n++] = (char *)h_paddock();
	while ((a = va_arg(ap, const char *))) {
		cr_assert_lt(n, (size_t)126, "too many arguments");
		argv[n++] = (char *)a;
	}
	argv[n] = NULL;
	return argv;
}

static void h_paddock_start_(struct h_proc *p, const char *cwd, ...)
    __attribute__((sentinel, unused));
static void h_paddock_start_(struct h_proc *p, const char *cwd, ...)
{
	va_list ap;
	char **argv;

	va_start(ap, cwd);
	argv = h_paddock_argv(ap);
	va_end(ap);
	h_spawn(p, cwd, argv, NULL);
}

static int h_paddock_run_(struct h_proc *p, const char *cwd, ...) __attribute__((sentinel, unused));
static int h_paddock_run_(struct h_proc *p, const char *cwd, ...)
{
	va_list ap;
	char **argv;

	va_start(ap, cwd);
	argv = h_paddock_argv(ap);
	va_end(ap);
	h_spawn(p, cwd, argv, NULL);
	return h_wait(p, H_TIMEOUT_MS);
}

/* H_PADDOCK(&p, cwd, "run", "--", "sh", "-c", "...") runs build/paddock in
 * cwd and waits; H_PADDOCK_START starts it and returns (then h_wait). */
#define H_PADDOCK(p, cwd, ...)	     h_paddock_run_((p), (cwd), __VA_ARGS__, (char *)NULL)
#define H_PADDOCK_START(p, cwd, ...) h_paddock_start_((p), (cwd), __VA_ARGS__, (char *)NULL)

/* The same with an argv array (NULL-terminated, without "paddock"). */
H_FN int h_run_paddock(struct h_proc *p, const char *cwd, const char *const args[])
{
	char **argv = h_keep(calloc(256, sizeof(char *)));
	size_t n = 0;

	argv[n++] = (char *)h_paddock();
	for (; args && *args; args++) {
		cr_assert_lt(n, (size_t)255, "too many arguments");
		argv[n++] = (char *)*args;
	}
	h_spawn(p, cwd, argv, NULL);
	return h_wait(p, H_TIMEOUT_MS);
}

/* Any other program (absolute path), waited for. */
static int h_cmd_(struct h_proc *p, const char *cwd, ...) __attribute__((sentinel, unused));
static int h_cmd_(struct h_proc *p, const char *cwd, ...)
{
	char **argv = h_keep(calloc(64, sizeof(char *)));
	size_t n = 0;
	const char *a;
	va_list ap;

	va_start(ap, cwd);
	while ((a = va_arg(ap, const char *)) && n < 63)
		argv[n++] = (char *)a;
	va_end(ap);
	h_spawn(p, cwd, argv, NULL);
	return h_wait(p, H_TIMEOUT_MS);
}
#define H_CMD(p, cwd, ...) h_cmd_((p), (cwd), __VA_ARGS__, (char *)NULL)

/* The whole story of a run, for assertion messages:
 * cr_assert(x, "what: " H_FMT, H_ARGS(&p)) or cr_assert(x, H_SHOW(&p)). */
#define H_FMT "status %d after %.2fs%s\n--- stdout ---\n%s--- stderr ---\n%s"
#define H_ARGS(p)                                                                            \
	(p)->status, (p)->secs, (p)->timed_out ? " (TIMED OUT, killed)" : "", (p)->out_text, \
	    (p)->err_text
#define H_SHOW(p) H_FMT, H_ARGS(p)

/* ----------------------------------------------------------------- markers */

/* A unique marker that is also a valid extra sleep(1) operand: "sleep 300
 * MARKER" sleeps 300.000... seconds and carries the marker in its
 * cmdline, where the host's /proc shows it. Killed in h_fini. */
H_FN const char *h_marker(void)
{
	char *m;

	cr_assert_lt(h_nmarkers, (size_t)H_MAX);
	m = h_markers[h_nmarkers++];
	snprintf(m, 64, "0.000%012llu", h_random() % 1000000000000ULL);
	return m;
}

/* /proc/PID/FILE's first size - 1 bytes into buf, NUL-terminated: the
 * length, or -1 (gone, unreadable). */
H_FN ssize_t h_proc_read(pid_t pid, const char *file, char *buf, size_t size)
{
	char path[300];
	ssize_t len;
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/%s", (int)pid, file);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	len = read(fd, buf, size - 1);
	close(fd);
	if (len < 0)
		return -1;
	buf[len] = '\0';
	return len;
}

/* The host pid of a child of parent (the first found) whose comm is comm
 * (NULL: any), or 0. */
H_FN pid_t h_child_of(pid_t parent, const char *comm)
{
	DIR *d = opendir("/proc");
	struct dirent *e;
	pid_t found = 0;

	cr_assert_not_null(d);
	while (!found && (e = readdir(d))) {
		char buf[1024], *lp, *rp;
		pid_t pid = (pid_t)atoi(e->d_name);
		int ppid;

		if (pid <= 0 || h_proc_read(pid, "stat", buf, sizeof(buf)) <= 0)
			continue;
		/* pid (comm) state ppid ...; comm may hold anything. */
		lp = strchr(buf, '(');
		rp = strrchr(buf, ')');
		if (!lp || !rp || rp < lp || sscanf(rp + 1, " %*c %d", &ppid) != 1 ||
		    ppid != parent)
			continue;
		*rp = '\0';
		if (!comm || strcmp(lp + 1, comm) == 0)
			found = pid;
	}
	closedir(d);
	return found;
}

/* Host processes (other than this one) whose cmdline contains marker. */
H_FN size_t h_marker_pids(const char *marker, pid_t *pids, size_t max)
{
	DIR *d = opendir("/proc");
	struct dirent *e;
	size_t n = 0;

	cr_assert_not_null(d);
	while ((e = readdir(d))) {
		char buf[65536];
		ssize_t len;
		pid_t pid = (pid_t)atoi(e->d_name);

		if (pid <= 0 || pid == getpid() ||
		    (len = h_proc_read(pid, "cmdline", buf, sizeof(buf))) <= 0)
			continue;
		for (ssize_t i = 0; i < len; i++)
			if (buf[i] == '\0')
				buf[i] = ' ';
		if (strstr(buf, marker) && n < max)
			pids[n++] = pid;
	}
	closedir(d);
	return n;
}

/* SIGKILL, by pid, the host processes carrying marker; wait until they
 * are gone (up to 2 s). Returns how many were found the first time. */
H_FN size_t h_kill_marker(const char *marker)
{
	pid_t pids[256];
	size_t first = h_marker_pids(marker, pids, 256);

	for (int round = 0; round < 40; round++) {
		size_t n = h_marker_pids(marker, pids, 256);

		if (n == 0)
			break;
		for (size_t i = 0; i < n; i++)
			kill(pids[i], SIGKILL);
		h_sleep_ms(50);
	}
	return first;
}

/* ------------------------------------------------------------- init, fini */

/* Can this user make a user namespace (with mount, pid and net) and map
 * itself? That is all paddock needs from the kernel. */
static bool h_userns_works(void)
{
	pid_t pid = fork();
	int ws = 0;

	if (pid < 0)
		return false;
	if (pid == 0) {
		char map[64];
		uid_t uid = getuid();
		int fd;

		if (unshare(CLONE_NEWUSER | CLONE_NEWNS | CLONE_NEWPID | CLONE_NEWNET) < 0)
			_exit(1);
		fd = open("/proc/self/uid_map", O_WRONLY);
		snprintf(map, sizeof(map), "%u %u 1\n", (unsigned)uid, (unsigned)uid);
		if (fd < 0 || write(fd, map, strlen(map)) < 0)
			_exit(2);
		_exit(0);
	}
	while (waitpid(pid, &ws, 0) < 0 && errno == EINTR)
		;
	return WIFEXITED(ws) && WEXITSTATUS(ws) == 0;
}

H_FN void h_init(void)
{
	const char *must = getenv("MUST_WORK");
	struct stat st;

	h_ndirs = h_npids = h_nmarkers = h_nallocs = 0;
	h_sweep_leftovers();
	if (!h_userns_works()) {
		if (must && strcmp(must, "1") == 0)
			cr_assert_fail(
			    "unprivileged user namespaces do not work here, and MUST_WORK=1");
		cr_skip_test("unprivileged user namespaces do not work here");
	}
	cr_assert_eq(stat(h_paddock(), &st), 0, "%s: %s (build it: make build/paddock)",
		     h_paddock(), strerror(errno));
}

H_FN void h_fini(void)
{
	for (size_t i = 0; i < h_npids; i++) {
		if (h_pids[i] > 0) {
			kill(h_pids[i], SIGKILL);
			while (waitpid(h_pids[i], NULL, 0) < 0 && errno == EINTR)
				;
		}
	}
	h_npids = 0;
	for (size_t i = 0; i < h_nmarkers; i++)
		h_kill_marker(h_markers[i]);
	h_nmarkers = 0;
	for (size_t i = 0; i < h_ndirs; i++) {
		h_rm_rf(h_dirs[i]);
		free(h_dirs[i]);
	}
	h_ndirs = 0;
	for (size_t i = 0; i < h_nallocs; i++)
		free(h_allocs[i]);
	h_nallocs = 0;
}

/* Skip from inside a test body: Criterion does not run .fini after a skip,
 * so clean up first. */
#define h_skip(...)                        \
	do {                               \
		h_fini();                  \
		cr_skip_test(__VA_ARGS__); \
	} while (0)

/* ------------------------------------------------------------- fixtures */

/* A test's private world: base (the mkdtemp directory, not visible in the
 * sandbox), ws = base/ws (the workspace), and a record path outside ws. */
struct h_world {
	char *base, *ws, *record;
};

H_FN struct h_world h_world(void)
{
	struct h_world w;
	char real[PATH_MAX];

	w.base = h_tmpdir();
	/* paddock canonicalizes the workspace; so do we, to compare paths. */
	cr_assert_not_null(realpath(w.base, real));
	w.base = h_fmt("%s", real);
	w.ws = h_mkdir(w.base, "ws", 0755);
	w.record = h_join(w.base, "record.json");
	return w;
}

/* python3 -c SCRIPT ARG...: for JSON parsing and socket one-liners on the
 * host side. */
#define H_PYTHON "/usr/bin/python3"

/* json.dumps(eval(EXPR)) with d = the parsed JSON file, e.g.
 * h_json(path, "d['ended']") returns "\"exit\"". */
H_FN const char *h_json(const char *path, const char *expr)
{
	struct h_proc p;

	H_CMD(&p, NULL, H_PYTHON, "-c",
	      "import json,sys\n"
	      "d=json.load(open(sys.argv[1]))\n"
	      "print(json.dumps(eval(sys.argv[2]), sort_keys=True))\n",
	      path, expr);
	cr_assert_eq(p.status, 0, "python3 on %s, %s: " H_FMT, path, expr, H_ARGS(&p));
	return h_fmt("%.*s", (int)strcspn(p.out_text, "\n"), p.out_text);
}

/* A test's world plus its private session registry: XDG_RUNTIME_DIR set to
 * base/xdg (0700), reg = xdg/paddock. */
struct h_sworld {
	struct h_world w;
	char *xdg, *reg;
};

H_FN struct h_sworld h_sworld(void)
{
	struct h_sworld s;

	s.w = h_world();
	s.xdg = h_mkdir(s.w.base, "xdg", 0700);
	s.reg = h_join(s.xdg, "paddock");
	cr_assert_eq(setenv("XDG_RUNTIME_DIR", s.xdg, 1), 0);
	return s;
}

/* What a registry holds after a `paddock ps` swept it: no ".old-"
 * directory (a removal that was stopped) and no id directory without its
 * session.json (which ps would not list and nothing would remove). The
 * ".new-" ones of registrations that died wait SESSION_SWEEP_AGE (10 s)
 * for the sweep; with new_too, none may be left either. */
H_FN void h_assert_registry_whole(const char *reg, bool new_too)
{
	char *list = h_list_dir(reg), *l;

	cr_assert(!h_contains(list, ".old-"), "%s: left: %s", reg, list);
	cr_assert(!new_too || !h_contains(list, ".new-"), "%s: left: %s", reg, list);
	for (l = strtok(list, "\n"); l; l = strtok(NULL, "\n"))
		if (strcmp(l, "names") != 0 && strncmp(l, ".new-", 5) != 0)
			cr_assert(h_exists(h_fmt("%s/%s/session.json", reg, l)),
				  "%s/%s: a directory without session.json", reg, l);
}

/* h_json() of a session's session.json in that registry. */
H_FN const char *h_session_json(const struct h_sworld *s, const char *id, const char *expr)
{
	return h_json(h_fmt("%s/%s/session.json", s->reg, id), expr);
}

/* A TCP server of the test's own on 127.0.0.1 (an ephemeral port, in
 * *port): every connection is handed to one(arg, fd) in a detached thread
 * of its own, which must close fd. It serves until the test process ends
 * (Criterion runs each test in a process of its own). */
struct h_server_conn {
	void (*one)(void *arg, int fd);
	void *arg;
	int fd;
};

H_FN void *h_server_conn_(void *p)
{
	struct h_server_conn c = *(struct h_server_conn *)p;

	free(p);
	c.one(c.arg, c.fd);
	return NULL;
}

H_FN void *h_server_loop_(void *p)
{
	struct h_server_conn *l = p;

	for (;;) {
		struct h_server_conn *c = malloc(sizeof(*c));
		pthread_t th;

		if (!c)
			return NULL;
		*c = *l;
		c->fd = accept(l->fd, NULL, NULL);
		if (c->fd < 0) {
			free(c);
			return NULL;
		}
		if (pthread_create(&th, NULL, h_server_conn_, c) == 0)
			pthread_detach(th);
		else
			close(c->fd), free(c);
	}
}

H_FN void h_server(void (*one)(void *arg, int fd), void *arg, int backlog, int *port)
{
	struct h_server_conn *l = malloc(sizeof(*l));
	struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	socklen_t len = sizeof(a);
	pthread_t th;
	int on = 1;

	cr_assert_not_null(l);
	l->one = one;
	l->arg = arg;
	l->fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	cr_assert_geq(l->fd, 0);
	setsockopt(l->fd, SOL_SOCKET, SO_REUSEADDR, &on, sizeof(on));
	cr_assert_eq(bind(l->fd, (struct sockaddr *)&a, sizeof(a)), 0);
	cr_assert_eq(listen(l->fd, backlog), 0);
	cr_assert_eq(getsockname(l->fd, (struct sockaddr *)&a, &len), 0);
	*port = ntohs(a.sin_port);
	cr_assert_eq(pthread_create(&th, NULL, h_server_loop_, l), 0);
	pthread_detach(th);
}

/* A policy file in dir: the built-in agent policy with protect_git mode
 * ("check" or "allowlist"; docs/security.md, "The git directory as an
 * allowlist"). */
H_FN char *h_protect_git_policy(const char *dir, const char *mode)
{
	char *path = h_join(dir, h_fmt("protect-git-%s.json", mode));

	h_write_file(
	    path,
	    h_fmt("{\"version\": 1, \"extends\": \"agent\", \"protect_git\": \"%s\"}\n", mode),
	    0644);
	return path;
}

H_FN char *h_allowlist_policy(const char *dir)
{
	return h_protect_git_policy(dir, "allowlist");
}
