/* Integration: bad policies and command-line errors. Each must end with
 * exit status 125, exactly one line on stderr naming the problem, and
 * nothing started: the workload's marker file is not created and the
 * workspace stays empty (no placeholders either). */
#include "harness.h"

#include <criterion/parameterized.h>

TestSuite(policy, .init = h_init, .fini = h_fini, .timeout = 60);
TestSuite(cli, .init = h_init, .fini = h_fini, .timeout = 60);

/* --------------------------------------------------------- bad policies */

struct invalid_case {
	char name[128];
};

static const char *invalid_dir(void)
{
	return h_fmt("%s/tests/data/invalid", h_root());
}

static void free_cases(struct criterion_test_params *params)
{
	cr_free(params->params);
}

/* One test per tests/data/invalid/NAME.json (with NAME.expect). */
ParameterizedTestParameters(policy, invalid_file)
{
	static struct invalid_case none[1];
	char dir[PATH_MAX];
	const char *root = getenv("PADDOCK_TEST_ROOT");
	struct invalid_case *cases;
	struct dirent *e;
	size_t n = 0;
	DIR *d;

	snprintf(dir, sizeof(dir), "%s/tests/data/invalid", root && *root ? root : ".");
	d = opendir(dir);
	if (!d)
		return cr_make_param_array(struct invalid_case, none, 0);
	cases = cr_malloc(512 * sizeof(*cases));
	while ((e = readdir(d)) && n < 512) {
		size_t len = strlen(e->d_name);

		if (len <= 5 || strcmp(e->d_name + len - 5, ".json") != 0 ||
		    len - 5 >= sizeof(cases[0].name))
			continue;
		snprintf(cases[n].name, sizeof(cases[n].name), "%.*s", (int)(len - 5), e->d_name);
		n++;
	}
	closedir(d);
	return cr_make_param_array(struct invalid_case, cases, n, free_cases);
}

/* The fixtures are written for the unit tests, where ${WORKSPACE} is /ws;
 * a literal "/ws/" there means "inside the workspace". Here the workspace
 * is a temporary directory, so such a policy (and its expected message)
 * gets the real path. */
static const char *ws_subst(const char *text, const char *ws)
{
	const char *from = "\"/ws/";
	char *out = h_keep(calloc(1, strlen(text) * 2 + strlen(ws) * 16 + 1));
	const char *p = text, *hit;

	while ((hit = strstr(p, from))) {
		strncat(out, p, (size_t)(hit - p));
		strcat(out, "\"");
		strcat(out, ws);
		strcat(out, "/");
		p = hit + strlen(from);
	}
	strcat(out, p);
	return out;
}

ParameterizedTest(struct invalid_case *c, policy, invalid_file)
{
	struct h_world w = h_world();
	struct h_proc p;
	const char *json_path = h_fmt("%s/%s.json", invalid_dir(), c->name);
	const char *expect_path = h_fmt("%s/%s.expect", invalid_dir(), c->name);
	const char *json, *expect, *started = h_join(w.ws, "started");
	size_t len;

	json = h_read_file(json_path, &len);
	cr_assert_not_null(json, "%s: %s", json_path, strerror(errno));
	expect = h_read_file(expect_path, NULL);
	cr_assert_not_null(expect, "%s: %s", expect_path, strerror(errno));
	expect = h_fmt("%.*s", (int)strcspn(expect, "\n"), expect);
	cr_assert_str_neq(expect, "", "%s is empty", expect_path);
	if (strlen(json) == len && strstr(json, "\"/ws/")) {
		const char *copy = h_join(w.base, "policy.json");

		h_write_file(copy, ws_subst(json, w.ws), 0644);
		json_path = copy;
		expect = ws_subst(h_fmt("\"%s", expect), w.ws) + 1;
	}

	H_PADDOCK(&p, w.ws, "run", "--policy", json_path, "--", "sh", "-c",
		  h_fmt("touch %s", started));
	cr_log_info("%s: %s", c->name, p.err_text);
	cr_assert_eq(p.status, 125, "%s\n" H_FMT, c->name, H_ARGS(&p));
	cr_assert_eq(h_count_lines(p.err_text), 1, "%s: not exactly one line\n" H_FMT, c->name,
		     H_ARGS(&p));
	cr_assert(p.err_text[strlen(p.err_text) - 1] == '\n', H_SHOW(&p));
	cr_assert(h_contains(p.err_text, expect), "%s: expected \"%s\"\n" H_FMT, c->name, expect,
		  H_ARGS(&p));
	cr_assert(h_contains(p.err_text, "paddock: "), H_SHOW(&p));
	cr_assert_str_eq(p.out_text, "", H_SHOW(&p));
	cr_assert(!h_exists(started), "%s: the workload ran", c->name);
	cr_assert_str_eq(h_list_dir(w.ws), "", "%s: the workspace was touched", c->name);
}

