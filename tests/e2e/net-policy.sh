#!/bin/bash
# tests/e2e/net-policy.sh — boxy's network end to end, inside the hermetic test network
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
here=$(cd "$(dirname "$0")/.." && pwd)
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

# The rebinding filter itself, not only the connect-time range check behind it
# (which alone would also refuse the connection): the answer the payload gets
# must not carry the private address, and the audit names the dropped answer.
run_case rebind --allow-host rebind.example.test -- sh -c \
	'getent ahostsv4 rebind.example.test; echo "getent=$?"; curl -sS -m 10 http://rebind.example.test/hello.txt'
if [ "$RC" -ne 0 ] && grep -q '^getent=2$' "$C/out" && ! grep -qF "$TN_PRIV" "$C/out" &&
	audit_has net.ip deny "answered with $TN_PRIV, in the private" &&
	! grep -q "^10\.9\.0\.1 " "$TN/http.log"; then
	ok "a DNS answer with a private address is dropped (rebinding)"
else
	fail_case "a DNS answer with a private address is dropped (rebinding)" \
		"want no $TN_PRIV in the payload's DNS answer (getent exit 2), an audit line" \
		"'answered with $TN_PRIV, in the private (RFC 1918) range: dropped' at net.ip, and no request at the private bait" \
		"payload: $(tr '\n' ' ' <"$C/out")"
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

# Silence past the name timeout makes a flow "no name" (a server that speaks
# first), allowed on address and port alone. Its first bytes must still be
# unnamed: a payload that waits 5 s and then sends a request naming another
# host (one sharing the address, as on a CDN) is reset before a byte goes
# upstream. The same wait followed by bytes that are not TLS or HTTP still
# reaches the server (the test server answers them with an error page).
cat >"$TN/silent.py" <<'EOF2'
import socket, threading, time
out = {}
def conn(tag, data):
    try:
        s = socket.create_connection(('www.example.test', 80), timeout=20)
        time.sleep(6.5)
        s.sendall(data)
        out[tag] = s.recv(100)
    except Exception as e:
        out[tag] = 'error: %s' % e
ts = [threading.Thread(target=conn, args=a) for a in (
    ('named', b'GET /silent-named HTTP/1.1\r\nHost: other.example.test\r\n\r\n'),
    ('tls', b'\x16\x03\x01\x00\x05\x01\x00\x00\x01\x00'),
    ('unnamed', b'HELO silent-unnamed\r\n'))]
for t in ts: t.start()
for t in ts: t.join()
for k in sorted(out): print(k, repr(out[k][:20]))
EOF2
chmod 0644 "$TN/silent.py"
mkdir -p "$TN/cases/silent" && cp "$TN/silent.py" "$TN/cases/silent/silent.py"
run_case silent --allow-host www.example.test -- sh -c \
	'python3 silent.py; curl -sS -m 10 http://www.example.test/hello.txt'
if grep -q "^named 'error" "$C/out" && grep -q "^tls 'error" "$C/out" &&
	grep -q "^unnamed b'<" "$C/out" && ! grep -q 'silent-named' "$TN/http.log" &&
	grep -q 'silent-unnamed' "$TN/http.log" && grep -q boxy-testnet-marker "$C/out"; then
	ok "a flow silent past the name timeout that then sends TLS or HTTP is reset"
else
	fail_case "a flow silent past the name timeout that then sends TLS or HTTP is reset" \
		"want named and tls reset, the unnamed bytes answered (an error page), then the page"
fi

# Python's http.server (the test server) splits its request line with
# str.split(): leading whitespace, or \x1c-\x1f between the words, still make
# a request to it. Each must be refused as malformed, not passed as "not HTTP".
cat >"$TN/ws.py" <<'EOF2'
import socket
for i, req in enumerate([b' GET /ws-0 HTTP/1.1\r\n', b'\x1cGET /ws-1 HTTP/1.1\r\n',
                         b'GET\x1f/ws-2 HTTP/1.1\r\n', b'GET\x1f/ws-3\x1fHTTP/1.1\r\n']):
    try:
        s = socket.create_connection(('www.example.test', 80), timeout=10)
        s.sendall(req + b'Host: other.example.test\r\nConnection: close\r\n\r\n')
        print(i, repr(s.recv(20)))
    except Exception as e:
        print(i, 'error:', e)
EOF2
chmod 0644 "$TN/ws.py"
mkdir -p "$TN/cases/ws" && cp "$TN/ws.py" "$TN/cases/ws/ws.py"
run_case ws --allow-host www.example.test -- sh -c \
	'python3 ws.py; curl -sS -m 10 http://www.example.test/hello.txt'
