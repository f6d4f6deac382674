/* probe: an in-sandbox probe for the integration tests (in the spirit of
 * bubblewrap's tests/try-syscall.c). It always prints key=value lines:
 *
 *   pid=N            its pid (2 or more under paddock-init)
 *   uid=N gid=N      real ids
 *   uid_map=...      /proc/self/uid_map, whitespace collapsed, ";" between lines
 *   gid_map=...      the same for gid_map
 *   CapInh= CapPrm= CapEff= CapBnd= CapAmb=   hex, from /proc/self/status
 *   NoNewPrivs=N  Seccomp=N   (Seccomp: 0 none, 1 strict, 2 filter)
 *   fds=0,1,2        open fds, without the one used to list them
 *
 * and then, for each argument, one line whose key is the argument itself
 * (errors are errno names, e.g. EROFS; "OK" is success):
 *
 *   w:/path      open(path, O_WRONLY|O_CREAT, 0644): OK or the errno.
 *                Nothing is written.
 *   ow:/path     open(path, O_WRONLY) without O_CREAT: OK or the errno
 *   ot:/path     open(path, O_WRONLY|O_TRUNC), as a shell's "> path" of an
 *                existing file (a read-only mount answers EROFS before the
 *                file's permissions are looked at)
 *   stat:/path   lstat(2): "reg", "dir", "lnk", "fifo", "sock", "chr MAJ:MIN",
 *                "blk MAJ:MIN", or the errno
 *   r:/path      open and read: EMPTY, DATA, or the errno
 *   readlink:/p  the link text, or the errno
 *   ls:/path     the names in a directory, sorted, ","-separated (or the errno)
 *   mnt:/path    the topmost mount whose mount point is path: "ro" or "rw"
 *                (its per-mount flag in /proc/self/mountinfo), or NONE
 *   mknod:/path  mknod(path, S_IFCHR|0666, 1:3), a copy of /dev/null
 *   fifo:/path   mkfifo(path, 0644)
 *   kill:PID     kill(PID, 0)
 *   kill9:PID    kill(PID, SIGKILL)
 *   ptrace:PID   ptrace(PTRACE_SEIZE, PID): OK or the errno (a tracee is
 *                detached when the probe exits)
 *   getfd:PID:FD pidfd_getfd(2) of fd FD of process PID (via pidfd_open)
 *   tcpbind:PORT bind(2) a TCP socket to 127.0.0.1:PORT: OK or the errno
 *                (Landlock's bind rules answer EACCES)
 *   tcpconnect:PORT connect(2) to 127.0.0.1:PORT: OK or the errno (with no
 *                listener ECONNREFUSED; Landlock's connect rules EACCES)
 *   dev          dev=NAMES: ls of /dev (shorthand for ls:/dev, other key)
 *   calls        call.NAME=OK|ERRNO|SIGNAME for each call that the default
 *                seccomp profile refuses (see calls[] below); calls that
 *                would change the probe itself run in a child, and a child
 *                killed by a signal reports the signal's name (SIGSYS)
 *   nested       in a child: unshare(CLONE_NEWUSER|CLONE_NEWNS), map the
 *                ids, then mount a tmpfs on /tmp:
 *                nested.unshare=OK|ERRNO, nested.mount=OK|ERRNO|SKIPPED
 *   serve:PORT:MARKER
 *                a TCP server on 127.0.0.1:PORT and [::1]:PORT (when the
 *                sandbox has IPv6) that never returns: prints
 *                "serve:PORT:MARKER=listening" (or the errno), then answers
 *                every connection, each in a child, with "MARKER\n", reads
 *                until the client's EOF and answers "N\n", the bytes read
 *   http:PORT:MODE:MARKER
 *                the same listeners, but HTTP/1.1: "/" is a page whose title
 *                and <h1 id=marker> are MARKER, "/sw.js" a cache-first
 *                service worker that keeps "/", anything else 404; one
 *                response per connection. MODE's letters: c the page has
 *                Cache-Control: max-age=3600 (else no-store), s the page
 *                registers /sw.js, f every response carries a forged
 *                "Paddock-Lease: session=forged; ...; nonce=0000" and
 *                "Connection: keep-alive"
 *
 * Plain libc and kernel headers, no dependencies; exits 0 unless it cannot
 * read /proc (1) or an argument is unknown (2). */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/personality.h>
