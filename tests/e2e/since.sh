#!/bin/bash
# tests/e2e/since.sh — what changed since last time: a run is compared with
# the last completed run of the same command in the same directory (one
# with the same lockfiles first); what is new is printed at the end of the
# run, kept in the store and shown by `boxy show`; `boxy diff A B` compares
# any two sessions. A lockfile the sandbox replaced by a link or a fifo is
# never followed or waited on.
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

W=$TN/cases/since
mkdir -p "$W" && cp "$TN/tls/ca.pem" "$W/ca.pem" && chmod -R a+rwX "$W"
# The job is a script in the work directory, so the command stays the same while
# what it does changes (a dependency bump: a new lockfile, a new host).
v1='curl -sS -m 10 --cacert ca.pem https://www.example.test/hello.txt >/dev/null'
v2="$v1"'
curl -sS -m 10 http://other.example.test/hello.txt >/dev/null'

# run_job NAME: `boxy run -- sh job.sh` in $W; sets RC, ID; stderr in $W/NAME.err.
run_job() {
	(cd "$W" && tn_boxy run --audit-log "$W/$1.audit" -- sh job.sh >"$W/$1.out" 2>"$W/$1.err" \
		</dev/null)
	RC=$?
	ID=$(tn_boxy ps -a | awk 'NR == 2 { print $1 }')
	C=$W
	cp "$W/$1.err" "$W/err" 2>/dev/null
	cp "$W/$1.audit" "$W/audit" 2>/dev/null
}
# field ID KEY: a key of the session's JSON record.
field() { tn_boxy show --json "$1" | python3 -c "import json,sys; print(json.load(sys.stdin)['$2'])"; }

printf '%s\n' "$v1" >"$W/job.sh"
printf '{"lockfileVersion": 3, "packages": {"a": "1.0.0"}}\n' >"$W/package-lock.json"
chmod a+rw "$W/job.sh" "$W/package-lock.json"

run_job first
A=$ID
if [ "$RC" -eq 0 ] && ! grep -q 'new since the last run' "$W/first.err" &&
	[ "$(field "$A" baseline)" = None ] && field "$A" lockfile | grep -qE '^sha256:[0-9a-f]{64}$'; then
	ok "since: a first run has no baseline and nothing new; its lockfile digest is recorded"
else
	fail_case "since: a first run has no baseline and nothing new; its lockfile digest is recorded" \
		"baseline $(field "$A" baseline) lockfile $(field "$A" lockfile)"
fi

run_job same
B=$ID
if [ "$RC" -eq 0 ] && ! grep -q 'new since the last run' "$W/same.err" &&
	[ "$(field "$B" baseline | cut -c1-8)" = "$A" ]; then
	ok "since: the same job again: compared with the first run, nothing new"
else
	fail_case "since: the same job again: compared with the first run, nothing new" \
		"baseline $(field "$B" baseline), want $A"
fi

# The bump: a new lockfile, and the job now also reaches other.example.test.
printf '%s\n' "$v2" >"$W/job.sh"
printf '{"lockfileVersion": 3, "packages": {"a": "2.0.1"}}\n' >"$W/package-lock.json"
run_job bump
Cid=$ID
want="boxy: new since the last run: tcp other.example.test:80 (new destination, since ${B:0:8}, lockfiles changed)"
if [ "$RC" -eq 0 ] && grep -qxF "$want" "$W/bump.err" &&
	[ "$(grep -c 'new since the last run' "$W/bump.err")" -eq 1 ]; then
	ok "since: after a dependency bump the new destination is printed at the end of the run"
else
	fail_case "since: after a dependency bump the new destination is printed at the end of the run" \
		"want: $want"
fi
if audit_has since new "other.example.test:80" &&
	tn_boxy show "$Cid" 2>&1 |
	grep -qE "^new +tcp other.example.test:80 \(new destination, since ${B:0:8}"; then
	ok "since: the new destination is in the audit log, the store and boxy show"
else
	fail_case "since: the new destination is in the audit log, the store and boxy show" \
		"show: $(tn_boxy show "$Cid" 2>&1 | head -n 30)"
fi

# Back to the first lockfile: the baseline is the last run with the same lockfiles (B), not C.
printf '%s\n' "$v1" >"$W/job.sh"
printf '{"lockfileVersion": 3, "packages": {"a": "1.0.0"}}\n' >"$W/package-lock.json"
run_job revert
D=$ID
if [ "$RC" -eq 0 ] && [ "$(field "$D" baseline | cut -c1-8)" = "$B" ] &&
	[ "$(field "$D" lockfile)" = "$(field "$A" lockfile)" ]; then
	ok "since: the baseline is the last run with the same lockfiles when there is one"
else
	fail_case "since: the baseline is the last run with the same lockfiles when there is one" \
		"baseline $(field "$D" baseline), want $B"
fi

