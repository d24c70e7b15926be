#!/bin/bash
# tests/e2e/store-record.sh — the session store against what really happened
# (issue 10 item 1, issue 17 item 5), inside the hermetic test network
# (tests/lib/testnet.sh).
#
# One allowlist run fetches a file of known size over HTTP and HTTPS, is
# refused a hardcoded address, the metadata address, an unlisted name and a
# name that answers a private address; then every stored row is checked
# against that: bytes on each connection (exact within a small header
# margin, since the final counters are flushed before the record closes), the
# same bytes in the net-log, one denial per refused flow with the layer that
# decided, names and the address of every resolution with the TTL the test
# resolver answered (60 s), Unix ms in every t_ms and t_rel_ms beside it.
# Then every ```sql block of doc/store.md is run against this store and its
# ANSWER compared with what the run did: a block the test has no
# expectation for fails, so the doc and the test cannot drift apart.
set -u
here=$(cd "$(dirname "$0")/.." && pwd)
. "$here/lib/harness.sh"
. "$here/lib/testnet.sh"
harness_locate
[ "${BOXY_TESTNET_INSIDE:-}" = 1 ] || harness_as_test_user "$0" "$@"
testnet_enter "$0" "$@"
testnet_setup
tn_probe

SIZE=200000
head -c "$SIZE" /dev/urandom >"$TN/www/big.bin"
chmod 0644 "$TN/www/big.bin"

run_case record --allow-host www.example.test --allow-host rebind.example.test \
	--net-log "$TN/cases/record.json" -- sh -c "
	curl -sS -m 10 -o big1 http://www.example.test/big.bin
	curl -sS -m 10 --cacert ca.pem -o big2 https://www.example.test/big.bin
	curl -s -m 5 http://$TN_HTTP/ >/dev/null
	curl -s -m 5 http://$TN_META/ >/dev/null
	curl -s -m 5 http://unlisted.example.test/ >/dev/null
	curl -s -m 5 http://rebind.example.test/ >/dev/null
	cmp -s big1 big2 && test \$(wc -c <big1) = $SIZE"
DB=$TN/state/boxy/sessions.db

if [ "$RC" -eq 0 ]; then
	ok "the recorded run fetched $SIZE bytes twice and was refused four times"
else
	fail_case "the recorded run fetched $SIZE bytes twice and was refused four times" \
		"want both copies of big.bin"
fi

cat >"$TN/store-check.py" <<'EOF'
import json, re, sqlite3, sys

db, netlog, doc, size = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
HTTP, META = "93.184.216.34", "169.254.169.254"
HTTP6 = "2606:2800:220:1::34"
c = sqlite3.connect("file:%s?mode=ro" % db, uri=True)
c.row_factory = sqlite3.Row
fails = []

def check(what, cond, got=None):
    if not cond:
        fails.append("%s (got %r)" % (what, got))

def rows(sql, *args):
    try:
        return [tuple(r) for r in c.execute(sql, args)]
    except sqlite3.Error as e:
        fails.append("%s: %s" % (sql, e))
        return []

# The schema version is the last row of doc/store.md's table of versions (each branch
# that adds a migration step adds its row there; no number to keep here).
documented = max(int(v) for v in re.findall(r"^\| (\d+) \| ", open(doc).read(), re.M))
check("schema version %d, the last doc/store.md documents" % documented,
      rows("PRAGMA user_version") == [(documented,)], rows("PRAGMA user_version"))
sessions = rows("SELECT id, argv, state, exit_code, started_ms, ended_ms FROM sessions"
                " ORDER BY started_ms")
rec = [s for s in sessions if "big.bin" in s[1]]
check("one recorded session", len(rec) == 1, sessions)
sid, argv, state, code, t0, t1 = rec[0]
check("session exited 0", (state, code) == ("exited", 0), (state, code))
check("nothing past the cap", rows("SELECT overflow FROM sessions WHERE id = ?", sid) == [(0,)])
# No alert froze it: its frozen columns (version 8, doc/react.md) are NULL.
check("never frozen", rows("SELECT frozen_ms, frozen_reason FROM sessions WHERE id = ?", sid)
      == [(None, None)])
# In the columns version 1 had too: every allowed connection carries its bytes.
v1 = rows("SELECT port, up, down FROM connections WHERE session_id = ? AND verdict = 'allow'",
          sid)
check("allowed connections carry the bytes they moved",
      len(v1) == 2 and all(r[2] >= size and r[1] > 0 for r in v1), v1)

# Units: Unix ms everywhere, t_rel_ms the same instant relative to the start.
for t in ("connections", "resolutions", "decisions"):
    for r in rows("SELECT t_ms, t_rel_ms, last_ms, count FROM %s WHERE session_id = ?" % t, sid):
        check("%s t_ms within the session" % t, t0 <= r[0] <= t1, (r, t0, t1))
        check("%s t_rel_ms = t_ms - started_ms" % t, r[1] == r[0] - t0, (r, t0))
        check("%s last_ms >= t_ms, count 1 (no flood here)" % t,
              r[2] >= r[0] and r[3] == 1, r)

