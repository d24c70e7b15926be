#!/bin/sh
# net-e2e.sh — boxy-net end to end, without the daemon: a fake broker
# (fake-broker.c) creates tap0 in a sandbox network namespace, runs
# boxy-net on it and dials every permitted flow to 127.0.0.1/::1 at the
# requested port. Everything runs inside a user + network namespace this
# script creates (unshare -Urnmp): the test's namespace has only lo, so no
# packet can leave the machine whatever boxy-net does.
#
#   BOXY_BUILDDIR=/path/to/build tests/net/net-e2e.sh        (TAP output)
#   BOXY_NET_BENCH=1 ...                                       adds iperf3 both ways
set -u

: "${BOXY_BUILDDIR:=$(pwd)}"
: "${BOXY_SRCDIR:=$(cd "$(dirname "$0")/../.." && pwd)}"
NET=$BOXY_BUILDDIR/boxy-net
BROKER=$BOXY_BUILDDIR/tests/net/fake-broker
FRAMES=$BOXY_SRCDIR/tests/net/frames.py

if [ "${BOXY_NET_E2E_INSIDE:-}" != 1 ]; then
	for tool in unshare nsenter ip curl python3; do
		command -v $tool >/dev/null 2>&1 || { echo "1..0 # SKIP $tool is missing"; exit 0; }
	done
	[ -x "$NET" ] && [ -x "$BROKER" ] || { echo "1..0 # SKIP build boxy-net and tests/net/fake-broker first"; exit 0; }
	unshare -Urnmp --fork true 2>/dev/null || { echo "1..0 # SKIP no user+network+pid namespaces"; exit 0; }
	# A pid namespace too: when the script ends, however it ends, every
	# server, broker and boxy-net it started dies with it.
	BOXY_NET_E2E_INSIDE=1 exec unshare -Urnmp --fork --mount-proc --kill-child -- "$0" "$@"
fi

# From here on we are root in a fresh user+network namespace. Refuse to go
# on if this namespace has anything but lo: the hermeticity guarantee.
if ip -o link show | grep -v ': lo:' | grep -q .; then
	echo "Bail out! not in a fresh network namespace"
	exit 1
fi
ip link set lo up

T=$(mktemp -d)
n=0
fails=0
pids=""
ok() { n=$((n + 1)); echo "ok $n - $1"; }
nok() { n=$((n + 1)); fails=$((fails + 1)); echo "not ok $n - $1"; }
check() { desc=$1; shift; if "$@" >"$T/out" 2>&1; then ok "$desc"; else nok "$desc"; sed 's/^/# /' "$T/out"; fi; }
cleanup() { for p in $pids; do kill "$p" 2>/dev/null; done; wait 2>/dev/null; rm -rf "$T"; }
trap cleanup EXIT

# Test servers, in the test's namespace only.
mkdir -p "$T/www" && echo "hello through boxy-net" > "$T/www/hello.txt"
head -c 3000000 /dev/urandom > "$T/www/big.bin"
# (a deep accept backlog: the fake broker dials synchronously, one flow at a time)
(cd "$T/www" && exec python3 -c '
import http.server, socket
class Server(http.server.ThreadingHTTPServer):
    address_family = socket.AF_INET6
    request_queue_size = 1024
Server(("::", 8000), http.server.SimpleHTTPRequestHandler).serve_forever()' >/dev/null 2>&1) &
pids="$pids $!"
python3 -c '
import socket
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM); s.bind(("127.0.0.1", 7777))
while True:
    d, a = s.recvfrom(65535); s.sendto(d.upper(), a)' & pids="$pids $!"
for _ in $(seq 50); do curl -s -o /dev/null http://127.0.0.1:8000/ && break; sleep 0.1; done

# start_sandbox NAME [fake-broker options]: a sandbox netns with tap0 configured as stage 1 does.
start_sandbox() {
	name=$1; shift
	unshare -n sleep 100000 & spid=$!; pids="$pids $spid"
	sleep 0.2
	"$BROKER" --netns /proc/$spid/ns/net "$@" "$NET" > "$T/$name.log" 2>&1 & bpid=$!; pids="$pids $bpid"
	for _ in 1 2 3 4 5 6 7 8 9 10; do
		nsenter -t $spid -n ip link show tap0 >/dev/null 2>&1 && break
		sleep 0.2
	done
	nsenter -t $spid -n sh -e -c '
		ip link set lo up
		sysctl -qw net.ipv6.conf.tap0.accept_ra=0 2>/dev/null || true
		ip link set tap0 up
		ip addr add 10.0.2.15/24 dev tap0
		ip route add default via 10.0.2.2
		ip -6 addr add fd00:b0c5::15/64 dev tap0 nodad
		ip -6 route add default via fd00:b0c5::2'
	eval "${name}_pid=$spid ${name}_broker=$bpid"
}
in_sb() { nsenter -t "$sb_pid" -n "$@"; }

