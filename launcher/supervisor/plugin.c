/* paddock plugin (docs/trust.md, "Plugins"; HB-22): a plugin is a
 * command plus a manifest. Its approved manifest, the inventory, is kept
 * in $XDG_CONFIG_HOME/paddock/plugins/NAME.json (the caller's, 0600); an
 * update is reviewed as the capability diff against it. An update that
 * widens anything is held: it runs under the approved scope, with only the
 * tools whose definitions were approved, until paddock plugin approve; one
 * that widens nothing keeps its grants. A signature never decides by
 * itself (unless --weaken signature-only). The artifact is read once,
 * hashed, and what runs is a private copy of exactly those bytes. */
#include "run.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../../include/cleanup.h"
#include "../../include/io.h"
#include "../../policy/manifest.h"
#include "../../policy/sha256.h"

/* A regular file of at most max bytes, read from one fd. */
static int read_small(const char *path, size_t max, bool owner_only, char **out, size_t *len,
		      struct err *err)
{
	cleanup_close int fd = open(path, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC |
					      (owner_only ? O_NOFOLLOW : 0));
	cleanup_free char *buf = NULL;
	struct stat st;
	ssize_t n;

	if (fd < 0)
		return err_sys(err, errno, "%s", path);
	if (fstat(fd, &st) < 0)
		return err_sys(err, errno, "%s", path);
	if (!S_ISREG(st.st_mode))
		return err_set(err, EINVAL, "%s: not a regular file", path);
	if (owner_only && (st.st_uid != geteuid() || (st.st_mode & 077)))
		return err_set(err, EPERM, "%s: must be yours and mode 0600", path);
	buf = malloc(max + 1);
	if (!buf)
		return err_set(err, ENOMEM, "out of memory");
	n = read_full(fd, buf, max + 1);
	if (n < 0)
		return err_sys(err, n, "%s", path);
	if ((size_t)n > max)
		return err_set(err, E2BIG, "%s: larger than %zu bytes", path, max);
	buf[n] = '\0';
	*out = take_ptr(&buf);
	*len = (size_t)n;
	return 0;
}

static int load_manifest(const char *path, bool owner_only, struct manifest **m, char **text,
			 size_t *len, struct err *err)
{
	cleanup_free char *buf = NULL;
	size_t n = 0;
	int rc = read_small(path, MANIFEST_MAX_BYTES, owner_only, &buf, &n, err);

	if (rc >= 0)
		rc = manifest_parse(buf, n, m, err);
	if (rc < 0)
		return err_wrap(err, "manifest %s", path);
	if (text) {
		*text = take_ptr(&buf);
		*len = n;
	}
	return 0;
}

/* A manifest whose signer, if it names one, is verified over the bytes
 * read (signer.c); sc says by which key. */
static int load_signed(const char *path, struct manifest **m, struct signer_check *sc,
		       struct err *err)
{
	cleanup_free char *text = NULL;
	size_t len = 0;
	int rc = load_manifest(path, false, m, &text, &len, err);

	return rc < 0 ? rc : plugin_signer_verify(path, text, len, *m, sc, err);
}

static bool same_text(const char *a, const char *b)
{
	return a == b || (a && b && strcmp(a, b) == 0);
}

/* The signer of an update is the approved one's (both unsigned, or the
 * same issuer and identity). */
static bool same_signer(const struct manifest *a, const struct manifest *u)
{
	return same_text(a->signer_issuer, u->signer_issuer) &&
	       same_text(a->signer_identity, u->signer_identity);
}

/* $XDG_CONFIG_HOME/paddock/plugins/NAME.json */
static int inventory_path(const char *name, char out[PATH_MAX], struct err *err)
{
	char store[PATH_MAX];
	int rc = trust_store_locate(store, err);
	char *slash = strrchr(store, '/');

	if (rc < 0)
		return rc;
	*slash = '\0';
	if (snprintf(out, PATH_MAX, "%s/plugins/%s.json", store, name) >= PATH_MAX)
		return err_set(err, ENAMETOOLONG, "plugin %s: path too long", name);
	return 0;
}

/* The approved manifest of name, or NULL (none yet). */
static int approved_of(const char *name, struct manifest **out, struct err *err)
{
	char path[PATH_MAX];
	int rc = inventory_path(name, path, err);

	*out = NULL;
	if (rc < 0)
		return rc;
	if (access(path, F_OK) != 0 && errno == ENOENT)
		return 0;
	return load_manifest(path, true, out, NULL, NULL, err);
}

