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

## ---- the record -------------------------------------------------------------------------
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

done_testing
