/* Unit tests for the pure parts of sessions: names and ids, /proc/PID/stat
 * parsing, session.json both ways, the "stopped" ending, and the run
 * options --detach and --name. */
#include <criterion/criterion.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../../include/exitcodes.h"
#include "../../launcher/launcher.h"
#include "../../launcher/supervisor/outcome.h"
#include "unit.h"

TestSuite(session, .fini = unit_leak_check);

Test(session, names)
{
	char long_name[66];

	cr_assert(session_name_valid("web"));
	cr_assert(session_name_valid("a.b-c_D9"));
	cr_assert(session_name_valid("..."));
	memset(long_name, 'x', 64);
	long_name[64] = '\0';
	cr_assert(session_name_valid(long_name));
	long_name[64] = 'x';
	long_name[65] = '\0';
	cr_assert_not(session_name_valid(long_name));
	cr_assert_not(session_name_valid(""));
	cr_assert_not(session_name_valid("."));
	cr_assert_not(session_name_valid(".."));
	cr_assert_not(session_name_valid("a/b"));
	cr_assert_not(session_name_valid("a b"));
	cr_assert_not(session_name_valid("caf\xc3\xa9"));
}

Test(session, ids)
{
	cr_assert(session_id_valid("0123456789ab"));
	cr_assert_not(session_id_valid("0123456789AB"));
	cr_assert_not(session_id_valid("0123456789a"));
	cr_assert_not(session_id_valid("0123456789abc"));
	cr_assert_not(session_id_valid("../../etc/pa"));
}

Test(session, parse_stat)
{
	/* A command name with ") " and spaces must not shift the fields. */
	const char line[] = "4242 (evil) 1 2 3) S 1 4242 4242 0 -1 4194560 100 0 0 0 1 2 0 0 20 0 "
			    "1 0 987654 1000 10 18446744073709551615\n";
	unsigned long long start = 0;
	char state = 0;

	cr_assert_eq(session_parse_stat(line, &state, &start), 0);
	cr_assert_eq(state, 'S');
	cr_assert_eq(start, 987654ull);
	cr_assert_lt(session_parse_stat("4242 (x) S 1 2", &state, &start), 0);
	cr_assert_lt(session_parse_stat("no parenthesis", &state, &start), 0);
	cr_assert_lt(session_parse_stat("", &state, &start), 0);
}

Test(session, own_identity_is_alive_and_a_wrong_start_time_is_not)
{
	struct proc_id me, other;

	cr_assert_eq(proc_identity(getpid(), &me), 0);
	cr_assert(proc_alive(&me));
	other = me;
	other.start_time++;
	cr_assert_not(proc_alive(&other));
	other.pid = 0;
	cr_assert_not(proc_alive(&other));
}

static struct session_info sample(void)
{
	struct session_info i = {
	    .id = "0123456789ab",
	    .name = "web",
	    .owner = 1000,
	    .generation = 3,
	    .supervisor = {.pid = 10, .start_time = 123456789012ull},
	    .init = {.pid = 11, .start_time = 123456789013ull},
	    .created = "2026-01-02T03:04:05.678Z",
	    .expires = "",
	    .state = SESSION_ENDED,
	    .status = 143,
	    .ended = "stopped",
	    .policy_sha256 = "ab",
	    .detached = true,
	};
	return i;
}

static void same(const struct session_info *a, const struct session_info *b, const char *text)
{
	cr_assert_str_eq(a->id, b->id, "%s", text);
	cr_assert_str_eq(a->name, b->name, "%s", text);
	cr_assert_eq(a->owner, b->owner, "%s", text);
	cr_assert_eq(a->generation, b->generation, "%s", text);
	cr_assert_eq(a->supervisor.pid, b->supervisor.pid, "%s", text);
	cr_assert_eq(a->supervisor.start_time, b->supervisor.start_time, "%s", text);
	cr_assert_eq(a->init.pid, b->init.pid, "%s", text);
	cr_assert_eq(a->init.start_time, b->init.start_time, "%s", text);
	cr_assert_str_eq(a->created, b->created, "%s", text);
	cr_assert_str_eq(a->expires, b->expires, "%s", text);
	cr_assert_eq(a->state, b->state, "%s", text);
	cr_assert_eq(a->status, b->status, "%s", text);
	cr_assert_str_eq(a->ended, b->ended, "%s", text);
	cr_assert_str_eq(a->policy_sha256, b->policy_sha256, "%s", text);
	cr_assert_eq(a->detached, b->detached, "%s", text);
}

Test(session, json_round_trip)
{
	struct session_info in = sample(), out;
	struct err err = {0};
	char *text = session_info_json(&in);

	cr_assert_not_null(text);
	cr_assert(strstr(text, "\"expires\":\tnull"), "%s", text);
	cr_assert_eq(session_info_parse(text, strlen(text), &out, &err), 0, "%s", err.msg);
	same(&in, &out, text);
	free(text);

	/* Unnamed, running, before the sandbox exists: no status, init null. */
	in.name[0] = '\0';
	in.state = SESSION_STARTING;
	in.init = (struct proc_id){0};
	in.status = 0;
	in.ended[0] = '\0';
	text = session_info_json(&in);
	cr_assert(strstr(text, "\"name\":\tnull") && strstr(text, "\"init\":\tnull"), "%s", text);
	cr_assert_null(strstr(text, "status"), "%s", text);
	cr_assert_eq(session_info_parse(text, strlen(text), &out, &err), 0, "%s", err.msg);
	same(&in, &out, text);
	free(text);
}

