/* Integration: the known container escape classes (issue 3). Each test runs
 * the workload under the built-in policy (contrib/policies/agent.json) as
 * the unprivileged test user and checks, from inside with tests/helpers/probe
 * and from the host afterwards, that the escape does not work. Where a
 * --weaken knob turns the defence off, a twin test runs the same check with
 * the knob and asserts that the result differs in the expected way: proof
 * that the test can see the hole it guards against.
 *
 * docs/security.md has the table of escape classes and the tests here. */
#include "harness.h"

#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <termios.h>

#ifndef __NR_landlock_create_ruleset
#define __NR_landlock_create_ruleset 444
#endif
#ifndef F_GET_SEALS
#define F_GET_SEALS   1034
#define F_SEAL_SEAL   0x0001
#define F_SEAL_SHRINK 0x0002
#define F_SEAL_GROW   0x0004
#define F_SEAL_WRITE  0x0008
#endif
#ifndef RENAME_EXCHANGE
#define RENAME_EXCHANGE (1 << 1)
#endif

TestSuite(escape, .init = h_init, .fini = h_fini, .timeout = 60);

/* ---------------------------------------------------------------- helpers */

static const char *probe_bind(void)
{
	const char *probe = h_fmt("%s/probe", h_helpers_dir());

	cr_assert(h_exists(probe), "%s missing: make build/tests/helpers/probe", probe);
	return h_fmt("%s:/probe", h_helpers_dir());
}

/* paddock run [--weaken K]... --ro-bind HELPERS:/probe -- /probe/probe REQ...
 * weaken and req are NULL-terminated (either may be NULL). */
static int run_probe(struct h_proc *p, const char *ws, const char *const *weaken,
		     const char *const *req)
{
	const char *args[128];
	size_t n = 0;

	args[n++] = "run";
	for (; weaken && *weaken; weaken++) {
		args[n++] = "--weaken";
		args[n++] = *weaken;
	}
	args[n++] = "--ro-bind";
	args[n++] = probe_bind();
	args[n++] = "--";
	args[n++] = "/probe/probe";
	for (; req && *req && n < 126; req++)
		args[n++] = *req;
	args[n] = NULL;
	return h_run_paddock(p, ws, args);
}

/* The same, with a shell script that can call /probe/probe. */
static int run_sh(struct h_proc *p, const char *ws, const char *const *weaken, const char *script)
{
	const char *args[64];
	size_t n = 0;

	args[n++] = "run";
	for (; weaken && *weaken; weaken++) {
		args[n++] = "--weaken";
		args[n++] = *weaken;
	}
	args[n++] = "--ro-bind";
	args[n++] = probe_bind();
	args[n++] = "--";
	args[n++] = "sh";
	args[n++] = "-c";
	args[n++] = script;
	args[n] = NULL;
	return h_run_paddock(p, ws, args);
}

static void start_sh(struct h_proc *p, const char *ws, const char *const *weaken,
		     const char *script)
{
	char **argv = h_keep(calloc(64, sizeof(char *)));
	size_t n = 0;

	argv[n++] = (char *)h_paddock();
	argv[n++] = "run";
	for (; weaken && *weaken; weaken++) {
		argv[n++] = "--weaken";
		argv[n++] = (char *)*weaken;
	}
	argv[n++] = "--ro-bind";
	argv[n++] = (char *)probe_bind();
	argv[n++] = "--";
	argv[n++] = "sh";
	argv[n++] = "-c";
	argv[n++] = (char *)script;
	argv[n] = NULL;
	h_spawn(p, ws, argv, NULL);
}

#define KNOBS(...) ((const char *const[]){__VA_ARGS__, NULL})
#define REQS(...)  ((const char *const[]){__VA_ARGS__, NULL})

/* The probe's answer to a request, which must be there. */
static const char *kv(const struct h_proc *p, const char *key)
{
	const char *v = h_kv(p->out_text, key);

	cr_assert_not_null(v, "no %s in the probe's output\n" H_FMT, key, H_ARGS(p));
	return v;
}

static bool wait_for_file(const char *path, int ms)
{
	for (int waited = 0; waited < ms; waited += 10) {
		if (h_exists(path))
			return true;
		h_sleep_ms(10);
	}
	return h_exists(path);
}

/* The Landlock ABI of the running kernel, 0 without Landlock. */
static int landlock_abi(void)
{
	long abi = syscall(__NR_landlock_create_ruleset, NULL, 0, 1UL);

	return abi < 0 ? 0 : (int)abi;
}

/* ============================================== CVE-2019-5736 (runc exe) */

/* runc re-executed itself from the host inside the container, so the
 * container's /proc/self/exe (and /proc/PID/exe of runc's process) was the
 * host binary: opened for writing from inside once runc had exited, it
 * replaced runc on the host. paddock-init, the only launcher code that runs
 * inside, is executed from a sealed memfd copy and is not dumpable. */
Test(escape, cve_2019_5736_init_runs_from_a_sealed_memfd)
{
	struct h_world w = h_world();
	const char *init_path = h_fmt("%s/build/paddock-init", h_root());
	struct h_snap init_snap = h_snap_take(init_path);
	const char *ready = h_join(w.ws, "ready"), *go = h_join(w.ws, "go");
	struct h_proc p;
	pid_t init_pid = 0;
	char link[PATH_MAX];
	ssize_t n;
	int fd, seals;

	cr_assert(init_snap.exists, "%s missing", init_path);
	/* Inside: every way to /proc/1/exe for writing, then wait for the
	 * host's inspection. */
	start_sh(&p, w.ws, NULL,
		 "/probe/probe ow:/proc/1/exe r:/proc/1/exe readlink:/proc/1/exe "
		 "ls:/proc/1/map_files ptrace:1 readlink:/proc/self/exe ow:/proc/self/exe; "
		 "python3 -c \"open('/proc/1/exe', 'r+b').write(b'#!/bin/sh')\" 2>/dev/null "
		 "&& echo PY-WROTE; "
		 "echo > ready; i=0; while [ ! -e go ] && [ $i -lt 400 ]; do sleep 0.02; "
		 "i=$((i+1)); done");
	cr_assert(wait_for_file(ready, 8000), "the workload never got ready");
	/* The host (the sandbox's owner, with ptrace rights over it) sees
	 * what PID 1 runs: an anonymous memfd, not a host file, sealed, and
	 * busy: not even the host user can open it for writing. */
	for (int i = 0; i < 100 && !init_pid; i++) {
		init_pid = h_child_of(p.pid, NULL);
		if (!init_pid)
			h_sleep_ms(10);
	}
	cr_assert_gt(init_pid, 0, "paddock-init not found below paddock (pid %d)", (int)p.pid);
	n = readlink(h_fmt("/proc/%d/exe", (int)init_pid), link, sizeof(link) - 1);
	cr_assert_gt(n, 0, "readlink /proc/%d/exe: %s", (int)init_pid, strerror(errno));
	link[n] = '\0';
	cr_assert_str_eq(link, "/memfd:paddock-init (deleted)");
	fd = open(h_fmt("/proc/%d/exe", (int)init_pid), O_WRONLY | O_CLOEXEC);
	cr_assert_lt(fd, 0, "the host could open init's exe for writing");
	cr_assert_eq(errno, ETXTBSY, "open O_WRONLY: %s", strerror(errno));
	fd = open(h_fmt("/proc/%d/exe", (int)init_pid), O_RDONLY | O_CLOEXEC);
	cr_assert_geq(fd, 0, "open /proc/%d/exe: %s", (int)init_pid, strerror(errno));
	seals = fcntl(fd, F_GET_SEALS);
	close(fd);
	cr_assert_eq(seals, F_SEAL_SEAL | F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_WRITE, "seals 0x%x",
		     seals);
	h_write_file(go, "", 0644);
	h_wait(&p, 10000);
	cr_assert_eq(p.status, 0, H_SHOW(&p));
	/* Inside: init is not dumpable, so its /proc entries are the
	 * kernel's root's; the workload's own exe is readable (the control). */
	cr_assert_str_eq(kv(&p, "ow:/proc/1/exe"), "EACCES", H_SHOW(&p));
	cr_assert_str_eq(kv(&p, "r:/proc/1/exe"), "EACCES", H_SHOW(&p));
	cr_assert_str_eq(kv(&p, "readlink:/proc/1/exe"), "EACCES", H_SHOW(&p));
	cr_assert_str_eq(kv(&p, "ls:/proc/1/map_files"), "EACCES", H_SHOW(&p));
	cr_assert_str_eq(kv(&p, "ptrace:1"), "EPERM", H_SHOW(&p));
	cr_assert_str_eq(kv(&p, "readlink:/proc/self/exe"), "/probe/probe", H_SHOW(&p));
	cr_assert(strcmp(kv(&p, "ow:/proc/self/exe"), "OK") != 0, H_SHOW(&p));
	cr_assert(!h_contains(p.out_text, "PY-WROTE"), H_SHOW(&p));
	/* And the host binary is byte-for-byte what it was. */
	cr_assert_null(h_snap_diff(init_path, &init_snap), "%s changed", init_path);
}

