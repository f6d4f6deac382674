/* paddock-eval: run the scenario cases over their arms, write one JSON
 * record per case and arm, report.md, report.html and junit.xml, print
 * the matrix (and a progress line per arm on stderr as it goes).
 * Errors are printed here only. Exit status (enum eval_exit, run_verdict()):
 * 0 every enforced arm PASSed enforcement, control and evidence, every
 * weakened arm FAILed enforcement, every broken-collector arm was UNKNOWN,
 * no alarm; 1 the boundary failed (an enforced arm FAILed enforcement or
 * control); 2 bad command line; 3 the harness itself could not run (output
 * directory, user lookup, more results than EVAL_MAX_RESULTS); 4 the
 * harness could not tell (a needed dimension UNKNOWN, a weakened arm not
 * FAIL, an alarm); 5 a needed dimension NOT EXECUTED. The worst wins, in
 * the order 1, 4, 5. The cases
 * are cases/cases.c's table; each arm goes through lib/case.c. */
#include "lib/args.h"
#include "lib/case.h"
#include "lib/report_html.h"

#include <errno.h>
#include <libgen.h>
#include <pwd.h>
#include <seccomp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

static void usage(FILE *f)
{
	fputs(
	    "usage: paddock-eval [--case ID]... [--arm ARM]... [--out DIR] [--paddock PATH]\n"
	    "                    [--user NAME] [--no-docker] [--list] [--help] [--version]\n"
	    "       paddock-eval report [--out DIR] RESULTS-DIR...  (paddock-eval report --help)\n"
	    "Runs the harness boundary scenarios (docs/scenarios.md) and grades each case\n"
	    "and arm on enforcement, control and evidence, never summed.\n"
	    "  --case ID     only this case (repeatable; default: all)\n"
	    "  --arm ARM     only this arm (repeatable): enforced, weakened:KNOB, docker,\n"
	    "                broken-collector\n"
	    "  --out DIR     results directory (default results/RUN-ID)\n"
	    "  --paddock P   the paddock binary under test (default: beside paddock-eval)\n"
	    "  --user NAME   unprivileged user the workloads run as when root\n"
	    "                (default paddock-test)\n"
	    "  --no-docker   docker arms NOT EXECUTED\n"
	    "  --list        print cases and arms and exit\n"
	    "  --version     print the version and exit\n"
	    "Writes DIR/report.html (the matrix in colour), report.md, junit.xml and one\n"
	    "JSON record per case and arm; prints [n/N] CASE ARM GRADE (TIME) on stderr.\n"
	    "exit: 0 ok, 1 boundary failed, 2 usage, 3 harness error, 4 harness could not\n"
	    "      tell (UNKNOWN, a weakened arm not FAIL, an alarm), 5 not executed\n",
	    f);
}