static void bad_json(const char *text, const char *expect)
{
	struct session_info out;
	struct err err = {0};

	cr_assert_lt(session_info_parse(text, strlen(text), &out, &err), 0, "accepted %s", text);
	cr_assert(strstr(err.msg, expect), "message \"%s\" lacks \"%s\"", err.msg, expect);
}

#define GOOD_HEAD                                                                      \
	"{\"id\":\"0123456789ab\",\"name\":null,\"owner_uid\":1,\"generation\":1,"     \
	"\"supervisor\":{\"pid\":5,\"start_time\":7},\"init\":null,\"created\":\"x\"," \
	"\"expires\":null,\"policy_sha256\":\"\","

Test(session, json_refused)
{
	bad_json("[]", "not a JSON object");
	bad_json("{", "not a JSON object");
	bad_json(GOOD_HEAD "\"state\":\"zombie\"}", "state: unknown");
	bad_json(GOOD_HEAD "\"state\":\"ended\"}", "status");
	bad_json(GOOD_HEAD "\"state\":\"ended\",\"status\":256,\"ended\":\"exit\"}", "status");
	bad_json(GOOD_HEAD "\"state\":\"ended\",\"status\":1.5,\"ended\":\"exit\"}", "status");
	bad_json("{\"id\":\"../../x\",\"name\":null,\"owner_uid\":1,\"generation\":1,"
		 "\"supervisor\":{\"pid\":5,\"start_time\":7},\"init\":null,\"created\":\"x\","
		 "\"expires\":null,\"policy_sha256\":\"\",\"state\":\"running\"}",
		 "bad id");
	bad_json("{\"id\":\"0123456789ab\",\"name\":null,\"owner_uid\":1,\"generation\":1,"
		 "\"supervisor\":{\"pid\":0,\"start_time\":7},\"init\":null,\"created\":\"x\","
		 "\"expires\":null,\"policy_sha256\":\"\",\"state\":\"running\"}",
		 "supervisor");
	bad_json("{\"id\":\"0123456789ab\",\"name\":null,\"owner_uid\":1,\"generation\":0,"
		 "\"supervisor\":{\"pid\":5,\"start_time\":7},\"init\":null,\"created\":\"x\","
		 "\"expires\":null,\"policy_sha256\":\"\",\"state\":\"running\"}",
		 "generation");
}

Test(session, stopped_ending)
{
	cr_assert_str_eq(ending_name(ENDING_STOPPED), "stopped");
	cr_assert_eq(exit_status_for(ENDING_STOPPED, 15), 143);
	cr_assert_eq(exit_status_for(ENDING_STOPPED, -1), 137);
}

static int parse(struct options *o, struct err *err, char **argv)
{
	int argc = 0;

	while (argv[argc])
		argc++;
	return options_parse(argc, argv, o, err);
}

Test(session, run_options)
{
	char *ok[] = {"run", "--detach", "--name", "web.1", "--", "sleep", "1", NULL};
	char *bad[] = {"run", "--name", "../x", "true", NULL};
	char *missing[] = {"run", "--name", NULL};
	struct options o;
	struct err err = {0};

	cr_assert_eq(parse(&o, &err, ok), 0, "%s", err.msg);
	cr_assert(o.detach);
	cr_assert_str_eq(o.name, "web.1");
	cr_assert_str_eq(o.argv[0], "sleep");
	options_free(&o);
	cr_assert_eq(parse(&o, &err, bad), -EINVAL);
	cr_assert(strstr(err.msg, "--name ../x: invalid name"), "%s", err.msg);
	options_free(&o);
	cr_assert_eq(parse(&o, &err, missing), -EINVAL);
	cr_assert(strstr(err.msg, "needs an argument"), "%s", err.msg);
	options_free(&o);
}

/* ------------------------------------------------------ exec requests */

Test(session, exec_request_round_trip)
{
	const char *env[] = {"FOO=bar=baz", "HOME=/tmp"};
	char *argv[] = {"sh", "-c", "echo hi", "", NULL};
	struct session_exec x;
	struct err err = {0};
	char *pkt = NULL;
	size_t len = 0;

	cr_assert_eq(session_exec_encode("/work dir", env, 2, argv, false, &pkt, &len, &err), 0,
		     "%s", err.msg);
	cr_assert_eq(memcmp(pkt, "exec\0cwd=/work dir\0env=FOO=bar=baz\0", 35), 0);
	cr_assert_eq(session_exec_decode(pkt, len, &x, &err), 0, "%s", err.msg);
	cr_assert_str_eq(x.cwd, "/work dir");
	cr_assert_eq(x.n_env, 2);
	cr_assert_str_eq(x.env[0], "FOO=bar=baz");
	cr_assert_str_eq(x.env[1], "HOME=/tmp");
	cr_assert_eq(x.argc, 4);
	cr_assert_str_eq(x.argv[2], "echo hi");
	cr_assert_str_eq(x.argv[3], "");
	cr_assert_null(x.argv[4]);
	for (int i = 0; i < 3; i++)
		cr_assert_eq(x.stdio[i], -1);
	session_exec_free(&x);
	cr_assert_null(x.buf);
	free(pkt);

	/* No cwd, no env. */
	cr_assert_eq(session_exec_encode(NULL, NULL, 0, argv, false, &pkt, &len, &err), 0);
	cr_assert_eq(session_exec_decode(pkt, len, &x, &err), 0, "%s", err.msg);
	cr_assert_null(x.cwd);
	cr_assert_eq(x.n_env, 0);
	session_exec_free(&x);
	free(pkt);
}

