#!/bin/bash
# make test-oci: paddock oci under real clients (docs/oci.md). As root.
#
#   1. the runtime alone: bad bundles refused with their one line, the
#      create/start/state/kill/delete lifecycle, exec, ps, --version
#   2. Podman, as root and rootless (the test user paddock-test), with an
#      image imported from a rootfs tarball of the host's busybox-static
#   3. Docker: a dockerd of our own (--data-root, --exec-root, --pidfile
#      and the socket under a temporary directory, --bridge=none
#      --iptables=false), `--add-runtime paddock=build/paddock-oci`
#   4. containerd: a containerd of our own, `ctr run --runtime
#      io.containerd.runc.v2 --runc-binary build/paddock-oci`
#
# Each engine is started and stopped here, by its pid, and everything is
# removed on the way out, also after a failure. Nothing leaves the machine:
# every container runs with --network none (no bridge, no CNI). An engine
# that is not installed and cannot be installed is SKIPPED with its reason,
# never passed. Exit status: 0 every check passed (skips allowed), 1 a
# check failed, 2 not root.
set -u
here=$(cd "$(dirname "$0")/../.." && pwd)
B=${B:-$here/build}
OCI=$B/paddock-oci
pass=0 fail=0 skip=0
T=$(mktemp -d /tmp/paddock-test-oci.XXXXXX)
chmod 755 "$T"
pids=()

say() { printf '%s\n' "$*"; }
ok() { pass=$((pass + 1)); say "ok   $1"; }
bad() { fail=$((fail + 1)); say "FAIL $1: $2"; }
skipped() { skip=$((skip + 1)); say "SKIP $1: $2"; }
# check NAME EXPECTED-SUBSTRING OUTPUT
has() { case "$3" in *"$2"*) ok "$1" ;; *) bad "$1" "wanted \"$2\", got: $(printf '%s' "$3" | tail -n 3)" ;; esac; }

# tty NAME WANT STATUS CMD...: CMD under a pty of script(1), typing two
# lines into it; WANT in its output and STATUS its exit status.
tty() {
	local name=$1 want=$2 st=$3 out rc
	shift 3
	out=$( (sleep 2; printf 'echo typed-$((40+2))\n'; sleep 1; printf 'exit %s\n' "$st"; sleep 1) |
		timeout 60 script -eqc "$*" /dev/null 2>&1)
	rc=$?
	[ "$rc" = "$st" ] && has "$name" "$want" "$out" || bad "$name" "status $rc: $(printf '%s' "$out" | tail -n 2)"
}

cleanup() {
	local p
	for p in "${pids[@]}"; do
		[ -n "$p" ] && kill "$p" 2>/dev/null
	done
	for p in "${pids[@]}"; do
		[ -n "$p" ] || continue
		for _ in $(seq 50); do kill -0 "$p" 2>/dev/null || break; sleep 0.2; done
		kill -9 "$p" 2>/dev/null
	done
	# What an engine left mounted below our directory (overlay layers,
	# shm), deepest first, then the directory itself.
	findmnt -rn -o TARGET | grep "^$T" | sort -r | while read -r m; do umount -l "$m"; done
	rm -rf "$T"
}
trap cleanup EXIT

[ "$(id -u)" = 0 ] || { say "test-oci: run as root"; exit 2; }
[ -x "$OCI" ] || { say "test-oci: $OCI missing (make all)"; exit 2; }

# Debian's packages, skipped when present; an engine that cannot be had is
# skipped below.
need=""
for p in podman uidmap docker.io containerd busybox-static tini; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || need="$need $p"
done
if [ -n "$need" ]; then
	say "test-oci: installing$need"
	DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends $need \
		>"$T/apt.log" 2>&1 || say "test-oci: apt-get failed: $(tail -n 1 "$T/apt.log")"
fi

# ------------------------------------------------------- a busybox rootfs
bb=$(command -v busybox || true)
mkrootfs() {
	mkdir -p "$1/bin" "$1/etc" "$1/tmp" "$1/proc" "$1/dev" "$1/sys"
	cp "$bb" "$1/bin/busybox"
	for t in sh echo cat ls sleep id ps hostname true false wc tr nc; do ln -sf busybox "$1/bin/$t"; done
}
[ -n "$bb" ] || { say "test-oci: no busybox (busybox-static)"; exit 1; }
mkrootfs "$T/rootfs"
tar -C "$T/rootfs" -cf "$T/rootfs.tar" .

# ------------------------------------------------------ 1. the runtime alone
R=$T/state
bundle() { # bundle DIR ARGS-JSON [EXTRA-LINUX-JSON] [EXTRA-TOP-JSON]
	mkdir -p "$1"
	[ -e "$1/rootfs" ] || cp -a "$T/rootfs" "$1/rootfs"
	cat >"$1/config.json" <<EOF
{"ociVersion":"1.0.2","process":{"user":{"uid":0,"gid":0},"args":$2,"cwd":"/",
 "env":["PATH=/bin"]},"root":{"path":"rootfs"},"hostname":"box",
 "mounts":[{"destination":"/proc","type":"proc"},{"destination":"/dev","type":"tmpfs"}],
 "linux":{"namespaces":[{"type":"pid"},{"type":"network"},{"type":"mount"},{"type":"uts"},
 {"type":"ipc"}]${3:-}}${4:-}}
EOF
}

