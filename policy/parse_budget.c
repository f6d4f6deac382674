/* "attempts" and "deadline" of a network rule or grant (docs/network.md,
 * "Denials and attempt budgets"): how often one logical operation may be
 * tried through the mediator, and for how long. */
#include "parse.h"

#include <stdio.h>

#include "json.h"

int policy_parse_budget(const cJSON *obj, const char *path, struct policy_net_budget *b,
			struct err *err)
{
	const cJSON *a = cJSON_GetObjectItemCaseSensitive(obj, "attempts");
	const cJSON *d = cJSON_GetObjectItemCaseSensitive(obj, "deadline");
	char sub[JPATH_MAX + 96];
	const char *s;
	uint64_t v;
	int r;

	if (a) {
		snprintf(sub, sizeof(sub), "%s.attempts", path);
		r = policy_json_uint(a, sub, POLICY_BUDGET_ATTEMPTS_MAX, &v, err);
		if (r >= 0 && v == 0)
			r = -EINVAL;
		if (r < 0)
			return err_set(err, EINVAL, "%s: must be an integer from 1 to %d", sub,
				       POLICY_BUDGET_ATTEMPTS_MAX);
		b->attempts = (unsigned)v;
	}
	if (d) {
		snprintf(sub, sizeof(sub), "%s.deadline", path);
		r = policy_json_string(d, sub, &s, err);
		if (r < 0)
			return r;
		r = policy_parse_duration(s, &v);
		if (r < 0 || v == 0 || v > POLICY_BUDGET_DEADLINE_MAX)
			return err_set(err, EINVAL,
				       "%s: %s is not a duration from 1ms to 24h (as \"500ms\", "
				       "\"30s\", \"2m\")",
				       sub, QUOTE(s));
		b->deadline_ms = v;
	}
	return 0;
}
