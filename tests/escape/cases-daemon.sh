# tests/escape/cases-daemon.sh — payload attacks on the daemon itself (issue 8,
# items 9 and 10), sourced by escape.sh. Each case runs its own daemon (its
# runtime and state directories under the case's scratch directory), so what
# the payload breaks on an old build is that daemon, not the suite's.
#
#   daemon-store-rows     a client that says XDG_STATE_HOME=/elsewhere asks for
#                         --rw of the daemon's real state directory; the payload
#                         deletes the store. ESCAPED when session rows vanished.
#   daemon-socket-steal   a detached run with --rw of the daemon's runtime
#                         directory; the payload unlinks daemon.sock and binds
#                         a listener of its own there. ESCAPED when a later
#                         `boxy stop -k` cannot stop that session.
# A refused run is the defence working: these cases are hand-written (the
# attack helper would call a refusal "the sandbox did not run the attack").
# Control phase: the same payloads run as the user, without boxy.

# daemon_case_env: the case's own daemon directories, exported.
daemon_case_env() {
	DC_RUN=$CASE/drun DC_STATE=$CASE/dstate
	mkdir -m 0700 -p "$DC_RUN" "$DC_STATE"
}

# dcb ARGS...: boxy with the case daemon's environment (stdin /dev/null).
dcb() { XDG_RUNTIME_DIR=$DC_RUN XDG_STATE_HOME=$DC_STATE "$BOXY" "$@" </dev/null; }

# daemon_case_stop: stop the case's daemon, whatever state the payload left it in.
daemon_case_stop() {
	local p
	dcb daemon stop >/dev/null 2>&1
	for p in $(pgrep -u "$(id -u)" -f 'daemon serve'); do
		tr '\0' '\n' </proc/"$p"/environ 2>/dev/null |
			grep -qx "XDG_STATE_HOME=$DC_STATE" && kill -KILL "$p" 2>/dev/null
	done
}

# daemon_case_verdict NAME DESC: ok/not_ok from $CASE/host, per phase.
daemon_case_verdict() {
	local name=$1 desc=$2
	if [ "$PHASE" = sandbox ]; then
		if grep -q ESCAPED "$CASE/host"; then
			not_ok "$desc"
			grep -h ESCAPED "$CASE/host" | diag "$(cat)"
		elif grep -q '^BROKEN' "$CASE/host"; then
			not_ok "$desc: the case's set-up failed"
			grep -h '^BROKEN' "$CASE/host" | diag "$(cat)"
		else
			ok "$desc"
		fi
		return
	fi
	CONTROL_RAN=$((CONTROL_RAN + 1))
	if grep -q ESCAPED "$CASE/host"; then
		CONTROL_FIRED=$((CONTROL_FIRED + 1))
		ok "control: $name detector fires unsandboxed"
	else
		not_ok "control: $name detector fires unsandboxed"
		diag_file "$CASE/host" 5
	fi
}

