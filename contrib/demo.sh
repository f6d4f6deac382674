#!/bin/sh
# make demo: a workload under contrib/policies/agent.json, as an
# unprivileged user. It tries to write outside its workspace (refused) and
# inside it (kept); a summary of its completion record is printed, and the
# record itself is kept in build/demo/ (its path is printed).
set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
paddock="$top/build/paddock"
user=paddock-test

work=$(mktemp -d /tmp/paddock-demo.XXXXXX)
cleanup() {
	# The session of part 2, if it is still there (by name, as its owner).
	as_user "$paddock" stop --grace 0s demo-web >/dev/null 2>&1 || true
	as_user "$paddock" rm demo-web >/dev/null 2>&1 || true
	# The receiver of part 3, by the pid we started it with.
	[ -n "${rcv_pid:-}" ] && kill "$rcv_pid" 2>/dev/null || true
	rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 130' INT TERM
mkdir "$work/workspace"
echo "host bytes" > "$work/canary"

if [ "$(id -u)" = 0 ]; then
	id "$user" >/dev/null 2>&1 || useradd --system --no-create-home \
		--home-dir /nonexistent --shell /usr/sbin/nologin "$user"
	chown -R "$user:" "$work"
	chmod 755 "$work"
	as_user() { setpriv --reuid="$(id -u $user)" --regid="$(id -g $user)" --clear-groups \
		env -i PATH=/usr/bin:/bin HOME=/nonexistent TERM="${TERM:-dumb}" "$@"; }
else
	as_user() { "$@"; }
fi

echo "== paddock run --policy contrib/policies/agent.json, as $(as_user id -un)"
echo "   workspace: $work/workspace   record: $work/record.json"
cd "$work/workspace"
set +e
as_user "$paddock" run --policy "$top/contrib/policies/agent.json" \
	--workspace "$work/workspace" --record "$work/record.json" -- /bin/sh -c '
	echo "inside: uid=$(id -u) host=$(hostname) pid=$$ cwd=$(pwd)"
	echo "inside: network interfaces: $(tail -n +3 /proc/net/dev | cut -d: -f1 | tr -d " ")"
	if { echo evil > /usr/paddock-demo; } 2>/dev/null; then echo "inside: wrote /usr/paddock-demo";
	else echo "inside: write to /usr/paddock-demo refused"; fi
	if { echo evil > /etc/paddock-demo; } 2>/dev/null; then echo "inside: wrote /etc/paddock-demo";
	else echo "inside: write to /etc/paddock-demo refused"; fi
	if mkdir -p .git/hooks 2>/dev/null; then echo "inside: created .git/hooks";
	else echo "inside: creating .git/hooks refused (protected path)"; fi
	echo "result of the build" > output.txt && echo "inside: wrote output.txt"
	exit 0'
status=$?
set -e
echo "== paddock run exited with $status"
echo "== after the run, on the host:"
[ -e /usr/paddock-demo ] && echo "   /usr/paddock-demo EXISTS (should not)" || echo "   /usr/paddock-demo: absent (refused)"
echo "   workspace/output.txt: $(cat "$work/workspace/output.txt" 2>/dev/null || echo MISSING)"
[ -e "$work/workspace/.git" ] && echo "   .git: left behind (should not)" || echo "   .git: absent (protected path placeholder removed)"
keep="$top/build/demo"
mkdir -p "$keep"
cp "$work/record.json" "$work/record.json.evidence.jsonl" "$keep/" 2>/dev/null || true
echo "== completion record (summary; the whole record: $keep/record.json):"
python3 - "$keep/record.json" <<'EOT'
import json, sys
r = json.load(open(sys.argv[1]))
p, s, l = r["policy"], r["seccomp"], r["landlock"]
mounts = r.get("mounts", [])
print("   paddock %s (commit %s), kernel %s" % (r["paddock"]["version"], r["paddock"]["commit"],
                                              r["kernel"]))
print("   policy %s (sha256 %s...)" % (p["path"], p["sha256"][:16]))
print("   namespaces: %s" % " ".join(r["namespaces"]))
print("   mounts: %d, %d applied; seccomp: %s allowed, %s rules; landlock: ABI %s, %s" % (
    len(mounts), sum(m.get("state") == "applied" for m in mounts), s.get("allowed"),
    s.get("rules"), l.get("abi"), l.get("mode") if l.get("enabled") else "off"))
print("   network: %s; weakenings: %s" % (r["network"]["mode"],
                                          ", ".join(r["weakenings"]) or "none"))
cmd = " ".join(" ".join(r["command"]).split())
print("   command: %s" % (cmd if len(cmd) <= 72 else cmd[:69] + "..."))
print("   ended: %s, status %s, %s -> %s; survivors %d, placeholders left %d" % (
    r["ended"], r["status"], r["start"], r["end"], len(r["survivors"]),
    r["placeholders_left"]))
res = r.get("resources") or {}
if res.get("asked"):
    print("   resources: %s" % ", ".join("%s %s" % (k, v) for k, v in sorted(res.items())
                                        if k != "asked"))
e = r.get("evidence") or {}
if e.get("log"):
    print("   evidence: %d entries, head %s..." % (e["seq"], e["head"][:16]))
for w in r.get("warnings", []) + r.get("errors", []):
    print("   note: %s" % w)
EOT
[ "$status" = 0 ] || exit "$status"

# Part 2: a session with a leased service and a port forward, paddock exec
# into it, the lease outliving the main command, then paddock stop.
python3 - "$top/contrib/policies/agent.json" "$work/web.json" <<'PY'
import json, sys
p = json.load(open(sys.argv[1]))
p["services"] = [{"name": "web", "lease": "30s",
                  "argv": ["python3", "-m", "http.server", "8080", "--bind", "127.0.0.1"]}]
p["ports"] = [{"host": "127.0.0.1:auto", "sandbox": 8080}]
json.dump(p, open(sys.argv[2], "w"), indent=1)
PY
chmod 644 "$work/web.json"
fetch() { python3 -c 'import sys, urllib.request as u; print(u.urlopen(sys.argv[1], timeout=5).read().decode().strip())' "$1"; }
endpoint() { as_user "$paddock" ps --json | python3 -c 'import json, sys
for s in json.load(sys.stdin):
    if s["name"] == "demo-web" and s["state"] != "ended":
        print(s["endpoints"][0]["host"], s["id"], s["generation"])'; }

echo
echo "== paddock run --detach --name demo-web (a leased web service, a port forward)"
id=$(as_user "$paddock" run --detach --name demo-web --policy "$work/web.json" \
	--workspace "$work/workspace" -- sh -c 'echo "hello from the sandbox" > index.html; sleep 4')
echo "   session $id"
set -- $(endpoint)
echo "   endpoint $1 (session $2, generation $3)"
echo "== paddock exec demo-web -- id; ls"
as_user "$paddock" exec demo-web -- sh -c 'echo "   inside: $(id)"; echo "   inside: $(ls | tr "\\n" " ")"'
for i in 1 2 3 4 5 6 7 8 9 10; do fetch "http://$1/index.html" >/dev/null 2>&1 && break; sleep 0.3; done
echo "   GET http://$1/index.html: $(fetch "http://$1/index.html")"
echo "== paddock wait demo-web (the main command's status; the service runs on)"
as_user "$paddock" wait demo-web && echo "   main command: exit 0"
as_user "$paddock" ps | sed 's/^/   /'
echo "   GET after the main command ended: $(fetch "http://$1/index.html")"
echo "== paddock stop demo-web"
as_user "$paddock" stop demo-web
if fetch "http://$1/index.html" >/dev/null 2>&1; then echo "   the endpoint still answers (should not)"; exit 1; fi
echo "   the endpoint refuses connections; the service ended:"
as_user "$paddock" ps --all --json | python3 -c 'import json, sys
for s in json.load(sys.stdin):
    if s["name"] == "demo-web":
        for l in s["leases"]:
            print("   lease", l["service"], "owner", l["owner_uid"], "gen", l["generation"], "->", l["state"], l["ended"])'
as_user "$paddock" rm demo-web

echo
echo "== paddock run with a mediated network: one name allowed, everything else refused"
# A receiver on the host's loopback, named api.demo.test for the sandbox by
# the policy's network.resolve (loopback is refused for every other name).
mkdir "$work/site"
echo "hello through the mediator" > "$work/site/index.html"
chown -R "$user:" "$work/site"
# Not through the as_user function: a function run with & is a subshell,
# and its pid is not the receiver's, which would outlive the demo.
if [ "$(id -u)" = 0 ]; then
	setpriv --reuid="$(id -u $user)" --regid="$(id -g $user)" --clear-groups \
		env -i PATH=/usr/bin:/bin HOME=/nonexistent \
		python3 -m http.server 18480 --bind 127.0.0.1 --directory "$work/site" \
		>/dev/null 2>&1 &
else
	python3 -m http.server 18480 --bind 127.0.0.1 --directory "$work/site" >/dev/null 2>&1 &
fi
rcv_pid=$!
python3 - "$top/contrib/policies/agent.json" "$work/net.json" <<'EOT'
import json, sys
p = json.load(open(sys.argv[1]))
p["network"] = {"mode": "mediated",
                "allow": [{"host": "api.demo.test", "ports": [18480], "protocol": "http"}],
                "resolve": {"api.demo.test": "127.0.0.1"}}
json.dump(p, open(sys.argv[2], "w"), indent=1)
EOT
chown "$user:" "$work/net.json"
for i in 1 2 3 4 5 6 7 8 9 10; do fetch "http://127.0.0.1:18480/" >/dev/null 2>&1 && break; sleep 0.3; done
as_user "$paddock" run --policy "$work/net.json" --workspace "$work/workspace" \
	--record "$work/net-record.json" -- sh -c '
	echo "   allowed name:  $(curl -s -m 5 http://api.demo.test:18480/index.html)"
	echo "   other name:    $(curl -s -m 5 -o /dev/null -w "%{http_code}" http://example.com/) (the mediator refused it)"
	echo "   a literal:     $(curl -s -m 3 --noproxy "*" -o /dev/null -w "%{http_code}" http://127.0.0.1:18480/ || true) (no route but the mediator)"
	echo "   DNS for exfil: $(getent hosts secret.exfil.test || echo REFUSED)"' || true
python3 - "$work/net-record.json" <<'EOT'
import json, sys
n = json.load(open(sys.argv[1]))["network"]
a = n["admissions"]
print("   record: mode %s, allowed %d, refused %d, DNS answered %d, DNS refused %d, log %s" % (
    n["mode"], a["allowed"], sum(v for k, v in a.items() if k.startswith("refused")),
    a["dns-answered"], a["dns-refused"], n["admissions_log_verified"]))
EOT
as_user "$paddock" evidence verify "$work/net-record.json.evidence.jsonl" \
	--record "$work/net-record.json" | sed 's/^/   evidence: /'
kill "$rcv_pid" 2>/dev/null || true
wait "$rcv_pid" 2>/dev/null || true
rcv_pid=
