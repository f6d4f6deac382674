/* config.json's "linux" (oci.h, docs/oci.md): namespaces, id mappings,
 * sysctls, resources, seccomp (oci_seccomp.c), masked and read-only paths. */
#include "oci_parse.h"

#include <fcntl.h>
#include <limits.h>
#include <linux/nsfs.h>
#include <math.h>
#include <sched.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <unistd.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../include/cleanup.h"

/* ---------------------------------------------------------------- linux */

static const struct {
	const char *oci, *paddock;
	int nstype;
} ns_names[] = {
    {"pid", "pid", CLONE_NEWPID},	   {"network", "net", CLONE_NEWNET},
    {"mount", "mount", CLONE_NEWNS},	   {"ipc", "ipc", CLONE_NEWIPC},
    {"uts", "uts", CLONE_NEWUTS},	   {"user", "user", CLONE_NEWUSER},
    {"cgroup", "cgroup", CLONE_NEWCGROUP}, {"time", NULL, 0},
};

/* linux.namespaces[i].path: which namespaces paddock joins, and why not
 * the others. A joined namespace is entered by the supervisor just for
 * its clone3 (sandbox/enter.c), so the sandbox is born in it, below
 * paddock's own new user namespace, which then holds no capability over
 * it (its owner is the namespace's, the host's or the engine's): the
 * workload can use the pod's network, never reconfigure it. */
static int join_path(struct oci_config *c, const cJSON *it, size_t i, size_t k, struct err *err)
{
	char p[PATHLEN];
	const char *path;
	int r;

	oci_pathf(p, sizeof(p), "linux.namespaces[%zu].path", i);
	if ((r = oci_want_string(oci_get(it, "path"), p, &path, err)) < 0)
		return r;
	switch (ns_names[k].nstype) {
	case CLONE_NEWUSER:
		/* paddock's own user namespace is what its id map, its
		 * capability drop and its root-caller model stand on; joining
		 * another would give the workload that one's capabilities. */
		return err_set(err, EINVAL,
			       "%s: joining a user namespace is not supported (paddock makes "
			       "its own, which its id map and capability drop rely on)",
			       p);
	case CLONE_NEWNS:
		/* The sandbox's root is a tmpfs of its own, built from the
		 * plan in a new mount namespace: another's mounts would not
		 * be paddock's plan, nor checked against it. */
		return err_set(err, EINVAL,
			       "%s: joining a mount namespace is not supported (paddock builds "
			       "the root in a mount namespace of its own)",
			       p);
	case CLONE_NEWPID:
		/* paddock-init must be PID 1 of a pid namespace of its own:
		 * the sweep of leftovers, the time limit and the record's
		 * "nothing outlives it" stand on that. */
		return err_set(err, EINVAL,
			       "%s: joining a pid namespace is not supported (paddock-init is "
			       "PID 1 of a new one)",
			       p);
	}
	if (path[0] != '/')
		return err_set(err, EINVAL, "%s: must be an absolute path", p);
	if (c->n_join == OCI_JOIN_MAX)
		return err_set(err, EINVAL, "%s: too many namespaces joined", p);
	c->join[c->n_join] = (struct oci_join){.nstype = ns_names[k].nstype,
					       .type = ns_names[k].oci,
					       .index = i,
					       .path = strdup(path),
					       .fd = -1};
	if (!c->join[c->n_join].path)
		return oci_oom(err);
	c->n_join++;
	return 0;
}

int oci_join_open(struct oci_config *c, struct err *err)
{
	for (size_t i = 0; i < c->n_join; i++) {
		struct oci_join *j = &c->join[i];
		struct stat st, own;
		int t;

		j->fd = open(j->path, O_RDONLY | O_CLOEXEC);
		if (j->fd < 0)
			return err_sys(err, errno, "linux.namespaces[%zu].path %s", j->index,
				       j->path);
		/* NS_GET_NSTYPE (Linux 4.11) answers only for an nsfs file:
		 * anything else (a regular file, /dev/null) is ENOTTY. */
		t = ioctl(j->fd, NS_GET_NSTYPE);
		if (t != j->nstype || fstat(j->fd, &st) < 0)
			return err_set(
			    err, EINVAL, "linux.namespaces[%zu].path: %s is not a%s %s namespace",
			    j->index, j->path, strchr("aeiou", j->type[0]) ? "n" : "", j->type);
		j->ino = (unsigned long)st.st_ino;
		/* The caller's own network namespace (the engine's: Docker's
		 * --network host gives its path, /var/run/docker/netns/
		 * default) is the host's network, which paddock does not
		 * give: refused as a config without a network namespace is.
		 * (Not init's /proc/1/ns/net: a root in a container may not
		 * look at that.) */
		if (j->nstype == CLONE_NEWNET && stat("/proc/self/ns/net", &own) == 0 &&
		    own.st_dev == st.st_dev && own.st_ino == st.st_ino)
			return err_set(err, EINVAL,
				       "linux.namespaces[%zu].path: %s is the host's network "
				       "namespace (the host's network is not supported; use "
				       "--network none)",
				       j->index, j->path);
	}
	return 0;
}

