#!/bin/bash
# tests/e2e/http-rules.sh — --allow-http end to end over plain HTTP, in the hermetic test
# network (tests/lib/testnet.sh): real clients (curl, python's urllib, raw
# sockets for what clients do not send on purpose) against a recording
# HTTP/1.1 server (tests/lib/http-recorder.py) that keeps connections alive
# and logs every request and every byte it ever received.
#
# Each case checks what the payload got (the page, or a 403 naming the rule
# that would allow it), what the server saw (a refused request never
# arrives, not even in part), and what was recorded (the audit line at
# net.http, the store's requests rows, boxy show --json).
set -u
here=$(cd "$(dirname "$0")/.." && pwd)
. "$here/lib/harness.sh"
. "$here/lib/testnet.sh"
harness_locate
[ "${BOXY_TESTNET_INSIDE:-}" = 1 ] || harness_as_test_user "$0" "$@"
testnet_enter "$0" "$@"
testnet_setup
tn_probe

# The recorder on other.example.test:8081 (the zone's TN_OTHER).
REC_PORT=8081
: >"$TN/rec.log"
: >"$TN/rec.raw"
chmod 0666 "$TN/rec.log" "$TN/rec.raw"
tn_start rec python3 -u "$BOXY_SRCDIR/tests/lib/http-recorder.py" "$TN_OTHER" "$REC_PORT" \
	"$TN/rec.log" "$TN/rec.raw"
tn_wait_tcp "$TN_OTHER" "$REC_PORT"
H=other.example.test
HP=$H:$REC_PORT
BASE=http://$HP
ALLOW=(--allow-host "$HP" --allow-http "method=GET,HEAD domain=$H path=/v1/*")

# raw.py HOST PORT FILE...: each FILE's bytes in one write (all at once with -1),
# then everything the server answers until it closes (or 5 s pass).
cat >"$TN/raw.py" <<'PY'
import socket, sys, time
host, port, files = sys.argv[1], int(sys.argv[2]), sys.argv[3:]
together = files and files[0] == '-1'
if together:
    files = files[1:]
s = socket.create_connection((host, port), timeout=5)
data = [open(f, 'rb').read() for f in files]
if together:
    s.sendall(b''.join(data))
else:
    for d in data:
        s.sendall(d)
        time.sleep(0.3)
out = b''
try:
    while True:
        d = s.recv(65536)
        if not d:
            break
        out += d
except (socket.timeout, ConnectionError):
    pass
sys.stdout.write(out.decode('latin-1'))
PY
chmod 0644 "$TN/raw.py"

# hr_case NAME BOXY-RUN-ARGS...: run_case with raw.py and the request files ($TN/req.*) in the workdir.
hr_case() {
	local name=$1
	shift
	C=$TN/cases/$name
	mkdir -p "$C" && cp "$TN/tls/ca.pem" "$TN/raw.py" "$C/" && chmod -R a+rwX "$C"
	[ -n "${REQS:-}" ] && cp $REQS "$C/" && chmod -R a+rX "$C"
	(cd "$C" && tn_boxy run --audit-log "$C/audit" "$@" >"$C/out" 2>"$C/err" </dev/null)
	RC=$?
}

# req FILE TEXT: a request file, printf-style TEXT with \r\n written as is.
req() { printf "$2" >"$TN/$1"; }
# seen PATTERN: did the recorder log a request line matching it?
seen() { grep -q -- "$1" "$TN/rec.log"; }
# arrived TEXT: did any byte sequence TEXT ever reach the server?
arrived() { grep -qaF -- "$1" "$TN/rec.raw"; }

## ---- curl, fresh connections ------------------------------------------------------
hr_case allowed "${ALLOW[@]}" -- curl -sS -m 10 "$BASE/v1/hello"
if [ "$RC" -eq 0 ] && grep -q "^ok /v1/hello" "$C/out" && seen "GET /v1/hello $HP" &&
	audit_has net.http allow "GET $HP/v1/hello"; then
	ok "a request a rule allows reaches the server, recorded at net.http"
else
	fail_case "a request a rule allows reaches the server, recorded at net.http" \
		"want 'ok /v1/hello' and an allow line at net.http"
