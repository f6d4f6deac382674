/* paddock-eval: run the scenario cases over their arms, write one JSON
 * record per case and arm, report.md and junit.xml, print the matrix.
 * Errors are printed here only. Exit status: 0 every enforced arm passed
 * enforcement and control and no alarm went off; 1 an enforced arm failed
 * enforcement or control, or a weakened arm passed enforcement (an alarm);
 * 2 bad command line; 3 the harness itself could not run (output
 * directory, user lookup). */
#include "lib/harness.h"
#include "observers/observe.h"

#include <errno.h>
#include <getopt.h>
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

#include "../policy/sha256.h"

static const struct eval_case *const cases[] = {&hb01_case, &hb03_case, &hb04_case,
						&hb05_case, &hb06_case, &hb08_case};
#define N_CASES (sizeof(cases) / sizeof(cases[0]))

static void usage(FILE *f)
{
	fputs("usage: paddock-eval [--case ID]... [--arm ARM]... [--out DIR] [--paddock PATH]\n"
	      "                    [--user NAME] [--no-docker] [--list] [--help]\n"
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
	      "exit: 0 ok, 1 an enforced arm failed or an alarm, 2 usage, 3 harness error\n",
	      f);
}

static const struct eval_case *find_case(const char *id)
{
	for (size_t i = 0; i < N_CASES; i++)
		if (strcasecmp(cases[i]->id, id) == 0)
			return cases[i];
	return NULL;
}

static bool has_arm(const struct eval_case *c, const char *arm)
{
	for (const char *const *a = c->arms; *a; a++)
		if (strcmp(*a, arm) == 0)
			return true;
	return false;
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
		}
	}
}

static void set_policy(const struct eval_ctx *ctx, const struct eval_case *c, struct result *r)
{
	if (!c->policy)
		return;
	snprintf(r->policy_path, sizeof(r->policy_path), "%s/%s", ctx->scenarios_dir, c->policy);
	if (observe_sha256(r->policy_path, r->policy_sha256) < 0)
		snprintf(r->policy_sha256, sizeof(r->policy_sha256), "unreadable");
	if (r->kind == ARM_WEAKENED)
		memcpy(r->weakenings, r->knob,
		       sizeof(r->knob)); /* both NUL-terminated, knob shorter */
	else if (r->kind == ARM_DOCKER)
		snprintf(r->weakenings, sizeof(r->weakenings), "n/a (docker reference arm)");
	else
		snprintf(r->weakenings, sizeof(r->weakenings), "none");
}

static int write_outputs(const struct eval_ctx *ctx, const struct result *rs, size_t n)
{
	char p[PATH_MAX + 64];
	FILE *f;

	snprintf(p, sizeof(p), "%s/report.md", ctx->outdir);
	if (!(f = fopen(p, "we")))
		return -errno;
	report_write_md(f, rs, n, ctx->subj);
	fclose(f);
	snprintf(p, sizeof(p), "%s/junit.xml", ctx->outdir);
	if (!(f = fopen(p, "we")))
		return -errno;
	report_write_junit(f, rs, n, ctx->subj);
	fclose(f);
	return 0;
}

