/* Everything of paddock run before anything starts: the policy read,
 * amended and loaded, the weakenings folded in, the mount plan, the
 * environment, the bind sources checked, the record opened out of the
 * sandbox's reach, the seccomp program and the Landlock rules built, and
 * paddock-init copied. Then the session registered out of its sight. */
#include "run.h"
#include "oci.h"

#include <cjson/cJSON.h>
#include <fcntl.h>
#include <limits.h>
#include <pwd.h>
#include <stdio.h>
#include <linux/magic.h>
#include <sys/statfs.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <string.h>
#include <unistd.h>

#include "../../include/cleanup.h"
#include "../../include/io.h"
#include "../../include/log.h"
#include "../../policy/sha256.h"

extern char **environ;

/* --policy FILE or NAME (a profile: profiles.c), or the built-in agent
 * policy; label is what messages call it. */
static int read_policy(const struct options *o, char **out, size_t *len, char *label,
		       size_t label_size, struct err *err)
{
	const char *path = o->policy_path;

	if (!path) {
		snprintf(label, label_size, "(built-in agent policy)");
		*len = o->builtin_policy_len;
		*out = malloc(*len + 1);
		if (!*out)
			return err_set(err, ENOMEM, "out of memory");
		memcpy(*out, o->builtin_policy, *len);
		return 0;
	}
	/* A name that is no regular file here is a profile (a directory
	 * named build in the current one does not hide the profile). */
	if (profile_name_valid(path)) {
		struct stat st;

		if (stat(path, &st) != 0 || !S_ISREG(st.st_mode))
			return profile_find(path, out, len, label, label_size, err);
	}
	snprintf(label, label_size, "%s", path);
	return profile_read_file(path, out, len, err);
}

/* ${WORKSPACE}, ${HOME}, ${PWD}: canonical, so that the mount code can then
 * refuse any symlink it meets. A HOME that does not exist is left unset. */
int run_make_vars(const struct options *o, struct vars_buf *b, struct policy_vars *v,
		  struct err *err)
{
	const char *home = getenv("HOME");
	struct passwd *pw;

	if (!realpath(o->workspace ? o->workspace : ".", b->workspace))
		return err_sys(err, errno, "workspace %s", o->workspace ? o->workspace : ".");
	if (!realpath(".", b->pwd))
		return err_sys(err, errno, "current directory");
	if (!home || home[0] != '/') {
		pw = getpwuid(getuid());
		home = pw ? pw->pw_dir : NULL;
	}
	v->workspace = b->workspace;
	v->pwd = b->pwd;
	v->home = home && realpath(home, b->home) ? b->home : NULL;
	return 0;
}

/* A command-line bind (appended to "mounts") over a policy's mount would
 * hide it ("would hide mounts[N]; list it first"), and a command line
 * cannot list anything first. Moved before the mount it would hide, the
 * policy's mount is then on top of it and stays what the sandbox sees
 * there: the policy keeps its say, the bind shows the rest. Only binds of
 * the command line are moved; true when eff was rewritten (load again). */
/* The hidden mount's target (quoted in hide, the message's " would hide
 * mounts[N] (\"TARGET\")"), as a path below the command line's bind (a
 * JSON object: source and target): does it exist in the bind's source?
 * Only then can the policy's mount sit on top of the bind without a
 * directory made in the caller's files (or refused in a read-only one). */
static bool mount_point_there(const cJSON *bind, const char *hide)
{
	const char *src = cJSON_GetStringValue(cJSON_GetObjectItem(bind, "source"));
	const char *dst = cJSON_GetStringValue(cJSON_GetObjectItem(bind, "target"));
	const char *q = strstr(hide, "(\""), *end;
	char target[PATH_MAX], path[2 * PATH_MAX];
	size_t n;
	struct stat st;

	if (!src || !dst || !q || !(end = strstr(q + 2, "\")")))
		return false;
	q += 2;
	if ((size_t)(end - q) >= sizeof(target) || memchr(q, '\\', (size_t)(end - q)))
		return false; /* escaped: not a plain path */
	snprintf(target, sizeof(target), "%.*s", (int)(end - q), q);
	n = strlen(dst);
	if (strncmp(target, dst, n) != 0 || (target[n] != '/' && !(n == 1 && dst[0] == '/')))
		return false;
	snprintf(path, sizeof(path), "%s%s", src, target + (n == 1 ? 0 : n));
	return lstat(path, &st) == 0 && !S_ISLNK(st.st_mode);
}