if [ "$(grep -c '^[0-9] error' "$C/out")" = 4 ] && ! grep -q 'ws-[0-9]' "$TN/http.log" &&
	[ "$(grep -cF 'malformed' "$C/audit")" -ge 4 ] && grep -q boxy-testnet-marker "$C/out"; then
	ok "a request line with leading whitespace or odd separators is refused as malformed"
else
	fail_case "a request line with leading whitespace or odd separators is refused as malformed" \
		"want four resets, four malformed denials, no /ws- request at the server, then the page"
fi

# An SSLv2-format ClientHello (no SNI; some servers still take it) whose
# first byte is sent alone: the gateway must wait for the third byte, which
# says it is a hello, rather than call one high byte "not TLS" (a flow with
# no name, allowed on address and port).
run_case sslv2 --allow-host www.example.test -- python3 -c '
import socket, time
s = socket.create_connection(("www.example.test", 443), timeout=10)
s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
s.sendall(b"\x80")
time.sleep(0.5)
try:
    s.sendall(b"\x2e\x01\x03\x01\x00\x15\x00\x00\x00\x10" + bytes(21) + bytes(16))
    print("reply bytes:", len(s.recv(100)))
except Exception as e:
    print("error:", e)'
if audit_has net.sni deny "tcp://$TN_HTTP:443" && ! audit_has net.dns allow "tcp://$TN_HTTP:443"; then
	ok "an SSLv2-format hello whose first byte comes alone is refused at net.sni"
else
	fail_case "an SSLv2-format hello whose first byte comes alone is refused at net.sni" \
		"want a deny at net.sni for tcp://$TN_HTTP:443, and no allow"
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

## ---- exhaustion ------------------------------------------------------------------
# Every dialled flow is a descriptor in boxy-net, passed with its verdict. At
# the usual soft limit of 1024 the 1018th was dropped by the kernel
# (MSG_CTRUNC) and boxy-net exited, ending the session's network. 1100
# connections held open (to a server that accepts and keeps them) must leave
# the network working.
cat >"$TN/holder.py" <<'EOF2'
import resource, socket, sys
soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
resource.setrlimit(resource.RLIMIT_NOFILE, (min(hard, 4096), hard))
s = socket.socket()
s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind((sys.argv[1], 9000))
s.listen(4096)
keep = []
while True:
    keep.append(s.accept()[0])
EOF2
cat >"$TN/hold.py" <<'EOF2'
import resource, socket, sys
soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
resource.setrlimit(resource.RLIMIT_NOFILE, (min(hard, 4096), hard))
keep = []
try:
    for i in range(1100):
        keep.append(socket.create_connection((sys.argv[1], 9000), timeout=10))
except Exception as e:
    print('connection', len(keep), 'failed:', e)
print('held', len(keep))
EOF2
chmod 0644 "$TN/holder.py" "$TN/hold.py"
tn_start holder python3 "$TN/holder.py" "$TN_PUBLIC"
tn_wait_tcp "$TN_PUBLIC" 9000
mkdir -p "$TN/cases/fds" && cp "$TN/hold.py" "$TN/cases/fds/hold.py"
run_case fds --net public -- sh -c \
	"python3 hold.py $TN_PUBLIC; curl -sS -m 10 http://$TN_PUBLIC/hello.txt"
if [ "$RC" -eq 0 ] && grep -q '^held 1100' "$C/out" && grep -q boxy-testnet-marker "$C/out" &&
	! grep -q 'boxy-net exited' "$C/audit"; then
	ok "1100 connections held open (a descriptor each in boxy-net) leave the network working"
else
	fail_case "1100 connections held open (a descriptor each in boxy-net) leave the network working" \
		"want 'held 1100', then the page, and boxy-net still running" \
		"$(grep -o 'boxy-net exited[^"]*' "$C/audit" | head -n 1)"
fi

