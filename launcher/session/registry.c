/* The session registry: what an entry holds, and how the commands read it.
 * Where it is, opening it and an entry's text are in peek.c (shared with
 * the static paddock-exec); the supervisor's side (creating and writing
 * entries, the control socket) is in server.c; session.json itself in
 * codec.c and the /proc identity of processes in proc.c. */
#include "session.h"

#include <cjson/cJSON.h>
#include <ctype.h>
#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "../../include/cleanup.h"

static const char *const state_names[] = {"starting", "running", "retained", "ended", "stale"};

const char *session_state_name(enum session_state s)
{
	return s <= SESSION_STALE ? state_names[s] : "?";
}

bool session_name_valid(const char *name)
{
	size_t n = strlen(name);

	if (n == 0 || n > SESSION_NAME_MAX || strcmp(name, ".") == 0 || strcmp(name, "..") == 0)
		return false;
	for (size_t i = 0; i < n; i++)
		if (!isalnum((unsigned char)name[i]) && !strchr("_.-", name[i]))
			return false;
	return true;
}

static int empty_and_remove(const struct registry *reg, const char *name);

/* Whether an entry's directory is junk to remove: a ".new-ID" registration
 * whose supervisor died (unlocked, and older than the moment between its
 * mkdir and its flock), an ".old-ID" a removal was stopped in (nobody
 * writes into one), or an "ID" without session.json (an entry always has
 * one from its rename on; what is left of one whose removal was stopped
 * before session_remove() renamed first) that no supervisor holds. */
