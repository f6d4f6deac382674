/* Brokered credentials, the supervisor's part (docs/network.md, "Brokered
 * credentials"): the secrets file is checked here before anything starts,
 * but never read: only paddock-mediator, outside the sandbox, reads the
 * secrets (mediator/credentials.c). The workload gets a placeholder per
 * variable, random per session; it means nothing anywhere but on this
 * session's mediator, and only where a grant with its credential covers
 * the request. */
#include "run.h"

#include <cjson/cJSON.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

static bool within(const char *path, const char *root)
{
	size_t n = strlen(root);

	return strncmp(path, root, n) == 0 && (path[n] == '\0' || path[n] == '/' || n == 1);
}

/* The file as the mediator will open it (O_NOFOLLOW): a regular file the
 * caller owns, no group or other bits, and no bind of the sandbox shows
 * it (a secrets file in the workspace would be the workload's). */
static int check_file(const struct run_spec *r, const char *path, char *canon, struct err *err)
{
	struct stat st, fst;
	int fd;

	/* lstat first, for the message; then the open that does not follow
	 * a symlink must give the same file. */
	if (lstat(path, &st) < 0)
		return err_sys(err, errno, "secrets file %s", path);
	if (S_ISLNK(st.st_mode))
		return err_set(err, ELOOP, "secrets file %s: is a symlink (not followed)", path);
	if (!S_ISREG(st.st_mode))
		return err_set(err, EINVAL, "secrets file %s: not a regular file", path);
	if (st.st_uid != geteuid())
		return err_set(err, EPERM, "secrets file %s: owned by uid %u, not by us (uid %u)",
			       path, (unsigned)st.st_uid, (unsigned)geteuid());
	if (st.st_mode & 077)
		return err_set(err, EPERM,
			       "secrets file %s: mode %04o; it must be 0600 (no group or other "
			       "access)",
			       path, (unsigned)(st.st_mode & 07777));
	fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
	if (fd < 0)
		return err_sys(err, errno, "secrets file %s", path);
	if (fstat(fd, &fst) < 0 || fst.st_dev != st.st_dev || fst.st_ino != st.st_ino) {
		close(fd);
		return err_set(err, EAGAIN, "secrets file %s: replaced while it was checked", path);
	}
	close(fd);
	if (!realpath(path, canon))
		return err_sys(err, errno, "secrets file %s", path);
	for (size_t i = 0; i < r->policy->n_mounts; i++) {
		const struct policy_mount *m = &r->policy->mounts[i];
		char src[PATH_MAX];

		if (m->type == POLICY_MOUNT_BIND && m->source && realpath(m->source, src) &&
		    within(canon, src))
			return err_set(err, EPERM,
				       "secrets file %s: inside the bind of %s (mounts[%zu]): the "
				       "sandbox could read it",
				       path, m->source, i);
	}
	return 0;
}

/* "NAME=VALUE" appended to the workload's environment. */
static int env_add(char ***env, const char *name, const char *value)
{
	size_t n = 0;
	char **e, *s;

	while (*env && (*env)[n])
		n++;
	if (asprintf(&s, "%s=%s", name, value) < 0)
		return -ENOMEM;
	e = realloc(*env, (n + 2) * sizeof(*e));
	if (!e) {
		free(s);
		return -ENOMEM;
	}
	e[n] = s;
	e[n + 1] = NULL;
	*env = e;
	return 0;
}

