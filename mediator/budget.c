/* paddock budget show|settle|export (docs/network.md, "Budgets"): the
 * operator's view of a budget's ledger, run as
 *
 *   paddock-mediator --budget DIR show|export BUDGET [--json|--table]
 *   paddock-mediator --budget DIR settle BUDGET OP CHARGE
 *   paddock-mediator --budget DIR jobs BUDGET [--json] [--timeout DURATION]
 *
 * by `paddock budget`, so that SQLite stays in paddock-mediator alone.
 * Opening a ledger recovers it first: a reservation of a process that is
 * gone becomes unknown (never released). Exit 0, or 125 with one line
 * (jobs: 2 too, budget_jobs.c). */
#include "mediator.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "../include/exitcodes.h"

static int fail(const char *msg)
{
	fprintf(stderr, "paddock: budget: %s\n", msg);
	return EXIT_LAUNCHER;
}

static void json_op(const struct ledger_op *op, void *arg)
{
	bool *first = arg;
	char k[80], s[160], r[700], st[32], src[64];

	evidence_json_string(op->op_key, k, sizeof(k));
	evidence_json_string(op->session, s, sizeof(s));
	evidence_json_string(op->route, r, sizeof(r));
	evidence_json_string(op->state, st, sizeof(st));
	evidence_json_string(op->source, src, sizeof(src));
	printf("%s\n  {\"id\":%lld,\"op_key\":%s,\"session\":%s,\"route\":%s,\"bound\":%llu,"
	       "\"charge\":",
	       *first ? "" : ",", (long long)op->id, k, s, r, (unsigned long long)op->bound);
	if (op->has_charge)
		printf("%llu", (unsigned long long)op->charge);
	else
		printf("null");
	printf(",\"state\":%s,\"source\":%s,\"created_ms\":%lld,\"ended_ms\":%lld}", st, src,
	       (long long)op->created_ms, (long long)op->ended_ms);
	*first = false;
}

static void table_op(const struct ledger_op *op, void *arg)
{
	bool live_only = *(bool *)arg;
	char charge[24] = "-";

	if (live_only && strcmp(op->state, "reserved") != 0 && strcmp(op->state, "unknown") != 0)
		return;
	if (op->has_charge)
		snprintf(charge, sizeof(charge), "%llu", (unsigned long long)op->charge);
	printf("%-6lld %-9s %8llu %8s  %-10s %-12.12s %s\n", (long long)op->id, op->state,
	       (unsigned long long)op->bound, charge, op->source, op->session, op->route);
}

static void totals_json(const char *budget, const struct ledger_totals *t)
{
	printf("{\"budget\":\"%s\",\"cap\":", budget);
	if (t->has_cap)
		printf("%llu", (unsigned long long)t->cap);
	else
		printf("null");
	printf(",\"reserved\":%llu,\"unknown\":%llu,\"settled\":%llu,\"held\":%llu,"
	       "\"operations\":%llu,\"unknown_operations\":%llu",
	       (unsigned long long)t->reserved, (unsigned long long)t->unknown,
	       (unsigned long long)t->settled,
	       (unsigned long long)(t->reserved + t->unknown + t->settled),
	       (unsigned long long)t->ops, (unsigned long long)t->n_unknown);
}

static void totals_table(const char *budget, const struct ledger_totals *t)
{
	uint64_t held = t->reserved + t->unknown + t->settled;

	printf("budget     %s\n", budget);
	if (t->has_cap)
		printf("cap        %llu\nremaining  %llu\n", (unsigned long long)t->cap,
		       (unsigned long long)(t->cap > held ? t->cap - held : 0));
	printf("settled    %llu\nreserved   %llu\nunknown    %llu (%llu operations: settle "
	       "them from the receiver's records)\noperations %llu\n",
	       (unsigned long long)t->settled, (unsigned long long)t->reserved,
	       (unsigned long long)t->unknown, (unsigned long long)t->n_unknown,
	       (unsigned long long)t->ops);
}

static int parse_credits(const char *s, uint64_t *out)
{
	char *end;
	unsigned long long v;

	if (!*s || strspn(s, "0123456789") != strlen(s))
		return -EINVAL;
	v = strtoull(s, &end, 10);
	if (*end || v > POLICY_METER_CREDITS_MAX)
		return -EINVAL;
	*out = v;
	return 0;
}

