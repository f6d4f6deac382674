/* The budget ledger (docs/network.md, "Budgets"): one SQLite file per
 * budget id, BUDGET.sqlite in a directory outside every sandbox, shared by
 * every mediator (and every session) that names the budget. An attempt of
 * a metered rule reserves its upper bound before it is dispatched, in one
 * BEGIN IMMEDIATE transaction that also reads what the budget already
 * holds, so two mediators can never both spend the same remainder (the
 * check-then-charge race LiteLLM has, BerriAI/litellm#34732). Settlement
 * replaces the bound with the receiver's charge; a request that went out
 * without an answer keeps its bound as "unknown" until the operator
 * settles it. Nothing here releases a reservation on a timeout, a crash
 * or a restart: recovery turns a dead mediator's reservations into
 * "unknown", never into "released".
 *
 * Durability: WAL, STRICT tables with CHECKs, a busy timeout, BEGIN
 * IMMEDIATE for every read-then-write (a deferred transaction upgraded
 * later gets SQLITE_BUSY that no timeout can wait out). A reservation is
 * durable before ledger_reserve() returns, so before its request is
 * dispatched: a group commit (docs/budget.md, "Durability"). SQLite's
 * synchronous=FULL fsyncs the WAL inside COMMIT, with the write lock
 * held, so every caller of every process waits for every other caller's
 * fsync in turn (249 pairs a second with 32 callers here, two fsyncs a
 * pair). Instead the commit itself runs with synchronous=NORMAL (no fsync;
 * the checkpoint still syncs the WAL before it copies it into the
 * database: sqlite.org/wal.html), and the reserving caller then
 * fdatasync()s the WAL itself, after the lock is released. The WAL is
 * appended in commit order, so that flush makes durable this commit and
 * every one before it, whoever wrote it; concurrent flushes of one file
 * are merged by the filesystem (one journal commit serves every waiter),
 * which is where the grouping happens, across threads and processes
 * alike. Ends of rows (settle, unknown, release) are not flushed: each is
 * durable with the next reservation's flush (or the next checkpoint). One
 * lost to a power cut leaves its row reserved, which recovery turns into
 * unknown with its bound held: never a charge counted twice, never a
 * bound released. The only SQLite code of paddock: it runs in
 * paddock-mediator (and its --budget mode for `paddock budget`). */
#include "mediator.h"
#include "ledger_queue.h"

#include <fcntl.h>
#include <limits.h>
#include <sqlite3.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

struct ledger {
	sqlite3 *db;
	char owner[96]; /* "PID:STARTTIME:BOOTID" of this process */
	unsigned busy_ms;
	struct timespec busy_since;
	char wal[PATH_MAX + 8]; /* DIR/BUDGET.sqlite-wal */
	int wal_fd;		/* flushed after each reservation's commit */
	bool commit_sync;	/* synchronous=FULL, no own flush (the bench's "before") */
	/* The writers' queue (ledger_queue.c): taken with the write
	 * transaction, both waited for until deadline (busy_ms from its
	 * start); NULL or queue_off: SQLite's lock alone, polled. */
	struct ledger_queue *q;
	bool queue_off;
	bool writing; /* in a write transaction of ours: deadline holds */
	struct timespec deadline;
	unsigned long busy_waits; /* the busy handler's retries, for the tests and the bench */
	int wal_frames;		  /* the WAL's frames after the last commit (wal_hook) */
	/* Prepared statements, by the address of their (static) text:
	 * preparing each anew was a third of a reservation's time. */
	struct {
		const char *sql;
		sqlite3_stmt *st;
	} cache[16];
};

/* A row's part of the totals (r: NEW or OLD). */
#define LIVE(r)	   "(CASE WHEN " r ".state IN ('reserved','unknown') THEN " r ".bound ELSE 0 END)"
#define SETTLED(r) "(CASE WHEN " r ".state = 'settled' THEN " r ".charge ELSE 0 END)"
#define LIVE_SETTLED_SUMS                                                                         \
	"SELECT 1, COALESCE(SUM(" LIVE("ops") "), 0), COALESCE(SUM(" SETTLED("ops") "), 0) FROM " \
										    "ops"

