/* The syscall filter (libseccomp), built in the parent from the policy's
 * "seccomp" section and loaded by the child as its last step before exec
 * (STYLE.md section 6).
 *
 * The "default" profile is an allowlist: what glibc, shells, coreutils,
 * python3, git, gcc/make and node use, and nothing that only administers
 * the machine. It is at least as strict as Docker's default profile for a
 * container without CAP_SYS_ADMIN and friends (moby profiles/seccomp/
 * default.json), and closes what newer profiles and agent sandboxes close
 * besides: io_uring, AF_VSOCK and AF_ALG sockets, TIOCSTI and TIOCLINUX,
 * foreign-architecture entry points. */
#include "sandbox.h"

#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/personality.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "../../include/cleanup.h"
#include "../../policy/sha256.h"

#ifndef AF_ALG
#define AF_ALG 38
#endif
#ifndef AF_VSOCK
#define AF_VSOCK 40
#endif
#ifndef CLONE_NEWCGROUP
#define CLONE_NEWCGROUP 0x02000000
#endif

static void cleanup_seccomp_fn(scmp_filter_ctx *ctx)
{
	if (*ctx)
		seccomp_release(*ctx);
}
#define cleanup_seccomp __attribute__((cleanup(cleanup_seccomp_fn)))

/* The tables keep one line per group of related calls: clang-format would
 * put each name on a line of its own once comments are inside. */

/* Allowed unconditionally. Names that do not exist on the running
 * architecture (libseccomp resolves them to nothing or to a negative
 * pseudo-number, e.g. "fstatat64" or "arch_prctl" off x86) are skipped: the
 * table is shared by every architecture, and a call the kernel does not
 * have needs no rule. */
/* clang-format off */
static const char *const allowed[] = {
    /* files: read, write, seek, sync */
    "read", "write", "readv", "writev", "pread64", "pwrite64", "preadv", "preadv2", "pwritev",
    "pwritev2", "lseek", "_llseek", "close",
    "close_range", "dup", "dup2", "dup3", "fcntl", "fcntl64", "flock", "fsync", "fdatasync",
    "sync", "syncfs", "sync_file_range", "truncate", "ftruncate", "fallocate", "fadvise64",
    "fadvise64_64", "readahead", "copy_file_range", "sendfile", "sendfile64", "splice", "tee",
    "vmsplice",
    /* files: metadata, directories, links */
    "stat", "fstat", "lstat", "newfstatat", "fstatat64", "stat64", "fstat64", "lstat64",
    "statx", "statfs", "fstatfs", "statfs64", "fstatfs64", "access", "faccessat",
    "faccessat2", "readlink", "readlinkat", "getdents", "getdents64", "getcwd", "chdir",
    "fchdir", "mkdir", "mkdirat", "rmdir", "unlink", "unlinkat", "rename", "renameat",
    "renameat2", "link", "linkat", "symlink", "symlinkat",
    "chown", "fchown", "lchown", "fchownat", "umask", "utime", "utimes", "utimensat",
    "futimesat",
    /* extended attributes */
    "getxattr", "lgetxattr", "fgetxattr", "setxattr", "lsetxattr", "fsetxattr", "listxattr",
    "llistxattr", "flistxattr", "removexattr", "lremovexattr", "fremovexattr",
    /* memory */
    "brk", "mmap", "mmap2", "munmap", "mremap", "mprotect", "msync", "mincore", "madvise",
    "mlock", "mlock2", "munlock", "mlockall", "munlockall", "membarrier", "memfd_create",
    "pkey_alloc", "pkey_free", "pkey_mprotect",
    /* processes and credentials; clone is conditional, below */
    "execve", "execveat", "exit", "exit_group", "fork", "vfork", "wait4", "waitid",
    "waitpid", "kill", "tkill", "tgkill", "getpid", "getppid", "gettid", "getpgid",
    "setpgid", "getpgrp", "getsid", "setsid", "getuid", "geteuid", "getgid", "getegid",
    "getresuid", "getresgid", "getgroups", "setuid", "setgid", "setreuid", "setregid",
    "setresuid", "setresgid", "setgroups", "setfsuid", "setfsgid", "capget", "capset",
    "prctl", "arch_prctl", "set_tid_address", "set_robust_list", "get_robust_list", "rseq",
    "get_thread_area", "set_thread_area", "getpriority", "setpriority", "getrlimit",
    "ugetrlimit", "setrlimit", "prlimit64", "getrusage", "times", "pidfd_open",
    "pidfd_send_signal",
    /* self-restriction only: a further filter (with no_new_privs, which
     * the launcher has set) or a Landlock domain can only take away */
    "seccomp", "landlock_create_ruleset", "landlock_add_rule", "landlock_restrict_self",
    /* signals */
    "rt_sigaction", "rt_sigprocmask", "rt_sigreturn", "rt_sigpending", "rt_sigsuspend",
    "rt_sigtimedwait", "rt_sigqueueinfo", "rt_tgsigqueueinfo", "sigaltstack", "signalfd",
    "signalfd4", "pause", "restart_syscall", "sigreturn", "sigprocmask",
    /* time: reading clocks and timers; setting clocks is not allowed */
    "clock_gettime", "clock_getres", "clock_nanosleep", "nanosleep", "gettimeofday", "time",
    "alarm", "getitimer", "setitimer", "timer_create", "timer_settime", "timer_gettime",
    "timer_getoverrun", "timer_delete", "timerfd_create", "timerfd_settime",
    "timerfd_gettime",
    /* scheduling */
    "sched_yield", "sched_getaffinity", "sched_setaffinity", "sched_getparam",
    "sched_setparam", "sched_getscheduler", "sched_setscheduler", "sched_get_priority_max",
    "sched_get_priority_min", "sched_rr_get_interval", "sched_getattr", "sched_setattr",
    "getcpu", "ioprio_get", "ioprio_set",
    /* waiting */
    "futex", "futex_waitv", "futex_wake", "futex_wait", "futex_requeue", "cachestat",
    "map_shadow_stack", "poll", "ppoll", "select", "_newselect", "pselect6",
    "epoll_create", "epoll_create1", "epoll_ctl", "epoll_wait", "epoll_pwait",
    "epoll_pwait2", "eventfd", "eventfd2", "inotify_init", "inotify_init1",
    "inotify_add_watch", "inotify_rm_watch", "pipe", "pipe2",
    /* sockets; socket and socketpair are conditional, below. The network
     * namespace is private, so these reach only its loopback. */
    "connect", "bind", "listen", "accept", "accept4", "getsockname", "getpeername", "sendto",
    "recvfrom", "sendmsg", "recvmsg", "sendmmsg", "recvmmsg", "shutdown", "getsockopt",
    "setsockopt",
    /* System V and POSIX IPC, in the sandbox's own IPC namespace */
    "shmget", "shmat", "shmdt", "shmctl", "semget", "semop", "semctl", "semtimedop",
    "msgget", "msgsnd", "msgrcv", "msgctl", "mq_open", "mq_unlink", "mq_timedsend",
    "mq_timedreceive", "mq_notify", "mq_getsetattr",
    /* Linux AIO (not io_uring) */
    "io_setup", "io_destroy", "io_submit", "io_cancel", "io_getevents", "io_pgetevents",
    /* system information */
    "uname", "sysinfo", "getrandom",
};

