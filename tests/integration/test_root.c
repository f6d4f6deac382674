/* Integration: a root caller's sandbox is never host root (docs/security.md,
 * "A root caller"). run.sh runs this binary as root (every other one drops
 * to paddock-test); not as root, every test skips. Each check has its
 * weakened twin (--weaken host-root, --weaken no-seccomp) that shows the
 * hole the default closes. */
#include "harness.h"

#include <fcntl.h>
#include <grp.h>
#include <pwd.h>
#include <linux/filter.h>
#include <sys/prctl.h>
#include <sys/ptrace.h>
#include <sys/wait.h>
#include <sched.h>
#include <sys/mount.h>

/* A mount namespace of the test's own, with file over /etc/subuid and
 * /etc/subgid (when they exist): root's subordinate ranges as the test
 * says, whatever the machine's files hold. A second call (a test's own
 * range over the suite's empty one) replaces the first binds: stacked, the
 * first files would be mount points and h_fini could not remove them. */
static void bind_subids(const char *dir, const char *subuid, const char *subgid, mode_t mode)
{
	static bool bound; /* per test: Criterion runs each in a process */
	const char *u = h_join(dir, "subuid"), *g = h_join(dir, "subgid");

	h_write_file(u, subuid, mode);
	h_write_file(g, subgid, mode);
	cr_assert_eq(chmod(u, mode), 0);
	cr_assert_eq(chmod(g, mode), 0);
	if (bound) {
		cr_assert_eq(umount2("/etc/subuid", MNT_DETACH), 0, "%s", strerror(errno));
		cr_assert_eq(umount2("/etc/subgid", MNT_DETACH), 0, "%s", strerror(errno));
	} else if (unshare(CLONE_NEWNS) < 0 ||
		   mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0) {
		cr_assert_fail("a mount namespace of the test's: %s", strerror(errno));
	}
	if (!h_exists("/etc/subuid") || !h_exists("/etc/subgid"))
		h_skip("no /etc/subuid or /etc/subgid to bind over");
	cr_assert_eq(mount(u, "/etc/subuid", NULL, MS_BIND, NULL), 0, "%s", strerror(errno));
	cr_assert_eq(mount(g, "/etc/subgid", NULL, MS_BIND, NULL), 0, "%s", strerror(errno));
	bound = true;
}

static void root_init(void)
{
	if (getuid() != 0)
		cr_skip_test("not root: run.sh runs test_root as root");
	h_init();
	/* No subordinate range for root unless a test gives one: the tests
	 * of the overflow id hold on a machine whose root has a range. */
	if (h_exists("/etc/subuid") && h_exists("/etc/subgid"))
		bind_subids(h_tmpdir(), "", "", 0644);
}

TestSuite(root, .init = root_init, .fini = h_fini, .timeout = 60);

static int run_sh(struct h_proc *p, const struct h_world *w, const char *weaken, const char *script)
{
	if (weaken)
		return H_PADDOCK(p, w->ws, "run", "--record", w->record, "--weaken", weaken, "--",
				 "sh", "-c", script);
	return H_PADDOCK(p, w->ws, "run", "--record", w->record, "--", "sh", "-c", script);
}

Test(root, root_caller_is_uid_65534_and_cannot_read_shadow)
{
	struct h_world w = h_world();
	struct h_proc p;

	run_sh(&p, &w, NULL,
	       "id -u; id -G; cat /proc/self/uid_map; cat /etc/shadow >/dev/null 2>&1;"
	       " echo shadow=$?");
	cr_assert_eq(p.status, 0, H_SHOW(&p));
	cr_assert_str_eq(p.out_text, "65534\n65534\n     65534      65534          1\nshadow=1\n",
			 H_SHOW(&p));
	cr_assert_str_eq(h_json(w.record, "d['ids']['uid_outside']"), "65534");
	cr_assert_str_eq(h_json(w.record, "d['ids']['gid_outside']"), "65534");
	cr_assert_str_eq(h_json(w.record, "d['weakenings']"), "[]");
}

/* Root's subordinate range (/etc/subuid, /etc/subgid), shown to this test
 * only: files of the test's own bound over them in a mount namespace of its
 * own. Returns the record's ids after `id -u; cat uid_map` inside. */
static void with_subids(struct h_proc *p, struct h_world *w, const char *subuid, const char *subgid,
			mode_t mode)
{
	bind_subids(w->base, subuid, subgid, mode);
	run_sh(p, w, NULL,
	       "id -u; cat /proc/self/uid_map; touch made; cat /etc/shadow >/dev/null 2>&1;"
	       " echo shadow=$?");
}

