#!/bin/sh
# make deb-check: check the package make deb built, without installing it
# into this system: check_deb.sh DEB "DEPENDS".
# - control: the fields dpkg and the archive need, this machine's
#   architecture, the version of the Makefile, Depends as given;
# - contents (dpkg-deb --contents), as lintian would: everything under
#   /usr (nothing in /usr/local, /etc, /home), owned by root:root, no
#   setuid, setgid or world-writable file, directories 0755, man pages
#   compressed, the copyright and changelog, the files paddock needs;
# - every shared library the binaries need (their ELF NEEDED) comes from a
#   package in Depends (dpkg -S), and the binaries are stripped;
# - DEBIAN/md5sums matches what is extracted (dpkg -x into a temporary
#   folder), and the extracted paddock runs a sandbox (finding its own
#   paddock-init), paddock-eval --version answers;
# - installs and removes cleanly: dpkg --root into a scratch root with its
#   own database (no maintainer scripts, no triggers, the real system
#   untouched), then dpkg --purge: nothing of the package may be left.
# Exit 0, or 1 with one line per problem.
set -u
deb=$1
depends=$2
fail=0
bad() { echo "check_deb: $*" >&2; fail=1; }
t=$(mktemp -d)
trap 'rm -rf "$t"' EXIT
[ -f "$deb" ] || { bad "no package $deb"; exit 1; }

field() { dpkg-deb --field "$deb" "$1"; }
for f in Package Version Architecture Maintainer Installed-Size Depends Section Priority \
	Description; do
	[ -n "$(field "$f")" ] || bad "control: no $f"
done
[ "$(field Package)" = paddock ] || bad "control: Package $(field Package)"
want_ver=$(sed -n 's/^VERSION := //p' "$(dirname "$0")/../Makefile")
[ "$(field Version)" = "$want_ver" ] || bad "control: Version $(field Version), Makefile $want_ver"
[ "$(field Architecture)" = "$(dpkg --print-architecture)" ] ||
	bad "control: Architecture $(field Architecture)"
[ "$(field Depends)" = "$depends" ] || bad "control: Depends '$(field Depends)', want '$depends'"

dpkg-deb --contents "$deb" > "$t/contents" || bad "dpkg-deb --contents failed"
# "drwxr-xr-x root/root 0 2026-12-01 14:00 ./usr/bin/"
awk '{ print $1, $2, $6 }' "$t/contents" > "$t/list"
while read -r mode owner path; do
	case $path in
	./ | ./usr/*) ;;
	*) bad "contents: $path is outside /usr" ;;
	esac
	case $path in ./usr/local/*) bad "contents: $path is in /usr/local" ;; esac
	[ "$owner" = root/root ] || bad "contents: $path owned by $owner"
	case $mode in
	d*) [ "$mode" = drwxr-xr-x ] || bad "contents: directory $path is $mode" ;;
	-??[sS]* | -?????[sS]*) bad "contents: $path is setuid or setgid ($mode)" ;;
	-???????w?) bad "contents: $path is world-writable" ;;
	esac
	case $path in
	./usr/share/man/*/?*) case $path in *.gz | */) ;; *) bad "contents: $path not compressed" ;; esac ;;
	esac
done < "$t/list"
for p in usr/bin/paddock usr/bin/paddock-eval usr/libexec/paddock/paddock-init \
	usr/libexec/paddock/paddock-launcher \
	usr/libexec/paddock/paddock-mediator usr/share/man/man1/paddock.1.gz \
	usr/share/man/man1/paddock-eval.1.gz usr/share/man/man5/paddock-policy.5.gz \
	usr/share/man/man8/paddock-init.8.gz usr/share/doc/paddock/copyright \
	usr/share/doc/paddock/changelog.gz usr/share/paddock/policies/agent.json \
	usr/share/bash-completion/completions/paddock usr/share/zsh/vendor-completions/_paddock \
	usr/share/paddock/scenarios/cases/files/hb01_policy.json; do
	grep -q " \./$p\( \|$\)" "$t/contents" || bad "contents: no /$p"
