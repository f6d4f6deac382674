#!/bin/sh
# make bench: paddock against the tools it competes with, each measured in
# the same run, medians and ratios written to bench/results.md. Not a test:
# nothing here passes or fails on timing. See bench/README.md.
#
# BENCH_RUNS   start-up runs per command (default 200; docker: BENCH_DOCKER_RUNS, 30)
# BENCH_REPS   repetitions of the init, expiry and RSS measurements (default 7)
# BENCH_STREAM_MB  MiB streamed through the workload's stdout (default 4096)
# BENCH_LOOP_CALLS commands per row of the agent loop (default 200)
# BENCH_AB_ROUNDS  rounds of the evidence log's interleaved A/B (default 1000)
# BENCH_FEATURE_ROUNDS rounds of each feature's and bwrap's interleaved A/B (default 300)
set -eu
# The test user cannot use the caller's own tool shims (a pyenv in /root).
export PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
top=$(cd "$(dirname "$0")/.." && pwd)
runs=${BENCH_RUNS:-200}
druns=${BENCH_DOCKER_RUNS:-30}
reps=${BENCH_REPS:-7}
[ "$(id -u)" = 0 ] || { echo "bench: run as root (make bench)" >&2; exit 1; }

# Tools from Debian, installed only when missing (apt-get update once).
need="bubblewrap crun runc tini catatonit docker.io hyperfine busybox-static tinyproxy"
missing=""
for p in $need; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' ||
		missing="$missing $p"
done
if [ -n "$missing" ]; then
	echo "bench: installing$missing" >&2
	export DEBIAN_FRONTEND=noninteractive
	apt-get update -qq
	# shellcheck disable=SC2086
	apt-get install -y -qq --no-install-recommends $missing >/dev/null
fi

# The rootless tools run as paddock-test, as tests/integration/run.sh does.
user=paddock-test
id "$user" >/dev/null 2>&1 || useradd --system --no-create-home \
	--home-dir /nonexistent --shell /usr/sbin/nologin "$user"
uid=$(id -u $user) gid=$(id -g $user)
as="setpriv --reuid=$uid --regid=$gid --clear-groups"

