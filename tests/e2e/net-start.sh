#!/bin/bash
# tests/e2e/net-start.sh — the network's start (doc/internals-net.md, "The
# start"), inside the hermetic test network.
#
# The daemon starts the broker and boxy-net as soon as tap0 comes back from
# stage "net", while boxy-init mounts; the payload never waits for them, so
# what it sends first waits in tap0's queue until a boxy-net reads it. That
# wait must cost nothing but time: a connection made at the payload's first
# instant works, a refused one is still refused, the capture still holds
# the first frames. BOXY_NET_HOLD_MS in the run's environment (the test's
# knob) starts the network that much later, so that the payload's first
# frames certainly come before any boxy-net exists. A network that cannot
# start fails the run with one line and status 125, whether that is found
# before the payload started or after.
set -u
here=$(cd "$(dirname "$0")/.." && pwd)
. "$here/lib/harness.sh"
. "$here/lib/testnet.sh"
harness_locate
[ "${BOXY_TESTNET_INSIDE:-}" = 1 ] || harness_as_test_user "$0" "$@"
testnet_enter "$0" "$@"
testnet_setup
tn_probe

# hrun HOLD-MS CASE BOXY-RUN-ARGS...: run_case with BOXY_NET_HOLD_MS set for the run (0: unset).
hrun() {
	local h=$1
	C=$TN/cases/$2
	shift 2
	mkdir -p "$C" && chmod -R a+rwX "$C"
	(cd "$C" && tn_user env ${h:+BOXY_NET_HOLD_MS=$h} HOME="$TN/home" XDG_RUNTIME_DIR="$TN/run" \
		XDG_STATE_HOME="$TN/state" "$BOXY" run --audit-log "$C/audit" "$@" \
		>"$C/out" 2>"$C/err" </dev/null)
	RC=$?
}

# 1. The payload's first instant, before any boxy-net: its DNS query and SYN
# wait in tap0 and are served once boxy-net starts 700 ms later.
hrun 700 first --net public --pcap cap.pcap -- curl -sS -m 20 -o /dev/null \
	-w '%{http_code} %{time_connect}\n' http://www.example.test/hello.txt
read -r code tconn <"$C/out" 2>/dev/null
if [ "$RC" -eq 0 ] && [ "${code:-}" = 200 ] &&
	awk -v t="${tconn:-0}" 'BEGIN { exit !(t >= 0.6) }'; then
	ok "a connection made before boxy-net exists waits in tap0 and works (connected after ${tconn}s)"
else
	fail_case "a connection made before boxy-net exists waits in tap0 and works" \
		"want 200 and a connect time of at least 0.6 s (boxy-net held 0.7 s), got RC $RC, '$code $tconn'"
fi
# The capture still holds the frames sent before boxy-net read any: the ARP
# for the gateway and the SYN to port 80 (one queue with --pcap).
frames=$(python3 - "$C/cap.pcap" <<'EOF' 2>&1
import struct, sys
d = open(sys.argv[1], "rb").read()
off, arp, syn = 24, 0, 0
while off + 16 <= len(d):
    incl = struct.unpack_from("<I", d, off + 8)[0]
    f = d[off + 16:off + 16 + incl]
    off += 16 + incl
    if len(f) >= 14 and f[12:14] == b"\x08\x06":
        arp += 1
    if len(f) >= 54 and f[12:14] == b"\x08\x00" and f[23] == 6:
        ihl = (f[14] & 15) * 4
        dport, flags = struct.unpack_from(">H", f, 14 + ihl + 2)[0], f[14 + ihl + 13]
        if dport == 80 and flags & 0x12 == 0x02:
            syn += 1
print(arp, syn)
EOF
)
if [ "${frames%% *}" -ge 1 ] 2>/dev/null && [ "${frames##* }" -ge 1 ] 2>/dev/null; then
	ok "... and the capture holds the ARP and the SYN sent before boxy-net started ($frames)"
else
	fail_case "... and the capture holds the ARP and the SYN sent before boxy-net started" \
		"want at least one ARP and one SYN to port 80 in cap.pcap, got '$frames'"
fi

# 2. What waits in tap0 is filtered like everything else: a connection to the
# private bait made while no boxy-net runs is refused once one does, and
# nothing reaches the bait.
hrun 700 bait --net public -- curl -sS -m 20 http://$TN_PRIV/held-bait.txt
if [ "$RC" -ne 0 ] && ! grep -q held-bait "$TN/http.log" && grep -q '"verdict":"deny"' "$C/audit"; then
	ok "a connection to a private address made before boxy-net exists is refused when it starts"
else
	fail_case "a connection to a private address made before boxy-net exists is refused when it starts" \
		"want curl to fail, a deny in the audit and no held-bait request at the bait (RC $RC)"
fi

# 3. A boxy-net that cannot start (a capture cap smaller than the pcap header:
# boxy-net exits 1 before its lockdown) fails the run with one line; before,
# the run went on offline and exited 0.
hrun 0 nostart --net public --pcap cap.pcap --pcap-max 10 -- sh -c 'echo ran; sleep 3; echo survived'
if [ "$RC" -eq 125 ] && grep -q "the session's network could not start: boxy-net exited with status 1" "$C/err" &&
	! grep -q survived "$C/out"; then
	ok "a boxy-net that cannot start fails the run: status 125 and one line"
else
	fail_case "a boxy-net that cannot start fails the run: status 125 and one line" \
		"want RC 125, \"the session's network could not start: boxy-net exited with status 1\" on stderr" \
		"and no 'survived' (RC $RC)"
fi

# 4. The same failure found after the payload started (the network held past
# boxy-init's report): the payload is stopped and the run says why.
hrun 700 nostart-late --net public --pcap cap.pcap --pcap-max 10 -- sh -c 'echo started; sleep 5; echo survived'
if [ "$RC" -eq 125 ] && grep -q started "$C/out" && ! grep -q survived "$C/out" &&
	grep -q "the session's network could not start: boxy-net exited with status 1" "$C/err"; then
	ok "... found after the payload started, the payload is stopped with the same line"
else
	fail_case "... found after the payload started, the payload is stopped with the same line" \
		"want RC 125, 'started' and no 'survived' from the payload, the line on stderr (RC $RC)"
fi

# 5. And an ordinary run is unchanged: a session started with the network early
# ends with the payload's status and every flow counted.
hrun 0 plain --net public -- curl -sS -m 20 http://www.example.test/hello.txt
if [ "$RC" -eq 0 ] && grep -q boxy-testnet-marker "$C/out" && grep -Eq 'www\.example\.test|93\.184\.216\.34' "$C/err"; then
	ok "a networked run with the early start: the page arrives and the run's table counts it"
else
	fail_case "a networked run with the early start: the page arrives and the run's table counts it" \
		"want the marker page and the destination in the run's table (RC $RC)"
fi

testnet_check
done_testing
