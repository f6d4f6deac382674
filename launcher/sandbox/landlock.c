/* Landlock (Documentation/userspace-api/landlock.rst): defence in depth for
 * writes. The mount plan already makes the root and the read-only binds
 * read-only; Landlock additionally refuses every write-type access outside
 * the writable binds, the tmpfs mounts and the few device nodes and /proc
 * files a workload writes, so a mount mistake or a writable mount we did not
 * plan (an fd passed in, a mount the kernel lets the workload create) is
 * not enough to write elsewhere. Reads and execute are not handled: what is
 * readable is decided by what is mounted.
 *
 * The rules are derived in the parent (pure, testable), anchored on sandbox
 * paths, and opened and enforced in the child after pivot_root. */
#include "sandbox.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "../../include/cleanup.h"
#include "../../include/landlock.h"
#include "../../include/sys.h"

#define FS(x) LANDLOCK_ACCESS_FS_##x

/* Every write-type right of ABI 1; later ABIs add REFER (2), TRUNCATE (3)
 * and IOCTL_DEV (5). */
#define FS_WRITE_ABI1                                                                       \
	(FS(WRITE_FILE) | FS(REMOVE_DIR) | FS(REMOVE_FILE) | FS(MAKE_CHAR) | FS(MAKE_DIR) | \
	 FS(MAKE_REG) | FS(MAKE_SOCK) | FS(MAKE_FIFO) | FS(MAKE_BLOCK) | FS(MAKE_SYM))

/* Writing to an already existing device node or proc file: open for
 * writing, O_TRUNC (shells open "> /dev/null" with it), and ioctl on a
 * device (a tty's termios). Only these are valid on a non-directory. */
#define FS_WRITE_EXISTING (FS(WRITE_FILE) | FS(TRUNCATE) | FS(IOCTL_DEV))

static const struct {
	uint64_t bit;
	const char *name;
} fs_names[] = {
    {FS(EXECUTE), "execute"},	      /* ABI 1 */
    {FS(WRITE_FILE), "write_file"},   /* ABI 1 */
    {FS(READ_FILE), "read_file"},     /* ABI 1 */
    {FS(READ_DIR), "read_dir"},	      /* ABI 1 */
    {FS(REMOVE_DIR), "remove_dir"},   /* ABI 1 */
    {FS(REMOVE_FILE), "remove_file"}, /* ABI 1 */
    {FS(MAKE_CHAR), "make_char"},     /* ABI 1 */
    {FS(MAKE_DIR), "make_dir"},	      /* ABI 1 */
    {FS(MAKE_REG), "make_reg"},	      /* ABI 1 */
    {FS(MAKE_SOCK), "make_sock"},     /* ABI 1 */
    {FS(MAKE_FIFO), "make_fifo"},     /* ABI 1 */
    {FS(MAKE_BLOCK), "make_block"},   /* ABI 1 */
    {FS(MAKE_SYM), "make_sym"},	      /* ABI 1 */
    {FS(REFER), "refer"},	      /* ABI 2 */
    {FS(TRUNCATE), "truncate"},	      /* ABI 3 */
    {FS(IOCTL_DEV), "ioctl_dev"},     /* ABI 5 */
};

const char *landlock_access_name(uint64_t bit)
{
	for (size_t i = 0; i < sizeof(fs_names) / sizeof(fs_names[0]); i++)
		if (fs_names[i].bit == bit)
			return fs_names[i].name;
	return NULL;
}

const char *landlock_net_access_name(uint64_t bit)
{
	if (bit == LANDLOCK_ACCESS_NET_BIND_TCP)
		return "bind_tcp";
	if (bit == LANDLOCK_ACCESS_NET_CONNECT_TCP)
		return "connect_tcp";
	return NULL;
}

static uint64_t fs_write_rights(int abi)
{
	uint64_t r = FS_WRITE_ABI1;

	if (abi >= 2)
		r |= FS(REFER);
	if (abi >= 3)
		r |= FS(TRUNCATE);
	if (abi >= 5)
		r |= FS(IOCTL_DEV);
	return r;
}

void landlock_info_free(struct landlock_info *info)
{
	if (!info)
		return;
	for (size_t i = 0; i < info->n_rules; i++)
		free(info->rules[i].path);
	free(info->rules);
	free(info->tcp_bind);
	free(info->tcp_connect);
	*info = (struct landlock_info){0};
}

/* The running kernel's ABI version, or -errno when it has no Landlock:
 * -ENOSYS (built without CONFIG_SECURITY_LANDLOCK, or a seccomp filter of
 * an outer sandbox hiding it) or -EOPNOTSUPP (built in but not enabled by
 * the lsm= boot parameter). */
