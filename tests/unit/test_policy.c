/* Unit tests for policy/: the fixture tables in tests/data/{valid,invalid}
 * and contrib/policies, then targeted tests. Run from the repository root. */
#include <criterion/criterion.h>

#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../../policy/policy.h"
#include "../../policy/sha256.h"
#include "unit.h"

TestSuite(policy, .fini = unit_leak_check);

static const struct policy_vars vars = {
    .workspace = "/ws",
    .home = "/home/u",
    .pwd = "/cwd",
};

/* Whole file into a malloc'd buffer, with a NUL after len bytes for the
 * convenience of string tests (policy_load_buffer does not need it). */
static char *slurp(const char *path, size_t *len)
{
	struct stat st;
	char *buf;
	ssize_t n;
	size_t got = 0;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	cr_assert(fd >= 0, "open %s", path);
	cr_assert(fstat(fd, &st) == 0);
	buf = malloc((size_t)st.st_size + 1);
	cr_assert(buf);
	while (got < (size_t)st.st_size && (n = read(fd, buf + got, (size_t)st.st_size - got)) > 0)
		got += (size_t)n;
	close(fd);
	cr_assert_eq(got, (size_t)st.st_size, "short read of %s", path);
	buf[got] = '\0';
	*len = got;
	return buf;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Sorted names in dir ending in suffix; returns the count. */
static size_t list_dir(const char *dir, const char *suffix, char ***out)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	char **v = NULL;
	size_t n = 0, sl = strlen(suffix);

	cr_assert(d, "opendir %s (run from the repository root)", dir);
	while ((e = readdir(d))) {
		size_t l = strlen(e->d_name);

		if (l <= sl || strcmp(e->d_name + l - sl, suffix) != 0)
			continue;
		v = realloc(v, (n + 1) * sizeof(*v));
		cr_assert(v);
		v[n] = malloc(strlen(dir) + l + 2);
		cr_assert(v[n]);
		sprintf(v[n++], "%s/%s", dir, e->d_name);
	}
	closedir(d);
	if (n)
		qsort(v, n, sizeof(*v), cmp_str);
	*out = v;
	return n;
}

static void free_list(char **v, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(v[i]);
	free(v);
}

static int load_str(const char *json, struct policy **p, struct err *err)
{
	return policy_load_buffer(json, strlen(json), &vars, p, err);
}

/* json must fail with -EINVAL and a message containing want. */
static void expect_invalid(const char *json, const char *want)
{
	struct err err = {0};
	struct policy *p = NULL;
	int r = load_str(json, &p, &err);

	cr_expect_eq(r, -EINVAL, "%s: got %d (%s)", json, r, err.msg);
	cr_expect_null(p);
	cr_expect(strstr(err.msg, want), "%s:\n  got  %s\n  want %s", json, err.msg, want);
	policy_free(p);
}

static struct policy *expect_valid(const char *json)
{
	struct err err = {0};
	struct policy *p = NULL;
	int r = load_str(json, &p, &err);

	cr_assert_eq(r, 0, "%s: %s", json, err.msg);
	cr_assert_not_null(p);
	return p;
}

/* ---- fixture tables ---- */

static size_t load_valid_dir(const char *dir)
{
	char **files;
	size_t n = list_dir(dir, ".json", &files);

	for (size_t i = 0; i < n; i++) {
		struct err err = {0};
		struct policy *p = NULL;
		unsigned char d[SHA256_DIGEST_LEN];
		char hex[65];
		size_t len;
		char *buf = slurp(files[i], &len);
		int r = policy_load_buffer(buf, len, &vars, &p, &err);

		cr_expect_eq(r, 0, "%s: %s", files[i], err.msg);
		if (r == 0) {
			sha256(buf, len, d);
			sha256_hex(d, hex);
			cr_expect_str_eq(p->sha256, hex, "%s: digest", files[i]);
		}
		policy_free(p);
		free(buf);
	}
	free_list(files, n);
	return n;
}

Test(policy, valid_fixtures_load)
{
	cr_assert_geq(load_valid_dir("tests/data/valid"), 6);
}

Test(policy, contrib_policies_load)
{
	cr_assert_geq(load_valid_dir("contrib/policies"), 3);
}

static void check_invalid(const char *json_path)
{
	struct err err = {0};
	struct policy *p = NULL;
	char expect_path[4096];
	size_t len, elen;
	char *buf, *want;
	int r;

	snprintf(expect_path, sizeof(expect_path), "%.*s.expect",
		 (int)(strlen(json_path) - strlen(".json")), json_path);
	want = slurp(expect_path, &elen);
	cr_assert(elen > 0 && strchr(want, '\n') == want + elen - 1, "%s: want exactly one line",
		  expect_path);
	want[elen - 1] = '\0';
	buf = slurp(json_path, &len);
	r = policy_load_buffer(buf, len, &vars, &p, &err);
	cr_expect(r == -EINVAL || r == -E2BIG, "%s: got %d (%s)", json_path, r, err.msg);
	cr_expect_null(p, "%s: half-loaded", json_path);
	cr_expect_eq(err.code, -r, "%s: err.code", json_path);
	cr_expect(strstr(err.msg, want), "%s:\n  got  %s\n  want %s", json_path, err.msg, want);
	cr_expect_null(strchr(err.msg, '\n'), "%s: message is not one line", json_path);
	policy_free(p);
	free(buf);
	free(want);
}

Test(policy, invalid_fixtures_fail_with_their_message)
{
	char **files;
	size_t n = list_dir("tests/data/invalid", ".json", &files);

	cr_assert_geq(n, 30);
	for (size_t i = 0; i < n; i++)
		check_invalid(files[i]);
	free_list(files, n);
}

Test(policy, every_expect_has_a_fixture)
{
	char **files;
	size_t n = list_dir("tests/data/invalid", ".expect", &files);

	for (size_t i = 0; i < n; i++) {
		char json[4096];

		snprintf(json, sizeof(json), "%.*s.json",
			 (int)(strlen(files[i]) - strlen(".expect")), files[i]);
		cr_expect_eq(access(json, R_OK), 0, "%s has no .json", files[i]);
	}
	free_list(files, n);
}

/* ---- defaults and fields ---- */

Test(policy, defaults)
{
	struct policy *p = expect_valid("{\"version\": 1}");

	cr_expect_eq(p->namespaces, POLICY_NS_ALL);
	cr_expect_str_eq(p->hostname, "paddock");
	cr_expect_str_eq(p->cwd, "/");
	cr_expect(p->env_clear);
	cr_expect_eq(p->grace_ms, 2000);
	cr_expect_eq(p->ttl_ms, 0);
	cr_expect_eq(p->output_max, 64u << 20, "limits.output defaults to 64 MiB");
	cr_expect_eq(p->network, POLICY_NET_NONE);
	cr_expect(!p->has_uid && !p->has_gid);
	cr_expect_eq(p->n_mounts + p->n_protect + p->n_env_keep + p->n_env_set, 0);
	for (int i = 0; i < POLICY_RLIMIT_COUNT; i++)
		cr_expect(!p->rlimits[i].set);
	cr_expect_eq(strlen(p->sha256), 64);
	policy_free(p);
}

Test(policy, all_fields)
{
	size_t len;
	char *buf = slurp("tests/data/valid/all-fields.json", &len);
	struct policy *p = expect_valid(buf);
	const struct policy_mount *m = p->mounts;

	cr_expect_str_eq(p->hostname, "box-1.example");
	cr_expect(p->has_uid && p->uid == 1000 && p->has_gid && p->gid == 4294967294u);
	cr_expect_str_eq(p->cwd, "/work");
	cr_expect(!p->env_clear);
	cr_assert_eq(p->n_env_keep, 2);
	cr_expect_str_eq(p->env_keep[1], "LC_*");
	cr_assert_eq(p->n_env_set, 3);
	cr_expect_str_eq(p->env_set[0], "PATH=/usr/bin:/bin");
	cr_expect_str_eq(p->env_set[1], "EDITOR=vi");
	cr_expect_str_eq(p->env_set[2], "EMPTY=");
	cr_assert_eq(p->n_mounts, 7);
	cr_expect(m[0].type == POLICY_MOUNT_BIND && m[0].readonly && !m[0].optional &&
		  !m[0].copy_symlink);
	cr_expect(m[1].type == POLICY_MOUNT_BIND && !m[1].readonly);
	cr_expect_str_eq(m[1].source, "/srv/work");
	cr_expect_str_eq(m[1].target, "/work");
	cr_expect(m[2].type == POLICY_MOUNT_TMPFS && m[2].size == 64u << 20 && m[2].mode == 01777);
	cr_expect(m[3].type == POLICY_MOUNT_PROC && m[4].type == POLICY_MOUNT_DEV);
	cr_expect(m[5].type == POLICY_MOUNT_DIR && m[5].mode == 0700);
	cr_expect(m[6].type == POLICY_MOUNT_SYMLINK);
	cr_expect_str_eq(m[6].link, "usr/bin");
	for (size_t i = 0; i < p->n_mounts; i++)
		cr_expect_eq(m[i].index, i);
	cr_expect_eq(p->ttl_ms, 30 * 60 * 1000);
	cr_expect_eq(p->grace_ms, 500);
	cr_expect(p->rlimits[POLICY_RLIMIT_NPROC].set &&
		  p->rlimits[POLICY_RLIMIT_NPROC].value == 256);
	cr_expect_eq(p->rlimits[POLICY_RLIMIT_FSIZE].value, 1ull << 30);
	cr_expect_eq(p->rlimits[POLICY_RLIMIT_AS].value, 4294967296ull);
	cr_expect(p->rlimits[POLICY_RLIMIT_CORE].set && p->rlimits[POLICY_RLIMIT_CORE].value == 0);
	policy_free(p);
	free(buf);
}

Test(policy, mount_defaults)
{
	struct policy *p = expect_valid(
	    "{\"version\":1,\"mounts\":[{\"type\":\"bind\",\"source\":\"/usr\"},"
	    "{\"type\":\"tmpfs\",\"target\":\"/tmp\"},{\"type\":\"dir\",\"target\":\"/d\"}]}");

	cr_expect_str_eq(p->mounts[0].target, "/usr");
	cr_expect(p->mounts[0].readonly && !p->mounts[0].optional && !p->mounts[0].copy_symlink);
	cr_expect(p->mounts[1].size == 0 && p->mounts[1].mode == 0755);
	cr_expect_eq(p->mounts[2].mode, 0755);
	policy_free(p);
}

