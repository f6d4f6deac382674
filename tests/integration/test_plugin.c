/* Integration: plugins under a reviewed manifest (docs/security.md,
 * "Plugins"; HB-22). A mock plugin (a shell script) writes the tools it
 * was served into notes/ and tries data/; an update that widens (data/
 * rw, a changed tool definition, a new tool) is held until approved, with
 * a twin under --weaken signature-only that shows the test sees the
 * widening when it is granted; an update that widens nothing keeps its
 * grants; the artifact must match the manifest's digest. */
#include "harness.h"

#include <sys/file.h>
#include <sys/pidfd.h>

TestSuite(plugin, .init = h_init, .fini = h_fini, .timeout = 60);

#define SCRIPT                                                                          \
	"#!/bin/sh\nws=\"$PADDOCK_WORKSPACE\"\necho \"tools=$PADDOCK_PLUGIN_TOOLS\" > " \
	"\"$ws/notes/out\"\n{ echo x > \"$ws/data/out\"; } 2>/dev/null\nexit 0\n"
#define SIGNER "\"signer\": {\"issuer\": \"https://issuer.test\", \"identity\": \"d@example.test\"}"

struct pw {
	struct h_world w;
	char *cfg, *notes, *data, *key;
};

#define SSH_KEYGEN "/usr/bin/ssh-keygen"

/* A new Ed25519 key at path (and path.pub). */
static char *new_key(const char *path)
{
	struct h_proc r;

	H_CMD(&r, NULL, SSH_KEYGEN, "-q", "-t", "ed25519", "-N", "", "-C", "test", "-f", path);
	cr_assert_eq(r.status, 0, H_SHOW(&r));
	return (char *)path;
}

/* The allowed signers of cfg (an XDG_CONFIG_HOME): identity with key. */
static void allow_signer(const char *cfg, const char *identity, const char *key, bool append)
{
	char *dir = h_join(cfg, "paddock"), *file = h_join(dir, "allowed_signers");
	char *pub = h_read_file(h_fmt("%s.pub", key), NULL);
	char *old = append ? h_read_file(file, NULL) : NULL;

	mkdir(dir, 0700);
	h_write_file(file,
		     h_fmt("%s%s namespaces=\"paddock-plugin\" %s", old ? old : "", identity, pub),
		     0600);
}

/* The manifest signed with key (MANIFEST.sig, replaced). */
static void sign(const char *man, const char *key, const char *ns)
{
	struct h_proc r;

	unlink(h_fmt("%s.sig", man));
	H_CMD(&r, NULL, SSH_KEYGEN, "-q", "-Y", "sign", "-n", ns, "-f", key, man);
	cr_assert_eq(r.status, 0, H_SHOW(&r));
}

static struct pw pw(void)
{
	struct pw p;

	p.w = h_world();
	p.cfg = h_mkdir(p.w.base, "cfg", 0700);
	cr_assert_eq(setenv("XDG_CONFIG_HOME", p.cfg, 1), 0);
	p.notes = h_mkdir(p.w.ws, "notes", 0755);
	p.data = h_mkdir(p.w.ws, "data", 0755);
	/* The signer of every version, trusted by the owner. */
	p.key = new_key(h_join(p.w.base, "key"));
	allow_signer(p.cfg, "d@example.test", p.key, false);
	return p;
}

static const char *sha_of(const char *path)
{
	struct h_proc p;

	H_CMD(&p, NULL, "/usr/bin/sha256sum", path);
	cr_assert_eq(p.status, 0);
	return h_fmt("%.64s", p.out_text);
}

/* A version in base/NAME: its script (with a comment of its own, so each
 * is another artifact) and manifest. */
static const char *version(const struct pw *p, const char *name, const char *files,
			   const char *tools)
{
	char *dir = h_mkdir(p->w.base, name, 0755);
	char *art = h_join(dir, "plugin.sh"), *man = h_join(dir, "manifest.json");

	h_write_file(art, h_fmt("%s# %s\n", SCRIPT, name), 0755);
	h_write_file(man,
		     h_fmt("{\"version\": 1, \"name\": \"notes\", \"artifact\": {\"path\": "
			   "\"plugin.sh\", \"sha256\": \"%s\"}, " SIGNER
			   ", \"files\": [%s], \"tools\": [%s]}",
			   sha_of(art), files, tools),
		     0644);
	sign(man, p->key, "paddock-plugin");
	return man;
}

