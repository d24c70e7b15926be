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
	[ -n "${REQS:-}" ] && cp $REQS "$C/" && chmod a+r "$C"/req.*
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

done_testing
