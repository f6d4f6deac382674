#!/bin/sh
# The evidence log's start-up cost (issue 18: under 0.3 ms added), as an
# interleaved A/B (bench/abstart.c): build/paddock-noev (the launcher
# built without the log, never installed) against build/paddock-launcher, each
# round both in alternating order, the median of the paired differences
# with its 95% interval. Two pairs: the agent policy (the start-up row's
# command) and the same with --weaken no-protect in both (the protected
# paths' placeholders are most of the spread on a slow disk; the log's cost
# is the same). Not a test: nothing passes or fails on timing.
#
# Alone (root; builds what it needs first):
#   make bench-evidence-startup (or, built: bench/evidence_startup.sh)
# From bench/run.sh: bench/evidence_startup.sh OUTFILE
#
# BENCH_AB_ROUNDS  rounds per pair (default 1000)
set -eu
export PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
top=$(cd "$(dirname "$0")/.." && pwd)
rounds=${BENCH_AB_ROUNDS:-1000}
out=${1:-/dev/stdout}
[ "$(id -u)" = 0 ] || { echo "bench: run as root (it runs paddock as paddock-test)" >&2; exit 1; }
for b in paddock-launcher paddock-noev paddock-init; do
	[ -x "$top/build/$b" ] || { echo "bench: build/$b is missing (make build/$b)" >&2; exit 1; }
done
user=paddock-test
id "$user" >/dev/null 2>&1 || useradd --system --no-create-home \
	--home-dir /nonexistent --shell /usr/sbin/nologin "$user"
as="setpriv --reuid=$(id -u $user) --regid=$(id -g $user) --clear-groups"
work=$(mktemp -d /tmp/paddock-abstart.XXXXXX)
trap 'rm -rf "$work"' EXIT
trap 'exit 130' INT TERM
mkdir "$work/ws"
cc -O2 -Wall -Wextra -Werror -o "$work/abstart" "$top/bench/abstart.c" -lm
chown -R "$user:" "$work"
chmod 0755 "$work"
cd "$work/ws"
# Launcher against launcher: build/paddock is the static front, which
# paddock-noev (a launcher built without the log) does not have.
pol="--policy $top/contrib/policies/agent.json"
for pair in "evidence" "evidence-no-protect"; do
	extra=""
	[ "$pair" = evidence-no-protect ] && extra="--weaken no-protect"
	echo "bench: the evidence log's start-up cost, $pair ($rounds interleaved rounds)" >&2
	$as "$work/abstart" "$pair" "$rounds" 10 \
		"$top/build/paddock-noev run $pol $extra -- /bin/true" \
		"$top/build/paddock-launcher run $pol $extra -- /bin/true"
done >"$out"
