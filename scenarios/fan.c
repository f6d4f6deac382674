/* The fanotify event observer (fan.h).
 *
 * Threads: the reader reads the group, answers permission events and keeps
 * write events; the watchdog (permission mode only) answers any permission
 * event the reader has not answered within FAN_ANSWER_BUDGET_MS, and when
 * the reader has been inside one batch for FAN_STALL_MS it reads and
 * allows the queue itself (those events are lost and counted). Neither
 * thread ever opens a file on a watched filesystem (only /proc and the
 * event fds the kernel gives us, which raise no events): an open there
 * from the reader would wait for the reader. Callers never hold o->lock;
 * they copy out through fan_event_at() and fan_health(). */
#include "fan.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/fanotify.h>
#include <sys/pidfd.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "../include/cleanup.h"
#include "observe.h"

#define NOTE_MASK (FAN_MODIFY | FAN_CLOSE_WRITE)
#define PERM_MASK (FAN_OPEN_PERM | NOTE_MASK)

/* A permission answer normally takes tens of microseconds (four small
 * /proc reads). Past this budget the watchdog allows the open without the
 * identity rather than hold the workload longer. */
#define FAN_ANSWER_BUDGET_MS 200
#define FAN_STALL_MS	     1000
#define FAN_WATCHDOG_TICK_MS 20
#define FAN_STOP_MS	     3000
#define FAN_OPENS_CAP	     4096
#define FAN_BATCH	     8192
/* A batch of FAN_BATCH bytes holds at most this many events (FAN_EVENT_OK
 * needs FAN_EVENT_METADATA_LEN bytes each), so every permission event of a
 * batch has a slot. */
#define FAN_PEND_MAX (FAN_BATCH / FAN_EVENT_METADATA_LEN + 1)

struct pend {
	int fd;
	long long t_ns;
	bool answered;
};

struct fan_observer {
	int fd;
	int stop_pipe[2]; /* reader */
	int wd_pipe[2];	  /* watchdog */
	pthread_t reader, watchdog;
	bool reader_up, watchdog_up;
	bool permission, pidfd, broken;
	bool cursor_ok; /* ns_last_pid readable: reaped writers can be attributed */
	pid_t self;
	char mode[200];
	char root[PATH_MAX];
	dev_t own_dev[4]; /* filesystems marked that hold nothing but the fixture */
	size_t n_own;

	/* The reader's alone: matching needs no lock. */
	struct fan_opens opens;
	unsigned long long seq;

	/* Answers, shared with the watchdog. */
	pthread_mutex_t resp_lock;
	struct pend pend[FAN_PEND_MAX];
	size_t n_pend;
	long max_answer_us;
	atomic_llong busy_since_ns; /* the reader is inside a batch since; 0 idle */
	atomic_int reader_done;
	atomic_size_t n_perm, n_late, n_gone, n_resp_err, n_wd_lost;

	/* Results, shared with the caller. */
	pthread_mutex_t lock;
	struct fan_event ev[FAN_MAX_EVENTS];
	size_t n, dropped, overflow, n_opens, n_evicted;
	unsigned long seq_sent; /* sentinel files written by fan_sync() */
	unsigned long seq_seen; /* highest sentinel number whose write was seen */
};

static long long now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

/* The pid allocator's cursor in our pid namespace (the last pid handed
 * out), -1 when unreadable. procfs: never a watched filesystem. */
static long pid_cursor(void)
{
	cleanup_close int fd = open("/proc/sys/kernel/ns_last_pid", O_RDONLY | O_CLOEXEC);
	char buf[32];
	ssize_t k;

	if (fd < 0)
		return -1;
	k = read(fd, buf, sizeof(buf) - 1);
	if (k <= 0)
		return -1;
	buf[k] = '\0';
	return strtol(buf, NULL, 10);
}

/* Identity of pid from /proc; false when it is gone or a zombie (no exe). */
static bool read_ident(pid_t pid, struct fan_ident *id)
{
	char path[64];
	struct proc_entry pe;
	ssize_t k;

	memset(id, 0, sizeof(*id));
	id->pid = pid;
	snprintf(path, sizeof(path), "/proc/%d/exe", (int)pid);
	k = readlink(path, id->exe, sizeof(id->exe) - 1);
	id->exe[k > 0 ? k : 0] = '\0';
	if (k <= 0 || inventory_read(pid, &pe) < 0)
		return false;
	id->start = pe.start;
	id->uid = pe.uid;
	id->sid = pe.sid;
	id->pidns = pe.pidns;
	return true;
}

