/* The outcome as data (outcome.h): pure functions from events to state.
 * Nothing here performs an effect; the supervise loop does, from what
 * outcome_apply() returns. */
#include "outcome.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../include/initproto.h"
#include "../../include/iso8601.h"

int outcome_init(struct outcome *o, const struct policy *p, size_t n_ops)
{
	o->n_leases = p->n_services < SESSION_LEASES_MAX ? p->n_services : SESSION_LEASES_MAX;
	for (size_t i = 0; i < o->n_leases; i++) {
		struct session_lease *l = &o->leases[i];

		memset(l, 0, sizeof(*l));
		snprintf(l->service, sizeof(l->service), "%s", p->services[i].name);
		l->lease_ms = p->services[i].lease_ms;
		snprintf(l->state, sizeof(l->state), "starting");
	}
	o->applied = calloc(n_ops + 1, 1);
	if (!o->applied)
		return -ENOMEM;
	o->n_ops = n_ops;
	o->applied_all = n_ops == 0;
	return 0;
}

void outcome_free(struct outcome *o)
{
	free(o->killed);
	free(o->survivors);
	free(o->applied);
	for (int i = 0; i < o->n_tampering; i++)
		free(o->tampering[i]);
	free(o->tampering);
	o->tampering = NULL;
	o->n_tampering = 0;
	o->killed = NULL;
	o->survivors = NULL;
	o->applied = NULL;
}

void outcome_warn(struct outcome *o, const char *fmt, ...)
{
	va_list ap;

	if (o->n_warnings >= OUTCOME_WARNINGS_MAX)
		return;
	va_start(ap, fmt);
	vsnprintf(o->warnings[o->n_warnings++], sizeof(o->warnings[0]), fmt, ap);
	va_end(ap);
}

/* A decimal in [min, max] that ends at a space or the end: the rest. */
static const char *num(const char *s, long min, long max, long *out)
{
	char *end;
	long v;

	if ((*s < '0' || *s > '9') && *s != '-')
		return NULL;
	errno = 0;
	v = strtol(s, &end, 10);
	if (errno || v < min || v > max || (*end != ' ' && *end != '\0'))
		return NULL;
	*out = v;
	return *end ? end + 1 : end;
}

/* A message that is one number and nothing else. */
static bool num_only(const char *s, long min, long max, long *out)
{
	const char *rest = num(s, min, max, out);

	return rest && *rest == '\0' && rest[-1] != ' ';
}

/* "term PID COMM" / "kill PID COMM". */
static int add_killed(struct outcome *o, const char *rest, int sig)
{
	struct killed *k;
	const char *comm;
	long pid;

	comm = num(rest, 1, INT32_MAX, &pid);
	if (!comm)
		return -EPROTO;
	k = realloc(o->killed, (o->n_killed + 1) * sizeof(*k));
	if (!k)
		return -ENOMEM;
	o->killed = k;
	k = &o->killed[o->n_killed++];
	k->pid = (pid_t)pid;
	k->sig = sig;
	snprintf(k->comm, sizeof(k->comm), "%.*s", (int)strcspn(comm, " "), comm);
	return 0;
}

/* "applied FIRST STATES" */
static int applied(struct outcome *o, const char *rest)
{
	const char *states;
	long first;
	size_t n;

	states = num(rest, 0, (long)o->n_ops, &first);
	if (!states)
		return -EPROTO;
	n = strlen(states);
	if (n > o->n_ops - (size_t)first)
		return -EPROTO;
	for (size_t i = 0; i < n; i++)
		if (states[i] != INITPROTO_APPLIED_DONE && states[i] != INITPROTO_APPLIED_SKIPPED &&
		    states[i] != INITPROTO_APPLIED_SYMLINK)
			return -EPROTO;
	memcpy(o->applied + first, states, n);
	o->applied_all = strlen(o->applied) == o->n_ops;
	return 0;
}

static struct session_lease *find_lease(struct outcome *o, const char *name, size_t len)
{
	for (size_t i = 0; i < o->n_leases; i++)
		if (strlen(o->leases[i].service) == len &&
		    memcmp(o->leases[i].service, name, len) == 0)
			return &o->leases[i];
	return NULL;
}

