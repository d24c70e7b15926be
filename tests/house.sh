#!/bin/bash
# tests/house.sh — the rules of the house, checked (doc/internals-map.md):
# the rooms of tools/rooms.txt and what each may include, no circle between
# rooms, no SQL outside store/, no curses outside ui/top.c, no lwIP outside
# src/net/, no YAML outside src/spec/profile-yaml.c, every source file in its
# room's section of Makefile.am, and the helpers' link sets: boxy-init and
# boxy-net carry no SQLite, YAML or curses, boxy-net needs only its own
# libraries, and boxy-init (exec'd for every sandbox) libc alone.
#
# Reads the source tree ($BOXY_SRCDIR) and the built programs ($BOXY_BUILDDIR);
# runs as whoever runs it (it reads files, it runs no sandbox).
set -u
src=${BOXY_SRCDIR:-$(cd "$(dirname "$0")/.." && pwd)}
build=${BOXY_BUILDDIR:-$src/build}
table=$src/tools/rooms.txt
n=0
failed=0

# report OK DESCRIPTION [DIAGNOSTIC-FILE]: one TAP line, the file's lines as comments.
report() {
	n=$((n + 1))
	if [ "$1" = 0 ]; then
		echo "ok $n - $2"
	else
		echo "not ok $n - $2"
		failed=1
		[ -n "${3:-}" ] && [ -s "$3" ] && sed 's/^/# /' "$3"
	fi
}

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# The table without comments: "room dir allowed..." per line.
grep -vE '^[[:space:]]*(#|$)' "$table" >"$tmp/rooms"
rooms=$(awk '{ print $1 }' "$tmp/rooms")
nrooms=$(wc -l <"$tmp/rooms")
# The room holding a path (relative to src), or nothing.
room_of() {
	awk -v p="$1" '{ d = $2 "/"; if (substr(p, 1, length(d)) == d) { print $1; exit } }' "$tmp/rooms"
}
# Every source file of the rooms, relative to src.
(cd "$src" && for d in $(awk '{ print $2 }' "$tmp/rooms"); do
	[ -d "$d" ] && find "$d" -type f \( -name '*.c' -o -name '*.h' \)
done) | sort >"$tmp/files"

echo "1..$((nrooms + 13))"

# ---- the table itself ---------------------------------------------------------
# Each room names only rooms above it, and its directory exists; every
# directory under src/ is a room.
awk '{ for (i = 3; i <= NF; i++) if ($i != "-" && !($i in seen))
		print $1 " may include " $i ", which is not above it in the table"
	seen[$1] = 1 }' "$tmp/rooms" >"$tmp/diag"
while read -r room dir _; do
	[ -d "$src/$dir" ] || echo "room $room: no directory $dir" >>"$tmp/diag"
done <"$tmp/rooms"
for d in "$src"/src/*/; do
	d=${d%/}
	d=src/${d##*/}
	awk -v d="$d" '$2 == d { found = 1 } END { exit !found }' "$tmp/rooms" ||
		echo "$d is in no room of tools/rooms.txt" >>"$tmp/diag"
done
report "$([ -s "$tmp/diag" ]; echo $((!$?)))" "tools/rooms.txt: rooms in dependency order, one per directory" "$tmp/diag"

# ---- includes ----------------------------------------------------------------
# "room file included": every #include "X/..." whose X is a room.
(cd "$src" && while read -r f; do
	from=$(room_of "$f")
	sed -nE 's/^[[:space:]]*#[[:space:]]*include[[:space:]]*"([^"/]+)\/[^"]+".*/\1 &/p' "$f" |
	while read -r to line; do
		echo "$rooms" | grep -qx "$to" && echo "$from $to $f: ${line#*#}"
	done
done <"$tmp/files") >"$tmp/includes"
while read -r room dir allowed; do
	awk -v r="$room" -v allowed=" $allowed " '$1 == r && $2 != r && index(allowed, " " $2 " ") == 0 {
		$1 = ""; $2 = ""; sub(/^  /, ""); print }' "$tmp/includes" >"$tmp/diag"
	report "$([ -s "$tmp/diag" ]; echo $((!$?)))" \
		"room $room ($dir) $( [ "$allowed" = - ] && echo "includes no other room" || echo "includes only $allowed")" "$tmp/diag"
