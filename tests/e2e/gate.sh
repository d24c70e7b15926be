#!/bin/bash
# tests/e2e/gate.sh — the CI gate (doc/ci.md): `--fail-on deny,new-destination,
# tripwire,alert` turns a run whose payload succeeded into exit 123 when one of
# the named findings occurred, and `--report FILE` writes them as JUnit XML (and
# FILE.json) that a JUnit parser reads; a payload's own failure keeps its
# status; an opened decoy credential fails tripwire (and alert), a run that
# leaves the decoys alone passes; a word that does not exist is refused; a
# report path that is a link is never followed.
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

GATE=123
ok_get='curl -sS -m 10 --cacert ca.pem https://www.example.test/hello.txt >/dev/null'
# Refused in allowlist mode at the name (only www.example.test is allowed).
refused='curl -s -m 5 http://other.example.test/hello.txt >/dev/null'
allow=(--net allowlist --allow-host www.example.test:443)

# junit FILE: "FAILURES|MESSAGES" from the JUnit file, or "unparsable: why".
junit() {
	python3 - "$1" <<'PY'
import sys, xml.etree.ElementTree as ET
try:
    root = ET.parse(sys.argv[1]).getroot()
except Exception as e:
    print("unparsable:", e); sys.exit()
fails = root.findall(".//testcase/failure")
props = {p.get("name"): p.get("value") for p in root.iter("property")}
cases = sorted(c.get("name") for c in root.iter("testcase"))
print("%d|%s|%s|%s" % (len(fails), " ## ".join(f.get("message") for f in fails),
                       ",".join(cases), props.get("session", "")))
PY
}
# jsonrep FILE: "failed failed_on kinds" from the JSON report.
jsonrep() {
	python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
print(d["failed"], ",".join(d["failed_on"]), ",".join(f["kind"] for f in d["findings"]), d["exit"], d["status"])' "$1" 2>&1
}

## ---- a refusal fails --fail-on deny ----------------------------------------------------
run_case gate-deny "${allow[@]}" --fail-on deny --report r.xml -- sh -c "$ok_get; $refused; exit 0"
J=$(junit "$C/r.xml")
if [ "$RC" -eq "$GATE" ] && [[ $J == [1-9]*'|'*'other.example.test'* ]] &&
	grep -q 'gate: failed on deny' "$C/err"; then
	ok "gate: a refusal with --fail-on deny exits $GATE; the JUnit failure names the refused name"
	diag "junit: $J"
	diag_file "$C/r.xml" 40
	diag_file "$C/r.xml.json" 5
else
	fail_case "gate: a refusal with --fail-on deny exits $GATE; the JUnit failure names the refused name" \
		"exit $RC, junit: $J" "$(tail -n 5 "$C/err")"
fi
ID=$(tn_boxy ps -a | awk 'NR == 2 { print $1 }')
if [[ $J == *'|alert,deny,new-destination,tripwire|'"$ID"* ]] &&
	[ "$(jsonrep "$C/r.xml.json")" = "True deny deny 0 $GATE" ]; then
	ok "gate: one testcase per word, the session id as a property, the JSON report beside it"
else
	fail_case "gate: one testcase per word, the session id as a property, the JSON report beside it" \
		"junit: $J (session $ID)" "json: $(jsonrep "$C/r.xml.json")"
fi

## ---- a clean run passes -----------------------------------------------------------------
run_case gate-clean "${allow[@]}" --fail-on deny --report r.xml -- sh -c "$ok_get"
J=$(junit "$C/r.xml")
if [ "$RC" -eq 0 ] && [[ $J == '0|'* ]] && [ "$(jsonrep "$C/r.xml.json")" = "False   0 0" ] &&
	! grep -q 'gate:' "$C/err"; then
	ok "gate: a clean run with the same flags exits 0 and its report has no failure"
else
	fail_case "gate: a clean run with the same flags exits 0 and its report has no failure" \
		"exit $RC, junit: $J" "json: $(jsonrep "$C/r.xml.json")" "$(tail -n 5 "$C/err")"