Test(root, root_with_a_subordinate_range_is_its_first_id)
{
	struct h_world w = h_world();
	struct h_proc p;
	struct stat st;

	with_subids(&p, &w, "# a comment\nalice:100000:65536\nroot:200000:65536\n", "0:300000:10\n",
		    0644);
	cr_assert_eq(p.status, 0, H_SHOW(&p));
	cr_assert_str_eq(p.out_text, "65534\n     65534     200000          1\nshadow=1\n",
			 H_SHOW(&p));
	cr_assert_str_eq(h_json(w.record, "d['ids']['uid_outside']"), "200000");
	cr_assert_str_eq(h_json(w.record, "d['ids']['gid_outside']"), "300000");
	cr_assert_str_eq(h_json(w.record, "d['ids']['outside_from']"), "\"subid\"");
	/* The workspace stays the caller's through the idmapped bind. */
	cr_assert_eq(stat(h_join(w.ws, "made"), &st), 0);
	cr_assert_eq(st.st_uid, 0);
}

/* A range file others may write, or one without root's line, is not
 * used: the overflow id, as without one. */
Test(root, root_subordinate_range_untrusted_or_absent_is_not_used)
{
	struct h_world w = h_world();
	struct h_proc p;

	with_subids(&p, &w, "root:200000:65536\n", "root:200000:65536\n", 0666);
	cr_assert_eq(p.status, 0, H_SHOW(&p));
	cr_assert(h_contains(p.out_text, "     65534      65534          1\n"), H_SHOW(&p));
	cr_assert_str_eq(h_json(w.record, "d['ids']['outside_from']"), "\"overflow\"");
}

Test(root, root_subordinate_range_of_another_user_is_not_used)
{
	struct h_world w = h_world();
	struct h_proc p;

	with_subids(&p, &w, "alice:200000:65536\n1000:1:5\nroot:x:1\nroot:5:0\n",
		    "root:200000:65536\n", 0644);
	cr_assert_eq(p.status, 0, H_SHOW(&p));
	cr_assert(h_contains(p.out_text, "     65534      65534          1\n"), H_SHOW(&p));
	cr_assert_str_eq(h_json(w.record, "d['ids']['outside_from']"), "\"overflow\"");
}

Test(root, weaken_host_root_is_host_uid_0_and_reads_shadow)
{
	struct h_world w = h_world();
	struct h_proc p;

	run_sh(&p, &w, "host-root",
	       "id -u; cat /proc/self/uid_map; cat /etc/shadow >/dev/null 2>&1; echo shadow=$?");
	cr_assert_eq(p.status, 0, H_SHOW(&p));
	cr_assert_str_eq(p.out_text, "0\n         0          0          1\nshadow=0\n", H_SHOW(&p));
	cr_assert(h_contains(p.err_text, "host-root"), H_SHOW(&p));
	cr_assert_str_eq(h_json(w.record, "d['weakenings']"), "[\"host-root\"]");
	cr_assert_str_eq(h_json(w.record, "d['ids']['uid_outside']"), "0");
}

Test(root, workspace_files_are_the_callers)
{
	struct h_world w = h_world();
	struct h_proc p;
	struct stat st;

	h_write_file(h_join(w.ws, "old"), "old\n", 0644);
	run_sh(&p, &w, NULL, "echo new >> old && mkdir d && echo x > d/f && stat -c %u:%g d/f");
	cr_assert_eq(p.status, 0, H_SHOW(&p));
	/* Inside, the caller's files are the workload's own... */
	cr_assert_str_eq(p.out_text, "65534:65534\n", H_SHOW(&p));
	/* ... and outside, what it made is the caller's. */
	cr_assert_eq(stat(h_join(w.ws, "d/f"), &st), 0);
	cr_assert_eq(st.st_uid, 0);
	cr_assert_eq(st.st_gid, 0);
	cr_assert_str_eq(h_read_file(h_join(w.ws, "old"), NULL), "old\nnew\n");
}

/* chmod u+s, chmod g+s, and a create with the bits in the mode. */
#define SETUID_SCRIPT                                                                       \
	"cp /bin/true t; chmod u+s t; echo chmod=$?; chmod g+s t; echo chmodg=$?;"          \
	" python3 -c 'import os; os.close(os.open(\"c\", os.O_CREAT|os.O_WRONLY, 0o6755))'" \
	" 2>/dev/null; echo create=$?"

