/* HB-05: a busy port does not transfer ownership.
 *
 * Needs policy "ports" (the supervisor's loopback relay, being added in
 * parallel). The driver asks the paddock under test whether it accepts a
 * policy with "ports"; when it refuses, the case is NOT EXECUTED with that
 * reason. */
#include "harness.h"

#include <stdio.h>

static const char *const arms[] = {"enforced", NULL};

static const char ports_policy[] =
	"{\"version\": 1, \"mounts\": [{\"type\": \"bind\", \"source\": \"/usr\", \"mode\": "
	"\"ro\"}], \"ports\": [{\"host\": \"127.0.0.1:auto\", \"sandbox\": 8080}]}\n";

static void run(struct eval_ctx *ctx, const char *arm, struct result *r)
{
	char why[320];

	(void)arm;
	if (!paddock_accepts_policy(ctx, ports_policy, "\"ports\"", why, sizeof(why))) {
		result_evidence(r, "probe", "%s", why);
		result_not_executed(r, why);
		return;
	}
	result_not_executed(r, "policy \"ports\" is accepted, but the HB-05 driver (two sessions, "
			       "a busy port) is not implemented in this harness version");
}

const struct eval_case hb05_case = {
	.id = "HB-05",
	.title = "A busy port does not transfer ownership",
	.policy = NULL,
	.arms = arms,
	.run = run,
};