fi

# Review, held: another local user cannot read what the payload was refused (the
# report names refused hosts, paths and the command line): both files are 0600.
if [ "$(stat -c %a "$C/r.xml") $(stat -c %a "$C/r.xml.json")" = "600 600" ]; then
	ok "gate: the reports are created 0600 (no other user reads them)"
else
	fail_case "gate: the reports are created 0600 (no other user reads them)" \
		"$(stat -c '%a %n' "$C/r.xml" "$C/r.xml.json")"
fi

## ---- the payload's own failure wins --------------------------------------------------------
run_case gate-fails "${allow[@]}" --fail-on deny --report r.xml -- sh -c "$refused; exit 3"
J=$(junit "$C/r.xml")
if [ "$RC" -eq 3 ] && [[ $J == [1-9]*'|'*'other.example.test'* ]] &&
	grep -q 'gate: failed on deny; the command.s own exit status 3 wins' "$C/err"; then
	ok "gate: a payload that fails (exit 3) with a refusal keeps exit 3; the report shows the refusal"
else
	fail_case "gate: a payload that fails (exit 3) with a refusal keeps exit 3; the report shows the refusal" \
		"exit $RC, junit: $J" "$(tail -n 5 "$C/err")"
fi

## ---- --report alone judges nothing ----------------------------------------------------------
run_case gate-report-only "${allow[@]}" --report r.xml -- sh -c "$refused; exit 0"
J=$(junit "$C/r.xml")
if [ "$RC" -eq 0 ] && [[ $J == '0|'* ]] && grep -q 'other.example.test' "$C/r.xml" &&
	[ "$(jsonrep "$C/r.xml.json")" = "False  deny 0 0" ]; then
	ok "gate: --report without --fail-on lists the refusal, fails nothing, exits 0"
else
	fail_case "gate: --report without --fail-on lists the refusal, fails nothing, exits 0" \
		"exit $RC, junit: $J" "json: $(jsonrep "$C/r.xml.json")"
fi

## ---- an alert, with a name the payload chose to break the XML ------------------------------
# A repository planted in a directory named with markup, a CDATA end, a control
# byte and a byte that is not UTF-8: the alert names it, the report stays XML.
run_case gate-alert --net none --fail-on alert --report r.xml -- sh -c \
	'd=$(printf "p<&\"]]>\001\377x"); mkdir -p "$d" && cd "$d" && git init -q . && exit 0'
J=$(junit "$C/r.xml")
if [ "$RC" -eq "$GATE" ] && [[ $J == [1-9]*'|git: '*'p<&"]]>'$'\xef\xbf\xbd\xef\xbf\xbd''x'* ]] &&
	python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); sys.exit(d["failed_on"] != ["alert"])' \
		"$C/r.xml.json"; then
	ok "gate: a planted repository fails --fail-on alert; its hostile name is escaped in the JUnit file"
else
	fail_case "gate: a planted repository fails --fail-on alert; its hostile name is escaped in the JUnit file" \
		"exit $RC, junit: $J" "$(tail -n 5 "$C/err")" "$(head -c 2000 "$C/r.xml")"
fi

## ---- a new destination since the last run ---------------------------------------------------
W=$TN/cases/gate-since
mkdir -p "$W" && cp "$TN/tls/ca.pem" "$W/ca.pem" && chmod -R a+rwX "$W"
# run_job NAME: `boxy run --fail-on new-destination --report NAME.xml -- sh job.sh` in $W.
run_job() {
	(cd "$W" && tn_boxy run --fail-on new-destination --report "$1.xml" -- sh job.sh \
		>"$W/$1.out" 2>"$W/$1.err" </dev/null)
	RC=$?
}
printf '%s\n' "$ok_get" >"$W/job.sh" && chmod a+rw "$W/job.sh"
run_job first
R1=$RC
run_job again
R2=$RC
printf '%s\n%s\n' "$ok_get" 'curl -sS -m 10 http://other.example.test/hello.txt >/dev/null' \
	>"$W/job.sh"
