/* Unit tests for launcher/sandbox/landlock.c against the running kernel. No mounts
 * and no namespaces: the "sandbox paths" of a hand-built plan are real
 * directories in a temporary directory, /dev and /proc of the host. Each
 * restriction happens in a forked child (a Landlock domain cannot be left),
 * which reports the first failed check through a pipe. The kernel's ABI is
 * faked with a small seccomp filter in a child: SCMP_ACT_ERRNO for "no
 * Landlock" (crun's tests/no_openat2.c approach) and a user-notification
 * responder for "an older ABI". */
#include <criterion/criterion.h>
#include <fcntl.h>
#include <ftw.h>
#include <netinet/in.h>
#include <pthread.h>
#include <seccomp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../../include/landlock.h"
#include "../../launcher/sandbox/sandbox.h"
#include "unit.h"

#define FS(x) LANDLOCK_ACCESS_FS_##x

/* ---- fixture: a temporary tree, removed even when a test fails ---- */

static char base[64];

static const char *at(const char *rel)
{
	static char bufs[4][256];
	static int next;
	char *b = bufs[next++ % 4];

	snprintf(b, sizeof(bufs[0]), "%s/%s", base, rel);
	return b;
}

static void put_file(const char *rel)
{
	int fd = open(at(rel), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);

	cr_assert_geq(fd, 0, "create %s: %s", rel, strerror(errno));
	cr_assert_eq(write(fd, "x", 1), 1);
	close(fd);
}

static void make_tree(void)
{
	static const char *const dirs[] = {"rw", "rw/sub", "ro", "other", "tmp", "skipped"};

	snprintf(base, sizeof(base), "/tmp/paddock-landlock-XXXXXX");
	cr_assert_not_null(mkdtemp(base), "mkdtemp: %s", strerror(errno));
	for (size_t i = 0; i < sizeof(dirs) / sizeof(dirs[0]); i++)
		cr_assert_eq(mkdir(at(dirs[i]), 0755), 0, "mkdir %s: %s", dirs[i], strerror(errno));
	put_file("rw/f");
	put_file("ro/f");
	put_file("other/f");
	put_file("file.rw");
	cr_assert_eq(symlink("other", at("link")), 0);
}

static int rm_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st;
	(void)ftw;
	if (flag == FTW_DP)
		rmdir(path);
	else
		unlink(path);
	return 0;
}

static void remove_tree(void)
{
	if (base[0] && strncmp(base, "/tmp/paddock-landlock-", 22) == 0)
		nftw(base, rm_entry, 16, FTW_PHYS | FTW_DEPTH);
	base[0] = '\0';
	unit_leak_check();
}

TestSuite(landlock_names, .fini = unit_leak_check);
TestSuite(landlock_prepare, .fini = unit_leak_check);
TestSuite(landlock_fs, .init = make_tree, .fini = remove_tree);
TestSuite(landlock_net, .fini = unit_leak_check);
TestSuite(landlock_scope, .fini = unit_leak_check);

static int kernel_abi(void)
{
	int r = sys_landlock_create_ruleset(NULL, 0, LANDLOCK_CREATE_RULESET_VERSION);

	return r > 0 ? r : 0;
}

/* ---- plans and policies built by hand ---- */

static struct mount_op *plan_add(struct mount_plan *plan, enum mount_op_kind kind,
				 const char *target, bool readonly)
{
	struct mount_op *ops = realloc(plan->ops, (plan->n + 1) * sizeof(*ops));

	cr_assert_not_null(ops);
	plan->ops = ops;
	ops[plan->n] = (struct mount_op){.kind = kind, .readonly = readonly};
	ops[plan->n].target = strdup(target);
	cr_assert_not_null(ops[plan->n].target);
	return &ops[plan->n++];
}

static const struct landlock_rule *find_rule(const struct landlock_info *li, const char *path)
{
	for (size_t i = 0; i < li->n_rules; i++)
		if (strcmp(li->rules[i].path, path) == 0)
			return &li->rules[i];
	return NULL;
}

/* ---- running checks inside a Landlock domain ---- */

static int report_fd = -1;

__attribute__((format(printf, 2, 3), noreturn)) static void child_fail(int line, const char *fmt,
								       ...)
{
	char msg[600];
	va_list ap;
	int n = snprintf(msg, sizeof(msg), "line %d: ", line);

	va_start(ap, fmt);
	vsnprintf(msg + n, sizeof(msg) - n, fmt, ap);
	va_end(ap);
	if (write(report_fd, msg, strlen(msg)) < 0)
		_exit(2);
	_exit(1);
}

#define CHECK(cond, ...)                                   \
	do {                                               \
		if (!(cond))                               \
			child_fail(__LINE__, __VA_ARGS__); \
	} while (0)
