/* Unit tests for paddock oci's translator (launcher/supervisor/oci.c,
 * oci_seccomp.c): config.json in, a paddock policy (or one error naming
 * the JSON path) out. The engines' real configs are in tests/data/oci
 * (Docker's, containerd's ctr, runc spec's), paths replaced by /b/. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "../../launcher/supervisor/oci.h"
#include "../../policy/policy.h"
#include "unit.h"

TestSuite(oci, .fini = unit_leak_check);

static const struct oci_entry rootfs[] = {
    {"bin", OCI_ENTRY_DIR, NULL},	   {"etc", OCI_ENTRY_DIR, NULL},
    {"lib", OCI_ENTRY_SYMLINK, "usr/lib"}, {"tmp", OCI_ENTRY_DIR, NULL},
    {"dev", OCI_ENTRY_DIR, NULL},	   {"proc", OCI_ENTRY_DIR, NULL},
};

static char *slurp(const char *path, size_t *len)
{
	FILE *f = fopen(path, "r");
	char *buf;

	cr_assert(f, "%s", path);
	buf = malloc(1 << 20);
	*len = fread(buf, 1, (1 << 20) - 1, f);
	buf[*len] = '\0';
	fclose(f);
	return buf;
}

/* The JSON of a minimal valid config, with one substitution: key of
 * section (a JSON fragment placed verbatim). */
static char *config(const char *process_extra, const char *linux_extra, const char *top_extra)
{
	char *out = NULL;

	cr_assert(asprintf(&out,
			   "{\"ociVersion\":\"1.0.2\",\"process\":{\"user\":{\"uid\":0,\"gid\":0},"
			   "\"args\":[\"sh\"],\"cwd\":\"/\"%s},\"root\":{\"path\":\"rootfs\"},"
			   "\"linux\":{\"namespaces\":[{\"type\":\"pid\"},{\"type\":\"network\"},"
			   "{\"type\":\"mount\"}]%s}%s}",
			   process_extra, linux_extra, top_extra) > 0);
	return out;
}

/* Parse text; expect failure with msg containing want. */
static void refused(const char *text, const char *want)
{
	struct oci_config c;
	struct err err = {0};
	int r = oci_config_parse(text, strlen(text), "/b", &c, &err);

	cr_assert_lt(r, 0, "accepted, wanted \"%s\"", want);
	cr_assert(strstr(err.msg, want), "message \"%s\", wanted \"%s\"", err.msg, want);
}

/* Parse and make the policy; it must load. */
static struct policy *accepted(const char *text, struct oci_config *c)
{
	static const struct policy_vars vars = {.workspace = "/b", .home = "/root", .pwd = "/"};
	struct policy *p = NULL;
	struct err err = {0};

	cr_assert_eq(oci_config_parse(text, strlen(text), "/b", c, &err), 0, "%s", err.msg);
	cr_assert_eq(
	    oci_config_policy(c, rootfs, sizeof(rootfs) / sizeof(rootfs[0]), NULL, 0, &err), 0,
	    "%s", err.msg);
	cr_assert_eq(policy_load_buffer(c->policy_json, strlen(c->policy_json), &vars, &p, &err), 0,
		     "%s\n%s", err.msg, c->policy_json);
	return p;
}

static bool noted(const struct oci_config *c, const char *what)
{
	for (size_t i = 0; i < c->n_notes; i++)
		if (strstr(c->notes[i], what))
			return true;
	return false;
}

Test(oci, engines_configs_load_as_policies)
{
	static const char *const files[] = {"tests/data/oci/docker-default.json",
					    "tests/data/oci/ctr-default.json",
					    "tests/data/oci/runc-spec.json"};

	for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
		struct oci_config c;
		size_t len;
		char *text = slurp(files[i], &len);
		struct policy *p = accepted(text, &c);

		cr_assert(p->namespaces & POLICY_NS_USER, "%s: a user namespace always", files[i]);
		cr_assert(p->namespaces & POLICY_NS_PID);
		cr_assert(c.argv && c.argv[0]);
		policy_free(p);
		oci_config_free(&c);
		free(text);
	}
}

