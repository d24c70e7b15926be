#!/bin/bash
# bench/net.sh — boxy's network path side by side with slirp4netns, pasta and
# the kernel's own paths, in one run, inside the hermetic test network.
#
# For each path it measures single-stream TCP throughput both ways (iperf3,
# upload = the client sends, download = iperf3 -R), short connections per
# second (wrk, every request a fresh TCP connection that the server closes,
# against bench/bench-httpd.c), the time to the first connection of a fresh
# sandbox (curl's time_connect: DNS lookup of www.example.test + TCP
# handshake) and the peak RSS (VmHWM) of the process that carries the
# packets (boxy-net, slirp4netns, pasta). Then the ratios boxy/slirp4netns
# and boxy/pasta.
#
#   loopback     client and server in the servers' namespace, 127.0.0.1
#   direct       client in the client namespace, server across the veth: the
#                floor under every path below, which all dial through it
#   boxy         boxy run --net public -- CLIENT (as the unprivileged user)
#   slirp4netns  CLIENT in a new netns, tap0 from slirp4netns --configure --mtu=65520
#   slirp-1500   the same with --mtu=1500 (only with --only: what the MTU alone is worth)
#   pasta        pasta --config-net -- CLIENT (addresses given: the client
#                namespace has no default route to copy)
#
# Nothing leaves the machine: the run happens in the namespaces of
# tests/lib/testnet.sh (no interface but lo and a veth to a namespace that
# holds only the servers), whose hermeticity check runs before setup, after
# the servers start and again before any measurement; it refuses otherwise.
#
#   bench/net.sh [--secs N] [--conns N] [--only "ROW..."]
#       as root (re-runs as the test user, like the test suites) or as a user
#   BOXY_BUILDDIR=DIR   where boxy was built (the only setting the re-run keeps
#                       from the environment, hence flags for the rest)
#   --secs N            seconds per iperf3/wrk measurement (default 5)
#   --conns N           wrk's concurrent connections (default 16)
#   --only "boxy pasta" run only these rows
set -u
SECS=5
CONNS=16
ONLY="loopback direct boxy slirp4netns pasta"
args=("$@")
while [ $# -gt 0 ]; do
	case $1 in
	--secs) SECS=$2; shift 2 ;;
	--conns) CONNS=$2; shift 2 ;;
	--only) ONLY=$2; shift 2 ;;
	*) echo "usage: bench/net.sh [--secs N] [--conns N] [--only \"ROW...\"]" >&2; exit 2 ;;
	esac
done
set -- "${args[@]}"
here=$(cd "$(dirname "$0")" && pwd)
. "$here/../tests/lib/harness.sh"
. "$here/../tests/lib/testnet.sh"
harness_locate
[ "${BOXY_TESTNET_INSIDE:-}" = 1 ] || harness_as_test_user "$0" "$@"
[ -x "$BOXY" ] || { echo "net.sh: no boxy at $BOXY (set BOXY_BUILDDIR)" >&2; exit 2; }
for t in iperf3 wrk curl slirp4netns pasta gcc python3; do
	command -v "$t" >/dev/null || { echo "net.sh: $t is not installed" >&2; exit 2; }
done
testnet_enter "$0" "$@"
testnet_setup

SRV=$TN_PUBLIC          # 93.184.216.35: iperf3 on 5201, bench-httpd on 8081
NAME=www.example.test   # resolves to $TN_HTTP (same servers, bound to every address)
OUT=$TN/bench
mkdir -p "$OUT" && chmod 0777 "$OUT"

# The short-connection server, built from source here (one file, no build-system step).
gcc -O2 -o "$TN/bench-httpd" "$here/bench-httpd.c" || testnet_die "cannot build bench-httpd"
tn_start iperf3 iperf3 -s -p 5201
tn_start httpd "$TN/bench-httpd" 0.0.0.0 8081
tn_wait_tcp "$SRV" 5201
tn_wait_tcp "$SRV" 8081
testnet_check

# The client commands, each printing one line a parser below understands.
IPERF_UP=(iperf3 -c "$SRV" -p 5201 -t "$SECS" -J)
IPERF_DOWN=(iperf3 -c "$SRV" -p 5201 -t "$SECS" -J -R)
WRK=(wrk -t1 -c"$CONNS" -d"${SECS}s" -H "Connection: close" "http://$SRV:8081/")
FIRST=(curl -sS -o /dev/null -m 10 -w "first %{time_namelookup} %{time_connect}\n"
	"http://$NAME:8081/")

