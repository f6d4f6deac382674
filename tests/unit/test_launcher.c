/* Unit tests for the launcher's pure parts: mount planning, the workload's
 * environment, exit-status mapping, id-map text and argument parsing. */
#include <criterion/criterion.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "../../include/exitcodes.h"
#include "../../launcher/launcher.h"
#include "../../launcher/sandbox/sandbox.h"
#include "../../launcher/supervisor/outcome.h"
#include "../../launcher/supervisor/run.h"
#include "../../mounts/mounts.h"
#include "../../launcher/supervisor/subid.h"
#include "unit.h"

TestSuite(plan, .fini = unit_leak_check);
TestSuite(env, .fini = unit_leak_check);
TestSuite(status, .fini = unit_leak_check);
TestSuite(args, .fini = unit_leak_check);
TestSuite(reply, .fini = unit_leak_check);

static const struct policy_vars vars = {.workspace = "/ws", .home = "/home/u", .pwd = "/cwd"};

static struct policy *load(const char *json)
{
	struct policy *p = NULL;
	struct err err = {0};
	int r = policy_load_buffer(json, strlen(json), &vars, &p, &err);

	cr_assert_eq(r, 0, "policy: %s", err.msg);
	return p;
}

static const char two_binds[] =
    "{\"version\":1,\"mounts\":["
    "{\"type\":\"bind\",\"source\":\"/usr\"},"
    "{\"type\":\"proc\",\"target\":\"/proc\"},"
    "{\"type\":\"bind\",\"source\":\"${WORKSPACE}\",\"target\":\"/work\",\"mode\":\"rw\"},"
    "{\"type\":\"bind\",\"source\":\"/data\",\"target\":\"/work/data\",\"mode\":\"ro\"}],"
    "\"protect\":[\"/work/.git/hooks\",\"/work/data/x\"]}";

Test(plan, order_and_modes)
{
	struct policy *p = load(two_binds);
	struct mount_plan plan = {0};

	cr_assert_eq(mounts_plan(p, 0, &plan), 0);
	cr_assert_eq(plan.n, 7);
	cr_assert_eq(plan.ops[0].kind, MOUNT_OP_BIND);
	cr_assert(plan.ops[0].readonly, "binds default to read-only");
	cr_assert_str_eq(plan.ops[0].target, "/usr", "target defaults to the source");
	cr_assert_eq(plan.ops[1].kind, MOUNT_OP_PROC);
	cr_assert_not(plan.ops[1].host_proc);
	cr_assert_str_eq(plan.ops[2].source, "/ws", "${WORKSPACE} expanded");
	cr_assert_not(plan.ops[2].readonly);
	cr_assert(plan.ops[3].readonly);
	cr_assert_eq(plan.ops[4].kind, MOUNT_OP_PIN, "the ancestors of protected paths are pinned");
	cr_assert_str_eq(plan.ops[4].target, "/work/.git");
	cr_assert_not(plan.ops[4].readonly, "a pin changes nothing but renames");
	cr_assert_eq(plan.ops[5].kind, MOUNT_OP_PROTECT, "protected paths come last");
	cr_assert(plan.ops[5].readonly);
	cr_assert_str_eq(plan.ops[5].what, "protect[0]");
	cr_assert_str_eq(plan.ops[6].target, "/work/data/x", "no pin: directly below its bind");
	cr_assert_str_eq(plan.ops[2].what, "mounts[2]");
	mounts_plan_free(&plan);
	policy_free(p);
}

Test(plan, rw_binds_weakening_keeps_protected_paths)
{
	struct policy *p = load(two_binds);
	struct mount_plan plan = {0};

	cr_assert_eq(mounts_plan(p, MOUNTS_RW_BINDS | MOUNTS_HOST_PROC, &plan), 0);
	for (size_t i = 0; i < plan.n; i++) {
		if (plan.ops[i].kind == MOUNT_OP_BIND)
			cr_assert_not(plan.ops[i].readonly, "%s should be writable",
				      plan.ops[i].what);
		if (plan.ops[i].kind == MOUNT_OP_PROTECT)
			cr_assert(plan.ops[i].readonly, "%s must stay read-only", plan.ops[i].what);
	}
	cr_assert(plan.ops[1].host_proc);
	mounts_plan_free(&plan);
	policy_free(p);
}