static const char schema[] =
    "CREATE TABLE IF NOT EXISTS meta(key TEXT PRIMARY KEY, value TEXT NOT NULL) STRICT;"
    "CREATE TABLE IF NOT EXISTS caps(budget TEXT PRIMARY KEY, cap INTEGER NOT NULL "
    " CHECK (cap >= 0), session TEXT NOT NULL, updated INTEGER NOT NULL) STRICT;"
    "CREATE TABLE IF NOT EXISTS ops("
    " id INTEGER PRIMARY KEY,"
    " op_key TEXT,"
    " session TEXT NOT NULL,"
    " owner TEXT NOT NULL,"
    " route TEXT NOT NULL,"
    " bound INTEGER NOT NULL CHECK (bound >= 0),"
    " charge INTEGER CHECK (charge >= 0),"
    " state TEXT NOT NULL CHECK (state IN ('reserved','unknown','settled','released')),"
    " source TEXT,"
    " created INTEGER NOT NULL,"
    " ended INTEGER,"
    " CHECK ((state = 'settled') = (charge IS NOT NULL))) STRICT;"
    "CREATE INDEX IF NOT EXISTS ops_key ON ops(op_key) WHERE op_key IS NOT NULL;"
    /* A remote job's row (docs/network.md, "Remote jobs"): what `paddock
     * budget jobs` needs to ask its service about it after its session,
     * the address its submission was sent to included (the policy is not
     * at hand then); session_end, the session's word for it at its end. */
    "CREATE TABLE IF NOT EXISTS jobs(op INTEGER PRIMARY KEY, job TEXT NOT NULL,"
    " admission TEXT NOT NULL, host TEXT NOT NULL, port INTEGER NOT NULL"
    " CHECK (port BETWEEN 1 AND 65535), address TEXT NOT NULL, status TEXT NOT NULL,"
    " outlive INTEGER NOT NULL, session_end TEXT) STRICT;"
    "CREATE INDEX IF NOT EXISTS ops_state ON ops(state);"
    /* What the budget holds, kept by triggers in the transaction that
     * changes a row: the live bounds (reserved, unknown) and the settled
     * charges. A reservation reads one row instead of summing the table
     * (a sum that grew with every operation: 2,200 pairs a second fell
     * to 300 as the bench's table grew). ledger_check() compares it with
     * the sums. A version-1 ledger gets it from its rows on open. */
    "CREATE TABLE IF NOT EXISTS totals(id INTEGER PRIMARY KEY CHECK (id = 1),"
    " live INTEGER NOT NULL CHECK (live >= 0),"
    " settled INTEGER NOT NULL CHECK (settled >= 0)) STRICT;"
    "INSERT OR IGNORE INTO totals " LIVE_SETTLED_SUMS ";"
    "CREATE TRIGGER IF NOT EXISTS ops_insert AFTER INSERT ON ops BEGIN"
    " UPDATE totals SET live = live + " LIVE("NEW") ", settled = settled + " SETTLED(
	"NEW") ";"
	       " END;"
	       "CREATE TRIGGER IF NOT EXISTS ops_update AFTER UPDATE ON ops BEGIN"
	       " UPDATE totals SET live = live - " LIVE("OLD") " + " LIVE(
		   "NEW") ","
			  " settled = settled - " SETTLED("OLD") " + " SETTLED(
			      "NEW") ";"
				     " END;"
				     "CREATE TRIGGER IF NOT EXISTS ops_delete AFTER DELETE ON ops "
				     "BEGIN"
				     " UPDATE totals SET live = live - " LIVE(
					 "OLD") ", settled = settled - " SETTLED("OLD") ";"
											" END;";

/* What the budget holds: every live bound and every settled charge. */
static const char held_sql[] = "SELECT live + settled FROM totals";

static int64_t now_wall_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* A process's start time (field 22 of /proc/PID/stat), 0 if it is gone:
 * with the pid it names one process for good (a reused pid starts later). */
static unsigned long long start_time(long pid)
{
	char path[64], buf[1024], *p;
	unsigned long long t = 0;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%ld/stat", pid);
	f = fopen(path, "re");
	if (!f)
		return 0;
	if (!fgets(buf, sizeof(buf), f)) {
		fclose(f);
		return 0;
	}
	fclose(f);
	p = strrchr(buf, ')'); /* the command may hold spaces and parentheses */
	if (!p)
		return 0;
	/* p: the space before field 3; field 22 is 19 spaces on. */
	p++;
	for (int field = 3; p && field < 22; field++)
		p = strchr(p + 1, ' ');
	if (p)
		t = strtoull(p + 1, NULL, 10);
	return t;
}

/* This boot's id (a start time counts from boot: after a reboot the same
 * pid and start time may be another process). */
static void boot_id(char out[40])
{
	FILE *f = fopen("/proc/sys/kernel/random/boot_id", "re");

	out[0] = '\0';
	if (f && fgets(out, 40, f))
		out[strcspn(out, "\n")] = '\0';
	if (f)
		fclose(f);
}

/* "PID:STARTTIME:BOOTID" names a live process of this boot. */
static bool owner_alive(const char *owner)
{
	char *end, boot[40];
	long pid = strtol(owner, &end, 10);
	unsigned long long t;

	if (*end != ':' || pid <= 0)
		return false;
	t = strtoull(end + 1, &end, 10);
	if (*end != ':')
		return false;
	boot_id(boot);
	return boot[0] && strcmp(end + 1, boot) == 0 && start_time(pid) == t;
}

/* SQLite's own busy handler backs off to 100 ms sleeps: with a few
 * writers waiting on one another (every reservation is a short write
 * transaction) throughput fell to ten pairs a second with 32 callers
 * here. This one retries until the write transaction's deadline (busy_ms
 * from its start, the queue's wait included), or busy_ms since the first
 * retry of this wait outside one of ours. With the queue, a writer of
 * ours gets here only when a writer without it (the sqlite3 shell, an
 * older paddock) or a checkpoint holds the lock. */
static int busy(void *arg, int count)
{
	struct ledger *l = arg;
	struct timespec now;
	long ms;

	clock_gettime(CLOCK_MONOTONIC, &now);
	if (count == 0)
		l->busy_since = now;
	if (l->writing)
		ms = (now.tv_sec - l->deadline.tv_sec) * 1000 +
		     (now.tv_nsec - l->deadline.tv_nsec) / 1000000 + (long)l->busy_ms;
	else
		ms = (now.tv_sec - l->busy_since.tv_sec) * 1000 +
		     (now.tv_nsec - l->busy_since.tv_nsec) / 1000000;
	if (ms >= (long)l->busy_ms)
		return 0;
	l->busy_waits++;
	/* From 50 us, doubling every 8 retries to at most 1.6 ms, with
	 * jitter: many waiters polling one lock at a fixed rate kept two
	 * cores busy with wakeups instead of commits. */
	{
		unsigned shift = count / 8 < 5 ? (unsigned)count / 8 : 5;
		unsigned us = 50u << shift;

		usleep(us / 2 + (unsigned)(now.tv_nsec / 1000) % us);
	}
	return 1;
}