static bool hoist_cli_bind(const struct options *o, const char *merged, size_t merged_len,
			   char **eff, size_t *eff_len, struct err *err)
{
	cJSON *doc, *orig, *mounts, *item;
	size_t later, earlier, n_policy = 0;
	const char *hide = strstr(err->msg, " would hide mounts[");
	char *text;

	if (!o->n_binds || !hide || !strstr(hide, "list it first") ||
	    sscanf(err->msg, "mounts[%zu]", &later) != 1 ||
	    sscanf(hide, " would hide mounts[%zu]", &earlier) != 1)
		return false;
	orig = cJSON_ParseWithLength(merged, merged_len);
	n_policy = orig ? (size_t)cJSON_GetArraySize(cJSON_GetObjectItem(orig, "mounts")) : 0;
	cJSON_Delete(orig);
	if (later < n_policy || earlier >= later)
		return false; /* the policy's own order: its author's to fix */
	doc = cJSON_ParseWithLength(*eff, *eff_len);
	mounts = doc ? cJSON_GetObjectItem(doc, "mounts") : NULL;
	if (!cJSON_IsArray(mounts) || later >= (size_t)cJSON_GetArraySize(mounts)) {
		cJSON_Delete(doc);
		return false;
	}
	item = cJSON_GetArrayItem(mounts, (int)later);
	if (!mount_point_there(item, hide)) {
		/* Said in the command line's words: which argument, what of the
		 * policy it would hide, and why it cannot simply go first. */
		const char *src = cJSON_GetStringValue(cJSON_GetObjectItem(item, "source"));
		const char *dst = cJSON_GetStringValue(cJSON_GetObjectItem(item, "target"));
		const char *mode = cJSON_GetStringValue(cJSON_GetObjectItem(item, "mode"));
		char was[sizeof(err->msg)];

		snprintf(was, sizeof(was), "%s", err->msg);
		if (src && dst)
			err_set(
			    err, EINVAL,
			    "--%s %s:%s would hide a mount of the policy's below %s, and %s has "
			    "no place to put it on: bind to another target, or below it (the "
			    "policy says: %s)",
			    mode && strcmp(mode, "rw") == 0 ? "bind" : "ro-bind", src, dst, dst,
			    src, was);
		cJSON_Delete(doc);
		return false;
	}
	/* A new order: the list taken apart and put together again. */
	{
		size_t n = (size_t)cJSON_GetArraySize(mounts), k = 0;
		cJSON **v = calloc(n, sizeof(*v));

		if (!v) {
			cJSON_Delete(doc);
			return false;
		}
		while (k < n && (item = cJSON_DetachItemFromArray(mounts, 0)))
			v[k++] = item;
		for (size_t i = 0; i < k; i++) {
			size_t from = i < earlier    ? i
				      : i == earlier ? later
				      : i <= later   ? i - 1
						     : i;

			cJSON_AddItemToArray(mounts, v[from]);
		}
		free(v);
	}
	text = cJSON_Print(doc);
	if (!text) {
		cJSON_Delete(doc);
		return false;
	}
	cJSON_Delete(doc);
	free(*eff);
	*eff = text;
	*eff_len = strlen(text);
	return true;
}

/* The first-run error of a user who started paddock in /, /tmp or /usr:
 * the policy's own words name mounts by index. Said as what happened and
 * what to do, the policy's words kept after it. */
static bool workspace_clash(struct err *err, const struct options *o, const char *ws)
{
	char quoted[PATH_MAX + 40], was[sizeof(err->msg)];
	const char *what = NULL;

	snprintf(quoted, sizeof(quoted), "\"%s\" is already the target of", ws);
	if (strcmp(ws, "/") == 0 && strstr(err->msg, "must not be \"/\""))
		what = "the whole filesystem, which cannot be the sandbox's workspace";
	else if (strstr(err->msg, quoted))
		what = "a directory the policy already gives the sandbox (a private or "
		       "read-only one of its own)";
	if (!what)
		return false;
	snprintf(was, sizeof(was), "%s", err->msg);
	err_set(err, EINVAL, "the workspace %s is %s; %s (the policy says: %s)", ws, what,
		o->workspace ? "give --workspace a project directory"
			     : "run paddock in a project directory, or give --workspace DIR",
		was);
	return true;
}

/* The caller's home in a writable bind (home.c): refused when it is there
 * only because the current directory is the home or above it; otherwise
 * its login places are added to "protect" and the policy loaded again, so
 * the effective policy (and its digest) says so. */
