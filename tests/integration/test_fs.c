/* Integration: the filesystem. A read-only canary must stay byte-for-byte
 * unchanged whatever way the workload tries to write it, while the same
 * write into the workspace (the control) works; protected paths inside the
 * workspace; workspaces of concurrent sandboxes; the rw-binds weakening.
 * Every effect is checked from the host after the run. */
#include "harness.h"

TestSuite(fs, .init = h_init, .fini = h_fini, .timeout = 60);

/* ------------------------------------------------------------------ canary */

/* base/canary is bound read-only at /canary; base/cdir (holding
 * base/cdir/canary) read-only at /cdir. Both belong to the test's user and
 * are mode 0644/0755, so only the read-only mount stands in the way. */
struct canary {
	struct h_world w;
	char *file, *dir, *dir_file, *control;
	struct h_snap snap, dir_snap, dir_file_snap;
	const char *dir_list;
};

static struct canary canary_setup(void)
{
	struct canary c;

	c.w = h_world();
	c.file = h_join(c.w.base, "canary");
	h_write_file(c.file, h_fmt("canary %llx\n", h_random()), 0644);
	c.dir = h_mkdir(c.w.base, "cdir", 0755);
	c.dir_file = h_join(c.dir, "canary");
	h_write_file(c.dir_file, h_fmt("dir canary %llx\n", h_random()), 0644);
	c.control = h_join(c.w.ws, "control");
	c.snap = h_snap_take(c.file);
	c.dir_snap = h_snap_take(c.dir);
	c.dir_file_snap = h_snap_take(c.dir_file);
	c.dir_list = h_list_dir(c.dir);
	return c;
}

static int canary_run(struct h_proc *p, struct canary *c, const char *script)
{
	return H_PADDOCK(p, c->w.ws, "run", "--ro-bind", h_fmt("%s:/canary", c->file), "--ro-bind",
			 h_fmt("%s:/cdir", c->dir), "--", "sh", "-c", script);
}

/* The canaries are untouched; the control write into the workspace, made
 * the same way, is there. */
static void canary_check(struct canary *c, struct h_proc *p)
{
	const char *d, *control;

	cr_assert(!p->timed_out, H_SHOW(p));
	d = h_snap_diff(c->file, &c->snap);
	cr_assert_null(d, "canary %s: %s\n" H_FMT, c->file, d, H_ARGS(p));
	d = h_snap_diff(c->dir_file, &c->dir_file_snap);
	cr_assert_null(d, "canary %s: %s\n" H_FMT, c->dir_file, d, H_ARGS(p));
	d = h_snap_diff(c->dir, &c->dir_snap);
	cr_assert_null(d, "canary dir %s: %s\n" H_FMT, c->dir, d, H_ARGS(p));
	cr_assert_str_eq(h_list_dir(c->dir), c->dir_list, H_SHOW(p));
	control = h_read_file(c->control, NULL);
	cr_assert_not_null(control, "the control write into the workspace failed\n" H_FMT,
			   H_ARGS(p));
	cr_assert_str_eq(control, "x\n", H_SHOW(p));
}

Test(fs, canary_shell_redirect)
{
	struct canary c = canary_setup();
	struct h_proc p;

	canary_run(&p, &c,
		   "echo x > /canary; echo x >> /canary; echo x > /cdir/canary; "
		   "echo x > /cdir/new; echo x > control");
	canary_check(&c, &p);
	cr_assert(h_contains(p.err_text, "Read-only file system"), H_SHOW(&p));
}

Test(fs, canary_script_file_in_workspace)
{
	struct canary c = canary_setup();
	struct h_proc p;

	canary_run(&p, &c,
		   "printf 'echo x > /canary\\necho x > /cdir/canary\\necho x > control\\n' "
		   "> attack.sh && chmod +x attack.sh && ./attack.sh");
	canary_check(&c, &p);
	cr_assert(h_exists(h_join(c.w.ws, "attack.sh")));
}

Test(fs, canary_base64_decoded_script)
{
	struct canary c = canary_setup();
	struct h_proc p;
	const char *b64 = h_base64("echo x > /canary\necho x > /cdir/canary\necho x > control\n");

	canary_run(&p, &c, h_fmt("echo %s | base64 -d | sh", b64));
	canary_check(&c, &p);
}

Test(fs, canary_child_process)
{
	struct canary c = canary_setup();
	struct h_proc p;

	canary_run(&p, &c,
		   "sh -c 'sh -c \"echo x > /canary; echo x > /cdir/canary; echo x > control\"'");
	canary_check(&c, &p);
}

