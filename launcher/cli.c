/* What the client verbs (paddock ps, stop, wait, rm, exec) share: the one
 * error line, finding a session, and connecting to its supervisor. */
#include "launcher.h"

#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "../include/cleanup.h"
#include "../include/exitcodes.h"

int cli_bad_option(int ch, char *const argv[], const char *verb)
{
	if (ch == ':')
		return cli_fail("%s: needs an argument", argv[optind - 1]);
	return cli_fail("%s: unknown option (see paddock %s --help)", argv[optind - 1], verb);
}

int cli_dial(const struct registry *reg, const struct session_info *info, struct err *err)
{
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	cleanup_close int dfd = -1, fd = -1;
	struct ucred cred;
	socklen_t len = sizeof(cred);

	dfd = openat(reg->fd, info->id, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
	if (dfd < 0 || fd < 0)
		return err_sys(err, errno, "session %s", info->id);
	snprintf(sa.sun_path, sizeof(sa.sun_path), "/proc/self/fd/%d/control", dfd);
	if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0)
		return err_sys(err, errno, "session %s: control socket", info->id);
	if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) < 0 ||
	    cred.pid != info->supervisor.pid || cred.uid != getuid())
		return err_set(err, EPERM, "session %s: its control socket is not its supervisor's",
			       info->id);
	return take_fd(&fd);
}

int cli_lookup(struct registry *reg, const char *what, struct session_info *info, struct err *err)
{
	int rc = session_registry_open(reg, false, err);

	if (rc == -ENOENT)
		return err_set(err, ENOENT, "no such session: %s", what);
	if (rc < 0)
		return rc;
	if (reg->warning[0])
		fprintf(stderr, "paddock: warning: %s\n", reg->warning);
	rc = session_find(reg, what, info, err);
	if (rc >= 0 && info->state == SESSION_STALE) {
		(void)session_remove(reg, info->id);
		return err_set(
		    err, ESRCH,
		    "session %s is stale (its supervisor is gone); its entry was removed",
		    info->id);
	}
	return rc;
}
