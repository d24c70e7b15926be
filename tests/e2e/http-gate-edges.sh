#!/bin/bash
# tests/e2e/http-gate-edges.sh — the plain-HTTP gate where a review found it wrong, in the
# hermetic test network (tests/lib/testnet.sh), against a server of the suite's own
# ($TN/edge-srv.py) that answers slowly, answers delimited by its close, and logs every byte
# it receives; the client is a raw socket in the sandbox, which reads exactly what boxy sent.
#
#   1. a refusal after a pipelined request waits for the whole answer (which takes longer than
#      boxy's drain, and whose server keeps the connection open), then follows it at once;
#   2. a request head not complete in time (a slowloris payload) gets 408, the connection
#      ends, and the refusal is recorded; a head over 8 KiB gets 400;
#   3. after an answer that only the server's close ends, no 403 is written (the client
#      would read it as that answer's body): the refusal is recorded, the answer is whole;
#   4. Content_Length and Transfer_Encoding (servers that fold '_' into '-' frame by them)
#      are refused, and never reach the server.
set -u
here=$(cd "$(dirname "$0")/.." && pwd)
. "$here/lib/harness.sh"
. "$here/lib/testnet.sh"
harness_locate
[ "${BOXY_TESTNET_INSIDE:-}" = 1 ] || harness_as_test_user "$0" "$@"
testnet_enter "$0" "$@"
testnet_setup
# The gate's head timeout, 30 s, shortened for this suite's daemon (and its boxy-net).
export BOXY_NET_HEAD_TIMEOUT=2
tn_probe

PORT=8085
H=other.example.test
HP=$H:$PORT
ALLOW=(--allow-host "$HP" --allow-http "method=GET,POST domain=$H path=/v1/*")
: >"$TN/edge.raw"
chmod 0666 "$TN/edge.raw"
cat >"$TN/edge-srv.py" <<'PY'
# One thread a connection; each request answered by its path:
#   /v1/slow   Content-Length 3400, sent 100 bytes a second (34 s: past boxy's drain, and
#              past its 30 s from the connection's start), then the connection kept open
#   /v1/close  HTTP/1.0, no length: the answer ends when the server closes, which it does
#   else       "ok PATH", by length
# Every byte received is appended to RAW.
import socket, sys, threading, time
addr, port, raw = sys.argv[1], int(sys.argv[2]), sys.argv[3]
lock = threading.Lock()
def log(b):
    with lock, open(raw, 'ab') as f:
        f.write(b)
def serve(c):
    buf = b''
    try:
        while True:
            while b'\r\n\r\n' not in buf:
                d = c.recv(65536)
                if not d:
                    time.sleep(40)      # half-closed: keep the connection, as some servers do
                    return
                log(d)
                buf += d
            head, buf = buf.split(b'\r\n\r\n', 1)
            path = head.split(b' ')[1].decode('latin-1')
            if path == '/v1/slow':
                c.sendall(b'HTTP/1.1 200 OK\r\nContent-Length: 3400\r\n\r\n')
                for i in range(34):
                    c.sendall(b'%-99d\n' % i)
                    time.sleep(1)
            elif path == '/v1/close':
                c.sendall(b'HTTP/1.0 200 OK\r\nContent-Type: text/plain\r\n\r\nclose-delimited body\n')
                c.close()
                return
            else:
                body = ('ok %s\n' % path).encode()
                c.sendall(b'HTTP/1.1 200 OK\r\nContent-Length: %d\r\n\r\n%s' % (len(body), body))
    except OSError:
        pass
    finally:
        c.close()
s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind((addr, port))
s.listen(64)
while True:
    c, _ = s.accept()
    threading.Thread(target=serve, args=(c,), daemon=True).start()
PY
tn_start edge python3 -u "$TN/edge-srv.py" "$TN_OTHER" "$PORT" "$TN/edge.raw"
tn_wait_tcp "$TN_OTHER" "$PORT"

# client.py HOST PORT TIMEOUT FILE [PAUSE FILE]...: send the files (pausing between them),
# read until the connection ends or TIMEOUT; print what came, then "=end SECONDS HOW".
cat >"$TN/client.py" <<'PY'
import socket, sys, time
host, port, timeout, args = sys.argv[1], int(sys.argv[2]), float(sys.argv[3]), sys.argv[4:]
s = socket.create_connection((host, port), timeout=timeout)
t0 = time.time()
s.sendall(open(args[0], 'rb').read())
for i in range(1, len(args) - 1, 2):
    time.sleep(float(args[i]))
    s.sendall(open(args[i + 1], 'rb').read())
