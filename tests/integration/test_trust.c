/* Integration: project policies gain authority only by an approval bound
 * to their bytes (docs/trust.md, "Project policies"; HB-02). Each file
 * transition of a workspace's .paddock/policy.json - create, rename over,
 * symlink swap, directory move, edit, hard link - must leave the next run
 * on the caller's policy; each has a twin in which the same final state
 * does activate (approved at its own path, or --weaken trust-path-only),
 * so the test sees activation when there is one. Activation is observed
 * from outside: the workload prints PROJECT_MARK, which only a project
 * policy sets, and the record's project_policy says which file and digest
 * applied. The TOCTOU test flips the file between two contents while
 * paddock runs again and again: what applies is what was hashed. */
#include "harness.h"

#include <sys/prctl.h>

TestSuite(trust, .init = h_init, .fini = h_fini, .timeout = 120);

#define POLICY_OF(mark)                                                                           \
	"{\"version\": 1, \"extends\": \"agent\", \"environment\": {\"set\": {\"PROJECT_MARK\": " \
	"\"" mark "\"}}}\n"
#define POLICY_A POLICY_OF("A")
#define POLICY_B POLICY_OF("B")

struct tw {
	struct h_world w;
	char *cfg, *dot, *file, *other, *other_file;
};

/* A workspace with .paddock/, a trust store of its own (XDG_CONFIG_HOME
 * in the test's directory, outside the workspace) and a second directory
 * "other" outside the workspace. */
static struct tw tw(void)
{
	struct tw t;

	t.w = h_world();
	t.cfg = h_mkdir(t.w.base, "cfg", 0700);
	cr_assert_eq(setenv("XDG_CONFIG_HOME", t.cfg, 1), 0);
	t.dot = h_mkdir(t.w.ws, ".paddock", 0755);
	t.file = h_join(t.dot, "policy.json");
	t.other = h_mkdir(t.w.base, "other", 0755);
	t.other_file = h_join(t.other, "policy.json");
	return t;
}

static void trust(const char *cwd, const char *path)
{
	struct h_proc p;

	if (path)
		H_PADDOCK(&p, cwd, "trust", path);
	else
		H_PADDOCK(&p, cwd, "trust");
	cr_assert_eq(p.status, 0, "paddock trust %s: " H_FMT, path ? path : "", H_ARGS(&p));
}

/* paddock run in ws (extra: one more option or NULL); the workload's
 * PROJECT_MARK ("" when unset) and the record's project_policy.state. */
struct seen {
	const char *mark, *state, *sha;
	const char *err;
};

static struct seen run_in(const char *ws, const char *record, const char *extra,
			  const char *extra_arg)
{
	struct h_proc p;
	struct seen s;
	const char *args[16];
	size_t n = 0;

	args[n++] = "run";
	args[n++] = "-r";
	args[n++] = record;
	if (extra)
		args[n++] = extra;
	if (extra_arg)
		args[n++] = extra_arg;
	args[n++] = "--";
	args[n++] = "/bin/sh";
	args[n++] = "-c";
	args[n++] = "echo \"mark=$PROJECT_MARK\"";
	args[n] = NULL;
	h_run_paddock(&p, ws, args);
	cr_assert_eq(p.status, 0, H_SHOW(&p));
	cr_assert(h_contains(p.out_text, "mark="), H_SHOW(&p));
	s.mark = h_fmt("%.*s", (int)strcspn(strstr(p.out_text, "mark=") + 5, "\n"),
		       strstr(p.out_text, "mark=") + 5);
	s.state = h_json(record, "d['project_policy']['state']");
	s.sha = h_json(record, "d['project_policy'].get('sha256')");
	s.err = p.err_text;
	return s;
}

static struct seen run(const struct tw *t)
{
	return run_in(t->w.ws, t->w.record, NULL, NULL);
}

static void assert_applied(struct seen s, const char *mark)
{
	cr_assert_str_eq(s.state, "\"trusted\"", "%s", s.err);
	cr_assert_str_eq(s.mark, mark, "%s", s.err);
}

static void assert_not_applied(struct seen s)
{
	cr_assert_str_eq(s.mark, "", "a project policy applied: %s", s.err);
	cr_assert_str_neq(s.state, "\"trusted\"", "%s", s.err);
	cr_assert(h_contains(s.err, "is not trusted"), "no warning: %s", s.err);
}

/* ------------------------------------------------------------ baseline */

