#!/bin/bash
# i18n.sh — boxy speaks German from its catalogue, and only where people read
# (issue 16, "No translation"): every file with a marked string is in
# po/POTFILES.in; the template made from the sources as they are now leaves
# po/de.po nothing untranslated or fuzzy (a new _() string without a
# translation fails here); msgfmt -c accepts the catalogue (printf conversions,
# header, plural forms); make install puts it where the binary looks; a usage
# error and doctor's lines come out German under LANGUAGE=de and LANG=de_DE,
# English without; and --json output is the same in both languages.
#
# The binary reads its catalogue from the compiled-in LOCALEDIR only, so the
# catalogue is installed with DESTDIR and shown at LOCALEDIR in a private
# mount namespace (an overlay on the nearest existing parent): nothing on the
# host changes. Runs as root (unshare -m) or as a user (unshare -rm).

. "$(dirname "$0")/../lib/harness.sh"
harness_locate
SRC=$BOXY_SRCDIR
S=$(mktemp -d /tmp/boxy-i18n.XXXXXX) || harness_die "mktemp failed"
chmod 0755 "$S"
HARNESS_DIRS+=("$S")
DE_ENV=(LANGUAGE=de LANG=de_DE.UTF-8)
C_ENV=(LANG=C.UTF-8)

plan 14

missing=
for t in xgettext msgmerge msgfmt msgattrib gettext unshare; do
	command -v "$t" >/dev/null || missing="$missing $t"
done
[ -z "$missing" ] || harness_die "missing tools:$missing (tools/deps.sh --test)"


## ---- 1. every marked string reaches the template ------------------------------
unlisted=
while IFS= read -r f; do
	grep -qxF "$f" "$SRC/po/POTFILES.in" || unlisted="$unlisted $f"
done < <(cd "$SRC" && grep -rlE '(^|[^A-Za-z0-9_])(N?_|ngettext)\("' src ui store --include='*.c' --include='*.h' |
	grep -v '^src/common/gettext\.h$' | sort)
if [ -z "$unlisted" ]; then ok "every source file with _() or N_() is in po/POTFILES.in"
else not_ok "every source file with _() or N_() is in po/POTFILES.in"; diag "unlisted:$unlisted"; fi

## ---- 2. de.po covers the template of these sources ----------------------------
# The options po/Makevars gives xgettext, the files po/POTFILES.in lists.
opts=$(sed -n 's/^XGETTEXT_OPTIONS *= *//p' "$SRC/po/Makevars")
# shellcheck disable=SC2086
(cd "$SRC" && xgettext --default-domain=boxy --add-comments=TRANSLATORS: \
	--files-from=po/POTFILES.in $opts -o "$S/boxy.pot") 2>"$S/xgettext.err"
xrc=$?
msgmerge -q -o "$S/de.merged.po" "$SRC/po/de.po" "$S/boxy.pot" 2>"$S/msgmerge.err"
mrc=$?
stats=$(LC_ALL=C msgfmt --statistics -o /dev/null "$S/de.merged.po" 2>&1)
if [ "$xrc" = 0 ] && [ "$mrc" = 0 ] && echo "$stats" | grep -q '^[0-9]* translated messages\.$'
then ok "de.po translates every message of the template made now ($stats)"
else
	not_ok "de.po translates every message of the template made now"
	diag "$stats" "$(cat "$S/xgettext.err" "$S/msgmerge.err")"
	for kind in untranslated only-fuzzy; do
		msgattrib --"$kind" --no-wrap --no-obsolete "$S/de.merged.po" 2>/dev/null |
			sed -n 's/^msgid "\(..*\)"$/\1/p' | head -n 10 | sed "s/^/#   ${kind#only-}: /"
	done
fi

## ---- 3. the build's catalogue is the one of these sources -----------------------
# `make` (which make check has just run) keeps po/boxy.pot and the compiled
# catalogue current: a tree that had built before a message was added must
# not ship a binary catalogue without it (po/Makevars, stamp-pot).
msgids() { msgcat --no-wrap -o - "$@" 2>/dev/null | sed -n 's/^msgid "\(..*\)"$/\1/p' | sort -u; }
if [ "$xrc" = 0 ]; then
	msgids "$S/boxy.pot" >"$S/ids.now"
	msgids "$SRC/po/boxy.pot" >"$S/ids.built"
	LC_ALL=C msgunfmt "$SRC/po/de.gmo" 2>/dev/null | msgids - >"$S/ids.gmo"