done <"$tmp/rooms"

# No circle between rooms, whatever the table says: the rooms' include graph sorts.
awk '$1 != $2 { print $1, $2 }' "$tmp/includes" | sort -u >"$tmp/edges"
tsort "$tmp/edges" >/dev/null 2>"$tmp/loops"
rc=$?
if [ "$rc" != 0 ]; then
	# Each edge that lies on a circle: its target reaches its source again.
	while read -r a b; do
		seen=" $b "
		todo=$b
		while [ -n "$todo" ]; do
			next=
			for x in $todo; do
				for y in $(awk -v x="$x" '$1 == x { print $2 }' "$tmp/edges"); do
					case $seen in *" $y "*) ;; *) seen="$seen$y "; next="$next $y" ;; esac
				done
			done
			todo=$next
		done
		case $seen in *" $a "*) echo "$a -> $b is on a circle: $(awk -v a="$a" -v b="$b" \
			'$1 == a && $2 == b { $1 = ""; $2 = ""; sub(/^  /, ""); print; exit }' "$tmp/includes")" ;;
		esac
	done <"$tmp/edges" >"$tmp/diag"
else
	: >"$tmp/diag"
fi
report "$rc" "no circle between rooms" "$tmp/diag"

# ---- what only one room may touch --------------------------------------------
# SQL: the SQLite API, or SQL statements in string literals. The same detector
# must find the store's own SQL, or it finds nothing anywhere.
# src/cli/lazy-libs.c names the API without using it: its wrappers forward each
# call store/ makes to the library it opens at the first one (doc/daemon.md).
sql_in() {
	grep -nE '\bsqlite3(_[a-z0-9_]+)?\b|#[[:space:]]*include[[:space:]]*[<"]sqlite3\.h' \
		$(printf '%s\n' "$@" | grep -vx 'src/cli/lazy-libs.c')
	grep -noE '"([^"\\]|\\.)*"' "$@" | grep -E \
		-e '"[[:space:]]*(SELECT|INSERT|UPDATE|DELETE|REPLACE|CREATE|DROP|ALTER|PRAGMA|VACUUM|ATTACH|DETACH|BEGIN|COMMIT|ROLLBACK|SAVEPOINT|RELEASE|WITH)[[:space:]]' \
		-e '"[[:space:]]*(BEGIN|COMMIT|ROLLBACK|VACUUM)[;"]' \
		-e '\b(INSERT( OR [A-Z]+)? INTO|DELETE FROM|FROM [a-z_]+( [a-z])? WHERE|ORDER BY [a-z_]+|GROUP BY [a-z_]+|LEFT JOIN|CREATE (TEMP |UNIQUE )?(TABLE|VIEW|INDEX|TRIGGER))\b'
}
(cd "$src" && sql_in $(grep -v '^store/' "$tmp/files")) >"$tmp/diag"
rc=$([ -s "$tmp/diag" ]; echo $((!$?)))
if ! (cd "$src" && sql_in $(grep '^store/.*\.c$' "$tmp/files")) | grep -q .; then
	echo "the detector finds no SQL in store/ either: it is broken" >>"$tmp/diag"
	rc=1
fi
report "$rc" "no SQL outside store/ (SQLite calls, SQL in string literals)" "$tmp/diag"

# check_only_in DESCRIPTION ALLOWED-PATHS INCLUDED: no file outside the allowed
# paths (a regex) includes a header matching INCLUDED; the allowed ones do, or
# the detector is broken.
check_only_in() {
	local pattern="^[[:space:]]*#[[:space:]]*include[[:space:]]*[<\"]($3)" rc
	(cd "$src" && grep -nE "$pattern" $(grep -vE "$2" "$tmp/files")) >"$tmp/diag"
	rc=$([ -s "$tmp/diag" ]; echo $((!$?)))
	(cd "$src" && grep -nE "$pattern" $(grep -E "$2" "$tmp/files")) | grep -q . ||
		{ echo "$2 includes none either: the detector is broken" >>"$tmp/diag"; rc=1; }
	report "$rc" "$1" "$tmp/diag"
}
# src/cli/lazy-libs.c: the wrappers that open libncursesw at top's first call.
check_only_in "no curses include outside ui/top.c" '^(ui/top\.c|src/cli/lazy-libs\.c)$' \
	'n?curses(w)?/|n?curses\.h|term\.h|panel\.h|menu\.h|form\.h|termcap\.h'
