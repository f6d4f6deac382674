/* make bench: fdexec FILE FD CMD [ARG]... opens FILE read-only at FD and
 * execs CMD: how bwrap gets paddock's seccomp program (--seccomp FD) under
 * hyperfine, which runs commands without a shell. Costs one static exec. */
#include <fcntl.h>
#include <stdlib.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	int fd;

	if (argc < 4)
		return 2;
	fd = open(argv[1], O_RDONLY);
	if (fd < 0 || dup2(fd, atoi(argv[2])) < 0)
		return 1;
	if (fd != atoi(argv[2]))
		close(fd);
	execvp(argv[3], argv + 3);
	return 127;
}
