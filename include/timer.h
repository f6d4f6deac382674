/* One-shot timerfd deadlines in milliseconds (libc only: init uses it). */
#pragma once

#include <errno.h>
#include <stdint.h>
#include <sys/timerfd.h>
#include <time.h>

/* Arm tfd to fire once, ms milliseconds from now. An all-zero it_value
 * would disarm the timer, so 0 means "now" (1 ns). 0 or -errno. */
static inline int timer_arm_ms(int tfd, uint64_t ms)
{
	struct itimerspec its = {0};

	its.it_value.tv_sec = (time_t)(ms / 1000);
	its.it_value.tv_nsec = (long)(ms % 1000) * 1000000L;
	if (its.it_value.tv_sec == 0 && its.it_value.tv_nsec == 0)
		its.it_value.tv_nsec = 1;
	return timerfd_settime(tfd, 0, &its, NULL) < 0 ? -errno : 0;
}

/* Disarm tfd. 0 or -errno. */
static inline int timer_disarm(int tfd)
{
	struct itimerspec its = {0};

	return timerfd_settime(tfd, 0, &its, NULL) < 0 ? -errno : 0;
}
