/* Integration: namespaces, network, processes. What the workload can see
 * of the host's processes and network, what it is (PID 1, ids,
 * capabilities, fds), and that expiry leaves nothing behind, checked from
 * outside in the host's /proc. */
#include "harness.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/un.h>

TestSuite(ns, .init = h_init, .fini = h_fini, .timeout = 60);

static const char *probe_bind(void)
{
	const char *probe = h_fmt("%s/probe", h_helpers_dir());

	cr_assert(h_exists(probe), "%s missing: make build/tests/helpers/probe", probe);
	return h_fmt("%s:/probe", h_helpers_dir());
}

/* ------------------------------------------------------------- processes */

Test(ns, host_processes_are_invisible)
{
	struct h_world w = h_world();
	const char *marker = h_marker();
	struct h_proc host, p;
	pid_t found[4];

	/* A host process the sandbox must not see, with a unique marker. */
	h_spawn(&host, NULL, (char *[]){"/bin/sleep", "300", (char *)marker, NULL}, NULL);
	for (int i = 0; i < 100 && h_marker_pids(marker, found, 4) == 0; i++)
		h_sleep_ms(10);
	cr_assert_eq(h_marker_pids(marker, found, 4), 1, "the host sleep did not start");

	H_PADDOCK(&p, w.ws, "run", "--", "sh", "-c",
		  h_fmt("echo self=$$; printf 'pid1='; tr '\\0' ' ' < /proc/1/cmdline; echo; "
			"for f in /proc/[0-9]*/cmdline; do tr '\\0' ' ' < $f; echo; done; "
			"ps -eo pid=,args=; kill -0 %d 2>/dev/null && echo HOST-PID-RE''ACHABLE; "
			"ls -d /proc/[0-9]* | wc -l",
			(int)host.pid));
	cr_assert_eq(p.status, 0, H_SHOW(&p));
	cr_assert(!h_contains(p.out_text, marker), "the host process is visible\n" H_FMT,
		  H_ARGS(&p));
	cr_assert(!h_contains(p.out_text, "HOST-PID-REACHABLE"), H_SHOW(&p));
	/* PID 1 is paddock-init, the workload is its child, PID 2. */
	cr_assert(h_contains(p.out_text, "self=2\n"), H_SHOW(&p));
	cr_assert(h_contains(p.out_text, "pid1=paddock-init "), H_SHOW(&p));
	cr_assert(h_contains(p.out_text, " 1 paddock-init --control-fd"), H_SHOW(&p));
	cr_assert(!h_contains(p.out_text, "/sbin/init"), H_SHOW(&p));
	cr_assert(!h_contains(p.out_text, "criterion"), H_SHOW(&p));
}

Test(ns, expiry_ends_detached_descendants)
{
	struct h_world w = h_world();
	const char *marker = h_marker();
	struct h_proc p;
	pid_t left[16];
	size_t n;

	/* A detached descendant that ignores SIGTERM, then the workload sleeps. */
	H_PADDOCK(&p, w.ws, "run", "--ttl", "1s", "--record", w.record, "--", "sh", "-c",
		  h_fmt("setsid sh -c 'trap \"\" TERM; exec sleep 300 %s' & "
			"echo started; exec sleep 30 %s",
			marker, marker));
	/* 124, as timeout(1), whatever signal then ended it; and one line
	 * that says so. */
	cr_assert_eq(p.status, 124, H_SHOW(&p));
	cr_assert(h_contains(p.err_text, "paddock: time limit 1s reached; ended "), H_SHOW(&p));
	cr_assert_str_eq(h_json(w.record, "d['status']"), "124");
	cr_assert_lt(p.secs, 6.0, "expiry took too long\n" H_FMT, H_ARGS(&p));
	cr_assert(h_contains(p.out_text, "started\n"), H_SHOW(&p));
	n = h_marker_pids(marker, left, 16);
	cr_assert_eq(n, 0, "%zu process(es) of the sandbox left on the host, first pid %d", n,
		     n ? (int)left[0] : 0);
	cr_assert_str_eq(h_json(w.record, "d['ended']"), "\"expired\"");
	cr_assert_str_eq(h_json(w.record, "d['survivors']"), "[]");
	cr_assert_str_eq(h_json(w.record, "d['status']"), h_fmt("%d", p.status));
	/* A handful: every one named, the list not capped. */
	cr_assert_str_eq(h_json(w.record, "d['killed_capped']"), "false");
	cr_assert_str_eq(h_json(w.record, "d['killed_count'] == len(d['killed']) > 0"), "true");
}