# Each upstream connect in progress holds one of the daemon's descriptors,
# which all sessions share (a soft limit of 1024 is common). 400 connects at
# once to an address nobody answers (no ARP reply: each takes about 3 s to
# fail) must not take 400 of them: past 256 in progress a session's dials
# wait their turn. Once they have failed, the next connection is dialled.
C=$TN/cases/dials
mkdir -p "$C" && chmod a+rwX "$C"
(cd "$C" && tn_boxy run --audit-log "$C/audit" --net public -- sh -c "python3 -c '
import socket, time
keep = []
for port in range(1, 401):
    s = socket.socket(); s.setblocking(False)
    try: s.connect((\"93.184.216.99\", port))
    except BlockingIOError: pass
    keep.append(s)
time.sleep(2)'; sleep 6; curl -sS -m 10 http://$TN_PUBLIC/hello.txt" \
	>"$C/out" 2>"$C/err" </dev/null) &
bpid=$!
daemon=$(pgrep -n --ns $$ --nslist net -f '^boxy daemon serve')
maxfd=0
while kill -0 "$bpid" 2>/dev/null; do
	n=$(ls "/proc/$daemon/fd" 2>/dev/null | wc -l)
	[ "$n" -gt "$maxfd" ] && maxfd=$n
	sleep 0.1
done
wait "$bpid"
RC=$?
if [ "$RC" -eq 0 ] && grep -q boxy-testnet-marker "$C/out" && [ -n "$daemon" ] &&
	[ "$maxfd" -gt 0 ] && [ "$maxfd" -lt 350 ]; then
	ok "connects in progress are capped per session, then the next is dialled"
	diag "the daemon held at most $maxfd descriptors"
else
	fail_case "connects in progress are capped per session, then the next is dialled" \
		"daemon '$daemon' held at most $maxfd descriptors (want under 350), and want the page"
fi

## ---- what the user sees -------------------------------------------------------------
watch_denials watch "http://$TN_META/"
if grep -q "$TN_META" "$C/out"; then
	ok "boxy watch ID | grep deny shows the refusal"
else
	fail_case "boxy watch ID | grep deny shows the refusal" \
		"session '$WATCH_ID': no deny line naming $TN_META"
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
assert d["version"] == 3, "version"
who_fields = ["pid", "comm", "argv0", "package", "version", "script", "via", "claimed"]
assert d["conn_fields"] == ["t_ms", "proto", "verdict", "addr", "port", "host", "sni",
                            "reason", "up", "down"] + who_fields, "conn_fields"
assert d["query_fields"] == ["t_ms", "name", "type", "verdict"] + who_fields, "query_fields"
s = d["strings"]
assert all(isinstance(x, str) for x in s), "strings"

def who(row):
    pid, comm, argv0, package, version, script, via, claimed = row
    assert pid is None or (isinstance(pid, int) and pid >= 0), "pid"
    for i in (comm, argv0, package, version, script, via):
        assert isinstance(i, int) and -1 <= i < len(s), "who index"
    assert isinstance(claimed, bool), "claimed"
    return s[comm] if pid else None

seen = set()
makers = set()
for c in d["conns"]:
    assert len(c) == 18, "conn arity"
    t, proto, verdict, addr, port, host, sni, reason, up, down = c[:10]
    assert isinstance(t, int) and t >= 0 and proto in ("tcp", "udp"), "t/proto"
    assert verdict in ("allow", "deny"), "verdict"
    for i in (addr, host, sni, reason):
        assert isinstance(i, int) and -1 <= i < len(s), "index"
    assert addr >= 0 and 0 <= port < 65536 and up >= 0 and down >= 0, "addr/port/bytes"
    assert (reason == -1) == (verdict == "allow"), "reason iff deny"
    seen.add((verdict, s[addr]))
    makers.add(who(c[10:]))
for q in d["queries"]:
    assert len(q) == 12 and q[3] in ("allow", "deny"), "query"
    who(q[4:])
assert d["request_fields"] == ["t_ms", "seq", "conn", "method", "host", "port", "path", "query",
                               "verdict", "reason", "rule"], "request_fields"
for r in d["requests"]:
    assert len(r) == 11 and r[8] in ("allow", "deny"), "request"
    assert 0 <= r[2] < len(d["conns"]), "a request's connection"
assert any(s[r[6]] == "/hello.txt" for r in d["requests"]), "the gated request"
# Best effort (doc/attribution.md): a short permitted connection may be unknown, never another's.
assert "curl" in makers and makers <= {"curl", None}, "who made the connections: %r" % makers
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

## ---- the suite's own guard -------------------------------------------------------
# A run that never ends fails its case within TN_CASE_TIMEOUT instead of holding the suite.
t0=$(date +%s)
TN_CASE_TIMEOUT=3 run_case hang --net none -- sleep 59.7
t1=$(date +%s)
if [ "$RC" = 124 ] && [ $((t1 - t0)) -lt 30 ] && grep -q 'still running after 3 s: stopped' "$C/err"; then
	ok "run_case stops a run that outlives TN_CASE_TIMEOUT and says so"
else
	fail_case "run_case stops a run that outlives TN_CASE_TIMEOUT and says so" \
		"want RC 124 within 30 s and the line on stderr (RC $RC after $((t1 - t0)) s)"
fi
for _ in 1 2 3 4 5 6 7 8 9 10; do
	pgrep -u "$(id -u)" -f 'sleep 59[.]7$' >/dev/null || break
	sleep 0.5
done
if ! pgrep -u "$(id -u)" -f 'sleep 59[.]7$' >/dev/null; then
	ok "the stopped run's payload is gone too"
else
	fail_case "the stopped run's payload is gone too" "a 'sleep 59.7' is still running 5 s later"
fi

done_testing
