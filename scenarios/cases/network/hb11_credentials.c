/* HB-11: a brokered credential reaches only its audience, and never the
 * workload.
 *
 * Fixture (outside every sandbox): two services on the host's loopback
 * (receivers/audience.c), "saas.test" on 127.0.0.1:18982 and "mail.test"
 * on 127.0.0.1:18983 by the policy's network.resolve, each keeping every
 * request head it got (its own log) and echoing the credential headers
 * it saw in its response. Two fake secrets, markers made per arm, known
 * only to the secrets file (DIR/secrets/secrets, the workload user's, mode
 * 0600, outside the workspace): saas's goes in Authorization: Bearer on
 * GET /v1/items/{id} of saas.test, mail's in X-Api-Key on POST /v1/send of
 * mail.test (cases/network/hb11_policy.json). The workload (curl) makes
 * both granted requests (the control; saas's response echoes its secret),
 * then presents saas's placeholder to mail.test and to DELETE and
 * /public of saas.test, and mail's to saas.test: four misdirected. It
 * writes its variables and the echo into the workspace, says "ready" and
 * waits. The outside scan (observers/secret_scan.c), for both markers:
 * while it waits, /proc/PID/environ and memory of every process of the
 * sandbox (as root; its paddock-init passed over), with a self-check that
 * the scan sees the variables' names there; after it, the workspace, the
 * records directory (record, admissions and evidence logs) and the arm's
 * log (paddock's stdout and stderr). The services' logs: a secret on a
 * request its grant does not cover is misdirected. The admissions log
 * read back from the record: refused-credential counted.
 *
 * Each service's response echoes the secret it got, as it is and in every
 * form the scan looks for (hex, base64, percent-encoded, JSON-escaped), in
 * a chunked body of 3-byte chunks: the scan finds any of them the
 * redaction let through (in the workspace's echo, the shell's memory).
 *
 * Arms: enforced; weakened:audience-unchecked (paddock's --weaken
 * credential-any-audience: the placeholder is swapped wherever it is
 * presented, so mail.test gets saas's secret: must FAIL);
 * weakened:redact-plain-only (--weaken redact-plain-only: the redaction
 * sees the secret only as it is in one run of bytes, so the split and
 * encoded echoes reach the workload: must FAIL);
 * weakened:secret-in-env (an adapter, the naive way: the same rules
 * without credentials, the secrets passed by --setenv: the scan finds them
 * in the workload's environment and memory, must FAIL); docker, the
 * reference: the secrets passed with -e, busybox wget on --network none
 * (nothing arrives: control FAILs; the scan finds them: enforcement
 * FAILs). */
#include "../../lib/case.h"
#include "../../observers/observe.h"
#include "../../observers/secret_scan.h"
#include "../../receivers/audience.h"
#include "hb11_grade.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define PORT_SAAS 18982
#define PORT_MAIL 18983

static const struct case_arm arms[] = {
    {.name = "enforced"},
    {.name = "weakened:audience-unchecked", .knob = "credential-any-audience"},
    {.name = "weakened:redact-plain-only", .knob = "redact-plain-only"},
    {.name = "weakened:secret-in-env",
     .adapter = true,
     .mock = "secret-in-env is a configuration of the harness: the same rules without "
	     "credentials (cases/network/hb11_naive_policy.json), the secrets passed by "
	     "--setenv, paddock unweakened"},
    {.name = "docker"},
    {.name = NULL},
};

/* $1 the workspace, $2 the tag the scan finds the workload by. */
#define CLIENTS                                                                             \
	"ws=\"$1\"; s=http://saas.test:18982; m=http://mail.test:18983; c='curl -s -m 5'\n" \
	"a=\"Authorization: Bearer $SAAS_TOKEN\"; k=\"X-Api-Key: $MAIL_TOKEN\"\n"           \
	"$c -o \"$ws/echo\" -H \"$a\" $s/v1/items/1\n"                                      \
	"$c -o /dev/null -H \"$k\" -X POST -d hi $m/v1/send\n"                              \
	"$c -o /dev/null -H \"$a\" $m/v1/send\n"                                            \
	"$c -o /dev/null -H \"$a\" -X DELETE $s/v1/items/1\n"                               \
	"$c -o /dev/null -H \"$a\" $s/public/1\n"                                           \
	"$c -o /dev/null -H \"$k\" $s/v1/items/1\n" WAIT

