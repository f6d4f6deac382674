/* Unit tests for the outcome as data (launcher/supervisor/outcome.c): what
 * the child's and paddock-init's messages do to it, the effects they ask
 * for, the kernel's word over init's, and the record rendered from it. */
#include <criterion/criterion.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "../../include/exitcodes.h"
#include "../../include/initproto.h"
#include "../../launcher/supervisor/run.h"
#include "unit.h"

TestSuite(outcome, .fini = unit_leak_check);

static const struct timespec now = {.tv_sec = 1764570000, .tv_nsec = 5000000};

static struct policy *load(const char *json)
{
	static const struct policy_vars vars = {.workspace = "/ws", .home = "/h", .pwd = "/p"};
	struct policy *p = NULL;
	struct err err = {0};

	cr_assert_eq(policy_load_buffer(json, strlen(json), &vars, &p, &err), 0, "%s", err.msg);
	return p;
}

static const char with_services[] =
    "{\"version\":1,\"mounts\":[{\"type\":\"proc\",\"target\":\"/"
    "proc\"}],\"services\":[{\"name\":\"web\",\"argv\":[\"httpd\"],\"lease\":\"10s\"},"
    "{\"name\":\"db\",\"argv\":[\"db\"]}]}";

Test(outcome, a_clean_run)
{
	struct policy *p = load("{\"version\":1}");
	struct outcome o = {0};
	siginfo_t si = {.si_code = CLD_EXITED, .si_status = 3};

	cr_assert_eq(outcome_init(&o, p, 2), 0);
	cr_assert_eq(outcome_apply(&o, "applied 0 mm", &now), 0);
	cr_assert(o.applied_all);
	cr_assert_eq(outcome_apply(&o, "started 2", &now), OUTCOME_FX_STARTED);
	cr_assert_eq(o.started_pid, 2, "the workload's pid is kept, not dropped");
	cr_assert_eq(outcome_apply(&o, "exit 3", &now), 0);
	cr_assert_eq(outcome_apply(&o, "term 7 sleep", &now), 0);
	cr_assert_eq(outcome_apply(&o, "kill 7 sleep", &now), 0);
	cr_assert_eq(outcome_apply(&o, "done", &now), 0);
	outcome_conclude(&o, &si);
	cr_assert(o.done && o.init_reaped);
	cr_assert_eq(o.ending, ENDING_EXIT);
	cr_assert_eq(o.status, 3);
	cr_assert_eq(o.n_killed, 2);
	cr_assert_str_eq(o.killed[1].comm, "sleep");
	cr_assert_eq(o.killed[1].sig, SIGKILL);
	cr_assert_eq(o.n_warnings, 0);
	outcome_free(&o);
	policy_free(p);
}

/* The child's error keeps its errno across the socket, and the first
 * error is the cause. */
Test(outcome, the_child_keeps_its_errno)
{
	struct policy *p = load("{\"version\":1}");
	struct outcome o = {0};
	siginfo_t si = {.si_code = CLD_EXITED, .si_status = EXIT_LAUNCHER};
	char msg[INITPROTO_MAX];

	cr_assert_eq(outcome_init(&o, p, 0), 0);
	cr_assert_gt(initproto_error_format(msg, sizeof(msg), ENOENT, "cwd /x: No such file"), 0);
	cr_assert_str_eq(msg, "error 2 cwd /x: No such file");
	cr_assert_eq(outcome_apply(&o, msg, &now), 0);
	cr_assert_eq(outcome_apply(&o, "error 32 the supervisor went away", &now), 0);
	outcome_conclude(&o, &si);
	cr_assert_eq(o.error.code, ENOENT);
	cr_assert_str_eq(o.error.msg, "cwd /x: No such file");
	cr_assert_eq(o.ending, ENDING_LAUNCHER_ERROR);
	cr_assert_eq(o.status, EXIT_LAUNCHER);
	outcome_free(&o);
	policy_free(p);
}

