#!/bin/bash
# daemon-one-per-store.sh — one daemon per user and store (issue 8, item 12).
#
# The same user with two runtime directories (an ssh login without
# XDG_RUNTIME_DIR and a desktop session, say) shares one session store. A
# second daemon for that store used to start and mark the first daemon's
# running sessions `lost`. Now the daemon holds an exclusive lock beside the
# store for its life: a client with another runtime directory finds the
# running daemon through the store's record, and a second `boxy daemon serve`
# refuses in one line and marks nothing.

. "$(dirname "$0")/../lib/harness.sh"
harness_as_test_user "$0" "$@"
. "$(dirname "$0")/daemon-lib.sh"
command -v sqlite3 >/dev/null || { echo "1..0 # SKIP sqlite3 is not installed"; exit 0; }

RUN2=$SUITE/run2
mkdir -m 0700 "$RUN2"

B run -d --net none -- sleep 600
ID=$(tr -d '[:space:]' <"$OUT")
check "a detached session starts under the first daemon" '[ "$RC" = 0 ] && [ -n "$ID" ]'
PID_A=$(recorded_pid)
DAEMON_PIDS+=("$PID_A")
check "the first daemon records itself beside the store" '[ -n "$PID_A" ] && kill -0 "$PID_A"'

XDG_RUNTIME_DIR=$RUN2 B run --net none -- echo hi-from-the-second-runtime-dir
check "a client with another runtime directory runs" \
	'[ "$RC" = 0 ] && grep -q hi-from-the-second-runtime-dir "$OUT"'
check "the first daemon's session is still running (not marked lost)" \
	'[ "$(session_state "$ID")" = running ]'

XDG_RUNTIME_DIR=$RUN2 B daemon status --json
check "that client is served by the first daemon" \
	'grep -q "\"pid\":$PID_A[,}]" "$OUT"'

# A second daemon for the same store, started by hand: refused in one line.
XDG_RUNTIME_DIR=$RUN2 timeout 10 "$BOXY" daemon serve </dev/null >"$OUT" 2>"$ERR"
RC=$?
check "a second daemon serve for the store refuses (exit 125) in one line" \
	'[ "$RC" = 125 ] && [ "$(wc -l <"$ERR")" = 1 ] && grep -q "already serves the store" "$ERR"'
check "...and the first daemon's session is still running" \
	'[ "$(session_state "$ID")" = running ] && kill -0 "$PID_A"'

XDG_RUNTIME_DIR=$RUN2 B stop -k "$ID"
check "the session is stopped from the second runtime directory" '[ "$RC" = 0 ]'
for _ in $(seq 50); do [ "$(session_state "$ID")" != running ] && break; sleep 0.1; done
check "...and recorded as ended, not lost" '[ "$(session_state "$ID")" = exited ] || [ "$(session_state "$ID")" = failed ]'

B daemon stop
for _ in $(seq 50); do kill -0 "$PID_A" 2>/dev/null || break; sleep 0.1; done
XDG_RUNTIME_DIR=$RUN2 B run --net none -- true
PID_B=$(recorded_pid)
DAEMON_PIDS+=("$PID_B")
check "once the first daemon is gone, a client of the other runtime directory starts one" \
	'[ "$RC" = 0 ] && [ -n "$PID_B" ] && [ "$PID_B" != "$PID_A" ]'
done_testing
