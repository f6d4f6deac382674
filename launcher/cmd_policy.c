/* paddock policy show|check|list: a policy as paddock run would take it
 * (docs/policy.md, "Policies that compose"). */
#include "launcher.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../include/exitcodes.h"

extern const char paddock_default_policy[];
extern const char paddock_default_policy_end[];

static const char usage[] =
    "Usage: paddock policy show [NAME|FILE]\n"
    "       paddock policy check [NAME|FILE]\n"
    "       paddock policy list\n"
    "show: the policy with its \"extends\" resolved, one JSON document (without\n"
    "  NAME or FILE: the built-in agent policy).\n"
    "check: load it as paddock run would, in the current directory, with the same\n"
    "  messages; exit 0 and its effective digest, or 125 and the error.\n"
    "list: the built-in profiles (more in $XDG_CONFIG_HOME/paddock/policies and\n"
    "  /etc/paddock/policies: NAME.json).\n";

int cmd_policy(int argc, char **argv)
{
	struct options o = {0};
	struct err err = {0};
	char label[4200], sha[65];
	char *text = NULL;
	size_t len = 0;
	int rc;

	if (argc < 2 || strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0) {
		fputs(usage, argc < 2 ? stderr : stdout);
		return argc < 2 ? EXIT_LAUNCHER : 0;
	}
	if (argc > 3)
		return cli_fail("policy %s: unexpected argument '%s'", argv[1], argv[3]);
	o.policy_path = argc == 3 ? argv[2] : NULL;
	o.builtin_policy = paddock_default_policy;
	o.builtin_policy_len = (size_t)(paddock_default_policy_end - paddock_default_policy);
	if (strcmp(argv[1], "list") == 0 && argc == 2) {
		supervisor_profiles(stdout);
		return 0;
	}
	if (strcmp(argv[1], "show") == 0) {
		rc = supervisor_policy_text(&o, &text, &len, label, sizeof(label), &err);
		if (rc < 0)
			return cli_fail("%s", err.msg);
		fwrite(text, 1, len, stdout);
		if (len && text[len - 1] != '\n')
			putchar('\n');
		free(text);
		return fflush(stdout) == 0 ? 0 : EXIT_LAUNCHER;
	}
	if (strcmp(argv[1], "check") == 0) {
		rc = supervisor_policy_check(&o, sha, label, sizeof(label), &err);
		if (rc < 0)
			return cli_fail("%s", err.msg);
		printf("%s: ok (effective sha256 %s)\n", label, sha);
		return 0;
	}
	return cli_fail("policy %s: unknown (show, check or list; see paddock policy --help)",
			argv[1]);
}
