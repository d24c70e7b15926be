#!/bin/bash
# tests/e2e/top.sh — boxy top in a real terminal (tmux), against the suite's own
# daemon in the hermetic test network, asserting what a person would see: a
# new session appearing, a refusal in red, Enter opening a session, / filtering,
# s stopping a session after its confirmation, a resize, sessions an alert
# froze (red, counted, r resumes one and s stops the other, each after a y),
# q giving the terminal back; and the plain-text and JSON snapshots on a pipe.
set -u
here=$(cd "$(dirname "$0")/.." && pwd)
. "$here/lib/harness.sh"
. "$here/lib/testnet.sh"
. "$here/lib/react.sh"
harness_locate
[ "${BOXY_TESTNET_INSIDE:-}" = 1 ] || harness_as_test_user "$0" "$@"
testnet_enter "$0" "$@"
testnet_setup
tn_probe
command -v tmux >/dev/null || harness_die "tmux is not installed (tools/deps.sh installs it)"

TM="$TN/tmux.sock"
W=$TN/cases/top
mkdir -p "$W" && chmod a+rwX "$W"
tm() { tn_user tmux -S "$TM" "$@"; }
screen() { tm capture-pane -p -t top "$@"; }
# wait_for TEXT [SECONDS]: until the screen shows TEXT.
wait_for() {
	local i
	for i in $(seq 1 $((${2:-10} * 10))); do
		screen | grep -qF -- "$1" && return 0
		sleep 0.1
	done
	return 1
}
top_cleanup() { tm kill-server 2>/dev/null; }
trap 'top_cleanup; testnet_cleanup' EXIT

# A finished session first, so the history is not empty.
(cd "$W" && tn_boxy run --net none -- true) >/dev/null 2>&1

tm -f /dev/null new-session -d -s top -x 100 -y 30 \
	"cd '$W' && env HOME='$TN/home' XDG_RUNTIME_DIR='$TN/run' XDG_STATE_HOME='$TN/state' TERM=xterm-256color '$BOXY' top; echo TOP-EXITED \$?; sleep 30"
if wait_for "boxy top · sessions"; then
	ok "boxy top draws its sessions view"
else
	not_ok "boxy top draws its sessions view"
	screen | diag "$(cat)"
fi

## ---- a new session appears, and its refusal is red ------------------------------------------
id=$(cd "$W" && tn_boxy run -d --allow-host www.example.test -- sh -c \
	'curl -s -m 3 http://other.example.test/; sleep 60' 2>/dev/null)
if [ -n "$id" ] && wait_for "${id:0:8}" 5 && wait_for "running" 5; then
	ok "a new boxy run appears in the list while top runs"
else
	not_ok "a new boxy run appears in the list while top runs"
	screen | diag "$(cat)"
fi
# The DENIED cell of that row turns red once the refusal is recorded.
red=no
for _ in $(seq 1 50); do
	if screen -e | grep "${id:0:8}" | grep -qE $'\033\\[[0-9;]*31m *[1-9]'; then
		red=yes
		break
	fi
	sleep 0.1
done
if [ "$red" = yes ]; then
	ok "the refused session's DENIED count is red"
else
	not_ok "the refused session's DENIED count is red"
	screen -e | grep "${id:0:8}" | od -c | head -5 | diag "$(cat)"
fi

## ---- Enter opens the session: live, with the refusal red ---------------------------------------
tm send-keys -t top Home
sleep 0.2
tm send-keys -t top Enter
if wait_for "session ${id}" 5 && wait_for "REFUSED" 5 && screen -e | grep 'other.example.test' | grep -q $'\033\\[[0-9;]*31m'; then
	ok "Enter opens the running session; its refusal is listed in red"
else
	not_ok "Enter opens the running session; its refusal is listed in red"
	screen | diag "$(cat)"
fi
tm send-keys -t top Escape
wait_for "boxy top · sessions" 3

## ---- the destinations and denials views ---------------------------------------------------------
tm send-keys -t top 3
if wait_for "destinations, last day" 3 && wait_for "other.example.test" 3; then
	ok "3 shows the destinations across sessions, the refused name among them"
else
	not_ok "3 shows the destinations across sessions, the refused name among them"
	screen | diag "$(cat)"