/* The event's pidfd info record: an fd, FAN_NOPIDFD or FAN_EPIDFD (the
 * process was reaped before the event was read); FAN_NOPIDFD without one. */
static int event_pidfd(const struct fanotify_event_metadata *m)
{
	size_t off = m->metadata_len;

	while (off + sizeof(struct fanotify_event_info_header) <= m->event_len) {
		const struct fanotify_event_info_header *h = (const void *)((const char *)m + off);

		if (h->len == 0)
			break;
		if (h->info_type == FAN_EVENT_INFO_TYPE_PIDFD &&
		    off + sizeof(struct fanotify_event_info_pidfd) <= m->event_len)
			return ((const struct fanotify_event_info_pidfd *)h)->pidfd;
		off += h->len;
	}
	return FAN_NOPIDFD;
}

/* The process behind pidfd has not been reaped, so its pid is still its. */
static bool pidfd_alive(int pidfd)
{
	return pidfd >= 0 && pidfd_send_signal(pidfd, 0, NULL, 0) == 0;
}

/* Read identity and prove it is the event's process: by its pidfd after
 * the read, or without pidfds by the start time read twice. */
static bool read_verified(struct fan_observer *o, pid_t pid, int pidfd, struct fan_ident *id)
{
	struct proc_entry pe;

	if (!read_ident(pid, id))
		return false;
	if (o->pidfd)
		return pidfd_alive(pidfd);
	return inventory_read(pid, &pe) == 0 && pe.start == id->start;
}

/* Never FAN_DENY: this observer watches, it does not enforce. A denial
 * here would make the harness part of the boundary it measures (and
 * could turn a weakened arm's write into a refusal that looks like
 * enforcement). Called with resp_lock held. */
static void allow_locked(struct fan_observer *o, int fd)
{
	struct fanotify_response r = {.fd = fd, .response = FAN_ALLOW};

	/* ENOENT: the kernel no longer waits for it (the opener was killed). */
	if (write(o->fd, &r, sizeof(r)) != (ssize_t)sizeof(r))
		atomic_fetch_add(&o->n_resp_err, 1);
}

/* Answer pend[i] unless the watchdog did; true when we did. */
static bool answer(struct fan_observer *o, size_t i)
{
	bool ours = false;

	pthread_mutex_lock(&o->resp_lock);
	if (!o->pend[i].answered) {
		long us = (long)((now_ns() - o->pend[i].t_ns) / 1000);

		allow_locked(o, o->pend[i].fd);
		o->pend[i].answered = ours = true;
		if (us > o->max_answer_us)
			o->max_answer_us = us;
	}
	pthread_mutex_unlock(&o->resp_lock);
	return ours;
}

#ifdef FAN_TEST_HOOKS
/* Only in tests/integration/fan_stress.c's build: make the first
 * FAN_TEST_SLOW identity reads take FAN_TEST_DELAY_MS each, so that the
 * watchdog has to answer and to drain. */
static void test_delay(void)
{
	static atomic_int left = -1;
	int expect = -1;
	const char *n = getenv("FAN_TEST_SLOW"), *ms = getenv("FAN_TEST_DELAY_MS");

	atomic_compare_exchange_strong(&left, &expect, n ? atoi(n) : 0);
	if (ms && atomic_fetch_sub(&left, 1) > 0) {
		struct timespec ts = {atoi(ms) / 1000, (atoi(ms) % 1000) * 1000000L};

		nanosleep(&ts, NULL);
	}
}
#else
static void test_delay(void)
{
}
#endif