Test(policy, rlimits_unlimited)
{
	size_t len;
	char *buf = slurp("tests/data/valid/rlimits-unlimited.json", &len);
	struct policy *p = expect_valid(buf);

	cr_expect_eq(p->ttl_ms, 0);
	cr_expect_eq(p->rlimits[POLICY_RLIMIT_NPROC].value, POLICY_UNLIMITED);
	cr_expect_eq(p->rlimits[POLICY_RLIMIT_NOFILE].value, 1048576);
	cr_expect_eq(p->rlimits[POLICY_RLIMIT_CORE].value, POLICY_UNLIMITED);
	policy_free(p);
	free(buf);
}

Test(policy, optional_namespaces)
{
	struct policy *p =
	    expect_valid("{\"version\":1,\"namespaces\":[\"net\",\"pid\",\"mount\",\"user\"]}");

	cr_expect_eq(p->namespaces, POLICY_NS_REQUIRED);
	policy_free(p);
}

Test(policy, limits_output)
{
	struct policy *p = expect_valid("{\"version\": 1, \"limits\": {\"output\": \"1k\"}}");

	cr_expect_eq(p->output_max, 1024);
	policy_free(p);
	p = expect_valid("{\"version\": 1, \"limits\": {\"output\": 100}}");
	cr_expect_eq(p->output_max, 100);
	policy_free(p);
}

Test(policy, agent_policy)
{
	size_t len;
	char *buf = slurp("contrib/policies/agent.json", &len);
	struct policy *p = expect_valid(buf);

	cr_expect_str_eq(p->cwd, "/ws");
	cr_expect_eq(p->namespaces, POLICY_NS_ALL);
	cr_expect_str_eq(p->mounts[p->n_mounts - 1].target, "/ws");
	cr_expect(!p->mounts[p->n_mounts - 1].readonly);
	cr_expect_eq(p->n_protect, 42);
	/* git directories are found at start (mounts/git.c), not named. */
	cr_expect_str_eq(p->protect[0], "/ws/**/.git");
	for (size_t i = 0; i < p->n_protect; i++)
		cr_expect(strncmp(p->protect[i], "/ws/.git/", 9) != 0, "%s", p->protect[i]);
	cr_expect_eq(p->ttl_ms, 3600 * 1000);
	policy_free(p);
	free(buf);
}

/* ---- seccomp and landlock ---- */

Test(policy, seccomp_landlock_defaults)
{
	struct policy *p = expect_valid("{\"version\": 1}");

	cr_expect_eq(p->seccomp_profile, POLICY_SECCOMP_DEFAULT);
	cr_expect_eq(p->seccomp_default_action, POLICY_SECCOMP_ERRNO);
	cr_expect_eq(p->seccomp_errno, EPERM);
	cr_expect_eq(p->n_seccomp_allow + p->n_seccomp_deny, 0);
	cr_expect_eq(p->landlock_mode, POLICY_LANDLOCK_BEST_EFFORT);
	cr_expect_not(p->landlock_tcp);
	cr_expect_eq(p->n_landlock_tcp_bind + p->n_landlock_tcp_connect, 0);
	policy_free(p);
}

Test(policy, seccomp_landlock_fields)
{
	size_t len;
	char *buf = slurp("tests/data/valid/seccomp-landlock.json", &len);
	struct policy *p = expect_valid(buf);

	cr_expect_eq(p->seccomp_profile, POLICY_SECCOMP_DEFAULT);
	cr_expect_eq(p->seccomp_default_action, POLICY_SECCOMP_ERRNO);
	cr_expect_eq(p->seccomp_errno, ENOSYS);
	cr_assert_eq(p->n_seccomp_allow, 2);
	cr_expect_str_eq(p->seccomp_allow[0].name, "ptrace");
	cr_expect_str_eq(p->seccomp_allow[1].name, "process_vm_readv");
	cr_expect_eq(p->seccomp_allow[1].index, 1);
	cr_assert_eq(p->n_seccomp_deny, 3);
	cr_expect_str_eq(p->seccomp_deny[0].name, "uname");
	cr_expect_eq(p->seccomp_deny[0].errno_value, EACCES);
	cr_expect_str_eq(p->seccomp_deny[1].name, "chroot");
	cr_expect_eq(p->seccomp_deny[1].errno_value, EPERM, "a bare name denies with EPERM");
	cr_expect_eq(p->seccomp_deny[2].errno_value, EPERM, "so does an object without errno");
	cr_expect_eq(p->seccomp_deny[2].index, 2);
	cr_expect_eq(p->landlock_mode, POLICY_LANDLOCK_REQUIRED);
	cr_expect(p->landlock_tcp);
	cr_assert_eq(p->n_landlock_tcp_bind, 1);
	cr_expect_eq(p->landlock_tcp_bind[0], 8080);
	cr_assert_eq(p->n_landlock_tcp_connect, 4);
	cr_expect_eq(p->landlock_tcp_connect[1], 443);
	cr_expect_eq(p->landlock_tcp_connect[3], 65535);
	policy_free(p);
	free(buf);
}

Test(policy, seccomp_none_and_empty_tcp)
{
	size_t len;
	char *buf = slurp("tests/data/valid/seccomp-none.json", &len);
	struct policy *p = expect_valid(buf);

	cr_expect_eq(p->seccomp_profile, POLICY_SECCOMP_NONE);
	/* "tcp": {} restricts TCP and allows no port. */
	cr_expect(p->landlock_tcp);
	cr_expect_eq(p->n_landlock_tcp_bind + p->n_landlock_tcp_connect, 0);
	policy_free(p);
	free(buf);
	p = expect_valid("{\"version\":1,\"seccomp\":{\"default_action\":\"log\"}}");
	cr_expect_eq(p->seccomp_default_action, POLICY_SECCOMP_LOG);
	policy_free(p);
	p = expect_valid("{\"version\":1,\"seccomp\":{\"default_action\":\"kill\"}}");
	cr_expect_eq(p->seccomp_default_action, POLICY_SECCOMP_KILL);
	policy_free(p);
}

Test(policy, contrib_policies_harden)
{
	static const char *const files[] = {"contrib/policies/agent.json",
					    "contrib/policies/build.json",
					    "contrib/policies/minimal.json"};

	for (size_t i = 0; i < 3; i++) {
		size_t len;
		char *buf = slurp(files[i], &len);
		struct policy *p = expect_valid(buf);

		cr_expect_eq(p->seccomp_profile, POLICY_SECCOMP_DEFAULT, "%s", files[i]);
		cr_expect_eq(p->seccomp_default_action, POLICY_SECCOMP_ERRNO, "%s", files[i]);
		cr_expect_eq(p->seccomp_errno, EPERM, "%s", files[i]);
		cr_expect_eq(p->landlock_mode, POLICY_LANDLOCK_BEST_EFFORT, "%s", files[i]);
		cr_expect_not(p->landlock_tcp, "%s", files[i]);
		cr_expect(strstr(buf, "\"seccomp\""), "%s names its seccomp profile", files[i]);
		cr_expect(i == 2 || strstr(buf, "\"landlock\""), "%s names its Landlock mode",
			  files[i]);
		policy_free(p);
		free(buf);
	}
}

Test(policy, seccomp_messages)
{
	expect_invalid("{\"version\":1,\"seccomp\":{\"profile\":\"none\",\"deny\":[]}}",
		       "seccomp.deny: not used with \"profile\": \"none\"");
	expect_invalid("{\"version\":1,\"seccomp\":{\"profile\":\"none\",\"errno\":\"EPERM\"}}",
		       "seccomp.errno: not used with \"profile\": \"none\"");
	expect_invalid("{\"version\":1,\"seccomp\":{\"default_action\":\"log\",\"errno\":"
		       "\"EPERM\"}}",
		       "seccomp.errno: only used with \"default_action\": \"errno\"");
	expect_invalid("{\"version\":1,\"seccomp\":{\"deny\":[[\"uname\"]]}}",
		       "seccomp.deny[0]: must be a syscall name or an object");
	expect_invalid("{\"version\":1,\"seccomp\":{\"deny\":[{\"syscall\":\"a b\"}]}}",
		       "seccomp.deny[0].syscall: invalid syscall name \"a b\"");
	expect_invalid("{\"version\":1,\"seccomp\":{\"deny\":[{\"syscall\":\"uname\","
		       "\"errno\":\"eperm\"}]}}",
		       "seccomp.deny[0].errno: unknown errno name \"eperm\"");
	/* A name both allowed and denied, wherever it is in the lists. */
	expect_invalid("{\"version\":1,\"seccomp\":{\"deny\":[\"a\",\"b\",\"c\"],"
		       "\"allow\":[\"d\",\"c\",\"b\"]}}",
		       "seccomp.deny[1]: \"b\" is also in seccomp.allow");
	expect_invalid("{\"version\":1,\"seccomp\":{\"allow\":[\"a\",\"a\"]}}",
		       "seccomp.allow[1]: duplicate syscall \"a\"");
}

Test(policy, seccomp_syscall_name_length)
{
	char json[256], name[66];
	struct policy *p;

	memset(name, 'x', 64);
	name[64] = '\0';
	snprintf(json, sizeof(json), "{\"version\":1,\"seccomp\":{\"allow\":[\"%s\"]}}", name);
	p = expect_valid(json);
	policy_free(p);
	strcat(name, "x");
	snprintf(json, sizeof(json), "{\"version\":1,\"seccomp\":{\"allow\":[\"%s\"]}}", name);
	expect_invalid(json, "seccomp.allow[0]: invalid syscall name");
}

Test(policy, landlock_messages)
{
	expect_invalid("{\"version\":1,\"landlock\":{\"mode\":\"Required\"}}",
		       "landlock.mode: must be \"required\" or \"best-effort\"");
	expect_invalid("{\"version\":1,\"landlock\":{\"tcp\":{\"bind\":[-1]}}}",
		       "landlock.tcp.bind[0]: must be an integer from 1 to 65535");
	expect_invalid("{\"version\":1,\"landlock\":{\"tcp\":{\"bind\":[22,22]}}}",
		       "landlock.tcp.bind[1]: duplicate port 22");
	expect_invalid("{\"version\":1,\"landlock\":{\"tcp\":{\"bind\":{}}}}",
		       "landlock.tcp.bind: must be an array");
	/* The same port may be in both lists. */
	policy_free(expect_valid(
	    "{\"version\":1,\"landlock\":{\"tcp\":{\"bind\":[443],\"connect\":[443]}}}"));
}

