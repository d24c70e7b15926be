#!/bin/bash
# tests/e2e/http-inspect.sh — TLS inspection end to end (doc/http-inspection.md), in the
# hermetic test network (tests/lib/testnet.sh), with real clients (curl, node's fetch, https
# and http2, python's urllib, git) against test HTTPS servers whose certificates the
# suite's own CA signed (tests/lib/tls-testnet.sh lists the hosts). Each case checks what the
# client got, what the server saw (a refused request never arrives, not even in part) and
# what was recorded (net.http, net.tls).
#
# The daemon trusts the suite's CA through SSL_CERT_FILE (boxy-net reads it before its
# lockdown); the sandbox trusts the session CA through its own bundle and variables.
set -u
here=$(cd "$(dirname "$0")/.." && pwd)
. "$here/lib/harness.sh"
. "$here/lib/testnet.sh"
harness_locate
[ "${BOXY_TESTNET_INSIDE:-}" = 1 ] || harness_as_test_user "$0" "$@"
testnet_enter "$0" "$@"

. "$here/lib/tls-testnet.sh"
tls_testnet_setup

## ---- the issue's Done-when ---------------------------------------------------------
RULE='method=GET domain=api.test path=/v1/*'
run_case done-when --allow-http "$RULE" -- sh -c \
	'curl -sS -m 10 https://api.test/v1/x; curl -sS -m 10 -o body -w "%{http_code}\n" https://api.test/v2/x'
if [ "$RC" -eq 0 ] && grep -q '^ok GET /v1/x host=api.test' "$C/out" &&
	grep -q '^403$' "$C/out" && grep -qF "refused" "$C/body" &&
	seen "GET /v1/x" && ! arrived "/v2/x" &&
	audit_has net.http deny "GET api.test/v2/x"; then
	ok "Done-when: curl https://api.test/v1/x succeeds, /v2/x gets 403 and never leaves, audited"
else
	fail_case "Done-when: curl https://api.test/v1/x succeeds, /v2/x gets 403 and never leaves, audited" \
		"body: $(cat "$C/body" 2>/dev/null)"
fi


## ---- keep-alive: each request on one connection is decided on its own ---------------
ti_case keepalive "" --allow-http "$RULE" -- curl -sS -m 10 -w '[%{http_code} %{num_connects}]\n' \
	https://api.test/v1/ka-one https://api.test/v1/ka-two https://api.test/v2/ka-three
grep -q '^ok GET /v1/ka-one' "$C/out" && grep -q '^ok GET /v1/ka-two' "$C/out" &&
	[ "$(grep -c '^\[200 1\]' "$C/out")" = 1 ] && [ "$(grep -c '^\[200 0\]' "$C/out")" = 1 ] &&
	grep -q '^\[403 0\]' "$C/out" && seen "GET /v1/ka-two" && ! arrived "/v2/ka-three" &&
	audit_has net.http allow "GET api.test/v1/ka-two" &&
	audit_has net.http deny "GET api.test/v2/ka-three"
check "keep-alive inside TLS: two allowed requests and a refused third on one connection" $? \
	"want [200 1] [200 0] [403 0] and nothing of /v2/ka-three at the server"

# Another Host inside an inspected connection (the SNI said api.test).
cat >"$TN/rawtls.py" <<'PY'
import socket, ssl, sys
host, reqs = sys.argv[1], sys.argv[2:]
ctx = ssl.create_default_context()
s = ctx.wrap_socket(socket.create_connection((host, 443), timeout=10), server_hostname=host)
s.sendall(b''.join(r.encode().decode('unicode_escape').encode('latin-1') for r in reqs))
out = b''
try:
    while True:
        d = s.recv(65536)
        if not d:
            break
        out += d
except (socket.timeout, ConnectionError, ssl.SSLError):
    pass
sys.stdout.write(out.decode('latin-1'))
PY
ti_case otherhost "rawtls.py" --allow-http "$RULE" --allow-host www.example.test -- \
	/usr/bin/python3 rawtls.py api.test 'GET /v1/mine HTTP/1.1\r\nHost: api.test\r\n\r\n' \
	'GET /v1/theirs HTTP/1.1\r\nHost: www.example.test\r\n\r\n'
