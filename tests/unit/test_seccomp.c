/* Unit tests for launcher/sandbox/seccomp.c against the running kernel: each test
 * builds a filter from a policy, loads it in a forked child (after
 * no_new_privs, as the launcher does), makes raw syscalls there and reports
 * the errno through a pipe or dies; the parent asserts. Every call is made
 * so that it is harmless when the filter lets it through (bad arguments,
 * paths that do not exist), so a broken filter fails the test instead of
 * changing the host.
 *
 * Most blocked calls are tried under a policy whose default errno is EDOM,
 * which no kernel path returns for them: the answer can only come from
 * the filter, even when the tests run as root. */
#include <criterion/criterion.h>

#include <errno.h>
#include <fcntl.h>
#include <linux/sched.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/personality.h>
#include <sys/prctl.h>
#include <sys/ptrace.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/timex.h>
#include <sys/uio.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "../../launcher/sandbox/sandbox.h"
#include "unit.h"

TestSuite(seccomp, .fini = unit_leak_check, .timeout = 60);

#ifndef AF_ALG
#define AF_ALG 38
#endif
#ifndef AF_VSOCK
#define AF_VSOCK 40
#endif
#ifndef __X32_SYSCALL_BIT
#define __X32_SYSCALL_BIT 0x40000000
#endif

static const char default_policy[] = "{\"version\":1}";
/* No kernel path answers these calls with EDOM: only the filter does. */
static const char edom_policy[] = "{\"version\":1,\"seccomp\":{\"errno\":\"EDOM\"}}";

static struct policy *load(const char *json)
{
	struct policy *p = NULL;
	struct err err = {0};
	int r = policy_load_buffer(json, strlen(json), NULL, &p, &err);

	cr_assert_eq(r, 0, "policy %s: %s", json, err.msg);
	return p;
}

static scmp_filter_ctx build(const char *json, struct seccomp_info *info)
{
	struct policy *p = load(json);
	scmp_filter_ctx ctx = NULL;
	struct err err = {0};
	int r = seccomp_build(p, &ctx, info, &err);

	cr_assert_eq(r, 0, "seccomp_build %s: %s", json, err.msg);
	policy_free(p);
	return ctx;
}

/* What a child reported: the probe's result (an errno, or 0) if it got
 * that far, and its wait status. */
struct outcome {
	bool reported;
	int result;
	int status;
};

typedef int (*probe_fn)(const void *arg);

/* The child: no_new_privs (the kernel refuses a filter without it or
 * CAP_SYS_ADMIN), load the filter if any (from the context, or from the
 * exported program as the launcher does when bpf is set), run fn, write its
 * result. */
static struct outcome run_with(scmp_filter_ctx ctx, const struct seccomp_info *bpf, probe_fn fn,
			       const void *arg)
{
	struct outcome o = {0};
	int fds[2], result;
	ssize_t n;
	pid_t pid;

	cr_assert_eq(pipe2(fds, O_CLOEXEC), 0);
	pid = fork();
	cr_assert(pid >= 0);
	if (pid == 0) {
		struct err err = {0};

		close(fds[0]);
		if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
			_exit(120);
		if ((bpf ? seccomp_apply_bpf(bpf, &err) : seccomp_apply(ctx, &err)) < 0)
			_exit(121);
		result = fn(arg);
		if (write(fds[1], &result, sizeof(result)) != sizeof(result))
			_exit(122);
		_exit(0);
	}
	close(fds[1]);
	n = read(fds[0], &result, sizeof(result));
	close(fds[0]);
	cr_assert_eq(waitpid(pid, &o.status, 0), pid);
	if (n == sizeof(result)) {
		o.reported = true;
		o.result = result;
	}
	return o;
}

static struct outcome run(scmp_filter_ctx ctx, probe_fn fn, const void *arg)
{
	return run_with(ctx, NULL, fn, arg);
}

/* fn under the filter of json must report want. */
static void expect_result(const char *json, probe_fn fn, const void *arg, int want,
			  const char *what)
{
	struct seccomp_info info = {0};
	scmp_filter_ctx ctx = build(json, &info);
	struct outcome o = run(ctx, fn, arg);

	cr_expect(o.reported, "%s: no report (status 0x%x)", what, o.status);
	cr_expect_eq(o.result, want, "%s: got %d (%s), want %d (%s)", what, o.result,
		     strerror(o.result), want, strerror(want));
	seccomp_release(ctx);
	seccomp_info_free(&info);
}

/* fn under the filter of json must be killed by SIGSYS. */
static void expect_sigsys(const char *json, probe_fn fn, const void *arg, const char *what)
{
	struct seccomp_info info = {0};
	scmp_filter_ctx ctx = build(json, &info);
	struct outcome o = run(ctx, fn, arg);

	cr_expect(!o.reported && WIFSIGNALED(o.status) && WTERMSIG(o.status) == SIGSYS,
		  "%s: not killed by SIGSYS (reported %d, status 0x%x)", what, o.result, o.status);
	seccomp_release(ctx);
	seccomp_info_free(&info);
}

static int err_of(long r)
{
	return r < 0 ? errno : 0;
}

/* ---- a table of raw calls ---- */

struct call {
	const char *name;
	long nr;
	long a[6];
};