/* SQLite's wal_hook after each commit of this connection: the WAL's
 * size in frames. Setting it turns off the automatic checkpoint, which
 * would run inside COMMIT, so with the queue held (its fsyncs of the WAL
 * and the database made every waiter wait): finish() runs it instead. */
static int wal_hook(void *arg, sqlite3 *db, const char *name, int frames)
{
	(void)db;
	(void)name;
	((struct ledger *)arg)->wal_frames = frames;
	return SQLITE_OK;
}

static int sql_err(struct ledger *l, int rc, struct err *err, const char *what)
{
	return err_set(err, rc == SQLITE_BUSY || rc == SQLITE_LOCKED ? EBUSY : EIO,
		       "ledger: %s: %s", what, l->db ? sqlite3_errmsg(l->db) : sqlite3_errstr(rc));
}

static int exec(struct ledger *l, const char *sql, struct err *err)
{
	int rc = sqlite3_exec(l->db, sql, NULL, NULL, NULL);

	return rc == SQLITE_OK ? 0 : sql_err(l, rc, err, sql);
}

/* A write transaction's end: the queue released, then a passive
 * checkpoint (the size SQLite's automatic one runs at) outside it: it
 * waits for no one and no writer waits for it. */
static void finish(struct ledger *l)
{
	ledger_queue_unlock(l->q);
	l->writing = false;
	if (l->wal_frames >= 1000) {
		l->wal_frames = 0;
		(void)sqlite3_wal_checkpoint_v2(l->db, NULL, SQLITE_CHECKPOINT_PASSIVE, NULL, NULL);
	}
}

/* *out: ms from now (CLOCK_MONOTONIC). */
static void after_ms(struct timespec *out, unsigned ms)
{
	clock_gettime(CLOCK_MONOTONIC, out);
	out->tv_sec += ms / 1000;
	out->tv_nsec += (long)(ms % 1000) * 1000000;
	if (out->tv_nsec >= 1000000000) {
		out->tv_sec++;
		out->tv_nsec -= 1000000000;
	}
}

/* BEGIN IMMEDIATE behind the queue: both waited for until busy_ms from
 * now, then -EBUSY (the caller refuses: refused-ledger). */
static int begin(struct ledger *l, struct err *err)
{
	int rc;

	after_ms(&l->deadline, l->busy_ms);
	l->writing = true;
	rc = l->q && !l->queue_off ? ledger_queue_lock(l->q, &l->deadline) : 0;
	if (rc == -ETIMEDOUT) {
		l->writing = false;
		return err_set(err, EBUSY,
			       "ledger: locked for longer than %u ms (another writer of the budget "
			       "holds it)",
			       l->busy_ms);
	}
	/* Any other failure of the queue (ENOTRECOVERABLE, EINVAL: a file
	 * someone wrote over): this transaction goes without it, as the
	 * ledger did before the queue; SQLite's lock still excludes. */
	rc = sqlite3_exec(l->db, "BEGIN IMMEDIATE", NULL, NULL, NULL);
	if (rc != SQLITE_OK) {
		rc = sql_err(l, rc, err, "begin");
		finish(l);
		return rc;
	}
	return 0;
}

/* COMMIT: SQLITE_OK (the transaction and the queue ended) or the error
 * (the caller rolls back). */
static int commit(struct ledger *l)
{
	int rc = sqlite3_exec(l->db, "COMMIT", NULL, NULL, NULL);

	if (rc == SQLITE_OK)
		finish(l);
	return rc;
}

static void rollback(struct ledger *l)
{
	(void)sqlite3_exec(l->db, "ROLLBACK", NULL, NULL, NULL);
	finish(l);
}

/* The file, made 0600 if new; refused unless it is a regular file of ours
 * with no group or other bits, not a symlink, in a directory of ours that
 * only we can write. */
static int check_file(const char *dir, const char *path, struct err *err)
{
	struct stat st;
	int fd;

	if (lstat(dir, &st) < 0)
		return err_sys(err, errno, "ledger: %s", dir);
	if (!S_ISDIR(st.st_mode) || st.st_uid != geteuid() || (st.st_mode & 022))
		return err_set(err, EPERM,
			       "ledger: %s: must be a directory of ours (uid %u) that only we can "
			       "write",
			       dir, (unsigned)geteuid());
	fd = ledger_private_open(path, err);
	if (fd < 0)
		return fd;
	close(fd);
	return 0;
}

/* PRAGMA journal_mode=WAL, which the first opener of a new file makes
 * persistent. It needs the file's exclusive lock, and where another
 * connection holds a shared one (two sessions' mediators opening the same
 * new budget at once) SQLite answers SQLITE_BUSY without calling the busy
 * handler: a CI run's two_sessions_share_one_cap saw "PRAGMA
 * journal_mode=WAL: database is locked" (refused-ledger) about once in 60.
 * So behind the writers' queue, and retried until busy_ms. */
