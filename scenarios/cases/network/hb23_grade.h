/* HB-23's grading rules (hb23_grade.c): pure, unit-tested. */
#pragma once

#include <stdbool.h>
#include <stddef.h>

#include "../../lib/eval.h"

struct denial_obs {
	bool proven; /* the tool logged the harness's probe before and after */
	/* What the tool served (its own log), against what the workload tried. */
	size_t deny_served, busy_served, drop_served, ok_served;
	size_t deny_tries, busy_tries, drop_tries;
	unsigned attempts; /* the policy's budget per operation */
	bool mediated;	   /* a paddock arm: its admissions log is read */
	bool log_read, log_verified;
	/* From the admissions log (the mediator's own record). */
	size_t written;	    /* denials the mediator wrote (entries with denial_sha256) */
	size_t terse;	    /* of those, byte for byte the fixed form of their class and id */
	size_t tool_errors; /* outcomes with the tool's 4xx/5xx status */
	size_t replaced;    /* of those, replaced by a denial */
	size_t joined;	    /* of those, whose detail_sha256 is what the tool logged sending */
	size_t unknown;	    /* "unknown" outcomes */
	size_t held;	    /* held-unknown decisions */
	size_t correlated;  /* denials carrying a decision and a correlation id */
	bool control;	    /* the /ok request served, and recorded as succeeded */
};

/* The fixed terse denial of class ("denied", "transient", "unknown") and
 * correlation id, as docs/network.md defines it, into out: its length, or
 * 0 for an unknown class or no room. */
size_t hb23_terse_form(const char *cls, const char *id, char *out, size_t size);

/* Enforcement: the terminal denial reached the tool once, the transient
 * one at most the budget, the unknown one once; every denial the mediator
 * wrote is the fixed terse form; every tool error with its diagnostic was
 * replaced. Control: the /ok operation arrived and succeeded. Evidence:
 * a proven tool, a verified log, every replaced diagnostic joined by its
 * digest, the unknown outcome recorded. Missing evidence is UNKNOWN. */
void grade_denials(const struct denial_obs *o, struct verdict v[DIM_COUNT]);
