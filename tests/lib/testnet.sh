# tests/lib/testnet.sh — the hermetic test network (sourced by tests/e2e/net-policy.sh, bash,
# after tests/lib/harness.sh).
#
# No test packet may leave the machine, even when boxy is wrong. So the suite
# runs in network namespaces of its own that have no interface to anywhere:
#
#   client ns (the suite, boxy's daemon, boxy-net)     servers ns (a `sleep`)
#     lo, tn-c  93.184.216.1/24                 veth     lo, tn-s  93.184.216.34-37, .53
#               2606:2800:220:1::1/64          <---->              2606:2800:220:1::34
#               10.9.0.1/24, 169.254.169.1/16                      10.9.0.5, 169.254.169.254
#
# The "public" hosts use 93.184.216.0/24 and 2606:2800:220:1::/64, real public
# prefixes (example.com's, once), because boxy's policy refuses every
# documentation, benchmarking and private range, and the test must exercise
# the public path. They exist only inside these namespaces: the client
# namespace has no default route and no interface but lo and one end of a veth
# pair whose other end is in a namespace with nothing else either. The private
# bait (10.9.0.5, 169.254.169.254) is reachable at the IP level on purpose: a
# refusal the suite sees is then policy's, not a missing route's.
#
# /etc/resolv.conf and /etc/hosts are bind-mounted (in the suite's own mount
# namespace) to point at the test resolver, which logs every question, so
# "the name never left the machine" is a grep in its log.
#
# Entering: as an unprivileged user, `unshare -Urnm` (root of a new user
# namespace, to configure the network), then every boxy command runs mapped
# back to the user's own uid (tn_user), since boxy is meant for ordinary users.
# As real root: `unshare -nm` and no mapping.
#
# testnet_enter SCRIPT ARGS   re-exec SCRIPT inside fresh namespaces (returns when inside)
# testnet_setup               build the network and start the servers; Bail out unless hermetic
#                             (TN_ZONE_EXTRA, when set: more "NAME A ADDR" lines for the resolver)
# testnet_check               the hermeticity check alone (exits 99 with a reason)
# tn_user CMD...              run CMD as the original user
# tn_boxy ARGS...             run $BOXY as the original user with the suite's XDG dirs
# run_case, audit_has, fail_case, tn_probe   the suites' case helpers (see below)
# testnet_tailnet_setup       a tailnet on top: fake MagicDNS and tailscaled (net-tailscale.sh)

TN_IF_C=tn-c
TN_IF_S=tn-s
TN_HTTP=93.184.216.34       # www.example.test: HTTP 80, 8080 and HTTPS 443
TN_PUBLIC=93.184.216.35     # a public address with no name (public mode)
TN_OTHER=93.184.216.36      # other.example.test, unlisted.example.test
TN_HOSTS=93.184.216.37      # hostsfile.example.test, only in /etc/hosts
TN_DNS=93.184.216.53
TN_HTTP6=2606:2800:220:1::34
TN_PRIV=10.9.0.5            # private bait: answers HTTP if anything lets a packet through
TN_META=169.254.169.254     # cloud metadata bait
# The tailnet (testnet_tailnet_setup, for tests/e2e/net-tailscale.sh). The host's
# resolver answers the tailnet name too, as one that forwards to MagicDNS
# would: without --tailscale that answer must be dropped as private.
TN_TS_SUFFIX=tail0a1b2.ts.net
TN_TS_NAME=nas.$TN_TS_SUFFIX
TN_TS_DNS=100.100.100.100   # the fake MagicDNS resolver; also HTTP bait on 80
TN_TS_NAS=100.101.102.103   # nas: HTTP on $TN_TS_PORT
TN_TS_NAS6=fd7a:115c:a1e0::65
TN_TS_SECRET=100.101.102.104 # secret: a tailnet host no run is told about
TN_TS_PORT=8022

testnet_die() { echo "testnet: $*" >&2; echo "Bail out! testnet: $*"; exit 99; }

