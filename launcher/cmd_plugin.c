/* paddock plugin review|approve|run: plugins under a reviewed manifest
 * (docs/trust.md, "Plugins"; HB-22). run is paddock run with the
 * additions of the scope the plugin gets (supervisor/plugin.c). */
#include "launcher.h"

#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../include/exitcodes.h"

extern const char paddock_default_policy[];
extern const char paddock_default_policy_end[];

static const char usage[] =
    "Usage: paddock plugin review MANIFEST\n"
    "       paddock plugin approve MANIFEST\n"
    "       paddock plugin run [--policy NAME|FILE] [-w DIR] [-r FILE] [-W KNOB]...\n"
    "                          MANIFEST [--] [ARG]...\n"
    "review: the capability diff of MANIFEST against the approved one of its name\n"
    "  (+ widens, - narrows, ~ changed: artifact, signer), and whether it is held.\n"
    "approve: make MANIFEST the approved one (its artifact must match its digest).\n"
    "run: run the artifact (the bytes hashed, a private copy) under a policy derived\n"
    "  from the manifest: --policy (default: the built-in profile minimal) plus its\n"
    "  file scope (binds of the workspace), network scope (--allow-net) and the\n"
    "  approved tools in PADDOCK_PLUGIN_TOOLS. An update that widens anything runs\n"
    "  under the approved scope until approved; one that widens nothing keeps its\n"
    "  grants. A signature never grants by itself.\n"
    "\n"
    "Exit status: review, approve: 0, or 125 (one line why); run: paddock run's.\n"
    "See paddock(1) and docs/security.md.\n";

static int run(int argc, char **argv)
{
	static const struct option opts[] = {{"policy", required_argument, NULL, 'P'},
					     {"workspace", required_argument, NULL, 'w'},
					     {"record", required_argument, NULL, 'r'},
					     {"weaken", required_argument, NULL, 'W'},
					     {NULL, 0, NULL, 0}};
	const char *policy = "minimal", *ws = NULL, *rec = NULL, *knobs[32];
	size_t n_knobs = 0, n = 0;
	struct plugin_plan plan;
	struct options o;
	struct err err = {0};
	bool signature_only = false;
	char **v;
	int ch, rc;

	optind = 1;
	opterr = 0;
	while ((ch = getopt_long(argc, argv, "+:w:r:W:", opts, NULL)) != -1) {
		switch (ch) {
		case 'P':
			policy = optarg;
			break;
		case 'w':
			ws = optarg;
			break;
		case 'r':
			rec = optarg;
			break;
		case 'W':
			if (n_knobs == 32)
				return cli_fail("plugin run: too many --weaken");
			knobs[n_knobs++] = optarg;
			signature_only |= strcmp(optarg, "signature-only") == 0;
			break;
		default:
			return cli_bad_option(ch, argv, "plugin");
		}
	}
	if (optind >= argc)
		return cli_fail("plugin run: give a manifest (see paddock plugin --help)");
	rc = supervisor_plugin_plan(argv[optind++], ws, signature_only, &plan, stderr, &err);
	if (rc < 0) {
		supervisor_plugin_plan_free(&plan);
		return cli_fail("%s", err.msg);
	}
	if (optind < argc && strcmp(argv[optind], "--") == 0)
		optind++;
	v = calloc(PLUGIN_ARGS_MAX + 2 * 32 + (size_t)argc + 16, sizeof(*v));
	if (!v) {
		supervisor_plugin_plan_free(&plan);
		return cli_fail("out of memory");
	}
	v[n++] = "run";
	v[n++] = "--policy";
	v[n++] = (char *)policy;
	if (ws) {
		v[n++] = "-w";
		v[n++] = (char *)ws;
	}
	if (rec) {
		v[n++] = "-r";
		v[n++] = (char *)rec;
	}
	for (size_t i = 0; i < n_knobs; i++) {
		v[n++] = "--weaken";
		v[n++] = (char *)knobs[i];
	}
	for (size_t i = 0; i < plan.n_args; i++)
		v[n++] = plan.args[i];
	v[n++] = "--";
	v[n++] = plan.target;
	while (optind < argc)
		v[n++] = argv[optind++];
	/* No defaults file: a plugin's scope is its manifest's (the
	 * defaults' binds and variables are the caller's own runs'). */
	rc = options_parse((int)n, v, &o, &err);
	if (rc == 0) {
		o.builtin_policy = paddock_default_policy;
		o.builtin_policy_len =
		    (size_t)(paddock_default_policy_end - paddock_default_policy);
		rc = supervisor_run(&o);
	} else {
		rc = cli_fail("%s", err.msg);
	}
	options_free(&o);
	free(v);
	supervisor_plugin_plan_free(&plan);
	return rc;
}

int cmd_plugin(int argc, char **argv)
{
	struct err err = {0};
	int rc;

	if (argc < 2 || strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0) {
		fputs(usage, argc < 2 ? stderr : stdout);
		return argc < 2 ? EXIT_LAUNCHER : 0;
	}
	if (strcmp(argv[1], "run") == 0)
		return run(argc - 1, argv + 1);
	if (argc != 3 || (strcmp(argv[1], "review") != 0 && strcmp(argv[1], "approve") != 0))
		return cli_fail("plugin %s: see paddock plugin --help", argv[1]);
	rc = strcmp(argv[1], "review") == 0 ? supervisor_plugin_review(argv[2], stdout, &err)
					    : supervisor_plugin_approve(argv[2], stdout, &err);
	fflush(stdout);
	return rc < 0 ? cli_fail("%s", err.msg) : 0;
}
