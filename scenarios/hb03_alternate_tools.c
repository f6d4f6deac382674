/* HB-03: alternate tools retain resource restrictions.
 *
 * The two adapters are `paddock run` (the shell route) and `paddock exec`
 * (a second tool route into a running session, being added in parallel).
 * The driver probes for `paddock exec`; without it the case is NOT
 * EXECUTED with that reason: there is no second route to compare, and a
 * PASS would claim a route was tested that does not exist. */
#include "harness.h"

#include <stdio.h>

static const char *const arms[] = {"enforced", "weakened:rw-binds", NULL};

static void run(struct eval_ctx *ctx, const char *arm, struct result *r)
{
	char why[320];

	(void)arm;
	if (!paddock_has_exec(ctx, why, sizeof(why))) {
		result_evidence(r, "probe", "%s", why);
		result_not_executed(r, why);
		return;
	}
	/* The route exists, but this harness version has no driver that
	 * compares it with the shell route yet: say so, never PASS. */
	result_not_executed(r, "'paddock exec' is present, but the HB-03 comparison driver is not "
			       "implemented in this harness version");
}

const struct eval_case hb03_case = {
	.id = "HB-03",
	.title = "Alternate tools retain resource restrictions",
	.policy = "hb01_policy.json",
	.arms = arms,
	.run = run,
};
