#!/bin/bash
# tests/e2e/http-inspect-attacks.sh — TLS inspection attacked by a hostile payload
# (tests/lib/tls-attack.py, inside the sandbox), in the hermetic test network with the
# hosts of tests/lib/tls-testnet.sh: ClientHellos built to crash or confuse the terminator,
# requests smuggled through HTTP/2, resumed sessions, renegotiation, early data, ALPN
# tricks, huge header lists, and the CA key looked for where a payload can look.
#
# Every attack asks for a path under /v2/atk-, which no rule allows. A case prints
# ESCAPED when such a path (or any byte of its request) reached a server, or when
# boxy-net died (the session's network ended: every later request of the payload
# would be lost, and a crash is a finding). After each attack the same sandbox asks
# for an allowed page, which must still work.
set -u
here=$(cd "$(dirname "$0")/.." && pwd)
. "$here/lib/harness.sh"
. "$here/lib/testnet.sh"
harness_locate
[ "${BOXY_TESTNET_INSIDE:-}" = 1 ] || harness_as_test_user "$0" "$@"
testnet_enter "$0" "$@"
. "$here/lib/tls-testnet.sh"
tls_testnet_setup
cp "$BOXY_SRCDIR/tests/lib/tls-attack.py" "$TN/tls-attack.py"

RULES=(--allow-http 'method=GET,POST domain=api.test path=/v1/*'
	--allow-http 'method=GET,POST domain=grpc.test path=/v1/*' --allow-host other.example.test)

# escaped: did any attack's request reach a server, even in part?
escaped() {
	grep -aq 'atk-' "$TN/api.raw" "$TN/grpc.log" "$TN/h2.log" 2>/dev/null
}
# attack NAME DESC SUBCOMMAND: run it, then an allowed request in the same sandbox.
attack() {
	local name=$1 desc=$2 sub=$3
	ti_case "$name" "tls-attack.py" "${RULES[@]}" -- sh -c \
		"/usr/bin/python3 tls-attack.py $sub; curl -sS -m 10 https://api.test/v1/after-$name"
	if escaped || grep -q 'boxy-net was killed\|the session.s network was ended' "$C/audit" ||
		! grep -q "^ok GET /v1/after-$name" "$C/out"; then
		echo "ESCAPED: $desc"
		fail_case "$desc" "a request reached a server, boxy-net died, or the allowed page failed" \
			"server saw: $(grep -ah 'atk-' "$TN/api.raw" "$TN/grpc.log" 2>/dev/null | head -n 3)"
		return 1
	fi
	ok "$desc"
}

attack hellos "ClientHellos cut, fragmented, flipped, doubled and followed by junk: boxy-net survives" hellos
grep -q '^hellos sent [0-9]' "$C/out" || fail_case "the ClientHello attack ran" "no summary line"

attack h2smuggle "requests smuggled through HTTP/2 (Host, dot segments, absolute and scheme-relative paths, userinfo, CRLF, CL, trailers, CONNECT) never reach the server" h2smuggle
# what the server saw for the one allowed request: the checked :authority, no Host
grep -q 'authority=grpc.test host=- path=/v1/ok-host' "$TN/grpc.log"
check "HTTP/2: the Host header beside :authority is dropped; the server sees the name the gate checked" $? \
	"grpc.log: $(grep ok-host "$TN/grpc.log")"
grep -q '^h2 dot-segment status 403' "$C/out" && grep -q '^h2 absolute status - reset True' "$C/out" &&
	grep -q '^h2 other-authority status 403' "$C/out" && grep -q '^h2 userinfo status - reset True' "$C/out"
check "HTTP/2: a dot segment and another authority get 403, an absolute :path and userinfo a reset" $? \
	"$(grep '^h2 ' "$C/out" | tr '\n' ';')"

