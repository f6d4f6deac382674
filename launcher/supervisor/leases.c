/* The supervisor's side of services (policy "services", docs/sessions.md):
 * the leases init reports (outcome.c keeps them) go to the session and, at
 * the main command's end, to the record and to whoever waits. */
#include "run.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

bool leases_any(const struct policy *p)
{
	for (size_t i = 0; i < p->n_services; i++)
		if (p->services[i].lease_ms)
			return true;
	return false;
}

void leases_publish(struct run *r)
{
	struct session *s = r->live.session;

	if (!s)
		return;
	memcpy(s->info.leases, r->out.leases, r->out.n_leases * sizeof(r->out.leases[0]));
	s->info.n_leases = r->out.n_leases;
	/* A registry that went away meanwhile does not stop anything. */
	(void)session_write(s, NULL);
}

void leases_retained(struct run *r)
{
	const char *id = r->live.session ? r->live.session->info.id : "?";
	struct err err = {0};
	char until[32] = "";

	for (size_t i = 0; i < r->out.n_leases; i++) {
		const struct session_lease *l = &r->out.leases[i];

		if (strcmp(l->state, "retained") == 0 &&
		    (!until[0] || strcmp(l->expires, until) > 0))
			snprintf(until, sizeof(until), "%s", l->expires);
	}
	leases_publish(r);
	if (r->live.session)
		session_retained(r->live.session, r->out.status, ending_name(r->out.ending));
	/* The record of the main command's end: a failure to write it is
	 * said (the final write at the end will try again). */
	if (r->live.record_fd >= 0 && record_write(r, r->live.record_fd, &err) < 0) {
		fprintf(stderr, "paddock: warning: %s\n", err.msg);
		outcome_warn(&r->out, "%s (at the main command's end)", err.msg);
	}
	/* A detached run's report went at "started" (supervise.c). */
	if (r->live.report_fd >= 0) {
		fprintf(stderr,
			"paddock: the command ended; leased services run on until %s in session "
			"%s (paddock stop %s ends them)\n",
			until, id, id);
		retain_report(r, r->out.status);
	}
}