# Connections: two allowed with their bytes, two refused, each once, with its layer.
conns = rows("SELECT proto, verdict, addr, port, host, sni, layer, reason, up, down, count"
             " FROM connections WHERE session_id = ? ORDER BY t_ms", sid)
allowed = [r for r in conns if r[1] == "allow"]
denied = [r for r in conns if r[1] == "deny"]
check("two allowed connections", len(allowed) == 2, conns)
for r in allowed:
    check("allowed: www.example.test on its address", r[2] == HTTP and r[4] == "www.example.test"
          and r[5] == "www.example.test" and r[6] == "net.sni", r)
    # The body plus the response headers (plain) or the TLS handshake and records.
    check("allowed: bytes received = the file and its framing",
          size <= r[9] <= size + (600 if r[3] == 80 else 12000), r)
    check("allowed: bytes sent = the request", 50 <= r[8] <= (300 if r[3] == 80 else 3000), r)
check("allowed: one on 80, one on 443", sorted(r[3] for r in allowed) == [80, 443], allowed)
# The hardcoded address is www.example.test's, bound by the fetches before: refused for its Host.
check("two refused connections", sorted((r[2], r[6]) for r in denied) ==
      [(META, "net.ip"), (HTTP, "net.sni")], denied)
check("refused: no bytes, a reason", all(r[8] == r[9] == 0 and r[7] for r in denied), denied)

# The net-log tells the same bytes.
nl = json.load(open(netlog))
s = nl["strings"]
nlc = sorted((s[x[3]], x[4], x[2], x[8], x[9]) for x in nl["conns"])
check("net-log: the same connections and bytes",
      nlc == sorted((r[2], r[3], r[1], r[8], r[9]) for r in conns), (nlc, conns))

# Resolutions: every answer with its address and the resolver's TTL, refusals with their layer.
res = rows("SELECT name, addr, ttl, verdict, layer, reason FROM resolutions"
           " WHERE session_id = ?", sid)
www = [r for r in res if r[0] == "www.example.test"]
check("www.example.test: A and AAAA answers, twice (two fetches)",
      sorted(set(r[1] for r in www)) == sorted([HTTP, HTTP6]) and len(www) >= 4, www)
check("www.example.test: ttl 60 (the resolver's), allowed at net.dns, no reason",
      all(r[2] == 60 and r[3] == "allow" and r[4] == "net.dns" and r[5] is None for r in www), www)
un = [r for r in res if r[0] == "unlisted.example.test"]
check("unlisted.example.test: refused at net.dns, no address",
      un and all(r[1] is None and r[3] == "deny" and r[4] == "net.dns" and r[5] for r in un), un)
rb = [r for r in res if r[0] == "rebind.example.test" and r[3] == "deny"]
check("rebind.example.test: its private answer refused at net.ip, with the address",
      rb and all(r[1] == "10.9.0.5" and r[2] is None and r[4] == "net.ip" for r in rb), rb)
check("rebind.example.test: its AAAA answered no address, and says so",
      [r for r in res if r[0] == "rebind.example.test" and r[3] == "allow"] ==
      [("rebind.example.test", None, None, "allow", "net.dns", "AAAA no address")], res)
check("an allowed resolution has its address, or says why not",
      not [r for r in res if r[3] == "allow" and r[1] is None and
           (r[5] or "").replace(" (cached)", "") not in
           ("A no address", "AAAA no address", "A NXDOMAIN", "AAAA NXDOMAIN", "A SERVFAIL",
            "AAAA SERVFAIL")], res)
check("a refusal has no TTL", not [r for r in res if r[3] == "deny" and r[2] is not None], res)

# Decisions: nothing of the network twice.
dup = rows("SELECT layer, subject FROM decisions WHERE session_id = ? AND verdict = 'deny'"
           " AND layer IN ('net.ip', 'net.dns', 'net.sni', 'upstream')", sid)
check("no refusal recorded twice (as a decision too)", not dup, dup)
den = rows("SELECT what, layer, subject, count FROM denials WHERE session_id = ?", sid)
want_den = sorted([("connect", "net.sni", "tcp://%s:80" % HTTP), ("connect", "net.ip",
                   "tcp://%s:80" % META)] + [("resolve", "net.dns", "unlisted.example.test")] * len(un)
                  + [("resolve", "net.ip", "rebind.example.test")] * len(rb))
check("denials: one per refused flow, name or answer", sorted(d[:3] for d in den) == want_den,
      den)

# ---- the documented queries, and their answers ----
text = open(doc).read()
blocks = re.findall(r"\n([^\n]*):\n\n```sql\n(.*?)```", text, re.S)
prefix = sid
www_recv = sum(r[9] for r in allowed)
www_sent = sum(r[8] for r in allowed)
deg = sorted(rows("SELECT layer, subject, reason, count(DISTINCT session_id) FROM decisions"
                  " WHERE verdict = 'degraded' GROUP BY layer, subject, reason"))
