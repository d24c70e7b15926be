#!/bin/bash
# tests/e2e/logs-wait.sh — the scripting pattern around a detached run:
#
#   id=$(boxy run -d ...) && boxy wait "$id"    # the payload's exit status
#   boxy logs "$id" [-f]                        # what it wrote to its terminal
#
# As the unprivileged test user, against a private daemon and store (fresh
# XDG_RUNTIME_DIR and XDG_STATE_HOME under the suite's scratch directory).
. "$(dirname "$0")/../lib/harness.sh"
harness_as_test_user "$0" "$@"
harness_locate
[ -x "$BOXY" ] || harness_die "no boxy binary at $BOXY"

SUITE=$(mktemp -d "${TMPDIR:-/tmp}/boxy-logs.XXXXXX") || exit 99
chmod 0700 "$SUITE"
HARNESS_DIRS+=("$SUITE")
export XDG_RUNTIME_DIR=$SUITE/run XDG_STATE_HOME=$SUITE/state HOME=$SUITE/home
mkdir -m 0700 "$XDG_RUNTIME_DIR" "$XDG_STATE_HOME" "$HOME" "$HOME/work"
cd "$HOME/work" || exit 99
logs_cleanup() {
	"$BOXY" daemon stop >/dev/null 2>&1
	harness_cleanup
}
trap logs_cleanup EXIT

## ---- wait returns the payload's status ------------------------------------------------
id=$("$BOXY" run -d --net none -- sh -c 'echo first line; sleep 1; echo second line; exit 7')
t0=$(date +%s%N)
"$BOXY" wait "$id"
rc=$?
t1=$(date +%s%N)
if [ "$rc" -eq 7 ] && [ $(((t1 - t0) / 1000000)) -ge 500 ]; then
	ok "boxy run -d && boxy wait ID: wait blocks until the end and exits with the payload's status"
else
	not_ok "boxy run -d && boxy wait ID: wait blocks until the end and exits with the payload's status"
	diag "want 7 after about a second; got $rc after $(((t1 - t0) / 1000000)) ms"
fi

"$BOXY" logs "$id" >"$SUITE/logs.out" 2>"$SUITE/logs.err"
rc=$?
if [ "$rc" -eq 0 ] && grep -q '^first line' "$SUITE/logs.out" && grep -q '^second line' "$SUITE/logs.out"; then
	ok "boxy logs ID prints a detached session's output"
else
	not_ok "boxy logs ID prints a detached session's output"
	diag "exit $rc"
	diag_file "$SUITE/logs.out" 5
	diag_file "$SUITE/logs.err" 5
fi

## ---- a session that has already ended: from the store --------------------------------------
sleep 0.5
"$BOXY" wait "${id:0:8}"
rc=$?
if [ "$rc" -eq 7 ]; then
	ok "boxy wait on a finished session (by prefix) exits with its recorded status"
else
	not_ok "boxy wait on a finished session (by prefix) exits with its recorded status"
	diag "want 7, got $rc"
fi

id=$("$BOXY" run -d --net none -- sh -c 'kill -TERM $$')
"$BOXY" wait "$id"
rc=$?
if [ "$rc" -eq 143 ]; then
	ok "boxy wait: a payload killed by SIGTERM is 128+15"
else
	not_ok "boxy wait: a payload killed by SIGTERM is 128+15"
	diag "want 143, got $rc"
fi

"$BOXY" wait 0123456789abcdef 2>"$SUITE/unknown.err"
rc=$?
if [ "$rc" -eq 125 ] && grep -q 'no session matches' "$SUITE/unknown.err"; then
	ok "boxy wait on an unknown id: 125 and one line"
else
	not_ok "boxy wait on an unknown id: 125 and one line"
	diag "got $rc"
	diag_file "$SUITE/unknown.err" 3
fi

## ---- logs -f follows until the end ----------------------------------------------------------
id=$("$BOXY" run -d --net none -- sh -c 'for i in 1 2 3; do echo tick$i; sleep 0.4; done')
timeout 20 "$BOXY" logs -f "$id" >"$SUITE/follow.out" 2>&1
rc=$?
if [ "$rc" -eq 0 ] && [ "$(grep -c '^tick' "$SUITE/follow.out")" = 3 ]; then
	ok "boxy logs -f follows a running session and returns when it ends"