grep -q '^ok GET /v1/mine' "$C/out" && grep -q '^HTTP/1.1 403' "$C/out" &&
	! arrived "/v1/theirs" && audit_has net.http deny "GET www.example.test/v1/theirs"
check "inside TLS, a pipelined request naming another host than the SNI gets 403 and never leaves" $? \
	"want the first answered, a 403, nothing of /v1/theirs at the server"

# A server that ends with close_notify, and one that only closes the socket: the client sees
# the same as it would without boxy in between (a truncation stays visible).
cat >"$TN/ends.py" <<'PY'
import socket, ssl
c = ssl.create_default_context()
c.options &= ~ssl.OP_IGNORE_UNEXPECTED_EOF      # python ignores a missing close_notify otherwise
for p in ('/v1/close-notify', '/v1/close-bare'):
    s = c.wrap_socket(socket.create_connection(('api.test', 443)), server_hostname='api.test',
                      suppress_ragged_eofs=False)
    s.sendall(('GET %s HTTP/1.1\r\nHost: api.test\r\n\r\n' % p).encode())
    out = b''
    try:
        while True:
            d = s.recv(65536)
            if not d:
                break
            out += d
        print(p, 'clean end', out.endswith(b'until the end\n'))
    except ssl.SSLError:
        print(p, 'ragged end', out.endswith(b'until the end\n'))
PY
ti_case ends "ends.py" --allow-http "$RULE" -- /usr/bin/python3 ends.py
grep -q '^/v1/close-notify clean end True' "$C/out" && grep -q '^/v1/close-bare ragged end True' "$C/out"
check "a server's close_notify reaches the client, and so does its absence (a truncation stays visible)" $? \
	"want a clean end, then a ragged one"

## ---- HTTP/2 -------------------------------------------------------------------------------
H2RULE='method=GET domain=h2.test path=/v1/*'
ti_case h2-curl "" --allow-http "$H2RULE" -- sh -c \
	'curl -sS -m 10 --http2 -w "[%{http_code} %{http_version}]\n" https://h2.test/v1/x https://h2.test/v2/x'
grep -q '^h2 v1 ok' "$C/out" && grep -q '^\[200 2\]' "$C/out" && grep -q '^\[403 2\]' "$C/out" &&
	! grep -q 'h2 v2 secret' "$C/out" && ! grep -q ':path: /v2/x' "$TN/h2.log" &&
	audit_has net.http allow "GET h2.test/v1/x" && audit_has net.http deny "GET h2.test/v2/x"
check "HTTP/2 (curl --http2): an allowed stream answered, a refused one 403 and never sent upstream" $? \
	"want [200 2] and [403 2], no /v2/x in nghttpd's log"

# An HTTP/1.1-only server: the client is offered what the server speaks.
ti_case h2-to-h1 "" --allow-http "$RULE" -- curl -sS -m 10 --http2 -w '[%{http_version}]\n' \
	https://api.test/v1/h2client
grep -q '^ok GET /v1/h2client' "$C/out" && grep -q '^\[1.1\]' "$C/out"
check "ALPN: an h2-capable client of an HTTP/1.1-only server speaks HTTP/1.1 (never translated)" $? \
	"want the page over HTTP/1.1"

# An h2-only client (nghttp offers nothing but h2) of an HTTP/1.1-only server.
ti_case h2only-client "" --allow-http "$RULE" -- nghttp -v https://api.test/v1/h2only
grep -q 'not processed' "$C/err" && ! arrived "/v1/h2only" &&
	audit_has net.tls deny "no protocol boxy can inspect"
check "ALPN: an h2-only client and an HTTP/1.1-only server share no protocol: refused, said why" $? \
	"want a failure and a net.tls line"