/* Left to the default action and listed in --explain: the calls that
 * administer the machine or have been the way out of containers. Docker
 * allows some of them only with a capability the sandbox never has (named
 * after the call); the rest Docker allows and we do not. */
static const char *const dangerous[] = {
    /* mounts, old and new API (CAP_SYS_ADMIN) */
    "mount", "umount", "umount2", "pivot_root", "open_tree", "move_mount", "fsopen",
    "fsconfig", "fsmount", "fspick", "mount_setattr",
    /* namespaces: nested user namespaces are kernel attack surface
     * (CAP_SYS_ADMIN) */
    "unshare", "setns",
    /* the kernel keyring is not namespaced */
    "keyctl", "add_key", "request_key",
    /* eBPF, perf and userfaultfd: kernel attack surface, and userfaultfd
     * stretches race windows in exploits (CAP_BPF, CAP_PERFMON) */
    "bpf", "perf_event_open", "userfaultfd",
    /* io_uring bypasses seccomp for the operations it performs (Docker
     * dropped it in 2023) */
    "io_uring_setup", "io_uring_enter", "io_uring_register",
    /* kernel images and modules, power, swap, accounting */
    "kexec_load", "kexec_file_load", "init_module", "finit_module", "delete_module",
    "create_module", "get_kernel_syms", "query_module", "reboot", "swapon", "swapoff", "acct",
    /* clocks (CAP_SYS_TIME) */
    "settimeofday", "clock_settime", "clock_adjtime", "adjtimex", "stime",
    /* file handles: open_by_handle_at opened host files from Docker in
     * 2014 ("shocker") */
    "open_by_handle_at", "name_to_handle_at",
    /* other processes' memory and fds (CAP_SYS_PTRACE) */
    "ptrace", "process_vm_readv", "process_vm_writev", "pidfd_getfd", "kcmp",
    "process_madvise",
    /* NUMA policy (CAP_SYS_NICE) */
    "mbind", "set_mempolicy", "get_mempolicy", "set_mempolicy_home_node", "migrate_pages",
    "move_pages",
    /* hardware and legacy interfaces */
    "iopl", "ioperm", "modify_ldt", "vm86", "vm86old", "pciconfig_iobase", "pciconfig_read",
    "pciconfig_write", "lookup_dcookie", "quotactl", "quotactl_fd", "nfsservctl", "vhangup",
    "syslog", "uselib", "sysfs", "_sysctl", "fanotify_init",
    /* root and names (CAP_SYS_CHROOT, CAP_SYS_ADMIN) */
    "chroot", "sethostname", "setdomainname",
};
/* clang-format on */