Test(plan, host_path_uses_the_innermost_bind)
{
	struct policy *p = load(two_binds);
	struct mount_plan plan = {0};
	char *host = NULL;

	cr_assert_eq(mounts_plan(p, 0, &plan), 0);
	cr_assert_eq(mounts_host_path(&plan, "/work/.git/hooks", &host), 0);
	cr_assert_str_eq(host, "/ws/.git/hooks");
	free(host);
	cr_assert_eq(mounts_host_path(&plan, "/work/data/x", &host), 0);
	cr_assert_str_eq(host, "/data/x");
	free(host);
	cr_assert_eq(mounts_host_path(&plan, "/workshop", &host), -ENOENT,
		     "a prefix that is not a path component does not count");
	cr_assert_null(host);
	cr_assert_eq(mounts_enclosing_bind(&plan, "/work"), 2);
	cr_assert_eq(mounts_enclosing_bind(&plan, "/tmp/x"), -1);
	mounts_plan_free(&plan);
	policy_free(p);
}

/* What a sandbox can reach of a host path: the check behind --record and
 * the session registry. */
Test(plan, exposing_binds)
{
	const char *json = "{\"version\":1,\"mounts\":["
			   "{\"type\":\"bind\",\"source\":\"/usr\"},"
			   "{\"type\":\"bind\",\"source\":\"/run/user/1000/x\"},"
			   "{\"type\":\"bind\",\"source\":\"/srv/data\",\"mode\":\"rw\"}]}";
	struct policy *p = load(json);
	struct mount_plan plan = {0};

	cr_assert_eq(mounts_plan(p, 0, &plan), 0);
	/* Inside a bind, read-only or writable. */
	cr_assert_eq(mounts_exposing_bind(&plan, "/usr/lib/x", 0), 0);
	cr_assert_eq(mounts_exposing_bind(&plan, "/usr", 0), 0);
	cr_assert_eq(mounts_exposing_bind(&plan, "/usr/lib/x", MOUNTS_EXPOSE_WRITABLE), -1);
	cr_assert_eq(mounts_exposing_bind(&plan, "/srv/data/rec.json", MOUNTS_EXPOSE_WRITABLE), 2);
	/* A sibling with a common prefix is not inside. */
	cr_assert_eq(mounts_exposing_bind(&plan, "/srv/database", 0), -1);
	cr_assert_eq(mounts_exposing_bind(&plan, "/usrx", 0), -1);
	/* A bind below the path shows part of it. */
	cr_assert_eq(mounts_exposing_bind(&plan, "/run/user/1000", 0), -1);
	cr_assert_eq(mounts_exposing_bind(&plan, "/run/user/1000", MOUNTS_EXPOSE_BELOW), 1);
	/* A skipped (missing optional) bind shows nothing. */
	plan.ops[0].skipped = true;
	cr_assert_eq(mounts_exposing_bind(&plan, "/usr/lib", 0), -1);
	mounts_plan_free(&plan);
	policy_free(p);
}

Test(env, cleared_kept_and_set)
{
	struct policy *p =
	    load("{\"version\":1,\"environment\":{\"keep\":[\"TERM\",\"LC_*\"],"
		 "\"set\":{\"PATH\":\"/bin\",\"HOME\":\"${HOME}\",\"TERM\":\"dumb\"}}}");
	char *caller[] = {"TERM=xterm", "LC_ALL=C", "LC_TIME=de", "SECRET=1",
			  "PATH=/evil", "LCX=no",   "junk",	  NULL};
	char **env = NULL;
	size_t n = 0;

	cr_assert_eq(env_build(p, caller, NULL, 0, &env), 0);
	while (env[n])
		n++;
	cr_assert_eq(n, 5, "got %zu entries", n);
	cr_assert_str_eq(env[0], "TERM=dumb", "set replaces a kept value in place");
	cr_assert_str_eq(env[1], "LC_ALL=C");
	cr_assert_str_eq(env[2], "LC_TIME=de");
	cr_assert_str_eq(env[3], "PATH=/bin");
	cr_assert_str_eq(env[4], "HOME=/home/u");
	env_free(env);
	policy_free(p);
}