fi

hr_case refused "${ALLOW[@]}" -- curl -sS -m 10 -o body -w '%{http_code}' "$BASE/v2/secret"
if grep -q '^403$' "$C/out" &&
	grep -qF "allow it with --allow-http 'method=GET domain=$H path=/v2/secret'" "$C/body" &&
	! arrived "/v2/secret" &&
	audit_has net.http deny "GET $HP/v2/secret" &&
	audit_has net.http deny "allow it with --allow-http 'method=GET domain=$H path=/v2/secret'"; then
	ok "a request no rule allows gets 403 naming the rule, never reaches the server, and is audited"
else
	fail_case "a request no rule allows gets 403 naming the rule, never reaches the server, and is audited" \
		"want 403, the rule in the body and the audit line, nothing at the server" \
		"body: $(cat "$C/body" 2>/dev/null)"
fi

## ---- keep-alive and pipelining --------------------------------------------------------
# curl keeps the connection for the second URL: the second request is the gate's.
hr_case keepalive "${ALLOW[@]}" -- curl -sS -m 10 -w '[%{http_code} %{num_connects}]\n' \
	"$BASE/v1/ka-one" "$BASE/v2/ka-two"
if grep -q "^ok /v1/ka-one" "$C/out" && grep -q '^\[200 1\]' "$C/out" &&
	grep -q '^\[403 0\]' "$C/out" && seen "GET /v1/ka-one" && ! arrived "/v2/ka-two" &&
	audit_has net.http allow "GET $HP/v1/ka-one" && audit_has net.http deny "GET $HP/v2/ka-two"; then
	ok "keep-alive: the second request on one connection is checked on its own (403, never sent)"
else
	fail_case "keep-alive: the second request on one connection is checked on its own (403, never sent)" \
		"want [200 1] then [403 0] (one connection) and nothing of /v2/ka-two at the server"
fi

cat >"$TN/fetch.py" <<'PY'
import sys, urllib.request, urllib.error
for url in sys.argv[1:]:
    try:
        r = urllib.request.urlopen(url, timeout=10)
        print(r.status, r.read().decode().strip())
    except urllib.error.HTTPError as e:
        print(e.code, e.read().decode().strip())
PY
REQS="$TN/fetch.py"
hr_case urllib "${ALLOW[@]}" -- python3 fetch.py "$BASE/v1/py" "$BASE/admin/py"
REQS=
if grep -q "^200 ok /v1/py" "$C/out" && grep -q "^403 boxy: GET $HP/admin/py refused" "$C/out" &&
	seen "GET /v1/py" && ! arrived "/admin/py"; then
	ok "python's urllib: allowed and refused, the 403's body readable as an HTTPError"
else
	fail_case "python's urllib: allowed and refused, the 403's body readable as an HTTPError" \
		"want '200 ok /v1/py' and '403 boxy: GET $HP/admin/py refused…'"
fi

# Two requests in one write; the second names another host (listed, same port).
req req.pipe "GET /v1/pipe-one HTTP/1.1\r\nHost: $HP\r\n\r\nGET /v1/pipe-two HTTP/1.1\r\nHost: www.example.test:$REC_PORT\r\n\r\n"
REQS="$TN/req.pipe"
hr_case pipelined "${ALLOW[@]}" --allow-host "www.example.test:$REC_PORT" -- \
	python3 raw.py "$H" "$REC_PORT" -1 req.pipe
REQS=
if grep -q "^ok /v1/pipe-one" "$C/out" && grep -q "^HTTP/1.1 403" "$C/out" &&
	[ "$(grep -c '^HTTP/1.1' "$C/out")" = 2 ] && seen "GET /v1/pipe-one" &&
	! arrived "/v1/pipe-two" && audit_has net.http deny "GET www.example.test:$REC_PORT/v1/pipe-two" &&
	audit_has net.http deny "names another host than the connection was allowed for"; then
	ok "pipelined: a second request for another host gets 403 after the first's answer, and never leaves"
else
	fail_case "pipelined: a second request for another host gets 403 after the first's answer, and never leaves" \
		"want the first answered, then a 403, and nothing of /v1/pipe-two at the server"
fi

