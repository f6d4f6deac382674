/* libFuzzer target for the readers of git's files (mounts/gitconf.c), which
 * the supervisor runs on files the workload could have written: the first
 * byte picks one, the rest is its input.
 *   'c' gitconf_parse() with gitconf_runs_code() on every variable
 *   'f' gitfile_parse() ("gitdir: PATH")
 *   'd' gitcommondir_parse()
 *   'n' git_name_known() on the rest as one NUL-terminated name (a
 *       directory entry's name of a git directory, after the run)
 *   'a' gitallow_check() (mounts/gitallow.c) on the rest as a relative
 *       path, the second byte the operation
 *   clang -fsanitize=fuzzer,address,undefined ... (make fuzz FUZZ=git)
 * Built with replay.c instead, make unit runs tests/data/git through it. */
#include <limits.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "../../mounts/git.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int each(const char *section, const char *sub, const char *key, const char *value, void *arg)
{
	size_t *n = arg;

	/* Every string handed out is terminated and non-empty where promised. */
	*n += strlen(section) + strlen(key) + (sub ? strlen(sub) : 0) + (value ? strlen(value) : 0);
	*n += gitconf_runs_code(section, sub, key, value);
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char out[PATH_MAX];
	size_t n = 0, len;

	if (size < 1)
		return 0;
	switch (data[0]) {
	case 'c':
		(void)gitconf_parse((const char *)data + 1, size - 1, each, &n);
		break;
	case 'f':
		if (gitfile_parse((const char *)data + 1, size - 1, out, sizeof(out)) == 0 &&
		    strlen(out) == 0)
			__builtin_trap();
		break;
	case 'd':
		if (gitcommondir_parse((const char *)data + 1, size - 1, out, sizeof(out)) == 0 &&
		    strlen(out) == 0)
			__builtin_trap();
		break;
	case 'a':
		if (size < 2)
			break;
		len = size - 2 < sizeof(out) - 1 ? size - 2 : sizeof(out) - 1;
		memcpy(out, data + 2, len);
		out[len] = '\0';
		/* Never yes to a path that climbs out, or to the config. */
		if (gitallow_check(out, (enum gitallow_op)(data[1] % 4)) != GITALLOW_NO &&
		    (strstr(out, "..") == out || strstr(out, "/../") || !strcmp(out, "config") ||
		     out[0] == '/'))
			__builtin_trap();
		break;
	case 'n':
		len = size - 1 < sizeof(out) - 1 ? size - 1 : sizeof(out) - 1;
		memcpy(out, data + 1, len);
		out[len] = '\0';
		/* A name of only letters git uses for its state is known; an
		 * empty one never is. */
		if (git_name_known(out) && out[0] == '\0')
			__builtin_trap();
		break;
	}
	return 0;
}