static int do_call(const void *arg)
{
	const struct call *c = arg;

	/* vhangup() hangs up the controlling tty: leave it behind first. */
	if (c->nr == SYS_vhangup)
		setsid();
	return err_of(syscall(c->nr, c->a[0], c->a[1], c->a[2], c->a[3], c->a[4], c->a[5]));
}

#define NOPE "/nonexistent/paddock-test"

Test(seccomp, dangerous_calls_get_the_default_errno)
{
	static int local, remote;
	struct iovec liov = {&local, sizeof(local)}, riov = {&remote, sizeof(remote)};
	struct timeval bad_tv = {0, 2000000};
	struct timespec ts = {1, 0};
	struct timex tx;
	long self = getpid();
	/* Each one fails harmlessly, or does nothing, if it is let through. */
	const struct call calls[] = {
	    {"mount", SYS_mount, {(long)"none", (long)NOPE, (long)"tmpfs", 0, 0}},
	    {"umount2", SYS_umount2, {(long)NOPE, 0}},
	    {"pivot_root", SYS_pivot_root, {(long)NOPE, (long)NOPE}},
	    {"open_tree", SYS_open_tree, {-1, (long)NOPE, 0}},
	    {"move_mount", SYS_move_mount, {-1, (long)NOPE, -1, (long)NOPE, 0}},
	    {"fsopen", SYS_fsopen, {(long)"paddock-no-such-fs", 0}},
	    {"fsconfig", SYS_fsconfig, {-1, 0, 0, 0, 0}},
	    {"fsmount", SYS_fsmount, {-1, 0, 0}},
	    {"fspick", SYS_fspick, {-1, (long)NOPE, 0}},
	    {"mount_setattr", SYS_mount_setattr, {-1, (long)NOPE, 0, 0, 0}},
	    {"unshare", SYS_unshare, {CLONE_NEWUSER}},
	    {"setns", SYS_setns, {-1, 0}},
	    {"keyctl", SYS_keyctl, {0 /* KEYCTL_GET_KEYRING_ID */, -1, 0}},
	    {"add_key", SYS_add_key, {0, 0, 0, 0, -1}},
	    {"request_key", SYS_request_key, {0, 0, 0, 0}},
	    {"bpf", SYS_bpf, {-1, 0, 0}},
	    {"perf_event_open", SYS_perf_event_open, {0, 0, -1, -1, 0}},
	    {"userfaultfd", SYS_userfaultfd, {-1}},
	    {"io_uring_setup", SYS_io_uring_setup, {1, 0}},
	    {"io_uring_enter", SYS_io_uring_enter, {-1, 0, 0, 0, 0, 0}},
	    {"io_uring_register", SYS_io_uring_register, {-1, 0, 0, 0}},
	    {"ptrace", SYS_ptrace, {PTRACE_TRACEME, 0, 0, 0}},
	    {"process_vm_readv", SYS_process_vm_readv, {self, (long)&liov, 1, (long)&riov, 1, 0}},
	    {"process_vm_writev", SYS_process_vm_writev, {self, (long)&liov, 1, (long)&riov, 1, 0}},
	    {"pidfd_getfd", SYS_pidfd_getfd, {-1, 0, 0}},
	    {"kcmp", SYS_kcmp, {self, self, 0 /* KCMP_FILE */, 0, 0}},
	    {"open_by_handle_at", SYS_open_by_handle_at, {-1, 0, 0}},
	    {"name_to_handle_at", SYS_name_to_handle_at, {AT_FDCWD, (long)NOPE, 0, 0, 0}},
	    /* unknown flag bits: EINVAL before anything is loaded */
	    {"kexec_load", SYS_kexec_load, {0, 0, 0, 0xfff0}},
	    {"kexec_file_load", SYS_kexec_file_load, {-1, -1, 0, 0, -1}},
	    {"init_module", SYS_init_module, {0, 0, (long)""}},
	    {"finit_module", SYS_finit_module, {-1, (long)"", 0}},
	    {"delete_module", SYS_delete_module, {(long)"paddock_no_such_module", O_NONBLOCK}},
	    /* no magic numbers: EINVAL */
	    {"reboot", SYS_reboot, {0, 0, 0, 0}},
	    {"swapon", SYS_swapon, {(long)NOPE, 0}},
	    {"swapoff", SYS_swapoff, {(long)NOPE}},
	    {"acct", SYS_acct, {(long)NOPE}},
	    /* invalid times: EINVAL; adjtimex with modes 0 only reads */
	    {"settimeofday", SYS_settimeofday, {(long)&bad_tv, 0}},
	    {"clock_settime", SYS_clock_settime, {CLOCK_MONOTONIC, (long)&ts}},
	    {"clock_adjtime", SYS_clock_adjtime, {CLOCK_REALTIME, (long)&tx}},
	    {"adjtimex", SYS_adjtimex, {(long)&tx}},
	    {"chroot", SYS_chroot, {(long)NOPE}},
	    /* longer than __NEW_UTS_LEN: EINVAL */
	    {"sethostname", SYS_sethostname, {(long)"x", 1000}},
	    {"setdomainname", SYS_setdomainname, {(long)"x", 1000}},
	    {"quotactl", SYS_quotactl, {0, (long)NOPE, 0, 0}},
	    {"syslog", SYS_syslog, {10 /* SYSLOG_ACTION_SIZE_BUFFER */, 0, 0}},
	    {"vhangup", SYS_vhangup, {0}},
	    {"fanotify_init", SYS_fanotify_init, {-1, 0}},
	    {"modify_ldt", SYS_modify_ldt, {0, (long)&local, 0}},
	    {"iopl", SYS_iopl, {0}},
	    {"ioperm", SYS_ioperm, {0, 0, 0}},
	    {"mbind", SYS_mbind, {0, 0, 0, 0, 0, 0}},
	    {"set_mempolicy", SYS_set_mempolicy, {0, 0, 0}},
	    {"sysfs", SYS_sysfs, {-1, 0, 0}},
	};
	struct seccomp_info info = {0};
	scmp_filter_ctx ctx = build(edom_policy, &info);

	memset(&tx, 0, sizeof(tx));
	for (size_t i = 0; i < sizeof(calls) / sizeof(calls[0]); i++) {
		struct outcome o = run(ctx, do_call, &calls[i]);

		cr_expect(o.reported && o.result == EDOM, "%s: got %d (%s), status 0x%x",
			  calls[i].name, o.result, strerror(o.result), o.status);
	}
	seccomp_release(ctx);
	seccomp_info_free(&info);
}

