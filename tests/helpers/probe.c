/* probe: an in-sandbox probe for the integration tests (in the spirit of
 * bubblewrap's tests/try-syscall.c). It prints key=value lines:
 *
 *   pid=N            its pid (2 or more under paddock-init)
 *   uid=N gid=N      real ids
 *   uid_map=...      /proc/self/uid_map, whitespace collapsed, ";" between lines
 *   gid_map=...      the same for gid_map
 *   CapInh= CapPrm= CapEff= CapBnd= CapAmb=   hex, from /proc/self/status
 *   NoNewPrivs=N  Seccomp=N
 *   fds=0,1,2        open fds, without the one used to list them
 *
 * and then, for each argument:
 *
 *   w:/path   open(path, O_WRONLY|O_CREAT, 0644): "w:/path=OK" or
 *             "w:/path=EROFS" (the errno name). Nothing is written.
 *
 * Plain libc, no dependencies; exits 0 unless it cannot read /proc. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const char *errno_name(int e)
{
	const char *n = strerrorname_np(e);
	static char buf[32];

	if (n)
		return n;
	snprintf(buf, sizeof(buf), "E%d", e);
	return buf;
}

static void print_map(const char *key, const char *path)
{
	char buf[4096], out[4096];
	size_t o = 0;
	ssize_t n;
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	int space = 1;

	if (fd < 0) {
		printf("%s=%s\n", key, errno_name(errno));
		return;
	}
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n < 0)
		n = 0;
	for (ssize_t i = 0; i < n && o < sizeof(out) - 2; i++) {
		char c = buf[i];

		if (c == '\n') {
			while (o > 0 && out[o - 1] == ' ')
				o--;
			if (i + 1 < n)
				out[o++] = ';';
			space = 1;
		} else if (c == ' ' || c == '\t') {
			if (!space)
				out[o++] = ' ';
			space = 1;
		} else {
			out[o++] = c;
			space = 0;
		}
	}
	while (o > 0 && (out[o - 1] == ' ' || out[o - 1] == ';'))
		o--;
	out[o] = '\0';
	printf("%s=%s\n", key, out);
}

static int print_status(void)
{
	static const char *const keys[] = {"CapInh", "CapPrm",	   "CapEff", "CapBnd",
					   "CapAmb", "NoNewPrivs", "Seccomp"};
	FILE *f = fopen("/proc/self/status", "re");
	char line[512];

	if (!f) {
		printf("status=%s\n", errno_name(errno));
		return -1;
	}
	while (fgets(line, sizeof(line), f)) {
		char *colon = strchr(line, ':');
		char *v;

		if (!colon)
			continue;
		*colon = '\0';
		for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++) {
			if (strcmp(line, keys[i]) != 0)
				continue;
			v = colon + 1;
			v += strspn(v, " \t");
			v[strcspn(v, "\n")] = '\0';
			printf("%s=%s\n", keys[i], v);
		}
	}
	fclose(f);
	return 0;
}

static int print_fds(void)
{
	DIR *d = opendir("/proc/self/fd");
	struct dirent *e;
	int self, fds[1024], n = 0;

	if (!d) {
		printf("fds=%s\n", errno_name(errno));
		return -1;
	}
	self = dirfd(d);
	while ((e = readdir(d)) && n < 1024) {
		char *end;
		long fd = strtol(e->d_name, &end, 10);

		if (e->d_name[0] == '.' || *end || fd == self)
			continue;
		fds[n++] = (int)fd;
	}
	closedir(d);
	/* readdir order is not numeric order. */
	for (int i = 1; i < n; i++)
		for (int j = i; j > 0 && fds[j - 1] > fds[j]; j--) {
			int t = fds[j];

			fds[j] = fds[j - 1];
			fds[j - 1] = t;
		}
	printf("fds=");
	for (int i = 0; i < n; i++)
		printf("%s%d", i ? "," : "", fds[i]);
	printf("\n");
	return 0;
}

int main(int argc, char **argv)
{
	int rc = 0;

	printf("pid=%d\n", (int)getpid());
	printf("uid=%u\ngid=%u\n", (unsigned)getuid(), (unsigned)getgid());
	print_map("uid_map", "/proc/self/uid_map");
	print_map("gid_map", "/proc/self/gid_map");
	if (print_status() < 0)
		rc = 1;
	if (print_fds() < 0)
		rc = 1;
	for (int i = 1; i < argc; i++) {
		if (strncmp(argv[i], "w:", 2) == 0) {
			int fd = open(argv[i] + 2, O_WRONLY | O_CREAT | O_CLOEXEC | O_NOCTTY, 0644);

			if (fd >= 0) {
				close(fd);
				printf("%s=OK\n", argv[i]);
			} else {
				printf("%s=%s\n", argv[i], errno_name(errno));
			}
		} else {
			printf("%s=UNKNOWN-REQUEST\n", argv[i]);
			rc = 2;
		}
	}
	return rc;
}