out=$("$OCI" --version)
[ "$(printf '%s\n' "$out" | wc -l)" = 3 ] && printf '%s' "$out" | head -n 1 | grep -q '^paddock-oci version ' &&
	printf '%s' "$out" | grep -q '^commit: ' && printf '%s' "$out" | grep -q '^spec: 1\.' &&
	ok "version: runc's three lines" || bad "version: runc's three lines" "$out"
"$OCI" features | python3 -m json.tool >/dev/null && ok "features: JSON" || bad "features: JSON" "not JSON"
out=$("$OCI" --root "$R" pause x 2>&1); rc=$?
[ $rc = 125 ] && has "an unimplemented command is named" 'command "pause" is not implemented' "$out" ||
	bad "an unimplemented command is named" "status $rc: $out"
out=$("$OCI" --root "$R" --criu x state y 2>&1)
has "an unknown global option is named" "--criu: unknown global option" "$out"

out=$("$OCI" --root "$R" create --bundle "$T/nonexistent" c0 2>&1); rc=$?
[ $rc = 125 ] && has "a missing bundle is refused" "$T/nonexistent: No such file or directory" "$out" ||
	bad "a missing bundle is refused" "status $rc: $out"
bundle "$T/b-link" '["true"]'
mv "$T/b-link/rootfs" "$T/b-link/real" && ln -s real "$T/b-link/rootfs"
out=$("$OCI" --root "$R" --log "$T/log.json" --log-format json create --bundle "$T/b-link" c0 2>&1)
has "a symlinked rootfs is refused" "is a symlink" "$out"
grep -q '"level":"error","msg":"root.path' "$T/log.json" && ok "the error is in --log as JSON" ||
	bad "the error is in --log as JSON" "$(cat "$T/log.json" 2>/dev/null)"
bundle "$T/b-ns" '["true"]' ',"namespaces":[{"type":"pid"},{"type":"network"},{"type":"mount"},{"type":"bogus"}]'
sed -i 's/"namespaces":\[{"type":"pid"},{"type":"network"},{"type":"mount"},{"type":"uts"},/"namespaces_x":[/' "$T/b-ns/config.json"
out=$("$OCI" --root "$R" create --bundle "$T/b-ns" c0 2>&1)
has "an unknown field is refused by its path" 'linux.namespaces_x: not supported' "$out"
bundle "$T/b-ns2" '["true"]'
sed -i 's/{"type":"ipc"}/{"type":"ipcc"}/' "$T/b-ns2/config.json"
out=$("$OCI" --root "$R" create --bundle "$T/b-ns2" c0 2>&1)
has "an unknown namespace type is refused" 'linux.namespaces[4].type: unknown namespace type "ipcc"' "$out"
bundle "$T/b-sc" '["true"]' ',"seccomp":{"defaultAction":"SCMP_ACT_ALLOW","syscalls":[{"names":["getpid","nosuchcall"],"action":"SCMP_ACT_ERRNO"}]}'
out=$("$OCI" --root "$R" create --bundle "$T/b-sc" c0 2>&1)
has "a seccomp profile with an unknown syscall is refused" 'linux.seccomp.syscalls[0].names[1]: unknown syscall "nosuchcall"' "$out"
[ ! -e "$R/c0" ] && ok "a refused create leaves no state" || bad "a refused create leaves no state" "$(ls "$R/c0")"

# The lifecycle: create leaves the container made and stopped before its
# process runs; start runs it; state follows; delete removes it.
hook() { printf '{"path":"/bin/sh","args":["sh","-c","cat > %s/%s.json"],"timeout":10}' "$T" "$1"; }
bundle "$T/b1" '["sh","-c","echo started > /tmp/mark; echo out-of-c1; hostname; sleep 30"]' '' \
	",\"hooks\":{\"prestart\":[$(hook prestart)],\"createRuntime\":[$(hook createRuntime)],\"poststart\":[$(hook poststart)],\"poststop\":[$(hook poststop)]}"
"$OCI" --root "$R" create --bundle "$T/b1" --pid-file "$T/c1.pid" c1 >"$T/c1.out" 2>"$T/c1.err"
rc=$?
[ $rc = 0 ] && ok "create: status 0" || bad "create: status 0" "status $rc: $(cat "$T/c1.err")"
pid=$(cat "$T/c1.pid" 2>/dev/null)
[ -n "$pid" ] && kill -0 "$pid" 2>/dev/null && ok "create: --pid-file names a live process" ||
	bad "create: --pid-file names a live process" "pid '$pid'"
pids+=("$pid")
st=$("$OCI" --root "$R" state c1)
has "state: created" '"status":	"created"' "$st"
python3 -c "import json,sys; s=json.load(open(sys.argv[1])); assert s['status']=='created' and s['pid']>0 and s['id']=='c1', s" "$T/prestart.json" &&
	[ -s "$T/createRuntime.json" ] && ok "hooks: prestart and createRuntime got the state on stdin" ||
	bad "hooks: prestart and createRuntime got the state on stdin" "$(cat "$T/prestart.json" 2>&1)"