work=$(mktemp -d /tmp/paddock-bench.XXXXXX)
docker_up=0
loop_id=""
cleanup() {
	if [ -n "$loop_id" ]; then
		$as "$top/build/paddock" stop --grace 0s "$loop_id" >/dev/null 2>&1 || true
		$as "$top/build/paddock" rm "$loop_id" >/dev/null 2>&1 || true
	fi
	if [ "$docker_up" = 1 ]; then
		docker rm -f pdkbench-expiry pdkbench-loop >/dev/null 2>&1 || true
		"$top/contrib/docker/engine.sh" down >/dev/null 2>&1 || true
	fi
	rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 130' INT TERM
ws=$work/ws
mkdir -p "$ws" "$work/out"
chmod 0755 "$work"
for h in reaper expiry rss fdexec bwprot agentloop createloop; do
	cc -O2 -Wall -Wextra -Werror -static -o "$ws/$h" "$top/bench/$h.c"
done
cc -O2 -Wall -Wextra -Werror -o "$ws/abstart" "$top/bench/abstart.c" -lm
(cd "$top" && build/seccomp_bench --dump-bpf "$ws/paddock.bpf")
: >"$work/empty"
mkdir "$work/emptydir"
chown -R "$user:" "$work"
cd "$ws"
P="$top/build/paddock run --policy $top/contrib/policies/agent.json --"
# The cost of protected paths (docs/security.md): the agent policy without
# any, and with the 14 fixed names it had before the git-aware design.
python3 - "$top/contrib/policies/agent.json" "$work/agent-14.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
d["protect"] = ["${WORKSPACE}/" + n for n in (".git/hooks", ".git/config", ".bashrc",
    ".bash_profile", ".zshrc", ".zprofile", ".profile", ".gitconfig", ".gitmodules",
    ".mcp.json", ".vscode", ".idea", ".paddock", ".envrc")]
json.dump(d, open(sys.argv[2], "w"))
PY
P14="$top/build/paddock run --policy $work/agent-14.json --"
P0="$top/build/paddock run --policy $top/contrib/policies/agent.json --weaken no-protect --"
# One policy feature off at a time (the A/B rows): each through its
# --weaken knob, which the run warns about and records; the record row
# turns one on (--record, off by default).
PNS="$top/build/paddock run --policy $top/contrib/policies/agent.json --weaken no-seccomp --"
PNL="$top/build/paddock run --policy $top/contrib/policies/agent.json --weaken no-landlock --"
PR="$top/build/paddock run --policy $top/contrib/policies/agent.json --record $work/out/ab-record.json --"
# The registry has no switch: build/paddock-noreg (Makefile, never
# installed) is the launcher built without it.
PNR="$top/build/paddock-noreg run --policy $top/contrib/policies/agent.json --"
# Its pair is launcher against launcher: build/paddock is the static front
# (client/paddock_exec.c), which execs build/paddock-launcher for a run.
PL="$top/build/paddock-launcher run --policy $top/contrib/policies/agent.json --"
# And the evidence log: build/paddock-noev, built without it.
PNE="$top/build/paddock-noev run --policy $top/contrib/policies/agent.json --"
PN="$top/build/paddock run --policy $top/contrib/policies/agent-net.json --"
I="$top/build/paddock-init"

# Minimal rootless OCI bundles (bench/bundle.py), as the test user.
$as env HOME="$work" python3 "$top/bench/bundle.py" "$work/bundle" "$ws" /bin/true
$as env HOME="$work" python3 "$top/bench/bundle.py" "$work/bundle-sleep" "$ws" /bin/sleep 0.5

# crun 1.8.1 refuses a hybrid cgroup layout ("cgroups in hybrid mode not
# supported") even with --cgroup-manager=disabled. Everything rootless runs
# in a private mount namespace in which the cgroup2 controllers file is
# masked by an empty file; the host's mount table is unchanged.
mask=""
if [ -e /sys/fs/cgroup/unified/cgroup.controllers ]; then
	mask="mount --bind $work/empty /sys/fs/cgroup/unified/cgroup.controllers &&"
fi
inns() { unshare -m --propagation private sh -c "$mask exec \"\$@\"" sh "$@"; }

bw="bwrap --unshare-all --die-with-parent --new-session \
 --ro-bind /usr /usr --ro-bind /etc /etc --symlink usr/bin /bin --symlink usr/sbin /sbin \
 --symlink usr/lib /lib --symlink usr/lib64 /lib64 --symlink usr/lib32 /lib32 \
 --proc /proc --dev /dev --tmpfs /tmp --tmpfs /home/sandbox \
 --bind $ws $ws --chdir $ws"
crun="crun --root $work/crun --cgroup-manager=disabled run --bundle"
runc="runc --root $work/runc run --bundle"

echo "bench: start-up (hyperfine, $runs runs each)" >&2
inns $as hyperfine -N --warmup 10 --runs "$runs" --export-json "$work/out/startup.json" \
	-n paddock "$P /bin/true" \
	-n "paddock (14 fixed protected names)" "$P14 /bin/true" \
	-n "paddock (no protected paths)" "$P0 /bin/true" \
	-n "paddock (no seccomp)" "$PNS /bin/true" \
	-n "paddock (no Landlock)" "$PNL /bin/true" \
	-n "paddock (with --record)" "$PR /bin/true" \
	-n "paddock (no registry)" "$PNR /bin/true" \
	-n "paddock (no evidence log)" "$PNE /bin/true" \
	-n "paddock (agent-net.json)" "$PN /bin/true" \
	-n unshare "unshare -Urmpfn --mount-proc /bin/true" \
	-n "paddock --version" "$top/build/paddock --version" \
	-n bwrap "$ws/fdexec $ws/paddock.bpf 9 $bw --seccomp 9 /bin/true" \
	-n "bwrap (no seccomp)" "$bw /bin/true" \
	-n crun "$crun $work/bundle pdkbench-crun" \
	-n runc "$runc $work/bundle pdkbench-runc" >&2

# bwrap at paddock's protections (the bwrap-protect pair): the protected
# targets of one paddock run in this workspace, from its record, as bwrap
# binds: an existing target read-only onto itself, a missing one an empty
# directory bound read-only, which bwrap makes on the host through the
# workspace's bind and leaves there (bench/bwprot.c removes them after each
# run, as paddock removes its placeholders before it returns); the parts of
# a git directory paddock leaves writable, writable again. Pins (paddock's
# ancestors held in place) have no bwrap form and are left out.
$as "$top/build/paddock" run --policy "$top/contrib/policies/agent.json" \
	--record "$work/out/protect-record.json" -- /bin/true
python3 - "$work/out/protect-record.json" "$work/emptydir" "$work/bwprot.list" \
	"$work/bwprot.args" <<'PY'
import json, os, sys
rec, empty, lst, args = sys.argv[1:]
a, made = [], []
for m in json.load(open(rec))["mounts"]:
    if m.get("state") != "applied":
        continue
    t = m["target"]
    if m["type"] == "protect" and m.get("mode") == "ro":
        if os.path.lexists(t):
            a += ["--ro-bind", t, t]
        else:
            a += ["--ro-bind", empty, t]
            made.append(t)
    elif m["type"] == "remount":
        a += ["--bind", t, t]
if not made:
    sys.exit("bench: the record names no missing protected path")
open(lst, "w").write("".join(p + "\n" for p in made))
open(args, "w").write(" ".join(a))
PY
bwx=$(cat "$work/bwprot.args")
bwp="$ws/bwprot $ws/paddock.bpf 9 $work/bwprot.list $bw $bwx --seccomp 9 /bin/true"
# Once, to see it runs and leaves the workspace as it was.
before=$(ls -A "$ws")
$as $bwp
[ "$(ls -A "$ws")" = "$before" ] || { echo "bench: bwprot left: $(ls -A "$ws")" >&2; exit 1; }

# Each policy feature off against on, and bwrap against paddock,
# interleaved (bench/abstart.c): hyperfine runs one row's runs after the
# other's, and on this VM a row's place in that order moves it by up to 2x
# (thousands of starts just before slow the next ones, the protected paths
# most: bench/profile.md, "Seventh round"); in a round both commands meet
# the same machine state. The evidence log's pair is
# evidence_startup.sh's, below.
frounds=${BENCH_FEATURE_ROUNDS:-300}
echo "bench: each policy feature off and on, interleaved ($frounds rounds each)" >&2
for row in seccomp landlock protect record registry network bwrap bwrap-protect; do
	case $row in
	seccomp) a="$PNS /bin/true" b="$P /bin/true" ;;
	landlock) a="$PNL /bin/true" b="$P /bin/true" ;;
	protect) a="$P0 /bin/true" b="$P /bin/true" ;;
	record) a="$P /bin/true" b="$PR /bin/true" ;;
	registry) a="$PNR /bin/true" b="$PL /bin/true" ;;
	network) a="$P /bin/true" b="$PN /bin/true" ;;
	bwrap) a="$ws/fdexec $ws/paddock.bpf 9 $bw --seccomp 9 /bin/true" b="$P /bin/true" ;;
	bwrap-protect) a="$bwp" b="$P /bin/true" ;;
	esac
	$as "$ws/abstart" "$row" "$frounds" 10 "$a" "$b" ||
		echo "$row not measured: abstart failed"