## ---- HTTP/2 bodies, trailers, a refusal's GOAWAY ---------------------------------------------
# gRPC's shape: POST, application/grpc, a body in both directions bigger than a flow-control
# window (64 KiB), trailers after the answer. The second method is not allowed.
cat >"$TN/grpc.js" <<'JS'
const http2 = require('http2');
const s = http2.connect('https://grpc.test');
function call(path, n) {
  return new Promise(done => {
    let q;
    try {
      q = s.request({ ':method': 'POST', ':path': path, 'content-type': 'application/grpc',
                      'te': 'trailers' });
    } catch (e) { console.log(path, 'error', e.code); return done(); }
    let st = 0, len = 0, tr = {};
    q.on('response', h => st = h[':status']);
    q.on('data', d => len += d.length);
    q.on('trailers', t => tr = t);
    q.on('end', () => { console.log(path, st, len, tr['grpc-status'] || '-', tr['x-echo-len'] || '-'); done(); });
    q.on('error', e => { console.log(path, 'error', e.code); done(); });
    q.end(Buffer.alloc(n, 120));
  });
}
(async () => {
  await call('/pkg.Svc/Call', 300000);
  await call('/pkg.Svc/Call', 10);
  await call('/pkg.Svc/Admin', 1000);
  await call('/pkg.Svc/Call', 10);       /* after the refusal: the channel goes on */
  s.close();
})();
JS
ti_case grpc "grpc.js" --allow-http 'method=POST domain=grpc.test path=/pkg.Svc/Call' -- node grpc.js
grep -q '^/pkg.Svc/Call 200 300000 0 300000$' "$C/out" && grep -q '^/pkg.Svc/Call 200 10 0 10$' "$C/out" &&
	grep -q '^/pkg.Svc/Admin 403 ' "$C/out" && [ "$(grep -c '^/pkg.Svc/Call 200 10 0 10$' "$C/out")" = 2 ] &&
	grep -q '^POST /pkg.Svc/Call len=300000$' "$TN/grpc.log" && ! grep -q 'Admin' "$TN/grpc.log" &&
	audit_has net.http deny "POST grpc.test/pkg.Svc/Admin"
check "HTTP/2 with gRPC's shape: bodies past the window both ways, trailers passed, a refused method 403 on its stream alone" $? \
	"want 300000 bytes echoed with grpc-status 0, 403 for Admin, the next call on the same session answered"

## ---- node: fetch, https, http2 --------------------------------------------------------------
cat >"$TN/node.js" <<'JS'
const https = require('https'), http2 = require('http2');
async function main() {
  for (const u of ['https://api.test/v1/fetch', 'https://api.test/v2/fetch']) {
    const r = await fetch(u);
    console.log('fetch', r.status, (await r.text()).trim().split('\n')[0]);
  }
  await new Promise(done => https.get('https://api.test/v1/https', r => {
    let b = ''; r.on('data', d => b += d);
    r.on('end', () => { console.log('https', r.statusCode, b.trim()); done(); });
  }).on('error', e => { console.log('https error', e.code); done(); }));
  const s = http2.connect('https://h2.test');
  for (const p of ['/v1/x', '/v2/x']) {
    await new Promise(done => {
      const q = s.request({ ':path': p });
      let st = 0, b = '';
      q.on('response', h => st = h[':status']);
      q.on('data', d => b += d);
      q.on('end', () => { console.log('http2', p, st, b.trim().split('\n')[0]); done(); });
      q.on('error', e => { console.log('http2', p, 'error', e.code); done(); });
    });
  }
  s.close();
}
main().catch(e => { console.log('error', e.cause ? e.cause.code : e.message); process.exit(1); });
JS
ti_case node "node.js" --allow-http "$RULE" --allow-http "$H2RULE" -- node node.js
grep -q '^fetch 200 ok GET /v1/fetch' "$C/out" && grep -q '^fetch 403 boxy: GET' "$C/out" &&
	grep -q '^https 200 ok GET /v1/https' "$C/out" && grep -q '^http2 /v1/x 200 h2 v1 ok' "$C/out" &&
	grep -q '^http2 /v2/x 403 boxy: GET' "$C/out" && ! arrived "/v2/fetch"