req req.port "GET /v1/port HTTP/1.1\r\nHost: $H:9999\r\n\r\n"
REQS="$TN/req.port"
hr_case hostport "${ALLOW[@]}" -- python3 raw.py "$H" "$REC_PORT" req.port
REQS=
if grep -q "^HTTP/1.1 403" "$C/out" && ! arrived "/v1/port" &&
	audit_has net.http deny "names another port than the connection was dialled on"; then
	ok "a Host whose port is not the one dialled is refused"
else
	fail_case "a Host whose port is not the one dialled is refused" "want 403 at net.http, other-port"
fi

req req.abs1 "GET /v1/abs-one HTTP/1.1\r\nHost: $HP\r\n\r\n"
req req.abs2 "GET http://www.example.test:$REC_PORT/v1/abs-two HTTP/1.1\r\nHost: www.example.test:$REC_PORT\r\n\r\n"
REQS="$TN/req.abs1 $TN/req.abs2"
hr_case absolute "${ALLOW[@]}" --allow-host "www.example.test:$REC_PORT" -- \
	python3 raw.py "$H" "$REC_PORT" req.abs1 req.abs2
REQS=
if grep -q "^ok /v1/abs-one" "$C/out" && grep -q "^HTTP/1.1 403" "$C/out" &&
	! arrived "abs-two" && audit_has net.http deny "GET www.example.test:$REC_PORT/v1/abs-two"; then
	ok "an absolute-URI request naming another host on a kept-alive connection is refused"
else
	fail_case "an absolute-URI request naming another host on a kept-alive connection is refused" \
		"want the first answered and a 403 for the absolute target"
fi

## ---- smuggling ------------------------------------------------------------------------
# A server reading Transfer-Encoding sees a second request (/v2/smuggled) in the body;
# one reading Content-Length does not. boxy refuses the ambiguity itself.
req req.clte "POST /v1/form HTTP/1.1\r\nHost: $HP\r\nContent-Length: 52\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\nGET /v2/smuggled HTTP/1.1\r\nHost: $HP\r\n\r\n"
REQS="$TN/req.clte"
hr_case clte --allow-host "$HP" --allow-http "method=GET,POST domain=$H path=/v1/*" -- \
	python3 raw.py "$H" "$REC_PORT" req.clte
REQS=
if grep -q "^HTTP/1.1 400" "$C/out" && ! arrived "/v1/form" && ! arrived "smuggled" &&
	audit_has net.http deny "both Content-Length and Transfer-Encoding"; then
	ok "Content-Length with Transfer-Encoding (request smuggling) is refused whole, 400"
else
	fail_case "Content-Length with Transfer-Encoding (request smuggling) is refused whole, 400" \
		"want 400 and nothing at the server"
fi

## ---- protocol switches ---------------------------------------------------------------------
req req.ws1 "GET /v1/ws HTTP/1.1\r\nHost: $HP\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\r\n"
req req.ws2 "opaque-websocket-frame"
REQS="$TN/req.ws1 $TN/req.ws2"
hr_case websocket "${ALLOW[@]}" -- python3 raw.py "$H" "$REC_PORT" req.ws1 req.ws2
REQS=
if grep -q "^HTTP/1.1 101" "$C/out" && grep -q "opaque-websocket-frame" "$C/out" &&
	arrived "opaque-websocket-frame" && audit_has net.http allow "GET $HP/v1/ws"; then
	ok "an allowed websocket upgrade hands the rest of the connection over once the server says 101"
else
	fail_case "an allowed websocket upgrade hands the rest of the connection over once the server says 101" \
		"want 101 and the frame echoed back"
fi

