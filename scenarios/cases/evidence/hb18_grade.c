/* HB-18's grading rules (hb18_grade.h). */
#include "hb18_grade.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

bool hb18_names_gap(const char *out, const char *source, uint64_t seq)
{
	char pat[48];
	size_t n = (size_t)snprintf(pat, sizeof(pat), "%s: missing seq ", source);

	for (const char *p = out; (p = strstr(p, pat)); p += n) {
		unsigned long long a, b;

		if (sscanf(p + n, "%llu-%llu", &a, &b) == 2 && a <= seq && seq <= b)
			return true;
	}
	return false;
}

/* v worsened by (g, why): FAIL beats UNKNOWN beats PASS, never lifted. */
static void worsen(struct verdict *v, enum grade g, const char *why)
{
	if (v->grade == GRADE_FAIL || (v->grade == GRADE_UNKNOWN && g != GRADE_FAIL))
		return;
	verdict_set(v, g, why, NULL);
}

/* The exporter outage's part of each dimension (hb18_grade.h). */
static void grade_outage(const struct outage_obs *o, struct verdict v[DIM_COUNT])
{
	const char *unknown = !o->ran	   ? "the outage run did not happen"
			      : !o->made   ? "the fixture could not fill the logs' file system"
			      : !o->freed  ? "the logs' file system was not freed before the end"
			      : !o->record ? "the outage run left no record"
					   : NULL;

	if (unknown) {
		for (int d = 0; d < DIM_COUNT; d++)
			worsen(&v[d], GRADE_UNKNOWN, unknown);
		return;
	}
	if (o->write_received)
		worsen(&v[DIM_ENFORCEMENT], GRADE_FAIL,
		       "during the outage the sensitive request (POST) went out: the "
		       "allow-read-only contract was not kept");
	else if (o->verify_read && o->verify_complete)
		worsen(&v[DIM_ENFORCEMENT], GRADE_FAIL,
		       "the outage run's logs verify COMPLETE: the outage left no gap");
	else if (!o->verify_read)
		worsen(&v[DIM_ENFORCEMENT], GRADE_UNKNOWN,
		       "the outage run's logs were not verified");
	if (!o->read_received)
		worsen(&v[DIM_CONTROL], GRADE_FAIL,
		       "the read-only request sent during the outage did not go out");
	if (!o->impaired || !o->mode_matches)
		worsen(&v[DIM_EVIDENCE], GRADE_FAIL,
		       !o->impaired ? "the record does not say the capture was impaired"
				    : "the record names another on_capture_loss");
	else if (!o->write_received && o->refused == 0)
		worsen(&v[DIM_EVIDENCE], GRADE_FAIL,
		       "the record counts no refusal while the capture was impaired");
	else if (!o->witness_lost_said)
		worsen(&v[DIM_EVIDENCE], GRADE_FAIL,
		       "the record does not say the second witness was not written");
}

void grade_gaps(const struct gap_obs *o, struct verdict v[DIM_COUNT])
{
	struct verdict *en = &v[DIM_ENFORCEMENT], *co = &v[DIM_CONTROL], *ev = &v[DIM_EVIDENCE];

	if (!o->baseline_read || !o->baseline_complete)
		verdict_set(co, o->baseline_read ? GRADE_FAIL : GRADE_UNKNOWN,
			    o->baseline_read ? "the untouched logs do not verify COMPLETE"
					     : "paddock evidence verify did not run",
			    NULL);
	else if (o->received < o->expect_received)
		verdict_setf(co, GRADE_FAIL, "the receiver got %zu of %zu requests", o->received,
			     o->expect_received);
	else
		verdict_set(co, GRADE_PASS, NULL, NULL);
	if (!o->baseline_read || !o->baseline_complete || !o->dropped || !o->after_read) {
		const char *why = !o->baseline_read	  ? "the untouched logs were not verified"
				  : !o->baseline_complete ? "the untouched logs do not verify: a "
							    "removal would prove nothing"
				  : !o->dropped ? "the known event was not found in the log"
						: "verify did not run after the removal";

		verdict_set(en, GRADE_UNKNOWN, why, NULL);
		verdict_set(ev, GRADE_UNKNOWN, why, NULL);
		grade_outage(&o->outage, v);
		return;
	}
	verdict_set(ev, GRADE_PASS, NULL, NULL);
	if (o->after_complete)
		verdict_set(en, GRADE_FAIL,
			    "a known event was removed and the trace still verifies COMPLETE",
			    NULL);
	else if (!o->sequenced || !o->after_named)
		verdict_setf(en, GRADE_FAIL,
			     "INCOMPLETE, but the missing sequence number %" PRIu64
			     " is not named as a gap",
			     o->dropped_seq);
	else
		verdict_setf(en, GRADE_PASS,
			     "INCOMPLETE, sequence number %" PRIu64 " named missing",
			     o->dropped_seq);
	grade_outage(&o->outage, v);
}
