/* The supervisor's side of the evidence log (evidence/, docs/evidence.md):
 * where it lives, its key, and the events of one run. */
#include "run.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../../include/cleanup.h"
#include "../../include/io.h"

/* The key is made here and written beside the log, 0600, in a directory
 * the sandbox cannot reach (the record's, checked by open_record(), or the
 * registry's, which it cannot see). */
static int key_file(int dirfd, const char *name, const unsigned char *key, struct err *err)
{
	cleanup_close int fd =
	    openat(dirfd, name, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0600);

	if (fd < 0 || write_full(fd, key, EVIDENCE_KEY_LEN) < 0)
		return err_sys(err, errno, "evidence key %s", name);
	return 0;
}

int run_evidence_key(struct run *r, struct err *err)
{
	unsigned char key[EVIDENCE_KEY_LEN];
	int rc;

	if (!r->live.session)
		return 0;
	if (getrandom(key, sizeof(key), 0) != (ssize_t)sizeof(key))
		return err_sys(err, errno, "evidence key");
	/* No fd yet: nothing is written until run_evidence_open() gives it
	 * one, and the first line written is seq 1 all the same. */
	rc = evidence_open(&r->live.evidence, -1, key, r->live.session->info.id, "supervisor");
	explicit_bzero(key, sizeof(key));
	if (rc < 0)
		return err_sys(err, rc, "evidence log");
	/* --weaken no-seq (HB-18): lines as a tracing system without
	 * sequence numbers writes them. */
	r->live.evidence.unsequenced = (r->spec->opt->weaken & WEAKEN_NO_SEQ) != 0;
	return 1;
}

int run_evidence_open(struct run *r, struct err *err)
{
	const char *rec = r->spec->opt->record_path;
	const unsigned char *key = r->live.evidence.key;
	char kpath[PATH_MAX + 16];
	int fd, rc;

	rc = -1;
	fd = -1;
	if (rec) {
		/* Beside the record; where that directory cannot take them (the
		 * record will then say it was not written), the session's. */
		if (snprintf(r->live.evidence_path, sizeof(r->live.evidence_path),
			     "%s.evidence.jsonl", rec) < (int)sizeof(r->live.evidence_path) &&
		    snprintf(kpath, sizeof(kpath), "%s.evidence.key", rec) < (int)sizeof(kpath) &&
		    (rc = key_file(AT_FDCWD, kpath, key, err)) >= 0)
			fd = open(r->live.evidence_path,
				  O_WRONLY | O_CREAT | O_TRUNC | O_APPEND | O_NOFOLLOW | O_CLOEXEC,
				  0600);
	}
	if (fd < 0) {
		if (snprintf(r->live.evidence_path, sizeof(r->live.evidence_path),
			     "%s/%s/evidence.jsonl", r->live.session->reg.path,
			     r->live.session->info.id) >= (int)sizeof(r->live.evidence_path))
			r->live.evidence_path[0] = '\0';
		rc = key_file(r->live.session->dirfd, "evidence.key", key, err);
		fd = rc < 0
			 ? -1
			 : openat(r->live.session->dirfd, "evidence.jsonl",
				  O_WRONLY | O_CREAT | O_TRUNC | O_APPEND | O_NOFOLLOW | O_CLOEXEC,
				  0600);
	}
	if (rc < 0)
		return rc;
	if (fd < 0)
		return err_sys(err, errno, "evidence log %s", r->live.evidence_path);
	r->live.evidence.fd = fd;
	return 0;
}

/* The key's file, synced where the log is (run.c, before a checkpoint
 * names the log): without it verify cannot check the log. Reopened by its
 * name, the log's with "key" for "jsonl" (run_evidence_open() puts them
 * side by side), so that no fd is held for it through the run. */