/* expr must succeed (>= 0). */
#define OK(expr)                                                  \
	do {                                                      \
		long r_;                                          \
		errno = 0;                                        \
		r_ = (long)(expr);                                \
		CHECK(r_ >= 0, "%s: %s", #expr, strerror(errno)); \
	} while (0)
/* expr must fail with errno e (or e2). */
#define FAILS2(expr, e, e2)                                                                   \
	do {                                                                                  \
		long r_;                                                                      \
		errno = 0;                                                                    \
		r_ = (long)(expr);                                                            \
		CHECK(r_ < 0 && (errno == (e) || errno == (e2)), "%s: want %s, got %ld (%s)", \
		      #expr, strerror(e), r_, strerror(errno));                               \
	} while (0)
#define FAILS(expr, e) FAILS2(expr, e, e)

/* open() and close: 0 or -1 with errno, so no fd is left behind. */
static int try_open(const char *path, int flags)
{
	int fd = open(path, flags | O_CLOEXEC, 0644);

	if (fd < 0)
		return -1;
	close(fd);
	return 0;
}

static int write_to(const char *path, int flags, const char *text)
{
	int fd = open(path, flags | O_CLOEXEC, 0644);
	ssize_t n;

	if (fd < 0)
		return -1;
	n = write(fd, text, strlen(text));
	close(fd);
	return n == (ssize_t)strlen(text) ? 0 : -1;
}

/* Fork; in the child set no_new_privs, apply info and run body; the parent
 * asserts that every check passed. */
static void run_sandboxed(const struct landlock_info *info, void (*body)(void))
{
	char msg[600] = "";
	size_t got = 0;
	int pfd[2], status = 0;
	pid_t pid;

	cr_assert_eq(pipe2(pfd, O_CLOEXEC), 0);
	pid = fork();
	cr_assert_geq(pid, 0, "fork: %s", strerror(errno));
	if (pid == 0) {
		struct err err = {0};

		close(pfd[0]);
		report_fd = pfd[1];
		/* landlock_restrict_self(2): without no_new_privs, EPERM
		 * (unless CAP_SYS_ADMIN, which tests run as root would have). */
		CHECK(prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) == 0, "no_new_privs: %s",
		      strerror(errno));
		CHECK(landlock_apply(info, &err) == 0, "landlock_apply: %s", err.msg);
		body();
		_exit(0);
	}
	close(pfd[1]);
	for (ssize_t n;
	     got < sizeof(msg) - 1 && (n = read(pfd[0], msg + got, sizeof(msg) - 1 - got)) > 0;)
		got += (size_t)n;
	close(pfd[0]);
	cr_assert_eq(waitpid(pid, &status, 0), pid);
	cr_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0, "in the sandbox: %s (status %#x)",
		  msg, status);
}

/* ---- names ---- */

Test(landlock_names, every_fs_right_has_a_name)
{
	cr_assert_str_eq(landlock_access_name(FS(WRITE_FILE)), "write_file");
	cr_assert_str_eq(landlock_access_name(FS(MAKE_DIR)), "make_dir");
	cr_assert_str_eq(landlock_access_name(FS(REFER)), "refer");
	cr_assert_str_eq(landlock_access_name(FS(TRUNCATE)), "truncate");
	cr_assert_str_eq(landlock_access_name(FS(IOCTL_DEV)), "ioctl_dev");
	for (int b = 0; b <= 15; b++)
		cr_assert_not_null(landlock_access_name(1ull << b), "bit %d", b);
	cr_assert_null(landlock_access_name(1ull << 16));
	cr_assert_null(landlock_access_name(FS(WRITE_FILE) | FS(MAKE_DIR)), "one bit at a time");
	cr_assert_str_eq(landlock_net_access_name(LANDLOCK_ACCESS_NET_BIND_TCP), "bind_tcp");
	cr_assert_str_eq(landlock_net_access_name(LANDLOCK_ACCESS_NET_CONNECT_TCP), "connect_tcp");
	cr_assert_null(landlock_net_access_name(1ull << 2));
}

Test(landlock_names, compat_header_layout)
{
	/* The kernel's sizes (build_check_abi(), security/landlock/syscalls.c). */
	cr_assert_eq(sizeof(struct paddock_landlock_ruleset_attr), 24);
	cr_assert_eq(sizeof(struct paddock_landlock_path_beneath_attr), 12);
	cr_assert_eq(sizeof(struct paddock_landlock_net_port_attr), 16);
	cr_assert_eq(LANDLOCK_RULE_PATH_BENEATH, 1);
	cr_assert_eq(LANDLOCK_RULE_NET_PORT, 2);
}

/* ---- prepare: rules from the plan ---- */