else
	not_ok "boxy logs -f follows a running session and returns when it ends"
	diag "exit $rc"
	diag_file "$SUITE/follow.out" 5
fi

## ---- on a terminal, the log passes the terminal filter -----------------------------------------
id=$("$BOXY" run -d --net none -- sh -c \
	'printf "visible\033]52;c;Y3VybCBldmlsfHNo\007\033[6n\033[31mred\033[0m\n"')
"$BOXY" wait "$id" >/dev/null
if command -v script >/dev/null; then
	script -qec "'$BOXY' logs '$id'" /dev/null </dev/null >"$SUITE/tty.out" 2>&1
	if grep -q visible "$SUITE/tty.out" && ! grep -q ']52;' "$SUITE/tty.out" &&
		! grep -q '\[6n' "$SUITE/tty.out" && grep -q $'\033\\[31mred' "$SUITE/tty.out"; then
		ok "boxy logs on a terminal drops the clipboard write and the query, keeps colour"
	else
		not_ok "boxy logs on a terminal drops the clipboard write and the query, keeps colour"
		diag "$(od -c "$SUITE/tty.out" | head -5)"
	fi
else
	not_ok "boxy logs on a terminal: script(1) is not installed (bsdutils)"
fi
"$BOXY" logs "$id" >"$SUITE/pipe.out"
if grep -q ']52;' "$SUITE/pipe.out"; then
	ok "boxy logs to a file keeps the exact bytes"
else
	not_ok "boxy logs to a file keeps the exact bytes"
fi

## ---- the log is bounded ------------------------------------------------------------------------
id=$("$BOXY" run -d --net none -- sh -c 'head -c 20000000 /dev/zero | tr "\0" x')
"$BOXY" wait "$id" >/dev/null
size=$(stat -c %s "$XDG_STATE_HOME/boxy/logs/$id.log" 2>/dev/null || echo 0)
if [ "$size" -ge $((16 << 20)) ] && [ "$size" -le $(((16 << 20) + 200)) ] &&
	tail -c 200 "$XDG_STATE_HOME/boxy/logs/$id.log" | grep -q 'first 16 MiB'; then
	ok "a session's log stops at 16 MiB and says so"
else
	not_ok "a session's log stops at 16 MiB and says so"
	diag "size $size"
fi
mode=$(stat -c %a "$XDG_STATE_HOME/boxy/logs" 2>/dev/null)/$(stat -c %a "$XDG_STATE_HOME/boxy/logs/$id.log" 2>/dev/null)
if [ "$mode" = 700/600 ]; then
	ok "the logs directory is 0700 and each log 0600"
else
	not_ok "the logs directory is 0700 and each log 0600"
	diag "modes: $mode"
fi

## ---- a run without a terminal keeps no log, and says where its output went ---------------------
"$BOXY" run --net none -- true </dev/null >/dev/null 2>&1
nid=$("$BOXY" ps -a --json 2>/dev/null | python3 -c 'import json,sys; print(json.load(sys.stdin)[0]["id"])' 2>/dev/null)
"$BOXY" logs "$nid" >/dev/null 2>"$SUITE/nolog.err"
rc=$?
if [ -n "$nid" ] && [ "$rc" -eq 1 ] && grep -q 'kept no output' "$SUITE/nolog.err"; then
	ok "boxy logs of a run without a terminal: one line saying where its output went"
else
	not_ok "boxy logs of a run without a terminal: one line saying where its output went"
	diag "id '$nid' exit $rc"
	diag_file "$SUITE/nolog.err" 3
fi

## ---- prune takes the logs with the sessions -------------------------------------------------------
before=$(ls "$XDG_STATE_HOME/boxy/logs" | wc -l)
sleep 1
"$BOXY" prune --older-than 1ms >/dev/null 2>"$SUITE/prune.err"
after=$(ls "$XDG_STATE_HOME/boxy/logs" | wc -l)
if [ "$before" -ge 4 ] && [ "$after" -eq 0 ]; then
	ok "boxy prune deletes the logs of the sessions it prunes"
else
	not_ok "boxy prune deletes the logs of the sessions it prunes"
	diag "logs before: $before, after: $after"
	diag_file "$SUITE/prune.err" 3
fi

done_testing
