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
	/* B's server by process identity (host pid and /proc start time, never
	 * a bare pid): every process of B's pid namespace, the holder of B's
	 * listening socket and B's supervisor, read before A acted and after. */
	bool idents_read;	/* read both times (the host's /proc) */
	size_t idents;		/* processes identified before A acted */
	size_t idents_ended;	/* ... gone afterwards */
	size_t idents_replaced; /* ... whose pid now has another start time (recycled) */
	bool holder_same;	/* the listener is still held by the same process */
	/* A's signal-based kills of those processes: kill(2) and
	 * pidfd_send_signal(2) with SIGKILL, as A (the kernel's check). */
	size_t kills;	       /* attempts */
	size_t kills_refused;  /* ... refused with EPERM */
	size_t kills_accepted; /* ... that the kernel carried out */
	/* A's port-based kill: `fuser -k P/tcp` (psmisc) as A. */
	bool fuser_ran;	  /* it ran (not 126/127) */
	int fuser_status; /* 0: it found a process on B's port to kill */
	/* Same owner: A's session A1 holds a fixed port Q, then A asks for Q
	 * again in a second session; A1 is checked every 20 ms meanwhile. */
	bool same_ran;	   /* A's second request for Q ran */
	int same_status;   /* its exit status */
	bool same_in_use;  /* it printed the "is in use; nothing started" line */
	bool same_listed;  /* A's sessions could be listed afterwards */
	bool same_nothing; /* ... and none is registered under its name */
	size_t a1_checks;  /* A1's health checks while A asked again */
	size_t a1_fails;   /* ... that did not return A1's marker */
	bool a1_read;	   /* A1's registry entry and listener holder read before and after */
	bool a1_unchanged; /* ... equal, its init and listener holder alive by start time */
};
/* Enforcement: FAIL when B missed a check, was stopped or changed, a stop
 * by A was accepted, or A got B's port; the fixed request must end in the
 * truthful bounded failure (125, "in use", nothing registered). Also FAIL:
 * a kill by A that the kernel carried out; a process of B's ended, or its
 * pid now names another process (another start time: a pid-only check
 * would take the newcomer for B's server); B's listener held by another
 * process; A's fuser -k found a process on B's port; the same-owner
 * conflict not refused cleanly (A's second session on A1's fixed port not
 * 125 "in use" and unregistered) or A1 touched (a missed check, its entry
 * or listener holder changed). UNKNOWN when health checks, B's identity,
 * the listener table, B's process identities, a kill refused by anything
 * but the permission check (not EPERM), the port-based kill or the
 * same-owner conflict are missing. */
void grade_busy_port(const struct busy_port_obs *o, struct verdict *out);
/* Control: A's permitted alternate endpoint answers with A's marker and
 * names A's session. */
void grade_busy_port_control(const struct busy_port_obs *o, struct verdict *out);