Test(env, not_cleared_passes_everything)
{
	struct policy *p = load("{\"version\":1,\"environment\":{\"clear\":false}}");
	char *caller[] = {"A=1", "B=2", NULL};
	char **env = NULL;

	cr_assert_eq(env_build(p, caller, NULL, 0, &env), 0);
	cr_assert_str_eq(env[0], "A=1");
	cr_assert_str_eq(env[1], "B=2");
	cr_assert_null(env[2]);
	env_free(env);
	policy_free(p);
}

Test(status, mapping)
{
	cr_assert_eq(exit_status_for(ENDING_EXIT, 0), 0);
	cr_assert_eq(exit_status_for(ENDING_EXIT, 3), 3);
	cr_assert_eq(exit_status_for(ENDING_EXIT, 255), 255);
	cr_assert_eq(exit_status_for(ENDING_EXIT, 256), EXIT_LAUNCHER);
	cr_assert_eq(exit_status_for(ENDING_SIGNAL, 15), 143);
	cr_assert_eq(exit_status_for(ENDING_SIGNAL, 9), 137);
	cr_assert_eq(exit_status_for(ENDING_SIGNAL, 0), EXIT_LAUNCHER);
	/* Expiry is 124 (timeout(1)'s), whatever signal then ended it;
	 * a stop keeps the signal's 128+N. */
	cr_assert_eq(exit_status_for(ENDING_EXPIRED, 15), 124);
	cr_assert_eq(exit_status_for(ENDING_EXPIRED, -1), 124);
	cr_assert_eq(exit_status_for(ENDING_STOPPED, 15), 143);
	cr_assert_eq(exit_status_for(ENDING_STOPPED, -1), 137);
	cr_assert_eq(exit_status_for(ENDING_LAUNCHER_ERROR, 0), 125);
	cr_assert_str_eq(ending_name(ENDING_EXPIRED), "expired");
	cr_assert_str_eq(ending_name(ENDING_LAUNCHER_ERROR), "launcher-error");
}

Test(status, map_line)
{
	char buf[64];

	cr_assert_eq(userns_map_line(buf, sizeof(buf), 0, 1000), 9);
	cr_assert_str_eq(buf, "0 1000 1\n");
	cr_assert_lt(userns_map_line(buf, 4, 4294967294u, 4294967294u), 0);
}

static int parse(struct options *o, struct err *err, char **argv)
{
	int argc = 0;

	while (argv[argc])
		argc++;
	return options_parse(argc, argv, o, err);
}

Test(args, full)
{
	char *argv[] = {"run",	  "--policy",  "p.json",   "-w",	"/ws",	    "--ttl",
			"500ms",  "--weaken",  "rw-binds", "-W",	"host-net", "--bind",
			"/a:/b",  "--ro-bind", "/c",	   "--protect", "/ws/.x",   "--setenv",
			"K=V",	  "--cwd",     "/ws",	   "--",	"sh",	    "-c",
			"exit 3", NULL};
	struct options o;
	struct err err = {0};

	cr_assert_eq(parse(&o, &err, argv), 0, "%s", err.msg);
	cr_assert_str_eq(o.policy_path, "p.json");
	cr_assert_str_eq(o.workspace, "/ws");
	cr_assert(o.has_ttl);
	cr_assert_eq(o.ttl_ms, 500);
	cr_assert_eq(o.weaken, WEAKEN_RW_BINDS | WEAKEN_HOST_NET);
	cr_assert_eq(o.n_binds, 2);
	cr_assert_str_eq(o.binds[0].spec, "/a:/b");
	cr_assert_not(o.binds[0].readonly);
	cr_assert_str_eq(o.binds[1].spec, "/c");
	cr_assert(o.binds[1].readonly);
	cr_assert_eq(o.n_protect, 1);
	cr_assert_eq(o.n_setenv, 1);
	cr_assert_str_eq(o.cwd, "/ws");
	cr_assert_str_eq(o.argv[0], "sh");
	cr_assert_str_eq(o.argv[2], "exit 3");
	options_free(&o);
}

Test(args, command_options_are_not_ours)
{
	char *argv[] = {"run", "ls", "--policy", "-l", NULL};
	struct options o;
	struct err err = {0};

	cr_assert_eq(parse(&o, &err, argv), 0);
	cr_assert_null(o.policy_path);
	cr_assert_str_eq(o.argv[1], "--policy");
	options_free(&o);
}

