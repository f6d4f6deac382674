/* paddock trust: approve a project policy's exact bytes, list and revoke
 * approvals (docs/trust.md, "Project policies"). */
#include "launcher.h"

#include <getopt.h>
#include <stdio.h>
#include <string.h>

#include "../include/exitcodes.h"

extern const char paddock_default_policy[];
extern const char paddock_default_policy_end[];

static const char usage[] =
    "Usage: paddock trust [--policy NAME|FILE] [-w DIR] [--allow-widen] [FILE]\n"
    "       paddock trust --list\n"
    "       paddock trust --revoke FILE\n"
    "Approve the project policy FILE (default: .paddock/policy.json of the\n"
    "workspace), as it is now: its canonical path and the SHA-256 of its bytes\n"
    "go into the trust store ($XDG_CONFIG_HOME/paddock/trust.json, yours, 0600).\n"
    "paddock run then applies it in place of your policy while both still match;\n"
    "an edit, a replacement, a symlink or a move needs a new approval.\n"
    "\n"
    "      --policy NAME|FILE  your policy, the one paddock run would use without\n"
    "                          the project's (default: the built-in agent policy)\n"
    "  -w, --workspace DIR     the workspace (default: the current directory)\n"
    "      --allow-widen       approve it also where it is wider than your policy\n"
    "                          (shown first; without this such a file is refused)\n"
    "      --list              the approvals\n"
    "      --revoke FILE       remove the approval of FILE\n"
    "  -h, --help              show this help\n"
    "\n"
    "Exit status: 0 done; 125 refused or an error (one line why).\n"
    "See paddock(1) and docs/security.md.\n";

enum {
	OPT_POLICY = 256,
	OPT_ALLOW_WIDEN,
	OPT_LIST,
	OPT_REVOKE,
};

int cmd_trust(int argc, char **argv)
{
	static const struct option opts[] = {{"policy", required_argument, NULL, OPT_POLICY},
					     {"workspace", required_argument, NULL, 'w'},
					     {"allow-widen", no_argument, NULL, OPT_ALLOW_WIDEN},
					     {"list", no_argument, NULL, OPT_LIST},
					     {"revoke", required_argument, NULL, OPT_REVOKE},
					     {"help", no_argument, NULL, 'h'},
					     {NULL, 0, NULL, 0}};
	struct options o = {0};
	struct err err = {0};
	const char *revoke = NULL;
	bool allow_widen = false, list = false;
	int ch, rc;

	o.builtin_policy = paddock_default_policy;
	o.builtin_policy_len = (size_t)(paddock_default_policy_end - paddock_default_policy);
	optind = 1;
	opterr = 0;
	while ((ch = getopt_long(argc, argv, "+:w:h", opts, NULL)) != -1) {
		switch (ch) {
		case OPT_POLICY:
			o.policy_path = optarg;
			break;
		case 'w':
			o.workspace = optarg;
			break;
		case OPT_ALLOW_WIDEN:
			allow_widen = true;
			break;
		case OPT_LIST:
			list = true;
			break;
		case OPT_REVOKE:
			revoke = optarg;
			break;
		case 'h':
			fputs(usage, stdout);
			return 0;
		default:
			return cli_bad_option(ch, argv, "trust");
		}
	}
	if (argc - optind > 1)
		return cli_fail("trust: unexpected argument '%s'", argv[optind + 1]);
	if ((list || revoke) &&
	    (argc > optind || allow_widen || o.policy_path || o.workspace || (list && revoke)))
		return cli_fail("trust: --list and --revoke FILE go alone (see paddock trust "
				"--help)");
	/* The caller's policy is the one paddock run would use: the
	 * defaults file's when --policy is not given. */
	if (!list && !revoke && (rc = config_apply(&o, &err)) < 0) {
		options_free(&o);
		return cli_fail("%s", err.msg);
	}
	if (list)
		rc = supervisor_trust_list(stdout, &err);
	else if (revoke)
		rc = supervisor_trust_revoke(revoke, stdout, &err);
	else
		rc = supervisor_trust(&o, argc > optind ? argv[optind] : NULL, allow_widen, stdout,
				      &err);
	fflush(stdout);
	options_free(&o);
	return rc < 0 ? cli_fail("%s", err.msg) : 0;
}
