/* Policies by name and by file (docs/policy.md, "Policies that compose"):
 * --policy NAME|FILE and "extends" find a policy here. A NAME (letters,
 * digits, '-', '_', '.'; no '/' and not ending in .json) is a profile,
 * looked up on the search path
 *
 *   $XDG_CONFIG_HOME/paddock/policies/NAME.json  (~/.config when unset)
 *   /etc/paddock/policies/NAME.json
 *   the built-in profiles (contrib/policies: agent, agent-net, build,
 *   minimal, embedded in the binary)
 *
 * and anything else a file, relative to the directory of the policy that
 * names it (to the current directory for --policy). */
#include "run.h"

#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../../include/cleanup.h"
#include "../../include/io.h"

extern const char paddock_default_policy[], paddock_default_policy_end[];
extern const char paddock_profile_agent_net[], paddock_profile_agent_net_end[];
extern const char paddock_profile_build[], paddock_profile_build_end[];
extern const char paddock_profile_minimal[], paddock_profile_minimal_end[];

static const struct {
	const char *name;
	const char *start, *end;
} builtins[] = {
    {"agent", paddock_default_policy, paddock_default_policy_end},
    {"agent-net", paddock_profile_agent_net, paddock_profile_agent_net_end},
    {"build", paddock_profile_build, paddock_profile_build_end},
    {"minimal", paddock_profile_minimal, paddock_profile_minimal_end},
};
#define N_BUILTINS (sizeof(builtins) / sizeof(builtins[0]))

bool profile_name_valid(const char *s)
{
	size_t n = strlen(s);

	if (!n || n > 64 || s[0] == '.' || (n > 5 && strcmp(s + n - 5, ".json") == 0))
		return false;
	for (size_t i = 0; i < n; i++)
		if (!(s[i] == '-' || s[i] == '_' || s[i] == '.' || (s[i] >= 'a' && s[i] <= 'z') ||
		      (s[i] >= 'A' && s[i] <= 'Z') || (s[i] >= '0' && s[i] <= '9')))
			return false;
	return true;
}

int profile_read_file(const char *path, char **out, size_t *len, struct err *err)
{
	cleanup_close int fd = -1;
	cleanup_free char *buf = NULL;
	struct stat st;
	ssize_t n;

	/* O_NONBLOCK: opening a FIFO for reading would otherwise wait for a
	 * writer for ever (and a device could do anything); only a regular
	 * file is read. */
	fd = open(path, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
	if (fd < 0)
		return err_sys(err, errno, "policy %s", path);
	if (fstat(fd, &st) < 0)
		return err_sys(err, errno, "policy %s", path);
	if (!S_ISREG(st.st_mode))
		return err_set(err, EINVAL, "policy %s: not a regular file", path);
	buf = malloc(POLICY_MAX_BYTES + 1);
	if (!buf)
		return err_set(err, ENOMEM, "out of memory");
	n = read_full(fd, buf, POLICY_MAX_BYTES + 1);
	if (n < 0)
		return err_sys(err, n, "policy %s", path);
	if (n > POLICY_MAX_BYTES)
		return err_set(err, E2BIG, "policy %s: larger than %u bytes", path,
			       POLICY_MAX_BYTES);
	*out = take_ptr(&buf);
	*len = (size_t)n;
	return 0;
}

static int copy_builtin(size_t i, char **out, size_t *len, struct err *err)
{
	*len = (size_t)(builtins[i].end - builtins[i].start);
	*out = malloc(*len + 1);
	if (!*out)
		return err_set(err, ENOMEM, "out of memory");
	memcpy(*out, builtins[i].start, *len);
	(*out)[*len] = '\0';
	return 0;
}

int profile_find(const char *name, char **out, size_t *len, char *label, size_t label_size,
		 struct err *err)
{
	const char *xdg = getenv("XDG_CONFIG_HOME"), *home = getenv("HOME");
	char dirs[2][PATH_MAX];
	size_t n_dirs = 0;

	if (!profile_name_valid(name))
		return err_set(err, EINVAL,
			       "policy profile %s: not a name (letters, digits, - _ .)", name);
	if (xdg && xdg[0] == '/')
		snprintf(dirs[n_dirs++], PATH_MAX, "%s/paddock/policies", xdg);
	else if (home && home[0] == '/')
		snprintf(dirs[n_dirs++], PATH_MAX, "%s/.config/paddock/policies", home);
	snprintf(dirs[n_dirs++], PATH_MAX, "/etc/paddock/policies");
	for (size_t i = 0; i < n_dirs; i++) {
		char path[2 * PATH_MAX];

		if (snprintf(path, sizeof(path), "%s/%s.json", dirs[i], name) >= PATH_MAX)
			continue;
		if (access(path, F_OK) != 0)
			continue;
		snprintf(label, label_size, "%s", path);
		return profile_read_file(path, out, len, err);
	}
	for (size_t i = 0; i < N_BUILTINS; i++)
		if (strcmp(builtins[i].name, name) == 0) {
			snprintf(label, label_size, "(built-in profile %s)", name);
			return copy_builtin(i, out, len, err);
		}
	return err_set(err, ENOENT,
		       "policy profile %s: not found (looked in %s%s/etc/paddock/policies and the "
		       "built-in agent, agent-net, build, minimal)",
		       name, n_dirs > 1 ? dirs[0] : "", n_dirs > 1 ? ", " : "");
}

void profile_list(FILE *f)
{
	for (size_t i = 0; i < N_BUILTINS; i++)
		fprintf(f, "%s (built-in)\n", builtins[i].name);
}

/* policy_fetch_fn for "extends": a profile, or a file relative to the
 * directory of the policy that names it. */
int profile_fetch(void *arg, const char *name, const char *from, char **text, size_t *len,
		  char *label, size_t label_size, struct err *err)
{
	char path[PATH_MAX];
	const char *slash;

	(void)arg;
	if (profile_name_valid(name))
		return profile_find(name, text, len, label, label_size, err);
	if (name[0] != '/') {
		/* A built-in has no directory: only names and absolute paths. */
		if (from[0] == '(')
			return err_set(err, EINVAL,
				       "%s: extends %s: a relative path from a built-in profile",
				       from, name);
		slash = strrchr(from, '/');
		if (snprintf(path, sizeof(path), "%.*s%s", slash ? (int)(slash - from + 1) : 0,
			     from, name) >= (int)sizeof(path))
			return err_set(err, ENAMETOOLONG, "%s: extends %s: path too long", from,
				       name);
	} else {
		snprintf(path, sizeof(path), "%s", name);
	}
	snprintf(label, label_size, "%s", path);
	return profile_read_file(path, text, len, err);
}
