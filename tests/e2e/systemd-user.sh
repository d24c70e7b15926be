#!/bin/bash
# systemd-user.sh — the shipped units under a real systemd user manager
# (issue 16, "systemd"): `systemctl --user start boxy.socket`, and the first
# `boxy` command starts boxy.service from it; the daemon's log is in the
# journal; with Delegate=yes the daemon moves into a leaf of its service's
# cgroup, so the service's cgroup holds no process and its runs' cgroups can
# be given controllers beside it; --memory is still enforced (by the
# watchdog here: this host binds memory, pids and cpu to cgroup v1); a
# stopped daemon is started again by the next command.
#
# This machine boots without systemd (PID 1 is not systemd, no user@.service
# can be started: `systemctl start user@UID` answers "System has not been
# booted with systemd"). So, as journal.sh does for journald, the suite makes
# what a login would: in a private mount namespace, a tmpfs over /run/systemd
# with /run/systemd/system (what sd_booted() looks for), a private journald,
# and cgroups of its own (in the cgroup2 hierarchy and, on a hybrid host, the
# name=systemd one) given to the test user; then it starts `systemd --user`
# as the test user there, and the tests run as that user against it. Root
# only; everything it made is removed at the end.

. "$(dirname "$0")/../lib/harness.sh"
harness_locate

if [ "$(id -u)" = 0 ] && [ -z "${BOXY_SDU_NS:-}" ]; then
	exec unshare -m --propagation private env BOXY_SDU_NS=1 bash "$0" "$@"
fi

if [ "$(id -u)" = 0 ]; then
	MANAGER=/usr/lib/systemd/systemd
	JOURNALD=/lib/systemd/systemd-journald
	for x in "$MANAGER" "$JOURNALD"; do
		[ -x "$x" ] || harness_die "no $x (Debian package systemd)"
	done
	TU=$HARNESS_TEST_USER
	id "$TU" >/dev/null 2>&1 || useradd -m -s /bin/sh "$TU" || harness_die "useradd failed"
	S=$(mktemp -d /tmp/boxy-sdu.XXXXXX) || harness_die "mktemp failed"
	chmod 0755 "$S"
	HARNESS_DIRS+=("$S")
	mkdir -p "$S/home" "$S/rt"
	chown "$TU" "$S/home" "$S/rt"
	chmod 0700 "$S/rt"

	# What a booted system has: sd_booted()'s directory, and a journal.
	for d in /run/systemd /run/log /var/log/journal; do
		mkdir -p "$d" && mount -t tmpfs -o mode=0755 tmpfs "$d" ||
			harness_die "cannot mount a private $d"
	done
	mkdir /run/systemd/system
	chgrp systemd-journal /var/log/journal && chmod 2755 /var/log/journal
	"$JOURNALD" >/dev/null 2>&1 &
	HARNESS_PIDS+=($!)
	for _ in $(seq 100); do [ -S /run/systemd/journal/socket ] && break; sleep 0.05; done
	[ -S /run/systemd/journal/socket ] || harness_die "the private journald did not start"
	journalctl --flush >/dev/null 2>&1     # to /var/log/journal: per-user files from now on

	# A cgroup for the manager, the test user's, in each hierarchy systemd uses.
	CGNAME=boxy-test-sdu-$$
	CGDIRS=()
	CG2=$(findmnt -n -t cgroup2 -o TARGET | head -n 1)
	[ -n "$CG2" ] || harness_die "no cgroup2 hierarchy is mounted"
	CGDIRS+=("$CG2/$CGNAME")
	CGV1=$(findmnt -n -t cgroup -o TARGET,OPTIONS | awk '/name=systemd/ { print $1 }' | head -n 1)
	[ -z "$CGV1" ] || CGDIRS+=("$CGV1/$CGNAME")
	sdu_cleanup() {
		local d p
		for p in "${HARNESS_PIDS[@]}"; do kill "$p" 2>/dev/null; done
		# Everything the manager ran lives in its cgroups: wait for them to empty.
		for _ in $(seq 50); do
			p=$(find "${CGDIRS[@]}" -name cgroup.procs -exec cat {} + 2>/dev/null)
			[ -z "$p" ] && break
			sleep 0.1
		done
		# shellcheck disable=SC2086
		[ -z "$p" ] || kill -9 $p 2>/dev/null
		for d in "${CGDIRS[@]}"; do
			for _ in $(seq 20); do
				find "$d" -depth -type d -exec rmdir {} + 2>/dev/null
				[ -d "$d" ] || break
				sleep 0.1
			done
		done
	}
	trap 'sdu_cleanup; harness_cleanup' EXIT
	for d in "${CGDIRS[@]}"; do
		mkdir "$d" && chown -R "$TU" "$d" && echo $$ >"$d/cgroup.procs" ||
			harness_die "cannot make the cgroup $d for the user manager"
	done
	setpriv --reuid="$TU" --regid="$(id -g "$TU")" --init-groups \
		env -i HOME="$S/home" XDG_RUNTIME_DIR="$S/rt" PATH=/usr/local/bin:/usr/bin:/bin \
		"$MANAGER" --user >"$S/manager.log" 2>&1 &
	HARNESS_PIDS+=($!)
	for _ in $(seq 100); do [ -S "$S/rt/systemd/private" ] && break; sleep 0.05; done
	[ -S "$S/rt/systemd/private" ] || { cat "$S/manager.log" >&2; harness_die "systemd --user did not start"; }
	# Out again: the manager's tree is its own (it sits in init.scope; a process left
	# at its top would keep it from enabling controllers for its units).
	for d in "${CGDIRS[@]}"; do echo $$ >"$(dirname "$d")/cgroup.procs"; done
	echo "$CG2/$CGNAME" >"$S/cgroup"
	chmod 0644 "$S/cgroup"
	# The tests, as the test user (harness_as_test_user exits with their status).
	( harness_as_test_user "$0" "$S" )
	exit $?
