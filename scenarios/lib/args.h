/* paddock-eval's command line (args.c): parsed into one struct, pure apart
 * from malloc, so tests/unit/test_eval.c can pin it. */
#pragma once

#include <stdbool.h>
#include <stddef.h>

#include "../../include/err.h"
#include "case.h"

/* --case and --arm selections: as many as given (they grow). */
struct eval_sel {
	const char **v; /* borrowed from argv */
	size_t n, cap;
};

struct eval_opts {
	struct eval_sel cases, arms;
	const char *user; /* default paddock-test */
	const char *out;  /* NULL: results/RUN-ID */
	const char *paddock;
	bool no_docker, list, help, version;
};

/* Parse argv against the case table: 0; or -EINVAL / -ENOMEM with one
 * line in err (unknown case or arm, bad option, stray argument). Resets
 * getopt (optind). The caller frees with eval_opts_free() either way. */
int eval_opts_parse(int argc, char **argv, const struct eval_case *const *cases, size_t n_cases,
		    struct eval_opts *o, struct err *err);
void eval_opts_free(struct eval_opts *o);

/* The case with this id (any case), or NULL. */
const struct eval_case *eval_find_case(const struct eval_case *const *cases, size_t n,
				       const char *id);
/* The arm named name of c, or NULL. */
const struct case_arm *eval_find_arm(const struct eval_case *c, const char *name);
/* Whether the selection asks for this case, and this arm of it (an empty
 * selection asks for all). */
bool eval_wants_case(const struct eval_opts *o, const struct eval_case *c);
bool eval_wants_arm(const struct eval_opts *o, const char *arm);

/* main.c: a run's outputs in outdir (report.md, report.html, junit.xml),
 * and one result's JSON record (CASE.ARM.json): 0 or -errno. */
int eval_write_outputs(const char *outdir, const struct result *rs, size_t n,
		       const struct subject *subj);
int eval_write_record(const char *outdir, const struct result *r, const struct subject *subj);
/* report_cmd.c: paddock-eval report (argv[0] is "report"): the exit
 * status. */
int eval_report_main(int argc, char **argv);