static int protect_home(struct run_spec *r, const char *file, size_t len,
			struct policy_additions *add, const struct policy_vars *vars, char **eff,
			size_t *eff_len, struct err *err)
{
	static char extra[HOME_PROTECTS_MAX][PATH_MAX];
	const struct options *o = r->opt;
	cleanup_free const char **list = NULL;
	size_t n;
	int rc;

	if (!vars->home)
		return 0;
	if (!o->workspace && home_exposed(r->policy, vars->home, vars->workspace))
		return err_set(err, EPERM,
			       "the workspace %s is your home directory or above it: the workload "
			       "could change what runs at your next login (~/.ssh, ~/.bashrc, "
			       "~/.config/systemd); run paddock in a project directory, or give "
			       "--workspace %s to mean it (the login files are then read-only)",
			       vars->workspace, vars->workspace);
	n = home_protects(r->policy, vars->home, extra, HOME_PROTECTS_MAX);
	if (!n)
		return 0;
	list = calloc(add->n_protect + n, sizeof(*list));
	if (!list)
		return err_set(err, ENOMEM, "out of memory");
	for (size_t i = 0; i < add->n_protect; i++)
		list[i] = add->protect[i];
	for (size_t i = 0; i < n; i++)
		list[add->n_protect + i] = extra[i];
	add->protect = list;
	add->n_protect += n;
	free(*eff);
	*eff = NULL;
	policy_free(r->policy);
	r->policy = NULL;
	rc = policy_amend(file, len, add, eff, eff_len, err);
	if (rc >= 0)
		rc = policy_load_buffer(*eff, *eff_len, vars, &r->policy, err);
	add->protect = NULL; /* list is ours */
	add->n_protect = 0;
	if (rc < 0)
		return err_wrap(err, "policy %s (with the home's login files protected)",
				r->policy_label);
	fprintf(stderr,
		"paddock: warning: your home %s is writable in the sandbox; %zu login and tool "
		"files in it are read-only\n",
		vars->home, n);
	return 0;
}

/* --weaken evidence-in-sandbox (HB-19): the record's directory, where the
 * evidence logs and their key are, as one more writable bind at its own
 * path. *out: the binds to use (o's, or a copy with it), malloc'd or NULL. */
static int evidence_bind(const struct options *o, struct policy_bind_arg **out, char *dir,
			 size_t size, struct err *err)
{
	char path[PATH_MAX], *slash;

	*out = NULL;
	if (!(o->weaken & WEAKEN_EVIDENCE_IN_SANDBOX))
		return 0;
	if (!o->record_path)
		return err_set(err, EINVAL, "--weaken evidence-in-sandbox: needs --record");
	snprintf(path, sizeof(path), "%s", o->record_path);
	slash = strrchr(path, '/');
	if (slash)
		*slash = '\0';
	if (!realpath(slash ? (path[0] ? path : "/") : ".", dir) || strlen(dir) >= size)
		return err_sys(err, errno, "--record %s", o->record_path);
	*out = calloc(o->n_binds + 1, sizeof(**out));
	if (!*out)
		return err_set(err, ENOMEM, "out of memory");
	for (size_t i = 0; i < o->n_binds; i++)
		(*out)[i] = o->binds[i];
	(*out)[o->n_binds] = (struct policy_bind_arg){.spec = dir, .readonly = false};
	return 0;
}

