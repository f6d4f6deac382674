#!/bin/sh
# One row of make bench alone, interleaved A/B (not a test; as root, like
# make bench; the rootless commands run as paddock-test). For a change's
# effect on a loaded machine: compare variants measured in the same rounds.
#
#   bench/row.sh expiry [REPS] [INIT]...
#     The expiry row (bench/expiry.c, 1,000 descendants): per round the
#     kernel's floor, then paddock with each INIT (--init; default
#     build/paddock-init). gone_ms per run, then medians and the median of
#     each round's ratio to that round's floor.
#   bench/row.sh startup [RUNS] [PADDOCK]...
#     The start-up row: paddock run (agent.json) -- /bin/true with each
#     launcher (default build/paddock; another one's init: PADDOCK=path:init),
#     then bwrap with the row's options and seccomp program (bench/abrun.c).
set -eu
export PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
top=$(cd "$(dirname "$0")/.." && pwd)
[ "$(id -u)" = 0 ] || { echo "row: run as root" >&2; exit 1; }
user=paddock-test
id "$user" >/dev/null 2>&1 || useradd --system --no-create-home \
	--home-dir /nonexistent --shell /usr/sbin/nologin "$user"
as="setpriv --reuid=$(id -u $user) --regid=$(id -g $user) --clear-groups"
what=${1:-}
[ $# -gt 0 ] && shift
n=${1:-}
case $n in '' | *[!0-9]*) n='' ;; *) shift ;; esac
work=$(mktemp -d /tmp/paddock-row.XXXXXX)
trap 'rm -rf "$work"' EXIT
trap 'exit 130' INT TERM
ws=$work/ws
mkdir -p "$ws"
chmod 0755 "$work"
pol="$top/contrib/policies/agent.json"
case $what in
expiry)
	cc -O2 -Wall -Wextra -Werror -static -o "$ws/expiry" "$top/bench/expiry.c"
	chown -R "$user:" "$work"
	[ $# -gt 0 ] || set -- "$top/build/paddock-init"
	abs=""
	for init in "$@"; do abs="$abs $(readlink -f "$init")"; done
	# shellcheck disable=SC2086
	set -- $abs
	cd "$ws"
	for i in $(seq "${n:-15}"); do
		echo "floor $("$ws/expiry" watch pid1 -- $as unshare -Urpf --mount-proc \
			"$ws/expiry" load 1000)"
		for init in "$@"; do
			echo "$init $("$ws/expiry" watch ttl -- $as env PADDOCK_DEBUG=1 \
				"$top/build/paddock" run --init "$init" --policy "$pol" --ttl 1s -- \
				"$ws/expiry" load 1000)"
		done
	done | tee "$work/out.txt"
	python3 - "$work/out.txt" <<'PY'
import re, statistics as st, sys
runs, rounds, cur = {}, [], {}
for line in open(sys.argv[1]):
    m = re.match(r"(\S+) gone_ms=([\d.]+)", line)
    if not m:
        continue
    if m[1] == "floor" and cur:
        rounds.append(cur)
        cur = {}
    cur[m[1]] = float(m[2])
    runs.setdefault(m[1], []).append(float(m[2]))
if cur:
    rounds.append(cur)
for k, v in runs.items():
    line = "%-40s median %7.2f ms (%d runs)" % (k, st.median(v), len(v))
    r = [x[k] / x["floor"] for x in rounds if k in x and "floor" in x]
    if k != "floor" and r:
        line += "  / floor: %.2fx (rounds %.2f-%.2f)" % (st.median(r), min(r), max(r))
    print(line)
PY
	;;
startup)
	cc -O2 -Wall -Wextra -Werror -o "$work/abrun" "$top/bench/abrun.c"
	cc -O2 -Wall -Wextra -Werror -static -o "$ws/fdexec" "$top/bench/fdexec.c"
	(cd "$top" && build/seccomp_bench --dump-bpf "$ws/paddock.bpf")
	chown -R "$user:" "$work"
	[ $# -gt 0 ] || set -- "$top/build/paddock"
	bw="bwrap --unshare-all --die-with-parent --new-session \
	 --ro-bind /usr /usr --ro-bind /etc /etc --symlink usr/bin /bin --symlink usr/sbin /sbin \
	 --symlink usr/lib /lib --symlink usr/lib64 /lib64 --symlink usr/lib32 /lib32 \
	 --proc /proc --dev /dev --tmpfs /tmp --tmpfs /home/sandbox \
	 --bind $ws $ws --chdir $ws"
	set -f
	args=""
	for p in "$@"; do
		case $p in
		*:*) l=$(readlink -f "${p%%:*}") i=$(readlink -f "${p#*:}")
			args="$args $p $l run --init $i --policy $pol -- /bin/true ;" ;;
		*) l=$(readlink -f "$p")
			args="$args $p $l run --policy $pol -- /bin/true ;" ;;
		esac
	done
	cd "$ws"
	# shellcheck disable=SC2086
	$as "$work/abrun" "${n:-100}" $args bwrap "$ws/fdexec" "$ws/paddock.bpf" 9 $bw \
		--seccomp 9 /bin/true
	;;
*)
	echo "usage: bench/row.sh expiry [REPS] [INIT]... | startup [RUNS] [PADDOCK[:INIT]]..." >&2
	exit 2
	;;
esac