Test(args, relative_bind_source_is_made_absolute)
{
	char *argv[] = {"run", "--bind", "rel/dir:/x", "true", NULL};
	struct options o;
	struct err err = {0};

	cr_assert_eq(parse(&o, &err, argv), 0);
	cr_assert_eq(o.binds[0].spec[0], '/');
	cr_assert(strstr(o.binds[0].spec, "/rel/dir:/x"));
	options_free(&o);
}

static void bad(char **argv, const char *expect)
{
	struct options o;
	struct err err = {0};

	cr_assert_eq(parse(&o, &err, argv), -EINVAL, "accepted: %s", argv[1]);
	cr_assert(strstr(err.msg, expect), "message \"%s\" lacks \"%s\"", err.msg, expect);
	cr_assert_null(strchr(err.msg, '\n'), "one line");
	options_free(&o);
}

Test(args, errors)
{
	bad((char *[]){"run", NULL}, "no command given");
	bad((char *[]){"run", "--bogus", "true", NULL}, "--bogus: unknown option");
	bad((char *[]){"run", "--ttl", "5x", "true", NULL}, "--ttl 5x: invalid duration");
	bad((char *[]){"run", "--ttl", "0s", "true", NULL}, "--ttl 0s: invalid duration");
	bad((char *[]){"run", "--weaken", "everything", "true", NULL},
	    "--weaken everything: unknown knob");
	bad((char *[]){"run", "--bind", ":/x", "true", NULL}, "expected SRC[:DST]");
	bad((char *[]){"run", "--ro-bind", "/x:", "true", NULL}, "--ro-bind /x:");
	bad((char *[]){"run", "--policy", NULL}, "needs an argument");
}

Test(args, weaken_names_round_trip)
{
	unsigned named = 0;

	for (unsigned i = 0; i < WEAKEN_COUNT; i++) {
		uint64_t bit = 0;

		/* A bit no knob has yet (the table's gaps) has no name. */
		if (strcmp(weaken_name(UINT64_C(1) << i), "unknown") == 0) {
			cr_assert_eq(weaken_parse("unknown", &bit), -EINVAL);
			continue;
		}
		named++;
		cr_assert_eq(weaken_parse(weaken_name(UINT64_C(1) << i), &bit), 0);
		cr_assert_eq(bit, UINT64_C(1) << i);
	}
	cr_assert_geq(named, 30);
	cr_assert_str_eq(weaken_name(WEAKEN_NO_PIDNS), "no-pidns");
	cr_assert_str_eq(weaken_name(WEAKEN_EXEC_UNHARDENED), "exec-unhardened");
	cr_assert_str_eq(weaken_name(UINT64_C(1) << 43), "unknown");
	cr_assert_eq(weaken_parse("unknown", &(uint64_t){0}), -EINVAL);
	cr_assert_str_eq(weaken_name(WEAKEN_LOCAL_EXIT_IS_STOP), "local-exit-is-stop");
	cr_assert_str_eq(weaken_name(WEAKEN_UNKNOWN_EVENT_ALLOW), "unknown-event-allow");
}

/* The check that aborts a run: the kernel's mount table against the plan. */
static const char verify_policy[] =
    "{\"version\":1,\"mounts\":[{\"type\":\"bind\",\"source\":\"/usr\"},"
    "{\"type\":\"bind\",\"source\":\"/ws\",\"mode\":\"rw\"}],"
    "\"protect\":[\"/ws/.bashrc\"]}";

static int verify(const char *table, struct err *err)
{
	struct policy *p = load(verify_policy);
	struct mount_plan plan = {0};
	int r;

	cr_assert_eq(mounts_plan(p, 0, &plan), 0);
	r = mounts_verify_text(&plan, table, err);
	mounts_plan_free(&plan);
	policy_free(p);
	return r;
}

#define ROOT_RO "60 40 0:40 / / ro,nosuid,nodev - tmpfs none rw\n"
#define USR(o)	"61 60 254:0 /usr /usr " o ",nosuid,nodev - ext4 /dev/vda rw\n"
#define WS	"62 60 254:0 /ws /ws rw,nosuid,nodev - ext4 /dev/vda rw\n"
#define RC(o)	"63 62 254:0 /ws/.bashrc /ws/.bashrc " o " - ext4 /dev/vda rw\n"

Test(plan, verify_accepts_the_planned_table)
{
	struct err err = {0};

	cr_assert_eq(verify(ROOT_RO USR("ro") WS RC("ro"), &err), 0, "%s", err.msg);
}