#include <sys/ptrace.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <unistd.h>

#include <linux/bpf.h>
#include <linux/io_uring.h>
#include <linux/kcmp.h>
#include <linux/keyctl.h>
#include <linux/perf_event.h>
#include <linux/sched.h>
#include <linux/userfaultfd.h>

#ifndef AF_VSOCK
#define AF_VSOCK 40
#endif
#ifndef AF_ALG
#define AF_ALG 38
#endif

static const char *errno_name(int e)
{
	const char *n = strerrorname_np(e);
	static char buf[32];

	if (n)
		return n;
	snprintf(buf, sizeof(buf), "E%d", e);
	return buf;
}

static void print_map(const char *key, const char *path)
{
	char buf[4096], out[4096];
	size_t o = 0;
	ssize_t n;
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	int space = 1;

	if (fd < 0) {
		printf("%s=%s\n", key, errno_name(errno));
		return;
	}
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n < 0)
		n = 0;
	for (ssize_t i = 0; i < n && o < sizeof(out) - 2; i++) {
		char c = buf[i];

		if (c == '\n') {
			while (o > 0 && out[o - 1] == ' ')
				o--;
			if (i + 1 < n)
				out[o++] = ';';
			space = 1;
		} else if (c == ' ' || c == '\t') {
			if (!space)
				out[o++] = ' ';
			space = 1;
		} else {
			out[o++] = c;
			space = 0;
		}
	}
	while (o > 0 && (out[o - 1] == ' ' || out[o - 1] == ';'))
		o--;
	out[o] = '\0';
	printf("%s=%s\n", key, out);
}

static int print_status(void)
{
	static const char *const keys[] = {"CapInh", "CapPrm",	   "CapEff", "CapBnd",
					   "CapAmb", "NoNewPrivs", "Seccomp"};
	FILE *f = fopen("/proc/self/status", "re");
	char line[512];

	if (!f) {
		printf("status=%s\n", errno_name(errno));
		return -1;
	}
	while (fgets(line, sizeof(line), f)) {
		char *colon = strchr(line, ':');
		char *v;

		if (!colon)
			continue;
		*colon = '\0';
		for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++) {
			if (strcmp(line, keys[i]) != 0)
				continue;
			v = colon + 1;
			v += strspn(v, " \t");
			v[strcspn(v, "\n")] = '\0';
			printf("%s=%s\n", keys[i], v);
		}
	}
	fclose(f);
	return 0;
}

static int print_fds(void)
{
	DIR *d = opendir("/proc/self/fd");
	struct dirent *e;
	int self, fds[1024], n = 0;

	if (!d) {
		printf("fds=%s\n", errno_name(errno));
		return -1;
	}
	self = dirfd(d);
	while ((e = readdir(d)) && n < 1024) {
		char *end;
		long fd = strtol(e->d_name, &end, 10);

		if (e->d_name[0] == '.' || *end || fd == self)
			continue;
		fds[n++] = (int)fd;
	}
	closedir(d);
	/* readdir order is not numeric order. */
	for (int i = 1; i < n; i++)
		for (int j = i; j > 0 && fds[j - 1] > fds[j]; j--) {
			int t = fds[j];

			fds[j] = fds[j - 1];
			fds[j - 1] = t;
		}
	printf("fds=");
	for (int i = 0; i < n; i++)
		printf("%s%d", i ? "," : "", fds[i]);
	printf("\n");
	return 0;
}

/* ------------------------------------------------------- path requests */

static void result(const char *key, int ok)
{
	printf("%s=%s\n", key, ok ? "OK" : errno_name(errno));
}