int budget_main(int argc, char **argv)
{
	const char *dir, *verb, *budget;
	bool json, live_only = false, first = true;
	struct ledger_totals t;
	struct ledger *l = NULL;
	struct err err = {0};
	char path[PATH_MAX], msg[PATH_MAX + 128];
	struct stat st;
	unsigned recovered = 0;
	uint64_t timeout_ms = 2000;
	int rc;

	if (argc < 4)
		return fail("usage: paddock budget show|export|settle|jobs BUDGET ...");
	dir = argv[1];
	verb = argv[2];
	budget = argv[3];
	if (strcmp(verb, "show") && strcmp(verb, "export") && strcmp(verb, "settle") &&
	    strcmp(verb, "jobs"))
		return fail("unknown verb (known: show, export, settle, jobs)");
	if (!policy_budget_id_valid(budget)) {
		snprintf(msg, sizeof(msg),
			 "%.64s: not a budget id (1 to 64 of a-z, 0-9, '_', '.', '-')", budget);
		return fail(msg);
	}
	json = strcmp(verb, "export") == 0;
	if (strcmp(verb, "jobs") == 0) {
		for (int i = 4; i < argc; i++) {
			if (strcmp(argv[i], "--json") == 0) {
				json = true;
			} else if (strcmp(argv[i], "--timeout") == 0 && i + 1 < argc) {
				if (policy_parse_duration(argv[++i], &timeout_ms) < 0 ||
				    timeout_ms < 1 || timeout_ms > 60000)
					return fail("jobs: --timeout: a duration from 1ms to 60s "
						    "(e.g. 2s)");
			} else {
				return fail("jobs: unknown option (known: --json, --timeout "
					    "DURATION)");
			}
		}
	} else if (strcmp(verb, "settle") != 0) {
		if (argc > 5)
			return fail("too many arguments");
		if (argc == 5 && strcmp(argv[4], "--json") == 0)
			json = true;
		else if (argc == 5 && strcmp(argv[4], "--table") == 0)
			json = false;
		else if (argc == 5)
			return fail("unknown option (known: --json, --table)");
	} else if (argc != 6) {
		return fail("usage: paddock budget settle BUDGET OP CHARGE");
	}
	/* No ledger is made by looking at one. */
	snprintf(path, sizeof(path), "%s/%s.sqlite", dir, budget);
	if (lstat(path, &st) < 0) {
		snprintf(msg, sizeof(msg), "%s: no ledger (%s)", budget, path);
		return fail(msg);
	}
	rc = ledger_open(dir, budget, 5000, &l, &err);
	if (rc >= 0)
		rc = ledger_recover(l, &recovered, &err);
	if (rc >= 0 && strcmp(verb, "settle") == 0) {
		uint64_t charge;
		char *end;
		long long id = strtoll(argv[4], &end, 10);

		if (*end || id <= 0 || parse_credits(argv[5], &charge) < 0) {
			ledger_close(l);
			return fail(
			    "settle: OP is an operation's id (paddock budget show), CHARGE a "
			    "whole number of credits");
		}
		rc = ledger_operator_settle(l, id, charge, &err);
		if (rc >= 0)
			printf("settled %lld at %llu credits\n", id, (unsigned long long)charge);
		ledger_close(l);
		return rc < 0 ? fail(err.msg) : 0;
	}
	if (rc >= 0 && strcmp(verb, "jobs") == 0) {
		rc = budget_jobs(l, budget, json, timeout_ms, &err);
		ledger_close(l);
		return rc < 0 ? fail(err.msg) : rc;
	}
	if (rc >= 0)
		rc = ledger_totals(l, &t, &err);
	if (rc < 0) {
		ledger_close(l);
		return fail(err.msg);
	}
	if (json) {
		totals_json(budget, &t);
		printf(",\"ops\":[");
		rc = ledger_each(l, json_op, &first, &err);
		printf("%s]}\n", first ? "" : "\n");
	} else {
		totals_table(budget, &t);
		live_only = strcmp(verb, "show") == 0;
		printf("\n%-6s %-9s %8s %8s  %-10s %-12s %s\n", "OP", "STATE", "BOUND", "CHARGE",
		       "SOURCE", "SESSION", "ROUTE");
		rc = ledger_each(l, table_op, &live_only, &err);
	}
	ledger_close(l);
	return rc < 0 ? fail(err.msg) : 0;
}
