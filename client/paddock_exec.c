/* paddock, and paddock-exec: the small static front of the launcher.
 *
 * `paddock exec` is what an agent loop calls hundreds of times (short
 * commands into one warm session), and the launcher is dynamically linked
 * against glibc, libseccomp, libcap, libmnl and cJSON: on a virtual
 * machine glibc's start alone (its CPU feature and cache probes, each
 * CPUID a trap to the hypervisor) can cost a millisecond per call. So the
 * `paddock` on the PATH is this program, built with musl like paddock-init
 * (no shared library): `paddock exec` it does itself, with the same
 * options, request and answers as the launcher's verb
 * (launcher/exec_client.c, shared); every other command it hands, argv
 * untouched, to the launcher (paddock-launcher beside it, or installed in
 * PREFIX/libexec/paddock) by one exec, before it has read anything else.
 * Called as paddock-exec (the same file under a second name, from before
 * the front existed), ARGS mean `paddock exec ARGS`.
 *
 * It finds only a running session by its full id, and reads only the
 * fields of session.json it needs (session/peek.c): the entry's and the
 * file's owner, the id, the owner uid, the state and the supervisor's pid,
 * which must be the listener of the control socket (SO_PEERCRED), as
 * paddock exec checks (cli_dial()). Anything else (a name or a prefix, a
 * session that is starting, ended or stale, an entry it cannot read, a
 * registry with a warning) it hands to the launcher's `exec` with the
 * same arguments, before anything is sent: its errors, exit statuses and
 * warnings are the launcher's. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "../include/cleanup.h"
#include "../include/exitcodes.h"
#include "../include/helper_path.h"
#include "../launcher/exec_client.h"
#include "../launcher/session/session.h"

/* The launcher (beside us, or in ../libexec/paddock) with av (av[0] as we were called: paddock-oci
 * stays paddock-oci). */
static __attribute__((noreturn)) void launch(char **av)
{
	char path[PATH_MAX + 32];
	int rc = helper_path("paddock-launcher", path, sizeof(path));

	if (rc < 0) {
		cli_fail("cannot find paddock-launcher (beside this program, or in "
			 "../libexec/paddock): %s",
			 strerror(-rc));
		exit(EXIT_LAUNCHER);
	}
	execv(path, av);
	cli_fail("%s: %s", path, strerror(errno));
	exit(EXIT_LAUNCHER);
}

/* The launcher's `exec ARGS`: args are argv[1..argc-1] of the verb's own
 * argv (argv[0] "exec" or "paddock-exec"). */
static __attribute__((noreturn)) void hand_over(int argc, char **argv)
{
	char **av = calloc((size_t)argc + 2, sizeof(*av));

	if (!av) {
		cli_fail("out of memory");
		exit(EXIT_LAUNCHER);
	}
	av[0] = "paddock";
	av[1] = "exec";
	memcpy(av + 2, argv + 1, (size_t)(argc - 1) * sizeof(*av));
	launch(av);
}

/* A connection to session id's supervisor, or -1: then paddock exec
 * decides. The same checks as cli_lookup() and cli_dial() for a running
 * session found by its id, with the same code where it needs no cJSON
 * (session/peek.c). */
static int dial(const char *id)
{
	struct registry reg = {.fd = -1};
	cleanup_free char *buf = malloc(SESSION_JSON_MAX + 1);
	cleanup_close int dfd = -1, fd = -1;
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	struct session_peek pk;
	struct ucred cred;
	socklen_t clen = sizeof(cred);
	struct stat st;
	ssize_t len = -1;

	/* A registry with a warning (its /tmp place someone else's) is
	 * paddock exec's to say. */
	if (buf && session_registry_open(&reg, false, NULL) == 0 && !reg.warning[0]) {
		dfd = openat(reg.fd, id, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (dfd >= 0 && fstat(dfd, &st) == 0 && st.st_uid == getuid())
			len = session_entry_text(dfd, id, buf, NULL);
	}
	session_registry_close(&reg);
	if (len < 0 || session_peek(buf, (size_t)len, &pk) < 0 || strcmp(pk.id, id) != 0 ||
	    pk.owner != getuid() || strcmp(pk.state, "running") != 0)
		return -1;
	fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
	snprintf(sa.sun_path, sizeof(sa.sun_path), "/proc/self/fd/%d/control", dfd);
	if (fd < 0 || connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0 ||
	    getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &clen) < 0 ||
	    cred.pid != pk.supervisor_pid || cred.uid != getuid())
		return -1;
	return take_fd(&fd);
}

int main(int argc, char **argv)
{
	struct exec_args a = {.tty = -1};
	cleanup_free char *pkt = NULL;
	cleanup_close int fd = -1;
	const char *base = argc > 0 ? strrchr(argv[0], '/') : NULL;
	const char *prog = "paddock-exec";
	size_t len = 0;
	int rc;

	base = base ? base + 1 : argc > 0 ? argv[0] : "";
	if (strcmp(base, "paddock-exec") != 0) {
		/* Only as paddock: paddock-oci's "exec" is runc's (docs/oci.md),
		 * and under any other name the launcher decides. */
		if (strcmp(base, "paddock") != 0 || argc < 2 || strcmp(argv[1], "exec") != 0)
			launch(argv);
		argc--;
		argv++;
		prog = "paddock exec";
	}
	if (cli_ensure_stdio() < 0)
		return EXIT_LAUNCHER;
	rc = exec_client_start(argc, argv, prog, &a, &pkt, &len);
	if (rc >= 0)
		return rc;
	if (!session_id_valid(a.session) || (fd = dial(a.session)) < 0)
		hand_over(argc, argv);
	return exec_client_run(&a, fd, a.session, pkt, len);
}
