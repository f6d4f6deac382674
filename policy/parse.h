/* Parsing split across files (private to policy/). */
#pragma once

#include <cjson/cJSON.h>

#include "../include/err.h"
#include "policy.h"

struct policy_parse_info;

/* Walk the "mounts" array into p->mounts; strings as written. */
int policy_parse_mounts(const cJSON *arr, struct policy *p, struct err *err);

/* Walk the "seccomp" object into p->seccomp_*; syscall names are checked
 * for form only (the launcher asks libseccomp whether they exist). */
int policy_parse_seccomp(const cJSON *obj, struct policy *p, struct policy_parse_info *info,
			 struct err *err);

/* Walk the "services" array into p->services. */
int policy_parse_services(const cJSON *arr, struct policy *p, struct err *err);

/* Walk the "landlock" object into p->landlock_*. */
int policy_parse_landlock(const cJSON *obj, struct policy *p, struct err *err);

/* Walk the "ports" array into p->ports (at most POLICY_PORTS_MAX). */
int policy_parse_ports(const cJSON *arr, struct policy *p, struct err *err);

/* Walk "network" (a mode string, or an object with mode, allow, resolve). */
int policy_parse_network(const cJSON *it, struct policy *p, struct err *err);

/* The release gate's parts of "network" (parse_gate.c): a rule's
 * "publish" and "private" (rule->protocol already parsed; path is the
 * rule's JSON path), and "hold" (it may be NULL: the default stays). */
int policy_parse_gate_rule(const cJSON *obj, const char *path, struct policy_net_rule *rule,
			   struct err *err);
int policy_parse_gate_hold(const cJSON *it, struct policy *p, struct err *err);
/* "attempts" and "deadline" of obj (a rule or a grant at path) into b;
 * neither present leaves b as it was. One-line errors. */
int policy_parse_budget(const cJSON *obj, const char *path, struct policy_net_budget *b,
			struct err *err);

/* parse_meter.c: a rule's "metered" object (a budget, its cap, where the
 * charge is, a price) into rule->meter, and a grant's ({"price": ...},
 * only on a metered rule) into g->price. One-line errors. */
int policy_parse_meter(const cJSON *obj, const char *path, struct policy_net_rule *rule,
		       struct err *err);
int policy_parse_grant_meter(const cJSON *obj, const char *path, const struct policy_net_rule *rule,
			     struct policy_net_grant *g, struct err *err);
void policy_meter_free(struct policy_net_meter *m);
void policy_price_free(struct policy_net_price *p);

/* parse_jobs.c: a metered rule's "jobs" object into rule->jobs. */
int policy_parse_jobs(const cJSON *obj, const char *path, struct policy_net_rule *rule,
		      struct err *err);
void policy_jobs_free(struct policy_net_jobs *j);

/* parse_adapter.c: a rule's "adapter" and "fallback"; "network.actions";
 * and, once every rule is parsed, each fallback's primary and ledger. */
int policy_parse_adapter(const cJSON *obj, const char *path, struct policy_net_rule *rule,
			 struct err *err);
int policy_parse_actions(const cJSON *it, struct policy *p, struct err *err);
int policy_check_adapters(const struct policy *p, struct err *err);
void policy_actions_free(struct policy_net_actions *a);

/* "<path>: invalid size ..." or "<path>: size ... is too large" for the
 * result r of policy_parse_size(); hint is appended to the examples. */
int policy_size_error(int r, const char *path, const char *s, const char *hint, struct err *err);

/* The value of an errno name from the table in names.c ("EPERM" -> EPERM),
 * 0 for a name not in it. */
int policy_errno_value(const char *name);

/* parse_credentials.c: a grant's "credential" object into g->credential,
 * and "network.secrets" (a path, expanded and checked by validate.c). */
int policy_parse_credential(const cJSON *obj, const char *path, struct policy_net_grant *g,
			    struct err *err);
int policy_parse_net_secrets(const cJSON *it, struct policy *p, struct err *err);
/* The rules across grants: one secret per env name, env names not set by
 * the policy's environment (nor --setenv), one env per header or query
 * name of a rule. */
int policy_check_credentials(const struct policy *p, struct err *err);
void policy_credential_free(struct policy_net_credential *c);
