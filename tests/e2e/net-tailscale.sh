#!/bin/bash
# tests/e2e/net-tailscale.sh — `boxy run --tailscale` end to end, inside the
# hermetic test network (tests/lib/testnet.sh) with a tailnet of its own
# (testnet_tailnet_setup): a fake tailscaled on the LocalAPI socket boxy asks,
# a fake MagicDNS resolver on 100.100.100.100 that logs every question, and
# tailnet hosts on 100.101.102.103 (nas), fd7a:115c:a1e0::65 (nas, IPv6) and
# 100.101.102.104 (secret, which no run is told about).
#
# --tailscale does exactly two things (README, "Reaching your tailnet"): it
# lifts the range objection for 100.64.0.0/10 and fd7a:115c:a1e0::/48, and it
# sends names under the MagicDNS suffix to 100.100.100.100, which only the
# supervisor talks to. Each case checks that the legitimate use works and that
# what must stay refused is refused: without the flag, for other private
# ranges, for a tailnet address no permitted name was bound to, and for the
# MagicDNS resolver itself. Kept apart from tests/e2e/net-policy.sh because it puts a
# tmpfs over /run in the suite's mount namespace (for the tailscaled socket).
set -u
here=$(cd "$(dirname "$0")/.." && pwd)
. "$here/lib/harness.sh"
. "$here/lib/testnet.sh"
harness_locate
# Inside the namespaces the suite is root of its own user namespace: already the test user.
[ "${BOXY_TESTNET_INSIDE:-}" = 1 ] || harness_as_test_user "$0" "$@"
testnet_enter "$0" "$@"
testnet_setup
testnet_tailnet_setup
tn_probe

P=$TN_TS_PORT
NAS=$TN_TS_NAS
EXC4="100.64.0.0/10 (--tailscale)"
EXC6="fd7a:115c:a1e0::/48 (--tailscale)"
# hits NAME: requests the tailnet HTTP server NAME has logged so far.
hits() { grep -c '"GET /' "$TN/$1.log" 2>/dev/null || true; }
# lines FILE: its line count.
lines() { wc -l <"$1"; }
# asked_since FILE N LINE: has the resolver log FILE recorded LINE after its first N lines?
asked_since() { tail -n +"$(($2 + 1))" "$1" | grep -qx -- "$3"; }
# upstream_clean N: no tailnet name in the host resolver's log after its first N lines.
upstream_clean() { ! tail -n +"$(($1 + 1))" "$TN/dns.queries" | grep -q "$TN_TS_SUFFIX"; }
# denied LAYER SUBJECT WORDS: a deny at LAYER for SUBJECT, its reason mentioning WORDS.
denied() {
	grep -F "\"layer\":\"$1\"" "$C/audit" 2>/dev/null | grep -F '"verdict":"deny"' |
		grep -F -- "$2" | grep -qF -- "$3"
}

## ---- the tailnet by name --------------------------------------------------------------
t="--tailscale --allow-host nas:PORT: a bare nas resolves through MagicDNS and is reached"
q0=$(lines "$TN/ts-dns.queries")
u0=$(lines "$TN/dns.queries")
run_case bare --tailscale --allow-host "nas:$P" -- curl -4 -sS -m 10 "http://nas:$P/"
# With the search domain the sandbox's own resolver asks nas.SUFFIX first:
# that is the listed nas, so it is allowed, never refused as unlisted.
if [ "$RC" -eq 0 ] && grep -q boxy-tailnet-marker "$C/out" &&
	asked_since "$TN/ts-dns.queries" "$q0" "$TN_TS_NAME A" && upstream_clean "$u0" &&
	audit_has net.ip allow "$EXC4" && ! grep -q MagicDNS "$C/err" &&
	! denied net.dns "$TN_TS_NAME" "not on the allowlist"; then
	ok "$t"
else
	fail_case "$t" \
		"want the page from $NAS, '$TN_TS_NAME A' asked of $TN_TS_DNS only," \
		"an allow at net.ip naming '$EXC4' and no deny at net.dns for $TN_TS_NAME" \
		"MagicDNS log: $(tail -n +"$((q0 + 1))" "$TN/ts-dns.queries" | tr '\n' ' ')"
fi

