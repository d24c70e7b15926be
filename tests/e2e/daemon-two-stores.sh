#!/bin/bash
# daemon-two-stores.sh — one daemon, one store (issue 10, item 7).
#
# The daemon says which state directory (store) it serves in its welcome.
# A client whose own state directory differs (a temporary HOME or
# XDG_STATE_HOME, like ./demo.sh's) but that shares the runtime directory,
# and so reaches the other store's daemon on the socket file, used to run
# there silently: its session was recorded in a store it never reads, and
# `boxy ps -a` showed nothing. Now it uses the daemon recorded for its own
# store, or refuses in one line naming both stores; `ps -a` on an empty
# store says which store it read.

. "$(dirname "$0")/../lib/harness.sh"
harness_as_test_user "$0" "$@"
. "$(dirname "$0")/daemon-lib.sh"
command -v sqlite3 >/dev/null || { echo "1..0 # SKIP sqlite3 is not installed"; exit 0; }

STATE2=$SUITE/state2
RUN2=$SUITE/run2
mkdir -m 0700 "$STATE2" "$RUN2"
sessions_like() { sqlite3 "$1" "SELECT count(*) FROM sessions WHERE argv LIKE '%$2%'" 2>/dev/null || echo 0; }

B run --net none -- echo from-store-one
check "a run under the first store's daemon" '[ "$RC" = 0 ] && grep -q from-store-one "$OUT"'
PID_A=$(recorded_pid)
DAEMON_PIDS+=("$PID_A")

XDG_STATE_HOME=$STATE2 B run --net none -- echo from-store-two
check "a client of another store on the same socket is refused in one line naming both stores" \
	'[ "$RC" != 0 ] && [ "$(wc -l <"$ERR")" = 1 ] && grep -qF "$SUITE/state/boxy" "$ERR" &&
	 grep -qF "$STATE2/boxy" "$ERR" && ! grep -q from-store-two "$OUT"'
check "...and nothing of it is recorded in the first store (no silent split)" \
	'[ "$(sessions_like "$DB" from-store-two)" = 0 ]'

XDG_STATE_HOME=$STATE2 B ps -a
check "ps -a of a store with no sessions says which store it read" \
	'[ "$RC" = 0 ] && grep -qF "$STATE2/boxy/sessions.db" "$ERR"'

# A daemon of its own for the second store (its own runtime directory)...
XDG_STATE_HOME=$STATE2 XDG_RUNTIME_DIR=$RUN2 B run --net none -- echo own-daemon
PID_B=$(recorded_pid "$STATE2/boxy")
DAEMON_PIDS+=("$PID_B")
check "with a runtime directory of its own the second store gets its own daemon" \
	'[ "$RC" = 0 ] && [ -n "$PID_B" ] && [ "$PID_B" != "$PID_A" ]'
# ...is the one a client of that store finds, even through the first one's socket.
XDG_STATE_HOME=$STATE2 B run --net none -- echo through-the-shared-socket
check "a client of the second store on the shared socket is served by its store's daemon" \
	'[ "$RC" = 0 ] && grep -q through-the-shared-socket "$OUT" &&
	 [ "$(sessions_like "$STATE2/boxy/sessions.db" through-the-shared-socket)" = 1 ] &&
	 [ "$(sessions_like "$DB" through-the-shared-socket)" = 0 ]'
XDG_STATE_HOME=$STATE2 B daemon status --json
check "daemon status from that client names the second store's daemon and its store" \
	'grep -q "\"pid\":$PID_B[,}]" "$OUT" && grep -qF "\"state_dir\":\"$STATE2/boxy\"" "$OUT"'
XDG_STATE_HOME=$STATE2 B ps -a
check "ps -a of the second store lists its runs" \
	'[ "$RC" = 0 ] && grep -q "echo through-the-shared-socket" "$OUT"'
done_testing
