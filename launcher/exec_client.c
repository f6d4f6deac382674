/* paddock exec's client (exec_client.h): the options, the request, and the
 * wait for the command's end, for the launcher's `exec` verb and for the
 * static paddock-exec alike. */
#include "exec_client.h"

#include <getopt.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <termios.h>
#include <unistd.h>

#include "../include/cleanup.h"
#include "../include/exitcodes.h"
#include "../include/log.h"
#include "../policy/policy.h"
#include "session/session.h"

static const char usage[] =
    "Usage: %s [-t|--no-tty] [--cwd DIR] [--setenv NAME=VAL]... ID|NAME [--] CMD "
    "[ARG]...\n"
    "Run CMD in a running session of the caller's: in its namespaces, with the\n"
    "hardening of its workload (no capabilities, no_new_privs, Landlock, seccomp),\n"
    "its environment and cwd. CMD is a process of the session: it ends when the\n"
    "session ends (exit 128+N, 137 after SIGKILL), and it is killed when paddock\n"
    "exec goes away. SIGINT, SIGTERM, SIGHUP and SIGQUIT are passed on to it.\n"
    "CMD never gets our fds 0-2: its stdio is a pty of the sandbox's own (with -t,\n"
    "the default when stdin is a terminal) or pipes, relayed until CMD ends; then\n"
    "the relay closes and what CMD left in its process group is killed.\n"
    "  -t, --tty          a terminal for CMD even when stdin is not one\n"
    "      --no-tty       pipes, even when stdin is a terminal\n"
    "  --cwd DIR          working directory inside (default: the policy's cwd)\n"
    "  --setenv NAME=VAL  set a variable in CMD's environment (repeatable)\n"
    "  -h, --help         show this help\n"
    "\n"
    "Exit status: CMD's; 128+N if it died by signal N; 126 not executable; 127\n"
    "not found; 125 paddock error (no such session, not the caller's, ended, bad\n"
    "arguments), with nothing started.\n";

static const int passed_on[] = {SIGINT, SIGTERM, SIGHUP, SIGQUIT};

int exec_client_parse(int argc, char **argv, const char *prog, struct exec_args *a, struct err *err)
{
	static const struct option opts[] = {
	    {"cwd", required_argument, NULL, 'c'}, {"setenv", required_argument, NULL, 'e'},
	    {"help", no_argument, NULL, 'h'},	   {"tty", no_argument, NULL, 't'},
	    {"no-tty", no_argument, NULL, 'T'},	   {NULL, 0, NULL, 0},
	};
	const char *eq;
	int ch;

	optind = 1;
	opterr = 0;
	/* "+": options end at the session, before the command. */
	while ((ch = getopt_long(argc, argv, "+:ht", opts, NULL)) != -1) {
		switch (ch) {
		case 'c':
			if (optarg[0] != '/')
				return err_set(err, EINVAL, "--cwd %s: not an absolute path",
					       optarg);
			a->cwd = optarg;
			break;
		case 'e':
			eq = strchr(optarg, '=');
			if (!eq)
				return err_set(err, EINVAL, "--setenv %s: expected NAME=VALUE",
					       optarg);
			if (!policy_env_name_ok(optarg, (size_t)(eq - optarg)))
				return err_set(err, EINVAL, "--setenv %s: invalid variable name",
					       optarg);
			/* At most argc of them: the array is sized once. */
			if (!a->setenv && !(a->setenv = calloc((size_t)argc, sizeof(char *))))
				return err_set(err, ENOMEM, "out of memory");
			a->setenv[a->n_setenv++] = optarg;
			break;
		case 't':
			a->tty = 1;
			break;
		case 'T':
			a->tty = 0;
			break;
		case 'h':
			printf(usage, prog);
			return 1;
		case ':':
			return err_set(err, EINVAL, "%s: needs an argument", argv[optind - 1]);
		default:
			return err_set(err, EINVAL, "%s: unknown option (see paddock exec --help)",
				       argv[optind - 1]);
		}
	}
	if (optind >= argc)
		return err_set(err, EINVAL, "exec: no session given (see paddock exec --help)");
	a->session = argv[optind++];
	if (optind < argc && strcmp(argv[optind], "--") == 0)
		optind++;
	if (optind >= argc)
		return err_set(err, EINVAL, "exec: no command given (see paddock exec --help)");
	a->argv = argv + optind;
	return 0;
}

/* The request with our fds 0, 1 and 2 attached. */
static int send_request(int fd, const char *pkt, size_t len, struct err *err)
{
	union {
		char buf[CMSG_SPACE(3 * sizeof(int))];
		struct cmsghdr align;
	} u;
	int fds[3] = {0, 1, 2};
	struct iovec iov = {.iov_base = (void *)pkt, .iov_len = len};
	struct msghdr mh = {.msg_iov = &iov,
			    .msg_iovlen = 1,
			    .msg_control = u.buf,
			    .msg_controllen = sizeof(u.buf)};
	struct cmsghdr *c = CMSG_FIRSTHDR(&mh);

	memset(u.buf, 0, sizeof(u.buf));
	c->cmsg_level = SOL_SOCKET;
	c->cmsg_type = SCM_RIGHTS;
	c->cmsg_len = CMSG_LEN(sizeof(fds));
	memcpy(CMSG_DATA(c), fds, sizeof(fds));
	if (sendmsg(fd, &mh, MSG_NOSIGNAL) < 0) {
		int e = errno;
		char why[256];
		ssize_t n;

		/* Refused at the connect ("error busy": more clients at once
		 * than the control socket takes) and closed: the words are
		 * still ours to read. */
		n = (e == EPIPE || e == ECONNRESET)
			? cli_recv_reply(fd, why, sizeof(why), MSG_DONTWAIT)
			: -1;
		if (n > 6 && strncmp(why, "error ", 6) == 0)
			return err_set(err, EBUSY, "%.*s", (int)n - 6, why + 6);
		return err_sys(err, e, "exec request");
	}
	return 0;
}

