/* One error model for the whole tree (STYLE.md section 3): functions return
 * a negative errno and, when the caller needs to know what failed, fill a
 * struct err. No malloc, so it works after fork and in PID 1. */
#pragma once

#include <errno.h>
#include <stdbool.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

struct err {
	int code;      /* positive errno, 0 when unset */
	char msg[512]; /* one line, no trailing newline */
};

/* The one body of err_set() and err_sys(): code (either sign, 0 taken as
 * EINVAL) and the formatted message; with sys, ": strerror(code)" too. */
__attribute__((format(printf, 4, 0))) static inline int err_vset(struct err *e, int code, bool sys,
								 const char *fmt, va_list ap)
{
	size_t n;

	if (code < 0)
		code = -code;
	if (code == 0)
		code = EINVAL;
	if (e) {
		e->code = code;
		vsnprintf(e->msg, sizeof(e->msg), fmt, ap);
		if (sys) {
			n = strlen(e->msg);
			snprintf(e->msg + n, sizeof(e->msg) - n, ": %s", strerror(code));
		}
	}
	return -code;
}

__attribute__((format(printf, 3, 4))) static inline int err_set(struct err *e, int code,
								const char *fmt, ...)
{
	va_list ap;
	int rc;

	va_start(ap, fmt);
	rc = err_vset(e, code, false, fmt, ap);
	va_end(ap);
	return rc;
}

/* Like err_set() but appends ": strerror(code)". */
__attribute__((format(printf, 3, 4))) static inline int err_sys(struct err *e, int code,
								const char *fmt, ...)
{
	va_list ap;
	int rc;

	va_start(ap, fmt);
	rc = err_vset(e, code, true, fmt, ap);
	va_end(ap);
	return rc;
}

/* Prefix context on the way up: "mount 3: <old message>". Returns -code. */
__attribute__((format(printf, 2, 3))) static inline int err_wrap(struct err *e, const char *fmt,
								 ...)
{
	char old[sizeof(e->msg)];
	va_list ap;
	size_t n;

	if (!e)
		return -EINVAL;
	memcpy(old, e->msg, sizeof(old));
	va_start(ap, fmt);
	vsnprintf(e->msg, sizeof(e->msg), fmt, ap);
	va_end(ap);
	n = strlen(e->msg);
	snprintf(e->msg + n, sizeof(e->msg) - n, ": %s", old);
	return -(e->code ? e->code : EINVAL);
}
