#!/bin/bash
# manpage.sh — boxy(1) as built (doc/boxy.1 from doc/boxy.1.in) says what
# this build does (issue 16, "The man page"): no placeholder or literal
# $(datadir) left, the date of the build, every subcommand in SYNOPSIS, every
# exit status of src/common/util.h in EXIT STATUS, every variable boxy reads (getenv
# in src/, store/, ui/) in ENVIRONMENT, the sandbox's own environment in a
# section of its own, and SEE ALSO pointing at an installed docdir.

. "$(dirname "$0")/../lib/harness.sh"
harness_locate
MAN=$BOXY_BUILDDIR/doc/boxy.1
[ -r "$MAN" ] || { echo "1..1"; echo "not ok 1 - $MAN was not built"; exit 1; }
SRC=$BOXY_SRCDIR

# section NAME: the roff source of one .SH section.
section() { awk -v n="$1" '/^\.SH/ { on = ($0 ~ "^\\.SH \"?" n "\"?$") ; next } on' "$MAN"; }

plan 8

if grep -n '@[a-zA-Z_]*@\|\$(datadir)\|\$(libexecdir)\|\$(prefix)' "$MAN" >/dev/null; then
	not_ok "no placeholder left"; grep -n '@[a-zA-Z_]*@\|\$(' "$MAN" | head -3 | sed 's/^/# /'
else ok "no placeholder left"; fi

if head -1 "$MAN" | grep -q '"[0-9]\{4\}-[0-9][0-9]-[0-9][0-9]"'; then ok "dated by the build"
else not_ok "dated by the build"; head -1 "$MAN" | sed 's/^/# /'; fi

missing=
for c in $("$BOXY" --help | sed -n 's/^  \([a-z][a-z]*\) .*/\1/p' | grep -vx boxy); do
	section SYNOPSIS | grep -q "^\.B boxy $c\b" || missing="$missing $c"
done
if [ -z "$missing" ]; then ok "every subcommand of boxy --help in SYNOPSIS"
else not_ok "every subcommand of boxy --help in SYNOPSIS"; diag "missing:$missing"; fi

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
if [ -z "$missing" ]; then ok "every variable boxy reads in ENVIRONMENT"
else not_ok "every variable boxy reads in ENVIRONMENT"; diag "missing:$missing"; fi

if section "SANDBOX ENVIRONMENT" | grep -q SSH_AUTH_SOCK && ! section ENVIRONMENT | grep -q SSH_AUTH_SOCK
then ok "the sandbox's environment in its own section"
else not_ok "the sandbox's environment in its own section"; fi

DOCDIR=$(sed -n 's/^docdir = //p' "$BOXY_BUILDDIR/Makefile" | head -1)
if section "SEE ALSO" | grep -q "/share/doc/boxy/" && section FILES | grep -q "/libexec/boxy/boxy\\\\-init"
then ok "SEE ALSO and FILES name the installed paths"
else not_ok "SEE ALSO and FILES name the installed paths"; diag "docdir $DOCDIR"; fi

if grep -q 'doc/json.md' "$BOXY_BUILDDIR/Makefile" && grep -q '^dist_doc_DATA' "$SRC/Makefile.am"
then ok "doc/*.md installed to docdir"
else not_ok "doc/*.md installed to docdir"; fi

done_testing
