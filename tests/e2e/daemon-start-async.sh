#!/bin/bash
# tests/e2e/daemon-start-async.sh — the daemon serves everyone else while a sandbox is
# being built (issue 12: assembly off the loop), as TAP, as the unprivileged test user
# against a private daemon.
#
# Session A is held in assembly: BOXY_HOLD_START_MS in its environment makes boxy-init
# wait 3 s before its stages, so before its report (the test suite's knob, sandbox/seccomp-plan.c),
# which stands for a slow start (a large tree's hard-link walk, many mounts). While A
# is held, `boxy daemon status` must be answered, `boxy ps` must list A (the daemon
# wrote its row), and a whole other run B must start and finish — long before A's
# payload starts. A daemon that waits for boxy-init's report in its loop answers none
# of them until A's hold is over. A start that fails while held, and one killed while
# held, must still end as failed starts with their reasons; a client that leaves during
# the hold must not take the daemon with it.

. "$(dirname "$0")/../lib/harness.sh"
harness_as_test_user "$0" "$@"
harness_locate
[ -x "$BOXY" ] || harness_die "no boxy at $BOXY"

SUITE=$(mktemp -d "${TMPDIR:-/tmp}/boxy-startasync.XXXXXX") || exit 99
chmod 0700 "$SUITE"
HARNESS_DIRS+=("$SUITE")
export XDG_RUNTIME_DIR=$SUITE/run XDG_STATE_HOME=$SUITE/state
mkdir -m 0700 "$XDG_RUNTIME_DIR" "$XDG_STATE_HOME"
cleanup() {
	"$BOXY" daemon stop >/dev/null 2>&1
	harness_cleanup
}
trap cleanup EXIT
W=$SUITE/work
mkdir -p "$W" && cd "$W" || exit 99

HOLD_MS=3000
# Answers must come well inside the hold: a loop blocked on A answers after it.
BOUND_MS=${BOXY_STARTASYNC_BOUND_MS:-1000}
ms() { echo $((($(date +%s%N) - $1) / 1000000)); }

plan 10

"$BOXY" run --net none -- true >/dev/null 2>&1 || harness_die "the daemon does not start"

# A, held; its payload notes when it starts.
T_A=$(date +%s%N)
BOXY_HOLD_START_MS=$HOLD_MS "$BOXY" run --net none -- sh -c 'date +%s%N >a.started; echo held-run' \
	>"$SUITE/a.out" 2>"$SUITE/a.err" &
A=$!
sleep 0.5

t=$(date +%s%N)
"$BOXY" daemon status >"$SUITE/status" 2>&1
RC=$?
STATUS_MS=$(ms "$t")
if [ "$RC" -eq 0 ] && [ "$STATUS_MS" -le "$BOUND_MS" ]; then
	ok "boxy daemon status answered in ${STATUS_MS} ms while A was held in assembly"
else
	not_ok "boxy daemon status answered in ${STATUS_MS} ms (rc $RC) while A was held (bound ${BOUND_MS} ms)"
fi

t=$(date +%s%N)
"$BOXY" run --net none -- sh -c 'echo b-ran' >"$SUITE/b.out" 2>"$SUITE/b.err"
RC=$?
B_MS=$(ms "$t")
if [ "$RC" -eq 0 ] && grep -qx b-ran "$SUITE/b.out" && [ "$B_MS" -le "$BOUND_MS" ]; then
	ok "run B started and finished in ${B_MS} ms while A was held"
else
	not_ok "run B started and finished in ${B_MS} ms (rc $RC) while A was held (bound ${BOUND_MS} ms)"
	diag_file "$SUITE/b.err" 5
fi

"$BOXY" ps >"$SUITE/ps" 2>&1
if grep -q "running .*sh -c date" "$SUITE/ps" && [ ! -e a.started ]; then
	ok "boxy ps lists A as running before A's payload started"
else
	not_ok "boxy ps lists A as running before A's payload started"
	diag_file "$SUITE/ps" 5
