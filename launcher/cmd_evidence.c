/* paddock evidence verify LOG [--key FILE] [--record FILE] [--witness FILE]: check a run's
 * evidence log from outside (docs/evidence.md). Exit 0 COMPLETE, 1
 * INCOMPLETE (with the reasons), 125 when it cannot be checked (bad
 * arguments, unreadable files). */
#include "launcher.h"

#include <cjson/cJSON.h>
#include <fcntl.h>
#include <sys/stat.h>
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
    "Usage: paddock evidence verify LOG [--key FILE] [--record FILE] [--witness FILE]\n"
    "Check a run's evidence log: every line's MAC under the run's key, the chain of\n"
    "SHA-256 links, the sequence numbers (missing ones are listed), one epoch per\n"
    "source, no reported drops; with --record every source's log (the supervisor's,\n"
    "the mediator's) against the checkpoints the completion record holds, and those\n"
    "against the checkpoint events the supervisor's log ends with.\n"
    "  --key FILE     the run's key (default: LOG with .jsonl replaced by .key)\n"
    "  --record FILE  the completion record: its session and checkpoint\n"
    "  --witness FILE the second witness (the policy's evidence.witness; default: the\n"
    "                 one the record names): each checkpoint also against it, and\n"
    "                 which of the two disagrees with the log; missing: INCOMPLETE\n"
    "\n"
    "The last line of the output is COMPLETE or INCOMPLETE; the lines before say, per\n"
    "source, what holds or why not.\n"
    "Exit status: 0 COMPLETE; 1 INCOMPLETE (the reasons on standard output);\n"
    "125 the log could not be checked.\n";

