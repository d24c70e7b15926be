#!/bin/sh
# run-fuzz.sh — build boxy's libFuzzer targets with clang and run each for a
# bounded time on a scratch copy of its seed corpus; the result is TAP, one
# line per target. `make check` runs it (5 s per target); by hand:
#
#   tests/fuzz/run-fuzz.sh [SECONDS]      (default $BOXY_FUZZ_SECS, else 5)
#
# Environment: BOXY_FUZZ_SECS (seconds per target), FUZZ_TARGETS (default
# "dns sni http httpreq httprule frame termfilter msgrun request msg plan verify alpn h2req
# httpresp attrib tripwire"), FUZZ_CC (default clang), FUZZ_WORK (build/scratch
# directory, kept; default a fresh mktemp -d, removed afterwards unless a
# target failed). The project's CC and CFLAGS are deliberately not read: the
# targets always get clang's -fsanitize=fuzzer,address,undefined, whatever
# compiler and sanitizers boxy itself was configured with, and nothing is
# written to the source or build tree.
#
# Every source file is compiled once and shared by the targets that need it.
# Compiling and fuzzing each go two at a time: on a 2-core machine that halves
# this suite's wall time and costs the parallel `make -j2 check` no more CPU
# than running one after another. A missing clang or libFuzzer runtime is a
# failure naming the Debian package, never a skip. A crash leaves its input in
# the work directory, printed with the log's tail. See doc/fuzzing.md.
set -u

secs=${1:-${BOXY_FUZZ_SECS:-5}}
case $secs in ''|*[!0-9]*|0) echo "usage: $0 [SECONDS]" >&2; exit 2;; esac

here=$(cd "$(dirname "$0")" && pwd)
src=$(cd "$here/../../src" && pwd)
cc=${FUZZ_CC:-clang}
targets=${FUZZ_TARGETS:-dns sni http httpreq httprule frame termfilter msgrun request msg plan verify alpn h2req httpresp attrib tripwire}
keep=0
if [ -n "${FUZZ_WORK:-}" ]; then
	work=$FUZZ_WORK
	mkdir -p "$work" || exit 1
	keep=1
else
	work=$(mktemp -d "${TMPDIR:-/tmp}/boxy-fuzz.XXXXXX") || exit 1
fi
trap '[ "$keep" = 1 ] || rm -rf "$work"' EXIT
trap 'exit 130' INT TERM HUP

## ---- TAP ------------------------------------------------------------------------
n=0
failed=0
# tap_line STATUS DESC: one numbered TAP line ("ok" or "not ok").
tap_line() {
	n=$((n + 1))
	[ "$1" = ok ] || failed=$((failed + 1))
	echo "$1 $n - $2"
}
# diag FILE [LINES]: the last LINES (30) lines of FILE as TAP comments.
diag() { [ -s "$1" ] && tail -n "${2:-30}" "$1" | sed 's/^/#   | /'; return 0; }
# diag_report LOG: a fuzzer's report as TAP comments, from its first error line
# (sanitizer, UBSan or libFuzzer's own), less ASan's shadow-memory dump.
diag_report() {
	start='ERROR: |runtime error: |deadly signal|==[0-9]+=='
	noise='^ *(Shadow|Addressable|Partially|Heap (left|right)|Freed|Stack|Global|Poisoned'
	noise="$noise|Container|Array|Intra|ASan internal|Left alloca|Right alloca)"
	noise="$noise|^ *0x[0-9a-f]+: |^=>|in fuzzer::|in __libc_start|in _start |in main "
	from=$(grep -n -E "$start" "$1" | head -n 1 | cut -d: -f1)
	tail -n +"${from:-1}" "$1" | grep -v -E "$noise" | head -n 40 | sed 's/^/#   | /'
}
# finish: the plan, then exit non-zero (keeping the work directory) on a failure.
finish() {
	echo "1..$n"
	if [ "$failed" -gt 0 ]; then
		keep=1
		echo "# work directory kept: $work"
		exit 1
	fi
	exit 0
}