out, how = b'', 'closed'
try:
    while True:
        d = s.recv(65536)
        if not d:
            break
        out += d
except socket.timeout:
    how = 'timeout'
except ConnectionError as e:
    how = 'reset'
sys.stdout.write(out.decode('latin-1'))
print('=end %.1f %s' % (time.time() - t0, how))
PY
chmod 0644 "$TN/client.py"

# ec_case NAME BOXY-RUN-ARGS...: run_case with client.py and REQS in the workdir.
ec_case() {
	local name=$1
	shift
	C=$TN/cases/$name
	mkdir -p "$C" && cp "$TN/client.py" "$C/" && chmod -R a+rwX "$C"
	[ -n "${REQS:-}" ] && cp $REQS "$C/" && chmod -R a+rX "$C"
	(cd "$C" && tn_boxy run --audit-log "$C/audit" "$@" >"$C/out" 2>"$C/err" </dev/null)
	RC=$?
}
req() { printf "$2" >"$TN/$1"; }
arrived() { grep -qaF -- "$1" "$TN/edge.raw"; }
# body_of FILE: the first answer's body as the client read it (after the first blank line).
body_of() { python3 -c 'import sys; d = open(sys.argv[1], "rb").read(); print(d.split(b"\r\n\r\n", 1)[1][:4000].decode("latin-1"), end="")' "$1"; }

## ---- 1. a refusal waits for the whole answer before it ------------------------------------
req req.slow "GET /v1/slow HTTP/1.1\r\nHost: $HP\r\n\r\nGET /v2/denied-slow HTTP/1.1\r\nHost: $HP\r\n\r\n"
REQS="$TN/req.slow"
ec_case slow "${ALLOW[@]}" -- python3 client.py "$H" "$PORT" 50 req.slow
REQS=
python3 - "$C/out" >"$C/check" 2>&1 <<'PY'
import re, sys
d = open(sys.argv[1], 'rb').read()
head, rest = d.split(b'\r\n\r\n', 1)
assert head.startswith(b'HTTP/1.1 200'), head
body, after = rest[:3400], rest[3400:]
want = b''.join(b'%-99d\n' % i for i in range(34))
assert body == want, ('the answer is not whole', body[-200:])
assert after.startswith(b'HTTP/1.1 403 Forbidden\r\n'), ('no 403 right after it', after[:80])
m = re.search(rb'=end ([0-9.]+) (\w+)', after)
assert m and m.group(2) == b'closed', after[-80:]
assert float(m.group(1)) < 40, ('the 403 waited for the server to close', m.group(1))
print('ok')
PY
if grep -q '^ok$' "$C/check" && ! arrived "denied-slow" &&
	audit_has net.http deny "GET $HP/v2/denied-slow"; then
	ok "1: a pipelined refusal follows the whole of a 34 s answer (the 403 at once after its last byte, never inside it)"
else
	fail_case "1: a pipelined refusal follows the whole of a 34 s answer (the 403 at once after its last byte, never inside it)" \
		"$(tail -n 3 "$C/check")"
fi

## ---- 2. slowloris: a head not complete in time gets 408 -------------------------------------
req req.sl1 "GET /v1/before-slow-head HTTP/1.1\r\nHost: $HP\r\n\r\nGET /v1/slow-head HTTP/1.1\r\nHost: $HP\r\nX-Drip: 1\r\n"
req req.sl2 "X-Drip: 2\r\n"
REQS="$TN/req.sl1 $TN/req.sl2"
ec_case slowloris "${ALLOW[@]}" -- python3 client.py "$H" "$PORT" 12 req.sl1 1 req.sl2 1 req.sl2 1 req.sl2
REQS=
sid=$(sqlite3 "$TN/state/boxy/sessions.db" "SELECT session_id FROM requests WHERE path = '/v1/before-slow-head'" 2>/dev/null | head -n 1)
reason=$(sqlite3 "$TN/state/boxy/sessions.db" "SELECT reason FROM requests WHERE session_id = '$sid' AND verdict = 'deny'" 2>/dev/null)
if grep -q "^ok /v1/before-slow-head" "$C/out" && grep -q "^HTTP/1.1 408 Request Timeout" "$C/out" &&
	grep -q "request head not complete within 2 s" "$C/out" && grep -q "^=end [0-9.]* closed" "$C/out" &&
	! arrived "/v1/slow-head" && audit_has net.http deny "request head not complete within 2 s" &&
	[ "$reason" = "a malformed or ambiguous HTTP request: request head not complete within 2 s" ]; then
	ok "2: a request head dripped past the head timeout gets 408, the connection closes, the refusal is in the store"
