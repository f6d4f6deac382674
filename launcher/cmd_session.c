/* paddock ps, stop, wait and rm: acting on sessions from outside. They read
 * the caller's registry and talk to a session's supervisor over its control
 * socket; none of them signals a process itself. The supervisor holds the
 * sandbox's pidfd, while a pid read from a file may since have been given
 * to another process: a session whose supervisor is not the process that
 * registered it (pid and start time) is stale, and is only cleaned up. */
#include "launcher.h"

#include <fcntl.h>
#include <getopt.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "../include/cleanup.h"
#include "../include/exitcodes.h"
#include "../include/io.h"

enum {
	CMD_ALL = 1u << 0,
	CMD_JSON = 1u << 1,
	CMD_GRACE = 1u << 2,
	CMD_FOLLOW = 1u << 3,
};

struct cmd {
	const char *name;
	const char *usage;
	unsigned allowed; /* CMD_* */
	int min_args, max_args;
	/* parsed */
	bool all, json, has_grace, follow;
	uint64_t grace_ms;
	char **args;
	int n_args;
};

/* Returns 0, 1 after --help, or -EINVAL with err set. */
static int parse(struct cmd *c, int argc, char **argv, struct err *err)
{
	static const struct option all[] = {
	    {"all", no_argument, NULL, 'a'},
	    {"json", no_argument, NULL, 'j'},
	    {"grace", required_argument, NULL, 'g'},
	    {"follow", no_argument, NULL, 'f'},
	};
	static const unsigned bits[] = {CMD_ALL, CMD_JSON, CMD_GRACE, CMD_FOLLOW};
	static const char *const short_of[] = {"a", "", "g:", "f"};
	struct option opts[6] = {{"help", no_argument, NULL, 'h'}};
	char shorts[12] = "+:h";
	size_t n = 1;
	int ch;

	/* This command's options only, so that getopt names an option of
	 * another command as unknown. */
	for (size_t i = 0; i < 4; i++) {
		if (!(c->allowed & bits[i]))
			continue;
		opts[n++] = all[i];
		strcat(shorts, short_of[i]);
	}
	optind = 1;
	opterr = 0;
	while ((ch = getopt_long(argc, argv, shorts, opts, NULL)) != -1) {
		switch (ch) {
		case 'a':
			c->all = true;
			break;
		case 'j':
			c->json = true;
			break;
		case 'f':
			c->follow = true;
			break;
		case 'g':
			if (policy_parse_duration(optarg, &c->grace_ms) < 0)
				return err_set(
				    err, EINVAL,
				    "--grace %s: invalid duration (use e.g. 0s, 500ms, 5s; "
				    "at most 30 days)",
				    optarg);
			c->has_grace = true;
			break;
		case 'h':
			fputs(c->usage, stdout);
			return 1;
		case ':':
			return err_set(err, EINVAL, "%s: needs an argument", argv[optind - 1]);
		default:
			return err_set(err, EINVAL, "%s: unknown option (see paddock %s --help)",
				       argv[optind - 1], c->name);
		}
	}
	c->args = argv + optind;
	c->n_args = argc - optind;
	if (c->n_args < c->min_args)
		return err_set(err, EINVAL, "%s: no session given (see paddock %s --help)", c->name,
			       c->name);
	if (c->n_args > c->max_args)
		return err_set(err, EINVAL, "%s: unexpected argument '%s'", c->name,
			       c->args[c->max_args]);
	return 0;
}

/* -------------------------------------------------------------- requests */

#define STOPPED_MS 2000

