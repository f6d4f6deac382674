#!/bin/sh
# Run the integration test binaries as an unprivileged user. As root (CI,
# development machines) the tests drop to the test user "paddock-test",
# created here if missing: rootless is the normal case for paddock. When the
# host cannot create user namespaces the tests skip, unless MUST_WORK=1 (CI).
#
# As root, a second test user "paddock-test2" owns a detached session for
# the whole run (test_sessions.c checks paddock-test cannot act on it); its
# identity reaches the tests in PADDOCK_TEST_UID2/GID2 and
# PADDOCK_TEST_OTHER_*. It also owns a second detached session that forwards
# a fixed loopback port to a probe server in its sandbox (test_ports.c
# checks paddock-test can neither take the port over nor disturb it):
# PADDOCK_TEST_OTHER_PORT* (port, marker, paddock-init's pid and start
# time). And a third, started with --weaken no-owner-check
# (PADDOCK_TEST_OTHER_WEAK_*): test_sessions.c shows paddock-test can stop
# that one through the same 0666 link, so the knob really turns the
# SO_PEERCRED check off. Not as root, those tests skip.
set -eu
user=paddock-test
user2=paddock-test2
uid2='' gid2='' other_id='' other_dir='' other_init='' other_start='' other_socket=''
other_error='' other_ws='' other_link_dir=''
other_port='' other_port_id='' other_port_marker='' other_port_init='' other_port_start=''
other_port_error=''
weak_id='' weak_init='' weak_start='' weak_socket='' weak_error=''
# Concurrent runs (several checkouts on one machine) need distinct names.
other_name=${PADDOCK_IT_OTHER_NAME:-other}

add_user() {
	if ! id "$1" >/dev/null 2>&1; then
		useradd --system --no-create-home --home-dir /nonexistent \
			--shell /usr/sbin/nologin "$1"
	fi
}

# The second user's commands, in its own workspace.
run2() { setpriv --reuid="$uid2" --regid="$gid2" --clear-groups --reset-env \
	env PATH=/usr/bin:/bin HOME=/tmp sh -c 'cd "$1" && shift && exec "$@"' sh "$other_ws" "$@"; }

json_field() { python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); print(eval(sys.argv[2]))' "$@"; }

start_other() {
	other_ws=$(mktemp -d /tmp/paddock-it-other.XXXXXX)
	chmod 0755 "$other_ws"
	chown "$uid2:$gid2" "$other_ws"
	# A run that was killed may have left the second user's session.
	run2 "$PWD/build/paddock" stop --grace 0s "$other_name" >/dev/null 2>&1 || true
	run2 "$PWD/build/paddock" rm "$other_name" >/dev/null 2>&1 || true
	if ! other_id=$(run2 "$PWD/build/paddock" run --detach --name "$other_name" --ttl 30m \
		-- sleep 100000 2>&1); then
		other_error="paddock run --detach as $user2: $other_id"
		other_id=''
		return 0
	fi
	other_dir=/tmp/paddock-$uid2/$other_id
	other_init=$(json_field "$other_dir/session.json" "d['init']['pid']")
	other_start=$(json_field "$other_dir/session.json" "d['init']['start_time']")
	# Past the 0700 directory and the 0600 socket, on purpose: a hard
	# link where paddock-test can reach it, the inode made 0666, so only
	# the supervisor's SO_PEERCRED check is left to refuse paddock-test.
	other_link_dir=$(mktemp -d /tmp/paddock-it-sock.XXXXXX)
	chmod 0755 "$other_link_dir"
	ln "$other_dir/control" "$other_link_dir/control"
	chmod 0666 "$other_link_dir/control"
	other_socket=$other_link_dir/control
}

# The second user's session without the owner check (evaluation knob).
start_other_weak() {
	run2 "$PWD/build/paddock" stop --grace 0s "$other_name-weak" >/dev/null 2>&1 || true
	run2 "$PWD/build/paddock" rm "$other_name-weak" >/dev/null 2>&1 || true
	if ! weak_id=$(run2 "$PWD/build/paddock" run --detach --name "$other_name-weak" \
		--ttl 30m --weaken no-owner-check -- sleep 100000 2>/dev/null); then
		weak_error="paddock run --detach --weaken no-owner-check as $user2 failed"
		weak_id=''
		return 0
	fi
	weak_init=$(json_field "/tmp/paddock-$uid2/$weak_id/session.json" "d['init']['pid']")
	weak_start=$(json_field "/tmp/paddock-$uid2/$weak_id/session.json" \
		"d['init']['start_time']")
	ln "/tmp/paddock-$uid2/$weak_id/control" "$other_link_dir/control-weak"
	chmod 0666 "$other_link_dir/control-weak"
	weak_socket=$other_link_dir/control-weak
}

