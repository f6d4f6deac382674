#!/bin/sh
# Install what the build and tests need from Debian, skipping what is there.
set -eu
pkgs="build-essential pkg-config libseccomp-dev libcap-dev libmnl-dev libcjson-dev
libcriterion-dev musl-tools bubblewrap iproute2 util-linux python3 hyperfine git
mercurial python3-jsonschema psmisc zsh libsqlite3-dev openssh-client podman uidmap containerd busybox-static"
missing=""
for p in $pkgs; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' ||
		missing="$missing $p"
done
[ -z "$missing" ] && exit 0
if [ "$(id -u)" != 0 ]; then
	echo "deps: missing Debian packages:$missing (run 'make deps' as root)" >&2
	exit 1
fi
echo "deps: installing$missing"
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
# shellcheck disable=SC2086
apt-get install -y -qq --no-install-recommends $missing >/dev/null
