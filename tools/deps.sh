#!/bin/sh
# deps.sh — make sure the Debian packages boxy builds and tests with are
# installed. Installs what is missing when run as root; otherwise prints the
# apt-get line to run and fails. Idempotent: a machine that has everything
# is left untouched and nothing is downloaded.
set -eu

BUILD_PKGS="gcc make autoconf automake autopoint libtool gettext pkg-config
 libseccomp-dev libcap-dev libsqlite3-dev libncurses-dev libyaml-dev
 liblwip-dev libc-ares-dev libev-dev libcmocka-dev libsystemd-dev libssl-dev
 libnghttp2-dev"
TEST_PKGS="git python3 zsh fish sqlite3 iproute2 util-linux procps bsdutils tmux less vim-tiny curl openssl tshark
 bubblewrap hyperfine nghttp2-client nghttp2-server python3-h2 mitmproxy clang libclang-rt-14-dev llvm iperf3 wrk slirp4netns passt python3-pip
 locales"

want="$BUILD_PKGS"
[ "${1:-}" = "--test" ] && want="$BUILD_PKGS $TEST_PKGS"

missing=
for p in $want; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" ||
		missing="$missing $p"
done
# node and npm: any installation will do (a machine may carry a newer nodejs that
# ships npm itself, which Debian's npm package would conflict with).
if [ "${1:-}" = "--test" ] && ! { command -v node && command -v npm; } >/dev/null 2>&1; then
	missing="$missing nodejs npm"
fi
if [ -n "$missing" ]; then
	if [ "$(id -u)" -ne 0 ]; then
		echo "boxy: missing Debian packages:$missing" >&2
		echo "boxy: install them with: sudo apt-get install$missing" >&2
		exit 1
	fi
	echo "boxy: installing Debian packages:$missing" >&2
	export DEBIAN_FRONTEND=noninteractive
	apt-get update -qq >/dev/null
	# shellcheck disable=SC2086
	apt-get install -y -qq --no-install-recommends $missing >/dev/null
fi

# tests/e2e/i18n.sh runs boxy under LANG=de_DE.UTF-8: that locale must exist.
if [ "${1:-}" = "--test" ] && ! locale -a 2>/dev/null | grep -qix 'de_DE\.utf-\?8'; then
	if [ "$(id -u)" -ne 0 ]; then
		echo "boxy: the de_DE.UTF-8 locale is missing: enable it in /etc/locale.gen, run locale-gen" >&2
		exit 1
	fi
	echo "boxy: generating the de_DE.UTF-8 locale (/etc/locale.gen, locale-gen)" >&2
	sed -i 's/^# *\(de_DE\.UTF-8 UTF-8\)$/\1/' /etc/locale.gen 2>/dev/null
	grep -qx 'de_DE\.UTF-8 UTF-8' /etc/locale.gen 2>/dev/null ||
		echo 'de_DE.UTF-8 UTF-8' >>/etc/locale.gen
	locale-gen >/dev/null
fi
