/* Stress and fault checks of paddock-eval's fanotify observer
 * (scenarios/observers/fan.c), as root: `make fan-stress`. Built with FAN_TEST_HOOKS,
 * which lets the environment slow the reader's identity reads.
 *
 *   fan_stress normal  waves of 40 short-lived writers: every write by a
 *                      process that opened the file itself has its writer;
 *                      writes through an inherited fd are counted apart
 *   fan_stress budget  the reader takes 600 ms over one opener: the
 *                      watchdog must release it within its budget
 *   fan_stress stall   the reader stalls 2.5 s: the watchdog must drain
 *                      and allow the queue, and count what it lost
 *
 * Exit 0 when every check holds, 1 otherwise (one line per failure), 77
 * when it cannot run (not root, no tmpfs, no permission mode). */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "../../scenarios/observers/fan.h"

static int failures;

#define CHECK(cond, ...)                                            \
	do {                                                        \
		if (!(cond)) {                                      \
			failures++;                                 \
			printf("FAIL %s:%d: ", __FILE__, __LINE__); \
			printf(__VA_ARGS__);                        \
			putchar('\n');                              \
		}                                                   \
	} while (0)

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static pid_t spawn(const char *script, const char *path)
{
	pid_t p = fork();

	if (p == 0) {
		execl("/bin/sh", "sh", "-c", script, "sh", path, (char *)NULL);
		_exit(127);
	}
	return p;
}

/* Run n writers of script at once; the slowest one's wall time. */
static double wave(const char *dir, const char *prefix, const char *script, int n)
{
	pid_t pids[256];
	double t0 = now_s();

	for (int i = 0; i < n && i < 256; i++) {
		char path[PATH_MAX];

		snprintf(path, sizeof(path), "%s/%s-%d", dir, prefix, i);
		pids[i] = spawn(script, path);
	}
	for (int i = 0; i < n && i < 256; i++)
		waitpid(pids[i], NULL, 0);
	return now_s() - t0;
}

struct tally {
	size_t events, identified;
};

static void count(struct fan_observer *o, const char *prefix, struct tally *t)
{
	struct fan_event e;
	size_t len = strlen(prefix);

	memset(t, 0, sizeof(*t));
	for (size_t k = 0; fan_event_at(o, k, &e); k++) {
		const char *base = strrchr(e.path, '/');

		if (e.pid == getpid() || !base || strncmp(base + 1, prefix, len) != 0 ||
		    base[1 + len] != '-')
			continue;
		t->events++;
		t->identified += e.identity_ok;
	}
}

static void phase_normal(struct fan_observer *o, const char *dir)
{
	/* The opener is the writer: a shell builtin, cp, dd. */
	static const struct {
		const char *prefix, *script;
	} own[] = {
	    {"sh", "printf x > \"$1\""},
	    {"cp", "exec cp /etc/hostname \"$1\""},
	    {"dd", "echo x | dd of=\"$1\" status=none"},
	};
	struct fan_health h;
	struct tally t, inh = {0};
	double worst = 0;
	size_t dropped = 0, late = 0;

	/* Checked and cleared wave by wave: the observer keeps 512 events. */
	for (int round = 0; round < 4; round++)
		for (size_t f = 0; f <= sizeof(own) / sizeof(own[0]); f++) {
			bool inherited = f == sizeof(own) / sizeof(own[0]);
			char prefix[32];
			double w;

			/* Through an inherited fd: dash opens the redirection
			 * before it vforks cat, so cat never opens the file. */
			snprintf(prefix, sizeof(prefix), "%s%d", inherited ? "inh" : own[f].prefix,
				 round);
			w = wave(dir, prefix,
				 inherited ? "cat /etc/hostname > \"$1\"" : own[f].script, 40);
			worst = w > worst ? w : worst;
			CHECK(fan_sync(o) == 0, "sentinel not seen");
			count(o, prefix, &t);
			fan_health(o, &h);
			dropped = h.dropped;
			late = h.late;
			fan_clear(o);
			if (inherited) {
				inh.events += t.events;
				inh.identified += t.identified;
				continue;
			}
			CHECK(t.events >= 40, "%s: %zu write events for 40 writers", prefix,
			      t.events);
			CHECK(t.identified == t.events, "%s: %zu of %zu writes identified", prefix,
			      t.identified, t.events);
		}
	fan_health(o, &h);
	printf("normal: 640 writers, slowest wave of 40 %.3f s; inherited-fd writes %zu of %zu "
	       "identified; %zu answers (slowest %ld us), %zu dropped, %zu overflows\n",
	       worst, inh.identified, inh.events, h.perm, h.max_answer_us, h.dropped, h.overflow);
	CHECK(dropped == 0 && h.overflow == 0, "events lost");
	CHECK(late == 0, "%zu answers came from the watchdog", late);
	CHECK(h.max_answer_us < 200000, "slowest answer %ld us", h.max_answer_us);
}

