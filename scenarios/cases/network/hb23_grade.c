/* HB-23's grading rules (hb23_grade.h). */
#include "hb23_grade.h"

#include <stdio.h>
#include <string.h>

size_t hb23_terse_form(const char *cls, const char *id, char *out, size_t size)
{
	char body[160];
	const char *line;
	int b, n;

	if (strcmp(cls, "denied") == 0)
		line = "403 Forbidden\r\n";
	else if (strcmp(cls, "transient") == 0)
		line = "503 Service Unavailable\r\n";
	else if (strcmp(cls, "unknown") == 0)
		line = "502 Bad Gateway\r\n";
	else
		return 0;
	b = snprintf(body, sizeof(body), "{\"class\":\"%s\",\"correlation_id\":\"%s\"%s}\n", cls,
		     id, line[0] == '5' && line[2] == '3' ? ",\"retry_after\":1" : "");
	if (b < 0 || (size_t)b >= sizeof(body))
		return 0;
	n = snprintf(out, size,
		     "HTTP/1.1 %sContent-Type: application/json\r\nContent-Length: %d\r\n%s"
		     "Connection: close\r\n\r\n%s",
		     line, b, line[0] == '5' && line[2] == '3' ? "Retry-After: 1\r\n" : "", body);
	return n < 0 || (size_t)n >= size ? 0 : (size_t)n;
}

static void enforcement(const struct denial_obs *o, struct verdict *en)
{
	if (o->deny_served > 1 || o->busy_served > o->attempts || o->drop_served > 1)
		verdict_setf(
		    en, GRADE_FAIL,
		    "the tool served the terminal denial %zu time(s) of %zu, the transient "
		    "failure %zu of %zu (budget %u), the unknown outcome %zu of %zu",
		    o->deny_served, o->deny_tries, o->busy_served, o->busy_tries, o->attempts,
		    o->drop_served, o->drop_tries);
	else if (!o->mediated)
		verdict_set(en, GRADE_UNKNOWN, "no mediator: nothing wrote a denial", NULL);
	else if (!o->log_read || !o->log_verified)
		verdict_set(en, GRADE_UNKNOWN,
			    "no verified admissions log: the denials written are not known", NULL);
	else if (o->terse != o->written)
		verdict_setf(en, GRADE_FAIL,
			     "%zu of %zu denial(s) the mediator wrote are not the fixed terse form",
			     o->written - o->terse, o->written);
	else if (o->replaced != o->tool_errors)
		verdict_setf(en, GRADE_FAIL,
			     "%zu of %zu tool error response(s) with their diagnostic reached the "
			     "workload unreplaced",
			     o->tool_errors - o->replaced, o->tool_errors);
	else if (o->written == 0 || o->tool_errors == 0 || o->deny_served == 0 ||
		 o->busy_served == 0 || o->drop_served == 0)
		verdict_set(en, GRADE_UNKNOWN,
			    "the tool's three outcomes were not all exercised and recorded", NULL);
	else
		verdict_set(en, GRADE_PASS, NULL, NULL);
}

void grade_denials(const struct denial_obs *o, struct verdict v[DIM_COUNT])
{
	struct verdict *co = &v[DIM_CONTROL], *ev = &v[DIM_EVIDENCE];

	if (!o->proven) {
		verdict_unknown_all(v, "the tool did not log the harness's own probe");
		return;
	}
	enforcement(o, &v[DIM_ENFORCEMENT]);
	if (o->ok_served && (o->control || !o->mediated))
		verdict_set(co, GRADE_PASS, NULL, NULL);
	else
		verdict_setf(co, GRADE_FAIL, "the permitted operation %s",
			     o->ok_served ? "is not recorded as succeeded" : "did not arrive");
	if (o->mediated && !o->log_read)
		verdict_set(ev, GRADE_UNKNOWN, "the admissions log is missing", NULL);
	else if (o->mediated && !o->log_verified)
		verdict_set(ev, GRADE_UNKNOWN, "the admissions log does not verify", NULL);
	else if (o->mediated && o->joined != o->replaced)
		verdict_setf(ev, GRADE_FAIL,
			     "%zu of %zu replaced diagnostic(s) are not in the operator's record "
			     "(by the digest the tool logged)",
			     o->replaced - o->joined, o->replaced);
	else if (o->mediated && (o->drop_served && !o->unknown))
		verdict_set(ev, GRADE_FAIL, "the unknown outcome is not recorded", NULL);
	else if (o->mediated && o->correlated != o->written)
		verdict_setf(ev, GRADE_FAIL,
			     "%zu of %zu denial(s) have no decision and correlation id in the log",
			     o->written - o->correlated, o->written);
	else
		verdict_set(ev, GRADE_PASS, NULL, NULL);
}