Test(trust, absent_is_recorded_and_changes_nothing)
{
	struct tw t = tw();
	struct seen s;

	rmdir(t.dot);
	s = run(&t);
	cr_assert_str_eq(s.state, "\"absent\"");
	cr_assert_str_eq(s.mark, "");
	cr_assert(!h_contains(s.err, "project policy"), "%s", s.err);
}

Test(trust, approved_bytes_apply_with_who_and_digest)
{
	struct tw t = tw();
	struct seen s;

	h_write_file(t.file, POLICY_A, 0644);
	trust(t.w.ws, NULL);
	s = run(&t);
	assert_applied(s, "A");
	cr_assert_str_eq(h_json(t.w.record, "d['project_policy']['approved_by']"),
			 h_fmt("%u", (unsigned)getuid()));
	cr_assert_str_eq(h_json(t.w.record, "d['policy']['path']"), h_fmt("\"%s\"", t.file));
	cr_assert_str_eq(h_json(t.w.record, "d['policy']['sha256']"), s.sha);
	/* The store: the caller's, 0600. */
	{
		struct stat st;

		cr_assert_eq(stat(h_join(t.cfg, "paddock/trust.json"), &st), 0);
		cr_assert_eq(st.st_mode & 0777, 0600);
		cr_assert_eq(st.st_uid, getuid());
	}
}

/* ---------------------------------------------------------- transitions */

/* Create: a policy that was never approved. Twin: approved, it applies. */
Test(trust, create_is_not_applied)
{
	struct tw t = tw();

	h_write_file(t.file, POLICY_B, 0644);
	assert_not_applied(run(&t));
	cr_assert_str_eq(h_json(t.w.record, "d['project_policy']['reason']"), "\"not approved\"");
	trust(t.w.ws, NULL);
	assert_applied(run(&t), "B");
}

/* Rename over an approved file. Twins: by path alone (the weakened
 * loader) the new bytes apply; approved again, they apply. */
Test(trust, rename_over_is_not_applied)
{
	struct tw t = tw();
	char *tmp = h_join(t.dot, "new.json");

	h_write_file(t.file, POLICY_A, 0644);
	trust(t.w.ws, NULL);
	assert_applied(run(&t), "A");
	h_write_file(tmp, POLICY_B, 0644);
	cr_assert_eq(rename(tmp, t.file), 0);
	assert_not_applied(run(&t));
	cr_assert(h_contains(h_json(t.w.record, "d['project_policy']['reason']"),
			     "changed since it was approved"));
	assert_applied(run_in(t.w.ws, t.w.record, "--weaken", "trust-path-only"), "B");
	trust(t.w.ws, NULL);
	assert_applied(run(&t), "B");
}

/* Edit in place. Twins as for rename over. */
Test(trust, edit_is_not_applied)
{
	struct tw t = tw();

	h_write_file(t.file, POLICY_A, 0644);
	trust(t.w.ws, NULL);
	assert_applied(run(&t), "A");
	h_write_file(t.file, POLICY_B, 0644); /* O_TRUNC: same inode */
	assert_not_applied(run(&t));
	assert_applied(run_in(t.w.ws, t.w.record, "--weaken", "trust-path-only"), "B");
	trust(t.w.ws, NULL);
	assert_applied(run(&t), "B");
}

/* Symlink swap: the approved file replaced by a symlink to another file
 * that is itself approved (elsewhere). Twin: that file at its own path
 * applies, so the bytes are approved and only the relocation is refused. */
Test(trust, symlink_swap_is_not_applied)
{
	struct tw t = tw();

	h_write_file(t.file, POLICY_A, 0644);
	trust(t.w.ws, NULL);
	h_write_file(t.other_file, POLICY_B, 0644);
	trust(t.w.ws, t.other_file);
	cr_assert_eq(unlink(t.file), 0);
	cr_assert_eq(symlink(t.other_file, t.file), 0);
	assert_not_applied(run(&t));
	cr_assert(h_contains(h_json(t.w.record, "d['project_policy']['reason']"), "symlink"));
	assert_applied(run_in(t.w.ws, t.w.record, "--project-policy", t.other_file), "B");
}

/* .paddock itself a symlink to a directory whose policy.json is approved
 * there. Twin as above. */
Test(trust, symlinked_directory_is_not_applied)
{
	struct tw t = tw();

	h_write_file(t.other_file, POLICY_B, 0644);
	trust(t.w.ws, t.other_file);
	cr_assert_eq(rmdir(t.dot), 0);
	cr_assert_eq(symlink(t.other, t.dot), 0);
	assert_not_applied(run(&t));
	assert_applied(run_in(t.w.ws, t.w.record, "--project-policy", t.other_file), "B");
}

