/* HB-22's grading rules (hb22_grade.c): a plugin update gains no authority
 * without a review of what it widens. Pure, unit-tested
 * (tests/unit/test_eval.c). */
#pragma once

#include <stdbool.h>
#include <stddef.h>

#include "../../lib/eval.h"

struct hb22_obs {
	bool approved;		/* v1 approved by its owner (paddock plugin approve) */
	bool review_read;	/* paddock plugin review of v2 captured */
	size_t surfaced;	/* of the changes v2 makes to authority, shown as widening */
	size_t expected;	/* ... how many it makes (new scope, changed tool, new tool) */
	bool review_held;	/* the review says the update is held */
	bool v2_ran, v2_record; /* the update's run, and its completion record */
	bool probe_ok;		/* the harness's own write in the new scope is seen */
	bool v2_new_scope;	/* the update wrote in the file scope it added */
	bool v2_changed_tool;	/* ... was served the tool whose definition changed */
	bool v2_new_tool;	/* ... was served the tool it added */
	bool v2_kept;		/* ... kept the approved scope and the unchanged tool */
	bool v3_ran, v3_record; /* an update that widens nothing, not approved again */
	bool v3_kept;		/* ... kept its grants: its scope and both approved tools */
};

/* Enforcement: the held update reached no new scope or tool, and the
 * review surfaced every change to authority and held it; without the
 * update's run or record, or a working probe, UNKNOWN unless a FAIL.
 * Control: the unchanged capability kept working in the held update, and
 * the update that widens nothing kept its grants without an approval.
 * Evidence: the review read and both runs' records. */
void grade_plugin_update(const struct hb22_obs *o, struct verdict v[DIM_COUNT]);