done >"$work/out/features.txt"

# The evidence log's cost, interleaved (hyperfine runs the rows one after
# another, so a drift of the machine's load between them reads as a cost).
"$top/bench/evidence_startup.sh" "$work/out/evstart.txt" ||
	echo "not measured: bench/evidence_startup.sh failed" >"$work/out/evstart.txt"

# Docker runs as root, against an engine from contrib/docker/engine.sh.
docker_why=""
if [ ! -x "$top/contrib/docker/engine.sh" ]; then
	docker_why="contrib/docker/engine.sh is not in this tree (branch eval)"
elif ! PADDOCK_OCI="$top/build/paddock-oci" "$top/contrib/docker/engine.sh" deps >"$work/out/engine.log" 2>&1 ||
	! PADDOCK_OCI="$top/build/paddock-oci" "$top/contrib/docker/engine.sh" up >>"$work/out/engine.log" 2>&1; then
	docker_why="no Docker engine could run: $(tail -1 "$work/out/engine.log")"
else
	docker_up=1
	image=${PADDOCK_EVAL_IMAGE:-paddock-eval:local}
	"$top/contrib/docker/engine.sh" image >>"$work/out/engine.log" 2>&1 ||
		docker_why="contrib/docker/engine.sh image failed: $(tail -1 "$work/out/engine.log")"
