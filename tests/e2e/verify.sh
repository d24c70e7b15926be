#!/bin/bash
# tests/e2e/verify.sh — a log nobody can rewrite (issue 15 item 4), on real
# sessions, as the test user, with the suite's own daemon (tests/e2e/daemon-lib.sh).
#
# A real run writes an audit log and `boxy verify` says it is intact; then
# the log is tampered with the ways a hostile payload or a later reader
# would — one byte edited, a line dropped, whole lines truncated, a line cut,
# two lines swapped, the seal forged, the whole chain recomputed and
# re-signed with another key — and each is found at its line, exit 1. A copy
# shipped elsewhere verifies with --key and the exported public key. The
# payload rewriting its own log during the run is found. The store's record
# of a session (`boxy verify ID`) finds an edited decision. The signing key
# is 0600 in the state directory, and a key file with a wider mode or that is
# a link is refused, never used.
set -u
here=$(cd "$(dirname "$0")/.." && pwd)
. "$here/lib/harness.sh"
harness_locate
[ "$(id -u)" = 0 ] && harness_as_test_user "$0" "$@"
. "$here/e2e/daemon-lib.sh"

plan 28
W=$SUITE/work
KEY=$STATE/signing.key
LOGF=$SUITE/audit.jsonl

# V ARGS...: boxy verify; output and status in $OUT, $RC.
V() { "$BOXY" verify "$@" </dev/null >"$OUT" 2>"$ERR"; RC=$?; }
# tampered NAME PYTHON: $SUITE/NAME.jsonl = the log with PYTHON applied to its lines L.
tampered() {
	python3 - "$LOGF" "$SUITE/$1.jsonl" "$2" <<'PY'
import hashlib, re, sys
src, dst, code = sys.argv[1], sys.argv[2], sys.argv[3]
L = open(src, "rb").read().decode().splitlines(True)
def edit(i):  # one byte of line i's reason changed
    L[i] = re.sub(r'"reason":"(.)', lambda m: '"reason":"' + ("x" if m.group(1) != "x" else "y"),
                  L[i], count=1)
def relink(i, j):  # line i's prev := the hash of line j (a forger recomputing the chain)
    h = hashlib.sha256(L[j].encode()).hexdigest()
    L[i] = re.sub(r'"prev":"[0-9a-f]{64}"', '"prev":"%s"' % h, L[i])
exec(code)
open(dst, "wb").write("".join(L).encode())
PY
}

# ---- a real run, intact ------------------------------------------------------------
B run --net none --audit-log "$LOGF" -- sh -c 'echo hi'
N=$(wc -l <"$LOGF" 2>/dev/null || echo 0)
ID=$(sqlite3 "$DB" 'SELECT id FROM sessions ORDER BY started_ms DESC LIMIT 1' 2>/dev/null)
check "a real run writes a chained audit log ending in its seal ($N lines)" \
	'[ "$RC" = 0 ] && [ "$N" -ge 4 ] && tail -n 1 "$LOGF" | grep -q "\"verdict\":\"seal\"" &&
	 head -n 1 "$LOGF" | grep -q "\"seq\":1,\"prev\":\"[0-9a-f]\{64\}\"}$"'
V "$LOGF"
check "boxy verify says the untouched log is intact, sealed by the trusted key (exit 0)" \
	'[ "$RC" = 0 ] && grep -q "intact: $N lines, 1 chain, 1 sealed" "$OUT" &&
	 grep -q "the trusted key" "$OUT"'
V "$ID"
check "boxy verify ID: the store's decisions match the seal (exit 0)" \
	'[ "$RC" = 0 ] && grep -q "^$ID: intact: [1-9][0-9]* decisions; audit log: $N lines" "$OUT"'
check "the signing key is the test user's, mode 0600, in the state directory" \
	'[ "$(stat -c "%a %U %F" "$KEY")" = "600 $(id -un) regular file" ]'
check "the store keeps the log's length and head" \
	'[ "$(sqlite3 "$DB" "SELECT audit_lines FROM chains WHERE session_id = '"'"'$ID'"'"'")" = "$N" ]'