/* The reference's busybox, to the loopback literals. */
#define BUSYBOX_CLIENTS                                                                     \
	"ws=\"$1\"; s=http://127.0.0.1:18982; m=http://127.0.0.1:18983\n"                   \
	"w='timeout 5 wget -q'\n"                                                           \
	"$w -O \"$ws/echo\" --header \"Authorization: Bearer $SAAS_TOKEN\" $s/v1/items/1\n" \
	"$w -O /dev/null --header \"X-Api-Key: $MAIL_TOKEN\" --post-data hi $m/v1/send\n" WAIT

/* The variables and the echo kept in the workspace and in the shell's
 * memory, then "ready", and a wait for the scan's "go" (30 s at most). */
#define WAIT                                                                                 \
	"echo \"$SAAS_TOKEN $MAIL_TOKEN\" > \"$ws/tokens\"; env > \"$ws/env\"\n"             \
	"r=$(cat \"$ws/echo\" 2>/dev/null); touch \"$ws/ready\"\n"                           \
	"i=0; while [ ! -e \"$ws/go\" ] && [ $i -lt 300 ]; do sleep 0.1; i=$((i+1)); done\n" \
	"exit 0\n"

#define EXPECT_REFUSED 4

struct hb11 {
	struct audience_rx *saas, *mail;
	char m_saas[64], m_mail[64], tag[64];
	char secrets[PATH_MAX + 32];
	char env_saas[96], env_mail[96];
	/* The live scan, in a thread while the workload waits. */
	pthread_t scanner;
	bool scanner_on;
	char ready[PATH_MAX + 16], go[PATH_MAX + 16];
	struct scan_result live, self;
	bool scan_live;
	struct cred_obs o;
};

static int setup(struct case_run *cr, struct err *why)
{
	struct hb11 *h = cr->priv;
	struct result *r = cr->r;
	char dir[PATH_MAX], text[256];
	int rc;

	snprintf(h->m_saas, sizeof(h->m_saas), "hb11-saas-SECRET-%d%lx", (int)getpid(),
		 (long)random());
	snprintf(h->m_mail, sizeof(h->m_mail), "hb11-mail-SECRET-%d%lx", (int)getpid(),
		 (long)random());
	snprintf(h->tag, sizeof(h->tag), "hb11-tag-%d-%lx", (int)getpid(), (long)random());
	snprintf(h->env_saas, sizeof(h->env_saas), "SAAS_TOKEN=%s", h->m_saas);
	snprintf(h->env_mail, sizeof(h->env_mail), "MAIL_TOKEN=%s", h->m_mail);
	if (cr->arm->adapter) {
		snprintf(r->policy_path, sizeof(r->policy_path),
			 "%s/cases/network/hb11_naive_policy.json", cr->ctx->scenarios_dir);
		if (observe_sha256(r->policy_path, r->policy_sha256) < 0)
			snprintf(r->policy_sha256, sizeof(r->policy_sha256), "unreadable");
	}
	/* Beside the workspace, never in it: paddock refuses a secrets file
	 * a bind of the sandbox shows. */
	if (fixture_mkdir(cr->ctx, &cr->fx, "secrets", dir, sizeof(dir)) < 0)
		return err_set(why, EIO, "cannot make the secrets directory");
	snprintf(h->secrets, sizeof(h->secrets), "%s/secrets", dir);
	snprintf(text, sizeof(text), "# HB-11's fake secrets\nsaas=%s\nmail=%s\n", h->m_saas,
		 h->m_mail);
	if (fixture_write(cr->ctx, h->secrets, text, 0600) < 0)
		return err_set(why, EIO, "cannot write the secrets file");
	rc = audience_start(&h->saas, PORT_SAAS);
	if (rc < 0)
		return err_sys(why, rc, "saas.test could not listen on 127.0.0.1:%d", PORT_SAAS);
	rc = audience_start(&h->mail, PORT_MAIL);
	if (rc < 0)
		return err_sys(why, rc, "mail.test could not listen on 127.0.0.1:%d", PORT_MAIL);
	return 0;
}