/* "service-started NAME PID", "service-ended NAME CAUSE STATUS" or
 * "service-ended NAME exec-error E". init cannot tell the TTL from paddock
 * stop: both are its "stopped". */
static int service(struct outcome *o, const char *m, bool started, const struct timespec *now)
{
	char cause[24] = "", status[24] = "";
	const char *name = m, *sp = strchr(m, ' ');
	struct session_lease *l;
	int fx = OUTCOME_FX_LEASE;
	long pid;

	if (!sp || sp == name)
		return -EPROTO;
	l = find_lease(o, name, (size_t)(sp - name));
	if (!l)
		return 0; /* not a service of ours: nothing changes */
	o->fx_lease = (size_t)(l - o->leases);
	if (started) {
		if (!num_only(sp + 1, 1, INT32_MAX, &pid))
			return -EPROTO;
		l->pid = (pid_t)pid;
		iso8601(now, 0, l->started, sizeof(l->started));
		if (l->lease_ms)
			iso8601(now, l->lease_ms, l->expires, sizeof(l->expires));
		snprintf(l->state, sizeof(l->state), "running");
		return fx;
	}
	if (sscanf(sp + 1, "%23s %23s", cause, status) < 1)
		return -EPROTO;
	if (strcmp(cause, "stopped") == 0 && o->expired)
		snprintf(cause, sizeof(cause), "expired");
	snprintf(l->state, sizeof(l->state), "ended");
	snprintf(l->ended, sizeof(l->ended), "%s%s%s", cause, status[0] ? " " : "", status);
	if (strcmp(cause, "exec-error") == 0)
		fx |= OUTCOME_FX_SERVICE_FAILED;
	return fx;
}

/* "retained": the main command's outcome is final. */
static int retained(struct outcome *o, const struct timespec *now)
{
	o->retained = true;
	o->t_main_end = *now;
	o->t_end = *now;
	for (size_t i = 0; i < o->n_leases; i++)
		if (strcmp(o->leases[i].state, "running") == 0)
			snprintf(o->leases[i].state, sizeof(o->leases[i].state), "retained");
	outcome_conclude_main(o);
	return OUTCOME_FX_RETAINED | OUTCOME_FX_LEASE;
}

int outcome_apply(struct outcome *o, const char *m, const struct timespec *now)
{
	long v;

	if (strncmp(m, "error ", 6) == 0) {
		struct err e = {0};

		if (initproto_error_parse(m, &e) < 0)
			return -EPROTO;
		/* The first error is the cause; later ones follow from it. */
		if (!o->child_failed) {
			o->error = e;
			o->child_failed = true;
		}
		return 0;
	}
	if (strncmp(m, "applied ", 8) == 0)
		return applied(o, m + 8);
	if (strncmp(m, "started ", 8) == 0) {
		if (!num_only(m + 8, 1, INT32_MAX, &v))
			return -EPROTO;
		o->started = true;
		o->started_pid = (pid_t)v;
		return OUTCOME_FX_STARTED;
	}
	if (strncmp(m, "exec-error ", 11) == 0) {
		if (!num_only(m + 11, 1, 4095, &v))
			return -EPROTO;
		o->exec_errno = (int)v;
		return 0;
	}
	if (strncmp(m, "exit ", 5) == 0 || strncmp(m, "signal ", 7) == 0) {
		bool sig = m[0] == 's';

		if (!num_only(m + (sig ? 7 : 5), sig ? 1 : 0, sig ? 127 : 255, &v))
			return -EPROTO;
		o->wl_reported = true;
		o->wl_signaled = sig;
		o->wl_code = (int)v;
		return 0;
	}
	if (strncmp(m, "term ", 5) == 0)
		return add_killed(o, m + 5, SIGTERM);
	if (strncmp(m, "kill ", 5) == 0)
		return add_killed(o, m + 5, SIGKILL);
	/* "term-more N" / "kill-more N": N more processes ended, unnamed. */
	if (strncmp(m, "term-more ", 10) == 0 || strncmp(m, "kill-more ", 10) == 0) {
		if (!num_only(m + 10, 1, INT32_MAX, &v))
			return -EPROTO;
		o->killed_unnamed += (size_t)v;
		return 0;
	}
	if (strcmp(m, "done") == 0) {
		o->done = true;
		return 0;
	}
	if (strcmp(m, "retained") == 0)
		return retained(o, now);
	/* init ended the sandbox at the TTL itself: the supervisor did not
	 * (stopped, hung). The same expiry as the supervisor's own. */
	if (strcmp(m, "deadline") == 0) {
		if (!o->stopped && !o->services_stop_sent)
			o->expired = true;
		return 0;
	}
	if (strncmp(m, "service-started ", 16) == 0)
		return service(o, m + 16, true, now);
	if (strncmp(m, "service-ended ", 14) == 0)
		return service(o, m + 14, false, now);
	return -EPROTO;
}

