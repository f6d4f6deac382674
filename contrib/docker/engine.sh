#!/bin/sh
# An offline Docker engine for the reference arms of paddock-eval and for
# the benchmarks.
#
#   engine.sh up      start dockerd unless an engine already answers
#   engine.sh image   build paddock-eval:local from the host's busybox-static
#   engine.sh down    stop dockerd, only if "up" started it (by its pid)
#   engine.sh deps    install docker.io and busybox-static from Debian (as
#                     root), skipped when present; failure is not fatal
#   engine.sh status  print "running started-by-us|external" or "none REASON"
#
# Nothing is pulled: the image is a tarball made here and loaded with
# `docker import`. The engine runs with --bridge=none --iptables=false, so
# containers can only use `--network none` or `--network host`, and the
# host's firewall and routes are left alone.
#
# State (log, pid file, the "we started it" marker) lives in
# $PADDOCK_DOCKER_STATE (default /run/paddock-eval-docker). Exit status:
# 0 done, 1 failure, 3 no engine can run here (dockerd missing or it would
# not answer); the reason is one line on stderr.
set -eu

state=${PADDOCK_DOCKER_STATE:-/run/paddock-eval-docker}
image=${PADDOCK_EVAL_IMAGE:-paddock-eval:local}
wait_s=${PADDOCK_DOCKER_WAIT:-40}

answers() { docker info >/dev/null 2>&1; }

# Start time of a pid (field 22 of /proc/PID/stat), to tell a reused pid
# from the dockerd we started.
start_time() { sed 's/^.*) //' "/proc/$1/stat" 2>/dev/null | cut -d' ' -f20; }

up() {
	if ! command -v docker >/dev/null 2>&1; then
		echo "engine: no docker client (install docker.io)" >&2
		exit 3
	fi
	if answers; then
		echo "engine: an engine already answers; not starting one"
		return 0
	fi
	if ! command -v dockerd >/dev/null 2>&1; then
		echo "engine: no engine answers and dockerd is not installed (docker.io)" >&2
		exit 3
	fi
	mkdir -p "$state"
	# setsid: the daemon must not get our terminal's signals; it is
	# stopped by its pid in "down".
	# Runtimes beside runc, for the benchmarks' `docker run --runtime`
	# rows: paddock oci (PADDOCK_OCI, the paddock-oci path; docs/oci.md)
	# and crun, when present.
	# paddock-weaken-KNOB: paddock oci with one protection removed (its
	# global --weaken, in each container's record), for the eval's
	# oci-weakened arms; a runtime with arguments needs daemon.json.
	set --
	if [ -n "${PADDOCK_OCI:-}" ] && [ -x "$PADDOCK_OCI" ]; then
		printf '{"runtimes": {"paddock": {"path": "%s"}' "$PADDOCK_OCI" >"$state/daemon.json"
		for k in rw-binds no-pidns+no-sweep; do
			printf ', "paddock-weaken-%s": {"path": "%s", "runtimeArgs": ["--weaken=%s"]}' \
				"$k" "$PADDOCK_OCI" "$k" >>"$state/daemon.json"
		done
		echo '}}' >>"$state/daemon.json"
		set -- "$@" --config-file "$state/daemon.json"
	fi
	command -v crun >/dev/null 2>&1 && set -- "$@" --add-runtime "crun=$(command -v crun)"
	setsid dockerd --bridge=none --iptables=false --ip6tables=false "$@" \
		--pidfile "$state/dockerd.pid" >"$state/dockerd.log" 2>&1 </dev/null &
	pid=$!
	echo "$pid $(start_time "$pid")" >"$state/started"
	i=0
	while ! answers; do
		if ! kill -0 "$pid" 2>/dev/null; then
			rm -f "$state/started"
			echo "engine: dockerd exited: $(tail -n 1 "$state/dockerd.log")" >&2
			exit 3
		fi
		i=$((i + 1))
		if [ "$i" -gt $((wait_s * 4)) ]; then
			echo "engine: dockerd did not answer within ${wait_s}s; stopping it" >&2
			down
			exit 3
		fi
		sleep 0.25
	done
	echo "engine: started dockerd pid $pid (log $state/dockerd.log)"
}