Test(plan, verify_refuses_a_writable_read_only_bind)
{
	struct err err = {0};

	cr_assert_eq(verify(ROOT_RO USR("rw") WS RC("ro"), &err), -EPERM);
	cr_assert_str_eq(err.msg, "mounts[0]: /usr is writable but planned read-only");
}

Test(plan, verify_refuses_a_writable_protected_path_and_root)
{
	struct err err = {0};

	cr_assert_eq(verify(ROOT_RO USR("ro") WS RC("rw"), &err), -EPERM);
	cr_assert(strstr(err.msg, "protect[0]: /ws/.bashrc is writable"), "%s", err.msg);
	cr_assert_eq(verify("60 40 0:40 / / rw - tmpfs none rw\n" USR("ro") WS RC("ro"), &err),
		     -EPERM);
	cr_assert_str_eq(err.msg, "the new root is writable");
}

Test(plan, verify_uses_the_topmost_mount_and_needs_every_mount)
{
	struct err err = {0};

	/* A writable mount stacked on top of the read-only one wins. */
	cr_assert_eq(verify(ROOT_RO USR("ro") USR("rw") WS RC("ro"), &err), -EPERM);
	cr_assert_eq(verify(ROOT_RO USR("rw") USR("ro") WS RC("ro"), &err), 0, "%s", err.msg);
	cr_assert_lt(verify(ROOT_RO WS RC("ro"), &err), 0);
	cr_assert(strstr(err.msg, "/usr is not mounted"), "%s", err.msg);
}

Test(plan, verify_unescapes_mount_points)
{
	static const char policy_sp[] =
	    "{\"version\":1,\"mounts\":[{\"type\":\"bind\",\"source\":\"/a b\"}]}";
	struct policy *p = load(policy_sp);
	struct mount_plan plan = {0};
	struct err err = {0};

	cr_assert_eq(mounts_plan(p, 0, &plan), 0);
	cr_assert_eq(mounts_verify_text(&plan, ROOT_RO "61 60 0:1 / /a\\040b ro - x y ro\n", &err),
		     0, "%s", err.msg);
	mounts_plan_free(&plan);
	policy_free(p);
}

/* What the supervisor tells the child about protected paths: only ever a
 * shortening of a PROTECT op's own target at a component boundary. */
Test(plan, protect_messages_round_trip_and_refuse_garbage)
{
	struct policy *p = load(two_binds);
	struct mount_plan a = {0}, b = {0};
	char line[128];

	cr_assert_eq(mounts_plan(p, 0, &a), 0);
	cr_assert_eq(mounts_plan(p, 0, &b), 0);
	cr_assert_eq(a.ops[5].kind, MOUNT_OP_PROTECT);
	a.ops[5].target[strlen("/work/.git")] = '\0'; /* the first missing component */
	a.ops[5].dev = 42;
	a.ops[5].ino = 4242;
	cr_assert_gt(mounts_protect_encode(&a, 5, line, sizeof(line)), 0);
	cr_assert_eq(mounts_protect_decode(&b, line), 0, "%s", line);
	cr_assert_str_eq(b.ops[5].target, "/work/.git");
	cr_assert_eq(b.ops[5].ino, 4242);
	cr_assert_eq(b.ops[5].dev, 42);
	cr_assert_lt(mounts_protect_encode(&a, 5, line, 4), 0, "too small a buffer");
	cr_assert_eq(mounts_protect_decode(&b, "0 0 4 1 1"), -EINVAL, "not a PROTECT op");
	cr_assert_eq(mounts_protect_decode(&b, "99 0 4 1 1"), -EINVAL, "out of range");
	cr_assert_eq(mounts_protect_decode(&b, "6 0 7 1 1"), -EINVAL, "not at a boundary");
	cr_assert_eq(mounts_protect_decode(&b, "6 0 99 1 1"), -EINVAL, "longer than the target");
	cr_assert_eq(mounts_protect_decode(&b, "6 2 5 1 1"), -EINVAL, "skipped is 0 or 1");
	cr_assert_eq(mounts_protect_decode(&b, "6 0 5 1 1 x"), -EINVAL, "trailing text");
	cr_assert_eq(mounts_protect_decode(&b, ""), -EINVAL);
	cr_assert_str_eq(b.ops[6].target, "/work/data/x", "refused lines change nothing");
	mounts_plan_free(&a);
	mounts_plan_free(&b);
	policy_free(p);
}