/* The host's init binary made reachable inside: a copy, used with --init and
 * bound read-only at /hostbin. It is not busy (init runs from the memfd,
 * not from it: a running executable refuses O_WRONLY with ETXTBSY), and
 * /proc/1/exe does not lead to it. The read-only bind is what keeps the
 * path itself unwritable; twin: with --weaken rw-binds the path opens for
 * writing (the hole the test can see), /proc/1/exe still does not. */
Test(escape, cve_2019_5736_weaken_rw_binds_init_binary_only_by_its_path)
{
	struct h_world w = h_world();
	char *bin = h_mkdir(w.base, "bin", 0755);
	char *copy = h_join(bin, "paddock-init");
	struct h_proc p;
	struct h_snap snap;
	size_t len = 0;
	char *bytes = h_read_file(h_fmt("%s/build/paddock-init", h_root()), &len);
	int fd;

	cr_assert_not_null(bytes);
	fd = open(copy, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0755);
	cr_assert_geq(fd, 0);
	cr_assert_eq(write(fd, bytes, len), (ssize_t)len);
	cr_assert_eq(close(fd), 0);
	snap = h_snap_take(copy);

	H_PADDOCK(&p, w.ws, "run", "--init", copy, "--ro-bind", h_fmt("%s:/hostbin", bin),
		  "--ro-bind", probe_bind(), "--", "/probe/probe", "ow:/hostbin/paddock-init",
		  "ow:/proc/1/exe");
	cr_assert_eq(p.status, 0, H_SHOW(&p));
	cr_assert_str_eq(kv(&p, "ow:/hostbin/paddock-init"), "EROFS", H_SHOW(&p));
	cr_assert_str_eq(kv(&p, "ow:/proc/1/exe"), "EACCES", H_SHOW(&p));

	H_PADDOCK(&p, w.ws, "run", "--weaken", "rw-binds", "--init", copy, "--ro-bind",
		  h_fmt("%s:/hostbin", bin), "--ro-bind", probe_bind(), "--", "/probe/probe",
		  "ow:/hostbin/paddock-init", "ow:/proc/1/exe");
	cr_assert_eq(p.status, 0, H_SHOW(&p));
	cr_assert(h_contains(p.err_text, "warning: --weaken rw-binds"), H_SHOW(&p));
	cr_assert_str_eq(kv(&p, "ow:/hostbin/paddock-init"), "OK",
			 "the host binary is busy or unreachable: init runs from it?\n" H_FMT,
			 H_ARGS(&p));
	cr_assert_str_eq(kv(&p, "ow:/proc/1/exe"), "EACCES", H_SHOW(&p));
	/* The probe only opens: the bytes are unchanged either way. */
	cr_assert_null(h_snap_diff(copy, &snap));
}

/* Without seccomp, ptrace and pidfd_getfd(2) are open: a workload process
 * can trace a sibling and copy its fds (the control), but still not PID 1's,
 * which is not dumpable and holds the control socket to the supervisor. */
Test(escape, cve_2019_5736_init_is_not_ptraceable_even_without_seccomp)
{
	struct h_world w = h_world();
	struct h_proc p, q;
	const char *script =
	    "sleep 5 & s=$!; "
	    "/probe/probe ptrace:1 getfd:1:3 ow:/proc/1/exe ls:/proc/1/fd "
	    "ptrace:$s getfd:$s:1 "
	    "| sed \"s/^ptrace:$s=/ptrace:sibling=/; s/^getfd:$s:1=/getfd:sibling=/\"; "
	    "kill $s";

	run_sh(&p, w.ws, NULL, script);
	cr_assert_eq(p.status, 0, H_SHOW(&p));
	cr_assert_str_eq(kv(&p, "ptrace:1"), "EPERM", H_SHOW(&p));
	cr_assert_str_eq(kv(&p, "ptrace:sibling"), "EPERM", H_SHOW(&p));
	cr_assert_str_eq(kv(&p, "getfd:1:3"), "EPERM", H_SHOW(&p));
	cr_assert_str_eq(kv(&p, "getfd:sibling"), "EPERM", H_SHOW(&p));
	cr_assert_str_eq(kv(&p, "ow:/proc/1/exe"), "EACCES", H_SHOW(&p));

	run_sh(&q, w.ws, KNOBS("no-seccomp"), script);
	cr_assert_eq(q.status, 0, H_SHOW(&q));
	cr_assert_str_eq(kv(&q, "Seccomp"), "0", H_SHOW(&q));
	cr_assert_str_eq(kv(&q, "ptrace:sibling"), "OK",
			 "ptrace is not open without seccomp: the twin shows nothing\n" H_FMT,
			 H_ARGS(&q));
	cr_assert_str_eq(kv(&q, "getfd:sibling"), "OK", H_SHOW(&q));
	/* init's control socket (fd 3) stays out of reach. */
	cr_assert_str_eq(kv(&q, "ptrace:1"), "EPERM", H_SHOW(&q));
	cr_assert_str_eq(kv(&q, "getfd:1:3"), "EPERM", H_SHOW(&q));
	cr_assert_str_eq(kv(&q, "ow:/proc/1/exe"), "EACCES", H_SHOW(&q));
	cr_assert_str_eq(kv(&q, "ls:/proc/1/fd"), "EACCES", H_SHOW(&q));
}

/* ==================================== CVE-2024-21626 (leaked fds, cwd) */

/* runc leaked a host directory fd into the container, and a cwd of
 * /proc/self/fd/N put the workload's cwd outside its root. paddock closes
 * every fd but 0-2 before paddock-init starts, and the cwd is a path in the
 * new root. */
Test(escape, cve_2024_21626_only_stdio_reaches_the_workload)
{
	struct h_world w = h_world();
	struct h_proc p;
	int extra[6];

	h_write_file(h_join(w.base, "host-secret"), "secret\n", 0644);
	/* Extra fds in the process that starts paddock, not close-on-exec:
	 * a host directory, a file, a pipe, a socket, a high number. */
	extra[0] = open(w.base, O_RDONLY | O_DIRECTORY);
	extra[1] = open(h_join(w.base, "host-secret"), O_RDWR);
	cr_assert_eq(pipe(&extra[2]), 0);
	extra[4] = socket(AF_UNIX, SOCK_STREAM, 0);
	extra[5] = dup2(extra[0], 77);
	for (int i = 0; i < 6; i++)
		cr_assert_geq(extra[i], 3);

	run_sh(&p, w.ws, NULL,
	       "for n in $(seq 3 100); do [ -e /proc/self/fd/$n ] && "
	       "echo \"LEAK $n $(readlink /proc/self/fd/$n)\"; done; "
	       "/probe/probe readlink:/proc/self/cwd ls:/proc/self/cwd/.. ls:/proc/1/fd "
	       "r:/proc/1/fd/3 readlink:/proc/1/cwd readlink:/proc/1/root; "
	       "cat ../host-secret 2>/dev/null && echo SECRET-READ; true");
	for (int i = 0; i < 6; i++)
		close(extra[i]);
	cr_assert_eq(p.status, 0, H_SHOW(&p));
	cr_assert(!h_contains(p.out_text, "LEAK"), H_SHOW(&p));
	cr_assert_str_eq(kv(&p, "fds"), "0,1,2", H_SHOW(&p));
	/* The cwd is the workspace, in the new root: its parent there holds
	 * nothing but the workspace, unlike the host's. */
	cr_assert_str_eq(kv(&p, "readlink:/proc/self/cwd"), w.ws, H_SHOW(&p));
	cr_assert_str_eq(kv(&p, "ls:/proc/self/cwd/.."), "ws", H_SHOW(&p));
	cr_assert(h_contains(h_list_dir(w.base), "host-secret\n"));
	cr_assert(!h_contains(p.out_text, "SECRET-READ"), H_SHOW(&p));
	/* paddock-init's fds (the control socket) are out of reach. */
	cr_assert_str_eq(kv(&p, "ls:/proc/1/fd"), "EACCES", H_SHOW(&p));
	cr_assert_str_eq(kv(&p, "r:/proc/1/fd/3"), "EACCES", H_SHOW(&p));
	cr_assert_str_eq(kv(&p, "readlink:/proc/1/cwd"), "EACCES", H_SHOW(&p));
	cr_assert_str_eq(kv(&p, "readlink:/proc/1/root"), "EACCES", H_SHOW(&p));
}