Test(landlock_prepare, rules_follow_the_plan)
{
	struct policy p = {0};
	struct mount_plan plan = {0};
	struct landlock_info li = {0};
	struct err err = {0};
	const struct landlock_rule *r;
	uint64_t all;

	if (kernel_abi() < 5)
		cr_skip_test("needs Landlock ABI 5, the kernel has %d", kernel_abi());
	plan_add(&plan, MOUNT_OP_BIND, "/usr", true);
	plan_add(&plan, MOUNT_OP_BIND, "/work", false);
	plan_add(&plan, MOUNT_OP_BIND, "/work/data", true);
	plan_add(&plan, MOUNT_OP_BIND, "/opt", false)->optional = true;
	plan_add(&plan, MOUNT_OP_BIND, "/gone", false)->skipped = true;
	plan_add(&plan, MOUNT_OP_BIND, "/lnk", false)->as_symlink = true;
	plan_add(&plan, MOUNT_OP_BIND, "/maybe-link", false)->copy_symlink = true;
	plan_add(&plan, MOUNT_OP_TMPFS, "/tmp", false);
	plan_add(&plan, MOUNT_OP_PROC, "/proc", false);
	plan_add(&plan, MOUNT_OP_DEV, "/dev", false);
	plan_add(&plan, MOUNT_OP_DIR, "/home", false);
	plan_add(&plan, MOUNT_OP_SYMLINK, "/bin", false);
	plan_add(&plan, MOUNT_OP_PROTECT, "/work/.git/hooks", true);

	cr_assert_eq(landlock_prepare(&p, &plan, &li, &err), 0, "%s", err.msg);
	cr_assert(li.enabled);
	cr_assert_eq(li.abi, kernel_abi());
	all = li.handled_fs;
	cr_assert_eq(all & (FS(EXECUTE) | FS(READ_FILE) | FS(READ_DIR)), 0,
		     "reads and execute are not handled");
	cr_assert_eq(all & (FS(WRITE_FILE) | FS(MAKE_REG) | FS(REMOVE_FILE) | FS(REFER) |
			    FS(TRUNCATE) | FS(IOCTL_DEV)),
		     FS(WRITE_FILE) | FS(MAKE_REG) | FS(REMOVE_FILE) | FS(REFER) | FS(TRUNCATE) |
			 FS(IOCTL_DEV));
	cr_assert_eq(li.handled_net, 0, "no tcp section: TCP not handled");

	cr_assert_null(find_rule(&li, "/usr"), "a read-only bind gets no rule");
	cr_assert_null(find_rule(&li, "/work/data"));
	cr_assert_null(find_rule(&li, "/gone"), "a skipped bind gets no rule");
	cr_assert_null(find_rule(&li, "/lnk"), "a bind recreated as a symlink gets no rule");
	cr_assert_null(find_rule(&li, "/home"));
	cr_assert_null(find_rule(&li, "/bin"));
	cr_assert_null(find_rule(&li, "/work/.git/hooks"));
	cr_assert_not_null(r = find_rule(&li, "/work"));
	cr_assert_eq(r->access, all);
	cr_assert_not(r->optional);
	cr_assert_not_null(r = find_rule(&li, "/opt"));
	cr_assert(r->optional);
	cr_assert_not_null(r = find_rule(&li, "/maybe-link"));
	cr_assert(r->optional, "a copy-symlink bind may turn out to be a symlink");
	cr_assert_not_null(r = find_rule(&li, "/tmp"));
	cr_assert_eq(r->access, all);
	cr_assert_not_null(r = find_rule(&li, "/proc"));
	cr_assert_eq(r->access, FS(WRITE_FILE) | FS(TRUNCATE));
	cr_assert_not_null(r = find_rule(&li, "/dev/shm"));
	cr_assert_eq(r->access, all);
	cr_assert_not_null(r = find_rule(&li, "/dev/null"));
	cr_assert_eq(r->access, FS(WRITE_FILE) | FS(TRUNCATE) | FS(IOCTL_DEV));
	cr_assert_not_null(r = find_rule(&li, "/dev/pts"));
	cr_assert_eq(r->access, FS(WRITE_FILE) | FS(TRUNCATE) | FS(IOCTL_DEV));
	for (size_t i = 0; i < li.n_rules; i++)
		cr_assert_neq(li.rules[i].access, 0);
	cr_assert_eq(li.n_rules, 1 /* work */ + 2 /* opt, maybe-link */ + 1 /* tmp */ +
				     1 /* proc */ + 8 /* dev */);
	cr_assert_null(find_rule(&li, "/dev"), "the /dev tmpfs itself stays read-only");

	landlock_info_free(&li);
	landlock_info_free(&li); /* freed twice: a no-op */
	landlock_info_free(NULL);
	mounts_plan_free(&plan);
}

Test(landlock_prepare, dev_at_the_root_joins_paths)
{
	struct policy p = {0};
	struct mount_plan plan = {0};
	struct landlock_info li = {0};
	struct err err = {0};

	if (!kernel_abi())
		cr_skip_test("no Landlock");
	plan_add(&plan, MOUNT_OP_DEV, "/", false);
	cr_assert_eq(landlock_prepare(&p, &plan, &li, &err), 0, "%s", err.msg);
	cr_assert_not_null(find_rule(&li, "/shm"));
	cr_assert_not_null(find_rule(&li, "/null"));
	landlock_info_free(&li);
	mounts_plan_free(&plan);
}