check "node: fetch and https through HTTP/1.1, http2 streams, allowed and refused" $? \
	"want fetch 200/403, https 200, http2 200/403"

## ---- python urllib ----------------------------------------------------------------------------
cat >"$TN/fetch.py" <<'PY'
import sys, urllib.request, urllib.error
for url in sys.argv[1:]:
    try:
        r = urllib.request.urlopen(url, timeout=10)
        print(r.status, r.read().decode().strip())
    except urllib.error.HTTPError as e:
        print(e.code, e.read().decode().strip())
PY
ti_case urllib "fetch.py" --allow-http "$RULE" -- /usr/bin/python3 fetch.py \
	https://api.test/v1/py https://api.test/admin/py
grep -q '^200 ok GET /v1/py' "$C/out" && grep -q '^403 boxy: GET api.test/admin/py refused' "$C/out" &&
	! arrived "/admin/py"
check "python's urllib over inspected TLS: allowed, and refused as an HTTPError 403" $? \
	"want '200 ok GET /v1/py' and '403 boxy: GET api.test/admin/py refused…'"

## ---- git over HTTPS ---------------------------------------------------------------------------
GITRULE='method=GET,POST domain=git.test path=/git/repo.git/*'
ti_case git "" --allow-http "$GITRULE" -- sh -c \
	'git clone -q https://git.test/git/repo.git mine && cat mine/README;
	 git clone -q https://git.test/git/secret.git theirs; echo "secret: $?"'
grep -q '^inspected clone works' "$C/out" && grep -q '^secret: 128' "$C/out" &&
	grep -q '403' "$C/err" && ! grep -q 'secret.git' "$TN/git.log" &&
	audit_has net.http deny "git.test/git/secret.git"
check "git clone over inspected HTTPS: the allowed repository clones, the other gets 403" $? \
	"want the README and a 403 for secret.git"

## ---- upstream certificates ----------------------------------------------------------------------
ti_case badcert "" --allow-http 'method=GET domain=bad.test path=/*' -- \
	curl -sS -m 10 https://bad.test/x
[ "$RC" -ne 0 ] && grep -qi 'alert' "$C/err" && [ ! -s "$TN/bad.log" ] &&
	audit_has net.tls deny "the server's certificate was refused (self-signed certificate)"
check "an upstream with a self-signed certificate: refused, the client gets an alert, the reason audited" $? \
	"want a TLS alert and the net.tls line"

ti_case wrongname "" --allow-http 'method=GET domain=wrong.test path=/*' -- \
	curl -sS -m 10 https://wrong.test/x
[ "$RC" -ne 0 ] && audit_has net.tls deny "hostname mismatch" && ! seen "host=wrong.test" &&
	! grep -q 'wrong.test' "$TN/api.log"
check "an upstream whose certificate names another host: refused (hostname mismatch)" $? \
	"want the net.tls line"

# TLS 1.3 finishes the client's handshake before the server judges it: a server that requires
# a client certificate refuses boxy-net's empty one with an alert that comes as its first record.
ti_case mtls "" --allow-http 'method=GET domain=mtls.test path=/*' -- curl -sS -m 10 https://mtls.test/x
[ "$RC" -ne 0 ] && audit_has net.tls deny "certificate required"
check "an upstream that requires a client certificate (TLS 1.3): refused, and the audit log says why" $? \
	"audit: $(grep -F '"net.tls"' "$C/audit" | grep -v session-ca | tail -n 2)"

## ---- clients that do not trust the session CA ---------------------------------------------------
cat >"$TN/ownca.js" <<'JS'
const https = require('https'), fs = require('fs');
https.get('https://api.test/v1/ownca', { ca: fs.readFileSync('ca.pem') }, r => console.log('got', r.statusCode))
  .on('error', e => console.log('error', e.code));
JS
ti_case owncabundle "ownca.js" --allow-http "$RULE" -- sh -c \
	'curl -sS -m 10 --cacert ca.pem --capath /nonexistent https://api.test/v1/ownca; echo "curl: $?"; node ownca.js'