## ---- decoys past the cap ---------------------------------------------------------------------
# Review finding: at most 20 "new" events, ordered by kind then by count, so a
# payload that dials 25 new ports of a known host three times each pushed the
# one new host it really reached, its new refusal and its planted repository
# out of the summary (the gate still failed: the "more" line counts). Now a
# new host comes before new ports of known ones, and past the cap the first
# new item of each kind (destination, refusal, finding) is still shown.
DW=$TN/cases/since-decoys
mkdir -p "$DW" && cp "$TN/tls/ca.pem" "$DW/ca.pem" && chmod -R a+rwX "$DW"
cat >"$DW/job.py" <<'PY'
import os, socket, subprocess, sys
def dial(host, port):
    s = socket.socket()
    s.settimeout(2)
    try:
        s.connect((host, port))
    except OSError:
        pass
    s.close()
dial("www.example.test", 443)
if os.path.exists("bump"):
    for _ in range(3):
        for port in range(1000, 1025):          # 25 decoys: new ports of a known host
            dial("www.example.test", port)
    dial("other.example.test", 80)              # the one that matters
    dial("169.254.169.254", 80)                 # a new refusal
    subprocess.call(["git", "init", "-q", "planted"])
PY
chmod a+rw "$DW/job.py"
(cd "$DW" && tn_boxy run -- python3 job.py >"$DW/a.out" 2>"$DW/a.err" </dev/null)
touch "$DW/bump" && chmod a+rw "$DW/bump"
(cd "$DW" && tn_boxy run -- python3 job.py >"$DW/b.out" 2>"$DW/b.err" </dev/null)
RC=$?
news=$(grep 'new since the last run' "$DW/b.err")
if [ "$RC" -eq 0 ] && grep -q 'other.example.test:80 (new destination' <<<"$news" &&
	grep -q '169.254.169.254.*(new refusal' <<<"$news" && grep -q 'planted.*(new finding' <<<"$news" &&
	grep -q 'more new items\?' <<<"$news"; then
	ok "since: 25 decoy ports hide neither the new host, nor the new refusal, nor the new finding"
	diag "$news"
else
	fail_case "since: 25 decoy ports hide neither the new host, nor the new refusal, nor the new finding" \
		"exit $RC" "$news"
fi

## ---- boxy diff ----------------------------------------------------------------------------
tn_boxy diff "$A" "$Cid" >"$W/diff.out" 2>&1
RC=$?
if [ "$RC" -eq 0 ] && grep -q "^In ${Cid:0:8}, not in ${A:0:8}:" "$W/diff.out" &&
	grep -qE '^  tcp other.example.test:80 +new destination \(1\)$' "$W/diff.out"; then
	ok "diff: what B reached that A did not"
else
	fail_case "diff: what B reached that A did not" "$(cat "$W/diff.out")"
fi
gone=$(tn_boxy diff --json "$Cid" "$A" | python3 -c '
import json, sys
d = json.load(sys.stdin)
print(len(d["added"]), [g["subject"] for g in d["gone"]])')
if [ "$gone" = "0 ['tcp other.example.test:80']" ]; then
	ok "diff --json: reversed, the destination is gone and nothing is added"
else
	fail_case "diff --json: reversed, the destination is gone and nothing is added" "$gone"
fi
tn_boxy diff "$A" >"$W/diff.out" 2>&1
RC=$?
if [ "$RC" -eq 2 ]; then
	ok "diff: one id is a usage error (exit 2)"
else
	fail_case "diff: one id is a usage error (exit 2)" "$(cat "$W/diff.out")"
fi

## ---- a hostile work directory -------------------------------------------------------------
# The sandbox can write the work directory: its lockfile a link to a file the user
# can read and the sandbox cannot, another a fifo nobody writes. The daemon reads neither.
H=$TN/cases/since-hostile
mkdir -p "$H" && chmod a+rwX "$H"
echo secret >"$TN/secret-lock" && chmod 0644 "$TN/secret-lock"
ln -s "$TN/secret-lock" "$H/package-lock.json"
mkfifo "$H/yarn.lock"
chmod -h a+rw "$H/package-lock.json" 2>/dev/null
chmod a+rw "$H/yarn.lock"
(cd "$H" && timeout 30 bash -c "$(declare -f tn_boxy tn_user); BOXY='$BOXY' TN='$TN' \
	BOXY_TESTNET_UID=$BOXY_TESTNET_UID BOXY_TESTNET_GID=$BOXY_TESTNET_GID tn_boxy run -- true" \
	>"$H/out" 2>"$H/err" </dev/null)
RC=$?
ID=$(tn_boxy ps -a | awk 'NR == 2 { print $1 }')
C=$H
if [ "$RC" -eq 0 ] && [ "$(field "$ID" lockfile)" = None ]; then
	ok "since: a lockfile that is a link or a fifo is neither followed nor waited on"
else
	fail_case "since: a lockfile that is a link or a fifo is neither followed nor waited on" \
		"lockfile $(field "$ID" lockfile)"
fi

done_testing
