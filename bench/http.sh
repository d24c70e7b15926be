#!/bin/bash
# bench/http.sh — what TLS inspection costs (doc/http-inspection.md), in one run, inside the
# hermetic test network: HTTPS requests per second on keep-alive connections and a
# single-stream download through an inspected host, against boxy's uninspected path (the
# same host without rules: the SNI check and a splice) and against mitmproxy (Debian's
# package) intercepting on the same machine. Then the ratios, and the goals.
#
#   direct       wrk / curl in the client namespace, straight to the server: the floor
#   uninspected  boxy run --allow-host bench.test -- CLIENT
#   inspected    boxy run --allow-http 'method=GET domain=bench.test path=/*' -- CLIENT
#   mitmproxy    mitmdump in reverse mode on 127.0.0.1:8443 of the client namespace,
#                intercepting (its own certificate to the client, TLS to the server,
#                verified, every request parsed), CLIENT pointed at it. Reverse mode,
#                because this machine has no iptables for transparent mode and wrk
#                speaks no proxy protocol: the interception work is the same. Bodies
#                over 1 MiB are streamed (stream_large_bodies), not held whole.
#
# The server is bench/bench-httpsd.c (one thread, epoll, OpenSSL, keep-alive; built here),
# so that it is never what a row measures. Keep-alive: wrk -t1 -c CONNS (each connection
# carries a request after another, every one parsed by the gate when inspected). Download:
# curl of SIZE MiB, one stream. The load average is printed with every row: the machine
# is shared, so run it twice and quote both.
#
#   bench/http.sh [--secs N] [--conns N] [--size MiB] [--only "ROW..."]
#       as root (re-runs as the test user, like the test suites) or as a user
#   BOXY_BUILDDIR=DIR   where boxy was built
set -u
SECS=5
CONNS=16
SIZE=1024
ONLY="direct uninspected inspected mitmproxy"
args=("$@")
while [ $# -gt 0 ]; do
	case $1 in
	--secs) SECS=$2; shift 2 ;;
	--conns) CONNS=$2; shift 2 ;;
	--size) SIZE=$2; shift 2 ;;
	--only) ONLY=$2; shift 2 ;;
	*) echo "usage: bench/http.sh [--secs N] [--conns N] [--size MiB] [--only \"ROW...\"]" >&2
	   exit 2 ;;
	esac
done
set -- "${args[@]}"
here=$(cd "$(dirname "$0")" && pwd)
. "$here/../tests/lib/harness.sh"
. "$here/../tests/lib/testnet.sh"
harness_locate
[ "${BOXY_TESTNET_INSIDE:-}" = 1 ] || harness_as_test_user "$0" "$@"
[ -x "$BOXY" ] || { echo "http.sh: no boxy at $BOXY (set BOXY_BUILDDIR)" >&2; exit 2; }
for t in wrk curl mitmdump cc openssl python3; do
	command -v "$t" >/dev/null || { echo "http.sh: $t is not installed (tools/deps.sh --test)" >&2; exit 2; }
done
testnet_enter "$0" "$@"
SRV=93.184.216.45
TN_ZONE_EXTRA="bench.test A $SRV"
testnet_setup
tn_srv ip addr add "$SRV/24" dev "$TN_IF_S" || testnet_die "cannot add $SRV"
OUT=$TN/bench
mkdir -p "$OUT" "$TN/mitm" && chmod 0777 "$OUT" "$TN/mitm"

(
	cd "$TN/tls" || exit 1
	openssl req -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -keyout bench.key \
		-out bench.csr -subj "/CN=bench.test" >/dev/null 2>&1 &&
	printf 'subjectAltName=DNS:bench.test\n' >bench.ext &&
	openssl x509 -req -in bench.csr -CA ca.pem -CAkey ca.key -CAcreateserial -out bench.pem \
		-days 2 -extfile bench.ext >/dev/null 2>&1
) || testnet_die "could not make the bench certificate"
chmod 0644 "$TN/tls/bench.pem" "$TN/tls/ca.pem"
cc -O2 -o "$TN/bench-httpsd" "$here/bench-httpsd.c" -lssl -lcrypto ||
	testnet_die "cannot build bench-httpsd"
tn_start httpsd "$TN/bench-httpsd" "$SRV" 443 "$TN/tls/bench.pem" "$TN/tls/bench.key"
tn_wait_tcp "$SRV" 443
# boxy's daemon (started by the first run) and mitmproxy trust the suite's CA.
SSL_CERT_FILE=$TN/tls/ca.pem
export SSL_CERT_FILE
mitmdump -q --mode reverse:https://bench.test:443 --listen-host 127.0.0.1 --listen-port 8443 \
	--set confdir="$TN/mitm" --set ssl_verify_upstream_trusted_ca="$TN/tls/ca.pem" \
	--set flow_detail=0 --set connection_strategy=lazy --set stream_large_bodies=1m \
	>"$OUT/mitmdump.log" 2>&1 &
MITM=$!
TN_PIDS="$TN_PIDS $MITM"
for _ in $(seq 1 100); do
	timeout 1 bash -c 'exec 3<>/dev/tcp/127.0.0.1/8443' 2>/dev/null && break
	sleep 0.2
done
testnet_check


