# tests/e2e/daemon-lib.sh — shared by the tests/e2e/daemon-*.sh suites (sourced
# after tests/lib/harness.sh, as the test user): a private suite directory with
# its own runtime and state directories, a work directory, and a cleanup that
# stops every daemon the suite started, by the pid its store's record names.

harness_locate
[ -x "$BOXY" ] || { echo "1..0 # SKIP no boxy binary at $BOXY"; exit 0; }

SUITE=$(mktemp -d "${TMPDIR:-/tmp}/boxy-e2e-daemon.XXXXXX") || exit 99
chmod 0700 "$SUITE"
HARNESS_DIRS+=("$SUITE")
export XDG_RUNTIME_DIR=$SUITE/run XDG_STATE_HOME=$SUITE/state
export BOXY_DAEMON_STOP_GRACE=1
mkdir -m 0700 "$XDG_RUNTIME_DIR" "$XDG_STATE_HOME" "$SUITE/work"
STATE=$XDG_STATE_HOME/boxy
DB=$STATE/sessions.db
LOG=$STATE/daemon.log
OUT=$SUITE/out
ERR=$SUITE/err
cd "$SUITE/work" || exit 99

# recorded_pid [STATE]: the pid in a store's daemon record (nothing when none).
recorded_pid() { sed -n 's/^pid \([0-9]*\)$/\1/p' "${1:-$STATE}/daemon.lock" 2>/dev/null; }

# e2e_kill_daemons: every daemon this suite's stores name, and the ones in DAEMON_PIDS.
DAEMON_PIDS=()
e2e_kill_daemons() {
	local p d
	for d in "$SUITE"/*/boxy; do
		p=$(recorded_pid "$d")
		[ -z "$p" ] || DAEMON_PIDS+=("$p")
	done
	# ...and any daemon started with this suite's state directory (an old build's
	# daemons keep no record).
	for p in $(pgrep -u "$(id -u)" -f 'daemon serve'); do
		tr '\0' '\n' </proc/"$p"/environ 2>/dev/null |
			grep -qx "XDG_STATE_HOME=$SUITE/state" && DAEMON_PIDS+=("$p")
	done
	for p in "${DAEMON_PIDS[@]}"; do
		# Only a boxy daemon of ours: a recorded pid may have been reused.
		if [ "$(stat -c %u /proc/"$p" 2>/dev/null)" = "$(id -u)" ] &&
			grep -q 'daemon' /proc/"$p"/cmdline 2>/dev/null; then
			kill -KILL "$p" 2>/dev/null
		fi
	done
}
e2e_cleanup() { e2e_kill_daemons; harness_cleanup; }
trap e2e_cleanup EXIT

# B ARGS...: boxy with stdin /dev/null; stdout, stderr, status in $OUT $ERR $RC.
B() { "$BOXY" "$@" </dev/null >"$OUT" 2>"$ERR"; RC=$?; }

# check DESC 'EXPR': ok when EXPR (a shell expression) is true, else not_ok with context.
check() {
	local desc=$1
	if eval "$2"; then
		ok "$desc"
	else
		not_ok "$desc"
		diag "rc=${RC:-} failed: $2"
		diag_file "$OUT" 5
		diag_file "$ERR" 5
	fi
}

# rows: the number of session rows in the suite's store (-1 when unreadable).
rows() { sqlite3 "${1:-$DB}" 'SELECT count(*) FROM sessions' 2>/dev/null || echo -1; }

# session_state ID-PREFIX: its state in the store.
session_state() {
	sqlite3 "$DB" "SELECT state FROM sessions WHERE id LIKE '$1%'" 2>/dev/null
}
