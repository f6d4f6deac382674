/* The per-user defaults file (docs/usage.md, "Defaults"): PADDOCK_CONFIG,
 * else $XDG_CONFIG_HOME/paddock/config.json (~/.config when unset). Its
 * settings come before the command line's: --policy and --ttl given there
 * win, its binds go before the command line's, its env names are passed
 * like --env NAME (skipped when unset). It grants authority (binds), so
 * only a regular file of the caller's (or root's) that nobody else may
 * write is read; anything else is an error, never silently skipped. */
#include "run.h"

#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../../include/cleanup.h"
#include "../../include/io.h"
#include "../../policy/sha256.h"

#define CONFIG_MAX (64 * 1024)

static int find(char *path, size_t size)
{
	const char *explicit = getenv("PADDOCK_CONFIG"), *xdg = getenv("XDG_CONFIG_HOME"),
		   *home = getenv("HOME");

	if (explicit && explicit[0]) {
		snprintf(path, size, "%s", explicit);
		return 1; /* named: it must exist */
	}
	if (xdg && xdg[0] == '/')
		snprintf(path, size, "%s/paddock/config.json", xdg);
	else if (home && home[0] == '/')
		snprintf(path, size, "%s/.config/paddock/config.json", home);
	else
		return -1;
	return 0;
}

static int grow(void **arr, size_t n, size_t size)
{
	void *p = realloc(*arr, (n + 1) * size);

	if (!p)
		return -ENOMEM;
	*arr = p;
	return 0;
}

/* "~/x[:DST]" with HOME, as an owned "SRC[:DST]". */
static char *expand(const char *spec)
{
	const char *home = getenv("HOME");
	char *out;

	if (strncmp(spec, "~/", 2) != 0)
		return strdup(spec);
	if (!home || home[0] != '/')
		return NULL;
	return asprintf(&out, "%s%s", home, spec + 1) < 0 ? NULL : out;
}

int config_apply(struct options *o, struct err *err)
{
	struct policy_user_config c;
	cleanup_close int fd = -1;
	cleanup_free char *buf = NULL;
	struct policy_bind_arg *binds = NULL;
	unsigned char digest[SHA256_DIGEST_LEN];
	struct stat st;
	ssize_t n;
	int named, rc;

	o->config_path[0] = '\0';
	if (o->no_config)
		return 0;
	named = find(o->config_path, sizeof(o->config_path));
	if (named < 0) {
		o->config_path[0] = '\0';
		return 0;
	}
	/* A symlink is followed (dotfiles are often links): what counts is
	 * the file's owner and mode, checked below. A default path this user
	 * cannot reach (HOME another user's, as under setpriv or sudo -u) is
	 * no file of theirs: as absent. */
	fd = open(o->config_path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0 && (errno == ENOENT || errno == EACCES || errno == ENOTDIR) && !named) {
		o->config_path[0] = '\0';
		return 0;
	}
	if (fd < 0)
		return err_sys(err, errno, "defaults %s", o->config_path);
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode))
		return err_set(err, EINVAL, "defaults %s: not a regular file", o->config_path);
	if ((st.st_uid != getuid() && st.st_uid != 0) || (st.st_mode & 022))
		return err_set(err, EPERM,
			       "defaults %s: must be the caller's and writable by nobody else "
			       "(owner uid %u, mode %04o)",
			       o->config_path, (unsigned)st.st_uid, (unsigned)(st.st_mode & 07777));
	buf = malloc(CONFIG_MAX + 1);
	if (!buf)
		return err_set(err, ENOMEM, "out of memory");
	n = read_full(fd, buf, CONFIG_MAX + 1);
	if (n < 0 || n > CONFIG_MAX)
		return err_set(err, n < 0 ? (int)-n : EFBIG, "defaults %s: %s", o->config_path,
			       n < 0 ? strerror((int)-n) : "larger than 64 KiB");
	if (policy_user_config_parse(buf, (size_t)n, &c, err) < 0)
		return err_wrap(err, "defaults %s", o->config_path);
	sha256(buf, (size_t)n, digest);
	sha256_hex(digest, o->config_sha256);
	rc = 0;
	if (c.policy && !o->policy_path) {
		o->config_policy = take_ptr(&c.policy);
		o->policy_path = o->config_policy;
	}
	if (c.has_ttl && !o->has_ttl) {
		o->ttl_ms = c.ttl_ms;
		o->has_ttl = true;
	}
	/* Its binds first, then the command line's. */
	if (c.n_binds) {
		binds = calloc(c.n_binds + o->n_binds, sizeof(*binds));
		if (!binds)
			rc = err_set(err, ENOMEM, "out of memory");
		for (size_t i = 0; rc >= 0 && i < c.n_binds; i++) {
			binds[i].spec = expand(c.binds[i]);
			binds[i].readonly = c.ro[i];
			if (!binds[i].spec)
				rc = err_set(err, EINVAL, "defaults %s: %s: no HOME for ~",
					     o->config_path, c.binds[i]);
		}
		if (rc >= 0) {
			memcpy(binds + c.n_binds, o->binds, o->n_binds * sizeof(*binds));
			free(o->binds);
			o->binds = binds;
			o->n_binds += c.n_binds;
		} else if (binds) {
			for (size_t i = 0; i < c.n_binds; i++)
				free((char *)binds[i].spec);
			free(binds);
		}
	}
	/* Its env names, before the command line's (which replace them). */
	for (size_t i = 0; rc >= 0 && i < c.n_env; i++) {
		const char *v = getenv(c.env[i]);
		char *entry;

		if (!v)
			continue;
		if (asprintf(&entry, "%s=%s", c.env[i], v) < 0 ||
		    grow((void **)&o->env_pass, o->n_env_pass, sizeof(*o->env_pass)) < 0) {
			rc = err_set(err, ENOMEM, "out of memory");
			break;
		}
		memmove(o->env_pass + 1, o->env_pass, o->n_env_pass * sizeof(*o->env_pass));
		o->env_pass[0] = entry;
		o->n_env_pass++;
	}
	policy_user_config_free(&c);
	return rc;
}