## ---- a hostile payload's ways past the gate (each must fail) -----------------------------------
# 1. Dot segments: servers resolve them, so /v1/../v2/secret is /v2/secret to the server;
#    also percent-encoded, and with Tomcat's ";" path parameters.
req req.dot1 "GET /v1/%%2e%%2e/v2/secret-dot1 HTTP/1.1\r\nHost: $HP\r\n\r\n"
req req.dot2 "GET /v1/..;/v2/secret-dot2 HTTP/1.1\r\nHost: $HP\r\n\r\n"
req req.dot3 "GET /v1/..%%2Fv2/secret-dot3 HTTP/1.1\r\nHost: $HP\r\n\r\n"
REQS="$TN/req.dot1 $TN/req.dot2 $TN/req.dot3"
hr_case hostile-dots "${ALLOW[@]}" -- sh -c "curl -sS -m 10 --path-as-is -o /dev/null -w '%{http_code}\n' '$BASE/v1/../v2/secret-dot0'; for f in req.dot1 req.dot2 req.dot3; do python3 raw.py $H $REC_PORT \$f | head -n 1; done"
REQS=
if [ "$(grep -c '403' "$C/out")" = 4 ] && ! arrived "secret-dot" &&
	audit_has net.http deny "GET $HP/v1/../v2/secret-dot0"; then
	ok "hostile 1: a path that climbs out of /v1 (.., %2e%2e, ..;, ..%2F) is refused and never sent"
else
	fail_case "hostile 1: a path that climbs out of /v1 (.., %2e%2e, ..;, ..%2F) is refused and never sent" \
		"want four 403s and no secret-dot at the server"
fi

# 2. Bare LF line ends: a server that accepts them would read two requests here. As a
#    connection's first bytes the naming refuses them (net.sni, reset); after a good first
#    request the gate does (400).
req req.lf0 "GET /v1/lf0 HTTP/1.1\nHost: $HP\n\nGET /v2/secret-lf0 HTTP/1.1\nHost: $HP\n\n"
req req.lf1 "GET /v1/lf1 HTTP/1.1\r\nHost: $HP\r\n\r\n"
req req.lf2 "GET /v1/lf2 HTTP/1.1\nHost: $HP\n\nGET /v2/secret-lf2 HTTP/1.1\nHost: $HP\n\n"
REQS="$TN/req.lf0 $TN/req.lf1 $TN/req.lf2"
hr_case hostile-lf "${ALLOW[@]}" -- sh -c \
	"python3 raw.py $H $REC_PORT req.lf0; echo ==; python3 raw.py $H $REC_PORT req.lf1 req.lf2"
REQS=
if grep -q "^ok /v1/lf1" "$C/out" && grep -q "^HTTP/1.1 400" "$C/out" && ! arrived "secret-lf" &&
	! arrived "/v1/lf0" && ! arrived "/v1/lf2" && audit_has net.sni deny "tcp://$TN_OTHER:$REC_PORT" &&
	audit_has net.http deny "bare LF"; then
	ok "hostile 2: bare-LF framing (what some servers split into two requests) is refused whole"
else
	fail_case "hostile 2: bare-LF framing (what some servers split into two requests) is refused whole" \
		"want the naming's refusal, then 'ok /v1/lf1' and a 400, and nothing else at the server"
fi

# 3. Two Host headers on a kept-alive second request: servers disagree on which one counts.
req req.h1 "GET /v1/hh HTTP/1.1\r\nHost: $HP\r\n\r\n"
req req.h2 "GET /v1/secret-hh HTTP/1.1\r\nHost: $HP\r\nHost: www.example.test:$REC_PORT\r\n\r\n"
REQS="$TN/req.h1 $TN/req.h2"
hr_case hostile-hosts "${ALLOW[@]}" --allow-host "www.example.test:$REC_PORT" -- \
	python3 raw.py "$H" "$REC_PORT" req.h1 req.h2
REQS=
if grep -q "^ok /v1/hh" "$C/out" && grep -q "^HTTP/1.1 400" "$C/out" && ! arrived "secret-hh" &&
	audit_has net.http deny "two Host headers"; then
	ok "hostile 3: a second request with two Host headers is refused, the first answered"
else
	fail_case "hostile 3: a second request with two Host headers is refused, the first answered" \
		"want 'ok /v1/hh', then 400, and no secret-hh at the server"
fi