run_job bump
J=$(junit "$W/bump.xml")
if [ "$R1" -eq 0 ] && [ "$R2" -eq 0 ] && [ "$RC" -eq "$GATE" ] &&
	[[ $J == 1'|'*'other.example.test:80'*'new destination'* ]]; then
	ok "gate: --fail-on new-destination passes twice, then fails when the job reaches a new host"
else
	fail_case "gate: --fail-on new-destination passes twice, then fails when the job reaches a new host" \
		"exits $R1 $R2 $RC, junit: $J" "$(tail -n 5 "$W/bump.err")"
fi
# Review finding: the failed run ended like any other and became the next run's
# baseline, so running the failed job again passed. A run whose gate failed is
# recorded as such and is never a baseline: the host stays new until a person lets
# a run pass (here: once without the word), after which the job passes again.
BUMP=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["session"])' "$W/bump.xml.json" 2>&1)
GATE_COL=$(tn_boxy show --json "$BUMP" 2>&1 | python3 -c 'import json,sys; print(json.load(sys.stdin).get("gate"))' 2>&1)
run_job retry
J=$(junit "$W/retry.xml")
if [ "$RC" -eq "$GATE" ] && [[ $J == 1'|'*'other.example.test:80'*'new destination'* ]] &&
	[ "$GATE_COL" = new-destination ]; then
	ok "gate: the failed job run again fails again (a failed run is never the baseline; show says gate new-destination)"
else
	fail_case "gate: the failed job run again fails again (a failed run is never the baseline; show says gate new-destination)" \
		"exit $RC, junit: $J, gate of $BUMP: $GATE_COL" "$(tail -n 5 "$W/retry.err")"
fi
(cd "$W" && tn_boxy run -- sh job.sh >"$W/accept.out" 2>"$W/accept.err" </dev/null)
RA=$?
run_job accepted
if [ "$RA" -eq 0 ] && [ "$RC" -eq 0 ]; then
	ok "gate: once a run without the word passes, the new host is the baseline's and the job passes"
else
	fail_case "gate: once a run without the word passes, the new host is the baseline's and the job passes" \
		"exits $RA $RC" "$(tail -n 5 "$W/accepted.err")"
fi

## ---- a client too slow to keep up is still judged on everything --------------------------
# Review finding: the daemon dropped events, and the periodic snapshot, for a
# client whose queue held 1 MiB — and so the last snapshot (the final refusal
# table) and the findings sent at the end too. A payload that floods events
# under -v while the client's stderr is slow made a run with a refusal and a
# planted repository pass --fail-on deny,alert with an empty report. The stderr
# reader here starts only once the payload has finished (it leaves a mark).
C=$TN/cases/gate-flood
mkdir -p "$C" && cp "$TN/tls/ca.pem" "$C/ca.pem" && chmod -R a+rwX "$C"
cat >"$C/job.py" <<'PY'
import socket, subprocess
for i in range(20000):      # each a cached lookup: one allowed event, nothing refused
    try:
        socket.getaddrinfo("www.example.test", 443, socket.AF_INET, socket.SOCK_STREAM)
    except OSError:
        pass
subprocess.call("curl -s -m 5 http://other.example.test/hello.txt >/dev/null", shell=True)
subprocess.call("git init -q planted", shell=True)
open("done", "w").close()
PY
(cd "$C" && tn_boxy run -v "${allow[@]}" --fail-on deny,alert --report r.xml -- python3 job.py \
	>"$C/out" 2> >(while [ ! -e "$C/done" ]; do sleep 0.2; done; sleep 2; cat >"$C/err") \
	</dev/null)
RC=$?
for _ in $(seq 1 50); do [ -s "$C/err" ] && grep -q 'gate:\|destinations' "$C/err" && break; sleep 0.2; done
if [ "$RC" -eq "$GATE" ] && [ "$(jsonrep "$C/r.xml.json")" = "True deny,alert deny,alert 0 $GATE" ] &&
	grep -q 'ALERT: git: .*planted' "$C/err"; then
	ok "gate: a client whose queue the payload filled (-v, slow stderr) still judges the last refusal and alert"