Test(policy, landlock_many_ports)
{
	/* Every port once: linear duplicate detection, no quadratic blowup. */
	size_t cap = 65535 * 6 + 128, o;
	char *json = malloc(cap);
	struct policy *p;

	cr_assert(json);
	o = (size_t)snprintf(json, cap, "{\"version\":1,\"landlock\":{\"tcp\":{\"connect\":[");
	for (unsigned port = 1; port <= 65535; port++)
		o += (size_t)snprintf(json + o, cap - o, "%s%u", port > 1 ? "," : "", port);
	snprintf(json + o, cap - o, "]}}}");
	p = expect_valid(json);
	cr_expect_eq(p->n_landlock_tcp_connect, 65535);
	policy_free(p);
	free(json);
}

Test(policy, errno_names)
{
	cr_expect_str_eq(policy_errno_name(EPERM), "EPERM");
	cr_expect_str_eq(policy_errno_name(EACCES), "EACCES");
	cr_expect_str_eq(policy_errno_name(EAFNOSUPPORT), "EAFNOSUPPORT");
	cr_expect_str_eq(policy_errno_name(EHOSTUNREACH), "EHOSTUNREACH");
	/* The same number on Linux; the first name is the one printed. */
	cr_expect_str_eq(policy_errno_name(ENOTSUP), "EOPNOTSUPP");
	cr_expect_str_eq(policy_errno_name(0), "E?");
	cr_expect_str_eq(policy_errno_name(-EPERM), "E?");
	cr_expect_str_eq(policy_errno_name(EXDEV), "E?");
	policy_free(expect_valid("{\"version\":1,\"seccomp\":{\"errno\":\"ENOTSUP\"}}"));
}

/* ---- variables ---- */

Test(policy, variable_expansion)
{
	size_t len;
	char *buf = slurp("tests/data/valid/variables.json", &len);
	struct policy *p = expect_valid(buf);

	cr_expect_str_eq(p->cwd, "/cwd");
	cr_assert_eq(p->n_env_set, 4);
	cr_expect_str_eq(p->env_set[0], "HOME=/home/u");
	cr_expect_str_eq(p->env_set[1], "WS=/ws/src");
	cr_expect_str_eq(p->env_set[2], "PRICE=$5 and $HOME and /cwd$");
	cr_expect_str_eq(p->env_set[3], "BACKSLASH=\\u0000 is text here");
	cr_assert_eq(p->n_mounts, 3);
	cr_expect_str_eq(p->mounts[0].source, "/ws");
	cr_expect_str_eq(p->mounts[0].target, "/ws");
	cr_expect_str_eq(p->mounts[1].source, "/home/u/.cache");
	cr_expect_str_eq(p->mounts[1].target, "/ws/.cache");
	cr_expect_str_eq(p->mounts[2].target, "/cwd-/home/u");
	cr_assert_eq(p->n_protect, 2);
	cr_expect_str_eq(p->protect[0], "/ws/.git");
	cr_expect_str_eq(p->protect[1], "/ws");
	policy_free(p);
	free(buf);
}

Test(policy, variable_not_set)
{
	const char *json =
	    "{\"version\":1,\"mounts\":[{\"type\":\"bind\",\"source\":\"${WORKSPACE}\"}]}";
	struct policy_vars none = {.home = "/h"};
	struct err err = {0};
	struct policy *p = NULL;

	cr_expect_eq(policy_load_buffer(json, strlen(json), &none, &p, &err), -EINVAL);
	cr_expect_str_eq(err.msg, "mounts[0].source: ${WORKSPACE} is not set");
	cr_expect_eq(policy_load_buffer(json, strlen(json), NULL, &p, &err), -EINVAL);
	cr_expect_str_eq(err.msg, "mounts[0].source: ${WORKSPACE} is not set");
	cr_expect_null(p);
}

Test(policy, variable_value_must_make_a_valid_path)
{
	const char *json = "{\"version\":1,\"cwd\":\"${HOME}/x\"}";
	struct policy_vars v = {.home = "/"};
	struct err err = {0};
	struct policy *p = NULL;

	cr_expect_eq(policy_load_buffer(json, strlen(json), &v, &p, &err), -EINVAL);
	cr_expect_str_eq(err.msg, "cwd: must not contain empty components (\"//\")");
}

Test(policy, variable_messages)
{
	expect_invalid("{\"version\":1,\"cwd\":\"/a${\"}", "cwd: unknown variable \"${\"");
	expect_invalid("{\"version\":1,\"cwd\":\"${}\"}", "cwd: unknown variable \"${}\"");
	expect_invalid("{\"version\":1,\"mounts\":[{\"type\":\"dir\",\"target\":\"${HOME\"}]}",
		       "mounts[0].target: unknown variable \"${HOME\"");
	expect_invalid("{\"version\":1,\"protect\":[\"${X\\\"Y}\"]}",
		       "protect[0]: unknown variable \"${X\\\"Y}\"");
}

Test(policy, expanded_paths_are_length_checked)
{
	char ws[4000], json[256];
	struct policy_vars v = {.workspace = ws};
	struct err err = {0};
	struct policy *p = NULL;

	memset(ws, 'w', sizeof(ws) - 1);
	ws[0] = '/';
	ws[sizeof(ws) - 1] = '\0';
	snprintf(json, sizeof(json), "{\"version\":1,\"cwd\":\"${WORKSPACE}/%0100d\"}", 0);
	cr_expect_eq(policy_load_buffer(json, strlen(json), &v, &p, &err), -EINVAL);
	cr_expect_str_eq(err.msg, "cwd: is longer than 4095 bytes");
}

Test(policy, env_value_limit)
{
	/* 40 x ${WORKSPACE} x 4000 bytes > MAX_ARG_STRLEN. */
	char ws[4000], json[1024];
	struct policy_vars v = {.workspace = ws};
	struct err err = {0};
	struct policy *p = NULL;
	size_t o;

	memset(ws, 'w', sizeof(ws) - 1);
	ws[sizeof(ws) - 1] = '\0';
	o = (size_t)snprintf(json, sizeof(json),
			     "{\"version\":1,\"environment\":{\"set\":{\"V\":\"");
	for (int i = 0; i < 40; i++)
		o += (size_t)snprintf(json + o, sizeof(json) - o, "${WORKSPACE}");
	snprintf(json + o, sizeof(json) - o, "\"}}}");
	cr_expect_eq(policy_load_buffer(json, strlen(json), &v, &p, &err), -EINVAL);
	cr_expect_str_eq(err.msg, "environment.set.V: is longer than 131071 bytes");
}

/* ---- durations and sizes ---- */

Test(policy, parse_duration)
{
	static const struct {
		const char *s;
		int r;
		uint64_t ms;
	} t[] = {
	    {"0s", 0, 0},
	    {"0ms", 0, 0},
	    {"500ms", 0, 500},
	    {"2s", 0, 2000},
	    {"5m", 0, 300000},
	    {"1h", 0, 3600000},
	    {"007s", 0, 7000},
	    {"720h", 0, 2592000000ull},
	    {"2592000000ms", 0, 2592000000ull},
	    {"721h", -ERANGE, 0},
	    {"2592000001ms", -ERANGE, 0},
	    {"43201m", -ERANGE, 0},
	    {"18446744073709551615h", -ERANGE, 0},
	    {"18446744073709551616ms", -ERANGE, 0},
	    {"99999999999999999999999999999999s", -ERANGE, 0},
	    {"", -EINVAL, 0},
	    {"s", -EINVAL, 0},
	    {"5", -EINVAL, 0},
	    {"5x", -EINVAL, 0},
	    {"5 s", -EINVAL, 0},
	    {" 5s", -EINVAL, 0},
	    {"5s ", -EINVAL, 0},
	    {"-5s", -EINVAL, 0},
	    {"+5s", -EINVAL, 0},
	    {"5S", -EINVAL, 0},
	    {"5.5s", -EINVAL, 0},
	    {"5sec", -EINVAL, 0},
	    {"5d", -EINVAL, 0},
	    {"0x10s", -EINVAL, 0},
	    {"99999999999999999999999999x", -EINVAL, 0},
	};
	uint64_t ms;

	for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		ms = 12345;
		cr_expect_eq(policy_parse_duration(t[i].s, &ms), t[i].r, "\"%s\"", t[i].s);
		if (t[i].r == 0)
			cr_expect_eq(ms, t[i].ms, "\"%s\"", t[i].s);
	}
	cr_expect_eq(policy_parse_duration(NULL, &ms), -EINVAL);
}

Test(policy, parse_size)
{
	static const struct {
		const char *s;
		int r;
		uint64_t v;
	} t[] = {
	    {"0", 0, 0},
	    {"4096", 0, 4096},
	    {"1k", 0, 1024},
	    {"64m", 0, 64ull << 20},
	    {"2g", 0, 2ull << 30},
	    {"17179869183g", 0, 17179869183ull << 30},
	    {"18446744073709551615", 0, UINT64_MAX},
	    {"17179869184g", -ERANGE, 0},
	    {"18014398509481984k", -ERANGE, 0},
	    {"18446744073709551616", -ERANGE, 0},
	    {"999999999999999999999999999k", -ERANGE, 0},
	    {"", -EINVAL, 0},
	    {"k", -EINVAL, 0},
	    {"1K", -EINVAL, 0},
	    {"1kb", -EINVAL, 0},
	    {"1t", -EINVAL, 0},
	    {"-1", -EINVAL, 0},
	    {"+1", -EINVAL, 0},
	    {" 1", -EINVAL, 0},
	    {"1 ", -EINVAL, 0},
	    {"1.5m", -EINVAL, 0},
	    {"0x10", -EINVAL, 0},
	    {"999999999999999999999999999q", -EINVAL, 0},
	};
	uint64_t v;

	for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		v = 12345;
		cr_expect_eq(policy_parse_size(t[i].s, &v), t[i].r, "\"%s\"", t[i].s);
		if (t[i].r == 0)
			cr_expect_eq(v, t[i].v, "\"%s\"", t[i].s);
	}
	cr_expect_eq(policy_parse_size(NULL, &v), -EINVAL);
}

/* ---- sha256 ---- */

static void expect_sha(const void *data, size_t len, const char *want)
{
	unsigned char d[SHA256_DIGEST_LEN];
	char hex[65];

	sha256(data, len, d);
	sha256_hex(d, hex);
	cr_expect_str_eq(hex, want, "length %zu", len);
}