fi
stale=$(comm -23 "$S/ids.now" "$S/ids.built" 2>/dev/null | head -n 5)
untr=$(comm -23 "$S/ids.now" "$S/ids.gmo" 2>/dev/null | head -n 5)
if [ "$xrc" = 0 ] && [ -s "$S/ids.now" ] && [ -z "$stale" ] && [ -z "$untr" ]
then ok "make kept po/boxy.pot and po/de.gmo current: every message of the sources is in both"
else not_ok "make kept po/boxy.pot and po/de.gmo current: every message of the sources is in both"
	diag "not in po/boxy.pot: ${stale:-none}" "not in po/de.gmo: ${untr:-none}"; fi

## ---- 4. msgfmt -c: conversions, header, plural forms ---------------------------
bad=
for l in $(sed 's/#.*//' "$SRC/po/LINGUAS"); do
	LC_ALL=C msgfmt -c -o "$S/$l.mo" "$SRC/po/$l.po" 2>"$S/msgfmt-$l.err" || bad="$bad $l"
	grep -q '^"Plural-Forms: nplurals=[0-9]*; plural=.*;\\n"$' "$SRC/po/$l.po" || bad="$bad $l(Plural-Forms)"
done
if [ -z "$bad" ] && grep -qx de <(sed 's/#.*//' "$SRC/po/LINGUAS" | tr -s ' \t' '\n')
then ok "msgfmt -c accepts every catalogue of po/LINGUAS (de among them)"
else not_ok "msgfmt -c accepts every catalogue of po/LINGUAS (de among them)"
	diag "failed:$bad"; diag_file "$S/msgfmt-de.err"; fi

