/* The weakening knobs (--weaken NAME): names, warnings, and what is in
 * effect for a run (the record, --explain). */
#include "supervisor.h"

#include <stdio.h>
#include <string.h>

/* The weakening knobs, in bit order: name, and the warning printed when
 * one is in effect. A bit without a knob (yet) is a NULL row. */
static const char *const weakenings[WEAKEN_COUNT][2] = {
    {"rw-binds", "read-only binds are writable in this sandbox"},
    {"no-pidns", "no pid namespace: expiry can only kill the direct child"},
    {"host-net", "no network namespace: the workload has the host's network"},
    {"no-seccomp", "no seccomp filter: every system call is open to the workload"},
    {"no-landlock", "no Landlock rules: writes are limited by the mounts alone"},
    {"no-new-session", "the workload shares the caller's session and terminal (TIOCSTI)"},
    {"no-sweep", "paddock-init leaves the workload's leftovers running (with a pid namespace "
		 "the kernel still ends them)"},
    {"no-owner-check", "the session's control socket obeys any uid that can connect to it"},
    {"exec-host-mounts", "paddock exec commands see the host's files (no mount namespace)"},
    {"no-protect", "no protected paths: the workload can plant code the host's tools run"},
    {"host-root", "the workload is host uid 0: it reads root-only files in its binds"},
    {"direct-stdio", "the workload gets the caller's fds 0-2: chmod, chown and xattrs through "
		     "/dev/stdin reach the host's file or terminal"},
    {"proxy-env-only", "no local default routes: only clients that honour the proxy variables "
		       "reach the mediator (the others have no route at all)"},
    {"dns-open", "the DNS stub forwards every name it would refuse to PADDOCK_DNS_UPSTREAM: "
		 "a query can carry data out"},
    {"gate-off", "the release gate is off: publication sinks admit every body unapproved and "
		 "a read from a private rule taints nothing"},
    {"verbose-denial", "the mediator's refusals name the decision, the rule and the destination, "
		       "and a tool's own error responses reach the workload"},
    {"retry-unbounded", "the mediator enforces no attempt budget or deadline: a refused, failed "
			"or unknown operation may be sent again and again"},
    {"credential-any-audience",
     "the mediator puts a brokered secret in place of its placeholder on every allowed "
     "destination, not only where a grant with the credential covers the request"},
    {"lease-port-only", "port forwards stamp no Paddock-Lease and check no lease host name: a "
			"client can tell the session it reached by the port alone"},
    {"trust-path-only", "a project policy is trusted by its path alone: whatever bytes are "
			"there now are applied, not only the approved ones"},
    {"signature-only", "a plugin update signed by the approved signer gets what it asks for, "
		       "without a review of what it widens"},
    {"check-then-charge", "the mediator reserves nothing before a metered request: it reads "
			  "what was charged, dispatches, and charges afterwards (concurrent "
			  "requests overspend the cap)"},
    {"unpriced-as-free", "the mediator admits an unpriced metered operation at a price of 0"},
    {"release-on-timeout", "the mediator releases the reservation of a metered request that "
			   "got no answer, and lets it be sent again"},
    {"no-seq", "the evidence logs carry no sequence numbers and no chain (each line is MAC'd "
	       "alone): a line lost or removed leaves a clean-looking log"},
    {"raw-export", "paddock evidence export copies this run's record and logs as they are, "
		   "unscanned: a secret or a name in them goes into the review packet"},
    {"evidence-in-sandbox", "the record's directory, with the evidence logs and their key, is "
			    "writable in the sandbox: the workload can rewrite its own evidence"},
    {"trust-tool-claim", "paddock evidence reconcile takes a tool's claim for its effect: a "
			 "success without effect, or an effect reported as failure, goes unseen"},
    {"lookup-fail-open", "the mediator reads a receiver lookup that failed (no answer, a "
			 "timeout) as \"not found\" and dispatches the replay of an unknown "
			 "operation"},
    /* Bit 29 has no knob; an unnamed bit is no knob. */
    [30] = {"local-exit-is-stop", "the mediator takes the session's end for its remote jobs' end: "
				  "nothing is cancelled or asked, every job is recorded as "
				  "stopped and its exposure released"},
    [31] = {"unknown-event-allow", "the mediator passes an adapter's request it cannot parse, "
				   "unchecked by the grant and unmetered"},
    [34] = {"redact-plain-only",
	    "the mediator redacts a brokered secret from responses only as it is: split by "
	    "chunked framing, or sent back hex, base64, percent-encoded or JSON-escaped, it "
	    "reaches the workload"},
    [37] = {"exec-plain-seccomp",
	    "paddock exec commands load the policy's seccomp program without the "
	    "protected-path notice and --trace-denials: a refused change of a protected path "
	    "says EBUSY, and their denials are not traced"},
    /* A bit without a name is no knob (the lookups below skip it); the
     * check-docs and completion scripts read a name at a line's start. */
    // clang-format off
    [44] =
    {"exec-unhardened", "paddock exec commands skip the workload's hardening: all capabilities "
			"in the sandbox's user namespace, no no_new_privs, no Landlock, no "
			"seccomp"},
    // clang-format on
};

