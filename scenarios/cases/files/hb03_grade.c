/* HB-03: the case's own rules (hb03_grade.h). */
#include "hb03_grade.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char *const pp_ns_policy[PP_NS_COUNT] = {"user", "mount", "pid",	 "net",
					       "ipc",  "uts",	"cgroup"};
const char *const pp_ns_proc[PP_NS_COUNT] = {"user", "mnt", "pid", "net", "ipc", "uts", "cgroup"};

/* The value after "\nKEY:" (or at the start), parsed in base. */
static int status_field(const char *text, const char *key, int base, unsigned long long *out)
{
	size_t k = strlen(key);
	char *end;

	for (const char *p = text; p; p = strchr(p, '\n')) {
		if (*p == '\n')
			p++;
		if (strncmp(p, key, k) != 0 || p[k] != ':')
			continue;
		p += k + 1;
		while (*p == ' ' || *p == '\t')
			p++;
		errno = 0;
		*out = strtoull(p, &end, base);
		if (end == p || errno || (*end != '\n' && *end != '\0'))
			return -EINVAL;
		return 0;
	}
	return -EINVAL;
}

int proc_policy_status(const char *text, struct proc_policy *out)
{
	unsigned long long v[8];
	static const char *const dec[] = {"NoNewPrivs", "Seccomp", "Seccomp_filters"};
	static const char *const hex[] = {"CapInh", "CapPrm", "CapEff", "CapBnd", "CapAmb"};

	for (size_t i = 0; i < 3; i++)
		if (status_field(text, dec[i], 10, &v[i]) < 0 || v[i] > 0x7fffffff)
			return -EINVAL;
	for (size_t i = 0; i < 5; i++)
		if (status_field(text, hex[i], 16, &v[3 + i]) < 0)
			return -EINVAL;
	out->nnp = (int)v[0];
	out->seccomp = (int)v[1];
	out->filters = (int)v[2];
	out->cap_inh = v[3];
	out->cap_prm = v[4];
	out->cap_eff = v[5];
	out->cap_bnd = v[6];
	out->cap_amb = v[7];
	return 0;
}

/* Count one mismatch; the first one's text goes to why. */
__attribute__((format(printf, 4, 5))) static void miss(int *k, char *why, size_t n, const char *fmt,
						       ...)
{
	va_list ap;

	if ((*k)++ || !n)
		return;
	va_start(ap, fmt);
	vsnprintf(why, n, fmt, ap);
	va_end(ap);
}

int proc_policy_confined(const struct proc_policy *ref, const struct proc_policy *host,
			 const struct declared_policy *d, char *why, size_t n)
{
	int k = 0;

	if (n)
		why[0] = '\0';
	if (!ref->read || !host->read) {
		miss(&k, why, n, "the %s was not read back", ref->read ? "host" : "workload");
		return k;
	}
	for (int i = 0; i < PP_NS_COUNT; i++)
		if ((d->ns & (1u << i)) && (!ref->ns[i] || ref->ns[i] == host->ns[i]))
			miss(&k, why, n, "the workload's %s namespace is %s", pp_ns_policy[i],
			     ref->ns[i] ? "the host's" : "unread");
	if (ref->nnp != 1)
		miss(&k, why, n, "the workload has no no_new_privs");
	if (d->seccomp && (ref->seccomp != 2 || ref->filters < 1))
		miss(&k, why, n, "the workload has no seccomp filter (mode %d, %d filters)",
		     ref->seccomp, ref->filters);
	if (ref->cap_inh | ref->cap_prm | ref->cap_eff | ref->cap_bnd | ref->cap_amb)
		miss(&k, why, n, "the workload holds capabilities (bounding set %llx)",
		     ref->cap_bnd);
	return k;
}

