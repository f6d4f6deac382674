/* A root caller's subordinate ids (subuid(5), subgid(5)): when root has a
 * range, its workload is the range's first id on the host instead of the
 * overflow id 65534 (prepare.c set_ids, docs/security.md). */
#include "subid.h"

#include <stdbool.h>

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "../../include/cleanup.h"
#include "../../include/io.h"

#define SUBID_FILE_MAX (64 * 1024)

/* One decimal number of [0, 2^32 - 2] up to the next ':' or the end of the
 * field at *p (moved past it). */
static int number(const char **p, const char *end, uint32_t *out)
{
	unsigned long long v = 0;
	const char *s = *p;

	if (s == end || *s < '0' || *s > '9')
		return -EINVAL;
	for (; s < end && *s >= '0' && *s <= '9'; s++) {
		v = v * 10 + (unsigned)(*s - '0');
		if (v > 0xfffffffeull)
			return -EINVAL;
	}
	*p = s;
	*out = (uint32_t)v;
	return 0;
}

int subid_parse(const char *text, size_t len, const char *name, uint32_t id, uint32_t *start,
		uint32_t *count)
{
	const char *p = text, *end = text + len;

	while (p < end) {
		const char *eol = memchr(p, '\n', (size_t)(end - p)), *colon;
		uint32_t who, s, c;
		bool mine;

		if (!eol)
			eol = end;
		colon = memchr(p, ':', (size_t)(eol - p));
		/* NAME or UID, then START:COUNT; anything else is skipped, as
		 * shadow's tools do. */
		if (colon && colon > p) {
			const char *q = p;

			mine = ((size_t)(colon - p) == strlen(name) &&
				memcmp(p, name, (size_t)(colon - p)) == 0) ||
			       (number(&q, colon, &who) == 0 && q == colon && who == id);
			q = colon + 1;
			if (mine && number(&q, eol, &s) == 0 && q < eol && *q++ == ':' &&
			    number(&q, eol, &c) == 0 && q == eol && c > 0 &&
			    (uint64_t)s + c <= 0xffffffffull) {
				*start = s;
				*count = c;
				return 0;
			}
		}
		p = eol + 1;
	}
	return -ENOENT;
}

int subid_lookup(const char *path, const char *name, uint32_t id, uint32_t *start)
{
	cleanup_close int fd = open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	cleanup_free char *buf = NULL;
	struct stat st;
	uint32_t count;
	ssize_t n;

	/* Only a file root owns and nobody else may write counts. */
	if (fd < 0 || fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) || st.st_uid != 0 ||
	    (st.st_mode & 022))
		return -ENOENT;
	buf = malloc(SUBID_FILE_MAX);
	if (!buf)
		return -ENOMEM;
	n = read_full(fd, buf, SUBID_FILE_MAX);
	if (n < 0)
		return (int)n;
	return subid_parse(buf, (size_t)n, name, id, start, &count);
}