const char *weaken_name(uint64_t bit)
{
	for (int i = 0; i < WEAKEN_COUNT; i++)
		if (bit == UINT64_C(1) << i && weakenings[i][0])
			return weakenings[i][0];
	return "unknown";
}

const char *weaken_warning(uint64_t bit)
{
	for (int i = 0; i < WEAKEN_COUNT; i++)
		if (bit == UINT64_C(1) << i && weakenings[i][1])
			return weakenings[i][1];
	return "unknown";
}

int weaken_parse(const char *name, uint64_t *out)
{
	for (int i = 0; i < WEAKEN_COUNT; i++) {
		if (weakenings[i][0] && strcmp(name, weakenings[i][0]) == 0) {
			*out = UINT64_C(1) << i;
			return 0;
		}
	}
	return -EINVAL;
}

/* Levenshtein distance of a and b, capped at 3 (names are short). */
static int distance(const char *a, const char *b)
{
	size_t la = strlen(a), lb = strlen(b);
	int row[64];

	if (la >= 64 || lb >= 64)
		return 3;
	for (size_t j = 0; j <= lb; j++)
		row[j] = (int)j;
	for (size_t i = 1; i <= la; i++) {
		int diag = row[0], best;

		row[0] = (int)i;
		best = row[0];
		for (size_t j = 1; j <= lb; j++) {
			int up = row[j], d = diag + (a[i - 1] != b[j - 1]);

			if (up + 1 < d)
				d = up + 1;
			if (row[j - 1] + 1 < d)
				d = row[j - 1] + 1;
			diag = up;
			row[j] = d;
			if (d < best)
				best = d;
		}
		if (best >= 3)
			return 3;
	}
	return row[lb] < 3 ? row[lb] : 3;
}

/* A knob a user may have meant by near: one that contains it, or one
 * within two edits of it ("verbose-denials"). */
static bool near_to(const char *name, const char *near)
{
	return *near && (strstr(name, near) || distance(name, near) <= 2);
}

int weaken_named(void)
{
	int n = 0;

	for (int i = 0; i < WEAKEN_COUNT; i++)
		n += weakenings[i][0] != NULL;
	return n;
}

int weaken_known(char *buf, size_t size, const char *near)
{
	size_t n = 0;
	int found = 0;

	buf[0] = '\0';
	for (int i = 0; i < WEAKEN_COUNT && n < size; i++) {
		if (!weakenings[i][0] || !near_to(weakenings[i][0], near))
			continue;
		int w = snprintf(buf + n, size - n, "%s%s", found ? ", " : "", weakenings[i][0]);
		if (w < 0)
			break;
		n += (size_t)w;
		found++;
	}
	return found;
}

size_t weakenings_in_effect(uint64_t weaken, const struct policy *p, const char **out, size_t max)
{
	size_t n = 0;

	for (int i = 0; i < WEAKEN_COUNT; i++)
		if ((weaken & (UINT64_C(1) << i)) && weakenings[i][0] && n < max)
			out[n++] = weakenings[i][0];
	if (p && p->seccomp_profile == POLICY_SECCOMP_NONE && n < max)
		out[n++] = "seccomp-profile-none";
	return n;
}

/* path is root or lies below it (both canonical). */
static bool within(const char *path, const char *root)
{
	size_t n = strlen(root);

	return strncmp(path, root, n) == 0 && (path[n] == '\0' || path[n] == '/' || n == 1);
}

size_t policy_widenings(const struct policy *p, const char *workspace, char (*out)[WIDENING_LEN],
			size_t max)
{
	size_t n = 0;

#define WIDEN(...)                                                     \
	do {                                                           \
		if (n < max)                                           \
			snprintf(out[n++], WIDENING_LEN, __VA_ARGS__); \
	} while (0)
	/* The agent policy: every namespace, the default seccomp profile
	 * refusing (not logging) what it does not allow, writable binds only
	 * of the workspace. */
	if (p->seccomp_profile == POLICY_SECCOMP_NONE)
		WIDEN("seccomp off");
	else if (p->seccomp_default_action == POLICY_SECCOMP_LOG)
		WIDEN("seccomp logs what it would refuse (default_action log)");
	for (size_t i = 0; p->seccomp_profile != POLICY_SECCOMP_NONE && i < p->n_seccomp_allow; i++)
		WIDEN("seccomp allows %s", p->seccomp_allow[i].name);
	/* user, mount, pid and net are required by the policy loader (the
	 * host's network only through --weaken host-net): ipc, uts, cgroup. */
	for (unsigned bit = 1; bit <= POLICY_NS_CGROUP; bit <<= 1)
		if (!(p->namespaces & bit))
			WIDEN("namespace %s shared with the host", policy_ns_name(bit));
	for (size_t i = 0; i < p->n_mounts; i++) {
		const struct policy_mount *m = &p->mounts[i];

		if (m->type == POLICY_MOUNT_BIND && !m->readonly &&
		    !(workspace && within(m->source, workspace)))
			WIDEN("writable bind %s outside the workspace", m->source);
	}
#undef WIDEN
	return n;
}