static int placeholders(struct run_spec *r, struct err *err)
{
	const struct policy *p = r->policy;

	for (size_t i = 0; i < p->n_net_allow; i++)
		for (size_t g = 0; g < p->net_allow[i].n_grants; g++) {
			const struct policy_net_credential *c =
			    p->net_allow[i].grants[g].credential;
			struct run_credential *rc;
			unsigned char rnd[16];
			bool seen = false;

			for (size_t k = 0; c && k < r->n_cred && !seen; k++)
				seen = strcmp(r->cred[k].env, c->env) == 0;
			if (!c || seen)
				continue;
			if (r->n_cred == sizeof(r->cred) / sizeof(r->cred[0]))
				return err_set(err, ENOSPC,
					       "network.allow: more than %zu credentials",
					       sizeof(r->cred) / sizeof(r->cred[0]));
			if (getrandom(rnd, sizeof(rnd), 0) != (ssize_t)sizeof(rnd))
				return err_sys(err, errno, "credentials: getrandom");
			rc = &r->cred[r->n_cred++];
			snprintf(rc->env, sizeof(rc->env), "%s", c->env);
			memcpy(rc->placeholder, "pdk_", 4);
			for (int k = 0; k < 16; k++)
				snprintf(rc->placeholder + 4 + 2 * k, 3, "%02x", rnd[k]);
			if (env_add(&r->sb.env, rc->env, rc->placeholder) < 0)
				return err_set(err, ENOMEM, "out of memory");
		}
	return 0;
}

int credentials_prepare(struct run_spec *r, struct err *err)
{
	const char *path = r->opt->secrets_path ? r->opt->secrets_path : r->policy->net_secrets;
	bool any = policy_has_credentials(r->policy);
	int rc;

	if (r->opt->weaken & WEAKEN_CREDENTIAL_ANY_AUDIENCE && !any)
		return err_set(err, EINVAL,
			       "--weaken credential-any-audience: the policy brokers no "
			       "credential (no grant has \"credential\")");
	if (r->opt->weaken & WEAKEN_REDACT_PLAIN_ONLY && !any)
		return err_set(err, EINVAL,
			       "--weaken redact-plain-only: the policy brokers no credential (no "
			       "grant has \"credential\")");
	if (r->opt->secrets_path && !any)
		return err_set(err, EINVAL,
			       "--secrets %s: the policy brokers no credential (no grant has "
			       "\"credential\")",
			       r->opt->secrets_path);
	if (!any)
		return 0;
	if (!path)
		return err_set(err, EINVAL,
			       "policy %s: a grant has a credential but there is no secrets file "
			       "(network.secrets or --secrets FILE)",
			       r->policy_label);
	if (!(r->sb.namespaces & POLICY_NS_NET))
		return err_set(err, EINVAL,
			       "a brokered credential needs the mediator (not --weaken host-net)");
	rc = check_file(r, path, r->secrets_path, err);
	return rc < 0 ? rc : placeholders(r, err);
}

void credentials_config(cJSON *root, const struct run_spec *r)
{
	cJSON *a;

	if (!r->n_cred)
		return;
	cJSON_AddStringToObject(root, "secrets", r->secrets_path);
	a = cJSON_AddArrayToObject(root, "credentials");
	for (size_t i = 0; a && i < r->n_cred; i++) {
		cJSON *o = cJSON_CreateObject();

		cJSON_AddStringToObject(o, "env", r->cred[i].env);
		cJSON_AddStringToObject(o, "placeholder", r->cred[i].placeholder);
		cJSON_AddItemToArray(a, o);
	}
	if (r->opt->weaken & WEAKEN_CREDENTIAL_ANY_AUDIENCE)
		cJSON_AddTrueToObject(root, "any_audience");
	if (r->opt->weaken & WEAKEN_REDACT_PLAIN_ONLY)
		cJSON_AddTrueToObject(root, "redact_plain_only");
}

void credentials_policy_json(cJSON *grant, const struct policy_net_grant *g)
{
	const struct policy_net_credential *c = g->credential;
	cJSON *o;

	if (!c || !(o = cJSON_AddObjectToObject(grant, "credential")))
		return;
	cJSON_AddStringToObject(o, "secret", c->secret);
	cJSON_AddStringToObject(o, "env", c->env);
	if (c->header) {
		cJSON_AddStringToObject(o, "header", c->header);
		cJSON_AddStringToObject(o, "prefix", c->prefix);
	} else {
		cJSON_AddStringToObject(o, "query", c->query);
	}
}
