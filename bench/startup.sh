#!/bin/bash
# bench/startup.sh — how long boxy takes to start a sandbox, against bubblewrap
# building the equivalent one in the same run: every row of issue 12's startup
# table, each with its peer measured alongside (run by run, interleaved, so the
# machine's drift hits both alike), the ratio and the goal.
#
#   row                                     peer                        goal
#   boxy run --net none -- /bin/true        bwrap --unshare-all         <= 1.5x bwrap
#     (warm daemon)
#   boxy run --no-daemon --net none         bwrap --unshare-all         <= 1.3x bwrap
#   boxy run --net public -- /bin/true      bwrap + slirp4netns         <= 0.5x
#   30 boxy runs started at once            30 bwraps at once           <= 6 ms each
#
# Runs as the unprivileged test user (when started as root, through the same
# re-exec as the test suites: tests/lib/harness.sh), because that is who boxy
# is for and bwrap needs no privilege either. The --net public row runs in a
# fresh network namespace with nothing but lo (tests/lib/testnet.sh's entry):
# /bin/true sends nothing, and nothing could leave anyway.
#
#   BOXY_BENCH_RUNS=N    rounds of each row (default 30; the parallel row 5)
#   BOXY_BUILDDIR=DIR    where boxy was built (default: the cwd, else the source tree)
#   --only "ROW..."      rows among: daemon alone public parallel (default all)
#   --vs DIR             instead, time the boxy built in DIR (another commit: "before")
#                        against this one, with a daemon of its own: each row of
#                        --only, the three commands in turn run by run (boxy, DIR's
#                        boxy, bwrap — bwrap + slirp4netns for the public row, in its
#                        empty namespace — boxy, ...), so drift hits all alike; prints
#                        the medians, the ratios to the peer and boxy/DIR's boxy

. "$(dirname "$0")/../tests/lib/harness.sh"
. "$(dirname "$0")/../tests/lib/testnet.sh"
harness_locate
[ "${BOXY_TESTNET_INSIDE:-}" = 1 ] || harness_as_test_user "$0" "$@"

RUNS=${BOXY_BENCH_RUNS:-30}
PRUNS=5
PAR=30
VS=
ONLY="daemon alone public parallel"
PUBLIC_ROW=
args=("$@")
while [ $# -gt 0 ]; do
	case $1 in
	--vs) VS=$2; shift 2 ;;
	--only) ONLY=$2; shift 2 ;;
	--public-row) PUBLIC_ROW=1; shift ;;
	*) echo "usage: bench/startup.sh [--only \"daemon alone public parallel\"] [--vs DIR]" >&2
	   exit 2 ;;
	esac
done
set -- "${args[@]}"
if [ -n "$VS" ]; then
	[ -x "$VS/boxy" ] || { echo "startup.sh: no boxy in $VS" >&2; exit 2; }
fi
[ -x "$BOXY" ] || { echo "startup.sh: no boxy at $BOXY (set BOXY_BUILDDIR)" >&2; exit 2; }
for t in bwrap slirp4netns; do
	command -v "$t" >/dev/null || { echo "startup.sh: $t is not installed" >&2; exit 2; }
done

WORK=$(mktemp -d "${TMPDIR:-/tmp}/boxy-bench.XXXXXX") || exit 2
HARNESS_DIRS+=("$WORK")
mkdir -p "$WORK/run" "$WORK/project" "$WORK/state"
chmod 0700 "$WORK/run"
# A private runtime and state dir: the bench's own daemon and store, stopped at the end.
export XDG_RUNTIME_DIR=$WORK/run XDG_STATE_HOME=$WORK/state
mkdir -m 0700 "$WORK/run-vs" "$WORK/state-vs"
trap '"$BOXY" daemon stop >/dev/null 2>&1; [ -z "$VS" ] || XDG_RUNTIME_DIR=$WORK/run-vs XDG_STATE_HOME=$WORK/state-vs "$VS/boxy" daemon stop >/dev/null 2>&1; harness_cleanup' EXIT
cd "$WORK/project" || exit 2

BOXY_CMD=("$BOXY" run --net none -- /bin/true)
ALONE_CMD=("$BOXY" run --no-daemon --net none -- /bin/true)
PUBLIC_CMD=("$BOXY" run --net public -- /bin/true)
# What boxy --net none builds, as far as bwrap can say it: every namespace, a
# read-only /usr with the merged-usr links, fresh /proc, /dev, /tmp and $HOME,
# the work directory read-write, a new session, a cleared environment.
BWRAP_ARGS=(--unshare-all --die-with-parent --new-session
	--ro-bind /usr /usr --symlink usr/bin /bin --symlink usr/sbin /sbin
	--symlink usr/lib /lib --symlink usr/lib64 /lib64
	--proc /proc --dev /dev --tmpfs /tmp --tmpfs "$HOME"
	--bind "$WORK/project" "$WORK/project" --chdir "$WORK/project"
	--clearenv --setenv PATH /usr/bin:/bin --setenv HOME "$HOME")
