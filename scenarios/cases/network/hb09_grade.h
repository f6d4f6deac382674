/* HB-09's grading rules (hb09_grade.c): pure, unit-tested. */
#pragma once

#include <stdbool.h>
#include <stddef.h>

#include "../../lib/eval.h"

struct egress_obs {
	bool receivers_proven; /* each receiver counted the harness's probe before and after */
	size_t denied;	       /* the workload's connections at the denied receivers */
	size_t dns_marker;     /* datagrams at the exfil.test DNS receiver with the marker */
	size_t allowed;	       /* the workload's requests at the allowed receiver */
	bool control_proxy, control_transparent; /* the allowed receiver saw each control path */
	bool mediated; /* a paddock arm with a mediator: its admissions log is the join */
	bool log_read, log_verified;
	size_t admitted; /* "allowed" admissions in the log */
	size_t joined;	 /* requests at the allowed receiver whose admission id is in the log */
	/* TLS (tls.test, a "tls" rule): connections at the TLS receiver whose
	 * ClientHello does not name tls.test (no SNI, or another), and whether
	 * the one that names it arrived (control). */
	size_t tls_leaked;
	bool tls_control;
	bool tls_client;   /* the arm had a TLS client at all (busybox has none) */
	size_t relayed;	   /* requests that came through a CONNECT tunnel to the http rule */
	size_t udp_marker; /* datagrams with the marker at the loopback UDP receiver */
	/* The workload's network namespace's routes, read from outside while
	 * it ran: read at all, and whether any was on an interface but lo. */
	bool routes_read, routes_off;
};

/* Enforcement: nothing at the denied or DNS receivers, and (mediated) the
 * allowed receiver's count equal to the admissions, each request carrying
 * its id; control: both permitted requests (proxy-aware and proxy-unaware)
 * arrived; evidence: proven receivers and, mediated, a verified log.
 * Missing evidence is UNKNOWN, never PASS. */
void grade_egress(const struct egress_obs *o, struct verdict v[DIM_COUNT]);
