#!/bin/sh
# tests/e2e/cli-contract.sh — the command line's contract, as TAP: --version and --help work;
# every bad `boxy run` invocation exits 2 with exactly one line naming the
# flag (then the "Try" line); contradictions with --no-daemon are refused with
# one line; the subcommands still to come say so and fail.
# Nothing here needs the sandbox to work: every case is decided before it starts.

BOXY=${BOXY_BUILDDIR:-.}/boxy
if [ ! -x "$BOXY" ]; then
	echo "1..0 # SKIP no boxy binary at $BOXY"
	exit 0
fi

tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT
# A home of its own: the caller's real store, daemon and profiles are none of this test's
# business (a store another build left behind changed what a case printed).
mkdir -p "$tmp/home" "$tmp/run" && chmod 0700 "$tmp/run"
HOME=$tmp/home XDG_STATE_HOME=$tmp/home/.local/state XDG_CONFIG_HOME=$tmp/home/.config \
	XDG_CACHE_HOME=$tmp/home/.cache XDG_RUNTIME_DIR=$tmp/run
export HOME XDG_STATE_HOME XDG_CONFIG_HOME XDG_CACHE_HOME XDG_RUNTIME_DIR
n=0
failed=0

ok() {
	n=$((n + 1))
	echo "ok $n - $1"
}

not_ok() {
	n=$((n + 1))
	failed=$((failed + 1))
	echo "not ok $n - $1"
	shift
	for line in "$@"; do
		echo "#   $line"
	done
	sed 's/^/#   stderr: /' "$tmp/err"
}

# run_boxy ARGS...: sets $rc; stdout and stderr in $tmp/out, $tmp/err.
run_boxy() {
	"$BOXY" "$@" >"$tmp/out" 2>"$tmp/err" </dev/null
	rc=$?
}

# usage_error WHAT WORD ARGS...: `boxy ARGS` exits 2, stderr is one line
# containing WORD and then the "Try" line.
usage_error() {
	what=$1 word=$2
	shift 2
	run_boxy "$@"
	lines=$(wc -l <"$tmp/err")
	first=$(sed -n 1p "$tmp/err")
	second=$(sed -n 2p "$tmp/err")
	if [ "$rc" -ne 2 ]; then
		not_ok "$what" "exit status $rc, expected 2"
	elif [ "$lines" -ne 2 ]; then
		not_ok "$what" "$lines lines on stderr, expected the error and the Try line"
	elif ! printf '%s\n' "$second" | grep -q "^Try 'boxy "; then
		not_ok "$what" "second line is not the Try line"
	elif ! printf '%s\n' "$first" | grep -qF -- "$word"; then
		not_ok "$what" "the error does not name '$word'"
	else
		ok "$what"
	fi
}

# refused WHAT CODE WORD ARGS...: exits CODE with exactly one line on stderr containing WORD.
refused() {
	what=$1 code=$2 word=$3
	shift 3
	run_boxy "$@"
	lines=$(wc -l <"$tmp/err")
	if [ "$rc" -ne "$code" ]; then
		not_ok "$what" "exit status $rc, expected $code"
	elif [ "$lines" -ne 1 ]; then
		not_ok "$what" "$lines lines on stderr, expected 1"
	elif ! grep -qF -- "$word" "$tmp/err"; then
		not_ok "$what" "stderr does not contain '$word'"
	else
		ok "$what"
	fi
}

# ---- what must work -------------------------------------------------------
run_boxy --version
if [ "$rc" -eq 0 ] && grep -q '^boxy [0-9]' "$tmp/out"; then
	ok "boxy --version"
else
	not_ok "boxy --version" "exit $rc, stdout: $(cat "$tmp/out")"
fi

run_boxy --help
if [ "$rc" -eq 0 ] && grep -q '^  run ' "$tmp/out" && grep -q '^  doctor ' "$tmp/out"; then
	ok "boxy --help lists the commands"
else
	not_ok "boxy --help lists the commands" "exit $rc"
fi

