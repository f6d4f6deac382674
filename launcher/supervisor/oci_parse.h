/* supervisor/oci*.c: what the translator's files share (private to them;
 * oci.h is the public face). The helpers read one JSON value at a JSON
 * path, with the message naming it; oci_note() adds what paddock gives
 * instead of what was asked. */
#pragma once

#include <cjson/cJSON.h>
#include <stdbool.h>
#include <stddef.h>

#include "oci.h"

#define PATHLEN 192

static inline cJSON *oci_policy(struct oci_config *c)
{
	return c->policy;
}

/* Does c join a namespace of nstype (CLONE_NEW*) by path? */
static inline bool oci_joins(const struct oci_config *c, int nstype)
{
	for (size_t i = 0; i < c->n_join; i++)
		if (c->join[i].nstype == nstype)
			return true;
	return false;
}

int oci_oom(struct err *err);
__attribute__((format(printf, 2, 3))) int oci_note(struct oci_config *c, const char *fmt, ...);
const cJSON *oci_get(const cJSON *obj, const char *key);
/* A string ("${" refused: paddock would expand it), a boolean, an integer
 * in [lo, hi], an array of strings (a NULL-terminated malloc'd copy, freed
 * with oci_strv_free()). -EINVAL/-ENOMEM with err naming path. */
int oci_want_string(const cJSON *it, const char *path, const char **out, struct err *err);
int oci_want_bool(const cJSON *it, const char *path, bool *out, struct err *err);
int oci_want_int(const cJSON *it, const char *path, double lo, double hi, double *out,
		 struct err *err);
int oci_want_strings(const cJSON *arr, const char *path, bool nonempty, char ***out, size_t *n,
		     struct err *err);
void oci_strv_free(char **v);

/* The sections of config.json: oci_process.c (process), oci_mounts.c
 * (mounts, hooks), oci_linux.c (linux; *uts: a uts namespace is made). */
int oci_parse_process(struct oci_config *c, const cJSON *pr, struct err *err);
int oci_parse_mounts(struct oci_config *c, const cJSON *arr, struct err *err);
int oci_parse_hooks(struct oci_config *c, const cJSON *hooks, struct err *err);
int oci_parse_linux(struct oci_config *c, const cJSON *lx, bool *uts, struct err *err);