/* The artifact beside the manifest (its path relative to the manifest's
 * directory), read once; its bytes into *bytes when it matches. */
static int artifact_bytes(const char *manifest_path, const struct manifest *m, char **bytes,
			  size_t *len, struct err *err)
{
	char path[2 * PATH_MAX], hex[65];
	const char *slash = strrchr(manifest_path, '/');
	unsigned char d[SHA256_DIGEST_LEN];
	int rc;

	snprintf(path, sizeof(path), "%.*s%s", slash ? (int)(slash - manifest_path + 1) : 0,
		 manifest_path, m->artifact);
	rc = read_small(path, 64u << 20, false, bytes, len, err);
	if (rc < 0)
		return err_wrap(err, "plugin %s: artifact", m->name);
	sha256(*bytes, *len, d);
	sha256_hex(d, hex);
	if (strcmp(hex, m->artifact_sha256) != 0) {
		free(*bytes);
		*bytes = NULL;
		return err_set(err, EPERM,
			       "plugin %s: artifact %s has sha256 %s, not the manifest's %s",
			       m->name, path, hex, m->artifact_sha256);
	}
	return 0;
}

static const char *kind_mark(enum manifest_change_kind k)
{
	return k == MANIFEST_WIDENS ? "+" : k == MANIFEST_NARROWS ? "-" : "~";
}

/* The diff of update against approved (NULL: none yet, everything is
 * new), printed; true when it widens. */
static bool show_diff(const struct manifest *approved, const struct manifest *u, FILE *out)
{
	static struct manifest_change c[MANIFEST_CHANGES_MAX];
	struct manifest none = {.name = u->name, .artifact = "(none)"};
	size_t n = manifest_diff(approved ? approved : &none, u, c, MANIFEST_CHANGES_MAX);

	fprintf(out, "plugin %s (manifest sha256 %s)\n  approved: %s%s\n", u->name, u->sha256,
		approved ? "manifest sha256 " : "none: everything is new",
		approved ? approved->sha256 : "");
	for (size_t i = 0; i < n; i++)
		fprintf(out, "  %s %s\n", kind_mark(c[i].kind), c[i].text);
	if (!n)
		fputs("  no change\n", out);
	return manifest_widens(c, n);
}

int supervisor_plugin_review(const char *path, FILE *out, struct err *err)
{
	struct manifest *u = NULL, *a = NULL;
	cleanup_free char *text = NULL;
	struct signer_check sc;
	struct err serr = {0};
	size_t len = 0;
	bool widens;
	int rc = load_manifest(path, false, &u, &text, &len, err);

	if (rc >= 0)
		rc = approved_of(u->name, &a, err);
	if (rc < 0)
		goto out;
	widens = show_diff(a, u, out);
	/* The signature is shown, never a reason to grant (a bad one: it
	 * neither runs nor can be approved). */
	if (plugin_signer_verify(path, text, len, u, &sc, &serr) < 0)
		fprintf(out, "  ! %s\n", serr.msg);
	else if (sc.verified)
		fprintf(out, "  signature: verified, %s by %s (%s)\n", u->signer_identity, sc.key,
			sc.allowed);
	else
		fputs("  signature: none (unsigned)\n", out);
	if (serr.msg[0])
		fputs("refused: its signature does not hold; it neither runs nor can be approved\n",
		      out);
	else if (a && !same_signer(a, u))
		fputs("refused: its signer changed; it runs only once paddock plugin approve "
		      "grants it\n",
		      out);
	else
		fputs(widens
			  ? "held: it widens what was approved; paddock plugin approve grants it\n"
			  : "keeps its grants: it widens nothing (no approval needed)\n",
		      out);
out:
	manifest_free(u);
	manifest_free(a);
	return rc;
}