# The specification: "the suffix also becomes the sandbox's search domain".
# The daemon asks tailscaled before the sandbox starts, so the mount stage
# writes the suffix; both gateway addresses are the nameservers.
t="--tailscale: the MagicDNS suffix is the sandbox's search domain"
run_case search --tailscale --allow-host "nas:$P" -- cat /etc/resolv.conf
if [ "$RC" -eq 0 ] && grep -qx "search $TN_TS_SUFFIX" "$C/out" &&
	grep -qx "nameserver 10.0.2.2" "$C/out" && grep -qx "nameserver fd00:b0c5::2" "$C/out" &&
	[ "$(grep -c '^search' "$C/out")" = 1 ] && [ "$(grep -c '^nameserver' "$C/out")" = 2 ]; then
	ok "$t"
else
	fail_case "$t" "want 'search $TN_TS_SUFFIX' and the nameservers 10.0.2.2 and" \
		"fd00:b0c5::2, nothing else (stdout is the sandbox's /etc/resolv.conf)"
fi

# Only a networked run with --tailscale gets a search line; --net none keeps
# the one nameserver nothing answers at.
t="resolv.conf: no search line without --tailscale; --net none names 10.0.2.2 only"
run_case nosearch --allow-host "nas:$P" -- cat /etc/resolv.conf
cp "$C/out" "$TN/nosearch.out"
run_case nonet --net none -- cat /etc/resolv.conf
if grep -qx "nameserver fd00:b0c5::2" "$TN/nosearch.out" && ! grep -q '^search' "$TN/nosearch.out" &&
	[ "$RC" -eq 0 ] && [ "$(grep -v '^#' "$C/out")" = "nameserver 10.0.2.2" ]; then
	ok "$t"
else
	fail_case "$t" "want both nameservers and no search line without --tailscale" \
		"($(tr '\n' '|' <"$TN/nosearch.out")), and only 'nameserver 10.0.2.2' under" \
		"--net none (stdout)"
fi

# The search domain must not widen the allowlist: an unlisted bare name is
# refused as secret.SUFFIX and as secret, and MagicDNS is never asked.
t="--tailscale: an unlisted bare name is refused with and without the suffix"
n=$(hits ts-secret)
q0=$(lines "$TN/ts-dns.queries")
run_case unlisted-bare --tailscale --allow-host "nas:$P" -- curl -4 -sS -m 10 "http://secret:$P/"
if [ "$RC" -ne 0 ] && [ "$(hits ts-secret)" = "$n" ] &&
	denied net.dns "secret.$TN_TS_SUFFIX" "not on the allowlist" &&
	! tail -n +"$((q0 + 1))" "$TN/ts-dns.queries" | grep -q '^secret'; then
	ok "$t"
else
	fail_case "$t" "want a deny at net.dns for secret.$TN_TS_SUFFIX, no request at secret" \
		"and no question about secret asked of MagicDNS" \
		"MagicDNS log: $(tail -n +"$((q0 + 1))" "$TN/ts-dns.queries" | tr '\n' ' ')"
fi

t="--tailscale --allow-host FQDN:PORT reaches the host; the exception is in the audit verbatim"
q0=$(lines "$TN/ts-dns.queries")
u0=$(lines "$TN/dns.queries")
run_case fqdn --tailscale --allow-host "$TN_TS_NAME:$P" -- \
	curl -4 -sS -m 10 "http://$TN_TS_NAME:$P/"
if [ "$RC" -eq 0 ] && grep -q boxy-tailnet-marker "$C/out" &&
	asked_since "$TN/ts-dns.queries" "$q0" "$TN_TS_NAME A" && upstream_clean "$u0" &&
	grep -qF "$EXC4" "$C/audit"; then
	ok "$t"
else
	fail_case "$t" "want the page, the name asked of MagicDNS and never of the host's" \
		"resolver, and '$EXC4' in the audit log"
fi

t="--tailscale over IPv6: the AAAA from MagicDNS (fd7a:115c:a1e0::/48) is reached"
n=$(hits ts-nas6)
run_case fqdn6 --tailscale --allow-host "$TN_TS_NAME:$P" -- \
	curl -6 -sS -m 10 "http://$TN_TS_NAME:$P/"
if [ "$RC" -eq 0 ] && grep -q boxy-tailnet-marker "$C/out" && [ "$(hits ts-nas6)" -gt "$n" ] &&
	audit_has net.ip allow "$EXC6"; then
	ok "$t"
else
	fail_case "$t" "want the page from [$TN_TS_NAS6] and an allow at net.ip naming '$EXC6'"
fi

t="--tailscale --allow-host nas:PORT allows that port and refuses the others"
run_case port --tailscale --allow-host "nas:$P" -- sh -c \
	"curl -sS -m 10 http://nas:$P/; curl -s -m 5 http://nas:80/ || true"