run_boxy run --help
missing=
for flag in --profile --ro --rw --protect --allow-git-write --copy --copy-ro --workdir \
	--net --allow-host --allow-port --allow-cidr --tailscale --env --memory --pids \
	--cpus --timeout --audit-log --net-log --pcap --pcap-max --seccomp --tty \
	--verbose --detach --on-alert --on-denials; do
	grep -qF -- "$flag " "$tmp/out" || missing="$missing $flag"
done
if [ "$rc" -eq 0 ] && [ -z "$missing" ] && [ ! -s "$tmp/err" ]; then
	ok "boxy run --help documents every flag"
else
	not_ok "boxy run --help documents every flag" "exit $rc, missing:$missing"
fi

# ---- bad values: exit 2, one line naming the flag ------------------------
usage_error "--memory 12XB" --memory run --memory 12XB -- true
usage_error "--memory 0" --memory run --memory 0 -- true
usage_error "--memory -1G" --memory run --memory -1G -- true
usage_error "--memory 99999999999T (overflow)" --memory run --memory 99999999999T -- true
usage_error "--timeout -5s" --timeout run --timeout -5s -- true
usage_error "--timeout 10x" --timeout run --timeout 10x -- true
usage_error "--timeout 1h30 (no unit)" --timeout run --timeout 1h30 -- true
usage_error "--allow-host 'bad host'" --allow-host run --allow-host 'bad host' -- true
usage_error "--allow-host 10.0.0.1 (an address)" --allow-cidr run --allow-host 10.0.0.1 -- true
usage_error "--allow-host a.com:0" --allow-host run --allow-host a.com:0 -- true
usage_error "--allow-host a.com:443,443" --allow-host run --allow-host a.com:443,443 -- true
usage_error "--allow-host foo.*.com" --allow-host run --allow-host 'foo.*.com' -- true
usage_error "--allow-cidr 10.0.0.1/8 (host bits)" "did you mean 10.0.0.0/8" \
	run --allow-cidr 10.0.0.1/8 -- true
usage_error "--allow-cidr 10.0.0.0/33" --allow-cidr run --allow-cidr 10.0.0.0/33 -- true
usage_error "--allow-cidr example.com" --allow-cidr run --allow-cidr example.com -- true
usage_error "--allow-port 70000" --allow-port run --allow-port 70000 -- true
usage_error "--net wifi" --net run --net wifi -- true
usage_error "-e 1BAD" --env run -e 1BAD -- true
usage_error "--pids 0" --pids run --pids 0 -- true
usage_error "--pids lots" --pids run --pids lots -- true
usage_error "--cpus 0" --cpus run --cpus 0 -- true
usage_error "--cpus 0.0001" --cpus run --cpus 0.0001 -- true
usage_error "--seccomp lax" --seccomp run --seccomp lax -- true
usage_error "--pcap-max 1Q" --pcap-max run --pcap-max 1Q --pcap x.pcap -- true
usage_error "--copy a:relative" --copy run --copy a:relative -- true
usage_error "--copy-ro ''" --copy-ro run --copy-ro '' -- true
usage_error "--ro ''" --ro run --ro '' -- true
usage_error "--workdir that is not a directory" --workdir \
	run --net none -w /nonexistent/dir -- true

# ---- contradictions -------------------------------------------------------
usage_error "--pcap x --net none" "--pcap with --net none" run --pcap x --net none -- true
usage_error "--allow-host a.com --net none" "contradicts --net none" \
	run --allow-host a.com --net none -- true
usage_error "--allow-host a.com --net public" "contradicts --net public" \
	run --net public --allow-host a.com -- true
usage_error "--allow-port 22 --net none" --allow-port run --allow-port 22 --net none -- true
usage_error "--allow-port 22 (public by default)" "already permits every port" \
	run --allow-port 22 -- true
usage_error "--allow-port 22 --net public" "already permits every port" \
	run --net public --allow-port 22 -- true
usage_error "--allow-cidr --net none" --allow-cidr \
	run --allow-cidr 192.168.4.0/24 --net none -- true
usage_error "--tailscale --net none" --tailscale run --tailscale --net none -- true
usage_error "--allow-host over the offline profile" "--net allowlist" \
	run -p offline --allow-host a.com -- true
usage_error "--pcap-max without --pcap" --pcap-max run --pcap-max 1M -- true