int supervisor_plugin_approve(const char *path, FILE *out, struct err *err)
{
	char inv[PATH_MAX], tmp[PATH_MAX + 16], dir[PATH_MAX];
	cleanup_free char *text = NULL, *bytes = NULL;
	struct signer_check sc;
	struct manifest *u = NULL, *a = NULL;
	size_t len = 0, blen = 0;
	cleanup_close int fd = -1;
	int rc;

	rc = load_manifest(path, false, &u, &text, &len, err);
	if (rc >= 0)
		rc = plugin_signer_verify(path, text, len, u, &sc, err);
	if (rc >= 0)
		rc = artifact_bytes(path, u, &bytes, &blen, err);
	if (rc >= 0)
		rc = approved_of(u->name, &a, err);
	if (rc >= 0)
		rc = inventory_path(u->name, inv, err);
	if (rc < 0)
		goto out;
	show_diff(a, u, out);
	snprintf(dir, sizeof(dir), "%s", inv);
	*strrchr(dir, '/') = '\0';
	for (char *p = dir + 1; *p; p++) {
		if (*p != '/')
			continue;
		*p = '\0';
		mkdir(dir, 0700); /* EEXIST is fine; the open below says otherwise */
		*p = '/';
	}
	if (mkdir(dir, 0700) < 0 && errno != EEXIST) {
		rc = err_sys(err, errno, "plugin inventory %s", dir);
		goto out;
	}
	snprintf(tmp, sizeof(tmp), "%s.XXXXXX", inv);
	fd = mkostemp(tmp, O_CLOEXEC);
	if (fd < 0 || write_full(fd, text, len) < 0 || fsync(fd) < 0 || rename(tmp, inv) < 0) {
		rc = err_sys(err, errno, "plugin inventory %s", inv);
		if (fd >= 0)
			unlink(tmp);
		goto out;
	}
	fprintf(out, "approved: plugin %s as in manifest sha256 %s%s%s%s\n", u->name, u->sha256,
		sc.verified ? ", signed by " : "", sc.verified ? u->signer_identity : "",
		sc.verified ? " (verified)" : "");
out:
	manifest_free(u);
	manifest_free(a);
	return rc;
}

__attribute__((format(printf, 2, 3))) static int add_arg(struct plugin_plan *p, const char *fmt,
							 ...)
{
	char buf[6 * PATH_MAX];
	va_list ap;

	if (p->n_args + 2 >= PLUGIN_ARGS_MAX)
		return -E2BIG;
	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	p->args[p->n_args] = strdup(buf);
	return p->args[p->n_args++] ? 0 : -ENOMEM;
}

/* The run's additions: the scope's files as binds of the workspace, its
 * endpoints as --allow-net, the tools served, the artifact's copy. */
static int plan_scope(struct plugin_plan *p, const struct manifest *scope, const struct manifest *u,
		      const struct manifest *approved, bool held, const char *ws)
{
	char tools[1024] = "", port[8];
	size_t tl = 0;
	int rc = 0;

	for (size_t i = 0; rc >= 0 && i < scope->n_files; i++) {
		const struct manifest_file *f = &scope->files[i];
		char src[2 * PATH_MAX];

		snprintf(src, sizeof(src), "%s%s%s", ws, strcmp(f->path, ".") ? "/" : "",
			 strcmp(f->path, ".") ? f->path : "");
		rc = add_arg(p, "%s", f->rw ? "--bind" : "--ro-bind");
		if (rc >= 0)
			rc = add_arg(p, "%s:%s", src, src);
	}
	for (size_t i = 0; rc >= 0 && i < scope->n_net; i++) {
		snprintf(port, sizeof(port), "%u", scope->net[i].port);
		rc = add_arg(p, "%s", "--allow-net");
		if (rc >= 0)
			rc = add_arg(p, "%s:%s", scope->net[i].host, port);
	}
	for (size_t i = 0; i < u->n_tools; i++)
		if (!held || manifest_tool_approved(approved, &u->tools[i]))
			tl += (size_t)snprintf(tools + tl, sizeof(tools) - tl, "%s%s",
					       tl ? "," : "", u->tools[i].name);
	if (rc >= 0)
		rc = add_arg(p, "%s", "--setenv");
	if (rc >= 0)
		rc = add_arg(p, "PADDOCK_PLUGIN_TOOLS=%s", tools);
	if (rc >= 0)
		rc = add_arg(p, "%s", "--setenv");
	if (rc >= 0)
		rc = add_arg(p, "PADDOCK_WORKSPACE=%s", ws);
	if (rc >= 0)
		rc = add_arg(p, "%s", "--ro-bind");
	if (rc >= 0)
		rc = add_arg(p, "%s:%s", p->artifact_copy, p->target);
	return rc;
}

/* What approves a plugin must be out of its reach: a writable file scope
 * over its inventory would let it approve its own next update, one over
 * the allowed signers let it trust its own key. Is path (canonical as far
 * as it exists) in a rw scope? */