Test(fs, canary_detached_grandchild)
{
	struct canary c = canary_setup();
	struct h_proc p;

	/* setsid + double fork: the writer is re-parented to PID 1 and in a
	 * session of its own. The workload waits for its control file. */
	canary_run(
	    &p, &c,
	    "setsid sh -c '( sleep 0.2; echo x > /canary; echo x > /cdir/canary; "
	    "echo x > control ) &' ; "
	    "i=0; while [ ! -e control ] && [ $i -lt 100 ]; do sleep 0.05; i=$((i+1)); done; "
	    "sleep 0.2");
	canary_check(&c, &p);
}

Test(fs, canary_rename_over)
{
	struct canary c = canary_setup();
	struct h_proc p;

	/* mv (which falls back to copy + unlink across mounts) and a bare
	 * rename(2), onto the file and onto the file in the bound directory;
	 * the control is a rename inside the workspace. */
	canary_run(&p, &c,
		   "echo x > evil; mv -f evil /canary; echo x > evil; mv -f evil /cdir/canary; "
		   "echo x > evil; python3 -c \"import os\n"
		   "for t in ('/canary', '/cdir/canary'):\n"
		   "  try: os.rename('evil', t); print('RENAMED', t)\n"
		   "  except OSError as e: print(t, e.strerror)\"; "
		   "echo x > tmp; mv tmp control");
	canary_check(&c, &p);
	cr_assert(!h_contains(p.out_text, "RENAMED"), H_SHOW(&p));
}

Test(fs, canary_rename_parent_directory)
{
	struct canary c = canary_setup();
	struct h_proc p;

	/* Move the bound directory away and put a new one in its place; or
	 * rename a directory of ours over it. Control: a directory rename in
	 * the workspace. */
	canary_run(&p, &c,
		   "mv /cdir /cdir.old; mkdir -p /cdir; echo x > /cdir/canary; "
		   "mkdir -p evil; echo x > evil/canary; mv -T evil /cdir; "
		   "python3 -c \"import os\n"
		   "try: os.rename('evil', '/cdir'); print('RENAMED')\n"
		   "except OSError as e: print(e.strerror)\n"
		   "try: os.rename('/cdir', '/tmp/moved'); print('RENAMED')\n"
		   "except OSError as e: print(e.strerror)\"; "
		   "mkdir d1 && echo x > d1/control && mv d1 d2 && mv d2/control control");
	canary_check(&c, &p);
	cr_assert(!h_contains(p.out_text, "RENAMED"), H_SHOW(&p));
}

Test(fs, canary_remount_and_bind_fail)
{
	struct canary c = canary_setup();
	struct h_proc p;

	canary_run(&p, &c,
		   "mount -o remount,rw /canary; echo remount=$?; "
		   "mount -o remount,rw,bind /canary; echo remount_bind=$?; "
		   "mount -o remount,rw /cdir; echo remount_dir=$?; "
		   "echo fake > fake; mount --bind fake /canary; echo bind=$?; "
		   "mkdir -p evil; mount --bind evil /cdir; echo bind_dir=$?; "
		   "umount /canary; echo umount=$?; "
		   "echo x > /canary; echo x > /cdir/canary; echo x > control");
	canary_check(&c, &p);
	cr_assert(h_contains(p.out_text, "remount="), H_SHOW(&p));
	cr_assert(!h_contains(p.out_text, "remount=0\n"), H_SHOW(&p));
	cr_assert(!h_contains(p.out_text, "remount_bind=0\n"), H_SHOW(&p));
	cr_assert(!h_contains(p.out_text, "remount_dir=0\n"), H_SHOW(&p));
	cr_assert(!h_contains(p.out_text, "bind=0\n"), H_SHOW(&p));
	cr_assert(!h_contains(p.out_text, "bind_dir=0\n"), H_SHOW(&p));
	cr_assert(!h_contains(p.out_text, "umount=0\n"), H_SHOW(&p));
}

Test(fs, nested_user_namespace_is_refused)
{
	struct canary c;
	struct h_proc p;

	/* The default seccomp profile refuses unshare(2) and clone(2) with
	 * namespace flags: no nested user namespace, whose capabilities would
	 * reach kernel code an unprivileged process never sees. */
	if (!h_exists("/usr/bin/unshare"))
		cr_skip_test("no /usr/bin/unshare");
	c = canary_setup();
	canary_run(&p, &c, "unshare -Urm true; echo unshare=$?; echo x > control");
	canary_check(&c, &p);
	cr_assert(h_contains(p.out_text, "unshare="), H_SHOW(&p));
	cr_assert(!h_contains(p.out_text, "unshare=0\n"), H_SHOW(&p));
}