[ -e "$T/poststart.json" ] && bad "hooks: no poststart before start" "it ran" || ok "hooks: no poststart before start"
has "state: the record's path in the annotations" '"org.paddock.record":' "$st"
[ "$(stat -c %a "$R/c1")" = 700 ] && ok "the state directory is 0700" || bad "the state directory is 0700" "$(stat -c %a "$R/c1")"
sleep 0.5
grep -q out-of-c1 "$T/c1.out" && bad "nothing runs before start" "output before start" || ok "nothing runs before start"
"$OCI" --root "$R" start c1 && ok "start: status 0" || bad "start: status 0" "failed"
for _ in $(seq 50); do grep -q box "$T/c1.out" && break; sleep 0.1; done
has "the process ran, hostname from config.json" "out-of-c1
box" "$(cat "$T/c1.out")"
has "state: running" '"status":	"running"' "$("$OCI" --root "$R" state c1)"
has "hooks: poststart after start, running" '"status":	"running"' "$(cat "$T/poststart.json" 2>&1)"
out=$("$OCI" --root "$R" ps --format json c1)
python3 -c "import json,sys; p=json.loads(sys.argv[1]); assert len(p) >= 2, p" "$out" &&
	ok "ps --format json: init and the process" || bad "ps --format json: init and the process" "$out"
cat >"$T/p.json" <<EOF
{"user":{"uid":0,"gid":0},"args":["sh","-c","cat /tmp/mark; exit 5"],"env":["PATH=/bin"],"cwd":"/"}
EOF
out=$("$OCI" --root "$R" exec --process "$T/p.json" c1 2>&1); rc=$?
[ $rc = 5 ] && has "exec: in the container, its status" "started" "$out" ||
	bad "exec: in the container, its status" "status $rc: $out"
out=$("$OCI" --root "$R" delete c1 2>&1)
has "delete of a running container is refused" "that is not stopped: running" "$out"
"$OCI" --root "$R" kill c1 TERM && ok "kill TERM: status 0" || bad "kill TERM: status 0" "failed"
for _ in $(seq 100); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
kill -0 "$pid" 2>/dev/null && bad "kill TERM ends the container" "monitor $pid still there" ||
	ok "kill TERM ends the container"
has "state: stopped" '"status":	"stopped"' "$("$OCI" --root "$R" state c1)"
out=$("$OCI" --root "$R" kill c1 KILL 2>&1)
has "kill of a stopped container: not running" "container not running" "$out"
rec=$(python3 -c "import json,sys; print(json.load(open(sys.argv[1]))['annotations']['org.paddock.record'])" "$R/c1/state.json")
python3 -c "import json,sys; r=json.load(open(sys.argv[1])); assert r['status']==143, r['status']" "$rec" &&
	ok "the completion record: status 143" || bad "the completion record: status 143" "$rec"
"$OCI" --root "$R" delete c1 && [ ! -e "$R/c1" ] && ok "delete removes the state" ||
	bad "delete removes the state" "$(ls "$R/c1" 2>&1)"
has "hooks: poststop at delete, stopped" '"status":	"stopped"' "$(cat "$T/poststop.json" 2>&1)"
out=$("$OCI" --root "$R" state c1 2>&1)
has "state of a deleted container" 'container "c1" does not exist' "$out"
# delete --force of a container that never started.
bundle "$T/b2" '["true"]'
"$OCI" --root "$R" create --bundle "$T/b2" --pid-file "$T/c2.pid" c2 >/dev/null 2>&1
pids+=("$(cat "$T/c2.pid" 2>/dev/null)")
"$OCI" --root "$R" delete --force c2 && [ ! -e "$R/c2" ] && ok "delete --force of a created container" ||
	bad "delete --force of a created container" "$(ls "$R/c2" 2>&1)"
# The bundle's seccomp profile holds on top of paddock's (and its twin:
# the same call without the profile).
# (busybox ls says nothing and exits 0 when getdents64 fails: the count
# of what it listed tells.)
bundle "$T/b3" '["sh","-c","echo entries=$(ls / | wc -l)"]' \
	',"seccomp":{"defaultAction":"SCMP_ACT_ALLOW","syscalls":[{"names":["getdents64"],"action":"SCMP_ACT_ERRNO","errnoRet":1}]}'
"$OCI" --root "$R" create --bundle "$T/b3" --pid-file "$T/c3.pid" c3 >"$T/c3.out" 2>&1 &&
	"$OCI" --root "$R" start c3
pids+=("$(cat "$T/c3.pid" 2>/dev/null)")
for _ in $(seq 50); do [ "$("$OCI" --root "$R" state c3 2>/dev/null | grep -c stopped)" = 1 ] && break; sleep 0.1; done
has "linux.seccomp applies (getdents64 refused)" "entries=0" "$(cat "$T/c3.out")"
"$OCI" --root "$R" delete --force c3 >/dev/null 2>&1
bundle "$T/b4" '["sh","-c","echo entries=$(ls / | wc -l)"]'
"$OCI" --root "$R" create --bundle "$T/b4" --pid-file "$T/c4.pid" c4 >"$T/c4.out" 2>&1 &&
	"$OCI" --root "$R" start c4
pids+=("$(cat "$T/c4.pid" 2>/dev/null)")
for _ in $(seq 50); do grep -q entries= "$T/c4.out" && break; sleep 0.1; done
grep -q 'entries=[1-9]' "$T/c4.out" && ok "twin: without the profile getdents64 works" ||
	bad "twin: without the profile getdents64 works" "$(cat "$T/c4.out")"