/* Directory move: the approved .paddock moved into another workspace.
 * Twin: in its own workspace it applies; approved in the new one too. */
Test(trust, directory_move_is_not_applied)
{
	struct tw t = tw();
	char *ws2 = h_mkdir(t.w.base, "ws2", 0755);
	char *rec2 = h_join(t.w.base, "record2.json");

	h_write_file(t.file, POLICY_B, 0644);
	trust(t.w.ws, NULL);
	assert_applied(run(&t), "B");
	cr_assert_eq(rename(t.dot, h_join(ws2, ".paddock")), 0);
	assert_not_applied(run_in(ws2, rec2, NULL, NULL));
	trust(ws2, NULL);
	assert_applied(run_in(ws2, rec2, NULL, NULL), "B");
}

/* The whole workspace moved: a new canonical path. */
Test(trust, workspace_move_is_not_applied)
{
	struct tw t = tw();
	char *moved = h_join(t.w.base, "moved");

	h_write_file(t.file, POLICY_B, 0644);
	trust(t.w.ws, NULL);
	assert_applied(run(&t), "B");
	cr_assert_eq(rename(t.w.ws, moved), 0);
	assert_not_applied(run_in(moved, t.w.record, NULL, NULL));
	trust(moved, NULL);
	assert_applied(run_in(moved, t.w.record, NULL, NULL), "B");
}

/* Hard link: the workspace's name made a second name of a file approved
 * elsewhere (same inode, same bytes). Twin: at its approved name it
 * applies. */
Test(trust, hard_link_is_not_applied)
{
	struct tw t = tw();

	h_write_file(t.other_file, POLICY_B, 0644);
	trust(t.w.ws, t.other_file);
	cr_assert_eq(link(t.other_file, t.file), 0);
	assert_not_applied(run(&t));
	assert_applied(run_in(t.w.ws, t.w.record, "--project-policy", t.other_file), "B");
}

/* ------------------------------------------------------------ widening */

/* A project policy wider than the caller's (a writable bind outside the
 * workspace): refused at paddock trust unless --allow-widen, shown there;
 * approved with it, it applies. */
Test(trust, widening_needs_allow_widen)
{
	struct tw t = tw();
	char *out = h_mkdir(t.w.base, "out", 0755);
	struct h_proc p;

	h_write_file(
	    t.file,
	    h_fmt("{\"version\": 1, \"extends\": \"agent\", \"mounts\": [{\"type\": "
		  "\"bind\", \"source\": \"%s\", \"target\": \"/out\", \"mode\": \"rw\"}], "
		  "\"environment\": {\"set\": {\"PROJECT_MARK\": \"W\"}}}",
		  out),
	    0644);
	H_PADDOCK(&p, t.w.ws, "trust");
	cr_assert_eq(p.status, 125, H_SHOW(&p));
	cr_assert(h_contains(p.out_text, h_fmt("writable bind %s outside the workspace", out)),
		  H_SHOW(&p));
	cr_assert(h_contains(p.err_text, "--allow-widen"), H_SHOW(&p));
	assert_not_applied(run(&t));
	H_PADDOCK(&p, t.w.ws, "trust", "--allow-widen");
	cr_assert_eq(p.status, 0, H_SHOW(&p));
	assert_applied(run(&t), "W");
}

/* A project policy that binds the trust store writable could approve the
 * next one: never trusted, even with --allow-widen. */
Test(trust, a_policy_that_shows_the_store_is_refused)
{
	struct tw t = tw();
	struct h_proc p;

	h_write_file(
	    t.file,
	    h_fmt("{\"version\": 1, \"extends\": \"agent\", \"mounts\": [{\"type\": "
		  "\"bind\", \"source\": \"%s\", \"target\": \"/cfg\", \"mode\": \"rw\"}]}",
		  t.cfg),
	    0644);
	H_PADDOCK(&p, t.w.ws, "trust", "--allow-widen");
	cr_assert_eq(p.status, 125, H_SHOW(&p));
	cr_assert(h_contains(p.err_text, "inside the writable bind"), H_SHOW(&p));
}

/* ---------------------------------------------------------- trust store */