Test(landlock_prepare, tcp_ports_are_copied)
{
	uint16_t bind_ports[] = {8080}, connect_ports[] = {443, 80};
	struct policy p = {.landlock_tcp = true,
			   .landlock_tcp_bind = bind_ports,
			   .n_landlock_tcp_bind = 1,
			   .landlock_tcp_connect = connect_ports,
			   .n_landlock_tcp_connect = 2};
	struct mount_plan plan = {0};
	struct landlock_info li = {0};
	struct err err = {0};

	if (kernel_abi() < 4)
		cr_skip_test("needs Landlock ABI 4");
	cr_assert_eq(landlock_prepare(&p, &plan, &li, &err), 0, "%s", err.msg);
	cr_assert_eq(li.handled_net,
		     LANDLOCK_ACCESS_NET_BIND_TCP | LANDLOCK_ACCESS_NET_CONNECT_TCP);
	cr_assert_eq(li.n_tcp_bind, 1);
	cr_assert_eq(li.tcp_bind[0], 8080);
	cr_assert_neq(li.tcp_bind, bind_ports, "a copy, not the policy's array");
	cr_assert_eq(li.n_tcp_connect, 2);
	cr_assert_eq(li.tcp_connect[1], 80);
	landlock_info_free(&li);
}

/* ---- prepare on a kernel that looks different: seccomp in a child ---- */

struct fake_result {
	int r;
	struct err err;
	int abi;
	bool enabled;
	uint64_t handled_fs, handled_net, scoped;
	size_t n_rules;
	uint64_t dev_null_access;
};

struct responder {
	int fd;
	int abi;
};

/* Answer every trapped landlock_create_ruleset with the ABI version. */
static void *respond(void *arg)
{
	const struct responder *rs = arg;
	struct seccomp_notif *req = NULL;
	struct seccomp_notif_resp *resp = NULL;

	if (seccomp_notify_alloc(&req, &resp) < 0)
		return NULL;
	while (seccomp_notify_receive(rs->fd, req) == 0) {
		resp->id = req->id;
		resp->val = rs->abi;
		resp->error = 0;
		resp->flags = 0;
		if (seccomp_notify_respond(rs->fd, resp) < 0)
			break;
	}
	seccomp_notify_free(req, resp);
	return NULL;
}

/* answer > 0: the probe returns that ABI version; answer < 0: it fails
 * with -answer. The prepare runs in a child, whose filter cannot be
 * removed; the result comes back through a pipe. */
static struct fake_result prepare_faked(int answer, const struct policy *p)
{
	struct fake_result res = {0};
	int pfd[2], status = 0;
	pid_t pid;

	cr_assert_eq(pipe2(pfd, O_CLOEXEC), 0);
	pid = fork();
	cr_assert_geq(pid, 0);
	if (pid == 0) {
		struct mount_plan plan = {0};
		struct landlock_info li = {0};
		struct responder rs = {.fd = -1, .abi = answer};
		scmp_filter_ctx ctx = seccomp_init(SCMP_ACT_ALLOW);
		pthread_t thread;
		const struct landlock_rule *null_rule;

		close(pfd[0]);
		if (!ctx ||
		    seccomp_rule_add(ctx, answer > 0 ? SCMP_ACT_NOTIFY : SCMP_ACT_ERRNO(-answer),
				     SCMP_SYS(landlock_create_ruleset), 0) < 0 ||
		    seccomp_load(ctx) < 0)
			_exit(3);
		/* The responder thread is created after the load and so
		 * inherits the filter, but it never calls the trapped
		 * syscall. */
		if (answer > 0 && ((rs.fd = seccomp_notify_fd(ctx)) < 0 ||
				   pthread_create(&thread, NULL, respond, &rs) != 0))
			_exit(4);
		plan.ops = calloc(1, sizeof(*plan.ops));
		plan.ops[0] = (struct mount_op){.kind = MOUNT_OP_DEV, .target = strdup("/dev")};
		plan.n = 1;
		res.r = landlock_prepare(p, &plan, &li, &res.err);
		res.abi = li.abi;
		res.enabled = li.enabled;
		res.handled_fs = li.handled_fs;
		res.handled_net = li.handled_net;
		res.scoped = li.scoped;
		res.n_rules = li.n_rules;
		null_rule = find_rule(&li, "/dev/null");
		res.dev_null_access = null_rule ? null_rule->access : 0;
		if (write(pfd[1], &res, sizeof(res)) != sizeof(res))
			_exit(5);
		_exit(0);
	}
	close(pfd[1]);
	cr_assert_eq(read(pfd[0], &res, sizeof(res)), (ssize_t)sizeof(res),
		     "no result from the child");
	close(pfd[0]);
	cr_assert_eq(waitpid(pid, &status, 0), pid);
	cr_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0, "child status %#x", status);
	return res;
}