# The second user's port forward: a fixed port that was free a moment ago,
# relayed to the probe serving 8080 in its sandbox; ready once it answers.
start_other_port() {
	probe_dir=$PWD/build/tests/helpers
	if [ ! -x "$probe_dir/probe" ]; then
		other_port_error="$probe_dir/probe is missing (make build/tests/helpers/probe)"
		return 0
	fi
	run2 "$PWD/build/paddock" stop --grace 0s "$other_name-port" >/dev/null 2>&1 || true
	run2 "$PWD/build/paddock" rm "$other_name-port" >/dev/null 2>&1 || true
	other_port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
	other_port_marker=other-port-$$-$(od -An -N6 -tx1 /dev/urandom | tr -d ' \n')
	if ! other_port_id=$(run2 "$PWD/build/paddock" run --detach --name "$other_name-port" \
		--ttl 30m --ro-bind "$probe_dir:/probe" --port "127.0.0.1:$other_port:8080" \
		-- /probe/probe "serve:8080:$other_port_marker" 2>&1); then
		other_port_error="paddock run --detach --port as $user2: $other_port_id"
		other_port_id=''
		return 0
	fi
	other_port_dir=/tmp/paddock-$uid2/$other_port_id
	other_port_init=$(json_field "$other_port_dir/session.json" "d['init']['pid']")
	other_port_start=$(json_field "$other_port_dir/session.json" "d['init']['start_time']")
	if ! python3 - "$other_port" "$other_port_marker" <<'PY'
import socket, sys, time
for _ in range(100):
    try:
        with socket.create_connection(("127.0.0.1", int(sys.argv[1])), timeout=2) as c:
            c.shutdown(socket.SHUT_WR)
            if c.recv(200).decode().startswith(sys.argv[2] + "\n"):
                sys.exit(0)
    except OSError:
        pass
    time.sleep(0.05)
sys.exit(1)
PY
	then
		other_port_error="$user2's forward on 127.0.0.1:$other_port does not answer"
	fi
}

stop_other() {
	if [ -n "$other_id" ]; then
		# Still running after all tests, as the second user sees it.
		if ! run2 "$PWD/build/paddock" ps | grep -q "^$other_id .* running "; then
			echo "run.sh: $user2's session $other_id did not survive the tests" >&2
			status=1
		fi
		run2 "$PWD/build/paddock" stop --grace 0s "$other_id" || status=1
		run2 "$PWD/build/paddock" rm "$other_id" || status=1
	fi
	if [ -n "$other_port_id" ]; then
		if ! run2 "$PWD/build/paddock" ps | grep -q "^$other_port_id .* running "; then
			echo "run.sh: $user2's session $other_port_id did not survive the tests" >&2
			status=1
		fi
		run2 "$PWD/build/paddock" stop --grace 0s "$other_port_id" || status=1
		run2 "$PWD/build/paddock" rm "$other_port_id" || status=1
		other_port_id=''
	fi
	if [ -n "$weak_id" ]; then
		# The test stops it; whatever is left goes.
		run2 "$PWD/build/paddock" stop --grace 0s "$weak_id" >/dev/null 2>&1 || true
		run2 "$PWD/build/paddock" rm "$weak_id" >/dev/null 2>&1 || status=1
		weak_id=''
	fi
	[ -z "$other_link_dir" ] || rm -rf "$other_link_dir"
	[ -z "$other_ws" ] || rm -rf "$other_ws"
}

if [ "$(id -u)" = 0 ]; then
	add_user "$user"
	add_user "$user2"
	# The victim of a squatted registry (test_root.c): its own user, so
	# that squatting its /tmp path disturbs no other test.
	add_user paddock-test3
	uid=$(id -u "$user")
	gid=$(id -g "$user")
	uid2=$(id -u "$user2")
	gid2=$(id -g "$user2")
	# Only the suites that run as paddock-test use them (make faults and
	# test_root alone need no second user's sessions).
	needs_other=''
	for t in "$@"; do
		case $t in */test_root | */test_faults) ;; *) needs_other=1 ;; esac
	done
	if [ -n "$needs_other" ]; then
		start_other
		start_other_port
		[ -z "$other_link_dir" ] || start_other_weak
	fi
	run() { setpriv --reuid="$uid" --regid="$gid" --clear-groups --reset-env \
		env PATH=/usr/bin:/bin HOME=/tmp MUST_WORK="${MUST_WORK:-}" \
		PADDOCK_TEST_ROOT="$PWD" PADDOCK_TEST_UID2="$uid2" PADDOCK_TEST_GID2="$gid2" \
		PADDOCK_TEST_OTHER_ID="$other_id" PADDOCK_TEST_OTHER_DIR="$other_dir" \
		PADDOCK_TEST_OTHER_INIT_PID="$other_init" \
		PADDOCK_TEST_OTHER_INIT_START="$other_start" \
		PADDOCK_TEST_OTHER_SOCKET="$other_socket" \
		PADDOCK_TEST_OTHER_ERROR="$other_error" \
		PADDOCK_TEST_OTHER_WEAK_SOCKET="$weak_socket" \
		PADDOCK_TEST_OTHER_WEAK_INIT_PID="$weak_init" \
		PADDOCK_TEST_OTHER_WEAK_INIT_START="$weak_start" \
		PADDOCK_TEST_OTHER_WEAK_ERROR="$weak_error" \
		PADDOCK_TEST_OTHER_PORT="$other_port" \
		PADDOCK_TEST_OTHER_PORT_MARKER="$other_port_marker" \
		PADDOCK_TEST_OTHER_PORT_INIT_PID="$other_port_init" \
		PADDOCK_TEST_OTHER_PORT_INIT_START="$other_port_start" \
		PADDOCK_TEST_OTHER_PORT_ERROR="$other_port_error" "$@"; }
else
	run() { PADDOCK_TEST_ROOT="$PWD" "$@"; }
fi
if [ "${CI:-}" = true ]; then
	MUST_WORK=1
	export MUST_WORK
fi
status=0
trap stop_other EXIT
trap 'exit 130' INT TERM HUP
for t in "$@"; do
	case $t in
	*/test_root|*/test_faults)
		# A root caller's sandbox (test_root.c), and the fault suite
		# (make faults: it mounts a tmpfs): as whoever runs this.
		echo "== $t (as $(id -un))"
		PADDOCK_TEST_ROOT="$PWD" timeout -k 10 600 "$t" --jobs 2 || status=1
		continue ;;
	esac
	echo "== $t (as $(run id -un))"
	# A hung suite fails the run instead of blocking CI.
	run timeout -k 10 600 "$t" --jobs 2 || status=1
done
trap - EXIT INT TERM HUP
stop_other
exit $status
