#!/bin/sh
# make eval: run paddock-eval over every implemented case and arm.
# As root: create the unprivileged workload user (paddock is rootless; the
# harness keeps root only for its fanotify observer and drops to this user
# for every paddock invocation), install docker.io and busybox-static when
# missing, and chromium (scenarios/chromium.sh), start an offline Docker engine only if none answers, build the
# local image, and stop afterwards only the engine this script started.
# Without an engine the docker arms are NOT EXECUTED with the reason.
# Exit status: paddock-eval's (docs/scenarios.md "Exit status": 0 ok,
# 1 boundary failed, 2 usage, 3 harness error, 4 could not tell, 5 not executed).
set -u
cd "$(dirname "$0")/.."
user=paddock-test
engine=contrib/docker/engine.sh
export PADDOCK_DOCKER_STATE="${PADDOCK_DOCKER_STATE:-/run/paddock-eval-docker-$$}"
started=0
if [ "$(id -u)" = 0 ]; then
	# paddock-test2: the second owner of HB-05 (as tests/integration/run.sh).
	for u in "$user" paddock-test2; do
		id "$u" >/dev/null 2>&1 || useradd --system --no-create-home --home-dir /nonexistent \
			--shell /usr/sbin/nologin "$u"
	done
	if [ "${PADDOCK_EVAL_DOCKER:-1}" = 1 ]; then
		timeout 600 "$engine" deps || true
		if ! docker info >/dev/null 2>&1 && timeout 120 "$engine" up; then
			started=1
		fi
		docker info >/dev/null 2>&1 && timeout 300 "$engine" image || true
	fi
	# HB-07's browser: Debian's chromium, installed once (nothing when
	# present); without it HB-07 is NOT EXECUTED with the reason.
	timeout 900 scenarios/chromium.sh deps || true
fi
stop_engine() { [ "$started" = 1 ] && "$engine" down >/dev/null; started=0; }
trap stop_engine EXIT INT TERM
timeout 600 build/paddock-eval "$@"
status=$?
stop_engine
exit "$status"
