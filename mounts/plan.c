/* Mount planning: pure functions from a validated policy to an ordered list
 * of mount operations. No syscalls. */
#include "mounts.h"

#include <stdlib.h>
#include <string.h>

static enum mount_op_kind kind_of(enum policy_mount_type t)
{
	switch (t) {
	case POLICY_MOUNT_BIND:
		return MOUNT_OP_BIND;
	case POLICY_MOUNT_TMPFS:
		return MOUNT_OP_TMPFS;
	case POLICY_MOUNT_PROC:
		return MOUNT_OP_PROC;
	case POLICY_MOUNT_DEV:
		return MOUNT_OP_DEV;
	case POLICY_MOUNT_DIR:
		return MOUNT_OP_DIR;
	case POLICY_MOUNT_SYMLINK:
		return MOUNT_OP_SYMLINK;
	}
	return MOUNT_OP_DIR; /* cannot happen: the policy is validated */
}

static int dup_opt(const char *s, char **out)
{
	*out = NULL;
	if (!s)
		return 0;
	*out = strdup(s);
	return *out ? 0 : -ENOMEM;
}

void mounts_plan_free(struct mount_plan *plan)
{
	if (!plan)
		return;
	for (size_t i = 0; i < plan->n; i++) {
		free(plan->ops[i].source);
		free(plan->ops[i].target);
		free(plan->ops[i].link);
	}
	free(plan->ops);
	plan->ops = NULL;
	plan->n = 0;
}

static bool planned(const struct mount_plan *plan, enum mount_op_kind kind, const char *target)
{
	for (size_t i = 0; i < plan->n; i++)
		if (plan->ops[i].kind == kind && strcmp(plan->ops[i].target, target) == 0)
			return true;
	return false;
}

/* A protected path's ancestors below its bind must stay where they are:
 * rename(2) refuses to move a mount point, but not a directory that merely
 * has mount points below it, so "mv .git .git-old && mkdir -p .git/hooks"
 * would step around a read-only .git/hooks. Each ancestor becomes a mount
 * point of its own (bound on itself, nothing else changes). */
static int add_pins(struct mount_plan *plan, size_t *cap, const char *path, size_t index)
{
	long b = mounts_enclosing_bind(plan, path);
	size_t start;
	char *copy;

	if (b < 0)
		return 0;
	start = strlen(plan->ops[b].target);
	for (const char *c = strchr(path + start + 1, '/'); c; c = strchr(c + 1, '/')) {
		struct mount_op *op;

		copy = strndup(path, (size_t)(c - path));
		if (!copy)
			return -ENOMEM;
		if (planned(plan, MOUNT_OP_PIN, copy)) {
			free(copy);
			continue;
		}
		if (plan->n == *cap) {
			struct mount_op *grown = realloc(plan->ops, 2 * *cap * sizeof(*grown));

			if (!grown) {
				free(copy);
				return -ENOMEM;
			}
			memset(grown + *cap, 0, *cap * sizeof(*grown));
			plan->ops = grown;
			*cap *= 2;
		}
		op = &plan->ops[plan->n++];
		op->kind = MOUNT_OP_PIN;
		op->target = copy;
		snprintf(op->what, sizeof(op->what), "protect[%zu]", index);
	}
	return 0;
}

