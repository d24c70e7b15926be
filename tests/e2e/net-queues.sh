#!/bin/bash
# tests/e2e/net-queues.sh — tap0 with several queues, one boxy-net each
# (doc/internals-net.md, "Queues"), inside the hermetic test network.
#
# The kernel keeps every flow on one queue, so each boxy-net sees whole flows;
# what must hold across them is the session's: a name resolved through one
# queue binds its address for connections that land on the others, every
# flow is counted once, and a capture (one file) gets one queue. The number
# of queues is BOXY_NET_QUEUES in the run's environment (the test's knob; one
# per CPU, at most four, otherwise).
set -u
here=$(cd "$(dirname "$0")/.." && pwd)
. "$here/lib/harness.sh"
. "$here/lib/testnet.sh"
harness_locate
[ "${BOXY_TESTNET_INSIDE:-}" = 1 ] || harness_as_test_user "$0" "$@"
testnet_enter "$0" "$@"
testnet_setup
tn_probe

# qrun QUEUES CASE BOXY-RUN-ARGS...: run_case with BOXY_NET_QUEUES set for the run.
qrun() {
	local q=$1
	C=$TN/cases/$2
	shift 2
	mkdir -p "$C" && chmod -R a+rwX "$C"
	(cd "$C" && tn_user env BOXY_NET_QUEUES="$q" HOME="$TN/home" XDG_RUNTIME_DIR="$TN/run" \
		XDG_STATE_HOME="$TN/state" "$BOXY" run --audit-log "$C/audit" "$@" \
		>"$C/out" 2>"$C/err" </dev/null)
	RC=$?
}

# helpers_during QUEUES CASE ARGS...: start a run whose payload sleeps, count the
# boxy-nets the daemon runs for it meanwhile (into $C/helpers), then wait for it.
helpers_during() {
	local q=$1 case=$2 pid d n=0
	shift 2
	qrun "$q" "$case" "$@" &
	pid=$!
	for _ in $(seq 1 50); do
		d=$(awk '$1 == "pid" { print $2 }' "$TN/state/boxy/daemon.lock" 2>/dev/null)
		n=$( [ -n "$d" ] && pgrep -P "$d" -x boxy-net | wc -l || echo 0)
		[ "$n" -gt 0 ] && sleep 0.3 && n=$(pgrep -P "$d" -x boxy-net | wc -l) && break
		sleep 0.1
	done
	wait "$pid"
	C=$TN/cases/$case
	echo "$n" >"$C/helpers"
}

helpers_during 4 four --net public -- sleep 2
if [ "$(cat "$C/helpers")" = 4 ] && [ "$RC" -eq 0 ]; then
	ok "BOXY_NET_QUEUES=4: tap0 has four queues and four boxy-nets serve the session"
else
	fail_case "BOXY_NET_QUEUES=4: tap0 has four queues and four boxy-nets serve the session" \
		"want 4 boxy-net children of the daemon during the run, got $(cat "$C/helpers")"
fi

helpers_during 4 pcap --net public --pcap cap.pcap -- sleep 2
if [ "$(cat "$C/helpers")" = 1 ] && [ "$RC" -eq 0 ]; then
	ok "--pcap: one queue, one boxy-net (a capture is one file with one writer)"
else
	fail_case "--pcap: one queue, one boxy-net (a capture is one file with one writer)" \
		"want 1 boxy-net, got $(cat "$C/helpers")"
fi

# 24 connections, after one lookup: their source ports spread them over the
# four queues, and each must find the binding the lookup made through one of them.
# Each socket stays open until all 24 have their answers and a second more:
# attribution looks a connection's socket up after the verdict, never before it
# (doc/attribution.md), so a socket closed within a millisecond may be gone by
# then on a loaded machine; this case is about the queues, not that race.
mkdir -p "$TN/cases/allow"
cat >"$TN/cases/allow/many.py" <<'EOF'
import socket, sys, threading, time
addr = socket.gethostbyname("www.example.test")
got = []
done = threading.Barrier(24)
def one(i):
    s = None
    try:
        s = socket.create_connection((addr, 80), timeout=10)
        s.sendall(b"GET /hello.txt HTTP/1.0\r\nHost: www.example.test\r\n\r\n")
        data = b""
        while True:
            b = s.recv(4096)
            if not b:
                break
            data += b
        got.append(b"boxy-testnet-marker" in data)
    except OSError as e:
        print("connection", i, "failed:", e, file=sys.stderr)
        got.append(False)
    try:
        done.wait(timeout=20)
    except threading.BrokenBarrierError:
        pass
    time.sleep(1)
    if s is not None:
        s.close()
