/* The fanotify event observer (fan.h): set-up, modes, and the caller's
 * side. The threads are fan_read.c. Callers never hold o->lock; they copy
 * out through fan_event_at() and fan_health(). */
#include "fan.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "fan_impl.h"
#include "selftest.h"

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
	struct rlimit rl;
	dev_t dev;

	if (force && strcmp(force, "notification") == 0) {
		snprintf(why, n, "forced by PADDOCK_EVAL_FANOTIFY=notification");
		return false;
	}
	/* The kernel itself answers FAN_DENY to a permission event whose fd
	 * (or pidfd) it cannot install for us (fanotify_read(): EMFILE), so
	 * running short of fds would make this observer deny opens. A batch
	 * holds at most FAN_PEND_MAX events with two fds each. The limit is
	 * not raised: workloads would inherit it. */
	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY &&
	    rl.rlim_cur < 2 * FAN_PEND_MAX + 256) {
		snprintf(why, n,
			 "RLIMIT_NOFILE %llu too low for a batch of event fds (the kernel "
			 "denies an open whose fd it cannot hand over)",
			 (unsigned long long)rl.rlim_cur);
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
	r = pthread_create(&o->reader, NULL, fan_reader, o);
	if (r)
		return -r;
	o->reader_up = true;
	if (!o->permission)
		return 0; /* nothing waits for a notification-only group */
	r = pthread_create(&o->watchdog, NULL, fan_watchdog, o);
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
	o->keep_nothing = selftest_on("fan-keep-nothing");
	o->self = getpid();
	pthread_mutex_init(&o->lock, NULL);
	pthread_mutex_init(&o->resp_lock, NULL);
	snprintf(o->root, sizeof(o->root), "%s", root);
	o->cursor_ok = fan_pid_cursor() >= 0;
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
	return fan_sync_at(o, NULL, NULL);
}

int fan_sync_at(struct fan_observer *o, unsigned long long *qseq, long long *t_mono_ns)
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
			pthread_mutex_lock(&o->lock);
			if (qseq)
				*qseq = o->seen_qseq;
			if (t_mono_ns)
				*t_mono_ns = o->seen_t_mono_ns;
			pthread_mutex_unlock(&o->lock);
			unlink(path);
			return 0;
		}
		nanosleep(&ts, NULL);
	}
	unlink(path);
	return -ETIMEDOUT;
}

static bool probe_seen(struct fan_observer *o, unsigned long want, dev_t dev)
{
	size_t cap = sizeof(o->probe_seen) / sizeof(o->probe_seen[0]);
	bool seen = false;

	pthread_mutex_lock(&o->lock);
	for (size_t i = 0; i < o->n_probe_seen && i < cap; i++)
		seen |= o->probe_seen[i].seq == want && o->probe_seen[i].dev == dev;
	pthread_mutex_unlock(&o->lock);
	return seen;
}

int fan_probe_fs(struct fan_observer *o, const char *dir)
{
	char path[PATH_MAX + 64];
	unsigned long want;
	struct stat st;
	int fd, r = -ETIMEDOUT;

	if (!o || !o->reader_up)
		return -ENOTCONN;
	want = ++o->probe_sent;
	snprintf(path, sizeof(path), "%s/.fan-probe-%lu", dir, want);
	fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	if (fd < 0)
		return -errno;
	if (fstat(fd, &st) < 0 || write(fd, "p", 1) != 1) {
		r = -errno;
		close(fd);
		unlink(path);
		return r;
	}
	close(fd);
	for (int i = 0; i < 400; i++) {
		struct timespec ts = {0, 5 * 1000 * 1000};

		if (probe_seen(o, want, st.st_dev)) {
			r = 0;
			break;
		}
		nanosleep(&ts, NULL);
	}
	unlink(path);
	return r;
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
