#!/bin/bash
# bench/daemon.sh — what the per-user daemon costs, in one run, as the
# unprivileged test user (the harness re-runs it as boxytest when started as
# root), against a private daemon (fresh XDG_RUNTIME_DIR/XDG_STATE_HOME):
#
#   1. start-up: warm-daemon `boxy run --net none -- /bin/true` against
#      `--no-daemon` (the sandbox assembled in-process) and bubblewrap, with
#      hyperfine when installed (else a timing loop); means and ratios.
#   2. events per second the bus pushes into the store with a watcher attached
#      (bench/bench-bus, the daemon's own bus and store code).
#   3. the daemon's VmRSS idle and with 20 sleeping sessions.
#
# Bounded: about a minute. BOXY_BENCH_RUNS sets the runs per command (30).

. "$(dirname "$0")/../tests/lib/harness.sh"
harness_as_test_user "$0" "$@"
harness_locate

RUNS=${BOXY_BENCH_RUNS:-30}
W=$(mktemp -d "${TMPDIR:-/tmp}/boxy-bench.XXXXXX") || exit 1
chmod 0700 "$W"
HARNESS_DIRS+=("$W")
export XDG_RUNTIME_DIR=$W/run XDG_STATE_HOME=$W/state
mkdir -m 0700 "$XDG_RUNTIME_DIR" "$XDG_STATE_HOME" "$W/work"
cd "$W/work" || exit 1
bench_cleanup() { "$BOXY" daemon stop >/dev/null 2>&1; harness_cleanup; }
trap bench_cleanup EXIT

echo "# boxy daemon bench — $(date -u '+%Y-%m-%d %H:%M UTC'), $(uname -r), $(nproc) CPUs,"\
	"$(sed -n 's/^model name\s*: //p' /proc/cpuinfo | head -1)"

## 1. start-up ------------------------------------------------------------------------
"$BOXY" run --net none -- /bin/true || { echo "boxy run does not work here"; exit 1; }
DAEMON="$BOXY run --net none -- /bin/true"
DIRECT="$BOXY run --no-daemon --net none -- /bin/true"
BWRAP="bwrap --ro-bind / / --dev /dev --proc /proc --tmpfs /tmp --unshare-all --die-with-parent /bin/true"
cmds=("$DAEMON" "$DIRECT")
names=("daemon (warm)" "--no-daemon")
if command -v bwrap >/dev/null && $BWRAP 2>/dev/null; then
	cmds+=("$BWRAP")
	names+=("bubblewrap")
fi
echo
echo "## boxy run --net none -- /bin/true ($RUNS runs each)"
means=()
if command -v hyperfine >/dev/null; then
	hyperfine -N --warmup 3 --runs "$RUNS" --export-json "$W/hf.json" "${cmds[@]}" \
		>"$W/hf.out" 2>&1 || { cat "$W/hf.out"; exit 1; }
	mapfile -t means < <(python3 -c '
import json, sys
for r in json.load(open(sys.argv[1]))["results"]:
    print("%.2f %.2f" % (r["mean"] * 1000, r["stddev"] * 1000))' "$W/hf.json")
else
	for c in "${cmds[@]}"; do
		t0=$(date +%s%N)
		for _ in $(seq "$RUNS"); do $c >/dev/null 2>&1; done
		means+=("$(awk -v t=$(($(date +%s%N) - t0)) -v n="$RUNS" 'BEGIN { printf "%.2f 0", t / n / 1e6 }')")
	done
fi
base=${means[1]%% *}
printf '%-16s %10s %8s %14s\n' "" "mean ms" "± ms" "vs --no-daemon"
for i in "${!cmds[@]}"; do
	m=${means[$i]%% *}
	sd=${means[$i]##* }
	printf '%-16s %10s %8s %13.2fx\n' "${names[$i]}" "$m" "$sd" "$(awk -v a="$m" -v b="$base" 'BEGIN { print a / b }')"
done

## 2. events per second into the store, with a watcher ------------------------------
echo
echo "## bus -> store with a watcher attached (bench/bench-bus)"
BB=$BOXY_BUILDDIR/bench/bench-bus
if [ -x "$BB" ]; then
	"$BB" "$W" 200000
else
	echo "bench/bench-bus is not built (make check builds it); skipped"
fi

## 3. daemon memory -----------------------------------------------------------------------
rss() { sed -n 's/^VmRSS:\s*//p' "/proc/$1/status"; }
PID=$("$BOXY" daemon status --json | sed -n 's/.*"pid":\([0-9]*\).*/\1/p')
echo
echo "## daemon VmRSS (pid $PID)"
echo "idle (after the runs above):  $(rss "$PID")"
ids=()
for i in $(seq 20); do ids+=("$("$BOXY" run -d --net none -- sleep 60)"); done
sleep 0.5
echo "with 20 sleeping sessions:    $(rss "$PID")"
for id in "${ids[@]}"; do "$BOXY" stop -k "$id" >/dev/null; done
sleep 0.5
echo "after they were killed:       $(rss "$PID")"