/* The harness's own request to a service: it must log it. */
static bool prove(struct audience_rx *rx, int port, size_t want)
{
	static const char req[] = "GET /probe HTTP/1.1\r\nHost: h\r\n\r\n";
	char b[256];

	(void)observe_request_tcp(port, req, 2000, b, sizeof(b));
	for (int t = 0; t < 50 && audience_matching(rx, "GET /probe ") < want; t++)
		sleep_ms(10);
	return audience_matching(rx, "GET /probe ") >= want;
}

/* While the workload waits: every process of its sandbox read from
 * outside, for both markers, and for the variables' names (the scan's
 * self-check: it must see what is there). Then "go". */
static void *scanner(void *arg)
{
	struct hb11 *h = arg;
	pid_t pid = -1;

	for (int i = 0; i < 600 && access(h->ready, F_OK) != 0; i++)
		sleep_ms(100);
	if (access(h->ready, F_OK) == 0)
		pid = scan_find(h->tag);
	if (pid > 0) {
		scan_sandbox(pid, h->m_saas, &h->live);
		scan_sandbox(pid, h->m_mail, &h->live);
		scan_sandbox(pid, "SAAS_TOKEN", &h->self);
		h->scan_live = h->self.places >= 2;
	}
	{
		FILE *f = fopen(h->go, "we");

		if (f)
			fclose(f);
	}
	return NULL;
}

static void scan_after(struct case_run *cr, struct hb11 *h, struct scan_result *s)
{
	const char *m[2] = {h->m_saas, h->m_mail};

	for (int k = 0; k < 2; k++) {
		scan_tree(cr->task, m[k], s);
		scan_tree(cr->records, m[k], s);
		scan_file(cr->log, m[k], s);
	}
}

static void admissions(struct case_run *cr, struct hb11 *h, const char *rec)
{
	static char log[1 << 20];
	char path[512];
	int n = admissions_read(rec, path, sizeof(path), &h->o.log_verified, log, sizeof(log));

	if (n < 0) {
		result_evidence(cr->r, "admissions",
				n == -ENOENT ? "the record names no log" : "cannot read %s", path);
		return;
	}
	h->o.log_read = true;
	h->o.refused = admissions_count(log, "refused-credential", NULL);
	result_evidence(cr->r, "admissions", "log %s (%s): %zu allowed, %zu refused-credential",
			path, h->o.log_verified ? "complete" : "not verified",
			admissions_count(log, "allowed", NULL), h->o.refused);
}

static void observe_services(struct case_run *cr, struct hb11 *h)
{
	struct cred_obs *o = &h->o;

	o->control_saas = audience_matching(h->saas, h->m_saas) >
			  audience_matching_off(h->saas, h->m_saas, "GET /v1/items/");
	o->control_mail = audience_matching(h->mail, h->m_mail) >
			  audience_matching_off(h->mail, h->m_mail, "POST /v1/send ");
	o->misdirected = audience_matching(h->mail, h->m_saas) +
			 audience_matching(h->saas, h->m_mail) +
			 audience_matching_off(h->saas, h->m_saas, "GET /v1/items/") +
			 audience_matching_off(h->mail, h->m_mail, "POST /v1/send ");
	result_evidence(cr->r, "services",
			"saas.test: %zu request(s), its secret on the grant %s; mail.test: %zu, "
			"its secret on the grant %s; %zu misdirected; saas echoed its secret: %s",
			audience_count(h->saas) - audience_matching(h->saas, "GET /probe "),
			o->control_saas ? "yes" : "no",
			audience_count(h->mail) - audience_matching(h->mail, "GET /probe "),
			o->control_mail ? "yes" : "no", o->misdirected,
			audience_sent(h->saas, h->m_saas) ? "yes" : "no");
}

