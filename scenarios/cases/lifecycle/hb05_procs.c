/* HB-05: a session's processes by identity, and kills by another user
 * (hb05_procs.h). */
#include "hb05_procs.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../../../include/cleanup.h"
#include "../../../include/io.h"
#include "../../observers/observe.h"

static void add(struct idents *out, pid_t pid, unsigned long long start, const char *what)
{
	for (size_t i = 0; i < out->n; i++)
		if (out->v[i].pid == pid && out->v[i].start == start)
			return;
	if (out->n < IDENTS_MAX) {
		out->v[out->n].pid = pid;
		out->v[out->n].start = start;
		snprintf(out->v[out->n].what, sizeof(out->v[0].what), "%s", what);
		out->n++;
	}
}

/* The inode of the socket listening on 127.0.0.1:port, 0 when none. */
static unsigned long listen_inode(int port)
{
	cleanup_fclose FILE *f = fopen("/proc/net/tcp", "re");
	char line[512];

	if (!f || !fgets(line, sizeof(line), f))
		return 0;
	while (fgets(line, sizeof(line), f)) {
		unsigned addr, lport, st, uid;
		unsigned long ino;

		/* sl local rem st tx:rx tr:when retrnsmt uid timeout inode */
		if (sscanf(line, " %*d: %8X:%4X %*8X:%*4X %2X %*8X:%*8X %*2X:%*8X %*8X %u %*d %lu",
			   &addr, &lport, &st, &uid, &ino) != 5)
			continue;
		if (st == 0x0A && (int)lport == port && ntohl(addr) == INADDR_LOOPBACK)
			return ino;
	}
	return 0;
}

/* Does pid hold an fd on the socket with this inode? */
static bool holds(const char *pid, const char *want)
{
	char dir[64];
	DIR *d;
	struct dirent *de;
	bool yes = false;

	snprintf(dir, sizeof(dir), "/proc/%s/fd", pid);
	d = opendir(dir);
	if (!d)
		return false;
	while (!yes && (de = readdir(d))) {
		char path[320], link[64];
		ssize_t k;

		snprintf(path, sizeof(path), "%s/%s", dir, de->d_name);
		k = readlink(path, link, sizeof(link) - 1);
		if (k > 0) {
			link[k] = '\0';
			yes = strcmp(link, want) == 0;
		}
	}
	closedir(d);
	return yes;
}

int idents_listener(int port, struct idents *out)
{
	unsigned long ino = listen_inode(port);
	char want[48];
	DIR *d;
	struct dirent *de;
	int k = 0;

	if (!ino)
		return -ENOENT;
	snprintf(want, sizeof(want), "socket:[%lu]", ino);
	d = opendir("/proc");
	if (!d)
		return -errno;
	while ((de = readdir(d))) {
		struct proc_entry e;

		if (!isdigit((unsigned char)de->d_name[0]) || !holds(de->d_name, want))
			continue;
		if (inventory_read((pid_t)atoi(de->d_name), &e) == 0) {
			add(out, e.pid, e.start, "listener holder");
			k++;
		}
	}
	closedir(d);
	return k;
}

int idents_session(pid_t init, unsigned long long init_start, pid_t sup,
		   unsigned long long sup_start, struct idents *out)
{
	struct proc_entry *all = NULL, e;
	size_t n = 0;

	if (inventory_read(init, &e) < 0 || e.start != init_start)
		return -ESRCH;
	if (inventory_scan(&all, &n) < 0)
		return -EIO;
	for (size_t i = 0; i < n; i++)
		if (all[i].pidns == e.pidns)
			add(out, all[i].pid, all[i].start,
			    all[i].pid == init ? "init" : "in the pid ns");
	free(all);
	if (inventory_read(sup, &e) < 0 || e.start != sup_start)
		return -ESRCH;
	add(out, sup, sup_start, "supervisor");
	return 0;
}

void idents_compare(const struct idents *before, size_t *ended, size_t *replaced)
{
	*ended = *replaced = 0;
	for (size_t i = 0; i < before->n; i++) {
		struct proc_entry e;

		if (inventory_alive(before->v[i].pid, before->v[i].start))
			continue;
		if (inventory_read(before->v[i].pid, &e) == 0 && e.start != before->v[i].start)
			(*replaced)++;
		else
			(*ended)++;
	}
}

bool idents_has(const struct idents *b, const struct ident *a)
{
	for (size_t i = 0; i < b->n; i++)
		if (b->v[i].pid == a->pid && b->v[i].start == a->start)
			return true;
	return false;
}

/* In the child: one line per attempt, "PID how errno". */
static void kill_child(const struct idents *t, uid_t uid, gid_t gid, int out)
{
	if (setgroups(0, NULL) < 0 || setresgid(gid, gid, gid) < 0 || setresuid(uid, uid, uid) < 0)
		_exit(125);
	for (size_t i = 0; i < t->n; i++) {
		struct proc_entry e;
		int pfd, r;

		/* Never signal a pid that names another process now. */
		if (inventory_read(t->v[i].pid, &e) < 0 || e.start != t->v[i].start) {
			dprintf(out, "%d skip %d\n", (int)t->v[i].pid, ESRCH);
			continue;
		}
		r = kill(t->v[i].pid, SIGKILL);
		dprintf(out, "%d kill %d\n", (int)t->v[i].pid, r < 0 ? errno : 0);
		pfd = (int)syscall(SYS_pidfd_open, t->v[i].pid, 0);
		if (pfd < 0) {
			dprintf(out, "%d pidfd %d\n", (int)t->v[i].pid, errno);
			continue;
		}
		/* The pidfd pins the process: check it is still ours. */
		if (inventory_read(t->v[i].pid, &e) < 0 || e.start != t->v[i].start) {
			dprintf(out, "%d pidfd %d\n", (int)t->v[i].pid, ESRCH);
			close(pfd);
			continue;
		}
		r = (int)syscall(SYS_pidfd_send_signal, pfd, SIGKILL, NULL, 0);
		dprintf(out, "%d pidfd %d\n", (int)t->v[i].pid, r < 0 ? errno : 0);
		close(pfd);
	}
	_exit(0);
}

int idents_kill_as(const struct idents *t, uid_t uid, gid_t gid, size_t *attempts, size_t *refused,
		   size_t *accepted, char *log, size_t log_n)
{
	int p[2], ws = 0;
	pid_t pid;
	ssize_t k;

	*attempts = *refused = *accepted = 0;
	if (pipe2(p, O_CLOEXEC) < 0)
		return -errno;
	pid = fork();
	if (pid < 0)
		return -errno;
	if (pid == 0) {
		close(p[0]);
		kill_child(t, uid, gid, p[1]);
	}
	close(p[1]);
	k = read_full(p[0], log, log_n - 1);
	log[k > 0 ? k : 0] = '\0';
	close(p[0]);
	while (waitpid(pid, &ws, 0) < 0 && errno == EINTR)
		;
	if (!WIFEXITED(ws) || WEXITSTATUS(ws) != 0)
		return -EIO;
	for (char *line = log; line && *line;
	     line = strchr(line, '\n') ? strchr(line, '\n') + 1 : NULL) {
		int tpid, e;
		char how[8];

		if (sscanf(line, "%d %7s %d", &tpid, how, &e) != 3)
			continue;
		(*attempts)++;
		*refused += e == EPERM;
		*accepted += e == 0;
	}
	return 0;
}
