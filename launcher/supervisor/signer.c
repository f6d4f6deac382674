/* A plugin manifest's signer, verified (docs/trust.md, "Signed
 * manifests"): a manifest that names a signer must carry an SSH signature
 * (MANIFEST.sig, ssh-keygen -Y sign -n paddock-plugin) over its exact
 * bytes by a key the caller's allowed-signers file
 * ($XDG_CONFIG_HOME/paddock/allowed_signers, ssh-keygen(1) ALLOWED
 * SIGNERS) lists for that identity. The launcher links no public-key
 * crypto (SHA-256 and HMAC are its own, policy/sha256.c; OpenSSL is the
 * mediator's alone), so the check is ssh-keygen -Y verify's, run as an
 * external verifier: /usr/bin/ssh-keygen (never $PATH, which a workspace
 * may set), a clean environment, the bytes paddock read and hashed on its
 * stdin (a memfd: what is verified is what is applied). */
#include "signer.h"

#include "run.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../../include/cleanup.h"
#include "../../include/io.h"
#include "../../policy/manifest.h"

#define SSH_KEYGEN     "/usr/bin/ssh-keygen"
#define SIGN_NAMESPACE "paddock-plugin"
#define KEYGEN_OUT_MAX 8192

bool signer_principal_listed(const char *out, const char *identity)
{
	size_t n = strlen(identity);

	for (const char *l = out; l && *l; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : NULL)
		if (strncmp(l, identity, n) == 0 && (l[n] == '\n' || l[n] == '\0'))
			return true;
	return false;
}

void signer_key_of(const char *out, char *key, size_t n)
{
	const char *w = strstr(out, " with ");
	size_t k;

	key[0] = '\0';
	if (!w)
		return;
	w += 6;
	k = strcspn(w, "\n");
	snprintf(key, n, "%.*s", (int)k, w);
}

/* ssh-keygen ARGS with stdin from in (-1: /dev/null); its stdout and
 * stderr into out. The exit status, or -errno (ENOENT: not installed). */