all_dest = {}
for r in rows("SELECT coalesce(host, addr), count, down FROM connections"):
    d = all_dest.setdefault(r[0], [0, 0])
    d[0] += r[1]
    d[1] += r[2]
expect = {
    "The ten most recent sessions":
        lambda got: got == [(x[0][:8], x[2], x[3], x[1]) for x in reversed(sessions)][:10],
    "Where one session went (replace the prefix with one of yours)":
        lambda got: got[0] == ("www.example.test", 2, 0, 1, www_sent, www_recv) and
        sorted(got[1:]) == sorted([(HTTP, 1, 1, 1, 0, 0), (META, 1, 1, 1, 0, 0)]),
    "Every denial of the last day, newest first":
        lambda got: sorted((g[1], g[2]) for g in got if g[0] == sid) ==
        sorted((w[1], w[2]) for w in want_den) and all(g[4] == 1 for g in got),
    "Hosts contacted by any session, with total traffic":
        lambda got: sorted(got) == sorted((k, v[0], v[1]) for k, v in all_dest.items()) and
        got[0][0] == "www.example.test",
    "What this host could not enforce, per layer":
        lambda got: sorted(got) == deg,
    "What each name answered, with its TTL":
        lambda got: sorted(got) == sorted([("www.example.test", HTTP, 60, 2),
                                           ("www.example.test", HTTP6, 60, 2)]),
    "Every HTTP request a session made, refused ones first":
        lambda got: [tuple(g[1:6]) for g in got] ==
        [("GET", "www.example.test", 80, "/big.bin", "allow")] and got[0][0] >= 1,
    "Bytes per allowed connection":
        lambda got: sorted(got) == sorted((r[4], r[3], r[8], r[9]) for r in allowed),
    "Sessions that reached the per-session cap, and how much was only counted":
        lambda got: got == [],
}
check("doc/store.md has its example queries", len(blocks) >= 8, [b[0] for b in blocks])
for title, sql in blocks:
    title = title.strip()
    sql = sql.replace("'9f3c%'", "'%s%%'" % prefix)
    try:
        got = rows(sql)
    except sqlite3.Error as e:
        fails.append("doc query %r fails: %s" % (title, e))
        continue
    if title not in expect:
        fails.append("doc query %r: the test has no expected answer for it" % title)
    elif not expect[title](got):
        fails.append("doc query %r answered %r" % (title, got))
for f in fails:
    print(f)
sys.exit(1 if fails else 0)
EOF
if python3 "$TN/store-check.py" "$DB" "$TN/cases/record.json" "$BOXY_SRCDIR/doc/store.md" \
	"$SIZE" >"$C/check" 2>&1; then
	ok "every stored row matches what the run did; every documented query answers it"
else
	fail_case "every stored row matches what the run did; every documented query answers it" \
		"$(head -n 20 "$C/check")"
	diag_file "$C/check" 40
fi

# The last counts: a server that sends the file and then holds the connection open (as a
# keep-alive registry does), and a payload that reads it and exits at once, well within the
# third of a second between two of boxy-net's reports. The connection is still open in
# boxy-net when the session ends; the net-log and the store must both have every byte (the
# old daemon wrote what the last report had said, often nothing).
tn_start hold python3 -c '
import socket, sys
n = int(sys.argv[1])
s = socket.socket()
s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(("0.0.0.0", 8081))
s.listen(16)
held = []
while True:
    c, _ = s.accept()
    try:
        c.sendall(b"x" * n)
        held.append(c)
    except OSError:
        c.close()' "$SIZE"
tn_wait_tcp "$TN_PUBLIC" 8081
for i in 1 2 3; do
	run_case "last$i" --net public --net-log "$TN/cases/last$i.json" -- \
		bash -c "exec 3<>/dev/tcp/$TN_PUBLIC/8081 && head -c $SIZE <&3 >/dev/null"
	got_log=$(python3 -c 'import json, sys
d = json.load(open(sys.argv[1]))
print(sum(c[9] for c in d["conns"] if c[2] == "allow"))' "$TN/cases/last$i.json" 2>/dev/null)
	got_db=$(sqlite3 "$DB" "SELECT sum(down) FROM connections WHERE verdict = 'allow' AND
		session_id = (SELECT id FROM sessions WHERE argv LIKE '%/dev/tcp%' ORDER BY
		started_ms DESC LIMIT 1)" 2>/dev/null)
	if [ "$RC" -eq 0 ] && [ "${got_log:-0}" = "$SIZE" ] && [ "${got_db:-0}" = "$SIZE" ]; then
		ok "run $i ends with its connection open: the net-log and the store count every byte"
	else
		fail_case "run $i ends with its connection open: the net-log and the store count every byte" \
			"want $SIZE bytes received in both; net-log $got_log, store $got_db"
	fi
done

done_testing
