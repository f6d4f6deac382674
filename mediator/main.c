/* paddock-mediator: started by paddock's supervisor for a sandbox whose
 * policy says "network": {"mode": "mediated"} (docs/network.md). Not meant
 * to be run by hand.
 *
 *   paddock-mediator --config-fd N
 *
 * N holds a JSON object: {"session": ID, "generation": G, "log_fd": FD,
 * "key": HEX (the run's evidence key: the admissions log is chained),
 * "policy": TEXT, "listeners": [{"fd": FD, "kind": "proxy"|"tcp"|
 * "dns-udp"|"dns-tcp", "port": P}, ...]} and, for the release gate,
 * "control_fd": FD (paddock approve, through the supervisor), "approvals":
 * TEXT (the approvals file's) and "gate_off": true (--weaken gate-off);
 * the listening sockets were bound
 * inside the sandbox's network namespace by the supervisor before the
 * workload started, and TEXT is a policy holding the effective "network".
 * The mediator itself stays in the caller's namespaces: every upstream
 * dial is the host's. Brokered credentials (credentials.c): "credentials":
 * [{"env": NAME, "placeholder": "pdk_..."}, ...] and "secrets": PATH, the
 * secrets file it reads itself (the secrets are never in this config);
 * "any_audience": true for --weaken credential-any-audience, "redact_plain_only":
 * true for --weaken redact-plain-only. It runs until SIGTERM (the
 * supervisor's, at the end of the session) or the supervisor's death (PR_SET_PDEATHSIG). Exit 0, or
 * 125 with one line on stderr for a bad configuration. */
#include "mediator.h"

#include <cjson/cJSON.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/signalfd.h>
#include <unistd.h>

#include "../include/cleanup.h"
#include "../include/exitcodes.h"
#include "../include/io.h"

#define CONFIG_MAX (1 << 20)

struct config {
	char session[64];
	unsigned generation;
	int log_fd;
	struct policy *policy;
	struct approval *approvals;
	struct mediator_credentials cred;
	char budget_dir[PATH_MAX];
};

/* The placeholders the supervisor made and the secrets file: read here,
 * the secrets kept in memory that is never dumped (credentials.c). */
static int load_credentials(const cJSON *root, struct config *c, const unsigned char *key,
			    struct err *err)
{
	const cJSON *cs = cJSON_GetObjectItemCaseSensitive(root, "credentials");
	const cJSON *sf = cJSON_GetObjectItemCaseSensitive(root, "secrets"), *it;
	int r;

	if (!cs && !policy_has_credentials(c->policy))
		return 0;
	if (!cJSON_IsArray(cs) || !cJSON_IsString(sf))
		return err_set(err, EINVAL, "config: credentials and secrets are required");
	cJSON_ArrayForEach(it, cs) {
		const cJSON *e = cJSON_GetObjectItemCaseSensitive(it, "env");
		const cJSON *ph = cJSON_GetObjectItemCaseSensitive(it, "placeholder");

		if (!cJSON_IsString(e) || !cJSON_IsString(ph))
			return err_set(err, EINVAL, "config: bad credential");
		r = mediator_credentials_add(&c->cred, e->valuestring, ph->valuestring, err);
		if (r < 0)
			return r;
	}
	c->cred.any_audience = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(root, "any_audience"));
	c->cred.plain_only =
	    cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(root, "redact_plain_only"));
	return mediator_credentials_load(&c->cred, sf->valuestring, c->policy, key, err);
}

static int listener_kind(const char *s, enum mediator_listener_kind *out)
{
	static const char *const names[] = {"proxy", "tcp", "dns-udp", "dns-tcp"};

	for (int i = 0; i < 4; i++)
		if (strcmp(s, names[i]) == 0) {
			*out = (enum mediator_listener_kind)i;
			return 0;
		}
	return -EINVAL;
}

static int read_config(int fd, cJSON **out, struct err *err)
{
	cleanup_free char *buf = malloc(CONFIG_MAX + 1);
	ssize_t n;

	if (!buf)
		return err_set(err, ENOMEM, "out of memory");
	n = read_full(fd, buf, CONFIG_MAX + 1);
	if (n < 0)
		return err_sys(err, n, "config");
	if (n > CONFIG_MAX)
		return err_set(err, E2BIG, "config: larger than %d bytes", CONFIG_MAX);
	*out = cJSON_ParseWithLength(buf, (size_t)n);
	return *out ? 0 : err_set(err, EINVAL, "config: not JSON");
}

/* The release gate's part of the configuration. */
static int gate_config(const cJSON *root, struct config *c, struct mediator_config *mc,
		       struct err *err)
{
	const cJSON *off = cJSON_GetObjectItemCaseSensitive(root, "gate_off");
	const cJSON *ap = cJSON_GetObjectItemCaseSensitive(root, "approvals");

	mc->gate_off = cJSON_IsTrue(off);
	if (!ap)
		return 0;
	if (!cJSON_IsString(ap) || approvals_parse(ap->valuestring, strlen(ap->valuestring),
						   &c->approvals, &mc->n_approvals, err) < 0)
		return err_wrap(err, "config: approvals");
	mc->approvals = c->approvals;
	return 0;
}