fi
if [ -z "$docker_why" ]; then
	# The same engine with another runtime (docs/oci.md): each one that
	# runs /bin/true once is a row of the same hyperfine run; the others
	# are said why not (an engine that was already running may not know
	# them: contrib/docker/engine.sh registers them when it starts one).
	set --
	: >"$work/out/docker_runtimes_why"
	for r in paddock crun; do
		if o=$(docker run --rm --runtime "$r" --network none "$image" /bin/true 2>&1); then
			set -- "$@" -n "docker run --runtime $r" \
				"docker run --rm --runtime $r --network none $image /bin/true"
		else
			echo "docker run --runtime $r: not measured: $(printf '%s' "$o" | head -n 1)" \
				>>"$work/out/docker_runtimes_why"
		fi
	done
	echo "bench: docker run (hyperfine, $druns runs each)" >&2
	hyperfine -N --warmup 3 --runs "$druns" --export-json "$work/out/docker.json" \
		-n paddock "$as $P /bin/true" \
		-n "docker run" "docker run --rm --network none $image /bin/true" "$@" >&2
fi
echo "$docker_why" >"$work/out/docker_why"

# The agent loop (bench/agentloop.c): the same fixed mix of short commands
# in a small git repository, started bare, by `paddock exec` into one warm
# session (the static front, client/paddock_exec.c), by paddock-exec (the
# same file) and by the glibc launcher's own exec verb into the same one, by
# `paddock run` each, by bwrap each (the start-up row's options and seccomp
# program) and by `docker exec` into a running container (the
# host's /usr and its libraries bound in, so the same binaries run). The
# rootless rows as paddock-test; docker exec's client as root, the command
# as paddock-test's uid in the container.
calls=${BENCH_LOOP_CALLS:-200}
loop=$work/loop
mkdir -p "$loop" "$work/home"
chown "$user:" "$loop" "$work/home"
(cd "$loop" && $as env HOME="$work/home" sh -c 'git init -q . &&
	for i in 1 2 3 4 5 6 7 8; do echo "line $i" >"file$i.txt"; done &&
	echo notes >notes.txt && git add . &&
	git -c user.name=bench -c user.email=bench@example.org commit -qm init')
bwl="bwrap --unshare-all --die-with-parent --new-session \
 --ro-bind /usr /usr --ro-bind /etc /etc --symlink usr/bin /bin --symlink usr/sbin /sbin \
 --symlink usr/lib /lib --symlink usr/lib64 /lib64 --symlink usr/lib32 /lib32 \
 --proc /proc --dev /dev --tmpfs /tmp --tmpfs /home/sandbox \
 --bind $loop $loop --chdir $loop"
loop_id=$(cd "$loop" && $as env HOME="$work/home" "$top/build/paddock" run --detach \
	--policy "$top/contrib/policies/agent.json" -- sleep 100000)
loop_docker=""
if [ -z "$docker_why" ] && docker run -d --name pdkbench-loop --network none \
	-u "$uid:$gid" -e HOME=/tmp -v /usr:/usr:ro -v /usr/lib:/lib:ro \
	-v /usr/lib64:/lib64:ro -v "$loop:$loop" -w "$loop" "$image" \
	/usr/bin/sleep 100000 >>"$work/out/engine.log" 2>&1; then
	loop_docker=1
fi
echo "bench: the agent loop, $calls commands per row ($reps runs each)" >&2
for i in $(seq "$reps"); do
	(
		cd "$loop"
		echo "bare $($as env HOME="$work/home" "$ws/agentloop" "$calls")"
		echo "paddock-exec $($as env HOME="$work/home" "$ws/agentloop" "$calls" \
			"$top/build/paddock" exec "$loop_id" --)"
		echo "paddock-exec-static $($as env HOME="$work/home" "$ws/agentloop" "$calls" \
			"$top/build/paddock-exec" "$loop_id" --)"
		echo "paddock-launcher-exec $($as env HOME="$work/home" "$ws/agentloop" "$calls" \
			"$top/build/paddock-launcher" exec "$loop_id" --)"
		echo "paddock-run $($as env HOME="$work/home" "$ws/agentloop" "$calls" $P)"
		# shellcheck disable=SC2086
		echo "bwrap $($as env HOME="$work/home" "$ws/agentloop" "$calls" \
			"$ws/fdexec" "$ws/paddock.bpf" 9 $bwl --seccomp 9)"
		if [ -n "$loop_docker" ]; then
			echo "docker-exec $("$ws/agentloop" "$calls" docker exec pdkbench-loop)"
		fi
	) >>"$work/out/agentloop.txt"
done
if [ -n "$loop_docker" ]; then
	docker rm -f pdkbench-loop >/dev/null 2>&1 || true
elif [ -z "$docker_why" ]; then
	echo "docker-exec-why docker run -d of the loop's container failed: $(tail -1 "$work/out/engine.log")" >>"$work/out/agentloop.txt"
fi
$as "$top/build/paddock" stop --grace 0s "$loop_id" >/dev/null 2>&1 || true
$as "$top/build/paddock" rm "$loop_id" >/dev/null 2>&1 || true
loop_id=""

# The git directory as an allowlist (docs/security.md): every file created,
# written, renamed or removed in the sandbox is a round trip to the
# supervisor. bench/createloop.c, 10,000 creates and unlinks in the loop's
# git repository (this disk) and in the sandbox's /tmp (a tmpfs), with the agent policy as protect_git "check" and as
# "allowlist", alternated run by run.
files=${BENCH_CREATE_FILES:-10000}
for m in check allowlist; do
	printf '{"version": 1, "extends": "%s", "protect_git": "%s"}\n' \
		"$top/contrib/policies/agent.json" "$m" >"$work/agent-$m.json"
done
chown "$user:" "$work/agent-check.json" "$work/agent-allowlist.json"
cp "$ws/createloop" "$loop/createloop"
echo "bench: files created and removed, protect_git check and allowlist ($reps runs each)" >&2
for i in $(seq "$reps"); do
	(
		cd "$loop"
		for m in check allowlist; do
			echo "$m $($as env HOME="$work/home" "$top/build/paddock" run \
				--policy "$work/agent-$m.json" -- ./createloop "$files")"
			# The same in the sandbox's /tmp (a tmpfs): the round
			# trip without this disk's own cost per file.
			echo "$m-tmpfs $($as env HOME="$work/home" "$top/build/paddock" run \
				--policy "$work/agent-$m.json" -- \
				/bin/sh -c 'cd /tmp && exec "$0" "$1"' "$loop/createloop" "$files")"
		done
	) >>"$work/out/createloop.txt"
done
rm -f "$loop/createloop"
# Podman with each runtime, its own storage (vfs: no overlay mounts to
# leave) under $work; the limits given, since this host's root may not
# raise its hard limits (docs/oci.md, "Real clients").
if command -v podman >/dev/null 2>&1; then
	pm="podman --root $work/podman --runroot $work/podman-run --storage-driver vfs --cgroup-manager cgroupfs --events-backend file"
	mkdir -p "$work/pm-rootfs/bin"
	cp "$(command -v busybox)" "$work/pm-rootfs/bin/busybox"
	ln -s busybox "$work/pm-rootfs/bin/true"
	tar -C "$work/pm-rootfs" -cf "$work/pm-rootfs.tar" .
	: >"$work/out/podman_why"
	if $pm import "$work/pm-rootfs.tar" localhost/pdkbench:local >/dev/null 2>&1; then
		set --
		for r in runc crun "$top/build/paddock-oci"; do
			rp=$(command -v "$r" || true)
			run="$pm --runtime $rp --runtime-flag root=$work/oci-state run --rm --network none --ulimit nofile=4096:4096 --ulimit nproc=1024:1024 localhost/pdkbench:local /bin/true"
			if [ -n "$rp" ] && o=$($run 2>&1); then
				set -- "$@" -n "podman run --runtime $(basename "$r")" "$run"
			else
				echo "podman run --runtime $(basename "$r"): not measured: $(printf '%s' "$o" | head -n 1)" \
					>>"$work/out/podman_why"
			fi
		done
		[ $# -gt 0 ] && hyperfine -N --warmup 3 --runs "$druns" --export-json "$work/out/podman.json" "$@" >&2
		$pm rm -af >/dev/null 2>&1 || true
	else
		echo "podman: not measured: the image could not be imported" >"$work/out/podman_why"
	fi
else
	echo "podman: not measured: not installed" >"$work/out/podman_why"
fi

echo "bench: seccomp" >&2
(cd "$top" && build/seccomp_bench) >"$work/out/seccomp.txt"
echo "bench: the evidence log's writer" >&2
"$top/build/evidence_bench" "$work" 20000 >"$work/out/evidence.txt" ||
	echo "not measured: evidence_bench failed" >"$work/out/evidence.txt"

echo "bench: PID 1 reaping 10,000 orphans ($reps runs each)" >&2
for i in $(seq "$reps"); do
	for init in "$I" /usr/bin/tini /usr/bin/catatonit none; do
		if [ "$init" = none ]; then
			line=$($as unshare -Urpf --mount-proc "$ws/reaper" 10000 direct)
		else
			line=$($as unshare -Urpf --mount-proc "$init" -- "$ws/reaper" 10000)
		fi
		echo "$(basename "$init") $line" >>"$work/out/reap.txt"
	done
done

echo "bench: expiry of 1,000 descendants ($reps runs each)" >&2
for i in $(seq "$reps"); do
	echo "floor $("$ws/expiry" watch pid1 -- $as unshare -Urpf --mount-proc "$ws/expiry" load 1000)" \
		>>"$work/out/expiry.txt"
	echo "paddock $(inns "$ws/expiry" watch ttl -- $as env PADDOCK_DEBUG=1 $top/build/paddock run \
		--policy "$top/contrib/policies/agent.json" --ttl 1s -- "$ws/expiry" load 1000)" \
		>>"$work/out/expiry.txt"
	echo "bwrap $("$ws/expiry" watch parent -- $as $bw "$ws/expiry" load 1000)" \
		>>"$work/out/expiry.txt"
	if [ -z "$docker_why" ]; then
		echo "docker $("$ws/expiry" watch docker -- docker run --rm --network none \
			--name pdkbench-expiry -v "$ws:/w:ro" "$image" /w/expiry load 1000)" \
			>>"$work/out/expiry.txt"
	fi
done

stream=${BENCH_STREAM_MB:-4096}
echo "bench: stdout throughput, $stream MiB ($reps runs each)" >&2
# The workload writes to its stdout, a pipe read by cat on the host: through
# the supervisor's relay (the default), the caller's pipe itself
# (--weaken direct-stdio), and bwrap (which passes the caller's fds).
for i in $(seq "$reps"); do
	for t in relay direct bwrap; do
		case $t in
		relay) cmd="$P head -c ${stream}M /dev/zero" ;;
		direct) cmd="$top/build/paddock run --weaken direct-stdio --policy $top/contrib/policies/agent.json -- head -c ${stream}M /dev/zero" ;;
		bwrap) cmd="$bw head -c ${stream}M /dev/zero" ;;
		esac
		s=$(date +%s.%N)
		inns $as sh -c "$cmd 2>/dev/null | cat >/dev/null"
		echo "$t secs=$(echo "$(date +%s.%N) - $s" | bc) mib=$stream" >>"$work/out/stream.txt"
	done