ts = [threading.Thread(target=one, args=(i,)) for i in range(24)]
for t in ts: t.start()
for t in ts: t.join()
print("ok", sum(got), "of", len(got))
EOF
chmod 0644 "$TN/cases/allow/many.py"
q0=$(grep -c '^www.example.test A$' "$TN/dns.queries")
qrun 4 allow --allow-host www.example.test -- python3 many.py
q1=$(grep -c '^www.example.test A$' "$TN/dns.queries")
allows=$(grep -F '"layer":"net.sni"' "$C/audit" 2>/dev/null | grep -c '"verdict":"allow"')
if [ "$RC" -eq 0 ] && grep -qx 'ok 24 of 24' "$C/out" && [ $((q1 - q0)) -eq 1 ]; then
	ok "allowlist over four queues: one lookup binds the name for 24 connections on any queue"
else
	fail_case "allowlist over four queues: one lookup binds the name for 24 connections on any queue" \
		"want 'ok 24 of 24' and one A query upstream (got $((q1 - q0)); sni allows in the audit: $allows)"
fi
if grep -q "www.example.test" "$C/err" && grep -Eq 'www\.example\.test +24 ' "$C/err"; then
	ok "... and the destinations table counts each connection once (24)"
else
	fail_case "... and the destinations table counts each connection once (24)" \
		"want www.example.test with 24 connections in the run's table"
fi

