/* HB-09's grading rules (hb09_grade.h). */
#include "hb09_grade.h"

void grade_egress(const struct egress_obs *o, struct verdict v[DIM_COUNT])
{
	struct verdict *en = &v[DIM_ENFORCEMENT], *co = &v[DIM_CONTROL], *ev = &v[DIM_EVIDENCE];

	if (!o->receivers_proven) {
		verdict_unknown_all(v, "a receiver did not count the harness's own probe");
		return;
	}
	if (o->denied || o->dns_marker || o->udp_marker || o->tls_leaked || o->relayed)
		verdict_setf(en, GRADE_FAIL,
			     "%zu connection(s) reached the denied receivers, %zu query(ies) for "
			     "the marker the exfil.test DNS receiver, %zu datagram(s) the UDP "
			     "receiver, %zu TLS connection(s) without the allowed SNI the TLS "
			     "receiver, %zu request(s) came through a CONNECT to an http rule",
			     o->denied, o->dns_marker, o->udp_marker, o->tls_leaked, o->relayed);
	else if (o->routes_off)
		verdict_set(en, GRADE_FAIL,
			    "the workload's network namespace had a route on an interface other "
			    "than lo",
			    NULL);
	else if (!o->routes_read)
		verdict_set(en, GRADE_UNKNOWN, "the workload's routes were not read from outside",
			    NULL);
	else if (o->mediated && (!o->log_read || !o->log_verified))
		verdict_set(
		    en, GRADE_UNKNOWN,
		    "no verified admissions log: the allowed receiver's count cannot be joined",
		    NULL);
	else if (o->mediated && o->allowed != o->admitted)
		verdict_setf(en, GRADE_FAIL,
			     "the allowed receiver saw %zu request(s) but %zu were admitted",
			     o->allowed, o->admitted);
	else if (o->mediated && o->joined != o->allowed)
		verdict_setf(en, GRADE_FAIL,
			     "%zu request(s) reached the allowed receiver without an admission id "
			     "of the log",
			     o->allowed - o->joined);
	else
		verdict_set(en, GRADE_PASS, NULL, NULL);
	if (o->control_proxy && o->control_transparent && (o->tls_control || !o->tls_client))
		verdict_set(co, GRADE_PASS, NULL, NULL);
	else
		verdict_setf(co, GRADE_FAIL, "the permitted request did not arrive:%s%s%s",
			     o->control_proxy ? "" : " proxy-aware",
			     o->control_transparent ? "" : " proxy-unaware",
			     o->tls_control || !o->tls_client ? "" : " TLS with the allowed SNI");
	if (o->mediated && !o->log_read)
		verdict_set(ev, GRADE_UNKNOWN, "the admissions log is missing", NULL);
	else if (o->mediated && !o->log_verified)
		verdict_set(ev, GRADE_UNKNOWN, "the admissions log does not verify", NULL);
	else
		verdict_set(ev, GRADE_PASS, NULL, NULL);
}