/* The end of the command, as the helper reports it: the exit status. */
static int outcome(const char *id, const char *cmd, const char *m)
{
	int v;

	if (sscanf(m, "exit %d", &v) == 1 && v >= 0 && v <= 255)
		return v;
	if (sscanf(m, "signal %d", &v) == 1 && v > 0 && v < 128)
		return EXIT_SIGNAL_BASE + v;
	if (sscanf(m, "exec-error %d", &v) == 1) {
		cli_fail("%s: %s", cmd, strerror(v));
		return v == ENOENT || v == ENOTDIR ? EXIT_NOTFOUND : EXIT_NOEXEC;
	}
	if (strncmp(m, "error ", 6) == 0) {
		/* The supervisor's refusals name the session already. */
		if (strncmp(m + 6, "session ", 8) == 0)
			return cli_fail("%s", m + 6);
		return cli_fail("session %s: %s", id, m + 6);
	}
	return cli_fail("session %s: unexpected reply", id);
}

/* -t: our terminal raw while CMD runs (the helper relays it to the pty,
 * whose own line discipline then does echo, ^C, ^Z), restored whatever the
 * way out; only from the terminal's foreground (else tcsetattr stops us
 * with SIGTTOU, and the input is not ours to take). */
static struct termios saved;
static bool raw;

static void tty_raw(void)
{
	struct termios t;

	if (!isatty(0) || tcgetpgrp(0) != getpgrp() || tcgetattr(0, &saved) < 0)
		return;
	t = saved;
	cfmakeraw(&t);
	raw = tcsetattr(0, TCSADRAIN, &t) == 0;
}

static void tty_restore(void)
{
	if (raw)
		(void)tcsetattr(0, TCSADRAIN, &saved);
	raw = false;
}

/* Until the helper reports: signals are passed on as "signal N", a
 * window size change as "winch". */
static int await(int fd, int sfd, const char *id, const char *cmd)
{
	char buf[SESSION_REPLY_MAX];

	for (;;) {
		struct pollfd p[2] = {{.fd = fd, .events = POLLIN}, {.fd = sfd, .events = POLLIN}};
		struct signalfd_siginfo si;
		ssize_t n;

		if (poll(p, 2, -1) < 0) {
			if (errno == EINTR)
				continue;
			return cli_fail("poll: %s", strerror(errno));
		}
		while ((p[1].revents & POLLIN) && read(sfd, &si, sizeof(si)) == sizeof(si)) {
			if (si.ssi_signo == SIGWINCH)
				snprintf(buf, sizeof(buf), "winch");
			else
				snprintf(buf, sizeof(buf), "signal %u", si.ssi_signo);
			(void)!send(fd, buf, strlen(buf), MSG_NOSIGNAL);
		}
		if (!p[0].revents)
			continue;
		n = cli_recv_reply(fd, buf, sizeof(buf), 0);
		if (n <= 0)
			return cli_fail(
			    "session %s: the connection closed without the command's status", id);
		return outcome(id, cmd, buf);
	}
}

int exec_client_start(int argc, char **argv, const char *prog, struct exec_args *a, char **pkt,
		      size_t *len)
{
	struct err err = {0};
	int rc = exec_client_parse(argc, argv, prog, a, &err);

	log_debug("exec: client start");
	if (rc == 0) {
		if (a->tty < 0)
			a->tty = isatty(0);
		rc = session_exec_encode(a->cwd, a->setenv, a->n_setenv, a->argv, a->tty == 1, pkt,
					 len, &err);
	}
	free(a->setenv);
	a->setenv = NULL;
	if (rc > 0)
		return 0; /* --help */
	return rc < 0 ? cli_fail("%s", err.msg) : -1;
}

int exec_client_run(const struct exec_args *a, int fd, const char *id, const char *pkt, size_t len)
{
	struct err err = {0};
	cleanup_close int sfd = -1;
	sigset_t set;
	int rc;

	/* Blocked before the request goes: a signal from then on is queued
	 * and passed on, never lost or fatal to us alone. */
	sigemptyset(&set);
	for (size_t i = 0; i < sizeof(passed_on) / sizeof(passed_on[0]); i++)
		sigaddset(&set, passed_on[i]);
	if (a->tty)
		sigaddset(&set, SIGWINCH);
	if (sigprocmask(SIG_BLOCK, &set, NULL) < 0 ||
	    (sfd = signalfd(-1, &set, SFD_CLOEXEC | SFD_NONBLOCK)) < 0)
		return cli_fail("signalfd: %s", strerror(errno));
	log_debug("exec: connected");
	if (send_request(fd, pkt, len, &err) < 0)
		return cli_fail("session %s: %s", id, err.msg);
	if (a->tty)
		tty_raw();
	rc = await(fd, sfd, id, a->argv[0]);
	tty_restore();
	log_debug("exec: reply");
	return rc;
}