start_sandbox sb --refuse-port 8001 --pcap "$T/cap.pcap"
log=$T/sb.log
netpid=$(sed -n 's/^started boxy-net pid //p' "$log")

check "boxy-net runs under its seccomp filter with no_new_privs (the rest: test-net-gw)" \
	sh -c "grep -q '^Seccomp:[[:space:]]*2' /proc/$netpid/status && grep -q '^NoNewPrivs:[[:space:]]*1' /proc/$netpid/status"
check "the gateway answers ping on both families (ICMP echo to the gateway is passed to lwIP)" \
	sh -c "nsenter -t $sb_pid -n python3 '$FRAMES' ping 10.0.2.2 && nsenter -t $sb_pid -n python3 '$FRAMES' ping fd00:b0c5::2"
check "ping to any other address is dropped, not answered for it" \
	sh -c "! nsenter -t $sb_pid -n python3 '$FRAMES' ping 93.184.216.34"
check "HTTP to a public-looking IPv4 address reaches the test server through lwIP" \
	sh -c "nsenter -t $sb_pid -n curl -sS --max-time 10 http://93.184.216.34:8000/hello.txt | grep -qx 'hello through boxy-net'"
check "HTTP over IPv6 (fd00:b0c5::15 → 2001:db8::80) works too" \
	sh -c "nsenter -t $sb_pid -n curl -sS --max-time 10 'http://[2001:db8::80]:8000/hello.txt' | grep -qx 'hello through boxy-net'"
check "a 3 MB download arrives intact" \
	sh -c "nsenter -t $sb_pid -n curl -sS --max-time 20 http://198.51.100.7:8000/big.bin | cmp - '$T/www/big.bin'"
# Uploads: 8 MB the sandbox writes arrive intact (TSO segments of 64 KiB, each
# handed to lwIP in the pbuf it was read into).
python3 -c '
import hashlib, socket, sys
s = socket.socket(); s.bind(("127.0.0.1", 7002)); s.listen(4)
c, _ = s.accept(); h = hashlib.sha256()
while True:
    b = c.recv(1 << 20)
    if not b: break
    h.update(b)
open(sys.argv[1], "w").write(h.hexdigest() + "\n")' "$T/up.got" & pids="$pids $!"
sleep 0.3
in_sb python3 -c '
import hashlib, random, socket
r = random.Random(7); data = bytes(r.getrandbits(8) for _ in range(1 << 16)) * 128
c = socket.create_connection(("198.51.100.7", 7002)); c.sendall(data); c.close()
print(hashlib.sha256(data).hexdigest())' >"$T/up.sent" 2>&1
for _ in 1 2 3 4 5 6 7 8 9 10; do [ -s "$T/up.got" ] && break; sleep 0.3; done
check "an 8 MB upload arrives intact" cmp "$T/up.sent" "$T/up.got"
check "the broker was asked before the dial (open … then dialled)" \
	sh -c "grep -q '^open [0-9]* tcp 93.184.216.34 port 8000 from 10.0.2.15' '$log' && grep -q '^dialled' '$log'"
nsenter -t $sb_pid -n curl -sS --max-time 10 http://203.0.113.9:8001/ >"$T/refused.out" 2>&1
rc=$?
check "a refused flow is answered with a RST: curl cannot connect (rc 7, got $rc)" \
	sh -c "[ $rc = 7 ]"
check "... and nothing was dialled for it" \
	sh -c "id=\$(sed -n 's/^open \([0-9]*\) tcp 203.0.113.9 port 8001.*/\1/p' '$log' | head -1); [ -n \"\$id\" ] && grep -q \"^refused \$id port\" '$log' && ! grep -q \"^dialled \$id\$\" '$log'"
check "DNS over UDP to the gateway reaches NET_RESOLVE and is answered" \
	sh -c "nsenter -t $sb_pid -n python3 '$FRAMES' dns-udp 10.0.2.2 example.test 1 | grep -qx 'rcode=0 answers=192.0.2.10'"
