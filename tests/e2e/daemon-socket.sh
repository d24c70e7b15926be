#!/bin/bash
# daemon-socket.sh — the daemon stays reachable when its socket file is
# removed or taken over, and its log stays bounded (issue 8, item 10).
#
# A payload that could write the socket's directory (-w /tmp with the old
# /tmp fallback, --rw $XDG_RUNTIME_DIR) unlinked and re-bound daemon.sock:
# `boxy stop`, `run` and `daemon status` could no longer reach the daemon,
# so the hostile session could not be stopped with boxy, and the refused
# connects wrote 60 MB of daemon.log in 10 s. Such mounts are refused now
# (tests/e2e/daemon-store-guard.sh); this suite does what the payload did,
# from the host, and checks that boxy still finds the daemon (the store's
# record names its abstract socket), that the daemon binds its socket file
# again, that a flood of refused connects is counted rather than logged, and
# that a full log is rotated.

. "$(dirname "$0")/../lib/harness.sh"
harness_as_test_user "$0" "$@"
. "$(dirname "$0")/daemon-lib.sh"
command -v python3 >/dev/null || { echo "1..0 # SKIP python3 is not installed"; exit 0; }
SOCK=$XDG_RUNTIME_DIR/boxy/daemon.sock

# in_other_pidns CMD...: run CMD in a user and pid namespace of its own, as a
# payload is (the daemon refuses it as a client, and a client refuses it as a daemon).
in_other_pidns() { unshare --user --map-root-user --pid --fork "$@"; }
unshare --user --map-root-user --pid --fork true 2>/dev/null ||
	{ echo "1..0 # SKIP unprivileged user and pid namespaces are not available"; exit 0; }

B run -d --net none -- sleep 600
ID=$(tr -d '[:space:]' <"$OUT")
check "a detached session runs" '[ "$RC" = 0 ] && [ -n "$ID" ]'
PID=$(recorded_pid)
DAEMON_PIDS+=("$PID")

# A flood of refused connects from another pid namespace: counted, not logged each.
# Each connect from a fresh process, so that no two refusals read alike.
FLOOD='
import os, socket, sys, time
end = time.time() + 3
n = 0
while time.time() < end:
    pid = os.fork()
    if pid == 0:
        s = socket.socket(socket.AF_UNIX)
        try:
            s.connect(sys.argv[1]); s.recv(1)
        except OSError: os._exit(1)
        os._exit(0)
    _, st = os.waitpid(pid, 0)
    n += st == 0
print(n)
'
BEFORE_LINES=$(grep -c 'refused a connection' "$LOG")
N=$(in_other_pidns python3 -c "$FLOOD" "$SOCK")
sleep 1.2
AFTER_LINES=$(grep -c 'refused a connection' "$LOG")
LOGGED=$((AFTER_LINES - BEFORE_LINES))
check "$N refused connects in 3 s wrote $LOGGED lines (at most 5 a second, plus counts)" \
	'[ "${N:-0}" -ge 60 ] && [ "$LOGGED" -le 25 ] &&
	grep -q "more refused connects in the last second" "$LOG"'

rm -f "$SOCK"
B daemon status --json
check "daemon status finds the daemon after its socket file was removed" \
	'[ "$RC" = 0 ] && grep -q "\"pid\":$PID[,}]" "$OUT"'
for _ in $(seq 30); do [ -S "$SOCK" ] && break; sleep 0.1; done
B daemon status --json
check "the daemon binds its socket file again" \
	'[ -S "$SOCK" ] && [ "$RC" = 0 ] && grep -q "\"pid\":$PID[,}]" "$OUT"'

# A listener of a payload's bound in its place (another pid namespace).
IMPOSTOR='
import socket, sys, time, os
p = sys.argv[1]
try: os.unlink(p)
except OSError: pass
s = socket.socket(socket.AF_UNIX); s.bind(p); s.listen(64)
open(sys.argv[2], "w").close()
end = time.time() + 8
s.settimeout(0.2)
while time.time() < end:
    try: c, _ = s.accept(); c.close()
    except OSError: pass
'
in_other_pidns python3 -c "$IMPOSTOR" "$SOCK" "$SUITE/impostor.up" &
IMP=$!
HARNESS_PIDS+=("$IMP")
for _ in $(seq 50); do [ -e "$SUITE/impostor.up" ] && break; sleep 0.05; done
B daemon status --json
check "with a payload's listener on the socket file, daemon status still finds the daemon" \
	'[ "$RC" = 0 ] && grep -q "\"pid\":$PID[,}]" "$OUT"'
B run --net none -- echo still-runs
check "...and so does boxy run" '[ "$RC" = 0 ] && grep -q still-runs "$OUT"'
sleep 1.5
B daemon status --json
check "the daemon took its socket file back from the listener" \
	'[ "$RC" = 0 ] && grep -q "\"pid\":$PID[,}]" "$OUT" && python3 -c "
import socket,sys; s=socket.socket(socket.AF_UNIX); s.connect(sys.argv[1])" "$SOCK"'
kill "$IMP" 2>/dev/null
wait "$IMP" 2>/dev/null

B stop -k "$ID"
check "boxy stop stops the session after all that" '[ "$RC" = 0 ]'

# A full log is rotated: daemon.log.1 takes it, daemon.log starts again.
for _ in $(seq 50); do B daemon stop; [ "$RC" = 0 ] && break; sleep 0.1; done
for _ in $(seq 50); do kill -0 "$PID" 2>/dev/null || break; sleep 0.1; done
check "the idle daemon stops" '! kill -0 "$PID" 2>/dev/null'
head -c 1200000 /dev/zero | tr '\0' 'x' >>"$LOG"
B run --net none -- true
DAEMON_PIDS+=("$(recorded_pid)")
check "a log past 1 MiB is rotated to daemon.log.1 at the next line" \
	'[ "$RC" = 0 ] && [ -s "$LOG.1" ] && [ "$(stat -c %s "$LOG")" -lt 65536 ] &&
	grep -q started "$LOG"'
done_testing