/* Many leftovers: paddock-init names the first 64 per signal and counts
 * the rest; the record and the expiry line still say how many were ended,
 * and that the list is capped. 100 detached sleeps and the workload. */
Test(ns, expiry_of_many_names_64_and_counts_the_rest)
{
	struct h_world w = h_world();
	const char *marker = h_marker();
	struct h_proc p;
	pid_t left[16];
	const char *count;
	size_t n;

	H_PADDOCK(&p, w.ws, "run", "--ttl", "1s", "--record", w.record, "--", "sh", "-c",
		  h_fmt("i=0; while [ $i -lt 100 ]; do setsid sleep 300 %s & i=$((i + 1)); done; "
			"echo started; exec sleep 30 %s",
			marker, marker));
	cr_assert_eq(p.status, 124, H_SHOW(&p));
	cr_assert(h_contains(p.out_text, "started\n"), H_SHOW(&p));
	n = h_marker_pids(marker, left, 16);
	cr_assert_eq(n, 0, "%zu process(es) of the sandbox left on the host", n);
	count = h_json(w.record, "d['killed_count']");
	cr_assert_geq(atoi(count), 101, "killed_count %s\n" H_FMT, count, H_ARGS(&p));
	cr_assert_str_eq(h_json(w.record, "len(d['killed'])"), "64");
	cr_assert_str_eq(h_json(w.record, "d['killed_capped']"), "true");
	cr_assert(h_contains(p.err_text, h_fmt("reached; ended %s processes\n", count)),
		  H_SHOW(&p));
}

Test(ns, expiry_without_pid_namespace_leaves_survivors)
{
	struct h_world w = h_world();
	const char *marker = h_marker();
	struct h_proc p;
	pid_t left[16];
	size_t n;
	const char *surv;
	char *s;

	/* The weakened arm: without a pid namespace expiry can only kill the
	 * direct child. The descendant must survive, or the test above proves
	 * nothing. */
	H_PADDOCK(&p, w.ws, "run", "--weaken", "no-pidns", "--ttl", "1s", "--record", w.record,
		  "--", "sh", "-c",
		  h_fmt("setsid sh -c 'trap \"\" TERM; exec sleep 300 %s' & "
			"echo started; exec sleep 30 %s",
			marker, marker));
	cr_assert_eq(p.status, 124, H_SHOW(&p));
	cr_assert_lt(p.secs, 6.0, H_SHOW(&p));
	cr_assert(h_contains(p.err_text, "warning: --weaken no-pidns"), H_SHOW(&p));
	n = h_marker_pids(marker, left, 16);
	cr_assert_geq(n, 1, "the weakening is not real: nothing survived\n" H_FMT, H_ARGS(&p));
	cr_assert_str_eq(h_json(w.record, "d['ended']"), "\"expired\"");
	cr_assert_str_eq(h_json(w.record, "d['weakenings']"), "[\"no-pidns\"]");
	cr_assert_str_eq(h_json(w.record, "'sleep' in [s['comm'] for s in d['survivors']]"),
			 "true");
	/* Every marker process is in the record, and is killed by pid. */
	surv = h_json(w.record, "' '.join(str(s['host_pid']) for s in d['survivors'])");
	for (size_t i = 0; i < n; i++)
		cr_assert(h_contains(surv, h_fmt("%d", (int)left[i])),
			  "survivor %d not in the record (%s)", (int)left[i], surv);
	s = h_fmt("%s", surv + 1);
	for (char *tok = strtok(s, " \""); tok; tok = strtok(NULL, " \"")) {
		pid_t pid = (pid_t)atoi(tok);

		if (pid > 1)
			kill(pid, SIGKILL);
	}
	h_kill_marker(marker);
	cr_assert_eq(h_marker_pids(marker, left, 16), 0);
}

/* --weaken no-sweep: paddock-init leaves at the workload's end without
 * ending the rest. Without a pid namespace the leftover lives on (listed
 * in survivors, init_done false); with one the kernel still ends it with
 * PID 1, and without the knob init's sweep does (the twins). */