# Every request is recorded, the ones HTTP/2's own rules or parse/h2req.c refuse before the
# gate could decide them too: each smuggling shape has its audit line (malformed, 400).
missing=
for why in 'a :path that is not a path' 'userinfo in :authority' \
	'HTTP/2: Violation in HTTP messaging rule' 'HTTP/2: Invalid HTTP header field was received'; do
	audit_has net.http deny "$why" || missing="$missing [$why]"
done
[ -z "$missing" ]
check "HTTP/2: a request refused before the gate (absolute :path, userinfo, :protocol, CRLF) is still recorded" $? \
	"no audit line for:$missing"

attack resume "resumed sessions (TLS 1.2 and 1.3) carry no request and no name past the checks" resume
! grep -q 'reused True' "$C/out" && grep -q 'other-name refused' "$C/out"
check "no session is ever resumed by the terminator, and another name on the session is refused" $? \
	"$(grep '^resume' "$C/out" | tr '\n' ';')"

ti_case reneg "" "${RULES[@]}" -- sh -c \
	'(printf "GET /v1/before-reneg HTTP/1.1\r\nHost: api.test\r\n\r\n"; sleep 1; echo R; sleep 1;
	  printf "GET /v2/atk-reneg HTTP/1.1\r\nHost: api.test\r\n\r\n"; sleep 1) |
	 openssl s_client -tls1_2 -connect api.test:443 -servername api.test 2>&1 | grep -E "^(HTTP|RENEG|ok )" ;
	 curl -sS -m 10 https://api.test/v1/after-reneg'
if escaped || ! grep -q '^ok GET /v1/after-reneg' "$C/out"; then
	echo "ESCAPED: renegotiation"
	fail_case "TLS 1.2 renegotiation is refused and nothing after it passes unchecked"
else
	ok "TLS 1.2 renegotiation is refused and nothing after it passes unchecked"
fi

ti_case early "" "${RULES[@]}" -- sh -c \
	'printf "GET /v2/atk-early HTTP/1.1\r\nHost: api.test\r\n\r\n" >early.txt;
	 openssl s_client -connect api.test:443 -servername api.test -sess_out sess </dev/null >/dev/null 2>&1;
	 openssl s_client -connect api.test:443 -servername api.test -sess_in sess -early_data early.txt \
		</dev/null 2>&1 | grep -iE "early data|reused|new," ;
	 curl -sS -m 10 https://api.test/v1/after-early'
if escaped || ! grep -q '^ok GET /v1/after-early' "$C/out" || grep -q 'Early data was accepted' "$C/out"; then
	echo "ESCAPED: early data"
	fail_case "0-RTT early data is never accepted (no tickets are issued), nothing reaches the server"
else
	ok "0-RTT early data is never accepted (no tickets are issued), nothing reaches the server"
fi

attack alpn "ALPN tricks (h2c, spdy, an h2 preface over http/1.1, HTTP/1.1 over h2, no ALPN to an h2 server) reach nothing unchecked" alpn
grep -q '^alpn h2c-only refused' "$C/out" && grep -q '^alpn spdy-only refused' "$C/out" &&
	grep -q "^alpn preface-on-http11 selected http/1.1 answer b'HTTP/1.1 400" "$C/out"
check "ALPN: only HTTP/1.1 and h2 are ever selected; an h2 preface over HTTP/1.1 is a 400" $? \
	"$(grep '^alpn' "$C/out" | tr '\n' ';')"

attack headers "huge header lists (HTTP/1.1, HTTP/2, an HPACK bomb) are refused without reaching the server" headers
grep -q "^headers h1 b'HTTP/1.1 400" "$C/out" && grep -q '^headers h2 many status - reset True' "$C/out" &&
	grep -q '^headers h2 bomb status - reset True' "$C/out"
check "HTTP/1.1: a head over 8 KiB is a 400; HTTP/2: a block over 256 fields or 64 KiB resets its stream" $? \
	"$(grep '^headers' "$C/out" | tr '\n' ';')"