static int wal_mode(struct ledger *l, struct err *err)
{
	struct timespec end, now;
	bool queued;
	int rc;

	after_ms(&end, l->busy_ms);
	queued = l->q && ledger_queue_lock(l->q, &end) == 0;
	for (unsigned us = 50;; us = us < 1600 ? 2 * us : us) {
		rc = exec(l, "PRAGMA journal_mode=WAL", err);
		clock_gettime(CLOCK_MONOTONIC, &now);
		if (rc != -EBUSY || now.tv_sec > end.tv_sec ||
		    (now.tv_sec == end.tv_sec && now.tv_nsec >= end.tv_nsec))
			break;
		usleep(us);
	}
	if (queued)
		ledger_queue_unlock(l->q);
	return rc;
}

int ledger_open(const char *dir, const char *budget, unsigned busy_ms, struct ledger **out,
		struct err *err)
{
	char path[PATH_MAX];
	struct ledger *l;
	int rc;

	if (!policy_budget_id_valid(budget))
		return err_set(err, EINVAL, "ledger: %s is not a budget id", budget);
	if (snprintf(path, sizeof(path), "%s/%s.sqlite", dir, budget) >= (int)sizeof(path))
		return err_set(err, ENAMETOOLONG, "ledger: %s: path too long", dir);
	rc = check_file(dir, path, err);
	if (rc < 0)
		return rc;
	l = calloc(1, sizeof(*l));
	if (!l)
		return err_set(err, ENOMEM, "out of memory");
	l->wal_fd = -1;
	{
		char boot[40];

		boot_id(boot);
		snprintf(l->owner, sizeof(l->owner), "%ld:%llu:%s", (long)getpid(),
			 start_time(getpid()), boot);
	}
	rc = sqlite3_open_v2(path, &l->db,
			     SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOFOLLOW | SQLITE_OPEN_FULLMUTEX,
			     NULL);
	if (rc != SQLITE_OK) {
		rc = sql_err(l, rc, err, path);
		ledger_close(l);
		return rc;
	}
	l->busy_ms = busy_ms;
	sqlite3_busy_handler(l->db, busy, l);
	sqlite3_wal_hook(l->db, wal_hook, l);
	{
		char qpath[PATH_MAX + 8], boot[40];

		boot_id(boot);
		snprintf(qpath, sizeof(qpath), "%s-queue", path);
		rc = ledger_queue_open(qpath, boot, &l->q, err);
		if (rc < 0) {
			ledger_close(l);
			return rc;
		}
	}
	snprintf(l->wal, sizeof(l->wal), "%s-wal", path);
	{
		/* The WAL stays when a connection closes (no connection of
		 * ours removes the file another one's flush descriptor names;
		 * flush() still checks). */
		int one = 1;

		(void)sqlite3_file_control(l->db, "main", SQLITE_FCNTL_PERSIST_WAL, &one);
	}
	/* journal_mode=WAL is persistent and needs the lock briefly; the
	 * rest holds for this connection. */
	rc = wal_mode(l, err);
	if (rc >= 0)
		rc = exec(l, "PRAGMA synchronous=NORMAL; PRAGMA foreign_keys=ON", err);
	if (rc >= 0)
		rc = begin(l, err);
	if (rc >= 0) {
		rc = exec(l, schema, err);
		if (rc >= 0)
			rc = exec(l, "INSERT OR IGNORE INTO meta VALUES ('version', '1')", err);
		if (rc >= 0 && commit(l) != SQLITE_OK)
			rc = sql_err(l, SQLITE_ERROR, err, "commit");
		if (rc < 0)
			rollback(l);
	}
	if (rc < 0) {
		ledger_close(l);
		return rc;
	}
	*out = l;
	return 0;
}

void ledger_close(struct ledger *l)
{
	if (!l)
		return;
	if (l->wal_fd >= 0)
		close(l->wal_fd);
	ledger_queue_close(l->q);
	for (size_t c = 0; c < sizeof(l->cache) / sizeof(l->cache[0]); c++)
		sqlite3_finalize(l->cache[c].st);
	sqlite3_close_v2(l->db);
	free(l);
}

/* sql prepared into *st with its parameters bound to the values ('i' an
 * int64_t, 't' a string or NULL). SQLITE_OK or the error. */
static int vprep(struct ledger *l, sqlite3_stmt **st, const char *sql, const char *types,
		 va_list ap)
{
	size_t c;
	int rc = SQLITE_OK;

	for (c = 0; c < sizeof(l->cache) / sizeof(l->cache[0]); c++)
		if (!l->cache[c].sql || l->cache[c].sql == sql)
			break;
	if (c < sizeof(l->cache) / sizeof(l->cache[0]) && l->cache[c].sql) {
		*st = l->cache[c].st;
	} else {
		rc = sqlite3_prepare_v3(l->db, sql, -1, SQLITE_PREPARE_PERSISTENT, st, NULL);
		if (rc == SQLITE_OK && c < sizeof(l->cache) / sizeof(l->cache[0])) {
			l->cache[c].sql = sql;
			l->cache[c].st = *st;
		}
	}

	for (int i = 0; rc == SQLITE_OK && types[i]; i++) {
		if (types[i] == 'i') {
			rc = sqlite3_bind_int64(*st, i + 1, va_arg(ap, int64_t));
		} else {
			const char *s = va_arg(ap, const char *);

			rc = s ? sqlite3_bind_text(*st, i + 1, s, -1, SQLITE_TRANSIENT)
			       : sqlite3_bind_null(*st, i + 1);
		}
	}
	return rc;
}

