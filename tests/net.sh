#!/bin/bash
# tests/net.sh — boxy's network end to end, inside the hermetic test network
# (tests/lib/testnet.sh): real HTTP, HTTPS and DNS servers on public-looking
# addresses that exist only in the suite's namespaces, private bait that
# answers if anything lets a packet through, and a resolver that logs every
# question it is asked.
#
# Each case runs `boxy run` as the unprivileged user and checks three things
# where they apply: what the payload got, what the servers saw, and what the
# audit log says policy decided (layer and subject). When this build cannot
# run a networked sandbox yet (no boxy-net, no tap0 from stage 2), every case
# fails and says why: a missing network is a failure, never a skip.
set -u
here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib/harness.sh"
. "$here/lib/testnet.sh"
harness_locate
# Inside the namespaces the suite is root of its own user namespace: already the test user.
[ "${BOXY_TESTNET_INSIDE:-}" = 1 ] || harness_as_test_user "$0" "$@"
testnet_enter "$0" "$@"
testnet_setup
# run_case, audit_has and fail_case are tests/lib/testnet.sh's; tn_probe sets
# NET_MISSING when this build cannot run a networked sandbox at all.
tn_probe

queries_before() { wc -l <"$TN/dns.queries"; }
http_hits() { grep -c 'GET /hello.txt' "$TN/http.log" 2>/dev/null || true; }

## ---- allowed traffic ------------------------------------------------------------
run_case http --allow-host www.example.test -- curl -sS -m 10 http://www.example.test/hello.txt
if [ "$RC" -eq 0 ] && grep -q boxy-testnet-marker "$C/out"; then
	ok "allowlisted HTTP reaches its host"
else
	fail_case "allowlisted HTTP reaches its host" "want the page from www.example.test"
fi
if grep -q "boxy: network destinations (1)" "$C/err" && grep -q "www.example.test" "$C/err"; then
	ok "the run ends with its destinations table"
else
	fail_case "the run ends with its destinations table" \
		"want 'boxy: network destinations (1)' and www.example.test on stderr"
fi

run_case https --allow-host www.example.test -- \
	curl -sS -m 10 --cacert ca.pem https://www.example.test/hello.txt
if [ "$RC" -eq 0 ] && grep -q boxy-testnet-marker "$C/out"; then
	ok "allowlisted HTTPS reaches its host (a real TLS server, the test CA)"
else
	fail_case "allowlisted HTTPS reaches its host (a real TLS server, the test CA)" \
		"want the page over TLS"
fi

run_case ipv6 --allow-host www.example.test -- curl -6 -sS -m 10 http://www.example.test/hello.txt
if [ "$RC" -eq 0 ] && grep -q boxy-testnet-marker "$C/out" && grep -q 'GET /hello.txt' "$TN/http6.log"; then
	ok "allowlisted HTTP over IPv6 (an AAAA binding) reaches its host"
else
	fail_case "allowlisted HTTP over IPv6 (an AAAA binding) reaches its host" \
		"want the page from [$TN_HTTP6]"
fi

run_case public --net public -- curl -sS -m 10 http://$TN_PUBLIC/hello.txt
if [ "$RC" -eq 0 ] && grep -q boxy-testnet-marker "$C/out"; then
	ok "public mode reaches a public address with no name"
else
	fail_case "public mode reaches a public address with no name" "want the page from $TN_PUBLIC"
fi

run_case hostsfile --allow-host hostsfile.example.test -- \
	curl -sS -m 10 http://hostsfile.example.test/hello.txt
if [ "$RC" -eq 0 ] && grep -q boxy-testnet-marker "$C/out" &&
	! grep -q '^hostsfile.example.test A$' "$TN/dns.queries"; then
	ok "a name from the host's /etc/hosts resolves without a DNS query"
else
	fail_case "a name from the host's /etc/hosts resolves without a DNS query" \
		"want the page from $TN_HOSTS and no A query for hostsfile.example.test"
fi

