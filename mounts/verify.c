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

struct entry {
	char *path;
	bool ro;
};

/* Read a mount table in mountinfo format once: mount points and their
 * read-only flag, in mount order (later entries stack on top of earlier
 * ones). */
static int read_table(FILE *f, struct entry **out, size_t *n_out)
{
	cleanup_free char *line = NULL;
	struct entry *t = NULL;
	size_t cap = 0, n = 0;

	while (getline(&line, &cap, f) > 0) {
		char mnt[4096], opts[1024];
		struct entry *grown;

		/* id parent major:minor root mountpoint options ... */
		if (sscanf(line, "%*s %*s %*s %*s %4095s %1023s", mnt, opts) != 2)
			continue;
		unescape(mnt);
		grown = realloc(t, (n + 1) * sizeof(*t));
		if (!grown)
			break;
		t = grown;
		t[n].ro = strncmp(opts, "ro", 2) == 0 && (opts[2] == ',' || opts[2] == '\0');
		t[n].path = strdup(mnt);
		if (!t[n].path)
			break;
		n++;
	}
	*out = t;
	*n_out = n;
	return 0;
}

/* Is the topmost mount at path read-only? 1 yes, 0 no, -ENOENT when
 * nothing is mounted there. */
static int topmost_ro(const struct entry *t, size_t n, const char *path)
{
	for (size_t i = n; i-- > 0;)
		if (strcmp(t[i].path, path) == 0)
			return t[i].ro;
	return -ENOENT;
}

static int check(const struct mount_plan *plan, const struct entry *t, size_t n, struct err *err)
{
	int r = topmost_ro(t, n, "/");

	if (r != 1)
		return err_set(err, EPERM, "the new root is %s", r < 0 ? "missing" : "writable");
	for (size_t i = 0; i < plan->n; i++) {
		const struct mount_op *op = &plan->ops[i];

		if (!op->readonly || op->skipped || op->as_symlink)
			continue;
		r = topmost_ro(t, n, op->target);
		if (r < 0)
			return err_sys(err, r, "%s: %s is not mounted", op->what, op->target);
		if (r == 0)
			return err_set(err, EPERM, "%s: %s is writable but planned read-only",
				       op->what, op->target);
	}
	return 0;
}

static int verify_file(const struct mount_plan *plan, FILE *f, struct err *err)
{
	struct entry *t = NULL;
	size_t n = 0;
	int r = read_table(f, &t, &n);

	if (r < 0)
		return err_sys(err, r, "read the mount table");
	r = check(plan, t, n, err);
	for (size_t i = 0; i < n; i++)
		free(t[i].path);
	free(t);
	return r;
}

int mounts_verify(const struct mount_plan *plan, struct err *err)
{
	cleanup_fclose FILE *f = fopen("/proc/self/mountinfo", "re");

	if (!f)
		return err_sys(err, errno, "open /proc/self/mountinfo");
	return verify_file(plan, f, err);
}

int mounts_verify_text(const struct mount_plan *plan, const char *mountinfo, struct err *err)
{
	cleanup_fclose FILE *f = fmemopen((void *)mountinfo, strlen(mountinfo), "r");

	if (!f)
		return err_sys(err, errno, "fmemopen");
	return verify_file(plan, f, err);
}