fi

if [ ! -e a.started ] && kill -0 "$A" 2>/dev/null; then
	ok "A was still being assembled when B had finished"
else
	not_ok "A was still being assembled when B had finished"
fi

wait "$A"
RC=$?
A_MS=$(ms "$T_A")
if [ "$RC" -eq 0 ] && grep -qx held-run "$SUITE/a.out" && [ "$A_MS" -ge "$HOLD_MS" ]; then
	ok "A ran after its hold (exit 0, ${A_MS} ms)"
else
	not_ok "A ran after its hold (exit $RC, ${A_MS} ms, hold ${HOLD_MS} ms)"
	diag_file "$SUITE/a.err" 5
fi

# A start whose stage fails after the hold (its work directory went away meanwhile):
# the stage's reason reaches the client, exit 125.
mkdir "$W/gone"
(cd "$W/gone" && BOXY_HOLD_START_MS=1000 exec "$BOXY" run --net none -- true) \
	>"$SUITE/c.out" 2>"$SUITE/c.err" &
C=$!
sleep 0.3
rmdir "$W/gone"
t=$(date +%s%N)
"$BOXY" daemon status >/dev/null 2>&1
STATUS_MS=$(ms "$t")
wait "$C"
RC=$?
if [ "$RC" -eq 125 ] && grep -q "stage mount: work directory .*gone: No such file" "$SUITE/c.err"; then
	ok "a held start whose stage fails ends with the stage's reason (exit 125)"
else
	not_ok "a held start whose stage fails ends with the stage's reason (exit $RC)"
	diag_file "$SUITE/c.err" 5
fi
if [ "$STATUS_MS" -le "$BOUND_MS" ]; then
	ok "the daemon answered in ${STATUS_MS} ms while that start was held"
else
	not_ok "the daemon answered in ${STATUS_MS} ms while that start was held (bound ${BOUND_MS} ms)"
fi

# A held start stopped with boxy stop -k: boxy-init dies before reporting.
BOXY_HOLD_START_MS=$HOLD_MS "$BOXY" run --net none -- sh -c 'echo never' >"$SUITE/d.out" 2>"$SUITE/d.err" &
D=$!
sleep 0.5
ID=$("$BOXY" ps 2>/dev/null | awk '/echo never/ { print $1 }')
"$BOXY" stop -k "$ID" >"$SUITE/stop" 2>&1
wait "$D"
RC=$?
if [ -n "$ID" ] && [ "$RC" -ne 0 ] && ! grep -q never "$SUITE/d.out" &&
	grep -q "boxy-init was killed by signal 9 before reporting" "$SUITE/d.err"; then
	ok "a held start killed by boxy stop -k fails with its reason (exit $RC)"
else
	not_ok "a held start killed by boxy stop -k fails with its reason (id '$ID', exit $RC)"
	diag_file "$SUITE/stop" 3
	diag_file "$SUITE/d.err" 5
fi

# A client that leaves while its start is held: the session still runs to its end and
# the daemon, which held the client for the start's answer, forgets it safely.
BOXY_HOLD_START_MS=1500 "$BOXY" run --net none -- sh -c 'echo orphan >e.ran' >/dev/null 2>&1 &
E=$!
sleep 0.4
kill -9 "$E" 2>/dev/null
wait "$E" 2>/dev/null
for _ in $(seq 1 50); do [ -e e.ran ] && break; sleep 0.1; done
if [ -e e.ran ] && "$BOXY" daemon status >/dev/null 2>&1; then
	ok "a run whose client left during its held start still ran, and the daemon answers"
else
	not_ok "a run whose client left during its held start still ran, and the daemon answers"
fi

# The daemon is still well after all this.
if "$BOXY" run --net none -- true >/dev/null 2>&1; then
	ok "the daemon still runs sandboxes afterwards"
else
	not_ok "the daemon still runs sandboxes afterwards"
fi
done_testing
