#!/bin/sh
# run-fuzz.sh — build boxy's libFuzzer targets with clang and run each for a
# bounded time on a scratch copy of its seed corpus.
#
#   tests/fuzz/run-fuzz.sh [SECONDS]        (default 10 per target)
#
# Environment: CC (default clang), FUZZ_WORK (build/scratch directory,
# default a fresh mktemp -d, removed afterwards unless FUZZ_KEEP=1),
# FUZZ_TARGETS (default "dns sni http"). Exits non-zero if a target fails to
# build or finds a crash; the crashing input is left in FUZZ_WORK and its
# path printed. See doc/fuzzing.md for the long run.
set -eu

secs=${1:-10}
case $secs in ''|*[!0-9]*) echo "usage: $0 [SECONDS]" >&2; exit 2;; esac

here=$(cd "$(dirname "$0")" && pwd)
src=$(cd "$here/../../src" && pwd)
cc=${CC:-clang}
targets=${FUZZ_TARGETS:-dns sni http}
keep=${FUZZ_KEEP:-0}
if [ -n "${FUZZ_WORK:-}" ]; then
	work=$FUZZ_WORK
	mkdir -p "$work"
	keep=1
else
	work=$(mktemp -d "${TMPDIR:-/tmp}/boxy-fuzz.XXXXXX")
fi

# The parsers need nothing from config.h but the feature macros.
printf '#define _GNU_SOURCE 1\n' > "$work/config.h"

flags="-g -O1 -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined -I$work -I$src"
status=0
for t in $targets; do
	case $t in
	dns)  srcs="$src/net-dns.c $src/net-addr.c"; max=4096 ;;
	sni)  srcs="$src/net-sni.c $src/net-dns.c $src/net-addr.c"; max=20000 ;;
	http) srcs="$src/net-http.c $src/net-dns.c $src/net-addr.c"; max=9000 ;;
	*) echo "unknown target $t" >&2; exit 2 ;;
	esac
	echo "== fuzz-$t: building"
	# shellcheck disable=SC2086
	if ! $cc $flags -o "$work/fuzz-$t" "$here/fuzz-$t.c" $srcs; then
		echo "fuzz-$t: build failed (is clang with libFuzzer installed?)" >&2
		status=1
		continue
	fi
	mkdir -p "$work/corpus-$t" "$work/crash-$t"
	echo "== fuzz-$t: running ${secs}s"
	if ! "$work/fuzz-$t" -max_total_time="$secs" -max_len="$max" -timeout=10 \
		-rss_limit_mb=2048 -print_final_stats=1 \
		-artifact_prefix="$work/crash-$t/" \
		"$work/corpus-$t" "$here/corpus/$t" > "$work/fuzz-$t.log" 2>&1; then
		echo "fuzz-$t: FAILED, see $work/fuzz-$t.log and $work/crash-$t/" >&2
		tail -n 30 "$work/fuzz-$t.log" >&2
		status=1
		keep=1
		continue
	fi
	grep -E '^stat::number_of_executed_units|^Done' "$work/fuzz-$t.log" || true
done

if [ "$keep" = 1 ]; then
	echo "work directory kept: $work"
else
	rm -rf "$work"
fi
exit $status
