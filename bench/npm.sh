#!/bin/bash
# bench/npm.sh — the real job: `npm install` of a project with 159 packages (18 direct
# dependencies: express, yargs, glob, axios...; bench/npm-project/package.json) from a
# local registry inside the hermetic test network, timed on the host (no sandbox),
# under boxy (--profile node, public mode and allowlist mode) and under bwrap
# sharing the network, in the same run: each round runs every variant once, in an
# order that rotates, and the medians and their ratios are printed.
#
# The registry: bench/npm-registry.py serves package metadata and tarballs from a
# fixture directory on www.example.test:4873 (the test network's servers namespace).
# The fixture is filled once from the real registry — the only step that uses the
# network, run before the test network is entered, and skipped when the fixture is
# there: npm resolves the project's lock against registry.npmjs.org, then each
# package's metadata (cut to the locked versions) and its tarball are fetched, the
# tarballs checked against the lock's integrity. Nothing is committed but
# package.json; the fixture (~4 MB) stays in the directory below for the next run.
#
# Each install starts from nothing: a fresh copy of package.json, no lock, no
# node_modules, an empty npm cache of its own (--cache inside the project, for
# every variant alike: boxy's node profile would otherwise reuse its shared cache).
# A run counts only when npm says it added every package.
#
# Attribution's cost (doc/attribution.md): the variant noattr is boxy's public run with
# --no-attribution; `--only "boxy noattr"` pairs it with the default, round by round,
# and prints boxy/noattr for the install's time and for the daemon's own CPU time
# (user + system of every thread of `boxy daemon serve`, read from /proc around each
# install: the worker that reads the sandbox's /proc is a thread of the daemon).
# (Instruction counts are out of reach here: the VM exposes no hardware counters to perf, and
# valgrind 3.19 cannot run the daemon faithfully on this kernel: it does not know openat2 or
# Landlock's calls, so the daemon it runs behaves otherwise.)
#
#   bench/npm.sh [--runs N] [--fixture DIR] [--only "host boxy allow bwrap noattr"]
#       as root (re-runs as the test user, like the test suites) or as a user
#   --runs N        rounds (default 5)
#   --only "..."    run only these variants (the ratios need host, boxy and bwrap)
#   --fixture DIR   the registry's files (default /var/tmp/boxy-bench-npm)
#   BOXY_BUILDDIR=DIR   where boxy was built
set -u
RUNS=5
FIXTURE=/var/tmp/boxy-bench-npm
ONLY="host boxy allow bwrap"
LIMIT_S=${BOXY_NPM_LIMIT_S:-600}            # one install past this is a failure, not a wait
args=("$@")
while [ $# -gt 0 ]; do
	case $1 in
	--runs) RUNS=$2; shift 2 ;;
	--fixture) FIXTURE=$2; shift 2 ;;
	--only) ONLY=$2; shift 2 ;;
	*) echo "usage: bench/npm.sh [--runs N] [--fixture DIR] [--only \"VARIANT...\"]" >&2; exit 2 ;;
	esac
done
set -- "${args[@]}"
here=$(cd "$(dirname "$0")" && pwd)
. "$here/../tests/lib/harness.sh"
. "$here/../tests/lib/testnet.sh"
harness_locate
for t in npm node python3 bwrap; do
	command -v "$t" >/dev/null || { echo "npm.sh: $t is not installed" >&2; exit 2; }
done