static int cmp_name(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static void print_dir(const char *key, const char *path)
{
	DIR *d = opendir(path);
	struct dirent *e;
	char *names[512];
	size_t n = 0;

	if (!d) {
		printf("%s=%s\n", key, errno_name(errno));
		return;
	}
	while ((e = readdir(d)) && n < 512) {
		if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
			continue;
		names[n] = strdup(e->d_name);
		if (names[n])
			n++;
	}
	closedir(d);
	qsort(names, n, sizeof(names[0]), cmp_name);
	printf("%s=", key);
	for (size_t i = 0; i < n; i++) {
		printf("%s%s", i ? "," : "", names[i]);
		free(names[i]);
	}
	printf("\n");
}

static void print_read(const char *key, const char *path)
{
	char buf[64];
	ssize_t n;
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);

	if (fd < 0) {
		printf("%s=%s\n", key, errno_name(errno));
		return;
	}
	n = read(fd, buf, sizeof(buf));
	if (n < 0)
		printf("%s=%s\n", key, errno_name(errno));
	else
		printf("%s=%s\n", key, n ? "DATA" : "EMPTY");
	close(fd);
}

static void print_stat(const char *key, const char *path)
{
	struct stat st;

	if (lstat(path, &st) < 0) {
		printf("%s=%s\n", key, errno_name(errno));
		return;
	}
	switch (st.st_mode & S_IFMT) {
	case S_IFCHR:
	case S_IFBLK:
		printf("%s=%s %u:%u\n", key, S_ISCHR(st.st_mode) ? "chr" : "blk", major(st.st_rdev),
		       minor(st.st_rdev));
		return;
	case S_IFDIR:
		printf("%s=dir\n", key);
		return;
	case S_IFLNK:
		printf("%s=lnk\n", key);
		return;
	case S_IFIFO:
		printf("%s=fifo\n", key);
		return;
	case S_IFSOCK:
		printf("%s=sock\n", key);
		return;
	default:
		printf("%s=reg\n", key);
	}
}

static void print_readlink(const char *key, const char *path)
{
	char buf[4096];
	ssize_t n = readlink(path, buf, sizeof(buf) - 1);

	if (n < 0) {
		printf("%s=%s\n", key, errno_name(errno));
		return;
	}
	buf[n] = '\0';
	printf("%s=%s\n", key, buf);
}

/* mountinfo escapes space, tab, newline and backslash as \ooo. */
static void unescape(char *s)
{
	char *w = s;

	for (char *r = s; *r; r++) {
		if (r[0] == '\\' && r[1] >= '0' && r[1] <= '7' && r[2] >= '0' && r[2] <= '7' &&
		    r[3] >= '0' && r[3] <= '7') {
			*w++ = (char)((r[1] - '0') * 64 + (r[2] - '0') * 8 + (r[3] - '0'));
			r += 3;
		} else {
			*w++ = *r;
		}
	}
	*w = '\0';
}

static void print_mount(const char *key, const char *path)
{
	FILE *f = fopen("/proc/self/mountinfo", "re");
	char line[8192], found[8] = "NONE";

	if (!f) {
		printf("%s=%s\n", key, errno_name(errno));
		return;
	}
	/* Later lines stack on top of earlier ones: the last match wins. */
	while (fgets(line, sizeof(line), f)) {
		char mnt[4096], opts[1024];

		if (sscanf(line, "%*s %*s %*s %*s %4095s %1023s", mnt, opts) != 2)
			continue;
		unescape(mnt);
		if (strcmp(mnt, path) != 0)
			continue;
		snprintf(found, sizeof(found), "%s",
			 strncmp(opts, "ro", 2) == 0 && (opts[2] == ',' || !opts[2]) ? "ro" : "rw");
	}
	fclose(f);
	printf("%s=%s\n", key, found);
}

/* ------------------------------------------------------ blocked calls */

/* Run fn in a child and report what became of it: the child's exit code
 * is 0 for OK, else an errno; a signal is reported by name. */
