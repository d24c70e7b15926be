#!/bin/bash
# bench/startup.sh — how long `boxy run --net none -- /bin/true` takes, against
# bubblewrap building the equivalent sandbox in the same run.
#
# Runs as the unprivileged test user (when started as root, through the same
# re-exec as the test suites: tests/lib/harness.sh), because that is who boxy
# is for and bwrap needs no privilege either. Uses hyperfine when installed,
# else a loop timed with date +%s%N. Prints both means and boxy/bwrap = X.XX.
#
#   BOXY_BENCH_RUNS=N    runs of each command (default 30)
#   BOXY_BENCH_LOOP=1    use the date loop even when hyperfine is installed
#   BOXY_BUILDDIR=DIR    where boxy was built (default: the cwd, else the source tree)
#   --vs DIR             also time the boxy built in DIR (another commit: "before"),
#                        with a daemon of its own, the three commands in turn run by
#                        run (boxy, DIR's boxy, bwrap, boxy, ...), so drift hits all
#                        alike; prints the medians and boxy/DIR's boxy too

. "$(dirname "$0")/../tests/lib/harness.sh"
harness_as_test_user "$0" "$@"
harness_locate

RUNS=${BOXY_BENCH_RUNS:-30}
VS=
if [ "${1:-}" = "--vs" ] && [ -n "${2:-}" ]; then
	VS=$2
	[ -x "$VS/boxy" ] || { echo "startup.sh: no boxy in $VS" >&2; exit 2; }
fi
[ -x "$BOXY" ] || { echo "startup.sh: no boxy at $BOXY (set BOXY_BUILDDIR)" >&2; exit 2; }
command -v bwrap >/dev/null || { echo "startup.sh: bwrap is not installed (apt-get install bubblewrap)" >&2; exit 2; }

WORK=$(mktemp -d "${TMPDIR:-/tmp}/boxy-bench.XXXXXX") || exit 2
HARNESS_DIRS+=("$WORK")
mkdir -p "$WORK/run" "$WORK/project"
chmod 0700 "$WORK/run"
# A private runtime dir: the bench's own daemon, stopped at the end.
export XDG_RUNTIME_DIR=$WORK/run
mkdir -m 0700 "$WORK/run-vs" "$WORK/state-vs"
trap '"$BOXY" daemon stop >/dev/null 2>&1; [ -z "$VS" ] || XDG_RUNTIME_DIR=$WORK/run-vs XDG_STATE_HOME=$WORK/state-vs "$VS/boxy" daemon stop >/dev/null 2>&1; harness_cleanup' EXIT
cd "$WORK/project" || exit 2

BOXY_CMD=("$BOXY" run --net none -- /bin/true)
# What boxy --net none builds, as far as bwrap can say it: every namespace, a
# read-only /usr with the merged-usr links, fresh /proc, /dev, /tmp and $HOME,
# the work directory read-write, a new session, a cleared environment.
BWRAP_CMD=(bwrap --unshare-all --die-with-parent --new-session
	--ro-bind /usr /usr --symlink usr/bin /bin --symlink usr/sbin /sbin
	--symlink usr/lib /lib --symlink usr/lib64 /lib64
	--proc /proc --dev /dev --tmpfs /tmp --tmpfs "$HOME"
	--bind "$WORK/project" "$WORK/project" --chdir "$WORK/project"
	--clearenv --setenv PATH /usr/bin:/bin --setenv HOME "$HOME" /bin/true)

for c in BOXY_CMD BWRAP_CMD; do
	declare -n cmd=$c
	if ! "${cmd[@]}" >"$WORK/probe.log" 2>&1; then
		echo "startup.sh: this does not work here: ${cmd[*]}" >&2
		cat "$WORK/probe.log" >&2
		exit 1
	fi
done

