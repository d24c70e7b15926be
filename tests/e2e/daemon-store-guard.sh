#!/bin/bash
# daemon-store-guard.sh — the daemon refuses writable mounts over its own
# store, log and socket directories, as it knows them (issue 8, item 9).
#
# The store protection used to check the client's idea of the store path: a
# daemon started with XDG_STATE_HOME=/x accepted a later client's --rw /x
# (that client said XDG_STATE_HOME=/elsewhere), and the payload deleted every
# session row. Such a client is now refused before it reaches the daemon
# (issue 10, item 7: tests/e2e/daemon-two-stores.sh), so the cases here use
# the daemon's own state directory: in daemon mode the client registers no
# directories (only --no-daemon does), so the daemon's guard is what refuses.
# Each writable mount (the
# work directory, --rw, a profile's rw and mkdir entries) that is, contains
# or lies inside the daemon's directories must be refused (exit 125) with
# the store intact, and mounts beside them must still work.

. "$(dirname "$0")/../lib/harness.sh"
harness_as_test_user "$0" "$@"
. "$(dirname "$0")/daemon-lib.sh"
command -v sqlite3 >/dev/null || { echo "1..0 # SKIP sqlite3 is not installed"; exit 0; }

B run --net none -- true
B run --net none -- true
BEFORE=$(rows)
check "the daemon's store has rows to lose" '[ "$BEFORE" -ge 2 ]'
mkdir -m 0700 "$SUITE/other" "$SUITE/beside" "$SUITE/state-x"
mkdir -p "$STATE/sub"
ln -s "$STATE" "$SUITE/work/link-to-store"

# The payload every refused run would have run: delete the store.
WIPE="rm -f '$DB' '$DB-wal' '$DB-shm' '$DB-journal'; echo wiped"

# refused DESC FLAGS...: a client of the daemon's store; the run must
# be refused before the payload starts, saying why, and the rows must all be there.
refused() {
	local desc=$1
	shift
	B run --net none "$@" -- /bin/sh -c "$WIPE"
	check "$desc: refused" '[ "$RC" = 125 ] && ! grep -q wiped "$OUT" &&
		grep -q "boxy daemon keeps its session store" "$ERR"'
	check "$desc: every session row is still there" '[ "$(rows)" -ge "$BEFORE" ]'
}

refused "--rw of the daemon's state directory's parent" --rw "$XDG_STATE_HOME"
refused "--rw of the daemon's state directory" --rw "$STATE"
refused "--rw of a directory inside it" --rw "$STATE/sub"
refused "--rw of the store file itself" --rw "$DB"
refused "--rw of an ancestor of every daemon directory" --rw "$SUITE"
refused "--rw of a symlink to the state directory" --rw "$SUITE/work/link-to-store"
refused "-w inside the state directory" -w "$STATE/sub"
refused "--rw of the daemon's runtime directory" --rw "$XDG_RUNTIME_DIR"

cat >"$SUITE/rw.yaml" <<YAML
extends: generic
filesystem:
  rw:
    - $STATE
YAML
refused "a profile's rw entry" --profile "$SUITE/rw.yaml"
cat >"$SUITE/mkdir.yaml" <<YAML
extends: generic
filesystem:
  mkdir:
    - $STATE/new/dir
YAML
refused "a profile's mkdir entry (missing yet)" --profile "$SUITE/mkdir.yaml"
check "...which did not create it either" '[ ! -e "$STATE/new" ]'

B run --net none --rw "$SUITE/beside" --rw "$SUITE/state-x" -- \
	/bin/sh -c "touch '$SUITE/beside/ok' '$SUITE/state-x/ok' && echo fine"
check "directories beside the daemon's (and state-x, a name sharing the prefix) still work" \
	'[ "$RC" = 0 ] && grep -q fine "$OUT" && [ -e "$SUITE/beside/ok" ]'
check "the store ends with every row" '[ "$(rows)" -ge "$BEFORE" ]'
done_testing