check "DNS over UDP to 8.8.8.8 is intercepted the same way" \
	sh -c "nsenter -t $sb_pid -n python3 '$FRAMES' dns-udp 8.8.8.8 pkg.test 28 | grep -qx 'rcode=0 answers=2001:db8::10'"
check "an unlisted name gets NXDOMAIN" \
	sh -c "nsenter -t $sb_pid -n python3 '$FRAMES' dns-udp 8.8.8.8 other.example 1 | grep -qx 'rcode=3 answers='"
check "DNS over TCP to 8.8.8.8 is intercepted" \
	sh -c "nsenter -t $sb_pid -n python3 '$FRAMES' dns-tcp 8.8.8.8 tcp.test 1 | grep -qx 'rcode=0 answers=192.0.2.10'"
check "DNS over IPv6 to the gateway is intercepted" \
	sh -c "nsenter -t $sb_pid -n python3 '$FRAMES' dns-udp fd00:b0c5::2 six.test 1 | grep -qx 'rcode=0 answers=192.0.2.10'"
check "every DNS query became NET_RESOLVE, and none was a flow to port 53" \
	sh -c "[ \$(grep -c '^resolve ' '$log') -ge 5 ] && ! grep -q 'port 53 from' '$log'"
check "UDP to any address is a flow, dialled and spliced both ways" \
	sh -c "nsenter -t $sb_pid -n python3 '$FRAMES' udp-echo 203.0.113.7 7777 ping | grep -qx PING"
check "ARP and neighbour discovery resolve the gateway to 02:b0:c5:00:00:02" \
	sh -c "nsenter -t $sb_pid -n ip neigh show 10.0.2.2 | grep -q 02:b0:c5:00:00:02 && nsenter -t $sb_pid -n ip -6 neigh show fd00:b0c5::2 | grep -q 02:b0:c5:00:00:02"
check "hostile frames can be written to tap0" \
	nsenter -t $sb_pid -n python3 "$FRAMES" hostile tap0
sleep 0.5
check "boxy-net is alive after spoofed-source, src==dst, loopback and broadcast frames" \
	kill -0 "$netpid"
check "... and still serves connections" \
	sh -c "nsenter -t $sb_pid -n curl -sS --max-time 10 http://93.184.216.34:8000/hello.txt | grep -qx 'hello through boxy-net'"
check "a hand-made IPv6 DNS query was answered here, one to a mapped address dropped" \
	sh -c "grep -q '^resolve [0-9]* raw.test 1' '$log' && ! grep -q ' m.test ' '$log'"
check "none of the hostile SYNs reached the broker" \
	sh -c "! grep -Eq 'port (80|53) from' '$log'"
sleep 1
check "byte counters were reported (FLOW_STATS) and flows closed with totals (FLOW_CLOSE)" \
	sh -c "grep -q '^stats ' '$log' && grep -Eq '^close [0-9]+ up [1-9][0-9]* down [1-9][0-9]*' '$log'"

# Closing the broker socket ends boxy-net.
kill "$sb_broker" 2>/dev/null
sleep 0.5
# (the fake broker is gone, so nobody may reap boxy-net: a zombie has exited)
check "boxy-net exits when the broker socket closes" \
	sh -c "! grep -Eq '^State:[[:space:]]*[RSD]' /proc/$netpid/status 2>/dev/null"

if command -v tshark >/dev/null 2>&1; then
	check "the capture opens in tshark" tshark -r "$T/cap.pcap" -c 1
	check "it holds the ARP exchange, the DNS queries and the RST that refused port 8001" \
		sh -c "tshark -r '$T/cap.pcap' -Y arp | grep -q . && tshark -r '$T/cap.pcap' -Y dns | grep -q . && tshark -r '$T/cap.pcap' -Y 'tcp.flags.reset==1 && tcp.srcport==8001' | grep -q ."
else
	check "the capture has a pcap header (no tshark)" \
		sh -c "od -An -tx1 -N4 '$T/cap.pcap' | grep -Eq 'd4 c3 b2 a1|a1 b2 c3 d4'"
	ok "# SKIP tshark is missing"
fi

# Allowlist mode: the flow is named by its first bytes before it is dialled.
start_sandbox al --need-name --refuse-name bad.test
log=$T/al.log
sb_pid=$al_pid
check "allowlist: HTTP with Host: good.test is named and then dialled" \
	sh -c "nsenter -t $sb_pid -n curl -sS --max-time 10 -H 'Host: good.test' http://192.0.2.10:8000/hello.txt | grep -qx 'hello through boxy-net' && grep -q '^name [0-9]* host ech=0 good.test' '$log'"