else
	fail_case "2: a request head dripped past the head timeout gets 408, the connection closes, the refusal is in the store" \
		"want the first answered, then 408 and the close, and the store's reason" "reason: $reason"
fi
tn_boxy show "$sid" >"$C/show" 2>&1
if grep -q "request head not complete within 2 s" "$C/show"; then
	ok "2: boxy show lists the slow head's refusal with its reason"
else
	fail_case "2: boxy show lists the slow head's refusal with its reason" "show: $(head -c 1200 "$C/show")"
fi

big=$(head -c 9000 /dev/zero | tr '\0' a)
req req.big "GET /v1/before-big HTTP/1.1\r\nHost: $HP\r\n\r\nGET /v1/big-head HTTP/1.1\r\nHost: $HP\r\nX-Big: $big\r\n\r\n"
REQS="$TN/req.big"
ec_case bighead "${ALLOW[@]}" -- python3 client.py "$H" "$PORT" 10 req.big
REQS=
if grep -q "^ok /v1/before-big" "$C/out" && grep -q "^HTTP/1.1 400 Bad Request" "$C/out" &&
	! arrived "/v1/big-head" && audit_has net.http deny "request head too large"; then
	ok "2: a request head over 8 KiB is refused (400) before a byte of it leaves"
else
	fail_case "2: a request head over 8 KiB is refused (400) before a byte of it leaves" "want 400, request head too large"
fi

## ---- 3. no refusal after an answer that only the server's close ends -------------------------
req req.close "GET /v1/close HTTP/1.1\r\nHost: $HP\r\n\r\nGET /v2/denied-close HTTP/1.1\r\nHost: $HP\r\n\r\n"
REQS="$TN/req.close"
ec_case close "${ALLOW[@]}" -- python3 client.py "$H" "$PORT" 15 req.close
REQS=
if grep -q "^HTTP/1.0 200 OK" "$C/out" && [ "$(body_of "$C/out" | sed '/^=end/d')" = "close-delimited body" ] &&
	! grep -q "403" "$C/out" && grep -q "^=end [0-9.]* closed" "$C/out" &&
	! arrived "denied-close" && audit_has net.http deny "GET $HP/v2/denied-close"; then
	ok "3: after a close-delimited answer the refusal is recorded, and nothing is written into that answer's body"
else
	fail_case "3: after a close-delimited answer the refusal is recorded, and nothing is written into that answer's body" \
		"want the body 'close-delimited body' alone, then the close, and the refusal audited"
fi

## ---- 4. underscore framing headers -------------------------------------------------------------
smug="GET /v2/smuggled-us HTTP/1.1\r\nHost: $HP\r\n\r\n"
n=$(printf "$smug" | wc -c)
req req.us1 "POST /v1/form-us1 HTTP/1.1\r\nHost: $HP\r\nTransfer_Encoding: chunked\r\nContent-Length: $n\r\n\r\n$smug"
req req.us2 "GET /v1/before-us HTTP/1.1\r\nHost: $HP\r\n\r\nPOST /v1/form-us2 HTTP/1.1\r\nHost: $HP\r\nContent_Length: $n\r\n\r\n$smug"
REQS="$TN/req.us1 $TN/req.us2"
ec_case underscore "${ALLOW[@]}" -- sh -c \
	"python3 client.py $H $PORT 10 req.us1; python3 client.py $H $PORT 10 req.us2"
REQS=
if [ "$(grep -c '^HTTP/1.1 400 Bad Request' "$C/out")" = 2 ] && grep -q "^ok /v1/before-us" "$C/out" &&
	! arrived "form-us" && ! arrived "smuggled-us" &&
	audit_has net.http deny "Transfer_Encoding (a server may read the underscore as a hyphen)" &&
	audit_has net.http deny "Content_Length (a server may read the underscore as a hyphen)"; then
	ok "4: Transfer_Encoding and Content_Length are refused (400), first request or later, and never reach the server"
else
	fail_case "4: Transfer_Encoding and Content_Length are refused (400), first request or later, and never reach the server" \
		"want two 400s with their reasons and nothing of form-us at the server"
fi

done_testing
