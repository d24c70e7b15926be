# tests/lib/tls-testnet.sh — the HTTPS test hosts of the TLS inspection suites
# (tests/e2e/http-inspect.sh, tests/e2e/http-inspect-attacks.sh), on top of
# tests/lib/testnet.sh (sourced after it, inside the namespaces; call
# tls_testnet_setup instead of testnet_setup):
#
#   api.test     93.184.216.40:443  HTTP/1.1 only (tests/lib/https-server.py), logs every
#                                   request ($TN/api.log) and every byte it receives ($TN/api.raw)
#   h2.test      93.184.216.41:443  HTTP/2 only (nghttpd, Debian's nghttp2-server), -v log
#   bad.test     93.184.216.42:443  a self-signed certificate
#   wrong.test   93.184.216.40:443  api.test's server, whose certificate does not name it
#   git.test     93.184.216.43:443  git smart HTTP (git http-backend): repo.git, secret.git
#   plain.test   93.184.216.40:443  a host the suites allow without rules: never inspected
#   grpc.test    93.184.216.44:443  HTTP/2 only, each body echoed back with trailers, the
#                                   shape of a gRPC call (tests/lib/h2-echo-server.py)
#   mtls.test    93.184.216.45:443  TLS 1.3 that requires a client certificate (openssl s_server
#                                   -Verify): refuses the client's empty one after the handshake
#
# Certificates from the suite's CA ($TN/tls/ca.pem), which the daemon trusts through
# SSL_CERT_FILE (exported here, before the first boxy run starts the daemon).

tls_testnet_setup() {
	API=93.184.216.40
	H2=93.184.216.41
	BAD=93.184.216.42
	GITH=93.184.216.43
	GRPC=93.184.216.44
	MTLS=93.184.216.45
	TN_ZONE_EXTRA="api.test A $API
h2.test A $H2
bad.test A $BAD
wrong.test A $API
git.test A $GITH
plain.test A $API
grpc.test A $GRPC
mtls.test A $MTLS"
	testnet_setup
	for a in $API $H2 $BAD $GITH $GRPC $MTLS; do
		tn_srv ip addr add "$a/24" dev "$TN_IF_S" || testnet_die "cannot add $a"
	done

	## ---- certificates and servers -------------------------------------------------------
	(
		cd "$TN/tls" || exit 1
		openssl req -newkey rsa:2048 -nodes -keyout good.key -out good.csr -subj "/CN=api.test" \
			>/dev/null 2>&1 &&
		printf 'subjectAltName=DNS:api.test,DNS:h2.test,DNS:git.test,DNS:plain.test,DNS:grpc.test,DNS:mtls.test\n' \
			>good.ext &&
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
		git push -q ../repo.git HEAD:refs/heads/main && git push -q ../secret.git HEAD:refs/heads/main &&
		git --git-dir=../repo.git symbolic-ref HEAD refs/heads/main &&
		git --git-dir=../secret.git symbolic-ref HEAD refs/heads/main
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
	tn_start grpc python3 -u "$BOXY_SRCDIR/tests/lib/h2-echo-server.py" "$GRPC" 443 \
		"$TN/tls/good.pem" "$TN/tls/good.key" "$TN/grpc.log"
	tn_start mtls openssl s_server -quiet -accept "$MTLS:443" -cert "$TN/tls/good.pem" \
		-key "$TN/tls/good.key" -Verify 1 -www
	for a in $API $H2 $BAD $GITH $GRPC $MTLS; do tn_wait_tcp "$a" 443; done

	# The daemon (started by the first run below) trusts the suite's CA.
	SSL_CERT_FILE=$TN/tls/ca.pem
	export SSL_CERT_FILE
	tn_probe
}

# arrived TEXT: did these bytes ever reach api.test's server? seen PATTERN: a request line?
arrived() { grep -qaF -- "$1" "$TN/api.raw"; }
seen() { grep -q -- "$1" "$TN/api.log"; }

# ti_case NAME FILES BOXY-RUN-ARGS...: run_case with the suite's scripts (FILES, a space-separated
# list under $TN) copied into the workdir.
ti_case() {
	local name=$1 files=$2 f
	shift 2
	C=$TN/cases/$name
	mkdir -p "$C" && cp "$TN/tls/ca.pem" "$C/ca.pem"
	for f in $files; do cp "$TN/$f" "$C/"; done
	chmod -R a+rwX "$C"
	(cd "$C" && tn_boxy run --audit-log "$C/audit" "$@" >"$C/out" 2>"$C/err" </dev/null)
	RC=$?
}
# check NAME CONDITION-STATUS WHY...: ok, or fail_case with the evidence.
check() {
	local name=$1 st=$2
	shift 2
	if [ "$st" = 0 ]; then ok "$name"; else fail_case "$name" "$@"; fi
}

