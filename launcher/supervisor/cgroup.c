/* limits.memory, limits.cpu, limits.pids through cgroup v2 (docs/usage.md,
 * "Resource limits"). The sandbox gets a cgroup of its own below the
 * supervisor's (a delegated one: root's, or a systemd user delegation),
 * with memory.max, cpu.max and pids.max, and is cloned straight into it
 * (clone3 CLONE_INTO_CGROUP): no process of it ever runs outside. At the
 * end its peaks go into the record and the cgroup is removed. Where no
 * cgroup v2 with those controllers can be made (no cgroup2 mount, a
 * hybrid host whose memory controller is v1's, a cgroup this user may not
 * write), the run goes on, says so in one line and the record says "not
 * enforced" with the reason: nothing is claimed that is not applied. */
#include "run.h"

#include <cjson/cJSON.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../../include/cleanup.h"
#include "../../include/io.h"

/* The cgroup2 mount and our own cgroup's path below it. */
static int own_cgroup(char *dir, size_t size, char *why, size_t why_size)
{
	char line[4096], mnt[PATH_MAX] = "", rel[PATH_MAX] = "";
	FILE *f = fopen("/proc/self/mountinfo", "re");

	while (f && fgets(line, sizeof(line), f)) {
		char *sep = strstr(line, " - cgroup2 ");
		char m[PATH_MAX];

		if (!sep || sscanf(line, "%*s %*s %*s %*s %4095s", m) != 1)
			continue;
		snprintf(mnt, sizeof(mnt), "%s", m);
		break;
	}
	if (f)
		fclose(f);
	if (!mnt[0]) {
		snprintf(why, why_size, "no cgroup2 file system is mounted");
		return -ENOENT;
	}
	f = fopen("/proc/self/cgroup", "re");
	while (f && fgets(line, sizeof(line), f))
		if (strncmp(line, "0::", 3) == 0) {
			snprintf(rel, sizeof(rel), "%.*s", (int)strcspn(line + 3, "\n"), line + 3);
			break;
		}
	if (f)
		fclose(f);
	if (snprintf(dir, size, "%s%s", mnt, strcmp(rel, "/") == 0 ? "" : rel) >= (int)size)
		return -ENAMETOOLONG;
	return 0;
}

static bool has_word(const char *list, const char *w)
{
	size_t n = strlen(w);

	for (const char *p = list; (p = strstr(p, w)); p += n)
		if ((p == list || p[-1] == ' ') && (p[n] == ' ' || p[n] == '\n' || !p[n]))
			return true;
	return false;
}

static int write_at(int dfd, const char *name, const char *text)
{
	cleanup_close int fd = openat(dfd, name, O_WRONLY | O_CLOEXEC);

	if (fd < 0)
		return -errno;
	return write_full(fd, text, strlen(text)) < 0 ? -errno : 0;
}

static int read_at(int dfd, const char *name, char *buf, size_t size)
{
	cleanup_close int fd = openat(dfd, name, O_RDONLY | O_CLOEXEC);
	ssize_t n;

	if (fd < 0)
		return -errno;
	n = read_full(fd, buf, size - 1);
	if (n < 0)
		return (int)n;
	buf[n] = '\0';
	return 0;
}