fi
tm send-keys -t top 4
tm resize-window -t top -x 170 -y 30
if wait_for "hostname not on the allowlist" 3 && wait_for "--allow-host other.example.test" 3; then
	ok "4 shows the denials feed with the fix (at 170 columns)"
else
	not_ok "4 shows the denials feed with the fix (at 170 columns)"
	screen | diag "$(cat)"
fi
tm resize-window -t top -x 100 -y 30
tm send-keys -t top 1
wait_for "boxy top · sessions" 3

## ---- / filters --------------------------------------------------------------------------------------
tm send-keys -t top / c u r l Enter
sleep 1.5
if screen | grep -q "${id:0:8}" && ! screen | grep -qE '^[0-9a-f]{8} +exited .* true *$'; then
	ok "/ filters the list by command"
else
	not_ok "/ filters the list by command"
	screen | diag "$(cat)"
fi
tm send-keys -t top Escape
sleep 1.2

## ---- a resize is followed ----------------------------------------------------------------------------
tm resize-window -t top -x 150 -y 40
if wait_for "WORKDIR" 5; then
	ok "after a resize to 150 columns the work directory column appears"
else
	not_ok "after a resize to 150 columns the work directory column appears"
	screen | diag "$(cat)"
fi
tm resize-window -t top -x 80 -y 24
sleep 0.5
if ! screen | grep -q WORKDIR && screen | grep -q COMMAND; then
	ok "back at 80 columns the layout narrows again, no row wraps"
else
	not_ok "back at 80 columns the layout narrows again, no row wraps"
	screen | diag "$(cat)"
fi

## ---- s stops a session after its confirmation ----------------------------------------------------------
tm send-keys -t top Home
sleep 0.3
tm send-keys -t top s
if wait_for "y to confirm" 3; then
	tm send-keys -t top n
	sleep 0.3
	still=$(tn_boxy ps 2>/dev/null | grep -c "${id:0:8}")
	tm send-keys -t top s
	wait_for "y to confirm" 3
	tm send-keys -t top y
	stopped=no
	for _ in $(seq 1 100); do
		tn_boxy ps 2>/dev/null | grep -q "${id:0:8}" || { stopped=yes; break; }
		sleep 0.1
	done
	if [ "$still" = 1 ] && [ "$stopped" = yes ]; then
		ok "s asks first: n keeps the session, y stops it"
	else
		not_ok "s asks first: n keeps the session, y stops it"
		diag "after n: $still running; after y: stopped=$stopped"
	fi
else
	not_ok "s asks first: n keeps the session, y stops it"
	screen | diag "$(cat)"
fi

## ---- frozen sessions: red, counted; r resumes one, s stops the other ---------------------------------
tm resize-window -t top -x 120 -y 30
fz1=$(cd "$W" && tn_boxy run -d --on-alert dns=freeze -- sh -c "$REACT_TUNNEL" 2>/dev/null)
wait_state "$fz1" frozen 20
fz2=$(cd "$W" && tn_boxy run -d --on-alert dns=freeze -- sh -c "$REACT_TUNNEL" 2>/dev/null)
wait_state "$fz2" frozen 20
if wait_for "(2 frozen)" 5 && screen -e | grep "${fz1:0:8}" | grep -q $'\033\\[[0-9;]*31mfrozen'; then
	ok "two sessions an alert froze are red in the list and counted in the header"
else
	not_ok "two sessions an alert froze are red in the list and counted in the header"
	screen | diag "$(cat)"
fi
# Newest first: fz2 is the first row, fz1 the second (g: the first row).
tm send-keys -t top g
sleep 0.3
tm send-keys -t top j
sleep 0.3
tm send-keys -t top r
if wait_for "resume frozen session ${fz1:0:8}? y to confirm" 3; then
	tm send-keys -t top y
	if wait_for "session ${fz1:0:8} resumed" 5 && wait_state "$fz1" exited 20 &&
		[ "$(state_of "$fz2")" = frozen ]; then
		ok "r asks first, then resumes the selected frozen session, which runs to its end"
	else
		not_ok "r asks first, then resumes the selected frozen session, which runs to its end"
		screen | diag "$(cat)"
	fi
