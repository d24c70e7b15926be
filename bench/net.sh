#!/bin/bash
# bench/net.sh — boxy's network path side by side with slirp4netns, pasta and
# the kernel's own paths, in one run, inside the hermetic test network.
#
# For each path it measures TCP throughput both ways with one stream and with
# four (iperf3, upload = the client sends, download = iperf3 -R, -P 4), short
# connections per second (wrk, every request a fresh TCP connection that the
# server closes, against bench/bench-httpd.c), the time to the first
# connection of a fresh sandbox (curl's time_connect: DNS lookup of
# www.example.test + TCP handshake), the peak RSS (VmHWM) of the process that
# carries the packets (boxy-net, one per queue; slirp4netns; pasta) and its
# peak under an upload flood (256 connections sending as fast as they can to
# a server that never reads). Then the ratios boxy/slirp4netns and boxy/pasta,
# and issue 12's goals, each met or NOT met, against the peer of the same run.
#
#   loopback     client and server in the servers' namespace, 127.0.0.1
#   direct       client in the client namespace, server across the veth: the
#                floor under every path below, which all dial through it
#   boxy         boxy run --net public -- CLIENT (as the unprivileged user; tap0's
#                queues as boxy chooses them: one per two CPUs, up to four)
#   boxy-noattr  the same with --no-attribution (only with --only: what naming
#                each connection's process costs)
#   boxy-1q, boxy-2q, boxy-4q
#                the same with 1, 2 or 4 queues, one boxy-net each (only with
#                --only: what the queues are worth)
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
#   bench/net.sh [--secs N] [--conns N] [--flood N] [--only "ROW..."]
#       as root (re-runs as the test user, like the test suites) or as a user
#   BOXY_BUILDDIR=DIR   where boxy was built (the only setting the re-run keeps
#                       from the environment, hence flags for the rest)
#   --secs N            seconds per iperf3/wrk measurement (default 5)
#   --conns N           wrk's concurrent connections (default 16)
#   --flood N           the upload flood's connections (default 256)
#   --only "boxy pasta" run only these rows
#   --kinds "down wrk"  run only these measurements (up down up4 down4 wrk flood
#                       first; default all): the others print "-"
set -u
SECS=5
CONNS=16
FLOOD=256
ONLY="loopback direct boxy slirp4netns pasta"
KINDS="up down up4 down4 wrk flood first"
args=("$@")
while [ $# -gt 0 ]; do
	case $1 in
	--secs) SECS=$2; shift 2 ;;
	--conns) CONNS=$2; shift 2 ;;
	--flood) FLOOD=$2; shift 2 ;;
	--only) ONLY=$2; shift 2 ;;
	--kinds) KINDS=$2; shift 2 ;;
	*) echo "usage: bench/net.sh [--secs N] [--conns N] [--flood N] [--only \"ROW...\"] [--kinds \"KIND...\"]" >&2
		exit 2 ;;
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

SRV=$TN_PUBLIC          # 93.184.216.35: iperf3 on 5201, bench-httpd on 8081, the sink on 5202
NAME=www.example.test   # resolves to $TN_HTTP (same servers, bound to every address)
OUT=$TN/bench
mkdir -p "$OUT" && chmod 0777 "$OUT"

# The short-connection server, built from source here (one file, no build-system step).
gcc -O2 -o "$TN/bench-httpd" "$here/bench-httpd.c" || testnet_die "cannot build bench-httpd"
tn_start iperf3 iperf3 -s -p 5201
tn_start httpd "$TN/bench-httpd" 0.0.0.0 8081
# The flood's sink: accepts and never reads (the last 4096 connections are
# kept open, so every byte a flood sends stays queued somewhere on its path).
tn_start sink python3 -c '
import socket
s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(("0.0.0.0", 5202))
s.listen(4096)
keep = []
while True:
    c, _ = s.accept()
    keep.append(c)
    if len(keep) > 4096:
        keep.pop(0).close()'
tn_wait_tcp "$SRV" 5201
tn_wait_tcp "$SRV" 8081
tn_wait_tcp "$SRV" 5202
testnet_check

