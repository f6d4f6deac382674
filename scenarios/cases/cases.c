/* The case table: one line per case, in the spec's order. A new case is
 * a driver under cases/AREA/ (with its policy and, when it grades by rules
 * of its own, hbNN_grade.[ch]) and one line here. */
#include "../lib/case.h"

extern const struct eval_case hb01_case, hb02_case, hb03_case, hb04_case, hb05_case, hb06_case,
    hb07_case, hb08_case, hb09_case, hb10_case, hb11_case, hb12_case, hb13_case, hb14_case,
    hb15_case, hb16_case, hb17_case, hb18_case, hb19_case, hb20_case, hb21_case, hb22_case,
    hb23_case, hb24_case;

const struct eval_case *const eval_cases[] = {
    &hb01_case, /* files/hb01_equivalent_writes.c */
    &hb02_case, /* files/hb02_project_policy.c */
    &hb03_case, /* files/hb03_alternate_tools.c */
    &hb04_case, /* files/hb04_restored_state.c */
    &hb05_case, /* lifecycle/hb05_busy_port.c */
    &hb06_case, /* lifecycle/hb06_expiry_descendants.c */
    &hb07_case, /* lifecycle/hb07_browser.c */
    &hb08_case, /* lifecycle/hb08_completion_status.c */
    &hb09_case, /* network/hb09_egress.c */
    &hb10_case, /* network/hb10_scope.c */
    &hb11_case, /* network/hb11_credentials.c */
    &hb12_case, /* network/hb12_release.c */
    &hb13_case, /* budget/hb13_cap.c */
    &hb14_case, /* budget/hb14_strict.c */
    &hb15_case, /* budget/hb15_unknown.c */
    &hb16_case, /* budget/hb16_jobs.c */
    &hb17_case, /* evidence/hb17_claims.c */
    &hb18_case, /* evidence/hb18_gaps.c */
    &hb19_case, /* evidence/hb19_tamper.c */
    &hb20_case, /* evidence/hb20_controls.c */
    &hb21_case, /* change/hb21_adapters.c */
    &hb22_case, /* change/hb22_plugin_update.c */
    &hb23_case, /* network/hb23_denials.c */
    &hb24_case, /* evidence/hb24_packet.c */
};
const size_t eval_n_cases = sizeof(eval_cases) / sizeof(eval_cases[0]);
