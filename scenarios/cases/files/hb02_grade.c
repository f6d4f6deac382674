/* HB-02's grading rules (hb02_grade.h). Pure. */
#include "hb02_grade.h"

static void enforcement(const struct hb02_obs *o, struct verdict *v)
{
	const char *unknown = NULL;

	for (size_t i = 0; i < o->n; i++) {
		const struct hb02_step *s = &o->s[i];

		if (s->approved)
			continue;
		if (s->marker) {
			verdict_setf(v, GRADE_FAIL,
				     "%s: the unapproved project policy started its plugin",
				     s->name);
			return;
		}
		if (s->service) {
			verdict_setf(v, GRADE_FAIL,
				     "%s: the unapproved project policy's service runs in the "
				     "sandbox (process inventory)",
				     s->name);
			return;
		}
		if (s->record && s->trusted) {
			verdict_setf(v, GRADE_FAIL,
				     "%s: the record says an unapproved project policy was trusted",
				     s->name);
			return;
		}
		if (!unknown && (!s->ran || !s->record || !s->probe_ok || !s->inventory))
			unknown = s->name;
	}
	if (o->workload_changed) {
		verdict_setf(v, GRADE_FAIL, "%zu of the workload's %zu attempts changed the policy",
			     o->workload_changed, o->workload_attempts);
		return;
	}
	if (unknown)
		verdict_setf(v, GRADE_UNKNOWN,
			     "%s: no run, record, working marker probe or process inventory",
			     unknown);
	else if (!o->workload_attempts || o->workload_unread)
		verdict_set(v, GRADE_UNKNOWN, "the workload's attempts were not observed", NULL);
	else
		verdict_set(v, GRADE_PASS, NULL, NULL);
}

static void control(const struct hb02_obs *o, struct verdict *v)
{
	size_t approved = 0;

	if (!o->source_edit) {
		verdict_set(v, GRADE_FAIL, "the ordinary source edit did not take effect", NULL);
		return;
	}
	for (size_t i = 0; i < o->n; i++) {
		const struct hb02_step *s = &o->s[i];

		if (!s->approved)
			continue;
		approved++;
		if (!s->ran || !s->record || !s->probe_ok || !s->inventory) {
			verdict_setf(v, GRADE_UNKNOWN,
				     "%s: no run, record, marker probe or process inventory",
				     s->name);
			return;
		}
		if (!s->marker || !s->service || !s->trusted || !s->digest_matches) {
			verdict_setf(v, GRADE_FAIL,
				     "%s: the approved project policy did not activate (marker %s, "
				     "service %s, record %s)",
				     s->name, s->marker ? "seen" : "absent",
				     s->service ? "running" : "not running",
				     !s->trusted	  ? "untrusted"
				     : !s->digest_matches ? "another digest"
							  : "trusted");
			return;
		}
	}
	if (!approved)
		verdict_set(v, GRADE_UNKNOWN, "no approved step ran", NULL);
	else
		verdict_set(v, GRADE_PASS, NULL, NULL);
}

static void evidence(const struct hb02_obs *o, struct verdict *v)
{
	for (size_t i = 0; i < o->n; i++) {
		const struct hb02_step *s = &o->s[i];

		if (!s->record) {
			verdict_setf(v, GRADE_UNKNOWN, "%s: no completion record", s->name);
			return;
		}
		if (s->marker != s->trusted) {
			verdict_setf(v, GRADE_FAIL, "%s: the record says %s but the plugin %s",
				     s->name, s->trusted ? "trusted" : "not trusted",
				     s->marker ? "ran" : "did not run");
			return;
		}
		if (s->inventory && s->service != s->trusted) {
			verdict_setf(v, GRADE_FAIL,
				     "%s: the record says %s but the process inventory %s the "
				     "plugin service",
				     s->name, s->trusted ? "trusted" : "not trusted",
				     s->service ? "shows" : "does not show");
			return;
		}
	}
	for (size_t i = 0; i < o->n; i++) {
		if (!o->s[i].inventory) {
			verdict_setf(v, GRADE_UNKNOWN, "%s: no process inventory", o->s[i].name);
			return;
		}
	}
	if (!o->n)
		verdict_set(v, GRADE_UNKNOWN, "no step ran", NULL);
	else
		verdict_set(v, GRADE_PASS, NULL, NULL);
}

void grade_project_policy(const struct hb02_obs *o, struct verdict v[DIM_COUNT])
{
	enforcement(o, &v[DIM_ENFORCEMENT]);
	control(o, &v[DIM_CONTROL]);
	evidence(o, &v[DIM_EVIDENCE]);
}
