# tests/lib/harness.sh — shared by every shell suite (sourced, bash).
#
# What it gives a suite:
#   * TAP output: plan, ok, not_ok, skip, diag, done_testing (prints the plan
#     when none was given, a closing "N passed, N failed" comment, and returns
#     non-zero when any case failed).
#   * the binaries: $BOXY (boxy), $BOXY_INIT, $ATTACK (tests/escape/attack,
#     compiled here from source when the build tree has none).
#   * an unprivileged user: started as root, the harness creates the user
#     `boxytest` when missing (useradd -m), may make /dev/net/tun usable
#     (chmod 0666, said on stderr), and re-runs the suite as that user with
#     runuser. The sandbox is meant for ordinary users; testing it as root
#     would test something else. When boxytest cannot reach the build tree
#     (a clone under /root, say) the built programs and the test scripts are
#     copied into a fresh 0755 directory under /tmp first.
#   * bait: harness_suite_setup plants secrets in the environment, starts fake
#     SSH-agent and Docker sockets and a host loopback TCP listener that record
#     every connection, a host process with a recognisable command line, and a
#     marker key in the session keyring; case_new gives each case its own
#     scratch directory with a planted HOME full of credentials and a workdir.
#   * cleanup of every background process and temporary directory (trap).
#
# Every bait string contains $BAIT, so "the payload saw a secret" is one grep.

set -u

HARNESS_TEST_USER=${BOXY_TEST_USER:-boxytest}

## ---- TAP -----------------------------------------------------------------------
TAP_N=0
TAP_FAILED=0
TAP_PLANNED=

# plan N: announce the number of cases up front (optional, see done_testing).
plan() { TAP_PLANNED=$1; echo "1..$1"; }

# ok DESC: a passing case.
ok() { TAP_N=$((TAP_N + 1)); echo "ok $TAP_N - $*"; }

# not_ok DESC: a failing case; follow with diag lines to say why.
not_ok() { TAP_N=$((TAP_N + 1)); TAP_FAILED=$((TAP_FAILED + 1)); echo "not ok $TAP_N - $*"; }

# skip DESC REASON: a case that cannot run here (e.g. the interpreter is absent).
skip() { TAP_N=$((TAP_N + 1)); echo "ok $TAP_N - $1 # SKIP $2"; }

# diag LINE...: a TAP comment; each argument's lines are prefixed with "# ".
diag() {
	local l
	for l in "$@"; do [ -z "$l" ] || printf '%s\n' "$l"; done | sed 's/^/#   /'
}

# diag_file FILE [MAX]: the first MAX (20) lines of FILE as comments.
diag_file() { [ -s "$1" ] && head -n "${2:-20}" "$1" | sed 's/^/#   | /'; return 0; }

# done_testing: close the TAP stream; returns 1 when anything failed.
done_testing() {
	[ -n "$TAP_PLANNED" ] || echo "1..$TAP_N"
	echo "# $((TAP_N - TAP_FAILED)) passed, $TAP_FAILED failed"
	[ "$TAP_FAILED" -eq 0 ]
}

## ---- locating things ---------------------------------------------------------
harness_die() { echo "harness: $*" >&2; echo "Bail out! $*"; exit 99; }

# harness_locate: set BOXY_SRCDIR, BOXY_BUILDDIR, BOXY and BOXY_INIT.
harness_locate() {
	local here
	here=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
	: "${BOXY_SRCDIR:=$here}"
	if [ -z "${BOXY_BUILDDIR:-}" ]; then
		if [ -x ./boxy ]; then BOXY_BUILDDIR=$(pwd)
		else BOXY_BUILDDIR=$BOXY_SRCDIR; fi
	fi
	export BOXY_SRCDIR BOXY_BUILDDIR
	BOXY=$BOXY_BUILDDIR/boxy
	BOXY_INIT=$BOXY_BUILDDIR/boxy-init
}