/* Regression (fixed: the cwd is opened with openat2() RESOLVE_IN_ROOT |
 * RESOLVE_NO_MAGICLINKS, launcher/spawn.c enter_cwd()): a cwd given as
 * /proc/self/fd/N (--cwd or the policy's "cwd") put the workload's cwd on
 * the host, outside the new root: CVE-2024-21626 itself. chdir(p->cwd) ran
 * after pivot_root but before the inherited fds were closed, and chdir
 * followed the /proc magic link to the caller's fd N. The workload then reads the host's
 * whole file system through "..": `ls ../../..` lists the host's /.
 * Writes there are stopped by Landlock only: on a kernel without it, or
 * with --weaken no-landlock, `echo pwned > pwned` lands in the host's
 * directory. Reproduction, as any user:
 *   mkdir -p /tmp/h/ws; echo secret > /tmp/h/host-secret; cd /tmp/h/ws
 *   exec 7</tmp/h; paddock run --cwd /proc/self/fd/7 -- cat host-secret
 *   -> prints "secret", exit 0 (expected: 125, or a cwd inside the root)
 * Fix: close the fds before the chdir, and open the cwd with openat2()
 * RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS, then fchdir() (or refuse a cwd
 * below /proc in the policy validator). */
Test(escape, cve_2024_21626_cwd_through_a_leaked_fd)
{
	struct h_world w = h_world();
	struct h_proc p;
	int dir;

	h_write_file(h_join(w.base, "host-secret"), "secret\n", 0644);
	dir = open(w.base, O_RDONLY | O_DIRECTORY); /* inherited on purpose */
	cr_assert_geq(dir, 3);
	H_PADDOCK(&p, w.ws, "run", "--cwd", h_fmt("/proc/self/fd/%d", dir), "--", "sh", "-c",
		  "echo cwd=$(readlink /proc/self/cwd); cat host-secret && echo SECRET-READ; "
		  "ls ../../.. | head -3");
	close(dir);
	cr_assert(p.status == 125 || !h_contains(p.out_text, "SECRET-READ"),
		  "the workload's cwd is a host directory from a leaked fd\n" H_FMT, H_ARGS(&p));
	cr_assert(!h_contains(p.out_text, "secret\n"), H_SHOW(&p));
}

/* ============================ CVE-2021-30465 (symlink swap into a mount) */

/* A protected path that is a symlink in the workspace, pointing outside:
 * protecting "through" it would mount over, or create a placeholder in, a
 * host path outside the workspace. The link itself is pinned instead (a
 * mount on the link: it can be neither replaced nor removed), and what it
 * points at is not in the sandbox, so nothing reaches the host file; a
 * symlink on the way to a protected path (.git -> a host directory, for
 * .git/hooks) is refused. */
Test(escape, cve_2021_30465_protected_path_symlink_is_refused)
{
	struct h_world w = h_world();
	char *target = h_join(w.base, "outside-file");
	char *outdir = h_mkdir(w.base, "outside-dir", 0755);
	struct h_snap snap;
	struct h_proc p;

	h_write_file(target, "host file\n", 0644);
	snap = h_snap_take(target);
	/* .bashrc -> a host file; .git -> a host directory (where the
	 * placeholder for .git/hooks and .git/config would be created). */
	cr_assert_eq(symlink(target, h_join(w.ws, ".bashrc")), 0);
	H_PADDOCK(&p, w.ws, "run", "--", "sh", "-c",
		  "echo x > .bashrc 2>/dev/null && echo wrote; rm -f .bashrc 2>/dev/null && "
		  "echo removed; touch started");
	cr_assert_eq(p.status, 0, H_SHOW(&p));
	/* A write through it may land in the sandbox's own /tmp (the link is
	 * absolute, the sandbox has a path of that name): never on the host. */
	cr_assert(!h_contains(p.out_text, "removed"), H_SHOW(&p));
	cr_assert_null(h_snap_diff(target, &snap), H_SHOW(&p));
	cr_assert_str_eq(h_list_dir(w.ws), ".bashrc\nstarted\n", H_SHOW(&p));
	cr_assert_eq(unlink(h_join(w.ws, "started")), 0);

	cr_assert_eq(unlink(h_join(w.ws, ".bashrc")), 0);
	cr_assert_eq(symlink(outdir, h_join(w.ws, ".git")), 0);
	H_PADDOCK(&p, w.ws, "run", "--", "sh", "-c",
		  "mkdir -p .git/hooks; echo x > .git/hooks/pre-commit; touch started");
	cr_assert_eq(p.status, 125, H_SHOW(&p));
	cr_assert_str_eq(h_list_dir(outdir), "", "something was made outside\n" H_FMT, H_ARGS(&p));
	cr_assert_str_eq(h_list_dir(w.ws), ".git\n", H_SHOW(&p));
}

/* The policy with one more mount, {"type": "bind", "source": src,
 * "target": target, "mode": "rw"}, written to base/policy.json. */
static const char *policy_with_bind(const struct h_world *w, const char *src, const char *target)
{
	const char *out = h_join(w->base, "policy.json");
	struct h_proc p;

	H_CMD(&p, NULL, H_PYTHON, "-c",
	      "import json,sys\n"
	      "d=json.load(open(sys.argv[1]))\n"
	      "d['mounts'].append({'type':'bind','source':sys.argv[2],'target':sys.argv[3],"
	      "'mode':'rw'})\n"
	      "json.dump(d, open(sys.argv[4],'w'))\n",
	      h_fmt("%s/contrib/policies/agent.json", h_root()), src, target, out);
	cr_assert_eq(p.status, 0, H_SHOW(&p));
	return out;
}

/* A bind whose target lies below a symlink inside the (writable)
 * workspace: every path in the new root is resolved with openat2() without
 * following symlinks, so the mount cannot land outside; the run is refused.
 * The control: the same policy with a real directory there works, and the
 * write through the mount lands in the bind's source. */
Test(escape, cve_2021_30465_bind_target_below_a_symlink_is_refused)
{
	struct h_world w = h_world();
	char *outside = h_mkdir(w.base, "outside", 0755);
	char *src = h_mkdir(w.base, "src", 0755);
	const char *policy = policy_with_bind(&w, src, "${WORKSPACE}/sub/mnt");
	const char *script = "echo x > sub/mnt/canary; echo wrote=$?";
	struct h_proc p;

	cr_assert_eq(symlink(outside, h_join(w.ws, "sub")), 0);
	H_PADDOCK(&p, w.ws, "run", "--policy", policy, "--", "sh", "-c", script);
	cr_assert_eq(p.status, 125, H_SHOW(&p));
	cr_assert_str_eq(h_list_dir(outside), "", "a mount point was made outside\n" H_FMT,
			 H_ARGS(&p));
	cr_assert_str_eq(h_list_dir(src), "", H_SHOW(&p));
	cr_assert_str_eq(h_list_dir(w.ws), "sub\n", H_SHOW(&p));

	/* Control: a directory at sub. */
	cr_assert_eq(unlink(h_join(w.ws, "sub")), 0);
	h_mkdir(w.ws, "sub", 0755);
	H_PADDOCK(&p, w.ws, "run", "--policy", policy, "--", "sh", "-c", script);
	cr_assert_eq(p.status, 0, H_SHOW(&p));
	cr_assert(h_contains(p.out_text, "wrote=0\n"), H_SHOW(&p));
	cr_assert_str_eq(h_read_file(h_join(src, "canary"), NULL), "x\n", H_SHOW(&p));
	cr_assert_str_eq(h_list_dir(outside), "");
}