# gbits FILE: iperf3 -J's received rate in Gbit/s, or "fail".
gbits() {
	python3 -c '
import json, sys
try:
    d = json.load(open(sys.argv[1]))
    print("%.2f" % (d["end"]["sum_received"]["bits_per_second"] / 1e9))
except Exception:
    print("fail")' "$1" 2>/dev/null
}

# conns FILE: wrk's requests/s (= connections/s here), "fail", or with a note of socket errors.
conns() {
	local r e
	r=$(awk '/^Requests\/sec:/ { printf "%d", $2 }' "$1")
	e=$(grep -o 'Socket errors:.*' "$1" | head -n 1)
	[ -n "$r" ] || { echo fail; return; }
	[ -n "$(grep -o 'Non-2xx.*' "$1")" ] && r="$r!"
	[ -n "$e" ] && r="$r*"
	echo "$r"
}

# first_ms FILE: the median of curl's time_connect lines in ms (DNS + handshake), or "fail".
first_ms() {
	awk '/^first / { print $3 * 1000 }' "$1" | sort -n |
		awk '{ v[NR] = $1 } END { if (NR) printf "%.1f", v[int((NR + 1) / 2)]; else print "fail" }'
}

# rss_watch COMM FILE: poll the newest process named COMM in this network
# namespace (other suites on the machine have their own boxy-net), write its peak RSS (kB) to FILE
# until killed. Sampled every 0.2 s; VmHWM is the kernel's own high-water mark,
# so the sampling interval loses nothing as long as one sample lands before it exits.
# Also writes FILE.cpu: one line "PID TICKS" per process seen, in the order they
# appeared, TICKS its user+system CPU time at the last sample (clock ticks), so
# the CPU the carrier spent on one measurement can be set against its bytes.
rss_watch() {
	local pid hwm max=0 t
	local -A ticks=()
	local -a order=()
	while :; do
		pid=$(pgrep -n -x --ns $$ --nslist net "$1" 2>/dev/null)
		if [ -n "$pid" ]; then
			hwm=$(awk '/^VmHWM:/ { print $2 }' "/proc/$pid/status" 2>/dev/null)
			[ -n "$hwm" ] && [ "$hwm" -gt "$max" ] && max=$hwm && echo "$max" >"$2"
			t=$(awk '{ sub(/^.*\) /, ""); print $12 + $13 }' "/proc/$pid/stat" 2>/dev/null)
			if [ -n "$t" ]; then
				[ -n "${ticks[$pid]:-}" ] || order+=("$pid")
				ticks[$pid]=$t
				for p in "${order[@]}"; do echo "$p ${ticks[$p]}"; done >"$2.cpu"
			fi
		fi
		sleep 0.2
	done
}

# cpu_per_gb ROW N FILE: CPU ms the N-th carrier process of ROW spent per GB
# that iperf3 -J's FILE received, or "-".
cpu_per_gb() {
	local t
	t=$(awk -v n="$2" 'NR == n { print $2 }' "$OUT/$1.rss.cpu" 2>/dev/null)
	[ -n "$t" ] || { echo -; return; }
	python3 -c '
import json, os, sys
try:
    b = json.load(open(sys.argv[1]))["end"]["sum_received"]["bytes"]
    print("%.0f" % (int(sys.argv[2]) * 1000 / os.sysconf("SC_CLK_TCK") / (b / 1e9)))
except Exception:
    print("-")' "$3" "$t" 2>/dev/null
}

