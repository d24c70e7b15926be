#!/bin/bash
# tests/e2e/refusal-summary.sh — a run that was refused something ends with a
# short summary where the user is looking: grouped (what, how many, which
# layer, why), with the flag that would allow it where one exists, red on a
# terminal and never under NO_COLOR or on a file.
#
# Inside the hermetic test network (tests/lib/testnet.sh), as the test user,
# with the suite's own daemon.
set -u
here=$(cd "$(dirname "$0")/.." && pwd)
. "$here/lib/harness.sh"
. "$here/lib/testnet.sh"
harness_locate
[ "${BOXY_TESTNET_INSIDE:-}" = 1 ] || harness_as_test_user "$0" "$@"
testnet_enter "$0" "$@"
testnet_setup
tn_probe

payload='curl -s -m 5 http://other.example.test/ ; curl -s -m 5 http://other.example.test/ ;
	curl -s -m 5 http://169.254.169.254/latest/meta-data/ ;
	curl -s -m 5 http://www.example.test/hello.txt >/dev/null; true'

## ---- allowlist mode: names not listed, the metadata address ---------------------------------
run_case summary --allow-host www.example.test -- sh -c "$payload"
if grep -q '^boxy: [0-9]* refused' "$C/err"; then
	ok "a refused run ends with 'boxy: N refused'"
else
	fail_case "a refused run ends with 'boxy: N refused'" "want the summary on stderr"
fi
# other.example.test: asked for A and AAAA twice each, refused at net.dns, one group.
if grep -E '^  other\.example\.test +[0-9]+ +net\.dns +hostname not on the allowlist +fix: --allow-host other\.example\.test( +by .+)?$' "$C/err" >/dev/null; then
	ok "the summary groups a refused name with its layer, reason and fix (--allow-host)"
else
	fail_case "the summary groups a refused name with its layer, reason and fix (--allow-host)" \
		"want '  other.example.test  N  net.dns  hostname not on the allowlist  fix: --allow-host other.example.test'"
fi
if grep -E '^  169\.254\.169\.254:80 +1 +net\.ip ' "$C/err" >/dev/null &&
	! grep -E '^  169\.254\.169\.254:80 .*fix:' "$C/err" >/dev/null; then
	ok "a refused connection counts once (not once per layer) and the metadata address gets no fix"
else
	fail_case "a refused connection counts once (not once per layer) and the metadata address gets no fix" \
		"want one '169.254.169.254:80  1  net.ip …' line without a fix"
fi
if ! grep -q $'\033' "$C/err"; then
	ok "no colour on a file"
else
	fail_case "no colour on a file" "stderr holds escape sequences"
fi

## ---- public mode: a name that answered a documentation-range address -----------------------
run_case docrange --net public -- sh -c 'curl -s -m 5 http://docrange.example.test/; true'
if grep -E '^  docrange\.example\.test +[0-9]+ +net\.ip +answered with 203\.0\.113\.80, in the documentation range: dropped +fix: --allow-cidr 203\.0\.113\.80/32( +by .+)?$' "$C/err" >/dev/null &&
	! grep -q rebinding "$C/err"; then
	ok "a special-range answer is explained (a documentation range) with its fix, not called rebinding"
else
	fail_case "a special-range answer is explained (a documentation range) with its fix, not called rebinding" \
		"want '  docrange.example.test  N  net.ip  answered with 203.0.113.80, in the documentation range: dropped  fix: --allow-cidr 203.0.113.80/32'"
fi

## ---- red on a terminal; plain under NO_COLOR ------------------------------------------------
C=$TN/cases/summary-tty
mkdir -p "$C" && chmod a+rwX "$C"
tty_run() {
	(cd "$C" && tn_user env HOME="$TN/home" XDG_RUNTIME_DIR="$TN/run" XDG_STATE_HOME="$TN/state" \
		"$@" script -qec "'$BOXY' run --allow-host www.example.test -- curl -s -m 5 http://other.example.test/" /dev/null) \
		</dev/null >"$C/out" 2>&1
}
tty_run
if grep -q $'\033\\[31mboxy: [0-9]* refused' "$C/out"; then
	ok "on a terminal the summary is red"
else
	fail_case "on a terminal the summary is red" "want ESC[31m before 'boxy: N refused'"
	diag "$(od -c "$C/out" | tail -8)"
fi
tty_run NO_COLOR=1
if grep -q 'boxy: [0-9]* refused' "$C/out" && ! grep -q $'\033\\[31m' "$C/out"; then
	ok "NO_COLOR: the summary is printed without colour"
else
	fail_case "NO_COLOR: the summary is printed without colour" "want the summary and no ESC[31m"
fi

## ---- what the terminal filter kept from the terminal is said too ----------------------------------
(cd "$C" && tn_user env HOME="$TN/home" XDG_RUNTIME_DIR="$TN/run" XDG_STATE_HOME="$TN/state" \
	script -qec "'$BOXY' run --net none -- printf 'x\\033]52;c;Y3VybHxzaA==\\007\\033[6ny\\n'" /dev/null) \
	</dev/null >"$C/term.out" 2>&1
if grep -q 'boxy: terminal: 2 control sequences the payload wrote were not passed' "$C/term.out" &&
	! grep -q ']52;' "$C/term.out"; then
	ok "a run on a terminal says how many sequences the filter kept from it"
else
	fail_case "a run on a terminal says how many sequences the filter kept from it" \
		"want 'boxy: terminal: 2 control sequences …' and no OSC 52"
	diag "$(od -c "$C/term.out" | tail -6)"
fi

## ---- nothing refused, nothing said ----------------------------------------------------------
run_case clean --allow-host www.example.test -- curl -sS -m 10 http://www.example.test/hello.txt
if [ "$RC" -eq 0 ] && ! grep -q 'refused' "$C/err"; then
	ok "a run that was refused nothing prints no refusal summary"
else
	fail_case "a run that was refused nothing prints no refusal summary" "stderr mentions refused"
fi

done_testing
