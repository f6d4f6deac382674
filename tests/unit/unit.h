/* What every unit-test file shares (STYLE.md section 10). Include it after
 * <criterion/criterion.h>. */
#pragma once

#include <stdlib.h>

#if defined(__SANITIZE_ADDRESS__)
#include <sanitizer/lsan_interface.h>
#endif

/* LeakSanitizer does not report leaks made in Criterion's forked workers
 * (STYLE.md section 11), so each suite ends with an explicit check: give it
 * .fini = unit_leak_check, or call this at the end of its own .fini. Aborts
 * on a leak (the runner then exits 1); a no-op without ASan. */
static inline void unit_leak_check(void)
{
#if defined(__SANITIZE_ADDRESS__)
	if (__lsan_do_recoverable_leak_check())
		abort();
#endif
}