check_only_in "no lwIP include outside src/net/ (boxy-net)" '^src/net/' '(lwip|netif|arch)/'
check_only_in "no YAML include outside src/spec/profile-yaml.c" '^src/spec/profile-yaml\.c$' 'yaml\.h'

# ---- Makefile.am ---------------------------------------------------------------
# Each file is listed in its room's library (libROOM_a_SOURCES) or in the
# sources of the program that room is the main of, and nowhere else (tests,
# benches and seccomp-gen, the build-time filter compiler, list what they need).
awk '{ line = line $0 } /\\$/ { sub(/\\$/, " ", line); next }
	{ if (match(line, /^[A-Za-z0-9_]+_SOURCES[[:space:]]*\+?=/)) {
		var = line; sub(/[[:space:]]*\+?=.*/, "", var); sub(/^nodist_/, "", var)
		rest = substr(line, RLENGTH + 1); n = split(rest, w, /[[:space:]]+/)
		for (i = 1; i <= n; i++) if (w[i] != "") print w[i], var }
	  line = "" }' "$src/Makefile.am" >"$tmp/listed"
while read -r f; do
	room=$(room_of "$f")
	case $room in
	cli) ok="libcli_a_SOURCES boxy_SOURCES" ;;
	ui) ok="libui_a_SOURCES boxy_SOURCES" ;;
	init) ok="libinit_a_SOURCES boxy_init_SOURCES" ;;
	net) ok="libnet_a_SOURCES boxy_net_SOURCES" ;;
	*) ok="lib${room}_a_SOURCES" ;;
	esac
	# A link-time hook (the sanitizer's options): linked by name into the programs
	# that lock themselves down, never through a library, so listed in each.
	once=1
	case $f in src/common/no-leak-check.c) ok="boxy_init_SOURCES boxy_net_SOURCES" once=0 ;; esac
	# seccomp-gen's main: the build-time filter compiler, in seccomp_gen_SOURCES alone.
	case $f in src/init/seccomp-gen.c)
		grep -q '^seccomp_gen_SOURCES = src/init/seccomp-gen.c' "$src/Makefile.am" ||
			echo "$f is not seccomp-gen's main in Makefile.am"
		continue ;;
	esac
	vars=$(awk -v f="$f" '$1 == f && $2 !~ /^(tests|bench|seccomp_gen)_/ { print $2 }' "$tmp/listed" | sort -u)
	if [ -z "$vars" ]; then
		echo "$f is not in Makefile.am (room $room: $ok)"
		continue
	fi
	for v in $vars; do
		case " $ok " in *" $v "*) ;; *) echo "$f is in $v, not its room's ($ok)" ;; esac
	done
	[ "$once" = 0 ] || [ "$(echo "$vars" | wc -l)" = 1 ] || echo "$f is listed twice: $(echo $vars)"
done <"$tmp/files" >"$tmp/diag"
report "$([ -s "$tmp/diag" ]; echo $((!$?)))" "Makefile.am lists every source file in its room's section" "$tmp/diag"

# ---- the helpers' link sets ----------------------------------------------------
# Symbols of the libraries each helper must never carry (nm of the program:
# its own and the ones it imports).
forbidden_syms() {
	nm -a "$1" 2>/dev/null | awk '{ print $NF }' | grep -E "$2" | sort -u | head -20
}
SQL_SYMS='^sqlite3_'
YAML_SYMS='^yaml_'
CURSES_SYMS='^(initscr|newterm|endwin|newwin|wrefresh|wnoutrefresh|doupdate|setupterm|tigetstr|keypad|start_color)$'
LWIP_SYMS='^(lwip_init|netif_add|pbuf_alloc|tcp_new|udp_new|ip_input|sys_check_timeouts)$'
CARES_SYMS='^ares_'
SYSTEMD_SYMS='^sd_(bus|journal)_'
# Libraries a sanitized build adds to every program.
SAN_LIBS='libasan|libubsan|liblsan|libstdc\+\+|libm|libgcc_s|libdl|libpthread|librt'