done

echo "bench: keystroke round trip through the terminal relay" >&2
# bench/keystroke.py: one byte to the caller's pty, until its echo is back;
# paddock's path has two ptys (the caller's and the sandbox's) and the
# supervisor between them, as script(1) and docker run -it do.
for i in $(seq "$reps"); do
	echo "paddock $(inns $as python3 "$top/bench/keystroke.py" 300 \
		"$top/build/paddock" run -t --policy "$top/contrib/policies/agent.json" -- cat)" \
		>>"$work/out/keys.txt"
	echo "script $(inns $as env SHELL=/bin/sh python3 "$top/bench/keystroke.py" 300 \
		script -q -c cat /dev/null)" >>"$work/out/keys.txt"
	if [ -z "$docker_why" ]; then
		echo "docker $(python3 "$top/bench/keystroke.py" 300 docker run --rm -it \
			--name pdkbench-keys --network none "$image" cat)" >>"$work/out/keys.txt"
		# One that did not end on ^D (keystroke.py killed its client:
		# "stuck=1") left its container running.
		docker rm -f pdkbench-keys >/dev/null 2>&1 || true
	fi
done

echo "bench: egress through the mediator, tinyproxy and direct ($reps runs each)" >&2
# bench/mediator.py: an upstream on the host's loopback (a 2-byte 200 per
# GET, a byte sink) and one client for every row: 300 requests, each on a
# new connection, and 1 GiB through a CONNECT tunnel (direct: to the
# sink itself). paddock: the client inside `paddock run` with agent-net.json
# and two rules for bench.test (resolved to 127.0.0.1 by the policy);
# tinyproxy (Debian's) on 127.0.0.1:18973 as the test user; direct: no
# proxy. The mediator forwards one request per connection, so there is no
# keep-alive row.
python3 - "$top/contrib/policies/agent-net.json" "$work/net.json" "$work/secrets" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
d["network"] = {"mode": "mediated",
                "secrets": sys.argv[3],
                "resolve": {"bench.test": "127.0.0.1", "granted.test": "127.0.0.1",
                            "cred.test": "127.0.0.1"},
                "allow": [{"host": "bench.test", "ports": [18971], "protocol": "http"},
                          {"host": "bench.test", "ports": [18972], "protocol": "tcp"},
                          {"host": "granted.test", "ports": [18971], "protocol": "http",
                           "grants": [{"methods": ["POST"], "path": "/t/{tenant}",
                                       "values": {"tenant": ["a", "b", "c"]}},
                                      {"methods": ["GET"], "path": "/"}]},
                          {"host": "cred.test", "ports": [18971], "protocol": "http",
                           "grants": [{"methods": ["GET"], "path": "/",
                                       "credential": {"secret": "bench", "env": "BENCH_TOKEN",
                                                      "header": "Authorization",
                                                      "prefix": "Bearer "}}]}]}
