/* The fanotify observer's threads (fan_impl.h).
 *
 * The reader reads the group, answers permission events and keeps write
 * events; the watchdog (permission mode only) answers any permission event
 * the reader has not answered within FAN_ANSWER_BUDGET_MS, and when the
 * reader has been inside one batch for FAN_STALL_MS it reads and allows
 * the queue itself (those events are lost and counted). Neither thread
 * ever opens a file on a watched filesystem (only /proc and the event fds
 * the kernel gives us, which raise no events): an open there from the
 * reader would wait for the reader. */
#include "fan_impl.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/pidfd.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "../../include/cleanup.h"
#include "observe.h"
#include "selftest.h"

static long long now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

/* procfs: never a watched filesystem. */
long fan_pid_cursor(void)
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

/* Keep one write event (or note a sentinel), if it is the fixture's. */
static void keep(struct fan_observer *o, const struct fan_event *e)
{
	bool own = false;

	if (o->keep_nothing)
		return;
	pthread_mutex_lock(&o->lock);
	for (size_t i = 0; i < o->n_own; i++)
		own |= o->own_dev[i] == e->dev;
	/* Paths are only compared on a shared filesystem; on the fixture's
	 * own tmpfs every event is the fixture's (and the path of a sandbox
	 * mount already torn down can be partial). */
	if (!own && !under(e->path, o->root)) {
		pthread_mutex_unlock(&o->lock);
		return;
	}
	if (strstr(e->path, "/.fan-probe-") && e->pid == o->self) {
		unsigned long sn = strtoul(strstr(e->path, "/.fan-probe-") + 12, NULL, 10);
		size_t k = o->n_probe_seen++ % (sizeof(o->probe_seen) / sizeof(o->probe_seen[0]));

		o->probe_seen[k].seq = sn;
		o->probe_seen[k].dev = e->dev;
	} else if (strstr(e->path, "/.fan-sentinel-") && e->pid == o->self) {
		unsigned long sn = strtoul(strstr(e->path, "/.fan-sentinel-") + 15, NULL, 10);

		if (sn > o->seq_seen) {
			o->seq_seen = sn;
			o->seen_qseq = e->qseq;
			o->seen_t_mono_ns = e->t_mono_ns;
		}
	} else if (o->broken || o->n >= FAN_MAX_EVENTS) {
		o->dropped++;
	} else {
		o->ev[o->n++] = *e;
	}
	pthread_mutex_unlock(&o->lock);
}

/* The batch's read: when, and the test-only coarse collector. */
struct when {
	long long mono, real;
	bool coarse;
};

static void handle_note(struct fan_observer *o, const struct fanotify_event_metadata *m,
			unsigned long long seq, long cursor, const struct when *w)
{
	struct fan_event e = {.mask = m->mask,
			      .pid = m->pid,
			      .qseq = seq + 1,
			      .t_mono_ns = w->mono,
			      .t_real_ns = w->real};
	struct fan_now now = {0};
	struct fan_ident id = {0};
	int pidfd = event_pidfd(m);
	char link[64];
	ssize_t k;
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
	/* Test-only (PADDOCK_EVAL_SELFTEST=fan-coarse-time): a collector
	 * without queue positions and with whole-second clocks, too coarse
	 * to order a write and its undo. */
	if (w->coarse) {
		e.qseq = 0;
		e.t_mono_ns -= e.t_mono_ns % 1000000000LL;
		e.t_real_ns -= e.t_real_ns % 1000000000LL;
	}
	keep(o, &e);
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
	struct when w = {.coarse = selftest_on("fan-coarse-time")};
	struct timespec rt;

	atomic_store(&o->busy_since_ns, now_ns());
	len = read(o->fd, buf, FAN_BATCH);
	if (len <= 0) {
		/* EAGAIN: the watchdog took them; EINTR: try again later. */
		atomic_store(&o->busy_since_ns, 0);
		return;
	}
	w.mono = now_ns();
	clock_gettime(CLOCK_REALTIME, &rt);
	w.real = (long long)rt.tv_sec * 1000000000LL + rt.tv_nsec;
	/* Read while every opener of this batch is still held in open(2),
	 * so each still owns its pid: the cursor records where the
	 * allocator stood then. */
	cursor = o->cursor_ok ? fan_pid_cursor() : -1;
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
			handle_note(o, m, o->seq + i, cursor, &w);
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

void *fan_reader(void *arg)
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

void *fan_watchdog(void *arg)
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