Test(oci, docker_config_is_translated_and_narrowings_are_noted)
{
	struct oci_config c;
	size_t len;
	char *text = slurp("tests/data/oci/docker-default.json", &len);
	struct policy *p = accepted(text, &c);
	bool dev = false, etc_bind = false, resolv = false, sys_dir = false;

	cr_assert_not_null(c.bpf, "linux.seccomp compiled");
	cr_assert_eq(c.bpf_len % 8, 0);
	cr_assert_eq(c.n_hooks[OCI_HOOK_PRESTART], 1);
	cr_assert_str_eq(c.hooks[OCI_HOOK_PRESTART][0].args[0], "libnetwork-setkey");
	cr_assert_eq(c.n_sysctl, 2);
	cr_assert(noted(&c, "process.capabilities: none (14 asked)"));
	/* Honoured, not narrowed: Docker's /proc ones kept for the mounts
	 * (the /sys one holds: /sys is empty). */
	cr_assert_not(noted(&c, "linux.maskedPaths"));
	cr_assert_not(noted(&c, "linux.readonlyPaths"));
	cr_assert_eq(c.n_proc_masked, 9);
	cr_assert_str_eq(c.proc_masked[0], "/proc/asound");
	cr_assert_null(c.proc_masked[9]);
	cr_assert_eq(c.n_proc_readonly, 5);
	cr_assert_str_eq(c.proc_readonly[3], "/proc/sys");
	cr_assert(noted(&c, "/sys is an empty directory"));
	cr_assert_str_eq(p->hostname, "1518fb822ab4");
	cr_assert(p->namespaces & POLICY_NS_UTS);
	cr_assert_not(p->namespaces & POLICY_NS_CGROUP, "no cgroup namespace asked: none");
	for (size_t i = 0; i < p->n_mounts; i++) {
		const struct policy_mount *m = &p->mounts[i];

		dev |= m->type == POLICY_MOUNT_DEV && strcmp(m->target, "/dev") == 0;
		etc_bind |= m->type == POLICY_MOUNT_BIND && strcmp(m->target, "/etc") == 0 &&
			    strcmp(m->source, "/b/merged/etc") == 0 && !m->readonly;
		resolv |=
		    m->type == POLICY_MOUNT_BIND && strcmp(m->target, "/etc/resolv.conf") == 0;
		sys_dir |= m->type == POLICY_MOUNT_DIR && strcmp(m->target, "/sys") == 0;
		cr_assert(strcmp(m->target, "/dev/mqueue") != 0, "mqueue is not mounted");
	}
	cr_assert(dev && etc_bind && resolv && sys_dir);
	policy_free(p);
	oci_config_free(&c);
	free(text);
}

Test(oci, the_rootfs_entries_become_binds_and_symlinks)
{
	struct oci_config c;
	char *text = config("", "", ",\"mounts\":[{\"destination\":\"/proc\",\"type\":\"proc\"}]");
	struct policy *p = accepted(text, &c);
	bool lib = false, proc = false, tmp_rw = false;

	for (size_t i = 0; i < p->n_mounts; i++) {
		const struct policy_mount *m = &p->mounts[i];

		lib |= m->type == POLICY_MOUNT_SYMLINK && strcmp(m->link, "usr/lib") == 0;
		proc |= m->type == POLICY_MOUNT_PROC;
		cr_assert(!(m->type == POLICY_MOUNT_BIND && strcmp(m->target, "/proc") == 0),
			  "the rootfs' /proc is covered by the proc mount");
		tmp_rw |= m->type == POLICY_MOUNT_BIND && strcmp(m->target, "/tmp") == 0 &&
			  strcmp(m->source, "/b/rootfs/tmp") == 0 && !m->readonly;
	}
	cr_assert(lib && proc && tmp_rw);
	policy_free(p);
	oci_config_free(&c);
	free(text);
}

/* The weakened twin of the one above: a rootfs that cannot be bound
 * writable is read-only, /tmp a tmpfs, and the record says so. */
Test(oci, a_rootfs_forced_read_only_says_so)
{
	static const struct policy_vars vars = {.workspace = "/b", .home = "/root", .pwd = "/"};
	struct oci_config c;
	struct policy *p = NULL;
	struct err err = {0};
	char *text = config("", "", "");
	bool tmpfs = false;

	cr_assert_eq(oci_config_parse(text, strlen(text), "/b", &c, &err), 0, "%s", err.msg);
	c.root_force_ro = true;
	cr_assert_eq(oci_config_policy(&c, rootfs, 6, NULL, 0, &err), 0, "%s", err.msg);
	cr_assert_eq(policy_load_buffer(c.policy_json, strlen(c.policy_json), &vars, &p, &err), 0);
	for (size_t i = 0; i < p->n_mounts; i++) {
		cr_assert(p->mounts[i].type != POLICY_MOUNT_BIND || p->mounts[i].readonly);
		tmpfs |= p->mounts[i].type == POLICY_MOUNT_TMPFS &&
			 strcmp(p->mounts[i].target, "/tmp") == 0;
	}
	cr_assert(tmpfs);
	cr_assert(noted(&c, "root.readonly: true"));
	policy_free(p);
	oci_config_free(&c);
	free(text);
}