/* Calls with argument rules below: a policy's allow or deny of one of them
 * replaces the rule. */
static const char *const conditional[] = {
    "clone",  "clone3",	  "socket",    "socketpair", "ioctl",  "personality", "openat2", "chmod",
    "fchmod", "fchmodat", "fchmodat2", "open",	     "openat", "creat",	      "mknod",	 "mknodat"};

/* The calls that set a file's mode, and the argument holding it. */
static const struct {
	const char *name;
	unsigned arg;
} mode_calls[] = {
    {"chmod", 1},  {"fchmod", 1}, {"fchmodat", 2}, {"fchmodat2", 2}, {"open", 2},
    {"openat", 3}, {"creat", 1},  {"mknod", 1},	   {"mknodat", 2},
};

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

/* The namespace flags of clone(2). CLONE_NEWTIME (0x80) lies in clone's
 * exit-signal byte, so only clone3 and unshare can ask for it: both are
 * refused. */
#define CLONE_NS_FLAGS                                                                             \
	(CLONE_NEWNS | CLONE_NEWUTS | CLONE_NEWIPC | CLONE_NEWUSER | CLONE_NEWPID | CLONE_NEWNET | \
	 CLONE_NEWCGROUP)

/* clone's flags: argument 0, except on s390, where the stack comes first. */
#if defined(__s390__) || defined(__s390x__)
#define CLONE_FLAGS_ARG 1
#else
#define CLONE_FLAGS_ARG 0
#endif

struct builder {
	scmp_filter_ctx ctx;
	uint32_t def; /* the default action */
	const struct policy *p;
	const char **overrides; /* the policy's allow and deny names, sorted */
	size_t n_overrides;
	unsigned n_allowed, n_rules;
	struct err *err;
};

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

static bool overridden(const struct builder *b, const char *name)
{
	return b->n_overrides &&
	       bsearch(&name, b->overrides, b->n_overrides, sizeof(*b->overrides), cmp_str);
}

/* One rule. A rule whose action is the default is not added: it would not
 * change the answer, and libseccomp refuses it (-EACCES). */
static int add(struct builder *b, uint32_t action, int nr, const char *name, unsigned n,
	       const struct scmp_arg_cmp *args)
{
	int r;

	if (action == b->def)
		return 0;
	r = seccomp_rule_add_array(b->ctx, action, nr, n, args);
	if (r < 0)
		return err_sys(b->err, r, "seccomp: add a rule for %s", name);
	b->n_rules++;
	return 0;
}

/* The low 32 bits of argument arg, masked with mask, equal value. The
 * kernel reads int and unsigned int arguments (socket's family, ioctl's
 * request, personality) from the low half of the register only, so a rule
 * that also compared the high half could be dodged by setting bits there
 * (CVE-2019-10063, flatpak's TIOCSTI filter). */
static struct scmp_arg_cmp low32(unsigned arg, uint32_t mask, uint32_t value)
{
	return (struct scmp_arg_cmp){
	    .arg = arg, .op = SCMP_CMP_MASKED_EQ, .datum_a = mask, .datum_b = value & mask};
}

/* Spread the low bits of pattern over the set bits of mask (x86's pdep). */
static uint32_t deposit(uint32_t pattern, uint32_t mask)
{
	uint32_t out = 0;

	for (uint32_t bit = 1; mask; bit <<= 1, mask &= mask - 1)
		if (pattern & bit)
			out |= mask & -mask;
	return out;
}

/* Allow nr unless the low 32 bits of argument arg are one of ex[0..n-1].
 *
 * The obvious rules do not work with libseccomp 2.5: an unconditional
 * allow overrides every conditional rule of the same call (checked with
 * seccomp_export_pfc), a rule may compare an argument only once, and an
 * errno rule equal to the default action is refused. So the complement is
 * spelled out as masked-equality allow rules, which are ORed: for each bit
 * on which all excluded values agree, "this bit differs" allows; the few
 * bits on which they differ are enumerated, every pattern but theirs. For
 * two values 3 bits apart that is 29 + 6 rules. */
