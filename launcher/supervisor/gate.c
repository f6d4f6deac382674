/* The release gate's inputs, checked before anything starts
 * (docs/network.md, "Release gate"): --weaken gate-off and --approvals
 * FILE. The approvals file is secret-ish input: what it approves leaves
 * the machine, so it must be the caller's own regular file that nobody
 * else may write. Its text goes to the mediator in its configuration
 * (a memfd), never into the sandbox. */
#include "run.h"

#include <fcntl.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../../include/cleanup.h"
#include "../../include/io.h"
#include "../../policy/approvals.h"

static int read_approvals(const char *path, char **out, struct err *err)
{
	cleanup_close int fd = -1;
	cleanup_free char *buf = NULL;
	cleanup_free struct approval *a = NULL;
	struct stat st;
	size_t n_a;
	ssize_t n;

	/* O_NOFOLLOW: the file itself, not what a symlink names; O_NONBLOCK:
	 * a FIFO must not make us wait for a writer. */
	fd = open(path, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return err_sys(err, errno, "--approvals %s", path);
	if (fstat(fd, &st) < 0)
		return err_sys(err, errno, "--approvals %s", path);
	if (!S_ISREG(st.st_mode))
		return err_set(err, EINVAL, "--approvals %s: not a regular file", path);
	if (st.st_uid != getuid())
		return err_set(err, EPERM,
			       "--approvals %s: owned by uid %u, not by the caller (uid %u)", path,
			       (unsigned)st.st_uid, (unsigned)getuid());
	if (st.st_mode & (S_IWGRP | S_IWOTH))
		return err_set(err, EPERM,
			       "--approvals %s: writable by its group or others (mode %04o); "
			       "chmod go-w it",
			       path, (unsigned)(st.st_mode & 07777));
	buf = malloc(APPROVALS_FILE_MAX + 2);
	if (!buf)
		return err_set(err, ENOMEM, "out of memory");
	n = read_full(fd, buf, APPROVALS_FILE_MAX + 1);
	if (n < 0)
		return err_sys(err, n, "--approvals %s", path);
	if (approvals_parse(buf, (size_t)n, &a, &n_a, err) < 0)
		return err_wrap(err, "--approvals %s", path);
	buf[n] = '\0';
	*out = take_ptr(&buf);
	return 0;
}

int gate_prepare(struct run_spec *s, bool mediated, struct err *err)
{
	const char *knob = (s->opt->weaken & WEAKEN_GATE_OFF) ? "--weaken gate-off"
			   : s->opt->approvals_path	      ? "--approvals"
							      : NULL;

	if (knob && !mediated)
		return err_set(err, EINVAL,
			       "%s: needs a mediated network (\"network\": {\"mode\": "
			       "\"mediated\"} or --allow-net)",
			       knob);
	if (!s->opt->approvals_path)
		return 0;
	return read_approvals(s->opt->approvals_path, &s->approvals, err);
}
