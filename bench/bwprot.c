/* make bench: bwprot FILE FD LIST CMD [ARG]... is fdexec (FILE read-only at
 * FD, for bwrap's --seccomp FD) that also cleans up after CMD: bwrap given
 * paddock's protected paths as --ro-bind makes each missing target on the
 * host, through the workspace's bind, and leaves it there; LIST names them,
 * one path a line, and they are removed (rmdir(2), or unlink(2) for a
 * file) once CMD has ended, as paddock removes its placeholders before it
 * returns. As generous to bwrap as paddock is to itself: a directory's
 * inode is freed at its last close (0.1-0.2 ms each on this VM's ext4),
 * and paddock leaves those closes to its sweeper, after it returned; so
 * here each directory is opened before its rmdir and a child closes them
 * all after we exit. Exits with CMD's status; 1 when a path of LIST is
 * still there (the next round would start from another workspace). Costs
 * the one static exec fdexec costs, and two forks. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#define PATHS_MAX 256

int main(int argc, char **argv)
{
	static char buf[PATHS_MAX * 256];
	char *path[PATHS_MAX];
	int fd, st, n = 0, bad = 0, held[PATHS_MAX], nheld = 0;
	ssize_t len;
	pid_t pid;

	if (argc < 5)
		return 2;
	fd = open(argv[3], O_RDONLY);
	if (fd < 0 || (len = read(fd, buf, sizeof(buf) - 1)) < 0 || len == sizeof(buf) - 1)
		return 2;
	close(fd);
	buf[len] = '\0';
	for (char *t = strtok(buf, "\n"); t; t = strtok(NULL, "\n"))
		if (n == PATHS_MAX)
			return 2;
		else
			path[n++] = t;
	fd = open(argv[1], O_RDONLY);
	if (fd < 0 || dup2(fd, atoi(argv[2])) < 0)
		return 1;
	if (fd != atoi(argv[2]))
		close(fd);
	pid = fork();
	if (pid < 0)
		return 1;
	if (pid == 0) {
		execvp(argv[4], argv + 4);
		_exit(127);
	}
	while (waitpid(pid, &st, 0) < 0)
		if (errno != EINTR)
			return 1;
	/* Deepest first: LIST is in the order bwrap made them. */
	for (int i = n - 1; i >= 0; i--) {
		struct stat s;

		if (lstat(path[i], &s) < 0)
			continue;
		if (S_ISDIR(s.st_mode) &&
		    (fd = open(path[i], O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)) >= 0)
			held[nheld++] = fd;
		if ((S_ISDIR(s.st_mode) ? rmdir(path[i]) : unlink(path[i])) < 0) {
			fprintf(stderr, "bwprot: %s: %s\n", path[i], strerror(errno));
			bad = 1;
		}
	}
	/* The last closes, after we are gone (not waited for). */
	if (nheld && fork() == 0) {
		for (int i = 0; i < 3; i++)
			close(i);
		for (int i = 0; i < nheld; i++)
			close(held[i]);
		_exit(0);
	}
	if (bad)
		return 1;
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}