run_direct() { "$@"; }
run_uninspected() {
	mkdir -p "$OUT/work" && chmod 0777 "$OUT/work" && cp "$TN/tls/ca.pem" "$OUT/work/"
	(cd "$OUT/work" && tn_boxy run --allow-host bench.test -- "$@" </dev/null)
}
run_inspected() {
	mkdir -p "$OUT/work" && chmod 0777 "$OUT/work"
	(cd "$OUT/work" &&
		tn_boxy run --allow-http 'method=GET domain=bench.test path=/*' -- "$@" </dev/null)
}
run_mitmproxy() { "$@"; }

# rps FILE: wrk's requests/s, "fail", marked ! with non-2xx answers, * with socket errors.
rps() {
	local r
	r=$(awk '/^Requests\/sec:/ { printf "%d", $2 }' "$1")
	[ -n "$r" ] || { echo fail; return; }
	grep -q 'Non-2xx' "$1" && r="$r!"
	grep -q 'Socket errors' "$1" && r="$r*"
	echo "$r"
}
# gbps FILE: curl's speed_download in Gbit/s, or "fail".
gbps() { awk '/^speed / { printf "%.2f", $2 * 8 / 1e9; f = 1 } END { if (!f) print "fail" }' "$1"; }

declare -A R_RPS R_DL R_LOAD
ROWS=()
for row in direct uninspected inspected mitmproxy; do
	case " $ONLY " in *" $row "*) ;; *) continue ;; esac
	testnet_check
	# The row's URL and curl's trust: the suite's CA, the sandbox's bundle (with the
	# session CA), mitmproxy's own CA (not verified: its CA is made at its start).
	case $row in
	direct) base=https://bench.test; trust=(--cacert "$TN/tls/ca.pem") ;;
	uninspected) base=https://bench.test; trust=(--cacert ca.pem) ;;
	inspected) base=https://bench.test; trust=() ;;
	mitmproxy) base=https://127.0.0.1:8443; trust=(-k) ;;
	esac
	echo "http.sh: measuring $row" >&2
	R_LOAD[$row]=$(cut -d' ' -f1-3 /proc/loadavg)
	"run_$row" timeout $((SECS + 30)) wrk -t1 -c"$CONNS" -d"${SECS}s" "$base/" \
		>"$OUT/$row.wrk" 2>"$OUT/$row.wrk.err"
	"run_$row" curl -sS -o /dev/null -m 300 -w 'speed %{speed_download}\n' "${trust[@]}" \
		"$base/big?n=$((SIZE * 1048576))" >"$OUT/$row.dl" 2>"$OUT/$row.dl.err"
	R_RPS[$row]=$(rps "$OUT/$row.wrk")
	R_DL[$row]=$(gbps "$OUT/$row.dl")
	for f in wrk dl; do
		if grep -q fail <<<"${R_RPS[$row]} ${R_DL[$row]}"; then
			{ echo "http.sh: $row ($f):"; sed 's/^/  | /' "$OUT/$row.$f.err" | head -n 8; } >&2
		fi
	done
	ROWS+=("$row")
done

ratio() {
	python3 -c 'import sys
try:
    a, b = float(sys.argv[1].rstrip("!*")), float(sys.argv[2].rstrip("!*"))
    print("%.2f" % (a / b))
except Exception:
    print("-")' "$1" "$2"
}

echo
echo "bench/http.sh — $(date -u '+%Y-%m-%d %H:%M UTC'), $(nproc) CPUs, $SECS s per wrk run, $CONNS connections, $SIZE MiB download"
printf '%-12s %14s %14s   %s\n' ROW "keep-alive r/s" "download Gb/s" "load average at the start"
for row in "${ROWS[@]}"; do
	printf '%-12s %14s %14s   %s\n' "$row" "${R_RPS[$row]}" "${R_DL[$row]}" "${R_LOAD[$row]}"
done
echo "load average at the end: $(cut -d' ' -f1-3 /proc/loadavg)"
if [ -n "${R_RPS[inspected]:-}" ]; then
	echo
	[ -n "${R_RPS[mitmproxy]:-}" ] &&
		echo "inspected / mitmproxy:   requests $(ratio "${R_RPS[inspected]}" "${R_RPS[mitmproxy]}")×, download $(ratio "${R_DL[inspected]}" "${R_DL[mitmproxy]}")×"
	[ -n "${R_RPS[uninspected]:-}" ] &&
		echo "inspected / uninspected: requests $(ratio "${R_RPS[inspected]}" "${R_RPS[uninspected]}")×, download $(ratio "${R_DL[inspected]}" "${R_DL[uninspected]}")×"
	[ -n "${R_RPS[direct]:-}" ] &&
		echo "inspected / direct:      requests $(ratio "${R_RPS[inspected]}" "${R_RPS[direct]}")×, download $(ratio "${R_DL[inspected]}" "${R_DL[direct]}")×"
	r=$(ratio "${R_RPS[inspected]}" "${R_RPS[mitmproxy]:-0}")
	python3 -c 'import sys; sys.exit(0 if sys.argv[1] != "-" and float(sys.argv[1]) >= 2 else 1)' "$r" &&
		echo "goal: keep-alive requests at least 2x mitmproxy's: met ($r)" ||
		echo "goal: keep-alive requests at least 2x mitmproxy's: NOT met ($r)"
	python3 -c 'import sys; sys.exit(0 if sys.argv[1] != "fail" and float(sys.argv[1]) >= 1 else 1)' "${R_DL[inspected]}" &&
		echo "goal: an inspected download at least 1 Gbit/s: met (${R_DL[inspected]})" ||
		echo "goal: an inspected download at least 1 Gbit/s: NOT met (${R_DL[inspected]})"
fi
