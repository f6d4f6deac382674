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

int mounts_plan(const struct policy *p, unsigned flags, struct mount_plan *out)
{
	struct mount_plan plan = {0};
	size_t total = p->n_mounts + p->n_protect;

	plan.ops = calloc(total ? total : 1, sizeof(*plan.ops));
	if (!plan.ops)
		return -ENOMEM;
	for (size_t i = 0; i < p->n_mounts; i++) {
		const struct policy_mount *m = &p->mounts[i];
		struct mount_op *op = &plan.ops[plan.n++];

		op->kind = kind_of(m->type);
		op->readonly = m->type == POLICY_MOUNT_BIND && m->readonly &&
			       !(flags & MOUNTS_RW_BINDS);
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