static int load_policy(struct run_spec *r, struct err *err)
{
	const struct options *o = r->opt;
	char ev_dir[PATH_MAX];
	cleanup_free struct policy_bind_arg *ev_binds = NULL;
	int erc = evidence_bind(o, &ev_binds, ev_dir, sizeof(ev_dir), err);
	struct policy_additions add = {
	    .binds = ev_binds ? ev_binds : o->binds,
	    .n_binds = o->n_binds + (ev_binds ? 1 : 0),
	    .protect = o->protect,
	    .n_protect = o->n_protect,
	    .setenv = o->setenv,
	    .n_setenv = o->n_setenv,
	    .cwd = o->cwd,
	    .ports = o->ports,
	    .n_ports = o->n_ports,
	    .allow_net = o->allow_net,
	    .n_allow_net = o->n_allow_net,
	};
	cleanup_free char *file = NULL, *eff = NULL, *merged = NULL;
	unsigned char digest[SHA256_DIGEST_LEN];
	size_t len = 0, eff_len = 0, merged_len = 0;
	struct vars_buf vb;
	struct policy_vars vars;
	int rc;

	if (erc < 0)
		return erc;
	rc = read_policy(o, &file, &len, r->policy_label_buf, sizeof(r->policy_label_buf), err);
	r->policy_label = r->policy_label_buf;
	if (rc < 0)
		return rc;
	rc = run_make_vars(o, &vb, &vars, err);
	if (rc < 0)
		return rc;
	/* A project policy in place of the caller's, when approved (its
	 * bytes, read once: project.c); then the same loader as any. */
	rc = project_resolve(r, &vars, &file, &len, err);
	if (rc < 0)
		return rc;
	/* "extends": the bases merged in, one document (byte for byte the
	 * file's when it has none); a project policy's profiles only. */
	rc = policy_extends_resolve(file, len, r->policy_label,
				    r->project.state == PROJECT_TRUSTED ? project_fetch
									: profile_fetch,
				    NULL, &merged, &merged_len, err);
	if (rc < 0)
		return rc;
	rc = policy_amend(merged, merged_len, &add, &eff, &eff_len, err);
	if (rc >= 0)
		rc = policy_load_buffer(eff, eff_len, &vars, &r->policy, err);
	for (int i = 0;
	     rc < 0 && i < 16 && hoist_cli_bind(o, merged, merged_len, &eff, &eff_len, err); i++)
		rc = policy_load_buffer(eff, eff_len, &vars, &r->policy, err);
	if (rc < 0 && workspace_clash(err, o, vb.workspace))
		return rc;
	if (rc < 0)
		return err_wrap(err, "policy %s", r->policy_label);
	rc = protect_home(r, merged, merged_len, &add, &vars, &eff, &eff_len, err);
	if (rc < 0)
		return rc;
	r->n_widenings = policy_widenings(r->policy, vb.workspace, r->widenings, WIDENINGS_MAX);
	/* Without additions the effective text is the file's, byte for byte,
	 * and its digest is already computed by the loader. */
	if (eff_len == len && memcmp(eff, file, len) == 0) {
		memcpy(r->file_sha256, r->policy->sha256, sizeof(r->file_sha256));
	} else {
		sha256(file, len, digest);
		sha256_hex(digest, r->file_sha256);
	}
	if (o->has_ttl)
		r->policy->ttl_ms = o->ttl_ms;
	return 0;
}

int supervisor_policy_text(const struct options *o, char **out, size_t *len, char *label,
			   size_t label_size, struct err *err)
{
	cleanup_free char *file = NULL;
	size_t n = 0;
	int rc = read_policy(o, &file, &n, label, label_size, err);

	if (rc < 0)
		return rc;
	return policy_extends_resolve(file, n, label, profile_fetch, NULL, out, len, err);
}

int supervisor_policy_check(const struct options *o, char sha[65], char *label, size_t label_size,
			    struct err *err)
{
	struct run_spec r = {.opt = o};
	int rc = load_policy(&r, err);

	snprintf(label, label_size, "%s", r.policy_label_buf);
	if (rc >= 0)
		snprintf(sha, 65, "%s", r.policy->sha256);
	policy_free(r.policy);
	return rc;
}

int supervisor_policy_load(const struct options *o, struct policy **out, char *label,
			   size_t label_size, struct err *err)
{
	struct run_spec r = {.opt = o};
	int rc = load_policy(&r, err);

	snprintf(label, label_size, "%s", r.policy_label_buf);
	*out = rc >= 0 ? r.policy : NULL;
	if (rc < 0)
		policy_free(r.policy);
	return rc;
}

void supervisor_profiles(FILE *f)
{
	profile_list(f);
}

/* The "**" entries of protect: git directories and names found by a
 * bounded walk (mounts/git.c), before the plan. With --weaken no-protect
 * nothing is protected, and the check after the run still looks (so a
 * weakened run shows what the protection prevents). */
static int expand_protect(struct run_spec *r, struct err *err)
{
	char warn[256];
	int rc = git_expand_protect(r->policy, &r->git, warn, sizeof(warn), err);

	if (rc < 0)
		return rc;
	if (warn[0])
		fprintf(stderr, "paddock: warning: %s\n", warn);
	if (r->opt->weaken & WEAKEN_NO_PROTECT) {
		for (size_t i = 0; i < r->policy->n_protect; i++)
			free(r->policy->protect[i]);
		r->policy->n_protect = 0;
		for (size_t i = 0; i < r->policy->n_protect_rw; i++)
			free(r->policy->protect_rw[i]);
		r->policy->n_protect_rw = 0;
		for (size_t i = 0; i < r->policy->n_protect_ro; i++)
			free(r->policy->protect_ro[i]);
		r->policy->n_protect_ro = 0;
		for (size_t i = 0; i < r->git.n_allow; i++) {
			free(r->git.allow[i]);
			free(r->git.allow_sb[i]);
		}
		r->git.n_allow = 0;
	}
	return 0;
}

