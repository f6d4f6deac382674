/* Command-line parsing for paddock run. */
#include "launcher.h"

#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../include/io.h"

void options_free(struct options *o)
{
	for (size_t i = 0; i < o->n_binds; i++)
		free((char *)o->binds[i].spec);
	free(o->binds);
	free(o->protect);
	free(o->setenv);
	for (size_t i = 0; i < o->n_env_pass; i++)
		free(o->env_pass[i]);
	free(o->env_pass);
	free(o->config_policy);
	free(o->ports);
	free(o->allow_net);
	memset(o, 0, sizeof(*o));
}

static int grow(void **arr, size_t n, size_t size)
{
	void *p = realloc(*arr, (n + 1) * size);

	if (!p)
		return -ENOMEM;
	*arr = p;
	return 0;
}

/* --bind SRC[:DST]: a relative SRC is taken from the current directory (not
 * resolved: the policy then refuses "..", and the mount refuses symlinks). */
static int add_bind(struct options *o, const char *arg, bool ro, struct err *err)
{
	char cwd[PATH_MAX];
	const char *colon = strchr(arg, ':');
	size_t srclen = colon ? (size_t)(colon - arg) : strlen(arg);
	char *spec;
	int n;

	if (srclen == 0 || (colon && colon[1] == '\0'))
		return err_set(err, EINVAL, "--%s %s: expected SRC[:DST]", ro ? "ro-bind" : "bind",
			       arg);
	if (arg[0] == '/') {
		n = asprintf(&spec, "%.*s:%s", (int)srclen, arg, colon ? colon + 1 : "");
	} else {
		if (!getcwd(cwd, sizeof(cwd)))
			return err_sys(err, errno, "getcwd");
		n = asprintf(&spec, "%s/%.*s:%s", cwd, (int)srclen, arg, colon ? colon + 1 : "");
	}
	if (n < 0)
		return err_set(err, ENOMEM, "out of memory");
	/* "SRC:" means DST = SRC; strip it back to "SRC". */
	if (!colon)
		spec[strlen(spec) - 1] = '\0';
	if (grow((void **)&o->binds, o->n_binds, sizeof(*o->binds)) < 0) {
		free(spec);
		return err_set(err, ENOMEM, "out of memory");
	}
	o->binds[o->n_binds].spec = spec;
	o->binds[o->n_binds++].readonly = ro;
	return 0;
}

static int add_str(const char ***arr, size_t *n, const char *s, struct err *err)
{
	if (grow((void **)arr, *n, sizeof(**arr)) < 0)
		return err_set(err, ENOMEM, "out of memory");
	(*arr)[(*n)++] = s;
	return 0;
}

enum {
	OPT_BIND = 256,
	OPT_RO_BIND,
	OPT_PROTECT,
	OPT_SETENV,
	OPT_CWD,
	OPT_INIT,
	OPT_DETACH,
	OPT_NAME,
	OPT_PORT,
	OPT_ALLOW_NET,
	OPT_RECORD_REQUIRED,
	OPT_POLICY,
	OPT_TTL,
	OPT_NO_TTY,
	OPT_APPROVALS,
	OPT_ENV_FILE,
	OPT_RM,
	OPT_SECRETS,
	OPT_PROJECT_POLICY,
	OPT_NO_CONFIG,
	OPT_TRACE_DENIALS,
};

/* --env NAME: the value from our environment, never from argv (other
 * users see argv in ps; the environment only the owner). */
static int add_env(struct options *o, const char *name, struct err *err)
{
	const char *v;
	char *entry;

	if (strchr(name, '='))
		return err_set(err, EINVAL,
			       "--env %.*s=...: takes a NAME; the value is taken from your "
			       "environment, never from the command line, where other users see it "
			       "(use --setenv NAME=VALUE for a value that is no secret)",
			       (int)strcspn(name, "="), name);
	if (!policy_env_name_ok(name, strlen(name)))
		return err_set(err, EINVAL,
			       "--env %s: not a variable name (A-Z a-z 0-9 _, not starting with a "
			       "digit)",
			       name);
	v = getenv(name);
	if (!v)
		return err_set(err, ENOENT, "--env %s: not set in your environment", name);
	if (asprintf(&entry, "%s=%s", name, v) < 0)
		return err_set(err, ENOMEM, "out of memory");
	if (grow((void **)&o->env_pass, o->n_env_pass, sizeof(*o->env_pass)) < 0) {
		free(entry);
		return err_set(err, ENOMEM, "out of memory");
	}
	o->env_pass[o->n_env_pass++] = entry;
	return 0;
}

