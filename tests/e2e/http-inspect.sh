#!/bin/bash
# tests/e2e/http-inspect.sh — TLS inspection end to end (doc/http-inspection.md), in the
# hermetic test network (tests/lib/testnet.sh), with real clients (curl, node's fetch, https
# and http2, python's urllib, git) against test HTTPS servers whose certificates the
# suite's own CA signed:
#
#   api.test     93.184.216.40:443  HTTP/1.1 only (tests/lib/https-server.py), logs every
#                                   request and every byte it receives
#   h2.test      93.184.216.41:443  HTTP/2 only (nghttpd, Debian's nghttp2-server)
#   bad.test     93.184.216.42:443  a self-signed certificate
#   wrong.test   93.184.216.40:443  api.test's server, whose certificate does not name it
#   git.test     93.184.216.43:443  git smart HTTP (git http-backend)
#   plain.test   93.184.216.40:443  a host allowed without rules: never inspected
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

API=93.184.216.40
H2=93.184.216.41
BAD=93.184.216.42
GITH=93.184.216.43
TN_ZONE_EXTRA="api.test A $API
h2.test A $H2
bad.test A $BAD
wrong.test A $API
git.test A $GITH
plain.test A $API"
testnet_setup
for a in $API $H2 $BAD $GITH; do
	tn_srv ip addr add "$a/24" dev "$TN_IF_S" || testnet_die "cannot add $a"
done

## ---- certificates and servers -------------------------------------------------------
(
	cd "$TN/tls" || exit 1
	openssl req -newkey rsa:2048 -nodes -keyout good.key -out good.csr -subj "/CN=api.test" \
		>/dev/null 2>&1 &&
	printf 'subjectAltName=DNS:api.test,DNS:h2.test,DNS:git.test,DNS:plain.test\n' >good.ext &&
	openssl x509 -req -in good.csr -CA ca.pem -CAkey ca.key -CAcreateserial -out good.pem \
		-days 2 -extfile good.ext >/dev/null 2>&1 &&
	openssl req -x509 -newkey rsa:2048 -nodes -keyout bad.key -out bad.pem -days 2 \
		-subj "/CN=bad.test" -addext "subjectAltName=DNS:bad.test" >/dev/null 2>&1
) || testnet_die "could not make the certificates"
chmod 0644 "$TN/tls/"*.pem
mkdir -p "$TN/h2docs/v1" "$TN/h2docs/v2" "$TN/gitroot"
echo "h2 v1 ok" >"$TN/h2docs/v1/x"
echo "h2 v2 secret" >"$TN/h2docs/v2/x"
head -c 4194304 /dev/zero >"$TN/h2docs/v1/big"
(
	cd "$TN/gitroot" && git init -q --bare repo.git && git init -q --bare secret.git &&
	git init -q work && cd work && echo "inspected clone works" >README &&
	git add README && git -c user.name=t -c user.email=t@t commit -qm one &&
	git push -q ../repo.git HEAD:refs/heads/main && git push -q ../secret.git HEAD:refs/heads/main
) || testnet_die "could not make the git repositories"
: >"$TN/api.log"
: >"$TN/api.raw"
tn_start api python3 -u "$BOXY_SRCDIR/tests/lib/https-server.py" "$API" 443 \
	"$TN/tls/good.pem" "$TN/tls/good.key" "$TN/api.log" "$TN/api.raw"
tn_start h2 nghttpd -a "$H2" -d "$TN/h2docs" -v 443 "$TN/tls/good.key" "$TN/tls/good.pem"
tn_start bad python3 -u "$BOXY_SRCDIR/tests/lib/https-server.py" "$BAD" 443 \
	"$TN/tls/bad.pem" "$TN/tls/bad.key" "$TN/bad.log" "$TN/bad.raw"
tn_start git python3 -u "$BOXY_SRCDIR/tests/lib/https-server.py" "$GITH" 443 \
	"$TN/tls/good.pem" "$TN/tls/good.key" "$TN/git.log" "$TN/git.raw" --git "$TN/gitroot"
for a in $API $H2 $BAD $GITH; do tn_wait_tcp "$a" 443; done

# The daemon (started by the first run below) trusts the suite's CA.
SSL_CERT_FILE=$TN/tls/ca.pem
export SSL_CERT_FILE
tn_probe

# arrived TEXT: did these bytes ever reach api.test's server?
arrived() { grep -qaF -- "$1" "$TN/api.raw"; }
seen() { grep -q -- "$1" "$TN/api.log"; }

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

done_testing