static bool junk(const struct registry *reg, const char *name, const struct timespec *now)
{
	enum {
		NEW,
		OLD,
		ENTRY
	} kind;
	cleanup_close int dfd = -1;
	struct stat st;

	if (strncmp(name, ".new-", 5) == 0 && session_id_valid(name + 5))
		kind = NEW;
	else if (strncmp(name, ".old-", 5) == 0 && session_id_valid(name + 5))
		kind = OLD;
	else if (session_id_valid(name))
		kind = ENTRY;
	else
		return false;
	dfd = openat(reg->fd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (dfd < 0 || fstat(dfd, &st) < 0 || st.st_uid != getuid())
		return false;
	switch (kind) {
	case OLD:
		return true;
	case NEW:
		/* A registering supervisor locks its directory right after
		 * making it; the age covers the moment in between. */
		if (now->tv_sec - st.st_ctim.tv_sec < SESSION_SWEEP_AGE)
			return false;
		break;
	case ENTRY:
		if (faccessat(dfd, "session.json", F_OK, AT_SYMLINK_NOFOLLOW) == 0 ||
		    errno != ENOENT)
			return false;
		break;
	}
	return flock(dfd, LOCK_EX | LOCK_NB) == 0;
}

void session_sweep(const struct registry *reg)
{
	int fd = fcntl(reg->fd, F_DUPFD_CLOEXEC, 3);
	struct timespec now;
	struct dirent *e;
	DIR *d;

	if (fd < 0)
		return;
	d = fdopendir(fd);
	if (!d) {
		close(fd);
		return;
	}
	rewinddir(d); /* the dup shares reg->fd's offset: a readdir before it */
	clock_gettime(CLOCK_REALTIME, &now);
	while ((e = readdir(d)))
		if (junk(reg, e->d_name, &now))
			(void)empty_and_remove(reg, e->d_name);
	closedir(d);
}

/* ------------------------------------------------------------- reading */

/* The entry's session.json, read and checked: the caller's, naming id. */
static int read_entry(int dfd, const char *id, struct session_info *out, struct err *err)
{
	cleanup_free char *buf = NULL;
	ssize_t len;
	int rc;

	buf = malloc(SESSION_JSON_MAX + 1);
	if (!buf)
		return err_set(err, ENOMEM, "out of memory");
	len = session_entry_text(dfd, id, buf, err);
	if (len < 0)
		return (int)len;
	rc = session_info_parse(buf, (size_t)len, out, err);
	if (rc < 0)
		return err_wrap(err, "session %s", id);
	if (strcmp(out->id, id) != 0)
		return err_set(err, EINVAL, "session %s: session.json names %s", id, out->id);
	if (out->owner != getuid())
		return err_set(err, EPERM, "session %s belongs to uid %u", id,
			       (unsigned)out->owner);
	return 0;
}

/* The supervisor's SESSION_FINAL_LOST name, if it left one: the session
 * ended with that status and ending, its final state unwritten. */
static bool final_lost(int dfd, struct session_info *out)
{
	struct dirent *e;
	bool found = false;
	int fd = dup(dfd);
	DIR *d;

	if (fd < 0)
		return false;
	d = fdopendir(fd);
	if (!d) {
		close(fd);
		return false;
	}
	rewinddir(d); /* the offset is dfd's too */
	while (!found && (e = readdir(d))) {
		const char *p = e->d_name;
		char *end;
		long status;

		if (strncmp(p, SESSION_FINAL_LOST, strlen(SESSION_FINAL_LOST)) != 0)
			continue;
		p += strlen(SESSION_FINAL_LOST);
		errno = 0;
		status = strtol(p, &end, 10);
		if (errno || end == p || *end != '.' || status < 0 || status > 255 ||
		    strlen(end + 1) >= sizeof(out->ended))
			continue;
		out->state = SESSION_ENDED;
		out->status = (int)status;
		snprintf(out->ended, sizeof(out->ended), "%s", end + 1);
		out->final_lost = true;
		found = true;
	}
	closedir(d);
	return found;
}

int session_read(const struct registry *reg, const char *id, struct session_info *out,
		 struct err *err)
{
	cleanup_close int dfd = -1;
	struct stat st;
	int rc;

	if (!session_id_valid(id))
		return err_set(err, ENOENT, "no such session: %s", id);
	dfd = openat(reg->fd, id, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (dfd < 0 && (errno == ENOENT || errno == ENOTDIR || errno == ELOOP))
		return err_set(err, ENOENT, "no such session: %s", id);
	if (dfd < 0 || fstat(dfd, &st) < 0)
		return err_sys(err, errno, "session %s", id);
	/* Only the supervisor, running as the owner, writes an entry. */
	if (st.st_uid != getuid())
		return err_set(err, EPERM, "session %s belongs to uid %u", id, (unsigned)st.st_uid);
	rc = read_entry(dfd, id, out, err);
	if (rc < 0 || out->state == SESSION_ENDED || proc_alive(&out->supervisor))
		return rc;
	/* The supervisor writes the final state before it exits, so it may
	 * have done both between the read and the check: read once more, now
	 * that it is gone for certain. Still not ended: it died without. */
	rc = read_entry(dfd, id, out, err);
	if (rc == 0 && out->state != SESSION_ENDED && !final_lost(dfd, out))
		out->state = SESSION_STALE;
	return rc;
}

static int by_created(const void *a, const void *b)
{
	const struct session_info *x = a, *y = b;
	int c = strcmp(x->created, y->created);

	return c ? c : strcmp(x->id, y->id);
}

int session_list(const struct registry *reg, struct session_info **out, size_t *n, struct err *err)
{
	int fd = fcntl(reg->fd, F_DUPFD_CLOEXEC, 3);
	struct session_info *v = NULL, *nv;
	DIR *d;
	struct dirent *e;
	size_t count = 0;

	*out = NULL;
	*n = 0;
	if (fd < 0)
		return err_sys(err, errno, "session registry %s", reg->path);
	d = fdopendir(fd);
	if (!d) {
		close(fd);
		return err_sys(err, errno, "session registry %s", reg->path);
	}
	rewinddir(d);
	while ((e = readdir(d))) {
		struct session_info info;

		/* Entries of other kinds (names/, half-made ".new-" ones) and
		 * entries that are unreadable or not the caller's are skipped. */
		if (!session_id_valid(e->d_name) || session_read(reg, e->d_name, &info, NULL) < 0)
			continue;
		nv = realloc(v, (count + 1) * sizeof(*v));
		if (!nv) {
			closedir(d);
			free(v);
			return err_set(err, ENOMEM, "out of memory");
		}
		v = nv;
		v[count++] = info;
	}
	closedir(d);
	if (count)
		qsort(v, count, sizeof(*v), by_created);
	*out = v;
	*n = count;
	return 0;
}

static bool live(const struct session_info *i)
{
	return i->state == SESSION_STARTING || i->state == SESSION_RUNNING ||
	       i->state == SESSION_RETAINED;
}

static bool named(const struct session_info *all, size_t n, const char *name)
{
	for (size_t i = 0; i < n; i++)
		if (strcmp(all[i].name, name) == 0)
			return true;
	return false;
}

int session_find(const struct registry *reg, const char *what, struct session_info *out,
		 struct err *err)
{
	cleanup_free struct session_info *all = NULL;
	const struct session_info *best = NULL;
	size_t n = 0;
	int rc;

	if (session_id_valid(what)) {
		rc = session_read(reg, what, out, err);
		if (rc != -ENOENT)
			return rc;
	}
	if (!session_name_valid(what))
		return err_set(err, ENOENT, "no such session: %s", what);
	rc = session_list(reg, &all, &n, err);
	if (rc < 0)
		return rc;
	/* A name first; then a unique prefix of an id (as docker's). */
	if (!named(all, n, what) && what[strspn(what, "0123456789abcdef")] == '\0') {
		for (size_t i = 0; i < n; i++) {
			if (strncmp(all[i].id, what, strlen(what)) != 0)
				continue;
			if (best)
				return err_set(
				    err, EINVAL,
				    "%s: ambiguous: the prefix of sessions %s and %s (give "
				    "more of the id)",
				    what, best->id, all[i].id);
			best = &all[i];
		}
		if (best) {
			*out = *best;
			return 0;
		}
	}
	for (size_t i = 0; i < n; i++) {
		if (strcmp(all[i].name, what) != 0)
			continue;
		if (!best || (live(&all[i]) && !live(best)) ||
		    (live(&all[i]) == live(best) && all[i].generation > best->generation))
			best = &all[i];
	}
	if (!best)
		return err_set(err, ENOENT, "no such session: %s", what);
	*out = *best;
	return 0;
}

/* The directory's files (flat: session.json, control, stdout, stderr,
 * the evidence log and its key, a temp file), then the directory. */
static int empty_and_remove(const struct registry *reg, const char *name)
{
	int dfd = openat(reg->fd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	struct dirent *e;
	DIR *d;

	if (dfd < 0)
		return -errno;
	d = fdopendir(dfd);
	if (!d) {
		close(dfd);
		return -ENOMEM;
	}
	while ((e = readdir(d)))
		if (strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0)
			(void)unlinkat(dirfd(d), e->d_name, 0);
	closedir(d);
	return unlinkat(reg->fd, name, AT_REMOVEDIR) < 0 ? -errno : 0;
}

int session_remove(const struct registry *reg, const char *id)
{
	char old[SESSION_ID_LEN + 8];
	int rc;

	/* Out of sight first, in one step: a removal stopped half way (a
	 * SIGKILL) leaves an ".old-ID" that session_sweep() finishes, never
	 * an "ID" without its session.json that nothing lists. */
	if (!session_id_valid(id))
		return empty_and_remove(reg, id);
	snprintf(old, sizeof(old), ".old-%s", id);
	if (renameat2(reg->fd, id, reg->fd, old, RENAME_NOREPLACE) < 0) {
		if (errno != EEXIST)
			return -errno;
		/* A stopped removal of the same id: it goes first. */
		(void)empty_and_remove(reg, old);
		if (renameat2(reg->fd, id, reg->fd, old, RENAME_NOREPLACE) < 0)
			return -errno;
	}
	rc = empty_and_remove(reg, old);
	return rc == -ENOENT ? 0 : rc; /* a sweep finished it first */
}
