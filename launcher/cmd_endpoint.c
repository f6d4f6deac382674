/* paddock endpoint ID|NAME [SERVICE]: a session's current endpoints with
 * their leases (docs/sessions.md, "Endpoint identity"), for a client that
 * must check that what answers is the session, service and generation it
 * meant: the nonce an HTTP forward's relay stamps on every response, and
 * the lease host name whose origin is this generation's alone. Read from
 * the owner's session.json, which only the supervisor writes. */
#include "launcher.h"

#include <cjson/cJSON.h>
#include <getopt.h>
#include <stdio.h>
#include <string.h>

#include "../include/cleanup.h"
#include "../include/exitcodes.h"

static const char usage[] =
    "Usage: paddock endpoint [--json] ID|NAME [SERVICE]\n"
    "Print a live session's port forwards with their leases, one line each:\n"
    "  HOST:PORT sandbox=N protocol=tcp|http session=ID service=NAME|- gen=N\n"
    "  [nonce=HEX lease_host=gG.ID.paddock.test]\n"
    "An HTTP forward's relay stamps every response with\n"
    "  Paddock-Lease: session=ID; service=NAME; gen=N; nonce=HEX\n"
    "and refuses (421) a request for another lease host name.\n"
    "  SERVICE      only the forwards of that service (the port's \"service\")\n"
    "      --json   a JSON array of the endpoint objects of session.json\n";

static void print_line(const struct session_info *i, const struct session_endpoint *e)
{
	char name[96];

	printf("%s sandbox=%u protocol=%s session=%s service=%s gen=%u", e->host, e->sandbox,
	       e->http ? "http" : "tcp", i->id, e->service[0] ? e->service : "-", i->generation);
	if (e->http && e->nonce[0]) {
		session_lease_host(name, sizeof(name), i->id, i->generation);
		printf(" nonce=%s lease_host=%s", e->nonce, name);
	}
	putchar('\n');
}

/* The selected endpoints of session.json's own text, as it has them. */
static int print_json(const struct session_info *i, const char *service)
{
	cleanup_free char *text = session_info_json(i);
	cJSON *o = text ? cJSON_Parse(text) : NULL, *a, *e, *out = cJSON_CreateArray();
	char *s = NULL;
	size_t k = 0;

	a = o ? cJSON_GetObjectItemCaseSensitive(o, "endpoints") : NULL;
	for (e = a ? a->child : NULL; e && out; e = e->next, k++)
		if (!service || strcmp(i->endpoints[k].service, service) == 0)
			cJSON_AddItemToArray(out, cJSON_Duplicate(e, true));
	if (o && out)
		s = cJSON_Print(out);
	cJSON_Delete(o);
	cJSON_Delete(out);
	if (!s)
		return -ENOMEM;
	puts(s);
	cJSON_free(s);
	return 0;
}

int cmd_endpoint(int argc, char **argv)
{
	static const struct option opts[] = {
	    {"json", no_argument, NULL, 'j'}, {"help", no_argument, NULL, 'h'}, {0}};
	struct registry reg = {.fd = -1};
	struct session_info info;
	struct err err = {0};
	const char *service;
	bool json = false;
	size_t n = 0;
	int ch, rc;

	optind = 1;
	opterr = 0;
	while ((ch = getopt_long(argc, argv, "+h", opts, NULL)) != -1) {
		if (ch == 'h') {
			fputs(usage, stdout);
			return 0;
		}
		if (ch != 'j')
			return cli_bad_option(ch, argv, "endpoint");
		json = true;
	}
	if (argc - optind < 1)
		return cli_fail("endpoint: no session given (see paddock endpoint --help)");
	if (argc - optind > 2)
		return cli_fail("endpoint: unexpected argument '%s'", argv[optind + 2]);
	service = argc - optind == 2 ? argv[optind + 1] : NULL;
	rc = cli_lookup(&reg, argv[optind], &info, &err);
	session_registry_close(&reg);
	if (rc < 0)
		return cli_fail("%s", err.msg);
	/* An ended generation has no endpoint: its relay is gone, and the
	 * port may be another session's by now. */
	if (info.state != SESSION_RUNNING && info.state != SESSION_RETAINED)
		return cli_fail("session %s is %s: it has no live endpoint", info.id,
				session_state_name(info.state));
	for (size_t i = 0; i < info.n_endpoints; i++)
		if (!service || strcmp(info.endpoints[i].service, service) == 0)
			n++;
	if (n == 0)
		return cli_fail(service ? "session %s has no endpoint of service %s"
					: "session %s has no endpoint%s",
				info.id, service ? service : "");
	if (json) {
		if (print_json(&info, service) < 0)
			return cli_fail("out of memory");
	} else {
		for (size_t i = 0; i < info.n_endpoints; i++)
			if (!service || strcmp(info.endpoints[i].service, service) == 0)
				print_line(&info, &info.endpoints[i]);
	}
	return fflush(stdout) == 0 ? 0 : EXIT_LAUNCHER;
}