/* A store others can read or write is not believed (twin: 0600 is). */
Test(trust, store_mode_is_checked)
{
	struct tw t = tw();
	char *store = h_join(t.cfg, "paddock/trust.json");

	h_write_file(t.file, POLICY_A, 0644);
	trust(t.w.ws, NULL);
	cr_assert_eq(chmod(store, 0644), 0);
	assert_not_applied(run(&t));
	cr_assert(h_contains(h_json(t.w.record, "d['project_policy']['reason']"), "0600"));
	cr_assert_eq(chmod(store, 0600), 0);
	assert_applied(run(&t), "A");
}

/* A store inside the workspace is not believed. */
Test(trust, store_inside_the_workspace_is_refused)
{
	struct tw t = tw();

	cr_assert_eq(setenv("XDG_CONFIG_HOME", h_mkdir(t.w.ws, "cfg", 0700), 1), 0);
	h_write_file(t.file, POLICY_A, 0644);
	{
		struct h_proc p;

		H_PADDOCK(&p, t.w.ws, "trust");
		cr_assert_eq(p.status, 125, H_SHOW(&p));
		cr_assert(h_contains(p.err_text, "inside the workspace"), H_SHOW(&p));
	}
	assert_not_applied(run(&t));
}

Test(trust, list_and_revoke)
{
	struct tw t = tw();
	struct h_proc p;

	h_write_file(t.file, POLICY_A, 0644);
	trust(t.w.ws, NULL);
	H_PADDOCK(&p, t.w.ws, "trust", "--list");
	cr_assert_eq(p.status, 0, H_SHOW(&p));
	cr_assert(h_contains(p.out_text, t.file), H_SHOW(&p));
	H_PADDOCK(&p, t.w.ws, "trust", "--revoke", ".paddock/policy.json");
	cr_assert_eq(p.status, 0, H_SHOW(&p));
	assert_not_applied(run(&t));
	H_PADDOCK(&p, t.w.ws, "trust", "--revoke", ".paddock/policy.json");
	cr_assert_eq(p.status, 125, H_SHOW(&p));
}

/* A project policy's "extends" names profiles only: a file would be bytes
 * its approval does not cover. */
Test(trust, extends_of_a_file_is_refused)
{
	struct tw t = tw();
	struct h_proc p;

	h_write_file(h_join(t.dot, "base.json"), POLICY_B, 0644);
	h_write_file(t.file, "{\"version\": 1, \"extends\": \"base.json\"}", 0644);
	H_PADDOCK(&p, t.w.ws, "trust");
	cr_assert_eq(p.status, 125, H_SHOW(&p));
	cr_assert(h_contains(p.err_text, "profiles by name only"), H_SHOW(&p));
}

/* ---------------------------------------------------------------- TOCTOU */

/* A racer renames A and B over the file as fast as it can while paddock
 * runs: A is approved, B is not. Whatever paddock hashed is what it
 * parsed (one read from one fd), so no run may apply B. The twin, with
 * --weaken trust-path-only, shows the race does put B in front of paddock
 * (the test sees B when it applies). */
static pid_t racer(const struct tw *t)
{
	pid_t pid = fork();

	cr_assert_geq(pid, 0);
	if (pid == 0) {
		char *tmp = h_join(t->dot, "racer.tmp");

		prctl(PR_SET_PDEATHSIG, SIGKILL);
		for (unsigned long i = 0;; i++) {
			const char *text = i % 2 ? POLICY_B : POLICY_A;
			int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);

			if (fd < 0 || write(fd, text, strlen(text)) < 0 || close(fd) < 0 ||
			    rename(tmp, t->file) < 0)
				_exit(1);
		}
	}
	h_track_pid(pid);
	return pid;
}

static void race(bool weakened, unsigned *a, unsigned *b, unsigned *none)
{
	struct tw t = tw();
	const char *sha_a;
	pid_t pid;

	h_write_file(t.file, POLICY_A, 0644);
	trust(t.w.ws, NULL);
	sha_a = run(&t).sha;
	pid = racer(&t);
	*a = *b = *none = 0;
	for (int i = 0; i < 24; i++) {
		struct seen s =
		    weakened ? run_in(t.w.ws, t.w.record, "--weaken", "trust-path-only") : run(&t);

		if (strcmp(s.mark, "A") == 0) {
			(*a)++;
			cr_assert_str_eq(s.state, "\"trusted\"");
			cr_assert_str_eq(s.sha, sha_a, "A applied with another digest");
		} else if (strcmp(s.mark, "B") == 0) {
			(*b)++;
		} else {
			(*none)++;
			cr_assert_str_neq(s.state, "\"trusted\"", "trusted, yet no mark");
		}
		if (!weakened)
			cr_assert_str_eq(s.mark != NULL && strcmp(s.mark, "B") == 0 ? "B" : "-",
					 "-", "run %d applied the unapproved bytes", i);
	}
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
	h_untrack_pid(pid);
}

