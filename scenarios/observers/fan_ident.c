/* Matching write events to writers (fan_ident.h), pure. */
#include "fan_ident.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

int fan_opens_init(struct fan_opens *t, size_t cap)
{
	memset(t, 0, sizeof(*t));
	t->v = calloc(cap, sizeof(*t->v));
	if (!t->v)
		return -ENOMEM;
	t->cap = cap;
	return 0;
}

void fan_opens_free(struct fan_opens *t)
{
	if (!t)
		return;
	free(t->v);
	t->v = NULL;
	t->cap = t->n = t->next = 0;
}

void fan_opens_add(struct fan_opens *t, const struct fan_open *o)
{
	if (!t->cap)
		return;
	if (t->n == t->cap)
		t->evicted++;
	else
		t->n++;
	t->v[t->next] = *o;
	t->next = (t->next + 1) % t->cap;
}

/* The latest open by pid of (dev, ino) queued before seq: the last open
 * that pid made of that file before writing it. */
static const struct fan_open *latest(const struct fan_opens *t, pid_t pid, dev_t dev, ino_t ino,
				     unsigned long long seq)
{
	const struct fan_open *best = NULL;

	for (size_t i = 0; i < t->n; i++) {
		const struct fan_open *o = &t->v[i];

		if (o->id.pid != pid || o->dev != dev || o->ino != ino || o->seq >= seq)
			continue;
		if (!best || o->seq > best->seq)
			best = o;
	}
	return best;
}

bool fan_pid_cursor_passed(long from, long to, pid_t pid)
{
	if (to == from)
		return false;
	if (to > from)
		return pid > from && pid <= to;
	/* Wrapped: up to pid_max, then again from RESERVED_PIDS (300). A pid
	 * below 300 is never handed out after a wrap; counting it is only
	 * conservative. */
	return pid > from || pid <= to;
}

enum fan_how fan_ident_match(const struct fan_opens *t, pid_t pid, dev_t dev, ino_t ino,
			     unsigned long long seq, const struct fan_now *now,
			     struct fan_ident *out)
{
	const struct fan_open *o;

	/* The kernel's pidfd names the event's own process: a read of
	 * /proc/PID that it still confirms afterwards is the writer's. */
	if (now->live && now->verified) {
		*out = now->id;
		return FAN_HOW_LIVE;
	}
	o = latest(t, pid, dev, ino, seq);
	if (now->live) {
		if (o && o->id.start == now->id.start) {
			*out = now->id;
			return FAN_HOW_LIVE_OPEN;
		}
		/* The process holding the pid now is not the one that opened
		 * the file: the writer was that opener (gone, pid reused) or
		 * the new holder through an fd it did not open. */
		if (o)
			return FAN_HOW_REUSED;
		*out = now->id;
		return FAN_HOW_LIVE_UNVERIFIED;
	}
	if (!o)
		return FAN_HOW_NONE;
	if (now->present) {
		if (now->start != o->id.start)
			return FAN_HOW_REUSED;
		*out = o->id;
		return FAN_HOW_OPEN_HELD;
	}
	/* Reaped. The pid was the opener's while it was held (o->cursor was
	 * read then); if the allocator has not come round to it since, no
	 * other process has had it, so the write came from the opener. */
	if (o->cursor < 0 || now->cursor < 0 || fan_pid_cursor_passed(o->cursor, now->cursor, pid))
		return FAN_HOW_STALE;
	*out = o->id;
	return FAN_HOW_OPEN_FREED;
}

bool fan_how_identified(enum fan_how h)
{
	switch (h) {
	case FAN_HOW_LIVE:
	case FAN_HOW_LIVE_OPEN:
	case FAN_HOW_LIVE_UNVERIFIED:
	case FAN_HOW_OPEN_HELD:
	case FAN_HOW_OPEN_FREED:
		return true;
	case FAN_HOW_NONE:
	case FAN_HOW_REUSED:
	case FAN_HOW_STALE:
		break;
	}
	return false;
}

const char *fan_how_name(enum fan_how h)
{
	switch (h) {
	case FAN_HOW_NONE:
		return "no identity (writer gone when read; no open of the file by it recorded: "
		       "an inherited fd, or no permission mode)";
	case FAN_HOW_LIVE:
		return "live (pidfd-verified)";
	case FAN_HOW_LIVE_OPEN:
		return "live (same process as the recorded open)";
	case FAN_HOW_LIVE_UNVERIFIED:
		return "live (unverified: no pidfd, no recorded open)";
	case FAN_HOW_OPEN_HELD:
		return "recorded open (writer a zombie, same start time)";
	case FAN_HOW_OPEN_FREED:
		return "recorded open (writer reaped, pid not reallocated since)";
	case FAN_HOW_REUSED:
		return "no identity (pid now held by another process)";
	case FAN_HOW_STALE:
		return "no identity (writer reaped, pid may have been reallocated)";
	}
	return "?";
}
