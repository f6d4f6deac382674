/* HB-03's inventory of execution identities and their effective policy,
 * read from the host's /proc (hb03_inventory.c). The rules over what it
 * reads are hb03_grade.c's. */
#pragma once

#include <stdbool.h>
#include <sys/types.h>

#include "../../observers/observe.h"
#include "hb03_grade.h"

/* One inventoried execution identity and its effective policy. */
struct ident {
	bool found;
	struct proc_entry e;
	char exe[256];
	struct proc_policy pol;
};

/* The effective policy of pid from outside: /proc/PID/status and the
 * /proc/PID/ns links; out->read false when any of it is missing. The
 * test-only proc-policy-blind (make eval-selftest) reads the harness's
 * own, whatever pid is asked: a read-back that sees nothing. */
void adapter_policy_read(pid_t pid, struct proc_policy *out);
/* pid's /proc/PID/stat, exe and effective policy; false when it is gone. */
bool adapter_ident_read(pid_t pid, struct ident *id);
/* What the policy file declares: its namespaces and seccomp profile. */
void adapter_declared_read(const char *policy, struct declared_policy *d);
/* The read-back's proof that it sees a policy: a child of ours in a user
 * namespace of its own with no_new_privs must read apart from host (our
 * own, read before). A reader that returns one process for every pid
 * cannot pass it. */
bool adapter_readback_proof(const struct proc_policy *host);
/* The process whose exe is a python3 and whose command line holds token
 * as a word (the paddock exec client carries the token too, but is not
 * python3). */
bool adapter_tool_find(const char *token, pid_t *out);
