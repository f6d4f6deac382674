/* Project policies (docs/trust.md, "Project policies"): a workspace's
 * .paddock/policy.json, or --project-policy FILE, is applied in place of
 * the caller's policy only when the caller approved those exact bytes at
 * that canonical path (paddock trust: the trust store, policy/trust.h).
 *
 * The file is opened once, without following a symlink in its last
 * component or in .paddock, read from that fd into memory, and the bytes
 * hashed are the bytes the loader parses: a file swapped after the open
 * (rename over, a new symlink, an edit) cannot change what is applied,
 * only what the next run finds. Anything else - absent, unapproved, a
 * changed digest, a symlink, a moved directory (a new canonical path), a
 * widening beyond the caller's own policy the approval does not name - is
 * the caller's policy, said on stderr and in the record. */
#include "run.h"

#include <fcntl.h>
#include <limits.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "../../include/cleanup.h"
#include "../../include/io.h"
#include "../../policy/sha256.h"

const char *project_state_name(enum project_state s)
{
	return s == PROJECT_TRUSTED ? "trusted" : s == PROJECT_UNTRUSTED ? "untrusted" : "absent";
}

/* path is root or lies below it (both canonical). */
static bool within(const char *path, const char *root)
{
	size_t n = strlen(root);

	return strncmp(path, root, n) == 0 && (path[n] == '\0' || path[n] == '/' || n == 1);
}

/* Read a regular file from fd (at most POLICY_MAX_BYTES) and hash it. */
static int read_hash(int fd, struct project_file *f, struct err *err)
{
	unsigned char digest[SHA256_DIGEST_LEN];
	struct stat st;
	ssize_t n;

	if (fstat(fd, &st) < 0)
		return err_sys(err, errno, "%s", f->path);
	if (!S_ISREG(st.st_mode))
		return err_set(err, EINVAL, "%s is not a regular file", f->path);
	f->text = malloc(POLICY_MAX_BYTES + 1);
	if (!f->text)
		return err_set(err, ENOMEM, "out of memory");
	n = read_full(fd, f->text, POLICY_MAX_BYTES + 1);
	if (n < 0)
		return err_sys(err, n, "%s", f->path);
	if (n > POLICY_MAX_BYTES)
		return err_set(err, E2BIG, "%s is larger than %u bytes", f->path, POLICY_MAX_BYTES);
	f->len = (size_t)n;
	sha256(f->text, f->len, digest);
	sha256_hex(digest, f->sha256);
	return 0;
}