## ---- the targets -------------------------------------------------------------------
# srcs_of T: the sources target T links besides fuzz-T.c. frame is boxy-net's
# gateway with what it links (as tests/unit/test-net-gw does, less lwIP/libev).
srcs_of() {
	case $1 in
	dns)   echo "parse/dns common/netaddr" ;;
	sni)   echo "parse/sni parse/dns common/netaddr" ;;
	http)  echo "parse/http parse/dns common/netaddr" ;;
	httpreq) echo "parse/http-req parse/http parse/dns common/netaddr" ;;
	httprule) echo "policy/http-rules spec/http-rule spec/values spec/runspec" \
		"common/path-guard common/buf common/util" ;;
	frame) echo "net/gw net/flow net/frame net/name net/lwip net/tcp net/udp net/dns" \
		"net/broker-msg net/pcap net/http-gate net/tls net/h2 parse/sni parse/http" \
		"parse/http-req parse/http-resp parse/alpn parse/h2req parse/dns parse/tripwire" \
		"policy/http-rules spec/http-rule spec/values spec/runspec common/path-guard common/json" \
		"common/netaddr common/tlsca proto/netproto proto/msg proto/wire common/buf" \
		"common/util" ;;
	alpn)  echo "parse/alpn parse/sni parse/dns common/netaddr" ;;
	h2req) echo "parse/h2req" ;;
	httpresp) echo "parse/http-resp" ;;
	termfilter) echo "client/termfilter" ;;
	msgrun) echo "proto/msg-run proto/wire spec/options spec/values spec/runspec" \
		"spec/http-rule common/path-guard common/json common/buf common/util" ;;
	request) echo "proto/daemon-msg proto/wire common/buf common/util" ;;
	msg)   echo "proto/msg proto/outq proto/wire common/buf common/util" ;;
	plan)  echo "init/plan proto/wire common/buf common/util parse/dns common/netaddr" ;;
	verify) echo "cli/verify common/chain common/sign common/util common/json common/buf" ;;
	attrib) echo "sandbox/attrib-proc common/netaddr common/util" ;;
	tripwire) echo "parse/tripwire proto/netproto proto/wire common/buf common/util" \
		"common/netaddr" ;;
	*)     return 1 ;;
	esac
}
# max_of T: the longest input worth trying, a bit over what the parser accepts.
max_of() {
	case $1 in
	dns) echo 4096 ;; sni) echo 20000 ;; http) echo 9000 ;; frame) echo 16384 ;;
	httpreq) echo 20000 ;; httprule) echo 2048 ;;
	termfilter) echo 4096 ;; msgrun) echo 8192 ;; request) echo 256 ;; msg) echo 8192 ;;
	plan) echo 16384 ;; alpn) echo 512 ;; h2req) echo 2048 ;; httpresp) echo 16384 ;;
	verify) echo 65536 ;;
	attrib) echo 8192 ;;
	tripwire) echo 16384 ;;
	esac
}
for t in $targets; do
	srcs_of "$t" > /dev/null || { echo "$0: unknown target $t" >&2; exit 2; }
done

## ---- the toolchain -----------------------------------------------------------------
# clang, and libFuzzer with the sanitizer runtimes, which Debian ships apart
# from clang (libclang-rt-<version>-dev): probed while the first objects build.
if ! command -v "$cc" > /dev/null 2>&1; then
	tap_line "not ok" \
		"fuzz toolchain: $cc not found; install clang and libclang-rt-14-dev (tools/deps.sh --test)"
	finish
