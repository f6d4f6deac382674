/* report.html and the progress line (report_html.c): pure over FILE * and
 * buffers, like report.c, so tests/unit/test_eval.c can pin them and
 * tests/check_report_html.py can check the page as Chromium renders it. */
#pragma once

#include <stddef.h>
#include <stdio.h>

#include "eval.h"

/* One self-contained page (no scripts, no external assets: the style is
 * inline): the run's verdict, the subject under test, the case x arm x
 * dimension matrix coloured by grade (table#matrix; each row carries
 * data-case and data-arm, each grade cell data-dim and data-grade), every
 * non-PASS reason (table#reasons), the alarms, and links to each arm's
 * JSON record (CASE.ARM.json beside the page, ':' as '_') and to the
 * completion records it read: relative when they lie under base (the
 * results directory, so the folder can move), file:// URLs otherwise.
 * Every string is escaped for HTML. */
void report_write_html(FILE *f, const struct result *rs, size_t n, const struct subject *s,
		       const char *base);

/* The record's file name beside the reports: "HB-03.weakened_KNOB.json". */
void report_record_name(const struct result *r, char *out, size_t len);

/* The progress line of result i (1-based) of total, without a newline:
 * "[3/12] HB-03 enforced PASS (1.2 s)"; the enforcement grade first (the
 * only one when all three are the same), the other dimensions named when
 * they are not PASS, then "as expected" for a
 * weakened or broken-collector arm whose outcome is what it must be, or
 * "FAILS RUN" / "ALARM". */
void report_progress_line(char *out, size_t len, size_t i, size_t total, const struct result *r);
