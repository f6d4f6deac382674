/* paddock-init for the sandbox: found, copied into a sealed memfd, and its
 * command line (the fd layout of include/initproto.h). */
#include "sandbox.h"

#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/sendfile.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../../include/cleanup.h"
#include "../../include/helper_path.h"
#include "../../include/initproto.h"

int sandbox_find_helper(const char *name, char *buf, size_t size)
{
	return helper_path(name, buf, size);
}

static int find_init(const char *init_path, char *buf, size_t size)
{
	if (init_path)
		return snprintf(buf, size, "%s", init_path) < (int)size ? 0 : -ENAMETOOLONG;
	return sandbox_find_helper("paddock-init", buf, size);
}

/* paddock-init runs from a sealed memfd copy, so the sandbox's /proc/1/exe
 * points at an anonymous, unwritable file and never at a host binary that
 * could be overwritten through it (CVE-2019-5736, the runc /proc/self/exe
 * overwrite). */
int sandbox_prepare_init(const char *init_path, int *out, struct err *err)
{
	char path[PATH_MAX];
	cleanup_close int src = -1, mfd = -1;
	struct stat st;
	off_t off = 0;
	int rc;

	rc = find_init(init_path, path, sizeof(path));
	if (rc < 0)
		return err_sys(err, rc, "cannot find paddock-init (use --init PATH)");
	src = open(path, O_RDONLY | O_CLOEXEC);
	if (src < 0 || fstat(src, &st) < 0)
		return err_sys(err, errno, "open %s", path);
	mfd = memfd_create("paddock-init", MFD_CLOEXEC | MFD_ALLOW_SEALING);
	if (mfd < 0)
		return err_sys(err, errno, "memfd_create");
	while (off < st.st_size) {
		ssize_t n = sendfile(mfd, src, &off, (size_t)(st.st_size - off));

		if (n <= 0)
			return err_sys(err, n < 0 ? errno : EIO, "copy %s", path);
	}
	if (fcntl(mfd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_WRITE | F_SEAL_SEAL) < 0)
		return err_sys(err, errno, "seal the paddock-init copy");
	*out = take_fd(&mfd);
	return 0;
}

/* paddock-init's argv: its options, each service as "--service NAME
 * LEASE_MS ARGC ARG...", then "--" and the workload. Heap: we are a copy
 * of the launcher after clone3, and exec next. Built in the child, before
 * its setup: after the seccomp filter only the exec is left. */
char **sandbox_init_argv(const struct sandbox_spec *s)
{
	const struct policy *p = s->policy;
	size_t n = 0, total = 19, i;
	char **argv;

	for (i = 0; s->argv[i]; i++)
		total++;
	for (size_t k = 0; k < p->n_services; k++)
		total += 4 + p->services[k].argc;
	argv = calloc(total, sizeof(*argv));
	if (!argv)
		return NULL;
	argv[n++] = "paddock-init";
	argv[n++] = "--control-fd";
	if (asprintf(&argv[n++], "%d", INITPROTO_FD_CONTROL) < 0)
		return NULL;
	argv[n++] = "--grace";
	if (asprintf(&argv[n++], "%llu", (unsigned long long)p->grace_ms) < 0)
		return NULL;
	if (s->no_sweep)
		argv[n++] = "--no-sweep";
	if (s->landlock.enabled) {
		argv[n++] = "--landlock-fd";
		if (asprintf(&argv[n++], "%d", INITPROTO_FD_LANDLOCK) < 0)
			return NULL;
	}
	if (s->svc_output) {
		int fd = INITPROTO_FD_CONTROL + 1 + (s->landlock.enabled ? 1 : 0);

		argv[n++] = "--service-stdout-fd";
		if (asprintf(&argv[n++], "%d", fd) < 0)
			return NULL;
		argv[n++] = "--service-stderr-fd";
		if (asprintf(&argv[n++], "%d", fd + 1) < 0)
			return NULL;
	}
	if (s->tty)
		argv[n++] = "--tty";
	if (s->deadline_ms > 0) {
		argv[n++] = "--deadline-ms";
		if (asprintf(&argv[n++], "%lld", (long long)s->deadline_ms) < 0)
			return NULL;
	}
	for (size_t k = 0; k < p->n_services; k++) {
		const struct policy_service *sv = &p->services[k];

		argv[n++] = "--service";
		argv[n++] = sv->name;
		if (asprintf(&argv[n++], "%llu", (unsigned long long)sv->lease_ms) < 0 ||
		    asprintf(&argv[n++], "%zu", sv->argc) < 0)
			return NULL;
		for (size_t j = 0; j < sv->argc; j++)
			argv[n++] = sv->argv[j];
	}
	argv[n++] = "--";
	for (i = 0; s->argv[i]; i++)
		argv[n++] = s->argv[i];
	return argv;
}