#define NOTES_RW "{\"path\": \"notes\", \"mode\": \"rw\"}"
#define DATA_RW	 "{\"path\": \"data\", \"mode\": \"rw\"}"
#define LIST	 "{\"name\": \"list\", \"description\": \"List.\"}"
#define SEARCH	 "{\"name\": \"search\", \"description\": \"Search.\"}"
#define SEARCH2	 "{\"name\": \"search\", \"description\": \"Search, and send data/ along.\"}"

static void approve(const struct pw *p, const char *man)
{
	struct h_proc r;

	H_PADDOCK(&r, p->w.ws, "plugin", "approve", man);
	cr_assert_eq(r.status, 0, H_SHOW(&r));
}

static struct h_proc run(const struct pw *p, const char *man, const char *knob)
{
	struct h_proc r;

	unlink(h_join(p->notes, "out"));
	unlink(h_join(p->data, "out"));
	if (knob)
		H_PADDOCK(&r, p->w.ws, "plugin", "run", "-w", p->w.ws, "-W", knob, man);
	else
		H_PADDOCK(&r, p->w.ws, "plugin", "run", "-w", p->w.ws, man);
	return r;
}

static const char *tools(const struct pw *p)
{
	char *t = h_read_file(h_join(p->notes, "out"), NULL);

	return t ? t : "(none)";
}

Test(plugin, an_unapproved_plugin_does_not_run)
{
	struct pw p = pw();
	const char *v1 = version(&p, "v1", NOTES_RW, LIST);
	struct h_proc r = run(&p, v1, NULL);

	cr_assert_eq(r.status, 125, H_SHOW(&r));
	cr_assert(h_contains(r.err_text, "not approved"), H_SHOW(&r));
	cr_assert(!h_exists(h_join(p.notes, "out")));
	approve(&p, v1);
	r = run(&p, v1, NULL);
	cr_assert_eq(r.status, 0, H_SHOW(&r));
	cr_assert_str_eq(tools(&p), "tools=list\n");
	cr_assert(!h_exists(h_join(p.data, "out")), "data/ is outside its scope");
}

/* The widening update is held: the approved scope, the unchanged tool.
 * Twin: signature-only grants it, and the test sees data/ and the tools. */
Test(plugin, a_widening_update_is_held)
{
	struct pw p = pw();
	const char *v1 = version(&p, "v1", NOTES_RW, LIST "," SEARCH);
	const char *v2 = version(&p, "v2", NOTES_RW "," DATA_RW,
				 LIST "," SEARCH2 ",{\"name\": \"sum\", \"description\": \"S.\"}");
	struct h_proc r;

	approve(&p, v1);
	H_PADDOCK(&r, p.w.ws, "plugin", "review", v2);
	cr_assert_eq(r.status, 0, H_SHOW(&r));
	cr_assert(h_contains(r.out_text, "+ new file scope data (rw)"), H_SHOW(&r));
	cr_assert(h_contains(r.out_text, "+ tool search changed its definition"), H_SHOW(&r));
	cr_assert(h_contains(r.out_text, "+ new tool sum"), H_SHOW(&r));
	cr_assert(h_contains(r.out_text, "~ artifact"), H_SHOW(&r));
	cr_assert(h_contains(r.out_text, "held:"), H_SHOW(&r));
	r = run(&p, v2, NULL);
	cr_assert_eq(r.status, 0, H_SHOW(&r));
	cr_assert(h_contains(r.err_text, "update held"), H_SHOW(&r));
	cr_assert_str_eq(tools(&p), "tools=list\n", H_SHOW(&r));
	cr_assert(!h_exists(h_join(p.data, "out")), "the held update reached data/");
	r = run(&p, v2, "signature-only");
	cr_assert_eq(r.status, 0, H_SHOW(&r));
	cr_assert_str_eq(tools(&p), "tools=list,search,sum\n", H_SHOW(&r));
	cr_assert(h_exists(h_join(p.data, "out")), "the twin does not see the widening");
	/* Approved, it gets what it asks for. */
	approve(&p, v2);
	r = run(&p, v2, NULL);
	cr_assert_eq(r.status, 0, H_SHOW(&r));
	cr_assert(h_exists(h_join(p.data, "out")), H_SHOW(&r));
}

