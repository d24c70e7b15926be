#!/bin/sh
# bootstrap.sh — regenerate the build system (configure, Makefile.in) from
# configure.ac and Makefile.am. automake does not install its TAP driver by
# itself, so it is copied from automake's own directory here.
set -eu
cd "$(dirname "$0")/.."
autoreconf -fi
am=$(automake --print-libdir)
cp -f "$am/tap-driver.sh" build-aux/tap-driver.sh
chmod +x build-aux/tap-driver.sh