Test(ns, weaken_no_sweep_without_pid_namespace_leaves_leftovers)
{
	struct h_world w = h_world();
	const char *marker = h_marker();
	const char *cmd = h_fmt("setsid sh -c 'exec sleep 300 %s' </dev/null >/dev/null 2>&1 & "
				"exit 3",
				marker);
	struct h_proc p;
	pid_t left[16];

	H_PADDOCK(&p, w.ws, "run", "--weaken", "no-pidns", "--weaken", "no-sweep", "--record",
		  w.record, "--", "sh", "-c", cmd);
	cr_assert_eq(p.status, 3, H_SHOW(&p));
	cr_assert(h_contains(p.err_text, "warning: --weaken no-sweep"), H_SHOW(&p));
	h_sleep_ms(200);
	cr_assert_geq(h_marker_pids(marker, left, 16), 1,
		      "the weakening is not real: nothing survived\n" H_FMT, H_ARGS(&p));
	cr_assert_str_eq(h_json(w.record, "d['weakenings']"), "[\"no-pidns\", \"no-sweep\"]");
	cr_assert_str_eq(h_json(w.record, "len(d['survivors']) > 0"), "true");
	cr_assert_str_eq(h_json(w.record, "d['init_done']"), "false");
	h_kill_marker(marker);
	cr_assert_eq(h_marker_pids(marker, left, 16), 0);
	/* Either protection alone still ends the leftover. */
	H_PADDOCK(&p, w.ws, "run", "--weaken", "no-sweep", "--", "sh", "-c", cmd);
	cr_assert_eq(p.status, 3, H_SHOW(&p));
	h_sleep_ms(200);
	cr_assert_eq(h_marker_pids(marker, left, 16), 0, "a pid namespace's end was survived");
	H_PADDOCK(&p, w.ws, "run", "--weaken", "no-pidns", "--", "sh", "-c", cmd);
	cr_assert_eq(p.status, 3, H_SHOW(&p));
	h_sleep_ms(200);
	cr_assert_eq(h_marker_pids(marker, left, 16), 0, "init's sweep was survived");
}

Test(ns, workload_exit_ends_its_background_processes)
{
	struct h_world w = h_world();
	const char *marker = h_marker();
	struct h_proc p;
	pid_t left[16];

	/* No TTL involved: when the workload exits, what it left running in
	 * the sandbox goes with PID 1. */
	H_PADDOCK(&p, w.ws, "run", "--", "sh", "-c",
		  h_fmt("setsid sh -c 'trap \"\" TERM HUP; exec sleep 300 %s' & echo bye", marker));
	cr_assert_eq(p.status, 0, H_SHOW(&p));
	cr_assert_lt(p.secs, 6.0, H_SHOW(&p));
	cr_assert_eq(h_marker_pids(marker, left, 16), 0,
		     "a background process outlived the sandbox");
}

Test(ns, killing_paddock_ends_the_sandbox)
{
	/* Its own registry: the killed paddock's entry stays behind. */
	struct h_world w = h_sworld().w;
	const char *marker = h_marker();
	struct h_proc p;
	pid_t left[16];
	int i;

	/* paddock SIGKILLed: it cannot clean up, but the sandbox must not
	 * outlive it (PID 1 has a parent-death signal; the pid namespace goes
	 * with it). */
	H_PADDOCK_START(&p, w.ws, "run", "--", "sh", "-c",
			h_fmt("setsid sh -c 'trap \"\" TERM HUP; exec sleep 300 %s' & "
			      "exec sleep 30 %s",
			      marker, marker));
	for (i = 0; i < 400 && h_marker_pids(marker, left, 16) < 4; i++)
		h_sleep_ms(10);
	/* paddock, init, the two sleeps. */
	cr_assert_geq(h_marker_pids(marker, left, 16), 4, "the sandbox did not start");
	cr_assert_eq(kill(p.pid, SIGKILL), 0);
	h_wait(&p, 5000);
	cr_assert_eq(p.status, 137, H_SHOW(&p));
	for (i = 0; i < 100 && h_marker_pids(marker, left, 16) > 0; i++)
		h_sleep_ms(10);
	cr_assert_eq(h_marker_pids(marker, left, 16), 0,
		     "a process of the sandbox outlived paddock (pid %d)", (int)left[0]);
}

/* ---------------------------------------------------------------- network */

