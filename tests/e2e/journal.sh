#!/bin/bash
# tests/e2e/journal.sh — `--audit-log journal` and the profile key
# `audit-log: journal` (issue 15 item 5), read back from a real journal with
# `journalctl -o json`.
#
# This machine runs no journald (PID 1 is not systemd), and a test must
# never depend on, or write into, the host's journal: so the suite starts its
# own systemd-journald in a private mount namespace (tmpfs over
# /run/systemd, /run/log and /var/log/journal), then runs as the test user
# with the suite's own daemon. journald gives the test user its own journal
# file (user-UID.journal), which journalctl reads as that user.
set -u
here=$(cd "$(dirname "$0")/.." && pwd)
. "$here/lib/harness.sh"
harness_locate

if [ "$(id -u)" = 0 ] && [ -z "${BOXY_JOURNAL_NS:-}" ]; then
	exec unshare -m --propagation private env BOXY_JOURNAL_NS=1 bash "$0" "$@"
fi
if [ "$(id -u)" = 0 ]; then
	JOURNALD=/lib/systemd/systemd-journald
	[ -x "$JOURNALD" ] || harness_die "no $JOURNALD (Debian package systemd)"
	for d in /run/systemd /run/log /var/log/journal; do
		mkdir -p "$d" && mount -t tmpfs -o mode=0755 tmpfs "$d" ||
			harness_die "cannot mount a private $d"
	done
	chgrp systemd-journal /var/log/journal && chmod 2755 /var/log/journal
	"$JOURNALD" >/dev/null 2>&1 &
	HARNESS_PIDS+=($!)
	for _ in $(seq 100); do [ -S /run/systemd/journal/socket ] && break; sleep 0.05; done
	[ -S /run/systemd/journal/socket ] || harness_die "the private journald did not start"
	journalctl --flush >/dev/null 2>&1   # to /var/log/journal: per-user files from now on
	harness_as_test_user "$0" "$@"
fi
[ -S /run/systemd/journal/socket ] ||
	harness_die "no journal socket: run this suite as root (it starts its own journald)"
. "$here/e2e/daemon-lib.sh"

plan 9
W=$SUITE/work

# entries ID: the journal's boxy entries of session ID as JSON lines in $SUITE/j.ID,
# waiting (5 s at most) until there are as many as the store's decisions (want).
entries() {
	local id=$1 want=$2
	for _ in $(seq 50); do
		journalctl -o json --no-pager SYSLOG_IDENTIFIER=boxy "BOXY_SESSION=$id" \
			>"$SUITE/j.$id" 2>"$SUITE/j.err"
		[ "$(wc -l <"$SUITE/j.$id")" -ge "$want" ] && break
		sleep 0.1
	done
}
decisions() { sqlite3 "$DB" "SELECT count(*) FROM decisions WHERE session_id = '$1'"; }
last_id() { sqlite3 "$DB" 'SELECT id FROM sessions ORDER BY started_ms DESC LIMIT 1'; }

# check-entries.py JOURNAL DB ID DOC UID: every entry against the store and doc/journal.md.
cat >"$SUITE/check.py" <<'PY'
import json, re, sqlite3, sys
jfile, db, sid, doc, uid = sys.argv[1:6]
exe = sys.argv[6] if len(sys.argv) > 6 else None
ids = dict(re.findall(r"^\| `([a-z]+)` \| `([0-9a-f]{32})` \|$", open(doc).read(), re.M))
prio = {"alert": "2", "deny": "4", "degraded": "5"}
got = [json.loads(l) for l in open(jfile)]
fails = []
for e in got:
    for k in ("BOXY_LAYER", "BOXY_VERDICT", "BOXY_SUBJECT", "BOXY_REASON", "MESSAGE", "BOXY_T_MS"):
        if not e.get(k):
            fails.append("no %s in %s" % (k, e.get("MESSAGE")))
    for k in ("BOXY_PACKAGE", "BOXY_RULE"):
        if e.get(k) != "":
            fails.append("%s is %r, want empty" % (k, e.get(k)))
    v = e.get("BOXY_VERDICT")
    if e.get("MESSAGE_ID") != ids.get(v):
        fails.append("MESSAGE_ID %s for %s, doc/journal.md says %s" % (e.get("MESSAGE_ID"), v, ids.get(v)))
    if e.get("PRIORITY") != prio.get(v, "6"):
        fails.append("PRIORITY %s for %s" % (e.get("PRIORITY"), v))
    if e.get("_UID") != uid:
        fails.append("_UID %s, want %s" % (e.get("_UID"), uid))
    # doc/journal.md tells collectors to match on _UID and _EXE: both must be right
    if exe and e.get("_EXE") != exe:
        fails.append("_EXE %s, want %s" % (e.get("_EXE"), exe))
