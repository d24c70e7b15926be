#!/bin/bash
# tests/mutate/run.sh — the mutation check: plant one plausible bug at a time in
# the security-critical code and see whether the tests named for it notice.
#
# Each mutant is a file tests/mutate/mutants/NAME.mut:
#
#   file: src/foo.c                     the file to mutate (relative to the top)
#   sed: s/if (x > MAX)/if (x > MAX + 1)/   one sed expression, matching exactly one line
#   tests: tests/unit/test-foo tests/escape/escape.sh   the make-check TESTS to run
#   why: one line on what the mutant breaks
#   only: REGEX                         optional: BOXY_ESCAPE_ONLY for the escape suite
#   equivalent: REASON                  optional: it cannot change behaviour; not run
#
# The tree (tracked and untracked files, not the ignored build output) is copied
# once into a scratch directory and built there; then, per mutant: the sed must
# change exactly one line (else "stale": the code moved on and the mutant must be
# refreshed), the mutated file is built incrementally, the listed tests run under
# a time bound, and the file is restored. A mutant is "killed" when a test fails,
# "survived" when all pass, "timeout" when the tests outlive the bound, "build"
# when the mutated code does not compile (not an interesting kill: excluded from
# the rate). Kill rate = killed / (killed + survived + timeout).
#
#   tests/mutate/run.sh [--min-rate PCT] [--timeout SECS] [--keep] [--allow-stale] [NAME...]
#
# Exits 1 below --min-rate (default 95), 3 when a mutant is stale (unless
# --allow-stale), 2 on a usage or set-up error. Run it as root, like
# ./run-tests.sh, so the sandbox suites run as the test user. See doc/testing.md.
set -u

top=$(cd "$(dirname "$0")/../.." && pwd)
min_rate=95
timeout_s=600
keep=
allow_stale=
names=()
while [ $# -gt 0 ]; do
	case $1 in
	--min-rate) min_rate=${2:?}; shift 2 ;;
	--timeout) timeout_s=${2:?}; shift 2 ;;
	--keep) keep=1; shift ;;
	--allow-stale) allow_stale=1; shift ;;
	-h|--help) sed -n '2,27p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
	-*) echo "run.sh: unknown option $1" >&2; exit 2 ;;
	*) names+=("$1"); shift ;;
	esac
done
case $min_rate$timeout_s in
*[!0-9]*) echo "run.sh: --min-rate and --timeout take whole numbers" >&2; exit 2 ;;
esac