# 4. Switching protocols to get unread bytes through: h2c (boxy cannot read HTTP/2 in the
#    clear, so the connection is reset once the server agrees), and an upgrade after the
#    connection's first request (refused, whatever the server would say).
req req.h2c "GET /v1/up HTTP/1.1\r\nHost: $HP\r\nUpgrade: h2c\r\nConnection: Upgrade\r\n\r\n"
req req.h2cx "GET /v2/secret-h2c HTTP/1.1\r\nHost: $HP\r\n\r\n"
req req.late1 "GET /v1/first HTTP/1.1\r\nHost: $HP\r\n\r\n"
req req.late2 "GET /v1/ws HTTP/1.1\r\nHost: $HP\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\r\n"
req req.late3 "GET /v2/secret-late HTTP/1.1\r\nHost: $HP\r\n\r\n"
REQS="$TN/req.h2c $TN/req.h2cx $TN/req.late1 $TN/req.late2 $TN/req.late3"
hr_case hostile-switch "${ALLOW[@]}" -- sh -c \
	"python3 raw.py $H $REC_PORT req.h2c req.h2cx; echo ==; python3 raw.py $H $REC_PORT req.late1 req.late2 req.late3"
REQS=
if ! arrived "secret-h2c" && ! arrived "secret-late" && sed -n '/^==$/,$p' "$C/out" | grep -q "^HTTP/1.1 403" &&
	audit_has net.http deny "after the connection's first request"; then
	ok "hostile 4: an h2c switch is reset before its next bytes leave; a late upgrade is refused"
else
	fail_case "hostile 4: an h2c switch is reset before its next bytes leave; a late upgrade is refused" \
		"want no secret-h2c or secret-late at the server and a switch-late refusal"
fi

# 5. Tunnels and missing names, each after a good first request on the connection:
#    CONNECT through the allowed host to another, an absolute URI that disagrees with
#    Host, and a Host-less HTTP/1.0 request (the server would route it to whatever its
#    default host is).
req req.connect "CONNECT www.example.test:$REC_PORT HTTP/1.1\r\nHost: www.example.test:$REC_PORT\r\n\r\n"
req req.absmis "GET http://www.example.test:$REC_PORT/v1/secret-abs HTTP/1.1\r\nHost: $HP\r\n\r\n"
req req.nh1 "GET /v1/nh HTTP/1.1\r\nHost: $HP\r\n\r\n"
req req.nh2 "GET /v1/secret-nohost HTTP/1.0\r\n\r\n"
REQS="$TN/req.connect $TN/req.absmis $TN/req.nh1 $TN/req.nh2"
hr_case hostile-tunnel "${ALLOW[@]}" --allow-host "www.example.test:$REC_PORT" -- sh -c \
	"python3 raw.py $H $REC_PORT req.nh1 req.connect; echo ==; python3 raw.py $H $REC_PORT req.nh1 req.absmis; echo ==; python3 raw.py $H $REC_PORT req.nh1 req.nh2"
REQS=
if [ "$(grep -c '^HTTP/1.1 40[03]' "$C/out")" = 3 ] && ! arrived "CONNECT" &&
	! arrived "secret-abs" && ! arrived "secret-nohost" &&
	audit_has net.http deny "a request without a Host"; then
	ok "hostile 5: CONNECT through an allowed host, an absolute URI disagreeing with Host, a Host-less request: refused"
else
	fail_case "hostile 5: CONNECT through an allowed host, an absolute URI disagreeing with Host, a Host-less request: refused" \
		"want three refusals and none of them at the server"
fi

## ---- real servers: where their parsers and the gate's could part ---------------------------
# node's http module on $H:8082 (answers every request "ok METHOD URL", logs "METHOD URL"),
# and python's http.server serving files on $H:8083 as HTTP/1.1 (keep-alive), which logs
# each request line. Neither is told about boxy; what they log is what got through.
mkdir -p "$TN/www/v1" "$TN/www/v2"
echo public >"$TN/www/v1/page"
echo TOP-SECRET >"$TN/www/v2/secret"
chmod -R a+rX "$TN/www"
: >"$TN/node.req"
chmod 0666 "$TN/node.req"
cat >"$TN/node-srv.js" <<'JS'
const http = require('http'), fs = require('fs');
const [addr, port, log] = process.argv.slice(2);
http.createServer((req, res) => {
  fs.appendFileSync(log, `${req.method} ${req.url}\n`);
  req.resume();
  req.on('end', () => res.end(`ok ${req.method} ${req.url}\n`));
}).listen(+port, addr);
JS
cat >"$TN/py-srv.py" <<'PY'
import functools, http.server, sys
addr, port, root = sys.argv[1], int(sys.argv[2]), sys.argv[3]
class H(http.server.SimpleHTTPRequestHandler):
    protocol_version = 'HTTP/1.1'       # keep-alive, as a deployment would have it
    def log_message(self, fmt, *a):
        sys.stderr.write(fmt % a + '\n')
        sys.stderr.flush()
