/* The evidence log (docs/evidence.md): one append-only JSON-lines file per
 * run, written only by paddock's trusted parts, outside every sandbox. Each
 * line carries its source, the source's epoch and a strictly increasing
 * sequence number, the SHA-256 of the line before it, and an HMAC-SHA-256
 * under a per-run key the sandbox never sees. The record holds the
 * checkpoint (the last sequence number and the chain head), a witness
 * outside the log.
 *
 * The writer does I/O on the fd it is given; everything else here is pure
 * (unit-tested, and the reader fuzzed: tests/fuzz/fuzz_evidence.c). */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "../include/err.h"

#define EVIDENCE_KEY_LEN  32
#define EVIDENCE_LINE_MAX 4096

/* SHA-256 of data as lower-case hex (the packet's manifest). */
void evidence_sha256_hex(const void *data, size_t len, char out[65]);

/* HMAC-SHA-256 (RFC 2104) of data under key. */
void evidence_hmac(const unsigned char *key, size_t key_len, const void *data, size_t len,
		   unsigned char out[32]);

struct evidence_log {
	int fd; /* O_APPEND; -1: nothing is written */
	unsigned char key[EVIDENCE_KEY_LEN];
	char session[64];
	char source[16];
	char epoch[33];		   /* 16 random bytes in hex: a new one at every start */
	uint64_t seq;		   /* of the last line written; 0 before the first */
	char head[65];		   /* SHA-256 of the last line written (hex) */
	unsigned long drops;	   /* lines that could not be written since the last one written */
	unsigned long drops_total; /* of the whole log */
	bool unsequenced;	   /* --weaken no-seq: no seq, no prev (each line MAC'd alone) */
};

/* A log for session, on fd, with key; the first line's prev is the
 * session's genesis (SHA-256 of "paddock-evidence-1 " SESSION), so a line
 * of another session never chains. -errno (getrandom for the epoch). */
int evidence_open(struct evidence_log *log, int fd, const unsigned char *key, const char *session,
		  const char *source);
/* Append one event: type (a word) and fields, a JSON object's members
 * without braces ("\"pid\":2,\"comm\":\"sh\"", or "" for none), whose
 * strings the caller escaped (evidence_json_string()). A line that cannot
 * be written whole counts as a drop, and the next line says so. */
void evidence_append(struct evidence_log *log, const char *type, const char *fields);
/* s as a JSON string (quotes included) into buf: control characters,
 * quotes and backslashes escaped, cut to fit. */
void evidence_json_string(const char *s, char *buf, size_t size);

enum evidence_verdict {
	EVIDENCE_COMPLETE,
	EVIDENCE_INCOMPLETE
};

#define EVIDENCE_REASONS_MAX 8
#define EVIDENCE_GAPS_MAX    8
struct evidence_report {
	enum evidence_verdict verdict;
	uint64_t lines, last_seq;
	char head[65];
	char source[16]; /* of the first line */
	char epoch[40];	 /* of the last line */
	bool sequenced;	 /* the lines carry seq and prev (not --weaken no-seq) */
	struct {
		uint64_t from, to;
	} gaps[EVIDENCE_GAPS_MAX]; /* missing sequence numbers, from-to inclusive */
	size_t n_gaps;
	uint64_t missing;			 /* sequence numbers missing in all */
	uint64_t dropped;			 /* events the writer reported it could not write */
	char reasons[EVIDENCE_REASONS_MAX][160]; /* "line 7: the MAC does not match", ... */
	size_t n_reasons;
	size_t more_reasons; /* past EVIDENCE_REASONS_MAX */
};

/* Check a log's text: every line parses, its MAC under key holds, its prev
 * is the SHA-256 of the line before (the genesis for the first), sequence
 * numbers go 1, 2, 3 ... without a gap (the missing ones go to gaps), one
 * source and one epoch (a new epoch: the source restarted, what happened
 * in between is unknown), every line names session, no drop was reported,
 * and, with a checkpoint, the log ends at want_seq (when > 0) with head
 * want_head (when not NULL). A log without sequence numbers (--weaken
 * no-seq) is checked line by line only: a missing line cannot be seen.
 * Pure. */
void evidence_verify(const char *text, size_t len, const unsigned char *key, const char *session,
		     uint64_t want_seq, const char *want_head, struct evidence_report *out);

/* The witness: the checkpoints of every source's log, as the completion
 * record holds them ("evidence": {"sources": [...]}), or as the
 * supervisor's log's "checkpoint" events name them. */
#define EVIDENCE_SOURCES_MAX 8
struct evidence_checkpoint {
	char source[16];
	char log[4096];
	char epoch[40];
	uint64_t seq;
	char head[65];
	uint64_t drops;
};

struct evidence_witness {
	char session[64];
	bool sequenced; /* false: --weaken no-seq was in effect */
	struct evidence_checkpoint cp[EVIDENCE_SOURCES_MAX];
	size_t n;
};

/* The witness from a completion record's text (a record without
 * "sources" gives the supervisor's alone). -EINVAL when it has no session
 * or no well-formed checkpoint. Pure (fuzzed). */
int evidence_witness_parse(const char *text, size_t len, struct evidence_witness *out);
/* The checkpoint events of a log's text (lines whose type is
 * "checkpoint"), as checkpoints of the sources they name; the caller
 * verified the log first. The count found (at most max). Pure (fuzzed). */