## ---- becoming the unprivileged user -----------------------------------------
# harness_as_test_user SCRIPT ARGS...: when root, run SCRIPT as the test user
# and exit with its status; otherwise return and let the suite run as it is.
harness_as_test_user() {
	local script rel copy="" rc
	[ "$(id -u)" = 0 ] || return 0
	[ -z "${BOXY_HARNESS_CHILD:-}" ] || harness_die "still root after runuser"
	script=$(readlink -f "$1"); shift
	harness_locate
	# Suites start in parallel (make -j): on a machine that has no test user
	# yet, they would race to create it and all but one useradd would fail.
	# One creates it under a lock; the others find it made.
	if ! id "$HARNESS_TEST_USER" >/dev/null 2>&1; then
		(
			flock 9
			if ! id "$HARNESS_TEST_USER" >/dev/null 2>&1; then
				echo "harness: creating the unprivileged test user $HARNESS_TEST_USER (useradd -m)" >&2
				useradd -m -s /bin/sh "$HARNESS_TEST_USER"
			fi
		) 9>/run/lock/boxy-test-useradd.lock || harness_die "useradd failed"
		id "$HARNESS_TEST_USER" >/dev/null 2>&1 || harness_die "useradd failed"
	fi
	if [ -c /dev/net/tun ] && ! runuser -u "$HARNESS_TEST_USER" -- test -w /dev/net/tun; then
		echo "harness: chmod 0666 /dev/net/tun so $HARNESS_TEST_USER can create a TAP device" >&2
		chmod 0666 /dev/net/tun
	fi
	# Can the test user reach the tree (every parent searchable, binaries executable)?
	if ! runuser -u "$HARNESS_TEST_USER" -- sh -c '
		test -x "$1/boxy" && test -x "$1/boxy-init" && test -r "$2" &&
		test -r "$3/tests/lib/harness.sh" && test -x "$3/tests"' \
		_ "$BOXY_BUILDDIR" "$script" "$BOXY_SRCDIR" 2>/dev/null; then
		copy=$(mktemp -d /tmp/boxy-test-tree.XXXXXX) || harness_die "mktemp failed"
		echo "harness: $HARNESS_TEST_USER cannot reach the build tree; copying it to $copy" >&2
		mkdir -p "$copy/build" "$copy/src"
		# The programs (boxy, boxy-init, boxy-net...) and every built test program.
		(cd "$BOXY_BUILDDIR" && {
			find . -maxdepth 1 -type f -perm -u+x -name 'boxy*'
			[ ! -d tests ] || find tests -type f -perm -u+x ! -name '*.sh'
		} | tar -cf - -T -) | tar -C "$copy/build" -xf - ||
			harness_die "cannot copy the build tree to $copy"
		cp -R "$BOXY_SRCDIR/tests" "$BOXY_SRCDIR/bench" "$copy/src/" 2>/dev/null
		case $script in
		"$BOXY_SRCDIR"/*) rel=${script#"$BOXY_SRCDIR"/} ;;
		*) rel=tests/$(basename "$(dirname "$script")")/$(basename "$script") ;;
		esac
		chmod -R a+rX "$copy"
		chmod 0755 "$copy"
		BOXY_BUILDDIR=$copy/build
		BOXY_SRCDIR=$copy/src
		script=$copy/src/$rel
	fi
	cd / || exit 99
	runuser -u "$HARNESS_TEST_USER" -- env -i \
		BOXY_HARNESS_CHILD=1 \
		BOXY_BUILDDIR="$BOXY_BUILDDIR" BOXY_SRCDIR="$BOXY_SRCDIR" \
		CMOCKA_MESSAGE_OUTPUT="${CMOCKA_MESSAGE_OUTPUT:-TAP}" \
		${BOXY_TEST_VERBOSE:+BOXY_TEST_VERBOSE="$BOXY_TEST_VERBOSE"} \
		${BOXY_TEST_KEEP:+BOXY_TEST_KEEP="$BOXY_TEST_KEEP"} \
		${BOXY_ESCAPE_ONLY:+BOXY_ESCAPE_ONLY="$BOXY_ESCAPE_ONLY"} \
		${BOXY_BENCH_RUNS:+BOXY_BENCH_RUNS="$BOXY_BENCH_RUNS"} \
		${BOXY_BENCH_LOOP:+BOXY_BENCH_LOOP="$BOXY_BENCH_LOOP"} \
		PATH=/usr/local/bin:/usr/bin:/bin \
		LANG=C.UTF-8 TERM="${TERM:-dumb}" \
		HOME="$(getent passwd "$HARNESS_TEST_USER" | cut -d: -f6)" \
		USER="$HARNESS_TEST_USER" LOGNAME="$HARNESS_TEST_USER" \
		bash "$script" "$@"
	rc=$?
	[ -z "$copy" ] || rm -rf "$copy"
	exit $rc
}

## ---- cleanup -----------------------------------------------------------------
HARNESS_PIDS=()
HARNESS_DIRS=()

harness_cleanup() {
	local p
	# The suite's own boxy daemon (its runtime dir is $SUITE/run): stop it first.
	if [ -n "${SUITE:-}" ] && [ -e "$SUITE/run/boxy" ] && [ -x "${BOXY:-}" ]; then
		XDG_RUNTIME_DIR=$SUITE/run "$BOXY" daemon stop >/dev/null 2>&1
	fi
	for p in "${HARNESS_PIDS[@]}"; do kill "$p" 2>/dev/null; done
	for p in "${HARNESS_PIDS[@]}"; do wait "$p" 2>/dev/null; done
	if [ -z "${BOXY_TEST_KEEP:-}" ]; then
		for p in "${HARNESS_DIRS[@]}"; do chmod -R u+rwX "$p" 2>/dev/null; rm -rf "$p"; done
	else
		echo "harness: kept ${HARNESS_DIRS[*]}" >&2
	fi
}
trap harness_cleanup EXIT
trap 'exit 130' INT TERM HUP

## ---- the attack program --------------------------------------------------------
# harness_attack: set $ATTACK to the built attack program, compiling it if needed.
harness_attack() {
	ATTACK=$BOXY_BUILDDIR/tests/escape/attack
	[ -x "$ATTACK" ] && return 0
	ATTACK=$SUITE/attack
	cc -O2 -o "$ATTACK" "$BOXY_SRCDIR/tests/escape/attack.c" 2>"$SUITE/attack-cc.log" ||
		harness_die "cannot build tests/escape/attack: $(head -3 "$SUITE/attack-cc.log")"
}

## ---- suite-wide bait ----------------------------------------------------------
# The fake agent/docker server: every connection leaves a file in $SUITE/evidence
# named after the socket, and gets a greeting carrying the bait marker.
HARNESS_SERVER='
import os, socket, selectors, sys, itertools
suite, bait = sys.argv[1], sys.argv[2]
sel = selectors.DefaultSelector()
def listen(name, fam, addr):
    s = socket.socket(fam, socket.SOCK_STREAM)
    if fam == socket.AF_INET:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    s.bind(addr); s.listen(16)
    sel.register(s, selectors.EVENT_READ, name)
    return s
listen("agent", socket.AF_UNIX, suite + "/run/agent.sock")
listen("docker", socket.AF_UNIX, suite + "/run/docker.sock")
listen("abstract", socket.AF_UNIX, "\0boxy-escape-" + bait)
t = listen("tcp", socket.AF_INET, ("127.0.0.1", 0))
with open(suite + "/run/tcp.port.tmp", "w") as f: f.write(str(t.getsockname()[1]))
os.rename(suite + "/run/tcp.port.tmp", suite + "/run/tcp.port")
n = itertools.count()
while True:
    for key, _ in sel.select():
        c, _ = key.fileobj.accept()
        open("%s/evidence/%s.%d" % (suite, key.data, next(n)), "w").close()
        try: c.sendall(("HELLO " + key.data + " " + bait + "\n").encode())
        except OSError: pass
        c.close()
'

# harness_suite_setup: the suite directory, bait in the environment, the servers.
harness_suite_setup() {
	local i
	harness_locate
	SUITE=$(mktemp -d "${TMPDIR:-/tmp}/boxy-escape.XXXXXX") || harness_die "mktemp failed"
	chmod 0755 "$SUITE"
	HARNESS_DIRS+=("$SUITE")
	mkdir -p "$SUITE/run" "$SUITE/state" "$SUITE/evidence" "$SUITE/cases"
	chmod 0700 "$SUITE/run"
	BAIT=BOXYBAIT$(od -An -N6 -tx1 /dev/urandom | tr -d ' \n')
	export BAIT
	harness_attack

	# Secrets in the caller's environment; none may reach a payload unnamed.
	export AWS_SECRET_ACCESS_KEY="$BAIT-env-aws"
	export AWS_ACCESS_KEY_ID="AKIA$BAIT"
	export GITHUB_TOKEN="ghp_$BAIT-env-github"
	export NPM_TOKEN="$BAIT-env-npm"
	export ANTHROPIC_API_KEY="$BAIT-env-anthropic"
	export SSH_AUTH_SOCK="$SUITE/run/agent.sock"
	export DOCKER_HOST="unix://$SUITE/run/docker.sock"
	export XDG_RUNTIME_DIR="$SUITE/run"   # a private boxy daemon: its socket...
	export XDG_STATE_HOME="$SUITE/state"  # ...and its session store
	export BOXY_PASS_ME="passed-$BAIT-ok"   # only for the -e NAME case, which names it

	PYTHON=$(command -v python3 || true)
	[ -n "$PYTHON" ] || harness_die "python3 is needed for the fake agent/docker sockets"
	"$PYTHON" -c "$HARNESS_SERVER" "$SUITE" "$BAIT" 2>"$SUITE/server.log" &
	HARNESS_PIDS+=($!)
	for i in $(seq 100); do [ -s "$SUITE/run/tcp.port" ] && break; sleep 0.05; done
	[ -s "$SUITE/run/tcp.port" ] ||
		harness_die "socket server did not start: $(cat "$SUITE/server.log")"
	TCP_PORT=$(cat "$SUITE/run/tcp.port")

	# A host process the payload must not be able to see or signal.
	bash -c "exec -a boxy-host-marker-$BAIT sleep 100000" &
	HOSTPID=$!
	HARNESS_PIDS+=($HOSTPID)
	CALLERPID=$$

	# A key in the caller's keyrings (session keyring inherited by every child).
	"$ATTACK" add-key boxy-escape-marker "$BAIT-keyring" >"$SUITE/add-key.log" 2>&1 || true
}

# The bait files of a planted HOME, relative to it.
BAIT_FILES=".ssh/id_rsa .ssh/id_ed25519 .gnupg/private-keys-v1.d/x.key .aws/credentials
.config/gcloud/credentials.db .kube/config .docker/config.json .npmrc .netrc .git-credentials"

# plant_home DIR: fill DIR with credentials, each carrying the bait marker.
# (Few forks on purpose: the suite plants a home for every case.)
plant_home() {
	local d=$1 f dirs=()
	for f in $BAIT_FILES; do [[ $f != */* ]] || dirs+=("$d/${f%/*}"); done
	mkdir -p "${dirs[@]}"
	for f in $BAIT_FILES; do
		case $f in
		.npmrc) echo "//registry.npmjs.org/:_authToken=$BAIT-$f" >"$d/$f" ;;
		.netrc) echo "machine github.com login me password $BAIT-$f" >"$d/$f" ;;
		.git-credentials) echo "https://me:$BAIT-$f@github.com" >"$d/$f" ;;
		*) echo "secret $BAIT-$f" >"$d/$f" ;;
		esac
	done
	chmod 0700 "$d/.ssh" "$d/.gnupg"
	chmod 0600 "$d/.ssh/id_rsa" "$d/.ssh/id_ed25519"
	ln -s "$SUITE/run/agent.sock" "$d/.ssh/agent.sock"
}

