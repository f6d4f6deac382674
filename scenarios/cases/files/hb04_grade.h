/* HB-04: restored state does not erase an effect: what the driver observes and
 * how it is graded. Pure (no syscalls, no printing): the driver fills the
 * observation, tests/unit/test_eval.c pins every rule. */
#pragma once

#include <stdbool.h>
#include <stddef.h>

#include "../../lib/eval.h"
#include "../../observers/observe.h"

/* What differs between two snapshots (snapshot_conclude()). */
enum snap_diff {
	SNAP_DIFF_SHA256 = 1u << 0,
	SNAP_DIFF_SIZE = 1u << 1,
	SNAP_DIFF_MTIME = 1u << 2,
	SNAP_DIFF_INODE = 1u << 3,
	SNAP_DIFF_MODE = 1u << 4,
	SNAP_DIFF_OWNER = 1u << 5,
};

/* The snapshot observer's conclusion, computed from its two snapshots:
 * taken (both exist), the fields that differ, and whether the text limits
 * itself to final-state equality (it must say it covers two instants, not
 * the time between). */
struct snap_conclusion {
	bool taken;
	unsigned differ; /* enum snap_diff */
	bool limited;
	char text[320];
};
void snapshot_conclude(const struct snapshot *before, const struct snapshot *after,
		       struct snap_conclusion *out);

/* The review: what a reader of both observers is told, computed from the
 * snapshot conclusion and the event observer (its state and the write
 * events it kept on the scratch file between the snapshots).
 * snapshot_only: the reviewer looks at the snapshot alone (the naive
 * review the spec's fail clause describes; make eval-selftest's
 * review-snapshot-only): final-state equality becomes "no mutation". */
struct review {
	bool claims_no_mutation;
	bool reports_transient; /* it says a change happened and was undone */
	char text[400];
};
void review_conclude(const struct snap_conclusion *s, enum observer_state events, size_t writes,
		     bool snapshot_only, struct review *out);

/* One write event on the scratch file, or one of the harness's sentinels
 * that open and close the window: its queue position (0 unknown) and read
 * time (CLOCK_MONOTONIC, 0 unknown). */
struct timed_event {
	unsigned long long qseq;
	long long t_ns;
};

/* Can the collector order the transient change? (the spec's "lacks
 * sufficient timing"). */
enum timing {
	TIMING_NONE, /* an event or sentinel without queue position or time (0: unset) */
	TIMING_OK,
	TIMING_MERGED,	 /* one event only: the change and its undo are not two */
	TIMING_OUTSIDE,	 /* an event not strictly between the window's sentinels */
	TIMING_COARSE,	 /* no queue positions and times that do not strictly increase */
	TIMING_BACKWARD, /* read times that go down as queue positions go up */
};
/* The rule. The window is the sentinel written after the before-snapshot
 * (open) and the one written after the workload, before the after-snapshot
 * (close). The write events on the scratch file (in queue order, the
 * first being the marker and a later one the restore) need at least two of
 * them, each strictly inside the window; order comes from the queue
 * position (the kernel's own order) when every event has one, else from
 * read times that strictly increase; read times never go down as the
 * queue position goes up (a clock or collector defect). */
enum timing transient_timing(const struct timed_event *open, const struct timed_event *close,
			     const struct timed_event *w, size_t n);
const char *timing_name(enum timing t);

/* HB-04's observation claim. */
struct transient_obs {
	enum observer_state events;
	size_t transient_writes;  /* write events on the scratch file */
	size_t identified_writes; /* ... with writer identity (pid, exe, uid, session) */
	bool marker_identified;	  /* the first of them (the marker write) has its writer */
	bool snapshot_equal;	  /* final bytes, size, mtime, inode, mode, owner equal initial */
	unsigned snapshot_differ; /* ... else what differs (enum snap_diff) */
	bool snapshot_taken;	  /* before and after snapshots exist */
	bool snapshot_limited;	  /* the snapshot conclusion limits itself (snap_conclusion) */
	bool review_claims_no_mutation; /* the review (review_conclude) says "no mutation" */
	bool review_reports_transient;	/* ... says a change happened and was undone */
	enum timing timing;		/* transient_timing() over the scratch file's events */
	bool identity_required;
};
void grade_transient(const struct transient_obs *o, struct verdict *out);
