/* Feature probes of the paddock under test and the end of its sessions
 * (harness.h). */
#include "harness.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

bool paddock_has_exec(const struct eval_ctx *ctx, char *why, size_t n)
{
	char *argv[] = {(char *)ctx->paddock, "exec", "--help", NULL};
	int st = -1;

	if (run_argv(ctx, ctx->drop, argv, NULL, 10000, &st) == 0 && st == 0)
		return true;
	snprintf(why, n,
		 "the paddock under test has no 'paddock exec' ('paddock exec --help' exit %d)",
		 st);
	return false;
}

bool paddock_accepts_policy(const struct eval_ctx *ctx, const char *json, const char *what,
			    char *why, size_t n)
{
	char dir[] = "/tmp/paddock-eval-probe.XXXXXX", path[64], out[1024] = "";
	char *argv[] = {(char *)ctx->paddock, "run", "--explain", "--policy", path,
			"--workspace",	      dir,   NULL};
	int st = -1;
	bool ok;

	if (!mkdtemp(dir)) {
		snprintf(why, n, "mkdtemp: %s", strerror(errno));
		return false;
	}
	chmod(dir, 0755);
	snprintf(path, sizeof(path), "%s/policy.json", dir);
	ok = fixture_write(ctx, path, json, 0644) == 0 &&
	     run_capture(ctx, ctx->drop, argv, out, sizeof(out), 10000, &st) == 0 && st == 0;
	unlink(path);
	rmdir(dir);
	if (!ok)
		snprintf(why, n,
			 "the paddock under test refuses a policy with %s (--explain exit %d)",
			 what, st);
	return ok;
}

static void session_end(const struct eval_ctx *ctx, bool as, uid_t uid, gid_t gid, const char *id,
			bool stop)
{
	char *stop_v[] = {(char *)ctx->paddock, "stop", "--grace", "0s", (char *)id, NULL};
	char *rm_v[] = {(char *)ctx->paddock, "rm", (char *)id, NULL};
	int st;

	if (!id || !id[0])
		return;
	/* Each owner ends only its own session, by id (never by a name or a
	 * port someone else may hold). */
	if (stop && as)
		run_argv_as(ctx, uid, gid, stop_v, NULL, 30000, &st);
	else if (stop)
		run_argv(ctx, ctx->drop, stop_v, NULL, 30000, &st);
	if (as)
		run_argv_as(ctx, uid, gid, rm_v, NULL, 30000, &st);
	else
		run_argv(ctx, ctx->drop, rm_v, NULL, 30000, &st);
}

void paddock_session_end(const struct eval_ctx *ctx, const char *id, bool stop)
{
	session_end(ctx, false, 0, 0, id, stop);
}

void paddock_session_end_as(const struct eval_ctx *ctx, uid_t uid, gid_t gid, const char *id,
			    bool stop)
{
	session_end(ctx, true, uid, gid, id, stop);
}