json.dump(d, open(sys.argv[2], "w"))
# The metered row's: one more rule, metered (a policy of its own, since a
# metered rule makes every run of it open the budgets' directory).
d["network"]["resolve"]["metered.test"] = "127.0.0.1"
d["network"]["allow"].append({"host": "metered.test", "ports": [18971], "protocol": "http",
                              "metered": {"budget": "bench", "cap": 1000000000, "price": 1}})
json.dump(d, open(sys.argv[2].replace(".json", "-metered.json"), "w"))
PY
# The brokered credential's secrets file (the caller's, 0600).
echo "bench=bench-secret-0123456789" >"$work/secrets"
chmod 600 "$work/secrets"
mkdir -p "$work/mb"
cp "$top/bench/mediator.py" "$work/mb/mediator.py"
printf 'Port 18973\nListen 127.0.0.1\nTimeout 60\nMaxClients 200\nAllow 127.0.0.1\nConnectPort 18972\nLogLevel Critical\nLogFile "%s/tinyproxy.log"\nDisableViaHeader Yes\n' \
	"$work" >"$work/tinyproxy.conf"
chown -R "$user:" "$work"
M="python3 $work/mb/mediator.py"
$as $M serve 18971 18972 &
upstream=$!
$as tinyproxy -d -c "$work/tinyproxy.conf" &
tinyproxy=$!
sleep 1
for i in $(seq "$reps"); do
	echo "direct $($as $M latency direct 300 127.0.0.1 18971)" >>"$work/out/egress.txt"
	echo "tinyproxy $($as $M latency proxy 300 127.0.0.1 18971 127.0.0.1 18973)" \
		>>"$work/out/egress.txt"
	echo "paddock $($as $top/build/paddock run --policy "$work/net.json" --ro-bind "$work/mb" -- \
		$M latency proxy 300 bench.test 18971 127.0.0.1 3128)" >>"$work/out/egress.txt"
	echo "paddock-grant $($as $top/build/paddock run --policy "$work/net.json" --ro-bind "$work/mb" -- \
		$M latency proxy 300 granted.test 18971 127.0.0.1 3128)" >>"$work/out/egress.txt"
	echo "paddock-credential $($as $top/build/paddock run --policy "$work/net.json" --ro-bind "$work/mb" -- \
		env BENCH_AUTH_ENV=BENCH_TOKEN $M latency proxy 300 cred.test 18971 127.0.0.1 3128)" \
		>>"$work/out/egress.txt"
	echo "paddock-metered $($as env XDG_STATE_HOME="$work/state" $top/build/paddock run \
		--policy "$work/net-metered.json" --ro-bind "$work/mb" -- env BENCH_IDEM=bench \
		$M latency proxy 300 metered.test 18971 127.0.0.1 3128)" >>"$work/out/egress.txt"
	echo "paddock-transparent $($as $top/build/paddock run --policy "$work/net.json" \
		--ro-bind "$work/mb" -- $M latency direct 300 bench.test 18971)" >>"$work/out/egress.txt"
	echo "direct $($as $M connect direct 1024 127.0.0.1 18972)" >>"$work/out/tunnel.txt"
	echo "tinyproxy $($as $M connect proxy 1024 127.0.0.1 18972 127.0.0.1 18973)" \
		>>"$work/out/tunnel.txt"
	echo "paddock $($as $top/build/paddock run --policy "$work/net.json" --ro-bind "$work/mb" -- \
		$M connect proxy 1024 bench.test 18972 127.0.0.1 3128)" >>"$work/out/tunnel.txt"
