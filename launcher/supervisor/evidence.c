/* The supervisor's side of the evidence log (evidence/, docs/evidence.md):
 * where it lives, its key, and the events of one run. */
#include "run.h"

#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/random.h>
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

int run_evidence_open(struct run *r, struct err *err)
{
	const char *rec = r->spec->opt->record_path;
	unsigned char key[EVIDENCE_KEY_LEN];
	char kpath[PATH_MAX + 16];
	int fd, rc;

	if (!r->live.session)
		return 0;
	if (getrandom(key, sizeof(key), 0) != (ssize_t)sizeof(key))
		return err_sys(err, errno, "evidence key");
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
	rc = evidence_open(&r->live.evidence, fd, key, r->live.session->info.id, "supervisor");
	if (rc < 0) {
		close(fd);
		r->live.evidence.fd = -1;
		return err_sys(err, rc, "evidence log");
	}
	/* --weaken no-seq (HB-18): lines as a tracing system without
	 * sequence numbers writes them. */
	r->live.evidence.unsequenced = (r->spec->opt->weaken & WEAKEN_NO_SEQ) != 0;
	return 0;
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
