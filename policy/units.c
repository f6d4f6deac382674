/* Durations and byte sizes as written in a policy ("500ms", "64m"). */
#include "policy.h"

#include <errno.h>
#include <string.h>

#define MAX_DURATION_MS (30ull * 24 * 60 * 60 * 1000)

/* Leading decimal digits of s (no sign, no spaces): their count, the value
 * in *out, and *big when the value does not fit in 64 bits. */
static size_t digits(const char *s, uint64_t *out, bool *big)
{
	uint64_t v = 0;
	size_t n;

	*big = false;
	for (n = 0; s[n] >= '0' && s[n] <= '9'; n++)
		if (__builtin_mul_overflow(v, 10, &v) ||
		    __builtin_add_overflow(v, (uint64_t)(s[n] - '0'), &v))
			*big = true;
	*out = v;
	return n;
}

int policy_parse_duration(const char *s, uint64_t *out_ms)
{
	static const struct {
		const char *unit;
		uint64_t ms;
	} units[] = {{"ms", 1}, {"s", 1000}, {"m", 60 * 1000}, {"h", 60 * 60 * 1000}};
	uint64_t v, ms;
	size_t n;
	bool big;

	if (!s)
		return -EINVAL;
	n = digits(s, &v, &big);
	if (n == 0)
		return -EINVAL;
	for (size_t i = 0; i < sizeof(units) / sizeof(units[0]); i++) {
		if (strcmp(s + n, units[i].unit) != 0)
			continue;
		if (big || __builtin_mul_overflow(v, units[i].ms, &ms) || ms > MAX_DURATION_MS)
			return -ERANGE;
		*out_ms = ms;
		return 0;
	}
	return -EINVAL;
}

int policy_parse_size(const char *s, uint64_t *out)
{
	uint64_t v, mult;
	size_t n;
	bool big;

	if (!s)
		return -EINVAL;
	n = digits(s, &v, &big);
	if (n == 0)
		return -EINVAL;
	if (strcmp(s + n, "") == 0)
		mult = 1;
	else if (strcmp(s + n, "k") == 0)
		mult = 1ull << 10;
	else if (strcmp(s + n, "m") == 0)
		mult = 1ull << 20;
	else if (strcmp(s + n, "g") == 0)
		mult = 1ull << 30;
	else
		return -EINVAL;
	if (big || __builtin_mul_overflow(v, mult, &v))
		return -ERANGE;
	*out = v;
	return 0;
}