/* A statement of vprep() done with: reset for its next use if it is
 * cached, else finalized. */
static void done(struct ledger *l, sqlite3_stmt *st)
{
	for (size_t c = 0; st && c < sizeof(l->cache) / sizeof(l->cache[0]); c++)
		if (l->cache[c].st == st) {
			sqlite3_reset(st);
			sqlite3_clear_bindings(st);
			return;
		}
	sqlite3_finalize(st);
}

/* One statement stepped once, for its first row: SQLITE_ROW or
 * SQLITE_DONE, or the error; *st is the caller's to done(). */
static int step(struct ledger *l, sqlite3_stmt **st, const char *sql, const char *types, ...)
{
	va_list ap;
	int rc;

	va_start(ap, types);
	rc = vprep(l, st, sql, types, ap);
	va_end(ap);
	return rc == SQLITE_OK ? sqlite3_step(*st) : rc;
}

static int vrun(struct ledger *l, const char *sql, const char *types, va_list ap)
{
	sqlite3_stmt *st = NULL;
	int rc = vprep(l, &st, sql, types, ap);

	if (rc == SQLITE_OK)
		rc = sqlite3_step(st);
	done(l, st);
	return rc == SQLITE_DONE || rc == SQLITE_ROW ? SQLITE_OK : rc;
}

/* A statement with no row to read: SQLITE_OK or the error. */
static int run(struct ledger *l, const char *sql, const char *types, ...)
{
	va_list ap;
	int rc;

	va_start(ap, types);
	rc = vrun(l, sql, types, ap);
	va_end(ap);
	return rc;
}

/* One UPDATE of row id, in its own transaction, that must change exactly
 * that row (its WHERE names the state it leaves: a row ends at most once,
 * as a TigerBeetle pending transfer does): 0, -ENOENT ("operation ID is
 * not FROM"), or the error of what. */
static int change_one(struct ledger *l, int64_t id, const char *from, const char *what,
		      struct err *err, const char *sql, const char *types, ...)
{
	va_list ap;
	int rc = begin(l, err);

	if (rc < 0)
		return rc;
	va_start(ap, types);
	rc = vrun(l, sql, types, ap);
	va_end(ap);
	if (rc == SQLITE_OK && sqlite3_changes(l->db) != 1)
		rc = SQLITE_NOTFOUND;
	if (rc == SQLITE_OK)
		rc = commit(l);
	if (rc == SQLITE_OK)
		return 0;
	rollback(l);
	return rc == SQLITE_NOTFOUND
		   ? err_set(err, ENOENT, "ledger: operation %lld is not %s", (long long)id, from)
		   : sql_err(l, rc, err, what);
}

static int held(struct ledger *l, bool settled_only, int64_t *out)
{
	sqlite3_stmt *st = NULL;
	int rc = step(l, &st, settled_only ? "SELECT settled FROM totals" : held_sql, "");

	if (rc == SQLITE_ROW) {
		*out = sqlite3_column_int64(st, 0);
		rc = SQLITE_OK;
	}
	done(l, st);
	return rc;
}

void ledger_commit_sync(struct ledger *l)
{
	l->commit_sync = true;
	(void)exec(l, "PRAGMA synchronous=FULL", NULL);
}

void ledger_queue_off(struct ledger *l)
{
	l->queue_off = true;
	/* and SQLite's own checkpoint inside COMMIT, as before the queue */
	(void)sqlite3_wal_autocheckpoint(l->db, 1000);
}

unsigned long ledger_busy_waits(const struct ledger *l)
{
	return l->busy_waits;
}

int ledger_queue_hold(struct ledger *l, unsigned ms)
{
	struct timespec until;

	after_ms(&until, ms);
	return ledger_queue_lock(l->q, &until);
}

void ledger_queue_release(struct ledger *l)
{
	ledger_queue_unlock(l->q);
}

/* The WAL on disk up to (at least) the commit just made, by this
 * connection's own fdatasync() outside the write lock (see the top). A
 * WAL removed meanwhile (nlink 0: its connection checkpointed it into
 * the database and synced that first) is reopened and flushed again, in
 * case the commit went into the new one. */
static int flush(struct ledger *l, struct err *err)
{
	struct stat st;

	if (l->commit_sync)
		return 0;
	for (int tries = 0; tries < 2; tries++) {
		if (l->wal_fd < 0)
			l->wal_fd = open(l->wal, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NOCTTY);
		if (l->wal_fd < 0)
			return err_sys(err, errno, "ledger: %s", l->wal);
		if (fdatasync(l->wal_fd) < 0)
			return err_sys(err, errno, "ledger: flush %s", l->wal);
		if (fstat(l->wal_fd, &st) == 0 && st.st_nlink > 0)
			return 0;
		close(l->wal_fd);
		l->wal_fd = -1;
	}
	return err_set(err, EIO, "ledger: %s keeps being replaced", l->wal);
}