/* ---- namespaces and clone ---- */

static int try_mount(const void *arg)
{
	(void)arg;
	return err_of(syscall(SYS_mount, "none", NOPE, "tmpfs", 0, NULL));
}

static int try_unshare_user(const void *arg)
{
	(void)arg;
	return err_of(unshare(CLONE_NEWUSER));
}

Test(seccomp, mount_and_unshare_eperm)
{
	expect_result(default_policy, try_mount, NULL, EPERM, "mount");
	expect_result(default_policy, try_unshare_user, NULL, EPERM, "unshare(CLONE_NEWUSER)");
}

/* A raw clone as fork; a child that gets through exits at once. */
static int raw_clone(unsigned long flags)
{
	long r = syscall(SYS_clone, flags | SIGCHLD, 0, 0, 0, 0);

	if (r == 0)
		_exit(0);
	if (r < 0)
		return errno;
	waitpid((pid_t)r, NULL, 0);
	return 0;
}

static int try_clone_flags(const void *arg)
{
	return raw_clone(*(const unsigned long *)arg);
}

static int try_fork(const void *arg)
{
	int status;
	pid_t pid;

	(void)arg;
	pid = fork();
	if (pid == 0)
		_exit(7);
	if (pid < 0)
		return errno;
	if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status) || WEXITSTATUS(status) != 7)
		return ECHILD;
	return 0;
}

Test(seccomp, clone_with_namespace_flags_is_refused_fork_works)
{
	static const unsigned long ns[] = {
	    CLONE_NEWUSER, CLONE_NEWNS,	 CLONE_NEWPID,	  CLONE_NEWNET,
	    CLONE_NEWUTS,  CLONE_NEWIPC, CLONE_NEWCGROUP, CLONE_NEWUSER | CLONE_NEWNS};
	static const unsigned long plain = 0;
	/* Bits above 31 are ignored by the kernel's clone(); they must not
	 * hide a namespace flag from the rule either. */
	static const unsigned long high = (1ul << 40) | CLONE_NEWUSER;

	for (size_t i = 0; i < sizeof(ns) / sizeof(ns[0]); i++)
		expect_result(default_policy, try_clone_flags, &ns[i], EPERM, "clone(CLONE_NEW*)");
	expect_result(default_policy, try_clone_flags, &high, EPERM, "clone(high bits|NEWUSER)");
	expect_result(default_policy, try_clone_flags, &plain, 0, "clone(SIGCHLD)");
	expect_result(default_policy, try_fork, NULL, 0, "fork");
}

static int try_clone3(const void *arg)
{
	struct clone_args args = {.exit_signal = SIGCHLD};
	long r;

	(void)arg;
	r = syscall(SYS_clone3, &args, sizeof(args));
	if (r == 0)
		_exit(0);
	if (r < 0)
		return errno;
	waitpid((pid_t)r, NULL, 0);
	return 0;
}

Test(seccomp, clone3_answers_enosys)
{
	expect_result(default_policy, try_clone3, NULL, ENOSYS, "clone3");
	/* Not the default errno: its own rule. */
	expect_result(edom_policy, try_clone3, NULL, ENOSYS, "clone3 (EDOM policy)");
}

static void *thread_main(void *arg)
{
	return arg;
}

/* glibc's pthread_create tries clone3 first and falls back to clone on
 * ENOSYS; with any other errno threads would not start. */
static int try_thread(const void *arg)
{
	pthread_t t;
	void *ret = NULL;
	int r;

	(void)arg;
	r = pthread_create(&t, NULL, thread_main, (void *)0x1234);
	if (r)
		return r;
	pthread_join(t, &ret);
	return ret == (void *)0x1234 ? 0 : EINVAL;
}

Test(seccomp, threads_start)
{
	expect_result(default_policy, try_thread, NULL, 0, "pthread_create");
}

/* ---- sockets ---- */

struct sock_args {
	long nr; /* SYS_socket or SYS_socketpair */
	unsigned long family;
	int type;
};

static int try_socket(const void *arg)
{
	const struct sock_args *s = arg;
	int sv[2];
	long r;

	if (s->nr == SYS_socket)
		r = syscall(SYS_socket, s->family, s->type, 0);
	else
		r = syscall(SYS_socketpair, s->family, s->type, 0, sv);
	return err_of(r);
}

