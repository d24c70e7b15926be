#!/bin/bash
# daemon-runtime-fallback.sh — without XDG_RUNTIME_DIR, the daemon's socket
# lives in a directory of the user's own (issue 8, item 11).
#
# The fallback used to be /tmp/boxy-UID: another local user could create it
# first, and the user could not run boxy at all (exit 125), or worse. Now it
# is the state directory's run/ (~/.local/state/boxy/run), 0700. Started as
# root, this suite makes root the other user: it creates /tmp/boxy-UID for
# the test user (root-owned, 0755) before dropping to the test user; started
# as the test user, it creates it itself with mode 0755, which the old code
# refused just the same.

. "$(dirname "$0")/../lib/harness.sh"
if [ "$(id -u)" = 0 ] && [ -z "${BOXY_HARNESS_CHILD:-}" ]; then
	TUID=$(id -u "$HARNESS_TEST_USER" 2>/dev/null || true)
	PRE=
	if [ -n "$TUID" ] && [ ! -e "/tmp/boxy-$TUID" ]; then
		PRE=/tmp/boxy-$TUID
		mkdir -m 0755 "$PRE"
	fi
	trap '[ -z "$PRE" ] || rm -rf "$PRE"; harness_cleanup' EXIT
fi
harness_as_test_user "$0" "$@"
. "$(dirname "$0")/daemon-lib.sh"
unset XDG_RUNTIME_DIR
PRE=/tmp/boxy-$(id -u)
MINE=
if [ ! -e "$PRE" ]; then
	mkdir -m 0755 "$PRE" && MINE=1
fi
trap '[ -z "$MINE" ] || rm -rf "$PRE"; e2e_cleanup' EXIT
check "/tmp/boxy-UID exists and is not the user's private directory" \
	'[ -d "$PRE" ] && [ "$(stat -c %a "$PRE")" != 700 ]'

B run --net none -- echo hello-without-runtime-dir
DAEMON_PIDS+=("$(recorded_pid)")
check "boxy run works without XDG_RUNTIME_DIR" '[ "$RC" = 0 ] && grep -q hello-without-runtime-dir "$OUT"'
check "the socket is in the state directory's run/, mode 0700" \
	'[ -S "$STATE/run/daemon.sock" ] && [ "$(stat -c %a "$STATE/run")" = 700 ] &&
	[ "$(stat -c %u "$STATE/run")" = "$(id -u)" ]'
check "nothing of boxy's is in /tmp/boxy-UID" '[ -z "$(ls -A "$PRE" 2>/dev/null)" ]'
B daemon status
check "daemon status finds it there" '[ "$RC" = 0 ] && grep -q running "$OUT"'

# A run/ that is not private (the user's own mistake, or a state directory shared
# with others) is refused, not used.
B daemon stop
for _ in $(seq 50); do [ -n "$(recorded_pid)" ] && kill -0 "$(recorded_pid)" 2>/dev/null || break; sleep 0.1; done
chmod 0755 "$STATE/run"
B run --net none -- true
check "a run/ readable by others is refused in one line" \
	'[ "$RC" = 125 ] && grep -q "must be 0700" "$ERR"'
chmod 0700 "$STATE/run"
done_testing
