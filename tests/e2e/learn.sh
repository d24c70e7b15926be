#!/bin/bash
# tests/e2e/learn.sh — `boxy profile learn`: a job run once in public mode
# (names are recorded in every mode) gives a profile that lets the same job
# run in allowlist mode with nothing refused, and that allows nothing more:
# a port the job did not use on a learned name is refused, and what was
# refused the first time is listed, never granted.
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

# The job: HTTPS and plain HTTP to two names on three ports, and a name it
# only looks up.
job='curl -sS -m 10 --cacert ca.pem https://www.example.test/hello.txt >/dev/null &&
	curl -sS -m 10 http://www.example.test:8080/hello.txt >/dev/null &&
	curl -sS -m 10 http://other.example.test/hello.txt >/dev/null &&
	getent hosts unlisted.example.test >/dev/null'
# The first run also tries a private address: refused in public mode too.
first="$job; curl -s -m 3 http://$TN_PRIV/ >/dev/null; exit 0"

# newest_id: the id of the newest session in the store.
newest_id() { tn_boxy ps -a | awk 'NR == 2 { print $1 }'; }

## ---- learn from a public run --------------------------------------------------------------
run_case learn-public --net public -- sh -c "$first"
ID=$(newest_id)
L=$TN/cases/learn-public/learned.yaml
tn_boxy profile learn "$ID" >"$L" 2>"$C/learn.err"
LRC=$?
if [ "$RC" -eq 0 ] && [ "$LRC" -eq 0 ] && grep -qx '  mode: allowlist' "$L" &&
	grep -qx '    - "www.example.test:443,8080"' "$L" &&
	grep -qx '    - "other.example.test:80"' "$L" &&
	grep -qx '    - "unlisted.example.test"' "$L"; then
	ok "learn: the names and exact ports a public run reached, in allowlist mode"
	diag "the learned profile:"
	diag_file "$L" 40
else
	fail_case "learn: the names and exact ports a public run reached, in allowlist mode" \
		"learn exit $LRC: $(head -c 300 "$C/learn.err")" "profile:" "$(cat "$L")"
fi
if grep -q "^#   tcp $TN_PRIV:80 " "$L" && ! grep -q "^ *- \"$TN_PRIV" "$L" &&
	! grep -q '^  cidrs:' "$L"; then
	ok "learn: a refused connection is listed as a comment, never granted"
else
	fail_case "learn: a refused connection is listed as a comment, never granted" "$(cat "$L")"
fi
if grep -qx "extends: \"generic\"" "$L" && grep -q "^#   ${ID:0:8}  sh -c " "$L"; then
	ok "learn: extends generic for a run without a profile, and names the session"
else
	fail_case "learn: extends generic for a run without a profile, and names the session" \
		"$(head -n 12 "$L")"
fi
if out=$(tn_boxy profile check "$L" 2>&1) && [ "$out" = "$L: ok" ] &&
	grep -q '^  hosts:$' "$L"; then
	ok "learn: the learned profile passes boxy profile check"
else
	fail_case "learn: the learned profile passes boxy profile check" "$out"
fi

## ---- the same job, allowlisted by what was learned ------------------------------------------
run_case learn-allowlist --profile "$L" -- sh -c "$job"
ID2=$(newest_id)
denied=$(tn_boxy show --json "$ID2" 2>/dev/null | python3 -c '
import json, sys
d = json.load(sys.stdin)
print(len(d["refusals"]), d["policy"]["net"]["mode"])' 2>&1)
if [ "$RC" -eq 0 ] && [ "$denied" = "0 allowlist" ] && ! grep -q '"verdict":"deny"' "$C/audit"; then
	ok "learn: the job runs in allowlist mode with its learned profile, nothing refused"
else
	fail_case "learn: the job runs in allowlist mode with its learned profile, nothing refused" \
		"refusals, mode: $denied" "deny lines: $(grep -c '"verdict":"deny"' "$C/audit")"
fi

# Nothing more than what was used: port 80 of www.example.test (used on 443 and 8080 only).
run_case learn-narrow --profile "$L" -- curl -sS -m 5 http://www.example.test/hello.txt
if [ "$RC" -ne 0 ] && audit_has net.ip deny "port not allowed for this host"; then
	ok "learn: a port the job did not use on a learned name is refused"
else
	fail_case "learn: a port the job did not use on a learned name is refused" \
		"$(grep '"verdict":"deny"' "$C/audit" | head -n 3)"
fi

## ---- bad input: one line, the right status -------------------------------------------------
C=$TN/cases/learn-bad
mkdir -p "$C" && chmod a+rwX "$C"
tn_boxy profile learn zz-not-an-id >"$C/out" 2>"$C/err"
RC=$?
if [ "$RC" -eq 2 ] && [ "$(wc -l <"$C/err")" -le 2 ] && [ ! -s "$C/out" ]; then
	ok "learn: a malformed id is a usage error (exit 2), nothing printed on stdout"
else
	fail_case "learn: a malformed id is a usage error (exit 2), nothing printed on stdout"
fi
tn_boxy profile learn 0123456789abcdef >"$C/out" 2>"$C/err"
RC=$?
if [ "$RC" -eq 1 ] && [ "$(wc -l <"$C/err")" -eq 1 ] && grep -q 'no session' "$C/err" &&
	[ ! -s "$C/out" ]; then
	ok "learn: an unknown session is one line and exit 1, nothing printed on stdout"
else
	fail_case "learn: an unknown session is one line and exit 1, nothing printed on stdout"
fi

done_testing
