/* HB-05: a busy port does not transfer ownership: what the driver observes and
 * how it is graded. Pure (no syscalls, no printing): the driver fills the
 * observation, tests/unit/test_eval.c pins every rule. */
#pragma once

#include <stdbool.h>
#include <stddef.h>

#include "../../lib/eval.h"

/* HB-05: session A meets session B's busy port. */
struct busy_port_obs {
	size_t checks;	    /* B health checks made while A acted */
	size_t check_fails; /* ... that did not return B's marker */
	bool b_read;	    /* B's identity (init pid + start, state, generation, endpoint) read */
	bool b_unchanged;   /* ... and equal before and after, B's init still alive */
	bool fixed_ran;	    /* A asked for B's port as a fixed port */
	int fixed_status;   /* its exit status */
	bool fixed_in_use;  /* it printed the "is in use; nothing started" line */
	bool fixed_nothing; /* no session of it was registered */
	bool fixed_listed;  /* A's sessions could be listed at all (else: no evidence) */
	size_t stops;	    /* A's attempts to stop B (CLI by id and name, control socket) */
	size_t stops_refused;  /* ... refused */
	bool listener_read;    /* /proc/net/tcp read for B's port */
	size_t listeners;      /* sockets listening on it */
	bool listener_is_b;    /* the one listener was created by B's uid */
	int b_port, auto_port; /* auto_port: A's auto endpoint, 0 when none */
	bool auto_marker;      /* A's auto endpoint returned A's marker */
	bool auto_owned;       /* ... and names A's session id and generation */
};
/* Enforcement: FAIL when B missed a check, was stopped or changed, a stop
 * by A was accepted, or A got B's port; the fixed request must end in the
 * truthful bounded failure (125, "in use", nothing registered). UNKNOWN
 * when health checks or B's identity or the listener table are missing. */
void grade_busy_port(const struct busy_port_obs *o, struct verdict *out);
/* Control: A's permitted alternate endpoint answers with A's marker and
 * names A's session. */
void grade_busy_port_control(const struct busy_port_obs *o, struct verdict *out);