#define ENV_FILE_MAX (1 << 20)

static const char *lookup_env(const char *name)
{
	return getenv(name);
}

/* --env-file FILE: a regular file (a FIFO or a device would hang or never
 * end), read whole, env_file_parse()d. */
static int add_env_file(struct options *o, const char *path, struct err *err)
{
	int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	const char *why = "";
	size_t line = 0;
	struct stat st;
	char *buf;
	ssize_t n;
	int rc;

	if (fd < 0)
		return err_sys(err, errno, "--env-file %s", path);
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
		close(fd);
		return err_set(err, EINVAL, "--env-file %s: not a regular file", path);
	}
	buf = malloc(ENV_FILE_MAX + 1);
	n = buf ? read_full(fd, buf, ENV_FILE_MAX + 1) : -ENOMEM;
	close(fd);
	if (n > ENV_FILE_MAX)
		n = -EFBIG;
	if (n < 0) {
		free(buf);
		return err_sys(err, (int)-n, "--env-file %s", path);
	}
	rc = policy_env_file_parse(buf, (size_t)n, lookup_env, &o->env_pass, &o->n_env_pass, &line,
				   &why);
	free(buf);
	if (rc == -EINVAL)
		return err_set(err, EINVAL, "--env-file %s:%zu: %s", path, line, why);
	if (rc < 0)
		return err_set(err, ENOMEM, "out of memory");
	return 0;
}

static const struct option long_opts[] = {
    {"policy", required_argument, NULL, OPT_POLICY},
    {"workspace", required_argument, NULL, 'w'},
    {"record", required_argument, NULL, 'r'},
    {"record-required", no_argument, NULL, OPT_RECORD_REQUIRED},
    {"ttl", required_argument, NULL, OPT_TTL},
    {"tty", no_argument, NULL, 't'},
    {"no-tty", no_argument, NULL, OPT_NO_TTY},
    {"weaken", required_argument, NULL, 'W'},
    {"bind", required_argument, NULL, OPT_BIND},
    {"ro-bind", required_argument, NULL, OPT_RO_BIND},
    {"protect", required_argument, NULL, OPT_PROTECT},
    {"setenv", required_argument, NULL, OPT_SETENV},
    {"env", required_argument, NULL, 'e'},
    {"env-file", required_argument, NULL, OPT_ENV_FILE},
    {"cwd", required_argument, NULL, OPT_CWD},
    {"init", required_argument, NULL, OPT_INIT},
    {"explain", no_argument, NULL, 'E'},
    {"detach", no_argument, NULL, OPT_DETACH},
    {"rm", no_argument, NULL, OPT_RM},
    {"no-config", no_argument, NULL, OPT_NO_CONFIG},
    {"trace-denials", no_argument, NULL, OPT_TRACE_DENIALS},
    {"name", required_argument, NULL, OPT_NAME},
    {"port", required_argument, NULL, 'p'},
    {"allow-net", required_argument, NULL, OPT_ALLOW_NET},
    {"approvals", required_argument, NULL, OPT_APPROVALS},
    {"secrets", required_argument, NULL, OPT_SECRETS},
    {"project-policy", required_argument, NULL, OPT_PROJECT_POLICY},
    {"help", no_argument, NULL, 'h'},
    {NULL, 0, NULL, 0},
};

