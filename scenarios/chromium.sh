#!/bin/sh
# scenarios/chromium.sh: make Debian's chromium available for the eval cases
# that drive a real headless browser (HB-07, the report.html check).
#   chromium.sh [deps] install the chromium package when it is missing (as
#                      root; apt-get update once, only if the first install
#                      fails); prints nothing and exits 0 when present
#   chromium.sh path   print the browser's path, or exit 1 if there is none
# Never downloads a browser build of its own: only Debian's package, through
# apt-get. A caller that finds no browser records NOT EXECUTED with the reason.
set -u
pkg=chromium
find_bin() {
	for b in /usr/bin/chromium /usr/lib/chromium/chromium; do
		[ -x "$b" ] && { echo "$b"; return 0; }
	done
	return 1
}
deps() {
	find_bin >/dev/null && return 0
	if [ "$(id -u)" != 0 ]; then
		echo "chromium: the $pkg package is missing (not root; the browser cases will be NOT EXECUTED)" >&2
		return 0
	fi
	echo "chromium: installing $pkg"
	if ! DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends $pkg \
		>/dev/null 2>&1; then
		DEBIAN_FRONTEND=noninteractive apt-get update -qq >/dev/null 2>&1 || true
		DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends $pkg \
			>/dev/null 2>&1 ||
			echo "chromium: could not install $pkg; the browser cases will be NOT EXECUTED" >&2
	fi
	return 0
}
case "${1:-deps}" in
deps) deps ;;
path) find_bin ;;
*)
	echo "usage: chromium.sh deps|path" >&2
	exit 2
	;;
esac
