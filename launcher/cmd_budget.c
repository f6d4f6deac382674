/* paddock budget show|export|settle|jobs BUDGET (docs/network.md, "Budgets"):
 * the operator's view of a budget's ledger, shared by every session of
 * the budget. The ledger is read by paddock-mediator (the only part of
 * paddock with SQLite in it), which this execs. */
#include "launcher.h"

#include <stdio.h>
#include <string.h>

#include "../include/exitcodes.h"
#include "supervisor/supervisor.h"

static const char usage[] =
    "Usage: paddock budget show BUDGET [--json]\n"
    "       paddock budget export BUDGET [--table]\n"
    "       paddock budget settle BUDGET OP CHARGE\n"
    "       paddock budget jobs BUDGET [--json] [--timeout DURATION]\n"
    "The ledger of a budget of metered rules ($XDG_STATE_HOME/paddock/budgets/BUDGET.sqlite,\n"
    "or ~/.local/state/paddock/budgets/...), shared by every session naming it.\n"
    "\n"
    "  show    the cap, what is settled, reserved and unknown, and the live\n"
    "          operations (reserved or unknown) as a table; --json: everything\n"
    "  export  every operation as JSON (--table: as a table)\n"
    "  settle  an unknown operation OP (its id in show) at CHARGE credits, the\n"
    "          charge the receiver's own records show for it\n"
    "  jobs    ask the service of each remote job whose row is unknown (retained\n"
    "          at its session's end, or not confirmed ended) for its status, once\n"
    "          (--timeout: each request, default 2s); settle an ended one at the\n"
    "          charge the service states (none: its exposure), leave the rest\n"
    "          held; what happened as a table (--json: JSON)\n"
    "\n"
    "An unknown operation was sent and got no answer: its bound stays held\n"
    "until it is settled here. Exit status: 0; 2 (jobs) a service did not\n"
    "answer, its rows held; 125 with one line why.\n"
    "See paddock(1) and docs/network.md.\n";

int cmd_budget(int argc, char **argv)
{
	struct err err = {0};

	if (argc < 2 || strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0) {
		fputs(usage, argc < 2 ? stderr : stdout);
		return argc < 2 ? EXIT_LAUNCHER : 0;
	}
	if (argc < 3)
		return cli_fail("budget %s: which budget? (see paddock budget --help)", argv[1]);
	budget_exec(argc - 1, argv + 1, &err);
	return cli_fail("%s", err.msg);
}
