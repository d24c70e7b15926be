#!/bin/bash
# tests/e2e/react.sh — what an alert does to a session (doc/react.md), end to
# end in the hermetic test network: a DNS tunnel under --on-alert freeze is
# frozen before its next query reaches the test resolver, ps, show and top say
# so and why, boxy resume lets it finish and boxy stop ends it; --on-denials 3
# freezes at the third refusal; --on-alert stop kills; --on-alert log changes
# nothing but the record. And as a hostile payload would try it: a fork storm,
# a vfork storm, signal handlers and a thread that unblocks SIGCONT, a process
# stopped already — every thread seen stopped in /proc; the bytes a stream had
# in flight stop at the freeze; a session next to a frozen one runs on; a
# flood of alerts freezes once, and only boxy resume ever resumes.
#
# No cgroup is delegated to the test user here, so the freezes are the SIGSTOP
# sweep's (boxy doctor must say so); tests/e2e/react-cgroup.sh runs the same
# cases in a cgroup v2 subtree it delegates to the test user: the freezer's.
set -u
here=$(cd "$(dirname "$0")/.." && pwd)
. "$here/lib/harness.sh"
. "$here/lib/testnet.sh"
. "$here/lib/react.sh"
harness_locate
# Another local user (boxytest2) must not resume the test user's frozen session:
# started as root, run tests/lib/other-uid-agent.py as that user and hand its
# socket to the test user's run, as tests/e2e/daemon-lifecycle.sh does.
if [ "$(id -u)" = 0 ] && [ -z "${BOXY_HARNESS_CHILD:-}" ]; then
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

if tn_boxy doctor --json | grep -q '"check":"freeze","status":"ok","detail":"SIGSTOP to every process of the sandbox'; then
	ok "SIGSTOP: boxy doctor says an alert would freeze with SIGSTOP (no cgroup delegated)"
else
	not_ok "SIGSTOP: boxy doctor says an alert would freeze with SIGSTOP (no cgroup delegated)"
	diag "$(tn_boxy doctor 2>&1 | grep -A3 freeze)" "own cgroup: $(cat /proc/self/cgroup)"
fi

react_cases SIGSTOP

done_testing
