/* HB-19's grading rules (hb19_grade.h). */
#include "hb19_grade.h"

void grade_tamper(const struct tamper_obs *o, struct verdict v[DIM_COUNT])
{
	struct verdict *en = &v[DIM_ENFORCEMENT], *co = &v[DIM_CONTROL], *ev = &v[DIM_EVIDENCE];

	if (o->marked || !o->policy_unchanged || o->key_copied)
		verdict_setf(en, GRADE_FAIL,
			     "the workload reached what it must not: marker in %zu file(s), policy "
			     "%s, key %s",
			     o->marked, o->policy_unchanged ? "unchanged" : "changed",
			     o->key_copied ? "copied" : "not read");
	else if (!o->scan_proven || !o->verified)
		verdict_set(en, GRADE_UNKNOWN,
			    !o->scan_proven ? "the scan did not find the marker the harness placed"
					    : "paddock evidence verify did not run",
			    NULL);
	else if (!o->complete)
		verdict_set(en, GRADE_FAIL, "the evidence logs no longer verify COMPLETE", NULL);
	else
		verdict_set(en, GRADE_PASS, NULL, NULL);
	verdict_set(co, o->workspace_ok ? GRADE_PASS : GRADE_FAIL,
		    o->workspace_ok ? NULL : "the permitted write to the workspace did not land",
		    NULL);
	if (!o->scan_proven)
		verdict_set(ev, GRADE_UNKNOWN,
			    "the scan did not find the marker the harness placed", NULL);
	else if (!o->verified)
		verdict_set(ev, GRADE_UNKNOWN, "paddock evidence verify did not run", NULL);
	else
		verdict_set(ev, GRADE_PASS, NULL, NULL);
}