static int allow_except(struct builder *b, int nr, const char *name, unsigned arg,
			const uint32_t *ex, size_t n)
{
	uint32_t same = UINT32_MAX, vary;
	unsigned k;
	int r;

	for (size_t i = 1; i < n; i++)
		same &= ~(ex[i] ^ ex[0]);
	vary = ~same;
	k = (unsigned)__builtin_popcount(vary);
	if (k > 6)
		return err_set(b->err, EINVAL, "seccomp: %s: too many exceptions to spell out",
			       name);
	for (unsigned bit = 0; bit < 32; bit++) {
		uint32_t m = 1u << bit;
		struct scmp_arg_cmp c = low32(arg, m, ~ex[0]);

		if (!(same & m))
			continue;
		r = add(b, SCMP_ACT_ALLOW, nr, name, 1, &c);
		if (r < 0)
			return r;
	}
	for (uint32_t pat = 0; pat < (1u << k); pat++) {
		uint32_t v = deposit(pat, vary);
		struct scmp_arg_cmp c = low32(arg, vary, v);
		bool excluded = false;

		for (size_t i = 0; i < n; i++)
			excluded |= (ex[i] & vary) == v;
		if (excluded)
			continue;
		r = add(b, SCMP_ACT_ALLOW, nr, name, 1, &c);
		if (r < 0)
			return r;
	}
	return 0;
}

/* nr answers errno when the low 32 bits of argument arg are one of
 * ex[0..n-1], and is allowed otherwise. */
static int refuse_values(struct builder *b, int nr, const char *name, unsigned arg,
			 const uint32_t *ex, size_t n, int errno_value)
{
	int r = 0;

	for (size_t i = 0; r >= 0 && i < n; i++) {
		struct scmp_arg_cmp c = low32(arg, UINT32_MAX, ex[i]);

		r = add(b, SCMP_ACT_ERRNO((uint32_t)errno_value), nr, name, 1, &c);
	}
	return r < 0 ? r : allow_except(b, nr, name, arg, ex, n);
}

static int add_conditional(struct builder *b, const char *name, int nr)
{
	/* AF_ALG puts the kernel's crypto code within reach and has had
	 * several privilege escalations; AF_VSOCK talks to the hypervisor
	 * and is not namespaced. EAFNOSUPPORT is what a kernel without
	 * them answers, so programs take it as "not here". */
	static const uint32_t families[] = {AF_ALG, AF_VSOCK};
	/* TIOCSTI pushes input into a terminal, which runs as the caller if
	 * it is the caller's tty (CVE-2017-5226, bubblewrap); TIOCLINUX can
	 * do the same through the console's selection buffer. */
	static const uint32_t requests[] = {TIOCSTI, TIOCLINUX};
	/* Docker's list: PER_LINUX, PER_LINUX32, UNAME26 and their
	 * combination, and 0xffffffff, which only queries. Other flags
	 * (ADDR_NO_RANDOMIZE, READ_IMPLIES_EXEC, ...) weaken the address
	 * space layout that exploits have to guess. */
	static const uint32_t personas[] = {PER_LINUX, PER_LINUX32, UNAME26, PER_LINUX32 | UNAME26,
					    0xffffffffu};
	struct scmp_arg_cmp c;
	int r = 0;

	if (strcmp(name, "clone") == 0) {
		/* Namespaces from inside are kernel attack surface; a
		 * clone with any namespace flag gets the default action. */
		c = (struct scmp_arg_cmp){.arg = CLONE_FLAGS_ARG,
					  .op = SCMP_CMP_MASKED_EQ,
					  .datum_a = CLONE_NS_FLAGS,
					  .datum_b = 0};
		return add(b, SCMP_ACT_ALLOW, nr, name, 1, &c);
	}
	for (size_t i = 0; i < ARRAY_SIZE(mode_calls); i++) {
		if (strcmp(name, mode_calls[i].name) != 0)
			continue;
		/* No setuid or setgid bit from inside, on any file (docs/
		 * security.md, "A root caller"): a root caller's workspace is
		 * idmapped, so a setuid file the workload made there would be
		 * root's on the host; an unprivileged caller's would run as
		 * that caller for whoever runs it next. The mode is an
		 * unsigned int (low 32 bits); glibc passes 0 when open has
		 * no O_CREAT. Otherwise the default action (EPERM). */
		c = low32(mode_calls[i].arg, S_ISUID | S_ISGID, 0);
		return add(b, SCMP_ACT_ALLOW, nr, name, 1, &c);
	}
	if (strcmp(name, "openat2") == 0)
		/* Its mode is in memory (struct open_how), out of the
		 * filter's sight: ENOSYS, and callers fall back to openat. */
		return add(b, SCMP_ACT_ERRNO(ENOSYS), nr, name, 0, NULL);
	if (strcmp(name, "clone3") == 0)
		/* seccomp cannot read clone3's flags (they are in memory),
		 * so it is refused with ENOSYS: glibc 2.34+ then falls back
		 * to clone, whose flags the rule above sees. */
		return add(b, SCMP_ACT_ERRNO(ENOSYS), nr, name, 0, NULL);
	if (strcmp(name, "socket") == 0 || strcmp(name, "socketpair") == 0)
		return refuse_values(b, nr, name, 0, families, ARRAY_SIZE(families), EAFNOSUPPORT);
	if (strcmp(name, "ioctl") == 0)
		return refuse_values(b, nr, name, 1, requests, ARRAY_SIZE(requests), EPERM);
	for (size_t i = 0; r >= 0 && i < ARRAY_SIZE(personas); i++) {
		c = low32(0, UINT32_MAX, personas[i]);
		r = add(b, SCMP_ACT_ALLOW, nr, name, 1, &c);
	}
	return r;
}