BWRAP_CMD=(bwrap "${BWRAP_ARGS[@]}" /bin/true)

# bwrap_slirp: bwrap with a network of slirp4netns's, the way rootless
# runtimes start one: bwrap makes the namespaces and waits (--block-fd), its
# child's pid comes back on --info-fd, slirp4netns attaches and configures
# tap0, says it is ready (--ready-fd), and only then is the payload run. The
# FIFOs are made once, outside the timed runs; nothing but bwrap and
# slirp4netns is started per run.
mkfifo "$WORK/info" "$WORK/ready" "$WORK/block"
bwrap_slirp() {
	local bp sl info pid rc
	exec 5<>"$WORK/block"
	bwrap "${BWRAP_ARGS[@]}" --info-fd 3 --block-fd 4 /bin/true 3>"$WORK/info" 4<&5 &
	bp=$!
	read -r -d '' info <"$WORK/info"
	pid=${info#*\"child-pid\": }
	pid=${pid%%[^0-9]*}
	slirp4netns --configure --mtu=65520 --disable-host-loopback --ready-fd 6 "$pid" tap0 \
		6>"$WORK/ready" >/dev/null 2>&1 &
	sl=$!
	read -r -n 1 _ <"$WORK/ready"
	echo go >&5
	wait "$bp"
	rc=$?
	exec 5>&-
	kill "$sl" 2>/dev/null
	wait "$sl" 2>/dev/null
	return $rc
}
SLIRP_CMD=(bwrap_slirp)

# parallel NAME CMD...: start PAR of CMD at once, wait for all (the time is the bench's).
parallel() {
	local i
	shift
	for ((i = 0; i < PAR; i++)); do "$@" >/dev/null 2>&1 & done
	wait
}
PAR_BOXY=(parallel boxy "${BOXY_CMD[@]}")
PAR_BWRAP=(parallel bwrap "${BWRAP_CMD[@]}")

# time_one ARRAY-NAME FILE: one run's wall time in ms (two decimals), appended to FILE.
time_one() {
	declare -n cmd=$1
	local t0 t1
	t0=$(date +%s%N)
	"${cmd[@]}" >/dev/null 2>&1
	t1=$(date +%s%N)
	awk -v t=$((t1 - t0)) 'BEGIN { printf "%.2f\n", t / 1e6 }' >>"$2"
}
median() { sort -n "$1" | awk '{ a[NR] = $1 } END { print (NR % 2) ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2 }'; }

# interleave N ARRAY-NAME...: N rounds, each running every command once in
# turn; FILE per command at $WORK/NAME.ms. Three warm-up rounds first.
interleave() {
	local n=$1 c i
	shift
	for c in "$@"; do : >"$WORK/$c.ms"; done
	for ((i = 0; i < 3; i++)); do
		for c in "$@"; do declare -n cmd=$c; "${cmd[@]}" >/dev/null 2>&1; unset -n cmd; done
	done
	for ((i = 0; i < n; i++)); do
		for c in "$@"; do time_one "$c" "$WORK/$c.ms"; done
	done
}

# probe ARRAY-NAME...: each command works here, else say why and stop.
probe() {
	local c
	for c in "$@"; do
		declare -n cmd=$c
		if ! "${cmd[@]}" >"$WORK/probe.log" 2>&1; then
			echo "startup.sh: this does not work here: ${cmd[*]}" >&2
			cat "$WORK/probe.log" >&2
			exit 1
		fi
		unset -n cmd
	done
}

# ---- the --net public row, run by the copy of this script inside the empty namespace ----
if [ -n "$PUBLIC_ROW" ]; then
	[ "${BOXY_TESTNET_INSIDE:-}" = 1 ] || { echo "startup.sh: --public-row is internal" >&2; exit 2; }
	# Hermetic: nothing here but lo.
	if ip -o link show | grep -v ': lo:' | grep -q .; then
		echo "startup.sh: the namespace for the public row has an interface besides lo" >&2
		exit 99
	fi
	ip link set lo up
	# Back to the user's own uid for everything measured (tn_user's mapping).
	PUB_BOXY=(tn_user env XDG_RUNTIME_DIR="$WORK/run" XDG_STATE_HOME="$WORK/state" HOME="$HOME"
		"${PUBLIC_CMD[@]}")
	PUB_SLIRP=(tn_user bash -c "$(declare -f bwrap_slirp); $(declare -p BWRAP_ARGS WORK); bwrap_slirp")
	chmod 0777 "$WORK" "$WORK/project" "$WORK/state"
	chmod 0700 "$WORK/run"
	chown "$BOXY_TESTNET_UID:$BOXY_TESTNET_GID" "$WORK/run" "$WORK/state" 2>/dev/null
	if [ -n "${BOXY_BENCH_VS:-}" ]; then
		# --vs: the other build's public run too, with a daemon of its own, in turn.
		PUB_VS=(tn_user env XDG_RUNTIME_DIR="$WORK/run-vs" XDG_STATE_HOME="$WORK/state-vs"
			HOME="$HOME" "$BOXY_BENCH_VS/boxy" run --net public -- /bin/true)
		chmod 0777 "$WORK/state-vs"
		chown "$BOXY_TESTNET_UID:$BOXY_TESTNET_GID" "$WORK/run-vs" "$WORK/state-vs" 2>/dev/null
		probe PUB_BOXY PUB_VS PUB_SLIRP
		interleave "$RUNS" PUB_BOXY PUB_VS PUB_SLIRP
		echo "$(median "$WORK/PUB_BOXY.ms") $(median "$WORK/PUB_SLIRP.ms")" \
			"$(median "$WORK/PUB_VS.ms")" >"$BOXY_BENCH_OUT"
		tn_user env XDG_RUNTIME_DIR="$WORK/run-vs" XDG_STATE_HOME="$WORK/state-vs" \
			"$BOXY_BENCH_VS/boxy" daemon stop >/dev/null 2>&1
	else
		probe PUB_BOXY PUB_SLIRP
		interleave "$RUNS" PUB_BOXY PUB_SLIRP
		echo "$(median "$WORK/PUB_BOXY.ms") $(median "$WORK/PUB_SLIRP.ms")" >"$BOXY_BENCH_OUT"
	fi
	tn_user env XDG_RUNTIME_DIR="$WORK/run" XDG_STATE_HOME="$WORK/state" "$BOXY" daemon stop \
		>/dev/null 2>&1
	exit 0
fi

# ---- --vs DIR: this build against another one ----------------------------------------------
# Each row of ONLY with three commands in turn run by run (boxy, DIR's boxy with a
# daemon of its own, bwrap; bwrap + slirp4netns for the public row, in its empty
# namespace), so drift hits all alike.
want() { case " $ONLY " in *" $1 "*) return 0 ;; esac; return 1; }
if [ -n "$VS" ]; then
	VS_ENV=(env XDG_RUNTIME_DIR="$WORK/run-vs" XDG_STATE_HOME="$WORK/state-vs")
	VS_CMD=("${VS_ENV[@]}" "$VS/boxy" run --net none -- /bin/true)
	VS_ALONE=("${VS_ENV[@]}" "$VS/boxy" run --no-daemon --net none -- /bin/true)
	PAR_VS=(parallel vs "${VS_CMD[@]}")
	probe BOXY_CMD BWRAP_CMD
	"${VS_CMD[@]}" >/dev/null 2>&1 || { echo "startup.sh: $VS/boxy does not run here" >&2; exit 1; }
	echo "startup of /bin/true as $(id -un) (date +%s%N, interleaved after 3 warm-up rounds)," \
		"load average $(cut -d' ' -f1-3 /proc/loadavg) at the start; medians:"
	# vs_row LABEL N DIV BOXY VS BWRAP: N rounds of the three in turn, medians / DIV.
	vs_row() {
		local b v w
		interleave "$2" "$4" "$5" "$6"
		b=$(awk -v t="$(median "$WORK/$4.ms")" -v d="$3" 'BEGIN { printf "%.2f", t / d }')
		v=$(awk -v t="$(median "$WORK/$5.ms")" -v d="$3" 'BEGIN { printf "%.2f", t / d }')
		w=$(awk -v t="$(median "$WORK/$6.ms")" -v d="$3" 'BEGIN { printf "%.2f", t / d }')
		printf '  %-36s boxy %8s ms   vs %8s ms   bwrap %8s ms   ' "$1" "$b" "$v" "$w"
		awk -v b="$b" -v v="$v" -v w="$w" 'BEGIN {
			printf "boxy/bwrap %.2f   vs/bwrap %.2f   boxy/vs %.2f\n", b / w, v / w, b / v }'
	}
	want daemon && vs_row "run --net none (warm daemon)" "$RUNS" 1 BOXY_CMD VS_CMD BWRAP_CMD
	want alone && vs_row "run --no-daemon --net none" "$RUNS" 1 ALONE_CMD VS_ALONE BWRAP_CMD
	want parallel && vs_row "$PAR at once (each)" "$PRUNS" "$PAR" PAR_BOXY PAR_VS PAR_BWRAP
	if want public; then
		# In a copy of this script inside a fresh, empty network namespace, as in the table.
		export BOXY_BENCH_OUT=$WORK/public.out BOXY_BENCH_RUNS=$RUNS BOXY_BENCH_VS=$VS
		(testnet_enter "$0" --public-row) >&2 || echo "startup.sh: the --net public row failed" >&2
		if [ -s "$WORK/public.out" ]; then
			read -r b w v <"$WORK/public.out"
			printf '  %-36s boxy %8.2f ms   vs %8.2f ms   slirp %8.2f ms   ' \
				"run --net public" "$b" "$v" "$w"
			awk -v b="$b" -v v="$v" -v w="$w" 'BEGIN {
				printf "boxy/slirp %.2f   vs/slirp %.2f   boxy/vs %.2f\n", b / w, v / w, b / v }'
		fi
	fi
	echo "  (boxy: $BOXY; vs: $VS/boxy; load average at the end $(cut -d' ' -f1-3 /proc/loadavg))"
	exit 0
