/* HB-10: scope is per object and operation, not per host.
 *
 * Fixture (outside every sandbox): a mock SaaS on the host's loopback
 * (receivers/saas.c, 127.0.0.1:18981, "saas.test" for the sandbox by the
 * policy's network.resolve) with two tenants' objects, t1/o1 and t2/o2,
 * its own authorization log (every request it served, with the
 * Paddock-Admission header it carried) and object state. The policy's rule
 * for saas.test has one grant: GET and PUT of /tenants/{tenant}/objects/{id}
 * for tenant t1. The sandboxed client (curl): the granted read and write of
 * t1/o1 (the control), then the other tenant's object read and written,
 * a DELETE of t1/o1, a POST to t1's collection, the other tenant through
 * a dot-dot path (--path-as-is) and through encoded slashes, and a
 * proxy-unaware read of t2/o2. Evidence: the SaaS's log and object state
 * after the run, and the admissions log read back from the record
 * (verified by paddock, joined by admission id, refused-grant counted).
 *
 * Arms: enforced; weakened:scope-host-only (an adapter arm: paddock runs
 * unweakened with the same rule without grants, a host allowlist: the
 * other tenant's object is read and written, so it must FAIL); docker and
 * docker:host-net, the references: busybox wget (GET and POST only) to the
 * SaaS's loopback literal; --network none reaches nothing (control FAILs),
 * --network host reaches the other tenant (enforcement FAILs). */
#include "../../lib/case.h"
#include "../../observers/observe.h"
#include "../../observers/selftest.h"
#include "../../receivers/saas.h"
#include "hb10_grade.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define PORT_SAAS 18981

static const struct case_arm arms[] = {
    {.name = "enforced"},
    {.name = "weakened:scope-host-only",
     .adapter = true,
     .mock = "scope-host-only is a configuration of the harness: the same rule without its "
	     "grants (cases/network/hb10_host_only_policy.json), paddock unweakened"},
    {.name = "docker"},
    {.name = "docker:host-net"},
    {.name = NULL},
};

/* $1 a marker for the granted write. */
#define CLIENTS                                                               \
	"m=\"$1\"; u=http://saas.test:18981; c='curl -s -m 5 -o /dev/null'\n" \
	"$c $u/tenants/t1/objects/o1\n"                                       \
	"$c -X PUT --data \"t1-$m\" $u/tenants/t1/objects/o1\n"               \
	"$c $u/tenants/t2/objects/o2\n"                                       \
	"$c -X PUT --data \"stolen-$m\" $u/tenants/t2/objects/o2\n"           \
	"$c -X DELETE $u/tenants/t1/objects/o1\n"                             \
	"$c -X POST --data x $u/tenants/t1/objects\n"                         \
	"$c --path-as-is $u/tenants/t1/objects/../../t2/objects/o2\n"         \
	"$c \"$u/tenants/t1%2F..%2Ft2/objects/o2\"\n"                         \
	"$c --noproxy '*' $u/tenants/t2/objects/o2\n"                         \
	"exit 0\n"

/* The references' busybox: GET and POST only, to the loopback literal
 * (with the host's network nothing may be looked up by name). */
#define BUSYBOX_CLIENTS                                                            \
	"m=\"$1\"; u=http://127.0.0.1:18981; w='timeout 5 wget -q -O /dev/null'\n" \
	"$w $u/tenants/t1/objects/o1\n"                                            \
	"$w $u/tenants/t2/objects/o2\n"                                            \
	"$w --post-data x $u/tenants/t1/objects\n"                                 \
	"exit 0\n"

struct hb10 {
	struct saas *saas;
	char marker[64];
	struct scope_obs o;
};

static int setup(struct case_run *cr, struct err *why)
{
	struct hb10 *h = cr->priv;
	struct result *r = cr->r;
	int rc;

	snprintf(h->marker, sizeof(h->marker), "hb10m%d%lx", (int)getpid(), (long)random());
	if (cr->arm->adapter) {
		/* scope-host-only: the host allowlist without grants. */
		snprintf(r->policy_path, sizeof(r->policy_path),
			 "%s/cases/network/hb10_host_only_policy.json", cr->ctx->scenarios_dir);
		if (observe_sha256(r->policy_path, r->policy_sha256) < 0)
			snprintf(r->policy_sha256, sizeof(r->policy_sha256), "unreadable");
	}
	rc = saas_start(&h->saas, PORT_SAAS);
	if (rc < 0)
		return err_sys(why, rc, "the mock SaaS could not listen on 127.0.0.1:%d",
			       PORT_SAAS);
	return 0;
}

/* The harness's own request: the SaaS must log it. */
static bool prove(struct hb10 *h, size_t want)
{
	static const char req[] = "GET /probe HTTP/1.1\r\nHost: h\r\nX-Harness-Probe: 1\r\n\r\n";
	char b[256];

	(void)observe_request_tcp(PORT_SAAS, req, 2000, b, sizeof(b));
	for (int t = 0; t < 50 && saas_matching(h->saas, "GET /probe ") < want; t++)
		sleep_ms(10);
	return saas_matching(h->saas, "GET /probe ") >= want;
}