# testnet_enter SCRIPT ARGS...: unless already inside, re-exec in new namespaces.
testnet_enter() {
	local script=$1
	shift
	[ "${BOXY_TESTNET_INSIDE:-}" = 1 ] && return 0
	PATH=$PATH:/usr/sbin:/sbin      # ip, wherever the caller's PATH left it
	export PATH
	BOXY_TESTNET_OUTER_NETNS=$(readlink /proc/self/ns/net)
	BOXY_TESTNET_UID=$(id -u)
	BOXY_TESTNET_GID=$(id -g)
	BOXY_TESTNET_INSIDE=1
	export BOXY_TESTNET_OUTER_NETNS BOXY_TESTNET_UID BOXY_TESTNET_GID BOXY_TESTNET_INSIDE
	command -v unshare >/dev/null || testnet_die "unshare (util-linux) is missing"
	command -v ip >/dev/null || testnet_die "ip (iproute2) is missing"
	if [ "$BOXY_TESTNET_UID" = 0 ]; then
		exec unshare -nm --propagation private -- bash "$script" "$@"
	fi
	exec unshare -Urnm --propagation private -- bash "$script" "$@"
}

# tn_user CMD...: the original uid and gid again (a nested user namespace maps
# this namespace's root back to them), so boxy runs as the user it is for.
tn_user() {
	if [ "$BOXY_TESTNET_UID" = 0 ]; then
		"$@"
	else
		unshare --map-user="$BOXY_TESTNET_UID" --map-group="$BOXY_TESTNET_GID" -- "$@"
	fi
}

# tn_srv CMD...: run CMD in the servers' namespace.
tn_srv() { nsenter --net="/proc/$TN_SPID/ns/net" -- "$@"; }

# One namespace's interfaces and routes must involve nothing but lo and $1.
testnet_check_ns() {
	local ifname=$1 where=$2 links bad
	links=$(ip -o link show | awk -F': ' '{print $2}' | sed 's/@.*//' | sort | tr '\n' ' ')
	[ "$links" = "lo $ifname " ] || [ "$links" = "$ifname lo " ] ||
		testnet_die "$where has interfaces '$links', want only lo and $ifname"
	bad=$( { ip -4 route show table all; ip -6 route show table all; } |
		grep -v -E "dev (lo|$ifname)( |\$)" | grep -v '^$' || true)
	[ -z "$bad" ] || testnet_die "$where has a route off lo/$ifname: $bad"
	if ip route show default | grep -q . || ip -6 route show default | grep -q .; then
		testnet_die "$where has a default route"
	fi
}

# testnet_check: refuse to go on unless both namespaces are closed worlds.
testnet_check() {
	[ "${BOXY_TESTNET_INSIDE:-}" = 1 ] || testnet_die "not inside the test namespaces"
	[ "$(readlink /proc/self/ns/net)" != "${BOXY_TESTNET_OUTER_NETNS:-}" ] ||
		testnet_die "still in the network namespace the suite started in"
	testnet_check_ns "$TN_IF_C" "the client namespace"
	[ -n "${TN_SPID:-}" ] && kill -0 "$TN_SPID" 2>/dev/null ||
		testnet_die "the servers' namespace is gone"
	# The veth's peer must be in the servers' namespace, nowhere else.
	ip -d link show "$TN_IF_C" | grep -q 'link-netnsid' ||
		testnet_die "$TN_IF_C's peer is not in another namespace"
	tn_srv bash -c "$(declare -f testnet_die testnet_check_ns); testnet_check_ns $TN_IF_S 'the servers namespace'" ||
		exit 99
}

# Start a server in the servers' namespace, output to $TN/NAME.log. (nsenter
# execs the server: $! is the server itself, not a subshell.)
tn_start() {
	local name=$1
	shift
	nsenter --net="/proc/$TN_SPID/ns/net" -- "$@" >"$TN/$name.log" 2>&1 &
	TN_PIDS="$TN_PIDS $!"
}

# Wait until ADDR:PORT accepts TCP from the client namespace.
tn_wait_tcp() {
	local i
	for i in $(seq 1 100); do
		if timeout 1 bash -c "exec 3<>/dev/tcp/$1/$2" 2>/dev/null; then return 0; fi
		sleep 0.1
	done
	testnet_die "the test server on $1:$2 did not start (see $TN)"
}

testnet_cleanup() {
	local p ns id
	if [ -n "${BOXY:-}" ] && [ -n "${TN:-}" ]; then
		# A case that failed half way may leave a session running (or frozen:
		# doc/react.md), and the daemon refuses to stop under one: end them first.
		for id in $(tn_boxy ps 2>/dev/null | awk 'NR > 1 { print $1 }'); do
			tn_boxy stop -k "$id" >/dev/null 2>&1
		done
		[ -z "${id:-}" ] || sleep 0.5
		tn_boxy daemon stop >/dev/null 2>&1 || true
	fi
	# Every process in the servers' namespace is ours: found by the namespace
	# itself, so a server that forked is not left behind.
	if [ -n "${TN_SPID:-}" ] && ns=$(readlink "/proc/$TN_SPID/ns/net" 2>/dev/null); then
		for p in /proc/[0-9]*; do
			[ "$(readlink "$p/ns/net" 2>/dev/null)" = "$ns" ] && kill "${p#/proc/}" 2>/dev/null
		done
	fi
	for p in ${TN_PIDS:-} ${TN_SPID:-}; do kill "$p" 2>/dev/null; done
	wait 2>/dev/null
	[ -n "${TN:-}" ] && [ -z "${BOXY_TEST_KEEP:-}" ] && rm -rf "$TN"
	return 0
}

