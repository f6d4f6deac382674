# bash completion for paddock(1) and paddock-eval(1).
# Installed by make install as share/bash-completion/completions/paddock
# (and a link paddock-eval). The verbs are the ones `paddock --help` lists;
# run's options and --weaken's knobs are read from `paddock run --help` of
# the paddock being completed, session ids and names from
# `paddock ps --all --json`, policy names from `paddock policy list`, so
# the completion follows the binary instead of a copy of its lists.

_paddock_verbs="run ps stop wait rm logs endpoint exec evidence doctor policy approve trust plugin budget oci help"

# Top-level "id" and "name" of paddock ps --all --json (one tab of indent:
# leases and endpoints are deeper).
_paddock_sessions()
{
	"$1" ps --all --json 2>/dev/null |
		sed -n 's/^\t"\(id\|name\)":\t"\([^"]*\)".*/\2/p'
}

_paddock_run_options()
{
	"$1" run --help 2>/dev/null | grep -oE -- '(^|[ ,])--?[A-Za-z][A-Za-z-]*' |
		sed 's/^[ ,]*//' | sort -u
}

# The knobs: the words after "--weaken KNOB" up to "(repeatable".
_paddock_knobs()
{
	"$1" run --help 2>/dev/null | awk '
		/--weaken KNOB/ { on = 1; sub(/.*evaluation only:/, ""); }
		on && /\(repeatable/ { on = 0 }
		on { gsub(/,/, " "); for (i = 1; i <= NF; i++) if ($i ~ /^[a-z][a-z-]*$/) print $i }'
}

_paddock_policies()
{
	"$1" policy list 2>/dev/null | awk '{ print $1 }'
}

_paddock()
{
	local cur prev words cword bin verb i
	if declare -F _init_completion >/dev/null; then
		_init_completion || return
	else
		cur=${COMP_WORDS[COMP_CWORD]}
		prev=${COMP_WORDS[COMP_CWORD-1]}
		words=("${COMP_WORDS[@]}")
		cword=$COMP_CWORD
	fi
	bin=${words[0]}
	command -v "$bin" >/dev/null 2>&1 || bin=paddock
	verb=
	for ((i = 1; i < cword; i++)); do
		case ${words[i]} in
		-*) ;;
		*) verb=${words[i]}; break ;;
		esac
	done
	if [[ -z $verb ]]; then
		COMPREPLY=($(compgen -W "$_paddock_verbs --help --version" -- "$cur"))
		return
	fi
	# After "--" (run, exec): the command and its arguments.
	for ((i = i + 1; i < cword; i++)); do
		if [[ ${words[i]} == -- ]]; then
			COMPREPLY=($(compgen -c -- "$cur"))
			return
		fi
	done
	case $verb in
	run)
		case $prev in
		-W | --weaken) COMPREPLY=($(compgen -W "$(_paddock_knobs "$bin")" -- "$cur")); return ;;
		--policy)
			COMPREPLY=($(compgen -W "$(_paddock_policies "$bin")" -- "$cur") $(compgen -f -- "$cur"))
			return ;;
		-w | --workspace | --cwd) COMPREPLY=($(compgen -d -- "$cur")); return ;;
		-r | --record | --env-file | --approvals | --secrets | --init | --bind | --ro-bind | --protect)
			COMPREPLY=($(compgen -f -- "$cur")); return ;;
		-e | --env) COMPREPLY=($(compgen -e -- "$cur")); return ;;
		--ttl | --name | --setenv | -p | --port | --allow-net) return ;;
		esac
		if [[ $cur == -* ]]; then
			COMPREPLY=($(compgen -W "$(_paddock_run_options "$bin")" -- "$cur"))
		else
			COMPREPLY=($(compgen -c -- "$cur"))
		fi ;;
	ps) COMPREPLY=($(compgen -W "--all --json --help" -- "$cur")) ;;
	stop | wait | logs | endpoint | exec | approve | rm)
		case $verb:$prev in
		stop:-g | stop:--grace | exec:--setenv | approve:-d | approve:--dest) return ;;
		exec:--cwd) COMPREPLY=($(compgen -d -- "$cur")); return ;;
		esac
		case $verb:$cur in
		stop:-*) COMPREPLY=($(compgen -W "--grace --help" -- "$cur")) ;;
		logs:-*) COMPREPLY=($(compgen -W "--follow --help" -- "$cur")) ;;
		endpoint:-*) COMPREPLY=($(compgen -W "--json --help" -- "$cur")) ;;
		exec:-*) COMPREPLY=($(compgen -W "--tty --no-tty --cwd --setenv --help" -- "$cur")) ;;
		approve:-*) COMPREPLY=($(compgen -W "--dest --help" -- "$cur")) ;;
		*:-*) COMPREPLY=($(compgen -W "--help" -- "$cur")) ;;
		*) COMPREPLY=($(compgen -W "$(_paddock_sessions "$bin")" -- "$cur")) ;;
		esac ;;
	evidence)
		case $prev in
		evidence) COMPREPLY=($(compgen -W "verify export reconcile" -- "$cur")) ;;
		*)
			if [[ $cur == -* ]]; then
				COMPREPLY=($(compgen -W "--key --record --witness --help" -- "$cur"))
			else
				COMPREPLY=($(compgen -f -- "$cur"))
			fi ;;
		esac ;;
	policy)
		case $prev in
		policy) COMPREPLY=($(compgen -W "show check list" -- "$cur")) ;;
		show | check)
			COMPREPLY=($(compgen -W "$(_paddock_policies "$bin")" -- "$cur") $(compgen -f -- "$cur")) ;;
		esac ;;
	help) COMPREPLY=($(compgen -W "$_paddock_verbs" -- "$cur")) ;;
	doctor) COMPREPLY=($(compgen -W "--policy --help" -- "$cur")) ;;
	oci)
		# paddock oci COMMAND: runc's commands (docs/oci.md).
		[[ $prev == oci ]] && COMPREPLY=($(compgen -W "create start state kill delete exec ps features --root --log --log-format --debug --systemd-cgroup --rootless --weaken --version --help" -- "$cur"))
		;;
	budget)
		case $prev in
		budget) COMPREPLY=($(compgen -W "show export settle jobs" -- "$cur")) ;;
		*) [[ ${COMP_WORDS[2]} == jobs && $COMP_CWORD -ge 4 ]] &&
			COMPREPLY=($(compgen -W "--json --timeout" -- "$cur")) ;;
		esac ;;
	esac
}