[ "$(grep -c 'an HTTP/2 header block over 256 fields or 64 KiB' "$C/audit")" = 2 ]
check "HTTP/2: the two oversized header blocks are each recorded as a malformed request" $? \
	"$(grep -c 'header block over' "$C/audit") audit lines"

# A refused request pipelined behind a long answer the client reads slowly: the server is
# still answering when the 5 s drain would end. The 403 must follow the answer, never land
# inside its body (a client would read it as the body's bytes).
ti_case pipeslow "tls-attack.py" "${RULES[@]}" --allow-http 'method=GET domain=api.test path=/big' -- \
	/usr/bin/python3 tls-attack.py pipeslow 20000000 6.5
grep -q '^pipeslow body [0-9]* of 20000000 403 at 20000000$' "$C/out" && ! arrived atk-pipe
check "a refusal pipelined behind a long answer comes after all of it, not inside its body" $? \
	"$(cat "$C/out")"

# boxy-net's memory under HTTP/2 downloads: a hundred streams on each of 20 connections, the
# bodies flowing for 10 s. What a stream's buffers hold must be what the windows let in
# (64 KiB a connection each way), not the most each stream ever held (100 x 64 KiB).
ti_case h2mem "tls-attack.py" --allow-http 'method=GET domain=h2.test path=/v1/*' -- \
	sh -c '/usr/bin/python3 tls-attack.py h2streams 20 10; sleep 2' &
mempid=$!
netpid= base= peak=0
while kill -0 "$mempid" 2>/dev/null; do
	[ -n "$netpid" ] || netpid=$(pgrep -n -x --ns $$ --nslist net boxy-net 2>/dev/null)
	if [ -n "$netpid" ] && [ -r "/proc/$netpid/status" ]; then
		hwm=$(awk '/^VmHWM/ {print $2}' "/proc/$netpid/status")
		[ -n "$base" ] || base=$hwm
		[ -z "$hwm" ] || [ "$hwm" -le "$peak" ] || peak=$hwm
	fi
	sleep 0.3
done
wait "$mempid"
C=$TN/cases/h2mem
if ldd "$BOXY_BUILDDIR/boxy-net" 2>/dev/null | grep -q libasan; then
	# AddressSanitizer keeps freed memory in its quarantine (hundreds of MiB): the bound is the
	# plain build's to check; here the downloads must run and boxy-net must live through them.
	limit=$((1024 * 1024)) what="run, and boxy-net lives (sanitized: its quarantine keeps freed memory)"
else
	limit=$((20 * 1024)) what="grow boxy-net by less than 20 MiB"
fi
grep -q '^h2streams read [1-9]' "$C/out" && [ -n "$base" ] && [ $((peak - base)) -lt "$limit" ] &&
	! escaped && ! grep -q 'boxy-net was killed' "$C/audit"
check "HTTP/2: 2,000 long downloads on 20 connections $what" $? \
	"boxy-net ${netpid:-not found}: VmHWM ${base:-?} KiB at the start, $peak KiB at most; $(cat "$C/out")"

# The CA's key, looked for by the payload: its files, its environment, its processes.
ti_case keyhunt "" "${RULES[@]}" -- sh -c \
	'grep -rlsa "PRIVATE KEY" /etc /tmp "$HOME" /proc/self/environ 2>/dev/null | head -n 3;
	 cat /proc/[0-9]*/environ 2>/dev/null | tr "\0" "\n" | grep -c "PRIVATE" ;
	 cat /proc/[0-9]*/comm | sort -u | tr "\n" " "'
if grep -q '^/' "$C/out" || grep -q 'boxy-net' "$C/out" || ! grep -qx 0 "$C/out"; then
	echo "ESCAPED: a key file or boxy-net within the payload's reach"
	fail_case "no private key is readable in the sandbox, and boxy-net is not among its processes"
else
	ok "no private key is readable in the sandbox, and boxy-net is not among its processes"
fi

done_testing
