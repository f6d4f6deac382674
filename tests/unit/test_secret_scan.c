/* The forms the secret-marker scan looks for (scenarios/observers/
 * secret_scan.c: HB-11 and test_credentials.c), against spellings computed
 * elsewhere (Python's base64 and bytes.hex() of the same marker). */
#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>

#include "../../scenarios/observers/secret_scan.h"
#include "unit.h"

TestSuite(secret_scan, .fini = unit_leak_check);

Test(secret_scan, forms_of_a_marker)
{
	static char f[SCAN_FORMS][SCAN_FORM_LEN];
	static const char *const want[SCAN_FORMS] = {
	    "Sk~>?7q/Zx!e",
	    "536b7e3e3f37712f5a782165",
	    "536B7E3E3F37712F5A782165",
	    "U2t+Pj83cS9aeCFl",
	    "Nrfj4/N3EvWnghZ",
	    "Ta34+PzdxL1p4IW",
	    "U2t-Pj83cS9aeCFl",
	    "Nrfj4_N3EvWnghZ",
	    "Ta34-PzdxL1p4IW",
	    "%53%6B%7E%3E%3F%37%71%2F%5A%78%21%65",
	    "%53%6b%7e%3e%3f%37%71%2f%5a%78%21%65",
	    "\\u0053\\u006B\\u007E\\u003E\\u003F\\u0037\\u0071\\u002F\\u005A\\u0078\\u0021\\u0065",
	    "\\u0053\\u006b\\u007e\\u003e\\u003f\\u0037\\u0071\\u002f\\u005a\\u0078\\u0021\\u0065",
	    "Sk~>?7q\\/Zx!e",
	};

	cr_assert_eq(scan_forms("Sk~>?7q/Zx!e", f), SCAN_FORMS);
	for (size_t i = 0; i < SCAN_FORMS; i++)
		cr_expect_str_eq(f[i], want[i], "%s", scan_form_names[i]);
}

/* Each form is found in a text, inside other bytes; the raw look-up finds
 * only the marker as it is; a text without any is clean. */
Test(secret_scan, has_finds_every_form)
{
	static char f[SCAN_FORMS][SCAN_FORM_LEN];
	static char text[SCAN_FORMS * SCAN_FORM_LEN + 16];

	scan_forms("Sk~>?7q/Zx!e", f);
	for (size_t i = 0; i < SCAN_FORMS; i++) {
		snprintf(text, sizeof(text), "..%s..", f[i]);
		cr_expect(scan_has(text, strlen(text), "Sk~>?7q/Zx!e"), "%s", scan_form_names[i]);
		cr_expect_eq(scan_has_raw(text, strlen(text), "Sk~>?7q/Zx!e"), i == 0, "%s",
			     scan_form_names[i]);
	}
	cr_expect(!scan_has("..Sk~>?7q/Zx!..", 15, "Sk~>?7q/Zx!e"));
	cr_expect(!scan_has("536b7e3e3f37712f5a7821", 22, "Sk~>?7q/Zx!e"));
}
