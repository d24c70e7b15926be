#!/bin/bash
# tests/e2e/public-names-claimed.sh — in public mode the SNI or Host a client
# sends is recorded, not checked: a payload can dial any address and claim to
# be talking to registry.npmjs.org. What boxy shows must not pass that claim
# off as the destination: when the address was not resolved from the name,
# the line says the name was claimed and names the address it went to; when
# it was (the ordinary case) the line stays as it was, and the store's
# connection row carries the name (it arrives after the row was written).
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

# watch_run NAME SCRIPT: a detached public-mode session running SCRIPT, and
# `boxy watch` of it until it ends, into $C/out. Sets C and id.
watch_run() {
	C=$TN/cases/$1
	mkdir -p "$C" && cp "$TN/tls/ca.pem" "$C/ca.pem" && chmod -R a+rwX "$C"
	id=$(cd "$C" && tn_boxy run -d --net public -- sh -c "sleep 1; $2; sleep 2" 2>"$C/err")
	RC=$?
	: >"$C/out"
	: >"$C/audit"
	[ -n "$id" ] || return 0
	timeout 20 bash -c "$(declare -f tn_boxy tn_user); BOXY='$BOXY' TN='$TN' BOXY_TESTNET_UID=$BOXY_TESTNET_UID BOXY_TESTNET_GID=$BOXY_TESTNET_GID tn_boxy watch '$id'" >"$C/out" 2>&1
}

## ---- a claimed name: the payload never resolved it ----------------------------------------
watch_run claimed "curl -sk -m 5 --resolve registry.npmjs.org:443:$TN_HTTP https://registry.npmjs.org/hello.txt; curl -s -m 5 -H 'Host: registry.npmjs.org' http://$TN_HTTP/hello.txt"
line=$(grep -E 'tcp +sni +registry\.npmjs\.org' "$C/out" | grep 'TLS server name')
if [ -n "$line" ] && printf '%s' "$line" | grep -q 'claimed' &&
	printf '%s' "$line" | grep -qF "$TN_HTTP"; then
	ok "public mode: a TLS server name the address was not resolved from is shown as claimed, with the address"
else
	fail_case "public mode: a TLS server name the address was not resolved from is shown as claimed, with the address" \
		"watch line: ${line:-none}"
fi
line=$(grep -E 'tcp +sni +registry\.npmjs\.org' "$C/out" | grep 'HTTP Host')
if [ -n "$line" ] && printf '%s' "$line" | grep -q 'claimed' &&
	printf '%s' "$line" | grep -qF "$TN_HTTP"; then
	ok "public mode: an HTTP Host the address was not resolved from is shown as claimed, with the address"
else
	fail_case "public mode: an HTTP Host the address was not resolved from is shown as claimed, with the address" \
		"watch line: ${line:-none}"
fi

## ---- the ordinary case: resolved, then named ------------------------------------------------
watch_run resolved "curl -sS -m 10 --cacert ca.pem https://www.example.test/hello.txt"
line=$(grep -E 'tcp +sni +www\.example\.test' "$C/out")
if [ -n "$line" ] && ! printf '%s' "$line" | grep -q 'claimed'; then
	ok "public mode: a server name the address was resolved from is not called claimed"
else
	fail_case "public mode: a server name the address was resolved from is not called claimed" \
		"watch line: ${line:-none}"
fi

## ---- the store keeps the name too (issue 10: "the net-log, the store, watch, show") -------
tn_boxy show --events "$id" >"$C/events" 2>&1
if grep -E 'tcp +allow .*www\.example\.test:443' "$C/events" | grep -q 'sni www\.example\.test'; then
	ok "public mode: the store's connection row carries the SNI seen after the allow"
else
	not_ok "public mode: the store's connection row carries the SNI seen after the allow"
	grep tcp "$C/events" | diag "$(cat)"
fi

## ---- two names on one address: the payload does not pick the record's ---------------------
# unlisted.example.test and other.example.test share one address. A flow that
# names neither on the wire (here HTTP with an address literal as Host; a
# ClientHello split across two writes is another) must not be recorded under
# whichever the payload resolved first.
C=$TN/cases/two-names
mkdir -p "$C" && chmod a+rwX "$C"
(cd "$C" && tn_boxy run --net public --net-log "$C/net.json" -- sh -c \
	"getent hosts unlisted.example.test; getent hosts other.example.test;
	 curl -s -m 5 -o /dev/null http://$TN_OTHER/hello.txt; echo curl=\$?") >"$C/out" 2>"$C/err" </dev/null
RC=$?
python3 - "$C/net.json" >"$C/conns" 2>&1 <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
s = d["strings"]
name = lambda i: s[i] if i >= 0 else "-"
for c in d["conns"]:
    print(c[2], name(c[3]), c[4], name(c[5]), name(c[6]))
PY
if grep -q 'curl=0' "$C/out" && grep -q "^allow $TN_OTHER 80 - -$" "$C/conns"; then
	ok "public mode: a nameless flow to an address two resolved names share is not named after either"
else
	fail_case "public mode: a nameless flow to an address two resolved names share is not named after either" \
		"want 'allow $TN_OTHER 80 - -'; net-log: $(tr '\n' ';' <"$C/conns")"
fi

done_testing