down() {
	[ -f "$state/started" ] || { echo "engine: not started by us; nothing to stop"; return 0; }
	read -r pid st <"$state/started"
	if [ -n "$pid" ] && [ "$(start_time "$pid")" = "$st" ]; then
		kill -TERM "$pid"
		i=0
		while [ "$(start_time "$pid")" = "$st" ] && [ "$i" -lt 80 ]; do
			sleep 0.25
			i=$((i + 1))
		done
		if [ "$(start_time "$pid")" = "$st" ]; then
			echo "engine: dockerd $pid ignored SIGTERM for 20s; SIGKILL" >&2
			kill -KILL "$pid"
		fi
	fi
	rm -f "$state/started" "$state/dockerd.pid"
	echo "engine: stopped dockerd pid $pid"
}

build_image() {
	answers || { echo "engine: no engine answers (run 'engine.sh up')" >&2; exit 3; }
	if docker image inspect "$image" >/dev/null 2>&1; then
		echo "engine: image $image present"
		return 0
	fi
	bb=/bin/busybox
	if ! file -L "$bb" 2>/dev/null | grep -q 'statically linked'; then
		echo "engine: $bb is not static (install busybox-static)" >&2
		exit 1
	fi
	tmp=$(mktemp -d /tmp/paddock-eval-rootfs.XXXXXX)
	trap 'rm -rf "$tmp"' EXIT
	mkdir -p "$tmp/root/bin" "$tmp/root/tmp" "$tmp/root/proc" "$tmp/root/dev" \
		"$tmp/root/sys" "$tmp/root/etc" "$tmp/root/work"
	chmod 1777 "$tmp/root/tmp"
	cp "$bb" "$tmp/root/bin/busybox"
	for a in $("$bb" --list); do
		[ "$a" = busybox ] || ln -s busybox "$tmp/root/bin/$a"
	done
	echo 'root:x:0:0:root:/:/bin/sh' >"$tmp/root/etc/passwd"
	echo 'root:x:0:' >"$tmp/root/etc/group"
	tar -C "$tmp/root" --numeric-owner -cf "$tmp/rootfs.tar" .
	docker import -c 'ENV PATH=/bin' -c 'WORKDIR /' "$tmp/rootfs.tar" "$image" >/dev/null
	echo "engine: built $image from $bb"
}

deps() {
	missing=""
	for p in docker.io busybox-static; do
		dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' ||
			missing="$missing $p"
	done
	[ -z "$missing" ] && return 0
	if [ "$(id -u)" != 0 ]; then
		echo "engine: missing Debian packages:$missing (not root; the docker arm will be NOT EXECUTED)" >&2
		return 0
	fi
	echo "engine: installing$missing"
	# shellcheck disable=SC2086
	if ! DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends $missing \
		>/dev/null 2>&1; then
		DEBIAN_FRONTEND=noninteractive apt-get update -qq >/dev/null 2>&1 || true
		# shellcheck disable=SC2086
		DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends $missing \
			>/dev/null 2>&1 ||
			echo "engine: could not install$missing; the docker arm will be NOT EXECUTED" >&2
	fi
}

status() {
	if answers; then
		if [ -f "$state/started" ]; then echo "running started-by-us"; else echo "running external"; fi
	elif ! command -v dockerd >/dev/null 2>&1; then
		echo "none dockerd-not-installed"
	else
		echo "none not-running"
	fi
}

case "${1:-}" in
up) up ;;
down) down ;;
image) build_image ;;
status) status ;;
deps) deps ;;
*)
	echo "usage: engine.sh deps|up|image|down|status" >&2
	exit 2
	;;
esac