if [ -n "$VS" ]; then
	VS_CMD=(env XDG_RUNTIME_DIR="$WORK/run-vs" XDG_STATE_HOME="$WORK/state-vs" "$VS/boxy" run --net none -- /bin/true)
	"${VS_CMD[@]}" >/dev/null 2>&1 || { echo "startup.sh: $VS/boxy does not run here" >&2; exit 1; }
	: >"$WORK/boxy.ms"; : >"$WORK/vs.ms"; : >"$WORK/bwrap.ms"
	# time_one ARRAY-NAME FILE: one run's wall time in ms (two decimals), appended to FILE.
	time_one() {
		declare -n cmd=$1
		local t0 t1
		t0=$(date +%s%N)
		"${cmd[@]}" >/dev/null 2>&1
		t1=$(date +%s%N)
		awk -v t=$((t1 - t0)) 'BEGIN { printf "%.2f\n", t / 1e6 }' >>"$2"
	}
	for i in 1 2 3; do "${BOXY_CMD[@]}"; "${VS_CMD[@]}"; "${BWRAP_CMD[@]}"; done >/dev/null 2>&1
	for ((i = 0; i < RUNS; i++)); do
		time_one BOXY_CMD "$WORK/boxy.ms"
		time_one VS_CMD "$WORK/vs.ms"
		time_one BWRAP_CMD "$WORK/bwrap.ms"
	done
	median() { sort -n "$1" | awk '{ a[NR] = $1 } END { print (NR % 2) ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2 }'; }
	B=$(median "$WORK/boxy.ms"); V=$(median "$WORK/vs.ms"); W=$(median "$WORK/bwrap.ms")
	echo "startup of /bin/true as $(id -un) (date +%s%N, $RUNS runs each in turn after 3 warm-up rounds), medians:"
	echo "  boxy run --net none   ${B} ms   ($BOXY)"
	echo "  boxy run --net none   ${V} ms   ($VS/boxy)"
	echo "  bwrap --unshare-all   ${W} ms"
	awk -v b="$B" -v v="$V" -v w="$W" 'BEGIN {
		printf "boxy/bwrap = %.2f   vs/bwrap = %.2f   boxy/vs = %.2f\n", b / w, v / w, b / v }'
	exit 0
fi

# quote ARGS...: one shell word per argument, for hyperfine's command strings.
quote() { printf '%q ' "$@"; }

if [ -z "${BOXY_BENCH_LOOP:-}" ] && command -v hyperfine >/dev/null && command -v python3 >/dev/null; then
	hyperfine -N --warmup 3 --runs "$RUNS" --export-json "$WORK/h.json" \
		-n boxy "$(quote "${BOXY_CMD[@]}")" -n bwrap "$(quote "${BWRAP_CMD[@]}")" >&2 ||
		exit 1
	read -r BOXY_MS BWRAP_MS < <(python3 -c '
import json, sys
r = {x["command"]: x["mean"] * 1000 for x in json.load(open(sys.argv[1]))["results"]}
print("%.2f %.2f" % (r["boxy"], r["bwrap"]))' "$WORK/h.json")
	HOW="hyperfine, $RUNS runs each after 3 warm-up runs"
else
	# mean_ms ARRAY-NAME: the mean wall time of RUNS runs, in ms (two decimals).
	mean_ms() {
		declare -n cmd=$1
		local i t0 t1 total=0
		for i in 1 2 3; do "${cmd[@]}" >/dev/null 2>&1; done
		for ((i = 0; i < RUNS; i++)); do
			t0=$(date +%s%N)
			"${cmd[@]}" >/dev/null 2>&1
			t1=$(date +%s%N)
			total=$((total + t1 - t0))
		done
		awk -v t="$total" -v n="$RUNS" 'BEGIN { printf "%.2f", t / n / 1e6 }'
	}
	BOXY_MS=$(mean_ms BOXY_CMD)
	BWRAP_MS=$(mean_ms BWRAP_CMD)
	HOW="date +%s%N loop, $RUNS runs each after 3 warm-up runs"
fi

echo "startup of /bin/true as $(id -un) ($HOW):"
echo "  boxy run --net none   mean ${BOXY_MS} ms"
echo "  bwrap --unshare-all   mean ${BWRAP_MS} ms"
awk -v a="$BOXY_MS" -v b="$BWRAP_MS" 'BEGIN { printf "boxy/bwrap = %.2f\n", a / b }'
