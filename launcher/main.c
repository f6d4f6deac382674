/* paddock-launcher: the launcher's entry point, exec'd by the static front
 * `paddock` (client/paddock_exec.c) with the caller's argv for every
 * command but a fast `paddock exec`. It dispatches the verb: paddock run
 * (options here, the run in supervisor/), and the client verbs that act on
 * running sessions. */
#include "launcher.h"

#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>

#include "../include/exitcodes.h"
#include "../include/log.h"

extern const char paddock_default_policy[];
extern const char paddock_default_policy_end[];

static const char usage[] =
    "Usage: paddock COMMAND [OPTION]...\n"
    "A setuid-free sandbox launcher with a tiny PID 1.\n"
    "\n"
    "Commands:\n"
    "  run [OPTION]... [--] CMD [ARG]...   run CMD in a new sandbox (paddock run --help)\n"
    "  ps [--all] [--json]                 list the caller's sessions\n"
    "  stop [--grace DUR] ID|NAME          end a session and wait until it has ended\n"
    "  wait ID|NAME                        wait for a session; exit with its status\n"
    "  logs [-f] ID|NAME                   print a detached session's output\n"
    "  rm ID|NAME...                       remove ended sessions from the registry\n"
    "  exec [OPTION]... ID|NAME [--] CMD [ARG]...\n"
    "                                      run CMD in a running session (paddock exec --help)\n"
    "  approve [--dest HOST:PORT/PATH] ID|NAME DIGEST\n"
    "                                      release a publication held by the release gate\n"
    "                                      (paddock approve --help)\n"
    "  trust [--allow-widen] [FILE] | --list | --revoke FILE\n"
    "                                      approve a project policy's bytes (paddock trust "
    "--help)\n"
    "  plugin review|approve|run MANIFEST   plugins under a reviewed manifest\n"
    "                                      (paddock plugin --help)\n"
    "  endpoint [--json] ID|NAME [SERVICE]\n"
    "                                      a session's endpoints with their leases and nonces\n"
    "  budget show|export|settle BUDGET ...\n"
    "                                      a metered budget's ledger (paddock budget --help)\n"
    "  evidence verify LOG [--key F] [--record F] [--witness F]\n"
    "                                      check a run's evidence logs (paddock evidence --help)\n"
    "  evidence export RECORD --out DIR [--secrets F] [--env NAME]... [--deny T]...\n"
    "                                      a review packet of a run, scanned for markers\n"
    "  evidence reconcile RECORD [--ledger F]\n"
    "                                      a run's tool claims against a receiver's effects\n"
    "  oci COMMAND ...                     an OCI runtime with runc's command line, for\n"
    "                                      Docker, Podman, containerd (paddock oci --help)\n"
    "  doctor                              check that paddock can run here\n"
    "  policy show|check|list [NAME|FILE]  a policy as run takes it (paddock policy --help)\n"
    "  help                                show this help\n"
    "\n"
    "Options:\n"
    "  -h, --help      show this help\n"
    "  -V, --version   show the version\n"
    "\n"
    "See paddock(1), paddock-policy(5), paddock-init(8).\n";

static int run_main(int argc, char **argv)
{
	struct options o;
	struct err err = {0};
	int rc;

	rc = options_parse(argc, argv, &o, &err);
	if (rc == 0)
		rc = config_apply(&o, &err);
	if (rc != 0) {
		if (rc < 0)
			fprintf(stderr, "paddock: %s\n", err.msg);
		options_free(&o);
		return rc > 0 ? 0 : EXIT_LAUNCHER;
	}
	/* The built-in default policy is contrib/policies/agent.json,
	 * embedded byte for byte (default_policy.S). */
	o.builtin_policy = paddock_default_policy;
	o.builtin_policy_len = (size_t)(paddock_default_policy_end - paddock_default_policy);
	log_debug("start");
	rc = supervisor_run(&o);
	options_free(&o);
	return rc;
}

int main(int argc, char **argv)
{
	const char *base = argc > 0 ? strrchr(argv[0], '/') : NULL;

	if (cli_ensure_stdio() < 0)
		return EXIT_LAUNCHER;
	/* paddock-oci: a symlink to paddock, for engines that take one
	 * runtime path (docs/oci.md). */
	base = base ? base + 1 : argc > 0 ? argv[0] : "";
	/* The name ps and /proc/PID/comm show is the caller's command's
	 * (paddock, paddock-oci), not this file's. */
	if (base[0])
		(void)prctl(PR_SET_NAME, base);
	if (strcmp(base, "paddock-oci") == 0)
		return cmd_oci(argc, argv);
	if (argc < 2) {
		fputs("paddock: no command given (see paddock --help)\n", stderr);
		return EXIT_LAUNCHER;
	}
	if (strcmp(argv[1], "run") == 0)
		return run_main(argc - 1, argv + 1);
	if (strcmp(argv[1], "ps") == 0)
		return cmd_ps(argc - 1, argv + 1);
	if (strcmp(argv[1], "stop") == 0)
		return cmd_stop(argc - 1, argv + 1);
	if (strcmp(argv[1], "wait") == 0)
		return cmd_wait(argc - 1, argv + 1);
	if (strcmp(argv[1], "rm") == 0)
		return cmd_rm(argc - 1, argv + 1);
	if (strcmp(argv[1], "logs") == 0)
		return cmd_logs(argc - 1, argv + 1);
	if (strcmp(argv[1], "doctor") == 0)
		return cmd_doctor(argc - 1, argv + 1);
	if (strcmp(argv[1], "policy") == 0)
		return cmd_policy(argc - 1, argv + 1);
	if (strcmp(argv[1], "exec") == 0)
		return cmd_exec(argc - 1, argv + 1);
	if (strcmp(argv[1], "evidence") == 0)
		return cmd_evidence(argc - 1, argv + 1);
	if (strcmp(argv[1], "approve") == 0)
		return cmd_approve(argc - 1, argv + 1);
	if (strcmp(argv[1], "trust") == 0)
		return cmd_trust(argc - 1, argv + 1);
	if (strcmp(argv[1], "plugin") == 0)
		return cmd_plugin(argc - 1, argv + 1);
	if (strcmp(argv[1], "endpoint") == 0)
		return cmd_endpoint(argc - 1, argv + 1);
	if (strcmp(argv[1], "budget") == 0)
		return cmd_budget(argc - 1, argv + 1);
	if (strcmp(argv[1], "oci") == 0)
		return cmd_oci(argc - 1, argv + 1);
	/* paddock help VERB: that verb's --help. */
	if (strcmp(argv[1], "help") == 0 && argc == 3 && strcmp(argv[2], "help") != 0) {
		char *again[] = {argv[0], argv[2], "--help", NULL};

		return main(3, again);
	}
	if (strcmp(argv[1], "help") == 0 || strcmp(argv[1], "--help") == 0 ||
	    strcmp(argv[1], "-h") == 0) {
		fputs(usage, stdout);
		return 0;
	}
	if (strcmp(argv[1], "--version") == 0 || strcmp(argv[1], "-V") == 0) {
		printf("paddock %s (commit %s)\n", PADDOCK_VERSION, PADDOCK_COMMIT);
		return 0;
	}
	fprintf(stderr, "paddock: unknown command '%s' (see paddock --help)\n", argv[1]);
	return EXIT_LAUNCHER;
}
