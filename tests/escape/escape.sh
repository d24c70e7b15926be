#!/bin/bash
# tests/escape/escape.sh — the adversarial suite: what a hostile payload tries, run
# inside `boxy run --net none`, and what must keep working.
#
# Every attack prints ESCAPED only when it worked, so a failing case always means
# something got through, never that a message changed wording. A case also fails
# when the sandbox did not run the attack at all (boxy exited 125–127, or the
# payload did not reach its end): a sandbox that does not start must not look
# secure. See doc/testing.md for the layout, the bait and how to add a case.
#
#   escape.sh              the sandboxed suite, then the control block
#   escape.sh --control    every attack without boxy, as the test user: proves
#                          the detectors detect (most must print ESCAPED)
#   BOXY_ESCAPE_ONLY=RE    run only the cases whose name matches RE
#   BOXY_TEST_KEEP=1       keep the scratch directories (paths on stderr)

. "$(dirname "$0")/../lib/harness.sh"

MODE=both
case ${1:-} in
--control) MODE=control-only ;;
"") ;;
*) echo "usage: escape.sh [--control]" >&2; exit 2 ;;
esac

harness_as_test_user "$0" "$@"
harness_suite_setup

PWHOME=$(getent passwd "$(id -un)" | cut -d: -f6)

## ---- running a case ------------------------------------------------------------
# The shell prelude every payload starts with. `at` runs one attack of attack.c
# and turns a death by signal into a verdict: SIGSYS (159) is the filter killing
# the attacker, i.e. blocked; any other signal is a crash, which proves nothing.
# `hit WHAT` reads stdin and prints ESCAPED when the bait marker is in it.
prelude() {
	cat <<EOF
A='$CASE_WORK/attack'; H='$CASE_HOME'; W='$CASE_WORK'; M='$BAIT'; S='$SUITE'
HP='$HOSTPID'; CP='$CALLERPID'; PORT='$TCP_PORT'; PWHOME='$PWHOME'
at() {
	"\$A" "\$@"; r=\$?
	case \$r in
	0|1|2) ;;
	159) echo "blocked: \$1: attack killed by SIGSYS" ;;
	*) echo "untested: \$1: attack exited \$r" ;;
	esac
}
hit() { grep -q "\$M" && echo "ESCAPED: \$*"; return 0; }
echo BOXY-CASE-STARTED
EOF
}

