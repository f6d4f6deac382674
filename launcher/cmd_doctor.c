/* paddock doctor: can paddock run here, and if not, what to change. Each
 * check is a probe of the kernel as this user (a child that makes the
 * namespaces a sandbox needs, a seccomp filter, Landlock's ABI) beside the
 * settings that govern it, one row each. Exit 0 when paddock can run,
 * 1 when a required check fails (docs/usage.md, "paddock doctor"). */
#include "launcher.h"

#include <fcntl.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../include/landlock.h"

extern const char paddock_default_policy[];
extern const char paddock_default_policy_end[];

enum verdict {
	OK,
	WARN,
	FAIL,
	INFO
};

static const char *const verdict_names[] = {"ok", "warn", "FAIL", "info"};

static int failed;

static void row(const char *check, enum verdict v, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static void row(const char *check, enum verdict v, const char *fmt, ...)
{
	char detail[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(detail, sizeof(detail), fmt, ap);
	va_end(ap);
	printf("%-18s  %-4s  %s\n", check, verdict_names[v], detail);
	failed |= v == FAIL;
}

/* A sysctl's value as text, or "" when the file is not there. */
static const char *sysctl(const char *path, char *buf, size_t size)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t n = fd >= 0 ? read(fd, buf, size - 1) : -1;

	if (fd >= 0)
		close(fd);
	buf[n > 0 ? n : 0] = '\0';
	buf[strcspn(buf, "\n")] = '\0';
	return buf;
}

static int write_text(const char *path, const char *text)
{
	int fd = open(path, O_WRONLY | O_CLOEXEC);
	ssize_t n = fd >= 0 ? write(fd, text, strlen(text)) : -1;

	if (fd >= 0)
		close(fd);
	return n == (ssize_t)strlen(text) ? 0 : -1;
}

/* In a child: a user namespace with this user mapped, then a mount
 * namespace and a tmpfs in it (what AppArmor's restriction refuses while
 * the unshare itself works), then pid, net, ipc and uts namespaces. The
 * child's exit status says which step failed: 0 all, 10 + step. */
static int probe_namespaces(int *err_out)
{
	uid_t uid = getuid();
	gid_t gid = getgid();
	int status, fds[2];
	pid_t pid;

	if (pipe2(fds, O_CLOEXEC) < 0)
		return -1;
	pid = fork();
	if (pid < 0)
		return -1;
	if (pid == 0) {
		char map[64];
		int step = 0, e = 0;

		close(fds[0]);
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		if (unshare(CLONE_NEWUSER) < 0)
			step = 1;
		snprintf(map, sizeof(map), "%u %u 1", (unsigned)uid, (unsigned)uid);
		if (!step && (write_text("/proc/self/setgroups", "deny") < 0 ||
			      write_text("/proc/self/uid_map", map) < 0))
			step = 2;
		snprintf(map, sizeof(map), "%u %u 1", (unsigned)gid, (unsigned)gid);
		if (!step && write_text("/proc/self/gid_map", map) < 0)
			step = 2;
		if (!step && unshare(CLONE_NEWNS) < 0)
			step = 3;
		if (!step &&
		    mount("paddock-doctor", "/tmp", "tmpfs", MS_NOSUID | MS_NODEV, NULL) < 0)
			step = 4;
		if (!step && unshare(CLONE_NEWPID | CLONE_NEWNET | CLONE_NEWIPC | CLONE_NEWUTS) < 0)
			step = 5;
		if (step)
			e = errno;
		(void)!write(fds[1], &e, sizeof(e));
		_exit(step ? 10 + step : 0);
	}
	close(fds[1]);
	*err_out = 0;
	(void)!read(fds[0], err_out, sizeof(*err_out));
	close(fds[0]);
	if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status))
		return -1;
	return WEXITSTATUS(status);
}