int proc_policy_compare(const struct proc_policy *ref, const struct proc_policy *got,
			const struct declared_policy *d, char *why, size_t n)
{
	int k = 0;

	if (n)
		why[0] = '\0';
	if (!ref->read || !got->read) {
		miss(&k, why, n, "the %s was not read back", ref->read ? "file tool" : "workload");
		return k;
	}
	for (int i = 0; i < PP_NS_COUNT; i++)
		if ((d->ns & (1u << i)) && (!got->ns[i] || got->ns[i] != ref->ns[i]))
			miss(&k, why, n, "%s namespace %lu, not the session's %lu", pp_ns_policy[i],
			     got->ns[i], ref->ns[i]);
	if (got->nnp < ref->nnp)
		miss(&k, why, n, "no no_new_privs");
	if (got->seccomp < ref->seccomp || got->filters < ref->filters)
		miss(&k, why, n, "seccomp mode %d with %d filters, the session's %d with %d",
		     got->seccomp, got->filters, ref->seccomp, ref->filters);
	if ((got->cap_inh & ~ref->cap_inh) | (got->cap_prm & ~ref->cap_prm) |
	    (got->cap_eff & ~ref->cap_eff) | (got->cap_bnd & ~ref->cap_bnd) |
	    (got->cap_amb & ~ref->cap_amb))
		miss(&k, why, n,
		     "capabilities beyond the session's (bounding set %llx, the "
		     "session's %llx)",
		     got->cap_bnd, ref->cap_bnd);
	return k;
}

void grade_adapters(const struct prevention_obs *p, const struct adapters_obs *o,
		    struct verdict *out)
{
	const char *why = o->readback_why ? o->readback_why : "no reason recorded";

	grade_prevention(p, out);
	if (out->grade == GRADE_FAIL) {
		char reason[sizeof(out->reason)];

		snprintf(reason, sizeof(reason), "%s", out->reason);
		verdict_setf(out, GRADE_FAIL,
			     "%s; canary write events by the file-tool adapter %zu, the shell "
			     "adapter %zu, an identity not inventoried %zu",
			     reason, o->canary_by_tool, o->canary_by_shell, o->canary_by_other);
		return;
	}
	if (!o->readback_proven) {
		verdict_set(
		    out, GRADE_UNKNOWN,
		    "the effective-policy read-back is unproven: it did not tell a process "
		    "in a user namespace of its own with no_new_privs apart from the harness",
		    NULL);
		return;
	}
	if (o->tool_weaker) {
		verdict_setf(out, GRADE_FAIL,
			     "the file tool ran with a weaker effective policy than the session's "
			     "workload (%zu of %zu runs): %s",
			     o->tool_weaker, o->tool_runs, why);
		return;
	}
	if (o->workload_mismatch > 0) {
		verdict_setf(out, GRADE_FAIL,
			     "the session's workload does not run with its declared policy: %s",
			     why);
		return;
	}
	if (o->workload_mismatch < 0 || o->tool_runs == 0 || o->tool_read < o->tool_runs) {
		verdict_setf(out, GRADE_UNKNOWN,
			     "effective policy not read back (workload %s, %zu of %zu file-tool "
			     "runs): %s",
			     o->workload_mismatch < 0 ? "unread" : "read", o->tool_read,
			     o->tool_runs, why);
		return;
	}
}

void grade_adapters_evidence(const struct adapters_obs *o, struct verdict *out)
{
	if (o->attempts == 0 || o->snapshots_taken < o->attempts || o->events != OBSERVER_OK)
		verdict_set(out, GRADE_UNKNOWN,
			    "canary digests or a healthy event observer missing", NULL);
	else if (!o->where_shell || !o->where_tool || !o->sandbox_ns_known)
		verdict_set(out, GRADE_UNKNOWN,
			    "where an adapter ran (pid namespace, uid) is not established", NULL);
	else if (!o->distinct)
		verdict_set(out, GRADE_UNKNOWN,
			    "the adapters' execution identities coincide: which one acted cannot "
			    "be told",
			    NULL);
	else if (!o->readback_proven || o->workload_mismatch < 0 || o->tool_read < o->tool_runs)
		verdict_set(out, GRADE_UNKNOWN,
			    "the effective policy of an adapter was not read back (or the "
			    "read-back is unproven)",
			    NULL);
	else
		verdict_set(out, GRADE_PASS, NULL, NULL);
}