static void handle_perm(struct fan_observer *o, const struct fanotify_event_metadata *m, size_t pi,
			unsigned long long seq, long cursor)
{
	struct fan_open rec = {.seq = seq, .cursor = cursor};
	int pidfd = event_pidfd(m);
	bool got = false, ours;
	struct stat st;

	atomic_fetch_add(&o->n_perm, 1);
	/* The opener waits in open(2) for our answer: read who it is now,
	 * then answer at once; everything else comes after. The harness's
	 * own opens are answered without a look. */
	if (m->pid != o->self && !o->broken) {
		test_delay();
		got = read_verified(o, m->pid, pidfd, &rec.id);
	}
	ours = answer(o, pi);
	if (fstat(m->fd, &st) == 0) {
		rec.dev = st.st_dev;
		rec.ino = st.st_ino;
	}
	close(m->fd);
	if (pidfd >= 0)
		close(pidfd);
	if (m->pid == o->self || o->broken)
		return;
	if (!ours) {
		/* Released before the read ended: the identity may describe
		 * what the process became after it went on. Not recorded. */
		atomic_fetch_add(&o->n_late, 1);
		return;
	}
	if (!got) {
		atomic_fetch_add(&o->n_gone, 1);
		return;
	}
	fan_opens_add(&o->opens, &rec);
	pthread_mutex_lock(&o->lock);
	o->n_opens++;
	o->n_evicted = o->opens.evicted;
	pthread_mutex_unlock(&o->lock);
}

static bool under(const char *path, const char *root)
{
	size_t n = strlen(root);

	return strncmp(path, root, n) == 0 && (path[n] == '/' || path[n] == '\0');
}

/* What /proc says about the writer now; a read the event's pidfd does not
 * confirm is not taken as the writer's. */
static void read_now(struct fan_observer *o, pid_t pid, int pidfd, long cursor, struct fan_now *now)
{
	struct proc_entry pe;

	memset(now, 0, sizeof(*now));
	now->cursor = cursor;
	now->live = read_ident(pid, &now->id);
	if (o->pidfd) {
		now->verified = now->live && pidfd_alive(pidfd);
		now->live = now->verified;
	}
	if (!now->live && inventory_read(pid, &pe) == 0) {
		now->present = true;
		now->start = pe.start;
	}
}

static void handle_note(struct fan_observer *o, const struct fanotify_event_metadata *m,
			unsigned long long seq, long cursor)
{
	struct fan_event e = {.mask = m->mask, .pid = m->pid};
	struct fan_now now = {0};
	struct fan_ident id = {0};
	int pidfd = event_pidfd(m);
	char link[64];
	ssize_t k;
	bool own = false;
	struct stat st;

	if (m->mask & FAN_Q_OVERFLOW) {
		pthread_mutex_lock(&o->lock);
		o->overflow++;
		pthread_mutex_unlock(&o->lock);
	}
	if (m->fd < 0) {
		if (pidfd >= 0)
			close(pidfd);
		return;
	}
	/* Identity first: the writer may exit at any moment. */
	if (m->pid != o->self)
		read_now(o, m->pid, pidfd, cursor, &now);
	if (fstat(m->fd, &st) == 0) {
		e.dev = st.st_dev;
		e.ino = st.st_ino;
	}
	snprintf(link, sizeof(link), "/proc/self/fd/%d", m->fd);
	k = readlink(link, e.path, sizeof(e.path) - 1);
	e.path[k > 0 ? k : 0] = '\0';
	close(m->fd);
	if (pidfd >= 0)
		close(pidfd);
	if (m->pid == o->self) {
		e.how = FAN_HOW_LIVE;
		e.identity_ok = true;
		snprintf(e.exe, sizeof(e.exe), "(paddock-eval)");
	} else {
		e.how = fan_ident_match(&o->opens, m->pid, e.dev, e.ino, seq, &now, &id);
		e.identity_ok = fan_how_identified(e.how);
		if (e.identity_ok) {
			e.start = id.start;
			e.uid = id.uid;
			e.sid = id.sid;
			e.pidns = id.pidns;
			snprintf(e.exe, sizeof(e.exe), "%s", id.exe);
		}
	}
	pthread_mutex_lock(&o->lock);
	for (size_t i = 0; i < o->n_own; i++)
		own |= o->own_dev[i] == e.dev;
	/* Paths are only compared on a shared filesystem; on the fixture's
	 * own tmpfs every event is the fixture's (and the path of a sandbox
	 * mount already torn down can be partial). */
	if (!own && !under(e.path, o->root)) {
		pthread_mutex_unlock(&o->lock);
		return;
	}
	if (strstr(e.path, "/.fan-sentinel-") && m->pid == o->self) {
		unsigned long sn = strtoul(strstr(e.path, "/.fan-sentinel-") + 15, NULL, 10);

		if (sn > o->seq_seen)
			o->seq_seen = sn;
	} else if (o->broken || o->n >= FAN_MAX_EVENTS) {
		o->dropped++;
	} else {
		o->ev[o->n++] = e;
	}
	pthread_mutex_unlock(&o->lock);
}

