/* paddock exec: run a command in a live session of the caller's. The client
 * only asks: one "exec" request with its fds 0-2 over the session's control
 * socket (session_server.c); the supervisor's helper starts the command in
 * the sandbox with the workload's hardening (exec.c) and reports its end.
 * Meanwhile SIGINT, SIGTERM, SIGHUP and SIGQUIT are passed on to it. The
 * client's part after the lookup is exec_client.c's, shared with the static
 * paddock-exec (client/paddock_exec.c). */
#include "launcher.h"

#include "../include/cleanup.h"

int cmd_exec(int argc, char **argv)
{
	struct exec_args a = {.tty = -1};
	struct registry reg = {.fd = -1};
	struct session_info info;
	struct err err = {0};
	cleanup_free char *pkt = NULL;
	cleanup_close int fd = -1;
	size_t len = 0;
	int rc = exec_client_start(argc, argv, "paddock exec", &a, &pkt, &len);

	if (rc >= 0)
		return rc;
	rc = cli_lookup(&reg, a.session, &info, &err);
	if (rc >= 0 && info.state == SESSION_ENDED)
		rc = err_set(&err, ESRCH, "session %s has ended", info.id);
	if (rc >= 0)
		rc = fd = cli_dial(&reg, &info, &err);
	session_registry_close(&reg);
	if (rc < 0)
		return cli_fail("%s", err.msg);
	return exec_client_run(&a, fd, info.id, pkt, len);
}