## ---- per-case scratch -----------------------------------------------------------
CASE_SEQ=0
# case_new NAME: CASE (scratch dir), CASE_HOME (planted), CASE_WORK (the workdir,
# ~/project as in real use), with the attack program copied into the workdir.
case_new() {
	CASE_SEQ=$((CASE_SEQ + 1))
	printf -v CASE '%s/cases/%03d-%s' "$SUITE" "$CASE_SEQ" "$1"
	CASE_HOME=$CASE/home
	CASE_WORK=$CASE_HOME/project
	mkdir -m 0700 "$CASE" && mkdir -p "$CASE_WORK" || harness_die "cannot create $CASE"
	plant_home "$CASE_HOME"
	cp "$ATTACK" "$CASE_WORK/attack"
}

# boxy_run [FLAGS...] -- CMD...: run boxy in the case's workdir with the planted
# HOME, the leaked descriptors 7-9 open, and an audit log; stdout, stderr and
# the exit status land in $CASE/out, $CASE/err, $RUN_RC; $RUN_MS is the time taken.
# BOXY_WRAP, when set, is a command boxy is run under (a watchdog).
boxy_run() {
	local t0 t1
	t0=$(date +%s%N)
	(
		cd "$CASE_WORK" || exit 99
		exec 7<"$CASE_HOME" 8<"$CASE_HOME/.ssh/id_rsa" 9</proc/self/ns/mnt
		HOME=$CASE_HOME exec ${BOXY_WRAP:-} "$BOXY" run --net none --audit-log "$CASE/audit.jsonl" "$@"
	) </dev/null >"$CASE/out" 2>"$CASE/err"
	RUN_RC=$?
	t1=$(date +%s%N)
	RUN_MS=$(((t1 - t0) / 1000000))
}

# direct_run CMD...: the same, without boxy (the control mode).
direct_run() {
	(
		cd "$CASE_WORK" || exit 99
		exec 7<"$CASE_HOME" 8<"$CASE_HOME/.ssh/id_rsa" 9</proc/self/ns/mnt
		HOME=$CASE_HOME exec "$@"
	) </dev/null >"$CASE/out" 2>"$CASE/err"
	RUN_RC=$?
}

# boxy_works: true when `boxy run --net none -- true` works here.
boxy_works() {
	local d
	d=$(mktemp -d "$SUITE/probe.XXXX")
	(cd "$d" && "$BOXY" run --net none -- true) >"$SUITE/probe.out" 2>&1
}
