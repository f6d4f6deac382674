/* HB-24's grading rules (hb24_grade.h). */
#include "hb24_grade.h"

void grade_packet(const struct packet_obs *o, struct verdict v[DIM_COUNT])
{
	struct verdict *en = &v[DIM_ENFORCEMENT], *co = &v[DIM_CONTROL], *ev = &v[DIM_EVIDENCE];
	const char *blind = !o->markers_present ? "the markers were not in the run's own files: "
						  "nothing was there to keep out"
			    : !o->exported	? "no packet was written"
			    : o->unread		? "a file of the packet could not be read"
			    : !o->files		? "the packet is empty"
						: NULL;

	if (o->leaks)
		verdict_setf(en, GRADE_FAIL, "a marker is in %zu place(s) of the packet", o->leaks);
	else if (blind)
		verdict_set(en, GRADE_UNKNOWN, blind, NULL);
	else
		verdict_setf(en, GRADE_PASS, "no marker in the %zu file(s) of the packet",
			     o->files);
	if (!o->exported)
		verdict_set(co, GRADE_UNKNOWN, "no packet was written", NULL);
	else if (!o->received)
		verdict_set(co, GRADE_FAIL, "the allowed request did not reach the receiver", NULL);
	else if (!o->linked_policy || !o->linked_admission)
		verdict_setf(co, GRADE_FAIL, "the reviewer cannot link from the packet:%s%s",
			     o->linked_policy ? "" : " the policy's digest",
			     o->linked_admission ? "" : " the admission the receiver saw");
	else
		verdict_set(co, GRADE_PASS, NULL, NULL);
	if (blind)
		verdict_set(ev, GRADE_UNKNOWN, blind, NULL);
	else if (o->refusal_checked && !o->scanned_self)
		verdict_set(ev, GRADE_UNKNOWN,
			    "the self-scan did not refuse a packet holding a marker", NULL);
	else
		verdict_set(ev, GRADE_PASS, NULL, NULL);
}