static void subject_fill(struct eval_ctx *ctx, struct subject *s, bool no_docker)
{
	char buf[256];
	struct utsname u;
	const struct scmp_version *sv = seccomp_version();
	int st = -1;
	char *argv_v[] = {ctx->paddock, "--version", NULL};

	snprintf(s->paddock_path, sizeof(s->paddock_path), "%s", ctx->paddock);
	if (run_capture(ctx, false, argv_v, buf, sizeof(buf), 10000, &st) == 0 && st == 0) {
		/* "paddock 0.1.0 (commit 911bcbcfbfa0)" */
		if (sscanf(buf, "paddock %63s (commit %63[^)])", s->paddock_version,
			   s->paddock_commit) < 1)
			snprintf(s->paddock_version, sizeof(s->paddock_version), "%s", buf);
	}
	if (!s->paddock_version[0])
		snprintf(s->paddock_version, sizeof(s->paddock_version), "unknown");
	if (!s->paddock_commit[0])
		snprintf(s->paddock_commit, sizeof(s->paddock_commit), "unknown");
	snprintf(s->kernel, sizeof(s->kernel), "%s", uname(&u) == 0 ? u.release : "unknown");
	snprintf(s->libseccomp, sizeof(s->libseccomp), "%u.%u.%u", sv ? sv->major : 0,
		 sv ? sv->minor : 0, sv ? sv->micro : 0);
	{
		char *c[] = {"docker", "--version", NULL};
		char *sv2[] = {"docker", "version", "--format", "{{.Server.Version}}", NULL};
		char *im[] = {"docker",	 "image",	    "inspect", "--format",
			      "{{.Id}}", ctx->docker_image, NULL};
		char *rt[] = {"docker", "info", "--format",
			      " {{range $k, $v := .Runtimes}}{{$k}} {{end}}", NULL};

		snprintf(s->docker_client, sizeof(s->docker_client), "none");
		/* "Docker version 28.2.2, build e6534b4" */
		if (run_capture(ctx, false, c, buf, sizeof(buf), 10000, &st) == 0 && st == 0 &&
		    sscanf(buf, "Docker version %63[^,]", s->docker_client) != 1)
			snprintf(s->docker_client, sizeof(s->docker_client), "%s", buf);
		if (no_docker) {
			snprintf(s->docker_reason, sizeof(s->docker_reason), "--no-docker given");
		} else if (strcmp(s->docker_client, "none") == 0) {
			snprintf(s->docker_reason, sizeof(s->docker_reason),
				 "no docker client installed (docker.io)");
		} else if (run_capture(ctx, false, sv2, buf, sizeof(buf), 15000, &st) != 0 ||
			   st != 0 || !buf[0]) {
			snprintf(s->docker_reason, sizeof(s->docker_reason),
				 "no engine answers (contrib/docker/engine.sh up)");
		} else {
			snprintf(s->docker_server, sizeof(s->docker_server), "%s", buf);
			if (run_capture(ctx, false, im, buf, sizeof(buf), 15000, &st) != 0 ||
			    st != 0)
				snprintf(s->docker_reason, sizeof(s->docker_reason),
					 "image %s missing (contrib/docker/engine.sh image)",
					 ctx->docker_image);
			else
				ctx->docker_ok = true;
			/* The oci arms' runtime (docs/oci.md). */
			if (ctx->docker_ok &&
			    run_capture(ctx, false, rt, buf, sizeof(buf), 15000, &st) == 0 &&
			    st == 0 && strstr(buf, " paddock ")) {
				ctx->docker_paddock_ok = true;
				snprintf(ctx->docker_runtimes, sizeof(ctx->docker_runtimes), "%s ",
					 buf);
			}
		}
	}
}

int eval_write_outputs(const char *outdir, const struct result *rs, size_t n,
		       const struct subject *subj)
{
	char p[PATH_MAX + 64];
	FILE *f;

	snprintf(p, sizeof(p), "%s/report.md", outdir);
	if (!(f = fopen(p, "we")))
		return -errno;
	report_write_md(f, rs, n, subj);
	fclose(f);
	snprintf(p, sizeof(p), "%s/report.html", outdir);
	if (!(f = fopen(p, "we")))
		return -errno;
	report_write_html(f, rs, n, subj, outdir);
	fclose(f);
	snprintf(p, sizeof(p), "%s/junit.xml", outdir);
	if (!(f = fopen(p, "we")))
		return -errno;
	report_write_junit(f, rs, n, subj);
	fclose(f);
	return 0;
}

