#!/bin/bash
# tests/e2e/net-public-names.sh — public mode records names, as allowlist mode
# does, without deciding on them: the host each address was resolved from and
# the SNI or Host the client sent reach the net-log, the events and watch; the
# session's DNS cache answers a name asked twice without asking upstream again,
# and the event says which query type it answered.
#
# Inside the hermetic test network (tests/lib/testnet.sh), as the test user,
# with the suite's own daemon.
set -u
here=$(cd "$(dirname "$0")/.." && pwd)
. "$here/lib/harness.sh"
. "$here/lib/testnet.sh"
harness_locate
[ "${BOXY_TESTNET_INSIDE:-}" = 1 ] || harness_as_test_user "$0" "$@"
testnet_enter "$0" "$@"
testnet_setup
tn_probe

# conn_names FILE: "verdict addr port host sni" per connection of a net-log.
conn_names() {
	python3 - "$1" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
s = d["strings"]
name = lambda i: s[i] if i >= 0 else "-"
for c in d["conns"]:
    print(c[2], name(c[3]), c[4], name(c[5]), name(c[6]))
PY
}

## ---- names in public mode --------------------------------------------------------------
q0=$(grep -c '^www.example.test A$' "$TN/dns.queries")
run_case public-names --net public --net-log "$TN/cases/public-names.json" -- sh -c \
	'curl -sS -m 10 --cacert ca.pem https://www.example.test/hello.txt &&
	 curl -sS -m 10 -4 http://www.example.test/hello.txt'
conn_names "$TN/cases/public-names.json" >"$C/conns" 2>&1
if [ "$RC" -eq 0 ] && grep -q "^allow $TN_HTTP 443 www.example.test www.example.test$" "$C/conns"; then
	ok "public mode: the net-log names an HTTPS connection's host and SNI"
else
	fail_case "public mode: the net-log names an HTTPS connection's host and SNI" \
		"want 'allow $TN_HTTP 443 www.example.test www.example.test'; net-log: $(tr '\n' ';' <"$C/conns")"
fi
if grep -q "^allow $TN_HTTP 80 www.example.test www.example.test$" "$C/conns"; then
	ok "public mode: the net-log names a plain HTTP connection's host and Host header"
else
	fail_case "public mode: the net-log names a plain HTTP connection's host and Host header" \
		"want 'allow $TN_HTTP 80 www.example.test www.example.test'; net-log: $(tr '\n' ';' <"$C/conns")"
fi
if grep -q 'www.example.test' "$C/err" && ! grep -q "^ *$TN_HTTP " "$C/err"; then
	ok "public mode: the end-of-run table names the destination, not its address"
else
	fail_case "public mode: the end-of-run table names the destination, not its address" \
		"want www.example.test in the destinations table"
fi

## ---- the DNS cache -----------------------------------------------------------------------
# Two lookups of one name in one session: one question upstream, the second answered
# from the cache (the test resolver answers with a TTL of minutes).
q1=$(grep -c '^www.example.test A$' "$TN/dns.queries")
if [ $((q1 - q0)) -eq 1 ]; then
	ok "the session's DNS cache: a name looked up twice is asked upstream once"
else
	fail_case "the session's DNS cache: a name looked up twice is asked upstream once" \
		"the test resolver was asked $((q1 - q0)) times for www.example.test A"
fi

## ---- watch names the query type and the SNI ------------------------------------------------
C=$TN/cases/public-watch
mkdir -p "$C" && chmod a+rwX "$C" && cp "$TN/tls/ca.pem" "$C/ca.pem" && chmod a+r "$C/ca.pem"
id=$(cd "$C" && tn_boxy run -d --net public -- sh -c \
	'sleep 1; curl -sS -m 10 --cacert ca.pem https://www.example.test/hello.txt; sleep 2' 2>"$C/err")
RC=$?
: >"$C/out"
if [ -n "$id" ]; then
	timeout 20 bash -c "$(declare -f tn_boxy tn_user); BOXY='$BOXY' TN='$TN' BOXY_TESTNET_UID=$BOXY_TESTNET_UID BOXY_TESTNET_GID=$BOXY_TESTNET_GID tn_boxy watch '$id'" >"$C/out" 2>&1
fi
: >"$C/audit"
if grep -qE 'dns +resolve +www\.example\.test +A ' "$C/out" &&
	grep -qE 'tcp +sni +www\.example\.test' "$C/out"; then
	ok "boxy watch shows the query type and, in public mode, the SNI"
else
	fail_case "boxy watch shows the query type and, in public mode, the SNI" \
		"want 'dns resolve www.example.test A …' and 'tcp sni www.example.test'"
	diag_file "$C/out" 12
fi

done_testing
