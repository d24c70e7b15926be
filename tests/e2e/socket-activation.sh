#!/bin/bash
# socket-activation.sh — `boxy daemon serve` takes the listening socket a
# systemd socket unit passes (LISTEN_FDS/LISTEN_PID, fd 3; issue 16,
# "systemd"), without systemd: a small launcher binds the socket, sets the
# variables and execs the daemon, as the user manager would. The daemon must
# serve on that very socket (same inode, a client that connected before the
# daemon started is answered), leave its file alone when it stops, and refuse
# a socket meant for another pid or of the wrong type.

. "$(dirname "$0")/../lib/harness.sh"
harness_as_test_user "$0" "$@"
. "$(dirname "$0")/daemon-lib.sh"
command -v python3 >/dev/null || { echo "1..0 # SKIP python3 is not installed"; exit 0; }
SOCK=$XDG_RUNTIME_DIR/boxy/daemon.sock
mkdir -m 0700 -p "$XDG_RUNTIME_DIR/boxy" "$STATE"

# launch TYPE PIDMODE [DELAY [PATH]]: bind a unix socket of TYPE (stream|dgram) at
# PATH (default $SOCK) on fd 3, set LISTEN_FDS=1 and LISTEN_PID (self: the pid exec keeps;
# other: pid 1), wait DELAY seconds, exec the daemon. In the background; pid in $LPID.
launch() {
	python3 - "$1" "$2" "${3:-0}" "$BOXY" "${4:-$SOCK}" 2>>"$LOG" <<'PY' &
import os, socket, sys, time
kind, pidmode, delay, boxy, path = sys.argv[1:]
s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM if kind == "stream" else socket.SOCK_DGRAM)
s.bind(path)
if kind == "stream":
    s.listen(16)
if s.fileno() != 3:
    os.dup2(s.fileno(), 3)
    s.close()
os.set_inheritable(3, True)
env = dict(os.environ, LISTEN_FDS="1", LISTEN_PID=str(os.getpid() if pidmode == "self" else 1))
time.sleep(float(delay))
os.execve(boxy, [boxy, "daemon", "serve"], env)
PY
	# A daemon started by hand logs to its stderr (under systemd: the journal).
	LPID=$!
	DAEMON_PIDS+=("$LPID")
}

# wait_gone PID: until it has exited (bounded, 10 s).
wait_gone() {
	for _ in $(seq 100); do kill -0 "$1" 2>/dev/null || return 0; sleep 0.1; done
	return 1
}

inode() { stat -c %i "$SOCK" 2>/dev/null; }

plan 11

# 1. The normal activation, with a client that connects while the daemon is not yet there.
launch stream self 1
for _ in $(seq 50); do [ -S "$SOCK" ] && break; sleep 0.1; done
INO=$(inode)
B daemon status --json
check "a client that connected before the daemon started is answered" \
	'[ "$RC" = 0 ] && grep -q "\"pid\":$LPID," "$OUT"'
check "the daemon serves on the socket it was passed (same inode)" '[ -n "$INO" ] && [ "$(inode)" = "$INO" ]'
check "its log says so" 'grep -q "listening on the socket systemd passed" "$LOG"'
B run --net none -- sh -c 'env; echo done'
check "a run works through the passed socket; no LISTEN_* variable in the sandbox" \
	'[ "$RC" = 0 ] && grep -qx done "$OUT" && ! grep -q "^LISTEN_" "$OUT"'
"$BOXY" daemon stop >/dev/null 2>&1
wait_gone "$LPID"
check "after a stop, the socket file is still systemd's (not unlinked)" \
	'! kill -0 "$LPID" 2>/dev/null && [ "$(inode)" = "$INO" ]'
rm -f "$SOCK"
: >"$LOG"

# 2. LISTEN_PID names another process: fd 3 is not the daemon's to take.
launch stream other
wait_gone "$LPID"
check "LISTEN_PID of another pid: the socket is not taken (the daemon will not start on it)" \
	'! kill -0 "$LPID" 2>/dev/null && grep -q "meant for another process" "$LOG" &&
	 ! grep -q "listening on the socket systemd passed" "$LOG"'
rm -f "$SOCK"
: >"$LOG"

# 3. A datagram socket at the right path, for this pid: refused, the daemon binds its own.
launch dgram self
INO=
for _ in $(seq 50); do
	grep -q "started" "$LOG" 2>/dev/null && break
	sleep 0.1
done
B daemon status --json
check "a datagram socket is refused, and the daemon binds its own and serves" \
	'[ "$RC" = 0 ] && grep -q "refused (it is not a stream socket)" "$LOG"'
check "…on a stream socket of its own at the path" \
	'python3 -c "import socket,sys; s=socket.socket(socket.AF_UNIX); s.connect(sys.argv[1])" "$SOCK"'
"$BOXY" daemon stop >/dev/null 2>&1
wait_gone "$LPID"
check "without an inherited socket, the daemon removes its own file on stop" '! [ -e "$SOCK" ]'

: >"$LOG"

# 4. A listening stream socket for this pid, bound somewhere else: refused too.
launch stream self 0 "$SUITE/elsewhere.sock"
for _ in $(seq 50); do grep -q "started" "$LOG" 2>/dev/null && break; sleep 0.1; done
B daemon status --json
check "a socket bound at another path is refused; the daemon serves at its own" \
	'[ "$RC" = 0 ] && grep -q "not bound at the daemon.s socket path" "$LOG" && [ -S "$SOCK" ]'
"$BOXY" daemon stop >/dev/null 2>&1
wait_gone "$LPID"
check "the daemon stopped" '! kill -0 "$LPID" 2>/dev/null'

done_testing