Test(args, ports_are_collected_in_order)
{
	char *argv[] = {"run",	"--port", "127.0.0.1:auto:8080", "--port", "[::1]:9000:80", "--",
			"true", NULL};
	struct options o;
	struct err err = {0};

	cr_assert_eq(parse(&o, &err, argv), 0, "%s", err.msg);
	cr_assert_eq(o.n_ports, 2);
	cr_expect_str_eq(o.ports[0], "127.0.0.1:auto:8080");
	cr_expect_str_eq(o.ports[1], "[::1]:9000:80");
	cr_expect_str_eq(o.argv[0], "true");
	options_free(&o);
}

/* -t is --tty (Docker's), -p is --port; --ttl and --policy have no short
 * form any more (CHANGELOG.md). */
Test(args, short_forms_tty_and_port)
{
	char *argv[] = {"run",	 "-t",	 "-p",	     "127.0.0.1:auto:80",
			"--ttl", "2s",	 "--policy", "x.json",
			"--",	 "true", NULL};
	char *no[] = {"run", "--no-tty", "true", NULL};
	char *t5[] = {"run", "-t", "5s", NULL};
	struct options o;
	struct err err = {0};

	cr_assert_eq(parse(&o, &err, argv), 0, "%s", err.msg);
	cr_assert_eq(o.tty, OPT_TTY_YES);
	cr_assert_eq(o.n_ports, 1);
	cr_assert_eq(o.ttl_ms, 2000);
	cr_assert_str_eq(o.policy_path, "x.json");
	options_free(&o);
	cr_assert_eq(parse(&o, &err, no), 0, "%s", err.msg);
	cr_assert_eq(o.tty, OPT_TTY_NO);
	options_free(&o);
	/* -t takes no value: "-t 5s" runs the command "5s". */
	cr_assert_eq(parse(&o, &err, t5), 0);
	cr_assert_str_eq(o.argv[0], "5s");
	options_free(&o);
	bad((char *[]){"run", "--tty", "--detach", "true", NULL}, "--tty and --detach");
	/* An unknown short option inside a cluster is named, not the word
	 * before it; Docker's -i gets what to do instead. */
	bad((char *[]){"run", "-it", "true", NULL}, "-i: not needed: stdin is always relayed");
	bad((char *[]){"run", "-tx", "true", NULL}, "-x: unknown option");
	bad((char *[]){"run", "--bogus", "true", NULL}, "--bogus: unknown option");
	bad((char *[]){"run", "-p", NULL}, "needs an argument");
	bad((char *[]){"run", "--weaken", "direct", "true", NULL}, "direct-stdio");
}

Test(args, stdio_mode_choice)
{
	struct options o = {0};

	o.tty = OPT_TTY_NO;
	cr_assert_eq(stdio_choose(&o), STDIO_PIPES);
	o.tty = OPT_TTY_YES;
	cr_assert_eq(stdio_choose(&o), STDIO_TTY);
	/* Detached: /dev/null and the capped output's pipes (output.c). */
	o.detach = true;
	cr_assert_eq(stdio_choose(&o), STDIO_INHERIT);
	o.detach = false;
	o.weaken = WEAKEN_DIRECT_STDIO;
	cr_assert_eq(stdio_choose(&o), STDIO_DIRECT);
	o.weaken = WEAKEN_NO_NEW_SESSION;
	cr_assert_eq(stdio_choose(&o), STDIO_DIRECT);
	cr_assert_str_eq(weaken_name(WEAKEN_DIRECT_STDIO), "direct-stdio");
}