Test(seccomp, socket_families)
{
	static const struct sock_args vsock = {SYS_socket, AF_VSOCK, SOCK_STREAM};
	static const struct sock_args alg = {SYS_socket, AF_ALG, SOCK_SEQPACKET};
	/* int family: the kernel drops the high half, the rule must too */
	static const struct sock_args vsock_hi = {SYS_socket, (1ul << 32) | AF_VSOCK, SOCK_STREAM};
	static const struct sock_args pair_vsock = {SYS_socketpair, AF_VSOCK, SOCK_STREAM};
	static const struct sock_args inet = {SYS_socket, AF_INET, SOCK_STREAM};
	static const struct sock_args inet6 = {SYS_socket, AF_INET6, SOCK_DGRAM};
	static const struct sock_args unix_pair = {SYS_socketpair, AF_UNIX, SOCK_STREAM};
	static const struct sock_args netlink = {SYS_socket, AF_NETLINK, SOCK_RAW};
	const char *const policies[] = {default_policy, edom_policy};

	for (size_t i = 0; i < 2; i++) {
		expect_result(policies[i], try_socket, &vsock, EAFNOSUPPORT, "socket(AF_VSOCK)");
		/* This kernel may lack AF_ALG (then it answers EAFNOSUPPORT
		 * too); AF_VSOCK above is the one that proves the rule. */
		expect_result(policies[i], try_socket, &alg, EAFNOSUPPORT, "socket(AF_ALG)");
		expect_result(policies[i], try_socket, &vsock_hi, EAFNOSUPPORT,
			      "socket(1<<32 | AF_VSOCK)");
		expect_result(policies[i], try_socket, &pair_vsock, EAFNOSUPPORT,
			      "socketpair(AF_VSOCK)");
		expect_result(policies[i], try_socket, &inet, 0, "socket(AF_INET)");
		expect_result(policies[i], try_socket, &inet6, 0, "socket(AF_INET6)");
		expect_result(policies[i], try_socket, &unix_pair, 0, "socketpair(AF_UNIX)");
		expect_result(policies[i], try_socket, &netlink, 0, "socket(AF_NETLINK)");
	}
}

/* ---- ioctl ---- */

static int try_ioctl(const void *arg)
{
	unsigned long req = *(const unsigned long *)arg;
	int fd = open("/dev/null", O_RDWR | O_CLOEXEC);
	char c = 'x';

	if (fd < 0)
		return ENOENT;
	return err_of(syscall(SYS_ioctl, fd, req, &c));
}

Test(seccomp, tiocsti_and_tioclinux_refused)
{
	static const unsigned long sti = TIOCSTI, linux_ = TIOCLINUX;
	static const unsigned long sti_hi = (1ul << 32) | TIOCSTI, sti_hi2 = ~0ul << 32 | TIOCSTI;
	static const unsigned long fionread = FIONREAD, tcgets = TCGETS;
	/* Off by one bit from TIOCSTI in each of the varying bits. */
	static const unsigned long near[] = {TIOCSTI ^ 1, TIOCSTI ^ 0x10, TIOCSTI ^ 0x8,
					     TIOCLINUX ^ 0x20, 0x5412ul << 16};
	const char *const policies[] = {default_policy, edom_policy};

	for (size_t i = 0; i < 2; i++) {
		/* /dev/null would answer ENOTTY: EPERM is the filter's. */
		expect_result(policies[i], try_ioctl, &sti, EPERM, "TIOCSTI");
		expect_result(policies[i], try_ioctl, &linux_, EPERM, "TIOCLINUX");
		expect_result(policies[i], try_ioctl, &sti_hi, EPERM, "1<<32 | TIOCSTI");
		expect_result(policies[i], try_ioctl, &sti_hi2, EPERM, "~0<<32 | TIOCSTI");
		expect_result(policies[i], try_ioctl, &fionread, ENOTTY, "FIONREAD");
		expect_result(policies[i], try_ioctl, &tcgets, ENOTTY, "TCGETS");
		for (size_t k = 0; k < sizeof(near) / sizeof(near[0]); k++) {
			struct seccomp_info info = {0};
			scmp_filter_ctx ctx = build(policies[i], &info);
			struct outcome o = run(ctx, try_ioctl, &near[k]);

			cr_expect(o.reported && o.result != EPERM && o.result != EDOM,
				  "ioctl 0x%lx: got %d", near[k], o.result);
			seccomp_release(ctx);
			seccomp_info_free(&info);
		}
	}
}

/* ---- personality ---- */

static int try_personality(const void *arg)
{
	return err_of(syscall(SYS_personality, *(const unsigned long *)arg));
}

Test(seccomp, personality_restricted)
{
	static const unsigned long ok[] = {PER_LINUX,	PER_LINUX32,
					   UNAME26,	PER_LINUX32 | UNAME26,
					   0xffffffffu, (1ul << 32) | PER_LINUX};
	static const unsigned long bad[] = {ADDR_NO_RANDOMIZE, READ_IMPLIES_EXEC,
					    PER_LINUX | ADDR_COMPAT_LAYOUT, PER_BSD};

	for (size_t i = 0; i < sizeof(ok) / sizeof(ok[0]); i++)
		expect_result(default_policy, try_personality, &ok[i], 0, "personality ok");
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		expect_result(default_policy, try_personality, &bad[i], EPERM, "personality bad");
	/* A policy's allow replaces the argument rule. */
	expect_result("{\"version\":1,\"seccomp\":{\"allow\":[\"personality\"]}}", try_personality,
		      &bad[0], 0, "personality allowed");
}