"$OCI" --root "$R" delete --force c4 >/dev/null 2>&1
# org.paddock.policy: paddock's own enforcement points by annotation (here
# a protected path), and its twin (the same write without it).
printf '{"version":1,"protect":["/etc/x"]}' >"$T/protect.json"
for k in with without; do
	ann=''
	[ $k = with ] && ann=",\"annotations\":{\"org.paddock.policy\":\"$T/protect.json\"}"
	bundle "$T/b5$k" '["sh","-c","echo changed > /etc/x; echo other > /etc/y; echo wrote"]' '' "$ann"
	echo orig >"$T/b5$k/rootfs/etc/x"
	"$OCI" --root "$R" create --bundle "$T/b5$k" --pid-file "$T/c5$k.pid" "c5$k" >"$T/c5$k.out" 2>&1 &&
		"$OCI" --root "$R" start "c5$k"
	pids+=("$(cat "$T/c5$k.pid" 2>/dev/null)")
	for _ in $(seq 50); do grep -q wrote "$T/c5$k.out" && break; sleep 0.1; done
	"$OCI" --root "$R" delete --force "c5$k" >/dev/null 2>&1
done
[ "$(cat "$T/b5with/rootfs/etc/x")" = orig ] && [ "$(cat "$T/b5with/rootfs/etc/y" 2>/dev/null)" = other ] &&
	ok "org.paddock.policy: a protected path holds, the rest is writable" ||
	bad "org.paddock.policy: a protected path holds, the rest is writable" "$(cat "$T/c5with.out")"
[ "$(cat "$T/b5without/rootfs/etc/x")" = changed ] && ok "twin: without the annotation the write lands" ||
	bad "twin: without the annotation the write lands" "$(cat "$T/c5without.out")"
printf '{"version":1,"mounts":[]}' >"$T/wide.json"
bundle "$T/b6" '["true"]' '' ",\"annotations\":{\"org.paddock.policy\":\"$T/wide.json\"}"
out=$("$OCI" --root "$R" create --bundle "$T/b6" c6 2>&1)
has "org.paddock.policy: only network and protect" 'org.paddock.policy.mounts: not supported by paddock oci' "$out"

# process.args that start an init of their own (tini, as docker --init):
# paddock-init stays PID 1 (its sweep and the time limit need it), the
# image's init runs as its child, the container works, its status passes
# through, and the time limit still ends it (the record says "expired").
# (PID 1's comm is "memfd:paddock-i": it is exec'd from a sealed memfd.)
# run_to_end ID BUNDLE TENTHS: create and start, wait (up to TENTHS/10 s)
# for the monitor to end.
run_to_end() {
	local pid
	"$OCI" --root "$R" create --bundle "$2" --pid-file "$T/$1.pid" "$1" >"$T/$1.out" 2>&1 &&
		"$OCI" --root "$R" start "$1"
	pid=$(cat "$T/$1.pid" 2>/dev/null)
	pids+=("$pid")
	for _ in $(seq "$3"); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
}
if [ -x /usr/bin/tini-static ]; then
	bundle "$T/bt" '["/sbin/tini","-s","--","sh","-c","echo pid1=$(cat /proc/1/comm) tini-ppid=$(cut -d\" \" -f4 /proc/$PPID/stat); exit 7"]'
	mkdir -p "$T/bt/rootfs/sbin" && cp /usr/bin/tini-static "$T/bt/rootfs/sbin/tini"
	run_to_end ct "$T/bt" 100
	has "an init in process.args (tini) runs as paddock-init's child" "pid1=memfd:paddock-i tini-ppid=1" "$(cat "$T/ct.out")"
	python3 -c "import json,sys; r=json.load(open(sys.argv[1])); assert r['status']==7 and r['ended']=='exit', (r['status'], r['ended'])" \
		"$R/records/ct.json" && ok "tini: the workload's status 7 in the record" ||
		bad "tini: the workload's status 7 in the record" "$(head -c 300 "$R/records/ct.json" 2>&1)"
	"$OCI" --root "$R" delete --force ct >/dev/null 2>&1
	bundle "$T/bt2" '["/sbin/tini","-s","--","sleep","60"]' '' ',"annotations":{"org.paddock.ttl":"2s"}'
	mkdir -p "$T/bt2/rootfs/sbin" && cp /usr/bin/tini-static "$T/bt2/rootfs/sbin/tini"
	run_to_end ct2 "$T/bt2" 300
	python3 -c "import json,sys; r=json.load(open(sys.argv[1])); assert r['ended']=='expired', r['ended']" \
		"$R/records/ct2.json" && ok "tini: the time limit still ends the container (expired)" ||
		bad "tini: the time limit still ends the container (expired)" "$(head -c 300 "$R/records/ct2.json" 2>&1)"
	"$OCI" --root "$R" delete --force ct2 >/dev/null 2>&1
else
	skipped "an init in process.args (tini)" "no /usr/bin/tini-static (Debian's tini)"
fi

