/* The text of an --env-file (policy.h policy_env_file_parse()). */
#include "policy.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int append(char ***out, size_t *n, char *entry)
{
	char **grown;

	if (!entry)
		return -ENOMEM;
	grown = realloc(*out, (*n + 1) * sizeof(**out));
	if (!grown) {
		free(entry);
		return -ENOMEM;
	}
	*out = grown;
	(*out)[(*n)++] = entry;
	return 0;
}

int policy_env_file_parse(const char *text, size_t len, const char *(*lookup)(const char *name),
			  char ***out, size_t *n, size_t *line, const char **why)
{
	const char *p = text, *end = text + len;

	*line = 0;
	if (memchr(text, '\0', len)) {
		*why = "a NUL byte";
		return -EINVAL;
	}
	while (p < end) {
		const char *eol = memchr(p, '\n', (size_t)(end - p)), *eq;
		size_t name_len;
		int rc;

		if (!eol)
			eol = end;
		(*line)++;
		eq = memchr(p, '=', (size_t)(eol - p));
		name_len = eq ? (size_t)(eq - p) : (size_t)(eol - p);
		if (eol == p || *p == '#') {
			p = eol + 1;
			continue;
		}
		if (!policy_env_name_ok(p, name_len)) {
			*why = "expected NAME=VALUE or NAME (a name of A-Z a-z 0-9 _, not starting "
			       "with a digit)";
			return -EINVAL;
		}
		if (eq) {
			rc = append(out, n, strndup(p, (size_t)(eol - p)));
		} else {
			char name[256];
			const char *v;
			char *entry;

			if (name_len >= sizeof(name)) {
				*why = "name too long";
				return -EINVAL;
			}
			memcpy(name, p, name_len);
			name[name_len] = '\0';
			v = lookup ? lookup(name) : NULL;
			rc = 0;
			if (v) {
				rc = asprintf(&entry, "%s=%s", name, v) < 0 ? -ENOMEM : 0;
				if (rc == 0)
					rc = append(out, n, entry);
			}
		}
		if (rc < 0)
			return rc;
		p = eol + 1;
	}
	return 0;
}