fi

# ---- the table --------------------------------------------------------------------------
LOAD_START=$(cut -d' ' -f1-3 /proc/loadavg)
declare -A ROW_B ROW_P
if want daemon; then
	probe BOXY_CMD BWRAP_CMD
	interleave "$RUNS" BOXY_CMD BWRAP_CMD
	ROW_B[daemon]=$(median "$WORK/BOXY_CMD.ms"); ROW_P[daemon]=$(median "$WORK/BWRAP_CMD.ms")
fi
if want alone; then
	probe ALONE_CMD BWRAP_CMD
	interleave "$RUNS" ALONE_CMD BWRAP_CMD
	ROW_B[alone]=$(median "$WORK/ALONE_CMD.ms"); ROW_P[alone]=$(median "$WORK/BWRAP_CMD.ms")
fi
if want parallel; then
	probe BOXY_CMD
	interleave "$PRUNS" PAR_BOXY PAR_BWRAP
	ROW_B[parallel]=$(awk -v t="$(median "$WORK/PAR_BOXY.ms")" -v n=$PAR 'BEGIN { printf "%.2f", t / n }')
	ROW_P[parallel]=$(awk -v t="$(median "$WORK/PAR_BWRAP.ms")" -v n=$PAR 'BEGIN { printf "%.2f", t / n }')