int eval_write_record(const char *outdir, const struct result *r, const struct subject *subj)
{
	char p[PATH_MAX + 128], name[160];
	FILE *f;

	/* The name report.html links to. */
	report_record_name(r, name, sizeof(name));
	snprintf(p, sizeof(p), "%s/%s", outdir, name);
	if (!(f = fopen(p, "we")))
		return -errno;
	report_write_json(f, r, subj);
	fclose(f);
	return 0;
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void list_cases(void)
{
	for (size_t c = 0; c < eval_n_cases; c++) {
		printf("%s  %s\n   arms:", eval_cases[c]->id, eval_cases[c]->title);
		for (const struct case_arm *a = eval_cases[c]->arms; a->name; a++)
			printf(" %s", a->name);
		printf("\n");
	}
}

/* The run context: paths beside this binary, the workload user, the run
 * id and output directory. 0, or -errno with err (exit 3). */
static int context(struct eval_ctx *ctx, struct subject *subj, const struct eval_opts *o,
		   struct err *err)
{
	char self[PATH_MAX], *dir;
	ssize_t k;

	k = readlink("/proc/self/exe", self, sizeof(self) - 1);
	if (k <= 0)
		return err_sys(err, errno, "readlink /proc/self/exe");
	self[k] = '\0';
	dir = dirname(self);
	if (o->paddock)
		snprintf(ctx->paddock, sizeof(ctx->paddock), "%s", o->paddock);
	else
		snprintf(ctx->paddock, sizeof(ctx->paddock), "%s/paddock", dir);
	/* The case policies: the source tree's scenarios/ beside build/, or
	 * where make install put them (PREFIX/share/paddock/scenarios). */
	snprintf(ctx->scenarios_dir, sizeof(ctx->scenarios_dir), "%s/../scenarios", dir);
	if (access(ctx->scenarios_dir, F_OK) < 0)
		snprintf(ctx->scenarios_dir, sizeof(ctx->scenarios_dir),
			 "%s/../share/paddock/scenarios", dir);
	if (realpath(ctx->scenarios_dir, self))
		snprintf(ctx->scenarios_dir, sizeof(ctx->scenarios_dir), "%s", self);
	snprintf(ctx->docker_image, sizeof(ctx->docker_image), "%s",
		 getenv("PADDOCK_EVAL_IMAGE") ? getenv("PADDOCK_EVAL_IMAGE")
					      : "paddock-eval:local");
	ctx->subj = subj;
	subj->root = geteuid() == 0;
	if (subj->root) {
		struct passwd *pw = getpwnam(o->user);

		if (!pw)
			return err_set(err, ENOENT, "no user '%s' (useradd --system %s)", o->user,
				       o->user);
		subj->workload_uid = pw->pw_uid;
		subj->workload_gid = pw->pw_gid;
		ctx->drop = true;
	} else {
		subj->workload_uid = getuid();
		subj->workload_gid = getgid();
		snprintf(subj->fanotify_reason, sizeof(subj->fanotify_reason),
			 "not root: no fanotify observer");
	}
	{
		time_t t = time(NULL);
		struct tm tm;

		gmtime_r(&t, &tm);
		strftime(subj->run_id, sizeof(subj->run_id), "%Y%m%dT%H%M%SZ", &tm);
		snprintf(subj->run_id + strlen(subj->run_id),
			 sizeof(subj->run_id) - strlen(subj->run_id), "-%d", (int)getpid());
	}
	if (o->out)
		snprintf(ctx->outdir, sizeof(ctx->outdir), "%s", o->out);
	else
		snprintf(ctx->outdir, sizeof(ctx->outdir), "results/%s", subj->run_id);
	if ((mkdir("results", 0755) < 0 && errno != EEXIST && !o->out) ||
	    (mkdir(ctx->outdir, 0755) < 0 && errno != EEXIST))
		return err_sys(err, errno, "mkdir %s", ctx->outdir);
	/* Absolute: paths go to paddock, which runs in "/". */
	if (realpath(ctx->outdir, self))
		snprintf(ctx->outdir, sizeof(ctx->outdir), "%s", self);
	return 0;
}

/* Every selected case and arm through the skeleton. 0, or -errno with err
 * when the results cannot grow (exit 3: never a silently shorter run). */
static size_t count_arms(const struct eval_opts *o)
{
	size_t total = 0;

	for (size_t c = 0; c < eval_n_cases; c++)
		if (eval_wants_case(o, eval_cases[c]))
			for (const struct case_arm *a = eval_cases[c]->arms; a->name; a++)
				total += eval_wants_arm(o, a->name);
	return total;
}

static int run_cases(struct eval_ctx *ctx, const struct eval_opts *o, struct results *rs,
		     struct err *err)
{
	size_t total = count_arms(o);

	for (size_t c = 0; c < eval_n_cases; c++) {
		const struct eval_case *ec = eval_cases[c];

		if (!eval_wants_case(o, ec))
			continue;
		for (const struct case_arm *a = ec->arms; a->name; a++) {
			struct result *r;
			char line[640];
			double t0;
			int rc;

			if (!eval_wants_arm(o, a->name))
				continue;
			rc = results_next(rs, &r);
			if (rc < 0)
				return err_sys(err, rc, "result %zu of the run (%s %s)", rs->n + 1,
					       ec->id, a->name);
			fprintf(stderr, "[%zu/%zu] %s %s ...\n", rs->n, total, ec->id, a->name);
			t0 = now_s();
			case_run_arm(ctx, ec, a, r);
			r->seconds = now_s() - t0;
			if (eval_write_record(ctx->outdir, r, ctx->subj) < 0)
				fprintf(stderr,
					"paddock-eval: cannot write the record of %s %s: %s\n",
					ec->id, a->name, strerror(errno));
			if (r->not_run[0])
				fprintf(stderr, "paddock-eval: NOT EXECUTED %s %s: %s\n", ec->id,
					a->name, r->not_run);
			if (r->alarm[0])
				fprintf(stderr, "paddock-eval: ALARM %s %s: %s\n", ec->id, a->name,
					r->alarm);
			report_progress_line(line, sizeof(line), rs->n, total, r);
			fprintf(stderr, "%s\n", line);
		}
	}
	return 0;
}

int main(int argc, char **argv)
{
	static struct subject subj;
	static struct eval_ctx ctx;
	struct results rs = {0};
	struct eval_opts o;
	struct err err = {0};
	char verdict[640];
	int rc, status = EVAL_EXIT_HARNESS;

	/* paddock-eval report DIR...: merge runs (report_cmd.c). */
	if (argc > 1 && strcmp(argv[1], "report") == 0)
		return eval_report_main(argc - 1, argv + 1);
	rc = eval_opts_parse(argc, argv, eval_cases, eval_n_cases, &o, &err);
	if (rc < 0 || o.help || o.list || o.version) {
		if (rc < 0)
			fprintf(stderr, "paddock-eval: %s\n", err.msg);
		else if (o.help)
			usage(stdout);
		else if (o.version)
			printf("paddock-eval %s (commit %s)\n", PADDOCK_VERSION, PADDOCK_COMMIT);
		else
			list_cases();
		eval_opts_free(&o);
		return rc < 0 ? EVAL_EXIT_USAGE : EVAL_EXIT_OK;
	}
	rc = context(&ctx, &subj, &o, &err);
	if (rc >= 0) {
		subject_fill(&ctx, &subj, o.no_docker);
		rc = run_cases(&ctx, &o, &rs, &err);
	}
	if (rc >= 0 && (rc = eval_write_outputs(ctx.outdir, rs.v, rs.n, ctx.subj)) < 0)
		err_sys(&err, rc, "cannot write the report in %s", ctx.outdir);
	if (rc >= 0) {
		report_write_matrix(stdout, rs.v, rs.n);
		printf("results: %s (report.html, report.md, junit.xml, one JSON record per case "
		       "and arm)\n",
		       ctx.outdir);
	} else {
		fprintf(stderr, "paddock-eval: %s\n", err.msg);
	}
	if (rc >= 0)
		status = run_verdict(rs.v, rs.n, verdict, sizeof(verdict));
	results_free(&rs);
	eval_opts_free(&o);
	return status;
}