fi
case $("$cc" --version 2>/dev/null | head -n 1) in
*clang*) rt=libclang-rt-$("$cc" -dumpversion | cut -d. -f1)-dev ;;
*)       rt="clang and libclang-rt-14-dev, or set FUZZ_CC to clang" ;;
esac
probe() {
	printf '%s\n' '#include <stddef.h>' '#include <stdint.h>' \
		'int LLVMFuzzerTestOneInput(const uint8_t *d, size_t n);' \
		'int LLVMFuzzerTestOneInput(const uint8_t *d, size_t n) { (void)d; (void)n; return 0; }' \
		> "$work/probe.c"
	"$cc" -fsanitize=fuzzer,address,undefined -o "$work/probe" "$work/probe.c" \
		> "$work/probe.log" 2>&1
}

# The parsers need nothing from config.h but the feature macros.
printf '#define _GNU_SOURCE 1\n' > "$work/config.h"
cflags="-g -O1 -fno-omit-frame-pointer -fsanitize=fuzzer-no-link,address,undefined"
cflags="$cflags -fno-sanitize-recover=undefined -I$work -I$src"
ldflags="-fsanitize=fuzzer,address,undefined"

# lwIP and libev, for the frame target only.
lwip_cflags=
lwip_libs=
case " $targets " in *" frame "*)
	if lwip_cflags=$(pkg-config --cflags lwip 2>/dev/null) &&
		lwip_libs=$(pkg-config --libs lwip 2>/dev/null); then
		lwip_libs="$lwip_libs -lev -lssl -lcrypto -lnghttp2"
	else
		lwip_libs=missing
	fi
esac

## ---- building ------------------------------------------------------------------------
# build_obj NAME: compile fuzz-NAME.c from here or src/NAME.c (NAME is
# ROOM/FILE) to $work/obj/ROOM_FILE.o once; its log is $work/obj/ROOM_FILE.log,
# and a failed build leaves no .o, so every target that needs it reports the failure.
obj_of() { echo "$work/obj/$(echo "$1" | tr / _)"; }
rm -rf "$work/obj"            # a kept FUZZ_WORK may hold objects of older sources
mkdir -p "$work/obj"
build_obj() {
	o=$(obj_of "$1")
	[ -f "$o.o" ] && return 0
	[ -f "$o.log" ] && return 1       # tried, and failed
	case $1 in fuzz-*) f=$here/$1.c ;; *) f=$src/$1.c ;; esac
	# shellcheck disable=SC2086
	"$cc" $cflags $lwip_cflags -c -o "$o.o" "$f" > "$o.log" 2>&1 ||
		{ rm -f "$o.o"; return 1; }
}

# Every object, in two lanes of about equal size (boxy-net's gateway is split
# by concern, so no one object dominates); the probe runs beside the first lane.
lane0='' lane1='' odd=0
all=$(for t in $targets; do echo "fuzz-$t"; srcs_of "$t"; done | tr ' ' '\n' | sort -u)
for o in $all; do
	if [ "$odd" = 0 ]; then
		lane0="$lane0 $o" odd=1
	else
		lane1="$lane1 $o" odd=0
	fi
done
for o in $lane0; do build_obj "$o"; done &
probe_ok=1
probe || probe_ok=0
for o in $lane1; do build_obj "$o"; done
wait
if [ "$probe_ok" = 0 ]; then
	tap_line "not ok" "fuzz toolchain: $cc cannot link libFuzzer; install $rt (tools/deps.sh --test)"
	diag "$work/probe.log" 10
	finish
fi