grep -q '^curl: 60$' "$C/out" && grep -q '^error UNABLE_TO_VERIFY_LEAF_SIGNATURE' "$C/out" &&
	! arrived "/v1/ownca" &&
	audit_has net.tls deny "the client refused this session's certificate (its alert: unknown CA)" &&
	[ "$(grep -c "refused this session's certificate (its alert: " "$C/audit")" = 2 ]
check "clients with their own CA bundle (curl --cacert, node's ca) fail, and the audit log says why" $? \
	"want curl exit 60, node's verification error, and net.tls lines naming the alert"

ti_case pinned "" --allow-http "$RULE" -- curl -sS -m 10 \
	--pinnedpubkey 'sha256//AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=' https://api.test/v1/pinned
[ "$RC" -eq 90 ] && ! arrived "/v1/pinned" &&
	audit_has net.tls deny "right after the handshake, before any request: it may pin another certificate"
check "a client that pins a key fails before any request, and the audit log says it may pin" $? \
	"want curl exit 90 and a net.tls line"

## ---- a host without rules is not inspected -------------------------------------------------------
ti_case uninspected "" --allow-http "$RULE" --allow-host plain.test -- sh -c \
	'curl -sS -m 10 --cacert ca.pem https://plain.test/v2/anything;
	 openssl s_client -connect plain.test:443 -servername plain.test </dev/null 2>/dev/null |
		openssl x509 -noout -issuer;
	 openssl s_client -connect api.test:443 -servername api.test </dev/null 2>/dev/null |
		openssl x509 -noout -issuer'
grep -q '^ok GET /v2/anything host=plain.test' "$C/out" &&
	[ "$(grep -c '^issuer=CN = boxy test CA' "$C/out")" = 1 ] &&
	grep -q '^issuer=O = boxy, CN = boxy session CA' "$C/out" &&
	! audit_has net.http allow "plain.test/v2/anything"
check "a host without rules keeps the SNI check only: the server's own certificate, no request gated" $? \
	"want plain.test's certificate from the suite's CA, api.test's from the session CA"

## ---- the sandbox's trust ----------------------------------------------------------------------------
ti_case trust "" --allow-http "$RULE" -- sh -c \
	'env | grep -E "^(SSL_CERT_FILE|SSL_CERT_DIR|NODE_EXTRA_CA_CERTS|REQUESTS_CA_BUNDLE|CURL_CA_BUNDLE|GIT_SSL_CAINFO|PIP_CERT|DENO_CERT)=" | sort;
	 grep -c "BEGIN CERTIFICATE" /etc/ssl/certs/boxy-session-ca.pem;
	 tail -n 1 /etc/ssl/certs/ca-certificates.crt;
	 openssl verify -CApath /etc/ssl/certs /etc/ssl/certs/boxy-session-ca.pem;
	 cat /etc/ssl/certs/boxy-session-ca.pem >session-ca.pem'
grep -q '^SSL_CERT_FILE=/etc/ssl/certs/ca-certificates.crt$' "$C/out" &&
	grep -q '^NODE_EXTRA_CA_CERTS=/etc/ssl/certs/boxy-session-ca.pem$' "$C/out" &&
	grep -q '^GIT_SSL_CAINFO=/etc/ssl/certs/ca-certificates.crt$' "$C/out" &&
	[ "$(grep -c '=/etc/ssl/certs' "$C/out")" = 8 ] && grep -qx 1 "$C/out" &&
	grep -q '^-----END CERTIFICATE-----$' "$C/out" &&
	grep -q 'boxy-session-ca.pem: OK' "$C/out"
check "the sandbox trusts the session CA: its bundle, the CA alone, its hash link, the runtimes' variables" $? \
	"want the eight variables, the CA at the bundle's end, openssl verify -CApath OK"
cp "$C/session-ca.pem" "$TN/cases/session-ca.pem" 2>/dev/null

# A rule that restricts neither method nor path: the host is allowed, not inspected.
ti_case notrust "" --allow-http 'domain=api.test' -- sh -c \
	'env | grep -cE "^(SSL_CERT_FILE|NODE_EXTRA_CA_CERTS)="; ls /etc/ssl/certs/boxy-session-ca.pem;
	 curl -sS -m 10 --cacert ca.pem https://api.test/v2/any'
grep -qx 0 "$C/out" && grep -q 'No such file' "$C/err" && ! grep -q 'net.tls' "$C/audit" &&
	grep -q '^ok GET /v2/any' "$C/out"
check "a run whose rules restrict no method or path inspects nothing: no CA, no variables, the server's own certificate" $? \
	"want none of them, and the page through the server's own certificate"

## ---- the CA's key is in boxy-net's memory only -----------------------------------------------------
# The session CA's public point (the key's DER, and any certificate, would carry it).
point=$(openssl x509 -in "$TN/cases/session-ca.pem" -noout -pubkey 2>/dev/null |
	openssl pkey -pubin -outform DER 2>/dev/null | tail -c 65 | od -An -tx1 | tr -d ' \n')
C=$TN/cases/keyfiles
mkdir -p "$C"
python3 - "$point" "$TN/state" "$TN/run" "$TN/home" /tmp "$TN/cases" "$TN/tls" >"$C/out" 2>&1 <<'PY'
import base64, os, sys
point = bytes.fromhex(sys.argv[1])
roots, skip = sys.argv[2:6], sys.argv[6:]
hits = []
for root in roots:
    for d, dirs, files in os.walk(root):
        if any(d == s or d.startswith(s + '/') for s in skip):
            dirs[:] = []
            continue
        for f in files:
            p = os.path.join(d, f)
            try:
                if os.path.islink(p) or not os.path.isfile(p) or os.path.getsize(p) > 64 << 20:
                    continue
                data = open(p, 'rb').read()
            except OSError:
                continue
            blobs = [data]
            # PEM blocks, decoded: a key written as PEM carries the point in its DER
            for block in data.split(b'-----BEGIN ')[1:]:
                body = block.split(b'-----', 2)
                if len(body) == 3:
                    try:
                        blobs.append(base64.b64decode(b''.join(body[1].split())))
                    except ValueError:
                        pass
            if any(point in b for b in blobs):
                hits.append(p)
print('\n'.join(hits) if hits else 'none')
sys.exit(1 if hits or len(point) != 65 else 0)
PY
check "the session CA's key never touches the disk: no file in the state, runtime, home or /tmp holds it" $? \
	"files: $(head -n 5 "$C/out")"

# boxy-net is not dumpable: not even its own user reads its memory (the CA key is there).
ti_case nodump "" --allow-http "$RULE" -d -- sleep 20
# This suite's boxy-net: the one in this network namespace (other suites on the machine
# have their own, in theirs).
pid=
for _ in $(seq 1 50); do
	pid=$(pgrep -n -x --ns $$ --nslist net boxy-net 2>/dev/null) && break
	sleep 0.1
done
C=$TN/cases/nodump
tn_user python3 -c '
import sys
pid = sys.argv[1]
for what in ("mem", "environ", "maps"):
    try:
        f = open("/proc/%s/%s" % (pid, what), "rb")
        f.read(64)
        print("READ", what)
    except OSError as e:
        print("refused", what, e.errno)
' "$pid" >"$C/out" 2>&1
[ -n "$pid" ] && [ "$(grep -c '^refused' "$C/out")" = 3 ]
check "boxy-net holding the CA key is not dumpable: its memory, environment and maps are closed to its own user" $? \
	"pid ${pid:-none}: $(cat "$C/out")"
tn_boxy stop --all >/dev/null 2>&1

ti_case sandbox-sees "" --allow-http "$RULE" -- sh -c 'cat /proc/[0-9]*/comm | sort -u'
! grep -q 'boxy-net' "$C/out" && grep -qx 'boxy-init' "$C/out"
check "the sandbox cannot see boxy-net at all (another pid namespace): nothing to ptrace or read" $? \
	"processes seen: $(tr '\n' ' ' <"$C/out")"

done_testing