mutdir=$top/tests/mutate/mutants
if [ ${#names[@]} -eq 0 ]; then
	for f in "$mutdir"/*.mut; do
		[ -e "$f" ] || continue
		n=${f##*/}
		names+=("${n%.mut}")
	done
fi
if [ ${#names[@]} -eq 0 ]; then
	echo "run.sh: no mutants in $mutdir" >&2
	exit 2
fi

# field FILE KEY: the value of "KEY: value" (first occurrence), leading blanks trimmed.
field() { sed -n "s/^$2:[[:space:]]*//p" "$1" | head -n 1; }

## ---- the scratch tree -----------------------------------------------------------
# 0755 so the test user can reach it (else the harness copies the build per suite).
work=$(mktemp -d /tmp/boxy-mutate.XXXXXX) || exit 2
chmod 0755 "$work"
cleanup() {
	if [ -n "$keep" ]; then
		echo "run.sh: kept $work" >&2
	else
		rm -rf "$work"
	fi
}
trap cleanup EXIT
trap 'exit 130' INT TERM

echo "run.sh: copying the tree into $work/src" >&2
mkdir "$work/src"
(cd "$top" && git ls-files -z --cached --others --exclude-standard |
	tar --null -T - -cf -) | tar -xf - -C "$work/src" || exit 2
src=$work/src
# From here on the mutants are read from the copy: editing them mid-run is safe.
mutdir=$src/tests/mutate/mutants
echo "run.sh: building the unmutated tree" >&2
build=$(sh "$src/tools/build.sh" 2>"$work/build.log") || {
	echo "run.sh: the unmutated tree does not build:" >&2
	tail -n 20 "$work/build.log" >&2
	exit 2
}
# Everything the tests need, built once, so a mutant costs only its own rebuild.
make -C "$build" -s -j"$(nproc)" check TESTS= >"$work/build.log" 2>&1 || {
	echo "run.sh: the unmutated test programs do not build:" >&2
	tail -n 20 "$work/build.log" >&2
	exit 2
}

## ---- one mutant ---------------------------------------------------------------------
killed=0 survived=0 timedout=0 broken=0 stale=0 equivalent=0
rows=()
row() { rows+=("$(printf '%-34s %-10s %s' "$1" "$2" "$3")"); }

for name in "${names[@]}"; do
	mut=$mutdir/$name.mut
	if [ ! -f "$mut" ]; then
		echo "run.sh: no mutant $name" >&2
		exit 2
	fi
	file=$(field "$mut" file) expr=$(field "$mut" sed) tests=$(field "$mut" tests)
	why=$(field "$mut" why) only=$(field "$mut" only) equiv=$(field "$mut" equivalent)
	if [ -z "$file" ] || [ -z "$expr" ] || [ -z "$tests" ] || [ -z "$why" ]; then
		echo "run.sh: $name: file, sed, tests and why are all required" >&2
		exit 2
	fi
	if [ -n "$equiv" ]; then
		equivalent=$((equivalent + 1))
		row "$name" equivalent "$equiv"
		continue
	fi
	target=$src/$file
	if [ ! -f "$target" ]; then
		stale=$((stale + 1))
		row "$name" stale "$file is gone"
		continue
	fi
	# The expression must change exactly one line.
	hits=$(sed -n "${expr}p" "$target" 2>/dev/null | wc -l)
	if [ "$hits" -ne 1 ]; then
		stale=$((stale + 1))
		row "$name" stale "sed changes $hits lines of $file"
		continue
	fi
	cp -p "$target" "$work/orig"
	sed -i "$expr" "$target"
	log=$work/$name.log
	status=
	if ! timeout "$timeout_s" make -C "$build" -s -j"$(nproc)" >"$log" 2>&1; then
		status=build
	else
		rc=0
		BOXY_ESCAPE_ONLY=$only timeout "$timeout_s" \
			make -C "$build" -s check TESTS="$tests" >>"$log" 2>&1 || rc=$?
		case $rc in
		0) status=survived ;;
		124) status=timeout ;;
		*) status=killed ;;
		esac
	fi
	# Restore with a fresh mtime, so the next build recompiles the original.
	cat "$work/orig" >"$target"
	case $status in
	killed) killed=$((killed + 1)) ;;
	survived) survived=$((survived + 1)) ;;
	timeout) timedout=$((timedout + 1)) ;;
	build) broken=$((broken + 1)) ;;
	esac
	row "$name" "$status" "$why"
	echo "run.sh: $name: $status" >&2
done
# Leave the build matching the source (for --keep).
make -C "$build" -s -j"$(nproc)" >/dev/null 2>&1

## ---- the table ----------------------------------------------------------------------
counted=$((killed + survived + timedout))
printf '%-34s %-10s %s\n' MUTANT RESULT WHY
printf '%s\n' "${rows[@]}"
if [ "$counted" -gt 0 ]; then
	rate=$((100 * killed / counted))
else
	rate=0
fi
echo "killed $killed, survived $survived, timeout $timedout (of $counted run);" \
	"build failures $broken, stale $stale, equivalent $equivalent"
echo "kill rate: $rate% (minimum $min_rate%)"
if [ "$stale" -gt 0 ] && [ -z "$allow_stale" ]; then
	echo "run.sh: $stale stale mutant(s): refresh their sed lines" >&2
	exit 3
fi
[ "$counted" -gt 0 ] && [ "$rate" -ge "$min_rate" ] || exit 1
exit 0
