/* HB-18's exporter outage (hb18_outage.c): the evidence sink made
 * unavailable by the fixture while a run goes on, and the declared outage
 * contract (network.on_capture_loss allow-read-only) observed from
 * outside. */
#pragma once

#include "../../receivers/counter.h"
#include "hb18_grade.h"

struct case_run;

/* One run of the arm's policy with on_capture_loss allow-read-only, its
 * record (and so its evidence logs) on a small tmpfs of the fixture's
 * that the harness fills once the workload is ready and frees once it has
 * sent a read (GET) and a sensitive (POST) request to the receiver rx.
 * Fills o. */
void hb18_outage(struct case_run *cr, struct counter_rx *rx, struct outage_obs *o);
/* hb18_gaps.c's: paddock evidence verify LOG --record REC as the owner,
 * its output into out; true when it ran (exit 0 or 1: *complete). */
bool hb18_verify(struct case_run *cr, const char *rec, char *out, size_t n, bool *complete);
/* The tmpfs, unmounted (teardown; nothing when it was not mounted). */
void hb18_outage_teardown(struct case_run *cr);