# linux.maskedPaths and readonlyPaths below /proc, as runc gives them: a
# file reads empty (the null device over it), a directory is empty (a
# tmpfs), a read-only path is a read-only mount; a path that does not
# exist is skipped. paths not in paddock's own lists (cpuinfo, tty,
# driver), so that the twin (the same bundle without the lists) shows the
# content.
for k in with without; do
	lists=''
	[ $k = with ] && lists=',"maskedPaths":["/proc/cpuinfo","/proc/tty","/proc/no-such-entry","/sys/firmware"],"readonlyPaths":["/proc/driver"]'
	bundle "$T/bm$k" '["sh","-c","echo cpuinfo=$(cat /proc/cpuinfo | wc -c) tty=$(ls /proc/tty | wc -l) driver=$(grep -c \" /proc/driver ro,\" /proc/self/mountinfo) done"]' "$lists"
	"$OCI" --root "$R" create --bundle "$T/bm$k" --pid-file "$T/cm$k.pid" "cm$k" >"$T/cm$k.out" 2>&1 &&
		"$OCI" --root "$R" start "cm$k"
	pids+=("$(cat "$T/cm$k.pid" 2>/dev/null)")
	for _ in $(seq 100); do grep -q done "$T/cm$k.out" && break; sleep 0.1; done
	[ $k = with ] && st=$("$OCI" --root "$R" state "cm$k" 2>&1)
	"$OCI" --root "$R" delete --force "cm$k" >/dev/null 2>&1
done
has "maskedPaths: /proc/cpuinfo reads empty, /proc/tty is empty; readonlyPaths: /proc/driver read-only" \
	"cpuinfo=0 tty=0 driver=1 done" "$(cat "$T/cmwith.out")"
grep -Eq 'cpuinfo=[1-9][0-9]* tty=[1-9][0-9]* driver=0 done' "$T/cmwithout.out" &&
	ok "twin: without the lists /proc/cpuinfo and /proc/tty have their content" ||
	bad "twin: without the lists /proc/cpuinfo and /proc/tty have their content" "$(cat "$T/cmwithout.out")"
case "$st" in *maskedPaths* | *readonlyPaths*) bad "maskedPaths: not narrowed in org.paddock.achieved" "$st" ;;
	*org.paddock.achieved*) ok "maskedPaths: not narrowed in org.paddock.achieved" ;;
	*) bad "maskedPaths: not narrowed in org.paddock.achieved" "$st" ;; esac

# linux.namespaces[].path: a pod's network namespace, joined. The test
# makes one (held by a bind mount under $T, removed by cleanup) with a
# listener on its loopback, and a listener on the host's loopback at the
# same port: the container reaches the first, never the second; its twin
# (the same bundle without the path) reaches neither.
jport=19061
mkns() { touch "$1" && unshare --net="$1" true && nsenter --net="$1" ip link set lo up; }
if mkns "$T/netns" && ! ss -ltnH "sport = :$jport" | grep -q .; then
	nsenter --net="$T/netns" busybox nc -l -p $jport -e sh -c 'echo from-pod' >/dev/null 2>&1 &
	pids+=($!)
	python3 -c "
import socket,sys
s=socket.socket(); s.setsockopt(socket.SOL_SOCKET,socket.SO_REUSEADDR,1); s.bind(('127.0.0.1',$jport)); s.listen(4)
while True:
    c,_=s.accept(); c.sendall(b'from-host\n'); c.close()" &
	pids+=($!)
	sleep 0.5
	jns=',"namespaces":[{"type":"pid"},{"type":"network","path":"'$T/netns'"},{"type":"mount"},{"type":"uts"},{"type":"ipc"}]'
	for k in join own; do
		bundle "$T/bj$k" '["sh","-c","nc -w 3 127.0.0.1 '$jport' </dev/null; echo nc=$?"]'
		[ $k = join ] && sed -i "s|\"namespaces\":\[{\"type\":\"pid\"},{\"type\":\"network\"}|\"namespaces\":[{\"type\":\"pid\"},{\"type\":\"network\",\"path\":\"$T/netns\"}|" "$T/bj$k/config.json"
		"$OCI" --root "$R" create --bundle "$T/bj$k" --pid-file "$T/cj$k.pid" "cj$k" >"$T/cj$k.out" 2>&1 &&
			"$OCI" --root "$R" start "cj$k"
		pids+=("$(cat "$T/cj$k.pid" 2>/dev/null)")
		for _ in $(seq 100); do grep -q nc= "$T/cj$k.out" && break; sleep 0.1; done
		[ $k = join ] && st=$("$OCI" --root "$R" state "cj$k" 2>&1)
		"$OCI" --root "$R" delete --force "cj$k" >/dev/null 2>&1
	done
	out=$(cat "$T/cjjoin.out")
	case "$out" in *from-pod*nc=0*) ok "namespaces[].path: the joined network namespace's listener is reached" ;;
		*) bad "namespaces[].path: the joined network namespace's listener is reached" "$out" ;; esac
	case "$out" in *from-host*) bad "namespaces[].path: not the host's" "$out" ;; *) ok "namespaces[].path: not the host's" ;; esac
	out=$(cat "$T/cjown.out")
	case "$out" in *from-pod* | *from-host* | *nc=0*) bad "twin: without the path, neither listener" "$out" ;;
		*) ok "twin: without the path, neither listener" ;; esac
	has "namespaces[].path: org.paddock.achieved names the joined inode" \
		"linux.namespaces[1]: network namespace joined (inode $(stat -L -c %i "$T/netns"))" "$st"
	rec=$R/records/cjjoin.json
	python3 -c "import json,sys; r=json.load(open(sys.argv[1])); j=r['namespaces_joined']; assert j==[{'type':'net','inode':int(sys.argv[2])}] and 'net' not in r['namespaces'] and r['network']['mode']=='joined', r" \
		"$rec" "$(stat -L -c %i "$T/netns")" && ok "namespaces[].path: the record has the joined inode" ||
		bad "namespaces[].path: the record has the joined inode" "$(head -c 300 "$rec")"
	# Bad paths: one line each, status 125, nothing made.
	for bp in "/etc/hostname:is not a network namespace" "/proc/self/ns/ipc:is not a network namespace" \
		"$T/nope:No such file or directory"; do
		bundle "$T/bjbad" '["true"]'
		sed -i "s|{\"type\":\"network\"}|{\"type\":\"network\",\"path\":\"${bp%%:*}\"}|" "$T/bjbad/config.json"
		out=$("$OCI" --root "$R" create --bundle "$T/bjbad" cjbad 2>&1); rc=$?
		[ $rc = 125 ] && [ ! -e "$R/cjbad" ] && [ "$(printf '%s\n' "$out" | wc -l)" = 1 ] &&
			has "namespaces[].path ${bp%%:*}: refused" "linux.namespaces[1].path" "$out" &&
			has "namespaces[].path ${bp%%:*}: says why" "${bp#*:}" "$out" ||
			bad "namespaces[].path ${bp%%:*}: refused" "status $rc: $out"
	done
	bundle "$T/bjbad" '["true"]'
	sed -i 's|{"type":"mount"}|{"type":"mount","path":"/proc/1/ns/mnt"}|' "$T/bjbad/config.json"
	out=$("$OCI" --root "$R" create --bundle "$T/bjbad" cjbad 2>&1)
	has "namespaces[].path: a mount namespace by path is refused" \
		'linux.namespaces[2].path: joining a mount namespace is not supported' "$out"
	# Rootless: the host's network namespace is the host root's; the
	# test user holds no capability over it.
	if id paddock-test >/dev/null 2>&1; then
		mkdir -p "$T/rr" && chown paddock-test "$T/rr"
		chmod -R a+rX "$T/bjjoin"
		out=$(setpriv --reuid=paddock-test --regid=paddock-test --clear-groups env HOME="$T/rr" XDG_RUNTIME_DIR= \
			"$OCI" --root "$T/rr" create --bundle "$T/bjjoin" cjr 2>&1); rc=$?
		[ $rc = 125 ] && has "namespaces[].path: rootless joining the host's is refused" \
			"a rootless caller cannot join the host's" "$out" ||
			bad "namespaces[].path: rootless joining the host's is refused" "status $rc: $out"
	else
		skipped "namespaces[].path: rootless joining the host's is refused" "no user paddock-test"
	fi