Test(ns, only_loopback_and_it_is_up)
{
	struct h_world w = h_world();
	struct h_proc p;

	H_PADDOCK(&p, w.ws, "run", "--", "sh", "-c",
		  "tail -n +3 /proc/net/dev | cut -d: -f1 | tr -d ' '; echo --; "
		  "python3 -c \"import socket\n"
		  "s=socket.socket(); s.bind(('127.0.0.1', 0)); s.listen(1)\n"
		  "c=socket.create_connection(s.getsockname(), timeout=3)\n"
		  "a,_=s.accept(); c.sendall(b'ping'); print('lo', a.recv(4).decode())\"");
	cr_assert_eq(p.status, 0, H_SHOW(&p));
	cr_assert_str_eq(p.out_text, "lo\n--\nlo ping\n", H_SHOW(&p));
}

Test(ns, ip_link_shows_lo_up)
{
	struct h_world w;
	struct h_proc p;
	const char *ip = h_exists("/usr/sbin/ip") ? "/usr/sbin/ip" : "/sbin/ip";

	if (!h_exists(ip))
		cr_skip_test("iproute2 is not installed");
	w = h_world();
	H_PADDOCK(&p, w.ws, "run", "--", ip, "-o", "link", "show");
	cr_assert_eq(p.status, 0, H_SHOW(&p));
	cr_assert_eq(h_count_lines(p.out_text), 1, H_SHOW(&p));
	cr_assert(h_contains(p.out_text, ": lo: <LOOPBACK,UP,LOWER_UP>"), H_SHOW(&p));
}

Test(ns, host_loopback_listener_is_unreachable)
{
	struct h_world w = h_world();
	struct h_proc p;
	struct sockaddr_in a = {.sin_family = AF_INET};
	socklen_t len = sizeof(a);
	int l, c, acc;

	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	l = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	cr_assert_geq(l, 0);
	cr_assert_eq(bind(l, (struct sockaddr *)&a, sizeof(a)), 0);
	cr_assert_eq(listen(l, 8), 0);
	cr_assert_eq(getsockname(l, (struct sockaddr *)&a, &len), 0);
	/* Control: the listener works from the host. */
	c = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	cr_assert_eq(connect(c, (struct sockaddr *)&a, sizeof(a)), 0, "%s", strerror(errno));
	close(c);
	h_sleep_ms(20);
	acc = accept(l, NULL, NULL);
	cr_assert_geq(acc, 0, "control connection not accepted: %s", strerror(errno));
	close(acc);

	H_PADDOCK(&p, w.ws, "run", "--", "python3", "-c",
		  "import socket,sys\n"
		  "s=socket.socket(); s.settimeout(3)\n"
		  "print('connect', s.connect_ex(('127.0.0.1', int(sys.argv[1]))))\n",
		  h_fmt("%d", ntohs(a.sin_port)));
	cr_assert_eq(p.status, 0, H_SHOW(&p));
	cr_assert(h_contains(p.out_text, "connect "), H_SHOW(&p));
	cr_assert(!h_contains(p.out_text, "connect 0\n"), "reached the host's listener\n" H_FMT,
		  H_ARGS(&p));
	/* And nothing arrived at the host side. */
	acc = accept(l, NULL, NULL);
	cr_assert_lt(acc, 0, "a connection from the sandbox reached the host");
	cr_assert_eq(errno, EAGAIN);
	close(l);
}

Test(ns, weaken_host_net_reaches_the_host_listener)
{
	struct h_world w = h_world();
	struct h_proc p;
	struct sockaddr_in a = {.sin_family = AF_INET};
	socklen_t len = sizeof(a);
	int l, acc = -1;

	/* The weakened arm: with the host's network the same connection
	 * works, or the test above proves nothing. */
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	l = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	cr_assert_geq(l, 0);
	cr_assert_eq(bind(l, (struct sockaddr *)&a, sizeof(a)), 0);
	cr_assert_eq(listen(l, 8), 0);
	cr_assert_eq(getsockname(l, (struct sockaddr *)&a, &len), 0);
	H_PADDOCK(&p, w.ws, "run", "--weaken", "host-net", "--record", w.record, "--", "python3",
		  "-c",
		  "import socket,sys\n"
		  "s=socket.socket(); s.settimeout(3)\n"
		  "print('connect', s.connect_ex(('127.0.0.1', int(sys.argv[1]))))\n",
		  h_fmt("%d", ntohs(a.sin_port)));
	cr_assert_eq(p.status, 0, H_SHOW(&p));
	cr_assert(h_contains(p.out_text, "connect 0\n"), H_SHOW(&p));
	cr_assert(h_contains(p.err_text, "warning: --weaken host-net"), H_SHOW(&p));
	cr_assert_str_eq(h_json(w.record, "d['weakenings']"), "[\"host-net\"]");
	cr_assert_str_eq(h_json(w.record, "'net' in d['namespaces']"), "false");
	for (int i = 0; i < 50 && acc < 0; i++) {
		acc = accept(l, NULL, NULL);
		if (acc < 0)
			h_sleep_ms(10);
	}
	cr_assert_geq(acc, 0, "no connection arrived");
	close(acc);
	close(l);
}

