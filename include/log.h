/* Debug tracing, compiled in and off by default: PADDOCK_DEBUG=1 turns it on. */
#pragma once

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static inline int log_enabled(void)
{
	static int on = -1;

	if (on < 0) {
		const char *v = getenv("PADDOCK_DEBUG");
		on = v && *v && *v != '0';
	}
	return on;
}

__attribute__((format(printf, 1, 2))) static inline void log_debug(const char *fmt, ...)
{
	struct timespec now;
	va_list ap;

	if (!log_enabled())
		return;
	clock_gettime(CLOCK_MONOTONIC, &now);
	va_start(ap, fmt);
	fprintf(stderr, "paddock: debug: %ld.%06ld: ", (long)now.tv_sec, now.tv_nsec / 1000);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	va_end(ap);
}