else
	skipped "namespaces[].path: joining" "no netns could be made, or port $jport taken"
fi

# paddock-oci is the same binary as "paddock oci".
has "paddock oci and paddock-oci are one" "paddock-oci version" "$("$B/paddock" oci --version)"

# --------------------------------------------------------------- 2. Podman
podman_checks() { # LABEL RUN-AS-PREFIX...
	local label=$1; shift
	local P=("$@" podman --root "$PM/storage" --runroot "$PM/run" --cgroup-manager cgroupfs
		--events-backend file --runtime "$OCI" --runtime-flag "root=$PM/oci")
	out=$("${P[@]}" import "$T/rootfs.tar" localhost/paddock-oci-bb:test 2>&1) ||
		{ bad "podman $label: import" "$out"; return; }
	ok "podman $label: import of the busybox rootfs"
	# This host's root may not raise its hard limits (no CAP_SYS_RESOURCE
	# here; runc fails the same), and podman asks for 1048576 open files
	# by default: the limits are given.
	local U=(--ulimit nofile=4096:4096 --ulimit nproc=1024:1024)
	out=$("${P[@]}" run --rm --network none "${U[@]}" localhost/paddock-oci-bb:test sh -c 'echo hello from podman; cat /proc/1/cmdline | tr "\0" " "' 2>&1)
	say "     podman $label run printed: $(printf '%s' "$out" | tr '\n' '|')"
	has "podman $label: run --rm under paddock-init" "hello from podman|paddock-init" "$(printf '%s' "$out" | tr '\n' '|')"
	tty "podman $label: run -it, typed into" "typed-42" 3 "${P[*]}" run --rm -it --network none "${U[*]}" localhost/paddock-oci-bb:test sh
	out=$("${P[@]}" run --rm --network none "${U[@]}" localhost/paddock-oci-bb:test sh -c 'exit 9' 2>&1); rc=$?
	[ $rc = 9 ] && ok "podman $label: the exit status" || bad "podman $label: the exit status" "status $rc: $out"
	out=$("${P[@]}" run -d --name pdk1 --network none "${U[@]}" localhost/paddock-oci-bb:test sh -c 'echo logged; sleep 60' 2>&1) ||
		{ bad "podman $label: run -d" "$out"; return; }
	ok "podman $label: run -d"
	out=$("${P[@]}" exec pdk1 sh -c 'echo from exec' 2>&1)
	has "podman $label: exec" "from exec" "$out"
	out=$("${P[@]}" logs pdk1 2>&1)
	has "podman $label: logs" "logged" "$out"
	tty "podman $label: exec -it, typed into" "typed-42" 5 "${P[*]}" exec -it pdk1 sh
	out=$("${P[@]}" stop -t 5 pdk1 2>&1) && ok "podman $label: stop" || bad "podman $label: stop" "$out"
	out=$("${P[@]}" rm pdk1 2>&1) && ok "podman $label: rm" || bad "podman $label: rm" "$out"
	# --network ns:PATH is linux.namespaces[].path: as root, the test's
	# network namespace (section 1), with a new listener in it.
	if [ "$label" = root ] && [ -e "$T/netns" ] && [ -n "${jport:-}" ]; then
		nsenter --net="$T/netns" busybox nc -l -p "$jport" -e sh -c 'echo from-pod' >/dev/null 2>&1 &
		pids+=($!)
		sleep 0.5
		out=$("${P[@]}" run --rm --network "ns:$T/netns" "${U[@]}" localhost/paddock-oci-bb:test \
			sh -c "nc -w 3 127.0.0.1 $jport </dev/null; echo nc=\$?" 2>&1)
		case "$out" in *from-pod*nc=0*) ok "podman $label: --network ns:PATH joins it" ;;
			*) bad "podman $label: --network ns:PATH joins it" "$out" ;; esac
	fi
}
if command -v podman >/dev/null 2>&1; then
	PM=$T/podman-root
	mkdir -p "$PM"
	podman_checks root
	if id paddock-test >/dev/null 2>&1 && command -v runuser >/dev/null 2>&1; then
		PM=$T/podman-rootless
		mkdir -p "$PM/run" && chown -R paddock-test: "$PM" && chmod 700 "$PM" "$PM/run"
		chmod 644 "$T/rootfs.tar"
		podman_checks rootless runuser -u paddock-test -- env HOME="$PM" XDG_RUNTIME_DIR="$PM/run"
		# Rootless podman leaves its pause process (catatonit -P, which
		# holds its user namespace) running after the last container:
		# ours to end, by the pid in its pid file; SIGKILL, as it does
		# not end on SIGTERM.
		pp=$(cat "$(find "$PM" -name pause.pid 2>/dev/null | head -n 1)" 2>/dev/null || true)
		if [ -n "$pp" ] && [ "$(cat "/proc/$pp/comm" 2>/dev/null)" = catatonit ]; then
			kill -9 "$pp" 2>/dev/null
			for _ in $(seq 50); do [ -d "/proc/$pp" ] || break; sleep 0.1; done
			[ -d "/proc/$pp" ] && bad "podman rootless: its pause process ended" "pid $pp is left" ||
				ok "podman rootless: its pause process ended"
		fi
	else
		skipped "podman rootless" "no test user paddock-test (make integration makes it)"
	fi