Test(fs, canary_remount_in_nested_user_namespace)
{
	struct canary c;
	struct h_proc p;

	/* Without seccomp and Landlock (which refuses any mount change in its
	 * domain), a user namespace of its own gives the workload all
	 * capabilities over a copy of the mount table, where the read-only
	 * flag is locked by the kernel (mount_namespaces(7)): the canary must
	 * still hold. */
	if (!h_exists("/usr/bin/unshare"))
		cr_skip_test("no /usr/bin/unshare");
	c = canary_setup();
	H_PADDOCK(&p, c.w.ws, "run", "--weaken", "no-seccomp", "--weaken", "no-landlock",
		  "--ro-bind", h_fmt("%s:/canary", c.file), "--ro-bind", h_fmt("%s:/cdir", c.dir),
		  "--", "sh", "-c",
		  "unshare -Urm sh -c 'echo nested=ok; "
		  "mount -o remount,rw,bind /canary; echo remount=$?; "
		  "mount -o remount,rw,bind /cdir; echo remount_dir=$?; "
		  "umount -l /canary; echo umount=$?; "
		  "echo x > /canary; echo x > /cdir/canary' ; echo x > control");
	canary_check(&c, &p);
	if (!h_contains(p.out_text, "nested=ok") && getuid() == 0)
		h_skip("no nested user namespace for uid 0 inside: %s", p.err_text);
	cr_assert(h_contains(p.out_text, "nested=ok"), "no nested user namespace\n" H_FMT,
		  H_ARGS(&p));
	cr_assert(h_contains(p.out_text, "remount="), H_SHOW(&p));
	cr_assert(!h_contains(p.out_text, "remount=0\n"), H_SHOW(&p));
	cr_assert(!h_contains(p.out_text, "remount_dir=0\n"), H_SHOW(&p));
	cr_assert(!h_contains(p.out_text, "umount=0\n"), H_SHOW(&p));
}

Test(fs, canary_probe_open_for_writing)
{
	struct canary c = canary_setup();
	struct h_proc p;
	const char *probe = h_fmt("%s/probe", h_helpers_dir());

	cr_assert(h_exists(probe), "%s missing: make build/tests/helpers/probe", probe);
	H_PADDOCK(&p, c.w.ws, "run", "--ro-bind", h_fmt("%s:/canary", c.file), "--ro-bind",
		  h_fmt("%s:/cdir", c.dir), "--ro-bind", h_fmt("%s:/probe", h_helpers_dir()), "--",
		  "/probe/probe", "w:/canary", "w:/cdir/canary", "w:/cdir/new",
		  "w:/usr/paddock-new", "w:/etc/paddock-new", "w:/paddock-new", "w:/probe/new",
		  h_fmt("w:%s", c.control), "w:/tmp/new");
	cr_assert_eq(p.status, 0, H_SHOW(&p));
	cr_assert_str_eq(h_kv(p.out_text, "w:/canary"), "EROFS", H_SHOW(&p));
	cr_assert_str_eq(h_kv(p.out_text, "w:/cdir/canary"), "EROFS", H_SHOW(&p));
	cr_assert_str_eq(h_kv(p.out_text, "w:/cdir/new"), "EROFS", H_SHOW(&p));
	cr_assert_str_eq(h_kv(p.out_text, "w:/usr/paddock-new"), "EROFS", H_SHOW(&p));
	cr_assert_str_eq(h_kv(p.out_text, "w:/etc/paddock-new"), "EROFS", H_SHOW(&p));
	cr_assert_str_eq(h_kv(p.out_text, "w:/paddock-new"), "EROFS", H_SHOW(&p));
	cr_assert_str_eq(h_kv(p.out_text, "w:/probe/new"), "EROFS", H_SHOW(&p));
	cr_assert_str_eq(h_kv(p.out_text, h_fmt("w:%s", c.control)), "OK", H_SHOW(&p));
	cr_assert_str_eq(h_kv(p.out_text, "w:/tmp/new"), "OK", H_SHOW(&p));
	cr_assert_null(h_snap_diff(c.file, &c.snap));
	cr_assert_null(h_snap_diff(c.dir_file, &c.dir_file_snap));
	cr_assert_str_eq(h_list_dir(c.dir), c.dir_list);
	cr_assert(h_exists(c.control), "the probe's control file is not on the host");
	cr_assert(!h_exists(h_fmt("%s/new", h_helpers_dir())));
}

