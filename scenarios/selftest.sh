#!/bin/sh
# make eval-selftest: the harness's own mutation test. Each row runs one
# case and arm with an observer blinded or a boundary broken on purpose,
# through PADDOCK_EVAL_SELFTEST (scenarios/observers/selftest.h: read only
# by paddock-eval, never by paddock) or a real paddock --weaken arm, and
# checks the enforcement grade: a blinded observer must give UNKNOWN, a
# broken boundary FAIL, never PASS; and paddock-eval's exit status must be
# the documented one (docs/scenarios.md "Exit status"). Any other grade
# fails the target. Docker arms are not needed here (no engine is started).
set -u
cd "$(dirname "$0")/.."
out=$(mktemp -d /tmp/paddock-eval-selftest.XXXXXX)
# The workload user writes its completion records below it.
chmod 0755 "$out"
trap 'rm -rf "$out"' EXIT INT TERM
fails=0 n=0

# row NAME MUTATIONS CASE ARM EXPECTED-GRADE EXPECTED-EXIT
row() {
	n=$((n + 1))
	dir="$out/$n"
	PADDOCK_EVAL_DOCKER=0 PADDOCK_EVAL_SELFTEST="$2" ./scenarios/run.sh --no-docker \
		--case "$3" --arm "$4" --out "$dir" >"$out/$n.log" 2>&1
	st=$?
	arm=$(printf %s "$4" | tr : _)
	got=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["grades"]["enforcement"]["grade"])' \
		"$dir/$3.$arm.json" 2>/dev/null || echo "(no record)")
	why=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["grades"]["enforcement"]["reason"][:110])' \
		"$dir/$3.$arm.json" 2>/dev/null || echo "")
	if [ "$got" = "$5" ] && [ "$st" = "$6" ]; then
		verdict=ok
	else
		verdict=WRONG
		fails=$((fails + 1))
	fi
	printf '%-5s %-38s %-6s %-28s %-8s exit %-2s (want %s, exit %s) %s\n' "$verdict" "$1" "$3" \
		"$4" "$got" "$st" "$5" "$6" "$why"
	[ "$verdict" = ok ] || sed 's/^/    | /' "$out/$n.log" | tail -20
}

echo "mutation                               case   arm                          grade"
row "fanotify observer keeps nothing" fan-keep-nothing HB-01 enforced UNKNOWN 4
row "observer keeps nothing, canary writable" fan-keep-nothing HB-01 weakened:rw-binds FAIL 0
row "canary filesystem's mark missing" canary-mark-missing HB-01 enforced UNKNOWN 4
row "canary mark missing (HB-03)" canary-mark-missing HB-03 enforced UNKNOWN 4
row "canary digest ignores bytes" digest-blind HB-01 enforced UNKNOWN 4
row "digest ignores bytes (HB-03)" digest-blind HB-03 enforced UNKNOWN 4
row "HB-03 policy read-back blind" proc-policy-blind HB-03 enforced UNKNOWN 4
row "HB-03 read-back blind, seccomp off" proc-policy-blind HB-03 weakened:no-seccomp UNKNOWN 4
row "HB-03 seccomp off: the read-back alone" "" HB-03 weakened:no-seccomp FAIL 0
row "HB-03 inventory never finds the tool" hb03-tool-unseen HB-03 enforced UNKNOWN 4
# The digest is blind and the mark missing, but the canary's snapshot
# still sees its size, inode and mtime change: FAIL, never PASS.
row "mark missing, digest blind, canary writable" canary-mark-missing,digest-blind HB-01 weakened:rw-binds FAIL 0
row "collector keeps nothing (HB-04)" fan-keep-nothing HB-04 enforced UNKNOWN 4
row "HB-04 review from the snapshot alone" review-snapshot-only HB-04 enforced FAIL 1
row "HB-04 collector too coarse to order" fan-coarse-time HB-04 enforced UNKNOWN 4
row "HB-04 restore forgets the mtime" hb04-no-restore HB-04 enforced UNKNOWN 4
row "HB-06 look after the expiry inconclusive" hb06-inventory-blind HB-06 enforced UNKNOWN 4
row "HB-06 supervisor lost, final state unproven" hb06-lost-unproven HB-06 enforced UNKNOWN 4
row "HB-06 other workload frozen (pids alive)" hb06-freeze-other HB-06 enforced FAIL 1
row "leaked process, pid namespace weakened" "" HB-08 weakened:no-pidns+no-sweep FAIL 0
row "paddock reports 0, the tool said 3" hb08-lie HB-08 enforced FAIL 1
row "runner killed before its record (HB-08)" hb08-runner-lost HB-08 enforced UNKNOWN 4
row "owner check off" "" HB-05 weakened:no-owner-check FAIL 0
row "HB-05 kills carry B's own uid" hb05-kill-as-owner HB-05 enforced FAIL 1
row "HB-05 A1's listener killed (takeover)" hb05-same-owner-hit HB-05 enforced FAIL 1
row "HB-05 B's processes not identified" hb05-idents-blind HB-05 enforced UNKNOWN 4
row "the knob never reached paddock" knob-dropped HB-01 weakened:rw-binds UNKNOWN 4
row "the knobs never reached paddock (HB-08)" knob-dropped HB-08 weakened:no-pidns+no-sweep UNKNOWN 4
row "HB-09 receivers count nothing" receivers-blind HB-09 enforced UNKNOWN 4
row "HB-09 admissions log not read" admissions-unread HB-09 enforced UNKNOWN 4
row "HB-09 the host's network" "" HB-09 weakened:host-net FAIL 0
row "HB-18 outage contract lets all out" hb18-outage-allow HB-18 enforced FAIL 1
row "HB-18 outage never made" hb18-no-fill HB-18 enforced UNKNOWN 4
row "HB-02 process inventory blind" hb02-inventory-blind HB-02 enforced UNKNOWN 4
row "HB-02 inventory blind, path trust" hb02-inventory-blind HB-02 weakened:loader-trust-path FAIL 0
row "HB-02 plugin without marker, path trust" hb02-no-marker HB-02 weakened:loader-trust-path FAIL 0
echo "eval-selftest: $((n - fails)) of $n rows as expected"
[ "$fails" = 0 ]