/* A report that disagrees with the kernel's status is not init's. */
Test(outcome, the_kernel_wins_over_a_report)
{
	struct policy *p = load("{\"version\":1}");
	struct outcome o = {0};
	siginfo_t si = {.si_code = CLD_EXITED, .si_status = 7};

	cr_assert_eq(outcome_init(&o, p, 0), 0);
	cr_assert_eq(outcome_apply(&o, "exit 0", &now), 0);
	outcome_conclude(&o, &si);
	cr_assert_eq(o.status, 7);
	cr_assert_eq(o.n_warnings, 1);
	cr_assert(strstr(o.warnings[0], "init reported exit 0 but exited with 7"));
	cr_assert_eq(o.error.code, 0, "a warning is not an error");
	outcome_free(&o);
	policy_free(p);
}

Test(outcome, expiry_and_stop)
{
	struct policy *p = load("{\"version\":1}");
	struct outcome o = {0};
	siginfo_t si = {.si_code = CLD_KILLED, .si_status = SIGKILL};

	cr_assert_eq(outcome_init(&o, p, 0), 0);
	o.expired = true;
	outcome_conclude(&o, &si);
	cr_assert_eq(o.ending, ENDING_EXPIRED);
	cr_assert_eq(o.status, 124);
	cr_assert(o.init_died, "init's own status is still recorded as init's");
	outcome_free(&o);
	policy_free(p);
}

/* init ended without a report: its own status is recorded as init's,
 * never as the workload's, and whether the workload started says which. */
Test(outcome, init_that_never_reported_the_start)
{
	struct policy *p = load("{\"version\":1}");
	struct outcome o = {0};
	siginfo_t si = {.si_code = CLD_EXITED, .si_status = 0};

	cr_assert_eq(outcome_init(&o, p, 0), 0);
	outcome_conclude(&o, &si);
	cr_assert_eq(o.ending, ENDING_INIT_DIED);
	cr_assert_str_eq(ending_name(o.ending), "init-died");
	cr_assert_eq(o.status, EXIT_LAUNCHER, "exit 0 without a start is not success");
	cr_assert(o.init_died && !o.init_signaled && o.init_code == 0);
	cr_assert(!o.started && !o.wl_reported, "nothing claimed about the workload");
	cr_assert(strstr(o.error.msg, "without reporting the workload's start"), "%s", o.error.msg);
	outcome_free(&o);
	policy_free(p);
}

Test(outcome, init_killed_after_the_start)
{
	struct policy *p = load("{\"version\":1}");
	struct outcome o = {0};
	siginfo_t si = {.si_code = CLD_KILLED, .si_status = SIGKILL};

	cr_assert_eq(outcome_init(&o, p, 0), 0);
	cr_assert_eq(outcome_apply(&o, "started 2", &now), OUTCOME_FX_STARTED);
	outcome_conclude(&o, &si);
	cr_assert_eq(o.ending, ENDING_INIT_DIED, "not a workload signal");
	cr_assert_eq(o.status, 128 + SIGKILL);
	cr_assert(o.init_died && o.init_signaled && o.init_code == SIGKILL);
	cr_assert(!o.wl_reported && !o.wl_signaled);
	cr_assert(strstr(o.error.msg, "killed by signal 9"), "%s", o.error.msg);
	outcome_free(&o);
	policy_free(p);
}

/* paddock-init's own "deadline" (the supervisor was stopped past the TTL)
 * is an expiry; after a paddock stop it is not. */
Test(outcome, init_deadline_is_an_expiry)
{
	struct policy *p = load("{\"version\":1}");
	struct outcome o = {0};
	siginfo_t si = {.si_code = CLD_EXITED, .si_status = 143};

	cr_assert_eq(outcome_init(&o, p, 0), 0);
	cr_assert_eq(outcome_apply(&o, "started 2", &now), OUTCOME_FX_STARTED);
	cr_assert_eq(outcome_apply(&o, "deadline", &now), 0);
	cr_assert(o.expired);
	cr_assert_eq(outcome_apply(&o, "signal 15", &now), 0);
	outcome_conclude(&o, &si);
	cr_assert_eq(o.ending, ENDING_EXPIRED);
	cr_assert_eq(o.status, 124);
	outcome_free(&o);
	o = (struct outcome){0};
	cr_assert_eq(outcome_init(&o, p, 0), 0);
	o.stopped = true;
	cr_assert_eq(outcome_apply(&o, "deadline", &now), 0);
	cr_assert_not(o.expired);
	cr_assert_eq(outcome_apply(&o, "deadline x", &now), -EPROTO);
	outcome_free(&o);
	policy_free(p);
}