/* The race itself: a host process flips ws/sub between a directory and a
 * symlink to a host directory outside the workspace (rename(2) with
 * RENAME_EXCHANGE, in a tight loop) while paddock starts 30 times with a
 * bind onto ws/sub/x. Each run either is refused (125) or mounts inside the
 * workspace: the workload's canary, written through the bind target, is
 * found in the bind's source and nowhere else; the outside directory
 * never receives anything. */
Test(escape, cve_2021_30465_symlink_flip_race)
{
	struct h_world w = h_world();
	char *outside = h_mkdir(w.base, "outside", 0755);
	char *src = h_mkdir(w.base, "src", 0755);
	char *sub = h_join(w.ws, "sub"), *other = h_join(w.ws, "other");
	const char *target = h_fmt("%s:%s/x", src, sub);
	int refused = 0, mounted = 0, status[30];
	struct h_proc p;
	pid_t flipper;
	char *expect = h_keep(calloc(1, 30 * 16));

	h_mkdir(w.ws, "sub", 0755);
	cr_assert_eq(symlink(outside, other), 0);
	fflush(NULL);
	flipper = fork();
	cr_assert_geq(flipper, 0);
	if (flipper == 0) {
		for (;;)
			syscall(SYS_renameat2, AT_FDCWD, sub, AT_FDCWD, other, RENAME_EXCHANGE);
	}
	h_track_pid(flipper);
	for (int i = 0; i < 30; i++) {
		H_PADDOCK(&p, w.ws, "run", "--bind", target, "--", "sh", "-c",
			  h_fmt("i=0; while [ $i -lt 200 ]; do "
				"echo %d > sub/x/canary-%d 2>/dev/null && exit 0; i=$((i+1)); "
				"done; exit 3",
				i, i));
		status[i] = p.status;
		cr_assert(p.status == 0 || p.status == 125 || p.status == 3, "run %d: " H_FMT, i,
			  H_ARGS(&p));
		if (p.status == 125) {
			refused++;
		} else {
			mounted++;
		}
		if (p.status == 0)
			strcat(expect, h_fmt("canary-%d\n", i));
	}
	kill(flipper, SIGKILL);
	waitpid(flipper, NULL, 0);
	h_untrack_pid(flipper);
	cr_log_info("30 runs: %d refused, %d started", refused, mounted);

	cr_assert_str_eq(h_list_dir(outside), "", "the outside directory received something");
	/* Every canary is in the source, each where its run put it. */
	for (int i = 0; i < 30; i++)
		if (status[i] == 0)
			cr_assert_str_eq(h_read_file(h_join(src, h_fmt("canary-%d", i)), NULL),
					 h_fmt("%d\n", i));
	/* (sorted as h_list_dir sorts: canary-1, canary-10, ...) */
	{
		struct h_proc s;

		H_CMD(&s, NULL, "/bin/sh", "-c", "printf '%s' \"$1\" | LC_ALL=C sort", "sh",
		      expect);
		cr_assert_str_eq(h_list_dir(src), s.out_text);
	}
	/* The workspace's directory holds the mount point and nothing else. */
	{
		const char *d = h_exists(h_join(sub, "x")) ? sub : other;

		cr_assert_str_eq(h_list_dir(d), mounted ? "x\n" : "");
		if (mounted)
			cr_assert_str_eq(h_list_dir(h_join(d, "x")), "");
	}
	cr_assert_str_eq(h_list_dir(w.ws), "other\nsub\n");
	/* Both outcomes happened: the race was run. */
	cr_assert_gt(refused, 0, "no run was refused: was the symlink ever there?");
	cr_assert_gt(mounted, 0, "no run started");
}

/* ============================================ CVE-2017-5226 (TIOCSTI) */

struct pty_run {
	int status;
	const char *out; /* everything read from the master */
};

/* Run paddock with a new pty as its controlling terminal and as 0/1/2,
 * reading the master until paddock has ended and the slave is closed. */
static struct pty_run pty_paddock(const char *cwd, const char *const args[])
{
	struct pty_run r = {.status = -1};
	char **argv = h_keep(calloc(64, sizeof(char *)));
	char *out = NULL, buf[4096];
	size_t olen = 0, n = 0;
	int master, ws = 0;
	bool exited = false;
	double deadline = h_now() + 10;
	pid_t pid;

	argv[n++] = (char *)h_paddock();
	for (; *args && n < 62; args++)
		argv[n++] = (char *)*args;
	argv[n] = NULL;
	master = posix_openpt(O_RDWR | O_NOCTTY | O_CLOEXEC);
	cr_assert_geq(master, 0, "posix_openpt: %s", strerror(errno));
	cr_assert_eq(grantpt(master), 0);
	cr_assert_eq(unlockpt(master), 0);
	fflush(NULL);
	pid = fork();
	cr_assert_geq(pid, 0);
	if (pid == 0) {
		const char *name = ptsname(master);
		sigset_t none;
		int s;

		sigemptyset(&none);
		sigprocmask(SIG_SETMASK, &none, NULL);
		signal(SIGPIPE, SIG_DFL);
		if (!name || setsid() < 0)
			_exit(120);
		s = open(name, O_RDWR);
		if (s < 0 || ioctl(s, TIOCSCTTY, 0) < 0)
			_exit(121);
		if (dup2(s, 0) < 0 || dup2(s, 1) < 0 || dup2(s, 2) < 0)
			_exit(122);
		if (s > 2)
			close(s);
		if (chdir(cwd) < 0)
			_exit(123);
		execve(argv[0], argv, environ);
		_exit(124);
	}
	h_track_pid(pid);
	for (;;) {
		struct pollfd pfd = {.fd = master, .events = POLLIN};
		ssize_t got;

		if (h_now() > deadline) {
			kill(pid, SIGKILL);
			break;
		}
		if (!exited && waitpid(pid, &ws, WNOHANG) == pid)
			exited = true;
		if (poll(&pfd, 1, 50) <= 0) {
			if (exited)
				break;
			continue;
		}
		got = read(master, buf, sizeof(buf));
		if (got <= 0) {
			if (exited || (got < 0 && errno != EAGAIN && errno != EINTR))
				break;
			continue;
		}
		out = realloc(out, olen + (size_t)got + 1);
		cr_assert_not_null(out);
		memcpy(out + olen, buf, (size_t)got);
		olen += (size_t)got;
		out[olen] = '\0';
	}
	if (!exited)
		waitpid(pid, &ws, 0);
	h_untrack_pid(pid);
	close(master);
	r.status = WIFEXITED(ws) ? WEXITSTATUS(ws) : 128 + WTERMSIG(ws);
	r.out = out ? h_keep(out) : "";
	return r;
}

/* The workload pushes "ZQZ" into its fd 0 and into /dev/tty, both of which
 * would be the caller's terminal. */
static const char tiocsti_py[] =
    "import errno, fcntl, os, termios\n"
    "for name in ('fd0', 'tty'):\n"
    "    try:\n"
    "        fd = 0 if name == 'fd0' else os.open('/dev/tty', os.O_RDWR | os.O_NOCTTY)\n"
    "    except OSError as e:\n"
    "        print(name, 'open', errno.errorcode[e.errno]); continue\n"
    "    try:\n"
    "        for c in b'Z' + b'QZ': fcntl.ioctl(fd, termios.TIOCSTI, bytes([c]))\n"
    "        print(name, 'INJECTED')\n"
    "    except OSError as e:\n"
    "        print(name, 'ioctl', errno.errorcode[e.errno])\n";

static struct pty_run tiocsti_run(const char *ws, const char *k1, const char *k2, bool no_tty)
{
	const char *args[16];
	size_t n = 0;