/* The record must be out of the sandbox's reach: refuse a path inside a
 * writable bind, where the workload could replace it. */
static int open_record(const struct run_spec *r, struct err *err)
{
	char dir[PATH_MAX], real[PATH_MAX];
	const char *path = r->opt->record_path;
	const struct mount_op *op;
	char *slash;
	long i;
	int fd;

	if (snprintf(dir, sizeof(dir), "%s", path) >= (int)sizeof(dir))
		return err_set(err, ENAMETOOLONG, "--record %s: path too long", path);
	slash = strrchr(dir, '/');
	if (slash)
		*slash = '\0';
	if (!realpath(slash ? (dir[0] ? dir : "/") : ".", real))
		return err_sys(err, errno, "--record %s", path);
	i = mounts_exposing_bind(&r->sb.plan, real, MOUNTS_EXPOSE_WRITABLE);
	/* --weaken evidence-in-sandbox (HB-19) binds it there on purpose. */
	if (i >= 0 && !(r->opt->weaken & WEAKEN_EVIDENCE_IN_SANDBOX)) {
		op = &r->sb.plan.ops[i];
		return err_set(err, EPERM,
			       "--record %s: inside the writable bind %s (%s); the sandbox "
			       "could tamper with it",
			       path, op->source, op->what);
	}
	/* An earlier record at path stays until the first write replaces it. */
	fd = record_open_dir(path, err);
	return fd;
}

/* Register the session. The registry must be out of the sandbox's sight
 * entirely, not just out of its writable binds: it holds every session's
 * control socket, and connect(2) to a socket only needs write permission on
 * the socket inode, which a read-only mount does not take away (checked on
 * Linux 6.x). A bind below the registry would show one session's entry. */
int run_open_session(struct run *r, struct session *s, struct err *err)
{
	struct registry reg;
	const struct mount_op *op;
	long i;
	int rc;

	rc = session_registry_open(&reg, true, err);
	if (rc < 0)
		return rc;
	if (reg.warning[0])
		fprintf(stderr, "paddock: warning: %s\n", reg.warning);
	session_sweep(&reg);
	i = mounts_exposing_bind(&r->spec->sb.plan, reg.path, MOUNTS_EXPOSE_BELOW);
	if (i >= 0) {
		op = &r->spec->sb.plan.ops[i];
		rc = err_set(err, EPERM,
			     "session registry %s: the sandbox would see it through the bind %s "
			     "(%s); set XDG_RUNTIME_DIR to a private directory elsewhere",
			     reg.path, op->source, op->what);
		session_registry_close(&reg);
		return rc;
	}
	rc = run_witness_check(r, reg.path, err);
	if (rc < 0) {
		session_registry_close(&reg);
		return rc;
	}
	rc = session_create(s, &reg, r->spec->opt->name, r->spec->opt->detach,
			    r->spec->policy->sha256, r->spec->opt->argv, err);
	if (rc < 0)
		return rc;
	r->live.session = s;
	run_witness_name(r);
	/* Evaluation only (--weaken no-owner-check): the SO_PEERCRED check
	 * of the control socket is off, so the socket's mode alone decides. */
	s->no_owner_check = r->spec->opt->weaken & WEAKEN_NO_OWNER_CHECK;
	if (!r->spec->opt->detach)
		return 0;
	/* Errors until the workload has started are still the caller's. */
	r->live.caller_err = fcntl(2, F_DUPFD_CLOEXEC, 3);
	if (r->live.caller_err < 0)
		return err_sys(err, errno, "dup stderr");
	rc = session_open_output(s, err);
	return rc < 0 ? rc : output_start(r, err);
}

/* Who the workload is. A caller's own ids map to the policy's uid and gid
 * inside (or themselves). A root caller's would make the workload host uid
 * 0 without capabilities: root-owned files in read-only binds stay
 * readable (/etc/shadow is root:shadow 0640 and root may keep group 0),
 * whatever it leaves in the workspace is root's, and RLIMIT_NPROC does not
 * bind uid 0 (fork(2)). So unless weakened, a root caller's workload is
 * ROOT_CALLER_ID outside, and the writable binds are idmapped to keep the
 * workspace the caller's (sandbox/enter.c). */
