#!/bin/sh
# Run the integration test binaries as an unprivileged user. As root (CI,
# development machines) the tests drop to the test user "paddock-test",
# created here if missing: rootless is the normal case for paddock. When the
# host cannot create user namespaces the tests skip, unless MUST_WORK=1 (CI).
set -eu
user=paddock-test
if [ "$(id -u)" = 0 ]; then
	if ! id "$user" >/dev/null 2>&1; then
		useradd --system --no-create-home --home-dir /nonexistent \
			--shell /usr/sbin/nologin "$user"
	fi
	uid=$(id -u "$user")
	gid=$(id -g "$user")
	run() { setpriv --reuid="$uid" --regid="$gid" --clear-groups --reset-env \
		env PATH=/usr/bin:/bin HOME=/tmp MUST_WORK="${MUST_WORK:-}" \
		PADDOCK_TEST_ROOT="$PWD" "$@"; }
else
	run() { PADDOCK_TEST_ROOT="$PWD" "$@"; }
fi
if [ "${CI:-}" = true ]; then
	MUST_WORK=1
	export MUST_WORK
fi
status=0
for t in "$@"; do
	echo "== $t (as $(run id -un))"
	run "$t" --jobs 2 || status=1
done
exit $status