static void sha256_vectors_once(void)
{
	static const struct {
		size_t n; /* of 'a' */
		const char *hex;
	} as[] = {
	    {55, "9f4390f8d30c2dd92ec9f095b65e2b9ae9b0a925a5258e241c9f1e910f734318"},
	    {56, "b35439a4ac6f0948b6d6f9e3c6af0f5f590ce20f1bde7090ef7970686ec6738a"},
	    {63, "7d3e74a05d7db15bce4ad9ec0658ea98e3f06eeecf16b4c6fff2da457ddc2f34"},
	    {64, "ffe054fe7ae0cb6dc65c3af9b61d5209f439851db43d0ba5997337df154668eb"},
	    {119, "31eba51c313a5c08226adf18d4a359cfdfd8d2e816b13f4af952f7ea6584dcfb"},
	    {120, "2f3d335432c70b580af0e8e1b3674a7c020d683aa5f73aaaedfdc55af904c21c"},
	    {1000000, "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0"},
	};
	char *a = malloc(1000000);

	/* FIPS 180-2 appendix B and the empty message. */
	expect_sha(NULL, 0, "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
	expect_sha("abc", 3, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
	expect_sha("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq", 56,
		   "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
	expect_sha("abcdefghbcdefghicdefghijdefghijkefghijklfghijklmghijklmnhijklmnoijklmnopjklmno"
		   "pqklmnopqrlmnopqrsmnopqrstnopqrstu",
		   112, "cf5b16a778af8380036ce59e7b0492370b249b11e8f07a51afac45037afee9d1");
	cr_assert(a);
	memset(a, 'a', 1000000);
	for (size_t i = 0; i < sizeof(as) / sizeof(as[0]); i++)
		expect_sha(a, as[i].n, as[i].hex);
	free(a);
}

/* Both block functions: the SHA extensions where this CPU has them (else
 * the portable one twice), and the portable one every other CPU runs. */
Test(policy, sha256_vectors)
{
	sha256_vectors_once();
	sha256_force_portable(true);
	sha256_vectors_once();
	sha256_force_portable(false);
}

/* The two block functions agree on every length around the block
 * boundaries and on pseudo-random bytes. */
Test(policy, sha256_paths_agree)
{
	static unsigned char buf[4096 + 1];
	unsigned char d1[SHA256_DIGEST_LEN], d2[SHA256_DIGEST_LEN];
	uint32_t x = 2463534242u;

	for (size_t i = 0; i < sizeof(buf); i++) {
		x ^= x << 13, x ^= x >> 17, x ^= x << 5;
		buf[i] = (unsigned char)x;
	}
	for (size_t n = 0; n <= sizeof(buf); n += n < 300 ? 1 : 61) {
		sha256(buf, n, d1);
		sha256_force_portable(true);
		sha256(buf, n, d2);
		sha256_force_portable(false);
		cr_assert_eq(memcmp(d1, d2, sizeof(d1)), 0, "length %zu", n);
	}
}

Test(policy, digest_is_of_the_exact_bytes)
{
	const char *json = "{\"version\":1}\n";
	struct policy *p = expect_valid(json), *q;

	cr_expect_str_eq(p->sha256,
			 "50208d78350a7a160dec59a82df1499b6ca7da33e54c5eb11c97e342118e68bb");
	/* The same policy spelt differently is different bytes. */
	q = expect_valid("{ \"version\": 1 }");
	cr_expect_str_neq(p->sha256, q->sha256);
	policy_free(p);
	policy_free(q);
}

/* ---- raw-text strictness ---- */

Test(policy, input_need_not_be_terminated)
{
	const char buf[] = "{\"version\":1}XYZ";
	struct err err = {0};
	struct policy *p = NULL;

	cr_expect_eq(policy_load_buffer(buf, 13, &vars, &p, &err), 0, "%s", err.msg);
	policy_free(p);
	p = NULL;
	cr_expect_eq(policy_load_buffer(buf, 16, &vars, &p, &err), -EINVAL);
	cr_expect_str_eq(err.msg, "line 1, column 14: invalid JSON");
	cr_expect_eq(policy_load_buffer(buf, 12, &vars, &p, &err), -EINVAL);
	cr_expect_null(p);
}

Test(policy, raw_nul_byte)
{
	const char buf[] = "{\"version\":1}\0";
	struct err err = {0};
	struct policy *p = NULL;

	cr_expect_eq(policy_load_buffer(buf, sizeof(buf) - 1, &vars, &p, &err), -EINVAL);
	cr_expect_str_eq(err.msg, "line 1, column 14: NUL byte is not allowed");
}

Test(policy, nul_escape)
{
	expect_invalid("{\"version\":1,\"cwd\":\"/tmp\\u0000/../etc\"}",
		       "line 1, column 25: \\u0000 is not allowed");
	expect_invalid("{\"version\":1,\"a\\u0000\":1}", "\\u0000 is not allowed");
	expect_invalid("{\"version\":1,\"cwd\":\"\\\\\\u0000\"}", "\\u0000 is not allowed");
	/* An escaped backslash followed by "u0000" is plain text. */
	expect_invalid("{\"version\":1,\"cwd\":\"\\\\u0000\"}", "cwd: must be an absolute path");
	expect_invalid("{\"version\":1,\"cwd\":\"\\\\\\\\u0000\"}",
		       "cwd: must be an absolute path");
	/* Other escapes of low code points are fine. */
	expect_invalid("{\"version\":1,\"cwd\":\"\\u0001\"}", "cwd: must be an absolute path");
}

static char *nested(int depth)
{
	/* {"version":1,"x": + depth-1 '[' + depth-1 ']' + } */
	size_t n = (size_t)depth * 2 + 32;
	char *s = malloc(n), *o = s;

	cr_assert(s);
	o += sprintf(o, "{\"version\":1,\"x\":");
	for (int i = 1; i < depth; i++)
		*o++ = '[';
	for (int i = 1; i < depth; i++)
		*o++ = ']';
	strcpy(o, "}");
	return s;
}

Test(policy, nesting_depth)
{
	char *ok = nested(POLICY_MAX_DEPTH), *deep = nested(POLICY_MAX_DEPTH + 1);
	char *very = nested(5000);

	/* At the limit the nesting passes and the unknown key is reported. */
	expect_invalid(ok, "(root): unknown key \"x\"");
	expect_invalid(deep, "line 1, column 33: nesting deeper than 16");
	expect_invalid(very, "nesting deeper than 16");
	/* Brackets inside strings do not count. */
	expect_invalid("{\"version\":1,\"hostname\":\"[[[[[[[[[[[[[[[[[[[[{{{{{{\"}",
		       "hostname: invalid hostname");
	free(ok);
	free(deep);
	free(very);
}

Test(policy, size_limit)
{
	size_t n = POLICY_MAX_BYTES + 1;
	char *buf = malloc(n);
	struct err err = {0};
	struct policy *p = NULL;

	cr_assert(buf);
	memset(buf, ' ', n);
	memcpy(buf, "{\"version\":1}", 13);
	cr_expect_eq(policy_load_buffer(buf, n, &vars, &p, &err), -E2BIG);
	cr_expect_eq(err.code, E2BIG);
	cr_expect_str_eq(err.msg, "(root): larger than 1048576 bytes");
	cr_expect_null(p);
	/* Exactly at the limit is fine. */
	cr_expect_eq(policy_load_buffer(buf, n - 1, &vars, &p, &err), 0, "%s", err.msg);
	policy_free(p);
	free(buf);
}

Test(policy, error_positions)
{
	expect_invalid("", "line 1, column 1: invalid JSON");
	expect_invalid("   \n", "invalid JSON");
	expect_invalid("{\"version\":1,\n\"cwd\": /}", "line 2, column 8: invalid JSON");
	/* Columns count characters, not bytes. */
	expect_invalid("{\"version\":1,\"cwd\":\"\xc3\xa9\xc3\xa9\" x}",
		       "line 1, column 25: invalid JSON");
	/* cJSON points at the opening quote of an unterminated string. */
	expect_invalid("{\"version\":1,\"cwd\":\"abc", "line 1, column 21: invalid JSON");
	expect_invalid("null", "(root): must be an object");
	expect_invalid("\"x\"", "(root): must be an object");
}

Test(policy, number_edge_cases)
{
	struct policy *p;

	expect_invalid("{\"version\":1,\"user\":{\"uid\":-0.5}}", "user.uid: must be an integer");
	expect_invalid("{\"version\":1,\"user\":{\"uid\":1e400}}", "user.uid: must be an integer");
	expect_invalid("{\"version\":1,\"limits\":{\"rlimits\":{\"nofile\":9007199254740992}}}",
		       "limits.rlimits.nofile: must be an integer from 0 to 9007199254740991");
	expect_invalid("{\"version\":1.5}", "version: must be an integer from 0");
	expect_invalid("{\"version\":1e20}", "version: must be an integer from 0");
	p = expect_valid("{\"version\":1,\"user\":{\"uid\":4294967294,\"gid\":-0}}");
	cr_expect_eq(p->uid, 4294967294u);
	cr_expect(p->has_gid && p->gid == 0);
	policy_free(p);
	p = expect_valid("{\"version\":1,\"limits\":{\"rlimits\":{\"nofile\":9007199254740991}}}");
	cr_expect_eq(p->rlimits[POLICY_RLIMIT_NOFILE].value, 9007199254740991ull);
	policy_free(p);
}

Test(policy, symlink_link_limits)
{
	char json[4200];
	struct policy *p;

	snprintf(json, sizeof(json),
		 "{\"version\":1,\"mounts\":[{\"type\":\"symlink\",\"target\":\"/"
		 "l\",\"link\":\"%04095d\"}]}",
		 0);
	p = expect_valid(json);
	cr_expect_eq(strlen(p->mounts[0].link), 4095);
	policy_free(p);
	snprintf(json, sizeof(json),
		 "{\"version\":1,\"mounts\":[{\"type\":\"symlink\",\"target\":\"/"
		 "l\",\"link\":\"%04096d\"}]}",
		 0);
	expect_invalid(json, "mounts[0].link: is longer than 4095 bytes");
	/* Variables are not expanded in a link. */
	p = expect_valid("{\"version\":1,\"mounts\":[{\"type\":\"symlink\",\"target\":\"/l\","
			 "\"link\":\"${NOPE}/../x\"}]}");
	cr_expect_str_eq(p->mounts[0].link, "${NOPE}/../x");
	policy_free(p);
}

Test(policy, quoted_values_stay_one_line)
{
	expect_invalid("{\"version\":1,\"hostname\":\"a\\nb\\\"c\\u00e9\"}",
		       "hostname: invalid hostname \"a\\x0ab\\\"c\\xc3\\xa9\"");
	expect_invalid("{\"version\":1,\"a\\tb\":1}", "(root): unknown key \"a\\x09b\"");
}

/* ---- mount order, cross-checked against a pairwise scan ---- */

static bool is_under(const char *anc, const char *p)
{
	size_t n = strlen(anc);

	return strncmp(p, anc, n) == 0 && p[n] == '/';
}

/* What a straightforward O(n^2) reading of the rules reports first. */
static void brute_force(const char *const *t, const int *type, size_t n, char *want, size_t size)
{
	want[0] = '\0';
	for (size_t j = 1; j < n; j++) {
		for (size_t i = 0; i < j; i++) {
			if (strcmp(t[i], t[j]) == 0) {
				snprintf(want, size,
					 "mounts[%zu].target: \"%s\" is already the target of "
					 "mounts[%zu]",
					 j, t[j], i);
			} else if (is_under(t[j], t[i])) {
				snprintf(
				    want, size,
				    "mounts[%zu].target: \"%s\" would hide mounts[%zu] (\"%s\"); "
				    "list it first",
				    j, t[j], i, t[i]);
			} else if (is_under(t[i], t[j]) && (type[i] == POLICY_MOUNT_SYMLINK ||
							    type[i] == POLICY_MOUNT_PROC)) {
				snprintf(want, size,
					 "mounts[%zu].target: \"%s\" is inside mounts[%zu] "
					 "(\"%s\"), a %s; "
					 "nothing can be mounted there",
					 j, t[j], i, t[i],
					 type[i] == POLICY_MOUNT_SYMLINK ? "symlink"
									 : "proc mount");
			} else {
				continue;
			}
			return;
		}
	}
}

static void brute_protect(const char *const *t, const int *type, size_t n, const char *const *prot,
			  size_t np, char *want, size_t size)
{
	for (size_t k = 0; k < np; k++) {
		bool in = false;

		for (size_t i = 0; i < n && !in; i++)
			in = type[i] == POLICY_MOUNT_BIND &&
			     (strcmp(t[i], prot[k]) == 0 || is_under(t[i], prot[k]));
		if (!in) {
			snprintf(want, size, "protect[%zu]: \"%s\" is not inside a bind mount", k,
				 prot[k]);
			return;
		}
	}
}

static size_t mount_json(char *o, const char *t, int type)
{
	switch (type) {
	case POLICY_MOUNT_BIND:
		return (size_t)sprintf(o, "{\"type\":\"bind\",\"source\":\"/s\",\"target\":\"%s\"}",
				       t);
	case POLICY_MOUNT_SYMLINK:
		return (size_t)sprintf(o, "{\"type\":\"symlink\",\"target\":\"%s\",\"link\":\"x\"}",
				       t);
	default:
		return (size_t)sprintf(o, "{\"type\":\"%s\",\"target\":\"%s\"}",
				       policy_mount_type_name(type), t);
	}
}

Test(policy, mount_order_matches_pairwise_scan)
{
	static const char *const pool[] = {"/a",   "/a/b",   "/a/b/c", "/a-b",	  "/b",
					   "/a/c", "/a/b-c", "/a.b",   "/a/b/c/d"};
	static const int types[] = {POLICY_MOUNT_BIND, POLICY_MOUNT_TMPFS,   POLICY_MOUNT_PROC,
				    POLICY_MOUNT_DIR,  POLICY_MOUNT_SYMLINK, POLICY_MOUNT_DEV};
	const size_t npool = sizeof(pool) / sizeof(pool[0]);
	unsigned seed = 12345;
	size_t failures = 0, clean = 0;

	for (int iter = 0; iter < 20000; iter++) {
		const char *t[8], *prot[4];
		int type[8];
		size_t n = 1 + (size_t)rand_r(&seed) % 8, np = (size_t)rand_r(&seed) % 4, o;
		char json[2048], want[512];
		struct err err = {0};
		struct policy *p = NULL;
		int r;

		o = (size_t)sprintf(json, "{\"version\":1,\"mounts\":[");
		for (size_t i = 0; i < n; i++) {
			t[i] = pool[(size_t)rand_r(&seed) % npool];
			type[i] = types[(size_t)rand_r(&seed) % 6];
			o += (size_t)sprintf(json + o, "%s", i ? "," : "");
			o += mount_json(json + o, t[i], type[i]);
		}
		/* Distinct protect entries: duplicates have their own test. */
		o += (size_t)sprintf(json + o, "],\"protect\":[");
		for (size_t k = 0, start = (size_t)rand_r(&seed) % npool; k < np; k++) {
			prot[k] = pool[(start + k * 2) % npool];
			o += (size_t)sprintf(json + o, "%s\"%s\"", k ? "," : "", prot[k]);
		}
		sprintf(json + o, "]}");
		brute_force(t, type, n, want, sizeof(want));
		if (!want[0])
			brute_protect(t, type, n, prot, np, want, sizeof(want));
		r = load_str(json, &p, &err);
		if (want[0]) {
			cr_expect(r == -EINVAL && strcmp(err.msg, want) == 0,
				  "%s\n  got  %s\n  want %s", json, r ? err.msg : "(ok)", want);
			failures += r == -EINVAL && strcmp(err.msg, want) == 0 ? 0 : 1;
		} else {
			cr_expect_eq(r, 0, "%s: %s", json, err.msg);
			clean++;
		}
		policy_free(p);
		if (failures > 5)
			break;
	}
	/* The generator must exercise both outcomes. */
	cr_expect_gt(clean, 1000);
}

Test(policy, protect_rules)
{
	struct policy *p =
	    expect_valid("{\"version\":1,\"mounts\":[{\"type\":\"bind\",\"source\":\"/a\"},"
			 "{\"type\":\"bind\",\"source\":\"/x\",\"target\":\"/a/b/c\"}],"
			 "\"protect\":[\"/a\",\"/a/b\",\"/a/b/c/d\"]}");

	cr_expect_eq(p->n_protect, 3);
	policy_free(p);
	expect_invalid("{\"version\":1,\"mounts\":[{\"type\":\"dir\",\"target\":\"/a\"}],"
		       "\"protect\":[\"/a\"]}",
		       "protect[0]: \"/a\" is not inside a bind mount");
	expect_invalid("{\"version\":1,\"mounts\":[{\"type\":\"bind\",\"source\":\"/a/b\"}],"
		       "\"protect\":[\"/a\"]}",
		       "protect[0]: \"/a\" is not inside a bind mount");
	expect_invalid("{\"version\":1,\"mounts\":[{\"type\":\"bind\",\"source\":\"/a\"}],"
		       "\"protect\":[\"/a/x\",\"/b\",\"/c\"]}",
		       "protect[1]: \"/b\" is not inside a bind mount");
	expect_invalid("{\"version\":1,\"mounts\":[{\"type\":\"bind\",\"source\":\"/a\"}],"
		       "\"protect\":[\"/a/x\",\"/a/y\",\"/a/y\",\"/a/x\"]}",
		       "protect[2]: duplicate path \"/a/y\"");
	expect_invalid("{\"version\":1,\"protect\":[\"/\"]}", "protect[0]: must not be \"/\"");
}

/* ---- policy_amend ---- */

static char *amend(const char *json, const struct policy_additions *add, int want_r,
		   struct err *err)
{
	char *out = NULL;
	size_t len = 0;
	int r = policy_amend(json, strlen(json), add, &out, &len, err);

	cr_assert_eq(r, want_r, "%s: %d %s", json, r, err->msg);
	if (r == 0) {
		cr_assert_not_null(out);
		cr_expect_eq(strlen(out), len);
	} else {
		cr_expect_null(out);
	}
	return out;
}

Test(policy, amend_without_additions_is_a_copy)
{
	const char *json = "{ \"version\" : 1 ,\n \"cwd\": \"/\" }\n";
	struct policy_additions none = {0};
	struct err err = {0};
	char *a = amend(json, NULL, 0, &err), *b = amend(json, &none, 0, &err);
	char *c = amend("not json at all", &none, 0, &err);

	cr_expect_str_eq(a, json);
	cr_expect_str_eq(b, json);
	cr_expect_str_eq(c, "not json at all");
	free(a);
	free(b);
	free(c);
}

Test(policy, amend_binds)
{
	const struct policy_bind_arg binds[] = {
	    {"/src", true},
	    {"/data:/mnt/data", false},
	    {"/a:b:/c", true},
	};
	struct policy_additions add = {.binds = binds, .n_binds = 2};
	struct err err = {0};
	struct policy *p;
	char *out;

	out = amend("{\"version\":1,\"mounts\":[{\"type\":\"proc\",\"target\":\"/proc\"}]}", &add,
		    0, &err);
	cr_expect_str_eq(
	    out, "{\"version\":1,\"mounts\":[{\"type\":\"proc\",\"target\":\"/proc\"},"
		 "{\"type\":\"bind\",\"source\":\"/src\",\"target\":\"/src\",\"mode\":\"ro\"},"
		 "{\"type\":\"bind\",\"source\":\"/data\",\"target\":\"/mnt/data\","
		 "\"mode\":\"rw\"}]}");
	p = expect_valid(out);
	cr_assert_eq(p->n_mounts, 3);
	cr_expect(p->mounts[1].readonly && !p->mounts[2].readonly);
	cr_expect_str_eq(p->mounts[2].target, "/mnt/data");
	policy_free(p);
	free(out);
	/* No "mounts" yet: created. The first ':' splits SRC from DST. */
	add.binds = binds + 2;
	add.n_binds = 1;
	out = amend("{\"version\":1}", &add, 0, &err);
	cr_expect_str_eq(out, "{\"version\":1,\"mounts\":[{\"type\":\"bind\",\"source\":\"/a\","
			      "\"target\":\"b:/c\",\"mode\":\"ro\"}]}");
	/* Path validity is policy_load_buffer()'s job. */
	expect_invalid(out, "mounts[0].target: must be an absolute path");
	free(out);
}

Test(policy, amend_bad_bind_specs)
{
	static const char *const bad[] = {"", ":", ":/x", "/x:"};
	struct err err = {0};

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct policy_bind_arg b = {bad[i], false};
		struct policy_additions add = {.binds = &b, .n_binds = 1};
		char want[64];

		amend("{\"version\":1}", &add, -EINVAL, &err);
		snprintf(want, sizeof(want), "--bind %s: expected SRC or SRC:DST", bad[i]);
		cr_expect_str_eq(err.msg, want);
	}
}

Test(policy, amend_setenv)
{
	const char *const env[] = {"A=x", "C=y=z", "D="};
	struct policy_additions add = {.setenv = env, .n_setenv = 3};
	struct err err = {0};
	struct policy *p;
	char *out;

	out = amend("{\"version\":1,\"environment\":{\"set\":{\"A\":\"1\",\"B\":\"2\"}}}", &add, 0,
		    &err);
	p = expect_valid(out);
	cr_assert_eq(p->n_env_set, 4);
	cr_expect_str_eq(p->env_set[0], "A=x");
	cr_expect_str_eq(p->env_set[1], "B=2");
	cr_expect_str_eq(p->env_set[2], "C=y=z");
	cr_expect_str_eq(p->env_set[3], "D=");
	policy_free(p);
	free(out);
	/* Objects are created as needed. */
	out = amend("{\"version\":1}", &add, 0, &err);
	cr_expect_str_eq(
	    out,
	    "{\"version\":1,\"environment\":{\"set\":{\"A\":\"x\",\"C\":\"y=z\",\"D\":\"\"}}}");
	free(out);
	out = amend("{\"version\":1,\"environment\":{\"clear\":false}}", &add, 0, &err);
	cr_expect_str_eq(out,
			 "{\"version\":1,\"environment\":{\"clear\":false,\"set\":{\"A\":\"x\","
			 "\"C\":\"y=z\",\"D\":\"\"}}}");
	free(out);
}

Test(policy, amend_bad_setenv)
{
	static const struct {
		const char *arg, *msg;
	} t[] = {
	    {"x", "--setenv x: expected NAME=VALUE"},
	    {"=v", "--setenv =v: expected NAME=VALUE"},
	    {"", "--setenv : expected NAME=VALUE"},
	    {"1A=v", "--setenv 1A=v: invalid variable name \"1A\""},
	    {"A-B=v", "--setenv A-B=v: invalid variable name \"A-B\""},
	    {"LC_*=v", "--setenv LC_*=v: invalid variable name \"LC_*\""},
	};
	struct err err = {0};

	for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		struct policy_additions add = {.setenv = &t[i].arg, .n_setenv = 1};

		amend("{\"version\":1}", &add, -EINVAL, &err);
		cr_expect_str_eq(err.msg, t[i].msg);
	}
}

Test(policy, amend_cwd_and_protect)
{
	const char *const prot[] = {"/ws/.git", "${WORKSPACE}/.env"};
	struct policy_additions add = {.protect = prot, .n_protect = 2, .cwd = "/ws/sub"};
	struct err err = {0};
	struct policy *p;
	char *out;

	out = amend(
	    "{\"version\":1,\"cwd\":\"/\",\"mounts\":[{\"type\":\"bind\",\"source\":\"/ws\"}],"
	    "\"protect\":[\"/ws/a\"]}",
	    &add, 0, &err);
	p = expect_valid(out);
	cr_expect_str_eq(p->cwd, "/ws/sub");
	cr_assert_eq(p->n_protect, 3);
	cr_expect_str_eq(p->protect[1], "/ws/.git");
	cr_expect_str_eq(p->protect[2], "/ws/.env");
	policy_free(p);
	free(out);
	add.n_protect = 0;
	out = amend("{\"version\":1}", &add, 0, &err);
	cr_expect_str_eq(out, "{\"version\":1,\"cwd\":\"/ws/sub\"}");
	free(out);
}

Test(policy, amend_json_errors)
{
	const char *const env[] = {"A=1"};
	struct policy_additions add = {.setenv = env, .n_setenv = 1};
	struct policy_bind_arg b = {"/x", true};
	struct policy_additions addb = {.binds = &b, .n_binds = 1};
	struct err err = {0};

	amend("{\"version\":1,", &add, -EINVAL, &err);
	cr_expect_str_eq(err.msg, "line 1, column 14: invalid JSON");
	amend("[1]", &add, -EINVAL, &err);
	cr_expect_str_eq(err.msg, "(root): must be an object");
	amend("{\"environment\":[]}", &add, -EINVAL, &err);
	cr_expect_str_eq(err.msg, "environment: must be an object");
	amend("{\"environment\":{\"set\":\"A=1\"}}", &add, -EINVAL, &err);
	cr_expect_str_eq(err.msg, "environment.set: must be an object");
	amend("{\"mounts\":{}}", &addb, -EINVAL, &err);
	cr_expect_str_eq(err.msg, "mounts: must be an array");
	amend("{\"cwd\":\"\\u0000\"}", &addb, -EINVAL, &err);
	cr_expect_str_eq(err.msg, "line 1, column 9: \\u0000 is not allowed");
}

Test(policy, amend_changes_the_digest)
{
	const char *json = "{\"version\":1}";
	struct policy_additions add = {.cwd = "/"};
	struct err err = {0};
	char *out = amend(json, &add, 0, &err);
	struct policy *p = expect_valid(json), *q = expect_valid(out);

	cr_expect_str_neq(p->sha256, q->sha256);
	policy_free(p);
	policy_free(q);
	free(out);
}

/* ---- names ---- */

Test(policy, names)
{
	static const char *const ns[] = {"user", "mount", "pid", "net", "ipc", "uts", "cgroup"};

	for (unsigned i = 0; i < 7; i++)
		cr_expect_str_eq(policy_ns_name(1u << i), ns[i]);
	cr_expect_str_eq(policy_ns_name(0), "unknown");
	cr_expect_str_eq(policy_ns_name(POLICY_NS_USER | POLICY_NS_PID), "unknown");
	cr_expect_str_eq(policy_mount_type_name(POLICY_MOUNT_BIND), "bind");
	cr_expect_str_eq(policy_mount_type_name(POLICY_MOUNT_SYMLINK), "symlink");
	cr_expect_str_eq(policy_mount_type_name((enum policy_mount_type)99), "unknown");
	cr_expect_str_eq(policy_rlimit_name(POLICY_RLIMIT_NOFILE), "nofile");
	cr_expect_str_eq(policy_rlimit_name(POLICY_RLIMIT_CORE), "core");
	cr_expect_str_eq(policy_rlimit_name(POLICY_RLIMIT_COUNT), "unknown");
}

Test(policy, free_null)
{
	policy_free(NULL);
}

Test(policy, empty_input_and_no_vars)
{
	struct err err = {0};
	struct policy *p = NULL;

	cr_expect_eq(policy_load_buffer(NULL, 0, &vars, &p, &err), -EINVAL);
	cr_expect_str_eq(err.msg, "line 1, column 1: invalid JSON");
	/* vars may be NULL when no variable is used. */
	cr_expect_eq(policy_load_buffer("{\"version\":1}", 13, NULL, &p, &err), 0, "%s", err.msg);
	policy_free(p);
}

/* ---- ports ---- */

Test(policy, ports_are_parsed_in_order)
{
	struct policy *p = expect_valid("{\"version\": 1, \"ports\": ["
					"{\"host\": \"127.0.0.1:8080\", \"sandbox\": 80},"
					"{\"sandbox\": 3000, \"host\": \"[::1]:auto\"},"
					"{\"host\": \"127.0.0.1:auto\", \"sandbox\": 65535}]}");

	cr_assert_eq(p->n_ports, 3);
	cr_expect_str_eq(p->ports[0].host_addr, "127.0.0.1");
	cr_expect_eq(p->ports[0].host_port, 8080);
	cr_expect_eq(p->ports[0].sandbox_port, 80);
	cr_expect_str_eq(p->ports[1].host_addr, "::1");
	cr_expect_eq(p->ports[1].host_port, 0);
	cr_expect_eq(p->ports[1].sandbox_port, 3000);
	cr_expect_eq(p->ports[1].index, 1);
	cr_expect_eq(p->ports[2].host_port, 0);
	cr_expect_eq(p->ports[2].sandbox_port, 65535);
	policy_free(p);
	p = expect_valid("{\"version\": 1, \"ports\": []}");
	cr_expect_eq(p->n_ports, 0);
	policy_free(p);
	/* The same address and port: refused; auto twice, or the same port
	 * on both loopbacks: fine. */
	p = expect_valid("{\"version\": 1, \"ports\": ["
			 "{\"host\": \"127.0.0.1:auto\", \"sandbox\": 80},"
			 "{\"host\": \"127.0.0.1:auto\", \"sandbox\": 80},"
			 "{\"host\": \"127.0.0.1:80\", \"sandbox\": 80},"
			 "{\"host\": \"[::1]:80\", \"sandbox\": 80}]}");
	cr_expect_eq(p->n_ports, 4);
	policy_free(p);
}

Test(policy, ports_errors)
{
	expect_invalid(
	    "{\"version\": 1, \"ports\": [{\"host\": \"127.0.0.2:80\", \"sandbox\": 80}]}",
	    "ports[0].host: only 127.0.0.1, localhost or [::1] (loopback) may be published");
	expect_invalid("{\"version\": 1, \"ports\": [{\"host\": \"[::2]:80\", \"sandbox\": 80}]}",
		       "ports[0].host: only 127.0.0.1, localhost or [::1]");
	expect_invalid("{\"version\": 1, \"ports\": [{\"host\": 8080, \"sandbox\": 80}]}",
		       "ports[0].host: must be a string");
	expect_invalid("{\"version\": 1, \"ports\": [{\"host\": \"127.0.0.1:80\", \"sandbox\": "
		       "\"80\"}]}",
		       "ports[0].sandbox: must be an integer from 1 to 65535");
	expect_invalid("{\"version\": 1, \"ports\": [{\"host\": \"127.0.0.1:80\", \"sandbox\": "
		       "65536}]}",
		       "ports[0].sandbox: must be an integer from 1 to 65535");
	expect_invalid("{\"version\": 1, \"ports\": [{\"host\": \"127.0.0.1:80\", \"sandbox\": "
		       "8.5}]}",
		       "ports[0].sandbox: must be an integer from 1 to 65535");
	expect_invalid("{\"version\": 1, \"ports\": [{\"sandbox\": 80}]}",
		       "ports[0]: missing key \"host\"");
	expect_invalid("{\"version\": 1, \"ports\": [\"127.0.0.1:80:80\"]}",
		       "ports[0]: must be an object");
	expect_invalid("{\"version\": 1, \"ports\": [{\"host\": \"127.0.0.1:80\", \"host\": "
		       "\"127.0.0.1:81\", \"sandbox\": 80}]}",
		       "ports[0]: duplicate key \"host\"");
	expect_invalid("{\"version\": 1, \"ports\": [{\"host\": \"[::1]:80\", \"sandbox\": 80}, "
		       "{\"host\": \"[::1]:80\", \"sandbox\": 81}]}",
		       "ports[1].host: [::1]:80 is already published by ports[0]");
}

Test(policy, port_host_parse)
{
	static const struct {
		const char *s;
		const char *addr; /* NULL: invalid */
		uint16_t port;
		const char *why;
	} cases[] = {
	    {"127.0.0.1:1", "127.0.0.1", 1, NULL},
	    {"127.0.0.1:65535", "127.0.0.1", 65535, NULL},
	    {"127.0.0.1:auto", "127.0.0.1", 0, NULL},
	    {"[::1]:8080", "::1", 8080, NULL},
	    {"[::1]:auto", "::1", 0, NULL},
	    {"127.0.0.1:0", NULL, 0, "1 to 65535"},
	    {"127.0.0.1:65536", NULL, 0, "1 to 65535"},
	    {"127.0.0.1:080080", NULL, 0, "1 to 65535"},
	    {"127.0.0.1:-1", NULL, 0, "1 to 65535"},
	    {"127.0.0.1: 80", NULL, 0, "1 to 65535"},
	    {"127.0.0.1:", NULL, 0, "1 to 65535"},
	    {"127.0.0.1:AUTO", NULL, 0, "1 to 65535"},
	    {"0.0.0.0:80", NULL, 0, "loopback"},
	    {"127.1:80", NULL, 0, "loopback"},
	    {"127.0.0.10:80", NULL, 0, "loopback"},
	    {"localhost:80", "127.0.0.1", 80, NULL},
	    {"LocalHost:auto", "127.0.0.1", 0, NULL},
	    {"localhost.:80", NULL, 0, "loopback"},
	    {"localhostx:80", NULL, 0, "loopback"},
	    {"ip6-localhost:80", NULL, 0, "loopback"},
	    {"[::]:80", NULL, 0, "loopback"},
	    {"[0:0:0:0:0:0:0:1]:80", NULL, 0, "loopback"},
	    {"[::1]80", NULL, 0, "expected"},
	    {"[::1:80", NULL, 0, "expected"},
	    {"::1:80", NULL, 0, "expected"},
	    {"8080", NULL, 0, "expected"},
	    {":8080", NULL, 0, "expected"},
	    {"", NULL, 0, "expected"},
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const char *addr = NULL, *why = NULL;
		uint16_t port = 1234;
		int r = policy_port_host_parse(cases[i].s, &addr, &port, &why);

		if (cases[i].addr) {
			cr_expect_eq(r, 0, "%s: %d", cases[i].s, r);
			cr_expect_str_eq(addr, cases[i].addr, "%s", cases[i].s);
			cr_expect_eq(port, cases[i].port, "%s: %u", cases[i].s, port);
		} else {
			cr_expect_eq(r, -EINVAL, "%s: %d", cases[i].s, r);
			cr_expect(why && strstr(why, cases[i].why), "%s: %s", cases[i].s,
				  why ? why : "(null)");
		}
	}
}

Test(policy, port_host_format)
{
	char buf[64];

	policy_port_host_format(buf, sizeof(buf), "127.0.0.1", 8080);
	cr_expect_str_eq(buf, "127.0.0.1:8080");
	policy_port_host_format(buf, sizeof(buf), "::1", 65535);
	cr_expect_str_eq(buf, "[::1]:65535");
	policy_port_host_format(buf, sizeof(buf), "::1", 0);
	cr_expect_str_eq(buf, "[::1]:auto");
	policy_port_host_format(buf, sizeof(buf), "127.0.0.1", 0);
	cr_expect_str_eq(buf, "127.0.0.1:auto");
}

Test(policy, amend_ports)
{
	const char *specs[] = {"127.0.0.1:auto:8080", "[::1]:9000:80"};
	struct policy_additions add = {.ports = specs, .n_ports = 2};
	struct err err = {0};
	char *out = amend("{\"version\": 1, \"ports\": [{\"host\": \"127.0.0.1:1\", \"sandbox\": "
			  "1}]}",
			  &add, 0, &err);
	struct policy *p = expect_valid(out);

	cr_assert_eq(p->n_ports, 3);
	cr_expect_str_eq(p->ports[1].host_addr, "127.0.0.1");
	cr_expect_eq(p->ports[1].host_port, 0);
	cr_expect_eq(p->ports[1].sandbox_port, 8080);
	cr_expect_str_eq(p->ports[2].host_addr, "::1");
	cr_expect_eq(p->ports[2].host_port, 9000);
	cr_expect_eq(p->ports[2].sandbox_port, 80);
	cr_expect_eq(p->ports[2].index, 2);
	policy_free(p);
	free(out);
}

Test(policy, amend_bad_ports)
{
	static const char *const bad[][2] = {
	    {"8080", "--port 8080: expected HOST:PORT:SANDBOXPORT"},
	    {"127.0.0.1:8080", "--port 127.0.0.1:8080: expected HOST:PORT:SANDBOXPORT"},
	    {"127.0.0.1:8080:", "expected HOST:PORT:SANDBOXPORT"},
	    {":80", "expected HOST:PORT:SANDBOXPORT"},
	    {"", "expected HOST:PORT:SANDBOXPORT"},
	    {"0.0.0.0:80:80",
	     "--port 0.0.0.0:80:80: only 127.0.0.1, localhost or [::1] (loopback)"},
	    {"[::1]:0:80", "the port must be 1 to 65535"},
	    {"127.0.0.1:80:0", "--port 127.0.0.1:80:0: the sandbox port must be 1 to 65535"},
	    {"127.0.0.1:80:65536", "the sandbox port must be 1 to 65535"},
	    {"127.0.0.1:80:-1", "the sandbox port must be 1 to 65535"},
	    {"127.0.0.1:80:8x", "the sandbox port must be 1 to 65535"},
	    {"127.0.0.1:80: 8", "the sandbox port must be 1 to 65535"},
	    {"127.0.0.1:80:99999999999999999999", "the sandbox port must be 1 to 65535"},
	};

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		const char *specs[] = {bad[i][0]};
		struct policy_additions add = {.ports = specs, .n_ports = 1};
		struct err err = {0};

		amend("{\"version\": 1}", &add, -EINVAL, &err);
		cr_expect(strstr(err.msg, bad[i][1]), "%s:\n  got  %s\n  want %s", bad[i][0],
			  err.msg, bad[i][1]);
	}
}