static int probe_abi(void)
{
	int r = sys_landlock_create_ruleset(NULL, 0, LANDLOCK_CREATE_RULESET_VERSION);

	return r == 0 ? -EOPNOTSUPP : r;
}

int landlock_abi(void)
{
	int r = probe_abi();

	return r > 0 ? r : 0;
}

static const char *why_missing(int r)
{
	if (r == -ENOSYS)
		return "not built in (CONFIG_SECURITY_LANDLOCK) or filtered by a sandbox";
	if (r == -EOPNOTSUPP)
		return "built in but disabled: add landlock to the lsm= boot parameter";
	return strerror(-r);
}

/* Append a rule for path (target, or target + suffix) with access masked by
 * what the ruleset handles; a rule with nothing left is dropped, since the
 * kernel refuses an empty one (ENOMSG). */
static int add_rule(struct landlock_info *li, const char *target, const char *suffix,
		    uint64_t access, bool optional)
{
	struct landlock_rule *rules;
	char *path = NULL;
	size_t n = strlen(target);

	access &= li->handled_fs;
	if (!access)
		return 0;
	/* target is a normalised absolute path: only "/" ends with a slash. */
	if (asprintf(&path, "%.*s%s", (int)(suffix && n && target[n - 1] == '/' ? n - 1 : n),
		     target, suffix ? suffix : "") < 0)
		return -ENOMEM;
	rules = realloc(li->rules, (li->n_rules + 1) * sizeof(*rules));
	if (!rules) {
		free(path);
		return -ENOMEM;
	}
	li->rules = rules;
	rules[li->n_rules++] = (struct landlock_rule){
	    .path = path,
	    .access = access,
	    .optional = optional,
	};
	return 0;
}

/* The private /dev of dev_op() (mounts/apply.c): /dev/shm is a writable
 * tmpfs; the bound host character devices and the devpts instance are
 * written to but never created in (the /dev tmpfs itself is read-only). */
static int dev_rules(struct landlock_info *li, const char *target)
{
	static const char *const nodes[] = {"/null", "/zero",	"/full",
					    "/tty",  "/random", "/urandom"};
	int r = add_rule(li, target, "/shm", li->handled_fs, false);

	for (size_t i = 0; r == 0 && i < sizeof(nodes) / sizeof(nodes[0]); i++)
		r = add_rule(li, target, nodes[i], FS_WRITE_EXISTING, false);
	if (r == 0)
		r = add_rule(li, target, "/pts", FS_WRITE_EXISTING, false);
	return r;
}

static int plan_rules(struct landlock_info *li, const struct mount_plan *plan)
{
	int r = 0;

	for (size_t i = 0; r == 0 && i < plan->n; i++) {
		const struct mount_op *op = &plan->ops[i];

		switch (op->kind) {
		case MOUNT_OP_BIND:
			/* A read-only bind needs no rule: no write is allowed
			 * where no rule says so. A skipped or recreated-as-
			 * symlink bind mounts nothing to grant on; the parent
			 * may not know yet whether a copy-symlink source is a
			 * symlink, so the rule is marked optional. */
			if (op->readonly || op->skipped || op->as_symlink)
				break;
			r = add_rule(li, op->target, NULL, li->handled_fs,
				     op->optional || op->copy_symlink);
			break;
		case MOUNT_OP_TMPFS:
			r = add_rule(li, op->target, NULL, li->handled_fs, false);
			break;
		case MOUNT_OP_DEV:
			r = dev_rules(li, op->target);
			break;
		case MOUNT_OP_PROC:
			/* Processes write their own /proc/self files
			 * (oom_score_adj, comm, ...), shells with O_TRUNC; the
			 * procfs mount and its masking already limit what is
			 * writable there, and nothing can be created in it. */
			r = add_rule(li, op->target, NULL, FS(WRITE_FILE) | FS(TRUNCATE), false);
			break;
		default:
			/* Directories and symlinks of the read-only root,
			 * protected paths (read-only mounts inside a bind), and
			 * pinned directories (bound on themselves inside a
			 * bind, whose rule already covers them: Landlock walks
			 * up across mount points). A kind added later gets no
			 * rule, which fails closed: writes there are refused. */
			break;
		}
	}
	return r;
}

static int copy_ports(const uint16_t *src, size_t n, uint16_t **out, size_t *n_out)
{
	*out = NULL;
	*n_out = 0;
	if (!n)
		return 0;
	*out = malloc(n * sizeof(**out));
	if (!*out)
		return -ENOMEM;
	memcpy(*out, src, n * sizeof(**out));
	*n_out = n;
	return 0;
}