Test(policy, the_invalid_fixtures_are_there)
{
	const char *list = h_list_dir(invalid_dir());

	/* Guard against the parameterized test above silently running zero
	 * cases (wrong PADDOCK_TEST_ROOT, moved fixtures). */
	cr_assert_gt(h_count_lines(list), 50, "%s:\n%s", invalid_dir(), list);
	cr_assert(h_contains(list, "invalid-json.json\n"));
	cr_assert(h_contains(list, "invalid-json.expect\n"));
}

Test(policy, valid_policy_file_runs)
{
	struct h_world w = h_world();
	struct h_proc p;
	char *policy = h_join(w.base, "p.json");

	/* The smallest useful policy: the control for the cases above. */
	h_write_file(policy,
		     "{\"version\": 1, \"mounts\": ["
		     "{\"type\": \"bind\", \"source\": \"/usr\", \"mode\": \"ro\"},"
		     "{\"type\": \"bind\", \"source\": \"/bin\", \"mode\": \"ro\", \"symlink\": "
		     "\"copy\"},"
		     "{\"type\": \"bind\", \"source\": \"/lib\", \"mode\": \"ro\", \"symlink\": "
		     "\"copy\"},"
		     "{\"type\": \"bind\", \"source\": \"/lib64\", \"mode\": \"ro\", \"symlink\": "
		     "\"copy\", \"optional\": true},"
		     "{\"type\": \"proc\", \"target\": \"/proc\"},"
		     "{\"type\": \"bind\", \"source\": \"${WORKSPACE}\", \"mode\": \"rw\"}],"
		     " \"cwd\": \"${WORKSPACE}\"}\n",
		     0644);
	H_PADDOCK(&p, w.ws, "run", "--policy", policy, "--", "sh", "-c", "touch started");
	cr_assert_eq(p.status, 0, H_SHOW(&p));
	cr_assert(h_exists(h_join(w.ws, "started")), H_SHOW(&p));
}

Test(policy, missing_and_unreadable_policy_files)
{
	struct h_world w = h_world();
	struct h_proc p;
	char *unreadable = h_join(w.base, "secret.json");

	H_PADDOCK(&p, w.ws, "run", "--policy", h_join(w.base, "nope.json"), "--", "true");
	cr_assert_eq(p.status, 125, H_SHOW(&p));
	cr_assert_eq(h_count_lines(p.err_text), 1, H_SHOW(&p));
	cr_assert(h_contains(p.err_text, "No such file or directory"), H_SHOW(&p));

	H_PADDOCK(&p, w.ws, "run", "--policy", w.base, "--", "true");
	cr_assert_eq(p.status, 125, H_SHOW(&p));
	cr_assert_eq(h_count_lines(p.err_text), 1, H_SHOW(&p));

	h_write_file(unreadable, "{\"version\": 1}", 0000);
	if (access(unreadable, R_OK) == 0)
		return; /* root reads anything; the rest was checked */
	H_PADDOCK(&p, w.ws, "run", "--policy", unreadable, "--", "true");
	cr_assert_eq(p.status, 125, H_SHOW(&p));
	cr_assert_eq(h_count_lines(p.err_text), 1, H_SHOW(&p));
	cr_assert(h_contains(p.err_text, "Permission denied"), H_SHOW(&p));
}

/* ------------------------------------------------------------- CLI errors */

/* paddock ARGS... in a fresh workspace, where the command (if any) would
 * create "started": 125, one line containing expect, nothing started. */