Test(landlock_prepare, required_without_landlock_is_an_error)
{
	struct policy p = {.landlock_mode = POLICY_LANDLOCK_REQUIRED};
	struct fake_result res = prepare_faked(-ENOSYS, &p);

	cr_assert_eq(res.r, -EOPNOTSUPP);
	cr_assert_eq(res.err.code, EOPNOTSUPP);
	cr_assert(strstr(res.err.msg, "landlock: required by the policy, but this kernel has no "
				      "Landlock ("),
		  "%s", res.err.msg);
	cr_assert(strstr(res.err.msg, "CONFIG_SECURITY_LANDLOCK"), "%s", res.err.msg);
	cr_assert_not(res.enabled);

	res = prepare_faked(-EOPNOTSUPP, &p);
	cr_assert_eq(res.r, -EOPNOTSUPP);
	cr_assert(strstr(res.err.msg, "lsm="), "disabled at boot: %s", res.err.msg);
}

Test(landlock_prepare, best_effort_without_landlock_is_disabled)
{
	struct policy p = {.landlock_mode = POLICY_LANDLOCK_BEST_EFFORT, .landlock_tcp = true};
	struct fake_result res = prepare_faked(-ENOSYS, &p);

	cr_assert_eq(res.r, 0, "%s", res.err.msg);
	cr_assert_not(res.enabled);
	cr_assert_eq(res.abi, 0);
	cr_assert_eq(res.n_rules, 0);
	cr_assert_eq(res.handled_fs | res.handled_net | res.scoped, 0);
}

/* What each ABI version adds, as the kernel documents it. */
Test(landlock_prepare, rights_follow_the_abi)
{
	static const struct {
		int abi;
		uint64_t fs_extra; /* beyond the ABI 1 write rights */
		bool net, scoped;
	} table[] = {
	    {1, 0, false, false},
	    {2, FS(REFER), false, false},
	    {3, FS(REFER) | FS(TRUNCATE), false, false},
	    {4, FS(REFER) | FS(TRUNCATE), true, false},
	    {5, FS(REFER) | FS(TRUNCATE) | FS(IOCTL_DEV), true, false},
	    {6, FS(REFER) | FS(TRUNCATE) | FS(IOCTL_DEV), true, true},
	    {7, FS(REFER) | FS(TRUNCATE) | FS(IOCTL_DEV), true, true},
	};
	const uint64_t abi1 = FS(WRITE_FILE) | FS(REMOVE_DIR) | FS(REMOVE_FILE) | FS(MAKE_CHAR) |
			      FS(MAKE_DIR) | FS(MAKE_REG) | FS(MAKE_SOCK) | FS(MAKE_FIFO) |
			      FS(MAKE_BLOCK) | FS(MAKE_SYM);
	struct policy p = {.landlock_tcp = true};

	for (size_t i = 0; i < sizeof(table) / sizeof(table[0]); i++) {
		struct fake_result res = prepare_faked(table[i].abi, &p);

		cr_assert_eq(res.r, 0, "ABI %d: %s", table[i].abi, res.err.msg);
		cr_assert(res.enabled);
		cr_assert_eq(res.abi, table[i].abi);
		cr_assert_eq(res.handled_fs, abi1 | table[i].fs_extra, "ABI %d: %#llx",
			     table[i].abi, (unsigned long long)res.handled_fs);
		cr_assert_eq(res.handled_net != 0, table[i].net, "ABI %d", table[i].abi);
		cr_assert_eq(res.scoped != 0, table[i].scoped, "ABI %d", table[i].abi);
		cr_assert_eq(res.dev_null_access,
			     res.handled_fs & (FS(WRITE_FILE) | FS(TRUNCATE) | FS(IOCTL_DEV)),
			     "ABI %d: rule rights are masked by the handled ones", table[i].abi);
	}
}

Test(landlock_prepare, required_tcp_needs_abi_4)
{
	struct policy p = {.landlock_mode = POLICY_LANDLOCK_REQUIRED, .landlock_tcp = true};
	struct fake_result res = prepare_faked(3, &p);

	cr_assert_eq(res.r, -EOPNOTSUPP);
	cr_assert(strstr(res.err.msg, "needs Landlock ABI 4"), "%s", res.err.msg);
	cr_assert(strstr(res.err.msg, "ABI 3"), "%s", res.err.msg);
	p.landlock_mode = POLICY_LANDLOCK_BEST_EFFORT;
	res = prepare_faked(3, &p);
	cr_assert_eq(res.r, 0, "%s", res.err.msg);
	cr_assert(res.enabled, "best effort: the filesystem rules still apply");
	cr_assert_eq(res.handled_net, 0);
}

/* ---- apply: the filesystem ---- */

static struct mount_plan fs_plan(void)
{
	struct mount_plan plan = {0};

