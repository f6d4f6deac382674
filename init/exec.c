/* paddock-init: the child's side of every fork of init, the workload's and
 * each service's (init.c, services.c). libc only. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <signal.h>
#include <unistd.h>

#include "../include/exitcodes.h"
#include "../include/io.h"
#include "../include/landlock.h"
#include "init.h"

/* The sandbox's Landlock domain (--landlock-fd), entered by each process
 * init starts and never by init itself (docs/security.md). No_new_privs,
 * which landlock_restrict_self(2) needs, is inherited from the launcher,
 * which set it before exec'ing us. 0, or -errno. */
static int enter_landlock(const struct init *in)
{
	if (in->landlock_fd < 0)
		return 0;
	return sys_landlock_restrict_self(in->landlock_fd, 0);
}

void init_exec_child(const struct init *in, char **argv, int errfd)
{
	int e;

	sigprocmask(SIG_SETMASK, &in->orig_mask, NULL);
	e = enter_landlock(in);
	if (e < 0) {
		e = INIT_LANDLOCK_FAILED | -e;
		(void)write_full(errfd, &e, sizeof(e));
		_exit(EXIT_LAUNCHER);
	}
	execvp(argv[0], argv);
	e = errno;
	(void)write_full(errfd, &e, sizeof(e));
	_exit(e == ENOENT || e == ENOTDIR ? EXIT_NOTFOUND : EXIT_NOEXEC);
}