int ledger_reserve(struct ledger *l, const struct ledger_request *rq, int64_t *id, struct err *err)
{
	sqlite3_stmt *st = NULL;
	int64_t have = 0;
	int rc, verdict = LEDGER_OK;

	rc = begin(l, err);
	if (rc < 0)
		return rc;
	/* A replay of an operation (same key) whose earlier attempt is
	 * still reserved (in flight, here or in another session) or unknown
	 * is not dispatched again; nor is one a receiver's receipt settled
	 * (a lookup: the workload never saw its answer). */
	if (rq->op_key) {
		rc = step(
		    l, &st,
		    "SELECT id, state FROM ops WHERE op_key = ?1 AND (state IN "
		    "('reserved','unknown') OR (state = 'settled' AND source = 'lookup')) "
		    "ORDER BY state = 'unknown' DESC, state = 'reserved' DESC, id DESC LIMIT 1",
		    "t", rq->op_key);
		if (rc == SQLITE_ROW) {
			const char *state = (const char *)sqlite3_column_text(st, 1);

			*id = sqlite3_column_int64(st, 0);
			verdict = !strcmp(state, "unknown")    ? LEDGER_UNKNOWN
				  : !strcmp(state, "reserved") ? LEDGER_IN_FLIGHT
							       : LEDGER_RECEIPT;
		}
		done(l, st);
		st = NULL;
		if (rc != SQLITE_ROW && rc != SQLITE_DONE)
			goto fail;
		if (verdict != LEDGER_OK) {
			rollback(l);
			return verdict;
		}
	}
	/* check_then_charge (--weaken check-then-charge): what LiteLLM's
	 * session budget does; only settled charges are read, and nothing is
	 * reserved, so concurrent attempts all see the same remainder. */
	rc = held(l, rq->check_then_charge, &have);
	if (rc != SQLITE_OK)
		goto fail;
	if ((uint64_t)have > rq->cap || rq->bound > rq->cap - (uint64_t)have) {
		rollback(l);
		return LEDGER_CAP;
	}
	rc = run(l, "INSERT OR REPLACE INTO caps VALUES (?1, ?2, ?3, ?4)", "titi", rq->budget,
		 (int64_t)rq->cap, rq->session, now_wall_ms());
	if (rc == SQLITE_OK)
		rc = run(l,
			 "INSERT INTO ops(op_key, session, owner, route, bound, state, created) "
			 "VALUES (?1, ?2, ?3, ?4, ?5, 'reserved', ?6)",
			 "ttttii", rq->op_key, rq->session, l->owner, rq->route,
			 (int64_t)(rq->check_then_charge ? 0 : rq->bound), now_wall_ms());
	if (rc != SQLITE_OK)
		goto fail;
	*id = sqlite3_last_insert_rowid(l->db);
	rc = commit(l);
	if (rc != SQLITE_OK)
		goto fail;
	/* Not dispatched before it is durable. A failed flush leaves the
	 * row's fate to the disk: it is released (never sent) in a commit
	 * that, if it lands at all, lands after the reservation. */
	rc = flush(l, err);
	if (rc < 0) {
		(void)ledger_release(l, *id, "not-sent", NULL);
		return rc;
	}
	return LEDGER_OK;
fail:
	rc = sql_err(l, rc, err, "reserve");
	rollback(l);
	return rc;
}

/* One row's end: from state 'reserved' only. */
static int end(struct ledger *l, int64_t id, const char *state, const char *source,
	       const int64_t *charge, struct err *err)
{
	return charge
		   ? change_one(l, id, "reserved", "settle", err,
				"UPDATE ops SET state = ?1, source = ?2, charge = ?3, ended = ?4 "
				"WHERE id = ?5 AND state = 'reserved'",
				"ttiii", state, source, *charge, now_wall_ms(), id)
		   : change_one(l, id, "reserved", "settle", err,
				"UPDATE ops SET state = ?1, source = ?2, ended = ?3 "
				"WHERE id = ?4 AND state = 'reserved'",
				"ttii", state, source, now_wall_ms(), id);
}

int ledger_settle(struct ledger *l, int64_t id, uint64_t charge, const char *source,
		  struct err *err)
{
	int64_t c = (int64_t)charge;

	return end(l, id, "settled", source, &c, err);
}

int ledger_unknown(struct ledger *l, int64_t id, struct err *err)
{
	return end(l, id, "unknown", "no-response", NULL, err);
}

int ledger_release(struct ledger *l, int64_t id, const char *source, struct err *err)
{
	return end(l, id, "released", source, NULL, err);
}

/* An unknown row settled by the receiver's word (source: a lookup's
 * receipt, a job's status): with its stated charge, or the bound when it
 * states none (never a guess lower). */
static int settle_unknown(struct ledger *l, int64_t id, const char *source, bool stated,
			  uint64_t charge, struct err *err)
{
	return stated ? change_one(l, id, "unknown", source, err,
				   "UPDATE ops SET state = 'settled', source = ?1, charge = ?2, "
				   "ended = ?3 WHERE id = ?4 AND state = 'unknown'",
				   "tiii", source, (int64_t)charge, now_wall_ms(), id)
		      : change_one(l, id, "unknown", source, err,
				   "UPDATE ops SET state = 'settled', source = ?1, "
				   "charge = bound, ended = ?2 WHERE id = ?3 AND state = 'unknown'",
				   "tii", source, now_wall_ms(), id);
}

int ledger_lookup_settle(struct ledger *l, int64_t id, bool stated, uint64_t charge,
			 struct err *err)
{
	return settle_unknown(l, id, "lookup", stated, charge, err);
}

