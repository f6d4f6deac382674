/* paddock-eval's command line (args.h). */
#include "args.h"

#include <errno.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

const struct eval_case *eval_find_case(const struct eval_case *const *cases, size_t n,
				       const char *id)
{
	for (size_t i = 0; i < n; i++)
		if (strcasecmp(cases[i]->id, id) == 0)
			return cases[i];
	return NULL;
}

const struct case_arm *eval_find_arm(const struct eval_case *c, const char *name)
{
	for (const struct case_arm *a = c->arms; a->name; a++)
		if (strcmp(a->name, name) == 0)
			return a;
	return NULL;
}

static int sel_add(struct eval_sel *s, const char *v)
{
	if (s->n == s->cap) {
		size_t cap = s->cap ? s->cap * 2 : 8;
		const char **nv = realloc(s->v, cap * sizeof(*nv));

		if (!nv)
			return -ENOMEM;
		s->v = nv;
		s->cap = cap;
	}
	s->v[s->n++] = v;
	return 0;
}

static bool arm_known(const struct eval_case *const *cases, size_t n, const char *arm)
{
	for (size_t c = 0; c < n; c++)
		if (eval_find_arm(cases[c], arm))
			return true;
	return false;
}

/* One option; 0 or a negative errno with err. One case per option, as
 * getopt wants it: duplicates pairs the assignment cases by shape, which is
 * the switch, not a copy. */
static int option(int opt, const struct eval_case *const *cases, size_t n, struct eval_opts *o,
		  struct err *err)
{
	switch (opt) {
	case 'c':
		if (!eval_find_case(cases, n, optarg))
			return err_set(err, EINVAL, "unknown case '%s' (see --list)", optarg);
		return sel_add(&o->cases, optarg) < 0 ? err_set(err, ENOMEM, "out of memory") : 0;
	case 'a':
		if (!arm_known(cases, n, optarg))
			return err_set(err, EINVAL, "unknown arm '%s' (see --list)", optarg);
		return sel_add(&o->arms, optarg) < 0 ? err_set(err, ENOMEM, "out of memory") : 0;
	case 'o':
		o->out = optarg;
		return 0;
	case 'p':
		o->paddock = optarg;
		return 0;
	case 'u':
		o->user = optarg;
		return 0;
	case 'D':
		o->no_docker = true;
		return 0;
	case 'l':
		o->list = true;
		return 0;
	case 'h':
		o->help = true;
		return 0;
	case 'V':
		o->version = true;
		return 0;
	default:
		return err_set(err, EINVAL, "bad command line (see --help)");
	}
}

int eval_opts_parse(int argc, char **argv, const struct eval_case *const *cases, size_t n_cases,
		    struct eval_opts *o, struct err *err)
{
	/* clang-format off */
	static const struct option opts[] = {
	    {"case", required_argument, NULL, 'c'},
	    {"arm", required_argument, NULL, 'a'},
	    {"out", required_argument, NULL, 'o'},
	    {"paddock", required_argument, NULL, 'p'},
	    {"user", required_argument, NULL, 'u'},
	    {"no-docker", no_argument, NULL, 'D'},
	    {"list", no_argument, NULL, 'l'},
	    {"help", no_argument, NULL, 'h'},
	    {"version", no_argument, NULL, 'V'},
	    {NULL, 0, NULL, 0},
	};
	/* clang-format on */
	int opt, rc;

	memset(o, 0, sizeof(*o));
	o->user = "paddock-test";
	/* 0, not 1: glibc then also resets its internal state, so the parser
	 * can run more than once in a process (the unit tests do). */
	optind = 0;
	while ((opt = getopt_long(argc, argv, "c:a:o:p:u:DlhV", opts, NULL)) != -1) {
		rc = option(opt, cases, n_cases, o, err);
		if (rc < 0)
			return rc;
		if (o->help || o->version)
			return 0;
	}
	if (optind < argc)
		return err_set(err, EINVAL, "unexpected argument '%s' (see --help)", argv[optind]);
	return 0;
}

void eval_opts_free(struct eval_opts *o)
{
	free(o->cases.v);
	free(o->arms.v);
	o->cases = o->arms = (struct eval_sel){0};
}

bool eval_wants_case(const struct eval_opts *o, const struct eval_case *c)
{
	for (size_t i = 0; i < o->cases.n; i++)
		if (strcasecmp(o->cases.v[i], c->id) == 0)
			return true;
	return o->cases.n == 0;
}

bool eval_wants_arm(const struct eval_opts *o, const char *arm)
{
	for (size_t i = 0; i < o->arms.n; i++)
		if (strcmp(o->arms.v[i], arm) == 0)
			return true;
	return o->arms.n == 0;
}