static int tcp_rules(struct landlock_info *li, const struct policy *p, struct err *err)
{
	if (!p->landlock_tcp)
		return 0;
	if (li->abi < 4) {
		if (p->landlock_mode == POLICY_LANDLOCK_REQUIRED)
			return err_set(err, EOPNOTSUPP,
				       "landlock: the policy restricts TCP, which needs Landlock "
				       "ABI 4 (Linux 6.7); this kernel has ABI %d",
				       li->abi);
		/* Best effort: the filesystem rules still apply, TCP stays
		 * unrestricted, and the record shows no handled_net. */
		return 0;
	}
	li->handled_net = LANDLOCK_ACCESS_NET_BIND_TCP | LANDLOCK_ACCESS_NET_CONNECT_TCP;
	if (copy_ports(p->landlock_tcp_bind, p->n_landlock_tcp_bind, &li->tcp_bind,
		       &li->n_tcp_bind) < 0 ||
	    copy_ports(p->landlock_tcp_connect, p->n_landlock_tcp_connect, &li->tcp_connect,
		       &li->n_tcp_connect) < 0)
		return err_set(err, ENOMEM, "landlock: out of memory");
	return 0;
}

int landlock_prepare(const struct policy *p, const struct mount_plan *plan,
		     struct landlock_info *info, struct err *err)
{
	struct landlock_info li = {0};
	int abi = probe_abi();
	int r;

	*info = li;
	if (abi < 0) {
		if (p->landlock_mode == POLICY_LANDLOCK_REQUIRED)
			return err_set(err, EOPNOTSUPP,
				       "landlock: required by the policy, but this kernel has no "
				       "Landlock (%s)",
				       why_missing(abi));
		return 0;
	}
	li.abi = abi;
	li.enabled = true;
	li.handled_fs = fs_write_rights(abi);
	/* A scoped domain cannot signal processes outside it (the
	 * supervisor, the caller's shell) nor connect to abstract Unix
	 * sockets bound outside it (a host session bus, an X server). */
	if (abi >= 6)
		li.scoped = LANDLOCK_SCOPE_ABSTRACT_UNIX_SOCKET | LANDLOCK_SCOPE_SIGNAL;
	r = tcp_rules(&li, p, err);
	if (r == 0 && plan_rules(&li, plan) < 0)
		r = err_set(err, ENOMEM, "landlock: out of memory");
	if (r < 0) {
		landlock_info_free(&li);
		return r;
	}
	*info = li;
	return 0;
}

/* Open a rule's path in the new root into *out. The targets were created by
 * mounts_apply() without following symlinks, so none is followed here
 * either: a symlink would move the rule elsewhere. openat2() exists on every
 * kernel that has Landlock (5.6 < 5.13). Returns 1 when opened, 0 when the
 * rule is to be skipped, -errno. */
static int open_rule_path(const struct landlock_rule *rule, int *out, bool *is_dir, struct err *err)
{
	cleanup_close int fd = -1;
	struct stat st;

	fd = sys_openat2(AT_FDCWD, rule->path, O_PATH | O_NOFOLLOW | O_CLOEXEC,
			 RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS);
	if (fd == -ENOENT && rule->optional)
		return 0; /* an optional bind whose source was missing */
	if (fd < 0)
		return err_sys(err, fd, "landlock: open %s", rule->path);
	if (fstat(fd, &st) < 0)
		return err_sys(err, errno, "landlock: stat %s", rule->path);
	if (S_ISLNK(st.st_mode)) {
		if (rule->optional)
			return 0; /* a copy-symlink bind: no mount, nothing to grant */
		return err_set(err, ELOOP, "landlock: %s is a symlink", rule->path);
	}
	*is_dir = S_ISDIR(st.st_mode);
	*out = take_fd(&fd);
	return 1;
}

static int add_path_rule(int ruleset, const struct landlock_rule *rule, struct err *err)
{
	struct paddock_landlock_path_beneath_attr attr = {.allowed_access = rule->access};
	cleanup_close int fd = -1;
	bool is_dir = false;
	int r = open_rule_path(rule, &fd, &is_dir, err);

	if (r <= 0)
		return r;
	/* A rule on a file (a bind of a single file, a device node) may only
	 * carry file rights: EINVAL otherwise. */
	if (!is_dir)
		attr.allowed_access &= PADDOCK_LANDLOCK_ACCESS_FILE;
	if (!attr.allowed_access)
		return 0;
	attr.parent_fd = fd;
	r = sys_landlock_add_rule(ruleset, LANDLOCK_RULE_PATH_BENEATH, &attr, 0);
	if (r < 0)
		return err_sys(err, r, "landlock: add rule %s", rule->path);
	return 0;
}