int project_open(const char *given, const char *workspace, struct project_file *f, struct err *err)
{
	char dir[PATH_MAX], real[PATH_MAX];
	const char *name, *slash;
	cleanup_close int dfd = -1, fd = -1;

	memset(f, 0, sizeof(*f));
	if (!given) {
		/* .paddock itself must not be a symlink: the path approved is
		 * the workspace's own directory. */
		snprintf(f->path, sizeof(f->path), "%s/.paddock/policy.json",
			 strcmp(workspace, "/") == 0 ? "" : workspace);
		snprintf(dir, sizeof(dir), "%s/.paddock",
			 strcmp(workspace, "/") == 0 ? "" : workspace);
		dfd = open(dir, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (dfd < 0 && errno == ENOENT)
			return 0;
		if (dfd < 0 && (errno == ELOOP || errno == ENOTDIR)) {
			f->found = true;
			return err_set(err, ELOOP, "%s is a symlink or not a directory", dir);
		}
		if (dfd < 0)
			return err_sys(err, errno, "%s", dir);
		name = "policy.json";
	} else {
		slash = strrchr(given, '/');
		name = slash ? slash + 1 : given;
		snprintf(dir, sizeof(dir), "%.*s",
			 slash ? (slash == given ? 1 : (int)(slash - given)) : 1,
			 slash ? given : ".");
		if (!name[0] || strcmp(name, ".") == 0 || strcmp(name, "..") == 0)
			return err_set(err, EINVAL, "--project-policy %s: not a file name", given);
		if (!realpath(dir, real))
			return err_sys(err, errno, "--project-policy %s", given);
		if (snprintf(f->path, sizeof(f->path), "%s/%s", strcmp(real, "/") == 0 ? "" : real,
			     name) >= (int)sizeof(f->path))
			return err_set(err, ENAMETOOLONG, "--project-policy %s: too long", given);
		dfd = open(real, O_PATH | O_DIRECTORY | O_CLOEXEC);
		if (dfd < 0)
			return err_sys(err, errno, "--project-policy %s", given);
	}
	/* O_NOFOLLOW: a symlink is a relocation, never approved by its
	 * target's approval; O_NONBLOCK: a FIFO must not wait for a writer. */
	fd = openat(dfd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
	if (fd < 0 && errno == ENOENT && !given)
		return 0;
	if (fd < 0 && errno == ENOENT)
		return err_sys(err, errno, "--project-policy %s", given);
	f->found = true;
	if (fd < 0 && errno == ELOOP)
		return err_set(err, ELOOP, "%s is a symlink", f->path);
	if (fd < 0)
		return err_sys(err, errno, "%s", f->path);
	return read_hash(fd, f, err);
}

void project_file_free(struct project_file *f)
{
	free(f->text);
	f->text = NULL;
}

int trust_store_locate(char out[PATH_MAX], struct err *err)
{
	const char *xdg = getenv("XDG_CONFIG_HOME"), *home = getenv("HOME");
	struct passwd *pw;

	if (xdg && xdg[0] == '/')
		return snprintf(out, PATH_MAX, "%s/paddock/trust.json", xdg) >= PATH_MAX
			   ? err_set(err, ENAMETOOLONG, "XDG_CONFIG_HOME: too long")
			   : 0;
	if (!home || home[0] != '/') {
		pw = getpwuid(getuid());
		home = pw ? pw->pw_dir : NULL;
	}
	if (!home || home[0] != '/')
		return err_set(err, ENOENT,
			       "no home directory for the trust store: set "
			       "XDG_CONFIG_HOME");
	return snprintf(out, PATH_MAX, "%s/.config/paddock/trust.json", home) >= PATH_MAX
		   ? err_set(err, ENAMETOOLONG, "HOME: too long")
		   : 0;
}

/* The store's file: the caller's, 0600 (no group or other bit), a
 * regular file, not a symlink. Anyone else who can write it could approve
 * for the caller. ENOENT: an empty store. */
int trust_store_load(const char *path, struct trust_store *s, struct err *err)
{
	cleanup_close int fd = -1;
	cleanup_free char *buf = NULL;
	struct stat st;
	ssize_t n;
	int rc;

	memset(s, 0, sizeof(*s));
	fd = open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
	if (fd < 0 && errno == ENOENT)
		return 0;
	if (fd < 0)
		return err_sys(err, errno, "trust store %s", path);
	if (fstat(fd, &st) < 0)
		return err_sys(err, errno, "trust store %s", path);
	if (!S_ISREG(st.st_mode))
		return err_set(err, EINVAL, "trust store %s: not a regular file", path);
	if (st.st_uid != geteuid())
		return err_set(err, EPERM, "trust store %s: owned by uid %u, not by you (%u)", path,
			       (unsigned)st.st_uid, (unsigned)geteuid());
	if (st.st_mode & 077)
		return err_set(err, EPERM, "trust store %s: mode %04o, must be 0600 (chmod 600 %s)",
			       path, (unsigned)(st.st_mode & 07777), path);
	buf = malloc(TRUST_FILE_MAX + 1);
	if (!buf)
		return err_set(err, ENOMEM, "out of memory");
	n = read_full(fd, buf, TRUST_FILE_MAX + 1);
	if (n < 0)
		return err_sys(err, n, "trust store %s", path);
	rc = trust_store_parse(buf, (size_t)n, s, err);
	return rc < 0 ? err_wrap(err, "trust store %s", path) : 0;
}

/* mkdir -p of the store's directory, each made 0700. */
static int make_dirs(const char *path, struct err *err)
{
	char d[PATH_MAX];

	snprintf(d, sizeof(d), "%s", path);
	for (char *p = d + 1; *p; p++) {
		if (*p != '/')
			continue;
		*p = '\0';
		if (mkdir(d, 0700) < 0 && errno != EEXIST)
			return err_sys(err, errno, "trust store: mkdir %s", d);
		*p = '/';
	}
	return 0;
}

int trust_store_update(const char *path, int (*change)(struct trust_store *, void *), void *arg,
		       struct err *err)
{
	char dir[PATH_MAX], tmp[PATH_MAX + 16];
	cleanup_close int dfd = -1, fd = -1;
	cleanup_free char *text = NULL;
	struct trust_store s = {0};
	char *slash;
	int rc;

	rc = make_dirs(path, err);
	if (rc < 0)
		return rc;
	snprintf(dir, sizeof(dir), "%s", path);
	slash = strrchr(dir, '/');
	*slash = '\0';
	dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dfd < 0)
		return err_sys(err, errno, "trust store: %s", dir);
	/* One writer at a time: read, change and replace under the lock. */
	if (flock(dfd, LOCK_EX) < 0)
		return err_sys(err, errno, "trust store: lock %s", dir);
	rc = trust_store_load(path, &s, err);
	if (rc >= 0)
		rc = change(&s, arg);
	if (rc == 0) {
		text = trust_store_format(&s);
		rc = text ? 0 : err_set(err, ENOMEM, "out of memory");
	}
	trust_store_free(&s);
	if (rc != 0)
		return rc;
	snprintf(tmp, sizeof(tmp), "%s.XXXXXX", path);
	fd = mkostemp(tmp, O_CLOEXEC); /* 0600 */
	if (fd < 0)
		return err_sys(err, errno, "trust store: %s", tmp);
	if (write_full(fd, text, strlen(text)) < 0 || write_full(fd, "\n", 1) < 0 ||
	    fsync(fd) < 0 || rename(tmp, path) < 0) {
		rc = err_sys(err, errno, "trust store %s", path);
		unlink(tmp);
		return rc;
	}
	return 0;
}

/* Is item (a bind of the project's) given by one of the user's? */
static bool bind_covered(const struct policy *u, const struct policy_mount *m)
{
	for (size_t i = 0; i < u->n_mounts; i++) {
		const struct policy_mount *b = &u->mounts[i];

		if (b->type == POLICY_MOUNT_BIND && within(m->source, b->source) &&
		    (m->readonly || !b->readonly))
			return true;
	}
	return false;
}

static bool rule_covered(const struct policy *u, const char *host, uint16_t port)
{
	for (size_t i = 0; u->network == POLICY_NET_MEDIATED && i < u->n_net_allow; i++) {
		if (strcmp(u->net_allow[i].host, host) != 0)
			continue;
		for (size_t k = 0; k < u->net_allow[i].n_ports; k++)
			if (u->net_allow[i].ports[k] == port)
				return true;
	}
	return false;
}

static bool listed(char **v, size_t n, const char *s)
{
	for (size_t i = 0; i < n; i++)
		if (strcmp(v[i], s) == 0)
			return true;
	return false;
}

size_t project_widenings(const struct policy *u, const struct policy *p, const char *workspace,
			 char (*out)[WIDENING_LEN], size_t max)
{
	static char wu[WIDENINGS_MAX][WIDENING_LEN], wp[WIDENINGS_MAX][WIDENING_LEN];
	size_t nu = policy_widenings(u, workspace, wu, WIDENINGS_MAX);
	size_t np = policy_widenings(p, workspace, wp, WIDENINGS_MAX), n = 0;

#define WIDEN(...)                                                     \
	do {                                                           \
		if (n < max)                                           \
			snprintf(out[n++], WIDENING_LEN, __VA_ARGS__); \
	} while (0)
	for (size_t i = 0; i < np; i++) {
		bool same = false;

		for (size_t k = 0; k < nu && !same; k++)
			same = strcmp(wp[i], wu[k]) == 0;
		if (!same)
			WIDEN("%.*s", WIDENING_LEN - 1, wp[i]);
	}
	/* A writable bind outside the workspace is policy_widenings()'s. */
	for (size_t i = 0; i < p->n_mounts; i++)
		if (p->mounts[i].type == POLICY_MOUNT_BIND && !bind_covered(u, &p->mounts[i]) &&
		    (p->mounts[i].readonly || within(p->mounts[i].source, workspace)))
			WIDEN("%s bind %s", p->mounts[i].readonly ? "read-only" : "writable",
			      p->mounts[i].source);
	for (size_t i = 0; p->network == POLICY_NET_MEDIATED && i < p->n_net_allow; i++)
		for (size_t k = 0; k < p->net_allow[i].n_ports; k++)
			if (!rule_covered(u, p->net_allow[i].host, p->net_allow[i].ports[k]))
				WIDEN("network reaches %s:%u", p->net_allow[i].host,
				      p->net_allow[i].ports[k]);
	if (p->net_secrets && !(u->net_secrets && strcmp(u->net_secrets, p->net_secrets) == 0))
		WIDEN("brokers the secrets of %s", p->net_secrets);
	if (!p->env_clear && u->env_clear)
		WIDEN("keeps your whole environment (environment.clear false)");
	for (size_t i = 0; u->env_clear && p->env_clear && i < p->n_env_keep; i++)
		if (!listed(u->env_keep, u->n_env_keep, p->env_keep[i]))
			WIDEN("keeps the variable %s of your environment", p->env_keep[i]);
	for (size_t i = 0; i < u->n_protect; i++)
		if (!listed(p->protect, p->n_protect, u->protect[i]))
			WIDEN("drops the protected path %s", u->protect[i]);
	for (size_t i = 0; i < p->n_ports; i++) {
		bool same = false;

		for (size_t k = 0; k < u->n_ports && !same; k++)
			same = u->ports[k].sandbox_port == p->ports[i].sandbox_port &&
			       u->ports[k].host_port == p->ports[i].host_port;
		if (!same)
			WIDEN("forwards host port %u to the sandbox's %u", p->ports[i].host_port,
			      p->ports[i].sandbox_port);
	}
	if (p->landlock_mode < u->landlock_mode)
		WIDEN("landlock weaker than yours");
#undef WIDEN
	return n;
}

static int store_check(const struct policy *p, const char *workspace, const char *path,
		       struct err *err);

/* "extends" of a project policy: profiles by name only. A file would be
 * bytes the approval's digest does not cover. */
int project_fetch(void *arg, const char *name, const char *from, char **text, size_t *len,
		  char *label, size_t label_size, struct err *err)
{
	(void)arg;
	if (!profile_name_valid(name))
		return err_set(err, EINVAL,
			       "%s: extends %s: a project policy extends profiles by name only "
			       "(a file is not covered by its approval)",
			       from, name);
	return profile_find(name, text, len, label, label_size, err);
}

int project_check(const struct policy *user, const char *text, size_t len, const char *label,
		  const struct policy_vars *vars, const char *store, char (*out)[WIDENING_LEN],
		  size_t *n, struct err *err)
{
	cleanup_free char *merged = NULL;
	size_t merged_len = 0;
	struct policy *p = NULL;
	int rc;

	rc = policy_extends_resolve(text, len, label, project_fetch, NULL, &merged, &merged_len,
				    err);
	if (rc >= 0)
		rc = policy_load_buffer(merged, merged_len, vars, &p, err);
	if (rc < 0)
		return rc;
	/* Never an approval that lets the workload approve the next. */
	rc = store_check(p, vars->workspace, store, err);
	*n = project_widenings(user, p, vars->workspace, out, WIDENINGS_MAX);
	policy_free(p);
	return rc;
}

/* The caller's own policy, as the baseline of the widenings: its
 * "extends" resolved, no command-line additions (they are added to
 * either). */
int project_user_policy(const char *text, size_t len, const char *label,
			const struct policy_vars *vars, struct policy **out, struct err *err)
{
	cleanup_free char *merged = NULL;
	size_t merged_len = 0;
	int rc = policy_extends_resolve(text, len, label, profile_fetch, NULL, &merged, &merged_len,
					err);

	if (rc >= 0)
		rc = policy_load_buffer(merged, merged_len, vars, out, err);
	return rc < 0 ? err_wrap(err, "policy %s", label) : 0;
}

/* The store's path, for a run or an approval: not inside the workspace
 * or a writable bind of the caller's policy, where the workload could
 * write its own approval. */
/* Is the store (path, its directory maybe not made yet) inside the
 * workspace or a writable bind of p? */
static int store_check(const struct policy *p, const char *workspace, const char *path,
		       struct err *err)
{
	char dir[PATH_MAX], real[PATH_MAX];
	char *slash;

	snprintf(dir, sizeof(dir), "%s", path);
	slash = strrchr(dir, '/');
	*slash = '\0';
	/* Its directory may not exist yet: the nearest one that does. */
	while (!realpath(dir, real)) {
		if (errno != ENOENT || !(slash = strrchr(dir, '/')) || slash == dir)
			return err_sys(err, errno, "trust store %s", path);
		*slash = '\0';
	}
	if (within(real, workspace))
		return err_set(err, EPERM,
			       "the trust store %s is inside the workspace %s (set "
			       "XDG_CONFIG_HOME elsewhere)",
			       path, workspace);
	for (size_t i = 0; i < p->n_mounts; i++)
		if (p->mounts[i].type == POLICY_MOUNT_BIND && !p->mounts[i].readonly &&
		    within(real, p->mounts[i].source))
			return err_set(err, EPERM,
				       "the trust store %s is inside the writable bind %s", path,
				       p->mounts[i].source);
	return 0;
}

/* The store's path, for a run or an approval: not inside the workspace
 * or a writable bind of the caller's policy, where the workload could
 * write its own approval. */
int project_store_path(const struct policy *user, const char *workspace, char out[PATH_MAX],
		       struct err *err)
{
	int rc = trust_store_locate(out, err);

	return rc < 0 ? rc : store_check(user, workspace, out, err);
}

static int store_for_run(const struct policy *user, const char *workspace, char path[PATH_MAX],
			 struct trust_store *s, struct err *err)
{
	int rc = project_store_path(user, workspace, path, err);

	return rc < 0 ? rc : trust_store_load(path, s, err);
}

static bool approved_widening(const struct trust_entry *e, const char *w)
{
	for (size_t i = 0; i < e->n_widenings; i++)
		if (strcmp(e->widenings[i], w) == 0)
			return true;
	return false;
}

/* Trusted or not, with the reason (pp->reason) when not. */
static int decide(struct run_spec *r, const struct policy_vars *vars, struct project_file *f,
		  const char *user_text, size_t user_len, struct err *err)
{
	struct project_policy *pp = &r->project;
	static char w[WIDENINGS_MAX][WIDENING_LEN];
	struct trust_store s = {0};
	const struct trust_entry *e;
	struct policy *user = NULL;
	struct err why = {0};
	char store[PATH_MAX];
	size_t n = 0;
	int rc;

	rc = project_user_policy(user_text, user_len, r->policy_label, vars, &user, err);
	if (rc < 0)
		return rc;
	if (store_for_run(user, vars->workspace, store, &s, &why) < 0) {
		snprintf(pp->reason, sizeof(pp->reason), "%s", why.msg);
		goto out;
	}
	e = trust_store_find(&s, f->path);
	if (!e) {
		snprintf(pp->reason, sizeof(pp->reason), "not approved");
		goto out;
	}
	/* The store is the caller's; an entry of another uid was not made by
	 * paddock trust of this caller. */
	if (e->uid != getuid()) {
		snprintf(pp->reason, sizeof(pp->reason), "approved by uid %u, not by you (%u)",
			 (unsigned)e->uid, (unsigned)getuid());
		goto out;
	}
	/* --weaken trust-path-only (evaluation: HB-02's loader-trust-path):
	 * an approved path is trusted whatever its bytes are now. */
	if (!(r->opt->weaken & WEAKEN_TRUST_PATH_ONLY) && strcmp(e->sha256, f->sha256) != 0) {
		snprintf(pp->reason, sizeof(pp->reason),
			 "changed since it was approved (sha256 %s)", e->sha256);
		goto out;
	}
	rc = project_check(user, f->text, f->len, f->path, vars, store, w, &n, &why);
	if (rc == -EPERM) {
		snprintf(pp->reason, sizeof(pp->reason), "%s", why.msg);
		rc = 0;
		goto out;
	}
	if (rc < 0) {
		*err = why;
		err_wrap(err, "project policy %s", f->path);
		goto out;
	}
	for (size_t i = 0; i < n; i++)
		if (!approved_widening(e, w[i])) {
			snprintf(pp->reason, sizeof(pp->reason),
				 "wider than your policy (%.*s), which its approval does not allow",
				 WIDENING_LEN - 1, w[i]);
			goto out;
		}
	pp->state = PROJECT_TRUSTED;
	pp->uid = e->uid;
	pp->time = e->time;
out:
	trust_store_free(&s);
	policy_free(user);
	return rc;
}

int project_resolve(struct run_spec *r, const struct policy_vars *vars, char **file, size_t *len,
		    struct err *err)
{
	struct project_policy *pp = &r->project;
	struct project_file f;
	struct err why = {0};
	int rc;

	memset(pp, 0, sizeof(*pp));
	rc = project_open(r->opt->project_policy, vars->workspace, &f, &why);
	if (rc < 0 && !f.found && r->opt->project_policy) {
		*err = why;
		return -why.code;
	}
	if (!f.found && rc >= 0) {
		project_file_free(&f);
		return 0; /* absent */
	}
	snprintf(pp->path, sizeof(pp->path), "%s", f.path);
	pp->state = PROJECT_UNTRUSTED;
	if (rc < 0)
		snprintf(pp->reason, sizeof(pp->reason), "%s", why.msg);
	else
		memcpy(pp->sha256, f.sha256, sizeof(pp->sha256));
	if (rc >= 0)
		rc = decide(r, vars, &f, *file, *len, err);
	else
		rc = 0;
	if (rc >= 0 && pp->state == PROJECT_TRUSTED) {
		free(*file);
		*file = take_ptr(&f.text);
		*len = f.len;
		snprintf(r->policy_label_buf, sizeof(r->policy_label_buf), "%s", f.path);
	} else if (rc >= 0) {
		fprintf(stderr,
			"paddock: warning: project policy %s is not trusted: %s; running with %s "
			"(review it, then paddock trust %s)\n",
			pp->path, pp->reason, r->policy_label, pp->path);
	}
	project_file_free(&f);
	return rc;
}
