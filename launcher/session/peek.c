/* What a client can read of the registry without the codec (codec.c,
 * cJSON): where the registry is, an id's shape, and the four fields of an
 * entry's session.json that connecting to its supervisor needs. Built into
 * paddock and into the static paddock-exec (client/paddock_exec.c), which
 * has no cJSON: anything this does not accept, that client hands to
 * `paddock exec`, whose codec says what is wrong. Pure but for
 * session_registry_path()'s getenv and stat. */
#include "session.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

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

/* ------------------------------------------------------- session.json */

/* A cursor over the text; every step checks the end. */
struct cur {
	const char *p, *end;
};

/* Containers nested at most this deep below the top-level object. */
#define PEEK_DEPTH 16

static void ws(struct cur *c)
{
	while (c->p < c->end && strchr(" \t\r\n", *c->p) && *c->p)
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
	return c->p >= c->end || !strchr(".eE", *c->p) || !*c->p;
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

static bool key_is(const char *s, size_t n, bool escaped, const char *key)
{
	return !escaped && n == strlen(key) && memcmp(s, key, n) == 0;
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

/* "supervisor": {"pid": N, ...}: only its pid. */
static bool supervisor(struct cur *c, long long *pid, int *seen)
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
		if (key_is(s, n, e, "pid")) {
			if ((*seen & 1) || !integer(c, pid))
				return false;
			*seen |= 1;
		} else if (!skip(c, 2)) {
			return false;
		}
		if (eat(c, '}'))
			return true;
		if (!eat(c, ','))
			return false;
	}
}

int session_peek(const char *buf, size_t len, struct session_peek *out)
{
	struct cur c = {.p = buf, .end = buf + len};
	/* Each field once: a second "state" could say what cJSON, which
	 * takes the first, would not. */
	int seen = 0, sup = 0;
	long long owner = -1, pid = -1;
	const char *s;
	size_t n;
	bool e;

	memset(out, 0, sizeof(*out));
	if (!eat(&c, '{'))
		return -EINVAL;
	if (!eat(&c, '}'))
		for (;;) {
			bool ok;

			/* As in supervisor(): no escaped key at this level. */
			if (!string(&c, &s, &n, &e) || e || !eat(&c, ':'))
				return -EINVAL;
			if (key_is(s, n, e, "id") && !(seen & 1)) {
				ok = plain(&c, out->id, sizeof(out->id));
				seen |= 1;
			} else if (key_is(s, n, e, "owner_uid") && !(seen & 2)) {
				ok = integer(&c, &owner);
				seen |= 2;
			} else if (key_is(s, n, e, "state") && !(seen & 4)) {
				ok = plain(&c, out->state, sizeof(out->state));
				seen |= 4;
			} else if (key_is(s, n, e, "supervisor") && !(seen & 8)) {
				ok = supervisor(&c, &pid, &sup);
				seen |= 8;
			} else if (key_is(s, n, e, "id") || key_is(s, n, e, "owner_uid") ||
				   key_is(s, n, e, "state") || key_is(s, n, e, "supervisor")) {
				ok = false;
			} else {
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
	if (c.p != c.end || seen != 15 || !(sup & 1) || owner < 0 || pid <= 0 || pid > 0x7fffffff ||
	    owner > 0xffffffffLL)
		return -EINVAL;
	out->owner = (unsigned)owner;
	out->supervisor_pid = (int)pid;
	return 0;
}