Test(session, exec_request_limits)
{
	char *big = malloc(SESSION_EXEC_MAX);
	char *argv[] = {"echo", big, NULL}, *none[] = {NULL};
	struct err err = {0};
	char *pkt = NULL;
	size_t len = 0;

	cr_assert_not_null(big);
	memset(big, 'x', SESSION_EXEC_MAX - 1);
	big[SESSION_EXEC_MAX - 1] = '\0';
	cr_assert_eq(session_exec_encode(NULL, NULL, 0, argv, false, &pkt, &len, &err), -E2BIG);
	cr_assert(strstr(err.msg, "argument list too long"), "%s", err.msg);
	/* Exactly at the limit is fine. */
	big[SESSION_EXEC_MAX - sizeof("exec") - 2 * 4 - sizeof("echo") - 1] = '\0';
	cr_assert_eq(session_exec_encode(NULL, NULL, 0, argv, false, &pkt, &len, &err), 0, "%s",
		     err.msg);
	cr_assert_eq(len, (size_t)SESSION_EXEC_MAX);
	free(pkt);
	cr_assert_eq(session_exec_encode(NULL, NULL, 0, none, false, &pkt, &len, &err), -EINVAL);
	cr_assert_eq(session_exec_encode(NULL, NULL, 0, NULL, false, &pkt, &len, &err), -EINVAL);
	free(big);
}