# ---- the command line itself ----------------------------------------------
usage_error "missing command" "missing command" run --net none
usage_error "missing command after --" "missing command" run --net none --
usage_error "unknown flag --bogus" --bogus run --bogus -- true
usage_error "unknown short flag -x" "-x" run -x -- true
usage_error "--memory without a value" --memory run --memory
usage_error "--tty=yes (takes no value)" --tty run --tty=yes -- true
usage_error "--memory given twice" "--memory given twice" run --memory 1G --memory 2G -- true
usage_error "--on-alert with an unknown action" "unknown action 'frez'" run --on-alert frez -- true
usage_error "--on-alert with an unknown kind" "unknown alert kind 'tripwir'" \
	run --on-alert tripwir=freeze -- true
usage_error "--on-alert with an empty item" "--on-alert" run --on-alert log,,stop -- true
usage_error "--on-alert empty" "--on-alert: empty" run --on-alert '' -- true
usage_error "--on-denials 0" "--on-denials" run --on-denials 0 -- true
usage_error "--on-alert given twice" "--on-alert given twice" \
	run --on-alert log --on-alert freeze -- true
usage_error "--net given twice" "--net given twice" run --net none --net none -- true
usage_error "-p given twice" "--profile given twice" run -p generic -p node -- true
usage_error "--profile that does not exist" --profile \
	run --profile /nonexistent/p.yaml -- true

# --help after the command is the command's: `boxy run CMD --help` must not print
# boxy's usage. (-d with --no-daemon stops with 2 before any sandbox is needed.)
run_boxy run --net none -d --no-daemon echo --help
if [ "$rc" -eq 2 ] && [ ! -s "$tmp/out" ]; then
	ok "--help after the command belongs to the command"
else
	not_ok "--help after the command belongs to the command" "exit $rc, stdout: $(head -c 200 "$tmp/out")"
fi

# ---- contradictions with --no-daemon: one line, exit 2 --------------------
refused "--net public contradicts --no-daemon" 2 "--no-daemon" run --net public --no-daemon -- true
refused "the default --net public contradicts --no-daemon" 2 "--no-daemon" run --no-daemon -- true
refused "--allow-host (allowlist) contradicts --no-daemon" 2 "--no-daemon" \
	run --allow-host registry.npmjs.org --no-daemon -- true
refused "-d contradicts --no-daemon" 2 "no-daemon" run -d --no-daemon --net none -- true
refused "--on-alert freeze contradicts --no-daemon" 2 "--no-daemon" \
	run --on-alert freeze --no-daemon --net none -- true
refused "--on-denials contradicts --no-daemon" 2 "--no-daemon" \
	run --on-denials 3 --no-daemon --net none -- true
usage_error "--net-log with --net none" "--net-log" run --net-log n.json --net none -- true
# A source typed on the command line must exist (a profile's may be absent: skipped, audited).
usage_error "--ro of a path that does not exist" "--ro /nonexistent-boxy-src" \
	run --net none --ro /nonexistent-boxy-src -- true
usage_error "--copy of a typo'd file" "--copy no-such-file.json" \
	run --net none --copy no-such-file.json -- true
usage_error "--rw under a file" "--rw /etc/passwd/x" run --net none --rw /etc/passwd/x -- true
refused "--audit-log that cannot be opened" 125 "--audit-log" \
	run --audit-log /nonexistent/dir/a.jsonl --net none -- true

# ---- every subcommand: --help works; the ones still to come say so ---------
# Which subcommands are still stubs changes as the daemon lands, so ask each
# one's --help (no side effects) and hold the stubs to their promise: exit
# non-zero with one line, never a pretended success.
for sub in run watch ps show attach stop top doctor profile daemon logs wait; do
	run_boxy $sub --help
	if [ "$rc" -ne 0 ] || [ ! -s "$tmp/out" ]; then
		not_ok "boxy $sub --help" "exit $rc"
		continue
	fi
	ok "boxy $sub --help"
	if grep -q "not in this build yet" "$tmp/out"; then
		refused "boxy $sub says it is not built yet" 125 "not available yet" $sub
	fi
done

echo "1..$n"
echo "# $((n - failed)) passed, $failed failed"
[ "$failed" -eq 0 ]