/* System calls newer than this libseccomp (it cannot name them, so they
 * are in no table here) answer ENOSYS rather than the default EPERM: libc
 * and programs treat ENOSYS as "the kernel is older, fall back" (glibc's
 * fchmodat2 to fchmodat, for one), EPERM as a hard failure. Both deny. The
 * range covers the numbers allocated after clone3 (435) on x86_64, up to a
 * margin past Linux 6.18. */
#define NEWER_FIRST 435
#define NEWER_LAST  480

static int add_newer(struct builder *b)
{
	if (seccomp_arch_native() != SCMP_ARCH_X86_64)
		return 0;
	for (int nr = NEWER_FIRST; nr <= NEWER_LAST; nr++) {
		char *name = seccomp_syscall_resolve_num_arch(SCMP_ARCH_NATIVE, nr);
		int r;

		if (name) {
			free(name); /* known to libseccomp: the tables decide */
			continue;
		}
		r = seccomp_rule_add(b->ctx, SCMP_ACT_ERRNO(ENOSYS), nr, 0);
		if (r < 0)
			return err_sys(b->err, r, "seccomp: ENOSYS rule for syscall %d", nr);
		b->n_rules++;
	}
	return 0;
}

static int add_table(struct builder *b)
{
	int nr, r;

	for (size_t i = 0; i < ARRAY_SIZE(allowed); i++) {
		if (overridden(b, allowed[i]))
			continue;
		nr = seccomp_syscall_resolve_name(allowed[i]);
		if (nr < 0)
			continue; /* not a call of this architecture */
		r = add(b, SCMP_ACT_ALLOW, nr, allowed[i], 0, NULL);
		if (r < 0)
			return r;
		b->n_allowed++;
	}
	for (size_t i = 0; i < ARRAY_SIZE(conditional); i++) {
		if (overridden(b, conditional[i]))
			continue;
		nr = seccomp_syscall_resolve_name(conditional[i]);
		if (nr < 0)
			continue;
		r = add_conditional(b, conditional[i], nr);
		if (r < 0)
			return r;
	}
	return add_newer(b);
}

/* The number of a policy's syscall name on this architecture. */
static int resolve(const char *list, const struct policy_syscall_rule *rule, struct err *err)
{
	int nr = seccomp_syscall_resolve_name(rule->name);

	if (nr == __NR_SCMP_ERROR)
		return err_set(err, EINVAL, "seccomp.%s[%zu]: unknown syscall \"%s\"", list,
			       rule->index, rule->name);
	if (nr < 0)
		return err_set(
		    err, EINVAL,
		    "seccomp.%s[%zu]: syscall \"%s\" does not exist on this architecture", list,
		    rule->index, rule->name);
	return nr;
}

