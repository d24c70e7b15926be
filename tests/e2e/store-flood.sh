#!/bin/bash
# tests/e2e/store-flood.sh — a flood of refused connects keeps the session
# store bounded and its counts exact (issue 8 item 13), inside the hermetic
# test network (tests/lib/testnet.sh).
#
# The payload dials the metadata address as fast as bash can for a few
# seconds, then 6,144 distinct private addresses once each, and prints how
# many attempts it made. The store must hold a bounded number of rows for
# the session (the first few of a key one by one, then one counted row; at
# most STORE_SESSION_ROWS in all, the rest counted in the session's
# overflow), grow the database by well under a megabyte, and still count
# every refusal: the denials view plus the overflow equal the attempts.
# The old store wrote two rows per refusal (a connection and a decision).
# The end-of-run table shows the busiest 20 destinations and sums the rest
# in one line (it printed 1,024 lines).
set -u
here=$(cd "$(dirname "$0")/.." && pwd)
. "$here/lib/harness.sh"
. "$here/lib/testnet.sh"
harness_locate
[ "${BOXY_TESTNET_INSIDE:-}" = 1 ] || harness_as_test_user "$0" "$@"
testnet_enter "$0" "$@"
testnet_setup
tn_probe

ROWS_MAX=5000       # store.h STORE_SESSION_ROWS
DB=$TN/state/boxy/sessions.db
# The database's size in bytes once its write-ahead log is folded in.
db_size() {
	sqlite3 "$DB" "PRAGMA wal_checkpoint(TRUNCATE);" >/dev/null 2>&1
	sqlite3 "$DB" "SELECT page_count * page_size FROM pragma_page_count, pragma_page_size"
}
before=$(db_size)

t0=$(date +%s%N)
run_case flood --net public -- bash -c "
	n=0; end=\$((SECONDS + 6))
	while [ \$SECONDS -lt \$end ]; do : 3<>/dev/tcp/$TN_META/80; n=\$((n + 1)); done 2>/dev/null
	m=0
	for a in \$(seq 0 23); do for b in \$(seq 0 255); do
		: 3<>/dev/tcp/10.9.\$a.\$b/80; m=\$((m + 1))
	done; done 2>/dev/null
	echo \$n \$m"
