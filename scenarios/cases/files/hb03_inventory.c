/* HB-03's inventory (hb03_inventory.h). */
#include "hb03_inventory.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../../lib/harness.h"
#include "../../observers/selftest.h"

/* The effective policy of pid from outside: /proc/PID/status and the
 * /proc/PID/ns links (the test-only proc-policy-blind reads the
 * harness's own, whatever pid is asked: a read-back that sees nothing). */
void adapter_policy_read(pid_t pid, struct proc_policy *out)
{
	char path[64], buf[4096], link[64];
	bool blind = selftest_on("proc-policy-blind");

	memset(out, 0, sizeof(*out));
	if (blind)
		snprintf(path, sizeof(path), "/proc/self/status");
	else
		snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	if (read_file(path, buf, sizeof(buf)) < 0 || proc_policy_status(buf, out) < 0)
		return;
	for (int i = 0; i < PP_NS_COUNT; i++) {
		ssize_t k;

		if (blind)
			snprintf(path, sizeof(path), "/proc/self/ns/%s", pp_ns_proc[i]);
		else
			snprintf(path, sizeof(path), "/proc/%d/ns/%s", (int)pid, pp_ns_proc[i]);
		k = readlink(path, link, sizeof(link) - 1);
		if (k <= 0)
			return;
		link[k] = '\0';
		if (sscanf(link, "%*[^[][%lu]", &out->ns[i]) != 1)
			return;
	}
	out->read = true;
}

/* One identity: /proc/PID/stat, exe, effective policy. */
bool adapter_ident_read(pid_t pid, struct ident *id)
{
	char path[64];
	ssize_t k;

	memset(id, 0, sizeof(*id));
	if (inventory_read(pid, &id->e) < 0)
		return false;
	snprintf(path, sizeof(path), "/proc/%d/exe", (int)pid);
	k = readlink(path, id->exe, sizeof(id->exe) - 1);
	id->exe[k > 0 ? k : 0] = '\0';
	adapter_policy_read(pid, &id->pol);
	id->found = true;
	return true;
}

/* What the case's policy declares: its namespaces and seccomp profile,
 * read from the policy file the arm ran. */
void adapter_declared_read(const char *policy, struct declared_policy *d)
{
	char key[32], v[64];

	memset(d, 0, sizeof(*d));
	for (int i = 0; i < 16; i++) {
		snprintf(key, sizeof(key), "namespaces.%d", i);
		if (record_get(policy, key, v, sizeof(v)) < 0)
			break;
		for (int k = 0; k < PP_NS_COUNT; k++)
			if (strcmp(v, pp_ns_policy[k]) == 0)
				d->ns |= 1u << k;
	}
	d->seccomp =
	    record_get(policy, "seccomp.profile", v, sizeof(v)) == 0 && strcmp(v, "none") != 0;
}

/* The read-back's proof that it sees a policy: a child of ours in a user
 * namespace of its own with no_new_privs must read apart from us (a
 * reader that returns one process for every pid cannot). */
bool adapter_readback_proof(const struct proc_policy *host)
{
	struct proc_policy child = {0};
	int p[2], ready[2], st;
	pid_t pid;
	char c;
	bool ok;

	if (pipe2(p, O_CLOEXEC) < 0)
		return false;
	if (pipe2(ready, O_CLOEXEC) < 0) {
		close(p[0]);
		close(p[1]);
		return false;
	}
	pid = fork();
	if (pid < 0) {
		close(p[0]);
		close(p[1]);
		close(ready[0]);
		close(ready[1]);
		return false;
	}
	if (pid == 0) {
		close(p[1]);
		close(ready[0]);
		if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0 || unshare(CLONE_NEWUSER) < 0)
			_exit(1);
		/* Set up: say so, then stay until the parent has read us (EOF
		 * on its close). */
		(void)!write(ready[1], "r", 1);
		(void)!read(p[0], &c, 1);
		_exit(0);
	}
	close(p[0]);
	close(ready[1]);
	/* Once the child said it is set up (EOF instead: it failed): however
	 * loaded the machine, no guess at how long that takes. */
	if (read(ready[0], &c, 1) == 1)
		adapter_policy_read(pid, &child);
	close(ready[0]);
	close(p[1]);
	while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
		;
	ok = child.read && host->read && child.nnp == 1 && host->nnp == 0 &&
	     child.ns[PP_NS_USER] != host->ns[PP_NS_USER];
	return ok;
}

/* The process whose exe is a python3 and whose command line holds token
 * as a word (the paddock exec client carries the token too, but is not
 * python3). */
bool adapter_tool_find(const char *token, pid_t *out)
{
	DIR *d = opendir("/proc");
	struct dirent *de;
	bool found = false;

	if (!d)
		return false;
	while (!found && (de = readdir(d))) {
		char path[64], exe[256], buf[8192];
		const char *base;
		ssize_t k;
		int len;

		if (de->d_name[0] < '0' || de->d_name[0] > '9')
			continue;
		snprintf(path, sizeof(path), "/proc/%s/exe", de->d_name);
		k = readlink(path, exe, sizeof(exe) - 1);
		if (k <= 0)
			continue;
		exe[k] = '\0';
		base = strrchr(exe, '/');
		if (strncmp(base ? base + 1 : exe, "python3", 7) != 0)
			continue;
		snprintf(path, sizeof(path), "/proc/%s/cmdline", de->d_name);
		len = read_file(path, buf, sizeof(buf));
		for (int i = 0; i < len; i += (int)strlen(buf + i) + 1)
			if (strcmp(buf + i, token) == 0) {
				*out = (pid_t)atoi(de->d_name);
				found = true;
				break;
			}
	}
	closedir(d);
	return found;
}
