#!/bin/bash
# manpage.sh — boxy(1) as built (doc/boxy.1 from doc/boxy.1.in) says what
# this build does (issue 16, "The man page"): no placeholder or literal
# $(datadir) left, the date of the build, every subcommand in SYNOPSIS, every
# exit status of src/common/util.h in EXIT STATUS, every variable boxy reads (getenv
# in src/, store/, ui/, and the locale's) in ENVIRONMENT, the sandbox's own
# environment in a section of its own, SEE ALSO pointing at an installed
# docdir with every doc/*.md in it; and the pages per group: boxy-run(1)
# with every flag of `boxy run --help`, boxy-top(1) with its keys,
# boxy-profile(5) with every profile key of the option table.

. "$(dirname "$0")/../lib/harness.sh"
harness_locate
MAN=$BOXY_BUILDDIR/doc/boxy.1
[ -r "$MAN" ] || { echo "1..1"; echo "not ok 1 - $MAN was not built"; exit 1; }
SRC=$BOXY_SRCDIR

# section NAME: the roff source of one .SH section.
section() { awk -v n="$1" '/^\.SH/ { on = ($0 ~ "^\\.SH \"?" n "\"?$") ; next } on' "$MAN"; }

PAGES="$MAN $BOXY_BUILDDIR/doc/boxy-run.1 $BOXY_BUILDDIR/doc/boxy-top.1 $BOXY_BUILDDIR/doc/boxy-profile.5"

plan 14

# shellcheck disable=SC2086
if grep -n '@[a-zA-Z_]*@\|\$(datadir)\|\$(libexecdir)\|\$(prefix)' $PAGES >/dev/null; then
	not_ok "no placeholder left in the four pages"
	# shellcheck disable=SC2086
	grep -n '@[a-zA-Z_]*@\|\$(' $PAGES | head -3 | sed 's/^/# /'
else ok "no placeholder left in the four pages"; fi

if head -1 "$MAN" | grep -q '"[0-9]\{4\}-[0-9][0-9]-[0-9][0-9]"'; then ok "dated by the build"
else not_ok "dated by the build"; head -1 "$MAN" | sed 's/^/# /'; fi

missing=
for c in $("$BOXY" --help | sed -n 's/^  \([a-z][a-z]*\) .*/\1/p' | grep -vx boxy); do
	section SYNOPSIS | grep -q "^\.B boxy $c\b" || missing="$missing $c"
done
if [ -z "$missing" ]; then ok "every subcommand of boxy --help in SYNOPSIS"
else not_ok "every subcommand of boxy --help in SYNOPSIS"; diag "missing:$missing"; fi
twice=$(section SYNOPSIS | sed -n 's/^\.B boxy \([a-z][a-z]*\)\b.*/\1/p' | grep -v '^profile$' | sort | uniq -d)
if [ -z "$twice" ]; then ok "no subcommand twice in SYNOPSIS"
else not_ok "no subcommand twice in SYNOPSIS"; diag "twice: $twice"; fi

missing=
for v in $(sed -n 's/^#define EXIT_[A-Z_]* *\([0-9]*\).*/\1/p' "$SRC/src/common/util.h") 124 1; do
	section "EXIT STATUS" | grep -qw "$v" || missing="$missing $v"
done
if [ -z "$missing" ]; then ok "every exit status in EXIT STATUS"
else not_ok "every exit status in EXIT STATUS"; diag "missing:$missing"; fi

missing=
for v in $(grep -rhoE 'getenv\("[A-Z_]+"\)' "$SRC/src" "$SRC/store" "$SRC/ui" | sed 's/getenv("\(.*\)")/\1/' | sort -u); do
	section ENVIRONMENT | grep -qw "$v" || missing="$missing $v"
done
# ...and the locale's, which setlocale() reads for boxy.
for v in LANGUAGE LC_ALL LC_MESSAGES LANG; do
	section ENVIRONMENT | grep -qw "$v" || missing="$missing $v"
done
if [ -z "$missing" ]; then ok "every variable boxy reads in ENVIRONMENT"
else not_ok "every variable boxy reads in ENVIRONMENT"; diag "missing:$missing"; fi

if section "SANDBOX ENVIRONMENT" | grep -q SSH_AUTH_SOCK && ! section ENVIRONMENT | grep -q SSH_AUTH_SOCK
then ok "the sandbox's environment in its own section"
else not_ok "the sandbox's environment in its own section"; fi

DOCDIR=$(sed -n 's/^docdir = //p' "$BOXY_BUILDDIR/Makefile" | head -1)
if section "SEE ALSO" | grep -q "/share/doc/boxy/" && section FILES | grep -q "/libexec/boxy/boxy\\\\-init"
then ok "SEE ALSO and FILES name the installed paths"
else not_ok "SEE ALSO and FILES name the installed paths"; diag "docdir $DOCDIR"; fi