check "allowlist: a refused name resets the connection after the handshake" \
	sh -c "! nsenter -t $sb_pid -n curl -sS --max-time 10 -H 'Host: bad.test' http://192.0.2.10:8000/hello.txt && grep -q '^refused [0-9]* name' '$log'"
check "allowlist: a TLS ClientHello is named by its SNI" \
	sh -c "nsenter -t $sb_pid -n curl -s --max-time 5 --resolve sni.test:8000:192.0.2.10 https://sni.test:8000/ >/dev/null 2>&1; grep -q '^name [0-9]* sni ech=0 sni.test' '$log'"

# The upload budget (GW_UP_BUDGET): 600 connections to a server that accepts
# and never reads, each written as fast as the sandbox can. lwIP takes 64 KiB
# a flow; without the budget boxy-net held all of it (about 40 MiB here, 205 MiB
# at 3000 flows). Its peak RSS stays under 16 MiB; while the queued bytes wait
# the sandbox's other uploads wait too (its own doing), and once the server's
# connections end boxy-net serves again.
python3 -c '
import socket, time
s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
s.bind(("127.0.0.1", 7001)); s.listen(1024); held = []
while True:
    c, _ = s.accept(); held.append(c)' & sink=$!; pids="$pids $sink"
start_sandbox flood --sndbuf 4096
sb_pid=$flood_pid
floodnet=$(sed -n 's/^started boxy-net pid //p' "$T/flood.log")
in_sb python3 -c '
import select, socket, sys, time
socks = []
for i in range(600):
    c = socket.socket(); c.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, 65536)
    c.setblocking(False)
    try: c.connect(("192.0.2.77", 7001))
    except BlockingIOError: pass
    socks.append(c)
buf = b"u" * 65536; end = time.time() + 6; sent = 0
while time.time() < end and socks:
    _, w, _ = select.select([], socks, [], 0.2)
    for c in w:
        try: sent += c.send(buf)
        except BlockingIOError: pass
        except OSError: socks.remove(c)
print("flood sent", sent, "bytes on", len(socks), "connections")' >"$T/flood.out" 2>&1
hwm=$(awk '/^VmHWM:/ { print $2 }' "/proc/$floodnet/status" 2>/dev/null)
if ldd "$NET" 2>/dev/null | grep -q libasan; then
	# AddressSanitizer keeps what boxy-net frees in its quarantine and pads every
	# allocation (31 MiB here with the budget): the bound is the plain build's to
	# check; here the flood must run and boxy-net live through it, held by the budget.
	limit=$((1024 * 1024)) what="boxy-net lives (sanitized: its quarantine keeps freed memory)"
else
	limit=16384 what="boxy-net peak RSS ${hwm:-?} kB < 16 MiB"
fi
check "upload flood (600 connections never read upstream): $what" \
	sh -c "[ -n '$hwm' ] && [ '$hwm' -lt $limit ] && kill -0 $floodnet &&
		grep -q '^flood sent [1-9]' '$T/flood.out'"
check "... the budget was what held it (said once in the log)" \
	grep -q 'upload budget reached' "$T/flood.log"
# The server goes away: its connections end, the queued bytes are dropped with
# them, and the budget is whole again (the count went back down).
kill "$sink"
sleep 1
check "... and boxy-net serves a new connection once the flood's are gone" \
	sh -c "nsenter -t $sb_pid -n curl -sS --max-time 10 http://93.184.216.34:8000/hello.txt | grep -qx 'hello through boxy-net'"

# Throughput (not a test: a figure), in a sandbox without a capture.
if [ "${BOXY_NET_BENCH:-}" = 1 ] && command -v iperf3 >/dev/null; then
	start_sandbox bench
	sb_pid=$bench_pid
	iperf3 -s -p 5201 >/dev/null 2>&1 & pids="$pids $!"
	sleep 0.5
	up=$(in_sb iperf3 -c 192.0.2.50 -p 5201 -t 5 -f g 2>&1 | awk '/receiver/ {print $(NF-2)}')
	down=$(in_sb iperf3 -c 192.0.2.50 -p 5201 -t 5 -R -f g 2>&1 | awk '/receiver/ {print $(NF-2)}')
	echo "# iperf3 through boxy-net: sandbox→server ${up:-?} Gbit/s, server→sandbox ${down:-?} Gbit/s"
fi

echo "1..$n"
[ $fails = 0 ]