Test(plugin, an_update_that_widens_nothing_keeps_its_grants)
{
	struct pw p = pw();
	const char *v1 = version(&p, "v1", NOTES_RW "," DATA_RW, LIST "," SEARCH);
	const char *v3 = version(&p, "v3", NOTES_RW, LIST "," SEARCH);
	struct h_proc r;

	approve(&p, v1);
	H_PADDOCK(&r, p.w.ws, "plugin", "review", v3);
	cr_assert(h_contains(r.out_text, "- file scope data removed"), H_SHOW(&r));
	cr_assert(h_contains(r.out_text, "keeps its grants"), H_SHOW(&r));
	r = run(&p, v3, NULL);
	cr_assert_eq(r.status, 0, H_SHOW(&r));
	cr_assert(!h_contains(r.err_text, "held"), H_SHOW(&r));
	cr_assert_str_eq(tools(&p), "tools=list,search\n");
	cr_assert(!h_exists(h_join(p.data, "out")), "narrowed: data/ is gone");
}

/* The artifact is the manifest's: a changed script is refused (twin: the
 * script as approved runs). */
Test(plugin, an_artifact_that_does_not_match_is_refused)
{
	struct pw p = pw();
	const char *v1 = version(&p, "v1", NOTES_RW, LIST);
	struct h_proc r;

	approve(&p, v1);
	r = run(&p, v1, NULL);
	cr_assert_eq(r.status, 0, H_SHOW(&r));
	h_write_file(h_join(h_join(p.w.base, "v1"), "plugin.sh"),
		     "#!/bin/sh\necho x > \"$PADDOCK_WORKSPACE/notes/out\"\n", 0755);
	r = run(&p, v1, NULL);
	cr_assert_eq(r.status, 125, H_SHOW(&r));
	cr_assert(h_contains(r.err_text, "not the manifest's"), H_SHOW(&r));
	cr_assert(!h_exists(h_join(p.notes, "out")));
}

Test(plugin, bad_manifests_are_one_line)
{
	struct pw p = pw();
	char *man = h_join(p.w.base, "bad.json");
	struct h_proc r;

	h_write_file(man, "{\"version\": 1, \"name\": \"n\", \"files\": []}", 0644);
	H_PADDOCK(&r, p.w.ws, "plugin", "review", man);
	cr_assert_eq(r.status, 125, H_SHOW(&r));
	cr_assert_eq(h_count_lines(r.err_text), 1, H_SHOW(&r));
	cr_assert(h_contains(r.err_text, "artifact: missing"), H_SHOW(&r));
}

/* The network scope: an endpoint the update adds is not given while it is
 * held (no mediated network at all), and is with signature-only (twin).
 * Nothing is sent: the record says which network the sandbox had. */
Test(plugin, an_added_endpoint_is_held)
{
	struct pw p = pw();
	const char *v1 = version(&p, "v1", NOTES_RW, LIST);
	const char *v2 = h_fmt("%s", version(&p, "v2", NOTES_RW, LIST));
	char *rec = h_join(p.w.base, "rec.json");
	char *text = h_read_file(v2, NULL);
	struct h_proc r;

	/* v2: v1 plus one endpoint. */
	text[strlen(text) - 1] = '\0';
	h_write_file(v2, h_fmt("%s, \"network\": [\"api.example.test:443\"]}", text), 0644);
	sign(v2, p.key, "paddock-plugin");
	approve(&p, v1);
	H_PADDOCK(&r, p.w.ws, "plugin", "review", v2);
	cr_assert(h_contains(r.out_text, "+ new endpoint api.example.test:443"), H_SHOW(&r));
	H_PADDOCK(&r, p.w.ws, "plugin", "run", "-w", p.w.ws, "-r", rec, v2);
	cr_assert_eq(r.status, 0, H_SHOW(&r));
	cr_assert_str_eq(h_json(rec, "d['network']['mode']"), "\"none\"");
	H_PADDOCK(&r, p.w.ws, "plugin", "run", "-w", p.w.ws, "-r", rec, "-W", "signature-only", v2);
	cr_assert_eq(r.status, 0, H_SHOW(&r));
	cr_assert_str_eq(h_json(rec, "d['network']['mode']"), "\"mediated\"", H_SHOW(&r));
}