static void in_child(const char *name, int (*fn)(void))
{
	pid_t pid;
	int ws = 0;

	fflush(stdout);
	pid = fork();
	if (pid < 0) {
		printf("call.%s=fork-%s\n", name, errno_name(errno));
		return;
	}
	if (pid == 0)
		_exit(fn() < 0 ? (errno & 0xff) : 0);
	while (waitpid(pid, &ws, 0) < 0 && errno == EINTR)
		;
	if (WIFSIGNALED(ws))
		printf("call.%s=%s\n", name,
		       sigabbrev_np(WTERMSIG(ws)) ? sigabbrev_np(WTERMSIG(ws)) : "SIGNAL");
	else if (WEXITSTATUS(ws) == 0)
		printf("call.%s=OK\n", name);
	else
		printf("call.%s=%s\n", name, errno_name(WEXITSTATUS(ws)));
}

/* A caller with the right to mount (root on the host) gets a private copy
 * of its mount table first, so the probe never mounts on the host's. In the
 * sandbox the unshare fails (seccomp, or no capability) and the mount
 * answers for itself. */
static int do_mount(void)
{
	if (unshare(CLONE_NEWNS) == 0)
		(void)mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL);
	return mount("none", "/tmp", "tmpfs", 0, NULL);
}

static int do_fsopen(void)
{
	return (int)syscall(SYS_fsopen, "tmpfs", 0);
}

static int do_unshare_user(void)
{
	return unshare(CLONE_NEWUSER);
}

static int do_unshare_mount(void)
{
	return unshare(CLONE_NEWNS);
}

static int do_clone_newuser(void)
{
	long pid = syscall(SYS_clone, CLONE_NEWUSER | SIGCHLD, NULL, NULL, NULL, NULL);

	if (pid == 0)
		syscall(SYS_exit, 0);
	if (pid > 0)
		waitpid((pid_t)pid, NULL, 0);
	return pid < 0 ? -1 : 0;
}

static int do_clone3(void)
{
	struct clone_args args = {.exit_signal = SIGCHLD};
	long pid = syscall(SYS_clone3, &args, sizeof(args));

	if (pid == 0)
		syscall(SYS_exit, 0);
	if (pid > 0)
		waitpid((pid_t)pid, NULL, 0);
	return pid < 0 ? -1 : 0;
}

static int do_keyctl(void)
{
	return (int)syscall(SYS_keyctl, KEYCTL_GET_KEYRING_ID, KEY_SPEC_SESSION_KEYRING, 0);
}

static int do_add_key(void)
{
	return (int)syscall(SYS_add_key, "user", "paddock-probe", "x", 1, KEY_SPEC_PROCESS_KEYRING);
}

static int do_bpf(void)
{
	union bpf_attr attr;

	memset(&attr, 0, sizeof(attr));
	attr.map_type = BPF_MAP_TYPE_ARRAY;
	attr.key_size = 4;
	attr.value_size = 4;
	attr.max_entries = 1;
	return (int)syscall(SYS_bpf, BPF_MAP_CREATE, &attr, sizeof(attr));
}

static int do_perf(void)
{
	struct perf_event_attr attr;

	memset(&attr, 0, sizeof(attr));
	attr.size = sizeof(attr);
	attr.type = PERF_TYPE_SOFTWARE;
	attr.config = PERF_COUNT_SW_TASK_CLOCK;
	attr.disabled = 1;
	attr.exclude_kernel = 1;
	attr.exclude_hv = 1;
	return (int)syscall(SYS_perf_event_open, &attr, 0, -1, -1, 0);
}

static int do_userfaultfd(void)
{
	return (int)syscall(SYS_userfaultfd, O_CLOEXEC | UFFD_USER_MODE_ONLY);
}

static int do_io_uring(void)
{
	struct io_uring_params params;

	memset(&params, 0, sizeof(params));
	return (int)syscall(SYS_io_uring_setup, 1, &params);
}

static int do_traceme(void)
{
	return (int)ptrace(PTRACE_TRACEME, 0, NULL, NULL);
}

static int do_vsock(void)
{
	return socket(AF_VSOCK, SOCK_STREAM | SOCK_CLOEXEC, 0);
}