# The test CA and a certificate for www.example.test (and other.example.test,
# so an SNI mismatch is refused by boxy, never by the certificate check).
tn_make_certs() {
	command -v openssl >/dev/null || testnet_die "openssl is missing"
	(
		cd "$TN/tls" || exit 1
		openssl req -x509 -newkey rsa:2048 -nodes -keyout ca.key -out ca.pem -days 2 \
			-subj "/CN=boxy test CA" >/dev/null 2>&1 &&
		openssl req -newkey rsa:2048 -nodes -keyout server.key -out server.csr \
			-subj "/CN=www.example.test" >/dev/null 2>&1 &&
		printf 'subjectAltName=DNS:www.example.test,DNS:other.example.test\n' >ext &&
		openssl x509 -req -in server.csr -CA ca.pem -CAkey ca.key -CAcreateserial \
			-out server.pem -days 2 -extfile ext >/dev/null 2>&1
	) || testnet_die "could not make the test certificates"
}

# testnet_setup: the namespaces' network, the servers, resolv.conf and hosts.
testnet_setup() {
	[ "${BOXY_TESTNET_INSIDE:-}" = 1 ] || testnet_die "testnet_setup outside the namespaces"
	command -v python3 >/dev/null || testnet_die "python3 is missing"
	TN=$(mktemp -d /tmp/boxy-testnet.XXXXXX) || testnet_die "mktemp"
	chmod 0755 "$TN"
	mkdir -p "$TN/www" "$TN/tls" "$TN/home" "$TN/run" "$TN/state"
	chmod 0777 "$TN/home" "$TN/run" "$TN/state"
	TN_PIDS=
	trap testnet_cleanup EXIT

	ip link set lo up || testnet_die "cannot bring lo up (no CAP_NET_ADMIN here?)"
	unshare -n -- sleep infinity &
	TN_SPID=$!
	sleep 0.2
	ip link add "$TN_IF_C" type veth peer name "$TN_IF_S" netns "$TN_SPID" ||
		testnet_die "cannot create the veth pair"
	ip addr add 93.184.216.1/24 dev "$TN_IF_C"
	ip addr add 10.9.0.1/24 dev "$TN_IF_C"
	ip addr add 169.254.169.1/16 dev "$TN_IF_C"
	ip addr add 2606:2800:220:1::1/64 dev "$TN_IF_C" nodad
	ip link set "$TN_IF_C" up
	tn_srv sh -c "
		ip link set lo up &&
		for a in $TN_HTTP $TN_PUBLIC $TN_OTHER $TN_HOSTS $TN_DNS; do
			ip addr add \$a/24 dev $TN_IF_S || exit 1
		done &&
		ip addr add $TN_PRIV/24 dev $TN_IF_S &&
		ip addr add $TN_META/16 dev $TN_IF_S &&
		ip addr add $TN_HTTP6/64 dev $TN_IF_S nodad &&
		ip link set $TN_IF_S up" || testnet_die "cannot configure the servers' namespace"
	testnet_check

	# The names the resolver knows.
	cat >"$TN/zone" <<-EOF
	www.example.test A $TN_HTTP
	www.example.test AAAA $TN_HTTP6
	other.example.test A $TN_OTHER
	unlisted.example.test A $TN_OTHER
	rebind.example.test A $TN_PRIV
	metadata.example.test A $TN_META
	docrange.example.test A 203.0.113.80
	$TN_TS_NAME A $TN_TS_NAS
	EOF
	# A suite's own names ("NAME A ADDR" lines), set before testnet_setup.
	[ -z "${TN_ZONE_EXTRA:-}" ] || printf '%s\n' "$TN_ZONE_EXTRA" >>"$TN/zone"
	: >"$TN/dns.queries"
	echo "boxy-testnet-marker" >"$TN/www/hello.txt"
	tn_make_certs

	tn_start dns python3 "$BOXY_SRCDIR/tests/lib/testnet-dns.py" "$TN_DNS" "$TN/zone" \
		"$TN/dns.queries"
	tn_start http python3 -u -m http.server --bind 0.0.0.0 --directory "$TN/www" 80
	tn_start http6 python3 -u -m http.server --bind "$TN_HTTP6" --directory "$TN/www" 80
	tn_start http8080 python3 -u -m http.server --bind "$TN_HTTP" --directory "$TN/www" 8080
	tn_start https python3 -u -c '
import http.server, ssl, sys, functools
d, cert, key, addr = sys.argv[1:5]
h = functools.partial(http.server.SimpleHTTPRequestHandler, directory=d)
s = http.server.ThreadingHTTPServer((addr, 443), h)
c = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
c.load_cert_chain(cert, key)
s.socket = c.wrap_socket(s.socket, server_side=True)
s.serve_forever()' "$TN/www" "$TN/tls/server.pem" "$TN/tls/server.key" "$TN_HTTP"
	tn_wait_tcp "$TN_HTTP" 80
	tn_wait_tcp "$TN_HTTP" 8080
	tn_wait_tcp "$TN_HTTP6" 80
	tn_wait_tcp "$TN_HTTP" 443
	tn_wait_tcp "$TN_DNS" 53

	# The host's resolver configuration, as boxy's daemon will read it.
	printf 'nameserver %s\noptions timeout:1 attempts:2\n' "$TN_DNS" >"$TN/resolv.conf"
	printf '127.0.0.1 localhost\n::1 localhost\n%s hostsfile.example.test\n' "$TN_HOSTS" \
		>"$TN/hosts"
	chmod 0644 "$TN/resolv.conf" "$TN/hosts" "$TN/tls/ca.pem"
	mount --bind "$TN/resolv.conf" /etc/resolv.conf ||
		testnet_die "cannot bind-mount /etc/resolv.conf"
	mount --bind "$TN/hosts" /etc/hosts || testnet_die "cannot bind-mount /etc/hosts"
	# The servers only ever see the client namespace; say so once more, now
	# that everything is running.
	testnet_check
}

