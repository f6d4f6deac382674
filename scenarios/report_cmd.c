/* paddock-eval report [--out DIR] RESULTS-DIR...: the results of several
 * runs (one per case and arm, as docs/oci.md's Indexed Job makes them)
 * merged into the report and summary one run writes.
 *
 * Every case and arm of this paddock-eval's table is looked up in every
 * input by its record's name (CASE.ARM.json, report_record_name()): one
 * found is taken; several found must agree (the same grade in each
 * dimension), else it is an error naming both inputs; none found is
 * UNKNOWN in every dimension, never PASS. A record file in an input that
 * names no case and arm of the table is an error too (a run of another
 * version): nothing is dropped silently. Exit status: 2 bad command line;
 * 3 bad input (not a results directory, a malformed record, two inputs
 * that disagree, runs of different paddock builds), with one line on
 * stderr; otherwise the merged run's verdict, as a run's (0, 1, 4, 5). */
#include "lib/args.h"
#include "lib/case.h"
#include "lib/report_html.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "../include/cleanup.h"

#define INPUTS_MAX 4096

static void usage(FILE *f)
{
	fputs("usage: paddock-eval report [--out DIR] RESULTS-DIR...\n"
	      "Merges the results directories of several paddock-eval runs (one per case and\n"
	      "arm, as an Indexed Job writes them: docs/oci.md) into one report.html,\n"
	      "report.md, junit.xml and one JSON record per case and arm, and prints the\n"
	      "matrix. A case and arm in no input is UNKNOWN; two inputs that grade the same\n"
	      "case and arm differently are an error naming both.\n"
	      "  --out DIR     where the merged report goes (default results/report-RUN-ID)\n"
	      "exit: 0 ok, 1 boundary failed, 2 usage, 3 bad input (not a results directory,\n"
	      "      a malformed record, inputs that disagree), 4 could not tell (UNKNOWN,\n"
	      "      a missing case or arm), 5 not executed\n",
	      f);
}

/* The record file path (a results directory's CASE.ARM.json), read and
 * parsed: 1 read, 0 absent, -1 with msg. */
static int read_one(const char *path, struct result *r, struct subject *s, char *msg, size_t n)
{
	cleanup_close int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	struct err err = {0};
	cleanup_free char *text = NULL;
	struct stat st;
	ssize_t got;

	if (fd < 0 && errno == ENOENT)
		return 0;
	if (fd < 0 || fstat(fd, &st) < 0)
		return snprintf(msg, n, "%s: %s", path, strerror(errno)), -1;
	if (!S_ISREG(st.st_mode) || st.st_size > (8 << 20))
		return snprintf(msg, n, "%s: not a record (a regular file up to 8 MiB)", path), -1;
	text = malloc((size_t)st.st_size + 1);
	if (!text)
		return snprintf(msg, n, "out of memory"), -1;
	got = read(fd, text, (size_t)st.st_size);
	if (got != st.st_size)
		return snprintf(msg, n, "%s: short read", path), -1;
	text[got] = '\0';
	if (result_read_json(text, (size_t)got, r, s, &err) < 0)
		return snprintf(msg, n, "%s: malformed record: %s", path, err.msg), -1;
	return 1;
}

/* Every input a results directory: one paddock-eval wrote (its
 * report.md), whose record files all name a case and arm of ours. */
static int check_input(const char *dir, char *msg, size_t n)
{
	cleanup_free char *md = NULL;
	struct stat st;
	DIR *d;
	struct dirent *e;
	int rc = 0;

	if (stat(dir, &st) < 0 || !S_ISDIR(st.st_mode))
		return snprintf(msg, n, "%s: %s", dir,
				errno && !S_ISDIR(st.st_mode) ? strerror(errno)
							      : "not a directory"),
		       -1;
	if (asprintf(&md, "%s/report.md", dir) < 0)
		return snprintf(msg, n, "out of memory"), -1;
	if (access(md, F_OK) < 0)
		return snprintf(msg, n, "%s: not a paddock-eval results directory (no report.md)",
				dir),
		       -1;
	if (!(d = opendir(dir)))
		return snprintf(msg, n, "%s: %s", dir, strerror(errno)), -1;
	while (rc == 0 && (e = readdir(d))) {
		size_t l = strlen(e->d_name);
		bool known = false;

		if (strncmp(e->d_name, "HB-", 3) != 0 || l < 5 ||
		    strcmp(e->d_name + l - 5, ".json") != 0)
			continue;
		for (size_t c = 0; !known && c < eval_n_cases; c++)
			for (const struct case_arm *a = eval_cases[c]->arms; !known && a->name;
			     a++) {
				struct result r;
				char name[160];

				result_init(&r, eval_cases[c]->id, "", a->name);
				report_record_name(&r, name, sizeof(name));
				known = strcmp(name, e->d_name) == 0;
			}
		if (!known)
			rc = -1, snprintf(msg, n,
					  "%s/%s: names no case and arm of this paddock-eval "
					  "(paddock-eval --list)",
					  dir, e->d_name);
	}
	closedir(d);
	return rc;
}

