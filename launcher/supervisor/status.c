/* The exit status of paddock run (paddock(1), EXIT STATUS). */
#include "outcome.h"

#include "../../include/exitcodes.h"

const char *ending_name(enum ending e)
{
	switch (e) {
	case ENDING_EXIT:
		return "exit";
	case ENDING_SIGNAL:
		return "signal";
	case ENDING_EXPIRED:
		return "expired";
	case ENDING_LAUNCHER_ERROR:
		return "launcher-error";
	case ENDING_STOPPED:
		return "stopped";
	case ENDING_INIT_DIED:
		return "init-died";
	}
	return "unknown";
}

int exit_status_for(enum ending e, int code)
{
	switch (e) {
	case ENDING_EXIT:
		return code >= 0 && code <= 255 ? code : EXIT_LAUNCHER;
	case ENDING_SIGNAL:
		return code > 0 && code < 128 ? EXIT_SIGNAL_BASE + code : EXIT_LAUNCHER;
	case ENDING_EXPIRED:
		/* As timeout(1): whatever signal then ended it (the record
		 * keeps it), the time limit did. */
		(void)code;
		return EXIT_EXPIRED;
	case ENDING_STOPPED:
		/* The signal that ended the workload, SIGKILL when it had to be
		 * killed with the namespace and never reported. */
		return EXIT_SIGNAL_BASE + (code > 0 && code < 128 ? code : 9);
	case ENDING_INIT_DIED:
		/* code: the signal that killed init after the start, or -1. */
		return code > 0 && code < 128 ? EXIT_SIGNAL_BASE + code : EXIT_LAUNCHER;
	case ENDING_LAUNCHER_ERROR:
		return EXIT_LAUNCHER;
	}
	return EXIT_LAUNCHER;
}