static int reachable(const struct manifest *scope, const char *name, const char *ws,
		     const char *path, const char *what, struct err *err)
{
	char p[PATH_MAX], real[PATH_MAX], src[2 * PATH_MAX];
	char *slash;

	snprintf(p, sizeof(p), "%s", path);
	while (!realpath(p, real)) {
		if (!(slash = strrchr(p, '/')) || slash == p)
			return 0;
		*slash = '\0';
	}
	for (size_t i = 0; i < scope->n_files; i++) {
		size_t n;

		if (!scope->files[i].rw)
			continue;
		snprintf(src, sizeof(src), "%s/%s", ws, scope->files[i].path);
		if (strcmp(scope->files[i].path, ".") == 0)
			snprintf(src, sizeof(src), "%s", ws);
		n = strlen(src);
		if (strncmp(real, src, n) == 0 && (real[n] == '\0' || real[n] == '/'))
			return err_set(err, EPERM,
				       "plugin %s: the file scope %s (rw) would show its own %s %s",
				       name, scope->files[i].path, what, real);
	}
	return 0;
}

static int inventory_reachable(const struct manifest *scope, const char *name, const char *ws,
			       struct err *err)
{
	char inv[PATH_MAX], allowed[PATH_MAX];
	int rc = inventory_path(name, inv, err);

	rc = rc < 0 ? rc : reachable(scope, name, ws, inv, "inventory", err);
	rc = rc < 0 ? rc : plugin_allowed_signers_path(allowed, err);
	return rc < 0 ? rc : reachable(scope, name, ws, allowed, "allowed signers", err);
}

#define COPY_PREFIX "paddock-plugin-"

/* Where the private copies go: $XDG_RUNTIME_DIR (the caller's own, 0700 by
 * the XDG rules), else /tmp. */
static const char *copy_parent(void)
{
	const char *rt = getenv("XDG_RUNTIME_DIR");

	return rt && rt[0] == '/' ? rt : "/tmp";
}

/* Is the directory d (fd, name NAME) a copy some paddock left behind? It
 * is ours (our uid, a directory, not a symlink), named after its maker's
 * pid (paddock-plugin-PID.XXXXXX), that pid is gone (so it is not in the
 * moment between mkdtemp and flock), and nobody holds its lock: the
 * process that made it held it until its end, a SIGKILL included (the
 * kernel drops a flock with the last fd of its open file description).
 * A pid reused since only defers the sweep to a later run. */
static bool left_behind(int fd, const char *name)
{
	const char *p = name + strlen(COPY_PREFIX);
	char *end;
	long pid;
	struct stat st;

	pid = strtol(p, &end, 10);
	if (end == p || *end != '.' || pid <= 0 || pid > INT_MAX)
		return false;
	if (fstat(fd, &st) < 0 || !S_ISDIR(st.st_mode) || st.st_uid != geteuid())
		return false;
	if (kill((pid_t)pid, 0) == 0 || errno == EPERM)
		return false;
	return flock(fd, LOCK_EX | LOCK_NB) == 0;
}

/* The copies of paddocks that died before they could remove theirs
 * (docs/trust.md, "Plugins"): the artifact, then the directory; a
 * directory holding anything else is not ours to judge and stays. */