# ---- each tampering, found at its line -----------------------------------------------
# broken NAME LINE WORDS DESC: boxy verify of NAME.jsonl exits 1 naming LINE and WORDS.
broken() {
	local b_file=$SUITE/$1.jsonl b_line=$2 b_words=$3
	V "$b_file"
	check "$4: found at line $2 (exit 1)" \
		'[ "$RC" = 1 ] && grep -q "^$b_file:$b_line: .*$b_words" "$OUT" && grep -q BROKEN "$OUT"'
}
tampered edit 'edit(2)'
broken edit 3 "line 3 was changed" "one byte of line 3 edited"
tampered drop 'del L[2]'
broken drop 3 "missing before line 3" "line 3 dropped"
tampered trunc 'del L[-2:]'
broken trunc $((N - 2)) "truncated after line $((N - 2))" "the last two lines truncated"
tampered cut 'L[-1] = L[-1][:30]'
broken cut "$N" "cut short" "the file cut inside its last line"
tampered swap 'L[1], L[2] = L[2], L[1]'
broken swap 2 "out of order" "lines 2 and 3 swapped"
tampered forged 'L[-1] = re.sub(r"\"sig\":\"(.)", lambda m: "\"sig\":\"" + ("1" if m.group(1) != "1" else "2"), L[-1])'
broken forged "$N" "does not verify" "a forged signature"
tampered rechain 'edit(1)
for i in range(2, len(L)): relink(i, i - 1)'
broken rechain "$N" "does not verify" "line 2 edited and the whole chain recomputed"

# ---- a copy shipped elsewhere ------------------------------------------------------------
"$BOXY" verify --print-key >"$SUITE/boxy.pub" 2>"$ERR"
ELSE=$SUITE/elsewhere
mkdir -m 0700 "$ELSE"
cp "$LOGF" "$SUITE/copy.jsonl"
# Another machine: no store, no key of ours.
EV() { XDG_STATE_HOME=$ELSE XDG_RUNTIME_DIR=$ELSE HOME=$ELSE "$BOXY" verify "$@" \
	</dev/null >"$OUT" 2>"$ERR"; RC=$?; }
EV --key "$SUITE/boxy.pub" "$SUITE/copy.jsonl"
check "a copy verifies elsewhere with --key and the exported public key (exit 0)" \
	'[ "$RC" = 0 ] && grep -q "intact" "$OUT" && grep -q "the trusted key" "$OUT"'
XDG_STATE_HOME=$ELSE/other HOME=$ELSE "$BOXY" verify --print-key >"$SUITE/other.pub" 2>/dev/null
# The forger's own key re-signs a rewritten log: valid signature, wrong key.
EV --key "$SUITE/other.pub" "$SUITE/copy.jsonl"
check "the same copy against another key: sealed by a key other than the trusted one (exit 1)" \
	'[ "$RC" = 1 ] && grep -q ":$N: .*not by the trusted key" "$OUT"'
EV "$SUITE/copy.jsonl"
check "without --key elsewhere, the key the log names is said to be unchecked" \
	'[ "$RC" = 0 ] && grep -q "no trusted key" "$OUT"'
# Review finding: the signature covers the seal's numbers, not its words or a member
# given twice; elsewhere there is no store head to cover them. The seal must be the
# very line boxy writes.
tampered sealwords 'L[-1] = L[-1].replace("signed\"", "signed by the release manager\"")'
EV --key "$SUITE/boxy.pub" "$SUITE/sealwords.jsonl"
check "elsewhere, a seal whose words were edited is found (exit 1)" \
	'[ "$RC" = 1 ] && grep -q ":$N: .*where its signature does not reach" "$OUT"'

# ---- the payload rewrites its own log during the run -------------------------------------
PLOG=$W/payload-audit.jsonl
B run --net none --audit-log "$PLOG" -- sh -c 'sed -i 1d payload-audit.jsonl 2>/dev/null ||
	{ tail -n +2 payload-audit.jsonl > t && cat t > payload-audit.jsonl; }; exit 0'
V "$PLOG"
check "the payload dropping a line of its own audit log is found (exit 1)" \
	'[ "$RC" = 1 ] && grep -q "BROKEN" "$OUT"'
QLOG=$W/payload-trunc.jsonl
B run --net none --audit-log "$QLOG" -- sh -c ': > payload-trunc.jsonl'
V "$QLOG"
check "the payload truncating its audit log is found (exit 1)" \
	'[ "$RC" = 1 ] && grep -q "BROKEN" "$OUT"'

