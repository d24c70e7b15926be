#!/bin/bash
# tests/e2e/show.sh — `boxy show` for people: a session refused 80
# connections (distinct ports and addresses) and a few names still fits on
# one screen, its refusals grouped with the layer, reason and fix;
# `--events` has every recorded row with its t_rel_ms; `--json` is valid and
# carries every table. And `-v` prints every audit event.
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

# 40 addresses of the test range on two ports each (80 flows), three refused
# names (twice each), and one allowed fetch. Nothing leaves: allowlist mode
# refuses each flow at the gateway.
payload='for a in $(seq 100 139); do curl -s -m 2 http://93.184.216.$a/ >/dev/null;
		curl -s -m 2 https://93.184.216.$a/ >/dev/null; done
	for n in other.example.test other.example.test nope.example.test nope.example.test \
		third.example.test third.example.test; do curl -s -m 2 http://$n/ >/dev/null; done
	curl -s -m 5 http://www.example.test/hello.txt >/dev/null; exit 3'

run_case show --allow-host www.example.test -- sh -c "$payload"
ID=$(tn_boxy ps -a | awk 'NR == 2 { print $1 }')
C=$TN/cases/show
tn_boxy show "$ID" >"$C/show" 2>"$C/show.err"
SRC=$?
tn_boxy show "$ID" --events >"$C/events" 2>"$C/events.err"
ERC=$?
tn_boxy show "$ID" --json >"$C/json" 2>"$C/json.err"
JRC=$?

show_fail() {
	fail_case "$1" "$2"
	diag "boxy show:"
	diag_file "$C/show" 40
	diag_file "$C/show.err" 5
}

lines=$(wc -l <"$C/show")
if [ "$SRC" -eq 0 ] && [ "$RC" -eq 3 ] && [ "$lines" -le 24 ] && [ "$lines" -ge 10 ]; then
	ok "boxy show of a session refused 80 connections fits on one screen ($lines lines)"
else
	show_fail "boxy show of a session refused 80 connections fits on one screen ($lines lines)" \
		"want 10..24 lines (an 80x24 screen) and exit 0 (the run: exit 3)"
fi
if grep -E '^command +sh -c ' "$C/show" >/dev/null && grep -E '^workdir +/' "$C/show" >/dev/null &&
	grep -E '^network +allowlist: www\.example\.test' "$C/show" >/dev/null &&
	grep -E '^session +[0-9a-f]{16} +exited 3 after [0-9.]+s' "$C/show" >/dev/null &&
	grep -E '^limits ' "$C/show" >/dev/null; then
	ok "boxy show names the command, workdir, network policy, limits, exit and duration"
else
	show_fail "boxy show names the command, workdir, network policy, limits, exit and duration" \
		"want the command, workdir, network, limits and session lines"
fi
if grep -E '^boxy: 92 refused' "$C/show" >/dev/null &&
	grep -E '^  other\.example\.test +[0-9]+ +net\.dns +hostname not on the allowlist +fix: --allow-host other\.example\.test( +by .+)?$' "$C/show" >/dev/null &&
	grep -E '^  93\.184\.216\.100:80 \(\+79 others\) +80 +net\.dns +address was not resolved from a permitted name( +by .+)?$' "$C/show" >/dev/null; then
	ok "boxy show groups the refusals (count, layer, reason, fix) and sums the rest"
else
	show_fail "boxy show groups the refusals (count, layer, reason, fix) and sums the rest" \
		"want 'boxy: 92 refused', the other.example.test group with its fix, the 80 flows in one row"
fi
if [ "$(grep -c '93\.184\.216\.' "$C/show")" -le 12 ] &&
	grep -E '^  … and [0-9]+ more destinations \([0-9]+ connections, [0-9]+ refused\)$' "$C/show" >/dev/null &&
	grep -E '^destinations +41 \(81 connections, 80 refused, ' "$C/show" >/dev/null; then
	ok "boxy show cuts the destinations (busiest first) with a sum line"
else
	show_fail "boxy show cuts the destinations (busiest first) with a sum line" \
		"want at most 6 destination rows and '… and N more destinations'"
fi
if grep -qE "^every event: boxy show ${ID:0:8} --events$" "$C/show"; then
	ok "boxy show points at --events"
else
	show_fail "boxy show points at --events" "want 'every event: boxy show ID --events'"
fi
if ! grep -q $'\033' "$C/show"; then
	ok "boxy show on a file: no colour"
else
	show_fail "boxy show on a file: no colour" "escape sequences in the output"
fi

