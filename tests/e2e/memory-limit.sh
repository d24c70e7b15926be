#!/bin/bash
# memory-limit.sh — how --memory is enforced, from the user's side, as TAP, run as
# the unprivileged test user against a private daemon: `boxy doctor` says which
# mode applies (the kernel's cgroup or boxy's watchdog with its sample rate); where
# it is the watchdog, a run past the limit exits 137 with the reason at its end,
# and `boxy show` says why afterwards. The balloons themselves are escape cases
# (tests/escape/cases-memory.sh).

. "$(dirname "$0")/../lib/harness.sh"
harness_as_test_user "$0" "$@"
harness_locate

SUITE=$(mktemp -d "${TMPDIR:-/tmp}/boxy-memory.XXXXXX") || exit 99
chmod 0700 "$SUITE"
HARNESS_DIRS+=("$SUITE")
export XDG_RUNTIME_DIR=$SUITE/run XDG_STATE_HOME=$SUITE/state HOME=$SUITE/home
mkdir -m 0700 "$XDG_RUNTIME_DIR" "$XDG_STATE_HOME" "$HOME"
mkdir -p "$HOME/proj"
cd "$HOME/proj" || exit 99
trap '"$BOXY" daemon stop >/dev/null 2>&1; harness_cleanup' EXIT

delegated=no
own=$(sed -n 's/^0:://p' /proc/self/cgroup)
for m in /sys/fs/cgroup /sys/fs/cgroup/unified; do
	[ -w "$m$own/cgroup.subtree_control" ] && grep -qw memory "$m$own/cgroup.controllers" 2>/dev/null &&
		delegated=yes
done

"$BOXY" doctor >"$SUITE/doctor" 2>&1
line=$(grep -E '^ . memory ' "$SUITE/doctor")
if [ $delegated = yes ] && echo "$line" | grep -q 'kernel cgroup'; then
	ok "doctor: --memory is enforced by the kernel's cgroup here"
elif [ $delegated = no ] && echo "$line" | grep -q "watchdog: --memory is sampled every 100 ms"; then
	ok "doctor: --memory is enforced by boxy's watchdog here, with its sample rate"
else
	not_ok "doctor's memory line (memory controller delegated: $delegated)"
	diag_file "$SUITE/doctor" 20
fi

# A balloon of 512 MiB under 256 MiB: python's bytes are touched as they are made.
timeout -s KILL 60 "$BOXY" run --net none --memory 256MiB --audit-log "$SUITE/audit.jsonl" -- \
	python3 -c 'import time; b = b"x" * (512 << 20); time.sleep(3); print("held")' \
	>"$SUITE/out" 2>"$SUITE/err"
rc=$?
if [ $rc -eq 137 ] && ! grep -q held "$SUITE/out" && grep -q 'memory limit exceeded' "$SUITE/err"; then
	ok "a run past --memory exits 137 and says why at its end"
else
	not_ok "a run past --memory: exit $rc (want 137), output: $(head -c 200 "$SUITE/out")"
	diag_file "$SUITE/err" 5
fi

# How it was enforced, in the audit log; with no user manager in this suite's
# XDG_RUNTIME_DIR, the systemd scope was considered and said not to be there.
mem=$(grep '"layer":"cgroup"' "$SUITE/audit.jsonl" | grep '"subject":"memory"')
if [ $delegated = yes ] && echo "$mem" | grep -q '"verdict":"allow"'; then
	ok "audit: --memory enforced by a cgroup"
elif [ $delegated = no ] && echo "$mem" | grep -q "enforced by boxy's watchdog" &&
	echo "$mem" | grep -q 'no systemd user manager'; then
	ok "audit: --memory enforced by the watchdog, the systemd scope tried and said absent"
else
	not_ok "audit: how --memory was enforced"
	diag_file "$SUITE/audit.jsonl" 10
fi

id=$("$BOXY" ps -a 2>/dev/null | awk 'NR == 2 { print $1 }')
"$BOXY" show "$id" >"$SUITE/show" 2>&1
if grep -q '^session .* exited 137 after' "$SUITE/show" &&
	grep -q 'memory: deny, memory limit exceeded (watchdog' "$SUITE/show"; then
	ok "boxy show: exit 137 and the memory limit's deny line"
else
	not_ok "boxy show of the killed run"
	diag_file "$SUITE/show" 30
fi
done_testing