Test(root, setuid_bit_set_inside_is_refused_and_absent_outside)
{
	struct h_world w = h_world();
	struct h_proc p;
	struct stat st;

	run_sh(&p, &w, NULL, SETUID_SCRIPT);
	cr_assert_eq(p.status, 0, H_SHOW(&p));
	cr_assert_str_eq(p.out_text, "chmod=1\nchmodg=1\ncreate=1\n", H_SHOW(&p));
	cr_assert_eq(stat(h_join(w.ws, "t"), &st), 0);
	cr_assert_eq(st.st_uid, 0);
	cr_assert_eq(st.st_mode & (S_ISUID | S_ISGID), 0, "mode %o", st.st_mode);
	cr_assert(!h_exists(h_join(w.ws, "c")));
}

Test(root, weaken_no_seccomp_leaves_a_setuid_root_file_outside)
{
	struct h_world w = h_world();
	struct h_proc p;
	struct stat st;

	run_sh(&p, &w, "no-seccomp", SETUID_SCRIPT);
	cr_assert_eq(p.status, 0, H_SHOW(&p));
	cr_assert_str_eq(p.out_text, "chmod=0\nchmodg=0\ncreate=0\n", H_SHOW(&p));
	/* The hole: a root-owned setuid file on the host, made from inside. */
	cr_assert_eq(stat(h_join(w.ws, "t"), &st), 0);
	cr_assert_eq(st.st_uid, 0);
	cr_assert_eq(st.st_mode & S_ISUID, S_ISUID, "mode %o", st.st_mode);
	cr_assert_eq(stat(h_join(w.ws, "c"), &st), 0);
	cr_assert_eq(st.st_mode & S_ISUID, S_ISUID, "mode %o", st.st_mode);
}

/* A policy file: the agent policy with limits.rlimits.nproc = 8. */
static const char *nproc_policy(const struct h_world *w)
{
	char *agent = h_read_file(h_join(h_root(), "contrib/policies/agent.json"), NULL);
	char *path = h_join(w->base, "nproc.json");
	char *at;

	cr_assert_not_null(agent);
	at = strstr(agent, "\"nproc\": 4096");
	cr_assert_not_null(at);
	memcpy(at, "\"nproc\":    8", 13);
	h_write_file(path, agent, 0644);
	return path;
}

/* Twenty forks: how many succeeded (the children sleep until the
 * sandbox ends). dash exits when a fork fails, python3 does not. */
#define NPROC_SCRIPT                \
	"import os, time\n"         \
	"n = 0\n"                   \
	"for i in range(20):\n"     \
	"    try:\n"                \
	"        pid = os.fork()\n" \
	"    except OSError:\n"     \
	"        break\n"           \
	"    if pid == 0:\n"        \
	"        time.sleep(30)\n"  \
	"        os._exit(0)\n"     \
	"    n += 1\n"              \
	"print(n)\n"

Test(root, nproc_binds_a_root_callers_workload)
{
	struct h_world w = h_world();
	struct h_proc p;

	H_PADDOCK(&p, w.ws, "run", "--policy", nproc_policy(&w), "--", "python3", "-c",
		  NPROC_SCRIPT);
	cr_assert_eq(p.status, 0, H_SHOW(&p));
	cr_assert_lt(atoi(p.out_text), 20, H_SHOW(&p));
}

Test(root, weaken_host_root_nproc_does_not_bind)
{
	struct h_world w = h_world();
	struct h_proc p;

	H_PADDOCK(&p, w.ws, "run", "--policy", nproc_policy(&w), "--weaken", "host-root", "--",
		  "python3", "-c", NPROC_SCRIPT);
	cr_assert_eq(p.status, 0, H_SHOW(&p));
	cr_assert_eq(atoi(p.out_text), 20, H_SHOW(&p));
}

/* The second test user (run.sh creates it). */
static struct passwd *user2(void)
{
	struct passwd *pw = getpwnam("paddock-test2");

	if (!pw)
		h_skip("no user paddock-test2 (run.sh creates it)");
	return pw;
}

/* Another user pre-created the record in a sticky directory (/tmp): it is
 * refused, and their file is left as it was. */
Test(root, a_record_file_another_user_made_is_refused)
{
	struct h_world w = h_world();
	struct passwd *pw = user2();
	char *shared = h_mkdir(w.base, "shared", 01777);
	char *rec = h_join(shared, "r.json");
	struct h_proc p;

	h_write_file(rec, "planted\n", 0666);
	cr_assert_eq(chown(rec, pw->pw_uid, pw->pw_gid), 0);
	H_PADDOCK(&p, w.ws, "run", "--record", rec, "--", "true");
	cr_assert_eq(p.status, 125, H_SHOW(&p));
	cr_assert(h_contains(p.err_text, h_fmt("belongs to uid %u", (unsigned)pw->pw_uid)),
		  H_SHOW(&p));
	cr_assert_eq(h_count_lines(p.err_text), 1, H_SHOW(&p));
	cr_assert_str_eq(h_read_file(rec, NULL), "planted\n");
}