	args[n++] = "run";
	if (no_tty)
		args[n++] = "--no-tty";
	if (k1) {
		args[n++] = "--weaken";
		args[n++] = k1;
	}
	if (k2) {
		args[n++] = "--weaken";
		args[n++] = k2;
	}
	args[n++] = "--";
	args[n++] = "python3";
	args[n++] = "-c";
	args[n++] = tiocsti_py;
	args[n] = NULL;
	return pty_paddock(ws, args);
}

Test(escape, cve_2017_5226_tiocsti_cannot_reach_the_callers_terminal)
{
	struct h_world w = h_world();
	struct pty_run r = tiocsti_run(w.ws, NULL, NULL, true);

	cr_assert_eq(r.status, 0, "status %d, output:\n%s", r.status, r.out);
	/* Without a terminal (--no-tty) fd 0 is a pipe, seccomp refuses the
	 * ioctl anyway, and in its own session the workload has no
	 * controlling terminal at all. */
	cr_assert(h_contains(r.out, "fd0 ioctl EPERM"), "%s", r.out);
	cr_assert(h_contains(r.out, "tty open ENXIO"), "%s", r.out);
	cr_assert(!h_contains(r.out, "INJECTED"), "%s", r.out);
	cr_assert(!h_contains(r.out, "ZQZ"), "injected input echoed by the terminal:\n%s", r.out);
	/* In terminal mode (the default under a terminal) the controlling
	 * terminal is the sandbox's own pty, and seccomp still refuses. */
	r = tiocsti_run(w.ws, NULL, NULL, false);
	cr_assert_eq(r.status, 0, "status %d, output:\n%s", r.status, r.out);
	cr_assert(h_contains(r.out, "fd0 ioctl EPERM"), "%s", r.out);
	cr_assert(h_contains(r.out, "tty ioctl EPERM"), "%s", r.out);
	cr_assert(!h_contains(r.out, "INJECTED"), "%s", r.out);
}

/* Each layer alone stops it; with both off, the input arrives. */
Test(escape, weaken_no_seccomp_no_new_session_tiocsti_injects)
{
	struct h_world w = h_world();
	char legacy[8] = "1";
	const char *l = h_read_file("/proc/sys/dev/tty/legacy_tiocsti", NULL);
	struct pty_run r;

	if (l)
		snprintf(legacy, sizeof(legacy), "%s", l);
	/* Seccomp off, own session: the kernel refuses TIOCSTI on a tty that
	 * is not the caller's controlling terminal; /dev/tty has none. */
	r = tiocsti_run(w.ws, "no-seccomp", NULL, true);
	cr_assert_eq(r.status, 0, "status %d, output:\n%s", r.status, r.out);
	/* fd 0 is the relay's pipe: no terminal at all. */
	cr_assert(h_contains(r.out, "fd0 ioctl ENOTTY"), "%s", r.out);
	cr_assert(h_contains(r.out, "tty open ENXIO"), "%s", r.out);
	cr_assert(!h_contains(r.out, "ZQZ"), "%s", r.out);
	/* The caller's session, seccomp on: /dev/tty is the caller's
	 * terminal now, and seccomp alone refuses the ioctl. */
	r = tiocsti_run(w.ws, "no-new-session", NULL, false);
	cr_assert_eq(r.status, 0, "status %d, output:\n%s", r.status, r.out);
	cr_assert(h_contains(r.out, "fd0 ioctl EPERM"), "%s", r.out);
	cr_assert(h_contains(r.out, "tty ioctl EPERM"), "%s", r.out);
	cr_assert(!h_contains(r.out, "ZQZ"), "%s", r.out);
	/* Both off. */
	r = tiocsti_run(w.ws, "no-seccomp", "no-new-session", false);
	cr_assert_eq(r.status, 0, "status %d, output:\n%s", r.status, r.out);
	cr_assert(h_contains(r.out, "warning: --weaken no-new-session"), "%s", r.out);
	if (legacy[0] == '0') {
		/* dev.tty.legacy_tiocsti=0 (Linux 6.2+): the kernel refuses
		 * TIOCSTI to every unprivileged process (EIO), so only the
		 * controlling terminal is observable: /dev/tty opens. */
		cr_assert(!h_contains(r.out, "tty open"), "%s", r.out);
		cr_assert(h_contains(r.out, "tty ioctl EIO"), "%s", r.out);
	} else {
		cr_assert(h_contains(r.out, "fd0 INJECTED"), "%s", r.out);
		cr_assert(h_contains(r.out, "tty INJECTED"), "%s", r.out);
		cr_assert(h_contains(r.out, "ZQZ"), "the injection did not reach the terminal:\n%s",
			  r.out);
	}
}

/* ======================================================= /dev and /proc */

Test(escape, dev_holds_only_the_planned_nodes)
{
	struct h_world w = h_world();
	struct h_proc p;

	run_probe(&p, w.ws, NULL,
		  REQS("dev", "w:/dev/evil", "mknod:/dev/evil", "fifo:/dev/evil",
		       "mknod:/dev/shm/evil", "ow:/dev/null", "mnt:/dev", "w:/dev/shm/control"));
	cr_assert_eq(p.status, 0, H_SHOW(&p));
	cr_assert_str_eq(kv(&p, "dev"),
			 "fd,full,null,ptmx,pts,random,shm,stderr,stdin,stdout,tty,urandom,zero",
			 H_SHOW(&p));
	cr_assert_str_eq(kv(&p, "mnt:/dev"), "ro", H_SHOW(&p));
	cr_assert_str_eq(kv(&p, "w:/dev/evil"), "EROFS", H_SHOW(&p));
	cr_assert_str_eq(kv(&p, "mknod:/dev/evil"), "EROFS", H_SHOW(&p));
	cr_assert_str_eq(kv(&p, "fifo:/dev/evil"), "EROFS", H_SHOW(&p));
	/* No device node even where files can be made (no CAP_MKNOD, and
	 * seccomp/Landlock aside, /dev/shm is nodev). */
	cr_assert(strcmp(kv(&p, "mknod:/dev/shm/evil"), "OK") != 0, H_SHOW(&p));
	/* The controls: the devices work, /dev/shm is writable. */
	cr_assert_str_eq(kv(&p, "ow:/dev/null"), "OK", H_SHOW(&p));
	cr_assert_str_eq(kv(&p, "w:/dev/shm/control"), "OK", H_SHOW(&p));
}

/* /proc is the sandbox's own, but parts of it still show (or change) the
 * host's kernel: /proc/sys and a few others are read-only mounts, and the
 * files that leak kernel state are covered by the null device (files) or
 * an empty read-only tmpfs (directories), as Docker does. Each is either
 * absent from this kernel or covered. */
