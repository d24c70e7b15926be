#!/bin/bash
# json-doc.sh — doc/json.md says what each --json output holds: every key a
# table of that page lists appears in the real output (optional ones may be
# absent), and every key of the real output is listed, so the page cannot
# drift from the code (issue 16, "every --json output documented").

. "$(dirname "$0")/../lib/harness.sh"
harness_as_test_user "$0" "$@"
. "$(dirname "$0")/daemon-lib.sh"
command -v python3 >/dev/null || { echo "1..0 # SKIP python3 is not installed"; exit 0; }
DOC=$BOXY_SRCDIR/doc/json.md
[ -r "$DOC" ] || DOC=$(dirname "$0")/../../doc/json.md

# keys_match JSON-FILE HEADING TABLE [HEADING TABLE...]: the keys of the
# output (an object, or the union over an array's objects) against the first
# column of the given table (0-based) of each section titled HEADING.
keys_match() {
	python3 - "$DOC" "$@" <<'PY'
import json, re, sys
doc, path, specs = sys.argv[1], sys.argv[2], sys.argv[3:]
sections = re.split(r'^## ', open(doc).read(), flags=re.M)
tables = []
for heading, t in zip(specs[0::2], specs[1::2]):
    sec = [s for s in sections if s.startswith(heading)]
    if len(sec) != 1:
        sys.exit("no one section %r" % heading)
    found = []
    for block in re.split(r'\n(?!\|)', sec[0]):
        rows = [l for l in block.split('\n') if l.startswith('| `')]
        if rows:
            found.append(rows)
    tables.append(found[int(t)])
want, optional = set(), set()
for rows in tables:
    for row in rows:
        key = re.match(r'\| `([a-z_]+)`', row).group(1)
        want.add(key)
        if 'optional' in row.split('|')[2]:
            optional.add(key)
j = json.load(open(path))
got = set()
for o in (j if isinstance(j, list) else [j]):
    got |= set(o)
missing = want - optional - got
extra = got - want
if missing or extra or not got:
    sys.exit("documented but absent: %s; present but undocumented: %s" %
             (sorted(missing), sorted(extra)))
PY
}

# doc_check DESC HEADING TABLE...: keys_match on $OUT, ok/not ok.
doc_check() {
	local why desc=$1
	shift
	if why=$(keys_match "$OUT" "$@" 2>&1); then
		ok "$desc"
	else
		not_ok "$desc"
		diag "$why"
		diag_file "$OUT" 3
	fi
}

plan 10

B daemon status --json
doc_check "daemon status --json without a daemon" '`boxy daemon status --json`' 1
B run --net none -- true
B run -d --net none -- sleep 30
ID=$(tr -d '[:space:]' <"$OUT")
B daemon status --json
doc_check "daemon status --json" '`boxy daemon status --json`' 0
B ps -a --json
doc_check "ps -a --json (a running and an ended session)" '`boxy ps --json`' 0
B show "$ID" --json
doc_check "show --json" '`boxy show ID --json`' 0 '`boxy ps --json`' 0
B top --json
doc_check "top --json" '`boxy top --json`' 0
B profile show --json node
doc_check "profile show --json" '`boxy profile show --json' 0
B profile list --json
doc_check "profile list --json" '`boxy profile list --json`' 0
B doctor --json
doc_check "doctor --json" '`boxy doctor --json`' 0
"$BOXY" stop -k "$ID" >/dev/null 2>&1
# --report FILE's JSON (FILE.json): the timeout is a refusal, so findings is not empty.
B run --net none --timeout 1s --report "$SUITE/report.xml" -- sleep 10
OUT=$SUITE/report.xml.json
doc_check "run --report: FILE.json" '`boxy run --report FILE`' 0
python3 -c 'import json, sys; json.dump(json.load(open(sys.argv[1]))["findings"], open(sys.argv[2], "w"))' \
	"$SUITE/report.xml.json" "$SUITE/findings.json"
OUT=$SUITE/findings.json
doc_check "run --report: FILE.json's findings" '`boxy run --report FILE`' 1

done_testing
