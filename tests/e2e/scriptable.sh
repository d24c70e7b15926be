#!/bin/bash
# scriptable.sh — every command a script can read (issue 16, "Scriptable
# everywhere"): --version names the build id the daemon compares, profile list
# and daemon status answer in JSON (the latter also when no daemon runs), and
# prune --dry-run names what a prune deletes without deleting it.

. "$(dirname "$0")/../lib/harness.sh"
harness_as_test_user "$0" "$@"
. "$(dirname "$0")/daemon-lib.sh"
command -v python3 >/dev/null || { echo "1..0 # SKIP python3 is not installed"; exit 0; }

# jq_py EXPR: evaluate a Python expression over the JSON in $OUT (bound as j).
jq_py() { python3 -c "import json,sys; j=json.load(open(sys.argv[1])); print($1)" "$OUT" 2>/dev/null; }

plan 9

B daemon status --json
check "daemon status --json without a daemon: JSON running false, exit 1" \
	'[ "$RC" = 1 ] && [ "$(jq_py "j[\"running\"]")" = False ]'

B run --net none -- true
check "a session runs (and starts the daemon)" '[ "$RC" = 0 ]'

B daemon status --json
DBUILD=$(jq_py 'j["build"]')
check "daemon status --json with a daemon: running true" \
	'[ "$RC" = 0 ] && [ "$(jq_py "j[\"running\"]")" = True ]'
B --version
check "--version prints the build id the daemon compares" \
	'[ -n "$DBUILD" ] && grep -qx "boxy [0-9.]* (build $DBUILD)" "$OUT"'

B profile list --json
check "profile list --json: an array naming the node preset" \
	'[ "$RC" = 0 ] && [ "$(jq_py "\",\".join(p[\"from\"] for p in j if p[\"name\"] == \"node\")")" = preset ]'
B profile list --yaml
check "profile list with another argument: a usage error" '[ "$RC" = 2 ]'

N=$(rows)
sleep 0.1
B prune --dry-run --older-than 1ms
check "prune --dry-run names the ended session" \
	'[ "$RC" = 0 ] && [ "$(grep -c "^[0-9a-f]\{16\}$" "$OUT")" = 1 ] && grep -q "1 session would be pruned" "$ERR"'
check "prune --dry-run deletes nothing" '[ "$(rows)" = "$N" ] && [ "$N" -ge 1 ]'
B prune --older-than 1ms
check "prune then deletes what the dry run named" '[ "$RC" = 0 ] && [ "$(rows)" = 0 ]'

done_testing