## ---- refusals ---------------------------------------------------------------------
hits=$(http_hits)
run_case hardcoded --allow-host www.example.test -- curl -sS -m 10 http://$TN_HTTP/hello.txt
if [ "$RC" -ne 0 ] && ! grep -q boxy-testnet-marker "$C/out" &&
	audit_has net.dns deny "tcp://$TN_HTTP:80" && [ "$(http_hits)" = "$hits" ]; then
	ok "a hardcoded IP is refused at net.dns (no binding), never dialled"
else
	fail_case "a hardcoded IP is refused at net.dns (no binding), never dialled" \
		"want a deny at net.dns for tcp://$TN_HTTP:80 and no request at the server"
fi

run_case unlisted --allow-host www.example.test -- curl -sS -m 10 http://unlisted.example.test/
if [ "$RC" -ne 0 ] && audit_has net.dns deny "unlisted.example.test" &&
	! grep -q '^unlisted.example.test' "$TN/dns.queries"; then
	ok "an unlisted name gets NXDOMAIN and never reaches the resolver"
else
	fail_case "an unlisted name gets NXDOMAIN and never reaches the resolver" \
		"want a deny at net.dns and no 'unlisted.example.test' in the resolver's log" \
		"resolver log: $(tr '\n' ' ' <"$TN/dns.queries")"
fi

run_case rebind --allow-host rebind.example.test -- curl -sS -m 10 http://rebind.example.test/hello.txt
if [ "$RC" -ne 0 ] && audit_has net.ip deny "$TN_PRIV" && ! grep -q "^10\.9\.0\.1 " "$TN/http.log"; then
	ok "a DNS answer with a private address is dropped (rebinding)"
else
	fail_case "a DNS answer with a private address is dropped (rebinding)" \
		"want a deny at net.ip naming $TN_PRIV, and no request at the private bait"
fi

run_case sni --allow-host www.example.test -- curl -sS -m 10 --cacert ca.pem \
	--connect-to other.example.test:443:www.example.test:443 https://other.example.test/hello.txt
if [ "$RC" -ne 0 ] && ! grep -q boxy-testnet-marker "$C/out" && audit_has net.sni deny "$TN_HTTP"; then
	ok "an SNI naming another host on a permitted address is refused at net.sni"
else
	fail_case "an SNI naming another host on a permitted address is refused at net.sni" \
		"want a deny at net.sni for tcp://$TN_HTTP:443"
fi

# A ClientHello with server_name www.example.test and an encrypted_client_hello
# extension (0xfe0d): whatever the outer name says, the inner one is hidden.
cat >"$TN/ech.py" <<'EOF'
import socket, struct, os
def ext(t, body): return struct.pack('!HH', t, len(body)) + body
name = b'www.example.test'
sni = ext(0, struct.pack('!HBH', len(name) + 3, 0, len(name)) + name)
ech = ext(0xfe0d, b'\x00' + os.urandom(40))
versions = ext(43, b'\x02\x03\x04')
groups = ext(10, b'\x00\x02\x00\x1d')
exts = sni + versions + groups + ech
body = b'\x03\x03' + os.urandom(32) + b'\x00' + b'\x00\x02\x13\x01' + b'\x01\x00' + \
       struct.pack('!H', len(exts)) + exts
hs = b'\x01' + struct.pack('!I', len(body))[1:] + body
rec = b'\x16\x03\x01' + struct.pack('!H', len(hs)) + hs
s = socket.create_connection(('www.example.test', 443), timeout=10)
s.sendall(rec)
try:
    print('reply bytes:', len(s.recv(100)))
except Exception as e:
    print('error:', e)
EOF
chmod 0644 "$TN/ech.py"
mkdir -p "$TN/cases/ech" && cp "$TN/ech.py" "$TN/cases/ech/ech.py"
run_case ech --allow-host www.example.test -- python3 ech.py
if audit_has net.sni deny "$TN_HTTP" && ! grep -q 'reply bytes: [1-9]' "$C/out"; then
	ok "a ClientHello offering ECH is refused at net.sni"