static int do_alg(void)
{
	return socket(AF_ALG, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
}

static int do_personality(void)
{
	return personality(ADDR_NO_RANDOMIZE) < 0 ? -1 : 0;
}

static int do_tiocsti(void)
{
	char c = '\n';

	return ioctl(0, TIOCSTI, &c);
}

static int do_name_to_handle(void)
{
	char buf[sizeof(struct file_handle) + MAX_HANDLE_SZ];
	struct file_handle *fh = (struct file_handle *)buf;
	int mnt;

	fh->handle_bytes = MAX_HANDLE_SZ;
	return name_to_handle_at(AT_FDCWD, "/", fh, &mnt, 0);
}

/* The "shocker" call (Docker, 2014): a file handle opens any inode of the
 * file system, whatever the mounts show. */
static int do_open_by_handle(void)
{
	char buf[sizeof(struct file_handle) + MAX_HANDLE_SZ];
	struct file_handle *fh = (struct file_handle *)buf;
	int mnt, fd;

	fh->handle_bytes = MAX_HANDLE_SZ;
	/* A handle for "/" when name_to_handle_at is allowed; otherwise
	 * an empty one (the call is refused before it is looked at). */
	if (name_to_handle_at(AT_FDCWD, "/", fh, &mnt, 0) < 0)
		fh->handle_bytes = 0;
	fd = open_by_handle_at(AT_FDCWD, fh, O_RDONLY | O_CLOEXEC);
	return fd < 0 ? -1 : 0;
}

static int do_kcmp(void)
{
	return (int)syscall(SYS_kcmp, getpid(), getpid(), KCMP_FILE, 0, 0) < 0 ? -1 : 0;
}

static int do_process_vm_readv(void)
{
	char src[4] = "abc", dst[4];
	struct iovec l = {dst, sizeof(dst)}, r = {src, sizeof(src)};

	return process_vm_readv(getpid(), &l, 1, &r, 1, 0) < 0 ? -1 : 0;
}

static int do_setns(void)
{
	int fd = open("/proc/self/ns/uts", O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return -1;
	return setns(fd, CLONE_NEWUTS);
}

static int do_chroot(void)
{
	return chroot("/");
}

/* getpid through the 32-bit entry point (int 0x80; 20 is i386 getpid). */
static int do_int80(void)
{
#if defined(__x86_64__)
	long ret = 20;

	__asm__ volatile("int $0x80" : "+a"(ret) : : "memory");
	if (ret < 0) {
		errno = (int)-ret;
		return -1;
	}
	return 0;
#else
	errno = ENOSYS;
	return -1;
#endif
}

/* getpid through the x32 entry point (bit 30 set). */
static int do_x32(void)
{
#if defined(__x86_64__)
	return syscall(0x40000000 | SYS_getpid) < 0 ? -1 : 0;
#else
	errno = ENOSYS;
	return -1;
#endif
}

static const struct {
	const char *name;
	int (*fn)(void);
} calls[] = {
    {"mount", do_mount},
    {"fsopen", do_fsopen},
    {"unshare_user", do_unshare_user},
    {"unshare_mount", do_unshare_mount},
    {"clone_newuser", do_clone_newuser},
    {"setns", do_setns},
    {"keyctl", do_keyctl},
    {"add_key", do_add_key},
    {"bpf", do_bpf},
    {"perf_event_open", do_perf},
    {"userfaultfd", do_userfaultfd},
    {"io_uring_setup", do_io_uring},
    {"ptrace_traceme", do_traceme},
    {"process_vm_readv", do_process_vm_readv},
    {"kcmp", do_kcmp},
    {"name_to_handle_at", do_name_to_handle},
    {"open_by_handle_at", do_open_by_handle},
    {"chroot", do_chroot},
    {"socket_vsock", do_vsock},
    {"socket_alg", do_alg},
    {"clone3", do_clone3},
    {"personality", do_personality},
    {"tiocsti", do_tiocsti},
    {"int80", do_int80},
    {"x32", do_x32},
};

static void print_calls(void)
{
	for (size_t i = 0; i < sizeof(calls) / sizeof(calls[0]); i++)
		in_child(calls[i].name, calls[i].fn);
}

/* ------------------------------------------- nested user namespace */

static int write_text(const char *path, const char *text)
{
	int fd = open(path, O_WRONLY | O_CLOEXEC);
	ssize_t n;

	if (fd < 0)
		return -1;
	n = write(fd, text, strlen(text));
	close(fd);
	return n == (ssize_t)strlen(text) ? 0 : -1;
}

static void print_nested(void)
{
	int pfd[2], ws = 0;
	char buf[256] = "";
	ssize_t n;
	pid_t pid;

	if (pipe(pfd) < 0) {
		printf("nested.unshare=pipe-%s\n", errno_name(errno));
		return;
	}
	fflush(stdout);
	pid = fork();
	if (pid == 0) {
		char map[64];
		uid_t uid = getuid();
		gid_t gid = getgid();

		close(pfd[0]);
		if (unshare(CLONE_NEWUSER | CLONE_NEWNS) < 0) {
			dprintf(pfd[1], "nested.unshare=%s\nnested.mount=SKIPPED\n",
				errno_name(errno));
			_exit(0);
		}
		dprintf(pfd[1], "nested.unshare=OK\n");
		snprintf(map, sizeof(map), "0 %u 1\n", (unsigned)uid);
		(void)write_text("/proc/self/setgroups", "deny");
		if (write_text("/proc/self/uid_map", map) < 0)
			dprintf(pfd[1], "nested.uid_map=%s\n", errno_name(errno));
		snprintf(map, sizeof(map), "0 %u 1\n", (unsigned)gid);
		(void)write_text("/proc/self/gid_map", map);
		if (mount("none", "/tmp", "tmpfs", 0, NULL) < 0)
			dprintf(pfd[1], "nested.mount=%s\n", errno_name(errno));
		else
			dprintf(pfd[1], "nested.mount=OK\n");
		_exit(0);
	}
	close(pfd[1]);
	while ((n = read(pfd[0], buf, sizeof(buf) - 1)) > 0) {
		buf[n] = '\0';
		fputs(buf, stdout);
	}
	close(pfd[0]);
	if (pid > 0)
		waitpid(pid, &ws, 0);
}

static void serve_one(int c, const char *marker)
{
	char buf[65536], line[32];
	unsigned long long total = 0;
	ssize_t n;

	if (dprintf(c, "%s\n", marker) < 0)
		_exit(1);
	while ((n = read(c, buf, sizeof(buf))) > 0)
		total += (unsigned long long)n;
	snprintf(line, sizeof(line), "%llu\n", total);
	(void)!write(c, line, strlen(line));
	_exit(0);
}

static const char sw_js[] =
    "self.addEventListener('install',e=>{self.skipWaiting();"
    "e.waitUntil(caches.open('v').then(c=>c.add('/')))});\n"
    "self.addEventListener('activate',e=>e.waitUntil(self.clients.claim()));\n"
    "self.addEventListener('fetch',e=>e.respondWith("
    "caches.match(e.request).then(r=>r||fetch(e.request))));\n";

static void http_one(int c, const char *mode, const char *marker)
{
	char req[8192], body[4096], head[1024];
	size_t len = 0;
	ssize_t n;
	const char *type = "text/html", *status = "200 OK", *cache = "no-store";
	int bl = 0, hl;

	while (len < sizeof(req) - 1 && (n = read(c, req + len, sizeof(req) - 1 - len)) > 0) {
		len += (size_t)n;
		req[len] = '\0';
		if (strstr(req, "\r\n\r\n") || strstr(req, "\n\n"))
			break;
	}
	req[len] = '\0';
	if (strncmp(req, "GET / ", 6) == 0 || strncmp(req, "HEAD / ", 7) == 0) {
		if (strchr(mode, 'c'))
			cache = "max-age=3600";
		bl = snprintf(body, sizeof(body),
			      "<!doctype html><html><head><title>%s</title></head><body>"
			      "<h1 id=\"marker\">%s</h1>%s</body></html>\n",
			      marker, marker,
			      strchr(mode, 's')
				  ? "<script>navigator.serviceWorker.register('/sw.js')"
				    "</script>"
				  : "");
	} else if (strncmp(req, "GET /sw.js ", 11) == 0) {
		type = "application/javascript";
		cache = "no-cache";
		bl = snprintf(body, sizeof(body), "%s", sw_js);
	} else {
		status = "404 Not Found";
		bl = snprintf(body, sizeof(body), "not found\n");
	}
	hl = snprintf(head, sizeof(head),
		      "HTTP/1.1 %s\r\nContent-Type: %s\r\nContent-Length: %d\r\n"
		      "Cache-Control: %s\r\n%s\r\n",
		      status, type, bl, cache,
		      strchr(mode, 'f') ? "Paddock-Lease: session=forged; service=x; gen=99; "
					  "nonce=0000\r\nConnection: keep-alive\r\n"
					: "Connection: close\r\n");
	(void)!write(c, head, (size_t)hl);
	if (strncmp(req, "HEAD ", 5) != 0)
		(void)!write(c, body, (size_t)bl);
	shutdown(c, SHUT_WR);
	while (read(c, req, sizeof(req)) > 0)
		;
	_exit(0);
}

static int listen_loopback(int family, int port)
{
	struct sockaddr_in in4 = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
	struct sockaddr_in6 in6 = {.sin6_family = AF_INET6, .sin6_port = htons((uint16_t)port)};
	int fd = socket(family, SOCK_STREAM | SOCK_CLOEXEC, 0), one = 1;

	in4.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	in6.sin6_addr = in6addr_loopback;
	if (fd < 0)
		return -1;
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (family == AF_INET6)
		setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &one, sizeof(one));
	if ((family == AF_INET ? bind(fd, (struct sockaddr *)&in4, sizeof(in4))
			       : bind(fd, (struct sockaddr *)&in6, sizeof(in6))) < 0 ||
	    listen(fd, 64) < 0) {
		close(fd);
		return -1;
	}
	return fd;
}

static void serve(const char *key, const char *spec, bool http)
{
	int port = atoi(spec);
	const char *marker = strchr(spec, ':');
	char mode[16] = "";

	if (http && marker) {
		const char *m = marker + 1, *end = strchr(m, ':');

		if (!end || (size_t)(end - m) >= sizeof(mode)) {
			printf("%s=UNKNOWN-REQUEST\n", key);
			exit(2);
		}
		memcpy(mode, m, (size_t)(end - m));
		mode[end - m] = '\0';
		marker = end;
	}
	struct pollfd pfd[2];
	int n = 0, fd;

	if (port <= 0 || port > 65535 || !marker) {
		printf("%s=UNKNOWN-REQUEST\n", key);
		exit(2);
	}
	marker++;
	fd = listen_loopback(AF_INET, port);
	if (fd < 0) {
		result(key, 0);
		exit(1);
	}
	pfd[n++] = (struct pollfd){.fd = fd, .events = POLLIN};
	fd = listen_loopback(AF_INET6, port); /* optional: no IPv6, no [::1] */
	if (fd >= 0)
		pfd[n++] = (struct pollfd){.fd = fd, .events = POLLIN};
	printf("%s=listening\n", key);
	fflush(stdout);
	signal(SIGCHLD, SIG_IGN); /* children are reaped by the kernel */
	signal(SIGPIPE, SIG_IGN);
	for (;;) {
		if (poll(pfd, (nfds_t)n, -1) < 0)
			continue;
		for (int i = 0; i < n; i++) {
			int c;

			if (!(pfd[i].revents & POLLIN))
				continue;
			c = accept4(pfd[i].fd, NULL, NULL, SOCK_CLOEXEC);
			if (c < 0)
				continue;
			if (fork() == 0) {
				if (http)
					http_one(c, mode, marker);
				serve_one(c, marker);
			}
			close(c);
		}
	}
}

/* tcpbind:PORT, tcpconnect:PORT on 127.0.0.1. */
static void print_tcp(const char *key, const char *port, bool bind_it)
{
	struct sockaddr_in sa = {.sin_family = AF_INET,
				 .sin_port = htons((uint16_t)atoi(port)),
				 .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	bool ok = fd >= 0 && (bind_it ? bind(fd, (struct sockaddr *)&sa, sizeof(sa))
				      : connect(fd, (struct sockaddr *)&sa, sizeof(sa))) == 0;
	int e = errno;

	if (fd >= 0)
		close(fd);
	errno = e;
	result(key, ok);
}

int main(int argc, char **argv)
{
	int rc = 0;

	printf("pid=%d\n", (int)getpid());
	printf("uid=%u\ngid=%u\n", (unsigned)getuid(), (unsigned)getgid());
	print_map("uid_map", "/proc/self/uid_map");
	print_map("gid_map", "/proc/self/gid_map");
	if (print_status() < 0)
		rc = 1;
	if (print_fds() < 0)
		rc = 1;
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];
		const char *colon = strchr(a, ':');
		const char *v = colon ? colon + 1 : "";
		size_t klen = colon ? (size_t)(colon - a) : strlen(a);

#define IS(k) (klen == strlen(k) && strncmp(a, k, klen) == 0)
		if (IS("w") && colon) {
			int fd = open(v, O_WRONLY | O_CREAT | O_CLOEXEC | O_NOCTTY, 0644);

			result(a, fd >= 0);
			if (fd >= 0)
				close(fd);
		} else if (IS("ow") && colon) {
			int fd = open(v, O_WRONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);

			result(a, fd >= 0);
			if (fd >= 0)
				close(fd);
		} else if (IS("ot") && colon) {
			int fd = open(v, O_WRONLY | O_TRUNC | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);

			result(a, fd >= 0);
			if (fd >= 0)
				close(fd);
		} else if (IS("stat") && colon) {
			print_stat(a, v);
		} else if (IS("r") && colon) {
			print_read(a, v);
		} else if (IS("readlink") && colon) {
			print_readlink(a, v);
		} else if (IS("ls") && colon) {
			print_dir(a, v);
		} else if (IS("mnt") && colon) {
			print_mount(a, v);
		} else if (IS("mknod") && colon) {
			result(a, mknod(v, S_IFCHR | 0666, makedev(1, 3)) == 0);
		} else if (IS("fifo") && colon) {
			result(a, mkfifo(v, 0644) == 0);
		} else if (IS("kill") && colon) {
			result(a, kill((pid_t)atoi(v), 0) == 0);
		} else if (IS("kill9") && colon) {
			result(a, kill((pid_t)atoi(v), SIGKILL) == 0);
		} else if (IS("ptrace") && colon) {
			result(a, ptrace(PTRACE_SEIZE, (pid_t)atoi(v), NULL, NULL) == 0);
		} else if (IS("getfd") && colon && strchr(v, ':')) {
			int pidfd = (int)syscall(SYS_pidfd_open, (pid_t)atoi(v), 0);
			int fd = pidfd < 0 ? -1
					   : (int)syscall(SYS_pidfd_getfd, pidfd,
							  atoi(strchr(v, ':') + 1), 0);

			result(a, fd >= 0);
			if (fd >= 0)
				close(fd);
			if (pidfd >= 0)
				close(pidfd);
		} else if ((IS("tcpbind") || IS("tcpconnect")) && colon) {
			print_tcp(a, v, IS("tcpbind"));
		} else if (IS("dev") && !colon) {
			print_dir("dev", "/dev");
		} else if (IS("calls") && !colon) {
			print_calls();
		} else if (IS("nested") && !colon) {
			print_nested();
		} else if (IS("serve") && colon) {
			serve(a, v, false);
		} else if (IS("http") && colon) {
			serve(a, v, true);
		} else {
			printf("%s=UNKNOWN-REQUEST\n", a);
			rc = 2;
		}
#undef IS
		fflush(stdout);
	}
	return rc;
}