/* A plugin whose writable scope shows its own inventory could approve its
 * next update, one over the allowed signers trust its own key: refused
 * (twin: read-only, it runs). */
Test(plugin, a_scope_over_its_inventory_is_refused)
{
	struct pw p = pw();
	char *cfg = h_mkdir(p.w.ws, "cfg", 0700);
	const char *rw, *ro;
	struct h_proc r;

	cr_assert_eq(setenv("XDG_CONFIG_HOME", cfg, 1), 0);
	allow_signer(cfg, "d@example.test", p.key, false);
	rw = version(&p, "rw", NOTES_RW ", {\"path\": \"cfg\", \"mode\": \"rw\"}", LIST);
	ro = version(&p, "ro", NOTES_RW ", {\"path\": \"cfg\", \"mode\": \"ro\"}", LIST);
	approve(&p, rw);
	r = run(&p, rw, NULL);
	cr_assert_eq(r.status, 125, H_SHOW(&r));
	cr_assert(h_contains(r.err_text, "would show its own inventory"), H_SHOW(&r));
	approve(&p, ro);
	r = run(&p, ro, NULL);
	cr_assert_eq(r.status, 0, H_SHOW(&r));
	/* The allowed signers alone, writable: it could trust its own key. */
	rw = version(&p, "sig",
		     NOTES_RW ", {\"path\": \"cfg/paddock/allowed_signers\", \"mode\": \"rw\"}",
		     LIST);
	approve(&p, rw);
	r = run(&p, rw, NULL);
	cr_assert_eq(r.status, 125, H_SHOW(&r));
	cr_assert(h_contains(r.err_text, "would show its own allowed signers"), H_SHOW(&r));
}

/* The private copies left in dir (paddock-plugin-*). */
static int copies_in(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	int n = 0;

	cr_assert_not_null(d, "%s: %s", dir, strerror(errno));
	while ((e = readdir(d)))
		n += strncmp(e->d_name, "paddock-plugin-", 15) == 0;
	closedir(d);
	return n;
}

/* Processes that run for this test's workspace (the plugin's
 * PADDOCK_WORKSPACE, in their environment): a plugin still running. */
static int running_for(const char *ws)
{
	const char *want = h_fmt("PADDOCK_WORKSPACE=%s", ws);
	DIR *d = opendir("/proc");
	struct dirent *e;
	int n = 0;

	cr_assert_not_null(d);
	while ((e = readdir(d))) {
		char buf[16384];
		ssize_t k;
		int fd;

		if (e->d_name[0] < '0' || e->d_name[0] > '9')
			continue;
		fd = open(h_fmt("/proc/%s/environ", e->d_name), O_RDONLY | O_CLOEXEC);
		if (fd < 0)
			continue;
		k = read(fd, buf, sizeof(buf) - 1);
		close(fd);
		for (ssize_t i = 0; k > 0 && i < k; i += (ssize_t)strlen(buf + i) + 1) {
			buf[k] = '\0';
			if (strcmp(buf + i, want) == 0) {
				n++;
				break;
			}
		}
	}
	closedir(d);
	return n;
}

/* paddock SIGKILLed at 50 random moments of a plugin run (anywhere in the
 * time one run takes here) cannot remove its private copy; the next plugin
 * run proves each left-behind copy is nobody's (its maker's pid gone, its
 * lock free) and sweeps it (each killed run that got that far swept its
 * predecessors'): after a last run nothing is left. The twin is the count
 * after each kill: some kills did leave a copy (the test sees a leak when
 * there is one). */