Test(ns, host_abstract_unix_socket_is_unreachable)
{
	struct h_world w = h_world();
	struct h_proc p;
	struct sockaddr_un a = {.sun_family = AF_UNIX};
	const char *name = h_fmt("paddock-it-%llx", h_random());
	int l;

	/* Abstract unix sockets belong to the network namespace. */
	memcpy(a.sun_path + 1, name, strlen(name));
	l = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	cr_assert_geq(l, 0);
	cr_assert_eq(bind(l, (struct sockaddr *)&a,
			  (socklen_t)(offsetof(struct sockaddr_un, sun_path) + 1 + strlen(name))),
		     0, "%s", strerror(errno));
	cr_assert_eq(listen(l, 8), 0);
	H_PADDOCK(&p, w.ws, "run", "--", "python3", "-c",
		  "import socket,sys\n"
		  "s=socket.socket(socket.AF_UNIX)\n"
		  "try: s.connect('\\0' + sys.argv[1]); print('CONNECTED')\n"
		  "except OSError as e: print('refused', e.errno)\n",
		  name);
	cr_assert_eq(p.status, 0, H_SHOW(&p));
	cr_assert(h_contains(p.out_text, "refused"), H_SHOW(&p));
	cr_assert_lt(accept(l, NULL, NULL), 0, "a connection from the sandbox reached the host");
	close(l);
}

/* ------------------------------------------------- what the workload is */

Test(ns, only_fds_0_1_2_reach_the_workload)
{
	struct h_world w = h_world();
	struct h_proc p;
	int extra[6];

	/* Extra fds in the caller, deliberately not close-on-exec: a file,
	 * a directory, a pipe, a socket. paddock itself inherits them. */
	extra[0] = open(h_root(), O_RDONLY | O_DIRECTORY);
	extra[1] = open("/dev/null", O_RDWR);
	cr_assert_eq(pipe(&extra[2]), 0);
	extra[4] = socket(AF_INET, SOCK_STREAM, 0);
	extra[5] = dup2(extra[1], 42);
	for (int i = 0; i < 6; i++)
		cr_assert_geq(extra[i], 3);

	h_run_paddock(&p, w.ws,
		      (const char *const[]){"run", "--ro-bind", probe_bind(), "--", "sh", "-c",
					    "ls /proc/self/fd | tr '\\n' ' '; echo; /probe/probe",
					    NULL});
	cr_assert_eq(p.status, 0, H_SHOW(&p));
	/* ls shows 0 1 2 and its own directory fd (3, the lowest free). */
	cr_assert(strncmp(p.out_text, "0 1 2 3 \n", 9) == 0, H_SHOW(&p));
	cr_assert_str_eq(h_kv(p.out_text, "fds"), "0,1,2", H_SHOW(&p));
	for (int i = 0; i < 6; i++)
		close(extra[i]);
}

Test(ns, no_capabilities_and_no_new_privs)
{
	struct h_world w = h_world();
	struct h_proc p;
	static const char *const zero = "0000000000000000";

	H_PADDOCK(&p, w.ws, "run", "--", "sh", "-c",
		  "grep -E '^(CapInh|CapPrm|CapEff|CapBnd|CapAmb|NoNewPrivs):' /proc/self/status "
		  "| tr -d '\\t' | tr ':' '='");
	cr_assert_eq(p.status, 0, H_SHOW(&p));
	cr_assert_str_eq(h_kv(p.out_text, "CapInh"), zero, H_SHOW(&p));
	cr_assert_str_eq(h_kv(p.out_text, "CapPrm"), zero, H_SHOW(&p));
	cr_assert_str_eq(h_kv(p.out_text, "CapEff"), zero, H_SHOW(&p));
	cr_assert_str_eq(h_kv(p.out_text, "CapBnd"), zero, H_SHOW(&p));
	cr_assert_str_eq(h_kv(p.out_text, "CapAmb"), zero, H_SHOW(&p));
	cr_assert_str_eq(h_kv(p.out_text, "NoNewPrivs"), "1", H_SHOW(&p));
}