/* One read of the queue. Permission events first, each answered as soon
 * as its opener is read; then the write events in queue order (seq is the
 * queue position, so a record only serves writes queued after it). */
static void batch(struct fan_observer *o, char *buf)
{
	const struct fanotify_event_metadata *m;
	ssize_t len, left;
	long cursor;
	size_t i, pi;

	atomic_store(&o->busy_since_ns, now_ns());
	len = read(o->fd, buf, FAN_BATCH);
	if (len <= 0) {
		/* EAGAIN: the watchdog took them; EINTR: try again later. */
		atomic_store(&o->busy_since_ns, 0);
		return;
	}
	/* Read while every opener of this batch is still held in open(2),
	 * so each still owns its pid: the cursor records where the
	 * allocator stood then. */
	cursor = o->cursor_ok ? pid_cursor() : -1;
	pthread_mutex_lock(&o->resp_lock);
	o->n_pend = 0;
	left = len;
	for (m = (const void *)buf; FAN_EVENT_OK(m, left); m = FAN_EVENT_NEXT(m, left))
		if ((m->mask & FAN_OPEN_PERM) && m->fd >= 0 && o->n_pend < FAN_PEND_MAX)
			o->pend[o->n_pend++] =
			    (struct pend){.fd = m->fd, .t_ns = now_ns(), .answered = false};
	pthread_mutex_unlock(&o->resp_lock);
	left = len;
	i = pi = 0;
	for (m = (const void *)buf; FAN_EVENT_OK(m, left); m = FAN_EVENT_NEXT(m, left), i++)
		if ((m->mask & FAN_OPEN_PERM) && m->fd >= 0 && pi < FAN_PEND_MAX)
			handle_perm(o, m, pi++, o->seq + i, cursor);
	left = len;
	i = 0;
	for (m = (const void *)buf; FAN_EVENT_OK(m, left); m = FAN_EVENT_NEXT(m, left), i++)
		if (!(m->mask & FAN_OPEN_PERM))
			handle_note(o, m, o->seq + i, cursor);
	o->seq += i;
	pthread_mutex_lock(&o->resp_lock);
	o->n_pend = 0;
	pthread_mutex_unlock(&o->resp_lock);
	atomic_store(&o->busy_since_ns, 0);
}

/* Read and allow everything queued, keeping nothing: shutdown, and the
 * watchdog's rescue of a stalled reader. Returns the events taken. */
static size_t drain(struct fan_observer *o)
{
	char buf[4096] __attribute__((aligned(__alignof__(struct fanotify_event_metadata))));
	size_t taken = 0;

	for (int round = 0; round < 1024; round++) {
		const struct fanotify_event_metadata *m;
		ssize_t len = read(o->fd, buf, sizeof(buf));

		if (len <= 0)
			break;
		for (m = (const void *)buf; FAN_EVENT_OK(m, len); m = FAN_EVENT_NEXT(m, len)) {
			int pidfd = event_pidfd(m);

			if ((m->mask & FAN_OPEN_PERM) && m->fd >= 0) {
				pthread_mutex_lock(&o->resp_lock);
				allow_locked(o, m->fd);
				pthread_mutex_unlock(&o->resp_lock);
			}
			if (m->fd >= 0)
				close(m->fd);
			if (pidfd >= 0)
				close(pidfd);
			taken++;
		}
	}
	return taken;
}

static void *reader(void *arg)
{
	struct fan_observer *o = arg;
	char buf[FAN_BATCH] __attribute__((aligned(__alignof__(struct fanotify_event_metadata))));

	for (;;) {
		struct pollfd p[2] = {{.fd = o->fd, .events = POLLIN},
				      {.fd = o->stop_pipe[0], .events = POLLIN}};

		if (poll(p, 2, -1) < 0 && errno != EINTR)
			break;
		if (p[1].revents)
			break;
		if (p[0].revents & POLLIN)
			batch(o, buf);
	}
	/* Nobody will read results any more; whoever still opens a fixture
	 * file is answered here, and by the group's close after that. */
	drain(o);
	atomic_store(&o->reader_done, 1);
	return NULL;
}

