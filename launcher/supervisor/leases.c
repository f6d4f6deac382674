/* The supervisor's side of services (policy "services", docs/sessions.md):
 * what paddock-init reports of them goes to the session's leases, the
 * completion record and, at the main command's end, to whoever waits. */
#include "run.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

bool services_leased(const struct policy *p)
{
	for (size_t i = 0; i < p->n_services; i++)
		if (p->services[i].lease_ms)
			return true;
	return false;
}

void services_init(struct run *r)
{
	const struct policy *p = r->policy;

	r->n_services = p->n_services < SESSION_LEASES_MAX ? p->n_services : SESSION_LEASES_MAX;
	for (size_t i = 0; i < r->n_services; i++) {
		struct session_lease *l = &r->services[i];

		memset(l, 0, sizeof(*l));
		snprintf(l->service, sizeof(l->service), "%s", p->services[i].name);
		l->lease_ms = p->services[i].lease_ms;
		snprintf(l->state, sizeof(l->state), "starting");
	}
}

static struct session_lease *find(struct run *r, const char *name, size_t len)
{
	for (size_t i = 0; i < r->n_services; i++)
		if (strlen(r->services[i].service) == len &&
		    memcmp(r->services[i].service, name, len) == 0)
			return &r->services[i];
	return NULL;
}

static void publish(struct run *r)
{
	if (!r->session)
		return;
	memcpy(r->session->info.leases, r->services, r->n_services * sizeof(r->services[0]));
	r->session->info.n_leases = r->n_services;
	/* A registry that went away meanwhile does not stop anything. */
	(void)session_write(r->session, NULL);
}

/* "service-ended NAME CAUSE STATUS" or "service-ended NAME exec-error E".
 * init cannot tell the TTL from paddock stop: both are its "stopped". */
static void ended(struct run *r, struct session_lease *l, const char *rest)
{
	char cause[24] = "", status[24] = "";

	if (sscanf(rest, "%23s %23s", cause, status) < 1)
		return;
	if (strcmp(cause, "stopped") == 0 && r->expired)
		snprintf(cause, sizeof(cause), "expired");
	snprintf(l->state, sizeof(l->state), "ended");
	snprintf(l->ended, sizeof(l->ended), "%s%s%s", cause, status[0] ? " " : "", status);
	if (strcmp(cause, "exec-error") == 0)
		fprintf(stderr, "paddock: warning: service %s: %s: %s\n", l->service,
			r->policy->services[l - r->services].argv[0], strerror(atoi(status)));
}

bool services_message(struct run *r, const char *m)
{
	const char *name, *sp;
	struct session_lease *l;
	bool started;

	if (strncmp(m, "service-started ", 16) == 0)
		started = true;
	else if (strncmp(m, "service-ended ", 14) == 0)
		started = false;
	else
		return false;
	name = m + (started ? 16 : 14);
	sp = strchr(name, ' ');
	if (!sp || !(l = find(r, name, (size_t)(sp - name))))
		return true; /* not a service of ours: ignored */
	if (started) {
		l->pid = atoi(sp + 1);
		session_iso_time(0, l->started, sizeof(l->started));
		if (l->lease_ms)
			session_iso_time(l->lease_ms, l->expires, sizeof(l->expires));
		snprintf(l->state, sizeof(l->state), "running");
	} else {
		ended(r, l, sp + 1);
	}
	publish(r);
	return true;
}

void services_retained(struct run *r)
{
	char until[32] = "";

	r->retained = true;
	clock_gettime(CLOCK_REALTIME, &r->t_main_end);
	r->t_end = r->t_main_end;
	for (size_t i = 0; i < r->n_services; i++) {
		if (strcmp(r->services[i].state, "running") != 0)
			continue;
		snprintf(r->services[i].state, sizeof(r->services[i].state), "retained");
		if (!until[0] || strcmp(r->services[i].expires, until) > 0)
			snprintf(until, sizeof(until), "%s", r->services[i].expires);
	}
	sandbox_conclude_main(r);
	publish(r);
	if (r->session)
		session_retained(r->session, r->status, ending_name(r->ending));
	if (r->record_fd >= 0)
		(void)record_write(r, r->record_fd, NULL);
	if (r->report_fd >= 0) {
		fprintf(stderr,
			"paddock: the command ended; leased services run on until %s in session "
			"%s (paddock stop %s ends them)\n",
			until, r->session ? r->session->info.id : "?",
			r->session ? r->session->info.id : "?");
		retain_report(r, r->status);
	}
}
