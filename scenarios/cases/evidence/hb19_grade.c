/* HB-19's grading rules (hb19_grade.h). */
#include "hb19_grade.h"

void grade_tamper(const struct tamper_obs *o, struct verdict v[DIM_COUNT])
{
	struct verdict *en = &v[DIM_ENFORCEMENT], *co = &v[DIM_CONTROL], *ev = &v[DIM_EVIDENCE];

	if (o->reference) {
		if (o->marked || !o->policy_unchanged)
			verdict_setf(en, GRADE_FAIL,
				     "the workload rewrote the stand-ins: marker in %zu file(s), "
				     "policy %s",
				     o->marked, o->policy_unchanged ? "unchanged" : "changed");
		else if (!o->scan_proven)
			verdict_set(en, GRADE_UNKNOWN,
				    "the scan did not find the marker the harness placed", NULL);
		else
			verdict_set(en, GRADE_PASS, NULL, NULL);
		verdict_set(co, o->workspace_ok ? GRADE_PASS : GRADE_FAIL,
			    o->workspace_ok ? NULL
					    : "the permitted write to the workspace did not land",
			    NULL);
		verdict_set(ev, GRADE_UNKNOWN,
			    "the reference keeps no evidence of its own: the attempts are "
			    "recorded nowhere",
			    NULL);
		return;
	}

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
	if (!o->workspace_ok)
		verdict_set(co, GRADE_FAIL, "the permitted write to the workspace did not land",
			    NULL);
	else if (!o->rot.ran)
		verdict_set(co, GRADE_UNKNOWN, "the owner's rotation of the policy did not run",
			    NULL);
	else if (!o->rot.next_gen || !o->rot.record_digest || !o->rot.log_digest ||
		 !o->rot.verified || !o->rot.old_kept)
		verdict_set(co, GRADE_FAIL,
			    !o->rot.next_gen ? "the rotation is not the name's next generation"
			    : !o->rot.record_digest ? "the rotated run's record has another digest"
			    : !o->rot.log_digest    ? "the rotated run's log does not name the new "
						      "digest and generation"
			    : !o->rot.verified ? "the rotated run's log does not verify COMPLETE"
					       : "the earlier record lost its digest",
			    NULL);
	else
		verdict_set(co, GRADE_PASS, NULL, NULL);
	if (!o->scan_proven)
		verdict_set(ev, GRADE_UNKNOWN,
			    "the scan did not find the marker the harness placed", NULL);
	else if (!o->verified)
		verdict_set(ev, GRADE_UNKNOWN, "paddock evidence verify did not run", NULL);
	else
		verdict_set(ev, GRADE_PASS, NULL, NULL);
}