else
	fail_case "a ClientHello offering ECH is refused at net.sni" \
		"want a deny at net.sni for tcp://$TN_HTTP:443 and no TLS reply"
fi

# Half a ClientHello, a pause past boxy-net's name timeout (5 s), then the rest
# naming a host that is not permitted: the gateway gives up waiting with bytes
# in hand and must report the flow as malformed, never as "no name" (which is
# allowed on address and port alone). Whatever the rest says, nothing reaches
# the server.
cat >"$TN/half-hello.py" <<'EOF'
import socket, struct, os, time
def ext(t, body): return struct.pack('!HH', t, len(body)) + body
name = b'other.example.test'
sni = ext(0, struct.pack('!HBH', len(name) + 3, 0, len(name)) + name)
exts = sni + ext(43, b'\x02\x03\x04') + ext(10, b'\x00\x02\x00\x1d')
body = b'\x03\x03' + os.urandom(32) + b'\x00' + b'\x00\x02\x13\x01' + b'\x01\x00' + \
       struct.pack('!H', len(exts)) + exts
hs = b'\x01' + struct.pack('!I', len(body))[1:] + body
rec = b'\x16\x03\x01' + struct.pack('!H', len(hs)) + hs
s = socket.create_connection(('www.example.test', 443), timeout=15)
try:
    s.sendall(rec[:20])
    time.sleep(7)
    s.sendall(rec[20:])
    print('reply bytes:', len(s.recv(100)))
except Exception as e:
    print('error:', e)
EOF
chmod 0644 "$TN/half-hello.py"
mkdir -p "$TN/cases/half-hello" && cp "$TN/half-hello.py" "$TN/cases/half-hello/half-hello.py"
run_case half-hello --allow-host www.example.test -- python3 half-hello.py
if audit_has net.sni deny "incomplete ClientHello" && ! grep -q 'reply bytes: [1-9]' "$C/out"; then
	ok "half a ClientHello left past the name timeout is refused as malformed at net.sni"
else
	fail_case "half a ClientHello left past the name timeout is refused as malformed at net.sni" \
		"want a deny at net.sni saying malformed or incomplete, and no TLS reply"
fi

# Every private form, in public mode (the range check applies in every mode).
privs="$TN_PRIV $TN_META [64:ff9b::a09:5] [64:ff9b:1:a09:5::] [2002:a09:5::1] [::ffff:10.9.0.5] [2001:0:4136:e378:8000:63bf:f5f6:fffa] [fd00::5]"
hits_priv=$(grep -c -E '^(10\.9\.0\.1|169\.254\.169\.1) ' "$TN/http.log" || true)
run_case private --net public -- sh -c "for u in $privs; do curl -s -m 5 -o /dev/null -w '%{http_code}\n' http://\$u/hello.txt; done"
missing=
for u in $privs; do
	a=${u#[}
	a=${a%]}
	case $a in
	# The kernel sends an IPv4-mapped destination as IPv4 on the wire: it
	# reaches boxy-net as 10.9.0.5, refused a second time under that name.
	::ffff:*)
		[ "$(grep -F '"layer":"net.ip"' "$C/audit" | grep -cF "tcp://${a#::ffff:}:80")" -ge 2 ] ||
			missing="$missing $a" ;;
	*) audit_has net.ip deny "$a" || missing="$missing $a" ;;
	esac
done
if [ -z "$missing" ] && ! grep -q '^200' "$C/out" &&
	[ "$(grep -c -E '^(10\.9\.0\.1|169\.254\.169\.1) ' "$TN/http.log" || true)" = "$hits_priv" ]; then
	ok "private, metadata, NAT64, 6to4, mapped, Teredo and ULA destinations are refused at net.ip"
else
	fail_case "private, metadata, NAT64, 6to4, mapped, Teredo and ULA destinations are refused at net.ip" \
		"no deny at net.ip recorded for:$missing"
fi