# check_program NAME FORBIDDEN-SYMBOLS EXPECTED-LIBS FORBIDDEN-LIBS
check_program() {
	local bin=$build/$1
	if [ ! -x "$bin" ]; then
		echo "$bin is not built" >"$tmp/diag"
		report 1 "$1 carries no symbols of the libraries it must not link" "$tmp/diag"
		report 1 "$1 needs only $3" "$tmp/diag"
		return
	fi
	forbidden_syms "$bin" "$2" >"$tmp/diag"
	report "$([ -s "$tmp/diag" ]; echo $((!$?)))" \
		"$1 carries no symbols of the libraries it must not link" "$tmp/diag"
	: >"$tmp/diag"
	readelf -d "$bin" | sed -nE 's/.*\(NEEDED\).*\[(.*)\]/\1/p' >"$tmp/needed"
	grep -vE "^(${3//|/|})\.so|^($SAN_LIBS)\.so|^libc\.so|^ld-linux" "$tmp/needed" |
		sed 's/^/NEEDED (not expected): /' >>"$tmp/diag"
	ldd "$bin" 2>/dev/null | awk '{ print $1 }' | grep -E "^($4)" |
		sed 's/^/ldd (forbidden, even indirectly): /' >>"$tmp/diag"
	report "$([ -s "$tmp/diag" ]; echo $((!$?)))" "$1 needs only ${3//|/, } (readelf, ldd)" "$tmp/diag"
}
# boxy-net: TLS inspection adds OpenSSL (libssl, libcrypto) and libnghttp2, deliberately
# (doc/http-inspection.md): they parse the sandbox's TLS and HTTP/2 inside its lockdown.
check_program boxy-net "$SQL_SYMS|$YAML_SYMS|$CURSES_SYMS" \
	'liblwip|libseccomp|libev|libssl|libcrypto|libnghttp2' 'libsqlite3|libyaml|libncurses|libtinfo'
# boxy-init is exec'd for every sandbox: libc alone (each library is loader time on every start).
check_program boxy-init "$SQL_SYMS|$YAML_SYMS|$CURSES_SYMS|$LWIP_SYMS|$CARES_SYMS|$SYSTEMD_SYMS" \
	'libc' 'libsqlite3|libyaml|libncurses|libtinfo|liblwip|libcares|libsystemd|libseccomp|libcrypto|libev'
# boxy opens libcrypto, libsystemd, libsqlite3 and libncursesw at their first call
# (src/cli/lazy-libs.c): linked, they and what they pull in were 2.2 ms of CPU at every start.
if [ -x "$build/boxy" ]; then
	ldd "$build/boxy" 2>/dev/null | awk '{ print $1 }' |
		grep -E '^(libcrypto|libsystemd|libsqlite3|libncursesw|libtinfo)' |
		sed 's/^/ldd (opened at first use, not linked): /' >"$tmp/diag"
else
	echo "$build/boxy is not built" >"$tmp/diag"
fi
report "$([ -s "$tmp/diag" ]; echo $((!$?)))" \
	"boxy does not link libcrypto, libsystemd, libsqlite3 or libncursesw (lazy-libs.c opens them)" \
	"$tmp/diag"
# boxy-init linked -static-pie where configure found it can be (INIT_LDFLAGS): no program
# interpreter, no loader at each sandbox's start.
: >"$tmp/diag"
if grep -q '^INIT_LDFLAGS = -static-pie' "$build/Makefile" 2>/dev/null &&
	readelf -l "$build/boxy-init" 2>/dev/null | grep -q 'INTERP'; then
	echo "configure chose -static-pie, yet boxy-init has a program interpreter" >"$tmp/diag"
fi
report "$([ -s "$tmp/diag" ]; echo $((!$?)))" \
	"boxy-init is static-pie when configure says it can be (no loader at each start)" "$tmp/diag"

exit "$failed"
