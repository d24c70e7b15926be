#!/bin/bash
# tests/e2e/seccomp-kill.sh — a seccomp kill is explained in one line where
# the user is looking (issue 10, item 6): the end of the run, the audit log
# and `boxy show` say the payload was killed by the seccomp filter and name
# the way to find the call (`--seccomp compat`, under which it fails with
# EPERM), and compat does what that line promises.
#
# As the unprivileged test user, against a private daemon and store.
. "$(dirname "$0")/../lib/harness.sh"
harness_as_test_user "$0" "$@"
harness_locate
[ -x "$BOXY" ] || harness_die "no boxy binary at $BOXY"

SUITE=$(mktemp -d "${TMPDIR:-/tmp}/boxy-seccomp-kill.XXXXXX") || exit 99
chmod 0700 "$SUITE"
HARNESS_DIRS+=("$SUITE")
export XDG_RUNTIME_DIR=$SUITE/run XDG_STATE_HOME=$SUITE/state HOME=$SUITE/home
mkdir -m 0700 "$XDG_RUNTIME_DIR" "$XDG_STATE_HOME" "$HOME" "$HOME/work"
cd "$HOME/work" || exit 99
sk_cleanup() {
	"$BOXY" daemon stop >/dev/null 2>&1
	harness_cleanup
}
trap sk_cleanup EXIT

# unshare(CLONE_NEWUSER): a namespace, killed in strict mode.
"$BOXY" run --net none --audit-log "$SUITE/audit" -- unshare -U true \
	</dev/null >"$SUITE/out" 2>"$SUITE/err"
rc=$?
line='payload +1 +seccomp +the payload was killed by the seccomp filter \(SIGSYS\): a system call outside the allowlist.* +fix: --seccomp compat$'
if [ "$rc" -eq 159 ] && [ "$(grep -c 'killed by the seccomp filter' "$SUITE/err")" -eq 1 ] &&
	grep -Eq "^  $line" "$SUITE/err"; then
	ok "a seccomp kill ends the run with one line naming --seccomp compat as the way to find the call"
else
	not_ok "a seccomp kill ends the run with one line naming --seccomp compat as the way to find the call"
	diag "exit $rc (want 159)"
	diag_file "$SUITE/err" 8
fi
if grep -F '"layer":"seccomp","verdict":"deny","subject":"payload"' "$SUITE/audit" | grep -qF -- '--seccomp compat'; then
	ok "the audit log has the same words"
else
	not_ok "the audit log has the same words"
	diag_file "$SUITE/audit" 8
fi
id=$("$BOXY" ps -a | awk 'NR == 2 { print $1 }')
"$BOXY" show "$id" >"$SUITE/show" 2>&1
if grep -Eq "^  $line" "$SUITE/show" && grep -Eq '^session +[0-9a-f]{16} +exited 159 ' "$SUITE/show"; then
	ok "boxy show of that session says the same, with the fix"
else
	not_ok "boxy show of that session says the same, with the fix"
	diag_file "$SUITE/show" 20
fi

# --seccomp compat: the same call fails with EPERM and the payload says so itself.
"$BOXY" run --net none --seccomp compat -- unshare -U true </dev/null >"$SUITE/out" 2>"$SUITE/err"
rc=$?
if [ "$rc" -ne 159 ] && grep -qi 'operation not permitted' "$SUITE/err" &&
	! grep -q 'killed by the seccomp filter' "$SUITE/err"; then
	ok "under --seccomp compat the call fails with EPERM and the payload's error names it"
else
	not_ok "under --seccomp compat the call fails with EPERM and the payload's error names it"
	diag "exit $rc"
	diag_file "$SUITE/err" 5
fi
done_testing
