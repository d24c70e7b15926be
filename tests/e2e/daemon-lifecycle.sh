#!/bin/bash
# tests/e2e/daemon-lifecycle.sh — the per-user daemon's lifecycle, as TAP, run as the unprivileged
# test user against a private daemon: XDG_RUNTIME_DIR and XDG_STATE_HOME are
# fresh 0700 directories under the suite's scratch directory, so this suite
# never talks to another daemon or store, and its daemon is stopped at the end.
#
# Cases: start on demand; status fields; an idle stale build replaced and a
# busy one refused; exit statuses; stdout/stderr separation and EOF; -d, ps,
# stop (SIGTERM, the SIGKILL after the grace, -k); id prefixes; attach and
# detach on a real terminal (tmux); the client killed mid-run; the daemon
# killed mid-run; 20 concurrent sessions; --audit-log; watch; the store's
# views; prune; the protocol tests (tests/unit/test-daemon-proto, run here
# against this suite's daemon too when built).
#
# BOXY_DAEMON_STOP_GRACE (doc/daemon.md) shortens the stop grace to 3 s (long enough that
# stop -k is told apart from it even in a sanitizer build on a loaded machine).

. "$(dirname "$0")/../lib/harness.sh"
# The daemon's peer-uid refusal needs a client of another uid, which the test
# user cannot become: started as root, run tests/lib/other-uid-agent.py as a
# second unprivileged user (BOXY_TEST_OTHER_USER, default boxytest2, created when
# missing) and hand its socket to the test user's run as an argument.
if [ "$(id -u)" = 0 ] && [ -z "${BOXY_HARNESS_CHILD:-}" ]; then
	harness_locate
	other=${BOXY_TEST_OTHER_USER:-boxytest2}
	if ! id "$other" >/dev/null 2>&1; then
		echo "daemon-lifecycle.sh: creating a second unprivileged user $other (useradd -M)" >&2
		useradd -M -s /usr/sbin/nologin "$other" || harness_die "useradd $other failed"
	fi
	agentdir=$(mktemp -d /tmp/boxy-other-uid.XXXXXX) || harness_die "mktemp failed"
	HARNESS_DIRS+=("$agentdir")
	chown "$other" "$agentdir" && chmod 0755 "$agentdir"
	runuser -u "$other" -- python3 - "$agentdir/agent.sock" $$ \
		<"$BOXY_SRCDIR/tests/lib/other-uid-agent.py" &
	for _ in $(seq 50); do [ -S "$agentdir/agent.sock" ] && break; sleep 0.1; done
	set -- --other-uid-agent="$agentdir/agent.sock" "$@"