/* One request over the session's control socket, and its one reply. */
static int ask(const struct registry *reg, const struct session_info *info, const char *req,
	       char *reply, size_t size, struct err *err)
{
	cleanup_close int fd = cli_dial(reg, info, err);
	ssize_t n;

	if (fd < 0)
		return fd;
	if (send(fd, req, strlen(req), MSG_NOSIGNAL) < 0)
		return err_sys(err, errno, "session %s: control socket", info->id);
	/* A supervisor that is stopped (SIGSTOP, a debugger) never answers:
	 * after STOPPED_MS of it, say so (-ETIMEDOUT) instead of hanging. */
	for (int stopped_ms = 0;;) {
		struct pollfd pfd = {.fd = fd, .events = POLLIN};
		int r = poll(&pfd, 1, 200);

		if (r < 0 && errno == EINTR)
			continue;
		if (r != 0)
			break;
		/* wait may wait for as long as the supervisor is held. */
		if (strncmp(req, "stop", 4) != 0)
			continue;
		stopped_ms = proc_stopped(&info->supervisor) ? stopped_ms + 200 : 0;
		if (stopped_ms >= STOPPED_MS)
			return err_set(
			    err, ETIMEDOUT,
			    "session %s: its supervisor (pid %d) is stopped and does not "
			    "answer",
			    info->id, (int)info->supervisor.pid);
	}
	n = cli_recv_reply(fd, reply, size, MSG_DONTWAIT);
	if (n <= 0)
		return err_set(err, EPIPE, "session %s: the supervisor went away", info->id);
	if (strncmp(reply, "error ", 6) == 0)
		return err_set(err, EPERM, "session %s: %s", info->id, reply + 6);
	return 0;
}

/* "wait" or "stop [MS]": the status from the reply, or, when the supervisor
 * ended without answering (it just finished), from its entry. */
static int until_ended(struct registry *reg, struct session_info *info, const char *req,
		       int *status, struct err *err)
{
	char reply[SESSION_REPLY_MAX];
	int rc;

	if (info->state == SESSION_ENDED) {
		*status = info->status;
		if (info->final_lost)
			fprintf(stderr,
				"paddock: warning: session %s: its final state could not be "
				"written; status %d (%s) is from the name its supervisor left\n",
				info->id, info->status, info->ended);
		return 0;
	}
	rc = ask(reg, info, req, reply, sizeof(reply), err);
	if (rc >= 0 && sscanf(reply, "status %d", status) == 1)
		return 0;
	if (rc >= 0)
		return err_set(err, EPROTO, "session %s: unexpected reply", info->id);
	if (session_read(reg, info->id, info, NULL) == 0 && info->state == SESSION_ENDED) {
		*status = info->status;
		return 0;
	}
	return rc;
}

/* -------------------------------------------------------------- commands */

static void short_time(const char *iso, char *buf, size_t size)
{
	/* "2026-01-02T03:04:05.678Z" -> "2026-01-02T03:04:05Z" */
	if (!iso[0])
		snprintf(buf, size, "-");
	else
		snprintf(buf, size, "%.19sZ", iso);
}

/* One line per service under its session: who holds the lease (owner uid,
 * session generation), until when, and its state. */
static void print_leases(const struct session_info *i)
{
	for (size_t k = 0; k < i->n_leases; k++) {
		const struct session_lease *l = &i->leases[k];
		char expires[32];

		short_time(l->expires, expires, sizeof(expires));
		printf("  lease %-20s  owner %u  gen %u  pid %d  expires %s  %s%s%s\n", l->service,
		       (unsigned)i->owner, i->generation, (int)l->pid, expires, l->state,
		       l->ended[0] ? " " : "", l->ended);
	}
}

/* "127.0.0.1:40123->8080,[::1]:8080->8080", or "-". */
static void ports_text(const struct session_info *v, char *buf, size_t size)
{
	size_t off = 0;

	snprintf(buf, size, "-");
	for (size_t i = 0; i < v->n_endpoints && off < size; i++) {
		int n = snprintf(buf + off, size - off, "%s%s->%u", i ? "," : "",
				 v->endpoints[i].host, v->endpoints[i].sandbox);

		if (n < 0)
			break;
		off += (size_t)n;
	}
}

/* STATUS: how an ended or retained session ended and its exit status, one
 * word ("exit(42)", "signal(9)", "expired(124)", "stopped(143)"); "-"
 * while it runs. */
static void status_text(const struct session_info *v, char *buf, size_t size)
{
	if ((v->state != SESSION_ENDED && v->state != SESSION_RETAINED) || !v->ended[0])
		snprintf(buf, size, "-");
	else if (strcmp(v->ended, "signal") == 0 && v->status > EXIT_SIGNAL_BASE)
		snprintf(buf, size, "signal(%d)", v->status - EXIT_SIGNAL_BASE);
	else
		snprintf(buf, size, "%s(%d)", v->ended, v->status);
}