else
	not_ok "r asks first, then resumes the selected frozen session, which runs to its end"
	screen | diag "$(cat)"
fi
tm send-keys -t top g
sleep 0.5
tm send-keys -t top s
if wait_for "stop session ${fz2:0:8}? y to confirm" 3; then
	tm send-keys -t top y
	if wait_state "$fz2" exited 10 && tn_boxy show "$fz2" | grep -q "^was frozen"; then
		ok "s on a frozen session asks first, then ends it"
	else
		not_ok "s on a frozen session asks first, then ends it"
		screen | diag "$(cat)"
	fi
else
	not_ok "s on a frozen session asks first, then ends it"
	screen | diag "$(cat)"
fi

## ---- q gives the terminal back -------------------------------------------------------------------------
tm send-keys -t top q
if wait_for "TOP-EXITED 0" 5 && ! screen -e | grep -q $'\033\\[?1049h'; then
	ok "q quits with status 0 and restores the terminal"
else
	not_ok "q quits with status 0 and restores the terminal"
	screen | diag "$(cat)"
fi

## ---- SIGTERM: the terminal comes back too; NO_COLOR: refusals bold, never red -----------------
tm kill-session -t top 2>/dev/null
tm -f /dev/null new-session -d -s top -x 100 -y 30 \
	"cd '$W' && env HOME='$TN/home' XDG_RUNTIME_DIR='$TN/run' XDG_STATE_HOME='$TN/state' NO_COLOR=1 TERM=xterm-256color '$BOXY' top; echo TOP-EXITED \$?; sleep 30"
wait_for "boxy top · sessions" 5
if ! screen -e | grep -q $'\033\\[[0-9;]*31m'; then
	ok "NO_COLOR: nothing on the screen is red"
else
	not_ok "NO_COLOR: nothing on the screen is red"
fi
pkill -TERM -u "$(id -u)" -f "$BOXY top\$" 2>/dev/null || pkill -TERM -f "boxy top$"
if wait_for "TOP-EXITED 143" 5; then
	ok "SIGTERM ends top with 128+15 and the terminal restored"
else
	not_ok "SIGTERM ends top with 128+15 and the terminal restored"
	screen | diag "$(cat)"
fi

## ---- on a pipe: one snapshot ---------------------------------------------------------------------------------
(cd "$W" && tn_boxy top) >"$W/snap.txt" 2>&1
(cd "$W" && tn_boxy top --json) >"$W/snap.json" 2>&1
if grep -q '^ID ' "$W/snap.txt" && grep -q "${id:0:8}" "$W/snap.txt" && ! grep -q $'\033' "$W/snap.txt" &&
	python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); assert any(s["id"]==sys.argv[2] for s in d["sessions"])' "$W/snap.json" "$id"; then
	ok "boxy top on a pipe prints one plain snapshot; --json prints the sessions"
else
	not_ok "boxy top on a pipe prints one plain snapshot; --json prints the sessions"
	diag_file "$W/snap.txt" 5
	diag_file "$W/snap.json" 3
fi

## ---- a store of a newer schema is refused in one line ------------------------------------------------
tn_boxy daemon stop >/dev/null 2>&1
for _ in $(seq 1 50); do
	tn_user sqlite3 "$TN/state/boxy/sessions.db" 'PRAGMA user_version = 99' 2>/dev/null
	[ "$(tn_user sqlite3 "$TN/state/boxy/sessions.db" 'PRAGMA user_version' 2>/dev/null)" = 99 ] && break
	sleep 0.1
done
(cd "$W" && tn_boxy top) >"$W/newer.out" 2>"$W/newer.err"
rc=$?
if [ "$rc" -ne 0 ] && [ "$(wc -l <"$W/newer.err")" -eq 1 ] && grep -q 'newer than this build' "$W/newer.err"; then
	ok "a store of a newer schema is refused in one line"
else
	not_ok "a store of a newer schema is refused in one line"
	diag "exit $rc, user_version $(tn_user sqlite3 "$TN/state/boxy/sessions.db" 'PRAGMA user_version' 2>&1)"
	diag_file "$W/newer.err" 3
fi

done_testing