fi
if want public; then
	# The row runs in a copy of this script inside a fresh, empty network namespace.
	export BOXY_BENCH_OUT=$WORK/public.out BOXY_BENCH_RUNS=$RUNS
	(testnet_enter "$0" --public-row) >&2 || echo "startup.sh: the --net public row failed" >&2
	if [ -s "$WORK/public.out" ]; then
		read -r ROW_B[public] ROW_P[public] <"$WORK/public.out"
	fi
fi

echo "boxy startup bench — $(date -u '+%Y-%m-%d %H:%M UTC'), $(nproc) CPUs, as $(id -un)," \
	"load average $LOAD_START at the start, $(cut -d' ' -f1-3 /proc/loadavg) at the end"
echo "medians of $RUNS interleaved runs each (the parallel row: $PRUNS rounds of $PAR at once," \
	"the time of a round divided by $PAR)"
printf '%-44s %10s %-24s %10s %8s  %s\n' row "boxy ms" peer "peer ms" ratio goal
# line KEY LABEL PEER GOAL-KIND GOAL-VALUE: kind ratio (boxy/peer <= v) or ms (boxy <= v ms).
line() {
	local b=${ROW_B[$1]:-} p=${ROW_P[$1]:-}
	[ -n "$b" ] || return 0
	awk -v b="$b" -v p="$p" -v l="$2" -v peer="$3" -v k="$4" -v g="$5" 'BEGIN {
		r = (p > 0) ? b / p : 0
		ok = (k == "ratio") ? (r <= g) : (b <= g)
		goal = (k == "ratio") ? sprintf("<= %.1fx: %s", g, ok ? "met" : "NOT met") \
				      : sprintf("<= %g ms each: %s", g, ok ? "met" : "NOT met")
		printf "%-44s %10.2f %-24s %10.2f %8.2f  %s\n", l, b, peer, p, r, goal }'
}
line daemon "boxy run --net none -- /bin/true (daemon)" "bwrap --unshare-all" ratio 1.5
line alone "boxy run --no-daemon --net none" "bwrap --unshare-all" ratio 1.3
line public "boxy run --net public -- /bin/true" "bwrap + slirp4netns" ratio 0.5
line parallel "$PAR started at once (each)" "$PAR bwraps at once" ms 6