Test(escape, proc_sys_read_only_and_kernel_files_masked)
{
	struct h_world w = h_world();
	static const char *const names[] = {
	    "kcore", "keys",	      "timer_list", "sched_debug", "sysrq-trigger", "interrupts",
	    "acpi",  "latency_stats", "scsi",	    "irq",	   "bus",	    "fs"};
	static const char *const reqs[] = {"ot", "r", "ls", "mnt", "stat", "w"};
	const char *req[128];
	size_t n = 0;
	struct h_proc p;

	req[n++] = "ot:/proc/sys/kernel/hostname";
	req[n++] = "ow:/proc/sys/kernel/hostname";
	req[n++] = "r:/proc/sys/kernel/hostname";
	req[n++] = "mnt:/proc/sys";
	req[n++] = "mnt:/proc";
	req[n++] = "ot:/proc/self/comm";
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		for (size_t j = 0; j < sizeof(reqs) / sizeof(reqs[0]); j++)
			req[n++] = h_fmt("%s:/proc/%s%s", reqs[j], names[i],
					 strcmp(reqs[j], "w") == 0 ? "/new" : "");
	req[n] = NULL;
	run_probe(&p, w.ws, NULL, req);
	cr_assert_eq(p.status, 0, H_SHOW(&p));
	/* "echo x > /proc/sys/kernel/hostname": the read-only mount answers
	 * before the file's permissions are looked at. */
	cr_assert_str_eq(kv(&p, "ot:/proc/sys/kernel/hostname"), "EROFS", H_SHOW(&p));
	cr_assert(strcmp(kv(&p, "ow:/proc/sys/kernel/hostname"), "OK") != 0, H_SHOW(&p));
	cr_assert_str_eq(kv(&p, "r:/proc/sys/kernel/hostname"), "DATA", H_SHOW(&p));
	cr_assert_str_eq(kv(&p, "mnt:/proc/sys"), "ro", H_SHOW(&p));
	/* The procfs itself is writable (/proc/self/comm), the control. */
	cr_assert_str_eq(kv(&p, "mnt:/proc"), "rw", H_SHOW(&p));
	cr_assert_str_eq(kv(&p, "ot:/proc/self/comm"), "OK", H_SHOW(&p));
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		const char *path = h_fmt("/proc/%s", names[i]);
		const char *st, *r;
		struct stat host;

		if (lstat(path, &host) < 0) {
			/* Not in this kernel: not inside either. */
			cr_assert_str_eq(kv(&p, h_fmt("stat:%s", path)), "ENOENT", H_SHOW(&p));
			continue;
		}
		/* Present: a read-only mount covers it... */
		cr_assert_str_eq(kv(&p, h_fmt("mnt:%s", path)), "ro", "%s\n" H_FMT, path,
				 H_ARGS(&p));
		st = kv(&p, h_fmt("stat:%s", path));
		r = kv(&p, h_fmt("r:%s", path));
		if (S_ISDIR(host.st_mode)) {
			/* ...nothing can be made in it (procfs answers ENOENT,
			 * the masking tmpfs EROFS)... */
			cr_assert(strcmp(kv(&p, h_fmt("w:%s/new", path)), "OK") != 0, "%s\n" H_FMT,
				  path, H_ARGS(&p));
			continue;
		}
		/* ...and a file is the null device (reads as empty, writes go
		 * nowhere) or cannot be read or written at all. */
		if (strcmp(st, "chr 1:3") == 0) {
			cr_assert_str_eq(r, "EMPTY", "%s\n" H_FMT, path, H_ARGS(&p));
		} else {
			cr_assert(strcmp(r, "DATA") != 0, "%s is readable inside\n" H_FMT, path,
				  H_ARGS(&p));
			cr_assert(strcmp(kv(&p, h_fmt("ot:%s", path)), "OK") != 0,
				  "%s is writable inside\n" H_FMT, path, H_ARGS(&p));
		}
	}
	/* The masked ones: an empty directory, and files with data on the
	 * host that read as nothing inside. */
	if (h_exists("/proc/acpi")) {
		cr_assert_str_eq(kv(&p, "ls:/proc/acpi"), "", H_SHOW(&p));
		cr_assert_str_eq(kv(&p, "w:/proc/acpi/new"), "EROFS", H_SHOW(&p));
	}
	for (size_t i = 0; i < 3; i++) {
		static const char *const leaky[] = {"/proc/interrupts", "/proc/timer_list",
						    "/proc/keys"};
		size_t len = 0;

		if (!h_exists(leaky[i]) || !h_read_file(leaky[i], &len) || len == 0)
			continue;
		cr_assert_str_eq(kv(&p, h_fmt("stat:%s", leaky[i])), "chr 1:3", H_SHOW(&p));
		cr_assert_str_eq(kv(&p, h_fmt("r:%s", leaky[i])), "EMPTY", H_SHOW(&p));
	}
}

/* ======================================= the supervisor and host processes */

/* The supervisor (paddock on the host) is outside the workload's pid
 * namespace: its host pid does not exist there, and kill(-1, SIGKILL) from
 * inside ends the sandbox only. paddock survives, reports the status and
 * writes the record; a host process of the same user is untouched. */
Test(escape, supervisor_is_invisible_and_kill_all_stays_inside)
{
	struct h_world w = h_world();
	const char *marker = h_marker();
	const char *pids = h_join(w.ws, "pids");
	struct h_proc host, p;
	pid_t found[4];
	const char *args[] = {
	    "run",
	    "--record",
	    w.record,
	    "--ro-bind",
	    probe_bind(),
	    "--",
	    "sh",
	    "-c",
	    "i=0; while [ ! -s pids ] && [ $i -lt 400 ]; do sleep 0.02; "
	    "i=$((i+1)); done; read sup by < pids; "
	    "/probe/probe kill:$sup kill:$by ptrace:$sup ls:/proc/$sup "
	    "| sed \"s|:$sup=|:sup=|; s|:$by=|:by=|; s|/$sup=|/sup=|\"; "
	    "sleep 30 & python3 -c \"import os,signal; os.kill(-1, signal.SIGKILL)\"; "
	    "echo SURVIVED",
	    NULL};
	char **argv = h_keep(calloc(16, sizeof(char *)));

	h_spawn(&host, NULL, (char *[]){"/bin/sleep", "300", (char *)marker, NULL}, NULL);
	for (int i = 0; i < 100 && h_marker_pids(marker, found, 4) == 0; i++)
		h_sleep_ms(10);
	argv[0] = (char *)h_paddock();
	for (size_t i = 0; args[i]; i++)
		argv[i + 1] = (char *)args[i];
	h_spawn(&p, w.ws, argv, NULL);
	h_write_file(pids, h_fmt("%d %d\n", (int)p.pid, (int)host.pid), 0644);
	h_wait(&p, 10000);
	/* The workload (sh) was killed by its own kill(-1): 128 + 9. */
	cr_assert_eq(p.status, 137, H_SHOW(&p));
	cr_assert(!h_contains(p.out_text, "SURVIVED"), H_SHOW(&p));
	cr_assert_str_eq(kv(&p, "kill:sup"), "ESRCH", H_SHOW(&p));
	cr_assert_str_eq(kv(&p, "kill:by"), "ESRCH", H_SHOW(&p));
	cr_assert_str_eq(kv(&p, "ls:/proc/sup"), "ENOENT", H_SHOW(&p));
	cr_assert(strcmp(kv(&p, "ptrace:sup"), "OK") != 0, H_SHOW(&p));
	/* paddock was not killed: it wrote the record, from outside. */
	cr_assert_str_eq(h_json(w.record, "d['ended']"), "\"signal\"");
	cr_assert_str_eq(h_json(w.record, "d['signal']"), "9");
	cr_assert_str_eq(h_json(w.record, "d['status']"), "137");
	/* The host process of the same user is alive. */
	cr_assert_eq(kill(host.pid, 0), 0, "the host process was killed from the sandbox");
	cr_assert_eq(waitpid(host.pid, NULL, WNOHANG), 0);
}

/* Twin: without the pid namespace the workload sees the host's processes,
 * the supervisor among them. Signals to it are still refused by Landlock's
 * signal scope (ABI 6+), and ptrace by the user namespace (no
 * CAP_SYS_PTRACE over the host's). */
Test(escape, weaken_no_pidns_shows_the_supervisor)
{
	struct h_world w = h_world();
	struct h_proc p;
	const char *script = "init=$PPID; sup=$(cut -d' ' -f4 /proc/$init/stat); "
			     "echo comm=$(cat /proc/$sup/comm); "
			     "/probe/probe kill:$sup ptrace:$sup | sed \"s/:$sup=/:sup=/\"";

	run_sh(&p, w.ws, KNOBS("no-pidns"), script);
	cr_assert_eq(p.status, 0, H_SHOW(&p));
	cr_assert(h_contains(p.err_text, "warning: --weaken no-pidns"), H_SHOW(&p));
	cr_assert_str_eq(kv(&p, "comm"), "paddock", "the supervisor is not visible\n" H_FMT,
			 H_ARGS(&p));
	cr_assert_str_eq(kv(&p, "ptrace:sup"), "EPERM", H_SHOW(&p));
	if (landlock_abi() >= 6)
		cr_assert_str_eq(kv(&p, "kill:sup"), "EPERM", H_SHOW(&p));
	else
		cr_assert_str_eq(kv(&p, "kill:sup"), "OK", H_SHOW(&p));
}

/* Twin of the Landlock signal scope: with the pid namespace gone, a host
 * process of the same user is signalled only when Landlock is off too. */