Test(outcome, leases_and_retained)
{
	struct policy *p = load(with_services);
	struct outcome o = {0};
	int fx;

	cr_assert_eq(outcome_init(&o, p, 0), 0);
	cr_assert_eq(o.n_leases, 2);
	cr_assert_str_eq(o.leases[0].state, "starting");
	cr_assert_eq(outcome_apply(&o, "service-started web 5", &now), OUTCOME_FX_LEASE);
	cr_assert_eq(o.fx_lease, 0);
	cr_assert_str_eq(o.leases[0].started, "2025-12-01T06:20:00.005Z");
	cr_assert_str_eq(o.leases[0].expires, "2025-12-01T06:20:10.005Z");
	fx = outcome_apply(&o, "service-ended db exec-error 2", &now);
	cr_assert_eq(fx, OUTCOME_FX_LEASE | OUTCOME_FX_SERVICE_FAILED);
	cr_assert_eq(o.fx_lease, 1);
	cr_assert_str_eq(o.leases[1].ended, "exec-error 2");
	cr_assert_eq(outcome_apply(&o, "exit 4", &now), 0);
	fx = outcome_apply(&o, "retained", &now);
	cr_assert_eq(fx, OUTCOME_FX_RETAINED | OUTCOME_FX_LEASE);
	cr_assert(o.retained);
	cr_assert_str_eq(o.leases[0].state, "retained");
	cr_assert_eq(o.status, 4, "the main command's outcome is final at retained");
	o.expired = true;
	cr_assert_eq(outcome_apply(&o, "service-ended web stopped signal:15", &now),
		     OUTCOME_FX_LEASE);
	cr_assert_str_eq(o.leases[0].ended, "expired signal:15");
	cr_assert_eq(outcome_apply(&o, "service-started nosuch 9", &now), 0, "not ours: ignored");
	outcome_free(&o);
	policy_free(p);
}

/* Nothing that is not of the protocol changes the outcome. */
Test(outcome, bad_messages_change_nothing)
{
	static const char *const bad[] = {
	    "",
	    "bogus",
	    "started",
	    "started x",
	    "started -1",
	    "started 2 3",
	    "exit",
	    "exit -1",
	    "exit 256",
	    "signal 0",
	    "signal 200",
	    "exec-error 0",
	    "term",
	    "term x sleep",
	    "kill 0 x",
	    "term-more",
	    "term-more 0",
	    "term-more x",
	    "term-more 5 6",
	    "term-more -3",
	    "kill-more 99999999999",
	    "error",
	    "error x y",
	    "error 0 zero",
	    "error 99999 big",
	    "applied",
	    "applied 5 m",
	    "applied 0 mmmz",
	    "applied 1 mmmm",
	    "applied -1 m",
	    "service-started",
	    "service-started web",
	    "service-started web x",
	    "done x",
	};
	struct policy *p = load(with_services);
	struct outcome o = {0}, before;

	cr_assert_eq(outcome_init(&o, p, 3), 0);
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		before = o;
		cr_assert_eq(outcome_apply(&o, bad[i], &now), -EPROTO, "\"%s\"", bad[i]);
		cr_assert_eq(memcmp(&before, &o, sizeof(o)), 0, "\"%s\" changed the outcome",
			     bad[i]);
		cr_assert_str_eq(o.applied, "", "\"%s\"", bad[i]);
	}
	outcome_free(&o);
	policy_free(p);
}

/* ------------------------------------------------------------- the record */

static const char two_binds[] = "{\"version\":1,\"mounts\":["
				"{\"type\":\"bind\",\"source\":\"/usr\"},"
				"{\"type\":\"bind\",\"source\":\"/opt/x\",\"target\":\"/x\","
				"\"optional\":true}]}";

