/* paddock budget jobs BUDGET [--json] [--timeout DURATION] (docs/network.md,
 * "Remote jobs"): a job's final charge after its session. A job retained
 * at its session's end (authorised to outlive it), or one whose end the
 * session could not confirm, keeps its exposure held in the ledger as an
 * unknown row. This asks each such job's service, by the status route and
 * the address its submission went to (both in the ledger's jobs table,
 * noted at its lease), with its submission's Paddock-Admission (the
 * service knows the owner by it), once: a job the service says has ended
 * is settled with the charge it states (none stated: its exposure, never
 * less); one still running, or a service that does not answer, leaves the
 * row held. Nothing is cancelled and nothing is released here.
 *
 * Exit 0: every job asked was answered (settled, or running and held); 2:
 * a service did not answer (its rows held, said so); 125 with one line:
 * it could not be done (run by budget.c, which checked the arguments). */
#include "mediator.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

struct pending {
	int64_t op;
	uint64_t bound;
	bool alive, outlive;
	uint16_t port;
	char state[16], session[80], job[JOB_ID_MAX + 1], admission[48];
	char host[POLICY_NET_NAME_MAX + 2], address[INET6_ADDRSTRLEN],
	    status[POLICY_JOB_PATH_MAX + 16];
	char session_end[16];
};

struct pendings {
	struct pending *p;
	size_t n, cap;
	bool oom;
};

/* The jobs whose rows are live (reserved or unknown): copied out, so that
 * no read of the ledger is open while the services are asked. */
static void collect(const struct ledger_op *op, const struct ledger_job *jb, bool alive, void *arg)
{
	struct pendings *ps = arg;
	struct pending *p;

	if (strcmp(op->state, "reserved") != 0 && strcmp(op->state, "unknown") != 0)
		return;
	if (ps->n == ps->cap) {
		size_t cap = ps->cap ? 2 * ps->cap : 16;
		struct pending *q = realloc(ps->p, cap * sizeof(*q));

		if (!q) {
			ps->oom = true;
			return;
		}
		ps->p = q;
		ps->cap = cap;
	}
	p = &ps->p[ps->n++];
	*p = (struct pending){.op = op->id,
			      .bound = op->bound,
			      .alive = alive,
			      .outlive = jb->outlive,
			      .port = jb->port};
	snprintf(p->state, sizeof(p->state), "%s", op->state);
	snprintf(p->session, sizeof(p->session), "%s", op->session);
	snprintf(p->job, sizeof(p->job), "%s", jb->job);
	snprintf(p->admission, sizeof(p->admission), "%s", jb->admission);
	snprintf(p->host, sizeof(p->host), "%s", jb->host);
	snprintf(p->address, sizeof(p->address), "%s", jb->address);
	snprintf(p->status, sizeof(p->status), "%s", jb->status);
	snprintf(p->session_end, sizeof(p->session_end), "%s",
		 jb->session_end[0] ? jb->session_end : "none");
}