/* A directory another user owns: they could swap the record. */
Test(root, a_record_directory_another_user_owns_is_refused)
{
	struct h_world w = h_world();
	struct passwd *pw = user2();
	char *theirs = h_mkdir(w.base, "theirs", 0755);
	struct h_proc p;

	cr_assert_eq(chown(theirs, pw->pw_uid, pw->pw_gid), 0);
	H_PADDOCK(&p, w.ws, "run", "--record", h_join(theirs, "r.json"), "--", "true");
	cr_assert_eq(p.status, 125, H_SHOW(&p));
	cr_assert(
	    h_contains(p.err_text, h_fmt("directory belongs to uid %u", (unsigned)pw->pw_uid)),
	    H_SHOW(&p));
	cr_assert(!h_exists(h_join(theirs, "r.json")));
}

/* Removed in h_fini, whatever happens (a path not made by h_tmpdir). */
static void cleanup_path(const char *path)
{
	if (h_ndirs < H_MAX)
		h_dirs[h_ndirs++] = strdup(path);
}

/* paddock as uid/gid with HOME and no XDG_RUNTIME_DIR, waited for. */
static int as_user(struct h_proc *p, const struct passwd *pw, const char *home, const char *cwd,
		   const char *a1, const char *a2, const char *a3, const char *a4)
{
	return H_CMD(p, cwd, "/usr/bin/setpriv", h_fmt("--reuid=%u", (unsigned)pw->pw_uid),
		     h_fmt("--regid=%u", (unsigned)pw->pw_gid), "--clear-groups", "/usr/bin/env",
		     "-u", "XDG_RUNTIME_DIR", h_fmt("HOME=%s", home), h_paddock(), a1, a2, a3, a4);
}

/* Another user made /tmp/paddock-UID first (the sticky /tmp lets anyone,
 * and the victim can never remove it): paddock falls back to a private
 * directory, says so naming the squatter, and sessions work there. */
Test(root, a_squatted_registry_falls_back_to_a_private_directory)
{
	struct h_world w = h_world();
	/* getpwnam() returns one static struct: copies. */
	struct passwd squatter = *user2(), victim, *pw = getpwnam("paddock-test3");
	char *squat, *home, *ws, link[PATH_MAX];
	const char *id;
	struct h_proc p;
	ssize_t n;

	if (!pw)
		h_skip("no user paddock-test3 (run.sh creates it)");
	victim = *pw;
	squat = h_fmt("/tmp/paddock-%u", (unsigned)victim.pw_uid);
	h_rm_rf(squat);
	cleanup_path(squat);
	cr_assert_eq(mkdir(squat, 0755), 0, "mkdir %s: %s", squat, strerror(errno));
	cr_assert_eq(chown(squat, squatter.pw_uid, squatter.pw_gid), 0);
	home = h_mkdir(w.base, "home", 0755);
	ws = h_mkdir(home, "ws", 0755);
	cr_assert_eq(chown(home, victim.pw_uid, victim.pw_gid), 0);
	cr_assert_eq(chown(ws, victim.pw_uid, victim.pw_gid), 0);

	as_user(&p, &victim, home, ws, "run", "--", "true", NULL);
	cr_assert_eq(p.status, 0, H_SHOW(&p));
	cr_assert(h_contains(p.err_text, h_fmt("session registry %s belongs to uid %u", squat,
					       (unsigned)squatter.pw_uid)),
		  H_SHOW(&p));
	n = readlink(h_join(home, ".cache/paddock/registry"), link, sizeof(link) - 1);
	cr_assert_gt(n, 0);
	link[n] = '\0';
	cleanup_path(link);
	cr_assert(h_contains(p.err_text, h_fmt("using %s instead", link)), H_SHOW(&p));
	cr_assert(strncmp(link, h_fmt("%s.", squat), strlen(squat) + 1) == 0, "%s", link);

	/* The same fallback next time: a detached session, listed, waited. */
	as_user(&p, &victim, home, ws, "run", "--detach", "--", "sh");
	cr_assert_eq(p.status, 0, H_SHOW(&p));
	id = h_fmt("%.12s", p.out_text);
	as_user(&p, &victim, home, ws, "wait", id, NULL, NULL);
	cr_assert_eq(p.status, 0, H_SHOW(&p));
	cr_assert(h_exists(h_fmt("%s/%s/session.json", link, id)));
	as_user(&p, &victim, home, ws, "rm", id, NULL, NULL);
	cr_assert_eq(p.status, 0, H_SHOW(&p));

	/* No home of the victim's to remember a fallback in: a clear error,
	 * never the squatter's directory. */
	as_user(&p, &victim, "/nonexistent", ws, "run", "--", "true", NULL);
	cr_assert_eq(p.status, 125, H_SHOW(&p));
	cr_assert(h_contains(p.err_text, "no private fallback"), H_SHOW(&p));
	cr_assert_str_eq(h_list_dir(squat), "", "the squatter's directory was used");
}