Test(escape, weaken_no_pidns_no_landlock_kills_a_host_process)
{
	struct h_world w = h_world();
	const char *marker = h_marker();
	struct h_proc host1, host2, p;
	const char *script = "/probe/probe kill9:$0 | grep kill9";

	if (landlock_abi() < 6)
		h_skip("Landlock ABI %d has no signal scope", landlock_abi());
	h_spawn(&host1, NULL, (char *[]){"/bin/sleep", "300", (char *)marker, NULL}, NULL);
	h_spawn(&host2, NULL, (char *[]){"/bin/sleep", "300", (char *)marker, NULL}, NULL);

	/* Landlock on: refused, the host process lives. */
	H_PADDOCK(&p, w.ws, "run", "--weaken", "no-pidns", "--ro-bind", probe_bind(), "--", "sh",
		  "-c", script, h_fmt("%d", (int)host1.pid));
	cr_assert_eq(p.status, 0, H_SHOW(&p));
	cr_assert(h_contains(p.out_text, "=EPERM\n"), H_SHOW(&p));
	h_sleep_ms(50);
	cr_assert_eq(waitpid(host1.pid, NULL, WNOHANG), 0, "the host process died");

	/* Landlock off as well: the same signal kills it. */
	H_PADDOCK(&p, w.ws, "run", "--weaken", "no-pidns", "--weaken", "no-landlock", "--ro-bind",
		  probe_bind(), "--", "sh", "-c", script, h_fmt("%d", (int)host2.pid));
	cr_assert_eq(p.status, 0, H_SHOW(&p));
	cr_assert(h_contains(p.out_text, "=OK\n"), H_SHOW(&p));
	cr_assert_eq(h_wait(&host2, 5000), 137, "the weakened run did not reach the host process");
	cr_assert_eq(waitpid(host1.pid, NULL, WNOHANG), 0);
}

/* ================================================ nested user namespaces */

Test(escape, nested_user_namespace_is_refused)
{
	struct h_world w = h_world();
	struct h_proc p;
	const char *script = "unshare -U true; echo unshare=$?; "
			     "python3 -c \"import ctypes, os\n"
			     "libc = ctypes.CDLL(None, use_errno=True)\n"
			     "r = libc.unshare(0x10000000)\n"
			     "print('py', 'OK' if r == 0 else os.strerror(ctypes.get_errno()))\"; "
			     "/probe/probe nested";

	run_sh(&p, w.ws, NULL, script);
	cr_assert_eq(p.status, 0, H_SHOW(&p));
	cr_assert(h_contains(p.out_text, "unshare=1\n"), H_SHOW(&p));
	cr_assert(h_contains(p.out_text, "py Operation not permitted\n"), H_SHOW(&p));
	cr_assert_str_eq(kv(&p, "nested.unshare"), "EPERM", H_SHOW(&p));
}

/* Twin: seccomp is what refuses the nested user namespace (Landlock does
 * not restrict unshare). Inside one, Landlock still refuses every mount
 * (the domain forbids mount changes); without Landlock too, the nested
 * namespace can mount on its own copy of the table (the kernel's locked
 * flags still keep the read-only binds read-only: test_fs.c,
 * canary_remount_in_nested_user_namespace). */
Test(escape, weaken_no_seccomp_allows_nested_user_namespaces)
{
	struct h_world w = h_world();
	struct h_proc p;
	const char *script = "unshare -U true; echo unshare=$?; /probe/probe nested";

	run_sh(&p, w.ws, KNOBS("no-seccomp"), script);
	cr_assert_eq(p.status, 0, H_SHOW(&p));
	cr_assert(h_contains(p.out_text, "unshare=0\n"), H_SHOW(&p));
	cr_assert_str_eq(kv(&p, "nested.unshare"), "OK", H_SHOW(&p));
	if (landlock_abi() > 0)
		cr_assert_str_eq(kv(&p, "nested.mount"), "EPERM", H_SHOW(&p));

	run_sh(&p, w.ws, KNOBS("no-seccomp", "no-landlock"), script);
	cr_assert_eq(p.status, 0, H_SHOW(&p));
	cr_assert_str_eq(kv(&p, "nested.unshare"), "OK", H_SHOW(&p));
	cr_assert_str_eq(kv(&p, "nested.mount"), "OK", H_SHOW(&p));
}

/* ================================================================ seccomp */

/* The calls the probe tries ("calls"), with the default profile's answer:
 * EPERM unless said otherwise. */
static const struct {
	const char *name, *answer;
} blocked[] = {
    {"mount", "EPERM"},
    {"fsopen", "EPERM"},
    {"unshare_user", "EPERM"},
    {"unshare_mount", "EPERM"},
    {"clone_newuser", "EPERM"},
    {"setns", "EPERM"},
    {"keyctl", "EPERM"},
    {"add_key", "EPERM"},
    {"bpf", "EPERM"},
    {"perf_event_open", "EPERM"},
    {"userfaultfd", "EPERM"},
    {"io_uring_setup", "EPERM"},
    {"ptrace_traceme", "EPERM"},
    {"process_vm_readv", "EPERM"},
    {"kcmp", "EPERM"},
    {"name_to_handle_at", "EPERM"},
    {"open_by_handle_at", "EPERM"},
    {"chroot", "EPERM"},
    {"socket_vsock", "EAFNOSUPPORT"},
    {"socket_alg", "EAFNOSUPPORT"},
    /* glibc falls back to clone, whose flags the filter can see */
    {"clone3", "ENOSYS"},
    {"personality", "EPERM"},
    {"tiocsti", "EPERM"},
    /* foreign entry points kill the process */
    {"int80", "SYS"},
    {"x32", "SYS"},
};

Test(escape, seccomp_refuses_the_dangerous_calls)
{
	struct h_world w = h_world();
	struct h_proc p;

	run_probe(&p, w.ws, NULL, REQS("calls"));
	cr_assert_eq(p.status, 0, H_SHOW(&p));
	cr_assert_str_eq(kv(&p, "Seccomp"), "2", H_SHOW(&p));
	cr_assert_str_eq(kv(&p, "NoNewPrivs"), "1", H_SHOW(&p));
	for (size_t i = 0; i < sizeof(blocked) / sizeof(blocked[0]); i++) {
		const char *key = h_fmt("call.%s", blocked[i].name);

		cr_assert_str_eq(kv(&p, key), blocked[i].answer, "%s\n" H_FMT, key, H_ARGS(&p));
	}
}

/* Twin: without the filter each call gets the kernel's own answer, which
 * is what the same probe gets on the host as the same user; every call the
 * kernel allows an unprivileged user now works. */
Test(escape, weaken_no_seccomp_gives_the_kernels_answers)
{
	struct h_world w = h_world();
	struct h_proc p, host;
	const char *probe = h_fmt("%s/probe", h_helpers_dir());
	size_t opened = 0;

	run_probe(&p, w.ws, KNOBS("no-seccomp"), REQS("calls"));
	cr_assert_eq(p.status, 0, H_SHOW(&p));
	cr_assert_str_eq(kv(&p, "Seccomp"), "0", H_SHOW(&p));
	cr_assert_str_eq(kv(&p, "NoNewPrivs"), "1", H_SHOW(&p));
	/* Available to any user on any kernel paddock runs on. */
	cr_assert_str_eq(kv(&p, "call.clone3"), "OK", H_SHOW(&p));
	cr_assert_str_eq(kv(&p, "call.ptrace_traceme"), "OK", H_SHOW(&p));
	cr_assert_str_eq(kv(&p, "call.personality"), "OK", H_SHOW(&p));
	cr_assert_str_eq(kv(&p, "call.unshare_user"), "OK", H_SHOW(&p));
	cr_assert_str_eq(kv(&p, "call.kcmp"), "OK", H_SHOW(&p));
	cr_assert(strcmp(kv(&p, "call.x32"), "SYS") != 0, H_SHOW(&p));
	cr_assert(strcmp(kv(&p, "call.int80"), "SYS") != 0, H_SHOW(&p));
	/* The host's answers (only as an unprivileged user: the probe's
	 * mount as root would mount on the host). */
	if (getuid() == 0)
		return;
	H_CMD(&host, NULL, probe, "calls");
	cr_assert_eq(host.status, 0, H_SHOW(&host));
	for (size_t i = 0; i < sizeof(blocked) / sizeof(blocked[0]); i++) {
		const char *key = h_fmt("call.%s", blocked[i].name);
		const char *inside = kv(&p, key), *outside = kv(&host, key);

		cr_assert_str_eq(inside, outside, "%s: %s without seccomp, %s on the host\n" H_FMT,
				 key, inside, outside, H_ARGS(&p));
		if (strcmp(outside, "OK") == 0)
			opened++;
	}
	/* On this kind of host (unprivileged userfaultfd in user mode,
	 * io_uring, keyrings, perf for oneself): most of the list. */
	cr_assert_geq(opened, 6, "only %zu calls work on the host\n" H_FMT, opened, H_ARGS(&host));
}

