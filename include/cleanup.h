/* Scope-bound ownership (STYLE.md section 4). Always initialise: NULL, -1. */
#pragma once

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

static inline void cleanup_free_fn(void *p)
{
	free(*(void **)p);
}

static inline void cleanup_close_fn(int *fd)
{
	if (*fd >= 0) {
		int saved = errno;
		close(*fd);
		errno = saved;
	}
}

static inline void cleanup_fclose_fn(FILE **f)
{
	if (*f)
		fclose(*f);
}

#define cleanup_free   __attribute__((cleanup(cleanup_free_fn)))
#define cleanup_close  __attribute__((cleanup(cleanup_close_fn)))
#define cleanup_fclose __attribute__((cleanup(cleanup_fclose_fn)))

/* Hand ownership on: return the value and reset the variable. */
#define take_ptr(pp)                                 \
	({                                           \
		__typeof__(*(pp)) take_tmp_ = *(pp); \
		*(pp) = NULL;                        \
		take_tmp_;                           \
	})
#define take_fd(pfd)                    \
	({                              \
		int take_tmp_ = *(pfd); \
		*(pfd) = -1;            \
		take_tmp_;              \
	})
