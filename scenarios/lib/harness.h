/* The shared part every case driver uses besides the skeleton (case.h):
 * running paddock as the workload user and docker as root (proc.c),
 * argument vectors (argv.c), fixtures (fixture.c), JSON lookups (json.c)
 * and feature probes of the paddock under test (probe.c). */
#pragma once

#include <limits.h>
#include <stdbool.h>
#include <sys/types.h>

#include "../../include/err.h"
#include "eval.h"

/* The context of one run, the same for every case and arm. */
struct eval_ctx {
	struct subject *subj;
	char paddock[PATH_MAX];	      /* build/paddock */
	char scenarios_dir[PATH_MAX]; /* scenarios/: case policies are relative to it */
	char outdir[PATH_MAX];	      /* results/<run-id> */
	bool drop;		      /* run workloads as subj->workload_uid */
	bool docker_ok;
	bool docker_paddock_ok; /* the engine knows the runtime "paddock" (docs/oci.md) */
	/* The engine's runtimes, " a b c " (the oci-weakened arms' own:
	 * paddock-weaken-KNOB, contrib/docker/engine.sh). */
	char docker_runtimes[512];
	char docker_image[64];
};

/* ---- proc.c ---- */

/* Run argv, as the workload user when drop; stdout and stderr appended to
 * out_path (NULL: /dev/null). Waits up to timeout_ms, then SIGKILLs it by
 * pidfd. *status is the shell's view: the exit code, 128+N for signal N.
 * Returns 0 or a negative errno (fork, exec setup). */
int run_argv(const struct eval_ctx *ctx, bool drop, char *const argv[], const char *out_path,
	     int timeout_ms, int *status);
/* Same, capturing stdout (trailing newline trimmed) into buf. */
int run_capture(const struct eval_ctx *ctx, bool drop, char *const argv[], char *buf, size_t n,
		int timeout_ms, int *status);
/* The same as another user (HB-05's second owner); always drops. */
int run_capture_as(const struct eval_ctx *ctx, uid_t uid, gid_t gid, char *const argv[], char *buf,
		   size_t n, int timeout_ms, int *status);
int run_argv_as(const struct eval_ctx *ctx, uid_t uid, gid_t gid, char *const argv[],
		const char *out_path, int timeout_ms, int *status);
/* The same for a vector built with argv.c: -E2BIG without running anything
 * when a word of it was refused (a->err; the arm is then NOT EXECUTED). */
struct argv_buf;
int run_vec(const struct eval_ctx *ctx, bool drop, const struct argv_buf *a, const char *out_path,
	    int timeout_ms, int *status);
int capture_vec(const struct eval_ctx *ctx, bool drop, const struct argv_buf *a, char *buf,
		size_t n, int timeout_ms, int *status);
int capture_vec_as(const struct eval_ctx *ctx, uid_t uid, gid_t gid, const struct argv_buf *a,
		   char *buf, size_t n, int timeout_ms, int *status);
void sleep_ms(int ms);

/* ---- argv.c: argument vectors, pure ---- */

/* Words beyond this many fail the vector (-E2BIG), never cut it: a cut
 * argv can drop the command itself. */
#define ARGV_MAX       63
#define ARGV_STORE_MAX 16384

/* A vector being built for one arm. Words are borrowed pointers, except
 * those argv_addf() formats into store. */
struct argv_buf {
	char *v[ARGV_MAX + 1];
	size_t n;
	int err;	  /* -E2BIG once a word did not fit: the vector must not run */
	struct result *r; /* told (result_not_run) when a word does not fit; may be NULL */
	char store[ARGV_STORE_MAX];
	size_t used;
};
/* Empty the vector; r is the arm's result, marked NOT EXECUTED if a word
 * is refused later. */
void argv_start(struct argv_buf *a, struct result *r);
/* Append a word: 0, or -E2BIG when it does not fit (the vector keeps what
 * it had, stays NULL-terminated, records the error and tells a->r). */
int argv_add(struct argv_buf *a, const char *s);
/* Append each word up to the NULL: argv_add()'s return for the first that
 * fails, else 0. */
__attribute__((sentinel)) int argv_words(struct argv_buf *a, ...);
/* Append a formatted word kept in a->store; -E2BIG as argv_add(). */
__attribute__((format(printf, 2, 3))) int argv_addf(struct argv_buf *a, const char *fmt, ...);

/* A bind of the docker reference arm: -v DIR:DIR[:ro]. */
struct docker_bind {
	const char *dir;
	bool ro;
};
/* Start a: "docker run --rm --network none" (never a bridge network), the
 * binds (up to one with dir NULL), "-w workdir" when set, the image. */
void argv_docker_run(struct argv_buf *a, const struct eval_ctx *ctx, struct result *r,
		     const struct docker_bind *binds, const char *workdir);