# The client commands, each printing one line a parser below understands.
IPERF_UP=(iperf3 -c "$SRV" -p 5201 -t "$SECS" -J)
IPERF_DOWN=(iperf3 -c "$SRV" -p 5201 -t "$SECS" -J -R)
IPERF_UP4=(iperf3 -c "$SRV" -p 5201 -t "$SECS" -J -P 4)
IPERF_DOWN4=(iperf3 -c "$SRV" -p 5201 -t "$SECS" -J -P 4 -R)
# The flood: FLOOD connections, each sending 64 KiB writes whenever it can for
# SECS seconds, then reset (SO_LINGER 0: nothing left to drain after the run);
# a connection the path resets is counted and dropped.
FLOOD_CMD=(python3 -c '
import selectors, socket, struct, sys, time
host, port, n, secs = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), float(sys.argv[4])
socks = [socket.create_connection((host, port), timeout=10) for _ in range(n)]
sel = selectors.DefaultSelector()
for s in socks:
    s.setblocking(False)
    sel.register(s, selectors.EVENT_WRITE)
buf, sent, lost, end = b"x" * 65536, 0, 0, time.time() + secs
while time.time() < end and sel.get_map():
    for k, _ in sel.select(timeout=0.2):
        try:
            sent += k.fileobj.send(buf)
        except BlockingIOError:
            pass
        except OSError:
            sel.unregister(k.fileobj)
            lost += 1
for s in socks:
    s.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    s.close()
print("flood", n, sent, "reset", lost)' "$SRV" 5202 "$FLOOD" "$SECS")
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

# rss_watch COMM FILE: poll every process named COMM in this network namespace
# (other suites on the machine have their own boxy-nets) every 0.2 s until
# killed, and keep FILE as one line "PID TICKS HWM" per process seen, in the
# order they appeared: TICKS its user+system CPU time (clock ticks) and HWM
# its peak RSS (VmHWM, kB, the kernel's own high-water mark) at the last
# sample. A measurement owns the lines that appeared while it ran (take),
# so the CPU and memory of its carriers, several with tap0's queues, are set
# against its bytes. A process's last 0.2 s of CPU can be missed.
rss_watch() {
	local pid hwm t p
	local -A ticks=() hwms=()
	local -a order=()
	while :; do
		for pid in $(pgrep -x --ns $$ --nslist net "$1" 2>/dev/null); do
			hwm=$(awk '/^VmHWM:/ { print $2 }' "/proc/$pid/status" 2>/dev/null)
			t=$(awk '{ sub(/^.*\) /, ""); print $12 + $13 }' "/proc/$pid/stat" 2>/dev/null)
			[ -n "$t" ] && [ -n "$hwm" ] || continue
			[ -n "${ticks[$pid]:-}" ] || order+=("$pid")
			ticks[$pid]=$t
			[ "$hwm" -gt "${hwms[$pid]:-0}" ] && hwms[$pid]=$hwm
		done
		for p in "${order[@]}"; do echo "$p ${ticks[$p]} ${hwms[$p]}"; done >"$2.new"
		mv -f "$2.new" "$2"
		sleep 0.2
	done
}

# take ROW KIND RUNNER CMD...: one measurement, CMD run through RUNNER, its
# stdout in $OUT/ROW.KIND; then the carriers' CPU ticks (T_CPU[ROW.KIND]),
# largest peak RSS in kB (T_HWM[ROW.KIND]) and number (T_N[ROW.KIND]) over the
# processes that appeared during it ("" without a watcher or when none appeared).
take() {
	local row=$1 kind=$2 runner=$3 n0=0
	shift 3
	T_CPU[$row.$kind]=""
	T_HWM[$row.$kind]=""
	T_N[$row.$kind]=""
	case " $KINDS " in *" $kind "*) ;; *) : >"$OUT/$row.$kind"; return 0 ;; esac
	[ -s "$OUT/$row.carriers" ] && n0=$(wc -l <"$OUT/$row.carriers")
	"$runner" "$OUT/$row.$kind.err" "$@" >"$OUT/$row.$kind" 2>"$OUT/$row.$kind.err"
	T_CPU[$row.$kind]=""
	T_HWM[$row.$kind]=""
	T_N[$row.$kind]=""
	[ -n "$W" ] || return 0
	sleep 0.5       # the watcher's last sample of processes that just exited
	[ -s "$OUT/$row.carriers" ] || return 0
	T_CPU[$row.$kind]=$(awk -v n="$n0" 'NR > n { t += $2; k = 1 } END { if (k) print t }' \
		"$OUT/$row.carriers")
	T_HWM[$row.$kind]=$(awk -v n="$n0" 'NR > n && $3 > m { m = $3 } END { if (m) print m }' \
		"$OUT/$row.carriers")
	T_N[$row.$kind]=$(awk -v n="$n0" 'END { print NR - n }' "$OUT/$row.carriers")
}

