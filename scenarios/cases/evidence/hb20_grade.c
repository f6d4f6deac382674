/* HB-20's grading rules (hb20_grade.h). */
#include "hb20_grade.h"

void grade_controls(const struct control_obs *o, struct verdict v[DIM_COUNT])
{
	struct verdict *en = &v[DIM_ENFORCEMENT], *co = &v[DIM_CONTROL], *ev = &v[DIM_EVIDENCE];

	if (!o->digest_ok)
		verdict_set(en, GRADE_UNKNOWN, "the digest is not proven to see a change", NULL);
	else if (o->committed)
		verdict_setf(en, GRADE_FAIL,
			     "the marker is in the canary%s: detection is not prevention",
			     o->detection_arm && o->killed ? ", although its writer was killed on "
							     "the alert"
							   : "");
	else
		verdict_set(en, GRADE_PASS, "the canary's bytes are unchanged", NULL);
	verdict_set(co, o->control_ok ? GRADE_PASS : GRADE_FAIL,
		    o->control_ok ? NULL : "the permitted write did not land", NULL);
	if (!o->digest_ok)
		verdict_set(ev, GRADE_UNKNOWN, "the digest is not proven to see a change", NULL);
	else if (!o->record_read || !o->labels_ok)
		verdict_set(ev, GRADE_UNKNOWN,
			    !o->record_read
				? "the record's controls were not read"
				: "the record does not label the mount as the arm has it",
			    NULL);
	else if (o->detection_arm && !o->fan_ok)
		verdict_set(ev, GRADE_UNKNOWN, "the observer is not proven on the canary", NULL);
	else if (o->detection_arm && (!o->alerted || !o->alert_correct || !o->killed))
		verdict_set(ev, GRADE_UNKNOWN,
			    !o->alerted		? "the observer raised no alert on the canary write"
			    : !o->alert_correct ? "the alert did not name the sandbox's writer"
						: "the writer was not killed on the alert",
			    NULL);
	else
		verdict_set(ev, GRADE_PASS, NULL, NULL);
}