/* Start a: "docker run -d --network none --init --name NAME IMAGE", a
 * container that outlives the call (HB-06: stopped by the case). */
void argv_docker_detached(struct argv_buf *a, const struct eval_ctx *ctx, struct result *r,
			  const char *name);
/* Start a: paddock run [--policy POLICY] [--workspace WS] [--record REC]
 * [--weaken KNOB]; NULL or "" leaves an option out. */
void argv_paddock_run(struct argv_buf *a, const struct eval_ctx *ctx, struct result *r,
		      const char *policy, const char *knob, const char *ws, const char *record);

/* ---- fixture.c ---- */

/* A fresh fixture directory: /tmp/paddock-eval-NAME.XXXXXX, its own tmpfs
 * when root (so the fanotify filesystem mark sees only the fixture),
 * mode 0755. */
struct fixture {
	char dir[PATH_MAX];
	bool mounted;
};
int fixture_make(struct fixture *fx, const char *name, struct err *err);
/* A directory inside, owned by the workload user. */
int fixture_mkdir(const struct eval_ctx *ctx, const struct fixture *fx, const char *rel, char *out,
		  size_t n);
/* A file, owned by the workload user, with this mode. */
int fixture_write(const struct eval_ctx *ctx, const char *path, const char *data, mode_t mode);
/* The canary's directory "canary" inside, with a tmpfs of its own when the
 * fixture has one (its events are then told apart by st_dev, not by a path
 * a torn-down sandbox mount can leave partial; *mounted says so), owned by
 * the workload user; canary is its file "canary.txt". */
int fixture_canary(const struct eval_ctx *ctx, const struct fixture *fx, char *dir, size_t dir_n,
		   char *canary, size_t canary_n, bool *mounted);
/* Remove everything: unmount, delete, and check it is gone. An empty
 * fixture (dir "") is a no-op. */
int fixture_teardown(struct fixture *fx);
/* OUTDIR/records/CASE.ARM, owned by the workload user: completion records
 * are kept with the results, outside every fixture and sandbox. */
int records_dir(const struct eval_ctx *ctx, const struct result *r, char *out, size_t n);
/* Where this arm's logs go: OUTDIR/CASE.ARM.NAME */
void log_path(const struct eval_ctx *ctx, const struct result *r, const char *name, char *out,
	      size_t n);

/* ---- json.c ---- */

/* read_file() is observe.h's. */
/* A JSON value from a completion record: ("ended"), ("exit_code"),
 * ("survivors" length), via cJSON; a dotted path
 * ("init.pid", "endpoints.0.host": numbers index arrays). Returns 0 and fills out. */
int record_get(const char *path, const char *key, char *out, size_t n);
/* The same over JSON text. */
int json_get(const char *text, size_t len, const char *key, char *out, size_t n);
/* The admissions log a completion record names (network.admissions_log):
 * its path, whether the record says it verified complete, its text. 0, or
 * -ENOENT (the record names none) or read_file()'s -errno. */
int admissions_read(const char *rec, char *path, size_t psize, bool *verified, char *log,
		    size_t lsize);
/* Its "decision" lines with that decision (and name, when not NULL). */
size_t admissions_count(const char *log, const char *decision, const char *name);
/* Does it hold admission id (n bytes)? */
bool admissions_has(const char *log, const char *id, size_t n);
/* This caller's entry of session ID in `paddock ps --all --json` (the
 * object's JSON text). */
int paddock_ps_entry(const struct eval_ctx *ctx, const char *id, char *out, size_t n);
/* OWNER's registry entry of session ID (the workloads run without
 * XDG_RUNTIME_DIR, so /tmp/paddock-UID). */
void session_json_path(uid_t owner, const char *id, char *out, size_t n);

/* ---- record.c ---- */

/* Read the completion record at path into out (documented fields only;
 * out->read false when it is missing or not JSON). 0 or a negative errno. */
int record_read(const char *path, struct record_view *out);

/* ---- probe.c ---- */

/* Feature probes of the paddock under test, so that a case whose feature
 * is missing reports NOT EXECUTED instead of guessing. Each returns true
 * when available and otherwise fills why. */
bool paddock_has_exec(const struct eval_ctx *ctx, char *why, size_t n);
/* `paddock run --explain` accepts this policy text (a policy using
 * "services" or "ports"). */
bool paddock_accepts_policy(const struct eval_ctx *ctx, const char *json, const char *what,
			    char *why, size_t n);
/* The end of the workload user's session ID: `paddock stop --grace 0s`
 * when stop, then `paddock rm`. An empty id is a no-op. */
void paddock_session_end(const struct eval_ctx *ctx, const char *id, bool stop);
/* The same as another owner (HB-05's B); always drops to uid, gid. */
void paddock_session_end_as(const struct eval_ctx *ctx, uid_t uid, gid_t gid, const char *id,
			    bool stop);