# measure ROW RUNNER [RSS-COMM]: the four measurements with RUNNER CMD... as the way in.
measure() {
	local row=$1 runner=$2 comm=${3:-} w=""
	echo "net.sh: measuring $row" >&2
	: >"$OUT/$row.rss"
	rm -f "$OUT/$row.rss.cpu"
	if [ -n "$comm" ]; then
		rss_watch "$comm" "$OUT/$row.rss" &
		w=$!
	fi
	"$runner" "$OUT/$row.up.err" "${IPERF_UP[@]}" >"$OUT/$row.up" 2>"$OUT/$row.up.err"
	"$runner" "$OUT/$row.down.err" "${IPERF_DOWN[@]}" >"$OUT/$row.down" 2>"$OUT/$row.down.err"
	"$runner" "$OUT/$row.wrk.err" "${WRK[@]}" >"$OUT/$row.wrk" 2>"$OUT/$row.wrk.err"
	# Three fresh sandboxes (a single first connection is too noisy to quote): the median.
	: >"$OUT/$row.first"
	: >"$OUT/$row.first.err"
	for _ in 1 2 3; do
		"$runner" "$OUT/$row.first.err" "${FIRST[@]}" >>"$OUT/$row.first" 2>>"$OUT/$row.first.err"
	done
	[ -n "$w" ] && { kill "$w"; wait "$w" 2>/dev/null; }
	R_UP[$row]=$(gbits "$OUT/$row.up")
	R_DOWN[$row]=$(gbits "$OUT/$row.down")
	R_CONNS[$row]=$(conns "$OUT/$row.wrk")
	R_CPU[$row]="$(cpu_per_gb "$row" 1 "$OUT/$row.up")/$(cpu_per_gb "$row" 2 "$OUT/$row.down")"
	R_FIRST[$row]=$(first_ms "$OUT/$row.first")
	if [ -s "$OUT/$row.rss" ]; then
		R_RSS[$row]=$(awk '{ printf "%.1f MiB", $1 / 1024 }' "$OUT/$row.rss")
	else
		R_RSS[$row]=-
	fi
	# A measurement that failed says why: its stderr, and its stdout when that is short.
	for f in up:R_UP down:R_DOWN wrk:R_CONNS first:R_FIRST; do
		unset -n v
		declare -n v=${f#*:}
		f=${f%%:*}
		[ "${v[$row]}" = fail ] || continue
		{
			echo "net.sh: $row: the $f measurement failed:"
			sed 's/^/  | /' "$OUT/$row.$f.err" | head -n 12
			sed 's/^/  > /' "$OUT/$row.$f" | head -n 12
		} >&2
	done
}

# The ways in. Each is RUNNER ERRFILE CMD...; the CMD's stdout is the runner's.
# curl's first connection needs a name the servers' namespace holds; the
# loopback row resolves it to 127.0.0.1 instead (--resolve), so its figure
# is the handshake alone.
run_loopback() {
	shift
	local a=() x
	for x in "$@"; do a+=("${x//$SRV/127.0.0.1}"); done
	[ "${a[0]}" = curl ] && a=(curl --resolve "$NAME:8081:127.0.0.1" "${a[@]:1}")
	tn_srv "${a[@]}"
}
run_direct() { shift; "$@"; }
run_boxy() {
	shift
	mkdir -p "$OUT/work" && chmod 0777 "$OUT/work"
	(cd "$OUT/work" && tn_boxy run --net public -- "$@" </dev/null)
}
# slirp4netns needs a namespace to attach to before the client starts: a
# sleeping process holds it, the client joins it with nsenter. SLIRP_MTU is
# 65520 (the brief's setting, rootless podman's, and boxy's tap0 MTU) or 1500.
SLIRP_MTU=65520
run_slirp4netns() {
	local hold sl
	shift
	unshare -n -- sleep infinity &
	hold=$!
	sleep 0.1
	slirp4netns --configure --mtu="$SLIRP_MTU" --disable-host-loopback "$hold" tap0 \
		>>"$OUT/slirp4netns.log" 2>&1 &
	sl=$!
	for _ in $(seq 1 50); do
		nsenter --net="/proc/$hold/ns/net" ip -o route show default 2>/dev/null | grep -q tap0 &&
			break
		sleep 0.1
	done
	nsenter --net="/proc/$hold/ns/net" -- "$@"
	kill "$sl" "$hold"
	wait "$sl" "$hold" 2>/dev/null
	return 0
}
run_pasta() {
	shift
	pasta -q -4 -f --config-net -i "$TN_IF_C" -a 10.0.2.15 -n 24 -g 10.0.2.2 -- "$@" \
		2> >(grep -v -e 'to syslog' -e 'uid_map' -e 'user mappings' -e ping_group_range >&2)
}

declare -A R_UP R_DOWN R_CONNS R_FIRST R_RSS R_CPU
ROWS=()
for row in loopback direct boxy slirp4netns slirp-1500 pasta; do
	case " $ONLY " in *" $row "*) ;; *) continue ;; esac
	testnet_check
	case $row in
	boxy)
		measure boxy run_boxy boxy-net
		# The link MTU decides the TCP MSS inside the sandbox, so say it next to slirp4netns's.
		BOXY_MTU=$(run_boxy - python3 -c 'import socket, fcntl, struct
r = fcntl.ioctl(socket.socket(), 0x8921, struct.pack("16si20x", b"tap0", 0))  # SIOCGIFMTU
print(struct.unpack("16si20x", r)[1])' 2>/dev/null) || BOXY_MTU=unknown
		;;
	slirp4netns) measure slirp4netns run_slirp4netns slirp4netns ;;
	slirp-1500)
		SLIRP_MTU=1500
		measure slirp-1500 run_slirp4netns slirp4netns
		SLIRP_MTU=65520
		;;
	pasta) measure pasta run_pasta 'pasta|passt|pasta\.avx2|passt\.avx2' ;;
	*) measure "$row" "run_$row" ;;
	esac
	ROWS+=("$row")