/* =============================================================== Landlock */

Test(escape, landlock_recorded_and_weakened)
{
	struct h_world w = h_world();
	struct h_proc p;
	int abi = landlock_abi();

	H_PADDOCK(&p, w.ws, "run", "--record", w.record, "--", "true");
	cr_assert_eq(p.status, 0, H_SHOW(&p));
	cr_assert_str_eq(h_json(w.record, "d['landlock']['enabled']"), abi ? "true" : "false");
	cr_assert_str_eq(h_json(w.record, "d['landlock']['abi']"), h_fmt("%d", abi));
	if (abi >= 6)
		cr_assert_str_eq(h_json(w.record, "sorted(d['landlock']['scoped'])"),
				 "[\"abstract_unix_socket\", \"signal\"]");

	H_PADDOCK(&p, w.ws, "run", "--weaken", "no-landlock", "--record", w.record, "--", "true");
	cr_assert_eq(p.status, 0, H_SHOW(&p));
	cr_assert(h_contains(p.err_text, "warning: --weaken no-landlock"), H_SHOW(&p));
	cr_assert_str_eq(h_json(w.record, "d['landlock']['enabled']"), "false");
	cr_assert_str_eq(h_json(w.record, "d['weakenings']"), "[\"no-landlock\"]");
}

/* A host file given as the workload's stdin, opened read-only by the
 * caller, is outside every mount of the sandbox; reopening it through
 * /proc/self/fd/0 checks only the file's own permissions (the caller's
 * user owns it). Landlock refuses the write-open (no rule covers the
 * file); without Landlock the workload rewrites the host file. */
static struct h_proc stdin_file_run(const struct h_world *w, const char *file, bool weaken)
{
	static const char script[] =
	    "echo evil > /proc/self/fd/0; echo fd0=$?; echo evil > /dev/stdin; echo stdin=$?";
	struct h_proc p;

	/* sh opens the file read-only as paddock's stdin, as a caller's
	 * shell does for "paddock run ... < file". With the relay (the
	 * default) the workload's fd 0 is a pipe and the file is out of
	 * reach anyway (stdin_relay_* below); direct-stdio isolates
	 * Landlock's part. */
	if (weaken)
		H_CMD(&p, w->ws, "/bin/sh", "-c", "f=$1; shift; exec \"$@\" < \"$f\"", "sh", file,
		      h_paddock(), "run", "--weaken", "direct-stdio", "--weaken", "no-landlock",
		      "--", "sh", "-c", script);
	else
		H_CMD(&p, w->ws, "/bin/sh", "-c", "f=$1; shift; exec \"$@\" < \"$f\"", "sh", file,
		      h_paddock(), "run", "--weaken", "direct-stdio", "--", "sh", "-c", script);
	return p;
}

Test(escape, landlock_stdin_host_file_cannot_be_reopened_for_writing)
{
	struct h_world w = h_world();
	char *file = h_join(w.base, "input");
	struct h_snap snap;
	struct h_proc p;

	if (landlock_abi() == 0)
		h_skip("no Landlock in this kernel");
	h_write_file(file, "the caller's file\n", 0644);
	snap = h_snap_take(file);
	p = stdin_file_run(&w, file, false);
	cr_assert_eq(p.status, 0, H_SHOW(&p));
	cr_assert(h_contains(p.out_text, "fd0=2\n"), H_SHOW(&p));
	cr_assert(h_contains(p.out_text, "stdin=2\n"), H_SHOW(&p));
	cr_assert(h_contains(p.err_text, "Permission denied"), H_SHOW(&p));
	cr_assert_null(h_snap_diff(file, &snap), H_SHOW(&p));
}

Test(escape, weaken_no_landlock_stdin_host_file_is_rewritten)
{
	struct h_world w = h_world();
	char *file = h_join(w.base, "input");
	struct h_proc p;

	h_write_file(file, "the caller's file\n", 0644);
	p = stdin_file_run(&w, file, true);
	cr_assert_eq(p.status, 0, H_SHOW(&p));
	cr_assert(h_contains(p.out_text, "fd0=0\n"), H_SHOW(&p));
	cr_assert_str_eq(h_read_file(file, NULL), "evil\n",
			 "the weakened run did not write the host file\n" H_FMT, H_ARGS(&p));
}

/* The relay alone: without Landlock, but with the workload's fd 0 the
 * relay's pipe (the default), the host file given as stdin cannot be
 * reopened at all: /proc/self/fd/0 names the pipe. The twin is the test
 * above (direct-stdio and no-landlock). */
Test(escape, stdin_relay_host_file_is_out_of_reach_without_landlock)
{
	struct h_world w = h_world();
	char *file = h_join(w.base, "input");
	struct h_snap snap;
	struct h_proc p;

	h_write_file(file, "the caller's file\n", 0644);
	snap = h_snap_take(file);
	H_CMD(&p, w.ws, "/bin/sh", "-c", "f=$1; shift; exec \"$@\" < \"$f\"", "sh", file,
	      h_paddock(), "run", "--weaken", "no-landlock", "--", "sh", "-c",
	      "echo evil > /proc/self/fd/0; echo fd0=$?; ls -l /proc/self/fd/0");
	cr_assert_eq(p.status, 0, H_SHOW(&p));
	cr_assert(h_contains(p.out_text, "pipe:"), H_SHOW(&p));
	cr_assert_null(h_snap_diff(file, &snap), H_SHOW(&p));
}

/* Landlock's abstract Unix socket scope (ABI 6) is what keeps a host
 * listener out of reach when the network namespace is gone. */
static int abstract_listener(const char *name)
{
	struct sockaddr_un a = {.sun_family = AF_UNIX};
	int l = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);

	cr_assert_geq(l, 0);
	memcpy(a.sun_path + 1, name, strlen(name));
	cr_assert_eq(bind(l, (struct sockaddr *)&a,
			  (socklen_t)(offsetof(struct sockaddr_un, sun_path) + 1 + strlen(name))),
		     0, "%s", strerror(errno));
	cr_assert_eq(listen(l, 8), 0);
	return l;
}

static const char abstract_connect_py[] = "import socket, sys\n"
					  "s = socket.socket(socket.AF_UNIX)\n"
					  "try:\n"
					  "    s.connect('\\0' + sys.argv[1]); print('CONNECTED')\n"
					  "except OSError as e:\n"
					  "    print('refused', e.strerror)\n";

Test(escape, landlock_scope_keeps_host_abstract_sockets_out_under_host_net)
{
	struct h_world w = h_world();
	const char *name = h_fmt("paddock-it-%llx", h_random());
	struct h_proc p;
	int l, acc = -1;

	if (landlock_abi() < 6)
		h_skip("Landlock ABI %d has no abstract socket scope", landlock_abi());
	l = abstract_listener(name);
	H_PADDOCK(&p, w.ws, "run", "--weaken", "host-net", "--", "python3", "-c",
		  abstract_connect_py, name);
	cr_assert_eq(p.status, 0, H_SHOW(&p));
	cr_assert(h_contains(p.out_text, "refused Operation not permitted"), H_SHOW(&p));
	cr_assert_lt(accept(l, NULL, NULL), 0, "a connection from the sandbox reached the host");

	/* Twin: host-net and no Landlock: the host's listener is reached. */
	H_PADDOCK(&p, w.ws, "run", "--weaken", "host-net", "--weaken", "no-landlock", "--",
		  "python3", "-c", abstract_connect_py, name);
	cr_assert_eq(p.status, 0, H_SHOW(&p));
	cr_assert(h_contains(p.out_text, "CONNECTED"), H_SHOW(&p));
	for (int i = 0; i < 50 && acc < 0; i++) {
		acc = accept(l, NULL, NULL);
		if (acc < 0)
			h_sleep_ms(10);
	}
	cr_assert_geq(acc, 0, "no connection arrived");
	close(acc);
	close(l);
}
