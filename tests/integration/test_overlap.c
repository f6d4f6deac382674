/* Overlapping sandboxes in one workspace: their own binary, so that its
 * load (three loops of runs) does not run beside test_fs.c's timing-bound
 * two_sandboxes_* tests (Criterion runs a binary's tests in parallel). */
#include "harness.h"

/* Regression: sandboxes starting and ending at once in one workspace. One
 * run's cleanup removed a placeholder (a directory such as .github, or
 * a file) between another's look and its open or create, and that run
 * failed with "protect[N]: create placeholder .gitmodules: No such file or
 * directory" (about 1 in 30 runs with two or three at once); such a race
 * is looked at again now (mounts/protect.c, resolve()). */
Test(overlap, overlapping_sandboxes_in_one_workspace_all_start, .timeout = 300)
{
	struct h_world w = h_world();
	/* Three loops, not in step: runs start while others end. */
	char *argv[] = {"/bin/sh", "-c",
			"i=0; while [ $i -lt 60 ]; do \"$0\" run -- true || exit 1; "
			"i=$((i+1)); done",
			(char *)h_paddock(), NULL};
	struct h_proc p[3];

	for (int i = 0; i < 3; i++)
		h_spawn(&p[i], w.ws, argv, NULL);
	for (int i = 0; i < 3; i++) {
		h_wait(&p[i], H_TIMEOUT_MS * 4);
		cr_assert_eq(p[i].status, 0, "loop %d: " H_FMT, i, H_ARGS(&p[i]));
	}
	h_assert_no_placeholders(w.ws);
	cr_assert_str_eq(h_list_dir(w.ws), "");
}
