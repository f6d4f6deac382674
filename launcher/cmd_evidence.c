/* paddock evidence verify LOG [--key FILE] [--record FILE]: check a run's
 * evidence log from outside (docs/evidence.md). Exit 0 COMPLETE, 1
 * INCOMPLETE (with the reasons), 125 when it cannot be checked (bad
 * arguments, unreadable files). */
#include "launcher.h"

#include <cjson/cJSON.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../evidence/evidence.h"
#include "../include/cleanup.h"
#include "../include/exitcodes.h"
#include "../include/io.h"

#define EVIDENCE_LOG_MAX (256u << 20)

static const char usage[] =
    "Usage: paddock evidence verify LOG [--key FILE] [--record FILE]\n"
    "Check a run's evidence log: every line's MAC under the run's key, the chain of\n"
    "SHA-256 links, the sequence numbers (missing ones are listed), one epoch per\n"
    "source, no reported drops; with --record every source's log (the supervisor's,\n"
    "the mediator's) against the checkpoints the completion record holds, and those\n"
    "against the checkpoint events the supervisor's log ends with.\n"
    "  --key FILE     the run's key (default: LOG with .jsonl replaced by .key)\n"
    "  --record FILE  the completion record: its session and checkpoint\n"
    "\n"
    "The last line of the output is COMPLETE or INCOMPLETE; the lines before say, per\n"
    "source, what holds or why not.\n"
    "Exit status: 0 COMPLETE; 1 INCOMPLETE (the reasons on standard output);\n"
    "125 the log could not be checked.\n";

static int slurp(const char *path, size_t max, char **out, size_t *len)
{
	cleanup_close int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	cleanup_free char *buf = NULL;
	ssize_t n;

	if (fd < 0)
		return -errno;
	buf = malloc(max + 1);
	if (!buf)
		return -ENOMEM;
	n = read_full(fd, buf, max + 1);
	if (n < 0)
		return (int)n;
	if ((size_t)n > max)
		return -EFBIG;
	buf[n] = '\0';
	*len = (size_t)n;
	*out = take_ptr(&buf);
	return 0;
}

/* Without a record: the session named by the first line (its MAC still
 * has to hold under the key). */
static void first_session(const char *text, size_t len, char *session, size_t ssize)
{
	const char *nl = memchr(text, '\n', len);
	cJSON *o = cJSON_ParseWithLength(text, nl ? (size_t)(nl - text) : len);
	const cJSON *s = cJSON_GetObjectItemCaseSensitive(o, "session");

	snprintf(session, ssize, "%s", cJSON_IsString(s) ? s->valuestring : "");
	cJSON_Delete(o);
}

/* One log's findings, under the name of its source. */
static void show(const char *source, const struct evidence_report *rep)
{
	if (rep->verdict == EVIDENCE_COMPLETE) {
		printf("  %s: complete, %llu events (seq 1-%llu, epoch %.8s), head %.16s\n", source,
		       (unsigned long long)rep->lines, (unsigned long long)rep->last_seq,
		       rep->epoch, rep->head);
		return;
	}
	for (size_t i = 0; i < rep->n_reasons; i++)
		printf("  %s: %s\n", source, rep->reasons[i]);
	if (rep->more_reasons)
		printf("  %s: (%zu more)\n", source, rep->more_reasons);
	for (size_t i = 0; i < rep->n_gaps; i++)
		printf("  %s: missing seq %llu-%llu\n", source,
		       (unsigned long long)rep->gaps[i].from, (unsigned long long)rep->gaps[i].to);
}

/* The supervisor's log's checkpoint event for cp's source agrees with
 * the record's: two witnesses, written at different times. */
static bool events_agree(const struct evidence_checkpoint *ev, size_t n_ev,
			 const struct evidence_checkpoint *cp)
{
	for (size_t i = 0; i < n_ev; i++)
		if (strcmp(ev[i].source, cp->source) == 0)
			return ev[i].seq == cp->seq && strcmp(ev[i].head, cp->head) == 0 &&
			       strcmp(ev[i].epoch, cp->epoch) == 0;
	return false;
}