static void *watchdog(void *arg)
{
	struct fan_observer *o = arg;

	for (;;) {
		struct pollfd p = {.fd = o->wd_pipe[0], .events = POLLIN};
		long long t, busy;

		if (poll(&p, 1, FAN_WATCHDOG_TICK_MS) > 0)
			break;
		t = now_ns();
		pthread_mutex_lock(&o->resp_lock);
		for (size_t i = 0; i < o->n_pend; i++) {
			if (o->pend[i].answered ||
			    t - o->pend[i].t_ns < FAN_ANSWER_BUDGET_MS * 1000000LL)
				continue;
			allow_locked(o, o->pend[i].fd);
			o->pend[i].answered = true;
		}
		pthread_mutex_unlock(&o->resp_lock);
		busy = atomic_load(&o->busy_since_ns);
		if (busy && t - busy > FAN_STALL_MS * 1000000LL)
			atomic_fetch_add(&o->n_wd_lost, drain(o));
	}
	return NULL;
}

/* A mount of its own: st_dev differs from its parent's. */
static bool own_fs(const char *path, dev_t *dev)
{
	struct stat a, b;
	char parent[PATH_MAX + 4];

	snprintf(parent, sizeof(parent), "%s/..", path);
	if (stat(path, &a) < 0 || stat(parent, &b) < 0)
		return false;
	*dev = a.st_dev;
	return a.st_dev != b.st_dev;
}

static int group(struct fan_observer *o, unsigned cls)
{
	unsigned flags = cls | FAN_CLOEXEC | FAN_NONBLOCK;

	o->pidfd = true;
	o->fd = fanotify_init(flags | FAN_REPORT_PIDFD, O_RDONLY | O_CLOEXEC | O_LARGEFILE);
	if (o->fd < 0 && errno == EINVAL) {
		/* Before Linux 5.15: no pidfds; start times verify instead. */
		o->pidfd = false;
		o->fd = fanotify_init(flags, O_RDONLY | O_CLOEXEC | O_LARGEFILE);
	}
	return o->fd < 0 ? -errno : 0;
}

/* Permission mode on root's own filesystem; false and why when not. */
static bool try_permission(struct fan_observer *o, const char *root, char *why, size_t n)
{
	const char *force = getenv("PADDOCK_EVAL_FANOTIFY");
	dev_t dev;

	if (force && strcmp(force, "notification") == 0) {
		snprintf(why, n, "forced by PADDOCK_EVAL_FANOTIFY=notification");
		return false;
	}
	if (!own_fs(root, &dev)) {
		snprintf(why, n,
			 "fixture not on a filesystem of its own: holding every opener of "
			 "a shared filesystem would stall the host");
		return false;
	}
	/* FAN_CLASS_CONTENT: the class that may receive permission events
	 * (CAP_SYS_ADMIN; EINVAL without CONFIG_FANOTIFY_ACCESS_PERMISSIONS). */
	if (group(o, FAN_CLASS_CONTENT) < 0) {
		snprintf(why, n, "content-class group refused: %s", strerror(errno));
		return false;
	}
	if (fanotify_mark(o->fd, FAN_MARK_ADD | FAN_MARK_FILESYSTEM, PERM_MASK, AT_FDCWD, root) <
	    0) {
		snprintf(why, n, "FAN_OPEN_PERM mark refused: %s", strerror(errno));
		close(o->fd);
		o->fd = -1;
		return false;
	}
	o->own_dev[o->n_own++] = dev;
	return true;
}

static int start_threads(struct fan_observer *o)
{
	int r;

	if (pipe2(o->stop_pipe, O_CLOEXEC) < 0 || pipe2(o->wd_pipe, O_CLOEXEC) < 0)
		return -errno;
	r = pthread_create(&o->reader, NULL, reader, o);
	if (r)
		return -r;
	o->reader_up = true;
	if (!o->permission)
		return 0; /* nothing waits for a notification-only group */
	r = pthread_create(&o->watchdog, NULL, watchdog, o);
	if (r)
		return -r;
	o->watchdog_up = true;
	return 0;
}