/* ---- services ---- */

Test(policy, services_fixture_parsed)
{
	static const char *const web[] = {"/usr/bin/python3", "-m", "http.server", "8080", NULL};
	struct err err = {0};
	struct policy *p = NULL;
	size_t len;
	char *buf = slurp("tests/data/valid/services.json", &len);
	int r = policy_load_buffer(buf, len, &vars, &p, &err);

	free(buf);
	cr_assert_eq(r, 0, "%s", err.msg);
	cr_assert_eq(p->n_services, 4);
	cr_expect_str_eq(p->services[0].name, "web");
	cr_expect_eq(p->services[0].argc, 4);
	for (size_t i = 0; i < 5; i++)
		if (web[i])
			cr_expect_str_eq(p->services[0].argv[i], web[i], "argv[%zu]", i);
		else
			cr_expect_null(p->services[0].argv[i], "argv not NULL-terminated");
	cr_expect_eq(p->services[0].lease_ms, 5 * 60 * 1000);
	cr_expect_str_eq(p->services[1].name, "db.1_x-y");
	cr_expect_eq(p->services[1].argc, 1);
	cr_expect_str_eq(p->services[1].argv[0], "redis-server");
	cr_expect_null(p->services[1].argv[1]);
	cr_expect_eq(p->services[1].lease_ms, 0, "no lease: ends with the main command");
	cr_expect_str_eq(p->services[2].name, "long");
	cr_expect_eq(p->services[2].lease_ms, p->ttl_ms, "a lease as long as the TTL is fine");
	cr_expect_eq(p->services[3].lease_ms, 500);
	for (size_t i = 0; i < 4; i++)
		cr_expect_eq(p->services[i].index, i);
	policy_free(p);
}