else
	skipped "podman" "not installed: $(tail -n 1 "$T/apt.log" 2>/dev/null)"
fi

# --------------------------------------------------------------- 3. Docker
if command -v dockerd >/dev/null 2>&1 && command -v docker >/dev/null 2>&1; then
	D=$T/docker
	mkdir -p "$D"
	setsid dockerd --data-root "$D/data" --exec-root "$D/exec" --pidfile "$D/dockerd.pid" \
		-H "unix://$D/docker.sock" --bridge=none --iptables=false --ip6tables=false \
		--add-runtime "paddock=$OCI" >"$D/dockerd.log" 2>&1 </dev/null &
	pids+=("$!")
	export DOCKER_HOST=unix://$D/docker.sock
	for _ in $(seq 100); do docker info >/dev/null 2>&1 && break; sleep 0.3; done
	if docker info >/dev/null 2>&1; then
		docker import "$T/rootfs.tar" paddock-oci-bb:test >/dev/null && ok "docker: import"
		out=$(docker run --rm --runtime paddock --network none paddock-oci-bb:test sh -c 'echo hello from docker; cat /proc/1/cmdline | tr "\0" " "' 2>&1)
		say "     docker run printed: $(printf '%s' "$out" | tr '\n' '|')"
		has "docker: run --rm under paddock-init" "hello from docker|paddock-init" "$(printf '%s' "$out" | tr '\n' '|')"
		docker run --rm --runtime paddock --network none paddock-oci-bb:test sh -c 'exit 7' >/dev/null 2>&1
		rc=$?
		[ $rc = 7 ] && ok "docker: the exit status" || bad "docker: the exit status" "status $rc"
		tty "docker: run -it, typed into" "typed-42" 4 docker run --rm -it --runtime paddock --network none paddock-oci-bb:test sh
		out=$(docker run --rm --runtime paddock --network host paddock-oci-bb:test true 2>&1)
		has "docker: --network host is refused by name" "is the host's network namespace (the host's network is not supported" "$out"
		if docker run -d --name pdk1 --runtime paddock --network none paddock-oci-bb:test sh -c 'echo logged; sleep 60' >/dev/null 2>&1; then
			ok "docker: run -d"
			has "docker: exec" "from exec" "$(docker exec pdk1 sh -c 'echo from exec' 2>&1)"
			docker exec pdk1 sh -c 'exit 4' >/dev/null 2>&1
			rc=$?
			[ $rc = 4 ] && ok "docker: exec's status" || bad "docker: exec's status" "status $rc"
			has "docker: top" "sleep 60" "$(docker top pdk1 2>&1)"
			tty "docker: exec -it, typed into" "typed-42" 6 docker exec -it pdk1 sh
			has "docker: logs" "logged" "$(docker logs pdk1 2>&1)"
			out=$(docker stop -t 5 pdk1 2>&1) && ok "docker: stop" || bad "docker: stop" "$out"
			has "docker: stopped by SIGTERM, 143" "143" "$(docker inspect -f '{{.State.ExitCode}}' pdk1 2>&1)"
			out=$(docker rm pdk1 2>&1) && ok "docker: rm" || bad "docker: rm" "$out"
		else
			bad "docker: run -d" "$(docker run -d --runtime paddock --network none paddock-oci-bb:test true 2>&1)"
		fi
	else
		skipped "docker" "dockerd did not answer: $(tail -n 1 "$D/dockerd.log")"
	fi
	kill "$(cat "$D/dockerd.pid" 2>/dev/null)" 2>/dev/null
	unset DOCKER_HOST
