# tests/escape/cases-memory.sh — --memory where no cgroup enforces it (sourced by
# escape.sh). A balloon (tests/escape/balloon.c) touches twice the limit in one of the
# ways a payload can hold memory, then holds it: ESCAPED when it held it and survived.
# Sandboxed, the run must end with 137 and a `limits` deny line for memory in the
# audit log; unsandboxed (control), every balloon holds. Also what must keep working:
# a balloon under the limit, node and python under an ordinary limit.

# memory_balloon: the balloon program, built once per suite.
memory_balloon() {
	if [ -z "${MEMORY_BALLOON:-}" ]; then
		MEMORY_BALLOON=$BOXY_BUILDDIR/tests/escape/balloon
		if [ ! -x "$MEMORY_BALLOON" ]; then
			MEMORY_BALLOON=$SUITE/balloon
			cc -O2 -o "$MEMORY_BALLOON" "$BOXY_SRCDIR/tests/escape/balloon.c" \
				2>"$SUITE/balloon-cc.log" ||
				harness_die "cannot build tests/escape/balloon: $(head -3 "$SUITE/balloon-cc.log")"
		fi
	fi
	cp "$MEMORY_BALLOON" "$CASE_WORK/balloon"
}

# memory_attack NAME DESC SCRIPT: SCRIPT (sh) runs a balloon under --memory 256MiB.
memory_attack() {
	local name=$1 desc=$2 script=$3
	only "$name" || return 0
	case_new "$name"
	memory_balloon
	if [ "$PHASE" = control ]; then
		direct_run /bin/sh -c "$script"
		CONTROL_RAN=$((CONTROL_RAN + 1))
		if grep -q '^held' "$CASE/out"; then
			CONTROL_FIRED=$((CONTROL_FIRED + 1))
			ok "control: $name detector fires unsandboxed"
		else
			not_ok "control: $name detector fires unsandboxed"
			diag_file "$CASE/out" 5
			diag_file "$CASE/err" 5
		fi
		return
	fi
	BOXY_WRAP="timeout -s KILL 60" boxy_run --memory 256MiB -- /bin/sh -c "$script"
	if grep -q '^held' "$CASE/out"; then
		not_ok "$desc"
		diag "ESCAPED: $(grep '^held' "$CASE/out" | head -1) under --memory 256MiB (exit $RUN_RC)"
	elif [ "$RUN_RC" -ne 137 ]; then
		not_ok "$desc: exit $RUN_RC, want 137 (killed)"
		diag_file "$CASE/out" 5
		diag_file "$CASE/err" 5
	elif ! grep '"layer":"limits"' "$CASE/audit.jsonl" | grep '"verdict":"deny"' |
		grep -q '"subject":"memory"'; then
		not_ok "$desc: no limits/deny/memory line in the audit log"
		diag_file "$CASE/audit.jsonl" 10
	elif ! grep -q 'memory limit exceeded' "$CASE/err"; then
		not_ok "$desc: the end of the run does not say the memory limit killed it"
		diag_file "$CASE/err" 5
	else
		ok "$desc"
		[ -z "${BOXY_TEST_VERBOSE:-}" ] || grep -h '"limits"' "$CASE/audit.jsonl" | diag "$(cat)"
	fi
}

memory_cases() {
	memory_attack memory-anon "a balloon touching 512 MiB of malloc'd memory under --memory 256MiB is killed" \
		'./balloon anon 512 3000'
	memory_attack memory-fork "four children touching 128 MiB each (512 MiB) under --memory 256MiB are killed" \
		'./balloon fork 4 512 3000'
	memory_attack memory-memfd "512 MiB written into a memfd, never mapped, under --memory 256MiB is killed" \
		'./balloon memfd 512 3000'
	memory_attack memory-shared "512 MiB of MAP_SHARED anonymous memory under --memory 256MiB is killed" \
		'./balloon shared 512 3000'
	memory_attack memory-sysv "512 MiB of detached SysV segments under --memory 256MiB are killed" \
		'./balloon sysv 512 3000'
	# Reading /proc/PID/fd costs ~20 us a descriptor: 20000 of them must not slow the
	# samples of everything else down to one every half second.
	memory_attack memory-fdflood "a balloon of 512 MiB next to 19900 open descriptors under --memory 256MiB is killed" '
python3 -c "
import os, resource, time
soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
resource.setrlimit(resource.RLIMIT_NOFILE, (min(hard, 20000), hard))
fds = [os.open(\"/dev/null\", os.O_RDONLY) for _ in range(min(hard, 20000) - 100)]
time.sleep(0.5)
b = b\"x\" * (512 << 20)
time.sleep(3)
print(\"held 512 MiB with\", len(fds), \"descriptors\", flush=True)
"'
	# Each tmpfs is sized from --memory alone; together they hold three times it.
	memory_attack memory-tmpfs "200 MiB each in /tmp, \$HOME and /dev/shm under --memory 256MiB is killed" '
for d in /tmp "$HOME" /dev/shm; do
	dd if=/dev/zero of="$d/balloon-fill" bs=1M count=200 2>/dev/null || { echo "refused: $d"; exit 1; }
done
sleep 3; echo "held 600 MiB"; rm -f /tmp/balloon-fill "$HOME/balloon-fill" /dev/shm/balloon-fill'

	# -- no false kill
	[ "$PHASE" = sandbox ] || return 0
	if only memory-under; then
		case_new memory-under
		memory_balloon
		boxy_run --memory 256MiB -- ./balloon anon 128 1500
		if [ "$RUN_RC" -eq 0 ] && grep -q '^held 128' "$CASE/out" &&
			grep '"layer":"limits"' "$CASE/audit.jsonl" | grep -q '"verdict":"info"'; then
			ok "a balloon of 128 MiB under --memory 256MiB runs to completion"
		else
			not_ok "a balloon of 128 MiB under --memory 256MiB: exit $RUN_RC"
			diag_file "$CASE/out" 5
			diag_file "$CASE/err" 5
		fi
	fi
	works memory-python "python3 allocating 64 MiB under --memory 512MiB" --memory 512MiB -- '
python3 -c "b = bytearray(64 << 20); b[::4096] = b\"x\" * len(b[::4096]); print(\"WORKS\")"'
	works memory-node "node allocating 64 MiB under --memory 1GiB" --memory 1GiB -- '
node -e "const b = Buffer.alloc(64 << 20, 1); console.log(b[0] === 1 ? \"WORKS\" : \"no\")"'
}
CASE_GROUPS+=(memory_cases)