int ledger_lookup_claim(struct ledger *l, int64_t id, const struct ledger_request *rq,
			uint64_t *bound, struct err *err)
{
	sqlite3_stmt *st = NULL;
	int64_t have = 0, b0 = 0;
	int rc = begin(l, err);

	if (rc < 0)
		return rc;
	rc = step(l, &st, "SELECT bound FROM ops WHERE id = ?1 AND state = 'unknown'", "i", id);
	if (rc == SQLITE_ROW)
		b0 = sqlite3_column_int64(st, 0);
	done(l, st);
	if (rc == SQLITE_DONE) {
		rollback(l);
		return err_set(err, ENOENT, "ledger: operation %lld is not unknown", (long long)id);
	}
	if (rc != SQLITE_ROW)
		goto fail;
	/* The replay's bound may be larger than the first attempt's: the
	 * difference must fit what is left, as a reservation's would. */
	if ((uint64_t)b0 < rq->bound) {
		rc = held(l, false, &have);
		if (rc != SQLITE_OK)
			goto fail;
		if ((uint64_t)have > rq->cap ||
		    rq->bound - (uint64_t)b0 > rq->cap - (uint64_t)have) {
			rollback(l);
			return LEDGER_CAP;
		}
		b0 = (int64_t)rq->bound;
	}
	rc = run(l,
		 "UPDATE ops SET state = 'reserved', owner = ?1, session = ?2, bound = ?3, "
		 "source = NULL, ended = NULL WHERE id = ?4",
		 "ttii", l->owner, rq->session, b0, id);
	if (rc == SQLITE_OK)
		rc = commit(l);
	*bound = (uint64_t)b0;
	if (rc != SQLITE_OK)
		goto fail;
	return flush(l, err); /* dispatched next: durable first */
fail:
	rc = sql_err(l, rc, err, "lookup");
	rollback(l);
	return rc;
}

int ledger_recover(struct ledger *l, unsigned *count, struct err *err)
{
	sqlite3_stmt *st = NULL;
	int rc;

	*count = 0;
	rc = begin(l, err);
	if (rc < 0)
		return rc;
	rc = sqlite3_prepare_v2(l->db, "SELECT id, owner FROM ops WHERE state = 'reserved'", -1,
				&st, NULL);
	while (rc == SQLITE_OK && (rc = sqlite3_step(st)) == SQLITE_ROW) {
		const char *owner = (const char *)sqlite3_column_text(st, 1);

		rc = SQLITE_OK;
		if (owner_alive(owner))
			continue;
		/* Its mediator is gone: whether the request went out is not
		 * known, so the bound stays held. */
		rc = run(l,
			 "UPDATE ops SET state = 'unknown', source = 'recovered', ended = ?1 "
			 "WHERE id = ?2",
			 "ii", now_wall_ms(), sqlite3_column_int64(st, 0));
		if (rc != SQLITE_OK)
			break;
		(*count)++;
	}
	sqlite3_finalize(st);
	if (rc == SQLITE_DONE)
		rc = commit(l);
	if (rc != SQLITE_OK && rc != SQLITE_DONE) {
		rollback(l);
		return sql_err(l, rc, err, "recover");
	}
	return 0;
}

int ledger_operator_settle(struct ledger *l, int64_t id, uint64_t charge, struct err *err)
{
	int rc =
	    change_one(l, id, "unknown (only an unknown one is settled by hand)", "settle", err,
		       "UPDATE ops SET state = 'settled', source = 'operator', charge = ?1, "
		       "ended = ?2 WHERE id = ?3 AND state = 'unknown'",
		       "iii", (int64_t)charge, now_wall_ms(), id);

	return rc < 0 ? rc : flush(l, err); /* the operator is told it is done */
}

int ledger_job_note(struct ledger *l, int64_t id, const struct ledger_job *jb, struct err *err)
{
	int rc = begin(l, err);

	if (rc < 0)
		return rc;
	rc = run(l,
		 "INSERT OR REPLACE INTO jobs(op, job, admission, host, port, address, status, "
		 "outlive, session_end) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, NULL)",
		 "itttitti", id, jb->job, jb->admission, jb->host, (int64_t)jb->port, jb->address,
		 jb->status, (int64_t)jb->outlive);
	if (rc == SQLITE_OK)
		rc = commit(l);
	if (rc == SQLITE_OK)
		return 0;
	rollback(l);
	return sql_err(l, rc, err, "job");
}

int ledger_job_end(struct ledger *l, int64_t id, const char *session_end, struct err *err)
{
	return change_one(l, id, "a job", "job", err,
			  "UPDATE jobs SET session_end = ?1 WHERE op = ?2", "ti", session_end, id);
}

int ledger_job_settle(struct ledger *l, int64_t id, bool stated, uint64_t charge, struct err *err)
{
	int rc = settle_unknown(l, id, "job-status", stated, charge, err);

	return rc < 0 ? rc : flush(l, err); /* the operator is told it is done */
}