static void sweep_copies(const char *parent)
{
	DIR *d = opendir(parent);
	struct dirent *e;

	if (!d)
		return; /* nothing to sweep where nothing can be listed */
	while ((e = readdir(d))) {
		int fd;

		if (strncmp(e->d_name, COPY_PREFIX, strlen(COPY_PREFIX)) != 0)
			continue;
		fd = openat(dirfd(d), e->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (fd < 0)
			continue;
		if (left_behind(fd, e->d_name)) {
			unlinkat(fd, "artifact", 0);
			unlinkat(dirfd(d), e->d_name, AT_REMOVEDIR);
		}
		close(fd);
	}
	closedir(d);
}

/* The bytes hashed, in a directory of ours (0711: a root caller's
 * workload, uid 65534, must reach the file), mode 0555. The directory is
 * named after this process and flock'd until supervisor_plugin_plan_free():
 * a paddock killed with SIGKILL cannot remove it, and the next plugin run
 * sweeps it (sweep_copies()). */
static int private_copy(struct plugin_plan *p, const char *bytes, size_t len, struct err *err)
{
	const char *parent = copy_parent();
	cleanup_close int fd = -1;

	sweep_copies(parent);
	snprintf(p->dir, sizeof(p->dir), "%s/" COPY_PREFIX "%d.XXXXXX", parent, (int)getpid());
	if (!mkdtemp(p->dir)) {
		int e = errno;

		p->dir[0] = '\0';
		return err_sys(err, e, "plugin %s: private directory", p->name);
	}
	p->dir_fd = open(p->dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (p->dir_fd < 0 || flock(p->dir_fd, LOCK_EX) < 0 || fchmod(p->dir_fd, 0711) < 0)
		return err_sys(err, errno, "plugin %s: private directory %s", p->name, p->dir);
	snprintf(p->artifact_copy, sizeof(p->artifact_copy), "%s/artifact", p->dir);
	fd = openat(p->dir_fd, "artifact", O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
		    0700);
	if (fd < 0 || write_full(fd, bytes, len) < 0 || fchmod(fd, 0555) < 0)
		return err_sys(err, errno, "plugin %s: %s", p->name, p->artifact_copy);
	return 0;
}

int supervisor_plugin_plan(const char *path, const char *workspace, bool signature_only,
			   struct plugin_plan *p, FILE *out, struct err *err)
{
	static struct manifest_change c[MANIFEST_CHANGES_MAX];
	cleanup_free char *bytes = NULL;
	struct manifest *u = NULL, *a = NULL;
	struct signer_check sc;
	char ws[PATH_MAX];
	size_t blen = 0, n;
	int rc;

	memset(p, 0, sizeof(*p));
	p->dir_fd = -1;
	if (!realpath(workspace ? workspace : ".", ws))
		return err_sys(err, errno, "workspace %s", workspace ? workspace : ".");
	rc = load_signed(path, &u, &sc, err);
	if (rc >= 0)
		rc = artifact_bytes(path, u, &bytes, &blen, err);
	if (rc >= 0)
		rc = approved_of(u->name, &a, err);
	if (rc >= 0 && !a)
		rc = err_set(err, EPERM,
			     "plugin %s: not approved (paddock plugin review %s, then paddock "
			     "plugin approve %s)",
			     u->name, path, path);
	/* Another signer (or a signature added or dropped) is another
	 * author: nothing of theirs runs on the approved one's standing. */
	if (rc >= 0 && !same_signer(a, u))
		rc = err_set(err, EPERM,
			     "plugin %s: its signer changed (%s -> %s): not run until you approve "
			     "it (paddock plugin review %s)",
			     u->name, a->signer_identity ? a->signer_identity : "unsigned",
			     u->signer_identity ? u->signer_identity : "unsigned", path);
	if (rc < 0)
		goto out;
	snprintf(p->name, sizeof(p->name), "%s", u->name);
	snprintf(p->target, sizeof(p->target), "/paddock-plugin/%s", u->name);
	n = manifest_diff(a, u, c, MANIFEST_CHANGES_MAX);
	p->held = manifest_widens(c, n);
	/* --weaken signature-only (evaluation: HB-22's signature-only): the
	 * approved signer's signature on an update grants what it asks. */
	if (p->held && signature_only && u->signer_identity && a->signer_identity &&
	    strcmp(u->signer_issuer, a->signer_issuer) == 0 &&
	    strcmp(u->signer_identity, a->signer_identity) == 0) {
		p->held = false;
		fprintf(out,
			"paddock: warning: plugin %s: the update widens what was approved; "
			"granted because its signer is the approved one (--weaken "
			"signature-only)\n",
			u->name);
	} else if (p->held) {
		fprintf(out,
			"paddock: plugin %s: update held: it widens what was approved (see "
			"paddock plugin review %s); running under the approved scope, with the "
			"approved tools only\n",
			u->name, path);
	}
	rc = inventory_reachable(p->held ? a : u, u->name, ws, err);
	if (rc >= 0)
		rc = private_copy(p, bytes, blen, err);
	if (rc >= 0)
		rc = plan_scope(p, p->held ? a : u, u, a, p->held, ws);
	if (rc == -E2BIG || rc == -ENOMEM)
		rc = err_set(err, -rc, "plugin %s: scope too large", u->name);
out:
	manifest_free(u);
	manifest_free(a);
	return rc;
}

void supervisor_plugin_plan_free(struct plugin_plan *p)
{
	for (size_t i = 0; i < p->n_args; i++)
		free(p->args[i]);
	p->n_args = 0;
	if (p->artifact_copy[0])
		unlink(p->artifact_copy);
	if (p->dir[0])
		rmdir(p->dir);
	/* The lock last: until the directory is gone, no sweep may take it. */
	if (p->dir_fd >= 0)
		close(p->dir_fd);
	p->dir_fd = -1;
	p->artifact_copy[0] = p->dir[0] = '\0';
}
