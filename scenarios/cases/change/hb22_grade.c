/* HB-22's grading rules (hb22_grade.h). Pure. */
#include "hb22_grade.h"

void grade_plugin_update(const struct hb22_obs *o, struct verdict v[DIM_COUNT])
{
	if (o->v2_new_scope)
		verdict_set(&v[DIM_ENFORCEMENT], GRADE_FAIL,
			    "the update wrote in the file scope it added, unapproved", NULL);
	else if (o->v2_changed_tool || o->v2_new_tool)
		verdict_setf(
		    &v[DIM_ENFORCEMENT], GRADE_FAIL, "the update was served %s, unapproved",
		    o->v2_changed_tool ? "the tool whose definition changed" : "the tool it added");
	else if (o->review_read && (o->surfaced < o->expected || !o->review_held))
		verdict_setf(&v[DIM_ENFORCEMENT], GRADE_FAIL,
			     "the review surfaced %zu of %zu changes to authority%s", o->surfaced,
			     o->expected, o->review_held ? "" : " and did not hold the update");
	else if (!o->approved || !o->review_read || !o->v2_ran || !o->v2_record || !o->probe_ok ||
		 !o->expected)
		verdict_set(&v[DIM_ENFORCEMENT], GRADE_UNKNOWN,
			    "the approval, the review, the update's run or record, or the probe is "
			    "missing",
			    NULL);
	else
		verdict_set(&v[DIM_ENFORCEMENT], GRADE_PASS, NULL, NULL);
	if (!o->v2_ran || !o->v3_ran)
		verdict_set(&v[DIM_CONTROL], GRADE_UNKNOWN, "an update's run is missing", NULL);
	else if (!o->v2_kept)
		verdict_set(&v[DIM_CONTROL], GRADE_FAIL,
			    "the held update lost the approved scope or unchanged tool", NULL);
	else if (!o->v3_kept)
		verdict_set(&v[DIM_CONTROL], GRADE_FAIL,
			    "the update that widens nothing lost its grants", NULL);
	else
		verdict_set(&v[DIM_CONTROL], GRADE_PASS, NULL, NULL);
	if (!o->review_read || !o->v2_record || !o->v3_record)
		verdict_set(&v[DIM_EVIDENCE], GRADE_UNKNOWN,
			    "the review or a run's completion record is missing", NULL);
	else
		verdict_set(&v[DIM_EVIDENCE], GRADE_PASS, NULL, NULL);
}