bool supervisor_host_root(void)
{
	char buf[128] = "";
	unsigned a, b, n;
	FILE *f;

	if (getuid() != 0)
		return false;
	/* uid 0 of another user namespace (rootless Podman runs its runtime
	 * as one) is an unprivileged uid of the host: a caller like any. */
	f = fopen("/proc/self/uid_map", "re");
	if (!f)
		return true;
	if (!fgets(buf, sizeof(buf), f))
		buf[0] = '\0';
	fclose(f);
	return sscanf(buf, "%u %u %u", &a, &b, &n) != 3 || (a == 0 && b == 0 && n == 4294967295u);
}

static void set_ids(struct sandbox_spec *sb, const struct policy *p, uint64_t weaken)
{
	uint32_t su, sg;

	sb->caller_uid = getuid();
	sb->caller_gid = getgid();
	sb->root_caller = supervisor_host_root() && !(weaken & WEAKEN_HOST_ROOT);
	sb->uid_out = sb->root_caller ? ROOT_CALLER_ID : sb->caller_uid;
	sb->gid_out = sb->root_caller ? ROOT_CALLER_ID : sb->caller_gid;
	/* Root's subordinate range, when both files give one: its first id,
	 * which no system account shares (65534 is also "nobody"'s). */
	if (sb->root_caller && subid_lookup("/etc/subuid", "root", 0, &su) == 0 &&
	    subid_lookup("/etc/subgid", "root", 0, &sg) == 0) {
		sb->uid_out = su;
		sb->gid_out = sg;
		sb->subid = true;
	}
	/* Inside, a root caller's workload is "nobody" either way. */
	sb->uid_in = p->has_uid ? p->uid : sb->root_caller ? ROOT_CALLER_ID : sb->uid_out;
	sb->gid_in = p->has_gid ? p->gid : sb->root_caller ? ROOT_CALLER_ID : sb->gid_out;
}

/* --weaken rw-binds for a root caller: a writable bind is idmapped for
 * its unprivileged workload (sandbox/userns.c), which overlayfs refuses
 * (EINVAL: an image's rootfs, paddock oci's root caller). Such a bind the
 * policy made read-only stays read-only, with a warning; the record's
 * mounts show each bind's mode. The weakening still applies to every
 * other bind. */
static void keep_overlay_ro(struct run_spec *r)
{
	struct mount_plan *plan = &r->sb.plan;

	if (!(r->opt->weaken & WEAKEN_RW_BINDS) || !r->sb.root_caller)
		return;
	for (size_t i = 0; i < r->policy->n_mounts && i < plan->n; i++) {
		struct mount_op *op = &plan->ops[i];
		struct statfs sf;

		if (op->kind != MOUNT_OP_BIND || op->readonly || !r->policy->mounts[i].readonly ||
		    !op->source || statfs(op->source, &sf) < 0 ||
		    sf.f_type != OVERLAYFS_SUPER_MAGIC)
			continue;
		op->readonly = true;
		fprintf(stderr,
			"paddock: warning: --weaken rw-binds: %s (%s) stays read-only: overlayfs "
			"refuses the idmapped mount a root caller's writable bind needs\n",
			op->what, op->target);
	}
}

/* paddock oci's joined namespaces (options.join): kept in namespaces (the
 * policy asks for them), marked joined. What paddock adds inside its own
 * network namespace (the mediator's routes and listeners, port relays)
 * would change the owner's (a pod's): refused with a joined one. */
static int join_prepare(struct run_spec *r, struct err *err)
{
	struct sandbox_spec *sb = &r->sb;

	if (r->opt->n_join > SANDBOX_JOIN_MAX)
		return err_set(err, E2BIG, "more than %d namespaces to join", SANDBOX_JOIN_MAX);
	for (size_t i = 0; i < r->opt->n_join; i++) {
		const struct oci_join *j = &r->opt->join[i];
		unsigned bit = 1;

		/* The POLICY_NS_* bit of its CLONE_NEW* type. */
		while (bit <= POLICY_NS_CGROUP && sandbox_ns_flags(bit) != (unsigned long)j->nstype)
			bit <<= 1;
		if (bit > POLICY_NS_CGROUP ||
		    (bit & (POLICY_NS_USER | POLICY_NS_MOUNT | POLICY_NS_PID)))
			return err_set(err, EINVAL, "linux.namespaces[%zu]: cannot be joined",
				       j->index);
		sb->join[sb->n_join++] = (struct sandbox_nsjoin){bit, j->fd, j->ino};
		sb->joined |= bit;
	}
	if (!(sb->joined & POLICY_NS_NET))
		return 0;
	if (r->policy->network == POLICY_NET_MEDIATED)
		return err_set(err, EINVAL,
			       "network.mode \"mediated\": not with a joined network namespace "
			       "(the mediator's routes would change its owner's)");
	if (r->policy->n_ports)
		return err_set(err, EINVAL, "ports: not with a joined network namespace");
	return 0;
}

