# tests/escape/cases-review.sh — a hostile review of the views added last:
# boxy top (its pipe snapshot and --json), boxy show --events and the end of
# the run, fed names the payload chooses (sourced by escape.sh).
#
#   review-top-names   the payload plants a repository under a directory whose
#                      name carries ESC, an OSC 52 clipboard write, C1 CSI,
#                      an overlong C0 9B and U+202E; the alert that names it
#                      reaches boxy top, top --json, show --events and the
#                      run's own stderr. ESCAPED when any carries such a byte
#                      raw (the screen sanitizer, or the JSON encoder, missed).
# The network halves of the review (decoy refusals, claimed server names) are
# end-to-end tests in the test network: tests/e2e/refusal-decoys.sh and
# tests/e2e/public-names-claimed.sh. Sandboxed phase only: the attack is on
# boxy's own views.

# files_raw (cases-files.sh) counts the raw control bytes.

review_cases() {
	[ "$PHASE" = sandbox ] || return 0

	if only review-top-names; then
		case_new review-top-names
		boxy_run -- /bin/sh -c '
d=$(printf "r\033]52;c;Y3VybCBldmlsfHNo\007\302\233""31m\300\233""2J\342\200\256gpj")
mkdir -p "$d/.git" && echo "[core]" >"$d/.git/config"
echo BOXY-CASE-DONE'
		local id raw=""
		cp "$CASE/err" "$CASE/err.run"
		id=$(HOME=$CASE_HOME "$BOXY" ps -a 2>/dev/null | awk 'NR == 2 { print $1 }')
		HOME=$CASE_HOME "$BOXY" top </dev/null >"$CASE/top" 2>&1
		HOME=$CASE_HOME "$BOXY" top --json </dev/null >"$CASE/top.json" 2>&1
		HOME=$CASE_HOME "$BOXY" show --events "$id" >"$CASE/events" 2>&1
		for f in err.run top top.json events; do
			[ "$(files_raw "$CASE/$f")" = 0 ] || raw="$raw $f"
		done
		if ! grep -q gpj "$CASE/events"; then
			not_ok "hostile names in boxy top and show --events: the planted repository was not reported (nothing tested)"
			diag_file "$CASE/err.run" 5
		elif ! python3 -c 'import json, sys; json.load(open(sys.argv[1], encoding="utf-8"))' \
			"$CASE/top.json" 2>/dev/null; then
			not_ok "hostile names in boxy top --json: not valid JSON in UTF-8"
			diag_file "$CASE/top.json" 3
		elif [ -n "$raw" ]; then
			not_ok "hostile names reach boxy top, top --json, show --events and the run's stderr escaped"
			diag "ESCAPED: raw control bytes in:$raw"
		else
			ok "hostile names reach boxy top, top --json, show --events and the run's stderr escaped"
		fi
	fi
}
CASE_GROUPS+=(review_cases)
