/* paddock oci (cmd_oci.c, cmd_oci_run.c): what the two files share. The
 * binary's own header, not a module's: docs/oci.md has the model. */
#pragma once

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "../include/err.h"
#include "supervisor/oci.h"

#define OCI_ID_MAX 128
/* Where a root caller's monitor binds the rootfs (oci_monitor()). */
#define OCI_VIEW_DIR "/run/paddock-oci-rootfs"

/* The global options (runc's), and where this container's state is. */
struct oci_ctx {
	const char *root; /* --root, or the default */
	const char *log;  /* --log FILE, or NULL */
	bool log_json;	  /* --log-format json */
	char dir[4096];	  /* ROOT/ID */
	const char *id;
	const char *console; /* --console-socket, or NULL */
	/* --weaken KNOB[,KNOB] (global): paddock run's --weaken for every
	 * container, as an engine's runtime with arguments gives it (docs/
	 * oci.md, "A weakened runtime"); NULL: none */
	const char *weaken;
};

/* What a container's state.json holds (written by the monitor at create). */
struct oci_state {
	char id[OCI_ID_MAX + 1];
	char bundle[4096];
	char session[80];
	char record[4200];
	char created[64];
	pid_t pid;	/* the monitor: what --pid-file names, what the engine reaps */
	uint64_t start; /* its start time (field 22 of /proc/PID/stat) */
	pid_t init;	/* the sandbox's PID 1 on the host */
	uint64_t init_start;
	uint32_t uid, gid; /* of the process inside */
};

enum oci_status {
	OCI_CREATED,
	OCI_RUNNING,
	OCI_STOPPED,
};

/* One error: "paddock oci: MSG" on stderr and, with --log, a line in the
 * log (JSON with --log-format json: what containerd's shim reads back).
 * Returns EXIT_LAUNCHER. */
int oci_fail(const struct oci_ctx *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Each line of text into --log at level ("warning", "error"). */
void oci_log(const struct oci_ctx *c, const char *level, const char *text);
/* The start time of pid, 0 when it is gone (or a zombie). */
uint64_t oci_start_time(pid_t pid);
/* state.json of c->dir into st: 0, or -errno (-ENOENT: no such container). */
int oci_state_read(const struct oci_ctx *c, struct oci_state *st);
int oci_state_write(const struct oci_ctx *c, const struct oci_state *st, const char *annotations,
		    struct err *err);
enum oci_status oci_status_of(const struct oci_ctx *c, const struct oci_state *st);
/* The runtime-spec state document of st (malloc'd), for state and hooks. */
char *oci_state_json(const struct oci_ctx *c, const struct oci_state *st, enum oci_status s,
		     pid_t pid);
/* Run the hooks of kind of cfg with the state on stdin, in order; the first
 * that fails or outlasts its timeout is -errno with err naming it. */
int oci_hooks_run(const struct oci_config *cfg, enum oci_hook_kind kind, const char *state,
		  struct err *err);

/* cmd_oci_run.c: the container's monitor (forked by create; returns only
 * by _exit), and paddock oci exec. */
/* ready_fd: where "ok" goes; stderr_fd: the real stderr, put back on fd
 * 2 then (until then fd 2 is create's pipe). */
void oci_monitor(const struct oci_ctx *c, struct oci_config *cfg, const char *bundle, int ready_fd,
		 int stderr_fd) __attribute__((noreturn));
int oci_exec(const struct oci_ctx *c, int argc, char **argv);
/* A pty pair of the host's: the master goes to the engine over the unix
 * socket at sock (runc's console protocol: SCM_RIGHTS, the pty's name as
 * the payload), the slave (size rows x cols when given) is returned, or
 * -errno with err set. */
int oci_console(const char *sock, unsigned rows, unsigned cols, struct err *err);