daemon_cases() {
	command -v sqlite3 >/dev/null || { skip "daemon cases" "sqlite3 is not installed"; return 0; }
	local before after db wipe id steal i

	if only daemon-store-rows; then
		case_new daemon-store-rows
		daemon_case_env
		: >"$CASE/host"
		(cd "$CASE_WORK" && dcb run --net none -- true) >/dev/null 2>&1
		(cd "$CASE_WORK" && dcb run --net none -- true) >/dev/null 2>&1
		db=$DC_STATE/boxy/sessions.db
		before=$(sqlite3 "$db" 'SELECT count(*) FROM sessions' 2>/dev/null || echo 0)
		[ "$before" -ge 2 ] || echo "BROKEN: the case daemon recorded $before sessions" >>"$CASE/host"
		wipe="rm -f '$db' '$db-wal' '$db-shm'; echo BOXY-CASE-DONE"
		if [ "$PHASE" = sandbox ]; then
			# The client names another state directory: the daemon must know its own.
			(cd "$CASE_WORK" && XDG_RUNTIME_DIR=$DC_RUN XDG_STATE_HOME=$CASE/elsewhere \
				"$BOXY" run --net none --rw "$DC_STATE" -- /bin/sh -c "$wipe") \
				</dev/null >"$CASE/out" 2>"$CASE/err"
		else
			(cd "$CASE_WORK" && /bin/sh -c "$wipe") </dev/null >"$CASE/out" 2>"$CASE/err"
		fi
		after=$(sqlite3 "$db" 'SELECT count(*) FROM sessions' 2>/dev/null || echo 0)
		[ "$after" -ge "$before" ] ||
			echo "ESCAPED: the payload deleted the daemon's store ($before session rows, now $after)" >>"$CASE/host"
		daemon_case_stop
		daemon_case_verdict daemon-store-rows \
			"--rw of the daemon's state directory (the client naming another) is refused; the rows stay"
	fi

	if only daemon-socket-steal; then
		case_new daemon-socket-steal
		daemon_case_env
		: >"$CASE/host"
		# Unlink the socket, bind a listener of the payload's own in its place, stay.
		steal="rm -f '$DC_RUN/boxy/daemon.sock'
command -v python3 >/dev/null && python3 -c '
import socket, sys, time
s = socket.socket(socket.AF_UNIX); s.bind(sys.argv[1]); s.listen(8)
s.settimeout(0.2); end = time.time() + 8
while time.time() < end:
    try: c, _ = s.accept(); c.close()
    except OSError: pass
' '$DC_RUN/boxy/daemon.sock' &
echo \$! >'$CASE_WORK/listener.pid'
echo tampered >'$CASE_WORK/tampered'
exec sleep 300"
		(cd "$CASE_WORK" && dcb run --net none -- true) >"$CASE/probe" 2>&1 ||
			echo "BROKEN: the case daemon does not run sessions: $(tail -1 "$CASE/probe")" >>"$CASE/host"
		if [ "$PHASE" = sandbox ]; then
			id=$(cd "$CASE_WORK" && dcb run -d --net none --rw "$DC_RUN" -- /bin/sh -c "$steal" 2>"$CASE/err")
		else
			# The victim is an ordinary session; the payload runs beside it, as the user.
			id=$(cd "$CASE_WORK" && dcb run -d --net none -- sleep 300 2>"$CASE/err")
			(cd "$CASE_WORK" && exec /bin/sh -c "$steal") </dev/null >"$CASE/out" 2>&1 &
			steal=$!
			HARNESS_PIDS+=($steal)
		fi
		if [ -n "$id" ]; then
			for i in $(seq 50); do [ -e "$CASE_WORK/tampered" ] && break; sleep 0.1; done
			sleep 0.3
			if ! dcb stop -k "$id" >"$CASE/stop.out" 2>&1; then
				echo "ESCAPED: after the payload took daemon.sock, boxy stop -k failed: $(head -1 "$CASE/stop.out")" >>"$CASE/host"
			else
				for i in $(seq 30); do
					[ "$(sqlite3 "$DC_STATE/boxy/sessions.db" \
						"SELECT state FROM sessions WHERE id LIKE '$id%'")" = running ] || break
					sleep 0.1
				done
				[ "$i" -lt 30 ] ||
					echo "ESCAPED: boxy stop -k answered but the session still runs" >>"$CASE/host"
			fi
		elif [ "$PHASE" = control ]; then
			echo "BROKEN: the control victim did not start" >>"$CASE/host"
		fi
		if [ "$PHASE" = control ]; then
			kill "$steal" "$(cat "$CASE_WORK/listener.pid" 2>/dev/null)" 2>/dev/null
		fi
		daemon_case_stop
		daemon_case_verdict daemon-socket-steal \
			"--rw of the daemon's runtime directory is refused; boxy stop still stops a session"
	fi
}
CASE_GROUPS+=(daemon_cases)
