#!/bin/bash
# tests/e2e/refusal-decoys.sh — the end-of-run summary is shaped by what the
# payload chose to be refused; it must still tell the user the truth.
#
# A payload cannot hide what it tried behind decoys. It asks for many names it knows are refused (allowlist mode refuses
# them on the spot, nothing leaves the machine), then dials the cloud metadata
# address once. The refusal that matters must still be named where the user
# looks: the end-of-run summary (ten rows; the daemon's table keeps 64 groups),
# `boxy show` (the same summary, from the store) and the store itself, whose
# per-session cap (5,000 rows) the decoys fill first.
#
# Nor can it make the summary recommend opening the user's own machine or
# network: a name it controls that answers the cloud metadata address, a
# loopback or a private address is refused, and no "fix: --allow-cidr" for
# that address is suggested (one for a documentation address still is).
#
# Inside the hermetic test network (tests/lib/testnet.sh), as the test user,
# with the suite's own daemon.
set -u
here=$(cd "$(dirname "$0")/.." && pwd)
. "$here/lib/harness.sh"
. "$here/lib/testnet.sh"
harness_locate
[ "${BOXY_TESTNET_INSIDE:-}" = 1 ] || harness_as_test_user "$0" "$@"
testnet_enter "$0" "$@"
testnet_setup
tn_probe

# decoy_case NAME COUNT: COUNT refused names, then one dial of the metadata
# address; sets C, RC and ID (the session).
decoy_case() {
	mkdir -p "$TN/cases/$1"
	cat >"$TN/cases/$1/decoys.py" <<-'PY'
	import socket, struct, sys
	n = int(sys.argv[1])
	ns = [l.split()[1] for l in open('/etc/resolv.conf') if l.startswith('nameserver')][0]
	s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
	s.settimeout(2)
	got = 0
	for i in range(n):
	    q = struct.pack('!HHHHHH', i & 0xffff, 0x0100, 1, 0, 0, 0)
	    for label in ('decoy%d' % i, 'example', 'test'):
	        q += bytes([len(label)]) + label.encode()
	    s.sendto(q + b'\0' + struct.pack('!HH', 1, 1), (ns, 53))
	    if i % 50 == 49 or i == n - 1:
	        try:
	            while got <= i:
	                s.recv(512)
	                got += 1
	        except socket.timeout:
	            pass
	print('answers', got)
	PY
	run_case "$1" --allow-host www.example.test -- sh -c \
		"python3 decoys.py $2; curl -s -m 3 http://$TN_META/; echo curl=\$?"
	ID=$(tn_boxy ps -a --json 2>/dev/null | python3 -c \
		'import json, sys; print(json.load(sys.stdin)[0]["id"])' 2>/dev/null)
}

## ---- seventy decoys: past the summary's ten rows and the daemon's 64 groups ---------------
decoy_case decoys-70 70
if grep -q "answers 70" "$C/out" && grep -q "refused" "$C/err"; then
	ok "the payload's 70 decoy names were refused"
else
	fail_case "the payload's 70 decoy names were refused" "want 'answers 70' and a summary"
fi
if sed -n '/refused$/,$p' "$C/err" | grep -q "169\.254\.169\.254.*metadata"; then
	ok "70 decoys first: the end-of-run summary still names the metadata refusal"
else
	fail_case "70 decoys first: the end-of-run summary still names the metadata refusal" \
		"the refusal summary hides $TN_META"
fi
tn_boxy show "$ID" >"$C/show" 2>&1
if sed -n '/refused$/,$p' "$C/show" | grep -q "169\.254\.169\.254.*metadata"; then
	ok "70 decoys first: boxy show's refusals still name the metadata refusal"
else
	not_ok "70 decoys first: boxy show's refusals still name the metadata refusal"
	diag_file "$C/show" 30
fi

## ---- 5,100 decoys: past the store's per-session cap ------------------------------------
decoy_case decoys-5100 5100
tn_boxy show --events "$ID" >"$C/events" 2>&1
if grep -q "answers 5100" "$C/out" && grep -q "169\.254\.169\.254" "$C/events"; then
	ok "5,100 decoys first: the store still records the metadata refusal"
else
	fail_case "5,100 decoys first: the store still records the metadata refusal" \
		"boxy show --events has no $TN_META ($(grep -c . "$C/events") lines)"
fi
tn_boxy show "$ID" >"$C/show" 2>&1
if sed -n '/refused$/,$p' "$C/show" | grep -q "169\.254\.169\.254.*metadata"; then
	ok "5,100 decoys first: boxy show's refusals still name the metadata refusal"
else
	not_ok "5,100 decoys first: boxy show's refusals still name the metadata refusal"
	diag_file "$C/show" 30
fi
if [ "$(sqlite3 "$TN/state/boxy/sessions.db" \
	"SELECT count(*) FROM connections WHERE session_id = '$ID'" 2>/dev/null)" -le 10 ] &&
	[ "$(sqlite3 "$TN/state/boxy/sessions.db" \
	"SELECT count(*) FROM resolutions WHERE session_id = '$ID'" 2>/dev/null)" -le 5000 ]; then
	ok "the store stays bounded: 5,000 rows for the decoys, one for the metadata refusal"
else
	not_ok "the store stays bounded: 5,000 rows for the decoys, one for the metadata refusal"
	diag "$(sqlite3 "$TN/state/boxy/sessions.db" "SELECT 'conns', count(*) FROM connections WHERE session_id = '$ID' UNION ALL SELECT 'res', count(*) FROM resolutions WHERE session_id = '$ID'" 2>&1)"
fi

## ---- names that answer addresses of the user's own machine and network -------------------
run_case local-answers --net public -- sh -c \
	'for n in metadata rebind docrange; do getent hosts $n.example.test; done; true'
if grep -q "answered with $TN_META" "$C/err" && grep -q "answered with $TN_PRIV" "$C/err" &&
	! grep -qE -- "--allow-cidr ($TN_META|$TN_PRIV)/" "$C/err" &&
	grep -qF -- "fix: --allow-cidr 203.0.113.80/32" "$C/err"; then
	ok "a payload's names answering the metadata or a private address get no --allow-cidr fix; a documentation one does"
else
	fail_case "a payload's names answering the metadata or a private address get no --allow-cidr fix; a documentation one does" \
		"want the refusals without 'fix: --allow-cidr $TN_META/32' or '$TN_PRIV/32'"
fi

done_testing