# Attribution on every queue (doc/attribution.md): whichever boxy-net a
# connection arrived through, its row names the process that made it.
sid=$(grep -o '"session":"[0-9a-f]*"' "$C/audit" 2>/dev/null | head -n 1 | cut -d'"' -f4)
who=$(tn_boxy show --json "$sid" 2>/dev/null | python3 -c '
import json, sys
d = json.load(sys.stdin)
rows = [c for c in d.get("connections", []) if c.get("host") == "www.example.test"]
named = sum(c.get("count", 1) for c in rows if (c.get("pid") or 0) > 0 and c.get("comm") == "python3")
print(named, sum(c.get("count", 1) for c in rows))' 2>&1)
if [ "$who" = "24 24" ]; then
	ok "... and each of the 24 connections, on whichever queue, is attributed to python3"
else
	fail_case "... and each of the 24 connections, on whichever queue, is attributed to python3" \
		"attributed, of all: '$who'"
fi

# Downloads over every queue arrive whole.
head -c 4000000 /dev/urandom >"$TN/www/big.bin"
want=$(sha256sum <"$TN/www/big.bin" | cut -d' ' -f1)
mkdir -p "$TN/cases/big"
cat >"$TN/cases/big/big.py" <<'EOF'
import hashlib, sys, threading, urllib.request
sums = []
def one():
    with urllib.request.urlopen("http://www.example.test/big.bin", timeout=20) as r:
        sums.append(hashlib.sha256(r.read()).hexdigest())
ts = [threading.Thread(target=one) for _ in range(8)]
for t in ts: t.start()
for t in ts: t.join()
print("\n".join(sums))
EOF
chmod 0644 "$TN/cases/big/big.py" "$TN/www/big.bin"
qrun 4 big --allow-host www.example.test -- python3 big.py
if [ "$RC" -eq 0 ] && [ "$(grep -cx "$want" "$C/out")" = 8 ]; then
	ok "eight 4 MB downloads at once over four queues arrive intact"
else
	fail_case "eight 4 MB downloads at once over four queues arrive intact" \
		"want 8 lines of $want"
fi

# A freeze reaches every queue (doc/react.md): a DNS tunnel under --on-alert
# dns=freeze over four queues is frozen with each of its four boxy-nets
# stopped (one left running would go on moving its flows' bytes), resumed
# with all four running again; frozen once more, boxy stop leaves none of them.
. "$here/lib/react.sh"          # REACT_TUNNEL, wait_session, wait_state, state_of
# net_states: the state letter of each boxy-net of the daemon, one a line.
net_states() {
	local d p
	d=$(awk '$1 == "pid" { print $2 }' "$TN/state/boxy/daemon.lock" 2>/dev/null)
	[ -n "$d" ] || return 0
	for p in $(pgrep -P "$d" -x boxy-net); do
		awk '{ sub(/.*\) /, ""); print $1 }' "/proc/$p/stat" 2>/dev/null
	done
}
# freeze_run CASE: the tunnel over four queues in the background, until it is frozen.
freeze_run() {
	C=$TN/cases/$1
	mkdir -p "$C" && chmod -R a+rwX "$C"
	(cd "$C" && tn_user env BOXY_NET_QUEUES=4 HOME="$TN/home" XDG_RUNTIME_DIR="$TN/run" \
		XDG_STATE_HOME="$TN/state" "$BOXY" run --net public --on-alert dns=freeze \
		-- sh -c "$REACT_TUNNEL" >"$C/out" 2>"$C/err" </dev/null; echo $? >"$C/rc") &
	FPID=$!
	wait_session exfil.test 30 && wait_state "$ID" frozen 30
}
# freeze_end SECONDS: wait for the run; RC its status (-1: still running).
freeze_end() {
	local i
	for i in $(seq 1 $(($1 * 10))); do
		[ -s "$C/rc" ] && break
		sleep 0.1
	done
	RC=$(cat "$C/rc" 2>/dev/null || echo -1)
	[ "$RC" != -1 ] && wait "$FPID" 2>/dev/null
	return 0
}

if freeze_run freeze; then
	sleep 0.5
	st=$(net_states | sort | tr '\n' ' ')
	if [ "$st" = "T T T T " ]; then
		ok "a frozen session over four queues: each of its four boxy-nets is stopped"
	else
		fail_case "a frozen session over four queues: each of its four boxy-nets is stopped" \
			"boxy-net states: '$st'"
	fi
	tn_boxy resume "$ID" >/dev/null 2>&1
	sleep 0.3
	st=$(net_states | grep -c T)
	freeze_end 30
	if [ "$st" = 0 ] && [ "$RC" = 0 ] && [ "$(cat "$C/progress")" = done ]; then
		ok "... resumed: none stopped any more, and the tunnel's run ends (exit 0)"
	else
		fail_case "... resumed: none stopped any more, and the tunnel's run ends (exit 0)" \
			"stopped after resume: $st, exit $RC, progress $(cat "$C/progress" 2>/dev/null)"
	fi
else
	fail_case "a frozen session over four queues: each of its four boxy-nets is stopped" \
		"never frozen (ID '$ID', state $(state_of "$ID"))"
	tn_boxy stop "$ID" >/dev/null 2>&1
	freeze_end 20
fi

if freeze_run freeze-stop; then
	tn_boxy stop "$ID" >/dev/null 2>&1
	freeze_end 20
	left=
	for _ in $(seq 1 30); do
		left=$(net_states | wc -l)
		[ "$left" = 0 ] && break
		sleep 0.1
	done
	if [ "$RC" = 137 ] && [ "$left" = 0 ]; then
		ok "boxy stop on a frozen session over four queues leaves none of its boxy-nets"
	else
		fail_case "boxy stop on a frozen session over four queues leaves none of its boxy-nets" \
			"exit $RC, boxy-nets left: $left ($(net_states | tr '\n' ' '))"
	fi
else
	fail_case "boxy stop on a frozen session over four queues leaves none of its boxy-nets" \
		"never frozen (ID '$ID')"
	tn_boxy stop "$ID" >/dev/null 2>&1
	freeze_end 20
fi

testnet_check
done_testing