fi

## ---- as the test user, against the manager started above -----------------------
S=${1:?"run as root: it starts the user manager"}
export HOME=$S/home XDG_RUNTIME_DIR=$S/rt
CGROOT=$(cat "$S/cgroup")
UNITS=$HOME/.config/systemd/user
SOCK=$XDG_RUNTIME_DIR/boxy/daemon.sock
W=$S/home/work
mkdir -p "$UNITS/boxy.service.d" "$W" "$HOME/.local/state"
# The shipped units as the build made them; a drop-in only points ExecStart at this build.
cp "$BOXY_BUILDDIR/dist/systemd/boxy.service" "$BOXY_SRCDIR/dist/systemd/boxy.socket" "$UNITS/"
printf '[Service]\nExecStart=\nExecStart=%s daemon serve\n' "$BOXY" >"$UNITS/boxy.service.d/build.conf"
T=$HOME/t
mkdir -p "$T"
OUT=$T/out
ERR=$T/err
B() { (cd "$W" && "$BOXY" "$@") </dev/null >"$OUT" 2>"$ERR"; RC=$?; }
SC() { systemctl --user "$@" 2>&1; }
main_pid() { SC show -p MainPID --value boxy.service; }
journal() { journalctl --no-pager -o cat _UID="$(id -u)" 2>/dev/null; }
# check DESC TEST: ok when the shell test holds.
check() { if eval "$2"; then ok "$1"; else not_ok "$1"; diag "rc=${RC:-} failed: $2"; return 1; fi; }

plan 10

systemd-analyze --user verify --man=no "$UNITS/boxy.socket" "$UNITS/boxy.service" >"$T/verify" 2>&1
check "systemd-analyze --user verify accepts both units" \
	'! grep -v "^$" "$T/verify" | grep -q .' || diag_file "$T/verify"