else
	fail_case "gate: a client whose queue the payload filled (-v, slow stderr) still judges the last refusal and alert" \
		"exit $RC, json: $(jsonrep "$C/r.xml.json")" "$(grep -v 'dns\|resolve' "$C/err" | tail -n 5)"
fi

## ---- an alert about a path longer than an event may carry ------------------------------------
# Review finding: the client's decoder refuses an event string over 4096 bytes;
# a repository planted 5,000 bytes deep made its alert undecodable, and the
# gate passed without a word. The daemon now cuts what it sends; an event the
# client still cannot read fails the words it may have held.
run_case gate-deep --net none --fail-on alert --report r.xml -- python3 -c '
import os
for i in range(20):
    os.mkdir("d" * 250)
    os.chdir("d" * 250)
os.makedirs(".git/objects")
os.makedirs(".git/refs")
open(".git/HEAD", "w").write("ref: refs/heads/main\n")'
if [ "$RC" -eq "$GATE" ] && [ "$(jsonrep "$C/r.xml.json")" = "True alert alert 0 $GATE" ] &&
	grep -q 'ALERT: git: .*dddd' "$C/err" && [ "$(junit "$C/r.xml" | cut -c1-2)" = '1|' ]; then
	ok "gate: a repository planted 5,000 bytes deep fails --fail-on alert and is named at the end"
else
	fail_case "gate: a repository planted 5,000 bytes deep fails --fail-on alert and is named at the end" \
		"exit $RC, json: $(jsonrep "$C/r.xml.json" | cut -c1-300)" "$(tail -c 300 "$C/err")"
fi

## ---- a tripwire: a decoy credential read --------------------------------------------------------
run_case gate-tripwire --net none --tripwires on --fail-on tripwire --report r.xml -- sh -c \
	'cat ~/.aws/credentials >/dev/null; exit 0'
J=$(junit "$C/r.xml")
if [ "$RC" -eq "$GATE" ] && [[ $J == 1'|tripwire: ~/.aws/credentials: '*'opened by cat'* ]] &&
	grep -q 'gate: failed on tripwire' "$C/err" &&
	[ "$(jsonrep "$C/r.xml.json")" = "True tripwire tripwire 0 $GATE" ]; then
	ok "gate: a decoy read with --fail-on tripwire exits $GATE; the JUnit failure names the decoy and the reader"
else
	fail_case "gate: a decoy read with --fail-on tripwire exits $GATE" "exit $RC, junit: $J" \
		"json: $(jsonrep "$C/r.xml.json")" "$(tail -n 5 "$C/err")"
fi
run_case gate-tripwire-alert --net none --tripwires on --fail-on alert -- sh -c \
	'cat ~/.kube/config >/dev/null; exit 0'
R1=$RC
run_case gate-tripwire-clean --net none --tripwires on --fail-on tripwire,alert --report r.xml -- \
	sh -c 'ls -la ~ ~/.aws >/dev/null; stat ~/.ssh/* >/dev/null; exit 0'
J=$(junit "$C/r.xml")
if [ "$R1" -eq "$GATE" ] && [ "$RC" -eq 0 ] && [[ $J == '0|'* ]]; then
	ok "gate: --fail-on alert fails on a tripwire too; a run that only lists \$HOME passes"
else
	fail_case "gate: --fail-on alert fails on a tripwire too; a run that only lists \$HOME passes" \
		"exits $R1 $RC, junit: $J" "$(tail -n 5 "$C/err")"
fi