/* paddock exec into a root caller's sandbox: the command is the workload's
 * unprivileged uid too, never host root. */
Test(root, exec_into_a_root_callers_sandbox_is_uid_65534)
{
	struct h_world w = h_world();
	char *xdg = h_mkdir(w.base, "xdg", 0700);
	const char *id;
	struct h_proc p;

	cr_assert_eq(setenv("XDG_RUNTIME_DIR", xdg, 1), 0);
	H_PADDOCK(&p, w.ws, "run", "--detach", "--", "sleep", "100");
	cr_assert_eq(p.status, 0, H_SHOW(&p));
	id = h_fmt("%.12s", p.out_text);
	H_PADDOCK(&p, w.ws, "exec", id, "--", "sh", "-c",
		  "id -u; id -G; cat /etc/shadow >/dev/null 2>&1; echo shadow=$?");
	cr_assert_eq(p.status, 0, H_SHOW(&p));
	cr_assert_str_eq(p.out_text, "65534\n65534\nshadow=1\n", H_SHOW(&p));
	H_PADDOCK(&p, w.ws, "stop", "--grace", "0s", id);
	cr_assert_eq(p.status, 0, H_SHOW(&p));
	H_PADDOCK(&p, w.ws, "rm", id);
	cr_assert_eq(p.status, 0, H_SHOW(&p));
}

/* No user namespace to be had (user.max_user_namespaces 0, as a hardened
 * host or a container may set): the error says what governs it. The limit
 * is set in a user namespace of the test's own (the sysctl is per user
 * namespace), so the host's stays as it is; paddock runs there as an
 * ordinary user (999). */
static void proc_write(const char *path, const char *text)
{
	int fd = open(path, O_WRONLY | O_CLOEXEC);

	cr_assert_geq(fd, 0, "%s: %s", path, strerror(errno));
	cr_assert_eq(write(fd, text, strlen(text)), (ssize_t)strlen(text), "%s: %s", path,
		     strerror(errno));
	close(fd);
}

/* argv run as uid 999 in a user namespace of the test's own whose
 * user.max_user_namespaces is 0; its output (stdout and stderr) into buf,
 * its wait status returned. */
static int without_user_namespaces(const struct h_world *w, const char *const *argv, char *buf,
				   size_t size)
{
	char *xdg = h_mkdir(w->base, "xdg999", 0700);
	int go[2], out[2];
	ssize_t n, got = 0;
	pid_t pid;
	int status;

	cr_assert_eq(chown(xdg, 999, 999), 0);
	cr_assert_eq(pipe(go), 0);
	cr_assert_eq(pipe(out), 0);
	pid = fork();
	cr_assert_geq(pid, 0);
	if (pid == 0) {
		char c;
		int fd;

		/* A failed assertion of the parent's must not leave us. */
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		close(go[1]);
		close(out[0]);
		if (unshare(CLONE_NEWUSER) < 0 || write(out[1], "u", 1) != 1 ||
		    read(go[0], &c, 1) != 1)
			_exit(90);
		fd = open("/proc/sys/user/max_user_namespaces", O_WRONLY);
		if (fd < 0 || write(fd, "0", 1) != 1)
			_exit(91);
		close(fd);
		if (setgroups(0, NULL) < 0 || setgid(999) < 0 || setuid(999) < 0)
			_exit(92);
		dup2(out[1], 2);
		dup2(out[1], 1);
		if (chdir(w->ws) < 0 || setenv("XDG_RUNTIME_DIR", xdg, 1) < 0)
			_exit(93);
		execv(argv[0], (char *const *)argv);
		_exit(94);
	}
	close(go[0]);
	close(out[1]);
	cr_assert_eq(read(out[0], buf, 1), 1, "the child did not unshare");
	proc_write(h_fmt("/proc/%d/setgroups", (int)pid), "allow");
	proc_write(h_fmt("/proc/%d/uid_map", (int)pid), "0 0 65536");
	proc_write(h_fmt("/proc/%d/gid_map", (int)pid), "0 0 65536");
	cr_assert_eq(write(go[1], "g", 1), 1);
	close(go[1]);
	while ((n = read(out[0], buf + got, size - 1 - (size_t)got)) > 0)
		got += n;
	buf[got] = '\0';
	close(out[0]);
	cr_assert_eq(waitpid(pid, &status, 0), pid);
	return status;
}

