/* Debug tracing, compiled in and off by default: PADDOCK_DEBUG=1 turns it on. */
#pragma once

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

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
	va_list ap;

	if (!log_enabled())
		return;
	va_start(ap, fmt);
	fputs("paddock: debug: ", stderr);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	va_end(ap);
}