SC daemon-reload >/dev/null
SC start boxy.socket >"$T/start"
check "systemctl --user start boxy.socket: listening at \$XDG_RUNTIME_DIR/boxy/daemon.sock, 0600 in a 0700 directory" \
	'[ "$(SC is-active boxy.socket)" = active ] && [ -S "$SOCK" ] &&
	 [ "$(stat -c %a "$SOCK")" = 600 ] && [ "$(stat -c %a "$(dirname "$SOCK")")" = 700 ] &&
	 [ "$(SC is-active boxy.service)" = inactive ]' || diag_file "$T/start"

B run --net none -- echo hello
PID1=$(main_pid)
check "the first boxy run starts boxy.service through the socket and runs" \
	'[ "$RC" = 0 ] && grep -qx hello "$OUT" && [ "$(SC is-active boxy.service)" = active ] &&
	 [ -n "$PID1" ] && [ "$PID1" != 0 ] && [ ! -e "$HOME/.local/state/boxy/daemon.log" ]' ||
	diag_file "$ERR"

SVC=$(sed -n 's/^0:://p' "/proc/$PID1/cgroup" 2>/dev/null)
check "Delegate=yes: the daemon moved into boxy.service/daemon, a leaf" \
	'case $SVC in */app.slice/boxy.service/daemon) true ;; *) false ;; esac' ||
	diag "the daemon's cgroup: ${SVC:-none}"
SVCDIR=$CGROOT/app.slice/boxy.service
check "boxy.service's own cgroup holds no process (its runs can be given controllers)" \
	'[ -d "$SVCDIR" ] && [ -w "$SVCDIR/cgroup.subtree_control" ] && [ -r "$SVCDIR/cgroup.procs" ] &&
	 [ -z "$(cat "$SVCDIR/cgroup.procs")" ]' ||
	diag "$(cat "$SVCDIR/cgroup.procs" 2>&1)"

journal >"$T/journal"
check "the daemon's log is in the journal: socket activation and the delegated cgroup" \
	'grep -q "listening on the socket systemd passed" "$T/journal" &&
	 grep -q "cgroup .*boxy.service is delegated to the daemon: the daemon moved into .*boxy.service/daemon" "$T/journal"' ||
	diag_file "$T/journal" 8

# --memory: the runs' cgroups are made in boxy.service (beside the daemon); this
# host has no memory controller in cgroup v2, so the watchdog enforces it.
B run --net none --memory 64MiB -- python3 -c 'b = bytearray(400 << 20)'
check "--memory under the service: the run is killed at the limit (exit 137)" \
	'[ "$RC" = 137 ] && grep -q "memory limit exceeded" "$ERR"' || diag_file "$ERR"
B ps -a --json
ID=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))[0]["id"])' "$OUT" 2>/dev/null)
B show --json "$ID"
check "…and its record says the cgroup was sought in boxy.service, beside the daemon" \
	'python3 - "$OUT" "$SVCDIR" <<'"'"'PY'"'"'
import json, sys
s, svc = json.load(open(sys.argv[1])), sys.argv[2]
mem = [d["reason"] for d in s["decisions"] if d["layer"] == "cgroup" and d["subject"] == "memory"]
assert len(mem) == 1 and "controller is not delegated to " + svc + ";" in mem[0], mem
PY' || diag_file "$OUT" 3

B daemon stop
for _ in $(seq 50); do [ "$(SC is-active boxy.service)" = active ] || break; sleep 0.1; done
check "boxy daemon stop ends the service; the socket stays" \
	'[ "$RC" = 0 ] && [ "$(SC is-active boxy.service)" != active ] &&
	 [ "$(SC is-active boxy.socket)" = active ] && [ -S "$SOCK" ]' ||
	diag "service $(SC is-active boxy.service), socket $(SC is-active boxy.socket)"
B run --net none -- echo again
PID2=$(main_pid)
check "the next command starts it again (a new daemon)" \
	'[ "$RC" = 0 ] && grep -qx again "$OUT" && [ -n "$PID2" ] && [ "$PID2" != "$PID1" ] &&
	 [ "$(SC is-active boxy.service)" = active ]' || diag_file "$ERR"

SC stop boxy.socket boxy.service >/dev/null
done_testing