Test(trust, toctou_applies_only_hashed_bytes)
{
	unsigned a, b, none;

	race(false, &a, &b, &none);
	cr_assert_eq(b, 0);
	/* Both outcomes were seen: the race was on. */
	cr_assert_gt(none, 0, "the race never put B in front of paddock");
	cr_log_info("enforced: %u A, %u B, %u untrusted of 24", a, b, none);
}

Test(trust, toctou_twin_weakened_sees_b)
{
	unsigned a, b, none;

	race(true, &a, &b, &none);
	cr_assert_gt(b, 0, "the race never put B in front of paddock (%u A, %u none)", a, none);
	cr_log_info("weakened: %u A, %u B, %u untrusted of 24", a, b, none);
}

/* ------------------------------------------------------------ bad input */

/* A damaged store: paddock trust refuses to rewrite it (one line), paddock
 * run applies nothing and says why. */
Test(trust, a_damaged_store_is_refused_in_one_line)
{
	struct tw t = tw();
	char *dir = h_mkdir(t.cfg, "paddock", 0700);
	struct h_proc p;

	h_write_file(h_join(dir, "trust.json"), "{\"version\": 1, \"trusted\": [1]}", 0600);
	h_write_file(t.file, POLICY_A, 0644);
	H_PADDOCK(&p, t.w.ws, "trust");
	cr_assert_eq(p.status, 125, H_SHOW(&p));
	cr_assert_eq(h_count_lines(p.err_text), 1, H_SHOW(&p));
	cr_assert(h_contains(p.err_text, "trusted[0]: must be an object"), H_SHOW(&p));
	assert_not_applied(run(&t));
	cr_assert(h_contains(h_json(t.w.record, "d['project_policy']['reason']"), "trusted[0]"));
}

/* paddock trust of a symlink, of a missing file, of a FIFO: refused. */
Test(trust, trust_refuses_what_run_would_not_read)
{
	struct tw t = tw();
	struct h_proc p;

	h_write_file(t.other_file, POLICY_A, 0644);
	cr_assert_eq(symlink(t.other_file, t.file), 0);
	H_PADDOCK(&p, t.w.ws, "trust");
	cr_assert_eq(p.status, 125, H_SHOW(&p));
	cr_assert(h_contains(p.err_text, "is a symlink"), H_SHOW(&p));
	cr_assert_eq(unlink(t.file), 0);
	H_PADDOCK(&p, t.w.ws, "trust");
	cr_assert_eq(p.status, 125, H_SHOW(&p));
	cr_assert(h_contains(p.err_text, "no project policy"), H_SHOW(&p));
	cr_assert_eq(mkfifo(t.file, 0644), 0);
	H_PADDOCK(&p, t.w.ws, "trust");
	cr_assert_eq(p.status, 125, H_SHOW(&p));
	cr_assert(h_contains(p.err_text, "not a regular file"), H_SHOW(&p));
	/* And run, with a FIFO there, neither hangs nor applies it. */
	assert_not_applied(run(&t));
	H_PADDOCK(&p, t.w.ws, "run", "--project-policy", h_join(t.w.base, "missing.json"), "--",
		  "/bin/true");
	cr_assert_eq(p.status, 125, H_SHOW(&p));
	cr_assert_eq(h_count_lines(p.err_text), 1, H_SHOW(&p));
}

/* An entry of another uid in the caller's store is not the caller's
 * approval (twin: the same entry with the caller's uid applies). */
Test(trust, an_approval_of_another_uid_is_not_believed)
{
	struct tw t = tw();
	char *store = h_join(t.cfg, "paddock/trust.json");
	char *text;

	h_write_file(t.file, POLICY_A, 0644);
	trust(t.w.ws, NULL);
	text = h_read_file(store, NULL);
	cr_assert_not_null(text);
	h_write_file(store,
		     h_fmt("%.*s\"uid\": %u%s", (int)(strstr(text, "\"uid\":") - text), text,
			   (unsigned)getuid() + 1, strchr(strstr(text, "\"uid\":"), ',')),
		     0600);
	assert_not_applied(run(&t));
	cr_assert(
	    h_contains(h_json(t.w.record, "d['project_policy']['reason']"), "approved by uid"));
	h_write_file(store, text, 0600);
	assert_applied(run(&t), "A");
}