/* AGE: since created, in the largest unit (45s, 12m, 3h, 2d). */
static void age_text(const char *created, char *buf, size_t size)
{
	struct tm tm = {0};
	time_t then, now = time(NULL);
	long s;

	if (!strptime(created, "%Y-%m-%dT%H:%M:%S", &tm) || (then = timegm(&tm)) == (time_t)-1) {
		snprintf(buf, size, "-");
		return;
	}
	s = now > then ? (long)(now - then) : 0;
	if (s < 120)
		snprintf(buf, size, "%lds", s);
	else if (s < 7200)
		snprintf(buf, size, "%ldm", s / 60);
	else if (s < 172800)
		snprintf(buf, size, "%ldh", s / 3600);
	else
		snprintf(buf, size, "%ldd", s / 86400);
}

static void print_table(const struct session_info *v, size_t n, bool all)
{
	printf("%-12s  %-20s  %4s  %-8s  %-13s  %8s  %4s  %-20s  %-24s  %s\n", "ID", "NAME", "GEN",
	       "STATE", "STATUS", "PID", "AGE", "EXPIRES", "PORTS", "COMMAND");
	for (size_t i = 0; i < n; i++) {
		char pid[16] = "-", age[32], expires[32], status[40],
		     ports[SESSION_ENDPOINTS_MAX * 80];

		if (v[i].state == SESSION_ENDED && !all)
			continue;
		if (v[i].init.pid > 0 &&
		    (v[i].state == SESSION_RUNNING || v[i].state == SESSION_RETAINED))
			snprintf(pid, sizeof(pid), "%d", (int)v[i].init.pid);
		age_text(v[i].created, age, sizeof(age));
		short_time(v[i].state == SESSION_ENDED ? "" : v[i].expires, expires,
			   sizeof(expires));
		status_text(&v[i], status, sizeof(status));
		ports_text(&v[i], ports, sizeof(ports));
		printf("%-12s  %-20s  %4u  %-8s  %-13s  %8s  %4s  %-20s  %-24s  %s\n", v[i].id,
		       v[i].name[0] ? v[i].name : "-", v[i].generation,
		       session_state_name(v[i].state), status, pid, age, expires,
		       v[i].state == SESSION_ENDED ? "-" : ports,
		       v[i].command[0] ? v[i].command : "-");
		print_leases(&v[i]);
	}
}

static int print_json(const struct session_info *v, size_t n, bool all)
{
	bool first = true;

	fputs("[", stdout);
	for (size_t i = 0; i < n; i++) {
		cleanup_free char *text = NULL;

		if (v[i].state == SESSION_ENDED && !all)
			continue;
		text = session_info_json(&v[i]);
		if (!text)
			return -ENOMEM;
		printf("%s%s", first ? "" : ",\n", text);
		first = false;
	}
	puts("]");
	return 0;
}

int cmd_ps(int argc, char **argv)
{
	struct cmd c = {.name = "ps",
			.usage = "Usage: paddock ps [--all] [--json]\n"
				 "List the caller's sessions: running ones, and with --all ended "
				 "ones too.\n"
				 "A session whose supervisor is gone is shown once as stale and "
				 "removed.\n"
				 "  -a, --all    also ended sessions (until paddock rm)\n"
				 "      --json   one JSON array of session.json objects\n",
			.allowed = CMD_ALL | CMD_JSON};
	struct registry reg = {.fd = -1};
	cleanup_free struct session_info *v = NULL;
	struct err err = {0};
	size_t n = 0;
	int rc = parse(&c, argc, argv, &err);

	if (rc != 0)
		return rc > 0 ? 0 : cli_fail("%s", err.msg);
	rc = session_registry_open(&reg, false, &err);
	if (rc == -ENOENT)
		rc = 0; /* no registry yet: no sessions */
	else if (rc >= 0) {
		if (reg.warning[0])
			fprintf(stderr, "paddock: warning: %s\n", reg.warning);
		session_sweep(&reg);
		rc = session_list(&reg, &v, &n, &err);
	}
	if (rc < 0) {
		session_registry_close(&reg);
		return cli_fail("%s", err.msg);
	}
	for (size_t i = 0; i < n; i++)
		if (v[i].state == SESSION_STALE)
			(void)session_remove(&reg, v[i].id);
	session_registry_close(&reg);
	if (c.json && print_json(v, n, c.all) < 0)
		return cli_fail("out of memory");
	if (!c.json)
		print_table(v, n, c.all);
	return fflush(stdout) == 0 ? 0 : EXIT_LAUNCHER;
}