Test(oci, limits_and_rlimits_map)
{
	struct oci_config c;
	char *text =
	    config(",\"rlimits\":[{\"type\":\"RLIMIT_NOFILE\",\"soft\":1024,\"hard\":4096}]",
		   ",\"resources\":{\"memory\":{\"limit\":67108864},\"pids\":{\"limit\":64},"
		   "\"cpu\":{\"quota\":50000,\"period\":100000}}",
		   "");
	struct policy *p = accepted(text, &c);

	cr_assert(p->rlimits[POLICY_RLIMIT_NOFILE].set);
	cr_assert_eq(p->rlimits[POLICY_RLIMIT_NOFILE].value, 1024, "the soft limit, for both");
	cr_assert(noted(&c, "soft and hard both 1024"));
	cr_assert_eq(p->memory_max, 67108864);
	cr_assert_eq(p->pids_max, 64);
	cr_assert_eq(p->cpu_quota_us, 50000);
	policy_free(p);
	oci_config_free(&c);
	free(text);
}

Test(oci, an_unknown_field_is_refused_by_its_path)
{
	char *t;

	refused(t = config("", "", ",\"solaris\":{}"), "config.json.solaris: not supported"),
	    free(t);
	refused(t = config(",\"umaskk\":1", "", ""), "process.umaskk: not supported"), free(t);
	refused(t = config("", ",\"intelRdt\":{}", ""), "linux.intelRdt: not supported"), free(t);
	refused(t = config("", ",\"resources\":{\"hugepageLimits\":[]}", ""),
		"linux.resources.hugepageLimits: not supported"),
	    free(t);
	refused(t = config("", "",
			   ",\"mounts\":[{\"destination\":\"/x\",\"type\":\"tmpfs\","
			   "\"options\":[\"huge=always\"]}]"),
		"mounts[0].options[0]: \"huge=always\" is not supported"),
	    free(t);
	refused(t = config(",\"cwd\":\"/\"", "", ""), "process: duplicate key \"cwd\""), free(t);
}

Test(oci, an_unknown_namespace_type_is_refused)
{
	const char *text = "{\"ociVersion\":\"1.0.2\",\"process\":{\"user\":{\"uid\":0,\"gid\":0},"
			   "\"args\":[\"sh\"],\"cwd\":\"/\"},\"root\":{\"path\":\"r\"},\"linux\":"
			   "{\"namespaces\":[{\"type\":\"pid\"},{\"type\":\"netwrok\"}]}}";

	refused(text, "linux.namespaces[1].type: unknown namespace type \"netwrok\"");
}

Test(oci, namespaces_paddock_cannot_give_are_refused)
{
	char *t;

	refused("{\"ociVersion\":\"1.0.2\",\"process\":{\"user\":{\"uid\":0,\"gid\":0},\"args\":"
		"[\"sh\"],\"cwd\":\"/\"},\"root\":{\"path\":\"r\"},\"linux\":{\"namespaces\":"
		"[{\"type\":\"pid\"},{\"type\":\"mount\"}]}}",
		"no \"network\" namespace");
	refused("{\"ociVersion\":\"1.0.2\",\"process\":{\"user\":{\"uid\":0,\"gid\":0},\"args\":"
		"[\"sh\"],\"cwd\":\"/\"},\"root\":{\"path\":\"r\"},\"linux\":{\"namespaces\":"
		"[{\"type\":\"pid\"},{\"type\":\"network\"},{\"type\":\"mount\",\"path\":"
		"\"/proc/1/ns/mnt\"}]}}",
		"linux.namespaces[2].path: joining a mount namespace is not supported");
	refused(t = config("", ",\"sysctl\":{\"kernel.shmmax\":\"1\"}", ""),
		"linux.sysctl.kernel.shmmax: only net.*"),
	    free(t);
}

/* The namespaces of a pod's pause container, by path: net, ipc, uts
 * joined (kept in the policy, listed in join[] with their JSON index);
 * user, mount and pid refused by their path; a relative path refused. */
static char *joining(const char *type, const char *path)
{
	char *out = NULL;

	cr_assert(asprintf(&out,
			   "{\"ociVersion\":\"1.0.2\",\"process\":{\"user\":{\"uid\":0,\"gid\":0},"
			   "\"args\":[\"sh\"],\"cwd\":\"/\"},\"root\":{\"path\":\"rootfs\"},"
			   "%s\"linux\":{\"namespaces\":[{\"type\":\"pid\"},"
			   "{\"type\":\"network\"},{\"type\":\"mount\"},{\"type\":\"user\"},"
			   "{\"type\":\"%s\",\"path\":\"%s\"}]}}",
			   strcmp(type, "uts") == 0 ? "\"hostname\":\"box\"," : "", type,
			   path) > 0);
	return out;
}

