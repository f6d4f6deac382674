/* HB-02's live process inventory (hb02_inventory.h). */
#include "hb02_inventory.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "../../observers/observe.h"
#include "../../observers/selftest.h"

/* Does the NUL-separated command line (len bytes) have the argument arg? */
static bool has_arg(const char *buf, int len, const char *arg)
{
	for (int i = 0; i < len; i += (int)strlen(buf + i) + 1)
		if (strcmp(buf + i, arg) == 0)
			return true;
	return false;
}

/* The plugin service: "/bin/sh -c CMD HB02_PLUGIN_ARG", its $0 the
 * fourth argument (paddock-init, which holds the service's argv among its
 * own arguments, is not it). */
static bool is_plugin(const char *buf, int len)
{
	int i = 0;

	for (int k = 0; k < 3 && i < len; k++)
		i += (int)strlen(buf + i) + 1;
	return i < len && strcmp(buf + i, HB02_PLUGIN_ARG) == 0;
}

static int cmdline_of(pid_t pid, char *buf, size_t n)
{
	char path[64];
	int len;

	snprintf(path, sizeof(path), "/proc/%d/cmdline", (int)pid);
	len = read_file(path, buf, n - 1);
	if (len > 0)
		buf[len] = '\0';
	return len;
}

/* The workload: the process whose command line has the token and whose
 * pid namespace is not the harness's (paddock's own command line, on the
 * host, has the token too). */
static pid_t workload(const char *token, unsigned long host_ns)
{
	DIR *d = opendir("/proc");
	struct dirent *de;
	pid_t found = 0;

	if (!d)
		return 0;
	while (!found && (de = readdir(d))) {
		pid_t pid = (pid_t)atoi(de->d_name);
		struct proc_entry e;
		char buf[4096];
		int len;

		if (!isdigit((unsigned char)de->d_name[0]))
			continue;
		len = cmdline_of(pid, buf, sizeof(buf));
		if (len > 0 && has_arg(buf, len, token) && inventory_read(pid, &e) == 0 &&
		    e.pidns && e.pidns != host_ns)
			found = pid;
	}
	closedir(d);
	return found;
}

static void member(struct hb02_inventory *inv, const struct proc_entry *e)
{
	struct hb02_proc *p;
	char buf[4096], path[64];
	int len = cmdline_of(e->pid, buf, sizeof(buf));
	ssize_t k;
	bool plugin = len > 0 && is_plugin(buf, len);

	inv->plugin = inv->plugin || plugin;
	if (len < 0 && inventory_alive(e->pid, e->start))
		inv->unreadable++;
	if (inv->n == HB02_PROCS_MAX) {
		inv->more++;
		return;
	}
	p = &inv->p[inv->n++];
	p->pid = e->pid;
	p->start = e->start;
	p->plugin = plugin;
	snprintf(path, sizeof(path), "/proc/%d/exe", (int)e->pid);
	k = readlink(path, p->exe, sizeof(p->exe) - 1);
	p->exe[k > 0 ? k : 0] = '\0';
	if (k <= 0)
		snprintf(p->exe, sizeof(p->exe), "(unreadable)");
	for (int i = 0; i < len - 1; i++)
		if (buf[i] == '\0')
			buf[i] = ' ';
	snprintf(p->cmdline, sizeof(p->cmdline), "%s", len > 0 ? buf : "(unreadable)");
}

/* The look itself: the workload's pid namespace and everything in it. */
static void take(struct hb02_inventory *inv)
{
	struct proc_entry me, wl, *v = NULL;
	size_t n = 0;
	pid_t pid;

	/* The self-test's hb02-inventory-blind: no look is ever conclusive. */
	if (selftest_on("hb02-inventory-blind")) {
		snprintf(inv->why, sizeof(inv->why), "blinded (hb02-inventory-blind)");
		return;
	}
	if (inventory_read(getpid(), &me) < 0 || !me.pidns) {
		snprintf(inv->why, sizeof(inv->why), "the harness's own pid namespace is unknown");
		return;
	}
	pid = workload(inv->token, me.pidns);
	if (!pid || inventory_read(pid, &wl) < 0) {
		snprintf(inv->why, sizeof(inv->why),
			 "the workload (%s) is not in /proc in a pid namespace of its own",
			 inv->token);
		return;
	}
	if (inventory_scan(&v, &n) < 0) {
		snprintf(inv->why, sizeof(inv->why), "/proc cannot be listed");
		return;
	}
	inv->pidns = wl.pidns;
	for (size_t i = 0; i < n; i++)
		if (v[i].pidns == wl.pidns)
			member(inv, &v[i]);
	free(v);
	/* The sandbox's init and the workload at least: an inventory that
	 * does not see those sees nothing. */
	inv->taken = inv->n + inv->more >= 2;
	if (!inv->taken)
		snprintf(inv->why, sizeof(inv->why),
			 "the pid namespace shows %zu process(es): not even init and the workload",
			 inv->n + inv->more);
}

static void *look(void *arg)
{
	struct hb02_inventory *inv = arg;
	FILE *f;

	while (!atomic_load(&inv->stop)) {
		if (access(inv->ready, F_OK) == 0) {
			take(inv);
			f = fopen(inv->looked, "we");
			if (f)
				fclose(f);
			return NULL;
		}
		nanosleep(&(struct timespec){0, 20 * 1000 * 1000}, NULL);
	}
	snprintf(inv->why, sizeof(inv->why), "the workload never said it was ready");
	return NULL;
}

int hb02_inventory_start(struct hb02_inventory *inv, const char *ws, const char *token)
{
	int rc;

	memset(inv, 0, sizeof(*inv));
	snprintf(inv->ready, sizeof(inv->ready), "%s/" HB02_READY, ws);
	snprintf(inv->looked, sizeof(inv->looked), "%s/" HB02_LOOKED, ws);
	snprintf(inv->token, sizeof(inv->token), "%s", token);
	unlink(inv->ready);
	unlink(inv->looked);
	atomic_store(&inv->stop, false);
	rc = pthread_create(&inv->thread, NULL, look, inv);
	if (rc != 0) {
		snprintf(inv->why, sizeof(inv->why), "no observer thread: %s", strerror(rc));
		return -rc;
	}
	inv->started = true;
	return 0;
}

void hb02_inventory_stop(struct hb02_inventory *inv)
{
	if (!inv->started)
		return;
	atomic_store(&inv->stop, true);
	pthread_join(inv->thread, NULL);
	inv->started = false;
	unlink(inv->ready);
	unlink(inv->looked);
}