void outcome_conclude_main(struct outcome *o)
{
	if (!o->retained && (o->expired || o->stopped)) {
		o->ending = o->expired ? ENDING_EXPIRED : ENDING_STOPPED;
		o->status = exit_status_for(o->ending, o->wl_signaled ? o->wl_code : -1);
	} else if (o->wl_signaled) {
		o->ending = ENDING_SIGNAL;
		o->status = exit_status_for(o->ending, o->wl_code);
	} else {
		o->ending = ENDING_EXIT;
		o->status = exit_status_for(o->ending, o->wl_code);
	}
}

void outcome_conclude(struct outcome *o, const siginfo_t *si)
{
	o->init_reaped = true;
	if (o->child_failed) {
		o->ending = ENDING_LAUNCHER_ERROR;
		o->status = exit_status_for(o->ending, 0);
		return;
	}
	if (!o->wl_reported) {
		/* init ended without reporting the workload's end: killed, or
		 * not paddock-init (--init /bin/true). Its status is its own,
		 * not the workload's, and is recorded as such. */
		o->init_died = true;
		o->init_signaled = si->si_code != CLD_EXITED;
		o->init_code = si->si_status;
		if (!o->retained && (o->expired || o->stopped)) {
			outcome_conclude_main(o);
			return;
		}
		o->ending = ENDING_INIT_DIED;
		if (!o->error.code)
			err_set(&o->error, ESRCH, "paddock-init %s %d without reporting the %s",
				o->init_signaled ? "was killed by signal" : "exited with",
				o->init_code, o->started ? "workload's end" : "workload's start");
		/* Once the workload runs, PID 1's death kills it with the pid
		 * namespace: the signal that ended init ended it. Before, or
		 * when init merely exited, nothing says it ran. */
		o->status =
		    exit_status_for(o->ending, o->started && o->init_signaled ? o->init_code : -1);
		return;
	}
	if (si->si_code == CLD_EXITED &&
	    si->si_status != (o->wl_signaled ? 128 + o->wl_code : o->wl_code)) {
		/* init exits with the workload's status, and its exit status
		 * comes from the kernel: a report that disagrees with it was
		 * not init's. Trust the kernel and say so. */
		outcome_warn(o, "init reported %s %d but exited with %d; the report is ignored",
			     o->wl_signaled ? "signal" : "exit", o->wl_code, si->si_status);
		o->wl_signaled = si->si_status > 128 && si->si_status < 128 + 65;
		o->wl_code = o->wl_signaled ? si->si_status - 128 : si->si_status;
	}
	outcome_conclude_main(o);
}

void outcome_fail(struct outcome *o, const struct err *err)
{
	o->ending = ENDING_LAUNCHER_ERROR;
	o->status = exit_status_for(o->ending, 0);
	if (!o->error.code || !o->child_failed)
		o->error = *err;
}

const char *outcome_applied_state(const struct outcome *o, size_t i)
{
	if (i >= o->n_ops)
		return NULL;
	switch (o->applied[i]) {
	case INITPROTO_APPLIED_DONE:
		return "applied";
	case INITPROTO_APPLIED_SKIPPED:
		return "skipped";
	case INITPROTO_APPLIED_SYMLINK:
		return "symlink";
	}
	return NULL;
}
