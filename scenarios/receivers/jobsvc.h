/* The mock asynchronous job service of HB-16 (receivers/jobsvc.c): a
 * thread of the harness on the host's loopback, outside every sandbox,
 * one thread per connection. No real work and no real money: a job is a
 * clock. It keeps its own ledger of jobs (owner, state, charge) and of
 * every cancel asked, which the case grades from.
 *
 *   POST /v1/jobs, POST /v1/batch  {"max": N, "cancel": "accept" |
 *        "refuse" | "silent", "run_ms": M}  -> 201 {"id": "jK", "state":
 *        "running"}; the owner is the session in its Paddock-Admission
 *        ("SESSION-GEN-N"), a job without one is refused (400)
 *   GET  /v1/jobs/ID          -> {"id", "state", "charge"}
 *   POST /v1/jobs/ID/cancel   -> 200 (accept: cancelled, the charge
 *        frozen), 409 (refuse: it runs on), no answer (silent); 403 when
 *        the caller is not the job's owner (counted)
 *
 * A job charges one credit per JOBSVC_TICK_MS while it runs, at most max,
 * and completes after run_ms. A "silent" job's service never answers a
 * status or cancel of it (the connection is held until the caller
 * leaves). */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define JOBSVC_TICK_MS 100
#define JOBSVC_MAX     32

struct jobsvc;

struct jobsvc_job {
	char id[16];
	char owner[80]; /* the session that submitted it */
	char via[16];	/* "/v1/jobs" or "/v1/batch" */
	char mode[8];	/* accept, refuse, silent */
	char state[16]; /* running, cancelled, completed */
	unsigned charge, max;
	unsigned cancels;	 /* cancel requests by its owner */
	unsigned foreign;	 /* cancel requests by anyone else (refused) */
	bool cancelled_by_other; /* never: a foreign cancel is refused */
};

/* Listen on 127.0.0.1:port (0: a port of the kernel's choice, see
 * jobsvc_port()). 0 or -errno. */
int jobsvc_start(struct jobsvc **out, int port);
/* The port it listens on, or -errno. */
int jobsvc_port(struct jobsvc *s);
void jobsvc_stop(struct jobsvc *s);
/* The jobs it holds, in submission order, as of now. */
size_t jobsvc_count(struct jobsvc *s);
bool jobsvc_get(struct jobsvc *s, size_t i, struct jobsvc_job *out);
/* Requests it got that hold text in their request line (e.g. "GET /probe"). */
size_t jobsvc_requests(struct jobsvc *s, const char *text);