static int write_record(const struct eval_ctx *ctx, const struct result *r)
{
	char p[PATH_MAX + 128], arm[64];
	FILE *f;

	snprintf(arm, sizeof(arm), "%s", r->arm);
	for (char *q = arm; *q; q++)
		if (*q == ':')
			*q = '_';
	snprintf(p, sizeof(p), "%s/%s.%s.json", ctx->outdir, r->case_id, arm);
	if (!(f = fopen(p, "we")))
		return -errno;
	report_write_json(f, r, ctx->subj);
	fclose(f);
	return 0;
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
	    {"case", required_argument, NULL, 'c'},
	    {"arm", required_argument, NULL, 'a'},
	    {"out", required_argument, NULL, 'o'},
	    {"paddock", required_argument, NULL, 'p'},
	    {"user", required_argument, NULL, 'u'},
	    {"no-docker", no_argument, NULL, 'D'},
	    {"list", no_argument, NULL, 'l'},
	    {"help", no_argument, NULL, 'h'},
	    {NULL, 0, NULL, 0},
	};
	const char *sel_case[16], *sel_arm[16], *user = "paddock-test", *out = NULL;
	size_t n_case = 0, n_arm = 0, n_res = 0;
	bool list = false, no_docker = false, fails = false;
	static struct subject subj;
	static struct eval_ctx ctx;
	static struct result res[64];
	char self[PATH_MAX], *dir;
	ssize_t k;
	int opt;

	while ((opt = getopt_long(argc, argv, "c:a:o:p:u:Dlh", opts, NULL)) != -1) {
		switch (opt) {
		case 'c':
			if (!find_case(optarg)) {
				fprintf(stderr, "paddock-eval: unknown case '%s' (see --list)\n",
					optarg);
				return 2;
			}
			if (n_case < 16)
				sel_case[n_case++] = optarg;
			break;
		case 'a':
			if (n_arm < 16)
				sel_arm[n_arm++] = optarg;
			break;
		case 'o':
			out = optarg;
			break;
		case 'p':
			snprintf(ctx.paddock, sizeof(ctx.paddock), "%s", optarg);
			break;
		case 'u':
			user = optarg;
			break;
		case 'D':
			no_docker = true;
			break;
		case 'l':
			list = true;
			break;
		case 'h':
			usage(stdout);
			return 0;
		default:
			fprintf(stderr, "paddock-eval: bad command line (see --help)\n");
			return 2;
		}
	}
	if (optind < argc) {
		fprintf(stderr, "paddock-eval: unexpected argument '%s' (see --help)\n",
			argv[optind]);
		return 2;
	}
	for (size_t i = 0; i < n_arm; i++) {
		bool known = false;

		for (size_t c = 0; c < N_CASES; c++)
			known |= has_arm(cases[c], sel_arm[i]);
		if (!known) {
			fprintf(stderr, "paddock-eval: unknown arm '%s' (see --list)\n",
				sel_arm[i]);
			return 2;
		}
	}
	if (list) {
		for (size_t c = 0; c < N_CASES; c++) {
			printf("%s  %s\n   arms:", cases[c]->id, cases[c]->title);
			for (const char *const *a = cases[c]->arms; *a; a++)
				printf(" %s", *a);
			printf("\n");
		}
		return 0;
	}

	k = readlink("/proc/self/exe", self, sizeof(self) - 1);
	if (k <= 0) {
		fprintf(stderr, "paddock-eval: readlink /proc/self/exe: %s\n", strerror(errno));
		return 3;
	}
	self[k] = '\0';
	dir = dirname(self);
	if (!ctx.paddock[0])
		snprintf(ctx.paddock, sizeof(ctx.paddock), "%s/paddock", dir);
	snprintf(ctx.scenarios_dir, sizeof(ctx.scenarios_dir), "%s/../scenarios", dir);
	if (realpath(ctx.scenarios_dir, self))
		snprintf(ctx.scenarios_dir, sizeof(ctx.scenarios_dir), "%s", self);
	snprintf(ctx.docker_image, sizeof(ctx.docker_image), "%s",
		 getenv("PADDOCK_EVAL_IMAGE") ? getenv("PADDOCK_EVAL_IMAGE")
					      : "paddock-eval:local");
	ctx.subj = &subj;
	subj.root = geteuid() == 0;
	if (subj.root) {
		struct passwd *pw = getpwnam(user);

		if (!pw) {
			fprintf(stderr, "paddock-eval: no user '%s' (useradd --system %s)\n", user,
				user);
			return 3;
		}
		subj.workload_uid = pw->pw_uid;
		subj.workload_gid = pw->pw_gid;
		ctx.drop = true;
	} else {
		subj.workload_uid = getuid();
		subj.workload_gid = getgid();
		snprintf(subj.fanotify_reason, sizeof(subj.fanotify_reason),
			 "not root: no fanotify observer");
	}
	{
		time_t t = time(NULL);
		struct tm tm;

		gmtime_r(&t, &tm);
		strftime(subj.run_id, sizeof(subj.run_id), "%Y%m%dT%H%M%SZ", &tm);
		snprintf(subj.run_id + strlen(subj.run_id),
			 sizeof(subj.run_id) - strlen(subj.run_id), "-%d", (int)getpid());
	}
	if (out)
		snprintf(ctx.outdir, sizeof(ctx.outdir), "%s", out);
	else
		snprintf(ctx.outdir, sizeof(ctx.outdir), "results/%s", subj.run_id);
	if ((mkdir("results", 0755) < 0 && errno != EEXIST && !out) ||
	    (mkdir(ctx.outdir, 0755) < 0 && errno != EEXIST)) {
		fprintf(stderr, "paddock-eval: mkdir %s: %s\n", ctx.outdir, strerror(errno));
		return 3;
	}
	/* Absolute: paths go to paddock, which runs in "/". */
	if (realpath(ctx.outdir, self))
		snprintf(ctx.outdir, sizeof(ctx.outdir), "%s", self);
	subject_fill(&ctx, &subj, no_docker);

	for (size_t c = 0; c < N_CASES; c++) {
		const struct eval_case *ec = cases[c];
		bool want = n_case == 0;

		for (size_t i = 0; i < n_case; i++)
			want |= strcasecmp(sel_case[i], ec->id) == 0;
		if (!want)
			continue;
		for (const char *const *a = ec->arms; *a && n_res < 64; a++) {
			struct result *r = &res[n_res];
			bool arm_ok = n_arm == 0;
			double t0;

			for (size_t i = 0; i < n_arm; i++)
				arm_ok |= strcmp(sel_arm[i], *a) == 0;
			if (!arm_ok)
				continue;
			result_init(r, ec->id, ec->title, *a);
			set_policy(&ctx, ec, r);
			fprintf(stderr, "paddock-eval: %s %s ...\n", ec->id, *a);
			t0 = now_s();
			ec->run(&ctx, *a, r);
			r->seconds = now_s() - t0;
			result_finish(r);
			if (write_record(&ctx, r) < 0)
				fprintf(stderr,
					"paddock-eval: cannot write the record of %s %s: %s\n",
					ec->id, *a, strerror(errno));
			if (r->alarm[0])
				fprintf(stderr, "paddock-eval: ALARM %s %s: %s\n", ec->id, *a,
					r->alarm);
			fails |= result_fails_run(r);
			n_res++;
		}
	}
	if (write_outputs(&ctx, res, n_res) < 0) {
		fprintf(stderr, "paddock-eval: cannot write the report in %s: %s\n", ctx.outdir,
			strerror(errno));
		return 3;
	}
	report_write_matrix(stdout, res, n_res);
	printf("results: %s (report.md, junit.xml, one JSON record per case and arm)\n",
	       ctx.outdir);
	return fails ? 1 : 0;
}
