/* The session registry: where it is, what an entry holds, and how the
 * commands read it. The supervisor's side (creating and writing entries,
 * the control socket) is in server.c; session.json itself in codec.c and
 * the /proc identity of processes in proc.c. */
#include "session.h"

#include <cjson/cJSON.h>
#include <ctype.h>
#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../../include/cleanup.h"
#include "../../include/io.h"

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

bool session_id_valid(const char *id)
{
	if (strlen(id) != SESSION_ID_LEN)
		return false;
	for (size_t i = 0; i < SESSION_ID_LEN; i++)
		if (!strchr("0123456789abcdef", id[i]))
			return false;
	return true;
}

/* A directory of the caller's that nobody else can enter or change. */
static const char *private_dir_problem(const struct stat *st, char *buf, size_t size)
{
	if (!S_ISDIR(st->st_mode))
		return "not a directory";
	if (st->st_uid != getuid()) {
		snprintf(buf, size, "owned by uid %u, not by uid %u", (unsigned)st->st_uid,
			 (unsigned)getuid());
		return buf;
	}
	if ((st->st_mode & 07777) != 0700) {
		snprintf(buf, size, "mode %04o, not 0700", (unsigned)(st->st_mode & 07777));
		return buf;
	}
	return NULL;
}

static void registry_path(char *path, size_t size)
{
	const char *xdg = getenv("XDG_RUNTIME_DIR");
	struct stat st;
	char buf[64];

	/* The runtime directory of pam_systemd (XDG Base Directory spec):
	 * only when it really is the caller's private directory. */
	if (xdg && xdg[0] == '/' && stat(xdg, &st) == 0 &&
	    !private_dir_problem(&st, buf, sizeof(buf)) &&
	    snprintf(path, size, "%s/paddock", xdg) < (int)size)
		return;
	snprintf(path, size, "/tmp/paddock-%u", (unsigned)getuid());
}

int session_registry_open(struct registry *reg, bool create, struct err *err)
{
	char path[PATH_MAX], buf[64];
	const char *problem;
	struct stat st;
	bool made = false;
	cleanup_close int fd = -1;

	reg->fd = -1;
	registry_path(path, sizeof(path));
	if (create) {
		/* 0700 whatever the umask; a directory someone else made first
		 * (under /tmp anybody can) is refused below, never used. */
		if (mkdir(path, 0700) == 0)
			made = true;
		else if (errno != EEXIST)
			return err_sys(err, errno, "session registry %s", path);
	}
	/* O_NOFOLLOW: a symlink planted at the name is refused, not followed. */
	fd = open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0 && errno == ENOENT && !create)
		return err_set(err, ENOENT, "no session registry at %s", path);
	if (fd < 0 && (errno == ELOOP || errno == ENOTDIR))
		return err_set(err, EPERM, "session registry %s: not a directory (a symlink?)",
			       path);
	if (fd < 0)
		return err_sys(err, errno, "session registry %s", path);
	if (made && fchmod(fd, 0700) < 0)
		return err_sys(err, errno, "session registry %s: chmod", path);
	if (fstat(fd, &st) < 0)
		return err_sys(err, errno, "session registry %s", path);
	problem = private_dir_problem(&st, buf, sizeof(buf));
	if (problem)
		return err_set(err, EPERM, "session registry %s: %s; refusing to use it", path,
			       problem);
	if (!realpath(path, reg->path))
		return err_sys(err, errno, "session registry %s", path);
	reg->fd = take_fd(&fd);
	return 0;
}

void session_registry_close(struct registry *reg)
{
	if (reg->fd >= 0)
		close(reg->fd);
	reg->fd = -1;
}

/* ------------------------------------------------------------- reading */

int session_read(const struct registry *reg, const char *id, struct session_info *out,
		 struct err *err)
{
	cleanup_close int dfd = -1, fd = -1;
	cleanup_free char *buf = NULL;
	struct stat st;
	ssize_t len;
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
	fd = openat(dfd, "session.json", O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0 && errno == ENOENT)
		return err_set(err, ENOENT, "no such session: %s", id);
	if (fd < 0 || fstat(fd, &st) < 0)
		return err_sys(err, errno, "session %s", id);
	if (st.st_uid != getuid())
		return err_set(err, EPERM, "session %s belongs to uid %u", id, (unsigned)st.st_uid);
	buf = malloc(SESSION_JSON_MAX + 1);
	if (!buf)
		return err_set(err, ENOMEM, "out of memory");
	len = read_full(fd, buf, SESSION_JSON_MAX + 1);
	if (len > SESSION_JSON_MAX)
		len = -EFBIG;
	if (len < 0)
		return err_sys(err, len, "session %s: session.json", id);
	rc = session_info_parse(buf, (size_t)len, out, err);
	if (rc < 0)
		return err_wrap(err, "session %s", id);
	if (strcmp(out->id, id) != 0)
		return err_set(err, EINVAL, "session %s: session.json names %s", id, out->id);
	if (out->owner != getuid())
		return err_set(err, EPERM, "session %s belongs to uid %u", id,
			       (unsigned)out->owner);
	if (out->state != SESSION_ENDED && !proc_alive(&out->supervisor))
		out->state = SESSION_STALE;
	return 0;
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

int session_remove(const struct registry *reg, const char *id)
{
	int dfd = openat(reg->fd, id, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	struct dirent *e;
	DIR *d;

	if (dfd < 0)
		return -errno;
	d = fdopendir(dfd);
	if (!d) {
		close(dfd);
		return -ENOMEM;
	}
	/* Flat: session.json, control, stdout, stderr, a temp file. */
	while ((e = readdir(d)))
		if (strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0)
			(void)unlinkat(dirfd(d), e->d_name, 0);
	closedir(d);
	return unlinkat(reg->fd, id, AT_REMOVEDIR) < 0 ? -errno : 0;
}