/* Without services the policy has none; a lease needs no TTL; 16 is the
 * most. */
Test(policy, services_edges)
{
	struct err err = {0};
	struct policy *p = NULL;
	char json[4096];

	cr_assert_eq(load_str("{\"version\":1}", &p, &err), 0, "%s", err.msg);
	cr_expect_eq(p->n_services, 0);
	policy_free(p);
	p = NULL;
	cr_assert_eq(
	    load_str("{\"version\":1,\"mounts\":[{\"type\":\"proc\",\"target\":\"/proc\"}],"
		     "\"services\":[{\"name\":\"a\",\"argv\":[\"x\"],\"lease\":\"720h\"}]}",
		     &p, &err),
	    0, "%s", err.msg);
	cr_expect_eq(p->services[0].lease_ms, 30ULL * 24 * 3600 * 1000);
	policy_free(p);
	p = NULL;
	/* Without a lease no /proc is needed. */
	cr_assert_eq(
	    load_str("{\"version\":1,\"services\":[{\"name\":\"a\",\"argv\":[\"x\"]}]}", &p, &err),
	    0, "%s", err.msg);
	policy_free(p);
	p = NULL;
	strcpy(json, "{\"version\":1,\"services\":[");
	for (int i = 0; i < 16; i++)
		snprintf(json + strlen(json), sizeof(json) - strlen(json),
			 "%s{\"name\":\"s%d\",\"argv\":[\"x\"]}", i ? "," : "", i);
	strcat(json, "]}");
	cr_assert_eq(load_str(json, &p, &err), 0, "16 services: %s", err.msg);
	cr_expect_eq(p->n_services, 16);
	policy_free(p);
}