Test(root, no_user_namespaces_is_explained)
{
	struct h_world w = h_world();
	const char *argv[] = {h_paddock(), "run", "--", "true", NULL};
	char buf[4096];
	int status = without_user_namespaces(&w, argv, buf, sizeof(buf));

	cr_assert(WIFEXITED(status) && WEXITSTATUS(status) == 125, "status %d: %s", status, buf);
	cr_assert(strstr(buf, "the kernel gives this user no new user namespace: "
			      "user.max_user_namespaces is 0"),
		  "%s", buf);
	cr_assert(strstr(buf, "paddock doctor"), "%s", buf);
}

/* paddock doctor sees it too, says what to set, and exits 1; the same user
 * outside that namespace gets exit 0 (the twin: the probe sees the effect). */
Test(root, doctor_fails_without_user_namespaces)
{
	struct h_world w = h_world();
	const char *argv[] = {h_paddock(), "doctor", NULL};
	char buf[8192];
	int status = without_user_namespaces(&w, argv, buf, sizeof(buf));
	struct h_proc p;

	cr_assert(WIFEXITED(status) && WEXITSTATUS(status) == 1, "status %d: %s", status, buf);
	cr_assert(strstr(buf, "user namespaces     FAIL  unshare(CLONE_NEWUSER): No space left on "
			      "device"),
		  "%s", buf);
	cr_assert(strstr(buf, "sysctl -w user.max_user_namespaces="), "%s", buf);
	cr_assert(strstr(buf, "paddock cannot run here"), "%s", buf);
	H_CMD(&p, w.ws, "/usr/bin/setpriv", "--reuid", "999", "--regid", "999", "--clear-groups",
	      h_paddock(), "doctor");
	cr_assert_eq(p.status, 0, H_SHOW(&p));
	cr_assert(h_contains(p.out_text, "user namespaces     ok"), H_SHOW(&p));
	cr_assert(h_contains(p.out_text, "paddock can run here\n"), H_SHOW(&p));
}

/* ------------------------------------- paddock exec: the same program */

/* The host process carrying marker in the pid namespace of init (the
 * session's PID 1), init itself left out (its argv holds the workload's);
 * waits up to 5 s. 0 when there is none. */
static pid_t session_pid(pid_t init, const char *marker)
{
	char ns[64], want[64];
	ssize_t n = readlink(h_fmt("/proc/%d/ns/pid", (int)init), want, sizeof(want) - 1);

	cr_assert_gt(n, 0, "the session's pid namespace: %s", strerror(errno));
	want[n] = '\0';
	for (int i = 0; i < 250; i++) {
		pid_t pids[16];
		size_t found = h_marker_pids(marker, pids, 16);

		for (size_t k = 0; k < found; k++) {
			n = readlink(h_fmt("/proc/%d/ns/pid", (int)pids[k]), ns, sizeof(ns) - 1);
			if (pids[k] == init || n <= 0)
				continue;
			ns[n] = '\0';
			if (strcmp(ns, want) == 0)
				return pids[k];
		}
		h_sleep_ms(20);
	}
	return 0;
}

/* The classic BPF program of pid's most recent seccomp filter, read from
 * outside with PTRACE_SECCOMP_GET_FILTER (needs CAP_SYS_ADMIN and a
 * stopped tracee: seized, interrupted, detached again), as hex; "(errno
 * name)" when it has none. */
static const char *seccomp_program(pid_t pid)
{
	struct sock_filter *prog;
	long n, got;
	int st, e;
	char *hex;

	cr_assert_eq(ptrace(PTRACE_SEIZE, pid, NULL, NULL), 0, "seize %d: %s", (int)pid,
		     strerror(errno));
	cr_assert_eq(ptrace(PTRACE_INTERRUPT, pid, NULL, NULL), 0, "%s", strerror(errno));
	cr_assert_eq(waitpid(pid, &st, __WALL), pid, "%s", strerror(errno));
	n = ptrace(PTRACE_SECCOMP_GET_FILTER, pid, 0L, NULL);
	e = errno;
	if (n <= 0) {
		ptrace(PTRACE_DETACH, pid, NULL, NULL);
		return h_fmt("(%s)", strerrorname_np(e));
	}
	prog = calloc((size_t)n, sizeof(*prog));
	cr_assert_not_null(prog);
	got = ptrace(PTRACE_SECCOMP_GET_FILTER, pid, 0L, prog);
	ptrace(PTRACE_DETACH, pid, NULL, NULL);
	cr_assert_eq(got, n, "the program changed length: %s", strerror(errno));
	hex = calloc((size_t)n * sizeof(*prog) * 2 + 1, 1);
	cr_assert_not_null(hex);
	for (size_t i = 0; i < (size_t)n * sizeof(*prog); i++)
		sprintf(hex + 2 * i, "%02x", ((unsigned char *)prog)[i]);
	free(prog);
	return hex;
}