done
# Ours, by pid (setpriv execs, so these are the processes themselves).
kill "$tinyproxy" "$upstream" 2>/dev/null || true
wait "$tinyproxy" "$upstream" 2>/dev/null || true

# The budgets' ledger alone (bench/ledger_bench.c): reserve+settle pairs a
# second with 1, 8 and 32 callers, threads and then processes, on the
# disk the bench's work directory is on.
echo "bench: the budgets' ledger" >&2
{
	"$top/build/ledger_bench" "$work" 3 || echo "not measured: ledger_bench failed"
	PROCS=1 "$top/build/ledger_bench" "$work" 3 || echo "not measured: ledger_bench (processes) failed"
} >"$work/out/ledger.txt" 2>&1

echo "bench: peak RSS of the outside process ($reps runs each)" >&2
for i in $(seq "$reps"); do
	for t in paddock unshare bwrap crun runc; do
		case $t in
		paddock) cmd="$P /bin/sleep 0.5" ;;
		unshare) cmd="unshare -Urmpfn --mount-proc /bin/sleep 0.5" ;;
		bwrap) cmd="$ws/fdexec $ws/paddock.bpf 9 $bw --seccomp 9 /bin/sleep 0.5" ;;
		crun) cmd="$crun $work/bundle-sleep pdkbench-crun" ;;
		runc) cmd="$runc $work/bundle-sleep pdkbench-runc" ;;
		esac
		# shellcheck disable=SC2086
		echo "$t $(inns $as "$ws/rss" $cmd)" >>"$work/out/rss.txt"
	done
