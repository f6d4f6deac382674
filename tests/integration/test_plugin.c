/* Integration: plugins under a reviewed manifest (docs/security.md,
 * "Plugins"; HB-22). A mock plugin (a shell script) writes the tools it
 * was served into notes/ and tries data/; an update that widens (data/
 * rw, a changed tool definition, a new tool) is held until approved, with
 * a twin under --weaken signature-only that shows the test sees the
 * widening when it is granted; an update that widens nothing keeps its
 * grants; the artifact must match the manifest's digest. */
#include "harness.h"

TestSuite(plugin, .init = h_init, .fini = h_fini, .timeout = 60);

#define SCRIPT                                                                          \
	"#!/bin/sh\nws=\"$PADDOCK_WORKSPACE\"\necho \"tools=$PADDOCK_PLUGIN_TOOLS\" > " \
	"\"$ws/notes/out\"\n{ echo x > \"$ws/data/out\"; } 2>/dev/null\nexit 0\n"
#define SIGNER "\"signer\": {\"issuer\": \"https://issuer.test\", \"identity\": \"d@example.test\"}"

struct pw {
	struct h_world w;
	char *cfg, *notes, *data;
};

static struct pw pw(void)
{
	struct pw p;

	p.w = h_world();
	p.cfg = h_mkdir(p.w.base, "cfg", 0700);
	cr_assert_eq(setenv("XDG_CONFIG_HOME", p.cfg, 1), 0);
	p.notes = h_mkdir(p.w.ws, "notes", 0755);
	p.data = h_mkdir(p.w.ws, "data", 0755);
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
 * next update: refused (twin: read-only, it runs). */
Test(plugin, a_scope_over_its_inventory_is_refused)
{
	struct pw p = pw();
	char *cfg = h_mkdir(p.w.ws, "cfg", 0700);
	const char *rw, *ro;
	struct h_proc r;

	cr_assert_eq(setenv("XDG_CONFIG_HOME", cfg, 1), 0);
	rw = version(&p, "rw", NOTES_RW ", {\"path\": \"cfg\", \"mode\": \"rw\"}", LIST);
	ro = version(&p, "ro", NOTES_RW ", {\"path\": \"cfg\", \"mode\": \"ro\"}", LIST);
	approve(&p, rw);
	r = run(&p, rw, NULL);
	cr_assert_eq(r.status, 125, H_SHOW(&r));
	cr_assert(h_contains(r.err_text, "would show its own inventory"), H_SHOW(&r));
	approve(&p, ro);
	r = run(&p, ro, NULL);
	cr_assert_eq(r.status, 0, H_SHOW(&r));
}
