#!/bin/bash
# small-things.sh — what a new user notices (issue 16, "Small things"): an
# ambiguous abbreviation is called ambiguous, `boxy run` from the home
# directory is a usage error (exit 2, before any daemon is asked), the node
# preset's cache follows XDG_CACHE_HOME, daemon.log lines carry a timestamp,
# and `boxy watch | head` ends quietly.

. "$(dirname "$0")/../lib/harness.sh"
harness_as_test_user "$0" "$@"
. "$(dirname "$0")/daemon-lib.sh"

plan 8

B run --pro x -- true
check "--pro: ambiguous, naming both flags, exit 2" \
	'[ "$RC" = 2 ] && grep -q "ambiguous flag .--pro.: --profile, --protect" "$ERR"'
B run --profx x -- true
check "--profx: still unknown" '[ "$RC" = 2 ] && grep -q "unknown flag .--profx." "$ERR"'

mkdir -p "$SUITE/home"
(cd "$SUITE/home" && HOME=$SUITE/home "$BOXY" run --net none -- true) </dev/null >"$OUT" 2>"$ERR"
RC=$?
check "run from \$HOME: a usage error (exit 2)" \
	'[ "$RC" = 2 ] && grep -q "contains your home directory" "$ERR"'
(cd "$SUITE/work" && HOME=$SUITE/work/sub "$BOXY" run --net none -- true) </dev/null >"$OUT" 2>"$ERR"
RC=$?
check "run from a parent of \$HOME: a usage error (exit 2)" '[ "$RC" = 2 ]'

XDG_CACHE_HOME=$SUITE/xcache B profile show --json node
check "the node preset's cache under \$XDG_CACHE_HOME" \
	'[ "$RC" = 0 ] && grep -q "$SUITE/xcache/boxy/npm" "$OUT" && ! grep -qF "/.cache/boxy" "$OUT"'

B run -d --net none -- sleep 30
ID=$(tr -d '[:space:]' <"$OUT")
check "a detached session runs" '[ "$RC" = 0 ] && [ -n "$ID" ]'
{ timeout 20 "$BOXY" watch "$ID" | head -n 1 >"$OUT"; } 2>"$ERR"
check "boxy watch | head: one line, nothing on stderr" \
	'[ "$(wc -l <"$OUT")" = 1 ] && ! [ -s "$ERR" ]'
check "daemon.log lines start with a timestamp" \
	'[ -s "$LOG" ] && ! grep -qv "^[0-9]\{4\}-[0-9][0-9]-[0-9][0-9]T[0-9:]\{8\} " "$LOG"'
"$BOXY" stop -k "$ID" >/dev/null 2>&1

done_testing
