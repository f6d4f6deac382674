/* make bench: peak RSS of a command's own process (not a test).
 *
 * rss CMD [ARG]...
 *
 * Runs CMD and samples VmHWM of its process (not its descendants) in
 * /proc/PID/status every millisecond until it exits; a setpriv in front
 * execs, so the pid stays the same. For `paddock run` that process is the
 * supervisor. Prints: hwm_kb=N status=N */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static long hwm(pid_t pid)
{
	char path[64], line[256];
	long kb = -1;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	f = fopen(path, "r");
	while (f && fgets(line, sizeof(line), f))
		if (sscanf(line, "VmHWM: %ld", &kb) == 1)
			break;
	if (f)
		fclose(f);
	return kb;
}

int main(int argc, char **argv)
{
	long peak = -1, v;
	int status = 0;
	pid_t pid;

	if (argc < 2)
		return 2;
	pid = fork();
	if (pid < 0)
		return 1;
	if (pid == 0) {
		execvp(argv[1], argv + 1);
		_exit(127);
	}
	/* The exec first: before it, VmHWM is ours. */
	nanosleep(&(struct timespec){0, 2000000}, NULL);
	for (;;) {
		if (waitpid(pid, &status, WNOHANG) == pid)
			break;
		v = hwm(pid);
		if (v > peak)
			peak = v;
		nanosleep(&(struct timespec){0, 1000000}, NULL);
	}
	printf("hwm_kb=%ld status=%d\n", peak, WIFEXITED(status) ? WEXITSTATUS(status) : -1);
	return 0;
}