# cpu_per_gb TICKS FILE: CPU ms per GB that iperf3 -J's FILE received, or "-".
cpu_per_gb() {
	[ -n "$1" ] || { echo -; return; }
	python3 -c '
import json, os, sys
try:
    b = json.load(open(sys.argv[1]))["end"]["sum_received"]["bytes"]
    print("%.0f" % (int(sys.argv[2]) * 1000 / os.sysconf("SC_CLK_TCK") / (b / 1e9)))
except Exception:
    print("-")' "$2" "$1" 2>/dev/null
}

# mib KB...: the largest, in MiB with one decimal, or "-".
mib() {
	local x m=0
	for x in "$@"; do [ -n "$x" ] && [ "$x" -gt "$m" ] && m=$x; done
	[ "$m" -gt 0 ] && awk -v k="$m" 'BEGIN { printf "%.1f", k / 1024 }' || echo -
}

# measure ROW RUNNER [RSS-COMM]: every measurement with RUNNER CMD... as the way in.
measure() {
	local row=$1 runner=$2 comm=${3:-} k
	W=""
	echo "net.sh: measuring $row" >&2
	rm -f "$OUT/$row.carriers"
	if [ -n "$comm" ]; then
		rss_watch "$comm" "$OUT/$row.carriers" &
		W=$!
	fi
	take "$row" up "$runner" "${IPERF_UP[@]}"
	take "$row" down "$runner" "${IPERF_DOWN[@]}"
	take "$row" up4 "$runner" "${IPERF_UP4[@]}"
	take "$row" down4 "$runner" "${IPERF_DOWN4[@]}"
	take "$row" wrk "$runner" "${WRK[@]}"
	[ -n "$W" ] && take "$row" flood "$runner" "${FLOOD_CMD[@]}"
	# Three fresh sandboxes (a single first connection is too noisy to quote): the median.
	: >"$OUT/$row.first"
	: >"$OUT/$row.first.err"
	for _ in 1 2 3; do
		case " $KINDS " in *" first "*) ;; *) break ;; esac
		"$runner" "$OUT/$row.first.err" "${FIRST[@]}" >>"$OUT/$row.first" 2>>"$OUT/$row.first.err"
	done
	[ -n "$W" ] && { kill "$W"; wait "$W" 2>/dev/null; }
	R_UP[$row]=$(gbits "$OUT/$row.up")
	R_DOWN[$row]=$(gbits "$OUT/$row.down")
	R_UP4[$row]=$(gbits "$OUT/$row.up4")
	R_DOWN4[$row]=$(gbits "$OUT/$row.down4")
	R_CONNS[$row]=$(conns "$OUT/$row.wrk")
	R_CPU[$row]="$(cpu_per_gb "${T_CPU[$row.up]}" "$OUT/$row.up")/$(cpu_per_gb \
		"${T_CPU[$row.down]}" "$OUT/$row.down")"
	R_FIRST[$row]=$(first_ms "$OUT/$row.first")
	R_RSS[$row]=$(mib "${T_HWM[$row.up]}" "${T_HWM[$row.down]}" "${T_HWM[$row.up4]}" \
		"${T_HWM[$row.down4]}" "${T_HWM[$row.wrk]}")
	R_FLOOD[$row]=-
	if [ -n "$W" ]; then
		R_FLOOD[$row]=$(mib "${T_HWM[$row.flood]:-}")
		grep -q '^flood ' "$OUT/$row.flood" || R_FLOOD[$row]=fail
	fi
	R_PROCS[$row]=${T_N[$row.up]:-}
	# A measurement that failed says why: its stderr, and its stdout when that is short.
	for k in up:R_UP down:R_DOWN up4:R_UP4 down4:R_DOWN4 wrk:R_CONNS first:R_FIRST flood:R_FLOOD; do
		unset -n v
		declare -n v=${k#*:}
		k=${k%%:*}
		case " $KINDS " in *" $k "*) ;; *) v[$row]=-; continue ;; esac
		[ "${v[$row]}" = fail ] || continue
		{
			echo "net.sh: $row: the $k measurement failed:"
			sed 's/^/  | /' "$OUT/$row.$k.err" | head -n 12
			sed 's/^/  > /' "$OUT/$row.$k" | head -n 12
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
# BOXY_NET_QUEUES in the run's environment sets tap0's queues (boxy-1q: one, ...).
BOXY_QUEUES=""
BOXY_FLAGS=()
run_boxy() {
	shift
	mkdir -p "$OUT/work" && chmod 0777 "$OUT/work"
	(cd "$OUT/work" && tn_user env ${BOXY_QUEUES:+BOXY_NET_QUEUES=$BOXY_QUEUES} \
		HOME="$TN/home" XDG_RUNTIME_DIR="$TN/run" XDG_STATE_HOME="$TN/state" \
		"$BOXY" run --net public ${BOXY_FLAGS[@]+"${BOXY_FLAGS[@]}"} -- "$@" </dev/null)
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

declare -A R_UP R_DOWN R_UP4 R_DOWN4 R_CONNS R_FIRST R_RSS R_FLOOD R_CPU R_PROCS T_CPU T_HWM T_N
W=""
ROWS=()
for row in loopback direct boxy boxy-noattr boxy-1q boxy-2q boxy-4q slirp4netns slirp-1500 pasta; do
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
	boxy-noattr)
		BOXY_FLAGS=(--no-attribution)
		measure "$row" run_boxy boxy-net
		BOXY_FLAGS=()
		;;
	boxy-[124]q)
		BOXY_QUEUES=${row#boxy-}
		BOXY_QUEUES=${BOXY_QUEUES%q}
		measure "$row" run_boxy boxy-net
		BOXY_QUEUES=""
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
echo "links: boxy tap0 MTU ${BOXY_MTU:-?}, ${R_PROCS[boxy]:-?} queue(s), one boxy-net each; slirp4netns tap0 MTU 65520 (slirp-1500: 1500); pasta its default, 65520"
echo "iperf3 -t $SECS, one stream and -P 4; wrk -t1 -c$CONNS -d${SECS}s, Connection: close (one TCP connection per request); flood: $FLOOD connections uploading to a sink that never reads, ${SECS}s"
fmt='%-12s %8s %8s %8s %8s %10s %8s %8s %8s %11s\n'
printf "$fmt" tool "up" "down" "up x4" "down x4" "short" "first" "RSS" "flood" "CPU ms/GB"
printf "$fmt" "" "Gbit/s" "Gbit/s" "Gbit/s" "Gbit/s" "conn/s" "ms" "MiB" "MiB" "up/down"
for row in "${ROWS[@]}"; do
	printf "$fmt" "$row" "${R_UP[$row]}" "${R_DOWN[$row]}" "${R_UP4[$row]}" "${R_DOWN4[$row]}" \
		"${R_CONNS[$row]}" "${R_FIRST[$row]}" "${R_RSS[$row]}" "${R_FLOOD[$row]}" "${R_CPU[$row]:--}"
done
echo "(* = wrk reported socket errors, ! = non-2xx replies; first = median over 3 fresh"
echo " sandboxes of curl's time_connect, DNS + TCP handshake; RSS = the largest VmHWM of a process"
echo " carrying the packets (boxy-net, one per queue; slirp4netns; pasta) over the throughput"
echo " and short-connection runs, flood = the same during the flood; CPU ms/GB = those processes'"
echo " user+system CPU time per GB received, single stream: the figure a loaded machine moves least)"

# ratio A B: A/B with two decimals, or "-" when either is not a number.
ratio() {
	awk -v a="${1%%[*!]*}" -v b="${2%%[*!]*}" 'BEGIN {
		if (a !~ /^[0-9.]+$/ || b !~ /^[0-9.]+$/ || b + 0 == 0) print "-"
		else printf "%.2f", a / b }'
}
for other in direct boxy-noattr boxy-1q boxy-2q boxy-4q slirp4netns slirp-1500 pasta; do
	[ -n "${R_UP[boxy]:-}" ] && [ -n "${R_UP[$other]:-}" ] || continue
	echo "boxy/$other: up $(ratio "${R_UP[boxy]}" "${R_UP[$other]}")" \
		"down $(ratio "${R_DOWN[boxy]}" "${R_DOWN[$other]}")" \
		"up x4 $(ratio "${R_UP4[boxy]}" "${R_UP4[$other]}")" \
		"down x4 $(ratio "${R_DOWN4[boxy]}" "${R_DOWN4[$other]}")" \
		"conns $(ratio "${R_CONNS[boxy]}" "${R_CONNS[$other]}")" \
		"first-connection $(ratio "${R_FIRST[boxy]}" "${R_FIRST[$other]}")"