t1=$(date +%s%N)
read -r same distinct <"$C/out"
after=$(db_size)
ID=$(sqlite3 "$DB" "SELECT id FROM sessions WHERE argv LIKE '%SECONDS%'")
q() { sqlite3 "$DB" "$1" 2>&1; }
rows=$(q "SELECT (SELECT count(*) FROM connections WHERE session_id = '$ID')
	+ (SELECT count(*) FROM resolutions WHERE session_id = '$ID')")
decisions=$(q "SELECT count(*) FROM decisions WHERE session_id = '$ID'")
diag "flood: ${same:-?} dials of one refused address and ${distinct:-?} of distinct ones in" \
	"$(((t1 - t0) / 1000000)) ms; $rows rows of the network and $decisions decisions;" \
	"the database grew from $before to $after bytes"

if [ "$RC" -eq 0 ] && [ "${same:-0}" -gt 2000 ] && [ "${distinct:-0}" = 6144 ]; then
	ok "the payload flooded: ${same:-0} + ${distinct:-0} refused connects"
else
	fail_case "the payload flooded: ${same:-0} + ${distinct:-0} refused connects" \
		"want more than 2000 dials of $TN_META and 6144 distinct ones"
fi

# Each row also says who made it (doc/attribution.md): text the row bound caps too (a
# process's command line is at most 256 bytes), counted apart from the 1.5 MB.
who_bytes=$(q "SELECT sum(coalesce(length(CAST(comm AS BLOB)), 0) + coalesce(length(CAST(argv0 AS BLOB)), 0)
	+ coalesce(length(CAST(cmdline AS BLOB)), 0) + coalesce(length(CAST(package AS BLOB)), 0)
	+ coalesce(length(CAST(package_version AS BLOB)), 0) + coalesce(length(CAST(package_script AS BLOB)), 0)
	+ coalesce(length(CAST(package_via AS BLOB)), 0))
	FROM (SELECT comm, argv0, cmdline, package, package_version, package_script, package_via
	FROM connections WHERE session_id = '$ID' UNION ALL SELECT comm, argv0, cmdline, package,
	package_version, package_script, package_via FROM resolutions WHERE session_id = '$ID')")
who_bytes=${who_bytes:-0}
if [ -n "$ID" ] && [ "$rows" -le "$ROWS_MAX" ] && [ "$decisions" -lt 50 ] &&
	[ "$((after - before))" -lt $((1500000 + who_bytes * 5 / 4)) ]; then
	ok "the store stays bounded: $rows + $decisions rows, $((after - before)) bytes more" \
		"($who_bytes of them who made the rows)"
else
	fail_case "the store stays bounded: $rows + $decisions rows, $((after - before)) bytes more" \
		"want at most $ROWS_MAX rows of the network, a few decisions (refusals are no" \
		"decisions) and under 1.5 MB of growth besides who made the rows ($who_bytes bytes)"
fi

meta=$(q "SELECT denied FROM destinations WHERE session_id = '$ID' AND destination = '$TN_META'")
meta_rows=$(q "SELECT count(*) FROM connections WHERE session_id = '$ID' AND addr = '$TN_META'")
# Rows of different makers are counted apart (doc/attribution.md): the process, or "unknown"
# once the flood outruns attribution's budget. 21 rows for each (20 alone, one counted).
makers=$(q "SELECT count(DISTINCT coalesce(comm, '?') || coalesce(package, '')) FROM connections
	WHERE session_id = '$ID' AND addr = '$TN_META'")
total=$(q "SELECT denied FROM session_summary WHERE id = '$ID'")
over=$(q "SELECT overflow_denied FROM sessions WHERE id = '$ID'")
listed=$(q "SELECT sum(count) FROM denials WHERE session_id = '$ID'")
if [ "$meta" = "${same:-x}" ] && [ "$meta_rows" -le $((21 * ${makers:-1})) ] &&
	[ "${makers:-9}" -le 2 ] &&
	[ "$total" = "$((same + distinct))" ] && [ "$((listed + over))" = "$total" ]; then
	ok "every refusal is counted: $meta of $TN_META in $meta_rows rows, $total in all"
else
	fail_case "every refusal is counted: $meta of $TN_META in $meta_rows rows, $total in all" \
		"want destinations.denied = ${same:-?} in at most 21 rows for each of its makers" \
		"(${makers:-?}: the shell, and unknown), session_summary.denied =" \
		"$((${same:-0} + ${distinct:-0})) = denials ($listed) + overflow ($over)"
fi

# The end-of-run table: the busiest destinations and one line for the other thousand (the
# daemon counts 1,024 destinations apart, the rest as one "(other destinations)").
# The refusal summary after it is bounded too: a thousand distinct addresses refused for one
# reason are one row (+N others), the rest counted on one line.
lines=$(sed -n '/^boxy: network destinations/,/^boxy: [0-9]* refused/p' "$C/err" | wc -l)
refused=$(sed -n '/^boxy: [0-9]* refused/,$p' "$C/err" | wc -l)
if grep -q "^boxy: network destinations (1024)" "$C/err" && [ "$lines" -le 25 ] &&
	[ "$refused" -ge 2 ] && [ "$refused" -le 13 ] &&
	grep -q "^  … and 1004 more destinations: 1004 connections, 1004 denied" "$C/err" &&
	grep -q "^  $TN_META  *$same  *$same " "$C/err"; then
	ok "the end-of-run table of 1024 destinations fits on a screen ($lines lines, $refused of refusals)"
else
	fail_case "the end-of-run table of 1024 destinations fits on a screen ($lines lines, $refused of refusals)" \
		"want the header, $TN_META first with $same, 19 more and one '… and 1004 more' line"
fi

done_testing