/* SHA-256 of the bytes a hex string stands for. */
static const char *sha256_of_hex(const char *hex)
{
	struct h_proc p;

	H_CMD(&p, NULL, H_PYTHON, "-c",
	      "import hashlib,sys; print(hashlib.sha256(bytes.fromhex(sys.argv[1])).hexdigest())",
	      hex);
	cr_assert_eq(p.status, 0, H_SHOW(&p));
	return h_fmt("%.64s", p.out_text);
}

/* A detached session of a root caller (its workload `sleep 300 M`), a
 * command exec'd into it (`sleep 300 M2`), and both programs. */
struct programs {
	const char *workload, *exec, *record;
	/* seccomp listeners among the fds of the exec'd command and of the
	 * session's zygote (-1: none found) */
	int exec_listeners, waiting_listeners;
};

/* How many of pid's fds are seccomp listeners (read as root: the
 * zygote is not dumpable). */
static int listener_fds(pid_t pid)
{
	DIR *d = opendir(h_fmt("/proc/%d/fd", (int)pid));
	struct dirent *e;
	int n = 0;

	cr_assert_not_null(d, "/proc/%d/fd: %s", (int)pid, strerror(errno));
	while ((e = readdir(d))) {
		char buf[64];
		ssize_t k = readlinkat(dirfd(d), e->d_name, buf, sizeof(buf) - 1);

		if (k > 0 && (buf[k] = '\0', strcmp(buf, "anon_inode:seccomp notify") == 0))
			n++;
	}
	closedir(d);
	return n;
}

/* The session's zygote ("paddock-exec") in init's pid namespace, which
 * every exec'd command is a fork of; waits up to 5 s; 0 when there is
 * none. */
static pid_t waiting_command(pid_t init)
{
	char want[64], ns[64];
	ssize_t n = readlink(h_fmt("/proc/%d/ns/pid", (int)init), want, sizeof(want) - 1);

	cr_assert_gt(n, 0);
	want[n] = '\0';
	for (int i = 0; i < 250; i++) {
		DIR *d = opendir("/proc");
		struct dirent *e;
		pid_t found = 0;

		cr_assert_not_null(d);
		while (!found && (e = readdir(d))) {
			pid_t pid = atoi(e->d_name);
			char *comm =
			    pid > 0 ? h_read_file(h_fmt("/proc/%d/comm", (int)pid), NULL) : NULL;

			n = comm ? readlink(h_fmt("/proc/%d/ns/pid", (int)pid), ns, sizeof(ns) - 1)
				 : -1;
			if (n > 0 && (ns[n] = '\0', strcmp(ns, want) == 0) &&
			    strcmp(comm, "paddock-exec\n") == 0)
				found = pid;
		}
		closedir(d);
		if (found)
			return found;
		h_sleep_ms(20);
	}
	return 0;
}

static struct programs exec_programs(const char *weaken, const char *policy)
{
	struct h_world w = h_world();
	char *xdg = h_mkdir(w.base, "xdg", 0700);
	const char *m = h_marker(), *m2 = h_marker(), *id;
	const char *args[16] = {"run", "--detach", "--record", w.record};
	struct programs out = {.record = w.record};
	struct h_proc p, e;
	size_t n = 4;
	pid_t init, wl, ex, wait_pid;