static void cli_error(const char *expect, const char *a1, const char *a2, const char *a3,
		      const char *a4)
{
	struct h_world w = h_world();
	struct h_proc p;
	const char *touch = h_fmt("touch %s/started", w.ws);
	char *argv[16];
	size_t n = 0;

	argv[n++] = (char *)h_paddock();
	for (const char *const *a = (const char *const[]){a1, a2, a3, a4, NULL}; *a; a++)
		argv[n++] = (char *)*a;
	if (n > 1 && strcmp(argv[1], "run") == 0) {
		argv[n++] = "--";
		argv[n++] = "sh";
		argv[n++] = "-c";
		argv[n++] = (char *)touch;
	}
	argv[n] = NULL;
	h_spawn(&p, w.ws, argv, NULL);
	h_wait(&p, H_TIMEOUT_MS);
	cr_assert_eq(p.status, 125, H_SHOW(&p));
	cr_assert_eq(h_count_lines(p.err_text), 1, "not exactly one line\n" H_FMT, H_ARGS(&p));
	cr_assert(h_contains(p.err_text, expect), "expected \"%s\"\n" H_FMT, expect, H_ARGS(&p));
	cr_assert_str_eq(p.out_text, "", H_SHOW(&p));
	cr_assert(!h_exists(h_join(w.ws, "started")), "the command ran");
	cr_assert_str_eq(h_list_dir(w.ws), "", "the workspace was touched");
}

Test(cli, unknown_option)
{
	cli_error("--bogus: unknown option", "run", "--bogus", NULL, NULL);
}

Test(cli, bad_ttl)
{
	cli_error("--ttl bogus: invalid duration", "run", "--ttl", "bogus", NULL);
	cli_error("--ttl 0: invalid duration", "run", "--ttl", "0", NULL);
	cli_error("--ttl -1s: invalid duration", "run", "--ttl", "-1s", NULL);
}

Test(cli, bad_weaken)
{
	cli_error("--weaken bogus: unknown knob", "run", "--weaken", "bogus", NULL);
}

Test(cli, bind_with_a_missing_source)
{
	cli_error("/nonexistent-paddock-source: No such file or directory", "run", "--bind",
		  "/nonexistent-paddock-source", NULL);
	cli_error("/nonexistent-paddock-source: No such file or directory", "run", "--ro-bind",
		  "/nonexistent-paddock-source:/x", NULL);
}

Test(cli, bad_bind_and_setenv_syntax)
{
	cli_error("expected SRC[:DST]", "run", "--bind", ":/x", NULL);
	cli_error("expected NAME=VALUE", "run", "--setenv", "NOEQUALS", NULL);
	cli_error("must be an absolute path", "run", "--protect", "relative/path", NULL);
}

Test(cli, option_without_argument)
{
	struct h_world w = h_world();
	struct h_proc p;

	H_PADDOCK(&p, w.ws, "run", "--ttl");
	cr_assert_eq(p.status, 125, H_SHOW(&p));
	cr_assert_eq(h_count_lines(p.err_text), 1, H_SHOW(&p));
	cr_assert(h_contains(p.err_text, "--ttl: needs an argument"), H_SHOW(&p));
}

Test(cli, no_command)
{
	struct h_world w = h_world();
	struct h_proc p;

	H_PADDOCK(&p, w.ws, "run");
	cr_assert_eq(p.status, 125, H_SHOW(&p));
	cr_assert_eq(h_count_lines(p.err_text), 1, H_SHOW(&p));
	cr_assert(h_contains(p.err_text, "no command given"), H_SHOW(&p));
	H_PADDOCK(&p, w.ws, "run", "--record", h_join(w.base, "r.json"), "--");
	cr_assert_eq(p.status, 125, H_SHOW(&p));
	cr_assert_eq(h_count_lines(p.err_text), 1, H_SHOW(&p));
	cr_assert(!h_exists(h_join(w.base, "r.json")), "a record for a run that never was");
	cr_assert_str_eq(h_list_dir(w.ws), "");
}

Test(cli, unknown_command)
{
	cli_error("unknown command 'bogus'", "bogus", NULL, NULL, NULL);
}

/* Regression: `paddock` with no arguments exited 125 as it should but printed the
 * whole 12-line usage text on stderr instead of one error line (every other
 * usage error is one line, e.g. "paddock: unknown command 'bogus' (see
 * paddock --help)"). Reproduction: `paddock; echo $?` shows 12 lines and
 * 125. (launcher/main.c: main() does fputs(usage, stderr) when argc < 2.) */
Test(cli, no_arguments_at_all)
{
	struct h_world w = h_world();
	struct h_proc p;

	H_PADDOCK(&p, w.ws, NULL);
	cr_assert_eq(p.status, 125, H_SHOW(&p));
	cr_assert_eq(h_count_lines(p.err_text), 1, "not exactly one line\n" H_FMT, H_ARGS(&p));
	cr_assert_str_eq(p.out_text, "", H_SHOW(&p));
}