# tn_boxy ARGS...: boxy as the user, with a daemon of the suite's own (its
# socket and store under $TN), so the daemon dials from this namespace.
tn_boxy() {
	tn_user env HOME="$TN/home" XDG_RUNTIME_DIR="$TN/run" XDG_STATE_HOME="$TN/state" \
		"$BOXY" "$@"
}

## ---- cases: shared by the suites that run in the test network ----------------------
# run_case NAME BOXY-RUN-ARGS...: run in a fresh case directory (the workdir,
# holding a copy of the test CA); sets C, RC; output in $C/out, $C/err, audit in $C/audit.
# A run still going after TN_CASE_TIMEOUT seconds (default 180) is stopped (TERM, then
# KILL 10 s later; then its session, since a client that goes away only detaches), RC is
# 124 and $C/err says so: a case a bug hangs (a frozen run, a lost exit) fails that case
# instead of holding the whole suite until the harness dies.
run_case() {
	local t=${TN_CASE_TIMEOUT:-180}
	C=$TN/cases/$1
	shift
	mkdir -p "$C" && cp "$TN/tls/ca.pem" "$C/ca.pem" && chmod -R a+rwX "$C"
	(cd "$C" && tn_user timeout -k 10 "$t" env HOME="$TN/home" XDG_RUNTIME_DIR="$TN/run" \
		XDG_STATE_HOME="$TN/state" "$BOXY" run --audit-log "$C/audit" "$@" \
		>"$C/out" 2>"$C/err" </dev/null)
	RC=$?
	if [ "$RC" = 124 ]; then
		# The client going away is a detach (doc/daemon.md): stop the session too.
		tn_boxy ps --json 2>/dev/null | python3 -c '
import json, sys
for s in json.load(sys.stdin):
    if s.get("cwd") == sys.argv[1]:
        print(s["id"])' "$C" | while read -r id; do tn_boxy stop -k "$id" >/dev/null 2>&1; done
		echo "run_case: ${C##*/} still running after $t s: stopped" >>"$C/err"
	fi
	return 0
}

# audit_has LAYER VERDICT TEXT: an audit line with that layer and verdict mentioning TEXT.
audit_has() {
	grep -F "\"layer\":\"$1\"" "$C/audit" 2>/dev/null | grep -F "\"verdict\":\"$2\"" |
		grep -qF -- "$3"
}