## ---- 5. make install puts it where the binary looks ---------------------------
make -s -C "$BOXY_BUILDDIR/po" install DESTDIR="$S/inst" >"$S/install.log" 2>&1
mo=$(cd "$S/inst" 2>/dev/null && find . -path '*/de/LC_MESSAGES/boxy.mo' | head -n 1)
LOCALEDIR=${mo#.}
LOCALEDIR=${LOCALEDIR%/de/LC_MESSAGES/boxy.mo}
if [ -n "$mo" ] && grep -qaF "$LOCALEDIR" "$BOXY" &&
	msgunfmt "$S/inst/$mo" 2>/dev/null | grep -qF 'msgstr "Größe"'
then ok "make install: $LOCALEDIR/de/LC_MESSAGES/boxy.mo, the LOCALEDIR boxy was built with"
else not_ok "make install: LOCALEDIR/de/LC_MESSAGES/boxy.mo, the LOCALEDIR boxy was built with"
	diag_file "$S/install.log"; diag "installed: ${mo:-nothing}"; fi

# with_catalogue CMD...: CMD in a private mount namespace where LOCALEDIR holds
# the installed catalogue (an overlay on its nearest existing parent).
with_catalogue() {
	local a=$LOCALEDIR u=()
	[ -n "$a" ] || { echo "i18n.sh: no catalogue was installed" >&2; return 99; }
	while [ ! -d "$a" ]; do a=$(dirname "$a"); done
	[ "$(id -u)" = 0 ] || u=(-r)
	unshare "${u[@]}" -m bash -c '
		inst=$1 dir=$2 a=$3 t=$4; shift 4
		mkdir -p "$t" && mount -t tmpfs tmpfs "$t" && mkdir -p "$t/u${dir#"$a"}" "$t/w" &&
		cp -R "$inst$dir/." "$t/u${dir#"$a"}/" &&
		mount -t overlay overlay -o "lowerdir=$a,upperdir=$t/u,workdir=$t/w" "$a" ||
			{ echo "i18n.sh: cannot show the catalogue at $dir" >&2; exit 99; }
		exec "$@"' _ "$S/inst" "$LOCALEDIR" "$a" "$S/ns" "$@"
}

# boxy_env ENV... -- ARGS...: boxy where the catalogue is installed, with only
# ENV and scratch XDG directories, so the caller's locale and daemon play no part.
boxy_env() {
	local e=()
	while [ "$1" != -- ]; do e+=("$1"); shift; done
	shift
	with_catalogue env -i PATH=/usr/local/bin:/usr/bin:/bin HOME="$S/home" \
		XDG_RUNTIME_DIR="$S/run" XDG_STATE_HOME="$S/state" XDG_CONFIG_HOME="$S/config" \
		"${e[@]}" "$BOXY" "$@"
}
mkdir -p "$S/home"

if ! locale -a 2>/dev/null | grep -qix 'de_DE\.utf-\?8'; then
	diag "the de_DE.UTF-8 locale is not installed (tools/deps.sh --test generates it)"
fi

## ---- 6./7. a usage error in both languages -----------------------------------
boxy_env "${DE_ENV[@]}" -- run --memory lots -- true >/dev/null 2>"$S/de.err"
rc_de=$?
boxy_env LANG=de_DE.UTF-8 -- run --memory lots -- true >/dev/null 2>"$S/de-lang.err"
rc_lang=$?
# LANGUAGE alone over a C.UTF-8 locale (a container's usual one): German too.
boxy_env LANGUAGE=de LANG=C.UTF-8 -- run --memory lots -- true >/dev/null 2>"$S/de-language.err"
rc_language=$?
# shellcheck disable=SC1111  # the German quotes are the message
if [ "$rc_de" = 2 ] && [ "$rc_lang" = 2 ] && [ "$rc_language" = 2 ] &&
	cmp -s "$S/de.err" "$S/de-language.err" &&
	grep -qF "boxy run: --memory: Größe 'lots': erwartet wird eine Zahl, gefolgt von B" "$S/de.err" &&
	grep -qxF "„boxy run --help“ liefert weitere Informationen." "$S/de.err" &&
	cmp -s "$S/de.err" "$S/de-lang.err"
then ok "LANGUAGE=de (over de_DE.UTF-8, over C.UTF-8) and LANG=de_DE.UTF-8 alone: the usage error in German, exit 2"
else not_ok "LANGUAGE=de (over de_DE.UTF-8, over C.UTF-8) and LANG=de_DE.UTF-8 alone: the usage error in German, exit 2"
	diag "exit $rc_de, $rc_lang, $rc_language"; diag_file "$S/de.err"; diag_file "$S/de-lang.err"
	diag_file "$S/de-language.err"; fi

boxy_env "${C_ENV[@]}" -- run --memory lots -- true >/dev/null 2>"$S/c.err"
rc_c=$?
if [ "$rc_c" = 2 ] &&
	grep -qF "boxy run: --memory: size 'lots': expected a number followed by B" "$S/c.err" &&
	grep -qxF "Try 'boxy run --help'." "$S/c.err"
then ok "LANG=C.UTF-8 with the catalogue installed: the same error in English"
else not_ok "LANG=C.UTF-8 with the catalogue installed: the same error in English"
	diag "exit $rc_c"; diag_file "$S/c.err"; fi

## ---- 8.-11. the daemon answers each client in its language ---------------------
# One daemon serves clients of any language: each tells it its own (MSG_LANG),
# and what the daemon words for a client is worded in it, whoever started the
# daemon; what it records stays English. A German shell starts the daemon
# first, then an English one does.
daemon_stop() { boxy_env "${C_ENV[@]}" -- daemon stop >/dev/null 2>&1; }
trap 'daemon_stop; harness_cleanup' EXIT
mkdir -p "$S/work" && mkdir -m 0700 -p "$S/run"
chmod 0777 "$S/work"
for first in de c; do
	[ "$first" = de ] && FIRST=("${DE_ENV[@]}") || FIRST=("${C_ENV[@]}")
	# A detached run starts the daemon in the first shell's language.
	(cd "$S/work" && boxy_env "${FIRST[@]}" -- run -d --net none -- sleep 30) \
		>"$S/id.$first" 2>"$S/run.$first.err" </dev/null
	boxy_env "${DE_ENV[@]}" -- stop 0123abcd >/dev/null 2>"$S/stop-de.$first"
	boxy_env "${C_ENV[@]}" -- stop 0123abcd >/dev/null 2>"$S/stop-c.$first"
	boxy_env "${C_ENV[@]}" -- stop -k "$(tr -d '[:space:]' <"$S/id.$first")" >/dev/null 2>&1
	# The memory watchdog's kill: told to the German client in German, recorded in English.
	(cd "$S/work" && boxy_env "${DE_ENV[@]}" -- run --net none --memory 64MiB -- \
		python3 -c 'b = bytearray(400 << 20)') >/dev/null 2>"$S/kill.$first" </dev/null
	echo "rc=$?" >>"$S/kill.$first"
	boxy_env "${C_ENV[@]}" -- ps -a --json >"$S/ps.$first" 2>/dev/null
	kid=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))[0]["id"])' \
		"$S/ps.$first" 2>/dev/null)
	boxy_env "${DE_ENV[@]}" -- show --json "$kid" >"$S/show.$first" 2>/dev/null
	daemon_stop
done
# shellcheck disable=SC1111  # the German quotes are the message
for first in de c; do
	if grep -qF "boxy stop: keine laufende Sitzung „0123abcd“" "$S/stop-de.$first" &&
		grep -qF "boxy stop: no running session '0123abcd'" "$S/stop-c.$first"
	then ok "a daemon started in $first: German and English clients, each answered in its own"
	else not_ok "a daemon started in $first: German and English clients, each answered in its own"
		diag_file "$S/run.$first.err"; diag_file "$S/stop-de.$first"; diag_file "$S/stop-c.$first"; fi
	if grep -q '^rc=137$' "$S/kill.$first" &&
		grep -qF "boxy: Speichergrenze überschritten (Watchdog, Messungen alle 100 ms)" "$S/kill.$first" &&
		python3 - "$S/show.$first" <<'PY'
