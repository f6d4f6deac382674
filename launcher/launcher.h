/* launcher/: the paddock binary. Verb dispatch (main.c), the options of
 * paddock run (args.c, run by supervisor/), and the client verbs that talk
 * to a running session over its control socket (cmd_session.c, cmd_exec.c,
 * cli.c). Includes supervisor/ and session/ only through their headers. */
#pragma once

#include "../include/err.h"
#include "exec_client.h"
#include "session/session.h"
#include "supervisor/supervisor.h"

/* args.c: parse "paddock run ..." (argv after "run"). Returns 0, 1 when
 * help or version was printed (exit 0), or -EINVAL with err set. *o owns
 * arrays; free with options_free(). */
int options_parse(int argc, char **argv, struct options *o, struct err *err);
void options_free(struct options *o);

/* cmd_session.c: paddock ps, stop, wait and rm; cmd_exec.c: paddock exec
 * (argv from the command word on). Each returns the exit status and prints
 * its own one-line errors. */
int cmd_ps(int argc, char **argv);
int cmd_stop(int argc, char **argv);
int cmd_wait(int argc, char **argv);
int cmd_logs(int argc, char **argv);
int cmd_doctor(int argc, char **argv);
int cmd_policy(int argc, char **argv);
int cmd_rm(int argc, char **argv);
int cmd_exec(int argc, char **argv);
/* cmd_approve.c: paddock approve (the release gate, docs/network.md). */
int cmd_approve(int argc, char **argv);
/* cmd_trust.c: paddock trust (project policies, docs/security.md). */
int cmd_trust(int argc, char **argv);
/* cmd_plugin.c: paddock plugin review|approve|run (HB-22). */
int cmd_plugin(int argc, char **argv);
/* cmd_endpoint.c: paddock endpoint (docs/sessions.md, "Endpoint identity"). */
int cmd_endpoint(int argc, char **argv);
/* cmd_budget.c: paddock budget (metered rules' ledgers, docs/network.md). */
int cmd_budget(int argc, char **argv);
/* cmd_oci.c: paddock oci, an OCI runtime with runc's command line
 * (docs/oci.md); also the whole of paddock-oci (argv[0]). */
int cmd_oci(int argc, char **argv);
/* cmd_evidence.c: paddock evidence verify|export (docs/evidence.md).
 * evidence_slurp(): a whole file of at most max bytes, NUL-terminated,
 * into *out (malloc'd). evidence_recorded_knob(): the record's text lists
 * the weakening knob. */
int cmd_evidence(int argc, char **argv);
int evidence_slurp(const char *path, size_t max, char **out, size_t *len);
bool evidence_recorded_knob(const char *text, size_t len, const char *knob);
/* cmd_reconcile.c: paddock evidence reconcile (HB-17). */
int cmd_evidence_reconcile(int argc, char **argv);

/* cli.c: what the client verbs share. cli_fail() prints "paddock: MSG"
 * and returns EXIT_LAUNCHER. cli_lookup(): open the caller's registry into
 * reg and find the session (an id or a name), removing a stale one
 * (-ESRCH); err says what is wrong. cli_dial(): connect to the session's
 * control socket, whose listener must be the registered supervisor with
 * the caller's uid (SO_PEERCRED): the fd, or -errno with err set. */
/* cli_ensure_stdio() and cli_fail(): exec_client.h. */
/* A getopt_long() answer that is none of verb's options (':' an option
 * without its argument, anything else an unknown one): the one-line
 * error, EXIT_LAUNCHER. */
int cli_bad_option(int ch, char *const argv[], const char *verb);
int cli_lookup(struct registry *reg, const char *what, struct session_info *info, struct err *err);
int cli_dial(const struct registry *reg, const struct session_info *info, struct err *err);