Test(cli, no_arguments_exits_125)
{
	struct h_world w = h_world();
	struct h_proc p;

	/* The part of the above that holds today. */
	H_PADDOCK(&p, w.ws, NULL);
	cr_assert_eq(p.status, 125, H_SHOW(&p));
	cr_assert_str_eq(p.out_text, "", H_SHOW(&p));
	cr_assert_neq(p.err_text[0], '\0', H_SHOW(&p));
}

Test(cli, version_and_help)
{
	struct h_world w = h_world();
	struct h_proc p;

	H_PADDOCK(&p, w.ws, "--version");
	cr_assert_eq(p.status, 0, H_SHOW(&p));
	cr_assert(strncmp(p.out_text, "paddock 0.1.0", 13) == 0, H_SHOW(&p));
	cr_assert_eq(h_count_lines(p.out_text), 1, H_SHOW(&p));
	cr_assert_str_eq(p.err_text, "", H_SHOW(&p));

	H_PADDOCK(&p, w.ws, "run", "--help");
	cr_assert_eq(p.status, 0, H_SHOW(&p));
	cr_assert(strncmp(p.out_text, "Usage: paddock run", 18) == 0, H_SHOW(&p));
	cr_assert_str_eq(p.err_text, "", H_SHOW(&p));

	H_PADDOCK(&p, w.ws, "--help");
	cr_assert_eq(p.status, 0, H_SHOW(&p));
	cr_assert(h_contains(p.out_text, "Usage: paddock"), H_SHOW(&p));
	cr_assert_str_eq(p.err_text, "", H_SHOW(&p));
	/* paddock help VERB is VERB --help; an unknown verb is an error. */
	H_PADDOCK(&p, w.ws, "help", "run");
	cr_assert_eq(p.status, 0, H_SHOW(&p));
	cr_assert(strncmp(p.out_text, "Usage: paddock run", 18) == 0, H_SHOW(&p));
	H_PADDOCK(&p, w.ws, "help", "exec");
	cr_assert_eq(p.status, 0, H_SHOW(&p));
	cr_assert(strncmp(p.out_text, "Usage: paddock exec", 19) == 0, H_SHOW(&p));
	H_PADDOCK(&p, w.ws, "help", "nosuch");
	cr_assert_eq(p.status, 125, H_SHOW(&p));
	cr_assert_eq(h_count_lines(p.err_text), 1, H_SHOW(&p));
	/* Help and version start no sandbox and touch nothing. */
	cr_assert_str_eq(h_list_dir(w.ws), "");
}

Test(cli, workload_options_are_not_paddock_options)
{
	struct h_world w = h_world();
	struct h_proc p;

	/* After the command name, everything belongs to the command. */
	H_PADDOCK(&p, w.ws, "run", "echo", "--ttl", "bogus", "--help");
	cr_assert_eq(p.status, 0, H_SHOW(&p));
	cr_assert_str_eq(p.out_text, "--ttl bogus --help\n", H_SHOW(&p));
}

/* Policies that compose (docs/policy.md): "extends" a profile or a file,
 * --policy NAME from the search path, paddock policy show|check|list. */
Test(policy, extends_a_profile_and_a_file_and_policy_show_check)
{
	struct h_world w = h_world();
	char *conf = h_mkdir(w.base, "conf", 0755), *dir;
	const char *base = h_join(w.base, "base.json"), *child = h_join(w.base, "child.json");
	struct h_proc p;

	dir = h_mkdir(h_mkdir(conf, "paddock", 0755), "policies", 0755);
	h_write_file(base,
		     "{\"version\": 1, \"extends\": \"agent\", \"hostname\": \"from-base\","
		     " \"environment\": {\"set\": {\"FROM_BASE\": \"1\"}}}",
		     0644);
	h_write_file(child,
		     "{\"version\": 1, \"extends\": \"base.json\","
		     " \"environment\": {\"set\": {\"FROM_CHILD\": \"2\"}}}",
		     0644);
	H_PADDOCK(&p, w.ws, "run", "--policy", child, "--", "sh", "-c",
		  "echo $(hostname) $FROM_BASE $FROM_CHILD; test -d /home/sandbox && echo home");
	cr_assert_eq(p.status, 0, H_SHOW(&p));
	cr_assert_str_eq(p.out_text, "from-base 1 2\nhome\n", H_SHOW(&p));
	/* show: one document, the agent policy's mounts in it, no extends. */
	H_PADDOCK(&p, w.ws, "policy", "show", child);
	cr_assert_eq(p.status, 0, H_SHOW(&p));
	cr_assert(h_contains(p.out_text, "\"/home/sandbox\"") && !h_contains(p.out_text, "extends"),
		  H_SHOW(&p));
	H_PADDOCK(&p, w.ws, "policy", "check", child);
	cr_assert_eq(p.status, 0, H_SHOW(&p));
	cr_assert(h_contains(p.out_text, ": ok (effective sha256 "), H_SHOW(&p));
	/* A profile of the user's own, by name, before the built-ins. */
	h_write_file(h_join(dir, "mine.json"),
		     "{\"version\": 1, \"extends\": \"minimal\", \"hostname\": \"mine\"}", 0644);
	cr_assert_eq(setenv("XDG_CONFIG_HOME", conf, 1), 0);
	H_PADDOCK(&p, w.ws, "run", "--policy", "mine", "--", "hostname");
	cr_assert_eq(p.status, 0, H_SHOW(&p));
	cr_assert_str_eq(p.out_text, "mine\n", H_SHOW(&p));
	H_PADDOCK(&p, w.ws, "policy", "list");
	cr_assert(h_contains(p.out_text, "agent (built-in)\n"), H_SHOW(&p));
}

