/* The shared part every case driver uses: the run context, running paddock
 * as the workload user and docker as root, fixtures. */
#pragma once

#include <limits.h>
#include <stdbool.h>
#include <sys/types.h>

#include "eval.h"

struct eval_ctx {
	struct subject *subj;
	char paddock[PATH_MAX];	      /* build/paddock */
	char scenarios_dir[PATH_MAX]; /* policies beside the drivers */
	char outdir[PATH_MAX];	      /* results/<run-id> */
	bool drop;		      /* run workloads as subj->workload_uid */
	bool docker_ok;
	char docker_image[64];
};

/* A case: its arms and the driver that fills one result per arm. */
struct eval_case {
	const char *id;
	const char *title;
	const char *policy; /* file name in scenarios/, NULL when none */
	const char *const *arms;
	void (*run)(struct eval_ctx *ctx, const char *arm, struct result *r);
};

extern const struct eval_case hb01_case, hb03_case, hb04_case, hb05_case, hb06_case, hb08_case;

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
/* OWNER's registry entry of session ID (the workloads run without
 * XDG_RUNTIME_DIR, so /tmp/paddock-UID). */
void session_json_path(uid_t owner, const char *id, char *out, size_t n);

/* `paddock run` argument vector for an arm: [paddock run --policy P
 * --workspace WS --record REC (--weaken KNOB)] + extra + [--] + cmd. */
struct argv_buf {
	char *v[64];
	size_t n;
};
void argv_add(struct argv_buf *a, const char *s);
/* "docker run --rm --network none": the reference arm's start, never a
 * bridge network. */
void argv_docker_run(struct argv_buf *a);
void argv_paddock_run(struct argv_buf *a, const struct eval_ctx *ctx, const struct result *r,
		      const char *ws, const char *record);

/* A fresh fixture directory: /tmp/paddock-eval-CASE.XXXXXX, its own tmpfs
 * when root (so the fanotify filesystem mark sees only the fixture),
 * mode 0755. */
struct fixture {
	char dir[PATH_MAX];
	bool mounted;
};
int fixture_make(struct fixture *fx, const char *case_id, char *why, size_t n);
/* A directory or file inside, owned by the workload user. */
int fixture_mkdir(const struct eval_ctx *ctx, const struct fixture *fx, const char *rel, char *out,
		  size_t n);
int fixture_write(const struct eval_ctx *ctx, const char *path, const char *data, mode_t mode);
/* The canary's directory "canary" inside, with a tmpfs of its own when the
 * fixture has one (its events are then told apart by st_dev, not by a path
 * a torn-down sandbox mount can leave partial; *mounted says so), owned by
 * the workload user; canary is its file "canary.txt". */
int fixture_canary(const struct eval_ctx *ctx, const struct fixture *fx, char *dir, size_t dir_n,
		   char *canary, size_t canary_n, bool *mounted);
/* Remove everything: unmount, delete, and check it is gone. */
int fixture_teardown(struct fixture *fx);
/* The end of a case with an event observer: stop it (fan may be NULL),
 * unmount the canary's tmpfs (canary_dir NULL: none), tear the fixture
 * down; whatever fails is the record's alarm. */
struct fan_observer;
void fixture_finish(struct result *r, struct fan_observer *fan, const char *canary_dir,
		    struct fixture *fx);

/* OUTDIR/records/CASE.ARM, owned by the workload user: completion records
 * are kept with the results, outside every fixture and sandbox. */
int records_dir(const struct eval_ctx *ctx, const struct result *r, char *out, size_t n);

/* Small helpers. */
int read_file(const char *path, char *buf, size_t n);
/* A JSON value from a completion record: ("ended"), ("exit_code"),
 * ("survivors" length), via cJSON; a dotted path
 * ("init.pid", "endpoints.0.host": numbers index arrays). Returns 0 and fills out. */
int record_get(const char *path, const char *key, char *out, size_t n);
/* The same over JSON text. */
int json_get(const char *text, size_t len, const char *key, char *out, size_t n);
/* This caller's entry of session ID in `paddock ps --all --json` (the
 * object's JSON text). */
int paddock_ps_entry(const struct eval_ctx *ctx, const char *id, char *out, size_t n);
void sleep_ms(int ms);
/* Where this arm's logs go: OUTDIR/CASE.ARM.NAME */
void log_path(const struct eval_ctx *ctx, const struct result *r, const char *name, char *out,
	      size_t n);
/* The run-level knob: docker arm when no engine. Returns true and fills r
 * with NOT EXECUTED when docker cannot run. */
bool docker_unavailable(const struct eval_ctx *ctx, struct result *r);

/* Feature probes of the paddock under test, so that a case whose feature
 * is missing reports NOT EXECUTED instead of guessing. Each returns true
 * when available and otherwise fills why. */
bool paddock_has_exec(const struct eval_ctx *ctx, char *why, size_t n);
/* `paddock run --explain` accepts this policy text (a policy using
 * "services" or "ports"). */
bool paddock_accepts_policy(const struct eval_ctx *ctx, const char *json, const char *what,
			    char *why, size_t n);
