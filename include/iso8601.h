/* The one ISO-8601 formatter: UTC with milliseconds, "2026-12-01T07:40:05.123Z"
 * (records, session.json, leases). libc only. */
#pragma once

#include <stdint.h>
#include <stdio.h>
#include <time.h>

#define ISO8601_LEN 32 /* a buffer that always holds one */

/* ts plus after_ms into buf. */
static inline void iso8601(const struct timespec *ts, uint64_t after_ms, char *buf, size_t size)
{
	struct timespec t = *ts;
	struct tm tm;
	char base[24];

	t.tv_sec += (time_t)(after_ms / 1000);
	t.tv_nsec += (long)(after_ms % 1000) * 1000000L;
	if (t.tv_nsec >= 1000000000L) {
		t.tv_sec++;
		t.tv_nsec -= 1000000000L;
	}
	gmtime_r(&t.tv_sec, &tm);
	strftime(base, sizeof(base), "%Y-%m-%dT%H:%M:%S", &tm);
	snprintf(buf, size, "%s.%03uZ", base, (unsigned)(t.tv_nsec / 1000000L) % 1000u);
}

/* Now (CLOCK_REALTIME) plus after_ms into buf. */
static inline void iso8601_now(uint64_t after_ms, char *buf, size_t size)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	iso8601(&ts, after_ms, buf, size);
}