static int add_policy(struct builder *b)
{
	const struct policy *p = b->p;
	int nr, r;

	for (size_t i = 0; i < p->n_seccomp_allow; i++) {
		nr = resolve("allow", &p->seccomp_allow[i], b->err);
		if (nr < 0)
			return nr;
		r = add(b, SCMP_ACT_ALLOW, nr, p->seccomp_allow[i].name, 0, NULL);
		if (r < 0)
			return r;
		b->n_allowed++;
	}
	for (size_t i = 0; i < p->n_seccomp_deny; i++) {
		const struct policy_syscall_rule *d = &p->seccomp_deny[i];

		nr = resolve("deny", d, b->err);
		if (nr < 0)
			return nr;
		/* The launcher's last step is fexecve() of paddock-init
		 * (execveat, or execve of /proc/self/fd/N), and init starts
		 * the workload with execve: without them nothing runs. */
		if (strcmp(d->name, "execve") == 0 || strcmp(d->name, "execveat") == 0)
			return err_set(b->err, EINVAL,
				       "seccomp.deny[%zu]: \"%s\" is needed to start the sandbox",
				       d->index, d->name);
		r = add(b, SCMP_ACT_ERRNO((uint32_t)d->errno_value), nr, d->name, 0, NULL);
		if (r < 0)
			return r;
	}
	return 0;
}

static int collect_overrides(struct builder *b)
{
	const struct policy *p = b->p;
	size_t n = 0;

	b->overrides = calloc(p->n_seccomp_allow + p->n_seccomp_deny + 1, sizeof(char *));
	if (!b->overrides)
		return err_set(b->err, ENOMEM, "out of memory");
	for (size_t i = 0; i < p->n_seccomp_allow; i++)
		b->overrides[n++] = p->seccomp_allow[i].name;
	for (size_t i = 0; i < p->n_seccomp_deny; i++)
		b->overrides[n++] = p->seccomp_deny[i].name;
	qsort(b->overrides, n, sizeof(*b->overrides), cmp_str);
	b->n_overrides = n;
	return 0;
}

static uint32_t default_action(const struct policy *p)
{
	switch (p->seccomp_default_action) {
	case POLICY_SECCOMP_KILL:
		return SCMP_ACT_KILL_PROCESS;
	case POLICY_SECCOMP_LOG:
		return SCMP_ACT_LOG;
	case POLICY_SECCOMP_ERRNO:
		break;
	}
	return SCMP_ACT_ERRNO((uint32_t)p->seccomp_errno);
}

static int set_attrs(scmp_filter_ctx ctx, struct err *err)
{
	static const struct {
		enum scmp_filter_attr attr;
		uint32_t value;
		const char *name;
	} attrs[] = {
	    /* Only the native architecture is in the filter; a call made
	     * through another entry point (int 0x80 or x32 on x86_64) has
	     * other numbers, and the rules would not mean what they say. It
	     * kills the process. libseccomp's x86_64 filter also sends x32
	     * numbers (bit 30 set) to this action. */
	    {SCMP_FLTATR_ACT_BADARCH, SCMP_ACT_KILL_PROCESS, "bad-arch action"},
	    /* A binary tree of syscall numbers instead of a linear list:
	     * O(log n) compares per call with ~300 rules. */
	    {SCMP_FLTATR_CTL_OPTIMIZE, 2, "optimize"},
	    /* sandbox_harden() sets no_new_privs as its own step, before Landlock. */
	    {SCMP_FLTATR_CTL_NNP, 0, "no_new_privs"},
	    /* Report the kernel's errno from seccomp_load() instead of
	     * -ECANCELED, so that the child's error says what failed. */
	    {SCMP_FLTATR_API_SYSRAWRC, 1, "raw return codes"},
	};
	int r;

	for (size_t i = 0; i < ARRAY_SIZE(attrs); i++) {
		r = seccomp_attr_set(ctx, attrs[i].attr, attrs[i].value);
		if (r < 0)
			return err_sys(err, r, "seccomp: set %s", attrs[i].name);
	}
	return 0;
}

/* SHA-256 of the BPF program libseccomp generates, for the record: the
 * same policy and libseccomp give the same digest. */
static int bpf_digest(scmp_filter_ctx ctx, struct seccomp_info *info, struct err *err)
{
	char *out = info->bpf_sha256;
	unsigned char digest[SHA256_DIGEST_LEN];
	cleanup_close int fd = -1;
	cleanup_free char *buf = NULL;
	off_t size;
	ssize_t n;
	int r;

	fd = memfd_create("paddock-seccomp-bpf", MFD_CLOEXEC);
	if (fd < 0)
		return err_sys(err, errno, "seccomp: memfd_create");
	r = seccomp_export_bpf(ctx, fd);
	if (r < 0)
		return err_sys(err, r, "seccomp: export the filter");
	size = lseek(fd, 0, SEEK_END);
	if (size < 0)
		return err_sys(err, errno, "seccomp: lseek");
	buf = malloc((size_t)size + 1);
	if (!buf)
		return err_set(err, ENOMEM, "out of memory");
	n = pread(fd, buf, (size_t)size, 0);
	if (n != (ssize_t)size)
		return err_sys(err, n < 0 ? errno : EIO, "seccomp: read the exported filter");
	sha256(buf, (size_t)size, digest);
	sha256_hex(digest, out);
	info->bpf_len = (size_t)size;
	info->bpf = take_ptr(&buf);
	return 0;
}

