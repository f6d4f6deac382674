/* Checking the mount table against the plan, after pivot_root: the kernel's
 * view (/proc/self/mountinfo) is the truth, not what we asked for. */
#include "mounts.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../include/cleanup.h"

/* mountinfo escapes space, tab, newline and backslash as \ooo (proc(5)). */
static void unescape(char *s)
{
	char *w = s;

	for (char *r = s; *r; r++) {
		if (r[0] == '\\' && r[1] >= '0' && r[1] <= '7' && r[2] >= '0' && r[2] <= '7' &&
		    r[3] >= '0' && r[3] <= '7') {
			*w++ = (char)((r[1] - '0') * 64 + (r[2] - '0') * 8 + (r[3] - '0'));
			r += 3;
		} else {
			*w++ = *r;
		}
	}
	*w = '\0';
}

/* Is the topmost mount at path read-only? 1 yes, 0 no, -ENOENT when
 * nothing is mounted there. The last line wins: later mounts stack on top. */
static int topmost_ro(const char *path)
{
	cleanup_fclose FILE *f = fopen("/proc/self/mountinfo", "re");
	cleanup_free char *line = NULL;
	size_t cap = 0;
	int found = -ENOENT;

	if (!f)
		return -errno;
	while (getline(&line, &cap, f) > 0) {
		char mnt[4096], opts[1024];

		/* id parent major:minor root mountpoint options ... */
		if (sscanf(line, "%*s %*s %*s %*s %4095s %1023s", mnt, opts) != 2)
			continue;
		unescape(mnt);
		if (strcmp(mnt, path) != 0)
			continue;
		found = strncmp(opts, "ro", 2) == 0 && (opts[2] == ',' || opts[2] == '\0');
	}
	return found;
}

int mounts_verify(const struct mount_plan *plan, struct err *err)
{
	int r = topmost_ro("/");

	if (r != 1)
		return err_set(err, EPERM, "the new root is %s", r < 0 ? "missing" : "writable");
	for (size_t i = 0; i < plan->n; i++) {
		const struct mount_op *op = &plan->ops[i];

		if (!op->readonly || op->skipped || op->as_symlink)
			continue;
		r = topmost_ro(op->target);
		if (r < 0)
			return err_sys(err, r, "%s: %s is not mounted", op->what, op->target);
		if (r == 0)
			return err_set(err, EPERM, "%s: %s is writable but planned read-only",
				       op->what, op->target);
	}
	return 0;
}
