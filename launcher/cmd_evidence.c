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
    "SHA-256 links, the sequence numbers, no reported drops, and with --record the\n"
    "checkpoint the completion record holds (where the log must end).\n"
    "  --key FILE     the run's key (default: LOG with .jsonl replaced by .key)\n"
    "  --record FILE  the completion record: its session and checkpoint\n"
    "\n"
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

/* The session and checkpoint from the record. */
static int from_record(const char *path, char *session, size_t ssize, uint64_t *seq, char *head)
{
	cleanup_free char *text = NULL;
	size_t len;
	cJSON *o;
	const cJSON *s, *e, *q, *h;
	int r = slurp(path, 1u << 20, &text, &len);

	if (r < 0)
		return r;
	o = cJSON_ParseWithLength(text, len);
	s = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(o, "session"), "id");
	e = cJSON_GetObjectItemCaseSensitive(o, "evidence");
	q = cJSON_GetObjectItemCaseSensitive(e, "seq");
	h = cJSON_GetObjectItemCaseSensitive(e, "head");
	if (!cJSON_IsString(s) || !cJSON_IsNumber(q) || !cJSON_IsString(h) ||
	    strlen(h->valuestring) != 64) {
		cJSON_Delete(o);
		return -EINVAL;
	}
	snprintf(session, ssize, "%s", s->valuestring);
	*seq = (uint64_t)q->valuedouble;
	memcpy(head, h->valuestring, 65);
	cJSON_Delete(o);
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

static int verify(int argc, char **argv)
{
	static const struct option opts[] = {{"key", required_argument, NULL, 'k'},
					     {"record", required_argument, NULL, 'r'},
					     {"help", no_argument, NULL, 'h'},
					     {NULL, 0, NULL, 0}};
	const char *key_path = NULL, *rec = NULL, *log;
	cleanup_free char *text = NULL, *key = NULL, *kdefault = NULL;
	char session[128] = "", head[65] = "";
	struct evidence_report rep;
	uint64_t seq = 0;
	size_t len, klen;
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
	if (rec && (r = from_record(rec, session, sizeof(session), &seq, head)) < 0)
		return cli_fail("evidence verify: record %s: %s", rec,
				r == -EINVAL ? "no session or evidence checkpoint in it"
					     : strerror(-r));
	if (!rec)
		first_session(text, len, session, sizeof(session));
	evidence_verify(text, len, (const unsigned char *)key, session, seq, rec ? head : NULL,
			&rep);
	if (rep.verdict == EVIDENCE_COMPLETE) {
		printf("COMPLETE: %llu events of session %s, head %s%s\n",
		       (unsigned long long)rep.lines, session, rep.head,
		       rec ? ", as the record's checkpoint says"
			   : " (no checkpoint given: --record)");
		return 0;
	}
	printf("INCOMPLETE: %llu lines of session %s\n", (unsigned long long)rep.lines, session);
	for (size_t i = 0; i < rep.n_reasons; i++)
		printf("  %s\n", rep.reasons[i]);
	if (rep.more_reasons)
		printf("  (%zu more)\n", rep.more_reasons);
	return 1;
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
