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
#include "../include/initproto.h"
#include "init.h"

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
int procs_read(pid_t pid, struct proc *p)
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
	init_printable(p->comm);
	if (!p->comm[0])
		strcpy(p->comm, "?");
	return 0;
}

/* /proc must be the procfs of our own pid namespace, or its pids are not ours
 * to report (a host /proc seen from PID 1 would list host processes). */
static bool proc_is_ours(pid_t self)
{
	char buf[32];
	ssize_t n = readlink("/proc/self", buf, sizeof(buf) - 1);

	if (n <= 0)
		return false;
	buf[n] = '\0';
	return atoi(buf) == self;
}

int procs_each(struct init *in, int (*fn)(struct init *in, pid_t pid, void *arg), void *arg)
{
	struct dirent *de;
	DIR *d;
	int r = 0;

	if (!proc_is_ours(in->self))
		return -ENOENT;
	d = opendir("/proc");
	if (!d) {
		r = -errno;
		init_complain("opendir /proc: %m");
		return r;
	}
	while (r == 0 && (de = readdir(d))) {
		long pid;

		/* Not a number: /proc's own files (self, meminfo, ...). */
		if (init_parse_num(de->d_name, INT32_MAX, &pid) < 0 || pid <= 0 || pid == in->self)
			continue;
		r = fn(in, (pid_t)pid, arg);
	}
	closedir(d);
	return 0;
}

/* Says "kill" once per pid: in the no-pidns mode procs_sweep() repeats. */
bool procs_first_kill(struct init *in, pid_t pid)
{
	for (unsigned i = 0; i < in->nkilled; i++)
		if (in->killed[i] == pid)
			return false;
	if (in->nkilled < KILLED_MAX)
		in->killed[in->nkilled++] = pid;
	return true;
}

/* True while a process signalled with sig may still be named: the first
 * NAMED_MAX of each signal are; the rest are counted, said as one
 * "term-more N" / "kill-more N" by procs_flush_reports(). */
static bool may_name(struct init *in, int sig)
{
	int i = sig == SIGKILL;

	if (in->named[i] < NAMED_MAX) {
		in->named[i]++;
		return true;
	}
	in->unnamed[i]++;
	return false;
}

/* procs_each() for the shutdown's reports, which a /proc that is not ours
 * cannot give: then said once per sweep. */
static void walk(struct init *in, int (*fn)(struct init *in, pid_t pid, void *arg), void *arg)
{
	if (procs_each(in, fn, arg) == -ENOENT)
		init_complain("/proc is missing or not of our pid namespace: no term/kill reports");
}

/* What scan() is after, and what it found. */
struct scan {
	int sig;
	int members; /* live members of the workload's group */
};

static int scan_one(struct init *in, pid_t pid, void *arg)
{
	struct scan *sc = arg;
	struct proc p;
	bool mine, group;

	if (procs_read(pid, &p) < 0 || p.state == 'Z' || p.state == 'X')
		return 0;
	mine = p.ppid == in->self;
	group = p.pgrp == in->wpid;
	if (!in->pid1 && !mine && !group)
		return 0;
	sc->members += group;
	if ((sc->sig != SIGKILL || procs_first_kill(in, pid)) && may_name(in, sc->sig))
		init_say(in, "%s %d %s", sc->sig == SIGKILL ? "kill" : "term", (int)pid, p.comm);
	/* Our own child's pid cannot be reused before we reap it, so it
	 * is safe to signal by pid; the group is signalled by procs_sweep(). */
	if (!in->pid1 && mine && !group && pid != in->wpid && kill(pid, sc->sig) < 0 &&
	    errno != ESRCH)
		init_complain("kill %d: %m", (int)pid);
	return 0;
}

/* Without a pid namespace: reports what is left of the workload's process
 * group and init's own children (skipping zombies, which only wait to be
 * reaped), and signals those children that are outside the group. Returns
 * the number of live members of the workload's group. */
static int scan(struct init *in, int sig)
{
	struct scan sc = {.sig = sig};

	walk(in, scan_one, &sc);
	return sc.members;
}

/* The pids listed so far: malloc'd, n of them. */
struct pids {
	pid_t *v;
	size_t n, cap;
};

static int list_one(struct init *in, pid_t pid, void *arg)
{
	struct pids *l = arg;
	pid_t *t;

	(void)in;
	if (l->n == l->cap) {
		size_t cap = l->cap ? 2 * l->cap : 256;

		t = realloc(l->v, cap * sizeof(*t));
		if (!t)
			return -ENOMEM; /* the signal still reaches all; fewer reports */
		l->v = t;
		l->cap = cap;
	}
	l->v[l->n++] = pid;
	return 0;
}

/* The pids in /proc but ours, from the directory alone (no file of a
 * process is opened): malloc'd, *n of them; NULL when /proc is not ours. */
static pid_t *list_pids(struct init *in, size_t *n)
{
	struct pids l = {0};

	walk(in, list_one, &l);
	*n = l.n;
	return l.v;
}