/* ---- other entry points ---- */

static int try_x32(const void *arg)
{
	(void)arg;
	return err_of(syscall(__X32_SYSCALL_BIT | SYS_getpid));
}

Test(seccomp, x32_syscall_kills)
{
	expect_sigsys(default_policy, try_x32, NULL, "x32 getpid");
}

#if defined(__x86_64__)
/* getpid through the 32-bit entry point: eax 20 is the i386 getpid. */
static int try_int80(const void *arg)
{
	long ret = 20;

	(void)arg;
	__asm__ volatile("int $0x80" : "+a"(ret) : : "memory");
	return ret < 0 ? (int)-ret : 0;
}

Test(seccomp, int80_kills)
{
	expect_sigsys(default_policy, try_int80, NULL, "int 0x80 getpid");
}
#endif

/* ---- policy allow and deny ---- */

static int try_traceme(const void *arg)
{
	(void)arg;
	return err_of(ptrace(PTRACE_TRACEME, 0, NULL, NULL));
}

static int try_uname(const void *arg)
{
	struct utsname u;

	(void)arg;
	return err_of(syscall(SYS_uname, &u));
}

static int try_chroot(const void *arg)
{
	(void)arg;
	return err_of(chroot(NOPE));
}

static bool has_denied(const struct seccomp_info *info, const char *name)
{
	for (size_t i = 0; i < info->n_denied; i++)
		if (strcmp(info->denied[i], name) == 0)
			return true;
	return false;
}

Test(seccomp, policy_allow_reenables_ptrace)
{
	const char *json = "{\"version\":1,\"seccomp\":{\"allow\":[\"ptrace\"]}}";
	struct seccomp_info info = {0};
	scmp_filter_ctx ctx = build(json, &info);

	cr_expect_not(has_denied(&info, "ptrace"));
	cr_expect(has_denied(&info, "process_vm_readv"));
	seccomp_release(ctx);
	seccomp_info_free(&info);
	expect_result(default_policy, try_traceme, NULL, EPERM, "ptrace by default");
	expect_result(json, try_traceme, NULL, 0, "ptrace allowed");
}

Test(seccomp, policy_deny_with_errno)
{
	const char *json = "{\"version\":1,\"seccomp\":{\"deny\":[{\"syscall\":\"uname\","
			   "\"errno\":\"EACCES\"},\"chroot\"],\"errno\":\"EDOM\"}}";
	struct seccomp_info info = {0};
	scmp_filter_ctx ctx = build(json, &info);

	cr_expect(has_denied(&info, "uname (EACCES)"));
	cr_expect(has_denied(&info, "chroot (EPERM)"));
	cr_expect_not(has_denied(&info, "chroot"), "listed once, with the policy's errno");
	seccomp_release(ctx);
	seccomp_info_free(&info);
	expect_result(default_policy, try_uname, NULL, 0, "uname by default");
	expect_result(json, try_uname, NULL, EACCES, "uname denied");
	expect_result(json, try_chroot, NULL, EPERM, "chroot denied with EPERM");
	/* A deny whose errno is the default adds no rule, and still works. */
	expect_result("{\"version\":1,\"seccomp\":{\"deny\":[\"uname\"]}}", try_uname, NULL, EPERM,
		      "uname denied, default errno");
}

Test(seccomp, default_action_kill)
{
	expect_sigsys("{\"version\":1,\"seccomp\":{\"default_action\":\"kill\"}}", try_mount, NULL,
		      "mount under kill");
	/* The argument rules keep their own answers. */
	expect_result("{\"version\":1,\"seccomp\":{\"default_action\":\"kill\"}}", try_clone3, NULL,
		      ENOSYS, "clone3 under kill");
}

Test(seccomp, default_action_log_still_refuses_tiocsti)
{
	static const unsigned long sti = TIOCSTI;

	expect_result("{\"version\":1,\"seccomp\":{\"default_action\":\"log\"}}", try_ioctl, &sti,
		      EPERM, "TIOCSTI under log");
}

/* ---- building ---- */

static int build_error(const char *json, struct err *err)
{
	struct policy *p = load(json);
	scmp_filter_ctx ctx = (scmp_filter_ctx)0x1;
	struct seccomp_info info = {.n_rules = 99};
	int r = seccomp_build(p, &ctx, &info, err);

	cr_expect_null(ctx);
	cr_expect(!info.enabled && info.n_rules == 0 && info.denied == NULL);
	seccomp_info_free(&info);
	policy_free(p);
	return r;
}

Test(seccomp, unknown_syscall_name)
{
	struct err err = {0};

	cr_expect_eq(
	    build_error("{\"version\":1,\"seccomp\":{\"allow\":[\"ptrace\",\"fooo\"]}}", &err),
	    -EINVAL);
	cr_expect_str_eq(err.msg, "seccomp.allow[1]: unknown syscall \"fooo\"");
	cr_expect_eq(
	    build_error("{\"version\":1,\"seccomp\":{\"deny\":[{\"syscall\":\"nope\"}]}}", &err),
	    -EINVAL);
	cr_expect_str_eq(err.msg, "seccomp.deny[0]: unknown syscall \"nope\"");
#if defined(__x86_64__)
	/* Known to libseccomp, but a 32-bit-only call. */
	cr_expect_eq(build_error("{\"version\":1,\"seccomp\":{\"allow\":[\"socketcall\"]}}", &err),
		     -EINVAL);
	cr_expect_str_eq(err.msg, "seccomp.allow[0]: syscall \"socketcall\" does not exist on this "
				  "architecture");
#endif
	cr_expect_eq(build_error("{\"version\":1,\"seccomp\":{\"deny\":[\"execveat\"]}}", &err),
		     -EINVAL);
	cr_expect_str_eq(err.msg, "seccomp.deny[0]: \"execveat\" is needed to start the sandbox");
}

