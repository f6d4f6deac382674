/* HB-04: restored state does not erase an effect: the case's own grading rules
 * (hb04_grade.h). The shared rules stay in lib/grading.c. */
#include "hb04_grade.h"

#include <stdio.h>
#include <string.h>

static const char *const diff_names[] = {"sha256", "size", "mtime", "inode", "mode", "owner"};

/* "mtime, inode": the fields in differ (enum snap_diff). */
static size_t diff_text(unsigned differ, char *out, size_t n)
{
	size_t len = 0;

	out[0] = '\0';
	for (size_t i = 0; i < sizeof(diff_names) / sizeof(diff_names[0]); i++)
		if (differ & (1u << i))
			len += (size_t)snprintf(out + len, n - len, "%s%s", len ? ", " : "",
						diff_names[i]);
	return len;
}

void snapshot_conclude(const struct snapshot *a, const struct snapshot *b,
		       struct snap_conclusion *out)
{
	char fields[96];

	memset(out, 0, sizeof(*out));
	out->taken = a->ok && b->ok;
	if (!out->taken) {
		snprintf(out->text, sizeof(out->text), "no conclusion: the %s snapshot is missing",
			 a->ok ? "after" : "before");
		return;
	}
	out->differ = (strcmp(a->sha256, b->sha256) ? SNAP_DIFF_SHA256 : 0) |
		      (a->size != b->size ? SNAP_DIFF_SIZE : 0) |
		      (a->mtime_ns != b->mtime_ns ? SNAP_DIFF_MTIME : 0) |
		      (a->ino != b->ino || a->dev != b->dev ? SNAP_DIFF_INODE : 0) |
		      (a->mode != b->mode ? SNAP_DIFF_MODE : 0) |
		      (a->uid != b->uid || a->gid != b->gid ? SNAP_DIFF_OWNER : 0);
	diff_text(out->differ, fields, sizeof(fields));
	/* Two instants are all a snapshot observer has: equality is stated as
	 * equality of those instants, never as the absence of a change. */
	if (!out->differ) {
		out->limited = true;
		snprintf(out->text, sizeof(out->text),
			 "final state equals initial state (sha256 %.16s, size %lld, mtime %lld, "
			 "inode %lu); this covers two instants and says nothing about writes in "
			 "between",
			 b->sha256, (long long)b->size, b->mtime_ns, (unsigned long)b->ino);
	} else {
		snprintf(out->text, sizeof(out->text),
			 "final state differs from initial state (%s)", fields);
	}
}

void review_conclude(const struct snap_conclusion *s, enum observer_state events, size_t writes,
		     bool snapshot_only, struct review *out)
{
	memset(out, 0, sizeof(*out));
	if (snapshot_only) {
		/* The naive review: what the spec's fail clause describes. */
		out->claims_no_mutation = s->taken && !s->differ;
		snprintf(out->text, sizeof(out->text), "%s (from the snapshot alone)",
			 out->claims_no_mutation ? "no mutation occurred" : s->text);
		return;
	}
	if (events != OBSERVER_OK) {
		snprintf(out->text, sizeof(out->text),
			 "no complete event record: only the snapshot's conclusion holds: %s",
			 s->text);
		return;
	}
	if (writes == 0) {
		/* A healthy collector over the whole window saw nothing: that,
		 * not the snapshot, is what says "no mutation". */
		out->claims_no_mutation = true;
		snprintf(out->text, sizeof(out->text),
			 "no mutation: the healthy event collector recorded no write between the "
			 "snapshots; snapshot: %s",
			 s->text);
		return;
	}
	out->reports_transient = true;
	snprintf(out->text, sizeof(out->text),
		 "mutation occurred: %zu write events on the file between the snapshots%s; "
		 "snapshot: %s",
		 writes, s->taken && !s->differ ? ", then restored" : "", s->text);
}

