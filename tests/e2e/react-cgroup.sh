#!/bin/bash
# tests/e2e/react-cgroup.sh — tests/e2e/react.sh's cases with the kernel's
# freezer: started as root, the suite makes a cgroup v2 subtree of its own and
# delegates it to the test user (as systemd's Delegate=yes would), so the test
# user's daemon gives each run a cgroup below it and an alert freezes it with
# cgroup.freeze (doc/react.md). boxy doctor must say so first.
set -u
here=$(cd "$(dirname "$0")/.." && pwd)
. "$here/lib/harness.sh"
. "$here/lib/testnet.sh"
. "$here/lib/react.sh"
harness_locate
if [ "$(id -u)" = 0 ] && [ -z "${BOXY_HARNESS_CHILD:-}" ]; then
	react_cgroup_delegate
	react_other_agent_start
	set -- --other-uid-agent="$REACT_AGENT_DIR/agent.sock" "$@"
fi
[ "${BOXY_TESTNET_INSIDE:-}" = 1 ] || harness_as_test_user "$0" "$@"
OTHER_UID_AGENT=
for a in "$@"; do
	case $a in --other-uid-agent=*) OTHER_UID_AGENT=${a#*=} ;; esac
done
testnet_enter "$0" "$@"
testnet_setup
tn_probe
react_setup

if tn_boxy doctor --json | grep -q '"check":"freeze","status":"ok","detail":"cgroup freezer, in a cgroup of its own under /'; then
	ok "cgroup: boxy doctor says an alert would freeze with the cgroup freezer"
else
	not_ok "cgroup: boxy doctor says an alert would freeze with the cgroup freezer"
	diag "$(tn_boxy doctor 2>&1 | grep -A3 freeze)" "own cgroup: $(cat /proc/self/cgroup)"
	diag "the suite needs to be started as root, which delegates it a cgroup v2 subtree"
fi

react_cases cgroup

done_testing