else
	skipped "docker" "dockerd not installed"
fi

# ------------------------------------------------------------ 4. containerd
if command -v containerd >/dev/null 2>&1 && command -v ctr >/dev/null 2>&1; then
	C=$T/containerd
	mkdir -p "$C"
	# Only what ctr needs: no CRI (which would want CNI networks).
	cat >"$C/config.toml" <<EOF
version = 2
root = "$C/root"
state = "$C/state"
disabled_plugins = ["io.containerd.grpc.v1.cri"]
[grpc]
  address = "$C/containerd.sock"
[ttrpc]
  address = "$C/containerd.sock.ttrpc"
[debug]
  address = "$C/debug.sock"
EOF
	setsid containerd --config "$C/config.toml" >"$C/containerd.log" 2>&1 </dev/null &
	cpid=$!
	pids+=("$cpid")
	A=(ctr --address "$C/containerd.sock" -n paddock-test)
	for _ in $(seq 100); do "${A[@]}" version >/dev/null 2>&1 && break; sleep 0.2; done
	if "${A[@]}" version >/dev/null 2>&1; then
		# An image from the same tarball: ctr imports OCI/docker archives,
		# so one is written by hand (one layer, the rootfs).
		python3 - "$T/rootfs.tar" "$C/image.tar" <<'EOF'
import hashlib, io, json, sys, tarfile
layer = open(sys.argv[1], "rb").read()
ld = hashlib.sha256(layer).hexdigest()
cfg = json.dumps({"architecture": "amd64", "os": "linux",
                  "config": {"Env": ["PATH=/bin"], "Cmd": ["sh"]},
                  "rootfs": {"type": "layers", "diff_ids": ["sha256:" + ld]}}).encode()
cd = hashlib.sha256(cfg).hexdigest()
man = json.dumps({"schemaVersion": 2, "mediaType": "application/vnd.oci.image.manifest.v1+json",
    "config": {"mediaType": "application/vnd.oci.image.config.v1+json", "digest": "sha256:" + cd, "size": len(cfg)},
    "layers": [{"mediaType": "application/vnd.oci.image.layer.v1.tar", "digest": "sha256:" + ld, "size": len(layer)}]}).encode()
md = hashlib.sha256(man).hexdigest()
idx = json.dumps({"schemaVersion": 2, "manifests": [{"mediaType": "application/vnd.oci.image.manifest.v1+json",
    "digest": "sha256:" + md, "size": len(man),
    "annotations": {"io.containerd.image.name": "docker.io/library/paddock-oci-bb:test",
                    "org.opencontainers.image.ref.name": "test"}}]}).encode()
with tarfile.open(sys.argv[2], "w") as t:
    def add(name, data):
        i = tarfile.TarInfo(name); i.size = len(data); t.addfile(i, io.BytesIO(data))
    add("oci-layout", b'{"imageLayoutVersion":"1.0.0"}')
    add("index.json", idx)
    for d, b in ((ld, layer), (cd, cfg), (md, man)):
        add("blobs/sha256/" + d, b)
EOF
		out=$("${A[@]}" images import "$C/image.tar" 2>&1) && ok "ctr: images import" || bad "ctr: images import" "$out"
		out=$(timeout 60 "${A[@]}" run --rm --runtime io.containerd.runc.v2 --runc-binary "$OCI" --runc-root "$C/oci" \
			docker.io/library/paddock-oci-bb:test t1 sh -c 'echo hello from ctr; cat /proc/1/cmdline | tr "\0" " "' 2>&1)
		say "     ctr run printed: $(printf '%s' "$out" | tr '\n' '|')"
		has "ctr: run --rm under paddock-init" "hello from ctr|paddock-init" "$(printf '%s' "$out" | tr '\n' '|')"
		timeout 60 "${A[@]}" run -d --runtime io.containerd.runc.v2 --runc-binary "$OCI" --runc-root "$C/oci" \
			docker.io/library/paddock-oci-bb:test t2 sleep 60 >/dev/null 2>&1
		out=$("${A[@]}" task ls 2>&1)
		has "ctr: run -d, task RUNNING" "RUNNING" "$(printf '%s' "$out" | grep t2)"
		"${A[@]}" task kill -s SIGKILL t2 >/dev/null 2>&1
		for _ in $(seq 50); do "${A[@]}" task ls 2>/dev/null | grep t2 | grep -q STOPPED && break; sleep 0.2; done
		has "ctr: task kill, STOPPED" "STOPPED" "$("${A[@]}" task ls 2>&1 | grep t2)"
		"${A[@]}" task rm t2 >/dev/null 2>&1; "${A[@]}" container rm t2 >/dev/null 2>&1
	else
		skipped "containerd" "containerd did not answer: $(tail -n 1 "$C/containerd.log")"
	fi
	kill "$cpid" 2>/dev/null
else
	skipped "containerd" "not installed"
fi

say "test-oci: $pass passed, $fail failed, $skip skipped"
[ "$fail" = 0 ]