static int parse_namespaces(struct oci_config *c, const cJSON *arr, bool *uts, struct err *err)
{
	static const char *const keys[] = {"type", "path", NULL};
	cJSON *out = cJSON_AddArrayToObject(oci_policy(c), "namespaces");
	bool seen[sizeof(ns_names) / sizeof(ns_names[0])] = {0};
	const cJSON *it;
	size_t i = 0;

	if (!out)
		return oci_oom(err);
	if (!cJSON_IsArray(arr))
		return err_set(err, EINVAL, "linux.namespaces: must be an array");
	cJSON_ArrayForEach(it, arr) {
		char p[PATHLEN];
		const char *type;
		size_t k;
		int r;

		oci_pathf(p, sizeof(p), "linux.namespaces[%zu]", i);
		if ((r = oci_json_keys(it, p, keys, err)) < 0)
			return r;
		oci_pathf(p, sizeof(p), "linux.namespaces[%zu].type", i);
		if ((r = oci_want_string(oci_get(it, "type"), p, &type, err)) < 0)
			return r;
		for (k = 0; k < sizeof(ns_names) / sizeof(ns_names[0]); k++)
			if (strcmp(ns_names[k].oci, type) == 0)
				break;
		if (k == sizeof(ns_names) / sizeof(ns_names[0]))
			return err_set(err, EINVAL,
				       "%s: unknown namespace type \"%s\" (known: pid, network, "
				       "mount, ipc, uts, user, cgroup, time)",
				       p, type);
		if (seen[k])
			return err_set(err, EINVAL, "%s: \"%s\" given twice", p, type);
		seen[k] = true;
		if (!ns_names[k].paddock)
			return err_set(err, EINVAL, "%s: \"time\" namespaces are not supported", p);
		if (oci_get(it, "path") && (r = join_path(c, it, i, k, err)) < 0)
			return r;
		i++;
	}
	/* paddock is built on a user, mount, pid and network namespace of
	 * its own: one the config leaves out (shared with the host) would be
	 * less isolation than paddock gives, which it never silently does;
	 * the pid and network ones are refused, user and mount added. */
	if (!seen[0])
		return err_set(err, EINVAL,
			       "linux.namespaces: no \"pid\" namespace (the host's pid namespace "
			       "is not supported)");
	if (!seen[1])
		return err_set(err, EINVAL,
			       "linux.namespaces: no \"network\" namespace (the host's network "
			       "is not supported; use --network none)");
	if (!seen[2])
		return err_set(err, EINVAL, "linux.namespaces: no \"mount\" namespace");
	if (!seen[5] && oci_note(c, "linux.namespaces: a user namespace of paddock's own") < 0)
		return oci_oom(err);
	for (size_t k = 0; k < sizeof(ns_names) / sizeof(ns_names[0]); k++) {
		bool want = seen[k] || k == 5;

		if (want && ns_names[k].paddock &&
		    !cJSON_AddItemToArray(out, cJSON_CreateString(ns_names[k].paddock)))
			return oci_oom(err);
	}
	*uts = seen[4];
	return 0;
}

/* uid/gid mappings: paddock maps one id (the process's) to the caller's
 * (or, for a root caller, an unprivileged one): a mapping is accepted as
 * a request for at most that, and narrowed. */