int mounts_plan(const struct policy *p, unsigned flags, struct mount_plan *out)
{
	struct mount_plan plan = {0};
	size_t total = p->n_mounts + 2 * p->n_protect;

	plan.ops = calloc(total ? total : 1, sizeof(*plan.ops));
	if (!plan.ops)
		return -ENOMEM;
	for (size_t i = 0; i < p->n_mounts; i++) {
		const struct policy_mount *m = &p->mounts[i];
		struct mount_op *op = &plan.ops[plan.n++];

		op->kind = kind_of(m->type);
		op->readonly =
		    m->type == POLICY_MOUNT_BIND && m->readonly && !(flags & MOUNTS_RW_BINDS);
		/* A fresh procfs needs a pid namespace of our own; the kernel
		 * refuses one for the host's pid namespace in a user
		 * namespace. */
		op->host_proc = m->type == POLICY_MOUNT_PROC && (flags & MOUNTS_HOST_PROC);
		op->optional = m->optional;
		op->copy_symlink = m->copy_symlink;
		op->size = m->size;
		op->mode = m->mode;
		snprintf(op->what, sizeof(op->what), "mounts[%zu]", m->index);
		if (dup_opt(m->source, &op->source) < 0 || dup_opt(m->target, &op->target) < 0 ||
		    dup_opt(m->link, &op->link) < 0) {
			mounts_plan_free(&plan);
			return -ENOMEM;
		}
	}
	if (!total)
		total = 1;
	for (size_t i = 0; i < p->n_protect; i++) {
		if (add_pins(&plan, &total, p->protect[i], i) < 0) {
			mounts_plan_free(&plan);
			return -ENOMEM;
		}
	}
	if (plan.n + p->n_protect + p->n_protect_ro + p->n_protect_rw > total) {
		size_t more = p->n_protect + p->n_protect_ro + p->n_protect_rw;
		struct mount_op *grown = realloc(plan.ops, (plan.n + more) * sizeof(*grown));

		if (!grown) {
			mounts_plan_free(&plan);
			return -ENOMEM;
		}
		memset(grown + plan.n, 0, more * sizeof(*grown));
		plan.ops = grown;
	}
	/* Protected paths come last: they lie inside binds, which must be in
	 * place first, and a read-only mount on top must not be hidden by a
	 * later mount. */
	for (size_t i = 0; i < p->n_protect; i++) {
		struct mount_op *op = &plan.ops[plan.n++];

		op->kind = MOUNT_OP_PROTECT;
		op->readonly = true;
		snprintf(op->what, sizeof(op->what), "protect[%zu]", i);
		if (dup_opt(p->protect[i], &op->target) < 0) {
			mounts_plan_free(&plan);
			return -ENOMEM;
		}
	}
	/* ... then a protected git directory that is a whole bind read-only,
	 * and on top of each, its data directories writable again (the
	 * allowlist, mounts/git.c). */
	for (size_t i = 0; i < p->n_protect_ro + p->n_protect_rw; i++) {
		struct mount_op *op = &plan.ops[plan.n++];
		bool ro = i < p->n_protect_ro;

		op->kind = MOUNT_OP_REMOUNT;
		op->readonly = ro;
		/* A plan holds far fewer than 10^9 ops: the index fits op->what. */
		snprintf(op->what, sizeof(op->what), "protect_git[%u]",
			 (unsigned)(i % 1000000000u));
		if (dup_opt(ro ? p->protect_ro[i] : p->protect_rw[i - p->n_protect_ro],
			    &op->target) < 0) {
			mounts_plan_free(&plan);
			return -ENOMEM;
		}
	}
	*out = plan;
	return 0;
}

/* Is path equal to dir or below it? Both are normalised absolute paths. */
static size_t under(const char *path, const char *dir)
{
	size_t n = strlen(dir);

	if (strncmp(path, dir, n) != 0)
		return 0;
	if (path[n] != '\0' && path[n] != '/')
		return 0;
	return n;
}

long mounts_enclosing_bind(const struct mount_plan *plan, const char *sandbox_path)
{
	long best = -1;
	size_t best_len = 0;

	for (size_t i = 0; i < plan->n; i++) {
		const struct mount_op *op = &plan->ops[i];
		size_t n;

		if (op->kind != MOUNT_OP_BIND)
			continue;
		n = under(sandbox_path, op->target);
		if (n && n >= best_len) {
			best = (long)i;
			best_len = n;
		}
	}
	return best;
}

int mounts_host_path(const struct mount_plan *plan, const char *sandbox_path, char **out)
{
	long i = mounts_enclosing_bind(plan, sandbox_path);
	const struct mount_op *op;
	const char *rest;

	*out = NULL;
	if (i < 0)
		return -ENOENT;
	op = &plan->ops[i];
	rest = sandbox_path + strlen(op->target);
	if (asprintf(out, "%s%s", op->source, rest) < 0) {
		*out = NULL;
		return -ENOMEM;
	}
	return 0;
}

long mounts_exposing_bind(const struct mount_plan *plan, const char *host_path, unsigned flags)
{
	for (size_t i = 0; i < plan->n; i++) {
		const struct mount_op *op = &plan->ops[i];

		if (op->kind != MOUNT_OP_BIND || op->skipped || !op->source || !op->source[0])
			continue;
		if ((flags & MOUNTS_EXPOSE_WRITABLE) && op->readonly)
			continue;
		if (under(host_path, op->source) ||
		    ((flags & MOUNTS_EXPOSE_BELOW) && under(op->source, host_path)))
			return (long)i;
	}
	return -1;
}

const char *mounts_op_name(enum mount_op_kind k)
{
	static const char *const names[] = {
	    [MOUNT_OP_BIND] = "bind",	    [MOUNT_OP_TMPFS] = "tmpfs",
	    [MOUNT_OP_PROC] = "proc",	    [MOUNT_OP_DEV] = "dev",
	    [MOUNT_OP_DIR] = "dir",	    [MOUNT_OP_SYMLINK] = "symlink",
	    [MOUNT_OP_PROTECT] = "protect", [MOUNT_OP_PIN] = "pin",
	    [MOUNT_OP_REMOUNT] = "remount",
	};

	return (unsigned)k < sizeof(names) / sizeof(names[0]) ? names[k] : "?";
}
