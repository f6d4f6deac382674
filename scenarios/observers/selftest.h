/* Test-only switches of the harness (make eval-selftest,
 * docs/scenarios.md "Self-test"): PADDOCK_EVAL_SELFTEST is a
 * comma-separated list of mutations that blind an observer or break a
 * boundary on purpose, so that the self-test can check the grades say
 * UNKNOWN or FAIL, never PASS. Only paddock-eval reads it; paddock never
 * does. Mutations: fan-keep-nothing (observers/fan_read.c keep()),
 * canary-mark-missing (lib/case.c), digest-blind (observers/observe.c),
 * hb05-kill-as-owner, hb05-same-owner-hit, hb05-idents-blind
 * (cases/lifecycle/hb05_busy_port.c), hb06-inventory-blind, hb06-lost-unproven,
 * hb06-freeze-other (cases/lifecycle/hb06_expiry_descendants.c), hb08-lie, hb08-runner-lost
 * (cases/lifecycle/hb08_completion_status.c), knob-dropped (lib/argv.c), receivers-blind
 * (receivers/counter.c), admissions-unread (cases/network/hb09_egress.c),
 * hb02-inventory-blind (cases/files/hb02_inventory.c), hb02-no-marker
 * (cases/files/hb02_project_policy.c), hb18-outage-allow, hb18-no-fill
 * (cases/evidence/hb18_outage.c). */
#pragma once

#include <stdbool.h>

/* HB-03's and HB-04's mutations: review-snapshot-only and hb04-no-restore
 * (cases/files/hb04_restored_state.c), fan-coarse-time
 * (observers/fan_read.c handle_note()), proc-policy-blind
 * (cases/files/hb03_inventory.c), hb03-tool-unseen
 * (cases/files/hb03_alternate_tools.c). */

/* name is in PADDOCK_EVAL_SELFTEST. */
bool selftest_on(const char *name);