/* "idmap INDEX": only the index of a BIND op of the plan. */
Test(plan, idmap_messages_name_a_bind)
{
	struct policy *p = load(two_binds);
	struct mount_plan plan = {0};
	size_t i = 99;

	cr_assert_eq(mounts_plan(p, 0, &plan), 0);
	cr_assert_eq(plan.ops[0].kind, MOUNT_OP_BIND);
	cr_assert_eq(mounts_idmap_decode(&plan, "0", &i), 0);
	cr_assert_eq(i, 0);
	cr_assert_eq(plan.ops[1].kind, MOUNT_OP_PROC);
	cr_assert_eq(mounts_idmap_decode(&plan, "1", &i), -EINVAL, "not a bind");
	cr_assert_eq(mounts_idmap_decode(&plan, "99", &i), -EINVAL, "out of range");
	cr_assert_eq(mounts_idmap_decode(&plan, "0x", &i), -EINVAL);
	cr_assert_eq(mounts_idmap_decode(&plan, "-1", &i), -EINVAL);
	cr_assert_eq(mounts_idmap_decode(&plan, "", &i), -EINVAL);
	cr_assert_eq(mounts_idmap_decode(&plan, "184467440737095516160", &i), -EINVAL);
	mounts_plan_free(&plan);
	policy_free(p);
}

/* subuid(5) lines: root's by name or by uid 0, the first that is whole. */
Test(launcher, subid_parse)
{
	static const struct {
		const char *text;
		int rc;
		uint32_t start, count;
	} cases[] = {
	    {"root:100000:65536\n", 0, 100000, 65536},
	    {"alice:1:2\n0:5:6", 0, 5, 6},
	    {"# root:1:1\nroot:7:8\nroot:9:9\n", 0, 7, 8},
	    {"root:x:1\nroot:3:4\n", 0, 3, 4},
	    {"rooty:1:1\nroo:1:1\n00:1:1x\n", -ENOENT, 0, 0},
	    {"root:1:0\n", -ENOENT, 0, 0},
	    {"root:4294967295:1\n", -ENOENT, 0, 0},
	    {"root:4294967294:2\n", -ENOENT, 0, 0},
	    {"root:1:1:\n", -ENOENT, 0, 0},
	    {"root:1\n", -ENOENT, 0, 0},
	    {"root:-1:5\n", -ENOENT, 0, 0},
	    {":1:1\n", -ENOENT, 0, 0},
	    {"", -ENOENT, 0, 0},
	    {"root:99999999999:1\n", -ENOENT, 0, 0},
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		uint32_t start = 0, count = 0;
		int rc =
		    subid_parse(cases[i].text, strlen(cases[i].text), "root", 0, &start, &count);

		cr_assert_eq(rc, cases[i].rc, "%s: %d", cases[i].text, rc);
		if (rc == 0)
			cr_assert(start == cases[i].start && count == cases[i].count, "%s: %u %u",
				  cases[i].text, start, count);
	}
}

/* The supervisor's "error busy" to a client whose request it never read:
 * it replies and closes with the request still queued, and the kernel
 * reports ECONNRESET to the client once before the reply. */
static void refused_unread(int sv[2])
{
	cr_assert_eq(socketpair(AF_UNIX, SOCK_SEQPACKET, 0, sv), 0);
	cr_assert_eq(send(sv[0], "exec", 4, 0), 4);
	cr_assert_eq(send(sv[1], "error busy", 10, 0), 10);
	cr_assert_eq(close(sv[1]), 0);
}

Test(reply, read_past_the_reset_of_a_refusal)
{
	char buf[64];
	int sv[2];

	refused_unread(sv);
	cr_assert_eq(cli_recv_reply(sv[0], buf, sizeof(buf), 0), 10);
	cr_assert_str_eq(buf, "error busy");
	/* Then the end, as any closed peer. */
	cr_assert_eq(cli_recv_reply(sv[0], buf, sizeof(buf), MSG_DONTWAIT), 0);
	close(sv[0]);

	/* Nothing came before the close: the reset reads as the end. */
	cr_assert_eq(socketpair(AF_UNIX, SOCK_SEQPACKET, 0, sv), 0);
	cr_assert_eq(send(sv[0], "exec", 4, 0), 4);
	cr_assert_eq(close(sv[1]), 0);
	cr_assert_eq(cli_recv_reply(sv[0], buf, sizeof(buf), 0), 0);
	close(sv[0]);
}

/* The weakened twin: a plain recv(2) sees only the reset, the words the
 * clients printed as "the connection closed without the command's status"
 * (or "the supervisor went away") under load. */
Test(reply, weakened_plain_recv_reports_the_reset_first)
{
	char buf[64];
	int sv[2];

	refused_unread(sv);
	errno = 0;
	cr_assert_eq(recv(sv[0], buf, sizeof(buf), 0), -1);
	cr_assert_eq(errno, ECONNRESET);
	close(sv[0]);
}