## ---- --events: every row ------------------------------------------------------------------
db=$TN/state/boxy/sessions.db
rows=$(sqlite3 "$db" "SELECT (SELECT count(*) FROM connections WHERE session_id LIKE '$ID%')
	+ (SELECT count(*) FROM resolutions WHERE session_id LIKE '$ID%')
	+ (SELECT count(*) FROM decisions WHERE session_id LIKE '$ID%')
	+ (SELECT count(*) FROM requests WHERE session_id LIKE '$ID%')")
got=$(($(wc -l <"$C/events") - 1))
if [ "$ERC" -eq 0 ] && [ "$got" -eq "$rows" ] && [ "$rows" -ge 86 ] &&
	[ "$(grep -c '93\.184\.216\.' "$C/events")" -ge 80 ] &&
	grep -Eq '^ +\+[0-9]+ms +audit +info +seccomp +mode ' "$C/events" &&
	sort -c -n -k1 <(tail -n +2 "$C/events" | sed 's/^ *+//; s/ms .*//'); then
	ok "boxy show --events prints every recorded row ($rows), time-ordered, with t_rel_ms"
else
	fail_case "boxy show --events prints every recorded row ($rows), time-ordered, with t_rel_ms" \
		"want $rows rows (≥ 86), ordered; got $got, exit $ERC"
	diag_file "$C/events" 10
fi

## ---- --json: valid and complete -----------------------------------------------------------
if [ "$JRC" -eq 0 ] && python3 - "$C/json" "$rows" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
rows = int(sys.argv[2])
n = len(d["connections"]) + len(d["resolutions"]) + len(d["decisions"]) + len(d["requests"])
assert n == rows, (n, rows)
assert d["exit_code"] == 3
assert d["policy"]["net"]["mode"] == "allowlist"
assert sum(r["count"] for r in d["refusals"]) >= 80
assert any(r["subject"] == "other.example.test" for r in d["refusals"])
assert "overflow" in d and "destinations" in d and "denials" in d
assert all("t_rel_ms" in r for r in d["connections"] + d["resolutions"] + d["decisions"] +
           d["requests"])
PY
then
	ok "boxy show --json is valid and carries every table and the grouped refusals"
else
	fail_case "boxy show --json is valid and carries every table and the grouped refusals" \
		"want valid JSON with connections, resolutions, decisions, requests ($rows rows), refusals"
	diag_file "$C/json.err" 5
fi

## ---- watching a finished session is concise too --------------------------------------------
tn_boxy watch "$ID" >"$C/watch" 2>&1
wl=$(wc -l <"$C/watch")
if [ "$wl" -le 30 ] && grep -q '^boxy: 92 refused' "$C/watch"; then
	ok "boxy watch of a finished session prints the concise view ($wl lines)"
else
	fail_case "boxy watch of a finished session prints the concise view ($wl lines)" \
		"want at most 30 lines with the refusals"
	diag_file "$C/watch" 10
fi

## ---- red on a terminal, plain under NO_COLOR --------------------------------------------------
tty_show() {
	(cd "$C" && tn_user env HOME="$TN/home" XDG_RUNTIME_DIR="$TN/run" XDG_STATE_HOME="$TN/state" \
		"$@" script -qec "'$BOXY' show $ID" /dev/null) </dev/null >"$C/tty" 2>&1
}
tty_show
if grep -q $'\033\\[31mboxy: 92 refused' "$C/tty"; then
	ok "boxy show on a terminal: the refusals in red"
else
	fail_case "boxy show on a terminal: the refusals in red" "want ESC[31m before 'boxy: N refused'"
fi
tty_show NO_COLOR=1
if grep -q 'boxy: 92 refused' "$C/tty" && ! grep -q $'\033\\[31m' "$C/tty"; then
	ok "boxy show under NO_COLOR: no colour"
else
	fail_case "boxy show under NO_COLOR: no colour" "want the refusals without ESC[31m"
fi

## ---- -v prints every audit event, whatever its verdict ---------------------------------------
run_case verbose -v --allow-host www.example.test -- sh -c \
	'curl -s -m 5 http://www.example.test/hello.txt >/dev/null; curl -s -m 2 http://other.example.test/; true'
if python3 - "$C/audit" "$C/err" <<'PY'
import json, re, sys
err = [l for l in open(sys.argv[2], errors="replace") if l.startswith("boxy: ")]
# The seal (the log's signed last line, doc/verify.md) is no event of the run.
audit = [a for a in (json.loads(l) for l in open(sys.argv[1]) if l.strip())
         if a["verdict"] != "seal"]
verdicts = {a["verdict"] for a in audit}
assert "info" in verdicts and "deny" in verdicts, verdicts
for a in audit:
    pat = re.compile(r"^boxy: [0-9:.]+ +%s +%s +%s" % tuple(
        re.escape(a[k][:20]) for k in ("layer", "verdict", "subject")))
    assert any(pat.search(l) for l in err), a
PY
then
	ok "-v prints every audit event on stderr (info, degraded and deny alike)"
else
	fail_case "-v prints every audit event on stderr (info, degraded and deny alike)" \
		"want a 'boxy: T LAYER VERDICT SUBJECT' line for each line of the audit log"
fi

done_testing