# Arms have a colon (weakened:rw-binds), which bash splits words at
# (COMP_WORDBREAKS): the words are read from COMP_LINE instead, and each
# reply loses what precedes the last colon, which bash keeps.
_paddock_eval()
{
	local line=${COMP_LINE:0:COMP_POINT} cur prev bin=${COMP_WORDS[0]} w
	read -ra w <<<"$line"
	if [[ $line == *[[:space:]] ]]; then
		cur= prev=${w[${#w[@]}-1]}
	else
		cur=${w[${#w[@]}-1]} prev=${w[${#w[@]}-2]}
	fi
	command -v "$bin" >/dev/null 2>&1 || bin=paddock-eval
	# paddock-eval report [--out DIR] RESULTS-DIR...: directories.
	if [[ ${w[1]} == report && ${#w[@]} -gt 2 || ${w[1]} == report && -z $cur ]]; then
		[[ $cur == -* ]] && COMPREPLY=($(compgen -W "--out --help" -- "$cur")) ||
			COMPREPLY=($(compgen -d -- "$cur"))
		return
	fi
	case $prev in
	--case)
		COMPREPLY=($(compgen -W "$("$bin" --list 2>/dev/null | awk '/^HB-/ { print $1 }')" -- "$cur"))
		return ;;
	--arm)
		COMPREPLY=($(compgen -W "$("$bin" --list 2>/dev/null |
			awk '/^ *arms:/ { for (i = 2; i <= NF; i++) print $i }' | sort -u)" -- "$cur"))
		if [[ $cur == *:* && $COMP_WORDBREAKS == *:* ]]; then
			local p=${cur%"${cur##*:}"}
			COMPREPLY=("${COMPREPLY[@]#"$p"}")
		fi
		return ;;
	--out) COMPREPLY=($(compgen -d -- "$cur")); return ;;
	--paddock) COMPREPLY=($(compgen -f -- "$cur")); return ;;
	--user) COMPREPLY=($(compgen -u -- "$cur")); return ;;
	esac
	COMPREPLY=($(compgen -W "report $("$bin" --help 2>/dev/null | grep -oE -- '--[a-z][a-z-]*' | sort -u)" -- "$cur"))
}

complete -F _paddock paddock
complete -F _paddock_eval paddock-eval