static void run(struct case_run *cr)
{
	struct hb11 *h = cr->priv;
	struct result *r = cr->r;
	char rec[PATH_MAX + 64];
	const char *brokered[] = {"--secrets", h->secrets, NULL};
	const char *naive[] = {"--setenv", h->env_saas, "--setenv", h->env_mail, NULL};
	const char *denv[] = {h->env_saas, h->env_mail, NULL};
	const struct docker_bind binds[] = {{cr->task, false}, {NULL, false}};
	struct scan_result after = {0};
	struct argv_buf a;
	int status = -1;
	bool before;

	snprintf(rec, sizeof(rec), "%s/record.json", cr->records);
	snprintf(h->ready, sizeof(h->ready), "%s/ready", cr->task);
	snprintf(h->go, sizeof(h->go), "%s/go", cr->task);
	before = prove(h->saas, PORT_SAAS, 1) && prove(h->mail, PORT_MAIL, 1);
	case_argv_arm(cr, &a,
		      &(struct arm_start){.ws = cr->task,
					  .record = rec,
					  .binds = binds,
					  .options = cr->arm->adapter ? naive : brokered,
					  .docker_env = denv});
	argv_words(&a, "sh", "-c", r->kind == ARM_DOCKER ? BUSYBOX_CLIENTS : CLIENTS, "sh",
		   cr->task, h->tag, NULL);
	h->scanner_on = pthread_create(&h->scanner, NULL, scanner, h) == 0;
	if (case_run_vec(cr, &a, cr->log, 120000, &status) < 0) {
		result_not_executed(r, "could not start the workload");
		return;
	}
	if (h->scanner_on)
		pthread_join(h->scanner, NULL);
	h->scanner_on = false;
	h->o.proven = before && prove(h->saas, PORT_SAAS, 2) && prove(h->mail, PORT_MAIL, 2);
	if (r->kind != ARM_DOCKER)
		case_record(cr, rec, NULL);
	observe_services(cr, h);
	scan_after(cr, h, &after);
	h->o.scan_live = h->scan_live;
	h->o.procs = h->live.procs / 2;
	h->o.looked = h->live.looked + after.looked;
	h->o.unread = h->live.unread;
	h->o.places = h->live.places + after.places;
	result_evidence(r, "scan",
			"while it ran: %zu process(es) (paddock-init passed over: %zu; ended while "
			"read: %zu), marker in "
			"%zu place(s)%s%s, self-check %zu place(s); after: %zu file(s), marker in "
			"%zu%s%s",
			h->o.procs, h->live.inits / 2, h->live.gone, h->live.places,
			h->live.n_where ? ", first " : "", h->live.n_where ? h->live.where[0] : "",
			h->self.places, after.looked, after.places, after.n_where ? ", first " : "",
			after.n_where ? after.where[0] : "");
	h->o.mediated = r->kind != ARM_DOCKER && !cr->arm->adapter;
	h->o.expect_refused = h->o.mediated && r->kind == ARM_ENFORCED ? EXPECT_REFUSED : 0;
	if (h->o.mediated)
		admissions(cr, h, rec);
	result_evidence(r, "exit", "workload status %d (not evidence)", status);
	grade_credentials(&h->o, r->v);
}

static void teardown(struct case_run *cr)
{
	struct hb11 *h = cr->priv;

	if (h->scanner_on)
		pthread_join(h->scanner, NULL);
	audience_stop(h->saas);
	audience_stop(h->mail);
}

const struct eval_case hb11_case = {
    .id = "HB-11",
    .title = "A brokered credential reaches only its audience",
    .policy = "cases/network/hb11_policy.json",
    .arms = arms,
    .fixture = CASE_DIR | CASE_TASK | CASE_RECORDS,
    .priv_size = sizeof(struct hb11),
    .setup = setup,
    .run = run,
    .teardown = teardown,
};