int ledger_each_job(struct ledger *l, ledger_each_job_fn fn, void *arg, struct err *err)
{
	sqlite3_stmt *st = NULL;
	int rc = sqlite3_prepare_v2(
	    l->db,
	    "SELECT o.id, o.session, o.owner, o.state, o.bound, j.job, j.admission, j.host, "
	    "j.port, j.address, j.status, j.outlive, COALESCE(j.session_end, '') "
	    "FROM jobs j JOIN ops o ON o.id = j.op ORDER BY o.id",
	    -1, &st, NULL);

	while (rc == SQLITE_OK && (rc = sqlite3_step(st)) == SQLITE_ROW) {
		const char *owner = (const char *)sqlite3_column_text(st, 2);
		struct ledger_job jb = {
		    .job = (const char *)sqlite3_column_text(st, 5),
		    .admission = (const char *)sqlite3_column_text(st, 6),
		    .host = (const char *)sqlite3_column_text(st, 7),
		    .port = (uint16_t)sqlite3_column_int(st, 8),
		    .address = (const char *)sqlite3_column_text(st, 9),
		    .status = (const char *)sqlite3_column_text(st, 10),
		    .outlive = sqlite3_column_int(st, 11) != 0,
		    .session_end = (const char *)sqlite3_column_text(st, 12),
		};
		struct ledger_op op = {
		    .id = sqlite3_column_int64(st, 0),
		    .session = (const char *)sqlite3_column_text(st, 1),
		    .state = (const char *)sqlite3_column_text(st, 3),
		    .bound = (uint64_t)sqlite3_column_int64(st, 4),
		};

		fn(&op, &jb, owner_alive(owner), arg);
		rc = SQLITE_OK;
	}
	sqlite3_finalize(st);
	return rc == SQLITE_DONE ? 0 : sql_err(l, rc, err, "read");
}

int ledger_totals(struct ledger *l, struct ledger_totals *t, struct err *err)
{
	sqlite3_stmt *st = NULL;
	int rc;

	memset(t, 0, sizeof(*t));
	rc = step(l, &st,
		  "SELECT COALESCE(SUM(CASE WHEN state = 'reserved' THEN bound END), 0),"
		  " COALESCE(SUM(CASE WHEN state = 'unknown' THEN bound END), 0),"
		  " COALESCE(SUM(CASE WHEN state = 'settled' THEN charge END), 0),"
		  " COUNT(*), COALESCE(SUM(state = 'unknown'), 0),"
		  " (SELECT cap FROM caps LIMIT 1) FROM ops",
		  "");
	if (rc == SQLITE_ROW) {
		t->reserved = (uint64_t)sqlite3_column_int64(st, 0);
		t->unknown = (uint64_t)sqlite3_column_int64(st, 1);
		t->settled = (uint64_t)sqlite3_column_int64(st, 2);
		t->ops = (uint64_t)sqlite3_column_int64(st, 3);
		t->n_unknown = (uint64_t)sqlite3_column_int64(st, 4);
		t->has_cap = sqlite3_column_type(st, 5) != SQLITE_NULL;
		t->cap = (uint64_t)sqlite3_column_int64(st, 5);
		rc = SQLITE_OK;
	}
	done(l, st);
	return rc == SQLITE_OK ? 0 : sql_err(l, rc, err, "totals");
}

int ledger_each(struct ledger *l, ledger_each_fn fn, void *arg, struct err *err)
{
	sqlite3_stmt *st = NULL;
	int rc = sqlite3_prepare_v2(l->db,
				    "SELECT id, COALESCE(op_key, ''), session, route, bound, "
				    "charge, state, COALESCE(source, ''), created, ended "
				    "FROM ops ORDER BY id",
				    -1, &st, NULL);

	while (rc == SQLITE_OK && (rc = sqlite3_step(st)) == SQLITE_ROW) {
		struct ledger_op op = {
		    .id = sqlite3_column_int64(st, 0),
		    .op_key = (const char *)sqlite3_column_text(st, 1),
		    .session = (const char *)sqlite3_column_text(st, 2),
		    .route = (const char *)sqlite3_column_text(st, 3),
		    .bound = (uint64_t)sqlite3_column_int64(st, 4),
		    .has_charge = sqlite3_column_type(st, 5) != SQLITE_NULL,
		    .charge = (uint64_t)sqlite3_column_int64(st, 5),
		    .state = (const char *)sqlite3_column_text(st, 6),
		    .source = (const char *)sqlite3_column_text(st, 7),
		    .created_ms = sqlite3_column_int64(st, 8),
		    .ended_ms = sqlite3_column_int64(st, 9),
		};

		fn(&op, arg);
		rc = SQLITE_OK;
	}
	sqlite3_finalize(st);
	return rc == SQLITE_DONE ? 0 : sql_err(l, rc, err, "read");
}

int ledger_check(struct ledger *l, struct err *err)
{
	sqlite3_stmt *st = NULL;
	int rc = step(l, &st, "PRAGMA integrity_check", "");
	bool ok = rc == SQLITE_ROW && strcmp((const char *)sqlite3_column_text(st, 0), "ok") == 0;

	done(l, st);
	if (!ok)
		return err_set(err, EIO, "ledger: integrity_check failed");
	/* The ledger's own invariant: the totals a reservation reads are
	 * the sums of the rows. */
	st = NULL;
	rc = step(l, &st,
		  "SELECT (SELECT live FROM totals) = COALESCE(SUM(" LIVE(
		      "ops") "), 0) AND "
			     "(SELECT settled FROM totals) = COALESCE(SUM(" SETTLED(
				 "ops") "), 0) FROM ops",
		  "");
	ok = rc == SQLITE_ROW && sqlite3_column_int(st, 0) == 1;
	done(l, st);
	if (!ok)
		return err_set(err, EIO, "ledger: the totals are not the sums of the operations");
	return 0;
}