/* A connecting socket to the address the submission went to (arg). */
static int dial(void *arg, const char *name, uint16_t port)
{
	const char *addr = arg;
	struct sockaddr_storage ss = {0};
	struct sockaddr_in *in4 = (struct sockaddr_in *)&ss;
	struct sockaddr_in6 *in6 = (struct sockaddr_in6 *)&ss;
	socklen_t len;
	int fd;

	(void)name;
	if (inet_pton(AF_INET, addr, &in4->sin_addr) == 1) {
		in4->sin_family = AF_INET;
		in4->sin_port = htons(port);
		len = sizeof(*in4);
	} else if (inet_pton(AF_INET6, addr, &in6->sin6_addr) == 1) {
		in6->sin6_family = AF_INET6;
		in6->sin6_port = htons(port);
		len = sizeof(*in6);
	} else {
		return -1;
	}
	fd = socket(ss.ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -1;
	if (connect(fd, (struct sockaddr *)&ss, len) < 0 && errno != EINPROGRESS) {
		close(fd);
		return -1;
	}
	return fd;
}

enum asked {
	ASKED_SETTLED,	 /* ended: settled at its charge */
	ASKED_RUNNING,	 /* running: held */
	ASKED_SILENT,	 /* no state from the service: held */
	ASKED_NOT_ASKED, /* its session runs, or someone ended the row first */
};
static const char *const action_names[] = {"settled", "held", "held", "not-asked"};

struct outcome {
	enum asked a;
	const char *why;    /* for the table */
	const char *ledger; /* the row's state after */
	struct mediator_job j;
};

/* One job asked and its row ended, or not. -errno (a ledger error: err). */
static int ask(struct ledger *l, const struct pending *p, uint64_t timeout_ms, struct outcome *o,
	       struct err *err)
{
	char method[8] = "";
	const char *path = strchr(p->status, ' ');
	struct jobs_io io = {.arg = (void *)p->address, .dial = dial};
	int rc;

	*o = (struct outcome){.ledger = p->state};
	snprintf(o->j.id, sizeof(o->j.id), "%s", p->job);
	snprintf(o->j.admission, sizeof(o->j.admission), "%s", p->admission);
	snprintf(o->j.name, sizeof(o->j.name), "%s", p->host);
	o->j.port = p->port;
	if (strcmp(p->state, "unknown") != 0) {
		/* Reserved by a mediator that is alive: its session runs, and
		 * reconciles the job itself at its end. */
		o->a = ASKED_NOT_ASKED;
		o->why = "its session is running";
		return 0;
	}
	if (path && (size_t)(path - p->status) < sizeof(method))
		snprintf(method, sizeof(method), "%.*s", (int)(path - p->status), p->status);
	if (!path || !method[0] || !jobs_status(&io, &o->j, method, path + 1, timeout_ms)) {
		o->a = ASKED_SILENT;
		o->why = "the service did not answer with a state: held";
		if (!o->j.remote[0])
			snprintf(o->j.remote, sizeof(o->j.remote), "no-answer");
		return 0;
	}
	if (!jobs_state_ended(o->j.remote)) {
		o->a = ASKED_RUNNING;
		o->why = "still running: held";
		return 0;
	}
	rc = ledger_job_settle(l, p->op, o->j.has_charge, o->j.charge, err);
	if (rc == -ENOENT) {
		o->a = ASKED_NOT_ASKED;
		o->why = "ended meanwhile by someone else";
		o->ledger = "settled";
		return 0;
	}
	if (rc < 0)
		return rc;
	if (!o->j.has_charge)
		o->j.charge = p->bound;
	o->a = ASKED_SETTLED;
	o->why = o->j.has_charge ? "settled at the service's charge" : "settled at its exposure";
	o->ledger = "settled";
	return 0;
}

static void print_json(const struct pending *p, const struct outcome *o, bool first)
{
	char s[200], h[300], r[80], adm[120], job[160];

	evidence_json_string(p->session, s, sizeof(s));
	evidence_json_string(p->host, h, sizeof(h));
	evidence_json_string(o->j.remote, r, sizeof(r));
	evidence_json_string(p->admission, adm, sizeof(adm));
	evidence_json_string(p->job, job, sizeof(job));
	printf("%s\n  {\"op\":%lld,\"job\":%s,\"submitted_by\":%s,\"session\":%s,\"lease\":\"%s\","
	       "\"session_end\":\"%s\",\"service\":%s,\"port\":%u,\"address\":\"%s\","
	       "\"remote_state\":%s,\"charge\":",
	       first ? "" : ",", (long long)p->op, job, adm, s, p->outlive ? "outlive" : "session",
	       p->session_end, h, p->port, p->address, o->j.remote[0] ? r : "null");
	if (o->a == ASKED_SETTLED || (o->a == ASKED_RUNNING && o->j.has_charge))
		printf("%llu", (unsigned long long)o->j.charge);
	else
		printf("null");
	printf(",\"charge_known\":%s,\"exposure\":%llu,\"action\":\"%s\",\"ledger\":\"%s\"}",
	       o->j.has_charge ? "true" : "false", (unsigned long long)p->bound, action_names[o->a],
	       o->ledger);
}

static void print_row(const struct pending *p, const struct outcome *o)
{
	char charge[24] = "-", service[POLICY_NET_NAME_MAX + 8];

	if (o->a == ASKED_SETTLED || (o->a == ASKED_RUNNING && o->j.has_charge))
		snprintf(charge, sizeof(charge), "%llu", (unsigned long long)o->j.charge);
	snprintf(service, sizeof(service), "%s:%u", p->host, p->port);
	printf("%-6lld %-12.12s %-9s %-11s %8llu %8s  %-9s %-22s %s\n", (long long)p->op, p->job,
	       p->session_end, o->j.remote[0] ? o->j.remote : "-", (unsigned long long)p->bound,
	       charge, o->ledger, service, o->why);
}

int budget_jobs(struct ledger *l, const char *budget, bool json, uint64_t timeout_ms,
		struct err *err)
{
	struct pendings ps = {0};
	unsigned n[4] = {0, 0, 0, 0};
	int rc = ledger_each_job(l, collect, &ps, err);

	if (rc >= 0 && ps.oom)
		rc = err_set(err, ENOMEM, "out of memory");
	if (rc < 0) {
		free(ps.p);
		return rc;
	}
	if (json)
		printf("{\"budget\":\"%s\",\"jobs\":[", budget);
	else
		printf("%-6s %-12s %-9s %-11s %8s %8s  %-9s %-22s %s\n", "OP", "JOB", "AT-END",
		       "REMOTE", "EXPOSURE", "CHARGE", "LEDGER", "SERVICE", "WHAT HAPPENED");
	for (size_t i = 0; i < ps.n && rc >= 0; i++) {
		struct outcome o;

		rc = ask(l, &ps.p[i], timeout_ms, &o, err);
		if (rc < 0)
			break;
		n[o.a]++;
		if (json)
			print_json(&ps.p[i], &o, i == 0);
		else
			print_row(&ps.p[i], &o);
	}
	if (json)
		printf("%s],\"settled\":%u,\"running\":%u,\"no_answer\":%u,\"not_asked\":%u}\n",
		       ps.n ? "\n" : "", n[ASKED_SETTLED], n[ASKED_RUNNING], n[ASKED_SILENT],
		       n[ASKED_NOT_ASKED]);
	else
		printf("\n%zu jobs: %u settled, %u still running (held), %u not answered (held), "
		       "%u not asked\n",
		       ps.n, n[ASKED_SETTLED], n[ASKED_RUNNING], n[ASKED_SILENT],
		       n[ASKED_NOT_ASKED]);
	free(ps.p);
	if (rc < 0)
		return rc;
	return n[ASKED_SILENT] ? 2 : 0;
}
