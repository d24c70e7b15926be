#!/bin/sh
# run-tests.sh [--sanitizers] — the whole test suite, from nothing: installs
# the Debian packages it needs (as root), builds, runs `make check`, and ends
# with one line "N passed, N failed". Run it as root to get the unprivileged
# sandbox tests run as the dedicated test user (tests/lib/harness.sh).
set -eu
top=$(cd "$(dirname "$0")" && pwd)
sh "$top/tools/deps.sh" --test
dir=$(sh "$top/tools/build.sh" "$@")
cd "$dir"
status=0
make -s -j"$(nproc)" check || status=$?

# Counts come from automake's summary of the TAP results (each case counts).
count() { sed -n "s/^# $1: *//p" test-suite.log 2>/dev/null | head -n 1; }
pass=$(count PASS); fail=$(count FAIL); error=$(count ERROR); xpass=$(count XPASS); skip=$(count SKIP)
failed=$(( ${fail:-0} + ${error:-0} + ${xpass:-0} ))
if [ "$status" -ne 0 ] && [ "$failed" -eq 0 ]; then
	failed=1    # make itself failed (a build error): never report a clean run
fi
echo "${pass:-0} passed, $failed failed, ${skip:-0} skipped"
[ "$status" -eq 0 ] && [ "$failed" -eq 0 ]
