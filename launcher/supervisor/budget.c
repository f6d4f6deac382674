/* Budgets of metered rules, the supervisor's part (docs/network.md,
 * "Budgets"): the ledgers' directory, outside every sandbox, made and
 * checked here; only paddock-mediator opens the ledgers (SQLite,
 * mediator/ledger.c), and `paddock budget` asks it to. */
#include "run.h"

#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static bool within(const char *path, const char *root)
{
	size_t n = strlen(root);

	return strncmp(path, root, n) == 0 && (path[n] == '\0' || path[n] == '/' || n == 1);
}

/* mkdir -p, each new level 0700. */
static int make_dirs(char *path)
{
	for (char *p = path + 1;; p++) {
		if (*p != '/' && *p)
			continue;
		char c = *p;

		*p = '\0';
		if (mkdir(path, 0700) < 0 && errno != EEXIST) {
			*p = c;
			return -errno;
		}
		*p = c;
		if (!c)
			return 0;
	}
}

int budget_dir_path(char *out, size_t size, bool create, struct err *err)
{
	const char *xdg = getenv("XDG_STATE_HOME"), *home = getenv("HOME");
	struct stat st;
	int n, r;

	/* The XDG Base Directory rule: a relative XDG_STATE_HOME is ignored. */
	if (xdg && xdg[0] == '/')
		n = snprintf(out, size, "%s/paddock/budgets", xdg);
	else if (home && home[0] == '/')
		n = snprintf(out, size, "%s/.local/state/paddock/budgets", home);
	else
		return err_set(err, ENOENT,
			       "budgets: neither XDG_STATE_HOME nor HOME is an absolute path");
	if (n < 0 || (size_t)n >= size)
		return err_set(err, ENAMETOOLONG, "budgets: the state directory path is too long");
	if (create && (r = make_dirs(out)) < 0)
		return err_sys(err, r, "budgets: %s", out);
	if (lstat(out, &st) < 0)
		return err_sys(err, errno, "budgets: %s", out);
	if (!S_ISDIR(st.st_mode) || st.st_uid != geteuid() || (st.st_mode & 022))
		return err_set(err, EPERM,
			       "budgets: %s: must be a directory of ours (uid %u) that only we can "
			       "write",
			       out, (unsigned)geteuid());
	return 0;
}

int budget_prepare(struct run_spec *r, struct err *err)
{
	static const unsigned knobs[] = {WEAKEN_CHECK_THEN_CHARGE, WEAKEN_UNPRICED_AS_FREE,
					 WEAKEN_RELEASE_ON_TIMEOUT, WEAKEN_LOOKUP_FAIL_OPEN};
	bool metered = policy_has_meter(r->policy);
	char canon[PATH_MAX];
	int rc;

	for (size_t i = 0; i < sizeof(knobs) / sizeof(knobs[0]); i++)
		if ((r->opt->weaken & knobs[i]) && !metered)
			return err_set(err, EINVAL,
				       "--weaken %s: the policy has no metered rule (\"metered\" "
				       "on a network rule)",
				       weaken_name(knobs[i]));
	r->budget_dir[0] = '\0';
	if (!metered)
		return 0;
	if (!(r->sb.namespaces & POLICY_NS_NET))
		return err_set(err, EINVAL,
			       "a metered rule needs the mediator (not --weaken host-net)");
	rc = budget_dir_path(r->budget_dir, sizeof(r->budget_dir), true, err);
	if (rc < 0)
		return rc;
	if (!realpath(r->budget_dir, canon))
		return err_sys(err, errno, "budgets: %s", r->budget_dir);
	/* A ledger the workload could write would be a budget it sets. */
	for (size_t i = 0; i < r->policy->n_mounts; i++) {
		const struct policy_mount *m = &r->policy->mounts[i];
		char src[PATH_MAX];

		if (m->type == POLICY_MOUNT_BIND && m->source && realpath(m->source, src) &&
		    (within(canon, src) || within(src, canon)))
			return err_set(
			    err, EPERM,
			    "budgets: %s: inside (or holding) the bind of %s (mounts[%zu]): "
			    "the sandbox could reach the ledgers",
			    r->budget_dir, m->source, i);
	}
	return 0;
}

void budget_config(cJSON *root, const struct run_spec *r)
{
	const char *busy = getenv("PADDOCK_LEDGER_BUSY_MS");

	if (!r->budget_dir[0])
		return;
	cJSON_AddStringToObject(root, "budget_dir", r->budget_dir);
	if (busy && *busy && strspn(busy, "0123456789") == strlen(busy) && strlen(busy) < 6)
		cJSON_AddNumberToObject(root, "ledger_busy_ms", atoi(busy));
	if (r->opt->weaken & WEAKEN_CHECK_THEN_CHARGE)
		cJSON_AddTrueToObject(root, "check_then_charge");
	if (r->opt->weaken & WEAKEN_UNPRICED_AS_FREE)
		cJSON_AddTrueToObject(root, "unpriced_free");
	if (r->opt->weaken & WEAKEN_RELEASE_ON_TIMEOUT)
		cJSON_AddTrueToObject(root, "release_on_timeout");
	if (r->opt->weaken & WEAKEN_LOOKUP_FAIL_OPEN)
		cJSON_AddTrueToObject(root, "lookup_fail_open");
}

int budget_exec(int argc, char **argv, struct err *err)
{
	char path[PATH_MAX], dir[PATH_MAX];
	char *args[16];
	int rc;

	if (argc < 2 || argc > 12)
		return err_set(err, EINVAL,
			       "budget: usage: paddock budget show|export|settle BUDGET");
	/* A directory not made yet holds no ledger: paddock-mediator says
	 * so for the budget named. */
	rc = budget_dir_path(dir, sizeof(dir), false, err);
	if (rc < 0 && rc != -ENOENT)
		return rc;
	if (sandbox_find_helper("paddock-mediator", path, sizeof(path)) < 0)
		return err_set(err, ENOENT, "cannot find paddock-mediator next to paddock");
	args[0] = "paddock-mediator";
	args[1] = "--budget";
	args[2] = dir;
	for (int i = 0; i < argc; i++)
		args[3 + i] = argv[i];
	args[3 + argc] = NULL;
	execv(path, args);
	return err_sys(err, errno, "exec %s", path);
}