Test(seccomp, profile_none)
{
	struct policy *p = load("{\"version\":1,\"seccomp\":{\"profile\":\"none\"}}");
	scmp_filter_ctx ctx = (scmp_filter_ctx)0x1;
	struct seccomp_info info = {0};
	struct err err = {0};

	cr_assert_eq(seccomp_build(p, &ctx, &info, &err), 0, "%s", err.msg);
	cr_expect_null(ctx);
	cr_expect_not(info.enabled);
	cr_expect_eq(info.n_rules + info.n_allowed + info.n_denied, 0);
	/* Nothing to load: seccomp_apply(NULL) succeeds and leaves the
	 * process unfiltered. */
	cr_expect_eq(seccomp_apply(NULL, &err), 0);
	seccomp_info_free(&info);
	policy_free(p);
}

static bool is_hex64(const char *s)
{
	return strlen(s) == 64 && strspn(s, "0123456789abcdef") == 64;
}

Test(seccomp, info_counts_and_digest)
{
	struct seccomp_info a = {0}, b = {0}, c = {0};
	scmp_filter_ctx x = build(default_policy, &a), y = build(default_policy, &b);
	scmp_filter_ctx z = build("{\"version\":1,\"seccomp\":{\"allow\":[\"ptrace\"]}}", &c);

	cr_expect(a.enabled);
	cr_expect_gt(a.n_allowed, 200);
	cr_expect_gt(a.n_rules, a.n_allowed, "the argument rules count too");
	cr_expect(is_hex64(a.bpf_sha256), "%s", a.bpf_sha256);
	cr_expect_str_eq(a.bpf_sha256, b.bpf_sha256, "same policy, same program");
	cr_expect_str_neq(a.bpf_sha256, c.bpf_sha256);
	cr_expect_eq(c.n_allowed, a.n_allowed + 1);
	for (size_t i = 1; i < a.n_denied; i++)
		cr_expect_lt(strcmp(a.denied[i - 1], a.denied[i]), 0, "sorted, no repeats");
	cr_expect(has_denied(&a, "mount"));
	cr_expect(has_denied(&a, "clone3 (ENOSYS)"));
	cr_expect(has_denied(&a, "ioctl (TIOCSTI, TIOCLINUX)"));
	cr_expect_not(has_denied(&a, "read"));
	seccomp_release(x);
	seccomp_release(y);
	seccomp_release(z);
	seccomp_info_free(&a);
	seccomp_info_free(&b);
	seccomp_info_free(&c);
	seccomp_info_free(NULL);
}

/* ---- real programs under the filter ---- */

static int try_exec(const void *arg)
{
	char *const *argv = arg;
	int status;
	pid_t pid = fork();

	if (pid == 0) {
		int null = open("/dev/null", O_WRONLY);

		dup2(null, 1);
		execv(argv[0], argv);
		_exit(127);
	}
	if (pid < 0)
		return errno;
	if (waitpid(pid, &status, 0) != pid)
		return ECHILD;
	if (WIFSIGNALED(status))
		return 1000 + WTERMSIG(status);
	return WEXITSTATUS(status) ? 2000 + WEXITSTATUS(status) : 0;
}

Test(seccomp, programs_run)
{
	static char *const truth[] = {"/bin/true", NULL};
	static char *const sh[] = {
	    "/bin/sh", "-c",
	    "set -e; echo hi | cat | wc -c; ls / >/dev/null; id -u; sort /etc/passwd | head -1;"
	    "x=$(uname -a); test -n \"$x\"; sleep 0.01; (exit 0) & wait",
	    NULL};
	static char *const py[] = {
	    "/usr/bin/python3", "-c",
	    "import os, socket, subprocess, threading, tempfile\n"
	    "t = threading.Thread(target=lambda: None); t.start(); t.join()\n"
	    "subprocess.run(['/bin/true'], check=True)\n"
	    "s = socket.socket(); s.bind(('127.0.0.1', 0)); s.close()\n"
	    "print(os.getpid(), os.uname().sysname)\n",
	    NULL};

	expect_result(default_policy, try_exec, truth, 0, "/bin/true");
	expect_result(default_policy, try_exec, sh, 0, "/bin/sh pipeline");
	if (access(py[0], X_OK) == 0)
		expect_result(default_policy, try_exec, py, 0, "python3");
}

/* The launcher loads the program exported in the parent, not the
 * libseccomp context: the same defences must hold through that path. And
 * calls newer than libseccomp's table answer ENOSYS, so libc falls back to
 * the older call instead of failing hard. */