Test(fs, weaken_rw_binds_makes_the_canary_writable)
{
	struct canary c = canary_setup();
	struct h_proc p;

	/* The weakened arm must fail enforcement, or the canary tests above
	 * could not tell a real protection from a broken test. */
	H_PADDOCK(&p, c.w.ws, "run", "--weaken", "rw-binds", "--record", c.w.record, "--ro-bind",
		  h_fmt("%s:/canary", c.file), "--", "sh", "-c",
		  "echo x > /canary; echo x > control");
	cr_assert_eq(p.status, 0, H_SHOW(&p));
	cr_assert_str_eq(h_read_file(c.file, NULL), "x\n", "the canary was not written\n" H_FMT,
			 H_ARGS(&p));
	cr_assert_str_eq(h_read_file(c.control, NULL), "x\n", H_SHOW(&p));
	cr_assert(h_contains(p.err_text, "warning: --weaken rw-binds"), H_SHOW(&p));
	cr_assert_str_eq(h_json(c.w.record, "d['weakenings']"), "[\"rw-binds\"]");
	cr_assert_str_eq(h_json(c.w.record, "[m['mode'] for m in d['mounts'] if m['target'] == "
					    "'/canary']"),
			 "[\"rw\"]");
}

Test(fs, canary_recorded_read_only)
{
	struct canary c = canary_setup();
	struct h_proc p;

	H_PADDOCK(&p, c.w.ws, "run", "--record", c.w.record, "--ro-bind",
		  h_fmt("%s:/canary", c.file), "--", "true");
	cr_assert_eq(p.status, 0, H_SHOW(&p));
	cr_assert_str_eq(h_json(c.w.record, "[[m['source'], m['mode']] for m in d['mounts'] if "
					    "m['target'] == '/canary']"),
			 h_fmt("[[\"%s\", \"ro\"]]", c.file));
}

/* ------------------------------------------------------- protected paths */

/* No .git at start: nothing is made for it (a placeholder .git broke git
 * init and git in a parent repository), so the workload may create a
 * repository; what it plants there is reported after the run (mounts/git.c,
 * git_check_after()), and nothing else is left. */
Test(fs, fresh_git_dir_is_allowed_and_its_hook_reported)
{
	struct h_world w = h_world();
	struct h_proc p;

	H_PADDOCK(&p, w.ws, "run", "--record", w.record, "--", "sh", "-c",
		  "mkdir -p .git/hooks && touch .git/hooks/pre-commit");
	cr_assert_eq(p.status, 0, H_SHOW(&p));
	cr_assert(h_exists(h_join(w.ws, ".git/hooks/pre-commit")));
	cr_assert_str_eq(h_list_dir(w.ws), ".git\n", "workspace:\n%s", h_list_dir(w.ws));
	cr_assert_str_eq(h_json(w.record, "d['placeholders_left']"), "0");
	cr_assert(h_contains(h_json(w.record, "d['tampering']"), "/.git/hooks: pre-commit"),
		  "%s\n" H_FMT, h_json(w.record, "d['tampering']"), H_ARGS(&p));
	cr_assert(h_contains(p.err_text, "tampering: "), H_SHOW(&p));

	/* Other ways to the same place: a rename of a prepared directory, a
	 * symlink named .git; each is reported too. */
	h_rm_rf(h_join(w.ws, ".git"));
	H_PADDOCK(&p, w.ws, "run", "--record", w.record, "--", "sh", "-c",
		  "mkdir -p g/hooks && touch g/hooks/post-checkout && ln -s g .git");
	cr_assert_eq(p.status, 0, H_SHOW(&p));
	cr_assert(h_contains(h_json(w.record, "d['tampering']"), "/g/hooks: post-checkout"),
		  "%s\n" H_FMT, h_json(w.record, "d['tampering']"), H_ARGS(&p));
}

