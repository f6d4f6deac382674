/* The forms the secret-marker scan looks for (scenarios/observers/
 * secret_scan.c: HB-11 and test_credentials.c), against spellings computed
 * elsewhere (Python's base64 and bytes.hex() of the same marker). */
#include <criterion/criterion.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

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

/* A process the live scan could not read is left out only when it has
 * ended (a zombie, or reaped): a live one stays an unread place. */
Test(secret_scan, a_process_that_ended_is_told_from_a_live_one)
{
	int go[2];
	pid_t live, dead;
	char c = 0;

	cr_assert_eq(pipe(go), 0);
	live = fork();
	cr_assert_geq(live, 0);
	if (live == 0) {
		close(go[1]);
		(void)!read(go[0], &c, 1);
		_exit(0);
	}
	close(go[0]);
	cr_expect_not(scan_proc_ended(live), "a live process counted as ended");
	cr_expect_not(scan_proc_ended(getpid()));
	dead = fork();
	cr_assert_geq(dead, 0);
	if (dead == 0)
		_exit(0);
	for (int i = 0; i < 200 && !scan_proc_ended(dead); i++)
		usleep(5000);
	cr_expect(scan_proc_ended(dead), "a zombie is not seen as ended");
	cr_assert_eq(waitpid(dead, NULL, 0), dead);
	cr_expect(scan_proc_ended(dead), "a reaped process is not seen as ended");
	close(go[1]);
	cr_assert_eq(waitpid(live, NULL, 0), live);
}