if [ "$(grep -c boxy-tailnet-marker "$C/out")" = 1 ] && audit_has net.ip deny "tcp://$NAS:80"
then
	ok "$t"
else
	fail_case "$t" "want one page (from :$P) and a deny at net.ip for tcp://$NAS:80"
fi

## ---- what --tailscale does not open ----------------------------------------------------
t="without --tailscale a tailnet name's CGNAT answer is dropped at net.ip, MagicDNS never asked"
n=$(hits ts-nas)
q0=$(lines "$TN/ts-dns.queries")
run_case without --allow-host "$TN_TS_NAME:$P" -- curl -sS -m 10 "http://$TN_TS_NAME:$P/"
if [ "$RC" -ne 0 ] && ! grep -q boxy-tailnet-marker "$C/out" && [ "$(hits ts-nas)" = "$n" ] &&
	denied net.ip "$TN_TS_NAME" "answered with $NAS, in the carrier-grade NAT" &&
	[ "$(lines "$TN/ts-dns.queries")" = "$q0" ]; then
	ok "$t"
else
	fail_case "$t" "want a deny at net.ip for $TN_TS_NAME:" \
		"'answered with $NAS, in the carrier-grade NAT…', and no request at nas"
fi

t="without --tailscale a tailnet address is refused at net.ip as carrier-grade NAT (public mode)"
n=$(hits ts-nas)
run_case without-ip --net public -- curl -sS -m 10 "http://$NAS:$P/"
if [ "$RC" -ne 0 ] && [ "$(hits ts-nas)" = "$n" ] &&
	denied net.ip "tcp://$NAS:$P" "carrier-grade NAT"; then
	ok "$t"
else
	fail_case "$t" "want a deny at net.ip for tcp://$NAS:$P with the range's words"
fi

# The same refusal, live: boxy watch ID | grep deny.
t="boxy watch shows the refused tailnet address with its layer and reason"
watch_denials watch "http://$NAS:$P/"
if grep -F "$NAS" "$C/out" | grep -F net.ip | grep -qF "carrier-grade NAT"; then
	ok "$t"
else
	fail_case "$t" "session '$WATCH_ID': want a deny line naming $NAS, net.ip and carrier-grade NAT"
fi

t="--tailscale: a tailnet address no permitted name was bound to is refused at net.dns"
n=$(hits ts-secret)
run_case hardcoded --tailscale --allow-host "nas:$P" -- \
	curl -sS -m 10 "http://$TN_TS_SECRET:$P/"
if [ "$RC" -ne 0 ] && [ "$(hits ts-secret)" = "$n" ] &&
	audit_has net.dns deny "tcp://$TN_TS_SECRET:$P"; then
	ok "$t"
else
	fail_case "$t" "want a deny at net.dns for tcp://$TN_TS_SECRET:$P and no request at secret"
fi

# The payload talks to 100.100.100.100 itself: HTTP to port 80, and a question
# for a tailnet name nobody permitted, over UDP and TCP to port 53. Port 53 is
# boxy's own DNS proxy at every address, so the question is judged by policy
# (refused: NXDOMAIN) and never reaches the fake MagicDNS, which would answer
# it with $TN_TS_SECRET.
cat >"$TN/quad100.py" <<'PY'
import socket, struct, sys
name = sys.argv[1]
q = struct.pack('!HHHHHH', 0x5151, 0x0100, 1, 0, 0, 0) + \
    b''.join(bytes([len(l)]) + l.encode() for l in name.split('.')) + b'\0' + \
    struct.pack('!HH', 1, 1)
def show(how, r):
    rc = r[3] & 0x0f
    an = struct.unpack('!H', r[6:8])[0]
    print('%s rcode=%d answers=%d' % (how, rc, an))
try:
    u = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    u.settimeout(5)
    u.sendto(q, ('100.100.100.100', 53))
    show('udp', u.recv(1500))
except Exception as e:
    print('udp error:', e)
try:
    t = socket.create_connection(('100.100.100.100', 53), timeout=5)
    t.sendall(struct.pack('!H', len(q)) + q)
    n = struct.unpack('!H', t.recv(2))[0]
    r = b''
    while len(r) < n:
        r += t.recv(n - len(r))
    show('tcp', r)
except Exception as e:
    print('tcp error:', e)