/* One case and arm over every input into r: 0, or -1 with msg. */
static int merge_arm(const struct eval_case *c, const struct case_arm *a, char **dirs, size_t n,
		     struct result *r, struct subject *subj, const char **first_dir, char *msg,
		     size_t len)
{
	const char *from = NULL;
	char name[160];
	int found = 0;

	result_init(r, c->id, c->title, a->name);
	report_record_name(r, name, sizeof(name));
	for (size_t i = 0; i < n; i++) {
		static struct result got;
		struct subject s;
		char path[PATH_MAX], x[64], y[64];
		int rc;

		snprintf(path, sizeof(path), "%s/%s", dirs[i], name);
		rc = read_one(path, &got, &s, msg, len);
		if (rc < 0)
			return -1;
		if (rc == 0)
			continue;
		if (strcmp(got.case_id, c->id) != 0 || strcmp(got.arm, a->name) != 0)
			return snprintf(msg, len, "%s: the record of %s %s under the name of %s %s",
					path, got.case_id, got.arm, c->id, a->name),
			       -1;
		/* One build under test: results of two builds are two
		 * reports. */
		if (!*first_dir) {
			*subj = s;
			*first_dir = dirs[i];
		} else if (strcmp(s.paddock_commit, subj->paddock_commit) != 0 ||
			   strcmp(s.paddock_version, subj->paddock_version) != 0) {
			return snprintf(
				   msg, len,
				   "%s and %s: runs of different paddock builds (%s %s, %s %s)",
				   *first_dir, dirs[i], subj->paddock_version, subj->paddock_commit,
				   s.paddock_version, s.paddock_commit),
			       -1;
		}
		if (found && !result_agrees(r, &got)) {
			result_grades_text(r, x, sizeof(x));
			result_grades_text(&got, y, sizeof(y));
			return snprintf(msg, len, "%s %s: %s says %s, %s says %s", c->id, a->name,
					from, x, dirs[i], y),
			       -1;
		}
		if (!found)
			*r = got, from = dirs[i];
		found++;
	}
	r->weakens = a->weakens;
	if (!found) {
		char why[200];

		snprintf(why, sizeof(why), "missing evidence: %s %s is in none of the %zu inputs",
			 c->id, a->name, n);
		verdict_unknown_all(r->v, why);
		result_finish(r);
	}
	return 0;
}

int eval_report_main(int argc, char **argv)
{
	static const struct option opts[] = {{"out", required_argument, NULL, 'o'},
					     {"help", no_argument, NULL, 'h'},
					     {NULL, 0, NULL, 0}};
	static struct subject subj;
	struct results rs = {0};
	const char *out = NULL, *first = NULL;
	char outdir[PATH_MAX], msg[PATH_MAX + 512], verdict[640];
	int ch, status;

	optind = 1;
	opterr = 0;
	while ((ch = getopt_long(argc, argv, "+", opts, NULL)) != -1) {
		if (ch == 'o') {
			out = optarg;
		} else if (ch == 'h') {
			usage(stdout);
			return EVAL_EXIT_OK;
		} else {
			fprintf(stderr, "paddock-eval report: %s: %s\n", argv[optind - 1],
				ch == ':' ? "needs an argument" : "unknown option");
			return EVAL_EXIT_USAGE;
		}
	}
	if (optind == argc) {
		fputs("paddock-eval report: no results directory given\n", stderr);
		return EVAL_EXIT_USAGE;
	}
	if (argc - optind > INPUTS_MAX) {
		fprintf(stderr, "paddock-eval report: more than %d inputs\n", INPUTS_MAX);
		return EVAL_EXIT_USAGE;
	}
	for (int i = optind; i < argc; i++)
		if (check_input(argv[i], msg, sizeof(msg)) < 0)
			goto bad;
	for (size_t c = 0; c < eval_n_cases; c++)
		for (const struct case_arm *a = eval_cases[c]->arms; a->name; a++) {
			struct result *r;

			if (results_next(&rs, &r) < 0) {
				snprintf(msg, sizeof(msg), "out of memory");
				goto bad;
			}
			if (merge_arm(eval_cases[c], a, argv + optind, (size_t)(argc - optind), r,
				      &subj, &first, msg, sizeof(msg)) < 0)
				goto bad;
		}
	{
		time_t t = time(NULL);
		struct tm tm;
		char id[40];

		gmtime_r(&t, &tm);
		strftime(id, sizeof(id), "%Y%m%dT%H%M%SZ", &tm);
		snprintf(subj.run_id, sizeof(subj.run_id), "report-%s-%d", id, (int)getpid());
	}
	if (!first)
		snprintf(subj.paddock_version, sizeof(subj.paddock_version), "unknown");
	snprintf(outdir, sizeof(outdir), "%s", out ? out : "results");
	if (!out && mkdir(outdir, 0755) < 0 && errno != EEXIST)
		goto io;
	if (!out)
		snprintf(outdir + strlen(outdir), sizeof(outdir) - strlen(outdir), "/%s",
			 subj.run_id);
	if (mkdir(outdir, 0755) < 0 && errno != EEXIST)
		goto io;
	for (size_t i = 0; i < rs.n; i++)
		if (eval_write_record(outdir, &rs.v[i], &subj) < 0)
			goto io;
	if (eval_write_outputs(outdir, rs.v, rs.n, &subj) < 0)
		goto io;
	report_write_matrix(stdout, rs.v, rs.n);
	printf("results: %s (merged from %d inputs)\n", outdir, argc - optind);
	status = run_verdict(rs.v, rs.n, verdict, sizeof(verdict));
	results_free(&rs);
	return status;
io:
	snprintf(msg, sizeof(msg), "cannot write the report in %s: %s", outdir, strerror(errno));
bad:
	fprintf(stderr, "paddock-eval report: %s\n", msg);
	results_free(&rs);
	return EVAL_EXIT_HARNESS;
}
