#!/bin/bash
# The shell completions (contrib/completion/) against the binary and the
# code: check_completion.sh DIR, where DIR/paddock and DIR/paddock-eval are
# the binaries to complete (build/, or an installed bin/); BASH_COMP is the
# bash file (default contrib/completion/paddock.bash), ZSH_COMP_DIR the
# folder of _paddock (default contrib/completion; COMPLETIONS sets both
# defaults' folder).
# - the verbs offered are the ones `paddock --help` lists, no more, no less;
# - run's options offered are launcher/args.c's long_opts, and --weaken's
#   knobs launcher/supervisor/weaken.c's table;
# - a live session's id and name are offered to stop, wait, logs, exec,
#   approve and rm (one started here, detached, ended and removed on exit);
# - paddock-eval's cases are those of --list;
# - zsh (when installed) loads _paddock and offers the same verbs, knobs and
#   session.
# Exit 0, or 1 with one line per mismatch.
set -u
top=$(cd "$(dirname "$0")/.." && pwd)
bin=$(cd "$1" && pwd)
comp_dir=${COMPLETIONS:-$top/contrib/completion}
bash_comp=${BASH_COMP:-$comp_dir/paddock.bash}
zsh_dir=${ZSH_COMP_DIR:-$comp_dir}
export PATH="$bin:$PATH"
fail=0
bad() { echo "check_completion: $*" >&2; fail=1; }
name=compl-check-$$
cleanup() {
	paddock stop --grace 0s "$name" >/dev/null 2>&1
	paddock rm "$name" >/dev/null 2>&1
	[ -n "${ws:-}" ] && rm -rf "$ws"
}
trap cleanup EXIT

# shellcheck source=/dev/null
. "$bash_comp" || { bad "cannot source $bash_comp"; exit 1; }
comp() { # comp FUNC WORD...: the completions of the last word
	local f=$1
	shift
	COMP_WORDS=("$@")
	COMP_CWORD=$(($# - 1))
	COMP_LINE="$*"
	COMP_POINT=${#COMP_LINE}
	COMPREPLY=()
	"$f"
	printf '%s\n' "${COMPREPLY[@]}" | sort -u | grep -v '^$'
}
same() { # same WHAT WANT GOT
	local d
	d=$(diff <(echo "$2" | sort -u) <(echo "$3" | sort -u))
	[ -z "$d" ] || bad "$1: expected (<) and offered (>) differ:" $d
}

verbs=$(paddock --help | sed -n '/^Commands:/,/^Options:/p' | sed -n 's/^  \([a-z][a-z]*\)\( .*\|\)$/\1/p')
[ -n "$verbs" ] || bad "no verbs in paddock --help"
same "paddock verbs" "$verbs" "$(comp _paddock paddock '' | grep -v '^-')"

opts=$(sed -n '/^static const struct option long_opts\[\] = {/,/^};/p' "$top/launcher/args.c" |
	sed -n 's/^ *{"\([a-z-]*\)",.*/--\1/p')
[ -n "$opts" ] || bad "no long_opts in launcher/args.c"
same "paddock run --" "$opts" "$(comp _paddock paddock run -- | grep '^--')"

knobs=$(sed -n '/^static const char \*const weakenings/,/^};/p' \
	"$top/launcher/supervisor/weaken.c" | sed -n 's/^ *\(\[[0-9]*\] *= *\)\{0,1\}{"\([a-z-]*\)",*.*/\2/p')
[ "$(echo "$knobs" | wc -l)" -ge 18 ] || bad "weaken.c's table: $(echo "$knobs" | wc -l) knobs"
same "paddock run --weaken" "$knobs" "$(comp _paddock paddock run --weaken '')"
same "paddock run -W" "$knobs" "$(comp _paddock paddock run -W '')"

same "paddock policy" "$(printf '%s\n' show check list)" "$(comp _paddock paddock policy '')"
comp _paddock paddock policy show '' | grep -qx agent || bad "paddock policy show: no agent"
comp _paddock paddock run --ttl 5s -- '' | grep -qx sh || bad "paddock run -- : no commands"
comp _paddock paddock help '' | grep -qx exec || bad "paddock help: no exec"

cases=$(paddock-eval --list | awk '/^HB-/ { print $1 }')
same "paddock-eval --case" "$cases" "$(comp _paddock_eval paddock-eval --case '')"
comp _paddock_eval paddock-eval -- | grep -qx -- --version || bad "paddock-eval: no --version"
# "weakened:rw" as bash splits it at the colon: the reply is what follows it.
got=$(COMP_WORDBREAKS=":" comp _paddock_eval paddock-eval --case HB-01 --arm weakened:rw)
[ "$got" = rw-binds ] || bad "paddock-eval --arm weakened:rw: offered '$got', not rw-binds"
same "paddock-eval --arm" "$(paddock-eval --list | awk '/arms:/ { for (i = 2; i <= NF; i++) print $i }')" \
	"$(comp _paddock_eval paddock-eval --arm '')"

ws=$(mktemp -d)
chmod 755 "$ws"
id=$(cd "$ws" && paddock run --detach --name "$name" --workspace "$ws" -- sleep 60)
if [ -z "$id" ]; then
	bad "could not start a detached session to complete"
else
	for v in stop wait logs exec approve rm; do
		got=$(comp _paddock paddock "$v" '')
		echo "$got" | grep -qx "$id" || bad "paddock $v: session id $id not offered"
		echo "$got" | grep -qx "$name" || bad "paddock $v: session name $name not offered"
	done
	got=$(comp _paddock paddock stop --grace 1s "${name%-*}")
	echo "$got" | grep -qx "$name" || bad "paddock stop --grace 1s PREFIX: $name not offered"
fi

if command -v zsh >/dev/null 2>&1; then
	# The completion function, called as the completion system would (its
	# words and CURRENT set, compadd recording what it is given).
	zc() {
		zsh -f -c '
			fpath=("$1" $fpath)
			autoload -U compinit && compinit -u -D
			compadd() {
				local a arr=0
				for a in "$@"; do
					case $a in
					-a) arr=1 ;;
					--) ;;
					*) if ((arr)); then print -rl -- ${(P)a}; else print -r -- $a; fi ;;
					esac
				done
			}
			_files() { :; }; _directories() { :; }; _command_names() { print -r -- CMD; }
			_parameters() { :; }; _users() { :; }
			autoload -U +X _paddock
			shift
			words=("$@"); CURRENT=$#; service=$1
			_paddock' zc "$zsh_dir" "$@" 2>&1
	}
	same "zsh: paddock verbs" "$verbs" "$(zc paddock '' | grep -v '^-')"
	same "zsh: paddock run --weaken" "$knobs" "$(zc paddock run --weaken '')"
	same "zsh: paddock run --" "$opts" "$(zc paddock run -- | grep '^--')"
	if [ -n "$id" ]; then
		got=$(zc paddock stop '')
		echo "$got" | grep -qx "$id" || bad "zsh: paddock stop: session id $id not offered"
		echo "$got" | grep -qx "$name" || bad "zsh: paddock stop: $name not offered"
	fi
else
	echo "check_completion: zsh not installed: the zsh completion is not checked" >&2
fi
[ "$fail" = 0 ] && echo "check_completion: bash$(command -v zsh >/dev/null && echo " and zsh"):" \
	"$(echo "$verbs" | wc -w) verbs, $(echo "$opts" | wc -w) run options," \
	"$(echo "$knobs" | wc -w) knobs, sessions by id and name"
exit "$fail"