Test(fs, protected_existing_file_keeps_its_bytes)
{
	struct h_world w = h_world();
	struct h_proc p;
	char *bashrc = h_join(w.ws, ".bashrc");
	char *notes = h_join(w.ws, "notes");
	struct h_snap snap;

	h_write_file(bashrc, "# the user's own\nexport A=1\n", 0644);
	h_write_file(notes, "notes\n", 0644);
	snap = h_snap_take(bashrc);
	/* Each attempt on .bashrc, then the same on an ordinary file. */
	H_PADDOCK(&p, w.ws, "run", "--", "sh", "-c",
		  "for f in .bashrc notes; do "
		  "echo x >> $f; echo $f:append=$?; "
		  "echo x > $f; echo $f:write=$?; "
		  "chmod 0777 $f; echo $f:chmod=$?; "
		  "echo y > new; mv -f new $f; echo $f:mv=$?; "
		  "python3 -c \"import os,sys\nopen('new2','w').write('z')\n"
		  "try: os.rename('new2', sys.argv[1]); print('ok')\n"
		  "except OSError as e: print(e.strerror)\" $f; "
		  "ln -sf /etc/passwd $f; echo $f:ln=$?; "
		  "rm -f $f; echo $f:rm=$?; "
		  "done");
	cr_assert_eq(p.status, 0, H_SHOW(&p));
	cr_assert_null(h_snap_diff(bashrc, &snap), H_SHOW(&p));
	for (size_t i = 0; i < 6; i++) {
		static const char *const ops[] = {"append", "write", "chmod", "mv", "ln", "rm"};

		cr_assert(!h_contains(p.out_text, h_fmt(".bashrc:%s=0\n", ops[i])),
			  ".bashrc %s worked\n" H_FMT, ops[i], H_ARGS(&p));
		cr_assert(h_contains(p.out_text, h_fmt("notes:%s=0\n", ops[i])),
			  "the control %s on an ordinary file failed\n" H_FMT, ops[i], H_ARGS(&p));
	}
	cr_assert(!h_exists(notes), "the control rm did not happen");
	cr_assert_str_eq(h_read_file(bashrc, NULL), "# the user's own\nexport A=1\n");
}

Test(fs, protect_option_for_a_missing_path)
{
	struct h_world w = h_world();
	struct h_proc p;

	H_PADDOCK(&p, w.ws, "run", "--protect", h_join(w.ws, "secret/key"), "--", "sh", "-c",
		  "mkdir -p secret; echo mkdir=$?; echo x > secret/key; echo write=$?; "
		  "echo x > secret; echo file=$?; touch secret/other; echo other=$?; "
		  "echo x > control");
	cr_assert_eq(p.status, 0, H_SHOW(&p));
	/* "secret" is an empty read-only directory inside (the placeholder,
	 * which git never shows): mkdir -p succeeds, nothing goes below. */
	cr_assert(!h_contains(p.out_text, "other=0\n"), H_SHOW(&p));
	cr_assert(!h_contains(p.out_text, "write=0\n"), H_SHOW(&p));
	cr_assert(!h_contains(p.out_text, "file=0\n"), H_SHOW(&p));
	cr_assert(!h_exists(h_join(w.ws, "secret")), "workspace:\n%s", h_list_dir(w.ws));
	cr_assert_str_eq(h_read_file(h_join(w.ws, "control"), NULL), "x\n", H_SHOW(&p));
}

Test(fs, protect_option_for_an_existing_file)
{
	struct h_world w = h_world();
	struct h_proc p;
	char *data = h_join(w.ws, "data.txt");
	struct h_snap snap;

	h_write_file(data, "precious\n", 0644);
	snap = h_snap_take(data);
	H_PADDOCK(&p, w.ws, "run", "--protect", data, "--", "sh", "-c",
		  "cat data.txt; echo x > data.txt; echo write=$?; rm -f data.txt; echo rm=$?");
	cr_assert_eq(p.status, 0, H_SHOW(&p));
	cr_assert(h_contains(p.out_text, "precious\n"), "a protected file stays readable\n" H_FMT,
		  H_ARGS(&p));
	cr_assert(!h_contains(p.out_text, "write=0\n"), H_SHOW(&p));
	cr_assert(!h_contains(p.out_text, "rm=0\n"), H_SHOW(&p));
	cr_assert_null(h_snap_diff(data, &snap), H_SHOW(&p));
}

Test(fs, existing_git_dir_hooks_and_config_protected)
{
	struct h_world w = h_world();
	struct h_proc p;
	char *git = h_mkdir(w.ws, ".git", 0755);
	char *config = h_join(git, "config");
	struct h_snap snap;

	h_mkdir(git, "hooks", 0755);
	h_write_file(config, "[core]\n\tbare = false\n", 0644);
	h_write_file(h_join(git, "HEAD"), "ref: refs/heads/main\n", 0644);
	snap = h_snap_take(config);
	H_PADDOCK(&p, w.ws, "run", "--", "sh", "-c",
		  "touch .git/hooks/pre-commit; echo hook=$?; "
		  "printf '[core]\\n\\thooksPath = /tmp\\n' >> .git/config; echo config=$?; "
		  "echo 'ref: refs/heads/other' > .git/HEAD; echo head=$?");
	cr_assert_eq(p.status, 0, H_SHOW(&p));
	cr_assert(!h_contains(p.out_text, "hook=0\n"), H_SHOW(&p));
	cr_assert(!h_contains(p.out_text, "config=0\n"), H_SHOW(&p));
	/* The rest of .git is the workspace's: git itself must work. */
	cr_assert(h_contains(p.out_text, "head=0\n"), H_SHOW(&p));
	cr_assert_str_eq(h_list_dir(h_join(git, "hooks")), "");
	cr_assert_null(h_snap_diff(config, &snap));
	cr_assert_str_eq(h_read_file(h_join(git, "HEAD"), NULL), "ref: refs/heads/other\n");
}