void run_evidence_key_sync(const struct run *r)
{
	const char *log = r->live.evidence_path;
	size_t n = strlen(log);
	char kpath[PATH_MAX];
	int fd;

	if (n < 6 || strcmp(log + n - 6, ".jsonl") != 0 || n - 6 + sizeof(".key") > sizeof(kpath))
		return;
	memcpy(kpath, log, n - 6);
	memcpy(kpath + n - 6, ".key", sizeof(".key"));
	fd = open(kpath, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	if (fd >= 0) {
		(void)fdatasync(fd);
		close(fd);
	}
}

void evidence_event(struct run *r, const char *type, const char *fmt, ...)
{
	char fields[EVIDENCE_LINE_MAX / 2];
	va_list ap;

	if (r->live.evidence.fd < 0)
		return;
	va_start(ap, fmt);
	vsnprintf(fields, sizeof(fields), fmt, ap);
	va_end(ap);
	evidence_append(&r->live.evidence, type, fields);
}

/* Is path (canonical) root or below it (canonical)? */
static bool below(const char *path, const char *root)
{
	size_t n = strlen(root);

	if (n == 1)
		return true;
	return strncmp(path, root, n) == 0 && (path[n] == '\0' || path[n] == '/');
}

/* The witness's canonical path: the path itself when it exists, else its
 * directory's (which must exist) and its name. */
static int witness_real(const char *path, char out[PATH_MAX], bool *dir, struct err *err)
{
	char parent[PATH_MAX], real[PATH_MAX];
	const char *name = strrchr(path, '/') + 1; /* absolute: validate.c */
	struct stat st;

	*dir = false;
	if (realpath(path, out)) {
		if (stat(out, &st) < 0)
			return err_sys(err, errno, "evidence.witness %s", path);
		if (!S_ISDIR(st.st_mode) && !S_ISREG(st.st_mode))
			return err_set(
			    err, EINVAL,
			    "evidence.witness %s: neither a directory nor a regular file", path);
		*dir = S_ISDIR(st.st_mode);
		return 0;
	}
	if (errno != ENOENT)
		return err_sys(err, errno, "evidence.witness %s", path);
	snprintf(parent, sizeof(parent), "%.*s", (int)(name - path - 1), path);
	if (!realpath(parent[0] ? parent : "/", real))
		return err_sys(err, errno, "evidence.witness %s: its directory", path);
	if (snprintf(out, PATH_MAX, "%s/%s", strcmp(real, "/") ? real : "", name) >= PATH_MAX)
		return err_set(err, ENAMETOOLONG, "evidence.witness %s: path too long", path);
	return 0;
}

int run_witness_check(struct run *r, const char *registry, struct err *err)
{
	const struct run_spec *spec = r->spec;
	const char *path = spec->policy->evidence_witness;
	char real[PATH_MAX], rdir[PATH_MAX], *slash;
	bool dir;
	long i;
	int rc;

	if (!path)
		return 0;
	rc = witness_real(path, real, &dir, err);
	if (rc < 0)
		return rc;
	/* What the workload can see it can read (and wait for a chance to
	 * write, through a socket or a later weakening): no bind may show
	 * it, the read-only ones included. */
	i = mounts_exposing_bind(&spec->sb.plan, real, MOUNTS_EXPOSE_BELOW);
	if (i >= 0)
		return err_set(err, EPERM,
			       "evidence.witness %s: the sandbox could reach it through the bind "
			       "%s (%s); a witness must be out of its sight",
			       path, spec->sb.plan.ops[i].source, spec->sb.plan.ops[i].what);
	if (below(real, registry) || below(registry, real))
		return err_set(err, EPERM,
			       "evidence.witness %s: in the session registry %s, the state "
			       "directory: not a second witness",
			       path, registry);
	if (spec->opt->record_path) {
		snprintf(rdir, sizeof(rdir), "%s", spec->opt->record_path);
		slash = strrchr(rdir, '/');
		if (slash)
			*slash = '\0';
		if (realpath(slash ? (rdir[0] ? rdir : "/") : ".", rdir) &&
		    (below(real, rdir) || below(rdir, real)))
			return err_set(
			    err, EPERM,
			    "evidence.witness %s: in the record's directory %s, with the "
			    "logs and their key: not a second witness",
			    path, rdir);
	}
	if (snprintf(r->live.witness_file, sizeof(r->live.witness_file), "%s%s", real,
		     dir ? "/" : "") >= (int)sizeof(r->live.witness_file))
		return err_set(err, ENAMETOOLONG, "evidence.witness %s: path too long", path);
	return 0;
}

/* A directory witness holds one file per session: SESSION.witness.json. */
void run_witness_name(struct run *r)
{
	size_t n = strlen(r->live.witness_file);

	if (n && r->live.witness_file[n - 1] == '/' && r->live.session)
		snprintf(r->live.witness_file + n, sizeof(r->live.witness_file) - n,
			 "%s.witness.json", r->live.session->info.id);
}

void run_witness_write(struct run *r)
{
	char tmp[PATH_MAX + 16];
	cleanup_free char *text = NULL;
	cleanup_close int fd = -1;
	cJSON *o, *x;

	if (!r->live.witness_file[0] || r->live.evidence.fd < 0 || !r->live.session)
		return;
	o = cJSON_CreateObject();
	cJSON_AddNumberToObject(o, "witness_version", 1);
	x = cJSON_AddObjectToObject(o, "session");
	cJSON_AddStringToObject(x, "id", r->live.session->info.id);
	if (r->spec->opt->record_path)
		cJSON_AddStringToObject(o, "record", r->spec->opt->record_path);
	else
		cJSON_AddNullToObject(o, "record");
	x = cJSON_AddObjectToObject(o, "evidence");
	cJSON_AddBoolToObject(x, "sequenced", !r->live.evidence.unsequenced);
	cJSON_AddItemToObject(x, "sources", record_evidence_sources(r));
	text = cJSON_Print(o);
	cJSON_Delete(o);
	if (!text) {
		snprintf(r->live.witness_error, sizeof(r->live.witness_error), "out of memory");
		return;
	}
	/* Beside it and renamed over it: a reader sees the old witness or
	 * the new one, never half of one. */
	snprintf(tmp, sizeof(tmp), "%s.XXXXXX", r->live.witness_file);
	fd = mkostemp(tmp, O_CLOEXEC);
	if (fd < 0 || write_full(fd, text, strlen(text)) < 0 || write_full(fd, "\n", 1) < 0 ||
	    fsync(fd) < 0 || rename(tmp, r->live.witness_file) < 0) {
		snprintf(r->live.witness_error, sizeof(r->live.witness_error), "%s: %s",
			 r->live.witness_file, strerror(errno));
		if (fd >= 0)
			unlink(tmp);
		return;
	}
	r->live.witness_written = true;
}