static int nothing(struct init *in, pid_t pid, void *arg)
{
	(void)in;
	(void)pid;
	(void)arg;
	return 0;
}

/* The first listing of /proc after its processes were made allocates a
 * dentry and an inode per pid (proc_fill_cache()); the next one finds
 * them (a live process's stay cached): for 1,000 processes ~2.5 ms
 * against ~0.8 ms (bench/profile.md, expiry). Done once shortly before a
 * known deadline, the shutdown's own listing is the cheap one. */
void procs_warm(struct init *in)
{
	(void)procs_each(in, nothing, NULL);
}

/* /proc/PID/comm, printable; "?" when it is gone. Cheaper than the stat
 * file, whose every field the kernel computes on each read. */
static void read_comm(pid_t pid, char *buf, size_t size)
{
	char path[32];
	int r;

	snprintf(path, sizeof(path), "/proc/%d/comm", (int)pid);
	r = read_small(path, buf, size);
	if (r <= 0) {
		snprintf(buf, size, "?");
		return;
	}
	buf[strcspn(buf, "\n")] = '\0';
	init_printable(buf);
	if (!buf[0])
		snprintf(buf, size, "?");
}

/* One report kept for procs_flush_reports(): sending a thousand of them while the
 * processes die would take the CPU from their exits (and the supervisor's
 * from its own). Kept as NUL-terminated messages; without memory, sent. */
static void later(struct init *in, const char *verb, pid_t pid, const char *comm)
{
	char msg[INITPROTO_MAX + 1];
	int n = snprintf(msg, sizeof(msg), "%s %d %s", verb, (int)pid, comm);
	size_t need;

	if (n < 0)
		return;
	need = (size_t)(n > INITPROTO_MAX ? INITPROTO_MAX : n) + 1;
	if (in->later_len + need > in->later_cap) {
		size_t cap = in->later_cap ? 2 * in->later_cap : 16384;
		char *t;

		while (cap < in->later_len + need)
			cap *= 2;
		t = realloc(in->later, cap);
		if (!t) {
			init_say(in, "%s", msg);
			return;
		}
		in->later = t;
		in->later_cap = cap;
	}
	memcpy(in->later + in->later_len, msg, need - 1);
	in->later[in->later_len + need - 1] = '\0';
	in->later_len += need;
}

void procs_flush_reports(struct init *in)
{
	for (size_t off = 0; off < in->later_len; off += strlen(in->later + off) + 1)
		init_say(in, "%s", in->later + off);
	free(in->later);
	in->later = NULL;
	in->later_len = in->later_cap = 0;
	for (int i = 0; i < 2; i++)
		if (in->unnamed[i])
			init_say(in, "%s-more %lu", i ? "kill" : "term", in->unnamed[i]);
	in->unnamed[0] = in->unnamed[1] = 0;
}

/* As PID 1: the signal first, the report after. The pids are listed from
 * /proc's directory alone (no file opened), then kill(-1) reaches every
 * process of the namespace but us at once (kill(2)), and only then are
 * the names of the first NAMED_MAX listed processes read (the rest are
 * counted): a process that just died is a zombie until its reaper (mostly
 * us, after this) waits for it, so the name is mostly still there ("?"
 * when not). A zombie that was already one when the shutdown began is
 * reported too: it cannot be told apart any more. The reports wait for
 * procs_flush_reports(): sent now, a thousand of them would take the CPU
 * from the exits they report, and so would a thousand names read
 * (bench/: expiry). */
static void sweep_pid1(struct init *in, int sig)
{
	const char *verb = sig == SIGKILL ? "kill" : "term";
	size_t n = 0;
	pid_t *pids = list_pids(in, &n);

	if (kill(-1, sig) < 0 && errno != ESRCH)
		init_complain("kill -1: %m");
	for (size_t i = 0; i < n; i++) {
		char comm[COMM_MAX + 1];

		if ((sig == SIGKILL && !procs_first_kill(in, pids[i])) || !may_name(in, sig))
			continue;
		read_comm(pids[i], comm, sizeof(comm));
		later(in, verb, pids[i], comm);
	}
	free(pids);
}

void procs_sweep(struct init *in, int sig)
{
	int members;

	if (in->pid1) {
		sweep_pid1(in, sig);
		return;
	}
	members = scan(in, sig);
	/* No pid namespace: kill(-1) would signal every process of our user on
	 * the host, so only what is provably the sandbox's is signalled: the
	 * workload's group, the workload and (scan()) init's own children, which
	 * orphans of the sandbox become since we are their subreaper. The group
	 * id is the workload's pid; once that is reaped and the group empty the
	 * kernel may hand the number to an unrelated host process group, so the
	 * group is signalled only while the workload is unreaped or scan() saw a
	 * live member. ESRCH: the group just emptied. */
	if ((!in->reaped || members > 0) && kill(-in->wpid, sig) < 0 && errno != ESRCH)
		init_complain("kill -%d: %m", (int)in->wpid);
	if (!in->reaped && getpgid(in->wpid) != in->wpid && kill(in->wpid, sig) < 0)
		init_complain("kill %d: %m", (int)in->wpid);
}