Test(policy, extends_refusals_are_one_line_and_the_same_for_check)
{
	struct h_world w = h_world();
	const char *a = h_join(w.base, "a.json"), *b = h_join(w.base, "b.json");
	struct h_proc p, q;

	h_write_file(a, "{\"version\": 1, \"extends\": \"b.json\"}", 0644);
	h_write_file(b, "{\"version\": 1, \"extends\": \"a.json\"}", 0644);
	H_PADDOCK(&p, w.ws, "run", "--policy", a, "--", "true");
	cr_assert_eq(p.status, 125, H_SHOW(&p));
	cr_assert(h_contains(p.err_text, "a cycle"), H_SHOW(&p));
	cr_assert_eq(h_count_lines(p.err_text), 1, H_SHOW(&p));
	H_PADDOCK(&q, w.ws, "policy", "check", a);
	cr_assert_eq(q.status, 125, H_SHOW(&q));
	cr_assert_str_eq(q.err_text, p.err_text);
	h_write_file(b, "{\"version\": 1, \"extends\": \"nosuchprofile\"}", 0644);
	H_PADDOCK(&p, w.ws, "run", "--policy", a, "--", "true");
	cr_assert_eq(p.status, 125, H_SHOW(&p));
	cr_assert(h_contains(p.err_text, "policy profile nosuchprofile: not found"), H_SHOW(&p));
	h_write_file(b, "{\"version\": 1, \"extends\": \"agent\", \"bogus\": 1}", 0644);
	H_PADDOCK(&p, w.ws, "policy", "check", a);
	cr_assert_eq(p.status, 125, H_SHOW(&p));
	cr_assert(h_contains(p.err_text, "unknown key \"bogus\""), H_SHOW(&p));
	H_PADDOCK(&p, w.ws, "policy", "frobnicate");
	cr_assert_eq(p.status, 125, H_SHOW(&p));
}

/* A command-line bind over a policy's mount goes before it when the mount
 * point is there in the bind's source (the policy's mount stays on top);
 * else the error names the argument. */
Test(policy, a_cli_bind_over_a_policy_mount_goes_first_when_it_can)
{
	struct h_world w = h_world();
	char *src = h_mkdir(w.base, "homes", 0755);
	struct h_proc p;

	h_write_file(h_join(src, "note"), "hi\n", 0644);
	H_PADDOCK(&p, w.ws, "run", "--ro-bind", h_fmt("%s:/home", src), "--", "true");
	cr_assert_eq(p.status, 125, H_SHOW(&p));
	cr_assert(h_contains(p.err_text, h_fmt("--ro-bind %s:/home would hide a mount of the "
					       "policy's below /home",
					       src)),
		  H_SHOW(&p));
	h_mkdir(src, "sandbox", 0755);
	H_PADDOCK(&p, w.ws, "run", "--ro-bind", h_fmt("%s:/home", src), "--", "sh", "-c",
		  "cat /home/note; touch /home/sandbox/x && echo tmpfs-on-top");
	cr_assert_eq(p.status, 0, H_SHOW(&p));
	cr_assert_str_eq(p.out_text, "hi\ntmpfs-on-top\n", H_SHOW(&p));
	cr_assert(!h_exists(h_join(src, "sandbox/x")), "the write went through to the source");
}