static const char run_usage[] =
    "Usage: paddock run [OPTION]... [--] CMD [ARG]...\n"
    "Run CMD in a new sandbox built from a JSON policy, as an ordinary user.\n"
    "\n"
    "      --policy FILE      policy file (default: the built-in agent policy)\n"
    "      --project-policy FILE\n"
    "                         the project's policy (default: .paddock/policy.json\n"
    "                         of the workspace, when there is one), applied in\n"
    "                         place of --policy only when paddock trust approved\n"
    "                         its exact bytes there; else a warning (recorded)\n"
    "  -w, --workspace DIR    value of ${WORKSPACE} (default: the current directory,\n"
    "                         unless it is your home or above it)\n"
    "  -r, --record FILE      write the completion record (JSON) to FILE\n"
    "      --record-required  exit 122 when the record cannot be written\n"
    "                         (otherwise: a warning, the workload's status)\n"
    "      --ttl DUR          end the sandbox after DUR (500ms, 2s, 5m, 1h);\n"
    "                         overrides the policy's limits.ttl (the built-in\n"
    "                         policy's: 1h); an expired run exits 124\n"
    "  -W, --weaken KNOB      turn one protection off, for evaluation only:\n"
    "                         rw-binds, no-pidns, host-net, no-seccomp,\n"
    "                         no-landlock, no-new-session, no-sweep,\n"
    "                         no-owner-check, exec-host-mounts, no-protect,\n"
    "                         host-root, direct-stdio, proxy-env-only,\n"
    "                         dns-open, gate-off, verbose-denial, retry-unbounded,\n"
    "                         credential-any-audience, lease-port-only,\n"
    "                         trust-path-only, signature-only,\n"
    "                         check-then-charge, unpriced-as-free,\n"
    "                         release-on-timeout, no-seq, raw-export,\n"
    "                         evidence-in-sandbox, trust-tool-claim,\n"
    "                         lookup-fail-open, local-exit-is-stop,\n"
    "                         unknown-event-allow, redact-plain-only,\n"
    "                         exec-plain-seccomp, exec-unhardened\n"
    "                         (repeatable; recorded)\n"
    "  -t, --tty              give the workload a terminal (a pty of the sandbox's\n"
    "                         own) even when stdin is not one\n"
    "      --no-tty           never a terminal: pipes, even when stdin is one\n"
    "                         (default: a terminal when stdin is a terminal; the\n"
    "                         workload never gets the caller's fds 0-2 themselves)\n"
    "      --bind SRC[:DST]   add a writable bind mount\n"
    "      --ro-bind SRC[:DST] add a read-only bind mount\n"
    "      --protect PATH     add a protected path (read-only, cannot be created)\n"
    "      --setenv NAME=VAL  set a variable in the workload's environment\n"
    "  -e, --env NAME         pass NAME with its value from your environment (for\n"
    "                         secrets: never on the command line, names only in\n"
    "                         the record)\n"
    "      --env-file FILE    pass NAME=VALUE lines of FILE (or NAME: from your\n"
    "                         environment); # comments\n"
    "      --cwd DIR          working directory inside the sandbox\n"
    "  -p, --port HOST:PORT:SANDBOXPORT\n"
    "                         forward HOST:PORT on the host's loopback (127.0.0.1\n"
    "                         or [::1]; PORT \"auto\": SANDBOXPORT if free, else any)\n"
    "                         to SANDBOXPORT on the sandbox's loopback (repeatable)\n"
    "      --allow-net HOST[:PORT]\n"
    "                         let the sandbox reach HOST (a name, or *.SUFFIX) on\n"
    "                         PORT (default 443: TLS; 80: HTTP; else plain TCP)\n"
    "                         through the mediator; the network becomes mediated\n"
    "                         (docs/network.md; repeatable)\n"
    "      --approvals FILE   approvals of the release gate, written before the run:\n"
    "                         lines \"sha256:HEX HOST:PORT/PATH\", each releasing one\n"
    "                         publication of that body to that destination (the\n"
    "                         file: the caller's, not group/other-writable)\n"
    "      --secrets FILE     the secrets file of the policy's brokered credentials\n"
    "                         (NAME=VALUE lines; yours, mode 0600; read only by\n"
    "                         the mediator: the workload sees placeholders;\n"
    "                         overrides network.secrets)\n"
    "      --init PATH        the paddock-init binary to use\n"
    "      --explain          print the effective sandbox and exit; starts nothing\n"
    "      --detach           print the session id once the workload started and\n"
    "                         exit 0; the sandbox runs on (see paddock ps, stop, wait)\n"
    "      --rm               remove the session's entry and output when it ends\n"
    "      --trace-denials    say on stderr (and count in the record) each system\n"
    "                         call the seccomp filter refuses, as it happens\n"
    "      --no-config        ignore the defaults file ($XDG_CONFIG_HOME/paddock/\n"
    "                         config.json; PADDOCK_CONFIG=FILE names another)\n"
    "      --name NAME        name the session ([A-Za-z0-9_.-], at most 64); one\n"
    "                         live session per name\n"
    "  -h, --help             show this help\n"
    "\n"
    "Exit status: the workload's; 128+N if it died by signal N; 125 launcher or\n"
    "policy error; 126 command not executable; 127 command not found. With\n"
    "--detach: 0 once the workload started (paddock wait gives its status).\n"
    "See paddock(1) and paddock-policy(5).\n";