static int parse_mappings(struct oci_config *c, const cJSON *arr, const char *path, struct err *err)
{
	static const char *const keys[] = {"containerID", "hostID", "size", NULL};
	const cJSON *it;
	size_t i = 0;

	if (!cJSON_IsArray(arr))
		return err_set(err, EINVAL, "%s: must be an array", path);
	cJSON_ArrayForEach(it, arr) {
		char p[PATHLEN];
		double v;
		int r;

		oci_pathf(p, sizeof(p), "%s[%zu]", path, i++);
		if ((r = oci_json_keys(it, p, keys, err)) < 0)
			return r;
		for (size_t k = 0; keys[k]; k++) {
			char q[PATHLEN + 16];

			oci_pathf(q, sizeof(q), "%s.%s", p, keys[k]);
			if ((r = oci_want_int(oci_get(it, keys[k]), q, k == 2 ? 1 : 0, 4294967295.0,
					      &v, err)) < 0)
				return r;
		}
	}
	if (i && oci_note(c, "%s: one id mapped (the process's)", path) < 0)
		return oci_oom(err);
	return 0;
}

static int parse_sysctl(struct oci_config *c, const cJSON *obj, struct err *err)
{
	const cJSON *it;
	size_t n = 0;

	if (!cJSON_IsObject(obj))
		return err_set(err, EINVAL, "linux.sysctl: must be an object");
	c->sysctl = calloc((size_t)cJSON_GetArraySize(obj) + 1, sizeof(char *));
	if (!c->sysctl)
		return oci_oom(err);
	cJSON_ArrayForEach(it, obj) {
		char p[PATHLEN];
		const char *v;
		int r;

		oci_pathf(p, sizeof(p), "linux.sysctl.%s", it->string);
		if ((r = oci_want_string(it, p, &v, err)) < 0)
			return r;
		/* Only the network namespace's own: paddock's sandbox has one,
		 * and its root may set them. Any other would be the host's. */
		if (strncmp(it->string, "net.", 4) != 0 || strstr(it->string, "..") ||
		    strchr(it->string, '/') || !it->string[4] || strchr(v, '\n'))
			return err_set(
			    err, EINVAL,
			    "%s: only net.* sysctls of the container's network namespace "
			    "are supported",
			    p);
		if (asprintf(&c->sysctl[n], "%s=%s", it->string, v) < 0) {
			c->sysctl[n] = NULL;
			return oci_oom(err);
		}
		c->n_sysctl = ++n;
	}
	return 0;
}