static void check_namespaces(void)
{
	static const char *const steps[] = {"",
					    "unshare(CLONE_NEWUSER)",
					    "writing the id maps",
					    "unshare(CLONE_NEWNS)",
					    "mounting a tmpfs inside",
					    "pid, net, ipc and uts namespaces"};
	char max[32], clone[32], aa[32];
	int e = 0, r = probe_namespaces(&e);

	sysctl("/proc/sys/user/max_user_namespaces", max, sizeof(max));
	sysctl("/proc/sys/kernel/unprivileged_userns_clone", clone, sizeof(clone));
	sysctl("/proc/sys/kernel/apparmor_restrict_unprivileged_userns", aa, sizeof(aa));
	if (r == 0) {
		row("user namespaces", OK,
		    "made user, mount, pid, net, ipc and uts namespaces "
		    "(user.max_user_namespaces %s)",
		    max[0] ? max : "?");
		return;
	}
	if (r < 0) {
		row("user namespaces", FAIL, "the probe could not run: %s", strerror(errno));
		return;
	}
	row("user namespaces", FAIL, "%s: %s", r >= 11 && r <= 15 ? steps[r - 10] : "probe",
	    strerror(e));
	if (max[0] && strcmp(max, "0") == 0)
		row("", INFO,
		    "user.max_user_namespaces is 0: sysctl -w user.max_user_namespaces=15000");
	if (clone[0] && strcmp(clone, "0") == 0)
		row("", INFO,
		    "kernel.unprivileged_userns_clone is 0: sysctl -w "
		    "kernel.unprivileged_userns_clone=1");
	if (aa[0] && strcmp(aa, "1") == 0)
		row("", INFO,
		    "AppArmor restricts unprivileged user namespaces "
		    "(kernel.apparmor_restrict_unprivileged_userns=1): give paddock an "
		    "AppArmor profile with \"userns,\", or set it to 0");
}

static void check_seccomp(void)
{
	struct sock_filter allow = BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW);
	struct sock_fprog prog = {.len = 1, .filter = &allow};
	struct seccomp_notif_sizes sizes;
	int status;
	pid_t pid = fork();

	if (pid == 0) {
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		_exit(prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) == 0 &&
			      syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, &prog) == 0
			  ? 0
			  : 1);
	}
	if (pid < 0 || waitpid(pid, &status, 0) != pid || !WIFEXITED(status) ||
	    WEXITSTATUS(status) != 0) {
		row("seccomp", FAIL,
		    "a seccomp filter could not be installed (CONFIG_SECCOMP_FILTER)");
		return;
	}
	if (syscall(SYS_seccomp, SECCOMP_GET_NOTIF_SIZES, 0, &sizes) == 0)
		row("seccomp", OK, "filters, and user notification");
	else
		row("seccomp", OK, "filters (no user notification: %s)", strerror(errno));
}

static void check_landlock(void)
{
	long abi = syscall(__NR_landlock_create_ruleset, NULL, 0, LANDLOCK_CREATE_RULESET_VERSION);

	if (abi > 0)
		row("landlock", OK, "ABI %ld", abi);
	else if (errno == EOPNOTSUPP)
		row("landlock", WARN,
		    "built in but off: add landlock to the lsm= boot parameter "
		    "(policies with landlock.mode required will not run)");
	else
		row("landlock", WARN,
		    "not available (%s): policies with landlock.mode required "
		    "will not run; best-effort ones run without it",
		    strerror(errno));
}

static void check_pidfd(void)
{
	long fd = syscall(SYS_pidfd_open, getpid(), 0);

	if (fd >= 0) {
		close((int)fd);
		row("pidfd", OK, "pidfd_open and clone3 with CLONE_PIDFD (Linux 5.3+)");
	} else {
		row("pidfd", FAIL, "pidfd_open: %s (paddock needs Linux 5.3 or later)",
		    strerror(errno));
	}
}

static void check_cgroup(void)
{
	char line[512] = "", path[600];
	FILE *f = fopen("/proc/self/cgroup", "re");
	const char *roots[] = {"/sys/fs/cgroup", "/sys/fs/cgroup/unified"};

	while (f && fgets(line, sizeof(line), f))
		if (strncmp(line, "0::", 3) == 0)
			break;
	if (f)
		fclose(f);
	line[strcspn(line, "\n")] = '\0';
	for (size_t i = 0; i < 2; i++) {
		snprintf(path, sizeof(path), "%s/cgroup.controllers", roots[i]);
		if (access(path, R_OK) != 0)
			continue;
		{
			char ctl[256] = "";
			FILE *c = fopen(path, "re");

			if (c && fgets(ctl, sizeof(ctl), c))
				ctl[strcspn(ctl, "\n")] = '\0';
			if (c)
				fclose(c);
			snprintf(path, sizeof(path), "%s%s", roots[i],
				 strncmp(line, "0::", 3) == 0 ? line + 3 : "");
			row("cgroup v2", INFO,
			    "at %s (controllers: %s); this user's cgroup %s is %s; limits.memory, "
			    "cpu and pids need memory, cpu and pids there",
			    roots[i], ctl[0] ? ctl : "none", path,
			    access(path, W_OK) == 0 ? "writable (delegated)" : "not writable");
		}
		return;
	}
	row("cgroup v2", INFO, "not mounted");
}

