/* paddock-init: the sandbox's processes as init sees them in /proc, and
 * the reports and signals of the shutdown (see init.c). libc only. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../include/cleanup.h"
#include "init.h"

/* Makes s one printable protocol word: blanks and non-ASCII become '_'. */
void printable(char *s)
{
	for (; *s; s++)
		if (*s <= ' ' || *s >= 0x7f)
			*s = '_';
}

/* Reads a small file (procfs) into buf, NUL-terminated. */
static int read_small(const char *path, char *buf, size_t size)
{
	cleanup_close int fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t n;

	if (fd < 0)
		return -errno;
	n = read(fd, buf, size - 1);
	if (n < 0)
		return -errno;
	buf[n] = '\0';
	return (int)n;
}

/* /proc/PID/stat fields 3-6 (state, ppid, pgrp, session) and a printable
 * comm, from one read: field 2 is the same task name /proc/PID/comm shows
 * (both come from proc_task_name()), so a second open per process is not
 * needed. The expiry path scans every process before it signals them, and
 * with 1,000 processes that scan is most of the time from the deadline to
 * the kill. */
int read_proc(pid_t pid, struct proc *p)
{
	char path[64], buf[1024];
	const char *open_paren, *s;
	size_t len;
	int r;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	r = read_small(path, buf, sizeof(buf));
	if (r < 0)
		return r;
	/* comm may hold ')' and blanks; the fields after the last ')' do not. */
	open_paren = strchr(buf, '(');
	s = strrchr(buf, ')');
	if (!open_paren || !s || s < open_paren ||
	    sscanf(s + 1, " %c %d %d %d", &p->state, &p->ppid, &p->pgrp, &p->sid) != 4)
		return -EINVAL;
	len = (size_t)(s - open_paren - 1);
	if (len > COMM_MAX)
		len = COMM_MAX;
	memcpy(p->comm, open_paren + 1, len);
	p->comm[len] = '\0';
	printable(p->comm);
	if (!p->comm[0])
		strcpy(p->comm, "?");
	return 0;
}

/* /proc must be the procfs of our own pid namespace, or its pids are not ours
 * to report (a host /proc seen from PID 1 would list host processes). */
bool proc_is_ours(pid_t self)
{
	char buf[32];
	ssize_t n = readlink("/proc/self", buf, sizeof(buf) - 1);

	if (n <= 0)
		return false;
	buf[n] = '\0';
	return atoi(buf) == self;
}

/* Says "kill" once per pid: in the no-pidns mode sweep() repeats. */
bool first_kill(struct init *in, pid_t pid)
{
	for (unsigned i = 0; i < in->nkilled; i++)
		if (in->killed[i] == pid)
			return false;
	if (in->nkilled < KILLED_MAX)
		in->killed[in->nkilled++] = pid;
	return true;
}

/* Reports every process left (skipping init and zombies, which only wait to
 * be reaped): all of the namespace as PID 1; otherwise the workload's process
 * group and init's own children, and signals those children that are outside
 * the group. Returns the number of live members of the workload's group. */
static int scan(struct init *in, int sig)
{
	const char *verb = sig == SIGKILL ? "kill" : "term";
	DIR *d;
	struct dirent *de;
	int members = 0;

	if (!proc_is_ours(in->self)) {
		complain("/proc is missing or not of our pid namespace: no term/kill reports");
		return 0;
	}
	d = opendir("/proc");
	if (!d) {
		complain("opendir /proc: %m");
		return 0;
	}
	while ((de = readdir(d))) {
		struct proc p;
		char *end;
		long pid = strtol(de->d_name, &end, 10);
		bool mine, group;

		if (*end || pid <= 0 || pid == in->self || read_proc((pid_t)pid, &p) < 0)
			continue;
		if (p.state == 'Z' || p.state == 'X')
			continue;
		mine = p.ppid == in->self;
		group = p.pgrp == in->wpid;
		if (!in->pid1 && !mine && !group)
			continue;
		members += group;
		if (sig != SIGKILL || first_kill(in, (pid_t)pid))
			say(in, "%s %ld %s", verb, pid, p.comm);
		/* Our own child's pid cannot be reused before we reap it, so it
		 * is safe to signal by pid; the group is signalled by sweep(). */
		if (!in->pid1 && mine && !group && pid != in->wpid && kill((pid_t)pid, sig) < 0 &&
		    errno != ESRCH)
			complain("kill %ld: %m", pid);
	}
	closedir(d);
	return members;
}

/* Reports and signals what is left of the sandbox. */
void sweep(struct init *in, int sig)
{
	int members = scan(in, sig);

	if (in->pid1) {
		/* kill(2): kill(-1) from the namespace's PID 1 reaches every process
		 * in it but the caller. ESRCH: nobody else is left. */
		if (kill(-1, sig) < 0 && errno != ESRCH)
			complain("kill -1: %m");
		return;
	}
	/* No pid namespace: kill(-1) would signal every process of our user on
	 * the host, so only what is provably the sandbox's is signalled: the
	 * workload's group, the workload and (scan()) init's own children, which
	 * orphans of the sandbox become since we are their subreaper. The group
	 * id is the workload's pid; once that is reaped and the group empty the
	 * kernel may hand the number to an unrelated host process group, so the
	 * group is signalled only while the workload is unreaped or scan() saw a
	 * live member. ESRCH: the group just emptied. */
	if ((!in->reaped || members > 0) && kill(-in->wpid, sig) < 0 && errno != ESRCH)
		complain("kill -%d: %m", (int)in->wpid);
	if (!in->reaped && getpgid(in->wpid) != in->wpid && kill(in->wpid, sig) < 0)
		complain("kill %d: %m", (int)in->wpid);
}

