/* The record's "controls" (docs/record.md, HB-20): every control paddock
 * reports, labelled by when it acts. prevention: it refuses before the
 * effect (the mount tree, Landlock, seccomp, the mediator, the protected
 * paths); detection: it sees the effect after it happened (the check of
 * the host's git files after the run); response: it acts after the fact
 * (a kill at expiry or at a stop). A response never counts as prevention:
 * a kill after a write does not undo the write (Tetragon's enforcement
 * docs say as much of a SIGKILL sent in write()). Whether an effect
 * happened is not paddock's to say: "effect_observed" stays null here, for
 * a harness with independent evidence (a canary digest, a receiver's
 * ledger) to fill in. */
#include "run.h"

#include <cjson/cJSON.h>

#include "../../include/admission.h"

static void add(cJSON *a, const char *control, const char *kind, const char *hook, bool in_effect,
		long acted)
{
	cJSON *o = cJSON_CreateObject();

	cJSON_AddStringToObject(o, "control", control);
	cJSON_AddStringToObject(o, "kind", kind);
	cJSON_AddStringToObject(o, "hook", hook);
	cJSON_AddBoolToObject(o, "in_effect", in_effect);
	if (acted >= 0)
		cJSON_AddNumberToObject(o, "acted", (double)acted);
	else
		cJSON_AddNullToObject(o, "acted"); /* it does not count what it refuses */
	cJSON_AddNullToObject(o, "effect_observed");
	cJSON_AddItemToArray(a, o);
}

cJSON *record_controls(const struct run *r)
{
	const uint64_t w = r->spec->opt->weaken;
	const struct policy *p = r->spec->policy;
	cJSON *a = cJSON_CreateArray();
	unsigned long refused = 0;

	if (!a)
		return NULL;
	add(a, "mounts", "prevention", "read-only binds and the private mount tree (mounts/)",
	    !(w & WEAKEN_RW_BINDS), -1);
	add(a, "landlock", "prevention", "Landlock ruleset (launcher/sandbox/landlock.c)",
	    r->spec->sb.landlock.enabled, -1);
	add(a, "seccomp", "prevention", "seccomp filter (launcher/sandbox/seccomp.c)",
	    r->spec->sb.seccomp.enabled, -1);
	add(a, "protected-paths", "prevention", "placeholders over protected paths (mounts/)",
	    !(w & WEAKEN_NO_PROTECT) && p && p->n_protect > 0, -1);
	if (r->spec->sb.anyip) {
		for (int k = 1; k < MEDIATOR_DECISIONS; k++)
			if (k != MEDIATOR_DNS_ANSWERED && k != MEDIATOR_RELEASED &&
			    k != MEDIATOR_HELD && k != MEDIATOR_DNS_FORWARDED &&
			    k != MEDIATOR_UPSTREAM)
				refused += r->out.net.counts[k];
		add(a, "mediator", "prevention", "paddock-mediator admissions (mediator/)",
		    r->out.net.reported, r->out.net.reported ? (long)refused : -1);
	}
	add(a, "tampering-check", "detection",
	    "host git files checked after the run (mounts/git.c)", true,
	    r->out.over ? r->out.n_tampering : -1);
	add(a, "expiry", "response", "SIGKILL of the sandbox at its ttl", p && p->ttl_ms > 0,
	    r->out.expired ? 1 : 0);
	add(a, "stop", "response", "SIGTERM, then SIGKILL after the grace (paddock stop)", true,
	    r->out.stopped ? 1 : 0);
	return a;
}
