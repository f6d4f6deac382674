/* make bench: createloop N - N files created, written to and removed in
 * the current directory, one after the other (open O_CREAT|O_WRONLY|
 * O_TRUNC, write, close, unlink), as a build's temporaries are. Run inside
 * paddock run with protect_git "check" and "allowlist", it measures the
 * allowlist's round trip to the supervisor per created and removed file
 * (docs/security.md, "The git directory as an allowlist").
 *
 * Prints one line: files=N total_ms= per_file_us= failed=F (F: calls that
 * failed; a row with F > 0 did not run the same work). CLOCK_MONOTONIC.
 * Not a test: nothing here passes or fails. */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 10000, failed = 0;
	struct timespec a, b;
	double ms;

	clock_gettime(CLOCK_MONOTONIC, &a);
	for (long i = 0; i < n; i++) {
		char name[32];
		int fd;

		snprintf(name, sizeof(name), "createloop.%ld", i);
		fd = open(name, O_CREAT | O_WRONLY | O_TRUNC | O_CLOEXEC, 0644);
		if (fd < 0 || write(fd, "x", 1) != 1)
			failed++;
		if (fd >= 0)
			close(fd);
		if (unlink(name) < 0)
			failed++;
	}
	clock_gettime(CLOCK_MONOTONIC, &b);
	ms = (double)(b.tv_sec - a.tv_sec) * 1e3 + (double)(b.tv_nsec - a.tv_nsec) / 1e6;
	printf("files=%ld total_ms=%.2f per_file_us=%.2f failed=%ld\n", n, ms, ms * 1e3 / (double)n,
	       failed);
	return 0;
}