const char *timing_name(enum timing t)
{
	switch (t) {
	case TIMING_OK:
		return "ordered";
	case TIMING_NONE:
		return "an event or sentinel has no queue position or time";
	case TIMING_MERGED:
		return "one write event only: the change and its undo cannot be told apart";
	case TIMING_OUTSIDE:
		return "a write event lies outside the snapshots' window";
	case TIMING_COARSE:
		return "no queue positions, and read times too coarse to order the events";
	case TIMING_BACKWARD:
		return "read times go backwards in queue order (clock or collector defect)";
	}
	return "?";
}

/* a strictly before b: by queue position when both have one, else by
 * read time. */
static bool before(const struct timed_event *a, const struct timed_event *b, bool by_seq)
{
	return by_seq ? a->qseq < b->qseq : a->t_ns < b->t_ns;
}

enum timing transient_timing(const struct timed_event *open, const struct timed_event *close,
			     const struct timed_event *w, size_t n)
{
	bool by_seq = open->qseq && close->qseq;
	const struct timed_event *prev = open;

	if (!open->t_ns || !close->t_ns)
		return TIMING_NONE;
	for (size_t i = 0; i < n; i++) {
		if (!w[i].t_ns)
			return TIMING_NONE;
		by_seq &= w[i].qseq != 0;
	}
	if (n < 2)
		return TIMING_MERGED;
	for (size_t i = 0; i <= n; i++) {
		const struct timed_event *e = i < n ? &w[i] : close;

		if (by_seq && e->t_ns < prev->t_ns)
			return TIMING_BACKWARD;
		if (!before(prev, e, by_seq))
			return by_seq ? (i == 0 || i == n ? TIMING_OUTSIDE : TIMING_BACKWARD)
				      : TIMING_COARSE;
		prev = e;
	}
	return TIMING_OK;
}

void grade_transient(const struct transient_obs *o, struct verdict *out)
{
	if (o->review_claims_no_mutation && (o->events != OBSERVER_OK || o->transient_writes)) {
		verdict_set(out, GRADE_FAIL,
			    o->transient_writes
				? "the review claims no mutation although the event collector "
				  "recorded the transient write"
				: "the review claims no mutation from final-state equality alone",
			    NULL);
		return;
	}
	if (o->snapshot_taken && o->snapshot_equal && !o->snapshot_limited) {
		verdict_set(out, GRADE_FAIL,
			    "the snapshot conclusion does not limit itself to final-state equality",
			    NULL);
		return;
	}
	if (o->events != OBSERVER_OK) {
		verdict_set(out, GRADE_UNKNOWN,
			    o->events == OBSERVER_DROPPED
				? "event collector dropped events: the transient write is unseen"
				: "no event observer: only final-state equality is known",
			    NULL);
		return;
	}
	if (!o->snapshot_taken) {
		verdict_set(out, GRADE_UNKNOWN, "missing evidence: no before/after snapshot", NULL);
		return;
	}
	/* The case is about a restored state: a restore that did not give
	 * back the initial state tests nothing of the kind. */
	if (!o->snapshot_equal) {
		char fields[96];
		size_t len = diff_text(o->snapshot_differ, fields, sizeof(fields));

		verdict_setf(out, GRADE_UNKNOWN,
			     "the restore did not reproduce the initial state (%s differ): there "
			     "is no restored state to test",
			     len ? fields : "unrecorded fields");
		return;
	}
	if (o->transient_writes == 0) {
		verdict_set(out, GRADE_UNKNOWN,
			    "healthy collector reported no write although the workload made one",
			    NULL);
		return;
	}
	if (o->timing != TIMING_OK) {
		verdict_setf(out, GRADE_UNKNOWN, "insufficient timing: %s", timing_name(o->timing));
		return;
	}
	/* The claim is "this transient write happened, by this writer": the
	 * marker write needs its writer. Writers of the restore are the
	 * evidence dimension's concern (grade_write_evidence). */
	if (o->identity_required && !o->marker_identified) {
		verdict_set(out, GRADE_UNKNOWN,
			    "the transient write's event has no writer identity", NULL);
		return;
	}
	if (!o->review_reports_transient) {
		verdict_set(out, GRADE_FAIL,
			    "the review does not report the transient write the collector recorded",
			    NULL);
		return;
	}
	verdict_set(out, GRADE_PASS, NULL, NULL);
}