/* Every services-*.json refusal is in the fixture table, which the
 * directory test walks; checked here by name so none is lost. */
Test(policy, services_refusals_are_fixtures)
{
	static const char *const names[] = {
	    "argv-empty",    "argv-missing",   "argv-not-string", "argv0-empty", "lease-bad",
	    "lease-no-proc", "lease-over-ttl", "lease-zero",	  "name-bad",	 "name-dup",
	    "not-array",     "too-many",       "unknown-key",
	};

	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		char path[256];

		snprintf(path, sizeof(path), "tests/data/invalid/services-%s.json", names[i]);
		cr_assert_eq(access(path, R_OK), 0, "%s is missing", path);
		check_invalid(path);
	}
}

/* An optional bind whose source names an unset variable is dropped; the
 * mounts after it keep the indices they have in the file, in every
 * message. One that is not optional is an error. */
Test(policy, optional_bind_with_an_unset_variable_is_dropped)
{
	const char *json =
	    "{\"version\":1,\"mounts\":["
	    "{\"type\":\"bind\",\"source\":\"${HOME}/.gitconfig\",\"target\":\"/h/.gitconfig\","
	    "\"optional\":true},"
	    "{\"type\":\"tmpfs\",\"target\":\"/a/b\"},{\"type\":\"tmpfs\",\"target\":\"/a\"}]}";
	const char *ok = "{\"version\":1,\"mounts\":["
			 "{\"type\":\"bind\",\"source\":\"${HOME}/x\",\"optional\":true},"
			 "{\"type\":\"tmpfs\",\"target\":\"/t\"}]}";
	const char *strict = "{\"version\":1,\"mounts\":["
			     "{\"type\":\"bind\",\"source\":\"${HOME}/x\",\"target\":\"/x\"}]}";
	struct policy_vars none = {.workspace = "/w", .pwd = "/"};
	struct err err = {0};
	struct policy *p = NULL;

	cr_expect_eq(policy_load_buffer(json, strlen(json), &none, &p, &err), -EINVAL);
	cr_expect_str_eq(err.msg, "mounts[2].target: \"/a\" would hide mounts[1] (\"/a/b\"); list "
				  "it first");
	cr_assert_eq(policy_load_buffer(ok, strlen(ok), &none, &p, &err), 0, "%s", err.msg);
	cr_expect_eq(p->n_mounts, 1);
	cr_expect_str_eq(p->mounts[0].target, "/t");
	cr_expect_eq(p->mounts[0].index, 1);
	policy_free(p);
	p = NULL;
	cr_expect_eq(policy_load_buffer(strict, strlen(strict), &none, &p, &err), -EINVAL);
	cr_expect_str_eq(err.msg, "mounts[0].source: ${HOME} is not set");
}