# watch_denials CASE URL: a detached session that curls URL once, followed by
# `boxy watch ID | grep deny` into $C/out until it ends (about 4 s; 20 s is the
# backstop). Sets C, RC (of `boxy run -d`) and WATCH_ID.
watch_denials() {
	local wpid
	C=$TN/cases/$1
	mkdir -p "$C" && chmod a+rwX "$C"
	WATCH_ID=$(cd "$C" && tn_boxy run -d --net public -- sh -c \
		"sleep 1; curl -s -m 3 $2; sleep 3" 2>"$C/err")
	RC=$?
	: >"$C/audit"
	: >"$C/out"
	[ -n "$WATCH_ID" ] || return 0
	(tn_boxy watch "$WATCH_ID" | grep deny >"$C/out") &
	wpid=$!
	for _ in $(seq 1 200); do kill -0 "$wpid" 2>/dev/null || break; sleep 0.1; done
	kill "$wpid" 2>/dev/null
	wait "$wpid" 2>/dev/null
	return 0
}

# fail_case NAME WHY...: a failing case with the evidence.
fail_case() {
	local name=$1
	shift
	not_ok "$name"
	diag "$@" "exit status: $RC"
	[ -n "$NET_MISSING" ] && diag "this build has no working network: $NET_MISSING"
	diag "stdout:"
	diag_file "$C/out" 5
	diag "stderr:"
	diag_file "$C/err" 8
	diag "audit (network lines):"
	grep -E '"layer":"(net|net\.[a-z]+|upstream)"' "$C/audit" 2>/dev/null | head -n 8 |
		sed 's/^/#   | /'
	return 0
}

# tn_probe: can this build run a networked sandbox at all? NET_MISSING says why
# not, in one line (empty when it can); every case then fails and shows it.
tn_probe() {
	mkdir -p "$TN/cases" && chmod 0777 "$TN/cases"
	NET_MISSING=
	run_case probe --net public -- true
	if [ "$RC" -ne 0 ]; then
		NET_MISSING="boxy run --net public -- true exits $RC: $(head -n 2 "$C/err" | tr '\n' ' ')"
	elif grep -q "network could not start" "$C/audit" 2>/dev/null; then
		NET_MISSING=$(grep -o '"reason":"[^"]*network could not start[^"]*"' "$C/audit" |
			head -n 1)
	fi
	[ -n "$NET_MISSING" ] && diag "network probe: $NET_MISSING"
	return 0
}

## ---- the tailnet ---------------------------------------------------------------------
# A fake tailscaled: its LocalAPI on a unix socket, answering the status
# request with a MagicDNS suffix; every request line goes to LOG.
TN_TAILSCALED='
import json, os, socket, sys
path, suffix, log = sys.argv[1:4]
status = json.dumps({"Version": "1.0.0-boxy-test", "BackendState": "Running",
                     "MagicDNSSuffix": suffix,
                     "CurrentTailnet": {"Name": "boxy-test", "MagicDNSSuffix": suffix,
                                        "MagicDNSEnabled": True}}).encode()
s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
s.bind(path)
os.chmod(path, 0o666)
s.listen(16)
out = open(log, "a", buffering=1)
while True:
    c, _ = s.accept()
    c.settimeout(5)
    req = b""
    try:
        while b"\r\n\r\n" not in req and len(req) < 65536:
            d = c.recv(4096)
            if not d:
                break
            req += d
        out.write(req.split(b"\r\n", 1)[0].decode("ascii", "replace") + "\n")
        c.sendall(b"HTTP/1.0 200 OK\r\nContent-Type: application/json\r\n"
                  b"Content-Length: %d\r\n\r\n" % len(status) + status)
    except OSError:
        pass
    c.close()
'