static void phase_budget(struct fan_observer *o, const char *dir)
{
	struct fan_health h;
	double w = wave(dir, "slow", "printf x > \"$1\"", 1);

	CHECK(fan_sync(o) == 0, "sentinel not seen");
	fan_health(o, &h);
	printf("budget: the held writer took %.3f s; %zu answered by the watchdog first\n", w,
	       h.late);
	CHECK(w < 0.5, "writer held %.3f s (budget 0.2 s)", w);
	CHECK(h.late == 1, "%zu late answers, expected 1", h.late);
	CHECK(h.opens == 0, "a released opener's identity was recorded");
}

static void phase_stall(struct fan_observer *o, const char *dir)
{
	struct fan_health h;
	double t0 = now_s(), w;
	pid_t first = spawn("printf x > \"$1\"", "/dev/null");
	char path[PATH_MAX];

	waitpid(first, NULL, 0); /* /dev/null: not watched, only a warm-up */
	snprintf(path, sizeof(path), "%s/first", dir);
	first = spawn("printf x > \"$1\"", path);
	usleep(100 * 1000);
	w = wave(dir, "queued", "printf x > \"$1\"", 10);
	waitpid(first, NULL, 0);
	fan_health(o, &h);
	printf("stall: 10 writers queued behind a stalled reader took %.3f s (%.3f s in all); "
	       "%zu events read and allowed by the watchdog (counted dropped)\n",
	       w, now_s() - t0, h.dropped);
	CHECK(now_s() - t0 < 2.0, "writers held %.3f s behind a stalled reader", now_s() - t0);
	CHECK(h.dropped > 0, "the watchdog's reads were not counted as lost");
}

int main(int argc, char **argv)
{
	char dir[] = "/tmp/paddock-fan-stress.XXXXXX", why[256] = "";
	struct fan_observer *o = NULL;
	struct fan_health h;
	const char *phase = argc > 1 ? argv[1] : "normal";
	double t;
	int r;

	if (geteuid() != 0) {
		printf("SKIP: needs root (fanotify)\n");
		return 77;
	}
	if (!mkdtemp(dir) || mount("fan-stress", dir, "tmpfs", MS_NOSUID | MS_NODEV, "size=4m")) {
		printf("SKIP: tmpfs: %s\n", strerror(errno));
		return 77;
	}
	if (strcmp(phase, "budget") == 0) {
		setenv("FAN_TEST_SLOW", "1", 1);
		setenv("FAN_TEST_DELAY_MS", "600", 1);
	} else if (strcmp(phase, "stall") == 0) {
		setenv("FAN_TEST_SLOW", "1", 1);
		setenv("FAN_TEST_DELAY_MS", "2500", 1);
	}
	r = fan_start(&o, dir, false, why, sizeof(why));
	if (r < 0 || (fan_health(o, &h), !h.permission)) {
		printf("SKIP: no permission mode: %s\n", r < 0 ? why : fan_mode(o));
		fan_stop(o);
		umount2(dir, MNT_DETACH);
		rmdir(dir);
		return 77;
	}
	if (strcmp(phase, "budget") == 0)
		phase_budget(o, dir);
	else if (strcmp(phase, "stall") == 0)
		phase_stall(o, dir);
	else
		phase_normal(o, dir);
	t = now_s();
	r = fan_stop(o);
	printf("%s: fan_stop %d after %.3f s\n", phase, r, now_s() - t);
	CHECK(r == 0, "fan_stop: %s", strerror(-r));
	umount2(dir, MNT_DETACH);
	rmdir(dir);
	printf("%s: %s\n", phase, failures ? "FAILED" : "ok");
	return failures ? 1 : 0;
}