int options_parse(int argc, char **argv, struct options *o, struct err *err)
{
	uint64_t bit;
	int c, r;

	memset(o, 0, sizeof(*o));
	/* 0: glibc starts afresh, also inside a "-it" a call before left. */
	optind = 0;
	opterr = 0;
	/* "+": stop at the first non-option, which starts the command. */
	while ((c = getopt_long(argc, argv, "+:p:w:r:tW:e:h", long_opts, NULL)) != -1) {
		switch (c) {
		case OPT_POLICY:
			o->policy_path = optarg;
			break;
		case OPT_PROJECT_POLICY:
			o->project_policy = optarg;
			break;
		case 't':
			o->tty = OPT_TTY_YES;
			break;
		case OPT_NO_TTY:
			o->tty = OPT_TTY_NO;
			break;
		case 'w':
			o->workspace = optarg;
			break;
		case 'r':
			o->record_path = optarg;
			break;
		case OPT_TTL:
			if (policy_parse_duration(optarg, &o->ttl_ms) < 0 || o->ttl_ms == 0)
				return err_set(
				    err, EINVAL,
				    "--ttl %s: invalid duration (use e.g. 500ms, 2s, 5m, 1h)",
				    optarg);
			o->has_ttl = true;
			break;
		case 'W':
			if (weaken_parse(optarg, &bit) < 0) {
				char known[256];

				if (weaken_known(known, sizeof(known), optarg) > 0)
					return err_set(
					    err, EINVAL,
					    "--weaken %s: unknown knob (did you mean: %s?)", optarg,
					    known);
				return err_set(
				    err, EINVAL,
				    "--weaken %s: unknown knob (paddock run --help lists "
				    "the %d knobs)",
				    optarg, weaken_named());
			}
			o->weaken |= bit;
			break;
		case OPT_BIND:
		case OPT_RO_BIND:
			r = add_bind(o, optarg, c == OPT_RO_BIND, err);
			if (r < 0)
				return r;
			break;
		case OPT_PROTECT:
			r = add_str(&o->protect, &o->n_protect, optarg, err);
			if (r < 0)
				return r;
			break;
		case OPT_SETENV:
			r = add_str(&o->setenv, &o->n_setenv, optarg, err);
			if (r < 0)
				return r;
			break;
		case 'e':
			r = add_env(o, optarg, err);
			if (r < 0)
				return r;
			break;
		case OPT_ENV_FILE:
			r = add_env_file(o, optarg, err);
			if (r < 0)
				return r;
			break;
		case 'p':
			r = add_str(&o->ports, &o->n_ports, optarg, err);
			if (r < 0)
				return r;
			break;
		case OPT_ALLOW_NET:
			r = add_str(&o->allow_net, &o->n_allow_net, optarg, err);
			if (r < 0)
				return r;
			break;
		case OPT_APPROVALS:
			o->approvals_path = optarg;
			break;
		case OPT_CWD:
			o->cwd = optarg;
			break;
		case OPT_SECRETS:
			o->secrets_path = optarg;
			break;
		case OPT_INIT:
			o->init_path = optarg;
			break;
		case 'E':
			o->explain = true;
			break;
		case OPT_DETACH:
			o->detach = true;
			break;
		case OPT_RM:
			o->rm = true;
			break;
		case OPT_NO_CONFIG:
			o->no_config = true;
			break;
		case OPT_TRACE_DENIALS:
			o->trace_denials = true;
			break;
		case OPT_RECORD_REQUIRED:
			o->record_required = true;
			break;
		case OPT_NAME:
			if (!session_name_valid(optarg))
				return err_set(
				    err, EINVAL,
				    "--name %s: invalid name (1 to 64 of A-Z a-z 0-9 _ . -)",
				    optarg);
			o->name = optarg;
			break;
		case 'h':
			fputs(run_usage, stdout);
			return 1;
		case ':':
			return err_set(err, EINVAL, "%s: needs an argument", argv[optind - 1]);
		default:
			/* A short one inside a cluster ("-it") is optopt; the
			 * word before is not it. Docker's -i needs no flag here. */
			if (optopt == 'i')
				return err_set(
				    err, EINVAL,
				    "-i: not needed: stdin is always relayed to the "
				    "workload (-t gives it a terminal, as docker run -it)");
			if (optopt)
				return err_set(err, EINVAL,
					       "-%c: unknown option (see paddock run --help)",
					       optopt);
			return err_set(err, EINVAL, "%s: unknown option (see paddock run --help)",
				       argv[optind - 1]);
		}
	}
	if (o->tty == OPT_TTY_YES && o->detach)
		return err_set(err, EINVAL, "--tty and --detach: a detached run has no terminal");
	if (optind >= argc && !o->explain)
		return err_set(err, EINVAL, "no command given (see paddock run --help)");
	o->argv = argv + optind;
	return 0;
}
