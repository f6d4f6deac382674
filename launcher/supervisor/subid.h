/* A root caller's subordinate ids, from subuid(5) and subgid(5) (subid.c). */
#pragma once

#include <stddef.h>
#include <stdint.h>

/* The first "NAME:START:COUNT" or "UID:START:COUNT" line of text that is
 * for name or id, with COUNT > 0 and the range inside 32 bits: 0 with
 * *start and *count, or -ENOENT. Malformed lines are skipped. Pure,
 * fuzzed (tests/fuzz/fuzz_proto.c 's'). */
int subid_parse(const char *text, size_t len, const char *name, uint32_t id, uint32_t *start,
		uint32_t *count);
/* subid_parse() of the file at path, which must be a regular file root
 * owns that nobody else may write: 0 with *start, -ENOENT (no file, no
 * range, a file not to be trusted), or -errno. */
int subid_lookup(const char *path, const char *name, uint32_t id, uint32_t *start);