/* Metered rules: the ledgers' directory ("budget_dir", checked by the
 * supervisor and again by ledger.c), how long a locked ledger is waited
 * for ("ledger_busy_ms", default 2000) and the budgets' weakenings. */
static int budget_config(const cJSON *root, struct config *c, struct mediator_config *mc,
			 struct err *err)
{
	const cJSON *d = cJSON_GetObjectItemCaseSensitive(root, "budget_dir");
	const cJSON *b = cJSON_GetObjectItemCaseSensitive(root, "ledger_busy_ms");

	if (d && !cJSON_IsString(d))
		return err_set(err, EINVAL, "config: bad budget_dir");
	if (d) {
		snprintf(c->budget_dir, sizeof(c->budget_dir), "%s", d->valuestring);
		mc->budget_dir = c->budget_dir;
	}
	mc->ledger_busy_ms = cJSON_IsNumber(b) && b->valuedouble >= 0 && b->valuedouble <= 60000
				 ? (unsigned)b->valuedouble
				 : 2000;
	mc->check_then_charge =
	    cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(root, "check_then_charge"));
	mc->unpriced_free = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(root, "unpriced_free"));
	mc->release_on_timeout =
	    cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(root, "release_on_timeout"));
	mc->local_exit_is_stop =
	    cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(root, "local_exit_is_stop"));
	mc->unknown_event_allow =
	    cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(root, "unknown_event_allow"));
	mc->lookup_fail_open =
	    cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(root, "lookup_fail_open"));
	return 0;
}

/* The supervisor's control channel (paddock approve), if any. */
static int add_control(const cJSON *root, struct mediator *m, struct err *err)
{
	const cJSON *fd = cJSON_GetObjectItemCaseSensitive(root, "control_fd");
	int r;

	if (!fd)
		return 0;
	if (!cJSON_IsNumber(fd))
		return err_set(err, EINVAL, "config: bad control_fd");
	r = mediator_add_listener(m, (int)fd->valuedouble, MEDIATOR_CONTROL, 0);
	return r < 0 ? err_sys(err, r, "control channel") : 0;
}

static int load(const cJSON *root, struct config *c, struct mediator **m, struct err *err)
{
	static const struct policy_vars vars = {.workspace = "/", .home = "/", .pwd = "/"};
	const cJSON *s = cJSON_GetObjectItemCaseSensitive(root, "session");
	const cJSON *g = cJSON_GetObjectItemCaseSensitive(root, "generation");
	const cJSON *lf = cJSON_GetObjectItemCaseSensitive(root, "log_fd");
	const cJSON *k = cJSON_GetObjectItemCaseSensitive(root, "key");
	const cJSON *p = cJSON_GetObjectItemCaseSensitive(root, "policy");
	const cJSON *ls = cJSON_GetObjectItemCaseSensitive(root, "listeners"), *it;
	const cJSON *up = cJSON_GetObjectItemCaseSensitive(root, "dns_upstream");
	struct mediator_config mc;
	int r;

	if (!cJSON_IsString(s) || !cJSON_IsNumber(g) || !cJSON_IsNumber(lf) || !cJSON_IsString(p) ||
	    !cJSON_IsArray(ls) || !cJSON_IsString(k) ||
	    strlen(k->valuestring) != 2 * EVIDENCE_KEY_LEN)
		return err_set(err, EINVAL,
			       "config: session, generation, log_fd, policy and "
			       "listeners are required");
	snprintf(c->session, sizeof(c->session), "%s", s->valuestring);
	c->generation = (unsigned)g->valuedouble;
	c->log_fd = (int)lf->valuedouble;
	r = policy_load_buffer(p->valuestring, strlen(p->valuestring), &vars, &c->policy, err);
	if (r < 0)
		return err_wrap(err, "config: policy");
	if (c->policy->network != POLICY_NET_MEDIATED)
		return err_set(err, EINVAL, "config: the policy's network is not mediated");
	mc = (struct mediator_config){.policy = c->policy,
				      .session = c->session,
				      .generation = c->generation,
				      .log_fd = c->log_fd};
	for (int i = 0; i < EVIDENCE_KEY_LEN; i++) {
		unsigned v;

		if (sscanf(k->valuestring + 2 * i, "%2x", &v) != 1)
			return err_set(err, EINVAL, "config: bad key");
		mc.key[i] = (unsigned char)v;
	}
	r = load_credentials(root, c, mc.key, err);
	if (r < 0)
		return r;
	if (c->cred.n)
		mc.cred = &c->cred;
	if (up && (!cJSON_IsString(up) ||
		   dns_parse_upstream(up->valuestring, &mc.dns_upstream, &mc.dns_upstream_len) < 0))
		return err_set(err, EINVAL,
			       "--weaken dns-open: the upstream resolver %s is not ADDR:PORT or "
			       "[ADDR6]:PORT (PADDOCK_DNS_UPSTREAM)",
			       cJSON_IsString(up) ? up->valuestring : "?");
	r = gate_config(root, c, &mc, err);
	if (r < 0)
		return r;
	/* --weaken verbose-denial, retry-unbounded (HB-23). */
	mc.verbose_denial = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(root, "verbose_denial"));
	mc.trace_denials = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(root, "trace_denials"));
	mc.retry_unbounded =
	    cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(root, "retry_unbounded"));
	r = budget_config(root, c, &mc, err);
	if (r < 0)
		return r;
	mc.log_unsequenced =
	    cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(root, "log_unsequenced"));
	r = mediator_new(&mc, m);
	if (r < 0)
		return err_sys(err, r, "mediator");
	cJSON_ArrayForEach(it, ls) {
		const cJSON *fd = cJSON_GetObjectItemCaseSensitive(it, "fd");
		const cJSON *kind = cJSON_GetObjectItemCaseSensitive(it, "kind");
		const cJSON *port = cJSON_GetObjectItemCaseSensitive(it, "port");
		enum mediator_listener_kind lk;

		if (!cJSON_IsNumber(fd) || !cJSON_IsString(kind) ||
		    listener_kind(kind->valuestring, &lk) < 0)
			return err_set(err, EINVAL, "config: bad listener");
		r = mediator_add_listener(*m, (int)fd->valuedouble, lk,
					  cJSON_IsNumber(port) ? (uint16_t)port->valuedouble : 0);
		if (r < 0)
			return err_sys(err, r, "listener");
	}
	return add_control(root, *m, err);
}