/* Every source of the record: its log against its checkpoint. */
static int verify_sources(const char *log, const char *text, size_t len, const char *key,
			  const struct evidence_witness *w)
{
	struct evidence_checkpoint ev[EVIDENCE_SOURCES_MAX];
	size_t n_ev = evidence_checkpoint_events(text, len, ev, EVIDENCE_SOURCES_MAX);
	struct evidence_report rep;
	bool complete = true;

	for (size_t i = 0; i < w->n; i++) {
		const struct evidence_checkpoint *cp = &w->cp[i];
		cleanup_free char *other = NULL;
		size_t olen;
		bool sup = strcmp(cp->source, "supervisor") == 0;
		int r = 0;

		if (!sup && (r = slurp(cp->log, EVIDENCE_LOG_MAX, &other, &olen)) < 0) {
			printf("  %s: its log %s: %s\n", cp->source, cp->log, strerror(-r));
			complete = false;
			continue;
		}
		evidence_verify(sup ? text : other, sup ? len : olen, (const unsigned char *)key,
				w->session, w->sequenced ? cp->seq : 0, cp->head, &rep);
		if (rep.verdict == EVIDENCE_COMPLETE && strcmp(rep.source, cp->source) != 0) {
			rep.verdict = EVIDENCE_INCOMPLETE;
			snprintf(rep.reasons[rep.n_reasons++], sizeof(rep.reasons[0]),
				 "the log %s is of source \"%s\"", sup ? log : cp->log, rep.source);
		}
		if (!sup && rep.n_reasons < EVIDENCE_REASONS_MAX && !events_agree(ev, n_ev, cp)) {
			rep.verdict = EVIDENCE_INCOMPLETE;
			snprintf(rep.reasons[rep.n_reasons++], sizeof(rep.reasons[0]),
				 "the record's checkpoint does not match the supervisor log's");
		}
		show(cp->source, &rep);
		complete = complete && rep.verdict == EVIDENCE_COMPLETE;
	}
	/* A checkpoint event of a source the record does not list: a log
	 * left out of the record. */
	for (size_t i = 0; i < n_ev; i++) {
		bool listed = false;

		for (size_t j = 0; j < w->n; j++)
			listed = listed || strcmp(ev[i].source, w->cp[j].source) == 0;
		if (!listed) {
			printf("  %s: the supervisor's log names it, the record does not\n",
			       ev[i].source);
			complete = false;
		}
	}
	return complete ? 0 : 1;
}

static int verify(int argc, char **argv)
{
	static const struct option opts[] = {{"key", required_argument, NULL, 'k'},
					     {"record", required_argument, NULL, 'r'},
					     {"help", no_argument, NULL, 'h'},
					     {NULL, 0, NULL, 0}};
	const char *key_path = NULL, *rec = NULL, *log;
	cleanup_free char *text = NULL, *key = NULL, *kdefault = NULL, *rtext = NULL;
	struct evidence_witness w;
	struct evidence_report rep;
	char session[128] = "";
	size_t len, klen, rlen;
	int c, r;

	optind = 1;
	while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		if (c == 'k')
			key_path = optarg;
		else if (c == 'r')
			rec = optarg;
		else if (c == 'h') {
			fputs(usage, stdout);
			return 0;
		} else
			return cli_fail(
			    "evidence verify: bad option (see paddock evidence --help)");
	}
	if (optind + 1 != argc)
		return cli_fail("evidence verify: expected one LOG (see paddock evidence --help)");
	log = argv[optind];
	if (!key_path) {
		size_t n = strlen(log);

		if (n > 6 && strcmp(log + n - 6, ".jsonl") == 0 &&
		    asprintf(&kdefault, "%.*s.key", (int)(n - 6), log) > 0)
			key_path = kdefault;
		else
			return cli_fail("evidence verify: %s: name the key with --key", log);
	}
	r = slurp(log, EVIDENCE_LOG_MAX, &text, &len);
	if (r < 0)
		return cli_fail("evidence verify: %s: %s", log, strerror(-r));
	r = slurp(key_path, 64, &key, &klen);
	if (r < 0 || klen != EVIDENCE_KEY_LEN)
		return cli_fail("evidence verify: key %s: %s", key_path,
				r < 0 ? strerror(-r) : "not a 32-byte key");
	if (rec) {
		r = slurp(rec, 1u << 20, &rtext, &rlen);
		if (r < 0)
			return cli_fail("evidence verify: record %s: %s", rec, strerror(-r));
		if (evidence_witness_parse(rtext, rlen, &w) < 0)
			return cli_fail("evidence verify: record %s: no session or evidence "
					"checkpoint in it",
					rec);
		printf("session %s, %zu source(s), checked against the record's checkpoints%s\n",
		       w.session, w.n,
		       w.sequenced ? "" : " (unsequenced: --weaken no-seq, a lost line is unseen)");
		r = verify_sources(log, text, len, key, &w);
		puts(r == 0 ? "COMPLETE" : "INCOMPLETE");
		return r;
	}
	first_session(text, len, session, sizeof(session));
	evidence_verify(text, len, (const unsigned char *)key, session, 0, NULL, &rep);
	printf("session %s, no witness (--record): a cut-off tail cannot be seen\n", session);
	show(rep.source[0] ? rep.source : "log", &rep);
	puts(rep.verdict == EVIDENCE_COMPLETE ? "COMPLETE" : "INCOMPLETE");
	return rep.verdict == EVIDENCE_COMPLETE ? 0 : 1;
}

int cmd_evidence(int argc, char **argv)
{
	if (argc >= 2 && strcmp(argv[1], "verify") == 0)
		return verify(argc - 1, argv + 1);
	if (argc >= 2 && (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0)) {
		fputs(usage, stdout);
		return 0;
	}
	return cli_fail("evidence: expected \"verify\" (see paddock evidence --help)");
}