static char *with_namespaces(const char *ns)
{
	char *out = NULL;

	cr_assert(asprintf(&out,
			   "{\"ociVersion\":\"1.0.2\",\"process\":{\"user\":{\"uid\":0,\"gid\":0},"
			   "\"args\":[\"sh\"],\"cwd\":\"/\"},\"root\":{\"path\":\"rootfs\"},"
			   "\"linux\":{\"namespaces\":[%s]}}",
			   ns) > 0);
	return out;
}

Test(oci, namespaces_are_joined_by_path_or_refused_by_it)
{
	static const char *const kinds[] = {"ipc", "uts", "cgroup"};
	struct oci_config c;
	struct policy *p;
	char *t;

	for (size_t i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++) {
		p = accepted(t = joining(kinds[i], "/run/netns/pod"), &c);
		cr_assert_eq(c.n_join, 1, "%s", kinds[i]);
		cr_assert_eq(c.join[0].index, 4);
		cr_assert_str_eq(c.join[0].type, kinds[i]);
		cr_assert_str_eq(c.join[0].path, "/run/netns/pod");
		cr_assert_eq(c.join[0].fd, -1, "opened only by oci_join_open()");
		/* Kept in the policy: the namespace is there, not the host's. */
		cr_assert(p->namespaces & (i == 0   ? POLICY_NS_IPC
					   : i == 1 ? POLICY_NS_UTS
						    : POLICY_NS_CGROUP));
		/* A joined uts namespace is its owner's: no hostname set. */
		cr_assert_eq(i == 1, noted(&c, "hostname: the joined uts namespace's own"));
		policy_free(p), oci_config_free(&c), free(t);
	}
	refused(t = with_namespaces("{\"type\":\"pid\"},{\"type\":\"network\"},{\"type\":"
				    "\"mount\"},{\"type\":\"user\",\"path\":\"/proc/1/ns/user\"}"),
		"linux.namespaces[3].path: joining a user namespace is not supported"),
	    free(t);
	refused(t = with_namespaces("{\"type\":\"pid\",\"path\":\"/proc/1/ns/pid\"},{\"type\":"
				    "\"network\"},{\"type\":\"mount\"}"),
		"linux.namespaces[0].path: joining a pid namespace is not supported"),
	    free(t);
	refused(t = joining("ipc", "proc/1/ns/ipc"),
		"linux.namespaces[4].path: must be an absolute path"),
	    free(t);
	refused(t = joining("ipc", ""), "linux.namespaces[4].path: must be an absolute path"),
	    free(t);
}

Test(oci, a_path_that_is_not_that_namespace_is_refused)
{
	struct oci_config c;
	struct err err = {0};
	char *t = joining("ipc", "/proc/self/ns/net");

	cr_assert_eq(oci_config_parse(t, strlen(t), "/b", &c, &err), 0, "%s", err.msg);
	cr_assert_lt(oci_join_open(&c, &err), 0);
	cr_assert(strstr(err.msg, "linux.namespaces[4].path: /proc/self/ns/net is not an ipc "
				  "namespace"),
		  "%s", err.msg);
	oci_config_free(&c), free(t);
	t = joining("ipc", "/dev/null");
	cr_assert_eq(oci_config_parse(t, strlen(t), "/b", &c, &err), 0, "%s", err.msg);
	cr_assert_lt(oci_join_open(&c, &err), 0);
	cr_assert(strstr(err.msg, "/dev/null is not an ipc namespace"), "%s", err.msg);
	oci_config_free(&c), free(t);
	/* The caller's own network namespace is the host's network. */
	t = with_namespaces("{\"type\":\"pid\"},{\"type\":\"network\",\"path\":\"/proc/self/ns/"
			    "net\"},{\"type\":\"mount\"}");
	cr_assert_eq(oci_config_parse(t, strlen(t), "/b", &c, &err), 0, "%s", err.msg);
	cr_assert_lt(oci_join_open(&c, &err), 0);
	cr_assert(strstr(err.msg,
			 "linux.namespaces[1].path: /proc/self/ns/net is the host's network "
			 "namespace"),
		  "%s", err.msg);
	oci_config_free(&c), free(t);
	t = joining("ipc", "/proc/self/ns/ipc");
	cr_assert_eq(oci_config_parse(t, strlen(t), "/b", &c, &err), 0, "%s", err.msg);
	cr_assert_eq(oci_join_open(&c, &err), 0, "%s", err.msg);
	cr_assert_geq(c.join[0].fd, 0);
	cr_assert_neq(c.join[0].ino, 0);
	oci_config_free(&c), free(t);
}