done
if [ -n "${R_FIRST[direct]:-}" ]; then
	for row in boxy boxy-noattr boxy-1q boxy-2q boxy-4q slirp4netns slirp-1500 pasta; do
		[ -n "${R_FIRST[$row]:-}" ] || continue
		printf '%s' "$row first connection, added to direct's: "
		awk -v a="${R_FIRST[$row]}" -v b="${R_FIRST[direct]}" 'BEGIN {
			if (a !~ /^[0-9.]+$/ || b !~ /^[0-9.]+$/) print "-"; else printf "%+.1f ms\n", a - b }'
	done
fi
if [ -n "${R_UP[boxy]:-}" ]; then
	# goal NAME VALUE OP TARGET: one line, the figure, the goal and met / NOT met.
	n() { local x=${1%%[*!]*}; [[ $x =~ ^[0-9.]+$ ]] && echo "$x" || echo -1; }
	goal() {
		awk -v name="$1" -v v="$2" -v op="$3" -v t="$4" 'BEGIN {
			ok = (v >= 0) && (op == ">=" ? v + 0 >= t + 0 : v + 0 <= t + 0)
			printf "  %-44s %8s  goal %s %-6s %s\n", name, (v < 0 ? "-" : v), op, t,
				ok ? "met" : "NOT met" }'
	}
	echo "issue 12's goals (ratios against the peer measured in this run):"
	if [ -n "${R_UP[pasta]:-}" ]; then
		goal "single-stream download, boxy/pasta" "$(n "$(ratio "${R_DOWN[boxy]}" "${R_DOWN[pasta]}")")" ">=" 1.2
	fi
	goal "4 streams up, boxy x4/boxy x1" "$(n "$(ratio "${R_UP4[boxy]}" "${R_UP[boxy]}")")" ">=" 1.6
	goal "4 streams down, boxy x4/boxy x1" "$(n "$(ratio "${R_DOWN4[boxy]}" "${R_DOWN[boxy]}")")" ">=" 1.6
	if [ -n "${R_UP[slirp4netns]:-}" ]; then
		goal "short connections, boxy/slirp4netns" \
			"$(n "$(ratio "${R_CONNS[boxy]}" "${R_CONNS[slirp4netns]}")")" ">=" 6
		goal "single-stream upload, boxy/slirp4netns" \
			"$(n "$(ratio "${R_UP[boxy]}" "${R_UP[slirp4netns]}")")" ">=" 2
	fi
	goal "boxy-net MiB per queue, upload flood" "$(n "${R_FLOOD[boxy]}")" "<=" 16
	echo "earlier targets:"
	goal "upload Gbit/s" "$(n "${R_UP[boxy]}")" ">=" 3
	goal "download Gbit/s" "$(n "${R_DOWN[boxy]}")" ">=" 3
	goal "short conn/s" "$(n "${R_CONNS[boxy]}")" ">=" 5000
	goal "boxy-net MiB per queue" "$(n "${R_RSS[boxy]}")" "<=" 16
fi
