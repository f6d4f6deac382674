/* Unit tests for the trust store of project policies (policy/trust.c) and
 * project_widenings() (launcher/supervisor/project.c): where a project
 * policy is wider than the caller's own. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../launcher/supervisor/run.h"
#include "../../policy/trust.h"
#include "unit.h"

TestSuite(trust, .fini = unit_leak_check);
TestSuite(project_widenings, .fini = unit_leak_check);

#define H "29324fe94f3be1ab5898d655e57ad41ff94a5ddb755c215bd62bf57fe1e1aaa7"

static int parse(const char *text, struct trust_store *s, struct err *err)
{
	return trust_store_parse(text, strlen(text), s, err);
}

Test(trust, two_entries_and_round_trip)
{
	const char *text = "{\"version\": 1, \"trusted\": [{\"path\": \"/p/.paddock/policy.json\", "
			   "\"sha256\": \"" H "\", \"uid\": 1000, \"time\": 1796133369, "
			   "\"widenings\": [\"network reaches a.test:443\"]}, {\"path\": \"/x\", "
			   "\"sha256\": \"" H "\", \"uid\": 0, \"time\": 0}]}";
	struct trust_store s, again;
	struct err err = {0};
	const struct trust_entry *e;
	char *out;

	cr_assert_eq(parse(text, &s, &err), 0, "%s", err.msg);
	cr_assert_eq(s.n, 2);
	e = trust_store_find(&s, "/p/.paddock/policy.json");
	cr_assert_not_null(e);
	cr_assert_eq(e->uid, 1000);
	cr_assert_eq(e->time, 1796133369);
	cr_assert_eq(e->n_widenings, 1);
	cr_assert_str_eq(e->widenings[0], "network reaches a.test:443");
	cr_assert_null(trust_store_find(&s, "/p/.paddock"));
	out = trust_store_format(&s);
	cr_assert_not_null(out);
	cr_assert_eq(parse(out, &again, &err), 0, "%s", err.msg);
	cr_assert_eq(again.n, 2);
	cr_assert_str_eq(again.e[1].path, "/x");
	free(out);
	trust_store_free(&again);
	trust_store_free(&s);
}

Test(trust, empty_text_is_an_empty_store)
{
	struct trust_store s;
	struct err err = {0};

	cr_assert_eq(trust_store_parse("", 0, &s, &err), 0);
	cr_assert_eq(s.n, 0);
}

static void refused(const char *text, int code, const char *msg)
{
	struct trust_store s;
	struct err err = {0};

	cr_assert_eq(parse(text, &s, &err), -code, "%s: %s", text, err.msg);
	cr_assert(strstr(err.msg, msg), "%s: %s (wanted %s)", text, err.msg, msg);
	cr_assert_eq(s.n, 0);
	cr_assert_null(s.e);
}

#define ENTRY(path, sha, uid, time) \
	"{\"path\": \"" path "\", \"sha256\": \"" sha "\", \"uid\": " uid ", \"time\": " time "}"
#define STORE(...) "{\"version\": 1, \"trusted\": [" __VA_ARGS__ "]}"

Test(trust, bad_stores_are_refused_whole)
{
	refused("[]", EINVAL, "trust store: must be an object");
	refused("{\"version\": 2, \"trusted\": []}", EINVAL, "version");
	refused("{\"version\": 1}", EINVAL, "\"trusted\" missing");
	refused("{\"version\": 1, \"trusted\": [], \"x\": 1}", EINVAL, "unknown key \"x\"");
	refused(STORE(ENTRY("/a/../b", H, "1", "1")), EINVAL,
		"trusted[0].path: must be a canonical");
	refused(STORE(ENTRY("a", H, "1", "1")), EINVAL, "trusted[0].path");
	refused(STORE(ENTRY("/a/", H, "1", "1")), EINVAL, "trusted[0].path");
	refused(STORE(ENTRY("/a//b", H, "1", "1")), EINVAL, "trusted[0].path");
	refused(STORE(ENTRY("/a", "ABC", "1", "1")), EINVAL, "trusted[0].sha256");
	refused(
	    STORE(ENTRY("/a", "29324FE94F3BE1AB5898D655E57AD41FF94A5DDB755C215BD62BF57FE1E1AAA7",
			"1", "1")),
	    EINVAL, "trusted[0].sha256");
	refused(STORE(ENTRY("/a", H, "4294967296", "1")), EINVAL, "trusted[0].uid");
	refused(STORE(ENTRY("/a", H, "1", "-1")), EINVAL, "trusted[0].time");
	refused(STORE(ENTRY("/a", H, "1", "1.5")), EINVAL, "trusted[0].time");
	refused(STORE(ENTRY("/a", H, "1", "1") ", " ENTRY("/a", H, "2", "2")), EINVAL,
		"trusted[1].path: a second entry");
	refused(STORE("{\"path\": \"/a\", \"sha256\": \"" H "\", \"uid\": 1}"), EINVAL,
		"\"time\" missing");
	refused(STORE("{\"path\": \"/a\", \"sha256\": \"" H
		      "\", \"uid\": 1, \"time\": 1, \"widenings\": [\"\"]}"),
		EINVAL, "widenings[0]");
	refused(STORE("{\"path\": \"/a\", \"sha256\": \"" H
		      "\", \"uid\": 1, \"time\": 1, \"widenings\": [1]}"),
		EINVAL, "widenings[0]");
	refused("{\"version\": 1, \"trusted\": [", EINVAL, "");
}

Test(trust, put_replaces_by_path_and_remove)
{
	struct trust_store s = {0};
	char *w[] = {"network reaches a.test:443"};
	struct trust_entry e = {.path = "/a", .sha256 = H, .uid = 7, .time = 9};

	cr_assert_eq(trust_store_put(&s, &e), 0);
	e.uid = 8;
	e.widenings = w;
	e.n_widenings = 1;
	cr_assert_eq(trust_store_put(&s, &e), 0);
	cr_assert_eq(s.n, 1);
	cr_assert_eq(s.e[0].uid, 8);
	cr_assert_eq(s.e[0].n_widenings, 1);
	e.path = "/b";
	cr_assert_eq(trust_store_put(&s, &e), 0);
	cr_assert_eq(s.n, 2);
	e.path = "relative";
	cr_assert_eq(trust_store_put(&s, &e), -EINVAL);
	cr_assert(trust_store_remove(&s, "/a"));
	cr_assert(!trust_store_remove(&s, "/a"));
	cr_assert_eq(s.n, 1);
	cr_assert_str_eq(s.e[0].path, "/b");
	trust_store_free(&s);
}

/* ---------------------------------------------------- project_widenings */

