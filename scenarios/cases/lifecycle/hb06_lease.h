/* HB-06's legitimate control (hb06_lease.c): a leased server outlives its
 * main command until its lease ends, and nothing else of the main command
 * does. Grades cr->r's control (and lowers its enforcement to FAIL when a
 * leftover of the main command lives on in a retained session). */
#pragma once

#include "../../lib/case.h"

void hb06_control_lease(struct case_run *cr);
