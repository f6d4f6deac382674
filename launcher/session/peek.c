/* What a client can read of the registry without the codec (codec.c,
 * cJSON): where the registry is and opening it, an id's shape, an entry's
 * session.json text, and the four fields of it that connecting to its
 * supervisor needs. Built into paddock (registry.c uses all but the last)
 * and into the static paddock-exec (client/paddock_exec.c), which has no
 * cJSON: anything that client does not accept it hands to `paddock exec`,
 * whose codec says what is wrong. */
#include "session.h"

#include <fcntl.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../../include/cleanup.h"
#include "../../include/io.h"

bool session_id_valid(const char *id)
{
	if (strlen(id) != SESSION_ID_LEN)
		return false;
	for (size_t i = 0; i < SESSION_ID_LEN; i++)
		if (!strchr("0123456789abcdef", id[i]))
			return false;
	return true;
}

const char *session_private_dir_problem(const struct stat *st, char *buf, size_t size)
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

bool session_registry_path(char *path, size_t size)
{
	const char *xdg = getenv("XDG_RUNTIME_DIR");
	struct stat st;
	char buf[64];

	/* The runtime directory of pam_systemd (XDG Base Directory spec):
	 * only when it really is the caller's private directory. */
	if (xdg && xdg[0] == '/' && stat(xdg, &st) == 0 &&
	    !session_private_dir_problem(&st, buf, sizeof(buf)) &&
	    snprintf(path, size, "%s/paddock", xdg) < (int)size)
		return false;
	snprintf(path, size, "/tmp/paddock-%u", (unsigned)getuid());
	return true;
}

/* A directory of the caller's below dirfd, made when missing (mode 0700,
 * or as it is when it exists), never through a symlink. */
static int own_subdir(int dirfd, const char *name, bool private_only, struct err *err)
{
	cleanup_close int fd = -1;
	struct stat st;
	char buf[64];

	if (mkdirat(dirfd, name, 0700) < 0 && errno != EEXIST)
		return err_sys(err, errno, "%s", name);
	fd = openat(dirfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0 || fstat(fd, &st) < 0)
		return err_sys(err, errno, "%s", name);
	if (st.st_uid != getuid() ||
	    (private_only && session_private_dir_problem(&st, buf, sizeof(buf)) &&
	     fchmod(fd, 0700) < 0))
		return err_set(err, EPERM, "%s: not yours", name);
	return take_fd(&fd);
}

/* /tmp/paddock-UID belongs to someone else (under the sticky /tmp anybody
 * may make it first, and the caller can never remove it): a private
 * directory instead, made by mkdtemp(3) (a name nobody can guess or make
 * first) and remembered by the symlink ~/.cache/paddock/registry, whose
 * target is used only while it is still the caller's 0700 directory of
 * that shape. Never a directory of another user's; -ENOENT without create
 * when there is no fallback yet. */
static int fallback(char *path, size_t size, bool create, struct err *err)
{
	const char *home = getenv("HOME");
	cleanup_close int hfd = -1, cache = -1, pd = -1;
	char target[PATH_MAX], prefix[64];
	struct passwd *pw;
	struct stat st;
	char buf[64];
	ssize_t n;

	if (!home || home[0] != '/') {
		pw = getpwuid(getuid());
		home = pw ? pw->pw_dir : NULL;
	}
	hfd = home ? open(home, O_RDONLY | O_DIRECTORY | O_CLOEXEC) : -1;
	if (hfd < 0 || fstat(hfd, &st) < 0 || st.st_uid != getuid())
		return err_set(err, EPERM,
			       "no private fallback: $HOME (%s) is not a directory of yours; set "
			       "XDG_RUNTIME_DIR to one",
			       home ? home : "unset");
	cache = own_subdir(hfd, ".cache", false, err);
	if (cache >= 0)
		pd = own_subdir(cache, "paddock", true, err);
	if (pd < 0)
		return err_wrap(err, "%s/.cache", home);
	snprintf(prefix, sizeof(prefix), "/tmp/paddock-%u.", (unsigned)getuid());
	n = readlinkat(pd, "registry", target, sizeof(target) - 1);
	if (n > 0) {
		cleanup_close int fd = -1;

		target[n] = '\0';
		fd = strncmp(target, prefix, strlen(prefix)) == 0 &&
			     !strchr(target + strlen(prefix), '/')
			 ? open(target, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)
			 : -1;
		if (fd >= 0 && fstat(fd, &st) == 0 &&
		    !session_private_dir_problem(&st, buf, sizeof(buf)))
			return snprintf(path, size, "%s", target) < (int)size ? 0 : -ENAMETOOLONG;
	}
	if (!create)
		return err_set(err, ENOENT, "no session registry");
	/* mkdtemp: mode 0700, a fresh random name, O_EXCL semantics. */
	snprintf(target, sizeof(target), "%sXXXXXX", prefix);
	if (!mkdtemp(target))
		return err_sys(err, errno, "mkdtemp %s", target);
	(void)unlinkat(pd, ".registry.new", 0);
	if (symlinkat(target, pd, ".registry.new") < 0 ||
	    renameat(pd, ".registry.new", pd, "registry") < 0)
		return err_sys(err, errno, "%s/.cache/paddock/registry", home);
	return snprintf(path, size, "%s", target) < (int)size ? 0 : -ENAMETOOLONG;
}

