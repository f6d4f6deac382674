/* paddock approve: release a held publication of a running session, or
 * approve one ahead (docs/network.md, "Release gate"). The request goes
 * to the session's supervisor over its control socket (only the owner's
 * uid is served: SO_PEERCRED), which hands it to the mediator; nothing
 * of it passes through the sandbox. */
#include "launcher.h"

#include <getopt.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "../include/cleanup.h"
#include "../include/exitcodes.h"
#include "../policy/approvals.h"

static const char usage[] =
    "Usage: paddock approve [--dest HOST:PORT/PATH] ID|NAME DIGEST\n"
    "Approve one publication of a running session's release gate: a body whose\n"
    "SHA-256 is DIGEST (64 hex digits, optionally \"sha256:\" first).\n"
    "\n"
    "  -d, --dest HOST:PORT/PATH  the destination it may go to (a rule's name and\n"
    "                             port, the request's path and query); without it,\n"
    "                             the request held now with that digest is released\n"
    "  -h, --help                 show this help\n"
    "\n"
    "Single use: an approval releases one request. Only the session's owner may\n"
    "approve. Exit status: 0 approved or released; 125 refused (one line why).\n"
    "See paddock(1) and docs/network.md.\n";

int cmd_approve(int argc, char **argv)
{
	static const struct option opts[] = {{"dest", required_argument, NULL, 'd'},
					     {"help", no_argument, NULL, 'h'},
					     {NULL, 0, NULL, 0}};
	const char *dest = NULL, *why;
	struct registry reg = {.fd = -1};
	struct session_info info;
	struct approval a;
	struct err err = {0};
	char req[APPROVAL_TARGET_MAX + POLICY_NET_NAME_MAX + 96], reply[2048];
	cleanup_close int fd = -1;
	ssize_t n;
	int ch, rc;

	optind = 1;
	opterr = 0;
	while ((ch = getopt_long(argc, argv, "+:d:h", opts, NULL)) != -1) {
		switch (ch) {
		case 'd':
			dest = optarg;
			break;
		case 'h':
			fputs(usage, stdout);
			return 0;
		default:
			return cli_bad_option(ch, argv, "approve");
		}
	}
	if (argc - optind != 2)
		return cli_fail(
		    "approve: give a session and a digest (see paddock approve --help)");
	if (approval_parse_digest(argv[optind + 1], a.digest, &why) < 0)
		return cli_fail("approve: %s %s", argv[optind + 1], why);
	if (dest && approval_parse_dest(dest, &a.dest, &why) < 0)
		return cli_fail("--dest %s: %s", dest, why);
	snprintf(req, sizeof(req), "approve %s%s%s", a.digest, dest ? " " : "", dest ? dest : "");
	rc = cli_lookup(&reg, argv[optind], &info, &err);
	if (rc >= 0 && info.state != SESSION_RUNNING && info.state != SESSION_RETAINED &&
	    info.state != SESSION_STARTING)
		rc = err_set(&err, ESRCH, "session %s has ended", info.id);
	if (rc >= 0)
		rc = fd = cli_dial(&reg, &info, &err);
	if (rc >= 0 && send(fd, req, strlen(req), MSG_NOSIGNAL) < 0)
		rc = err_sys(&err, errno, "session %s: control socket", info.id);
	if (rc >= 0) {
		n = cli_recv_reply(fd, reply, sizeof(reply), 0);
		if (n <= 0)
			rc = err_set(&err, EPIPE, "session %s: the supervisor went away", info.id);
	}
	session_registry_close(&reg);
	if (rc < 0)
		return cli_fail("%s", err.msg);
	if (strncmp(reply, "ok ", 3) != 0)
		return cli_fail("%s", strncmp(reply, "error ", 6) == 0 ? reply + 6 : reply);
	printf("%s\n", reply + 3);
	return 0;
}
