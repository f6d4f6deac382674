#!/bin/sh
# make demo: a workload under contrib/policies/agent.json, as an
# unprivileged user. It tries to write outside its workspace (refused) and
# inside it (kept), and the completion record is printed at the end.
set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
paddock="$top/build/paddock"
user=paddock-test

work=$(mktemp -d /tmp/paddock-demo.XXXXXX)
trap 'rm -rf "$work"' EXIT INT TERM
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
echo "== completion record:"
cat "$work/record.json"
exit "$status"