# testnet_tailnet_setup: Tailscale's ranges on the veth (100.64.0.0/10 and
# fd7a:115c:a1e0::/48 route to the servers' namespace, nowhere else), the fake
# MagicDNS resolver on 100.100.100.100 logging to $TN/ts-dns.queries, nas and
# secret serving HTTP on $TN_TS_PORT, HTTP bait on 100.100.100.100:80, and the
# fake tailscaled at /var/run/tailscale/tailscaled.sock, the path boxy asks.
# /var/run is /run here and /run is root's: a tmpfs goes over /run (the
# suite's mount namespace is private) with every host entry put back in it.
testnet_tailnet_setup() {
	local e n fd
	ip addr add 100.64.0.1/10 dev "$TN_IF_C" &&
	ip addr add fd7a:115c:a1e0::1/48 dev "$TN_IF_C" nodad ||
		testnet_die "cannot add the tailnet ranges to $TN_IF_C"
	tn_srv sh -c "
		ip addr add $TN_TS_DNS/10 dev $TN_IF_S &&
		ip addr add $TN_TS_NAS/10 dev $TN_IF_S &&
		ip addr add $TN_TS_SECRET/10 dev $TN_IF_S &&
		ip addr add $TN_TS_NAS6/48 dev $TN_IF_S nodad" ||
		testnet_die "cannot add the tailnet addresses to the servers' namespace"
	testnet_check

	mkdir -p "$TN/tsw" && echo "boxy-tailnet-marker" >"$TN/tsw/index.html"
	cat >"$TN/ts.zone" <<-EOF
	$TN_TS_NAME A $TN_TS_NAS
	$TN_TS_NAME AAAA $TN_TS_NAS6
	secret.$TN_TS_SUFFIX A $TN_TS_SECRET
	EOF
	: >"$TN/ts-dns.queries"
	tn_start ts-dns python3 "$BOXY_SRCDIR/tests/lib/testnet-dns.py" "$TN_TS_DNS" "$TN/ts.zone" \
		"$TN/ts-dns.queries"
	tn_start ts-nas python3 -u -m http.server --bind "$TN_TS_NAS" --directory "$TN/tsw" \
		"$TN_TS_PORT"
	tn_start ts-nas6 python3 -u -m http.server --bind "$TN_TS_NAS6" --directory "$TN/tsw" \
		"$TN_TS_PORT"
	tn_start ts-secret python3 -u -m http.server --bind "$TN_TS_SECRET" --directory "$TN/tsw" \
		"$TN_TS_PORT"
	tn_start ts-quad100 python3 -u -m http.server --bind "$TN_TS_DNS" --directory "$TN/tsw" 80
	tn_wait_tcp "$TN_TS_NAS" "$TN_TS_PORT"
	tn_wait_tcp "$TN_TS_NAS6" "$TN_TS_PORT"
	tn_wait_tcp "$TN_TS_SECRET" "$TN_TS_PORT"
	tn_wait_tcp "$TN_TS_DNS" 80
	tn_wait_tcp "$TN_TS_DNS" 53

	# The host's /run stays reachable through a descriptor while the tmpfs
	# covers it: no second mount of it under $TN, which cleanup's rm -rf
	# would walk into.
	exec {fd}</run || testnet_die "cannot open /run"
	mount -t tmpfs -o mode=0755 tn-run /run || testnet_die "cannot put a tmpfs over /run"
	for e in "/proc/$$/fd/$fd"/* "/proc/$$/fd/$fd"/.[!.]*; do
		n=${e##*/}
		if [ -L "$e" ]; then
			ln -s "$(readlink "$e")" "/run/$n"
		elif [ -d "$e" ]; then
			# (mount(8) may have made /run/mount for its utab already)
			mkdir -p "/run/$n" && mount --rbind "$e" "/run/$n"
		elif [ -e "$e" ]; then
			: >"/run/$n" && mount --bind "$e" "/run/$n"
		fi
	done
	exec {fd}<&-
	mkdir -m 0755 /run/tailscale
	[ "$(readlink -f /var/run)" = /run ] || [ ! -L /var/run ] ||
		testnet_die "/var/run points at $(readlink /var/run), not /run"
	[ -d /var/run/tailscale ] || testnet_die "/var/run/tailscale is not the new directory"
	: >"$TN/tailscaled.log"
	tn_tailscaled_start
}

# tn_tailscaled_start / tn_tailscaled_stop: the fake tailscaled, running or gone.
tn_tailscaled_start() {
	python3 -c "$TN_TAILSCALED" /run/tailscale/tailscaled.sock "$TN_TS_SUFFIX" \
		"$TN/tailscaled.log" 2>"$TN/tailscaled.err" &
	TN_TSD_PID=$!
	TN_PIDS="$TN_PIDS $TN_TSD_PID"
	for _ in $(seq 1 100); do [ -S /run/tailscale/tailscaled.sock ] && return 0; sleep 0.05; done
	testnet_die "the fake tailscaled did not start: $(cat "$TN/tailscaled.err")"
}
tn_tailscaled_stop() {
	kill "$TN_TSD_PID" 2>/dev/null
	wait "$TN_TSD_PID" 2>/dev/null
	rm -f /run/tailscale/tailscaled.sock
}