# ---- the payload replaces its own log with an older, intact one ---------------------------
# Review finding: the daemon writes through the descriptor the client opened,
# so a payload that renames another file over the log's name hides its own
# lines there — and a copy of an earlier run's sealed chain verified intact.
# The store now records where each session's log was; every session recorded
# there must be in the file, and `boxy verify ID` opens that file.
RLOG=$W/replaced.jsonl
B run --net none --audit-log "$RLOG" -- true
B run --net none --audit-log "$RLOG" -- python3 -c '
import os
lines = open("replaced.jsonl").read().splitlines(True)
last = max(i for i, l in enumerate(lines) if "\"verdict\":\"seal\"" in l)
open("t", "w").write("".join(lines[:last + 1]))
os.rename("t", "replaced.jsonl")'
RID=$(sqlite3 "$DB" 'SELECT id FROM sessions ORDER BY started_ms DESC LIMIT 1' 2>/dev/null)
V "$RLOG"
check "a log the payload replaced by an earlier intact one is found: its session is missing (exit 1)" \
	'[ "$RC" = 1 ] && grep -q "^$RLOG:0: session $RID wrote [1-9][0-9]* lines\? to this file" "$OUT"'
V "$RID"
check "boxy verify ID opens the session's recorded log and finds it replaced (exit 1)" \
	'[ "$RC" = 1 ] && grep -q "^$RID: intact: " "$OUT" &&
	 grep -q "^$RLOG:0: session $RID wrote" "$OUT"'
V "$ID"
check "boxy verify ID of an untouched session checks its log too (exit 0)" \
	'[ "$RC" = 0 ] && grep -q "^$ID: intact" "$OUT" && grep -q "^$LOGF: intact: $N lines\?" "$OUT"'
mv "$LOGF" "$LOGF.real"
ln -s "$LOGF.real" "$LOGF"
V "$ID"
check "boxy verify ID refuses a recorded log that is now a symbolic link (exit 1)" \
	'[ "$RC" = 1 ] && grep -q "symbolic link" "$ERR" && grep -q "^$ID: its audit log .* cannot be read" "$OUT"'
rm -f "$LOGF"
mv "$LOGF.real" "$LOGF"

# ---- the store's record ----------------------------------------------------------------------
sqlite3 "$DB" "UPDATE decisions SET reason = 'nothing to see' WHERE id =
	(SELECT min(id) FROM decisions WHERE session_id = '$ID')" 2>"$ERR"
V "$ID"
check "an edited decision in the store is found by boxy verify ID (exit 1)" \
	'[ "$RC" = 1 ] && grep -q "^$ID: decision 1 (row [0-9]*) was changed" "$OUT"'

# ---- --no-daemon: the client seals its own chain ---------------------------------------------
NLOG=$SUITE/nodaemon.jsonl
B run --no-daemon --net none --audit-log "$NLOG" -- true
V "$NLOG"
check "a --no-daemon run's log is chained and sealed too (exit 0)" \
	'[ "$RC" = 0 ] && grep -q "intact" "$OUT" && head -n 1 "$NLOG" | grep -q "\"chain\":\"[0-9a-f]\{16\}\""'

# ---- the key file ------------------------------------------------------------------------------
chmod 0644 "$KEY"
V --print-key
check "a signing key with mode 0644 is refused, never used (exit 125)" \
	'[ "$RC" = 125 ] && grep -q "mode 0644; it must be 0600" "$ERR"'
B run --net none --audit-log "$SUITE/wide.jsonl" -- true
V "$SUITE/wide.jsonl"
check "a run while the key is refused leaves an unsealed log, and says why in the daemon log" \
	'grep -q "not sealed: signing key .* mode 0644" "$LOG" && ! grep -q "\"verdict\":\"seal\"" "$SUITE/wide.jsonl"'
chmod 0600 "$KEY"
mv "$KEY" "$KEY.real"
ln -s "$KEY.real" "$KEY"
V --print-key
check "a signing key that is a symbolic link is refused (exit 125)" \
	'[ "$RC" = 125 ] && grep -q "symbolic link" "$ERR"'
rm -f "$KEY"
mv "$KEY.real" "$KEY"

V
check "boxy verify with nothing to verify is a usage error (exit 2)" '[ "$RC" = 2 ]'

done_testing