static int add_port_rules(int ruleset, const uint16_t *ports, size_t n, uint64_t access,
			  struct err *err)
{
	for (size_t i = 0; i < n; i++) {
		struct paddock_landlock_net_port_attr attr = {
		    .allowed_access = access,
		    .port = ports[i],
		};
		int r = sys_landlock_add_rule(ruleset, LANDLOCK_RULE_NET_PORT, &attr, 0);

		if (r < 0)
			return err_sys(err, r, "landlock: add rule tcp %s port %u",
				       landlock_net_access_name(access), ports[i]);
	}
	return 0;
}

/* The files behind the workload's stdout and stderr (a host file, a
 * terminal) lie outside every rule, so reopening them by path
 * ("echo x > /dev/stderr", /proc/self/fd/1) would be refused although the
 * workload already holds them open for writing. A rule on exactly that
 * inode gives no new access. Pipes and sockets are not subject to Landlock
 * and need none. */
static int add_stdio_rules(int ruleset, uint64_t handled, struct err *err)
{
	for (int fd = 0; fd < 3; fd++) {
		struct paddock_landlock_path_beneath_attr attr = {.parent_fd = fd};
		int fl = fcntl(fd, F_GETFL);
		struct stat st;
		int r;

		if (fl < 0 || (fl & O_ACCMODE) == O_RDONLY || fstat(fd, &st) < 0)
			continue;
		if (!S_ISREG(st.st_mode) && !S_ISCHR(st.st_mode))
			continue;
		attr.allowed_access = handled & PADDOCK_LANDLOCK_ACCESS_FILE &
				      (LANDLOCK_ACCESS_FS_WRITE_FILE | LANDLOCK_ACCESS_FS_TRUNCATE |
				       LANDLOCK_ACCESS_FS_IOCTL_DEV);
		if (!attr.allowed_access)
			continue;
		r = sys_landlock_add_rule(ruleset, LANDLOCK_RULE_PATH_BENEATH, &attr, 0);
		if (r < 0)
			return err_sys(err, r, "landlock: add rule for fd %d", fd);
	}
	return 0;
}

int landlock_ruleset(const struct landlock_info *info, struct err *err)
{
	/* The full struct whatever the ABI: the fields an older kernel does
	 * not know are zero, because prepare set them only for the ABI that
	 * has them. */
	struct paddock_landlock_ruleset_attr attr = {
	    .handled_access_fs = info->handled_fs,
	    .handled_access_net = info->handled_net,
	    .scoped = info->scoped,
	};
	cleanup_close int ruleset = -1;
	int r;

	if (!info->enabled)
		return err_set(err, EINVAL, "landlock: not enabled");
	ruleset = sys_landlock_create_ruleset(&attr, sizeof(attr), 0);
	if (ruleset < 0)
		return err_sys(err, ruleset, "landlock: create ruleset (ABI %d)", info->abi);
	for (size_t i = 0; i < info->n_rules; i++) {
		r = add_path_rule(ruleset, &info->rules[i], err);
		if (r < 0)
			return r;
	}
	r = add_stdio_rules(ruleset, info->handled_fs, err);
	if (r < 0)
		return r;
	if (info->handled_net) {
		r = add_port_rules(ruleset, info->tcp_bind, info->n_tcp_bind,
				   LANDLOCK_ACCESS_NET_BIND_TCP, err);
		if (r < 0)
			return r;
		r = add_port_rules(ruleset, info->tcp_connect, info->n_tcp_connect,
				   LANDLOCK_ACCESS_NET_CONNECT_TCP, err);
		if (r < 0)
			return r;
	}
	return take_fd(&ruleset);
}

int landlock_apply(const struct landlock_info *info, struct err *err)
{
	cleanup_close int ruleset = -1;
	int r;

	if (!info->enabled)
		return 0;
	ruleset = landlock_ruleset(info, err);
	if (ruleset < 0)
		return ruleset;
	/* Enforced on this thread and inherited by every descendant across
	 * execve; a domain can only be narrowed further, never lifted. The
	 * kernel demands no_new_privs (set by caps_drop_all()) so that an
	 * unprivileged domain cannot be imposed on a setuid program to
	 * confuse it (landlock_restrict_self(2)); -EPERM without it. */
	r = sys_landlock_restrict_self(ruleset, 0);
	if (r < 0)
		return err_sys(err, r, "landlock: restrict_self");
	return 0;
}

const char *landlock_scope_name(uint64_t bit)
{
	return bit == 1 ? "abstract_unix_socket" : bit == 2 ? "signal" : "unknown";
}