int fan_start(struct fan_observer **out, const char *root, bool broken, char *why, size_t n)
{
	struct fan_observer *o = calloc(1, sizeof(*o));
	char fallback[160] = "";
	int r;

	*out = NULL;
	if (!o) {
		snprintf(why, n, "out of memory");
		return -ENOMEM;
	}
	o->fd = o->stop_pipe[0] = o->stop_pipe[1] = o->wd_pipe[0] = o->wd_pipe[1] = -1;
	o->broken = broken;
	o->self = getpid();
	pthread_mutex_init(&o->lock, NULL);
	pthread_mutex_init(&o->resp_lock, NULL);
	snprintf(o->root, sizeof(o->root), "%s", root);
	o->cursor_ok = pid_cursor() >= 0;
	o->permission = fan_opens_init(&o->opens, FAN_OPENS_CAP) == 0 &&
			try_permission(o, root, fallback, sizeof(fallback));
	if (!o->permission) {
		dev_t dev;

		if (!fallback[0])
			snprintf(fallback, sizeof(fallback), "out of memory for the open table");
		if (group(o, FAN_CLASS_NOTIF) < 0) {
			snprintf(why, n, "fanotify_init: %s (needs CAP_SYS_ADMIN)",
				 strerror(errno));
			r = -errno;
			goto fail;
		}
		if (fanotify_mark(o->fd, FAN_MARK_ADD | FAN_MARK_FILESYSTEM, NOTE_MASK, AT_FDCWD,
				  root) < 0) {
			r = -errno;
			snprintf(why, n, "fanotify_mark filesystem %s: %s", root, strerror(errno));
			goto fail;
		}
		if (own_fs(root, &dev))
			o->own_dev[o->n_own++] = dev;
	}
	if (o->permission)
		snprintf(o->mode, sizeof(o->mode),
			 "permission: FAN_CLASS_CONTENT, FAN_OPEN_PERM|FAN_MODIFY|FAN_CLOSE_WRITE, "
			 "openers held while read, always FAN_ALLOW; pidfd %s%s",
			 o->pidfd ? "yes" : "no", o->cursor_ok ? "" : "; no pid cursor");
	else
		snprintf(o->mode, sizeof(o->mode),
			 "notification: FAN_CLASS_NOTIF, FAN_MODIFY|FAN_CLOSE_WRITE (%s); pidfd %s",
			 fallback, o->pidfd ? "yes" : "no");
	r = start_threads(o);
	if (r < 0) {
		snprintf(why, n, "observer threads: %s", strerror(-r));
		goto fail;
	}
	*out = o;
	return 0;
fail:
	fan_stop(o);
	return r;
}

int fan_add_fs(struct fan_observer *o, const char *path)
{
	dev_t dev;
	bool own = own_fs(path, &dev);
	size_t len = strlen(o->mode);

	if (!own && stat(path, &(struct stat){0}) < 0)
		return -errno;
	if (o->permission && own &&
	    fanotify_mark(o->fd, FAN_MARK_ADD | FAN_MARK_FILESYSTEM, PERM_MASK, AT_FDCWD, path) ==
		0)
		goto added;
	if (o->permission) {
		/* Still watched, but its openers are not held: say so. */
		o->permission = false;
		snprintf(o->mode + len, sizeof(o->mode) - len, "; %s: notification only (%s)", path,
			 own ? strerror(errno) : "not a filesystem of its own");
	}
	if (fanotify_mark(o->fd, FAN_MARK_ADD | FAN_MARK_FILESYSTEM, NOTE_MASK, AT_FDCWD, path) < 0)
		return -errno;
added:
	if (own) {
		pthread_mutex_lock(&o->lock);
		if (o->n_own < sizeof(o->own_dev) / sizeof(o->own_dev[0]))
			o->own_dev[o->n_own++] = dev;
		pthread_mutex_unlock(&o->lock);
	}
	return 0;
}

const char *fan_mode(const struct fan_observer *o)
{
	return o ? o->mode : "";
}

int fan_sync(struct fan_observer *o)
{
	char path[PATH_MAX + 64];
	unsigned long want;
	int fd;

	if (!o || !o->reader_up)
		return -ENOTCONN;
	want = ++o->seq_sent;
	snprintf(path, sizeof(path), "%s/.fan-sentinel-%lu", o->root, want);
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (fd < 0)
		return -errno;
	if (write(fd, "s", 1) < 0) {
		close(fd);
		return -errno;
	}
	close(fd);
	for (int i = 0; i < 400; i++) {
		unsigned long seen;
		struct timespec ts = {0, 5 * 1000 * 1000};

		pthread_mutex_lock(&o->lock);
		seen = o->seq_seen;
		pthread_mutex_unlock(&o->lock);
		/* modify and close_write may merge or come apart: at least one. */
		if (seen >= want) {
			unlink(path);
			return 0;
		}
		nanosleep(&ts, NULL);
	}
	unlink(path);
	return -ETIMEDOUT;
}