	plan_add(&plan, MOUNT_OP_BIND, at("rw"), false);
	plan_add(&plan, MOUNT_OP_BIND, at("ro"), true);
	plan_add(&plan, MOUNT_OP_TMPFS, at("tmp"), false);
	plan_add(&plan, MOUNT_OP_BIND, at("file.rw"), false);
	plan_add(&plan, MOUNT_OP_BIND, at("missing"), false)->optional = true;
	plan_add(&plan, MOUNT_OP_BIND, at("skipped"), false)->skipped = true;
	/* Its source turned out to be a symlink (to "other"): no rule, and
	 * above all no rule on what the symlink points to. */
	plan_add(&plan, MOUNT_OP_BIND, at("link"), false)->copy_symlink = true;
	plan_add(&plan, MOUNT_OP_PROC, "/proc", false);
	plan_add(&plan, MOUNT_OP_DEV, "/dev", false);
	return plan;
}

static void writes_below_writable_mounts(void)
{
	struct sockaddr_un sun = {.sun_family = AF_UNIX};
	int s;

	OK(try_open(at("rw/new"), O_WRONLY | O_CREAT | O_EXCL));
	OK(write_to(at("rw/f"), O_WRONLY | O_TRUNC, "y"));
	OK(truncate(at("rw/f"), 0));
	OK(mkdir(at("rw/d"), 0755));
	OK(rmdir(at("rw/d")));
	OK(symlink("f", at("rw/s")));
	OK(unlink(at("rw/s")));
	OK(mkfifo(at("rw/p"), 0644));
	OK(unlink(at("rw/p")));
	/* A rename or link into another directory needs REFER (ABI 2). */
	OK(rename(at("rw/new"), at("rw/sub/new")));
	OK(link(at("rw/sub/new"), at("rw/new2")));
	OK(unlink(at("rw/sub/new")));
	OK(unlink(at("rw/new2")));
	snprintf(sun.sun_path, sizeof(sun.sun_path), "%s", at("rw/sock"));
	OK(s = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0));
	OK(bind(s, (struct sockaddr *)&sun, sizeof(sun)));
	close(s);
	OK(unlink(at("rw/sock")));
	OK(write_to(at("tmp/x"), O_WRONLY | O_CREAT, "x"));
	OK(write_to(at("file.rw"), O_WRONLY | O_TRUNC, "y"));
}

/* The ABI the checks below expect: before ABI 3, truncate(2) cannot be
 * refused. */
static int checks_abi = 99;

static void no_writes_elsewhere(void)
{
	/* Reads are not restricted. */
	OK(try_open(at("ro/f"), O_RDONLY));
	OK(try_open(at("ro"), O_RDONLY | O_DIRECTORY));
	FAILS(try_open(at("ro/new"), O_WRONLY | O_CREAT), EACCES);
	FAILS(try_open(at("ro/f"), O_WRONLY), EACCES);
	if (checks_abi >= 3) {
		FAILS(truncate(at("ro/f"), 0), EACCES);
		FAILS(try_open(at("ro/f"), O_WRONLY | O_TRUNC), EACCES);
	}
	FAILS(unlink(at("ro/f")), EACCES);
	FAILS(mkdir(at("ro/d"), 0755), EACCES);
	FAILS(symlink("f", at("ro/s")), EACCES);
	FAILS(mkfifo(at("ro/p"), 0644), EACCES);
	FAILS(rename(at("ro/f"), at("ro/g")), EACCES);
	/* Across the boundary, either way round. */
	FAILS2(rename(at("rw/f"), at("ro/f2")), EACCES, EXDEV);
	FAILS2(link(at("rw/f"), at("ro/l")), EACCES, EXDEV);
	FAILS2(rename(at("ro/f"), at("rw/f3")), EACCES, EXDEV);
	/* Outside every rule. */
	FAILS(try_open(at("other/f"), O_WRONLY), EACCES);
	FAILS(try_open(at("other/n"), O_WRONLY | O_CREAT), EACCES);
	FAILS(try_open(at("skipped/n"), O_WRONLY | O_CREAT), EACCES);
	FAILS(try_open(at("link/f"), O_WRONLY), EACCES);
	FAILS(try_open(at("new"), O_WRONLY | O_CREAT), EACCES);
	FAILS(mkdir(at("rw-sibling"), 0755), EACCES);
	/* The parent of the read-only tree: the rw rule does not reach up. */
	FAILS(rename(at("rw"), at("rw2")), EACCES);
}

static void devices_and_proc(void)
{
	char shm[64];

	/* Shells open "> /dev/null" with O_TRUNC. */
	OK(write_to("/dev/null", O_WRONLY | O_TRUNC, "x"));
	OK(write_to("/dev/zero", O_WRONLY, "x"));
	OK(try_open("/dev/full", O_WRONLY));
	FAILS(try_open("/dev/paddock-landlock-test", O_WRONLY | O_CREAT), EACCES);
	snprintf(shm, sizeof(shm), "/dev/shm/paddock-landlock-%d", (int)getpid());
	OK(write_to(shm, O_WRONLY | O_CREAT | O_EXCL, "x"));
	OK(unlink(shm));
	/* Raising one's own OOM score needs no privilege. */
	OK(write_to("/proc/self/oom_score_adj", O_WRONLY | O_TRUNC, "500"));
	OK(write_to("/proc/self/comm", O_WRONLY, "landlocked"));
}

