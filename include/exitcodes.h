/* Exit statuses of paddock run (documented in paddock(1)). */
#pragma once

#define EXIT_RECORD	 122 /* --record-required: the workload ran, its record is not written */
#define EXIT_EXPIRED	 124 /* the time limit ended the workload (timeout(1)'s status) */
#define EXIT_LAUNCHER	 125 /* launcher or policy error; nothing of the workload ran */
#define EXIT_NOEXEC	 126 /* command found but not executable */
#define EXIT_NOTFOUND	 127 /* command not found */
#define EXIT_SIGNAL_BASE 128 /* workload died by signal N: 128 + N */