/* Regression: a protected path below an existing directory of the workspace
 * could be bypassed by renaming that directory away (fixed by pinning the
 * ancestors, mounts/plan.c add_pins()). With an existing .git/ (the
 * agent policy protects .git/hooks and .git/config), the workload runs
 *   mv .git .git-old && mkdir -p .git/hooks &&
 *   echo evil > .git/hooks/pre-commit && echo '[core] hooksPath=/x' > .git/config
 * and all of it succeeds: rename(2) only refuses a mount point itself, not
 * a directory that has mount points below it. After the run the host has
 * the attacker's .git/hooks/pre-commit and .git/config (the real ones are in
 * .git-old). Reproduction: mkdir -p ws/.git/hooks; echo '[core]' >
 * ws/.git/config; cd ws; paddock run -- sh -c 'mv .git .git-old &&
 * mkdir -p .git/hooks && touch .git/hooks/pre-commit'; echo $?  -> 0, and
 * ws/.git/hooks/pre-commit exists. The same holds for --protect DIR/FILE
 * with an existing DIR. (mounts/protect.c protects the leaf only; every
 * existing ancestor below the bind must be pinned too, e.g. by a read-only
 * or at least a mount-point bind of the first existing component.) */
Test(fs, protected_git_survives_renaming_git_away)
{
	struct h_world w = h_world();
	struct h_proc p;
	char *git = h_mkdir(w.ws, ".git", 0755);
	char *config = h_join(git, "config");
	struct h_snap snap;

	h_mkdir(git, "hooks", 0755);
	h_write_file(config, "[core]\n\tbare = false\n", 0644);
	snap = h_snap_take(config);
	H_PADDOCK(&p, w.ws, "run", "--", "sh", "-c",
		  "mv .git .git-old; echo mv=$?; mkdir -p .git/hooks; "
		  "echo '#!/bin/sh' > .git/hooks/pre-commit; echo hook=$?; "
		  "printf '[core]\\n\\thooksPath = /tmp/evil\\n' > .git/config; echo config=$?");
	cr_assert_eq(p.status, 0, H_SHOW(&p));
	cr_assert(!h_exists(h_join(git, "hooks/pre-commit")),
		  "a hook appeared in the host's .git/hooks\n" H_FMT, H_ARGS(&p));
	cr_assert_null(h_snap_diff(config, &snap), "the host's .git/config changed\n" H_FMT,
		       H_ARGS(&p));
	cr_assert(!h_contains(p.out_text, "mv=0\n"), H_SHOW(&p));
}

/* Regression: the same bypass as above, for a path protected on the command line
 * below an existing directory. Reproduction: mkdir conf; echo original >
 * conf/key; paddock run --protect $PWD/conf/key -- sh -c 'mv conf conf-old;
 * mkdir conf; echo evil > conf/key'; cat conf/key   -> evil */
Test(fs, protect_option_survives_renaming_the_parent_away)
{
	struct h_world w = h_world();
	struct h_proc p;
	char *dir = h_mkdir(w.ws, "conf", 0755);
	char *key = h_join(dir, "key");

	h_write_file(key, "original\n", 0644);
	H_PADDOCK(&p, w.ws, "run", "--protect", key, "--", "sh", "-c",
		  "mv conf conf-old; echo mv=$?; mkdir -p conf; echo evil > conf/key; echo w=$?");
	cr_assert_eq(p.status, 0, H_SHOW(&p));
	cr_assert_str_eq(h_read_file(key, NULL), "original\n",
			 "the protected file was replaced\n" H_FMT, H_ARGS(&p));
}