# Fill the fixture (outside the test network: the only contact with the real registry).
if [ "${BOXY_TESTNET_INSIDE:-}" != 1 ] && [ ! -e "$FIXTURE/complete" ]; then
	echo "npm.sh: filling $FIXTURE from registry.npmjs.org (once)" >&2
	mkdir -p "$FIXTURE" || exit 2
	cp "$here/npm-project/package.json" "$FIXTURE/package.json"
	(cd "$FIXTURE" && npm install --package-lock-only --ignore-scripts --no-audit --no-fund \
		--registry https://registry.npmjs.org/ --cache "$FIXTURE/.fill-cache" >/dev/null) ||
		{ echo "npm.sh: npm could not resolve the project against the registry" >&2; exit 2; }
	python3 "$here/npm-registry.py" fill "$FIXTURE" >&2 || exit 2
	rm -rf "$FIXTURE/.fill-cache"
	chmod -R a+rX "$FIXTURE"
	: >"$FIXTURE/complete"
fi
[ -e "$FIXTURE/complete" ] || { echo "npm.sh: no fixture at $FIXTURE" >&2; exit 2; }
WANT=$(python3 -c 'import json,sys; print(sum(1 for k in json.load(open(sys.argv[1]))["packages"] if k))' \
	"$FIXTURE/package-lock.json")

[ "${BOXY_TESTNET_INSIDE:-}" = 1 ] || harness_as_test_user "$0" "$@"
[ -x "$BOXY" ] || { echo "npm.sh: no boxy at $BOXY (set BOXY_BUILDDIR)" >&2; exit 2; }
testnet_enter "$0" "$@"
testnet_setup

REG=http://www.example.test:4873/
tn_start npm-registry python3 "$here/npm-registry.py" serve "$FIXTURE" "$TN_HTTP" 4873 "$REG"
tn_wait_tcp "$TN_HTTP" 4873
testnet_check
OUT=$TN/npm
mkdir -p "$OUT" && chmod 0777 "$OUT"

NPM=(npm install --registry "$REG" --cache .npm-cache --no-audit --no-fund
	--no-update-notifier --loglevel=error)
# What boxy's profile gives npm, as far as bwrap can say it, the network shared.
bwrap_npm() {
	tn_user env HOME="$TN/home" bwrap --unshare-all --share-net --die-with-parent --new-session \
		--ro-bind /usr /usr --symlink usr/bin /bin --symlink usr/sbin /sbin \
		--symlink usr/lib /lib --symlink usr/lib64 /lib64 --ro-bind /etc /etc \
		--proc /proc --dev /dev --tmpfs /tmp --tmpfs "$TN/home" \
		--bind "$PWD" "$PWD" --chdir "$PWD" \
		--clearenv --setenv PATH /usr/bin:/bin --setenv HOME "$TN/home" "${NPM[@]}"
}
host_npm() { tn_user env HOME="$TN/home" "${NPM[@]}"; }
boxy_npm() { tn_boxy run --profile node -- "${NPM[@]}"; }
allow_npm() { tn_boxy run --profile node --allow-host www.example.test --allow-port 4873 -- "${NPM[@]}"; }
noattr_npm() { tn_boxy run --profile node --no-attribution -- "${NPM[@]}"; }
read -r -a VARIANTS <<<"$ONLY"
declare -A LABEL=([host]="host (no sandbox)" [boxy]="boxy --profile node (public)"
	[allow]="boxy --profile node --allow-host/port" [bwrap]="bwrap --share-net"
	[noattr]="boxy --profile node --no-attribution")
# The daemon's pid (its record) and CPU time in ms, every thread (utime + stime).
daemon_pid() { sed -n 's/^pid //p' "$TN/state/boxy/daemon.lock" 2>/dev/null | head -1; }
TICK=$(getconf CLK_TCK)
daemon_cpu_ms() {
	local p
	p=$(daemon_pid)
	[ -n "$p" ] && [ -r "/proc/$p/stat" ] || { echo 0; return; }
	awk -v t="$TICK" '{ print int(($14 + $15) * 1000 / t) }' "/proc/$p/stat"
}

# watchdog PID SECS: kill the install's subshell and its children after SECS seconds.
watchdog() {
	sleep "$2"
	pkill -KILL -P "$1" 2>/dev/null
	kill -KILL "$1" 2>/dev/null
}

# one VARIANT ROUND: a fresh project, one timed install; appends ms to $OUT/VARIANT.ms
one() {
	local v=$1 r=$2 p t0 t1 rc job dog
	p=$OUT/$v-$r
	mkdir -p "$p" && cp "$FIXTURE/package.json" "$p/" && chmod -R a+rwX "$p"
	c0=$(daemon_cpu_ms)
	t0=$(date +%s%N)
	(cd "$p" && "${v}_npm" >"$p.out" 2>&1 </dev/null) &
	job=$!
	watchdog "$job" "$LIMIT_S" </dev/null >/dev/null 2>&1 &
	dog=$!
	wait "$job"
	rc=$?
	pkill -P "$dog" 2>/dev/null     # its sleep, which would hold the bench's output open
	kill "$dog" 2>/dev/null
	t1=$(date +%s%N)
	if [ "$rc" -ne 0 ] || ! grep -q "added $WANT packages" "$p.out"; then
		echo "npm.sh: $v round $r failed (exit $rc):" >&2
		tail -5 "$p.out" >&2
		exit 1
	fi
	echo $(((t1 - t0) / 1000000)) >>"$OUT/$v.ms"
	c1=$(daemon_cpu_ms)
	# A daemon that changed meanwhile (or none): no figure rather than a wrong one.
	[ "$c0" -gt 0 ] && [ "$c1" -ge "$c0" ] && echo $((c1 - c0)) >>"$OUT/$v.cpu"
	rm -rf "$p"
}

tn_boxy run --net none -- true >/dev/null 2>&1       # the daemon up before the first round
for v in "${VARIANTS[@]}"; do one "$v" warmup; done
for v in "${VARIANTS[@]}"; do : >"$OUT/$v.ms"; : >"$OUT/$v.cpu"; done
for ((r = 0; r < RUNS; r++)); do
	n=${#VARIANTS[@]}
	for ((i = 0; i < n; i++)); do one "${VARIANTS[(i + r) % n]}" "$r"; done
done
testnet_check

median() { sort -n "$1" | awk '{ a[NR] = $1 } END { print (NR % 2) ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2 }'; }
spread() { sort -n "$1" | awk 'NR == 1 { lo = $1 } { hi = $1 } END { print lo "-" hi }'; }
echo "npm install of $WANT packages from a local registry, $RUNS rounds (order rotated)," \
	"$(date -u '+%Y-%m-%d %H:%M UTC'), $(nproc) CPUs, load average $(cut -d' ' -f1-3 /proc/loadavg); medians:"
for v in "${VARIANTS[@]}"; do
	printf '  %-40s %6s ms  (%s)' "${LABEL[$v]}" "$(median "$OUT/$v.ms")" "$(spread "$OUT/$v.ms")"
	case $v in
	boxy | allow | noattr)
		printf '   daemon CPU %s ms (%s)' "$(median "$OUT/$v.cpu")" "$(spread "$OUT/$v.cpu")" ;;
	esac
	echo
done
ratio() {
	[ -s "$OUT/$1.ms" ] && [ -s "$OUT/$2.ms" ] || return 0
	awk -v a="$(median "$OUT/$1.ms")" -v b="$(median "$OUT/$2.ms")" -v n="$3" \
		'BEGIN { printf "  %-28s %.3f\n", n, a / b }'
}
echo "ratios of the medians:"
ratio boxy host "boxy/host"
ratio allow host "boxy allowlist/host"
ratio bwrap host "bwrap/host"
ratio boxy bwrap "boxy/bwrap"
ratio boxy noattr "attribution (boxy/noattr)"
if [ -s "$OUT/boxy.cpu" ] && [ -s "$OUT/noattr.cpu" ]; then
	awk -v a="$(median "$OUT/boxy.cpu")" -v b="$(median "$OUT/noattr.cpu")" \
		'BEGIN { printf "  %-28s %.3f (%+d ms)\n", "daemon CPU (boxy/noattr)", b ? a / b : 0, a - b }'
fi
# Issue 12's goal, against the host measured in the same rounds.
if [ -s "$OUT/boxy.ms" ] && [ -s "$OUT/host.ms" ]; then
	awk -v a="$(median "$OUT/boxy.ms")" -v b="$(median "$OUT/host.ms")" 'BEGIN {
		printf "goal: boxy/host <= 1.03: %.3f, %s\n", a / b, (a / b <= 1.03) ? "met" : "NOT met" }'
fi
if [ -s "$OUT/allow.ms" ] && [ -s "$OUT/host.ms" ]; then
	awk -v a="$(median "$OUT/allow.ms")" -v b="$(median "$OUT/host.ms")" 'BEGIN {
		printf "      boxy allowlist/host <= 1.03: %.3f, %s\n", a / b,
			(a / b <= 1.03) ? "met" : "NOT met" }'
fi

