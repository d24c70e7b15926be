#!/bin/bash
# completion.sh — the bash completion `boxy completion bash` prints (and the
# build installs) completes what boxy takes: subcommands, every flag of run's
# option table, profile names, and session ids from the store of a private
# daemon; and a hostile profile file name is never run by the shell on Tab
# (issue 16, "No shell completions").

. "$(dirname "$0")/../lib/harness.sh"
harness_as_test_user "$0" "$@"
. "$(dirname "$0")/daemon-lib.sh"

plan 14

# The completion calls `boxy` by name: this build's, first on PATH.
mkdir -p "$SUITE/bin"
ln -s "$BOXY" "$SUITE/bin/boxy"
export PATH=$SUITE/bin:$PATH
export XDG_CONFIG_HOME=$SUITE/config

B completion bash
cp "$OUT" "$SUITE/boxy.bash"
check "boxy completion bash prints a script bash parses" \
	'[ "$RC" = 0 ] && bash -n "$SUITE/boxy.bash"'
# shellcheck disable=SC1091
. "$SUITE/boxy.bash"

# comp WORDS...: COMPREPLY for the last word (an empty last word: a Tab after a space).
comp() {
	COMP_WORDS=("$@")
	COMP_CWORD=$((${#COMP_WORDS[@]} - 1))
	COMPREPLY=()
	_boxy
	printf '%s\n' "${COMPREPLY[@]}" | sort
}

check "boxy ru<TAB>: run" '[ "$(comp boxy ru)" = run ]'
check "boxy <TAB>: every subcommand" \
	'[ "$(comp boxy "" | grep -c .)" -ge 13 ] && comp boxy "" | grep -qx top && comp boxy "" | grep -qx daemon'
check "boxy run --all<TAB>: the five --allow flags" \
	'[ "$(comp boxy run --all | tr "\n" " ")" = "--allow-cidr --allow-git-write --allow-host --allow-http --allow-port " ]'
# Every long option of run's table, as --help names them.
want=$("$BOXY" run --help | grep -o -- '--[a-z][a-z-]*' | sort -u | grep -vx -- '--')
got=$(comp boxy run --)
missing=$(comm -23 <(echo "$want") <(echo "$got"))
check "boxy run --<TAB>: every flag run --help names" '[ -z "$missing" ]' || diag "missing: $missing"
check "boxy run --net <TAB>: the modes" \
	'[ "$(comp boxy run --net "" | tr "\n" " ")" = "allowlist none public " ]'
check "boxy run --profile <TAB>: the presets" \
	'comp boxy run --profile "" | grep -qx node && comp boxy run --profile "" | grep -qx offline'
check "boxy run -- <TAB>: a command" 'comp boxy run -- ech | grep -qx echo'

B run --net none -- true
B run -d --net none -- sleep 30
ID=$(tr -d '[:space:]' <"$OUT")
IDS=$(sqlite3 "$DB" 'SELECT id FROM sessions ORDER BY id' 2>/dev/null)
check "boxy show <TAB>: every session id in the store" \
	'[ "$(comp boxy show "")" = "$IDS" ] && [ "$(echo "$IDS" | grep -c .)" = 2 ]'
GOT=$(set -u; comp boxy stop "")
check "boxy stop <TAB>: the running session only (under set -u too)" '[ "$GOT" = "$ID" ]'
"$BOXY" stop -k "$ID" >/dev/null 2>&1

# A profile file named to run a command when a completion expands it.
mkdir -p "$XDG_CONFIG_HOME/boxy/profiles"
echo 'network: {mode: none}' >"$XDG_CONFIG_HOME/boxy/profiles/\$(touch $SUITE/PWNED).yaml"
echo 'network: {mode: none}' >"$XDG_CONFIG_HOME/boxy/profiles/mine.yaml"
comp boxy run --profile "" >"$SUITE/profiles"
check "a hostile profile name is not run on Tab; a plain one is offered" \
	'! [ -e "$SUITE/PWNED" ] && grep -qx mine "$SUITE/profiles"'

# zsh and fish: the files parse, and fish (which can be asked from a script) completes.
B completion zsh
check "boxy completion zsh: a script zsh parses" '[ "$RC" = 0 ] && zsh -n "$OUT"'
B completion fish
cp "$OUT" "$SUITE/boxy.fish"
check "boxy completion fish: a script fish parses" '[ "$RC" = 0 ] && fish -n "$SUITE/boxy.fish"'
check "fish: boxy run --all<TAB> and boxy show <TAB>" \
	'[ "$(fish -c "source $SUITE/boxy.fish; complete -C \"boxy run --all\"" | tr "\n" " ")" = "--allow-cidr --allow-git-write --allow-host --allow-http --allow-port " ] &&
	 fish -c "source $SUITE/boxy.fish; complete -C \"boxy show \"" | grep -qx "$ID"'

done_testing