int evidence_slurp(const char *path, size_t max, char **out, size_t *len)
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
static void show(FILE *o, const char *source, const struct evidence_report *rep)
{
	if (rep->verdict == EVIDENCE_COMPLETE && !rep->sequenced) {
		fprintf(o,
			"  %s: complete as far as it can tell, %llu events (unsequenced, epoch "
			"%.8s), head %.16s\n",
			source, (unsigned long long)rep->lines, rep->epoch, rep->head);
		return;
	}
	if (rep->verdict == EVIDENCE_COMPLETE) {
		fprintf(o, "  %s: complete, %llu events (seq 1-%llu, epoch %.8s), head %.16s\n",
			source, (unsigned long long)rep->lines, (unsigned long long)rep->last_seq,
			rep->epoch, rep->head);
		return;
	}
	for (size_t i = 0; i < rep->n_reasons; i++)
		fprintf(o, "  %s: %s\n", source, rep->reasons[i]);
	if (rep->more_reasons)
		fprintf(o, "  %s: (%zu more)\n", source, rep->more_reasons);
	for (size_t i = 0; i < rep->n_gaps; i++)
		fprintf(o, "  %s: missing seq %llu-%llu\n", source,
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

/* The second witness's word on one source, as a reason when it is not
 * agreement: which of the two checkpoints is not where the log ends. */
static void judge_second(const struct evidence_checkpoint *cp,
			 const struct evidence_witness *second, bool sequenced,
			 struct evidence_report *rep)
{
	const struct evidence_checkpoint *sc = evidence_witness_find(second, cp->source);
	enum evidence_agreement a =
	    evidence_witness_judge(rep->last_seq, rep->head, sequenced, cp, sc);
	char *why;

	if (a == EVIDENCE_AGREE)
		return;
	if (rep->n_reasons == EVIDENCE_REASONS_MAX) {
		rep->more_reasons++;
		rep->verdict = EVIDENCE_INCOMPLETE;
		return;
	}
	why = rep->reasons[rep->n_reasons++];
	rep->verdict = EVIDENCE_INCOMPLETE;
	if (a == EVIDENCE_SECOND_LACKS)
		snprintf(why, sizeof(rep->reasons[0]),
			 "the second witness has no checkpoint of it");
	else if (a == EVIDENCE_SECOND_DIFFERS)
		snprintf(why, sizeof(rep->reasons[0]),
			 "the second witness disagrees: it says seq %llu head %.16s epoch %.8s, "
			 "the log and the record seq %llu head %.16s epoch %.8s",
			 (unsigned long long)sc->seq, sc->head, sc->epoch,
			 (unsigned long long)cp->seq, cp->head, cp->epoch);
	else if (a == EVIDENCE_RECORD_DIFFERS)
		snprintf(why, sizeof(rep->reasons[0]),
			 "the record disagrees: it says seq %llu head %.16s, the log and the "
			 "second witness seq %llu head %.16s",
			 (unsigned long long)cp->seq, cp->head, (unsigned long long)sc->seq,
			 sc->head);
	else
		snprintf(why, sizeof(rep->reasons[0]),
			 "the log ends (seq %llu head %.16s) where neither the record (seq %llu) "
			 "nor the second witness (seq %llu) says",
			 (unsigned long long)rep->last_seq, rep->head, (unsigned long long)cp->seq,
			 (unsigned long long)sc->seq);
}

/* Every source of the record: its log against its checkpoint, and
 * against the second witness's when there is one (second not NULL). */
static int verify_sources(FILE *o, const char *log, const char *text, size_t len, const char *key,
			  const struct evidence_witness *w, const struct evidence_witness *second)
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

		if (!sup && (r = evidence_slurp(cp->log, EVIDENCE_LOG_MAX, &other, &olen)) < 0) {
			fprintf(o, "  %s: its log %s: %s\n", cp->source, cp->log, strerror(-r));
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
		/* The drop counter of the checkpoint: lines its writer lost
		 * that no line of the log reports (its last ones). */
		if (cp->drops > rep.dropped && rep.n_reasons < EVIDENCE_REASONS_MAX) {
			rep.verdict = EVIDENCE_INCOMPLETE;
			snprintf(rep.reasons[rep.n_reasons++], sizeof(rep.reasons[0]),
				 "its checkpoint counts %llu event(s) its writer could not write, "
				 "%llu of them after its last line",
				 (unsigned long long)cp->drops,
				 (unsigned long long)(cp->drops - rep.dropped));
		}
		if (!sup && rep.n_reasons < EVIDENCE_REASONS_MAX && !events_agree(ev, n_ev, cp)) {
			rep.verdict = EVIDENCE_INCOMPLETE;
			snprintf(rep.reasons[rep.n_reasons++], sizeof(rep.reasons[0]),
				 "the record's checkpoint does not match the supervisor log's");
		}
		if (second)
			judge_second(cp, second, w->sequenced, &rep);
		show(o, cp->source, &rep);
		complete = complete && rep.verdict == EVIDENCE_COMPLETE;
	}
	/* A checkpoint event of a source the record does not list: a log
	 * left out of the record. */
	for (size_t i = 0; i < n_ev; i++) {
		bool listed = false;

		for (size_t j = 0; j < w->n; j++)
			listed = listed || strcmp(ev[i].source, w->cp[j].source) == 0;
		if (!listed) {
			fprintf(o, "  %s: the supervisor's log names it, the record does not\n",
				ev[i].source);
			complete = false;
		}
	}
	for (size_t i = 0; second && i < second->n; i++)
		if (!evidence_witness_find(w, second->cp[i].source)) {
			fprintf(o, "  %s: the second witness names it, the record does not\n",
				second->cp[i].source);
			complete = false;
		}
	return complete ? 0 : 1;
}

/* The record's evidence.witness: its path, and why it was not written. */
static void record_witness(const char *rtext, size_t rlen, char *path, size_t size, char *error,
			   size_t esize)
{
	cJSON *o = cJSON_ParseWithLength(rtext, rlen);
	const cJSON *wi = cJSON_GetObjectItemCaseSensitive(
	    cJSON_GetObjectItemCaseSensitive(o, "evidence"), "witness");
	const cJSON *p = cJSON_GetObjectItemCaseSensitive(wi, "path");
	const cJSON *e = cJSON_GetObjectItemCaseSensitive(wi, "error");
	const cJSON *wr = cJSON_GetObjectItemCaseSensitive(wi, "written");

	snprintf(path, size, "%s", cJSON_IsString(p) ? p->valuestring : "");
	snprintf(error, esize, "%s",
		 cJSON_IsFalse(wr) ? (cJSON_IsString(e) ? e->valuestring : "not written") : "");
	cJSON_Delete(o);
}

/* The second witness at path, of session: 0 read into *out; 1 it cannot
 * be used (said on o: the check is then INCOMPLETE). */
static int load_second(FILE *o, const char *path, const char *session, const char *error,
		       struct evidence_witness *out)
{
	cleanup_free char *text = NULL;
	size_t len;
	int r;

	if (error[0]) {
		fprintf(o, "  second witness %s: not written by the run: %s\n", path, error);
		return 1;
	}
	r = evidence_slurp(path, 1u << 20, &text, &len);
	if (r < 0) {
		fprintf(o, "  second witness %s: %s\n", path, strerror(-r));
		return 1;
	}
	if (evidence_witness_parse(text, len, out) < 0) {
		fprintf(o, "  second witness %s: not a witness (no session or checkpoint in it)\n",
			path);
		return 1;
	}
	if (strcmp(out->session, session) != 0) {
		fprintf(o, "  second witness %s: of session %s, not %s\n", path, out->session,
			session);
		return 1;
	}
	return 0;
}

/* The log against the record's checkpoints (rec) and the second witness
 * (wit, or the one the record names), or against the witness alone. */
static int verify_witnessed(const char *log, const char *text, size_t len, const char *key,
			    const char *rec, const char *wit)
{
	static struct evidence_witness w, second;
	char wpath[PATH_MAX] = "", werror[PATH_MAX + 128] = "";
	const char *what = rec ? "record" : "witness", *path = rec ? rec : wit;
	cleanup_free char *rtext = NULL;
	bool lost = false;
	size_t rlen;
	int r = evidence_slurp(path, 1u << 20, &rtext, &rlen);

	if (r < 0)
		return cli_fail("evidence verify: %s %s: %s", what, path, strerror(-r));
	if (evidence_witness_parse(rtext, rlen, &w) < 0)
		return cli_fail("evidence verify: %s %s: no session or evidence checkpoint in it",
				what, path);
	if (rec && wit)
		snprintf(wpath, sizeof(wpath), "%s", wit);
	else if (rec)
		record_witness(rtext, rlen, wpath, sizeof(wpath), werror, sizeof(werror));
	printf("session %s, %zu source(s), checked against the %s%s%s%s\n", w.session, w.n,
	       rec ? "record's checkpoints" : "second witness's checkpoints (no record)",
	       wpath[0] ? " and the second witness " : "", wpath,
	       w.sequenced ? "" : " (unsequenced: --weaken no-seq, a lost line is unseen)");
	if (wpath[0])
		lost = load_second(stdout, wpath, w.session, werror, &second) != 0;
	r = verify_sources(stdout, log, text, len, key, &w, wpath[0] && !lost ? &second : NULL);
	r = r || lost;
	puts(r == 0 ? "COMPLETE" : "INCOMPLETE");
	return r;
}

static int verify(int argc, char **argv)
{
	static const struct option opts[] = {{"key", required_argument, NULL, 'k'},
					     {"record", required_argument, NULL, 'r'},
					     {"witness", required_argument, NULL, 'w'},
					     {"help", no_argument, NULL, 'h'},
					     {NULL, 0, NULL, 0}};
	const char *key_path = NULL, *rec = NULL, *wit = NULL, *log;
	cleanup_free char *text = NULL, *key = NULL, *kdefault = NULL;
	struct evidence_report rep;
	char session[128] = "";
	size_t len, klen;
	int c, r;

	optind = 1;
	while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		if (c == 'k')
			key_path = optarg;
		else if (c == 'r')
			rec = optarg;
		else if (c == 'w')
			wit = optarg;
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
	r = evidence_slurp(log, EVIDENCE_LOG_MAX, &text, &len);
	if (r < 0)
		return cli_fail("evidence verify: %s: %s", log, strerror(-r));
	r = evidence_slurp(key_path, 64, &key, &klen);
	if (r < 0 || klen != EVIDENCE_KEY_LEN)
		return cli_fail("evidence verify: key %s: %s", key_path,
				r < 0 ? strerror(-r) : "not a 32-byte key");
	/* Without a record the second witness stands in for it. */
	if (rec || wit)
		return verify_witnessed(log, text, len, key, rec, wit);
	first_session(text, len, session, sizeof(session));
	evidence_verify(text, len, (const unsigned char *)key, session, 0, NULL, &rep);
	printf("session %s, no witness (--record): a cut-off tail cannot be seen\n", session);
	show(stdout, rep.source[0] ? rep.source : "log", &rep);
	puts(rep.verdict == EVIDENCE_COMPLETE ? "COMPLETE" : "INCOMPLETE");
	return rep.verdict == EVIDENCE_COMPLETE ? 0 : 1;
}

/* ---------------------------------------------------------- export */

static const char export_usage[] =
    "Usage: paddock evidence export RECORD --out DIR [--key FILE] [--secrets FILE]\n"
    "         [--env NAME]... [--env-file FILE] [--deny TEXT]... [--deny-file FILE]\n"
    "Write a review packet of a run (its completion record RECORD and every log it\n"
    "names) into the new directory DIR: each line and the record rewritten by an\n"
    "allowlist (ids, digests, decisions, counts, times); every other value as its\n"
    "HMAC-SHA-256 under the run's key and its length; manifest.json with every\n"
    "file's SHA-256. Before anything is written the packet is scanned for every\n"
    "marker of the deny list: the values of the secrets file, of --env and\n"
    "--env-file (as paddock run takes them), --deny and the lines of --deny-file;\n"
    "one found, nothing is written.\n"
    "  --deny TEXT is on the command line, which other users see: a secret goes in\n"
    "  --deny-file or --secrets\n"
    "  --key FILE  the run's key (default: the supervisor's log with .jsonl as .key)\n"
    "  --weaken raw-export  copy the files as they are, unscanned (evaluation only;\n"
    "                       also when the run had --weaken raw-export)\n"
    "\n"
    "Exit status: 0 written; 1 refused (a marker is in it: the file and the marker's\n"
    "source are named, never the marker); 125 bad arguments or unreadable files.\n";

struct packet {
	char *name[EVIDENCE_SOURCES_MAX + 2];
	char *data[EVIDENCE_SOURCES_MAX + 2];
	size_t len[EVIDENCE_SOURCES_MAX + 2];
	size_t n;
};

static void packet_free(struct packet *p)
{
	for (size_t i = 0; i < p->n; i++) {
		free(p->name[i]);
		free(p->data[i]);
	}
}

/* One log rewritten line by line; a line that is not JSON becomes its
 * digest alone. */
static int export_log(const char *text, size_t len, const unsigned char *key, bool raw, char **out,
		      size_t *olen)
{
	size_t cap = len + 1024, n = 0, off = 0;
	char *buf = malloc(cap);

	if (!buf)
		return -ENOMEM;
	while (off < len) {
		const char *nl = memchr(text + off, '\n', len - off);
		size_t l = nl ? (size_t)(nl - text - off) : len - off;
		char *line = NULL;
		size_t k;

		if (raw)
			line = strndup(text + off, l);
		else if (evidence_export_json(text + off, l, key, &line) == -EINVAL)
			line = strdup("{\"unlisted\":[\"not a JSON line\"]}");
		off += l + 1;
		if (!line) {
			free(buf);
			return -ENOMEM;
		}
		k = strlen(line);
		if (n + k + 2 > cap) {
			char *b = realloc(buf, cap = 2 * (n + k + 2));

			if (!b) {
				free(line);
				free(buf);
				return -ENOMEM;
			}
			buf = b;
		}
		memcpy(buf + n, line, k);
		buf[n + k] = '\n';
		n += k + 1;
		free(line);
	}
	*out = buf;
	*olen = n;
	return 0;
}

static int packet_add(struct packet *p, const char *name, char *data, size_t len)
{
	if (p->n == sizeof(p->name) / sizeof(p->name[0]) || !(p->name[p->n] = strdup(name))) {
		free(data);
		return -ENOMEM;
	}
	p->data[p->n] = data;
	p->len[p->n++] = len;
	return 0;
}

static int manifest(struct packet *p, const struct evidence_witness *w, const char *verdict,
		    const struct evidence_markers *m, bool raw)
{
	cJSON *o = cJSON_CreateObject(), *files, *scan;
	char *text;
	int r;

	cJSON_AddNumberToObject(o, "packet_version", 1);
	cJSON_AddStringToObject(o, "session", w->session);
	cJSON_AddStringToObject(o, "verified", verdict);
	cJSON_AddStringToObject(o, "digests",
				raw ? "none: --weaken raw-export"
				    : "hmac-sha256 under the run's evidence key");
	files = cJSON_AddArrayToObject(o, "files");
	for (size_t i = 0; i < p->n; i++) {
		cJSON *f = cJSON_CreateObject();
		char hex[65];

		evidence_sha256_hex(p->data[i], p->len[i], hex);
		cJSON_AddStringToObject(f, "name", p->name[i]);
		cJSON_AddStringToObject(f, "sha256", hex);
		cJSON_AddNumberToObject(f, "bytes", (double)p->len[i]);
		cJSON_AddItemToArray(files, f);
	}
	scan = cJSON_AddObjectToObject(o, "scan");
	cJSON_AddBoolToObject(scan, "done", !raw);
	cJSON_AddNumberToObject(scan, "markers", (double)m->n);
	cJSON_AddNumberToObject(scan, "skipped_short", (double)m->skipped);
	text = cJSON_Print(o);
	cJSON_Delete(o);
	if (!text)
		return -ENOMEM;
	r = packet_add(p, "manifest.json", text, strlen(text));
	return r;
}

/* What the deny list's markers come from, for the one line that names
 * where a marker was found. */
struct marker_src {
	size_t upto; /* markers [previous upto, upto) came from what */
	const char *what;
};

static const char *env_lookup(const char *name)
{
	return getenv(name);
}

/* c: 's' a secrets file, 'E' an env file (a NAME alone: its value here),
 * 'D' a deny file (a marker a line). */
static int markers_file(struct evidence_markers *m, const char *path, int c)
{
	cleanup_free char *text = NULL;
	size_t len;
	int r = evidence_slurp(path, 1u << 20, &text, &len);

	return r < 0 ? r
		     : evidence_markers_add_text(m, text, len, c != 'D',
						 c == 'E' ? env_lookup : NULL);
}

static int export_write(const char *dir, const struct packet *p)
{
	cleanup_close int dfd = -1;

	if (mkdir(dir, 0700) < 0)
		return -errno;
	dfd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (dfd < 0)
		return -errno;
	for (size_t i = 0; i < p->n; i++) {
		cleanup_close int fd = openat(
		    dfd, p->name[i], O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);

		if (fd < 0 || write_full(fd, p->data[i], p->len[i]) < 0)
			return -errno;
	}
	return 0;
}

bool evidence_recorded_knob(const char *text, size_t len, const char *knob)
{
	cJSON *o = cJSON_ParseWithLength(text, len);
	const cJSON *x, *w = cJSON_GetObjectItemCaseSensitive(o, "weakenings");
	bool raw = false;

	cJSON_ArrayForEach(x, w) {
		raw = raw || (cJSON_IsString(x) && strcmp(x->valuestring, knob) == 0);
	}
	cJSON_Delete(o);
	return raw;
}

static int export(int argc, char **argv)
{
	static const struct option opts[] = {{"out", required_argument, NULL, 'o'},
					     {"key", required_argument, NULL, 'k'},
					     {"secrets", required_argument, NULL, 's'},
					     {"env", required_argument, NULL, 'e'},
					     {"env-file", required_argument, NULL, 'E'},
					     {"deny", required_argument, NULL, 'd'},
					     {"deny-file", required_argument, NULL, 'D'},
					     {"weaken", required_argument, NULL, 'W'},
					     {"help", no_argument, NULL, 'h'},
					     {NULL, 0, NULL, 0}};
	const char *out = NULL, *key_path = NULL, *rec;
	cleanup_free char *rtext = NULL, *key = NULL, *kdefault = NULL, *stext = NULL;
	struct evidence_markers m = {0};
	struct marker_src src[64];
	struct packet p = {0};
	struct evidence_witness w;
	const char *verdict = "COMPLETE";
	size_t rlen, klen, slen, n_src = 0;
	bool raw = false;
	int c, r = 0;

	optind = 1;
	while (r >= 0 && (c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		const char *what = NULL;

		if (c == 'h') {
			fputs(export_usage, stdout);
			evidence_markers_free(&m);
			return 0;
		} else if (c == 'o') {
			out = optarg;
		} else if (c == 'k') {
			key_path = optarg;
		} else if (c == 'W' && strcmp(optarg, "raw-export") == 0) {
			raw = true;
		} else if (c == 's' || c == 'E' || c == 'D') {
			r = markers_file(&m, optarg, c);
			what = c == 's' ? "--secrets" : c == 'E' ? "--env-file" : "--deny-file";
			if (r < 0) {
				evidence_markers_free(&m);
				return cli_fail("evidence export: %s %s: %s", what, optarg,
						strerror(-r));
			}
		} else if (c == 'e') {
			/* As paddock run takes it: a NAME, its value from the
			 * environment (never on the command line, where
			 * other users see it). */
			const char *v = strchr(optarg, '=') ? NULL : getenv(optarg);

			if (!v) {
				evidence_markers_free(&m);
				return cli_fail("evidence export: --env %s: %s", optarg,
						strchr(optarg, '=')
						    ? "takes a NAME; the value is taken from your "
						      "environment"
						    : "not set in your environment");
			}
			r = evidence_markers_add(&m, v, strlen(v));
			what = "--env";
		} else if (c == 'd') {
			r = evidence_markers_add(&m, optarg, strlen(optarg));
			what = "--deny";
		} else {
			evidence_markers_free(&m);
			return cli_fail("evidence export: bad option (see paddock evidence export "
					"--help)");
		}
		if (what && n_src < sizeof(src) / sizeof(src[0]))
			src[n_src++] = (struct marker_src){m.n, what};
	}
	if (r < 0 || optind + 1 != argc || !out) {
		evidence_markers_free(&m);
		return cli_fail(r < 0
				    ? "evidence export: out of memory"
				    : "evidence export: expected RECORD and --out DIR (see paddock "
				      "evidence export --help)");
	}
	rec = argv[optind];
	r = evidence_slurp(rec, 1u << 20, &rtext, &rlen);
	if (r < 0 || evidence_witness_parse(rtext, rlen, &w) < 0) {
		evidence_markers_free(&m);
		return cli_fail("evidence export: record %s: %s", rec,
				r < 0 ? strerror(-r) : "no session or evidence checkpoint in it");
	}
	/* paddock run --weaken raw-export (HB-24's weakened arm): the run's
	 * record asks for it. */
	raw = raw || evidence_recorded_knob(rtext, rlen, "raw-export");
	if (!key_path) {
		size_t n = strlen(w.cp[0].log);

		if (n > 6 && strcmp(w.cp[0].log + n - 6, ".jsonl") == 0 &&
		    asprintf(&kdefault, "%.*s.key", (int)(n - 6), w.cp[0].log) > 0)
			key_path = kdefault;
	}
	r = key_path ? evidence_slurp(key_path, 64, &key, &klen) : -ENOENT;
	if (r < 0 || klen != EVIDENCE_KEY_LEN) {
		evidence_markers_free(&m);
		return cli_fail("evidence export: key %s: %s", key_path ? key_path : "(none)",
				r < 0 ? strerror(-r) : "not a 32-byte key");
	}
	/* The verdict goes into the manifest: a packet of an incomplete log
	 * says so. */
	r = evidence_slurp(w.cp[0].log, EVIDENCE_LOG_MAX, &stext, &slen);
	if (r >= 0) {
		cleanup_fclose FILE *quiet = fopen("/dev/null", "we");

		if (!quiet || verify_sources(quiet, w.cp[0].log, stext, slen, key, &w, NULL) != 0)
			verdict = "INCOMPLETE";
	}
	for (size_t i = 0; r >= 0 && i < w.n; i++) {
		cleanup_free char *text = NULL;
		char *data = NULL, name[32];
		size_t len, dlen;

		r = evidence_slurp(w.cp[i].log, EVIDENCE_LOG_MAX, &text, &len);
		if (r < 0) {
			packet_free(&p);
			evidence_markers_free(&m);
			return cli_fail("evidence export: %s's log %s: %s", w.cp[i].source,
					w.cp[i].log, strerror(-r));
		}
		snprintf(name, sizeof(name), "%s.jsonl", w.cp[i].source);
		r = export_log(text, len, (const unsigned char *)key, raw, &data, &dlen);
		if (r >= 0)
			r = packet_add(&p, name, data, dlen);
	}
	if (r >= 0) {
		char *data = NULL;

		if (raw)
			data = strndup(rtext, rlen);
		else
			r = evidence_export_json(rtext, rlen, (const unsigned char *)key, &data);
		if (r >= 0)
			r = data ? packet_add(&p, "record.json", data, strlen(data)) : -ENOMEM;
	}
	if (r >= 0)
		r = manifest(&p, &w, verdict, &m, raw);
	if (r < 0) {
		packet_free(&p);
		evidence_markers_free(&m);
		return cli_fail("evidence export: %s", strerror(-r));
	}
	/* The self-scan: every file, the manifest too, before anything is
	 * written. --weaken raw-export skips it (HB-24's weakened arm). */
	for (size_t i = 0; !raw && i < p.n; i++) {
		long k = evidence_markers_scan(&m, p.data[i], p.len[i]);
		const char *what = "?";

		if (k < 0)
			continue;
		for (size_t j = 0; j < n_src; j++)
			if ((size_t)k < src[j].upto) {
				what = src[j].what;
				break;
			}
		printf("refused: %s would hold a marker of the deny list (from %s); nothing "
		       "written\n",
		       p.name[i], what);
		packet_free(&p);
		evidence_markers_free(&m);
		return 1;
	}
	if (raw)
		fprintf(stderr, "paddock: warning: --weaken raw-export: the packet is the files "
				"as they are, unscanned\n");
	r = export_write(out, &p);
	if (r < 0) {
		packet_free(&p);
		evidence_markers_free(&m);
		return cli_fail("evidence export: %s: %s", out, strerror(-r));
	}
	printf("%s: %zu files of session %s (%s), %zu markers scanned\n", out, p.n, w.session,
	       verdict, raw ? 0 : m.n);
	packet_free(&p);
	evidence_markers_free(&m);
	return 0;
}

int cmd_evidence(int argc, char **argv)
{
	if (argc >= 2 && strcmp(argv[1], "verify") == 0)
		return verify(argc - 1, argv + 1);
	if (argc >= 2 && strcmp(argv[1], "export") == 0)
		return export(argc - 1, argv + 1);
	if (argc >= 2 && strcmp(argv[1], "reconcile") == 0)
		return cmd_evidence_reconcile(argc - 1, argv + 1);
	if (argc >= 2 && (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0)) {
		fputs(usage, stdout);
		fputs("\n", stdout);
		fputs(export_usage, stdout);
		return 0;
	}
	return cli_fail("evidence: expected \"verify\", \"export\" or \"reconcile\" (see "
			"paddock evidence --help)");
}