Test(plugin, a_sigkilled_paddock_leaves_no_copy_after_the_next_run, .timeout = 240)
{
	struct pw p = pw();
	char *rt = h_mkdir(p.w.base, "rt", 0700);
	const char *man;
	struct h_proc r;
	unsigned seed = (unsigned)getpid();
	useconds_t span;
	int left, leaks = 0;

	cr_assert_eq(setenv("XDG_RUNTIME_DIR", rt, 1), 0);
	man = version(&p, "v1", NOTES_RW, LIST);
	approve(&p, man);
	/* How long a run takes here: the kills fall anywhere inside it. */
	r = run(&p, man, NULL);
	cr_assert_eq(r.status, 0, H_SHOW(&r));
	span = (useconds_t)(r.secs * 1e6) + 1000;
	for (int i = 0; i < 50; i++) {
		unlink(h_join(p.notes, "out"));
		H_PADDOCK_START(&r, p.w.ws, "plugin", "run", "-w", p.w.ws, man);
		usleep((useconds_t)rand_r(&seed) % span);
		cr_assert_eq(pidfd_send_signal(r.pidfd, SIGKILL, NULL, 0) == 0 || errno == ESRCH,
			     true, "kill: %s", strerror(errno));
		h_wait(&r, H_TIMEOUT_MS);
		leaks += copies_in(rt) > 0;
	}
	left = copies_in(rt);
	cr_log_info("seed %u, kills within %u us: a copy left after %d of 50 kills, %d now",
		    (unsigned)getpid(), (unsigned)span, leaks, left);
	cr_assert_gt(leaks, 0, "no kill landed while a copy existed: the test would see nothing");
	/* The sandboxes die with their paddock (paddock-init's parent-death
	 * signal): nothing runs from the copies. */
	for (int i = 0; i < 100 && running_for(p.w.ws); i++)
		usleep(20000);
	cr_assert_eq(running_for(p.w.ws), 0, "a plugin still runs after its paddock was killed");
	r = run(&p, man, NULL);
	cr_assert_eq(r.status, 0, H_SHOW(&r));
	cr_assert_eq(copies_in(rt), 0, "copies left after the sweeping run");
}

/* The sweep removes only what it can prove nobody's: a copy whose maker
 * lives (pid 1), one whose lock is held (by this test), one holding
 * anything but the artifact, all stay; a dead maker's unlocked copy
 * goes. */