fi
harness_as_test_user "$0" "$@"
harness_locate
OTHER_UID_AGENT=
for a in "$@"; do
	case $a in --other-uid-agent=*) OTHER_UID_AGENT=${a#*=} ;; esac
done

if [ ! -x "$BOXY" ]; then
	echo "1..0 # SKIP no boxy binary at $BOXY"
	exit 0
fi

for tool in sqlite3 pgrep; do
	if ! command -v "$tool" >/dev/null; then
		echo "1..0 # SKIP $tool is not installed"
		exit 0
	fi
done

SUITE=$(mktemp -d "${TMPDIR:-/tmp}/boxy-daemon.XXXXXX") || exit 99
chmod 0700 "$SUITE"
HARNESS_DIRS+=("$SUITE")
export XDG_RUNTIME_DIR=$SUITE/run XDG_STATE_HOME=$SUITE/state
export BOXY_DAEMON_STOP_GRACE=3
mkdir -m 0700 "$XDG_RUNTIME_DIR" "$XDG_STATE_HOME" "$SUITE/work"
SOCK=$XDG_RUNTIME_DIR/boxy/daemon.sock
DB=$XDG_STATE_HOME/boxy/sessions.db
LOG=$XDG_STATE_HOME/boxy/daemon.log
TMUX_SOCK=$SUITE/tmux.sock
cd "$SUITE/work" || exit 99

# The suite's daemon(s) and tmux server go at the end, whatever happened.
daemon_cleanup() {
	tmux -S "$TMUX_SOCK" kill-server 2>/dev/null
	"$BOXY" daemon stop >/dev/null 2>&1
	local p
	p=$(daemon_pid)
	[ -z "$p" ] || kill -KILL "$p" 2>/dev/null
	harness_cleanup
}
trap daemon_cleanup EXIT

# daemon_pid: the pid of the daemon serving this suite's socket, or nothing.
daemon_pid() {
	"$BOXY" daemon status --json 2>/dev/null | sed -n 's/.*"pid":\([0-9]*\).*/\1/p'
}

# B ARGS...: boxy, stdout/stderr/status in $OUT $ERR $RC (stdin /dev/null).
OUT=$SUITE/out
ERR=$SUITE/err
B() {
	"$BOXY" "$@" </dev/null >"$OUT" 2>"$ERR"
	RC=$?
}

# check DESC CMD ARGS...: ok when the command succeeds, else not_ok with the context.
# check DESC 'EXPR': one argument is a shell expression, evaluated (for && chains).
check() {
	local desc=$1
	shift
	if { [ $# = 1 ] && eval "$1"; } || { [ $# -gt 1 ] && "$@"; }; then
		ok "$desc"
	else
		not_ok "$desc"
		diag "rc=${RC:-} failed: $*"
		diag_file "$OUT"
		diag_file "$ERR"
	fi
}

# wait_until TIMEOUT_S CMD...: poll CMD every 50 ms until it succeeds.
wait_until() {
	local end=$((SECONDS + $1))
	shift
	while ! "$@"; do
		[ "$SECONDS" -lt "$end" ] || return 1
		sleep 0.05
	done
}

# state_of ID: the session's state and exit code from the store ("exited 0").
state_of() {
	sqlite3 "$DB" "select state || ' ' || ifnull(exit_code, '-') from sessions
		where id like '$1%'" 2>/dev/null
}
state_is() { [ "$(state_of "$1")" = "$2" ]; }
running_in_ps() { "$BOXY" ps 2>/dev/null | grep -q "^${1:0:8} .*running"; }
is_hex16() { [[ $1 =~ ^[0-9a-f]{16}$ ]]; }

## ---- start on demand ---------------------------------------------------------
[ ! -e "$SOCK" ] && ok "no daemon before the first run" || not_ok "no daemon before the first run"
B run --net none -- sh -c 'echo hi; exit 3'
check "first run starts the daemon and exits with the payload's status (3)" \
	'[ "$RC" = 3 ] && [ "$(cat "$OUT")" = hi ] && [ ! -s "$ERR" ]'
check "the daemon's socket exists, in a 0700 directory" \
	'[ -S "$SOCK" ] && [ "$(stat -c %a "$XDG_RUNTIME_DIR/boxy")" = 700 ]'
check "the daemon's log says it started, with its build" grep -q "started, build [0-9a-f]\{16\}" "$LOG"

## ---- status ----------------------------------------------------------------------
B daemon status
PID=$(daemon_pid)
check "daemon status: pid, this build, uptime, 0 sessions, 0 subscribers" \
	grep -q "^daemon      running, pid $PID\$" "$OUT"
status_fields() {
	grep -q "^build       [0-9a-f]\{16\}\$" "$OUT" && grep -q "^uptime      [0-9]*s\$" "$OUT" &&
		grep -q "^sessions    0 running\$" "$OUT" && grep -q "^subscribers 0\$" "$OUT"
}
check "daemon status: this build (no 'not this build'), uptime, 0 running, 0 subscribers" \
	status_fields
B daemon status --json
check "daemon status --json: same_build true, sessions 0" \
	grep -q '"sessions":0,"subscribers":0,"same_build":true' "$OUT"

## ---- exit statuses -------------------------------------------------------------
B run --net none -- sh -c 'exit 7'
check "exit 7 -> 7" [ "$RC" = 7 ]
B run --net none -- sh -c 'kill -TERM $$'
check "kill -TERM \$\$ -> 143" [ "$RC" = 143 ]
B run --net none -- no-such-command-here
check "command not found -> 127, one line" \
	'[ "$RC" = 127 ] && [ "$(wc -l <"$ERR")" = 1 ] && grep -q "no-such-command-here" "$ERR"'
t0=$(date +%s%N)
B run --net none --timeout 1s -- sleep 10
ms=$((($(date +%s%N) - t0) / 1000000))
check "--timeout 1s on sleep 10 -> 124 after about a second (${ms} ms)" \
	'[ "$RC" = 124 ] && [ "$ms" -ge 900 ] && [ "$ms" -lt 5000 ]'
B run --net none --memory 1k -- true
check "a stage failure -> 125 with exactly one line" \
	'[ "$RC" = 125 ] && [ "$(wc -l <"$ERR")" = 1 ] && grep -q "^boxy: stage " "$ERR"'

## ---- streams -----------------------------------------------------------------------
printf 'line one\nline two\n' >"$SUITE/in"
"$BOXY" run --net none -- sh -c 'cat; echo e >&2' <"$SUITE/in" >"$SUITE/o" 2>"$SUITE/e"
RC=$?
check "stdout and stderr stay separate, EOF passes through" \
	'[ "$RC" = 0 ] && cmp -s "$SUITE/in" "$SUITE/o" && [ "$(cat "$SUITE/e")" = e ]'
# EOF on a pipe: without it, cat would never end.
RC=0
out=$(printf 'piped\n' | timeout 10 "$BOXY" run --net none -- cat 2>"$ERR") || RC=$?
check "EOF of a pipe reaches the payload (cat ends)" '[ "$RC" = 0 ] && [ "$out" = piped ]'

## ---- -d, ps, stop -------------------------------------------------------------------
t0=$(date +%s%N)
B run -d --net none -- sleep 30
t1=$(date +%s%N)
ID1=$(cat "$OUT")
check "-d prints a 16-hex id and returns at once (<2 s)" \
	'is_hex16 "$ID1" && [ "$RC" = 0 ] && [ $(((t1 - t0) / 1000000)) -lt 2000 ]'
B ps
check "boxy ps lists it as running" grep -q "^${ID1:0:8}  running .* sleep 30\$" "$OUT"
B stop "$ID1"
check "boxy stop ID answers SIGTERM sent" grep -q "SIGTERM sent" "$OUT"
check "stop: the session ends with 143 recorded" wait_until 5 state_is "$ID1" "exited 143"

B run -d --net none -- sh -c 'trap "" TERM; while :; do sleep 0.1; done'
ID2=$(cat "$OUT")
sleep 0.3
t0=$(date +%s%N)
B stop "$ID2"
wait_until 9 state_is "$ID2" "exited 137"
RC=$?
t1=$(date +%s%N)
ms=$(((t1 - t0) / 1000000))
check "a payload ignoring SIGTERM is SIGKILLed after the grace (3 s): 137 in ${ms} ms" \
	'[ "$RC" = 0 ] && [ "$ms" -ge 2900 ] && [ "$ms" -lt 7000 ]'

B run -d --net none -- sh -c 'trap "" TERM; while :; do sleep 0.1; done'
ID3=$(cat "$OUT")
sleep 0.3
t0=$(date +%s%N)
B stop -k "$ID3"
wait_until 5 state_is "$ID3" "exited 137"
RC=$?
t1=$(date +%s%N)
ms=$(((t1 - t0) / 1000000))
check "stop -k kills at once: 137 in ${ms} ms (< 2500, the grace is 3 s)" \
	'[ "$RC" = 0 ] && [ "$ms" -lt 2500 ]'

## ---- id prefixes ------------------------------------------------------------------
# Start sessions until two share a first hex digit: that digit is ambiguous.
declare -A first=()
amb="" ids=()
for i in $(seq 17); do
	B run -d --net none -- sleep 30
	id=$(cat "$OUT")
	ids+=("$id")
	d=${id:0:1}
	if [ -n "${first[$d]:-}" ]; then amb=$d; break; fi
	first[$d]=$id
done
B stop "$amb"
check "an ambiguous prefix is refused (exit 1, says ambiguous)" \
	'[ "$RC" = 1 ] && grep -q "ambiguous" "$ERR"'
B stop -k "${ids[0]:0:5}"
check "an unambiguous 5-digit prefix is accepted" '[ "$RC" = 0 ] && grep -q "killed" "$OUT"'
for id in "${ids[@]:1}"; do "$BOXY" stop -k "$id" >/dev/null 2>&1; done
B stop ffffffffffffffff
check "an unknown id is refused (exit 1)" '[ "$RC" = 1 ] && grep -q "no running session" "$ERR"'
wait_until 5 bash -c "[ -z \"\$('$BOXY' ps)\" ]"

## ---- attach and detach on a real terminal ----------------------------------------
if command -v tmux >/dev/null; then
	TMX() { tmux -S "$TMUX_SOCK" "$@"; }
	pane_has() { TMX capture-pane -p -t "$1" | grep -q "$2"; }
	# The panes' commands get this suite's private daemon, whatever tmux's environment.
	ENVS="XDG_RUNTIME_DIR='$XDG_RUNTIME_DIR' XDG_STATE_HOME='$XDG_STATE_HOME'"
	TMX -f /dev/null new-session -d -s t -x 100 -y 30 \
		"cd '$SUITE/work' && $ENVS '$BOXY' run --net none -- sh; echo client-exit=\$?; sleep 30"
	sleep 0.5
	# The second line comes while nobody is attached: the daemon keeps it for attach.
	TMX send-keys -t t 'echo mark-$((6*7)); sleep 1; echo later-$((7*8))' Enter
	check "tmux: a typed command's output shows in the pane" wait_until 5 pane_has t mark-42
	TMX send-keys -t t C-]
	check "tmux: Ctrl-] detaches, the client exits 0" wait_until 5 pane_has t 'client-exit=0'
	check "tmux: the detach line names the session" pane_has t 'detached from session'
	ATT=$("$BOXY" ps | awk '$2 == "running" && $6 == "sh" && NF == 6 { print $1 }')
	check "tmux: the session is still running after the detach (boxy ps)" [ -n "$ATT" ]
	TMX new-window -d -t t -n a \
		"$ENVS '$BOXY' attach $ATT; echo attach-exit=\$?; sleep 30"
	sleep 1
	check "tmux: boxy attach shows the output made while detached" wait_until 5 pane_has t:a later-56
	TMX send-keys -t t:a 'exit 5' Enter
	check "tmux: exit 5 in the attached session -> attach exits 5" \
		wait_until 5 pane_has t:a 'attach-exit=5'
	check "tmux: the session is recorded exited 5" wait_until 3 state_is "$ATT" "exited 5"
	# watch on a terminal: the live screen; Ctrl-C leaves the session running.
	"$BOXY" run -d --net none -- sleep 31 >"$OUT" 2>"$ERR"
	WTID=$(cat "$OUT")
	# (The pane's shell ignores SIGINT so it outlives the Ctrl-C; watch sets its own handler.)
	TMX new-window -d -t t -n w \
		"trap '' INT; $ENVS '$BOXY' watch $WTID; echo watch-exit=\$?; sleep 30"
	check "tmux: watch draws its screen with the session's command" \
		wait_until 5 pane_has t:w 'sleep 31'
	TMX send-keys -t t:w C-c
	check "tmux: Ctrl-C leaves watch (exit 0)" wait_until 5 pane_has t:w 'watch-exit=0'
	check "tmux: ... and the session keeps running" running_in_ps "$WTID"
	"$BOXY" stop -k "$WTID" >/dev/null 2>&1
	TMX kill-server 2>/dev/null
else
	skip "attach/detach on a terminal" "tmux is not installed"
fi

## ---- the client killed mid-run -------------------------------------------------------
# (not --rw "$SUITE": it holds the suite's session store, which boxy refuses to expose)
mkdir -p "$SUITE/kw"
rm -f "$SUITE/kw/done"
"$BOXY" run --net none --rw "$SUITE/kw" -- sh -c "sleep 1.5; echo done > '$SUITE/kw/done'" \
	</dev/null >/dev/null 2>&1 &
CPID=$!
sleep 0.5
KID=$("$BOXY" ps | awk '/sleep 1.5/ { print $1 }')
kill -KILL "$CPID"
wait "$CPID" 2>/dev/null
check "client SIGKILLed mid-run: the session goes on and writes its file" \
	wait_until 5 test -s "$SUITE/kw/done"
check "client SIGKILLed mid-run: the session is recorded exited 0" \
	wait_until 3 state_is "$KID" "exited 0"

## ---- 20 concurrent sessions ------------------------------------------------------------
pids=()
for i in $(seq 20); do
	"$BOXY" run --net none -- sh -c "echo out-$i; sleep 0.2; echo err-$i >&2" \
		</dev/null >"$SUITE/c$i.out" 2>"$SUITE/c$i.err" &
	pids+=($!)
done
bad=0
for i in $(seq 20); do
	wait "${pids[$((i - 1))]}" || { bad=$((bad + 1)); diag "session $i: exit $?"; }
	[ "$(cat "$SUITE/c$i.out")" = "out-$i" ] && [ "$(cat "$SUITE/c$i.err")" = "err-$i" ] ||
		{ bad=$((bad + 1)); diag "session $i: wrong output"; diag_file "$SUITE/c$i.err"; }
done
check "20 concurrent sessions: all exit 0 with their own stdout and stderr" [ "$bad" = 0 ]
n=$(sqlite3 "$DB" "select count(*) from sessions
	where argv like '%echo out-%' and state = 'exited' and exit_code = 0")
check "20 concurrent sessions: all recorded (got $n)" [ "$n" = 20 ]

## ---- --audit-log, watch --------------------------------------------------------------
B run --net none --audit-log "$SUITE/audit.jsonl" -- true
audit_ok() {
	[ "$RC" = 0 ] && [ -s "$SUITE/audit.jsonl" ] &&
		! grep -qv '^{"t":[0-9]*,"session":"[0-9a-f]\{16\}",.*}$' "$SUITE/audit.jsonl"
}
check "--audit-log through the daemon: JSON lines with the session id" audit_ok

B run -d --net none -- sleep 30
WID=$(cat "$OUT")
"$BOXY" watch "$WID" >"$SUITE/watch.out" 2>"$SUITE/watch.err" &
WPID=$!
sleep 0.5
B daemon status
check "daemon status counts the watcher (1 subscriber)" grep -q '^subscribers 1$' "$OUT"
B stop "$WID"
wait_until 5 bash -c "! kill -0 $WPID 2>/dev/null"
wait "$WPID"
RC=$?
check "watch shows the boxy stop, as an action" \
	grep -q "session  action  stop .*stopped with SIGTERM" "$SUITE/watch.out"
check "watch ends with the session, then prints its summary (exit 143)" \
	'[ "$RC" = 0 ] && grep -Eq "^session +$WID +exited 143 after " "$SUITE/watch.out"'
B watch "$WID"
check "watch of a finished session prints its summary" \
	'[ "$RC" = 0 ] && grep -Eq "^session +[0-9a-f]{16} +exited 143 after " "$OUT"'

## ---- the store's views -----------------------------------------------------------------
cols() { sqlite3 "$DB" "select group_concat(name, ',') from pragma_table_info('$1')"; }
check "destinations has the documented columns" \
	[ "$(cols destinations)" = "session_id,destination,conns,denied,addrs,sent,received" ]
check "denials has the documented columns" \
	[ "$(cols denials)" = "session_id,t_ms,layer,what,subject,reason,t_rel_ms,count,last_ms,pid,comm,argv0,cmdline,package,package_version,package_script,package_via,package_claimed" ]
check "packages has the documented columns" \
	[ "$(cols packages)" = "session_id,package,version,script,claimed,via,comm,conns,denied,lookups,destinations,dest_list" ]
check "session_summary has the documented columns" \
	[ "$(cols session_summary)" = \
		"id,short_id,state,exit_code,started_ms,ended_ms,argv,cwd,conns,denied,sent,received,overflow" ]
check "destinations: a --net none session has no rows" \
	[ "$(sqlite3 "$DB" "select count(*) from destinations where session_id='$WID'")" = 0 ]
stop_row=$(sqlite3 "$DB" "select layer || '|' || verdict from decisions
	where session_id='$WID' and subject = 'stop'")
stop_denials=$(sqlite3 "$DB" "select count(*) from denials where session_id='$WID'")
check "decisions: the stop is there as an action, and it is no denial" \
	[ "$stop_row|$stop_denials" = "session|action|0" ]
check "session_summary: the watched session, exited 143, no denial (the stop is an action), no traffic" \
	[ "$(sqlite3 "$DB" "select short_id, state, exit_code, argv, conns, denied, sent, received
		from session_summary where id='$WID'")" = "${WID:0:8}|exited|143|[\"sleep\",\"30\"]|0|0|0|0" ]

## ---- stale builds --------------------------------------------------------------------
# Nothing may be left running from the cases above, or the daemon would be busy.
for id in $("$BOXY" ps | awk 'NR > 1 { print $1 }'); do "$BOXY" stop -k "$id" >/dev/null 2>&1; done
wait_until 5 bash -c "[ -z \"\$('$BOXY' ps)\" ]"
mkdir -p "$SUITE/old"
cp "$BOXY" "$SUITE/old/boxy"
ln -s "$BOXY_INIT" "$SUITE/old/boxy-init"
# Another build: its build-id note (what build_id() reads) differs in one bit.
python3 -c '
import struct, sys
b = bytearray(open(sys.argv[1], "rb").read())
i = b.find(struct.pack("<III", 4, 20, 3) + b"GNU\0")
assert i > 0, "no GNU build-id note"
b[i + 16] ^= 1
open(sys.argv[1], "wb").write(b)' "$SUITE/old/boxy"
"$BOXY" daemon stop >/dev/null 2>&1
wait_until 5 test ! -S "$SOCK"
"$SUITE/old/boxy" daemon serve 2>>"$SUITE/old.log" &
OLDPID=$!
wait_until 5 test -S "$SOCK"
B daemon status
check "status of another build's daemon says so" grep -q "not this build" "$OUT"
B run --net none -- true
check "an idle stale daemon is replaced, with exactly one line saying so" \
	'[ "$RC" = 0 ] && [ "$(wc -l <"$ERR")" = 1 ] &&
	grep -q "^boxy: replacing the idle daemon of another build (pid $OLDPID)\$" "$ERR"'
wait_until 5 bash -c "! kill -0 $OLDPID 2>/dev/null"
RC=$?
check "the stale daemon is gone, a new one runs" \
	'[ "$RC" = 0 ] && [ -n "$(daemon_pid)" ] && [ "$(daemon_pid)" != "$OLDPID" ]'
wait "$OLDPID" 2>/dev/null

"$BOXY" daemon stop >/dev/null 2>&1
wait_until 5 test ! -S "$SOCK"
"$SUITE/old/boxy" daemon serve 2>>"$SUITE/old.log" &
OLDPID=$!
wait_until 5 test -S "$SOCK"
OLDID=$("$SUITE/old/boxy" run -d --net none -- sleep 30)
B run --net none -- true
check "a busy stale daemon is not replaced: exit 125, one clear line" \
	'[ "$RC" = 125 ] && [ "$(wc -l <"$ERR")" = 1 ] &&
	grep -q "another build of boxy and has 1 session running" "$ERR"'
check "the busy stale daemon and its session are untouched" \
	'kill -0 "$OLDPID" && running_in_ps "$OLDID"'
B daemon stop
check "daemon stop is refused while sessions run" '[ "$RC" = 1 ] && grep -q "still running" "$ERR"'
"$SUITE/old/boxy" stop -k "$OLDID" >/dev/null 2>&1
wait_until 5 state_is "$OLDID" "exited 137"
"$SUITE/old/boxy" daemon stop >/dev/null 2>&1
wait_until 5 bash -c "! kill -0 $OLDPID 2>/dev/null"
wait "$OLDPID" 2>/dev/null

## ---- a sandboxed process that can reach the socket ------------------------------------
# A --rw of the runtime directory is refused now (tests/e2e/daemon-store-guard.sh), but a
# hard link of the socket in an exposed directory still lets a payload connect to it: the
# daemon must refuse it (another pid namespace), so it cannot ask for a sandbox with wider rules.
# (ASAN_OPTIONS: a sanitizer build of boxy inside the sandbox must not run LeakSanitizer,
# whose exit-time ptrace the seccomp filter forbids; harmless in a normal build)
"$BOXY" run --net none -- true </dev/null >/dev/null 2>&1     # a daemon, for the link to reach
mkdir -p -m 0700 "$SUITE/reach/boxy"
ln "$SOCK" "$SUITE/reach/boxy/daemon.sock"
XDG_RUNTIME_DIR=$SUITE/reach B run --net none --rw "$SUITE/reach" --ro "$(dirname "$BOXY")" \
	-e XDG_RUNTIME_DIR -e ASAN_OPTIONS=detect_leaks=0 -- "$BOXY" run --net none -- true
check "a sandboxed boxy run cannot use the daemon's socket, even when it can reach it" \
	'[ "$RC" = 125 ] && grep -q "refused a connection from pid" "$LOG"'

## ---- the daemon killed mid-run -----------------------------------------------------
MARK=$((RANDOM % 1000 + 31000))
B run -d --net none -- sleep "$MARK"
LID=$(cat "$OUT")
DPID=$(daemon_pid)
check "a sandbox is running under the daemon" "pgrep -u $(id -u) -f '^sleep $MARK\$' >/dev/null"
kill -KILL "$DPID"
check "daemon SIGKILLed: the sandbox dies with it (pgrep finds nothing)" \
	wait_until 5 bash -c "! pgrep -u $(id -u) -f '^sleep $MARK\$' >/dev/null"
B run --net none -- true
check "the next boxy run starts a new daemon" '[ "$RC" = 0 ] && [ "$(daemon_pid)" != "$DPID" ]'
check "the old session is marked lost" state_is "$LID" "lost -"
check "the store passes PRAGMA integrity_check" [ "$(sqlite3 "$DB" "PRAGMA integrity_check")" = ok ]
check "the new daemon's log says it marked a session lost" \
	grep -q "1 session of a daemon that died was marked lost" "$LOG"

## ---- the daemon stopped by a signal with a session running ----------------------------
B run -d --net none -- sleep "$MARK"
TID=$(cat "$OUT")
DPID=$(daemon_pid)
kill -TERM "$DPID"
wait_until 5 bash -c "! kill -0 $DPID 2>/dev/null"
check "daemon SIGTERMed: its running session is recorded lost at once" state_is "$TID" "lost -"
check "daemon SIGTERMed: the sandbox is gone" \
	wait_until 5 bash -c "! pgrep -u $(id -u) -f '^sleep $MARK\$' >/dev/null"
B run --net none -- true

## ---- protocol tests against this suite's daemon --------------------------------------
PROTO=$BOXY_BUILDDIR/tests/unit/test-daemon-proto
if [ -x "$PROTO" ]; then
	if BOXY_PROTO_SOCK=$SOCK BOXY_PROTO_LOG=$LOG BOXY_PROTO_OTHER_UID=$OTHER_UID_AGENT "$PROTO" \
		>"$SUITE/proto.out" 2>&1; then
		ok "protocol tests (test-daemon-proto) against a live daemon"
	else
		not_ok "protocol tests (test-daemon-proto) against a live daemon"
		diag_file "$SUITE/proto.out" 40
	fi
	# Run, not skipped: a client of another uid (the agent's) is refused as $(id -un).
	check "the live daemon refuses a client of another uid (test_other_uid_refused, as $(id -un))" \
		'grep -q "^ok [0-9]* - test_other_uid_refused$" "$SUITE/proto.out"'
else
	skip "protocol tests against a live daemon" "tests/unit/test-daemon-proto not built"
fi

## ---- prune ----------------------------------------------------------------------------
sleep 1.1
B prune --older-than 1s
left=$(sqlite3 "$DB" "select count(*) from sessions")
check "prune --older-than 1s removes every ended session ($left left)" \
	'[ "$RC" = 0 ] && grep -q "^[1-9][0-9]* sessions\? pruned\$" "$OUT" && [ "$left" = 0 ]'
check "prune removed their decisions too (cascade)" \
	[ "$(sqlite3 "$DB" "select count(*) from decisions")" = 0 ]

## ---- the daemon keeps none of its starter's descriptors ----------------------------
# A command substitution waits for EOF on its pipe: a daemon that inherited the
# pipe's write end (fd 3 here) would hold it until it exits. Guarded at 8 s.
"$BOXY" daemon stop >/dev/null 2>&1
wait_until 5 test ! -S "$SOCK"
( sleep 8; "$BOXY" daemon stop >/dev/null 2>&1 ) &
GUARD=$!
t0=$(date +%s%N)
x=$("$BOXY" run --net none -- true 3>&1 >/dev/null 2>&1)
ms=$((($(date +%s%N) - t0) / 1000000))
kill "$GUARD" 2>/dev/null
wait "$GUARD" 2>/dev/null
check "a daemon started by boxy run keeps none of its caller's descriptors (${ms} ms)" \
	'[ "$ms" -lt 5000 ] && [ -z "$x" ] && [ -n "$(daemon_pid)" ] &&
	! ls -l "/proc/$(daemon_pid)/fd" | grep -q pipe:'

B daemon stop
check "daemon stop stops an idle daemon and removes its socket" \
	'[ "$RC" = 0 ] && wait_until 5 test ! -S "$SOCK"'

done_testing