int cgroup_prepare(struct run_spec *r, struct cgroup_state *cg, const char *session)
{
	const struct policy *p = r->policy;
	char dir[PATH_MAX], have[512] = "", want[64] = "";
	cleanup_close int parent = -1;

	cg->fd = cg->dirfd = -1;
	if (!p->memory_max && !p->cpu_quota_us && !p->pids_max)
		return 0;
	cg->asked = true;
	snprintf(want, sizeof(want), "%s%s%s", p->memory_max ? " memory" : "",
		 p->cpu_quota_us ? " cpu" : "", p->pids_max ? " pids" : "");
	if (own_cgroup(dir, sizeof(dir), cg->why, sizeof(cg->why)) < 0)
		return 0;
	parent = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (parent < 0 || read_at(parent, "cgroup.controllers", have, sizeof(have)) < 0) {
		snprintf(cg->why, sizeof(cg->why), "cannot read %s/cgroup.controllers", dir);
		return 0;
	}
	for (const char *w = strtok(want, " "); w; w = strtok(NULL, " ")) {
		char plus[16];
		char sub[512] = "";

		if (!has_word(have, w)) {
			snprintf(
			    cg->why, sizeof(cg->why),
			    "cgroup v2 at %s has no %s controller (it has: %.*s; a hybrid host "
			    "keeps it in cgroup v1)",
			    dir, w, (int)strcspn(have, "\n"), have[0] ? have : "none");
			return 0;
		}
		/* Enabled for the children, if not yet: refused (EBUSY) when our
		 * own cgroup has processes and is not the root. */
		if (read_at(parent, "cgroup.subtree_control", sub, sizeof(sub)) == 0 &&
		    !has_word(sub, w)) {
			snprintf(plus, sizeof(plus), "+%s", w);
			if (write_at(parent, "cgroup.subtree_control", plus) < 0) {
				snprintf(cg->why, sizeof(cg->why),
					 "cannot enable %s for a child of %s (%s): not a delegated "
					 "cgroup of this user's",
					 w, dir, strerror(errno));
				return 0;
			}
		}
	}
	snprintf(cg->name, sizeof(cg->name), "paddock-%s", session);
	if (mkdirat(parent, cg->name, 0755) < 0) {
		snprintf(cg->why, sizeof(cg->why), "cannot make %s/%s (%s)", dir, cg->name,
			 strerror(errno));
		return 0;
	}
	snprintf(cg->path, sizeof(cg->path), "%s/%s", dir, cg->name);
	cg->parent = take_fd(&parent);
	cg->dirfd = openat(cg->parent, cg->name, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	{
		char v[64];
		int rc = 0;

		if (p->memory_max) {
			snprintf(v, sizeof(v), "%llu", (unsigned long long)p->memory_max);
			rc = write_at(cg->dirfd, "memory.max", v);
			/* No swap beyond it: the limit is the limit. */
			if (rc == 0)
				(void)write_at(cg->dirfd, "memory.swap.max", "0");
		}
		if (rc == 0 && p->cpu_quota_us) {
			snprintf(v, sizeof(v), "%llu 100000", (unsigned long long)p->cpu_quota_us);
			rc = write_at(cg->dirfd, "cpu.max", v);
		}
		if (rc == 0 && p->pids_max) {
			snprintf(v, sizeof(v), "%llu", (unsigned long long)p->pids_max);
			rc = write_at(cg->dirfd, "pids.max", v);
		}
		if (rc < 0) {
			snprintf(cg->why, sizeof(cg->why), "cannot set the limits in %s (%s)",
				 cg->path, strerror(-rc));
			cgroup_remove(cg);
			return 0;
		}
	}
	cg->fd = cg->dirfd; /* for CLONE_INTO_CGROUP */
	cg->enforced = true;
	return 0;
}

void cgroup_collect(struct cgroup_state *cg)
{
	char v[256];

	if (!cg->enforced || cg->dirfd < 0)
		return;
	if (read_at(cg->dirfd, "memory.peak", v, sizeof(v)) == 0)
		cg->memory_peak = strtoull(v, NULL, 10);
	if (read_at(cg->dirfd, "pids.peak", v, sizeof(v)) == 0)
		cg->pids_peak = strtoull(v, NULL, 10);
	if (read_at(cg->dirfd, "cpu.stat", v, sizeof(v)) == 0 && strstr(v, "usage_usec "))
		cg->cpu_usec = strtoull(strstr(v, "usage_usec ") + 11, NULL, 10);
	if (read_at(cg->dirfd, "memory.events", v, sizeof(v)) == 0 && strstr(v, "oom_kill "))
		cg->oom_kills = strtoull(strstr(v, "oom_kill ") + 9, NULL, 10);
}

void cgroup_remove(struct cgroup_state *cg)
{
	if (cg->dirfd >= 0)
		close(cg->dirfd);
	cg->dirfd = cg->fd = -1;
	/* Empty once the sandbox's processes are gone (rmdir refuses a
	 * populated one: then it stays, and is said to be left). */
	if (cg->parent >= 0 && cg->name[0] && unlinkat(cg->parent, cg->name, AT_REMOVEDIR) < 0 &&
	    errno != ENOENT)
		fprintf(stderr, "paddock: warning: cgroup %s left (%s)\n", cg->path,
			strerror(errno));
	if (cg->parent >= 0)
		close(cg->parent);
	cg->parent = -1;
}

void cgroup_json(const struct cgroup_state *cg, const struct policy *p, cJSON *o)
{
	cJSON *x = cJSON_AddObjectToObject(o, "resources");

	if (!x)
		return;
	cJSON_AddBoolToObject(x, "asked", cg->asked);
	if (!cg->asked)
		return;
	cJSON_AddBoolToObject(x, "enforced", cg->enforced);
	if (!cg->enforced) {
		cJSON_AddStringToObject(x, "reason", cg->why);
		return;
	}
	cJSON_AddStringToObject(x, "cgroup", cg->path);
	if (p->memory_max)
		cJSON_AddNumberToObject(x, "memory_max", (double)p->memory_max);
	if (p->cpu_quota_us)
		cJSON_AddNumberToObject(x, "cpu_quota_us_per_100ms", (double)p->cpu_quota_us);
	if (p->pids_max)
		cJSON_AddNumberToObject(x, "pids_max", (double)p->pids_max);
	cJSON_AddNumberToObject(x, "memory_peak", (double)cg->memory_peak);
	cJSON_AddNumberToObject(x, "pids_peak", (double)cg->pids_peak);
	cJSON_AddNumberToObject(x, "cpu_usec", (double)cg->cpu_usec);
	cJSON_AddNumberToObject(x, "oom_kills", (double)cg->oom_kills);
}