static int push(char ***v, size_t *n, const char *s)
{
	char **nv = realloc(*v, (*n + 1) * sizeof(**v));

	if (!nv)
		return -ENOMEM;
	*v = nv;
	nv[*n] = strdup(s);
	if (!nv[*n])
		return -ENOMEM;
	(*n)++;
	return 0;
}

/* The names for --explain, sorted: the dangerous calls of this
 * architecture that the policy did not allow or deny itself, the argument
 * rules the policy did not replace, and the policy's denies with their
 * errno. Under "default_action": "log" the first group is logged, not
 * refused. */
static int list_denied(const struct builder *b, struct seccomp_info *info)
{
	static const char *const rules[][2] = {
	    {"clone", "clone (namespace flags)"},
	    {"clone3", "clone3 (ENOSYS)"},
	    {"chmod", "chmod, fchmod, fchmodat (S_ISUID or S_ISGID in the mode)"},
	    {"openat", "open, openat, creat, mknod, mknodat (S_ISUID or S_ISGID in the mode)"},
	    {"openat2", "openat2 (ENOSYS)"},
	    {"ioctl", "ioctl (TIOCSTI, TIOCLINUX)"},
	    {"personality", "personality (flags other than PER_LINUX32, UNAME26)"},
	    {"socket", "socket (AF_ALG, AF_VSOCK)"},
	    {"socketpair", "socketpair (AF_ALG, AF_VSOCK)"},
	};
	const struct policy *p = b->p;
	char line[128];
	int r = 0;

	for (size_t i = 0; r >= 0 && i < ARRAY_SIZE(dangerous); i++)
		if (!overridden(b, dangerous[i]) && seccomp_syscall_resolve_name(dangerous[i]) >= 0)
			r = push(&info->denied, &info->n_denied, dangerous[i]);
	for (size_t i = 0; r >= 0 && i < ARRAY_SIZE(rules); i++)
		if (!overridden(b, rules[i][0]) && seccomp_syscall_resolve_name(rules[i][0]) >= 0)
			r = push(&info->denied, &info->n_denied, rules[i][1]);
	for (size_t i = 0; r >= 0 && i < p->n_seccomp_deny; i++) {
		snprintf(line, sizeof(line), "%s (%s)", p->seccomp_deny[i].name,
			 policy_errno_name(p->seccomp_deny[i].errno_value));
		r = push(&info->denied, &info->n_denied, line);
	}
	if (r < 0)
		return err_set(b->err, ENOMEM, "out of memory");
	qsort(info->denied, info->n_denied, sizeof(*info->denied), cmp_str);
	return 0;
}

int seccomp_build(const struct policy *p, scmp_filter_ctx *out, struct seccomp_info *info,
		  struct err *err)
{
	cleanup_seccomp scmp_filter_ctx ctx = NULL;
	cleanup_free const char **overrides = NULL;
	struct seccomp_info built = {0};
	struct builder b = {.p = p, .err = err};
	int r;

	*out = NULL;
	*info = (struct seccomp_info){0};
	if (p->seccomp_profile == POLICY_SECCOMP_NONE)
		return 0;
	b.def = default_action(p);
	ctx = seccomp_init(b.def);
	if (!ctx)
		return err_set(err, ENOMEM, "seccomp: seccomp_init failed");
	b.ctx = ctx;
	r = set_attrs(ctx, err);
	if (r >= 0)
		r = collect_overrides(&b);
	overrides = b.overrides;
	/* The policy's names first: an unknown one is the likeliest error. */
	if (r >= 0)
		r = add_policy(&b);
	if (r >= 0)
		r = add_table(&b);
	if (r >= 0)
		r = bpf_digest(ctx, &built, err);
	if (r >= 0)
		r = list_denied(&b, &built);
	if (r < 0) {
		seccomp_info_free(&built);
		return r;
	}
	built.enabled = true;
	built.n_allowed = b.n_allowed;
	built.n_rules = b.n_rules;
	*info = built;
	*out = take_ptr(&ctx);
	return 0;
}