Test(oci, masked_and_readonly_paths_are_checked)
{
	char *t;

	refused(t = config("", ",\"maskedPaths\":[\"/proc/../etc/passwd\"]", ""),
		"linux.maskedPaths[0]: \"/proc/../etc/passwd\": no \"..\""),
	    free(t);
	refused(t = config("", ",\"readonlyPaths\":[\"/proc/sys\",\"proc/x\"]", ""),
		"linux.readonlyPaths[1]: must be an absolute path"),
	    free(t);
	refused(t = config("", ",\"maskedPaths\":[\"/etc/shadow\"]", ""),
		"linux.maskedPaths[0]: \"/etc/shadow\" is not supported (only below /proc and "
		"/sys)"),
	    free(t);
	refused(t = config("", ",\"maskedPaths\":[1]", ""), "linux.maskedPaths[0]"), free(t);
}

Test(oci, a_seccomp_profile_with_an_unknown_syscall_is_refused)
{
	char *t =
	    config("",
		   ",\"seccomp\":{\"defaultAction\":\"SCMP_ACT_ERRNO\",\"syscalls\":[{\"names\":"
		   "[\"read\",\"nosuchcall\"],\"action\":\"SCMP_ACT_ALLOW\"}]}",
		   "");

	refused(t, "linux.seccomp.syscalls[0].names[1]: unknown syscall \"nosuchcall\"");
	free(t);
	refused(t = config("", ",\"seccomp\":{\"defaultAction\":\"SCMP_ACT_NOTIFY\"}", ""),
		"linux.seccomp.defaultAction: unknown action \"SCMP_ACT_NOTIFY\" (not supported)"),
	    free(t);
	refused(
	    t = config("",
		       ",\"seccomp\":{\"defaultAction\":\"SCMP_ACT_ALLOW\",\"syscalls\":[{"
		       "\"names\":[\"kill\"],\"action\":\"SCMP_ACT_ERRNO\",\"args\":[{\"index\":"
		       "0,\"value\":1,\"op\":\"SCMP_CMP_SOMETIMES\"}]}]}",
		       ""),
	    "linux.seccomp.syscalls[0].args[0].op: unknown operator"),
	    free(t);
}

/* The weakened twin: the same profile with a known name compiles. */
Test(oci, a_seccomp_profile_of_known_names_compiles)
{
	struct oci_config c;
	struct err err = {0};
	char *t =
	    config("",
		   ",\"seccomp\":{\"defaultAction\":\"SCMP_ACT_ERRNO\",\"syscalls\":[{\"names\":"
		   "[\"read\",\"write\"],\"action\":\"SCMP_ACT_ALLOW\"}]}",
		   "");

	cr_assert_eq(oci_config_parse(t, strlen(t), "/b", &c, &err), 0, "%s", err.msg);
	cr_assert_not_null(c.bpf);
	oci_config_free(&c);
	free(t);
}

Test(oci, what_paddock_would_read_otherwise_is_refused)
{
	char *t;

	refused(t = config(",\"env\":[\"A=${HOME}\"]", "", ""), "process.env[0]: \"${\""), free(t);
	refused(t = config(",\"env\":[\"1A=x\"]", "", ""), "not a variable name"), free(t);
	refused(t = config(",\"env\":[\"A=1\",\"A=2\"]", "", ""), "A is set twice"), free(t);
	refused(t = config("", "", ",\"hooks\":{\"createContainer\":[{\"path\":\"/x\"}]}"),
		"hooks.createContainer: not supported"),
	    free(t);
	refused(t = config("", "", ",\"annotations\":{\"org.paddock.bogus\":\"1\"}"),
		"annotations.org.paddock.bogus: unknown paddock annotation"),
	    free(t);
	refused("{\"ociVersion\":\"2.0.0\"}", "ociVersion: \"2.0.0\" is not supported");
	refused("{\"ociVersion\":", "config.json: line 1, column");
	refused(t = config("", "", ",\"mounts\":[{\"destination\":\"/x\",\"type\":\"overlay\"}]"),
		"mounts[0].type: \"overlay\" is not supported"),
	    free(t);
	refused(t = config("", "", ",\"root\":{\"path\":\"../x\"}"), "duplicate key \"root\""),
	    free(t);
}