static char found[WIDENINGS_MAX][WIDENING_LEN];

static size_t wider(const char *user, const char *project)
{
	static const struct policy_vars vars = {
	    .workspace = "/ws", .home = "/home/u", .pwd = "/ws"};
	struct policy *u = NULL, *p = NULL;
	struct err err = {0};
	size_t n;

	cr_assert_eq(policy_load_buffer(user, strlen(user), &vars, &u, &err), 0, "%s", err.msg);
	cr_assert_eq(policy_load_buffer(project, strlen(project), &vars, &p, &err), 0, "%s",
		     err.msg);
	n = project_widenings(u, p, "/ws", found, WIDENINGS_MAX);
	policy_free(u);
	policy_free(p);
	return n;
}

static bool has(size_t n, const char *line)
{
	for (size_t i = 0; i < n; i++)
		if (strcmp(found[i], line) == 0)
			return true;
	return false;
}

#define BASE "\"version\": 1, \"mounts\": [{\"type\": \"proc\", \"target\": \"/proc\"}"

Test(project_widenings, the_same_policy_is_not_wider)
{
	const char *u = "{" BASE ", {\"type\": \"bind\", \"source\": \"/srv\", \"target\": "
			"\"/srv\", \"mode\": \"rw\"}], \"network\": {\"mode\": \"mediated\", "
			"\"allow\": [{\"host\": \"a.test\", \"ports\": [443], \"protocol\": "
			"\"tls\"}]}}";

	cr_assert_eq(wider(u, u), 0, "%s", found[0]);
}

Test(project_widenings, narrower_is_not_wider)
{
	const char *u = "{" BASE ", {\"type\": \"bind\", \"source\": \"/srv\", \"target\": "
			"\"/srv\", \"mode\": \"rw\"}]}";
	const char *p = "{" BASE ", {\"type\": \"bind\", \"source\": \"/srv/sub\", \"target\": "
			"\"/srv\"}]}";

	cr_assert_eq(wider(u, p), 0, "%s", found[0]);
}

Test(project_widenings, each_axis_is_found)
{
	const char *p =
	    "{\"version\": 1, \"mounts\": [{\"type\": \"proc\", \"target\": \"/proc\"}, "
	    "{\"type\": \"bind\", \"source\": \"/ws\", \"target\": \"/ws\", \"mode\": \"rw\"}, "
	    "{\"type\": \"bind\", \"source\": \"/etc\", \"target\": \"/etc\"}, "
	    "{\"type\": \"bind\", \"source\": \"/srv\", \"target\": \"/srv\", \"mode\": \"rw\"}], "
	    "\"network\": {\"mode\": \"mediated\", \"allow\": [{\"host\": \"a.test\", \"ports\": "
	    "[443], \"protocol\": \"tls\"}]}, \"environment\": {\"keep\": [\"TOKEN\"]}, "
	    "\"seccomp\": {\"profile\": \"none\"}, \"ports\": [{\"host\": \"127.0.0.1:8080\", "
	    "\"sandbox\": 80}]}";
	size_t n;

	n = wider("{" BASE ", {\"type\": \"bind\", \"source\": \"/ws\", \"target\": \"/ws\", "
		  "\"mode\": \"rw\"}], \"protect\": [\"/ws/.git\"]}",
		  p);
	cr_assert(has(n, "seccomp off"), "%zu %s", n, found[0]);
	cr_assert(has(n, "read-only bind /etc"), "%zu", n);
	cr_assert(has(n, "writable bind /srv outside the workspace"), "%zu", n);
	cr_assert(!has(n, "writable bind /srv"), "said twice");
	cr_assert(has(n, "network reaches a.test:443"), "%zu", n);
	cr_assert(has(n, "keeps the variable TOKEN of your environment"), "%zu", n);
	cr_assert(has(n, "drops the protected path /ws/.git"), "%zu", n);
	cr_assert(has(n, "forwards host port 8080 to the sandbox's 80"), "%zu", n);
}

Test(project_widenings, a_read_only_bind_of_the_users_is_not_made_writable)
{
	const char *u = "{" BASE ", {\"type\": \"bind\", \"source\": \"/ws\", \"target\": "
			"\"/ws\"}]}";
	const char *p = "{" BASE ", {\"type\": \"bind\", \"source\": \"/ws\", \"target\": "
			"\"/ws\", \"mode\": \"rw\"}]}";
	size_t n = wider(u, p);

	cr_assert(has(n, "writable bind /ws"), "%zu %s", n, found[0]);
}
