/* paddock trust (docs/trust.md, "Project policies"): approve a project
 * policy's bytes at its canonical path, after showing where it is wider
 * than the caller's own policy; list and revoke approvals. The file is
 * read and hashed once, as paddock run reads it (project.c). */
#include "run.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "../../include/cleanup.h"

struct add {
	struct trust_entry e;
};

static int put(struct trust_store *s, void *arg)
{
	int rc = trust_store_put(s, &((struct add *)arg)->e);

	return rc < 0 ? rc : 0;
}

int supervisor_trust(const struct options *o, const char *path, bool allow_widen, FILE *out,
		     struct err *err)
{
	static char w[WIDENINGS_MAX][WIDENING_LEN];
	char label[PATH_MAX + 64], store[PATH_MAX];
	char *wl[WIDENINGS_MAX];
	cleanup_free char *text = NULL;
	struct project_file f = {0};
	struct policy *user = NULL;
	struct policy_vars vars;
	struct vars_buf vb;
	struct add a = {0};
	size_t len = 0, n = 0;
	int rc;

	rc = run_make_vars(o, &vb, &vars, err);
	if (rc >= 0)
		rc = supervisor_policy_text(o, &text, &len, label, sizeof(label), err);
	if (rc >= 0)
		rc = project_user_policy(text, len, label, &vars, &user, err);
	if (rc < 0)
		return rc;
	rc = project_open(path, vars.workspace, &f, err);
	if (rc >= 0 && !f.found)
		rc = err_set(err, ENOENT, "no project policy at %s", f.path);
	if (rc >= 0)
		rc = project_store_path(user, vars.workspace, store, err);
	if (rc >= 0)
		rc = project_check(user, f.text, f.len, f.path, &vars, store, w, &n, err);
	if (rc < 0)
		goto out;
	fprintf(out, "project policy %s\n  sha256 %s\n  wider than your policy (%s):", f.path,
		f.sha256, label);
	for (size_t i = 0; i < n; i++)
		fprintf(out, "\n    %s", w[i]);
	fputs(n ? "\n" : " no\n", out);
	if (n && !allow_widen) {
		rc = err_set(err, EPERM,
			     "%s: not trusted: it is wider than your policy (%zu widening%s "
			     "above); give --allow-widen to approve them with it",
			     f.path, n, n == 1 ? "" : "s");
		goto out;
	}
	for (size_t i = 0; i < n; i++)
		wl[i] = w[i];
	a.e.path = f.path;
	memcpy(a.e.sha256, f.sha256, sizeof(a.e.sha256));
	a.e.uid = getuid();
	a.e.time = time(NULL);
	a.e.widenings = wl;
	a.e.n_widenings = n;
	rc = trust_store_update(store, put, &a, err);
	if (rc >= 0)
		fprintf(out, "trusted: these bytes at %s (any change needs paddock trust again)\n",
			f.path);
out:
	project_file_free(&f);
	policy_free(user);
	return rc;
}

int supervisor_trust_list(FILE *out, struct err *err)
{
	char path[PATH_MAX], when[64];
	struct trust_store s;
	int rc = trust_store_locate(path, err);

	if (rc >= 0)
		rc = trust_store_load(path, &s, err);
	if (rc < 0)
		return rc;
	for (size_t i = 0; i < s.n; i++) {
		time_t t = (time_t)s.e[i].time;
		struct tm tm;

		if (!gmtime_r(&t, &tm) || !strftime(when, sizeof(when), "%Y-%m-%dT%H:%M:%SZ", &tm))
			snprintf(when, sizeof(when), "%lld", (long long)s.e[i].time);
		fprintf(out, "%s\n  sha256 %s\n  approved by uid %u at %s\n", s.e[i].path,
			s.e[i].sha256, s.e[i].uid, when);
		for (size_t k = 0; k < s.e[i].n_widenings; k++)
			fprintf(out, "  allows: %s\n", s.e[i].widenings[k]);
	}
	trust_store_free(&s);
	return 0;
}

struct revoke {
	char path[2 * PATH_MAX];
	bool found;
};

static int drop(struct trust_store *s, void *arg)
{
	struct revoke *v = arg;

	v->found = trust_store_remove(s, v->path);
	return v->found ? 0 : 1;
}

int supervisor_trust_revoke(const char *path, FILE *out, struct err *err)
{
	char store[PATH_MAX], dir[PATH_MAX], real[PATH_MAX];
	const char *slash = strrchr(path, '/'), *name = slash ? slash + 1 : path;
	struct revoke v = {0};
	int rc;

	/* The approval's key: the canonical directory and the name (the
	 * file itself may be gone, or a symlink now). */
	snprintf(dir, sizeof(dir), "%.*s", slash ? (slash == path ? 1 : (int)(slash - path)) : 1,
		 slash ? path : ".");
	if (realpath(dir, real))
		snprintf(v.path, sizeof(v.path), "%s/%s", strcmp(real, "/") == 0 ? "" : real, name);
	else
		snprintf(v.path, sizeof(v.path), "%s", path);
	rc = trust_store_locate(store, err);
	if (rc >= 0)
		rc = trust_store_update(store, drop, &v, err);
	if (rc < 0)
		return rc;
	if (!v.found)
		return err_set(err, ENOENT, "no approval for %s (see paddock trust --list)",
			       v.path);
	fprintf(out, "revoked: %s\n", v.path);
	return 0;
}