PY
chmod 0644 "$TN/quad100.py"
mkdir -p "$TN/cases/quad100" && cp "$TN/quad100.py" "$TN/cases/quad100/quad100.py"
t="the sandbox never reaches 100.100.100.100: HTTP refused at net.ip, DNS judged by boxy's proxy"
n=$(hits ts-quad100)
run_case quad100 --tailscale --allow-host "nas:$P" -- sh -c \
	"curl -s -m 5 -o /dev/null -w 'http %{http_code}\n' http://$TN_TS_DNS/
	python3 quad100.py secret.$TN_TS_SUFFIX"
if grep -qx 'udp rcode=3 answers=0' "$C/out" && grep -qx 'tcp rcode=3 answers=0' "$C/out" &&
	! grep -q "^secret\." "$TN/ts-dns.queries" && audit_has net.dns deny "secret.$TN_TS_SUFFIX" &&
	grep -qx 'http 000' "$C/out" && [ "$(hits ts-quad100)" = "$n" ] &&
	audit_has net.ip deny "tcp://$TN_TS_DNS:80"; then
	ok "$t"
else
	fail_case "$t" "want NXDOMAIN over UDP and TCP from boxy (a deny at net.dns for" \
		"secret.$TN_TS_SUFFIX, never asked of MagicDNS), and a deny at net.ip for" \
		"tcp://$TN_TS_DNS:80 with no request there" \
		"MagicDNS log: $(tr '\n' ' ' <"$TN/ts-dns.queries")"
fi

t="--tailscale opens only Tailscale's ranges: 10/8, 192.168/16, fd00::/8, fd7a:115c:a1e1:: refused"
privs="10.9.0.5 192.168.77.5 [fd00::5] [fd7a:115c:a1e1::5]"
n=$(hits ts-nas)
run_case private --tailscale --net public -- sh -c "curl -sS -m 10 http://$NAS:$P/
	for u in $privs; do curl -s -m 5 -o /dev/null -w '%{http_code}\n' http://\$u/; done"
missing=
for u in $privs; do
	audit_has net.ip deny "tcp://$u:80" || missing="$missing $u"
done
if [ -z "$missing" ] && grep -q boxy-tailnet-marker "$C/out" && ! grep -q '^200' "$C/out" &&
	[ "$(hits ts-nas)" -gt "$n" ]; then
	ok "$t"
else
	fail_case "$t" "want the page from $NAS and a deny at net.ip for:$missing"
fi

## ---- tailscaled is not running ----------------------------------------------------------
t="tailscaled not running: one warning line before the run, and the tailnet ranges still open"
asked=$(grep -c '^GET /localapi/v0/status ' "$TN/tailscaled.log" || true)
tn_tailscaled_stop
q0=$(lines "$TN/ts-dns.queries")
run_case notsd --tailscale --net public -- sh -c \
	"echo payload-start >&2; curl -sS -m 10 http://$NAS:$P/"
want="boxy: --tailscale: MagicDNS is unavailable (tailscaled is not reachable at"
want="$want /var/run/tailscale/tailscaled.sock"
if [ "$RC" -eq 0 ] && grep -q boxy-tailnet-marker "$C/out" &&
	[ "$(grep -c 'MagicDNS is unavailable' "$C/err")" = 1 ] &&
	head -n 1 "$C/err" | grep -qF "$want" && grep -q '^payload-start$' "$C/err" &&
	audit_has net degraded "MagicDNS is unavailable" && [ "$asked" -gt 0 ]; then
	ok "$t"
else
	fail_case "$t" "want the page from $NAS by address, '$want…' as stderr's first line," \
		"a degraded net event, and earlier runs to have asked tailscaled ($asked asked)"
fi

t="tailscaled not running: the sandbox gets no search line, only the nameservers"
run_case notsd-search --tailscale --allow-host "nas:$P" -- cat /etc/resolv.conf
if [ "$RC" -eq 0 ] && grep -qx "nameserver 10.0.2.2" "$C/out" && ! grep -q '^search' "$C/out"
then
	ok "$t"
else
	fail_case "$t" "want the nameservers and no search line (stdout is resolv.conf)"
fi

t="tailscaled not running: tailnet names do not resolve, and MagicDNS is never asked"
run_case notsd-name --tailscale --allow-host "nas:$P" -- curl -sS -m 10 "http://nas:$P/"
if [ "$RC" -ne 0 ] && ! grep -q boxy-tailnet-marker "$C/out" &&
	[ "$(lines "$TN/ts-dns.queries")" = "$q0" ] && grep -q 'MagicDNS is unavailable' "$C/err"
then
	ok "$t"
else
	fail_case "$t" "want a failure, the warning, and nothing new in the MagicDNS log"
fi

done_testing