/* The supervisor is stopped and cannot end its sandbox: end it from here.
 * paddock-init is pid 1 of the sandbox's pid namespace, so SIGKILL to it
 * ends every process in it. By pidfd, opened first and then checked to be
 * the init the entry names (pid and start time), so a pid given to another
 * process since is never signalled. */
static int end_from_outside(const struct session_info *info, struct err *err)
{
	char why[sizeof(err->msg)];
	cleanup_close int pidfd = -1;

	snprintf(why, sizeof(why), "%s", err->msg);
	if (info->init.pid <= 0)
		return err_set(err, ETIMEDOUT, "%s; it has no sandbox to end", why);
	pidfd = (int)syscall(SYS_pidfd_open, info->init.pid, 0);
	if (pidfd < 0 || !proc_alive(&info->init))
		return err_set(err, ETIMEDOUT, "%s; its sandbox has ended", why);
	if (syscall(SYS_pidfd_send_signal, pidfd, SIGKILL, NULL, 0) < 0)
		return err_sys(err, errno, "%s; ending its sandbox (paddock-init %d)", why,
			       (int)info->init.pid);
	fprintf(stderr,
		"paddock: %s; ended its sandbox from outside (SIGKILL to paddock-init %d, which "
		"ends every process in it); the supervisor stays stopped until it is resumed "
		"(kill -CONT %d) or ended\n",
		why, (int)info->init.pid, (int)info->supervisor.pid);
	return 0;
}

int cmd_stop(int argc, char **argv)
{
	struct cmd c = {.name = "stop",
			.usage = "Usage: paddock stop [--grace DUR] ID|NAME\n"
				 "End a session of the caller's: SIGTERM to every process in it, "
				 "SIGKILL after\n"
				 "the grace period; returns once it has ended.\n"
				 "  -g, --grace DUR   grace period (default: the policy's "
				 "limits.grace)\n",
			.allowed = CMD_GRACE,
			.min_args = 1,
			.max_args = 1};
	struct registry reg = {.fd = -1};
	struct session_info info;
	struct err err = {0};
	char req[48] = "stop";
	int rc = parse(&c, argc, argv, &err), status;

	if (rc != 0)
		return rc > 0 ? 0 : cli_fail("%s", err.msg);
	if (c.has_grace)
		snprintf(req, sizeof(req), "stop %llu", (unsigned long long)c.grace_ms);
	rc = cli_lookup(&reg, c.args[0], &info, &err);
	if (rc >= 0)
		rc = until_ended(&reg, &info, req, &status, &err);
	if (rc == -ETIMEDOUT)
		rc = end_from_outside(&info, &err);
	session_registry_close(&reg);
	return rc < 0 ? cli_fail("%s", err.msg) : 0;
}

int cmd_wait(int argc, char **argv)
{
	struct cmd c = {.name = "wait",
			.usage =
			    "Usage: paddock wait ID|NAME\n"
			    "Wait until a session of the caller's has ended, and exit with its "
			    "status,\n"
			    "as its paddock run would have (128+N for signal N, 125, 126, 127).\n",
			.min_args = 1,
			.max_args = 1};
	struct registry reg = {.fd = -1};
	struct session_info info;
	struct err err = {0};
	int rc = parse(&c, argc, argv, &err), status = EXIT_LAUNCHER;

	if (rc != 0)
		return rc > 0 ? 0 : cli_fail("%s", err.msg);
	rc = cli_lookup(&reg, c.args[0], &info, &err);
	if (rc >= 0)
		rc = until_ended(&reg, &info, "wait", &status, &err);
	session_registry_close(&reg);
	return rc < 0 ? cli_fail("%s", err.msg) : status;
}