int main(int argc, char **argv)
{
	struct config c = {.log_fd = -1};
	struct mediator *m = NULL;
	struct err err = {0};
	cJSON *root = NULL;
	sigset_t set;
	int sfd, r, ready_fd = -1;
	bool served = false;

	if (argc >= 2 && strcmp(argv[1], "--budget") == 0)
		return budget_main(argc - 1, argv + 1);
	if (argc != 3 || strcmp(argv[1], "--config-fd") != 0) {
		fputs("usage: paddock-mediator --config-fd N (started by paddock run)\n", stderr);
		return EXIT_LAUNCHER;
	}
	/* Nothing it runs may gain privileges; nothing may ptrace it. */
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0 || prctl(PR_SET_DUMPABLE, 0) < 0 ||
	    prctl(PR_SET_PDEATHSIG, SIGTERM) < 0) {
		perror("paddock-mediator: prctl");
		return EXIT_LAUNCHER;
	}
	signal(SIGPIPE, SIG_IGN);
	/* A file size limit (RLIMIT_FSIZE) on the log: its writes fail with
	 * EFBIG and count as lost lines (network.on_capture_loss applies),
	 * rather than SIGXFSZ ending the mediator and the network with it. */
	signal(SIGXFSZ, SIG_IGN);
	/* Two fds per connection, CONNS_MAX connections: the soft fd limit
	 * up to the hard one (no privilege needed). */
	{
		struct rlimit rl;

		if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
			rl.rlim_cur = rl.rlim_max > 65536 ? 65536 : rl.rlim_max;
			(void)setrlimit(RLIMIT_NOFILE, &rl);
		}
	}
	sigemptyset(&set);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGINT);
	sigprocmask(SIG_BLOCK, &set, NULL);
	sfd = signalfd(-1, &set, SFD_CLOEXEC);
	r = read_config(atoi(argv[2]), &root, &err);
	if (r >= 0) {
		/* Where the supervisor waits for "ok" or our one error. */
		const cJSON *rf = cJSON_GetObjectItemCaseSensitive(root, "ready_fd");

		ready_fd = cJSON_IsNumber(rf) ? (int)rf->valuedouble : -1;
		r = load(root, &c, &m, &err);
	}
	cJSON_Delete(root);
	if (r >= 0 && sfd < 0)
		r = err_sys(&err, errno, "signalfd");
	if (ready_fd >= 0) {
		/* The one line: said by the supervisor (paddock: ...). */
		if (r >= 0)
			(void)!write(ready_fd, "ok\n", 3);
		else
			dprintf(ready_fd, "error %s\n", err.msg[0] ? err.msg : "failed to start");
	}
	served = r >= 0;
	if (r >= 0)
		r = mediator_run(m, sfd);
	/* The session ended: its remote jobs did not (jobs.c). Before the
	 * last word, so the supervisor reads their ends in the log. */
	if (served)
		mediator_end_jobs(m);
	/* The last word on the ready pipe: the lines lost since the last
	 * one written, which no line of the log can say (its file system
	 * full to the end); the supervisor puts them in the checkpoint. */
	if (ready_fd >= 0) {
		if (served)
			dprintf(ready_fd, "end %lu\n", mediator_log_lost(m));
		close(ready_fd);
	}
	if (r < 0 && err.msg[0] && (ready_fd < 0 || served))
		fprintf(stderr, "paddock-mediator: %s\n", err.msg);
	mediator_free(m);
	mediator_credentials_free(&c.cred);
	policy_free(c.policy);
	free(c.approvals);
	return r < 0 ? EXIT_LAUNCHER : 0;
}