/* The record's text for a run whose spec is the policy above and whose
 * outcome got the messages. */
static char *record(const char *const *msgs, size_t n)
{
	struct options opt = {.argv = (char *[]){"true", NULL}};
	struct run_spec spec = {.opt = &opt, .policy_label = "p.json", .file_sha256 = "ab"};
	struct run r = {.spec = &spec, .live = {.box = {.ctl = -1, .pidfd = -1}}};
	char *text;
	size_t len = 0;

	spec.policy = load(two_binds);
	spec.sb.policy = spec.policy;
	cr_assert_eq(mounts_plan(spec.policy, 0, &spec.sb.plan), 0);
	cr_assert_eq(outcome_init(&r.out, spec.policy, spec.sb.plan.n), 0);
	for (size_t i = 0; i < n; i++)
		cr_assert_geq(outcome_apply(&r.out, msgs[i], &now), 0, "%s", msgs[i]);
	text = record_render(&r, &len);
	cr_assert_not_null(text);
	text = realloc(text, len + 1);
	text[len] = '\0';
	outcome_free(&r.out);
	mounts_plan_free(&spec.sb.plan);
	policy_free(spec.policy);
	return text;
}

/* The parent found /opt/x (or not) before the clone; the child's report
 * is what the record says: skipped, when it was gone when the child
 * looked. Without the report the record would say "ro". */
Test(outcome, the_record_says_what_the_child_applied)
{
	const char *msgs[] = {"applied 0 ms", "started 2", "exit 0", "done"};
	char *text = record(msgs, 4);

	cr_assert(strstr(text, "\"target\":\t\"/x\",\n\t\t\t\"mode\":\t\"skipped\",\n"
			       "\t\t\t\"state\":\t\"skipped\""),
		  "%s", text);
	cr_assert(strstr(text, "\"mode\":\t\"ro\",\n\t\t\t\"state\":\t\"applied\""), "%s", text);
	cr_assert(strstr(text, "\"mounts_reported\":\ttrue"), "%s", text);
	cr_assert(strstr(text, "\"init_done\":\ttrue"), "%s", text);
	cr_assert_eq(text[strlen(text) - 1], '\n');
	free(text);
}

/* The weakened twin: without the child's report nothing is claimed as
 * applied. */
Test(outcome, the_record_claims_nothing_unreported)
{
	char *text = record(NULL, 0);

	cr_assert_null(strstr(text, "\"state\":\t\"applied\""), "%s", text);
	cr_assert(strstr(text, "\"state\":\t\"not-reported\""), "%s", text);
	cr_assert(strstr(text, "\"mounts_reported\":\tfalse"), "%s", text);
	cr_assert(strstr(text, "\"init_done\":\tfalse"), "%s", text);
	free(text);
}

/* paddock-init names at most 64 processes per signal and counts the rest
 * ("term-more N"): the record says how many were ended in all and that its
 * list is capped. */
Test(outcome, the_record_counts_the_unnamed)
{
	const char *msgs[] = {"applied 0 mm",	 "started 2",	"signal 15",
			      "term 2 load",	 "term 3 load", "term-more 935",
			      "kill 9 stubborn", "kill-more 2", "done"};
	char *text = record(msgs, 9);

	cr_assert(strstr(text, "\"killed_count\":\t940,"), "%s", text);
	cr_assert(strstr(text, "\"killed_capped\":\ttrue,"), "%s", text);
	cr_assert(strstr(text, "\"comm\":\t\"stubborn\""), "%s", text);
	free(text);
}

/* The twin: every process named, nothing capped. */
Test(outcome, the_record_of_named_ones_is_not_capped)
{
	const char *msgs[] = {"applied 0 mm", "started 2", "exit 0", "term 3 sleep", "done"};
	char *text = record(msgs, 5);

	cr_assert(strstr(text, "\"killed_count\":\t1,"), "%s", text);
	cr_assert(strstr(text, "\"killed_capped\":\tfalse,"), "%s", text);
	free(text);
}