Test(plugin, the_sweep_takes_only_copies_nobody_holds)
{
	struct pw p = pw();
	char *rt = h_mkdir(p.w.base, "rt", 0700);
	/* 4194304 is above the kernel's pid_max limit: no process has it. */
	char *dead = h_mkdir(rt, "paddock-plugin-4194304.aaaaaa", 0711);
	char *alive = h_mkdir(rt, "paddock-plugin-1.bbbbbb", 0711);
	char *held = h_mkdir(rt, "paddock-plugin-4194304.cccccc", 0711);
	char *other = h_mkdir(rt, "paddock-plugin-4194304.dddddd", 0711);
	const char *man;
	struct h_proc r;
	int fd;

	cr_assert_eq(setenv("XDG_RUNTIME_DIR", rt, 1), 0);
	h_write_file(h_join(dead, "artifact"), "x", 0555);
	h_write_file(h_join(alive, "artifact"), "x", 0555);
	h_write_file(h_join(held, "artifact"), "x", 0555);
	h_write_file(h_join(other, "notes.txt"), "x", 0644);
	fd = open(held, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	cr_assert_geq(fd, 0);
	cr_assert_eq(flock(fd, LOCK_EX), 0);
	man = version(&p, "v1", NOTES_RW, LIST);
	approve(&p, man);
	r = run(&p, man, NULL);
	cr_assert_eq(r.status, 0, H_SHOW(&r));
	cr_assert_neq(access(dead, F_OK), 0, "the dead maker's copy stayed");
	cr_assert_eq(access(h_join(alive, "artifact"), F_OK), 0, "a live maker's copy was taken");
	cr_assert_eq(access(h_join(held, "artifact"), F_OK), 0, "a held copy was taken");
	cr_assert_eq(access(h_join(other, "notes.txt"), F_OK), 0, "another file was taken");
	close(fd);
	cr_assert_eq(copies_in(rt), 3);
}

/* The signer is verified, not only recorded: the signed manifest runs
 * (the twin: the test sees a run), and each of these is refused with one
 * line and runs nothing: the manifest edited after signing, signed for
 * another namespace, by a key the owner does not trust, by a trusted key
 * of another identity than the one it names, no signature at all, no
 * allowed signers at all. */
Test(plugin, a_signer_is_verified)
{
	struct pw p = pw();
	const char *v1 = version(&p, "v1", NOTES_RW, LIST);
	char *other = new_key(h_join(p.w.base, "other")), *text = h_read_file(v1, NULL);
	char *sig = h_fmt("%s.sig", v1), *good = h_read_file(sig, NULL);
	struct {
		const char *what, *says;
	} bad[] = {
	    {"edited", "bad signature"},      {"namespace", "bad signature"},
	    {"unknown", "unknown signer"},    {"identity", "not by the signer it names"},
	    {"unsigned", "has no signature"}, {"untrusting", "you trust none"},
	};
	struct h_proc r;

	approve(&p, v1);
	r = run(&p, v1, NULL);
	cr_assert_eq(r.status, 0, H_SHOW(&r));
	cr_assert_str_eq(tools(&p), "tools=list\n", "the twin does not see the run");
	H_PADDOCK(&r, p.w.ws, "plugin", "review", v1);
	cr_assert(h_contains(r.out_text, "signature: verified, d@example.test by ED25519 key"),
		  H_SHOW(&r));
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		const char *w = bad[i].what;

		h_write_file(v1, text, 0644);
		h_write_file(sig, good, 0644);
		allow_signer(p.cfg, "d@example.test", p.key, false);
		if (strcmp(w, "edited") == 0)
			h_write_file(v1, h_fmt("%s ", text), 0644); /* one byte more */
		else if (strcmp(w, "namespace") == 0)
			sign(v1, p.key, "file");
		else if (strcmp(w, "unknown") == 0)
			sign(v1, other, "paddock-plugin");
		else if (strcmp(w, "identity") == 0) {
			allow_signer(p.cfg, "e@example.test", other, true);
			sign(v1, other, "paddock-plugin");
		} else if (strcmp(w, "unsigned") == 0)
			unlink(sig);
		else
			unlink(h_join(h_join(p.cfg, "paddock"), "allowed_signers"));
		r = run(&p, v1, NULL);
		cr_assert_eq(r.status, 125, "%s: " H_FMT, w, H_ARGS(&r));
		cr_assert(h_contains(r.err_text, bad[i].says), "%s: " H_FMT, w, H_ARGS(&r));
		cr_assert_eq(h_count_lines(r.err_text), 1, "%s: " H_FMT, w, H_ARGS(&r));
		cr_assert(!h_exists(h_join(p.notes, "out")), "%s: it ran", w);
		H_PADDOCK(&r, p.w.ws, "plugin", "approve", v1);
		cr_assert_eq(r.status, 125, "%s: approved: " H_FMT, w, H_ARGS(&r));
	}
}

/* Another signer on an update is another author: refused until approved,
 * even when the update widens nothing and the new signer is trusted (the
 * twin: approved, it runs). */
Test(plugin, a_changed_signer_is_refused_until_approved)
{
	struct pw p = pw();
	const char *v1 = version(&p, "v1", NOTES_RW, LIST);
	const char *v3 = version(&p, "v3", NOTES_RW, LIST);
	char *other = new_key(h_join(p.w.base, "other"));
	struct h_proc r;

	approve(&p, v1);
	allow_signer(p.cfg, "e@example.test", other, true);
	{
		char *t = h_read_file(v3, NULL), *at = strstr(t, "d@example.test");

		at[0] = 'e';
		h_write_file(v3, t, 0644);
	}
	sign(v3, other, "paddock-plugin");
	H_PADDOCK(&r, p.w.ws, "plugin", "review", v3);
	cr_assert(h_contains(r.out_text, "refused: its signer changed"), H_SHOW(&r));
	r = run(&p, v3, NULL);
	cr_assert_eq(r.status, 125, H_SHOW(&r));
	cr_assert(h_contains(r.err_text, "its signer changed (d@example.test -> e@example.test)"),
		  H_SHOW(&r));
	cr_assert(!h_exists(h_join(p.notes, "out")));
	r = run(&p, v3, "signature-only");
	cr_assert_eq(r.status, 125, "signature-only must not pass another signer: " H_FMT,
		     H_ARGS(&r));
	approve(&p, v3);
	r = run(&p, v3, NULL);
	cr_assert_eq(r.status, 0, H_SHOW(&r));
	cr_assert_str_eq(tools(&p), "tools=list\n");
}