static void close_pipe(int p[2])
{
	for (int i = 0; i < 2; i++)
		if (p[i] >= 0)
			close(p[i]);
	p[0] = p[1] = -1;
}

int fan_stop(struct fan_observer *o)
{
	if (!o)
		return 0;
	if (o->reader_up) {
		struct timespec dl;

		if (write(o->stop_pipe[1], "x", 1) < 0) {
			/* Our own empty pipe: cannot fail short of EBADF. */
		}
		clock_gettime(CLOCK_REALTIME, &dl);
		dl.tv_sec += FAN_STOP_MS / 1000;
		if (pthread_timedjoin_np(o->reader, NULL, &dl) != 0) {
			/* A reader stuck in the kernel: leave the object (and the
			 * watchdog, which keeps answering) to the process's exit;
			 * freeing it would pull memory from under both threads. */
			return -EDEADLK;
		}
		o->reader_up = false;
	}
	if (o->watchdog_up) {
		if (write(o->wd_pipe[1], "x", 1) < 0) {
			/* As above. */
		}
		pthread_join(o->watchdog, NULL);
		o->watchdog_up = false;
	}
	/* Closing the group allows every permission event still waiting
	 * (fanotify_release()), so nothing is left holding a writer. */
	if (o->fd >= 0)
		close(o->fd);
	close_pipe(o->stop_pipe);
	close_pipe(o->wd_pipe);
	fan_opens_free(&o->opens);
	pthread_mutex_destroy(&o->lock);
	pthread_mutex_destroy(&o->resp_lock);
	free(o);
	return 0;
}

void fan_clear(struct fan_observer *o)
{
	pthread_mutex_lock(&o->lock);
	o->n = 0;
	pthread_mutex_unlock(&o->lock);
}

bool fan_event_at(struct fan_observer *o, size_t k, struct fan_event *out)
{
	bool ok;

	pthread_mutex_lock(&o->lock);
	ok = k < o->n;
	if (ok)
		*out = o->ev[k];
	pthread_mutex_unlock(&o->lock);
	return ok;
}

void fan_health(struct fan_observer *o, struct fan_health *out)
{
	memset(out, 0, sizeof(*out));
	out->permission = o->permission;
	out->pidfd = o->pidfd;
	pthread_mutex_lock(&o->lock);
	out->kept = o->n;
	out->dropped = o->dropped;
	out->overflow = o->overflow;
	out->opens = o->n_opens;
	out->evicted = o->n_evicted;
	pthread_mutex_unlock(&o->lock);
	out->dropped += atomic_load(&o->n_wd_lost);
	out->perm = atomic_load(&o->n_perm);
	out->late = atomic_load(&o->n_late);
	out->gone = atomic_load(&o->n_gone);
	out->resp_errors = atomic_load(&o->n_resp_err);
	pthread_mutex_lock(&o->resp_lock);
	out->max_answer_us = o->max_answer_us;
	pthread_mutex_unlock(&o->resp_lock);
}

void fan_health_text(const struct fan_health *h, char *out, size_t n)
{
	int k = snprintf(out, n, "%zu kept, %zu dropped, %zu queue overflows", h->kept, h->dropped,
			 h->overflow);

	if (h->permission && k >= 0 && (size_t)k < n)
		snprintf(out + k, n - (size_t)k,
			 "; %zu opens answered (all allowed), %zu openers identified, %zu "
			 "released by the watchdog first, %zu gone before read, %zu refused "
			 "answers, %zu records evicted; slowest answer %ld us",
			 h->perm, h->opens, h->late, h->gone, h->resp_errors, h->evicted,
			 h->max_answer_us);
}

size_t fan_count_dev(struct fan_observer *o, dev_t dev, ino_t ino, bool not_ino, size_t *identified)
{
	size_t c = 0, id = 0;

	pthread_mutex_lock(&o->lock);
	for (size_t i = 0; i < o->n; i++) {
		const struct fan_event *e = &o->ev[i];

		if (e->pid == o->self || e->dev != dev)
			continue;
		if (ino && (not_ino ? e->ino == ino : e->ino != ino))
			continue;
		c++;
		id += e->identity_ok;
	}
	pthread_mutex_unlock(&o->lock);
	if (identified)
		*identified = id;
	return c;
}