#define DEC(lit, expect_rc, expect_msg)                                        \
	do {                                                                   \
		struct session_exec x_;                                        \
		struct err e_ = {0};                                           \
		int rc_ = session_exec_decode(lit, sizeof(lit) - 1, &x_, &e_); \
		cr_assert_eq(rc_, expect_rc, "%s: %d %s", #lit, rc_, e_.msg);  \
		cr_assert(strstr(e_.msg, expect_msg), "%s: %s", #lit, e_.msg); \
		cr_assert_null(x_.buf);                                        \
	} while (0)

Test(session, exec_request_malformed)
{
	char *huge = calloc(1, SESSION_EXEC_MAX + 2);
	struct session_exec x;
	struct err err = {0};

	DEC("", -EINVAL, "not an exec request");
	DEC("exec", -EINVAL, "not an exec request");
	DEC("info\0arg=true\0", -EINVAL, "not an exec request");
	DEC("exec\0arg=true", -EINVAL, "not NUL-terminated");
	DEC("exec\0", -EINVAL, "no command");
	DEC("exec\0cwd=/\0env=A=b\0", -EINVAL, "no command");
	DEC("exec\0arg=\0", -EINVAL, "no command");
	DEC("exec\0\0arg=true\0", -EINVAL, "unknown field 0");
	DEC("exec\0arg=true\0ARG=x\0", -EINVAL, "unknown field 1");
	DEC("exec\0cwd=rel\0arg=true\0", -EINVAL, "not absolute");
	DEC("exec\0cwd=/a\0cwd=/b\0arg=true\0", -EINVAL, "more than one cwd");
	DEC("exec\0env=NOEQUALS\0arg=true\0", -EINVAL, "not NAME=VALUE");
	DEC("exec\0env=1BAD=x\0arg=true\0", -EINVAL, "not NAME=VALUE");
	DEC("exec\0env==x\0arg=true\0", -EINVAL, "not NAME=VALUE");
	DEC("exec\0tty=0\0arg=true\0", -EINVAL, "tty=0 is not 1");
	DEC("exec\0tty=\0arg=true\0", -EINVAL, "is not 1");
	DEC("exec\0tty=1\0tty=1\0arg=true\0", -EINVAL, "more than one tty");
	DEC("exec\0tty=1\0", -EINVAL, "no command");
	cr_assert_not_null(huge);
	memcpy(huge, "exec\0arg=x", 10);
	cr_assert_eq(session_exec_decode(huge, SESSION_EXEC_MAX + 1, &x, &err), -E2BIG);
	cr_assert(strstr(err.msg, "argument list too long"));
	free(huge);
	/* A zeroed request frees to nothing and closes no fd (not fd 0). */
	memset(&x, 0, sizeof(x));
	session_exec_free(&x);
	cr_assert_eq(fcntl(0, F_GETFD) >= 0 || errno != EBADF, true);
}

/* The main command ended, a leased service runs on: state "retained" with
 * the main command's status, and each lease as ps and wait read it back. */
Test(session, json_round_trip_with_leases)
{
	struct session_info in = sample(), out;
	struct err err = {0};
	char *text;

	in.state = SESSION_RETAINED;
	in.status = 7;
	snprintf(in.ended, sizeof(in.ended), "exit");
	in.n_leases = 3;
	in.leases[0] = (struct session_lease){.service = "web",
					      .pid = 2,
					      .lease_ms = 300000,
					      .started = "2026-01-02T03:04:05.678Z",
					      .expires = "2026-01-02T03:09:05.678Z",
					      .state = "retained"};
	in.leases[1] = (struct session_lease){.service = "db",
					      .pid = 3,
					      .started = "2026-01-02T03:04:05.679Z",
					      .state = "ended",
					      .ended = "main-ended signal:15"};
	in.leases[2] = (struct session_lease){
	    .service = "bad", .lease_ms = 1000, .state = "ended", .ended = "exec-error 2"};
	text = session_info_json(&in);
	cr_assert_not_null(text);
	cr_assert(strstr(text, "\"state\":\t\"retained\""), "%s", text);
	cr_assert(strstr(text, "\"status\":\t7"), "%s", text);
	/* Each lease names its session, owner and generation. */
	cr_assert(strstr(text, "\"session\":\t\"0123456789ab\""), "%s", text);
	cr_assert(strstr(text, "\"owner_uid\":\t1000"), "%s", text);
	cr_assert(strstr(text, "\"generation\":\t3"), "%s", text);
	cr_assert_eq(session_info_parse(text, strlen(text), &out, &err), 0, "%s", err.msg);
	same(&in, &out, text);
	cr_assert_eq(out.n_leases, 3, "%s", text);
	for (size_t k = 0; k < 3; k++) {
		const struct session_lease *a = &in.leases[k], *b = &out.leases[k];

		cr_assert_str_eq(a->service, b->service, "%s", text);
		cr_assert_eq(a->pid, b->pid, "%s", text);
		cr_assert_eq(a->lease_ms, b->lease_ms, "%s", text);
		cr_assert_str_eq(a->started, b->started, "%s", text);
		cr_assert_str_eq(a->expires, b->expires, "%s", text);
		cr_assert_str_eq(a->state, b->state, "%s", text);
		cr_assert_str_eq(a->ended, b->ended, "%s", text);
	}
	free(text);

	/* An entry without "leases" (older versions) has none. */
	cr_assert_eq(session_info_parse(GOOD_HEAD "\"state\":\"running\"}",
					strlen(GOOD_HEAD "\"state\":\"running\"}"), &out, &err),
		     0, "%s", err.msg);
	cr_assert_eq(out.n_leases, 0);
}

#define LEASE(fields) GOOD_HEAD "\"state\":\"running\",\"leases\":[{" fields "}]}"
#define LEASE_OK                                                                             \
	"\"service\":\"web\",\"pid\":2,\"lease_ms\":1000,\"started\":null,\"expires\":null," \
	"\"ended\":null,"

Test(session, json_leases_refused)
{
	struct session_info out;
	struct err err = {0};
	char many[8192];

	cr_assert_eq(session_info_parse(LEASE(LEASE_OK "\"state\":\"running\""),
					strlen(LEASE(LEASE_OK "\"state\":\"running\"")), &out,
					&err),
		     0, "%s", err.msg);
	bad_json(GOOD_HEAD "\"state\":\"running\",\"leases\":{}}", "leases");
	bad_json(GOOD_HEAD "\"state\":\"running\",\"leases\":[1]}", "service");
	bad_json(LEASE("\"pid\":2,\"lease_ms\":1,\"started\":null,\"expires\":null,"
		       "\"ended\":null,\"state\":\"running\""),
		 "service");
	bad_json(LEASE("\"service\":7,\"pid\":2,\"lease_ms\":1,\"started\":null,"
		       "\"expires\":null,\"ended\":null,\"state\":\"running\""),
		 "service");
	bad_json(LEASE("\"service\":\"web\",\"pid\":-1,\"lease_ms\":1,\"started\":null,"
		       "\"expires\":null,\"ended\":null,\"state\":\"running\""),
		 "pid");
	bad_json(LEASE("\"service\":\"web\",\"pid\":2,\"lease_ms\":1.5,\"started\":null,"
		       "\"expires\":null,\"ended\":null,\"state\":\"running\""),
		 "lease_ms");
	bad_json(LEASE("\"service\":\"web\",\"pid\":2,\"started\":null,"
		       "\"expires\":null,\"ended\":null,\"state\":\"running\""),
		 "lease_ms");
	bad_json(LEASE(LEASE_OK "\"state\":null"), "state");
	bad_json(LEASE(LEASE_OK "\"state\":\"zombie\""), "state");
	bad_json(LEASE("\"service\":\"web\",\"pid\":2,\"lease_ms\":1,\"started\":7,"
		       "\"expires\":null,\"ended\":null,\"state\":\"running\""),
		 "started");
	bad_json(LEASE("\"service\":\"web\",\"pid\":2,\"lease_ms\":1,\"started\":null,"
		       "\"expires\":\""
		       "0123456789012345678901234567890123456789"
		       "\","
		       "\"ended\":null,\"state\":\"running\""),
		 "expires");
	/* At most SESSION_LEASES_MAX. */
	snprintf(many, sizeof(many), "%s\"state\":\"running\",\"leases\":[", GOOD_HEAD);
	for (int i = 0; i <= SESSION_LEASES_MAX; i++)
		snprintf(many + strlen(many), sizeof(many) - strlen(many),
			 "%s{" LEASE_OK "\"state\":\"running\"}", i ? "," : "");
	strcat(many, "]}");
	bad_json(many, "leases");
	/* A retained session has the main command's status. */
	bad_json(GOOD_HEAD "\"state\":\"retained\"}", "status");
}

/* -t: "tty=1" goes with the request and comes back; without it, no tty. */
Test(session, exec_request_tty)
{
	char *argv[] = {"bash", NULL}, *pkt = NULL;
	struct session_exec x;
	struct err err = {0};
	size_t len = 0;

	cr_assert_eq(session_exec_encode(NULL, NULL, 0, argv, true, &pkt, &len, &err), 0, "%s",
		     err.msg);
	cr_assert_eq(session_exec_decode(pkt, len, &x, &err), 0, "%s", err.msg);
	cr_assert(x.tty);
	cr_assert_eq(x.argc, 1);
	cr_assert_str_eq(x.argv[0], "bash");
	session_exec_free(&x);
	free(pkt);
	cr_assert_eq(session_exec_encode(NULL, NULL, 0, argv, false, &pkt, &len, &err), 0);
	cr_assert_eq(session_exec_decode(pkt, len, &x, &err), 0, "%s", err.msg);
	cr_assert_not(x.tty);
	session_exec_free(&x);
	free(pkt);
}

/* A running entry whose supervisor is gone is stale, unless the
 * supervisor left its SESSION_FINAL_LOST name: then it ended with that
 * status. A malformed name is no status. */
static enum session_state read_with(const char *leftover, struct session_info *out)
{
	char dir[] = "/tmp/paddock-unit-XXXXXX";
	struct session_info in = sample();
	struct registry reg = {.fd = -1};
	struct err err = {0};
	char *text;
	int dfd, fd;

	cr_assert_not_null(mkdtemp(dir));
	reg.fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	cr_assert_geq(reg.fd, 0);
	cr_assert_eq(mkdirat(reg.fd, in.id, 0700), 0);
	dfd = openat(reg.fd, in.id, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	in.owner = getuid();
	in.state = SESSION_RUNNING;
	in.supervisor = (struct proc_id){.pid = getpid(), .start_time = 1}; /* not us: gone */
	text = session_info_json(&in);
	fd = openat(dfd, "session.json", O_WRONLY | O_CREAT | O_EXCL, 0600);
	cr_assert(fd >= 0 && write(fd, text, strlen(text)) == (ssize_t)strlen(text));
	close(fd);
	free(text);
	if (leftover)
		close(openat(dfd, leftover, O_WRONLY | O_CREAT | O_EXCL, 0600));
	cr_assert_eq(session_read(&reg, in.id, out, &err), 0, "%s", err.msg);
	if (leftover)
		unlinkat(dfd, leftover, 0);
	unlinkat(dfd, "session.json", 0);
	close(dfd);
	unlinkat(reg.fd, in.id, AT_REMOVEDIR);
	close(reg.fd);
	rmdir(dir);
	return out->state;
}

Test(session, final_lost_name_keeps_the_status)
{
	static const char *const bad[] = {
	    "final-lost.",	  "final-lost.42",
	    "final-lost.x.exit",  "final-lost.300.exit",
	    "final-lost.-1.exit", "final-lost.42.exit-with-a-name-far-too-long-for-ended",
	    "final-lost42.exit"};
	struct session_info out;

	cr_assert_eq(read_with(NULL, &out), SESSION_STALE);
	cr_assert_eq(read_with("final-lost.42.exit", &out), SESSION_ENDED);
	cr_assert_eq(out.status, 42);
	cr_assert_str_eq(out.ended, "exit");
	cr_assert(out.final_lost);
	cr_assert_eq(read_with("final-lost.143.stopped", &out), SESSION_ENDED);
	cr_assert_eq(out.status, 143);
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		memset(&out, 0, sizeof(out));
		cr_assert_eq(read_with(bad[i], &out), SESSION_STALE, "%s", bad[i]);
		cr_assert(!out.final_lost, "%s", bad[i]);
	}
}

/* ------------------------------------------------- session.json, peeked */

/* session_peek() on an exact-size malloc'd copy of len bytes, no NUL after
 * them: ASan sees any read past the end. */
static int peek(const char *text, size_t len, struct session_peek *out)
{
	char *copy = malloc(len ? len : 1);
	int rc;

	cr_assert_not_null(copy);
	memcpy(copy, text, len);
	rc = session_peek(copy, len, out);
	free(copy);
	return rc;
}

static void peek_refused(const char *text, size_t len)
{
	struct session_peek pk;

	cr_assert_eq(peek(text, len, &pk), -EINVAL, "accepted %.*s", (int)len, text);
}

static void peek_accepted(const char *text, size_t len, const char *state)
{
	struct session_peek pk;

	cr_assert_eq(peek(text, len, &pk), 0, "refused %.*s", (int)len, text);
	cr_assert_str_eq(pk.id, "0123456789ab", "%.*s", (int)len, text);
	cr_assert_eq(pk.owner, 1000u, "%.*s", (int)len, text);
	cr_assert_eq(pk.supervisor_pid, 4242, "%.*s", (int)len, text);
	cr_assert_str_eq(pk.state, state, "%.*s", (int)len, text);
}

#define PEEK_BAD(lit)	    peek_refused(lit, sizeof(lit) - 1)
#define PEEK_OK(lit, state) peek_accepted(lit, sizeof(lit) - 1, state)

static struct session_info running(void)
{
	struct session_info i = sample();

	i.owner = 1000;
	i.state = SESSION_RUNNING;
	i.supervisor = (struct proc_id){.pid = 4242, .start_time = 123456789012ull};
	i.status = 0;
	i.ended[0] = '\0';
	return i;
}

/* What session_info_json() writes, peek reads as the codec does. */
Test(session, peek_reads_the_codec)
{
	struct session_info in = running(), out;
	struct session_peek pk;
	struct err err = {0};
	char *text = session_info_json(&in);

	cr_assert_not_null(text);
	cr_assert_eq(session_peek(text, strlen(text), &pk), 0, "%s", text);
	cr_assert_str_eq(pk.id, "0123456789ab", "%s", text);
	cr_assert_eq(pk.owner, 1000u, "%s", text);
	cr_assert_eq(pk.supervisor_pid, 4242, "%s", text);
	cr_assert_str_eq(pk.state, "running", "%s", text);
	cr_assert_eq(session_info_parse(text, strlen(text), &out, &err), 0, "%s", err.msg);
	cr_assert_str_eq(pk.state, session_state_name(out.state));
	free(text);

	/* Ended, with its status: the state is what peek says it is. */
	in.state = SESSION_ENDED;
	in.status = 143;
	snprintf(in.ended, sizeof(in.ended), "stopped");
	text = session_info_json(&in);
	cr_assert_not_null(text);
	cr_assert_eq(session_peek(text, strlen(text), &pk), 0, "%s", text);
	cr_assert_str_eq(pk.state, "ended", "%s", text);
	cr_assert_eq(pk.supervisor_pid, 4242, "%s", text);
	free(text);
}

/* The command is the workload's words and the leases have keys of their
 * own ("state", "owner_uid"): values to skip, not fields to read. */
Test(session, peek_skips_a_hostile_command)
{
	struct session_info in = running();
	struct session_peek pk;
	char *text;

	snprintf(in.name, sizeof(in.name), "web");
	snprintf(in.command, sizeof(in.command), "%s",
		 "sh -c \"x\\\", \"state\": \"ended\", \"supervisor\": {\"pid\": 1}, "
		 "\"id\": \"ffffffffffff\", \"owner_uid\": 0} \\\\\" \\");
	in.n_leases = 1;
	in.leases[0] = (struct session_lease){.service = "db",
					      .pid = 1,
					      .started = "2026-01-02T03:04:05.679Z",
					      .state = "ended",
					      .ended = "main-ended signal:15"};
	text = session_info_json(&in);
	cr_assert_not_null(text);
	cr_assert(strstr(text, "\\\"state\\\": \\\"ended\\\""), "%s", text);
	cr_assert(strstr(text, "\"owner_uid\":\t1000"), "%s", text);
	cr_assert_eq(peek(text, strlen(text), &pk), 0, "%s", text);
	cr_assert_str_eq(pk.id, "0123456789ab", "%s", text);
	cr_assert_eq(pk.owner, 1000u, "%s", text);
	cr_assert_eq(pk.supervisor_pid, 4242, "%s", text);
	cr_assert_str_eq(pk.state, "running", "%s", text);
	free(text);
}

#define PEEK_HEAD  "{\"id\": \"0123456789ab\", \"owner_uid\": 1000, "
#define PEEK_SUP   "\"supervisor\": {\"pid\": 4242, \"start_time\": 7}, "
#define PEEK_STATE "\"state\": \"running\""

Test(session, peek_refuses)
{
	char nul[] = PEEK_HEAD PEEK_SUP "\"command\": \"a b\", " PEEK_STATE "}";
	char *p;

	/* The text each case below changes, and what JSON allows of it. */
	PEEK_OK(PEEK_HEAD PEEK_SUP PEEK_STATE "}", "running");
	PEEK_OK(" \t\r\n" PEEK_HEAD PEEK_SUP PEEK_STATE " }\n", "running");
	PEEK_OK(PEEK_HEAD "\"supervisor\": {\"pid\": 4242}, \"state\": \"0123456789abcde\"}",
		"0123456789abcde");
	PEEK_OK(PEEK_HEAD PEEK_SUP
		"\"x\": [1, -2.5e+3, true, false, null, {\"a\": []}], " PEEK_STATE "}",
		"running");

	/* Each field once: cJSON would read the first "state". */
	PEEK_BAD(PEEK_HEAD PEEK_SUP PEEK_STATE ", \"state\": \"ended\"}");
	/* An escaped key is a key to cJSON, which decodes it and takes the
	 * first: refused, never skipped (the fuzz case's differential check
	 * found both). */
	PEEK_BAD(PEEK_HEAD PEEK_SUP "\"st\\u0061te\": \"ended\", " PEEK_STATE "}");
	PEEK_BAD(PEEK_HEAD "\"supervisor\": {\"p\\u0069d\": 7, \"pid\": 4242}, " PEEK_STATE "}");
	/* Not JSON in a skipped value. */
	PEEK_BAD(PEEK_HEAD PEEK_SUP "\"x\": -true, " PEEK_STATE "}");
	PEEK_BAD(PEEK_HEAD PEEK_SUP "\"x\": 1.2.3e+-e, " PEEK_STATE "}");
	PEEK_BAD(PEEK_HEAD PEEK_SUP "\"x\": 1--, " PEEK_STATE "}");
	PEEK_BAD(PEEK_HEAD PEEK_SUP "\"x\": 1., " PEEK_STATE "}");
	PEEK_BAD("{\"state\": \"ended\", \"id\": \"0123456789ab\", \"owner_uid\": 1000, " PEEK_SUP
		     PEEK_STATE "}");
	PEEK_BAD(PEEK_HEAD PEEK_SUP "\"id\": \"ffffffffffff\", " PEEK_STATE "}");
	PEEK_BAD(PEEK_HEAD PEEK_SUP "\"owner_uid\": 0, " PEEK_STATE "}");
	PEEK_BAD(PEEK_HEAD PEEK_SUP PEEK_SUP PEEK_STATE "}");
	PEEK_BAD(PEEK_HEAD "\"supervisor\": {\"pid\": 4242, \"pid\": 1}, " PEEK_STATE "}");
	/* A key with an escape is not one of ours: no "state" here. */
	PEEK_BAD(PEEK_HEAD PEEK_SUP "\"st\\u0061te\": \"running\"}");
	/* Values: plain strings, whole non-negative numbers. */
	PEEK_BAD(PEEK_HEAD PEEK_SUP "\"state\": \"runn\\u0069ng\"}");
	PEEK_BAD(PEEK_HEAD PEEK_SUP "\"state\": 1}");
	PEEK_BAD(PEEK_HEAD "\"supervisor\": {\"start_time\": 7}, " PEEK_STATE "}");
	PEEK_BAD(PEEK_HEAD "\"supervisor\": {}, " PEEK_STATE "}");
	PEEK_BAD(PEEK_HEAD "\"supervisor\": 4242, " PEEK_STATE "}");
	PEEK_BAD(PEEK_HEAD "\"supervisor\": {\"pid\": -5}, " PEEK_STATE "}");
	PEEK_BAD(PEEK_HEAD "\"supervisor\": {\"pid\": 1.5}, " PEEK_STATE "}");
	PEEK_BAD(PEEK_HEAD "\"supervisor\": {\"pid\": 1e3}, " PEEK_STATE "}");
	PEEK_BAD(PEEK_HEAD "\"supervisor\": {\"pid\": \"4242\"}, " PEEK_STATE "}");
	PEEK_BAD(PEEK_HEAD "\"supervisor\": {\"pid\": 0}, " PEEK_STATE "}");
	PEEK_BAD(PEEK_HEAD "\"supervisor\": {\"pid\": 2147483648}, " PEEK_STATE "}");
	PEEK_BAD("{\"id\": \"0123456789ab\", \"owner_uid\": -1, " PEEK_SUP PEEK_STATE "}");
	PEEK_BAD("{\"id\": \"0123456789ab\", \"owner_uid\": 4294967296, " PEEK_SUP PEEK_STATE "}");
	PEEK_BAD("{\"id\": \"0123456789abc\", \"owner_uid\": 1000, " PEEK_SUP PEEK_STATE "}");
	/* At most 15 bytes of state. */
	PEEK_BAD(PEEK_HEAD PEEK_SUP "\"state\": \"0123456789abcdef\"}");
	/* One object and nothing after it. */
	PEEK_BAD(PEEK_HEAD PEEK_SUP PEEK_STATE "} x");
	PEEK_BAD(PEEK_HEAD PEEK_SUP PEEK_STATE "}}");
	PEEK_BAD(PEEK_HEAD PEEK_SUP PEEK_STATE "}{}");
	PEEK_BAD(PEEK_HEAD PEEK_SUP PEEK_STATE ",}");
	PEEK_BAD(PEEK_HEAD PEEK_SUP PEEK_STATE);
	PEEK_BAD("[" PEEK_HEAD PEEK_SUP PEEK_STATE "}]");
	PEEK_BAD("[]");
	PEEK_BAD("{}");
	PEEK_BAD("");
	PEEK_BAD(" \n");
	/* Strings end in the text. */
	PEEK_BAD(PEEK_HEAD PEEK_SUP "\"state\": \"running}");
	PEEK_BAD(PEEK_HEAD PEEK_SUP PEEK_STATE ", \"command\": \"x}");
	PEEK_BAD(PEEK_HEAD PEEK_SUP PEEK_STATE ", \"command\": \"x\\\"}");
	PEEK_BAD(PEEK_HEAD PEEK_SUP PEEK_STATE ", \"command\": \"x\\");
	/* No NUL, in a string or between tokens. */
	PEEK_OK(PEEK_HEAD PEEK_SUP "\"command\": \"a b\", " PEEK_STATE "}", "running");
	p = strstr(nul, "a b");
	p[1] = '\0';
	peek_refused(nul, sizeof(nul) - 1);
	p[1] = ' ';
	p = strstr(nul, ", \"state\"");
	p[1] = '\0';
	peek_refused(nul, sizeof(nul) - 1);
}

/* Below the top object, at most 16 levels of arrays or objects, in a
 * skipped value at the top or in "supervisor" (a level itself); far deeper
 * is no deeper a recursion. The innermost is empty. */
static size_t nested(char *text, size_t size, const char *head, int depth, bool object,
		     const char *tail)
{
	size_t n = (size_t)snprintf(text, size, "%s", head);

	for (int k = 1; k < depth; k++)
		n += (size_t)snprintf(text + n, size - n, "%s", object ? "{\"a\": " : "[");
	n += (size_t)snprintf(text + n, size - n, "%s", object ? "{}" : "[]");
	for (int k = 1; k < depth; k++)
		n += (size_t)snprintf(text + n, size - n, "%s", object ? "}" : "]");
	n += (size_t)snprintf(text + n, size - n, "%s", tail);
	cr_assert_lt(n, size);
	return n;
}

Test(session, peek_refuses_deep_nesting)
{
	static const char *const heads[] = {PEEK_HEAD PEEK_SUP "\"x\": ",
					    PEEK_HEAD "\"supervisor\": {\"x\": "};
	static const char *const tails[] = {", " PEEK_STATE "}",
					    ", \"pid\": 4242}, " PEEK_STATE "}"};
	static char text[64 * 1024];
	size_t n;

	for (size_t h = 0; h < 2; h++)
		for (int object = 0; object <= 1; object++)
			for (int depth = 1; depth <= 20; depth++) {
				int max = 16 - (int)h;

				n = nested(text, sizeof(text), heads[h], depth, object, tails[h]);
				if (depth <= max)
					peek_accepted(text, n, "running");
				else
					peek_refused(text, n);
			}
	n = nested(text, sizeof(text), heads[0], 10000, false, tails[0]);
	peek_refused(text, n);
}

/* The text ends at len, NUL or not: what follows is not read. */
Test(session, peek_stops_at_len)
{
	struct session_info in = running();
	char *text = session_info_json(&in), *more;
	struct session_peek pk;
	size_t len;

	cr_assert_not_null(text);
	len = strlen(text);
	cr_assert_eq(text[len - 1], '}', "%s", text);
	/* Exactly the object, no NUL after it (peek() copies it so). */
	peek_accepted(text, len, "running");
	/* Garbage after len. */
	more = malloc(len + 8);
	cr_assert_not_null(more);
	memcpy(more, text, len);
	memcpy(more + len, ", \"x\":[", 8);
	cr_assert_eq(session_peek(more, len, &pk), 0);
	cr_assert_str_eq(pk.state, "running");
	cr_assert_eq(pk.supervisor_pid, 4242);
	free(more);
	/* Every shorter prefix is cut somewhere: refused, and read no
	 * further than its end. */
	for (size_t k = 0; k < len; k++)
		peek_refused(text, k);
	free(text);
}

/* exec.c routes a line about an exec'd command's call by the process's
 * session in the sandbox's pid namespace: the last numbers of NSpid and
 * NSsid in /proc/PID/status. */
Test(session, parse_nsids_reads_the_innermost_ids)
{
	pid_t pid = 0, sid = 0;

	cr_assert_eq(
	    session_parse_nsids("Name:\tsh\nNSpid:\t4012\t7\nNSsid:\t3990\t5\nX:\t1\n", &pid, &sid),
	    0);
	cr_assert_eq(pid, 7);
	cr_assert_eq(sid, 5);
	cr_assert_eq(session_parse_nsids("NSpid:\t12\nNSsid:\t1\n", &pid, &sid), 0);
	cr_assert_eq(pid, 12);
	cr_assert_eq(sid, 1);
	/* A line missing, a value that is no pid: nothing read. */
	pid = sid = 99;
	cr_assert_eq(session_parse_nsids("NSpid:\t12\n", &pid, &sid), -ENOENT);
	cr_assert_eq(session_parse_nsids("NSsid:\t1\n", &pid, &sid), -ENOENT);
	cr_assert_eq(session_parse_nsids("NSpid:\t1x\nNSsid:\t1\n", &pid, &sid), -EINVAL);
	cr_assert_eq(session_parse_nsids("NSpid:\t-3\nNSsid:\t1\n", &pid, &sid), -EINVAL);
	cr_assert_eq(session_parse_nsids("NSpid:\t\nNSsid:\t1\n", &pid, &sid), -EINVAL);
	cr_assert_eq(session_parse_nsids("NSpid:\t99999999999\nNSsid:\t1\n", &pid, &sid), -EINVAL);
	/* A key inside another line is not the key. */
	cr_assert_eq(session_parse_nsids("XNSpid:\t3\nNSsid:\t1\n", &pid, &sid), -ENOENT);
	cr_assert_eq(pid, 99);
}

/* The registry's junk (registry.c, session_sweep()): what a stopped
 * removal or registration leaves goes, what is an entry or may still
 * become one stays. */
static void mkentry(int regfd, const char *name, const char *file)
{
	int dfd;

	cr_assert_eq(mkdirat(regfd, name, 0700), 0, "%s", name);
	dfd = openat(regfd, name, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	cr_assert_geq(dfd, 0);
	if (file)
		close(openat(dfd, file, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600));
	close(dfd);
}

static bool present(int regfd, const char *name)
{
	return faccessat(regfd, name, F_OK, AT_SYMLINK_NOFOLLOW) == 0;
}

static void remove_all(int regfd, const char *dir)
{
	struct registry reg = {.fd = regfd};
	static const char *const names[] = {"0123456789ab",	 "aaaaaaaaaaaa",
					    "bbbbbbbbbbbb",	 ".old-cccccccccccc",
					    ".new-dddddddddddd", "not-an-id"};

	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (present(regfd, names[i]))
			(void)session_remove(&reg, names[i]);
	close(regfd);
	rmdir(dir);
}

Test(session, sweep_removes_what_no_entry_is)
{
	char dir[] = "/tmp/paddock-unit-XXXXXX";
	struct registry reg = {.fd = -1};
	int held;

	cr_assert_not_null(mkdtemp(dir));
	reg.fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	cr_assert_geq(reg.fd, 0);
	mkentry(reg.fd, "0123456789ab", "evidence.key");	/* a stopped removal, before */
	mkentry(reg.fd, ".old-cccccccccccc", "evidence.jsonl"); /* a stopped removal */
	mkentry(reg.fd, "aaaaaaaaaaaa", "session.json");	/* an entry */
	mkentry(reg.fd, "bbbbbbbbbbbb", NULL);			/* held: its supervisor lives */
	mkentry(reg.fd, ".new-dddddddddddd", NULL);		/* a registration, just made */
	mkentry(reg.fd, "not-an-id", NULL);
	held = openat(reg.fd, "bbbbbbbbbbbb", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	cr_assert_eq(flock(held, LOCK_EX | LOCK_NB), 0);
	session_sweep(&reg);
	cr_expect_not(present(reg.fd, "0123456789ab"));
	cr_expect_not(present(reg.fd, ".old-cccccccccccc"));
	cr_expect(present(reg.fd, "aaaaaaaaaaaa"));
	cr_expect(present(reg.fd, "bbbbbbbbbbbb"));
	cr_expect(present(reg.fd, ".new-dddddddddddd"));
	cr_expect(present(reg.fd, "not-an-id"));
	/* Unheld, the same directory is junk. */
	close(held);
	session_sweep(&reg);
	cr_expect_not(present(reg.fd, "bbbbbbbbbbbb"));
	remove_all(reg.fd, dir);
}

/* session_remove() renames first: stopped after that, it has left no "ID"
 * (which nothing lists and, before the sweep knew it, nothing removed),
 * and a leftover ".old-ID" of the same id does not stop the next one. */
Test(session, remove_takes_the_entry_out_of_sight_first)
{
	char dir[] = "/tmp/paddock-unit-XXXXXX";
	struct registry reg = {.fd = -1};

	cr_assert_not_null(mkdtemp(dir));
	reg.fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	cr_assert_geq(reg.fd, 0);
	mkentry(reg.fd, "aaaaaaaaaaaa", "session.json");
	mkentry(reg.fd, ".old-aaaaaaaaaaaa", "evidence.key");
	cr_assert_eq(session_remove(&reg, "aaaaaaaaaaaa"), 0);
	cr_expect_not(present(reg.fd, "aaaaaaaaaaaa"));
	cr_expect_not(present(reg.fd, ".old-aaaaaaaaaaaa"));
	cr_expect_eq(session_remove(&reg, "aaaaaaaaaaaa"), -ENOENT);
	remove_all(reg.fd, dir);
}