static int parse_resources(struct oci_config *c, const cJSON *res, struct err *err)
{
	static const char *const keys[] = {"devices", "memory", "cpu", "pids", "blockIO", NULL};
	cJSON *limits = cJSON_GetObjectItemCaseSensitive(oci_policy(c), "limits");
	const cJSON *it;
	int r;

	if ((r = oci_json_keys(res, "linux.resources", keys, err)) < 0)
		return r;
	if ((it = oci_get(res, "devices"))) {
		if (!cJSON_IsArray(it))
			return err_set(err, EINVAL, "linux.resources.devices: must be an array");
		/* paddock's /dev has its few nodes and nothing else: whatever
		 * the rules allow beyond them is not there. */
		if (cJSON_GetArraySize(it) &&
		    oci_note(c, "linux.resources.devices: only paddock's /dev nodes") < 0)
			return oci_oom(err);
	}
	if ((it = oci_get(res, "memory"))) {
		static const char *const mk[] = {"limit", "swap", "disableOOMKiller", "reservation",
						 NULL};
		const cJSON *l = oci_get(it, "limit");
		double v;

		if ((r = oci_json_keys(it, "linux.resources.memory", mk, err)) < 0)
			return r;
		if (oci_get(it, "reservation") || oci_get(it, "swap")) {
			const cJSON *s = oci_get(it, "reservation") ? oci_get(it, "reservation")
								    : oci_get(it, "swap");

			if (!cJSON_IsNumber(s) || s->valuedouble != 0)
				return err_set(err, EINVAL,
					       "linux.resources.memory.%s: not supported",
					       oci_get(it, "reservation") ? "reservation" : "swap");
		}
		if (oci_get(it, "disableOOMKiller") &&
		    cJSON_IsTrue(oci_get(it, "disableOOMKiller")))
			return err_set(err, EINVAL,
				       "linux.resources.memory.disableOOMKiller: not supported");
		if (l) {
			if ((r = oci_want_int(l, "linux.resources.memory.limit", -1,
					      9007199254740991.0, &v, err)) < 0)
				return r;
			if (v > 0 && !cJSON_AddNumberToObject(limits, "memory", v))
				return oci_oom(err);
		}
	}
	if ((it = oci_get(res, "cpu"))) {
		static const char *const ck[] = {"shares", "quota", "period", NULL};
		double q = 0, per = 100000, sh = 0;

		if ((r = oci_json_keys(it, "linux.resources.cpu", ck, err)) < 0)
			return r;
		if (oci_get(it, "shares") &&
		    (r = oci_want_int(oci_get(it, "shares"), "linux.resources.cpu.shares", 0,
				      262144, &sh, err)) < 0)
			return r;
		/* 1024 is the kernel's default weight: the same as none. */
		if (sh != 0 && sh != 1024)
			return err_set(err, EINVAL,
				       "linux.resources.cpu.shares: %.0f not supported (0 or 1024, "
				       "the default weight)",
				       sh);
		if (oci_get(it, "quota") &&
		    (r = oci_want_int(oci_get(it, "quota"), "linux.resources.cpu.quota", -1,
				      9007199254740991.0, &q, err)) < 0)
			return r;
		if (oci_get(it, "period") &&
		    (r = oci_want_int(oci_get(it, "period"), "linux.resources.cpu.period", 0,
				      1000000, &per, err)) < 0)
			return r;
		if (q > 0) {
			double cpus = per > 0 ? q / per : 0;

			if (cpus < 0.01 || cpus > 1024)
				return err_set(err, EINVAL,
					       "linux.resources.cpu: quota/period out of "
					       "range (0.01 to 1024 CPUs)");
			if (!cJSON_AddNumberToObject(limits, "cpu", cpus))
				return oci_oom(err);
		}
	}
	if ((it = oci_get(res, "pids"))) {
		static const char *const pk[] = {"limit", NULL};
		double v = 0;

		if ((r = oci_json_keys(it, "linux.resources.pids", pk, err)) < 0 ||
		    (r = oci_want_int(oci_get(it, "limit"), "linux.resources.pids.limit", -1,
				      4194304, &v, err)) < 0)
			return r;
		if (v > 0 && !cJSON_AddNumberToObject(limits, "pids", v))
			return oci_oom(err);
	}
	if ((it = oci_get(res, "blockIO"))) {
		static const char *const bk[] = {"weight", NULL};
		double w = 0;

		if ((r = oci_json_keys(it, "linux.resources.blockIO", bk, err)) < 0 ||
		    (r = oci_want_int(oci_get(it, "weight"), "linux.resources.blockIO.weight", 0,
				      1000, &w, err)) < 0)
			return r;
		if (w != 0)
			return err_set(err, EINVAL,
				       "linux.resources.blockIO.weight: not supported");
	}
	return 0;
}

/* maskedPaths and readonlyPaths: honoured below /proc, where paddock's
 * procfs (of its own pid namespace) gets them as runc gives them (mounts/
 * apply.c: the null device over a file, an empty read-only tmpfs over a
 * directory, a read-only bind of itself; a path that does not exist is
 * skipped), besides paddock's own lists; below /sys they hold already, as
 * /sys is an empty directory. A path with a ".." is refused: it would
 * name something else than it says. */
static int parse_paths(struct oci_config *c, const cJSON *arr, const char *path, bool masked,
		       struct err *err)
{
	char **v = NULL, ***keep = masked ? &c->proc_masked : &c->proc_readonly;
	size_t n = 0, k = 0, *n_keep = masked ? &c->n_proc_masked : &c->n_proc_readonly;
	int r = oci_want_strings(arr, path, false, &v, &n, err);

	if (r < 0)
		return r;
	for (size_t i = 0; i < n && r == 0; i++) {
		if (v[i][0] != '/')
			r = err_set(err, EINVAL, "%s[%zu]: must be an absolute path", path, i);
		else if (strstr(v[i], "/..") || strstr(v[i], "//"))
			r = err_set(err, EINVAL, "%s[%zu]: \"%s\": no \"..\" or \"//\"", path, i,
				    v[i]);
		else if (strncmp(v[i], "/proc/", 6) != 0 && strncmp(v[i], "/sys/", 5) != 0 &&
			 strcmp(v[i], "/sys") != 0)
			r = err_set(err, EINVAL,
				    "%s[%zu]: \"%s\" is not supported (only below /proc and /sys)",
				    path, i, v[i]);
	}
	if (r < 0)
		return oci_strv_free(v), r;
	/* The /proc ones kept, in order (v is NULL-terminated, n long). */
	for (size_t i = 0; i < n; i++) {
		if (strncmp(v[i], "/proc/", 6) == 0 && v[i][6])
			v[k++] = v[i];
		else
			free(v[i]);
	}
	v[k] = NULL;
	*keep = v;
	*n_keep = k;
	return 0;
}