Test(ns, probe_ids_and_capabilities)
{
	struct h_world w = h_world();
	struct h_proc p;
	static const char *const zero = "0000000000000000";

	H_PADDOCK(&p, w.ws, "run", "--ro-bind", probe_bind(), "--", "/probe/probe");
	cr_assert_eq(p.status, 0, H_SHOW(&p));
	/* Our own uid and gid, mapped to themselves, one id each. */
	cr_assert_str_eq(h_kv(p.out_text, "uid_map"),
			 h_fmt("%u %u 1", (unsigned)getuid(), (unsigned)getuid()), H_SHOW(&p));
	cr_assert_str_eq(h_kv(p.out_text, "gid_map"),
			 h_fmt("%u %u 1", (unsigned)getgid(), (unsigned)getgid()), H_SHOW(&p));
	cr_assert_str_eq(h_kv(p.out_text, "uid"), h_fmt("%u", (unsigned)getuid()), H_SHOW(&p));
	cr_assert_str_eq(h_kv(p.out_text, "pid"), "2", H_SHOW(&p));
	cr_assert_str_eq(h_kv(p.out_text, "CapEff"), zero, H_SHOW(&p));
	cr_assert_str_eq(h_kv(p.out_text, "CapPrm"), zero, H_SHOW(&p));
	cr_assert_str_eq(h_kv(p.out_text, "CapBnd"), zero, H_SHOW(&p));
	cr_assert_str_eq(h_kv(p.out_text, "CapAmb"), zero, H_SHOW(&p));
	cr_assert_str_eq(h_kv(p.out_text, "NoNewPrivs"), "1", H_SHOW(&p));
	cr_assert_str_eq(h_kv(p.out_text, "fds"), "0,1,2", H_SHOW(&p));
}

Test(ns, setuid_does_not_gain_privileges)
{
	struct h_world w;
	struct h_proc p;

	/* A setuid-root binary from the host (su) runs without privileges:
	 * the mounts are nosuid and no_new_privs is set. */
	if (!h_exists("/usr/bin/su") && !h_exists("/bin/su"))
		cr_skip_test("no su");
	if (getuid() == 0)
		cr_skip_test("meaningless as root");
	w = h_world();
	H_PADDOCK(&p, w.ws, "run", "--", "sh", "-c",
		  "su -c 'echo ROOT' root < /dev/null; echo su=$?; id -u");
	cr_assert(!h_contains(p.out_text, "ROOT"), H_SHOW(&p));
	cr_assert(!h_contains(p.out_text, "su=0\n"), H_SHOW(&p));
	cr_assert(h_contains(p.out_text, h_fmt("\n%u\n", (unsigned)getuid())), H_SHOW(&p));
}

Test(ns, separate_ipc_and_uts)
{
	struct h_world w = h_world();
	struct h_proc p;
	char host_ipc[64] = "", host_uts[64] = "", host_net[64] = "", host_mnt[64] = "";

	(void)!readlink("/proc/self/ns/ipc", host_ipc, sizeof(host_ipc) - 1);
	(void)!readlink("/proc/self/ns/uts", host_uts, sizeof(host_uts) - 1);
	(void)!readlink("/proc/self/ns/net", host_net, sizeof(host_net) - 1);
	(void)!readlink("/proc/self/ns/mnt", host_mnt, sizeof(host_mnt) - 1);
	H_PADDOCK(&p, w.ws, "run", "--", "sh", "-c",
		  "for n in ipc uts net mnt pid user cgroup; do readlink /proc/self/ns/$n; done");
	cr_assert_eq(p.status, 0, H_SHOW(&p));
	cr_assert_eq(h_count_lines(p.out_text), 7, H_SHOW(&p));
	cr_assert(!h_contains(p.out_text, host_ipc), H_SHOW(&p));
	cr_assert(!h_contains(p.out_text, host_uts), H_SHOW(&p));
	cr_assert(!h_contains(p.out_text, host_net), H_SHOW(&p));
	cr_assert(!h_contains(p.out_text, host_mnt), H_SHOW(&p));
}
