#!/bin/sh
# make eval: run paddock-eval over every implemented case and arm.
# As root: create the unprivileged workload user (paddock is rootless; the
# harness keeps root only for its fanotify observer and drops to this user
# for every paddock invocation), install docker.io and busybox-static when
# missing, and chromium (scenarios/chromium.sh), start an offline Docker engine only if none answers, build the
# local image, and stop afterwards only the engine this script started.
# Without an engine the docker arms are NOT EXECUTED with the reason.
# Exit status: paddock-eval's (docs/scenarios.md "Exit status": 0 ok,
# 1 boundary failed, 2 usage, 3 harness error, 4 could not tell, 5 not executed);
# 3 also when report.html, rendered in chromium, does not match the records.
set -u
cd "$(dirname "$0")/.."
user=paddock-test
engine=contrib/docker/engine.sh
export PADDOCK_DOCKER_STATE="${PADDOCK_DOCKER_STATE:-/run/paddock-eval-docker-$$}"
# The runtime of the oci:docker-runtime-paddock arms (docs/oci.md), which
# engine.sh registers when it starts the engine.
export PADDOCK_OCI="${PADDOCK_OCI:-$(pwd)/build/paddock-oci}"
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
	# Debian's chromium: HB-07's browser, and report.html's check
	# (below); installed once, nothing when present. Without it HB-07 is
	# NOT EXECUTED with the reason.
	timeout 900 scenarios/chromium.sh deps || true
fi
stop_engine() { [ "$started" = 1 ] && "$engine" down >/dev/null; started=0; }
trap stop_engine EXIT INT TERM
out=$(mktemp)
# stdout is the matrix at the end (the progress goes to stderr as it goes).
timeout 600 build/paddock-eval "$@" >"$out"
status=$?
cat "$out"
stop_engine
# The page as Chromium renders it against the run's JSON records
# (tests/check_report_html.py; 77: no chromium, said and skipped). A page
# that does not match makes a run that was otherwise OK a harness error.
dir=$(sed -n 's/^results: \(.*\) (report\.html, .*/\1/p' "$out")
rm -f "$out"
if [ -n "$dir" ]; then
	python3 tests/check_report_html.py "$dir"
	rc=$?
	[ "$rc" != 0 ] && [ "$rc" != 77 ] && [ "$status" = 0 ] && status=3
fi
exit "$status"