size_t evidence_checkpoint_events(const char *text, size_t len, struct evidence_checkpoint *out,
				  size_t max);

/* A second witness (the policy's evidence.witness, docs/evidence.md): a
 * file of the same shape as the record's "evidence" (so
 * evidence_witness_parse() reads it), written outside the state
 * directory. evidence_witness_judge() says, for one source, which of the
 * two disagrees with the log's end as read (its last line's seq and
 * SHA-256): the one that is not where the log ends. second is NULL when
 * the second witness has no checkpoint of the source. Pure. */
enum evidence_agreement {
	EVIDENCE_AGREE,		  /* both checkpoints are where the log ends */
	EVIDENCE_SECOND_LACKS,	  /* the second witness has no checkpoint of it */
	EVIDENCE_SECOND_DIFFERS,  /* the log and the record agree, the second does not */
	EVIDENCE_RECORD_DIFFERS,  /* the log and the second agree, the record does not */
	EVIDENCE_NEITHER_MATCHES, /* the log ends where neither says */
};

enum evidence_agreement evidence_witness_judge(uint64_t log_seq, const char *log_head,
					       bool sequenced,
					       const struct evidence_checkpoint *record,
					       const struct evidence_checkpoint *second);
/* The checkpoint of source in w, or NULL. */
const struct evidence_checkpoint *evidence_witness_find(const struct evidence_witness *w,
							const char *source);

/* The review packet (paddock evidence export, docs/evidence.md): what may
 * leave the owner's hands. evidence_export_json() rewrites one JSON value
 * (a log line, or the record) by an allowlist of field names: a listed
 * field keeps a number, a truth value, or a short string of plain
 * characters (ids, digests, decisions, times); every other value, and any
 * field not listed (those go, in order, into an array "unlisted"), becomes {"hmac": HMAC-SHA-256
 * under key of its bytes, "len": their count} (keyed: who has the packet but not the key cannot
 * test guesses of a short secret against it). *out is malloc'd, one line.
 * -EINVAL when text is not a JSON object, -ENOMEM. Pure (fuzzed). */
int evidence_export_json(const char *text, size_t len, const unsigned char *key, char **out);

/* The deny list of the export's self-scan: byte strings that must not be
 * in any file of the packet. Markers shorter than EVIDENCE_MARKER_MIN
 * bytes are counted in skipped, not scanned (they would match anything). */
#define EVIDENCE_MARKER_MIN 4
struct evidence_markers {
	char **v;
	size_t *len;
	size_t n, skipped;
};

/* Add one marker (copied). -ENOMEM. */
int evidence_markers_add(struct evidence_markers *m, const char *s, size_t len);
/* Add the markers of a file's text: with values, the VALUE of each
 * NAME=VALUE line (a secrets file, an env file; blank lines and # comments
 * skipped), and of a NAME alone lookup(NAME) when lookup is given and
 * finds it (an env file's NAME from the environment); without values,
 * each non-empty line. -ENOMEM. */
int evidence_markers_add_text(struct evidence_markers *m, const char *text, size_t len, bool values,
			      const char *(*lookup)(const char *name));
/* The index of the first marker found in buf (as is, or as a JSON string
 * escapes it), or -1. */
long evidence_markers_scan(const struct evidence_markers *m, const char *buf, size_t len);
void evidence_markers_free(struct evidence_markers *m);

/* Reconciliation (paddock evidence reconcile, HB-17): the tool's claim of
 * each admitted operation (the mediator's "outcome" line: the upstream's
 * status, below 400 a success) joined by admission id with a receiver's
 * ledger of effects (JSON lines {"admission": ID, "effect": true|false}).
 * The task state and the effect state stay apart; the disposition is
 * their join. */
enum evidence_disposition {
	EVIDENCE_MATCHED,		    /* the claim and the effect agree */
	EVIDENCE_CLAIMED_SUCCESS_NO_EFFECT, /* success reported, nothing happened */
	EVIDENCE_CLAIMED_FAILURE_EFFECT,    /* failure reported, the effect happened */
	EVIDENCE_EFFECT_UNKNOWN,	    /* the ledger is unavailable or silent on it */
	EVIDENCE_DISPOSITIONS,
};

const char *evidence_disposition_name(enum evidence_disposition d);

#define EVIDENCE_OPS_MAX 64
struct evidence_op {
	char admission[96];
	unsigned status;   /* the upstream's, as the mediator saw it */
	bool claimed_ok;   /* status below 400 */
	bool effect_known; /* the ledger has it */
	bool effect;	   /* what the ledger says happened */
	enum evidence_disposition d;
};

struct evidence_reconciled {
	struct evidence_op ops[EVIDENCE_OPS_MAX];
	size_t n, more; /* more: operations past EVIDENCE_OPS_MAX */
	size_t counts[EVIDENCE_DISPOSITIONS];
};

/* Join log (a mediator log's text) with ledger (llen bytes; NULL: the
 * receiver is unavailable, every effect unknown). trust_claim (--weaken
 * trust-tool-claim): the claim is taken for the effect, the ledger
 * unread. Pure (fuzzed). */
void evidence_reconcile(const char *log, size_t len, const char *ledger, size_t llen,
			bool trust_claim, struct evidence_reconciled *out);
