/* HB-03: the case's own evidence rule (hb03_grade.h). */
#include "hb03_grade.h"

void grade_adapters_evidence(const struct adapters_obs *o, struct verdict *out)
{
	if (o->attempts == 0 || o->snapshots_taken < o->attempts || o->events != OBSERVER_OK)
		verdict_set(out, GRADE_UNKNOWN,
			    "canary digests or a healthy event observer missing", NULL);
	else if (!o->where_shell || !o->where_tool || !o->sandbox_ns_known)
		verdict_set(out, GRADE_UNKNOWN,
			    "where an adapter ran (pid namespace, uid) is not established", NULL);
	else
		verdict_set(out, GRADE_PASS, NULL, NULL);
}