static int keygen(char *const argv[], int in, char *out, size_t n)
{
	static char *const env[] = {"PATH=/usr/bin:/bin", "LC_ALL=C", NULL};
	posix_spawn_file_actions_t fa;
	int pipefd[2], st, rc;
	size_t len = 0;
	ssize_t k;
	pid_t pid;

	out[0] = '\0';
	if (access(SSH_KEYGEN, X_OK) < 0)
		return -errno;
	if (pipe2(pipefd, O_CLOEXEC) < 0)
		return -errno;
	posix_spawn_file_actions_init(&fa);
	if (in >= 0)
		posix_spawn_file_actions_adddup2(&fa, in, 0);
	else
		posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
	posix_spawn_file_actions_adddup2(&fa, pipefd[1], 1);
	posix_spawn_file_actions_adddup2(&fa, pipefd[1], 2);
	rc = posix_spawn(&pid, SSH_KEYGEN, &fa, NULL, argv, env);
	posix_spawn_file_actions_destroy(&fa);
	close(pipefd[1]);
	if (rc != 0) {
		close(pipefd[0]);
		return -rc;
	}
	while (len + 1 < n && (k = read(pipefd[0], out + len, n - 1 - len)) != 0) {
		if (k < 0 && errno == EINTR)
			continue;
		if (k < 0)
			break;
		len += (size_t)k;
	}
	out[len] = '\0';
	close(pipefd[0]);
	while (waitpid(pid, &st, 0) < 0)
		if (errno != EINTR)
			return -errno;
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

int plugin_allowed_signers_path(char out[PATH_MAX], struct err *err)
{
	char store[PATH_MAX];
	int rc = trust_store_locate(store, err);

	if (rc < 0)
		return rc;
	*strrchr(store, '/') = '\0';
	if (snprintf(out, PATH_MAX, "%s/allowed_signers", store) >= PATH_MAX)
		return err_set(err, ENAMETOOLONG, "allowed signers: path too long");
	return 0;
}

/* The allowed-signers file: the caller's (or root's), not writable by
 * anyone else, a regular file. */
static int allowed_signers(char out[PATH_MAX], const char *who, struct err *err)
{
	struct stat st;
	int rc = plugin_allowed_signers_path(out, err);

	if (rc < 0)
		return rc;
	if (lstat(out, &st) < 0)
		return err_set(err, EPERM,
			       "%s: names a signer, but you trust none: %s: %s (ssh-keygen(1) "
			       "ALLOWED SIGNERS; docs/security.md)",
			       who, out, strerror(errno));
	if (!S_ISREG(st.st_mode) || (st.st_uid != geteuid() && st.st_uid != 0) ||
	    (st.st_mode & 022))
		return err_set(err, EPERM,
			       "%s: allowed signers %s must be a regular file of yours, writable "
			       "by you alone",
			       who, out);
	return 0;
}

int plugin_signer_verify(const char *manifest, const char *bytes, size_t len,
			 const struct manifest *m, struct signer_check *out, struct err *err)
{
	char sig[PATH_MAX + 8], who[160], text[KEYGEN_OUT_MAX];
	cleanup_close int mfd = -1;
	struct stat st;
	int rc;

	memset(out, 0, sizeof(*out));
	if (!m->signer_identity)
		return 0; /* unsigned: nothing claimed, nothing to check */
	snprintf(who, sizeof(who), "plugin %s", m->name);
	if (snprintf(sig, sizeof(sig), "%s.sig", manifest) >= (int)sizeof(sig))
		return err_set(err, ENAMETOOLONG, "%s: signature path too long", who);
	rc = allowed_signers(out->allowed, who, err);
	if (rc < 0)
		return rc;
	if (stat(sig, &st) < 0 || !S_ISREG(st.st_mode))
		return err_set(err, EPERM,
			       "%s: names signer %s but has no signature %s (ssh-keygen -Y sign -n "
			       "%s)",
			       who, m->signer_identity, sig, SIGN_NAMESPACE);
	/* Whose key signed it, by the allowed-signers file alone (no check of
	 * the signature yet): an unknown key, or the key of another identity
	 * than the one the manifest names, is said as such. */
	rc = keygen(
	    (char *[]){"ssh-keygen", "-Y", "find-principals", "-s", sig, "-f", out->allowed, NULL},
	    -1, text, sizeof(text));
	if (rc < 0)
		return err_set(err, -rc, "%s: cannot verify its signer: %s: %s (openssh-client)",
			       who, SSH_KEYGEN, strerror(-rc));
	if (rc != 0)
		return err_set(
		    err, EPERM,
		    "%s: unknown signer: the key of %s is not in your allowed signers %s", who, sig,
		    out->allowed);
	if (!signer_principal_listed(text, m->signer_identity))
		return err_set(err, EPERM,
			       "%s: %s is signed by %.*s, not by the signer it names (%s)", who,
			       sig, (int)strcspn(text, "\n"), text, m->signer_identity);
	mfd = memfd_create("paddock-manifest", MFD_CLOEXEC);
	if (mfd < 0 || write_full(mfd, bytes, len) < 0 || lseek(mfd, 0, SEEK_SET) < 0)
		return err_sys(err, errno, "%s: manifest copy", who);
	rc = keygen((char *[]){"ssh-keygen", "-Y", "verify", "-f", out->allowed, "-I",
			       m->signer_identity, "-n", SIGN_NAMESPACE, "-s", sig, NULL},
		    mfd, text, sizeof(text));
	if (rc < 0)
		return err_set(err, -rc, "%s: cannot verify its signer: %s: %s", who, SSH_KEYGEN,
			       strerror(-rc));
	if (rc != 0)
		return err_set(err, EPERM,
			       "%s: bad signature: %s does not verify over the manifest's bytes "
			       "for %s (edited after signing, or signed for another namespace)",
			       who, sig, m->signer_identity);
	signer_key_of(text, out->key, sizeof(out->key));
	out->verified = true;
	return 0;
}