/* Everything up to the start; nothing of the sandbox exists on failure. */
int run_prepare(struct run_spec *r, const struct options *o, int *record_fd, struct err *err)
{
	struct sandbox_spec *sb = &r->sb;
	int rc;

	r->opt = o;
	sb->init_fd = -1;
	sb->new_session = !(o->weaken & WEAKEN_NO_NEW_SESSION);
	sb->no_sweep = o->weaken & WEAKEN_NO_SWEEP;
	sb->argv = o->argv;
	rc = load_policy(r, err);

	log_debug("policy loaded");
	if (rc < 0) {
		/* The record is written even when the launcher fails
		 * (docs/record.md), a policy error included. With no policy
		 * there is no plan and will be no sandbox: nothing could
		 * tamper with the record, so the writable-bind check has
		 * nothing to check; the directory checks still apply. */
		if (o->record_path && !o->explain)
			*record_fd = record_open_dir(o->record_path, &(struct err){0});
		return rc;
	}
	rc = expand_protect(r, err);
	log_debug("protected names found");
	if (rc < 0)
		return rc;
	r->stdio = stdio_choose(o);
	sb->tty = r->stdio == STDIO_TTY;
	/* The services' output into the session's files; --weaken
	 * direct-stdio leaves them init's fds 0-2, the caller's. */
	sb->svc_output = r->policy->n_services && r->stdio != STDIO_DIRECT;
	/* paddock-init's own deadline, a little after the supervisor's
	 * (supervise()): expiry must not depend on a running supervisor. */
	if (r->policy->ttl_ms) {
		struct timespec now;

		clock_gettime(CLOCK_MONOTONIC, &now);
		sb->deadline_ms = (int64_t)now.tv_sec * 1000 + now.tv_nsec / 1000000 +
				  (int64_t)r->policy->ttl_ms + INIT_DEADLINE_MARGIN_MS;
	}
	sb->namespaces = r->policy->namespaces;
	if (r->opt->weaken & WEAKEN_NO_PIDNS)
		sb->namespaces &= ~POLICY_NS_PID;
	if (r->opt->weaken & WEAKEN_HOST_NET)
		sb->namespaces &= ~POLICY_NS_NET;
	rc = join_prepare(r, err);
	if (rc < 0)
		return rc;
	set_ids(sb, r->policy, r->opt->weaken);
	if (mounts_plan(r->policy,
			(r->opt->weaken & WEAKEN_RW_BINDS ? MOUNTS_RW_BINDS : 0) |
			    (sb->namespaces & POLICY_NS_PID ? 0 : MOUNTS_HOST_PROC),
			&sb->plan) < 0 ||
	    env_build(r->policy, environ, r->opt->env_pass, r->opt->n_env_pass, &sb->env) < 0)
		return err_set(err, ENOMEM, "out of memory");
	keep_overlay_ro(r);
	for (size_t i = 0; i < sb->plan.n; i++) {
		struct mount_op *op = &sb->plan.ops[i];

		if (op->kind != MOUNT_OP_PROC)
			continue;
		op->masked = r->opt->proc_masked;
		op->n_masked = r->opt->n_proc_masked;
		op->readonly_paths = r->opt->proc_readonly;
		op->n_readonly_paths = r->opt->n_proc_readonly;
	}

	log_debug("planned");
	/* Before the sources are checked: a missing one is a policy error,
	 * and is recorded. */
	if (r->opt->record_path && !r->opt->explain) {
		*record_fd = open_record(r, err);
		if (*record_fd < 0)
			return *record_fd;
	}
	rc = mounts_check_sources(&sb->plan, err);
	if (rc < 0)
		return err_wrap(err, "policy %s", r->policy_label);
	log_debug("sources checked");
	/* The filter is built and checked here, before anything starts: a
	 * bad rule is a policy error, not a half-built sandbox. */
	if (!(r->opt->weaken & WEAKEN_NO_SECCOMP) && seccomp_default_applies(r->policy)) {
		/* The default profile was compiled at build time by the same
		 * code (tests/unit/test_seccomp_default.c checks they agree). */
		if (seccomp_default_info(&sb->seccomp) < 0)
			return err_set(err, ENOMEM, "out of memory");
	} else if (!(r->opt->weaken & WEAKEN_NO_SECCOMP)) {
		scmp_filter_ctx ctx = NULL;

		rc = seccomp_build(r->policy, &ctx, &sb->seccomp, err);
		if (rc < 0)
			return err_wrap(err, "policy %s", r->policy_label);
		/* The exported program is all the child needs. */
		if (ctx)
			seccomp_release(ctx);
	}
	sb->extra_bpf = r->opt->extra_bpf;
	sb->extra_bpf_len = r->opt->extra_bpf_len;
	rc = denials_prepare(r, err);
	if (rc < 0)
		return rc;
	/* After it: the notice goes in front of the program it made. */
	rc = notice_prepare(r, err);
	if (rc < 0)
		return rc;
	if (!(r->opt->weaken & WEAKEN_NO_LANDLOCK)) {
		rc = landlock_prepare(r->policy, &sb->plan, &sb->landlock, err);
		if (rc < 0)
			return rc;
	} else {
		sb->landlock.abi = landlock_abi(); /* recorded even when not applied */
	}
	sb->policy = r->policy;
	/* Without its own network namespace (--weaken host-net) there is
	 * nothing to mediate: the host's network is the weakening. */
	sb->anyip = r->policy->network == POLICY_NET_MEDIATED && (sb->namespaces & POLICY_NS_NET);
	/* --weaken proxy-env-only: the mediator without the routes that
	 * bring every connect to it (evaluation: HB-09's proxy-env-only). */
	if ((r->opt->weaken & WEAKEN_PROXY_ENV_ONLY) && !sb->anyip)
		return err_set(err, EINVAL,
			       "--weaken proxy-env-only: needs a mediated network (\"network\": "
			       "{\"mode\": \"mediated\"} or --allow-net)");
	sb->no_routes = (r->opt->weaken & WEAKEN_PROXY_ENV_ONLY) != 0;
	/* --weaken dns-open: never a resolver paddock guesses (the host's
	 * may be off the machine): the caller names it. */
	if ((r->opt->weaken & WEAKEN_DNS_OPEN) && !sb->anyip)
		return err_set(err, EINVAL,
			       "--weaken dns-open: needs a mediated network (\"network\": "
			       "{\"mode\": \"mediated\"} or --allow-net)");
	if ((r->opt->weaken & WEAKEN_DNS_OPEN) &&
	    (!getenv("PADDOCK_DNS_UPSTREAM") || !getenv("PADDOCK_DNS_UPSTREAM")[0]))
		return err_set(
		    err, EINVAL,
		    "--weaken dns-open: set PADDOCK_DNS_UPSTREAM=ADDR:PORT, the resolver "
		    "the open stub forwards to");
	rc = gate_prepare(r, sb->anyip, err);
	if (rc >= 0)
		rc = credentials_prepare(r, err);
	if (rc >= 0)
		rc = budget_prepare(r, err);
	if (rc >= 0)
		rc = jobs_prepare(r, err);
	if (rc < 0)
		return rc;
	/* --weaken verbose-denial, retry-unbounded weaken the mediator: with
	 * none, a knob that changes nothing would be recorded as a test. */
	if ((r->opt->weaken & (WEAKEN_VERBOSE_DENIAL | WEAKEN_RETRY_UNBOUNDED)) && !sb->anyip)
		return err_set(err, EINVAL,
			       "--weaken %s: needs a mediated network (\"network\": "
			       "{\"mode\": \"mediated\"} or --allow-net)",
			       r->opt->weaken & WEAKEN_VERBOSE_DENIAL ? "verbose-denial"
								      : "retry-unbounded");
	rc = ports_check(r, err);
	if (rc < 0 || r->opt->explain)
		return rc;
	log_debug("filters built");
	rc = sandbox_prepare_init(r->opt->init_path, &sb->init_fd, err);
	log_debug("init copied");
	return rc;
}

void run_spec_free(struct run_spec *s)
{
	seccomp_info_free(&s->sb.seccomp);
	landlock_info_free(&s->sb.landlock);
	policy_free(s->policy);
	mounts_plan_free(&s->sb.plan);
	git_watch_free(&s->git);
	free(s->approvals);
	s->approvals = NULL;
	env_free(s->sb.env);
	if (s->sb.init_fd >= 0)
		close(s->sb.init_fd);
	s->policy = NULL;
	s->sb.env = NULL;
	s->sb.init_fd = -1;
}
