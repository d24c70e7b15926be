#!/bin/bash
# tests/e2e/git-loop.sh — the git checks around a run stay off the daemon's event loop
# (issue 8, item 15), as TAP, as the unprivileged test user against a private daemon.
#
# Session A runs in a work directory with 80,000 directories and a `.git/modules -> /`
# link (the walk before the run and the one after it, and a link that once led the
# walk through the whole host). While A starts, runs and is checked, `boxy daemon
# status` (answered by the daemon's loop) is asked again and again: the slowest answer
# must stay within a bound that the old code (the walks on the loop, the link
# followed: stalls of 0.3–1 s) exceeds. The after-run check must still complete: a
# repository A planted deep in the tree is quarantined and `boxy show` lists the alert.

. "$(dirname "$0")/../lib/harness.sh"
harness_as_test_user "$0" "$@"
harness_locate
[ -x "$BOXY" ] || harness_die "no boxy at $BOXY"

SUITE=$(mktemp -d "${TMPDIR:-/tmp}/boxy-gitloop.XXXXXX") || exit 99
chmod 0700 "$SUITE"
HARNESS_DIRS+=("$SUITE")
export XDG_RUNTIME_DIR=$SUITE/run XDG_STATE_HOME=$SUITE/state
mkdir -m 0700 "$XDG_RUNTIME_DIR" "$XDG_STATE_HOME"
cleanup() {
	"$BOXY" daemon stop >/dev/null 2>&1
	chmod -R u+rwx "$SUITE" 2>/dev/null
	harness_cleanup
}
trap cleanup EXIT

# The slowest answer allowed. The old code stalls for the walks (0.3 s each on this tree)
# and for the link (0.8 s): 1.4 s in all. What is left on the loop is the walk before the
# run (at most 100 ms): boxy-init's stages, its hard-link walk included, no longer hold the
# loop (issue 12, daemon/launch.c). Measured on a loaded machine (load 12-17): the slowest
# answer during A 167-216 ms against 184-187 ms quiet, 265 ms (253 quiet) in a sanitizer
# build; with the wait for boxy-init back in the loop, 375 ms (186 quiet). So the bound is
# back at 500 ms (it was 800 while the start ran on the loop); a quiet machine answers
# within ~20 ms between.
BOUND_MS=${BOXY_GITLOOP_BOUND_MS:-500}

W=$SUITE/work
mkdir -p "$W" && cd "$W" || exit 99
g=(git -c user.name=boxy-test -c user.email=boxy-test@example.invalid -c init.defaultBranch=main)
"${g[@]}" init -q && echo x >x && "${g[@]}" add x && "${g[@]}" commit -qm x || harness_die "git init"
ln -s / .git/modules
python3 -c '
import os
for i in range(80000):
    os.makedirs("tree/%d/%d" % (i // 400, i))
' || harness_die "making the tree"

# probe OUT: `boxy daemon status` in a loop until $SUITE/stop exists, one latency (ms) a line.
probe() {
	while [ ! -e "$SUITE/stop" ]; do
		t0=$(date +%s%N)
		"$BOXY" daemon status >/dev/null 2>&1
		echo $((($(date +%s%N) - t0) / 1000000))
	done >"$1"
}
max_of() { sort -n "$1" | tail -1; }

plan 5

# The daemon up, and how fast it answers when nothing else happens.
"$BOXY" run --net none -- true >/dev/null 2>&1
rm -f "$SUITE/stop"
probe "$SUITE/quiet" &
P=$!
sleep 2
: >"$SUITE/stop"
wait $P
QUIET=$(max_of "$SUITE/quiet")
diag "quiet: $(wc -l <"$SUITE/quiet") answers, the slowest in ${QUIET} ms"
# A machine so loaded that a quiet daemon is slow gets the same margin over it.
[ "$BOUND_MS" -ge $((QUIET * 3)) ] || BOUND_MS=$((QUIET * 3))

# Session A, with the daemon asked all along.
rm -f "$SUITE/stop"
probe "$SUITE/busy" &
P=$!
sleep 0.3
t0=$(date +%s%N)
"$BOXY" run --net none -- sh -c 'mkdir -p tree/7/1400/p && cd tree/7/1400/p && git init -q .' \
	>"$SUITE/a.out" 2>"$SUITE/a.err"
RC=$?
A_MS=$((($(date +%s%N) - t0) / 1000000))
sleep 0.3
: >"$SUITE/stop"
wait $P
BUSY=$(max_of "$SUITE/busy")
diag "session A took ${A_MS} ms; meanwhile $(wc -l <"$SUITE/busy") answers, the slowest in ${BUSY} ms"

if [ "$RC" -eq 0 ]; then ok "session A ran (exit 0)"; else not_ok "session A ran (exit $RC)"; diag_file "$SUITE/a.err" 5; fi
if [ "$(wc -l <"$SUITE/busy")" -ge 5 ]; then
	ok "the daemon was asked throughout session A"
else
	not_ok "the daemon was asked throughout session A (only $(wc -l <"$SUITE/busy") answers)"
fi
if [ "$BUSY" -le "$BOUND_MS" ]; then
	ok "the daemon's loop answered within ${BOUND_MS} ms while A's git walks ran (slowest ${BUSY} ms)"
else
	not_ok "the daemon's loop answered within ${BOUND_MS} ms while A's git walks ran (slowest ${BUSY} ms, quiet ${QUIET} ms)"
	sort -n "$SUITE/busy" | tail -3 | diag "$(cat)"
fi
# The after-run check finished before the session's end was told: its findings are in.
if [ ! -e tree/7/1400/p/.git ] && ls -d tree/7/1400/p/.git.boxy-quarantine-* >/dev/null 2>&1; then
	ok "the repository A planted 3 levels into the tree is quarantined before boxy run returns"
else
	not_ok "the repository A planted 3 levels into the tree is quarantined before boxy run returns"
	ls -a tree/7/1400/p | diag "$(cat)"
	diag_file "$SUITE/a.err" 5
fi
ID=$(sqlite3 "$XDG_STATE_HOME/boxy/sessions.db" "select id from sessions order by started_ms desc limit 1")
"$BOXY" show "$ID" >"$SUITE/show" 2>&1
if grep -q "ALERT git .*tree/7/1400/p/.git" "$SUITE/show" && grep -q "tree/7/1400/p/.git" "$SUITE/a.err"; then
	ok "the alert is printed at the end of the run and listed by boxy show"
else
	not_ok "the alert is printed at the end of the run and listed by boxy show"
	diag_file "$SUITE/a.err" 5
	diag_file "$SUITE/show" 30
fi
done_testing
