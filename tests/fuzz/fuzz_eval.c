/* libFuzzer target for paddock-eval's readers of what a workload can
 * shape: the first byte picks one, the rest is its input.
 *   's' proc_policy_status() (HB-03's read-back of /proc/PID/status,
 *       whose Name line is the workload's own comm)
 *   'r' result_read_json() (paddock-eval report's reader of the per-arm
 *       JSON records it merges, from results directories of other runs)
 *   clang -fsanitize=fuzzer,address,undefined ... (make fuzz FUZZ=eval)
 * Built with replay.c instead, make unit runs tests/data/eval through it. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "../../include/err.h"
#include "../../scenarios/cases/files/hb03_grade.h"
#include "../../scenarios/lib/eval.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct proc_policy p = {0};
	char *text;

	if (size >= 1 && data[0] == 'r') {
		static struct result r;
		struct subject s;
		struct err err = {0};

		/* Every dimension read is set and a known grade, or it fails. */
		if (result_read_json((const char *)data + 1, size - 1, &r, &s, &err) == 0)
			for (int d = 0; d < DIM_COUNT; d++)
				if (!r.v[d].set || (unsigned)r.v[d].grade > GRADE_NOT_APPLICABLE)
					__builtin_trap();
		return 0;
	}
	if (size < 1 || data[0] != 's')
		return 0;
	/* The reader gets NUL-terminated text (read_file()). */
	text = malloc(size);
	if (!text)
		return 0;
	memcpy(text, data + 1, size - 1);
	text[size - 1] = '\0';
	if (proc_policy_status(text, &p) == 0 && (p.nnp < 0 || p.seccomp < 0 || p.filters < 0))
		__builtin_trap();
	free(text);
	return 0;
}