static int probe_exported(const void *arg)
{
	(void)arg;
	if (syscall(SYS_clone3, NULL, 0) != -1 || errno != ENOSYS)
		return 1;
	if (syscall(SYS_unshare, CLONE_NEWUSER) != -1 || errno != EPERM)
		return 2;
	if (syscall(SYS_getppid) <= 0)
		return 3;
	/* 462 is mseal (Linux 6.10), unknown to libseccomp 2.5.4. */
	if (syscall(462, 0, 0, 0) != -1 || errno != ENOSYS)
		return 4;
	/* fchmodat2 (452) is allowed: on a missing path, the kernel answers. */
	if (syscall(452, AT_FDCWD, "/nonexistent/x", 0644, 0) != -1 || errno != ENOENT)
		return 5;
	return 0;
}

Test(seccomp, exported_program_loads_and_blocks)
{
	struct seccomp_info info = {0};
	scmp_filter_ctx ctx = build("{\"version\":1}", &info);
	struct outcome o;

	seccomp_release(ctx);
	cr_assert_not_null(info.bpf);
	cr_assert_eq(info.bpf_len % 8, 0);
	o = run_with(NULL, &info, probe_exported, NULL);
	cr_assert(o.reported, "child status %#x", o.status);
	cr_assert_eq(o.result, 0, "check %d failed", o.result);
	seccomp_info_free(&info);
}

Test(seccomp, exported_program_absent_is_not_loaded)
{
	struct seccomp_info info = {0};
	struct err err = {0};

	cr_assert_eq(seccomp_apply_bpf(&info, &err), 0, "a disabled filter loads nothing");
	info.enabled = true;
	cr_assert_eq(seccomp_apply_bpf(&info, &err), -EINVAL, "enabled without a program");
	cr_assert(strstr(err.msg, "no valid program"));
}

/* ---- the protected-path notice's prefix (seccomp_protect.c) ---- */

/* The notice's program, loaded without a listener: its notifications
 * then fail with ENOSYS (seccomp(2)), which tells them from the policy's
 * own answers (EDOM, or the kernel's ENOENT for a call let through). */
static struct outcome run_prefix(const char *json, const struct call *c, size_t *n_calls,
				 bool allowlist)
{
	struct policy *p = load(json);
	struct seccomp_info info = {0}, loaded;
	scmp_filter_ctx ctx = NULL;
	struct err err = {0};
	struct outcome o;

	cr_assert_eq(seccomp_build(p, &ctx, &info, &err), 0, "%s", err.msg);
	seccomp_release(ctx);
	cr_assert_eq(seccomp_protect_program(&info, p, allowlist), 0);
	*n_calls = info.n_protect_nrs;
	loaded = info;
	loaded.bpf = info.bpf_notify ? info.bpf_notify : info.bpf;
	loaded.bpf_len = info.bpf_notify ? info.bpf_notify_len : info.bpf_len;
	o = run_with(NULL, &loaded, do_call, c);
	seccomp_info_free(&info);
	policy_free(p);
	return o;
}

static struct outcome run_notice(const char *json, const struct call *c, size_t *n_calls)
{
	return run_prefix(json, c, n_calls, false);
}

Test(seccomp, notice_prefix_sends_only_its_calls)
{
	const struct call notified[] = {
	    {"rename", SYS_rename, {(long)NOPE, (long)NOPE "2"}},
	    {"renameat", SYS_renameat, {AT_FDCWD, (long)NOPE, AT_FDCWD, (long)NOPE "2"}},
	    {"renameat2", SYS_renameat2, {AT_FDCWD, (long)NOPE, AT_FDCWD, (long)NOPE "2", 0}},
	    {"unlinkat AT_REMOVEDIR", SYS_unlinkat, {AT_FDCWD, (long)NOPE, AT_REMOVEDIR}},
	    {"rmdir", SYS_rmdir, {(long)NOPE}},
	};
	const struct call others[] = {
	    {"mkdir", SYS_mkdir, {(long)NOPE, 0755}},
	    {"unlink", SYS_unlink, {(long)NOPE}},
	    {"unlinkat", SYS_unlinkat, {AT_FDCWD, (long)NOPE, 0}},
	    {"link", SYS_link, {(long)NOPE, (long)NOPE "2"}},
	    {"openat", SYS_openat, {AT_FDCWD, (long)NOPE, O_RDONLY}},
	};
	const struct call mount = {"mount", SYS_mount, {(long)"none", (long)NOPE, (long)"tmpfs"}};
	size_t n;
	struct outcome o;

	for (size_t i = 0; i < sizeof(notified) / sizeof(notified[0]); i++) {
		o = run_notice(edom_policy, &notified[i], &n);
		cr_expect_eq(n, 5);
		cr_expect(o.reported && o.result == ENOSYS, "%s: got %d (status %#x)",
			  notified[i].name, o.result, o.status);
	}
	for (size_t i = 0; i < sizeof(others) / sizeof(others[0]); i++) {
		o = run_notice(edom_policy, &others[i], &n);
		cr_expect(o.reported && o.result == ENOENT, "%s: got %d", others[i].name, o.result);
	}
	/* The policy's program still decides the rest. */
	o = run_notice(edom_policy, &mount, &n);
	cr_expect(o.reported && o.result == EDOM, "mount: got %d", o.result);
}

/* A call the policy denies stays out of the prefix: a "continue" must not
 * skip the policy's refusal. */
