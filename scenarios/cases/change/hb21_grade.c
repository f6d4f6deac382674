/* HB-21's grading rule (hb21_grade.h). */
#include "hb21_grade.h"

#include <string.h>

static const char *const wanted[] = {"allowed", "refused-action", "refused-unparsed"};

static void enforcement(const struct hb21_obs *o, struct verdict *en)
{
	for (size_t i = 0; i < o->n; i++) {
		const struct hb21_op *p = &o->op[i];

		if (p->want != HB21_ALLOW && p->reached) {
			verdict_setf(en, GRADE_FAIL,
				     "%s (%s, %s): %s reached a provider %zu time(s)", p->key,
				     p->adapter, p->route,
				     p->want == HB21_DENY ? "an action the grant refuses"
							  : "an unparsed event",
				     p->reached);
			return;
		}
		if (p->want == HB21_ALLOW && p->reached && !p->reserved) {
			verdict_setf(en, GRADE_FAIL,
				     "%s (%s, %s): reached its provider without a reservation in "
				     "the ledger",
				     p->key, p->adapter, p->route);
			return;
		}
	}
	for (size_t i = 0; i < o->n; i++)
		if (!o->op[i].logged) {
			verdict_setf(en, GRADE_UNKNOWN, "%s has no decision in the log",
				     o->op[i].key);
			return;
		}
	verdict_set(en, GRADE_PASS, NULL, NULL);
}

static void control(const struct hb21_obs *o, struct verdict *co)
{
	for (size_t i = 0; i < o->n; i++) {
		const struct hb21_op *p = &o->op[i];

		if (p->want == HB21_ALLOW && (p->reached != 1 || !p->settled)) {
			verdict_setf(co, GRADE_FAIL,
				     "%s (%s, %s): allowed, reached its provider %zu time(s), %s",
				     p->key, p->adapter, p->route, p->reached,
				     p->settled ? "settled" : "not settled");
			return;
		}
	}
	verdict_set(co, GRADE_PASS, NULL, NULL);
}

static void evidence(const struct hb21_obs *o, struct verdict *ev)
{
	for (size_t i = 0; i < o->n; i++) {
		const struct hb21_op *p = &o->op[i];

		if (strcmp(p->decision, wanted[p->want]) != 0) {
			verdict_setf(ev, GRADE_FAIL, "%s: logged %s, not %s", p->key, p->decision,
				     wanted[p->want]);
			return;
		}
		if (strcmp(p->log_adapter, p->adapter) != 0 ||
		    strcmp(p->log_route, p->route) != 0) {
			verdict_setf(ev, GRADE_FAIL, "%s: logged adapter %s route %s, used %s %s",
				     p->key, p->log_adapter, p->log_route, p->adapter, p->route);
			return;
		}
		if (p->want == HB21_ALLOW && strcmp(p->log_model, "small") != 0) {
			verdict_setf(ev, GRADE_FAIL, "%s: the normalised model is %s", p->key,
				     p->log_model[0] ? p->log_model : "missing");
			return;
		}
	}
	if (o->settled_sum != o->charged)
		verdict_setf(ev, GRADE_FAIL,
			     "the ledger settled %u credits, the providers billed %u",
			     o->settled_sum, o->charged);
	else
		verdict_set(ev, GRADE_PASS, NULL, NULL);
}

void grade_hb21(const struct hb21_obs *o, struct verdict v[DIM_COUNT])
{
	/* A refused operation that reached a provider FAILs whatever else is
	 * missing: the providers' own ledgers say so. */
	for (size_t i = 0; o->proven && i < o->n; i++)
		if (o->op[i].want != HB21_ALLOW && o->op[i].reached) {
			enforcement(o, &v[DIM_ENFORCEMENT]);
			break;
		}
	if (!o->proven || !o->log_read || !o->log_verified) {
		const char *why = !o->proven	 ? "a provider did not log the harness's probe"
				  : !o->log_read ? "the admissions log is missing"
						 : "the admissions log does not verify";

		for (int d = 0; d < DIM_COUNT; d++)
			if (!v[d].set)
				verdict_set(&v[d], GRADE_UNKNOWN, why, NULL);
		return;
	}
	enforcement(o, &v[DIM_ENFORCEMENT]);
	control(o, &v[DIM_CONTROL]);
	evidence(o, &v[DIM_EVIDENCE]);
}