# evidence_count: connections the fake agent/docker/TCP servers have seen.
evidence_count() { local e=("$SUITE"/evidence/*); [ -e "${e[0]}" ] && echo ${#e[@]} || echo 0; }

# verdict_sandboxed DESC: the pass/fail rules for an attack run inside boxy.
verdict_sandboxed() {
	local desc=$1
	if grep -q 'ESCAPED' "$CASE/out" "$CASE/host" 2>/dev/null; then
		not_ok "$desc"
		grep -h 'ESCAPED' "$CASE/out" "$CASE/host" 2>/dev/null | diag "$(cat)"
	elif grep -q '^BROKEN' "$CASE/host" 2>/dev/null; then
		not_ok "$desc: the case's set-up failed"
		grep -h '^BROKEN' "$CASE/host" | diag "$(cat)"
	elif ! grep -q '^BOXY-CASE-STARTED' "$CASE/out"; then
		not_ok "$desc: the sandbox did not run the attack (boxy exit $RUN_RC)"
		diag_file "$CASE/err" 5
	elif ! grep -q '^BOXY-CASE-DONE' "$CASE/out"; then
		not_ok "$desc: the payload did not finish (exit $RUN_RC)"
		diag_file "$CASE/out" 10
		diag_file "$CASE/err" 5
	elif grep -q '^untested:' "$CASE/out"; then
		not_ok "$desc: the attack could not be attempted"
		grep -h '^untested:' "$CASE/out" | diag "$(cat)"
	elif [ "$RUN_RC" -ne 0 ]; then
		not_ok "$desc: boxy exited $RUN_RC after the payload finished"
		diag_file "$CASE/err" 5
	else
		ok "$desc"
		[ -z "${BOXY_TEST_VERBOSE:-}" ] || grep -h '^blocked:' "$CASE/out" | diag "$(cat)"
	fi
}

# attack NAME CONTROL DESC [BOXY-FLAGS...] -- SCRIPT
#   CONTROL is "fires" when the attack is expected to succeed unsandboxed for an
#   unprivileged user on this machine (the control block asserts it), "quiet"
#   when even an unsandboxed user cannot do it (mount, kexec...): the sandbox
#   is then tested, but the detector's ability to fire is not provable here
#   (--control still runs it and reports); "sandbox" when running it
#   unsandboxed would be meaningless or costly (scanning the host's disk).
#   SETUP and HOSTCHECK, when set in the caller's environment, name functions
#   run on the host before and after the payload (HOSTCHECK writes ESCAPED
#   lines to stdout, which land in $CASE/host).
attack() {
	local name=$1 control=$2 desc=$3 flags=() script before
	shift 3
	while [ $# -gt 0 ] && [ "$1" != -- ]; do flags+=("$1"); shift; done
	shift
	script=$1
	[ -z "${BOXY_ESCAPE_ONLY:-}" ] || [[ $name =~ $BOXY_ESCAPE_ONLY ]] || return 0
	case $PHASE:$control in
	control:sandbox) return 0 ;;
	control:quiet) [ "$MODE" = control-only ] || return 0 ;;
	esac
	case_new "$name"
	[ -z "${SETUP:-}" ] || $SETUP
	before=$(evidence_count)
	local body
	body="$(prelude)
$script
echo BOXY-CASE-DONE"
	if [ "$PHASE" = sandbox ]; then
		boxy_run "${flags[@]}" -- /bin/sh -c "$body"
	else
		direct_run /bin/sh -c "$body"
	fi
	: >"$CASE/host"
	if [ "$(evidence_count)" -ne "$before" ]; then
		echo "ESCAPED: a host socket server saw $(($(evidence_count) - before))" \
			"connection(s)" >>"$CASE/host"
	fi
	[ -z "${HOSTCHECK:-}" ] || $HOSTCHECK >>"$CASE/host"
	if [ "$PHASE" = sandbox ]; then
		local failed_before=$TAP_FAILED
		verdict_sandboxed "$desc"
		CASE_CONTROL[$name]=$control
		[ "$TAP_FAILED" -eq "$failed_before" ] && CASE_PASSED[$name]=1 || CASE_PASSED[$name]=0
		return
	fi
	# Control: the same attack, no sandbox. Did the detector fire?
	CONTROL_RAN=$((CONTROL_RAN + 1))
	if grep -q ESCAPED "$CASE/out" "$CASE/host"; then
		CONTROL_FIRED=$((CONTROL_FIRED + 1))
		CASE_FIRED[$name]=1
		ok "control: $name detector fires unsandboxed"
	elif [ "$control" = fires ]; then
		not_ok "control: $name detector fires unsandboxed"
		diag_file "$CASE/out" 10
		diag_file "$CASE/err" 5
	else
		ok "control: $name does not fire unsandboxed (not possible for $(id -un) here either)"
	fi
}

# works NAME DESC [BOXY-FLAGS...] -- SCRIPT: SCRIPT must print WORKS, exit 0 and
# print no ESCAPED. Sandboxed phase only.
works() {
	local name=$1 desc=$2 flags=()
	shift 2
	while [ $# -gt 0 ] && [ "$1" != -- ]; do flags+=("$1"); shift; done
	shift
	[ "$PHASE" = sandbox ] || return 0
	[ -z "${BOXY_ESCAPE_ONLY:-}" ] || [[ $name =~ $BOXY_ESCAPE_ONLY ]] || return 0
	case_new "$name"
	[ -z "${SETUP:-}" ] || $SETUP
	boxy_run "${flags[@]}" -- /bin/sh -c "$(prelude)
$1"
	: >"$CASE/host"
	[ -z "${HOSTCHECK:-}" ] || $HOSTCHECK >>"$CASE/host"
	if grep -q ESCAPED "$CASE/out" "$CASE/host"; then
		not_ok "works: $desc"
		grep -h ESCAPED "$CASE/out" "$CASE/host" | diag "$(cat)"
	elif [ "$RUN_RC" -eq 0 ] && grep -q '^WORKS' "$CASE/out" &&
		! grep -q BROKEN "$CASE/out" "$CASE/host"; then
		ok "works: $desc"
	else
		not_ok "works: $desc (exit $RUN_RC)"
		diag_file "$CASE/out" 10
		diag_file "$CASE/host" 5
		diag_file "$CASE/err" 5
	fi
}

# only NAME: false when BOXY_ESCAPE_ONLY excludes NAME (for the hand-written cases).
only() { [ -z "${BOXY_ESCAPE_ONLY:-}" ] || [[ $1 =~ $BOXY_ESCAPE_ONLY ]]; }

## ---- quiet cases and their witnesses -------------------------------------------
# A "quiet" case proves nothing on a host where the attack fails anyway (an
# unprivileged user cannot read /proc/kcore or call kexec with or without boxy),
# so each one names its witness: another check that fails when the same defence
# is missing, whatever the host allows. `quiet_witness NAME WITNESS...` (in
# cases.sh or a cases-*.sh file, at top level); a WITNESS is
#   case:OTHER           an escape case of this suite; it must pass sandboxed and,
#                        when it is a "fires" case, fire in the control block
#   unit:FILE:TEXT       a row of a unit test: FILE (under the source tree) must
#                        contain TEXT verbatim; make check runs that test
# After both phases the suite reports how many cases were quiet, and fails for a
# quiet case with no witness or with a witness that did not hold.
declare -A QUIET_WITNESS=() CASE_CONTROL=() CASE_PASSED=() CASE_FIRED=()
quiet_witness() {
	local name=$1 w
	shift
	for w in "$@"; do QUIET_WITNESS[$name]+="$w"$'\n'; done
}

# witness_holds WITNESS: prints why it holds (or why not); status 0 when it holds.
witness_holds() {
	local w=$1 other file text
	case $w in
	case:*)
		other=${w#case:}
		if [ -z "${CASE_PASSED[$other]+set}" ]; then
			if [ -n "${BOXY_ESCAPE_ONLY:-}" ] && ! [[ $other =~ $BOXY_ESCAPE_ONLY ]]; then
				echo "$other (not selected by BOXY_ESCAPE_ONLY)"
				return 0
			fi
			echo "$other did not run"
			return 1
		fi
		if [ "${CASE_PASSED[$other]}" != 1 ]; then
			echo "$other failed"
			return 1
		fi
		if [ "${CASE_CONTROL[$other]}" = fires ] && [ -z "${CASE_FIRED[$other]:-}" ]; then
			echo "$other passed but its detector did not fire unsandboxed"
			return 1
		fi
		echo "$other (${CASE_CONTROL[$other]})"
		;;
	unit:*)
		file=${w#unit:}
		text=${file#*:}
		file=${file%%:*}
		if ! grep -qF -- "$text" "$BOXY_SRCDIR/$file" 2>/dev/null; then
			echo "$file has no row '$text'"
			return 1
		fi
		echo "$file: $text"
		;;
	*)
		echo "'$w' is not case:NAME or unit:FILE:TEXT"
		return 1
		;;
	esac
}

# quiet_report: one TAP line per quiet case that ran, naming its witnesses.
quiet_report() {
	local name w why line n=0 total=${#CASE_CONTROL[@]}
	for name in $(printf '%s\n' "${!CASE_CONTROL[@]}" | sort); do
		[ "${CASE_CONTROL[$name]}" = quiet ] || continue
		n=$((n + 1))
		if [ -z "${QUIET_WITNESS[$name]:-}" ]; then
			not_ok "quiet: $name has a witness (none named: add quiet_witness $name ...)"
			continue
		fi
		why= line=ok
		while IFS= read -r w; do
			[ -n "$w" ] || continue
			if w=$(witness_holds "$w"); then
				why+="${why:+; }$w"
			else
				why+="${why:+; }NOT: $w"
				line=not_ok
			fi
		done <<<"${QUIET_WITNESS[$name]}"
		$line "quiet: $name is witnessed by $why"
	done
	echo "# quiet: $n of $total attack cases do not fire unsandboxed here; witnesses checked above"
}

CONTROL_RAN=0
CONTROL_FIRED=0

CASE_GROUPS=()
. "$(dirname "$0")/cases.sh"
for f in "$(dirname "$0")"/cases-*.sh; do
	[ -e "$f" ] && . "$f"
done

## ---- the run ---------------------------------------------------------------------
if [ "$MODE" = control-only ]; then
	PHASE=control
	echo "# control mode: every attack run directly as $(id -un), without boxy"
	all_cases
	echo "# control: $CONTROL_FIRED of $CONTROL_RAN attacks printed ESCAPED without the sandbox"
	done_testing
	exit
fi

[ -x "$BOXY" ] || harness_die "no boxy at $BOXY (set BOXY_BUILDDIR, or run escape.sh --control)"
if ! boxy_works; then
	echo "# boxy run --net none -- true does not work as $(id -un):"
	sed 's/^/#   /' "$SUITE/probe.out"
fi
PHASE=sandbox
echo "# sandboxed: boxy run --net none as $(id -un)"
all_cases
PHASE=control
echo "# control: the detectors fire without the sandbox"
all_cases
quiet_report
done_testing