http.server.ThreadingHTTPServer((addr, port), functools.partial(H, directory=root)).serve_forever()
PY
tn_start nodesrv node "$TN/node-srv.js" "$TN_OTHER" 8082 "$TN/node.req"
tn_start pysrv python3 -u "$TN/py-srv.py" "$TN_OTHER" 8083 "$TN/www"
tn_wait_tcp "$TN_OTHER" 8082
tn_wait_tcp "$TN_OTHER" 8083
RULE_V1="method=GET,HEAD domain=$H path=/v1/*"

# 6. A first request line boxy took for not-HTTP (so the flow was allowed on its address,
#    ungated) that node reads as a request: a method boxy does not know with RTSP/ICE as
#    the version. Node answers it and keeps the connection, so whatever follows would reach
#    it unread. Each must be refused at the naming, and nothing after it arrive.
req req.rtsp1 "DESCRIBE /v1/page RTSP/1.1\r\nHost: $H:8082\r\n\r\n"
req req.rtsp2 "SOURCE /v1/page ICE/1.1\r\nHost: $H:8082\r\n\r\n"
req req.rtsp3 "ANNOUNCE rtsp://$H:8082/v1/page RTSP/1.1\r\nHost: $H:8082\r\n\r\n"
req req.rtspx "GET /v2/secret-rtsp HTTP/1.1\r\nHost: $H:8082\r\n\r\n"
REQS="$TN/req.rtsp1 $TN/req.rtsp2 $TN/req.rtsp3 $TN/req.rtspx"
hr_case hostile-notgated --allow-host "$H:8082" --allow-http "$RULE_V1" -- sh -c \
	"for f in req.rtsp1 req.rtsp2 req.rtsp3; do python3 raw.py $H 8082 \$f req.rtspx; echo ==; done"
REQS=
if ! grep -q "secret-rtsp" "$TN/node.req" && ! grep -q "secret-rtsp" "$C/out" &&
	[ "$(grep -c "net.sni" "$C/audit")" -ge 3 ]; then
	ok "hostile 6: a request line node reads (RTSP/ICE version, unknown method) is no way past the gate"
else
	fail_case "hostile 6: a request line node reads (RTSP/ICE version, unknown method) is no way past the gate" \
		"want three refusals at the naming and no secret-rtsp at node" \
		"node saw: $(tr '\n' ' ' <"$TN/node.req")"
fi

# 7. A body on a GET: python's http.server does not read it, and takes it for the next
#    request (RFC 9110 §9.3.1 warns of exactly this). Refused whole, as smuggling.
smug="GET /v2/secret HTTP/1.1\r\nHost: $H:8083\r\n\r\n"
req req.getbody "GET /v1/page HTTP/1.1\r\nHost: $H:8083\r\nContent-Length: $(printf "$smug" | wc -c)\r\n\r\n$smug"
req req.headbody "HEAD /v1/page HTTP/1.1\r\nHost: $H:8083\r\nContent-Length: $(printf "$smug" | wc -c)\r\n\r\n$smug"
req req.getchunk "GET /v1/page HTTP/1.1\r\nHost: $H:8083\r\nTransfer-Encoding: chunked\r\n\r\n1\r\nx\r\n0\r\n\r\n"
REQS="$TN/req.getbody $TN/req.headbody $TN/req.getchunk"
hr_case hostile-getbody --allow-host "$H:8083" --allow-http "$RULE_V1" -- sh -c \
	"for f in req.getbody req.headbody req.getchunk; do python3 raw.py $H 8083 -1 \$f; echo ==; done"