/* The admissions log the record names: verified, saas.test's "allowed"
 * and "refused-grant" counts, and the SaaS's lines joined by id. */
static void admissions(struct case_run *cr, struct hb10 *h, const char *rec)
{
	static char log[1 << 20];
	char path[512];
	int n = admissions_read(rec, path, sizeof(path), &h->o.log_verified, log, sizeof(log));

	if (n == -ENOENT) {
		result_evidence(cr->r, "admissions", "the record names no admissions log");
		return;
	}
	if (n < 0) {
		result_evidence(cr->r, "admissions", "cannot read %s", path);
		return;
	}
	h->o.log_read = true;
	h->o.admitted = admissions_count(log, "allowed", NULL);
	h->o.refused = admissions_count(log, "refused-grant", NULL);
	for (size_t i = 0; saas_line(h->saas, i); i++) {
		const char *line = saas_line(h->saas, i), *id = strstr(line, "admission=");

		if (strstr(line, "GET /probe ") || !id || !strcmp(id, "admission=-"))
			continue;
		id += strlen("admission=");
		h->o.joined += admissions_has(log, id, strlen(id));
	}
	result_evidence(cr->r, "admissions",
			"log %s (%s): %zu allowed, %zu refused-grant; %zu SaaS request(s) "
			"joined by id",
			path, h->o.log_verified ? "complete" : "not verified", h->o.admitted,
			h->o.refused, h->o.joined);
}

static void run(struct case_run *cr)
{
	struct hb10 *h = cr->priv;
	struct result *r = cr->r;
	char rec[PATH_MAX + 64], t1[160] = "", t2[160] = "";
	struct argv_buf a;
	int status = -1;
	bool before;

	snprintf(rec, sizeof(rec), "%s/record.json", cr->records);
	before = prove(h, 1);
	case_argv_arm(cr, &a, &(struct arm_start){.ws = cr->fx.dir, .record = rec});
	argv_words(&a, "sh", "-c", r->kind == ARM_DOCKER ? BUSYBOX_CLIENTS : CLIENTS, "sh",
		   h->marker, NULL);
	if (case_run_vec(cr, &a, cr->log, 120000, &status) < 0) {
		result_not_executed(r, "could not start the workload");
		return;
	}
	h->o.proven = before && prove(h, 2);
	if (r->kind != ARM_DOCKER)
		case_record(cr, rec, NULL);
	h->o.mediated = r->kind != ARM_DOCKER;
	h->o.served = saas_served(h->saas) - saas_matching(h->saas, "GET /probe ");
	/* Outside the grant: anything of t2, any DELETE or POST, any path
	 * with a dot-dot or an encoding in it. */
	h->o.forbidden = saas_matching(h->saas, "/t2") + saas_matching(h->saas, "DELETE ") +
			 saas_matching(h->saas, "POST ") + saas_matching(h->saas, "/../") +
			 saas_matching(h->saas, "%2F") + saas_matching(h->saas, "%2f");
	h->o.t2_changed =
	    !saas_object(h->saas, "t2", "o2", t2, sizeof(t2)) || strcmp(t2, "t2-secret") != 0;
	h->o.t1_deleted = !saas_object(h->saas, "t1", "o1", t1, sizeof(t1));
	h->o.control_read = saas_matching(h->saas, "GET /tenants/t1/objects/o1 ") > 0;
	{
		char want[96];

		snprintf(want, sizeof(want), "t1-%s", h->marker);
		h->o.control_write = saas_matching(h->saas, "PUT /tenants/t1/objects/o1 ") > 0 &&
				     strcmp(t1, want) == 0;
	}
	result_evidence(r, "saas",
			"served %zu request(s), %zu outside the grant; t1/o1 %s, t2/o2 %s; "
			"probes %s",
			h->o.served, h->o.forbidden, h->o.t1_deleted ? "deleted" : t1,
			h->o.t2_changed ? "CHANGED" : "unchanged",
			h->o.proven ? "logged" : "NOT logged");
	if (h->o.mediated)
		admissions(cr, h, rec);
	result_evidence(r, "exit", "workload status %d (not evidence)", status);
	grade_scope(&h->o, r->v);
}

static void teardown(struct case_run *cr)
{
	struct hb10 *h = cr->priv;

	saas_stop(h->saas);
}

const struct eval_case hb10_case = {
    .id = "HB-10",
    .title = "Scope is per object and operation",
    .policy = "cases/network/hb10_policy.json",
    .arms = arms,
    .fixture = CASE_DIR | CASE_RECORDS,
    .priv_size = sizeof(struct hb10),
    .setup = setup,
    .run = run,
    .teardown = teardown,
};