## ---- words that do not exist ------------------------------------------------------------------
for w in tripwires deny,trip bogus; do
	run_case "gate-word-${w//,/-}" --fail-on "$w" -- true
	case $w in
	*,*) want="boxy run: --fail-on: unknown word '${w#*,}'; expected deny, new-destination, tripwire, alert" ;;
	*) want="boxy run: --fail-on: unknown word '$w'; expected deny, new-destination, tripwire, alert" ;;
	esac
	if [ "$RC" -eq 2 ] && [ "$(head -n 1 "$C/err")" = "$want" ] &&
		[ "$(grep -c 'fail-on' "$C/err")" -eq 1 ]; then
		ok "gate: --fail-on $w exits 2 with one line"
	else
		fail_case "gate: --fail-on $w exits 2 with one line" "exit $RC" "$(cat "$C/err")"
	fi
done
run_case gate-detach -d --fail-on deny -- true
if [ "$RC" -eq 2 ] && grep -q 'contradicts -d/--detach' "$C/err"; then
	ok "gate: --fail-on with -d is refused (a detached run has no end for the client to judge)"
else
	fail_case "gate: --fail-on with -d is refused" "exit $RC" "$(cat "$C/err")"
fi

## ---- the payload swaps the report for its own ---------------------------------------------
# The report is in the work directory, which the payload can write: it removes the
# file boxy created and writes a passing report in its place. What is there after
# the run is boxy's.
fake='<testsuites><testsuite name="boxy" tests="1" failures="0"><testcase name="deny"/></testsuite></testsuites>'
run_case gate-swap "${allow[@]}" --fail-on deny --report r.xml -- sh -c \
	"$refused; rm -f r.xml r.xml.json; printf '%s' '$fake' >r.xml; echo '{}' >r.xml.json; exit 0"
J=$(junit "$C/r.xml")
if [ "$RC" -eq "$GATE" ] && [[ $J == [1-9]*'|'*'other.example.test'* ]] &&
	[ "$(jsonrep "$C/r.xml.json")" = "True deny deny 0 $GATE" ]; then
	ok "gate: a report the payload replaced during the run is boxy's again when the run ends"
else
	fail_case "gate: a report the payload replaced during the run is boxy's again when the run ends" \
		"exit $RC, junit: $J" "$(head -c 600 "$C/r.xml")"
fi

## ---- the payload leaves a fifo where the report goes (review, held) ----------------------------
# Opened without blocking and refused as not a regular file: the run neither hangs
# nor passes (125: the report that was asked for could not be written).
run_case gate-fifo "${allow[@]}" --fail-on deny --report r.xml -- sh -c \
	"$ok_get; rm -f r.xml.json && mkfifo r.xml.json; exit 0"
if [ "$RC" -eq 125 ] && [ -p "$C/r.xml.json" ] && grep -q -- '--report' "$C/err"; then
	ok "gate: a fifo the payload put where the report goes: no hang, exit 125, never a pass"
else
	fail_case "gate: a fifo the payload put where the report goes: no hang, exit 125, never a pass" \
		"exit $RC" "$(ls -l "$C")"
fi

## ---- a report path that is a link ------------------------------------------------------------
C=$TN/cases/gate-link
mkdir -p "$C" && cp "$TN/tls/ca.pem" "$C/ca.pem" && chmod -R a+rwX "$C"
echo precious >"$TN/precious" && chmod 0666 "$TN/precious"
ln -sf "$TN/precious" "$C/r.xml"
ln -sf "$TN/precious" "$C/s.xml.json"
(cd "$C" && tn_boxy run --fail-on deny --report r.xml -- true >"$C/out" 2>"$C/err" </dev/null)
RC=$?
(cd "$C" && tn_boxy run --fail-on deny --report s.xml -- true >"$C/out2" 2>"$C/err2" </dev/null)
RC2=$?
if [ "$RC" -eq 125 ] && [ "$RC2" -eq 125 ] && [ "$(cat "$TN/precious")" = precious ] &&
	grep -q -- '--report' "$C/err" && grep -q -- '--report' "$C/err2"; then
	ok "gate: a report path (or its .json) that is a symlink is refused and its target untouched"
else
	fail_case "gate: a report path (or its .json) that is a symlink is refused and its target untouched" \
		"exits $RC $RC2, precious: $(cat "$TN/precious")" "$(cat "$C/err" "$C/err2")"
fi

done_testing