run_case quic --allow-host www.example.test -- python3 -c '
import socket
a = socket.getaddrinfo("www.example.test", 443, socket.AF_INET)[0][4]
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.sendto(b"\xc0quic", a)
print("sent")'
if audit_has net.ip deny "udp://$TN_HTTP:443"; then
	ok "UDP/443 (QUIC) is refused in allowlist mode"
else
	fail_case "UDP/443 (QUIC) is refused in allowlist mode" "want a deny at net.ip for udp://$TN_HTTP:443"
fi

## ---- the exceptions -------------------------------------------------------------------
run_case cidr --net public --allow-cidr 10.9.0.0/24 -- curl -sS -m 10 http://$TN_PRIV/hello.txt
if [ "$RC" -eq 0 ] && grep -q boxy-testnet-marker "$C/out" && grep -qF '10.9.0.0/24' "$C/audit"; then
	ok "--allow-cidr opens exactly its prefix, and the audit log names it"
else
	fail_case "--allow-cidr opens exactly its prefix, and the audit log names it" \
		"want the page from $TN_PRIV and '10.9.0.0/24' in the audit log"
fi

run_case hostport --allow-host www.example.test:8080 -- sh -c \
	'curl -sS -m 10 http://www.example.test:8080/hello.txt; curl -sS -m 10 http://www.example.test/hello.txt; true'
if [ "$(grep -c boxy-testnet-marker "$C/out")" = 1 ] && audit_has net.ip deny "tcp://$TN_HTTP:80"; then
	ok "--allow-host HOST:PORT allows that port and refuses the others"
else
	fail_case "--allow-host HOST:PORT allows that port and refuses the others" \
		"want one page (from :8080) and a deny at net.ip for tcp://$TN_HTTP:80"
fi

## ---- what the user sees -------------------------------------------------------------
C=$TN/cases/watch
mkdir -p "$C" && chmod a+rwX "$C"
RC=0
id=$(cd "$C" && tn_boxy run -d --net public -- sh -c \
	"sleep 1; curl -s -m 3 http://$TN_META/; sleep 3" 2>"$C/err")
RC=$?
: >"$C/audit"
: >"$C/out"
if [ -n "$id" ]; then
	# watch follows the session to its end (about 4 s); 20 s is the backstop.
	(tn_boxy watch "$id" | grep deny >"$C/out") &
	wpid=$!
	for _ in $(seq 1 200); do kill -0 "$wpid" 2>/dev/null || break; sleep 0.1; done
	kill "$wpid" 2>/dev/null
	wait "$wpid" 2>/dev/null
fi
if grep -q "$TN_META" "$C/out"; then
	ok "boxy watch ID | grep deny shows the refusal"
else
	fail_case "boxy watch ID | grep deny shows the refusal" "session '$id': no deny line naming $TN_META"
fi

## ---- when boxy-net dies ----------------------------------------------------------
# SIGKILL the session's boxy-net mid-run (the payload is the same user, so a
# hostile one could do this too): the session is told and records how its
# network ended, the payload runs on without a network, and the daemon lives.
C=$TN/cases/netdeath
mkdir -p "$C" && chmod a+rwX "$C"
(cd "$C" && tn_boxy run --audit-log "$C/audit" --net public -- sh -c \
	"sleep 2; curl -sS -m 5 http://$TN_PUBLIC/hello.txt; echo payload-went-on" \
	>"$C/out" 2>"$C/err" </dev/null) &
bpid=$!
gw=
for _ in $(seq 1 100); do
	# The newest boxy-net in this suite's network namespace: this session's.
	gw=$(pgrep -n -x --ns $$ --nslist net boxy-net 2>/dev/null) && break
	sleep 0.05
done
[ -n "$gw" ] && kill -KILL "$gw"
wait "$bpid"
RC=$?
if [ -n "$gw" ] && grep -qF 'boxy-net was killed by signal 9' "$C/audit" &&
	grep -q payload-went-on "$C/out" && ! grep -q boxy-testnet-marker "$C/out"; then
	ok "a killed boxy-net is recorded with its signal, and the payload runs on offline"