REQS=
if ! grep -q "TOP-SECRET" "$C/out" && ! grep -q "/v2/secret" "$TN/pysrv.log" &&
	[ "$(grep -c '^HTTP/1.1 400' "$C/out")" = 3 ] &&
	audit_has net.http deny "a body on GET"; then
	ok "hostile 7: a body on GET or HEAD (python's http.server reads it as a second request) is refused, 400"
else
	fail_case "hostile 7: a body on GET or HEAD (python's http.server reads it as a second request) is refused, 400" \
		"want three 400s and no /v2/secret at python's server" \
		"python saw: $(tr '\n' ' ' <"$TN/pysrv.log")"
fi

# 9. Two Upgrade headers, h2c then websocket: boxy read the last and took a server's 101 for
#    a websocket's, passing everything after it unread; Go's h2c handler switches on any
#    Upgrade that names h2c, so what followed would be HTTP/2 streams to any path. The
#    recorder answers 101 to any upgrade and echoes: nothing after the head may reach it.
req req.up2 "GET /v1/up2 HTTP/1.1\r\nHost: $HP\r\nUpgrade: h2c\r\nUpgrade: websocket\r\nConnection: Upgrade, HTTP2-Settings\r\nHTTP2-Settings: AAMAAABkAAQAoAAAAAIAAAAA\r\n\r\n"
req req.up2x "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\nsecret-up2"
REQS="$TN/req.up2 $TN/req.up2x"
hr_case hostile-upgrade2 "${ALLOW[@]}" -- python3 raw.py "$H" "$REC_PORT" req.up2 req.up2x
REQS=
if grep -q "^HTTP/1.1 400" "$C/out" && ! arrived "secret-up2" && ! arrived "/v1/up2" &&
	audit_has net.http deny "two Upgrade headers"; then
	ok "hostile 9: two Upgrade headers (h2c, then websocket) are refused before a byte leaves"
else
	fail_case "hostile 9: two Upgrade headers (h2c, then websocket) are refused before a byte leaves" \
		"want 400 and nothing of it at the server"
fi

# 10. Held: a POST whose body is a request, with "Expect: 100-continue", and chunked, to
#     node (reads every body) and python's http.server (no POST: answers 501 and closes).
#     The gate passes the body as a body; neither server may serve what is inside it.
for port in 8082 8083; do
	smug="GET /v2/secret-expect HTTP/1.1\r\nHost: $H:$port\r\n\r\n"
	req req.expect$port "POST /v1/form HTTP/1.1\r\nHost: $H:$port\r\nExpect: 100-continue\r\nContent-Length: $(printf "$smug" | wc -c)\r\n\r\n$smug"
	req req.chunk$port "POST /v1/form HTTP/1.1\r\nHost: $H:$port\r\nTransfer-Encoding: chunked\r\n\r\n$(printf '%x' "$(printf "$smug" | wc -c)")\r\n$smug\r\n0\r\n\r\n"
done
REQS="$TN/req.expect8082 $TN/req.expect8083 $TN/req.chunk8082 $TN/req.chunk8083"
hr_case held-bodies --allow-host "$H:8082" --allow-host "$H:8083" \
	--allow-http "method=GET,POST domain=$H path=/v1/*" -- sh -c \
	"for p in 8082 8083; do python3 raw.py $H \$p -1 req.expect\$p; python3 raw.py $H \$p -1 req.chunk\$p; done"
REQS=
if ! grep -q "secret-expect" "$TN/node.req" "$TN/pysrv.log" && ! grep -q "TOP-SECRET" "$C/out" &&
	grep -q "POST /v1/form" "$TN/node.req" && [ "$(grep -c "net.http" "$C/audit")" -ge 4 ]; then
	ok "held 10: a request inside a POST body (Expect: 100-continue, chunked) stays a body to node and python"
else
	fail_case "held 10: a request inside a POST body (Expect: 100-continue, chunked) stays a body to node and python" \
		"want POST /v1/form at node and no secret-expect at either server" \
		"node saw: $(tr '\n' ' ' <"$TN/node.req")" "python saw: $(tr '\n' ' ' <"$TN/pysrv.log")"
fi