Test(fs, protected_path_through_a_symlink_is_refused)
{
	struct h_world w = h_world();
	struct h_proc p;
	char *dir = h_mkdir(w.base, "elsewhere", 0755);

	/* Protecting "through" a symlink on the way could protect (or create)
	 * something outside the workspace: paddock refuses to start, and
	 * removes the placeholders it had already made for the paths before.
	 * (A protected name that is itself a symlink is pinned as the link:
	 * test_protect.c, symlinked_protected_path_pins_the_link.) */
	cr_assert_eq(symlink(dir, h_join(w.ws, ".claude")), 0);
	H_PADDOCK(&p, w.ws, "run", "--protect", h_join(w.ws, ".claude/settings.json"), "--", "sh",
		  "-c", "touch started");
	cr_assert_eq(p.status, 125, H_SHOW(&p));
	cr_assert_eq(h_count_lines(p.err_text), 1, H_SHOW(&p));
	cr_assert(h_contains(p.err_text, "symlink"), H_SHOW(&p));
	cr_assert_str_eq(h_list_dir(w.ws), ".claude\n", "workspace:\n%s", h_list_dir(w.ws));
	cr_assert_str_eq(h_list_dir(dir), "", "made outside: %s", h_list_dir(dir));
}

/* --------------------------------------------------- concurrent sandboxes */

static bool wait_for_file(const char *path, int ms)
{
	for (int waited = 0; waited < ms; waited += 20) {
		if (h_exists(path))
			return true;
		h_sleep_ms(20);
	}
	return h_exists(path);
}

Test(fs, two_sandboxes_different_workspaces)
{
	struct h_world a = h_world(), b = h_world();
	struct h_proc pa, pb;
	const char *script = "test -e \"$1\" && echo SEES-OTHER; ls \"$1\" 2>/dev/null; "
			     "echo \"$2\" > mine; sleep 0.5; ls";

	H_PADDOCK_START(&pa, a.ws, "run", "--", "sh", "-c", script, "sh", b.ws, "from-a");
	H_PADDOCK_START(&pb, b.ws, "run", "--", "sh", "-c", script, "sh", a.ws, "from-b");
	h_wait(&pa, H_TIMEOUT_MS);
	h_wait(&pb, H_TIMEOUT_MS);
	cr_assert_eq(pa.status, 0, H_SHOW(&pa));
	cr_assert_eq(pb.status, 0, H_SHOW(&pb));
	cr_assert(!h_contains(pa.out_text, "SEES-OTHER"), H_SHOW(&pa));
	cr_assert(!h_contains(pb.out_text, "SEES-OTHER"), H_SHOW(&pb));
	cr_assert_str_eq(pa.out_text, "mine\n", H_SHOW(&pa));
	cr_assert_str_eq(pb.out_text, "mine\n", H_SHOW(&pb));
	cr_assert_str_eq(h_read_file(h_join(a.ws, "mine"), NULL), "from-a\n");
	cr_assert_str_eq(h_read_file(h_join(b.ws, "mine"), NULL), "from-b\n");
	cr_assert_str_eq(h_list_dir(a.ws), "mine\n");
	cr_assert_str_eq(h_list_dir(b.ws), "mine\n");
}

Test(fs, two_sandboxes_same_workspace_keep_git_protected)
{
	struct h_world w = h_world();
	struct h_proc pa, pb;

	h_mkdir(w.ws, ".git", 0755);
	h_write_file(h_join(w.ws, ".git/HEAD"), "ref: refs/heads/main\n", 0644);

	/* A is short; B waits until the test has seen A end (a-ended, made
	 * from the host), then tries to create a hook. */
	H_PADDOCK_START(&pa, w.ws, "run", "--", "sh", "-c", "sleep 0.3; echo a-done");
	H_PADDOCK_START(&pb, w.ws, "run", "--", "sh", "-c",
			"i=0; while [ ! -e a-ended ] && [ $i -lt 200 ]; do sleep 0.05; i=$((i+1)); "
			"done; test -e a-ended && echo saw-a-ended; sleep 0.3; "
			"if mkdir -p .git/hooks && touch .git/hooks/pre-commit; "
			"then echo PROTECTION-LOST; else echo protected; fi");
	h_wait(&pa, H_TIMEOUT_MS);
	cr_assert_eq(pa.status, 0, H_SHOW(&pa));
	h_write_file(h_join(w.ws, "a-ended"), "", 0644);
	h_wait(&pb, H_TIMEOUT_MS);
	cr_assert_eq(pb.status, 0, H_SHOW(&pb));
	cr_assert(h_contains(pb.out_text, "saw-a-ended\n"), H_SHOW(&pb));
	cr_assert(h_contains(pb.out_text, "protected\n"), H_SHOW(&pb));
	cr_assert(!h_exists(h_join(w.ws, ".git/hooks/pre-commit")));
}

/* The same, in step: B starts only once A is running with its
 * placeholders in .git, among them commondir (which holds "."). B took
 * .git for a linked worktree's directory (mounts/git_walk.c, add_gitdir)
 * and protected only config.worktree and commondir; once A ended and
 * removed the placeholders nobody else held, B could create .git/hooks/
 * and .git/config. The test above saw it only under load. */