done

mkdir "$t/x" "$t/ctl"
dpkg -x "$deb" "$t/x" || bad "dpkg -x failed"
dpkg-deb -e "$deb" "$t/ctl" || bad "dpkg-deb -e failed"
(cd "$t/x" && md5sum --quiet -c "$t/ctl/md5sums") || bad "md5sums do not match the files"
n_files=$(find "$t/x" -type f | wc -l)
[ "$n_files" = "$(wc -l < "$t/ctl/md5sums")" ] || bad "md5sums: $(wc -l < "$t/ctl/md5sums") lines for $n_files files"
for b in usr/bin/paddock usr/bin/paddock-eval usr/libexec/paddock/paddock-mediator \
	usr/libexec/paddock/paddock-init usr/libexec/paddock/paddock-launcher; do
	f=$t/x/$b
	readelf -S "$f" 2>/dev/null | grep -q '\.debug_info\|\.symtab' && bad "/$b is not stripped"
	for lib in $(readelf -d "$f" 2>/dev/null | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p'); do
		path=$(ldconfig -p | awk -v l="$lib" '$1 == l { print $NF; exit }')
		pkg=$(dpkg -S "$(readlink -f "$path")" 2>/dev/null | head -1 | cut -d: -f1)
		[ -z "$pkg" ] && pkg=$(dpkg -S "$path" 2>/dev/null | head -1 | cut -d: -f1)
		echo "$depends" | tr -d ' ' | tr ',' '\n' | sed 's/(.*//' | grep -qx "$pkg" ||
			bad "/$b needs $lib (package '${pkg:-?}'), not in Depends"
	done
done
"$t/x/usr/bin/paddock" --version >/dev/null || bad "the extracted paddock --version failed"
"$t/x/usr/bin/paddock-eval" --version | grep -q "^paddock-eval $want_ver " ||
	bad "the extracted paddock-eval --version"
mkdir "$t/ws"
(cd "$t/ws" && "$t/x/usr/bin/paddock" run -- /bin/sh -c 'test -r /etc/passwd') ||
	bad "the extracted paddock could not run a sandbox"
man -l "$t/x/usr/share/man/man1/paddock-eval.1.gz" >/dev/null 2>&1 ||
	bad "man paddock-eval.1.gz does not render"

# Install and purge into a scratch root with its own dpkg database.
r=$t/root
mkdir -p "$r/var/lib/dpkg/info" "$r/var/lib/dpkg/updates" "$r/var/log"
: > "$r/var/lib/dpkg/status"
: > "$r/var/lib/dpkg/available"
dpk() { dpkg --root="$r" --log="$t/dpkg.log" --force-depends --force-script-chrootless \
	--no-triggers "$@"; }
dpk -i "$deb" > "$t/install.out" 2>&1 || { bad "dpkg --root -i failed: $(tail -3 "$t/install.out")"; }
[ -x "$r/usr/bin/paddock" ] || bad "dpkg --root -i: no /usr/bin/paddock"
dpkg --root="$r" -s paddock 2>/dev/null | grep -q '^Status: install ok installed' ||
	bad "dpkg --root -s paddock: not installed"
dpk --purge paddock > "$t/purge.out" 2>&1 || bad "dpkg --purge failed: $(tail -3 "$t/purge.out")"
left=$(cd "$r" && find . ! -type d ! -path './var/lib/dpkg/*' ! -path './var/log/*')
[ -z "$left" ] || bad "left after dpkg --purge: $left"
left=$(cd "$r" && find usr -type d 2>/dev/null)
[ -z "$left" ] || bad "directories left after dpkg --purge: $left"

[ "$fail" = 0 ] && echo "check_deb: $(basename "$deb"): control, $(wc -l < "$t/list") entries," \
	"libraries in Depends, md5sums, runs extracted, installs and purges cleanly"
exit "$fail"