done

# ratio A B: A/B with two decimals, or "-" when either is not a number.
ratio() {
	awk -v a="${1%%[*!]*}" -v b="${2%%[*!]*}" 'BEGIN {
		if (a !~ /^[0-9.]+$/ || b !~ /^[0-9.]+$/ || b + 0 == 0) print "-"
		else printf "%.2f", a / b }'
}

echo
echo "boxy network bench — $(date -u '+%Y-%m-%d %H:%M UTC'), $(nproc) CPUs, load average $(cut -d' ' -f1-3 /proc/loadavg)"
echo "links: boxy tap0 MTU ${BOXY_MTU:-?}; slirp4netns tap0 MTU 65520 (slirp-1500: 1500); pasta its default, 65520"
echo "iperf3 -t $SECS single stream; wrk -t1 -c$CONNS -d${SECS}s, Connection: close (one TCP connection per request)"
printf '%-12s %10s %10s %12s %10s %10s %12s\n' tool "up Gbit/s" "down Gbit/s" "short conn/s" \
	"first ms" "RSS peak" "CPU ms/GB"
for row in "${ROWS[@]}"; do
	printf '%-12s %10s %10s %12s %10s %10s %12s\n' "$row" "${R_UP[$row]}" "${R_DOWN[$row]}" \
		"${R_CONNS[$row]}" "${R_FIRST[$row]}" "${R_RSS[$row]}" "${R_CPU[$row]:--}"
done
echo "(* = wrk reported socket errors, ! = non-2xx replies; first ms = median over 3 fresh"
echo " sandboxes of curl's time_connect, DNS + TCP handshake; RSS peak = VmHWM of the process"
echo " carrying the packets: boxy-net, slirp4netns, pasta; CPU ms/GB = that process's user+system"
echo " CPU time per GB received, upload/download: the figure a loaded machine moves least)"
for other in slirp4netns slirp-1500 pasta; do
	[ -n "${R_UP[boxy]:-}" ] && [ -n "${R_UP[$other]:-}" ] || continue
	echo "boxy/$other: up $(ratio "${R_UP[boxy]}" "${R_UP[$other]}")" \
		"down $(ratio "${R_DOWN[boxy]}" "${R_DOWN[$other]}")" \
		"conns $(ratio "${R_CONNS[boxy]}" "${R_CONNS[$other]}")" \
		"first-connection $(ratio "${R_FIRST[boxy]}" "${R_FIRST[$other]}")"
done
if [ -n "${R_FIRST[direct]:-}" ]; then
	for row in boxy slirp4netns slirp-1500 pasta; do
		[ -n "${R_FIRST[$row]:-}" ] || continue
		printf '%s' "$row first connection, added to direct's: "
		awk -v a="${R_FIRST[$row]}" -v b="${R_FIRST[direct]}" 'BEGIN {
			if (a !~ /^[0-9.]+$/ || b !~ /^[0-9.]+$/) print "-"; else printf "%+.1f ms\n", a - b }'
	done
fi
if [ -n "${R_UP[boxy]:-}" ]; then
	echo "targets for boxy: >= slirp4netns and >= 3 Gbit/s per direction; >= 5000 short conn/s;" \
		"< 16 MiB per session (boxy-net)"
	# verdict NAME OK-EXPRESSION: "met" or "NOT met", by awk's arithmetic.
	verdict() { awk "BEGIN { print \"  $1: \" (($2) ? \"met\" : \"NOT met\") }"; }
	n() { local x=${1%%[*!]*}; [[ $x =~ ^[0-9.]+$ ]] && echo "$x" || echo -1; }
	verdict "upload >= 3 Gbit/s" "$(n "${R_UP[boxy]}") >= 3"
	verdict "download >= 3 Gbit/s" "$(n "${R_DOWN[boxy]}") >= 3"
	if [ -n "${R_UP[slirp4netns]:-}" ]; then
		verdict "upload >= slirp4netns" "$(n "${R_UP[boxy]}") >= $(n "${R_UP[slirp4netns]}")"
		verdict "download >= slirp4netns" \
			"$(n "${R_DOWN[boxy]}") >= $(n "${R_DOWN[slirp4netns]}")"
	fi
	verdict "short conn/s >= 5000" "$(n "${R_CONNS[boxy]}") >= 5000"
	verdict "boxy-net RSS < 16 MiB" "$(n "$(cut -d' ' -f1 <<<"${R_RSS[boxy]}")") >= 0 &&
		$(n "$(cut -d' ' -f1 <<<"${R_RSS[boxy]}")") < 16"
fi