c = sqlite3.connect("file:%s?mode=ro" % db, uri=True)
want = sorted(c.execute("SELECT layer, verdict, subject, reason FROM decisions WHERE session_id = ?", (sid,)))
have = sorted((e.get("BOXY_LAYER"), e.get("BOXY_VERDICT"), e.get("BOXY_SUBJECT"), e.get("BOXY_REASON")) for e in got)
if want != have:
    fails.append("journal %r != store %r" % (have, want))
verdicts = sorted({e.get("BOXY_VERDICT") for e in got})
print(" ".join(verdicts))
for f in fails:
    print("FAIL " + f)
PY

# ---- --audit-log journal, with a refusal (the timeout) -------------------------------
B run --net none --timeout 1 --audit-log journal -- sleep 10
ID=$(last_id)
N=$(decisions "$ID")
entries "$ID" "$N"
check "a run with --audit-log journal runs (its timeout: exit 124) and writes no file 'journal'" \
	'[ "$RC" = 124 ] && [ ! -e "$W/journal" ]'
check "the journal holds one entry per decision of the session ($N)" \
	'[ "$N" -ge 3 ] && [ "$(wc -l <"$SUITE/j.$ID")" = "$N" ]'
python3 "$SUITE/check.py" "$SUITE/j.$ID" "$DB" "$ID" "$BOXY_SRCDIR/doc/journal.md" "$(id -u)" \
	"$(readlink -f "$BOXY")" >"$SUITE/check.out" 2>&1
check "every entry carries the BOXY_* fields, the doc's MESSAGE_ID and PRIORITY for its verdict, and matches the store" \
	'! grep -q "^FAIL\|Error" "$SUITE/check.out"' || diag_file "$SUITE/check.out" 10
check "the refusal is there, as a deny entry" 'head -n 1 "$SUITE/check.out" | grep -qw deny'
V() { "$BOXY" verify "$@" </dev/null >"$OUT" 2>"$ERR"; RC=$?; }
V "$ID"
check "the store still chains and seals that session's decisions (boxy verify ID)" \
	'[ "$RC" = 0 ] && grep -q "intact" "$OUT"'

# ---- the profile key ----------------------------------------------------------------------
printf 'extends: offline\naudit-log: journal\n' >"$SUITE/journal.yaml"
B run --profile "$SUITE/journal.yaml" -- true
ID2=$(last_id)
N2=$(decisions "$ID2")
entries "$ID2" "$N2"
check "a profile with audit-log: journal sends the run's decisions to the journal" \
	'[ "$RC" = 0 ] && [ "$ID2" != "$ID" ] && [ "$N2" -ge 1 ] && [ "$(wc -l <"$SUITE/j.$ID2")" = "$N2" ]'
printf 'extends: offline\naudit-log: /tmp/somewhere.jsonl\n' >"$SUITE/file.yaml"
B run --profile "$SUITE/file.yaml" -- true
check "a profile naming a file for audit-log is refused (exit 2): only the journal" \
	'[ "$RC" = 2 ] && grep -q "only .journal." "$ERR" && [ ! -e /tmp/somewhere.jsonl ]'

# ---- a tripwire -----------------------------------------------------------------------------
B run --net none --tripwires on --audit-log journal -- sh -c 'cat ~/.aws/credentials >/dev/null'
ID3=$(last_id)
N3=$(decisions "$ID3")
entries "$ID3" "$N3"
check "a tripwire reaches the journal: an alert entry of layer tripwire, PRIORITY 2, naming the decoy and the reader" \
	'grep "\"BOXY_LAYER\":\"tripwire\"" "$SUITE/j.$ID3" | grep "\"BOXY_VERDICT\":\"alert\"" |
	 grep "\"PRIORITY\":\"2\"" | grep -q "\"BOXY_SUBJECT\":\"~/.aws/credentials\""'

# ---- --no-daemon ------------------------------------------------------------------------------
before=$(journalctl -o json --no-pager SYSLOG_IDENTIFIER=boxy 2>/dev/null | grep -c '"BOXY_SESSION":""')
B run --no-daemon --net none --audit-log journal -- true
sleep 0.5
after=$(journalctl -o json --no-pager SYSLOG_IDENTIFIER=boxy 2>/dev/null | grep -c '"BOXY_SESSION":""')
check "--no-daemon --audit-log journal sends from boxy run itself (session empty)" \
	'[ "$RC" = 0 ] && [ "$after" -gt "$before" ]'

done_testing