else
	fail_case "a killed boxy-net is recorded with its signal, and the payload runs on offline" \
		"boxy-net pid '${gw}'; want 'boxy-net was killed by signal 9' in the audit log," \
		"'payload-went-on' and no page on stdout"
fi
run_case after-death --net public -- curl -sS -m 10 http://$TN_PUBLIC/hello.txt
if [ "$RC" -eq 0 ] && grep -q boxy-testnet-marker "$C/out"; then
	ok "... and the daemon serves the next networked run"
else
	fail_case "... and the daemon serves the next networked run" "want the page from $TN_PUBLIC"
fi

run_case pcap --allow-host www.example.test --pcap "$TN/cases/cap.pcap" -- \
	sh -c "curl -sS -m 10 http://www.example.test/hello.txt; curl -s -m 5 http://$TN_HTTP/ || true"
if command -v tshark >/dev/null; then
	arp=$(tshark -r "$TN/cases/cap.pcap" -Y arp 2>/dev/null | wc -l)
	dns=$(tshark -r "$TN/cases/cap.pcap" -Y dns 2>/dev/null | wc -l)
	rst=$(tshark -r "$TN/cases/cap.pcap" -Y "tcp.flags.reset == 1 && ip.src == $TN_HTTP" 2>/dev/null | wc -l)
	if [ "$RC" -eq 0 ] && [ "$arp" -gt 0 ] && [ "$dns" -gt 0 ] && [ "$rst" -gt 0 ]; then
		ok "--pcap opens in tshark with the ARP, the DNS and the refused SYN's reset"
	else
		fail_case "--pcap opens in tshark with the ARP, the DNS and the refused SYN's reset" \
			"frames: arp $arp, dns $dns, reset from $TN_HTTP $rst"
	fi
else
	fail_case "--pcap opens in tshark" "tshark is not installed"
fi

run_case netlog --allow-host www.example.test --net-log "$TN/cases/netlog.json" -- \
	sh -c "curl -sS -m 10 http://www.example.test/hello.txt; curl -s -m 5 http://$TN_HTTP/ || true"
cat >"$TN/netlog-check.py" <<'EOF'
import json, sys
d = json.load(open(sys.argv[1]))
assert d["version"] == 1, "version"
assert d["conn_fields"] == ["t_ms", "proto", "verdict", "addr", "port", "host", "sni",
                            "reason", "up", "down"], "conn_fields"
s = d["strings"]
assert all(isinstance(x, str) for x in s), "strings"
seen = set()
for c in d["conns"]:
    assert len(c) == 10, "conn arity"
    t, proto, verdict, addr, port, host, sni, reason, up, down = c
    assert isinstance(t, int) and t >= 0 and proto in ("tcp", "udp"), "t/proto"
    assert verdict in ("allow", "deny"), "verdict"
    for i in (addr, host, sni, reason):
        assert isinstance(i, int) and -1 <= i < len(s), "index"
    assert addr >= 0 and 0 <= port < 65536 and up >= 0 and down >= 0, "addr/port/bytes"
    assert (reason == -1) == (verdict == "allow"), "reason iff deny"
    seen.add((verdict, s[addr]))
assert ("allow", "93.184.216.34") in seen and ("deny", "93.184.216.34") in seen, "conns %r" % seen
assert "www.example.test" in d["resolutions"], "resolutions"
for row in d["summary"]:
    assert set(row) >= {"destination", "conns", "denied", "addrs", "sent", "received"}, "summary"
print("ok")
EOF
if [ -s "$TN/cases/netlog.json" ] &&
	python3 "$TN/netlog-check.py" "$TN/cases/netlog.json" >"$C/check" 2>&1; then
	ok "--net-log validates against its field list"
else
	fail_case "--net-log validates against its field list" "the check said: $(tail -n 1 "$C/check" 2>/dev/null)"
fi

done_testing