import json, sys
s = json.load(open(sys.argv[1]))
words = [d["reason"] for d in s["decisions"]] + [d["reason"] for d in s["denials"]]
assert any(w.startswith("memory limit exceeded (watchdog, 100 ms samples)") for w in words), words
assert not any("Speichergrenze" in w or "Messungen" in w for w in words), words
PY
	then ok "a daemon started in $first: the memory kill told in German, recorded in English"
	else not_ok "a daemon started in $first: the memory kill told in German, recorded in English"
		diag_file "$S/kill.$first"; diag_file "$S/show.$first" 3; fi
done

## ---- 12. doctor's lines in German ---------------------------------------------
# Every detail and note of the English report that is a whole message of the
# catalogue must appear, as its German msgstr, in the German text report.
boxy_env "${C_ENV[@]}" -- doctor --json >"$S/doctor-c.json" 2>/dev/null
boxy_env "${DE_ENV[@]}" -- doctor >"$S/doctor-de.txt" 2>&1
flat=$(tr -s ' \n' '  ' <"$S/doctor-de.txt")
python3 -c '
import json, sys
for c in json.load(open(sys.argv[1])):
    for s in [c["detail"]] + c["notes"]:
        print(s)' "$S/doctor-c.json" >"$S/doctor-strings" 2>"$S/doctor-py.err"
matched=0 wrong=
while IFS= read -r s; do
	# gettext(1) answers the msgstr of a whole message, the text itself otherwise.
	de=$(env -u LC_ALL "${DE_ENV[@]}" TEXTDOMAINDIR="$S/inst$LOCALEDIR" gettext -d boxy -- "$s")
	[ "$de" != "$s" ] || continue
	matched=$((matched + 1))
	case $flat in *"$(printf '%s' "$de" | tr -s ' ' ' ')"*) ;; *) wrong="$wrong|missing: $de" ;; esac
done <"$S/doctor-strings"
if [ "$matched" -gt 0 ] && [ -z "$wrong" ] && grep -q '^ [+!x] userns ' "$S/doctor-de.txt"
then ok "boxy doctor under LANGUAGE=de: its $matched catalogued lines in German"
else not_ok "boxy doctor under LANGUAGE=de: its catalogued lines in German"
	diag "matched $matched" "$(echo "$wrong" | tr '|' '\n')"; diag_file "$S/doctor-de.txt" 12
	diag_file "$S/doctor-py.err"; fi

## ---- 13./14. --json stays what doc/json.md says ----------------------------------
# The same bytes under LANGUAGE=de as in English, and valid JSON: keys, enum
# values and free text alike (a script greps .detail as well as .status).
differ=
for args in "doctor --json" "profile list --json" "profile show --json generic" \
	"daemon status --json" "top --json"; do
	f=$S/json-$(echo "$args" | tr -c 'a-z\n' '_')
	# shellcheck disable=SC2086
	boxy_env "${C_ENV[@]}" -- $args >"$f.c" 2>/dev/null </dev/null
	# shellcheck disable=SC2086
	boxy_env "${DE_ENV[@]}" -- $args >"$f.de" 2>/dev/null </dev/null
	if ! [ -s "$f.c" ] || ! cmp -s "$f.c" "$f.de" ||
		! python3 -c 'import json,sys; json.load(open(sys.argv[1]))' "$f.de" 2>/dev/null; then
		differ="$differ|$args: $(diff <(tr ',' '\n' <"$f.c") <(tr ',' '\n' <"$f.de") | grep '^>' | head -n 3 | tr '\n' ' ')"
	fi
done
if [ -z "$differ" ]; then ok "--json output under LANGUAGE=de: byte for byte the English one"
else not_ok "--json output under LANGUAGE=de: byte for byte the English one"
	diag "$(echo "$differ" | tr '|' '\n')"; fi

# The documented words themselves (doc/json.md): doctor's status values and check names.
if python3 - "$S/json-doctor___json.de" 2>/dev/null <<'PY'
import json, sys
checks = json.load(open(sys.argv[1]))
assert checks and all(c["status"] in ("ok", "warn", "fail") for c in checks)
assert {"kernel", "landlock", "seccomp", "userns"} <= {c["check"] for c in checks}
assert all(set(c) == {"check", "status", "detail", "notes"} for c in checks)
PY
then ok "doctor --json under LANGUAGE=de: the keys, checks and status words of doc/json.md"
else not_ok "doctor --json under LANGUAGE=de: the keys, checks and status words of doc/json.md"
	diag_file "$S/json-doctor___json.de" 5; fi

done_testing