int session_registry_open(struct registry *reg, bool create, struct err *err)
{
	char path[PATH_MAX], squatted[PATH_MAX], buf[64];
	const char *problem;
	struct stat st;
	bool made = false;
	cleanup_close int fd = -1;
	int rc;

	reg->fd = -1;
	reg->warning[0] = '\0';
	if (session_registry_path(path, sizeof(path)) && lstat(path, &st) == 0 &&
	    st.st_uid != getuid()) {
		snprintf(squatted, sizeof(squatted), "%s", path);
		rc = fallback(path, sizeof(path), create, err);
		if (rc < 0)
			return err_wrap(err, "session registry %s belongs to uid %u", squatted,
					(unsigned)st.st_uid);
		snprintf(reg->warning, sizeof(reg->warning),
			 "session registry %s belongs to uid %u, not to you; using %s instead",
			 squatted, (unsigned)st.st_uid, path);
	}
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
	problem = session_private_dir_problem(&st, buf, sizeof(buf));
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

ssize_t session_entry_text(int dfd, const char *id, char *buf, struct err *err)
{
	cleanup_close int fd = openat(dfd, "session.json", O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	struct stat st;
	ssize_t len;

	if (fd < 0 && errno == ENOENT)
		return err_set(err, ENOENT, "no such session: %s", id);
	if (fd < 0 || fstat(fd, &st) < 0)
		return err_sys(err, errno, "session %s", id);
	if (st.st_uid != getuid())
		return err_set(err, EPERM, "session %s belongs to uid %u", id, (unsigned)st.st_uid);
	len = read_full(fd, buf, SESSION_JSON_MAX + 1);
	if (len > SESSION_JSON_MAX)
		len = -EFBIG;
	if (len < 0)
		return err_sys(err, len, "session %s: session.json", id);
	return len;
}

/* ------------------------------------------------------- session.json */

/* A cursor over the text; every step checks the end. */
struct cur {
	const char *p, *end;
};

/* Containers nested at most this deep below the top-level object. */
#define PEEK_DEPTH 16

static void ws(struct cur *c)
{
	while (c->p < c->end && (*c->p == ' ' || *c->p == '\t' || *c->p == '\r' || *c->p == '\n'))
		c->p++;
}

static bool eat(struct cur *c, char ch)
{
	ws(c);
	if (c->p >= c->end || *c->p != ch)
		return false;
	c->p++;
	return true;
}

/* A string: its bytes between the quotes (escapes left as they are) and
 * whether it had any. */
static bool string(struct cur *c, const char **s, size_t *n, bool *escaped)
{
	ws(c);
	if (c->p >= c->end || *c->p != '"')
		return false;
	*s = ++c->p;
	*escaped = false;
	while (c->p < c->end && *c->p != '"') {
		if ((unsigned char)*c->p < 0x20)
			return false;
		if (*c->p == '\\') {
			*escaped = true;
			if (++c->p >= c->end)
				return false;
		}
		c->p++;
	}
	if (c->p >= c->end)
		return false;
	*n = (size_t)(c->p - *s);
	c->p++;
	return true;
}

/* A non-negative integer, as the codec writes pids and uids. */
static bool integer(struct cur *c, long long *v)
{
	ws(c);
	*v = 0;
	if (c->p >= c->end || *c->p < '0' || *c->p > '9')
		return false;
	while (c->p < c->end && *c->p >= '0' && *c->p <= '9') {
		if (*v > (1LL << 40))
			return false;
		*v = *v * 10 + (*c->p++ - '0');
	}
	/* 12.5 or 1e3: not the codec's, not ours to round. */
	return c->p >= c->end || (*c->p != '.' && *c->p != 'e' && *c->p != 'E');
}

/* Digits, at least one. */
static bool digits(struct cur *c)
{
	const char *from = c->p;

	while (c->p < c->end && *c->p >= '0' && *c->p <= '9')
		c->p++;
	return c->p > from;
}

/* Any JSON number (RFC 8259 section 6): -?int frac? exp?. */
static bool number(struct cur *c)
{
	if (c->p < c->end && *c->p == '-')
		c->p++;
	if (!digits(c))
		return false;
	if (c->p < c->end && *c->p == '.') {
		c->p++;
		if (!digits(c))
			return false;
	}
	if (c->p < c->end && (*c->p == 'e' || *c->p == 'E')) {
		c->p++;
		if (c->p < c->end && (*c->p == '+' || *c->p == '-'))
			c->p++;
		if (!digits(c))
			return false;
	}
	return true;
}

static bool skip(struct cur *c, int depth);

/* An object or array after its opening bracket, to its close. */
static bool skip_items(struct cur *c, bool object, int depth)
{
	const char close = object ? '}' : ']';
	const char *s;
	size_t n;
	bool e;

	if (eat(c, close))
		return true;
	for (;;) {
		if (object && (!string(c, &s, &n, &e) || !eat(c, ':')))
			return false;
		if (!skip(c, depth + 1))
			return false;
		if (eat(c, close))
			return true;
		if (!eat(c, ','))
			return false;
	}
}

static bool skip(struct cur *c, int depth)
{
	static const char *const words[] = {"true", "false", "null"};
	const char *s;
	size_t n;
	bool e;

	ws(c);
	if (c->p >= c->end)
		return false;
	if (*c->p == '"')
		return string(c, &s, &n, &e);
	if (*c->p == '{' || *c->p == '[') {
		bool object = *c->p++ == '{';

		if (depth > PEEK_DEPTH)
			return false;
		return skip_items(c, object, depth);
	}
	if (*c->p == '-' || (*c->p >= '0' && *c->p <= '9'))
		return number(c);
	for (size_t i = 0; i < sizeof(words) / sizeof(words[0]); i++) {
		size_t k = strlen(words[i]);

		if ((size_t)(c->end - c->p) >= k && memcmp(c->p, words[i], k) == 0) {
			c->p += k;
			return true;
		}
	}
	return false;
}

static bool key_is(const char *s, size_t n, const char *key)
{
	return n == strlen(key) && memcmp(s, key, n) == 0;
}

/* A plain string value (no escapes) into out, at most size - 1 bytes. */
static bool plain(struct cur *c, char *out, size_t size)
{
	const char *s;
	size_t n;
	bool e;

	if (!string(c, &s, &n, &e) || e || n >= size)
		return false;
	memcpy(out, s, n);
	out[n] = '\0';
	return true;
}

/* "supervisor": {"pid": N, ...}: only its pid, once (*pid stays -1
 * until then). */
static bool supervisor(struct cur *c, long long *pid)
{
	const char *s;
	size_t n;
	bool e;

	if (!eat(c, '{'))
		return false;
	if (eat(c, '}'))
		return true;
	for (;;) {
		/* An escaped key could spell "pid" for cJSON, which decodes
		 * it: not ours to guess. */
		if (!string(c, &s, &n, &e) || e || !eat(c, ':'))
			return false;
		if (key_is(s, n, "pid") ? *pid >= 0 || !integer(c, pid) : !skip(c, 2))
			return false;
		if (eat(c, '}'))
			return true;
		if (!eat(c, ','))
			return false;
	}
}

int session_peek(const char *buf, size_t len, struct session_peek *out)
{
	static const char *const fields[] = {"id", "owner_uid", "state", "supervisor"};
	const size_t n_fields = sizeof(fields) / sizeof(fields[0]);
	struct cur c = {.p = buf, .end = buf + len};
	long long owner = -1, pid = -1;
	unsigned seen = 0;
	const char *s;
	size_t n;
	bool e;

	memset(out, 0, sizeof(*out));
	if (!eat(&c, '{'))
		return -EINVAL;
	if (!eat(&c, '}'))
		for (;;) {
			size_t k = 0;
			bool ok;

			/* As in supervisor(): no escaped key at this level. */
			if (!string(&c, &s, &n, &e) || e || !eat(&c, ':'))
				return -EINVAL;
			while (k < n_fields && !key_is(s, n, fields[k]))
				k++;
			/* Each field once: a second "state" could say what
			 * cJSON, which takes the first, would not. */
			if (k < n_fields && (seen & (1u << k)))
				return -EINVAL;
			seen |= k < n_fields ? 1u << k : 0;
			switch (k) {
			case 0:
				ok = plain(&c, out->id, sizeof(out->id));
				break;
			case 1:
				ok = integer(&c, &owner);
				break;
			case 2:
				ok = plain(&c, out->state, sizeof(out->state));
				break;
			case 3:
				ok = supervisor(&c, &pid);
				break;
			default:
				ok = skip(&c, 1);
			}
			if (!ok)
				return -EINVAL;
			if (eat(&c, '}'))
				break;
			if (!eat(&c, ','))
				return -EINVAL;
		}
	ws(&c);
	/* Only the object, and all four fields. */
	if (c.p != c.end || seen != (1u << n_fields) - 1 || owner < 0 || owner > 0xffffffffLL ||
	    pid <= 0 || pid > 0x7fffffff)
		return -EINVAL;
	out->owner = (unsigned)owner;
	out->supervisor_pid = (int)pid;
	return 0;
}
