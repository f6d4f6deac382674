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

/* Arm tfd (a CLOCK_MONOTONIC timerfd) to fire once at the absolute time
 * at_ms (milliseconds of CLOCK_MONOTONIC): a deadline that a stopped and
 * resumed process still meets at the right moment. 0 or -errno. */
static inline int timer_arm_at_ms(int tfd, int64_t at_ms)
{
	struct itimerspec its = {0};

	if (at_ms <= 0)
		at_ms = 1; /* all zero would disarm: "now" */
	its.it_value.tv_sec = (time_t)(at_ms / 1000);
	its.it_value.tv_nsec = (long)(at_ms % 1000) * 1000000L;
	return timerfd_settime(tfd, TFD_TIMER_ABSTIME, &its, NULL) < 0 ? -errno : 0;
}

/* Disarm tfd. 0 or -errno. */
static inline int timer_disarm(int tfd)
{
	struct itimerspec its = {0};

	return timerfd_settime(tfd, 0, &its, NULL) < 0 ? -errno : 0;
}