done

echo "bench: make eval" >&2
if grep -q '^eval:' "$top/Makefile"; then
	s=$(date +%s.%N)
	if (cd "$top" && make eval >"$work/out/eval.log" 2>&1); then
		echo "$(echo "$(date +%s.%N) - $s" | bc) ok" >"$work/out/eval.txt"
	else
		echo "$(echo "$(date +%s.%N) - $s" | bc) failed" >"$work/out/eval.txt"
	fi
else
	echo "not measured: make eval not available in this build" >"$work/out/eval.txt"
fi

{
	echo "machine: $(nproc) vCPU, $(awk '/MemTotal/ {printf "%.0f GB", $2/1048576}' /proc/meminfo), $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //')"
	echo "kernel: $(uname -r)"
	echo "os: $(. /etc/os-release && echo "$PRETTY_NAME")"
	echo "paddock: $("$top/build/paddock" --version)"
	echo "bwrap: $(bwrap --version)"
	echo "crun: $(crun --version | head -1)"
	echo "runc: $(runc --version | head -1)"
	echo "unshare: $(unshare --version)"
	echo "tini: $(tini --version)"
	echo "catatonit: $(catatonit --version)"
	echo "docker: $(dockerd --version 2>/dev/null || echo none)"
	echo "hyperfine: $(hyperfine --version)"
	echo "date: $(date -u '+%Y-%m-%d %H:%M UTC')"
	echo "cgroups: $(if [ -e /sys/fs/cgroup/unified ]; then echo hybrid; elif [ -e /sys/fs/cgroup/cgroup.controllers ]; then echo unified; else echo legacy; fi)"
} >"$work/out/machine.txt"
for f in "$I" /usr/bin/tini /usr/bin/tini-static /usr/bin/catatonit; do
	echo "$(basename "$f") $(stat -c %s "$f") $(file -b "$f" | grep -q 'statically linked\|static-pie' && echo static || echo dynamic)"
done >"$work/out/sizes.txt"
echo "bench: cmd paddock=$P; bwrap=$bw; crun=$crun; runc=$runc" >"$work/out/commands.txt"
# The raw numbers are kept (the work directory goes at exit), and
# results.md is replaced only by a whole report.
rm -rf /tmp/paddock-bench-out && cp -r "$work/out" /tmp/paddock-bench-out
python3 "$top/bench/report.py" "$work/out" "$runs" "$druns" "$reps" >"$work/results.md"
mv "$work/results.md" "$top/bench/results.md"
cat "$top/bench/results.md"