Test(seccomp, notice_prefix_leaves_a_denied_call_to_the_policy)
{
	static const char deny_rename[] =
	    "{\"version\":1,\"seccomp\":{\"errno\":\"EDOM\","
	    "\"deny\":[{\"syscall\":\"rename\",\"errno\":\"EACCES\"}]}}";
	const struct call rename = {"rename", SYS_rename, {(long)NOPE, (long)NOPE "2"}};
	const struct call rmdir = {"rmdir", SYS_rmdir, {(long)NOPE}};
	size_t n;
	struct outcome o = run_notice(deny_rename, &rename, &n);

	cr_expect_eq(n, 4);
	cr_expect(o.reported && o.result == EACCES, "rename: got %d", o.result);
	o = run_notice(deny_rename, &rmdir, &n);
	cr_expect(o.reported && o.result == ENOSYS, "rmdir: got %d", o.result);
}

/* protect_git "allowlist" (launcher/supervisor/gitallow.c): also every
 * call that makes, writes or removes a name; an open only when it creates
 * or writes, and an open or chmod with a set-id bit goes to the policy,
 * which refuses it (here EDOM, the default action). */
Test(seccomp, allowlist_prefix_sends_creating_calls_only)
{
	const struct call notified[] = {
	    {"rename", SYS_rename, {(long)NOPE, (long)NOPE "2"}},
	    {"rmdir", SYS_rmdir, {(long)NOPE}},
	    {"unlinkat", SYS_unlinkat, {AT_FDCWD, (long)NOPE, 0}},
	    {"unlink", SYS_unlink, {(long)NOPE}},
	    {"mkdir", SYS_mkdir, {(long)NOPE, 0755}},
	    {"mkdirat", SYS_mkdirat, {AT_FDCWD, (long)NOPE, 0755}},
	    {"openat O_CREAT", SYS_openat, {AT_FDCWD, (long)NOPE, O_CREAT | O_WRONLY, 0644}},
	    {"openat O_RDWR", SYS_openat, {AT_FDCWD, (long)NOPE, O_RDWR, 0}},
	    {"open O_CREAT", SYS_open, {(long)NOPE, O_CREAT | O_RDONLY, 0600}},
	    {"creat", SYS_creat, {(long)NOPE, 0644}},
	    {"chmod", SYS_chmod, {(long)NOPE, 0644}},
	    {"fchmodat", SYS_fchmodat, {AT_FDCWD, (long)NOPE, 0600}},
	};
	const struct call others[] = {
	    {"openat O_RDONLY", SYS_openat, {AT_FDCWD, (long)NOPE, O_RDONLY, 0}},
	    {"open O_RDONLY", SYS_open, {(long)NOPE, O_RDONLY, 0}},
	    {"link", SYS_link, {(long)NOPE, (long)NOPE "2"}},
	    {"symlink", SYS_symlink, {(long)NOPE, (long)NOPE "2"}},
	};
	const struct call policy[] = {
	    {"openat S_ISUID", SYS_openat, {AT_FDCWD, (long)NOPE, O_CREAT | O_WRONLY, 04755}},
	    {"creat S_ISGID", SYS_creat, {(long)NOPE, 02755}},
	    {"chmod S_ISUID", SYS_chmod, {(long)NOPE, 04755}},
	    {"mount", SYS_mount, {(long)"none", (long)NOPE, (long)"tmpfs"}},
	};
	size_t n;
	struct outcome o;

	for (size_t i = 0; i < sizeof(notified) / sizeof(notified[0]); i++) {
		o = run_prefix(edom_policy, &notified[i], &n, true);
		cr_expect_geq(n, 13);
		cr_expect(o.reported && o.result == ENOSYS, "%s: got %d (status %#x)",
			  notified[i].name, o.result, o.status);
	}
	for (size_t i = 0; i < sizeof(others) / sizeof(others[0]); i++) {
		o = run_prefix(edom_policy, &others[i], &n, true);
		cr_expect(o.reported && o.result == ENOENT, "%s: got %d", others[i].name, o.result);
	}
	for (size_t i = 0; i < sizeof(policy) / sizeof(policy[0]); i++) {
		o = run_prefix(edom_policy, &policy[i], &n, true);
		cr_expect(o.reported && o.result == EDOM, "%s: got %d", policy[i].name, o.result);
	}
}

/* A call the policy denies, or has a rule of its own for, stays out of the
 * allowlist's prefix too. */
Test(seccomp, allowlist_prefix_leaves_the_policy_rules_to_the_policy)
{
	static const char deny[] = "{\"version\":1,\"seccomp\":{\"errno\":\"EDOM\","
				   "\"deny\":[{\"syscall\":\"mkdir\",\"errno\":\"EACCES\"}],"
				   "\"allow\":[\"creat\"]}}";
	const struct call mkdir_call = {"mkdir", SYS_mkdir, {(long)NOPE, 0755}};
	const struct call creat_call = {"creat", SYS_creat, {(long)NOPE, 0644}};
	size_t n;
	struct outcome o = run_prefix(deny, &mkdir_call, &n, true);

	cr_expect(o.reported && o.result == EACCES, "mkdir: got %d", o.result);
	o = run_prefix(deny, &creat_call, &n, true);
	cr_expect(o.reported && o.result != ENOSYS, "creat: got %d", o.result);
}

Test(seccomp, notice_prefix_not_without_the_default_profile)
{
	struct policy *p = load("{\"version\":1,\"seccomp\":{\"profile\":\"none\"}}");
	struct seccomp_info info = {0};

	cr_assert_eq(seccomp_protect_program(&info, p, false), 0);
	cr_assert_null(info.bpf_notify);
	cr_assert_eq(info.n_protect_nrs, 0);
	policy_free(p);
}