installed=$(sed -n '/^dist_doc_DATA/,/[^\\]$/p' "$SRC/Makefile.am")
missing=
for f in "$SRC"/doc/*.md; do
	echo "$installed" | grep -qw "doc/$(basename "$f")" || missing="$missing doc/$(basename "$f")"
done
for d in $(grep -ho '@docdir@/[a-z-]*\.md' "$SRC"/doc/*.in | sort -u); do
	[ -f "$SRC/doc/${d#@docdir@/}" ] || missing="$missing $d(named, no such file)"
done
if [ -z "$missing" ]; then ok "every doc/*.md installed to docdir, every one a page names exists"
else not_ok "every doc/*.md installed to docdir, every one a page names exists"; diag "missing:$missing"; fi

# The pages per group.
RUN1=$BOXY_BUILDDIR/doc/boxy-run.1
missing=
for f in $("$BOXY" run --help | grep -o -- '--[a-z][a-z-]*' | sort -u | grep -vx -- '--\|--help'); do
	grep -q -- "$(echo "$f" | sed 's/-/\\\\-/g')" "$RUN1" || missing="$missing $f"
done
if [ -s "$RUN1" ] && [ -z "$missing" ] && grep -q '^\.TH BOXY-RUN 1' "$RUN1" &&
	grep -q '^\.SH "EXIT STATUS"' "$RUN1"
then ok "boxy-run(1): every flag of boxy run --help, and the exit statuses"
else not_ok "boxy-run(1): every flag of boxy run --help, and the exit statuses"; diag "missing:$missing"; fi

TOP1=$BOXY_BUILDDIR/doc/boxy-top.1
missing=
for k in Enter Esc Tab / t d s K a w '?' q; do
	grep -q "^\.B.* $k\b\|^\.BR $k\b\|^\.B $k\$\|^\.BR $k \|^\.B \\$k" "$TOP1" ||
		grep -qF ".B $k" "$TOP1" || grep -qF ".BR $k" "$TOP1" || missing="$missing $k"
done
if [ -s "$TOP1" ] && [ -z "$missing" ] && grep -q '^\.TH BOXY-TOP 1' "$TOP1" &&
	grep -q -- '\\-\\-json' "$TOP1"
then ok "boxy-top(1): the views' keys and --json"
else not_ok "boxy-top(1): the views' keys and --json"; diag "missing:$missing"; fi

PROF5=$BOXY_BUILDDIR/doc/boxy-profile.5
# Each key as the page's tag shows it (\fBkey:\fR, hyphens escaped), in its section (.SS).
missing=$(python3 - "$SRC/src/spec/options.c" "$PROF5" <<'PY'
import re, sys
table, page = open(sys.argv[1]).read(), open(sys.argv[2]).read()
keys = {"extends"} | set(re.findall(r'^\s*\{ (?:"[^"]*"|NULL), [^,]*, "([a-z.-]+)"', table, re.M))
section, where = None, {}
for line in page.split("\n"):
    if line.startswith(".SS "):
        section = line[4:].strip('"')
    m = re.match(r'^(?:\\fB|\.B )([a-z\\-]+):', line)
    if m:
        where.setdefault(m.group(1).replace("\\-", "-"), set()).add(section)
for k in sorted(keys):
    sec, name = k.rsplit(".", 1) if "." in k else ("top level" if k != "extends" else None, k)
    if name not in where or (k != "extends" and sec not in where[name]):
        print(k)
PY
)
if [ -s "$PROF5" ] && [ -z "$missing" ] && grep -q '^\.TH BOXY-PROFILE 5' "$PROF5"
then ok "boxy-profile(5): every profile key of the option table, in its section"
else not_ok "boxy-profile(5): every profile key of the option table, in its section"
	diag "missing: $(echo $missing)"; fi

# make install puts the four pages where man looks.
make -s -C "$BOXY_BUILDDIR" install-man DESTDIR="$BOXY_BUILDDIR/manpage-test-inst" >/dev/null 2>&1
inst=$(cd "$BOXY_BUILDDIR/manpage-test-inst" 2>/dev/null && find . -path '*/man/man[15]/*' -type f | sort | tr '\n' ' ')
rm -rf "$BOXY_BUILDDIR/manpage-test-inst"
case $inst in
*/man1/boxy-run.1*/man1/boxy-top.1*/man1/boxy.1*/man5/boxy-profile.5*)
	ok "make install: boxy(1), boxy-run(1), boxy-top(1), boxy-profile(5)" ;;
*) not_ok "make install: boxy(1), boxy-run(1), boxy-top(1), boxy-profile(5)"; diag "installed: $inst" ;;
esac

# Every warning but 'break' ("cannot adjust line"): that one depends on the
# configured paths' lengths (distcheck's prefix is a long one), not the page.
bad=
for p in $PAGES; do
	LC_ALL=C.UTF-8 groff -ww -Wbreak -z -man -Tutf8 "$p" >"$BOXY_BUILDDIR/manpage-test.warn" 2>&1
	[ -s "$BOXY_BUILDDIR/manpage-test.warn" ] && { bad="$bad $(basename "$p")"; diag_file "$BOXY_BUILDDIR/manpage-test.warn" 3; }
done
rm -f "$BOXY_BUILDDIR/manpage-test.warn"
if [ -z "$bad" ]; then ok "groff -ww finds nothing to warn about in the four pages"
else not_ok "groff -ww finds nothing to warn about in the four pages"; diag "warnings:$bad"; fi

done_testing
