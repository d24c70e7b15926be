#!/bin/sh
# build.sh [--sanitizers] — bootstrap, configure and build boxy out of tree
# (build/ or build-asan/), doing only what is out of date. Prints the build dir.
set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
dir="$top/build"
flags=
if [ "${1:-}" = "--sanitizers" ]; then
	dir="$top/build-asan"
	flags="--enable-sanitizers"
fi
cd "$top"
if [ ! -x configure ] || [ configure.ac -nt configure ] || [ ! -f build-aux/tap-driver.sh ]; then
	echo "boxy: bootstrapping the build system" >&2
	sh tools/bootstrap.sh >/dev/null 2>&1 || sh tools/bootstrap.sh >&2
fi
mkdir -p "$dir"
cd "$dir"
if [ ! -f Makefile ] || [ "$top/configure" -nt Makefile ]; then
	echo "boxy: configuring in $dir" >&2
	# shellcheck disable=SC2086
	"$top/configure" -q $flags >&2
fi
echo "boxy: building" >&2
make -s -j"$(nproc)" >&2
echo "$dir"