/* "extends": bases from an in-memory table standing for the files. */
static const char *const ext_files[][2] = {
    {"base",
     "{\"version\":1,\"hostname\":\"b\",\"mounts\":[{\"type\":\"proc\",\"target\":\"/proc\"}],"
     "\"environment\":{\"keep\":[\"TERM\"],\"set\":{\"A\":\"1\",\"B\":\"2\"}},"
     "\"limits\":{\"ttl\":\"1h\",\"rlimits\":{\"nproc\":10}},\"network\":\"none\","
     "\"protect\":[\"/w/.git\"]}"},
    {"mid", "{\"version\":1,\"extends\":\"base\",\"hostname\":\"m\"}"},
    {"loop1", "{\"version\":1,\"extends\":\"loop2\"}"},
    {"loop2", "{\"version\":1,\"extends\":\"loop1\"}"},
    {"v2", "{\"version\":2}"},
    {"notjson", "{\"version\":"},
    {"array", "[1]"},
};

static int ext_fetch(void *arg, const char *name, const char *from, char **text, size_t *len,
		     char *label, size_t size, struct err *err)
{
	(void)arg;
	(void)from;
	for (size_t i = 0; i < sizeof(ext_files) / sizeof(ext_files[0]); i++)
		if (strcmp(ext_files[i][0], name) == 0) {
			*text = strdup(ext_files[i][1]);
			*len = strlen(*text);
			snprintf(label, size, "%s.json", name);
			return 0;
		}
	return err_set(err, ENOENT, "no base %s", name);
}

static char *ext_resolve(const char *text, int want_rc, const char *want_msg)
{
	struct err err = {0};
	char *out = NULL;
	size_t len = 0;
	int rc = policy_extends_resolve(text, strlen(text), "top.json", ext_fetch, NULL, &out, &len,
					&err);

	cr_assert_eq(rc, want_rc, "%s: %d %s", text, rc, err.msg);
	if (want_msg)
		cr_assert(strstr(err.msg, want_msg), "%s: \"%s\" lacks \"%s\"", text, err.msg,
			  want_msg);
	return out;
}

Test(policy, extends_merges_by_the_documented_rules)
{
	const char *top = "{\"version\":1,\"extends\":\"mid\",\"mounts\":[{\"type\":\"tmpfs\","
			  "\"target\":\"/tmp\"}],\"environment\":{\"keep\":[\"LANG\"],"
			  "\"set\":{\"B\":\"3\",\"C\":\"4\"}},\"limits\":{\"rlimits\":{\"nofile\":"
			  "64}},\"network\":{\"mode\":\"none\"},\"protect\":[\"/w/.envrc\"]}";
	char *out = ext_resolve(top, 0, NULL);

	/* Scalars: the policy's; objects: key by key; adding lists: base then
	 * policy; a string form replaced by an object form whole. */
	cr_assert(strstr(out, "\"hostname\":\t\"m\""), "%s", out);
	cr_assert(strstr(out, "\"A\":\t\"1\"") && strstr(out, "\"B\":\t\"3\"") &&
		      strstr(out, "\"C\":\t\"4\""),
		  "%s", out);
	cr_assert(strstr(out, "\"ttl\":\t\"1h\"") && strstr(out, "\"nproc\":\t10") &&
		      strstr(out, "\"nofile\":\t64"),
		  "%s", out);
	cr_assert(strstr(out, "\"/proc\"") < strstr(out, "\"/tmp\""), "%s", out);
	cr_assert(strstr(out, "\"TERM\"") < strstr(out, "\"LANG\""), "%s", out);
	cr_assert(strstr(out, "\"/w/.git\"") < strstr(out, "\"/w/.envrc\""), "%s", out);
	cr_assert(strstr(out, "\"mode\":\t\"none\""), "%s", out);
	cr_assert_null(strstr(out, "extends"), "%s", out);
	free(out);
}

Test(policy, extends_without_it_is_the_text_byte_for_byte)
{
	const char *t = "{ \"version\": 1 ,\"hostname\":\"x\"}  ";
	char *out = ext_resolve(t, 0, NULL);

	cr_assert_str_eq(out, t);
	free(out);
	/* Not JSON: also as it is; the loader says what is wrong. */
	out = ext_resolve("{\"version\":", 0, NULL);
	cr_assert_str_eq(out, "{\"version\":");
	free(out);
}

Test(policy, extends_refusals)
{
	cr_assert_null(ext_resolve("{\"version\":1,\"extends\":\"loop1\"}", -ELOOP, "a cycle"));
	cr_assert_null(
	    ext_resolve("{\"version\":1,\"extends\":\"v2\"}", -EINVAL, "another policy version"));
	cr_assert_null(ext_resolve("{\"version\":1,\"extends\":\"notjson\"}", -EINVAL,
				   "notjson.json: not valid JSON"));
	cr_assert_null(
	    ext_resolve("{\"version\":1,\"extends\":\"array\"}", -EINVAL, "must be a JSON object"));
	cr_assert_null(ext_resolve("{\"version\":1,\"extends\":\"nobody\"}", -ENOENT, "no base"));
	cr_assert_null(ext_resolve("{\"version\":1,\"extends\":5}", -EINVAL,
				   "extends: must be a profile name or a file"));
	cr_assert_null(ext_resolve("{\"version\":1,\"extends\":\"\"}", -EINVAL, "extends: must"));
}

/* The per-user defaults file. */
Test(policy, user_config_parse)
{
	static const struct {
		const char *text, *msg;
	} bad[] = {
	    {"[]", "(root): must be an object"},
	    {"{\"tll\": \"1h\"}", "unknown key \"tll\""},
	    {"{\"ttl\": \"5\"}", "ttl: \"5\": invalid duration"},
	    {"{\"ttl\": 5}", "ttl: must be"},
	    {"{\"policy\": \"\"}", "policy: must not be empty"},
	    {"{\"binds\": [\"rel/dir\"]}", "a bind's source must be absolute or start with ~/"},
	    {"{\"binds\": [\"/a:rel\"]}", "expected SRC or SRC:/DST"},
	    {"{\"env\": [\"1X\"]}", "not a variable name"},
	    {"{\"env\": \"X\"}", "env: must be"},
	};
	const char *good = "{\"policy\": \"build\", \"ttl\": \"2h\", \"binds\": [\"~/a:/a\"], "
			   "\"ro_binds\": [\"/b\"], \"env\": [\"K\"]}";
	struct policy_user_config c;
	struct err err = {0};

	cr_assert_eq(policy_user_config_parse(good, strlen(good), &c, &err), 0, "%s", err.msg);
	cr_assert_str_eq(c.policy, "build");
	cr_assert(c.has_ttl && c.ttl_ms == 7200000);
	cr_assert_eq(c.n_binds, 2);
	cr_assert(!c.ro[0] && c.ro[1]);
	cr_assert_str_eq(c.binds[1], "/b");
	cr_assert_eq(c.n_env, 1);
	policy_user_config_free(&c);
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		cr_assert_lt(policy_user_config_parse(bad[i].text, strlen(bad[i].text), &c, &err),
			     0, "%s", bad[i].text);
		cr_assert(strstr(err.msg, bad[i].msg), "%s: \"%s\" lacks \"%s\"", bad[i].text,
			  err.msg, bad[i].msg);
	}
}

/* protect_git: "check" (the default) or "allowlist" (docs/security.md,
 * "The git directory as an allowlist"). */
Test(policy, protect_git)
{
	struct policy *p = expect_valid("{\"version\": 1}");

	cr_expect_eq(p->protect_git, POLICY_PROTECT_GIT_CHECK);
	policy_free(p);
	p = expect_valid("{\"version\": 1, \"protect_git\": \"allowlist\"}");
	cr_expect_eq(p->protect_git, POLICY_PROTECT_GIT_ALLOWLIST);
	policy_free(p);
	p = expect_valid("{\"version\": 1, \"protect_git\": \"check\"}");
	cr_expect_eq(p->protect_git, POLICY_PROTECT_GIT_CHECK);
	policy_free(p);
}
