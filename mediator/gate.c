/* The release gate (docs/network.md, "Release gate"): which requests are
 * publications, the approvals not yet spent, and the session's taint.
 * Pure: loop.c holds the requests and calls in here. */
#include "mediator.h"

#include <stdlib.h>
#include <string.h>

struct gate {
	bool off;	    /* --weaken gate-off: nothing is held, taint ignored */
	bool tainted;	    /* a private rule's response reached the workload */
	uint64_t hold_ms;   /* network.hold */
	struct approval *a; /* unspent, in the order given */
	size_t n, cap;
};

int gate_new(bool off, uint64_t hold_ms, struct gate **out)
{
	struct gate *g = calloc(1, sizeof(*g));

	if (!g)
		return -ENOMEM;
	g->off = off;
	g->hold_ms = hold_ms;
	*out = g;
	return 0;
}

void gate_free(struct gate *g)
{
	if (!g)
		return;
	free(g->a);
	free(g);
}

uint64_t gate_hold_ms(const struct gate *g)
{
	return g->hold_ms;
}

bool gate_tainted(const struct gate *g)
{
	return g->tainted;
}

int gate_add(struct gate *g, const struct approval *a)
{
	if (g->n == GATE_APPROVALS_MAX)
		return -ENOSPC;
	if (g->n == g->cap) {
		size_t cap = g->cap ? 2 * g->cap : 16;
		struct approval *v = realloc(g->a, cap * sizeof(*v));

		if (!v)
			return -ENOMEM;
		g->a = v;
		g->cap = cap;
	}
	g->a[g->n++] = *a;
	return 0;
}

bool gate_dest_equal(const struct approval_dest *x, const struct approval_dest *y)
{
	return x->port == y->port && strcmp(x->host, y->host) == 0 &&
	       strcmp(x->target, y->target) == 0;
}

bool gate_take(struct gate *g, const char *digest, const struct approval_dest *d)
{
	for (size_t i = 0; i < g->n; i++) {
		if (strcmp(g->a[i].digest, digest) != 0 || !gate_dest_equal(&g->a[i].dest, d))
			continue;
		/* Single use: spent now, whatever becomes of the request. */
		memmove(&g->a[i], &g->a[i + 1], (g->n - i - 1) * sizeof(*g->a));
		g->n--;
		return true;
	}
	return false;
}

bool gate_holds(const struct gate *g, const struct policy_net_rule *r, bool has_body)
{
	if (g->off || !has_body || r->private)
		return false;
	return r->publish || g->tainted;
}

bool gate_tunnel_ok(const struct gate *g, const struct policy_net_rule *r)
{
	return g->off || !g->tainted || r->private;
}

bool gate_taint(struct gate *g, const struct policy_net_rule *r)
{
	if (g->off || g->tainted || !r->private)
		return false;
	g->tainted = true;
	return true;
}