/* The hard limits against the policy's limits.rlimits (the agent
 * policy's, or --policy's): a hard limit below the policy's cannot be
 * raised by an ordinary user, and the run fails. */
static void check_rlimits(const char *policy_path)
{
	static const struct {
		int resource, which;
		const char *name;
	} limits[] = {{RLIMIT_NPROC, POLICY_RLIMIT_NPROC, "nproc"},
		      {RLIMIT_NOFILE, POLICY_RLIMIT_NOFILE, "nofile"},
		      {RLIMIT_FSIZE, POLICY_RLIMIT_FSIZE, "fsize"},
		      {RLIMIT_AS, POLICY_RLIMIT_AS, "as"},
		      {RLIMIT_CORE, POLICY_RLIMIT_CORE, "core"}};
	struct options o = {.policy_path = policy_path, .no_config = true};
	struct policy *p = NULL;
	struct err err = {0};
	char label[4200];

	o.builtin_policy = paddock_default_policy;
	o.builtin_policy_len = (size_t)(paddock_default_policy_end - paddock_default_policy);
	if (supervisor_policy_load(&o, &p, label, sizeof(label), &err) < 0) {
		row("rlimits", FAIL, "%s", err.msg);
		return;
	}
	for (size_t i = 0; i < sizeof(limits) / sizeof(limits[0]); i++) {
		const struct policy_rlimit_value *v = &p->rlimits[limits[i].which];
		struct rlimit rl;

		if (!v->set || getrlimit(limits[i].resource, &rl) < 0)
			continue;
		if (rl.rlim_max != RLIM_INFINITY &&
		    (v->value == POLICY_UNLIMITED || v->value > (uint64_t)rl.rlim_max)) {
			char want[32];

			if (v->value == POLICY_UNLIMITED)
				snprintf(want, sizeof(want), "unlimited");
			else
				snprintf(want, sizeof(want), "%llu", (unsigned long long)v->value);
			row("rlimits", FAIL, "hard %s %llu is below %s's %s: a run would fail",
			    limits[i].name, (unsigned long long)rl.rlim_max, label, want);
		} else
			row("rlimits", OK, "hard %s %s: enough for %s", limits[i].name,
			    rl.rlim_max == RLIM_INFINITY ? "unlimited" : "limited", label);
	}
	policy_free(p);
}

static void check_registry(void)
{
	struct registry reg = {.fd = -1};
	struct err err = {0};
	int rc = session_registry_open(&reg, false, &err);

	if (rc == -ENOENT)
		row("registry", OK, "none yet (made at the first run)");
	else if (rc < 0)
		row("registry", FAIL, "%s", err.msg);
	else if (reg.warning[0])
		row("registry", WARN, "%s", reg.warning);
	else
		row("registry", OK, "%s", reg.path);
	session_registry_close(&reg);
}

int cmd_doctor(int argc, char **argv)
{
	struct utsname u;

	const char *policy_path = NULL;

	if (argc > 1 && (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0)) {
		fputs("Usage: paddock doctor [--policy FILE|NAME]\n"
		      "Check that paddock can run here: user namespaces (and the sysctls and\n"
		      "AppArmor setting that govern them), seccomp, Landlock, pidfd, cgroup v2,\n"
		      "hard rlimits against the policy's (the agent policy's, or --policy's),\n"
		      "the registry. One row each.\n"
		      "Exit 0 when paddock can run, 1 when a required check fails.\n",
		      stdout);
		return 0;
	}
	if (argc > 2 && strcmp(argv[1], "--policy") == 0) {
		policy_path = argv[2];
		argv += 2;
		argc -= 2;
	}
	if (argc > 1)
		return cli_fail("doctor: unexpected argument '%s' (see paddock doctor --help)",
				argv[1]);
	if (uname(&u) == 0)
		row("kernel", INFO, "%s %s, uid %u", u.sysname, u.release, (unsigned)getuid());
	check_namespaces();
	check_seccomp();
	check_landlock();
	check_pidfd();
	check_cgroup();
	check_rlimits(policy_path);
	check_registry();
	printf("%s\n",
	       failed ? "paddock cannot run here: see the FAIL rows" : "paddock can run here");
	fflush(stdout);
	return failed ? 1 : 0;
}