# 8. The end-of-run "fix:" is the request itself, for a user to paste: never a wildcard
#    (a method "*" would read back as every method) and never a '!' (csh expands it
#    even inside the single quotes the rule is shown in).
req req.star "* /v2/star HTTP/1.1\r\nHost: $HP\r\n\r\n"
req req.bang "GET /v2/x!rm HTTP/1.1\r\nHost: $HP\r\n\r\n"
REQS="$TN/req.star $TN/req.bang"
hr_case hostile-fix "${ALLOW[@]}" -- sh -c \
	"python3 raw.py $H $REC_PORT req.star; python3 raw.py $H $REC_PORT req.bang"
REQS=
if [ "$(grep -c '^HTTP/1.1 403' "$C/out")" = 2 ] && grep -q "2 refused" "$C/err" &&
	audit_has net.http deny '/v2/x!rm' && ! grep -q "method=\*" "$C/err" "$C/out" "$C/audit" &&
	! grep -q "fix: .*x!rm" "$C/err" && ! arrived "/v2/star" && ! arrived "x!rm"; then
	ok "hostile 8: no fix is suggested for a method '*' or a path with '!' (end-of-run, 403 body, audit)"
else
	fail_case "hostile 8: no fix is suggested for a method '*' or a path with '!' (end-of-run, 403 body, audit)" \
		"want two 403s, both counted, and neither 'method=*' nor a fix with '!' anywhere"
fi

## ---- the record -------------------------------------------------------------------------
C=$TN/cases/keepalive
if grep -q "GET $HP/v2/ka-two .*net.http .*fix: --allow-http 'method=GET domain=$H path=/v2/ka-two'" "$C/err"; then
	ok "the end-of-run summary names the refused request and the --allow-http rule that would allow it"
else
	fail_case "the end-of-run summary names the refused request and the --allow-http rule that would allow it" \
		"want the request, net.http and the fix on stderr"
fi

DB=$TN/state/boxy/sessions.db
sid=$(sqlite3 "$DB" "SELECT session_id FROM requests WHERE path = '/v1/ka-one'" 2>/dev/null | head -n 1)
rows=$(sqlite3 -separator ' ' "$DB" "SELECT seq, method, host, port, path, verdict, layer, coalesce(rule, -1) FROM requests WHERE session_id = '$sid' ORDER BY seq" 2>/dev/null)
if [ -n "$sid" ] && [ "$rows" = "1 GET other.example.test 8081 /v1/ka-one allow net.http 0
2 GET other.example.test 8081 /v2/ka-two deny net.http -1" ]; then
	ok "the store keeps one requests row per request: sequence, method, host, port, path, verdict, rule"
else
	C=$TN/cases/keepalive
	fail_case "the store keeps one requests row per request: sequence, method, host, port, path, verdict, rule" \
		"rows: $rows"
fi

C=$TN/cases/show
mkdir -p "$C"
tn_boxy show --json "$sid" >"$C/out" 2>"$C/err"
if python3 - "$C/out" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
r = d["requests"]
assert [x["path"] for x in r] == ["/v1/ka-one", "/v2/ka-two"], r
assert r[0]["verdict"] == "allow" and r[0]["rule"] == 0 and r[0]["seq"] == 1, r[0]
assert r[1]["verdict"] == "deny" and r[1]["rule"] is None and r[1]["layer"] == "net.http", r[1]
assert r[1]["method"] == "GET" and r[1]["host"] == "other.example.test" and r[1]["port"] == 8081
PY
then
	ok "boxy show --json lists the session's requests"
else
	fail_case "boxy show --json lists the session's requests" "want requests[] with both"
fi
tn_boxy show "$sid" >"$C/text" 2>&1
if grep -q "^http requests  2 (1 refused, among the refusals below" "$C/text" &&
	grep -q "GET $HP/v2/ka-two .*net.http .*fix: --allow-http 'method=GET domain=$H path=/v2/ka-two'" "$C/text" &&
	grep -q "http rules: 1" "$C/text"; then
	ok "boxy show lists the requests, refused ones among them"
else
	fail_case "boxy show lists the requests, refused ones among them" \
		"want 'http requests  2 (1 refused…', the refused one with its fix, and 'http rules: 1'" \
		"show: $(head -c 1500 "$C/text")"
fi

done_testing
