/* HB-02's live process inventory (hb02_inventory.c): while a step's run
 * waits, the sandbox's processes as the host's /proc shows them: the pid
 * namespace of the workload (found by a token of its command line), every
 * process in it with its start time, exe and command line, and whether
 * the project policy's plugin service is among them. The workload waits
 * for the harness (a file in the workspace) so that the look is taken
 * while the sandbox lives, whatever the machine's load. */
#pragma once

#include <limits.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#define HB02_PROCS_MAX 12
/* The plugin service's marker argument ($0 of its shell). */
#define HB02_PLUGIN_ARG "hb02-plugin"
/* The files of the handshake, in the workspace: the workload says it is
 * ready to be looked at, the harness that it looked. */
#define HB02_READY  ".hb02-ready"
#define HB02_LOOKED ".hb02-looked"

struct hb02_proc {
	pid_t pid;
	unsigned long long start; /* field 22 of /proc/PID/stat */
	char exe[128];
	char cmdline[160];
	bool plugin; /* its $0 (fourth argument) is HB02_PLUGIN_ARG */
};

struct hb02_inventory {
	char ready[PATH_MAX + 32], looked[PATH_MAX + 32], token[32];
	bool taken; /* the workload found, its pid namespace (not ours) listed */
	unsigned long pidns;
	struct hb02_proc p[HB02_PROCS_MAX];
	size_t n, more;	   /* more: members past HB02_PROCS_MAX */
	size_t unreadable; /* members whose command line could not be read */
	bool plugin;	   /* the plugin service runs in the sandbox */
	char why[160];	   /* when not taken */
	pthread_t thread;
	atomic_bool stop;
	bool started;
};

/* Start looking for the handshake of the workload whose command line has
 * the argument token, in workspace ws. 0 or -errno. */
int hb02_inventory_start(struct hb02_inventory *inv, const char *ws, const char *token);
/* Stop (once the run is over) and join; the findings stay in inv. */
void hb02_inventory_stop(struct hb02_inventory *inv);