int cmd_rm(int argc, char **argv)
{
	struct cmd c = {.name = "rm",
			.usage =
			    "Usage: paddock rm ID|NAME...\n"
			    "Remove ended (or stale) sessions of the caller's from the registry, "
			    "with\n"
			    "their output files. A running session is refused: stop it first.\n",
			.min_args = 1,
			.max_args = 1 << 16};
	struct registry reg = {.fd = -1};
	struct err err = {0};
	int rc = parse(&c, argc, argv, &err), status = 0;

	if (rc != 0)
		return rc > 0 ? 0 : cli_fail("%s", err.msg);
	for (int i = 0; i < c.n_args; i++) {
		struct session_info info;

		rc = cli_lookup(&reg, c.args[i], &info, &err);
		session_registry_close(&reg);
		if (rc == -ESRCH)
			continue; /* stale: removed by lookup() */
		if (rc >= 0 && info.state != SESSION_ENDED)
			rc = err_set(&err, EBUSY, "session %s is still running (stop it first)",
				     info.id);
		if (rc >= 0 && (rc = session_registry_open(&reg, false, &err)) >= 0) {
			rc = session_remove(&reg, info.id);
			if (rc < 0)
				err_sys(&err, rc, "session %s: remove", info.id);
			session_registry_close(&reg);
		}
		if (rc < 0)
			status = cli_fail("%s", err.msg);
	}
	return status;
}

/* Copy what fd has from *off on to out; the new offset in *off. */
static int copy_new(int fd, off_t *off, int out)
{
	char buf[65536];
	ssize_t n;

	while ((n = pread(fd, buf, sizeof(buf), *off)) > 0) {
		if (write_full(out, buf, (size_t)n) < 0)
			return -errno;
		*off += n;
	}
	return n < 0 ? -errno : 0;
}

int cmd_logs(int argc, char **argv)
{
	struct cmd c = {.name = "logs",
			.usage = "Usage: paddock logs [-f] ID|NAME\n"
				 "Print a detached session's output: its stdout (and its "
				 "services') to stdout,\n"
				 "then its stderr to stderr (two files: the order between them "
				 "is not kept).\n"
				 "  -f, --follow   keep printing what comes until the session "
				 "has ended\n",
			.allowed = CMD_FOLLOW,
			.min_args = 1,
			.max_args = 1};
	struct registry reg = {.fd = -1};
	struct session_info info;
	struct err err = {0};
	int rc = parse(&c, argc, argv, &err), fds[2] = {-1, -1};
	off_t off[2] = {0, 0};

	if (rc != 0)
		return rc > 0 ? 0 : cli_fail("%s", err.msg);
	rc = cli_lookup(&reg, c.args[0], &info, &err);
	if (rc < 0) {
		session_registry_close(&reg);
		return cli_fail("%s", err.msg);
	}
	if (!info.detached) {
		session_registry_close(&reg);
		return cli_fail("session %s ran in the foreground: its output went to its caller, "
				"and paddock keeps none",
				info.id);
	}
	for (int i = 0; i < 2; i++) {
		char path[SESSION_ID_LEN + 16];

		snprintf(path, sizeof(path), "%s/%s", info.id, i ? "stderr" : "stdout");
		fds[i] = openat(reg.fd, path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
		if (fds[i] < 0 && errno != ENOENT) {
			rc = -errno;
			break;
		}
	}
	for (;;) {
		bool ended;

		for (int i = 0; rc >= 0 && i < 2; i++)
			if (fds[i] >= 0)
				rc = copy_new(fds[i], &off[i], i ? 2 : 1);
		if (rc < 0 || !c.follow)
			break;
		/* Ended (or gone): one last copy of what it wrote before. */
		ended = session_read(&reg, info.id, &info, NULL) < 0 ||
			info.state == SESSION_ENDED || info.state == SESSION_STALE;
		if (ended) {
			for (int i = 0; rc >= 0 && i < 2; i++)
				if (fds[i] >= 0)
					rc = copy_new(fds[i], &off[i], i ? 2 : 1);
			break;
		}
		usleep(100 * 1000);
	}
	for (int i = 0; i < 2; i++)
		if (fds[i] >= 0)
			close(fds[i]);
	session_registry_close(&reg);
	if (rc < 0)
		return cli_fail("logs of %s: %s", info.id, strerror(-rc));
	return 0;
}