Test(landlock_fs, writes_only_below_writable_mounts)
{
	struct policy p = {0};
	struct mount_plan plan = fs_plan();
	struct landlock_info li = {0};
	struct err err = {0};

	if (!kernel_abi())
		cr_skip_test("no Landlock on this kernel");
	cr_assert_eq(landlock_prepare(&p, &plan, &li, &err), 0, "%s", err.msg);
	cr_assert(li.enabled);
	run_sandboxed(&li, writes_below_writable_mounts);
	run_sandboxed(&li, no_writes_elsewhere);
	if (kernel_abi() >= 5)
		run_sandboxed(&li, devices_and_proc);
	landlock_info_free(&li);
	mounts_plan_free(&plan);
}

Test(landlock_fs, oldest_abi_rules_are_accepted)
{
	struct policy p = {0};
	struct mount_plan plan = fs_plan();
	struct landlock_info li = {0};
	struct err err = {0};

	if (!kernel_abi())
		cr_skip_test("no Landlock on this kernel");
	cr_assert_eq(landlock_prepare(&p, &plan, &li, &err), 0, "%s", err.msg);
	/* What prepare derives for ABI 1, enforced by this kernel: the masks
	 * must still form valid rules (no right outside the handled set). */
	li.abi = checks_abi = 1;
	li.handled_fs &= ~(FS(REFER) | FS(TRUNCATE) | FS(IOCTL_DEV));
	li.scoped = 0;
	for (size_t i = 0; i < li.n_rules; i++)
		li.rules[i].access &= li.handled_fs;
	run_sandboxed(&li, no_writes_elsewhere);
	landlock_info_free(&li);
	mounts_plan_free(&plan);
}

/* The domain is in force (for a ruleset that handles only write_file). */
static void write_refused_outside(void)
{
	FAILS(try_open(at("other/f"), O_WRONLY), EACCES);
	OK(try_open(at("other/f"), O_RDONLY));
}

Test(landlock_fs, a_missing_rule_path_is_an_error_unless_optional)
{
	char nope[256], link[256], through[256], want[600];
	struct landlock_rule rule = {.path = nope, .access = FS(WRITE_FILE)};
	struct landlock_info li = {
	    .abi = 1, .enabled = true, .handled_fs = FS(WRITE_FILE), .rules = &rule, .n_rules = 1};
	struct err err = {0};

	if (!kernel_abi())
		cr_skip_test("no Landlock on this kernel");
	snprintf(nope, sizeof(nope), "%s", at("nope"));
	snprintf(link, sizeof(link), "%s", at("link"));
	snprintf(through, sizeof(through), "%s", at("link/f"));
	/* Fails before restrict_self: safe to run in the test process. */
	cr_assert_eq(landlock_apply(&li, &err), -ENOENT);
	snprintf(want, sizeof(want), "landlock: open %s: %s", rule.path, strerror(ENOENT));
	cr_assert_str_eq(err.msg, want);

	rule.path = link;
	cr_assert_eq(landlock_apply(&li, &err), -ELOOP, "a symlink where a mount should be");
	cr_assert(strstr(err.msg, "is a symlink"), "%s", err.msg);

	rule.path = through;
	cr_assert_eq(landlock_apply(&li, &err), -ELOOP, "a symlink on the way is not followed");

	rule.path = nope;
	rule.optional = true;
	run_sandboxed(&li, write_refused_outside);
}

Test(landlock_fs, disabled_info_applies_nothing)
{
	struct landlock_info li = {0};
	struct err err = {0};

	cr_assert_eq(landlock_apply(&li, &err), 0);
	cr_assert_eq(try_open(at("other/f"), O_WRONLY), 0);
}

/* ---- apply: TCP ---- */

static uint16_t port_bind_ok, port_bind_no, port_conn_ok, port_conn_no;

static int tcp_socket(void)
{
	return socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
}

static struct sockaddr_in loopback(uint16_t port)
{
	return (struct sockaddr_in){
	    .sin_family = AF_INET,
	    .sin_port = htons(port),
	    .sin_addr.s_addr = htonl(INADDR_LOOPBACK),
	};
}

/* A listening socket on a free loopback port. */
static int listener(uint16_t *port)
{
	struct sockaddr_in a = loopback(0);
	socklen_t len = sizeof(a);
	int s = tcp_socket();

	cr_assert_geq(s, 0);
	cr_assert_eq(bind(s, (struct sockaddr *)&a, sizeof(a)), 0, "bind: %s", strerror(errno));
	cr_assert_eq(listen(s, 4), 0);
	cr_assert_eq(getsockname(s, (struct sockaddr *)&a, &len), 0);
	*port = ntohs(a.sin_port);
	return s;
}