Test(fs, second_sandbox_keeps_git_protected_after_the_first_ends)
{
	struct h_world w = h_world();
	struct h_proc pa, pb;

	h_mkdir(w.ws, ".git", 0755);
	h_write_file(h_join(w.ws, ".git/HEAD"), "ref: refs/heads/main\n", 0644);
	H_PADDOCK_START(&pa, w.ws, "run", "--", "sh", "-c",
			"echo > a-ready; i=0; while [ ! -e b-ready ] && [ $i -lt 200 ]; do "
			"sleep 0.05; i=$((i+1)); done");
	cr_assert(wait_for_file(h_join(w.ws, "a-ready"), 8000), "A never started");
	H_PADDOCK_START(&pb, w.ws, "run", "--", "sh", "-c",
			"echo > b-ready; i=0; while [ ! -e a-ended ] && [ $i -lt 200 ]; do "
			"sleep 0.05; i=$((i+1)); done; "
			"mkdir -p .git/hooks && touch .git/hooks/pre-commit && echo HOOK-WRITTEN; "
			"echo '[core]' >> .git/config && echo CONFIG-WRITTEN; echo b-done");
	h_wait(&pa, H_TIMEOUT_MS);
	cr_assert_eq(pa.status, 0, H_SHOW(&pa));
	cr_assert(!h_contains(pa.err_text, "tampering"), H_SHOW(&pa));
	h_write_file(h_join(w.ws, "a-ended"), "", 0644);
	h_wait(&pb, H_TIMEOUT_MS);
	cr_assert_eq(pb.status, 0, H_SHOW(&pb));
	cr_assert(h_contains(pb.out_text, "b-done\n"), H_SHOW(&pb));
	cr_assert(!h_contains(pb.out_text, "WRITTEN"), H_SHOW(&pb));
	cr_assert(!h_exists(h_join(w.ws, ".git/hooks")), H_SHOW(&pb));
	cr_assert(!h_exists(h_join(w.ws, ".git/config")), H_SHOW(&pb));
	cr_assert_str_eq(h_list_dir(h_join(w.ws, ".git")), "HEAD\n");
	cr_assert_str_eq(h_list_dir(w.ws), ".git\na-ended\na-ready\nb-ready\n");
}

/* Regression (fixed by the user.paddock.placeholder mark, mounts/protect.c):
 * placeholders were left in the workspace when two sandboxes shared it
 * and the one that created them ends first. A creates the 13 placeholders
 * (.git, .bashrc, ...); B, started while A runs, finds them existing and
 * does not count them as its own; when A ends, B's shared flock keeps A
 * from removing them (A records "placeholders_left": 13), and when B ends
 * it does not remove them because it did not create them. The workspace
 * keeps 13 empty read-only files, among them a regular file .git that
 * breaks `git init`. Reproduction, in an empty directory:
 *   paddock run -- sh -c 'sleep 1' & sleep 0.4;
 *   paddock run -- sh -c 'sleep 2'; wait; ls -A   # .bash_profile ... .zshrc
 * (mounts/protect.c: remove_placeholder only runs for created[k]; the
 * last holder should remove what no sandbox uses any more.) */
Test(fs, two_sandboxes_same_workspace_leave_no_placeholders)
{
	struct h_world w = h_world();
	struct h_proc pa, pb;

	H_PADDOCK_START(&pa, w.ws, "run", "--", "sh", "-c",
			"echo > a-ready; i=0; while [ ! -e b-ready ] && [ $i -lt 200 ]; do "
			"sleep 0.05; i=$((i+1)); done");
	cr_assert(wait_for_file(h_join(w.ws, "a-ready"), 8000), "A never started");
	H_PADDOCK_START(&pb, w.ws, "run", "--", "sh", "-c",
			"echo > b-ready; i=0; while [ ! -e a-ended ] && [ $i -lt 200 ]; do "
			"sleep 0.05; i=$((i+1)); done");
	h_wait(&pa, H_TIMEOUT_MS);
	cr_assert_eq(pa.status, 0, H_SHOW(&pa));
	h_write_file(h_join(w.ws, "a-ended"), "", 0644);
	h_wait(&pb, H_TIMEOUT_MS);
	cr_assert_eq(pb.status, 0, H_SHOW(&pb));
	h_assert_no_placeholders(w.ws);
	cr_assert_str_eq(h_list_dir(w.ws), "a-ended\na-ready\nb-ready\n");
}
