/* Integration: the registry's leftovers (docs/sessions.md, "The
 * registry"): a ".new-ID" directory whose registration died is removed by
 * the next ps or run; one a live registration holds is not. The squatted
 * /tmp path needs a second user: test_root.c. */
#include "harness.h"

#include <sys/file.h>

TestSuite(registry, .init = h_init, .fini = h_fini, .timeout = 60);

Test(registry, dead_registrations_are_swept_live_ones_kept)
{
	struct h_sworld s = h_sworld();
	char *dead, *held;
	struct h_proc p;
	int lock;

	cr_assert_eq(mkdir(s.reg, 0700), 0);
	dead = h_mkdir(s.reg, ".new-0123456789ab", 0700);
	h_write_file(h_join(dead, "session.json"), "{", 0600);
	held = h_mkdir(s.reg, ".new-ba9876543210", 0700);
	/* What a registering supervisor holds (launcher/session/server.c). */
	lock = open(held, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	cr_assert_geq(lock, 0);
	cr_assert_eq(flock(lock, LOCK_EX), 0);
	/* Younger than SESSION_SWEEP_AGE: kept, it may be being made. */
	H_PADDOCK(&p, s.w.ws, "ps");
	cr_assert_eq(p.status, 0, H_SHOW(&p));
	cr_assert(h_exists(dead));
	h_sleep_ms(10500);
	H_PADDOCK(&p, s.w.ws, "ps");
	cr_assert_eq(p.status, 0, H_SHOW(&p));
	cr_assert(!h_exists(dead), "dead .new- directory left");
	cr_assert(h_exists(held), "a live registration's directory was removed");
	close(lock);
	/* Unlocked now: the next run sweeps it too. */
	H_PADDOCK(&p, s.w.ws, "run", "--", "true");
	cr_assert_eq(p.status, 0, H_SHOW(&p));
	cr_assert(!h_exists(held));
	cr_assert_str_eq(h_list_dir(s.reg), "", "%s", h_list_dir(s.reg));
}