static void tcp_checks(void)
{
	struct sockaddr_in a;
	int s;

	OK(s = tcp_socket());
	a = loopback(port_bind_ok);
	OK(bind(s, (struct sockaddr *)&a, sizeof(a)));
	close(s);
	OK(s = tcp_socket());
	a = loopback(port_bind_no);
	FAILS(bind(s, (struct sockaddr *)&a, sizeof(a)), EACCES);
	close(s);
	OK(s = tcp_socket());
	a = loopback(port_conn_ok);
	OK(connect(s, (struct sockaddr *)&a, sizeof(a)));
	close(s);
	OK(s = tcp_socket());
	a = loopback(port_conn_no);
	FAILS(connect(s, (struct sockaddr *)&a, sizeof(a)), EACCES);
	close(s);
}

Test(landlock_net, tcp_bind_and_connect_follow_the_ports)
{
	struct mount_plan plan = {0};
	struct landlock_info li = {0};
	struct err err = {0};
	int l1, l2, l3, l4;

	if (kernel_abi() < 4)
		cr_skip_test("needs Landlock ABI 4, the kernel has %d", kernel_abi());
	/* Free ports: listeners held open for the connects, and two ports
	 * found free and released for the binds. */
	l1 = listener(&port_conn_ok);
	l2 = listener(&port_conn_no);
	l3 = listener(&port_bind_ok);
	l4 = listener(&port_bind_no);
	close(l3);
	close(l4);
	{
		uint16_t bind_ports[] = {port_bind_ok}, connect_ports[] = {port_conn_ok};
		struct policy p = {.landlock_mode = POLICY_LANDLOCK_REQUIRED,
				   .landlock_tcp = true,
				   .landlock_tcp_bind = bind_ports,
				   .n_landlock_tcp_bind = 1,
				   .landlock_tcp_connect = connect_ports,
				   .n_landlock_tcp_connect = 1};

		cr_assert_eq(landlock_prepare(&p, &plan, &li, &err), 0, "%s", err.msg);
	}
	run_sandboxed(&li, tcp_checks);
	close(l1);
	close(l2);
	landlock_info_free(&li);
}

/* ---- apply: scoping ---- */

static char abstract_name[64];

static void scope_checks(void)
{
	struct sockaddr_un sun = {.sun_family = AF_UNIX};
	socklen_t len = offsetof(struct sockaddr_un, sun_path) + 1 + strlen(abstract_name);
	pid_t kid;
	int s, l;

	/* The unsandboxed parent (standing in for the supervisor). */
	FAILS(kill(getppid(), 0), EPERM);
	/* A process of the same domain. */
	kid = fork();
	CHECK(kid >= 0, "fork: %s", strerror(errno));
	if (kid == 0) {
		pause();
		_exit(0);
	}
	OK(kill(kid, 0));
	OK(kill(kid, SIGKILL));
	OK(waitpid(kid, NULL, 0));

	/* An abstract socket bound outside the domain. */
	memcpy(sun.sun_path + 1, abstract_name, strlen(abstract_name));
	OK(s = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0));
	FAILS(connect(s, (struct sockaddr *)&sun, len), EPERM);
	close(s);
	/* One bound inside it. */
	sun.sun_path[1] = 'i';
	OK(l = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0));
	OK(bind(l, (struct sockaddr *)&sun, len));
	OK(listen(l, 1));
	OK(s = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0));
	OK(connect(s, (struct sockaddr *)&sun, len));
	close(s);
	close(l);
}

Test(landlock_scope, signals_and_abstract_sockets_stay_inside)
{
	struct policy p = {0};
	struct mount_plan plan = {0};
	struct landlock_info li = {0};
	struct sockaddr_un sun = {.sun_family = AF_UNIX};
	struct err err = {0};
	socklen_t len;
	int l;

	if (kernel_abi() < 6)
		cr_skip_test("needs Landlock ABI 6, the kernel has %d", kernel_abi());
	snprintf(abstract_name, sizeof(abstract_name), "xpaddock-landlock-%d", (int)getpid());
	memcpy(sun.sun_path + 1, abstract_name, strlen(abstract_name));
	len = offsetof(struct sockaddr_un, sun_path) + 1 + strlen(abstract_name);
	l = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	cr_assert_geq(l, 0);
	cr_assert_eq(bind(l, (struct sockaddr *)&sun, len), 0, "bind: %s", strerror(errno));
	cr_assert_eq(listen(l, 1), 0);

	cr_assert_eq(landlock_prepare(&p, &plan, &li, &err), 0, "%s", err.msg);
	cr_assert_eq(li.scoped, LANDLOCK_SCOPE_ABSTRACT_UNIX_SOCKET | LANDLOCK_SCOPE_SIGNAL);
	run_sandboxed(&li, scope_checks);
	close(l);
	landlock_info_free(&li);
}
