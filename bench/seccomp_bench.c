/* Micro-benchmark of the default seccomp profile (not a test): the cost of
 * a cheap syscall without a filter and under the filter built from
 * contrib/policies/agent.json, in one run, plus the time to build and load
 * the filter. Aim (issue 3): at most 1.3x the unfiltered loop.
 *
 * getppid() is allowed unconditionally, so on Linux 5.11+ the kernel's
 * seccomp action cache answers it without running the filter at all; the
 * ioctl() loop shows a call that does run it, through the argument rules
 * that refuse TIOCSTI and TIOCLINUX (the longest path in the profile).
 *
 * Usage: seccomp_bench [N] (default 10000000), from the repository root.
 * seccomp_bench --dump-bpf FILE writes the exported program (what the
 * launcher loads) to FILE, for bwrap --seccomp in the start-up benchmark. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "../launcher/sandbox/sandbox.h"

#define POLICY "contrib/policies/agent.json"

static double now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

#define CHUNKS 10

/* ns per call of n calls made in CHUNKS chunks: the fastest chunk, which
 * is the least disturbed by interrupts and other tasks (a VM with two CPUs
 * varies by 20% from run to run otherwise). fd < 0: the raw getppid
 * syscall, so that no libc caching can skip the kernel; otherwise
 * ioctl(fd, FIONREAD). */
static double per_call(long n, int fd)
{
	long chunk = n / CHUNKS > 0 ? n / CHUNKS : 1;
	double best = 0;
	int v;

	for (int c = 0; c < CHUNKS; c++) {
		double t0 = now_ns(), t;

		for (long i = 0; i < chunk; i++) {
			if (fd < 0)
				syscall(SYS_getppid);
			else
				ioctl(fd, FIONREAD, &v);
		}
		t = (now_ns() - t0) / (double)chunk;
		if (c == 0 || t < best)
			best = t;
	}
	return best;
}

static char *slurp(const char *path, size_t *len)
{
	struct stat st;
	char *buf;
	ssize_t n;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0 || fstat(fd, &st) < 0)
		return NULL;
	buf = malloc((size_t)st.st_size + 1);
	n = buf ? read(fd, buf, (size_t)st.st_size) : -1;
	close(fd);
	if (n != st.st_size) {
		free(buf);
		return NULL;
	}
	*len = (size_t)n;
	return buf;
}

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 10000000L;
	char cwd[4096];
	struct policy_vars vars = {.workspace = cwd, .home = "/root", .pwd = cwd};
	struct policy *p = NULL;
	struct seccomp_info info = {0};
	scmp_filter_ctx ctx = NULL;
	struct err err = {0};
	double base, filtered, ioctl_base, ioctl_filtered, t0, build_us, load_us;
	size_t len;
	char *buf;
	int fd, r;

	if (argc == 3 && strcmp(argv[1], "--dump-bpf") == 0)
		n = 1;
	if (n <= 0 || !getcwd(cwd, sizeof(cwd))) {
		fprintf(stderr, "usage: seccomp_bench [N], from the repository root\n");
		return 2;
	}
	buf = slurp(POLICY, &len);
	if (!buf) {
		fprintf(stderr, "seccomp_bench: read %s: %s\n", POLICY, strerror(errno));
		return 1;
	}
	r = policy_load_buffer(buf, len, &vars, &p, &err);
	free(buf);
	if (r < 0) {
		fprintf(stderr, "seccomp_bench: %s: %s\n", POLICY, err.msg);
		return 1;
	}
	if (argc == 3 && strcmp(argv[1], "--dump-bpf") == 0) {
		FILE *f;

		if (seccomp_build(p, &ctx, &info, &err) < 0 || !info.bpf) {
			fprintf(stderr, "seccomp_bench: %s\n", err.msg);
			return 1;
		}
		f = fopen(argv[2], "w");
		if (!f || fwrite(info.bpf, 1, info.bpf_len, f) != info.bpf_len || fclose(f) != 0) {
			perror(argv[2]);
			return 1;
		}
		seccomp_release(ctx);
		seccomp_info_free(&info);
		policy_free(p);
		return 0;
	}
	fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
	/* Warm up caches and the CPU's frequency before measuring. */
	per_call(n / 10 + 1, -1);
	base = per_call(n, -1);
	ioctl_base = per_call(n / 10 + 1, fd);

	t0 = now_ns();
	r = seccomp_build(p, &ctx, &info, &err);
	build_us = (now_ns() - t0) / 1e3;
	if (r < 0 || !ctx) {
		fprintf(stderr, "seccomp_bench: %s\n", r < 0 ? err.msg : "profile is \"none\"");
		return 1;
	}
	/* As the launcher: no_new_privs first, then the filter. */
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0) {
		perror("seccomp_bench: PR_SET_NO_NEW_PRIVS");
		return 1;
	}
	/* The launcher's path: the program exported in the parent, loaded
	 * with one seccomp(2) call (the default profile is even compiled at
	 * build time, so paddock does not pay the build above at all). */
	t0 = now_ns();
	r = seccomp_apply_bpf(&info, &err);
	load_us = (now_ns() - t0) / 1e3;
	if (r < 0) {
		fprintf(stderr, "seccomp_bench: %s\n", err.msg);
		return 1;
	}

	per_call(n / 10 + 1, -1);
	filtered = per_call(n, -1);
	ioctl_filtered = per_call(n / 10 + 1, fd);

	printf("seccomp default profile (%s): %u allowed, %u rules, bpf %.12s\n", POLICY,
	       info.n_allowed, info.n_rules, info.bpf_sha256);
	printf("ns/call: the fastest of %d chunks\n", CHUNKS);
	printf("getppid x %ld: %.1f ns/call unfiltered, %.1f ns/call filtered, ratio %.2f%s\n", n,
	       base, filtered, filtered / base, filtered / base <= 1.3 ? "" : " (over 1.3)");
	printf("ioctl(FIONREAD) x %ld: %.1f ns/call unfiltered, %.1f ns/call filtered, ratio "
	       "%.2f\n",
	       n / 10 + 1, ioctl_base, ioctl_filtered, ioctl_filtered / ioctl_base);
	printf("filter build %.0f us (libseccomp; paddock embeds the default profile's program), "
	       "load %.0f us (the exported program, as the launcher loads it)\n",
	       build_us, load_us);
	seccomp_release(ctx);
	seccomp_info_free(&info);
	policy_free(p);
	close(fd);
	return 0;
}