	cr_assert_eq(setenv("XDG_RUNTIME_DIR", xdg, 1), 0);
	if (weaken) {
		args[n++] = "--weaken";
		args[n++] = weaken;
	}
	if (policy) {
		args[n++] = "--policy";
		args[n++] = h_join(w.base, "policy.json");
		h_write_file(args[n - 1], policy, 0644);
	}
	args[n++] = "--";
	args[n++] = "sh";
	args[n++] = "-c";
	args[n++] = "exec sleep 300 $0";
	args[n++] = m;
	h_run_paddock(&p, w.ws, args);
	cr_assert_eq(p.status, 0, H_SHOW(&p));
	id = h_fmt("%.12s", p.out_text);
	init = atoi(h_json(h_fmt("%s/paddock/%s/session.json", xdg, id), "d['init']['pid']"));
	H_PADDOCK_START(&e, w.ws, "exec", id, "--", "sleep", "300", m2);
	wl = session_pid(init, m);
	ex = session_pid(init, m2);
	cr_assert(wl > 0 && ex > 0, "workload %d, exec'd %d", (int)wl, (int)ex);
	out.workload = seccomp_program(wl);
	out.exec = seccomp_program(ex);
	out.exec_listeners = listener_fds(ex);
	wait_pid = waiting_command(init);
	out.waiting_listeners = wait_pid > 0 ? listener_fds(wait_pid) : -1;
	H_PADDOCK(&p, w.ws, "stop", "--grace", "0s", id);
	cr_assert_eq(p.status, 0, H_SHOW(&p));
	h_wait(&e, 10000);
	H_PADDOCK(&p, w.ws, "rm", id);
	cr_assert_eq(p.status, 0, H_SHOW(&p));
	return out;
}

/* Does the program hex a end with the program hex b (the policy's
 * program behind the protected-path notice's prefix)? */
static bool ends_with(const char *a, const char *b)
{
	size_t la = strlen(a), lb = strlen(b);

	return la >= lb && strcmp(a + la - lb, b) == 0;
}

/* The program itself, read from outside (test_exec.c compares what
 * /proc/PID/status says, which is all an unprivileged test can read): the
 * exec'd command's filter is the workload's, byte for byte, the
 * protected-path notice's prefix included (docs/security.md, "Why a change
 * was refused"): its digest is the record's protect_notice.program_sha256,
 * and behind the prefix is the policy's program, seccomp.bpf_sha256. */
Test(root, exec_has_the_workloads_seccomp_program_read_by_ptrace)
{
	struct programs x = exec_programs(NULL, NULL);
	const char *notice = h_json(x.record, "d['protect_notice']['program_sha256']");

	cr_assert(x.workload[0] != '(', "the workload has no program: %s", x.workload);
	cr_assert(x.exec[0] != '(', "the exec'd command has no program: %s", x.exec);
	cr_assert_str_eq(x.exec, x.workload, "the exec'd command's program differs");
	cr_assert_str_eq(h_fmt("\"%s\"", sha256_of_hex(x.exec)), notice);
	cr_assert_str_neq(notice, h_json(x.record, "d['seccomp']['bpf_sha256']"),
			  "the session has no notice prefix to compare");
	/* The listener is the supervisor's (test_exec.c counts it there):
	 * neither the exec'd command nor the waiting one holds it. */
	cr_assert_eq(x.exec_listeners, 0, "the exec'd command holds a listener");
	cr_assert_eq(x.waiting_listeners, 0, "the zygote holds a listener");
}

/* The twins: --weaken exec-plain-seccomp gives the exec'd command the
 * policy's program without the prefix (what it loaded before it had a
 * listener of its own): the workload's ends with it, and the comparison
 * above sees the difference; --weaken exec-unhardened leaves it without a
 * program (EINVAL: not in filter mode) while the workload keeps its own;
 * and a policy that allows one more call gives another program. */
Test(root, weaken_exec_plain_seccomp_loads_the_program_without_the_prefix)
{
	struct programs x = exec_programs("exec-plain-seccomp", NULL);

	cr_assert(x.exec[0] != '(', "the exec'd command has no program: %s", x.exec);
	cr_assert_str_neq(x.exec, x.workload, "the weakening is not real");
	cr_assert(ends_with(x.workload, x.exec), "the exec'd program is not the policy's");
	cr_assert_str_eq(h_fmt("\"%s\"", sha256_of_hex(x.exec)),
			 h_json(x.record, "d['seccomp']['bpf_sha256']"));
}

Test(root, weaken_exec_unhardened_has_no_program_and_another_policy_another)
{
	struct programs x = exec_programs("exec-unhardened", NULL);
	struct programs base = exec_programs(NULL, "{\"version\": 1, \"extends\": \"agent\"}");
	struct programs other = exec_programs(
	    NULL,
	    "{\"version\": 1, \"extends\": \"agent\", \"seccomp\": {\"allow\": [\"chroot\"]}}");

	cr_assert_str_eq(x.exec, "(EINVAL)", "the weakening is not real");
	cr_assert(x.workload[0] != '(', "the workload has no program: %s", x.workload);
	cr_assert_str_eq(other.workload, other.exec);
	cr_assert_str_eq(base.workload, base.exec);
	cr_assert_str_neq(other.exec, base.exec, "the comparison sees no difference");
}