## ---- fuzzing ---------------------------------------------------------------------------
# fuzz_target T: link fuzz-T and run it for $secs on a scratch corpus seeded
# from the tree (which is never written). The verdict goes to $work/result-T:
# "ok DESC" or "not ok DESC" on the first line, TAP comments after it.
fuzz_target() {
	t=$1
	log=$work/fuzz-$t.log
	res=$work/result-$t
	: > "$log"
	if [ "$t" = frame ] && [ "$lwip_libs" = missing ]; then
		echo "not ok fuzz-$t: lwIP's pkg-config file not found; install liblwip-dev" > "$res"
		return
	fi
	objs="$work/obj/fuzz-$t.o"
	broken=
	build_obj "fuzz-$t" || broken="fuzz-$t"
	for s in $(srcs_of "$t"); do
		build_obj "$s" || broken="${broken:+$broken }$s"
		objs="$objs $(obj_of "$s").o"
	done
	if [ -n "$broken" ]; then
		echo "not ok fuzz-$t: does not compile ($broken)" > "$res"
		for b in $broken; do diag "$(obj_of "$b").log" 15; done >> "$res"
		return
	fi
	libs=
	[ "$t" = frame ] && libs=$lwip_libs
	[ "$t" = verify ] && libs=-lcrypto    # SHA-256 and ed25519 (libssl-dev)
	# shellcheck disable=SC2086
	if ! "$cc" $ldflags -o "$work/fuzz-$t" $objs $libs > "$log" 2>&1; then
		{ echo "not ok fuzz-$t: does not link"; diag "$log" 15; } > "$res"
		return
	fi

	# libFuzzer stops itself after $secs; timeout is only the safety net for
	# a run that wedges outside its control.
	limit=$((secs * 3 + 60))
	# (A corpus in FUZZ_WORK grows from run to run; old crashes are not ours.)
	rm -rf "$work/crash-$t"
	mkdir -p "$work/corpus-$t" "$work/crash-$t"
	seeds=$here/corpus/$t
	[ -d "$seeds" ] || seeds=
	rc=0
	# shellcheck disable=SC2086
	UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1} \
	timeout -k 5 "$limit" "$work/fuzz-$t" -max_total_time="$secs" \
		-max_len="$(max_of "$t")" -timeout=20 -rss_limit_mb=2048 -print_final_stats=1 \
		-artifact_prefix="$work/crash-$t/" "$work/corpus-$t" $seeds > "$log" 2>&1 || rc=$?
	runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -n 1)
	# libFuzzer looks at the clock once a second: say how long it really ran.
	took=$(sed -n 's/^Done [0-9]* runs in \([0-9]*\) second.*/\1/p' "$log" | tail -n 1)
	crash=$(find "$work/crash-$t" -type f 2>/dev/null | head -n 1)
	if [ "$rc" -eq 0 ] && [ -z "$crash" ] && [ "${runs:-0}" -gt 0 ]; then
		echo "ok fuzz-$t: $runs runs in ${took:-$secs} s, no crash" > "$res"
		return
	fi
	{
		if [ -n "$crash" ]; then
			echo "not ok fuzz-$t: crashed on $crash"
			echo "#   input (hex, first 256 bytes):" \
				"$(od -An -v -tx1 "$crash" | tr -d ' \n' | cut -c1-512)"
			diag_report "$log"
		elif [ "$rc" -eq 124 ] || [ "$rc" -eq 137 ]; then
			echo "not ok fuzz-$t: still running after $limit s, killed; see $log"
			diag "$log" 30
		else
			echo "not ok fuzz-$t: exit status $rc after ${runs:-0} runs; see $log"
			diag "$log" 30
		fi
	} > "$res"
}

# Two lanes again, each target's verdict printed in order afterwards.
# shellcheck disable=SC2086
set -- $targets
lane0='' lane1=''
i=0
for t in "$@"; do
	if [ $((i % 2)) = 0 ]; then lane0="$lane0 $t"; else lane1="$lane1 $t"; fi
	i=$((i + 1))
done
for t in $lane0; do fuzz_target "$t"; done &
for t in $lane1; do fuzz_target "$t"; done
wait
for t in "$@"; do
	res=$work/result-$t
	if [ ! -s "$res" ]; then
		tap_line "not ok" "fuzz-$t: no verdict (the run was interrupted)"
		continue
	fi
	first=$(head -n 1 "$res")
	case $first in
	"ok "*)     tap_line ok "${first#ok }" ;;
	*)          tap_line "not ok" "${first#not ok }" ;;
	esac
	tail -n +2 "$res"
done
finish
