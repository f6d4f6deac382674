/* Unit tests for policy_widenings() (launcher/supervisor/weaken.c): where a
 * policy is wider than the built-in agent policy. The agent policy itself
 * has none; each axis of docs/security.md, "Widenings", is found. */
#include <criterion/criterion.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../../launcher/supervisor/supervisor.h"
#include "unit.h"

TestSuite(widenings, .fini = unit_leak_check);

static char found[WIDENINGS_MAX][WIDENING_LEN];

static size_t widen(const char *json)
{
	static const struct policy_vars vars = {
	    .workspace = "/ws", .home = "/home/u", .pwd = "/ws"};
	struct policy *p = NULL;
	struct err err = {0};
	size_t n;

	cr_assert_eq(policy_load_buffer(json, strlen(json), &vars, &p, &err), 0, "%s", err.msg);
	n = policy_widenings(p, "/ws", found, WIDENINGS_MAX);
	policy_free(p);
	return n;
}

static bool has(size_t n, const char *line)
{
	for (size_t i = 0; i < n; i++)
		if (strcmp(found[i], line) == 0)
			return true;
	return false;
}

Test(widenings, the_agent_policy_has_none)
{
	char buf[16384];
	int fd = open("contrib/policies/agent.json", O_RDONLY | O_CLOEXEC);
	ssize_t len;
	size_t n;

	cr_assert_geq(fd, 0, "run from the repository root");
	len = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	cr_assert_gt(len, 0);
	buf[len] = '\0';
	n = widen(buf);
	cr_assert_eq(n, 0, "%s", n ? found[0] : "");
}

Test(widenings, seccomp_off_or_log_or_extra_calls)
{
	size_t n = widen("{\"version\":1,\"seccomp\":{\"profile\":\"none\"}}");

	cr_assert(has(n, "seccomp off"), "%zu %s", n, found[0]);
	n = widen("{\"version\":1,\"seccomp\":{\"allow\":[\"unshare\",\"mount\",\"setns\","
		  "\"keyctl\"]}}");
	cr_assert_eq(n, 4);
	cr_assert(has(n, "seccomp allows unshare") && has(n, "seccomp allows mount") &&
		  has(n, "seccomp allows setns") && has(n, "seccomp allows keyctl"));
	n = widen("{\"version\":1,\"seccomp\":{\"default_action\":\"log\"}}");
	cr_assert_eq(n, 1);
	cr_assert(strstr(found[0], "default_action log"), "%s", found[0]);
	/* Stricter is not wider. */
	cr_assert_eq(widen("{\"version\":1,\"seccomp\":{\"deny\":[{\"syscall\":\"chmod\"}]}}"), 0);
}

Test(widenings, shared_namespaces)
{
	size_t n = widen("{\"version\":1,\"namespaces\":[\"user\",\"mount\",\"pid\",\"net\","
			 "\"uts\",\"cgroup\"]}");

	cr_assert_eq(n, 1);
	cr_assert_str_eq(found[0], "namespace ipc shared with the host");
	/* user, mount, pid and net are required (the host network only
	 * through --weaken host-net, a weakening). */
	n = widen("{\"version\":1,\"namespaces\":[\"user\",\"mount\",\"pid\",\"net\"]}");
	cr_assert_eq(n, 3);
	cr_assert(has(n, "namespace cgroup shared with the host"));
}

Test(widenings, writable_binds_outside_the_workspace)
{
	size_t n = widen("{\"version\":1,\"mounts\":[{\"type\":\"bind\",\"source\":\"${HOME}\","
			 "\"mode\":\"rw\"},{\"type\":\"bind\",\"source\":\"/ws\",\"mode\":\"rw\"},"
			 "{\"type\":\"bind\",\"source\":\"/ws/sub\",\"target\":\"/s\",\"mode\":"
			 "\"rw\"},{\"type\":\"bind\",\"source\":\"/wsx\",\"mode\":\"rw\"},"
			 "{\"type\":\"bind\",\"source\":\"/etc\"}]}");

	cr_assert_eq(n, 2, "%zu: %s / %s", n, found[0], found[1]);
	cr_assert(has(n, "writable bind /home/u outside the workspace"));
	cr_assert(has(n, "writable bind /wsx outside the workspace"), "a prefix is not inside");
}