int seccomp_notify_program(struct seccomp_info *info, int errno_value)
{
	const struct sock_filter *in = info->bpf;
	size_t n = info->bpf_len / sizeof(struct sock_filter), turned = 0;
	uint32_t errno_ret = SECCOMP_RET_ERRNO | ((uint32_t)errno_value & SECCOMP_RET_DATA);
	struct sock_filter *out;
	unsigned char digest[SHA256_DIGEST_LEN];

	if (!info->enabled || !in || !n)
		return -EINVAL;
	out = malloc(info->bpf_len);
	if (!out)
		return -ENOMEM;
	memcpy(out, in, info->bpf_len);
	/* Every "return errno_value" of the program (the default action's,
	 * and a deny rule's of the same errno: both are denials) becomes a
	 * notification; the supervisor answers with errno_value. */
	for (size_t i = 0; i < n; i++)
		if (out[i].code == (BPF_RET | BPF_K) && out[i].k == errno_ret) {
			out[i].k = SECCOMP_RET_USER_NOTIF;
			turned++;
		}
	if (!turned) {
		free(out);
		return -EINVAL;
	}
	free(info->bpf_notify);
	info->bpf_notify = out;
	info->bpf_notify_len = info->bpf_len;
	info->notify_errno = errno_value;
	sha256(out, info->bpf_len, digest);
	sha256_hex(digest, info->bpf_notify_sha256);
	return 0;
}

int seccomp_apply_notify(const struct seccomp_info *info, int ctl, struct err *err)
{
	struct sock_fprog prog = {
	    .len = (unsigned short)(info->bpf_notify_len / sizeof(struct sock_filter)),
	    .filter = info->bpf_notify,
	};
	union {
		char b[CMSG_SPACE(sizeof(int))];
		struct cmsghdr align;
	} u;
	char word[] = "seccomp-notify";
	struct iovec iov = {.iov_base = word, .iov_len = sizeof(word) - 1};
	struct msghdr mh = {
	    .msg_iov = &iov, .msg_iovlen = 1, .msg_control = u.b, .msg_controllen = sizeof(u.b)};
	struct cmsghdr *c;
	int fd;

	fd = (int)syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, SECCOMP_FILTER_FLAG_NEW_LISTENER,
			  &prog);
	if (fd < 0)
		return err_sys(err, errno, "seccomp: load the filter with a listener");
	memset(u.b, 0, sizeof(u.b));
	c = CMSG_FIRSTHDR(&mh);
	c->cmsg_level = SOL_SOCKET;
	c->cmsg_type = SCM_RIGHTS;
	c->cmsg_len = CMSG_LEN(sizeof(int));
	memcpy(CMSG_DATA(c), &fd, sizeof(int));
	/* The filter is on: sendmsg and close are allowed calls. Were the
	 * send to fail, every denied call would fail with ENOSYS (no
	 * listener): still refused, and the run says so. */
	if (sendmsg(ctl, &mh, MSG_NOSIGNAL) < 0) {
		int e = errno;

		close(fd);
		return err_sys(err, e, "seccomp: send the listener");
	}
	close(fd);
	return 0;
}

void seccomp_info_free(struct seccomp_info *info)
{
	if (!info)
		return;
	free(info->bpf_notify);
	for (size_t i = 0; i < info->n_denied; i++)
		free(info->denied[i]);
	free(info->denied);
	free(info->bpf);
	*info = (struct seccomp_info){0};
}

/* A NULL ctx (profile "none") loads nothing and succeeds: the launcher
 * records that weakening from seccomp_info.enabled. */
int seccomp_apply(scmp_filter_ctx ctx, struct err *err)
{
	int r;

	if (!ctx)
		return 0;
	/* Without no_new_privs or CAP_SYS_ADMIN the kernel refuses a filter
	 * with EACCES; caps_no_new_privs() has set it. */
	r = seccomp_load(ctx);
	if (r < 0)
		return err_sys(err, r, "seccomp: load the filter");
	return 0;
}

int seccomp_apply_prog(const void *bpf, size_t len, struct err *err)
{
	struct sock_fprog prog = {
	    .len = (unsigned short)(len / sizeof(struct sock_filter)),
	    .filter = (struct sock_filter *)bpf,
	};

	if (!bpf || len % sizeof(struct sock_filter) || prog.len == 0 ||
	    len / sizeof(struct sock_filter) > BPF_MAXINSNS)
		return err_set(err, EINVAL, "seccomp: no valid program to load");
	/* seccomp(2) rather than prctl(2): the same filter mode, with errors
	 * that say more. No flags: no thread sync (we are single-threaded),
	 * no logging changes. Needs no_new_privs, set by caps_no_new_privs(). */
	if (syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, &prog) < 0)
		return err_sys(err, errno, "seccomp: load the filter");
	return 0;
}

int seccomp_apply_bpf(const struct seccomp_info *info, struct err *err)
{
	if (!info->enabled)
		return 0;
	return seccomp_apply_prog(info->bpf, info->bpf_len, err);
}