int oci_parse_linux(struct oci_config *c, const cJSON *lx, bool *uts, struct err *err)
{
	static const char *const keys[] = {
	    "namespaces",    "uidMappings", "gidMappings",	 "sysctl",
	    "resources",     "cgroupsPath", "seccomp",		 "maskedPaths",
	    "readonlyPaths", "mountLabel",  "rootfsPropagation", "devices",
	    "intelRdt",	     "personality", "timeOffsets",	 NULL};
	const cJSON *it;
	const char *s;
	int r;

	if ((r = oci_json_keys(lx, "linux", keys, err)) < 0)
		return r;
	if (!oci_get(lx, "namespaces"))
		return err_set(err, EINVAL, "linux.namespaces: required");
	if ((r = parse_namespaces(c, oci_get(lx, "namespaces"), uts, err)) < 0)
		return r;
	for (size_t k = 0; k < 2; k++) {
		const char *key = k ? "gidMappings" : "uidMappings";
		char p[PATHLEN];

		oci_pathf(p, sizeof(p), "linux.%s", key);
		if ((it = oci_get(lx, key)) && (r = parse_mappings(c, it, p, err)) < 0)
			return r;
	}
	if ((it = oci_get(lx, "sysctl")) && (r = parse_sysctl(c, it, err)) < 0)
		return r;
	if ((it = oci_get(lx, "resources")) && (r = parse_resources(c, it, err)) < 0)
		return r;
	if ((it = oci_get(lx, "cgroupsPath"))) {
		if ((r = oci_want_string(it, "linux.cgroupsPath", &s, err)) < 0)
			return r;
		/* paddock makes the sandbox's cgroup itself, below its own,
		 * when limits ask for one (docs/policy.md "limits"). */
		if (s[0] && oci_note(c, "linux.cgroupsPath: paddock's own cgroup instead") < 0)
			return oci_oom(err);
	}
	if ((it = oci_get(lx, "seccomp")) &&
	    (r = oci_seccomp_compile(it, "linux.seccomp", &c->bpf, &c->bpf_len, err)) < 0)
		return r;
	if ((it = oci_get(lx, "maskedPaths")) &&
	    (r = parse_paths(c, it, "linux.maskedPaths", true, err)) < 0)
		return r;
	if ((it = oci_get(lx, "readonlyPaths")) &&
	    (r = parse_paths(c, it, "linux.readonlyPaths", false, err)) < 0)
		return r;
	if ((it = oci_get(lx, "mountLabel"))) {
		if ((r = oci_want_string(it, "linux.mountLabel", &s, err)) < 0)
			return r;
		if (s[0])
			return err_set(err, EINVAL, "linux.mountLabel: not supported (no SELinux)");
	}
	if ((it = oci_get(lx, "rootfsPropagation"))) {
		if ((r = oci_want_string(it, "linux.rootfsPropagation", &s, err)) < 0)
			return r;
		/* paddock's root is private, and nothing propagates out. */
		if (strcmp(s, "private") != 0 && strcmp(s, "rprivate") != 0 && s[0])
			return err_set(err, EINVAL,
				       "linux.rootfsPropagation: \"%s\" is not supported (private "
				       "only)",
				       s);
	}
	if ((it = oci_get(lx, "devices")) && (!cJSON_IsArray(it) || cJSON_GetArraySize(it) > 0))
		return err_set(err, EINVAL, "linux.devices: device nodes are not supported");
	for (const char *const *k =
		 (const char *const[]){"intelRdt", "personality", "timeOffsets", NULL};
	     *k; k++)
		if (oci_get(lx, *k))
			return err_set(err, EINVAL, "linux.%s: not supported by paddock oci", *k);
	return 0;
}
